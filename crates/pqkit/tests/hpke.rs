//! HPKE (RFC 9180): the RFC's test vectors for every DHKEM(X25519, HKDF-SHA256) suite (KDFs HKDF-SHA256/512,
//! AEADs AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305, export-only; all four modes: 32 vectors, 288 encryptions,
//! 96 exports; tests/data/hpke-rfc9180-x25519.json, the official test-vectors.json trimmed to those suites and to
//! sequence numbers 0..=9 plus the last two), and draft-ietf-hpke-pq's vectors for ML-KEM-512/768/1024 and X-Wing
//! (tests/data/hpke-pq.json: two independent generations, the working group's and Go 1.26's). Negative tests for
//! every rejection path.

use pqkit::Error;
use pqkit::error::Expected;
use pqkit::hpke::{
    Aead, Kdf, Kem, MAX_SEQUENCE, PrivateKey, PublicKey, RecipientContext, RecipientMode, SenderContext, SenderMode,
    Suite,
};
use serde_json::Value;

fn h(v: &Value, k: &str) -> Vec<u8> {
    hex::decode(v[k].as_str().unwrap_or_else(|| panic!("field {k}"))).unwrap()
}

struct Keys {
    sk_r: PrivateKey,
    pk_r: PublicKey,
    sk_s: Option<PrivateKey>,
    pk_s: Option<PublicKey>,
}

fn check_vector(v: &Value) -> (usize, usize) {
    let suite = Suite::from_ids(
        v["kem_id"].as_u64().unwrap() as u16,
        v["kdf_id"].as_u64().unwrap() as u16,
        v["aead_id"].as_u64().unwrap() as u16,
    )
    .unwrap();
    let mode = v["mode"].as_u64().unwrap();
    let what = format!("{suite:?} mode {mode}");
    let (sk_r, pk_r) = suite.kem.derive_key_pair(&h(v, "ikmR")).unwrap();
    assert_eq!(&sk_r.to_bytes()[..], &h(v, "skRm")[..], "{what}: skRm");
    assert_eq!(pk_r.as_bytes(), &h(v, "pkRm")[..], "{what}: pkRm");
    assert_eq!(PrivateKey::from_bytes(suite.kem, &h(v, "skRm")).unwrap().public_key(), pk_r);
    let mut keys = Keys { sk_r, pk_r, sk_s: None, pk_s: None };
    if mode >= 2 {
        let (sk_s, pk_s) = suite.kem.derive_key_pair(&h(v, "ikmS")).unwrap();
        assert_eq!(&sk_s.to_bytes()[..], &h(v, "skSm")[..], "{what}: skSm");
        assert_eq!(pk_s.as_bytes(), &h(v, "pkSm")[..], "{what}: pkSm");
        keys.sk_s = Some(sk_s);
        keys.pk_s = Some(pk_s);
    }
    if let Some(pk_em) = v.get("pkEm") {
        let (sk_e, pk_e) = suite.kem.derive_key_pair(&h(v, "ikmE")).unwrap();
        assert_eq!(&sk_e.to_bytes()[..], &h(v, "skEm")[..], "{what}: skEm");
        assert_eq!(pk_e.as_bytes(), &hex::decode(pk_em.as_str().unwrap()).unwrap()[..]);
    }
    let (psk, psk_id) = if mode == 1 || mode == 3 { (h(v, "psk"), h(v, "psk_id")) } else { (vec![], vec![]) };
    let smode = match mode {
        0 => SenderMode::Base,
        1 => SenderMode::Psk { psk: &psk, psk_id: &psk_id },
        2 => SenderMode::Auth { sk_s: keys.sk_s.as_ref().unwrap() },
        _ => SenderMode::AuthPsk { sk_s: keys.sk_s.as_ref().unwrap(), psk: &psk, psk_id: &psk_id },
    };
    let rmode = match mode {
        0 => RecipientMode::Base,
        1 => RecipientMode::Psk { psk: &psk, psk_id: &psk_id },
        2 => RecipientMode::Auth { pk_s: keys.pk_s.as_ref().unwrap() },
        _ => RecipientMode::AuthPsk { pk_s: keys.pk_s.as_ref().unwrap(), psk: &psk, psk_id: &psk_id },
    };
    let info = h(v, "info");
    let (enc, mut tx): (Vec<u8>, SenderContext) =
        suite.setup_sender_deterministic(&keys.pk_r, &info, smode, &h(v, "ikmE")).unwrap();
    assert_eq!(enc, h(v, "enc"), "{what}: enc");
    let mut rx: RecipientContext = suite.setup_recipient(&enc, &keys.sk_r, &info, rmode).unwrap();
    let mut n_enc = 0;
    for (i, e) in v["encryptions"].as_array().unwrap().iter().enumerate() {
        let seq = e.get("seq").map_or(i as u128, |s| s.as_u64().unwrap() as u128);
        tx.set_sequence_number(seq);
        rx.set_sequence_number(seq);
        let ct = tx.seal(&h(e, "aad"), &h(e, "pt")).unwrap();
        assert_eq!(ct, h(e, "ct"), "{what}: ciphertext {seq}");
        assert_eq!(rx.open(&h(e, "aad"), &ct).unwrap(), h(e, "pt"), "{what}: open {seq}");
        assert_eq!((tx.sequence_number(), rx.sequence_number()), (seq + 1, seq + 1));
        n_enc += 1;
    }
    if suite.aead == Aead::ExportOnly {
        let export_only =
            Error::InvalidParameter { algorithm: "HPKE", reason: "export-only suite: seal and open are not available" };
        assert_eq!(tx.seal(b"", b"x").unwrap_err(), export_only);
        assert_eq!(rx.open(b"", &[0; 16]).unwrap_err(), export_only);
    }
    let mut n_exp = 0;
    for e in v["exports"].as_array().unwrap() {
        let len = e["L"].as_u64().unwrap() as usize;
        let want = h(e, "exported_value");
        assert_eq!(&tx.export(&h(e, "exporter_context"), len).unwrap()[..], &want[..], "{what}: export");
        assert_eq!(&rx.export(&h(e, "exporter_context"), len).unwrap()[..], &want[..], "{what}: export (recipient)");
        n_exp += 1;
    }
    (n_enc, n_exp)
}

#[test]
fn rfc9180_vectors() {
    let data: Value = serde_json::from_str(include_str!("data/hpke-rfc9180-x25519.json")).unwrap();
    let vectors = data.as_array().unwrap();
    let (mut n, mut ne, mut nx) = (0, 0, 0);
    let mut modes = [0usize; 4];
    for v in vectors {
        let (e, x) = check_vector(v);
        n += 1;
        ne += e;
        nx += x;
        modes[v["mode"].as_u64().unwrap() as usize] += 1;
    }
    assert_eq!((n, ne, nx), (32, 288, 96));
    assert_eq!(modes, [8, 8, 8, 8]);
}

#[test]
fn pq_draft_vectors() {
    let data: Value = serde_json::from_str(include_str!("data/hpke-pq.json")).unwrap();
    let vectors = data.as_array().unwrap();
    let mut kems = std::collections::BTreeSet::new();
    for v in vectors {
        let (e, x) = check_vector(v);
        assert_eq!((e, x), (10, 5));
        kems.insert(v["kem_id"].as_u64().unwrap());
    }
    assert_eq!(vectors.len(), 10);
    assert_eq!(kems.into_iter().collect::<Vec<_>>(), vec![0x40, 0x41, 0x42, 0x647a]);
}

#[test]
fn round_trips_every_suite_and_mode() {
    for kem in Kem::ALL {
        for kdf in Kdf::ALL {
            for aead in Aead::ALL {
                let suite = Suite::new(kem, kdf, aead);
                let (sk_r, pk_r) = kem.generate_key_pair().unwrap();
                let (sk_s, pk_s) = kem.generate_key_pair().unwrap();
                let psk = [0x42u8; 32];
                let modes: Vec<(SenderMode, RecipientMode)> = if kem.supports_auth() {
                    vec![
                        (SenderMode::Base, RecipientMode::Base),
                        (SenderMode::Psk { psk: &psk, psk_id: b"id" }, RecipientMode::Psk { psk: &psk, psk_id: b"id" }),
                        (SenderMode::Auth { sk_s: &sk_s }, RecipientMode::Auth { pk_s: &pk_s }),
                        (
                            SenderMode::AuthPsk { sk_s: &sk_s, psk: &psk, psk_id: b"id" },
                            RecipientMode::AuthPsk { pk_s: &pk_s, psk: &psk, psk_id: b"id" },
                        ),
                    ]
                } else {
                    vec![
                        (SenderMode::Base, RecipientMode::Base),
                        (SenderMode::Psk { psk: &psk, psk_id: b"id" }, RecipientMode::Psk { psk: &psk, psk_id: b"id" }),
                    ]
                };
                for (sm, rm) in modes {
                    let (enc, mut tx) = suite.setup_sender(&pk_r, b"info", sm).unwrap();
                    assert_eq!(enc.len(), kem.enc_len());
                    let mut rx = suite.setup_recipient(&enc, &sk_r, b"info", rm).unwrap();
                    assert_eq!(&tx.export(b"c", 40).unwrap()[..], &rx.export(b"c", 40).unwrap()[..]);
                    if aead == Aead::ExportOnly {
                        continue;
                    }
                    for i in 0..3u8 {
                        let ct = tx.seal(&[i], &[i; 100]).unwrap();
                        assert_eq!(rx.open(&[i], &ct).unwrap(), vec![i; 100]);
                    }
                    // A wrong recipient key: an error (never plaintext).
                    let (other, _) = kem.generate_key_pair().unwrap();
                    let (enc, ct) = suite.seal(&pk_r, b"info", b"", b"secret", sm).unwrap();
                    assert_eq!(
                        suite.open(&enc, &other, b"info", b"", &ct, rm).unwrap_err(),
                        Error::AuthenticationFailed { algorithm: "HPKE" }
                    );
                    // The wrong info.
                    assert_eq!(
                        suite.open(&enc, &sk_r, b"other", b"", &ct, rm).unwrap_err(),
                        Error::AuthenticationFailed { algorithm: "HPKE" }
                    );
                }
            }
        }
    }
}

fn x25519_suite() -> Suite {
    Suite::new(Kem::DhKemX25519HkdfSha256, Kdf::HkdfSha256, Aead::ChaCha20Poly1305)
}

#[test]
fn tampering_and_sequence() {
    for kem in [Kem::DhKemX25519HkdfSha256, Kem::MlKem768, Kem::XWing] {
        let suite = Suite::new(kem, Kdf::HkdfSha256, Aead::Aes128Gcm);
        let (sk, pk) = kem.derive_key_pair(&[7; 64]).unwrap();
        let (enc, mut tx) = suite.setup_sender(&pk, b"", SenderMode::Base).unwrap();
        let mut rx = suite.setup_recipient(&enc, &sk, b"", RecipientMode::Base).unwrap();
        let c0 = tx.seal(b"a", b"zero").unwrap();
        let c1 = tx.seal(b"a", b"one").unwrap();
        // Out of order: fails, and the failure does not advance the sequence number.
        assert_eq!(rx.open(b"a", &c1).unwrap_err(), Error::AuthenticationFailed { algorithm: "HPKE" });
        assert_eq!(rx.sequence_number(), 0);
        let mut bad = c0.clone();
        bad[0] ^= 1;
        assert_eq!(rx.open(b"a", &bad).unwrap_err(), Error::AuthenticationFailed { algorithm: "HPKE" });
        assert_eq!(rx.open(b"a", &c0[..10]).unwrap_err(), Error::AuthenticationFailed { algorithm: "HPKE" });
        assert_eq!(rx.open(b"a", &c0).unwrap(), b"zero");
        assert_eq!(rx.open(b"a", &c1).unwrap(), b"one");
        // A tampered enc: a different secret (ML-KEM and X-Wing reject implicitly), so open fails.
        let (enc, ct) = suite.seal(&pk, b"", b"", b"m", SenderMode::Base).unwrap();
        let mut e2 = enc.clone();
        e2[5] ^= 0x10;
        assert_eq!(
            suite.open(&e2, &sk, b"", b"", &ct, RecipientMode::Base).unwrap_err(),
            Error::AuthenticationFailed { algorithm: "HPKE" }
        );
        // enc of the wrong length.
        assert_eq!(
            suite.open(&enc[1..], &sk, b"", b"", &ct, RecipientMode::Base).unwrap_err(),
            Error::length(kem.name(), "HPKE enc", kem.enc_len(), kem.enc_len() - 1)
        );
    }
    // Sequence-number exhaustion, on both sides.
    let suite = x25519_suite();
    let (sk, pk) = Kem::DhKemX25519HkdfSha256.derive_key_pair(&[1; 32]).unwrap();
    let (enc, mut tx) = suite.setup_sender(&pk, b"", SenderMode::Base).unwrap();
    let mut rx = suite.setup_recipient(&enc, &sk, b"", RecipientMode::Base).unwrap();
    tx.set_sequence_number(MAX_SEQUENCE - 1);
    rx.set_sequence_number(MAX_SEQUENCE - 1);
    let last = tx.seal(b"", b"last").unwrap();
    assert_eq!(rx.open(b"", &last).unwrap(), b"last");
    assert_eq!(tx.seal(b"", b"more").unwrap_err(), Error::CounterExhausted { algorithm: "HPKE" });
    assert_eq!(rx.open(b"", &last).unwrap_err(), Error::CounterExhausted { algorithm: "HPKE" });
    assert_eq!(tx.sequence_number(), MAX_SEQUENCE);
    // Exports still work after exhaustion; too long an export is refused.
    assert_eq!(tx.export(b"", 32).unwrap().len(), 32);
    assert_eq!(
        tx.export(b"", 255 * 32 + 1).unwrap_err(),
        Error::InvalidLength {
            algorithm: "HPKE",
            field: "export length",
            expected: Expected::AtMost(255 * 32),
            actual: 255 * 32 + 1
        }
    );
}

#[test]
fn rejections() {
    let suite = x25519_suite();
    let (sk, pk) = Kem::DhKemX25519HkdfSha256.derive_key_pair(&[1; 32]).unwrap();
    // PSK rules.
    assert_eq!(
        suite.setup_sender(&pk, b"", SenderMode::Psk { psk: &[1; 31], psk_id: b"id" }).unwrap_err(),
        Error::InvalidLength { algorithm: "HPKE", field: "psk", expected: Expected::AtLeast(32), actual: 31 }
    );
    assert_eq!(
        suite.setup_recipient(&[9; 32], &sk, b"", RecipientMode::Psk { psk: &[1; 32], psk_id: b"" }).unwrap_err(),
        Error::InvalidLength { algorithm: "HPKE", field: "psk_id", expected: Expected::AtLeast(1), actual: 0 }
    );
    // Auth modes with a KEM that has no AuthEncap.
    let no_auth = Error::InvalidParameter {
        algorithm: "HPKE",
        reason: "the auth modes need a KEM with authenticated encapsulation (DHKEM); ML-KEM and X-Wing have none",
    };
    let xsuite = Suite::new(Kem::XWing, Kdf::HkdfSha256, Aead::Aes256Gcm);
    let (xsk, xpk) = Kem::XWing.derive_key_pair(&[2; 32]).unwrap();
    assert_eq!(xsuite.setup_sender(&xpk, b"", SenderMode::Auth { sk_s: &xsk }).unwrap_err(), no_auth);
    assert_eq!(xsuite.setup_recipient(&[0; 1120], &xsk, b"", RecipientMode::Auth { pk_s: &xpk }).unwrap_err(), no_auth);
    // Keys of another KEM than the suite's.
    let wrong =
        Error::InvalidParameter { algorithm: "HPKE", reason: "the key belongs to a different KEM than the suite's" };
    assert_eq!(suite.setup_sender(&xpk, b"", SenderMode::Base).unwrap_err(), wrong);
    assert_eq!(suite.setup_recipient(&[0; 32], &xsk, b"", RecipientMode::Base).unwrap_err(), wrong);
    assert_eq!(suite.setup_sender(&pk, b"", SenderMode::Auth { sk_s: &xsk }).unwrap_err(), wrong);
    // Unknown code points.
    assert_eq!(
        Suite::from_ids(0x0010, 1, 1).unwrap_err(),
        Error::InvalidParameter { algorithm: "HPKE", reason: "unsupported KEM id" }
    );
    assert_eq!(
        Suite::from_ids(0x0020, 0x0012, 1).unwrap_err(),
        Error::InvalidParameter { algorithm: "HPKE", reason: "unsupported KDF id" }
    );
    assert_eq!(
        Suite::from_ids(0x0020, 1, 4).unwrap_err(),
        Error::InvalidParameter { algorithm: "HPKE", reason: "unsupported AEAD id" }
    );
    // Key lengths.
    for kem in Kem::ALL {
        let n = kem.private_key_len();
        assert_eq!(
            PrivateKey::from_bytes(kem, &vec![1; n + 1]).unwrap_err(),
            Error::length(kem.name(), "HPKE private key", n, n + 1)
        );
        let n = kem.public_key_len();
        assert_eq!(
            PublicKey::from_bytes(kem, &vec![0; n - 1]).unwrap_err(),
            Error::length(kem.name(), "HPKE public key", n, n - 1)
        );
    }
    // A small-order X25519 enc: the DH is all zeros, an error (RFC 9180 §7.1.4's validation).
    assert_eq!(
        suite.setup_recipient(&[0; 32], &sk, b"", RecipientMode::Base).unwrap_err(),
        Error::InvalidEncoding {
            algorithm: "X25519",
            reason: "all-zero shared secret: the public key is a point of small order (RFC 7748 §6.1)"
        }
    );
    // Wrong ML-KEM randomness length through the hidden deterministic entry point.
    let msuite = Suite::new(Kem::MlKem768, Kdf::HkdfSha256, Aead::Aes128Gcm);
    let (_, mpk) = Kem::MlKem768.derive_key_pair(&[3; 64]).unwrap();
    assert_eq!(
        msuite.setup_sender_deterministic(&mpk, b"", SenderMode::Base, &[0; 31]).unwrap_err(),
        Error::length("ML-KEM-768", "HPKE encapsulation randomness", 32, 31)
    );
    assert_eq!(
        Kem::XWing.derive_key_pair(&[]).unwrap_err(),
        Error::InvalidLength {
            algorithm: "HPKE",
            field: "DeriveKeyPair ikm",
            expected: Expected::AtLeast(1),
            actual: 0
        }
    );
    // Debug never shows secrets.
    assert_eq!(format!("{sk:?}"), "hpke::PrivateKey(DHKEM(X25519, HKDF-SHA256)) { .. }");
}

/// Differential against the `hpke` crate on random keys and messages: the same `DeriveKeyPair`, and each side
/// opens the other's messages and derives the same exports, for every KEM both implement and three AEADs.
#[test]
fn differential_hpke_crate() {
    use hpke::{Deserializable, Kem as _, OpModeR, OpModeS, Serializable};
    use rand::rngs::StdRng;
    use rand::{Rng, RngExt, SeedableRng};

    macro_rules! one {
        ($kem:ty, $aead:ty, $ours:expr, $our_aead:expr, $r:expr) => {{
            type K = hpke::kdf::HkdfSha256;
            let r: &mut StdRng = $r;
            let mut ikm = [0u8; 64];
            r.fill_bytes(&mut ikm);
            let (rsk, rpk) = <$kem>::derive_keypair(&ikm);
            let (sk, pk) = $ours.derive_key_pair(&ikm).unwrap();
            // The hpke crate serializes X25519 keys clamped; the RFC's vectors (and pqkit) keep the derived bytes.
            // Both are the same key, since X25519 clamps at use.
            let mut ours_sk = sk.to_bytes().to_vec();
            if $ours == Kem::DhKemX25519HkdfSha256 {
                ours_sk[0] &= 248;
                ours_sk[31] = (ours_sk[31] & 127) | 64;
            }
            assert_eq!(&ours_sk[..], &rsk.to_bytes()[..], "{:?}: DeriveKeyPair sk", $ours);
            assert_eq!(pk.as_bytes(), &rpk.to_bytes()[..], "{:?}: DeriveKeyPair pk", $ours);
            let suite = Suite::new($ours, Kdf::HkdfSha256, $our_aead);
            let len = r.random_range(0..3000);
            let mut msg = vec![0u8; len];
            r.fill_bytes(&mut msg);
            let info: [u8; 8] = r.random();
            // pqkit -> hpke crate.
            let (enc, mut tx) = suite.setup_sender(&pk, &info, SenderMode::Base).unwrap();
            let theirs_enc = <$kem as hpke::Kem>::EncappedKey::from_bytes(&enc).unwrap();
            let mut rx = hpke::setup_receiver::<$aead, K, $kem>(&OpModeR::Base, &rsk, &theirs_enc, &info).unwrap();
            for i in 0..3u8 {
                let ct = tx.seal(&[i], &msg).unwrap();
                assert_eq!(rx.open(&ct, &[i]).unwrap(), msg);
            }
            let mut e1 = [0u8; 48];
            rx.export(b"exp", &mut e1).unwrap();
            assert_eq!(&tx.export(b"exp", 48).unwrap()[..], &e1[..]);
            // hpke crate -> pqkit.
            let (enc, ct) =
                hpke::single_shot_seal::<$aead, K, $kem>(&OpModeS::Base, &rpk, &info, &msg, b"aad").unwrap();
            let pt = suite.open(&enc.to_bytes(), &sk, &info, b"aad", &ct, RecipientMode::Base).unwrap();
            assert_eq!(pt, msg);
        }};
    }

    let mut r = StdRng::seed_from_u64(0x48504b45);
    for _ in 0..4 {
        one!(
            hpke::kem::X25519HkdfSha256,
            hpke::aead::ChaCha20Poly1305,
            Kem::DhKemX25519HkdfSha256,
            Aead::ChaCha20Poly1305,
            &mut r
        );
        one!(hpke::kem::X25519HkdfSha256, hpke::aead::AesGcm128, Kem::DhKemX25519HkdfSha256, Aead::Aes128Gcm, &mut r);
        one!(hpke::kem::MlKem768, hpke::aead::AesGcm256, Kem::MlKem768, Aead::Aes256Gcm, &mut r);
        one!(hpke::kem::MlKem1024, hpke::aead::ChaCha20Poly1305, Kem::MlKem1024, Aead::ChaCha20Poly1305, &mut r);
        one!(hpke::kem::XWing, hpke::aead::ChaCha20Poly1305, Kem::XWing, Aead::ChaCha20Poly1305, &mut r);
        one!(hpke::kem::XWing, hpke::aead::AesGcm128, Kem::XWing, Aead::Aes128Gcm, &mut r);
    }
}
