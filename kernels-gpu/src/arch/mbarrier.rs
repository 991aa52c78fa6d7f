//! Shared-memory barriers (`mbarrier`, sm_80+) and `cp.async` completion
//! tracked on them.
//!
//! A barrier is a 64-bit word in shared memory that expects a number of
//! arrivals per phase; when they have all come, the phase completes and
//! the next begins. Phases alternate parity 0, 1, 0, ..; a waiter names the
//! parity of the phase it waits for. Unlike `bar.sync`, only the threads
//! that use a barrier take part, and arriving does not wait.

use core::arch::asm;

/// `mbarrier.init.shared::cta.b64 [bar], count`: a barrier expecting
/// `count` arrivals per phase, in phase 0.
///
/// # Safety
/// `bar` is an 8-byte aligned shared address of this block that no thread
/// uses until a block barrier has followed.
#[inline(always)]
pub unsafe fn init(bar: u32, count: u32) {
    // SAFETY: the caller guarantees the address and exclusive use.
    unsafe {
        asm!("mbarrier.init.shared::cta.b64 [{b}], {n};", b = in(reg32) bar, n = in(reg32) count, options(nostack))
    }
}

/// `mbarrier.arrive.shared::cta.b64 _, [bar]`: arrives once, without
/// waiting (release: this thread's earlier shared-memory accesses happen
/// before the phase completes).
///
/// # Safety
/// `bar` is an initialized barrier of this block whose current phase still
/// expects this arrival.
#[inline(always)]
pub unsafe fn arrive(bar: u32) {
    // SAFETY: the caller guarantees the barrier.
    unsafe { asm!("mbarrier.arrive.shared::cta.b64 _, [{b}];", b = in(reg32) bar, options(nostack)) }
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes` (sm_90):
/// arrives once and adds `bytes` to the transactions the current phase
/// waits for; bulk copies that complete on `bar` count them down, and the
/// phase completes when the arrivals and the bytes are all in.
///
/// # Safety
/// As [`arrive`]; the bytes must be issued as copies completing on `bar`
/// in this phase.
#[inline(always)]
pub unsafe fn arrive_expect_tx(bar: u32, bytes: u32) {
    // SAFETY: the caller guarantees the barrier and the copies.
    unsafe {
        asm!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [{b}], {n};",
            b = in(reg32) bar,
            n = in(reg32) bytes,
            options(nostack)
        )
    }
}

/// `cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar]`: arrives once on
/// `bar` when every `cp.async` this thread has issued so far has landed
/// (`.noinc`: the arrival is one of those `init` counted).
///
/// # Safety
/// As [`arrive`].
#[inline(always)]
pub unsafe fn arrive_after_copies(bar: u32) {
    // SAFETY: the caller guarantees the barrier.
    unsafe { asm!("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [{b}];", b = in(reg32) bar, options(nostack)) }
}

/// Whether the phase of parity `parity` of `bar` has completed:
/// `mbarrier.try_wait.parity` on sm_90 (which waits a while in hardware
/// before answering no), `mbarrier.test_wait.parity` on sm_89. When it
/// answers yes, the arrivers' earlier accesses, and the copies they
/// arrived after, are visible to this thread (acquire).
///
/// # Safety
/// `bar` is an initialized barrier of this block.
#[inline(always)]
unsafe fn phase_done(bar: u32, parity: u32) -> bool {
    /// The wait instruction with a predicate result, as 0 or 1.
    macro_rules! parity_wait {
        ($op:literal) => {{
            let done: u32;
            asm!(
                concat!(
                    "{{ .reg .pred p; mbarrier.",
                    $op,
                    ".parity.shared::cta.b64 p, [{b}], {ph}; selp.u32 {d}, 1, 0, p; }}"
                ),
                b = in(reg32) bar,
                ph = in(reg32) parity,
                d = out(reg32) done,
                options(nostack)
            );
            done
        }};
    }
    // SAFETY: the caller guarantees the barrier.
    let done = unsafe {
        #[cfg(target_feature = "sm_90a")]
        let done = parity_wait!("try_wait");
        #[cfg(not(target_feature = "sm_90a"))]
        let done = parity_wait!("test_wait");
        done
    };
    done != 0
}

/// Waits until the phase of parity `parity` of `bar` has completed (see
/// [`phase_done`]).
///
/// # Safety
/// `bar` is an initialized barrier of this block whose phase of that
/// parity will complete.
#[inline(always)]
pub unsafe fn wait(bar: u32, parity: u32) {
    // SAFETY: forwarded.
    while !unsafe { phase_done(bar, parity) } {}
}
