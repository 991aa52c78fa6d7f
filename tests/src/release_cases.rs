//! The cases of the release-scale fuzz (`tests/tests/gpu_fuzz_release.rs`):
//! made without proptest, each from one 64-bit seed, so that ten thousand
//! of them per kernel cost nothing to draw and any one of them can be
//! replayed from its kernel's entry and its seed alone.
//!
//! A case puts its query length on one of the kernel's query tile edges,
//! or its key length on one of its key tile edges (or both, or swapped, or
//! both tiny: `shapes::query_edges`, `shapes::key_edges`); the other
//! length is drawn log-uniformly, so most cases are small and the f64
//! reference stays cheap. Each case's reference work is capped
//! ([`MAX_CASE_COST`]); heads and batch fill what the lengths leave.

use kernels_gpu::kernels::{KernelInfo, ScoreForm};
use sdpa::quant::SplitMix64;

use crate::scores::Scores;

use crate::shapes::{
    CaseShape, FuzzCase, QK_EXPONENT_MAX, SCALE_EXPONENT_MIN, key_edges, query_edges, runnable_length, v_exponent_max,
};

/// The most one case may cost ([`case_cost`]): about 5 ms of one core
/// here (docs/testing.md). Lengths past it (e.g. two 192-row query blocks
/// against 900 keys at D = 128) take one head and a shorter other length;
/// a key edge that costs more on its own (960 keys at D = 128: drawing K
/// and V) takes one head and one or two queries.
pub const MAX_CASE_COST: usize = 1_000_000;

/// The longest "tiny" length (both lengths tiny in some cases).
const TINY: usize = 8;

/// What one case's inputs cost to make and check, in units of one
/// multiply-add of Q·K^T (a query-key-column triple, which the reference
/// works through in about 5 ns of one core here, V's product included):
/// B x Hq x Sq x Skv x D, plus [`GENERATION_MACS_PER_ELEMENT`] per input
/// element (drawing, quantizing).
pub fn case_cost(shape: &CaseShape) -> usize {
    let macs = shape.batch * shape.heads_q * shape.seq_q * shape.seq_kv * shape.head_dim;
    let elements = shape.batch * (shape.heads_q * shape.seq_q + 2 * shape.heads_kv * shape.seq_kv) * shape.head_dim;
    macs + GENERATION_MACS_PER_ELEMENT * elements
}

/// Drawing and quantizing one input element costs about as much as five
/// of [`case_cost`]'s units (measured here).
pub const GENERATION_MACS_PER_ELEMENT: usize = 5;

/// The seeds of `count` cases of `kernel` in a run seeded `seed`: a
/// SplitMix64 stream started from `seed` and the kernel's entry name, so
/// each kernel gets its own cases and a run's cases are the same on every
/// machine.
pub fn case_seeds(seed: u64, kernel: &KernelInfo, count: usize) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed ^ name_hash(kernel.entry));
    (0..count).map(|_| rng.next_u64()).collect()
}

/// FNV-1a of `name` (64 bits).
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3))
}

/// The case of `kernel` that `seed` makes (its inputs come from the same
/// seed: `fuzz::case_inputs`).
pub fn release_case(kernel: &KernelInfo, seed: u64) -> FuzzCase {
    let mut rng = SplitMix64::new(seed);
    let head_dim = kernel.tiles.head_dim as usize;
    let (seq_q, seq_kv) = lengths(kernel, &mut rng);
    let seq_q = runnable_length(kernel, seq_q, rng.below(2) == 0);
    let seq_kv = runnable_length(kernel, seq_kv, rng.below(2) == 0);
    let causal = rng.below(2) == 0;
    let one_head = CaseShape { batch: 1, heads_q: 1, heads_kv: 1, seq_q, seq_kv, head_dim, causal };
    let (batch, heads_q, heads_kv) = heads(&mut rng, case_cost(&one_head));
    let shape = CaseShape { batch, heads_q, heads_kv, ..one_head };
    FuzzCase { shape, scale_exponents: scale_exponents(kernel, &mut rng), seed, scores: None }
}

/// The case of `kernel`'s score twin for `form` that `seed` makes: the
/// shape, scales and inputs of [`release_case`] with a sliding window
/// (every `ScoreForm::Window` case; half the `Softcap` ones) and a cap
/// (every `Softcap` case), drawn from a stream of its own so the shape is
/// the plain case's. Each side of a window sits on or beside a tile edge
/// (0, 1, 63-65, 127-129, 191-193) or anywhere up to 300, or is unbounded;
/// the cap is 1, 5 or 30 (`None` for `Plain`).
pub fn release_scored_case(kernel: &KernelInfo, seed: u64, form: ScoreForm) -> FuzzCase {
    let case = release_case(kernel, seed);
    let mut rng = SplitMix64::new(seed ^ SCORES_STREAM);
    let mut side = || match rng.below(8) {
        0 => None,
        1 => Some(rng.below(2) as u32),
        2..=4 => Some([63u32, 64, 65, 127, 128, 129, 191, 192, 193][rng.below(9) as usize]),
        _ => Some(rng.below(301) as u32),
    };
    let (left, right) = match (side(), side()) {
        // A window twin's case bounds at least one side.
        (None, None) => (Some(rng.below(301) as u32), None),
        sides => sides,
    };
    let windowed = form == ScoreForm::Window || (form == ScoreForm::Softcap && rng.below(2) == 0);
    let (left, right) = if windowed { (left, right) } else { (None, None) };
    let softcap = (form == ScoreForm::Softcap).then(|| [1.0f32, 5.0, 30.0][rng.below(3) as usize]);
    let scores = Scores { left, right, causal: case.shape.causal, softcap };
    FuzzCase { scores: (form != ScoreForm::Plain).then_some(scores), ..case }
}

/// Mixed into a case's seed for its scores' stream.
const SCORES_STREAM: u64 = 0x5C0E_5C0E_5C0E_5C0E;

/// `(seq_q, seq_kv)`, by one of five draws (in sixteenths): the query
/// length on a query edge and the key length log-uniform up to two key
/// blocks (6), the other way round (6), both on edges (2: either drawn
/// first, the other among those that fit beside it), swapped (1) and both
/// tiny (1); every length within the room the cost cap leaves.
fn lengths(kernel: &KernelInfo, rng: &mut SplitMix64) -> (usize, usize) {
    let (q_edges, k_edges) = (query_edges(kernel), key_edges(kernel));
    let (block_m, block_n) = (kernel.tiles.block_m as usize, kernel.tiles.block_n as usize);
    let room = Room { head_dim: kernel.tiles.head_dim as usize };
    match rng.below(16) {
        0..=5 => {
            let seq_q = pick(rng, &q_edges);
            (seq_q, log_uniform(rng, (2 * block_n + 1).min(room.beside(seq_q))))
        }
        6..=11 => {
            let seq_kv = pick(rng, &k_edges);
            (log_uniform(rng, (2 * block_m + 1).min(room.beside(seq_kv))), seq_kv)
        }
        12 => room.both(rng, &q_edges, &k_edges),
        13 => {
            let (seq_kv, seq_q) = room.both(rng, &k_edges, &q_edges);
            (seq_q, seq_kv)
        }
        // Swapped: the query length on a key edge and the key length on a
        // query edge, so that both Sq < Skv and Sq > Skv meet every edge.
        14 => room.both(rng, &k_edges, &q_edges),
        _ => (1 + rng.below(TINY as u64) as usize, 1 + rng.below(TINY as u64) as usize),
    }
}

/// The room [`MAX_CASE_COST`] leaves one length beside another, at one head.
struct Room {
    head_dim: usize,
}

impl Room {
    /// The longest length `x` that fits the cap beside `len` at one head
    /// (at least 1), whichever of them is the query length, with a row to
    /// spare on each for `shapes::runnable_length`: (`len` + 1) x
    /// (`x` + 1) x D multiply-adds and at most 2 x (`len` + `x` + 2) x D
    /// input elements ([`case_cost`]) within [`MAX_CASE_COST`].
    fn beside(&self, len: usize) -> usize {
        let per_column = MAX_CASE_COST / self.head_dim;
        let inputs = 2 * GENERATION_MACS_PER_ELEMENT;
        let spare = per_column.saturating_sub(inputs * (len + 1)) / (len + 1 + inputs);
        spare.saturating_sub(1).max(1)
    }

    /// One length of `first`, then one of `second` that fits beside it (1
    /// if none does).
    fn both(&self, rng: &mut SplitMix64, first: &[usize], second: &[usize]) -> (usize, usize) {
        let a = pick(rng, first);
        let fitting: Vec<usize> = second.iter().copied().filter(|&len| len <= self.beside(a)).collect();
        (a, if fitting.is_empty() { 1 } else { pick(rng, &fitting) })
    }
}

/// One of `xs`, uniformly.
fn pick(rng: &mut SplitMix64, xs: &[usize]) -> usize {
    xs[rng.below(xs.len() as u64) as usize]
}

/// A length in `1..=max`, log-uniformly: as many between 1 and 10 as
/// between 10 and 100.
fn log_uniform(rng: &mut SplitMix64, max: usize) -> usize {
    let len = ((max as f64 + 1.0).ln() * rng.next_f64()).exp() as usize;
    len.clamp(1, max)
}

/// `(batch, heads_q, heads_kv)`: one head at B = 1 three times in four,
/// else B in 1..=2, Hkv in {1, 2}, Hq = Hkv x {1, 2, 4}; cut down (batch
/// first, then the group, then Hkv) until B x Hq heads of `per_head` cost
/// each fit [`MAX_CASE_COST`].
fn heads(rng: &mut SplitMix64, per_head: usize) -> (usize, usize, usize) {
    let (mut batch, mut group, mut heads_kv) = if rng.below(4) != 0 {
        (1, 1, 1)
    } else {
        (1 + rng.below(2) as usize, [1, 2, 4][rng.below(3) as usize], 1 + rng.below(2) as usize)
    };
    while batch * group * heads_kv * per_head > MAX_CASE_COST && batch * group * heads_kv > 1 {
        if batch > 1 {
            batch -= 1;
        } else if group > 1 {
            group /= 2;
        } else {
            heads_kv -= 1;
        }
    }
    (batch, heads_kv * group, heads_kv)
}

/// Q's, K's and V's scale exponents: Q's and K's in
/// `SCALE_EXPONENT_MIN..=QK_EXPONENT_MAX` with their sum at most
/// `QK_EXPONENT_MAX`, V's up to `v_exponent_max` (the ranges of
/// `shapes::fuzz_cases`, which say why).
fn scale_exponents(kernel: &KernelInfo, rng: &mut SplitMix64) -> [i8; 3] {
    let mut draw = |max: i8| SCALE_EXPONENT_MIN + rng.below((max - SCALE_EXPONENT_MIN) as u64 + 1) as i8;
    let (mut q, mut k) = (draw(QK_EXPONENT_MAX), draw(QK_EXPONENT_MAX));
    while q + k > QK_EXPONENT_MAX {
        (q, k) = (draw(QK_EXPONENT_MAX), draw(QK_EXPONENT_MAX));
    }
    [q, k, draw(v_exponent_max(kernel))]
}

/// A case to replay, `<entry>:<seed>` (the seed in decimal or `0x` hex), as
/// a failing case prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// The kernel's entry symbol.
    pub entry: String,
    /// The case's seed.
    pub seed: u64,
}

impl std::str::FromStr for Replay {
    type Err = String;

    fn from_str(s: &str) -> Result<Replay, String> {
        let (entry, seed) = s.split_once(':').ok_or_else(|| format!("`{s}` is not <entry>:<seed>"))?;
        let seed = parse_seed(seed).map_err(|e| format!("`{s}`: {e}"))?;
        Ok(Replay { entry: entry.to_string(), seed })
    }
}

impl std::fmt::Display for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{:#x}", self.entry, self.seed)
    }
}

/// A seed in decimal or `0x` hex.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|e| format!("`{s}` is not a seed (decimal or 0x hex): {e}"))
}

/// Cases per kernel unless [`CASES_ENV`] says otherwise.
pub const DEFAULT_CASES: usize = 10_000;
/// The run's seed unless [`SEED_ENV`] says otherwise (fixed, so that a
/// record's cases can be run again).
pub const DEFAULT_SEED: u64 = 0x5D9A_F022_2026_0041;
/// Environment variable: cases per kernel.
pub const CASES_ENV: &str = "SDPA_FUZZ_CASES";
/// Environment variable: the run's seed (decimal or `0x` hex).
pub const SEED_ENV: &str = "SDPA_FUZZ_SEED";
/// Environment variable: threads that prepare cases (default: one fewer
/// than the machine's, at least one).
pub const WORKERS_ENV: &str = "SDPA_FUZZ_WORKERS";
/// Environment variable: one case to run alone, `<entry>:<seed>` ([`Replay`]).
pub const REPLAY_ENV: &str = "SDPA_FUZZ_REPLAY";
/// Environment variable: the entries to fuzz, as comma-separated parts of
/// their names (`window,softcap`: every score twin); unset, every entry.
pub const ENTRIES_ENV: &str = "SDPA_FUZZ_ENTRIES";

/// How a release-scale fuzz run is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Cases per kernel.
    pub cases: usize,
    /// The run's seed ([`case_seeds`]).
    pub seed: u64,
    /// Threads that prepare cases.
    pub workers: usize,
    /// One case to run alone instead, if any.
    pub replay: Option<Replay>,
    /// Parts of the names of the entries to fuzz ([`Settings::fuzzes`]);
    /// empty: every entry.
    pub entries: Vec<String>,
}

impl Settings {
    /// The settings the environment gives ([`CASES_ENV`], [`SEED_ENV`],
    /// [`WORKERS_ENV`], [`REPLAY_ENV`], [`ENTRIES_ENV`]).
    pub fn from_env() -> Result<Settings, String> {
        Settings::from_vars(|name| std::env::var(name).ok())
    }

    /// The settings that `var` (an environment variable's value by name)
    /// gives, each defaulted where it has none.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Settings, String> {
        let count = |name: &str, default: usize| match var(name) {
            None => Ok(default),
            Some(s) => match s.parse::<usize>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!("{name}={s}: expected a positive count")),
            },
        };
        let machine = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(Settings {
            cases: count(CASES_ENV, DEFAULT_CASES)?,
            seed: var(SEED_ENV).map_or(Ok(DEFAULT_SEED), |s| parse_seed(&s).map_err(|e| format!("{SEED_ENV}: {e}")))?,
            workers: count(WORKERS_ENV, machine.saturating_sub(1).max(1))?,
            replay: var(REPLAY_ENV).map(|s| s.parse().map_err(|e| format!("{REPLAY_ENV}: {e}"))).transpose()?,
            entries: match var(ENTRIES_ENV) {
                None => Vec::new(),
                Some(list) => {
                    let parts: Vec<String> = list.split(',').map(|p| p.trim().to_string()).collect();
                    if parts.iter().any(String::is_empty) {
                        return Err(format!("{ENTRIES_ENV}={list}: expected comma-separated parts of entry names"));
                    }
                    parts
                }
            },
        })
    }

    /// Whether the run fuzzes `entry`: every entry, or one whose name holds
    /// one of [`Settings::entries`].
    pub fn fuzzes(&self, entry: &str) -> bool {
        self.entries.is_empty() || self.entries.iter().any(|part| entry.contains(part.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels_gpu::kernels::KERNELS;
    use std::collections::HashSet;

    /// Every kernel's cases at the defaults, as the GPU run makes them.
    fn default_cases(kernel: &KernelInfo) -> Vec<FuzzCase> {
        case_seeds(DEFAULT_SEED, kernel, DEFAULT_CASES).into_iter().map(|s| release_case(kernel, s)).collect()
    }

    /// The lengths `kernel` runs for edge `len` (`shapes::runnable_length`).
    fn runnable(kernel: &KernelInfo, len: usize) -> [usize; 2] {
        [runnable_length(kernel, len, true), runnable_length(kernel, len, false)]
    }

    #[test]
    fn every_tile_edge_of_every_kernel_is_met_with_and_without_causal_masking() {
        for kernel in &KERNELS {
            let cases = default_cases(kernel);
            let met = |pick: fn(&CaseShape) -> usize| -> HashSet<(usize, bool)> {
                cases.iter().map(|c| (pick(&c.shape), c.shape.causal)).collect()
            };
            let (queries, keys) = (met(|s| s.seq_q), met(|s| s.seq_kv));
            for causal in [false, true] {
                for len in query_edges(kernel) {
                    let hit = runnable(kernel, len).iter().any(|&l| queries.contains(&(l, causal)));
                    assert!(hit, "{}: no case with Sq = {len} (causal {causal})", kernel.entry);
                }
                for len in key_edges(kernel) {
                    let hit = runnable(kernel, len).iter().any(|&l| keys.contains(&(l, causal)));
                    assert!(hit, "{}: no case with Skv = {len} (causal {causal})", kernel.entry);
                }
            }
        }
    }

    #[test]
    fn every_kernel_meets_gqa_batches_both_length_orders_and_the_scale_extremes() {
        for kernel in &KERNELS {
            let cases = default_cases(kernel);
            let any = |what: &str, f: &dyn Fn(&FuzzCase) -> bool| {
                assert!(cases.iter().any(f), "{}: no case with {what}", kernel.entry);
            };
            any("Hq = 4 Hkv", &|c| c.shape.heads_q == 4 * c.shape.heads_kv);
            any("Hq = 2 Hkv = 4", &|c| c.shape.heads_q == 4 && c.shape.heads_kv == 2);
            any("B = 2", &|c| c.shape.batch == 2);
            any("Sq, Skv <= 2", &|c| c.shape.seq_q <= 2 && c.shape.seq_kv <= 2);
            any("causal Sq > Skv", &|c| c.shape.causal && c.shape.seq_q > c.shape.seq_kv);
            any("causal Sq < Skv", &|c| c.shape.causal && c.shape.seq_q < c.shape.seq_kv);
            any("causal Sq = Skv > 1", &|c| c.shape.causal && c.shape.seq_q == c.shape.seq_kv && c.shape.seq_q > 1);
            for (i, max) in [QK_EXPONENT_MAX, QK_EXPONENT_MAX, v_exponent_max(kernel)].into_iter().enumerate() {
                any("the smallest scale exponent", &|c| c.scale_exponents[i] == SCALE_EXPONENT_MIN);
                any("the largest scale exponent", &|c| c.scale_exponents[i] == max);
            }
        }
    }

    #[test]
    fn every_case_runs_on_its_kernel_within_the_cost_cap() {
        for kernel in &KERNELS {
            for case in default_cases(kernel) {
                let s = case.shape;
                let described = format!("{} {case:?}", kernel.entry);
                assert!(kernel.runs_on(s.seq_q as u32, s.seq_kv as u32), "{described}: lengths it cannot run");
                assert_eq!(s.head_dim, kernel.tiles.head_dim as usize, "{described}");
                assert!(s.seq_q >= 1 && s.seq_kv >= 1 && s.batch >= 1, "{described}");
                assert!(s.heads_kv >= 1 && s.heads_q % s.heads_kv == 0, "{described}");
                let [q, k, v] = case.scale_exponents;
                assert!(q + k <= QK_EXPONENT_MAX && q.min(k).min(v) >= SCALE_EXPONENT_MIN, "{described}");
                assert!(v <= v_exponent_max(kernel), "{described}");
                let least = s.batch * s.heads_q == 1 && s.seq_q.min(s.seq_kv) <= 2;
                assert!(case_cost(&s) <= MAX_CASE_COST || least, "{described}: costs {}", case_cost(&s));
            }
        }
    }

    /// The mean cost per case that docs/testing.md's time estimate for
    /// the GPU run rests on (about 1.5 ms of one core here, at 5 ns a
    /// unit): a change to the mix that raises it must redo the estimate.
    const MEAN_COST_BUDGET: f64 = 320_000.0;

    #[test]
    fn the_case_mix_costs_what_the_time_estimate_assumes() {
        let mut all = 0.0;
        for kernel in &KERNELS {
            let cases = default_cases(kernel);
            let mean = cases.iter().map(|c| case_cost(&c.shape) as f64).sum::<f64>() / cases.len() as f64;
            assert!(mean <= 2.0 * MEAN_COST_BUDGET, "{}: mean cost {mean:.0}", kernel.entry);
            all += mean / KERNELS.len() as f64;
        }
        assert!(all <= MEAN_COST_BUDGET, "mean cost {all:.0} per case over the kernels");
    }

    #[test]
    fn a_case_is_the_same_from_its_seed_alone_and_kernels_get_their_own() {
        let (a, b) = (&KERNELS[0], &KERNELS[1]);
        let seeds = case_seeds(DEFAULT_SEED, a, 100);
        assert_eq!(seeds, case_seeds(DEFAULT_SEED, a, 100));
        assert_eq!(seeds.iter().collect::<HashSet<_>>().len(), 100);
        assert!(case_seeds(DEFAULT_SEED, b, 100).iter().all(|s| !seeds.contains(s)));
        assert_ne!(seeds, case_seeds(DEFAULT_SEED + 1, a, 100));
        for &s in &seeds {
            assert_eq!(release_case(a, s), release_case(a, s));
            assert_eq!(release_case(a, s).seed, s);
        }
    }

    #[test]
    fn a_replay_reads_back_as_it_prints() {
        let r = Replay { entry: "sdpa_mma_d64".into(), seed: 0xDEAD_BEEF_0123_4567 };
        assert_eq!(r.to_string(), "sdpa_mma_d64:0xdeadbeef01234567");
        assert_eq!(r.to_string().parse::<Replay>(), Ok(r));
        assert_eq!("sdpa_split_d128:42".parse::<Replay>(), Ok(Replay { entry: "sdpa_split_d128".into(), seed: 42 }));
        assert!("sdpa_mma_d64".parse::<Replay>().is_err());
        assert!("sdpa_mma_d64:0xzz".parse::<Replay>().is_err());
        assert!("sdpa_mma_d64:-1".parse::<Replay>().is_err());
    }

    #[test]
    fn settings_default_and_read_their_variables() {
        let none = Settings::from_vars(|_| None).unwrap();
        assert_eq!((none.cases, none.seed, &none.replay), (DEFAULT_CASES, DEFAULT_SEED, &None));
        assert!(none.workers >= 1);
        let vars = |name: &str| {
            let value = match name {
                CASES_ENV => "200",
                SEED_ENV => "0x10",
                WORKERS_ENV => "3",
                REPLAY_ENV => "sdpa_mma_d64:7",
                ENTRIES_ENV => "window, softcap",
                _ => return None,
            };
            Some(value.to_string())
        };
        let set = Settings::from_vars(vars).unwrap();
        let replay = Some(Replay { entry: "sdpa_mma_d64".into(), seed: 7 });
        let entries = vec!["window".to_string(), "softcap".to_string()];
        assert_eq!(set, Settings { cases: 200, seed: 16, workers: 3, replay, entries });
        assert!(set.fuzzes("sdpa_split_window_d64") && set.fuzzes("sdpa_mma_softcap_d128_bf16"));
        assert!(!set.fuzzes("sdpa_split_d64") && none.fuzzes("sdpa_split_d64"));
        for (name, bad) in [
            (CASES_ENV, "0"),
            (CASES_ENV, "many"),
            (SEED_ENV, "x"),
            (WORKERS_ENV, "-2"),
            (REPLAY_ENV, "7"),
            (ENTRIES_ENV, "window,"),
        ] {
            let err = Settings::from_vars(|n| (n == name).then(|| bad.to_string())).unwrap_err();
            assert!(err.contains(name), "{err}");
        }
    }
}
