//! `cargo xtask`: the project's build and gate commands (setup, ptx, gate,
//! bundle). One module per command; arguments are parsed by hand to keep
//! this crate quick to build.

mod budgets;
mod bundle;
mod check;
mod gate;
mod gpu;
mod ptx;
mod record;
mod setup;
mod util;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  setup                      find ptxas, or install it (pip wheel) into target/cuda-tools;
                             print its path and version
  ptx [--arch sm_90a|sm_89]  build the kernels into target/kernels/<arch>/ (PTX, kernels.cubin)
  gate [--update-budgets] [--no-gpu] [--record]
                             resource gate: ptxas figures of every entry on every arch
                             against budgets.toml (no spills, no stack, smem limits);
                             then, with a GPU, the GPU correctness suite
      --update-budgets       rewrite budgets.toml from the current figures first
      --no-gpu               skip the GPU part
      --record               write results/<date>-gate-resources.json
  bundle                     build the GPU test executables and the sdpa CLI into gpu-bundle/bin/

environment:
  SDPA_PTXAS=<path>          the ptxas to use
  SDPA_GPU=1|0               force the GPU part on or off
  SDPA_GPU_TESTS=<paths>     GPU test executables to run (default: gpu-bundle/tests.txt)
  CARGO=<path>               the cargo used for nested builds";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") || args.first().is_some_and(|a| a == "help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let Some(command) = args.first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[1..];
    let result = match command.as_str() {
        "setup" => setup::run(rest),
        "ptx" => ptx::run(rest),
        "gate" => gate::run(rest),
        "bundle" => bundle::run(rest),
        other => {
            eprintln!("unknown command `{other}`\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
