//! ML-DSA (FIPS 204): the module-lattice digital signature standard, in its three parameter sets
//! [`MlDsa44`], [`MlDsa65`] and [`MlDsa87`].
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use pqkit::mldsa::{MlDsa65, SigningKey};
//! let (sk, vk) = SigningKey::<MlDsa65>::generate()?;
//! let sig = sk.sign(b"message", b"context")?;
//! vk.verify(b"message", b"context", &sig)?;
//! # }
//! # Ok::<(), pqkit::Error>(())
//! ```
//!
//! ## Interfaces
//! - Pure ML-DSA with a context string of at most 255 bytes ([`SigningKey::sign`], [`VerifyingKey::verify`]):
//!   the signed message is M' = 0 || |ctx| || ctx || M.
//! - HashML-DSA ([`SigningKey::sign_prehash`], [`VerifyingKey::verify_prehash`]) with SHA-512 or SHAKE128 as
//!   the pre-hash: M' = 1 || |ctx| || ctx || OID || PH(M).
//! - External μ ([`compute_mu`], [`SigningKey::sign_mu`], [`VerifyingKey::verify_mu`]): μ = H(tr || M', 64)
//!   computed elsewhere (for example next to the message, away from the key).
//!
//! ## Security notes
//! - [`SigningKey::sign`] is *hedged*: it mixes 32 fresh bytes from the OS into the signing randomness, which
//!   protects against fault and side-channel attacks on deterministic signing. [`SigningKey::sign_deterministic`]
//!   uses rnd = 0^32 (FIPS 204 allows both; the signature is then a function of key and message).
//! - Signing is constant-time with respect to the private key: Montgomery arithmetic, no secret-dependent
//!   branches or table indices. The rejection loop's accept/reject decision is public by design (FIPS 204
//!   §3.4); the norm checks fold every coefficient before deciding, so they do not reveal which one failed.
//!   Rejection sampling of the private key (ExpandS) takes a secret-dependent number of SHAKE bytes, as in the
//!   standard.
//! - [`SigningKey`] zeroizes its secrets (seed, K, s1, s2, t0) on drop; intermediates (y, the masking seed,
//!   rejected z) are wiped before signing returns.
//!
//! ## Backends
//! Chosen by the one dispatch mechanism ([`crate::dispatch`], through `Backend::detect`): portable Rust, AVX2
//! (NTT, inverse NTT, pointwise products on eight 32-bit lanes, 4-way SHAKE) and AVX-512 (the AVX2 arithmetic
//! with 8-way SHAKE). All produce bit-identical keys and signatures.
//!
//! Reductions are lazy where the bounds allow it, identically in every backend: the inverse NTT
//! reduces its sums only in the len-4 layer (below 32q elsewhere) and folds the final factor into the last
//! layer's constants; the row products of A·y, A·z and A·s1 are summed exactly in 64 bits (|Σ| < 8q²) and
//! Montgomery-reduced once per coefficient. The AVX2 code also unpacks y (ExpandMask) and z for γ1 = 2^19 with
//! a byte gather and variable shifts.

mod encoding;
mod keys;
mod message;
mod params;
mod poly;
mod sampling;
mod sign;
mod soft;
mod verify;

#[cfg(target_arch = "x86_64")]
mod avx2;

pub use message::{PreHash, compute_mu};
pub use params::{ByteArray, MlDsa44, MlDsa65, MlDsa87, Params, PolyArray};

use crate::dispatch::Checked;
use crate::hash::sha3::{self, Shake256};
use crate::{Error, Result};
use message::{check_ctx, prehash_mu};
use poly::Poly;
use zeroize::{Zeroize, Zeroizing};

/// The modulus q = 2^23 - 2^13 + 1.
pub(crate) const Q: i32 = 8_380_417;
/// Polynomial degree.
pub(crate) const N: usize = 256;
/// Dropped bits of t (d = 13).
const D: u32 = 13;

crate::dispatch::backends! {
    /// Which implementation of the ML-DSA arithmetic runs, each with the Keccak backend of its level: the ML-DSA
    /// family's backends, chosen by the one dispatch mechanism ([`crate::dispatch`]).
    ///
    /// Each lists every feature its code needs, its Keccak backend's included (the AVX2 Keccak is compiled with
    /// BMI1 and BMI2), so that the Keccak proof is derived from it ([`Checked::derive`]) and never missing.
    #[doc(hidden)]
    pub enum Backend for "ML-DSA" {
        /// Portable Rust (and portable Keccak).
        Soft: [],
        /// AVX2 arithmetic, 4-way AVX2 Keccak.
        Avx2: [AVX2, BMI1, BMI2],
        /// The AVX2 arithmetic, its NTT and products compiled with AVX-512VL as well (32 registers), and the
        /// 8-way AVX-512 Keccak.
        Avx512: [AVX2, BMI1, BMI2, AVX512F, AVX512VL],
    }
}

impl Backend {
    /// The Keccak backend of the same instruction-set level.
    fn keccak_backend(self) -> sha3::Backend {
        match self {
            Backend::Soft => sha3::Backend::Soft,
            Backend::Avx2 => sha3::Backend::Avx2,
            Backend::Avx512 => sha3::Backend::Avx512,
        }
    }
}

/// The family's dispatch: every operation takes the checked backend and hands it to the backend file, whose
/// entry points assert it covers their backend.
impl Checked<Backend> {
    /// The proof for the Keccak backend of this level, derived from this one: every backend lists its Keccak
    /// backend's features (the unit test `every_backend_derives_its_keccak_backend` checks all of them).
    #[inline]
    fn keccak(self) -> Checked<sha3::Backend> {
        self.derive(self.get().keccak_backend()).expect("every ML-DSA backend lists its Keccak backend's features")
    }

    #[inline]
    fn ntt(self, p: &mut Poly) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::ntt(self, p),
            _ => soft::ntt(p),
        }
    }

    /// BitUnpack of z or y (ExpandMask), `encoding::unpack_gamma1`'s result.
    #[inline]
    fn unpack_gamma1(self, p: &mut Poly, inp: &[u8], gamma1: i32) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::unpack_gamma1(self, p, inp, gamma1),
            _ => encoding::unpack_gamma1(p, inp, gamma1),
        }
    }

    #[inline]
    fn invntt(self, p: &mut Poly) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::invntt(self, p),
            _ => soft::invntt(p),
        }
    }

    #[inline]
    fn pointwise(self, out: &mut Poly, a: &Poly, b: &Poly) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::pointwise(self, out, a, b),
            _ => soft::pointwise(out, a, b),
        }
    }

    #[inline]
    fn pointwise_acc(self, out: &mut Poly, a: &[Poly], b: &[Poly]) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::pointwise_acc(self, out, a, b),
            _ => soft::pointwise_acc(out, a, b),
        }
    }

    #[inline]
    fn w_decompose(self, w: &mut Poly, w1: &mut Poly, gamma2: i32) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::w_decompose(self, w, w1, gamma2),
            _ => soft::w_decompose(w, w1, gamma2),
        }
    }

    #[inline]
    fn z_finish(self, z: &mut Poly, y: &Poly, bound: i32) -> u32 {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::z_finish(self, z, y, bound),
            _ => soft::z_finish(z, y, bound),
        }
    }

    #[inline]
    fn r_finish(self, w: &mut Poly, w1: &mut Poly, cs2: &Poly, gamma2: i32, bound: i32) -> u32 {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::r_finish(self, w, w1, cs2, gamma2, bound),
            _ => soft::r_finish(w, w1, cs2, gamma2, bound),
        }
    }

    #[inline]
    fn hint(self, ct0: &Poly, r: &Poly, w1: &mut Poly, gamma2: i32) -> (u32, u32) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::hint(self, ct0, r, w1, gamma2),
            _ => soft::hint(ct0, r, w1, gamma2),
        }
    }

    /// Zeroizes secret polynomials (volatile stores; 32 bytes at a time on the vector backends).
    fn wipe(self, v: &mut [Poly]) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::wipe(self, v),
            _ => {
                for p in v {
                    p.zeroize();
                }
            }
        }
    }
}

/// Test hooks: the arithmetic of one backend on raw coefficients.
#[doc(hidden)]
pub mod testing;

#[inline(always)]
fn k_of<P: Params>(v: &P::VecK) -> &[Poly] {
    &v.as_ref()[..P::K]
}

/// An ML-DSA private key in expanded form (s1, s2, t0 in the NTT domain and the matrix A), ready to sign.
///
/// Zeroized on drop; `Debug` prints nothing secret. Store it as its 32-byte seed ([`to_seed`](Self::to_seed),
/// the compact form FIPS 204 recommends) or as the FIPS 204 encoding ([`to_bytes`](Self::to_bytes)).
///
/// The expanded polynomials take about 29 KB for ML-DSA-44, 48 KB for ML-DSA-65 and 80 KB for ML-DSA-87, the
/// matrix A being most of it. With the `alloc` feature they live in one heap block allocated when the key is
/// created (the key itself is then about 200 bytes, and moving or returning it copies a pointer); without
/// `alloc` they live inline, so box or pin the key yourself if it has to move often or live on a small stack.
#[derive(Clone)]
pub struct SigningKey<P: Params> {
    rho: [u8; 32],
    key: [u8; 32],
    tr: [u8; 64],
    seed: Option<[u8; 32]>,
    /// NTT(s1), NTT(s2), NTT(t0) (the only form signing needs; the encoding recovers s1, s2 and t0 from them)
    /// and the matrix A.
    x: Expanded<P>,
    backend: Checked<Backend>,
}

/// The expanded polynomials of a signing key: NTT(s1) (L), NTT(s2) (K), NTT(t0) (K) and A (K·L, row-major).
/// One heap block with `alloc`.
#[cfg(feature = "alloc")]
#[derive(Clone)]
struct Expanded<P: Params> {
    polys: alloc::boxed::Box<[Poly]>,
    _p: core::marker::PhantomData<P>,
}

#[cfg(feature = "alloc")]
impl<P: Params> Expanded<P> {
    fn new() -> Self {
        let n = P::L + 2 * P::K + P::K * P::L;
        Expanded { polys: alloc::vec![Poly::ZERO; n].into_boxed_slice(), _p: core::marker::PhantomData }
    }

    /// (NTT(s1), NTT(s2), NTT(t0), A).
    #[inline]
    fn parts(&self) -> (&[Poly], &[Poly], &[Poly], &[Poly]) {
        let (s1, rest) = self.polys.split_at(P::L);
        let (s2, rest) = rest.split_at(P::K);
        let (t0, a) = rest.split_at(P::K);
        (s1, s2, t0, a)
    }

    /// (NTT(s1), NTT(s2), NTT(t0), A), mutable.
    #[inline]
    fn parts_mut(&mut self) -> (&mut [Poly], &mut [Poly], &mut [Poly], &mut [Poly]) {
        let (s1, rest) = self.polys.split_at_mut(P::L);
        let (s2, rest) = rest.split_at_mut(P::K);
        let (t0, a) = rest.split_at_mut(P::K);
        (s1, s2, t0, a)
    }
}

/// The expanded polynomials of a signing key, inline (no `alloc`).
#[cfg(not(feature = "alloc"))]
#[derive(Clone)]
struct Expanded<P: Params> {
    s1_hat: P::VecL,
    s2_hat: P::VecK,
    t0_hat: P::VecK,
    a: P::Mat,
}

#[cfg(not(feature = "alloc"))]
impl<P: Params> Expanded<P> {
    fn new() -> Self {
        Expanded { s1_hat: P::VecL::zero(), s2_hat: P::VecK::zero(), t0_hat: P::VecK::zero(), a: P::Mat::zero() }
    }

    /// (NTT(s1), NTT(s2), NTT(t0), A).
    #[inline]
    fn parts(&self) -> (&[Poly], &[Poly], &[Poly], &[Poly]) {
        (self.s1_hat.as_ref(), self.s2_hat.as_ref(), self.t0_hat.as_ref(), self.a.as_ref())
    }

    /// (NTT(s1), NTT(s2), NTT(t0), A), mutable.
    #[inline]
    fn parts_mut(&mut self) -> (&mut [Poly], &mut [Poly], &mut [Poly], &mut [Poly]) {
        (self.s1_hat.as_mut(), self.s2_hat.as_mut(), self.t0_hat.as_mut(), self.a.as_mut())
    }
}

/// An ML-DSA public key, with tr = H(pk) and NTT(t1 · 2^13) precomputed. The matrix A is not stored: each
/// verification expands it from ρ (8-way SHAKE128 where available), which keeps the key small (under 11 KB for
/// ML-DSA-87) and cheap to create, parse and move.
#[derive(Clone)]
pub struct VerifyingKey<P: Params> {
    bytes: P::PkBytes,
    tr: [u8; 64],
    t1_hat: P::VecK,
    backend: Checked<Backend>,
}

/// An encoded ML-DSA signature (c̃ || z || h), whose hint encoding has been checked.
#[derive(Clone)]
pub struct Signature<P: Params> {
    bytes: P::SigBytes,
}

/// A public key with the matrix A expanded from ρ, for a key that verifies many signatures (a pinned peer, a
/// trust anchor): [`verify`](Self::verify) then skips ExpandA, the SHAKE128 rejection sampling of K·L
/// polynomials that is about a third of a [`VerifyingKey::verify`]. Made by [`VerifyingKey::expand`].
///
/// Security contract: exactly the verification of [`VerifyingKey`] (same results for every input; A is a
/// public function of the public key, so keeping it reveals nothing). It costs the matrix in memory: about
/// 16 KB (ML-DSA-44), 30 KB (ML-DSA-65) or 56 KB (ML-DSA-87), on the heap with the `alloc` feature (inline
/// without it), so make one per key that is used repeatedly, not per signature.
#[derive(Clone)]
pub struct ExpandedVerifyingKey<P: Params> {
    vk: VerifyingKey<P>,
    #[cfg(feature = "alloc")]
    a: alloc::boxed::Box<P::Mat>,
    #[cfg(not(feature = "alloc"))]
    a: P::Mat,
}

/// ML-DSA-44 private key.
pub type MlDsa44SigningKey = SigningKey<MlDsa44>;
/// ML-DSA-65 private key.
pub type MlDsa65SigningKey = SigningKey<MlDsa65>;
/// ML-DSA-87 private key.
pub type MlDsa87SigningKey = SigningKey<MlDsa87>;
/// ML-DSA-44 public key.
pub type MlDsa44VerifyingKey = VerifyingKey<MlDsa44>;
/// ML-DSA-65 public key.
pub type MlDsa65VerifyingKey = VerifyingKey<MlDsa65>;
/// ML-DSA-87 public key.
pub type MlDsa87VerifyingKey = VerifyingKey<MlDsa87>;
/// ML-DSA-44 signature.
pub type MlDsa44Signature = Signature<MlDsa44>;
/// ML-DSA-65 signature.
pub type MlDsa65Signature = Signature<MlDsa65>;
/// ML-DSA-87 signature.
pub type MlDsa87Signature = Signature<MlDsa87>;
/// ML-DSA-65 public key with its matrix A expanded.
pub type MlDsa65ExpandedVerifyingKey = ExpandedVerifyingKey<MlDsa65>;

impl<P: Params> core::fmt::Debug for SigningKey<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "SigningKey<{}> {{ .. }}", P::NAME)
    }
}

impl<P: Params> core::fmt::Debug for VerifyingKey<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "VerifyingKey<{}> {{ tr: ", P::NAME)?;
        for b in &self.tr[..8] {
            write!(f, "{b:02x}")?;
        }
        f.write_str(".. }")
    }
}

impl<P: Params> core::fmt::Debug for Signature<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Signature<{}> {{ {} bytes }}", P::NAME, P::SIG_LEN)
    }
}

impl<P: Params> core::fmt::Debug for ExpandedVerifyingKey<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ExpandedVerifyingKey<{}>({:?})", P::NAME, self.vk)
    }
}

impl<P: Params> PartialEq for VerifyingKey<P> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes.as_ref() == other.bytes.as_ref()
    }
}
impl<P: Params> Eq for VerifyingKey<P> {}

impl<P: Params> PartialEq for Signature<P> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes.as_ref() == other.bytes.as_ref()
    }
}
impl<P: Params> Eq for Signature<P> {}

impl<P: Params> Zeroize for SigningKey<P> {
    fn zeroize(&mut self) {
        self.key.zeroize();
        self.seed.zeroize();
        let (s1_hat, s2_hat, t0_hat, _) = self.x.parts_mut();
        self.backend.wipe(s1_hat);
        self.backend.wipe(s2_hat);
        self.backend.wipe(t0_hat);
    }
}

impl<P: Params> Drop for SigningKey<P> {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl<P: Params> zeroize::ZeroizeOnDrop for SigningKey<P> {}

#[cfg(test)]
mod dispatch_tests {
    use super::*;
    use crate::dispatch::BackendSet;

    /// Every backend lists the features of the Keccak backend it runs, so `keccak()`'s derivation never fails.
    #[test]
    fn every_backend_derives_its_keccak_backend() {
        for &b in <Backend as BackendSet>::ALL {
            assert!(b.required().has(b.keccak_backend().required()), "{b:?}");
        }
        for b in Backend::available() {
            let sb = b.keccak();
            assert_eq!(sb, b.get().keccak_backend());
            assert!(sb.get().is_available(), "{b:?}");
        }
    }
}

/// Runs with and without the `alloc` feature (CI runs `cargo test -p pqkit --no-default-features --lib`), so that
/// both signing-key layouts (one heap block with `alloc`, inline without) are checked against the same answers.
#[cfg(test)]
mod layout_tests {
    use super::*;
    use crate::hash::sha3::Sha3_256;

    fn hex(bytes: &[u8; 32]) -> [u8; 64] {
        let mut out = [0u8; 64];
        for (i, b) in bytes.iter().enumerate() {
            out[2 * i] = b"0123456789abcdef"[(b >> 4) as usize];
            out[2 * i + 1] = b"0123456789abcdef"[(b & 15) as usize];
        }
        out
    }

    /// SHA3-256 over the verifying key, the signature and the re-encoded signing key of a fixed seed, message,
    /// context and `rnd`, on every backend; the answers were computed with the `alloc` layout, whose outputs the
    /// integration tests check against FIPS 204 vectors, Wycheproof and other implementations.
    fn check<P: Params>(want: &str) {
        let seed = [0x3cu8; 32];
        let rnd = [0xa7u8; 32];
        for b in Backend::available() {
            let (sk, vk) = SigningKey::<P>::from_seed_with_backend(&seed, b);
            let sig = sk.sign_internal_with_rnd(b"layout test", b"ctx", &rnd).unwrap();
            vk.verify(b"layout test", b"ctx", &sig).unwrap();
            assert!(vk.verify(b"layout tesT", b"ctx", &sig).is_err());
            let sk2 = SigningKey::<P>::from_bytes_with_backend(sk.to_bytes().as_ref(), b).unwrap();
            let sig2 = sk2.sign_internal_with_rnd(b"layout test", b"ctx", &rnd).unwrap();
            assert_eq!(sig.as_bytes(), sig2.as_bytes(), "{} {b:?}", P::NAME);
            let mut h = Sha3_256::new();
            h.update(vk.as_bytes());
            h.update(sig.as_bytes());
            h.update(sk.to_bytes().as_ref());
            let got = hex(&h.finalize());
            assert_eq!(core::str::from_utf8(&got).unwrap(), want, "{} {b:?}", P::NAME);
        }
    }

    #[test]
    fn keys_and_signatures_match_known_answers_in_this_layout() {
        check::<MlDsa44>("544bdab36a0555aa48cb9fed67c9beda5a0fa25b6ae203f10ff46ac72163f58d");
        check::<MlDsa65>("132a5598dcfa47f90276a43e010719e30cd8709929ab7720975e451203056820");
        check::<MlDsa87>("de2258d98b312f1ccb7495409d2d066f5e41ac30171c72014dd849df768bd67e");
    }
}
