//! A CPU emulation of each variant's tile schedule, in f32, built from the
//! same `kernels-gpu` code the kernels run: `schedule` (key ranges, masks,
//! block counts), `softmax` (online update, output scale), the tile shapes of
//! `kernels::KERNELS` and the E4M3 decoder. It reproduces what the kernels do
//! with zero-filled rows past the ends (their scores are 0 unless masked), so
//! an index or mask bug in the shared code shows up here, on any machine.

use half::f16;
use kernels_gpu::fp8::e4m3_to_f32;
use kernels_gpu::kernels::KernelInfo;
use kernels_gpu::params::{AttnParams, PackedRows};
use kernels_gpu::schedule::{
    block_needs_mask, blocks, first_packed_block, key_end, key_rotation, key_visible, kv_head, packed_sequence_serial,
    rotated_block, walks_rotated,
};
use kernels_gpu::softmax::{
    LAZY_MAX_SLACK, RowMax, exponent, fused_exponent_ok, merge_splits, output_scale, score_scale_log2,
};
use kernels_gpu::tiles::TileShape;
use kernels_gpu::variant::Variant;
use kernels_gpu::window::{KeyWindow, softcap_input_scale, softcap_score_factor};
use sdpa::Fp8Tensor;
use sdpa::quant::encode_e4m3;

/// The problem the emulation runs: inputs, causal flag and softmax scale.
pub struct Inputs<'a> {
    /// Q `[B, Hq, Sq, D]`.
    pub q: &'a Fp8Tensor,
    /// K `[B, Hkv, Skv, D]`.
    pub k: &'a Fp8Tensor,
    /// V `[B, Hkv, Skv, D]`.
    pub v: &'a Fp8Tensor,
    /// Causal masking.
    pub causal: bool,
    /// The softmax scale.
    pub softmax_scale: f32,
}

/// Emulates `kernel` on the inputs; returns O `[B, Hq, Sq, D]` in f32.
pub fn emulate(kernel: &KernelInfo, x: &Inputs) -> Vec<f32> {
    let [batch, heads_q, seq_q, dim] = x.q.shape;
    let mut out = vec![0f32; batch * heads_q * seq_q * dim];
    for b in 0..batch {
        for h in 0..heads_q {
            let head = Head::new(x, kernel.variant, b, h);
            let rows = &mut out[(b * heads_q + h) * seq_q * dim..][..seq_q * dim];
            match kernel.variant {
                Variant::Mma | Variant::Wgmma | Variant::WgmmaFp8Pv => emulate_mma(kernel.tiles, &head, x, rows),
                Variant::Split | Variant::SplitWg | Variant::SplitN64 => {
                    let t = kernel.tiles;
                    // A warpgroup's walk (`split-wg`) is never rotated
                    // (`split::ScoreProduct::GROUP_WARPS`).
                    let rotated = walks_rotated(t.head_dim, t.block_n) && kernel.variant != Variant::SplitWg;
                    emulate_split(t, rotated, &head, x, rows)
                }
                Variant::Decode => emulate_decode(kernel, &head, x, rows),
            }
        }
    }
    out
}

/// The scores of a `wgmma` kernel's window and softcap twins
/// (`KernelInfo::scores`) as [`emulate_scored`] runs them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreOptions {
    /// The keys each row sees, causal masking folded in
    /// (`KeyWindow::with_causal`).
    pub window: KeyWindow,
    /// The score cap, if any.
    pub softcap: Option<f32>,
}

/// Emulates `kernel`'s twin with `scores`: for a `wgmma` variant each
/// query block walks the 64-key blocks from the tile of its window's
/// first key (`KeyWindow::key_range`; `split` and `split-n64` their
/// key groups' blocks from the block of that key, unrotated), masks where
/// `KeyWindow::block_needs_mask` says, and caps each raw score `x` as
/// `tanh(x * softcap_input_scale)` before the mask; `decode` walks its
/// splits as without a window, the keys outside each row's window masked
/// (the kernel skips the key blocks no row's window holds, which changes
/// no value), its scores capped the same way. Returns O `[B, Hq, Sq, D]`
/// in f32.
pub fn emulate_scored(kernel: &KernelInfo, x: &Inputs, scores: ScoreOptions) -> Vec<f32> {
    let twins = kernel.scores.unwrap_or_else(|| panic!("{} has no score twins", kernel.entry));
    assert!(scores.softcap.is_none() || twins.softcap.is_some(), "{} has no softcap twin", kernel.entry);
    let [batch, heads_q, seq_q, dim] = x.q.shape;
    let mut out = vec![0f32; batch * heads_q * seq_q * dim];
    for b in 0..batch {
        for h in 0..heads_q {
            let head = Head::new(x, kernel.variant, b, h).with_scores(scores, kernel.variant);
            let rows = &mut out[(b * heads_q + h) * seq_q * dim..][..seq_q * dim];
            match kernel.variant {
                Variant::Decode => emulate_decode(kernel, &head, x, rows),
                // The windowed walk is never rotated (`walk::WindowRows`).
                Variant::Split | Variant::SplitN64 => emulate_split(kernel.tiles, false, &head, x, rows),
                _ => emulate_mma(kernel.tiles, &head, x, rows),
            }
        }
    }
    out
}

/// A packed batch as [`emulate_packed`] runs it: the sequences' rows back
/// to back in one-batch tensors (Q `[1, Hq, total_q, D]`, K and V `[1,
/// Hkv, total_k, D]`: the packed layout with heads outermost, which changes
/// no value the kernels compute), where the sequences start and the
/// longest lengths.
pub struct PackedInputs<'a> {
    /// Q, K, V, the causal flag and the softmax scale; `q.shape[0] == 1`.
    pub tensors: Inputs<'a>,
    /// Where the sequences start.
    pub starts: SequenceStarts<'a>,
    /// The longest query and key lengths (`AttnParams::seq_q`, `seq_kv`).
    pub max_seqlen: [u32; 2],
}

/// How the packed twins find a packed batch's sequences.
#[derive(Clone, Copy)]
pub enum SequenceStarts<'a> {
    /// In `batch + 1` query and key prefix sums as the device would hold
    /// them (any values: the kernels clamp them).
    PrefixSums {
        /// Query prefix sums.
        cu_q: &'a [i32],
        /// Key prefix sums.
        cu_k: &'a [i32],
    },
    /// `batch` sequences of the longest lengths each, back to back:
    /// `[B, S, H, D]` tensors, without prefix sums
    /// (`AttnParams::cu_seqlens_q` 0, `params::PackedRows::uniform`).
    Uniform {
        /// Sequences.
        batch: u32,
    },
}

/// Emulates `kernel`'s packed twin (`KernelInfo::packed`) block by block
/// as the kernels find their work: the grid `(heads_q, total_q / block_m +
/// batch)`, each block's sequence by `schedule::packed_sequence`, its rows
/// by `params::PackedRows::of` from the prefix sums as read (clamped) or by
/// `PackedRows::uniform`, a causal sequence's blocks heaviest first, and
/// the query block's rows by the dense schedule over the sequence's rows. Returns O `[1, Hq, total_q,
/// D]` (rows no block wrote are NaN) and how many blocks wrote each row
/// (`[Hq, total_q]`). Any prefix sums: a row or key range past a tensor
/// would panic here.
pub fn emulate_packed(kernel: &KernelInfo, x: &PackedInputs) -> (Vec<f32>, Vec<u32>) {
    emulate_packed_with(kernel, x, None)
}

/// [`emulate_packed`] of the packed twin with `scores` (as
/// [`emulate_scored`]).
pub fn emulate_packed_scored(kernel: &KernelInfo, x: &PackedInputs, scores: ScoreOptions) -> (Vec<f32>, Vec<u32>) {
    assert!(kernel.scores.is_some_and(|t| t.packed_window.is_some()), "{} has no packed score twins", kernel.entry);
    emulate_packed_with(kernel, x, Some(scores))
}

/// [`emulate_packed`], the scores as `scores` says where given.
fn emulate_packed_with(kernel: &KernelInfo, x: &PackedInputs, scores: Option<ScoreOptions>) -> (Vec<f32>, Vec<u32>) {
    let [_, heads_q, total_q, dim] = x.tensors.q.shape;
    let [_, heads_kv, total_k, _] = x.tensors.k.shape;
    let batch = match x.starts {
        SequenceStarts::PrefixSums { cu_q, .. } => cu_q.len() as u32 - 1,
        SequenceStarts::Uniform { batch } => batch,
    };
    let p = AttnParams {
        batch,
        heads_q: heads_q as u32,
        heads_kv: heads_kv as u32,
        seq_q: x.max_seqlen[0],
        seq_kv: x.max_seqlen[1],
        causal: x.tensors.causal as u32,
        packed_queries: total_q as u32,
        packed_keys: total_k as u32,
        ..AttnParams::default()
    };
    let t = kernel.tiles;
    let (mut out, mut writes) = (vec![f32::NAN; heads_q * total_q * dim], vec![0u32; heads_q * total_q]);
    let grid = total_q as u32 / t.block_m + batch;
    for h in 0..heads_q {
        for block in 0..grid {
            let (b, rows) = match x.starts {
                SequenceStarts::PrefixSums { cu_q, cu_k } => {
                    let entry = |cu: &[i32], b: u32| [cu[b as usize] as u32, cu[b as usize + 1] as u32];
                    let starts = |b: u32| first_packed_block(cu_q[b as usize] as u32, b, t.block_m) <= block;
                    let b = packed_sequence_serial(batch, starts);
                    (b, PackedRows::of(&p, entry(cu_q, b), entry(cu_k, b)))
                }
                SequenceStarts::Uniform { .. } => {
                    let starts = |b: u32| first_packed_block(b * p.seq_q, b, t.block_m) <= block;
                    let b = packed_sequence_serial(batch, starts);
                    (b, PackedRows::uniform(&p, b))
                }
            };
            let (first, count) = (first_packed_block(rows.q_row0, b, t.block_m), blocks(rows.seq_q, t.block_m));
            let nth = block.wrapping_sub(first);
            if nth >= count {
                continue;
            }
            let query_block = if x.tensors.causal { count - 1 - nth } else { nth };
            let head = Head::packed(&x.tensors, kernel.variant, h, &rows);
            let head = match scores {
                Some(scores) => head.with_scores(scores, kernel.variant),
                None => head,
            };
            let row0 = query_block * t.block_m;
            let key_blocks = key_blocks_of(t, &head, x.tensors.causal, row0);
            for row in row0..(row0 + t.block_m).min(head.seq_q) {
                let mut state = RowState::new(dim);
                for j in key_blocks.clone() {
                    state.visit(t, &head, &x.tensors, row0, row, j);
                }
                let at = h * total_q + (rows.q_row0 + row) as usize;
                write_row(
                    &mut out[at * dim..][..dim],
                    &head,
                    0,
                    &state.acc,
                    output_scale(state.l, head.v_scale, |x| 1.0 / x),
                );
                writes[at] += 1;
            }
        }
    }
    (out, writes)
}

/// One (batch, head): its rows of Q, K, V as E4M3 codes and its scales.
struct Head<'a> {
    q: &'a [u8],
    k: &'a [u8],
    v: &'a [u8],
    seq_q: u32,
    seq_kv: u32,
    dim: usize,
    score_scale: f32,
    /// The kernel takes the fused exponent (`wgmma` only, decided per block
    /// from its head's score factor).
    fused: bool,
    /// The running maxima's slack (`RowMax::update`): `LAZY_MAX_SLACK` for
    /// `wgmma`'s body, 0 for the others.
    max_slack: f32,
    /// P·V takes P rounded to E4M3 (`wgmma-fp8pv`; its row sums are of the
    /// f32 P, as every kernel's but `wgmma`'s), else to f16.
    pv_e4m3: bool,
    v_scale: f32,
    /// The window of a score twin (`ScoreOptions`), which replaces the
    /// causal mask; `None` for the plain kernels.
    window: Option<KeyWindow>,
    /// A softcap twin's factor from raw dot products to its tanh's
    /// argument (`score_scale` is then the capped scores' factor).
    cap_input: Option<f32>,
}

impl<'a> Head<'a> {
    /// This head as `variant`'s score twin with `scores` runs it.
    fn with_scores(self, scores: ScoreOptions, variant: Variant) -> Head<'a> {
        let window = Some(scores.window);
        match scores.softcap {
            Some(cap) => Head {
                cap_input: Some(softcap_input_scale(self.score_scale, cap)),
                score_scale: softcap_score_factor(cap),
                // Capped scores lie in [-1, 1] (`wgmma::TanhCap`): the
                // `wgmma` body takes the fused exponent; the `split` body
                // never does.
                fused: variant.runs_wgmma_body(),
                window,
                ..self
            },
            None => Head { window, ..self },
        }
    }

    /// Whether query `row` sees `key`: the window's rule where one is
    /// given, else `key_visible`'s.
    fn sees(&self, row: u32, key: u32, causal: bool) -> bool {
        match self.window {
            Some(w) => w.sees(row, key, self.seq_q, self.seq_kv),
            None => key_visible(row, key, self.seq_q, self.seq_kv, causal),
        }
    }

    /// The raw score of query `row` and `key` as the softmax takes it:
    /// the dot product, capped where the head caps.
    fn score(&self, row: u32, key: u32) -> f32 {
        let dot = self.dot(row, key);
        self.cap_input.map_or(dot, |scale| (dot * scale).tanh())
    }

    fn new(x: &Inputs<'a>, variant: Variant, b: usize, h: usize) -> Head<'a> {
        let [_, heads_q, seq_q, dim] = x.q.shape;
        let [_, heads_kv, seq_kv, _] = x.k.shape;
        let kvh = kv_head(h as u32, heads_q as u32, heads_kv as u32) as usize;
        let (q_len, kv_len) = (seq_q * dim, seq_kv * dim);
        let rows = (
            &x.q.data[(b * heads_q + h) * q_len..][..q_len],
            &x.k.data[(b * heads_kv + kvh) * kv_len..][..kv_len],
            &x.v.data[(b * heads_kv + kvh) * kv_len..][..kv_len],
        );
        Head::of(x, variant, (h, kvh), rows, (seq_q as u32, seq_kv as u32))
    }

    /// Query head `h` (key/value head `kvh`) over `rows` of Q, K and V,
    /// `lens` (queries, keys) long.
    fn of(
        x: &Inputs<'a>,
        variant: Variant,
        (h, kvh): (usize, usize),
        (q, k, v): (&'a [u8], &'a [u8], &'a [u8]),
        (seq_q, seq_kv): (u32, u32),
    ) -> Head<'a> {
        let dim = x.q.shape[3];
        let score_scale = score_scale_log2(x.softmax_scale, x.q.scales[h], x.k.scales[kvh]);
        Head {
            q,
            k,
            v,
            seq_q,
            seq_kv,
            dim,
            score_scale,
            fused: variant.runs_wgmma_body() && fused_exponent_ok(score_scale, dim as u32),
            max_slack: if variant.runs_wgmma_body() { LAZY_MAX_SLACK } else { 0.0 },
            pv_e4m3: variant.pv_e4m3(),
            v_scale: x.v.scales[kvh],
            window: None,
            cap_input: None,
        }
    }

    /// Query head `h` of packed sequence `rows` in one-batch tensors whose
    /// rows are the sequences' back to back ([`PackedInputs`]).
    fn packed(x: &Inputs<'a>, variant: Variant, h: usize, rows: &PackedRows) -> Head<'a> {
        let [_, heads_q, total_q, dim] = x.q.shape;
        let [_, heads_kv, total_k, _] = x.k.shape;
        let kvh = kv_head(h as u32, heads_q as u32, heads_kv as u32) as usize;
        let slice = |t: &'a Fp8Tensor, head: usize, total: usize, first: u32, len: u32| {
            &t.data[(head * total + first as usize) * dim..(head * total + (first + len) as usize) * dim]
        };
        let q = slice(x.q, h, total_q, rows.q_row0, rows.seq_q);
        let (k, v) =
            (slice(x.k, kvh, total_k, rows.kv_row0, rows.seq_kv), slice(x.v, kvh, total_k, rows.kv_row0, rows.seq_kv));
        Head::of(x, variant, (h, kvh), (q, k, v), (rows.seq_q, rows.seq_kv))
    }

    /// The raw dot product of query `row` and `key` in f32; 0 for a key past
    /// the end (the kernels zero-fill those rows).
    fn dot(&self, row: u32, key: u32) -> f32 {
        if key >= self.seq_kv {
            return 0.0;
        }
        let (r, c) = (row as usize * self.dim, key as usize * self.dim);
        (0..self.dim).map(|d| e4m3_to_f32(self.q[r + d]) * e4m3_to_f32(self.k[c + d])).sum()
    }

    /// V at (`key`, `d`), 0 past the end.
    fn value(&self, key: u32, d: usize) -> f32 {
        if key >= self.seq_kv { 0.0 } else { e4m3_to_f32(self.v[key as usize * self.dim + d]) }
    }
}

/// One row's online-softmax state over some key blocks.
struct RowState {
    m: RowMax,
    l: f32,
    acc: Vec<f32>,
}

impl RowState {
    fn new(dim: usize) -> Self {
        RowState { m: RowMax::EMPTY, l: 0.0, acc: vec![0.0; dim] }
    }

    /// Folds in key block `j` of the query block starting at `row0`, as the
    /// tiled kernels do: masks only where `block_needs_mask` says; P is
    /// rounded to f16 for P·V (to E4M3 with `pv_e4m3`).
    fn visit(&mut self, t: TileShape, head: &Head, x: &Inputs, row0: u32, row: u32, j: u32) {
        let key0 = j * t.block_n;
        let masked = match head.window {
            Some(w) => w.block_needs_mask((row0, t.block_m), key0, t.block_n, head.seq_q, head.seq_kv),
            None => block_needs_mask(row0, key0, t.block_n, head.seq_q, head.seq_kv, x.causal),
        };
        let scores: Vec<f32> = (key0..key0 + t.block_n)
            .map(|key| if masked && !head.sees(row, key, x.causal) { f32::NEG_INFINITY } else { head.score(row, key) })
            .collect();
        let block_max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let (alpha, base) = self.m.update(block_max * head.score_scale, head.max_slack, f32::exp2);
        let exponent = |s: f32| {
            if head.fused {
                exponent::<true>(s, head.score_scale, base, f32::mul_add)
            } else {
                exponent::<false>(s, head.score_scale, base, f32::mul_add)
            }
        };
        let probs: Vec<f32> = scores.iter().map(|&s| exponent(s).exp2()).collect();
        self.l = self.l * alpha + probs.iter().sum::<f32>();
        for (d, a) in self.acc.iter_mut().enumerate() {
            *a *= alpha;
            for (key, p) in (key0..).zip(&probs) {
                *a += p_operand(*p, head.pv_e4m3) * head.value(key, d);
            }
        }
    }
}

/// P as P·V multiplies it: rounded to E4M3 (`e4m3`, as `wgmma-fp8pv`'s
/// `cvt.rn.satfinite`) or to f16.
fn p_operand(p: f32, e4m3: bool) -> f32 {
    if e4m3 { e4m3_to_f32(encode_e4m3(p as f64)) } else { f16::from_f32(p).to_f32() }
}

/// The key blocks the query block from `row0` of `t` walks: from 0 to
/// its last key's, or under a window from its first key's to its last
/// key's (`KeyWindow::key_range`).
fn key_blocks_of(t: TileShape, head: &Head, causal: bool, row0: u32) -> std::ops::Range<u32> {
    match head.window {
        Some(w) => match w.key_range(row0, t.block_m, head.seq_q, head.seq_kv) {
            (_, 0) => 0..0,
            (begin, end) => begin / t.block_n..blocks(end, t.block_n),
        },
        None => 0..blocks(key_end(row0, t.block_m, head.seq_q, head.seq_kv, causal), t.block_n),
    }
}

/// Writes one row of output: `acc * scale`, exact zeros for a row that saw
/// no key (as the kernels' epilogues).
fn write_row(out: &mut [f32], head: &Head, row: u32, acc: &[f32], scale: f32) {
    for (o, a) in out[row as usize * head.dim..][..head.dim].iter_mut().zip(acc) {
        *o = if scale == 0.0 { 0.0 } else { a * scale };
    }
}

/// The SMs of the GPU whose `decode` key splits the emulation and the NaN
/// allowance follow (an H100's or H200's; the splits change the schedule,
/// not the result's tolerance).
pub const EMULATED_SMS: u32 = 132;

/// The key splits `decode` (`kernel`) runs Q `q` and K, V `kv` with on an
/// [`EMULATED_SMS`]-SM GPU: `(splits, keys per split)`.
pub fn decode_splits(kernel: &KernelInfo, q: [usize; 4], kv: [usize; 4]) -> (u32, u32) {
    decode_splits_under(kernel, q, kv, KeyWindow::FULL)
}

/// [`decode_splits`] of a problem under `window` (causal masking folded
/// in): the splits share the keys the window twin walks
/// (`KeyWindow::decode_keys`).
fn decode_splits_under(kernel: &KernelInfo, q: [usize; 4], kv: [usize; 4], window: KeyWindow) -> (u32, u32) {
    let side = |n: u32| (n < KeyWindow::UNBOUNDED).then_some(n);
    let opts = sdpa::Options::new().window(side(window.left), side(window.right));
    let problem = sdpa::validate::Problem::new(q, kv, kv, &opts).expect("a valid problem");
    sdpa::plan::key_splits::key_splits(&problem, kernel, EMULATED_SMS)
}

/// `decode`: each row's keys in the splits the host plans
/// ([`decode_splits`]), each split's key blocks shared out among
/// the kernel's key groups as `split`'s (masked where position 0 would
/// see a hidden key, never rotated), the groups merged per split, the
/// splits merged by their statistics (maximum and sum) (`attention::decode::merge_splits`).
/// Folding the query heads of a key/value head into one block changes
/// which block a row is in, not its arithmetic, so rows are emulated one
/// by one.
fn emulate_decode(kernel: &KernelInfo, head: &Head, x: &Inputs, out: &mut [f32]) {
    let t = kernel.tiles;
    // Under a window the splits share its keys from a whole key block
    // (`KeyWindow::decode_keys`), as the window twin walks them.
    let window = head.window.unwrap_or(KeyWindow::FULL);
    let (splits, split_keys) = decode_splits_under(kernel, x.q.shape, x.k.shape, window);
    let (first, end) = match head.window {
        Some(w) => w.decode_keys(head.seq_q, head.seq_kv, t.block_n),
        None => (0, head.seq_kv),
    };
    for row in 0..head.seq_q {
        // Per split: its statistics (base-2 maximum or 0, sum against it)
        // and its normalized output.
        let parts: Vec<(f32, f32, Vec<f32>)> = (0..splits)
            .map(|split| {
                let begin = first + split * split_keys;
                let keys = (begin + split_keys).min(end).saturating_sub(begin);
                let groups: Vec<RowState> = (0..t.splits)
                    .map(|g| {
                        let mut state = RowState::new(head.dim);
                        for j in (g..blocks(keys, t.block_n)).step_by(t.splits as usize) {
                            // The kernel masks every row itself (`Decode::prepare_scores`):
                            // a block of rows from this one decides the mask, so it
                            // covers the row whatever its query block.
                            state.visit(t, head, x, row, row, begin / t.block_n + j);
                        }
                        state
                    })
                    .collect();
                let (base, sum) = merge_splits_of(&groups);
                let scale = output_scale(sum, head.v_scale, |x| 1.0 / x);
                let mut acc = vec![0f32; head.dim];
                // A group that saw none of the row's keys weighs 0 and is
                // skipped (its sums may hold 0 x NaN).
                for state in groups.iter().filter(|g| g.m.0 != f32::NEG_INFINITY) {
                    let share = (state.m.0 - base).exp2();
                    for (a, v) in acc.iter_mut().zip(&state.acc) {
                        *a += v * share;
                    }
                }
                let normalized = acc.iter().map(|a| if scale == 0.0 { 0.0 } else { a * scale }).collect();
                (base, sum, normalized)
            })
            .collect();
        // The splits that saw a key of the row, each weighing sum x
        // 2^(max - largest max).
        let seen = parts.iter().filter(|p| p.1 != 0.0);
        let max = seen.clone().fold(f32::NEG_INFINITY, |m, p| m.max(p.0));
        let base = if max == f32::NEG_INFINITY { 0.0 } else { max };
        let mut acc = vec![0f32; head.dim];
        let mut total = 0f32;
        for (split_max, sum, part) in seen {
            let w = sum * (split_max - base).exp2();
            total += w;
            for (a, v) in acc.iter_mut().zip(part) {
                *a += w * v;
            }
        }
        write_row(out, head, row, &acc, if total == 0.0 { 0.0 } else { 1.0 / total });
    }
}

/// [`merge_splits`] over the key groups of one block (up to four; the
/// missing ones are empty, max -inf and sum 0, which do not change it).
fn merge_splits_of(groups: &[RowState]) -> (f32, f32) {
    const MAX_SPLITS: usize = 4;
    assert!(groups.len() <= MAX_SPLITS, "emulation holds up to {MAX_SPLITS} groups");
    let m: [f32; MAX_SPLITS] = std::array::from_fn(|g| groups.get(g).map_or(f32::NEG_INFINITY, |s| s.m.0));
    let l: [f32; MAX_SPLITS] = std::array::from_fn(|g| groups.get(g).map_or(0.0, |s| s.l));
    merge_splits(m, l, f32::exp2)
}

/// `mma` and `wgmma` (the same schedule at their own tile shapes): query
/// blocks of `block_m` rows walk their `block_n`-key blocks in order.
fn emulate_mma(t: TileShape, head: &Head, x: &Inputs, out: &mut [f32]) {
    for row0 in (0..blocks(head.seq_q, t.block_m)).map(|block| block * t.block_m) {
        let key_blocks = key_blocks_of(t, head, x.causal, row0);
        for row in row0..(row0 + t.block_m).min(head.seq_q) {
            let mut state = RowState::new(head.dim);
            for j in key_blocks.clone() {
                state.visit(t, head, x, row0, row, j);
            }
            write_row(out, head, row, &state.acc, output_scale(state.l, head.v_scale, |x| 1.0 / x));
        }
    }
}

/// `split`: group `g` of the `splits` key groups walks positions `g, g +
/// splits, ..` of the block's walk over its key blocks ([`key_blocks_of`]:
/// under a window from its first key's block), rotated when `rotate`
/// (`schedule::key_rotation`); the groups' states merge by
/// `merge_splits`.
fn emulate_split(t: TileShape, rotate: bool, head: &Head, x: &Inputs, out: &mut [f32]) {
    for row0 in (0..blocks(head.seq_q, t.block_m)).map(|block| block * t.block_m) {
        let walk = key_blocks_of(t, head, x.causal, row0);
        let key_blocks = walk.len() as u32;
        for row in row0..(row0 + t.block_m).min(head.seq_q) {
            let rotation = if rotate { key_rotation(row0 / t.block_m, key_blocks) } else { 0 };
            let groups: Vec<RowState> = (0..t.splits)
                .map(|g| {
                    let mut state = RowState::new(head.dim);
                    for j in (g..key_blocks).step_by(t.splits as usize) {
                        state.visit(t, head, x, row0, row, walk.start + rotated_block(j, rotation, key_blocks));
                    }
                    state
                })
                .collect();
            let (base, sum) = merge_splits_of(&groups);
            let mut acc = vec![0f32; head.dim];
            for state in &groups {
                let share = (state.m.0 - base).exp2();
                for (a, v) in acc.iter_mut().zip(&state.acc) {
                    *a += v * share;
                }
            }
            write_row(out, head, row, &acc, output_scale(sum, head.v_scale, |x| 1.0 / x));
        }
    }
}
