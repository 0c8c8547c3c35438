//! NIST P-256 (secp256r1, prime256v1; FIPS 186-5, SP 800-186): ECDSA with SHA-256 and ECDH, on pqkit's own
//! field, scalar and group code. The schemes, keys and encodings are the generic ones of
//! [`super::weierstrass`]; this module supplies the curve ([`NistP256`]) and names the types.
//!
//! ```
//! use pqkit::ec::p256::{SecretKey, Signature, SigningKey, VerifyingKey};
//! # let mut rng = pqkit::rng::ChaCha20Rng::from_key([7; 32]);
//! let sk = SigningKey::generate(&mut rng);
//! let sig = sk.sign(b"message"); // RFC 6979, deterministic
//! let vk = VerifyingKey::from_sec1_bytes(sk.verifying_key().to_sec1_bytes(true).as_bytes()).unwrap();
//! assert!(vk.verify(b"message", &Signature::from_der(sig.to_der().as_bytes()).unwrap()).is_ok());
//!
//! let (a, b) = (SecretKey::generate(&mut rng), SecretKey::generate(&mut rng));
//! assert_eq!(a.diffie_hellman(&b.public_key()).unwrap(), b.diffie_hellman(&a.public_key()).unwrap());
//! ```
//!
//! ## Layers
//! - `field`: GF(p), p = 2^256 − 2^224 + 2^192 + 2^96 − 1, four 64-bit limbs in Montgomery form; the
//!   portable `u128` code (also `const fn`, for the tables) and, on x86_64, a BMI2/ADX backend
//!   (`mulx` + `adcx`/`adox`) for the products, chosen when the CPU has both (see [`Backend`]).
//! - `scalar`: integers modulo n, Montgomery form, constant time.
//! - inversions modulo p and modulo n: the Bernstein–Yang divsteps shared by every curve (`ec::safegcd`),
//!   constant time for secrets, the variable-time variant for public values (verification's s, the
//!   tables of multiples of a public point).
//! - `point`: the group with the complete formulas of Renes–Costello–Batina (a = −3), the fixed-base
//!   table (generated source, see `crate::ec::table`), the constant-time multiplications and the variable-time verification
//!   sum.
//!
//! ## Constant time
//! Key generation, signing and ECDH: masked table look-ups over whole rows, complete formulas (no
//! exceptional case to branch on), safegcd inversions (a fixed number of
//! division steps, masks only). Verification and point decoding
//! handle public data and may branch.

pub mod batch;
mod field;
mod point;
use super::safegcd;
#[cfg(target_arch = "x86_64")]
mod bmi2_adx;
mod scalar;

use super::weierstrass::{self, PrimeCurve};
use crate::dispatch::Checked;
use field::Soft;
use point::Aff;
pub use scalar::Scalar;

crate::dispatch::backends! {
    /// An implementation of the P-256 field arithmetic.
    ///
    /// Crate-internal plumbing, public only so tests and benchmarks can force each backend.
    #[doc(hidden)]
    pub enum Backend for "P-256" {
        /// Portable Rust: four 64-bit limbs, `u128` products, Montgomery form. The reference.
        Soft: [],
        /// x86_64 BMI2 + ADX: the field product specialised to p (`mulx` with the two carry chains of
        /// `adcx`/`adox`, each row followed by its reduction round, the final subtraction by `cmov`, all in
        /// one `asm!` block), a dedicated squaring (cross products once), the Jacobian doubling as one
        /// `asm!` routine (the whole formula, its field operations inlined over a small frame), the
        /// generic Montgomery product for the scalars, and the constant-time inversions' division steps on
        /// packed words by `cmov` (`x86::divsteps`); the constant-time table scans of k·G and k·P use AVX2
        /// (every CPU with ADX has it). Chosen wherever the CPU has the three: on an AMD Zen 4 its field product takes about half the
        /// time of the portable one (a chain of dependent products, 2026-11-26).
        Bmi2Adx: [BMI2, ADX, AVX2],
    }
}

/// Runs `$f::<A>(args)` with the chosen backend's arithmetic.
macro_rules! with_arith {
    ($backend:expr, $f:ident ( $($arg:expr),* )) => {
        match $backend.get() {
            Backend::Soft => generic::$f::<Soft>($($arg),*),
            #[cfg(target_arch = "x86_64")]
            Backend::Bmi2Adx => bmi2_adx::$f($backend, $($arg),*),
            // Never checked off x86_64 (no CPU there reports BMI2 and ADX).
            #[cfg(not(target_arch = "x86_64"))]
            Backend::Bmi2Adx => generic::$f::<Soft>($($arg),*),
        }
    };
}

/// The curve NIST P-256, for [`weierstrass`]'s generic types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NistP256;

/// The functions every backend runs, over its arithmetic.
mod generic {
    use super::point::{self, Aff, Arith};
    use super::scalar::Scalar;

    pub(super) fn mul_base_affine<A: Arith>(k: &Scalar) -> Option<Aff> {
        point::to_affine::<A>(&point::mul_base::<A>(k))
    }

    pub(super) fn mul_affine<A: Arith>(p: &Aff, k: &Scalar) -> Option<Aff> {
        point::to_affine::<A>(&point::mul::<A>(p, k))
    }

    pub(super) fn verify<A: Arith>(q: &Aff, u1: &Scalar, u2: &Scalar, r: &Scalar) -> bool {
        point::verify::<A>(q, u1, u2, r)
    }

    pub(super) fn from_coordinates<A: Arith>(x: &[u8; 32], y: &[u8; 32]) -> Result<Aff, &'static str> {
        point::from_coordinates::<A>(x, y)
    }

    pub(super) fn decompress<A: Arith>(x: &[u8; 32], y_odd: bool) -> Result<Aff, &'static str> {
        point::decompress::<A>(x, y_odd)
    }
}

/// A valid affine P-256 point (crate-internal form).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AffinePoint(Aff);

impl PrimeCurve for NistP256 {
    const NAME: &'static str = "P-256";
    const ECDSA_NAME: &'static str = "ECDSA P-256";
    const ECDH_NAME: &'static str = "ECDH P-256";
    const OID: &'static str = "1.2.840.10045.3.1.7";
    const ORDER: [u8; 32] = field::limbs_to_be(&scalar::N.m);

    type Backend = Backend;
    type Scalar = Scalar;
    type Affine = AffinePoint;

    fn scalar_from_canonical(bytes: &[u8; 32]) -> Option<Scalar> {
        Scalar::from_be_canonical(bytes)
    }
    fn scalar_from_reduced(bytes: &[u8; 32]) -> Scalar {
        Scalar::from_be_reduced(bytes)
    }
    fn scalar_to_bytes(s: &Scalar) -> [u8; 32] {
        s.to_be_bytes()
    }
    fn scalar_add(a: &Scalar, b: &Scalar) -> Scalar {
        a.add(b)
    }
    fn scalar_mul(backend: Checked<Backend>, a: &Scalar, b: &Scalar) -> Scalar {
        match backend.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Bmi2Adx => bmi2_adx::scalar_mul(backend, a, b),
            _ => a.mul(b),
        }
    }
    fn scalar_neg(a: &Scalar) -> Scalar {
        a.neg()
    }
    fn scalar_invert(backend: Checked<Backend>, a: &Scalar) -> Scalar {
        match backend.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Bmi2Adx => bmi2_adx::scalar_invert(backend, a),
            _ => a.invert(),
        }
    }
    fn scalar_invert_vartime(_backend: Checked<Backend>, a: &Scalar) -> Scalar {
        a.invert_vartime()
    }
    fn scalar_is_zero(a: &Scalar) -> bool {
        a.is_zero_mask() != 0
    }
    fn scalar_is_high(a: &Scalar) -> bool {
        a.is_high()
    }

    fn mul_base(backend: Checked<Backend>, k: &Scalar) -> Option<AffinePoint> {
        with_arith!(backend, mul_base_affine(k)).map(AffinePoint)
    }
    fn mul(backend: Checked<Backend>, p: &AffinePoint, k: &Scalar) -> Option<AffinePoint> {
        with_arith!(backend, mul_affine(&p.0, k)).map(AffinePoint)
    }
    fn verify_vartime(backend: Checked<Backend>, q: &AffinePoint, u1: &Scalar, u2: &Scalar, r: &Scalar) -> bool {
        with_arith!(backend, verify(&q.0, u1, u2, r))
    }

    fn affine_coordinates(p: &AffinePoint) -> ([u8; 32], [u8; 32]) {
        (p.0.x.to_be_bytes(), p.0.y.to_be_bytes())
    }
    fn affine_from_coordinates(
        backend: Checked<Backend>,
        x: &[u8; 32],
        y: &[u8; 32],
    ) -> Result<AffinePoint, &'static str> {
        with_arith!(backend, from_coordinates(x, y)).map(AffinePoint)
    }
    fn affine_decompress(backend: Checked<Backend>, x: &[u8; 32], y_odd: bool) -> Result<AffinePoint, &'static str> {
        with_arith!(backend, decompress(x, y_odd)).map(AffinePoint)
    }
}

/// A P-256 ECDSA signing key (RFC 6979 deterministic signatures by default).
pub type SigningKey = weierstrass::SigningKey<NistP256>;
/// A P-256 ECDSA verifying key.
pub type VerifyingKey = weierstrass::VerifyingKey<NistP256>;
/// A P-256 ECDSA signature (r, s in [1, n − 1]); P1363 or DER encodings.
pub type Signature = weierstrass::Signature<NistP256>;
/// A P-256 secret key (ECDH).
pub type SecretKey = weierstrass::SecretKey<NistP256>;
/// A P-256 public key (ECDH).
pub type PublicKey = weierstrass::PublicKey<NistP256>;
/// The 32-byte ECDH shared secret (the x-coordinate).
pub use crate::ct::SharedSecret;
/// A DER signature without allocation.
pub use weierstrass::DerSignature;

/// Verifies many signatures at once: item i is `(key, message, signature)`, result i is exactly what
/// `key.verify(message, signature)` returns (a bad item does not affect the others). On CPUs with AVX-512
/// IFMA eight verifications run side by side in vector lanes; elsewhere each runs one at a time.
///
/// ```
/// use pqkit::ec::p256::{self, SigningKey};
/// # let mut rng = pqkit::rng::ChaCha20Rng::from_key([7; 32]);
/// let keys: Vec<SigningKey> = (0..3).map(|_| SigningKey::generate(&mut rng)).collect();
/// let vks: Vec<_> = keys.iter().map(|k| k.verifying_key()).collect();
/// let msgs = [b"one".as_slice(), b"two", b"three"];
/// let sigs: Vec<_> = keys.iter().zip(msgs).map(|(k, m)| k.sign(m)).collect();
/// let items: Vec<_> = (0..3).map(|i| (&vks[i], msgs[i], &sigs[i])).collect();
/// assert!(p256::verify_many(&items).iter().all(|r| r.is_ok()));
/// let swapped = [(&vks[0], msgs[1], &sigs[0])];
/// assert!(p256::verify_many(&swapped)[0].is_err());
/// ```
#[cfg(feature = "alloc")]
pub fn verify_many(items: &[(&VerifyingKey, &[u8], &Signature)]) -> alloc::vec::Vec<crate::Result<()>> {
    batch::verify_many(batch::Backend::detect(), items, batch::Input::Message)
}

/// As [`verify_many`] with digests computed by the caller: result i is exactly what
/// `key.verify_prehashed(digest, signature)` returns.
#[cfg(feature = "alloc")]
pub fn verify_prehashed_many(items: &[(&VerifyingKey, &[u8], &Signature)]) -> alloc::vec::Vec<crate::Result<()>> {
    batch::verify_many(batch::Backend::detect(), items, batch::Input::Digest)
}

/// As [`verify_many`] with a forced backend, for tests and benchmarks.
#[cfg(feature = "alloc")]
#[doc(hidden)]
pub fn verify_many_with_backend(
    backend: Checked<batch::Backend>,
    items: &[(&VerifyingKey, &[u8], &Signature)],
) -> alloc::vec::Vec<crate::Result<()>> {
    batch::verify_many(backend, items, batch::Input::Message)
}

/// As [`verify_prehashed_many`] with a forced backend, for tests and benchmarks.
#[cfg(feature = "alloc")]
#[doc(hidden)]
pub fn verify_prehashed_many_with_backend(
    backend: Checked<batch::Backend>,
    items: &[(&VerifyingKey, &[u8], &Signature)],
) -> alloc::vec::Vec<crate::Result<()>> {
    batch::verify_many(backend, items, batch::Input::Digest)
}
