//! Thread-block clusters (sm_90): a block's place in its cluster, the
//! cluster-wide barrier, and reads of a peer block's shared memory
//! (distributed shared memory). A kernel launched without cluster
//! dimensions is a cluster of one block.

use core::arch::asm;

/// `mov.u32 %cluster_ctarank`: this block's rank in its cluster (0 ..
/// [`blocks`]).
#[inline(always)]
pub fn rank() -> u32 {
    let r: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u32 {r}, %cluster_ctarank;", r = out(reg32) r, options(pure, nomem, nostack)) };
    r
}

/// `mov.u32 %cluster_nctarank`: blocks in this block's cluster (1 where the
/// launch gave no cluster dimensions).
#[inline(always)]
pub fn blocks() -> u32 {
    let n: u32;
    // SAFETY: reading a special register has no preconditions.
    unsafe { asm!("mov.u32 {n}, %cluster_nctarank;", n = out(reg32) n, options(pure, nomem, nostack)) };
    n
}

/// `barrier.cluster.arrive.release`: this thread arrives at the cluster
/// barrier; its earlier memory accesses (shared memory included) are
/// released at cluster scope to the threads that [`wait`] on this phase.
/// Not `.aligned`: the lanes of a warp need not be converged.
///
/// # Safety
/// Every thread of the cluster that has not exited arrives once per phase
/// before any waits on the next; each arrival is followed by one [`wait`]
/// of this thread before it arrives again.
#[inline(always)]
pub unsafe fn arrive() {
    // SAFETY: the caller's contract; a memory clobber keeps earlier accesses before it.
    unsafe { asm!("barrier.cluster.arrive.release;", options(nostack)) }
}

/// `barrier.cluster.wait.acquire`: waits until every non-exited thread of
/// the cluster has arrived at the current phase ([`arrive`]); the
/// accesses they released are visible to this thread afterwards.
///
/// # Safety
/// This thread arrived at the phase it waits for.
#[inline(always)]
pub unsafe fn wait() {
    // SAFETY: the caller's contract; a memory clobber keeps later accesses after it.
    unsafe { asm!("barrier.cluster.wait.acquire;", options(nostack)) }
}

/// `mapa.shared::cluster.u32`: the `shared::cluster` address of the byte at
/// shared-window address `addr` (this block's, as `smem::shared_addr`
/// gives it) in the shared memory of the cluster's block `rank`.
#[inline(always)]
pub fn peer_addr(addr: u32, rank: u32) -> u32 {
    let out: u32;
    // SAFETY: address arithmetic only.
    unsafe {
        asm!(
            "mapa.shared::cluster.u32 {o}, {a}, {r};",
            o = out(reg32) out,
            a = in(reg32) addr,
            r = in(reg32) rank,
            options(pure, nomem, nostack)
        )
    };
    out
}

/// `ld.shared::cluster.v4.f32`: four floats at `shared::cluster` address
/// `addr` ([`peer_addr`]; 16-byte aligned), in one access.
///
/// # Safety
/// `addr` lies in the shared memory of a block of this cluster that has
/// not exited and will not until this load completes (a cluster barrier
/// after it), 16-byte aligned; its writer's stores were released to this
/// thread ([`arrive`], [`wait`]).
#[inline(always)]
pub unsafe fn load_f32x4(addr: u32) -> [f32; 4] {
    let (a, b, c, d): (f32, f32, f32, f32);
    // SAFETY: the caller's contract.
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

/// `ld.shared::cluster.v2.f32`: two floats at `shared::cluster` address
/// `addr` ([`peer_addr`]; 8-byte aligned), in one access.
///
/// # Safety
/// As [`load_f32x4`], 8-byte aligned.
#[inline(always)]
pub unsafe fn load_f32x2(addr: u32) -> [f32; 2] {
    let (a, b): (f32, f32);
    // SAFETY: the caller's contract.
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
