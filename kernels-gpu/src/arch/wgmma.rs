//! Warpgroup tensor-core products (`wgmma`, sm_90a only) and their
//! ordering instructions. (The per-N wrappers below were written out by a
//! small script, as ThunderKittens does: `asm!` templates cannot be built
//! from const generics.)
//!
//! Shared-memory operands are described by 64-bit matrix descriptors (see
//! `crate::layout::gmma_desc`); the accumulators stay in registers.

use core::arch::asm;

/// `wgmma.fence.sync.aligned`: orders earlier register writes of the
/// accumulators (and A fragments) before the next `wgmma`.
///
/// # Safety
/// All threads of the warpgroup execute it together.
#[inline(always)]
pub unsafe fn fence() {
    // SAFETY: no operands.
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack)) }
}

/// An empty `asm!` that takes `x` in and out of a register: everything
/// that computes `x` must happen before it, and nothing may be moved past it.
/// Called on accumulators and A fragments right before [`fence`], it keeps
/// the compiler from sinking their updates between `wgmma.fence` and the
/// `wgmma` that reads them (ptxas would then serialize the `wgmma`s,
/// warnings C7513/C7515), as CUTLASS's `warpgroup_fence_operand` does.
#[inline(always)]
pub fn pin_f32(x: &mut f32) {
    // SAFETY: an empty template; the register is returned unchanged.
    unsafe { asm!("// pin {0}", inout(reg32) * x, options(nostack, preserves_flags)) }
}

/// [`pin_f32`] for a descriptor.
#[inline(always)]
pub fn pin_u64(x: &mut u64) {
    // SAFETY: an empty template; the register is returned unchanged.
    unsafe { asm!("// pin {0}", inout(reg64) * x, options(nostack, preserves_flags)) }
}

/// [`pin_f32`] for a packed register (A fragments).
#[inline(always)]
pub fn pin_u32(x: &mut u32) {
    // SAFETY: an empty template; the register is returned unchanged.
    unsafe { asm!("// pin {0}", inout(reg32) * x, options(nostack, preserves_flags)) }
}

/// `wgmma.commit_group.sync.aligned`: closes the group of `wgmma`s issued so far.
///
/// # Safety
/// All threads of the warpgroup execute it together.
#[inline(always)]
pub unsafe fn commit_group() {
    // SAFETY: no operands.
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack)) }
}

/// `wgmma.wait_group.sync.aligned N`: waits until at most `pending` (0 or
/// 1, folded to a constant after inlining; anything else waits for all) of
/// this warpgroup's committed `wgmma` groups are still in flight. Groups
/// complete in order, so `wait_group(1)` after committing A then B means A
/// is done and its accumulators readable.
///
/// # Safety
/// All threads of the warpgroup execute it together.
#[inline(always)]
pub unsafe fn wait_group(pending: u32) {
    // SAFETY: no operands.
    unsafe {
        match pending {
            1 => asm!("wgmma.wait_group.sync.aligned 1;", options(nostack)),
            _ => asm!("wgmma.wait_group.sync.aligned 0;", options(nostack)),
        }
    }
}

/// [`wait_group`] for `PENDING` groups that also reads the registers of
/// the A fragments `a` (4 fragments for the f16 `k16` products of a 64-key
/// block, 2 for the E4M3 `k32` ones, 6 for those of a 192-key block) of a
/// `wgmma` still in flight: the compiler must keep them intact until the
/// wait, so it cannot build the next fragments in the same registers while
/// the tensor cores still read these (ptxas would serialize).
///
/// # Safety
/// As [`wait_group`].
#[inline(always)]
pub unsafe fn wait_group_holding<const PENDING: u32, const N: usize>(a: &[[u32; 4]; N]) {
    const { assert!((PENDING == 0 || PENDING == 1) && (N == 2 || N == 4 || N == 6)) };
    let f = a.as_flattened();
    // SAFETY: the operands are only read by an empty comment.
    unsafe {
        match N {
            2 => {
                asm!("wgmma.wait_group.sync.aligned {n}; // holds {0} {1} {2} {3} {4} {5} {6} {7}", in(reg32) f[0], in(reg32) f[1], in(reg32) f[2], in(reg32) f[3], in(reg32) f[4], in(reg32) f[5], in(reg32) f[6], in(reg32) f[7], n = const PENDING, options(nostack))
            }
            6 => {
                asm!("wgmma.wait_group.sync.aligned {n}; // holds {0} {1} {2} {3} {4} {5} {6} {7} {8} {9} {10} {11} {12} {13} {14} {15} {16} {17} {18} {19} {20} {21} {22} {23}", in(reg32) f[0], in(reg32) f[1], in(reg32) f[2], in(reg32) f[3], in(reg32) f[4], in(reg32) f[5], in(reg32) f[6], in(reg32) f[7], in(reg32) f[8], in(reg32) f[9], in(reg32) f[10], in(reg32) f[11], in(reg32) f[12], in(reg32) f[13], in(reg32) f[14], in(reg32) f[15], in(reg32) f[16], in(reg32) f[17], in(reg32) f[18], in(reg32) f[19], in(reg32) f[20], in(reg32) f[21], in(reg32) f[22], in(reg32) f[23], n = const PENDING, options(nostack))
            }
            _ => {
                asm!("wgmma.wait_group.sync.aligned {n}; // holds {0} {1} {2} {3} {4} {5} {6} {7} {8} {9} {10} {11} {12} {13} {14} {15}", in(reg32) f[0], in(reg32) f[1], in(reg32) f[2], in(reg32) f[3], in(reg32) f[4], in(reg32) f[5], in(reg32) f[6], in(reg32) f[7], in(reg32) f[8], in(reg32) f[9], in(reg32) f[10], in(reg32) f[11], in(reg32) f[12], in(reg32) f[13], in(reg32) f[14], in(reg32) f[15], n = const PENDING, options(nostack))
            }
        }
    }
}

/// `wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3`: issues
/// `acc (+)= A(64x32, e4m3) * B(32x64, e4m3)` for the warpgroup, both operands
/// read from shared memory through descriptors (K-major).
/// `ACCUMULATE == 0` overwrites `acc` instead of adding to it (an
/// immediate, so no register is defined between `fence` and the `wgmma`).
///
/// Accumulator layout: warp `w` of the warpgroup holds rows `16w .. 16w + 15`;
/// `acc[4j .. 4j + 3]` is the 16x8 tile of columns `8j .. 8j + 7` in the
/// `mma.sync` accumulator layout (see [`super::mma`]).
///
/// # Safety
/// All 128 threads of a warpgroup (4 consecutive warps starting at a multiple
/// of 4) must issue it together; the shared memory the descriptors describe
/// must be written and fenced for the async proxy; `acc` must not be read
/// before [`wait_group`]; [`fence`] must precede it whenever `acc` was
/// written by other instructions.
#[inline(always)]
pub unsafe fn m64n64k32_e4m3<const ACCUMULATE: u32>(acc: &mut [f32; 32], desc_a: u64, desc_b: u64) {
    // SAFETY: the caller upholds the warpgroup and shared-memory contract above.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {acc}, 0;",
            "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, {16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}}}, {32}, {33}, p, 1, 1;",
            "}}",
            inout(reg32) acc[0],
            inout(reg32) acc[1],
            inout(reg32) acc[2],
            inout(reg32) acc[3],
            inout(reg32) acc[4],
            inout(reg32) acc[5],
            inout(reg32) acc[6],
            inout(reg32) acc[7],
            inout(reg32) acc[8],
            inout(reg32) acc[9],
            inout(reg32) acc[10],
            inout(reg32) acc[11],
            inout(reg32) acc[12],
            inout(reg32) acc[13],
            inout(reg32) acc[14],
            inout(reg32) acc[15],
            inout(reg32) acc[16],
            inout(reg32) acc[17],
            inout(reg32) acc[18],
            inout(reg32) acc[19],
            inout(reg32) acc[20],
            inout(reg32) acc[21],
            inout(reg32) acc[22],
            inout(reg32) acc[23],
            inout(reg32) acc[24],
            inout(reg32) acc[25],
            inout(reg32) acc[26],
            inout(reg32) acc[27],
            inout(reg32) acc[28],
            inout(reg32) acc[29],
            inout(reg32) acc[30],
            inout(reg32) acc[31],
            in(reg64) desc_a,
            in(reg64) desc_b,
            acc = const ACCUMULATE,
            options(nostack)
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3`: [`m64n64k32_e4m3`]
/// over 192 columns of B (`acc` columns 0 .. 191: 24 tiles of 8), both
/// operands from shared memory (Q·K^T of a 192-key block).
///
/// # Safety
/// As [`m64n64k32_e4m3`].
#[inline(always)]
pub unsafe fn m64n192k32_e4m3<const ACCUMULATE: u32>(acc: &mut [f32; 96], desc_a: u64, desc_b: u64) {
    // SAFETY: the caller upholds the warpgroup and shared-memory contract.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {acc}, 0;",
            "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 {{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, {16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}, {32}, {33}, {34}, {35}, {36}, {37}, {38}, {39}, {40}, {41}, {42}, {43}, {44}, {45}, {46}, {47}, {48}, {49}, {50}, {51}, {52}, {53}, {54}, {55}, {56}, {57}, {58}, {59}, {60}, {61}, {62}, {63}, {64}, {65}, {66}, {67}, {68}, {69}, {70}, {71}, {72}, {73}, {74}, {75}, {76}, {77}, {78}, {79}, {80}, {81}, {82}, {83}, {84}, {85}, {86}, {87}, {88}, {89}, {90}, {91}, {92}, {93}, {94}, {95}}}, {96}, {97}, p, 1, 1;",
            "}}",
            inout(reg32) acc[0],
            inout(reg32) acc[1],
            inout(reg32) acc[2],
            inout(reg32) acc[3],
            inout(reg32) acc[4],
            inout(reg32) acc[5],
            inout(reg32) acc[6],
            inout(reg32) acc[7],
            inout(reg32) acc[8],
            inout(reg32) acc[9],
            inout(reg32) acc[10],
            inout(reg32) acc[11],
            inout(reg32) acc[12],
            inout(reg32) acc[13],
            inout(reg32) acc[14],
            inout(reg32) acc[15],
            inout(reg32) acc[16],
            inout(reg32) acc[17],
            inout(reg32) acc[18],
            inout(reg32) acc[19],
            inout(reg32) acc[20],
            inout(reg32) acc[21],
            inout(reg32) acc[22],
            inout(reg32) acc[23],
            inout(reg32) acc[24],
            inout(reg32) acc[25],
            inout(reg32) acc[26],
            inout(reg32) acc[27],
            inout(reg32) acc[28],
            inout(reg32) acc[29],
            inout(reg32) acc[30],
            inout(reg32) acc[31],
            inout(reg32) acc[32],
            inout(reg32) acc[33],
            inout(reg32) acc[34],
            inout(reg32) acc[35],
            inout(reg32) acc[36],
            inout(reg32) acc[37],
            inout(reg32) acc[38],
            inout(reg32) acc[39],
            inout(reg32) acc[40],
            inout(reg32) acc[41],
            inout(reg32) acc[42],
            inout(reg32) acc[43],
            inout(reg32) acc[44],
            inout(reg32) acc[45],
            inout(reg32) acc[46],
            inout(reg32) acc[47],
            inout(reg32) acc[48],
            inout(reg32) acc[49],
            inout(reg32) acc[50],
            inout(reg32) acc[51],
            inout(reg32) acc[52],
            inout(reg32) acc[53],
            inout(reg32) acc[54],
            inout(reg32) acc[55],
            inout(reg32) acc[56],
            inout(reg32) acc[57],
            inout(reg32) acc[58],
            inout(reg32) acc[59],
            inout(reg32) acc[60],
            inout(reg32) acc[61],
            inout(reg32) acc[62],
            inout(reg32) acc[63],
            inout(reg32) acc[64],
            inout(reg32) acc[65],
            inout(reg32) acc[66],
            inout(reg32) acc[67],
            inout(reg32) acc[68],
            inout(reg32) acc[69],
            inout(reg32) acc[70],
            inout(reg32) acc[71],
            inout(reg32) acc[72],
            inout(reg32) acc[73],
            inout(reg32) acc[74],
            inout(reg32) acc[75],
            inout(reg32) acc[76],
            inout(reg32) acc[77],
            inout(reg32) acc[78],
            inout(reg32) acc[79],
            inout(reg32) acc[80],
            inout(reg32) acc[81],
            inout(reg32) acc[82],
            inout(reg32) acc[83],
            inout(reg32) acc[84],
            inout(reg32) acc[85],
            inout(reg32) acc[86],
            inout(reg32) acc[87],
            inout(reg32) acc[88],
            inout(reg32) acc[89],
            inout(reg32) acc[90],
            inout(reg32) acc[91],
            inout(reg32) acc[92],
            inout(reg32) acc[93],
            inout(reg32) acc[94],
            inout(reg32) acc[95],
            in(reg64) desc_a,
            in(reg64) desc_b,
            acc = const ACCUMULATE,
            options(nostack)
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n72k16.f32.f16.f16` with A from
/// registers: issues `[acc | sums] += A(64x16, f16) * B(16x72, f16)`, B
/// read from shared memory through a descriptor (K-major, no transpose):
/// `acc` holds columns 0 .. 63, `sums` the 16x8 tile of columns 64 .. 71.
/// With B a 64-row `Vt` tile followed by 8 rows of ones, `acc += A * Vt`
/// and every element of `sums` gets its row's sum of A added.
/// `ACCUMULATE == 0` overwrites both.
///
/// A: warp `w` supplies rows `16w .. 16w + 15` in the `mma.m16n8k16` A layout
/// (see [`super::mma::m16n8k16_f16`]). Accumulators as in the e4m3 form.
///
/// # Safety
/// As [`m64n64k32_e4m3`].
#[inline(always)]
pub unsafe fn m64n72k16_f16_rs<const ACCUMULATE: u32>(
    acc: &mut [f32; 32],
    sums: &mut [f32; 4],
    a: [u32; 4],
    desc_b: u64,
) {
    // SAFETY: the caller upholds the warpgroup and shared-memory contract.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {acc}, 0;",
            "wgmma.mma_async.sync.aligned.m64n72k16.f32.f16.f16 {{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, {16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}, {32}, {33}, {34}, {35}}}, {{{36}, {37}, {38}, {39}}}, {40}, p, 1, 1, 0;",
            "}}",
            inout(reg32) acc[0],
            inout(reg32) acc[1],
            inout(reg32) acc[2],
            inout(reg32) acc[3],
            inout(reg32) acc[4],
            inout(reg32) acc[5],
            inout(reg32) acc[6],
            inout(reg32) acc[7],
            inout(reg32) acc[8],
            inout(reg32) acc[9],
            inout(reg32) acc[10],
            inout(reg32) acc[11],
            inout(reg32) acc[12],
            inout(reg32) acc[13],
            inout(reg32) acc[14],
            inout(reg32) acc[15],
            inout(reg32) acc[16],
            inout(reg32) acc[17],
            inout(reg32) acc[18],
            inout(reg32) acc[19],
            inout(reg32) acc[20],
            inout(reg32) acc[21],
            inout(reg32) acc[22],
            inout(reg32) acc[23],
            inout(reg32) acc[24],
            inout(reg32) acc[25],
            inout(reg32) acc[26],
            inout(reg32) acc[27],
            inout(reg32) acc[28],
            inout(reg32) acc[29],
            inout(reg32) acc[30],
            inout(reg32) acc[31],
            inout(reg32) sums[0],
            inout(reg32) sums[1],
            inout(reg32) sums[2],
            inout(reg32) sums[3],
            in(reg32) a[0],
            in(reg32) a[1],
            in(reg32) a[2],
            in(reg32) a[3],
            in(reg64) desc_b,
            acc = const ACCUMULATE,
            options(nostack)
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n136k16.f32.f16.f16` with A from
/// registers: [`m64n72k16_f16_rs`] at D = 128 (`acc` columns 0 .. 127,
/// `sums` the 16x8 tile of columns 128 .. 135).
///
/// # Safety
/// As [`m64n64k32_e4m3`].
#[inline(always)]
pub unsafe fn m64n136k16_f16_rs<const ACCUMULATE: u32>(
    acc: &mut [f32; 64],
    sums: &mut [f32; 4],
    a: [u32; 4],
    desc_b: u64,
) {
    // SAFETY: the caller upholds the warpgroup and shared-memory contract.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {acc}, 0;",
            "wgmma.mma_async.sync.aligned.m64n136k16.f32.f16.f16 {{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, {16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}, {32}, {33}, {34}, {35}, {36}, {37}, {38}, {39}, {40}, {41}, {42}, {43}, {44}, {45}, {46}, {47}, {48}, {49}, {50}, {51}, {52}, {53}, {54}, {55}, {56}, {57}, {58}, {59}, {60}, {61}, {62}, {63}, {64}, {65}, {66}, {67}}}, {{{68}, {69}, {70}, {71}}}, {72}, p, 1, 1, 0;",
            "}}",
            inout(reg32) acc[0],
            inout(reg32) acc[1],
            inout(reg32) acc[2],
            inout(reg32) acc[3],
            inout(reg32) acc[4],
            inout(reg32) acc[5],
            inout(reg32) acc[6],
            inout(reg32) acc[7],
            inout(reg32) acc[8],
            inout(reg32) acc[9],
            inout(reg32) acc[10],
            inout(reg32) acc[11],
            inout(reg32) acc[12],
            inout(reg32) acc[13],
            inout(reg32) acc[14],
            inout(reg32) acc[15],
            inout(reg32) acc[16],
            inout(reg32) acc[17],
            inout(reg32) acc[18],
            inout(reg32) acc[19],
            inout(reg32) acc[20],
            inout(reg32) acc[21],
            inout(reg32) acc[22],
            inout(reg32) acc[23],
            inout(reg32) acc[24],
            inout(reg32) acc[25],
            inout(reg32) acc[26],
            inout(reg32) acc[27],
            inout(reg32) acc[28],
            inout(reg32) acc[29],
            inout(reg32) acc[30],
            inout(reg32) acc[31],
            inout(reg32) acc[32],
            inout(reg32) acc[33],
            inout(reg32) acc[34],
            inout(reg32) acc[35],
            inout(reg32) acc[36],
            inout(reg32) acc[37],
            inout(reg32) acc[38],
            inout(reg32) acc[39],
            inout(reg32) acc[40],
            inout(reg32) acc[41],
            inout(reg32) acc[42],
            inout(reg32) acc[43],
            inout(reg32) acc[44],
            inout(reg32) acc[45],
            inout(reg32) acc[46],
            inout(reg32) acc[47],
            inout(reg32) acc[48],
            inout(reg32) acc[49],
            inout(reg32) acc[50],
            inout(reg32) acc[51],
            inout(reg32) acc[52],
            inout(reg32) acc[53],
            inout(reg32) acc[54],
            inout(reg32) acc[55],
            inout(reg32) acc[56],
            inout(reg32) acc[57],
            inout(reg32) acc[58],
            inout(reg32) acc[59],
            inout(reg32) acc[60],
            inout(reg32) acc[61],
            inout(reg32) acc[62],
            inout(reg32) acc[63],
            inout(reg32) sums[0],
            inout(reg32) sums[1],
            inout(reg32) sums[2],
            inout(reg32) sums[3],
            in(reg32) a[0],
            in(reg32) a[1],
            in(reg32) a[2],
            in(reg32) a[3],
            in(reg64) desc_b,
            acc = const ACCUMULATE,
            options(nostack)
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3` with A from
/// registers: issues `acc += A(64x32, e4m3) * B(32x64, e4m3)`, B K-major
/// from shared memory (an E4M3 `Vt` tile: P·V of 32 keys at D = 64).
/// `ACCUMULATE == 0` overwrites `acc`.
///
/// A: warp `w` supplies rows `16w .. 16w + 15` in the `mma.m16n8k32` E4M3
/// A layout: register 0 the lane's row `g = lane / 4` at K `4q .. 4q + 3`
/// (`q = lane % 4`, lowest byte first), 1 row `g + 8` there, 2 and 3 the
/// same rows at K `16 + 4q ..`. Accumulators as in [`m64n64k32_e4m3`].
///
/// # Safety
/// As [`m64n64k32_e4m3`].
#[inline(always)]
pub unsafe fn m64n64k32_e4m3_rs<const ACCUMULATE: u32>(acc: &mut [f32; 32], a: [u32; 4], desc_b: u64) {
    // SAFETY: the caller upholds the warpgroup and shared-memory contract.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {acc}, 0;",
            "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, {16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}}}, {{{32}, {33}, {34}, {35}}}, {36}, p, 1, 1;",
            "}}",
            inout(reg32) acc[0],
            inout(reg32) acc[1],
            inout(reg32) acc[2],
            inout(reg32) acc[3],
            inout(reg32) acc[4],
            inout(reg32) acc[5],
            inout(reg32) acc[6],
            inout(reg32) acc[7],
            inout(reg32) acc[8],
            inout(reg32) acc[9],
            inout(reg32) acc[10],
            inout(reg32) acc[11],
            inout(reg32) acc[12],
            inout(reg32) acc[13],
            inout(reg32) acc[14],
            inout(reg32) acc[15],
            inout(reg32) acc[16],
            inout(reg32) acc[17],
            inout(reg32) acc[18],
            inout(reg32) acc[19],
            inout(reg32) acc[20],
            inout(reg32) acc[21],
            inout(reg32) acc[22],
            inout(reg32) acc[23],
            inout(reg32) acc[24],
            inout(reg32) acc[25],
            inout(reg32) acc[26],
            inout(reg32) acc[27],
            inout(reg32) acc[28],
            inout(reg32) acc[29],
            inout(reg32) acc[30],
            inout(reg32) acc[31],
            in(reg32) a[0],
            in(reg32) a[1],
            in(reg32) a[2],
            in(reg32) a[3],
            in(reg64) desc_b,
            acc = const ACCUMULATE,
            options(nostack)
        );
    }
}

/// `wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3` with A from
/// registers: [`m64n64k32_e4m3_rs`] at D = 128 (`acc` columns 0 .. 127).
///
/// # Safety
/// As [`m64n64k32_e4m3`].
#[inline(always)]
pub unsafe fn m64n128k32_e4m3_rs<const ACCUMULATE: u32>(acc: &mut [f32; 64], a: [u32; 4], desc_b: u64) {
    // SAFETY: the caller upholds the warpgroup and shared-memory contract.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "setp.ne.b32 p, {acc}, 0;",
            "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, {16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}, {32}, {33}, {34}, {35}, {36}, {37}, {38}, {39}, {40}, {41}, {42}, {43}, {44}, {45}, {46}, {47}, {48}, {49}, {50}, {51}, {52}, {53}, {54}, {55}, {56}, {57}, {58}, {59}, {60}, {61}, {62}, {63}}}, {{{64}, {65}, {66}, {67}}}, {68}, p, 1, 1;",
            "}}",
            inout(reg32) acc[0],
            inout(reg32) acc[1],
            inout(reg32) acc[2],
            inout(reg32) acc[3],
            inout(reg32) acc[4],
            inout(reg32) acc[5],
            inout(reg32) acc[6],
            inout(reg32) acc[7],
            inout(reg32) acc[8],
            inout(reg32) acc[9],
            inout(reg32) acc[10],
            inout(reg32) acc[11],
            inout(reg32) acc[12],
            inout(reg32) acc[13],
            inout(reg32) acc[14],
            inout(reg32) acc[15],
            inout(reg32) acc[16],
            inout(reg32) acc[17],
            inout(reg32) acc[18],
            inout(reg32) acc[19],
            inout(reg32) acc[20],
            inout(reg32) acc[21],
            inout(reg32) acc[22],
            inout(reg32) acc[23],
            inout(reg32) acc[24],
            inout(reg32) acc[25],
            inout(reg32) acc[26],
            inout(reg32) acc[27],
            inout(reg32) acc[28],
            inout(reg32) acc[29],
            inout(reg32) acc[30],
            inout(reg32) acc[31],
            inout(reg32) acc[32],
            inout(reg32) acc[33],
            inout(reg32) acc[34],
            inout(reg32) acc[35],
            inout(reg32) acc[36],
            inout(reg32) acc[37],
            inout(reg32) acc[38],
            inout(reg32) acc[39],
            inout(reg32) acc[40],
            inout(reg32) acc[41],
            inout(reg32) acc[42],
            inout(reg32) acc[43],
            inout(reg32) acc[44],
            inout(reg32) acc[45],
            inout(reg32) acc[46],
            inout(reg32) acc[47],
            inout(reg32) acc[48],
            inout(reg32) acc[49],
            inout(reg32) acc[50],
            inout(reg32) acc[51],
            inout(reg32) acc[52],
            inout(reg32) acc[53],
            inout(reg32) acc[54],
            inout(reg32) acc[55],
            inout(reg32) acc[56],
            inout(reg32) acc[57],
            inout(reg32) acc[58],
            inout(reg32) acc[59],
            inout(reg32) acc[60],
            inout(reg32) acc[61],
            inout(reg32) acc[62],
            inout(reg32) acc[63],
            in(reg32) a[0],
            in(reg32) a[1],
            in(reg32) a[2],
            in(reg32) a[3],
            in(reg64) desc_b,
            acc = const ACCUMULATE,
            options(nostack)
        );
    }
}
