//! Rough throughput self-check for the hash family (not a benchmark; see pqkit-bench).
//! `cargo run --release -p pqkit-bench --example hash_speed`
use pqkit::hash::Hasher;

/// Nanoseconds this thread has run on a CPU (the machine is shared, so wall time would mislead).
fn cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    s.split_whitespace().next().unwrap().parse().unwrap()
}

struct Instant(u64);
impl Instant {
    fn now() -> Self {
        Instant(cpu_ns())
    }
    fn elapsed(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(cpu_ns() - self.0)
    }
}

fn rate<H: Hasher>(size: usize) -> f64 {
    let data = vec![0x5au8; size];
    let iters = (256 << 20) / size;
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        for _ in 0..iters {
            std::hint::black_box(H::digest(std::hint::black_box(&data)));
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    (iters * size) as f64 / best / 1e6
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("hmac") {
        hmac64();
        return;
    }
    if std::env::args().nth(1).as_deref() == Some("peers") {
        peers();
        return;
    }
    if std::env::args().nth(1).as_deref() == Some("perm") {
        perm_cycles();
        return;
    }
    if std::env::args().nth(1).as_deref() == Some("backends") {
        bench_backend();
        return;
    }
    use pqkit::hash::{sha2::*, sha3::*};
    for size in [16384usize, 1 << 20] {
        println!("--- {size} bytes (MB/s)");
        println!("SHA-256   {:8.1}", rate::<Sha256>(size));
        println!("SHA-512   {:8.1}", rate::<Sha512>(size));
        println!("SHA3-256  {:8.1}", rate::<Sha3_256>(size));
        println!("BLAKE2b   {:8.1}", rate::<pqkit::hash::blake2::Blake2b512>(size));
        println!("BLAKE2s   {:8.1}", rate::<pqkit::hash::blake2::Blake2s256>(size));
        let data = vec![0x5au8; size];
        let iters = (256 << 20) / size;
        let t = Instant::now();
        for _ in 0..iters {
            let mut out = [0u8; 32];
            Shake128::new().update(&data).finalize_xof().read(&mut out);
            std::hint::black_box(out);
        }
        println!("SHAKE128  {:8.1}", (iters * size) as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
}
fn bench_backend() {
    use pqkit::hash::sha3::{Backend, Sha3_256};
    let data = vec![0x5au8; 16384];
    for b in Backend::available() {
        let t = Instant::now();
        for _ in 0..4000 {
            let mut h = Sha3_256::with_backend(b);
            h.update(&data);
            std::hint::black_box(h.finalize());
        }
        println!("SHA3-256 {b:?} {:8.1}", (4000 * 16384) as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
    use pqkit::hash::blake2::{Backend as BB, Blake2b512, Blake2s256};
    for b in BB::available() {
        for _ in 0..2 {
            let t = Instant::now();
            for _ in 0..4000 {
                let mut h = Blake2b512::with_backend(b);
                h.update(&data);
                std::hint::black_box(h.finalize());
            }
            println!("BLAKE2b {b:?} {:8.1}", (4000 * 16384) as f64 / t.elapsed().as_secs_f64() / 1e6);
            let t = Instant::now();
            for _ in 0..4000 {
                let mut h = Blake2s256::with_backend(b);
                h.update(&data);
                std::hint::black_box(h.finalize());
            }
            println!("BLAKE2s {b:?} {:8.1}", (4000 * 16384) as f64 / t.elapsed().as_secs_f64() / 1e6);
        }
    }
    use pqkit::hash::sha2::{Backend as B2, Sha256, Sha512};
    for b in B2::available() {
        let t = Instant::now();
        for _ in 0..4000 {
            let mut h = Sha512::with_backend(b);
            h.update(&data);
            std::hint::black_box(h.finalize());
        }
        println!("SHA-512 {b:?} {:8.1}", (4000 * 16384) as f64 / t.elapsed().as_secs_f64() / 1e6);
        let t = Instant::now();
        for _ in 0..4000 {
            let mut h = Sha256::with_backend(b);
            h.update(&data);
            std::hint::black_box(h.finalize());
        }
        println!("SHA-256 {b:?} {:8.1}", (4000 * 16384) as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
}

#[allow(dead_code)]
fn perm_cycles() {
    use pqkit::hash::sha3::{Backend, Shake128};
    // Time whole SHAKE128 squeezes (one permutation per 168 bytes) per backend, in TSC ticks.
    for b in Backend::available() {
        let _ = Shake128::new();
        let mut st = [1u64; 25];
        let mut best = u64::MAX;
        for _ in 0..20 {
            // SAFETY: rdtsc has no preconditions on x86_64.
            // SAFETY: rdtsc has no preconditions on x86_64.
            let t0 = unsafe { core::arch::x86_64::_rdtsc() };
            for _ in 0..1000 {
                pqkit::hash::sha3::f1600_with(b, &mut st);
            }
            // SAFETY: as above.
            let t1 = unsafe { core::arch::x86_64::_rdtsc() };
            best = best.min(t1 - t0);
        }
        println!("{b:?}: {} TSC ticks per permutation", best / 1000);
        let mut s4 = [[1u64; 4]; 25];
        let mut s8 = [[1u64; 8]; 25];
        // SAFETY: rdtsc has no preconditions on x86_64.
        let t0 = unsafe { core::arch::x86_64::_rdtsc() };
        for _ in 0..1000 {
            pqkit::hash::sha3::f1600_x4_with(b, &mut s4);
        }
        // SAFETY: as above.
        let t1 = unsafe { core::arch::x86_64::_rdtsc() };
        for _ in 0..1000 {
            pqkit::hash::sha3::f1600_x8_with(b, &mut s8);
        }
        // SAFETY: as above.
        let t2 = unsafe { core::arch::x86_64::_rdtsc() };
        println!("   x4: {} ticks per 4 states, x8: {} per 8", (t1 - t0) / 1000, (t2 - t1) / 1000);
    }
}

#[allow(dead_code)]
fn peers() {
    use sha2::Digest;
    let data = vec![0x5au8; 16384];
    for _ in 0..2 {
        let t = Instant::now();
        for _ in 0..4000 {
            std::hint::black_box(sha2::Sha512::digest(std::hint::black_box(&data)));
        }
        println!("RustCrypto SHA-512 {:8.1}", (4000 * 16384) as f64 / t.elapsed().as_secs_f64() / 1e6);
        let t = Instant::now();
        for _ in 0..4000 {
            std::hint::black_box(pqkit::hash::sha2::Sha512::digest(std::hint::black_box(&data)));
        }
        println!("pqkit SHA-512      {:8.1}", (4000 * 16384) as f64 / t.elapsed().as_secs_f64() / 1e6);
        let t = Instant::now();
        for _ in 0..4000 {
            std::hint::black_box(sha3::Sha3_256::digest(std::hint::black_box(&data)));
        }
        println!("RustCrypto SHA3-256 {:8.1}", (4000 * 16384) as f64 / t.elapsed().as_secs_f64() / 1e6);
        let t = Instant::now();
        for _ in 0..4000 {
            std::hint::black_box(pqkit::hash::sha3::Sha3_256::digest(std::hint::black_box(&data)));
        }
        println!("pqkit SHA3-256      {:8.1}", (4000 * 16384) as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
}

#[allow(dead_code)]
fn hmac64() {
    let key = pqkit::mac::Hmac::<pqkit::hash::sha2::Sha256>::new(&[7u8; 32]);
    let msg = [0x5au8; 64];
    for _ in 0..3 {
        let n = 2_000_000;
        let t = Instant::now();
        for _ in 0..n {
            std::hint::black_box(key.mac(std::hint::black_box(&msg)));
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "HMAC-SHA256 64 B prepared key: {:.0} ns/op, {:.1} MB/s",
            s / n as f64 * 1e9,
            (64 * n) as f64 / s / 1e6
        );
    }
}
