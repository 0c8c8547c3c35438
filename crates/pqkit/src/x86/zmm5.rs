//! Eight field elements of five 64-bit limbs as five `zmm` registers (limb `i` of every lane in register `i`):
//! the layout of the AVX-512 IFMA lane arithmetic of Curve25519 and P-256 (radix 2^52), and the moves in and out
//! of it.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

/// Elements per register set: one per 64-bit lane.
pub(crate) const LANES: usize = 8;

/// Eight elements, limb `i` of every lane in register `i`.
pub(crate) type Fe = [__m512i; 5];

/// `x` in every lane.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn splat(x: u64) -> __m512i {
    _mm512_set1_epi64(x as i64)
}

/// Limb `i` of every lane: `v[lane][i]` into register `i`.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn load(v: &[[u64; 5]; LANES]) -> Fe {
    core::array::from_fn(|i| {
        let lane: [u64; LANES] = core::array::from_fn(|j| v[j][i]);
        // SAFETY: `lane` is 64 readable bytes; unaligned load.
        unsafe { _mm512_loadu_si512(lane.as_ptr().cast()) }
    })
}

/// The inverse of [`load`].
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn store(a: &Fe) -> [[u64; 5]; LANES] {
    let mut limbs = [[0u64; LANES]; 5];
    for (dst, v) in limbs.iter_mut().zip(a) {
        // SAFETY: `dst` is 64 writable bytes; unaligned store.
        unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), *v) };
    }
    core::array::from_fn(|j| core::array::from_fn(|i| limbs[i][j]))
}
