//! Rough throughput self-check for the hash family (not a benchmark; see pqkit-bench).
//! `cargo run --release -p pqkit-bench --example hash_speed [hmac|peers|perm|backends|sha512|stack|hmac1k|dd1k]`
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
    if std::env::args().nth(1).as_deref() == Some("stack") {
        stack_offsets();
        return;
    }
    // `hmac1k` and `dd1k`: long loops of HMAC-SHA512 over 1 KiB, and of a SHA-512 1 KiB digest followed by the
    // digest of that digest, for `perf record` (the same compressions but the HMAC's prepared states).
    if std::env::args().nth(1).as_deref() == Some("hmac1k") {
        let key = pqkit::mac::Hmac::<pqkit::hash::sha2::Sha512>::new(&[7u8; 32]);
        let data = vec![0x5au8; 1024];
        for _ in 0..2_000_000 {
            std::hint::black_box(key.mac(std::hint::black_box(&data)));
        }
        return;
    }
    // `d1k` and `di1k`: SHA-512 1 KiB digests alone, and each followed by an independent 64 B digest.
    if let Some(mode @ ("d1k" | "di1k")) = std::env::args().nth(1).as_deref() {
        use pqkit::hash::sha2::Sha512;
        let data = vec![0x5au8; 1024];
        for _ in 0..2_000_000 {
            std::hint::black_box(Sha512::digest(std::hint::black_box(&data)));
            if mode == "di1k" {
                std::hint::black_box(Sha512::digest(std::hint::black_box(&data[..64])));
            }
        }
        return;
    }
    if std::env::args().nth(1).as_deref() == Some("fence") {
        fenced();
        return;
    }
    if std::env::args().nth(1).as_deref() == Some("dd1k") {
        use pqkit::hash::sha2::Sha512;
        let data = vec![0x5au8; 1024];
        for _ in 0..2_000_000 {
            let d = Sha512::digest(std::hint::black_box(&data));
            std::hint::black_box(Sha512::digest(&d));
        }
        return;
    }
    if std::env::args().nth(1).as_deref() == Some("sha512") {
        sha512_cycles();
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

/// TSC ticks per operation of the SHA-512 one-shot digest and HMAC-SHA512 at 64 B .. 2 KiB: `indep` (each call
/// on the same input) and `chain` (each call's input starts with the previous output), and a digest followed by
/// the digest of its output (the compressions of an HMAC without its prepared states) or by an independent 64 B
/// digest. The best of 3,000 batches of 300 calls: the machine is shared, and a preempted batch is discarded.
#[allow(dead_code)]
fn sha512_cycles() {
    use pqkit::hash::sha2::Sha512;
    let key = pqkit::mac::Hmac::<Sha512>::new(&[7u8; 32]);
    let tsc = || {
        // SAFETY: rdtsc has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    };
    // Sizes to run: the arguments after `sha512`, else the list below.
    let args: Vec<usize> = std::env::args().skip(2).filter_map(|a| a.parse().ok()).collect();
    let sizes = if args.is_empty() { vec![64usize, 128, 256, 384, 512, 640, 768, 896, 1024, 2048] } else { args };
    for size in sizes {
        let mut data = vec![0x5au8; size];
        let n = 300u64;
        let (mut d_ind, mut d_ch, mut m_ind, mut m_ch) = (u64::MAX, u64::MAX, u64::MAX, u64::MAX);
        for _ in 0..3000 {
            let t0 = tsc();
            for _ in 0..n {
                std::hint::black_box(Sha512::digest(std::hint::black_box(&data)));
            }
            let t1 = tsc();
            for _ in 0..n {
                let d = Sha512::digest(&data);
                data[..8].copy_from_slice(&d[..8]);
            }
            let t2 = tsc();
            for _ in 0..n {
                std::hint::black_box(key.mac(std::hint::black_box(&data)));
            }
            let t3 = tsc();
            for _ in 0..n {
                let d = key.mac(&data);
                data[..8].copy_from_slice(&d[..8]);
            }
            let t4 = tsc();
            d_ind = d_ind.min((t1 - t0) / n);
            d_ch = d_ch.min((t2 - t1) / n);
            m_ind = m_ind.min((t3 - t2) / n);
            m_ch = m_ch.min((t4 - t3) / n);
        }
        let mut dd = u64::MAX;
        let mut di = u64::MAX;
        for _ in 0..3000 {
            let t0 = tsc();
            for _ in 0..n {
                let d = Sha512::digest(std::hint::black_box(&data));
                std::hint::black_box(Sha512::digest(&d));
            }
            let t1 = tsc();
            for _ in 0..n {
                std::hint::black_box(Sha512::digest(std::hint::black_box(&data)));
                std::hint::black_box(Sha512::digest(std::hint::black_box(&data[..64])));
            }
            let t2 = tsc();
            dd = dd.min((t1 - t0) / n);
            di = di.min((t2 - t1) / n);
        }
        println!("{size:5} B  digest then digest of it {dd:5}; then an independent 64 B digest {di:5}");
        println!(
            "{size:5} B  digest indep {d_ind:5} chain {d_ch:5}   hmac indep {m_ind:5} chain {m_ch:5}  (TSC ticks)"
        );
    }
}

/// TSC ticks per HMAC-SHA512 64 B and SHA-512 1 KiB / 64 B digest with the stack pointer moved down by `pad`
/// bytes first (0 .. 8 KiB in 256-byte steps): a layout effect of the schedule buffers on the stack (4K aliasing
/// with the input or the constants) would show as a dependence on `pad`.
#[allow(dead_code)]
fn stack_offsets() {
    use pqkit::hash::sha2::Sha512;
    #[inline(never)]
    fn at<const PAD: usize>(f: &dyn Fn()) {
        // Uninitialized: only its size matters (zeroing it would be timed too).
        let mut pad = core::mem::MaybeUninit::<[u8; PAD]>::uninit();
        std::hint::black_box(pad.as_mut_ptr());
        f();
        std::hint::black_box(pad.as_mut_ptr());
    }
    let key = pqkit::mac::Hmac::<Sha512>::new(&[7u8; 32]);
    let data = vec![0x5au8; 1024];
    let tsc = || {
        // SAFETY: rdtsc has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    };
    let time = |f: &dyn Fn()| {
        let mut best = u64::MAX;
        for _ in 0..1000 {
            let t0 = tsc();
            for _ in 0..100 {
                f();
            }
            best = best.min((tsc() - t0) / 100);
        }
        best
    };
    macro_rules! row {
        ($($p:literal)*) => {$(
            let h = time(&|| at::<$p>(&|| { std::hint::black_box(key.mac(std::hint::black_box(&data[..64]))); }));
            let d = time(&|| at::<$p>(&|| { std::hint::black_box(Sha512::digest(std::hint::black_box(&data))); }));
            let s = time(&|| at::<$p>(&|| { std::hint::black_box(Sha512::digest(std::hint::black_box(&data[..64]))); }));
            println!("pad {:5}: hmac 64 B {h:5}  digest 1 KiB {d:5}  digest 64 B {s:5}", $p);
        )*};
    }
    row!(0 256 512 768 1024 1280 1536 1792 2048 2304 2560 2816 3072 3328 3584 3840 4096 4352 4608 4864 5120 5376 5632
        5888 6144 6400 6656 6912 7168 7424 7680 7936);
}

/// TSC ticks per SHA-512 digest of 1 KiB and 64 B, alone and alternating, with and without an `lfence` after each
/// call: whether a slower pair is lost overlap between calls (the fenced times add up) or a cost of the switch.
#[allow(dead_code)]
fn fenced() {
    use pqkit::hash::sha2::Sha512;
    let data = vec![0x5au8; 1024];
    let tsc = || {
        // SAFETY: rdtsc has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    };
    let fence = || {
        // SAFETY: lfence has no preconditions on x86_64 (SSE2).
        unsafe { core::arch::x86_64::_mm_lfence() }
    };
    let time = |f: &dyn Fn()| {
        let mut best = u64::MAX;
        for _ in 0..2000 {
            let t0 = tsc();
            for _ in 0..100 {
                f();
            }
            best = best.min((tsc() - t0) / 100);
        }
        best
    };
    let big = || {
        std::hint::black_box(Sha512::digest(std::hint::black_box(&data)));
    };
    let small = || {
        std::hint::black_box(Sha512::digest(std::hint::black_box(&data[..64])));
    };
    for _ in 0..2 {
        let (b, s, bs) = (
            time(&big),
            time(&small),
            time(&|| {
                big();
                small()
            }),
        );
        let (bf, sf, bsf) = (
            time(&|| {
                big();
                fence()
            }),
            time(&|| {
                small();
                fence()
            }),
            time(&|| {
                big();
                fence();
                small();
                fence()
            }),
        );
        println!("1 KiB {b:5} 64 B {s:5} both {bs:5}   fenced: 1 KiB {bf:5} 64 B {sf:5} both {bsf:5}");
    }
}
