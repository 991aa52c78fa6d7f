//! The `sdpa` binary: help, `info` without a GPU, and `run`'s exit codes
//! and one-line errors.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use kernels_gpu::kernels::KERNELS;
use kernels_gpu::variant::{OutputDtype, Variant};
use safetensors::{Dtype, tensor::TensorView};
use sdpa::io::{Inputs, load_output, save_inputs};
use sdpa::metrics::{GATE, compare};
use sdpa::quant::random_problem;
use sdpa::reference::attention_f64;

fn sdpa(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sdpa")).args(args).output().expect("the sdpa binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh temp path, removed on drop.
struct TempPath(PathBuf);

impl TempPath {
    fn new(tag: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("sdpa-cli-test-{}-{n}-{tag}.safetensors", std::process::id());
        TempPath(std::env::temp_dir().join(name))
    }
    fn as_str(&self) -> &str {
        self.0.to_str().expect("temp paths are UTF-8 here")
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Asserts exit code 2 and exactly one stderr line `error: ...` holding
/// every needle; nothing on stdout.
fn assert_input_error(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    assert!(err.starts_with("error: "), "{err:?}");
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in {err:?}");
    }
    assert!(stdout(o).is_empty(), "stdout: {}", stdout(o));
}

#[test]
fn help_lists_the_subcommands() {
    let o = sdpa(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for command in ["info", "run", "bench", "plan"] {
        assert!(out.contains(command), "{command} missing from:\n{out}");
    }
}

#[test]
fn run_help_explains_every_flag() {
    let o = sdpa(&["run", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for flag in ["--input", "--output", "--causal", "--scale", "--variant", "--device"] {
        assert!(out.contains(flag), "{flag} missing from:\n{out}");
    }
    assert!(out.contains("1/sqrt(D)"), "{out}");
    assert!(out.contains("bottom-right"), "{out}");
    assert!(out.contains("[default: auto]"), "{out}");
}

/// The cells of `sdpa plan`'s row for `shape` in its output `out`.
fn plan_row(out: &str, shape: &str) -> Vec<String> {
    let line = out.lines().find(|l| l.starts_with(shape)).unwrap_or_else(|| panic!("no row for {shape}:\n{out}"));
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
fn plan_needs_no_gpu_and_shows_the_pick_and_the_models_times() {
    let o = sdpa(&["plan", "--shapes", "2,8,256,64", "8,16,256,64", "4,16,4096,128", "1,8,512,64", "1,8,511,64"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    for header in
        ["mma", "wgmma", "split", "split-wg", "split-n64", "pick", "off sm_90a", "kernel on sm_90a", "132 SMs"]
    {
        assert!(out.contains(header), "{header} missing from:\n{out}");
    }
    let row = |shape: &str| plan_row(&out, shape);
    // shape, five predicted times, the pick, the pick off sm_90a, then the
    // kernel the pick launches on sm_90a (the pair-row one on even lengths
    // of 257-512 keys only).
    assert_eq!(row("2,8,256,64")[6..], ["split-n64", "split", "sdpa_split_n64_d64"]);
    assert_eq!(row("8,16,256,64")[6..], ["split-wg", "split", "sdpa_split_wg_d64"]);
    assert_eq!(row("4,16,4096,128")[6..], ["wgmma", "(rule)", "mma", "sdpa_wgmma_d128"]);
    assert_eq!(row("1,8,512,64")[6..], ["split-n64", "split", "sdpa_split_n64_pairs_d64"]);
    assert_eq!(row("1,8,511,64")[6..], ["split-n64", "split", "sdpa_split_n64_d64"]);
    for cell in &row("2,8,256,64")[1..6] {
        let t: f32 = cell.parse().unwrap_or_else(|_| panic!("{cell:?} is not a time"));
        assert!(t > 0.0 && t < 100.0, "{t}");
    }
}

#[test]
fn plan_with_a_window_or_a_cap_names_the_score_twins_that_run_them() {
    let shapes = ["--shapes", "2,8,256,64,causal", "8,16,256,64", "4,16,4096,128", "1,32:8,1:8192,128"];
    let o = sdpa(&[&["plan", "--window=128,0", "--softcap", "30"][..], &shapes[..]].concat());
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    let row = |shape: &str| plan_row(&out, shape);
    // The pick (without the window), then the plans that run it: a variant
    // with twins runs its own, one without (`split-wg`) gives way to
    // `wgmma` on sm_90a; off sm_90a `split` and `mma` run theirs.
    assert_eq!(row("2,8,256,64,causal")[6..], ["split-n64", "split", "sdpa_split_n64_softcap_d64"]);
    assert_eq!(row("8,16,256,64")[6..], ["split-wg", "split", "sdpa_wgmma_softcap_d64"]);
    assert_eq!(row("4,16,4096,128")[6..], ["wgmma", "(rule)", "mma", "sdpa_wgmma_softcap_d128"]);
    assert_eq!(row("1,32:8,1:8192,128")[6..], ["decode", "(rule)", "decode", "sdpa_decode_softcap_d128"]);
}

#[test]
fn plan_refuses_bad_shapes_and_head_dims_in_one_line() {
    assert_input_error(&sdpa(&["plan", "--shapes", "2,8,256"]), &["2,8,256", "B,Hq[:Hkv],Sq[:Skv],D"]);
    assert_input_error(&sdpa(&["plan", "--shapes", "1,1,64,96"]), &["head dim 96", "64, 128"]);
    assert_eq!(sdpa(&["plan", "--sms", "0"]).status.code(), Some(2));
    // What a run would refuse, plan refuses too.
    assert_input_error(&sdpa(&["plan", "--shapes", "0,8,512,64"]), &["0,8,512,64", "above zero"]);
    assert_input_error(&sdpa(&["plan", "--shapes", "1,8,99999999999,64"]), &["1,8,99999999999,64", "too large"]);
}

#[test]
fn info_help_explains_its_flag() {
    let o = sdpa(&["info", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("--device"));
}

#[test]
fn info_prints_images_and_the_kernel_table() {
    let o = sdpa(&["info"]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("embedded images"), "{out}");
    for header in ["variant", "head_dim", "BLOCK_M", "BLOCK_N", "stages", "threads", "smem_bytes", "output"] {
        assert!(out.contains(header), "{header} missing from:\n{out}");
    }
    for k in &KERNELS {
        let t = k.tiles;
        let row = out
            .lines()
            .find(|l| l.split_whitespace().last() == Some(k.entry))
            .unwrap_or_else(|| panic!("no row for {}:\n{out}", k.entry));
        let cells: Vec<&str> = row.split_whitespace().collect();
        let want = [
            k.variant.name().to_string(),
            t.head_dim.to_string(),
            t.block_m.to_string(),
            t.block_n.to_string(),
            t.stages.to_string(),
            k.threads().to_string(),
            k.smem_bytes.to_string(),
            k.output.name().to_string(),
            k.entry.to_string(),
        ];
        assert_eq!(cells, want, "row {row:?}");
    }
    // The device line: a GPU's description, or why there is none.
    assert!(out.lines().any(|l| l.starts_with("device 0: ")), "{out}");
}

#[test]
fn run_with_a_missing_file() {
    let input = TempPath::new("missing");
    let output = TempPath::new("out");
    let o = sdpa(&["run", "--input", input.as_str(), "--output", output.as_str()]);
    assert_input_error(&o, &["no such file", input.as_str()]);
    assert!(!output.0.exists());
}

#[test]
fn run_with_a_file_that_is_not_safetensors() {
    let input = TempPath::new("text");
    std::fs::write(&input.0, "q,k,v\n1,2,3\n").unwrap();
    let output = TempPath::new("out");
    let o = sdpa(&["run", "--input", input.as_str(), "--output", output.as_str()]);
    assert_input_error(&o, &["not a safetensors file", input.as_str()]);
}

#[test]
fn run_with_a_file_lacking_k() {
    let input = TempPath::new("nok");
    let data = vec![0x38u8; 64];
    let views = [
        ("q", TensorView::new(Dtype::F8_E4M3, vec![1, 1, 1, 64], &data).unwrap()),
        ("v", TensorView::new(Dtype::F8_E4M3, vec![1, 1, 1, 64], &data).unwrap()),
    ];
    safetensors::serialize_to_file(views, None, &input.0).unwrap();
    let output = TempPath::new("out");
    let o = sdpa(&["run", "--input", input.as_str(), "--output", output.as_str()]);
    assert_input_error(&o, &["missing tensor `k`", input.as_str()]);
}

#[test]
fn run_with_an_unknown_variant_lists_the_known_ones() {
    let input = TempPath::new("unused");
    let output = TempPath::new("out");
    let o = sdpa(&["run", "--input", input.as_str(), "--output", output.as_str(), "--variant", "turbo"]);
    let mut needles = vec!["turbo"];
    needles.extend(Variant::ALL.iter().map(|v| v.name()));
    assert_input_error(&o, &needles);
}

#[test]
fn an_unknown_output_type_is_a_usage_error() {
    let input = TempPath::new("unused");
    let output = TempPath::new("out");
    let o = sdpa(&["run", "--input", input.as_str(), "--output", output.as_str(), "--out-dtype", "f32"]);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("f32") && err.contains("bf16"), "{err}");
    assert!(!output.0.exists());
}

#[test]
fn run_with_a_bad_scale() {
    let input = TempPath::new("unused");
    let output = TempPath::new("out");
    for bad in ["0", "-1", "nan", "inf"] {
        let o = sdpa(&["run", "--input", input.as_str(), "--output", output.as_str(), "--scale", bad]);
        assert_input_error(&o, &["--scale"]);
    }
}

/// A valid input reaches the GPU. Without one (CI) that is exit 1 and one
/// line; with one, the output must pass the gate against the reference.
#[test]
fn run_that_reaches_the_gpu() {
    let (q, k, v) = random_problem([1, 2, 70, 64], [1, 1, 90, 64], 17);
    let inputs = Inputs { q, k, v };
    let input = TempPath::new("valid");
    save_inputs(&input.0, &inputs).unwrap();
    for dtype in OutputDtype::ALL {
        let output = TempPath::new("out");
        let args = ["run", "--input", input.as_str(), "--output", output.as_str(), "--causal"];
        let o = sdpa(&[&args[..], &["--out-dtype", dtype.name()]].concat());
        match o.status.code() {
            Some(0) => {
                let got = load_output(&output.0).unwrap();
                assert_eq!(got.dtype, dtype);
                let want = attention_f64(&inputs.q, &inputs.k, &inputs.v, true, 0.125);
                let stats = compare(&got.values(), &want, GATE.max_abs);
                assert!(GATE.passes(&stats), "{}: {stats}", dtype.name());
            }
            code => {
                let err = stderr(&o);
                assert_eq!(code, Some(1), "stderr: {err}");
                assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
                assert!(err.starts_with("error: "), "{err:?}");
                assert!(!output.0.exists());
            }
        }
    }
}

#[test]
fn run_with_inputs_the_library_refuses_fails_before_the_gpu() {
    // D = 32 has no kernel, and Hq = 3 is not a multiple of Hkv = 2: both
    // are input problems (exit 2), found before any device is opened.
    for (q_shape, kv_shape, needle) in [
        ([1, 2, 4, 32], [1, 2, 4, 32], "head dimension 32"),
        ([1, 3, 4, 64], [1, 2, 4, 64], "multiple of key/value heads"),
    ] {
        let (q, k, v) = random_problem(q_shape, kv_shape, 1);
        let input = TempPath::new("refused");
        save_inputs(&input.0, &Inputs { q, k, v }).unwrap();
        let output = TempPath::new("out");
        let o = sdpa(&["run", "--input", input.as_str(), "--output", output.as_str()]);
        assert_input_error(&o, &[needle, input.as_str()]);
    }
}

/// `sdpa bench --layout`: its names in the help, a wrong name and the
/// combinations it does not time refused before any GPU work (exit 2, one
/// line).
#[test]
fn bench_layout_is_checked_before_the_gpu() {
    let o = sdpa(&["bench", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("--layout") && help.contains("bshd") && help.contains("bhsd"), "{help}");
    for (extra, needle) in [
        (&["--layout", "sbhd"][..], "sbhd"),
        (&["--layout", "bshd", "--packed", "64,128"][..], "--layout bshd times dense shapes only"),
        (&["--layout", "bshd", "--modes", "graph,graph-overlap"][..], "drop graph-overlap from --modes"),
    ] {
        let args = [&["bench", "--shapes", "2,8,256,64"][..], extra].concat();
        let o = sdpa(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{needle:?} not in {err:?}");
    }
}
