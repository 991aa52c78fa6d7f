//! `sdpa run`'s float path without a GPU: `--hadamard` is explained in the
//! help and refused, before the GPU, unless q and k are both float; float
//! inputs are read with the scales the GPU quantizer will give them.

use std::path::PathBuf;
use std::process::Command;

use safetensors::{Dtype, tensor::TensorView};
use sdpa::io::{InputTensor, Inputs, load_raw_inputs, save_inputs};
use sdpa::quant::{Rotation, ScaleGroup, random_normal, random_problem, scales_as_gpu};

fn sdpa(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sdpa")).args(args).output().expect("the sdpa binary runs")
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("sdpa-cli-quantizer-{}-{name}", std::process::id()))
}

/// A file with f32 tensors q, k, v of `shape`.
fn float_file(name: &str, shape: [usize; 4]) -> (PathBuf, [Vec<f32>; 3]) {
    let values = [1, 2, 3].map(|seed| random_normal(shape, seed));
    let bytes: Vec<Vec<u8>> = values.iter().map(|v| v.iter().flat_map(|x| x.to_le_bytes()).collect()).collect();
    let views: Vec<(&str, TensorView)> = ["q", "k", "v"]
        .into_iter()
        .zip(&bytes)
        .map(|(n, b)| (n, TensorView::new(Dtype::F32, shape.to_vec(), b).unwrap()))
        .collect();
    let path = temp(name);
    std::fs::write(&path, safetensors::serialize(views, None).unwrap()).unwrap();
    (path, values)
}

#[test]
fn help_explains_hadamard() {
    let out = sdpa(&["run", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--hadamard") && help.contains("Walsh-Hadamard"), "{help}");
}

#[test]
fn hadamard_needs_float_q_and_k() {
    let (q, k, v) = random_problem([1, 2, 8, 64], [1, 2, 8, 64], 0);
    let input = temp("fp8.safetensors");
    save_inputs(&input, &Inputs { q, k, v }).unwrap();
    let output = temp("fp8-out.safetensors");
    let out = sdpa(&["run", "--hadamard", "-i", input.to_str().unwrap(), "-o", output.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--hadamard needs float"), "{err}");
    assert!(!output.exists());
    std::fs::remove_file(input).unwrap();
}

#[test]
fn float_inputs_carry_the_gpu_quantizers_scales() {
    let shape = [2, 2, 16, 128];
    let (path, values) = float_file("f32.safetensors", shape);
    for rotation in [Rotation::None, Rotation::Hadamard] {
        let inputs = load_raw_inputs(&path, rotation).unwrap();
        for (t, (x, rotated)) in
            [&inputs.q, &inputs.k, &inputs.v].into_iter().zip(values.iter().zip([true, true, false]))
        {
            let InputTensor::Float(t) = t else { panic!("an f32 tensor reads as float") };
            let r = if rotated { rotation } else { Rotation::None };
            assert_eq!(t.scales, scales_as_gpu("x", x, shape, r, ScaleGroup::PerHead).unwrap().0);
            assert_eq!(t.values(), *x);
        }
    }
    std::fs::remove_file(path).unwrap();
}
