//! `cargo xtask images [--check]`: the kernel images the library ships in
//! `host/images/` (what `host/build.rs` embeds by default, so that the crate
//! builds on stable Rust with no ptxas): a cubin for every arch, the PTX of
//! the portable ones, and a manifest (sha256 of each file, the toolchain,
//! the ptxas, a hash of the kernel sources). With `--check`, builds them
//! afresh into `target/images-check/` and compares them with the shipped
//! ones byte for byte (rustc's PTX and ptxas's cubins are deterministic).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kernel_builder::shipped::{self, Manifest};
use kernel_builder::{ARCHS, toolchain_version};

use crate::util::{self, Args, Result};
use crate::{ptx, setup};

/// The sources the images are built from, relative to the workspace: the
/// kernel crate, the builder's build recipe and launch bounds, and the
/// toolchain pin. A folder stands for every file under it.
const SOURCES: [&str; 5] = [
    "kernels-gpu/Cargo.toml",
    "kernels-gpu/src",
    "builder/src/lib.rs",
    "builder/src/launch_bounds.rs",
    "rust-toolchain.toml",
];

/// Runs the command.
pub fn run(args: &[String]) -> Result<()> {
    let mut args = Args::new("images", args);
    let check = args.flag("--check");
    args.finish()?;
    let ws = util::workspace();
    let shipped_dir = ws.join("host").join(shipped::DIR);
    if check {
        let fresh = ws.join("target").join("images-check");
        write(&ws, &fresh)?;
        compare(&shipped_dir, &fresh)?;
        println!("the shipped images in {} match the kernel sources", shipped_dir.display());
        return Ok(());
    }
    write(&ws, &shipped_dir)?;
    for file in shipped::files().into_iter().chain([shipped::MANIFEST.to_string()]) {
        let path = shipped_dir.join(&file);
        let bytes = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?.len();
        println!("{:>9} bytes  {}", bytes, path.display());
    }
    Ok(())
}

/// Builds every arch and writes its shipped files and the manifest into
/// `dir`, which holds nothing else afterwards.
fn write(ws: &Path, dir: &Path) -> Result<()> {
    let ptxas = setup::ensure_ptxas(ws)?;
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for arch in ARCHS {
        let built = ptx::build(ws, &ptxas, arch)?;
        copy(&built.cubin, &dir.join(shipped::cubin_file(arch)))?;
        if shipped::ships_ptx(arch) {
            copy(&built.ptx, &dir.join(shipped::ptx_file(arch)))?;
        }
    }
    let files = shipped::files()
        .into_iter()
        .map(|file| Ok((file.clone(), sha256_of_file(&dir.join(&file))?)))
        .collect::<Result<Vec<_>>>()?;
    let manifest = Manifest {
        sources_sha256: sources_sha256(ws)?,
        toolchain: toolchain_version(&util::cargo(), ws).ok_or("`rustc -V` failed in the workspace")?,
        ptxas: setup::version(&ptxas),
        files,
    };
    let path = dir.join(shipped::MANIFEST);
    std::fs::write(&path, manifest.render()?).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Errors, naming every difference, unless `shipped` holds exactly the
/// files of `fresh` with the same bytes.
fn compare(shipped_dir: &Path, fresh: &Path) -> Result<()> {
    let expected: Vec<String> = shipped::files().into_iter().chain([shipped::MANIFEST.to_string()]).collect();
    let mut problems = Vec::new();
    for file in &expected {
        let built = std::fs::read(fresh.join(file)).map_err(|e| format!("{}: {e}", fresh.join(file).display()))?;
        match std::fs::read(shipped_dir.join(file)) {
            Err(_) => problems.push(format!("{file} is missing")),
            Ok(bytes) if bytes == built => {}
            Ok(bytes) if file == shipped::MANIFEST => {
                let (old, new) = (String::from_utf8_lossy(&bytes), String::from_utf8_lossy(&built));
                let changed: Vec<&str> = new.lines().filter(|l| !old.lines().any(|o| o == *l)).collect();
                problems.push(format!("{file} differs; a fresh build says:\n    {}", changed.join("\n    ")));
            }
            Ok(bytes) => {
                problems.push(format!("{file} differs ({} bytes shipped, {} built)", bytes.len(), built.len()))
            }
        }
    }
    let entries = std::fs::read_dir(shipped_dir).map_err(|e| format!("{}: {e}", shipped_dir.display()))?;
    for entry in entries {
        let name = entry.map_err(|e| e.to_string())?.file_name().to_string_lossy().into_owned();
        if !expected.contains(&name) {
            problems.push(format!("{name} is not a shipped image"));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the shipped images in {} do not match the kernel sources:\n  {}\nrun `cargo xtask images` and commit {}",
        shipped_dir.display(),
        problems.join("\n  "),
        shipped_dir.display()
    ))
}

/// Copies `from` to `to`.
fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to).map(|_| ()).map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// sha256 over the `sha256sum` lines (digest and workspace-relative path)
/// of every file of [`SOURCES`], in path order.
fn sources_sha256(ws: &Path) -> Result<String> {
    let mut files = Vec::new();
    for source in SOURCES {
        collect_files(&ws.join(source), &mut files)?;
    }
    files.sort();
    let relative: Vec<&Path> = files.iter().map(|f| f.strip_prefix(ws).unwrap_or(f)).collect();
    let listing = util::output(Command::new("sha256sum").current_dir(ws).arg("--").args(&relative))?;
    sha256_of(listing.as_bytes())
}

/// `path` if it is a file, else every file under it, into `files`.
fn collect_files(path: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    if path.is_file() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for entry in entries {
        collect_files(&entry.map_err(|e| e.to_string())?.path(), files)?;
    }
    Ok(())
}

/// The sha256 of the file at `path`, in hex.
fn sha256_of_file(path: &Path) -> Result<String> {
    let line = util::output(Command::new("sha256sum").arg("--").arg(path))?;
    digest_of(&line)
}

/// The sha256 of `bytes`, in hex (`sha256sum` reading them on stdin).
fn sha256_of(bytes: &[u8]) -> Result<String> {
    let mut cmd = Command::new("sha256sum");
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| util::spawn_error(&cmd, &e))?;
    child
        .stdin
        .take()
        .ok_or("sha256sum has no stdin")?
        .write_all(bytes)
        .map_err(|e| format!("writing to sha256sum: {e}"))?;
    let out = child.wait_with_output().map_err(|e| format!("sha256sum: {e}"))?;
    if !out.status.success() {
        return Err(format!("sha256sum failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    digest_of(&String::from_utf8_lossy(&out.stdout))
}

/// The hex digest that starts a `sha256sum` line.
fn digest_of(line: &str) -> Result<String> {
    let digest = line.split_whitespace().next().unwrap_or_default();
    if digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(digest.to_string())
    } else {
        Err(format!("not a sha256sum line: `{}`", line.trim()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary folder.
    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-images-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Writes every shipped file and a manifest into `dir`, each holding its name.
    fn fill(dir: &Path) {
        for file in shipped::files().into_iter().chain([shipped::MANIFEST.to_string()]) {
            std::fs::write(dir.join(&file), &file).unwrap();
        }
    }

    #[test]
    fn compare_accepts_equal_folders_and_names_each_difference() {
        let (shipped_dir, fresh) = (folder("shipped"), folder("fresh"));
        fill(&shipped_dir);
        fill(&fresh);
        compare(&shipped_dir, &fresh).unwrap();

        std::fs::write(shipped_dir.join("sm_89.ptx"), "stale").unwrap();
        std::fs::remove_file(shipped_dir.join("sm_90a.cubin")).unwrap();
        std::fs::write(shipped_dir.join("sm_80.cubin"), "").unwrap();
        let e = compare(&shipped_dir, &fresh).unwrap_err();
        assert!(e.contains("sm_89.ptx differs (5 bytes shipped, 9 built)"), "{e}");
        assert!(e.contains("sm_90a.cubin is missing"), "{e}");
        assert!(e.contains("sm_80.cubin is not a shipped image"), "{e}");
        assert!(!e.contains("sm_89.cubin"), "{e}");
        for dir in [shipped_dir, fresh] {
            std::fs::remove_dir_all(dir).unwrap();
        }
    }

    #[test]
    fn digests_are_read_from_sha256sum_lines_only() {
        assert_eq!(sha256_of(b"").unwrap(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert!(digest_of("sha256sum: no such file").is_err());
    }
}
