//! The human-readable forms of a bench record (see `benchdata`): a
//! Markdown table (variants x shapes, with the ratio to the best peer) and
//! a hand-written SVG plot of TFLOP/s against sequence length.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use kernels_gpu::variant::Variant;
use serde_json::Value;

use crate::benchdata::{Row, Shape, Source, peer_rows, variant_rows};

/// Time with a precision that suits its size.
fn fmt_us(us: f64) -> String {
    if us < 10.0 {
        format!("{us:.2}")
    } else if us < 1000.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.0}")
    }
}

/// The distinct values of `items` in first-seen order.
fn distinct<T: PartialEq + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for it in items {
        if !out.contains(&it) {
            out.push(it);
        }
    }
    out
}

/// Where a variant goes in tables and legends: `Variant::ALL` order, unknown names last.
fn variant_order(name: &str) -> usize {
    Variant::ALL.iter().position(|k| k.name() == name).unwrap_or(usize::MAX)
}

/// The fastest peer at `shape`, if any peer was timed there.
pub fn best_peer<'a>(peers: &'a [Row], shape: &Shape) -> Option<&'a Row> {
    peers.iter().filter(|p| p.shape == *shape).min_by(|a, b| a.median_us.total_cmp(&b.median_us))
}

/// `peer time / variant time`: above 1, the variant is faster than the peer.
pub fn speedup(variant: &Row, peer: &Row) -> f64 {
    peer.median_us / variant.median_us
}

/// A speed ratio: two decimals, three significant digits below 0.1.
fn fmt_ratio(x: f64) -> String {
    if x < 0.1 { format!("{x:.3}x") } else { format!("{x:.2}x") }
}

/// A Markdown table row.
fn md_row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

/// The Markdown report of a record.
pub fn markdown(record: &Value) -> String {
    let mut rows = variant_rows(record);
    rows.sort_by_key(|r| variant_order(&r.name));
    let peers = peer_rows(record);
    let graph: Vec<&Row> = rows.iter().filter(|r| r.mode == "graph").collect();
    let device = record["device"]["name"].as_str().unwrap_or("unknown device");
    let date = record["date"].as_str().unwrap_or("undated");
    let mut md = format!("# Bench {date}: {device}\n\n");

    let d = &record["device"];
    let mut facts = Vec::new();
    if let Some(cap) = d["capability"].as_array().filter(|c| c.len() == 2) {
        facts.push(format!("compute capability {}.{}", cap[0], cap[1]));
    }
    if let Some(driver) = d["driver"].as_u64() {
        facts.push(format!("CUDA driver API {}.{}", driver / 1000, driver % 1000 / 10));
    }
    if let Some(image) = d["image"].as_str() {
        facts.push(format!("kernel image: {image}"));
    }
    let _ = writeln!(md, "- device: {device}{}", facts.iter().map(|f| format!(", {f}")).collect::<String>());
    let b = &record["build"];
    let field = |v: &Value, k: &str| v[k].as_str().unwrap_or("?").to_string();
    let _ = writeln!(
        md,
        "- build: commit `{}`, {}, ptxas: {}",
        field(b, "commit"),
        field(b, "toolchain"),
        field(b, "ptxas")
    );
    if let Some(clocks) = record["clocks"].as_object() {
        let list: Vec<String> = clocks.iter().map(|(k, v)| format!("{k} = {}", v.as_str().unwrap_or("?"))).collect();
        let _ = writeln!(md, "- nvidia-smi: {}", list.join("; "));
    }
    if let Some(logs) = record["logs"].as_object() {
        for (name, line) in logs {
            let _ = writeln!(md, "- {name}: {}", line.as_str().unwrap_or("?"));
        }
    }
    if let Some(sources) = record["sources"].as_array() {
        let names: Vec<&str> = sources.iter().filter_map(Value::as_str).collect();
        let _ = writeln!(md, "- from: {}", names.join(", "));
    }
    if let Some(note) = record["peers_note"].as_str() {
        let _ = writeln!(md, "- peers: {note}");
    }
    md.push_str(
        "\nTime per call from CUDA-graph replay (mode `graph`; peers are timed the same way), median of the \
         samples. TFLOP/s = 4·B·H·S²·D / time (causal not halved).",
    );
    if !peers.is_empty() {
        md.push_str(" `vs peer` = the fastest peer's time / the variant's time: above 1 the variant is faster.");
    }
    md.push_str("\n\n");

    // Variants x shapes (graph mode).
    let mut variants = distinct(graph.iter().map(|r| r.name.clone()));
    variants.sort_by_key(|v| variant_order(v));
    let shapes = distinct(graph.iter().map(|r| r.shape).chain(peers.iter().map(|p| p.shape)));
    let with_peers = !peers.is_empty();
    let mut header = vec!["shape (B,H,S,D)".to_string()];
    for v in &variants {
        header.push(format!("{v} us"));
        header.push(format!("{v} TFLOP/s"));
    }
    if with_peers {
        header.extend(["best peer".into(), "peer us".into(), "peer TFLOP/s".into()]);
        header.extend(variants.iter().map(|v| format!("{v} vs peer")));
    }
    md.push_str(&md_row(&header));
    md.push_str(&md_row(&vec!["---".to_string(); header.len()]));
    for shape in &shapes {
        let mut cells = vec![shape.label()];
        let found: Vec<Option<&&Row>> =
            variants.iter().map(|v| graph.iter().find(|r| r.name == *v && r.shape == *shape)).collect();
        for r in &found {
            match r {
                Some(r) => cells.extend([fmt_us(r.median_us), format!("{:.1}", r.tflops)]),
                None => cells.extend(["-".into(), "-".into()]),
            }
        }
        if with_peers {
            match best_peer(&peers, shape) {
                Some(p) => {
                    cells.extend([p.name.clone(), fmt_us(p.median_us), format!("{:.1}", p.tflops)]);
                    cells.extend(found.iter().map(|r| r.map_or("-".into(), |r| fmt_ratio(speedup(r, p)))));
                }
                None => cells.extend(std::iter::repeat_n("-".to_string(), 3 + variants.len())),
            }
        }
        md.push_str(&md_row(&cells));
    }

    md.push_str("\n## Every row\n\n");
    md.push_str(
        "`spread` = (p90 - p10) / median, the run-to-run noise the speed gate allows for (docs/testing.md: Speed gate).\n\n",
    );
    let header =
        ["variant", "shape", "mode", "median us", "p10 us", "p90 us", "spread", "TFLOP/s", "GB/s", "rel L2", "check"];
    md.push_str(&md_row(&header.map(String::from)));
    md.push_str(&md_row(&vec!["---".to_string(); header.len()]));
    for r in &rows {
        md.push_str(&md_row(&[
            r.name.clone(),
            r.shape.label(),
            r.mode.clone(),
            fmt_us(r.median_us),
            fmt_us(r.p10_us),
            fmt_us(r.p90_us),
            format!("{:.2}%", 100.0 * r.spread()),
            format!("{:.1}", r.tflops),
            r.gbytes_per_s.map_or("-".into(), |g| format!("{g:.1}")),
            r.rel_l2.map_or("-".into(), |e| format!("{e:.1e}")),
            match r.correct {
                Some(true) => "ok".into(),
                Some(false) => "FAIL".into(),
                None => "-".into(),
            },
        ]));
    }

    let raw_peers = record["peers"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !raw_peers.is_empty() {
        md.push_str("\n## Peers\n\n");
        let header = ["peer", "shape", "median us", "p10 us", "p90 us", "TFLOP/s"];
        md.push_str(&md_row(&header.map(String::from)));
        md.push_str(&md_row(&vec!["---".to_string(); header.len()]));
        for p in &peers {
            md.push_str(&md_row(&[
                p.name.clone(),
                p.shape.label(),
                fmt_us(p.median_us),
                fmt_us(p.p10_us),
                fmt_us(p.p90_us),
                format!("{:.1}", p.tflops),
            ]));
        }
        let errors: Vec<&Value> = raw_peers.iter().filter(|p| p["error"].is_string()).collect();
        if !errors.is_empty() {
            md.push_str("\nNot timed:\n\n");
            for e in errors {
                let _ = writeln!(
                    md,
                    "- {} at {}{}: {}",
                    e["peer"].as_str().unwrap_or("?"),
                    e["shape"],
                    if e["causal"] == true { " causal" } else { "" },
                    e["error"].as_str().unwrap_or("?")
                );
            }
        }
    }
    md
}

/// Escapes text for SVG.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The smallest of 1, 2, 5 x 10^k at or above `x` (for axis ends).
pub fn nice_ceil(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * p).find(|v| *v >= x * (1.0 - 1e-12)).unwrap_or(10.0 * p)
}

/// Series colours: variants and peers take them in series order.
const PALETTE: [&str; 10] =
    ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];

/// Panel size and margins (px).
const PANEL_W: f64 = 440.0;
const PANEL_H: f64 = 290.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 44.0;

/// The SVG plot of a record: one panel per (head dim, causal), TFLOP/s
/// against sequence length on a log2 axis, one line per variant (graph
/// mode, solid) and per peer (dashed).
pub fn svg(record: &Value) -> String {
    let mut rows: Vec<Row> = variant_rows(record).into_iter().filter(|r| r.mode == "graph").collect();
    rows.extend(peer_rows(record));
    // Series names: variants first, then peers, each in first-seen order.
    let mut names = distinct(rows.iter().filter(|r| r.source == Source::Variant).map(|r| r.name.clone()));
    names.sort_by_key(|v| variant_order(v));
    names.extend(distinct(rows.iter().filter(|r| r.source == Source::Peer).map(|r| r.name.clone())));
    let mut panels: BTreeMap<(u64, bool), Vec<&Row>> = BTreeMap::new();
    for r in &rows {
        panels.entry((r.shape.head_dim, r.shape.causal)).or_default().push(r);
    }
    let cols = panels.len().clamp(1, 2);
    let grid_rows = panels.len().div_ceil(2).max(1);
    let legend_per_line = 4;
    let legend_h = 22.0 * names.len().div_ceil(legend_per_line) as f64 + 10.0;
    let width = PANEL_W * cols as f64;
    let height = 40.0 + PANEL_H * grid_rows as f64 + legend_h;
    let device = record["device"]["name"].as_str().unwrap_or("unknown device");
    let date = record["date"].as_str().unwrap_or("undated");

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{:.0}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        width / 2.0,
        xml(&format!("TFLOP/s vs sequence length, {device}, {date} (B,H vary by shape; causal not halved)"))
    );
    if panels.is_empty() {
        let _ = writeln!(s, r#"<text x="20" y="60">no timed rows</text>"#);
    }
    for (i, ((head_dim, causal), pts)) in panels.iter().enumerate() {
        let ox = PANEL_W * (i % 2) as f64;
        let oy = 40.0 + PANEL_H * (i / 2) as f64;
        let (x0, x1) = (ox + LEFT, ox + PANEL_W - RIGHT);
        let (y0, y1) = (oy + PANEL_H - BOTTOM, oy + TOP);
        let lx: Vec<f64> = pts.iter().map(|r| (r.shape.seq.max(1) as f64).log2()).collect();
        let (mut lo, mut hi) =
            (lx.iter().copied().fold(f64::INFINITY, f64::min), lx.iter().copied().fold(0.0, f64::max));
        lo = lo.floor();
        hi = hi.ceil();
        if hi - lo < 1.0 {
            lo -= 1.0;
            hi += 1.0;
        }
        let ymax = nice_ceil(pts.iter().map(|r| r.tflops).fold(0.0, f64::max) * 1.05);
        let px = |seq: u64| x0 + ((seq.max(1) as f64).log2() - lo) / (hi - lo) * (x1 - x0);
        let py = |t: f64| y0 - t / ymax * (y0 - y1);
        let title = format!("D={head_dim}{}", if *causal { ", causal" } else { "" });
        let _ = writeln!(s, r#"<g>"#);
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12" font-weight="bold">{}</text>"#,
            (x0 + x1) / 2.0,
            oy + 18.0,
            xml(&title)
        );
        let _ = writeln!(
            s,
            r##"<rect x="{x0:.1}" y="{y1:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#444"/>"##,
            x1 - x0,
            y0 - y1
        );
        // x ticks: powers of two.
        let mut e = lo as i64;
        while e as f64 <= hi {
            let seq = 1u64 << e.clamp(0, 62);
            let x = px(seq);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{y0:.1}" x2="{x:.1}" y2="{y1:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{seq}</text>"##,
                y0 + 14.0
            );
            e += 1;
        }
        // y ticks: five steps.
        for k in 0..=5 {
            let t = ymax * k as f64 / 5.0;
            let y = py(t);
            let _ = writeln!(
                s,
                r##"<line x1="{x0:.1}" y1="{y:.1}" x2="{x1:.1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                x0 - 4.0,
                y + 4.0,
                if ymax >= 10.0 { format!("{t:.0}") } else { format!("{t:.1}") }
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">sequence length S (log2)</text>"#,
            (x0 + x1) / 2.0,
            y0 + 32.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" transform="rotate(-90 {:.1} {:.1})">TFLOP/s</text>"#,
            ox + 16.0,
            (y0 + y1) / 2.0,
            ox + 16.0,
            (y0 + y1) / 2.0
        );
        for (n, name) in names.iter().enumerate() {
            let mut series: Vec<&&Row> = pts.iter().filter(|r| r.name == *name).collect();
            if series.is_empty() {
                continue;
            }
            series.sort_by_key(|r| r.shape);
            let color = PALETTE[n % PALETTE.len()];
            let dash = if series[0].source == Source::Peer { r#" stroke-dasharray="6 3""# } else { "" };
            let points: Vec<String> =
                series.iter().map(|r| format!("{:.1},{:.1}", px(r.shape.seq), py(r.tflops))).collect();
            let _ = writeln!(
                s,
                r#"<polyline class="series" data-series="{}" fill="none" stroke="{color}" stroke-width="2"{dash} points="{}"/>"#,
                xml(name),
                points.join(" ")
            );
            for r in &series {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{}</title></circle>"#,
                    px(r.shape.seq),
                    py(r.tflops),
                    xml(&format!(
                        "{} {}: {:.1} TFLOP/s, {} us",
                        r.name,
                        r.shape.label(),
                        r.tflops,
                        fmt_us(r.median_us)
                    ))
                );
            }
        }
        let _ = writeln!(s, "</g>");
    }
    // Legend.
    let ly = 40.0 + PANEL_H * grid_rows as f64 + 6.0;
    let step = width / legend_per_line as f64;
    for (n, name) in names.iter().enumerate() {
        let x = 20.0 + step * (n % legend_per_line) as f64;
        let y = ly + 22.0 * (n / legend_per_line) as f64;
        let color = PALETTE[n % PALETTE.len()];
        let peer = rows.iter().any(|r| r.name == *name && r.source == Source::Peer);
        let dash = if peer { r#" stroke-dasharray="6 3""# } else { "" };
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="2"{dash}/><text x="{:.1}" y="{:.1}">{}</text>"#,
            x + 24.0,
            x + 30.0,
            y + 4.0,
            xml(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchdata::Gathered;
    use crate::benchdata::tests::{peer_row, sdpa_doc, sdpa_row};

    fn record(with_peers: bool) -> Value {
        let mut g = Gathered::default();
        let rows = vec![
            sdpa_row("mma", "2,8,256,64", "graph", 7.0, 6.95, 7.1),
            sdpa_row("mma", "2,8,256,64", "direct", 8.0, 7.9, 8.1),
            sdpa_row("mma", "2,16,8192,64", "graph", 2800.0, 2790.0, 2810.0),
            sdpa_row("mma", "1,16,16384,128,causal", "graph", 5000.0, 4990.0, 5010.0),
            sdpa_row("split", "2,8,256,64", "graph", 163.0, 162.0, 164.0),
        ];
        g.add_bench("bench.json", &sdpa_doc(rows)).unwrap();
        if with_peers {
            let lines = [
                peer_row("torch-cudnn-fp16", "2,8,256,64", 6.8),
                peer_row("torch-flash-bf16", "2,8,256,64", 14.0),
                peer_row("torch-cudnn-bf16", "2,16,8192,64", 1400.0),
                serde_json::json!({"peer": "torch-flash-fp16", "shape": [1, 16, 16384, 128], "causal": true, "error": "no"}),
            ];
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            g.add_peers("peers.jsonl", &text).unwrap();
        }
        g.into_record("2026-11-22")
    }

    #[test]
    fn markdown_has_the_table_and_the_ratio_to_the_best_peer() {
        let md = markdown(&record(true));
        assert!(md.starts_with("# Bench 2026-11-22: NVIDIA H200\n"), "{md}");
        assert!(
            md.contains("| shape (B,H,S,D) | mma us | mma TFLOP/s | split us | split TFLOP/s | best peer |"),
            "{md}"
        );
        // Mission shape: best peer cuDNN fp16 at 6.8 us; mma 7.0 us -> 0.97x, split 163 us -> 0.04x.
        assert!(md.contains("| 2,8,256,64 | 7.00 | 38.3 | 163.0 | 1.6 | torch-cudnn-fp16 | 6.80 |"), "{md}");
        assert!(md.contains("| 0.97x | 0.042x |"), "{md}");
        // A shape split was not timed at, and one no peer was timed at.
        assert!(
            md.contains("| 2,16,8192,64 | 2800 | 196.3 | - | - | torch-cudnn-bf16 | 1400 | 392.7 | 0.50x | - |"),
            "{md}"
        );
        assert!(md.contains("| 1,16,16384,128,causal | 5000 | 439.8 | - | - | - | - | - | - | - |"), "{md}");
        // Every row, with its spread; the peer that refused the shape.
        assert!(md.contains("| mma | 2,8,256,64 | direct | 8.00 | 7.90 | 8.10 | 2.50% |"), "{md}");
        assert!(md.contains("- torch-flash-fp16 at [1,16,16384,128] causal: no"), "{md}");
        // Every table row has as many cells as its header.
        for table in md.split("\n\n").filter(|b| b.starts_with('|')) {
            let counts: Vec<usize> = table.lines().map(|l| l.matches(" | ").count()).collect();
            assert!(counts.iter().all(|c| *c == counts[0]), "{table}");
        }
    }

    #[test]
    fn markdown_without_peers_says_so_and_has_no_peer_columns() {
        let md = markdown(&record(false));
        assert!(md.contains("- peers: no peers in this run (no peers.jsonl)"), "{md}");
        assert!(!md.contains("best peer"), "{md}");
        assert!(!md.contains("## Peers"), "{md}");
    }

    /// Checks that every `<tag>` opened is closed, in order.
    fn balanced(svg: &str) -> bool {
        let mut stack: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(i) = rest.find('<') {
            let j = rest[i..].find('>').map(|j| i + j).unwrap();
            let tag = &rest[i + 1..j];
            rest = &rest[j + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                if stack.pop().as_deref() != Some(name) {
                    return false;
                }
            } else if !tag.ends_with('/') {
                stack.push(tag.split_whitespace().next().unwrap().to_string());
            }
        }
        stack.is_empty()
    }

    #[test]
    fn svg_draws_one_line_per_series_per_panel_on_a_log2_axis() {
        let svg = svg(&record(true));
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(balanced(&svg), "{svg}");
        // Panels: D=64 (mma, split, 2 peers at 256 + 1 at 8192) and D=128 causal (mma).
        assert!(svg.contains(">D=64<") && svg.contains(">D=128, causal<"));
        assert_eq!(svg.matches("<polyline").count(), 6, "{svg}");
        assert_eq!(svg.matches("data-series=\"mma\"").count(), 2);
        assert_eq!(svg.matches("stroke-dasharray").count(), 3 + 3, "3 peer lines + 3 legend entries");
        // mma at D=64 joins S=256 and S=8192: two points on one line.
        let mma = svg.lines().find(|l| l.contains("data-series=\"mma\"")).unwrap();
        assert_eq!(mma.split("points=\"").nth(1).unwrap().split_whitespace().count(), 2);
        // log2 ticks from 256 to 8192.
        for tick in [">256<", ">512<", ">1024<", ">2048<", ">4096<", ">8192<"] {
            assert!(svg.contains(tick), "{tick}");
        }
        // Direct-mode rows are not plotted.
        assert!(!svg.contains("8.00 us"));
    }

    #[test]
    fn svg_of_an_empty_record_is_still_a_picture() {
        let svg = svg(&serde_json::json!({"date": "d", "rows": []}));
        assert!(balanced(&svg) && svg.contains("no timed rows"));
    }

    #[test]
    fn nice_axis_ends() {
        assert_eq!(nice_ceil(437.0), 500.0);
        assert_eq!(nice_ceil(200.0), 200.0);
        assert_eq!(nice_ceil(1.7), 2.0);
        assert_eq!(nice_ceil(0.0), 1.0);
    }
}
