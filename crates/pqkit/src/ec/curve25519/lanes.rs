//! The Curve25519 batch family (many operations at once): its backends, and the forms its lanes share. The
//! X25519 batch ([`multi`](super::multi)) and the Ed25519 one ([`multi_ed`](super::multi_ed)) dispatch on
//! [`Backend`]; the lane code (`avx2.rs`, `ifma.rs`, `ifma_edwards.rs`) takes and returns these forms, so it
//! depends on this module only, never on the dispatchers.

// The batch APIs need `alloc`; without it only the backend declaration is used.
#![cfg_attr(not(feature = "alloc"), allow(dead_code))]
use super::field::Fe51;
use zeroize::Zeroize;

crate::dispatch::backends! {
    /// An implementation of many Curve25519 operations at once: X25519 agreements ([`multi`](super::multi)) and the
    /// fixed-base multiplications of Ed25519 key generation and signing ([`multi_ed`](super::multi_ed)).
    ///
    /// Crate-internal plumbing, public only so tests and benchmarks can force each backend.
    #[doc(hidden)]
    pub enum Backend for "Curve25519 batch" {
        /// Portable Rust: each ladder or fixed-base comb in the 51-bit field of the portable Curve25519
        /// backend, the inversions batched. The reference for the batched path.
        Soft: [],
        /// Each operation through the one-at-a-time code of the fastest Curve25519 backend (the `mulx`/`adx`
        /// ladder and comb), with its own inversion: what CPUs without AVX-512 IFMA run.
        Bmi2Adx: [BMI2, ADX],
        /// AVX2: four ladders in the four 64-bit lanes of `ymm` registers, radix 2^25.5 (`avx2.rs`), the
        /// inversions batched. Ranked above `Bmi2Adx`, whose features it also needs: the Ed25519 batch
        /// ([`multi_ed`](super::multi_ed)) runs the one-at-a-time `mulx`/`adx` comb under it.
        Avx2: [AVX2, BMI2, ADX],
        /// AVX-512 IFMA: eight ladders or fixed-base combs in the eight 64-bit lanes of `zmm` registers,
        /// radix 2^52 (`ifma.rs`, `ifma_edwards.rs`), the inversions batched.
        Ifma: [AVX512F, AVX512IFMA],
    }
}

/// Operations per vector ladder.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) const LANES: usize = 8;

/// Results that share one inversion.
pub(crate) const CHUNK: usize = 64;

/// A ladder's result (X : Z) in radix 2^52: limbs 0–3 below 2^52, limb 4 below 2^48 (value below 2^256).
#[derive(Clone, Copy, Default)]
pub(crate) struct Projective {
    pub(crate) x: [u64; 5],
    pub(crate) z: [u64; 5],
}

/// 2^52 − 1.
pub(crate) const M52: u64 = (1 << 52) - 1;

/// The limbs of the u-coordinate `u` with bit 255 ignored (RFC 7748 §5), below 2^255: limb 4 below 2^47.
pub(crate) fn limbs52(u: &[u8; 32]) -> [u64; 5] {
    let w: [u64; 4] = core::array::from_fn(|i| u64::from_le_bytes(u[8 * i..8 * i + 8].try_into().unwrap_or([0; 8])));
    let w3 = w[3] & (u64::MAX >> 1);
    [
        w[0] & M52,
        ((w[0] >> 52) | (w[1] << 12)) & M52,
        ((w[1] >> 40) | (w[2] << 24)) & M52,
        ((w[2] >> 28) | (w[3] << 36)) & M52,
        w3 >> 16,
    ]
}

/// The element with radix-2^52 limbs `l` (limbs 0–3 below 2^52, limb 4 below 2^48).
pub(crate) fn fe_from_limbs52(l: &[u64; 5]) -> Fe51 {
    let w =
        [l[0] | (l[1] << 52), (l[1] >> 12) | (l[2] << 40), (l[2] >> 24) | (l[3] << 28), (l[3] >> 36) | (l[4] << 16)];
    // Bit 255 has weight 2^255 ≡ 19; `from_bytes` reads the 255 bits below it.
    let top = w[3] >> 63;
    let mut b = [0u8; 32];
    for (i, wi) in w.iter().enumerate() {
        b[8 * i..8 * i + 8].copy_from_slice(&wi.to_le_bytes());
    }
    let fe = Fe51::from_bytes(&b).add(&Fe51::from_u64(19 * top));
    b.zeroize();
    fe
}
