//! Rough ChaCha20 keystream throughput per backend (a quick self-check; the real comparison lives in
//! pqkit-bench). Run with `cargo run --release -p pqkit-bench --example chacha_speed [SIZE...]`.
//!
//! On Linux the rate is per CPU second (from /proc/self/schedstat, like `openssl speed` without `-elapsed`), so
//! it stays meaningful on a loaded machine; elsewhere it falls back to wall-clock time.
use pqkit::chacha::{Backend, ChaCha20};
use pqkit::cipher::StreamCipher;
use pqkit::dispatch::Checked;
use std::time::Instant;

/// Seconds of CPU time this process has used (Linux), else wall-clock seconds since an arbitrary start.
fn cpu_seconds(start: Instant) -> f64 {
    if let Ok(s) = std::fs::read_to_string("/proc/self/schedstat")
        && let Some(ns) = s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok())
    {
        return ns as f64 / 1e9;
    }
    start.elapsed().as_secs_f64()
}

fn main() {
    let origin = Instant::now();
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if args.is_empty() { vec![64, 256, 1024, 16 * 1024, 1 << 20] } else { args };
    let backends: Vec<Checked<Backend>> = Backend::available().collect();
    println!("backends: {backends:?} (detected {:?})", Backend::detect());
    for &size in &sizes {
        for &b in &backends {
            let mut buf = vec![0u8; size];
            let mut best = f64::MAX;
            // Roughly 32 MiB per sample, best of 7 samples.
            let iters = ((32usize << 20) / size).max(1);
            let mut c = ChaCha20::new(&[7u8; 32], &[1u8; 12]).unwrap().with_backend(b);
            for _ in 0..7 {
                let t = cpu_seconds(origin);
                for _ in 0..iters {
                    c.seek(0).unwrap();
                    c.apply_keystream(std::hint::black_box(&mut buf)).unwrap();
                }
                best = best.min(cpu_seconds(origin) - t);
            }
            let gbs = (size * iters) as f64 / best / 1e9;
            println!("{size:>8} B  {b:?}: {gbs:6.2} GB/s");
        }
    }
}
