//! The kernel build itself and the launch geometry: every kernel of the
//! table is in every embedded PTX image, and the grid covers every query row
//! exactly once.

use kernels_gpu::kernels::{HEAD_DIMS, KERNELS, KernelInfo, Roles, SPLIT_N64_D64_EXCHANGE_APART, find};
use kernels_gpu::layout::RowLayout;
use kernels_gpu::params::{KvTiles, TILE_KEYS};
use kernels_gpu::schedule::{blocks, grid};
use kernels_gpu::tiles::{KvTilesSmemPlan, MmaSmemPlan, ONES_ROWS, SplitSmemPlan, WgmmaSmemPlan};
use kernels_gpu::variant::{OutputDtype, Variant};
use sdpa::embedded::{Image, Load, images, select};

/// The PTX of `img`. Every image has it where the kernels are built from
/// their sources, as this workspace builds them (`SDPA_BUILD_KERNELS=1` in
/// `.cargo/config.toml`); the shipped images, which `cargo xtask images
/// --check` compares with such a build, leave out the sm_90a PTX.
fn ptx(img: &Image) -> &'static str {
    img.ptx.unwrap_or_else(|| panic!("no {} PTX embedded: build with SDPA_BUILD_KERNELS=1", img.arch))
}

#[test]
fn every_image_holds_every_entry_point() {
    let archs: Vec<_> = images().iter().map(|i| i.arch).collect();
    assert_eq!(archs, ["sm_90a", "sm_89"]);
    for img in images() {
        assert!(ptx(img).contains(&format!(".target {}", img.arch)), "{} PTX targets another arch", img.arch);
        for k in &KERNELS {
            let expected = !k.sm90a_only || img.arch == "sm_90a";
            for entry in std::iter::once(k.entry).chain(k.prepass.map(|p| p.entry)) {
                let present = ptx(img).contains(&format!(".entry {entry}("));
                assert_eq!(present, expected, "{}: entry {entry} present={present}", img.arch);
            }
        }
        assert!(!ptx(img).contains(".local"), "{}: PTX uses local memory", img.arch);
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
            assert!(ptx(img).contains(needle), "{} PTX lacks {needle}", img.arch);
        }
        // sm_89 runs E4M3 mma.sync natively; on sm_90 ptxas would emulate it,
        // so the sm_90a image converts the operands itself (warp_tile).
        assert_eq!(ptx(img).contains(e4m3_mma), img.arch == "sm_89", "{}: {e4m3_mma}", img.arch);
    }
}

#[test]
fn the_wgmma_kernels_use_hopper_instructions_in_the_sm90a_image_only() {
    for img in images() {
        let hopper = ptx(img).contains("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3");
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
            assert!(k.threads() <= 1024);
        }
    }
}

#[test]
fn a_producer_warpgroup_comes_with_launch_bounds_and_whole_warpgroups() {
    for k in KERNELS.iter().filter(|k| k.roles == Roles::ProducerWarpgroup) {
        // The specialized body shares the register file out by
        // `setmaxnreg`, which needs the launch's registers fixed, and
        // gives each warpgroup of rows 64 of the block's rows.
        assert!(k.min_blocks_per_sm >= 1, "{}", k.entry);
        assert_eq!(k.tiles.warps * 16, k.tiles.block_m, "{}", k.entry);
        assert_eq!(k.threads(), k.tiles.threads() + 128, "{}", k.entry);
        assert!(k.twins().all(|(_, blocks)| blocks >= 1), "{}", k.entry);
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
fn prepass_shared_memory_holds_the_rows_then_the_image_over_them() {
    for (k, pre) in KERNELS.iter().filter_map(|k| k.prepass.map(|p| (k, p))) {
        let d = k.tiles.head_dim;
        let plan = KvTilesSmemPlan::new(d);
        let tiles = KvTiles::new(d, 1, 1, 64, k.variant.pv_e4m3());
        let rows_bytes = TILE_KEYS * d;
        // The V rows in, the `Vt` image ending where they end (f16: twice
        // their bytes) or over the space before them (E4M3), then the
        // barrier.
        assert_eq!(plan.barrier - plan.v_rows, rows_bytes, "D = {d}: V rows");
        let image_end = if k.variant.pv_e4m3() { plan.v_rows } else { plan.barrier };
        assert_eq!(image_end - plan.image, tiles.vt_tile_bytes(), "{}: the Vt image", k.entry);
        for off in [plan.image, plan.v_rows] {
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
    // split, split-wg, split-n64 and decode at both head dims and
    // split-n64's pair-row kernel at D = 64, writing f16 and bf16.
    assert_eq!(KERNELS.iter().filter(|k| k.variant.runs_split_body()).count(), 18);
    for k in KERNELS.iter().filter(|k| k.variant.runs_split_body()) {
        let t = k.tiles;
        let apart = k.variant == Variant::SplitN64 && t.head_dim == 64 && SPLIT_N64_D64_EXCHANGE_APART;
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
        if k.variant == Variant::Decode {
            assert_eq!(t.block_m, 16, "{}: decode's key groups are one warp (its walk clears V per warp)", k.entry);
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
