//! # pqkit-bench
//!
//! The side-by-side comparison system: pqkit and its peers (OpenSSL, aws-lc-rs, ring, RustCrypto, libcrux)
//! measured in one process, on the same data, after an agreement check, interleaved, and reported as
//! REPORT.md, report.json and SVG charts. See the crate README for the methodology.
//!
//! Layout: [`registry`] (what is measured), [`algs`] (one adapter module per algorithm family),
//! [`harness`] (check and timing), [`stats`], [`report`] (outputs), [`summary`] (summary, heat map, index), [`env`](mod@env) (environment header),
//! [`alloc_count`] (the counting global allocator).
#![deny(unsafe_code)]

pub mod algs;
pub mod aligned;
pub mod alloc_count;
pub mod chart;
pub mod env;
pub mod harness;
pub mod isa;
pub mod record;
pub mod registry;
pub mod report;
pub mod stats;
pub mod summary;

use harness::{Measurement, RunError, Timing};
use registry::{Algorithm, Kind};
use std::path::PathBuf;

/// A run's configuration (the command line, parsed).
#[derive(Clone, Debug)]
pub struct Config {
    /// Sampling parameters.
    pub timing: Timing,
    /// `quick` or `full`, for the report header.
    pub profile: String,
    /// `--only` patterns (substring, or glob with `*`), matched case-insensitively against
    /// `algorithm/operation`. Empty: everything.
    pub only: Vec<String>,
    /// Thread counts for the scaling runs. Empty: no scaling runs.
    pub threads: Vec<usize>,
    /// If set, bulk algorithms are measured only at these of their sizes.
    pub sizes: Option<Vec<usize>>,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Baseline report.json to compare against.
    pub compare: Option<PathBuf>,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

impl Config {
    /// The default `--quick` configuration writing to `target/pqkit-report/`.
    pub fn quick() -> Self {
        let all = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let mut threads = vec![1, 2, all];
        threads.sort_unstable();
        threads.dedup();
        Config {
            timing: Timing::quick(),
            profile: "quick".into(),
            only: Vec::new(),
            threads,
            sizes: None,
            out_dir: PathBuf::from("target/pqkit-report"),
            compare: None,
            progress: true,
        }
    }
}

/// Everything a run produced.
pub struct RunOutput {
    /// The environment header.
    pub env: env::Environment,
    /// The profile (`quick`, `full`, ...).
    pub profile: String,
    /// All measurements, single- and multi-threaded.
    pub measurements: Vec<Measurement>,
    /// Agreement failures and failed operations (never timed).
    pub errors: Vec<RunError>,
    /// Figures that regressed against the baseline (empty without `--compare`).
    pub regressions: Vec<report::Regression>,
    /// Registry order of algorithm ids, for stable report ordering.
    pub order: Vec<String>,
}

/// True if `id` matches a `--only` pattern: glob (`*` any run of characters) if the pattern has a `*`,
/// otherwise substring; case-insensitive.
pub fn matches(pattern: &str, id: &str) -> bool {
    let p = pattern.to_lowercase();
    let s = id.to_lowercase();
    if !p.contains('*') {
        return s.contains(&p);
    }
    let parts: Vec<&str> = p.split('*').collect();
    let mut rest = s.as_str();
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            if !rest.starts_with(part) {
                return false;
            }
            rest = &rest[part.len()..];
        } else if i == parts.len() - 1 {
            return part.is_empty() || rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(pos) => rest = &rest[pos + part.len()..],
                None => return false,
            }
        }
    }
    rest.is_empty()
}

fn selected(config: &Config, alg: &Algorithm) -> bool {
    config.only.is_empty() || config.only.iter().any(|p| matches(p, &alg.id()))
}

fn sizes_for(config: &Config, alg: &Algorithm) -> Vec<usize> {
    match (&config.sizes, alg.kind) {
        (Some(only), Kind::Bulk) => alg.sizes.iter().copied().filter(|s| only.contains(s)).collect(),
        _ => alg.sizes.clone(),
    }
}

/// The per-buffer size of the scaling runs: 1 MiB, or the largest measured size below it.
fn scaling_size(sizes: &[usize]) -> Option<usize> {
    sizes.iter().copied().filter(|&s| s <= 1 << 20).max()
}

/// Runs the selected algorithms and returns the results (writes nothing).
pub fn run(config: &Config, algs: &[Algorithm]) -> Result<RunOutput, String> {
    let env = env::Environment::collect();
    let chosen: Vec<&Algorithm> = algs.iter().filter(|a| selected(config, a)).collect();
    if chosen.is_empty() {
        return Err(format!("no algorithm matches --only {}", config.only.join(",")));
    }
    let total: usize = chosen
        .iter()
        .map(|a| {
            let n = sizes_for(config, a).len();
            n + if a.scaling { config.threads.iter().filter(|&&t| t > 1).count() } else { 0 }
        })
        .sum();
    let bar = if config.progress {
        let b = indicatif::ProgressBar::with_draw_target(Some(total as u64), indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}") {
            b.set_style(style.progress_chars("=> "));
        }
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut measurements = Vec::new();
    let mut errors = Vec::new();
    for alg in &chosen {
        let sizes = sizes_for(config, alg);
        let mut timed_at: Vec<(usize, Vec<usize>)> = Vec::new();
        for &size in &sizes {
            bar.set_message(format!("{} {}", alg.id(), report::fmt_size(size)));
            let input = harness::input_bytes(size);
            let (ok, errs) = harness::check_agreement(alg, size, &input);
            errors.extend(errs);
            if !ok.is_empty() {
                let (ms, errs) = harness::measure(alg, size, &input, &ok, &config.timing);
                measurements.extend(ms);
                errors.extend(errs);
                timed_at.push((size, ok));
            }
            bar.inc(1);
        }
        if alg.scaling {
            let ssize = scaling_size(&sizes);
            for &t in config.threads.iter().filter(|&&t| t > 1) {
                if let Some(size) = ssize
                    && let Some((_, ok)) = timed_at.iter().find(|(s, _)| *s == size)
                {
                    bar.set_message(format!("{} {} x{t} threads", alg.id(), report::fmt_size(size)));
                    let input = harness::input_bytes(size);
                    let (ms, errs) = harness::measure_parallel(alg, size, &input, ok, t, &config.timing);
                    measurements.extend(ms);
                    errors.extend(errs);
                }
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    let regressions = match &config.compare {
        Some(path) => report::compare(&measurements, path)?,
        None => Vec::new(),
    };
    Ok(RunOutput {
        env,
        profile: config.profile.clone(),
        measurements,
        errors,
        regressions,
        order: chosen.iter().map(|a| a.id()).collect(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_patterns() {
        assert!(super::matches("chacha", "ChaCha20-Poly1305/seal"));
        assert!(super::matches("*poly1305/seal", "ChaCha20-Poly1305/seal"));
        assert!(super::matches("sha*256*", "SHA-256/digest"));
        assert!(!super::matches("sha*512", "SHA-256/digest"));
        assert!(super::matches("sha-2*", "SHA-256/digest"));
        assert!(super::matches("ml-kem*/encaps", "ML-KEM-768/encaps"));
        assert!(!super::matches("aes", "SHA-256/digest"));
    }
}
