//! What the timing tests (`decode_paged_time`, `serving_time`) share:
//! inputs cheap to make by the gigabyte, and the bench's method, CUDA-graph
//! replays of a fixed number of calls.

use sdpa::cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use sdpa::cudarc::driver::{CudaContext, CudaStream};
use sdpa::{Attention, ImageChoice};
use std::sync::Arc;

/// Calls per replay.
pub const CALLS: usize = 20;
/// Replays timed.
pub const REPLAYS: usize = 10;

/// An `Attention` on a new stream of device 0 whose context tracks no
/// events (capture forbids waiting on the events cudarc would record), for
/// tests that capture their calls into graphs: every buffer they make must
/// be made, used and freed on that stream.
pub fn untracked_attention() -> (Arc<CudaStream>, Attention) {
    let ctx = CudaContext::new(0).expect("a GPU for the GPU tests");
    // SAFETY: the callers keep every buffer on the one stream (above).
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream().expect("stream");
    let attn = Attention::on_stream(stream.clone(), ImageChoice::Auto).expect("on_stream");
    (stream, attn)
}

/// `n` E4M3 codes of moderate magnitude (no NaN, no huge values): an LCG's
/// high bits, the exponent field kept small.
pub fn codes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let bits = (x >> 56) as u8;
            // Sign, exponent 4..=7 (values 2^-3 .. 2^0 times 1.m), mantissa.
            (bits & 0x80) | (0x20 + (bits & 0x1f))
        })
        .collect()
}

/// Device time in microseconds per call of a graph of [`CALLS`] calls of
/// `run`, median of [`REPLAYS`] replays (the stream's context must not
/// track events: capture forbids waiting on them).
pub fn graph_us(stream: &Arc<CudaStream>, mut run: impl FnMut()) -> f64 {
    stream.synchronize().expect("sync");
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).expect("capture");
    for _ in 0..CALLS {
        run();
    }
    let graph = stream.end_capture(CUgraphInstantiate_flags(0)).expect("end capture").expect("a graph");
    let ctx = stream.context();
    let event = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).expect("event");
    graph.launch().expect("warm replay");
    let mut samples: Vec<f64> = (0..REPLAYS)
        .map(|_| {
            let (start, stop) = (event(), event());
            start.record(stream).expect("record");
            graph.launch().expect("replay");
            stop.record(stream).expect("record");
            stop.synchronize().expect("sync");
            start.elapsed_ms(&stop).expect("elapsed") as f64 * 1e3 / CALLS as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[REPLAYS / 2]
}
