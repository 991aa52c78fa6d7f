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
/// key, rounded up) where the folded heads fill the GPU.
pub fn key_splits(problem: &Problem, kernel: &KernelInfo, multiprocessors: u32) -> (u32, u32) {
    let p = problem;
    let block_n = kernel.tiles.block_n;
    let unsplit = blocks(p.fold_rows() as u32, kernel.tiles.block_m) as u64 * p.folded_heads() as u64;
    let target = (BLOCKS_PER_SM * multiprocessors) as u64;
    let most = blocks(p.seq_kv as u32, min_split_keys(kernel)).clamp(1, MAX_GRID_YZ) as u64;
    let splits = (target / unsplit.max(1)).clamp(1, most) as u32;
    let split_keys = blocks(blocks(p.seq_kv as u32, splits), block_n) * block_n;
    (blocks(p.seq_kv as u32, split_keys), split_keys)
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
