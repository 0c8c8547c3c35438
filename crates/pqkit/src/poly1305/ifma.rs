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
//! lane sum is the serial Horner value. The incoming accumulator is added into lane 0 first. This is the
//! idea of OpenSSL's `vpmadd52` Poly1305 path, written independently.
//!
//! Bounds: between steps limbs are below (2^44, 2^44 + 2^13, 2^42); with a message block added they stay
//! below 2^46, and `20·r` limbs below 2^49, so products are below 2^95 and every sum fits 64 bits.
//! Inputs shorter than [`MIN_LEN`] and the final `< 8` blocks go to the portable code.
#![allow(unsafe_code)]

use super::Core;
use super::soft::{self, M42, M44};
use core::arch::x86_64::*;

/// Below this many bytes the scalar code is as fast as setting up the vectors.
const MIN_LEN: usize = 256;

/// Absorbs whole blocks (`data.len()` a multiple of 16).
///
/// Only called for states whose backend is `Ifma`, which `Poly1305::new_with_backend` selects only when the
/// CPU has AVX-512 F, VL and IFMA.
pub(super) fn blocks(core: &mut Core, data: &[u8]) {
    if data.len() < MIN_LEN {
        soft::blocks(&mut core.h, &core.r, data);
        return;
    }
    if !core.powers_ready {
        core.powers = powers(core.r);
        core.powers_ready = true;
    }
    let vec_len = data.len() & !127;
    // SAFETY: this backend is only selected when `cpu::features()` reports AVX-512 F and IFMA
    // (`Backend::is_available`).
    unsafe { blocks8(&mut core.h, &core.powers, &data[..vec_len]) };
    soft::blocks(&mut core.h, &core.r, &data[vec_len..]);
}

/// The table: `powers[8 * limb + j]` is limb `limb` of `r^(8 - j)`, so lane `j` of a vector load is the power
/// block `j` of a group of eight needs in the last step, and lane 0 is `r^8`.
fn powers(r: [u64; 3]) -> [u64; 24] {
    let mut by_exp = [r; 8]; // by_exp[k] = r^(k+1)
    for k in 1..8 {
        by_exp[k] = soft::mul(by_exp[k - 1], r);
    }
    let mut t = [0u64; 24];
    for j in 0..8 {
        for limb in 0..3 {
            t[8 * limb + j] = by_exp[7 - j][limb];
        }
    }
    t
}

/// Three radix-2^44 limb vectors.
type Limbs = [__m512i; 3];

/// `r` and its multiples `20·r1`, `20·r2`, one set of lanes.
struct Key {
    r: Limbs,
    s1: __m512i,
    s2: __m512i,
}

#[inline]
#[target_feature(enable = "avx512f")]
fn times20(x: __m512i) -> __m512i {
    _mm512_add_epi64(_mm512_slli_epi64::<4>(x), _mm512_slli_epi64::<2>(x))
}

#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn blocks8(h: &mut [u64; 3], table: &[u64; 24], data: &[u8]) {
    debug_assert!(data.len() % 128 == 0 && !data.is_empty());
    let m44 = _mm512_set1_epi64(M44 as i64);
    let m42 = _mm512_set1_epi64(M42 as i64);
    let hibit = _mm512_set1_epi64(1 << 40);
    let idx_lo = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    let idx_hi = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);

    let r8 = [table[0], table[8], table[16]].map(|x| x as i64);
    let step = Key {
        r: [_mm512_set1_epi64(r8[0]), _mm512_set1_epi64(r8[1]), _mm512_set1_epi64(r8[2])],
        s1: _mm512_set1_epi64(r8[1] * 20),
        s2: _mm512_set1_epi64(r8[2] * 20),
    };
    // SAFETY: `table` holds 24 u64, so each 8-lane unaligned load at offsets 0, 8, 16 is in bounds.
    let last_r = unsafe {
        [
            _mm512_loadu_si512(table.as_ptr().cast()),
            _mm512_loadu_si512(table.as_ptr().add(8).cast()),
            _mm512_loadu_si512(table.as_ptr().add(16).cast()),
        ]
    };
    let last = Key { r: last_r, s1: times20(last_r[1]), s2: times20(last_r[2]) };

    let [h0, h1, h2] = *h;
    let lane0 = |x: u64| _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, x as i64);
    let mut a = [lane0(h0), lane0(h1), lane0(h2)];

    let n = data.len() / 128;
    let p = data.as_ptr();
    for i in 0..n {
        // SAFETY: block group `i < n` spans bytes `128 i .. 128 i + 128` of `data`, which is `128 n` long.
        let (v0, v1) = unsafe {
            let q = p.add(128 * i);
            (_mm512_loadu_si512(q.cast()), _mm512_loadu_si512(q.add(64).cast()))
        };
        let lo = _mm512_permutex2var_epi64(v0, idx_lo, v1);
        let hi = _mm512_permutex2var_epi64(v0, idx_hi, v1);
        let m0 = _mm512_and_si512(lo, m44);
        let m1 = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64::<44>(lo), _mm512_slli_epi64::<20>(hi)), m44);
        let m2 = _mm512_or_si512(_mm512_srli_epi64::<24>(hi), hibit);
        a = [_mm512_add_epi64(a[0], m0), _mm512_add_epi64(a[1], m1), _mm512_add_epi64(a[2], m2)];
        a = mul(a, if i + 1 < n { &step } else { &last }, m44, m42);
    }

    let sum = [_mm512_reduce_add_epi64(a[0]), _mm512_reduce_add_epi64(a[1]), _mm512_reduce_add_epi64(a[2])];
    *h = soft::carry(sum.map(|x| x as u64));
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
