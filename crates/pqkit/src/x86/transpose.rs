//! Word transposes for the word-sliced backends (ChaCha, Kusumi512, Threefish-512-CTR).
//!
//! Those backends keep one state word of many blocks per register (lane `j` = block `j`); at the end a transpose
//! turns `n` such registers into `n` registers of one block each, ready to XOR into the data. Each distinct
//! transpose is written once, here:
//!
//! | function | shape | features |
//! |---|---|---|
//! | [`transpose8x8_epi32`] | 8×8 of 32-bit words in ymm | AVX2 |
//! | [`transpose4x4_epi32_lanes`] | 4×4 of 32-bit words inside each 128-bit lane of zmm | AVX-512F |
//! | [`transpose16x16_epi32`] | 16×16 of 32-bit words in zmm ([`transpose4x4_epi32_lanes`], then 128-bit lanes) | AVX-512F |
//! | [`transpose8x8_epi64`] | 8×8 of 64-bit words in zmm | AVX-512F |
//!
//! ## Safety contract
//! They are safe `#[target_feature]` functions: the compiler lets code call them without `unsafe` only when
//! that code is itself compiled with the same features (a `#[target_feature]` function enabling them or more,
//! which may only run once the CPU has been checked to have them), and requires `unsafe` anywhere else, where
//! the caller must know the CPU has them. They touch no memory. They are `#[inline]`, as the per-family copies
//! they replace were (rustc does not accept `#[inline(always)]` together with `#[target_feature]`); LLVM inlines
//! them into callers with the same features, so the generated code is what it was.

use core::arch::x86_64::*;

/// 8×8 transpose of 32-bit words: lane `j` of output `b` is lane `b` of input `j` (in word-sliced terms: input
/// `w` holds word `w` of blocks 0..7, output `b` holds words 0..7 of block `b`).
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn transpose8x8_epi32(a: [__m256i; 8]) -> [__m256i; 8] {
    let t0 = _mm256_unpacklo_epi32(a[0], a[1]);
    let t1 = _mm256_unpackhi_epi32(a[0], a[1]);
    let t2 = _mm256_unpacklo_epi32(a[2], a[3]);
    let t3 = _mm256_unpackhi_epi32(a[2], a[3]);
    let t4 = _mm256_unpacklo_epi32(a[4], a[5]);
    let t5 = _mm256_unpackhi_epi32(a[4], a[5]);
    let t6 = _mm256_unpacklo_epi32(a[6], a[7]);
    let t7 = _mm256_unpackhi_epi32(a[6], a[7]);
    // Per 128-bit lane k: u0 = words 0..3 of block 4k, u1 of block 4k+1, ...; u4..u7 the same for words 4..7.
    let u0 = _mm256_unpacklo_epi64(t0, t2);
    let u1 = _mm256_unpackhi_epi64(t0, t2);
    let u2 = _mm256_unpacklo_epi64(t1, t3);
    let u3 = _mm256_unpackhi_epi64(t1, t3);
    let u4 = _mm256_unpacklo_epi64(t4, t6);
    let u5 = _mm256_unpackhi_epi64(t4, t6);
    let u6 = _mm256_unpacklo_epi64(t5, t7);
    let u7 = _mm256_unpackhi_epi64(t5, t7);
    [
        _mm256_permute2x128_si256::<0x20>(u0, u4),
        _mm256_permute2x128_si256::<0x20>(u1, u5),
        _mm256_permute2x128_si256::<0x20>(u2, u6),
        _mm256_permute2x128_si256::<0x20>(u3, u7),
        _mm256_permute2x128_si256::<0x31>(u0, u4),
        _mm256_permute2x128_si256::<0x31>(u1, u5),
        _mm256_permute2x128_si256::<0x31>(u2, u6),
        _mm256_permute2x128_si256::<0x31>(u3, u7),
    ]
}

/// 4×4 transposes of 32-bit words inside each 128-bit lane: word `e` of lane `k` of output `r` is word `4k + r`
/// of input `e` (`a`, `b`, `c`, `d`, in that order).
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn transpose4x4_epi32_lanes(a: __m512i, b: __m512i, c: __m512i, d: __m512i) -> [__m512i; 4] {
    let t0 = _mm512_unpacklo_epi32(a, b);
    let t1 = _mm512_unpackhi_epi32(a, b);
    let t2 = _mm512_unpacklo_epi32(c, d);
    let t3 = _mm512_unpackhi_epi32(c, d);
    [
        _mm512_unpacklo_epi64(t0, t2),
        _mm512_unpackhi_epi64(t0, t2),
        _mm512_unpacklo_epi64(t1, t3),
        _mm512_unpackhi_epi64(t1, t3),
    ]
}

/// 16×16 transpose of 32-bit words: lane `j` of output `b` is lane `b` of input `j`.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn transpose16x16_epi32(r: [__m512i; 16]) -> [__m512i; 16] {
    // Step 1: per group g of four words, u[4g + k] lane-128 L holds words 4g..4g+3 of block 4L + k.
    let g0 = transpose4x4_epi32_lanes(r[0], r[1], r[2], r[3]);
    let g1 = transpose4x4_epi32_lanes(r[4], r[5], r[6], r[7]);
    let g2 = transpose4x4_epi32_lanes(r[8], r[9], r[10], r[11]);
    let g3 = transpose4x4_epi32_lanes(r[12], r[13], r[14], r[15]);
    // Step 2: a 4×4 transpose of 128-bit lanes across the four groups, for each k.
    let mut o = [_mm512_setzero_si512(); 16];
    for k in 0..4 {
        let v = _mm512_shuffle_i32x4::<0x88>(g0[k], g1[k]); // lanes: g0.0 g0.2 g1.0 g1.2
        let w = _mm512_shuffle_i32x4::<0xDD>(g0[k], g1[k]); // lanes: g0.1 g0.3 g1.1 g1.3
        let v2 = _mm512_shuffle_i32x4::<0x88>(g2[k], g3[k]);
        let w2 = _mm512_shuffle_i32x4::<0xDD>(g2[k], g3[k]);
        o[k] = _mm512_shuffle_i32x4::<0x88>(v, v2);
        o[8 + k] = _mm512_shuffle_i32x4::<0xDD>(v, v2);
        o[4 + k] = _mm512_shuffle_i32x4::<0x88>(w, w2);
        o[12 + k] = _mm512_shuffle_i32x4::<0xDD>(w, w2);
    }
    o
}

/// 8×8 transpose of 64-bit words: lane `j` of output `b` is lane `b` of input `j`.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn transpose8x8_epi64(r: [__m512i; 8]) -> [__m512i; 8] {
    let mut t = [_mm512_setzero_si512(); 8];
    for p in 0..4 {
        t[2 * p] = _mm512_unpacklo_epi64(r[2 * p], r[2 * p + 1]);
        t[2 * p + 1] = _mm512_unpackhi_epi64(r[2 * p], r[2 * p + 1]);
    }
    let mut o = [_mm512_setzero_si512(); 8];
    for e in 0..2 {
        let v = _mm512_shuffle_i64x2::<0x88>(t[e], t[2 + e]);
        let w = _mm512_shuffle_i64x2::<0xDD>(t[e], t[2 + e]);
        let v2 = _mm512_shuffle_i64x2::<0x88>(t[4 + e], t[6 + e]);
        let w2 = _mm512_shuffle_i64x2::<0xDD>(t[4 + e], t[6 + e]);
        o[e] = _mm512_shuffle_i64x2::<0x88>(v, v2);
        o[4 + e] = _mm512_shuffle_i64x2::<0xDD>(v, v2);
        o[2 + e] = _mm512_shuffle_i64x2::<0x88>(w, w2);
        o[6 + e] = _mm512_shuffle_i64x2::<0xDD>(w, w2);
    }
    o
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;
    use crate::cpu::{Features, features};
    use core::mem::transmute;

    /// Distinct, irregular test words: no transpose bug can map one onto another by accident.
    fn word(i: usize, j: usize) -> u64 {
        let x = (i as u64) << 32 | j as u64;
        x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) ^ 0x0123_4567_89AB_CDEF
    }

    fn words32<const R: usize, const C: usize>() -> [[u32; C]; R] {
        core::array::from_fn(|i| core::array::from_fn(|j| word(i, j) as u32))
    }

    /// The scalar transpose: `out[b][j] = m[j][b]`.
    fn scalar<T: Copy, const N: usize>(m: &[[T; N]; N]) -> [[T; N]; N] {
        core::array::from_fn(|b| core::array::from_fn(|j| m[j][b]))
    }

    #[test]
    fn transpose8x8_epi32_matches_scalar() {
        if !features().has(Features::AVX2) {
            return;
        }
        let m = words32::<8, 8>();
        // SAFETY: `[[u32; 8]; 8]` and `[__m256i; 8]` are the same 256 bytes of plain data, any bits valid in
        // both; the CPU has AVX2 (checked above).
        let got: [[u32; 8]; 8] = unsafe { transmute(transpose8x8_epi32(transmute::<[[u32; 8]; 8], [__m256i; 8]>(m))) };
        assert_eq!(got, scalar(&m));
    }

    #[test]
    fn transpose4x4_epi32_lanes_matches_scalar() {
        if !features().has(Features::AVX512F) {
            return;
        }
        let m = words32::<4, 16>();
        // SAFETY: `[u32; 16]` and `__m512i` are the same 64 bytes of plain data, any bits valid in both; the CPU
        // has AVX-512F (checked above).
        let got: [[u32; 16]; 4] = unsafe {
            let v = transmute::<[[u32; 16]; 4], [__m512i; 4]>(m);
            transmute(transpose4x4_epi32_lanes(v[0], v[1], v[2], v[3]))
        };
        // Inside each 128-bit lane k, a 4×4 transpose of words: output r word e of lane k = input e word 4k + r.
        let want: [[u32; 16]; 4] = core::array::from_fn(|r| core::array::from_fn(|i| m[i % 4][4 * (i / 4) + r]));
        assert_eq!(got, want);
    }

    #[test]
    fn transpose16x16_epi32_matches_scalar() {
        if !features().has(Features::AVX512F) {
            return;
        }
        let m = words32::<16, 16>();
        // SAFETY: `[[u32; 16]; 16]` and `[__m512i; 16]` are the same 1024 bytes of plain data, any bits valid in
        // both; the CPU has AVX-512F (checked above).
        let got: [[u32; 16]; 16] =
            unsafe { transmute(transpose16x16_epi32(transmute::<[[u32; 16]; 16], [__m512i; 16]>(m))) };
        assert_eq!(got, scalar(&m));
    }

    #[test]
    fn transpose8x8_epi64_matches_scalar() {
        if !features().has(Features::AVX512F) {
            return;
        }
        let m: [[u64; 8]; 8] = core::array::from_fn(|i| core::array::from_fn(|j| word(i, j)));
        // SAFETY: `[[u64; 8]; 8]` and `[__m512i; 8]` are the same 512 bytes of plain data, any bits valid in
        // both; the CPU has AVX-512F (checked above).
        let got: [[u64; 8]; 8] = unsafe { transmute(transpose8x8_epi64(transmute::<[[u64; 8]; 8], [__m512i; 8]>(m))) };
        assert_eq!(got, scalar(&m));
    }
}
