//! Report (a), public key: X25519 (keygen, derive) and Ed25519 (keygen, sign, verify on a 1 KiB message, the
//! message length of the ML-DSA rows), for pqkit, OpenSSL (the vendored 3.6, through its EVP API: see
//! [`super::ossl_ffi`]), aws-lc-rs, ring and RustCrypto (`x25519-dalek`, `ed25519-dalek`).
//!
//! Ed25519 adapters implement [`SigImpl`] from [`super::pq`], and are checked by the same [`sig_check`](super::pq::sig_check) as
//! ML-DSA: Ed25519 is deterministic, so every implementation must derive the same public key from the seed and
//! the same signature, and every implementation verifies every other's signature and rejects a flipped bit.
//!
//! X25519 adapters implement [`DhImpl`], checked by [`dh_check`]: from the RFC 7748 §6.1 private keys every
//! implementation that takes a private key must compute the RFC's public keys and shared secret, from both
//! sides; ring, whose X25519 keys are ephemeral (generated from its own RNG, consumed by the one agreement they
//! serve), is checked by a cross agreement: its key agrees with every other implementation's public key and
//! that implementation, agreeing from the other side with ring's public key, must get the same secret.
//!
//! ## What each row times
//! - X25519 keygen: the public key from 32 private bytes (a fresh key object each time, the bytes varied by a
//!   counter so that the median runs over many keys). ring cannot take private bytes: its row generates an
//!   ephemeral key from `SystemRandom` (one `getrandom` call) and computes its public key.
//! - X25519 derive: the shared secret of a prepared private key with a prepared peer public key. ring cannot
//!   reuse a private key: its row generates an ephemeral key (one `getrandom` call, no public key) and agrees.
//!   aws-lc-rs's `agree` consumes its parsed peer key, so each call passes a clone of one parsed key (an
//!   `EVP_PKEY` reference and a 32-byte copy); it creates its `EVP_PKEY_CTX` per call, which its API does not let
//!   a caller keep. OpenSSL keeps one derivation context with the peer set.
//! - X25519 derive_many 8 / 64: 8 or 64 agreements per timed call, each of its own private key with its own peer
//!   public key (prepared outside timing). pqkit runs them through `x25519::derive_many`; every peer runs its
//!   one-at-a-time derive (as in the derive row) 8 or 64 times, since none has a batch API. The row's ratio is
//!   therefore the per-agreement ratio of the batch against one-at-a-time.
//! - Ed25519 keygen: the key pair from a 32-byte seed (varied by a counter), i.e. SHA-512 and a fixed-base
//!   multiplication, plus each library's key object.
//! - Ed25519 sign / verify: a 1 KiB message with a key made (and for verify, a public key parsed) outside timing.
//!   ring has no parsed public-key type: its verification parses the 32 bytes in every call, as its API does.
//!   RustCrypto verifies with `verify_strict` (rejects small-order keys and R, as pqkit does).
//! - Ed25519 keygen_many 8 / 64, sign_many 8 / 64: 8 or 64 key pairs (from seeds varied by a counter) or 8
//!   or 64 signatures of 1 KiB messages (under one key made outside timing) per timed call. pqkit runs them
//!   through `SigningKey::from_seeds_many` and `ed25519::sign_many`; every peer runs its one-at-a-time keygen
//!   or sign (as in the keygen and sign rows) 8 or 64 times, since none has a batch API. The row's ratio is
//!   therefore the per-operation ratio of the batch against one-at-a-time.

use super::e;
use super::ossl_ffi as ossl;
use super::pq::{AnyKey, Id, Named, SigImpl};
use crate::registry::{Algorithm, Candidate, Check, Op, Report};
use std::sync::Arc;

fn key<T: 'static>(k: &AnyKey) -> Result<&T, String> {
    k.downcast_ref::<T>().ok_or_else(|| "key of another implementation".to_string())
}

pub(super) fn owned<T: 'static>(k: AnyKey) -> Result<T, String> {
    k.downcast::<T>().map(|b| *b).map_err(|_| "key of another implementation".to_string())
}

/// Replaces `out` with `bytes`.
#[inline]
pub(super) fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.clear();
    out.extend_from_slice(bytes);
}

fn arr32(b: &[u8]) -> Result<[u8; 32], String> {
    b.try_into().map_err(|_| format!("expected 32 bytes, got {}", b.len()))
}

fn hex32(s: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap_or(0);
    }
    out
}

/// RFC 7748 §6.1: Alice's private key.
pub fn x25519_private_a() -> [u8; 32] {
    hex32("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
}
/// RFC 7748 §6.1: Bob's private key.
pub fn x25519_private_b() -> [u8; 32] {
    hex32("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
}
/// RFC 7748 §6.1: Alice's public key.
pub fn x25519_public_a() -> [u8; 32] {
    hex32("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
}
/// RFC 7748 §6.1: Bob's public key.
pub fn x25519_public_b() -> [u8; 32] {
    hex32("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
}
/// RFC 7748 §6.1: the shared secret.
pub fn x25519_shared() -> [u8; 32] {
    hex32("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
}

/// Fixed Ed25519 seed: the ML-DSA seed, so that both signature families sign with the same 32 bytes.
pub const ED25519_SEED: [u8; 32] = super::pq::DSA_SEED;
/// Length of the signed message (the ML-DSA rows' length).
pub const MSG_LEN: usize = super::pq::MSG_LEN;

/// One X25519 implementation.
pub trait DhImpl: Named + Send + Sync {
    /// A key pair for the 32 private bytes `private`, or, if the implementation cannot take private bytes
    /// ([`Id::deterministic`] false: ring), a fresh ephemeral key that ignores them; writes the public key into
    /// `public`.
    fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String>;
    /// One agreement of a key from [`keygen`](Self::keygen) with the public key `peer`, consuming the key (ring's
    /// are single-use); writes the shared secret into `out`.
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String>;
    /// The timed derive operation: the agreement of `private` with `peer`, whose key objects are built here,
    /// outside timing; every call writes the shared secret into `out`. An implementation without reusable private
    /// keys generates a fresh one in every call, and ignores `private`.
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String>;
    /// The timed batch operation: the agreements of every `(private, peer)` pair, the shared secrets written
    /// into `out` in order. By default one at a time through [`derive_op`](Self::derive_op)'s operations (built
    /// here, outside timing); pqkit overrides it with its batch API.
    fn derive_many_op(&self, pairs: &[([u8; 32], [u8; 32])]) -> Result<Box<dyn Op>, String> {
        let mut ops = pairs.iter().map(|(k, p)| self.derive_op(k, p)).collect::<Result<Vec<_>, _>>()?;
        let mut one = Vec::with_capacity(64);
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            out.clear();
            for op in ops.iter_mut() {
                op.run(&mut [], &mut one)?;
                out.extend_from_slice(&one);
            }
            Ok(())
        }))
    }
}

// ---------------------------------------------------------------------------------------------- adapters

/// RustCrypto `x25519-dalek`.
const RUSTCRYPTO_X: Id = Id { name: "rustcrypto", version: || super::v("x25519-dalek"), deterministic: true };
/// RustCrypto `ed25519-dalek`.
const RUSTCRYPTO_ED: Id = Id { name: "rustcrypto", version: || super::v("ed25519-dalek"), deterministic: true };
/// aws-lc-rs.
const AWS_LC_RS: Id = Id { name: "aws-lc-rs", version: || super::v("aws-lc-rs"), deterministic: true };
/// ring, for Ed25519 (keys from a seed).
const RING: Id = Id { name: "ring", version: || super::v("ring"), deterministic: true };
/// ring, for X25519: ephemeral keys from its own RNG only.
const RING_EPHEMERAL: Id = Id { name: "ring", version: || super::v("ring"), deterministic: false };
/// OpenSSL.
const OPENSSL: Id = Id { name: "openssl", version: super::ossl, deterministic: true };
/// pqkit.
#[cfg(feature = "pqkit-algs")]
const PQKIT: Id = Id { name: "pqkit", version: super::pqkit_version, deterministic: true };

/// pqkit's X25519.
#[cfg(feature = "pqkit-algs")]
struct PqX;

#[cfg(feature = "pqkit-algs")]
impl Named for PqX {
    fn id(&self) -> Id {
        PQKIT
    }
}

#[cfg(feature = "pqkit-algs")]
impl DhImpl for PqX {
    fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = pqkit::ec::x25519::X25519SecretKey::from_array(*private);
        put(public, sk.public_key().as_bytes());
        Ok(Box::new(sk))
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let sk = owned::<pqkit::ec::x25519::X25519SecretKey>(key)?;
        let pk = pqkit::ec::x25519::X25519PublicKey::from_bytes(peer).map_err(e)?;
        put(out, sk.diffie_hellman(&pk).map_err(e)?.as_bytes());
        Ok(())
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        let sk = pqkit::ec::x25519::X25519SecretKey::from_array(*private);
        let pk = pqkit::ec::x25519::X25519PublicKey::from_bytes(peer).map_err(e)?;
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            put(out, sk.diffie_hellman(&pk).map_err(e)?.as_bytes());
            Ok(())
        }))
    }
    fn derive_many_op(&self, pairs: &[([u8; 32], [u8; 32])]) -> Result<Box<dyn Op>, String> {
        use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey, derive_many};
        let sks: Vec<X25519SecretKey> = pairs.iter().map(|(k, _)| X25519SecretKey::from_array(*k)).collect();
        let pks: Vec<X25519PublicKey> = pairs.iter().map(|(_, p)| X25519PublicKey::from(*p)).collect();
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            // The slice of references the API takes is built per call, as a server would build it.
            let refs: Vec<_> = sks.iter().zip(&pks).collect();
            out.clear();
            for r in derive_many(&refs) {
                out.extend_from_slice(r.map_err(e)?.as_bytes());
            }
            Ok(())
        }))
    }
}

/// RustCrypto `x25519-dalek` (`StaticSecret`, the reusable private key).
struct RcX;

impl Named for RcX {
    fn id(&self) -> Id {
        RUSTCRYPTO_X
    }
}

impl DhImpl for RcX {
    fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = x25519_dalek::StaticSecret::from(*private);
        put(public, x25519_dalek::PublicKey::from(&sk).as_bytes());
        Ok(Box::new(sk))
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let sk = owned::<x25519_dalek::StaticSecret>(key)?;
        let pk = x25519_dalek::PublicKey::from(arr32(peer)?);
        put(out, sk.diffie_hellman(&pk).as_bytes());
        Ok(())
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        let sk = x25519_dalek::StaticSecret::from(*private);
        let pk = x25519_dalek::PublicKey::from(arr32(peer)?);
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            put(out, sk.diffie_hellman(&pk).as_bytes());
            Ok(())
        }))
    }
}

/// aws-lc-rs `agreement` (`PrivateKey`, reusable, from private bytes).
struct AwsX;

impl Named for AwsX {
    fn id(&self) -> Id {
        AWS_LC_RS
    }
}

impl DhImpl for AwsX {
    fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        aws_dh::keygen(&aws_lc_rs::agreement::X25519, private, public)
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        aws_dh::agree(&aws_lc_rs::agreement::X25519, key, peer, out)
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        aws_dh::derive_op(&aws_lc_rs::agreement::X25519, private, peer)
    }
}

/// aws-lc-rs `agreement` for any of its curves (X25519 here, P-256 in `ecdsa`): a `PrivateKey` from the private
/// bytes, agreements against an `UnparsedPublicKey` (the timed derive parses the peer's key once, outside timing).
pub(super) mod aws_dh {
    use super::{AnyKey, Op, e, owned, put};
    use aws_lc_rs::agreement::{Algorithm, ParsedPublicKey, PrivateKey, UnparsedPublicKey, agree as aws_agree};

    /// [`DhImpl::keygen`](super::DhImpl::keygen) on `alg`.
    pub(in super::super) fn keygen(
        alg: &'static Algorithm,
        private: &[u8; 32],
        public: &mut Vec<u8>,
    ) -> Result<AnyKey, String> {
        let sk = PrivateKey::from_private_key(alg, private).map_err(e)?;
        put(public, sk.compute_public_key().map_err(e)?.as_ref());
        Ok(Box::new(sk))
    }

    /// [`DhImpl::agree`](super::DhImpl::agree) on `alg`.
    pub(in super::super) fn agree(
        alg: &'static Algorithm,
        key: AnyKey,
        peer: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let sk = owned::<PrivateKey>(key)?;
        aws_agree(&sk, UnparsedPublicKey::new(alg, peer), "aws-lc-rs agree failed".to_string(), |s| {
            put(out, s);
            Ok(())
        })
    }

    /// [`DhImpl::derive_op`](super::DhImpl::derive_op) on `alg`.
    pub(in super::super) fn derive_op(
        alg: &'static Algorithm,
        private: &[u8; 32],
        peer: &[u8],
    ) -> Result<Box<dyn Op>, String> {
        let sk = PrivateKey::from_private_key(alg, private).map_err(e)?;
        let pk = ParsedPublicKey::try_from(UnparsedPublicKey::new(alg, peer)).map_err(e)?;
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            aws_agree(&sk, pk.clone(), "aws-lc-rs agree failed".to_string(), |s| {
                put(out, s);
                Ok(())
            })
        }))
    }
}

/// ring `agreement`: only `EphemeralPrivateKey`, generated from a `SecureRandom` and consumed by
/// `agree_ephemeral`, so the private bytes given are ignored (see the module docs).
struct RingX;

impl Named for RingX {
    fn id(&self) -> Id {
        RING_EPHEMERAL
    }
}

impl DhImpl for RingX {
    fn keygen(&self, _private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        use ring::agreement::{EphemeralPrivateKey, X25519};
        let sk = EphemeralPrivateKey::generate(&X25519, &ring::rand::SystemRandom::new()).map_err(e)?;
        put(public, sk.compute_public_key().map_err(e)?.as_ref());
        Ok(Box::new(sk))
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use ring::agreement::{EphemeralPrivateKey, UnparsedPublicKey, X25519, agree_ephemeral};
        let sk = owned::<EphemeralPrivateKey>(key)?;
        agree_ephemeral(sk, &UnparsedPublicKey::new(&X25519, peer), |s| put(out, s)).map_err(e)
    }
    fn derive_op(&self, _private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        use ring::agreement::{EphemeralPrivateKey, UnparsedPublicKey, X25519, agree_ephemeral};
        let rng = ring::rand::SystemRandom::new();
        let pk = UnparsedPublicKey::new(&X25519, arr32(peer)?);
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let sk = EphemeralPrivateKey::generate(&X25519, &rng).map_err(e)?;
            agree_ephemeral(sk, &pk, |s| put(out, s)).map_err(e)
        }))
    }
}

/// OpenSSL X25519 (`EVP_PKEY` from the raw private key; derivation through [`ossl::Agreement`]).
struct OsslX;

impl Named for OsslX {
    fn id(&self) -> Id {
        OPENSSL
    }
}

impl DhImpl for OsslX {
    fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        let pkey = ossl::Pkey::private_from_raw(c"X25519", private)?;
        pkey.raw_public_key(public)?;
        Ok(Box::new(pkey))
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let peer = ossl::Pkey::public_from_raw(c"X25519", peer)?;
        ossl::Agreement::new(owned::<ossl::Pkey>(key)?, peer)?.derive(out)
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        let ours = ossl::Pkey::private_from_raw(c"X25519", private)?;
        let mut agreement = ossl::Agreement::new(ours, ossl::Pkey::public_from_raw(c"X25519", peer)?)?;
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| agreement.derive(out)))
    }
}

/// pqkit's Ed25519.
#[cfg(feature = "pqkit-algs")]
struct PqEd;

#[cfg(feature = "pqkit-algs")]
impl Named for PqEd {
    fn id(&self) -> Id {
        PQKIT
    }
}

#[cfg(feature = "pqkit-algs")]
impl SigImpl for PqEd {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = pqkit::ec::ed25519::SigningKey::from_seed(seed);
        put(vk, sk.verifying_key().as_bytes());
        Ok(Box::new(sk))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(pqkit::ec::ed25519::VerifyingKey::from_bytes(vk).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        put(out, key::<pqkit::ec::ed25519::SigningKey>(sk)?.sign(msg).as_bytes());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let vk = key::<pqkit::ec::ed25519::VerifyingKey>(vk)?;
        let Ok(sig) = pqkit::ec::ed25519::Signature::from_bytes(sig) else { return Ok(false) };
        Ok(vk.verify(msg, &sig).is_ok())
    }
    fn keygen_many_op(&self, seeds: &[[u8; 32]]) -> Option<Result<Box<dyn Op>, String>> {
        let seeds = seeds.to_vec();
        Some(Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            out.clear();
            for k in pqkit::ec::ed25519::SigningKey::from_seeds_many(&seeds) {
                out.extend_from_slice(k.verifying_key().as_bytes());
            }
            Ok(())
        })))
    }
    fn sign_many_op(&self, seed: &[u8; 32], msgs: &[Vec<u8>]) -> Option<Result<Box<dyn Op>, String>> {
        let sk = pqkit::ec::ed25519::SigningKey::from_seed(seed);
        let msgs = msgs.to_vec();
        Some(Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            // The slice of pairs the API takes is built per call, as a server would build it.
            let items: Vec<(&pqkit::ec::ed25519::SigningKey, &[u8])> =
                msgs.iter().map(|m| (&sk, m.as_slice())).collect();
            out.clear();
            for sig in pqkit::ec::ed25519::sign_many(&items) {
                out.extend_from_slice(sig.as_bytes());
            }
            Ok(())
        })))
    }
}

/// RustCrypto `ed25519-dalek` (strict verification).
struct RcEd;

impl Named for RcEd {
    fn id(&self) -> Id {
        RUSTCRYPTO_ED
    }
}

impl SigImpl for RcEd {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = ed25519_dalek::SigningKey::from_bytes(seed);
        put(vk, sk.verifying_key().as_bytes());
        Ok(Box::new(sk))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(ed25519_dalek::VerifyingKey::from_bytes(&arr32(vk)?).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use ed25519_dalek::Signer;
        put(out, &key::<ed25519_dalek::SigningKey>(sk)?.sign(msg).to_bytes());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let vk = key::<ed25519_dalek::VerifyingKey>(vk)?;
        let Ok(sig) = ed25519_dalek::Signature::from_slice(sig) else { return Ok(false) };
        Ok(vk.verify_strict(msg, &sig).is_ok())
    }
}

/// aws-lc-rs `signature::Ed25519KeyPair` (from the seed) and `signature::ParsedPublicKey`.
struct AwsEd;

impl Named for AwsEd {
    fn id(&self) -> Id {
        AWS_LC_RS
    }
}

impl SigImpl for AwsEd {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        use aws_lc_rs::signature::KeyPair;
        let kp = aws_lc_rs::signature::Ed25519KeyPair::from_seed_unchecked(seed).map_err(e)?;
        put(vk, kp.public_key().as_ref());
        Ok(Box::new(kp))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        use aws_lc_rs::signature::{ED25519, ParsedPublicKey};
        Ok(Box::new(ParsedPublicKey::new(&ED25519, vk).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        put(out, key::<aws_lc_rs::signature::Ed25519KeyPair>(sk)?.sign(msg).as_ref());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        Ok(key::<aws_lc_rs::signature::ParsedPublicKey>(vk)?.verify_sig(msg, sig).is_ok())
    }
}

/// ring `signature::Ed25519KeyPair` (from the seed); verification through `UnparsedPublicKey`, ring's only
/// public-key type.
struct RingEd;

impl Named for RingEd {
    fn id(&self) -> Id {
        RING
    }
}

impl SigImpl for RingEd {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        use ring::signature::KeyPair;
        let kp = ring::signature::Ed25519KeyPair::from_seed_unchecked(seed).map_err(e)?;
        put(vk, kp.public_key().as_ref());
        Ok(Box::new(kp))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, arr32(vk)?)))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        put(out, key::<ring::signature::Ed25519KeyPair>(sk)?.sign(msg).as_ref());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        Ok(key::<ring::signature::UnparsedPublicKey<[u8; 32]>>(vk)?.verify(msg, sig).is_ok())
    }
}

/// OpenSSL Ed25519: the key from its raw seed, one-shot pure signing and verification, one `EVP_PKEY_CTX` per
/// key created on first use and reused (see [`ossl::Keyed`]).
struct OsslEd;

impl Named for OsslEd {
    fn id(&self) -> Id {
        OPENSSL
    }
}

impl SigImpl for OsslEd {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let pkey = ossl::Pkey::private_from_raw(c"ED25519", seed)?;
        pkey.raw_public_key(vk)?;
        Ok(Box::new(ossl::Keyed::new(pkey)))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(ossl::Keyed::new(ossl::Pkey::public_from_raw(c"ED25519", vk)?)))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Keyed>(sk)?.sign_pure(c"ED25519", msg, 64, out)
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        key::<ossl::Keyed>(vk)?.verify(c"ED25519", msg, sig)
    }
}

// ---------------------------------------------------------------------------------------------- checks

/// The cross-implementation check of X25519 (see the module docs): implementations that take private keys
/// compute the RFC 7748 §6.1 public keys and shared secret, from both sides, in [`DhImpl::agree`] and in their
/// timed [`DhImpl::derive_op`]; every implementation's key (ring's ephemeral ones included) agrees with every
/// such implementation's public key on the secret that implementation computes from the other side.
pub fn dh_check(impls: &[Arc<dyn DhImpl>]) -> Result<(), String> {
    let (priv_a, priv_b) = (x25519_private_a(), x25519_private_b());
    let (pub_a, pub_b, shared) = (x25519_public_a(), x25519_public_b(), x25519_shared());
    let run = |op: &mut Box<dyn Op>| -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        op.run(&mut [], &mut out)?;
        Ok(out)
    };
    let det: Vec<&Arc<dyn DhImpl>> = impls.iter().filter(|d| d.deterministic()).collect();
    for d in &det {
        for (who, private, public) in [("Alice", &priv_a, &pub_a), ("Bob", &priv_b, &pub_b)] {
            let mut p = Vec::new();
            d.keygen(private, &mut p).map_err(|x| format!("{} keygen: {x}", d.name()))?;
            if p != public {
                return Err(format!("{} computes a wrong public key for RFC 7748 §6.1's {who}", d.name()));
            }
        }
        for (private, peer) in [(&priv_a, &pub_b), (&priv_b, &pub_a)] {
            let mut s = Vec::new();
            d.agree(d.keygen(private, &mut Vec::new())?, peer, &mut s)?;
            let timed = run(&mut d.derive_op(private, peer)?)?;
            if s != shared || timed != shared {
                return Err(format!(
                    "{} computes a shared secret that differs from RFC 7748 §6.1's (agree {}, derive {})",
                    d.name(),
                    if s == shared { "right" } else { "wrong" },
                    if timed == shared { "right" } else { "wrong" },
                ));
            }
        }
    }
    for a in impls {
        for b in &det {
            let mut their_public = Vec::new();
            b.keygen(&priv_b, &mut their_public)?;
            let mut ours = Vec::new();
            let k = a.keygen(&priv_a, &mut ours).map_err(|x| format!("{} keygen: {x}", a.name()))?;
            let mut s1 = Vec::new();
            a.agree(k, &their_public, &mut s1)
                .map_err(|x| format!("{} cannot agree with {}'s public key: {x}", a.name(), b.name()))?;
            let s2 = run(&mut b.derive_op(&priv_b, &ours)?)?;
            if s1 != s2 {
                return Err(format!(
                    "cross agreement failed: {} agreed with {}'s public key, shared secrets differ",
                    a.name(),
                    b.name()
                ));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------- registry

/// The X25519 implementations, pqkit first.
pub fn x25519_impls() -> Vec<Arc<dyn DhImpl>> {
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn DhImpl>> = vec![Arc::new(OsslX), Arc::new(AwsX), Arc::new(RingX), Arc::new(RcX)];
    #[cfg(feature = "pqkit-algs")]
    v.insert(0, Arc::new(PqX));
    v
}

/// The Ed25519 implementations, pqkit first.
pub fn ed25519_impls() -> Vec<Arc<dyn SigImpl>> {
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn SigImpl>> = vec![Arc::new(OsslEd), Arc::new(AwsEd), Arc::new(RingEd), Arc::new(RcEd)];
    #[cfg(feature = "pqkit-algs")]
    v.insert(0, Arc::new(PqEd));
    v
}

/// The two X25519 operations ("keygen", "derive") from a list of implementations.
pub fn x25519_algorithms(impls: Vec<Arc<dyn DhImpl>>) -> Vec<Algorithm> {
    let mut algs = Vec::new();
    for op in ["keygen", "derive"] {
        let list = impls.clone();
        let check = Check::Custom(Box::new(move || dh_check(&list)));
        let mut alg = Algorithm::public_key("X25519", op, 0, check).reports(&[Report::A]);
        for d in &impls {
            let d2 = d.clone();
            let setup = move |_size: usize| -> Result<Box<dyn Op>, String> {
                let d = d2.clone();
                Ok(match op {
                    "keygen" => {
                        let base = x25519_private_a();
                        let mut counter = 0u64;
                        Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                            d.keygen(&super::pq::next_key(&base, &mut counter), out).map(drop)
                        })
                    }
                    _ => d.derive_op(&x25519_private_a(), &x25519_public_b())?,
                })
            };
            alg = alg.with(Candidate::new(d.name(), d.version(), setup));
        }
        algs.push(alg);
    }
    algs
}

/// The `(private, peer)` pairs of a batch row: private keys varied from RFC 7748's Alice key, peer
/// u-coordinates varied from Bob's public key (any 32 bytes are a valid X25519 public key; a u-coordinate off
/// the curve lies on its twist and costs the same).
fn many_pairs(n: usize) -> Vec<([u8; 32], [u8; 32])> {
    let (a, b) = (x25519_private_a(), x25519_public_b());
    let (mut c1, mut c2) = (0u64, 1u64 << 32);
    (0..n).map(|_| (super::pq::next_key(&a, &mut c1), super::pq::next_key(&b, &mut c2))).collect()
}

/// The batch rows "derive_many 8" and "derive_many 64": `n` agreements per timed call, through pqkit's
/// `derive_many` and through every peer's one-at-a-time derive, so that the row's ratio is the per-operation
/// ratio. Checked: every implementation that takes private keys computes the same `n` secrets.
pub fn x25519_many_algorithms(impls: Vec<Arc<dyn DhImpl>>) -> Vec<Algorithm> {
    let mut algs = Vec::new();
    for n in [8usize, 64] {
        let list = impls.clone();
        let check = Check::Custom(Box::new(move || {
            let pairs = many_pairs(n);
            let mut first: Option<(&'static str, Vec<u8>)> = None;
            for d in list.iter().filter(|d| d.deterministic()) {
                let mut out = Vec::new();
                d.derive_many_op(&pairs)?.run(&mut [], &mut out)?;
                match &first {
                    None => first = Some((d.name(), out)),
                    Some((name, want)) if *want != out => {
                        return Err(format!("{} and {name} compute different secrets for a batch of {n}", d.name()));
                    }
                    Some(_) => {}
                }
            }
            Ok(())
        }));
        let mut alg = Algorithm::public_key("X25519", &format!("derive_many {n}"), 0, check).reports(&[Report::A]);
        for d in &impls {
            let d2 = d.clone();
            let setup = move |_size: usize| d2.derive_many_op(&many_pairs(n));
            alg = alg.with(Candidate::new(d.name(), d.version(), setup));
        }
        algs.push(alg);
    }
    algs
}

/// The three Ed25519 operations ("keygen", "sign", "verify" on a [`MSG_LEN`]-byte message) from a list of
/// implementations, checked by [`sig_check`](super::pq::sig_check).
pub fn ed25519_algorithms(impls: Vec<Arc<dyn SigImpl>>) -> Vec<Algorithm> {
    super::pq::curve_sig_rows("Ed25519", &["keygen", "sign", "verify"], &impls, &[])
}

/// The seeds of a batch keygen row: the fixed seed varied by a counter.
fn many_seeds(n: usize) -> Vec<[u8; 32]> {
    let mut c = 0u64;
    (0..n).map(|_| super::pq::next_key(&ED25519_SEED, &mut c)).collect()
}

/// The messages of a batch sign row: [`MSG_LEN`] bytes each, a counter in the first 8.
fn many_msgs(n: usize) -> Vec<Vec<u8>> {
    (0..n as u64)
        .map(|i| {
            let mut m = crate::harness::input_bytes(MSG_LEN).to_vec();
            m[..8].copy_from_slice(&i.to_le_bytes());
            m
        })
        .collect()
}

/// The timed batch operation of `s` for the row `op` ("keygen_many" or "sign_many") over `n` items: its batch
/// API where it has one, else its one-at-a-time operation `n` times (key objects for signing made here,
/// outside timing).
fn ed25519_many_op(s: &Arc<dyn SigImpl>, op: &str, n: usize) -> Result<Box<dyn Op>, String> {
    if op == "keygen_many" {
        let seeds = many_seeds(n);
        if let Some(r) = s.keygen_many_op(&seeds) {
            return r;
        }
        let s = s.clone();
        let mut vk = Vec::with_capacity(32);
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            out.clear();
            for seed in &seeds {
                s.keygen(seed, &mut vk)?;
                out.extend_from_slice(&vk);
            }
            Ok(())
        }))
    } else {
        let msgs = many_msgs(n);
        if let Some(r) = s.sign_many_op(&ED25519_SEED, &msgs) {
            return r;
        }
        let sk = s.keygen(&ED25519_SEED, &mut Vec::new())?;
        let s = s.clone();
        let mut sig = Vec::with_capacity(64);
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            out.clear();
            for m in &msgs {
                s.sign(&sk, m, &mut sig)?;
                out.extend_from_slice(&sig);
            }
            Ok(())
        }))
    }
}

/// The batch rows "keygen_many 8 / 64" and "sign_many 8 / 64" (1 KiB messages): `n` operations per timed
/// call, through pqkit's batch API and through every peer's one-at-a-time operation, so that the row's ratio
/// is the per-operation ratio. Checked: every implementation computes the same `n` public keys or signatures.
pub fn ed25519_many_algorithms(impls: Vec<Arc<dyn SigImpl>>) -> Vec<Algorithm> {
    let mut algs = Vec::new();
    for op in ["keygen_many", "sign_many"] {
        for n in [8usize, 64] {
            let list = impls.clone();
            let check = Check::Custom(Box::new(move || {
                let mut first: Option<(&'static str, Vec<u8>)> = None;
                for s in &list {
                    let mut out = Vec::new();
                    ed25519_many_op(s, op, n)?.run(&mut [], &mut out)?;
                    match &first {
                        None => first = Some((s.name(), out)),
                        Some((name, want)) if *want != out => {
                            return Err(format!("{} and {name} disagree on {op} of {n}", s.name()));
                        }
                        Some(_) => {}
                    }
                }
                Ok(())
            }));
            let len = if op == "keygen_many" { 0 } else { MSG_LEN };
            let mut alg = Algorithm::public_key("Ed25519", &format!("{op} {n}"), len, check).reports(&[Report::A]);
            for s in &impls {
                let s2 = s.clone();
                let setup = move |_size: usize| ed25519_many_op(&s2, op, n);
                alg = alg.with(Candidate::new(s.name(), s.version(), setup));
            }
            algs.push(alg);
        }
    }
    algs
}

/// The family's algorithms: X25519, then Ed25519.
pub fn algorithms() -> Vec<Algorithm> {
    let mut v = x25519_algorithms(x25519_impls());
    v.extend(x25519_many_algorithms(x25519_impls()));
    v.extend(ed25519_algorithms(ed25519_impls()));
    v.extend(ed25519_many_algorithms(ed25519_impls()));
    v
}
