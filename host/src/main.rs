//! `sdpa`: the command-line tool of the FP8 attention library.
//!
//! - `sdpa info`: embedded kernel images, the kernel table, and the GPU.
//! - `sdpa run --input IN --output OUT [...]`: attention on tensors from a
//!   safetensors file, output to another.
//! - `sdpa bench [...]`: time variants on shapes.
//! - `sdpa plan --shapes ..`: which variant the library would pick, and the
//!   cost model's predicted time of each (no GPU needed).
//!
//! Exit codes: 0 success; 1 a GPU or driver failure; 2 a problem with the
//! command line or the files (one line `error: ...` on stderr).
//!
//! Adding a subcommand is one [`Command`] variant with its argument struct,
//! and one function returning `Result<(), Failure>`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use kernels_gpu::kernels::{KERNELS, ScoreForm};
use kernels_gpu::window::KeyWindow;
use sdpa::device::PackedSeqs;
use sdpa::embedded::ImageChoice;
use sdpa::io::InputTensor;
use sdpa::options::variant_by_name;
use sdpa::quantize::{DeviceFloatTensor, Quantizer, Rotation};
use sdpa::{
    Attention, AttnError, DeviceFp8Tensor, DeviceScales, Fp8Input, Fp8View, Layout, Options, OutputDtype,
    OutputViewMut, PagedKv, Plan, RunExtras, ScaleLayout, Variant, VariantChoice, io, validate,
};

/// FP8 (E4M3) scaled-dot-product attention on NVIDIA GPUs, kernels in Rust.
#[derive(Debug, Parser)]
#[command(name = "sdpa", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Show the embedded kernel images, the kernel table and the GPU.
    ///
    /// Without a GPU or CUDA driver the device line reports why, and the
    /// command still succeeds.
    Info(InfoArgs),
    /// Run attention on q, k, v from a safetensors file; write o to another.
    ///
    /// The input holds tensors `q` [B, Hq, Sq, D] and `k`, `v` [B, Hkv, Skv, D]:
    /// F8_E4M3 codes with optional F32 per-head scales `q_scale`, `k_scale`,
    /// `v_scale` (default 1.0), or F16/BF16/F32 values, quantized on the GPU
    /// per head by amax (see --hadamard). The output holds `o` [B, Hq, Sq, D]
    /// in F16 (BF16 with --out-dtype bf16). Exit code 2 for a problem with
    /// the arguments or files, 1 for a GPU or driver failure.
    ///
    /// Decoding against a cache (the `decode` variant, which `auto` then
    /// means; another named variant is refused), the input may add:
    /// `seqused_k`, I32 [B]: batch b sees the first seqused_k[b] keys of its
    /// cache (0 to Skv; causal masking aligns its last query with its last
    /// key); `page_table`, I32 [B, max_pages]: then `k` and `v` are pools of
    /// pages [pages, page_size, Hkv, D] of F8_E4M3 codes (scales [Hkv]),
    /// page_size a power of two from 32 to 65536, and batch b's keys
    /// page_size*i .. live in page page_table[b, i]. Every entry a sequence
    /// reads must be in 0 .. pages; entries past its length (seqused_k, else
    /// max_pages * page_size keys) are not read. --lse adds `lse` to the
    /// output.
    ///
    /// A packed batch of sequences of their own lengths (`wgmma` and
    /// `wgmma-fp8pv`, sm_90a): `cu_seqlens_q` and `cu_seqlens_k`, I32 [B+1]
    /// prefix sums (from 0, non-decreasing, ending at the rows of q and of
    /// k); then `q` is [total_q, Hq, D], `k` and `v` [total_k, Hkv, D] (codes
    /// with [H] scales, or floats), `o` is [total_q, Hq, D] and --lse's `lse`
    /// [total_q, Hq]. Causal masking aligns each sequence's last query with
    /// its last key; no `seqused_k` or `page_table` beside them.
    Run(RunArgs),
    /// Time kernel variants on shapes (each first checked against the f64
    /// reference on sampled rows), and print a table.
    ///
    /// Each sample is one pair of CUDA events around N launches (N adapts to
    /// about 2 ms of work, at most --launches), either issued back to back
    /// ("direct") or replayed from a CUDA graph ("graph", how the torch peers
    /// are timed by scripts/peers.py; "graph-overlap": the same with every
    /// launch a programmatic dependent launch, sm_90a only). Time per call
    /// = elapsed / N; the table gives median, p10, p90 over --samples
    /// samples, TFLOP/s (4 B Hq Sq Skv D over the median, not halved for
    /// causal) and bytes of Q, K, V, O over the median. Decode shapes (Sq <=
    /// 16) also show their K+V bytes (2 B Hkv Skv D) over the median in TB/s,
    /// and that as a fraction of a device-to-device copy's rate (1 GiB, bytes
    /// read + written over its median), timed once per run the same way
    /// (graph replay when a graph mode is asked for) and printed above the
    /// table.
    Bench(BenchArgs),
    /// Show which variant the library would pick for shapes, and why: the
    /// cost model's predicted time per call of each variant on sm_90a.
    ///
    /// No GPU needed. On sm_90a (H100, H200), from 128 to 2048 keys, the pick
    /// is the lowest prediction among the five variants with a fit; outside
    /// that range a rule by block count and keys, marked "(rule)" (the
    /// model's times are shown, but it was fitted on 128-2048 keys only).
    /// The model (host/src/plan/cost.rs, lab/scripts/fit-cost.py) was fitted
    /// on H100 timings; "off sm_90a" is the pick on other GPUs (sm_89).
    /// "kernel on sm_90a" is the entry the pick launches there with f16
    /// output: `split-n64` runs its pair-row kernel on even lengths of
    /// 257-512 keys at D = 64. With --window or --softcap, "off sm_90a"
    /// and "kernel on sm_90a" are the plans that run them (a variant
    /// without score twins gives way to one that has them).
    Plan(PlanArgs),
}

/// Arguments of `sdpa plan`.
#[derive(Debug, Args)]
struct PlanArgs {
    /// Shapes as B,Hq[:Hkv],Sq[:Skv],D[,causal]: a field without `:` gives
    /// both sides (B,H,S,D is Hq = Hkv = H, Sq = Skv = S); Hq a multiple of
    /// Hkv; causal aligned bottom-right. E.g. 64,32:8,1:8192,128 is one
    /// query token of 32 heads sharing 8 K/V heads against 8192 keys.
    /// Default: the mission shapes, then the long-sequence targets.
    #[arg(long, value_name = "SHAPE", num_args = 1..)]
    shapes: Vec<String>,
    /// Streaming multiprocessors of the GPU to plan for (132 on the H100
    /// SXM and the H200).
    #[arg(long, value_name = "N", default_value_t = 132, value_parser = clap::value_parser!(u32).range(1..=1024))]
    sms: u32,
    /// With a window or a cap, the last two columns name the variant and
    /// the kernel entry that run them (a score twin).
    #[command(flatten)]
    scores: ScoresArgs,
}

/// Arguments of `sdpa info`.
#[derive(Debug, Args)]
struct InfoArgs {
    /// CUDA device ordinal to open and describe.
    #[arg(long, value_name = "N", default_value_t = 0)]
    device: usize,
    #[command(flatten)]
    image: ImageArg,
}

/// Arguments of `sdpa run`.
#[derive(Debug, Args)]
struct RunArgs {
    /// Safetensors file holding `q`, `k`, `v` (and optional `q_scale`,
    /// `k_scale`, `v_scale`, `seqused_k`, `page_table`, or `cu_seqlens_q`
    /// with `cu_seqlens_k`).
    #[arg(long, short, value_name = "IN")]
    input: PathBuf,
    /// Safetensors file to write the output tensor `o` (F16 or BF16, see
    /// --out-dtype) to, and `lse` with --lse; replaced if it exists.
    #[arg(long, short, value_name = "OUT")]
    output: PathBuf,
    /// Also write each query row's log-sum-exp as `lse`, F32 [B, Hq, Sq]
    /// ([total_q, Hq] for a packed batch): ln of the sum over the keys the
    /// row sees of exp(scale * q.k) on the dequantized inputs, -inf for a
    /// row that sees no key. Every variant writes it.
    #[arg(long)]
    lse: bool,
    /// The element type of `o`. f16 holds outputs up to 65504, so V's
    /// scales must be at most 146 (448 x 146 < 65504); bf16 has f32's range
    /// and 8 significant bits instead of 11. Same speed: each kernel is
    /// built for both.
    #[arg(long, value_name = "TYPE", default_value = "f16", value_parser = out_dtype_parser())]
    out_dtype: OutputDtype,
    /// Causal masking, aligned bottom-right: query i sees key j iff
    /// j <= i + Skv - Sq. Rows that see no key come out as zeros.
    #[arg(long)]
    causal: bool,
    /// Softmax scale applied to Q·K^T (finite, > 0). Default: 1/sqrt(D).
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    scale: Option<f32>,
    #[command(flatten)]
    scores: ScoresArgs,
    /// Kernel variant: `auto`, the variant recommended for the device and
    /// the problem (see `sdpa plan`: on sm_90a, from 128 to 2048 keys the
    /// one a cost model fitted on H100 timings predicts fastest, beyond that
    /// `split` where few blocks run and `wgmma` otherwise; elsewhere `split`
    /// up to 1024 keys, then `mma`), or one by its stable name (see `sdpa
    /// info`). `wgmma-fp8pv` (sm_90a) is never picked: asked for by name, it
    /// runs P·V on FP8 tensor cores, in about 0.81-0.91 of `wgmma`'s time on
    /// long D = 128 rows on the H100 (about even at D = 64), with P rounded
    /// to E4M3 (relative L2 error ~2.7e-2 instead of ~4e-4).
    #[arg(long, value_name = "NAME", default_value = VariantChoice::AUTO)]
    variant: String,
    /// Rotate float q and k by the normalised Walsh-Hadamard matrix before
    /// quantizing them (on the GPU, per head). The rotation cancels in
    /// Q·K^T, so the result is the same attention, while outliers spread
    /// over all D dimensions lose less to E4M3 rounding: on inputs with
    /// rare large outliers the output error falls by about half; on
    /// Gaussian inputs it is unchanged. Needs float q and k.
    #[arg(long)]
    hadamard: bool,
    /// CUDA device ordinal to run on.
    #[arg(long, value_name = "N", default_value_t = 0)]
    device: usize,
    #[command(flatten)]
    image: ImageArg,
}

/// Arguments of `sdpa bench`.
#[derive(Debug, Args)]
struct BenchArgs {
    /// Shapes as B,Hq[:Hkv],Sq[:Skv],D[,causal]: a field without `:` gives
    /// both sides (B,H,S,D is Hq = Hkv = H, Sq = Skv = S); Hq a multiple of
    /// Hkv; causal aligned bottom-right. E.g. 64,32:8,1:8192,128 is one
    /// query token of 32 heads sharing 8 K/V heads against 8192 keys.
    /// Default: the mission shapes, then the long-sequence targets.
    #[arg(long, value_name = "SHAPE", num_args = 1..)]
    shapes: Vec<String>,
    /// Variants to time, comma-separated (default: all of the loaded image;
    /// see `sdpa info`).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    variants: Vec<String>,
    /// The element type the timed kernels write: f16 or bf16.
    #[arg(long, value_name = "TYPE", default_value = "f16", value_parser = out_dtype_parser())]
    out_dtype: OutputDtype,
    #[command(flatten)]
    scores: ScoresArgs,
    /// How Q, K, V and O lie in memory: bhsd ([B, H, S, D]) or bshd ([B,
    /// S, H, D], FlashAttention's flash_attn_func layout; the cache column
    /// reads `bshd`). bshd times the variants that read it in place
    /// (`wgmma` and `wgmma-fp8pv` on sm_90a, `decode` with one query row),
    /// leaves the others out, and takes dense shapes only.
    #[arg(long, value_name = "LAYOUT", default_value = "bhsd", value_parser = layout_parser())]
    layout: Layout,
    /// Launch modes, comma-separated: graph, direct, graph-overlap.
    #[arg(long, value_name = "MODES", value_delimiter = ',', default_values_t = ["graph".to_string(), "direct".to_string()])]
    modes: Vec<String>,
    /// Also time `decode` on a paged cache of N-key pages (a power of two
    /// from 32 to 65536) at the decode shapes (Sq <= 16): each one's K and
    /// V laid out in pages that a
    /// shuffled page table scatters over the pools, the same values as the
    /// contiguous cache, timed beside it through the device API (the
    /// `cache` column: `contig`, `paged:N`; other variants as usual). A
    /// shape whose Skv is not a whole number of pages reads its last page
    /// partly, through seqused_k.
    #[arg(long, value_name = "N")]
    page_size: Option<usize>,
    /// `decode` sees only these keys per sequence (seqused_k; a
    /// comma-separated list cycled over the batch), on the contiguous cache and on the paged one (`+lens`
    /// in the cache column; K+V bytes, GB/s and TFLOP/s count those keys
    /// only; other variants as usual, on every key). With this or
    /// --page-size, `decode` is timed on these caches only at the decode
    /// shapes, each length at most the shape's Skv.
    #[arg(long, value_name = "LENS", value_delimiter = ',')]
    seqused_k: Vec<usize>,
    /// Also time, at each shape, a packed batch of sequences of these
    /// lengths (comma-separated; queries = keys per sequence, 0 allowed)
    /// with the shape's heads, head dimension and causal mask (its B and S
    /// are its own dense rows'), on `wgmma` and `wgmma-fp8pv` among
    /// --variants, sm_90a. Rows `packed:N` (N sequences), shape
    /// B,Hq[:Hkv],<=S,D (S the longest); TFLOP/s counts the sum of 4 Hq L^2
    /// D over the sequences (not halved for causal, as dense rows).
    #[arg(long, value_name = "LENS", value_delimiter = ',')]
    packed: Vec<usize>,
    /// Samples per (variant, shape, mode).
    #[arg(long, value_name = "N", default_value_t = 20)]
    samples: usize,
    /// Most launches per sample.
    #[arg(long, value_name = "N", default_value_t = 100)]
    launches: usize,
    /// Also write every row, with build and device metadata, as JSON here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// CUDA device ordinal to run on.
    #[arg(long, value_name = "N", default_value_t = 0)]
    device: usize,
    #[command(flatten)]
    image: ImageArg,
}

/// `--window` and `--softcap` of `sdpa run`, `sdpa bench` and `sdpa
/// plan`: sliding windows and capped scores, which the variants with score
/// twins run (`sdpa::plan::SCORES_SUPPORTED`); other variants refuse them,
/// and `sdpa bench` leaves those out.
#[derive(Debug, Args)]
struct ScoresArgs {
    /// Sliding window: query i, at key position p = i + Skv - Sq, sees the
    /// keys p - LEFT ..= p + RIGHT (-1: no limit on that side), and with
    /// --causal none past p (FlashAttention's window_size).
    #[arg(long, value_name = "LEFT,RIGHT", allow_hyphen_values = true, value_parser = parse_window)]
    window: Option<KeyWindow>,
    /// Cap the scores: s becomes CAP * tanh(s / CAP) before the softmax
    /// (finite, > 0).
    #[arg(long, value_name = "CAP", allow_negative_numbers = true)]
    softcap: Option<f32>,
}

impl ScoresArgs {
    /// `opts` with this window and cap.
    fn apply(&self, mut opts: Options) -> Options {
        opts.window = self.window.unwrap_or_default();
        opts.softcap = self.softcap;
        opts
    }

    /// Whether a window or a cap is asked for.
    fn any(&self) -> bool {
        self.window.is_some() || self.softcap.is_some()
    }

    /// The scores a kernel must compute for them (`Plain` where neither
    /// is asked for).
    fn form(&self) -> ScoreForm {
        match (self.softcap, self.window) {
            (Some(_), _) => ScoreForm::Softcap,
            (None, Some(w)) if !w.is_full() => ScoreForm::Window,
            (None, _) => ScoreForm::Plain,
        }
    }
}

/// Parses `LEFT,RIGHT` (each a key count, or -1 for no limit).
fn parse_window(text: &str) -> Result<KeyWindow, String> {
    let side = |s: &str| match s.trim().parse::<i64>() {
        Ok(-1) => Ok(None),
        Ok(n) if (0..KeyWindow::UNBOUNDED as i64).contains(&n) => Ok(Some(n as u32)),
        _ => Err(format!("{s:?} is not a key count below {} or -1", KeyWindow::UNBOUNDED)),
    };
    match text.split_once(',') {
        Some((left, right)) => Ok(KeyWindow::new(side(left)?, side(right)?)),
        None => Err(format!("{text:?} is not LEFT,RIGHT")),
    }
}

/// `--image` of the commands that open a GPU.
#[derive(Debug, Args)]
struct ImageArg {
    /// The embedded image to load (`sdpa info` lists them): `auto`, the device's own,
    /// or an arch, e.g. `sm_89` (its PTX, compiled by the driver, on a newer
    /// GPU). Default: $SDPA_IMAGE, else auto.
    #[arg(long = "image", value_name = "ARCH")]
    name: Option<String>,
}

impl ImageArg {
    /// `--image`, else `SDPA_IMAGE`.
    fn choice(&self) -> ImageChoice {
        self.name.as_deref().map_or_else(ImageChoice::from_env, ImageChoice::from_name)
    }
}

/// `--out-dtype`: one of the names of `OutputDtype::ALL` (which `--help`
/// lists), as the type.
fn out_dtype_parser() -> impl clap::builder::TypedValueParser<Value = OutputDtype> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(OutputDtype::ALL.map(OutputDtype::name))
        .try_map(|name: String| OutputDtype::from_name(&name).ok_or(format!("unknown output type {name:?}")))
}

fn layout_parser() -> impl clap::builder::TypedValueParser<Value = Layout> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Layout::ALL.map(Layout::name))
        .try_map(|name: String| Layout::from_name(&name).ok_or(format!("unknown layout {name:?}")))
}

/// Why a command failed: the exit code and the one line to print.
#[derive(Debug)]
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    /// A problem with the command line or the files (exit 2).
    fn usage(message: impl ToString) -> Self {
        Self { code: 2, message: message.to_string() }
    }

    /// A library error: driver and device failures exit 1, invalid input 2.
    fn attn(err: AttnError) -> Self {
        let code = match err {
            AttnError::NoDriver(_)
            | AttnError::NoDevice { .. }
            | AttnError::UnsupportedDevice { .. }
            | AttnError::Driver(_) => 1,
            _ => 2,
        };
        Self { code, message: err.to_string() }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(args) => info(args),
        Command::Run(args) => run(args),
        Command::Bench(args) => bench(args),
        Command::Plan(args) => plan(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            // One line, whatever the message holds.
            let line = failure.message.replace(['\n', '\r'], " ");
            eprintln!("error: {line}");
            ExitCode::from(failure.code)
        }
    }
}

/// `sdpa info`: static information first, then the device (or why not).
fn info(args: InfoArgs) -> Result<(), Failure> {
    println!("embedded images:");
    let images = sdpa::embedded::images();
    if images.is_empty() {
        println!("  (none)");
    }
    for image in images {
        let (major, minor) = image.capability;
        println!("  {:<8} (cc {major}.{minor})  {}", image.arch, image.describe());
    }
    println!();
    println!("kernels:");
    println!(
        "  {:<11} {:>8} {:>7} {:>7} {:>6} {:>7} {:>10} {:>6}  entry",
        "variant", "head_dim", "BLOCK_M", "BLOCK_N", "stages", "threads", "smem_bytes", "output"
    );
    for k in &KERNELS {
        let t = k.tiles;
        println!(
            "  {:<11} {:>8} {:>7} {:>7} {:>6} {:>7} {:>10} {:>6}  {}",
            k.variant.name(),
            t.head_dim,
            t.block_m,
            t.block_n,
            t.stages,
            k.threads(),
            k.smem_bytes,
            k.output.name(),
            k.entry
        );
    }

    println!();
    match Attention::with_image(args.device, args.image.choice()) {
        Ok(attn) => {
            let d = attn.device();
            let variants: Vec<&str> = attn.variants().iter().map(|v| v.name()).collect();
            println!(
                "device {}: {}, compute capability {}.{}, {} SMs, loaded {}: {} kernels, variants {}",
                d.ordinal,
                d.name,
                d.capability.0,
                d.capability.1,
                d.multiprocessors,
                d.image,
                attn.kernels().count(),
                variants.join(", ")
            );
        }
        Err(err) => println!("device {}: unavailable: {err}", args.device),
    }
    Ok(())
}

/// `sdpa run`: load, validate, plan on the device, run, save.
fn run(args: RunArgs) -> Result<(), Failure> {
    let variant = VariantChoice::from_name(&args.variant).map_err(Failure::attn)?;
    if let Some(scale) = args.scale
        && !(scale.is_finite() && scale > 0.0)
    {
        return Err(Failure::attn(AttnError::InvalidScale { what: "--scale".to_string(), value: scale }));
    }
    let qk_rotation = if args.hadamard { Rotation::Hadamard } else { Rotation::None };
    let inputs = io::load_raw_inputs(&args.input, qk_rotation).map_err(Failure::usage)?;
    let float = |t: &InputTensor| matches!(t, InputTensor::Float(_));
    if args.hadamard && !(float(&inputs.q) && float(&inputs.k)) {
        return Err(Failure::usage(format!(
            "{}: --hadamard needs float (F16, BF16 or F32) q and k: the rotation cancels only when both get it",
            args.input.display()
        )));
    }
    if let Some(batch) = inputs.packed.clone() {
        return run_packed_file(&args, inputs, batch, variant, qk_rotation);
    }
    let with_extras = !inputs.decode.is_empty() || args.lse;
    let variant = if inputs.decode.is_empty() { variant } else { decode_variant(variant, &inputs.decode)? };
    let mut opts = args.scores.apply(Options::new().causal(args.causal).variant(variant).output(args.out_dtype));
    opts.scale = args.scale;
    // Every input problem is reported before the GPU is touched (float
    // inputs with the scales the GPU quantizer will give them; pools as the
    // cache their page table makes of them).
    let [q, k, v] = inputs.planned();
    let problem =
        validate::validate(&q, &k, &v, &opts).map_err(|e| Failure::usage(format!("{}: {e}", args.input.display())))?;
    // So is an output path that cannot be written.
    let output = io::OutputFile::create(&args.output).map_err(Failure::usage)?;
    let attn = Attention::with_image(args.device, args.image.choice()).map_err(Failure::attn)?;
    let plan = Plan::new(problem, opts.variant, attn.target()).map_err(Failure::attn)?;
    let start = Instant::now();
    let cache = describe_cache(&inputs);
    let (o, lse) = if with_extras {
        run_with_extras(&attn, &plan, inputs, qk_rotation, args.lse).map_err(Failure::attn)?
    } else {
        (run_inputs(&attn, &plan, inputs, qk_rotation).map_err(Failure::attn)?, None)
    };
    let elapsed = start.elapsed();
    output.write(&o, lse.as_ref()).map_err(Failure::usage)?;

    let d = attn.device();
    let [q_shape, kv_shape] = [plan.problem().q_shape(), plan.problem().kv_shape()];
    println!("q {q_shape:?} k {kv_shape:?} v {kv_shape:?} -> o {:?}", o.shape);
    if let Some(cache) = cache {
        println!("{cache}");
    }
    print_run(&plan, &opts, d, elapsed);
    let with_lse = if lse.is_some() { " (o, lse)" } else { "" };
    println!("wrote {}{with_lse}", args.output.display());
    Ok(())
}

/// `sdpa run` on a file holding a packed batch (`cu_seqlens_q`,
/// `cu_seqlens_k`): validated before the GPU (the scales as a dense
/// problem of the longest sequences would be, the rows by
/// [`validate::Problem::packed`]), run through the device API, `o`
/// `[total_q, Hq, D]` (and `lse` `[total_q, Hq]`) written.
fn run_packed_file(
    args: &RunArgs,
    inputs: io::RawInputs,
    batch: io::PackedBatch,
    choice: VariantChoice,
    qk_rotation: Rotation,
) -> Result<(), Failure> {
    let variant = packed_variant(choice)?;
    let mut opts = args.scores.apply(Options::new().causal(args.causal).variant(variant).output(args.out_dtype));
    opts.scale = args.scale;
    let in_file = |e: AttnError| Failure::usage(format!("{}: {e}", args.input.display()));
    let [q, k, v] = inputs.planned();
    let scales = validate::validate(&q, &k, &v, &opts).map_err(in_file)?.scales;
    let [q_rows, k_rows, v_rows] = [&inputs.q, &inputs.k, &inputs.v].map(packed_rows);
    let problem =
        validate::Problem::packed(q_rows, k_rows, v_rows, batch.batch(), batch.max_seqlen(), &opts).map_err(in_file)?;
    let output = io::OutputFile::create(&args.output).map_err(Failure::usage)?;
    let attn = Attention::with_image(args.device, args.image.choice()).map_err(Failure::attn)?;
    let plan = Plan::new(problem, opts.variant, attn.target()).map_err(Failure::attn)?;
    let start = Instant::now();
    let out = run_packed(&attn, &plan, inputs, &batch, &scales, qk_rotation, args.lse).map_err(Failure::attn)?;
    let elapsed = start.elapsed();
    output.write_packed(&out).map_err(Failure::usage)?;

    let d = attn.device();
    let [max_q, max_k] = batch.max_seqlen();
    println!("q {q_rows:?} k {k_rows:?} v {v_rows:?} -> o {:?}", out.shape);
    println!("packed batch: {} sequences, up to {max_q} queries and {max_k} keys each", batch.batch());
    print_run(&plan, &opts, d, elapsed);
    let with_lse = if out.lse.is_some() { " (o, lse)" } else { "" };
    println!("wrote {}{with_lse}", args.output.display());
    Ok(())
}

/// A packed batch's tensor as its file holds it, `[rows, heads,
/// head_dim]` (the reader keeps it as `[rows, heads, 1, head_dim]`).
fn packed_rows(t: &InputTensor) -> [usize; 3] {
    let [rows, heads, _, head_dim] = t.shape();
    [rows, heads, head_dim]
}

/// The variant that runs a packed batch: `auto` (the library's pick among
/// the `wgmma` variants), `wgmma` or `wgmma-fp8pv`; another by name is a
/// usage error.
fn packed_variant(choice: VariantChoice) -> Result<VariantChoice, Failure> {
    match choice {
        VariantChoice::Auto | VariantChoice::Fixed(Variant::Wgmma | Variant::WgmmaFp8Pv) => Ok(choice),
        VariantChoice::Fixed(other) => Err(Failure::usage(format!(
            "a packed batch (`cu_seqlens_q`, `cu_seqlens_k`) runs on `wgmma` and `wgmma-fp8pv` only; --variant {} cannot run it",
            other.name()
        ))),
    }
}

/// Runs a packed plan on the file's q, k and v (float ones quantized on
/// the GPU, their scales checked against `validated`) through
/// [`Attention::run_packed`], with the log-sum-exp if `want_lse`.
fn run_packed(
    attn: &Attention,
    plan: &Plan,
    inputs: io::RawInputs,
    batch: &io::PackedBatch,
    validated: &[f32],
    qk_rotation: Rotation,
    want_lse: bool,
) -> Result<io::PackedOutput, AttnError> {
    let [q_rows, k_rows, v_rows] = [&inputs.q, &inputs.k, &inputs.v].map(packed_rows);
    let mut quantizer = None;
    let mut to_device = |t, rotation| device_input(attn, &mut quantizer, t, rotation);
    let q = to_device(inputs.q, qk_rotation)?;
    let k = to_device(inputs.k, qk_rotation)?;
    let v = to_device(inputs.v, Rotation::None)?;
    if [&q.scales[..], &k.scales, &v.scales].concat() != validated {
        return Err(AttnError::NotPlanned("the quantized inputs' scales are not the validated ones".into()));
    }
    let stream = attn.stream();
    let [q_scale, k_scale, v_scale] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s));
    let (q_scale, k_scale, v_scale) = (q_scale?, k_scale?, v_scale?);
    let scales = DeviceScales::new(q_scale.as_view(), k_scale.as_view(), v_scale.as_view(), ScaleLayout::PerHead);
    let (cu_q, cu_k) = (stream.clone_htod(&batch.cu_seqlens_q)?, stream.clone_htod(&batch.cu_seqlens_k)?);
    let [max_q, max_k] = batch.max_seqlen();
    let seqs = PackedSeqs::new(cu_q.as_view(), cu_k.as_view(), max_q, max_k)?;
    let mut ws = attn.workspace(plan)?;
    let output = plan.problem().output;
    let mut o = stream.alloc_zeros::<u16>(q_rows.iter().product())?;
    let mut lse = if want_lse { Some(stream.alloc_zeros::<f32>(q_rows[0] * q_rows[1])?) } else { None };
    let mut extras = RunExtras::new();
    if let Some(lse) = &mut lse {
        extras = extras.lse(lse.as_view_mut());
    }
    attn.run_packed(
        plan,
        &Fp8View::packed(q.data.as_view(), q_rows)?,
        &Fp8View::packed(k.data.as_view(), k_rows)?,
        &Fp8View::packed(v.data.as_view(), v_rows)?,
        &seqs,
        &scales,
        &mut OutputViewMut::packed(o.as_view_mut(), output, q_rows)?,
        &mut ws,
        extras,
    )?;
    let bits = stream.clone_dtoh(&o)?;
    let lse = lse.map(|lse| stream.clone_dtoh(&lse)).transpose()?;
    stream.synchronize()?;
    Ok(io::PackedOutput { bits, dtype: output, shape: q_rows, lse })
}

/// The variant that runs a file's cache tensors (`seqused_k`,
/// `page_table`): `decode`, which `auto` means here; another variant by
/// name is a usage error.
fn decode_variant(choice: VariantChoice, decode: &io::DecodeInputs) -> Result<VariantChoice, Failure> {
    match choice {
        VariantChoice::Auto | VariantChoice::Fixed(Variant::Decode) => Ok(Variant::Decode.into()),
        VariantChoice::Fixed(other) => {
            let asked = [(decode.seq_used_k.is_some(), "`seqused_k`"), (decode.page_table.is_some(), "`page_table`")];
            let asked: Vec<&str> = asked.into_iter().filter_map(|(given, what)| given.then_some(what)).collect();
            Err(Failure::usage(format!(
                "{} {} the `decode` variant's; --variant {} cannot run it (use auto or decode)",
                asked.join(" and "),
                if asked.len() == 1 { "is" } else { "are" },
                other.name()
            )))
        }
    }
}

/// One line on a file's decode tensors, where it has any.
fn describe_cache(inputs: &io::RawInputs) -> Option<String> {
    let lens = inputs.decode.seq_used_k.as_ref().map(|lens| {
        let (min, max) = (lens.iter().min().unwrap_or(&0), lens.iter().max().unwrap_or(&0));
        format!("seqused_k {min} to {max} keys")
    });
    let pages = inputs.decode.page_table.as_ref().map(|t| {
        let [pages, page_size, _, _] = inputs.k.shape();
        format!("page table [{}, {}] over {pages} pages of {page_size} keys", t.batch, t.max_pages)
    });
    let parts: Vec<String> = [pages, lens].into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Runs `plan` on the file's q, k and v: uploaded (float ones quantized on
/// the GPU), launched, downloaded.
fn run_inputs(
    attn: &Attention,
    plan: &Plan,
    inputs: io::RawInputs,
    qk_rotation: Rotation,
) -> Result<sdpa::Output, AttnError> {
    // Loaded at the first float input.
    let mut quantizer = None;
    let mut to_device = |t, rotation| device_input(attn, &mut quantizer, t, rotation);
    let q = to_device(inputs.q, qk_rotation)?;
    let k = to_device(inputs.k, qk_rotation)?;
    let v = to_device(inputs.v, Rotation::None)?;
    // The plan's scales are the CPU's prediction of the quantizer's:
    // `prepare` refuses inputs whose scales differ.
    let dev = attn.prepare(plan, q, k, v)?;
    let mut out = attn.alloc_output(&dev)?;
    attn.run(&dev, &mut out)?;
    attn.download(&out)
}

/// Runs `plan` on the file's q, k and v (or pools and page table) through
/// the device API, with its `seqused_k` and, if `want_lse`, the
/// log-sum-exp output.
fn run_with_extras(
    attn: &Attention,
    plan: &Plan,
    inputs: io::RawInputs,
    qk_rotation: Rotation,
    want_lse: bool,
) -> Result<(sdpa::Output, Option<io::Lse>), AttnError> {
    let mut quantizer = None;
    let mut to_device = |t, rotation| device_input(attn, &mut quantizer, t, rotation);
    let q = to_device(inputs.q, qk_rotation)?;
    let k = to_device(inputs.k, qk_rotation)?;
    let v = to_device(inputs.v, Rotation::None)?;
    let p = plan.problem();
    // As `prepare` checks: the quantizer's scales must be those validated.
    if [&q.scales[..], &k.scales, &v.scales].concat() != p.scales {
        return Err(AttnError::NotPlanned("the quantized inputs' scales are not the validated ones".into()));
    }
    let stream = attn.stream();
    let [q_scale, k_scale, v_scale] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s));
    let (q_scale, k_scale, v_scale) = (q_scale?, k_scale?, v_scale?);
    let scales = DeviceScales::new(q_scale.as_view(), k_scale.as_view(), v_scale.as_view(), ScaleLayout::PerHead);
    let mut ws = attn.workspace(plan)?;
    let mut o = stream.alloc_zeros::<u16>(p.q_len())?;
    let lse_shape = [p.batch, p.heads_q, p.seq_q];
    let mut lse = if want_lse { Some(stream.alloc_zeros::<f32>(lse_shape.iter().product())?) } else { None };
    let lens = inputs.decode.seq_used_k.as_ref().map(|lens| stream.clone_htod(lens)).transpose()?;
    let table = inputs.decode.page_table.as_ref().map(|t| stream.clone_htod(&t.entries)).transpose()?;
    let mut extras = RunExtras::new();
    if let Some(lens) = &lens {
        extras = extras.seq_used_k(lens.as_view());
    }
    if let Some(lse) = &mut lse {
        extras = extras.lse(lse.as_view_mut());
    }
    let mut out = OutputViewMut::new(o.as_view_mut(), p.output, p.q_shape())?;
    let q_view = Fp8View::new(q.data.as_view(), q.shape)?;
    let (k_view, v_view) = (Fp8View::new(k.data.as_view(), k.shape)?, Fp8View::new(v.data.as_view(), v.shape)?);
    match (&inputs.decode.page_table, &table) {
        (Some(t), Some(table)) => {
            let kv = PagedKv::new(k_view, v_view, table.as_view(), [t.batch, t.max_pages])?;
            attn.run_paged(plan, &q_view, &kv, &scales, &mut out, &mut ws, extras)?;
        }
        _ => attn.run_views_with(plan, &q_view, &k_view, &v_view, &scales, &mut out, &mut ws, extras)?,
    }
    let bits = stream.clone_dtoh(&o)?;
    let lse = lse.map(|lse| stream.clone_dtoh(&lse)).transpose()?;
    stream.synchronize()?;
    let o = sdpa::Output { bits, dtype: p.output, shape: p.q_shape() };
    Ok((o, lse.map(|values| io::Lse { values, shape: lse_shape })))
}

/// `t` on the device: E4M3 codes copied as they are, float values uploaded
/// and quantized per head on the GPU (rotated as `rotation` says), by
/// `quantizer`, loaded on first use.
fn device_input(
    attn: &Attention,
    quantizer: &mut Option<Quantizer>,
    t: InputTensor,
    rotation: Rotation,
) -> Result<DeviceFp8Tensor, AttnError> {
    match t {
        InputTensor::Fp8(t) => attn.to_device(&t),
        InputTensor::Float(t) => {
            let quantizer = match quantizer {
                Some(quantizer) => quantizer,
                None => quantizer.insert(Quantizer::new(attn)?),
            };
            let data = attn.stream().clone_htod(&t.bytes)?;
            quantizer.quantize(&DeviceFloatTensor { data, dtype: t.dtype, shape: t.shape }, rotation)
        }
    }
}

/// The checks a run would make on each shape (zero sizes, length and grid
/// limits), before any GPU work: a usage error naming the first bad shape.
fn check_shapes(shapes: &[sdpa::bench::BenchShape]) -> Result<(), Failure> {
    for shape in shapes {
        sdpa::validate::Problem::new(shape.q_dims(), shape.kv_dims(), shape.kv_dims(), &Options::default())
            .map_err(|e| Failure::usage(format!("shape {}: {e}", shape.label())))?;
    }
    Ok(())
}

/// The layouts `decode` is timed on through the device API (`--page-size`,
/// `--seqused-k`) at the decode shapes, checked against those shapes and
/// the modes before any GPU work; none without either flag.
fn cache_layouts(
    args: &BenchArgs,
    shapes: &[sdpa::bench::BenchShape],
    modes: &[sdpa::bench::LaunchMode],
) -> Result<Vec<sdpa::bench::CacheLayout>, Failure> {
    use sdpa::bench::{CacheLayout, LaunchMode};
    use sdpa::device::{MAX_PAGE_SIZE, MIN_PAGE_SIZE};
    if args.page_size.is_none() && args.seqused_k.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(n) = args.page_size
        && !(n.is_power_of_two() && (MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&n))
    {
        return Err(Failure::usage(format!(
            "--page-size {n}: a power of two from {MIN_PAGE_SIZE} to {MAX_PAGE_SIZE} keys"
        )));
    }
    if modes.contains(&LaunchMode::GraphOverlap) {
        return Err(Failure::usage(
            "--page-size and --seqused-k time `decode` through the device API, which has no overlapped launch: drop graph-overlap from --modes",
        ));
    }
    if !shapes.iter().any(|s| s.is_decode()) {
        return Err(Failure::usage(
            "--page-size and --seqused-k apply to decode shapes (Sq <= 16), and no shape is one",
        ));
    }
    let seq_used_k = (!args.seqused_k.is_empty()).then(|| args.seqused_k.clone());
    for shape in shapes.iter().filter(|s| s.is_decode()) {
        if let Some(&len) = args.seqused_k.iter().find(|&&len| len > shape.seq_kv) {
            return Err(Failure::usage(format!(
                "--seqused-k {len} is past shape {}'s {} keys",
                shape.label(),
                shape.seq_kv
            )));
        }
        if let Some(n) = args.page_size {
            // The paged cache as the plan sees it: whole pages.
            let kv = [shape.batch, shape.heads_kv, shape.seq_kv.div_ceil(n) * n, shape.head_dim];
            sdpa::validate::Problem::new(shape.q_dims(), kv, kv, &Options::default())
                .map_err(|e| Failure::usage(format!("shape {} in pages of {n}: {e}", shape.label())))?;
        }
    }
    let contiguous = CacheLayout { page_size: None, seq_used_k: seq_used_k.clone() };
    let paged = args.page_size.map(|n| CacheLayout { page_size: Some(n), seq_used_k });
    Ok([Some(contiguous), paged].into_iter().flatten().collect())
}

/// `--packed`'s lengths checked before any GPU work: rows in all (above
/// zero, below 2^31), the packed problem at each shape, and no
/// `graph-overlap` (the device API has no overlapped launch).
/// `--layout bshd`'s limits, before any GPU work: dense shapes only, and
/// no overlapped launch (the device API has none).
fn check_layout(args: &BenchArgs, modes: &[sdpa::bench::LaunchMode]) -> Result<(), Failure> {
    if args.layout == Layout::Bhsd {
        return Ok(());
    }
    if !args.packed.is_empty() || args.page_size.is_some() || !args.seqused_k.is_empty() {
        return Err(Failure::usage("--layout bshd times dense shapes only (not --packed, --page-size or --seqused-k)"));
    }
    if modes.contains(&sdpa::bench::LaunchMode::GraphOverlap) {
        return Err(Failure::usage(
            "--layout bshd times through the device API, which has no overlapped launch: drop graph-overlap from --modes",
        ));
    }
    Ok(())
}

fn check_packed(
    lens: &[usize],
    shapes: &[sdpa::bench::BenchShape],
    modes: &[sdpa::bench::LaunchMode],
) -> Result<(), Failure> {
    if lens.is_empty() {
        return Ok(());
    }
    if modes.contains(&sdpa::bench::LaunchMode::GraphOverlap) {
        return Err(Failure::usage(
            "--packed times through the device API, which has no overlapped launch: drop graph-overlap from --modes",
        ));
    }
    let total = lens.iter().try_fold(0usize, |n, &l| n.checked_add(l)).filter(|&n| n > 0);
    let Some(total) = total.filter(|&n| n < i32::MAX as usize) else {
        return Err(Failure::usage("--packed: the lengths must add up to at least 1 row and fewer than 2^31"));
    };
    let longest = lens.iter().copied().max().unwrap_or(0);
    for shape in shapes {
        let (q, kv) = ([total, shape.heads_q, shape.head_dim], [total, shape.heads_kv, shape.head_dim]);
        let opts = Options::new().causal(shape.causal);
        sdpa::validate::Problem::packed(q, kv, kv, lens.len(), [longest, longest], &opts)
            .map_err(|e| Failure::usage(format!("--packed at shape {}: {e}", shape.label())))?;
    }
    Ok(())
}

/// `sdpa bench`: check, then time, every (variant, shape, mode); table last.
fn bench(args: BenchArgs) -> Result<(), Failure> {
    use sdpa::bench::{
        BenchConfig, BenchInputs, BenchShape, DEFAULT_SHAPES, LaunchMode, PackedInputs, bench_decode_cache,
        bench_packed, bench_shape, bench_shape_bshd, time_copy,
    };
    let shapes: Vec<BenchShape> = if args.shapes.is_empty() {
        DEFAULT_SHAPES.iter().map(|s| BenchShape::parse(s)).collect::<Result<_, _>>()
    } else {
        args.shapes.iter().map(|s| BenchShape::parse(s)).collect::<Result<_, _>>()
    }
    .map_err(Failure::usage)?;
    let named: Vec<sdpa::Variant> =
        args.variants.iter().map(|v| variant_by_name(v)).collect::<Result<_, _>>().map_err(Failure::attn)?;
    let modes: Vec<LaunchMode> = args
        .modes
        .iter()
        .map(|m| {
            LaunchMode::ALL.into_iter().find(|mode| mode.name() == m).ok_or_else(|| {
                let known: Vec<&str> = LaunchMode::ALL.iter().map(|mode| mode.name()).collect();
                Failure::usage(format!("unknown launch mode {m:?} (known: {})", known.join(", ")))
            })
        })
        .collect::<Result<_, _>>()?;
    check_shapes(&shapes)?;
    let layouts = cache_layouts(&args, &shapes, &modes)?;
    check_packed(&args.packed, &shapes, &modes)?;
    if args.scores.any() && (!args.packed.is_empty() || args.page_size.is_some() || !args.seqused_k.is_empty()) {
        return Err(Failure::usage(
            "--window and --softcap time dense shapes only (not --packed, --page-size or --seqused-k)",
        ));
    }
    check_layout(&args, &modes)?;
    let output = args.out_dtype;
    let attn = Attention::with_image(args.device, args.image.choice()).map_err(Failure::attn)?;
    let variants = if named.is_empty() { attn.variants() } else { named };
    // With a window or a cap, the variants whose kernels have them.
    let variants: Vec<Variant> = if args.scores.any() {
        let form = args.scores.form();
        let (with, without): (Vec<Variant>, Vec<Variant>) = variants
            .into_iter()
            .partition(|&v| attn.kernels().any(|k| k.variant == v && k.entry_for(false, form).is_some()));
        for v in &without {
            eprintln!("{}: no kernel with --window or --softcap, left out", v.name());
        }
        if with.is_empty() {
            return Err(Failure::usage(format!("--window and --softcap run on {}", sdpa::plan::SCORES_SUPPORTED)));
        }
        with
    } else {
        variants
    };
    let packed_variants: Vec<Variant> = if args.packed.is_empty() {
        Vec::new()
    } else {
        let packed: Vec<Variant> =
            variants.iter().copied().filter(|v| matches!(v, Variant::Wgmma | Variant::WgmmaFp8Pv)).collect();
        if packed.is_empty() {
            return Err(Failure::usage(
                "--packed runs on `wgmma` and `wgmma-fp8pv` (sm_90a), and neither is among the variants to time",
            ));
        }
        packed
    };
    // What is timed at a shape: the variants, and at decode shapes with
    // cache layouts `decode` on those instead.
    let timed_at = |shape: &BenchShape| -> (Vec<Variant>, &[sdpa::bench::CacheLayout]) {
        if shape.is_decode() && !layouts.is_empty() {
            (variants.iter().copied().filter(|&v| v != Variant::Decode).collect(), &layouts)
        } else {
            (variants.clone(), &[])
        }
    };
    let d = attn.device();
    eprintln!(
        "device {}: {} (cc {}.{}), {}, driver {}; output {}",
        d.ordinal,
        d.name,
        d.capability.0,
        d.capability.1,
        d.image,
        d.driver,
        output.name()
    );
    let cfg = BenchConfig {
        launches_per_sample: args.launches,
        samples: args.samples,
        output,
        window: args.scores.window.unwrap_or_default(),
        softcap: args.scores.softcap,
        ..BenchConfig::default()
    };
    // The copy is timed by graph replay where any kernel is.
    let copy_mode = if modes.iter().any(|&m| m != LaunchMode::Direct) { LaunchMode::Graph } else { LaunchMode::Direct };
    eprintln!("device-to-device copy ({}) ...", copy_mode.name());
    let copy = time_copy(&attn, &cfg, copy_mode).map_err(Failure::attn)?;
    let total: usize = shapes.iter().map(&timed_at).map(|(v, l)| v.len() + l.len() + packed_variants.len()).sum();
    let mut rows = Vec::new();
    let mut done = 0;
    for shape in &shapes {
        // (A decode shape's cache is gigabytes of values to draw: say so.)
        eprint!("{}: drawing inputs ...", shape.label());
        let drawing = std::time::Instant::now();
        let inputs = BenchInputs::random(*shape);
        eprintln!(" {:.1} s", drawing.elapsed().as_secs_f64());
        let (shape_variants, shape_layouts) = timed_at(shape);
        for variant in shape_variants {
            done += 1;
            eprintln!("[{done}/{total}] {} {} ...", variant.name(), shape.label());
            let timed = match args.layout {
                Layout::Bshd => bench_shape_bshd(&attn, variant, &inputs, &cfg, &modes),
                _ => bench_shape(&attn, variant, &inputs, &cfg, &modes),
            };
            match timed {
                Err(AttnError::LayoutUnavailable { .. }) => {
                    eprintln!("{}: does not read bshd at {}, left out", variant.name(), shape.label())
                }
                timed => rows.extend(timed.map_err(Failure::attn)?),
            }
        }
        for layout in shape_layouts {
            done += 1;
            eprintln!("[{done}/{total}] decode {} {} ...", shape.label(), layout.label());
            rows.extend(bench_decode_cache(&attn, &inputs, &cfg, &modes, layout).map_err(Failure::attn)?);
        }
        if packed_variants.is_empty() {
            continue;
        }
        let packed = PackedInputs::random(shape, &args.packed);
        for &variant in &packed_variants {
            done += 1;
            eprintln!("[{done}/{total}] {} {} packed ...", variant.name(), packed.label());
            rows.extend(bench_packed(&attn, variant, &packed, &cfg, &modes).map_err(Failure::attn)?);
        }
    }
    if let Some(path) = &args.json {
        let doc = serde_json::json!({ "build": sdpa::embedded::BUILD, "device": d, "copy": copy, "rows": rows });
        let text = serde_json::to_string_pretty(&doc).map_err(Failure::usage)?;
        std::fs::write(path, text).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
    }
    println!(
        "device-to-device copy: {} MiB read + written, {}, median {:.2} us (p10 {:.2}, p90 {:.2}): {:.2} TB/s",
        copy.bytes >> 20,
        copy.mode,
        copy.median_us,
        copy.p10_us,
        copy.p90_us,
        copy.tb_s
    );
    if let (Some(min), Some(max)) = (args.packed.iter().min(), args.packed.iter().max()) {
        println!(
            "packed rows: {} sequences of {min} to {max} rows, {} in all; TFLOP/s = sum over sequences of 4 Hq L^2 D / median (causal not halved)",
            args.packed.len(),
            args.packed.iter().sum::<usize>()
        );
    }
    println!(
        "{:<11} {:<26} {:<16} {:<6} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>7} {:>9} check",
        "variant",
        "shape",
        "cache",
        "mode",
        "median_us",
        "p10_us",
        "p90_us",
        "TFLOP/s",
        "GB/s",
        "KV_TB/s",
        "of_copy",
        "rel_l2"
    );
    for r in &rows {
        // The K+V read rate, alone and against the copy's, for decode shapes.
        let (kv, of_copy) = if r.shape.is_decode() {
            (format!("{:.2}", r.kv_tb_s), format!("{:.0}%", 100.0 * r.kv_tb_s / copy.tb_s))
        } else {
            ("-".to_string(), "-".to_string())
        };
        println!(
            "{:<11} {:<26} {:<16} {:<6} {:>10.2} {:>10.2} {:>10.2} {:>8.1} {:>8.1} {:>8} {:>7} {:>9.1e} {}",
            r.variant,
            r.shape_label(),
            r.layout_label(),
            r.mode,
            r.median_us,
            r.p10_us,
            r.p90_us,
            r.tflops,
            r.gbytes_per_s,
            kv,
            of_copy,
            r.rel_l2,
            if r.correct { "ok" } else { "FAIL" }
        );
    }
    if rows.iter().any(|r| !r.correct) {
        return Err(Failure { code: 1, message: "some timed kernels failed their correctness check".into() });
    }
    Ok(())
}

/// `sdpa plan`: the pick, the model's times and the pick's kernel per shape.
fn plan(args: PlanArgs) -> Result<(), Failure> {
    use kernels_gpu::kernels::HEAD_DIMS;
    use sdpa::Target;
    use sdpa::plan::cost::{MODEL_MAX_KEYS, MODEL_MIN_KEYS, MODELLED, predicted_us};
    use sdpa::plan::recommend::recommended;
    use sdpa::plan::select::select;
    use sdpa::plan::workload::Workload;
    let texts: Vec<String> = if args.shapes.is_empty() {
        sdpa::bench::DEFAULT_SHAPES.iter().map(|s| s.to_string()).collect()
    } else {
        args.shapes
    };
    let shapes = texts.iter().map(|t| sdpa::bench::BenchShape::parse(t)).collect::<Result<Vec<_>, _>>();
    let shapes = shapes.map_err(Failure::usage)?;
    if let Some(s) = shapes.iter().find(|s| !HEAD_DIMS.contains(&(s.head_dim as u32))) {
        return Err(Failure::usage(format!("head dim {}: the kernels serve {HEAD_DIMS:?}", s.head_dim)));
    }
    check_shapes(&shapes)?;
    println!(
        "predicted time per call on sm_90a with {} SMs (us; cost model fitted on H100 timings, 128-2048 keys)",
        args.sms
    );
    print!("{:<26}", "shape");
    for v in MODELLED {
        print!(" {:>9}", v.name());
    }
    println!("  {:<14} {:<10} kernel on sm_90a", "pick", "off sm_90a");
    for (text, s) in texts.iter().zip(&shapes) {
        let w = Workload::new(s.q_dims(), s.kv_dims(), s.causal);
        print!("{text:<26}");
        for v in MODELLED {
            match predicted_us(&w, v, args.sms) {
                Some(t) => print!(" {t:>9.1}"),
                None => print!(" {:>9}", "-"),
            }
        }
        let pick = recommended(&w, Target { sm90a: true, multiprocessors: args.sms });
        let rule = if (MODEL_MIN_KEYS..=MODEL_MAX_KEYS).contains(&w.seq_kv) { "" } else { " (rule)" };
        let (seq_q, seq_kv, head_dim) = (s.seq_q as u32, s.seq_kv as u32, s.head_dim as u32);
        let (off, kernel) = if args.scores.any() {
            // The plans that run the window or cap, on and off sm_90a.
            let opts = args.scores.apply(Options::new().causal(s.causal));
            let planned = |sm90a| {
                let problem = validate::Problem::new(s.q_dims(), s.kv_dims(), s.kv_dims(), &opts)?;
                Plan::new(problem, VariantChoice::Auto, Target { sm90a, multiprocessors: args.sms })
            };
            let off = planned(false).map_or("-", |p| p.variant().name());
            (off, planned(true).map_or("-", |p| p.entry()))
        } else {
            let off = recommended(&w, Target { sm90a: false, multiprocessors: args.sms }).name();
            // ("-" where the pick has no kernel at this head dimension.)
            (off, select(pick, head_dim, seq_q, seq_kv, s.causal, OutputDtype::F16).map_or("-", |k| k.entry))
        };
        println!("  {:<14} {off:<10} {kernel}", format!("{}{rule}", pick.name()));
    }
    Ok(())
}

/// The line `sdpa run` prints about what ran: the variant, its entry and
/// output type, causality, the softmax scale, the device and the time.
fn print_run(plan: &sdpa::Plan, opts: &Options, d: &sdpa::DeviceInfo, elapsed: std::time::Duration) {
    let side = |n: u32| if n >= KeyWindow::UNBOUNDED { -1 } else { i64::from(n) };
    let window = opts.window;
    let scores = match (window.is_full(), opts.softcap) {
        (true, None) => String::new(),
        (_, cap) => format!(
            " window {},{}{}",
            side(window.left),
            side(window.right),
            cap.map_or(String::new(), |c| format!(" softcap {c}"))
        ),
    };
    println!(
        "variant {} ({}, {} output) causal {}{scores} softmax scale {} on device {} ({}): {:.3} ms (upload, quantize, kernel, download)",
        plan.variant().name(),
        plan.entry(),
        plan.kernel().output.name(),
        opts.causal,
        plan.problem().softmax_scale,
        d.ordinal,
        d.name,
        elapsed.as_secs_f64() * 1e3
    );
}
