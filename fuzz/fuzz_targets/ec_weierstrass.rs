//! P-256 and secp256k1 key and signature encodings: PKCS#8, SEC1 (DER and point bytes), SubjectPublicKeyInfo,
//! their PEM forms, P1363 (r‖s) and DER ECDSA signatures; plus ECDSA verification and ECDH on whatever
//! parses. Properties: never a panic; every decoded value re-encodes and decodes to the same value
//! (decode(encode(x)) == x), and DER signature encoding is canonical (to_der(from_der(b)) == b).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqkit::ec::{p256, secp256k1};

macro_rules! curve {
    ($m:ident, $data:expr) => {{
        use $m::{PublicKey, SecretKey, Signature, SigningKey, VerifyingKey};
        let data: &[u8] = $data;
        let text = std::str::from_utf8(data).ok();

        // Secret keys.
        let mut secrets = Vec::new();
        if let Ok(k) = SecretKey::from_pkcs8_der(data) {
            secrets.push(k);
        }
        if let Ok(k) = SecretKey::from_sec1_der(data) {
            secrets.push(k);
        }
        if let Ok(k) = SecretKey::from_bytes(data) {
            secrets.push(k);
        }
        if let Some(t) = text {
            if let Ok(k) = SecretKey::from_pkcs8_pem(t) {
                secrets.push(k);
            }
            if let Ok(k) = SecretKey::from_sec1_pem(t) {
                secrets.push(k);
            }
        }
        for k in &secrets {
            let b = k.to_bytes();
            let d = k.to_pkcs8_der().expect("encode PKCS#8");
            assert_eq!(SecretKey::from_pkcs8_der(&d).expect("PKCS#8 round trip").to_bytes(), b);
            let d = k.to_sec1_der().expect("encode SEC1");
            assert_eq!(SecretKey::from_sec1_der(&d).expect("SEC1 round trip").to_bytes(), b);
            let p = k.to_pkcs8_pem().expect("encode PEM");
            assert_eq!(SecretKey::from_pkcs8_pem(&p).expect("PEM round trip").to_bytes(), b);
            assert_eq!(SecretKey::from_bytes(&b).expect("bytes round trip").to_bytes(), b);
        }
        let mut signers = Vec::new();
        if let Ok(k) = SigningKey::from_pkcs8_der(data) {
            signers.push(k);
        }
        if let Ok(k) = SigningKey::from_sec1_der(data) {
            signers.push(k);
        }
        if let Ok(k) = SigningKey::from_bytes(data) {
            signers.push(k);
        }
        for k in &signers {
            let b = k.to_bytes();
            let d = k.to_pkcs8_der().expect("encode PKCS#8");
            assert_eq!(SigningKey::from_pkcs8_der(&d).expect("PKCS#8 round trip").to_bytes(), b);
            let sig = k.sign(data);
            k.verifying_key().verify(data, &sig).expect("own signature verifies");
        }

        // Public keys.
        let mut publics = Vec::new();
        if let Ok(k) = PublicKey::from_sec1_bytes(data) {
            publics.push(k);
        }
        if let Ok(k) = PublicKey::from_public_key_der(data) {
            publics.push(k);
        }
        if let Some(t) = text {
            if let Ok(k) = PublicKey::from_public_key_pem(t) {
                publics.push(k);
            }
        }
        for k in &publics {
            for compressed in [false, true] {
                let e = k.to_sec1_bytes(compressed);
                assert!(PublicKey::from_sec1_bytes(e.as_bytes()).expect("SEC1 point round trip") == *k);
            }
            let d = k.to_public_key_der().expect("encode SPKI");
            assert!(PublicKey::from_public_key_der(&d).expect("SPKI round trip") == *k);
            let p = k.to_public_key_pem().expect("encode SPKI PEM");
            assert!(PublicKey::from_public_key_pem(&p).expect("SPKI PEM round trip") == *k);
            if let Some(s) = secrets.first() {
                let _ = s.diffie_hellman(k);
            }
        }
        let mut verifiers = Vec::new();
        if let Ok(k) = VerifyingKey::from_sec1_bytes(data) {
            verifiers.push(k);
        }
        if let Ok(k) = VerifyingKey::from_public_key_der(data) {
            verifiers.push(k);
        }
        for k in &verifiers {
            let d = k.to_public_key_der().expect("encode SPKI");
            assert!(VerifyingKey::from_public_key_der(&d).expect("SPKI round trip") == *k);
        }

        // Signatures: P1363 and DER.
        let mut sigs = Vec::new();
        if let Ok(s) = Signature::from_bytes(data) {
            sigs.push(s);
        }
        if let Ok(s) = Signature::from_der(data) {
            assert_eq!(s.to_der().as_bytes(), data, "from_der accepted a non-canonical DER signature");
            sigs.push(s);
        }
        let fixed = SigningKey::from_bytes(&[7u8; 32]).expect("fixed key").verifying_key();
        for s in &sigs {
            assert!(Signature::from_bytes(&s.to_bytes()).expect("P1363 round trip") == *s);
            assert!(Signature::from_der(s.to_der().as_bytes()).expect("DER round trip") == *s);
            let _ = fixed.verify(data, s);
            let _ = fixed.verify_low_s(data, s);
            for k in &verifiers {
                let _ = k.verify(b"msg", s);
            }
        }
    }};
}

fuzz_target!(|data: &[u8]| {
    curve!(p256, data);
    curve!(secp256k1, data);
});
