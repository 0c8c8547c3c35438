//! Quick ML-DSA-65 timing against libcrux-ml-dsa and RustCrypto ml-dsa (self-check only; the real comparison
//! lives in pqkit-bench). Run: `cargo run --release -p pqkit-bench --example mldsa_speed`.

use pqkit::mldsa::{MlDsa65, Signature, SigningKey};
use std::time::Instant;

fn stats(name: &str, mut f: impl FnMut()) {
    for _ in 0..20 {
        f();
    }
    let mut v: Vec<f64> = (0..400)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    println!("{name:40} min {:7.1} us  median {:7.1} us  mean {:7.1} us", v[0], v[v.len() / 2], mean);
}

fn main() {
    let msg = [0x5au8; 1024];
    let ctx = b"";
    let mut seed = [7u8; 32];
    stats("pqkit keygen", || {
        seed[0] = seed[0].wrapping_add(1);
        std::hint::black_box(SigningKey::<MlDsa65>::from_seed(&seed));
    });
    stats("pqkit keygen, boxed key (as pqkit-bench)", || {
        seed[0] = seed[0].wrapping_add(1);
        let (sk, vk) = SigningKey::<MlDsa65>::from_seed(&seed);
        std::hint::black_box(vk.as_bytes());
        std::hint::black_box(Box::new(sk));
    });
    if std::env::var_os("COLD").is_some() {
        // Keygen after evicting the caches (4 MiB touched), as in an interleaved benchmark.
        let mut junk = vec![0u8; 4 << 20];
        let mut v: Vec<f64> = (0..300)
            .map(|i| {
                for c in junk.chunks_mut(64) {
                    c[0] = c[0].wrapping_add(i as u8);
                }
                seed[0] = seed[0].wrapping_add(1);
                let t = Instant::now();
                let (sk, vk) = SigningKey::<MlDsa65>::from_seed(&seed);
                std::hint::black_box(vk.as_bytes());
                std::hint::black_box(Box::new(sk));
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("pqkit keygen boxed, cold caches: min {:.1} median {:.1}", v[0], v[v.len() / 2]);
        std::hint::black_box(&junk);
        return;
    }
    if std::env::var_os("ONLY_KEYGEN").is_some() {
        for _ in 0..20 {
            stats("pqkit keygen", || {
                seed[0] = seed[0].wrapping_add(1);
                std::hint::black_box(SigningKey::<MlDsa65>::from_seed(&seed));
            });
        }
        return;
    }
    let (sk, vk) = SigningKey::<MlDsa65>::from_seed(&[1; 32]);
    let mut ctr = 0u8;
    stats("pqkit sign (hedged)", || {
        std::hint::black_box(sk.sign(&msg, ctx).unwrap());
    });
    stats("pqkit sign (varying rnd)", || {
        ctr = ctr.wrapping_add(1);
        std::hint::black_box(sk.sign_internal_with_rnd(&msg, ctx, &[ctr; 32]).unwrap());
    });
    if let Ok(avx2) = pqkit::mldsa::Backend::Avx2.checked() {
        let sk2 = sk.clone().with_backend(avx2);
        stats("pqkit sign (varying rnd, AVX2 backend)", || {
            ctr = ctr.wrapping_add(1);
            std::hint::black_box(sk2.sign_internal_with_rnd(&msg, ctx, &[ctr; 32]).unwrap());
        });
    }
    stats("pqkit sign (varying rnd, detected)", || {
        ctr = ctr.wrapping_add(1);
        std::hint::black_box(sk.sign_internal_with_rnd(&msg, ctx, &[ctr; 32]).unwrap());
    });
    let sig = sk.sign(&msg, ctx).unwrap();
    stats("pqkit verify", || {
        vk.verify(&msg, ctx, &sig).unwrap();
    });
    if std::env::var_os("ONLY_PQKIT").is_some() {
        return;
    }
    let pkb = vk.to_bytes();
    let sigb = sig.to_bytes();
    stats("pqkit verify incl. key+sig parse", || {
        let vk = pqkit::mldsa::VerifyingKey::<MlDsa65>::from_bytes(&pkb).unwrap();
        let s = Signature::<MlDsa65>::from_bytes(&sigb).unwrap();
        vk.verify(&msg, ctx, &s).unwrap();
    });

    use libcrux_ml_dsa::ml_dsa_65 as lc;
    stats("libcrux keygen", || {
        seed[0] = seed[0].wrapping_add(1);
        std::hint::black_box(lc::generate_key_pair(seed));
    });
    let kp = lc::generate_key_pair([1; 32]);
    stats("libcrux sign (varying rnd)", || {
        ctr = ctr.wrapping_add(1);
        std::hint::black_box(lc::sign(&kp.signing_key, &msg, ctx, [ctr; 32]).unwrap());
    });
    let ls = lc::sign(&kp.signing_key, &msg, ctx, [9; 32]).unwrap();
    stats("libcrux verify", || {
        lc::verify(&kp.verification_key, &msg, ctx, &ls).unwrap();
    });

    stats("RustCrypto keygen", || {
        seed[0] = seed[0].wrapping_add(1);
        std::hint::black_box(ml_dsa::SigningKey::<ml_dsa::MlDsa65>::from_seed(&seed.into()));
    });
    let rk = ml_dsa::SigningKey::<ml_dsa::MlDsa65>::from_seed(&[1; 32].into());
    stats("RustCrypto sign (deterministic)", || {
        std::hint::black_box(rk.expanded_key().sign_deterministic(&msg, ctx).unwrap());
    });
}
