//! Eight field elements of five 64-bit limbs as five `zmm` registers (limb `i` of every lane in register `i`):
//! the layout of the AVX-512 IFMA lane arithmetic of Curve25519 and P-256 (radix 2^52), and the moves in and out
//! of it, and the ten-column products both fields reduce in their own way.
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

/// The product `a · b` of eight pairs as ten unreduced radix-2^52 columns (column `k` holds the low halves of
/// the limb products `i + j = k` and the high halves of those with `i + j + 1 = k`), for each field's own
/// reduction. Low and high halves are accumulated apart: two shorter dependency chains per column.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn mul_wide(a: &Fe, b: &Fe) -> [__m512i; 10] {
    let mut lo = [_mm512_setzero_si512(); 10];
    let mut hi = [_mm512_setzero_si512(); 10];
    for i in 0..5 {
        for j in 0..5 {
            lo[i + j] = _mm512_madd52lo_epu64(lo[i + j], a[i], b[j]);
            hi[i + j + 1] = _mm512_madd52hi_epu64(hi[i + j + 1], a[i], b[j]);
        }
    }
    core::array::from_fn(|k| _mm512_add_epi64(lo[k], hi[k]))
}

/// [`mul_wide`]`(a, a)` with the cross products computed once and doubled.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn square_wide(a: &Fe) -> [__m512i; 10] {
    let mut cross = [_mm512_setzero_si512(); 10];
    let mut diag = [_mm512_setzero_si512(); 10];
    for i in 0..5 {
        diag[2 * i] = _mm512_madd52lo_epu64(diag[2 * i], a[i], a[i]);
        diag[2 * i + 1] = _mm512_madd52hi_epu64(diag[2 * i + 1], a[i], a[i]);
        for j in i + 1..5 {
            cross[i + j] = _mm512_madd52lo_epu64(cross[i + j], a[i], a[j]);
            cross[i + j + 1] = _mm512_madd52hi_epu64(cross[i + j + 1], a[i], a[j]);
        }
    }
    core::array::from_fn(|k| _mm512_add_epi64(diag[k], _mm512_slli_epi64::<1>(cross[k])))
}
