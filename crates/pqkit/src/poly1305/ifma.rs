//! AVX-512 IFMA Poly1305: radix 2^44, eight blocks in parallel.
//!
//! `vpmadd52luq` / `vpmadd52huq` multiply the low 52 bits of two 64-bit lanes and add the low or high 52 bits
//! of the 104-bit product to a 64-bit accumulator. With radix-2^44 limbs (44, 44, 42 bits) and the key
//! multiples `20·r1`, `20·r2` (2^132 ≡ 20 mod p) every operand fits in 52 bits, so one element product is
//! nine low and nine high multiply-adds. The high halves carry weight 2^52 = 2^44 · 2^8: they move one limb
//! up, shifted left by 8; the top one (weight 2^140 ≡ 5·2^10) folds back into limb 0.
//!
//! Eight accumulators run in the eight lanes of a zmm register (block `8i + j` in lane `j`) and each step
//! computes `a_j = (a_j + m_{8i+j}) · r^8`; the last step multiplies lane `j` by `r^(8-j)` instead, so the
//! lane sum is the serial Horner value. The incoming accumulator is added into lane 0 first. To hide the
//! multiply-add latency, two such accumulators run interleaved on alternate groups, stepping by `r^16`, and
//! merge before the last step (see [`blocks8`]). This is the idea of OpenSSL's `vpmadd52` Poly1305 path,
//! written independently.
//!
//! Bounds: between steps limbs are below (2^44, 2^44 + 2^13, 2^42) (the incoming accumulator's top limb below
//! 2^43); with a message block (and, at the merge, the second accumulator) added they stay below 2^46, and the
//! `20·r` limbs below 2^49, so products are below 2^95, high halves below 2^43, and every sum fits 64 bits.
//! Inputs shorter than [`MIN_LEN`] and the final `< 8` blocks go to the portable code.
#![allow(unsafe_code)]

use super::soft::{self, M42, M44};
use super::{Backend, Core, POWERS_LEN};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// Below this many bytes the scalar code is as fast as the vectors (measured on Sapphire Rapids); a state
/// that has already computed its powers of `r` pays less to enter, so its threshold is lower.
const MIN_LEN: usize = 384;
const MIN_LEN_READY: usize = 256;

/// Absorbs whole blocks (`data.len()` a multiple of 16) for a state whose (checked) backend is `Ifma`.
pub(super) fn blocks(backend: Checked<Backend>, core: &mut Core, data: &[u8]) {
    if data.len() < if core.powers_ready { MIN_LEN_READY } else { MIN_LEN } {
        soft::blocks(&mut core.h, &core.r, data);
        return;
    }
    let vec_len = data.len() & !127;
    assert!(backend.covers(Backend::Ifma));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Ifma, so the CPU has AVX-512 F and
    // IFMA, the features `powers` and `blocks8` (and everything in this file) enable.
    unsafe {
        if !core.powers_ready {
            powers(core.r, &mut core.powers);
            core.powers_ready = true;
        }
        blocks8(&mut core.h, &core.powers, &data[..vec_len]);
    }
    soft::blocks(&mut core.h, &core.r, &data[vec_len..]);
}

/// Fills the table for the clamped key `r`: `powers[8 * limb + j]` is limb `limb` of `r^(8 - j)`, so lane `j` of
/// a vector load is the power block `j` of a group of eight needs in the last step, and lane 0 is `r^8`;
/// `powers[24..27]` is `r^16`. Written in place: the table returned by value was copied into the state by a
/// `memcpy` call.
///
/// `r^2..r^4` come from the portable block step times the clamped `r` (four products and two small ones each,
/// fewer than a radix-2^44 product), `r^5..r^8 = r^4 · (r^1..r^4)` from one four-lane vector product, and
/// `r^16 = ((r^4)^2)^2` from two scalar radix-2^44 products that do not wait for the vector one.
#[target_feature(enable = "avx512f,avx512ifma")]
fn powers(r: [u64; 2], t: &mut [u64; POWERS_LEN]) {
    let r1 = [r[0], r[1], 0];
    let r2 = soft::absorb_words(r1, r, 0, 0, 0);
    let r3 = soft::absorb_words(r2, r, 0, 0, 0);
    let r4 = soft::absorb_words(r3, r, 0, 0, 0);
    // In radix 2^44 (h2 <= 4 above, so limbs below 2^44, 2^44 and 2^43: within `mul`'s and `mul44`'s bounds).
    let low = [r1, r2, r3, r4].map(soft::to44);
    let r8 = soft::mul44(low[3], low[3]);
    let r16 = soft::mul44(r8, r8);
    let lanes = |limb: usize| {
        let l = low.map(|p| p[limb] as i64);
        _mm512_set_epi64(0, 0, 0, 0, l[3], l[2], l[1], l[0])
    };
    let (m44, m42) = (_mm512_set1_epi64(M44 as i64), _mm512_set1_epi64(M42 as i64));
    let high = mul([lanes(0), lanes(1), lanes(2)], &Key::splat(low[3]), m44, m42);
    let mut high_limbs = [[0u64; 8]; 3];
    for (dst, v) in high_limbs.iter_mut().zip(high) {
        // SAFETY: `dst` is 64 writable bytes; unaligned store.
        unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), v) };
    }
    let mut by_exp = low; // by_exp[k] = r^(k+1), then r^(k+5) from the vector product
    for j in 0..4 {
        for limb in 0..3 {
            t[8 * limb + 7 - j] = by_exp[j][limb];
        }
    }
    for lane in 0..4 {
        by_exp[lane] = [high_limbs[0][lane], high_limbs[1][lane], high_limbs[2][lane]];
        for limb in 0..3 {
            t[8 * limb + 3 - lane] = by_exp[lane][limb];
        }
    }
    t[24..27].copy_from_slice(&r16);
}

/// Three radix-2^44 limb vectors.
type Limbs = [__m512i; 3];

/// `r` and its multiples `20·r1`, `20·r2`, one set of lanes.
struct Key {
    r: Limbs,
    s1: __m512i,
    s2: __m512i,
}

impl Key {
    /// The same power in every lane.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn splat(r: [u64; 3]) -> Key {
        let v = r.map(|x| _mm512_set1_epi64(x as i64));
        Key { r: v, s1: times20(v[1]), s2: times20(v[2]) }
    }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn times20(x: __m512i) -> __m512i {
    _mm512_add_epi64(_mm512_slli_epi64::<4>(x), _mm512_slli_epi64::<2>(x))
}

#[inline]
#[target_feature(enable = "avx512f")]
fn add(a: Limbs, b: Limbs) -> Limbs {
    [_mm512_add_epi64(a[0], b[0]), _mm512_add_epi64(a[1], b[1]), _mm512_add_epi64(a[2], b[2])]
}

/// Loads eight 16-byte blocks (block `j` into lane `j`) as radix-2^44 limbs with the 2^128 bit set.
///
/// # Safety
/// `p` must be valid for reading 128 bytes; the CPU must have AVX-512 F.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load8(p: *const u8) -> Limbs {
    // SAFETY: the caller guarantees 128 readable bytes at `p`; loads are unaligned.
    let (v0, v1) = unsafe { (_mm512_loadu_si512(p.cast()), _mm512_loadu_si512(p.add(64).cast())) };
    let lo = _mm512_permutex2var_epi64(v0, _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), v1);
    let hi = _mm512_permutex2var_epi64(v0, _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1), v1);
    let m44 = _mm512_set1_epi64(M44 as i64);
    [
        _mm512_and_si512(lo, m44),
        _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64::<44>(lo), _mm512_slli_epi64::<20>(hi)), m44),
        _mm512_or_si512(_mm512_srli_epi64::<24>(hi), _mm512_set1_epi64(1 << 40)),
    ]
}

/// Absorbs `data` (a non-empty multiple of 128 bytes: `n` groups of eight blocks) into `h`.
///
/// Two interleaved accumulators `a` (even groups) and `b` (odd groups) step by `r^16`, so two independent
/// multiply chains overlap. With `x` the merged accumulator, the tail uses: the value of the groups so far is
/// `Σ_j x_j r^(8-j)` where `x = (a + G) r^8 + (b + G')` for the last pair; a final odd group `G''` makes it
/// `Σ_j (x_j r^8 + G''_j) r^(8-j)`.
#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn blocks8(h: &mut [u64; 3], table: &[u64; POWERS_LEN], data: &[u8]) {
    debug_assert!(data.len().is_multiple_of(128) && !data.is_empty());
    let m44 = _mm512_set1_epi64(M44 as i64);
    let m42 = _mm512_set1_epi64(M42 as i64);

    let r8 = Key::splat([table[0], table[8], table[16]]);
    let r16 = Key::splat([table[24], table[25], table[26]]);
    // SAFETY: `table` holds 27 u64, so each 8-lane unaligned load at offsets 0, 8, 16 is in bounds.
    let last_r = unsafe {
        [
            _mm512_loadu_si512(table.as_ptr().cast()),
            _mm512_loadu_si512(table.as_ptr().add(8).cast()),
            _mm512_loadu_si512(table.as_ptr().add(16).cast()),
        ]
    };
    let last = Key { r: last_r, s1: times20(last_r[1]), s2: times20(last_r[2]) };

    let zero = _mm512_setzero_si512();
    let lane0 = |x: u64| _mm512_mask_set1_epi64(zero, 1, x as i64);
    let h44 = soft::to44(*h);
    let mut x = [lane0(h44[0]), lane0(h44[1]), lane0(h44[2])];

    let n = data.len() / 128;
    let p = data.as_ptr();
    // Every `load8(p.add(128 * i))` below has `i < n`, and `data` is `128 n` bytes long.
    if n >= 2 {
        let pairs = n / 2;
        let mut a = x;
        let mut b = [zero; 3];
        for k in 0..pairs - 1 {
            // SAFETY: blocks 2k and 2k + 1 < n, so both 128-byte loads are inside `data`; AVX-512 F is enabled.
            let (g0, g1) = unsafe { (load8(p.add(256 * k)), load8(p.add(256 * k + 128))) };
            a = mul(add(a, g0), &r16, m44, m42);
            b = mul(add(b, g1), &r16, m44, m42);
        }
        let k = pairs - 1;
        // SAFETY: as above, with 2k + 1 = 2 pairs - 1 < n.
        let (g0, g1) = unsafe { (load8(p.add(256 * k)), load8(p.add(256 * k + 128))) };
        x = add(add(mul(add(a, g0), &r8, m44, m42), b), g1);
        if n % 2 == 1 {
            x = mul(x, &r8, m44, m42);
        }
    }
    if n % 2 == 1 {
        // SAFETY: group n - 1 is the last 128 bytes of `data`.
        let g = unsafe { load8(p.add(128 * (n - 1))) };
        x = add(x, g);
    }
    x = mul(x, &last, m44, m42);

    let sum = [_mm512_reduce_add_epi64(x[0]), _mm512_reduce_add_epi64(x[1]), _mm512_reduce_add_epi64(x[2])];
    *h = soft::from44(sum.map(|v| v as u64));
}

/// Lane-wise `a · k mod p`, partially reduced (limbs below 2^44, 2^44 + 2^13, 2^42).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn mul(a: Limbs, k: &Key, m44: __m512i, m42: __m512i) -> Limbs {
    let z = _mm512_setzero_si512();
    let [a0, a1, a2] = a;
    let [r0, r1, r2] = k.r;
    let (s1, s2) = (k.s1, k.s2);
    // Column sums; `a2` first, it is the limb the previous step's carry chain finishes earliest.
    let lo0 = _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(_mm512_madd52lo_epu64(z, a2, s1), a0, r0), a1, s2);
    let hi0 = _mm512_madd52hi_epu64(_mm512_madd52hi_epu64(_mm512_madd52hi_epu64(z, a2, s1), a0, r0), a1, s2);
    let lo1 = _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(_mm512_madd52lo_epu64(z, a2, s2), a0, r1), a1, r0);
    let hi1 = _mm512_madd52hi_epu64(_mm512_madd52hi_epu64(_mm512_madd52hi_epu64(z, a2, s2), a0, r1), a1, r0);
    let lo2 = _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(_mm512_madd52lo_epu64(z, a2, r0), a0, r2), a1, r1);
    let hi2 = _mm512_madd52hi_epu64(_mm512_madd52hi_epu64(_mm512_madd52hi_epu64(z, a2, r0), a0, r2), a1, r1);

    // High halves move up one limb, times 2^8.
    let mut d0 = lo0;
    let mut d1 = _mm512_add_epi64(lo1, _mm512_slli_epi64::<8>(hi0));
    let mut d2 = _mm512_add_epi64(lo2, _mm512_slli_epi64::<8>(hi1));

    let c = _mm512_srli_epi64::<44>(d0);
    d0 = _mm512_and_si512(d0, m44);
    d1 = _mm512_add_epi64(d1, c);
    let c = _mm512_srli_epi64::<44>(d1);
    d1 = _mm512_and_si512(d1, m44);
    d2 = _mm512_add_epi64(d2, c);
    // Everything at 2^130 and above, in units of 2^130: d2's overflow plus hi2 · 2^10; folds back times 5.
    let c = _mm512_add_epi64(_mm512_srli_epi64::<42>(d2), _mm512_slli_epi64::<10>(hi2));
    d2 = _mm512_and_si512(d2, m42);
    d0 = _mm512_add_epi64(d0, _mm512_add_epi64(c, _mm512_slli_epi64::<2>(c)));
    let c = _mm512_srli_epi64::<44>(d0);
    d0 = _mm512_and_si512(d0, m44);
    d1 = _mm512_add_epi64(d1, c);
    [d0, d1, d2]
}
