//! The serving issue's paged-cache target, timed: `decode` at (B=64,
//! Hq=32, Hkv=8, Sq=1, Skv=8192, D=128) and (8, 32, 8, 1, 32768, 128) on a
//! paged cache of 64-key pages (shuffled over the pool) against the same
//! keys contiguous; and a causal prefill chunk over a paged cache
//! (`decode`, the variant that reads pages) against the dense prefill
//! kernel on the same keys contiguous. All as CUDA-graph replays of 20
//! calls (the bench's method), after one eager call each (which, for the
//! decode shapes, also checks that the two give the same bits). Prints the
//! times and their ratio; judges nothing about speed (speed is the bench's
//! and the lab's, not a test's).
//!
//! Ignored without a GPU; on a GPU machine, alone on it:
//! `gpu-bundle/bin/decode_paged_time --ignored --nocapture --test-threads=1`.

use sdpa::cudarc::driver::{CudaSlice, CudaStream};
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, PagedKv, RunExtras, ScaleLayout, Workspace};
use sdpa::{Options, OutputDtype, Variant};
use sdpa_tests::timing::{codes, graph_us, untracked_attention};
use std::sync::Arc;

/// A page table that scatters `batch` sequences of `max_pages` pages over
/// a pool of as many: batch b's page i at pool page (b * max_pages + i) *
/// 7919 mod pages, distinct.
fn shuffled_table(batch: usize, max_pages: usize) -> Vec<i32> {
    let pages = batch * max_pages;
    (0..pages).map(|i| ((i * 7919) % pages) as i32).collect()
}

/// The `[B, Hkv, seq, d]` codes `t` laid into the pool of pages
/// `[pages, page_size, Hkv, d]` that `table` names.
fn to_pool(t: &[u8], table: &[i32], [hkv, seq, d]: [usize; 3], page_size: usize) -> Vec<u8> {
    let max_pages = seq / page_size;
    let mut pool = vec![0u8; t.len()];
    for (entry, &page) in table.iter().enumerate() {
        let (b, i) = (entry / max_pages, entry % max_pages);
        for row in 0..page_size {
            for h in 0..hkv {
                let from = ((b * hkv + h) * seq + i * page_size + row) * d;
                let to = ((page as usize * page_size + row) * hkv + h) * d;
                pool[to..to + d].copy_from_slice(&t[from..from + d]);
            }
        }
    }
    pool
}

/// One problem's inputs on the device, drawn by `codes`: Q `[B, Hq, Sq,
/// D]`, K and V `[B, Hkv, Skv, D]` contiguous and again as pools of
/// shuffled pages ([`shuffled_table`]), and per-head scales of 0.05.
struct Uploaded {
    shapes: ([usize; 4], [usize; 4]),
    page_size: usize,
    qkv: [CudaSlice<u8>; 3],
    pools: [CudaSlice<u8>; 2],
    table: CudaSlice<i32>,
    scales: [CudaSlice<f32>; 3],
}

impl Uploaded {
    /// Draws and uploads the inputs of Q `qs` and K, V `kvs`, the pools in
    /// pages of `page_size` keys.
    fn new(stream: &Arc<CudaStream>, (qs, kvs): ([usize; 4], [usize; 4]), page_size: usize) -> Uploaded {
        let ([batch, hq, seq_q, d], [_, hkv, seq, _]) = (qs, kvs);
        let kv_len = batch * hkv * seq * d;
        let host = [codes(batch * hq * seq_q * d, 3), codes(kv_len, 1), codes(kv_len, 2)];
        let table = shuffled_table(batch, seq / page_size);
        let upload = |data: &[u8]| stream.clone_htod(data).expect("upload");
        let pool = |t: &[u8]| upload(&to_pool(t, &table, [hkv, seq, d], page_size));
        let scale = |n: usize| stream.clone_htod(&vec![0.05f32; n]).expect("scales");
        Uploaded {
            shapes: (qs, kvs),
            page_size,
            qkv: host.each_ref().map(|t| upload(t)),
            pools: [pool(&host[1]), pool(&host[2])],
            table: stream.clone_htod(&table).expect("table"),
            scales: [scale(hq), scale(hkv), scale(hkv)],
        }
    }

    /// Q, K and V, contiguous.
    fn views(&self) -> [Fp8View<'_>; 3] {
        let (qs, kvs) = self.shapes;
        let view = |i: usize, shape| Fp8View::new(self.qkv[i].as_view(), shape).expect("view");
        [view(0, qs), view(1, kvs), view(2, kvs)]
    }

    /// The paged cache of the same keys.
    fn paged(&self) -> PagedKv<'_> {
        let [batch, hkv, seq, d] = self.shapes.1;
        let max_pages = seq / self.page_size;
        let pool_shape = [batch * max_pages, self.page_size, hkv, d];
        let [k, v] = &self.pools;
        PagedKv::new(
            Fp8View::new(k.as_view(), pool_shape).expect("k pool"),
            Fp8View::new(v.as_view(), pool_shape).expect("v pool"),
            self.table.as_view(),
            [batch, max_pages],
        )
        .expect("paged")
    }

    /// Per-head scales.
    fn scales(&self) -> DeviceScales<'_> {
        let [q, k, v] = &self.scales;
        DeviceScales::new(q.as_view(), k.as_view(), v.as_view(), ScaleLayout::PerHead)
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn paged_against_contiguous_at_the_serving_shapes() {
    let (stream, attn) = untracked_attention();
    let page_size = 64;
    println!("| shape | contiguous us | paged (64-key pages) us | paged / contiguous |");
    println!("|---|---|---|---|");
    for (batch, seq) in [(64usize, 8192usize), (8, 32768)] {
        let (hq, hkv, d) = (32, 8, 128);
        let (qs, kvs) = ([batch, hq, 1, d], [batch, hkv, seq, d]);
        let inputs = Uploaded::new(&stream, (qs, kvs), page_size);
        let ([q_view, k_view, v_view], paged, scales) = (inputs.views(), inputs.paged(), inputs.scales());
        let plan = attn.plan_shapes(qs, kvs, kvs, &Options::new().variant(Variant::Decode)).expect("plan");
        let (mut ws_flat, mut ws_paged): (Workspace, Workspace) =
            (attn.workspace(&plan).expect("workspace"), attn.workspace(&plan).expect("workspace"));
        let mut o_flat: CudaSlice<u16> = stream.alloc_zeros(batch * hq * d).expect("o");
        let mut o_paged: CudaSlice<u16> = stream.alloc_zeros(batch * hq * d).expect("o");
        let mut flat = |o: &mut CudaSlice<u16>| {
            let mut out = OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, qs).expect("out");
            let extras = RunExtras::new();
            attn.run_views_with(&plan, &q_view, &k_view, &v_view, &scales, &mut out, &mut ws_flat, extras)
                .expect("flat");
        };
        let mut run_paged = |o: &mut CudaSlice<u16>| {
            let mut out = OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, qs).expect("out");
            attn.run_paged(&plan, &q_view, &paged, &scales, &mut out, &mut ws_paged, RunExtras::new()).expect("paged");
        };
        // Eager first (it also writes the tensor maps' slots): the same bits.
        flat(&mut o_flat);
        run_paged(&mut o_paged);
        let (want, got) = (stream.clone_dtoh(&o_flat).expect("o"), stream.clone_dtoh(&o_paged).expect("o"));
        stream.synchronize().expect("sync");
        assert_eq!(got, want, "B={batch} Skv={seq}: paged differs from contiguous");
        let flat_us = graph_us(&stream, || flat(&mut o_flat));
        let paged_us = graph_us(&stream, || run_paged(&mut o_paged));
        println!("| {batch},{hq}:{hkv},1:{seq},{d} | {flat_us:.2} | {paged_us:.2} | {:.3} |", paged_us / flat_us);
    }
}

/// A causal prefill chunk of `Sq` queries over a paged cache of `Skv` keys
/// (64-key pages, shuffled), on `decode` (`Attention::plan_paged`), against
/// the dense plan's kernel (the recommendation) on the same keys
/// contiguous. TFLOP/s count the causal work: the keys each row sees.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn prefill_chunk_over_a_paged_cache_against_the_dense_kernel() {
    let (stream, attn) = untracked_attention();
    let (page_size, hq, hkv, d) = (64, 32, 8, 128);
    println!("| shape | dense kernel | dense us | paged decode us | paged / dense | paged TFLOP/s |");
    println!("|---|---|---|---|---|---|");
    for (batch, seq_q, seq) in [(1usize, 512usize, 8192usize), (4, 128, 8192), (1, 2048, 16384)] {
        let (qs, kvs) = ([batch, hq, seq_q, d], [batch, hkv, seq, d]);
        let inputs = Uploaded::new(&stream, (qs, kvs), page_size);
        let ([q_view, k_view, v_view], paged, scales) = (inputs.views(), inputs.paged(), inputs.scales());
        let opts = Options::new().causal(true);
        let dense = attn.plan_shapes(qs, kvs, kvs, &opts).expect("dense plan");
        let paged_plan = attn.plan_paged(qs, &paged, &opts).expect("paged plan");
        let (mut ws_dense, mut ws_paged) =
            (attn.workspace(&dense).expect("workspace"), attn.workspace(&paged_plan).expect("workspace"));
        let mut o: CudaSlice<u16> = stream.alloc_zeros(batch * hq * seq_q * d).expect("o");
        let mut run_dense = || {
            let mut out = OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, qs).expect("out");
            let extras = RunExtras::new();
            attn.run_views_with(&dense, &q_view, &k_view, &v_view, &scales, &mut out, &mut ws_dense, extras)
                .expect("dense");
        };
        run_dense();
        let dense_us = graph_us(&stream, &mut run_dense);
        let mut run_paged = || {
            let mut out = OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, qs).expect("out");
            attn.run_paged(&paged_plan, &q_view, &paged, &scales, &mut out, &mut ws_paged, RunExtras::new())
                .expect("paged");
        };
        run_paged();
        let paged_us = graph_us(&stream, &mut run_paged);
        // Row i (bottom-right aligned) sees seq - seq_q + i + 1 keys.
        let keys_seen: f64 = (0..seq_q).map(|i| (seq - seq_q + i + 1) as f64).sum();
        let tflops = 4.0 * (batch * hq) as f64 * keys_seen * d as f64 / (paged_us * 1e6);
        println!(
            "| {batch},{hq}:{hkv},{seq_q}:{seq},{d},causal | {} | {dense_us:.1} | {paged_us:.1} | {:.2} | {tflops:.0} |",
            dense.variant().name(),
            paged_us / dense_us
        );
    }
}
