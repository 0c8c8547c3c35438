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
//! Reductions are lazy where the bounds allow it, identically in every backend (h-hs3): the inverse NTT
//! reduces its sums only in the len-4 layer (below 32q elsewhere) and folds the final factor into the last
//! layer's constants; the row products of A·y, A·z and A·s1 are summed exactly in 64 bits (|Σ| < 8q²) and
//! Montgomery-reduced once per coefficient. The AVX2 code also unpacks y (ExpandMask) and z for γ1 = 2^19 with
//! a byte gather and variable shifts.

mod encoding;
mod params;
mod poly;
mod sampling;
mod soft;

#[cfg(target_arch = "x86_64")]
mod avx2;

pub use params::{ByteArray, MlDsa44, MlDsa65, MlDsa87, Params, PolyArray};

use crate::dispatch::Checked;
use crate::error::Expected;
use crate::hash::sha3::{self, Shake128, Shake256};
use crate::{Error, Result};
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
    fn sha3_backend(self) -> sha3::Backend {
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
    /// backend's features (the unit test `every_backend_derives_its_sha3_backend` checks all of them).
    #[inline]
    fn sha3(self) -> Checked<sha3::Backend> {
        self.derive(self.get().sha3_backend()).expect("every ML-DSA backend lists its Keccak backend's features")
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
pub mod testing {
    use super::{Backend, Checked, N, Poly};

    fn canon(p: &Poly) -> [i32; N] {
        p.0.map(super::poly::freeze)
    }

    /// Forward NTT, result reduced to \[0, q).
    pub fn ntt(b: Checked<Backend>, a: &[i32; N]) -> [i32; N] {
        let mut p = Poly(*a);
        b.ntt(&mut p);
        canon(&p)
    }

    /// Inverse NTT (of Montgomery products, i.e. with the factor 2^32 removed), result in \[0, q).
    pub fn invntt(b: Checked<Backend>, a: &[i32; N]) -> [i32; N] {
        let mut p = Poly(*a);
        b.invntt(&mut p);
        canon(&p)
    }

    /// Pointwise Montgomery product, result in \[0, q).
    pub fn pointwise(b: Checked<Backend>, x: &[i32; N], y: &[i32; N]) -> [i32; N] {
        let mut p = Poly::ZERO;
        b.pointwise(&mut p, &Poly(*x), &Poly(*y));
        canon(&p)
    }

    /// ExpandMask as the signer calls it: `l` polynomials for each κ of `kappas` in turn, through one scratch
    /// (so through its window of polynomials computed ahead), coefficients as `i32` in (-γ1, γ1\].
    #[cfg(feature = "alloc")]
    pub fn expand_mask(
        b: Checked<Backend>,
        rho2: &[u8; 64],
        kappas: &[u16],
        l: usize,
        gamma1: i32,
    ) -> alloc::vec::Vec<[i32; N]> {
        let mut sc = super::sampling::MaskScratch::new(b);
        let mut out = alloc::vec::Vec::with_capacity(kappas.len() * l);
        for &kappa in kappas {
            let mut y = alloc::vec![Poly::ZERO; l];
            super::sampling::expand_mask(b, rho2, kappa, &mut y, gamma1, &mut sc);
            out.extend(y.iter().map(|p| p.0));
        }
        out
    }

    /// The signer's rounding steps on one polynomial, as (w, w1) after `w_decompose`, (z, bad) after
    /// `z_finish`, (r, r1, bad) after `r_finish` and (h, bad, ones) after `hint`, for comparing backends.
    #[allow(clippy::type_complexity)]
    pub fn rounding(
        b: Checked<Backend>,
        gamma2: i32,
        bound: i32,
        w: &[i32; N],
        y: &[i32; N],
        cs2: &[i32; N],
        ct0: &[i32; N],
    ) -> ([i32; N], [i32; N], [i32; N], bool, [i32; N], [i32; N], bool, [i32; N], bool, u32) {
        let (mut pw, mut pw1) = (Poly(*w), Poly::ZERO);
        b.w_decompose(&mut pw, &mut pw1, gamma2);
        let mut z = Poly(*w);
        let zbad = b.z_finish(&mut z, &Poly(*y), bound) != 0;
        let (mut r, mut r1) = (pw, Poly::ZERO);
        let rbad = b.r_finish(&mut r, &mut r1, &Poly(*cs2), gamma2, bound) != 0;
        let mut h = r1;
        let (hbad, ones) = b.hint(&Poly(*ct0), &r, &mut h, gamma2);
        (pw.0, pw1.0, z.0, zbad, r.0, r1.0, rbad, h.0, hbad != 0, ones)
    }

    /// Sum of pointwise Montgomery products, result in \[0, q).
    pub fn pointwise_acc(b: Checked<Backend>, x: &[[i32; N]], y: &[[i32; N]]) -> [i32; N] {
        let xs: [Poly; 8] = core::array::from_fn(|i| Poly(x.get(i).copied().unwrap_or([0; N])));
        let ys: [Poly; 8] = core::array::from_fn(|i| Poly(y.get(i).copied().unwrap_or([0; N])));
        let n = x.len().min(y.len()).min(8);
        let mut p = Poly::ZERO;
        b.pointwise_acc(&mut p, &xs[..n], &ys[..n]);
        canon(&p)
    }
}

/// The pre-hash function of HashML-DSA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreHash {
    /// SHA-512 (OID 2.16.840.1.101.3.4.2.3), 64-byte digest.
    Sha512,
    /// SHAKE128 (OID 2.16.840.1.101.3.4.2.11), 32-byte (256-bit) output.
    Shake128,
}

impl PreHash {
    /// DER encoding of the OID (FIPS 204 §5.4.1).
    fn oid(self) -> [u8; 11] {
        let last = match self {
            PreHash::Sha512 => 0x03,
            PreHash::Shake128 => 0x0B,
        };
        [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, last]
    }

    /// PH(M) into `out`; returns its length.
    fn digest(self, msg: &[u8], out: &mut [u8; 64]) -> usize {
        match self {
            PreHash::Sha512 => {
                *out = crate::hash::sha2::Sha512::digest(msg);
                64
            }
            PreHash::Shake128 => {
                Shake128::digest_into(msg, &mut out[..32]);
                32
            }
        }
    }
}

fn check_ctx(alg: &'static str, ctx: &[u8]) -> Result<()> {
    if ctx.len() > 255 {
        return Err(Error::InvalidLength {
            algorithm: alg,
            field: "context",
            expected: Expected::AtMost(255),
            actual: ctx.len(),
        });
    }
    Ok(())
}

/// μ = SHAKE256(tr || M', 64) for pure ML-DSA, M' = 0 || |ctx| || ctx || msg (FIPS 204 Algorithms 2, 3, 7).
///
/// `tr` is the 64-byte hash of the public key ([`VerifyingKey::tr`]). Errors if `ctx` exceeds 255 bytes.
pub fn compute_mu(tr: &[u8; 64], msg: &[u8], ctx: &[u8]) -> Result<[u8; 64]> {
    check_ctx("ML-DSA", ctx)?;
    let mut h = Shake256::new();
    h.update(tr).update(&[0, ctx.len() as u8]).update(ctx).update(msg);
    let mut mu = [0u8; 64];
    h.finalize_into(&mut mu);
    Ok(mu)
}

fn prehash_mu(tr: &[u8; 64], msg: &[u8], ctx: &[u8], ph: PreHash) -> [u8; 64] {
    let mut digest = [0u8; 64];
    let n = ph.digest(msg, &mut digest);
    let mut h = Shake256::new();
    h.update(tr).update(&[1, ctx.len() as u8]).update(ctx).update(&ph.oid()).update(&digest[..n]);
    let mut mu = [0u8; 64];
    h.finalize_into(&mut mu);
    mu
}

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

/// Every coefficient 2^64 mod q (centred): a Montgomery product with it multiplies by 2^32.
const R2_POLY: Poly = Poly([poly::center(((1u128 << 64) % Q as u128) as i32); N]);

/// t = A·s1 + s2 in \[0, q), from NTT(s1) and s2.
fn compute_t<P: Params>(b: Checked<Backend>, a: &[Poly], s1h: &[Poly], s2: &P::VecK, t: &mut P::VecK) {
    for i in 0..P::K {
        let ti = &mut (*t).as_mut()[i];
        b.pointwise_acc(ti, &a[i * P::L..(i + 1) * P::L], s1h);
        b.invntt(ti);
        for (c, s) in ti.0.iter_mut().zip(s2.as_ref()[i].0.iter()) {
            *c = poly::freeze(*c + *s);
        }
    }
}

impl<P: Params> SigningKey<P> {
    /// A fresh key pair from 32 bytes of OS randomness (ML-DSA.KeyGen, FIPS 204 Algorithm 1).
    #[cfg(feature = "std")]
    pub fn generate() -> Result<(SigningKey<P>, VerifyingKey<P>)> {
        let mut xi = Zeroizing::new([0u8; 32]);
        crate::rng::fill_os(&mut xi[..])?;
        Ok(Self::from_seed(&xi))
    }

    /// The key pair for seed ξ (ML-DSA.KeyGen_internal, FIPS 204 Algorithm 6). The signing key remembers ξ,
    /// so [`to_seed`](Self::to_seed) can store it compactly.
    pub fn from_seed(xi: &[u8; 32]) -> (SigningKey<P>, VerifyingKey<P>) {
        Self::from_seed_with_backend(xi, Backend::detect())
    }

    /// As [`from_seed`](Self::from_seed) from a slice, which must be exactly 32 bytes ([`Error::InvalidLength`]).
    pub fn from_seed_bytes(xi: &[u8]) -> Result<(SigningKey<P>, VerifyingKey<P>)> {
        let xi: &[u8; 32] = xi.try_into().map_err(|_| Error::length(P::NAME, "seed", 32, xi.len()))?;
        Ok(Self::from_seed(xi))
    }

    /// As [`from_seed`](Self::from_seed) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_seed_with_backend(xi: &[u8; 32], b: Checked<Backend>) -> (SigningKey<P>, VerifyingKey<P>) {
        let mut buf = Zeroizing::new([0u8; 128]);
        let mut h = Shake256::with_backend(b.sha3());
        h.update(xi).update(&[P::K as u8, P::L as u8]);
        h.finalize_into(&mut buf[..]);
        let mut rho = [0u8; 32];
        rho.copy_from_slice(&buf[..32]);
        let mut rho1 = Zeroizing::new([0u8; 64]);
        rho1.copy_from_slice(&buf[32..96]);
        let mut key = [0u8; 32];
        key.copy_from_slice(&buf[96..]);

        let mut sk = SigningKey::<P> { rho, key, tr: [0; 64], seed: Some(*xi), x: Expanded::new(), backend: b };
        let (s1_hat, s2_hat, t0_hat, a) = sk.x.parts_mut();
        sampling::expand_a(b, &rho, a, P::L);
        // s1 and s2 are sampled straight into their final places and transformed there; only s2 is kept
        // (briefly) in the normal domain, for t = A·s1 + s2.
        sampling::expand_s(b, &rho1, s1_hat, s2_hat, P::ETA);
        let mut s2 = P::VecK::zero();
        s2.as_mut().copy_from_slice(s2_hat);
        for h in s1_hat.iter_mut().chain(s2_hat.iter_mut()) {
            b.ntt(h);
        }
        // t = A·s1 + s2, one row at a time, only as far as t1 = Power2Round(t).1 (public). On the way,
        // 2^32·(A ∘ NTT(s1)) (Montgomery form) goes into t0_hat: once NTT(t1·2^13) is known,
        // NTT(t0) = NTT(t) − NTT(t1·2^13) = that + NTT(s2) − NTT(t1·2^13), without another forward NTT.
        let mut pk = P::PkBytes::zero();
        let mut t1_hat = P::VecK::zero();
        let mut ti = Poly::ZERO;
        {
            let pkb = pk.as_mut();
            pkb[..32].copy_from_slice(&rho);
            for i in 0..P::K {
                b.pointwise_acc(&mut ti, &a[i * P::L..(i + 1) * P::L], s1_hat);
                b.pointwise(&mut t0_hat[i], &ti, &R2_POLY);
                b.invntt(&mut ti);
                let t1 = &mut t1_hat.as_mut()[i];
                for ((o, c), s) in t1.0.iter_mut().zip(ti.0.iter()).zip(s2.as_ref()[i].0.iter()) {
                    *o = poly::power2round(poly::freeze(*c + *s)).0;
                }
                encoding::pack_t1(&mut pkb[32 + 320 * i..32 + 320 * (i + 1)], t1);
                for c in t1.0.iter_mut() {
                    *c <<= D;
                }
                b.ntt(t1);
                for ((x, s), y) in t0_hat[i].0.iter_mut().zip(s2_hat[i].0.iter()).zip(t1.0.iter()) {
                    *x = poly::reduce32(*x + *s - *y);
                }
            }
        }
        b.wipe(core::slice::from_mut(&mut ti));
        b.wipe(s2.as_mut());
        let vk = VerifyingKey::<P>::with_t1_hat(pk, t1_hat, b);
        sk.tr = vk.tr;
        (sk, vk)
    }

    /// x from NTT(x) (for s1, s2, t0, whose centred representatives are the values themselves).
    fn from_ntt(b: Checked<Backend>, hat: &Poly, out: &mut Poly) {
        for (o, h) in out.0.iter_mut().zip(hat.0.iter()) {
            *o = poly::reduce32(*h);
        }
        // invntt(NTT(x)) = x · 2^32; one Montgomery reduction removes the 2^32.
        b.invntt(out);
        for c in out.0.iter_mut() {
            *c = poly::center(poly::freeze(poly::mont_reduce(i64::from(*c))));
        }
    }

    /// The 32-byte seed ξ the key was generated from, or `None` for a key loaded with
    /// [`from_bytes`](Self::from_bytes) (the expanded encoding does not contain ξ).
    pub fn to_seed(&self) -> Option<Zeroizing<[u8; 32]>> {
        self.seed.map(Zeroizing::new)
    }

    /// The FIPS 204 private key encoding skEncode(ρ, K, tr, s1, s2, t0) (Algorithm 24).
    pub fn to_bytes(&self) -> Zeroizing<P::SkBytes> {
        let mut out = Zeroizing::new(P::SkBytes::zero());
        let o = out.as_mut();
        o[..32].copy_from_slice(&self.rho);
        o[32..64].copy_from_slice(&self.key);
        o[64..128].copy_from_slice(&self.tr);
        let eb = 32 * P::ETA_BITS;
        let mut off = 128;
        let b = self.backend;
        let mut tmp = Poly::ZERO;
        let (s1_hat, s2_hat, t0_hat, _) = self.x.parts();
        for p in s1_hat {
            Self::from_ntt(b, p, &mut tmp);
            encoding::pack_eta(&mut o[off..off + eb], &tmp, P::ETA);
            off += eb;
        }
        for p in s2_hat {
            Self::from_ntt(b, p, &mut tmp);
            encoding::pack_eta(&mut o[off..off + eb], &tmp, P::ETA);
            off += eb;
        }
        for p in t0_hat {
            Self::from_ntt(b, p, &mut tmp);
            encoding::pack_t0(&mut o[off..off + 416], &tmp);
            off += 416;
        }
        b.wipe(core::slice::from_mut(&mut tmp));
        out
    }

    /// Loads the FIPS 204 private key encoding (skDecode, Algorithm 25). Rejects a wrong length
    /// ([`Error::InvalidLength`]) and s1/s2 coefficients outside \[-η, η\] ([`Error::InvalidEncoding`]).
    pub fn from_bytes(sk: &[u8]) -> Result<Self> {
        Self::from_bytes_with_backend(sk, Backend::detect())
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(sk: &[u8], b: Checked<Backend>) -> Result<Self> {
        Error::check_length(P::NAME, "private key", P::SK_LEN, sk.len())?;
        let mut rho = [0u8; 32];
        rho.copy_from_slice(&sk[..32]);
        let mut key = [0u8; 32];
        key.copy_from_slice(&sk[32..64]);
        let mut tr = [0u8; 64];
        tr.copy_from_slice(&sk[64..128]);
        let mut out = SigningKey::<P> { rho, key, tr, seed: None, x: Expanded::new(), backend: b };
        let (s1_hat, s2_hat, t0_hat, a) = out.x.parts_mut();
        sampling::expand_a(b, &rho, a, P::L);
        let eb = 32 * P::ETA_BITS;
        let mut off = 128;
        let mut bad = 0;
        for p in s1_hat.iter_mut() {
            bad |= encoding::unpack_eta(p, &sk[off..off + eb], P::ETA);
            b.ntt(p);
            off += eb;
        }
        for p in s2_hat.iter_mut() {
            bad |= encoding::unpack_eta(p, &sk[off..off + eb], P::ETA);
            b.ntt(p);
            off += eb;
        }
        for p in t0_hat.iter_mut() {
            encoding::unpack_t0(p, &sk[off..off + 416]);
            b.ntt(p);
            off += 416;
        }
        // Validity of the encoding is returned as an error: public.
        if crate::ct::declassify(bad) != 0 {
            return Err(Error::InvalidEncoding { algorithm: P::NAME, reason: "s1 or s2 coefficient out of range" });
        }
        Ok(out)
    }

    /// The matching public key (recomputes t = A·s1 + s2; free for keys from [`from_seed`](Self::from_seed)
    /// apart from that computation).
    pub fn verifying_key(&self) -> VerifyingKey<P> {
        let b = self.backend;
        let mut t = Zeroizing::new(P::VecK::zero());
        let mut s2 = Zeroizing::new(P::VecK::zero());
        let (s1_hat, s2_hat, _, a) = self.x.parts();
        for (s, h) in s2.as_mut().iter_mut().zip(s2_hat) {
            Self::from_ntt(b, h, s);
        }
        compute_t::<P>(b, a, s1_hat, &s2, &mut *t);
        let mut pk = P::PkBytes::zero();
        let pkb = pk.as_mut();
        pkb[..32].copy_from_slice(&self.rho);
        for i in 0..P::K {
            let mut t1 = Poly::ZERO;
            for j in 0..N {
                t1.0[j] = poly::power2round((*t).as_ref()[i].0[j]).0;
            }
            encoding::pack_t1(&mut pkb[32 + 320 * i..32 + 320 * (i + 1)], &t1);
        }
        VerifyingKey::from_parts(pk, b)
    }

    /// The hash tr = H(pk, 64) stored in the private key.
    pub fn tr(&self) -> &[u8; 64] {
        &self.tr
    }

    /// Switches the arithmetic backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, b: Checked<Backend>) -> Self {
        self.backend = b;
        self
    }

    /// Hedged ML-DSA.Sign (FIPS 204 Algorithm 2) with 32 bytes of fresh OS randomness. `ctx` is at most 255
    /// bytes (else [`Error::InvalidLength`]).
    #[cfg(feature = "std")]
    pub fn sign(&self, msg: &[u8], ctx: &[u8]) -> Result<Signature<P>> {
        let rnd = fresh_rnd()?;
        self.sign_internal_with_rnd(msg, ctx, &rnd)
    }

    /// Deterministic ML-DSA.Sign (rnd = 0^32): the same key, message and context always give the same
    /// signature.
    pub fn sign_deterministic(&self, msg: &[u8], ctx: &[u8]) -> Result<Signature<P>> {
        self.sign_internal_with_rnd(msg, ctx, &[0; 32])
    }

    /// ML-DSA.Sign with a caller-chosen `rnd` (for known-answer tests).
    #[doc(hidden)]
    pub fn sign_internal_with_rnd(&self, msg: &[u8], ctx: &[u8], rnd: &[u8; 32]) -> Result<Signature<P>> {
        check_ctx(P::NAME, ctx)?;
        let mu = compute_mu(&self.tr, msg, ctx)?;
        self.sign_mu_with_rnd(&mu, rnd)
    }

    /// Hedged HashML-DSA.Sign (FIPS 204 Algorithm 4): signs PH(msg) with domain separation from pure ML-DSA.
    #[cfg(feature = "std")]
    pub fn sign_prehash(&self, msg: &[u8], ctx: &[u8], ph: PreHash) -> Result<Signature<P>> {
        let rnd = fresh_rnd()?;
        self.sign_prehash_with_rnd(msg, ctx, ph, &rnd)
    }

    /// HashML-DSA.Sign with a caller-chosen `rnd` (all zero for the deterministic variant).
    #[doc(hidden)]
    pub fn sign_prehash_with_rnd(&self, msg: &[u8], ctx: &[u8], ph: PreHash, rnd: &[u8; 32]) -> Result<Signature<P>> {
        check_ctx(P::NAME, ctx)?;
        let mu = prehash_mu(&self.tr, msg, ctx, ph);
        self.sign_mu_with_rnd(&mu, rnd)
    }

    /// Hedged signing of an externally computed μ (see [`compute_mu`]); equals [`sign`](Self::sign) when
    /// μ = `compute_mu(sk.tr(), msg, ctx)`.
    #[cfg(feature = "std")]
    pub fn sign_mu(&self, mu: &[u8; 64]) -> Result<Signature<P>> {
        let rnd = fresh_rnd()?;
        self.sign_mu_with_rnd(mu, &rnd)
    }

    /// ML-DSA.Sign_internal (FIPS 204 Algorithm 7) on μ with a caller-chosen `rnd`.
    #[doc(hidden)]
    pub fn sign_mu_with_rnd(&self, mu: &[u8; 64], rnd: &[u8; 32]) -> Result<Signature<P>> {
        let b = self.backend;
        let mut rho2 = Zeroizing::new([0u8; 64]);
        {
            let mut h = Shake256::with_backend(b.sha3());
            h.update(&self.key).update(rnd).update(mu);
            h.finalize_into(&mut rho2[..]);
        }
        let (s1_hat, s2_hat, t0_hat, a) = self.x.parts();
        let mut st = SignState::<P> {
            y: P::VecL::zero(),
            y_hat: P::VecL::zero(),
            z: P::VecL::zero(),
            w: P::VecK::zero(),
            w1: P::VecK::zero(),
            tmp: Poly::ZERO,
            backend: b,
        };
        let mut w1buf = [0u8; 8 * 192];
        let w1len = 32 * P::W1_BITS;
        let mut scratch = sampling::MaskScratch::new(b);
        let mut kappa: u32 = 0;
        'attempt: loop {
            if kappa > u32::from(u16::MAX) - P::L as u32 {
                return Err(Error::InvalidParameter { algorithm: P::NAME, reason: "signing did not terminate" });
            }
            sampling::expand_mask(b, &rho2, kappa as u16, &mut st.y.as_mut()[..P::L], P::GAMMA1, &mut scratch);
            kappa += P::L as u32;
            st.y_hat = st.y.clone();
            for p in &mut st.y_hat.as_mut()[..P::L] {
                b.ntt(p);
            }
            // w = A·y, w1 = HighBits(w).
            for i in 0..P::K {
                let wi = &mut st.w.as_mut()[i];
                b.pointwise_acc(wi, &a[i * P::L..(i + 1) * P::L], &st.y_hat.as_ref()[..P::L]);
                b.invntt(wi);
                let w1i = &mut st.w1.as_mut()[i];
                b.w_decompose(wi, w1i, P::GAMMA2);
                encoding::pack_w1(&mut w1buf[i * w1len..(i + 1) * w1len], w1i, P::W1_BITS as u32);
            }
            let mut ctilde = [0u8; 64];
            {
                let mut h = Shake256::with_backend(b.sha3());
                h.update(mu).update(&w1buf[..P::K * w1len]);
                h.finalize_into(&mut ctilde[..P::CTILDE]);
            }
            let mut c = sampling::sample_in_ball(b, &ctilde[..P::CTILDE], P::TAU);
            b.ntt(&mut c);

            // The two bound checks, r first: each polynomial is checked as soon as it is computed and the
            // attempt abandoned at the first one out of bounds, so a rejected attempt skips the remaining
            // products and inverse NTTs. The order of the checks does not change which attempt is accepted
            // (it must pass both); r's goes first because it rejects more often than z's in every parameter
            // set (ML-DSA-65: r passes with probability ≈ 0.32 over k = 6 polynomials, z ≈ 0.62 over l = 5).
            // What this makes public beyond the rejection decision is which check and which polynomial
            // failed. As in the reference implementation (whose norm checks return at the first polynomial
            // out of bounds and leave even the coefficient observable), that is independent of the secret:
            // each coefficient is out of bounds with a probability that does not depend on c·s1 or c·s2
            // (|.| ≤ β, added to y, respectively subtracted from w, whose low bits are uniform), and the
            // values themselves stay secret (each polynomial's check is constant time).
            //
            // r = w − c·s2, ‖LowBits(r)‖∞ < γ2 − β; keep r in w and HighBits(r) in w1.
            for (i, s2i) in s2_hat.iter().enumerate() {
                b.pointwise(&mut st.tmp, &c, s2i);
                b.invntt(&mut st.tmp);
                let (wi, w1i) = (&mut st.w.as_mut()[i], &mut st.w1.as_mut()[i]);
                let bad = b.r_finish(wi, w1i, &st.tmp, P::GAMMA2, P::GAMMA2 - P::BETA);
                // Public, see above.
                if crate::ct::declassify(bad) != 0 {
                    continue 'attempt;
                }
            }
            // z = y + c·s1, ‖z‖∞ < γ1 − β.
            for (j, s1j) in s1_hat.iter().enumerate() {
                let zj = &mut st.z.as_mut()[j];
                b.pointwise(zj, &c, s1j);
                b.invntt(zj);
                let bad = b.z_finish(zj, &st.y.as_ref()[j], P::GAMMA1 - P::BETA);
                // Public, see above.
                if crate::ct::declassify(bad) != 0 {
                    continue 'attempt;
                }
            }
            let mut bad = 0u32;
            // ‖c·t0‖∞ < γ2; h = MakeHint(−c·t0, r + c·t0) = [HighBits(r + c·t0) ≠ HighBits(r)], at most ω ones.
            let mut ones = 0u32;
            for (i, t0i) in t0_hat.iter().enumerate() {
                b.pointwise(&mut st.tmp, &c, t0i);
                b.invntt(&mut st.tmp);
                let (bad_i, ones_i) = b.hint(&st.tmp, &st.w.as_ref()[i], &mut st.w1.as_mut()[i], P::GAMMA2);
                bad |= bad_i;
                ones += ones_i;
            }
            // As above; the hint weight of an accepted signature is in the signature itself.
            if crate::ct::declassify(bad) != 0 || crate::ct::declassify(ones) as usize > P::OMEGA {
                continue;
            }
            // Accepted: encode (c̃, z, h).
            let mut sig = P::SigBytes::zero();
            {
                let s = sig.as_mut();
                s[..P::CTILDE].copy_from_slice(&ctilde[..P::CTILDE]);
                let zb = 32 * P::Z_BITS;
                let mut off = P::CTILDE;
                for p in &st.z.as_ref()[..P::L] {
                    encoding::pack_gamma1(&mut s[off..off + zb], p, P::GAMMA1);
                    off += zb;
                }
                encoding::pack_hint(&mut s[off..], k_of::<P>(&st.w1), P::OMEGA);
            }
            return Ok(Signature { bytes: sig });
        }
    }
}

/// The signer's working vectors, wiped on drop.
struct SignState<P: Params> {
    y: P::VecL,
    y_hat: P::VecL,
    z: P::VecL,
    w: P::VecK,
    w1: P::VecK,
    tmp: Poly,
    /// Wipes the vectors.
    backend: Checked<Backend>,
}

impl<P: Params> Drop for SignState<P> {
    fn drop(&mut self) {
        self.backend.wipe(self.y.as_mut());
        self.backend.wipe(self.y_hat.as_mut());
        self.backend.wipe(self.z.as_mut());
        self.backend.wipe(self.w.as_mut());
        self.backend.wipe(self.w1.as_mut());
        self.tmp.zeroize();
    }
}

#[cfg(feature = "std")]
fn fresh_rnd() -> Result<Zeroizing<[u8; 32]>> {
    let mut rnd = Zeroizing::new([0u8; 32]);
    crate::rng::fill_os(&mut rnd[..])?;
    Ok(rnd)
}

impl<P: Params> VerifyingKey<P> {
    /// The key from its encoding and NTT(t1·2^13) (computes tr).
    fn with_t1_hat(bytes: P::PkBytes, t1_hat: P::VecK, b: Checked<Backend>) -> Self {
        let mut tr = [0u8; 64];
        let mut h = Shake256::with_backend(b.sha3());
        h.update(bytes.as_ref());
        h.finalize_into(&mut tr);
        VerifyingKey { bytes, tr, t1_hat, backend: b }
    }

    fn from_parts(bytes: P::PkBytes, b: Checked<Backend>) -> Self {
        let pk = bytes.as_ref();
        let mut t1_hat = P::VecK::zero();
        for i in 0..P::K {
            let p = &mut t1_hat.as_mut()[i];
            encoding::unpack_t1(p, &pk[32 + 320 * i..32 + 320 * (i + 1)]);
            for c in p.0.iter_mut() {
                *c <<= D;
            }
            b.ntt(p);
        }
        Self::with_t1_hat(bytes, t1_hat, b)
    }

    /// Loads the FIPS 204 public key encoding pkEncode(ρ, t1) (exactly `P::PK_LEN` bytes; any such string is
    /// a valid key).
    pub fn from_bytes(pk: &[u8]) -> Result<Self> {
        Self::from_bytes_with_backend(pk, Backend::detect())
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(pk: &[u8], b: Checked<Backend>) -> Result<Self> {
        Error::check_length(P::NAME, "public key", P::PK_LEN, pk.len())?;
        let mut bytes = P::PkBytes::zero();
        bytes.as_mut().copy_from_slice(pk);
        Ok(Self::from_parts(bytes, b))
    }

    /// Switches the arithmetic backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, b: Checked<Backend>) -> Self {
        self.backend = b;
        self
    }

    /// The encoded public key.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The encoded public key, as an array.
    pub fn to_bytes(&self) -> P::PkBytes {
        self.bytes.clone()
    }

    /// tr = SHAKE256(pk, 64), the public-key hash that μ binds.
    pub fn tr(&self) -> &[u8; 64] {
        &self.tr
    }

    /// μ for `msg` and `ctx` under this key (see [`compute_mu`]).
    pub fn compute_mu(&self, msg: &[u8], ctx: &[u8]) -> Result<[u8; 64]> {
        check_ctx(P::NAME, ctx)?;
        compute_mu(&self.tr, msg, ctx)
    }

    /// ML-DSA.Verify (FIPS 204 Algorithm 3). `Ok(())` for a valid signature, else
    /// [`Error::AuthenticationFailed`] (or [`Error::InvalidLength`] for a context over 255 bytes).
    pub fn verify(&self, msg: &[u8], ctx: &[u8], sig: &Signature<P>) -> Result<()> {
        check_ctx(P::NAME, ctx)?;
        let mu = compute_mu(&self.tr, msg, ctx)?;
        self.verify_mu(&mu, sig)
    }

    /// HashML-DSA.Verify (FIPS 204 Algorithm 5).
    pub fn verify_prehash(&self, msg: &[u8], ctx: &[u8], ph: PreHash, sig: &Signature<P>) -> Result<()> {
        check_ctx(P::NAME, ctx)?;
        let mu = prehash_mu(&self.tr, msg, ctx, ph);
        self.verify_mu(&mu, sig)
    }

    /// Verifies a signature on an externally computed μ (ML-DSA.Verify_internal, FIPS 204 Algorithm 8).
    pub fn verify_mu(&self, mu: &[u8; 64], sig: &Signature<P>) -> Result<()> {
        if self.verify_core(mu, sig.bytes.as_ref()) {
            Ok(())
        } else {
            Err(Error::AuthenticationFailed { algorithm: P::NAME })
        }
    }

    /// The matrix A, expanded from ρ.
    fn expand_matrix(&self) -> P::Mat {
        let mut rho = [0u8; 32];
        rho.copy_from_slice(&self.bytes.as_ref()[..32]);
        let mut a = P::Mat::zero();
        sampling::expand_a(self.backend, &rho, a.as_mut(), P::L);
        a
    }

    /// This key with its matrix A expanded once, for verifying many signatures (see [`ExpandedVerifyingKey`]).
    pub fn expand(&self) -> ExpandedVerifyingKey<P> {
        #[cfg(feature = "alloc")]
        let a = alloc::boxed::Box::new(self.expand_matrix());
        #[cfg(not(feature = "alloc"))]
        let a = self.expand_matrix();
        ExpandedVerifyingKey { vk: self.clone(), a }
    }

    fn verify_core(&self, mu: &[u8; 64], s: &[u8]) -> bool {
        self.verify_with(mu, s, None)
    }

    /// Verify_internal with A given (`Some`, from an [`ExpandedVerifyingKey`]) or expanded here (`None`, after
    /// the cheap checks on z and h have passed).
    fn verify_with(&self, mu: &[u8; 64], s: &[u8], a: Option<&P::Mat>) -> bool {
        let b = self.backend;
        let ctilde = &s[..P::CTILDE];
        let zb = 32 * P::Z_BITS;
        let mut z = P::VecL::zero();
        let mut off = P::CTILDE;
        let bound = P::GAMMA1 - P::BETA;
        for p in &mut z.as_mut()[..P::L] {
            b.unpack_gamma1(p, &s[off..off + zb], P::GAMMA1);
            off += zb;
            if p.0.iter().any(|&c| c >= bound || c <= -bound) {
                return false;
            }
        }
        let mut h = P::VecK::zero();
        if encoding::unpack_hint(&mut h.as_mut()[..P::K], &s[off..], P::OMEGA).is_none() {
            return false;
        }
        let mut c = sampling::sample_in_ball(b, ctilde, P::TAU);
        b.ntt(&mut c);
        for p in &mut z.as_mut()[..P::L] {
            b.ntt(p);
        }
        let expanded;
        let a = match a {
            Some(a) => a.as_ref(),
            None => {
                expanded = self.expand_matrix();
                expanded.as_ref()
            }
        };
        let mut w1buf = [0u8; 8 * 192];
        let w1len = 32 * P::W1_BITS;
        let mut w = Poly::ZERO;
        let mut ct1 = Poly::ZERO;
        for i in 0..P::K {
            b.pointwise_acc(&mut w, &a[i * P::L..(i + 1) * P::L], &z.as_ref()[..P::L]);
            b.pointwise(&mut ct1, &c, &self.t1_hat.as_ref()[i]);
            for (x, y) in w.0.iter_mut().zip(ct1.0.iter()) {
                *x = poly::reduce32(*x - *y);
            }
            b.invntt(&mut w);
            let hi = &h.as_ref()[i];
            for t in 0..N {
                w.0[t] = poly::use_hint(hi.0[t] != 0, poly::freeze(w.0[t]), P::GAMMA2);
            }
            encoding::pack_w1(&mut w1buf[i * w1len..(i + 1) * w1len], &w, P::W1_BITS as u32);
        }
        let mut ct2 = [0u8; 64];
        let mut hs = Shake256::with_backend(b.sha3());
        hs.update(mu).update(&w1buf[..P::K * w1len]);
        hs.finalize_into(&mut ct2[..P::CTILDE]);
        crate::ct::eq(&ct2[..P::CTILDE], ctilde)
    }
}

impl<P: Params> ExpandedVerifyingKey<P> {
    /// A (behind its box with `alloc`).
    fn matrix(&self) -> &P::Mat {
        &self.a
    }

    /// The public key this was expanded from.
    pub fn verifying_key(&self) -> &VerifyingKey<P> {
        &self.vk
    }

    /// The encoded public key.
    pub fn as_bytes(&self) -> &[u8] {
        self.vk.as_bytes()
    }

    /// Switches the arithmetic backend (tests run each one; A does not depend on it).
    #[doc(hidden)]
    pub fn with_backend(mut self, b: Checked<Backend>) -> Self {
        self.vk.backend = b;
        self
    }

    /// ML-DSA.Verify (FIPS 204 Algorithm 3), as [`VerifyingKey::verify`] (same results and errors).
    pub fn verify(&self, msg: &[u8], ctx: &[u8], sig: &Signature<P>) -> Result<()> {
        check_ctx(P::NAME, ctx)?;
        let mu = compute_mu(&self.vk.tr, msg, ctx)?;
        self.verify_mu(&mu, sig)
    }

    /// HashML-DSA.Verify (FIPS 204 Algorithm 5), as [`VerifyingKey::verify_prehash`].
    pub fn verify_prehash(&self, msg: &[u8], ctx: &[u8], ph: PreHash, sig: &Signature<P>) -> Result<()> {
        check_ctx(P::NAME, ctx)?;
        let mu = prehash_mu(&self.vk.tr, msg, ctx, ph);
        self.verify_mu(&mu, sig)
    }

    /// Verify_internal on an externally computed μ (FIPS 204 Algorithm 8), as [`VerifyingKey::verify_mu`].
    pub fn verify_mu(&self, mu: &[u8; 64], sig: &Signature<P>) -> Result<()> {
        if self.vk.verify_with(mu, sig.bytes.as_ref(), Some(self.matrix())) {
            Ok(())
        } else {
            Err(Error::AuthenticationFailed { algorithm: P::NAME })
        }
    }
}

impl<P: Params> Signature<P> {
    /// Parses an encoded signature: exactly `P::SIG_LEN` bytes ([`Error::InvalidLength`]) with a well-formed
    /// hint encoding ([`Error::InvalidEncoding`]); the norm of z is checked by verification.
    pub fn from_bytes(sig: &[u8]) -> Result<Self> {
        Error::check_length(P::NAME, "signature", P::SIG_LEN, sig.len())?;
        let mut h = P::VecK::zero();
        let off = P::CTILDE + 32 * P::Z_BITS * P::L;
        if encoding::unpack_hint(&mut h.as_mut()[..P::K], &sig[off..], P::OMEGA).is_none() {
            return Err(Error::InvalidEncoding { algorithm: P::NAME, reason: "malformed hint in signature" });
        }
        let mut bytes = P::SigBytes::zero();
        bytes.as_mut().copy_from_slice(sig);
        Ok(Signature { bytes })
    }

    /// The encoded signature.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The encoded signature, as an array.
    pub fn to_bytes(&self) -> P::SigBytes {
        self.bytes.clone()
    }
}

impl<P: Params> AsRef<[u8]> for Signature<P> {
    fn as_ref(&self) -> &[u8] {
        self.bytes.as_ref()
    }
}

#[cfg(test)]
mod dispatch_tests {
    use super::*;
    use crate::dispatch::BackendSet;

    /// Every backend lists the features of the Keccak backend it runs, so `sha3()`'s derivation never fails.
    #[test]
    fn every_backend_derives_its_sha3_backend() {
        for &b in <Backend as BackendSet>::ALL {
            assert!(b.required().has(b.sha3_backend().required()), "{b:?}");
        }
        for b in Backend::available() {
            let sb = b.sha3();
            assert_eq!(sb, b.get().sha3_backend());
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
