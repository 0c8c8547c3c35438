//! X25519 Diffie-Hellman (RFC 7748).
//!
//! ```
//! use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey};
//! # let mut rng = pqkit::rng::ChaCha20Rng::from_key([7; 32]);
//! let alice = X25519SecretKey::generate(&mut rng);
//! let bob = X25519SecretKey::generate(&mut rng);
//! let (a_pub, b_pub) = (alice.public_key(), bob.public_key());
//! let k1 = alice.diffie_hellman(&b_pub).unwrap();
//! let k2 = bob.diffie_hellman(&a_pub).unwrap();
//! assert_eq!(k1, k2);
//! ```
//!
//! ## Behaviour
//! - Secret keys are 32 arbitrary bytes, clamped at use (bits 0–2 and 255 cleared, bit 254 set) as RFC 7748
//!   §5 says; [`X25519SecretKey::to_bytes`] returns them as given.
//! - Public keys (u-coordinates) are 32 bytes taken as RFC 7748 asks: the top bit is ignored and values
//!   from p to 2^255 − 1 are reduced, so every 32-byte string is accepted, including points on the twist.
//! - **An all-zero shared secret is an error** ([`Error::InvalidEncoding`]). It comes out exactly when the
//!   peer's public key is a point of small order (order 1, 2, 4 or 8 on the curve or its twist; clamping
//!   makes the scalar a multiple of 8), so the "shared" secret would be a constant that does not depend on
//!   our key at all. RFC 7748 §6.1 allows this check and protocols that need contributory behaviour (where
//!   neither side alone can fix the key) require it; pqkit always does it, in constant time.
//!
//! ## Constant time
//! The variable-base multiplication is the Montgomery ladder over all 255 bits with masked swaps; the
//! public key ([`X25519SecretKey::public_key`]) is computed by the constant-time fixed-base multiplication
//! on the Edwards form (radix-16 table with masked look-ups) and the birational map u = (1 + y)/(1 − y).
//! Both paths give the same bytes (tested).
//!
//! ## Key files
//! With the `alloc` feature: [`X25519SecretKey::to_pkcs8_pem`], [`X25519PublicKey::from_public_key_pem`] and
//! the DER twins (PKCS#8 and SubjectPublicKeyInfo, RFC 8410); see [`super::encoding`].

#[cfg(feature = "alloc")]
use super::curve25519::multi;
use super::curve25519::{self, Backend};
use crate::dispatch::Checked;
use crate::{Error, Result};
use core::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

const ALG: &str = "X25519";

/// The length of keys and shared secrets, in bytes.
pub const KEY_LEN: usize = 32;

/// The RFC 7748 clamping of a scalar.
#[inline]
fn clamp(k: &[u8; 32]) -> [u8; 32] {
    let mut c = *k;
    c[0] &= 248;
    c[31] &= 127;
    c[31] |= 64;
    c
}

/// The error for an all-zero result.
const ZERO_SHARED: Error = Error::InvalidEncoding {
    algorithm: ALG,
    reason: "all-zero shared secret: the public key is a point of small order (RFC 7748 §6.1)",
};

/// The X25519 function of RFC 7748 §5: `scalar` (clamped here) times the point with u-coordinate `u`.
///
/// Fails with [`Error::InvalidEncoding`] when the result is all zeros (a public key of small order; see the
/// [module docs](self)).
pub fn x25519(scalar: &[u8; 32], u: &[u8; 32]) -> Result<[u8; 32]> {
    x25519_with_backend(Backend::detect(), scalar, u)
}

/// As [`x25519`] with a forced backend, for tests.
#[doc(hidden)]
pub fn x25519_with_backend(backend: Checked<Backend>, scalar: &[u8; 32], u: &[u8; 32]) -> Result<[u8; 32]> {
    let mut k = clamp(scalar);
    let out = curve25519::x25519(backend, &k, u);
    k.zeroize();
    // An all-zero output comes from a low-order peer point, a property of the public input; it is an error.
    if crate::ct::declassify(crate::ct::eq(&out, &[0u8; 32])) { Err(ZERO_SHARED) } else { Ok(out) }
}

/// The X25519 function without the all-zero check, for constructions that specify none (X-Wing hashes the
/// result together with the ML-KEM secret, so a small-order share cannot fix the combined secret; its
/// decapsulation must never fail). The scalar is clamped here.
pub(crate) fn x25519_unchecked(scalar: &[u8; 32], u: &[u8; 32]) -> [u8; 32] {
    let mut k = clamp(scalar);
    let out = curve25519::x25519(Backend::detect(), &k, u);
    k.zeroize();
    out
}

/// The X25519 public key (u-coordinate of k·9) of the scalar `scalar` (clamped here), constant time.
pub(crate) fn x25519_base(scalar: &[u8; 32]) -> [u8; 32] {
    let mut k = clamp(scalar);
    let out = curve25519::x25519_base(Backend::detect(), &k);
    k.zeroize();
    out
}

/// The shared secrets of many key agreements at once: `results[i]` is
/// `pairs[i].0.diffie_hellman(pairs[i].1)`, with the same bytes and the same per-item error
/// ([`Error::InvalidEncoding`] for an all-zero secret, i.e. a peer key of small order) as the one-at-a-time
/// call. One bad peer key fails only its own item.
///
/// For a server that answers many handshakes: the same secret key may appear in many pairs (a static key),
/// or each pair may carry its own (ephemeral keys). On CPUs with AVX-512 IFMA, eight agreements run side by
/// side in the lanes of one ladder and up to 64 results share one field inversion; elsewhere each pair runs
/// through the one-at-a-time code.
///
/// Constant time in the secret keys, as [`X25519SecretKey::diffie_hellman`] is: every lane runs the same
/// 255 ladder steps with masked swaps, and a small-order peer key is detected after the fact from the
/// output, without a branch on secret data.
///
/// ```
/// use pqkit::ec::x25519::{self, X25519SecretKey};
/// # let mut rng = pqkit::rng::ChaCha20Rng::from_key([7; 32]);
/// let server = X25519SecretKey::generate(&mut rng);
/// let clients: Vec<X25519SecretKey> = (0..10).map(|_| X25519SecretKey::generate(&mut rng)).collect();
/// let client_keys: Vec<_> = clients.iter().map(|c| c.public_key()).collect();
/// let pairs: Vec<_> = client_keys.iter().map(|pk| (&server, pk)).collect();
/// let secrets = x25519::derive_many(&pairs);
/// for (client, secret) in clients.iter().zip(&secrets) {
///     assert_eq!(secret.as_ref().unwrap(), &client.diffie_hellman(&server.public_key()).unwrap());
/// }
/// ```
#[cfg(feature = "alloc")]
pub fn derive_many(pairs: &[(&X25519SecretKey, &X25519PublicKey)]) -> alloc::vec::Vec<Result<SharedSecret>> {
    derive_many_with_backend(multi::Backend::detect(), pairs)
}

/// As [`derive_many`] with a forced backend, for tests and benchmarks.
#[cfg(feature = "alloc")]
#[doc(hidden)]
pub fn derive_many_with_backend(
    backend: Checked<multi::Backend>,
    pairs: &[(&X25519SecretKey, &X25519PublicKey)],
) -> alloc::vec::Vec<Result<SharedSecret>> {
    let mut results = alloc::vec::Vec::with_capacity(pairs.len());
    let mut k = [[0u8; 32]; multi::CHUNK];
    let mut u = [[0u8; 32]; multi::CHUNK];
    let mut out = [[0u8; 32]; multi::CHUNK];
    for group in pairs.chunks(multi::CHUNK) {
        let n = group.len();
        for (i, (sk, pk)) in group.iter().enumerate() {
            k[i] = clamp(&sk.bytes);
            u[i] = pk.0;
        }
        multi::x25519_many(backend, &k[..n], &u[..n], &mut out[..n]);
        for o in &out[..n] {
            // As in `x25519_with_backend`: an all-zero output comes from a low-order peer point, public.
            results.push(if crate::ct::declassify(crate::ct::eq(o, &[0u8; 32])) {
                Err(ZERO_SHARED)
            } else {
                Ok(SharedSecret(*o))
            });
        }
    }
    k.zeroize();
    out.zeroize();
    results
}

/// An X25519 secret key: 32 bytes, clamped at use. Zeroized on drop; `Debug` prints nothing of it.
#[derive(Clone)]
pub struct X25519SecretKey {
    bytes: [u8; 32],
    backend: Checked<Backend>,
}

impl X25519SecretKey {
    /// A fresh key: 32 bytes from `rng`.
    pub fn generate<R: rand_core::CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut bytes = [0u8; 32];
        rng.fill_bytes(&mut bytes);
        X25519SecretKey { bytes, backend: Backend::detect() }
    }

    /// The key with these 32 bytes ([`Error::InvalidLength`] for any other length).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Error::check_length(ALG, "secret key", KEY_LEN, bytes.len())?;
        let mut b = [0u8; 32];
        b.copy_from_slice(bytes);
        Ok(X25519SecretKey { bytes: b, backend: Backend::detect() })
    }

    /// The key from an array.
    pub fn from_array(bytes: [u8; 32]) -> Self {
        X25519SecretKey { bytes, backend: Backend::detect() }
    }

    /// Switches the field backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, backend: Checked<Backend>) -> Self {
        self.backend = backend;
        self
    }

    /// The secret bytes as given (unclamped). Handle with care.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.bytes
    }

    /// The public key X25519(k, 9).
    pub fn public_key(&self) -> X25519PublicKey {
        let mut k = clamp(&self.bytes);
        let u = curve25519::x25519_base(self.backend, &k);
        k.zeroize();
        X25519PublicKey(u)
    }

    /// The shared secret X25519(k, their u). Fails with [`Error::InvalidEncoding`] when it is all zeros
    /// (their key has small order).
    pub fn diffie_hellman(&self, their_public: &X25519PublicKey) -> Result<SharedSecret> {
        x25519_with_backend(self.backend, &self.bytes, &their_public.0).map(SharedSecret)
    }
}

impl Zeroize for X25519SecretKey {
    fn zeroize(&mut self) {
        self.bytes.zeroize();
    }
}

impl Drop for X25519SecretKey {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

impl ZeroizeOnDrop for X25519SecretKey {}

impl fmt::Debug for X25519SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("X25519SecretKey { .. }")
    }
}

/// An X25519 public key: a u-coordinate, 32 bytes. Every 32-byte string is accepted (RFC 7748); keys of
/// small order are caught when they yield an all-zero shared secret.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct X25519PublicKey([u8; 32]);

impl X25519PublicKey {
    /// The key with these 32 bytes ([`Error::InvalidLength`] for any other length).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Error::check_length(ALG, "public key", KEY_LEN, bytes.len())?;
        let mut b = [0u8; 32];
        b.copy_from_slice(bytes);
        Ok(X25519PublicKey(b))
    }

    /// The encoded key.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The encoded key.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0
    }
}

impl From<[u8; 32]> for X25519PublicKey {
    fn from(b: [u8; 32]) -> Self {
        X25519PublicKey(b)
    }
}

impl AsRef<[u8]> for X25519PublicKey {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for X25519PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("X25519PublicKey(")?;
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// The 32-byte shared secret (one type for every KEM and key agreement in pqkit).
pub use crate::ct::SharedSecret;
