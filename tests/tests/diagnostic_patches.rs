//! The diagnostic patches under `scripts/` (a planted bug for the fuzz
//! suite, the leave-one-out, floor and phase-clock builds) still apply to
//! the kernels as they are: a kernel change that breaks one shows up here,
//! not on the GPU machine when the tool is needed.

use std::path::PathBuf;
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
