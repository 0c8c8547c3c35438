//! Quick Poly1305 throughput self-check per backend, next to RustCrypto's `poly1305` (a dev-dependency).
//! Not a benchmark (pqkit-bench does the real comparisons).
//!
//! `cargo run --release -p pqkit-bench --example poly1305_speed`
//!
//! The machine is shared, so each figure is the fastest of many short runs (about 2 MiB each): the least
//! disturbed run is the best estimate of the undisturbed speed. Each message uses a fresh state (new key),
//! so per-message setup (and the SIMD backends' powers of `r`) is included.
use pqkit::poly1305::{Backend, Poly1305};
use std::hint::black_box;
use std::time::Instant;

const RUNS: usize = 200;
const SIZES: [usize; 8] = [64, 256, 512, 1024, 2048, 4096, 16 * 1024, 1 << 20];

fn best_of(len: usize, mut f: impl FnMut()) -> (f64, f64) {
    let iters = ((2usize << 20) / len).clamp(2, 20_000);
    let mut best = f64::MAX;
    for _ in 0..RUNS {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    ((len * iters) as f64 / best / 1e9, best * 1e9 / iters as f64)
}

fn main() {
    use poly1305::universal_hash::KeyInit;
    let key = [0x5au8; 32];
    let msg = vec![0xa5u8; 1 << 20];
    println!("{:<11}{:>9}{:>11}{:>13}", "impl", "bytes", "GB/s", "ns/message");
    for len in SIZES {
        let (gbps, ns) = best_of(len, || {
            let mac = poly1305::Poly1305::new_from_slice(black_box(&key)).unwrap();
            black_box(mac.compute_unpadded(black_box(&msg[..len])));
        });
        println!("{:<11}{len:>9}{gbps:>11.2}{ns:>13.1}", "RustCrypto");
    }
    for b in Backend::available() {
        for len in SIZES {
            let (gbps, ns) = best_of(len, || {
                let mut mac = Poly1305::new_with_backend(black_box(&key), b);
                mac.update(black_box(&msg[..len]));
                black_box(mac.finalize());
            });
            println!("{:<11}{len:>9}{gbps:>11.2}{ns:>13.1}", format!("{b:?}"));
        }
    }
}
