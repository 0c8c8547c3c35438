//! Ed25519 and X25519 key and signature encodings (raw bytes, PKCS#8, SubjectPublicKeyInfo, PEM) and
//! verification of arbitrary signatures. Properties: never a panic; decode(encode(x)) == x; a key that decodes
//! from PKCS#8 signs and its own signature verifies.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqkit::ec::ed25519::{Signature, SigningKey, VerifyingKey};
use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey};

fuzz_target!(|data: &[u8]| {
    let text = std::str::from_utf8(data).ok();

    let mut signers = Vec::new();
    if let Ok(k) = SigningKey::from_bytes(data) {
        signers.push(k);
    }
    if let Ok(k) = SigningKey::from_pkcs8_der(data) {
        signers.push(k);
    }
    if let Some(t) = text {
        if let Ok(k) = SigningKey::from_pkcs8_pem(t) {
            signers.push(k);
        }
    }
    for k in &signers {
        let seed = k.to_seed();
        let d = k.to_pkcs8_der().expect("encode PKCS#8");
        assert_eq!(SigningKey::from_pkcs8_der(&d).expect("PKCS#8 round trip").to_seed(), seed);
        let p = k.to_pkcs8_pem().expect("encode PEM");
        assert_eq!(SigningKey::from_pkcs8_pem(&p).expect("PEM round trip").to_seed(), seed);
        let sig = k.sign(data);
        k.verifying_key().verify(data, &sig).expect("own signature verifies");
    }

    let mut verifiers = Vec::new();
    if let Ok(k) = VerifyingKey::from_bytes(data) {
        verifiers.push(k);
    }
    if let Ok(k) = VerifyingKey::from_public_key_der(data) {
        verifiers.push(k);
    }
    if let Some(t) = text {
        if let Ok(k) = VerifyingKey::from_public_key_pem(t) {
            verifiers.push(k);
        }
    }
    for k in &verifiers {
        assert!(VerifyingKey::from_bytes(k.as_bytes()).expect("bytes round trip") == *k);
        let d = k.to_public_key_der().expect("encode SPKI");
        assert!(VerifyingKey::from_public_key_der(&d).expect("SPKI round trip") == *k);
    }

    let fixed = SigningKey::from_seed(&[9u8; 32]).verifying_key();
    if data.len() >= 64 {
        if let Ok(s) = Signature::from_bytes(&data[..64]) {
            assert_eq!(Signature::from_bytes(&s.to_bytes()).expect("signature round trip").to_bytes(), s.to_bytes());
            let msg = &data[64..];
            let _ = fixed.verify(msg, &s);
            let _ = fixed.verify_ctx(msg, b"ctx", &s);
            let _ = fixed.verify_ph(msg, b"", &s);
            for k in &verifiers {
                let _ = k.verify(msg, &s);
            }
            let items: Vec<_> = verifiers.iter().map(|k| (k, msg, &s)).collect();
            let _ = pqkit::ec::ed25519::verify_batch(&items);
        }
    }

    if let Ok(k) = X25519SecretKey::from_pkcs8_der(data) {
        let d = k.to_pkcs8_der().expect("encode PKCS#8");
        assert_eq!(X25519SecretKey::from_pkcs8_der(&d).expect("PKCS#8 round trip").to_bytes(), k.to_bytes());
    }
    let mut xpubs = Vec::new();
    if let Ok(k) = X25519PublicKey::from_bytes(data) {
        xpubs.push(k);
    }
    if let Ok(k) = X25519PublicKey::from_public_key_der(data) {
        xpubs.push(k);
    }
    let me = X25519SecretKey::from_array([5u8; 32]);
    for k in &xpubs {
        let d = k.to_public_key_der().expect("encode SPKI");
        assert_eq!(X25519PublicKey::from_public_key_der(&d).expect("SPKI round trip").to_bytes(), k.to_bytes());
        let _ = me.diffie_hellman(k);
    }
});
