//! `cargo xtask setup`: makes sure a ptxas is available, installing NVIDIA's
//! pip wheel into `target/cuda-tools` when none is found.

use std::path::{Path, PathBuf};
use std::process::Command;

use kernel_builder::{PTXAS_PIP_PACKAGE, find_ptxas, ptxas_version, tools_dir};

use crate::util::{self, Args, Result};

/// Runs the command: finds or installs ptxas and says where it is.
pub fn run(args: &[String]) -> Result<()> {
    Args::new("setup", args).finish()?;
    let ws = util::workspace();
    let ptxas = ensure_ptxas(&ws)?;
    println!("ptxas: {}", ptxas.display());
    println!("version: {}", version(&ptxas));
    Ok(())
}

/// ptxas's release line, or a note that there is none.
pub fn version(ptxas: &Path) -> String {
    ptxas_version(ptxas).unwrap_or_else(|| "unknown (`ptxas --version` printed no release line)".into())
}

/// Returns the ptxas to use, installing it first if none is found
/// (`$SDPA_PTXAS`, then `target/cuda-tools`, then `PATH`).
pub fn ensure_ptxas(ws: &Path) -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("SDPA_PTXAS") {
        let p = PathBuf::from(p);
        return find_ptxas(ws).ok_or_else(|| format!("SDPA_PTXAS={} is not a file", p.display()));
    }
    if let Some(p) = find_ptxas(ws) {
        return Ok(p);
    }
    install(ws)?;
    find_ptxas(ws).ok_or_else(|| {
        format!(
            "pip installed {PTXAS_PIP_PACKAGE} into {} but no ptxas is at nvidia/cu13/bin/ptxas there",
            tools_dir(ws).display()
        )
    })
}

/// `python3 -m pip install --target <tools_dir> --no-deps PTXAS_PIP_PACKAGE`.
/// `--no-deps`: ptxas is self-contained; the wheel's dependencies (nvvm,
/// crt, runtime) are ~250 MB that ptxas does not use.
fn install(ws: &Path) -> Result<()> {
    eprintln!("ptxas not found; installing {PTXAS_PIP_PACKAGE} into {}", tools_dir(ws).display());
    pip_install(&tools_dir(ws), PTXAS_PIP_PACKAGE)
}

/// `python3 -m pip install --target <dir> --no-deps --upgrade <package>`
/// (NVIDIA's tool wheels). One wheel per directory: they all install into
/// `nvidia/`, which `--upgrade` replaces as a whole.
pub fn pip_install(dir: &Path, package: &str) -> Result<()> {
    util::output(Command::new("python3").arg("--version")).map_err(|e| {
        format!("{e}\npython3 is needed to install {package} (Debian: apt-get install python3 python3-pip)")
    })?;
    util::output(Command::new("python3").args(["-m", "pip", "--version"]))
        .map_err(|e| format!("{e}\npip is missing for python3 (Debian: apt-get install python3-pip)"))?;
    // --upgrade: a half-finished earlier install in the same --target would
    // otherwise be kept as it is.
    let mut pip = Command::new("python3");
    pip.args(["-m", "pip", "install", "--disable-pip-version-check", "--no-deps", "--upgrade"])
        .arg("--target")
        .arg(dir)
        .arg(package);
    util::status(&mut pip)
}
