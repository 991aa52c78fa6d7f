//! `naive`: one warp per query row, f32 math, online softmax over the keys
//! the row sees. No shared memory, no tensor cores: the baseline every other
//! variant is compared with on the GPU.

use super::output::OutputFormat;
use crate::arch::{grid_dep, math, shfl, sreg};
use crate::fp8::e4m3_to_f32;
use crate::params::AttnParams;
use crate::schedule;
use crate::softmax::{self, RowMax};

/// The sum of `x` over the 32 lanes of the warp, in every lane.
///
/// # Safety
/// All 32 lanes must call it together.
#[inline(always)]
unsafe fn warp_sum(mut x: f32) -> f32 {
    let mut mask = 16;
    while mask > 0 {
        // SAFETY: converged warp (the caller's contract).
        x += unsafe { shfl::shfl_xor_f32(x, mask) };
        mask /= 2;
    }
    x
}

/// Computes the rows of the block: warp `w` of the block that computes
/// query block `b` (`schedule::block_coords`) handles query row `4b + w`.
/// Lane `l` owns the head-dimension entries `l, l + 32, ..` (`DIM_CHUNKS =
/// HEAD_DIM / 32`).
///
/// # Safety
/// `p` must describe valid device buffers of the shapes it states (the host
/// validates them); the block must have `WARPS * 32` threads.
#[inline(always)]
pub unsafe fn forward<const HEAD_DIM: usize, const DIM_CHUNKS: usize, const WARPS: u32, Out: OutputFormat>(
    p: &AttnParams,
) {
    const { assert!(DIM_CHUNKS * 32 == HEAD_DIM) };
    let lane = sreg::lane_id() as usize;
    let at = schedule::block_coords(sreg::block_idx(), schedule::blocks(p.seq_q, WARPS), p.causal != 0);
    let (head, batch) = (at.head, at.batch);
    let row = at.query_block * WARPS + sreg::warp_id();
    if row >= p.seq_q {
        return;
    }
    let kv_head = p.kv_group.div(head);
    let d = HEAD_DIM as u64;
    let q_offset = ((batch as u64 * p.heads_q as u64 + head as u64) * p.seq_q as u64 + row as u64) * d;
    let kv_offset = (batch as u64 * p.heads_kv as u64 + kv_head as u64) * p.seq_kv as u64 * d;
    let q = (p.q + q_offset) as *const u8;
    let k = (p.k + kv_offset) as *const u8;
    let v = (p.v + kv_offset) as *const u8;
    let o = (p.o + 2 * q_offset) as *mut u16;

    // SAFETY: the first global memory access follows (see `BlockJob::new`).
    unsafe { grid_dep::wait() };
    // SAFETY: the scale arrays have heads_q / heads_kv entries (host-validated).
    let (q_scale, k_scale, v_scale) = unsafe {
        (
            *(p.q_scale as *const f32).add(head as usize),
            *(p.k_scale as *const f32).add(kv_head as usize),
            *(p.v_scale as *const f32).add(kv_head as usize),
        )
    };
    let score_scale_log2 = softmax::score_scale_log2(p.softmax_scale, q_scale, k_scale);

    let mut q_row = [0f32; DIM_CHUNKS];
    for (i, x) in q_row.iter_mut().enumerate() {
        // SAFETY: lane + 32 i < HEAD_DIM: inside this query row.
        *x = e4m3_to_f32(unsafe { *q.add(lane + 32 * i) });
    }

    let key_end = schedule::key_end(row, 1, p.seq_q, p.seq_kv, p.causal != 0) as usize;
    let mut m = RowMax::EMPTY;
    let mut l = 0f32;
    let mut acc = [0f32; DIM_CHUNKS];
    for key in 0..key_end {
        let mut dot = 0f32;
        for (i, x) in q_row.iter().enumerate() {
            // SAFETY: key < seq_kv and lane + 32 i < HEAD_DIM.
            dot += x * e4m3_to_f32(unsafe { *k.add(key * HEAD_DIM + lane + 32 * i) });
        }
        // SAFETY: the whole warp runs this loop (key_end is warp-uniform).
        let dot = unsafe { warp_sum(dot) };
        let s = dot * score_scale_log2;
        let (alpha, base) = m.update(s, 0.0, math::exp2);
        let prob = math::exp2(s - base);
        l = l * alpha + prob;
        for (i, a) in acc.iter_mut().enumerate() {
            // SAFETY: as for K.
            let v_val = e4m3_to_f32(unsafe { *v.add(key * HEAD_DIM + lane + 32 * i) });
            *a = *a * alpha + prob * v_val;
        }
    }

    // The next kernel may launch now (see `grid_dep`: after the key loop,
    // so its blocks do not crowd this grid's while it computes).
    grid_dep::launch_dependents();
    let out_scale = softmax::output_scale(l, v_scale, math::rcp);
    for (i, a) in acc.iter().enumerate() {
        // SAFETY: inside this output row.
        unsafe { *o.add(lane + 32 * i) = Out::one(a * out_scale) };
    }
}
