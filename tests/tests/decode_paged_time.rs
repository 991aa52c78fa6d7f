//! The serving issue's paged-cache target, timed: `decode` at (B=64,
//! Hq=32, Hkv=8, Sq=1, Skv=8192, D=128) and (8, 32, 8, 1, 32768, 128) on a
//! paged cache of 64-key pages (shuffled over the pool) against the same
//! keys contiguous, both as CUDA-graph replays of 20 calls (the bench's
//! method), after one eager call each that also checks the two give the
//! same bits. Prints the times and their ratio; judges nothing about speed
//! (speed is the bench's and the lab's, not a test's).
//!
//! Ignored without a GPU; on a GPU machine, alone on it:
//! `gpu-bundle/bin/decode_paged_time --ignored --nocapture --test-threads=1`.

use sdpa::cudarc::driver::CudaSlice;
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, PagedKv, RunExtras, ScaleLayout, Workspace};
use sdpa::{Options, OutputDtype, Variant};
use sdpa_tests::timing::{codes, graph_us, untracked_attention};

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
        let max_pages = seq / page_size;
        let pages = batch * max_pages;
        let kv_len = batch * hkv * seq * d;
        let [k, v] = [codes(kv_len, 1), codes(kv_len, 2)];
        let q = codes(batch * hq * d, 3);
        // Batch b's page i sits at pool page (b * max_pages + i) * 7919 mod pages: shuffled, distinct.
        let table: Vec<i32> = (0..pages).map(|i| ((i * 7919) % pages) as i32).collect();
        let to_pool = |t: &[u8]| {
            let mut pool = vec![0u8; kv_len];
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
        };
        let upload = |data: &[u8]| stream.clone_htod(data).expect("upload");
        let (q_dev, k_dev, v_dev) = (upload(&q), upload(&k), upload(&v));
        let (k_pool, v_pool) = (upload(&to_pool(&k)), upload(&to_pool(&v)));
        let table_dev = stream.clone_htod(&table).expect("table");
        let scale = |n: usize| stream.clone_htod(&vec![0.05f32; n]).expect("scales");
        let (q_scale, k_scale, v_scale) = (scale(hq), scale(hkv), scale(hkv));
        let scales = DeviceScales::new(q_scale.as_view(), k_scale.as_view(), v_scale.as_view(), ScaleLayout::PerHead);
        let plan = attn.plan_shapes(qs, kvs, kvs, &Options::new().variant(Variant::Decode)).expect("plan");
        let q_view = Fp8View::new(q_dev.as_view(), qs).expect("q");
        let (k_view, v_view) =
            (Fp8View::new(k_dev.as_view(), kvs).expect("k"), Fp8View::new(v_dev.as_view(), kvs).expect("v"));
        let pool_shape = [pages, page_size, hkv, d];
        let paged = PagedKv::new(
            Fp8View::new(k_pool.as_view(), pool_shape).expect("k pool"),
            Fp8View::new(v_pool.as_view(), pool_shape).expect("v pool"),
            table_dev.as_view(),
            [batch, max_pages],
        )
        .expect("paged");
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
