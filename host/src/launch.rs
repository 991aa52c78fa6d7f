//! The only `unsafe` on the host: probing for the driver, turning off
//! cudarc's per-launch event tracking, and launching a kernel.

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, DeviceRepr, DriverError, LaunchConfig, PushKernelArg};
use kernels_gpu::params::AttnParams;

/// The kernel argument block, marked as plain bytes for cudarc.
#[repr(transparent)]
struct KernelArgs(AttnParams);

// SAFETY: `AttnParams` is `repr(C)`, `Copy`, holds only integers and floats,
// and matches the kernels' parameter layout bit for bit (one shared type).
unsafe impl DeviceRepr for KernelArgs {}

/// Whether libcuda can be loaded (cudarc would panic on first use otherwise).
pub(crate) fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library by its known names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// The CUDA driver's version as `1000 * major + 10 * minor` (13000 for 13.0).
pub(crate) fn driver_version() -> Result<i32, DriverError> {
    let mut version = 0;
    // SAFETY: the driver library is loaded (checked by the caller through
    // `driver_present`), and the out-pointer is a live local.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

/// Stops cudarc from recording events around every launch: the library uses
/// one stream, in order, so they only cost time.
pub(crate) fn disable_event_tracking(ctx: &CudaContext) {
    // SAFETY: all work is issued on the context's single default stream, so
    // stream order alone keeps buffers alive and ordered (cudarc's contract).
    unsafe { ctx.disable_event_tracking() }
}

/// Launches `func` over `params` on `stream` with geometry `cfg`.
///
/// Safety argument: the caller (`Attention::run`, the only one) passes a
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
) -> Result<(), DriverError> {
    let args = KernelArgs(params);
    let mut builder = stream.launch_builder(func);
    builder.arg(&args);
    // SAFETY: see the function's safety argument above.
    unsafe { builder.launch(cfg) }?;
    Ok(())
}
