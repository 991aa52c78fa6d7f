//! The only `unsafe` on the host: probing for the driver, turning off
//! cudarc's per-launch event tracking, and launching a kernel.

use crate::validate::Problem;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, DeviceRepr, DriverError, LaunchConfig, PushKernelArg};
use kernels_gpu::params::AttnParams;
use kernels_gpu::schedule;

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

/// Launches the problem's kernel over `params` on `stream`.
///
/// Safety argument: `problem` was validated (shapes, head dim, sizes within
/// the kernels' index types, scales) and `params` holds the device addresses
/// of live buffers whose lengths match `problem` (built by
/// `DeviceProblem`/`DeviceOutput`, which own them for at least as long as
/// the stream runs); geometry and shared memory come from the kernel table
/// the kernel was compiled from.
pub(crate) fn launch(
    stream: &CudaStream,
    func: &CudaFunction,
    problem: &Problem,
    params: AttnParams,
) -> Result<(), DriverError> {
    let tiles = problem.kernel.tiles;
    let cfg = LaunchConfig {
        grid_dim: schedule::grid(tiles.block_m, problem.batch as u32, problem.heads_q as u32, problem.seq_q as u32),
        block_dim: (tiles.threads(), 1, 1),
        shared_mem_bytes: problem.kernel.smem_bytes,
    };
    let args = KernelArgs(params);
    let mut builder = stream.launch_builder(func);
    builder.arg(&args);
    // SAFETY: see the function's safety argument above.
    unsafe { builder.launch(cfg) }?;
    Ok(())
}
