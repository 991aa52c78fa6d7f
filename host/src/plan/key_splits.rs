//! How many blocks share a `decode` problem's keys: enough to occupy the
//! GPU where its folded heads alone would leave SMs idle, never so many
//! that a split holds fewer keys than its block has in flight at once
//! ([`min_split_keys`]).

use crate::validate::Problem;
use kernels_gpu::kernels::KernelInfo;
use kernels_gpu::schedule::{MAX_GRID_YZ, blocks};

/// The fewest keys a split of `kernel` walks: every stage of every key
/// group filled once (128 keys at D = 128, 256 at D = 64), so a split's
/// copies all go out in its prologue and none waits for a refill, while
/// the merge reads few partial rows.
pub const fn min_split_keys(kernel: &KernelInfo) -> u32 {
    let t = kernel.tiles;
    t.stages * t.splits * t.block_n
}

/// Blocks per SM the splits aim for (two `decode` blocks fit an SM at
/// D = 128, four at D = 64).
pub const BLOCKS_PER_SM: u32 = 2;

/// The key splits of `problem` under `kernel` (a `decode` kernel) on a GPU
/// of `multiprocessors` SMs: `(splits, keys per split)`, the keys per split
/// a multiple of the kernel's key block. One split (keys per split: every
/// key, rounded up) where the folded heads fill the GPU. Under a sliding
/// window the splits share only the keys some query position sees
/// ([`decode_keys`]), as the kernel walks them.
pub fn key_splits(problem: &Problem, kernel: &KernelInfo, multiprocessors: u32) -> (u32, u32) {
    let p = problem;
    let block_n = kernel.tiles.block_n;
    let keys = decode_keys(p, block_n).max(1);
    let unsplit = blocks(p.fold_rows() as u32, kernel.tiles.block_m) as u64 * p.folded_heads() as u64;
    let target = (BLOCKS_PER_SM * multiprocessors) as u64;
    let most = blocks(keys, min_split_keys(kernel)).clamp(1, MAX_GRID_YZ) as u64;
    let splits = (target / unsplit.max(1)).clamp(1, most) as u32;
    let split_keys = blocks(blocks(keys, splits), block_n) * block_n;
    (blocks(keys, split_keys), split_keys)
}

/// How many keys `problem`'s `decode` splits share: every key, or under a
/// window enough for any batch entry's `KeyWindow::decode_keys`: the span
/// its positions' windows cover at the longest cache (a shorter cache's,
/// per `seq_used_k`, is no longer), plus a key block less one for the
/// kernel's move of the span's start down to a whole key block; at most
/// every key.
pub fn decode_keys(problem: &Problem, block_n: u32) -> u32 {
    let (seq_q, seq_kv) = (problem.seq_q as u32, problem.seq_kv as u32);
    if problem.window.is_full() {
        return seq_kv;
    }
    let (first, end) = problem.key_window().key_range(0, seq_q, seq_q, seq_kv);
    (end - first + block_n - 1).min(seq_kv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Options;
    use kernels_gpu::kernels::find;
    use kernels_gpu::variant::Variant;

    fn splits(q: [usize; 4], kv: [usize; 4]) -> (u32, u32) {
        let problem = Problem::new(q, kv, kv, &Options::default()).unwrap();
        key_splits(&problem, find(Variant::Decode, q[3] as u32).unwrap(), 132)
    }

    #[test]
    fn few_folded_heads_split_their_keys_many_do_not() {
        // 8 folded heads of one row block: 32 splits of 128 keys (the floor).
        assert_eq!(splits([1, 32, 1, 128], [1, 8, 4096, 128]), (32, 128));
        // At D = 64 four key groups: 256 keys a split at least.
        assert_eq!(splits([1, 32, 1, 64], [1, 8, 4096, 64]), (16, 256));
        // 64 folded heads: 4 splits, one wave of 256 blocks.
        assert_eq!(splits([8, 32, 1, 128], [8, 8, 32768, 128]), (4, 8192));
        // 512 folded heads fill the GPU alone.
        assert_eq!(splits([64, 32, 1, 128], [64, 8, 8192, 128]), (1, 8192));
    }

    /// Under a window the splits share the window's keys, not the cache's,
    /// and cover the span the kernel walks at every cache length up to
    /// the longest (`seq_used_k`), however it aligns the span's start.
    #[test]
    fn windowed_splits_share_the_window_and_cover_it_at_every_cache_length() {
        use kernels_gpu::window::KeyWindow;
        let kernel = find(Variant::Decode, 128).unwrap();
        let block_n = kernel.tiles.block_n;
        let (q, kv) = ([8, 32, 1, 128], [8, 8, 32768, 128]);
        let windowed = Problem::new(q, kv, kv, &Options::new().window(Some(1024), Some(0))).unwrap();
        assert_eq!(decode_keys(&windowed, block_n), 1025 + block_n - 1);
        let (n, keys) = key_splits(&windowed, kernel, 132);
        assert!(n * keys >= 1025 + block_n - 1 && (n - 1) * keys < 1025 + block_n - 1, "{n} x {keys}");
        assert_eq!(key_splits(&Problem::new(q, kv, kv, &Options::new()).unwrap(), kernel, 132), (4, 8192));
        let kernel = find(Variant::Decode, 64).unwrap();
        for (left, right, causal, seq_q) in
            [(1024, 0, false, 1), (100, 5, true, 16), (31, 31, false, 3), (0, 0, false, 1)]
        {
            let opts = Options::new().window(Some(left), Some(right)).causal(causal);
            let (q, kv) = ([2, 8, seq_q, 64], [2, 2, 5000, 64]);
            let (n, keys) = key_splits(&Problem::new(q, kv, kv, &opts).unwrap(), kernel, 132);
            let window = KeyWindow::new(Some(left), Some(right)).with_causal(causal);
            for seq_kv in (1..=5000).step_by(7) {
                let (first, end) = window.decode_keys(seq_q as u32, seq_kv, kernel.tiles.block_n);
                assert!(
                    n * keys >= end - first,
                    "({left}, {right}) Sq={seq_q} Skv={seq_kv}: {n} x {keys} < {first}..{end}"
                );
            }
        }
    }

    #[test]
    fn splits_cover_every_key_and_leave_none_empty() {
        for seq_kv in [1usize, 31, 32, 33, 255, 257, 1000, 4097] {
            let (n, keys) = splits([1, 4, 3, 64], [1, 2, seq_kv, 64]);
            assert!(n >= 1 && keys % 32 == 0, "{seq_kv}: {n} x {keys}");
            assert!(n as usize * keys as usize >= seq_kv, "{seq_kv}: every key");
            assert!((n as usize - 1) * (keys as usize) < seq_kv, "{seq_kv}: the last split has a key");
        }
    }
}
