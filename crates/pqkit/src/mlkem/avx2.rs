//! AVX2 polynomial arithmetic: 16 coefficients per `ymm` (16-bit lanes). Every function computes exactly the
//! same 16-bit values as the portable code in `soft.rs` (same Montgomery and Barrett formulas, same order of
//! operations), only 16 lanes at a time.
//!
//! NTT layers with distance ≥ 16 pair whole registers. The last three layers (distances 8, 4, 2) work on two
//! registers at a time after lane shuffles (`vperm2i128`, 64-bit unpacks, 32-bit blends) that bring each
//! butterfly's two inputs into the same lane of two registers; the shuffles are undone before storing, so the
//! coefficient order in memory is that of FIPS 203.
#![allow(unsafe_code)]

use super::Backend;
use super::poly::{BARRETT_V, GAMMAS, INV_NTT_F, Poly, Q, QINV, R2, ZETAS};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// Twiddles of the three in-register layers, 16 lanes per pair of registers `t` (0..8).
struct Tables {
    fwd8: [[i16; 16]; 8],
    fwd4: [[i16; 16]; 8],
    fwd2: [[i16; 16]; 8],
    inv8: [[i16; 16]; 8],
    inv4: [[i16; 16]; 8],
    inv2: [[i16; 16]; 8],
    /// Base-multiplication moduli: lane 2i+1 of register v holds GAMMAS[8v + i] (even lanes unused).
    gamma: [[i16; 16]; 16],
}

const TABLES: Tables = {
    let mut t = Tables {
        fwd8: [[0; 16]; 8],
        fwd4: [[0; 16]; 8],
        fwd2: [[0; 16]; 8],
        inv8: [[0; 16]; 8],
        inv4: [[0; 16]; 8],
        inv2: [[0; 16]; 8],
        gamma: [[0; 16]; 16],
    };
    let mut p = 0;
    while p < 8 {
        let mut l = 0;
        while l < 16 {
            // Distance 8: lanes 0-7 are block 2p, lanes 8-15 block 2p+1.
            t.fwd8[p][l] = ZETAS[16 + 2 * p + l / 8];
            t.inv8[p][l] = ZETAS[31 - (2 * p + l / 8)];
            // Distance 4: lanes 4i..4i+3 are block 4p+i.
            t.fwd4[p][l] = ZETAS[32 + 4 * p + l / 4];
            t.inv4[p][l] = ZETAS[63 - (4 * p + l / 4)];
            // Distance 2: lanes 2i, 2i+1 are block 8p+i.
            t.fwd2[p][l] = ZETAS[64 + 8 * p + l / 2];
            t.inv2[p][l] = ZETAS[127 - (8 * p + l / 2)];
            l += 1;
        }
        p += 1;
    }
    let mut v = 0;
    while v < 16 {
        let mut i = 0;
        while i < 8 {
            t.gamma[v][2 * i + 1] = GAMMAS[8 * v + i];
            i += 1;
        }
        v += 1;
    }
    t
};

#[inline]
#[target_feature(enable = "avx2")]
fn load(p: &[i16; 16]) -> __m256i {
    // SAFETY: `p` is 32 readable bytes; loadu has no alignment requirement.
    unsafe { _mm256_loadu_si256(p.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn load_poly(p: &Poly) -> [__m256i; 16] {
    let mut r = [_mm256_setzero_si256(); 16];
    for (i, x) in r.iter_mut().enumerate() {
        // SAFETY: coefficients 16i..16i+16 are in bounds (i < 16); loadu has no alignment requirement.
        *x = unsafe { _mm256_loadu_si256(p.c.as_ptr().add(16 * i).cast()) };
    }
    r
}

#[inline]
#[target_feature(enable = "avx2")]
fn store_poly(p: &mut Poly, r: &[__m256i; 16]) {
    for (i, x) in r.iter().enumerate() {
        // SAFETY: coefficients 16i..16i+16 are in bounds (i < 16); storeu has no alignment requirement.
        unsafe { _mm256_storeu_si256(p.c.as_mut_ptr().add(16 * i).cast(), *x) };
    }
}

/// Montgomery multiplication by `z`, given `zq = z · q^-1 mod 2^16`: `a · z · 2^-16`, lane-wise.
#[inline]
#[target_feature(enable = "avx2")]
fn fqmul(a: __m256i, z: __m256i, zq: __m256i) -> __m256i {
    let hi = _mm256_mulhi_epi16(a, z);
    let t = _mm256_mullo_epi16(a, zq);
    _mm256_sub_epi16(hi, _mm256_mulhi_epi16(t, _mm256_set1_epi16(Q)))
}

/// `zq` for `fqmul`.
#[inline]
#[target_feature(enable = "avx2")]
fn zq(z: __m256i) -> __m256i {
    _mm256_mullo_epi16(z, _mm256_set1_epi16(QINV))
}

/// Barrett reduction, lane-wise; the same value as `poly::barrett`.
#[inline]
#[target_feature(enable = "avx2")]
fn barrett(a: __m256i) -> __m256i {
    // ((a·v >> 16) + 2^9) >> 10 == (a·v + 2^25) >> 26; vpmulhrsw by 32 computes the rounding shift.
    let t = _mm256_mulhi_epi16(a, _mm256_set1_epi16(BARRETT_V as i16));
    let t = _mm256_mulhrs_epi16(t, _mm256_set1_epi16(32));
    _mm256_sub_epi16(a, _mm256_mullo_epi16(t, _mm256_set1_epi16(Q)))
}

/// Cooley-Tukey butterfly: (x, y) -> (x + ζy, x - ζy).
#[inline]
#[target_feature(enable = "avx2")]
fn ct(x: &mut __m256i, y: &mut __m256i, z: __m256i, zqv: __m256i) {
    let t = fqmul(*y, z, zqv);
    *y = _mm256_sub_epi16(*x, t);
    *x = _mm256_add_epi16(*x, t);
}

/// Gentleman-Sande butterfly: (x, y) -> (barrett(x + y), ζ(y - x)).
#[inline]
#[target_feature(enable = "avx2")]
fn gs(x: &mut __m256i, y: &mut __m256i, z: __m256i, zqv: __m256i) {
    let t = *x;
    *x = barrett(_mm256_add_epi16(t, *y));
    *y = fqmul(_mm256_sub_epi16(*y, t), z, zqv);
}

/// (ra, rb) -> ([ra.lo, rb.lo], [ra.hi, rb.hi]); its own inverse.
#[inline]
#[target_feature(enable = "avx2")]
fn shuf128(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    (_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31))
}

/// 64-bit interleave within 128-bit halves; its own inverse.
#[inline]
#[target_feature(enable = "avx2")]
fn shuf64(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    (_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b))
}

/// 32-bit interleave within 64-bit elements; its own inverse.
#[inline]
#[target_feature(enable = "avx2")]
fn shuf32(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    (_mm256_blend_epi32(a, _mm256_slli_epi64(b, 32), 0xAA), _mm256_blend_epi32(_mm256_srli_epi64(a, 32), b, 0xAA))
}

#[target_feature(enable = "avx2")]
fn ntt_avx2(p: &mut Poly) {
    let mut r = load_poly(p);
    // Distances 128, 64, 32, 16: whole registers, one twiddle per block.
    let mut k = 1;
    let mut len = 8; // in registers
    while len >= 1 {
        let mut start = 0;
        while start < 16 {
            let z = _mm256_set1_epi16(ZETAS[k]);
            let zqv = zq(z);
            k += 1;
            for j in start..start + len {
                let (lo, hi) = r.split_at_mut(j + len);
                ct(&mut lo[j], &mut hi[0], z, zqv);
            }
            start += 2 * len;
        }
        len >>= 1;
    }
    // Distances 8, 4, 2 on register pairs.
    for t in 0..8 {
        let (mut x, mut y) = shuf128(r[2 * t], r[2 * t + 1]);
        let z = load(&TABLES.fwd8[t]);
        ct(&mut x, &mut y, z, zq(z));
        (x, y) = shuf64(x, y);
        let z = load(&TABLES.fwd4[t]);
        ct(&mut x, &mut y, z, zq(z));
        (x, y) = shuf32(x, y);
        let z = load(&TABLES.fwd2[t]);
        ct(&mut x, &mut y, z, zq(z));
        (x, y) = shuf32(x, y);
        (x, y) = shuf64(x, y);
        (x, y) = shuf128(x, y);
        r[2 * t] = barrett(x);
        r[2 * t + 1] = barrett(y);
    }
    store_poly(p, &r);
}

#[target_feature(enable = "avx2")]
fn invntt_avx2(p: &mut Poly) {
    let mut r = load_poly(p);
    for t in 0..8 {
        let (mut x, mut y) = shuf128(r[2 * t], r[2 * t + 1]);
        (x, y) = shuf64(x, y);
        (x, y) = shuf32(x, y);
        let z = load(&TABLES.inv2[t]);
        gs(&mut x, &mut y, z, zq(z));
        (x, y) = shuf32(x, y);
        let z = load(&TABLES.inv4[t]);
        gs(&mut x, &mut y, z, zq(z));
        (x, y) = shuf64(x, y);
        let z = load(&TABLES.inv8[t]);
        gs(&mut x, &mut y, z, zq(z));
        (r[2 * t], r[2 * t + 1]) = shuf128(x, y);
    }
    let mut k = 15;
    let mut len = 1;
    while len <= 8 {
        let mut start = 0;
        while start < 16 {
            let z = _mm256_set1_epi16(ZETAS[k]);
            let zqv = zq(z);
            k -= 1;
            for j in start..start + len {
                let (lo, hi) = r.split_at_mut(j + len);
                gs(&mut lo[j], &mut hi[0], z, zqv);
            }
            start += 2 * len;
        }
        len <<= 1;
    }
    let f = _mm256_set1_epi16(INV_NTT_F);
    let fq = zq(f);
    for x in r.iter_mut() {
        *x = fqmul(*x, f, fq);
    }
    store_poly(p, &r);
}

#[target_feature(enable = "avx2")]
fn basemul_acc_avx2(out: &mut Poly, a: &[Poly], b: &[Poly]) {
    let q = _mm256_set1_epi16(Q);
    let qinv = _mm256_set1_epi16(QINV);
    for v in 0..16 {
        let gamma = load(&TABLES.gamma[v]);
        let mut c0 = _mm256_setzero_si256();
        let mut c1 = _mm256_setzero_si256();
        for (x, y) in a.iter().zip(b) {
            // SAFETY: coefficients 16v..16v+16 are in bounds (v < 16); loadu has no alignment requirement.
            let (av, bv) = unsafe {
                (
                    _mm256_loadu_si256(x.c.as_ptr().add(16 * v).cast()),
                    _mm256_loadu_si256(y.c.as_ptr().add(16 * v).cast()),
                )
            };
            // Odd lanes: fqmul(a1, b1).
            let p = fqmul(av, bv, _mm256_mullo_epi16(bv, qinv));
            // c0 = a0·b0 + fqmul(a1, b1)·γ; c1 = a0·b1 + a1·b0 (32-bit sums of 16-bit products).
            let u = _mm256_blend_epi16(av, p, 0xAA);
            let w = _mm256_blend_epi16(bv, gamma, 0xAA);
            c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(u, w));
            let bswap = _mm256_or_si256(_mm256_slli_epi32(bv, 16), _mm256_srli_epi32(bv, 16));
            c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(av, bswap));
        }
        // Montgomery reduction of the 32-bit sums: (c >> 16) - hi16(t·q) with t = lo16(c)·q^-1.
        let r0 = _mm256_sub_epi16(_mm256_srai_epi32(c0, 16), _mm256_mulhi_epi16(_mm256_mullo_epi16(c0, qinv), q));
        let r1 = _mm256_sub_epi16(_mm256_srai_epi32(c1, 16), _mm256_mulhi_epi16(_mm256_mullo_epi16(c1, qinv), q));
        let res = _mm256_blend_epi16(r0, _mm256_slli_epi32(r1, 16), 0xAA);
        // SAFETY: coefficients 16v..16v+16 are in bounds; storeu has no alignment requirement.
        unsafe { _mm256_storeu_si256(out.c.as_mut_ptr().add(16 * v).cast(), res) };
    }
}

#[target_feature(enable = "avx2")]
fn to_mont_avx2(p: &mut Poly) {
    let mut r = load_poly(p);
    let z = _mm256_set1_epi16(R2);
    let zqv = zq(z);
    for x in r.iter_mut() {
        *x = fqmul(*x, z, zqv);
    }
    store_poly(p, &r);
}

// The entry points: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2 (the AVX-512 backend's
// features include AVX2's), so the CPU and OS support AVX2.

pub(crate) fn ntt(backend: Checked<Backend>, p: &mut Poly) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { ntt_avx2(p) }
}

pub(crate) fn invntt(backend: Checked<Backend>, p: &mut Poly) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { invntt_avx2(p) }
}

pub(crate) fn basemul_acc(backend: Checked<Backend>, out: &mut Poly, a: &[Poly], b: &[Poly]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { basemul_acc_avx2(out, a, b) }
}

pub(crate) fn to_mont(backend: Checked<Backend>, p: &mut Poly) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { to_mont_avx2(p) }
}

// ---------------------------------------------------------------------------------------------------------
// Rejection sampling (SampleNTT) on public XOF output.

/// For each 8-bit acceptance mask: the byte indices that move the accepted 16-bit lanes of a 128-bit half to
/// its front, in order (`pshufb` control; the unused tail is don't-care).
const REJ_SHUF: [[u8; 16]; 256] = {
    let mut t = [[0u8; 16]; 256];
    let mut m = 0;
    while m < 256 {
        let mut k = 0;
        let mut i = 0;
        while i < 8 {
            if (m >> i) & 1 == 1 {
                t[m][2 * k] = 2 * i as u8;
                t[m][2 * k + 1] = 2 * i as u8 + 1;
                k += 1;
            }
            i += 1;
        }
        m += 1;
    }
    t
};

/// Byte gather of one 24-byte chunk loaded as [bytes 0..16 | bytes 8..24]: 16-bit word 2k of each half
/// takes bytes 3k, 3k + 1 of its 12, word 2k + 1 bytes 3k + 1, 3k + 2 (the high half's 12 start at its byte 4).
const REJ_GATHER: [u8; 32] = {
    let mut t = [0u8; 32];
    let mut h = 0;
    while h < 2 {
        let mut k = 0;
        while k < 4 {
            let b = (4 * h + 3 * k) as u8;
            t[16 * h + 4 * k] = b;
            t[16 * h + 4 * k + 1] = b + 1;
            t[16 * h + 4 * k + 2] = b + 1;
            t[16 * h + 4 * k + 3] = b + 2;
            k += 1;
        }
        h += 1;
    }
    t
};

/// 24 bytes at a time: 16 candidates (two 8-lane halves), compared with q, each half's accepted lanes packed
/// to its front with a `pshufb` from [`REJ_SHUF`] and stored at the output position. The vector loop runs
/// while 16 output slots are free; the portable loop finishes the rest, so the result equals
/// `poly::rej_uniform`'s. Only public data (the matrix seed's XOF output) goes through here, so the
/// data-dependent counts and table indices leak nothing secret.
#[target_feature(enable = "avx2")]
fn rej_uniform_avx2(p: &mut Poly, n: &mut usize, buf: &[u8]) {
    // SAFETY: REJ_GATHER is 32 readable bytes.
    let gather = unsafe { _mm256_loadu_si256(REJ_GATHER.as_ptr().cast()) };
    let mask12 = _mm256_set1_epi16(0x0fff);
    let q = _mm256_set1_epi16(Q);
    let mut j = 0;
    while *n + 16 <= 256 && j + 24 <= buf.len() {
        // SAFETY: bytes j..j+16 and j+8..j+24 lie in `buf` (j + 24 ≤ len).
        let (lo, hi) =
            unsafe { (_mm_loadu_si128(buf.as_ptr().add(j).cast()), _mm_loadu_si128(buf.as_ptr().add(j + 8).cast())) };
        let v = _mm256_shuffle_epi8(_mm256_set_m128i(hi, lo), gather);
        // Even words: the low 12 bits; odd words: the high 12 bits.
        let v = _mm256_blend_epi16(_mm256_and_si256(v, mask12), _mm256_srli_epi16(v, 4), 0xAA);
        // Candidates are below 2^12, so the signed compare is the unsigned one.
        let ok = _mm256_cmpgt_epi16(q, v);
        let bits = _mm256_movemask_epi8(_mm256_packs_epi16(ok, ok)) as u32;
        let (m0, m1) = ((bits & 0xff) as usize, ((bits >> 16) & 0xff) as usize);
        // SAFETY: REJ_SHUF rows are 16 readable bytes; m0, m1 < 256.
        let (s0, s1) =
            unsafe { (_mm_loadu_si128(REJ_SHUF[m0].as_ptr().cast()), _mm_loadu_si128(REJ_SHUF[m1].as_ptr().cast())) };
        let a = _mm_shuffle_epi8(_mm256_castsi256_si128(v), s0);
        let b = _mm_shuffle_epi8(_mm256_extracti128_si256(v, 1), s1);
        // SAFETY: *n + 16 ≤ 256, so the 8 coefficients at *n and the 8 at *n + popcount(m0) ≤ *n + 8 are in
        // bounds; lanes past the accepted ones are overwritten by later stores or ignored.
        unsafe {
            _mm_storeu_si128(p.c.as_mut_ptr().add(*n).cast(), a);
            *n += m0.count_ones() as usize;
            _mm_storeu_si128(p.c.as_mut_ptr().add(*n).cast(), b);
            *n += m1.count_ones() as usize;
        }
        j += 24;
    }
    super::poly::rej_uniform(p, n, &buf[j..]);
}

/// Appends the accepted SampleNTT candidates of `buf` to `p.c[*n..]`; the same result as
/// `poly::rej_uniform`.
pub(crate) fn rej_uniform(backend: Checked<Backend>, p: &mut Poly, n: &mut usize, buf: &[u8]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { rej_uniform_avx2(p, n, buf) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 sampler against the portable one: random buffers of every length 0..=200 (whole and partial
    /// chunks, the tail), every starting fill near the end, and candidates at the bound (3328, 3329, 4095).
    #[test]
    fn rej_uniform_matches_portable() {
        let Some(b) = Checked::for_test(Backend::Avx2) else { return };
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in 0..=200usize {
            for start in [0usize, 1, 100, 230, 239, 240, 241, 250, 255, 256] {
                let mut buf = [0u8; 200];
                for (i, v) in buf.iter_mut().enumerate() {
                    *v = match next() % 8 {
                        // Edge candidates: 0xd00 = 3328 | 0xd01 = 3329 | 0xfff in both positions.
                        0 => [0x00, 0x0d, 0x01, 0xff, 0xd0, 0xd1, 0xf0][i % 7],
                        _ => next() as u8,
                    };
                }
                let mut want = Poly { c: [0; 256] };
                let mut got = Poly { c: [0; 256] };
                for (i, c) in want.c.iter_mut().enumerate().take(start) {
                    *c = i as i16;
                }
                got.c = want.c;
                let (mut nw, mut ng) = (start, start);
                super::super::poly::rej_uniform(&mut want, &mut nw, &buf[..len]);
                rej_uniform(b, &mut got, &mut ng, &buf[..len]);
                assert_eq!(nw, ng, "len {len}, start {start}");
                assert_eq!(want.c[..nw], got.c[..ng], "len {len}, start {start}");
            }
        }
    }
}
