//! Constant-time validation of pqkit under valgrind memcheck (issue 18 item 4), the technique of BoringSSL
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
use pqkit::hash::sha2::Sha256;
use pqkit::mac::Hmac;
use pqkit::mldsa::{MlDsa65, Params as _, SigningKey as MlDsaSigningKey};
use pqkit::mlkem::{Ciphertext, DecapsulationKey, MlKem768};
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
/// open a forged tag (the failure path re-encrypts the buffer).
fn aead<A: Aead>(name: &str, make: impl Fn(&[u8]) -> A) {
    let key: [u8; 32] = bytes(1);
    let msg: [u8; 300] = bytes(2);
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

fn chacha20poly1305() {
    aead("ChaCha20-Poly1305", |k| ChaCha20Poly1305::new(k).expect("key"));
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
    ("chacha20poly1305", chacha20poly1305),
    ("aes256gcm", aes256gcm),
    ("poly1305", poly1305),
    ("hmac-sha256", hmac_sha256),
    ("mlkem768-decaps", mlkem768_decaps),
    ("mldsa65-sign", mldsa65_sign),
    ("x25519", x25519),
    ("ed25519-sign", ed25519_sign),
    ("p256-sign", p256_sign),
    ("p256-ecdh", p256_ecdh),
    ("secp256k1-sign", secp256k1_sign),
    ("secp256k1-ecdh", secp256k1_ecdh),
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
            "all" => OPS.iter().for_each(|(n, f)| {
                f();
                println!("ok {n}");
            }),
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
