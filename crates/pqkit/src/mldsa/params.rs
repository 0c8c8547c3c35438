//! The three ML-DSA parameter sets (FIPS 204, Table 1 and Table 2) as types.

use super::poly::Poly;

mod sealed {
    pub trait Sealed {}
}

/// Fixed-size storage for `N` polynomials (`[Poly; N]`), so vectors and matrices live on the stack.
#[doc(hidden)]
pub trait PolyArray: Clone + AsRef<[Poly]> + AsMut<[Poly]> + zeroize::Zeroize {
    /// All-zero storage.
    fn zero() -> Self;
}

impl<const N: usize> PolyArray for [Poly; N] {
    #[inline]
    fn zero() -> Self {
        [Poly::ZERO; N]
    }
}

/// Fixed-size byte storage (`[u8; N]`) for encoded keys and signatures.
#[doc(hidden)]
pub trait ByteArray: Clone + AsRef<[u8]> + AsMut<[u8]> {
    /// All-zero storage.
    fn zero() -> Self;
}

impl<const N: usize> ByteArray for [u8; N] {
    #[inline]
    fn zero() -> Self {
        [0; N]
    }
}

/// An ML-DSA parameter set. Sealed: only [`MlDsa44`], [`MlDsa65`] and [`MlDsa87`] implement it.
pub trait Params: sealed::Sealed + Copy + Clone + core::fmt::Debug + Default + 'static {
    /// The name, e.g. `"ML-DSA-65"`.
    const NAME: &'static str;
    /// Rows of the matrix A (length of t, s2, w, h).
    const K: usize;
    /// Columns of the matrix A (length of s1, y, z).
    const L: usize;
    /// Private key range: coefficients of s1, s2 lie in \[-η, η\].
    const ETA: i32;
    /// Number of ±1 coefficients of the challenge c.
    const TAU: usize;
    /// Range of y: coefficients in (-γ1, γ1\].
    const GAMMA1: i32;
    /// Low-order rounding range γ2.
    const GAMMA2: i32;
    /// Maximum number of 1s in the hint h.
    const OMEGA: usize;
    /// Length of the commitment hash c̃ in bytes (λ/4).
    const CTILDE: usize;
    /// β = τ·η.
    const BETA: i32 = Self::TAU as i32 * Self::ETA;
    /// Bits per coefficient of s1/s2 in the private key.
    const ETA_BITS: usize = if Self::ETA == 2 { 3 } else { 4 };
    /// Bits per coefficient of z in the signature (1 + bitlen(γ1 - 1)).
    const Z_BITS: usize = if Self::GAMMA1 == 1 << 17 { 18 } else { 20 };
    /// Bits per coefficient of w1 in `w1Encode`.
    const W1_BITS: usize = if Self::GAMMA2 == (super::Q - 1) / 88 { 6 } else { 4 };
    /// Public key length in bytes.
    const PK_LEN: usize = 32 + 320 * Self::K;
    /// Private key length in bytes (the expanded FIPS 204 encoding).
    const SK_LEN: usize = 128 + 32 * (Self::K + Self::L) * Self::ETA_BITS + 416 * Self::K;
    /// Signature length in bytes.
    const SIG_LEN: usize = Self::CTILDE + 32 * Self::L * Self::Z_BITS + Self::OMEGA + Self::K;

    #[doc(hidden)]
    type VecK: PolyArray;
    #[doc(hidden)]
    type VecL: PolyArray;
    /// The matrix A, row-major (`K * L` polynomials).
    #[doc(hidden)]
    type Mat: PolyArray;
    #[doc(hidden)]
    type PkBytes: ByteArray;
    #[doc(hidden)]
    type SigBytes: ByteArray;
    #[doc(hidden)]
    type SkBytes: ByteArray + zeroize::Zeroize;
}

macro_rules! params {
    ($(#[$doc:meta])* $name:ident, $label:expr, k = $k:expr, l = $l:expr, eta = $eta:expr, tau = $tau:expr,
     gamma1 = $g1:expr, gamma2 = $g2:expr, omega = $omega:expr, ctilde = $ct:expr, pk = $pk:expr, sk = $sk:expr, sig = $sig:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl Params for $name {
            const NAME: &'static str = $label;
            const K: usize = $k;
            const L: usize = $l;
            const ETA: i32 = $eta;
            const TAU: usize = $tau;
            const GAMMA1: i32 = $g1;
            const GAMMA2: i32 = $g2;
            const OMEGA: usize = $omega;
            const CTILDE: usize = $ct;
            type VecK = [Poly; $k];
            type VecL = [Poly; $l];
            type Mat = [Poly; $k * $l];
            type PkBytes = [u8; $pk];
            type SigBytes = [u8; $sig];
            type SkBytes = [u8; $sk];
        }
        const _: () = assert!(<$name as Params>::PK_LEN == $pk && <$name as Params>::SIG_LEN == $sig && <$name as Params>::SK_LEN == $sk);
    };
}

params!(
    /// ML-DSA-44 (security category 2): public key 1312 bytes, private key 2560, signature 2420.
    MlDsa44, "ML-DSA-44", k = 4, l = 4, eta = 2, tau = 39, gamma1 = 1 << 17, gamma2 = (super::Q - 1) / 88,
    omega = 80, ctilde = 32, pk = 1312, sk = 2560, sig = 2420
);
params!(
    /// ML-DSA-65 (security category 3): public key 1952 bytes, private key 4032, signature 3309.
    MlDsa65, "ML-DSA-65", k = 6, l = 5, eta = 4, tau = 49, gamma1 = 1 << 19, gamma2 = (super::Q - 1) / 32,
    omega = 55, ctilde = 48, pk = 1952, sk = 4032, sig = 3309
);
params!(
    /// ML-DSA-87 (security category 5): public key 2592 bytes, private key 4896, signature 4627.
    MlDsa87, "ML-DSA-87", k = 8, l = 7, eta = 2, tau = 60, gamma1 = 1 << 19, gamma2 = (super::Q - 1) / 32,
    omega = 75, ctilde = 64, pk = 2592, sk = 4896, sig = 4627
);
