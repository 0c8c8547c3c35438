//! RSA interoperation: against the `openssl` command (keys both ways in PKCS#1, PKCS#8 and SPKI PEM; pqkit
//! signs PSS and PKCS#1 v1.5 and OpenSSL verifies, and the reverse; OpenSSL encrypts OAEP and PKCS#1 v1.5 and
//! pqkit decrypts, and the reverse), differentially against the `rsa` crate on random messages (including
//! PKCS#1 v1.5 implicit rejection on random invalid ciphertexts, which must give the same synthetic message),
//! and the negative paths of every scheme.
#![cfg(feature = "std")]

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use pqkit::Error;
#[path = "common/pkcs1_padding.rs"]
mod pkcs1_padding;

use pqkit::rsa::{HashAlg, RsaPrivateKey, RsaPublicKey, oaep, oaep::Oaep, pkcs1v15, pss};
use rand_core::Rng;
use rsa::pkcs8::DecodePrivateKey;
use rsa::sha2::{Sha256, Sha384, Sha512};

fn rng(seed: u8) -> pqkit::rng::ChaCha20Rng {
    pqkit::rng::ChaCha20Rng::from_key([seed; 32])
}

/// One 2048-bit key shared by the tests (generation is the slow part).
fn key() -> &'static RsaPrivateKey {
    static K: OnceLock<RsaPrivateKey> = OnceLock::new();
    K.get_or_init(|| RsaPrivateKey::generate(2048, &mut rng(1)).unwrap())
}

fn theirs(k: &RsaPrivateKey) -> rsa::PrivateKey {
    rsa::PrivateKey::from_pkcs8_der(&k.to_pkcs8_der().unwrap()).unwrap()
}

// ------------------------------------------------------------------------------------------------------------
// OpenSSL command line

#[path = "common/tool.rs"]
mod tool;

/// Whether the `openssl` command is installed (the rule of `common/tool.rs`: required under CI).
fn openssl_available() -> bool {
    tool::available("openssl", "version", "apt-get install openssl")
}

struct Tmp(PathBuf);
impl Tmp {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("pqkit-rsa-interop-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Tmp(d)
    }
    fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
    fn write(&self, name: &str, data: &[u8]) -> String {
        let p = self.path(name);
        std::fs::write(&p, data).unwrap();
        p
    }
    fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path(name)).unwrap()
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ossl(args: &[&str]) -> Vec<u8> {
    let out = Command::new("openssl").args(args).output().unwrap();
    assert!(out.status.success(), "openssl {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn ossl_ok(args: &[&str]) -> bool {
    Command::new("openssl").args(args).output().unwrap().status.success()
}

#[test]
fn openssl_keys_both_ways() {
    if !openssl_available() {
        return;
    }
    let t = Tmp::new("keys");
    // pqkit → OpenSSL.
    let k = key();
    let p8 = t.write("k8.pem", k.to_pkcs8_pem().unwrap().as_bytes());
    let p1 = t.write("k1.pem", k.to_pkcs1_pem().unwrap().as_bytes());
    let spki = ossl(&["pkey", "-in", &p8, "-pubout"]);
    assert_eq!(String::from_utf8(spki).unwrap(), k.public_key().to_public_key_pem().unwrap());
    let spki1 = ossl(&["rsa", "-in", &p1, "-pubout"]);
    assert_eq!(String::from_utf8(spki1).unwrap(), k.public_key().to_public_key_pem().unwrap());
    let pub1 = ossl(&["rsa", "-in", &p8, "-RSAPublicKey_out"]);
    assert_eq!(String::from_utf8(pub1).unwrap(), k.public_key().to_pkcs1_pem().unwrap());
    assert!(ossl_ok(&["rsa", "-in", &p8, "-check", "-noout"]));
    // OpenSSL's PKCS#8 output of our key is byte-identical to ours.
    let re8 = ossl(&["pkey", "-in", &p1]);
    assert_eq!(String::from_utf8(re8).unwrap(), *k.to_pkcs8_pem().unwrap());

    // OpenSSL → pqkit.
    let g = t.path("g.pem");
    ossl(&["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:3072", "-out", &g]);
    let g8 = String::from_utf8(std::fs::read(&g).unwrap()).unwrap();
    let ours = RsaPrivateKey::from_pkcs8_pem(&g8).unwrap();
    assert_eq!(ours.public_key().bits(), 3072);
    let g1 = String::from_utf8(ossl(&["rsa", "-in", &g, "-traditional"])).unwrap();
    let ours1 = RsaPrivateKey::from_pkcs1_pem(&g1).unwrap();
    assert_eq!(ours1.public_key(), ours.public_key());
    assert_eq!(*ours.to_pkcs1_pem().unwrap(), g1);
    assert_eq!(*ours.to_pkcs8_pem().unwrap(), g8);
    let gs = String::from_utf8(ossl(&["pkey", "-in", &g, "-pubout"])).unwrap();
    assert_eq!(&RsaPublicKey::from_public_key_pem(&gs).unwrap(), ours.public_key());
    let gp1 = String::from_utf8(ossl(&["rsa", "-in", &g, "-RSAPublicKey_out"])).unwrap();
    assert_eq!(&RsaPublicKey::from_pkcs1_pem(&gp1).unwrap(), ours.public_key());
    // Labels are not interchangeable.
    assert!(RsaPrivateKey::from_pkcs1_pem(&g8).is_err());
    assert!(RsaPrivateKey::from_pkcs8_pem(&g1).is_err());
    assert!(RsaPublicKey::from_pkcs1_pem(&gs).is_err());
    assert!(RsaPublicKey::from_public_key_pem(&gp1).is_err());
}

#[test]
fn openssl_signatures_both_ways() {
    if !openssl_available() {
        return;
    }
    let t = Tmp::new("sig");
    let k = key();
    let pubp = t.write("pub.pem", k.public_key().to_public_key_pem().unwrap().as_bytes());
    let privp = t.write("priv.pem", k.to_pkcs8_pem().unwrap().as_bytes());
    let mut r = rng(2);
    for (i, (hash, md)) in [(HashAlg::Sha256, "-sha256"), (HashAlg::Sha384, "-sha384"), (HashAlg::Sha512, "-sha512")]
        .into_iter()
        .enumerate()
    {
        let mut msg = vec![0u8; 100 + 37 * i];
        r.fill_bytes(&mut msg);
        let m = t.write("msg", &msg);
        // PSS, salt = hash length.
        let s = pss::SigningKey::with_hash(k.clone(), hash).unwrap().sign_with_rng(&msg, &mut r).unwrap();
        let sp = t.write("sig", &s);
        let salt = hash.output_len().to_string();
        let pss_opts = ["-sigopt", "rsa_padding_mode:pss", "-sigopt"];
        let saltopt = format!("rsa_pss_saltlen:{salt}");
        let mut args = vec!["dgst", md];
        args.extend_from_slice(&pss_opts);
        args.extend_from_slice(&[&saltopt, "-verify", &pubp, "-signature", &sp, &m]);
        assert!(ossl_ok(&args), "OpenSSL rejected our PSS {hash:?}");
        // A flipped byte is rejected by OpenSSL too (the check above can fail).
        let mut bad = s.clone();
        bad[10] ^= 1;
        let bp = t.write("bad", &bad);
        let mut args = vec!["dgst", md];
        args.extend_from_slice(&pss_opts);
        args.extend_from_slice(&[&saltopt, "-verify", &pubp, "-signature", &bp, &m]);
        assert!(!ossl_ok(&args));
        // PKCS#1 v1.5.
        let s = pkcs1v15::SigningKey::with_hash(k.clone(), hash).unwrap().sign(&msg).unwrap();
        let sp = t.write("sig", &s);
        assert!(ossl_ok(&["dgst", md, "-verify", &pubp, "-signature", &sp, &m]), "v1.5 {hash:?}");
        // Deterministic: OpenSSL's v1.5 signature is byte-identical.
        let os = ossl(&["dgst", md, "-sign", &privp, &m]);
        assert_eq!(os, s);
        // OpenSSL PSS → pqkit.
        let osp = t.path("osig");
        ossl(&["dgst", md, "-sigopt", "rsa_padding_mode:pss", "-sigopt", &saltopt, "-sign", &privp, "-out", &osp, &m]);
        let os = t.read("osig");
        pss::VerifyingKey::with_hash(k.public_key().clone(), hash).verify(&msg, &os).unwrap();
    }
}

#[test]
fn openssl_encryption_both_ways() {
    if !openssl_available() {
        return;
    }
    let t = Tmp::new("enc");
    let k = key();
    let pubp = t.write("pub.pem", k.public_key().to_public_key_pem().unwrap().as_bytes());
    let privp = t.write("priv.pem", k.to_pkcs8_pem().unwrap().as_bytes());
    let mut r = rng(3);
    for len in [0usize, 1, 32, 100, 190] {
        let mut msg = vec![0u8; len];
        r.fill_bytes(&mut msg);
        let m = t.write("msg", &msg);
        let ct = t.path("ct");
        // OAEP SHA-256, with and without a label.
        for label in [None, Some("0a0b0c")] {
            let mut args = vec![
                "pkeyutl",
                "-encrypt",
                "-pubin",
                "-inkey",
                &pubp,
                "-in",
                &m,
                "-out",
                &ct,
                "-pkeyopt",
                "rsa_padding_mode:oaep",
                "-pkeyopt",
                "rsa_oaep_md:sha256",
                "-pkeyopt",
                "rsa_mgf1_md:sha256",
            ];
            let lab;
            if let Some(l) = label {
                lab = format!("rsa_oaep_label:{l}");
                args.extend_from_slice(&["-pkeyopt", &lab]);
            }
            ossl(&args);
            let c = t.read("ct");
            let mut oaep = Oaep::default();
            if label.is_some() {
                oaep = oaep.with_label(&[0x0a, 0x0b, 0x0c]);
            }
            assert_eq!(&oaep.decrypt(k, &c).unwrap()[..], &msg[..]);
            // Label mismatch.
            let other = if label.is_some() { Oaep::default() } else { Oaep::default().with_label(b"x") };
            assert!(other.decrypt(k, &c).is_err());
        }
        // pqkit OAEP → OpenSSL.
        let c = Oaep::default().encrypt(k.public_key(), &msg).unwrap();
        let cp = t.write("ct2", &c);
        let out = ossl(&[
            "pkeyutl",
            "-decrypt",
            "-inkey",
            &privp,
            "-in",
            &cp,
            "-pkeyopt",
            "rsa_padding_mode:oaep",
            "-pkeyopt",
            "rsa_oaep_md:sha256",
            "-pkeyopt",
            "rsa_mgf1_md:sha256",
        ]);
        assert_eq!(out, msg);
        // PKCS#1 v1.5 both ways.
        ossl(&[
            "pkeyutl",
            "-encrypt",
            "-pubin",
            "-inkey",
            &pubp,
            "-in",
            &m,
            "-out",
            &ct,
            "-pkeyopt",
            "rsa_padding_mode:pkcs1",
        ]);
        let c = t.read("ct");
        assert_eq!(&pkcs1v15::decrypt(k, &c).unwrap()[..], &msg[..]);
        let c = pkcs1v15::encrypt(k.public_key(), &msg).unwrap();
        let cp = t.write("ct3", &c);
        let out = ossl(&["pkeyutl", "-decrypt", "-inkey", &privp, "-in", &cp, "-pkeyopt", "rsa_padding_mode:pkcs1"]);
        assert_eq!(out, msg);
    }
}

// ------------------------------------------------------------------------------------------------------------
// Differential against the `rsa` crate

#[test]
fn differential_rsa_crate() {
    let k = key();
    let th = theirs(k);
    let tp = th.as_public_key();
    let mut r = rng(4);
    for i in 0..24usize {
        let mut msg = vec![0u8; (i * 13) % 150];
        r.fill_bytes(&mut msg);
        // Signatures: ours verified by theirs, theirs by ours.
        let d256 = HashAlg::Sha256.digest(&msg);
        let d384 = HashAlg::Sha384.digest(&msg);
        let d512 = HashAlg::Sha512.digest(&msg);
        let s = pkcs1v15::SigningKey::with_hash(k.clone(), HashAlg::Sha256).unwrap().sign(&msg).unwrap();
        tp.verify(rsa::Pkcs1v15Sign::new::<Sha256>(), &d256, &s).unwrap();
        assert_eq!(th.sign(rsa::Pkcs1v15Sign::new::<Sha256>(), &d256).unwrap(), s);
        let s = pkcs1v15::SigningKey::with_hash(k.clone(), HashAlg::Sha512).unwrap().sign(&msg).unwrap();
        tp.verify(rsa::Pkcs1v15Sign::new::<Sha512>(), &d512, &s).unwrap();
        let s = pss::SigningKey::with_hash(k.clone(), HashAlg::Sha384).unwrap().sign_with_rng(&msg, &mut r).unwrap();
        tp.verify(rsa::Pss::<Sha384>::new(), &d384, &s).unwrap();
        let s = th.sign_with_rng(&mut r, rsa::Pss::<Sha256>::new(), &d256).unwrap();
        pss::VerifyingKey::new(k.public_key().clone()).verify(&msg, &s).unwrap();
        // Salt length 0 makes PSS deterministic: the two encoders must agree byte for byte.
        let ours0 = pss::SigningKey::with_hash(k.clone(), HashAlg::Sha512)
            .unwrap()
            .with_salt_len(0)
            .unwrap()
            .sign_with_rng(&msg, &mut r)
            .unwrap();
        assert_eq!(th.sign_with_rng(&mut r, rsa::Pss::<Sha512>::new_with_salt(0), &d512).unwrap(), ours0);
        let s = th.sign_with_rng(&mut r, rsa::Pss::<Sha512>::new_with_salt(0), &d512).unwrap();
        pss::VerifyingKey::with_hash(k.public_key().clone(), HashAlg::Sha512)
            .with_salt_len(0)
            .verify(&msg, &s)
            .unwrap();
        // Encryption both ways.
        let c = Oaep::default().encrypt_with_rng(k.public_key(), &msg, &mut r).unwrap();
        assert_eq!(th.decrypt(rsa::Oaep::<Sha256>::new(), &c).unwrap(), msg);
        let c = tp.encrypt(&mut r, rsa::Oaep::<Sha256>::new_with_label(b"lbl".to_vec()), &msg).unwrap();
        assert_eq!(&Oaep::default().with_label(b"lbl").decrypt(k, &c).unwrap()[..], &msg[..]);
        let c = pkcs1v15::encrypt_with_rng(k.public_key(), &msg, &mut r).unwrap();
        assert_eq!(th.decrypt(rsa::Pkcs1v15Encrypt, &c).unwrap(), msg);
        let c = tp.encrypt(&mut r, rsa::Pkcs1v15Encrypt, &msg).unwrap();
        assert_eq!(&pkcs1v15::decrypt(k, &c).unwrap()[..], &msg[..]);
    }
}

/// Implicit rejection: random ciphertexts (almost all with invalid padding) and crafted bad paddings must
/// decrypt to exactly what the `rsa` crate (draft-irtf-cfrg-rsa-guidance) returns.
#[test]
fn implicit_rejection_matches_rsa_crate() {
    let mut r = rng(5);
    let k2 = RsaPrivateKey::generate_any(1024, &mut rng(6)).unwrap();
    for k in [key(), &k2] {
        let th = theirs(k);
        let pk = k.public_key();
        let n = pk.n();
        let size = pk.size();
        let mut invalid = 0;
        let mut lens = std::collections::BTreeSet::new();
        let craft = |em: &[u8]| pk.raw_public(em).unwrap();
        let mut cts: Vec<Vec<u8>> = Vec::new();
        for _ in 0..40 {
            let mut c = vec![0u8; size];
            r.fill_bytes(&mut c);
            c[0] = n[0] >> 1; // below n
            cts.push(c);
        }
        // Crafted encodings: wrong first byte, wrong type, short PS, no separator, empty message, maximal one.
        let base = |msg_len: usize, r: &mut pqkit::rng::ChaCha20Rng| {
            let mut em = vec![0u8; size];
            em[1] = 2;
            for b in &mut em[2..size - msg_len - 1] {
                *b = 1 + (r.next_u32() % 255) as u8;
            }
            em
        };
        let mut e = base(16, &mut r);
        e[0] = 1;
        cts.push(craft(&e));
        let mut e = base(16, &mut r);
        e[1] = 1;
        cts.push(craft(&e));
        let mut e = base(16, &mut r);
        e[9] = 0; // PS of 7 bytes
        cts.push(craft(&e));
        let mut e = base(16, &mut r);
        e[size - 17] = 5; // no separator
        for b in &mut e[size - 16..] {
            *b |= 1;
        }
        cts.push(craft(&e));
        cts.push(craft(&base(0, &mut r))); // valid, empty message
        cts.push(craft(&base(size - 11, &mut r))); // valid, maximal
        let mut e = base(16, &mut r);
        e[10] = 0; // PS of exactly 8: valid
        cts.push(craft(&e));
        for c in &cts {
            let ours = pkcs1v15::decrypt(k, c).unwrap();
            let ok = pkcs1_padding::padding_valid(k, c).unwrap();
            let their = th.decrypt(rsa::Pkcs1v15Encrypt, c).unwrap();
            assert_eq!(&ours[..], &their[..]);
            assert_eq!(pkcs1v15::decrypt(k, c).unwrap(), ours, "deterministic");
            if !ok {
                invalid += 1;
                lens.insert(ours.len());
            }
        }
        assert!(invalid >= 44, "{invalid}");
        assert!(lens.len() > 5, "synthetic lengths vary: {lens:?}");
    }
}

// ------------------------------------------------------------------------------------------------------------
// Negative paths

#[test]
fn rejections() {
    let k = key();
    let pk = k.public_key();
    let size = pk.size();
    let mut r = rng(7);
    let msg = b"negative";
    let pss_sk = pss::SigningKey::new(k.clone()).unwrap();
    let pss_vk = pss_sk.verifying_key();
    let sig = pss_sk.sign_with_rng(msg, &mut r).unwrap();
    pss_vk.verify(msg, &sig).unwrap();
    // The OS-randomness entry points: two signatures differ (fresh salts) and both verify.
    let (a, b) = (pss_sk.sign(msg).unwrap(), pss_sk.sign(msg).unwrap());
    assert_ne!(a, b);
    pss_vk.verify(msg, &a).unwrap();
    pss_vk.verify_prehashed(&HashAlg::Sha256.digest(msg), &b).unwrap();
    pss_vk.verify(msg, &pss_sk.sign_prehashed(&HashAlg::Sha256.digest(msg)).unwrap()).unwrap();
    assert!(pss_sk.sign_prehashed(&[0; 31]).is_err());
    // OAEP from OS randomness: two ciphertexts of one message differ (fresh seeds) and both decrypt to it; a
    // message one byte too long is refused before any randomness is drawn.
    let (ca, cb) = (oaep::encrypt(pk, msg).unwrap(), oaep::encrypt(pk, msg).unwrap());
    assert_ne!(ca, cb);
    assert_eq!(&oaep::decrypt(k, &ca).unwrap()[..], &msg[..]);
    assert_eq!(&oaep::decrypt(k, &cb).unwrap()[..], &msg[..]);
    let too_long = vec![0u8; Oaep::default().max_message_len(size) + 1];
    assert!(matches!(oaep::encrypt(pk, &too_long), Err(Error::MessageTooLong { .. })));
    let v15_sk = pkcs1v15::SigningKey::new(k.clone()).unwrap();
    let v15_vk = v15_sk.verifying_key();
    let sig15 = v15_sk.sign(msg).unwrap();
    v15_vk.verify(msg, &sig15).unwrap();

    // Wrong signature length.
    for vk_res in [pss_vk.verify(msg, &sig[1..]), v15_vk.verify(msg, &sig15[1..])] {
        assert!(matches!(vk_res, Err(Error::InvalidLength { .. })), "{vk_res:?}");
    }
    let mut long = sig.clone();
    long.push(0);
    assert!(pss_vk.verify(msg, &long).is_err());
    // Signature ≥ n.
    let n = pk.n();
    assert!(matches!(pss_vk.verify(msg, &n), Err(Error::AuthenticationFailed { .. })));
    assert!(matches!(v15_vk.verify(msg, &n), Err(Error::AuthenticationFailed { .. })));
    assert!(pss_vk.verify(msg, &vec![0xff; size]).is_err());
    // Wrong message, wrong hash, wrong salt length, wrong MGF hash.
    assert!(pss_vk.verify(b"other", &sig).is_err());
    assert!(v15_vk.verify(b"other", &sig15).is_err());
    assert!(pss::VerifyingKey::with_hash(pk.clone(), HashAlg::Sha384).verify(msg, &sig).is_err());
    assert!(pkcs1v15::VerifyingKey::with_hash(pk.clone(), HashAlg::Sha384).verify(msg, &sig15).is_err());
    assert!(pss_vk.clone().with_salt_len(31).verify(msg, &sig).is_err());
    assert!(pss_vk.clone().with_mgf_hash(HashAlg::Sha1).verify(msg, &sig).is_err());
    pss_vk.clone().with_any_salt_len().verify(msg, &sig).unwrap();
    // A PSS signature is not a v1.5 one and vice versa.
    assert!(v15_vk.verify(msg, &sig).is_err());
    assert!(pss_vk.verify(msg, &sig15).is_err());
    // Wrong digest length for prehashed entry points.
    assert!(matches!(pss_vk.verify_prehashed(&[0; 31], &sig), Err(Error::InvalidLength { .. })));
    assert!(matches!(v15_vk.verify_prehashed(&[0; 31], &sig15), Err(Error::InvalidLength { .. })));
    assert!(pss_sk.sign_prehashed_with_rng(&[0; 31], &mut r).is_err());
    assert!(v15_sk.sign_prehashed(&[0; 33]).is_err());
    // Signing policy: SHA-1 refused, modulus below 2048 bits refused, oversize salt refused.
    assert!(pss::SigningKey::with_hash(k.clone(), HashAlg::Sha1).is_err());
    assert!(pkcs1v15::SigningKey::with_hash(k.clone(), HashAlg::Sha1).is_err());
    let small = RsaPrivateKey::generate_any(1024, &mut rng(8)).unwrap();
    assert!(pss::SigningKey::new(small.clone()).is_err());
    assert!(pkcs1v15::SigningKey::new(small.clone()).is_err());
    assert!(pss::SigningKey::new(k.clone()).unwrap().with_salt_len(size).is_err());
    assert!(pss::VerifyingKey::with_hash(pk.clone(), HashAlg::Sha1).verify(msg, &sig).is_err());

    // OAEP: truncated ciphertext, ciphertext ≥ n, bad padding, label mismatch, wrong hash: one error.
    let oaep = Oaep::default();
    let c = oaep.encrypt_with_rng(pk, msg, &mut r).unwrap();
    assert_eq!(&oaep.decrypt(k, &c).unwrap()[..], msg);
    let one = oaep.decrypt(k, &c[1..]).unwrap_err();
    for e in [
        oaep.decrypt(k, &n).unwrap_err(),
        oaep.decrypt(k, &vec![0xff; size]).unwrap_err(),
        Oaep::default().with_label(b"L").decrypt(k, &c).unwrap_err(),
        Oaep::new(HashAlg::Sha512).decrypt(k, &c).unwrap_err(),
        Oaep::default().with_mgf_hash(HashAlg::Sha1).decrypt(k, &c).unwrap_err(),
        oaep.decrypt(k, &{
            let mut x = c.clone();
            x[5] ^= 0x40;
            x
        })
        .unwrap_err(),
        oaep.decrypt(
            k,
            &pk.raw_public(&{
                // Valid RSA input, OAEP-invalid: Y ≠ 0.
                let mut em = vec![0x11u8; size];
                em[0] = 0x01;
                em
            })
            .unwrap(),
        )
        .unwrap_err(),
    ] {
        assert_eq!(e, one);
    }
    // OAEP message too long; a hash too big for the modulus.
    assert!(matches!(oaep.encrypt_with_rng(pk, &vec![0; size - 65], &mut r), Err(Error::MessageTooLong { .. })));
    oaep.encrypt_with_rng(pk, &vec![0; size - 66], &mut r).unwrap();
    assert_eq!(oaep.max_message_len(size), size - 66);
    let small_pk = small.public_key();
    // 1024-bit modulus: k = 128 < 2·64 + 2, so OAEP-SHA-512 cannot be used at all.
    assert!(matches!(
        Oaep::new(HashAlg::Sha512).encrypt_with_rng(small_pk, &[0; 1], &mut r),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(Oaep::new(HashAlg::Sha512).decrypt(&small, &[1; 128]).is_err());

    // PKCS#1 v1.5 encryption: too long; decryption of a wrong-length or ≥ n ciphertext is a public error.
    assert!(matches!(pkcs1v15::encrypt_with_rng(pk, &vec![0; size - 10], &mut r), Err(Error::MessageTooLong { .. })));
    pkcs1v15::encrypt_with_rng(pk, &vec![0; size - 11], &mut r).unwrap();
    let c = pkcs1v15::encrypt_with_rng(pk, msg, &mut r).unwrap();
    assert!(matches!(pkcs1v15::decrypt(k, &c[1..]), Err(Error::InvalidLength { .. })));
    assert!(pkcs1v15::decrypt(k, &n).is_err());
    // Bad padding: no error, a message that is not the plaintext.
    let mut bad = c.clone();
    bad[7] ^= 1;
    let m = pkcs1v15::decrypt(k, &bad).unwrap();
    let ok = pkcs1_padding::padding_valid(k, &bad).unwrap();
    assert!(!ok);
    assert_ne!(&m[..], msg);
}

#[test]
fn malformed_der_and_pem() {
    let k = key();
    let pk = k.public_key();
    let d1 = k.to_pkcs1_der().unwrap();
    let d8 = k.to_pkcs8_der().unwrap();
    let s = pk.to_public_key_der().unwrap();
    let p1 = pk.to_pkcs1_der().unwrap();
    // Round trips.
    assert_eq!(RsaPrivateKey::from_pkcs1_der(&d1).unwrap().public_key(), pk);
    assert_eq!(RsaPrivateKey::from_pkcs8_der(&d8).unwrap().public_key(), pk);
    assert_eq!(&RsaPublicKey::from_public_key_der(&s).unwrap(), pk);
    assert_eq!(&RsaPublicKey::from_pkcs1_der(&p1).unwrap(), pk);
    // Truncated, trailing data, empty.
    for bad in [&d1[..d1.len() - 1], &d8[..10], &[][..]] {
        assert!(matches!(RsaPrivateKey::from_pkcs1_der(bad), Err(Error::InvalidEncoding { .. })));
        assert!(matches!(RsaPrivateKey::from_pkcs8_der(bad), Err(Error::InvalidEncoding { .. })));
    }
    let mut trailing = s.clone();
    trailing.push(0);
    assert!(matches!(RsaPublicKey::from_public_key_der(&trailing), Err(Error::InvalidEncoding { .. })));
    assert!(RsaPublicKey::from_pkcs1_der(&p1[..p1.len() - 2]).is_err());
    // Wrong structure in the wrong parser.
    assert!(RsaPrivateKey::from_pkcs1_der(&d8).is_err());
    assert!(RsaPrivateKey::from_pkcs8_der(&d1).is_err());
    assert!(RsaPublicKey::from_public_key_der(&p1).is_err());
    // Another algorithm's OID: an Ed25519 key and an id-RSASSA-PSS relabelled one.
    let ed = pqkit::ec::ed25519::SigningKey::from_seed(&[1; 32]);
    let ed8 = ed.to_pkcs8_der().unwrap();
    let e = RsaPrivateKey::from_pkcs8_der(&ed8).unwrap_err();
    assert!(e.to_string().contains("not rsaEncryption"), "{e}");
    let eds = ed.verifying_key().to_public_key_der().unwrap();
    assert!(RsaPublicKey::from_public_key_der(&eds).unwrap_err().to_string().contains("not rsaEncryption"));
    let oid = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    let at = s.windows(9).position(|w| w == oid).unwrap();
    let mut pss_spki = s.clone();
    pss_spki[at + 8] = 0x0a;
    assert!(RsaPublicKey::from_public_key_der(&pss_spki).unwrap_err().to_string().contains("not rsaEncryption"));
    // Parameters not NULL: turn NULL (05 00) into an empty OCTET STRING (04 00).
    let mut params = s.clone();
    assert_eq!(&params[at + 9..at + 11], &[0x05, 0x00]);
    params[at + 9] = 0x04;
    assert!(RsaPublicKey::from_public_key_der(&params).unwrap_err().to_string().contains("NULL"));
    // Inconsistent components: flip a bit of qinv (last INTEGER of the PKCS#1 key).
    let mut inc = d1.to_vec();
    let last = inc.len() - 1;
    inc[last] ^= 1;
    assert!(RsaPrivateKey::from_pkcs1_der(&inc).is_err());
    // A multi-prime key (version 1 with otherPrimeInfos): refused clearly.
    let mp = multi_prime_der(&d1);
    let e = RsaPrivateKey::from_pkcs1_der(&mp).unwrap_err();
    assert!(e.to_string().contains("multi-prime"), "{e}");
    // PEM: wrong label, garbage.
    let pem = k.to_pkcs8_pem().unwrap();
    assert!(RsaPrivateKey::from_pkcs8_pem(&pem.replace("PRIVATE KEY", "RSA PRIVATE KEY")).is_err());
    assert!(RsaPrivateKey::from_pkcs8_pem("-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n").is_err());
    assert!(RsaPublicKey::from_public_key_pem("not pem").is_err());
    let enc = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n";
    assert!(RsaPrivateKey::from_pkcs8_pem(enc).is_err());
    // Debug never shows secrets.
    let dbg = format!("{:?}", pss::SigningKey::new(k.clone()).unwrap());
    assert!(!dbg.contains(&hex::encode(&*k.d())[..16]));
}

/// Re-encodes a two-prime PKCS#1 key as version 1 with one (bogus) OtherPrimeInfo, to reach the
/// multi-prime refusal.
fn multi_prime_der(two_prime: &[u8]) -> Vec<u8> {
    let k = pkcs1::RsaPrivateKey::<der::asn1::UintRef<'_>>::from_der(two_prime).unwrap();
    let info = pkcs1::OtherPrimeInfo { prime: k.prime1, exponent: k.exponent1, coefficient: k.coefficient };
    let mp = pkcs1::RsaPrivateKey { other_prime_infos: Some(vec![info]), ..k };
    der::Encode::to_der(&mp).unwrap()
}

use der::Decode;
