//! ML-KEM (FIPS 203): the module-lattice key-encapsulation mechanism, parameter sets ML-KEM-512, -768, -1024.
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use pqkit::mlkem::{DecapsulationKey, MlKem768};
//! let (dk, ek) = DecapsulationKey::<MlKem768>::generate().unwrap();
//! let (ct, k_sender) = ek.encapsulate().unwrap();
//! let k_receiver = dk.decapsulate(&ct);
//! assert_eq!(k_sender, k_receiver);
//! # }
//! ```
//!
//! ## Types
//! - [`DecapsulationKey<P>`]: the private key, stored in the FIPS 203 expanded form (`dk`, with `ek`, `H(ek)`
//!   and `z` inside) and, when it was made from a seed, the 64-byte seed `d || z` as well.
//! - [`EncapsulationKey<P>`]: the public key `ek`, checked on parsing (§7.2 modulus check).
//! - [`Ciphertext<P>`], [`SharedSecret`] (32 bytes).
//!
//! `P` is one of [`MlKem512`], [`MlKem768`], [`MlKem1024`].
//!
//! ## Security notes
//! - Decapsulation uses implicit rejection: a ciphertext that does not re-encrypt to itself yields
//!   `J(z || c)` instead of an error, selected in constant time. Never signal decapsulation failure.
//! - The code is constant-time with respect to secrets (`s`, `e`, `z`, the message and the shared secret):
//!   no secret-dependent branches or table indices, no division of secrets (compression is multiply-shift).
//!   Rejection sampling of the public matrix branches on public data only.
//! - Secret keys, seeds and every secret intermediate are zeroized.
//! - `encapsulate_deterministic` and `from_seed` exist for tests and seed-based storage; their inputs must be
//!   fresh uniform random bytes, never reused.
//!
//! ## Backends
//! Chosen by the one dispatch mechanism ([`crate::dispatch`], through `Backend::detect`):
//! - `Soft`: portable Rust, with portable Keccak;
//! - `Avx2`: NTT, inverse NTT and base multiplication on 16 coefficients per `ymm`, 4-way AVX2 Keccak (with
//!   BMI1/BMI2, which the backend therefore requires as well);
//! - `Avx512`: the AVX2 arithmetic, `vpermb`/`vpcompressw` rejection sampling, 8-way AVX-512 Keccak.
//!
//! The SHAKE work of an operation (matrix entries, noise polynomials and, in decapsulation, `J(z || c)`) runs
//! as jobs packed 8 or 4 to a multi-way Keccak permutation. All backends give identical bytes.

mod poly;
mod sampling;
mod soft;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

use crate::dispatch::Checked;
use crate::hash::sha3::{self, Sha3_256, Sha3_512};
use crate::{Error, Result};
use core::fmt;
use poly::{Poly, barrett, to_unsigned};
use sampling::{Job, Outputs};
use zeroize::{Zeroize, Zeroizing};

crate::dispatch::backends! {
    /// Which polynomial-arithmetic implementation runs, each with the Keccak backend of its level: the ML-KEM
    /// family's backends, chosen by the one dispatch mechanism ([`crate::dispatch`]).
    ///
    /// Each lists every feature its code needs, its Keccak backend's included (the AVX2 Keccak is compiled with
    /// BMI1 and BMI2), so that the Keccak proof is derived from it ([`Checked::derive`]) and never missing.
    #[doc(hidden)]
    pub enum Backend for "ML-KEM" {
        /// Portable Rust, with portable Keccak.
        Soft: [],
        /// AVX2: NTT, inverse NTT, base multiplication on 16 coefficients per `ymm`; the AVX2 Keccak.
        Avx2: [AVX2, BMI1, BMI2],
        /// The AVX2 arithmetic plus AVX-512 (BW, VBMI, VBMI2) rejection sampling and the AVX-512 (F, VL) Keccak.
        Avx512: [AVX2, BMI1, BMI2, AVX512F, AVX512VL, AVX512BW, AVX512VBMI, AVX512VBMI2],
    }
}

impl Backend {
    /// The Keccak backend of the same instruction-set level: the portable backend runs portable Keccak (4-way
    /// batches), AVX2 the AVX2 4-way permutation, AVX-512 the 8-way one. Tests thereby cover every batch width.
    fn keccak_backend(self) -> sha3::Backend {
        match self {
            Backend::Soft => sha3::Backend::Soft,
            Backend::Avx2 => sha3::Backend::Avx2,
            Backend::Avx512 => sha3::Backend::Avx512,
        }
    }
}

/// The family's dispatch: every operation takes the checked backend and hands it to the backend file, whose
/// entry point asserts it covers that file's backend.
impl Checked<Backend> {
    /// The proof for the Keccak backend of this level, derived from this one: every backend lists its Keccak
    /// backend's features (the unit test `every_backend_derives_its_keccak_backend` checks all of them).
    #[inline]
    fn keccak(self) -> Checked<sha3::Backend> {
        self.derive(self.get().keccak_backend()).expect("every ML-KEM backend lists its Keccak backend's features")
    }

    /// The rejection-sampling step of SampleNTT: appends accepted coefficients of `buf` to `p.c[*n..]`.
    #[inline]
    fn rej(self, p: &mut Poly, n: &mut usize, buf: &[u8]) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => avx512::rej_uniform(self, p, n, buf),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => avx2::rej_uniform(self, p, n, buf),
            _ => poly::rej_uniform(p, n, buf),
        }
    }

    #[inline]
    fn ntt(self, p: &mut Poly) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::ntt(self, p),
            _ => soft::ntt(p),
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
    fn basemul_acc(self, out: &mut Poly, a: &[Poly], b: &[Poly]) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::basemul_acc(self, out, a, b),
            _ => soft::basemul_acc(out, a, b),
        }
    }

    #[inline]
    fn to_mont(self, p: &mut Poly) {
        match self.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 | Backend::Avx512 => avx2::to_mont(self, p),
            _ => soft::to_mont(p),
        }
    }
}

/// Forward NTT of `c` (|c| ≤ q) with a forced backend; for cross-backend tests.
#[doc(hidden)]
pub fn ntt_with(backend: Checked<Backend>, c: &mut [i16; 256]) {
    let mut p = Poly { c: *c };
    backend.ntt(&mut p);
    *c = p.c;
}

/// Inverse NTT (times R^2/128) of `c` (|c| < q) with a forced backend; for cross-backend tests.
#[doc(hidden)]
pub fn invntt_with(backend: Checked<Backend>, c: &mut [i16; 256]) {
    let mut p = Poly { c: *c };
    backend.invntt(&mut p);
    *c = p.c;
}

/// `Σ a[j] ∘ b[j] · R^-1` (coefficients |c| ≤ q, 1 to 4 terms) with a forced backend; for tests.
#[doc(hidden)]
pub fn basemul_acc_with(backend: Checked<Backend>, a: &[[i16; 256]], b: &[[i16; 256]]) -> [i16; 256] {
    let mut pa = [Poly::ZERO; 4];
    let mut pb = [Poly::ZERO; 4];
    let n = a.len().min(b.len()).min(4);
    for j in 0..n {
        pa[j].c = a[j];
        pb[j].c = b[j];
    }
    let mut out = Poly::ZERO;
    backend.basemul_acc(&mut out, &pa[..n], &pb[..n]);
    out.c
}

mod sealed {
    pub trait Sealed {}
}

/// A fixed-size byte array (`[u8; N]`); the storage of keys and ciphertexts.
#[doc(hidden)]
pub trait ByteArray: AsRef<[u8]> + AsMut<[u8]> + Copy + Eq + fmt::Debug + Zeroize + sealed::Sealed + 'static {
    /// All zeros.
    fn zeroed() -> Self;
}

impl<const N: usize> sealed::Sealed for [u8; N] {}
impl<const N: usize> ByteArray for [u8; N] {
    fn zeroed() -> Self {
        [0; N]
    }
}

/// An ML-KEM parameter set (FIPS 203 §8, Table 2). Implemented by [`MlKem512`], [`MlKem768`], [`MlKem1024`]
/// only.
pub trait Params: sealed::Sealed + Copy + fmt::Debug + Default + Eq + 'static {
    /// The name, e.g. `"ML-KEM-768"`.
    const NAME: &'static str;
    /// Module rank k.
    const K: usize;
    /// η1: the noise parameter of `s`, `e` and `y`.
    const ETA1: usize;
    /// η2: the noise parameter of `e1`, `e2`.
    const ETA2: usize = 2;
    /// d_u: bits per coefficient of the ciphertext's `u` part.
    const DU: u32;
    /// d_v: bits per coefficient of the ciphertext's `v` part.
    const DV: u32;
    /// Encapsulation key length: 384k + 32.
    const EK_LEN: usize = 384 * Self::K + 32;
    /// Decapsulation key length: 768k + 96.
    const DK_LEN: usize = 768 * Self::K + 96;
    /// Ciphertext length: 32(d_u k + d_v).
    const CT_LEN: usize = 32 * (Self::DU as usize * Self::K + Self::DV as usize);
    /// Storage of an encapsulation key.
    #[doc(hidden)]
    type EkBytes: ByteArray;
    /// Storage of a decapsulation key.
    #[doc(hidden)]
    type DkBytes: ByteArray;
    /// Storage of a ciphertext.
    #[doc(hidden)]
    type CtBytes: ByteArray;
}

macro_rules! param_set {
    ($(#[$doc:meta])* $name:ident, $label:expr, k = $k:expr, eta1 = $eta1:expr, du = $du:expr, dv = $dv:expr) => {
        $(#[$doc])*
        // Ord: the `kem` crate's `Kem` trait (feature `rustcrypto`) asks it of the parameter-set type.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl Params for $name {
            const NAME: &'static str = $label;
            const K: usize = $k;
            const ETA1: usize = $eta1;
            const DU: u32 = $du;
            const DV: u32 = $dv;
            type EkBytes = [u8; 384 * $k + 32];
            type DkBytes = [u8; 768 * $k + 96];
            type CtBytes = [u8; 32 * ($du * $k + $dv)];
        }
    };
}

param_set!(
    /// ML-KEM-512 (security category 1): k = 2, η1 = 3, d_u = 10, d_v = 4.
    MlKem512, "ML-KEM-512", k = 2, eta1 = 3, du = 10, dv = 4
);
param_set!(
    /// ML-KEM-768 (security category 3): k = 3, η1 = 2, d_u = 10, d_v = 4.
    MlKem768, "ML-KEM-768", k = 3, eta1 = 2, du = 10, dv = 4
);
param_set!(
    /// ML-KEM-1024 (security category 5): k = 4, η1 = 2, d_u = 11, d_v = 5.
    MlKem1024, "ML-KEM-1024", k = 4, eta1 = 2, du = 11, dv = 5
);

/// G = SHA3-512 of the concatenation of `parts`, split into two 32-byte halves.
fn hash_g(parts: &[&[u8]]) -> ([u8; 32], [u8; 32]) {
    let mut h = Sha3_512::new();
    for p in parts {
        h.update(p);
    }
    let mut out = h.finalize();
    let mut a = [0u8; 32];
    let mut b = [0u8; 32];
    a.copy_from_slice(&out[..32]);
    b.copy_from_slice(&out[32..]);
    out.zeroize();
    (a, b)
}

/// H = SHA3-256.
fn hash_h(data: &[u8]) -> [u8; 32] {
    Sha3_256::digest(data)
}

/// Reduces to [0, q) from |c| < 2^15.
fn normalize(p: &mut Poly) {
    for c in p.c.iter_mut() {
        *c = to_unsigned(barrett(*c));
    }
}

fn add_assign(a: &mut Poly, b: &Poly) {
    for (x, y) in a.c.iter_mut().zip(b.c.iter()) {
        *x += *y;
    }
}

/// K-PKE.KeyGen(d) (FIPS 203 Algorithm 13): writes `ek_pke` (384k + 32 bytes) and `dk_pke` (384k bytes).
fn kpke_keygen(be: Checked<Backend>, k: usize, eta1: usize, d: &[u8; 32], ek: &mut [u8], dk_pke: &mut [u8]) {
    let (rho, mut sigma) = hash_g(&[d, &[k as u8]]);
    // ρ is public (it is the last 32 bytes of ek); SampleNTT's rejection sampling on its XOF output branches.
    crate::ct::declassify_ref(&rho);
    let mut a = [Poly::ZERO; 16];
    let mut noise = [Poly::ZERO; 9];
    let mut jobs = [Job::Matrix { idx: 0, a: 0, b: 0 }; 25];
    let mut n = sampling::matrix_jobs(&mut jobs, k, false);
    for t in 0..2 * k {
        jobs[n] = Job::Noise { idx: t, nonce: t as u8, eta: eta1 };
        n += 1;
    }
    let mut j_unused = [0u8; 32];
    let mut out = Outputs { rho: &rho, sigma: &sigma, mat: &mut a, noise: &mut noise, j_out: &mut j_unused };
    sampling::run(be, &jobs[..n], &mut out);
    sigma.zeroize();
    for p in noise[..2 * k].iter_mut() {
        be.ntt(p);
    }
    let (s, e) = noise.split_at_mut(k);
    let mut t = Poly::ZERO;
    for i in 0..k {
        be.basemul_acc(&mut t, &a[i * k..(i + 1) * k], &s[..k]);
        be.to_mont(&mut t);
        add_assign(&mut t, &e[i]);
        normalize(&mut t);
        poly::encode12(&t, &mut ek[384 * i..384 * (i + 1)]);
    }
    ek[384 * k..384 * k + 32].copy_from_slice(&rho);
    for i in 0..k {
        normalize(&mut s[i]);
        poly::encode12(&s[i], &mut dk_pke[384 * i..384 * (i + 1)]);
    }
    noise.zeroize();
}

/// K-PKE.Encrypt(ek, m, r) (FIPS 203 Algorithm 14). `ek` has passed the modulus check. With `reject =
/// Some((z, c))` it also computes J(z || c) into `j_out`, in the same Keccak batches as the sampling.
fn kpke_encrypt<P: Params>(
    be: Checked<Backend>,
    ek: &[u8],
    m: &[u8; 32],
    r: &[u8; 32],
    ct: &mut [u8],
    reject: Option<(&[u8], &[u8])>,
    j_out: &mut [u8; 32],
) {
    let k = P::K;
    let (du, dv) = (P::DU, P::DV);
    let mut that = [Poly::ZERO; 4];
    for (i, t) in that[..k].iter_mut().enumerate() {
        poly::decode12(&ek[384 * i..384 * (i + 1)], t);
    }
    let mut rho = [0u8; 32];
    rho.copy_from_slice(&ek[384 * k..384 * k + 32]);
    let mut at = [Poly::ZERO; 16];
    let mut noise = [Poly::ZERO; 9];
    let mut jobs = [Job::Matrix { idx: 0, a: 0, b: 0 }; 26];
    let mut n = sampling::matrix_jobs(&mut jobs, k, true);
    if let Some((z, c)) = reject {
        jobs[n] = Job::Reject { z, c };
        n += 1;
    }
    for t in 0..2 * k + 1 {
        let eta = if t < k { P::ETA1 } else { P::ETA2 };
        jobs[n] = Job::Noise { idx: t, nonce: t as u8, eta };
        n += 1;
    }
    let mut out = Outputs { rho: &rho, sigma: r, mat: &mut at, noise: &mut noise, j_out };
    sampling::run(be, &jobs[..n], &mut out);
    let (y, rest) = noise.split_at_mut(k);
    let (e1, rest) = rest.split_at_mut(k);
    let e2 = &rest[0];
    for p in y.iter_mut() {
        be.ntt(p);
    }
    let mut u = Poly::ZERO;
    let ulen = 32 * du as usize;
    for i in 0..k {
        be.basemul_acc(&mut u, &at[i * k..(i + 1) * k], y);
        be.invntt(&mut u);
        add_assign(&mut u, &e1[i]);
        normalize(&mut u);
        poly::compress_encode(&u, du, &mut ct[ulen * i..ulen * (i + 1)]);
    }
    let mut v = Poly::ZERO;
    be.basemul_acc(&mut v, &that[..k], y);
    be.invntt(&mut v);
    add_assign(&mut v, e2);
    let mut mu = Poly::ZERO;
    poly::from_msg(m, &mut mu);
    add_assign(&mut v, &mu);
    normalize(&mut v);
    poly::compress_encode(&v, dv, &mut ct[ulen * k..ulen * k + 32 * dv as usize]);
    noise.zeroize();
    u.zeroize();
    v.zeroize();
    mu.zeroize();
}

/// K-PKE.Decrypt(dk_pke, c) (FIPS 203 Algorithm 15).
fn kpke_decrypt<P: Params>(be: Checked<Backend>, dk_pke: &[u8], ct: &[u8], m: &mut [u8; 32]) {
    let k = P::K;
    let (du, dv) = (P::DU, P::DV);
    let ulen = 32 * du as usize;
    let mut u = [Poly::ZERO; 4];
    let mut s = [Poly::ZERO; 4];
    for i in 0..k {
        poly::decode_decompress(&ct[ulen * i..ulen * (i + 1)], du, &mut u[i]);
        be.ntt(&mut u[i]);
        poly::decode12(&dk_pke[384 * i..384 * (i + 1)], &mut s[i]);
    }
    let mut w = Poly::ZERO;
    be.basemul_acc(&mut w, &s[..k], &u[..k]);
    be.invntt(&mut w);
    let mut v = Poly::ZERO;
    poly::decode_decompress(&ct[ulen * k..], dv, &mut v);
    for (x, y) in w.c.iter_mut().zip(v.c.iter()) {
        *x = *y - *x;
    }
    normalize(&mut w);
    poly::to_msg(&w, m);
    s.zeroize();
    w.zeroize();
}

/// ML-KEM.KeyGen_internal(d, z) (FIPS 203 Algorithm 16): the expanded `dk = dk_pke || ek || H(ek) || z`.
fn keygen_internal<P: Params>(be: Checked<Backend>, d: &[u8; 32], z: &[u8; 32]) -> P::DkBytes {
    let k = P::K;
    let mut dk = P::DkBytes::zeroed();
    {
        let buf = dk.as_mut();
        let (dk_pke, rest) = buf.split_at_mut(384 * k);
        let (ek, rest) = rest.split_at_mut(384 * k + 32);
        kpke_keygen(be, k, P::ETA1, d, ek, dk_pke);
        let h = hash_h(ek);
        rest[..32].copy_from_slice(&h);
        rest[32..64].copy_from_slice(z);
    }
    dk
}

/// ML-KEM.Encaps_internal(ek, m) (FIPS 203 Algorithm 17).
fn encaps_internal<P: Params>(be: Checked<Backend>, ek: &[u8], h: &[u8; 32], m: &[u8; 32]) -> (P::CtBytes, [u8; 32]) {
    let (key, mut r) = hash_g(&[m, h]);
    let mut ct = P::CtBytes::zeroed();
    kpke_encrypt::<P>(be, ek, m, &r, ct.as_mut(), None, &mut [0u8; 32]);
    r.zeroize();
    (ct, key)
}

/// ML-KEM.Decaps_internal(dk, c) (FIPS 203 Algorithm 18), with implicit rejection.
fn decaps_internal<P: Params>(be: Checked<Backend>, dk: &[u8], c: &[u8]) -> [u8; 32] {
    let k = P::K;
    let dk_pke = &dk[..384 * k];
    let ek = &dk[384 * k..768 * k + 32];
    let h = &dk[768 * k + 32..768 * k + 64];
    let z = &dk[768 * k + 64..768 * k + 96];
    let mut m = [0u8; 32];
    kpke_decrypt::<P>(be, dk_pke, c, &mut m);
    let (mut key, mut r) = hash_g(&[&m, h]);
    let mut kbar = [0u8; 32];
    let mut c2 = P::CtBytes::zeroed();
    kpke_encrypt::<P>(be, ek, &m, &r, c2.as_mut(), Some((z, c)), &mut kbar);
    // Constant time: compare the whole re-encryption, then select K' or K̄ with a mask.
    let equal = crate::ct::eq(c, c2.as_ref());
    let mask = 0u8.wrapping_sub(core::hint::black_box(u8::from(equal)));
    let mut out = [0u8; 32];
    for i in 0..32 {
        out[i] = (key[i] & mask) | (kbar[i] & !mask);
    }
    m.zeroize();
    key.zeroize();
    r.zeroize();
    kbar.zeroize();
    out
}

/// The 32-byte shared secret (one type for every KEM and key agreement in pqkit).
pub use crate::ct::SharedSecret;

/// An ML-KEM ciphertext (public).
#[derive(Clone, PartialEq, Eq)]
pub struct Ciphertext<P: Params> {
    bytes: P::CtBytes,
}

impl<P: Params> Ciphertext<P> {
    /// Ciphertext length in bytes.
    pub const LEN: usize = P::CT_LEN;

    /// Parses a ciphertext; the only check is the length (FIPS 203 §7.3).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Error::check_length(P::NAME, "ciphertext", P::CT_LEN, bytes.len())?;
        let mut b = P::CtBytes::zeroed();
        b.as_mut().copy_from_slice(bytes);
        Ok(Ciphertext { bytes: b })
    }

    /// The encoded ciphertext.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }
}

impl<P: Params> AsRef<[u8]> for Ciphertext<P> {
    fn as_ref(&self) -> &[u8] {
        self.bytes.as_ref()
    }
}

impl<P: Params> fmt::Debug for Ciphertext<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Ciphertext<{}> {{ .. }}", P::NAME)
    }
}

/// An ML-KEM encapsulation (public) key, `ek`. Parsing checks the length and that every coefficient is
/// reduced modulo q (FIPS 203 §7.2).
#[derive(Clone)]
pub struct EncapsulationKey<P: Params> {
    bytes: P::EkBytes,
    /// H(ek), computed once.
    h: [u8; 32],
    backend: Checked<Backend>,
}

impl<P: Params> EncapsulationKey<P> {
    /// Encoded length in bytes.
    pub const LEN: usize = P::EK_LEN;

    /// Parses `ek`: checks the length, then the modulus check ByteEncode12(ByteDecode12(ek)) == ek.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_backend(Backend::detect(), bytes)
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(backend: Checked<Backend>, bytes: &[u8]) -> Result<Self> {
        Error::check_length(P::NAME, "encapsulation key", P::EK_LEN, bytes.len())?;
        if !poly::is_reduced12(&bytes[..384 * P::K]) {
            return Err(Error::InvalidEncoding {
                algorithm: P::NAME,
                reason: "encapsulation key coefficient not reduced modulo q",
            });
        }
        let mut b = P::EkBytes::zeroed();
        b.as_mut().copy_from_slice(bytes);
        Ok(EncapsulationKey { bytes: b, h: hash_h(bytes), backend })
    }

    /// The encoded key.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// Encapsulates a fresh shared secret with 32 bytes from the operating system's RNG.
    #[cfg(feature = "std")]
    pub fn encapsulate(&self) -> Result<(Ciphertext<P>, SharedSecret)> {
        let mut m = [0u8; 32];
        crate::rng::fill_os(&mut m)?;
        let out = self.encapsulate_deterministic(&m);
        m.zeroize();
        Ok(out)
    }

    /// ML-KEM.Encaps_internal with the caller's randomness `m`. `m` must be 32 fresh uniformly random bytes,
    /// used once; it exists for known-answer tests and callers with their own RNG.
    pub fn encapsulate_deterministic(&self, m: &[u8; 32]) -> (Ciphertext<P>, SharedSecret) {
        let (ct, key) = encaps_internal::<P>(self.backend, self.bytes.as_ref(), &self.h, m);
        (Ciphertext { bytes: ct }, SharedSecret(key))
    }
}

impl<P: Params> Zeroize for EncapsulationKey<P> {
    fn zeroize(&mut self) {
        crate::ct::wipe(self.bytes.as_mut());
        self.h = [0; 32];
    }
}

/// The key is public; it is wiped on drop only so that no key material of any kind lingers.
impl<P: Params> Drop for EncapsulationKey<P> {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl<P: Params> PartialEq for EncapsulationKey<P> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}
impl<P: Params> Eq for EncapsulationKey<P> {}

impl<P: Params> AsRef<[u8]> for EncapsulationKey<P> {
    fn as_ref(&self) -> &[u8] {
        self.bytes.as_ref()
    }
}

impl<P: Params> fmt::Debug for EncapsulationKey<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EncapsulationKey<{}> {{ .. }}", P::NAME)
    }
}

/// An ML-KEM decapsulation (private) key. Zeroized on drop; `Debug` prints nothing.
pub struct DecapsulationKey<P: Params> {
    /// The expanded form `dk_pke || ek || H(ek) || z`.
    bytes: P::DkBytes,
    /// `d || z` when the key was made from a seed.
    seed: Option<[u8; 64]>,
    backend: Checked<Backend>,
}

impl<P: Params> DecapsulationKey<P> {
    /// Length of the expanded encoding in bytes.
    pub const LEN: usize = P::DK_LEN;

    /// Generates a key pair from 64 bytes of the operating system's RNG (ML-KEM.KeyGen, Algorithm 19).
    #[cfg(feature = "std")]
    pub fn generate() -> Result<(Self, EncapsulationKey<P>)> {
        let mut seed = [0u8; 64];
        crate::rng::fill_os(&mut seed)?;
        let out = Self::from_seed64(&seed);
        seed.zeroize();
        out
    }

    /// ML-KEM.KeyGen_internal(d, z): the key pair for the seed `d || z`. Both must be secret and uniformly
    /// random.
    pub fn from_seed(d: &[u8; 32], z: &[u8; 32]) -> (Self, EncapsulationKey<P>) {
        Self::from_seed_with_backend(Backend::detect(), d, z)
    }

    /// As [`from_seed`](Self::from_seed) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_seed_with_backend(
        backend: Checked<Backend>,
        d: &[u8; 32],
        z: &[u8; 32],
    ) -> (Self, EncapsulationKey<P>) {
        let bytes = keygen_internal::<P>(backend, d, z);
        let mut seed = [0u8; 64];
        seed[..32].copy_from_slice(d);
        seed[32..].copy_from_slice(z);
        let dk = DecapsulationKey { bytes, seed: Some(seed), backend };
        let ek = dk.encapsulation_key();
        (dk, ek)
    }

    /// Expands a stored 64-byte seed `d || z` (the form of [`to_seed`](Self::to_seed)).
    pub fn from_seed64(seed: &[u8]) -> Result<(Self, EncapsulationKey<P>)> {
        Error::check_length(P::NAME, "seed", 64, seed.len())?;
        let mut d = [0u8; 32];
        let mut z = [0u8; 32];
        d.copy_from_slice(&seed[..32]);
        z.copy_from_slice(&seed[32..]);
        let out = Self::from_seed(&d, &z);
        d.zeroize();
        z.zeroize();
        Ok(out)
    }

    /// The 64-byte seed `d || z`, if the key was made from one (`generate`, `from_seed`, `from_seed64`);
    /// `None` for a key parsed from the expanded form. Secret: the copy is zeroized when dropped.
    pub fn to_seed(&self) -> Option<Zeroizing<[u8; 64]>> {
        self.seed.map(Zeroizing::new)
    }

    /// Parses the expanded form (FIPS 203 §7.3 checks: the length, and H(ek) equal to the stored hash).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_backend(Backend::detect(), bytes)
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(backend: Checked<Backend>, bytes: &[u8]) -> Result<Self> {
        Error::check_length(P::NAME, "decapsulation key", P::DK_LEN, bytes.len())?;
        let k = P::K;
        let h = hash_h(&bytes[384 * k..768 * k + 32]);
        // Validity of the key encoding is returned as an error: public.
        if !crate::ct::declassify(crate::ct::eq(&h, &bytes[768 * k + 32..768 * k + 64])) {
            return Err(Error::InvalidEncoding { algorithm: P::NAME, reason: "decapsulation key hash check failed" });
        }
        let mut b = P::DkBytes::zeroed();
        b.as_mut().copy_from_slice(bytes);
        Ok(DecapsulationKey { bytes: b, seed: None, backend })
    }

    /// The expanded encoding `dk_pke || ek || H(ek) || z` (secret: the copy is zeroized when dropped).
    pub fn to_bytes(&self) -> Zeroizing<P::DkBytes> {
        Zeroizing::new(self.bytes)
    }

    /// The matching encapsulation key.
    pub fn encapsulation_key(&self) -> EncapsulationKey<P> {
        let k = P::K;
        let dk = self.bytes.as_ref();
        let mut b = P::EkBytes::zeroed();
        b.as_mut().copy_from_slice(&dk[384 * k..768 * k + 32]);
        let mut h = [0u8; 32];
        h.copy_from_slice(&dk[768 * k + 32..768 * k + 64]);
        EncapsulationKey { bytes: b, h, backend: self.backend }
    }

    /// Decapsulates: the shared secret, or the implicit-rejection secret J(z || c) if `ct` was not produced
    /// for this key. Never fails; do not reveal which case happened.
    pub fn decapsulate(&self, ct: &Ciphertext<P>) -> SharedSecret {
        SharedSecret(decaps_internal::<P>(self.backend, self.bytes.as_ref(), ct.bytes.as_ref()))
    }
}

impl<P: Params> Clone for DecapsulationKey<P> {
    fn clone(&self) -> Self {
        DecapsulationKey { bytes: self.bytes, seed: self.seed, backend: self.backend }
    }
}

impl<P: Params> Zeroize for DecapsulationKey<P> {
    fn zeroize(&mut self) {
        crate::ct::wipe(self.bytes.as_mut());
        if let Some(s) = self.seed.as_mut() {
            s.zeroize();
        }
        self.seed = None;
    }
}

impl<P: Params> Drop for DecapsulationKey<P> {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl<P: Params> zeroize::ZeroizeOnDrop for DecapsulationKey<P> {}

impl<P: Params> fmt::Debug for DecapsulationKey<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DecapsulationKey<{}> {{ .. }}", P::NAME)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::BackendSet;

    /// Every backend lists the features of the Keccak backend it runs, so `keccak()`'s derivation never fails.
    #[test]
    fn every_backend_derives_its_keccak_backend() {
        for &b in <Backend as BackendSet>::ALL {
            assert!(b.required().has(b.keccak_backend().required()), "{b:?}");
        }
        for b in Backend::available() {
            let kb = b.keccak();
            assert_eq!(kb, b.get().keccak_backend());
            assert!(kb.get().is_available(), "{b:?}");
        }
    }

    /// Every backend's rejection sampler appends exactly what the portable one does: random buffers of every
    /// length up to 200 bytes (candidates accepted at random, and in runs of all-accepted and all-rejected words),
    /// from start counts across the range, including ones a vector step cannot fit after.
    #[test]
    fn every_backend_rejection_sampling_equals_portable() {
        extern crate alloc;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut checked = 0;
        for b in Backend::available() {
            for len in 0..=200usize {
                for kind in 0..4 {
                    let buf: alloc::vec::Vec<u8> = (0..len)
                        .map(|i| match kind {
                            // Random: about 81% of candidates accepted.
                            0 => next() as u8,
                            // 0xff bytes: every candidate is 4095, rejected.
                            1 => 0xff,
                            // Zero bytes: every candidate accepted.
                            2 => 0,
                            // Candidates 3328 (accepted) and 3329 (rejected) alternating by triple.
                            _ => [0x00, 0x0d, 0xd0, 0x01, 0xd0, 0xd0][i % 6],
                        })
                        .collect();
                    for start in [0usize, 1, 100, 231, 239, 240, 241, 250, 255, 256] {
                        let mut want = Poly::ZERO;
                        let mut got = Poly::ZERO;
                        for i in 0..start {
                            want.c[i] = i as i16;
                            got.c[i] = i as i16;
                        }
                        let (mut nw, mut ng) = (start, start);
                        poly::rej_uniform(&mut want, &mut nw, &buf);
                        b.rej(&mut got, &mut ng, &buf);
                        assert_eq!(ng, nw, "{b:?} len {len} kind {kind} start {start}");
                        assert_eq!(got.c[..ng], want.c[..nw], "{b:?} len {len} kind {kind} start {start}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked >= 201 * 4 * 10);
    }
}
