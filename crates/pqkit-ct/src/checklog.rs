//! `pqkit-ct check-log LOG`: reads a memcheck log and fails if memcheck reported anything, printing each
//! report with its innermost frame (file and line).
//!
//! There is no allowlist: public decisions on secret-derived values are declassified in the library itself, at
//! the decision, by `pqkit::ct::declassify` (built here with `--cfg pqkit_ct_check`, where it marks the value
//! defined for memcheck). So a report is always a branch or memory index on secret data that nobody declared
//! public, wherever the optimiser inlined it.

use std::fs;

/// Returns the number of memcheck reports in the log, after printing each.
pub fn check(log: &str) -> usize {
    let log = fs::read_to_string(log).unwrap_or_else(|e| panic!("read {log}: {e}"));
    let mut bad = 0;
    let mut header: Option<String> = None;
    for line in log.lines() {
        // Strip the "==PID== " prefix.
        let body = match line.strip_prefix("==").and_then(|r| r.split_once("== ")) {
            Some((_, b)) => b,
            None => continue,
        };
        if !body.starts_with(' ') && !body.is_empty() {
            header = Some(body.to_string());
            continue;
        }
        let Some(frame) = body.trim_start().strip_prefix("at ") else { continue };
        // The first frame after a header is the innermost one: one report.
        if let Some(h) = header.take() {
            bad += 1;
            eprintln!("NOT DECLASSIFIED: {h}\n    at {frame}");
        }
    }
    println!("check-log: {bad} memcheck reports");
    bad
}
