//! The only `unsafe` on the host: probing for the driver, turning off
//! cudarc's per-launch event tracking, launching a kernel, ([`raw`])
//! device memory and streams from other libraries' raw handles, and
//! ([`staging`]) the pinned copies of tensor maps made during graph capture.

pub(crate) mod cast;
pub mod raw;
pub(crate) mod staging;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, DeviceRepr, DriverError, LaunchConfig, PushKernelArg, sys,
};
use kernels_gpu::params::AttnParams;

/// The kernel argument block, marked as plain bytes for cudarc.
#[repr(transparent)]
struct KernelArgs(AttnParams);

// SAFETY: `AttnParams` is `repr(C)`, `Copy`, holds only integers and floats,
// and matches the kernels' parameter layout bit for bit (one shared type).
unsafe impl DeviceRepr for KernelArgs {}

/// Whether libcuda can be loaded (cudarc would panic on first use otherwise).
#[cfg(not(feature = "candle"))]
pub(crate) fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library by its known names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Whether libcuda is there: always, with the `candle` feature, where
/// candle's cudarc links it (`dynamic-linking`) instead of loading it, so a
/// program that runs has it.
#[cfg(feature = "candle")]
pub(crate) fn driver_present() -> bool {
    true
}

/// The CUDA driver's version as `1000 * major + 10 * minor` (13000 for 13.0).
pub(crate) fn driver_version() -> Result<i32, DriverError> {
    let mut version = 0;
    // SAFETY: the driver library is loaded (checked by the caller through
    // `driver_present`), and the out-pointer is a live local.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

/// One tensor map for `split`'s tensor copies (see [`TileMaps`]): the
/// E4M3 tensor of `heads` x `rows` rows of `head_dim` bytes at device
/// address `address`, rows `strides[0]` bytes apart and heads `strides[1]`
/// (`[heads, rows, head_dim]` contiguous: `head_dim` and `rows *
/// head_dim`; a paged cache `[pages, page_size, heads, head_dim]`:
/// `heads * head_dim` and `head_dim`), boxes of `head_dim x box_rows x 1`, the 64- or 128-byte swizzle (`head_dim`
/// 64 or 128), zeros past its edges. With `pairs` (`head_dim` 64, `rows`
/// and `box_rows` even) the same bytes as `[heads, rows / 2, 128]` in boxes
/// of `128 x box_rows / 2 x 1` under the 128-byte swizzle
/// (`KernelInfo::pair_rows`).
pub(crate) fn encode_tile_map(
    address: u64,
    head_dim: u32,
    (rows, heads): (u32, u32),
    strides: [u64; 2],
    box_rows: u32,
    pairs: bool,
) -> Result<[u64; 16], DriverError> {
    let (head_dim, rows, box_rows, strides) = if pairs {
        (2 * head_dim, rows / 2, box_rows / 2, [2 * strides[0], strides[1]])
    } else {
        (head_dim, rows, box_rows, strides)
    };
    let swizzle = if head_dim == 64 {
        sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B
    } else {
        sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B
    };
    let dims = [head_dim as u64, rows as u64, heads as u64];
    let boxes = [head_dim, box_rows, 1];
    let element_strides = [1u32; 3];
    // SAFETY: a plain array of integers; all-zero is a valid value to overwrite.
    let mut map: sys::CUtensorMap = unsafe { std::mem::zeroed() };
    // SAFETY: every pointer is to a live local of the length the rank (3)
    // requires; `address` is a device allocation holding every row the
    // dimensions and strides address (`heads * rows * head_dim` bytes: the
    // caller's validated tensor or pool), 16-byte aligned, the strides
    // multiples of 16 (multiples of head_dim, 64 or 128); the call only
    // writes `map`.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
            3,
            address as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
        .result()?;
    }
    Ok(map.opaque)
}

/// Stops cudarc from recording events around every launch, for a context
/// object `Attention::with_image` made for itself (contexts handed in by a
/// caller, `Attention::on_stream`, keep the caller's setting): the library
/// issues all its work on its one stream, in order, so they only cost time.
pub(crate) fn disable_event_tracking(ctx: &CudaContext) {
    // SAFETY: buffers made through this context object are made, used and
    // freed on the `Attention`'s one stream, so stream order alone keeps
    // them alive and ordered (cudarc's contract); tensors made on another
    // stream are ordered by an explicit join (`Attention::prepare`).
    unsafe { ctx.disable_event_tracking() }
}

/// Launches `func` over `params` on `stream` with geometry `cfg`; with
/// `overlap`, as a programmatic dependent launch
/// (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`): its blocks may
/// start while the previous kernel on the stream finishes, and order
/// themselves against it with `griddepcontrol.wait` (only the sm_90a image
/// has it; the caller checks).
///
/// Safety argument: the caller (`Attention::launch`, the only one) passes a
/// problem that was validated (shapes, head dim, sizes within the kernels'
/// index types, scales), `params` holding the device addresses of live
/// buffers whose lengths match it (owned by `DeviceProblem`/`DeviceOutput`
/// for at least as long as the stream runs), and the geometry and shared
/// memory of the kernel table the kernel was compiled from.
pub(crate) fn launch(
    stream: &CudaStream,
    func: &CudaFunction,
    cfg: LaunchConfig,
    params: AttnParams,
    overlap: bool,
) -> Result<(), DriverError> {
    let mut args = KernelArgs(params);
    if !overlap {
        let mut builder = stream.launch_builder(func);
        builder.arg(&args);
        // SAFETY: see the function's safety argument above.
        unsafe { builder.launch(cfg) }?;
        return Ok(());
    }
    stream.context().bind_to_thread()?;
    // SAFETY: a plain C struct and union of integers, for which all-zero
    // bytes are valid; the fields that matter are set below.
    let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attribute,
        numAttrs: 1,
    };
    let mut arg_pointers = [(&mut args as *mut KernelArgs).cast::<std::ffi::c_void>()];
    // SAFETY: see the function's safety argument above; `config`,
    // `attribute` and `args` outlive the call, which copies the arguments;
    // the function was loaded with its dynamic shared memory limit raised
    // as for the builder path; the context is bound to this thread.
    unsafe {
        sys::cuLaunchKernelEx(&config, func.cu_function(), arg_pointers.as_mut_ptr(), std::ptr::null_mut()).result()
    }
}

/// The quantizer's argument block, marked as plain bytes for cudarc.
#[repr(transparent)]
struct QuantizeArgs(kernels_gpu::quantize::QuantizeParams);

// SAFETY: `QuantizeParams` is `repr(C)`, `Copy`, holds only integers (three
// tensors of three u64 and two u32, a u64, then eight u32: no padding), and
// is the kernel's parameter type itself.
unsafe impl DeviceRepr for QuantizeArgs {}

/// Launches the quantizer (`func`, an entry of
/// `kernels_gpu::quantize::QUANTIZE_KERNELS`) over `params` on `stream`.
///
/// Safety argument: the caller (`Quantizer::quantize_into`, the only one)
/// checked the shape against the kernel (head dim, `u32` counts), derived
/// `params`' counts from it, and set the first `tiles_per_pass / (groups *
/// tiles_per_unit)` tensors' `input`, `codes` and `scales` to the device
/// addresses of live buffers on `stream`'s context holding at least the
/// elements and scale groups the shape needs (borrowed for the call; stream
/// order keeps later frees behind the kernel), the inputs 16-byte and the
/// codes 8-byte aligned; `params.scratch` is a live buffer of
/// `scratch_words(units)` zeroed words that only this quantizer's launches
/// on this stream use (each leaves it zero); `cfg` has
/// `kernels_gpu::quantize::blocks(tiles_per_pass)` blocks of `THREADS`
/// threads and no shared memory.
pub(crate) fn launch_quantize(
    stream: &CudaStream,
    func: &CudaFunction,
    cfg: LaunchConfig,
    params: kernels_gpu::quantize::QuantizeParams,
) -> Result<(), DriverError> {
    let args = QuantizeArgs(params);
    let mut builder = stream.launch_builder(func);
    builder.arg(&args);
    // SAFETY: see the function's safety argument above.
    unsafe { builder.launch(cfg) }?;
    Ok(())
}
