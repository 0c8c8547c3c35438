//! The AVX-512 IFMA backend of the RSA exponentiation: radix 2^52, one modulus limb per 64-bit lane, and the
//! two CRT halves computed in one loop.
//!
//! `vpmadd52luq` / `vpmadd52huq` add the low / high 52 bits of the 104-bit products of four lane pairs to four
//! 64-bit accumulators. A Montgomery product is word-serial (one multiplier digit b_i per step, as CIOS): per step,
//! add the low halves of `a·b_i`, derive the reduction digit u from lane 0 (scalar), add the low halves of `u·m`,
//! drop lane 0 (now a multiple of 2^52; its carry goes into the new lane 0) by shifting every lane down one
//! (`valignq`), then add the high halves of both products, which belong one lane up and so land in place. Lanes
//! are not carried between steps (each grows by less than 2^54 per step, so 40 steps stay below 2^60); one carry
//! pass in the vector registers (see [`normalise`]) brings the result back to 52-bit digits, stored with
//! full-width stores that the next product's vector loads are forwarded from.
//!
//! This is the "almost Montgomery multiplication" (AMM): with R = 2^(52·N) > 4m, inputs below 2m give an output
//! below 2m, so no conditional subtraction is needed inside the exponentiation; only the final conversion out of
//! the domain (a product by 1, whose result is at most m) is followed by one constant-time subtraction.
//!
//! The serial part of a step (lane 0 to u to the broadcast of u to the next products) is about 20 cycles of
//! latency, so one exponentiation alone would leave the multipliers idle. The CRT exponentiations mod p and mod q
//! are independent: [`pow2`] runs both in one loop (`K = 2`), and the out-of-order core overlaps them (the same
//! idea as OpenSSL's `rsaz_amm52x20_x2`; this code is our own).
//!
//! Sizes: moduli of 16, 24 and 32 64-bit limbs (1024-, 1536- and 2048-bit primes: RSA-2048, 3072 and 4096),
//! N = 20, 30 and 40 digits, in 256-bit vectors of 4 digits or 512-bit ones of 8. Zen 4 runs two 256-bit IFMA
//! operations per cycle or one 512-bit one, so there the width that matters is the lanes carried: at N = 20,
//! five 256-bit vectors carry none empty where three 512-bit ones would carry 4; at N = 30 and 40 both widths
//! carry the same lanes (32 and 40), and 512-bit vectors do it in half the instructions (measured on Zen 4:
//! RSA-3072 private operations 7% faster than with eight 256-bit vectors, RSA-4096 no slower than with ten).
//! So `Backend::Ifma` uses 5 256-bit vectors at N = 20 and 4 and 5 512-bit ones at N = 30 and 40;
//! `Backend::Ifma512` uses 512-bit vectors at every size (3, 4 and 5), for a core that runs 512-bit IFMA
//! operations at the 256-bit rate (Zen 5). Constant time: the step count, the window count and the table
//! scan depend on the (public) sizes only; the table is read by a full masked scan.
//!
//! [`pow_public`] raises to a public exponent (the public operation, and the check of every private result):
//! one product at a time, square and multiply on the bits of the exponent.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use alloc::vec;
use alloc::vec::Vec;
use zeroize::Zeroize;

use super::Backend;
use super::bigint;
use crate::dispatch::Checked;

/// 2^52 − 1.
const M52: u64 = (1 << 52) - 1;
/// Digits held by a [`Digits`] (12 vectors of 4 lanes: the largest size, 40 digits, needs 10).
const CAP: usize = 48;
/// Window width of the exponentiation (as the 64-bit backend).
const W: usize = 5;

/// A number in radix 2^52, one digit per 64-bit word, aligned for vector loads.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Digits([u64; CAP]);

impl Zeroize for Digits {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

impl Digits {
    const ZERO: Digits = Digits([0; CAP]);

    /// From 64-bit limbs (little-endian), `n` digits.
    fn from_limbs(x: &[u64], n: usize) -> Digits {
        let mut d = Digits::ZERO;
        for (i, slot) in d.0[..n].iter_mut().enumerate() {
            let bit = 52 * i;
            let (w, s) = (bit / 64, bit % 64);
            let lo = x.get(w).copied().unwrap_or(0) >> s;
            let hi = if s > 12 { x.get(w + 1).copied().unwrap_or(0) << (64 - s) } else { 0 };
            *slot = (lo | hi) & M52;
        }
        d
    }

    /// To `l` 64-bit limbs (the value must fit).
    fn limbs64(&self, l: usize) -> Vec<u64> {
        let mut out = vec![0u64; l];
        for (i, &digit) in self.0.iter().enumerate() {
            let bit = 52 * i;
            let (w, s) = (bit / 64, bit % 64);
            if w < l {
                out[w] |= digit << s;
            }
            if s > 12 && w + 1 < l {
                out[w + 1] |= digit >> (64 - s);
            }
        }
        out
    }
}

/// A modulus prepared for this backend: its digits, −m^-1 mod 2^52 and R^2 mod m for R = 2^(52·N).
#[derive(Clone)]
pub(super) struct IfmaCtx {
    m: Digits,
    k0: u64,
    rr: Digits,
    /// 64-bit limbs of m.
    limbs: usize,
}

impl Drop for IfmaCtx {
    fn drop(&mut self) {
        self.m.zeroize();
        self.k0.zeroize();
        self.rr.zeroize();
    }
}

/// Digits for a modulus of `l` 64-bit limbs, if this backend handles that size.
fn digits_for(l: usize) -> Option<usize> {
    match l {
        16 => Some(20),
        24 => Some(30),
        32 => Some(40),
        _ => None,
    }
}

impl IfmaCtx {
    /// The constants for the odd modulus `m` (64-bit limbs), or `None` for a size this backend does not handle.
    /// Constant time in `m`. `m0inv` is −m^-1 mod 2^64 (its low 52 bits are −m^-1 mod 2^52).
    /// `pow2(k)` must return 2^k mod m (called once, with k = 2·52·digits ≥ 128·L).
    pub(super) fn new(m: &[u64], m0inv: u64, pow2: impl FnOnce(usize) -> Vec<u64>) -> Option<IfmaCtx> {
        let n = digits_for(m.len())?;
        let mut rr = pow2(2 * 52 * n);
        let ctx =
            IfmaCtx { m: Digits::from_limbs(m, n), k0: m0inv & M52, rr: Digits::from_limbs(&rr, n), limbs: m.len() };
        rr.zeroize();
        Some(ctx)
    }

    fn digits(&self) -> usize {
        digits_for(self.limbs).expect("checked in new")
    }
}

/// `base^exp mod m` for one modulus: `base` (64-bit limbs, `< m`) and the result in normal form (not Montgomery).
pub(super) fn pow(backend: Checked<Backend>, ctx: &IfmaCtx, base: &[u64], exp: &[u64]) -> Vec<u64> {
    assert!(backend.covers(Backend::Ifma));
    let mut out = [Digits::ZERO];
    let e = [exp];
    // SAFETY: `backend` is a Checked covering Backend::Ifma, so the CPU has AVX512F, AVX512VL and AVX512IFMA.
    unsafe { pow_k::<1>(wide(backend), &[ctx], &[base], &e, &mut out) };
    let r = finish(ctx, &out[0]);
    out.zeroize();
    r
}

/// [`pow`] for two moduli of the same size and two exponents of the same length, in one loop (the CRT halves).
pub(super) fn pow2(
    backend: Checked<Backend>,
    ctx: [&IfmaCtx; 2],
    base: [&[u64]; 2],
    exp: [&[u64]; 2],
) -> [Vec<u64>; 2] {
    assert!(backend.covers(Backend::Ifma));
    assert!(ctx[0].limbs == ctx[1].limbs && exp[0].len() == exp[1].len());
    let mut out = [Digits::ZERO; 2];
    // SAFETY: as in `pow`.
    unsafe { pow_k::<2>(wide(backend), &ctx, &base, &exp, &mut out) };
    let r = [finish(ctx[0], &out[0]), finish(ctx[1], &out[1])];
    out.zeroize();
    r
}

/// `base^e mod m` for a public exponent `e ≥ 1` (the public operation, and the private operation's check of its
/// result): `base < m` in 64-bit limbs, the result in normal form. Left-to-right square and multiply, whose
/// steps depend on `e` only; constant time in `base`. One product at a time: each waits on the one before.
pub(super) fn pow_public(backend: Checked<Backend>, ctx: &IfmaCtx, base: &[u64], e: u64) -> Vec<u64> {
    assert!(backend.covers(Backend::Ifma) && e >= 1);
    let mut out = Digits::ZERO;
    // SAFETY: `backend` is a Checked covering Backend::Ifma, so the CPU has AVX512F, AVX512VL and AVX512IFMA.
    unsafe {
        match (ctx.digits(), wide(backend)) {
            (20, false) => pow_public_n::<Y, 20, 5>(ctx, base, e, &mut out),
            (20, true) => pow_public_n::<Z, 20, 3>(ctx, base, e, &mut out),
            (30, _) => pow_public_n::<Z, 30, 4>(ctx, base, e, &mut out),
            (_, _) => pow_public_n::<Z, 40, 5>(ctx, base, e, &mut out),
        }
    }
    let r = finish(ctx, &out);
    out.zeroize();
    r
}

/// [`pow_public`] for `N` digits in `V` vectors of width `T`: into the domain (a product by R^2), the square
/// and multiply, out of the domain (a product by 1, at most m).
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
unsafe fn pow_public_n<T: Lanes, const N: usize, const V: usize>(
    ctx: &IfmaCtx,
    base: &[u64],
    e: u64,
    out: &mut Digits,
) {
    assert!(N <= T::L * V && T::L * V <= CAP && T::L * (V - 1) < N);
    let (m, k0, rr) = ([ctx.m], [ctx.k0], [ctx.rr]);
    let mut one = [Digits::ZERO];
    one[0].0[0] = 1;
    let mut b = [Digits::from_limbs(base, N)];
    let mut bm = [Digits::ZERO];
    // SAFETY: this function's target features are the ones `amm`, `amm_regs` and `store` need; every Digits
    // holds CAP ≥ L·V aligned words (asserted above).
    unsafe {
        amm::<T, N, V, 1>(&mut bm, &b, &rr, &m, &k0);
        let mut acc = bm;
        for i in (0..63 - e.leading_zeros()).rev() {
            let r = amm_regs::<T, N, V, 1>(&acc, &acc, &m, &k0);
            store::<T, V, 1>(&mut acc, &r);
            if (e >> i) & 1 == 1 {
                let r = amm_regs::<T, N, V, 1>(&acc, &bm, &m, &k0);
                store::<T, V, 1>(&mut acc, &r);
            }
        }
        amm::<T, N, V, 1>(core::array::from_mut(out), &acc, &one, &m, &k0);
        acc.zeroize();
    }
    b.zeroize();
    bm.zeroize();
}

/// Whether `backend` asks for 512-bit vectors at every size ([`Backend::Ifma512`]), rather than 256-bit ones
/// where 512-bit ones would carry empty lanes.
fn wide(backend: Checked<Backend>) -> bool {
    backend.get() == Backend::Ifma512
}

/// From the digits of a value `≤ m` to 64-bit limbs `< m` (one constant-time subtraction for the value m).
fn finish(ctx: &IfmaCtx, x: &Digits) -> Vec<u64> {
    let mut r = x.limbs64(ctx.limbs);
    let mut m = ctx.m.limbs64(ctx.limbs);
    let ge = 1 ^ bigint::lt(&r, &m);
    bigint::cond_sub(&mut r, &m, ge);
    m.zeroize();
    r
}

/// Dispatches on the size and the vector width to the fixed-size exponentiation.
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
unsafe fn pow_k<const K: usize>(
    wide: bool,
    ctx: &[&IfmaCtx; K],
    base: &[&[u64]; K],
    exp: &[&[u64]; K],
    out: &mut [Digits; K],
) {
    // SAFETY (every arm): this function's target features (the caller's proof) are the ones pow_n needs.
    match (ctx[0].digits(), wide) {
        // SAFETY: as above.
        (20, false) => unsafe { pow_n::<Y, 20, 5, K>(ctx, base, exp, out) },
        // SAFETY: as above.
        (20, true) => unsafe { pow_n::<Z, 20, 3, K>(ctx, base, exp, out) },
        // SAFETY: as above.
        (30, _) => unsafe { pow_n::<Z, 30, 4, K>(ctx, base, exp, out) },
        // SAFETY: as above.
        (_, _) => unsafe { pow_n::<Z, 40, 5, K>(ctx, base, exp, out) },
    }
}

/// The vector operations of the exponentiation, for one register width: [`Y`] (256-bit, 4 digits) or [`Z`]
/// (512-bit, 8 digits). Digit j of a number sits in lane j % L of vector j / L. Every function needs AVX512F,
/// AVX512VL and AVX512IFMA (its callers' target features); `load` and `store` also need `p` valid for L
/// 64-byte-aligned words.
trait Lanes {
    /// Digits per vector.
    const L: usize;
    /// The register.
    type V: Copy;
    unsafe fn splat(x: u64) -> Self::V;
    /// The word at `p` in every lane, broadcast from memory (a load, where [`splat`](Self::splat) of a
    /// register value is two vector operations).
    unsafe fn splat_mem(p: *const u64) -> Self::V;
    unsafe fn load(p: *const u64) -> Self::V;
    unsafe fn store(p: *mut u64, v: Self::V);
    /// `acc + lo52(a·b)` per lane.
    unsafe fn madd_lo(acc: Self::V, a: Self::V, b: Self::V) -> Self::V;
    /// `acc + hi52(a·b)` per lane.
    unsafe fn madd_hi(acc: Self::V, a: Self::V, b: Self::V) -> Self::V;
    /// Lanes 1.. of `lo`, then lane 0 of `hi` (one lane down across two vectors).
    unsafe fn down1(hi: Self::V, lo: Self::V) -> Self::V;
    /// The top lane of `lo`, then lanes ..L−1 of `hi` (one lane up across two vectors).
    unsafe fn up1(hi: Self::V, lo: Self::V) -> Self::V;
    /// Lane 1 (the second digit).
    unsafe fn lane1(v: Self::V) -> u64;
    unsafe fn set_lane0(v: Self::V, x: u64) -> Self::V;
    unsafe fn shr52(v: Self::V) -> Self::V;
    unsafe fn and(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// Bit i set where lane i of `a` exceeds lane i of `b` (unsigned).
    unsafe fn gt(a: Self::V, b: Self::V) -> u64;
    /// Bit i set where lane i of `a` equals lane i of `b`.
    unsafe fn eq(a: Self::V, b: Self::V) -> u64;
    /// `a + b` in the lanes whose bit of `k` is set, `a` in the others.
    unsafe fn add_where(a: Self::V, k: u64, b: Self::V) -> Self::V;
    /// `a | b` in the lanes whose bit of `k` is set, `a` in the others.
    unsafe fn or_where(a: Self::V, k: u64, b: Self::V) -> Self::V;
}

/// 256-bit vectors (AVX-512VL forms): no lanes wasted at 20 digits; Zen 4 runs two 256-bit IFMA operations per
/// cycle and one 512-bit one.
struct Y;
/// 512-bit vectors: half the instructions of [`Y`] for the same digits where the core runs 512-bit IFMA
/// operations at the 256-bit rate (Zen 5).
struct Z;

impl Lanes for Y {
    const L: usize = 4;
    type V = __m256i;
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn splat(x: u64) -> __m256i {
        _mm256_set1_epi64x(x as i64)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn splat_mem(p: *const u64) -> __m256i {
        let v: __m256i;
        // SAFETY: the caller's contract (one readable word at p); AVX2 is enabled.
        unsafe {
            core::arch::asm!("vpbroadcastq {v}, qword ptr [{p}]", v = out(ymm_reg) v, p = in(reg) p,
                options(pure, readonly, nostack, preserves_flags))
        };
        v
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn load(p: *const u64) -> __m256i {
        // SAFETY: the caller's contract (4 aligned words at p).
        unsafe { _mm256_load_si256(p.cast()) }
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn store(p: *mut u64, v: __m256i) {
        // SAFETY: the caller's contract (4 aligned words at p).
        unsafe { _mm256_store_si256(p.cast(), v) }
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn madd_lo(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
        _mm256_madd52lo_epu64(acc, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn madd_hi(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
        _mm256_madd52hi_epu64(acc, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn down1(hi: __m256i, lo: __m256i) -> __m256i {
        _mm256_alignr_epi64::<1>(hi, lo)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn up1(hi: __m256i, lo: __m256i) -> __m256i {
        _mm256_alignr_epi64::<3>(hi, lo)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn lane1(v: __m256i) -> u64 {
        _mm_extract_epi64::<1>(_mm256_castsi256_si128(v)) as u64
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn set_lane0(v: __m256i, x: u64) -> __m256i {
        _mm256_mask_set1_epi64(v, 1, x as i64)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn shr52(v: __m256i) -> __m256i {
        _mm256_srli_epi64::<52>(v)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn and(a: __m256i, b: __m256i) -> __m256i {
        _mm256_and_si256(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi64(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn gt(a: __m256i, b: __m256i) -> u64 {
        _mm256_cmpgt_epu64_mask(a, b) as u64
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn eq(a: __m256i, b: __m256i) -> u64 {
        _mm256_cmpeq_epi64_mask(a, b) as u64
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn add_where(a: __m256i, k: u64, b: __m256i) -> __m256i {
        _mm256_mask_add_epi64(a, (k & 0xf) as __mmask8, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn or_where(a: __m256i, k: u64, b: __m256i) -> __m256i {
        _mm256_mask_or_epi64(a, (k & 0xf) as __mmask8, a, b)
    }
}

impl Lanes for Z {
    const L: usize = 8;
    type V = __m512i;
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn splat(x: u64) -> __m512i {
        _mm512_set1_epi64(x as i64)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn splat_mem(p: *const u64) -> __m512i {
        let v: __m512i;
        // SAFETY: the caller's contract (one readable word at p); AVX512F is enabled.
        unsafe {
            core::arch::asm!("vpbroadcastq {v}, qword ptr [{p}]", v = out(zmm_reg) v, p = in(reg) p,
                options(pure, readonly, nostack, preserves_flags))
        };
        v
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn load(p: *const u64) -> __m512i {
        // SAFETY: the caller's contract (8 aligned words at p).
        unsafe { _mm512_load_si512(p.cast()) }
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn store(p: *mut u64, v: __m512i) {
        // SAFETY: the caller's contract (8 aligned words at p).
        unsafe { _mm512_store_si512(p.cast(), v) }
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn madd_lo(acc: __m512i, a: __m512i, b: __m512i) -> __m512i {
        _mm512_madd52lo_epu64(acc, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn madd_hi(acc: __m512i, a: __m512i, b: __m512i) -> __m512i {
        _mm512_madd52hi_epu64(acc, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn down1(hi: __m512i, lo: __m512i) -> __m512i {
        _mm512_alignr_epi64::<1>(hi, lo)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn up1(hi: __m512i, lo: __m512i) -> __m512i {
        _mm512_alignr_epi64::<7>(hi, lo)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn lane1(v: __m512i) -> u64 {
        _mm_extract_epi64::<1>(_mm512_castsi512_si128(v)) as u64
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn set_lane0(v: __m512i, x: u64) -> __m512i {
        _mm512_mask_set1_epi64(v, 1, x as i64)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn shr52(v: __m512i) -> __m512i {
        _mm512_srli_epi64::<52>(v)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn and(a: __m512i, b: __m512i) -> __m512i {
        _mm512_and_si512(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
        _mm512_add_epi64(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn gt(a: __m512i, b: __m512i) -> u64 {
        _mm512_cmpgt_epu64_mask(a, b) as u64
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn eq(a: __m512i, b: __m512i) -> u64 {
        _mm512_cmpeq_epi64_mask(a, b) as u64
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn add_where(a: __m512i, k: u64, b: __m512i) -> __m512i {
        _mm512_mask_add_epi64(a, (k & 0xff) as __mmask8, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
    unsafe fn or_where(a: __m512i, k: u64, b: __m512i) -> __m512i {
        _mm512_mask_or_epi64(a, (k & 0xff) as __mmask8, a, b)
    }
}

/// The fixed-window exponentiation on `K` independent (modulus, base, exponent) triples at once, `N` digits in
/// `V` vectors of width `T`.
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
#[allow(clippy::needless_range_loop)] // k indexes the K triples' arrays in step
unsafe fn pow_n<T: Lanes, const N: usize, const V: usize, const K: usize>(
    ctx: &[&IfmaCtx; K],
    base: &[&[u64]; K],
    exp: &[&[u64]; K],
    out: &mut [Digits; K],
) {
    assert!(N <= T::L * V && T::L * V <= CAP && T::L * (V - 1) < N);
    let m: [Digits; K] = core::array::from_fn(|k| ctx[k].m);
    let k0: [u64; K] = core::array::from_fn(|k| ctx[k].k0);
    let rr: [Digits; K] = core::array::from_fn(|k| ctx[k].rr);
    let mut one = [Digits::ZERO; K];
    for o in one.iter_mut() {
        o.0[0] = 1;
    }
    let tsize = 1usize << W;
    // table[i][k]: base_k^i · R mod m_k (below 2m_k)
    let mut table: Vec<[Digits; K]> = vec![[Digits::ZERO; K]; tsize];
    let mut b = [Digits::ZERO; K];
    for k in 0..K {
        b[k] = Digits::from_limbs(base[k], N);
    }
    // SAFETY: this function's target features are the ones `amm` needs (as for every call below); every Digits
    // holds CAP ≥ L·V aligned words (asserted above).
    unsafe {
        amm::<T, N, V, K>(&mut table[0], &rr, &one, &m, &k0); // R mod m
        amm::<T, N, V, K>(&mut table[1], &b, &rr, &m, &k0); // base·R mod m
        for i in 2..tsize {
            let (lo, hi) = table.split_at_mut(i);
            amm::<T, N, V, K>(&mut hi[0], &lo[i - 1], &lo[1], &m, &k0);
        }
    }
    let nbits = exp[0].len() * 64;
    let nwin = nbits.div_ceil(W).max(1);
    let window = |k: usize, w: usize| {
        let mut idx = 0u64;
        for bit_in in 0..W {
            let bit = w * W + bit_in;
            if bit < nbits {
                idx |= ((exp[k][bit / 64] >> (bit % 64)) & 1) << bit_in;
            }
        }
        idx
    };
    // The top window starts the accumulator straight from the table (R·base^idx, what squaring R and
    // multiplying by the entry would give).
    let mut acc = [Digits::ZERO; K];
    for k in 0..K {
        // SAFETY: as above.
        unsafe { select::<T, V, K>(&mut acc[k], &table, k, window(k, nwin - 1)) };
    }
    let mut sel = [Digits::ZERO; K];
    for w in (0..nwin - 1).rev() {
        for _ in 0..W {
            // SAFETY: as above.
            let r = unsafe { amm_regs::<T, N, V, K>(&acc, &acc, &m, &k0) };
            // SAFETY: as above.
            unsafe { store::<T, V, K>(&mut acc, &r) };
        }
        for k in 0..K {
            // SAFETY: as above.
            unsafe { select::<T, V, K>(&mut sel[k], &table, k, window(k, w)) };
        }
        // SAFETY: as above.
        let r = unsafe { amm_regs::<T, N, V, K>(&acc, &sel, &m, &k0) };
        // SAFETY: as above.
        unsafe { store::<T, V, K>(&mut acc, &r) };
    }
    // Out of the domain: acc·1·R^-1, at most m.
    // SAFETY: as above.
    unsafe { amm::<T, N, V, K>(out, &acc, &one, &m, &k0) };
    for entry in table.iter_mut() {
        entry.zeroize();
    }
    acc.zeroize();
    sel.zeroize();
    b.zeroize();
}

/// `out = table[idx][k]`, reading every entry (constant time in `idx`). Writes the first L·V words of `out`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
unsafe fn select<T: Lanes, const V: usize, const K: usize>(
    out: &mut Digits,
    table: &[[Digits; K]],
    k: usize,
    idx: u64,
) {
    // SAFETY: this function's target features are the ones `T`'s operations need; `entry[k]` and `out` are
    // 64-byte-aligned Digits of CAP ≥ L·V words (the caller's contract) and vector v covers words Lv..Lv+L.
    unsafe {
        let mut acc = [T::splat(0); V];
        let want = T::splat(idx);
        for (i, entry) in table.iter().enumerate() {
            let here = T::eq(T::splat(i as u64), want);
            for (v, a) in acc.iter_mut().enumerate() {
                let x = T::load(entry[k].0.as_ptr().add(T::L * v));
                *a = T::or_where(*a, here, x);
            }
        }
        for (v, a) in acc.iter().enumerate() {
            T::store(out.0.as_mut_ptr().add(T::L * v), *a);
        }
    }
}

/// The almost Montgomery product of `K` independent triples: `out_k = a_k·b_k·R^-1 mod m_k`, below 2m_k for
/// inputs below 2m_k (R = 2^(52N) > 4m_k), as normalised digits. Digits N.. of every input are zero; the first
/// L·V words of `out` are written (digits N.. zero), the rest are left as they are.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
unsafe fn amm<T: Lanes, const N: usize, const V: usize, const K: usize>(
    out: &mut [Digits; K],
    a: &[Digits; K],
    b: &[Digits; K],
    m: &[Digits; K],
    k0: &[u64; K],
) {
    // SAFETY: this function's target features are the ones `amm_regs` and `store` need; the Digits sizes are
    // the caller's contract.
    unsafe {
        let r = amm_regs::<T, N, V, K>(a, b, m, k0);
        store::<T, V, K>(out, &r);
    }
}

/// Writes the first L·V words of each `out_k` from vectors.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
unsafe fn store<T: Lanes, const V: usize, const K: usize>(out: &mut [Digits; K], r: &[[T::V; V]; K]) {
    for (o, rk) in out.iter_mut().zip(r) {
        for (v, x) in rk.iter().enumerate() {
            // SAFETY: 64-byte-aligned Digits of CAP ≥ L·V words (the caller's contract); vector v covers words
            // Lv..Lv+L.
            unsafe { T::store(o.0.as_mut_ptr().add(T::L * v), *x) };
        }
    }
}

/// The product of [`amm`], returned in vector registers (digits N.. zero), so that the caller stores it with
/// full-width stores: the next product reads it with vector loads, which the core forwards from same-width
/// stores (not from the 8-byte stores of a scalar carry pass). `a` and `b` may be the caller's destination:
/// they are read before the caller writes. Always inlined (with the `Amm` methods), so that the callers' target
/// features apply and the product is not returned through memory.
///
/// # Safety
/// The caller enables AVX512F, AVX512VL and AVX512IFMA; the Digits hold CAP ≥ L·V words.
#[inline(always)]
unsafe fn amm_regs<T: Lanes, const N: usize, const V: usize, const K: usize>(
    a: &[Digits; K],
    b: &[Digits; K],
    m: &[Digits; K],
    k0: &[u64; K],
) -> [[T::V; V]; K] {
    // SAFETY: this function's target features are the ones `Amm` needs; the Digits are the caller's contract.
    unsafe {
        let mut run: [Amm<T, V>; K] = core::array::from_fn(|_| Amm::new());
        for i in 0..N {
            for k in 0..K {
                run[k].step(&a[k], &m[k], k0[k], &b[k], i);
            }
        }
        let mut out = [[T::splat(0); V]; K];
        for k in 0..K {
            out[k] = run[k].finish();
        }
        out
    }
}

/// One almost Montgomery product `a·b·R^-1 mod m` in flight, in registers: the accumulator and its exact lane 0. [`amm_regs`] runs the steps of `K` products side by side.
///
/// A step is word-serial (as CIOS): add the low halves of `a·b_i`, derive u from lane 0, add the low halves of
/// `u·m`, drop lane 0 (now a multiple of 2^52) by shifting every lane down one, then add the high halves of both
/// products, which belong one lane up and so land in place. Lane 0 lives in a scalar register (`low`, its exact
/// value). The vector lane 0 is never read (it gets the same low and high halves the scalar adds, and is dropped
/// by the next shift). The next step's lane 0 is this step's lane 1 after its low halves: the lane as the step
/// starts (read before this step's products, so it waits on the previous step only) plus lo52(a_1·b_i) +
/// lo52(m_1·u), added in scalar ([`lane0_step`]).
struct Amm<T: Lanes, const V: usize> {
    acc: [T::V; V],
    low: u64,
}

impl<T: Lanes, const V: usize> Amm<T, V> {
    /// A product with a zero accumulator, before its first step.
    ///
    /// # Safety
    /// The caller enables AVX512F, AVX512VL and AVX512IFMA.
    #[inline(always)]
    unsafe fn new() -> Self {
        // SAFETY: the caller enables the target features `T::splat` needs.
        let zero = unsafe { T::splat(0) };
        Amm { acc: [zero; V], low: 0 }
    }

    /// Step `i`: the multiplier digit `b_i` (`i < N`), the same `a`, `b`, `m` and `k0 = −m^-1 mod 2^52` at every
    /// step. `b_i` is broadcast from memory (a load) rather than from a register (two vector operations on the
    /// ports the products use): measured on Zen 4, RSA-2048 private operations 1.3% faster. `u`, computed in a
    /// register, is broadcast from it: through memory it waits on a store, which put 12% on the same operations.
    ///
    /// # Safety
    /// As [`new`](Self::new).
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // lanes shift across neighbouring vectors: acc[v + 1] into acc[v]
    unsafe fn step(&mut self, a: &Digits, m: &Digits, k0: u64, b: &Digits, i: usize) {
        // SAFETY: the caller enables the target features `T`'s operations need; `a`, `m` and `b` are 64-byte-
        // aligned Digits of CAP ≥ L·V words (the caller's contract) and vector v covers words Lv..Lv+L (loads the
        // compiler hoists out of the caller's step loop).
        unsafe {
            let acc = &mut self.acc;
            let av: [T::V; V] = core::array::from_fn(|v| T::load(a.0.as_ptr().add(T::L * v)));
            let mv: [T::V; V] = core::array::from_fn(|v| T::load(m.0.as_ptr().add(T::L * v)));
            let bi = b.0[i];
            let bv = T::splat_mem(b.0.as_ptr().add(i));
            let (u, next) = lane0_step(self.low, bi, &a.0, &m.0, k0, T::lane1(acc[0]));
            let uv = T::splat(u);
            for v in 0..V {
                acc[v] = T::madd_lo(acc[v], av[v], bv);
                acc[v] = T::madd_lo(acc[v], mv[v], uv);
            }
            // Drop lane 0 (its value is a multiple of 2^52, carried in `next`) and shift every lane down.
            for v in 0..V - 1 {
                acc[v] = T::down1(acc[v + 1], acc[v]);
            }
            acc[V - 1] = T::down1(T::splat(0), acc[V - 1]);
            self.low = next;
            // The high halves belong one lane up: after the shift, in place (lane 0's are already in `next`).
            for v in 0..V {
                acc[v] = T::madd_hi(acc[v], av[v], bv);
                acc[v] = T::madd_hi(acc[v], mv[v], uv);
            }
        }
    }

    /// The product after its N steps, as normalised digits (digits N.. zero).
    ///
    /// # Safety
    /// As [`new`](Self::new).
    #[inline(always)]
    unsafe fn finish(&mut self) -> [T::V; V] {
        // SAFETY: the caller enables the target features `T`'s operations and `normalise` need.
        unsafe {
            self.acc[0] = T::set_lane0(self.acc[0], self.low);
            let r = normalise::<T, V>(&self.acc);
            self.low = 0;
            r
        }
    }
}

/// The scalar part of one [`Amm::step`]: from the exact lane 0 `low`, the multiplier digit `bi`, the
/// lowest two digits of `a` and `m`, `k0` and the lane 1 of the accumulator as the step starts, returns the
/// reduction digit `u = (low + a_0·b_i)·k0 mod 2^52` and the next step's lane 0: the carry out of lane 0
/// (`(low + a_0·b_i + m_0·u) / 2^52`, exact, from the full 104-bit products) plus lane 1 with its low halves
/// `lo52(a_1·b_i) + lo52(m_1·u)`.
///
/// One `asm!` block, so that the two triples' steps stay in scalar registers: written in Rust, LLVM's SLP
/// vectoriser packed the two triples' scalars into vector lanes and put vector round trips on the serial path
/// (measured on Zen 4: RSA-2048 private operations 35% slower).
#[inline(always)]
fn lane0_step(low: u64, bi: u64, a: &[u64; CAP], m: &[u64; CAP], k0: u64, lane1: u64) -> (u64, u64) {
    let (u, next): (u64, u64);
    // SAFETY: register arithmetic and reads of a[0], a[1], m[0], m[1] (in bounds: CAP ≥ 2); `mulx` needs BMI2,
    // which every backend calling this requires (`Backend::Ifma`, `Backend::Ifma512`).
    unsafe {
        core::arch::asm!(
            "mov rdx, {bi}",
            "mulx {th}, {tl}, qword ptr [{a}]", // a_0·b_i
            "imul {bi}, qword ptr [{a} + 8]",   // a_1·b_i mod 2^64
            "add {tl}, {low}",
            "adc {th}, 0",                      // t = low + a_0·b_i
            "mov {u}, {tl}",
            "imul {u}, {k0}",
            "and {u}, {mask}",                  // u
            "mov rdx, {u}",
            "mulx {low}, {l2}, qword ptr [{m}]", // m_0·u
            "add {tl}, {l2}",
            "adc {th}, {low}",
            "shld {th}, {tl}, 12",              // (t + m_0·u) / 2^52
            "imul rdx, qword ptr [{m} + 8]",    // m_1·u mod 2^64
            "and rdx, {mask}",
            "and {bi}, {mask}",
            "add {th}, {lane1}",
            "add {th}, {bi}",
            "add {th}, rdx",
            bi = inout(reg) bi => _,
            low = inout(reg) low => _,
            a = in(reg) a.as_ptr(),
            m = in(reg) m.as_ptr(),
            k0 = in(reg) k0,
            lane1 = in(reg) lane1,
            mask = in(reg) M52,
            u = out(reg) u,
            th = out(reg) next,
            tl = out(reg) _,
            l2 = out(reg) _,
            out("rdx") _,
            options(pure, readonly, nostack),
        );
    }
    (u, next)
}

/// Carries lanes of up to 63 bits into 52-bit digits, in registers and constant time: each lane's bits 52.. are
/// added one lane up (one shift, mask and add per vector), which leaves lanes of at most 2^52 + 2^11, so each
/// passes on a carry of 0 or 1. A lane passes one on if it exceeds 2^52 − 1 (generates) or equals it and
/// receives one (propagates): with the generate and propagate lanes as bit masks g and p, the lanes that
/// receive one are `((g << 1) + p) ^ p` (the integer addition runs the carry chain), which are then
/// incremented and masked. A carry out of the top lane is dropped (the caller's value fits in L·V digits).
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
#[allow(clippy::needless_range_loop)] // v indexes the input, the result and the mask bits Lv..Lv+L in step
unsafe fn normalise<T: Lanes, const V: usize>(x: &[T::V; V]) -> [T::V; V] {
    debug_assert!(T::L * V <= 64);
    // SAFETY: this function's target features are the ones `T`'s operations need.
    unsafe {
        let m52 = T::splat(M52);
        let one = T::splat(1);
        let mut r = [T::splat(0); V];
        let mut below = T::splat(0);
        let (mut g, mut p) = (0u64, 0u64);
        for v in 0..V {
            let hi = T::shr52(x[v]);
            // [previous vector's top lane, lanes ..L−1 of this one]
            let up = T::up1(hi, below);
            below = hi;
            r[v] = T::add(T::and(x[v], m52), up);
            g |= T::gt(r[v], m52) << (T::L * v);
            p |= T::eq(r[v], m52) << (T::L * v);
        }
        let inc = (g << 1).wrapping_add(p) ^ p;
        for v in 0..V {
            r[v] = T::and(T::add_where(r[v], inc >> (T::L * v), one), m52);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;

    /// The digits `normalise::<T, V>` gives for the lanes `x`, read back from registers.
    fn normalised<T: Lanes, const V: usize>(backend: Checked<Backend>, x: &[u64]) -> Vec<u64> {
        assert!(backend.covers(Backend::Ifma) && x.len() == T::L * V && x.len() <= CAP);
        let mut d = Digits::ZERO;
        d.0[..x.len()].copy_from_slice(x);
        let mut out = [Digits::ZERO];
        // SAFETY: `backend` is a Checked covering Backend::Ifma (AVX512F, AVX512VL, AVX512IFMA); `d` and `out`
        // are 64-byte-aligned Digits of CAP ≥ L·V words.
        unsafe {
            let v: [T::V; V] = core::array::from_fn(|i| T::load(d.0.as_ptr().add(T::L * i)));
            let r = normalise::<T, V>(&v);
            store::<T, V, 1>(&mut out, &[r]);
        }
        out[0].0[..x.len()].to_vec()
    }

    /// `Σ x_j·2^(52j) mod 2^(52·len)` as 52-bit digits: what `normalise` must return.
    fn reference(x: &[u64]) -> Vec<u64> {
        let mut s = BigUint::from(0u8);
        for (j, &w) in x.iter().enumerate() {
            s += BigUint::from(w) << (52 * j);
        }
        (0..x.len())
            .map(|j| ((&s >> (52 * j)) & BigUint::from(M52)).to_u64_digits().first().copied().unwrap_or(0))
            .collect()
    }

    /// Lanes that exercise every carry path of `normalise`: random 60-bit lanes; a carry generated in the second
    /// pass and propagated through runs of 2^52 − 1 lanes across vector boundaries (to the top, where it is
    /// dropped); runs of 2^52 − 1 lanes that receive nothing; lanes whose high bits alone carry.
    fn cases(len: usize) -> Vec<Vec<u64>> {
        let mut seed = 0x6e6f_726d_616c_6973u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut out = Vec::new();
        for _ in 0..8 {
            out.push((0..len).map(|_| next() >> 4).collect());
        }
        for start in [0usize, 1, 3, 4, 7, 8, 15] {
            for run in [1usize, 4, 9, len] {
                let mut x: Vec<u64> = (0..len).map(|_| next() & M52 >> 1).collect();
                if start > 0 {
                    x[start - 1] = 1 << 52; // its high bit generates into `start` in the first pass
                }
                for lane in x.iter_mut().skip(start).take(run) {
                    *lane = M52;
                }
                out.push(x.clone());
                if start > 0 {
                    x[start - 1] = 0; // the same run without a carry into it
                    out.push(x);
                }
            }
        }
        out.push(vec![M52; len]);
        out.push(vec![(1 << 52) | M52; len]);
        out
    }

    #[test]
    fn normalise_carries_every_path() {
        let mut tested = 0;
        for backend in Checked::<Backend>::all().filter(|b| b.covers(Backend::Ifma)) {
            for x in cases(40) {
                let want = reference(&x);
                assert_eq!(normalised::<Y, 10>(backend, &x), want, "256-bit, {x:x?}");
                assert_eq!(normalised::<Z, 5>(backend, &x), want, "512-bit, {x:x?}");
            }
            for x in cases(24) {
                assert_eq!(normalised::<Z, 3>(backend, &x), reference(&x), "512-bit, {x:x?}");
            }
            tested += 1;
        }
        if crate::cpu::features().has(crate::cpu::Features::AVX512F | crate::cpu::Features::AVX512IFMA) {
            assert!(tested > 0, "the IFMA backends must be tested here");
        }
    }
}
