//! How many blocks of a kernel one multiprocessor holds at once, from the
//! ptxas figures: the register file, shared memory, threads and the block
//! slots each bound it, the way the CUDA occupancy calculator counts them
//! (registers are allocated per warp in units of 256, i.e. a multiple of 8
//! per thread, and a block's warps in groups of four, one per scheduler,
//! each scheduler holding a quarter of the register file; every block also
//! reserves 1 KiB of shared memory for the system).

use kernel_builder::Arch;

/// Registers of one multiprocessor (sm_89 and sm_90).
pub const REGISTERS_PER_SM: u32 = 64 * 1024;
/// Registers per thread are allocated in multiples of this.
const REGISTER_GRANULE: u32 = 8;
/// A block's warps take registers in groups of this many (one warp per
/// scheduler): a block of 13 warps is charged 16 (measured: a 13-warp block
/// at 149 registers would not launch on an H200; see lab/).
const WARP_GRANULE: u32 = 4;
/// Shared memory the system reserves per block, in bytes.
const RESERVED_SMEM_PER_BLOCK: u32 = 1024;

/// What one multiprocessor of an arch offers.
struct SmLimits {
    /// Shared memory per multiprocessor, in bytes.
    smem: u32,
    /// Resident threads.
    threads: u32,
    /// Resident blocks.
    blocks: u32,
}

/// The limits of `arch` (H100/H200 for sm_90, L4 for sm_89; CUDA
/// programming guide, "Compute capabilities").
fn limits(arch: Arch) -> SmLimits {
    match arch.capability {
        (9, _) => SmLimits { smem: 228 * 1024, threads: 2048, blocks: 32 },
        (8, 9) => SmLimits { smem: 100 * 1024, threads: 1536, blocks: 24 },
        _ => SmLimits { smem: 48 * 1024, threads: 1024, blocks: 16 },
    }
}

/// Registers one block of `threads` threads at `registers` per thread is
/// allocated.
pub fn block_registers(registers: u32, threads: u32) -> u32 {
    threads.div_ceil(32).next_multiple_of(WARP_GRANULE) * 32 * registers.div_ceil(REGISTER_GRANULE) * REGISTER_GRANULE
}

/// Blocks of `threads` threads, `registers` registers per thread and `smem`
/// bytes of shared memory (static + dynamic) resident on one
/// multiprocessor of `arch`; 0 when one block does not fit.
pub fn blocks_per_sm(arch: Arch, registers: u32, threads: u32, smem: u32) -> u32 {
    if threads == 0 {
        return 0;
    }
    let sm = limits(arch);
    let by_registers = REGISTERS_PER_SM.checked_div(block_registers(registers, threads)).unwrap_or(sm.blocks);
    let by_smem = sm.smem / (smem + RESERVED_SMEM_PER_BLOCK);
    let by_threads = sm.threads / threads;
    by_registers.min(by_smem).min(by_threads).min(sm.blocks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_builder::{SM_89, SM_90A};

    #[test]
    fn registers_count_in_multiples_of_eight_per_thread() {
        // mma d128 on sm_90a: 168 registers leave room for 3 blocks of 128
        // threads, 169 (allocated as 176) for 2.
        assert_eq!(blocks_per_sm(SM_90A, 168, 128, 36352), 3);
        assert_eq!(blocks_per_sm(SM_90A, 169, 128, 36352), 2);
        assert_eq!(block_registers(169, 128), 128 * 176);
    }

    #[test]
    fn warps_take_registers_in_groups_of_four() {
        // A producer-warp kernel measured once: 13 warps at 149 registers (152 each) are
        // charged as 16 and do not fit (the driver refused the launch); 12 do.
        assert_eq!(block_registers(149, 13 * 32), 16 * 32 * 152);
        assert_eq!(blocks_per_sm(SM_90A, 149, 13 * 32, 122944), 0);
        assert_eq!(blocks_per_sm(SM_90A, 149, 12 * 32, 122944), 1);
        // 9 warps at 107 registers (112): charged as 12, one block per SM, not two.
        assert_eq!(blocks_per_sm(SM_90A, 107, 9 * 32, 57408), 1);
        assert_eq!(blocks_per_sm(SM_90A, 107, 8 * 32, 57408), 2);
    }

    #[test]
    fn shared_memory_threads_and_slots_bound_it_too() {
        // split d64 on an L4: 2 blocks by shared memory (44.5 KB + 1 KB each of 100 KB).
        assert_eq!(blocks_per_sm(SM_89, 105, 256, 44544), 2);
        assert_eq!(blocks_per_sm(SM_90A, 32, 1024, 0), 2, "2048 threads");
        assert_eq!(blocks_per_sm(SM_90A, 16, 32, 0), 32, "block slots");
        assert_eq!(blocks_per_sm(SM_90A, 255, 1024, 0), 0, "does not fit");
        assert_eq!(blocks_per_sm(SM_90A, 32, 128, 227 * 1024), 1);
    }
}
