//! `pqkit-ct check-log LOG ALLOWLIST ROOT`: reads a memcheck log and fails unless every reported error's
//! innermost frame is a source line listed in ALLOWLIST as a public decision (a declassification point).
//!
//! Valgrind 3.19 cannot name many inlined Rust frames ("UnknownInlinedFun"), so suppression files keyed by
//! function names are either too broad or do not match; a source line is exact. An allowlist entry is
//! `PATH<TAB>SNIPPET<TAB>WHY`: the flagged file must end with PATH and its flagged line must contain SNIPPET
//! (so an entry survives edits that move the line, and stops matching if the line changes).

use std::fs;

struct Entry {
    path: String,
    snippet: String,
}

/// Returns the number of errors not covered by the allowlist, after printing each.
pub fn check(log: &str, allow: &str, root: &str) -> usize {
    let log = fs::read_to_string(log).unwrap_or_else(|e| panic!("read {log}: {e}"));
    let allow = fs::read_to_string(allow).unwrap_or_else(|e| panic!("read {allow}: {e}"));
    let entries: Vec<Entry> = allow
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split('\t');
            let path = f.next().unwrap_or_default().to_string();
            let snippet = f.next().unwrap_or_else(|| panic!("allowlist line without a snippet: {l}")).to_string();
            Entry { path, snippet }
        })
        .collect();
    let mut bad = 0;
    let mut allowed = 0;
    let mut last_header = String::new();
    for line in log.lines() {
        // Strip the "==PID== " prefix.
        let body = match line.strip_prefix("==").and_then(|r| r.split_once("== ")) {
            Some((_, b)) => b,
            None => continue,
        };
        if !body.starts_with(' ') && !body.is_empty() {
            last_header = body.to_string();
            continue;
        }
        let Some(frame) = body.trim_start().strip_prefix("at ") else { continue };
        let located = frame.rsplit_once(" (").and_then(|(_, loc)| {
            let loc = loc.strip_suffix(')')?;
            let (file, n) = loc.rsplit_once(':')?;
            Some((file.to_string(), n.parse::<usize>().ok()?))
        });
        let ok = located.as_ref().is_some_and(|(file, n)| {
            entries.iter().any(|e| {
                file.ends_with(&e.path)
                    && fs::read_to_string(format!("{root}/{}", e.path))
                        .ok()
                        .and_then(|src| src.lines().nth(n - 1).map(|l| l.contains(&e.snippet)))
                        .unwrap_or(false)
            })
        });
        if ok {
            allowed += 1;
        } else {
            bad += 1;
            eprintln!("NOT DECLASSIFIED: {last_header}\n    at {frame}");
        }
    }
    println!("check-log: {allowed} reports at declared public decisions, {bad} other");
    bad
}
