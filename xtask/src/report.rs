//! The human-readable forms of a bench record (see `benchdata`): Markdown
//! tables (variants x shapes, and each variant's speed against the fastest
//! FP8 peer and the fastest 16-bit peer) and a hand-written SVG plot of
//! TFLOP/s against sequence length.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use kernels_gpu::variant::Variant;
use serde_json::Value;

use crate::benchdata::{
    DECODE_MAX_QUERIES, PeerFormat, Row, Shape, Source, peer_rows, peers_copy, peers_floor, variant_rows,
};

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

/// The fastest peer of `format` at `shape`, if one was timed there.
pub fn fastest_peer<'a>(peers: &'a [Row], shape: &Shape, format: PeerFormat) -> Option<&'a Row> {
    peers
        .iter()
        .filter(|p| p.shape == *shape && p.format == Some(format))
        .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
}

/// How TFLOP/s are counted, for every table and the plot.
const FLOPS_NOTE: &str = "TFLOP/s = 4·B·Hq·Sq·Skv·D / time; causal: not halved (a causal call with Sq = Skv \
     computes about half of these; FlashAttention's reports halve them)";

/// The shape column's header: the syntax of `sdpa bench --shapes`.
const SHAPE_HEADER: &str = "shape (B,Hq[:Hkv],Sq[:Skv],D)";

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
    if let Some(floor) = peers_floor(record) {
        let _ = writeln!(md, "- peers.py: {}", floor_facts(floor));
    }
    for copy in record["copies"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let _ = writeln!(
            md,
            "- device-to-device copy, sdpa bench ({}): {}",
            copy["source"].as_str().unwrap_or("?"),
            copy_facts(copy)
        );
    }
    if let Some(copy) = peers_copy(record) {
        let _ = writeln!(md, "- device-to-device copy, peers.py (torch): {}", copy_facts(copy));
    }
    let _ = write!(
        md,
        "\nTime per call from CUDA-graph replay (mode `graph`; peers are timed the same way), median of the \
         samples. {FLOPS_NOTE}.\n\n"
    );

    // Variants x shapes (graph mode).
    let mut variants = distinct(graph.iter().map(|r| r.name.clone()));
    variants.sort_by_key(|v| variant_order(v));
    let shapes = distinct(graph.iter().map(|r| r.shape).chain(peers.iter().map(|p| p.shape)));
    // The peer formats timed in this record: one pair of columns each.
    let formats: Vec<PeerFormat> =
        PeerFormat::ALL.into_iter().filter(|f| peers.iter().any(|p| p.format == Some(*f))).collect();
    let mut header = vec![SHAPE_HEADER.to_string()];
    for v in &variants {
        header.push(format!("{v} us"));
        header.push(format!("{v} TFLOP/s"));
    }
    for f in &formats {
        header.extend([format!("fastest {} peer", f.label()), format!("{} peer us", f.label())]);
    }
    md.push_str(&md_row(&header));
    md.push_str(&md_row(&vec!["---".to_string(); header.len()]));
    let found = |v: &str, shape: &Shape| graph.iter().find(|r| r.name == v && r.shape == *shape).copied();
    for shape in &shapes {
        let mut cells = vec![shape.label()];
        for v in &variants {
            match found(v, shape) {
                Some(r) => cells.extend([fmt_us(r.median_us), format!("{:.1}", r.tflops)]),
                None => cells.extend(["-".into(), "-".into()]),
            }
        }
        for f in &formats {
            match fastest_peer(&peers, shape, *f) {
                Some(p) => cells.extend([p.name.clone(), fmt_us(p.median_us)]),
                None => cells.extend(["-".into(), "-".into()]),
            }
        }
        md.push_str(&md_row(&cells));
    }

    if !formats.is_empty() {
        md.push_str("\n## Against the fastest peers\n\n");
        let names: Vec<&str> = formats.iter().map(|f| f.label()).collect();
        let _ = writeln!(
            md,
            "`vs {}` = the time of the fastest {} peer at that shape / the variant's time: above 1 the variant \
             is faster.\n",
            names.join("` / `vs "),
            names.join(" / ")
        );
        let mut header = vec![SHAPE_HEADER.to_string()];
        for v in &variants {
            header.extend(formats.iter().map(|f| format!("{v} vs {}", f.label())));
        }
        md.push_str(&md_row(&header));
        md.push_str(&md_row(&vec!["---".to_string(); header.len()]));
        for shape in &shapes {
            let mut cells = vec![shape.label()];
            for v in &variants {
                for f in &formats {
                    cells.push(match (found(v, shape), fastest_peer(&peers, shape, *f)) {
                        (Some(r), Some(p)) => fmt_ratio(speedup(r, p)),
                        _ => "-".into(),
                    });
                }
            }
            md.push_str(&md_row(&cells));
        }
    }

    md.push_str(&decode_table(&graph, &peers));

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
        let header = ["peer", "format", "shape", "median us", "p10 us", "p90 us", "TFLOP/s", "rel L2", "SM MHz"];
        md.push_str(&md_row(&header.map(String::from)));
        md.push_str(&md_row(&vec!["---".to_string(); header.len()]));
        for p in &peers {
            md.push_str(&md_row(&[
                p.name.clone(),
                p.format.map_or("?", PeerFormat::label).to_string(),
                p.shape.label(),
                fmt_us(p.median_us),
                fmt_us(p.p10_us),
                fmt_us(p.p90_us),
                format!("{:.1}", p.tflops),
                p.rel_l2.map_or("-".into(), |e| format!("{e:.1e}")),
                p.sm_clock_mhz.map_or("-".into(), |c| c.to_string()),
            ]));
        }
        let errors: Vec<&Value> = raw_peers.iter().filter(|p| p["error"].is_string()).collect();
        if !errors.is_empty() {
            md.push_str("\nNot timed:\n\n");
            for e in errors {
                let _ = writeln!(
                    md,
                    "- {} at {}: {}",
                    e["peer"].as_str().unwrap_or("?"),
                    Shape::from_peer(e).map_or_else(|| e["shape"].to_string(), |s| s.label()),
                    e["error"].as_str().unwrap_or("?")
                );
            }
        }
    }
    md
}

/// The decode section: the K+V read rate of every graph-timed row and
/// timed peer at a decode shape, and its fraction of the device-to-device
/// copy rate of the same run; empty without decode rows.
fn decode_table(graph: &[&Row], peers: &[Row]) -> String {
    let decode: Vec<&Row> = graph.iter().copied().chain(peers).filter(|r| r.shape.is_decode()).collect();
    if decode.is_empty() {
        return String::new();
    }
    let mut md = format!("\n## Decode (Sq <= {DECODE_MAX_QUERIES})\n\n");
    md.push_str(
        "`K+V TB/s` = the bytes of K and V (E4M3 for the variants, the peer's own type for a peer) / time; \
         `of copy` = that / the device-to-device copy rate (bytes read + written) timed in the same run.\n\n",
    );
    let header = ["name", SHAPE_HEADER, "median us", "K+V TB/s", "of copy"];
    md.push_str(&md_row(&header.map(String::from)));
    md.push_str(&md_row(&vec!["---".to_string(); header.len()]));
    for r in decode {
        let of_copy = r.kv_tb_s.zip(r.copy_tb_s).map(|(kv, copy)| format!("{:.0}%", 100.0 * kv / copy));
        md.push_str(&md_row(&[
            r.name.clone(),
            r.shape.label(),
            fmt_us(r.median_us),
            r.kv_tb_s.map_or("-".into(), |t| format!("{t:.2}")),
            of_copy.unwrap_or_else(|| "-".into()),
        ]));
    }
    md
}

/// One line on a device-to-device copy's timing (`sdpa bench`'s `copy` or
/// `peers.py`'s copy row).
fn copy_facts(copy: &Value) -> String {
    let mib = copy["bytes"].as_u64().map_or("?".into(), |b| (b >> 20).to_string());
    let tb_s = copy["tb_s"].as_f64().map_or("?".into(), |t| format!("{t:.2}"));
    let us = copy["median_us"].as_f64().map_or("?".into(), fmt_us);
    format!(
        "{tb_s} TB/s read + written ({mib} MiB each way, {} us a copy, {})",
        us,
        copy["mode"].as_str().unwrap_or("graph")
    )
}

/// One line on `peers.py`'s first object: the SM clock, the versions and
/// the launch floor, where it gives them.
fn floor_facts(floor: &Value) -> String {
    let mut facts = Vec::new();
    match (floor["sm_clock_mhz"].as_u64(), floor["sm_clock_max_mhz"].as_u64()) {
        (Some(now), Some(max)) => facts.push(format!("SM clock {now} MHz (max {max}) as the peers started")),
        _ => facts.push(format!("SM clock not read ({})", floor["sm_clock_error"].as_str().unwrap_or("not recorded"))),
    }
    if let Some(t) = floor["torch"].as_str() {
        facts.push(format!("torch {t}"));
    }
    match (floor["cudnn_frontend"].as_str(), floor["cudnn_backend"].as_u64()) {
        (Some(fe), Some(be)) => facts.push(format!("cuDNN frontend {fe} over cuDNN {be}")),
        _ => {
            if let Some(e) = floor["cudnn_frontend_error"].as_str() {
                facts.push(e.to_string());
            }
        }
    }
    if let Some(us) = floor["median_us"].as_f64() {
        facts.push(format!("launch floor {} us", fmt_us(us)));
    }
    facts.join("; ")
}

/// The dash pattern of a series: none for a variant, dotted for an FP8
/// peer, dashed for any other peer.
fn series_dash(r: &Row) -> &'static str {
    match (r.source, r.format) {
        (Source::Variant, _) => "",
        (Source::Peer, Some(PeerFormat::Fp8)) => r#" stroke-dasharray="2 2""#,
        (Source::Peer, _) => r#" stroke-dasharray="6 3""#,
    }
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
/// mode, solid) and per peer (dashed; dotted for FP8 peers). A variant's
/// point says, on hover, its speed against the fastest peer of each format.
pub fn svg(record: &Value) -> String {
    let mut rows: Vec<Row> = variant_rows(record).into_iter().filter(|r| r.mode == "graph").collect();
    let peers = peer_rows(record);
    let against_peers = |r: &Row| -> String {
        if r.source == Source::Peer {
            return String::new();
        }
        PeerFormat::ALL
            .iter()
            .filter_map(|f| fastest_peer(&peers, &r.shape, *f))
            .map(|p| {
                format!(
                    "; {} the fastest {} peer ({})",
                    fmt_ratio(speedup(r, p)),
                    p.format.map_or("?", PeerFormat::label),
                    p.name
                )
            })
            .collect()
    };
    rows.extend(peers.iter().cloned());
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
        xml(&format!("TFLOP/s vs sequence length, {device}, {date} (B,H vary by shape; causal FLOPs not halved)"))
    );
    if panels.is_empty() {
        let _ = writeln!(s, r#"<text x="20" y="60">no timed rows</text>"#);
    }
    for (i, ((head_dim, causal), pts)) in panels.iter().enumerate() {
        let ox = PANEL_W * (i % 2) as f64;
        let oy = 40.0 + PANEL_H * (i / 2) as f64;
        let (x0, x1) = (ox + LEFT, ox + PANEL_W - RIGHT);
        let (y0, y1) = (oy + PANEL_H - BOTTOM, oy + TOP);
        let lx: Vec<f64> = pts.iter().map(|r| (r.shape.seq_kv.max(1) as f64).log2()).collect();
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
        let title = format!("D={head_dim}{}", if *causal { ", causal (FLOPs not halved)" } else { "" });
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
            let dash = series_dash(series[0]);
            let points: Vec<String> =
                series.iter().map(|r| format!("{:.1},{:.1}", px(r.shape.seq_kv), py(r.tflops))).collect();
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
                    px(r.shape.seq_kv),
                    py(r.tflops),
                    xml(&format!(
                        "{} {}: {:.1} TFLOP/s, {} us{}",
                        r.name,
                        r.shape.label(),
                        r.tflops,
                        fmt_us(r.median_us),
                        against_peers(r)
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
        let dash = rows.iter().find(|r| r.name == *name).map_or("", series_dash);
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
    use crate::benchdata::tests::{fp8_peer_row, peer_row, sdpa_doc, sdpa_row};

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
                serde_json::json!({"floor": "1-element torch add", "median_us": 0.91, "sm_clock_mhz": 1980,
                                   "sm_clock_max_mhz": 1980, "torch": "2.11.0", "cudnn_frontend": "1.16.0",
                                   "cudnn_backend": 91900}),
                peer_row("torch-cudnn-fp16", "2,8,256,64", 6.8),
                fp8_peer_row("cudnn-fp8", "2,8,256,64", 9.5, 3.5e-2),
                fp8_peer_row("cudnn-fp8", "2,16,8192,64", 1000.0, 3.6e-2),
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
    fn markdown_has_the_tables_and_the_ratios_to_the_fastest_peers() {
        let md = markdown(&record(true));
        assert!(md.starts_with("# Bench 2026-11-22: NVIDIA H200\n"), "{md}");
        assert!(md.contains("causal: not halved"), "{md}");
        assert!(
            md.contains(
                "- peers.py: SM clock 1980 MHz (max 1980) as the peers started; torch 2.11.0; cuDNN frontend 1.16.0 \
                         over cuDNN 91900; launch floor 0.91 us\n"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| shape (B,Hq[:Hkv],Sq[:Skv],D) | mma us | mma TFLOP/s | split us | split TFLOP/s | fastest FP8 peer | FP8 peer us \
                 | fastest 16-bit peer | 16-bit peer us |\n"
            ),
            "{md}"
        );
        // Mission shape: the fastest FP8 peer cuDNN FP8 at 9.5 us, the
        // fastest 16-bit one cuDNN fp16 at 6.8 us (flash bf16 is slower).
        assert!(
            md.contains("| 2,8,256,64 | 7.00 | 38.3 | 163.0 | 1.6 | cudnn-fp8 | 9.50 | torch-cudnn-fp16 | 6.80 |\n"),
            "{md}"
        );
        // A shape split was not timed at, and one no peer was timed at.
        assert!(md.contains("| 2,16,8192,64 | 2800 | 196.3 | - | - | cudnn-fp8 | 1000 | torch-cudnn-bf16 | 1400 |\n"));
        assert!(md.contains("| 1,16,16384,128,causal | 5000 | 439.8 | - | - | - | - | - | - |\n"), "{md}");
        // Ratios: mma 7.0 us is 9.5/7 = 1.36x the FP8 peer, 6.8/7 = 0.97x
        // the 16-bit one; split 163 us 0.058x and 0.042x.
        assert!(md.contains(
            "| shape (B,Hq[:Hkv],Sq[:Skv],D) | mma vs FP8 | mma vs 16-bit | split vs FP8 | split vs 16-bit |\n"
        ));
        assert!(md.contains("| 2,8,256,64 | 1.36x | 0.97x | 0.058x | 0.042x |\n"), "{md}");
        assert!(md.contains("| 2,16,8192,64 | 0.36x | 0.50x | - | - |\n"), "{md}");
        assert!(md.contains("| 1,16,16384,128,causal | - | - | - | - |\n"), "{md}");
        // Every row, with its spread; the peers with their format and
        // accuracy; the peer that refused the shape.
        assert!(md.contains("| mma | 2,8,256,64 | direct | 8.00 | 7.90 | 8.10 | 2.50% |"), "{md}");
        assert!(md.contains("| cudnn-fp8 | FP8 | 2,8,256,64 | 9.50 | 9.40 | 9.60 | 28.3 | 3.5e-2 | 1755 |\n"), "{md}");
        assert!(
            md.contains("| torch-cudnn-fp16 | 16-bit | 2,8,256,64 | 6.80 | 6.73 | 6.87 | 39.5 | - | - |\n"),
            "{md}"
        );
        assert!(md.contains("- torch-flash-fp16 at 1,16,16384,128,causal: no"), "{md}");
        // Every table row has as many cells as its header.
        for table in md.split("\n\n").filter(|b| b.starts_with('|')) {
            let counts: Vec<usize> = table.lines().map(|l| l.matches(" | ").count()).collect();
            assert!(counts.iter().all(|c| *c == counts[0]), "{table}");
        }
    }

    #[test]
    fn decode_rows_show_their_kv_rate_against_the_copy_of_their_own_run() {
        let mut row = sdpa_row("split", "64,32:8,1:8192,128", "graph", 885.0, 880.0, 890.0);
        row["kv_tb_s"] = serde_json::json!(1.213);
        let mut doc = sdpa_doc(vec![row, sdpa_row("mma", "2,8,256,64", "graph", 7.0, 6.95, 7.1)]);
        doc["copy"] = serde_json::json!({"bytes": 1u64 << 30, "mode": "graph", "launches_per_sample": 4,
                                         "median_us": 512.5, "p10_us": 512.0, "p90_us": 513.0, "std_us": 0.3,
                                         "tb_s": 4.19});
        let mut g = Gathered::default();
        g.add_bench("bench-split.json", &doc).unwrap();
        let mut peer = peer_row("torch-cudnn-bf16", "64,32:8,1:8192,128", 483.0);
        peer["kv_tb_s"] = serde_json::json!(4.45);
        let copy = serde_json::json!({"copy": "torch device-to-device copy", "bytes": 1u64 << 30, "mode": "graph",
                                      "median_us": 510.0, "tb_s": 4.21});
        let refused = serde_json::json!({"peer": "cudnn-fp8", "shape": [64, 32, 1, 128], "heads_kv": 8,
                                         "seq_kv": 8192, "causal": false, "error": "check_support: no engine"});
        g.add_peers("peers.jsonl", &format!("{copy}\n{peer}\n{refused}\n")).unwrap();
        let record = g.into_record("2026-11-28");
        assert_eq!(record["rows"][0]["copy_tb_s"], 4.19);
        assert_eq!(record["copies"][0]["source"], "bench-split.json");
        let md = markdown(&record);
        assert!(
            md.contains("- device-to-device copy, sdpa bench (bench-split.json): 4.19 TB/s read + written (1024 MiB each way, 512.5 us a copy, graph)\n"),
            "{md}"
        );
        assert!(md.contains("- device-to-device copy, peers.py (torch): 4.21 TB/s read + written"), "{md}");
        assert!(md.contains("## Decode (Sq <= 16)"), "{md}");
        assert!(md.contains("| split | 64,32:8,1:8192,128 | 885.0 | 1.21 | 29% |\n"), "{md}");
        assert!(md.contains("| torch-cudnn-bf16 | 64,32:8,1:8192,128 | 483.0 | 4.45 | 106% |\n"), "{md}");
        assert!(!md.contains("| mma | 2,8,256,64 | 7.00 | -"), "not a decode shape: {md}");
        assert!(md.contains("- cudnn-fp8 at 64,32:8,1:8192,128: check_support: no engine"), "{md}");
        // Records written before Hkv and Skv existed read as equal sides.
        let old = serde_json::json!({"rows": [{"variant": "mma", "median_us": 7.0,
            "shape": {"batch": 2, "heads": 8, "seq": 256, "head_dim": 64, "causal": false}}]});
        assert_eq!(variant_rows(&old)[0].shape, Shape::parse("2,8,256,64").unwrap());
    }

    #[test]
    fn markdown_without_peers_says_so_and_has_no_peer_columns() {
        let md = markdown(&record(false));
        assert!(md.contains("- peers: no peers in this run (no peers.jsonl)"), "{md}");
        assert!(!md.contains("fastest"), "{md}");
        assert!(!md.contains("## Peers"), "{md}");
    }

    #[test]
    fn a_record_with_16_bit_peers_only_has_no_fp8_columns() {
        let mut g = Gathered::default();
        g.add_bench("bench.json", &sdpa_doc(vec![sdpa_row("mma", "2,8,256,64", "graph", 7.0, 6.95, 7.1)])).unwrap();
        g.add_peers("peers.jsonl", &format!("{}\n", peer_row("torch-cudnn-fp16", "2,8,256,64", 6.8))).unwrap();
        let md = markdown(&g.into_record("2026-11-22"));
        assert!(md.contains("| mma us | mma TFLOP/s | fastest 16-bit peer | 16-bit peer us |\n"), "{md}");
        assert!(
            md.contains("| shape (B,Hq[:Hkv],Sq[:Skv],D) | mma vs 16-bit |\n| --- | --- |\n| 2,8,256,64 | 0.97x |\n"),
            "{md}"
        );
        assert!(!md.contains("FP8"), "{md}");
        assert!(!md.contains("- peers.py:"), "no first object, no line: {md}");
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
        // Panels: D=64 (mma, split, 3 16-bit peers and the FP8 one) and
        // D=128 causal (mma), its FLOPs labelled.
        assert!(svg.contains(">D=64<") && svg.contains(">D=128, causal (FLOPs not halved)<"));
        assert_eq!(svg.matches("<polyline").count(), 7, "{svg}");
        assert_eq!(svg.matches("data-series=\"mma\"").count(), 2);
        assert_eq!(svg.matches("stroke-dasharray=\"6 3\"").count(), 3 + 3, "3 16-bit peer lines + 3 legend entries");
        assert_eq!(svg.matches("stroke-dasharray=\"2 2\"").count(), 1 + 1, "the FP8 peer's line + its legend entry");
        // A variant's point gives its ratio to the fastest peer of each format.
        assert!(
            svg.contains(
                "<title>mma 2,8,256,64: 38.3 TFLOP/s, 7.00 us; 1.36x the fastest FP8 peer (cudnn-fp8); 0.97x the \
                 fastest 16-bit peer (torch-cudnn-fp16)</title>"
            ),
            "{svg}"
        );
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
