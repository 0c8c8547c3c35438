//! Quick Poly1305 throughput self-check per backend (not a benchmark; see pqkit-bench for real comparisons).
//!
//! `cargo run --release -p pqkit --example poly1305_speed`
//!
//! The machine is shared, so besides wall time this reads the thread's on-CPU time from
//! `/proc/thread-self/schedstat` (Linux) and reports bytes per on-CPU second too.
use pqkit::poly1305::{Backend, Poly1305};
use std::hint::black_box;
use std::time::Instant;

fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let key = [0x5au8; 32];
    let msg = vec![0xa5u8; 1 << 20];
    for b in Backend::available() {
        for len in [0usize, 16, 64, 256, 512, 1024, 2048, 4096, 16 * 1024, 1 << 20] {
            let iters = ((64usize << 20) / len.max(1)).clamp(8, 1_000_000);
            let (mut best_wall, mut best_cpu) = (f64::MAX, f64::MAX);
            for _ in 0..7 {
                let c = cpu_ns();
                let t = Instant::now();
                for _ in 0..iters {
                    let mut mac = Poly1305::new_with_backend(black_box(&key), b);
                    mac.update(black_box(&msg[..len]));
                    black_box(mac.finalize());
                }
                best_wall = best_wall.min(t.elapsed().as_secs_f64());
                best_cpu = best_cpu.min((cpu_ns() - c) as f64 / 1e9);
            }
            let bytes = (len * iters) as f64;
            println!(
                "{b:?}\t{len:>8} B\t{:>7.2} GB/s wall\t{:>7.2} GB/s on-CPU\t{:>9.1} ns/msg on-CPU",
                bytes / best_wall / 1e9,
                bytes / best_cpu / 1e9,
                best_cpu * 1e9 / iters as f64
            );
        }
    }
}
