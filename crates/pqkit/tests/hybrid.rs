//! Hybrid KEMs: X-Wing against the draft's test vectors (draft-connolly-cfrg-xwing-kem-10, spec/test-vectors.json,
//! tests/data/xwing.json) and differentially against RustCrypto `x-wing`; X25519MLKEM768 differentially against
//! an independent composition of `libcrux-ml-kem` and `x25519-dalek` in the TLS layout; negative tests for every
//! rejection path.

use pqkit::Error;
use pqkit::hybrid::{x25519mlkem768 as tls, xwing};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use serde_json::Value;

fn rng() -> StdRng {
    StdRng::seed_from_u64(0x4859_4252_4944)
}

fn h(v: &Value, k: &str) -> Vec<u8> {
    hex::decode(v[k].as_str().unwrap_or_else(|| panic!("field {k}"))).unwrap()
}

fn arr<const N: usize>(v: &[u8]) -> [u8; N] {
    v.try_into().unwrap()
}

#[test]
fn xwing_draft_vectors() {
    let data: Value = serde_json::from_str(include_str!("data/xwing.json")).unwrap();
    let vectors = data.as_array().unwrap();
    assert_eq!(vectors.len(), 3);
    for v in vectors {
        let seed = h(v, "seed");
        let dk = xwing::DecapsulationKey::from_bytes(&seed).unwrap();
        assert_eq!(&dk.to_seed()[..], &h(v, "sk")[..]);
        let ek = dk.encapsulation_key();
        assert_eq!(&ek.to_bytes()[..], &h(v, "pk")[..]);
        let ek2 = xwing::EncapsulationKey::from_bytes(&h(v, "pk")).unwrap();
        assert_eq!(ek2, ek);
        let (ct, ss) = ek2.encapsulate_deterministic(&arr(&h(v, "eseed")));
        assert_eq!(&ct.as_bytes()[..], &h(v, "ct")[..]);
        assert_eq!(&ss.as_bytes()[..], &h(v, "ss")[..]);
        let ct2 = xwing::Ciphertext::from_bytes(&h(v, "ct")).unwrap();
        assert_eq!(dk.decapsulate(&ct2).as_bytes()[..], h(v, "ss")[..]);
    }
}

#[test]
fn xwing_differential_rustcrypto() {
    use x_wing::{Decapsulate, Decapsulator, KeyExport};
    let mut r = rng();
    for _ in 0..24 {
        let seed: [u8; 32] = r.random();
        let eseed: [u8; 64] = {
            let mut e = [0u8; 64];
            r.fill_bytes(&mut e);
            e
        };
        let theirs = x_wing::DecapsulationKey::from(seed);
        let their_ek = theirs.encapsulation_key().clone();
        let dk = xwing::DecapsulationKey::from_seed(&seed);
        let ek = dk.encapsulation_key();
        assert_eq!(&ek.to_bytes()[..], &their_ek.to_bytes()[..]);
        let (their_ct, their_ss) = their_ek.encapsulate_deterministic(&eseed.into());
        let (ct, ss) = ek.encapsulate_deterministic(&eseed);
        assert_eq!(&ct.as_bytes()[..], &their_ct[..]);
        assert_eq!(&ss.as_bytes()[..], &their_ss[..]);
        // A random ciphertext (every bit flipped somewhere) decapsulates the same on both sides.
        let mut bad = ct.as_bytes().to_vec();
        let pos = r.random_range(0..bad.len());
        bad[pos] ^= 1 << r.random_range(0..8);
        let bad_ct = xwing::Ciphertext::from_bytes(&bad).unwrap();
        let mine = dk.decapsulate(&bad_ct);
        let their_bad = theirs.decapsulate(&<[u8; 1120]>::try_from(&bad[..]).unwrap().into());
        assert_eq!(&mine.as_bytes()[..], &their_bad[..]);
        assert_ne!(mine, ss, "a tampered ciphertext must give a different secret (byte {pos})");
    }
}

#[test]
fn xwing_small_order_x25519_is_not_an_error() {
    // The draft specifies no all-zero check; the secret then still depends on ML-KEM. Both sides agree, and the
    // result equals RustCrypto's (non-rejecting) X-Wing.
    use x_wing::{Decapsulate, KeyExport};
    let dk = xwing::DecapsulationKey::from_seed(&[3; 32]);
    let mut pk = dk.encapsulation_key().to_bytes();
    pk[1184..].fill(0); // u = 0: a point of order 4 on the twist... X25519 gives all zeros
    let ek = xwing::EncapsulationKey::from_bytes(&pk).unwrap();
    let (ct, ss) = ek.encapsulate_deterministic(&[9; 64]);
    let their_ek = x_wing::EncapsulationKey::try_from(&pk[..]).unwrap();
    let (their_ct, their_ss) = their_ek.encapsulate_deterministic(&[9u8; 64].into());
    assert_eq!(&ct.as_bytes()[..], &their_ct[..]);
    assert_eq!(&ss.as_bytes()[..], &their_ss[..]);
    // A ciphertext whose X25519 part is zero decapsulates without error, to the RustCrypto value.
    let mut c = *ct.as_bytes();
    c[1088..].fill(0);
    let theirs = x_wing::DecapsulationKey::from([3; 32]);
    let mine = dk.decapsulate(&xwing::Ciphertext::from_bytes(&c).unwrap());
    assert_eq!(&mine.as_bytes()[..], &theirs.decapsulate(&c.into())[..]);
    let _ = their_ek.to_bytes();
}

#[test]
fn xwing_rejections() {
    for len in [0, 31, 33, 64] {
        assert_eq!(
            xwing::DecapsulationKey::from_bytes(&vec![1; len]).unwrap_err(),
            Error::length("X-Wing", "private key (seed)", 32, len)
        );
    }
    for len in [0, 1184, 1215, 1217] {
        assert_eq!(
            xwing::EncapsulationKey::from_bytes(&vec![0; len]).unwrap_err(),
            Error::length("X-Wing", "public key", 1216, len)
        );
    }
    for len in [0, 1088, 1119, 1121] {
        assert_eq!(
            xwing::Ciphertext::from_bytes(&vec![0; len]).unwrap_err(),
            Error::length("X-Wing", "ciphertext", 1120, len)
        );
    }
    // A coefficient >= q in the ML-KEM part fails the modulus check.
    let mut pk = xwing::DecapsulationKey::from_seed(&[5; 32]).encapsulation_key().to_bytes();
    pk[0] = 0xff;
    pk[1] |= 0x0f;
    assert_eq!(
        xwing::EncapsulationKey::from_bytes(&pk).unwrap_err(),
        Error::InvalidEncoding {
            algorithm: "X-Wing",
            reason: "public key: ML-KEM-768 coefficient not reduced modulo q"
        }
    );
    // Debug shows no secret.
    let dk = xwing::DecapsulationKey::from_seed(&[0xab; 32]);
    assert_eq!(format!("{dk:?}"), "xwing::DecapsulationKey { .. }");
}

/// The TLS layout built from independent parts: libcrux ML-KEM-768 and x25519-dalek.
fn reference_tls(seed: &[u8; 96], r: &[u8; 64]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    use libcrux_ml_kem::mlkem768;
    let kp = mlkem768::generate_key_pair(seed[..64].try_into().unwrap());
    let x_sk = x25519_dalek::StaticSecret::from(arr::<32>(&seed[64..]));
    let x_pk = x25519_dalek::PublicKey::from(&x_sk);
    let mut ek = kp.pk().to_vec();
    ek.extend_from_slice(x_pk.as_bytes());
    let (ct_m, ss_m) = mlkem768::encapsulate(kp.public_key(), arr(&r[..32]));
    let e_sk = x25519_dalek::StaticSecret::from(arr::<32>(&r[32..]));
    let ss_x = e_sk.diffie_hellman(&x_pk);
    let mut ct = ct_m.as_ref().to_vec();
    ct.extend_from_slice(x25519_dalek::PublicKey::from(&e_sk).as_bytes());
    let mut ss = ss_m.to_vec();
    ss.extend_from_slice(ss_x.as_bytes());
    (ek, ct, ss)
}

#[test]
fn x25519mlkem768_differential() {
    let mut r = rng();
    for _ in 0..24 {
        let mut seed = [0u8; 96];
        let mut rand = [0u8; 64];
        r.fill_bytes(&mut seed);
        r.fill_bytes(&mut rand);
        let (ref_ek, ref_ct, ref_ss) = reference_tls(&seed, &rand);
        let client = tls::DecapsulationKey::from_seed(&seed).unwrap();
        let share = client.encapsulation_key().to_bytes();
        assert_eq!(&share[..], &ref_ek[..]);
        assert_eq!(&share[..1184], &ref_ek[..1184], "ML-KEM first");
        let (ct, ss) = tls::EncapsulationKey::from_bytes(&share).unwrap().encapsulate_deterministic(&rand).unwrap();
        assert_eq!(&ct.as_bytes()[..], &ref_ct[..]);
        assert_eq!(&ss.as_bytes()[..], &ref_ss[..]);
        assert_eq!(client.decapsulate(&ct).unwrap(), ss);

        // Tampering: the ML-KEM part changes the first half of the secret (implicit rejection), the X25519 part
        // the second half.
        let mut bad = *ct.as_bytes();
        bad[r.random_range(0..1088)] ^= 1 << r.random_range(0..8);
        let k = client.decapsulate(&tls::Ciphertext::from_bytes(&bad).unwrap()).unwrap();
        assert_ne!(k.as_bytes()[..32], ss.as_bytes()[..32]);
        assert_eq!(k.as_bytes()[32..], ss.as_bytes()[32..]);
        let mut bad = *ct.as_bytes();
        bad[1088 + r.random_range(0..31)] ^= 1 << r.random_range(0..8);
        let k = client.decapsulate(&tls::Ciphertext::from_bytes(&bad).unwrap()).unwrap();
        assert_eq!(k.as_bytes()[..32], ss.as_bytes()[..32]);
        assert_ne!(k.as_bytes()[32..], ss.as_bytes()[32..]);
    }
}

#[cfg(feature = "std")]
#[test]
fn x25519mlkem768_random_round_trip() {
    let client = tls::DecapsulationKey::generate().unwrap();
    let (ct, ss) = client.encapsulation_key().encapsulate().unwrap();
    assert_eq!(client.decapsulate(&ct).unwrap(), ss);
    assert_eq!(format!("{ss:?}"), "SharedSecret64 { .. }");
    assert_eq!(format!("{client:?}"), "x25519mlkem768::DecapsulationKey { .. }");
    let dk = xwing::DecapsulationKey::generate().unwrap();
    let (ct, ss) = dk.encapsulation_key().encapsulate().unwrap();
    assert_eq!(dk.decapsulate(&ct), ss);
}

#[test]
fn x25519mlkem768_rejections() {
    let zero = Error::InvalidEncoding {
        algorithm: "X25519MLKEM768",
        reason: "all-zero X25519 shared secret: the peer's X25519 share is a point of small order",
    };
    let client = tls::DecapsulationKey::from_seed(&[7; 96]).unwrap();
    let mut share = client.encapsulation_key().to_bytes();
    // Small-order X25519 shares (u = 0 and u = 1) in the client's share: the server refuses.
    for u in [[0u8; 32], {
        let mut one = [0u8; 32];
        one[0] = 1;
        one
    }] {
        share[1184..].copy_from_slice(&u);
        let ek = tls::EncapsulationKey::from_bytes(&share).unwrap();
        assert_eq!(ek.encapsulate_deterministic(&[1; 64]).unwrap_err(), zero);
    }
    // ... and in the server's share: the client refuses.
    let (ct, _) = client.encapsulation_key().encapsulate_deterministic(&[2; 64]).unwrap();
    let mut c = *ct.as_bytes();
    c[1088..].fill(0);
    assert_eq!(client.decapsulate(&tls::Ciphertext::from_bytes(&c).unwrap()).unwrap_err(), zero);
    // Lengths.
    for len in [0, 1184, 1215, 1217] {
        assert_eq!(
            tls::EncapsulationKey::from_bytes(&vec![0; len]).unwrap_err(),
            Error::length("X25519MLKEM768", "client key share", 1216, len)
        );
    }
    for len in [0, 1088, 1119, 1121] {
        assert_eq!(
            tls::Ciphertext::from_bytes(&vec![0; len]).unwrap_err(),
            Error::length("X25519MLKEM768", "server key share", 1120, len)
        );
    }
    for len in [0, 64, 95, 97] {
        assert_eq!(
            tls::DecapsulationKey::from_seed(&vec![0; len]).unwrap_err(),
            Error::length("X25519MLKEM768", "seed", 96, len)
        );
    }
    let mut share = client.encapsulation_key().to_bytes();
    share[0] = 0xff;
    share[1] |= 0x0f;
    assert_eq!(
        tls::EncapsulationKey::from_bytes(&share).unwrap_err(),
        Error::InvalidEncoding {
            algorithm: "X25519MLKEM768",
            reason: "client key share: ML-KEM-768 coefficient not reduced modulo q"
        }
    );
}
