//! What the CLI's GPU tests (`cli_decode`, `cli_packed`) share: the `sdpa`
//! executable they run and temp files.

use std::path::{Path, PathBuf};

/// The `sdpa` executable: `$SDPA_BIN`, or the one beside the test
/// executable (a bundle's `bin/`), or one directory above it (cargo's
/// `target/<profile>/` for `target/<profile>/deps/`).
pub fn sdpa_cli() -> PathBuf {
    if let Some(path) = std::env::var_os("SDPA_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test executable's path");
    let beside = exe.with_file_name("sdpa");
    let above = exe.parent().and_then(Path::parent).map(|dir| dir.join("sdpa"));
    [Some(beside), above]
        .into_iter()
        .flatten()
        .find(|p| p.is_file())
        .expect("no `sdpa` beside the test executable nor above it: set SDPA_BIN or `cargo build --release -p sdpa`")
}

/// A path in the temp directory for this test process, removed on drop.
pub struct TempPath(pub PathBuf);

impl TempPath {
    /// A `.safetensors` path of this process ending in `tag`.
    pub fn new(tag: &str) -> Self {
        TempPath(std::env::temp_dir().join(format!("sdpa-cli-test-{}-{tag}.safetensors", std::process::id())))
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
