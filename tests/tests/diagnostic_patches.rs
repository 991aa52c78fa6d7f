//! The diagnostic patches under `scripts/` (a planted bug for the fuzz
//! suite, the leave-one-out, floor and phase-clock builds) still apply to
//! the kernels as they are: a kernel change that breaks one shows up here,
//! not on the GPU machine when the tool is needed. The experiment patches
//! archived under `results/` (the record of stages that were not merged)
//! need not apply any more, but each must be a patch: one was once
//! committed as an empty file.

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn every_diagnostic_patch_applies_to_the_current_kernels() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut patches: Vec<PathBuf> = std::fs::read_dir(root.join("scripts"))
        .expect("scripts/ exists")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "patch"))
        .collect();
    patches.sort();
    assert!(patches.len() >= 4, "expected the four diagnostic patches, found {patches:?}");
    for patch in &patches {
        let out = Command::new("git")
            .arg("apply")
            .arg("--check")
            .arg(patch)
            .current_dir(&root)
            .output()
            .expect("git runs (the tools apply their patches with it)");
        assert!(
            out.status.success(),
            "{} no longer applies; refresh it against the kernels:\n{}",
            patch.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The `*.patch` files under `dir` and its subfolders.
fn patches_under(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            patches_under(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "patch") {
            found.push(path);
        }
    }
}

#[test]
fn every_archived_experiment_patch_is_a_patch() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut patches = Vec::new();
    patches_under(&root.join("results"), &mut patches);
    assert!(!patches.is_empty(), "results/ holds the experiments' patches");
    let not_patches: Vec<_> = patches
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            !(text.contains("\n--- ") && text.contains("\n+++ ") && text.contains("\n@@ "))
        })
        .collect();
    assert!(not_patches.is_empty(), "not a unified diff (empty or truncated): {not_patches:?}");
}
