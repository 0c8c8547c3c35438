//! secp256k1: BIP-340 Schnorr (the official test vectors, differential tests against RustCrypto `k256`,
//! every rejection path), on every secp256k1 backend.

use pqkit::Error;
use pqkit::ec::secp256k1::Backend;
use pqkit::ec::secp256k1::schnorr::{self, Signature, SigningKey, VerifyingKey};
use rand::{RngExt, SeedableRng, rngs::StdRng};

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
            let theirs_bad = k256::schnorr::Signature::from_bytes(&bad_sig.into())
                .and_then(|s| theirs.verifying_key().verify_raw(&msg, &s));
            assert!(ours_bad.is_err() && theirs_bad.is_err());
            let mut msg2 = msg.clone();
            msg2.push(0);
            assert_eq!(vk.verify(&msg2, &sig), Err(Error::AuthenticationFailed { algorithm: SCHNORR }));
            // Random-aux signing verifies too.
            let s2 = ours.sign(&msg, &mut rng);
            assert_eq!(vk.verify(&msg, &s2), Ok(()));
            theirs.verifying_key().verify_raw(&msg, &k256::schnorr::Signature::from_bytes(&s2.to_bytes().into()).unwrap()).unwrap();
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
