//! AVX-512 IFMA: eight X25519 Montgomery ladders at once, one operation per 64-bit lane, for
//! [`multi`](super::multi); its field arithmetic also serves the eight-lane fixed-base multiplication
//! (`ifma_edwards`).
//!
//! A field element is five `zmm` registers in radix 2^52: register `i` holds limb `i` of the eight
//! operations. `vpmadd52luq` / `vpmadd52huq` multiply the low 52 bits of two lanes and add the low or high 52
//! bits of the 104-bit product to a 64-bit accumulator, so a product is 25 low and 25 high multiply-adds into
//! ten column accumulators, folded with 2^260 ≡ 608 (mod p) and carried.
//!
//! ## Bounds
//! A multiply-add reads only the low 52 bits of its operands, so every element that is multiplied is
//! *carried*: limbs 0–3 below 2^52 and limb 4 below 2^47 + 2^8 (the value is below 2^256, not necessarily
//! below p). [`carry`] produces that form from limbs below 2^60: it first moves the bits of limb 4 above 2^47
//! (weight 2^255 ≡ 19) into limb 0, then carries limb 0 up to limb 4 in order, so each limb ends below 2^52
//! and limb 4 below 2^47 plus a carry below 2^8. Sums of two carried elements have limbs below 2^53;
//! differences are taken as `a + 2p − b`, limbwise non-negative because a carried limb 4 is below 2^48 − 2.
//! Product columns are below 2^56 (at most nine terms below 2^52); column 9 (the high half of limb 4 × limb 4)
//! is below 2^48. Columns 5–8 are split at 2^52: the low part times 608 is two more multiply-adds, the high
//! part (below 2^4) times 608 is exact in one low multiply-add; every folded limb stays below 2^58.
//!
//! ## Constant time
//! Every lane runs the same 255 ladder steps: the straight-line arithmetic above and, per step, a swap by a
//! mask made from the lane's scalar bit (`x ^= (x ^ y) & mask`). No branch or address depends on a scalar.
#![allow(unsafe_code)]
// The batch API (`x25519::derive_many`) needs `alloc`; without it this code is unused.
#![cfg_attr(not(feature = "alloc"), allow(dead_code))]

use super::lanes::{Backend, LANES, Projective, limbs52};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// One field element of eight operations (limb `i` of every lane in register `i`), and the moves in and out.
pub(super) use crate::x86::zmm5::{Fe, load, splat, store};

use super::lanes::M52;
const M47: u64 = (1 << 47) - 1;

/// The eight ladders `k[j]·u[j]` (scalars already clamped), as projective results (X : Z) per lane in radix
/// 2^52, for a `Checked` proof of [`Backend::Ifma`].
pub(super) fn ladder8(backend: Checked<Backend>, k: &[[u8; 32]; LANES], u: &[[u8; 32]; LANES]) -> [Projective; LANES] {
    assert!(backend.covers(Backend::Ifma));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Ifma, so the CPU has AVX-512 F and
    // IFMA, the features `ladder8_ifma` and everything it calls enable.
    unsafe { ladder8_ifma(k, u) }
}

/// The carried form (see the module docs) of an element whose limbs are below 2^60.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn carry(mut r: Fe) -> Fe {
    let (m52, m47) = (splat(M52), splat(M47));
    let c = _mm512_srli_epi64::<47>(r[4]);
    r[4] = _mm512_and_si512(r[4], m47);
    // 19·c = 16c + 2c + c.
    let c19 = _mm512_add_epi64(_mm512_add_epi64(_mm512_slli_epi64::<4>(c), _mm512_slli_epi64::<1>(c)), c);
    r[0] = _mm512_add_epi64(r[0], c19);
    for i in 0..4 {
        let c = _mm512_srli_epi64::<52>(r[i]);
        r[i] = _mm512_and_si512(r[i], m52);
        r[i + 1] = _mm512_add_epi64(r[i + 1], c);
    }
    r
}

/// `a + b`, carried.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn add(a: &Fe, b: &Fe) -> Fe {
    carry(core::array::from_fn(|i| _mm512_add_epi64(a[i], b[i])))
}

/// 2p in radix 2^52 (limbs 2^53 − 38, 2^53 − 2, 2^53 − 2, 2^53 − 2, 2^48 − 2).
const TWO_P: [u64; 5] = [(1 << 53) - 38, (1 << 53) - 2, (1 << 53) - 2, (1 << 53) - 2, (1 << 48) - 2];

/// `a − b` as `a + 2p − b`, carried (`b` carried, so every limb difference is non-negative).
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn sub(a: &Fe, b: &Fe) -> Fe {
    carry(core::array::from_fn(|i| _mm512_sub_epi64(_mm512_add_epi64(a[i], splat(TWO_P[i])), b[i])))
}

/// Folds the ten product columns `z` (below 2^56, `z[9]` below 2^52) to five limbs with 2^260 ≡ 608, and
/// carries them.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn reduce(z: [__m512i; 10]) -> Fe {
    let (m52, c608) = (splat(M52), splat(608));
    let mut r = [z[0], z[1], z[2], z[3], z[4]];
    let mut top = _mm512_setzero_si512();
    for k in 5..10 {
        let lo = _mm512_and_si512(z[k], m52);
        let hi = _mm512_srli_epi64::<52>(z[k]);
        r[k - 5] = _mm512_madd52lo_epu64(r[k - 5], lo, c608);
        if k < 9 {
            r[k - 4] = _mm512_madd52hi_epu64(r[k - 4], lo, c608);
            r[k - 4] = _mm512_madd52lo_epu64(r[k - 4], hi, c608);
        } else {
            // Weight 2^260 again: below 2^10 (and `hi` is zero), folded once more below.
            top = _mm512_madd52hi_epu64(top, lo, c608);
        }
    }
    r[0] = _mm512_madd52lo_epu64(r[0], top, c608);
    carry(r)
}

/// `a · b` for carried `a` and `b`, carried.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub(super) fn mul(a: &Fe, b: &Fe) -> Fe {
    reduce(crate::x86::zmm5::mul_wide(a, b))
}

/// `a²` for carried `a`, carried: the cross products once, doubled.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub(super) fn square(a: &Fe) -> Fe {
    reduce(crate::x86::zmm5::square_wide(a))
}

/// `c + a24·e` for carried `c` and `e`, carried, with a24 = (486662 − 2)/4 = 121665.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn add_mul_a24(c: &Fe, e: &Fe) -> Fe {
    let (a24, c608) = (splat(121665), splat(608));
    let mut r = *c;
    let mut top = _mm512_setzero_si512();
    for i in 0..5 {
        r[i] = _mm512_madd52lo_epu64(r[i], e[i], a24);
        if i < 4 {
            r[i + 1] = _mm512_madd52hi_epu64(r[i + 1], e[i], a24);
        } else {
            top = _mm512_madd52hi_epu64(top, e[i], a24);
        }
    }
    // `top` (weight 2^260) is below 2^14.
    r[0] = _mm512_madd52lo_epu64(r[0], top, c608);
    carry(r)
}

/// Swaps `a` and `b` in the lanes where `mask` is all ones.
#[inline]
#[target_feature(enable = "avx512f")]
fn cswap(a: &mut Fe, b: &mut Fe, mask: __m512i) {
    for i in 0..5 {
        let t = _mm512_and_si512(_mm512_xor_si512(a[i], b[i]), mask);
        a[i] = _mm512_xor_si512(a[i], t);
        b[i] = _mm512_xor_si512(b[i], t);
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn ladder8_ifma(k: &[[u8; 32]; LANES], u: &[[u8; 32]; LANES]) -> [Projective; LANES] {
    // Scalar word `w` of every lane in register `w`.
    let mut words = [[0u64; LANES]; 4];
    for (j, kj) in k.iter().enumerate() {
        for (w, word) in words.iter_mut().enumerate() {
            word[j] = u64::from_le_bytes(kj[8 * w..8 * w + 8].try_into().unwrap_or([0; 8]));
        }
    }
    // SAFETY: each `words[w]` is 64 readable bytes; unaligned load.
    let kw: [__m512i; 4] = core::array::from_fn(|w| unsafe { _mm512_loadu_si512(words[w].as_ptr().cast()) });
    zeroize::Zeroize::zeroize(&mut words);

    let x1 = load(&u.map(|b| limbs52(&b)));
    let zero = _mm512_setzero_si512();
    let one: Fe = [splat(1), zero, zero, zero, zero];
    let (mut x2, mut z2) = (one, [zero; 5]);
    let (mut x3, mut z3) = (x1, one);
    let one64 = splat(1);
    let mut swap = zero;
    for t in (0..255usize).rev() {
        let shift = _mm_cvtsi64_si128((t & 63) as i64);
        let bit = _mm512_and_si512(_mm512_srl_epi64(kw[t >> 6], shift), one64);
        let mask = _mm512_sub_epi64(zero, _mm512_xor_si512(swap, bit));
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
    let mask = _mm512_sub_epi64(zero, swap);
    cswap(&mut x2, &mut x3, mask);
    cswap(&mut z2, &mut z3, mask);
    let (x, z) = (store(&x2), store(&z2));
    core::array::from_fn(|j| Projective { x: x[j], z: z[j] })
}
