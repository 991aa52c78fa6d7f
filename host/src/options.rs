//! How to run attention: the caller's options, and the variant choice they
//! carry.

use crate::error::AttnError;
use kernels_gpu::variant::{OutputDtype, Variant};
use kernels_gpu::window::KeyWindow;

/// Which variant runs a problem: the library's recommendation for the
/// device and the problem (the default), or one variant by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum VariantChoice {
    /// The recommendation (`plan::recommend::recommended`): on sm_90a the
    /// variant a cost model fitted on H100 timings predicts fastest, or a
    /// rule outside its keys; elsewhere `split` or `mma`. It never picks a
    /// lower-precision variant ([`Variant::lower_precision`]).
    #[default]
    Auto,
    /// This variant, whatever the problem.
    Fixed(Variant),
}

impl VariantChoice {
    /// The name of [`VariantChoice::Auto`] on the command line.
    pub const AUTO: &'static str = "auto";

    /// "auto", or the fixed variant's stable name.
    pub const fn name(self) -> &'static str {
        match self {
            VariantChoice::Auto => Self::AUTO,
            VariantChoice::Fixed(v) => v.name(),
        }
    }

    /// Reads "auto" or a variant's stable name, with an error that lists
    /// the known ones.
    pub fn from_name(name: &str) -> Result<VariantChoice, AttnError> {
        if name == Self::AUTO {
            return Ok(VariantChoice::Auto);
        }
        Variant::from_name(name).map(VariantChoice::Fixed).ok_or_else(|| unknown_variant(name, true))
    }
}

impl From<Variant> for VariantChoice {
    fn from(variant: Variant) -> Self {
        VariantChoice::Fixed(variant)
    }
}

/// How Q, K, V and O lie in memory. Shapes are always given in the order
/// `[batch, heads, seq, head_dim]`; the layout says which of heads and
/// positions is the outer one. The last dimension is contiguous in both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Layout {
    /// `[batch, heads, seq, head_dim]` contiguous: each head's rows follow
    /// each other (PyTorch's `scaled_dot_product_attention` on contiguous
    /// tensors). Every variant runs it.
    #[default]
    Bhsd,
    /// `[batch, seq, heads, head_dim]` contiguous: one position's heads
    /// follow each other (FlashAttention's `flash_attn_func`, and what a
    /// `[B, S, H * D]` projection reshapes to). The log-sum-exp output
    /// follows it, `[batch, seq_q, heads_q]`. Run by the `wgmma` variants
    /// (sm_90a); the recommendation takes `wgmma`.
    Bshd,
}

impl Layout {
    /// Every layout, in declaration order.
    pub const ALL: [Layout; 2] = [Layout::Bhsd, Layout::Bshd];

    /// The stable name: "bhsd" or "bshd".
    pub const fn name(self) -> &'static str {
        match self {
            Layout::Bhsd => "bhsd",
            Layout::Bshd => "bshd",
        }
    }

    /// Reads a stable name.
    pub fn from_name(name: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.name() == name)
    }

    /// `[batch, heads, seq, head_dim]` as the memory holds it: unchanged,
    /// or `[batch, seq, heads, head_dim]`.
    pub const fn memory_order(self, [b, h, s, d]: [usize; 4]) -> [usize; 4] {
        match self {
            Layout::Bhsd => [b, h, s, d],
            Layout::Bshd => [b, s, h, d],
        }
    }

    /// Where row `(b, h, s)` of a `[batch, heads, seq, head_dim]` tensor of
    /// `shape` starts (an element index) as this layout lays it in memory.
    pub const fn row_offset(self, [_, heads, seq, d]: [usize; 4], (b, h, s): (usize, usize, usize)) -> usize {
        match self {
            Layout::Bhsd => ((b * heads + h) * seq + s) * d,
            Layout::Bshd => ((b * seq + s) * heads + h) * d,
        }
    }

    /// The elements of a `[batch, heads, seq, head_dim]` tensor of `shape`
    /// in `[batch, heads, seq, head_dim]` order, laid out as this layout
    /// lays them in memory (e.g. a host tensor's E4M3 codes to upload for
    /// `Fp8View::bshd`; a one-batch tensor's `Bshd` order is a packed
    /// batch's `[rows, heads, head_dim]`).
    pub fn arrange<T: Copy>(self, values: &[T], shape: [usize; 4]) -> Vec<T> {
        self.reorder(values, shape, false)
    }

    /// The inverse of [`Layout::arrange`]: elements laid out as this
    /// layout lays them (e.g. an output read back from `OutputViewMut::bshd`)
    /// in `[batch, heads, seq, head_dim]` order.
    pub fn to_bhsd<T: Copy>(self, values: &[T], shape: [usize; 4]) -> Vec<T> {
        self.reorder(values, shape, true)
    }

    /// Rows of `head_dim` elements moved between `[B, H, S, D]` order and
    /// this layout's (`back`: from it).
    fn reorder<T: Copy>(self, values: &[T], [batch, heads, seq, d]: [usize; 4], back: bool) -> Vec<T> {
        assert_eq!(
            values.len(),
            batch * heads * seq * d,
            "Layout: {} elements for shape {:?}",
            values.len(),
            [batch, heads, seq, d]
        );
        if self == Layout::Bhsd {
            return values.to_vec();
        }
        let mut out = Vec::with_capacity(values.len());
        // Row `(b, i, j)` of the order written: `(b, h, s)` from `[B, S,
        // H, D]` (back) or `(b, s, h)` from `[B, H, S, D]`.
        let (outer, inner) = if back { (heads, seq) } else { (seq, heads) };
        for b in 0..batch {
            for i in 0..outer {
                for j in 0..inner {
                    let row = (b * inner + j) * outer + i;
                    out.extend_from_slice(&values[row * d..][..d]);
                }
            }
        }
        out
    }
}

/// How to run attention: `Options::new()` (the defaults) and its setters,
/// e.g. `Options::new().causal(true).output(OutputDtype::Bf16)`. More
/// fields may come, so outside this crate it is built by its setters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Options {
    /// Causal masking, aligned so the last query sees the last key.
    pub causal: bool,
    /// Softmax scale; `None` means `1 / sqrt(head_dim)`.
    pub scale: Option<f32>,
    /// Which kernel variant runs: the recommendation by default.
    pub variant: VariantChoice,
    /// The element type of O: f16 (the default) or bf16, whose range lifts
    /// f16's limit on V's scales.
    pub output: OutputDtype,
    /// How the device views lie in memory ([`Layout::Bhsd`] by default).
    pub layout: Layout,
    /// The keys each query row sees around its position (bottom-right
    /// aligned like causal masking, which narrows it further): every key
    /// by default. Runs on the variants with score twins
    /// (`plan::SCORES_SUPPORTED`; docs/device-api.md).
    pub window: KeyWindow,
    /// Scores `s` become `cap * tanh(s / cap)` before the softmax; `None`
    /// (the default) leaves them. Runs where windows do.
    pub softcap: Option<f32>,
}

impl Options {
    /// The defaults: not causal, `1 / sqrt(head_dim)`, the recommended
    /// variant, f16 output, `[batch, heads, seq, head_dim]` tensors.
    pub fn new() -> Options {
        Options::default()
    }

    /// With causal masking or without.
    pub fn causal(self, causal: bool) -> Options {
        Options { causal, ..self }
    }

    /// With softmax scale `scale` (instead of `1 / sqrt(head_dim)`).
    pub fn scale(self, scale: f32) -> Options {
        Options { scale: Some(scale), ..self }
    }

    /// With the variant `variant` (a [`Variant`] or a [`VariantChoice`]).
    pub fn variant(self, variant: impl Into<VariantChoice>) -> Options {
        Options { variant: variant.into(), ..self }
    }

    /// With output element type `output`.
    pub fn output(self, output: OutputDtype) -> Options {
        Options { output, ..self }
    }

    /// With the tensors in layout `layout`.
    pub fn layout(self, layout: Layout) -> Options {
        Options { layout, ..self }
    }

    /// With a sliding window: query row `i`, at key position `i + Skv -
    /// Sq`, sees the keys from `left` before it to `right` after it;
    /// `None` for no limit on a side (FlashAttention's `window_size`, its
    /// -1 being `None`).
    pub fn window(self, left: Option<u32>, right: Option<u32>) -> Options {
        Options { window: KeyWindow::new(left, right), ..self }
    }

    /// With scores capped at `cap` (`cap * tanh(s / cap)`, Gemma 2's
    /// softcap; `cap` above 0, at most `kernels_gpu::window::MAX_SOFTCAP`).
    pub fn softcap(self, cap: f32) -> Options {
        Options { softcap: Some(cap), ..self }
    }
}

/// Looks a variant up by name, with an error that lists the known ones.
pub fn variant_by_name(name: &str) -> Result<Variant, AttnError> {
    Variant::from_name(name).ok_or_else(|| unknown_variant(name, false))
}

/// The error for an unknown variant name: the known names, "auto" first
/// where it is one.
fn unknown_variant(name: &str, with_auto: bool) -> AttnError {
    let names = Variant::ALL.map(Variant::name);
    let known = if with_auto { [&[VariantChoice::AUTO][..], &names].concat() } else { names.to_vec() };
    AttnError::UnknownVariant { name: name.to_string(), known: known.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::Layout;

    #[test]
    fn bshd_puts_each_row_at_its_batch_position_and_head_and_back() {
        let shape = [2, 3, 4, 2];
        let [b, h, s, d] = shape;
        let values: Vec<u32> = (0..(b * h * s * d) as u32).collect();
        let laid = Layout::Bshd.arrange(&values, shape);
        let arranged = Layout::ALL.map(|layout| (layout, layout.arrange(&values, shape)));
        for (bi, hi, si, di) in
            (0..b).flat_map(|x| (0..h).flat_map(move |y| (0..s).flat_map(move |z| (0..d).map(move |w| (x, y, z, w)))))
        {
            assert_eq!(laid[((bi * s + si) * h + hi) * d + di], values[((bi * h + hi) * s + si) * d + di]);
            for (layout, laid) in &arranged {
                let at = layout.row_offset(shape, (bi, hi, si)) + di;
                assert_eq!(laid[at], values[((bi * h + hi) * s + si) * d + di], "{layout:?}");
            }
        }
        assert_eq!(Layout::Bshd.to_bhsd(&laid, shape), values);
        assert_eq!(Layout::Bhsd.arrange(&values, shape), values);
        assert_eq!(Layout::Bhsd.to_bhsd(&values, shape), values);
    }
}
