//! The NATS section of pqkit-bench (crates/pqkit-bench/src/algs/bus_nats.rs, the same source), runnable without
//! building the whole benchmark harness and its peers:
//! `cargo run --release -p pqkit-bus --features nats --example nats_bench -- [URL|auto] [--full] [--rows NAME]`.
//! `pqkit-bench --nats URL|auto` runs the same rows and writes NATS.md.
#[path = "../../pqkit-bench/src/algs/bus_nats.rs"]
#[allow(dead_code)] // pqkit-bench uses the whole module; this example only its entry points
mod bus_nats;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--rows NAME`: only the rows whose name starts with NAME (for profiling one row).
    let rows_at = args.iter().position(|a| a == "--rows");
    let filter = rows_at.and_then(|i| args.get(i + 1)).cloned();
    let url = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && rows_at.is_none_or(|r| *i != r + 1))
        .map(|(_, a)| a.clone())
        .unwrap_or_else(|| "auto".into());
    let quick = !args.iter().any(|a| a == "--full");
    let local = if url == "auto" { Some(bus_nats::start_local().unwrap_or_else(|e| panic!("{e}"))) } else { None };
    let url = local.as_ref().map_or(url, |s| s.url.clone());
    let rows = bus_nats::run_filtered(&url, quick, filter.as_deref()).unwrap_or_else(|e| panic!("{e}"));
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default();
    let header = format!(
        "{cpu}, {} logical cores, pqkit features {}; {}; server {url}; the nats_bench example (release profile).",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        pqkit::cpu::features(),
        if quick { "quick" } else { "full" }
    );
    println!("{}", bus_nats::markdown(&rows, &header));
}
