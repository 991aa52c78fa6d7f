//! Uses sdpa as a dependent crate does: says which kernel images it
//! embedded (on stable Rust, the shipped ones), then runs one causal
//! attention call on GPU 0, or prints the typed error that says why it
//! cannot (no driver, no device, an unsupported one).

use sdpa::AttnError;
use sdpa::quant::{quantize_per_head, random_normal};
use std::process::ExitCode;

fn main() -> ExitCode {
    let build = sdpa::embedded::BUILD;
    println!("kernel images: {:?}", build.images);
    println!("kernel images made by: {} / {}", build.toolchain, build.ptxas);
    match attention() {
        Ok(o) if o.values().iter().all(|x| x.is_finite()) => {
            println!("ran on GPU 0: output {:?}, every value finite", o.shape);
            ExitCode::SUCCESS
        }
        Ok(o) => {
            eprintln!("error: output {:?} holds values that are not finite", o.shape);
            ExitCode::FAILURE
        }
        Err(e @ (AttnError::NoDriver(_) | AttnError::NoDevice { .. } | AttnError::UnsupportedDevice { .. })) => {
            println!("no GPU to run on: {e}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One causal call, [B, H, S, D] = [1, 8, 256, 64], on device 0.
fn attention() -> Result<sdpa::Output, AttnError> {
    let shape = [1, 8, 256, 64];
    let q = quantize_per_head(&random_normal(shape, 1), shape)?;
    let k = quantize_per_head(&random_normal(shape, 2), shape)?;
    let v = quantize_per_head(&random_normal(shape, 3), shape)?;
    let attn = sdpa::Attention::new(0)?;
    attn.forward(&q, &k, &v, &sdpa::Options::new().causal(true))
}
