//! BLAKE2 with AVX2, row-vectorized: the 4x4 state matrix is four registers (rows a, b, c, d), one G per
//! lane, so a round is one vector G on the columns, a lane rotation of rows b/c/d (diagonalize), one vector G
//! on the diagonals and the inverse rotation. BLAKE2b uses `ymm` (4 x u64), BLAKE2s `xmm` (4 x u32).
//! The rotations by whole bytes are `pshufb`, by 32 bits `pshufd`.
#![allow(unsafe_code)]

use super::{Backend, IV_B, IV_S, SIGMA};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

#[target_feature(enable = "avx2")]
fn compress_b_avx2(h: &mut [u64; 8], block: &[u8], t: u128, last: bool) {
    let mut m = [0u64; 16];
    for (x, c) in m.iter_mut().zip(block.chunks_exact(8)) {
        *x = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    }
    // Byte shuffles rotating each 64-bit word right by 24 and by 16 bits.
    let r24 = _mm256_setr_epi8(
        3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10, 3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10,
    );
    let r16 = _mm256_setr_epi8(
        2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9,
    );
    // SAFETY: `h` and IV_B are 8 u64; each load reads 4 of them (32 bytes) in bounds; loadu needs no alignment.
    let (h0, h1, iv0, iv1) = unsafe {
        (
            _mm256_loadu_si256(h.as_ptr().cast()),
            _mm256_loadu_si256(h.as_ptr().add(4).cast()),
            _mm256_loadu_si256(IV_B.as_ptr().cast()),
            _mm256_loadu_si256(IV_B.as_ptr().add(4).cast()),
        )
    };
    let mut a = h0;
    let mut b = h1;
    let mut c = iv0;
    let fin = if last { -1i64 } else { 0 };
    let mut d = _mm256_xor_si256(iv1, _mm256_set_epi64x(0, fin, (t >> 64) as i64, t as i64));

    macro_rules! g {
        ($x:expr, $y:expr) => {{
            // `a + x` first: it does not wait for `b`, the last value computed, shortening the critical path.
            a = _mm256_add_epi64(_mm256_add_epi64(a, $x), b);
            d = _mm256_shuffle_epi32::<0xb1>(_mm256_xor_si256(d, a));
            c = _mm256_add_epi64(c, d);
            b = _mm256_shuffle_epi8(_mm256_xor_si256(b, c), r24);
            a = _mm256_add_epi64(_mm256_add_epi64(a, $y), b);
            d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), r16);
            c = _mm256_add_epi64(c, d);
            let x = _mm256_xor_si256(b, c);
            b = _mm256_or_si256(_mm256_add_epi64(x, x), _mm256_srli_epi64::<63>(x));
        }};
    }
    for r in 0..12 {
        let s = &SIGMA[r % 10];
        let v = |i: usize, j: usize, k: usize, l: usize| {
            _mm256_set_epi64x(m[s[l]] as i64, m[s[k]] as i64, m[s[j]] as i64, m[s[i]] as i64)
        };
        g!(v(0, 2, 4, 6), v(1, 3, 5, 7));
        // Diagonalize by rotating rows a, c, d (not b): lane i then holds a[i-1], b[i], c[i+1], d[i+2], the
        // diagonal G number i-1. Row b is the last one a G step produces and the first the next step needs,
        // so leaving it in place keeps the 3-cycle cross-lane permutes off the critical path.
        a = _mm256_permute4x64_epi64::<0x93>(a);
        c = _mm256_permute4x64_epi64::<0x39>(c);
        d = _mm256_permute4x64_epi64::<0x4e>(d);
        g!(v(14, 8, 10, 12), v(15, 9, 11, 13));
        a = _mm256_permute4x64_epi64::<0x39>(a);
        c = _mm256_permute4x64_epi64::<0x93>(c);
        d = _mm256_permute4x64_epi64::<0x4e>(d);
    }
    let n0 = _mm256_xor_si256(h0, _mm256_xor_si256(a, c));
    let n1 = _mm256_xor_si256(h1, _mm256_xor_si256(b, d));
    // SAFETY: `h` is 64 writable bytes; storeu needs no alignment.
    unsafe {
        _mm256_storeu_si256(h.as_mut_ptr().cast(), n0);
        _mm256_storeu_si256(h.as_mut_ptr().add(4).cast(), n1);
    }
}

#[target_feature(enable = "avx2")]
fn compress_s_avx2(h: &mut [u32; 8], block: &[u8], t: u128, last: bool) {
    let mut m = [0u32; 16];
    for (x, c) in m.iter_mut().zip(block.chunks_exact(4)) {
        *x = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    let r16 = _mm_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    let r8 = _mm_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12);
    // SAFETY: `h` and IV_S are 8 u32; each load reads 4 of them (16 bytes) in bounds; loadu needs no alignment.
    let (h0, h1, iv0, iv1) = unsafe {
        (
            _mm_loadu_si128(h.as_ptr().cast()),
            _mm_loadu_si128(h.as_ptr().add(4).cast()),
            _mm_loadu_si128(IV_S.as_ptr().cast()),
            _mm_loadu_si128(IV_S.as_ptr().add(4).cast()),
        )
    };
    let mut a = h0;
    let mut b = h1;
    let mut c = iv0;
    let fin = if last { -1i32 } else { 0 };
    let mut d = _mm_xor_si128(iv1, _mm_set_epi32(0, fin, (t >> 32) as i32, t as i32));

    macro_rules! g {
        ($x:expr, $y:expr) => {{
            a = _mm_add_epi32(_mm_add_epi32(a, $x), b);
            d = _mm_shuffle_epi8(_mm_xor_si128(d, a), r16);
            c = _mm_add_epi32(c, d);
            let x = _mm_xor_si128(b, c);
            b = _mm_or_si128(_mm_srli_epi32::<12>(x), _mm_slli_epi32::<20>(x));
            a = _mm_add_epi32(_mm_add_epi32(a, $y), b);
            d = _mm_shuffle_epi8(_mm_xor_si128(d, a), r8);
            c = _mm_add_epi32(c, d);
            let x = _mm_xor_si128(b, c);
            b = _mm_or_si128(_mm_srli_epi32::<7>(x), _mm_slli_epi32::<25>(x));
        }};
    }
    for s in SIGMA.iter() {
        let v = |i: usize, j: usize, k: usize, l: usize| {
            _mm_set_epi32(m[s[l]] as i32, m[s[k]] as i32, m[s[j]] as i32, m[s[i]] as i32)
        };
        g!(v(0, 2, 4, 6), v(1, 3, 5, 7));
        // Diagonalize rows a, c, d and leave b, as for BLAKE2b above.
        a = _mm_shuffle_epi32::<0x93>(a);
        c = _mm_shuffle_epi32::<0x39>(c);
        d = _mm_shuffle_epi32::<0x4e>(d);
        g!(v(14, 8, 10, 12), v(15, 9, 11, 13));
        a = _mm_shuffle_epi32::<0x39>(a);
        c = _mm_shuffle_epi32::<0x93>(c);
        d = _mm_shuffle_epi32::<0x4e>(d);
    }
    let n0 = _mm_xor_si128(h0, _mm_xor_si128(a, c));
    let n1 = _mm_xor_si128(h1, _mm_xor_si128(b, d));
    // SAFETY: `h` is 32 writable bytes; storeu needs no alignment.
    unsafe {
        _mm_storeu_si128(h.as_mut_ptr().cast(), n0);
        _mm_storeu_si128(h.as_mut_ptr().add(4).cast(), n1);
    }
}

/// BLAKE2b compression, for [`Backend::Avx2`] and [`Backend::Avx512`].
#[inline]
pub(super) fn compress_b(backend: Checked<Backend>, h: &mut [u64; 8], block: &[u8], t: u128, last: bool) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU (and OS) support AVX2.
    unsafe { compress_b_avx2(h, block, t, last) }
}

/// BLAKE2s compression, for [`Backend::Avx2`].
#[inline]
pub(super) fn compress_s(backend: Checked<Backend>, h: &mut [u32; 8], block: &[u8], t: u128, last: bool) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU (and OS) support AVX2.
    unsafe { compress_s_avx2(h, block, t, last) }
}
