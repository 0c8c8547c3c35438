//! AVX2 arithmetic backend: NTT, inverse NTT and pointwise Montgomery products on eight 32-bit lanes.
//!
//! Each Montgomery product uses `vpmuldq` on the even and odd lanes separately, with the second factor
//! pre-multiplied by q^-1 mod 2^32 so the reduction needs one multiplication less. Every operation computes
//! exactly the same integers as the portable code (same butterflies, same reductions, including the lazy
//! schedule of the inverse NTT and `pointwise_acc`'s exact 64-bit sums reduced once, both described in
//! `soft.rs`), so results are bit-identical. The last three NTT layers work within registers: two vectors are
//! shuffled so that the butterfly partners sit in the same lanes of two registers, and shuffled back afterwards.
#![allow(unsafe_code)]

use super::poly::{INV_NTT_F, INV_NTT_ZF, Poly, QINV, ZETAS, decompose_consts};
use super::{Backend, N, Q};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// Lane layout of the zetas for the three in-register layers of the forward NTT, per 16 coefficients
/// (a pair of vectors A, B at coefficient offset 16p): len 4, len 2, len 1 (8 lanes each).
const fn fwd_table() -> [[[i32; 8]; 3]; 16] {
    let mut t = [[[0i32; 8]; 3]; 16];
    let mut p = 0;
    while p < 16 {
        let m = 2 * p; // block index of A in units of 8 coefficients
        let mut l = 0;
        while l < 8 {
            // len 4: lanes 0..4 from A (k = 32 + m), lanes 4..8 from B (k = 32 + m + 1).
            t[p][0][l] = ZETAS[32 + m + l / 4];
            // len 2: [a0-3, a0-3, a4-7, a4-7, b0-3, b0-3, b4-7, b4-7] -> k = 64 + 2m + l/2.
            t[p][1][l] = ZETAS[64 + 2 * m + l / 2];
            // len 1: lane l pairs coefficients (2l, 2l+1) of A||B -> k = 128 + 4m + l.
            t[p][2][l] = ZETAS[128 + 4 * m + l];
            l += 1;
        }
        p += 1;
    }
    t
}

/// The same for the inverse NTT: negated zetas, with the inverse transform's decreasing index.
const fn inv_table() -> [[[i32; 8]; 3]; 16] {
    let mut t = [[[0i32; 8]; 3]; 16];
    let mut p = 0;
    while p < 16 {
        let m = 2 * p;
        let mut l = 0;
        while l < 8 {
            // len 1: block b = 4m + l (pairs), k = 255 - b.
            t[p][2][l] = -ZETAS[255 - (4 * m + l)];
            // len 2: block b = 2m + l/2, k = 127 - b.
            t[p][1][l] = -ZETAS[127 - (2 * m + l / 2)];
            // len 4: block b = m + l/4, k = 63 - b.
            t[p][0][l] = -ZETAS[63 - (m + l / 4)];
            l += 1;
        }
        p += 1;
    }
    t
}

const fn times_qinv(t: [[[i32; 8]; 3]; 16]) -> [[[i32; 8]; 3]; 16] {
    let mut o = t;
    let mut p = 0;
    while p < 16 {
        let mut j = 0;
        while j < 3 {
            let mut l = 0;
            while l < 8 {
                o[p][j][l] = t[p][j][l].wrapping_mul(QINV);
                l += 1;
            }
            j += 1;
        }
        p += 1;
    }
    o
}

static FWD: [[[i32; 8]; 3]; 16] = fwd_table();
static FWD_QINV: [[[i32; 8]; 3]; 16] = times_qinv(fwd_table());
static INV: [[[i32; 8]; 3]; 16] = inv_table();
static INV_QINV: [[[i32; 8]; 3]; 16] = times_qinv(inv_table());

#[inline(always)]
fn splat(x: i32) -> __m256i {
    // SAFETY: AVX is enabled in every caller (all are `target_feature(enable = "avx2")` functions, inlined).
    unsafe { _mm256_set1_epi32(x) }
}

/// Montgomery product of each lane: a · b · 2^-32 mod q in (-q, q), where `bq` = b · q^-1 mod 2^32.
#[inline(always)]
unsafe fn mont_mul(a: __m256i, b: __m256i, bq: __m256i) -> __m256i {
    // SAFETY: only called from `avx2` target-feature functions.
    unsafe {
        let q = _mm256_set1_epi32(Q);
        // Even lanes.
        let pe = _mm256_mul_epi32(a, b);
        let te = _mm256_mul_epi32(a, bq);
        let tqe = _mm256_mul_epi32(te, q);
        // Odd lanes, moved down.
        let ao = _mm256_srli_epi64(a, 32);
        let bo = _mm256_srli_epi64(b, 32);
        let bqo = _mm256_srli_epi64(bq, 32);
        let po = _mm256_mul_epi32(ao, bo);
        let to = _mm256_mul_epi32(ao, bqo);
        let tqo = _mm256_mul_epi32(to, q);
        // The low halves of p and t·q agree, so the high halves subtract without borrow.
        let re = _mm256_sub_epi32(pe, tqe);
        let ro = _mm256_sub_epi32(po, tqo);
        let re = _mm256_srli_epi64(re, 32);
        _mm256_blend_epi32(re, ro, 0xAA)
    }
}

/// reduce32 on each lane: r ≡ a (mod q), |r| ≤ 6283009.
#[inline(always)]
unsafe fn reduce32(a: __m256i) -> __m256i {
    // SAFETY: only called from `avx2` target-feature functions.
    unsafe {
        let t = _mm256_srai_epi32(_mm256_add_epi32(a, _mm256_set1_epi32(1 << 22)), 23);
        _mm256_sub_epi32(a, _mm256_mullo_epi32(t, _mm256_set1_epi32(Q)))
    }
}

#[inline(always)]
unsafe fn load(p: &Poly, i: usize) -> __m256i {
    debug_assert!(i < N / 8);
    // SAFETY: `i < 32`, so the 32 bytes at 8i lie inside the 1024-byte, 64-byte aligned array.
    unsafe { _mm256_load_si256(p.0.as_ptr().add(8 * i).cast()) }
}

#[inline(always)]
unsafe fn store(p: &mut Poly, i: usize, v: __m256i) {
    debug_assert!(i < N / 8);
    // SAFETY: as in `load`.
    unsafe { _mm256_store_si256(p.0.as_mut_ptr().add(8 * i).cast(), v) }
}

#[inline(always)]
unsafe fn load8(t: &[i32; 8]) -> __m256i {
    // SAFETY: reads exactly the 8 values of `t`.
    unsafe { _mm256_loadu_si256(t.as_ptr().cast()) }
}

/// Forward butterfly: (a, b) -> (a + ζb, a - ζb) with ζ in Montgomery form.
#[inline(always)]
unsafe fn fwd_bf(a: &mut __m256i, b: &mut __m256i, z: i32) {
    // SAFETY: only called from `avx2` target-feature functions.
    unsafe {
        let t = mont_mul(*b, splat(z), splat(z.wrapping_mul(QINV)));
        *b = _mm256_sub_epi32(*a, t);
        *a = _mm256_add_epi32(*a, t);
    }
}

/// Inverse butterfly without reduction of the sum (the lazy schedule of `soft::invntt`):
/// (a, b) -> (a + b, (a - b)·z) with z = -ζ.
#[inline(always)]
unsafe fn inv_bf(a: &mut __m256i, b: &mut __m256i, z: i32) {
    // SAFETY: only called from `avx2` target-feature functions.
    unsafe {
        let s = _mm256_add_epi32(*a, *b);
        *b = mont_mul(_mm256_sub_epi32(*a, *b), splat(z), splat(z.wrapping_mul(QINV)));
        *a = s;
    }
}

/// Layers len = 4, 2, 1 on the vector pair (a, b) with pair index `pair`, then back to natural order.
#[inline(always)]
unsafe fn fwd_small(a: __m256i, b: __m256i, pair: usize) -> (__m256i, __m256i) {
    // SAFETY: only called from `avx2` target-feature functions.
    unsafe {
        // len 4: X = [a0-3 b0-3], Y = [a4-7 b4-7].
        let x = _mm256_permute2x128_si256(a, b, 0x20);
        let y = _mm256_permute2x128_si256(a, b, 0x31);
        let t = mont_mul(y, load8(&FWD[pair][0]), load8(&FWD_QINV[pair][0]));
        let (x, y) = (_mm256_add_epi32(x, t), _mm256_sub_epi32(x, t));
        // len 2: X = [a0 a1 a4 a5 | b0 b1 b4 b5], Y = [a2 a3 a6 a7 | b2 b3 b6 b7].
        let x2 = _mm256_unpacklo_epi64(x, y);
        let y2 = _mm256_unpackhi_epi64(x, y);
        let t = mont_mul(y2, load8(&FWD[pair][1]), load8(&FWD_QINV[pair][1]));
        let (x, y) = (_mm256_add_epi32(x2, t), _mm256_sub_epi32(x2, t));
        // len 1: X = [a0 a2 a4 a6 | b0 b2 b4 b6], Y = [a1 a3 a5 a7 | b1 b3 b5 b7].
        let x3 = _mm256_blend_epi32(x, _mm256_slli_epi64(y, 32), 0xAA);
        let y3 = _mm256_blend_epi32(_mm256_srli_epi64(x, 32), y, 0xAA);
        let t = mont_mul(y3, load8(&FWD[pair][2]), load8(&FWD_QINV[pair][2]));
        let (x, y) = (_mm256_add_epi32(x3, t), _mm256_sub_epi32(x3, t));
        // Back to natural order, reduced.
        let lo = _mm256_unpacklo_epi32(x, y);
        let hi = _mm256_unpackhi_epi32(x, y);
        (reduce32(_mm256_permute2x128_si256(lo, hi, 0x20)), reduce32(_mm256_permute2x128_si256(lo, hi, 0x31)))
    }
}

/// Inverse layers len = 1, 2, 4 on the vector pair (a, b) (the exact inverse of the forward shuffles).
#[inline(always)]
unsafe fn inv_small(a: __m256i, b: __m256i, pair: usize) -> (__m256i, __m256i) {
    // SAFETY: only called from `avx2` target-feature functions.
    unsafe {
        let lo = _mm256_permute2x128_si256(a, b, 0x20); // [a0-3 b0-3]
        let hi = _mm256_permute2x128_si256(a, b, 0x31); // [a4-7 b4-7]
        // Even/odd split within each 128-bit lane: X = [a0 a2 a4 a6 ..], Y = [a1 a3 a5 a7 ..].
        let sx = _mm256_shuffle_epi32(lo, 0b11_01_10_00); // [a0 a2 a1 a3]
        let sy = _mm256_shuffle_epi32(hi, 0b11_01_10_00); // [a4 a6 a5 a7]
        let x = _mm256_unpacklo_epi64(sx, sy); // [a0 a2 a4 a6]
        let y = _mm256_unpackhi_epi64(sx, sy); // [a1 a3 a5 a7]
        // len 1 (sums not reduced, as in `soft::invntt`).
        let nx = _mm256_add_epi32(x, y);
        let ny = mont_mul(_mm256_sub_epi32(x, y), load8(&INV[pair][2]), load8(&INV_QINV[pair][2]));
        // To the len-2 layout: X = [a0 a1 a4 a5], Y = [a2 a3 a6 a7].
        let x = _mm256_unpacklo_epi32(nx, ny); // [a0 a1 a2 a3]
        let y = _mm256_unpackhi_epi32(nx, ny); // [a4 a5 a6 a7]
        let x2 = _mm256_unpacklo_epi64(x, y); // [a0 a1 a4 a5]
        let y2 = _mm256_unpackhi_epi64(x, y); // [a2 a3 a6 a7]
        let nx = _mm256_add_epi32(x2, y2);
        let ny = mont_mul(_mm256_sub_epi32(x2, y2), load8(&INV[pair][1]), load8(&INV_QINV[pair][1]));
        // To the len-4 layout: X = [a0-3 | b0-3], Y = [a4-7 | b4-7].
        let x = _mm256_unpacklo_epi64(nx, ny); // [a0 a1 a2 a3]
        let y = _mm256_unpackhi_epi64(nx, ny); // [a4 a5 a6 a7]
        // len 4: the one layer whose sums are reduced.
        let nx = reduce32(_mm256_add_epi32(x, y));
        let ny = mont_mul(_mm256_sub_epi32(x, y), load8(&INV[pair][0]), load8(&INV_QINV[pair][0]));
        (_mm256_permute2x128_si256(nx, ny, 0x20), _mm256_permute2x128_si256(nx, ny, 0x31))
    }
}

/// One forward layer of vector distance `$d` on half `$g` of the polynomial held in `$r`, written out
/// (straight-line code); `$i` lists the lower index of each butterfly.
macro_rules! fwd_layer {
    ($r:ident, $g:expr, $d:expr, [$($i:expr),*]) => {
        $({
            let j = 16 * $g + $i;
            let (mut a, mut b) = ($r[$i], $r[$i + $d]);
            fwd_bf(&mut a, &mut b, ZETAS[16 / $d + j / (2 * $d)]);
            $r[$i] = a;
            $r[$i + $d] = b;
        })*
    };
}

/// One inverse layer of vector distance `$d` on half `$g` (see `fwd_layer!`).
macro_rules! inv_layer {
    ($r:ident, $g:expr, $d:expr, [$($i:expr),*]) => {
        $({
            let j = 16 * $g + $i;
            let (mut a, mut b) = ($r[$i], $r[$i + $d]);
            inv_bf(&mut a, &mut b, -ZETAS[32 / $d - 1 - j / (2 * $d)]);
            $r[$i] = a;
            $r[$i + $d] = b;
        })*
    };
}

/// Forward layers of distances 8, 4, 2, 1 and the in-register layers on half `G`.
#[inline(always)]
unsafe fn ntt_half<const G: usize>(p: &mut Poly) {
    // SAFETY: only called from `avx2` target-feature functions; indices are below 32.
    unsafe {
        let mut r: [__m256i; 16] = core::array::from_fn(|i| load(p, 16 * G + i));
        fwd_layer!(r, G, 8, [0, 1, 2, 3, 4, 5, 6, 7]);
        fwd_layer!(r, G, 4, [0, 1, 2, 3, 8, 9, 10, 11]);
        fwd_layer!(r, G, 2, [0, 1, 4, 5, 8, 9, 12, 13]);
        fwd_layer!(r, G, 1, [0, 2, 4, 6, 8, 10, 12, 14]);
        let (a, b) = fwd_small(r[0], r[1], 8 * G);
        store(p, 16 * G, a);
        store(p, 16 * G + 1, b);
        let (a, b) = fwd_small(r[2], r[3], 8 * G + 1);
        store(p, 16 * G + 2, a);
        store(p, 16 * G + 3, b);
        let (a, b) = fwd_small(r[4], r[5], 8 * G + 2);
        store(p, 16 * G + 4, a);
        store(p, 16 * G + 5, b);
        let (a, b) = fwd_small(r[6], r[7], 8 * G + 3);
        store(p, 16 * G + 6, a);
        store(p, 16 * G + 7, b);
        let (a, b) = fwd_small(r[8], r[9], 8 * G + 4);
        store(p, 16 * G + 8, a);
        store(p, 16 * G + 9, b);
        let (a, b) = fwd_small(r[10], r[11], 8 * G + 5);
        store(p, 16 * G + 10, a);
        store(p, 16 * G + 11, b);
        let (a, b) = fwd_small(r[12], r[13], 8 * G + 6);
        store(p, 16 * G + 12, a);
        store(p, 16 * G + 13, b);
        let (a, b) = fwd_small(r[14], r[15], 8 * G + 7);
        store(p, 16 * G + 14, a);
        store(p, 16 * G + 15, b);
    }
}

/// In-register inverse layers and the inverse layers of distances 1, 2, 4, 8 on half `G`.
#[inline(always)]
unsafe fn invntt_half<const G: usize>(p: &mut Poly) {
    // SAFETY: only called from `avx2` target-feature functions; indices are below 32.
    unsafe {
        let mut r = [_mm256_setzero_si256(); 16];
        (r[0], r[1]) = inv_small(load(p, 16 * G), load(p, 16 * G + 1), 8 * G);
        (r[2], r[3]) = inv_small(load(p, 16 * G + 2), load(p, 16 * G + 3), 8 * G + 1);
        (r[4], r[5]) = inv_small(load(p, 16 * G + 4), load(p, 16 * G + 5), 8 * G + 2);
        (r[6], r[7]) = inv_small(load(p, 16 * G + 6), load(p, 16 * G + 7), 8 * G + 3);
        (r[8], r[9]) = inv_small(load(p, 16 * G + 8), load(p, 16 * G + 9), 8 * G + 4);
        (r[10], r[11]) = inv_small(load(p, 16 * G + 10), load(p, 16 * G + 11), 8 * G + 5);
        (r[12], r[13]) = inv_small(load(p, 16 * G + 12), load(p, 16 * G + 13), 8 * G + 6);
        (r[14], r[15]) = inv_small(load(p, 16 * G + 14), load(p, 16 * G + 15), 8 * G + 7);
        inv_layer!(r, G, 1, [0, 2, 4, 6, 8, 10, 12, 14]);
        inv_layer!(r, G, 2, [0, 1, 4, 5, 8, 9, 12, 13]);
        inv_layer!(r, G, 4, [0, 1, 2, 3, 8, 9, 10, 11]);
        inv_layer!(r, G, 8, [0, 1, 2, 3, 4, 5, 6, 7]);
        for (i, v) in r.iter().enumerate() {
            store(p, 16 * G + i, *v);
        }
    }
}

/// The NTT kernels, instantiated twice: for AVX2 (16 `ymm` registers) and, for the AVX-512 backend, with
/// AVX-512VL enabled as well, which gives the same 256-bit code 32 registers and so fewer spills.
macro_rules! ntt_kernels {
    ($feat:literal, $ntt:ident, $invntt:ident, $pw:ident, $pacc:ident) => {
        #[target_feature(enable = $feat)]
        fn $ntt(p: &mut Poly) {
            // SAFETY: AVX2 is enabled for this function; every load/store index is below 32.
            unsafe {
                // Layer len = 128 (vector distance 16).
                for j in 0..16 {
                    let mut a = load(p, j);
                    let mut b = load(p, j + 16);
                    fwd_bf(&mut a, &mut b, ZETAS[1]);
                    store(p, j, a);
                    store(p, j + 16, b);
                }
                // Layers len = 64 .. 8 (distances 8, 4, 2, 1) and 4, 2, 1 on each half, in registers.
                // In the layer of vector distance d, vector j belongs to block j / 2d and uses ζ index 16/d + j/2d.
                ntt_half::<0>(p);
                ntt_half::<1>(p);
            }
        }

        #[target_feature(enable = $feat)]
        fn $invntt(p: &mut Poly) {
            // SAFETY: AVX2 is enabled for this function; every load/store index is below 32.
            unsafe {
                // Layers len = 1, 2, 4, then 8 .. 64 (distances 1, 2, 4, 8) on each half, in registers.
                // In the layer of distance d, vector j uses ζ index 32/d - 1 - j/2d (negated).
                invntt_half::<0>(p);
                invntt_half::<1>(p);
                // Layer len = 128 with the final factor folded in: (a + b)·f and (a − b)·(−ζ₁·f).
                let f = splat(INV_NTT_F);
                let fq = splat(INV_NTT_F.wrapping_mul(QINV));
                let zf = splat(INV_NTT_ZF);
                let zfq = splat(INV_NTT_ZF.wrapping_mul(QINV));
                for j in 0..16 {
                    let a = load(p, j);
                    let b = load(p, j + 16);
                    store(p, j, mont_mul(_mm256_add_epi32(a, b), f, fq));
                    store(p, j + 16, mont_mul(_mm256_sub_epi32(a, b), zf, zfq));
                }
            }
        }

        #[target_feature(enable = $feat)]
        fn $pw(out: &mut Poly, a: &Poly, b: &Poly) {
            // SAFETY: AVX2 is enabled for this function; indices are below 32.
            unsafe {
                let qinv = splat(QINV);
                for i in 0..32 {
                    let bv = load(b, i);
                    let bq = _mm256_mullo_epi32(bv, qinv);
                    store(out, i, mont_mul(load(a, i), bv, bq));
                }
            }
        }

        /// The products summed exactly in 64-bit lanes (even and odd lanes apart; |Σ| < 8q² < 2^31·q) and
        /// reduced once (`soft::pointwise_acc`'s integers).
        #[target_feature(enable = $feat)]
        fn $pacc(out: &mut Poly, a: &[Poly], b: &[Poly]) {
            debug_assert!(a.len() <= 8);
            // SAFETY: AVX2 is enabled for this function; indices are below 32.
            unsafe {
                let qinv = splat(QINV);
                let q = splat(Q);
                for i in 0..32 {
                    let mut se = _mm256_setzero_si256();
                    let mut so = _mm256_setzero_si256();
                    for (x, y) in a.iter().zip(b) {
                        let (xv, yv) = (load(x, i), load(y, i));
                        se = _mm256_add_epi64(se, _mm256_mul_epi32(xv, yv));
                        so = _mm256_add_epi64(
                            so,
                            _mm256_mul_epi32(_mm256_srli_epi64(xv, 32), _mm256_srli_epi64(yv, 32)),
                        );
                    }
                    // Montgomery reduction of each 64-bit sum: t = (s mod 2^32)·q^-1, (s − t·q) / 2^32.
                    let re = _mm256_sub_epi64(se, _mm256_mul_epi32(_mm256_mul_epi32(se, qinv), q));
                    let ro = _mm256_sub_epi64(so, _mm256_mul_epi32(_mm256_mul_epi32(so, qinv), q));
                    store(out, i, _mm256_blend_epi32(_mm256_srli_epi64(re, 32), ro, 0xAA));
                }
            }
        }
    };
}

ntt_kernels!("avx2", ntt_avx2, invntt_avx2, pointwise_avx2, pointwise_acc_avx2);
ntt_kernels!("avx2,avx512f,avx512vl", ntt_wide, invntt_wide, pointwise_wide, pointwise_acc_wide);

/// Representative in \[0, q) (for |a| < 2^31 - 2^22).
#[inline(always)]
unsafe fn freeze(a: __m256i) -> __m256i {
    // SAFETY: only called from `avx2` target-feature functions.
    unsafe {
        let r = reduce32(a);
        _mm256_add_epi32(r, _mm256_and_si256(_mm256_srai_epi32(r, 31), _mm256_set1_epi32(Q)))
    }
}

/// For a in \[0, q): a mod± q.
#[inline(always)]
unsafe fn center(a: __m256i) -> __m256i {
    // SAFETY: only called from `avx2` target-feature functions.
    unsafe {
        let m = _mm256_cmpgt_epi32(a, _mm256_set1_epi32((Q - 1) / 2));
        _mm256_sub_epi32(a, _mm256_and_si256(m, _mm256_set1_epi32(Q)))
    }
}

/// All-ones lanes where |a| ≥ bound.
#[inline(always)]
unsafe fn exceeds(a: __m256i, bound: i32) -> __m256i {
    // SAFETY: only called from `avx2` target-feature functions.
    unsafe { _mm256_cmpgt_epi32(_mm256_abs_epi32(a), _mm256_set1_epi32(bound - 1)) }
}

/// Decompose on each lane of r in \[0, q): the same integer steps as `poly::decompose`.
#[inline(always)]
unsafe fn decompose(r: __m256i, gamma2: i32) -> (__m256i, __m256i) {
    // SAFETY: only called from `avx2` target-feature functions.
    unsafe {
        let (sh, mm) = decompose_consts(gamma2);
        let alpha = 2 * gamma2;
        let x = _mm256_srl_epi32(_mm256_add_epi32(r, _mm256_set1_epi32(gamma2 - 1)), _mm_cvtsi32_si128(sh as i32));
        let x1 = _mm256_add_epi32(x, _mm256_set1_epi32(1));
        let r1 = _mm256_srli_epi32(_mm256_mullo_epi32(x1, _mm256_set1_epi32(mm)), 20);
        let r0 = _mm256_sub_epi32(r, _mm256_mullo_epi32(r1, _mm256_set1_epi32(alpha)));
        let wrap = _mm256_cmpeq_epi32(r1, _mm256_set1_epi32((Q - 1) / alpha));
        (_mm256_andnot_si256(wrap, r1), _mm256_add_epi32(r0, wrap))
    }
}

#[target_feature(enable = "avx2")]
fn w_decompose_avx2(w: &mut Poly, w1: &mut Poly, gamma2: i32) {
    // SAFETY: AVX2 is enabled for this function; indices are below 32.
    unsafe {
        for i in 0..32 {
            let v = freeze(load(w, i));
            store(w, i, v);
            store(w1, i, decompose(v, gamma2).0);
        }
    }
}

#[target_feature(enable = "avx2")]
fn z_finish_avx2(z: &mut Poly, y: &Poly, bound: i32) -> u32 {
    // SAFETY: AVX2 is enabled for this function; indices are below 32.
    unsafe {
        let mut bad = _mm256_setzero_si256();
        for i in 0..32 {
            let v = center(freeze(_mm256_add_epi32(load(z, i), load(y, i))));
            store(z, i, v);
            bad = _mm256_or_si256(bad, exceeds(v, bound));
        }
        _mm256_movemask_epi8(bad) as u32
    }
}

#[target_feature(enable = "avx2")]
fn r_finish_avx2(w: &mut Poly, w1: &mut Poly, cs2: &Poly, gamma2: i32, bound: i32) -> u32 {
    // SAFETY: AVX2 is enabled for this function; indices are below 32.
    unsafe {
        let mut bad = _mm256_setzero_si256();
        for i in 0..32 {
            let r = freeze(_mm256_sub_epi32(load(w, i), load(cs2, i)));
            let (r1, r0) = decompose(r, gamma2);
            store(w, i, r);
            store(w1, i, r1);
            bad = _mm256_or_si256(bad, exceeds(r0, bound));
        }
        _mm256_movemask_epi8(bad) as u32
    }
}

#[target_feature(enable = "avx2")]
fn hint_avx2(ct0: &Poly, r: &Poly, w1: &mut Poly, gamma2: i32) -> (u32, u32) {
    // SAFETY: AVX2 is enabled for this function; indices are below 32.
    unsafe {
        let mut bad = _mm256_setzero_si256();
        let mut ones = _mm256_setzero_si256();
        for i in 0..32 {
            let c = center(freeze(load(ct0, i)));
            bad = _mm256_or_si256(bad, exceeds(c, gamma2));
            let hi = decompose(freeze(_mm256_add_epi32(load(r, i), c)), gamma2).0;
            // h = 1 where hi != r1.
            let h = _mm256_add_epi32(_mm256_cmpeq_epi32(hi, load(w1, i)), _mm256_set1_epi32(1));
            store(w1, i, h);
            ones = _mm256_add_epi32(ones, h);
        }
        let mut lanes = [0i32; 8];
        _mm256_storeu_si256(lanes.as_mut_ptr().cast(), ones);
        (_mm256_movemask_epi8(bad) as u32, lanes.iter().sum::<i32>() as u32)
    }
}

/// For each 8-bit mask, the lane indices of its set bits, in order (zero-padded): the compaction permutation
/// of the vectorised rejection samplers. Indexed by which candidates were accepted: public for ExpandA (they
/// come from the public matrix seed ρ), and for ExpandS independent of the coefficients kept (see
/// `rej_eta_avx2`).
const fn compact_table() -> [[u8; 8]; 256] {
    let mut t = [[0u8; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let mut n = 0;
        let mut b = 0;
        while b < 8 {
            if m >> b & 1 == 1 {
                t[m][n] = b as u8;
                n += 1;
            }
            b += 1;
        }
        m += 1;
    }
    t
}

static COMPACT: [[u8; 8]; 256] = compact_table();

#[target_feature(enable = "avx2")]
fn rej_uniform_avx2(p: &mut Poly, ctr: &mut usize, buf: &[u8], valid: usize) -> usize {
    let mut c = *ctr;
    let mut pos = 0;
    // SAFETY: AVX2 is enabled for this function. Each load reads 32 bytes at `pos` with pos + 32 <= buf.len()
    // (only the first 24 are used, and pos + 24 <= valid); each store writes 8 values at `c` with c + 8 <= N.
    unsafe {
        let shuf = _mm256_setr_epi8(
            0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, 4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15,
            -1,
        );
        let mask23 = _mm256_set1_epi32(0x7F_FFFF);
        let q = _mm256_set1_epi32(Q);
        while pos + 24 <= valid && pos + 32 <= buf.len() && c + 8 <= N {
            let raw = _mm256_loadu_si256(buf.as_ptr().add(pos).cast());
            // Bytes 0..16 in the low lane, bytes 8..24 in the high lane (candidates 4..8 start at byte 12).
            let arranged = _mm256_permute4x64_epi64(raw, 0b10_01_01_00);
            let v = _mm256_and_si256(_mm256_shuffle_epi8(arranged, shuf), mask23);
            let ok = _mm256_cmpgt_epi32(q, v);
            let m = _mm256_movemask_ps(_mm256_castsi256_ps(ok)) as usize;
            let idx = _mm256_cvtepu8_epi32(_mm_loadl_epi64(COMPACT[m].as_ptr().cast()));
            let packed = _mm256_permutevar8x32_epi32(v, idx);
            _mm256_storeu_si256(p.0.as_mut_ptr().add(c).cast(), packed);
            c += m.count_ones() as usize;
            pos += 24;
        }
    }
    *ctr = c;
    pos
}

/// The value η - (z mod 5) (η = 2) or η - z (η = 4) of each nibble z, as signed bytes for `pshufb` (entries of
/// rejected nibbles are never kept).
const fn eta_table(eta: i32) -> [i8; 16] {
    let mut t = [0i8; 16];
    let mut z = 0;
    while z < 16 {
        t[z] = if eta == 2 { (2 - (z as i32 % 5)) as i8 } else { (4 - z as i32) as i8 };
        z += 1;
    }
    t
}

#[target_feature(enable = "avx2")]
fn rej_eta_avx2(p: &mut Poly, ctr: &mut usize, buf: &[u8], eta: i32) -> usize {
    let mut c = *ctr;
    let mut pos = 0;
    // The accept mask says which half-bytes were rejected (≥ 15 or ≥ 9); those are discarded, so the mask is
    // independent of the coefficients kept, and indexing the compaction table with it reveals nothing about
    // the private key (the rejection count is data-dependent in the standard itself). The values are mapped
    // in-register (pshufb), never through a memory table.
    // SAFETY: AVX2 is enabled for this function. Each load reads 8 bytes at `pos` with pos + 8 <= buf.len();
    // each store writes 8 values at `c` with c + 8 <= N (checked for both halves by c + 16 <= N).
    unsafe {
        let tab = if eta == 2 { eta_table(2) } else { eta_table(4) };
        let tab = _mm_loadu_si128(tab.as_ptr().cast());
        let bound = _mm_set1_epi8(if eta == 2 { 15 } else { 9 });
        let low = _mm_set1_epi8(0x0F);
        while pos + 8 <= buf.len() && c + 16 <= N {
            let raw = _mm_loadl_epi64(buf.as_ptr().add(pos).cast());
            let lo = _mm_and_si128(raw, low);
            let hi = _mm_and_si128(_mm_srli_epi16(raw, 4), low);
            // Half-bytes in stream order: low then high nibble of each byte.
            let z = _mm_unpacklo_epi8(lo, hi);
            let ok = _mm_movemask_epi8(_mm_cmpgt_epi8(bound, z)) as usize;
            let vals = _mm_shuffle_epi8(tab, z);
            let m0 = ok & 0xFF;
            let idx0 = _mm_loadl_epi64(COMPACT[m0].as_ptr().cast());
            let v0 = _mm256_cvtepi8_epi32(_mm_shuffle_epi8(vals, idx0));
            _mm256_storeu_si256(p.0.as_mut_ptr().add(c).cast(), v0);
            c += m0.count_ones() as usize;
            let m1 = ok >> 8;
            let idx1 = _mm_loadl_epi64(COMPACT[m1].as_ptr().cast());
            let v1 = _mm256_cvtepi8_epi32(_mm_shuffle_epi8(_mm_srli_si128(vals, 8), idx1));
            _mm256_storeu_si256(p.0.as_mut_ptr().add(c).cast(), v1);
            c += m1.count_ones() as usize;
            pos += 8;
        }
    }
    *ctr = c;
    pos
}

#[target_feature(enable = "avx2")]
fn wipe_avx2(v: &mut [Poly]) {
    for p in v {
        let base = p.0.as_mut_ptr().cast::<__m256i>();
        for i in 0..N / 8 {
            // SAFETY: a Poly is 1024 bytes aligned to 64, so its 32 slots of 32 bytes are in bounds and aligned
            // for __m256i. Volatile, so the compiler keeps the stores even right before the memory is freed.
            unsafe { core::ptr::write_volatile(base.add(i), _mm256_setzero_si256()) };
        }
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// Caller guarantees: `b` is 32-byte aligned and its length a multiple of 32.
#[target_feature(enable = "avx2")]
unsafe fn wipe_bytes_avx2(b: &mut [u8]) {
    let base = b.as_mut_ptr().cast::<__m256i>();
    for i in 0..b.len() / 32 {
        // SAFETY: in bounds (i < len / 32) and aligned, by the caller's guarantee. Volatile, as in `wipe_avx2`.
        unsafe { core::ptr::write_volatile(base.add(i), _mm256_setzero_si256()) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// The 20-bit case of `encoding::unpack_gamma1` (γ1 = 2^19): 8 coefficients from 20 bytes per step, each
/// 128-bit half gathering the 3 bytes of its 4 coefficients into 32-bit lanes (`pshufb`), then a shift by 0 or
/// 4 (`vpsrlvd`), a mask and γ1 − v. Constant controls only (y is secret). The last group, whose 16-byte load
/// would pass the end of `inp`, and any remainder go through the portable code.
#[target_feature(enable = "avx2")]
fn unpack_gamma1_20_avx2(p: &mut Poly, inp: &[u8], gamma1: i32) {
    #[rustfmt::skip]
    let ctrl = _mm256_setr_epi8(
        0, 1, 2, -1, 2, 3, 4, -1, 5, 6, 7, -1, 7, 8, 9, -1,
        0, 1, 2, -1, 2, 3, 4, -1, 5, 6, 7, -1, 7, 8, 9, -1,
    );
    let shifts = _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4);
    let mask = _mm256_set1_epi32(0xF_FFFF);
    let g = _mm256_set1_epi32(gamma1);
    let mut i = 0;
    while i < N / 8 && 20 * i + 26 <= inp.len() {
        // SAFETY: bytes 20i..20i+16 and 20i+10..20i+26 lie in `inp` (20i + 26 ≤ len); i < 32 for the store.
        unsafe {
            let lo = _mm_loadu_si128(inp.as_ptr().add(20 * i).cast());
            let hi = _mm_loadu_si128(inp.as_ptr().add(20 * i + 10).cast());
            let v = _mm256_shuffle_epi8(_mm256_set_m128i(hi, lo), ctrl);
            let v = _mm256_and_si256(_mm256_srlv_epi32(v, shifts), mask);
            store(p, i, _mm256_sub_epi32(g, v));
        }
        i += 1;
    }
    for (c, b) in p.0[8 * i..].chunks_exact_mut(2).zip(inp[20 * i..].chunks_exact(5)) {
        let v = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], 0, 0, 0]);
        c[0] = gamma1 - (v & 0xF_FFFF) as i32;
        c[1] = gamma1 - (v >> 20) as i32;
    }
}

/// `encoding::unpack_gamma1` (the same result), vectorised for γ1 = 2^19 with at least 640 bytes of input.
pub fn unpack_gamma1(backend: Checked<Backend>, p: &mut Poly, inp: &[u8], gamma1: i32) {
    if gamma1 == 1 << 19 && inp.len() >= 640 {
        assert!(backend.covers(Backend::Avx2));
        // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
        unsafe { unpack_gamma1_20_avx2(p, &inp[..640], gamma1) }
    } else {
        super::encoding::unpack_gamma1(p, inp, gamma1);
    }
}

// The safe entry points. Each takes the checked backend and asserts it covers the backend whose features the
// code it runs needs: Backend::Avx2 for the AVX2 code (the AVX-512 backend's features include AVX2's), and
// Backend::Avx512 for the NTT kernels compiled with AVX-512VL as well.

/// Runs one of the kernels that `ntt_kernels!` instantiates twice: the instantiation with AVX-512VL, `$wide`,
/// for a backend covering Backend::Avx512 (32 registers, fewer spills), the AVX2 one, `$avx2`, otherwise.
macro_rules! run_kernel {
    ($backend:ident, $avx2:ident, $wide:ident, ($($arg:expr),*)) => {
        if $backend.covers(Backend::Avx512) {
            // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU has AVX2,
            // AVX-512F and AVX-512VL.
            unsafe { $wide($($arg),*) }
        } else {
            assert!($backend.covers(Backend::Avx2));
            // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
            unsafe { $avx2($($arg),*) }
        }
    };
}

/// Forward NTT (same contract as `soft::ntt`).
pub fn ntt(backend: Checked<Backend>, p: &mut Poly) {
    run_kernel!(backend, ntt_avx2, ntt_wide, (p))
}

/// Inverse NTT (same contract as `soft::invntt`).
pub fn invntt(backend: Checked<Backend>, p: &mut Poly) {
    run_kernel!(backend, invntt_avx2, invntt_wide, (p))
}

/// Pointwise Montgomery product (same contract as `soft::pointwise`).
pub fn pointwise(backend: Checked<Backend>, out: &mut Poly, a: &Poly, b: &Poly) {
    run_kernel!(backend, pointwise_avx2, pointwise_wide, (out, a, b))
}

/// Sum of pointwise Montgomery products (same contract as `soft::pointwise_acc`).
pub fn pointwise_acc(backend: Checked<Backend>, out: &mut Poly, a: &[Poly], b: &[Poly]) {
    run_kernel!(backend, pointwise_acc_avx2, pointwise_acc_wide, (out, a, b))
}

/// Same contract as `soft::w_decompose`.
pub fn w_decompose(backend: Checked<Backend>, w: &mut Poly, w1: &mut Poly, gamma2: i32) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { w_decompose_avx2(w, w1, gamma2) }
}

/// Same contract as `soft::z_finish`.
pub fn z_finish(backend: Checked<Backend>, z: &mut Poly, y: &Poly, bound: i32) -> u32 {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { z_finish_avx2(z, y, bound) }
}

/// Same contract as `soft::r_finish`.
pub fn r_finish(backend: Checked<Backend>, w: &mut Poly, w1: &mut Poly, cs2: &Poly, gamma2: i32, bound: i32) -> u32 {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { r_finish_avx2(w, w1, cs2, gamma2, bound) }
}

/// Same contract as `soft::hint`.
pub fn hint(backend: Checked<Backend>, ct0: &Poly, r: &Poly, w1: &mut Poly, gamma2: i32) -> (u32, u32) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { hint_avx2(ct0, r, w1, gamma2) }
}

/// Vectorised RejNTTPoly parsing: consumes 24-byte groups of the first `valid` bytes of `buf` while at least 8
/// coefficients are missing and 32 bytes are readable (bytes past `valid` may be read, never used); returns
/// the number of bytes consumed (the caller parses the rest).
pub fn rej_uniform(backend: Checked<Backend>, p: &mut Poly, ctr: &mut usize, buf: &[u8], valid: usize) -> usize {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { rej_uniform_avx2(p, ctr, buf, valid) }
}

/// Zeroizes polynomials with volatile 32-byte stores (a volatile `i32` at a time, as `zeroize` does, costs
/// eight times as many stores: it showed up in key generation and signing profiles).
pub fn wipe(backend: Checked<Backend>, v: &mut [Poly]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { wipe_avx2(v) }
}

/// Zeroizes `b` with volatile 32-byte stores if it is 32-byte aligned and a multiple of 32 bytes long (returns
/// `false`, touching nothing, otherwise).
pub fn wipe_bytes(backend: Checked<Backend>, b: &mut [u8]) -> bool {
    if !(b.as_ptr() as usize).is_multiple_of(32) || !b.len().is_multiple_of(32) {
        return false;
    }
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2; alignment
    // and length are checked just above.
    unsafe { wipe_bytes_avx2(b) };
    true
}

/// Vector RejBoundedPoly for η = 2 or 4: parses whole 8-byte groups of `buf` into `p` from `*ctr` while at
/// least 16 coefficients remain to be filled, and returns the number of bytes consumed (the caller finishes
/// with the scalar parser).
pub fn rej_eta(backend: Checked<Backend>, p: &mut Poly, ctr: &mut usize, buf: &[u8], eta: i32) -> usize {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { rej_eta_avx2(p, ctr, buf, eta) }
}

#[cfg(test)]
mod unpack_tests {
    use super::*;

    /// The AVX2 BitUnpack of γ1 = 2^19 against the portable one: random inputs, all-zero and all-one bytes
    /// (the extremes γ1 and γ1 − 2^20 + 1), inputs exactly 640 bytes long and longer (ExpandMask's buffer).
    #[test]
    fn unpack_gamma1_matches_portable() {
        let Some(b) = Checked::for_test(Backend::Avx2) else { return };
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for case in 0..200 {
            let mut inp = [0u8; 680];
            for v in inp.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *v = match case {
                    0 => 0,
                    1 => 0xff,
                    _ => x as u8,
                };
            }
            for len in [640, 641, 680] {
                let mut want = Poly::ZERO;
                let mut got = Poly::ZERO;
                super::super::encoding::unpack_gamma1(&mut want, &inp[..len], 1 << 19);
                unpack_gamma1(b, &mut got, &inp[..len], 1 << 19);
                assert!(want == got, "case {case}, len {len}");
            }
        }
    }
}
