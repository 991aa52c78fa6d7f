//! Packed batches timed through the device API
//! ([`Attention::run_packed`]): sequences of their own lengths (queries =
//! keys per sequence) with a shape's heads, head dimension and mask, each
//! checked on sampled rows against the f64 reference of its own sequence.

use super::{
    BenchConfig, BenchRow, BenchShape, CHECK_ROWS, CacheLayout, LaunchMode, RowLabel, RowWork, time_calls,
    time_on_stream,
};
use crate::attention::Attention;
use crate::device::{DeviceScales, Fp8View, OutputViewMut, PackedSeqs, RunExtras, ScaleLayout, Workspace};
use crate::error::AttnError;
use crate::metrics::{ErrorStats, Tolerance, compare};
use crate::options::{Layout, Options};
use crate::plan::Plan;
use crate::quant::{from_codes, random_problem};
use crate::reference::{attention_rows_f64, sample_rows};
use crate::tensor::Fp8Tensor;
use cudarc::driver::CudaSlice;
use kernels_gpu::variant::Variant;

/// A packed batch's inputs, made once and timed on each packed variant:
/// Q, K and V of every sequence back to back.
pub struct PackedInputs {
    /// The batch as a shape: B the sequences, Sq = Skv the longest; the
    /// heads, head dimension and mask are the row's.
    pub shape: BenchShape,
    /// Each sequence's length (its queries and its keys).
    pub lens: Vec<usize>,
    /// `[1, Hq, total, D]`: the sequences' rows back to back per head.
    q: Fp8Tensor,
    k: Fp8Tensor,
    v: Fp8Tensor,
}

impl PackedInputs {
    /// Standard normal Q, K, V (seed 0) for sequences of `lens` with
    /// `like`'s heads, head dimension and causal mask (its batch and
    /// lengths are not used).
    pub fn random(like: &BenchShape, lens: &[usize]) -> PackedInputs {
        let total = lens.iter().sum();
        let longest = lens.iter().copied().max().unwrap_or(0);
        let shape = BenchShape { batch: lens.len(), seq_q: longest, seq_kv: longest, ..*like };
        let (q, k, v) =
            random_problem([1, like.heads_q, total, like.head_dim], [1, like.heads_kv, total, like.head_dim], 0);
        PackedInputs { shape, lens: lens.to_vec(), q, k, v }
    }

    /// Rows of each tensor, every sequence's.
    pub fn total(&self) -> usize {
        self.lens.iter().sum()
    }

    /// The batch as the table prints it: `B,Hq[:Hkv],<=S,D[,causal]`, S the
    /// longest sequence.
    pub fn label(&self) -> String {
        packed_label(&self.shape)
    }

    /// The floating-point operations of the two matrix products over every
    /// sequence, `sum 4 Hq L^2 D` (not halved for causal, as dense rows
    /// count).
    pub fn flops(&self) -> f64 {
        let s = &self.shape;
        self.lens.iter().map(|&l| 4.0 * (s.heads_q * s.head_dim) as f64 * (l * l) as f64).sum()
    }

    /// The prefix sums of the lengths, from 0.
    fn prefix_sums(&self) -> Vec<i32> {
        let mut at = 0;
        std::iter::once(0)
            .chain(self.lens.iter().map(|&len| {
                at += len as i32;
                at
            }))
            .collect()
    }
}

/// A packed row's shape as the table prints it: `B,Hq[:Hkv],<=S,D[,causal]`
/// (`shape.seq_q` the longest sequence).
pub fn packed_label(shape: &BenchShape) -> String {
    let heads = if shape.heads_q == shape.heads_kv {
        shape.heads_q.to_string()
    } else {
        format!("{}:{}", shape.heads_q, shape.heads_kv)
    };
    let causal = if shape.causal { ",causal" } else { "" };
    format!("{},{heads},<={},{}{causal}", shape.batch, shape.seq_q, shape.head_dim)
}

/// A one-batch `[1, H, total, D]` tensor's codes as the packed `[total,
/// H, D]`: its `[B, S, H, D]` order.
fn packed_codes(t: &Fp8Tensor) -> Vec<u8> {
    Layout::Bshd.arrange(&t.data, t.shape)
}

/// Rows `first .. first + len` of every head of a one-batch tensor, as a
/// tensor of their own.
fn rows_of(t: &Fp8Tensor, first: usize, len: usize) -> Fp8Tensor {
    let [_, heads, rows, d] = t.shape;
    let data = (0..heads).flat_map(|h| &t.data[(h * rows + first) * d..][..len * d]).copied().collect();
    from_codes(data, [1, heads, len, d], t.scales.clone())
}

/// One packed call's buffers on the device.
struct PackedRun<'a> {
    attn: &'a Attention,
    plan: Plan,
    q: CudaSlice<u8>,
    k: CudaSlice<u8>,
    v: CudaSlice<u8>,
    cu_seqlens: CudaSlice<i32>,
    longest: usize,
    shapes: [[usize; 3]; 2],
    scales: [CudaSlice<f32>; 3],
    ws: Workspace,
    o: CudaSlice<u16>,
}

impl<'a> PackedRun<'a> {
    /// Uploads the inputs and plans `variant` on them.
    fn new(attn: &'a Attention, variant: Variant, inputs: &PackedInputs, opts: &Options) -> Result<Self, AttnError> {
        let stream = attn.stream();
        let s = &inputs.shape;
        let total = inputs.total();
        let shapes = [[total, s.heads_q, s.head_dim], [total, s.heads_kv, s.head_dim]];
        let cu_seqlens = stream.clone_htod(&inputs.prefix_sums())?;
        let longest = s.seq_q;
        let opts = Options { variant: variant.into(), ..*opts };
        let plan = {
            let seqs = PackedSeqs::new(cu_seqlens.as_view(), cu_seqlens.as_view(), longest, longest)?;
            attn.plan_packed(shapes[0], shapes[1], shapes[1], &seqs, &opts)?
        };
        let [qs, ks, vs] = [&inputs.q.scales, &inputs.k.scales, &inputs.v.scales].map(|s| stream.clone_htod(s));
        Ok(PackedRun {
            attn,
            q: stream.clone_htod(&packed_codes(&inputs.q))?,
            k: stream.clone_htod(&packed_codes(&inputs.k))?,
            v: stream.clone_htod(&packed_codes(&inputs.v))?,
            cu_seqlens,
            longest,
            shapes,
            scales: [qs?, ks?, vs?],
            ws: attn.workspace(&plan)?,
            o: stream.alloc_zeros(total * s.heads_q * s.head_dim)?,
            plan,
        })
    }

    /// Launches the call (asynchronously).
    fn call(&mut self) -> Result<(), AttnError> {
        let [q_shape, kv_shape] = self.shapes;
        let cu = self.cu_seqlens.as_view();
        let seqs = PackedSeqs::new(cu, self.cu_seqlens.as_view(), self.longest, self.longest)?;
        let [qs, ks, vs] = &self.scales;
        let scales = DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead);
        let output = self.plan.problem().output;
        self.attn.run_packed(
            &self.plan,
            &Fp8View::packed(self.q.as_view(), q_shape)?,
            &Fp8View::packed(self.k.as_view(), kv_shape)?,
            &Fp8View::packed(self.v.as_view(), kv_shape)?,
            &seqs,
            &scales,
            &mut OutputViewMut::packed(self.o.as_view_mut(), output, q_shape)?,
            &mut self.ws,
            RunExtras::new(),
        )
    }

    /// Overwrites the output with NaNs ([`POISON`]).
    fn poison(&mut self) -> Result<(), AttnError> {
        super::poison_output(self.attn, &mut self.o)
    }

    /// Waits for the stream and reads the output back as f32, `[total, Hq,
    /// D]`.
    fn output(&self) -> Result<Vec<f32>, AttnError> {
        super::read_output(self.attn, &self.o, self.plan.problem().output)
    }
}

/// Sampled rows of `o` (`[total, Hq, D]`) against the f64 reference of
/// each row's own sequence.
fn check_per_sequence(inputs: &PackedInputs, o: &[f32], scale: f64, variant: Variant) -> ErrorStats {
    let s = &inputs.shape;
    let (d, heads_q) = (s.head_dim, s.heads_q);
    let rows = sample_rows([1, heads_q, inputs.total(), d], CHECK_ROWS, 1);
    let (mut got, mut want) = (Vec::new(), Vec::new());
    let mut first = 0;
    for &len in &inputs.lens {
        let mine: Vec<(usize, usize, usize)> =
            rows.iter().filter(|r| (first..first + len).contains(&r.2)).map(|&(_, h, r)| (0, h, r - first)).collect();
        if !mine.is_empty() {
            for &(_, h, i) in &mine {
                got.extend_from_slice(&o[((first + i) * heads_q + h) * d..][..d]);
            }
            let (q, k, v) =
                (rows_of(&inputs.q, first, len), rows_of(&inputs.k, first, len), rows_of(&inputs.v, first, len));
            want.extend(attention_rows_f64(&q, &k, &v, s.causal, scale, &mine));
        }
        first += len;
    }
    compare(&got, &want, Tolerance::of(variant).max_abs)
}

/// Checks then times `variant` (`wgmma` or `wgmma-fp8pv`) on the packed
/// batch `inputs` through [`Attention::run_packed`] in each launch mode:
/// the output poisoned, sampled rows of each sequence against the f64
/// reference of that sequence, then timed as
/// [`crate::bench::bench_decode_cache`] times.
/// TFLOP/s counts `sum 4 Hq L^2 D` ([`PackedInputs::flops`]); GB/s and
/// KV_TB/s every row of Q, K, V and O once. `graph-overlap` is refused:
/// these calls have no overlapped launch.
pub fn bench_packed(
    attn: &Attention,
    variant: Variant,
    inputs: &PackedInputs,
    cfg: &BenchConfig,
    modes: &[LaunchMode],
) -> Result<Vec<BenchRow>, AttnError> {
    cfg.plain_scores("bench_packed")?;
    if modes.contains(&LaunchMode::GraphOverlap) {
        return Err(AttnError::VariantUnavailable {
            variant: variant.name(),
            reason: "graph-overlap: a packed run through the device API has no overlapped launch".into(),
        });
    }
    let shape = inputs.shape;
    let opts = Options::new().causal(shape.causal).output(cfg.output);
    let mut run = PackedRun::new(attn, variant, inputs, &opts)?;
    run.poison()?;
    run.call()?;
    let o = run.output()?;
    let stats = check_per_sequence(inputs, &o, run.plan.problem().softmax_scale as f64, variant);
    let gate = Tolerance::of(variant);

    let launches = cfg.launches_for(time_on_stream(attn.stream(), || run.call())?);
    let cfg = cfg.with_launches(launches);
    let total = inputs.total();
    let kv_bytes = 2.0 * (total * shape.heads_kv * shape.head_dim) as f64;
    let q_bytes = 3.0 * (total * shape.heads_q * shape.head_dim) as f64;
    let mut rows = Vec::new();
    for &mode in modes {
        let counts = (cfg.warmup_launches.max(1), cfg.launches_per_sample);
        let t = time_calls(attn.stream(), cfg.samples, counts, mode, || run.call())?;
        let cache = CacheLayout::default();
        let label = RowLabel {
            variant,
            entry: run.plan.kernel().entry,
            shape,
            cache,
            packed: Some(inputs.lens.clone()),
            layout: crate::options::Layout::Bhsd,
        };
        let work = RowWork { flops: inputs.flops(), bytes: kv_bytes + q_bytes, kv_bytes };
        rows.push(BenchRow::timed(label, (mode, launches), &t, work, (&stats, gate)));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::{BenchShape, PackedInputs};

    #[test]
    fn a_packed_batch_counts_its_own_work_and_labels_itself() {
        let like = BenchShape::parse("1,8:2,999,64,causal").unwrap();
        let inputs = PackedInputs::random(&like, &[3, 0, 5]);
        assert_eq!(inputs.total(), 8);
        assert_eq!(inputs.prefix_sums(), [0, 3, 3, 8]);
        assert_eq!((inputs.shape.batch, inputs.shape.seq_q, inputs.shape.seq_kv), (3, 5, 5));
        assert_eq!(inputs.flops(), 4.0 * 8.0 * 64.0 * (9.0 + 25.0));
        assert_eq!(inputs.label(), "3,8:2,<=5,64,causal");
        assert_eq!(inputs.q.shape, [1, 8, 8, 64]);
        assert_eq!(inputs.k.shape, [1, 2, 8, 64]);
        let plain = PackedInputs::random(&BenchShape::parse("2,4,7,128").unwrap(), &[2]);
        assert_eq!(plain.label(), "1,4,<=2,128");
    }
}
