//! RSA key decoding (PKCS#1 private and public, PKCS#8, SubjectPublicKeyInfo; DER and PEM) and the padding
//! checks of a fixed key on arbitrary signatures and ciphertexts. Properties: never a panic; a decoded key
//! re-encodes and decodes to the same components; a decoded private key inverts its own public operation;
//! arbitrary signatures never verify under a fixed key and message; PKCS#1 v1.5 decryption (implicit
//! rejection) is deterministic and fails only on public faults (length, c ≥ n); OAEP decryption never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqkit::rsa::{RsaPrivateKey, RsaPublicKey, oaep, pkcs1v15, pss};
use std::sync::OnceLock;

/// The 2048-bit test key the benchmark uses (PKCS#8 DER, made with `openssl genpkey`).
fn fixed() -> &'static RsaPrivateKey {
    static K: OnceLock<RsaPrivateKey> = OnceLock::new();
    K.get_or_init(|| {
        RsaPrivateKey::from_pkcs8_der(include_bytes!("../../crates/pqkit-bench/src/algs/rsa_keys/rsa-2048.pk8.der"))
            .expect("fixed key")
    })
}

fn same_private(a: &RsaPrivateKey, b: &RsaPrivateKey) {
    assert_eq!(a.public_key(), b.public_key());
    assert_eq!(*a.d(), *b.d());
    assert_eq!(*a.p(), *b.p());
    assert_eq!(*a.q(), *b.q());
    assert_eq!(*a.qinv(), *b.qinv());
}

fn private(k: RsaPrivateKey) {
    let again = RsaPrivateKey::from_pkcs8_der(&k.to_pkcs8_der().expect("encode pkcs8")).expect("pkcs8 round trip");
    same_private(&k, &again);
    let again = RsaPrivateKey::from_pkcs1_der(&k.to_pkcs1_der().expect("encode pkcs1")).expect("pkcs1 round trip");
    same_private(&k, &again);
    // The key inverts its own public operation (keys that decode passed the consistency check).
    let size = k.public_key().size();
    let mut x = vec![0u8; size];
    x[size - 1] = 2;
    let c = k.public_key().raw_public(&x).expect("raw public");
    assert_eq!(&k.raw_private(&c).expect("raw private")[..], &x[..]);
}

fn public(k: RsaPublicKey) {
    let again =
        RsaPublicKey::from_public_key_der(&k.to_public_key_der().expect("encode spki")).expect("spki round trip");
    assert_eq!(k, again);
    let again = RsaPublicKey::from_pkcs1_der(&k.to_pkcs1_der().expect("encode pkcs1")).expect("pkcs1 round trip");
    assert_eq!(k, again);
}

fuzz_target!(|data: &[u8]| {
    if data.len() > 4096 {
        return;
    }
    if let Ok(k) = RsaPrivateKey::from_pkcs8_der(data) {
        private(k);
    }
    if let Ok(k) = RsaPrivateKey::from_pkcs1_der(data) {
        private(k);
    }
    if let Ok(k) = RsaPublicKey::from_public_key_der(data) {
        public(k);
    }
    if let Ok(k) = RsaPublicKey::from_pkcs1_der(data) {
        public(k);
    }
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(k) = RsaPrivateKey::from_pkcs8_pem(s) {
            private(k);
        }
        if let Ok(k) = RsaPublicKey::from_public_key_pem(s) {
            public(k);
        }
    }
    // A fixed key on arbitrary signatures and ciphertexts.
    let key = fixed();
    let vk = pss::VerifyingKey::new(key.public_key().clone());
    assert!(vk.verify(b"fuzz", data).is_err(), "an arbitrary PSS signature verified");
    let vk1 = pkcs1v15::VerifyingKey::new(key.public_key().clone());
    assert!(vk1.verify(b"fuzz", data).is_err(), "an arbitrary PKCS#1 v1.5 signature verified");
    let a = pkcs1v15::decrypt(key, data);
    let size = key.public_key().size();
    match &a {
        Ok(m) => {
            assert_eq!(data.len(), size);
            assert_eq!(&m[..], &pkcs1v15::decrypt(key, data).expect("deterministic")[..]);
        }
        Err(_) => assert!(data.len() != size || key.public_key().raw_public(data).is_err()),
    }
    let _ = oaep::decrypt(key, data);
});
