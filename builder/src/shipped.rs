//! The shipped kernel images: the PTX and cubins `cargo xtask images`
//! writes into the host crate's `images/` folder and `host/build.rs` embeds
//! by default, so that the library builds on stable Rust with no ptxas.
//! Their manifest records what made them (toolchain, ptxas, a hash of the
//! kernel sources) and the sha256 of each file, so that a stale image is
//! detectable; `cargo xtask images --check` rebuilds them and compares.

use crate::{ARCHS, Arch};

/// The folder of the shipped images, in the host crate (`host/images`).
pub const DIR: &str = "images";

/// The manifest's file name, in [`DIR`].
pub const MANIFEST: &str = "manifest.toml";

/// The cubin file of `arch`, e.g. `sm_90a.cubin`.
pub fn cubin_file(arch: Arch) -> String {
    format!("{}.cubin", arch.name)
}

/// The PTX file of `arch`, e.g. `sm_89.ptx`.
pub fn ptx_file(arch: Arch) -> String {
    format!("{}.ptx", arch.name)
}

/// Whether the PTX of `arch` ships beside its cubin: only for portable
/// archs, whose PTX the driver can compile for newer devices (and that
/// `SDPA_IMAGE=sm_89` loads on a Hopper GPU). An arch-specific PTX
/// (`sm_90a`) runs only on the devices its cubin already runs on.
pub fn ships_ptx(arch: Arch) -> bool {
    !arch.arch_specific()
}

/// Every shipped file name, in the order the manifest lists them.
pub fn files() -> Vec<String> {
    let mut files = Vec::new();
    for arch in ARCHS {
        files.push(cubin_file(arch));
        if ships_ptx(arch) {
            files.push(ptx_file(arch));
        }
    }
    files
}

/// What the manifest records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// sha256 over the kernel sources the images were built from (see
    /// `cargo xtask images`).
    pub sources_sha256: String,
    /// `rustc -V` of the toolchain that built the PTX.
    pub toolchain: String,
    /// The release line of the ptxas that made the cubins.
    pub ptxas: String,
    /// Each shipped file and its sha256, in [`files`] order.
    pub files: Vec<(String, String)>,
}

/// The heading of the manifest's file table.
const FILES_TABLE: &str = "[files]";

impl Manifest {
    /// The manifest as TOML (flat string values, no escapes); an error for a
    /// value holding a quote, a backslash or a line break.
    pub fn render(&self) -> Result<String, String> {
        let mut text = String::from(
            "# The kernel images host/build.rs embeds by default: written by\n\
             # `cargo xtask images`, compared with a fresh build by\n\
             # `cargo xtask images --check` (CI).\n",
        );
        for (key, value) in
            [("sources_sha256", &self.sources_sha256), ("toolchain", &self.toolchain), ("ptxas", &self.ptxas)]
        {
            text.push_str(&format!("{key} = {}\n", quoted(value)?));
        }
        text.push_str(&format!("\n{FILES_TABLE}\n"));
        for (file, sha256) in &self.files {
            text.push_str(&format!("{} = {}\n", quoted(file)?, quoted(sha256)?));
        }
        Ok(text)
    }

    /// Reads what [`Manifest::render`] wrote; an error names the line it
    /// cannot read or the key that is missing.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let (mut top, mut files, mut in_files) = (Vec::new(), Vec::new(), false);
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            if line == FILES_TABLE {
                in_files = true;
                continue;
            }
            let (key, value) = line.split_once(" = ").ok_or_else(|| format!("cannot read manifest line `{line}`"))?;
            let value = unquoted(value).ok_or_else(|| format!("not a quoted string in `{line}`"))?;
            if in_files {
                let file = unquoted(key).ok_or_else(|| format!("not a quoted file name in `{line}`"))?;
                files.push((file.to_string(), value.to_string()));
            } else {
                top.push((key, value.to_string()));
            }
        }
        let mut field = |key: &str| {
            let i = top.iter().position(|(k, _)| *k == key).ok_or_else(|| format!("the manifest has no `{key}`"))?;
            Ok::<String, String>(top.remove(i).1)
        };
        Ok(Manifest {
            sources_sha256: field("sources_sha256")?,
            toolchain: field("toolchain")?,
            ptxas: field("ptxas")?,
            files,
        })
    }
}

/// `value` in double quotes, when it needs no escape.
fn quoted(value: &str) -> Result<String, String> {
    if value.contains(['"', '\\', '\n', '\r']) {
        return Err(format!("manifest value `{value}` holds a quote, a backslash or a line break"));
    }
    Ok(format!("\"{value}\""))
}

/// The text between a pair of double quotes.
fn unquoted(value: &str) -> Option<&str> {
    value.trim().strip_prefix('"')?.strip_suffix('"')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            sources_sha256: "ab".repeat(32),
            toolchain: "rustc 1.0.0-nightly (0123456789 2026-01-01)".into(),
            ptxas: "Cuda compilation tools, release 13.0, V13.0.88".into(),
            files: files().into_iter().map(|f| (f, "cd".repeat(32))).collect(),
        }
    }

    #[test]
    fn a_rendered_manifest_reads_back() {
        let m = manifest();
        assert_eq!(Manifest::parse(&m.render().unwrap()).unwrap(), m);
    }

    #[test]
    fn values_that_would_need_escapes_are_refused() {
        let m = Manifest { toolchain: "rustc \"quoted\"".into(), ..manifest() };
        assert!(m.render().is_err());
    }

    #[test]
    fn a_missing_key_is_named() {
        let text = manifest().render().unwrap().replace("ptxas = ", "ptxas_version = ");
        assert_eq!(Manifest::parse(&text).unwrap_err(), "the manifest has no `ptxas`");
    }

    #[test]
    fn the_sm_90a_ptx_does_not_ship_and_the_sm_89_ptx_does() {
        assert_eq!(files(), ["sm_90a.cubin", "sm_89.cubin", "sm_89.ptx"]);
    }
}
