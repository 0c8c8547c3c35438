//! secp256k1 (SEC 2; the curve of Bitcoin): y² = x³ + 7 over GF(2^256 − 2^32 − 977). ECDSA with SHA-256 and
//! ECDH through the generic Weierstrass layer ([`super::weierstrass`]: RFC 6979 or hedged nonces, low-S
//! signing, strict or low-S verification, DER and P1363 signatures, SEC1/PKCS#8/SPKI keys), and BIP-340
//! Schnorr signatures ([`schnorr`]). ECDSA signing returns low-S signatures (s ≤ n/2), as Bitcoin and
//! libsecp256k1 require; plain [`VerifyingKey::verify`] accepts both forms, `verify_low_s` only the low one.
//! This module supplies the curve ([`Secp256k1`]) and names the types.
//!
//! ```
//! use pqkit::ec::secp256k1::{SecretKey, Signature, SigningKey, VerifyingKey};
//! # let mut rng = pqkit::rng::ChaCha20Rng::from_key([7; 32]);
//! let sk = SigningKey::generate(&mut rng);
//! let sig = sk.sign(b"message"); // RFC 6979, deterministic, low S
//! let vk = VerifyingKey::from_sec1_bytes(sk.verifying_key().to_sec1_bytes(true).as_bytes()).unwrap();
//! assert!(vk.verify_low_s(b"message", &Signature::from_der(sig.to_der().as_bytes()).unwrap()).is_ok());
//!
//! let (a, b) = (SecretKey::generate(&mut rng), SecretKey::generate(&mut rng));
//! assert_eq!(a.diffie_hellman(&b.public_key()).unwrap(), b.diffie_hellman(&a.public_key()).unwrap());
//! ```
//!
//! ## Layers
//! - `field`: GF(p) in four 64-bit limbs with the special reduction 2^256 = 2^32 + 977 (portable Rust,
//!   `u128` products, every operation but the run-time inversions a `const fn`).
//! - `scalar`: integers modulo the group order n (Montgomery multiplication, constant-time inversion, the
//!   GLV decomposition).
//! - `group`: complete projective formulas (Renes–Costello–Batina, a = 0) for every secret path — the
//!   fixed-base multiplication over a generated table, the variable-base windowed multiplication —
//!   and Jacobian formulas with the GLV endomorphism and interleaved wNAF for verification.
//! - [`schnorr`], the BIP-340 signatures.
//!
//! ## Constant time
//! Key generation, signing (ECDSA and Schnorr) and ECDH: masked table look-ups over whole rows, complete
//! formulas (no exceptional case to branch on), masked negations, and the fixed-length safegcd divsteps
//! (`ec::safegcd`) for the inversion of a result's Z.
//! Verification and point decoding handle public data and may branch.

pub(crate) mod field;
pub(crate) mod group;
pub(crate) mod scalar;
pub mod schnorr;

use super::weierstrass::{self, PrimeCurve};
use crate::dispatch::Checked;
use field::Fe;
use group::Affine;
#[doc(hidden)]
pub use scalar::Scalar;

crate::dispatch::backends! {
    /// An implementation of the secp256k1 field arithmetic.
    ///
    /// Crate-internal plumbing, public only so tests and benchmarks can force each backend.
    #[doc(hidden)]
    pub enum Backend for "secp256k1" {
        /// Portable Rust: four 64-bit limbs, `u128` products. The reference.
        Soft: [],
        /// The same Rust compiled a second time with BMI2 and ADX enabled (the point multiplications and
        /// verification, whole: see [`bmi2_adx`]). `mulx` leaves the flags alone and takes any registers, so
        /// the products of a field multiplication schedule more freely. On an Intel Xeon (family 6 model 167)
        /// ECDH and verification ran 2–4% faster than with the portable build (2026-12-03).
        Bmi2Adx: [BMI2, ADX],
    }
}

/// Runs `$f(args)` of the chosen backend's build: [`portable`] or [`bmi2_adx`].
macro_rules! with_arith {
    ($backend:expr, $f:ident ( $($arg:expr),* )) => {
        match $backend.get() {
            Backend::Soft => portable::$f($($arg),*),
            #[cfg(target_arch = "x86_64")]
            Backend::Bmi2Adx => bmi2_adx::$f($backend, $($arg),*),
            // Never checked off x86_64 (no CPU there reports BMI2 and ADX).
            #[cfg(not(target_arch = "x86_64"))]
            Backend::Bmi2Adx => portable::$f($($arg),*),
        }
    };
}

/// The entry points that do the curve arithmetic, over [`group`]'s functions, which are all `#[inline(always)]`
/// so that each build below holds its own copy of the whole computation.
macro_rules! entry_points {
    ($(#[$attr:meta])*) => {
        /// `k·G`, `None` for the identity.
        $(#[$attr])*
        pub(super) fn mul_base(k: &Scalar) -> Option<AffinePoint> {
            affine(&group::mul_base(k))
        }
        /// `k·P`, `None` for the identity.
        $(#[$attr])*
        pub(super) fn mul(p: &AffinePoint, k: &Scalar) -> Option<AffinePoint> {
            affine_jac(&group::mul_ct(k, &p.0))
        }
        /// Whether `u1·G + u2·Q` has x ≡ r (mod n).
        $(#[$attr])*
        pub(super) fn verify(q: &AffinePoint, u1: &Scalar, u2: &Scalar, r: &Scalar) -> bool {
            group::double_mul_vartime(u1, u2, &q.0).x_equals_mod_n_vartime(r)
        }
    };
}

/// The portable build.
mod portable {
    use super::{AffinePoint, Scalar, affine, affine_jac, group};
    entry_points!();
}

/// The same code built with BMI2 and ADX enabled, behind entry points that check the proof.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod bmi2_adx {
    use super::{AffinePoint, Backend, Scalar};
    use crate::dispatch::Checked;

    mod build {
        use super::super::{AffinePoint, Scalar, affine, affine_jac, group};
        entry_points!(#[target_feature(enable = "bmi2,adx")]);
    }

    /// Defines an entry point that checks the proof and calls the BMI2/ADX build.
    macro_rules! entry {
        ($( $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty; )*) => {$(
            #[doc = concat!("`", stringify!($name), "` of the BMI2/ADX build.")]
            pub(super) fn $name(backend: Checked<Backend>, $($arg: $t),*) -> $ret {
                assert!(backend.covers(Backend::Bmi2Adx));
                // SAFETY: the proof says this CPU has BMI2 and ADX, the only features the build was compiled for.
                unsafe { build::$name($($arg),*) }
            }
        )*};
    }

    entry! {
        mul_base(k: &Scalar) -> Option<AffinePoint>;
        mul(p: &AffinePoint, k: &Scalar) -> Option<AffinePoint>;
        verify(q: &AffinePoint, u1: &Scalar, u2: &Scalar, r: &Scalar) -> bool;
    }
}

/// The curve secp256k1, for [`weierstrass`]'s generic types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Secp256k1;

/// A valid affine secp256k1 point (crate-internal form).
#[derive(Clone, Copy)]
pub struct AffinePoint(Affine);

impl core::fmt::Debug for AffinePoint {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "AffinePoint({:02x?}, {:02x?})", self.0.x.to_bytes(), self.0.y.to_bytes())
    }
}

/// The affine point of a projective result, `None` for the identity (constant-time inversion).
fn affine(p: &group::Proj) -> Option<AffinePoint> {
    checked(p.to_affine())
}

/// The affine point of a Jacobian result, `None` for the identity (constant-time inversion).
fn affine_jac(p: &group::Jac) -> Option<AffinePoint> {
    checked(p.to_affine_ct())
}

/// The point unless the mask says it is the identity.
fn checked((a, identity): (Affine, field::Mask)) -> Option<AffinePoint> {
    // The identity as a result is an error or a candidate rejection: public.
    if crate::ct::declassify(identity) != 0 { None } else { Some(AffinePoint(a)) }
}

impl PrimeCurve for Secp256k1 {
    const NAME: &'static str = "secp256k1";
    const ECDSA_NAME: &'static str = "ECDSA secp256k1";
    const ECDH_NAME: &'static str = "ECDH secp256k1";
    const OID: &'static str = "1.3.132.0.10";
    const NORMALIZE_S: bool = true;
    const ORDER: [u8; 32] = {
        let mut out = [0u8; 32];
        let mut i = 0;
        while i < 32 {
            out[i] = (scalar::N[3 - i / 8] >> (8 * (7 - i % 8))) as u8;
            i += 1;
        }
        out
    };

    type Backend = Backend;
    type Scalar = Scalar;
    type Affine = AffinePoint;

    fn scalar_from_canonical(bytes: &[u8; 32]) -> Option<Scalar> {
        let (s, ok) = Scalar::from_bytes_checked(bytes);
        // Range validity: a key error, or an ECDSA candidate rejection (probability ~2^-128): public.
        if crate::ct::declassify(ok) == 0 { None } else { Some(s) }
    }
    fn scalar_from_reduced(bytes: &[u8; 32]) -> Scalar {
        Scalar::from_bytes_reduced(bytes)
    }
    fn scalar_to_bytes(s: &Scalar) -> [u8; 32] {
        s.to_bytes()
    }
    fn scalar_add(a: &Scalar, b: &Scalar) -> Scalar {
        a.add(b)
    }
    fn scalar_mul(_backend: Checked<Backend>, a: &Scalar, b: &Scalar) -> Scalar {
        a.mul(b)
    }
    fn scalar_neg(a: &Scalar) -> Scalar {
        a.neg()
    }
    fn scalar_invert(_backend: Checked<Backend>, a: &Scalar) -> Scalar {
        a.invert()
    }
    fn scalar_invert_vartime(_backend: Checked<Backend>, a: &Scalar) -> Scalar {
        a.invert_vartime()
    }
    fn scalar_is_zero(a: &Scalar) -> bool {
        a.mask_is_zero() != 0
    }
    fn scalar_is_high(a: &Scalar) -> bool {
        a.mask_is_high() != 0
    }

    fn mul_base(backend: Checked<Backend>, k: &Scalar) -> Option<AffinePoint> {
        with_arith!(backend, mul_base(k))
    }
    fn mul(backend: Checked<Backend>, p: &AffinePoint, k: &Scalar) -> Option<AffinePoint> {
        with_arith!(backend, mul(p, k))
    }
    fn verify_vartime(backend: Checked<Backend>, q: &AffinePoint, u1: &Scalar, u2: &Scalar, r: &Scalar) -> bool {
        with_arith!(backend, verify(q, u1, u2, r))
    }

    fn affine_coordinates(p: &AffinePoint) -> ([u8; 32], [u8; 32]) {
        (p.0.x.to_bytes(), p.0.y.to_bytes())
    }
    fn affine_from_coordinates(
        _backend: Checked<Backend>,
        x: &[u8; 32],
        y: &[u8; 32],
    ) -> Result<AffinePoint, &'static str> {
        let (Some(x), Some(y)) = (Fe::from_bytes(x), Fe::from_bytes(y)) else {
            return Err("public key: a coordinate is not below p");
        };
        Affine::from_xy_vartime(x, y).map(AffinePoint).ok_or("public key: the point is not on the curve")
    }
    fn affine_decompress(_backend: Checked<Backend>, x: &[u8; 32], y_odd: bool) -> Result<AffinePoint, &'static str> {
        let Some(x) = Fe::from_bytes(x) else { return Err("public key: x is not below p") };
        Affine::lift_x(x, y_odd as u64).map(AffinePoint).ok_or("public key: no point on the curve has this x")
    }
}

/// A secp256k1 ECDSA signing key (RFC 6979 deterministic signatures by default).
pub type SigningKey = weierstrass::SigningKey<Secp256k1>;
/// A secp256k1 ECDSA verifying key.
pub type VerifyingKey = weierstrass::VerifyingKey<Secp256k1>;
/// A secp256k1 ECDSA signature (r, s in [1, n − 1]); P1363 or DER encodings.
pub type Signature = weierstrass::Signature<Secp256k1>;
/// A secp256k1 secret key (ECDH).
pub type SecretKey = weierstrass::SecretKey<Secp256k1>;
/// A secp256k1 public key (ECDH).
pub type PublicKey = weierstrass::PublicKey<Secp256k1>;
/// The 32-byte ECDH shared secret (the x-coordinate).
pub use crate::ct::SharedSecret;
/// A DER signature without allocation.
pub use weierstrass::DerSignature;
