//! Report (a), public key: secp256k1 — key generation, ECDH, ECDSA (sign and verify a 1 KiB message,
//! SHA-256 included, like the Ed25519 rows) and BIP-340 Schnorr (sign and verify a 1 KiB message) — for pqkit,
//! libsecp256k1 (the `secp256k1` crate, which builds Bitcoin Core's C library), RustCrypto `k256` and, for
//! ECDSA and ECDH, OpenSSL (the vendored 3.6 through its EVP API, the group "secp256k1", by the P-256 rows'
//! adapter [`super::ecdsa::OsslEc`]). aws-lc-rs and ring have no secp256k1; OpenSSL has no BIP-340.
//!
//! ECDSA and Schnorr adapters implement [`SigImpl`] and are checked by [`sig_check`](super::pq::sig_check): every implementation
//! derives the same public key from the fixed secret (SEC1 compressed for ECDSA, x-only for Schnorr) and, all
//! three signing deterministically (ECDSA: RFC 6979 with low S; Schnorr: BIP-340 with all-zero auxiliary
//! randomness), the same signature; every implementation verifies every other's signature and rejects a
//! flipped bit. ECDH adapters implement [`EcdhImpl`], checked by [`ecdh_check`]: equal public keys, and equal
//! shared secrets (the x-coordinate, SEC1 §3.3.1) from both sides across every pair.
//!
//! ## What each row times
//! - keygen: the public key (SEC1 compressed) from 32 secret bytes varied by a counter, with each library's key
//!   objects.
//! - ECDH derive: the x-coordinate of d·Q for a prepared secret key and parsed peer key. libsecp256k1's
//!   `shared_secret_point` (x ‖ y, no hashing) stands for its raw ECDH; k256's `diffie_hellman`.
//! - ECDSA sign / verify: SHA-256 of the 1 KiB message inside the timing for every implementation (pqkit its
//!   own SHA-256, libsecp256k1 the `sha2` crate, k256 its own `Signer`), signatures as 64-byte `r ‖ s`. pqkit
//!   verifies with its low-S rule, as libsecp256k1 always does.
//! - Schnorr sign / verify: BIP-340 on the 1 KiB message, auxiliary randomness all zeros.
//! - OpenSSL signs with random nonces (so it is checked by cross verification only) and speaks DER: its
//!   adapter converts each signature to `r ‖ s` and makes s low (n − s when above n/2, as libsecp256k1
//!   requires) inside the timed sign, and back to DER inside the timed verify; public keys are compressed
//!   from its uncompressed output outside timing. These conversions are a few hundred nanoseconds.

use super::e;
use super::pq::{AnyKey, DSA_SEED, Id, Named, SigImpl};
use crate::registry::{Algorithm, Candidate, Check, Op, Report};
use std::sync::Arc;

fn key<T: 'static>(k: &AnyKey) -> Result<&T, String> {
    k.downcast_ref::<T>().ok_or_else(|| "key of another implementation".to_string())
}

#[inline]
fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.clear();
    out.extend_from_slice(bytes);
}

fn arr<const N: usize>(b: &[u8]) -> Result<[u8; N], String> {
    b.try_into().map_err(|_| format!("expected {N} bytes, got {}", b.len()))
}

/// The fixed secret key of the rows: the ML-DSA / Ed25519 seed (in [1, n − 1]).
pub const SECRET: [u8; 32] = DSA_SEED;
/// The peer's secret key of the ECDH rows.
pub const PEER_SECRET: [u8; 32] = [0x44; 32];
/// BIP-340 auxiliary randomness of the Schnorr rows.
const AUX: [u8; 32] = [0; 32];

const LIBSECP: Id = Id { name: "libsecp256k1", version: || super::v("secp256k1"), deterministic: true };
const K256: Id = Id { name: "rustcrypto", version: || super::v("k256"), deterministic: true };
#[cfg(feature = "pqkit-algs")]
const PQKIT: Id = Id { name: "pqkit", version: super::pqkit_version, deterministic: true };

// ---------------------------------------------------------------------------------------------- ECDSA

#[cfg(feature = "pqkit-algs")]
struct PqEcdsa;

#[cfg(feature = "pqkit-algs")]
impl Named for PqEcdsa {
    fn id(&self) -> Id {
        PQKIT
    }
}

#[cfg(feature = "pqkit-algs")]
impl SigImpl for PqEcdsa {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = pqkit::ec::secp256k1::SigningKey::from_bytes(seed).map_err(e)?;
        put(vk, sk.verifying_key().to_sec1_bytes(true).as_bytes());
        Ok(Box::new(sk))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(pqkit::ec::secp256k1::VerifyingKey::from_sec1_bytes(vk).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        put(out, &key::<pqkit::ec::secp256k1::SigningKey>(sk)?.sign(msg).to_bytes());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let vk = key::<pqkit::ec::secp256k1::VerifyingKey>(vk)?;
        let Ok(sig) = pqkit::ec::secp256k1::Signature::from_bytes(sig) else { return Ok(false) };
        Ok(vk.verify_low_s(msg, &sig).is_ok())
    }
}

/// libsecp256k1 through the `secp256k1` crate (its global context), SHA-256 by the `sha2` crate.
struct LibsecpEcdsa;

impl Named for LibsecpEcdsa {
    fn id(&self) -> Id {
        LIBSECP
    }
}

fn sha256(msg: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(msg).into()
}

impl SigImpl for LibsecpEcdsa {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = secp256k1::SecretKey::from_secret_bytes(*seed).map_err(e)?;
        put(vk, &secp256k1::PublicKey::from_secret_key(&sk).serialize());
        Ok(Box::new(sk))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(secp256k1::PublicKey::from_slice(vk).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let m = secp256k1::Message::from_digest(sha256(msg));
        put(out, &secp256k1::ecdsa::sign(m, key::<secp256k1::SecretKey>(sk)?).serialize_compact());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let vk = key::<secp256k1::PublicKey>(vk)?;
        let Ok(sig) = secp256k1::ecdsa::Signature::from_compact(sig) else { return Ok(false) };
        let m = secp256k1::Message::from_digest(sha256(msg));
        Ok(secp256k1::ecdsa::verify(&sig, m, vk).is_ok())
    }
}

/// RustCrypto `k256` (`ecdsa::SigningKey`, RFC 6979, low S).
struct K256Ecdsa;

impl Named for K256Ecdsa {
    fn id(&self) -> Id {
        K256
    }
}

impl SigImpl for K256Ecdsa {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        use k256::elliptic_curve::sec1::ToSec1Point as _;
        let sk = k256::ecdsa::SigningKey::from_bytes(&(*seed).into()).map_err(e)?;
        put(vk, sk.verifying_key().as_affine().to_sec1_point(true).as_bytes());
        Ok(Box::new(sk))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(k256::ecdsa::VerifyingKey::from_sec1_bytes(vk).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use k256::ecdsa::signature::Signer as _;
        let sig: k256::ecdsa::Signature = key::<k256::ecdsa::SigningKey>(sk)?.sign(msg);
        put(out, &sig.to_bytes());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        use k256::ecdsa::signature::Verifier as _;
        let vk = key::<k256::ecdsa::VerifyingKey>(vk)?;
        let Ok(sig) = k256::ecdsa::Signature::from_slice(sig) else { return Ok(false) };
        Ok(vk.verify(msg, &sig).is_ok())
    }
}

/// OpenSSL through the P-256 rows' EVP adapter with the group "secp256k1" (see the module docs).
struct OsslK1(super::ecdsa::OsslEc);

const OPENSSL: Id = Id { name: "openssl", version: super::ossl, deterministic: false };

impl OsslK1 {
    fn new() -> Self {
        OsslK1(super::ecdsa::OsslEc { group: c"secp256k1", nid: openssl::nid::Nid::SECP256K1 })
    }
}

impl Named for OsslK1 {
    fn id(&self) -> Id {
        OPENSSL
    }
}

/// The compressed SEC1 form of an uncompressed point.
fn compress(p: &[u8]) -> Result<Vec<u8>, String> {
    if p.len() != 65 || p[0] != 4 {
        return Err("expected an uncompressed SEC1 point".into());
    }
    let mut v = vec![0x02 | (p[64] & 1)];
    v.extend_from_slice(&p[1..33]);
    Ok(v)
}

/// The group order n, big-endian.
const N: [u8; 32] = [
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 0xBA, 0xAE, 0xDC,
    0xE6, 0xAF, 0x48, 0xA0, 0x3B, 0xBF, 0xD2, 0x5E, 0x8C, 0xD0, 0x36, 0x41, 0x41,
];

/// `r ‖ s` (s made low) from a DER `Ecdsa-Sig-Value`.
fn der_to_rs_low(der: &[u8]) -> Result<[u8; 64], String> {
    let bad = || "malformed DER signature".to_string();
    if der.len() < 2 || der[0] != 0x30 || der[1] as usize != der.len() - 2 {
        return Err(bad());
    }
    let mut out = [0u8; 64];
    let mut pos = 2;
    for half in 0..2 {
        if der.len() < pos + 2 || der[pos] != 0x02 {
            return Err(bad());
        }
        let len = der[pos + 1] as usize;
        let mut v = der.get(pos + 2..pos + 2 + len).ok_or_else(bad)?;
        while v.len() > 1 && v[0] == 0 {
            v = &v[1..];
        }
        if v.len() > 32 {
            return Err(bad());
        }
        out[32 * half + 32 - v.len()..32 * (half + 1)].copy_from_slice(v);
        pos += 2 + len;
    }
    // s > n/2  ⇔  2s > n: then s ← n − s.
    let s: [u8; 32] = out[32..].try_into().map_err(|_| bad())?;
    let mut twice = [0u8; 33];
    let mut carry = 0u16;
    for i in (0..32).rev() {
        let t = ((s[i] as u16) << 1) | carry;
        twice[i + 1] = t as u8;
        carry = t >> 8;
    }
    twice[0] = carry as u8;
    let mut n33 = [0u8; 33];
    n33[1..].copy_from_slice(&N);
    if twice > n33 {
        let mut borrow = 0i16;
        for i in (0..32).rev() {
            let t = N[i] as i16 - s[i] as i16 - borrow;
            out[32 + i] = t.rem_euclid(256) as u8;
            borrow = (t < 0) as i16;
        }
    }
    Ok(out)
}

/// DER `Ecdsa-Sig-Value` of `r ‖ s`.
fn rs_to_der(sig: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(72);
    for half in sig.chunks(32) {
        let mut v = half;
        while v.len() > 1 && v[0] == 0 {
            v = &v[1..];
        }
        body.push(0x02);
        if v[0] & 0x80 != 0 {
            body.push(v.len() as u8 + 1);
            body.push(0);
        } else {
            body.push(v.len() as u8);
        }
        body.extend_from_slice(v);
    }
    let mut der = vec![0x30, body.len() as u8];
    der.extend_from_slice(&body);
    der
}

impl SigImpl for OsslK1 {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let mut unc = Vec::new();
        let k = SigImpl::keygen(&self.0, seed, &mut unc)?;
        put(vk, &compress(&unc)?);
        Ok(k)
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        self.0.parse_vk(vk)
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let mut der = Vec::with_capacity(80);
        self.0.sign(sk, msg, &mut der)?;
        put(out, &der_to_rs_low(&der)?);
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        if sig.len() != 64 {
            return Ok(false);
        }
        self.0.verify(vk, msg, &rs_to_der(sig))
    }
}

impl EcdhImpl for OsslK1 {
    fn public(&self, private: &[u8; 32]) -> Result<Vec<u8>, String> {
        let mut unc = Vec::new();
        super::ec::DhImpl::keygen(&self.0, private, &mut unc)?;
        compress(&unc)
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        super::ec::DhImpl::derive_op(&self.0, private, peer)
    }
}

// ---------------------------------------------------------------------------------------------- Schnorr

#[cfg(feature = "pqkit-algs")]
struct PqSchnorr;

#[cfg(feature = "pqkit-algs")]
impl Named for PqSchnorr {
    fn id(&self) -> Id {
        PQKIT
    }
}

#[cfg(feature = "pqkit-algs")]
impl SigImpl for PqSchnorr {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = pqkit::ec::secp256k1::schnorr::SigningKey::from_bytes(seed).map_err(e)?;
        put(vk, &sk.verifying_key().to_bytes());
        Ok(Box::new(sk))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(pqkit::ec::secp256k1::schnorr::VerifyingKey::from_bytes(vk).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        put(out, &key::<pqkit::ec::secp256k1::schnorr::SigningKey>(sk)?.sign_with_aux(msg, &AUX).to_bytes());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let vk = key::<pqkit::ec::secp256k1::schnorr::VerifyingKey>(vk)?;
        let Ok(sig) = pqkit::ec::secp256k1::schnorr::Signature::from_bytes(sig) else { return Ok(false) };
        Ok(vk.verify(msg, &sig).is_ok())
    }
}

/// libsecp256k1's `schnorrsig` module (`Keypair`, `XOnlyPublicKey`).
struct LibsecpSchnorr;

impl Named for LibsecpSchnorr {
    fn id(&self) -> Id {
        LIBSECP
    }
}

impl SigImpl for LibsecpSchnorr {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = secp256k1::SecretKey::from_secret_bytes(*seed).map_err(e)?;
        let kp = secp256k1::Keypair::from_secret_key(&sk);
        put(vk, &kp.x_only_public_key().0.to_byte_array());
        Ok(Box::new(kp))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(secp256k1::XOnlyPublicKey::from_byte_array(arr::<32>(vk)?).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let sig = secp256k1::schnorr::sign_with_aux_rand(msg, key::<secp256k1::Keypair>(sk)?, &AUX);
        put(out, &sig.to_byte_array());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let vk = key::<secp256k1::XOnlyPublicKey>(vk)?;
        let sig = secp256k1::schnorr::Signature::from_byte_array(arr::<64>(sig)?);
        Ok(secp256k1::schnorr::verify(&sig, msg, vk).is_ok())
    }
}

/// RustCrypto `k256::schnorr`.
struct K256Schnorr;

impl Named for K256Schnorr {
    fn id(&self) -> Id {
        K256
    }
}

impl SigImpl for K256Schnorr {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = k256::schnorr::SigningKey::from_bytes(&(*seed).into()).map_err(e)?;
        put(vk, &sk.verifying_key().to_bytes());
        Ok(Box::new(sk))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(k256::schnorr::VerifyingKey::from_slice(vk).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let sig = key::<k256::schnorr::SigningKey>(sk)?.sign_raw(msg, &AUX).map_err(e)?;
        put(out, &sig.to_bytes());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let vk = key::<k256::schnorr::VerifyingKey>(vk)?;
        let Ok(sig) = k256::schnorr::Signature::from_slice(sig) else { return Ok(false) };
        Ok(vk.verify_raw(msg, &sig).is_ok())
    }
}

// ---------------------------------------------------------------------------------------------- ECDH

/// One secp256k1 ECDH implementation.
pub trait EcdhImpl: Named + Send + Sync {
    /// The SEC1 compressed public key of the secret `private`.
    fn public(&self, private: &[u8; 32]) -> Result<Vec<u8>, String>;
    /// The timed operation: the shared x-coordinate of `private` with the SEC1 public key `peer`, key objects
    /// built here, outside timing.
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String>;
}

#[cfg(feature = "pqkit-algs")]
impl EcdhImpl for PqEcdsa {
    fn public(&self, private: &[u8; 32]) -> Result<Vec<u8>, String> {
        let sk = pqkit::ec::secp256k1::SecretKey::from_bytes(private).map_err(e)?;
        Ok(sk.public_key().to_sec1_bytes(true).as_bytes().to_vec())
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        let sk = pqkit::ec::secp256k1::SecretKey::from_bytes(private).map_err(e)?;
        let pk = pqkit::ec::secp256k1::PublicKey::from_sec1_bytes(peer).map_err(e)?;
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            put(out, sk.diffie_hellman(&pk).map_err(e)?.as_bytes());
            Ok(())
        }))
    }
}

impl EcdhImpl for LibsecpEcdsa {
    fn public(&self, private: &[u8; 32]) -> Result<Vec<u8>, String> {
        let sk = secp256k1::SecretKey::from_secret_bytes(*private).map_err(e)?;
        Ok(secp256k1::PublicKey::from_secret_key(&sk).serialize().to_vec())
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        let sk = secp256k1::SecretKey::from_secret_bytes(*private).map_err(e)?;
        let pk = secp256k1::PublicKey::from_slice(peer).map_err(e)?;
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            put(out, &secp256k1::ecdh::shared_secret_point(&pk, &sk)[..32]);
            Ok(())
        }))
    }
}

impl EcdhImpl for K256Ecdsa {
    fn public(&self, private: &[u8; 32]) -> Result<Vec<u8>, String> {
        use k256::elliptic_curve::sec1::ToSec1Point as _;
        let sk = k256::SecretKey::from_bytes(&(*private).into()).map_err(e)?;
        Ok(sk.public_key().as_affine().to_sec1_point(true).as_bytes().to_vec())
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        let sk = k256::SecretKey::from_bytes(&(*private).into()).map_err(e)?;
        let pk = k256::PublicKey::from_sec1_bytes(peer).map_err(e)?;
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let s = k256::ecdh::diffie_hellman(sk.to_nonzero_scalar(), pk.as_affine());
            put(out, s.raw_secret_bytes());
            Ok(())
        }))
    }
}

/// Every implementation derives the same public keys from [`SECRET`] and [`PEER_SECRET`], and every pair
/// (a's secret with b's public key, and b's secret with a's) computes one shared secret, through the timed
/// operation itself.
pub fn ecdh_check(impls: &[Arc<dyn EcdhImpl>]) -> Result<(), String> {
    let run = |op: &mut Box<dyn Op>| -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        op.run(&mut [], &mut out)?;
        Ok(out)
    };
    let first = &impls[0];
    let (pa, pb) = (first.public(&SECRET)?, first.public(&PEER_SECRET)?);
    for d in impls {
        if d.public(&SECRET)? != pa || d.public(&PEER_SECRET)? != pb {
            return Err(format!("{} and {} derive different public keys", d.name(), first.name()));
        }
    }
    let want = run(&mut first.derive_op(&SECRET, &pb)?)?;
    for a in impls {
        for b in impls {
            let s1 = run(&mut a.derive_op(&SECRET, &b.public(&PEER_SECRET)?)?)?;
            let s2 = run(&mut b.derive_op(&PEER_SECRET, &a.public(&SECRET)?)?)?;
            if s1 != want || s2 != want {
                return Err(format!("ECDH: {} and {} compute different shared secrets", a.name(), b.name()));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------- registry

/// The ECDSA implementations, pqkit first.
pub fn ecdsa_impls() -> Vec<Arc<dyn SigImpl>> {
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn SigImpl>> = vec![Arc::new(LibsecpEcdsa), Arc::new(K256Ecdsa), Arc::new(OsslK1::new())];
    #[cfg(feature = "pqkit-algs")]
    v.insert(0, Arc::new(PqEcdsa));
    v
}

/// The BIP-340 implementations, pqkit first.
pub fn schnorr_impls() -> Vec<Arc<dyn SigImpl>> {
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn SigImpl>> = vec![Arc::new(LibsecpSchnorr), Arc::new(K256Schnorr)];
    #[cfg(feature = "pqkit-algs")]
    v.insert(0, Arc::new(PqSchnorr));
    v
}

/// The ECDH implementations, pqkit first.
pub fn ecdh_impls() -> Vec<Arc<dyn EcdhImpl>> {
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn EcdhImpl>> = vec![Arc::new(LibsecpEcdsa), Arc::new(K256Ecdsa), Arc::new(OsslK1::new())];
    #[cfg(feature = "pqkit-algs")]
    v.insert(0, Arc::new(PqEcdsa));
    v
}

/// Signature rows ("keygen" only for ECDSA: the Schnorr key is the same scalar multiplication).
fn sig_rows(name: &str, ops: &[&'static str], impls: Vec<Arc<dyn SigImpl>>) -> Vec<Algorithm> {
    super::pq::curve_sig_rows(name, ops, &impls, &[])
}

/// The family's algorithms: keygen, ECDH, ECDSA sign/verify, Schnorr sign/verify.
pub fn algorithms() -> Vec<Algorithm> {
    let mut v = sig_rows("secp256k1 ECDSA", &["keygen", "sign", "verify"], ecdsa_impls());
    let impls = ecdh_impls();
    let list = impls.clone();
    let mut alg =
        Algorithm::public_key("secp256k1 ECDH", "derive", 0, Check::Custom(Box::new(move || ecdh_check(&list))))
            .reports(&[Report::A]);
    for d in &impls {
        let d2 = d.clone();
        let setup = move |_size: usize| -> Result<Box<dyn Op>, String> {
            let peer = d2.public(&PEER_SECRET)?;
            d2.derive_op(&SECRET, &peer)
        };
        alg = alg.with(Candidate::new(d.name(), d.version(), setup));
    }
    v.push(alg);
    v.extend(sig_rows("secp256k1 Schnorr", &["sign", "verify"], schnorr_impls()));
    v
}
