//! The AVX-512 IFMA backend of the RSA exponentiation: radix 2^52, one modulus limb per 64-bit lane, and the
//! two CRT halves computed in one loop.
//!
//! `vpmadd52luq` / `vpmadd52huq` add the low / high 52 bits of the 104-bit products of four lane pairs to four
//! 64-bit accumulators. A Montgomery product is word-serial (one multiplier digit b_i per step, as CIOS): per step,
//! add the low halves of `a·b_i`, derive the reduction digit u from lane 0 (scalar), add the low halves of `u·m`,
//! drop lane 0 (now a multiple of 2^52; its carry goes into the new lane 0) by shifting every lane down one
//! (`valignq`), then add the high halves of both products, which belong one lane up and so land in place. Lanes
//! are not carried between steps (each grows by less than 2^54 per step, so 40 steps stay below 2^60); one scalar
//! carry pass normalises the result to 52-bit limbs.
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
//! N = 20, 30 and 40 digits in 5, 8 and 10 256-bit vectors (AVX-512VL forms: Zen 4 runs two 256-bit IFMA
//! operations per cycle and one 512-bit one, so 256-bit vectors waste no lanes at N = 20, where 512-bit ones
//! would carry 24). Constant time: the step count, the window count and the table
//! scan depend on the (public) sizes only; the table is read by a full masked scan.
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
    // SAFETY: `backend` is a Checked covering Backend::Ifma, so the CPU has AVX512F and AVX512IFMA.
    unsafe { pow_k::<1>(&[ctx], &[base], &e, &mut out) };
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
    unsafe { pow_k::<2>(&ctx, &base, &exp, &mut out) };
    let r = [finish(ctx[0], &out[0]), finish(ctx[1], &out[1])];
    out.zeroize();
    r
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

/// Dispatches on the size to the fixed-size exponentiation.
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
unsafe fn pow_k<const K: usize>(ctx: &[&IfmaCtx; K], base: &[&[u64]; K], exp: &[&[u64]; K], out: &mut [Digits; K]) {
    match ctx[0].digits() {
        // SAFETY: this function's target features (the caller's proof) are the ones pow_n needs.
        20 => unsafe { pow_n::<20, 5, K>(ctx, base, exp, out) },
        // SAFETY: as above.
        30 => unsafe { pow_n::<30, 8, K>(ctx, base, exp, out) },
        // SAFETY: as above.
        _ => unsafe { pow_n::<40, 10, K>(ctx, base, exp, out) },
    }
}

/// The fixed-window exponentiation on `K` independent (modulus, base, exponent) triples at once, `N` digits in
/// `V` vectors.
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
#[allow(clippy::needless_range_loop)] // k indexes the K triples' arrays in step
unsafe fn pow_n<const N: usize, const V: usize, const K: usize>(
    ctx: &[&IfmaCtx; K],
    base: &[&[u64]; K],
    exp: &[&[u64]; K],
    out: &mut [Digits; K],
) {
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
    // SAFETY: this function's target features are the ones `amm` needs (as for every `amm*` call below).
    unsafe {
        amm::<N, V, K>(&mut table[0], &rr, &one, &m, &k0); // R mod m
        amm::<N, V, K>(&mut table[1], &b, &rr, &m, &k0); // base·R mod m
        for i in 2..tsize {
            let (lo, hi) = table.split_at_mut(i);
            amm::<N, V, K>(&mut hi[0], &lo[i - 1], &lo[1], &m, &k0);
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
        unsafe { select::<V, K>(&mut acc[k], &table, k, window(k, nwin - 1)) };
    }
    let mut sel = [Digits::ZERO; K];
    for w in (0..nwin - 1).rev() {
        for _ in 0..W {
            // SAFETY: as above.
            unsafe { amm_sqr::<N, V, K>(&mut acc, &m, &k0) };
        }
        for k in 0..K {
            // SAFETY: as above.
            unsafe { select::<V, K>(&mut sel[k], &table, k, window(k, w)) };
        }
        // SAFETY: as above.
        unsafe { amm_mul::<N, V, K>(&mut acc, &sel, &m, &k0) };
    }
    // Out of the domain: acc·1·R^-1, at most m.
    // SAFETY: as above.
    unsafe { amm::<N, V, K>(out, &acc, &one, &m, &k0) };
    for entry in table.iter_mut() {
        entry.zeroize();
    }
    acc.zeroize();
    sel.zeroize();
    b.zeroize();
}

/// `out = table[idx][k]`, reading every entry (constant time in `idx`).
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn select<const V: usize, const K: usize>(out: &mut Digits, table: &[[Digits; K]], k: usize, idx: u64) {
    let mut acc = [_mm256_setzero_si256(); V];
    let want = _mm256_set1_epi64x(idx as i64);
    for (i, entry) in table.iter().enumerate() {
        let here = _mm256_cmpeq_epi64_mask(_mm256_set1_epi64x(i as i64), want);
        for (v, a) in acc.iter_mut().enumerate() {
            // SAFETY: `entry[k]` is a 64-byte-aligned Digits of CAP ≥ 4V words; vector v covers words 4v..4v+4.
            let x = unsafe { _mm256_load_si256(entry[k].0.as_ptr().add(4 * v).cast()) };
            *a = _mm256_mask_or_epi64(*a, here, *a, x);
        }
    }
    for (v, a) in acc.iter().enumerate() {
        // SAFETY: as the load above, into `out`.
        unsafe { _mm256_store_si256(out.0.as_mut_ptr().add(4 * v).cast(), *a) };
    }
}

/// The almost Montgomery product of `K` independent triples: `out_k = a_k·b_k·R^-1 mod m_k`, below 2m_k for
/// inputs below 2m_k (R = 2^(52N) > 4m_k), as normalised digits. Digits N.. of every input are zero; the first
/// 4V words of `out` are written (digits N..4V zero), the rest are left as they are. `out` may be `a` or `b`
/// (see [`amm_regs`]).
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
unsafe fn amm<const N: usize, const V: usize, const K: usize>(
    out: &mut [Digits; K],
    a: &[Digits; K],
    b: &[Digits; K],
    m: &[Digits; K],
    k0: &[u64; K],
) {
    // SAFETY: this function's target features are the ones `amm_regs` needs.
    let r = unsafe { amm_regs::<N, V, K>(a, b, m, k0) };
    // SAFETY: as above.
    unsafe { store::<V, K>(out, &r) };
}

/// [`amm`] squaring in place: `x_k = x_k²·R^-1 mod m_k`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
unsafe fn amm_sqr<const N: usize, const V: usize, const K: usize>(x: &mut [Digits; K], m: &[Digits; K], k0: &[u64; K]) {
    // SAFETY: this function's target features are the ones `amm_regs` needs.
    let r = unsafe { amm_regs::<N, V, K>(x, x, m, k0) };
    // SAFETY: as above.
    unsafe { store::<V, K>(x, &r) };
}

/// [`amm`] multiplying in place: `x_k = x_k·b_k·R^-1 mod m_k`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
unsafe fn amm_mul<const N: usize, const V: usize, const K: usize>(
    x: &mut [Digits; K],
    b: &[Digits; K],
    m: &[Digits; K],
    k0: &[u64; K],
) {
    // SAFETY: this function's target features are the ones `amm_regs` needs.
    let r = unsafe { amm_regs::<N, V, K>(x, b, m, k0) };
    // SAFETY: as above.
    unsafe { store::<V, K>(x, &r) };
}

/// Writes the first 4V words of each `out_k` from vectors.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn store<const V: usize, const K: usize>(out: &mut [Digits; K], r: &[[__m256i; V]; K]) {
    for (o, rk) in out.iter_mut().zip(r) {
        for (v, x) in rk.iter().enumerate() {
            // SAFETY: 64-byte-aligned Digits of CAP ≥ 4V words; vector v covers words 4v..4v+4.
            unsafe { _mm256_store_si256(o.0.as_mut_ptr().add(4 * v).cast(), *x) };
        }
    }
}

/// The product of [`amm`], returned in vector registers (4 digits per vector, digits N..4V zero), so that the
/// caller stores it with full-width stores: the next product reads it with vector loads, which the core forwards
/// from same-width stores, not from the 8-byte stores of a scalar carry pass. Every read of `a` and `b` happens
/// before the caller writes the result.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
#[allow(clippy::needless_range_loop)] // the lanes are shifted across neighbouring vectors: acc[k][v + 1] into acc[k][v]
unsafe fn amm_regs<const N: usize, const V: usize, const K: usize>(
    a: &[Digits; K],
    b: &[Digits; K],
    m: &[Digits; K],
    k0: &[u64; K],
) -> [[__m256i; V]; K] {
    let zero = _mm256_setzero_si256();
    let mut acc = [[zero; V]; K];
    let mut av = [[zero; V]; K];
    let mut mv = [[zero; V]; K];
    for k in 0..K {
        for v in 0..V {
            // SAFETY: 64-byte-aligned Digits of CAP ≥ 4V words.
            unsafe {
                av[k][v] = _mm256_load_si256(a[k].0.as_ptr().add(4 * v).cast());
                mv[k][v] = _mm256_load_si256(m[k].0.as_ptr().add(4 * v).cast());
            }
        }
    }
    // Lane 0 lives in a scalar register: `low[k]` is its exact value. The vector lane 0 is never read (it gets the
    // same low and high halves the scalar adds, and is dropped by the next shift), so the serial path of a step is
    // scalar (add, multiply by k0, mask) plus one broadcast, the products by u, the shift and one lane extraction.
    let mut low = [0u64; K];
    for i in 0..N {
        for k in 0..K {
            let bi = b[k].0[i];
            let bv = _mm256_set1_epi64x(bi as i64);
            // Exact lane-0 sum with the full 104-bit products a_0·b_i and m_0·u: its high part is the carry into
            // lane 1 (the high halves of both products included).
            let t = low[k] as u128 + a[k].0[0] as u128 * bi as u128;
            let u = (t as u64).wrapping_mul(k0[k]) & M52;
            let uv = _mm256_set1_epi64x(u as i64);
            let carry = ((t + m[k].0[0] as u128 * u as u128) >> 52) as u64;
            for v in 0..V {
                acc[k][v] = _mm256_madd52lo_epu64(acc[k][v], av[k][v], bv);
                acc[k][v] = _mm256_madd52lo_epu64(acc[k][v], mv[k][v], uv);
            }
            // Drop lane 0 (its value is `carry`·2^52 in `t`), shift every lane down, read the new lane 0.
            for v in 0..V - 1 {
                acc[k][v] = _mm256_alignr_epi64::<1>(acc[k][v + 1], acc[k][v]);
            }
            acc[k][V - 1] = _mm256_alignr_epi64::<1>(zero, acc[k][V - 1]);
            low[k] = carry + _mm_cvtsi128_si64(_mm256_castsi256_si128(acc[k][0])) as u64;
            // The high halves belong one lane up: after the shift, in place (lane 0's are already in `carry`).
            for v in 0..V {
                acc[k][v] = _mm256_madd52hi_epu64(acc[k][v], av[k][v], bv);
                acc[k][v] = _mm256_madd52hi_epu64(acc[k][v], mv[k][v], uv);
            }
        }
    }
    for k in 0..K {
        acc[k][0] = _mm256_mask_set1_epi64(acc[k][0], 1, low[k] as i64);
        // SAFETY: this function's target features include the ones `normalise` needs.
        acc[k] = unsafe { normalise::<V>(&acc[k]) };
    }
    low.zeroize();
    acc
}

/// Carries lanes of up to 63 bits into 52-bit digits (4 per vector, digit j in lane j % 4 of vector j / 4), in
/// registers and constant time: each lane's bits 52.. are added one lane up (one shift, mask and add per vector),
/// which leaves lanes of at most 2^52 + 2^11, so each passes on a carry of 0 or 1. A lane passes one on if it
/// exceeds 2^52 − 1 (generates) or equals it and receives one (propagates): with the generate and propagate
/// lanes as bit masks g and p, the lanes that receive one are `((g << 1) + p) ^ p` (the integer addition runs
/// the carry chain), which are then incremented and masked. A carry out of the top lane is dropped (the value
/// fits in 4V digits).
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
#[allow(clippy::needless_range_loop)] // v indexes the input, the result and the mask bits 4v..4v+4 in step
unsafe fn normalise<const V: usize>(x: &[__m256i; V]) -> [__m256i; V] {
    const { assert!(V <= 16) };
    let m52 = _mm256_set1_epi64x(M52 as i64);
    let one = _mm256_set1_epi64x(1);
    let mut r = [_mm256_setzero_si256(); V];
    let mut below = _mm256_setzero_si256();
    let (mut g, mut p) = (0u64, 0u64);
    for v in 0..V {
        let hi = _mm256_srli_epi64::<52>(x[v]);
        // [previous vector's lane 3, lanes 0..3 of this one]
        let up = _mm256_alignr_epi64::<3>(hi, below);
        below = hi;
        r[v] = _mm256_add_epi64(_mm256_and_si256(x[v], m52), up);
        g |= (_mm256_cmpgt_epu64_mask(r[v], m52) as u64) << (4 * v);
        p |= (_mm256_cmpeq_epu64_mask(r[v], m52) as u64) << (4 * v);
    }
    let inc = (g << 1).wrapping_add(p) ^ p;
    for v in 0..V {
        let k = ((inc >> (4 * v)) & 0xf) as __mmask8;
        r[v] = _mm256_and_si256(_mm256_mask_add_epi64(r[v], k, r[v], one), m52);
    }
    r
}
