//! `cargo xtask`: the project's build and gate commands (setup, ptx, images,
//! gate, bundle, sanitize, sass, bench, record). One module per command; arguments are parsed by hand to keep
//! this crate quick to build.

mod baselines;
mod bench;
mod benchdata;
mod budgets;
mod bundle;
mod check;
mod codegen;
mod gate;
mod gpu;
mod images;
mod occupancy;
mod ptx;
mod record;
mod report;
mod resources;
mod sanitize;
mod sass;
mod setup;
mod speed;
mod util;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  setup                      find ptxas, or install it (pip wheel) into target/cuda-tools;
                             print its path and version
  codegen [--check]          write the generated sources (the wgmma wrappers); with
                             --check, fail naming each committed one that is stale
  ptx [--arch sm_90a|sm_89]  build the kernels into target/kernels/<arch>/ (PTX, kernels.cubin)
  images [--check]           write the kernel images the library ships (host/images/: a cubin
                             per arch, the sm_89 PTX, manifest.toml); with --check, build
                             them afresh and fail naming each shipped file that differs
  gate [--update-budgets] [--no-gpu] [--record] [--bench PATH] [--baseline PATH] [--update]
                             resource gate: ptxas figures of every entry on every arch
                             against budgets.toml (no spills, no stack, smem limits);
                             then, with a GPU, the GPU correctness suite; then the
                             speed gate on a fresh bench (graph-mode medians against
                             the newest baselines/*-bench.json of the same GPU: fails
                             beyond max(3 x baseline (p90-p10)/median, 5%))
      --update-budgets       rewrite budgets.toml from the current figures first
      --no-gpu               skip the GPU part (the speed gate still reads --bench)
      --record               write baselines/<date>-gate-resources.json
      --bench PATH           the fresh bench: an `sdpa bench --json` file or a record;
                             without it, the gate runs sdpa bench where a GPU is
      --baseline PATH        compare against this bench instead of the newest record:
                             the previous build timed in the same run on the same
                             machine (e.g. scripts/ab-bench.sh's ab-old-N.json)
      --update               record the fresh bench as the new baseline in baselines/
  bundle                     build the GPU test executables, the sdpa CLI and this
                             xtask into gpu-bundle/bin/
  sanitize [--no-bundle] [--out DIR] [--tools memcheck,racecheck,..]
                             with a GPU and compute-sanitizer: bundle, then
                             scripts/sanitize.sh (memcheck, racecheck, synccheck, initcheck
                             over gpu-bundle/bin/sanitize_target); one log, DIR/sanitize.log
                             (DIR: target/sanitize). Without cargo, on a GPU machine:
                             bash scripts/sanitize.sh (log in $OUT, default gpu-out)
  sass ENTRY [--arch sm_90a|sm_89] [--full]
                             the SASS of one kernel entry (nvdisasm, pip wheel installed
                             into target/cuda-tools on first use): instruction count,
                             loops (backward branches) and the opcode mix of the long
                             ones; the listing in target/kernels/<arch>/ENTRY.sass
  bench [--variants a,b] [--shapes \"B,H,S,D[,causal] ..\"] [--modes graph,direct]
        [--peers] [--out DIR] [--date YYYY-MM-DD]
                             on a GPU machine (also as gpu-bundle/bin/xtask bench, no
                             cargo needed): sdpa bench per variant, torch peers with
                             --peers (scripts/peers.py),
                             nvidia-smi clocks; writes DIR/<date>-bench.{json,md,svg}
                             (DIR: baselines/)
  record DIR [--out DIR] [--date YYYY-MM-DD]
                             the same record from the files a GPU run brought back
                             (bench-*.json, peers.jsonl, device.txt, *.log); the date
                             is DIR's YYYY-MM-DD prefix, else today

environment:
  SDPA_PTXAS=<path>          the ptxas to use
  SDPA_NVDISASM=<path>       the nvdisasm `sass` uses
  SDPA_GPU=1|0               force the GPU part on or off
  SDPA_GPU_TESTS=<paths>     GPU test executables to run (default: gpu-bundle/tests.txt)
  SDPA_BIN=<path>            the sdpa CLI bench and the speed gate run
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
        "codegen" => codegen::run(rest),
        "ptx" => ptx::run(rest),
        "images" => images::run(rest),
        "gate" => gate::run(rest),
        "bundle" => bundle::run(rest),
        "sanitize" => sanitize::run(rest),
        "sass" => sass::run(rest),
        "bench" => bench::run(rest),
        "record" => bench::record(rest),
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
