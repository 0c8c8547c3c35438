//! Quick self-check of AES-GCM throughput per backend (not the benchmark system):
//! `cargo run --release -p pqkit-bench --example aes_gcm_speed [soft]`.
use pqkit::aead::{Aead, Aes128Gcm, Aes256Gcm};
use pqkit::aes::Backend;
use std::time::{Duration, Instant};

fn measure<T>(mut f: impl FnMut() -> T, bytes: usize) -> f64 {
    // Best of 5 runs of ~100 ms each, in GB/s.
    let mut best = 0f64;
    for _ in 0..5 {
        let start = Instant::now();
        let mut n = 0usize;
        while start.elapsed() < Duration::from_millis(100) {
            for _ in 0..16 {
                std::hint::black_box(f());
            }
            n += 16;
        }
        let gbs = (n * bytes) as f64 / start.elapsed().as_secs_f64() / 1e9;
        best = best.max(gbs);
    }
    best
}

type SealFn = Box<dyn Fn(&mut [u8]) -> [u8; 16]>;
type OpenFn = Box<dyn Fn(&mut [u8], &[u8])>;

/// `run <Soft|AesNi|Vaes256|Vaes> <128|256> <seal|open> <len> <total>`: a fixed amount of work, for `perf stat -e cycles`
/// (cycle counts are far less disturbed by other load on a shared machine than wall-clock time).
fn run_fixed(args: &[String]) {
    let b = match args[0].as_str() {
        "Soft" => Backend::Soft,
        "AesNi" => Backend::AesNi,
        "Vaes256" => Backend::Vaes256,
        _ => Backend::Vaes,
    }
    .checked()
    .unwrap_or_else(|e| panic!("{e}"));
    let len: usize = args[3].parse().unwrap();
    let total: usize = args[4].parse().unwrap();
    let mut buf = vec![0x5au8; len];
    let ct = buf.clone();
    let nonce = [3u8; 12];
    let (seal, open): (SealFn, OpenFn) = if args[1] == "128" {
        let g = Aes128Gcm::new_with_backend(&[1; 16], b).unwrap();
        let g2 = g.clone();
        (
            Box::new(move |x| g.seal_in_place_detached(&nonce, b"", x).unwrap()),
            Box::new(move |x, t| g2.open_in_place_detached(&nonce, b"", x, t).unwrap()),
        )
    } else {
        let g = Aes256Gcm::new_with_backend(&[1; 32], b).unwrap();
        let g2 = g.clone();
        (
            Box::new(move |x| g.seal_in_place_detached(&nonce, b"", x).unwrap()),
            Box::new(move |x, t| g2.open_in_place_detached(&nonce, b"", x, t).unwrap()),
        )
    };
    let mut ctb = ct.clone();
    let tag = seal(&mut ctb);
    for _ in 0..total / len {
        if args[2] == "seal" {
            std::hint::black_box(seal(&mut buf));
        } else {
            // Opening decrypts in place, so restore the ciphertext by swapping two buffers' roles.
            buf.copy_from_slice(&ctb);
            open(&mut buf, &tag);
        }
    }
    std::hint::black_box(&buf);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(|a| a == "run") == Some(true) {
        return run_fixed(&args[1..]);
    }
    let with_soft = std::env::args().any(|a| a == "soft");
    let nonce = [3u8; 12];
    let aad = [0u8; 13];
    for b in Backend::available() {
        if b == Backend::Soft && !with_soft {
            continue;
        }
        for len in [1024usize, 16 * 1024, 1 << 20] {
            let mut buf = vec![0x5au8; len];
            let g128 = Aes128Gcm::new_with_backend(&[1; 16], b).unwrap();
            let g256 = Aes256Gcm::new_with_backend(&[1; 32], b).unwrap();
            let s128 =
                measure(|| std::hint::black_box(g128.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap()), len);
            let tag = g128.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
            let ct = buf.clone();
            let o128 = measure(
                || {
                    buf.copy_from_slice(&ct);
                    g128.open_in_place_detached(&nonce, &aad, &mut buf, &tag).unwrap()
                },
                len,
            );
            let s256 =
                measure(|| std::hint::black_box(g256.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap()), len);
            let tag = g256.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
            let ct = buf.clone();
            let o256 = measure(
                || {
                    buf.copy_from_slice(&ct);
                    g256.open_in_place_detached(&nonce, &aad, &mut buf, &tag).unwrap()
                },
                len,
            );
            println!(
                "{b:?} {len:>8} B  AES-128-GCM seal {s128:6.2} open {o128:6.2}  AES-256-GCM seal {s256:6.2} open {o256:6.2} GB/s"
            );
        }
    }
}
