//! Input validation: every check runs before anything is launched, and each
//! failure is an [`AttnError`] that names the problem.

use crate::error::AttnError;
use crate::options::{Layout, Options};
use crate::tensor::Fp8Input;
use kernels_gpu::fp8::E4M3_MAX;
use kernels_gpu::kernels::HEAD_DIMS;
use kernels_gpu::kernels::ScoreForm;
use kernels_gpu::schedule::{MAX_GRID_YZ, MAX_SEQ_LEN};
use kernels_gpu::softmax;
use kernels_gpu::variant::OutputDtype;
use kernels_gpu::window::{KeyWindow, MAX_SOFTCAP};

/// A validated problem: sizes, softmax scale, masking, output type and the
/// inputs' per-head scales. Which kernel runs it is the plan's choice
/// (`crate::plan::Plan`).
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// Batch size B.
    pub batch: usize,
    /// Query heads Hq.
    pub heads_q: usize,
    /// Key/value heads Hkv.
    pub heads_kv: usize,
    /// Query length Sq.
    pub seq_q: usize,
    /// Key/value length Skv.
    pub seq_kv: usize,
    /// Head dimension D.
    pub head_dim: usize,
    /// The softmax scale actually used.
    pub softmax_scale: f32,
    /// Causal masking.
    pub causal: bool,
    /// The keys each row sees around its position, as asked for (causal
    /// masking not folded in: [`Problem::key_window`]).
    pub window: KeyWindow,
    /// The score cap, if any (validated: above 0, at most
    /// [`MAX_SOFTCAP`]).
    pub softcap: Option<f32>,
    /// The element type of O.
    pub output: OutputDtype,
    /// The inputs' per-head dequantization scales, as validated: Q's, then
    /// K's, then V's (empty for a problem validated from its shapes alone,
    /// [`Problem::new`]).
    pub scales: Vec<f32>,
    /// A packed batch of sequences of their own lengths
    /// ([`Problem::packed`]): the rows of Q and of K; `None` for
    /// `[B, H, S, D]` and `[B, S, H, D]` tensors.
    pub packed: Option<PackedRows>,
    /// How the tensors of a batch of equal lengths lie in memory
    /// ([`Layout::Bhsd`] for a packed batch, whose layout is its own).
    pub layout: Layout,
}

/// The rows of a packed batch's tensors: Q and O `[total_q, heads_q,
/// head_dim]`, K and V `[total_k, heads_kv, head_dim]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedRows {
    /// Rows of Q (every sequence's queries).
    pub total_q: usize,
    /// Rows of K and V (every sequence's keys).
    pub total_k: usize,
}

impl Problem {
    /// Validates the shapes and options (not the buffers nor the scales; see
    /// [`validate`]).
    pub fn new(
        q_shape: [usize; 4],
        k_shape: [usize; 4],
        v_shape: [usize; 4],
        opts: &Options,
    ) -> Result<Problem, AttnError> {
        for (tensor, shape) in [("q", q_shape), ("k", k_shape), ("v", v_shape)] {
            if shape.contains(&0) {
                return Err(AttnError::ZeroDimension { tensor, shape });
            }
        }
        if k_shape != v_shape {
            return Err(AttnError::ShapeMismatch(format!("k is {k_shape:?} but v is {v_shape:?}")));
        }
        let [batch, heads_q, seq_q, head_dim] = q_shape;
        let [kv_batch, heads_kv, seq_kv, kv_dim] = k_shape;
        if kv_batch != batch {
            return Err(AttnError::ShapeMismatch(format!("q has batch {batch} but k/v have batch {kv_batch}")));
        }
        if kv_dim != head_dim {
            return Err(AttnError::ShapeMismatch(format!("q has head_dim {head_dim} but k/v have head_dim {kv_dim}")));
        }
        if !HEAD_DIMS.iter().any(|&d| d as usize == head_dim) {
            return Err(AttnError::UnsupportedHeadDim { head_dim, supported: HEAD_DIMS.to_vec() });
        }
        if heads_q % heads_kv != 0 {
            return Err(AttnError::HeadsNotDivisible { heads_q, heads_kv });
        }
        for (what, len) in [("seq_q", seq_q), ("seq_kv", seq_kv)] {
            if len >= MAX_SEQ_LEN as usize {
                return Err(AttnError::TooLarge(format!("{what} = {len} must be below {MAX_SEQ_LEN}")));
            }
        }
        for (what, n) in [("batch", batch), ("heads_q", heads_q)] {
            if n > MAX_GRID_YZ as usize {
                return Err(AttnError::TooLarge(format!("{what} = {n} exceeds the grid limit {MAX_GRID_YZ}")));
            }
        }
        for (what, shape) in [("q", q_shape), ("k", k_shape)] {
            if element_count(shape).is_none_or(|n| n > isize::MAX as usize) {
                return Err(AttnError::TooLarge(format!("{what} shape {shape:?} overflows the address space")));
            }
        }
        if opts.layout == Layout::Bshd {
            check_interleaved_rows(batch * seq_q, batch * seq_kv)?;
        }
        let softmax_scale = opts.scale.unwrap_or(1.0 / (head_dim as f32).sqrt());
        check_scale("softmax scale", softmax_scale)?;
        if let Some(cap) = opts.softcap {
            check_scale("softcap", cap)?;
            if cap > MAX_SOFTCAP {
                let why = format!("the kernels take caps up to {MAX_SOFTCAP}");
                return Err(AttnError::ScaleOutOfRange { what: "softcap".into(), value: cap, why });
            }
        }
        Ok(Problem {
            batch,
            heads_q,
            heads_kv,
            seq_q,
            seq_kv,
            head_dim,
            softmax_scale,
            causal: opts.causal,
            window: opts.window,
            softcap: opts.softcap,
            output: opts.output,
            scales: Vec::new(),
            packed: None,
            layout: opts.layout,
        })
    }

    /// Validates a packed batch of `batch` sequences (FlashAttention's
    /// variable-length layout): Q `[total_q, heads_q, head_dim]`, K and V
    /// `[total_k, heads_kv, head_dim]`, no sequence longer than
    /// `max_seqlen = [queries, keys]`. The problem is planned as `[batch,
    /// heads, max_seqlen, head_dim]` (the grid covers the longest
    /// sequence) with the rows kept in [`Problem::packed`].
    pub fn packed(
        q_shape: [usize; 3],
        k_shape: [usize; 3],
        v_shape: [usize; 3],
        batch: usize,
        max_seqlen: [usize; 2],
        opts: &Options,
    ) -> Result<Problem, AttnError> {
        if k_shape != v_shape {
            return Err(AttnError::ShapeMismatch(format!("k is {k_shape:?} but v is {v_shape:?}")));
        }
        let ([total_q, heads_q, head_dim], [total_k, heads_kv, kv_dim]) = (q_shape, k_shape);
        check_interleaved_rows(total_q, total_k)?;
        let [max_q, max_k] = max_seqlen;
        let mut problem = Problem::new(
            [batch, heads_q, max_q, head_dim],
            [batch, heads_kv, max_k, kv_dim],
            [batch, heads_kv, max_k, kv_dim],
            &Options { layout: Layout::Bhsd, ..*opts },
        )?;
        for (what, shape) in [("q", q_shape), ("k", k_shape)] {
            if shape.contains(&0) {
                return Err(AttnError::ZeroDimension { tensor: what, shape: [1, shape[0], shape[1], shape[2]] });
            }
        }
        problem.packed = Some(PackedRows { total_q, total_k });
        Ok(problem)
    }

    /// The keys each row sees: the window asked for, causal masking
    /// folded in (`KeyWindow::with_causal`).
    pub fn key_window(&self) -> KeyWindow {
        self.window.with_causal(self.causal)
    }

    /// Which scores the problem's kernel entry computes: plain (every key,
    /// or causal masking), under a window, or capped (and under a window,
    /// perhaps the full one).
    pub fn score_form(&self) -> ScoreForm {
        match (self.softcap, self.window.is_full()) {
            (Some(_), _) => ScoreForm::Softcap,
            (None, false) => ScoreForm::Window,
            (None, true) => ScoreForm::Plain,
        }
    }

    /// Rows of one folded head as `decode` sees it: the `Hq / Hkv` query
    /// heads of a key/value head, `Sq` rows each
    /// (`kernels_gpu::params::DecodeSplits`).
    pub fn fold_rows(&self) -> usize {
        self.seq_q * (self.heads_q / self.heads_kv)
    }

    /// Folded heads over the batch (`decode`): `B * Hkv`.
    pub fn folded_heads(&self) -> usize {
        self.batch * self.heads_kv
    }

    /// The shapes of a packed batch's Q and K views as
    /// [`crate::device::Fp8View::packed`] makes them: `[1, total_q, Hq, D]`
    /// and `[1, total_k, Hkv, D]`; `None` for a dense problem.
    pub fn packed_shapes(&self) -> Option<([usize; 4], [usize; 4])> {
        let rows = self.packed?;
        Some(([1, rows.total_q, self.heads_q, self.head_dim], [1, rows.total_k, self.heads_kv, self.head_dim]))
    }

    /// The rows of Q and K where a row holds every head of one position:
    /// a packed batch's, or `[B, S, H, D]` tensors' (`B * Sq` and `B *
    /// Skv`, sequences of equal lengths without prefix sums). The packed
    /// twins of the `wgmma` kernels run both. `None` for `[B, H, S, D]`.
    pub fn interleaved_rows(&self) -> Option<PackedRows> {
        match (self.packed, self.layout) {
            (Some(rows), _) => Some(rows),
            (None, Layout::Bshd) => {
                Some(PackedRows { total_q: self.batch * self.seq_q, total_k: self.batch * self.seq_kv })
            }
            (None, Layout::Bhsd) => None,
        }
    }

    /// The query blocks of `block_m` rows over every sequence of a packed
    /// batch or `[B, S, H, D]` tensors (the packed twins' grid,
    /// `kernels_gpu::schedule::first_packed_block`): `total_q / block_m +
    /// batch`; 0 for `[B, H, S, D]` tensors.
    pub fn packed_query_blocks(&self, block_m: u32) -> usize {
        self.interleaved_rows().map_or(0, |rows| rows.total_q / block_m as usize + self.batch)
    }

    /// `[B, Hq, Sq, D]`.
    pub fn q_shape(&self) -> [usize; 4] {
        [self.batch, self.heads_q, self.seq_q, self.head_dim]
    }

    /// `[B, Hkv, Skv, D]`.
    pub fn kv_shape(&self) -> [usize; 4] {
        [self.batch, self.heads_kv, self.seq_kv, self.head_dim]
    }

    /// Elements of Q (and O).
    pub fn q_len(&self) -> usize {
        self.q_shape().iter().product()
    }

    /// Elements of K (and V).
    pub fn kv_len(&self) -> usize {
        self.kv_shape().iter().product()
    }

    /// Floating-point operations of the two matrix products, `4 B Hq Sq Skv D`
    /// (not halved for causal: the usual convention for a dense count).
    pub fn flops(&self) -> f64 {
        4.0 * (self.batch * self.heads_q) as f64 * self.seq_q as f64 * self.seq_kv as f64 * self.head_dim as f64
    }

    /// The fewest bytes a kernel must move: Q, K, V once (1 byte each), O once (2 bytes).
    pub fn min_bytes(&self) -> f64 {
        (2 * self.kv_len() + 3 * self.q_len()) as f64
    }
}

/// Validates host tensors and options together: shapes, buffer lengths,
/// per-head scale counts and values.
pub fn validate<T: Fp8Input>(q: &T, k: &T, v: &T, opts: &Options) -> Result<Problem, AttnError> {
    if opts.layout != Layout::Bhsd {
        return Err(AttnError::LayoutUnavailable {
            layout: opts.layout.name(),
            reason: "tensors given whole (Fp8Input) are [B, H, S, D]; other layouts run through device views \
                     (Attention::plan_shapes and run_views)"
                .into(),
        });
    }
    let mut problem = Problem::new(q.shape(), k.shape(), v.shape(), opts)?;
    for (name, t) in [("q", q), ("k", k), ("v", v)] {
        let expected = t.shape().iter().product::<usize>();
        if t.code_count() != expected {
            return Err(AttnError::BufferLength { tensor: name.to_string(), expected, actual: t.code_count() });
        }
        let heads = t.shape()[1];
        if t.scales().len() != heads {
            return Err(AttnError::BufferLength {
                tensor: format!("{name}_scale"),
                expected: heads,
                actual: t.scales().len(),
            });
        }
        for (h, &s) in t.scales().iter().enumerate() {
            check_scale(&format!("{name}_scale[{h}]"), s)?;
        }
    }
    check_scale_products(&problem, q, k, v)?;
    problem.scales = [q.scales(), k.scales(), v.scales()].concat();
    Ok(problem)
}

/// Refuses a batch whose rows, every head of a position in one row, the
/// kernels cannot index: `total_q` rows of Q and `total_k` of K each below
/// `i32::MAX` (FlashAttention's int32 prefix sums; the kernels count rows
/// in 32 bits).
fn check_interleaved_rows(total_q: usize, total_k: usize) -> Result<(), AttnError> {
    for (what, rows) in [("q", total_q), ("k", total_k)] {
        if rows >= i32::MAX as usize {
            return Err(AttnError::TooLarge(format!("{what} has {rows} rows of every head: at most {}", i32::MAX - 1)));
        }
    }
    Ok(())
}

impl Problem {
    /// Checks that `q`, `k` and `v` are inputs this problem was validated
    /// with: the same shapes and scales, and buffers of the lengths their
    /// shapes need (cheap: no scale is judged again).
    pub fn check_inputs<T: Fp8Input>(&self, q: &T, k: &T, v: &T) -> Result<(), AttnError> {
        for (name, t, shape) in [("q", q, self.q_shape()), ("k", k, self.kv_shape()), ("v", v, self.kv_shape())] {
            if t.shape() != shape {
                return Err(AttnError::NotPlanned(format!("{name} is {:?}, the plan's is {shape:?}", t.shape())));
            }
            let expected = shape.iter().product::<usize>();
            if t.code_count() != expected {
                return Err(AttnError::BufferLength { tensor: name.to_string(), expected, actual: t.code_count() });
            }
        }
        if [q.scales(), k.scales(), v.scales()].concat() != self.scales {
            return Err(AttnError::NotPlanned("the inputs' scales are not the plan's".into()));
        }
        Ok(())
    }
}

/// The kernels fold `softmax_scale * q_scale * k_scale * log2(e)` into one
/// f32 factor and multiply raw E4M3 dot products (up to `448^2 * D` in
/// magnitude) by it, and write outputs up to `448 * v_scale` in the output
/// type: refuse scales whose factor underflows to 0, whose scores could
/// overflow f32, or whose outputs could overflow the output type, instead of
/// returning NaN or Inf.
fn check_scale_products<T: Fp8Input>(p: &Problem, q: &T, k: &T, v: &T) -> Result<(), AttnError> {
    let group = p.heads_q / p.heads_kv;
    let max_dot = E4M3_MAX * E4M3_MAX * p.head_dim as f32;
    for (h, &qs) in q.scales().iter().enumerate() {
        let Some(&ks) = k.scales().get(h / group) else { continue };
        let factor = softmax::score_scale_log2(p.softmax_scale, qs, ks);
        if !(factor > 0.0 && (factor * max_dot).is_finite()) {
            return Err(AttnError::ScaleOutOfRange {
                what: format!("softmax scale x q_scale[{h}] x k_scale[{}]", h / group),
                value: p.softmax_scale * qs * ks,
                why: format!(
                    "the kernels' f32 score factor (times raw dot products up to {max_dot}) underflows or overflows"
                ),
            });
        }
    }
    let output = p.output;
    for (h, &vs) in v.scales().iter().enumerate() {
        if vs * E4M3_MAX > output.max() {
            let more = match output {
                OutputDtype::F16 => format!(
                    "; bf16 output (--out-dtype bf16, Options::output) holds up to {:.2e}",
                    OutputDtype::Bf16.max()
                ),
                OutputDtype::Bf16 => String::new(),
            };
            return Err(AttnError::ScaleOutOfRange {
                what: format!("v_scale[{h}]"),
                value: vs,
                why: format!("outputs up to 448 x it must fit {} (max {:e}){more}", output.name(), output.max()),
            });
        }
    }
    Ok(())
}

fn check_scale(what: &str, value: f32) -> Result<(), AttnError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(AttnError::InvalidScale { what: what.to_string(), value })
    }
}

fn element_count(shape: [usize; 4]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}
