//! Argon2's compression `G` with AVX2: each BlaMka permutation `P` runs on four 256-bit vectors (one `GB`
//! column per 64-bit lane), diagonals by lane rotation, the 32x32-bit products by `vpmuludq`.
#![allow(unsafe_code)]

use super::{Backend, Block, QWORDS};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// `G(X, Y)` into `out` (XORed in with `xor_into`), temporaries in `scratch`, for [`Backend::Avx2`].
pub(super) fn compress(
    backend: Checked<Backend>,
    out: &mut Block,
    x: &Block,
    y: &Block,
    xor_into: bool,
    scratch: &mut [Block; 2],
) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU (and OS) support AVX2.
    unsafe { compress_avx2(out, x, y, xor_into, scratch) }
}

#[inline(always)]
fn fbla(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: AVX2 register arithmetic; only reached from `compress_avx2` (AVX2 enabled).
    unsafe {
        let p = _mm256_mul_epu32(a, b);
        _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(p, p))
    }
}

#[inline(always)]
fn gb(a: &mut __m256i, b: &mut __m256i, c: &mut __m256i, d: &mut __m256i) {
    // SAFETY: AVX2 register arithmetic; only reached from `compress_avx2` (AVX2 enabled).
    unsafe {
        let r24 = _mm256_setr_epi8(
            3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10, 3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10,
        );
        let r16 = _mm256_setr_epi8(
            2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9,
        );
        *a = fbla(*a, *b);
        *d = _mm256_shuffle_epi32(_mm256_xor_si256(*d, *a), 0b10_11_00_01);
        *c = fbla(*c, *d);
        *b = _mm256_shuffle_epi8(_mm256_xor_si256(*b, *c), r24);
        *a = fbla(*a, *b);
        *d = _mm256_shuffle_epi8(_mm256_xor_si256(*d, *a), r16);
        *c = fbla(*c, *d);
        let t = _mm256_xor_si256(*b, *c);
        *b = _mm256_xor_si256(_mm256_add_epi64(t, t), _mm256_srli_epi64(t, 63));
    }
}

/// `P` on the 16 words held as `a, b, c, d` (four words each, in the order of the permutation's indices).
#[inline(always)]
fn permute(a: &mut __m256i, b: &mut __m256i, c: &mut __m256i, d: &mut __m256i) {
    gb(a, b, c, d);
    // SAFETY: AVX2 lane permutes; only reached from `compress_avx2` (AVX2 enabled).
    unsafe {
        // Diagonalize: lane k then holds GB(k, 4 + (k+1)%4, 8 + (k+2)%4, 12 + (k+3)%4).
        *b = _mm256_permute4x64_epi64(*b, 0x39);
        *c = _mm256_permute4x64_epi64(*c, 0x4e);
        *d = _mm256_permute4x64_epi64(*d, 0x93);
    }
    gb(a, b, c, d);
    // SAFETY: as above.
    unsafe {
        *b = _mm256_permute4x64_epi64(*b, 0x93);
        *c = _mm256_permute4x64_epi64(*c, 0x4e);
        *d = _mm256_permute4x64_epi64(*d, 0x39);
    }
}

#[target_feature(enable = "avx2")]
fn compress_avx2(out: &mut Block, x: &Block, y: &Block, xor_into: bool, scratch: &mut [Block; 2]) {
    let [r, z] = scratch;
    let (rp, zp) = (r.as_mut_ptr(), z.as_mut_ptr());
    // SAFETY: every access below is at a word offset `o` with `o + 4 <= QWORDS` (or `o + 2` for the 128-bit
    // halves) into a `[u64; QWORDS]`, through unaligned loads/stores; AVX2 is enabled on this function.
    unsafe {
        let ld = |p: *const u64, o: usize| _mm256_loadu_si256(p.add(o).cast());
        let st = |p: *mut u64, o: usize, v: __m256i| _mm256_storeu_si256(p.add(o).cast(), v);
        for o in (0..QWORDS).step_by(4) {
            let v = _mm256_xor_si256(ld(x.as_ptr(), o), ld(y.as_ptr(), o));
            st(rp, o, v);
            st(zp, o, v);
        }
        // Rows: words 16k .. 16k + 16.
        for row in 0..8 {
            let o = row * 16;
            let (mut a, mut b, mut c, mut d) = (ld(zp, o), ld(zp, o + 4), ld(zp, o + 8), ld(zp, o + 12));
            permute(&mut a, &mut b, &mut c, &mut d);
            st(zp, o, a);
            st(zp, o + 4, b);
            st(zp, o + 8, c);
            st(zp, o + 12, d);
        }
        // Columns: the word pairs (2j, 2j + 1) of rows 0..8; vector k holds rows 2k and 2k + 1.
        let ld2 =
            |o: usize| _mm256_set_m128i(_mm_loadu_si128(zp.add(o + 16).cast()), _mm_loadu_si128(zp.add(o).cast()));
        let st2 = |o: usize, v: __m256i| {
            _mm_storeu_si128(zp.add(o).cast(), _mm256_castsi256_si128(v));
            _mm_storeu_si128(zp.add(o + 16).cast(), _mm256_extracti128_si256(v, 1));
        };
        for col in 0..8 {
            let o = col * 2;
            let (mut a, mut b, mut c, mut d) = (ld2(o), ld2(o + 32), ld2(o + 64), ld2(o + 96));
            permute(&mut a, &mut b, &mut c, &mut d);
            st2(o, a);
            st2(o + 32, b);
            st2(o + 64, c);
            st2(o + 96, d);
        }
        let op = out.as_mut_ptr();
        for o in (0..QWORDS).step_by(4) {
            let mut v = _mm256_xor_si256(ld(zp, o), ld(rp, o));
            if xor_into {
                v = _mm256_xor_si256(v, ld(op, o));
            }
            st(op, o, v);
        }
    }
}
