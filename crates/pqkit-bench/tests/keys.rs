//! Key-generation rows timed over a fixed key count (`Algorithm::keys`, used by RSA): exactly the quick or full
//! count of samples per implementation whatever the time budget, and the spread in REPORT.md and report.json.
use pqkit_bench::registry::{Algorithm, Candidate, Check, Op};
use pqkit_bench::{Config, harness::Timing};
use std::time::Duration;

fn slow_op(micros: u64) -> Box<dyn Op> {
    let mut i = 0u64;
    Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
        // Varies per call, like a prime search: 1x, 2x, 3x the base time.
        i += 1;
        std::thread::sleep(Duration::from_micros(micros * (1 + i % 3)));
        let t = std::time::Instant::now();
        while t.elapsed() < Duration::from_micros(50 * (1 + i % 3)) {}
        out.clear();
        Ok(())
    })
}

fn alg() -> Algorithm {
    Algorithm::public_key("ToyKeys", "keygen", 0, Check::Custom(Box::new(|| Ok(()))))
        .keys(9, 4)
        .with(Candidate::new("a", "1".into(), |_| Ok(slow_op(10))))
        .with(Candidate::new("b", "1".into(), |_| Ok(slow_op(20))))
}

fn config(quick: bool) -> Config {
    let mut c = Config::quick();
    c.timing = Timing::tiny();
    c.timing.quick_keys = quick;
    // A budget far too small for the key count: the count must win.
    c.timing.budget = Duration::from_micros(1);
    c.threads = vec![];
    c.progress = false;
    c
}

#[test]
fn fixed_key_count_ignores_the_budget_and_reports_the_spread() {
    for (quick, n) in [(true, 4usize), (false, 9)] {
        let out = pqkit_bench::run(&config(quick), &[alg()]).unwrap();
        assert!(out.errors.is_empty(), "{:?}", out.errors);
        assert_eq!(out.measurements.len(), 2);
        for m in &out.measurements {
            assert_eq!(m.ns.n, n, "{} took {} samples, not {n}", m.implementation, m.ns.n);
            assert!(m.ns.min <= m.ns.p10 && m.ns.p10 <= m.ns.median && m.ns.median <= m.ns.p90);
            assert!(m.ns.p90 <= m.ns.max && m.ns.min < m.ns.max, "the per-call times vary: {:?}", m.ns);
        }
        let md = pqkit_bench::report::markdown(&out);
        assert!(md.contains("Key generation time varies from key to key"), "{md}");
        assert!(md.contains(&format!("| a | {n} |")), "{md}");
        assert_eq!(md.contains("`--quick` takes 4 keys here instead of the 9 of `--full`"), quick, "{md}");
        let json: serde_json::Value = serde_json::from_str(&pqkit_bench::report::json(&out)).unwrap();
        for r in json["records"].as_array().unwrap() {
            let s = &r["key_spread"];
            assert_eq!(s["keys"], n as u64);
            assert!(s["min_ns"].as_f64().unwrap() <= s["max_ns"].as_f64().unwrap());
        }
    }
}

#[test]
fn other_rows_have_no_key_spread() {
    let alg = Algorithm::public_key("Toy", "sign", 0, Check::Custom(Box::new(|| Ok(())))).with(Candidate::new(
        "a",
        "1".into(),
        |_| Ok(slow_op(1)),
    ));
    let mut c = config(true);
    c.timing.budget = Duration::from_millis(5);
    let out = pqkit_bench::run(&c, &[alg]).unwrap();
    let json: serde_json::Value = serde_json::from_str(&pqkit_bench::report::json(&out)).unwrap();
    for r in json["records"].as_array().unwrap() {
        assert!(r.get("key_spread").is_none(), "{r}");
    }
    assert!(!pqkit_bench::report::markdown(&out).contains("Key generation time varies"));
}
