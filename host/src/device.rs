//! The device API for frameworks: borrowed, typed views of buffers that
//! already live on the GPU (Q, K, V as E4M3 codes, O as f16 or bf16 bits,
//! the dequantization scales as f32), and the reusable [`Workspace`] a plan
//! needs, so that [`crate::Attention::run_views`] copies and allocates
//! nothing.
//!
//! ```no_run
//! # fn main() -> Result<(), sdpa::AttnError> {
//! use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, ScaleLayout};
//! let ctx = cudarc::driver::CudaContext::new(0)?;
//! let stream = ctx.new_stream()?; // the framework's stream
//! let attn = sdpa::Attention::on_stream(stream.clone(), sdpa::ImageChoice::Auto)?;
//! let (shape, opts) = ([1, 8, 512, 64], sdpa::Options::new().causal(true));
//! let plan = attn.plan_shapes(shape, shape, shape, &opts)?;
//! let mut ws = attn.workspace(&plan)?; // once, reused by every call
//! # let (q, k, v) = (stream.alloc_zeros::<u8>(1 << 18)?, stream.alloc_zeros::<u8>(1 << 18)?, stream.alloc_zeros::<u8>(1 << 18)?);
//! # let (qs, ks, vs) = (stream.alloc_zeros::<f32>(8)?, stream.alloc_zeros::<f32>(8)?, stream.alloc_zeros::<f32>(8)?);
//! let mut o = stream.alloc_zeros::<u16>(1 << 18)?;
//! let scales = DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead);
//! attn.run_views(
//!     &plan,
//!     &Fp8View::new(q.as_view(), shape)?,
//!     &Fp8View::new(k.as_view(), shape)?,
//!     &Fp8View::new(v.as_view(), shape)?,
//!     &scales,
//!     &mut OutputViewMut::new(o.as_view_mut(), sdpa::OutputDtype::F16, shape)?,
//!     &mut ws,
//! )?;
//! # Ok(()) }
//! ```
//!
//! Views check their own lengths against their shapes when made; `run_views`
//! checks them against the plan, their device and their alignment, so a
//! mistake is an [`AttnError`], never a launch. Scale *values* are not read
//! on the host: see [`DeviceScales`] for what a bad scale does.

use crate::error::AttnError;
use crate::options::Layout;
use crate::plan::Plan;
use crate::plan::target::Target;
use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DeviceSlice, SyncOnDrop};
use kernels_gpu::params::{DecodeSplits, KvTiles};
use kernels_gpu::variant::OutputDtype;
use kernels_gpu::variant::Variant;
use std::marker::PhantomData;

use crate::launch::staging::MapStaging;
pub use extras::RunExtras;
pub(crate) use map_slots::{MapSlot, MapSlots};
pub use packed::PackedSeqs;
pub use paged::{MAX_PAGE_SIZE, MIN_PAGE_SIZE, PagedKv};
pub(crate) use size::MAP_SLOTS;
pub use size::{CAPTURE_MAP_SLOTS, WorkspaceSize};
pub use strides::{RowStrides, STRIDE_ALIGN};

mod extras;
mod map_slots;
mod packed;
mod paged;
pub(crate) mod size;
mod strides;

/// Byte alignment the kernels need of Q, K, V and O (16-byte copies and
/// tensor copies).
pub const TENSOR_ALIGN: u64 = 16;

/// How the Q, K and V dequantization scales are laid out on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScaleLayout {
    /// One scale per head, shared by the batch: Q's `[Hq]`, K's and V's
    /// `[Hkv]` (as the host tensors' scales).
    PerHead,
    /// One scale per (batch, key/value head), FlashAttention-3's FP8
    /// descales: Q's, K's and V's each `[B, Hkv]`, row-major; the query
    /// heads of a group share their key/value head's Q scale.
    PerBatchHead,
}

impl ScaleLayout {
    /// How many scales Q's array and K's (and V's) arrays hold for inputs
    /// Q `[B, Hq, Sq, D]` and K, V `[B, Hkv, Skv, D]`.
    pub fn lens(self, q_shape: [usize; 4], kv_shape: [usize; 4]) -> (usize, usize) {
        match self {
            ScaleLayout::PerHead => (q_shape[1], kv_shape[1]),
            ScaleLayout::PerBatchHead => (kv_shape[0] * kv_shape[1], kv_shape[0] * kv_shape[1]),
        }
    }

    /// `kernels_gpu::params::AttnParams::scale_batch_stride` for `heads_kv`
    /// key/value heads.
    pub(crate) fn batch_stride(self, heads_kv: usize) -> u32 {
        match self {
            ScaleLayout::PerHead => 0,
            ScaleLayout::PerBatchHead => heads_kv as u32,
        }
    }
}

/// Device memory a view reads: a cudarc view (whose uses cudarc orders
/// across streams where its context tracks events), or a bare address from
/// another library ([`crate::raw`]) that is never freed here.
pub(crate) enum Memory<'a, T> {
    View(CudaView<'a, T>),
    Raw(RawMemory<'a>),
}

/// Device memory a view writes; as [`Memory`].
pub(crate) enum MemoryMut<'a, T> {
    View(CudaViewMut<'a, T>),
    Raw(RawMemory<'a>),
}

/// A device allocation owned elsewhere: its address, its length in
/// elements and its device; `'a` is the caller's promise of how long it
/// lives ([`crate::raw`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawMemory<'a> {
    pub(crate) address: u64,
    pub(crate) len: usize,
    pub(crate) ordinal: usize,
    pub(crate) lifetime: PhantomData<&'a ()>,
}

impl<T> Memory<'_, T> {
    fn len(&self) -> usize {
        match self {
            Memory::View(v) => v.len(),
            Memory::Raw(r) => r.len,
        }
    }

    fn ordinal(&self) -> usize {
        match self {
            Memory::View(v) => v.stream().context().ordinal(),
            Memory::Raw(r) => r.ordinal,
        }
    }

    /// The address for work on `stream`, and cudarc's guard that records
    /// the use when dropped (after the launch).
    pub(crate) fn address<'s>(&'s self, stream: &'s CudaStream) -> (u64, Option<SyncOnDrop<'s>>) {
        match self {
            Memory::View(v) => {
                let (address, guard) = v.device_ptr(stream);
                (address, Some(guard))
            }
            Memory::Raw(r) => (r.address, None),
        }
    }
}

impl<T> MemoryMut<'_, T> {
    fn len(&self) -> usize {
        match self {
            MemoryMut::View(v) => v.len(),
            MemoryMut::Raw(r) => r.len,
        }
    }

    fn ordinal(&self) -> usize {
        match self {
            MemoryMut::View(v) => v.stream().context().ordinal(),
            MemoryMut::Raw(r) => r.ordinal,
        }
    }

    /// As [`Memory::address`], for a write.
    pub(crate) fn address<'s>(&'s mut self, stream: &'s CudaStream) -> (u64, Option<SyncOnDrop<'s>>) {
        match self {
            MemoryMut::View(v) => {
                let (address, guard) = cudarc::driver::DevicePtrMut::device_ptr_mut(v, stream);
                (address, Some(guard))
            }
            MemoryMut::Raw(r) => (r.address, None),
        }
    }
}

/// An E4M3 tensor `[batch, heads, seq, head_dim]` on the device, contiguous
/// row-major in that order or as `[batch, seq, heads, head_dim]`
/// ([`Layout`]), or with its rows strided ([`Fp8View::bshd_strided`],
/// [`Fp8View::packed_strided`]), borrowed (Q, K or V).
pub struct Fp8View<'a> {
    pub(crate) codes: Memory<'a, u8>,
    shape: [usize; 4],
    layout: Layout,
    /// The rows' strides where they are not dense.
    strides: Option<RowStrides>,
}

impl<'a> Fp8View<'a> {
    /// E4M3 codes as bytes; `codes` must hold exactly the shape's elements
    /// ([`AttnError::BufferLength`] otherwise).
    pub fn new(codes: CudaView<'a, u8>, shape: [usize; 4]) -> Result<Fp8View<'a>, AttnError> {
        Fp8View::checked(Memory::View(codes), shape)
    }

    /// E4M3 codes typed as `float8::F8E4M3` (cudarc's `f8` type), viewed as
    /// their bytes without a copy.
    pub fn from_e4m3(codes: CudaView<'a, float8::F8E4M3>, shape: [usize; 4]) -> Result<Fp8View<'a>, AttnError> {
        Fp8View::new(crate::launch::cast::e4m3_as_bytes(codes), shape)
    }

    /// E4M3 codes laid out `[batch, seq, heads, head_dim]`
    /// ([`Layout::Bshd`], FlashAttention's), given in that order; its
    /// [`Fp8View::shape`] reads `[batch, heads, seq, head_dim]`. Run by
    /// plans made with [`crate::Options::layout`] `Bshd`.
    pub fn bshd(codes: CudaView<'a, u8>, [batch, seq, heads, head_dim]: [usize; 4]) -> Result<Fp8View<'a>, AttnError> {
        Ok(Fp8View::new(codes, [batch, heads, seq, head_dim])?.laid_out(Layout::Bshd))
    }

    /// E4M3 codes of a packed batch's Q, K or V, `[total_rows, heads,
    /// head_dim]` ([`crate::Attention::run_packed`]); its
    /// [`Fp8View::shape`] reads `[1, total_rows, heads, head_dim]`.
    pub fn packed(codes: CudaView<'a, u8>, [rows, heads, head_dim]: [usize; 3]) -> Result<Fp8View<'a>, AttnError> {
        Fp8View::new(codes, [1, rows, heads, head_dim])
    }

    /// [`Fp8View::bshd`] whose rows lie `strides` apart (a slice of a
    /// larger tensor, e.g. Q of a fused `[batch, seq, 3, heads, head_dim]`
    /// QKV): `codes` starts at element `[0, 0, 0, 0]` and holds at least the
    /// elements up to the last one ([`RowStrides::extent`]). Batch `b`'s
    /// position `s` is row `b * seq + s`. Taken by the plans of
    /// [`Layout::Bshd`] (Q, K and V; `decode`: K and V) with K and V of
    /// equal strides ([`AttnError::InvalidStrides`] otherwise).
    pub fn bshd_strided(
        codes: CudaView<'a, u8>,
        [batch, seq, heads, head_dim]: [usize; 4],
        strides: RowStrides,
    ) -> Result<Fp8View<'a>, AttnError> {
        Fp8View::strided(Memory::View(codes), [batch, heads, seq, head_dim], Layout::Bshd, strides)
    }

    /// [`Fp8View::packed`] whose rows lie `strides` apart, checked as
    /// [`Fp8View::bshd_strided`].
    pub fn packed_strided(
        codes: CudaView<'a, u8>,
        [rows, heads, head_dim]: [usize; 3],
        strides: RowStrides,
    ) -> Result<Fp8View<'a>, AttnError> {
        Fp8View::strided(Memory::View(codes), [1, rows, heads, head_dim], Layout::Bhsd, strides)
    }

    pub(crate) fn checked(codes: Memory<'a, u8>, shape: [usize; 4]) -> Result<Fp8View<'a>, AttnError> {
        check_len("codes", codes.len(), shape)?;
        Ok(Fp8View { codes, shape, layout: Layout::Bhsd, strides: None })
    }

    /// A view of `shape` (`[batch, heads, seq, head_dim]` order) whose
    /// `batch * seq` rows (for `Bhsd`, a packed view's `[1, rows, heads,
    /// head_dim]`: its rows) lie `strides` apart; dense strides make a dense
    /// view.
    pub(crate) fn strided(
        codes: Memory<'a, u8>,
        shape: [usize; 4],
        layout: Layout,
        strides: RowStrides,
    ) -> Result<Fp8View<'a>, AttnError> {
        let [rows, heads, head_dim] = strided_rows(shape, layout);
        let extent = strides.check("codes", [rows, heads, head_dim])?;
        if codes.len() < extent {
            return Err(AttnError::BufferLength { tensor: "codes".into(), expected: extent, actual: codes.len() });
        }
        let strides = Some(strides).filter(|s| !s.is_dense(heads, head_dim));
        Ok(Fp8View { codes, shape, layout, strides })
    }

    /// The same codes read as laid out `layout` (the shape stays `[batch,
    /// heads, seq, head_dim]`).
    pub(crate) fn laid_out(self, layout: Layout) -> Fp8View<'a> {
        Fp8View { layout, ..self }
    }

    /// `[batch, heads, seq, head_dim]`, whatever the layout.
    pub fn shape(&self) -> [usize; 4] {
        self.shape
    }

    /// How the codes lie in memory.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The rows' strides where they are not dense; `None` for a dense view.
    pub fn row_strides(&self) -> Option<RowStrides> {
        self.strides
    }

    /// The device the codes live on.
    pub fn ordinal(&self) -> usize {
        self.codes.ordinal()
    }
}

/// The output `[batch, heads_q, seq_q, head_dim]` on the device,
/// contiguous row-major in that order or as `[batch, seq_q, heads_q,
/// head_dim]` ([`Layout`]), borrowed for writing: 16-bit elements, f16 or
/// bf16 bits.
pub struct OutputViewMut<'a> {
    pub(crate) bits: MemoryMut<'a, u16>,
    dtype: OutputDtype,
    shape: [usize; 4],
    layout: Layout,
}

impl<'a> OutputViewMut<'a> {
    /// Elements of `dtype` as their bits; `bits` must hold exactly the
    /// shape's elements ([`AttnError::BufferLength`] otherwise).
    pub fn new(bits: CudaViewMut<'a, u16>, dtype: OutputDtype, shape: [usize; 4]) -> Result<Self, AttnError> {
        OutputViewMut::checked(MemoryMut::View(bits), dtype, shape)
    }

    /// A whole `half::f16` buffer (cudarc's `f16` type), written as bits.
    pub fn from_f16(o: &'a mut CudaSlice<half::f16>, shape: [usize; 4]) -> Result<Self, AttnError> {
        OutputViewMut::new(crate::launch::cast::halves_as_bits(o), OutputDtype::F16, shape)
    }

    /// A whole `half::bf16` buffer (cudarc's `f16` feature's bf16), written
    /// as bits.
    pub fn from_bf16(o: &'a mut CudaSlice<half::bf16>, shape: [usize; 4]) -> Result<Self, AttnError> {
        OutputViewMut::new(crate::launch::cast::halves_as_bits(o), OutputDtype::Bf16, shape)
    }

    /// An output laid out `[batch, seq_q, heads_q, head_dim]`
    /// ([`Layout::Bshd`]), given in that order; its shape reads `[batch,
    /// heads_q, seq_q, head_dim]`.
    pub fn bshd(
        bits: CudaViewMut<'a, u16>,
        dtype: OutputDtype,
        [batch, seq, heads, head_dim]: [usize; 4],
    ) -> Result<Self, AttnError> {
        Ok(OutputViewMut::new(bits, dtype, [batch, heads, seq, head_dim])?.laid_out(Layout::Bshd))
    }

    /// A packed batch's output, `[total_q, heads_q, head_dim]` 16-bit
    /// values ([`crate::Attention::run_packed`]); its shape reads `[1,
    /// total_q, heads_q, head_dim]`.
    pub fn packed(
        bits: CudaViewMut<'a, u16>,
        dtype: OutputDtype,
        [rows, heads, head_dim]: [usize; 3],
    ) -> Result<Self, AttnError> {
        OutputViewMut::new(bits, dtype, [1, rows, heads, head_dim])
    }

    pub(crate) fn checked(bits: MemoryMut<'a, u16>, dtype: OutputDtype, shape: [usize; 4]) -> Result<Self, AttnError> {
        check_len("o", bits.len(), shape)?;
        Ok(OutputViewMut { bits, dtype, shape, layout: Layout::Bhsd })
    }

    /// The same buffer written as laid out `layout` (the shape stays
    /// `[batch, heads_q, seq_q, head_dim]`).
    pub(crate) fn laid_out(self, layout: Layout) -> Self {
        OutputViewMut { layout, ..self }
    }

    /// `[batch, heads_q, seq_q, head_dim]`, whatever the layout.
    pub fn shape(&self) -> [usize; 4] {
        self.shape
    }

    /// How the elements lie in memory.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// What the elements are.
    pub fn dtype(&self) -> OutputDtype {
        self.dtype
    }

    /// The device the buffer lives on.
    pub fn ordinal(&self) -> usize {
        self.bits.ordinal()
    }
}

/// The f32 dequantization scales of Q, K and V on the device (real value =
/// fp8 value x scale), laid out as [`ScaleLayout`] says.
///
/// The host never reads them, so it cannot refuse a bad one: the kernels
/// use what they find. A NaN, infinite, zero or negative scale, or a
/// product `softmax_scale x q_scale x k_scale` that overflows f32, gives
/// NaN (or meaningless) output rows for the heads it belongs to, and the
/// other heads' rows are unaffected; a V scale with `448 x v_scale` past the
/// output type's range (65504 for f16) can give infinite elements. The host
/// API ([`crate::Attention::plan`]) refuses all of these. The `wgmma`
/// kernels choose their fused or unfused exponent per block from the scales
/// they read, so a plan from shapes alone runs as fast as one from host
/// tensors.
pub struct DeviceScales<'a> {
    pub(crate) q: Memory<'a, f32>,
    pub(crate) k: Memory<'a, f32>,
    pub(crate) v: Memory<'a, f32>,
    layout: ScaleLayout,
}

impl<'a> DeviceScales<'a> {
    /// Q's, K's and V's scales, each a view of exactly the length `layout`
    /// gives for the plan's shapes ([`ScaleLayout::lens`]; checked when run).
    pub fn new(q: CudaView<'a, f32>, k: CudaView<'a, f32>, v: CudaView<'a, f32>, layout: ScaleLayout) -> Self {
        DeviceScales { q: Memory::View(q), k: Memory::View(k), v: Memory::View(v), layout }
    }

    pub(crate) fn from_memory(q: Memory<'a, f32>, k: Memory<'a, f32>, v: Memory<'a, f32>, layout: ScaleLayout) -> Self {
        DeviceScales { q, k, v, layout }
    }

    /// How the scales are laid out.
    pub fn layout(&self) -> ScaleLayout {
        self.layout
    }

    /// Checks the arrays' lengths and devices against the shapes of Q
    /// and K/V.
    pub(crate) fn check(&self, q_shape: [usize; 4], kv_shape: [usize; 4], ordinal: usize) -> Result<(), AttnError> {
        let (q_len, kv_len) = self.layout.lens(q_shape, kv_shape);
        for (name, memory, expected) in
            [("q_scale", &self.q, q_len), ("k_scale", &self.k, kv_len), ("v_scale", &self.v, kv_len)]
        {
            if memory.len() != expected {
                return Err(AttnError::BufferLength { tensor: name.to_string(), expected, actual: memory.len() });
            }
            check_device(name, memory.ordinal(), ordinal)?;
        }
        Ok(())
    }
}

impl WorkspaceSize {
    /// What `plan` needs on `target`.
    pub fn of(plan: &Plan, target: Target) -> WorkspaceSize {
        let kernel = plan.kernel();
        let scratch = if kernel.prepass.is_some() {
            kv_tiles_of(plan).total_bytes()
        } else if kernel.merge.is_some() {
            decode_splits_of(plan).total_bytes()
        } else {
            0
        };
        WorkspaceSize { scratch_bytes: scratch as usize, tile_maps: target.sm90a && kernel.variant.uses_tile_maps() }
    }
}

/// The device scratch plans need, allocated once
/// ([`crate::Attention::workspace`]) and reused, so a run allocates
/// nothing. A workspace too small for a plan is refused with
/// [`AttnError::WorkspaceTooSmall`]; [`crate::Attention::grow_workspace`]
/// enlarges one explicitly.
///
/// Kernels that copy tiles by tensor copies (the `split` family, and
/// `wgmma` at D = 64, on sm_90a) also need Q's, K's and V's tensor maps,
/// which name the buffers' addresses. The workspace keeps
/// [`CAPTURE_MAP_SLOTS`] + 1 slots of maps, each found by what it holds
/// (the maps' dimensions and the three addresses), since maps once written
/// never change:
/// - a run with maps a slot holds copies nothing, inside CUDA-graph
///   capture too: run once eagerly with the buffers a graph will use, and
///   the captured graph holds only the kernel launch;
/// - a run outside capture with new maps encodes them on the host and
///   copies them (384 bytes, in stream order) into an empty slot or the
///   least recently used one no capture used;
/// - a capture with new maps records the copy from pinned host memory into
///   a slot of their own, so each replay runs that copy before the kernel.
///
/// A slot a capture used is kept for the workspace's life (a graph may
/// replay it); when [`CAPTURE_MAP_SLOTS`] are kept, a capture with yet
/// other buffers is refused with [`AttnError::WorkspaceInCapture`] (use
/// another workspace), and runs outside capture still have a slot.
///
/// A graph captured with a workspace uses its memory: keep the workspace
/// alive while the graph may replay, and order replays and other runs with
/// the same workspace on one stream (they share the scratch and the slots).
pub struct Workspace {
    pub(crate) ordinal: usize,
    pub(crate) size: WorkspaceSize,
    pub(crate) scratch: Option<CudaSlice<u8>>,
    /// [`MAP_SLOTS`] sets of tensor maps (`TileMaps`, 48 words each).
    pub(crate) tile_maps: Option<CudaSlice<u64>>,
    /// The pinned host sources of the slots captures filled (slot `i`'s at
    /// index `i`).
    pub(crate) staging: Option<MapStaging>,
    /// What each slot holds.
    pub(crate) map_slots: MapSlots<TileMapKey>,
}

/// What a set of tensor maps is made from, all it depends on: the
/// dimensions of Q's and K/V's maps and the three addresses
/// (`attention::encode_tile_maps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TileMapKey {
    pub(crate) head_dim: u32,
    /// Q's rows per head and heads (batch x heads), and its box rows.
    pub(crate) q_rows: u32,
    pub(crate) q_heads: u32,
    pub(crate) q_box_rows: u32,
    /// K's and V's rows per head and heads, and their box rows.
    pub(crate) kv_rows: u32,
    pub(crate) kv_heads: u32,
    pub(crate) kv_box_rows: u32,
    /// Bytes from one K/V row to the next, and from one head to the next
    /// (`head_dim` and `kv_rows * head_dim` where each head's rows are
    /// contiguous; a paged cache's heads interleave within a row).
    pub(crate) kv_strides: [u64; 2],
    /// The kernel reads row pairs (`KernelInfo::pair_rows`).
    pub(crate) pair_rows: bool,
    /// Q's, K's and V's device addresses.
    pub(crate) addresses: [u64; 3],
}

impl TileMapKey {
    /// The maps `plan`'s kernel reads for inputs at `addresses`, K's and
    /// V's rows `kv` apart where rows interleave heads (packed and `[B, S,
    /// H, D]` plans; `[B, H, S, D]` ones take their rows dense).
    pub(crate) fn of(plan: &Plan, addresses: [u64; 3], kv: kernels_gpu::params::RowStrides) -> TileMapKey {
        let (p, kernel) = (plan.problem(), plan.kernel());
        // `decode` reads Q as its folded heads (`params::DecodeSplits`).
        let (q_rows, q_heads) = if kernel.variant == Variant::Decode {
            (p.fold_rows(), p.folded_heads())
        } else {
            (p.seq_q, p.batch * p.heads_q)
        };
        let dense = TileMapKey {
            head_dim: p.head_dim as u32,
            q_rows: q_rows as u32,
            q_heads: q_heads as u32,
            q_box_rows: kernel.tiles.block_m,
            kv_rows: p.seq_kv as u32,
            kv_heads: (p.batch * p.heads_kv) as u32,
            kv_box_rows: kernel.tiles.block_n,
            kv_strides: [p.head_dim as u64, (p.seq_kv * p.head_dim) as u64],
            pair_rows: kernel.pair_rows,
            addresses,
        };
        // A packed batch's K and V are `[total_k, heads_kv, D]`: every
        // sequence's rows, heads interleaved within a row (the kernels add
        // the sequence's first row), and so are `[B, S, H, D]` tensors. Its
        // Q, which the packed kernels do not copy by tensor copies, is
        // described as `total_q * heads_q` rows; `decode`'s (one row per
        // sequence, alike in both layouts) as its folded rows.
        let Some(rows) = p.interleaved_rows() else {
            return dense;
        };
        let interleaved_kv = TileMapKey {
            kv_rows: rows.total_k as u32,
            kv_heads: p.heads_kv as u32,
            kv_strides: [kv.row as u64, kv.head as u64],
            ..dense
        };
        if kernel.variant == Variant::Decode {
            interleaved_kv
        } else {
            TileMapKey { q_rows: (rows.total_q * p.heads_q) as u32, q_heads: 1, ..interleaved_kv }
        }
    }

    /// This key with K's and V's maps over the pools of `paged`: rows
    /// `pages * page_size`, heads `heads_kv`, interleaved.
    pub(crate) fn paged(self, paged: &PagedKv) -> TileMapKey {
        let [pages, page_size, heads_kv, head_dim] = paged.k.shape();
        TileMapKey {
            kv_rows: (pages * page_size) as u32,
            kv_heads: heads_kv as u32,
            kv_strides: [(heads_kv * head_dim) as u64, head_dim as u64],
            ..self
        }
    }
}

impl Workspace {
    /// What it holds.
    pub fn size(&self) -> WorkspaceSize {
        self.size
    }

    /// The device it lives on.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }
}

/// The layout of a plan's `kv_tiles` scratch (one prepass block per tile).
pub(crate) fn kv_tiles_of(plan: &Plan) -> KvTiles {
    let (p, pv_e4m3) = (plan.problem(), plan.variant().pv_e4m3());
    let [d, b, hkv] = [p.head_dim, p.batch, p.heads_kv].map(|x| x as u32);
    match p.interleaved_rows() {
        None => KvTiles::new(d, b, hkv, p.seq_kv as u32, pv_e4m3),
        Some(rows) => KvTiles::packed(d, b, hkv, rows.total_k as u32, pv_e4m3),
    }
}

/// The layout of a `decode` plan's partial results (none for one split).
pub(crate) fn decode_splits_of(plan: &Plan) -> DecodeSplits {
    let p = plan.problem();
    let [b, hq, hkv, sq] = [p.batch, p.heads_q, p.heads_kv, p.seq_q].map(|x| x as u32);
    DecodeSplits::new(p.head_dim as u32, b, hq, hkv, sq, plan.kv_splits())
}

/// Refuses a buffer of `len` elements for `shape`.
fn check_len(tensor: &str, len: usize, shape: [usize; 4]) -> Result<(), AttnError> {
    let expected = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    match expected {
        Some(expected) if expected == len => Ok(()),
        Some(expected) => Err(AttnError::BufferLength { tensor: tensor.to_string(), expected, actual: len }),
        None => Err(AttnError::TooLarge(format!("{tensor} shape {shape:?} overflows the address space"))),
    }
}

/// The rows, heads and head dimension a strided view of `shape` (`[batch,
/// heads, seq, head_dim]` order) spans: `batch * seq` rows laid out `Bshd`,
/// a packed view's (`[1, rows, heads, head_dim]`) rows laid out `Bhsd`.
pub(crate) fn strided_rows([batch, heads, seq, head_dim]: [usize; 4], layout: Layout) -> [usize; 3] {
    match layout {
        Layout::Bshd => [batch.saturating_mul(seq), heads, head_dim],
        Layout::Bhsd => [batch.saturating_mul(heads), seq, head_dim],
    }
}

/// Refuses memory on device `ordinal` for an `Attention` on `expected`.
pub(crate) fn check_device(tensor: &'static str, ordinal: usize, expected: usize) -> Result<(), AttnError> {
    if ordinal == expected { Ok(()) } else { Err(AttnError::WrongDevice { tensor, ordinal, expected }) }
}

/// Refuses an address not aligned to `align` bytes.
pub(crate) fn check_align(tensor: &'static str, address: u64, align: u64) -> Result<(), AttnError> {
    if address.is_multiple_of(align) { Ok(()) } else { Err(AttnError::Misaligned { tensor, address, align }) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Options;
    use crate::validate::Problem;
    use kernels_gpu::kernels::KERNELS;
    use kernels_gpu::variant::Variant;

    const HOPPER: Target = Target { sm90a: true, multiprocessors: 132 };
    const ADA: Target = Target { sm90a: false, multiprocessors: 58 };

    fn plan(q: [usize; 4], kv: [usize; 4], variant: Variant, target: Target) -> Plan {
        let opts = Options::new().variant(variant);
        Plan::new(Problem::new(q, kv, kv, &opts).unwrap(), opts.variant, target).unwrap()
    }

    #[test]
    fn scale_lengths_follow_the_layout() {
        let (q, kv) = ([3, 8, 100, 64], [3, 2, 300, 64]);
        assert_eq!(ScaleLayout::PerHead.lens(q, kv), (8, 2));
        // FlashAttention-3's descales: [B, Hkv] for all three.
        assert_eq!(ScaleLayout::PerBatchHead.lens(q, kv), (6, 6));
        assert_eq!(ScaleLayout::PerHead.batch_stride(2), 0);
        assert_eq!(ScaleLayout::PerBatchHead.batch_stride(2), 2);
    }

    #[test]
    fn workspace_size_is_the_prepass_scratch_and_the_tile_maps_the_kernel_reads() {
        let (q, kv) = ([2, 8, 1000, 128], [2, 4, 1000, 128]);
        let wgmma = plan(q, kv, Variant::Wgmma, HOPPER);
        let size = WorkspaceSize::of(&wgmma, HOPPER);
        assert_eq!(size.scratch_bytes as u64, kv_tiles_of(&wgmma).total_bytes());
        // `wgmma`'s prepass cuts `Vt`; K comes by tensor copies.
        assert!(size.scratch_bytes > 0 && size.tile_maps);
        assert_eq!(size.bytes(), size.scratch_bytes + 384 * MAP_SLOTS);
        // `split` on sm_90a copies by tensor copies and has no prepass; on sm_89 neither.
        let split = WorkspaceSize::of(&plan(q, kv, Variant::Split, HOPPER), HOPPER);
        assert_eq!(split, WorkspaceSize { scratch_bytes: 0, tile_maps: true });
        assert_eq!(split.bytes(), 384 * MAP_SLOTS);
        assert_eq!(WorkspaceSize::of(&plan(q, kv, Variant::Split, ADA), ADA), WorkspaceSize::default());
        let mma = WorkspaceSize::of(&plan(q, kv, Variant::Mma, HOPPER), HOPPER);
        assert_eq!(mma, WorkspaceSize::default());
        // A workspace for all serves all; `split`'s or `mma`'s alone does
        // not serve `wgmma`.
        let all = size.max(split).max(mma);
        assert!(all.holds(size) && all.holds(split) && all.holds(mma) && size.holds(split));
        assert!(!split.holds(size) && !mma.holds(split));
        assert!(WorkspaceSize::default().holds(WorkspaceSize::default()));
        // A longer key sequence needs more scratch.
        let longer = WorkspaceSize::of(&plan(q, [2, 4, 4000, 128], Variant::Wgmma, HOPPER), HOPPER);
        assert!(!size.holds(longer) && longer.holds(size));
    }

    #[test]
    fn every_kernel_with_a_prepass_needs_scratch() {
        let mut checked = 0;
        for kernel in KERNELS.iter().filter(|k| k.prepass.is_some() && k.runs_on(256, 256)) {
            let d = kernel.tiles.head_dim as usize;
            let opts = Options::new().variant(kernel.variant).output(kernel.output);
            let problem = Problem::new([1, 2, 256, d], [1, 2, 256, d], [1, 2, 256, d], &opts).unwrap();
            let p = Plan::new(problem, opts.variant, HOPPER).unwrap().with_kernel(kernel).unwrap();
            assert!(WorkspaceSize::of(&p, HOPPER).scratch_bytes > 0, "{}", kernel.entry);
            checked += 1;
        }
        assert!(checked >= 4, "only {checked} kernels with a prepass");
    }

    #[test]
    fn buffer_lengths_alignment_and_devices_are_typed_errors() {
        assert!(check_len("codes", 2 * 3 * 4 * 64, [2, 3, 4, 64]).is_ok());
        match check_len("codes", 10, [2, 3, 4, 64]) {
            Err(AttnError::BufferLength { tensor, expected: 1536, actual: 10 }) => assert_eq!(tensor, "codes"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(check_len("o", 0, [usize::MAX, 2, 1, 1]), Err(AttnError::TooLarge(_))));
        assert!(check_align("q", 0x7f00_0000_0100, TENSOR_ALIGN).is_ok());
        assert!(matches!(
            check_align("k", 0x7f00_0000_0101, TENSOR_ALIGN),
            Err(AttnError::Misaligned { tensor: "k", align: 16, .. })
        ));
        assert!(check_align("q_scale", 0x104, 4).is_ok());
        assert!(matches!(
            check_device("v", 1, 0),
            Err(AttnError::WrongDevice { tensor: "v", ordinal: 1, expected: 0 })
        ));
    }
}
