//! The kernel build itself and the launch geometry: every kernel of the
//! table is in every embedded PTX image, and the grid covers every query row
//! exactly once.

use kernels_gpu::cost::{MODEL_MAX_KEYS, MODEL_MIN_KEYS, cost, load, predicted_us};
use kernels_gpu::kernels::{
    FP8PV_LONG_MIN_CAUSAL_KEYS, FP8PV_LONG_MIN_KEYS, HEAD_DIMS, KERNELS, KernelInfo, OutputDtype, SHORT_KEYS,
    SPLIT_N64_PAIRS_KEYS, Variant, WGMMA_FP8PV_LONG_D128, Workload, find, recommended, select as select_kernel,
    split_fill_fifths, split_max_keys, split_wg_fills,
};
use kernels_gpu::layout::RowLayout;
use kernels_gpu::params::{KvTiles, TILE_KEYS, k_by_tensor_copy};
use kernels_gpu::schedule::{blocks, grid};
use kernels_gpu::tiles::{KvTilesSmemPlan, MmaSmemPlan, ONES_ROWS, SplitSmemPlan, WgmmaSmemPlan};
use sdpa::embedded::{Load, images, select};

#[test]
fn every_image_holds_every_entry_point() {
    let archs: Vec<_> = images().iter().map(|i| i.arch).collect();
    assert_eq!(archs, ["sm_90a", "sm_89"]);
    for img in images() {
        assert!(img.ptx.contains(&format!(".target {}", img.arch)), "{} PTX targets another arch", img.arch);
        for k in &KERNELS {
            let expected = !k.sm90a_only || img.arch == "sm_90a";
            for entry in std::iter::once(k.entry).chain(k.prepass.map(|p| p.entry)) {
                let present = img.ptx.contains(&format!(".entry {entry}("));
                assert_eq!(present, expected, "{}: entry {entry} present={present}", img.arch);
            }
        }
        assert!(!img.ptx.contains(".local"), "{}: PTX uses local memory", img.arch);
        if let Some(cubin) = img.cubin {
            assert_eq!(&cubin[..4], b"\x7fELF", "{}: cubin is not an ELF image", img.arch);
        }
    }
}

#[test]
fn the_mma_kernels_use_tensor_core_and_async_copy_instructions() {
    let needles = [
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "cp.async.cg.shared.global",
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
        "cvt.rn.f16x2.e4m3x2",
    ];
    let e4m3_mma = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32";
    for img in images() {
        for needle in needles {
            assert!(img.ptx.contains(needle), "{} PTX lacks {needle}", img.arch);
        }
        // sm_89 runs E4M3 mma.sync natively; on sm_90 ptxas would emulate it,
        // so the sm_90a image converts the operands itself (warp_tile).
        assert_eq!(img.ptx.contains(e4m3_mma), img.arch == "sm_89", "{}: {e4m3_mma}", img.arch);
    }
}

#[test]
fn the_wgmma_kernels_use_hopper_instructions_in_the_sm90a_image_only() {
    for img in images() {
        let hopper = img.ptx.contains("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3");
        assert_eq!(hopper, img.arch == "sm_90a", "{}", img.arch);
    }
}

#[test]
fn devices_get_the_right_image() {
    assert!(select((8, 0)).is_none());
    assert!(select((8, 6)).is_none());
    match select((9, 0)).unwrap() {
        Load::Cubin(i) | Load::Ptx(i) => assert_eq!(i.arch, "sm_90a"),
    }
    match select((8, 9)).unwrap() {
        Load::Cubin(i) | Load::Ptx(i) => assert_eq!(i.arch, "sm_89"),
    }
    // A newer device than any cubin gets portable PTX, never the arch-specific sm_90a.
    match select((12, 0)).unwrap() {
        Load::Ptx(i) => assert_eq!(i.arch, "sm_89"),
        Load::Cubin(i) => panic!("got a cubin for {}", i.arch),
    }
}

#[test]
fn the_table_has_every_variant_at_every_head_dim() {
    for v in Variant::ALL {
        assert_eq!(Variant::from_name(v.name()), Some(v));
        for d in HEAD_DIMS {
            let k = find(v, d).unwrap_or_else(|| panic!("no {} kernel for D={d}", v.name()));
            assert_eq!(k.tiles.head_dim, d);
            assert!(k.tiles.threads() <= 1024);
        }
    }
}

#[test]
fn only_long_fp8pv_problems_at_d128_select_the_192_key_kernel() {
    let long = |k: &KernelInfo| k.tiles == WGMMA_FP8PV_LONG_D128;
    for v in Variant::ALL {
        for d in HEAD_DIMS {
            for keys in [
                1,
                FP8PV_LONG_MIN_KEYS - 1,
                FP8PV_LONG_MIN_KEYS,
                FP8PV_LONG_MIN_CAUSAL_KEYS - 1,
                FP8PV_LONG_MIN_CAUSAL_KEYS,
            ] {
                for (causal, output) in [false, true].into_iter().flat_map(|c| OutputDtype::ALL.map(|o| (c, o))) {
                    let k = select_kernel(v, d, 512, keys, causal, output).expect("a kernel");
                    assert_eq!((k.variant, k.tiles.head_dim, k.output), (v, d, output));
                    let min_keys = if causal { FP8PV_LONG_MIN_CAUSAL_KEYS } else { FP8PV_LONG_MIN_KEYS };
                    let expected = v == Variant::WgmmaFp8Pv && d == 128 && keys >= min_keys;
                    assert_eq!(long(k), expected, "{} D={d} keys={keys} causal={causal}", v.name());
                }
            }
        }
    }
}

#[test]
fn only_even_split_n64_d64_lengths_in_range_select_the_pair_row_kernel() {
    let (lo, hi) = (*SPLIT_N64_PAIRS_KEYS.start(), *SPLIT_N64_PAIRS_KEYS.end());
    let paired: Vec<&KernelInfo> = KERNELS.iter().filter(|k| k.pair_rows).collect();
    assert_eq!(paired.len(), 2, "one pair-row kernel and its bf16 twin");
    for v in Variant::ALL {
        for d in HEAD_DIMS {
            let lengths = [1, 2, 255, 256, lo - 1, lo, lo + 1, 384, 447, 448, hi - 1, hi, hi + 1, hi + 2, 4096];
            for (queries, keys) in [1, 200, 333, 512].into_iter().flat_map(|q| lengths.map(|k| (q, k))) {
                for (causal, output) in [false, true].into_iter().flat_map(|c| OutputDtype::ALL.map(|o| (c, o))) {
                    let k = select_kernel(v, d, queries, keys, causal, output).expect("a kernel");
                    assert_eq!((k.variant, k.tiles.head_dim, k.output), (v, d, output));
                    let even = queries % 2 == 0 && keys % 2 == 0;
                    let expected = v == Variant::SplitN64 && d == 64 && even && (lo..=hi).contains(&keys);
                    let at = format!("{} D={d} queries={queries} keys={keys} causal={causal}", v.name());
                    assert_eq!(k.pair_rows, expected, "{at}");
                    assert!(k.runs_on(queries, keys), "{} runs on {at}", k.entry);
                }
            }
        }
    }
    for k in paired {
        assert!(k.runs_on(512, 512) && k.runs_on(2, 2), "{}", k.entry);
        assert!(!k.runs_on(512, 511) && !k.runs_on(511, 512) && !k.runs_on(1, 1), "{}", k.entry);
        // The same kernel as the plain one but for its copies.
        let plain = find(Variant::SplitN64, 64).expect("split-n64 D = 64").writing(k.output);
        assert!(!plain.pair_rows);
        assert_eq!(*k, KernelInfo { entry: k.entry, pair_rows: true, ..*plain });
    }
}

#[test]
fn every_f16_kernel_has_a_bf16_twin_that_differs_only_in_its_store() {
    let (f16, bf16): (Vec<&'static KernelInfo>, Vec<&'static KernelInfo>) =
        KERNELS.iter().partition(|k| k.output == OutputDtype::F16);
    assert_eq!(f16.len(), bf16.len());
    for (&a, &b) in f16.iter().zip(&bf16) {
        assert_eq!(b.entry, format!("{}_bf16", a.entry));
        assert_eq!(*b, KernelInfo { output: OutputDtype::Bf16, entry: b.entry, ..*a });
        assert_eq!(a.writing(OutputDtype::Bf16), b);
        assert_eq!(b.writing(OutputDtype::F16), a);
        assert_eq!(a.writing(OutputDtype::F16), a);
    }
    for d in OutputDtype::ALL {
        assert_eq!(OutputDtype::from_name(d.name()), Some(d));
    }
    assert_eq!(OutputDtype::from_name("f32"), None);
    assert_eq!(OutputDtype::F16.max(), half::f16::MAX.to_f32());
    assert_eq!(OutputDtype::Bf16.max(), half::bf16::MAX.to_f32());
}

#[test]
fn grids_cover_every_query_row_once() {
    for k in &KERNELS {
        for seq_q in [1u32, 2, 3, 63, 64, 65, 127, 128, 129, 1000, 4096] {
            for causal in [false, true] {
                let (x, y, z) = grid(k.tiles.block_m, 3, 5, seq_q, causal);
                let query_blocks = if causal { z } else { x };
                assert_eq!(if causal { (x, y) } else { (y, z) }, (5, 3));
                assert!(query_blocks * k.tiles.block_m >= seq_q, "{} leaves rows uncovered at Sq={seq_q}", k.entry);
                assert!(
                    (query_blocks - 1) * k.tiles.block_m < seq_q,
                    "{} launches an empty block at Sq={seq_q}",
                    k.entry
                );
                assert_eq!(query_blocks, blocks(seq_q, k.tiles.block_m));
            }
        }
    }
}

#[test]
fn wgmma_shared_memory_plans_are_aligned_and_match_the_table() {
    for k in KERNELS.iter().filter(|k| k.variant.runs_wgmma_body()) {
        let plan = WgmmaSmemPlan::new(k.tiles, k.variant.pv_e4m3());
        for off in [plan.q, plan.k, plan.vt, plan.k_stage(1, k.tiles), plan.vt_stage(1, k.tiles)] {
            assert_eq!(off % 128, 0, "{}: offset {off} is not core-matrix aligned", k.entry);
        }
        // K's stages may take swizzled tensor copies: 1024-byte aligned.
        for stage in 0..k.tiles.stages {
            assert_eq!(plan.k_stage(stage, k.tiles) % 1024, 0, "{}: K stage {stage}", k.entry);
        }
        // Each `Vt` stage's rows of ones are the 8-row group that `P·V`'s
        // descriptor (N = head_dim + 8) reads after the tile's head_dim rows,
        // and end before the next stage.
        let t = k.tiles;
        let vt_rows = RowLayout::CoreMatrices { row_bytes: plan.vt_key_bytes * t.block_n };
        // Each stage takes its key block's prepass tiles (one, or three for
        // `wgmma-fp8pv` at D = 128) by one bulk copy, which fills it up to
        // its rows of ones (none in E4M3 stages: `wgmma-fp8pv` sums P in f32).
        let tile_bytes = KvTiles::new(t.head_dim, 1, 1, 64, k.variant.pv_e4m3()).vt_tile_bytes();
        let tiles = t.block_n / TILE_KEYS;
        assert!(tiles == 1 || plan.sum_rows == 0, "{}: rows of ones follow a single tile only", k.entry);
        let ones_bytes = vt_rows.offset(plan.sum_rows, 0);
        assert_eq!(
            plan.vt_stage_bytes(t),
            tiles * tile_bytes + ones_bytes,
            "{}: a Vt stage is its block's tiles and their ones",
            k.entry
        );
        for stage in (0..t.stages).filter(|_| plan.sum_rows > 0) {
            let ones = plan.ones_rows(stage, t);
            assert_eq!(ones, plan.vt_stage(stage, t) + vt_rows.offset(t.head_dim, 0), "{}: stage {stage}", k.entry);
            assert_eq!(ones + vt_rows.offset(ONES_ROWS, 0), plan.vt_stage(stage, t) + plan.vt_stage_bytes(t));
        }
        let last_tile_end = plan.vt_stage(t.stages - 1, t) + plan.vt_stage_bytes(t);
        assert!(last_tile_end <= plan.barriers, "{}: barriers overlap the tiles", k.entry);
        assert_eq!(plan.barriers % 8, 0, "{}: barriers must be 8-byte aligned", k.entry);
        assert!(plan.full_barrier(k.tiles.stages - 1) < plan.empty_barrier(0, k.tiles));
        assert_eq!(
            plan.empty_barrier(k.tiles.stages - 1, k.tiles) + 8,
            plan.total,
            "{}: barriers end the plan",
            k.entry
        );
        assert_eq!(plan.total, k.smem_bytes);
        assert!(plan.total <= 227 * 1024);
    }
}

#[test]
fn prepass_shared_memory_holds_the_rows_then_both_images() {
    for (k, pre) in KERNELS.iter().filter_map(|k| k.prepass.map(|p| (k, p))) {
        let d = k.tiles.head_dim;
        let plan = KvTilesSmemPlan::new(d);
        let tiles = KvTiles::new(d, 1, 1, 64, k.variant.pv_e4m3());
        // K rows then V rows in (a K tile's bytes each), the `Vt` image
        // over both (f16) or over the K rows (E4M3), then the K image (none
        // where K comes by tensor copies) and the barrier.
        assert_eq!(plan.v_rows - plan.input, tiles.k_tile_bytes(), "D = {d}: K rows");
        assert_eq!(plan.k_image - plan.v_rows, tiles.k_tile_bytes(), "D = {d}: V rows");
        let image = if k.variant.pv_e4m3() { plan.v_rows } else { plan.k_image } - plan.input;
        assert_eq!(image, tiles.vt_tile_bytes(), "{}: the Vt image fills the input", k.entry);
        let k_image = if k_by_tensor_copy(d) { 0 } else { tiles.k_tile_bytes() };
        assert_eq!(plan.barrier - plan.k_image, k_image, "D = {d}: K image");
        for off in [plan.input, plan.v_rows, plan.k_image] {
            assert_eq!(off % 16, 0, "D = {d}: bulk copies need 16-byte alignment");
        }
        assert_eq!(plan.barrier % 8, 0);
        assert_eq!((plan.total, pre.smem_bytes), (plan.barrier + 8, plan.total), "D = {d}");
    }
}

#[test]
fn mma_shared_memory_plans_are_aligned_and_match_the_table() {
    for k in KERNELS.iter().filter(|k| k.variant == Variant::Mma) {
        let plan = MmaSmemPlan::new(k.tiles);
        for off in [plan.q, plan.k, plan.v, plan.v_f16, plan.fp8_row, plan.f16_row] {
            assert_eq!(off % 16, 0, "{}: offset {off} breaks 16-byte cp.async/ldmatrix alignment", k.entry);
        }
        // 8 consecutive rows of an ldmatrix must start in distinct 16-byte
        // bank groups: row strides of 16 (mod 128) or 80 (mod 128) do that.
        for row in [plan.fp8_row, plan.f16_row] {
            let starts: std::collections::HashSet<u32> = (0..8).map(|r| (r * row / 16) % 8).collect();
            assert_eq!(starts.len(), 8, "{}: row stride {row} makes ldmatrix bank conflicts", k.entry);
        }
        assert_eq!(plan.total, k.smem_bytes);
        assert!(plan.total <= 227 * 1024);
    }
}

#[test]
fn split_shared_memory_plans_are_aligned_and_hold_the_merge() {
    // split, split-wg and split-n64 at both head dims and split-n64's
    // pair-row kernel at D = 64, writing f16 and bf16.
    assert_eq!(KERNELS.iter().filter(|k| k.variant.runs_split_body()).count(), 14);
    for k in KERNELS.iter().filter(|k| k.variant.runs_split_body()) {
        let t = k.tiles;
        let apart =
            k.variant == Variant::SplitN64 && t.head_dim == 64 && kernels_gpu::kernels::SPLIT_N64_D64_EXCHANGE_APART;
        let padded = SplitSmemPlan::new(t, apart);
        assert_eq!(padded.total, k.smem_bytes, "{}: the launch is sized by the padded plan", k.entry);
        // The swizzled plan (tensor copies, sm_90a) runs in the same launch.
        let swizzled = SplitSmemPlan::new_swizzled(t, apart);
        assert!(swizzled.total <= k.smem_bytes, "{}: the swizzled plan outgrows the launch", k.entry);
        for s in 0..t.splits {
            for stage in 0..t.stages {
                for tile in [swizzled.q, swizzled.k_stage(s, stage, t.block_n), swizzled.v_stage(s, stage, t.block_n)] {
                    assert_eq!(tile % 1024, 0, "{}: a swizzled tile at {tile} is not 1024-byte aligned", k.entry);
                }
            }
        }
        for plan in [padded, swizzled] {
            check_split_plan(k, plan);
        }
    }
}

/// The layout rules every `split` plan keeps (see the test above).
fn check_split_plan(k: &KernelInfo, plan: SplitSmemPlan) {
    let t = k.tiles;
    for off in [plan.q, plan.stats, plan.kv, plan.group_bytes, plan.fp8_row] {
        assert_eq!(off % 16, 0, "{}: offset {off} breaks 16-byte alignment", k.entry);
    }
    assert_eq!(t.warps % t.splits, 0, "{}: whole row warps per key group", k.entry);
    assert_eq!(t.block_m, 16 * t.warps / t.splits, "{}: 16 rows per row warp", k.entry);
    assert!(plan.stats + 8 * t.splits * t.block_m <= plan.barriers, "{}: stats overlap the barriers", k.entry);
    assert_eq!(plan.barriers % 8, 0, "{}: barriers must be 8-byte aligned", k.entry);
    let last_barrier = plan.done_barrier(t.splits - 1);
    assert!(last_barrier + 8 <= plan.kv, "{}: barriers overlap the K/V tiles", k.entry);
    assert!(plan.q_barrier() < plan.full_barrier(0, 0), "{}: Q's barrier is its own", k.entry);
    // Every barrier of every group ("full", "V full", "empty", "done") its own 8 bytes.
    let mut offsets: Vec<u32> = (0..t.splits)
        .flat_map(|g| {
            let per_stage = (0..t.stages)
                .flat_map(move |s| [plan.full_barrier(g, s), plan.v_full_barrier(g, s), plan.empty_barrier(g, s)]);
            per_stage.chain([plan.done_barrier(g)])
        })
        .collect();
    offsets.sort_unstable();
    assert!(offsets.windows(2).all(|w| w[1] - w[0] >= 8), "{}: two barriers share bytes", k.entry);
    for g in 1..t.splits {
        let previous_end = plan.v_stage(g - 1, t.stages - 1, t.block_n) + t.block_n * plan.fp8_row;
        assert!(previous_end <= plan.k_stage(g, 0, t.block_n), "{}: group {} overlaps group {g}", k.entry, g - 1);
    }
    let slots = t.block_m * 4 * t.head_dim;
    assert!(slots <= plan.exchange_stride, "{}: a group's exchange slots overflow their area", k.entry);
    assert_eq!(plan.exchange % 16, 0, "{}: exchange slots must be 16-byte aligned", k.entry);
    assert!(plan.kv + t.splits * plan.group_bytes <= plan.total, "{}: K/V past the end", k.entry);
    assert!(plan.exchange + t.splits * plan.exchange_stride <= plan.total, "{}: exchange past the end", k.entry);
    if plan.exchange == plan.kv {
        assert_eq!(plan.exchange_stride, plan.group_bytes, "{}: in-tile slots follow the groups' areas", k.entry);
    } else {
        assert!(plan.kv + t.splits * plan.group_bytes <= plan.exchange, "{}: the exchange overlaps K/V", k.entry);
    }
}

/// Every shape whose variants were timed against each other on the H100
/// (graph mode, up to 2048 keys), each from the latest run that timed it,
/// with the variants within 2% of the fastest there (about the run-to-run
/// spread of these short shapes), fastest first (`B,H,S,D[,causal]`). The
/// cost model was fitted on runs 116, 117 and 120 (`split-n64` at D = 64
/// on run 160's timings of run 133's 45 shapes, and at D = 128 on run 126);
/// runs 121, 125 and 127's new shapes were predicted out of sample first
/// (results/2026-11-25-predictions-run121.md, -run125.md, -run127.md). Run
/// 160 re-timed every D = 64 shape of this table on the kernels of b94c587
/// (stage 109, results/2026-11-26-predictions-run160.md), and run 198 the
/// 35 shapes where `wgmma` was within 0.93-1.08x of the best other variant,
/// on the kernels of ab123f4 (stage 125r's lean `wgmma`; `cost::WGMMA_LEAN`,
/// results/2026-11-26-predictions-run197.md), run 205 the same 35 on
/// the kernels of 4128ada (stage 132c's `wgmma` D = 64), run 210 on
/// those of d037d81 (stage 135's row sums) and run 212 on those of 02f39cf
/// (stage 138's fast maxima), and run 214 the 15 shapes timed before them
/// where `wgmma` was within 12% of the winner or the model's pick changed
/// with `cost::WGMMA_D64_ROW_SUMS_AND_FAST_MAX`. Shapes of the
/// runs before 124 were timed without `split-n64`; none of them is a shape
/// where the model now picks it. Printed by `scripts/check-picks.py --rust`
/// from the runs' JSON files (results/2026-11-25-h100-run{116,117,120,121,
/// 124,125,126,127,133}-*/ and run125-record/oos/, then
/// results/2026-11-26-h100-run{160-refit,198-picks,205-checks,210-chains-picks,
/// 212-split-lazy,214-picks}/).
const MEASURED_WINNERS: [(&str, &[Variant]); 221] = [
    // results/2026-11-26-h100-run160-refit/fit.json
    ("2,8,256,64", &[Variant::SplitN64]),
    ("1,8,512,64", &[Variant::SplitN64]),
    ("4,16,2048,64", &[Variant::Wgmma]),
    ("1,8,1024,64", &[Variant::SplitWg]),
    ("4,16,1024,64", &[Variant::Wgmma]),
    ("1,8,1024,64,causal", &[Variant::SplitN64]),
    ("1,8,2048,64,causal", &[Variant::SplitWg]),
    ("2,16,1024,64", &[Variant::Wgmma]),
    ("1,4,2048,64", &[Variant::SplitWg]),
    ("2,4,512,64", &[Variant::SplitN64]),
    ("8,16,256,64", &[Variant::SplitWg]),
    ("8,16,512,64", &[Variant::Wgmma]),
    ("16,16,256,64", &[Variant::SplitWg]),
    ("4,16,768,64", &[Variant::Wgmma]),
    ("2,8,512,64", &[Variant::SplitWg]),
    ("1,8,768,64", &[Variant::SplitWg]),
    ("4,8,512,64", &[Variant::SplitWg]),
    ("2,16,512,64", &[Variant::SplitWg]),
    ("4,16,384,64", &[Variant::SplitWg]),
    ("8,8,128,64", &[Variant::SplitWg]),
    ("4,8,256,64", &[Variant::SplitWg]),
    ("3,8,256,64", &[Variant::SplitWg]),
    ("1,6,1024,64", &[Variant::SplitWg]),
    ("2,2,2048,64", &[Variant::SplitWg]),
    ("1,4,1024,64", &[Variant::SplitN64]),
    ("3,8,512,64", &[Variant::SplitWg]),
    ("1,16,512,64", &[Variant::SplitWg]),
    ("2,12,512,64", &[Variant::SplitWg]),
    ("6,8,256,64", &[Variant::SplitWg]),
    ("2,16,256,64", &[Variant::SplitWg]),
    ("1,24,512,64", &[Variant::SplitWg]),
    ("5,8,256,64", &[Variant::SplitWg]),
    ("1,4,1536,64", &[Variant::SplitWg]),
    ("2,8,1024,64,causal", &[Variant::SplitWg]),
    ("1,12,512,64", &[Variant::SplitWg]),
    ("2,12,256,64", &[Variant::SplitWg]),
    ("12,8,256,64", &[Variant::SplitWg]),
    ("2,4,1024,64", &[Variant::SplitWg]),
    ("32,16,128,64", &[Variant::Mma]),
    ("16,8,320,64", &[Variant::SplitWg]),
    ("1,33,512,64", &[Variant::SplitWg]),
    ("2,12,1024,64,causal", &[Variant::SplitWg]),
    ("1,6,1280,64", &[Variant::SplitWg]),
    ("2,8,384,64", &[Variant::SplitWg]),
    ("2,20,640,64", &[Variant::Wgmma]),
    ("3,12,768,64", &[Variant::Wgmma]),
    ("64,16,128,64", &[Variant::Mma]),
    ("2,16,2048,64,causal", &[Variant::Wgmma]),
    ("3,8,384,64", &[Variant::SplitWg]),
    ("6,12,256,64", &[Variant::SplitWg]),
    ("1,48,640,64", &[Variant::Wgmma]),
    ("2,6,1536,64", &[Variant::Wgmma]),
    ("1,3,2048,64", &[Variant::SplitWg]),
    ("20,16,192,64", &[Variant::Mma, Variant::SplitWg]),
    ("48,16,128,64", &[Variant::Mma]),
    ("3,8,1024,64,causal", &[Variant::SplitWg]),
    ("5,12,320,64", &[Variant::SplitWg]),
    ("1,1,1,64", &[Variant::Split]),
    ("1,8,384,64", &[Variant::SplitN64]),
    ("1,4,512,64", &[Variant::SplitN64]),
    ("2,4,256,64", &[Variant::SplitN64]),
    ("1,8,256,64", &[Variant::SplitN64]),
    ("1,2,2048,64", &[Variant::SplitN64]),
    ("1,16,256,64", &[Variant::SplitN64]),
    ("1,8,640,64", &[Variant::SplitWg]),
    ("1,4,768,64", &[Variant::SplitN64]),
    ("2,2,1024,64", &[Variant::SplitN64]),
    ("1,12,384,64", &[Variant::SplitWg]),
    ("4,4,256,64", &[Variant::SplitN64]),
    ("1,8,512,64,causal", &[Variant::SplitN64]),
    ("1,16,512,64,causal", &[Variant::Split]),
    ("1,6,768,64", &[Variant::SplitWg]),
    ("2,6,512,64", &[Variant::SplitWg]),
    ("1,10,512,64", &[Variant::SplitWg]),
    ("3,4,512,64", &[Variant::SplitWg]),
    ("1,8,128,64", &[Variant::SplitN64]),
    ("1,2,1024,64", &[Variant::SplitN64]),
    ("1,6,512,64", &[Variant::SplitN64]),
    ("1,2,1536,64", &[Variant::SplitN64]),
    ("1,3,1024,64", &[Variant::SplitN64]),
    ("2,3,768,64", &[Variant::SplitWg]),
    ("1,5,1024,64", &[Variant::SplitWg]),
    ("1,8,896,64", &[Variant::SplitWg]),
    ("3,2,1024,64", &[Variant::SplitWg]),
    ("1,12,256,64", &[Variant::SplitN64]),
    ("1,4,640,64", &[Variant::SplitN64]),
    ("1,1,2048,64", &[Variant::SplitN64]),
    ("2,2,768,64", &[Variant::SplitN64]),
    ("1,16,384,64", &[Variant::SplitWg]),
    ("1,6,2048,64,causal", &[Variant::Split]),
    ("1,4,1536,64,causal", &[Variant::SplitN64]),
    ("2,4,768,64,causal", &[Variant::SplitN64]),
    ("1,12,640,64", &[Variant::SplitWg]),
    ("4,2,512,64", &[Variant::SplitN64]),
    ("1,7,512,64", &[Variant::SplitN64]),
    ("1,24,256,64", &[Variant::SplitWg]),
    ("2,6,256,64", &[Variant::SplitN64]),
    ("1,9,512,64", &[Variant::SplitWg]),
    ("1,3,1536,64", &[Variant::SplitWg]),
    ("2,5,512,64", &[Variant::SplitWg]),
    ("1,20,384,64", &[Variant::SplitWg]),
    ("1,11,768,64", &[Variant::SplitWg]),
    ("2,8,640,64,causal", &[Variant::Split]),
    ("1,5,2048,64", &[Variant::Wgmma]),
    ("3,6,384,64", &[Variant::SplitWg]),
    // results/2026-11-26-h100-run212-split-lazy/picks.json
    ("1,8,1536,64", &[Variant::Wgmma]),
    ("1,8,2048,64", &[Variant::Wgmma]),
    ("1,16,1024,64", &[Variant::Wgmma]),
    ("1,12,1024,64", &[Variant::Wgmma]),
    ("2,8,2048,64,causal", &[Variant::Wgmma]),
    ("1,8,1536,128", &[Variant::Wgmma]),
    ("2,8,1024,128", &[Variant::Wgmma]),
    ("8,16,384,128", &[Variant::Wgmma, Variant::SplitWg]),
    ("1,6,1536,128", &[Variant::Wgmma]),
    ("1,12,768,64", &[Variant::Wgmma]),
    ("2,6,1024,64", &[Variant::Wgmma]),
    ("1,10,1024,64", &[Variant::Wgmma]),
    ("1,8,1280,128", &[Variant::Wgmma]),
    ("3,16,384,128", &[Variant::SplitN64]),
    ("3,4,1024,64", &[Variant::Wgmma]),
    ("12,16,384,64", &[Variant::Wgmma]),
    ("6,16,448,64", &[Variant::Wgmma]),
    ("2,12,768,64", &[Variant::Wgmma]),
    ("1,14,1024,64", &[Variant::Wgmma]),
    ("1,20,1024,64", &[Variant::Wgmma]),
    ("8,8,1024,64,causal", &[Variant::Wgmma]),
    ("1,60,512,64", &[Variant::Wgmma]),
    ("1,72,512,64", &[Variant::Wgmma]),
    ("1,18,896,64", &[Variant::SplitWg, Variant::Wgmma]),
    ("2,8,1024,64", &[Variant::Wgmma]),
    ("4,16,448,64", &[Variant::Wgmma]),
    ("10,16,400,64", &[Variant::Wgmma]),
    ("12,16,320,128", &[Variant::Wgmma, Variant::Mma, Variant::SplitN64]),
    ("5,16,512,128", &[Variant::Wgmma]),
    ("4,12,1024,64,causal", &[Variant::Wgmma]),
    ("1,24,1024,64", &[Variant::Wgmma]),
    ("1,32,768,64", &[Variant::Wgmma]),
    ("2,32,1024,64,causal", &[Variant::Wgmma]),
    ("1,12,1024,128", &[Variant::Wgmma, Variant::SplitN64]),
    ("2,12,640,128", &[Variant::SplitWg]),
    // results/2026-11-25-h100-run126-split-n64-d128/fit.json
    ("1,8,512,128", &[Variant::SplitN64]),
    ("1,8,1024,128", &[Variant::SplitWg]),
    ("1,8,2048,128,causal", &[Variant::SplitWg]),
    ("1,4,1024,128", &[Variant::SplitN64]),
    ("1,8,768,128", &[Variant::SplitWg]),
    ("4,8,256,128", &[Variant::SplitWg]),
    ("2,8,512,128", &[Variant::SplitWg]),
    ("2,8,256,128", &[Variant::SplitN64]),
    ("3,8,512,128", &[Variant::SplitN64]),
    ("1,12,512,128", &[Variant::SplitWg]),
    ("5,8,256,128", &[Variant::SplitN64]),
    ("2,4,1024,128", &[Variant::SplitWg]),
    ("1,8,1536,128,causal", &[Variant::SplitWg, Variant::SplitN64]),
    ("1,16,1024,128,causal", &[Variant::SplitWg]),
    ("2,10,512,128", &[Variant::SplitN64]),
    ("1,20,512,128", &[Variant::SplitN64]),
    ("4,12,256,128", &[Variant::SplitN64]),
    ("1,6,2048,128", &[Variant::Wgmma]),
    ("1,2,1536,128", &[Variant::SplitN64]),
    ("1,8,384,128", &[Variant::SplitN64]),
    ("1,4,512,128", &[Variant::SplitN64]),
    ("1,2,1024,128", &[Variant::SplitN64]),
    ("1,4,768,128", &[Variant::SplitN64]),
    ("1,16,256,128", &[Variant::SplitN64]),
    ("1,2,2048,128", &[Variant::SplitN64]),
    ("1,8,256,128", &[Variant::SplitN64]),
    ("2,4,512,128", &[Variant::SplitN64]),
    ("1,6,1024,128", &[Variant::SplitWg]),
    ("1,4,2048,128,causal", &[Variant::SplitN64]),
    ("1,16,512,128", &[Variant::SplitWg]),
    ("1,1,1024,128", &[Variant::SplitN64]),
    // results/2026-11-25-h100-run127-oos/remeasure.json
    ("1,8,2048,128", &[Variant::Wgmma]),
    ("4,16,1024,128", &[Variant::Wgmma]),
    ("4,16,512,128", &[Variant::SplitWg]),
    ("8,16,512,128", &[Variant::Wgmma]),
    ("8,16,256,128", &[Variant::SplitWg, Variant::SplitN64]),
    ("2,12,768,128", &[Variant::Wgmma]),
    ("2,16,2048,128,causal", &[Variant::Wgmma]),
    ("4,8,512,128", &[Variant::SplitWg]),
    ("6,16,256,128", &[Variant::SplitWg]),
    ("10,16,256,128", &[Variant::SplitWg, Variant::SplitN64]),
    ("16,16,256,128", &[Variant::SplitN64, Variant::Mma]),
    ("3,16,512,128", &[Variant::SplitWg]),
    ("8,12,256,128", &[Variant::SplitWg]),
    ("3,10,1024,128", &[Variant::Wgmma]),
    ("4,24,256,128", &[Variant::SplitWg]),
    ("2,20,384,128", &[Variant::SplitWg]),
    ("6,8,768,128", &[Variant::Wgmma]),
    ("1,28,512,128", &[Variant::SplitWg]),
    ("24,16,128,128", &[Variant::Mma]),
    // results/2026-11-26-h100-run214-picks/picks.json
    ("1,12,768,128", &[Variant::SplitN64]),
    ("2,6,768,128", &[Variant::SplitN64]),
    ("4,8,1024,64,causal", &[Variant::Wgmma]),
    ("1,40,512,64", &[Variant::SplitWg, Variant::Wgmma]),
    ("5,8,512,64", &[Variant::SplitWg, Variant::Wgmma]),
    ("2,10,640,64", &[Variant::SplitWg]),
    ("1,20,768,64", &[Variant::SplitWg]),
    ("2,8,1536,64,causal", &[Variant::SplitWg]),
    ("3,6,768,64", &[Variant::SplitWg, Variant::Wgmma]),
    ("24,16,320,64", &[Variant::Wgmma]),
    ("6,16,384,128", &[Variant::SplitN64]),
    ("2,10,768,64", &[Variant::SplitWg]),
    ("2,24,512,64", &[Variant::SplitWg]),
    ("1,16,1536,64,causal", &[Variant::SplitWg]),
    ("1,10,2048,128,causal", &[Variant::Wgmma]),
    // results/2026-11-25-h100-run125-record/oos/oos.json
    ("1,6,512,128", &[Variant::SplitN64]),
    ("1,5,1024,128", &[Variant::SplitWg]),
    ("2,6,512,128", &[Variant::SplitWg]),
    ("1,3,1536,128", &[Variant::SplitWg]),
    // results/2026-11-25-h100-run127-oos/oos.json
    ("1,10,512,128", &[Variant::SplitWg]),
    ("2,3,1024,128", &[Variant::SplitWg]),
    ("1,5,768,128", &[Variant::SplitN64]),
    ("3,6,512,128", &[Variant::SplitN64]),
    ("1,24,384,128", &[Variant::SplitN64]),
    ("2,12,384,128", &[Variant::SplitN64]),
    ("1,3,2048,128", &[Variant::SplitWg]),
    ("1,6,1536,128,causal", &[Variant::SplitN64]),
    ("2,8,768,128,causal", &[Variant::SplitWg]),
    ("1,14,640,128", &[Variant::SplitN64]),
    ("4,6,384,128", &[Variant::SplitN64]),
    ("2,16,256,128", &[Variant::SplitWg]),
];
const KNOWN_MISSES: [&str; 9] = [
    "1,12,768,64",
    "4,8,1024,64,causal",
    "2,8,1536,64,causal",
    "2,24,512,64",
    "1,16,1536,64,causal",
    "1,16,512,64,causal",
    "1,6,2048,64,causal",
    "1,6,1536,128,causal",
    "2,8,640,64,causal",
];

fn workload(shape: &str) -> Workload {
    let parts: Vec<&str> = shape.split(',').collect();
    let dims: [usize; 4] = core::array::from_fn(|i| parts[i].parse().expect("a number"));
    Workload::new(dims, dims, parts.len() == 5)
}

#[test]
fn the_sm90a_recommendation_is_a_fastest_variant_at_every_measured_shape_but_the_known_misses() {
    // The H100 and the H200 have 132 SMs.
    for (shape, winners) in MEASURED_WINNERS {
        let pick = recommended(&workload(shape), true, 132);
        if KNOWN_MISSES.contains(&shape) {
            assert!(!winners.contains(&pick), "{shape}: a known miss is now right: update KNOWN_MISSES");
        } else {
            assert!(winners.contains(&pick), "{shape}: recommended {pick:?}, measured fastest {winners:?}");
        }
    }
}

#[test]
fn the_cost_model_covers_the_sm90a_kernels_with_their_ptxas_occupancy() {
    // Blocks per SM as budgets.toml holds them for sm_90a (what ptxas allocates).
    let budgets =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../budgets.toml")).expect("budgets.toml");
    // Not fitted: `naive`, and the opt-in lower-precision variants; the
    // model never picks them.
    let unfitted = |k: &KernelInfo| k.variant == Variant::Naive || k.variant.lower_precision();
    for k in KERNELS.iter().filter(|k| !unfitted(k)) {
        let c = cost(k.variant, k.tiles.head_dim).unwrap_or_else(|| panic!("{}: no cost", k.entry));
        let section = budgets.split(&format!("[{}]", k.entry)).nth(1).expect("a budget section");
        let line = section.lines().find(|l| l.starts_with("sm_90a")).expect("an sm_90a budget");
        assert!(line.contains(&format!("min_blocks_per_sm = {}", c.blocks_per_sm)), "{}: {line}", k.entry);
    }
    for k in KERNELS.iter().filter(|k| unfitted(k)) {
        assert_eq!(cost(k.variant, k.tiles.head_dim), None, "{}", k.entry);
    }
}

#[test]
fn the_cost_model_loads_the_busiest_sm_in_rounds_of_concurrent_blocks() {
    // One block per SM or fewer: one round of one block.
    assert_eq!(load(1, 132, 2), 1.0);
    assert_eq!(load(132, 132, 2), 1.0);
    // Two blocks on the busiest SM run together: 1.44 of one.
    assert!((load(133, 132, 2) - 1.44).abs() < 1e-6);
    // Three with room for two: a full round, then one alone.
    assert!((load(3 * 132, 132, 2) - 2.44).abs() < 1e-6);
    // Room for one: rounds of one.
    assert_eq!(load(3 * 132, 132, 1), 3.0);
    // Causal masking halves the blocks that count (no gain while they fit
    // one round); more keys take longer.
    let t = |w: &Workload| predicted_us(w, Variant::SplitWg, 132).unwrap();
    let w = workload("1,8,1024,64");
    assert_eq!(t(&Workload { causal: true, ..w }), t(&w));
    let many = workload("4,16,1024,64");
    assert!(t(&Workload { causal: true, ..many }) < t(&many));
    assert!(t(&w) < t(&Workload { seq_kv: 2048, ..w }));
    assert_eq!(predicted_us(&workload("1,8,1024,96"), Variant::Split, 132), None);
}

#[test]
fn the_split_family_is_split_wg_where_its_64_row_blocks_fill_two_thirds_of_the_sms() {
    // 2/3 of 132 SMs is 88 blocks.
    assert!(split_wg_fills(88, 132) && !split_wg_fills(87, 132));
    assert_eq!(workload("1,8,1024,64").split_wg_blocks(), 128);
    // Causal masking halves the blocks.
    assert_eq!(workload("1,8,1024,64,causal").split_wg_blocks(), 64);
    // The family rule decides below the model's keys: one key, one block: split.
    assert_eq!(MODEL_MIN_KEYS, 128);
    assert_eq!(recommended(&workload("1,1,1,64"), true, 132), Variant::Split);
    assert_eq!(recommended(&workload("1,1,1,128"), true, 132), Variant::Split);
    assert_eq!(recommended(&workload("64,16,127,64"), true, 132), Variant::SplitWg);
}

#[test]
fn split_n64_is_picked_where_splits_blocks_fit_one_wave_with_enough_keys() {
    // H100 runs 124 and 133: split-n64 fastest at every shape of <= 128 split
    // blocks and 256+ keys, e.g. the mission shape (1,8,512,64).
    for shape in ["1,8,512,64", "1,4,1024,64", "1,8,1024,64,causal", "1,8,384,64", "1,2,2048,64"] {
        assert_eq!(recommended(&workload(shape), true, 132), Variant::SplitN64, "{shape}");
    }
    // More blocks than SMs at one block per SM: split-wg.
    assert_eq!(recommended(&workload("1,8,1024,64"), true, 132), Variant::SplitWg);
    assert_eq!(recommended(&workload("1,8,2048,64,causal"), true, 132), Variant::SplitWg);
    // 256 keys too since stage 85 (run 133: (2,8,256,64) 3.57 vs split 3.84 us).
    assert_eq!(recommended(&workload("2,8,256,64"), true, 132), Variant::SplitN64);
    // At D = 128 too (two blocks per SM there; run 126: 0.76-0.93x split's time).
    assert_eq!(recommended(&workload("1,8,512,128"), true, 132), Variant::SplitN64);
}

#[test]
fn past_the_models_keys_the_split_family_takes_few_blocks_and_wgmma_the_rest() {
    assert_eq!(MODEL_MAX_KEYS, 2048);
    // D = 64: 3/5 of 132 SMs is 79.2 wgmma blocks of 128 rows.
    assert_eq!(split_fill_fifths(64), 3);
    assert_eq!(split_fill_fifths(128), 2);
    // (Causal, 4096 keys: 2048 a block on average, the most split takes.)
    let edge = Workload { seq_kv: 4096, ..workload("1,158,128,64,causal") };
    assert_eq!((edge.wgmma_blocks(), edge.split_keys()), (79, 2048));
    assert_eq!(recommended(&edge, true, 132), Variant::SplitWg);
    let more = Workload { heads_q: 160, ..edge };
    assert_eq!(more.wgmma_blocks(), 80);
    assert_eq!(recommended(&more, true, 132), Variant::Wgmma);
    // D = 128: 2/5 of 132 SMs is 52.8 blocks of 192 rows; split_max_keys 1024 there.
    let edge = Workload { seq_kv: 1024 + 2048, causal: true, ..workload("1,52,128,128") };
    assert_eq!(edge.wgmma_blocks(), 26);
    assert_eq!(recommended(&edge, true, 132), Variant::Wgmma, "3072 keys causal: 1536 a block, past 1024");
    // Causal masking halves the keys a block sees: 4096 causal is 2048 at D = 64.
    assert_eq!((split_max_keys(64), split_max_keys(128)), (2048, 1024));
    for d in [64, 128] {
        for causal in [false, true] {
            let keys = if causal { 2 * split_max_keys(d) } else { split_max_keys(d) };
            if keys <= MODEL_MAX_KEYS {
                continue;
            }
            let at = Workload { seq_q: 1, seq_kv: keys, head_dim: d, causal, ..workload("1,1,1,64") };
            assert_eq!(at.split_keys(), split_max_keys(d));
            assert_eq!(recommended(&at, true, 132), Variant::Split, "one block: split, not split-wg");
            let past = Workload { seq_kv: keys + 1 + causal as u32, ..at };
            assert_eq!(recommended(&past, true, 132), Variant::Wgmma);
        }
    }
    // Long shapes with many blocks: wgmma.
    assert_eq!(recommended(&workload("4,16,4096,128"), true, 132), Variant::Wgmma);
    assert_eq!(recommended(&workload("2,16,8192,64,causal"), true, 132), Variant::Wgmma);
}

#[test]
fn off_sm90a_the_recommendation_is_split_for_short_keys_then_mma() {
    for sms in [58, 132] {
        let mut w = workload("8,16,256,64");
        assert_eq!(recommended(&w, false, sms), Variant::Split);
        w.seq_kv = SHORT_KEYS;
        assert_eq!(recommended(&w, false, sms), Variant::Split);
        w.seq_kv = SHORT_KEYS + 1;
        assert_eq!(recommended(&w, false, sms), Variant::Mma);
        w.seq_kv = u32::MAX;
        assert_eq!(recommended(&w, false, sms), Variant::Mma);
    }
}
