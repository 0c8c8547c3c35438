//! The binary's command line: `--list`, a real (small) run writing the default outputs, and `--compare` with
//! `--fail-on-regression` exiting non-zero on a regression but zero without it.
use serde_json::Value;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pqkit-bench"))
}

#[test]
fn list_run_compare_and_fail_on_regression() {
    let list = bin().arg("--list").output().unwrap();
    assert!(list.status.success());
    let text = String::from_utf8_lossy(&list.stdout);
    for id in ["HKDF-SHA256/derive-32", "Argon2id/hash-m4MiB-t3-p1", "SHA3-512/digest", "HMAC-SHA3-256/mac"] {
        assert!(text.contains(id), "--list lacks {id}");
    }

    let dir = std::env::temp_dir().join(format!("pqkit-bench-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let small = ["--only", "SHA-224/digest", "--sizes", "64", "--threads", "none", "--samples", "5", "--no-progress"];
    let run = bin().args(small).arg("--out").arg(&dir).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report = dir.join("report.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(!v["records"].as_array().unwrap().is_empty());

    // A baseline whose every interval lies at half the new run's: everything regressed.
    let mut fast = v.clone();
    for r in fast["records"].as_array_mut().unwrap() {
        let half = r["ci_low_ns"].as_f64().unwrap() / 4.0;
        for f in ["median_ns", "ci_low_ns", "ci_high_ns"] {
            r[f] = half.into();
        }
    }
    let base = dir.join("fast.json");
    std::fs::write(&base, serde_json::to_string(&fast).unwrap()).unwrap();
    let out2 = dir.join("second");
    let fail =
        bin().args(small).arg("--out").arg(&out2).arg("--compare").arg(&base).arg("--fail-on-regression").output();
    let fail = fail.unwrap();
    assert_eq!(fail.status.code(), Some(1), "{}", String::from_utf8_lossy(&fail.stderr));
    assert!(String::from_utf8_lossy(&fail.stderr).contains("regression:"));
    let md = std::fs::read_to_string(out2.join("REPORT.md")).unwrap();
    assert!(md.contains("## Regressions against the baseline") && md.contains("⚠ regressed"));
    // Without --fail-on-regression the same comparison still succeeds.
    let warn = bin().args(small).arg("--out").arg(&out2).arg("--compare").arg(&base).output().unwrap();
    assert!(warn.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}
