//! Quick X25519 / Ed25519 throughput against x25519-dalek and ed25519-dalek, in the same run (a self-check;
//! the real comparison belongs in pqkit-bench). Prints operations per second and pqkit/dalek ratios (> 1 means
//! pqkit is faster), for every Curve25519 backend this CPU runs.
//!
//! Run: `cargo run --release -p pqkit-bench --example ec25519_speed`.

use pqkit::ec::curve25519::Backend;
use pqkit::ec::ed25519::{self, Signature, SigningKey, VerifyingKey};
use pqkit::ec::x25519::{self, X25519SecretKey};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Operations per second: the best of 5 rounds of ~150 ms each (the machine is shared; the best round is the
/// least disturbed).
fn ops(mut f: impl FnMut()) -> f64 {
    for _ in 0..50 {
        f();
    }
    let mut best = 0f64;
    for _ in 0..5 {
        let mut n = 0u64;
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(150) {
            for _ in 0..16 {
                f();
            }
            n += 16;
        }
        best = best.max(n as f64 / t.elapsed().as_secs_f64());
    }
    best
}

fn row(name: &str, ours: f64, peer: f64) {
    println!("{name:28} pqkit {ours:>10.0} op/s   dalek {peer:>10.0} op/s   ratio {:>5.2}", ours / peer);
}

fn main() {
    println!("CPU features in force: {:?}", pqkit::cpu::features());
    let msg = [0x5au8; 64];
    let mut ctr = 0u8;

    // Peers.
    let dk = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let dvk = dk.verifying_key();
    let dsig = ed25519_dalek::Signer::sign(&dk, &msg);
    let d_x = ops(|| {
        ctr = ctr.wrapping_add(1);
        black_box(x25519_dalek::x25519([ctr; 32], x25519_dalek::X25519_BASEPOINT_BYTES.map(|b| b ^ 3)));
    });
    let d_xbase = ops(|| {
        ctr = ctr.wrapping_add(1);
        black_box(x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([ctr; 32])));
    });
    let d_keygen = ops(|| {
        ctr = ctr.wrapping_add(1);
        black_box(ed25519_dalek::SigningKey::from_bytes(&[ctr; 32]).verifying_key());
    });
    let d_sign = ops(|| {
        black_box(ed25519_dalek::Signer::sign(&dk, &msg));
    });
    let d_verify = ops(|| {
        dvk.verify_strict(&msg, &dsig).unwrap();
    });

    for b in Backend::available() {
        println!("\nbackend {:?}", b.get());
        let peer_u = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([9; 32])).to_bytes();
        let x = ops(|| {
            ctr = ctr.wrapping_add(1);
            black_box(x25519::x25519_with_backend(b, &[ctr; 32], &peer_u).unwrap());
        });
        row("x25519 (variable base)", x, d_x);
        let xb = ops(|| {
            ctr = ctr.wrapping_add(1);
            black_box(X25519SecretKey::from_array([ctr; 32]).with_backend(b).public_key());
        });
        row("x25519 public key", xb, d_xbase);
        let keygen = ops(|| {
            ctr = ctr.wrapping_add(1);
            black_box(SigningKey::from_seed_with_backend(b, &[ctr; 32]));
        });
        row("ed25519 keygen", keygen, d_keygen);
        let sk = SigningKey::from_seed_with_backend(b, &[7; 32]);
        let sign = ops(|| {
            black_box(sk.sign(&msg));
        });
        row("ed25519 sign (64 B)", sign, d_sign);
        let vk = VerifyingKey::from_bytes_with_backend(b, sk.verifying_key().as_bytes()).unwrap();
        let sig = Signature::from_bytes(&sk.sign(&msg).to_bytes()).unwrap();
        assert_eq!(sig.to_bytes(), dsig.to_bytes());
        let verify = ops(|| {
            vk.verify(&msg, &sig).unwrap();
        });
        row("ed25519 verify (64 B)", verify, d_verify);
        // Batch verification of 64 signatures, per signature.
        let keys: Vec<SigningKey> = (0..64u8).map(|i| SigningKey::from_seed_with_backend(b, &[i; 32])).collect();
        let vks: Vec<VerifyingKey> = keys.iter().map(|k| k.verifying_key()).collect();
        let sigs: Vec<Signature> = keys.iter().map(|k| k.sign(&msg)).collect();
        let items: Vec<(&VerifyingKey, &[u8], &Signature)> =
            vks.iter().zip(&sigs).map(|(k, s)| (k, &msg[..], s)).collect();
        let batch = ops(|| {
            ed25519::verify_batch(&items).unwrap();
        }) * 64.0;
        row("ed25519 verify_batch(64)/sig", batch, d_verify);
    }
    println!("\n(dalek rows: x25519-dalek 3 / ed25519-dalek 3 with their default features; verify is verify_strict)");
}
