//! Hostile input files: a byte-level fuzz of the safetensors reader and of
//! `sdpa run`'s input path, and hand-written adversarial files.
//!
//! Every file, however broken, must give a typed error with a one-line
//! message (exit 2 from the CLI), never a panic or a crash, and nothing may
//! be sized from the header beyond what the file holds: the largest single
//! allocation while reading stays within [`ALLOCATION_FACTOR`] times the
//! file's length (the JSON parsers' trees of a header of tiny values, F16
//! and BF16 values staged as f32 before quantizing, one f32 scale per head
//! of an E4M3 tensor without scales), where a size taken from the header
//! unchecked would ask for gigabytes.
//!
//! Files carry the decode tensors too (`seqused_k`, `page_table` with pools
//! of pages for `k` and `v`) and packed batches (`cu_seqlens_q`,
//! `cu_seqlens_k` with rank-3 `q`, `k`, `v`), read by `sdpa run`'s reader
//! ([`load_raw_inputs`]), whose verdict the CLI's exit code must match.
//!
//! The fuzz runs in CI (`cargo test`) with a bounded case count:
//! `PROPTEST_CASES` for the reader (default 5,000), a tenth of it for the
//! CLI, which spawns a process a case; about 2 s in all on 2 cores.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use sdpa::io::{Inputs, IoError, load_inputs, load_raw_inputs, save_inputs};
use sdpa::quant::{Rotation, random_problem};
use sdpa::validate::validate;
use sdpa::{AttnError, Options};

// ---------------------------------------------------------------------------
// The largest allocation, per thread.

/// The system allocator, noting the largest request made on a thread while
/// that thread watches ([`largest_allocation`]).
struct Watching;

thread_local! {
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = WATCHING.try_with(|w| {
        if w.get() {
            let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        }
    });
}

// SAFETY: forwards every call to `System` unchanged; `note` does not allocate.
unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Watching = Watching;

/// `f()` and the largest single allocation it made on this thread.
fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|l| l.set(0));
    WATCHING.with(|w| w.set(true));
    let result = f();
    WATCHING.with(|w| w.set(false));
    (result, LARGEST.with(Cell::get))
}

/// The largest single allocation reading a file may make, per byte of it:
/// a JSON value takes up to 32 bytes in a parse tree, from 2 bytes of text
/// (`0,`), and a vector of them may hold twice its length while it grows.
const ALLOCATION_FACTOR: usize = 32;

/// Allowance for the fixed costs of reading any file (the parser's tables,
/// messages).
const ALLOCATION_SLACK: usize = 64 << 10;

// ---------------------------------------------------------------------------
// Files.

/// A fresh path in the temp directory, removed on drop.
struct TempPath(PathBuf);

impl TempPath {
    fn new(tag: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("sdpa-hostile-{}-{n}-{tag}.safetensors", std::process::id());
        TempPath(std::env::temp_dir().join(name))
    }

    fn with(tag: &str, bytes: &[u8]) -> Self {
        let path = Self::new(tag);
        std::fs::write(&path.0, bytes).unwrap();
        path
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

/// A safetensors file: the 8-byte little-endian header length, the header,
/// the data.
fn file(header: &str, data: &[u8]) -> Vec<u8> {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

/// One header entry, every value as the header spells it (so that a value
/// can be anything JSON, or not JSON at all).
#[derive(Clone, Debug)]
struct Entry {
    name: String,
    dtype: String,
    shape: Vec<String>,
    offsets: [String; 2],
}

impl Entry {
    fn json(&self) -> String {
        format!(
            r#""{}":{{"dtype":{},"shape":[{}],"data_offsets":[{},{}]}}"#,
            self.name,
            self.dtype,
            self.shape.join(","),
            self.offsets[0],
            self.offsets[1]
        )
    }
}

fn header(entries: &[Entry]) -> String {
    let body: Vec<String> = entries.iter().map(Entry::json).collect();
    format!("{{{}}}", body.join(","))
}

/// Bytes per element of the dtypes the generator writes data for.
fn element_bytes(dtype: &str) -> Option<u64> {
    match dtype {
        r#""F8_E4M3""# | r#""U8""# => Some(1),
        r#""F16""# | r#""BF16""# => Some(2),
        r#""F32""# | r#""I32""# => Some(4),
        r#""I64""# => Some(8),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// What every case must satisfy.

/// What `sdpa run`'s reader and the library made of a file.
#[derive(Clone, Copy, Debug, Default)]
struct Verdict {
    /// The reader and the library's validation accepted it.
    accepted: bool,
    /// It held decode tensors.
    decode: bool,
    /// It held a packed batch.
    packed: bool,
}

/// Reads `bytes` as an input file with both readers: no panic, a typed
/// error with a one-line message naming the file, or inputs the library
/// then accepts or refuses with a typed error; the largest allocation
/// bounded by the file's length.
fn check_file(bytes: &[u8]) -> Result<Verdict, TestCaseError> {
    let path = TempPath::with("fuzz", bytes);
    let bound = ALLOCATION_FACTOR * bytes.len() + ALLOCATION_SLACK;
    // The tools' reader, which quantizes float inputs on the CPU.
    let (result, largest) = largest_allocation(|| load_inputs(&path.0));
    prop_assert!(largest <= bound, "allocated {largest} bytes reading a file of {}", bytes.len());
    match result {
        Ok(inputs) => {
            for t in [&inputs.q, &inputs.k, &inputs.v] {
                prop_assert!(t.data.len() <= bytes.len(), "{} codes from a file of {}", t.data.len(), bytes.len());
            }
        }
        Err(err) => one_line_naming(&err, &path)?,
    }
    // `sdpa run`'s reader, with the decode tensors: what the CLI accepts.
    let (result, largest) = largest_allocation(|| {
        load_raw_inputs(&path.0, Rotation::None).map(|inputs| {
            let [q, k, v] = inputs.planned();
            let accepted = validate(&q, &k, &v, &Options::default()).is_ok();
            (inputs, accepted)
        })
    });
    prop_assert!(largest <= bound, "allocated {largest} bytes reading a file of {} for sdpa run", bytes.len());
    match result {
        Ok((inputs, accepted)) => {
            let table = inputs.decode.page_table.as_ref().map_or(0, |t| t.entries.len());
            let lens = inputs.decode.seq_used_k.as_ref().map_or(0, Vec::len);
            let sums = inputs.packed.as_ref().map_or(0, |p| p.cu_seqlens_q.len() + p.cu_seqlens_k.len());
            prop_assert!(
                4 * (table + lens + sums) <= bytes.len(),
                "{table} entries, {lens} lengths and {sums} prefix sums from {}",
                bytes.len()
            );
            Ok(Verdict { accepted, decode: !inputs.decode.is_empty(), packed: inputs.packed.is_some() })
        }
        Err(err) => {
            one_line_naming(&err, &path)?;
            Ok(Verdict::default())
        }
    }
}

/// `err`'s message is one line and starts with the file's path.
fn one_line_naming(err: &IoError, path: &TempPath) -> Result<(), TestCaseError> {
    let msg = err.to_string();
    prop_assert!(!msg.contains(['\n', '\r']), "not one line: {msg:?}");
    prop_assert!(msg.starts_with(path.as_str()), "does not name the file: {msg:?}");
    Ok(())
}

fn sdpa_run(input: &Path, output: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sdpa"))
        .args(["run", "--input"])
        .arg(input)
        .arg("--output")
        .arg(output)
        .output()
        .expect("the sdpa binary runs")
}

/// `sdpa run` on `bytes`: exits (no signal) with one line `error: ...` on
/// stderr, code 2 for any file the library refuses; a file it accepts
/// reaches the GPU (exit 1 without one, 0 with one).
fn check_cli(bytes: &[u8]) -> Result<(), TestCaseError> {
    let accepted = check_file(bytes)?.accepted;
    let input = TempPath::with("cli", bytes);
    let output = TempPath::new("out");
    let o = sdpa_run(&input.0, &output.0);
    let err = String::from_utf8_lossy(&o.stderr);
    if accepted {
        prop_assert!(matches!(o.status.code(), Some(0 | 1)), "{:?}: {err}", o.status);
    } else {
        prop_assert_eq!(o.status.code(), Some(2), "{}", err);
        prop_assert_eq!(err.lines().count(), 1, "not one line: {:?}", err);
        prop_assert!(err.starts_with("error: "), "{:?}", err);
        prop_assert!(!output.0.exists(), "an output was written");
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The generator: a header of entries, mostly a plausible q, k, v, then
// broken at random: values replaced by hostile ones, the length field
// changed, bytes overwritten, the file cut or extended.

/// Dimensions: mostly small, sometimes zero, huge or at the kernels' limits.
fn dim() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 1u64..=5,
        2 => prop::sample::select(vec![64u64, 128]),
        1 => Just(0u64),
        1 => prop::sample::select(vec![
            65_535u64, 65_536, 262_144, 1 << 30, 1 << 31, 1 << 32, 1 << 40, 1 << 61, 1 << 62, u64::MAX
        ]),
    ]
}

/// Dimensions of a plausible input: mostly 1 to 5, sometimes zero or huge.
fn small_dim() -> impl Strategy<Value = u64> {
    prop_oneof![
        12 => 1u64..=5,
        1 => Just(0u64),
        1 => prop::sample::select(vec![65_536u64, 262_144, 1 << 32, u64::MAX]),
    ]
}

/// Hostile spellings of a number or a dtype.
fn hostile_value() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "-1",
            "1.5",
            "1e3",
            "-0",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999999",
            "\"4\"",
            "null",
            "[]",
            "{}",
            "true",
            "\"F4\"",
            "\"F8_E5M2\"",
            "\"f16\"",
            "\"X\"",
            "\"BOOL\"",
            "\"I64\"",
            "\"F32\"",
            "\"F8_E4M3\"",
            "",
        ])
        .prop_map(str::to_string),
        any::<u64>().prop_map(|n| n.to_string()),
        dim().prop_map(|n| n.to_string()),
    ]
}

/// One tensor: name, dtype and shape (data and offsets follow from them).
fn tensor() -> impl Strategy<Value = (String, String, Vec<u64>)> {
    let name = prop::sample::select(vec![
        "q",
        "k",
        "v",
        "q_scale",
        "k_scale",
        "v_scale",
        "seqused_k",
        "page_table",
        "cu_seqlens_q",
        "cu_seqlens_k",
        "o",
        "junk",
        "q\\n",
    ]);
    let dtype = prop::sample::select(vec!["F8_E4M3", "F16", "BF16", "F32", "I32", "I64", "U8", "F4", "F8_E5M2", "Q"]);
    (name, dtype, prop::collection::vec(dim(), 0..6)).prop_map(|(n, d, s)| (n.to_string(), format!("\"{d}\""), s))
}

/// A plausible q, k, v (with scales sometimes), or any tensors at all.
fn tensors() -> impl Strategy<Value = Vec<(String, String, Vec<u64>)>> {
    let head_dim = prop_oneof![4 => prop::sample::select(vec![64u64, 128]), 1 => dim()];
    let plausible = (
        prop::sample::select(vec!["F8_E4M3", "F16", "BF16", "F32"]),
        (small_dim(), small_dim(), 1u64..=3, small_dim(), small_dim(), head_dim),
        any::<bool>(),
    )
        .prop_map(|(dtype, (batch, heads_kv, group, seq_q, seq_kv, head_dim), scales)| {
            let with_scales = scales && dtype == "F8_E4M3";
            let dtype = format!("\"{dtype}\"");
            let q = vec![batch, heads_kv.saturating_mul(group), seq_q, head_dim];
            let kv = vec![batch, heads_kv, seq_kv, head_dim];
            let mut t: Vec<(String, String, Vec<u64>)> = vec![
                ("q".into(), dtype.clone(), q.clone()),
                ("k".into(), dtype.clone(), kv.clone()),
                ("v".into(), dtype, kv.clone()),
            ];
            if with_scales {
                for (name, heads) in [("q_scale", q[1]), ("k_scale", kv[1]), ("v_scale", kv[1])] {
                    t.push((name.into(), "\"F32\"".into(), vec![heads]));
                }
            }
            t
        });
    prop_oneof![
        6 => plausible,
        3 => decode_tensors(),
        3 => packed_tensors(),
        2 => prop::collection::vec(tensor(), 0..8),
        1 => Just(overflowing_layout()),
    ]
}

/// A plausible decode file: q with, mostly, a page table and pools of pages
/// for k and v, and sometimes `seqused_k`; the decode tensors now and then
/// of the wrong dtype or shape, the pools sometimes float or of a page
/// size the kernels cannot read. (Their values come from the fill byte and
/// the damage: zeros are in range, the other fills are not.)
fn decode_tensors() -> impl Strategy<Value = Vec<(String, String, Vec<u64>)>> {
    let int = prop_oneof![6 => Just("I32"), 1 => prop::sample::select(vec!["I64", "F32", "U8"])];
    let pool_dtype = prop_oneof![6 => Just("F8_E4M3"), 1 => prop::sample::select(vec!["F16", "F32"])];
    let page_size = prop_oneof![4 => prop::sample::select(vec![32u64, 64]), 1 => prop::sample::select(vec![0u64, 1, 16, 48, 65_536 * 2])];
    let sizes = (small_dim(), small_dim(), 1u64..=3, 1u64..=3, prop::sample::select(vec![64u64, 128]));
    let shape_slip = prop_oneof![8 => Just(0u64), 1 => Just(1u64)];
    (sizes, page_size, 1u64..=3, 1u64..=3, (int.clone(), int, pool_dtype), (any::<bool>(), any::<bool>()), shape_slip)
        .prop_map(|((batch, heads_kv, group, seq_q, head_dim), page_size, pages, max_pages, dtypes, given, slip)| {
            let (lens_dtype, table_dtype, pool_dtype) = dtypes;
            let (paged, with_lens) = given;
            let quoted = |d: &str| format!("\"{d}\"");
            let q = vec![batch, heads_kv.saturating_mul(group), seq_q, head_dim];
            let mut t = vec![("q".to_string(), quoted("F8_E4M3"), q)];
            if paged {
                let pool = vec![pages, page_size, heads_kv, head_dim];
                for name in ["k", "v"] {
                    t.push((name.to_string(), quoted(pool_dtype), pool.clone()));
                }
                t.push(("page_table".to_string(), quoted(table_dtype), vec![batch.saturating_add(slip), max_pages]));
            } else {
                let kv = vec![batch, heads_kv, page_size, head_dim];
                for name in ["k", "v"] {
                    t.push((name.to_string(), quoted("F8_E4M3"), kv.clone()));
                }
            }
            if with_lens || !paged {
                t.push(("seqused_k".to_string(), quoted(lens_dtype), vec![batch.saturating_add(slip)]));
            }
            t
        })
}

/// A plausible packed batch: `q` `[total_q, Hq, D]`, `k` and `v` `[total_k,
/// Hkv, D]` (mostly E4M3, sometimes float, with scales sometimes), and the
/// prefix sums `[B + 1]`, now and then of the wrong dtype or length, or
/// with a decode tensor beside them. (Their values come from the fill byte
/// and the damage: [`build`] writes them well-formed with the zero fill.)
fn packed_tensors() -> impl Strategy<Value = Vec<(String, String, Vec<u64>)>> {
    let int = prop_oneof![8 => Just("I32"), 1 => prop::sample::select(vec!["I64", "F32"])];
    let dtype = prop_oneof![5 => Just("F8_E4M3"), 1 => prop::sample::select(vec!["F16", "F32"])];
    let sizes = (small_dim(), small_dim(), small_dim(), 1u64..=3, prop::sample::select(vec![64u64, 128]));
    let slip = prop_oneof![10 => Just(0u64), 1 => Just(1u64)];
    let extra = prop_oneof![
        12 => Just(None),
        1 => prop::sample::select(vec!["seqused_k", "page_table", "rank 4 q", "no cu_seqlens_k"]).prop_map(Some)
    ];
    (sizes, 1u64..=4, (int, dtype), any::<bool>(), slip, extra).prop_map(
        |((total_q, total_k, heads_kv, group, head_dim), batch, (int, dtype), scales, slip, extra)| {
            let quoted = |d: &str| format!("\"{d}\"");
            let heads_q = heads_kv.saturating_mul(group);
            let q = if extra == Some("rank 4 q") {
                vec![1, total_q, heads_q, head_dim]
            } else {
                vec![total_q, heads_q, head_dim]
            };
            let kv = vec![total_k, heads_kv, head_dim];
            let mut t = vec![
                ("q".to_string(), quoted(dtype), q),
                ("k".to_string(), quoted(dtype), kv.clone()),
                ("v".to_string(), quoted(dtype), kv),
                ("cu_seqlens_q".to_string(), quoted(int), vec![batch + 1]),
            ];
            if extra != Some("no cu_seqlens_k") {
                t.push(("cu_seqlens_k".to_string(), quoted(int), vec![batch + 1 + slip]));
            }
            if scales && dtype == "F8_E4M3" {
                for (name, heads) in [("q_scale", heads_q), ("k_scale", heads_kv), ("v_scale", heads_kv)] {
                    t.push((name.into(), quoted("F32"), vec![heads]));
                }
            }
            match extra {
                Some("seqused_k") => t.push(("seqused_k".to_string(), quoted("I32"), vec![batch])),
                Some("page_table") => t.push(("page_table".to_string(), quoted("I32"), vec![batch, 1])),
                _ => {}
            }
            t
        },
    )
}

/// Well-formed prefix sums of `n` entries for a tensor of `rows` rows:
/// from 0 to `rows` in near-even steps (some sequences empty where `rows`
/// is short); `None` for fewer than two entries or rows past `i32`.
fn prefix_sums(n: u64, rows: u64) -> Option<Vec<i32>> {
    let steps = n.checked_sub(1).filter(|&s| s > 0)?;
    (0..n).map(|i| i32::try_from(rows.checked_mul(i)? / steps).ok()).collect()
}

/// Tensors each of whose sizes is representable but whose offsets add up
/// to just below 2^64 (a parser adding the header length to them
/// overflows).
fn overflowing_layout() -> Vec<(String, String, Vec<u64>)> {
    (0..8).map(|i| (format!("t{i}"), "\"U8\"".to_string(), vec![(1u64 << 61) - 1])).collect()
}

/// Ways to break a well-formed file.
#[derive(Clone, Debug)]
enum Damage {
    /// A value of an entry (dtype, a dimension, an offset) replaced.
    Value(Index, Index, String),
    /// An entry given twice.
    Duplicate(Index),
    /// The header length field replaced.
    Length(u64),
    /// A byte overwritten.
    Byte(Index, u8),
    /// The file cut short.
    Cut(Index),
    /// Bytes appended.
    Tail(Vec<u8>),
}

fn damage() -> impl Strategy<Value = Damage> {
    let length = prop_oneof![
        any::<u64>(),
        0u64..4096,
        prop::sample::select(vec![0u64, 1, 7, 8, 100_000_000, 100_000_001, 1 << 32, 1 << 63, u64::MAX]),
    ];
    prop_oneof![
        3 => (any::<Index>(), any::<Index>(), hostile_value()).prop_map(|(e, f, v)| Damage::Value(e, f, v)),
        1 => any::<Index>().prop_map(Damage::Duplicate),
        1 => length.prop_map(Damage::Length),
        3 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Damage::Byte(i, b)),
        1 => any::<Index>().prop_map(Damage::Cut),
        1 => prop::collection::vec(any::<u8>(), 1..64).prop_map(Damage::Tail),
    ]
}

/// The largest data section the generator writes; a header claiming more
/// describes data the file does not hold.
const MAX_DATA: u64 = 1 << 18;

/// A file from tensors laid out back to back (their data filled with
/// `fill`, and written as far as it fits in [`MAX_DATA`]), then damaged.
fn build(tensors: &[(String, String, Vec<u64>)], fill: u8, damage: &[Damage]) -> Vec<u8> {
    let mut entries = Vec::new();
    let mut data = Vec::new();
    let mut end_of_data = 0u64;
    // The rows of `q` and `k`, which well-formed prefix sums end at.
    let rows = |of: &str| tensors.iter().find(|(n, ..)| n == of).and_then(|(_, _, shape)| shape.first().copied());
    for (name, dtype, shape) in tensors {
        let size =
            shape.iter().try_fold(element_bytes(dtype).unwrap_or(1), |n, &d| n.checked_mul(d)).unwrap_or(u64::MAX);
        let start = end_of_data;
        let end = start.saturating_add(size);
        end_of_data = end;
        if end <= MAX_DATA {
            data.resize(end as usize, fill);
            // With the zero fill, prefix sums of I32 as a packed file has them.
            let indexes = match name.as_str() {
                "cu_seqlens_q" => rows("q"),
                "cu_seqlens_k" => rows("k"),
                _ => None,
            };
            if let (0, r#""I32""#, &[n], Some(rows)) = (fill, dtype.as_str(), shape.as_slice(), indexes)
                && let Some(sums) = prefix_sums(n, rows)
            {
                let bytes: Vec<u8> = sums.iter().flat_map(|x| x.to_le_bytes()).collect();
                data[start as usize..end as usize].copy_from_slice(&bytes);
            }
        }
        entries.push(Entry {
            name: name.clone(),
            dtype: dtype.clone(),
            shape: shape.iter().map(u64::to_string).collect(),
            offsets: [start.to_string(), end.to_string()],
        });
    }
    for d in damage {
        match d {
            Damage::Value(e, f, value) if !entries.is_empty() => {
                let at = e.index(entries.len());
                let entry = &mut entries[at];
                let field = f.index(entry.shape.len() + 3);
                match field {
                    0 => entry.dtype = value.clone(),
                    1 | 2 => entry.offsets[field - 1] = value.clone(),
                    _ => entry.shape[field - 3] = value.clone(),
                }
            }
            Damage::Duplicate(e) if !entries.is_empty() => {
                let at = e.index(entries.len());
                entries.push(entries[at].clone());
            }
            _ => {}
        }
    }
    let mut bytes = file(&header(&entries), &data);
    for d in damage {
        match d {
            Damage::Length(n) => {
                if let Some(field) = bytes.first_chunk_mut::<8>() {
                    *field = n.to_le_bytes();
                }
            }
            Damage::Byte(i, b) if !bytes.is_empty() => {
                let at = i.index(bytes.len());
                bytes[at] = *b;
            }
            Damage::Cut(i) if !bytes.is_empty() => bytes.truncate(i.index(bytes.len())),
            Damage::Tail(tail) => bytes.extend_from_slice(tail),
            _ => {}
        }
    }
    bytes
}

/// A file: tensors, a fill byte (1.0 in E4M3, 1.5, zeros, or NaN codes)
/// and, two times in three, one to three kinds of damage.
fn hostile_file() -> impl Strategy<Value = Vec<u8>> {
    let fill =
        prop_oneof![4 => prop::sample::select(vec![0x38u8, 0x3C, 0x00]), 1 => prop::sample::select(vec![0x7Fu8, 0xFF])];
    let damage = prop_oneof![1 => Just(vec![]), 2 => prop::collection::vec(damage(), 1..4)];
    (tensors(), fill, damage).prop_map(|(t, fill, d)| build(&t, fill, &d))
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        max_shrink_time: 10_000,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("tests/hostile.proptest-regressions"))),
        ..Config::default()
    })
}

#[test]
fn fuzz_the_reader_with_hostile_files() {
    let mut runner = runner(cases(5_000));
    let (accepted, decode, packed) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
    let result = runner.run(&hostile_file(), |bytes| {
        let verdict = check_file(&bytes)?;
        if verdict.accepted {
            accepted.fetch_add(1, Ordering::Relaxed);
            for (kind, count) in [(verdict.decode, &decode), (verdict.packed, &packed)] {
                if kind {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The generator must reach the library's checks too, not only the parser's.
    let [accepted, decode, packed] = [accepted, decode, packed].map(|n| n.load(Ordering::Relaxed));
    eprintln!(
        "{accepted} of {} files accepted, {decode} of them with decode tensors, {packed} packed batches",
        runner.config().cases
    );
    assert!(accepted > 0, "no generated file was accepted");
    assert!(decode > 0, "no generated file with decode tensors was accepted");
    assert!(packed > 0, "no generated packed batch was accepted");
}

#[test]
fn fuzz_sdpa_run_with_hostile_files() {
    let mut runner = runner(cases(5_000) / 10);
    if let Err(e) = runner.run(&hostile_file(), |bytes| check_cli(&bytes)) {
        panic!("{e}");
    }
}

// ---------------------------------------------------------------------------
// Hand-written adversarial files.

/// A well-formed q, k, v entry triple of E4M3 tensors of `shape` (data not
/// included).
fn qkv_entries(shape: [u64; 4]) -> (Vec<Entry>, u64) {
    let n: u64 = shape.iter().product();
    let entries = ["q", "k", "v"]
        .iter()
        .enumerate()
        .map(|(i, name)| Entry {
            name: name.to_string(),
            dtype: "\"F8_E4M3\"".into(),
            shape: shape.iter().map(u64::to_string).collect(),
            offsets: [(i as u64 * n).to_string(), ((i as u64 + 1) * n).to_string()],
        })
        .collect();
    (entries, 3 * n)
}

/// Reads `bytes` expecting an error whose message holds `needle`; checks
/// the CLI exits 2 on it with one line.
fn refused(bytes: &[u8], needle: &str) -> IoError {
    let path = TempPath::with("adversarial", bytes);
    let (result, largest) = largest_allocation(|| load_inputs(&path.0));
    let err = result.expect_err("the file should be refused");
    let msg = err.to_string();
    assert!(msg.contains(needle), "{needle:?} not in {msg:?}");
    assert!(!msg.contains('\n'), "not one line: {msg:?}");
    assert!(largest <= ALLOCATION_FACTOR * bytes.len() + ALLOCATION_SLACK, "allocated {largest} bytes");
    let output = TempPath::new("out");
    let o = sdpa_run(&path.0, &output.0);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.contains(needle), "{needle:?} not in {stderr:?}");
    err
}

#[test]
fn short_and_empty_files() {
    refused(b"", "header too small");
    refused(b"\x10\0\0\0", "header too small");
    refused(&u64::MAX.to_le_bytes(), "header too large");
    refused(&file("{}", b"")[..9], "invalid header length");
    refused(&16u64.to_le_bytes(), "invalid header length");
}

#[test]
fn a_header_that_is_not_json_or_not_an_object() {
    refused(&file("\u{1b}[2J\n{", b""), "not a safetensors file");
    let mut not_utf8 = file("{\"q\":1}", b"");
    not_utf8[9] = 0xFF;
    refused(&not_utf8, "invalid UTF-8");
    refused(&file("[1,2,3]", b""), "invalid JSON");
    refused(&file(&"[".repeat(10_000), b""), "invalid JSON");
    refused(&file("{}", b""), "missing tensor `q` (the file holds: no tensors)");
}

#[test]
fn offsets_out_of_range_reversed_overlapping_or_leaving_gaps() {
    let (mut entries, len) = qkv_entries([1, 1, 2, 64]);
    let data = vec![0x38; len as usize];
    let set = |i: usize, a: u64, b: u64| {
        let mut e = entries.clone();
        e[i].offsets = [a.to_string(), b.to_string()];
        file(&header(&e), &data)
    };
    refused(&set(2, 256, 1 << 40), "data_offsets past the end of the 384 data bytes");
    refused(&set(2, 256, u64::MAX), "data_offsets past the end");
    refused(&set(1, 256, 128), "invalid offset");
    refused(&set(1, 64, 192), "invalid offset");
    refused(&set(2, 300, 384), "invalid offset");
    entries[0].offsets = ["-1".into(), "128".into()];
    refused(&file(&header(&entries), &data), "invalid JSON");
}

/// Offsets adding up to just below 2^64: each tensor's own size is
/// representable, the end of the data is not.
#[test]
fn offsets_whose_sum_overflows() {
    let bytes = build(&overflowing_layout(), 0, &[]);
    refused(&bytes, "data_offsets past the end of the 0 data bytes");
}

#[test]
fn unknown_dtypes() {
    let (mut entries, len) = qkv_entries([1, 1, 2, 64]);
    let data = vec![0x38; len as usize];
    for (dtype, needle) in [("\"F4\"", "invalid"), ("\"X\"", "unknown variant `X`"), ("\"f16\"", "unknown variant")] {
        entries[0].dtype = dtype.into();
        refused(&file(&header(&entries), &data), needle);
    }
    entries[0].dtype = "\"F8_E5M2\"".into();
    refused(&file(&header(&entries), &data), "dtype F8_E5M2; expected F8_E4M3, F16, BF16 or F32");
    entries[0].dtype = "\"X\\nY\"".into();
    refused(&file(&header(&entries), &data), "unknown variant `X\\nY`");
}

#[test]
fn shapes_whose_product_overflows_or_exceeds_the_file() {
    for shape in [[1u64 << 32, 1 << 32, 1, 1], [u64::MAX, 2, 1, 1], [1, 1, 262_144, 128], [64, 1024, 262_144, 128]] {
        let (entries, _) = qkv_entries([1, 1, 2, 64]);
        let mut e = entries.clone();
        e[0].shape = shape.iter().map(u64::to_string).collect();
        refused(&file(&header(&e), &[0x38; 384]), "not a safetensors file");
    }
    // A header claiming S = 262144 over a file that holds two rows.
    let (entries, _) = qkv_entries([1, 1, 262_144, 128]);
    refused(&file(&header(&entries), &[0x38; 256]), "not a safetensors file");
}

/// A zero-sized dimension makes the element count 0 whatever the others
/// are, so they are not bounded by the file: refused before any buffer is
/// sized by them.
#[test]
fn zero_dimensions_beside_huge_ones() {
    for dtype in ["\"F8_E4M3\"", "\"F16\"", "\"F32\""] {
        let (mut entries, len) = qkv_entries([1, 1, 2, 64]);
        entries[0].dtype = dtype.into();
        entries[0].shape = ["1", "1099511627776", "0", "64"].map(str::to_string).to_vec();
        // q now holds 0 bytes: shift k and v down.
        entries[0].offsets = ["0".into(), "0".into()];
        entries[1].offsets = ["0".into(), "128".into()];
        entries[2].offsets = ["128".into(), "256".into()];
        let err = refused(&file(&header(&entries), &vec![0x38; len as usize - 128]), "zero-sized dimension");
        assert!(matches!(err, IoError::Attn { source: AttnError::ZeroDimension { .. }, .. }), "{err:?}");
    }
}

#[test]
fn negative_fractional_and_huge_numbers() {
    let (entries, len) = qkv_entries([1, 1, 2, 64]);
    let data = vec![0x38; len as usize];
    for value in ["-2", "2.0", "1e2", "18446744073709551616", "\"2\"", "null"] {
        let mut e = entries.clone();
        e[1].shape[2] = value.to_string();
        refused(&file(&header(&e), &data), "not a safetensors file");
    }
}

#[test]
fn duplicate_names() {
    let (mut entries, len) = qkv_entries([1, 1, 2, 64]);
    let data = vec![0x38; len as usize];
    // The same bytes described twice: a reader keeping the last would accept it.
    entries.push(entries[2].clone());
    refused(&file(&header(&entries), &data), "tensor `v` is named twice");
}

#[test]
fn hostile_names_are_quoted_on_one_line() {
    let (mut entries, len) = qkv_entries([1, 1, 2, 64]);
    entries[1].name = "k\\n\\u001b[31m".into();
    let err = refused(&file(&header(&entries), &vec![0x38; len as usize]), "missing tensor `k`");
    assert!(err.to_string().contains(r"k\n\u{1b}[31m"), "{err}");
    // Many names: the message lists a few.
    let many: Vec<Entry> = (0..10_000)
        .map(|i| Entry {
            name: format!("t{i}"),
            dtype: "\"U8\"".into(),
            shape: vec![],
            offsets: [i.to_string(), (i + 1).to_string()],
        })
        .collect();
    let err = refused(&file(&header(&many), &[0; 10_000]), "and 9984 more");
    assert!(err.to_string().len() < 1000, "{err}");
}

#[test]
fn a_directory_or_a_device_is_not_read() {
    for path in [std::env::temp_dir(), PathBuf::from("/dev/zero")] {
        if !path.exists() {
            continue;
        }
        let err = load_inputs(&path).expect_err("not a file");
        assert!(matches!(err, IoError::NotAFile { .. }), "{err:?}");
        let output = TempPath::new("out");
        let o = sdpa_run(&path, &output.0);
        assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

// ---------------------------------------------------------------------------
// Sizes at the kernels' limits, held by the file: refused as too large
// before any GPU work (exit 2 here, where a GPU run would be exit 0 or 1).

fn too_large(q_shape: [usize; 4], kv_shape: [usize; 4], needle: &str) {
    let (q, k, v) = random_problem(q_shape, kv_shape, 5);
    let input = TempPath::new("limits");
    save_inputs(&input.0, &Inputs { q, k, v }).unwrap();
    let output = TempPath::new("out");
    let o = sdpa_run(&input.0, &output.0);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("problem too large") && stderr.contains(needle), "{stderr}");
    assert!(!output.0.exists());
}

#[test]
fn batch_or_heads_past_the_grid_are_refused_before_the_gpu() {
    too_large([65_536, 1, 1, 64], [65_536, 1, 1, 64], "batch = 65536");
    too_large([1, 65_536, 1, 64], [1, 1, 1, 64], "heads_q = 65536");
}

/// An output path that cannot be written is found before any GPU work:
/// exit 2 naming it, not a GPU failure, and nothing left behind.
#[test]
fn an_unwritable_output_is_refused_before_the_gpu() {
    let (q, k, v) = random_problem([1, 2, 8, 64], [1, 2, 8, 64], 3);
    let input = TempPath::new("valid");
    save_inputs(&input.0, &Inputs { q, k, v }).unwrap();
    let missing_dir = TempPath::new("nodir");
    for output in [missing_dir.0.join("o.safetensors"), std::env::temp_dir()] {
        let o = sdpa_run(&input.0, &output);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("cannot write") && stderr.contains(output.to_str().unwrap()), "{stderr}");
    }
    assert!(!missing_dir.0.exists());
}

/// Headers of many tiny JSON values: the parsers' trees grow with the
/// header text (up to 32 bytes a value, twice over while a vector grows),
/// never past [`ALLOCATION_FACTOR`] times the file.
#[test]
fn headers_of_many_tiny_values() {
    let zeros = vec!["0"; 100_000].join(",");
    let keys: Vec<String> = (0..100_000).map(|i| format!("\"{i}\":{{}}")).collect();
    for header in [format!("{{\"q\":[{zeros}]}}"), format!("{{{}}}", keys.join(","))] {
        refused(&file(&header, b""), "not a safetensors file");
    }
}
