//! The report's charts and the small formatting helpers they share with the tables: sizes, file-name slugs,
//! round axis ticks, and the throughput-by-size SVG chart.

use crate::harness::Measurement;
use std::fmt::Write as _;

/// `64 B`, `1 KiB`, `10 MiB`.
pub fn fmt_size(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

/// A file-name form of a row name: `ChaCha20-Poly1305/seal` -> `chacha20-poly1305-seal`.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

const COLORS: [&str; 8] = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Round axis ticks from 0 up to at least `max`: a step of 1, 2, 2.5 or 5 times a power of ten giving at most
/// `n` intervals. Returns the step and the top of the axis (a multiple of the step).
pub fn nice_ticks(max: f64, n: usize) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 { max } else { 1.0 };
    let n = n.max(1) as f64;
    let mag = 10f64.powf((max / n).log10().floor());
    let step =
        [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|st| (max / st).ceil() <= n).unwrap_or(10.0 * mag);
    (step, (max / step).ceil() * step)
}

/// A tick label with no more decimals than the step needs.
pub fn fmt_tick(v: f64, step: f64) -> String {
    let decimals = (0..6usize).find(|&d| (step * 10f64.powi(d as i32)).fract().abs() < 1e-9).unwrap_or(6);
    format!("{v:.decimals$}")
}

/// One point of a throughput chart: implementation, size in bytes, MB/s.
pub type Point = (String, usize, f64);

/// The points of a throughput chart from measurements (single-threaded).
pub fn points(ms: &[&Measurement]) -> Vec<Point> {
    ms.iter().filter(|m| m.threads == 1).map(|m| (m.implementation.clone(), m.size_bytes, m.mb_per_sec())).collect()
}

/// A throughput-by-size line chart for one bulk algorithm (x: sizes, evenly spaced; y: MB/s on round ticks).
/// Implementations are drawn in first-seen order, pqkit first.
pub fn svg_throughput(title: &str, pts: &[Point]) -> String {
    let (w, h, l, r, t, b) = (720.0, 400.0, 70.0, 150.0, 40.0, 50.0);
    let mut sz: Vec<usize> = pts.iter().map(|p| p.1).collect();
    sz.sort_unstable();
    sz.dedup();
    let mut imps: Vec<&str> = Vec::new();
    for p in pts {
        if !imps.contains(&p.0.as_str()) {
            imps.push(&p.0);
        }
    }
    imps.sort_by_key(|i| *i != "pqkit");
    let (step, ymax) = nice_ticks(pts.iter().map(|p| p.2).filter(|v| v.is_finite()).fold(0.0, f64::max), 6);
    let px = |i: usize| l + (w - l - r) * if sz.len() > 1 { i as f64 / (sz.len() - 1) as f64 } else { 0.5 };
    let py = |v: f64| h - b - (h - t - b) * v / ymax;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
        w / 2.0,
        esc(title)
    );
    let ticks = (ymax / step).round() as usize;
    for k in 0..=ticks {
        let v = step * k as f64;
        let y = py(v);
        let _ = writeln!(
            s,
            "<line x1=\"{l}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            w - r,
            l - 6.0,
            y + 4.0,
            fmt_tick(v, step)
        );
    }
    for (i, size) in sz.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            px(i),
            h - b + 18.0,
            fmt_size(*size)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">MB/s</text>",
        h / 2.0,
        h / 2.0
    );
    for (j, imp) in imps.iter().enumerate() {
        let color = COLORS[j % COLORS.len()];
        let line: Vec<String> = sz
            .iter()
            .enumerate()
            .filter_map(|(i, &size)| {
                pts.iter().find(|p| p.0 == *imp && p.1 == size).map(|p| format!("{:.1},{:.1}", px(i), py(p.2)))
            })
            .collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>",
            line.join(" ")
        );
        for p in &line {
            let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = writeln!(s, "<circle cx=\"{x}\" cy=\"{y}\" r=\"3\" fill=\"{color}\"/>");
        }
        let ly = t + 10.0 + 18.0 * j as f64;
        let _ = writeln!(
            s,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            w - r + 12.0,
            ly,
            w - r + 30.0,
            ly + 10.0,
            esc(imp)
        );
    }
    s.push_str("</svg>\n");
    s
}
