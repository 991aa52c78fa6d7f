//! The host's policy (`sdpa::plan`): which kernel runs a variant on a
//! problem, the cost model, and the variant the library recommends.

use kernels_gpu::kernels::{HEAD_DIMS, KERNELS, KernelInfo, WGMMA_FP8PV_LONG_D128, find};
use kernels_gpu::variant::{OutputDtype, Variant};
use sdpa::Target;
use sdpa::plan::cost::{MODEL_MAX_KEYS, MODEL_MIN_KEYS, cost, load, predicted_us};
use sdpa::plan::recommend::{
    DECODE_MAX_QUERIES, DECODE_MIN_KEYS, SHORT_KEYS, split_fill_fifths, split_max_keys, split_wg_fills,
};
use sdpa::plan::select::{FP8PV_LONG_MIN_KEYS, SPLIT_N64_PAIRS_KEYS, select};
use sdpa::plan::workload::Workload;

/// The recommendation on an H100's or H200's sm_90a image, 132 SMs.
fn recommended(w: &Workload, sm90a: bool, multiprocessors: u32) -> Variant {
    sdpa::plan::recommend::recommended(w, Target { sm90a, multiprocessors })
}

#[test]
fn only_long_non_causal_fp8pv_problems_at_d128_select_the_192_key_kernel() {
    let long = |k: &KernelInfo| k.tiles == WGMMA_FP8PV_LONG_D128;
    for v in Variant::ALL {
        for d in HEAD_DIMS {
            for keys in [1, 2048, FP8PV_LONG_MIN_KEYS - 1, FP8PV_LONG_MIN_KEYS, 32768] {
                for (causal, output) in [false, true].into_iter().flat_map(|c| OutputDtype::ALL.map(|o| (c, o))) {
                    let k = select(v, d, 512, keys, causal, output).expect("a kernel");
                    assert_eq!((k.variant, k.tiles.head_dim, k.output), (v, d, output));
                    let expected = v == Variant::WgmmaFp8Pv && d == 128 && !causal && keys >= FP8PV_LONG_MIN_KEYS;
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
                    let k = select(v, d, queries, keys, causal, output).expect("a kernel");
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
        // The same kernel as the plain one but for its copies; the score
        // twins are the plain kernel's.
        let plain = find(Variant::SplitN64, 64).expect("split-n64 D = 64").writing(k.output);
        assert!(!plain.pair_rows && plain.scores.is_some() && k.scores.is_none());
        assert_eq!(*k, KernelInfo { entry: k.entry, pair_rows: true, scores: None, ..*plain });
    }
}

/// Every shape whose variants were timed against each other on the H100
/// (graph mode, up to 2048 keys), each from the latest run that timed it,
/// with the variants within 2% of the fastest there (about the run-to-run
/// spread of these short shapes), fastest first (`B,H,S,D[,causal]`). Part
/// of the shapes fitted the cost model, the rest were predicted out of
/// sample first; which runs timed which kernels is in lab/ (STAGES.md,
/// runs.csv). Printed by `lab/scripts/check-picks.py --rust` from those
/// runs' JSON files (in git history at c9d53eb, under results/).
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
/// The shapes where the recommendation is not among the measured winners.
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
    // Not fitted: the opt-in lower-precision variants, which the model
    // never picks, and `decode`, which a rule picks.
    let unfitted = |k: &KernelInfo| k.variant.lower_precision() || k.variant == Variant::Decode;
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
    // On H100s split-n64 was the fastest at every shape of <= 128 split
    // blocks and 256+ keys, e.g. the mission shape (1,8,512,64).
    for shape in ["1,8,512,64", "1,4,1024,64", "1,8,1024,64,causal", "1,8,384,64", "1,2,2048,64"] {
        assert_eq!(recommended(&workload(shape), true, 132), Variant::SplitN64, "{shape}");
    }
    // More blocks than SMs at one block per SM: split-wg.
    assert_eq!(recommended(&workload("1,8,1024,64"), true, 132), Variant::SplitWg);
    assert_eq!(recommended(&workload("1,8,2048,64,causal"), true, 132), Variant::SplitWg);
    // 256 keys too ((2,8,256,64): 3.57 against `split`'s 3.84 us on an H100).
    assert_eq!(recommended(&workload("2,8,256,64"), true, 132), Variant::SplitN64);
    // At D = 128 too (two blocks per SM there: 0.76-0.93x `split`'s time).
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
            // 64 queries: one block of each kernel, past decoding's queries.
            let at = Workload { seq_q: 64, seq_kv: keys, head_dim: d, causal, ..workload("1,1,1,64") };
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
fn decoding_takes_decode_on_every_target() {
    assert_eq!((DECODE_MAX_QUERIES, DECODE_MIN_KEYS), (16, 1024));
    // The serving issue's H200 shapes (B, Hq, Sq, Skv; D = 128, Hkv = 8).
    for (batch, seq_q, seq_kv) in [(64, 1, 8192), (1, 1, 4096), (8, 1, 32768), (64, 16, 8192), (1, 1, 1024)] {
        let w = Workload::new([batch, 32, seq_q, 128], [batch, 8, seq_kv, 128], false);
        for (sm90a, sms) in [(true, 132), (false, 58)] {
            assert_eq!(recommended(&w, sm90a, sms), Variant::Decode, "{w:?}");
            assert_eq!(recommended(&Workload { causal: true, ..w }, sm90a, sms), Variant::Decode, "{w:?} causal");
        }
    }
    // Past 16 queries, or under 1024 keys, the prefill rules hold.
    let w = Workload::new([64, 32, 17, 128], [64, 8, 8192, 128], false);
    assert_eq!(recommended(&w, true, 132), Variant::Wgmma);
    assert_eq!(recommended(&w, false, 58), Variant::Mma);
    let w = Workload::new([1, 32, 1, 128], [1, 8, 1023, 128], false);
    assert_ne!(recommended(&w, true, 132), Variant::Decode);
    assert_eq!(recommended(&w, false, 58), Variant::Split);
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

/// `[B, S, H, D]` tensors run on the `wgmma` variants' packed twins
/// (`Problem::interleaved_rows`): `wgmma` unless named, `wgmma-fp8pv` when
/// named, and a typed refusal for every other variant and off sm_90a.
#[test]
fn bshd_tensors_plan_the_wgmma_packed_twins_and_refuse_the_rest() {
    use sdpa::plan::Plan;
    use sdpa::validate::{PackedRows, Problem};
    use sdpa::{AttnError, Layout, Options, VariantChoice};
    let hopper = Target { sm90a: true, multiprocessors: 132 };
    let ada = Target { sm90a: false, multiprocessors: 58 };
    for d in HEAD_DIMS.map(|d| d as usize) {
        for causal in [false, true] {
            let opts = Options::new().causal(causal).layout(Layout::Bshd);
            let problem = Problem::new([2, 8, 300, d], [2, 4, 700, d], [2, 4, 700, d], &opts).expect("a problem");
            assert_eq!(problem.layout, Layout::Bshd);
            assert_eq!(problem.interleaved_rows(), Some(PackedRows { total_q: 600, total_k: 1400 }));
            let plan = Plan::new(problem.clone(), VariantChoice::Auto, hopper).expect("planned");
            assert_eq!(plan.variant(), Variant::Wgmma);
            assert!(plan.kernel().packed.is_some(), "{} has a packed twin", plan.kernel().entry);
            for v in Variant::ALL {
                let planned = Plan::new(problem.clone(), VariantChoice::Fixed(v), hopper);
                match v {
                    Variant::Wgmma | Variant::WgmmaFp8Pv => assert_eq!(planned.expect("planned").variant(), v),
                    _ => assert!(
                        matches!(planned, Err(AttnError::LayoutUnavailable { layout: "bshd", .. })),
                        "{}: {planned:?}",
                        v.name()
                    ),
                }
            }
            assert!(Plan::new(problem, VariantChoice::Auto, ada).is_err(), "no packed twin off sm_90a");
            let bhsd = Problem::new([2, 8, 300, d], [2, 4, 700, d], [2, 4, 700, d], &Options::new()).expect("bhsd");
            assert_eq!(bhsd.interleaved_rows(), None);
        }
    }
}

/// Tensors given whole (`Fp8Input`) are `[B, H, S, D]`: another layout is
/// refused before anything runs.
#[test]
fn whole_tensors_refuse_another_layout() {
    use sdpa::quant::random_problem;
    use sdpa::{AttnError, Layout, Options};
    let (q, k, v) = random_problem([1, 2, 64, 64], [1, 2, 64, 64], 0);
    let refused = sdpa::validate::validate(&q, &k, &v, &Options::new().layout(Layout::Bshd));
    assert!(matches!(refused, Err(AttnError::LayoutUnavailable { .. })), "{refused:?}");
    assert!(sdpa::validate::validate(&q, &k, &v, &Options::new()).is_ok());
}

/// `[B, S, H, D]` rows past the kernels' 32-bit row counts are refused.
#[test]
fn bshd_rows_past_int32_are_refused() {
    use sdpa::validate::Problem;
    use sdpa::{AttnError, Layout, Options};
    let opts = Options::new().layout(Layout::Bshd);
    let huge = Problem::new([1024, 1, 1 << 21, 64], [1024, 1, 64, 64], [1024, 1, 64, 64], &opts);
    assert!(matches!(huge, Err(AttnError::TooLarge(_))), "{huge:?}");
}

/// `decode` reads `[B, S, H, D]` caches itself where each sequence has one
/// query row (it lies alike in both layouts): the recommendation keeps it
/// there, on its own entries; with more query rows it refuses the layout
/// and `Auto` takes `wgmma`'s packed twin.
#[test]
fn decode_reads_bshd_caches_with_one_query_row() {
    use sdpa::plan::Plan;
    use sdpa::validate::Problem;
    use sdpa::{AttnError, Layout, Options, VariantChoice};
    let hopper = Target { sm90a: true, multiprocessors: 132 };
    let opts = Options::new().layout(Layout::Bshd);
    let one = Problem::new([8, 32, 1, 128], [8, 8, 8192, 128], [8, 8, 8192, 128], &opts).expect("a problem");
    let plan = Plan::new(one.clone(), VariantChoice::Auto, hopper).expect("planned");
    assert_eq!(plan.variant(), Variant::Decode);
    assert!(!plan.entry().contains("packed"), "decode's own entries, no packed twin: {}", plan.entry());
    let named = Plan::new(one, VariantChoice::Fixed(Variant::Decode), hopper).expect("decode by name");
    assert!(!named.entry().contains("packed"), "{}", named.entry());
    let four = Problem::new([8, 32, 4, 128], [8, 8, 8192, 128], [8, 8, 8192, 128], &opts).expect("a problem");
    let refused = Plan::new(four.clone(), VariantChoice::Fixed(Variant::Decode), hopper);
    assert!(matches!(refused, Err(AttnError::LayoutUnavailable { layout: "bshd", .. })), "{refused:?}");
    let auto = Plan::new(four, VariantChoice::Auto, hopper).expect("planned");
    assert_eq!(auto.variant(), Variant::Wgmma);
    assert!(auto.entry().contains("packed"), "{}", auto.entry());
    // Windows keep decode's window twin.
    let windowed = Problem::new([8, 32, 1, 128], [8, 8, 8192, 128], [8, 8, 8192, 128], &opts.window(Some(1024), None))
        .expect("a problem");
    let plan = Plan::new(windowed, VariantChoice::Auto, hopper).expect("planned");
    assert_eq!(plan.variant(), Variant::Decode);
    assert!(plan.entry().contains("window"), "{}", plan.entry());
}
