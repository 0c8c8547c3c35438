//! `SigningKey::from_seeds_many` and `ed25519::sign_many` on every batch backend against the one-at-a-time
//! `from_seed` and `sign` and against `ed25519-dalek`: random inputs at batch sizes around the lane (8) and
//! chunk (64) boundaries, RFC 8032 vectors, and the lane fixed-base multiplication on edge scalars.

use pqkit::dispatch::Checked;
use pqkit::ec::curve25519::multi::Backend;
use pqkit::ec::curve25519::multi_ed::testing;
use pqkit::ec::ed25519::{self, SigningKey};
use rand::{RngExt, SeedableRng, rngs::StdRng};

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" { Vec::new() } else { hex::decode(s).unwrap() }
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_ifma() -> bool {
    std::is_x86_feature_detected!("avx512ifma")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_ifma() -> bool {
    false
}

/// The backends under test: every one this machine runs (the IFMA one must be among them where the CPU has
/// it, so that the test cannot pass by skipping it).
fn backends() -> Vec<Checked<Backend>> {
    let all: Vec<_> = Backend::available().collect();
    if cpu_has_ifma() && std::env::var("PQKIT_CPU").is_err() {
        assert!(all.iter().any(|b| *b == Backend::Ifma), "the CPU has IFMA but the Ifma backend is not available");
    }
    all
}

const SIZES: [usize; 8] = [0, 1, 7, 8, 9, 63, 64, 100];

#[test]
fn keygen_matches_one_at_a_time_on_random_seeds() {
    let mut rng = StdRng::seed_from_u64(0x8032_0001);
    for b in backends() {
        for n in SIZES {
            let seeds: Vec<[u8; 32]> = (0..n).map(|_| rng.random()).collect();
            let keys = SigningKey::from_seeds_many_with_backend(b, &seeds);
            assert_eq!(keys.len(), n, "{b:?}: one key per seed");
            for (i, (k, seed)) in keys.iter().zip(&seeds).enumerate() {
                let one = SigningKey::from_seed(seed);
                assert_eq!(k.to_seed(), *seed, "{b:?} n={n} item {i}: seed");
                assert_eq!(k.verifying_key(), one.verifying_key(), "{b:?} n={n} item {i}: public key");
                let dalek = ed25519_dalek::SigningKey::from_bytes(seed);
                assert_eq!(k.verifying_key().as_bytes(), dalek.verifying_key().as_bytes(), "{b:?} n={n} item {i}");
                // The secret scalar and prefix: the key signs as the one-at-a-time key does.
                assert_eq!(k.sign(b"m"), one.sign(b"m"), "{b:?} n={n} item {i}: signature");
            }
        }
    }
}

#[test]
fn sign_matches_one_at_a_time_on_random_inputs() {
    let mut rng = StdRng::seed_from_u64(0x8032_0002);
    for b in backends() {
        for n in SIZES {
            // A few keys shared among the items, as a server signing with its keys; messages of varied length.
            let keys: Vec<SigningKey> = (0..3).map(|_| SigningKey::from_seed(&rng.random())).collect();
            let msgs: Vec<Vec<u8>> =
                (0..n).map(|i| (0..(i * 37) % 300).map(|_| rng.random::<u8>()).collect()).collect();
            let items: Vec<(&SigningKey, &[u8])> =
                msgs.iter().enumerate().map(|(i, m)| (&keys[(i * 7) % 3], m.as_slice())).collect();
            let sigs = ed25519::sign_many_with_backend(b, &items);
            assert_eq!(sigs.len(), n, "{b:?}: one signature per item");
            for (i, ((k, m), sig)) in items.iter().zip(&sigs).enumerate() {
                assert_eq!(sig, &k.sign(m), "{b:?} n={n} item {i}");
                let dalek = ed25519_dalek::SigningKey::from_bytes(&k.to_seed());
                use ed25519_dalek::Signer;
                assert_eq!(sig.to_bytes(), dalek.sign(m).to_bytes(), "{b:?} n={n} item {i} against dalek");
                assert!(k.verifying_key().verify(m, sig).is_ok());
            }
        }
    }
}

#[test]
fn rfc8032_vectors_through_the_batch_apis() {
    let vectors: Vec<_> = include_str!("vectors/rfc8032_ed25519.txt")
        .lines()
        .filter(|l| l.starts_with("Ed25519 "))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let seed: [u8; 32] = unhex(f[1]).try_into().unwrap();
            (seed, unhex(f[2]), unhex(f[3]), unhex(f[5]))
        })
        .collect();
    assert_eq!(vectors.len(), 5);
    for b in backends() {
        // Each vector alone and all of them in one batch, placed after 6 random keys so they straddle lanes.
        let mut rng = StdRng::seed_from_u64(0x8032_0003);
        let mut seeds: Vec<[u8; 32]> = (0..6).map(|_| rng.random()).collect();
        seeds.extend(vectors.iter().map(|v| v.0));
        let keys = SigningKey::from_seeds_many_with_backend(b, &seeds);
        let keys = &keys[6..];
        for (k, (_, pk, msg, sig)) in keys.iter().zip(&vectors) {
            assert_eq!(k.verifying_key().as_bytes().as_slice(), pk.as_slice(), "{b:?}: public key");
            let one = SigningKey::from_seeds_many_with_backend(b, &[k.to_seed()]);
            assert_eq!(one[0].verifying_key().as_bytes().as_slice(), pk.as_slice(), "{b:?}: public key alone");
            let s = ed25519::sign_many_with_backend(b, &[(&one[0], msg.as_slice())]);
            assert_eq!(s[0].to_bytes().as_slice(), sig.as_slice(), "{b:?}: signature alone");
        }
        let items: Vec<(&SigningKey, &[u8])> = keys.iter().zip(&vectors).map(|(k, v)| (k, v.2.as_slice())).collect();
        for (s, v) in ed25519::sign_many_with_backend(b, &items).iter().zip(&vectors) {
            assert_eq!(s.to_bytes().as_slice(), v.3.as_slice(), "{b:?}: signature in a batch");
        }
    }
}

/// The batch fixed-base multiplication itself on edge scalars (which seeds and nonces reach only by chance):
/// 0, 1, L − 1, L, 2^255 − 1, two with digits of magnitude 7 and 8 throughout, and the RFC 8032 clamped forms of 0, 1, L − 1 and
/// 2^255 − 1, in every lane position, against the one-at-a-time multiplication.
#[test]
fn lane_fixed_base_on_edge_scalars() {
    let l: [u8; 32] =
        hex::decode("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010").unwrap().try_into().unwrap();
    let mut l_minus_1 = l;
    l_minus_1[0] -= 1;
    let mut one = [0u8; 32];
    one[0] = 1;
    let mut top = [0xffu8; 32];
    top[31] = 0x7f;
    // Radix-16 digits that recode to the extreme magnitudes 8 and 7 with carries all the way up.
    let mut eights = [0x88u8; 32];
    eights[31] = 0x78;
    let mut sevens = [0x77u8; 32];
    sevens[31] = 0x77;
    let clamp = |k: [u8; 32]| {
        let mut c = k;
        c[0] &= 248;
        c[31] &= 127;
        c[31] |= 64;
        c
    };
    let mut edges = vec![[0u8; 32], one, l_minus_1, l, top, eights, sevens];
    edges.extend([[0u8; 32], one, l_minus_1, top].map(clamp));
    let single = pqkit::ec::curve25519::Backend::detect();
    let want: Vec<[u8; 32]> = edges.iter().map(|s| testing::mul_base_one(single, s)).collect();
    let mut identity = [0u8; 32];
    identity[0] = 1;
    assert_eq!(want[0], identity, "0·B is the identity");
    assert_eq!(want[3], identity, "L·B is the identity");
    for b in backends() {
        assert_eq!(testing::mul_base_many(b, &edges), want, "{b:?}: all edges in one batch");
        // Each edge scalar in each of the eight lane positions, among random scalars.
        let mut rng = StdRng::seed_from_u64(0x8032_0004);
        for (e, w) in edges.iter().zip(&want) {
            for pos in 0..8 {
                let mut batch: Vec<[u8; 32]> = (0..8)
                    .map(|_| {
                        let mut s: [u8; 32] = rng.random();
                        s[31] &= 0x7f;
                        s
                    })
                    .collect();
                batch[pos] = *e;
                let got = testing::mul_base_many(b, &batch);
                assert_eq!(&got[pos], w, "{b:?}: edge in lane {pos}");
                for (g, s) in got.iter().zip(&batch) {
                    assert_eq!(g, &testing::mul_base_one(single, s), "{b:?}");
                }
            }
        }
    }
}
