//! Turns the `kernels-gpu` crate into PTX (rustc's `nvptx64-nvidia-cuda`
//! target) and PTX into cubins (`ptxas`), for each supported arch. It plays
//! the role rust-cuda's `cuda_builder` would; `host/build.rs` and `xtask`
//! both use it, so there is one recipe.

pub mod launch_bounds;
pub mod report;
pub mod shipped;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A GPU architecture the kernels are built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arch {
    /// The `-C target-cpu` / `ptxas -arch` name, e.g. `sm_90a`.
    pub name: &'static str,
    /// Compute capability as (major, minor).
    pub capability: (u32, u32),
}

impl Arch {
    /// Whether it is an arch-specific target (`sm_90a`): its code runs only
    /// on devices of exactly its capability.
    pub fn arch_specific(&self) -> bool {
        self.name.ends_with('a')
    }
}

/// Hopper (H100/H200): the arch we win on.
pub const SM_90A: Arch = Arch { name: "sm_90a", capability: (9, 0) };
/// Ada (L4): kept building and gated by ptxas. FP8 `mma` needs sm_89+.
pub const SM_89: Arch = Arch { name: "sm_89", capability: (8, 9) };
/// Every arch the kernels are built for, preferred first.
pub const ARCHS: [Arch; 2] = [SM_90A, SM_89];

/// The PTX ISA feature the kernels need (PTX 8.6, CUDA 12.8+, for e4m3 `mma`/`cvt`).
pub const PTX_FEATURE: &str = "+ptx86";

/// The pip package that ships `ptxas` (CUDA 13.0, the GPU machine's version).
pub const PTXAS_PIP_PACKAGE: &str = "nvidia-cuda-nvcc==13.0.88";

/// Errors of the build steps, with the command's output where there is one.
#[derive(Debug)]
pub struct BuildError(pub String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}

/// The `RUSTFLAGS` for the kernel crate on `arch`.
pub fn nvptx_rustflags(arch: Arch) -> Vec<String> {
    vec!["-C".into(), format!("target-cpu={}", arch.name), "-C".into(), format!("target-feature={PTX_FEATURE}")]
}

/// Builds `kernels-gpu` for `arch` with `cargo` (the path of the cargo to
/// run), in `target_dir/<arch>`, and returns the path of the PTX file,
/// with the launch bounds of the kernel table declared ([`launch_bounds`]).
/// Outer `RUSTFLAGS` never leak in: the flags are set explicitly.
pub fn build_ptx(cargo: &Path, workspace: &Path, arch: Arch, target_dir: &Path) -> Result<PathBuf, BuildError> {
    let dir = target_dir.join(arch.name);
    let output = Command::new(cargo)
        .current_dir(workspace)
        .args(["build", "--release", "-p", "kernels-gpu", "--lib"])
        .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
        .arg("--target-dir")
        .arg(&dir)
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env("CARGO_ENCODED_RUSTFLAGS", nvptx_rustflags(arch).join("\x1f"))
        .output()
        .map_err(|e| BuildError(format!("cannot run {}: {e}", cargo.display())))?;
    if !output.status.success() {
        return Err(BuildError(format!(
            "building kernels-gpu for {} failed:\n{}",
            arch.name,
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let ptx = dir.join("nvptx64-nvidia-cuda/release/kernels_gpu.ptx");
    if !ptx.is_file() {
        return Err(BuildError(format!("no PTX at {}", ptx.display())));
    }
    // The launch bounds the kernel table asks for (`launch_bounds`), in a
    // file of their own (rustc's stays as it wrote it while it is fresh).
    let text = std::fs::read_to_string(&ptx).map_err(|e| BuildError(format!("reading {}: {e}", ptx.display())))?;
    let bounded = launch_bounds::declare(&text, &launch_bounds::from_kernel_table()).map_err(BuildError)?;
    let out = ptx.with_extension("bounded.ptx");
    std::fs::write(&out, bounded).map_err(|e| BuildError(format!("writing {}: {e}", out.display())))?;
    Ok(out)
}

/// `rustc -V` of the toolchain `cargo` (a path, as for [`build_ptx`]) builds
/// with when run in `workspace`: the `rustc` beside it (a rustup toolchain's
/// own), else the `rustc` rustup picks there.
pub fn toolchain_version(cargo: &Path, workspace: &Path) -> Option<String> {
    let beside = cargo.with_file_name("rustc");
    let rustc = if beside.is_file() { beside } else { PathBuf::from("rustc") };
    let out = Command::new(rustc).arg("-V").current_dir(workspace).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Where `cargo xtask setup` installs ptxas: `<workspace>/target/cuda-tools`.
pub fn tools_dir(workspace: &Path) -> PathBuf {
    workspace.join("target").join("cuda-tools")
}

/// Finds ptxas: `$SDPA_PTXAS`, then the `cargo xtask setup` install, then `PATH`.
pub fn find_ptxas(workspace: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SDPA_PTXAS") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let installed = tools_dir(workspace).join("nvidia/cu13/bin/ptxas");
    if installed.is_file() {
        return Some(installed);
    }
    on_path("ptxas")
}

/// The first file called `name` in a directory of `PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The `ptxas --register-usage-level` every entry is compiled with (0-10;
/// ptxas's default is 5): how far its passes may spend registers for
/// speed. Levels 6 to 10 measured alike and 1.2-2.5% faster than the
/// default for `split-n64` D = 64 (`split` 0-3%, `wgmma` unchanged; see
/// lab/), with no entry's register count or spill moving; the lowest of
/// them is kept.
pub const REGISTER_USAGE_LEVEL: &str = "6";

/// Runs `ptxas -arch=<arch> -v -O3 --register-usage-level
/// <REGISTER_USAGE_LEVEL> ptx -o cubin` and returns its resource report
/// (what `-v` prints), to be read with [`report::parse`].
pub fn run_ptxas(ptxas: &Path, ptx: &Path, arch: Arch, cubin: &Path) -> Result<String, BuildError> {
    let output = Command::new(ptxas)
        .arg(format!("-arch={}", arch.name))
        .args(["-v", "-O3", "--register-usage-level", REGISTER_USAGE_LEVEL])
        .arg(ptx)
        .arg("-o")
        .arg(cubin)
        .output()
        .map_err(|e| BuildError(format!("cannot run {}: {e}", ptxas.display())))?;
    let log = String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout);
    if output.status.success() {
        Ok(log)
    } else {
        Err(BuildError(format!("ptxas failed for {} ({}):\n{log}", ptx.display(), arch.name)))
    }
}

/// The release line of `ptxas --version`, e.g.
/// "Cuda compilation tools, release 13.0, V13.0.88".
pub fn ptxas_version(ptxas: &Path) -> Option<String> {
    let out = Command::new(ptxas).arg("--version").output().ok()?;
    String::from_utf8_lossy(&out.stdout).lines().find(|l| l.contains("release")).map(|l| l.trim().to_string())
}
