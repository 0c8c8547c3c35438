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

/// The byte shuffles of [`rej_uniform`]'s compaction: entry `m` moves the 16-bit lanes whose bit is set in `m` (of
/// eight) to the front, in order; the rest of the entry is zero (`vpshufb` writes zero for index 0x80).
const REJ_IDX: [[u8; 16]; 256] = {
    let mut t = [[0x80u8; 16]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut k, mut i) = (0, 0);
        while i < 8 {
            if m & (1 << i) != 0 {
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

/// The number of bits set in each byte value (POPCNT is not among the backend's checked features).
const REJ_CNT: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut m = 0;
    while m < 256 {
        t[m] = (m as u32).count_ones() as u8;
        m += 1;
    }
    t
};

/// Within each 128-bit half: word `i` of the eight takes input bytes `3 (i / 2) + (i & 1)` and the next one, the
/// high half reading 12 bytes further on (its input starts 4 bytes into the half, see [`rej_uniform_avx2`]).
const REJ_GATHER: [u8; 32] = {
    let mut t = [0u8; 32];
    let mut i = 0;
    while i < 8 {
        let b = (3 * (i / 2) + (i & 1)) as u8;
        t[2 * i] = b;
        t[2 * i + 1] = b + 1;
        t[16 + 2 * i] = b + 4;
        t[16 + 2 * i + 1] = b + 5;
        i += 1;
    }
    t
};

/// Appends the accepted SampleNTT candidates of `buf` to `p.c[*n..]` (FIPS 203 Algorithm 7, the same result as
/// `poly::rej_uniform`): 24 bytes, 16 candidates, per step while a whole step fits, then the portable code.
///
/// A step loads 32 bytes, spreads bytes 0..12 into the low half and 12..24 into the high one, gathers each
/// candidate's two bytes into a 16-bit lane, keeps the low 12 bits of even lanes and the high 12 of odd ones,
/// compares with q, and compacts each half's accepted lanes to the front with a table shuffle, stored at `*n`.
/// The data is public XOF output (`ρ` is declassified), so its table index and store position may depend on it.
#[target_feature(enable = "avx2")]
fn rej_uniform_avx2(p: &mut Poly, n: &mut usize, buf: &[u8]) {
    // SAFETY: REJ_GATHER is 32 readable bytes.
    let gather = unsafe { _mm256_loadu_si256(REJ_GATHER.as_ptr().cast()) };
    let mask12 = _mm256_set1_epi16(0x0fff);
    let q = _mm256_set1_epi16(Q);
    let mut j = 0;
    // Each step writes 16 bytes at `*n` and at `*n` plus the first half's count: at most 16 lanes from `*n`.
    while *n + 16 <= 256 && j + 32 <= buf.len() {
        // SAFETY: bytes j..j + 32 are in bounds (checked above).
        let raw = unsafe { _mm256_loadu_si256(buf.as_ptr().add(j).cast()) };
        // 64-bit quarters 0, 1 | 1, 2: the high half starts at byte 8, so its candidates start 4 bytes in.
        let v = _mm256_permute4x64_epi64::<0x94>(raw);
        let v = _mm256_shuffle_epi8(v, gather);
        let even = _mm256_and_si256(v, mask12);
        let odd = _mm256_srli_epi16::<4>(v);
        let d = _mm256_blend_epi16::<0xaa>(even, odd);
        let good = _mm256_cmpgt_epi16(q, d);
        let bits = _mm256_movemask_epi8(_mm256_packs_epi16(good, good)) as u32;
        let (m0, m1) = ((bits & 0xff) as usize, ((bits >> 16) & 0xff) as usize);
        // SAFETY: both table rows are 16 readable bytes; the two 16-byte stores land in p.c[*n..*n + 16] (the loop
        // condition), lanes past each half's count being overwritten by the next store or left beyond `*n`.
        unsafe {
            let lo = _mm_shuffle_epi8(_mm256_castsi256_si128(d), _mm_loadu_si128(REJ_IDX[m0].as_ptr().cast()));
            _mm_storeu_si128(p.c.as_mut_ptr().add(*n).cast(), lo);
            *n += usize::from(REJ_CNT[m0]);
            let hi = _mm_shuffle_epi8(_mm256_extracti128_si256::<1>(d), _mm_loadu_si128(REJ_IDX[m1].as_ptr().cast()));
            _mm_storeu_si128(p.c.as_mut_ptr().add(*n).cast(), hi);
            *n += usize::from(REJ_CNT[m1]);
        }
        j += 24;
    }
    super::poly::rej_uniform(p, n, &buf[j..]);
}

/// See [`rej_uniform_avx2`].
pub(crate) fn rej_uniform(backend: Checked<Backend>, p: &mut Poly, n: &mut usize, buf: &[u8]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { rej_uniform_avx2(p, n, buf) }
}
