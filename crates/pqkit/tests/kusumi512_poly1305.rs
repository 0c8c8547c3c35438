//! Kusumi512-Poly1305 (pqkit's AEAD) and the legacy GreenfieldPQC format: the vectors of docs/kusumi512.md, an independent
//! construction from RustCrypto `poly1305` + the Kusumi512 keystream, round trips, tampering and rejection paths.

use poly1305::universal_hash::KeyInit;
use pqkit::Error;
use pqkit::aead::legacy::GreenfieldKusumi512Poly1305;
use pqkit::aead::{Aead, Kusumi512Poly1305};
use pqkit::cipher::StreamCipher;
use pqkit::kusumi::Kusumi512;
use rand::{Rng, RngExt};
use serde_json::Value;

const NAME: &str = "Kusumi512-Poly1305";
const LEGACY: &str = "Greenfield-Kusumi512-Poly1305";

fn vectors() -> Value {
    serde_json::from_str(include_str!("../../../docs/kusumi512-vectors.json")).unwrap()
}

fn h(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

fn otk(key: &[u8], nonce: &[u8]) -> [u8; 32] {
    let mut b = [0u8; 32];
    Kusumi512::new_with_counter(key, nonce, 0).unwrap().apply_keystream(&mut b).unwrap();
    b
}

/// RFC 8439 section 2.8 built from RustCrypto's Poly1305 and pqkit's (separately tested) Kusumi512 keystream.
fn reference_seal(key: &[u8], nonce: &[u8], aad: &[u8], pt: &[u8]) -> Vec<u8> {
    let mut ct = pt.to_vec();
    Kusumi512::new(key, nonce).unwrap().apply_keystream(&mut ct).unwrap();
    let mut m = aad.to_vec();
    m.resize(aad.len().div_ceil(16) * 16, 0);
    m.extend_from_slice(&ct);
    m.resize(m.len().div_ceil(16) * 16, 0);
    m.extend_from_slice(&(aad.len() as u64).to_le_bytes());
    m.extend_from_slice(&(ct.len() as u64).to_le_bytes());
    let tag = poly1305::Poly1305::new(&otk(key, nonce).into()).compute_unpadded(&m);
    ct.extend_from_slice(&tag);
    ct
}

#[test]
fn aead_vectors() {
    let v = vectors();
    let cases = v["kusumi512_poly1305"].as_array().unwrap();
    assert_eq!(cases.len(), 8);
    for c in cases {
        let (key, nonce, aad, pt, sealed) =
            (h(&c["key"]), h(&c["nonce"]), h(&c["aad"]), h(&c["plaintext"]), h(&c["sealed"]));
        let a = Kusumi512Poly1305::new(&key).unwrap();
        assert_eq!(a.seal(&nonce, &aad, &pt).unwrap(), sealed, "len {}", pt.len());
        assert_eq!(a.open(&nonce, &aad, &sealed).unwrap(), pt);
        assert_eq!(reference_seal(&key, &nonce, &aad, &pt), sealed);
    }
}

#[test]
fn legacy_vectors_and_the_mod_p_finish() {
    let v = vectors();
    let cases = v["greenfield_legacy_aead"].as_array().unwrap();
    assert_eq!(cases.len(), 9);
    let mut differing = 0;
    for c in cases {
        let (key, nonce, pt, sealed) = (h(&c["key"]), h(&c["nonce"]), h(&c["plaintext"]), h(&c["sealed"]));
        let a = GreenfieldKusumi512Poly1305::new(&key).unwrap();
        assert_eq!(a.seal(&nonce, &pt).unwrap(), sealed, "len {}", pt.len());
        assert_eq!(a.open(&nonce, &sealed).unwrap(), pt);
        // The standard Poly1305 tag over the ciphertext alone differs exactly where the spec says it does.
        let (ct, tag) = sealed.split_at(sealed.len() - 16);
        let rfc = poly1305::Poly1305::new(&otk(&key, &nonce).into()).compute_unpadded(ct);
        let differs = c["tag_differs_from_rfc8439_finish"].as_bool().unwrap();
        assert_eq!(&rfc[..] != tag, differs, "len {}", pt.len());
        differing += differs as usize;
        // A standard-finish tag does not open the legacy format when the finishes differ.
        if differs {
            let mut forged = ct.to_vec();
            forged.extend_from_slice(&rfc);
            assert_eq!(a.open(&nonce, &forged), Err(Error::AuthenticationFailed { algorithm: LEGACY }));
        }
    }
    assert!(differing >= 1);
}

#[test]
fn matches_independent_construction_on_random_inputs() {
    let mut rng = rand::rng();
    // Past 2100: the stitched path's edges (the 1500-byte head, then 800-byte AVX2 or 1600-byte AVX-512 chunks:
    // fewer than two chunks, exactly two, two plus a partial block, and many) and the 4800-byte bulk chunks.
    let stitched = [2299, 2300, 2301, 3099, 3100, 3101, 3116, 4699, 4700, 4701, 4716, 5500, 7900, 33_333];
    let lens = (0..=2100usize).chain([4799, 4800, 4801, 6399, 6400, 6401, 9601, 20_000]).chain(stitched);
    for len in lens {
        let mut key = [0u8; 64];
        let mut nonce = [0u8; 12];
        rng.fill_bytes(&mut key);
        rng.fill_bytes(&mut nonce);
        let mut aad = vec![0u8; rng.random_range(0..=70usize)];
        rng.fill_bytes(&mut aad);
        let mut pt = vec![0u8; len];
        rng.fill_bytes(&mut pt);
        let a = Kusumi512Poly1305::new(&key).unwrap();
        let sealed = a.seal(&nonce, &aad, &pt).unwrap();
        assert_eq!(sealed, reference_seal(&key, &nonce, &aad, &pt), "len {len}");
        assert_eq!(a.open(&nonce, &aad, &sealed).unwrap(), pt);
        let l = GreenfieldKusumi512Poly1305::new(&key).unwrap();
        assert_eq!(l.open(&nonce, &l.seal(&nonce, &pt).unwrap()).unwrap(), pt);
    }
}

fn flip(rng: &mut impl Rng, v: &mut [u8]) {
    let i = rng.random_range(0..v.len());
    v[i] ^= 1 << rng.random_range(0..8u32);
}

#[test]
fn tampering_is_rejected_and_releases_no_plaintext() {
    let mut rng = rand::rng();
    let key = [0x42u8; 64];
    let nonce = [7u8; 12];
    let aad = b"header".to_vec();
    let pt = vec![0x11u8; 333];
    let a = Kusumi512Poly1305::new(&key).unwrap();
    let sealed = a.seal(&nonce, &aad, &pt).unwrap();
    let fail = Err(Error::AuthenticationFailed { algorithm: NAME });
    for _ in 0..50 {
        let mut s = sealed.clone();
        flip(&mut rng, &mut s);
        assert_eq!(a.open(&nonce, &aad, &s), fail);
        let mut ad = aad.clone();
        flip(&mut rng, &mut ad);
        assert_eq!(a.open(&nonce, &ad, &sealed), fail);
        let mut n = nonce;
        flip(&mut rng, &mut n);
        assert_eq!(a.open(&n, &aad, &sealed), fail);
    }
    assert_eq!(a.open(&nonce, b"", &sealed), fail);
    assert_eq!(a.open(&nonce, &aad, &sealed[..sealed.len() - 1]), fail);
    assert_eq!(Kusumi512Poly1305::new(&[0x43u8; 64]).unwrap().open(&nonce, &aad, &sealed), fail);
    // In-place: a bad tag leaves the ciphertext in the buffer.
    let (ct, tag) = sealed.split_at(sealed.len() - 16);
    let mut buf = ct.to_vec();
    let mut bad = tag.to_vec();
    bad[0] ^= 1;
    assert_eq!(
        a.open_in_place_detached(&nonce, &aad, &mut buf, &bad),
        Err(Error::AuthenticationFailed { algorithm: NAME })
    );
    assert_eq!(buf, ct);
    a.open_in_place_detached(&nonce, &aad, &mut buf, tag).unwrap();
    assert_eq!(buf, pt);
    // Legacy format: same guarantees.
    let l = GreenfieldKusumi512Poly1305::new(&key).unwrap();
    let ls = l.seal(&nonce, &pt).unwrap();
    let lfail = Err(Error::AuthenticationFailed { algorithm: LEGACY });
    for _ in 0..50 {
        let mut s = ls.clone();
        flip(&mut rng, &mut s);
        assert_eq!(l.open(&nonce, &s), lfail);
    }
    let (lct, ltag) = ls.split_at(ls.len() - 16);
    let mut buf = lct.to_vec();
    let mut bad = ltag.to_vec();
    bad[15] ^= 0x80;
    assert_eq!(
        l.open_in_place_detached(&nonce, &mut buf, &bad),
        Err(Error::AuthenticationFailed { algorithm: LEGACY })
    );
    assert_eq!(buf, lct);
}

#[test]
fn wrong_lengths_are_rejected_with_exact_errors() {
    assert_eq!(Kusumi512Poly1305::new(&[0u8; 32]).unwrap_err(), Error::length(NAME, "key", 64, 32));
    let a = Kusumi512Poly1305::new(&[0u8; 64]).unwrap();
    assert_eq!(a.seal(&[0u8; 24], b"", b"x").unwrap_err(), Error::length(NAME, "nonce", 12, 24));
    assert_eq!(a.open(&[0u8; 11], b"", &[0u8; 16]).unwrap_err(), Error::length(NAME, "nonce", 12, 11));
    assert_eq!(
        a.open(&[0u8; 12], b"", &[0u8; 15]).unwrap_err(),
        Error::InvalidLength {
            algorithm: NAME,
            field: "sealed message",
            expected: pqkit::error::Expected::AtLeast(16),
            actual: 15
        }
    );
    let mut buf = [0u8; 4];
    assert_eq!(
        a.open_in_place_detached(&[0u8; 12], b"", &mut buf, &[0u8; 15]).unwrap_err(),
        Error::length(NAME, "tag", 16, 15)
    );
    assert_eq!(format!("{a:?}"), "Kusumi512Poly1305 { .. }");
    assert_eq!(<Kusumi512Poly1305 as Aead>::KEY_LEN, 64);
    assert_eq!(<Kusumi512Poly1305 as Aead>::NONCE_LEN, 12);
    assert_eq!(<Kusumi512Poly1305 as Aead>::NAME, NAME);

    assert_eq!(GreenfieldKusumi512Poly1305::new(&[0u8; 65]).unwrap_err(), Error::length(LEGACY, "key", 64, 65));
    let l = GreenfieldKusumi512Poly1305::new(&[0u8; 64]).unwrap();
    assert_eq!(l.seal(&[0u8; 8], b"x").unwrap_err(), Error::length(LEGACY, "nonce", 12, 8));
    assert!(matches!(l.open(&[0u8; 12], &[0u8; 3]), Err(Error::InvalidLength { actual: 3, .. })));
    assert_eq!(
        l.open_in_place_detached(&[0u8; 12], &mut buf, &[0u8; 17]).unwrap_err(),
        Error::length(LEGACY, "tag", 16, 17)
    );
    assert_eq!(format!("{l:?}"), "GreenfieldKusumi512Poly1305 { .. }");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Seal then open returns the plaintext, and in-place sealing equals the Vec form.
    #[test]
    fn round_trip(
        key in proptest::collection::vec(proptest::prelude::any::<u8>(), 64),
        nonce in proptest::prelude::any::<[u8; 12]>(),
        aad in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100),
        pt in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..6000),
    ) {
        let a = Kusumi512Poly1305::new(&key).unwrap();
        let sealed = a.seal(&nonce, &aad, &pt).unwrap();
        proptest::prop_assert_eq!(sealed.len(), pt.len() + 16);
        let mut buf = pt.clone();
        let tag = a.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
        proptest::prop_assert_eq!(&sealed[..pt.len()], &buf[..]);
        proptest::prop_assert_eq!(&sealed[pt.len()..], &tag[..]);
        proptest::prop_assert_eq!(a.open(&nonce, &aad, &sealed).unwrap(), pt);
    }
}
