//! Thread-block clusters (sm_90): a block's rank in its cluster, the
//! cluster barrier, and reads of another block's shared memory
//! (distributed shared memory).

use core::arch::asm;

/// `%cluster_ctarank`: this block's rank in its cluster (0 ..
/// [`blocks`]).
#[inline(always)]
pub fn rank() -> u32 {
    let r: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u32 {r}, %cluster_ctarank;", r = out(reg32) r, options(pure, nomem, nostack)) };
    r
}

/// `%cluster_nctarank`: the blocks of this block's cluster.
#[inline(always)]
pub fn blocks() -> u32 {
    let n: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u32 {n}, %cluster_nctarank;", n = out(reg32) n, options(pure, nomem, nostack)) };
    n
}

/// `barrier.cluster.arrive.release.aligned` then
/// `barrier.cluster.wait.acquire.aligned`: waits until every thread of
/// every block of the cluster arrives; the shared-memory writes of each
/// before it are seen by every other's reads after it.
///
/// # Safety
/// Every thread of every block of the cluster must reach this same call
/// (cluster-uniform control flow, whole warps), or the cluster deadlocks.
#[inline(always)]
pub unsafe fn sync() {
    // SAFETY: the caller guarantees every thread of the cluster arrives.
    unsafe {
        asm!("barrier.cluster.arrive.release.aligned;", "barrier.cluster.wait.acquire.aligned;", options(nostack));
    }
}

/// `mapa.shared::cluster.u32`: the address, in the cluster's shared
/// window, of the byte at this block's shared address `addr` in the block
/// of rank `rank`.
#[inline(always)]
pub fn peer_addr(addr: u32, rank: u32) -> u32 {
    let d: u32;
    // SAFETY: address arithmetic only; nothing is read.
    unsafe {
        asm!(
            "mapa.shared::cluster.u32 {d}, {a}, {r};",
            d = out(reg32) d,
            a = in(reg32) addr,
            r = in(reg32) rank,
            options(pure, nomem, nostack)
        );
    }
    d
}

/// `ld.shared::cluster.v2.f32`: two f32 at `addr`, an address of
/// [`peer_addr`].
///
/// # Safety
/// `addr` must be 8-byte aligned, in the shared memory of a block of this
/// cluster that has not exited, with no write to it in flight (published
/// before a [`sync`] this thread has passed).
#[inline(always)]
pub unsafe fn load_f32x2(addr: u32) -> [f32; 2] {
    let (a, b): (f32, f32);
    // SAFETY: the caller guarantees an aligned, published, live address.
    unsafe {
        asm!(
            "ld.shared::cluster.v2.f32 {{{a}, {b}}}, [{p}];",
            a = out(reg32) a,
            b = out(reg32) b,
            p = in(reg32) addr,
            options(pure, readonly, nostack)
        );
    }
    [a, b]
}

/// `ld.shared::cluster.v4.f32`: four f32 at `addr`, an address of
/// [`peer_addr`].
///
/// # Safety
/// As [`load_f32x2`], 16-byte aligned.
#[inline(always)]
pub unsafe fn load_f32x4(addr: u32) -> [f32; 4] {
    let (a, b, c, d): (f32, f32, f32, f32);
    // SAFETY: the caller guarantees an aligned, published, live address.
    unsafe {
        asm!(
            "ld.shared::cluster.v4.f32 {{{a}, {b}, {c}, {d}}}, [{p}];",
            a = out(reg32) a,
            b = out(reg32) b,
            c = out(reg32) c,
            d = out(reg32) d,
            p = in(reg32) addr,
            options(pure, readonly, nostack)
        );
    }
    [a, b, c, d]
}
