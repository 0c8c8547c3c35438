//! Runs the harness on a tiny configuration into a temporary directory and validates report.json against
//! the schema (every field present, with the right type), plus the other outputs.
use pqkit_bench::{Config, harness::Timing};
use serde_json::Value;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("pqkit-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn tiny_run_writes_a_valid_report() {
    let dir = temp_dir("smoke");
    let mut config = Config::quick();
    config.timing = Timing::tiny();
    config.only = vec![
        "ChaCha20-Poly1305/seal".into(),
        "SHA-256/digest".into(),
        "ML-KEM-768/encaps".into(),
        "HKDF-SHA256/derive-32".into(),
    ];
    config.sizes = Some(vec![1024]);
    config.threads = vec![1, 2];
    config.out_dir = dir.clone();
    config.progress = false;
    let algs = pqkit_bench::algs::all();
    let out = pqkit_bench::run(&config, &algs).expect("run");
    assert!(out.errors.is_empty(), "agreement errors: {:?}", out.errors);
    pqkit_bench::report::write_all(&out, &dir).expect("write");

    let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert!(v["environment"]["cpu_model"].is_string());
    assert!(v["environment"]["rustc"].as_str().unwrap().starts_with("rustc"));
    assert!(v["environment"]["openssl"].as_str().unwrap().contains("OpenSSL"));
    assert!(v["errors"].as_array().unwrap().is_empty());
    let recs = v["records"].as_array().unwrap();
    let strings = ["algorithm", "operation", "implementation", "implementation_version"];
    let integers = ["size_bytes", "samples", "threads"];
    let numbers = ["median_ns", "ci_low_ns", "ci_high_ns", "ops_per_sec"];
    let nullable = ["bytes_per_sec", "tsc_per_byte", "allocs_per_op", "alloc_bytes_per_op"];
    for r in recs {
        let o = r.as_object().unwrap();
        assert_eq!(o.len(), 16, "exactly the 16 schema fields: {:?}", o.keys().collect::<Vec<_>>());
        for f in strings {
            assert!(o[f].is_string(), "{f} in {r}");
        }
        for f in integers {
            assert!(o[f].is_u64(), "{f} in {r}");
        }
        for f in numbers {
            assert!(o[f].as_f64().is_some_and(|x| x > 0.0), "{f} in {r}");
        }
        for f in nullable {
            assert!(o[f].is_null() || o[f].is_number(), "{f} in {r}");
        }
        let out = o["outliers"].as_object().unwrap();
        for f in ["low_severe", "low_mild", "high_mild", "high_severe", "total"] {
            assert!(out[f].is_u64(), "outliers.{f} in {r}");
        }
        assert!(o["ci_low_ns"].as_f64() <= o["median_ns"].as_f64());
        assert!(o["median_ns"].as_f64() <= o["ci_high_ns"].as_f64());
    }
    // Bulk records carry bytes/s and TSC/B at 1 KiB; single-threaded ones allocation counts.
    let seal: Vec<&Value> =
        recs.iter().filter(|r| r["algorithm"] == "ChaCha20-Poly1305" && r["threads"] == 1).collect();
    assert!(seal.len() >= 4, "openssl, aws-lc-rs, ring and rustcrypto: {}", seal.len());
    for r in &seal {
        assert_eq!(r["size_bytes"], 1024);
        assert!(r["bytes_per_sec"].as_f64().unwrap() > 0.0);
        assert!(r["tsc_per_byte"].as_f64().is_some());
        // In-place sealing allocates nothing on the Rust side.
        if r["implementation"] == "rustcrypto" || r["implementation"] == "ring" {
            assert_eq!(r["allocs_per_op"].as_f64(), Some(0.0), "{r}");
        }
    }
    // Scaling at 2 threads for the AEAD and the hash.
    assert!(recs.iter().any(|r| r["algorithm"] == "SHA-256" && r["threads"] == 2));
    // Public-key records: no bytes/s.
    // Fixed-size (KDF) records: ops/s, but no bytes/s or TSC/B from the 32-byte input.
    let kdf: Vec<&Value> = recs.iter().filter(|r| r["algorithm"] == "HKDF-SHA256").collect();
    assert!(kdf.len() >= 5, "pqkit, openssl, aws-lc-rs, ring, rustcrypto: {}", kdf.len());
    assert!(kdf.iter().all(|r| r["bytes_per_sec"].is_null() && r["tsc_per_byte"].is_null()));
    assert!(kdf.iter().all(|r| r["size_bytes"] == 32));
    let kem: Vec<&Value> = recs.iter().filter(|r| r["algorithm"] == "ML-KEM-768").collect();
    assert!(kem.len() >= 3);
    assert!(kem.iter().all(|r| r["bytes_per_sec"].is_null()));

    let md = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    for needle in [
        "## Environment",
        "## Method",
        "64-byte aligned",
        "HKDF-SHA256",
        "## Summary",
        "## (a)",
        "## (b)",
        "## (c)",
        "## (d)",
        "ML-KEM-768",
        "Multi-core scaling",
    ] {
        assert!(md.contains(needle), "REPORT.md lacks {needle}");
    }
    let svg = std::fs::read_to_string(dir.join("heatmap.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(dir.join("throughput-sha-256-digest.svg").is_file());

    // --compare against itself finds no regression; against a baseline twice as fast it finds them all.
    assert!(pqkit_bench::report::compare(&out.measurements, &dir.join("report.json")).unwrap().is_empty());
    let mut fast = v.clone();
    for r in fast["records"].as_array_mut().unwrap() {
        // A baseline whose whole interval lies at half the new interval's low end.
        let half = r["ci_low_ns"].as_f64().unwrap() / 2.0;
        for f in ["median_ns", "ci_low_ns", "ci_high_ns"] {
            r[f] = half.into();
        }
    }
    let base = dir.join("fast.json");
    std::fs::write(&base, serde_json::to_string(&fast).unwrap()).unwrap();
    let regs = pqkit_bench::report::compare(&out.measurements, &base).unwrap();
    assert_eq!(regs.len(), out.measurements.len());
    let _ = std::fs::remove_dir_all(&dir);
}
