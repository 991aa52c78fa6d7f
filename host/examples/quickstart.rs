//! The README's library example: random inputs quantized per head, one
//! causal attention call on device 0 with the recommended kernel.
//! `cargo run --release -p sdpa --example quickstart` (needs a GPU).

use sdpa::quant::{quantize_per_head, random_normal};

fn main() -> Result<(), sdpa::AttnError> {
    let (qs, kvs) = ([1, 8, 512, 64], [1, 8, 512, 64]); // [B, H, S, D]
    // f32 values -> E4M3 codes with one scale per head (or sdpa::quant::from_codes).
    let q = quantize_per_head(&random_normal(qs, 1), qs)?;
    let k = quantize_per_head(&random_normal(kvs, 2), kvs)?;
    let v = quantize_per_head(&random_normal(kvs, 3), kvs)?;

    let attn = sdpa::Attention::new(0)?; // device 0; loads the embedded kernels
    let o = attn.forward(&q, &k, &v, &sdpa::Options::new().causal(true))?;
    println!("o {:?}, o[0] = {}", o.shape, o.values()[0]);
    Ok(())
}
