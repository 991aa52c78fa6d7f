//! `cargo xtask ptx [--arch ARCH]`: builds the kernels into PTX and cubins,
//! under `target/kernels/<arch>/`.

use std::path::{Path, PathBuf};

use kernel_builder::{ARCHS, Arch, build_ptx, run_ptxas};

use crate::util::{self, Args, Result};

/// The PTX and cubin of one arch, and what `ptxas -v` said.
pub struct Built {
    /// The arch they were built for.
    pub arch: Arch,
    /// The PTX file.
    pub ptx: PathBuf,
    /// The cubin ptxas made from it.
    pub cubin: PathBuf,
    /// The `ptxas -v` resource report.
    pub report: String,
}

/// Runs the command.
pub fn run(args: &[String]) -> Result<()> {
    let mut args = Args::new("ptx", args);
    let archs = match args.value("--arch")? {
        Some(name) => vec![arch(&name)?],
        None => ARCHS.to_vec(),
    };
    args.finish()?;
    let ws = util::workspace();
    let ptxas = crate::setup::ensure_ptxas(&ws)?;
    for arch in archs {
        let built = build(&ws, &ptxas, arch)?;
        println!("{}: {}", built.arch.name, built.ptx.display());
        println!("{}: {}", built.arch.name, built.cubin.display());
    }
    Ok(())
}

/// The arch called `name`, or an error listing the known ones.
pub fn arch(name: &str) -> Result<Arch> {
    ARCHS.into_iter().find(|a| a.name == name).ok_or_else(|| {
        let known: Vec<&str> = ARCHS.iter().map(|a| a.name).collect();
        format!("unknown arch `{name}` (known: {})", known.join(", "))
    })
}

/// Builds the PTX for `arch` into `target/kernels/<arch>/` and assembles it
/// into `target/kernels/<arch>/kernels.cubin`.
pub fn build(ws: &Path, ptxas: &Path, arch: Arch) -> Result<Built> {
    let dir = ws.join("target").join("kernels");
    eprintln!("building kernels-gpu for {} ...", arch.name);
    let ptx = build_ptx(&util::cargo(), ws, arch, &dir).map_err(|e| e.to_string())?;
    let cubin = dir.join(arch.name).join("kernels.cubin");
    let report = run_ptxas(ptxas, &ptx, arch, &cubin).map_err(|e| e.to_string())?;
    Ok(Built { arch, ptx, cubin, report })
}
