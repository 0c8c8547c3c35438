//! AVX2: four X25519 Montgomery ladders at once, one operation per 64-bit lane of `ymm` registers, for
//! [`multi`](super::multi).
//!
//! A field element is ten `ymm` registers in radix 2^25.5: register `i` holds limb `i` of the four operations,
//! limb `i` of weight 2^⌈25.5·i⌉ (0, 26, 51, 77, …, 230) and 26 bits wide for even `i`, 25 for odd `i`.
//! `vpmuludq` multiplies the low 32 bits of each 64-bit lane into a 64-bit product, so a product is the 100
//! limb products summed into ten 64-bit columns: the terms that wrap past 2^255 are taken with the factor 19
//! (2^255 ≡ 19) folded into the second operand beforehand, and odd-by-odd terms, whose weights add up to one
//! more than the column's, with the first operand doubled. A square takes the 55 distinct products.
//!
//! ## Bounds
//! An element is *carried* when its even limbs are below 2^26 and its odd limbs below 2^25 + 2^17: what
//! [`carry`] gives for columns below 2^63, and what every product, square and [`add_mul_a24`] returns. Sums
//! of two carried elements ([`add`]) and differences `a + 2p − b` ([`sub`], limbwise non-negative because
//! the limbs of 2p are 2^27 − 38, 2^27 − 2 (even) and 2^26 − 2 (odd), above any carried limb) are multiplied
//! without carrying: their limbs are below 1.5·2^27 (even) and 1.5·2^26 (odd). So 19 times a limb is below
//! 2^32, as `vpmuludq` needs, every term of a column is below 19·(1.5·2^27)^2 < 2^59.5, and a column of ten
//! terms below 2^63.
//!
//! ## Constant time
//! Every lane runs the same 255 ladder steps: the straight-line arithmetic above and, per step, a swap by a
//! mask made from the lane's scalar bit (`x ^= (x ^ y) & mask`). No branch or address depends on a scalar.
#![allow(unsafe_code)]
// The batch API (`x25519::derive_many`) needs `alloc`; without it this code is unused.
#![cfg_attr(not(feature = "alloc"), allow(dead_code))]

use super::lanes::{Backend, M52, Projective};
use crate::dispatch::Checked;
use core::arch::x86_64::*;
use zeroize::Zeroize;

/// Operations per ladder: the four 64-bit lanes of a `ymm` register.
pub(super) const LANES: usize = 4;

/// One field element of four operations: limb `i` of every lane in register `i`.
pub(super) type Fe = [__m256i; 10];

/// The width of limb `i`: 26 bits for even `i`, 25 for odd.
const fn width(i: usize) -> u32 {
    if i.is_multiple_of(2) { 26 } else { 25 }
}

/// The weight of limb `i` as a power of two: ⌈25.5·i⌉.
const fn offset(i: usize) -> u32 {
    (51 * i as u32).div_ceil(2)
}

/// The four ladders `k[j]·u[j]` (scalars already clamped), as projective results (X : Z) per lane in radix
/// 2^52, for a `Checked` proof of [`Backend::Avx2`].
pub(super) fn ladder4(backend: Checked<Backend>, k: &[[u8; 32]; LANES], u: &[[u8; 32]; LANES]) -> [Projective; LANES] {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2, the
    // feature `ladder4_avx2` and everything it calls enable.
    unsafe { ladder4_avx2(k, u) }
}

/// The ten limbs of the u-coordinate `u` with bit 255 ignored (RFC 7748 §5), each within its width.
pub(super) fn limbs25(u: &[u8; 32]) -> [u64; 10] {
    let mut w: [u64; 4] =
        core::array::from_fn(|i| u64::from_le_bytes(u[8 * i..8 * i + 8].try_into().unwrap_or([0; 8])));
    w[3] &= u64::MAX >> 1;
    let l = core::array::from_fn(|i| {
        let (q, r) = ((offset(i) / 64) as usize, offset(i) % 64);
        let mut v = w[q] >> r;
        if r + width(i) > 64 {
            v |= w[q + 1] << (64 - r);
        }
        v & ((1u64 << width(i)) - 1)
    });
    w.zeroize();
    l
}

/// The radix-2^52 limbs (limbs 0–3 below 2^52, limb 4 below 2^48) of a value congruent to the element with
/// radix-2^25.5 limbs `l`, each below 2^62.
pub(super) fn limbs52_of(l: &[u64; 10]) -> [u64; 5] {
    let mut l = *l;
    // Two passes of carries, the first with the wrap 2^255 ≡ 19: then every limb is within its width except
    // limb 9, below 2^25 + 2, so the value is below 2^256.
    for pass in 0..2 {
        for i in 0..9 {
            let c = l[i] >> width(i);
            l[i] &= (1u64 << width(i)) - 1;
            l[i + 1] += c;
        }
        if pass == 0 {
            let c = l[9] >> 25;
            l[9] &= (1u64 << 25) - 1;
            l[0] += 19 * c;
        }
    }
    let mut w = [0u64; 4];
    for (i, &v) in l.iter().enumerate() {
        let (q, r) = ((offset(i) / 64) as usize, offset(i) % 64);
        w[q] |= v << r;
        // Limb 9 is at most 26 bits wide at offset 230: it ends at bit 256, inside the last word.
        if r != 0 && r + 26 > 64 && q + 1 < 4 {
            w[q + 1] |= v >> (64 - r);
        }
    }
    let r = [
        w[0] & M52,
        ((w[0] >> 52) | (w[1] << 12)) & M52,
        ((w[1] >> 40) | (w[2] << 24)) & M52,
        ((w[2] >> 28) | (w[3] << 36)) & M52,
        w[3] >> 16,
    ];
    l.zeroize();
    w.zeroize();
    r
}

#[inline]
#[target_feature(enable = "avx2")]
fn splat(x: u64) -> __m256i {
    _mm256_set1_epi64x(x as i64)
}

/// Limb `i` of every lane: `v[lane][i]` gathered into register `i`.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn load(v: &[[u64; 10]; LANES]) -> Fe {
    core::array::from_fn(|i| _mm256_set_epi64x(v[3][i] as i64, v[2][i] as i64, v[1][i] as i64, v[0][i] as i64))
}

/// The inverse of [`load`].
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn store(a: &Fe) -> [[u64; 10]; LANES] {
    let mut limbs = [[0u64; LANES]; 10];
    for (dst, v) in limbs.iter_mut().zip(a) {
        // SAFETY: `dst` is 32 writable bytes; unaligned store.
        unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), *v) };
    }
    let r = core::array::from_fn(|j| core::array::from_fn(|i| limbs[i][j]));
    limbs.zeroize();
    r
}

/// Moves the bits of limb `I` above its width into limb `I + 1` (`W` is the width of limb `I`).
#[inline]
#[target_feature(enable = "avx2")]
fn carry_one<const W: i32>(h: &mut Fe, i: usize) {
    let c = _mm256_srli_epi64::<W>(h[i]);
    h[i] = _mm256_and_si256(h[i], splat((1u64 << W) - 1));
    h[i + 1] = _mm256_add_epi64(h[i + 1], c);
}

/// The carried form (see the module docs) of an element whose limbs are below 2^63: two interleaved carry
/// chains (limbs 0–5 and 4–9), the top one wrapped into limb 0 with 2^255 ≡ 19.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn carry(mut h: Fe) -> Fe {
    carry_one::<26>(&mut h, 0);
    carry_one::<26>(&mut h, 4);
    carry_one::<25>(&mut h, 1);
    carry_one::<25>(&mut h, 5);
    carry_one::<26>(&mut h, 2);
    carry_one::<26>(&mut h, 6);
    carry_one::<25>(&mut h, 3);
    carry_one::<25>(&mut h, 7);
    carry_one::<26>(&mut h, 4);
    carry_one::<26>(&mut h, 8);
    // Limb 9's carry is below 2^39: 19·c = 16c + 2c + c, exact in 64 bits (vpmuludq would read 32).
    let c = _mm256_srli_epi64::<25>(h[9]);
    h[9] = _mm256_and_si256(h[9], splat((1 << 25) - 1));
    let c19 = _mm256_add_epi64(_mm256_add_epi64(_mm256_slli_epi64::<4>(c), _mm256_slli_epi64::<1>(c)), c);
    h[0] = _mm256_add_epi64(h[0], c19);
    carry_one::<26>(&mut h, 0);
    h
}

/// `a + b`, not carried (a multiplication operand; see the module docs).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn add(a: &Fe, b: &Fe) -> Fe {
    core::array::from_fn(|i| _mm256_add_epi64(a[i], b[i]))
}

/// The limbs of 2p: 2^27 − 38, then 2^26 − 2 (odd) and 2^27 − 2 (even).
const fn two_p(i: usize) -> u64 {
    if i == 0 { (1 << 27) - 38 } else { (1 << (width(i) + 1)) - 2 }
}

/// `a − b` as `a + 2p − b` for carried `b`, not carried (a multiplication operand).
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn sub(a: &Fe, b: &Fe) -> Fe {
    core::array::from_fn(|i| _mm256_sub_epi64(_mm256_add_epi64(a[i], splat(two_p(i))), b[i]))
}

/// `a + b` on one register.
#[inline]
#[target_feature(enable = "avx2")]
fn ad(a: __m256i, b: __m256i) -> __m256i {
    _mm256_add_epi64(a, b)
}

/// The 64-bit products of the low 32 bits of each lane.
#[inline]
#[target_feature(enable = "avx2")]
fn mu(a: __m256i, b: __m256i) -> __m256i {
    _mm256_mul_epu32(a, b)
}

/// `a · b` for operands carried, sums or differences (see the module docs), carried.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn mul(f: &Fe, g: &Fe) -> Fe {
    let n19 = splat(19);
    let g19: Fe = core::array::from_fn(|j| _mm256_mul_epu32(g[j], n19));
    let f2: Fe = core::array::from_fn(|i| _mm256_add_epi64(f[i], f[i]));
    // Column k: f[i]·g[j] over i + j ≡ k (mod 10), written out (a loop is not unrolled), each column a
    // balanced sum for a short dependency chain.
    let h: Fe = [
        ad(
            ad(
                ad(ad(mu(f[0], g[0]), mu(f2[1], g19[9])), ad(mu(f[2], g19[8]), mu(f2[3], g19[7]))),
                ad(ad(mu(f[4], g19[6]), mu(f2[5], g19[5])), ad(mu(f[6], g19[4]), mu(f2[7], g19[3]))),
            ),
            ad(mu(f[8], g19[2]), mu(f2[9], g19[1])),
        ),
        ad(
            ad(
                ad(ad(mu(f[0], g[1]), mu(f[1], g[0])), ad(mu(f[2], g19[9]), mu(f[3], g19[8]))),
                ad(ad(mu(f[4], g19[7]), mu(f[5], g19[6])), ad(mu(f[6], g19[5]), mu(f[7], g19[4]))),
            ),
            ad(mu(f[8], g19[3]), mu(f[9], g19[2])),
        ),
        ad(
            ad(
                ad(ad(mu(f[0], g[2]), mu(f2[1], g[1])), ad(mu(f[2], g[0]), mu(f2[3], g19[9]))),
                ad(ad(mu(f[4], g19[8]), mu(f2[5], g19[7])), ad(mu(f[6], g19[6]), mu(f2[7], g19[5]))),
            ),
            ad(mu(f[8], g19[4]), mu(f2[9], g19[3])),
        ),
        ad(
            ad(
                ad(ad(mu(f[0], g[3]), mu(f[1], g[2])), ad(mu(f[2], g[1]), mu(f[3], g[0]))),
                ad(ad(mu(f[4], g19[9]), mu(f[5], g19[8])), ad(mu(f[6], g19[7]), mu(f[7], g19[6]))),
            ),
            ad(mu(f[8], g19[5]), mu(f[9], g19[4])),
        ),
        ad(
            ad(
                ad(ad(mu(f[0], g[4]), mu(f2[1], g[3])), ad(mu(f[2], g[2]), mu(f2[3], g[1]))),
                ad(ad(mu(f[4], g[0]), mu(f2[5], g19[9])), ad(mu(f[6], g19[8]), mu(f2[7], g19[7]))),
            ),
            ad(mu(f[8], g19[6]), mu(f2[9], g19[5])),
        ),
        ad(
            ad(
                ad(ad(mu(f[0], g[5]), mu(f[1], g[4])), ad(mu(f[2], g[3]), mu(f[3], g[2]))),
                ad(ad(mu(f[4], g[1]), mu(f[5], g[0])), ad(mu(f[6], g19[9]), mu(f[7], g19[8]))),
            ),
            ad(mu(f[8], g19[7]), mu(f[9], g19[6])),
        ),
        ad(
            ad(
                ad(ad(mu(f[0], g[6]), mu(f2[1], g[5])), ad(mu(f[2], g[4]), mu(f2[3], g[3]))),
                ad(ad(mu(f[4], g[2]), mu(f2[5], g[1])), ad(mu(f[6], g[0]), mu(f2[7], g19[9]))),
            ),
            ad(mu(f[8], g19[8]), mu(f2[9], g19[7])),
        ),
        ad(
            ad(
                ad(ad(mu(f[0], g[7]), mu(f[1], g[6])), ad(mu(f[2], g[5]), mu(f[3], g[4]))),
                ad(ad(mu(f[4], g[3]), mu(f[5], g[2])), ad(mu(f[6], g[1]), mu(f[7], g[0]))),
            ),
            ad(mu(f[8], g19[9]), mu(f[9], g19[8])),
        ),
        ad(
            ad(
                ad(ad(mu(f[0], g[8]), mu(f2[1], g[7])), ad(mu(f[2], g[6]), mu(f2[3], g[5]))),
                ad(ad(mu(f[4], g[4]), mu(f2[5], g[3])), ad(mu(f[6], g[2]), mu(f2[7], g[1]))),
            ),
            ad(mu(f[8], g[0]), mu(f2[9], g19[9])),
        ),
        ad(
            ad(
                ad(ad(mu(f[0], g[9]), mu(f[1], g[8])), ad(mu(f[2], g[7]), mu(f[3], g[6]))),
                ad(ad(mu(f[4], g[5]), mu(f[5], g[4])), ad(mu(f[6], g[3]), mu(f[7], g[2]))),
            ),
            ad(mu(f[8], g[1]), mu(f[9], g[0])),
        ),
    ];
    carry(h)
}

/// `f²` for `f` carried, a sum or a difference, carried: the products of distinct limbs once, doubled.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn square(f: &Fe) -> Fe {
    let n19 = splat(19);
    let f19: Fe = core::array::from_fn(|j| _mm256_mul_epu32(f[j], n19));
    let f2: Fe = core::array::from_fn(|i| _mm256_add_epi64(f[i], f[i]));
    let f4: Fe = core::array::from_fn(|i| _mm256_add_epi64(f2[i], f2[i]));
    // Column k: f[i]² (2i ≡ k) and 2·f[i]·f[j] (i < j, i + j ≡ k), written out as in `mul`.
    let h: Fe = [
        ad(
            ad(ad(mu(f[0], f[0]), mu(f4[1], f19[9])), ad(mu(f2[2], f19[8]), mu(f4[3], f19[7]))),
            ad(mu(f2[4], f19[6]), mu(f2[5], f19[5])),
        ),
        ad(ad(ad(mu(f2[0], f[1]), mu(f2[2], f19[9])), ad(mu(f2[3], f19[8]), mu(f2[4], f19[7]))), mu(f2[5], f19[6])),
        ad(
            ad(ad(mu(f2[0], f[2]), mu(f2[1], f[1])), ad(mu(f4[3], f19[9]), mu(f2[4], f19[8]))),
            ad(mu(f4[5], f19[7]), mu(f[6], f19[6])),
        ),
        ad(ad(ad(mu(f2[0], f[3]), mu(f2[1], f[2])), ad(mu(f2[4], f19[9]), mu(f2[5], f19[8]))), mu(f2[6], f19[7])),
        ad(
            ad(ad(mu(f2[0], f[4]), mu(f4[1], f[3])), ad(mu(f[2], f[2]), mu(f4[5], f19[9]))),
            ad(mu(f2[6], f19[8]), mu(f2[7], f19[7])),
        ),
        ad(ad(ad(mu(f2[0], f[5]), mu(f2[1], f[4])), ad(mu(f2[2], f[3]), mu(f2[6], f19[9]))), mu(f2[7], f19[8])),
        ad(
            ad(ad(mu(f2[0], f[6]), mu(f4[1], f[5])), ad(mu(f2[2], f[4]), mu(f2[3], f[3]))),
            ad(mu(f4[7], f19[9]), mu(f[8], f19[8])),
        ),
        ad(ad(ad(mu(f2[0], f[7]), mu(f2[1], f[6])), ad(mu(f2[2], f[5]), mu(f2[3], f[4]))), mu(f2[8], f19[9])),
        ad(
            ad(ad(mu(f2[0], f[8]), mu(f4[1], f[7])), ad(mu(f2[2], f[6]), mu(f4[3], f[5]))),
            ad(mu(f[4], f[4]), mu(f2[9], f19[9])),
        ),
        ad(ad(ad(mu(f2[0], f[9]), mu(f2[1], f[8])), ad(mu(f2[2], f[7]), mu(f2[3], f[6]))), mu(f2[4], f[5])),
    ];
    carry(h)
}

/// `c + a24·e` for carried `c` and `e` a difference, carried, with a24 = (486662 − 2)/4 = 121665.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn add_mul_a24(c: &Fe, e: &Fe) -> Fe {
    let a24 = splat(121665);
    carry(core::array::from_fn(|i| _mm256_add_epi64(c[i], _mm256_mul_epu32(e[i], a24))))
}

/// Swaps `a` and `b` in the lanes where `mask` is all ones.
#[inline]
#[target_feature(enable = "avx2")]
fn cswap(a: &mut Fe, b: &mut Fe, mask: __m256i) {
    for i in 0..10 {
        let t = _mm256_and_si256(_mm256_xor_si256(a[i], b[i]), mask);
        a[i] = _mm256_xor_si256(a[i], t);
        b[i] = _mm256_xor_si256(b[i], t);
    }
}

#[target_feature(enable = "avx2")]
fn ladder4_avx2(k: &[[u8; 32]; LANES], u: &[[u8; 32]; LANES]) -> [Projective; LANES] {
    // Scalar word `w` of every lane in register `w`.
    let mut words = [[0u64; LANES]; 4];
    for (j, kj) in k.iter().enumerate() {
        for (w, word) in words.iter_mut().enumerate() {
            word[j] = u64::from_le_bytes(kj[8 * w..8 * w + 8].try_into().unwrap_or([0; 8]));
        }
    }
    // SAFETY: each `words[w]` is 32 readable bytes; unaligned load.
    let kw: [__m256i; 4] = core::array::from_fn(|w| unsafe { _mm256_loadu_si256(words[w].as_ptr().cast()) });
    words.zeroize();

    let x1 = load(&u.map(|b| limbs25(&b)));
    let zero = _mm256_setzero_si256();
    let one64 = splat(1);
    let mut one = [zero; 10];
    one[0] = one64;
    let (mut x2, mut z2) = (one, [zero; 10]);
    let (mut x3, mut z3) = (x1, one);
    let mut swap = zero;
    for t in (0..255usize).rev() {
        let shift = _mm_cvtsi64_si128((t & 63) as i64);
        let bit = _mm256_and_si256(_mm256_srl_epi64(kw[t >> 6], shift), one64);
        let mask = _mm256_sub_epi64(zero, _mm256_xor_si256(swap, bit));
        cswap(&mut x2, &mut x3, mask);
        cswap(&mut z2, &mut z3, mask);
        swap = bit;

        let a = add(&x2, &z2);
        let b = sub(&x2, &z2);
        let c = add(&x3, &z3);
        let d = sub(&x3, &z3);
        let aa = square(&a);
        let bb = square(&b);
        let da = mul(&d, &a);
        let cb = mul(&c, &b);
        let e = sub(&aa, &bb);
        x3 = square(&add(&da, &cb));
        z3 = mul(&x1, &square(&sub(&da, &cb)));
        x2 = mul(&aa, &bb);
        z2 = mul(&e, &add_mul_a24(&aa, &e));
    }
    let mask = _mm256_sub_epi64(zero, swap);
    cswap(&mut x2, &mut x3, mask);
    cswap(&mut z2, &mut z3, mask);
    let (mut x, mut z) = (store(&x2), store(&z2));
    let r = core::array::from_fn(|j| Projective { x: limbs52_of(&x[j]), z: limbs52_of(&z[j]) });
    x.zeroize();
    z.zeroize();
    r
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::ec::curve25519::field::Fe51;
    use crate::ec::curve25519::field::tests::{Xs, p};
    use num_bigint::BigUint;
    use std::{vec, vec::Vec};

    /// The value of radix-2^25.5 limbs, unreduced.
    fn value(l: &[u64; 10]) -> BigUint {
        l.iter().enumerate().fold(BigUint::from(0u8), |v, (i, &x)| v + (BigUint::from(x) << offset(i)))
    }

    /// The portable element with the value of `l` (reduced mod p first).
    fn portable(l: &[u64; 10]) -> Fe51 {
        let le = (value(l) % p()).to_bytes_le();
        let mut b = [0u8; 32];
        b[..le.len()].copy_from_slice(&le);
        Fe51::from_bytes(&b)
    }

    /// Limbs of a value below 2^255, each within its width.
    fn split(v: &BigUint) -> [u64; 10] {
        let mut b = [0u8; 32];
        let le = v.to_bytes_le();
        b[..le.len()].copy_from_slice(&le);
        limbs25(&b)
    }

    /// Whether `l` is carried (module docs): even limbs below 2^26, odd below 2^25 + 2^17.
    fn is_carried(l: &[u64; 10]) -> bool {
        l.iter().enumerate().all(|(i, &x)| x < if i % 2 == 0 { 1 << 26 } else { (1 << 25) + (1 << 17) })
    }

    /// Carried inputs: random values, edge values (0, 1, p − 1, p, 2^255 − 1 and others) and limbs at
    /// the carried bounds.
    fn carried_inputs() -> Vec<[u64; 10]> {
        let p = p();
        let one = BigUint::from(1u8);
        let mut v: Vec<[u64; 10]> = [
            BigUint::from(0u8),
            one.clone(),
            BigUint::from(2u8),
            &p - &one,
            p.clone(),
            &p + &one,
            (one.clone() << 255u32) - &one,
            (one.clone() << 255u32) - BigUint::from(20u8),
            (one.clone() << 128u32) - &one,
        ]
        .iter()
        .map(split)
        .collect();
        // Every limb at the top of its carried range, and alternating top and zero.
        let top: [u64; 10] =
            core::array::from_fn(|i| if i % 2 == 0 { (1 << 26) - 1 } else { (1 << 25) + (1 << 17) - 1 });
        v.push(top);
        v.push(core::array::from_fn(|i| if i % 3 == 0 { top[i] } else { 0 }));
        v.push(core::array::from_fn(|i| if i % 2 == 1 { top[i] } else { 0 }));
        let mut rng = Xs(0x0a72_5519);
        for _ in 0..40 {
            v.push(limbs25(&rng.bytes()));
        }
        for _ in 0..20 {
            // Random limbs anywhere in the carried range.
            v.push(core::array::from_fn(|i| rng.next() % (top[i] + 1)));
        }
        assert!(v.iter().all(is_carried));
        v
    }

    fn backend() -> Option<Checked<Backend>> {
        Checked::for_test(Backend::Avx2)
    }

    /// `f` on four lanes of inputs at once, through the AVX2 code.
    fn lanes<const N: usize>(
        b: Checked<Backend>,
        inputs: [&[[u64; 10]; LANES]; N],
        f: fn(&[Fe; N]) -> Fe,
    ) -> [[u64; 10]; LANES] {
        assert!(b.covers(Backend::Avx2));
        // SAFETY: `b` is a `Checked` covering Backend::Avx2, so the CPU has AVX2, the only feature `load`,
        // `store` and the functions under test (called by `f`) enable.
        unsafe { store(&f(&inputs.map(|x| load(x)))) }
    }

    /// Runs `op` over every combination of `xs` and `ys`, four at a time, checking each lane against `want`.
    fn check2(
        b: Checked<Backend>,
        xs: &[[u64; 10]],
        ys: &[[u64; 10]],
        op: fn(&[Fe; 2]) -> Fe,
        want: fn(&Fe51, &Fe51) -> Fe51,
        what: &str,
    ) {
        let pairs: Vec<_> = xs.iter().flat_map(|x| ys.iter().map(move |y| (*x, *y))).collect();
        for group in pairs.chunks(LANES) {
            let mut a = [[0u64; 10]; LANES];
            let mut c = [[0u64; 10]; LANES];
            for (j, (x, y)) in group.iter().enumerate() {
                a[j] = *x;
                c[j] = *y;
            }
            let r = lanes(b, [&a, &c], op);
            for (j, (x, y)) in group.iter().enumerate() {
                assert!(is_carried(&r[j]), "{what}: result not carried: {:?}", r[j]);
                assert_eq!(
                    portable(&r[j]).to_bytes(),
                    want(&portable(x), &portable(y)).to_bytes(),
                    "{what}: {x:?}, {y:?}"
                );
            }
        }
    }

    /// Sums and differences of carried inputs, the uncarried operands the ladder multiplies (largest at the
    /// bounds: top limbs plus top limbs, top limbs minus zero).
    fn sums_and_differences(b: Checked<Backend>, xs: &[[u64; 10]]) -> Vec<[u64; 10]> {
        let mut v = Vec::new();
        for g in xs.chunks(LANES).filter(|g| g.len() == LANES) {
            let a: [[u64; 10]; LANES] = core::array::from_fn(|j| g[j]);
            let r: [[u64; 10]; LANES] = core::array::from_fn(|j| g[(j + 1) % LANES]);
            let z = [[0u64; 10]; LANES];
            // SAFETY: only called through `lanes`, which checked AVX2.
            v.extend(lanes(b, [&a, &r], |x| unsafe { add(&x[0], &x[1]) }));
            // SAFETY: as above.
            v.extend(lanes(b, [&a, &a], |x| unsafe { add(&x[0], &x[1]) }));
            // SAFETY: as above.
            v.extend(lanes(b, [&a, &r], |x| unsafe { sub(&x[0], &x[1]) }));
            // SAFETY: as above.
            v.extend(lanes(b, [&a, &z], |x| unsafe { sub(&x[0], &x[1]) }));
        }
        v
    }

    #[test]
    fn limbs_round_trip() {
        let mut rng = Xs(0x1125_5190);
        let mut inputs = vec![[0u8; 32], [0xff; 32]];
        inputs.extend((0..100).map(|_| rng.bytes()));
        for u in inputs {
            let l = limbs25(&u);
            let mut clear = u;
            clear[31] &= 0x7f;
            assert_eq!(value(&l), BigUint::from_bytes_le(&clear), "limbs25 of {u:?}");
            let back = crate::ec::curve25519::lanes::fe_from_limbs52(&limbs52_of(&l));
            assert_eq!(back.to_bytes(), Fe51::from_bytes(&u).to_bytes(), "limbs52_of of {u:?}");
        }
        // Limbs far above their widths (up to 2^62) come back as the same value mod p.
        for _ in 0..100 {
            let l: [u64; 10] = core::array::from_fn(|_| rng.next() >> 2);
            let back = crate::ec::curve25519::lanes::fe_from_limbs52(&limbs52_of(&l));
            assert_eq!(back.to_bytes(), portable(&l).to_bytes());
        }
    }

    #[test]
    fn lane_field_matches_portable() {
        let Some(b) = backend() else { return };
        let xs = carried_inputs();
        let uncarried = sums_and_differences(b, &xs);
        // SAFETY: only called through `lanes`, which checked AVX2.
        check2(b, &xs, &xs, |x| unsafe { mul(&x[0], &x[1]) }, |a, c| a.mul(c), "mul");
        // SAFETY: only called through `lanes`, which checked AVX2.
        check2(b, &uncarried, &uncarried, |x| unsafe { mul(&x[0], &x[1]) }, |a, c| a.mul(c), "mul, sums/differences");
        // SAFETY: only called through `lanes`, which checked AVX2.
        check2(b, &uncarried, &xs, |x| unsafe { square(&x[0]) }, |a, _| a.square(), "square");
        // SAFETY: only called through `lanes`, which checked AVX2.
        check2(b, &xs, &xs, |x| unsafe { square(&x[0]) }, |a, _| a.square(), "square, carried");
        check2(
            b,
            &xs,
            &uncarried,
            // SAFETY: only called through `lanes`, which checked AVX2.
            |x| unsafe { add_mul_a24(&x[0], &x[1]) },
            |c, e| c.add(&e.mul_small(121665)),
            "add_mul_a24",
        );
        // SAFETY: only called through `lanes`, which checked AVX2.
        check2(b, &xs, &xs, |x| unsafe { carry(add(&x[0], &x[1])) }, |a, c| a.add(c), "add");
        // SAFETY: only called through `lanes`, which checked AVX2.
        check2(b, &xs, &xs, |x| unsafe { carry(sub(&x[0], &x[1])) }, |a, c| a.sub(c), "sub");
    }

    /// Columns at the bound the module docs give (just below 2^63) carry to the right value.
    #[test]
    fn carry_of_large_columns() {
        let Some(b) = backend() else { return };
        let mut rng = Xs(0xca77_0063);
        let mut cases: Vec<[u64; 10]> = vec![[(1 << 63) - 1; 10], [0; 10]];
        cases.extend((0..40).map(|_| core::array::from_fn(|_| rng.next() >> 1)));
        for g in cases.chunks(LANES) {
            let mut a = [[0u64; 10]; LANES];
            a[..g.len()].copy_from_slice(g);
            // SAFETY: only called through `lanes`, which checked AVX2.
            let r = lanes(b, [&a], |x| unsafe { carry(x[0]) });
            for j in 0..g.len() {
                assert!(is_carried(&r[j]), "{:?}", r[j]);
                assert_eq!(portable(&r[j]).to_bytes(), portable(&a[j]).to_bytes());
            }
        }
    }
}
