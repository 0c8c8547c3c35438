//! Quick self-check of ML-KEM-768 speed against libcrux in the same run (fastest of 31 batches, µs/op). Not a benchmark:
//! the real comparison lives in pqkit-bench. Run: `cargo run --release -p pqkit-bench --example mlkem_timing`.

use pqkit::mlkem::{Backend, Ciphertext, DecapsulationKey, MlKem768};
use std::hint::black_box;
use std::time::Instant;

fn best<F: FnMut()>(mut f: F) -> f64 {
    let mut v = Vec::new();
    for _ in 0..31 {
        let n = 200;
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        v.push(t.elapsed().as_secs_f64() * 1e6 / n as f64);
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[0]
}

fn main() {
    let d = [7u8; 32];
    let z = [9u8; 32];
    let m = [3u8; 32];
    let mut seed = [0u8; 64];
    seed[..32].copy_from_slice(&d);
    seed[32..].copy_from_slice(&z);
    if let Some(op) = std::env::args().nth(1) {
        // Profiling aid: run one operation of the detected backend in a loop.
        let (dk, ek) = DecapsulationKey::<MlKem768>::from_seed(&d, &z);
        let (ct, _) = ek.encapsulate_deterministic(&m);
        let kp = libcrux_ml_kem::mlkem768::generate_key_pair(seed);
        let (lct, _) = libcrux_ml_kem::mlkem768::encapsulate(kp.public_key(), m);
        for _ in 0..20000 {
            match op.as_str() {
                "lc-keygen" => drop(black_box(libcrux_ml_kem::mlkem768::generate_key_pair(black_box(seed)))),
                "lc-encaps" => drop(black_box(libcrux_ml_kem::mlkem768::encapsulate(kp.public_key(), black_box(m)))),
                "lc-decaps" => {
                    black_box(libcrux_ml_kem::mlkem768::decapsulate(kp.private_key(), black_box(&lct)));
                }
                "keygen" => drop(black_box(DecapsulationKey::<MlKem768>::from_seed(black_box(&d), &z))),
                "encaps" => drop(black_box(ek.encapsulate_deterministic(black_box(&m)))),
                _ => drop(black_box(dk.decapsulate(black_box(&ct)))),
            }
        }
        return;
    }
    for be in Backend::available() {
        let (dk, ek) = DecapsulationKey::<MlKem768>::from_seed_with_backend(be, &d, &z);
        let (ct, _) = ek.encapsulate_deterministic(&m);
        let ct = Ciphertext::<MlKem768>::from_bytes(ct.as_bytes()).unwrap();
        let kg = best(|| {
            black_box(DecapsulationKey::<MlKem768>::from_seed_with_backend(be, black_box(&d), &z));
        });
        let en = best(|| {
            black_box(ek.encapsulate_deterministic(black_box(&m)));
        });
        let de = best(|| {
            black_box(dk.decapsulate(black_box(&ct)));
        });
        println!("pqkit {be:?}: keygen {kg:.2} µs  encaps {en:.2} µs  decaps {de:.2} µs");
    }
    let kp = libcrux_ml_kem::mlkem768::generate_key_pair(seed);
    let (ct, _) = libcrux_ml_kem::mlkem768::encapsulate(kp.public_key(), m);
    let kg = best(|| {
        black_box(libcrux_ml_kem::mlkem768::generate_key_pair(black_box(seed)));
    });
    let en = best(|| {
        black_box(libcrux_ml_kem::mlkem768::encapsulate(kp.public_key(), black_box(m)));
    });
    let de = best(|| {
        black_box(libcrux_ml_kem::mlkem768::decapsulate(kp.private_key(), black_box(&ct)));
    });
    println!("libcrux:     keygen {kg:.2} µs  encaps {en:.2} µs  decaps {de:.2} µs");
}
