//! The bus section runs with every candidate agreeing (same message count and checksum: pqkit lost, duplicated
//! or corrupted nothing) and every row measured.
use pqkit_bench::{Config, harness::Timing};

#[test]
fn bus_section_agrees_and_measures_every_row() {
    let mut config = Config::quick();
    config.timing = Timing::tiny();
    config.only = vec!["pqkit-bus/*".into()];
    config.threads = vec![];
    config.progress = false;
    let algs: Vec<_> = pqkit_bench::algs::bus::algorithms();
    let rows = algs.len();
    let candidates: usize = algs.iter().map(|a| a.candidates.len()).sum();
    let out = pqkit_bench::run(&config, &algs).expect("run");
    assert!(out.errors.is_empty(), "errors: {:?}", out.errors);
    assert_eq!(out.measurements.len(), candidates, "every candidate of the {rows} rows is timed");
    for op in ["send_10k-plain", "send_10k-sealed", "subscribe-sealed", "priority_heap", "handshake"] {
        assert!(out.measurements.iter().any(|m| m.operation == op && m.implementation == "pqkit"), "{op}");
    }
}
