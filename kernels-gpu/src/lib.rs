//! FP8 (E4M3) scaled-dot-product attention kernels, written in Rust.
//!
//! This crate is compiled twice:
//! - for `nvptx64-nvidia-cuda` (as a `cdylib`, giving PTX): the kernels and
//!   their entry points;
//! - for the host (as an `rlib`): the launch geometry, tile constants, masks,
//!   the FP8 codec, the kernel table and the launch ABI's enums, so host
//!   code, xtask and the CPU emulation in the tests use the very same index
//!   math as the GPU. Which kernel runs a problem is the host's choice
//!   (`sdpa::plan`).
//!
//! Only `arch` (built for nvptx only) contains inline assembly.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod fp8;
pub mod kernels;
pub mod layout;
pub mod params;
pub mod quantize;
pub mod record;
pub mod schedule;
pub mod softmax;
pub mod tiles;
pub mod variant;
pub mod window;

#[cfg(target_arch = "nvptx64")]
pub mod arch;
#[cfg(target_arch = "nvptx64")]
pub mod attention;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; there is nothing to unwind on the GPU.
    unsafe { core::arch::nvptx::trap() }
}
