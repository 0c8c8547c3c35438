//! Quick A/B timing of the single-state Keccak backends (not a benchmark; see pqkit-bench).
//! `cargo run --release -p pqkit-bench --example keccak_speed`
#![allow(unsafe_code)]
use pqkit::hash::sha3::{Backend, Sha3_256, Shake128, f1600_with};

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

unsafe extern "C" {
    fn clock_gettime(clk: i32, ts: *mut Timespec) -> i32;
}

/// Thread CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID = 3).
fn cpu_ns() -> u64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { clock_gettime(3, &mut ts) };
    ts.sec as u64 * 1_000_000_000 + ts.nsec as u64
}

fn best_of<F: FnMut()>(reps: usize, mut f: F) -> u64 {
    let mut best = u64::MAX;
    for _ in 0..reps {
        let t = cpu_ns();
        f();
        best = best.min(cpu_ns() - t);
    }
    best
}

fn main() {
    let backends: Vec<_> = Backend::available().collect();
    if let Some(i) = std::env::args().nth(1) {
        // Only the permutation of backend number `i`, for a long time (for `perf stat`).
        let b = backends[i.parse::<usize>().unwrap()];
        let mut s = [0x0123_4567_89ab_cdefu64; 25];
        for _ in 0..2_000_000 {
            f1600_with(b, std::hint::black_box(&mut s));
        }
        return;
    }
    const N: usize = 20000;
    for &b in &backends {
        let mut s = [0x0123_4567_89ab_cdefu64; 25];
        let ns = best_of(7, || {
            for _ in 0..N {
                f1600_with(b, std::hint::black_box(&mut s));
            }
        });
        // TSC runs at 2.6 GHz on the development machine.
        println!("{b:?}: f1600 {:.0} TSC ticks/perm", ns as f64 * 2.6 / N as f64);
    }
    let data = vec![0x5au8; 1 << 20];
    for &b in &backends {
        let ns = best_of(5, || {
            let mut h = Sha3_256::with_backend(b);
            h.update(std::hint::black_box(&data));
            std::hint::black_box(h.finalize());
        });
        let ns2 = best_of(5, || {
            let mut h = Shake128::with_backend(b);
            h.update(std::hint::black_box(&data));
            let mut out = [0u8; 32];
            h.finalize_into(&mut out);
            std::hint::black_box(out);
        });
        println!(
            "{b:?}: SHA3-256 1MiB {:.0} MB/s, SHAKE128 1MiB {:.0} MB/s",
            data.len() as f64 * 1e3 / ns as f64,
            data.len() as f64 * 1e3 / ns2 as f64
        );
    }
}
