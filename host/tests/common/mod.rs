//! What the CLI file tests (`decode_io`, `packed_io`) share: temp files,
//! running the `sdpa` binary cargo built, tensor bytes.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh temp path, removed on drop.
pub struct TempPath(pub PathBuf);

impl TempPath {
    /// A path unique to this process and call, ending in `tag`.
    pub fn new(tag: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        TempPath(std::env::temp_dir().join(format!("sdpa-io-test-{}-{n}-{tag}.safetensors", std::process::id())))
    }

    /// The path as a string (for command-line arguments).
    pub fn as_str(&self) -> &str {
        self.0.to_str().expect("temp paths are UTF-8 here")
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs the `sdpa` binary with `args`.
pub fn sdpa(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sdpa")).args(args).output().expect("the sdpa binary runs")
}

/// Little-endian bytes of int32 values.
pub fn i32_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian bytes of f32 values.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs `sdpa` with `args` on a file that passes every check before the
/// GPU: with a GPU it succeeds and `written` checks what it wrote to
/// `output`; without one it fails there (exit 1, not the usage error 2)
/// with one line of error and no output file.
pub fn reaches_the_gpu(args: &[&str], output: &TempPath, written: impl FnOnce()) {
    let o = sdpa(args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    match o.status.code() {
        Some(0) => written(),
        code => {
            assert_eq!(code, Some(1), "{stderr}");
            assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
            assert!(!output.0.exists());
        }
    }
}
