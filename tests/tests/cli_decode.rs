//! The CLI's decode features on a GPU. `sdpa run` on decode files, end to
//! end: a paged cache (a shuffled page
//! table over pools whose unread slots hold NaN codes, unread entries -1)
//! with per-sequence lengths `seqused_k` of 0, 1, a page plus one and the
//! whole cache, and `--lse`, against the same keys contiguous with the
//! same lengths (the same bits), and each sequence's output and
//! log-sum-exp against the f64 reference of its own keys. `sdpa bench
//! --page-size --seqused-k`: `decode` timed on contiguous and paged caches
//! with lengths, every row checked (the library's `bench_decode_cache`, and
//! the CLI's table).
//!
//! It runs the `sdpa` executable: `$SDPA_BIN`, else the one beside this
//! test executable (a GPU bundle's `bin/`), else the one in the cargo
//! profile directory above it (`cargo build --release -p sdpa` first).
//! Ignored without a GPU; on a GPU machine:
//! `gpu-bundle/bin/cli_decode --ignored --nocapture --test-threads=1`.

use std::process::Command;

use sdpa::bench::{BenchConfig, BenchInputs, BenchShape, CacheLayout, LaunchMode, bench_decode_cache};
use sdpa::io::{DecodeInputs, Inputs, PageTable, load_lse, load_output, save_decode_inputs};
use sdpa::metrics::{GATE, compare};
use sdpa::quant::{from_codes, random_problem};
use sdpa::reference::{attention_f64, log_sum_exp_f64 as lse_f64};
use sdpa::{Fp8Tensor, Output};
use sdpa_tests::cli::{TempPath, sdpa_cli};
use sdpa_tests::lse;

/// Runs `sdpa run --lse` on `input` (and `--causal`), expecting success;
/// returns `o` and `lse`.
fn run(input: &TempPath, causal: bool) -> (Output, Vec<f32>) {
    let output = TempPath::new("out");
    let mut cmd = Command::new(sdpa_cli());
    cmd.args(["run", "--lse", "--input"]).arg(&input.0).arg("--output").arg(&output.0);
    if causal {
        cmd.arg("--causal");
    }
    let o = cmd.output().expect("the sdpa binary runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "sdpa run failed ({:?}): {stderr}", o.status);
    assert!(stdout.contains("variant decode") && stdout.contains("(o, lse)"), "{stdout}");
    (load_output(&output.0).expect("o"), load_lse(&output.0).expect("lse").values)
}

/// Batch `b` of a `[B, H, S, D]` tensor, its first `len` rows, as a tensor
/// of one batch.
fn rows_of(t: &Fp8Tensor, b: usize, len: usize) -> Fp8Tensor {
    let [_, heads, seq, d] = t.shape;
    let data = (0..heads).flat_map(|h| &t.data[((b * heads + h) * seq) * d..][..len * d]).copied().collect();
    from_codes(data, [1, heads, len, d], t.scales.clone())
}

/// The keys of `t` (`[B, Hkv, S, D]`) laid into a pool of `pages` pages of
/// `page_size` keys by `table` (`[B, max_pages]`); slots no table entry
/// names, and those past each batch's length, hold NaN codes.
fn into_pool(t: &Fp8Tensor, table: &[i32], lens: &[i32], page_size: usize, pages: usize) -> Fp8Tensor {
    let [batch, heads, seq, d] = t.shape;
    let max_pages = table.len() / batch;
    let mut pool = vec![0x7f; pages * page_size * heads * d];
    for b in 0..batch {
        for key in 0..lens[b] as usize {
            let page = table[b * max_pages + key / page_size] as usize;
            for h in 0..heads {
                let from = ((b * heads + h) * seq + key) * d;
                let to = ((page * page_size + key % page_size) * heads + h) * d;
                pool[to..to + d].copy_from_slice(&t.data[from..from + d]);
            }
        }
    }
    from_codes(pool, [pages, page_size, heads, d], t.scales.clone())
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+ and the sdpa executable; run on a GPU machine (README: GPU tests)"]
fn sdpa_run_on_a_paged_cache_with_lengths_matches_contiguous_and_the_reference() {
    let (page_size, max_pages) = (64usize, 24usize);
    let seq_kv = page_size * max_pages;
    let lens = [0i32, 1, page_size as i32 + 1, seq_kv as i32];
    let batch = lens.len();
    for (causal, seq_q, head_dim, heads_q, heads_kv) in [(false, 1, 128, 32, 8), (true, 3, 64, 8, 2)] {
        let (qs, kvs) = ([batch, heads_q, seq_q, head_dim], [batch, heads_kv, seq_kv, head_dim]);
        let (q, k, v) = random_problem(qs, kvs, 41);
        // Batch b's page i at pool page (7 (b * max_pages + i) + 3) mod pages,
        // pages one more than the table names; entries past a length -1.
        let pages = batch * max_pages + 1;
        let table: Vec<i32> = (0..batch * max_pages)
            .map(|e| {
                let used = (lens[e / max_pages] as usize).div_ceil(page_size);
                if e % max_pages < used { ((7 * e + 3) % pages) as i32 } else { -1 }
            })
            .collect();
        let contiguous = TempPath::new("contiguous");
        let inputs = Inputs { q: q.clone(), k: k.clone(), v: v.clone() };
        save_decode_inputs(&contiguous.0, &inputs, &DecodeInputs { seq_used_k: Some(lens.to_vec()), page_table: None })
            .expect("save");
        let paged = TempPath::new("paged");
        let pooled = Inputs {
            q: q.clone(),
            k: into_pool(&k, &table, &lens, page_size, pages),
            v: into_pool(&v, &table, &lens, page_size, pages),
        };
        let decode = DecodeInputs {
            seq_used_k: Some(lens.to_vec()),
            page_table: Some(PageTable { entries: table, batch, max_pages }),
        };
        save_decode_inputs(&paged.0, &pooled, &decode).expect("save");

        let (o_flat, lse_flat) = run(&contiguous, causal);
        let (o_paged, lse_paged) = run(&paged, causal);
        assert_eq!(o_paged, o_flat, "causal={causal} Sq={seq_q}: the paged output differs from the contiguous one");
        let bits = |x: &[f32]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&lse_paged), bits(&lse_flat), "causal={causal} Sq={seq_q}: the paged LSE differs");

        let scale = 1.0 / (head_dim as f64).sqrt();
        let rows = heads_q * seq_q;
        let values = o_flat.values();
        for (b, &len) in lens.iter().enumerate() {
            let len = len as usize;
            let got = &values[b * rows * head_dim..][..rows * head_dim];
            let (qb, kb, vb) = (rows_of(&q, b, seq_q), rows_of(&k, b, len), rows_of(&v, b, len));
            let want = if len == 0 { vec![0.0; got.len()] } else { attention_f64(&qb, &kb, &vb, causal, scale) };
            let stats = compare(got, &want, GATE.max_abs);
            let empty_rows_zero = len > 0 || got.iter().all(|&x| x == 0.0);
            assert!(GATE.passes(&stats) && empty_rows_zero, "causal={causal} Sq={seq_q} b={b} len={len}: {stats}");
            for row in 0..rows {
                let (h, i) = (row / seq_q, row % seq_q);
                let got = lse_flat[b * rows + row] as f64;
                let want = lse_f64(&qb, &kb, h, i, causal, scale);
                let close = lse::close(got, want, 0.0);
                assert!(close, "causal={causal} Sq={seq_q} b={b} len={len} row ({h}, {i}): lse {got}, f64 {want}");
            }
        }
        println!(
            "sdpa run, decode causal={causal} {qs:?} over {max_pages} pages of {page_size} per sequence, seqused_k {lens:?}: \
             paged = contiguous (o and lse bits), both within the gate of the f64 reference"
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn decode_benches_correctly_on_contiguous_and_paged_caches_with_lengths() {
    let attn = sdpa::Attention::new(0).expect("a GPU for the GPU tests");
    let cfg = BenchConfig { samples: 3, launches_per_sample: 4, ..BenchConfig::default() };
    let modes = [LaunchMode::Graph, LaunchMode::Direct];
    for text in ["4,8:2,1:1000,128", "4,4:1,16:2048,64,causal"] {
        let inputs = BenchInputs::random(BenchShape::parse(text).unwrap());
        for page_size in [None, Some(64), Some(256)] {
            for seq_used_k in [None, Some(vec![0, 1, 65, 1000])] {
                let layout = CacheLayout { page_size, seq_used_k };
                let rows = bench_decode_cache(&attn, &inputs, &cfg, &modes, &layout).expect("benches");
                assert_eq!(rows.len(), 2);
                for r in &rows {
                    assert!(r.correct, "{text} {}: rel L2 {:.1e}, max abs {:.1e}", layout.label(), r.rel_l2, r.max_abs);
                    assert!(r.kv_tb_s > 0.0 && r.cache == layout, "{r:?}");
                }
                println!("{text} {}: {:.2} us a call (graph)", layout.label(), rows[0].median_us);
            }
        }
    }
}

/// `sdpa bench --page-size 64 --seqused-k ..`: a contiguous and a paged
/// `decode` row per mode, each checked ("ok"), beside the other variants.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+ and the sdpa executable; run on a GPU machine (README: GPU tests)"]
fn sdpa_bench_times_decode_on_a_paged_cache() {
    let o = Command::new(sdpa_cli())
        .args(["bench", "--shapes", "4,8:2,1:1000,128", "--variants", "decode,split", "--page-size", "64"])
        .args(["--seqused-k", "0,1,65,1000", "--samples", "3", "--launches", "4"])
        .output()
        .expect("the sdpa binary runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "sdpa bench failed ({:?}): {stderr}", o.status);
    print!("{stdout}");
    for (variant, cache) in [("split", "contig"), ("decode", "contig+lens"), ("decode", "paged:64+lens")] {
        for mode in ["graph", "direct"] {
            let row = stdout.lines().find(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && f[0] == variant && f[2] == cache && f[3] == mode
            });
            let row = row.unwrap_or_else(|| panic!("no {variant} {cache} {mode} row in:\n{stdout}"));
            assert!(row.ends_with(" ok"), "{row}");
        }
    }
}
