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

/// `--publish DIR` writes the run into DIR/<tier>, replacing what was there, and writes DIR/README.md; `--index`
/// then regenerates the same index from the committed JSON alone.
#[test]
fn publish_replaces_the_tier_folder_and_writes_the_index() {
    let root = std::env::temp_dir().join(format!("pqkit-bench-publish-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let small = ["--only", "SHA-256/digest", "--sizes", "64", "--threads", "none", "--samples", "5", "--no-progress"];
    // The tier pqkit-bench names the folder after: avx512 or avx2 on x86-64 with those features, else portable.
    let run = bin().args(small).args(["--isa", "portable", "--publish"]).arg(&root).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let tier = root.join("portable");
    std::fs::write(tier.join("stale.svg"), "<svg/>").unwrap();
    let again = bin().args(small).args(["--isa", "portable", "--publish"]).arg(&root).output().unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(!tier.join("stale.svg").exists(), "the tier folder is replaced, not added to");
    for f in ["REPORT.md", "report.json", "heatmap.svg", "throughput-sha-256-digest.svg"] {
        assert!(tier.join(f).is_file(), "{f} missing");
    }
    let report = std::fs::read_to_string(tier.join("REPORT.md")).unwrap();
    assert!(report.contains("## Summary") && report.contains("| hashes |"), "{report}");
    let index = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(index.contains("[portable/REPORT.md](portable/REPORT.md)"), "{index}");
    assert!(index.contains("| SHA-256 | digest |"), "{index}");

    std::fs::remove_file(root.join("README.md")).unwrap();
    let idx = bin().arg("--index").arg(&root).output().unwrap();
    assert!(idx.status.success(), "{}", String::from_utf8_lossy(&idx.stderr));
    assert_eq!(std::fs::read_to_string(root.join("README.md")).unwrap(), index);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn help_states_the_quick_run_time_and_names_no_issue() {
    let help = bin().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("about 3 minutes per tier"), "{text}");
    assert!(!text.to_lowercase().contains("issue"), "{text}");
    assert!(text.contains("--publish") && text.contains("--index"), "{text}");
}
