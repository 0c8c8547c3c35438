//! What a reader looks at first: pqkit against the fastest peer, per family and size.
//!
//! Everything here works on [`Record`]s, the rows of report.json, so the summary at the top of REPORT.md, the
//! heat map (`heatmap.svg`) and the index of all tiers (`docs/benchmarks/README.md`) can be produced both at the
//! end of a run and later from the committed JSON alone (`pqkit-bench --index DIR`), without measuring again.
//!
//! The ratio of a row is the fastest peer's median time divided by pqkit's: above 1 pqkit is faster.

use crate::chart::{Point, fmt_size, slug, svg_throughput};
use crate::env::Environment;
use crate::record::Record;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The columns of the summary and the heat map: the bulk sizes, then one column for per-operation rows.
pub const BULK_SIZES: [u64; 5] = [64, 1024, 16 << 10, 1 << 20, 10 << 20];

/// One comparable row: pqkit and its fastest peer for one algorithm, operation and size (single-threaded).
#[derive(Clone, Debug, PartialEq)]
pub struct Ratio {
    /// The family the algorithm belongs to (see [`family`]).
    pub family: &'static str,
    /// Algorithm name as in the report.
    pub algorithm: String,
    /// Operation.
    pub operation: String,
    /// Input size for bulk rows; `None` for per-operation rows (public-key operations, KDFs).
    pub size: Option<u64>,
    /// Fastest peer's median / pqkit's median.
    pub ratio: f64,
    /// The fastest peer.
    pub peer: String,
}

/// The family of an algorithm, and whether its rows are per operation (true) or bulk throughput (false).
/// `None` for rows that are not a like-for-like comparison with another library (the message bus is compared
/// with raw channels that do less work, so its ratios stay in the full report).
pub fn family(algorithm: &str) -> Option<(&'static str, bool)> {
    let a = algorithm;
    let f = if a.starts_with("pqkit-bus") {
        return None;
    } else if a.ends_with("-Poly1305") || a.contains("-GCM") {
        ("AEAD", false)
    } else if a.ends_with("Rng") {
        ("RNG", false)
    } else if a.contains("ChaCha20") || a.starts_with("Kusumi") || a.starts_with("Threefish") {
        ("stream ciphers", false)
    } else if a.starts_with("Poly1305") || a.starts_with("HMAC") {
        ("MACs", false)
    } else if a.starts_with("SHA") || a.starts_with("BLAKE") || a.starts_with("Skein") {
        ("hashes", false)
    } else if a.starts_with("HKDF") || a.starts_with("Argon2") {
        ("KDFs", true)
    } else if a.starts_with("ML-KEM") {
        ("ML-KEM", true)
    } else if a.starts_with("ML-DSA") {
        ("ML-DSA", true)
    } else if a.starts_with("HPKE") {
        ("HPKE", true)
    } else if a.starts_with("X-Wing") || a.starts_with("X25519MLKEM") {
        ("hybrid KEMs", true)
    } else if a.starts_with("X25519") || a.starts_with("Ed25519") {
        ("X25519 / Ed25519", true)
    } else if a.starts_with("P-256") {
        ("P-256", true)
    } else if a.starts_with("secp256k1") {
        ("secp256k1", true)
    } else if a.starts_with("RSA") {
        ("RSA", true)
    } else {
        ("other", false)
    };
    Some(f)
}

/// Families in the order the summary lists them.
pub const FAMILIES: [&str; 15] = [
    "stream ciphers",
    "AEAD",
    "MACs",
    "hashes",
    "RNG",
    "KDFs",
    "ML-KEM",
    "ML-DSA",
    "hybrid KEMs",
    "HPKE",
    "X25519 / Ed25519",
    "P-256",
    "secp256k1",
    "RSA",
    "other",
];

/// The 512-bit cipher section repeats the ChaCha20 rows in other calling styles; the summary takes the main ones.
const SECONDARY_OPERATIONS: [&str; 3] = ["one-shot", "in-place", "stream"];

/// pqkit against its fastest peer for every single-threaded (algorithm, operation, size) that has both, in the
/// order of the records.
pub fn ratios(records: &[Record]) -> Vec<Ratio> {
    type Group<'a> = ((String, String, u64), Vec<&'a Record>);
    let mut groups: Vec<Group> = Vec::new();
    for r in records.iter().filter(|r| r.threads == 1 && !SECONDARY_OPERATIONS.contains(&r.operation.as_str())) {
        let k = (r.algorithm.clone(), r.operation.clone(), r.size_bytes);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    let mut out = Vec::new();
    for ((alg, op, size), rs) in groups {
        let Some((fam, per_op)) = family(&alg) else { continue };
        let Some(ours) = rs.iter().find(|r| r.implementation == "pqkit") else { continue };
        let fastest = rs
            .iter()
            .filter(|r| r.implementation != "pqkit" && r.median_ns.is_finite() && r.median_ns > 0.0)
            .min_by(|a, b| a.median_ns.total_cmp(&b.median_ns));
        let Some(peer) = fastest else { continue };
        if !(ours.median_ns.is_finite() && ours.median_ns > 0.0) {
            continue;
        }
        out.push(Ratio {
            family: fam,
            algorithm: alg,
            operation: op,
            size: if per_op { None } else { Some(size) },
            ratio: peer.median_ns / ours.median_ns,
            peer: peer.implementation.clone(),
        });
    }
    out
}

/// Geometric mean, minimum and maximum of some ratios.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Geometric mean.
    pub geomean: f64,
    /// Lowest ratio.
    pub min: f64,
    /// Highest ratio.
    pub max: f64,
    /// How many rows.
    pub rows: usize,
}

fn spread<'a>(rs: impl Iterator<Item = &'a Ratio>) -> Option<Spread> {
    let (mut n, mut log, mut min, mut max) = (0usize, 0.0f64, f64::INFINITY, 0.0f64);
    for r in rs {
        n += 1;
        log += r.ratio.ln();
        min = min.min(r.ratio);
        max = max.max(r.ratio);
    }
    (n > 0).then(|| Spread { geomean: (log / n as f64).exp(), min, max, rows: n })
}

/// The columns present: bulk sizes in order, then `None` (per operation) if any row has it.
fn columns(rs: &[Ratio]) -> Vec<Option<u64>> {
    let mut cols: Vec<Option<u64>> =
        BULK_SIZES.iter().copied().filter(|s| rs.iter().any(|r| r.size == Some(*s))).map(Some).collect();
    if rs.iter().any(|r| r.size.is_none()) {
        cols.push(None);
    }
    cols
}

fn families(rs: &[Ratio]) -> Vec<&'static str> {
    FAMILIES.iter().copied().filter(|f| rs.iter().any(|r| r.family == *f)).collect()
}

/// The cell of one family at one column: every row of the family at that size (rows at sizes outside
/// [`BULK_SIZES`] are left to the full report).
pub fn cell(rs: &[Ratio], family: &str, col: Option<u64>) -> Option<Spread> {
    spread(rs.iter().filter(|r| r.family == family && r.size == col))
}

fn col_name(c: Option<u64>) -> String {
    c.map_or_else(|| "per op".into(), |s| fmt_size(s as usize))
}

fn row_name(r: &Ratio) -> String {
    match r.size {
        Some(s) => format!("{} {} {}", r.algorithm, r.operation, fmt_size(s as usize)),
        None => format!("{} {}", r.algorithm, r.operation),
    }
}

/// How many rows the lead and trail lists of the summary show.
const LIST_LEN: usize = 8;

/// The one-screen summary that opens REPORT.md: a family × size table of geometric-mean ratios (with the
/// range), then the rows where pqkit trails most and leads most.
pub fn summary_markdown(rs: &[Ratio]) -> String {
    let mut s = String::from("## Summary\n\n");
    if rs.is_empty() {
        s.push_str("No row has both pqkit and a peer.\n\n");
        return s;
    }
    let cols = columns(rs);
    let behind = rs.iter().filter(|r| r.ratio < 0.95).count();
    let ahead = rs.iter().filter(|r| r.ratio > 1.05).count();
    let _ = writeln!(
        s,
        "pqkit's speed divided by the fastest peer's, single-threaded: above 1.00 pqkit is faster. Each cell is the \
         geometric mean over the family's algorithms and operations at that size, with the lowest and highest \
         row in brackets. Of {} row{}, pqkit is more than 5% faster in {ahead}, within 5% in {}, and more than 5% \
         slower in {behind}. The heat map ([heatmap.svg](heatmap.svg)) shows the same table.\n",
        rs.len(),
        if rs.len() == 1 { "" } else { "s" },
        rs.len() - ahead - behind
    );
    let head: Vec<String> = cols.iter().map(|c| col_name(*c)).collect();
    let _ = writeln!(s, "| family | {} |\n|---|{}", head.join(" | "), "---|".repeat(cols.len()));
    for f in families(rs) {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| match cell(rs, f, *c) {
                Some(sp) if sp.rows > 1 => format!("{:.2} ({:.2}–{:.2})", sp.geomean, sp.min, sp.max),
                Some(sp) => format!("{:.2}", sp.geomean),
                None => String::new(),
            })
            .collect();
        let _ = writeln!(s, "| {f} | {} |", cells.join(" | "));
    }
    s.push('\n');
    let mut sorted: Vec<&Ratio> = rs.iter().collect();
    sorted.sort_by(|a, b| a.ratio.total_cmp(&b.ratio));
    let list = |s: &mut String, title: &str, rows: &[&Ratio]| {
        let items: Vec<String> = rows.iter().map(|r| format!("{} {:.2} ({})", row_name(r), r.ratio, r.peer)).collect();
        let _ = writeln!(s, "**{title}:** {}.\n", if items.is_empty() { "none".into() } else { items.join("; ") });
    };
    // One entry per algorithm and operation (its most extreme size), so one algorithm measured at many sizes
    // does not fill the list.
    fn pick<'a>(rows: impl Iterator<Item = &'a Ratio>) -> Vec<&'a Ratio> {
        let mut out: Vec<&Ratio> = Vec::new();
        for r in rows {
            if out.len() == LIST_LEN {
                break;
            }
            if !out.iter().any(|o| o.algorithm == r.algorithm && o.operation == r.operation) {
                out.push(r);
            }
        }
        out
    }
    let trail = pick(sorted.iter().copied().filter(|r| r.ratio < 0.95));
    let lead = pick(sorted.iter().rev().copied().filter(|r| r.ratio > 1.05));
    list(&mut s, "Furthest behind (ratio, fastest peer)", &trail);
    list(&mut s, "Furthest ahead (ratio, fastest peer)", &lead);
    s
}

/// A colour for a ratio: red below 1, white at 1, green above, saturating at 0.5 and 2 (log scale).
pub fn colour(ratio: f64) -> String {
    let t = (ratio.max(1e-9).log2()).clamp(-1.0, 1.0);
    let mix = |from: (f64, f64, f64), k: f64| {
        let c = |x: f64| (255.0 + (x - 255.0) * k).round() as u8;
        format!("#{:02x}{:02x}{:02x}", c(from.0), c(from.1), c(from.2))
    };
    if t < 0.0 { mix((214.0, 39.0, 40.0), -t) } else { mix((44.0, 160.0, 44.0), t) }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The heat map: one row per family, one column per size, each cell coloured by its geometric-mean ratio and
/// labelled with it.
pub fn heatmap_svg(rs: &[Ratio], title: &str) -> String {
    let cols = columns(rs);
    let fams = families(rs);
    let (left, top, cw, ch) = (150.0, 60.0, 90.0, 30.0);
    let w = left + cw * cols.len().max(1) as f64 + 20.0;
    let h = top + ch * fams.len().max(1) as f64 + 70.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{:.1}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n",
        w / 2.0,
        esc(title)
    );
    for (i, c) in cols.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            left + cw * (i as f64 + 0.5),
            top - 8.0,
            col_name(*c)
        );
    }
    for (j, f) in fams.iter().enumerate() {
        let y = top + ch * j as f64;
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            y + ch / 2.0 + 4.0,
            esc(f)
        );
        for (i, c) in cols.iter().enumerate() {
            let x = left + cw * i as f64;
            match cell(rs, f, *c) {
                Some(sp) => {
                    let _ = writeln!(
                        s,
                        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cw}\" height=\"{ch}\" fill=\"{}\" stroke=\"white\"/>\
                         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{:.2}</text>",
                        colour(sp.geomean),
                        x + cw / 2.0,
                        y + ch / 2.0 + 4.0,
                        sp.geomean
                    );
                }
                None => {
                    let _ = writeln!(
                        s,
                        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cw}\" height=\"{ch}\" fill=\"#f2f2f2\" stroke=\"white\"/>"
                    );
                }
            }
        }
    }
    // Legend: the colour scale at round ratios.
    let ly = top + ch * fams.len() as f64 + 20.0;
    let ticks = [0.5, 0.75, 1.0, 1.5, 2.0];
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">pqkit / fastest peer</text>",
        left - 8.0,
        ly + 14.0
    );
    for (i, t) in ticks.iter().enumerate() {
        let x = left + 60.0 * i as f64;
        let _ = writeln!(
            s,
            "<rect x=\"{x:.1}\" y=\"{ly:.1}\" width=\"56\" height=\"18\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t:.2}</text>",
            colour(*t),
            x + 28.0,
            ly + 13.0
        );
    }
    s.push_str("</svg>\n");
    s
}

/// report.json as read back.
#[derive(Deserialize)]
struct JsonIn {
    profile: String,
    environment: Environment,
    records: Vec<Record>,
}

/// One tier's committed report, read back from its report.json.
pub struct TierReport {
    /// Folder name (`avx512`, `avx2`, ...).
    pub name: String,
    /// `quick` or `full`.
    pub profile: String,
    /// The environment header of the run.
    pub env: Environment,
    /// The ratios of its rows.
    pub ratios: Vec<Ratio>,
    /// The rows of report.json.
    pub records: Vec<Record>,
}

/// Reads `dir/report.json`.
pub fn load(dir: &Path) -> Result<TierReport, String> {
    let p = dir.join("report.json");
    let text = std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    let j: JsonIn =
        serde_json::from_str(&text).map_err(|e| format!("{} is not a pqkit-bench report: {e}", p.display()))?;
    Ok(TierReport {
        name: dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        profile: j.profile,
        env: j.environment,
        ratios: ratios(&j.records),
        records: j.records,
    })
}

/// The order of tier folders in the index; other folders follow in name order.
pub const TIERS: [&str; 4] = ["avx512", "avx2", "nats", "python"];

fn date(d: &str) -> &str {
    d.split('T').next().unwrap_or(d)
}

/// docs/benchmarks/README.md: each tier's machine, date and commit, and one ratio table per tier (algorithm and
/// operation × size). `others` are report folders without report.json (NATS, Python): (folder, first file,
/// its description line).
pub fn index_markdown(tiers: &[TierReport], others: &[(String, String, String)]) -> String {
    let mut s = String::from(
        "# Benchmark reports\n\n\
         Generated by `pqkit-bench --index docs/benchmarks` from the committed reports; do not edit by hand. Each \
         folder holds the current report of one tier and is replaced in place when it is refreshed (git keeps the \
         history). Figures are pqkit's speed divided by the fastest peer's speed, single-threaded, from one run in \
         one process: above 1.00 pqkit is faster. Absolute times on these shared 2-core machines drift between \
         runs; ratios hold better.\n\n",
    );
    let _ = writeln!(s, "| report | machine | tier | date | commit | profile |\n|---|---|---|---|---|---|");
    for t in tiers {
        let _ = writeln!(
            s,
            "| [{0}/REPORT.md]({0}/REPORT.md) | {1}, {2} cores | {3} | {4} | {5} | `--{6}` |",
            t.name,
            t.env.cpu_model,
            t.env.cores,
            t.env.isa.split(':').next().unwrap_or_default().trim(),
            date(&t.env.date_utc),
            t.env.git_revision,
            t.profile
        );
    }
    for (dir, file, line) in others {
        let _ = writeln!(s, "| [{dir}/{file}]({dir}/{file}) | {line} | | | | |");
    }
    s.push('\n');
    for t in tiers {
        let _ = writeln!(s, "## {} ({})\n", t.name, t.env.cpu_model);
        let _ = writeln!(s, "![pqkit / fastest peer by family and size]({}/heatmap.svg)\n", t.name);
        let cols = columns(&t.ratios);
        let head: Vec<String> = cols.iter().map(|c| col_name(*c)).collect();
        let _ = writeln!(s, "| algorithm | operation | {} |\n|---|---|{}", head.join(" | "), "---|".repeat(cols.len()));
        // (family, first appearance) -> the row's first ratio and its cells by column.
        type Row<'a> = (&'a Ratio, Vec<Option<&'a Ratio>>);
        let mut rows: BTreeMap<(usize, usize), Row> = BTreeMap::new();
        let mut order: Vec<(String, String)> = Vec::new();
        for r in &t.ratios {
            let k = (r.algorithm.clone(), r.operation.clone());
            let pos = order.iter().position(|o| *o == k).unwrap_or_else(|| {
                order.push(k);
                order.len() - 1
            });
            let fam = FAMILIES.iter().position(|f| *f == r.family).unwrap_or(FAMILIES.len());
            let e = rows.entry((fam, pos)).or_insert_with(|| (r, vec![None; cols.len()]));
            if let Some(i) = cols.iter().position(|c| *c == r.size) {
                e.1[i] = Some(r);
            }
        }
        for (first, cells) in rows.values() {
            let cells: Vec<String> =
                cells.iter().map(|c| c.map_or_else(String::new, |r| format!("{:.2}", r.ratio))).collect();
            let _ = writeln!(s, "| {} | {} | {} |", first.algorithm, first.operation, cells.join(" | "));
        }
        s.push('\n');
    }
    s
}

/// The first line of a Markdown report that is not a heading or blank, cut to one sentence: how the index
/// describes a report folder that has no report.json.
fn describe(text: &str) -> String {
    let title = text.lines().find(|l| l.starts_with('#')).map(|l| l.trim_start_matches('#').trim().to_string());
    title.unwrap_or_default()
}

/// Rewrites what a tier folder derives from its report.json: the summary at the top of REPORT.md (everything
/// before `## Environment`) and heatmap.svg; removes the older one-bar-per-row ratios.svg. Returns the files
/// written.
pub fn refresh_tier(dir: &Path, tier: &TierReport) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let heat = dir.join("heatmap.svg");
    std::fs::write(&heat, heatmap_svg(&tier.ratios, &heatmap_title(&tier.env)))
        .map_err(|e| format!("cannot write {}: {e}", heat.display()))?;
    files.push(heat);
    let report = dir.join("REPORT.md");
    if let Ok(old) = std::fs::read_to_string(&report) {
        let Some(at) = old.find("## Environment") else {
            return Err(format!("{} has no `## Environment` section", report.display()));
        };
        let body = old[at..]
            .replace("![pqkit/peer ratios](ratios.svg)", "![pqkit / fastest peer by family and size](heatmap.svg)");
        let text = format!("{}{}", head_markdown(&tier.profile, &tier.ratios), body);
        std::fs::write(&report, text).map_err(|e| format!("cannot write {}: {e}", report.display()))?;
        files.push(report);
    }
    // The throughput charts the folder already has, redrawn from the records (round axis ticks).
    let mut charts: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("throughput-")))
        .collect();
    charts.sort();
    for chart in charts {
        let mut groups: Vec<(String, String)> = Vec::new();
        for r in &tier.records {
            let k = (r.algorithm.clone(), r.operation.clone());
            if !groups.contains(&k) {
                groups.push(k);
            }
        }
        let Some((alg, op)) = groups.into_iter().find(|(a, o)| {
            chart
                .file_name()
                .is_some_and(|n| n.to_string_lossy() == format!("throughput-{}.svg", slug(&format!("{a}-{o}"))))
        }) else {
            continue;
        };
        let pts: Vec<Point> = tier
            .records
            .iter()
            .filter(|r| r.algorithm == alg && r.operation == op && r.threads == 1)
            .filter_map(|r| r.bytes_per_sec.map(|b| (r.implementation.clone(), r.size_bytes as usize, b / 1e6)))
            .collect();
        std::fs::write(&chart, svg_throughput(&format!("{alg} {op}"), &pts))
            .map_err(|e| format!("cannot write {}: {e}", chart.display()))?;
        files.push(chart);
    }
    let old_chart = dir.join("ratios.svg");
    if old_chart.exists() {
        std::fs::remove_file(&old_chart).map_err(|e| format!("cannot remove {}: {e}", old_chart.display()))?;
    }
    Ok(files)
}

/// The title of a tier's heat map.
pub fn heatmap_title(env: &Environment) -> String {
    format!("pqkit / fastest peer: {}, {}", env.cpu_model, date(&env.date_utc))
}

/// The top of REPORT.md: title, profile and the summary.
pub fn head_markdown(profile: &str, rs: &[Ratio]) -> String {
    format!(
        "# pqkit benchmark report\n\n\
         Profile: `{profile}`. Generated by `pqkit-bench`; every figure below comes from one run in one process.\n\n{}",
        summary_markdown(rs)
    )
}

/// `pqkit-bench --index DIR`: refreshes every tier folder of DIR that has a report.json and writes DIR/README.md.
pub fn write_index(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .map_err(|e| format!("cannot read {}: {e}", root.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    let rank = |p: &PathBuf| {
        let n = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        (TIERS.iter().position(|t| *t == n).unwrap_or(TIERS.len()), n)
    };
    dirs.sort_by_key(rank);
    let (mut tiers, mut others, mut files) = (Vec::new(), Vec::new(), Vec::new());
    for d in dirs {
        if d.join("report.json").exists() {
            let t = load(&d)?;
            files.extend(refresh_tier(&d, &t)?);
            tiers.push(t);
        } else {
            let mut mds: Vec<PathBuf> = std::fs::read_dir(&d)
                .map_err(|e| format!("cannot read {}: {e}", d.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .collect();
            mds.sort();
            if let Some(md) = mds.first() {
                let text = std::fs::read_to_string(md).map_err(|e| format!("cannot read {}: {e}", md.display()))?;
                let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                others.push((name(&d), name(md), describe(&text)));
            }
        }
    }
    if tiers.is_empty() && others.is_empty() {
        return Err(format!("{} holds no report folders", root.display()));
    }
    let readme = root.join("README.md");
    std::fs::write(&readme, index_markdown(&tiers, &others))
        .map_err(|e| format!("cannot write {}: {e}", readme.display()))?;
    files.push(readme);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::OutlierCounts;

    fn rec(alg: &str, op: &str, imp: &str, size: u64, ns: f64, threads: u64) -> Record {
        Record {
            algorithm: alg.into(),
            operation: op.into(),
            implementation: imp.into(),
            implementation_version: "1".into(),
            size_bytes: size,
            median_ns: ns,
            ci_low_ns: ns,
            ci_high_ns: ns,
            bytes_per_sec: None,
            tsc_per_byte: None,
            ops_per_sec: 1e9 / ns,
            allocs_per_op: None,
            alloc_bytes_per_op: None,
            samples: 10,
            outliers: OutlierCounts { low_severe: 0, low_mild: 0, high_mild: 0, high_severe: 0, total: 0 },
            threads,
            key_spread: None,
        }
    }

    fn fixture() -> Vec<Record> {
        vec![
            rec("ChaCha20", "apply_keystream", "pqkit", 64, 100.0, 1),
            rec("ChaCha20", "apply_keystream", "openssl", 64, 150.0, 1),
            rec("ChaCha20", "apply_keystream", "rustcrypto", 64, 300.0, 1),
            rec("ChaCha20", "apply_keystream", "pqkit", 1024, 400.0, 1),
            rec("ChaCha20", "apply_keystream", "openssl", 1024, 200.0, 1),
            // multi-threaded and secondary rows are not in the summary
            rec("ChaCha20", "apply_keystream", "pqkit", 1024, 1.0, 2),
            rec("ChaCha20", "apply_keystream", "openssl", 1024, 1000.0, 2),
            rec("ChaCha20", "stream", "pqkit", 1024, 1.0, 1),
            rec("ChaCha20", "stream", "openssl", 1024, 1000.0, 1),
            rec("ML-KEM-768", "encaps", "pqkit", 0, 1000.0, 1),
            rec("ML-KEM-768", "encaps", "libcrux", 0, 1100.0, 1),
            rec("ML-KEM-768", "encaps", "openssl", 0, 3000.0, 1),
            // only pqkit: nothing to compare
            rec("Kusumi512-Poly1305", "seal", "pqkit", 64, 50.0, 1),
            // the bus is compared with raw channels: left out
            rec("pqkit-bus", "send_10k-plain", "pqkit", 64, 1000.0, 1),
            rec("pqkit-bus", "send_10k-plain", "flume", 64, 100.0, 1),
        ]
    }

    #[test]
    fn ratios_take_the_fastest_peer_single_threaded() {
        let rs = ratios(&fixture());
        let got: Vec<(String, Option<u64>, String, f64)> =
            rs.iter().map(|r| (r.algorithm.clone(), r.size, r.peer.clone(), r.ratio)).collect();
        assert_eq!(
            got,
            vec![
                ("ChaCha20".into(), Some(64), "openssl".into(), 1.5),
                ("ChaCha20".into(), Some(1024), "openssl".into(), 0.5),
                ("ML-KEM-768".into(), None, "libcrux".into(), 1.1),
            ]
        );
        assert_eq!(rs[2].family, "ML-KEM");
    }

    #[test]
    fn summary_names_leads_and_trails_per_family_and_size() {
        let s = summary_markdown(&ratios(&fixture()));
        assert!(s.starts_with("## Summary\n"), "{s}");
        assert!(s.contains("| family | 64 B | 1 KiB | per op |"), "{s}");
        assert!(s.contains("| stream ciphers | 1.50 | 0.50 |  |"), "{s}");
        assert!(s.contains("| ML-KEM |  |  | 1.10 |"), "{s}");
        assert!(
            s.contains("Of 3 rows, pqkit is more than 5% faster in 2, within 5% in 0, and more than 5% slower in 1"),
            "{s}"
        );
        assert!(
            s.contains("**Furthest behind (ratio, fastest peer):** ChaCha20 apply_keystream 1 KiB 0.50 (openssl)."),
            "{s}"
        );
        assert!(
            s.contains("**Furthest ahead (ratio, fastest peer):** ChaCha20 apply_keystream 64 B 1.50 (openssl); ML-KEM-768 encaps 1.10 (libcrux)."),
            "{s}"
        );
    }

    #[test]
    fn lists_name_each_algorithm_once_at_its_most_extreme_size() {
        let mut f = fixture();
        f.push(rec("ChaCha20", "apply_keystream", "pqkit", 16384, 100.0, 1));
        f.push(rec("ChaCha20", "apply_keystream", "openssl", 16384, 120.0, 1));
        let s = summary_markdown(&ratios(&f));
        assert!(
            s.contains("**Furthest ahead (ratio, fastest peer):** ChaCha20 apply_keystream 64 B 1.50 (openssl); ML-KEM-768 encaps 1.10 (libcrux)."),
            "{s}"
        );
    }

    #[test]
    fn family_cell_is_the_geometric_mean_with_its_range() {
        let mut f = fixture();
        f.push(rec("XChaCha20", "apply_keystream", "pqkit", 64, 100.0, 1));
        f.push(rec("XChaCha20", "apply_keystream", "rustcrypto", 64, 600.0, 1));
        let rs = ratios(&f);
        let c = cell(&rs, "stream ciphers", Some(64)).expect("cell");
        assert!((c.geomean - 3.0).abs() < 1e-9, "{c:?}"); // sqrt(1.5 * 6)
        assert_eq!((c.min, c.max, c.rows), (1.5, 6.0, 2));
        assert!(summary_markdown(&rs).contains("| stream ciphers | 3.00 (1.50–6.00) | 0.50 |"));
    }

    #[test]
    fn heatmap_colours_and_labels_each_cell() {
        assert_eq!(colour(1.0), "#ffffff");
        assert_eq!(colour(0.5), "#d62728");
        assert_eq!(colour(4.0), "#2ca02c");
        let svg = heatmap_svg(&ratios(&fixture()), "t");
        assert_eq!(svg.matches("<rect x=").count(), 2 * 3 + 5, "two families x three columns, five legend keys");
        assert!(svg.contains(">1.50</text>") && svg.contains(">0.50</text>") && svg.contains(">1.10</text>"));
        assert!(svg.contains(&format!("fill=\"{}\"", colour(0.5))));
    }

    fn env() -> Environment {
        Environment {
            cpu_model: "Test CPU".into(),
            cpu_features: String::new(),
            isa: "native".into(),
            cores: 2,
            os: String::new(),
            rustc: String::new(),
            openssl: String::new(),
            crates: Vec::new(),
            date_utc: "2026-01-02T03:04:05Z".into(),
            git_revision: "abc1234".into(),
            tsc_ghz: 1.0,
        }
    }

    #[test]
    fn index_has_machine_date_commit_and_one_table_per_tier() {
        let t = TierReport {
            name: "avx512".into(),
            profile: "quick".into(),
            env: env(),
            ratios: ratios(&fixture()),
            records: fixture(),
        };
        let s = index_markdown(&[t], &[("nats".into(), "NATS.md".into(), "pqkit-bus over NATS".into())]);
        assert!(s.contains("| [avx512/REPORT.md](avx512/REPORT.md) | Test CPU, 2 cores | native | 2026-01-02 | abc1234 | `--quick` |"), "{s}");
        assert!(s.contains("| [nats/NATS.md](nats/NATS.md) | pqkit-bus over NATS |"), "{s}");
        assert!(s.contains("## avx512 (Test CPU)"), "{s}");
        assert!(s.contains("| algorithm | operation | 64 B | 1 KiB | per op |"), "{s}");
        assert!(s.contains("| ChaCha20 | apply_keystream | 1.50 | 0.50 |  |"), "{s}");
        assert!(s.contains("| ML-KEM-768 | encaps |  |  | 1.10 |"), "{s}");
    }

    #[test]
    fn write_index_regenerates_from_committed_json() {
        let root = std::env::temp_dir().join(format!("pqkit-bench-index-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let tier = root.join("avx512");
        std::fs::create_dir_all(&tier).unwrap();
        std::fs::create_dir_all(root.join("nats")).unwrap();
        std::fs::write(root.join("nats/NATS.md"), "## pqkit-bus over NATS\n\ntext\n").unwrap();
        let json = serde_json::json!({
            "schema_version": 1, "profile": "quick", "environment": env(), "records": fixture(),
            "errors": [], "regressions": []
        });
        std::fs::write(tier.join("report.json"), json.to_string()).unwrap();
        std::fs::write(
            tier.join("REPORT.md"),
            "# old title\n\nold summary\n\n## Environment\n\nbody ![pqkit/peer ratios](ratios.svg)\n",
        )
        .unwrap();
        std::fs::write(tier.join("ratios.svg"), "<svg/>").unwrap();
        write_index(&root).expect("index");
        let report = std::fs::read_to_string(tier.join("REPORT.md")).unwrap();
        assert!(report.starts_with("# pqkit benchmark report\n"), "{report}");
        assert!(report.contains("## Summary") && !report.contains("old summary"), "{report}");
        assert!(
            report.contains("## Environment\n\nbody ![pqkit / fastest peer by family and size](heatmap.svg)"),
            "{report}"
        );
        assert!(tier.join("heatmap.svg").exists() && !tier.join("ratios.svg").exists());
        let index = std::fs::read_to_string(root.join("README.md")).unwrap();
        assert!(index.contains("| ChaCha20 | apply_keystream | 1.50 | 0.50 |  |"), "{index}");
        assert!(index.contains("[nats/NATS.md](nats/NATS.md) | pqkit-bus over NATS"), "{index}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
