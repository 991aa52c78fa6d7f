//! Writes `embedded_images.rs` for `src/embedded.rs` to include: the kernel
//! images the library embeds, where they came from, and what made them.
//!
//! By default they are the images shipped in `images/` (made by `cargo
//! xtask images`, compared with the kernel sources by CI): the build needs
//! no nightly and no ptxas, and works from a packaged crate.
//!
//! With the `build-kernels` feature, or `SDPA_BUILD_KERNELS=1` (which this
//! workspace sets in `.cargo/config.toml`, so that kernel edits take
//! effect), it builds `kernels-gpu` into PTX for every arch (rustc's nvptx64
//! target, with the nightly pinned in `rust-toolchain.toml`) and assembles
//! cubins with ptxas when there is one. `SDPA_BUILD_KERNELS=0` forces the
//! shipped images.

use kernel_builder::shipped::{self, Manifest};
use kernel_builder::{ARCHS, Arch, build_ptx, find_ptxas, run_ptxas};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The environment variable that asks for (`1`) or refuses (`0`) a rebuild
/// of the kernels; unset, the `build-kernels` feature decides.
const BUILD_KERNELS_ENV: &str = "SDPA_BUILD_KERNELS";

/// The images of one arch, as files to embed.
struct ArchImages {
    arch: Arch,
    ptx: Option<PathBuf>,
    cubin: Option<PathBuf>,
}

/// The images to embed and what made them.
struct Images {
    archs: Vec<ArchImages>,
    /// The `embedded::ImageOrigin` variant.
    origin: &'static str,
    /// `rustc -V` of the toolchain that built the PTX.
    toolchain: String,
    /// The release line of the ptxas that made the cubins.
    ptxas: String,
}

fn main() {
    let host = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-env-changed={BUILD_KERNELS_ENV}");
    let images = if rebuild_requested() { from_sources(&host, &out) } else { shipped(&host) };
    std::fs::write(out.join("embedded_images.rs"), embedded_source(&images)).unwrap_or_else(|e| fail(&e));
    emit_build_info(&host, &images);
}

/// Whether to build the kernels from their sources: `SDPA_BUILD_KERNELS`
/// (`1` or `0`) when set, else the `build-kernels` feature.
fn rebuild_requested() -> bool {
    match std::env::var(BUILD_KERNELS_ENV).as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        Ok("") | Err(std::env::VarError::NotPresent) => cfg!(feature = "build-kernels"),
        Ok(other) => {
            fail(&format!("{BUILD_KERNELS_ENV}={other}: expected 1 (build the kernels) or 0 (shipped images)"))
        }
        Err(e) => fail(&format!("{BUILD_KERNELS_ENV}: {e}")),
    }
}

/// The images in `images/`, with the toolchain and ptxas their manifest names.
fn shipped(host: &Path) -> Images {
    let dir = host.join(shipped::DIR);
    println!("cargo:rerun-if-changed={}", dir.display());
    let manifest_path = dir.join(shipped::MANIFEST);
    let text = std::fs::read_to_string(&manifest_path)
        .unwrap_or_else(|e| fail(&format!("{}: {e} (run `cargo xtask images`)", manifest_path.display())));
    let manifest = Manifest::parse(&text).unwrap_or_else(|e| fail(&format!("{}: {e}", manifest_path.display())));
    let file = |name: String| {
        let path = dir.join(&name);
        if !path.is_file() {
            fail(&format!("the shipped image {} is missing (run `cargo xtask images`)", path.display()));
        }
        path
    };
    let archs = ARCHS
        .into_iter()
        .map(|arch| ArchImages {
            arch,
            ptx: shipped::ships_ptx(arch).then(|| file(shipped::ptx_file(arch))),
            cubin: Some(file(shipped::cubin_file(arch))),
        })
        .collect();
    Images { archs, origin: "Shipped", toolchain: manifest.toolchain, ptxas: manifest.ptxas }
}

/// The images built from `kernels-gpu` in the repository around `host`: PTX
/// for every arch, and cubins where a ptxas is found.
fn from_sources(host: &Path, out: &Path) -> Images {
    let workspace = host.parent().expect("the host crate has a parent folder").to_path_buf();
    if !workspace.join("kernels-gpu/Cargo.toml").is_file() {
        fail(&format!(
            "building the kernels ({BUILD_KERNELS_ENV}=1 or the build-kernels feature) needs the sdpa repository \
             (kernels-gpu/ beside host/; a git or path dependency), and {} is not one: \
             leave both off to embed the shipped images",
            workspace.display()
        ));
    }
    for path in ["kernels-gpu/src", "kernels-gpu/Cargo.toml", "builder/src"] {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
    println!("cargo:rerun-if-env-changed=SDPA_PTXAS");
    // Re-run when `cargo xtask setup` installs ptxas.
    println!("cargo:rerun-if-changed={}", kernel_builder::tools_dir(&workspace).display());

    let cargo = PathBuf::from(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    let ptxas = find_ptxas(&workspace);
    if ptxas.is_none() {
        println!(
            "cargo:warning=ptxas not found: embedding PTX only (the driver will JIT it); run `cargo xtask setup` for cubins"
        );
    }
    let archs = ARCHS
        .into_iter()
        .map(|arch| {
            let built = build_ptx(&cargo, &workspace, arch, &out.join("kernels-target")).unwrap_or_else(|e| fail(&e));
            let ptx = out.join(shipped::ptx_file(arch));
            std::fs::copy(&built, &ptx).unwrap_or_else(|e| fail(&e));
            let cubin = ptxas.as_deref().map(|ptxas| {
                let cubin = out.join(shipped::cubin_file(arch));
                run_ptxas(ptxas, &ptx, arch, &cubin).unwrap_or_else(|e| fail(&e));
                cubin
            });
            ArchImages { arch, ptx: Some(ptx), cubin }
        })
        .collect();
    let toolchain = kernel_builder::toolchain_version(&cargo, &workspace).unwrap_or_else(|| "unknown".into());
    let ptxas = ptxas.and_then(|p| kernel_builder::ptxas_version(&p)).unwrap_or_else(|| "none (PTX only)".into());
    Images { archs, origin: "BuiltFromSources", toolchain, ptxas }
}

/// The Rust source `src/embedded.rs` includes: the image table and its origin.
fn embedded_source(images: &Images) -> String {
    let embed = |macro_name: &str, path: &Option<PathBuf>| match path {
        Some(path) => format!("Some({macro_name}!({:?}))", path.display().to_string()),
        None => "None".to_string(),
    };
    let mut source = String::from("static IMAGES: &[Image] = &[\n");
    for a in &images.archs {
        let (major, minor) = a.arch.capability;
        writeln!(
            source,
            "    Image {{ arch: {:?}, capability: ({major}, {minor}), ptx: {}, cubin: {} }},",
            a.arch.name,
            embed("include_str", &a.ptx),
            embed("include_bytes", &a.cubin),
        )
        .expect("writing to a String");
    }
    source.push_str("];\n");
    writeln!(source, "const ORIGIN: ImageOrigin = ImageOrigin::{};", images.origin).expect("writing to a String");
    source
}

/// Records what built this binary (commit, toolchain, ptxas) for results files.
fn emit_build_info(host: &Path, images: &Images) {
    println!("cargo:rustc-env=SDPA_BUILD_COMMIT={}", commit(host));
    println!("cargo:rustc-env=SDPA_BUILD_TOOLCHAIN={}", images.toolchain);
    println!("cargo:rustc-env=SDPA_BUILD_PTXAS={}", images.ptxas);
}

/// The commit the crate was built from: the git checkout's around `host`
/// (`-dirty` when tracked files differ), else the one `cargo package`
/// recorded in `.cargo_vcs_info.json`, else "unknown".
fn commit(host: &Path) -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(host)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    // Only a checkout whose top level holds this crate's repository: a
    // packaged crate may sit inside some unrelated repository.
    let repository = host.parent().and_then(|p| p.canonicalize().ok());
    let top_level = git(&["rev-parse", "--show-toplevel"]).and_then(|t| PathBuf::from(t).canonicalize().ok());
    if top_level.is_some() && top_level == repository {
        for file in ["HEAD", "index"] {
            if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", file]) {
                println!("cargo:rerun-if-changed={path}");
            }
        }
        if let Some(commit) = git(&["rev-parse", "--short=12", "HEAD"]) {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            return format!("{commit}{}", if dirty { "-dirty" } else { "" });
        }
    }
    packaged_commit(host).unwrap_or_else(|| "unknown".into())
}

/// The first 12 digits of the `"sha1"` in a packaged crate's `.cargo_vcs_info.json`.
fn packaged_commit(host: &Path) -> Option<String> {
    let info = std::fs::read_to_string(host.join(".cargo_vcs_info.json")).ok()?;
    let rest = &info[info.find("\"sha1\"")? + "\"sha1\"".len()..];
    let sha1 = rest.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let sha1 = &sha1[..sha1.find('"')?];
    (sha1.len() >= 12 && sha1.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha1[..12].to_string())
}

fn fail(e: &dyn std::fmt::Display) -> ! {
    panic!("sdpa build: {e}");
}
