//! Constant-time validation of pqkit under valgrind memcheck, the technique of BoringSSL
//! and aws-lc (`CONSTTIME_SECRET` / `CONSTTIME_DECLASSIFY`) and of ctgrind: secret inputs are marked
//! undefined with valgrind client requests, so memcheck reports every branch and every memory address that
//! depends on them ("Conditional jump or move depends on uninitialised value(s)", "Use of uninitialised
//! value"). Outputs that are public by design (ciphertexts, tags, signatures, public keys) are marked defined
//! again before the harness looks at them. Run by `.ci/ct.sh`:
//!
//! ```text
//! valgrind --tool=memcheck --error-exitcode=99 target/release/pqkit-ct --require-valgrind all
//! ```
//!
//! `pqkit-ct leak` runs a deliberately secret-dependent branch: the job asserts that memcheck flags it.
//! Memcheck sees branches and addresses, not variable-time instructions (division): those are checked by
//! review (docs/hardening.md).

mod checklog;
mod valgrind;

use pqkit::aead::Aead;
use pqkit::aead::aes_gcm::Aes256Gcm;
use pqkit::aead::chacha20poly1305::ChaCha20Poly1305;
use pqkit::ec::{ed25519, p256, secp256k1, x25519};
use pqkit::hash::sha2::{Sha256, Sha512};
use pqkit::hpke::{Aead as HpkeAead, Kdf, Kem, RecipientMode, SenderMode, Suite};
use pqkit::hybrid::{x25519mlkem768, xwing};
use pqkit::mac::Hmac;
use pqkit::mldsa::{MlDsa65, Params as _, SigningKey as MlDsaSigningKey};
use pqkit::mlkem::{Ciphertext, DecapsulationKey, MlKem768};
use pqkit::rsa::{RsaPrivateKey, oaep, pkcs1v15, pss};
use std::hint::black_box;
use valgrind::{public, secret};

/// Deterministic test bytes (the values do not matter; their definedness does).
fn bytes<const N: usize>(seed: u8) -> [u8; N] {
    let mut out = [0u8; N];
    let mut x = seed as u32 ^ 0x9e37_79b9;
    for b in out.iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = x as u8;
    }
    out
}

fn check(cond: bool, what: &str) {
    if !cond {
        eprintln!("pqkit-ct: functional check failed: {what}");
        std::process::exit(2);
    }
}

/// Seal with a secret key and plaintext, publish the ciphertext and tag; open (tag decision public) and
/// open a forged tag (the failure path re-encrypts the buffer). Two message lengths: 300 bytes (one keystream pass
/// of the ChaCha20-Poly1305 AVX2 medium path) and 1 KiB (two passes: the second hashing the first's ciphertext, or
/// with `Avx2Zen4` and `Avx2Zen5` each its own, decrypted in place).
fn aead<A: Aead>(name: &str, make: impl Fn(&[u8]) -> A) {
    aead_len::<A, 300>(name, &make);
    aead_len::<A, 1024>(name, &make);
}

fn aead_len<A: Aead, const N: usize>(name: &str, make: impl Fn(&[u8]) -> A) {
    let key: [u8; 32] = bytes(1);
    let msg: [u8; N] = bytes(2);
    let nonce: [u8; 12] = bytes(3);
    let aad = b"header";
    secret(&key);
    let cipher = make(&key);
    let mut buf = msg;
    secret(&buf);
    let tag = cipher.seal_in_place_detached(&nonce, aad, &mut buf).expect("seal");
    public(&buf);
    public(&tag);
    let ct = buf;
    check(cipher.open_in_place_detached(&nonce, aad, &mut buf, &tag).is_ok(), name);
    public(&buf);
    check(buf == msg, name);
    let mut forged = tag;
    forged[0] ^= 1;
    let mut buf = ct;
    check(cipher.open_in_place_detached(&nonce, aad, &mut buf, &forged).is_err(), name);
    public(&buf);
    check(buf == ct, name);
}

/// On every ChaCha backend this CPU runs: the automatic choice depends on the microarchitecture, which valgrind's
/// virtual CPU does not report, and the backends differ in the AEAD's shape (the stitched loops and the medium
/// path of `Avx2`, its open of whole passes in place with `Avx2Zen4` and `Avx2Zen5`, ChaCha20 then the vector
/// Poly1305 on each chunk with `Avx2Zen3` and the portable code).
fn chacha20poly1305() {
    for b in pqkit::chacha::Backend::available() {
        aead("ChaCha20-Poly1305", |k| ChaCha20Poly1305::new(k).expect("key").with_backend(b));
    }
}

/// The ChaCha20 stream cipher on every backend this CPU runs (so both ways of computing a call's last block, in the
/// row layout and on the integer units, whatever the dispatch would choose here): calls of 64 bytes (the one-block
/// path alone), 100 bytes (a short pass and a partial block) and 600 bytes (a full pass and a one-block tail),
/// each checked against the portable backend.
fn chacha20() {
    use pqkit::chacha::{Backend, ChaCha20};
    use pqkit::cipher::StreamCipher;
    let key: [u8; 32] = bytes(20);
    let nonce: [u8; 12] = bytes(21);
    let msg: [u8; 600] = bytes(22);
    secret(&key);
    for len in [64, 100, 600] {
        let mut want = msg;
        secret(&want);
        ChaCha20::new(&key, &nonce)
            .expect("key")
            .with_backend(Backend::Soft.checked().expect("soft"))
            .apply_keystream(&mut want[..len])
            .expect("soft");
        public(&want);
        for b in Backend::available() {
            let mut buf = msg;
            secret(&buf);
            ChaCha20::new(&key, &nonce).expect("key").with_backend(b).apply_keystream(&mut buf[..len]).expect("apply");
            public(&buf);
            check(buf == want, "ChaCha20");
        }
    }
}

fn aes256gcm() {
    aead("AES-256-GCM", |k| Aes256Gcm::new(k).expect("key"));
}

fn poly1305() {
    let key: [u8; 32] = bytes(4);
    let msg: [u8; 200] = bytes(5);
    secret(&key);
    secret(&msg);
    let mut tag = pqkit::poly1305::poly1305(&key, &msg);
    public(&tag);
    let mut p2 = pqkit::poly1305::Poly1305::new(&key);
    p2.update(&msg);
    check(p2.verify(&tag).is_ok(), "Poly1305 verify");
    tag[5] ^= 1;
    let mut p3 = pqkit::poly1305::Poly1305::new(&key);
    p3.update(&msg);
    check(p3.verify(&tag).is_err(), "Poly1305 verify forged");
}

fn hmac_sha256() {
    let key: [u8; 32] = bytes(6);
    let msg: [u8; 200] = bytes(7);
    secret(&key);
    secret(&msg);
    let h = Hmac::<Sha256>::new(&key);
    let mut tag = h.mac(&msg);
    public(&tag);
    check(h.verify_mac(&msg, tag.as_ref()).is_ok(), "HMAC verify");
    tag.as_mut()[0] ^= 1;
    check(h.verify_mac(&msg, tag.as_ref()).is_err(), "HMAC verify forged");
}

/// HMAC-SHA512 (and so the SHA-512 compression of the running tier) over a secret key and message: 1100 bytes
/// (eight whole blocks in the four-block schedule, then the padded tail in the same call) and 100 bytes (one
/// block on its own), each verified and forged.
fn hmac_sha512() {
    let key: [u8; 64] = bytes(20);
    let msg: [u8; 1100] = bytes(21);
    secret(&key);
    secret(&msg);
    let h = Hmac::<Sha512>::new(&key);
    for m in [&msg[..], &msg[..100]] {
        let mut tag = h.mac(m);
        public(&tag);
        check(h.verify_mac(m, tag.as_ref()).is_ok(), "HMAC-SHA512 verify");
        tag.as_mut()[0] ^= 1;
        check(h.verify_mac(m, tag.as_ref()).is_err(), "HMAC-SHA512 verify forged");
    }
}

/// ML-KEM-768 decapsulation, valid and tampered (implicit rejection) ciphertexts. Secret: dk_PKE and z;
/// the embedded ek and H(ek) are public (FIPS 203 §7.3 checks H(ek) at parse time).
fn mlkem768_decaps() {
    let (dk, ek) = DecapsulationKey::<MlKem768>::from_seed(&bytes(8), &bytes(9));
    let mut enc = *dk.to_bytes();
    let k = 3;
    secret(&enc[..384 * k]);
    secret(&enc[768 * k + 64..]);
    let dk = DecapsulationKey::<MlKem768>::from_bytes(&enc).expect("dk");
    enc.fill(0);
    let (ct, ss) = ek.encapsulate_deterministic(&bytes(10));
    let got = dk.decapsulate(&ct);
    public(got.as_bytes());
    check(got.as_bytes() == ss.as_bytes(), "ML-KEM decapsulation");
    let mut bad = ct.as_bytes().to_vec();
    bad[17] ^= 4;
    let bad = Ciphertext::<MlKem768>::from_bytes(&bad).expect("ct");
    let rej = dk.decapsulate(&bad);
    public(rej.as_bytes());
    check(rej.as_bytes() != ss.as_bytes(), "ML-KEM implicit rejection");
}

/// ML-DSA-65 signing. Secret: K, s1, s2, t0 of the expanded key (rho and tr are public).
fn mldsa65_sign() {
    let (sk, vk) = MlDsaSigningKey::<MlDsa65>::from_seed(&bytes(11));
    let enc = sk.to_bytes().as_ref().to_vec();
    check(enc.len() == MlDsa65::SK_LEN, "ML-DSA key length");
    secret(&enc[32..64]);
    secret(&enc[128..]);
    let sk = MlDsaSigningKey::<MlDsa65>::from_bytes(&enc).expect("sk");
    let msg: [u8; 64] = bytes(12);
    let sig = sk.sign_deterministic(&msg, b"ct").expect("sign");
    public(sig.as_bytes());
    check(vk.verify(&msg, b"ct", &sig).is_ok(), "ML-DSA signature verifies");
}

fn x25519() {
    let sk_bytes: [u8; 32] = bytes(13);
    secret(&sk_bytes);
    let sk = x25519::X25519SecretKey::from_array(sk_bytes);
    let pk = sk.public_key();
    public(pk.as_bytes());
    let peer = x25519::X25519SecretKey::from_array(bytes(14)).public_key();
    let shared = sk.diffie_hellman(&peer).expect("dh");
    public(shared.as_bytes());
    let other = x25519::X25519SecretKey::from_array(bytes(14)).diffie_hellman(&pk).expect("dh");
    check(shared.as_bytes() == other.as_bytes(), "X25519 agreement");
}

/// `derive_many` on every batch backend this CPU runs (under valgrind: the portable ladders with the batched
/// inversion, the four-lane AVX2 ladder, and the one-at-a-time path): nine pairs over a lane boundary, secret scalars, one peer key of
/// small order whose item must fail alone (the all-zero decision is declassified, as in `diffie_hellman`).
fn x25519_derive_many() {
    use pqkit::ec::curve25519::multi::Backend;
    let sks: Vec<x25519::X25519SecretKey> = (0..9u8)
        .map(|i| {
            let b: [u8; 32] = bytes(40 + i);
            secret(&b);
            x25519::X25519SecretKey::from_array(b)
        })
        .collect();
    let pks: Vec<x25519::X25519PublicKey> = (0..9u8)
        .map(|i| {
            if i == 4 {
                x25519::X25519PublicKey::from([0u8; 32])
            } else {
                x25519::X25519SecretKey::from_array(bytes(60 + i)).public_key()
            }
        })
        .collect();
    let pairs: Vec<_> = sks.iter().zip(&pks).collect();
    for b in Backend::available() {
        let got = x25519::derive_many_with_backend(b, &pairs);
        for (i, r) in got.iter().enumerate() {
            match r {
                Ok(s) => {
                    public(s.as_bytes());
                    let one = sks[i].diffie_hellman(&pks[i]).expect("dh");
                    public(one.as_bytes());
                    check(i != 4 && s.as_bytes() == one.as_bytes(), "X25519 derive_many matches diffie_hellman");
                }
                Err(_) => check(i == 4, "X25519 derive_many fails only the small-order item"),
            }
        }
    }
}

fn ed25519_sign() {
    let seed: [u8; 32] = bytes(15);
    secret(&seed);
    let sk = ed25519::SigningKey::from_seed(&seed);
    let vk = sk.verifying_key();
    public(vk.as_bytes());
    let msg: [u8; 100] = bytes(16);
    let sig = sk.sign(&msg);
    public(sig.as_bytes());
    let vk = ed25519::VerifyingKey::from_bytes(vk.as_bytes()).expect("vk");
    check(vk.verify(&msg, &sig).is_ok(), "Ed25519 signature verifies");
}

/// `SigningKey::from_seeds_many` and `ed25519::sign_many` on every batch backend this CPU runs (under
/// valgrind: the portable combs with the batched inversion, and the one-at-a-time path): nine secret seeds over
/// a lane boundary, each batch key and signature against the one-at-a-time one.
fn ed25519_many() {
    use pqkit::ec::curve25519::multi::Backend;
    let seeds: Vec<[u8; 32]> = (0..9u8)
        .map(|i| {
            let b: [u8; 32] = bytes(80 + i);
            secret(&b);
            b
        })
        .collect();
    let msgs: Vec<[u8; 100]> = (0..9u8).map(|i| bytes(100 + i)).collect();
    for b in Backend::available() {
        let keys = ed25519::SigningKey::from_seeds_many_with_backend(b, &seeds);
        let items: Vec<(&ed25519::SigningKey, &[u8])> =
            keys.iter().zip(&msgs).map(|(k, m)| (k, m.as_slice())).collect();
        let sigs = ed25519::sign_many_with_backend(b, &items);
        check(keys.len() == 9 && sigs.len() == 9, "Ed25519 batch sizes");
        for ((k, seed), (sig, m)) in keys.iter().zip(&seeds).zip(sigs.iter().zip(&msgs)) {
            let one = ed25519::SigningKey::from_seed(seed);
            // `verifying_key` returns a copy: the copies are what gets declassified and compared.
            let (vk, one_vk) = (k.verifying_key(), one.verifying_key());
            public(vk.as_bytes());
            public(one_vk.as_bytes());
            check(vk == one_vk, "Ed25519 from_seeds_many matches from_seed");
            public(sig.as_bytes());
            let one_sig = one.sign(m);
            public(one_sig.as_bytes());
            check(sig == &one_sig, "Ed25519 sign_many matches sign");
        }
    }
}

/// The multi-message SHA-512 of the batched Ed25519 operations on every lane backend this CPU runs (under
/// valgrind: one at a time, and the AVX2 lanes): nine secret messages of mixed lengths (lanes that finish early
/// keep their state while the others run), split into parts, each digest against `Sha512::digest`.
fn sha512_many() {
    use pqkit::hash::sha2::multi::{Backend, sha512_many_with_backend};
    const LENS: [usize; 9] = [0, 32, 111, 112, 129, 240, 1024, 300, 64];
    let msgs: Vec<Vec<u8>> = LENS
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let b: [u8; 1024] = bytes(120 + i as u8);
            let m = b[..n].to_vec();
            // The bytes are secret; the length (and the Vec's pointer) is public.
            secret(&m[..]);
            m
        })
        .collect();
    let parts: Vec<[&[u8]; 2]> = msgs.iter().map(|m| [&m[..m.len() / 3], &m[m.len() / 3..]]).collect();
    let refs: Vec<&[&[u8]]> = parts.iter().map(|p| p.as_slice()).collect();
    for b in Backend::available() {
        let mut out = vec![[0u8; 64]; msgs.len()];
        sha512_many_with_backend(b, &refs, &mut out);
        for (d, m) in out.iter().zip(&msgs) {
            public(d);
            let one = Sha512::digest(m);
            public(&one);
            check(d == &one, "SHA-512 lanes match Sha512::digest");
        }
    }
}

macro_rules! weierstrass {
    ($sign:ident, $ecdh:ident, $m:ident, $name:literal) => {
        fn $sign() {
            let d: [u8; 32] = bytes(17);
            secret(&d);
            let sk = $m::SigningKey::from_bytes(&d).expect("key");
            let vk = sk.verifying_key();
            let enc = vk.to_sec1_bytes(false);
            public(enc.as_bytes());
            let msg: [u8; 100] = bytes(18);
            let sig = sk.sign(&msg);
            let sig_bytes = sig.to_bytes();
            public(&sig_bytes);
            let vk = $m::VerifyingKey::from_sec1_bytes(enc.as_bytes()).expect("vk");
            let sig = $m::Signature::from_bytes(&sig_bytes).expect("sig");
            check(vk.verify(&msg, &sig).is_ok(), concat!($name, " ECDSA signature verifies"));
        }

        fn $ecdh() {
            let d: [u8; 32] = bytes(19);
            secret(&d);
            let sk = $m::SecretKey::from_bytes(&d).expect("key");
            let peer_sk = $m::SecretKey::from_bytes(&bytes::<32>(20)).expect("key");
            let shared = sk.diffie_hellman(&peer_sk.public_key()).expect("ecdh");
            public(shared.as_bytes());
            let pk = sk.public_key();
            let enc = pk.to_sec1_bytes(false);
            public(enc.as_bytes());
            let pk = $m::PublicKey::from_sec1_bytes(enc.as_bytes()).expect("pk");
            let other = peer_sk.diffie_hellman(&pk).expect("ecdh");
            check(shared.as_bytes() == other.as_bytes(), concat!($name, " ECDH agreement"));
        }
    };
}
weierstrass!(p256_sign, p256_ecdh, p256, "P-256");
weierstrass!(secp256k1_sign, secp256k1_ecdh, secp256k1, "secp256k1");

/// The 2048-bit test key of the benchmarks (PKCS#8 DER made with `openssl genpkey`): a real key, imported
/// again below from its components with every private component marked secret.
const RSA_2048_PK8: &[u8] = include_bytes!("../../pqkit-bench/src/algs/rsa_keys/rsa-2048.pk8.der");

/// The RSA-2048 private key with d, p, q, dP, dQ and qInv marked secret before the import, so the import's
/// consistency check, the Montgomery constants of p and q, and every private operation run on secrets. The
/// blinding factors are drawn inside the library, which marks them secret itself under `--cfg pqkit_ct_check`
/// (`pqkit::ct::classify_ref`); n and e are public.
fn rsa_key() -> RsaPrivateKey {
    let k = RsaPrivateKey::from_pkcs8_der(RSA_2048_PK8).expect("RSA test key");
    let (n, e) = (k.public_key().n(), k.public_key().e());
    let (d, p, q, dp, dq, qinv) = (k.d(), k.p(), k.q(), k.dp(), k.dq(), k.qinv());
    for s in [&d, &p, &q, &dp, &dq, &qinv] {
        secret(&s[..]);
    }
    RsaPrivateKey::from_crt_components(&n, &e, &d, &p, &q, &dp, &dq, &qinv).expect("RSA import")
}

/// RSASSA-PSS (SHA-256) and RSASSA-PKCS1-v1_5 (SHA-256) signing with a secret RSA-2048 key; the signatures
/// are public outputs.
fn rsa_sign() {
    let key = rsa_key();
    let msg: [u8; 100] = bytes(23);
    let signer = pss::SigningKey::new(key.clone()).expect("PSS key");
    let sig = signer.sign(&msg).expect("PSS sign");
    public(&sig[..]);
    check(signer.verifying_key().verify(&msg, &sig).is_ok(), "RSA-PSS signature verifies");
    let signer = pkcs1v15::SigningKey::new(key.clone()).expect("PKCS#1 v1.5 key");
    let sig = signer.sign(&msg).expect("PKCS#1 v1.5 sign");
    public(&sig[..]);
    check(signer.verifying_key().verify(&msg, &sig).is_ok(), "RSA PKCS#1 v1.5 signature verifies");
    // Every other backend this run offers, forced on the CRT halves: the automatic choice depends on the
    // microarchitecture, which valgrind's virtual CPU does not report as the machine's (Zen 3's 16-limb rows).
    for b in pqkit::rsa::Backend::available().filter(|&b| b != pqkit::rsa::Backend::detect()) {
        let signer = pkcs1v15::SigningKey::new(key.clone().with_backend(b)).expect("PKCS#1 v1.5 key");
        let other = signer.sign(&msg).expect("PKCS#1 v1.5 sign");
        public(&other[..]);
        check(other == sig, "RSA PKCS#1 v1.5 signature alike on every backend");
    }
}

/// RSAES-OAEP (SHA-256) decryption of a valid ciphertext (the message is the public output) and of a tampered
/// one (the single "decryption error" is the public outcome).
fn rsa_oaep_decrypt() {
    let key = rsa_key();
    let msg: [u8; 40] = bytes(24);
    let ct = oaep::encrypt(key.public_key(), &msg).expect("OAEP encrypt");
    let pt = oaep::decrypt(&key, &ct).expect("OAEP decrypt");
    public(&pt[..]);
    check(pt[..] == msg[..], "RSA-OAEP round trip");
    let mut bad = ct;
    bad[100] ^= 1;
    check(oaep::decrypt(&key, &bad).is_err(), "RSA-OAEP tampered ciphertext rejected");
}

/// RSAES-PKCS1-v1_5 decryption with implicit rejection: a valid ciphertext gives the message, a tampered one
/// a synthetic message; neither path may branch on the padding's validity. Only the output (and so its
/// length) is public.
fn rsa_pkcs1v15_decrypt() {
    let key = rsa_key();
    let msg: [u8; 48] = bytes(25);
    let ct = pkcs1v15::encrypt(key.public_key(), &msg).expect("PKCS#1 v1.5 encrypt");
    let pt = pkcs1v15::decrypt(&key, &ct).expect("PKCS#1 v1.5 decrypt");
    public(&pt[..]);
    check(pt[..] == msg[..], "RSA PKCS#1 v1.5 round trip");
    let mut bad = ct;
    bad[100] ^= 1;
    let synth = pkcs1v15::decrypt(&key, &bad).expect("implicit rejection never fails");
    public(&synth[..]);
    check(synth[..] != msg[..], "RSA PKCS#1 v1.5 implicit rejection");
}

/// X25519MLKEM768 decapsulation, valid and tampered ML-KEM part. Secret: the 96-byte seed (d, z and the
/// X25519 scalar); the key share (ek, X25519 public key) is public.
fn x25519mlkem768_decaps() {
    let seed: [u8; 96] = bytes(26);
    secret(&seed);
    let dk = x25519mlkem768::DecapsulationKey::from_seed(&seed).expect("seed");
    let ek = dk.encapsulation_key().to_bytes();
    public(&ek);
    let ek = x25519mlkem768::EncapsulationKey::from_bytes(&ek).expect("ek");
    let (ct, ss) = ek.encapsulate_deterministic(&bytes(27)).expect("encaps");
    let got = dk.decapsulate(&ct).expect("decaps");
    public(got.as_bytes());
    check(got.as_bytes() == ss.as_bytes(), "X25519MLKEM768 decapsulation");
    let mut bad = *ct.as_bytes();
    bad[17] ^= 4;
    let bad = x25519mlkem768::Ciphertext::from_bytes(&bad).expect("ct");
    let rej = dk.decapsulate(&bad).expect("decaps");
    public(rej.as_bytes());
    check(rej.as_bytes() != ss.as_bytes(), "X25519MLKEM768 implicit rejection");
}

/// X-Wing decapsulation, valid and tampered ML-KEM part. Secret: the 32-byte seed.
fn xwing_decaps() {
    let seed: [u8; 32] = bytes(28);
    secret(&seed);
    let dk = xwing::DecapsulationKey::from_seed(&seed);
    let ek = dk.encapsulation_key().to_bytes();
    public(&ek);
    let ek = xwing::EncapsulationKey::from_bytes(&ek).expect("ek");
    let (ct, ss) = ek.encapsulate_deterministic(&bytes(29));
    let got = dk.decapsulate(&ct);
    public(got.as_bytes());
    check(got.as_bytes() == ss.as_bytes(), "X-Wing decapsulation");
    let mut bad = *ct.as_bytes();
    bad[17] ^= 4;
    let bad = xwing::Ciphertext::from_bytes(&bad).expect("ct");
    let rej = dk.decapsulate(&bad);
    public(rej.as_bytes());
    check(rej.as_bytes() != ss.as_bytes(), "X-Wing implicit rejection");
}

/// HPKE base-mode single-shot open with the recipient's private key secret; a tampered ciphertext's
/// rejection is the AEAD's public tag decision.
fn hpke_open(kem: Kem, seed: u8) {
    let suite = Suite::new(kem, Kdf::HkdfSha256, HpkeAead::ChaCha20Poly1305);
    let mut sk = vec![0u8; kem.private_key_len()];
    sk.iter_mut().zip(bytes::<64>(seed)).for_each(|(o, b)| *o = b);
    let pk = pqkit::hpke::PrivateKey::from_bytes(kem, &sk).expect("sk").public_key();
    let (enc, ct) = suite.seal(&pk, b"info", b"aad", b"hpke ct message", SenderMode::Base).expect("seal");
    secret(&sk[..]);
    let sk = pqkit::hpke::PrivateKey::from_bytes(kem, &sk).expect("sk");
    let pt = suite.open(&enc, &sk, b"info", b"aad", &ct, RecipientMode::Base).expect("open");
    public(&pt[..]);
    check(pt == b"hpke ct message", "HPKE open");
    let mut bad = ct;
    bad[0] ^= 1;
    check(suite.open(&enc, &sk, b"info", b"aad", &bad, RecipientMode::Base).is_err(), "HPKE forged open");
}

fn hpke_x25519_open() {
    hpke_open(Kem::DhKemX25519HkdfSha256, 30);
}

fn hpke_xwing_open() {
    hpke_open(Kem::XWing, 31);
}

/// The self-test: a deliberately secret-dependent branch and table index that the job must flag.
#[inline(never)]
fn leaky_lookup(table: &[u8; 256], secret_byte: u8) -> u8 {
    if black_box(secret_byte) & 1 == 1 { table[secret_byte as usize] } else { 0 }
}

fn leak() {
    let table: [u8; 256] = bytes(21);
    let s: [u8; 1] = bytes(22);
    secret(&s);
    let out = [black_box(leaky_lookup(&table, s[0]))];
    public(&out);
    println!("leak self-test ran (memcheck must have reported it)");
}

type Op = (&'static str, fn());

const OPS: &[Op] = &[
    ("chacha20", chacha20),
    ("chacha20poly1305", chacha20poly1305),
    ("aes256gcm", aes256gcm),
    ("poly1305", poly1305),
    ("hmac-sha256", hmac_sha256),
    ("hmac-sha512", hmac_sha512),
    ("mlkem768-decaps", mlkem768_decaps),
    ("mldsa65-sign", mldsa65_sign),
    ("x25519", x25519),
    ("x25519-derive-many", x25519_derive_many),
    ("ed25519-sign", ed25519_sign),
    ("ed25519-many", ed25519_many),
    ("sha512-many", sha512_many),
    ("p256-sign", p256_sign),
    ("p256-ecdh", p256_ecdh),
    ("secp256k1-sign", secp256k1_sign),
    ("secp256k1-ecdh", secp256k1_ecdh),
    ("rsa2048-sign", rsa_sign),
    ("rsa2048-oaep-decrypt", rsa_oaep_decrypt),
    ("rsa2048-pkcs1v15-decrypt", rsa_pkcs1v15_decrypt),
    ("x25519mlkem768-decaps", x25519mlkem768_decaps),
    ("xwing-decaps", xwing_decaps),
    ("hpke-x25519-open", hpke_x25519_open),
    ("hpke-xwing-open", hpke_xwing_open),
];

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--require-valgrind") {
        args.remove(i);
        if !valgrind::running_on_valgrind() {
            eprintln!("pqkit-ct: not running under valgrind (run: valgrind --error-exitcode=99 pqkit-ct ...)");
            std::process::exit(3);
        }
    }
    if args.first().map(String::as_str) == Some("check-log") {
        if args.len() != 2 {
            eprintln!("usage: pqkit-ct check-log LOG");
            std::process::exit(2);
        }
        let bad = checklog::check(&args[1]);
        std::process::exit(if bad == 0 { 0 } else { 1 });
    }
    if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") {
        eprintln!("usage: pqkit-ct [--require-valgrind] all | leak | OP...\n       pqkit-ct check-log LOG\nops:");
        for (n, _) in OPS {
            eprintln!("  {n}");
        }
        std::process::exit(if args.is_empty() { 2 } else { 0 });
    }
    for a in &args {
        match a.as_str() {
            "all" => {
                // The backends this run exercises (under valgrind: what its virtual CPU offers, with ADX).
                let chosen: Vec<String> = pqkit::families::chosen().map(|(f, b)| format!("{f}={b}")).collect();
                println!("backends {}", chosen.join(" "));
                OPS.iter().for_each(|(n, f)| {
                    f();
                    println!("ok {n}");
                })
            }
            "leak" => leak(),
            name => match OPS.iter().find(|(n, _)| *n == name) {
                Some((n, f)) => {
                    f();
                    println!("ok {n}");
                }
                None => {
                    eprintln!("pqkit-ct: unknown operation {name}");
                    std::process::exit(2);
                }
            },
        }
    }
}
