//! The rule for tests that need a program from outside the Rust toolchain (the `openssl` command, ...): under CI
//! (the `CI` environment variable is set, as it is when `.ci/run` runs in CI) a missing program fails the test;
//! elsewhere the test says loudly that it skipped that check, and passes. `.ci/run` installs every such program.
//!
//! Every test binary that starts a program includes this file; the aarch64 runner under qemu-user
//! (`.ci/qemu-aarch64.sh`) recognises those binaries by the test below and runs them with one test thread.

use std::process::Command;

/// Whether `program` runs (`program probe` exits with success). If it does not: panics under CI, naming the
/// package to install; otherwise prints a warning that the checks needing it are skipped.
pub fn available(program: &str, probe: &str, install: &str) -> bool {
    let ok = Command::new(program).arg(probe).output().map(|o| o.status.success()).unwrap_or(false);
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "CI: the `{program}` command is missing ({install})");
        eprintln!("WARNING: the `{program}` command is not installed ({install}): the checks that need it are SKIPPED");
    }
    ok
}

#[test]
fn a_missing_tool_fails_under_ci_and_is_reported_elsewhere() {
    let r = std::panic::catch_unwind(|| available("pqkit-test-no-such-program", "--version", "nothing to install"));
    if std::env::var_os("CI").is_some() {
        assert!(r.is_err(), "under CI a missing program must fail the test");
    } else {
        assert_eq!(r.ok(), Some(false));
    }
}
