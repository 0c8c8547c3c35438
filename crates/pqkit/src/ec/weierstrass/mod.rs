//! The generic layer of the 256-bit short-Weierstrass curves (y² = x³ + ax + b over GF(p), prime order n):
//! one trait, [`PrimeCurve`], that a curve implements with its own field, group and scalar code, and,
//! written once over it, everything above the group:
//!
//! - keys: [`SecretKey`] / [`PublicKey`] (ECDH) and [`SigningKey`] / [`VerifyingKey`] (ECDSA), with SEC1
//!   point encodings (compressed and uncompressed) and, with `alloc`, PKCS#8, SEC1 `ECPrivateKey` and
//!   SubjectPublicKeyInfo files ([`encoding`]);
//! - ECDH ([`SecretKey::diffie_hellman`]): the x-coordinate of d·Q, SEC1 §3.3.1;
//! - ECDSA (FIPS 186-5 §6.4): deterministic nonces by RFC 6979 ([`rfc6979`]) by default, a hedged variant
//!   (RFC 6979 §3.6 with fresh randomness as the additional data k'), prehashed entry points, verification
//!   with an optional low-S rule, signatures as fixed-width P1363 `r ‖ s` or strict DER ([`Signature`]).
//!
//! A curve's module (e.g. [`super::p256`]) is then a set of type aliases: `SigningKey = SigningKey<NistP256>`.
//!
//! ## The contract of [`PrimeCurve`]
//! - Scalars (`Self::Scalar`) are integers modulo n in whatever internal form the curve likes (Montgomery
//!   form, plain limbs). Every scalar function is constant time except those named `_vartime`.
//! - Points handed across the trait are affine and valid (`Self::Affine`: on the curve, never the identity):
//!   the curve makes them only by decoding checked coordinates or by multiplying. The internal projective
//!   form, tables and formulas are the curve's business.
//! - [`PrimeCurve::mul_base`] and [`PrimeCurve::mul`] are constant time in the scalar (they handle secrets);
//!   they return `None` only for the identity (a zero scalar), which callers treat as an error.
//! - [`PrimeCurve::verify_vartime`] computes x(u1·G + u2·Q) mod n and compares it with r: variable time,
//!   public inputs only (the curve may compare in projective coordinates and skip the inversion).
//! - Every function that may have a faster backend takes a `Checked<Self::Backend>` (the one dispatch
//!   mechanism, [`crate::dispatch`]); keys store one, chosen by `Checked::best()` when they are made.
//!
//! Hashing is SHA-256 for both the message and RFC 6979's HMAC-DRBG (pqkit's own [`crate::mac::Hmac`]).
//! Prehashed entry points take a digest of any length of at least 16 bytes, converted with bits2int (its
//! leftmost 256 bits).

pub mod ecdsa;
#[cfg(feature = "alloc")]
pub mod encoding;
pub mod rfc6979;

use crate::dispatch::{BackendSet, Checked};
use crate::{Error, Result};
use core::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

pub use ecdsa::{DerSignature, Signature, SigningKey, VerifyingKey};

/// Length of a field element, a scalar and a coordinate, in bytes.
pub const FIELD_LEN: usize = 32;
/// Length of a compressed SEC1 point (`02`/`03` ‖ x).
pub const COMPRESSED_LEN: usize = 33;
/// Length of an uncompressed SEC1 point (`04` ‖ x ‖ y).
pub const UNCOMPRESSED_LEN: usize = 65;

/// A 256-bit prime-order short-Weierstrass curve: what a curve implements so that the generic keys, ECDSA,
/// ECDH and encodings of this module work over it. See the [module docs](self) for the contract.
///
/// All byte strings are big-endian (SEC1, FIPS 186-5).
pub trait PrimeCurve: Sized + Copy + Send + Sync + 'static {
    /// The curve's name as users know it, e.g. `"P-256"`: errors about keys and points use it.
    const NAME: &'static str;
    /// `"ECDSA <curve>"`, the algorithm name of signature errors.
    const ECDSA_NAME: &'static str;
    /// `"ECDH <curve>"`, the algorithm name of key-agreement errors.
    const ECDH_NAME: &'static str;
    /// The curve's object identifier, dotted (`"1.2.840.10045.3.1.7"` for P-256), as used in the
    /// `ECParameters` of SEC1 / RFC 5480 key files.
    const OID: &'static str;
    /// The group order n, big-endian.
    const ORDER: [u8; 32];
    /// Whether ECDSA signing returns the low-S form (s ≤ n/2, replacing s by n − s), as secp256k1 practice
    /// (Bitcoin's consensus rules, libsecp256k1, RustCrypto `k256`) requires. Off by default: FIPS 186-5
    /// signatures are returned as computed.
    const NORMALIZE_S: bool = false;

    /// The curve's backends (field arithmetic implementations), declared with [`crate::backends!`].
    type Backend: BackendSet + Send + Sync;
    /// An integer modulo n, in the curve's internal form.
    type Scalar: Copy + Zeroize + Send + Sync;
    /// A valid affine point: on the curve, not the identity.
    type Affine: Copy + Send + Sync;

    // ---- scalars (mod n) ----

    /// The scalar with this big-endian value if it is below n (`None` otherwise). The decision is the only
    /// data-dependent output; the conversion itself is constant time.
    fn scalar_from_canonical(bytes: &[u8; 32]) -> Option<Self::Scalar>;
    /// The big-endian value reduced modulo n (constant time).
    fn scalar_from_reduced(bytes: &[u8; 32]) -> Self::Scalar;
    /// The canonical big-endian encoding (below n).
    fn scalar_to_bytes(s: &Self::Scalar) -> [u8; 32];
    /// a + b mod n.
    fn scalar_add(a: &Self::Scalar, b: &Self::Scalar) -> Self::Scalar;
    /// a · b mod n.
    fn scalar_mul(backend: Checked<Self::Backend>, a: &Self::Scalar, b: &Self::Scalar) -> Self::Scalar;
    /// −a mod n.
    fn scalar_neg(a: &Self::Scalar) -> Self::Scalar;
    /// a⁻¹ mod n (0 for 0), constant time: for secrets (the ECDSA nonce).
    fn scalar_invert(backend: Checked<Self::Backend>, a: &Self::Scalar) -> Self::Scalar;
    /// a⁻¹ mod n (0 for 0), variable time: for public values only (verification's s).
    fn scalar_invert_vartime(backend: Checked<Self::Backend>, a: &Self::Scalar) -> Self::Scalar;
    /// Whether a is zero (constant-time computation; the answer is returned as a `bool`).
    fn scalar_is_zero(a: &Self::Scalar) -> bool;
    /// Whether a > (n − 1)/2 (a "high" ECDSA s).
    fn scalar_is_high(a: &Self::Scalar) -> bool;

    // ---- the group ----

    /// k·G, constant time in k; `None` only when it is the identity (k = 0).
    fn mul_base(backend: Checked<Self::Backend>, k: &Self::Scalar) -> Option<Self::Affine>;
    /// k·P, constant time in k and P; `None` only when it is the identity (k = 0).
    fn mul(backend: Checked<Self::Backend>, p: &Self::Affine, k: &Self::Scalar) -> Option<Self::Affine>;
    /// Whether u1·G + u2·Q is not the identity and its x-coordinate, reduced modulo n, equals r. Variable
    /// time: public inputs only.
    fn verify_vartime(
        backend: Checked<Self::Backend>,
        q: &Self::Affine,
        u1: &Self::Scalar,
        u2: &Self::Scalar,
        r: &Self::Scalar,
    ) -> bool;

    // ---- points ----

    /// The canonical big-endian coordinates (x, y) of a valid point.
    fn affine_coordinates(p: &Self::Affine) -> ([u8; 32], [u8; 32]);
    /// The point with these coordinates, if both are below p and satisfy the curve equation; else a reason.
    fn affine_from_coordinates(
        backend: Checked<Self::Backend>,
        x: &[u8; 32],
        y: &[u8; 32],
    ) -> core::result::Result<Self::Affine, &'static str>;
    /// The point with this x-coordinate and the parity `y_odd` of y, if x is below p and x³ + ax + b is a
    /// square; else a reason.
    fn affine_decompress(
        backend: Checked<Self::Backend>,
        x: &[u8; 32],
        y_odd: bool,
    ) -> core::result::Result<Self::Affine, &'static str>;
}

fn bad_point<C: PrimeCurve>(reason: &'static str) -> Error {
    Error::InvalidEncoding { algorithm: C::NAME, reason }
}

/// Parses a SEC1 point (SEC1 v2 §2.3.4): `04 ‖ x ‖ y` (65 bytes) or `02`/`03 ‖ x` (33 bytes). The identity
/// (`00`), the hybrid forms (`06`/`07`), other tags and other lengths are refused, as are coordinates not
/// below p and points not on the curve.
pub(crate) fn decode_sec1<C: PrimeCurve>(backend: Checked<C::Backend>, bytes: &[u8]) -> Result<C::Affine> {
    let mut x = [0u8; 32];
    match (bytes.first(), bytes.len()) {
        (None, _) => Err(Error::InvalidLength {
            algorithm: C::NAME,
            field: "public key",
            expected: crate::error::Expected::OneOf(COMPRESSED_LEN, UNCOMPRESSED_LEN),
            actual: 0,
        }),
        (Some(0x00), 1) => Err(bad_point::<C>("public key: the point at infinity")),
        (Some(0x04), UNCOMPRESSED_LEN) => {
            let mut y = [0u8; 32];
            x.copy_from_slice(&bytes[1..33]);
            y.copy_from_slice(&bytes[33..65]);
            C::affine_from_coordinates(backend, &x, &y).map_err(bad_point::<C>)
        }
        (Some(t @ (0x02 | 0x03)), COMPRESSED_LEN) => {
            x.copy_from_slice(&bytes[1..33]);
            C::affine_decompress(backend, &x, *t == 0x03).map_err(bad_point::<C>)
        }
        (Some(0x00 | 0x02 | 0x03 | 0x04 | 0x06 | 0x07), n) if n != COMPRESSED_LEN && n != UNCOMPRESSED_LEN => {
            Err(Error::InvalidLength {
                algorithm: C::NAME,
                field: "public key",
                expected: crate::error::Expected::OneOf(COMPRESSED_LEN, UNCOMPRESSED_LEN),
                actual: n,
            })
        }
        (Some(0x06 | 0x07), _) => Err(bad_point::<C>("public key: the SEC1 hybrid form is not supported")),
        _ => Err(bad_point::<C>("public key: the SEC1 tag does not match the length (02/03 for 33 bytes, 04 for 65)")),
    }
}

/// A SEC1 encoding of a point, compressed (33 bytes) or uncompressed (65 bytes).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct EncodedPoint {
    buf: [u8; UNCOMPRESSED_LEN],
    len: u8,
}

impl EncodedPoint {
    fn new<C: PrimeCurve>(p: &C::Affine, compressed: bool) -> Self {
        let (x, y) = C::affine_coordinates(p);
        let mut buf = [0u8; UNCOMPRESSED_LEN];
        buf[1..33].copy_from_slice(&x);
        if compressed {
            buf[0] = 0x02 | (y[31] & 1);
            EncodedPoint { buf, len: COMPRESSED_LEN as u8 }
        } else {
            buf[0] = 0x04;
            buf[33..].copy_from_slice(&y);
            EncodedPoint { buf, len: UNCOMPRESSED_LEN as u8 }
        }
    }

    /// The encoding.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

impl AsRef<[u8]> for EncodedPoint {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for EncodedPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// A public key: a valid point (on the curve, not the identity), with the backend that runs its operations.
pub struct PublicKey<C: PrimeCurve> {
    pub(crate) point: C::Affine,
    pub(crate) backend: Checked<C::Backend>,
}

impl<C: PrimeCurve> Clone for PublicKey<C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C: PrimeCurve> Copy for PublicKey<C> {}

impl<C: PrimeCurve> PublicKey<C> {
    /// Parses a SEC1 point (SEC1 v2 §2.3.4), compressed (33 bytes, `02`/`03 ‖ x`) or uncompressed (65 bytes,
    /// `04 ‖ x ‖ y`). Refused: a length that is neither ([`Error::InvalidLength`]); the identity (`00`), the
    /// hybrid forms (`06`/`07`), a tag that does not match the length, a coordinate not below p, a point not
    /// on the curve, an x with no point ([`Error::InvalidEncoding`], saying which).
    pub fn from_sec1_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_sec1_bytes_with_backend(Checked::best(), bytes)
    }

    /// As [`from_sec1_bytes`](Self::from_sec1_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_sec1_bytes_with_backend(backend: Checked<C::Backend>, bytes: &[u8]) -> Result<Self> {
        Ok(PublicKey { point: decode_sec1::<C>(backend, bytes)?, backend })
    }

    /// The SEC1 encoding: 33 bytes if `compressed`, else 65.
    pub fn to_sec1_bytes(&self, compressed: bool) -> EncodedPoint {
        EncodedPoint::new::<C>(&self.point, compressed)
    }

    /// The uncompressed SEC1 encoding, 65 bytes.
    pub fn to_uncompressed(&self) -> [u8; UNCOMPRESSED_LEN] {
        self.to_sec1_bytes(false).buf
    }

    /// The affine coordinates (x, y), big-endian.
    pub fn coordinates(&self) -> ([u8; 32], [u8; 32]) {
        C::affine_coordinates(&self.point)
    }

    /// Switches the backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, backend: Checked<C::Backend>) -> Self {
        self.backend = backend;
        self
    }
}

impl<C: PrimeCurve> PartialEq for PublicKey<C> {
    fn eq(&self, other: &Self) -> bool {
        C::affine_coordinates(&self.point) == C::affine_coordinates(&other.point)
    }
}
impl<C: PrimeCurve> Eq for PublicKey<C> {}

impl<C: PrimeCurve> fmt::Debug for PublicKey<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey<{}>({:?})", C::NAME, self.to_sec1_bytes(true))
    }
}

/// A secret key: a scalar d in [1, n − 1] and its public key d·G. Zeroized on drop; `Debug` prints nothing
/// of it. Used for ECDH ([`diffie_hellman`](Self::diffie_hellman)); [`SigningKey`] wraps one for ECDSA.
pub struct SecretKey<C: PrimeCurve> {
    pub(crate) d: C::Scalar,
    pub(crate) public: PublicKey<C>,
}

impl<C: PrimeCurve> Clone for SecretKey<C> {
    fn clone(&self) -> Self {
        SecretKey { d: self.d, public: self.public }
    }
}

impl<C: PrimeCurve> SecretKey<C> {
    /// A fresh key: 32 bytes from `rng` until they encode a scalar in [1, n − 1] (rejection sampling, as
    /// FIPS 186-5 §A.2.2; the candidates that are discarded are independent of the key kept).
    pub fn generate<R: rand_core::CryptoRng + ?Sized>(rng: &mut R) -> Self {
        Self::generate_with_backend(Checked::best(), rng)
    }

    /// As [`generate`](Self::generate) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn generate_with_backend<R: rand_core::CryptoRng + ?Sized>(backend: Checked<C::Backend>, rng: &mut R) -> Self {
        let mut b = [0u8; 32];
        loop {
            rng.fill_bytes(&mut b);
            if let Ok(k) = Self::from_bytes_with_backend(backend, &b) {
                b.zeroize();
                return k;
            }
        }
    }

    /// The key with this big-endian scalar: exactly 32 bytes ([`Error::InvalidLength`]) encoding a value in
    /// [1, n − 1] ([`Error::InvalidEncoding`] otherwise).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_backend(Checked::best(), bytes)
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(backend: Checked<C::Backend>, bytes: &[u8]) -> Result<Self> {
        Error::check_length(C::NAME, "secret key", FIELD_LEN, bytes.len())?;
        let mut b = [0u8; 32];
        b.copy_from_slice(bytes);
        let d = C::scalar_from_canonical(&b);
        b.zeroize();
        let range = Error::InvalidEncoding { algorithm: C::NAME, reason: "secret key: not in [1, n - 1]" };
        let Some(mut d) = d else { return Err(range) };
        // Validity is returned as an error: public.
        if crate::ct::declassify(C::scalar_is_zero(&d)) {
            return Err(range);
        }
        match C::mul_base(backend, &d) {
            Some(point) => Ok(SecretKey { d, public: PublicKey { point, backend } }),
            None => {
                d.zeroize();
                Err(range)
            }
        }
    }

    /// The secret scalar, big-endian. Handle with care.
    pub fn to_bytes(&self) -> [u8; 32] {
        C::scalar_to_bytes(&self.d)
    }

    /// The public key d·G.
    pub fn public_key(&self) -> PublicKey<C> {
        self.public
    }

    /// Switches the backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, backend: Checked<C::Backend>) -> Self {
        self.public.backend = backend;
        self
    }

    /// ECDH (SEC1 §3.3.1): the x-coordinate of d·Q, 32 bytes. The peer key was validated when it was parsed
    /// (on the curve, not the identity); n is prime, so d·Q is never the identity, and should it ever be, it
    /// is an error, not an all-zero secret. Constant time in d.
    pub fn diffie_hellman(&self, their_public: &PublicKey<C>) -> Result<SharedSecret> {
        match C::mul(self.public.backend, &their_public.point, &self.d) {
            Some(p) => Ok(crate::ct::SharedSecret(C::affine_coordinates(&p).0)),
            None => Err(Error::InvalidEncoding { algorithm: C::ECDH_NAME, reason: "the shared point is the identity" }),
        }
    }
}

impl<C: PrimeCurve> Zeroize for SecretKey<C> {
    fn zeroize(&mut self) {
        self.d.zeroize();
    }
}

impl<C: PrimeCurve> Drop for SecretKey<C> {
    fn drop(&mut self) {
        self.d.zeroize();
    }
}

impl<C: PrimeCurve> ZeroizeOnDrop for SecretKey<C> {}

impl<C: PrimeCurve> fmt::Debug for SecretKey<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey<{}> {{ .. }}", C::NAME)
    }
}

/// The 32-byte shared secret (one type for every key agreement in pqkit).
pub use crate::ct::SharedSecret;

/// Big-endian 32-byte comparison a < b, variable time (for public values and constants).
pub(crate) fn lt_be(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a < b
}
