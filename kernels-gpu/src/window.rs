//! Sliding key windows and score softcapping: which keys a query row sees
//! under a window, which keys a block of rows must visit and which key
//! blocks need a per-element mask, and the capped score. Pure functions
//! shared by the kernels, the host and the CPU emulation in the tests.
//!
//! A window is aligned bottom-right like causal masking: query row `i`
//! sits at key position `pos = i + seq_kv - seq_q` and sees the keys
//! `pos - left ..= pos + right` that exist (FlashAttention's
//! `window_size = (left, right)`). Causal masking is the window
//! `(unbounded, 0)`, so one mask serves both ([`KeyWindow::with_causal`]).

use crate::schedule::MAX_SEQ_LEN;

/// The keys around its position that a query row sees: `left` before it
/// and `right` after it, [`KeyWindow::UNBOUNDED`] for no limit on a side.
/// Passed to the kernels in `params::AttnParams` as two `u32`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyWindow {
    /// Keys before the row's position that it sees.
    pub left: u32,
    /// Keys after the row's position that it sees.
    pub right: u32,
}

impl Default for KeyWindow {
    /// [`KeyWindow::FULL`].
    fn default() -> Self {
        KeyWindow::FULL
    }
}

impl KeyWindow {
    /// No limit on a side: every sequence is shorter
    /// ([`MAX_SEQ_LEN`]), and the `i32` arithmetic below stays inside
    /// its range.
    pub const UNBOUNDED: u32 = MAX_SEQ_LEN;

    /// Every key.
    pub const FULL: KeyWindow = KeyWindow { left: Self::UNBOUNDED, right: Self::UNBOUNDED };

    /// Causal masking: every key up to the row's position.
    pub const CAUSAL: KeyWindow = KeyWindow { left: Self::UNBOUNDED, right: 0 };

    /// A window of `left` keys before and `right` after a row's position,
    /// `None` for no limit (a limit at or past [`KeyWindow::UNBOUNDED`] is
    /// none either).
    pub const fn new(left: Option<u32>, right: Option<u32>) -> KeyWindow {
        const fn side(n: Option<u32>) -> u32 {
            match n {
                Some(n) if n < KeyWindow::UNBOUNDED => n,
                _ => KeyWindow::UNBOUNDED,
            }
        }
        KeyWindow { left: side(left), right: side(right) }
    }

    /// This window, and under causal masking no key after the row's
    /// position (FlashAttention's `causal=True` with a window).
    pub const fn with_causal(self, causal: bool) -> KeyWindow {
        if causal && self.right > 0 { KeyWindow { right: 0, ..self } } else { self }
    }

    /// Whether the window limits nothing.
    pub const fn is_full(self) -> bool {
        self.left >= Self::UNBOUNDED && self.right >= Self::UNBOUNDED
    }

    /// The key position of query `row` (may be negative when `seq_q >
    /// seq_kv`).
    #[inline(always)]
    pub fn position(row: u32, seq_q: u32, seq_kv: u32) -> i32 {
        row as i32 + seq_kv as i32 - seq_q as i32
    }

    /// The first key (inclusive, may be negative) query `row` sees.
    #[inline(always)]
    pub fn first_key(self, row: u32, seq_q: u32, seq_kv: u32) -> i32 {
        Self::position(row, seq_q, seq_kv) - self.left as i32
    }

    /// The last key (inclusive, may be negative or past the keys) query
    /// `row` sees.
    #[inline(always)]
    pub fn last_key(self, row: u32, seq_q: u32, seq_kv: u32) -> i32 {
        Self::position(row, seq_q, seq_kv) + self.right as i32
    }

    /// Whether query `row` sees `key` (`key < seq_kv` and inside the
    /// window).
    #[inline(always)]
    pub fn sees(self, row: u32, key: u32, seq_q: u32, seq_kv: u32) -> bool {
        let key_at = key as i32;
        key < seq_kv && key_at >= self.first_key(row, seq_q, seq_kv) && key_at <= self.last_key(row, seq_q, seq_kv)
    }

    /// The keys `begin .. end` that any of the query rows `row_start ..
    /// row_start + rows` (clipped to `seq_q`) sees: the only ones their
    /// block visits (whole key tiles outside are skipped). `(0, 0)` when
    /// no row sees a key. Requires `row_start < seq_q` and `rows >= 1`.
    #[inline(always)]
    pub fn key_range(self, row_start: u32, rows: u32, seq_q: u32, seq_kv: u32) -> (u32, u32) {
        let last_row = if seq_q - row_start < rows { seq_q - 1 } else { row_start + rows - 1 };
        let begin = self.first_key(row_start, seq_q, seq_kv).max(0);
        let end = (self.last_key(last_row, seq_q, seq_kv) + 1).min(seq_kv as i32);
        if end <= begin { (0, 0) } else { (begin as u32, end as u32) }
    }

    /// The keys a `decode` problem's splits share out (`seq_q` query
    /// positions, `seq_kv` keys): [`KeyWindow::key_range`] of every
    /// position, its start moved down to a whole key block of `block_n`
    /// (the blocks stay whole and inside one page). `(0, 0)` when no
    /// position sees a key.
    #[inline(always)]
    pub fn decode_keys(self, seq_q: u32, seq_kv: u32, block_n: u32) -> (u32, u32) {
        let (first, end) = self.key_range(0, seq_q, seq_q, seq_kv);
        (first - first % block_n, end)
    }

    /// Whether the key block `key_start .. key_start + block_n` may hide a
    /// key from some row of the query block of `block_m` rows from
    /// `row_start`: past the end of the keys, before the last row's first
    /// key or past the first row's last key. Blocks for which this is
    /// false need no per-element mask.
    #[inline(always)]
    pub fn block_needs_mask(
        self,
        (row_start, block_m): (u32, u32),
        key_start: u32,
        block_n: u32,
        seq_q: u32,
        seq_kv: u32,
    ) -> bool {
        let key_last = key_start + block_n - 1;
        let last_row = row_start + block_m - 1;
        key_last >= seq_kv
            || (key_start as i32) < self.first_key(last_row, seq_q, seq_kv)
            || key_last as i32 > self.last_key(row_start, seq_q, seq_kv)
    }
}

/// The largest score cap the kernels take: the capped scores, times
/// log2(e), stay far inside the range of the fused exponent
/// (`softmax::FUSED_SCORE_LIMIT`).
pub const MAX_SOFTCAP: f32 = 65_536.0;

/// The factor that turns a raw E4M3 dot product into the argument of a
/// softcap's tanh: the natural-log score (`score_scale_log2` without its
/// log2(e)) over the cap.
#[inline(always)]
pub fn softcap_input_scale(score_scale_log2: f32, softcap: f32) -> f32 {
    score_scale_log2 / (crate::softmax::LOG2E * softcap)
}

/// The factor the softmax applies to a capped score `tanh(x)` (base 2):
/// the cap times log2(e), so that `2^(tanh(x) * factor) = e^(cap tanh(x))`.
#[inline(always)]
pub fn softcap_score_factor(softcap: f32) -> f32 {
    softcap * crate::softmax::LOG2E
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_is_the_window_unbounded_left_and_zero_right() {
        let causal =
            |row: u32, key: u32, sq: u32, skv: u32| key < skv && key as i32 <= row as i32 + skv as i32 - sq as i32;
        for (sq, skv) in [(5, 9), (9, 5), (7, 7), (1, 300), (130, 64)] {
            for row in 0..sq {
                for key in 0..skv + 3 {
                    assert_eq!(KeyWindow::CAUSAL.sees(row, key, sq, skv), causal(row, key, sq, skv));
                }
            }
        }
        assert_eq!(KeyWindow::FULL.with_causal(true), KeyWindow::CAUSAL);
    }

    #[test]
    fn key_ranges_hold_every_seen_key_and_unmasked_blocks_hide_none() {
        let windows = [(0, 0), (1, 0), (0, 1), (63, 65), (64, 64), (3, 200), (KeyWindow::UNBOUNDED, 5)];
        for (left, right) in windows {
            let w = KeyWindow { left, right };
            for (sq, skv) in [(200, 200), (70, 300), (300, 70), (1, 129)] {
                for row0 in (0..sq).step_by(64) {
                    let rows = 64;
                    let (begin, end) = w.key_range(row0, rows, sq, skv);
                    for row in row0..(row0 + rows).min(sq) {
                        for key in 0..skv {
                            if w.sees(row, key, sq, skv) {
                                assert!(begin <= key && key < end, "{w:?} {sq} {skv} row {row} key {key}");
                            }
                        }
                    }
                    for key0 in (0..skv + 64).step_by(64) {
                        if !w.block_needs_mask((row0, rows), key0, 64, sq, skv) {
                            for row in row0..row0 + rows {
                                for key in key0..key0 + 64 {
                                    assert!(w.sees(row, key, sq, skv), "{w:?} row {row} key {key}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn limits_past_the_longest_sequence_are_unbounded() {
        assert_eq!(KeyWindow::new(None, Some(u32::MAX)), KeyWindow::FULL);
        assert!(KeyWindow::new(Some(MAX_SEQ_LEN), None).is_full());
        assert!(!KeyWindow::new(Some(0), None).is_full());
    }
}
