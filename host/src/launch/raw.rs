//! Device memory and streams from raw handles, for bindings that get them
//! from another library (PyTorch's data pointers and current stream,
//! candle built on another cudarc version): the views made here never own
//! nor free what they point at. Also the reinterpretations of typed cudarc
//! buffers (E4M3, f16, bf16) as the bytes and bits the kernels take.

use crate::device::{
    DeviceScales, Fp8View, Memory, MemoryMut, OutputViewMut, PackedSeqs, PagedKv, RawMemory, RowStrides, RunExtras,
    ScaleLayout, strided_rows,
};
use crate::error::AttnError;
use crate::options::Layout;
use cudarc::driver::{CudaContext, CudaStream, sys};
use kernels_gpu::variant::OutputDtype;
use std::marker::PhantomData;
use std::sync::Arc;

/// A cudarc stream for a CUDA stream another library owns (e.g.
/// `torch.cuda.current_stream().cuda_stream`), on `ctx`; dropping it does
/// not destroy the stream. Pass it to [`crate::Attention::on_stream`].
///
/// # Safety
/// `stream` is a live CUDA stream of `ctx`'s CUDA context (for PyTorch,
/// the device's primary context, which `CudaContext::new(ordinal)`
/// retains), and its owner keeps it alive while the returned stream, or an
/// `Attention` made on it, is used.
pub unsafe fn borrow_stream(ctx: &Arc<CudaContext>, stream: sys::CUstream) -> Arc<CudaStream> {
    // SAFETY: the caller's promise above is cudarc's contract for this call.
    unsafe { ctx.wrap_borrowed_stream(stream) }
}

impl<'a> Fp8View<'a> {
    /// The E4M3 tensor of `shape` at device address `address` (its
    /// `shape.product()` bytes), on `stream`'s device. Checks what the driver
    /// can tell: that `address` is device memory of that device
    /// ([`AttnError::WrongDevice`], [`AttnError::NotDeviceMemory`]) whose
    /// allocation holds the bytes ([`AttnError::BufferLength`]).
    ///
    /// # Safety
    /// The memory stays allocated, and is not written by other work while
    /// attention may read it, for `'a`; work that writes it is ordered
    /// before the run on the run's stream.
    pub unsafe fn from_raw(stream: &CudaStream, address: u64, shape: [usize; 4]) -> Result<Fp8View<'a>, AttnError> {
        let len = elements("codes", shape)?;
        Fp8View::checked(Memory::Raw(raw_memory(stream, "codes", address, len, 1)?), shape)
    }

    /// The E4M3 tensor laid out `[batch, seq, heads, head_dim]`
    /// ([`Layout::Bshd`], as [`Fp8View::bshd`] takes it) at device address
    /// `address`, checked as [`Fp8View::from_raw`].
    ///
    /// # Safety
    /// As [`Fp8View::from_raw`].
    pub unsafe fn from_raw_bshd(
        stream: &CudaStream,
        address: u64,
        [batch, seq, heads, head_dim]: [usize; 4],
    ) -> Result<Fp8View<'a>, AttnError> {
        // SAFETY: the caller's promise, for the same bytes in another order.
        let view = unsafe { Fp8View::from_raw(stream, address, [batch, heads, seq, head_dim]) }?;
        Ok(view.laid_out(Layout::Bshd))
    }

    /// [`Fp8View::bshd_strided`]'s view at device address `address` (the
    /// element `[0, 0, 0, 0]`), checked as [`Fp8View::from_raw`] over the
    /// elements it spans ([`RowStrides::extent`]).
    ///
    /// # Safety
    /// As [`Fp8View::from_raw`], for the elements the view spans.
    pub unsafe fn from_raw_bshd_strided(
        stream: &CudaStream,
        address: u64,
        [batch, seq, heads, head_dim]: [usize; 4],
        strides: RowStrides,
    ) -> Result<Fp8View<'a>, AttnError> {
        // SAFETY: forwarded.
        unsafe { Fp8View::from_raw_strided(stream, address, [batch, heads, seq, head_dim], Layout::Bshd, strides) }
    }

    /// [`Fp8View::packed_strided`]'s view at device address `address`,
    /// checked as [`Fp8View::from_raw_bshd_strided`].
    ///
    /// # Safety
    /// As [`Fp8View::from_raw`], for the elements the view spans.
    pub unsafe fn from_raw_packed_strided(
        stream: &CudaStream,
        address: u64,
        [rows, heads, head_dim]: [usize; 3],
        strides: RowStrides,
    ) -> Result<Fp8View<'a>, AttnError> {
        // SAFETY: forwarded.
        unsafe { Fp8View::from_raw_strided(stream, address, [1, rows, heads, head_dim], Layout::Bhsd, strides) }
    }

    /// A strided view of `shape` (`[batch, heads, seq, head_dim]` order) at
    /// `address` ([`Fp8View::strided`]).
    ///
    /// # Safety
    /// As [`Fp8View::from_raw`], for the elements the view spans.
    unsafe fn from_raw_strided(
        stream: &CudaStream,
        address: u64,
        shape: [usize; 4],
        layout: Layout,
        strides: RowStrides,
    ) -> Result<Fp8View<'a>, AttnError> {
        let extent = strides.check("codes", strided_rows(shape, layout))?;
        Fp8View::strided(Memory::Raw(raw_memory(stream, "codes", address, extent, 1)?), shape, layout, strides)
    }
}

impl<'a> OutputViewMut<'a> {
    /// The output of `shape` and `dtype` at device address `address` (its
    /// `shape.product()` 16-bit elements), checked as [`Fp8View::from_raw`].
    ///
    /// # Safety
    /// The memory stays allocated, and is neither read nor written by other
    /// work while attention may write it, for `'a`.
    pub unsafe fn from_raw(
        stream: &CudaStream,
        address: u64,
        dtype: OutputDtype,
        shape: [usize; 4],
    ) -> Result<OutputViewMut<'a>, AttnError> {
        let len = elements("o", shape)?;
        OutputViewMut::checked(MemoryMut::Raw(raw_memory(stream, "o", address, len, 2)?), dtype, shape)
    }

    /// The output laid out `[batch, seq_q, heads_q, head_dim]`
    /// ([`Layout::Bshd`], as [`OutputViewMut::bshd`] takes it) at device
    /// address `address`, checked as [`Fp8View::from_raw`].
    ///
    /// # Safety
    /// As [`OutputViewMut::from_raw`].
    pub unsafe fn from_raw_bshd(
        stream: &CudaStream,
        address: u64,
        dtype: OutputDtype,
        [batch, seq, heads, head_dim]: [usize; 4],
    ) -> Result<OutputViewMut<'a>, AttnError> {
        // SAFETY: the caller's promise, for the same elements in another
        // order.
        let view = unsafe { OutputViewMut::from_raw(stream, address, dtype, [batch, heads, seq, head_dim]) }?;
        Ok(view.laid_out(Layout::Bshd))
    }
}

impl<'a> DeviceScales<'a> {
    /// Q's, K's and V's f32 scales at device addresses `addresses` (Q's,
    /// K's, V's), of lengths `lens` (elements; as [`ScaleLayout::lens`]
    /// gives, checked when run), laid out as `layout`; each checked as
    /// [`Fp8View::from_raw`].
    ///
    /// # Safety
    /// As [`Fp8View::from_raw`], for each array.
    pub unsafe fn from_raw(
        stream: &CudaStream,
        addresses: [u64; 3],
        lens: [usize; 3],
        layout: ScaleLayout,
    ) -> Result<DeviceScales<'a>, AttnError> {
        let memory = |name, i: usize| raw_memory(stream, name, addresses[i], lens[i], 4).map(Memory::Raw);
        Ok(DeviceScales::from_memory(memory("q_scale", 0)?, memory("k_scale", 1)?, memory("v_scale", 2)?, layout))
    }
}

impl<'a> PackedSeqs<'a> {
    /// A packed batch's int32 prefix sums at device addresses `addresses`
    /// (`cu_seqlens_q`'s, `cu_seqlens_k`'s) of `entries` elements each
    /// (`batch + 1`), and the longest `[queries, keys]` lengths: as
    /// [`PackedSeqs::new`] takes them, each array checked as
    /// [`Fp8View::from_raw`].
    ///
    /// # Safety
    /// As [`Fp8View::from_raw`], for each array.
    pub unsafe fn from_raw(
        stream: &CudaStream,
        addresses: [u64; 2],
        entries: [usize; 2],
        max_seqlen: [usize; 2],
    ) -> Result<PackedSeqs<'a>, AttnError> {
        let memory = |name, i: usize| raw_memory(stream, name, addresses[i], entries[i], 4).map(Memory::Raw);
        PackedSeqs::checked(memory("cu_seqlens_q", 0)?, memory("cu_seqlens_k", 1)?, max_seqlen)
    }
}

impl<'a> PagedKv<'a> {
    /// [`PagedKv::new`] on K and V pools made by [`Fp8View::from_raw`] and
    /// the int32 page table (`[batch, max_pages]`, `table_shape`) at device
    /// address `table`, checked as [`Fp8View::from_raw`].
    ///
    /// # Safety
    /// As [`Fp8View::from_raw`], for the table.
    pub unsafe fn from_raw(
        stream: &CudaStream,
        k: Fp8View<'a>,
        v: Fp8View<'a>,
        table: u64,
        [batch, max_pages]: [usize; 2],
    ) -> Result<PagedKv<'a>, AttnError> {
        let entries = batch.checked_mul(max_pages).ok_or_else(|| AttnError::TooLarge("page table".into()))?;
        let table = raw_memory(stream, "page_table", table, entries, 4)?;
        PagedKv::checked(k, v, Memory::Raw(table), [batch, max_pages])
    }
}

impl<'a> RunExtras<'a> {
    /// [`RunExtras::seq_used_k`] from the `len` int32 elements at device
    /// address `address`, checked as [`Fp8View::from_raw`].
    ///
    /// # Safety
    /// As [`Fp8View::from_raw`].
    pub unsafe fn seq_used_k_from_raw(self, stream: &CudaStream, address: u64, len: usize) -> Result<Self, AttnError> {
        let lens = raw_memory(stream, "seq_used_k", address, len, 4)?;
        Ok(RunExtras { seq_used_k: Some(Memory::Raw(lens)), ..self })
    }

    /// [`RunExtras::lse`] into the `len` f32 elements at device address
    /// `address`, checked as [`Fp8View::from_raw`].
    ///
    /// # Safety
    /// As [`OutputViewMut::from_raw`].
    pub unsafe fn lse_from_raw(self, stream: &CudaStream, address: u64, len: usize) -> Result<Self, AttnError> {
        let lse = raw_memory(stream, "lse", address, len, 4)?;
        Ok(RunExtras { lse: Some(MemoryMut::Raw(lse)), ..self })
    }
}

/// Elements of `shape`, or the overflow error.
fn elements(tensor: &str, shape: [usize; 4]) -> Result<usize, AttnError> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| AttnError::TooLarge(format!("{tensor} shape {shape:?} overflows the address space")))
}

/// `len` elements of `size` bytes at `address`, checked against what the
/// driver knows of the address: device memory of `stream`'s device, inside
/// one allocation.
fn raw_memory<'a>(
    stream: &CudaStream,
    tensor: &'static str,
    address: u64,
    len: usize,
    size: usize,
) -> Result<RawMemory<'a>, AttnError> {
    let ordinal = stream.context().ordinal();
    let (device, start, range) =
        pointer_range(stream, address).map_err(|_| AttnError::NotDeviceMemory { tensor, address })?;
    crate::device::check_device(tensor, device, ordinal)?;
    let available = if address < start { 0 } else { (start + range as u64 - address) as usize / size };
    if available < len {
        return Err(AttnError::BufferLength { tensor: tensor.to_string(), expected: len, actual: available });
    }
    Ok(RawMemory { address, len, ordinal, lifetime: PhantomData })
}

/// The device ordinal, allocation start and allocation size of a device
/// address, as the driver reports them (an error for an address that is not
/// device memory).
fn pointer_range(stream: &CudaStream, address: u64) -> Result<(usize, u64, usize), cudarc::driver::DriverError> {
    stream.context().bind_to_thread()?;
    let (mut ordinal, mut start, mut size): (i32, u64, usize) = (-1, 0, 0);
    let mut attributes = [
        sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut data = [
        (&mut ordinal as *mut i32).cast::<std::ffi::c_void>(),
        (&mut start as *mut u64).cast::<std::ffi::c_void>(),
        (&mut size as *mut usize).cast::<std::ffi::c_void>(),
    ];
    // SAFETY: three attributes and three out-pointers to live locals of the
    // types the driver writes for them (int, CUdeviceptr, size_t); the call
    // only reads the driver's records of `address`.
    unsafe {
        sys::cuPointerGetAttributes(attributes.len() as u32, attributes.as_mut_ptr(), data.as_mut_ptr(), address)
            .result()?;
    }
    if ordinal < 0 || size == 0 {
        return Err(cudarc::driver::DriverError(sys::cudaError_enum::CUDA_ERROR_INVALID_VALUE));
    }
    Ok((ordinal as usize, start, size))
}
