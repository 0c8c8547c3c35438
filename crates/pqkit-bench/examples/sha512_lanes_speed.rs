//! Rough self-check of the multi-message SHA-512 that the batched Ed25519 operations use (not a benchmark; see
//! pqkit-bench): nanoseconds per message for 64 messages of each size, one at a time through `Sha512::digest`
//! and through each lane backend this CPU runs.
//! `cargo run --release -p pqkit-bench --example sha512_lanes_speed [SIZE...]` (default 32 and 1024 bytes)
use pqkit::hash::sha2::Sha512;
use pqkit::hash::sha2::multi::{Backend, sha512_many_with_backend};
use std::hint::black_box;

/// Nanoseconds this thread has run on a CPU (the machine is shared, so wall time would mislead).
fn cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    s.split_whitespace().next().unwrap().parse().unwrap()
}

/// The best of five runs of `f` over `iters` iterations, in nanoseconds per message (`f` hashes 64).
fn per_message(iters: usize, mut f: impl FnMut()) -> f64 {
    let mut best = u64::MAX;
    for _ in 0..5 {
        let t = cpu_ns();
        for _ in 0..iters {
            f();
        }
        best = best.min(cpu_ns() - t);
    }
    best as f64 / (iters * 64) as f64
}

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("a size in bytes")).collect();
    let sizes = if sizes.is_empty() { vec![32, 1024] } else { sizes };
    for size in sizes {
        let data: Vec<Vec<u8>> = (0..64u8).map(|i| vec![i; size]).collect();
        let parts: Vec<[&[u8]; 1]> = data.iter().map(|d| [d.as_slice()]).collect();
        let msgs: Vec<&[&[u8]]> = parts.iter().map(|p| p.as_slice()).collect();
        let iters = (64 << 20) / (64 * (size + 128));
        let one = per_message(iters, || {
            for d in &data {
                black_box(Sha512::digest(black_box(d)));
            }
        });
        print!("{size:>6} B: one at a time {one:8.1} ns/msg");
        let mut out = vec![[0u8; 64]; 64];
        for b in Backend::available() {
            let t = per_message(iters, || sha512_many_with_backend(b, black_box(&msgs), &mut out));
            print!(" | {b:?} {t:8.1} ns/msg ({:.2}x)", one / t);
        }
        println!();
    }
}
