//! Tensor copies (`cp.async.bulk.tensor`, sm_90): the copy engine moves a
//! box of a 1-5 dimensional tensor into shared memory as a tensor map (a
//! 128-byte descriptor the host encodes with `cuTensorMapEncodeTiled`)
//! describes it: rows past the tensor's edge arrive as zeros, and with a
//! swizzle mode each 16-byte chunk of a row lands XOR-permuted by the row
//! (see `layout::RowLayout::Swizzled`), so that the rows an `ldmatrix` reads
//! fall in distinct banks. The descriptors live in global memory (a kernel
//! parameter cannot hold one: rustc's PTX kernel ABI aligns parameters to
//! at most 16 bytes, a tensor map needs 64).

use core::arch::asm;

/// `prefetch.tensormap [map]`: starts fetching the tensor map at generic
/// address `map` into the copy engine's descriptor cache, so the first copy
/// that uses it does not wait for it.
///
/// # Safety
/// `map` is the generic address of a tensor map in parameter, constant or
/// global memory.
#[inline(always)]
pub unsafe fn prefetch_map(map: u64) {
    // SAFETY: the caller guarantees the address.
    unsafe { asm!("prefetch.tensormap [{m}];", m = in(reg64) map, options(nostack)) }
}

/// `cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
/// [dst], [map, {x, y, z}], [bar]`: copies the box of the tensor map at
/// generic address `map` whose first element is at coordinates `(x, y, z)`
/// (innermost first, in elements) to shared `dst`, counting its bytes (the
/// whole box, zero-filled parts included) as transactions completing on
/// `bar`.
///
/// # Safety
/// `map` a valid tensor map (as [`prefetch_map`]) of three dimensions; `dst`
/// aligned as its swizzle mode requires (1024 bytes covers every mode) with
/// the box's bytes inside this block's shared memory; `bar` an initialized
/// barrier of this block whose current phase expects the bytes
/// (`mbarrier::arrive_expect_tx`); nothing reads `dst` before that phase
/// completes, and nothing else writes it meanwhile.
#[inline(always)]
pub unsafe fn copy_box_3d(dst: u32, map: u64, (x, y, z): (u32, u32, u32), bar: u32) {
    // SAFETY: the caller guarantees the map, the addresses and the barrier.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}, {z}}}], [{b}];",
            d = in(reg32) dst,
            m = in(reg64) map,
            x = in(reg32) x,
            y = in(reg32) y,
            z = in(reg32) z,
            b = in(reg32) bar,
            options(nostack)
        );
    }
}
