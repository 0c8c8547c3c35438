//! BIP-340 Schnorr signatures over secp256k1: 32-byte x-only public keys, 64-byte signatures, messages of
//! any length, tagged SHA-256 hashes.
//!
//! ```
//! use pqkit::ec::secp256k1::schnorr::{SigningKey, VerifyingKey};
//! # let mut rng = pqkit::rng::ChaCha20Rng::from_key([7; 32]);
//! let sk = SigningKey::generate(&mut rng);
//! let sig = sk.sign(b"message", &mut rng);
//! let vk = VerifyingKey::from_bytes(&sk.verifying_key().to_bytes()).unwrap();
//! assert!(vk.verify(b"message", &sig).is_ok());
//! ```
//!
//! ## Behaviour
//! - Signing follows BIP-340's default algorithm exactly: the secret is negated when its point has an odd
//!   y; the nonce is `hash_nonce(d ⊕ hash_aux(a) ‖ P ‖ m)` with 32 bytes of auxiliary randomness `a`
//!   ([`SigningKey::sign`] draws them from an RNG, [`SigningKey::sign_with_aux`] takes them — all zeros is
//!   allowed and gives deterministic signatures). Debug builds verify every signature before returning it.
//! - Verification refuses, with [`Error::InvalidEncoding`], a public key whose x is not below p or is not on
//!   the curve, a signature whose r is not below p or whose s is not below n; and with
//!   [`Error::AuthenticationFailed`] a signature whose R = s·G − e·P is the identity, has an odd y, or has an
//!   x other than r.
//!
//! ## Constant time
//! Key generation and signing run the constant-time fixed-base multiplication and constant-time scalar
//! arithmetic; the y-parity adjustments are masked negations. Verification is variable time (public data).

use super::Backend;
use super::field::Fe;
use super::group::{self, Affine};
use super::scalar::Scalar;
use crate::dispatch::Checked;
use crate::hash::sha2::Sha256;
use crate::{Error, Result};
use core::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

const ALG: &str = "BIP-340 Schnorr";

/// Length of a signature in bytes (R's x ‖ s).
pub const SIGNATURE_LEN: usize = 64;
/// Length of an x-only public key and of a secret key, in bytes.
pub const KEY_LEN: usize = 32;

/// `SHA256(SHA256(tag) ‖ SHA256(tag) ‖ parts...)`.
fn tagged_hash(tag: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let t = Sha256::digest(tag);
    let mut h = Sha256::new();
    h.update(&t).update(&t);
    for p in parts {
        h.update(p);
    }
    h.finalize()
}

/// The challenge e = int(hash_challenge(r ‖ P ‖ m)) mod n.
fn challenge(r: &[u8; 32], p: &[u8; 32], msg: &[u8]) -> Scalar {
    Scalar::from_bytes_reduced(&tagged_hash(b"BIP0340/challenge", &[r, p, msg]))
}

/// A BIP-340 signing key: the secret scalar d' in [1, n − 1] and the x-only public key. Zeroized on drop;
/// `Debug` prints nothing of it.
#[derive(Clone)]
pub struct SigningKey {
    /// d' as given.
    secret: Scalar,
    /// d' or n − d', whichever makes d·G have an even y.
    d: Scalar,
    public: VerifyingKey,
}

impl SigningKey {
    /// A fresh key: 32 bytes from `rng` until they encode a scalar in [1, n − 1].
    pub fn generate<R: rand_core::CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut b = [0u8; 32];
        loop {
            rng.fill_bytes(&mut b);
            if let Ok(k) = Self::from_bytes(&b) {
                b.zeroize();
                return k;
            }
        }
    }

    /// The key with this 32-byte big-endian secret ([`Error::InvalidLength`] for another length,
    /// [`Error::InvalidEncoding`] when it is 0 or not below n).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_backend(Backend::detect(), bytes)
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(backend: Checked<Backend>, bytes: &[u8]) -> Result<Self> {
        Error::check_length(ALG, "secret key", KEY_LEN, bytes.len())?;
        let mut b = [0u8; 32];
        b.copy_from_slice(bytes);
        let (mut secret, ok) = Scalar::from_bytes_checked(&b);
        b.zeroize();
        if ok & !secret.mask_is_zero() == 0 {
            secret.zeroize();
            return Err(Error::InvalidEncoding { algorithm: ALG, reason: "secret key: not in [1, n - 1]" });
        }
        let (p, _) = group::mul_base(&secret).to_affine();
        let d = secret.cneg(super::field::mask_from_bit(p.y.is_odd()));
        let point = Affine { x: p.x, y: p.y.with_parity(0) };
        Ok(SigningKey { secret, d, public: VerifyingKey { x: p.x.to_bytes(), point, backend } })
    }

    /// The secret key as given, 32 bytes big-endian. Handle with care.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.secret.to_bytes()
    }

    /// The x-only public key.
    pub fn verifying_key(&self) -> VerifyingKey {
        self.public
    }

    /// Signs `msg` with 32 bytes of fresh auxiliary randomness from `rng` (BIP-340's recommendation).
    pub fn sign<R: rand_core::CryptoRng + ?Sized>(&self, msg: &[u8], rng: &mut R) -> Signature {
        let mut aux = [0u8; 32];
        rng.fill_bytes(&mut aux);
        self.sign_with_aux(msg, &aux)
    }

    /// Signs `msg` with the given auxiliary data (BIP-340's `a`; all zeros is allowed and makes the
    /// signature deterministic).
    pub fn sign_with_aux(&self, msg: &[u8], aux: &[u8; 32]) -> Signature {
        let px = &self.public.x;
        let mut t = self.d.to_bytes();
        let h = tagged_hash(b"BIP0340/aux", &[aux]);
        for (t, h) in t.iter_mut().zip(h) {
            *t ^= h;
        }
        let mut rand = tagged_hash(b"BIP0340/nonce", &[&t, px, msg]);
        t.zeroize();
        let mut k0 = Scalar::from_bytes_reduced(&rand);
        rand.zeroize();
        // k' = 0 happens with probability 2^-256 (a SHA-256 output equal to 0 or n): not handled.
        let (r, _) = group::mul_base(&k0).to_affine();
        let mut k = k0.cneg(super::field::mask_from_bit(r.y.is_odd()));
        k0.zeroize();
        let rx = r.x.to_bytes();
        let e = challenge(&rx, px, msg);
        let s = k.add(&e.mul(&self.d));
        k.zeroize();
        let mut sig = [0u8; 64];
        sig[..32].copy_from_slice(&rx);
        sig[32..].copy_from_slice(&s.to_bytes());
        let sig = Signature(sig);
        debug_assert!(self.public.verify(msg, &sig).is_ok());
        sig
    }

    /// Switches the backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, backend: Checked<Backend>) -> Self {
        self.public.backend = backend;
        self
    }
}

impl Zeroize for SigningKey {
    fn zeroize(&mut self) {
        self.secret.zeroize();
        self.d.zeroize();
    }
}

impl Drop for SigningKey {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl ZeroizeOnDrop for SigningKey {}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("schnorr::SigningKey { .. }")
    }
}

/// A BIP-340 public key: 32 bytes, the x-coordinate of a point whose y is even.
#[derive(Clone, Copy)]
pub struct VerifyingKey {
    x: [u8; 32],
    point: Affine,
    backend: Checked<Backend>,
}

impl VerifyingKey {
    /// The key with these 32 bytes: [`Error::InvalidLength`] for another length, [`Error::InvalidEncoding`]
    /// when x is not below p or no point has it.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_backend(Backend::detect(), bytes)
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(backend: Checked<Backend>, bytes: &[u8]) -> Result<Self> {
        Error::check_length(ALG, "public key", KEY_LEN, bytes.len())?;
        let mut x = [0u8; 32];
        x.copy_from_slice(bytes);
        let fx = Fe::from_bytes(&x)
            .ok_or(Error::InvalidEncoding { algorithm: ALG, reason: "public key: x is not below p" })?;
        let point = Affine::lift_x(fx, 0)
            .ok_or(Error::InvalidEncoding { algorithm: ALG, reason: "public key: no curve point has this x" })?;
        Ok(VerifyingKey { x, point, backend })
    }

    /// The 32-byte x-only encoding.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.x
    }

    /// Verifies `sig` on `msg` (BIP-340 `Verify`): see the [module docs](self) for what is refused.
    pub fn verify(&self, msg: &[u8], sig: &Signature) -> Result<()> {
        let _ = self.backend;
        let mut rb = [0u8; 32];
        rb.copy_from_slice(&sig.0[..32]);
        let mut sb = [0u8; 32];
        sb.copy_from_slice(&sig.0[32..]);
        let r = Fe::from_bytes(&rb)
            .ok_or(Error::InvalidEncoding { algorithm: ALG, reason: "signature: r is not below p" })?;
        let s = Scalar::from_bytes_vartime(&sb)
            .ok_or(Error::InvalidEncoding { algorithm: ALG, reason: "signature: s is not below n" })?;
        let e = challenge(&rb, &self.x, msg);
        // R = s·G − e·P.
        let big_r = group::double_mul_vartime(&s, &e.neg(), &self.point);
        let fail = Err(Error::AuthenticationFailed { algorithm: ALG });
        let Some(big_r) = big_r.to_affine_vartime() else { return fail };
        if big_r.y.is_odd() == 1 || !big_r.x.eq_vartime(&r) {
            return fail;
        }
        Ok(())
    }

    /// Switches the backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, backend: Checked<Backend>) -> Self {
        self.backend = backend;
        self
    }
}

impl PartialEq for VerifyingKey {
    fn eq(&self, other: &Self) -> bool {
        self.x == other.x
    }
}
impl Eq for VerifyingKey {}

impl fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("schnorr::VerifyingKey(")?;
        for b in &self.x {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// A BIP-340 signature: 64 bytes, R's x-coordinate then s.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Signature([u8; 64]);

impl Signature {
    /// The signature with these 64 bytes ([`Error::InvalidLength`] otherwise). The ranges of r and s are
    /// checked by [`VerifyingKey::verify`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Error::check_length(ALG, "signature", SIGNATURE_LEN, bytes.len())?;
        let mut b = [0u8; 64];
        b.copy_from_slice(bytes);
        Ok(Signature(b))
    }

    /// The 64-byte encoding.
    pub fn to_bytes(&self) -> [u8; 64] {
        self.0
    }
}

impl From<[u8; 64]> for Signature {
    fn from(b: [u8; 64]) -> Self {
        Signature(b)
    }
}

impl AsRef<[u8]> for Signature {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("schnorr::Signature(")?;
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}
