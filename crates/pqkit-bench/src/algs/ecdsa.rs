//! Report (a), public key: the short-Weierstrass curves. P-256 key generation, ECDSA with SHA-256 (sign and
//! verify a 1 KiB message, the message length of the Ed25519 and ML-DSA rows) and ECDH, for pqkit, OpenSSL (the
//! vendored 3.6 through its EVP API: [`super::ossl_ffi`]), aws-lc-rs, ring and RustCrypto (`p256`).
//!
//! The adapters implement [`SigImpl`] (keys from the 32-byte private scalar [`PRIVATE`], public keys as
//! uncompressed SEC1 points, signatures in DER) and are checked by [`sig_check`](super::pq::sig_check): every implementation derives
//! the same public key, the deterministic ones (pqkit and RustCrypto, both RFC 6979) sign byte for byte alike,
//! every implementation verifies every other's signature and rejects a flipped bit. OpenSSL, aws-lc-rs and
//! ring sign with random nonces. ECDH adapters implement [`DhImpl`]; [`ecdh_check`] has every implementation
//! that takes a private key compute the same shared secret from both sides, and every one (ring's ephemeral
//! keys included) agree with every such implementation's public key.
//!
//! The OpenSSL and pqkit adapters take the group as a parameter ([`OsslEc`], [`PqEc`]), so that other curves
//! (secp256k1) reuse them.
//!
//! ## What each row times
//! - keygen: the key pair from 32 private bytes (varied by a counter): a fixed-base multiplication plus each
//!   library's key object. OpenSSL: `EC_POINT_mul` on the generator and `EVP_PKEY_fromdata`. aws-lc-rs: its ECDH
//!   private key and public key, then its ECDSA key pair from both. ring has no key pair from private bytes
//!   alone (it takes the public key too and checks it): it has no keygen row.
//! - sign: SHA-256 of the message and one signature (DER), with a key made outside timing; OpenSSL one-shot
//!   message signing ("ECDSA-SHA256") with a context kept per key.
//! - verify: the same, with a parsed public key made outside timing (ring parses it in every call, as its API
//!   does).
//! - verify_many 8 / 64: 8 or 64 verifications per timed call, each of its own 1 KiB message under its own
//!   key (keys, messages and signatures prepared, keys parsed, outside timing). pqkit runs them through
//!   `p256::verify_many`; every peer runs its one-at-a-time verify (as in the verify row) 8 or 64 times, since
//!   none has a batch API. The row's ratio is therefore the per-verification ratio of the batch against
//!   one-at-a-time.
//! - ECDH derive: the shared secret of a prepared private key with a prepared peer public key; ring's private
//!   keys are ephemeral, so its row generates one per call (one `getrandom` call); aws-lc-rs's `agree` takes
//!   a clone of its parsed peer key.

use super::e;
use super::ec::{DhImpl, aws_dh, owned, put};
use super::ossl_ffi as ossl;
use super::pq::{AnyKey, Id, Named, SigImpl, VerifyItem};
use crate::registry::{Algorithm, Candidate, Check, Op, Report};
use std::ffi::CStr;
use std::sync::Arc;

fn key<T: 'static>(k: &AnyKey) -> Result<&T, String> {
    k.downcast_ref::<T>().ok_or_else(|| "key of another implementation".to_string())
}

/// The fixed private scalar (below the order of every 256-bit curve): the ML-DSA and Ed25519 seed.
pub const PRIVATE: [u8; 32] = super::pq::DSA_SEED;
/// The peer's private scalar for ECDH.
pub const PEER_PRIVATE: [u8; 32] = [0x44; 32];
/// Length of the signed message.
pub const MSG_LEN: usize = super::pq::MSG_LEN;

const OPENSSL: Id = Id { name: "openssl", version: super::ossl, deterministic: false };
const AWS_LC_RS: Id = Id { name: "aws-lc-rs", version: || super::v("aws-lc-rs"), deterministic: false };
const RING: Id = Id { name: "ring", version: || super::v("ring"), deterministic: false };
const RUSTCRYPTO_P256: Id = Id { name: "rustcrypto", version: || super::v("p256"), deterministic: true };
#[cfg(feature = "pqkit-algs")]
const PQKIT: Id = Id { name: "pqkit", version: super::pqkit_version, deterministic: true };

// ---------------------------------------------------------------------------------------------- pqkit

/// pqkit's ECDSA and ECDH over any of its Weierstrass curves.
#[cfg(feature = "pqkit-algs")]
pub struct PqEc<C>(core::marker::PhantomData<C>);

#[cfg(feature = "pqkit-algs")]
impl<C> PqEc<C> {
    /// The adapter.
    pub fn new() -> Self {
        PqEc(core::marker::PhantomData)
    }
}

#[cfg(feature = "pqkit-algs")]
impl<C> Default for PqEc<C> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(feature = "pqkit-algs")]
mod pq_impl {
    use super::*;
    use pqkit::ec::weierstrass::{PrimeCurve, PublicKey, SecretKey, Signature, SigningKey, VerifyingKey};

    impl<C: PrimeCurve> Named for PqEc<C> {
        fn id(&self) -> Id {
            PQKIT
        }
    }

    impl<C: PrimeCurve> SigImpl for PqEc<C> {
        fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
            let sk = SigningKey::<C>::from_bytes(seed).map_err(e)?;
            put(vk, sk.verifying_key().to_sec1_bytes(false).as_bytes());
            Ok(Box::new(sk))
        }
        fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
            Ok(Box::new(VerifyingKey::<C>::from_sec1_bytes(vk).map_err(e)?))
        }
        fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
            put(out, key::<SigningKey<C>>(sk)?.sign(msg).to_der().as_bytes());
            Ok(())
        }
        fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
            let vk = key::<VerifyingKey<C>>(vk)?;
            let Ok(sig) = Signature::<C>::from_der(sig) else { return Ok(false) };
            Ok(vk.verify(msg, &sig).is_ok())
        }
        fn verify_many_op(&self, items: &[VerifyItem]) -> Option<Result<Box<dyn Op>, String>> {
            use pqkit::ec::p256;
            // Only P-256 has a batch verification.
            if core::any::TypeId::of::<C>() != core::any::TypeId::of::<p256::NistP256>() {
                return None;
            }
            let parsed = items
                .iter()
                .map(|(vk, m, s)| {
                    Ok((
                        p256::VerifyingKey::from_sec1_bytes(vk).map_err(e)?,
                        m.clone(),
                        p256::Signature::from_der(s).map_err(e)?,
                    ))
                })
                .collect::<Result<Vec<_>, String>>();
            Some(parsed.map(|parsed| {
                Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                    let refs: Vec<_> = parsed.iter().map(|(k, m, s)| (k, m.as_slice(), s)).collect();
                    out.clear();
                    out.extend(p256::verify_many(&refs).iter().map(|r| r.is_ok() as u8));
                    Ok(())
                }) as Box<dyn Op>
            }))
        }
    }

    impl<C: PrimeCurve> DhImpl for PqEc<C> {
        fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
            let sk = SecretKey::<C>::from_bytes(private).map_err(e)?;
            put(public, sk.public_key().to_sec1_bytes(false).as_bytes());
            Ok(Box::new(sk))
        }
        fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
            let sk = owned::<SecretKey<C>>(key)?;
            let pk = PublicKey::<C>::from_sec1_bytes(peer).map_err(e)?;
            put(out, sk.diffie_hellman(&pk).map_err(e)?.as_bytes());
            Ok(())
        }
        fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
            let sk = SecretKey::<C>::from_bytes(private).map_err(e)?;
            let pk = PublicKey::<C>::from_sec1_bytes(peer).map_err(e)?;
            Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                put(out, sk.diffie_hellman(&pk).map_err(e)?.as_bytes());
                Ok(())
            }))
        }
    }
}

// ---------------------------------------------------------------------------------------------- OpenSSL

/// OpenSSL ECDSA ("ECDSA-SHA256" message signing) and ECDH over a named group.
pub struct OsslEc {
    /// The group's name for `EVP_PKEY_fromdata` ("P-256", "secp256k1").
    pub group: &'static CStr,
    /// The same group's NID.
    pub nid: openssl::nid::Nid,
}

impl Named for OsslEc {
    fn id(&self) -> Id {
        OPENSSL
    }
}

impl SigImpl for OsslEc {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        Ok(Box::new(ossl::Keyed::new(ossl::Pkey::ec_from_private(self.group, self.nid, seed, vk)?)))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(ossl::Keyed::new(ossl::Pkey::ec_from_public(self.group, vk)?)))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Keyed>(sk)?.sign_der(c"ECDSA-SHA256", msg, 80, out)
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        key::<ossl::Keyed>(vk)?.verify_der(c"ECDSA-SHA256", msg, sig)
    }
}

impl DhImpl for OsslEc {
    fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        Ok(Box::new(ossl::Pkey::ec_from_private(self.group, self.nid, private, public)?))
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let peer = ossl::Pkey::ec_from_public(self.group, peer)?;
        ossl::Agreement::new(owned::<ossl::Pkey>(key)?, peer)?.derive(out)
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        let ours = ossl::Pkey::ec_from_private(self.group, self.nid, private, &mut Vec::new())?;
        let mut agreement = ossl::Agreement::new(ours, ossl::Pkey::ec_from_public(self.group, peer)?)?;
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| agreement.derive(out)))
    }
}

// ---------------------------------------------------------------------------------------------- RustCrypto

/// RustCrypto `p256` (RFC 6979 signing).
struct RcP256;

impl Named for RcP256 {
    fn id(&self) -> Id {
        RUSTCRYPTO_P256
    }
}

impl SigImpl for RcP256 {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = p256::ecdsa::SigningKey::from_slice(seed).map_err(e)?;
        put(vk, sk.verifying_key().to_sec1_point(false).as_bytes());
        Ok(Box::new(sk))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(p256::ecdsa::VerifyingKey::from_sec1_bytes(vk).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use p256::ecdsa::signature::Signer;
        let sig: p256::ecdsa::DerSignature = key::<p256::ecdsa::SigningKey>(sk)?.sign(msg);
        put(out, sig.as_bytes());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        use p256::ecdsa::signature::Verifier;
        let vk = key::<p256::ecdsa::VerifyingKey>(vk)?;
        let Ok(sig) = p256::ecdsa::DerSignature::from_bytes(sig) else { return Ok(false) };
        Ok(vk.verify(msg, &sig).is_ok())
    }
}

impl DhImpl for RcP256 {
    fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        let sk = p256::SecretKey::from_slice(private).map_err(e)?;
        put(public, sk.public_key().to_sec1_point(false).as_bytes());
        Ok(Box::new(sk))
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let sk = owned::<p256::SecretKey>(key)?;
        let pk = p256::PublicKey::from_sec1_bytes(peer).map_err(e)?;
        put(out, p256::ecdh::diffie_hellman(sk.to_nonzero_scalar(), pk.as_affine()).raw_secret_bytes());
        Ok(())
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        let sk = p256::SecretKey::from_slice(private).map_err(e)?.to_nonzero_scalar();
        let pk = p256::PublicKey::from_sec1_bytes(peer).map_err(e)?;
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            put(out, p256::ecdh::diffie_hellman(sk, pk.as_affine()).raw_secret_bytes());
            Ok(())
        }))
    }
}

use p256::elliptic_curve::sec1::ToSec1Point as _;

// ---------------------------------------------------------------------------------------------- aws-lc-rs

/// aws-lc-rs `EcdsaKeyPair` (ASN.1 signatures) and `agreement::PrivateKey` (ECDH).
struct AwsP256;

impl Named for AwsP256 {
    fn id(&self) -> Id {
        AWS_LC_RS
    }
}

impl SigImpl for AwsP256 {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        use aws_lc_rs::agreement::{ECDH_P256, PrivateKey};
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair};
        let pk = PrivateKey::from_private_key(&ECDH_P256, seed).map_err(e)?.compute_public_key().map_err(e)?;
        put(vk, pk.as_ref());
        let kp = EcdsaKeyPair::from_private_key_and_public_key(&ECDSA_P256_SHA256_ASN1_SIGNING, seed, pk.as_ref())
            .map_err(e)?;
        Ok(Box::new(kp))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1, ParsedPublicKey};
        Ok(Box::new(ParsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, vk).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let sig = key::<aws_lc_rs::signature::EcdsaKeyPair>(sk)?.sign(&rng, msg).map_err(e)?;
        put(out, sig.as_ref());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        Ok(key::<aws_lc_rs::signature::ParsedPublicKey>(vk)?.verify_sig(msg, sig).is_ok())
    }
}

impl DhImpl for AwsP256 {
    fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        aws_dh::keygen(&aws_lc_rs::agreement::ECDH_P256, private, public)
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        aws_dh::agree(&aws_lc_rs::agreement::ECDH_P256, key, peer, out)
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        aws_dh::derive_op(&aws_lc_rs::agreement::ECDH_P256, private, peer)
    }
}

// ---------------------------------------------------------------------------------------------- ring

/// ring `EcdsaKeyPair` (from the private scalar and the public point, which ring checks) and ephemeral ECDH.
struct RingP256;

impl Named for RingP256 {
    fn id(&self) -> Id {
        RING
    }
}

impl SigImpl for RingP256 {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair};
        // ring takes the public key with the private one (and checks that they match): computed here by the
        // p256 crate. Not timed: ring has no keygen row.
        let public = p256::SecretKey::from_slice(seed).map_err(e)?.public_key().to_sec1_point(false);
        put(vk, public.as_bytes());
        let rng = ring::rand::SystemRandom::new();
        let kp = EcdsaKeyPair::from_private_key_and_public_key(&ECDSA_P256_SHA256_ASN1_SIGNING, seed, vk, &rng)
            .map_err(e)?;
        Ok(Box::new(kp))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_ASN1, vk.to_vec())))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let rng = ring::rand::SystemRandom::new();
        let sig = key::<ring::signature::EcdsaKeyPair>(sk)?.sign(&rng, msg).map_err(e)?;
        put(out, sig.as_ref());
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        Ok(key::<ring::signature::UnparsedPublicKey<Vec<u8>>>(vk)?.verify(msg, sig).is_ok())
    }
}

impl DhImpl for RingP256 {
    fn keygen(&self, _private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        use ring::agreement::{ECDH_P256, EphemeralPrivateKey};
        let sk = EphemeralPrivateKey::generate(&ECDH_P256, &ring::rand::SystemRandom::new()).map_err(e)?;
        put(public, sk.compute_public_key().map_err(e)?.as_ref());
        Ok(Box::new(sk))
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use ring::agreement::{ECDH_P256, EphemeralPrivateKey, UnparsedPublicKey, agree_ephemeral};
        let sk = owned::<EphemeralPrivateKey>(key)?;
        agree_ephemeral(sk, &UnparsedPublicKey::new(&ECDH_P256, peer), |s| put(out, s)).map_err(e)
    }
    fn derive_op(&self, _private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        use ring::agreement::{ECDH_P256, EphemeralPrivateKey, UnparsedPublicKey, agree_ephemeral};
        let rng = ring::rand::SystemRandom::new();
        let pk = UnparsedPublicKey::new(&ECDH_P256, peer.to_vec());
        Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let sk = EphemeralPrivateKey::generate(&ECDH_P256, &rng).map_err(e)?;
            agree_ephemeral(sk, &pk, |s| put(out, s)).map_err(e)
        }))
    }
}

/// ring marks its ECDH adapter as ephemeral (keys ignore the private bytes).
struct RingEphemeral(RingP256);

impl Named for RingEphemeral {
    fn id(&self) -> Id {
        Id { deterministic: false, ..RING }
    }
}

impl DhImpl for RingEphemeral {
    fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        DhImpl::keygen(&self.0, private, public)
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        self.0.agree(key, peer, out)
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        self.0.derive_op(private, peer)
    }
}

/// Takes private keys: every ECDH implementation except ring's (its `Id` says deterministic for the
/// signature check's purpose, which is about signatures; key agreement uses its own flag).
struct Det<T>(T);

impl<T: Named> Named for Det<T> {
    fn id(&self) -> Id {
        Id { deterministic: true, ..self.0.id() }
    }
}

impl<T: DhImpl> DhImpl for Det<T> {
    fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        self.0.keygen(private, public)
    }
    fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        self.0.agree(key, peer, out)
    }
    fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
        self.0.derive_op(private, peer)
    }
}

// ---------------------------------------------------------------------------------------------- checks

/// The cross-implementation ECDH check (see the module docs).
pub fn ecdh_check(impls: &[Arc<dyn DhImpl>]) -> Result<(), String> {
    let run = |op: &mut Box<dyn Op>| -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        op.run(&mut [], &mut out)?;
        Ok(out)
    };
    let det: Vec<&Arc<dyn DhImpl>> = impls.iter().filter(|d| d.deterministic()).collect();
    let Some(first) = det.first() else { return Err("no implementation takes private keys".into()) };
    let (mut pub_a, mut pub_b) = (Vec::new(), Vec::new());
    first.keygen(&PRIVATE, &mut pub_a)?;
    first.keygen(&PEER_PRIVATE, &mut pub_b)?;
    let shared = run(&mut first.derive_op(&PRIVATE, &pub_b)?)?;
    for d in &det {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        d.keygen(&PRIVATE, &mut a)?;
        d.keygen(&PEER_PRIVATE, &mut b)?;
        if a != pub_a || b != pub_b {
            return Err(format!("{} and {} derive different public keys", d.name(), first.name()));
        }
        for (private, peer) in [(&PRIVATE, &pub_b), (&PEER_PRIVATE, &pub_a)] {
            let mut s = Vec::new();
            d.agree(d.keygen(private, &mut Vec::new())?, peer, &mut s)?;
            let timed = run(&mut d.derive_op(private, peer)?)?;
            if s != shared || timed != shared {
                return Err(format!("{} computes another shared secret than {}", d.name(), first.name()));
            }
        }
    }
    for a in impls {
        for b in &det {
            let mut ours = Vec::new();
            let k = a.keygen(&PRIVATE, &mut ours)?;
            let mut s1 = Vec::new();
            a.agree(k, &pub_b, &mut s1)
                .map_err(|x| format!("{} cannot agree with {}'s key: {x}", a.name(), b.name()))?;
            let s2 = run(&mut b.derive_op(&PEER_PRIVATE, &ours)?)?;
            if s1 != s2 {
                return Err(format!("cross agreement failed between {} and {}", a.name(), b.name()));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------- registry

/// The P-256 ECDSA implementations, pqkit first.
pub fn p256_sig_impls() -> Vec<Arc<dyn SigImpl>> {
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn SigImpl>> = vec![
        Arc::new(OsslEc { group: c"P-256", nid: openssl::nid::Nid::X9_62_PRIME256V1 }),
        Arc::new(AwsP256),
        Arc::new(RingP256),
        Arc::new(RcP256),
    ];
    #[cfg(feature = "pqkit-algs")]
    v.insert(0, Arc::new(PqEc::<pqkit::ec::p256::NistP256>::new()));
    v
}

/// The P-256 ECDH implementations, pqkit first.
pub fn p256_dh_impls() -> Vec<Arc<dyn DhImpl>> {
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn DhImpl>> = vec![
        Arc::new(Det(OsslEc { group: c"P-256", nid: openssl::nid::Nid::X9_62_PRIME256V1 })),
        Arc::new(Det(AwsP256)),
        Arc::new(RingEphemeral(RingP256)),
        Arc::new(Det(RcP256)),
    ];
    #[cfg(feature = "pqkit-algs")]
    v.insert(0, Arc::new(Det(PqEc::<pqkit::ec::p256::NistP256>::new())));
    v
}

/// The ECDSA rows (`"<name> ECDSA"`: keygen, sign, verify) and the ECDH row (`"<name> ECDH"`: derive) of one curve.
/// `no_keygen` names the implementations without a keygen row.
pub fn curve_algorithms(
    name: &str,
    sig: Vec<Arc<dyn SigImpl>>,
    dh: Vec<Arc<dyn DhImpl>>,
    no_keygen: &[&str],
) -> Vec<Algorithm> {
    let mut algs = super::pq::curve_sig_rows(&format!("{name} ECDSA"), &["keygen", "sign", "verify"], &sig, no_keygen);
    let list = dh.clone();
    let check = Check::Custom(Box::new(move || ecdh_check(&list)));
    let mut alg = Algorithm::public_key(&format!("{name} ECDH"), "derive", 0, check).reports(&[Report::A]);
    for d in &dh {
        let d2 = d.clone();
        let setup = move |_size: usize| -> Result<Box<dyn Op>, String> {
            let mut peer = Vec::new();
            d2.keygen(&PEER_PRIVATE, &mut peer)?;
            d2.derive_op(&PRIVATE, &peer)
        };
        alg = alg.with(Candidate::new(d.name(), d.version(), setup));
    }
    algs.push(alg);
    algs
}

/// The items of a batch verification row for `s`: `n` keys (the [`PRIVATE`] scalar varied by a counter), each
/// signing its own [`MSG_LEN`]-byte message (a counter in the first 8 bytes) with `s`.
fn verify_many_items(s: &Arc<dyn SigImpl>, n: usize) -> Result<Vec<VerifyItem>, String> {
    let mut counter = 0u64;
    (0..n as u64)
        .map(|i| {
            let mut vk = Vec::new();
            let sk = s.keygen(&super::pq::next_key(&PRIVATE, &mut counter), &mut vk)?;
            let mut msg = crate::harness::input_bytes(MSG_LEN).to_vec();
            msg[..8].copy_from_slice(&i.to_le_bytes());
            let mut sig = Vec::new();
            s.sign(&sk, &msg, &mut sig)?;
            Ok((vk, msg, sig))
        })
        .collect()
}

/// The timed batch verification of `s` over `n` items: its batch API where it has one, else its
/// one-at-a-time verification `n` times (keys parsed outside timing). One byte per item, 1 for valid.
fn verify_many_op(s: &Arc<dyn SigImpl>, n: usize) -> Result<Box<dyn Op>, String> {
    let items = verify_many_items(s, n)?;
    if let Some(r) = s.verify_many_op(&items) {
        return r;
    }
    let parsed =
        items.into_iter().map(|(vk, m, sig)| Ok((s.parse_vk(&vk)?, m, sig))).collect::<Result<Vec<_>, String>>()?;
    let s = s.clone();
    Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
        out.clear();
        for (vk, m, sig) in &parsed {
            out.push(s.verify(vk, m, sig)? as u8);
        }
        Ok(())
    }))
}

/// The batch rows "verify_many 8" and "verify_many 64" of a curve's ECDSA: `n` verifications of 1 KiB
/// messages per timed call, each under its own key, through pqkit's batch API and every peer's
/// one-at-a-time verify, so that the row's ratio is the per-operation ratio. Checked: every implementation
/// accepts all `n` of its signatures.
pub fn verify_many_algorithms(name: &str, impls: Vec<Arc<dyn SigImpl>>) -> Vec<Algorithm> {
    let mut algs = Vec::new();
    for n in [8usize, 64] {
        let list = impls.clone();
        let check = Check::Custom(Box::new(move || {
            for s in &list {
                let mut out = Vec::new();
                verify_many_op(s, n)?.run(&mut [], &mut out)?;
                if out != vec![1u8; n] {
                    return Err(format!("{} rejects some of its own {n} signatures: {out:?}", s.name()));
                }
            }
            Ok(())
        }));
        let mut alg = Algorithm::public_key(&format!("{name} ECDSA"), &format!("verify_many {n}"), MSG_LEN, check)
            .reports(&[Report::A]);
        for s in &impls {
            let s2 = s.clone();
            let setup = move |_size: usize| verify_many_op(&s2, n);
            alg = alg.with(Candidate::new(s.name(), s.version(), setup));
        }
        algs.push(alg);
    }
    algs
}

/// The family's algorithms: P-256.
pub fn algorithms() -> Vec<Algorithm> {
    let mut v = curve_algorithms("P-256", p256_sig_impls(), p256_dh_impls(), &["ring"]);
    v.extend(verify_many_algorithms("P-256", p256_sig_impls()));
    v
}
