//! Bench records: what `sdpa bench --json`, `scripts/peers.py` and
//! `nvidia-smi` leave in a directory, gathered into one record
//! (`baselines/<date>-bench.json`, `baselines.rs`), and the typed rows the reports and the
//! speed gate read back from it.
//!
//! A record is a JSON object:
//! `{kind: "bench", date, sources, build, device, clocks, rows, copies,
//! peers, peers_note, logs}` where `rows` are `sdpa bench` rows as written
//! with `copy_tb_s` (the device-to-device copy rate of their own run)
//! added, `copies` those copies (`sdpa bench`'s `copy`, with `source`: the
//! file), and `peers` are `peers.py` rows with `tflops` added.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::util::Result;

/// A benchmark shape, as `sdpa bench` times it: `B,Hq[:Hkv],Sq[:Skv],D[,causal]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shape {
    /// Head dimension (first, so shapes sort by head dimension, then causal, then keys).
    pub head_dim: u64,
    /// Causal masking.
    pub causal: bool,
    /// Keys per sequence (Skv).
    pub seq_kv: u64,
    /// Query tokens per sequence (Sq).
    pub seq_q: u64,
    /// Batch.
    pub batch: u64,
    /// Query heads (Hq).
    pub heads_q: u64,
    /// Key/value heads (Hkv).
    pub heads_kv: u64,
}

pub use kernels_gpu::record::DECODE_MAX_QUERIES;

impl Shape {
    /// `B,Hq[:Hkv],Sq[:Skv],D[,causal]`, each pair short where its sides
    /// are equal, as `sdpa bench` labels it and `peers.py` takes it.
    pub fn label(&self) -> String {
        kernels_gpu::record::ShapeLabel {
            batch: self.batch,
            heads: (self.heads_q, self.heads_kv),
            seq: (self.seq_q, self.seq_kv),
            head_dim: self.head_dim,
            causal: self.causal,
        }
        .to_string()
    }

    /// Parses `B,Hq[:Hkv],Sq[:Skv],D[,causal]` (sizes above zero, Hq a
    /// multiple of Hkv).
    pub fn parse(text: &str) -> Result<Shape> {
        let bad = || format!("shape `{text}` is not B,Hq[:Hkv],Sq[:Skv],D or B,Hq[:Hkv],Sq[:Skv],D,causal");
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if !(4..=5).contains(&parts.len()) || (parts.len() == 5 && parts[4] != "causal") {
            return Err(bad());
        }
        let size = |p: &str| p.trim().parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(bad);
        let pair = |p: &str| match p.split_once(':') {
            Some((a, b)) => Ok((size(a)?, size(b)?)),
            None => size(p).map(|n| (n, n)),
        };
        let (batch, head_dim) = (size(parts[0])?, size(parts[3])?);
        let ((heads_q, heads_kv), (seq_q, seq_kv)) = (pair(parts[1])?, pair(parts[2])?);
        if heads_q % heads_kv != 0 {
            return Err(format!("shape `{text}`: {heads_q} query heads are not a multiple of {heads_kv}"));
        }
        Ok(Shape { batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, causal: parts.len() == 5 })
    }

    /// `4 B Hq Sq Skv D`: the FLOPs `sdpa bench` counts (causal not halved).
    pub fn flops(&self) -> f64 {
        4.0 * (self.batch * self.heads_q) as f64 * self.seq_q as f64 * self.seq_kv as f64 * self.head_dim as f64
    }

    /// TFLOP/s at `median_us` per call.
    pub fn tflops(&self, median_us: f64) -> f64 {
        self.flops() / (median_us * 1e6)
    }

    /// Whether this is a decode shape (Sq <= [`DECODE_MAX_QUERIES`]).
    pub fn is_decode(&self) -> bool {
        self.seq_q <= DECODE_MAX_QUERIES as u64
    }

    /// From `sdpa bench`'s `{batch, heads, heads_kv, seq, seq_kv, head_dim,
    /// causal}` (`heads` is Hq, `seq` is Sq; records without `heads_kv` or
    /// `seq_kv` have them equal).
    fn from_object(v: &Value) -> Option<Shape> {
        let (heads_q, seq_q) = (v["heads"].as_u64()?, v["seq"].as_u64()?);
        Some(Shape {
            batch: v["batch"].as_u64()?,
            heads_q,
            heads_kv: v["heads_kv"].as_u64().unwrap_or(heads_q),
            seq_q,
            seq_kv: v["seq_kv"].as_u64().unwrap_or(seq_q),
            head_dim: v["head_dim"].as_u64()?,
            causal: v["causal"].as_bool().unwrap_or(false),
        })
    }

    /// From `peers.py`'s `shape: [B, Hq, Sq, D]`, `heads_kv`, `seq_kv`
    /// (equal to Hq and Sq where absent) and `causal`.
    pub fn from_peer(v: &Value) -> Option<Shape> {
        let dims: Vec<u64> = v["shape"].as_array()?.iter().map(Value::as_u64).collect::<Option<_>>()?;
        let [batch, heads_q, seq_q, head_dim] = dims[..] else { return None };
        Some(Shape {
            batch,
            heads_q,
            heads_kv: v["heads_kv"].as_u64().unwrap_or(heads_q),
            seq_q,
            seq_kv: v["seq_kv"].as_u64().unwrap_or(seq_q),
            head_dim,
            causal: v["causal"].as_bool().unwrap_or(false),
        })
    }
}

/// Whether a row is one of ours or a peer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// A variant of this project (`sdpa bench`).
    Variant,
    /// A peer (`peers.py`).
    Peer,
}

/// The number format of a peer's inputs: the report compares every variant
/// with the fastest peer of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PeerFormat {
    /// E4M3 inputs with per-tensor scales (cuDNN's FP8 SDPA).
    Fp8,
    /// fp16 or bf16 inputs (torch SDPA).
    Bits16,
}

impl PeerFormat {
    /// Both formats, in the order the report shows them.
    pub const ALL: [PeerFormat; 2] = [PeerFormat::Fp8, PeerFormat::Bits16];

    /// "FP8" or "16-bit".
    pub fn label(self) -> &'static str {
        match self {
            PeerFormat::Fp8 => "FP8",
            PeerFormat::Bits16 => "16-bit",
        }
    }

    /// The format of a `peers.py` row: its `dtype` (`fp8`, `fp16`, `bf16`),
    /// else the end of its name (rows written before `dtype` existed, such
    /// as `torch-cudnn-fp16`); `None` for any other.
    pub fn of_peer(dtype: Option<&str>, name: &str) -> Option<PeerFormat> {
        let tag = dtype.or_else(|| name.rsplit('-').next())?;
        match tag {
            "fp8" => Some(PeerFormat::Fp8),
            "fp16" | "bf16" => Some(PeerFormat::Bits16),
            _ => None,
        }
    }
}

/// One timed (name, shape, mode): a variant's row or a peer's.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Variant name (`mma`) or peer name (`torch-cudnn-fp16`).
    pub name: String,
    /// Ours or a peer's.
    pub source: Source,
    /// A peer's number format (`None` for variants and unknown peers).
    pub format: Option<PeerFormat>,
    /// The shape.
    pub shape: Shape,
    /// `graph` or `direct` (peers are graph-timed).
    pub mode: String,
    /// Median time per call (us).
    pub median_us: f64,
    /// 10th percentile (us).
    pub p10_us: f64,
    /// 90th percentile (us).
    pub p90_us: f64,
    /// TFLOP/s at the median.
    pub tflops: f64,
    /// Achieved bandwidth (variants only).
    pub gbytes_per_s: Option<f64>,
    /// K and V bytes read per second, TB/s (variants: E4M3; peers: their
    /// own element type), where the row gives it.
    pub kv_tb_s: Option<f64>,
    /// The device-to-device copy rate (bytes read + written, TB/s) timed
    /// in the same run as this row: `sdpa bench`'s for a variant,
    /// `peers.py`'s for a peer.
    pub copy_tb_s: Option<f64>,
    /// Relative L2 error against the float64 reference (variants: the
    /// checked rows; peers: where `peers.py` measured it, the FP8 ones).
    pub rel_l2: Option<f64>,
    /// Whether the checked rows passed (variants only).
    pub correct: Option<bool>,
    /// The SM clock (MHz) `peers.py` read right after the row's samples (peers only).
    pub sm_clock_mhz: Option<u64>,
}

impl Row {
    /// `(p90 - p10) / median`: the run-to-run spread of this row.
    pub fn spread(&self) -> f64 {
        (self.p90_us - self.p10_us) / self.median_us
    }
}

/// The variant rows of a record or of an `sdpa bench --json` file; rows
/// that lack a field are skipped.
pub fn variant_rows(doc: &Value) -> Vec<Row> {
    let rows = doc["rows"].as_array().map(Vec::as_slice).unwrap_or_default();
    rows.iter()
        .filter_map(|r| {
            let shape = Shape::from_object(&r["shape"])?;
            let median_us = r["median_us"].as_f64()?;
            Some(Row {
                name: r["variant"].as_str()?.to_string(),
                source: Source::Variant,
                format: None,
                shape,
                mode: r["mode"].as_str().unwrap_or("graph").to_string(),
                median_us,
                p10_us: r["p10_us"].as_f64().unwrap_or(median_us),
                p90_us: r["p90_us"].as_f64().unwrap_or(median_us),
                tflops: r["tflops"].as_f64().unwrap_or_else(|| shape.tflops(median_us)),
                gbytes_per_s: r["gbytes_per_s"].as_f64(),
                kv_tb_s: r["kv_tb_s"].as_f64(),
                copy_tb_s: r["copy_tb_s"].as_f64(),
                rel_l2: r["rel_l2"].as_f64(),
                correct: r["correct"].as_bool(),
                sm_clock_mhz: None,
            })
        })
        .collect()
}

/// The peer rows of a record that were timed (rows with an error are left
/// out), each with the copy rate `peers.py` measured in the same run.
pub fn peer_rows(doc: &Value) -> Vec<Row> {
    let rows = doc["peers"].as_array().map(Vec::as_slice).unwrap_or_default();
    let copy_tb_s = peers_copy(doc).and_then(|c| c["tb_s"].as_f64());
    rows.iter().filter_map(peer_row).map(|row| Row { copy_tb_s, ..row }).collect()
}

/// One `peers.py` row, if it was timed.
fn peer_row(r: &Value) -> Option<Row> {
    let shape = Shape::from_peer(r)?;
    let median_us = r["median_us"].as_f64()?;
    let name = r["peer"].as_str()?.to_string();
    Some(Row {
        format: PeerFormat::of_peer(r["dtype"].as_str(), &name),
        name,
        source: Source::Peer,
        shape,
        mode: "graph".into(),
        median_us,
        p10_us: r["p10_us"].as_f64().unwrap_or(median_us),
        p90_us: r["p90_us"].as_f64().unwrap_or(median_us),
        tflops: shape.tflops(median_us),
        gbytes_per_s: None,
        kv_tb_s: r["kv_tb_s"].as_f64(),
        copy_tb_s: None,
        rel_l2: r["rel_l2"].as_f64(),
        correct: None,
        sm_clock_mhz: r["sm_clock_mhz"].as_u64(),
    })
}

/// The first object of `peers.py`'s output in a record (`{"floor": ...}`:
/// the launch floor, the SM clock, the library versions), if any.
pub fn peers_floor(doc: &Value) -> Option<&Value> {
    doc["peers"].as_array()?.iter().find(|p| p["floor"].is_string())
}

/// `peers.py`'s device-to-device copy row in a record (`{"copy": ...,
/// "tb_s"}`), if any.
pub fn peers_copy(doc: &Value) -> Option<&Value> {
    doc["peers"].as_array()?.iter().find(|p| p["copy"].is_string())
}

/// The device name a record or `sdpa bench` file was measured on.
pub fn device_name(doc: &Value) -> Option<&str> {
    doc["device"]["name"].as_str()
}

/// What a directory of GPU-run outputs holds, gathered file by file.
#[derive(Default)]
pub struct Gathered {
    /// Names of the files that contributed.
    pub sources: Vec<String>,
    /// `build` of the first bench file.
    pub build: Option<Value>,
    /// `device` of the first bench file.
    pub device: Option<Value>,
    /// Builds of later files that differ from the first.
    pub other_builds: Vec<Value>,
    /// `sdpa bench` rows, as written, each with `copy_tb_s`: the copy
    /// rate its own run measured.
    pub rows: Vec<Value>,
    /// `sdpa bench`'s device-to-device copies, one per file, with `source`.
    pub copies: Vec<Value>,
    /// `peers.py` rows, as written.
    pub peers: Vec<Value>,
    /// Why there are no peers (from `peers.py`'s `skipped`, or the caller).
    pub peers_note: Option<String>,
    /// `nvidia-smi --query-gpu` fields, header -> value.
    pub clocks: Option<Value>,
    /// One summary line per log file.
    pub logs: Map<String, Value>,
}

impl Gathered {
    /// Reads every file of `dir` that it knows: `*.json` holding `rows`
    /// (`sdpa bench --json` output, or a record), `*.jsonl` (peers),
    /// `device.txt` (nvidia-smi CSV), `*.log` (summary line).
    pub fn from_dir(dir: &Path) -> Result<Gathered> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        let mut g = Gathered::default();
        for path in &files {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let read = || std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()));
            if name.ends_with(".json") {
                let doc: Value =
                    serde_json::from_str(&read()?).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
                if doc["rows"].is_array() {
                    g.add_bench(&name, &doc)?;
                }
            } else if name.ends_with(".jsonl") {
                g.add_peers(&name, &read()?)?;
            } else if name == "device.txt"
                && let Some(clocks) = parse_smi_csv(&read()?)
            {
                g.clocks = Some(clocks);
                g.sources.push(name);
            } else if name.ends_with(".log")
                && let Some(line) = log_summary(&read()?)
            {
                g.logs.insert(name.clone(), Value::String(line));
                g.sources.push(name);
            }
        }
        if g.rows.is_empty() {
            return Err(format!("no bench JSON with rows (sdpa bench --json output) in {}", dir.display()));
        }
        Ok(g)
    }

    /// Adds an `sdpa bench --json` file, or a record (rows, peers, clocks, logs).
    pub fn add_bench(&mut self, name: &str, doc: &Value) -> Result<()> {
        match (&self.device, device_name(doc)) {
            (Some(first), Some(this)) if first["name"].as_str() != Some(this) => {
                return Err(format!(
                    "{name} was measured on {this}, the files before it on {}: one record holds one device",
                    first["name"].as_str().unwrap_or("?")
                ));
            }
            (None, _) => self.device = Some(doc["device"].clone()),
            _ => {}
        }
        match &self.build {
            None => self.build = Some(doc["build"].clone()),
            Some(first) if first != &doc["build"] => self.other_builds.push(doc["build"].clone()),
            Some(_) => {}
        }
        let copy_tb_s = doc["copy"]["tb_s"].as_f64();
        for mut row in doc["rows"].as_array().cloned().unwrap_or_default() {
            if let (Some(rate), Some(obj)) = (copy_tb_s, row.as_object_mut()) {
                obj.entry("copy_tb_s").or_insert(json!(rate));
            }
            self.rows.push(row);
        }
        if let Some(copy) = doc["copy"].as_object() {
            let mut copy = copy.clone();
            copy.insert("source".into(), json!(name));
            self.copies.push(Value::Object(copy));
        }
        if doc["kind"] == "bench" {
            self.copies.extend(doc["copies"].as_array().cloned().unwrap_or_default());
            self.peers.extend(doc["peers"].as_array().cloned().unwrap_or_default());
            if let Some(note) = doc["peers_note"].as_str() {
                self.peers_note = Some(note.to_string());
            }
            if doc["clocks"].is_object() {
                self.clocks = Some(doc["clocks"].clone());
            }
            if let Some(logs) = doc["logs"].as_object() {
                self.logs.extend(logs.clone());
            }
        }
        self.sources.push(name.to_string());
        Ok(())
    }

    /// Adds the JSON lines of `peers.py`.
    pub fn add_peers(&mut self, name: &str, text: &str) -> Result<()> {
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).map_err(|e| format!("{name} line {}: not JSON: {e}", i + 1))?;
            if let Some(reason) = v["skipped"].as_str() {
                self.peers_note = Some(format!("peers skipped: {reason}"));
            } else {
                self.peers.push(v);
            }
        }
        self.sources.push(name.to_string());
        Ok(())
    }

    /// The record for `date`.
    pub fn into_record(self, date: &str) -> Value {
        let peers: Vec<Value> = self
            .peers
            .into_iter()
            .map(|mut p| {
                if let (Some(row), Some(obj)) = (peer_row(&p), p.as_object_mut()) {
                    obj.insert("tflops".into(), json!(row.tflops));
                }
                p
            })
            .collect();
        let peers_note = match (&self.peers_note, peers.is_empty()) {
            (Some(n), _) => Some(n.clone()),
            (None, true) => Some("no peers in this run (no peers.jsonl)".to_string()),
            (None, false) => None,
        };
        let mut record = json!({
            "kind": "bench",
            "date": date,
            "sources": self.sources,
            "build": self.build,
            "device": self.device,
            "clocks": self.clocks,
            "rows": self.rows,
            "copies": self.copies,
            "peers": peers,
            "peers_note": peers_note,
            "logs": self.logs,
        });
        if !self.other_builds.is_empty() {
            record["other_builds"] = Value::Array(self.other_builds);
        }
        record
    }
}

/// The first GPU of `nvidia-smi --query-gpu=... --format=csv` output found
/// in `text` (a header line starting `name,` and the line after it), as
/// `{header: value}`.
pub fn parse_smi_csv(text: &str) -> Option<Value> {
    let mut lines = text.lines().skip_while(|l| !l.trim_start().starts_with("name,"));
    let header = lines.next()?;
    let values = lines.next()?;
    let keys: Vec<&str> = header.split(',').map(str::trim).collect();
    let vals: Vec<&str> = values.split(',').map(str::trim).collect();
    if keys.len() != vals.len() {
        return None;
    }
    Some(Value::Object(keys.iter().zip(&vals).map(|(k, v)| ((*k).to_string(), json!(v))).collect()))
}

/// The line that sums a test log up: `N passed, M failed` if there is one,
/// else the last `test result:` line.
pub fn log_summary(text: &str) -> Option<String> {
    let is_count = |l: &str| {
        let words: Vec<&str> = l.split_whitespace().collect();
        words.len() == 4
            && words[1] == "passed,"
            && words[3] == "failed"
            && words[0].parse::<u64>().is_ok()
            && words[2].parse::<u64>().is_ok()
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .iter()
        .rev()
        .find(|l| is_count(l))
        .or_else(|| lines.iter().rev().find(|l| l.starts_with("test result:")))
        .map(|l| l.to_string())
}

/// Today's UTC date as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Whether `s` looks like `YYYY-MM-DD`.
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10 && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
}

/// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A `sdpa bench` row.
    pub fn sdpa_row(variant: &str, shape: &str, mode: &str, median: f64, p10: f64, p90: f64) -> Value {
        let s = Shape::parse(shape).unwrap();
        json!({
            "variant": variant, "mode": mode, "median_us": median, "p10_us": p10, "p90_us": p90,
            "std_us": 0.1, "tflops": s.tflops(median), "gbytes_per_s": 100.0, "rel_l2": 2e-4, "correct": true,
            "shape": {"batch": s.batch, "heads": s.heads_q, "heads_kv": s.heads_kv, "seq": s.seq_q, "seq_kv": s.seq_kv,
                      "head_dim": s.head_dim, "causal": s.causal},
        })
    }

    /// A `peers.py` row.
    pub fn peer_row(peer: &str, shape: &str, median: f64) -> Value {
        let s = Shape::parse(shape).unwrap();
        json!({"peer": peer, "shape": [s.batch, s.heads_q, s.seq_q, s.head_dim], "causal": s.causal,
               "heads_kv": s.heads_kv, "seq_kv": s.seq_kv,
               "median_us": median, "p10_us": median * 0.99, "p90_us": median * 1.01, "std_us": 0.1})
    }

    /// A `peers.py` FP8 row, as the cuDNN FP8 peer writes it.
    pub fn fp8_peer_row(peer: &str, shape: &str, median: f64, rel_l2: f64) -> Value {
        let mut row = peer_row(peer, shape, median);
        row["backend"] = json!("cudnn");
        row["dtype"] = json!("fp8");
        row["rel_l2"] = json!(rel_l2);
        row["sm_clock_mhz"] = json!(1755);
        row
    }

    /// An `sdpa bench --json` document.
    pub fn sdpa_doc(rows: Vec<Value>) -> Value {
        json!({
            "build": {"commit": "abc", "ptxas": "13.0", "toolchain": "rustc"},
            "device": {"name": "NVIDIA H200", "capability": [9, 0], "driver": 13000, "image": "sm_90a cubin"},
            "rows": rows,
        })
    }

    #[test]
    fn shapes_parse_label_and_count_flops() {
        let s = Shape::parse("2,8,256,64,causal").unwrap();
        assert_eq!((s.batch, s.heads_q, s.heads_kv, s.seq_q, s.seq_kv, s.head_dim), (2, 8, 8, 256, 256, 64));
        assert!(s.causal);
        assert_eq!(s.label(), "2,8,256,64,causal");
        assert_eq!(Shape::parse("1,1,1,64").unwrap().flops(), 256.0);
        let decode = Shape::parse("64,32:8,1:8192,128").unwrap();
        assert_eq!((decode.heads_q, decode.heads_kv, decode.seq_q, decode.seq_kv), (32, 8, 1, 8192));
        assert_eq!(decode.label(), "64,32:8,1:8192,128");
        assert!(decode.is_decode() && !s.is_decode());
        assert_eq!(decode.flops(), 4.0 * 64.0 * 32.0 * 8192.0 * 128.0);
        for bad in ["1,2,3", "1,2,3,4,causl", "1,32:12,1,128", "1,2,0,4", "1,2:0,3,4", "1,2,3:x,4", "1,2:,3,4"] {
            assert!(Shape::parse(bad).is_err(), "{bad}");
        }
        // (4,16,4096,128) at 2499.62 us is the 219.9 TFLOP/s sdpa bench reported.
        let t = Shape::parse("4,16,4096,128").unwrap().tflops(2499.62);
        assert!((t - 219.9).abs() < 0.05, "{t}");
    }

    #[test]
    fn smi_csv_and_log_summaries() {
        let text = "name, driver_version, clocks.sm [MHz]\nNVIDIA H200, 580.65, 1980 MHz\nsdpa 0.1\n";
        let c = parse_smi_csv(text).unwrap();
        assert_eq!(c["clocks.sm [MHz]"], "1980 MHz");
        assert_eq!(c["name"], "NVIDIA H200");
        assert!(parse_smi_csv("no csv here").is_none());
        let log = "x\n126 passed, 0 failed\nok\n\ntest result: ok. 1 passed; 0 failed;\n";
        assert_eq!(log_summary(log).unwrap(), "126 passed, 0 failed");
        assert_eq!(log_summary("a\ntest result: ok. 1 passed\n").unwrap(), "test result: ok. 1 passed");
        assert!(log_summary("nothing").is_none());
    }

    #[test]
    fn gathering_merges_files_and_refuses_two_devices() {
        let mut g = Gathered::default();
        g.add_bench("bench-mma.json", &sdpa_doc(vec![sdpa_row("mma", "2,8,256,64", "graph", 7.0, 6.9, 7.1)])).unwrap();
        g.add_bench("bench-split.json", &sdpa_doc(vec![sdpa_row("split", "2,8,256,64", "graph", 160.0, 159.0, 161.0)]))
            .unwrap();
        g.add_peers("peers.jsonl", &format!("{}\n", peer_row("torch-cudnn-fp16", "2,8,256,64", 6.8))).unwrap();
        let mut other = sdpa_doc(vec![]);
        other["device"]["name"] = json!("NVIDIA H100");
        assert!(g.add_bench("h100.json", &other).unwrap_err().contains("one record holds one device"));
        let record = g.into_record("2026-11-22");
        assert_eq!(variant_rows(&record).len(), 2);
        let peers = peer_rows(&record);
        assert_eq!(peers.len(), 1);
        assert!((record["peers"][0]["tflops"].as_f64().unwrap() - peers[0].tflops).abs() < 1e-9);
        assert!(record["peers_note"].is_null());
        assert_eq!(record["sources"], json!(["bench-mma.json", "bench-split.json", "peers.jsonl"]));

        let mut g = Gathered::default();
        g.add_peers("peers.jsonl", "{\"skipped\": \"torch is not importable\"}\n").unwrap();
        assert_eq!(g.into_record("d")["peers_note"], "peers skipped: torch is not importable");
    }

    #[test]
    fn peers_have_a_format_from_their_dtype_or_their_name() {
        assert_eq!(PeerFormat::of_peer(Some("fp8"), "cudnn-fp8"), Some(PeerFormat::Fp8));
        assert_eq!(PeerFormat::of_peer(Some("bf16"), "anything"), Some(PeerFormat::Bits16));
        assert_eq!(PeerFormat::of_peer(None, "torch-cudnn-fp16"), Some(PeerFormat::Bits16));
        assert_eq!(PeerFormat::of_peer(None, "triton-fp8"), Some(PeerFormat::Fp8));
        assert_eq!(PeerFormat::of_peer(None, "mystery"), None);
        let floor = json!({"floor": "1-element torch add", "median_us": 0.9, "sm_clock_mhz": 1980});
        let record = json!({"peers": [
            floor,
            peer_row("torch-cudnn-fp16", "2,8,256,64", 6.8),
            fp8_peer_row("cudnn-fp8", "2,8,256,64", 9.5, 3.5e-2),
            {"peer": "cudnn-fp8", "backend": "cudnn", "dtype": "fp8", "shape": [1, 8, 512, 64], "causal": false,
             "error": "check_support: no engine"},
        ]});
        let peers = peer_rows(&record);
        assert_eq!(peers.len(), 2, "the floor and the error row are not timed peers");
        assert_eq!((peers[0].format, peers[0].rel_l2), (Some(PeerFormat::Bits16), None));
        assert_eq!((peers[1].format, peers[1].rel_l2), (Some(PeerFormat::Fp8), Some(3.5e-2)));
        assert_eq!(peers_floor(&record).unwrap()["sm_clock_mhz"], 1980);
        assert!(peers_floor(&json!({"peers": []})).is_none());
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
        assert!(is_date("2026-11-22"));
        assert!(!is_date("2026-11-22-h200"));
        assert!(is_date(&today()));
    }
}
