//! Builds `kernels-gpu` into PTX for every arch (rustc's nvptx64 target),
//! assembles cubins with ptxas when it is available, and writes
//! `embedded_images.rs` for `src/embedded.rs` to include.

use kernel_builder::{ARCHS, build_ptx, find_ptxas, run_ptxas};
use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("host/ lives in the workspace").to_path_buf();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let cargo = PathBuf::from(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for dir in ["kernels-gpu/src", "kernels-gpu/Cargo.toml", "builder/src"] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    println!("cargo:rerun-if-env-changed=SDPA_PTXAS");
    // Re-run when `cargo xtask setup` installs ptxas.
    println!("cargo:rerun-if-changed={}", kernel_builder::tools_dir(&workspace).display());

    emit_build_info(&workspace);
    let ptxas = find_ptxas(&workspace);
    if ptxas.is_none() {
        println!(
            "cargo:warning=ptxas not found: embedding PTX only (the driver will JIT it); run `cargo xtask setup` for cubins"
        );
    }
    let mut images = String::from("static IMAGES: &[Image] = &[\n");
    for arch in ARCHS {
        let ptx = build_ptx(&cargo, &workspace, arch, &out.join("kernels-target")).unwrap_or_else(|e| fail(&e));
        let ptx_copy = out.join(format!("{}.ptx", arch.name));
        std::fs::copy(&ptx, &ptx_copy).unwrap_or_else(|e| fail(&e));
        let cubin = ptxas.as_deref().map(|ptxas| {
            let cubin = out.join(format!("{}.cubin", arch.name));
            run_ptxas(ptxas, &ptx_copy, arch, &cubin).unwrap_or_else(|e| fail(&e));
            cubin
        });
        let (major, minor) = arch.capability;
        writeln!(
            images,
            "    Image {{ arch: {:?}, capability: ({major}, {minor}), ptx: include_str!({:?}), cubin: {} }},",
            arch.name,
            ptx_copy.display().to_string(),
            match cubin {
                Some(path) => format!("Some(include_bytes!({:?}))", path.display().to_string()),
                None => "None".to_string(),
            }
        )
        .expect("writing to a String");
    }
    images.push_str("];\n");
    std::fs::write(out.join("embedded_images.rs"), images).unwrap_or_else(|e| fail(&e));
}

/// Records what built this binary (commit, toolchain, ptxas) for results files.
fn emit_build_info(workspace: &std::path::Path) {
    let run = |cmd: &str, args: &[&str]| {
        std::process::Command::new(cmd)
            .args(args)
            .current_dir(workspace)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = run("git", &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = run("git", &["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let toolchain = run(&rustc, &["-V"]).unwrap_or_else(|| "unknown".into());
    let ptxas = find_ptxas(workspace)
        .and_then(|p| kernel_builder::ptxas_version(&p))
        .unwrap_or_else(|| "none (PTX only)".into());
    println!("cargo:rustc-env=SDPA_BUILD_COMMIT={commit}{}", if dirty { "-dirty" } else { "" });
    println!("cargo:rustc-env=SDPA_BUILD_TOOLCHAIN={toolchain}");
    println!("cargo:rustc-env=SDPA_BUILD_PTXAS={ptxas}");
    println!("cargo:rerun-if-changed={}", workspace.join(".git/HEAD").display());
    println!("cargo:rerun-if-changed={}", workspace.join(".git/index").display());
}

fn fail(e: &dyn std::fmt::Display) -> ! {
    panic!("kernel build failed: {e}");
}
