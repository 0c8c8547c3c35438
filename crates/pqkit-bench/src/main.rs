//! `pqkit-bench`: runs the side-by-side comparison and writes REPORT.md, report.json and SVG charts.
use clap::Parser;
use pqkit_bench::{Config, harness::Timing};
use std::path::PathBuf;
use std::process::ExitCode;

/// Benchmarks pqkit against OpenSSL, aws-lc-rs, ring, RustCrypto and libcrux, in one process, on the same
/// data, and writes REPORT.md, report.json and SVG charts.
#[derive(Parser, Debug)]
#[command(name = "pqkit-bench", version)]
struct Cli {
    /// Short run (the default): about 3 minutes per tier for everything registered on a 2-core AMD Zen 5
    /// (175 s AVX-512, 185 s AVX2 tier, measured), plus the release build; `--only` and `--sizes` narrow it
    /// to seconds.
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// Long run: more and longer samples.
    #[arg(long)]
    full: bool,
    /// Only algorithms whose `name/operation` matches (substring, or glob with `*`); comma-separated.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Thread counts for the multi-core scaling runs, e.g. `1,2,4` (default: 1, 2 and all cores; `0` or
    /// `none` disables scaling).
    #[arg(long, value_delimiter = ',')]
    threads: Vec<String>,
    /// Output directory.
    #[arg(long, default_value = "target/pqkit-report", conflicts_with = "publish")]
    out: PathBuf,
    /// Write the report into DIR/<tier> (`avx512`, `avx2` or `portable`, from the CPU features in force;
    /// `nats` with --nats), replacing that folder, then regenerate DIR/README.md as with --index. The
    /// committed reports: `--publish docs/benchmarks`.
    #[arg(long, value_name = "DIR")]
    publish: Option<PathBuf>,
    /// Measure nothing: regenerate DIR/README.md (the index of every tier) and, in each tier folder with a
    /// report.json, the summary at the top of REPORT.md, heatmap.svg and the throughput charts, from the
    /// committed JSON. E.g. `--index docs/benchmarks`.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["publish", "list", "nats", "compare"])]
    index: Option<PathBuf>,
    /// Baseline report.json: mark every figure that regressed more than 5% beyond its confidence interval.
    #[arg(long)]
    compare: Option<PathBuf>,
    /// With --compare: exit non-zero if anything regressed.
    #[arg(long, requires = "compare")]
    fail_on_regression: bool,
    /// Samples per measurement (overrides the profile's maximum).
    #[arg(long)]
    samples: Option<usize>,
    /// Bulk sizes to measure (bytes), overriding each algorithm's list, e.g. `1024,1048576`.
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<usize>,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    /// List the registered algorithms and candidates, then exit.
    #[arg(long)]
    list: bool,
    /// Run as a lesser CPU would: `portable`, `avx2`, `avx512` or `native`. Caps pqkit (PQKIT_CPU) and the
    /// peers that allow it (OpenSSL and aws-lc-rs, through OPENSSL_ia32cap); the report header says which
    /// could not be capped.
    #[arg(long, value_name = "TIER")]
    isa: Option<String>,
    /// Run only the NATS section (pqkit-bus sealed vs plain async-nats on the same server, wall
    /// clock) against the server at URL, or `auto` to start a local `nats-server -js`; writes NATS.md.
    #[arg(long, value_name = "URL|auto")]
    nats: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(root) = &cli.index {
        return index(root);
    }
    if let Some(isa) = &cli.isa {
        let cap = match pqkit::cpu::Cap::parse(isa) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: --isa {isa}: {e}");
                return ExitCode::from(64);
            }
        };
        if std::env::var(pqkit_bench::isa::APPLIED).as_deref() != Ok(cap.name()) {
            return pqkit_bench::isa::rerun(cap);
        }
    }
    if let Some(url) = &cli.nats {
        let out = match &cli.publish {
            Some(root) => match fresh_dir(&root.join("nats")) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            },
            None => cli.out.clone(),
        };
        let code = run_nats(url, !cli.full, &out, &cli.only);
        return match &cli.publish {
            Some(root) if code == ExitCode::SUCCESS => index(root),
            _ => code,
        };
    }
    let algs = pqkit_bench::algs::all();
    if cli.list {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for a in &algs {
            let c: Vec<String> = a.candidates.iter().map(|c| format!("{} ({})", c.implementation, c.version)).collect();
            // `pqkit-bench --list | head`: a closed pipe ends the listing quietly, like other Unix tools.
            match writeln!(out, "{:<36} {:?} sizes={:?}  {}", a.id(), a.reports, a.sizes, c.join(", ")) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: stdout: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        return match out.flush() {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                eprintln!("error: stdout: {e}");
                ExitCode::FAILURE
            }
            _ => ExitCode::SUCCESS,
        };
    }
    let mut config = Config::quick();
    if cli.full {
        config.timing = Timing::full();
        config.profile = "full".into();
    }
    if let Some(n) = cli.samples {
        config.timing.samples = n.max(2);
        config.timing.min_samples = config.timing.min_samples.min(config.timing.samples);
    }
    config.only = cli.only;
    if !cli.threads.is_empty() {
        let mut t = Vec::new();
        for s in &cli.threads {
            match s.as_str() {
                "none" | "0" => {}
                "all" => t.push(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)),
                _ => match s.parse::<usize>() {
                    Ok(n) if n > 0 => t.push(n),
                    _ => {
                        eprintln!("error: --threads takes positive integers, `all` or `none`, got `{s}`");
                        return ExitCode::from(64);
                    }
                },
            }
        }
        t.sort_unstable();
        t.dedup();
        config.threads = t;
    }
    if !cli.sizes.is_empty() {
        config.sizes = Some(cli.sizes);
    }
    config.out_dir = match &cli.publish {
        Some(root) => {
            let features = pqkit_bench::env::Environment::collect().cpu_features;
            let has = |f: &str| features.split(' ').any(|x| x == f);
            let tier = if has("avx512f") {
                "avx512"
            } else if has("avx2") {
                "avx2"
            } else {
                "portable"
            };
            match fresh_dir(&root.join(tier)) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        None => cli.out.clone(),
    };
    config.compare = cli.compare;
    config.progress = !cli.no_progress;
    let started = std::time::Instant::now();
    let out = match pqkit_bench::run(&config, &algs) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match pqkit_bench::report::write_all(&out, &config.out_dir) {
        Ok(files) => {
            eprintln!(
                "pqkit-bench: {} measurements, {} errors, {} regressions in {:.0} s; wrote {} files to {}",
                out.measurements.len(),
                out.errors.len(),
                out.regressions.len(),
                started.elapsed().as_secs_f64(),
                files.len(),
                config.out_dir.display()
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    if let Some(root) = &cli.publish
        && index(root) != ExitCode::SUCCESS
    {
        return ExitCode::from(2);
    }
    for e in &out.errors {
        eprintln!(
            "error: {} {} at {}: [{}] {}",
            e.algorithm,
            e.operation,
            pqkit_bench::report::fmt_size(e.size_bytes),
            e.implementations.join(", "),
            e.message
        );
    }
    for r in &out.regressions {
        eprintln!("regression: {} is {:+.1}% slower than the baseline", r.key, r.slowdown_percent);
    }
    if !out.errors.is_empty() {
        return ExitCode::from(3);
    }
    if cli.fail_on_regression && !out.regressions.is_empty() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// `--index DIR`: the index and the summaries regenerated from the committed report.json files.
fn index(root: &std::path::Path) -> ExitCode {
    match pqkit_bench::summary::write_index(root) {
        Ok(files) => {
            eprintln!("pqkit-bench: wrote {} files under {}", files.len(), root.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// A tier folder emptied for a new report (the old one stays in git history).
fn fresh_dir(dir: &std::path::Path) -> Result<PathBuf, String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot replace {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir.to_path_buf())
}

/// `--nats`: the NATS section alone (algs/bus_nats.rs), printed and written to `<out>/NATS.md`.
fn run_nats(url: &str, quick: bool, out: &std::path::Path, only: &[String]) -> ExitCode {
    use pqkit_bench::algs::bus_nats;
    let local = if url == "auto" {
        match bus_nats::start_local() {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    let url = local.as_ref().map_or(url.to_string(), |s| s.url.clone());
    let env = pqkit_bench::env::Environment::collect();
    let rows = match bus_nats::run_only(&url, quick, only) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(3);
        }
    };
    let header = format!(
        "{} ({} cores, {}), features {}, tier {}, {}; {}; server {} ({}); {} UTC, revision {}.",
        env.cpu_model,
        env.cores,
        env.os,
        env.cpu_features,
        env.isa,
        env.rustc,
        if quick { "--quick" } else { "--full" },
        url,
        if local.is_some() { "started by this run" } else { "given with --nats" },
        env.date_utc,
        env.git_revision
    );
    let md = bus_nats::markdown(&rows, &header);
    println!("{md}");
    let _ = std::fs::create_dir_all(out);
    if let Err(e) = std::fs::write(out.join("NATS.md"), &md) {
        eprintln!("error: {}: {e}", out.join("NATS.md").display());
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
