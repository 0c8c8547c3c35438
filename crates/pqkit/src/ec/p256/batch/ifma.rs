//! AVX-512 IFMA: eight P-256 verification sums u1·G + u2·Q at once, one signature per 64-bit lane, for
//! [`batch`](super).
//!
//! ## Field
//! An element is five `zmm` registers in radix 2^52 (register `i` holds limb `i` of the eight lanes), in
//! Montgomery form with R = 2^260. p ≡ −1 (mod 2^52), so a reduction round's quotient digit is the low limb
//! itself, and p's limbs (2^52 − 1, 2^44 − 1, 0, 2^36, 2^48 − 2^16) make the round cheap: the limb 2^52 − 1
//! becomes a carry, limb 2 is zero, limb 3 a shift.
//!
//! ## Bounds
//! Every element handed between operations is *normalised*: limbs 0–3 in [0, 2^52), limb 4 below 2^49, the
//! value below 2p. A multiply-add reads the low 52 bits of its operands, so normalised limbs are read whole.
//! - [`mul`] and [`square`]: for inputs below 2p the Montgomery product (a·b + q·p)/2^260 is below
//!   4p²/2^260 + p < 2p; the ten columns stay below 2^58 (at most ten terms below 2^52 each, and the
//!   reduction's additions).
//! - [`add`] and [`sub`] (as a − b + 2p): the limbwise result is carried with arithmetic shifts (limbs may be
//!   negative), giving a value in [0, 4p) with limbs 0–3 normalised, then [`fold`]ed below 2p.
//! - [`fold`]: with h = ⌊v/2^256⌋, v − h·p = (v mod 2^256) + h·(2^224 − 2^192 − 2^96 + 1) lies in
//!   [0, 2^256 + 2^228) ⊂ [0, 2p); h·p is subtracted limbwise by shifts and carried again.
//!
//! ## Points
//! Jacobian coordinates (x = X/Z², y = Y/Z³) with the a = −3 doubling, the mixed addition (affine G
//! multiples) and the full addition (Jacobian Q multiples). Every lane runs the same schedule; a zero digit
//! keeps the accumulator and an accumulator that is still the identity takes the table entry, both by mask.
//! The additions' exceptional cases (equal or opposite inputs) are not handled: they give Z = 0, which
//! every later doubling and addition keeps, and the caller re-verifies such a lane one at a time.
//!
//! ## Not constant time
//! Verification handles public data only (the key, the message, the signature), so table reads are
//! gathers at data-dependent indices; nothing secret passes through this module.
#![allow(unsafe_code)]
#![cfg_attr(not(feature = "alloc"), allow(dead_code))]

use crate::ec::p256::field::Fe as SoftFe;
use crate::ec::p256::point::{Aff, BASE_TABLE};
use core::arch::x86_64::*;

/// One field element of eight lanes (limb `i` of every lane in register `i`), and the moves in and out.
pub(crate) use crate::x86::zmm5::{Fe, LANES, load, splat, store};

const M52: u64 = (1 << 52) - 1;
const M48: u64 = (1 << 48) - 1;

/// 2p, normalised.
const TWO_P: [u64; 5] = [0xf_ffff_ffff_fffe, 0x1fff_ffff_ffff, 0, 0x20_0000_0000, 0x1_ffff_fffe_0000];
/// 2^520 mod p (the Montgomery form's R² for R = 2^260).
const R2: [u64; 5] = [0x300, 0xf_ffff_fff0_0000, 0xf_fffe_ffff_fffb, 0xf_dfff_ffff_ffff, 0x4ff_ffff];
/// 2^260 mod p: one in Montgomery form.
pub(crate) const ONE: [u64; 5] = [0x10, 0xf_0000_0000_0000, 0xf_ffff_ffff_ffff, 0xf_feff_ffff_ffff, 0xfffff];

/// The radix-2^52 limbs of a 4-limb value below 2^256.
pub(crate) const fn to_radix52(w: &[u64; 4]) -> [u64; 5] {
    [
        w[0] & M52,
        ((w[0] >> 52) | (w[1] << 12)) & M52,
        ((w[1] >> 40) | (w[2] << 24)) & M52,
        ((w[2] >> 28) | (w[3] << 36)) & M52,
        w[3] >> 16,
    ]
}

/// The value of normalised radix-2^52 limbs (below 2p < 2^257) reduced modulo p, as four 64-bit limbs.
pub(crate) fn canonical(l: &[u64; 5]) -> [u64; 4] {
    let w =
        [l[0] | (l[1] << 52), (l[1] >> 12) | (l[2] << 40), (l[2] >> 24) | (l[3] << 28), (l[3] >> 36) | (l[4] << 16)];
    let top = l[4] >> 48;
    let (d, borrow) = crate::ec::p256::field::sbb4(&w, &crate::ec::p256::field::P.m);
    // v = top·2^256 + w < 2p: v ≥ p exactly when top is set or w ≥ p.
    if top != 0 || borrow == 0 { d } else { w }
}

/// A portable field element (Montgomery form, R = 2^256) in the lane form (R = 2^260): times 16 mod p.
pub(crate) const fn from_soft(a: &SoftFe) -> [u64; 5] {
    let a2 = a.add(a);
    let a4 = a2.add(&a2);
    let a8 = a4.add(&a4);
    to_radix52(&a8.add(&a8).0)
}

/// The fixed-base table of u1·G in the lane form: `G_LANES[i][j]` = ((j + 1)·32^i·G).(x ‖ y), the rows of
/// the one-at-a-time fixed-base table converted by the compiler.
static G_LANES: [[[u64; 10]; 16]; 52] = g_lanes();

const fn g_lanes() -> [[[u64; 10]; 16]; 52] {
    let mut t = [[[0u64; 10]; 16]; 52];
    let mut i = 0;
    while i < 52 {
        let row: &[Aff; 16] = &BASE_TABLE[i];
        let mut j = 0;
        while j < 16 {
            let x = from_soft(&row[j].x);
            let y = from_soft(&row[j].y);
            let mut k = 0;
            while k < 5 {
                t[i][j][k] = x[k];
                t[i][j][5 + k] = y[k];
                k += 1;
            }
            j += 1;
        }
        i += 1;
    }
    t
}

#[inline]
#[target_feature(enable = "avx512f")]
fn constant(c: &[u64; 5]) -> Fe {
    core::array::from_fn(|i| splat(c[i]))
}

/// Carries limbs 0–3 into limb 4 with arithmetic shifts (limbs may be negative; the value must not be).
#[inline]
#[target_feature(enable = "avx512f")]
fn carry(mut r: Fe) -> Fe {
    let m52 = splat(M52);
    for i in 0..4 {
        let c = _mm512_srai_epi64::<52>(r[i]);
        r[i] = _mm512_and_si512(r[i], m52);
        r[i + 1] = _mm512_add_epi64(r[i + 1], c);
    }
    r
}

/// v − ⌊v/2^256⌋·p for a carried v below 2^262 (see the module docs): normalised.
#[inline]
#[target_feature(enable = "avx512f")]
fn fold(mut r: Fe) -> Fe {
    let h = _mm512_srli_epi64::<48>(r[4]);
    r[0] = _mm512_add_epi64(r[0], h);
    r[1] = _mm512_sub_epi64(r[1], _mm512_slli_epi64::<44>(h));
    r[3] = _mm512_sub_epi64(r[3], _mm512_slli_epi64::<36>(h));
    r[4] = _mm512_add_epi64(_mm512_and_si512(r[4], splat(M48)), _mm512_slli_epi64::<16>(h));
    carry(r)
}

/// `a + b`, normalised.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn add(a: &Fe, b: &Fe) -> Fe {
    fold(carry(core::array::from_fn(|i| _mm512_add_epi64(a[i], b[i]))))
}

/// `a − b` (as a + 2p − b), normalised.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn sub(a: &Fe, b: &Fe) -> Fe {
    fold(carry(core::array::from_fn(|i| _mm512_sub_epi64(_mm512_add_epi64(a[i], splat(TWO_P[i])), b[i]))))
}

/// Montgomery reduction of the ten columns `t` (below 2^58): (t + q·p)/2^260, normalised.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn redc(mut t: [__m512i; 10]) -> Fe {
    let (m52, p1, p4) = (splat(M52), splat((1 << 44) - 1), splat((1 << 48) - (1 << 16)));
    for i in 0..5 {
        // q = t[i] mod 2^52 (−p⁻¹ ≡ 1); t[i] + q·(2^52 − 1) = (⌊t[i]/2^52⌋ + q)·2^52.
        let q = _mm512_and_si512(t[i], m52);
        t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_add_epi64(_mm512_srli_epi64::<52>(t[i]), q));
        t[i + 1] = _mm512_madd52lo_epu64(t[i + 1], q, p1);
        t[i + 2] = _mm512_madd52hi_epu64(t[i + 2], q, p1);
        t[i + 3] = _mm512_add_epi64(t[i + 3], _mm512_and_si512(_mm512_slli_epi64::<36>(q), m52));
        t[i + 4] = _mm512_add_epi64(t[i + 4], _mm512_srli_epi64::<16>(q));
        t[i + 4] = _mm512_madd52lo_epu64(t[i + 4], q, p4);
        t[i + 5] = _mm512_madd52hi_epu64(t[i + 5], q, p4);
    }
    carry([t[5], t[6], t[7], t[8], t[9]])
}

/// `a · b / 2^260` mod p for normalised inputs, normalised.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn mul(a: &Fe, b: &Fe) -> Fe {
    redc(crate::x86::zmm5::mul_wide(a, b))
}

/// `a² / 2^260` mod p, normalised: the cross products once, doubled.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub(crate) fn square(a: &Fe) -> Fe {
    redc(crate::x86::zmm5::square_wide(a))
}

/// `a` in the lanes where `m` is set, else `b`.
#[inline]
#[target_feature(enable = "avx512f")]
fn blend(m: __mmask8, a: &Fe, b: &Fe) -> Fe {
    core::array::from_fn(|i| _mm512_mask_blend_epi64(m, b[i], a[i]))
}

/// A point in Jacobian coordinates, eight lanes.
#[derive(Clone, Copy)]
struct Jac {
    x: Fe,
    y: Fe,
    z: Fe,
}

impl Jac {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn blend(m: __mmask8, a: &Jac, b: &Jac) -> Jac {
        Jac { x: blend(m, &a.x, &b.x), y: blend(m, &a.y, &b.y), z: blend(m, &a.z, &b.z) }
    }
}

/// 2·P for a = −3 (3M + 5S): δ = Z², γ = Y², β = X·γ, α = 3(X − δ)(X + δ), X' = α² − 8β,
/// Y' = α(4β − X') − 8γ², Z' = 2·Y·Z. A Z of zero stays zero.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn double(p: &Jac) -> Jac {
    let delta = square(&p.z);
    let gamma = square(&p.y);
    let beta = mul(&p.x, &gamma);
    let a = mul(&sub(&p.x, &delta), &add(&p.x, &delta));
    let alpha = add(&a, &add(&a, &a));
    let b2 = add(&beta, &beta);
    let b4 = add(&b2, &b2);
    let x3 = sub(&square(&alpha), &add(&b4, &b4));
    let yz = mul(&p.y, &p.z);
    let z3 = add(&yz, &yz);
    let g2 = square(&gamma);
    let g4 = add(&g2, &g2);
    let g8 = add(&g4, &g4);
    let y3 = sub(&mul(&alpha, &sub(&b4, &x3)), &add(&g8, &g8));
    Jac { x: x3, y: y3, z: z3 }
}

/// P + (x, y) for an affine point (8M + 3S). Equal or opposite inputs give Z = 0 (the exceptional cases);
/// a Z of zero stays zero.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn add_affine(p: &Jac, x2: &Fe, y2: &Fe) -> Jac {
    let z1z1 = square(&p.z);
    let u2 = mul(x2, &z1z1);
    let s2 = mul(y2, &mul(&p.z, &z1z1));
    let h = sub(&u2, &p.x);
    let r = sub(&s2, &p.y);
    let hh = square(&h);
    let hhh = mul(&h, &hh);
    let v = mul(&p.x, &hh);
    let x3 = sub(&sub(&square(&r), &hhh), &add(&v, &v));
    let y3 = sub(&mul(&r, &sub(&v, &x3)), &mul(&p.y, &hhh));
    let z3 = mul(&p.z, &h);
    Jac { x: x3, y: y3, z: z3 }
}

/// P + Q, both Jacobian (12M + 4S). Equal or opposite inputs give Z = 0; a Z of zero stays zero.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn add_jac(p: &Jac, q: &Jac) -> Jac {
    let z1z1 = square(&p.z);
    let z2z2 = square(&q.z);
    let u1 = mul(&p.x, &z2z2);
    let u2 = mul(&q.x, &z1z1);
    let s1 = mul(&p.y, &mul(&q.z, &z2z2));
    let s2 = mul(&q.y, &mul(&p.z, &z1z1));
    let h = sub(&u2, &u1);
    let r = sub(&s2, &s1);
    let hh = square(&h);
    let hhh = mul(&h, &hh);
    let v = mul(&u1, &hh);
    let x3 = sub(&sub(&square(&r), &hhh), &add(&v, &v));
    let y3 = sub(&mul(&r, &sub(&v, &x3)), &mul(&s1, &hhh));
    let z3 = mul(&mul(&p.z, &q.z), &h);
    Jac { x: x3, y: y3, z: z3 }
}

/// The inputs of one lane: Q affine in the lane form, the signed radix-32 digits of u1 and u2 (52 each,
/// in [−16, 16]), and r and r + n as plain radix-2^52 values (r + n below 2^257).
#[derive(Clone, Copy)]
pub(crate) struct LaneInput {
    pub(crate) qx: [u64; 5],
    pub(crate) qy: [u64; 5],
    pub(crate) d1: [i8; 52],
    pub(crate) d2: [i8; 52],
    pub(crate) r: [u64; 5],
    pub(crate) rn: [u64; 5],
}

/// The results of one lane, each normalised (below 2p, Montgomery form): X and Z of u1·G + u2·Q
/// (Z = 0 for the identity or an exceptional case), r·Z² and (r + n)·Z².
#[derive(Clone, Copy, Default)]
pub(crate) struct LaneOutput {
    pub(crate) x: [u64; 5],
    pub(crate) z: [u64; 5],
    pub(crate) rz2: [u64; 5],
    pub(crate) rnz2: [u64; 5],
}

/// Eight verification sums, for a `Checked` proof of the IFMA batch backend.
pub(crate) fn verify8(
    backend: crate::dispatch::Checked<super::Backend>,
    inputs: &[LaneInput; LANES],
) -> [LaneOutput; LANES] {
    assert!(backend.covers(super::Backend::Ifma));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Ifma, so the CPU has AVX-512 F and
    // IFMA, the features `verify8_ifma` and everything it calls enable.
    unsafe { verify8_ifma(inputs) }
}

/// Digit `i` of every lane: |d| − 1 (0 for d = 0) as 64-bit lanes, and the masks "d < 0" and "d ≠ 0".
#[inline]
#[target_feature(enable = "avx512f")]
fn digit(d: &[[i8; 52]; LANES], i: usize) -> (__m512i, __mmask8, __mmask8) {
    let mut idx = [0i64; LANES];
    let (mut neg, mut nz) = (0u8, 0u8);
    for j in 0..LANES {
        let v = d[j][i];
        idx[j] = (v.unsigned_abs().max(1) - 1) as i64;
        neg |= ((v < 0) as u8) << j;
        nz |= ((v != 0) as u8) << j;
    }
    // SAFETY: `idx` is 64 readable bytes; unaligned load.
    (unsafe { _mm512_loadu_si512(idx.as_ptr().cast()) }, neg, nz)
}

/// Adds the table entry (already negated where the digit is) into `acc` where the digit is not zero: the
/// entry itself where `acc` is still the identity.
#[inline]
#[target_feature(enable = "avx512f")]
fn accumulate(acc: &mut Jac, inf: &mut __mmask8, sum: &Jac, entry: &Jac, nz: __mmask8) {
    let take_entry = nz & *inf;
    let take_sum = nz & !*inf;
    *acc = Jac::blend(take_sum, sum, acc);
    *acc = Jac::blend(take_entry, entry, acc);
    *inf &= !nz;
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn verify8_ifma(inputs: &[LaneInput; LANES]) -> [LaneOutput; LANES] {
    let zero = _mm512_setzero_si512();
    let zero_fe: Fe = [zero; 5];
    let one = constant(&ONE);
    let d1: [[i8; 52]; LANES] = core::array::from_fn(|j| inputs[j].d1);
    let d2: [[i8; 52]; LANES] = core::array::from_fn(|j| inputs[j].d2);

    // Q, 2Q, …, 16Q per lane, Jacobian, as table[k][coordinate][limb] = the eight lanes.
    let q = Jac { x: load(&inputs.map(|l| l.qx)), y: load(&inputs.map(|l| l.qy)), z: one };
    let mut table = [[[zero; 5]; 3]; 16];
    let mut t = q;
    for (k, row) in table.iter_mut().enumerate() {
        if k == 1 {
            t = double(&q);
        } else if k > 1 {
            t = add_affine(&t, &q.x, &q.y);
        }
        *row = [t.x, t.y, t.z];
    }
    let tbase: *const i64 = table.as_ptr().cast();
    let lane_ids = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);

    // u2·Q by Horner over the radix-32 digits, top first.
    let mut acc = Jac { x: one, y: one, z: one };
    let mut inf: __mmask8 = 0xff;
    for i in (0..52).rev() {
        if i != 51 {
            for _ in 0..5 {
                acc = double(&acc);
            }
        }
        let (idx, neg, nz) = digit(&d2, i);
        // Element (k, c, l) of lane j sits at 64-bit index ((k·3 + c)·5 + l)·8 + j.
        let base = _mm512_add_epi64(_mm512_mul_epu32(idx, splat(120)), lane_ids);
        let mut e = [[zero; 5]; 3];
        for (c, coord) in e.iter_mut().enumerate() {
            for (l, limb) in coord.iter_mut().enumerate() {
                let off = _mm512_add_epi64(base, splat(((c * 5 + l) * 8) as u64));
                // SAFETY: every index is below 16·120 (|d| − 1 ≤ 15), inside `table`.
                *limb = unsafe { _mm512_i64gather_epi64::<8>(off, tbase) };
            }
        }
        let ny = sub(&zero_fe, &e[1]);
        let entry = Jac { x: e[0], y: blend(neg, &ny, &e[1]), z: e[2] };
        let sum = add_jac(&acc, &entry);
        accumulate(&mut acc, &mut inf, &sum, &entry, nz);
    }
    let (acc_q, inf_q) = (acc, inf);

    // u1·G: one mixed addition per row of the fixed-base table, no doubling.
    let gbase: *const i64 = G_LANES.as_ptr().cast();
    let mut acc = Jac { x: one, y: one, z: one };
    let mut inf: __mmask8 = 0xff;
    for i in 0..52 {
        let (idx, neg, nz) = digit(&d1, i);
        // Element (i, k, c·5 + l) at 64-bit index (i·16 + k)·10 + c·5 + l.
        let base = _mm512_add_epi64(_mm512_mul_epu32(idx, splat(10)), splat((i * 160) as u64));
        let mut e = [[zero; 5]; 2];
        for (c, coord) in e.iter_mut().enumerate() {
            for (l, limb) in coord.iter_mut().enumerate() {
                let off = _mm512_add_epi64(base, splat((c * 5 + l) as u64));
                // SAFETY: every index is below 52·160, inside `G_LANES`.
                *limb = unsafe { _mm512_i64gather_epi64::<8>(off, gbase) };
            }
        }
        let ny = sub(&zero_fe, &e[1]);
        let y = blend(neg, &ny, &e[1]);
        let sum = add_affine(&acc, &e[0], &y);
        let entry = Jac { x: e[0], y, z: one };
        accumulate(&mut acc, &mut inf, &sum, &entry, nz);
    }
    let (acc_g, inf_g) = (acc, inf);

    // The sum; an identity part gives the other, both identities Z = 0.
    let sum = add_jac(&acc_q, &acc_g);
    let mut res = Jac::blend(inf_q, &acc_g, &sum);
    res = Jac::blend(inf_g & !inf_q, &acc_q, &res);
    res.z = blend(inf_q & inf_g, &zero_fe, &res.z);

    let r2 = constant(&R2);
    let z2 = square(&res.z);
    let rm = mul(&load(&inputs.map(|l| l.r)), &r2);
    let rnm = mul(&load(&inputs.map(|l| l.rn)), &r2);
    let rz2 = mul(&rm, &z2);
    let rnz2 = mul(&rnm, &z2);
    let (x, z, rz2, rnz2) = (store(&res.x), store(&res.z), store(&rz2), store(&rnz2));
    core::array::from_fn(|j| LaneOutput { x: x[j], z: z[j], rz2: rz2[j], rnz2: rnz2[j] })
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use super::*;
    use crate::ec::p256::field::{FieldArith, P, Soft, adc4};
    use std::vec::Vec;
    use std::{eprintln, vec};

    fn has_ifma() -> bool {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512ifma")
    }

    /// A few edge values (0, 1, p − 1, p, p + 1, 2^256 − 1, values near 2p and 2^256) and pseudo-random
    /// ones, as normalised lane-form limbs of values below 2p.
    fn values() -> Vec<[u64; 5]> {
        let p = P.m;
        let (pm1, _) = crate::ec::p256::field::sbb4(&p, &[1, 0, 0, 0]);
        let mut v: Vec<[u64; 5]> = vec![
            to_radix52(&[0; 4]),
            to_radix52(&[1, 0, 0, 0]),
            to_radix52(&pm1),
            to_radix52(&p),
            to_radix52(&adc4(&p, &[1, 0, 0, 0]).0),
            to_radix52(&[u64::MAX; 4]),
        ];
        // 2p − 1 and 2^256 + small: limb 4 carries bit 48.
        let mut twop_m1 = TWO_P;
        twop_m1[0] -= 1;
        v.push(twop_m1);
        v.push([5, 0, 0, 0, 1 << 48]);
        let mut s = 0x1234_5678_9abc_def1u64;
        for _ in 0..200 {
            let w: [u64; 4] = core::array::from_fn(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s
            });
            v.push(to_radix52(&w));
        }
        v
    }

    /// The portable element (R = 2^256) with the same field value as lane-form limbs (R = 2^260).
    fn soft_of(l: &[u64; 5]) -> SoftFe {
        // value·2^260 = (value·2^256)·16: divide the canonical lane value by 16 mod p (R⁻¹·R stays).
        let c = canonical(l);
        let inv16 = Soft::invert_vartime(&SoftFe::from_canonical_limbs([16, 0, 0, 0]));
        // c is value·2^260 mod p, i.e. the Montgomery form (R = 2^256) of value·16.
        Soft::mul(&SoftFe(c), &inv16)
    }

    fn normalised(l: &[u64; 5]) -> bool {
        l[..4].iter().all(|&x| x < 1 << 52) && l[4] < 1 << 49 && {
            // below 2p
            let w = [l[0] | (l[1] << 52), (l[1] >> 12) | (l[2] << 40), (l[2] >> 24) | (l[3] << 28), (l[3] >> 36)];
            let top = (l[4] << 16, l[4] >> 48);
            let w = [w[0], w[1], w[2], w[3] | top.0];
            let (_, b) = crate::ec::p256::field::sbb4(&w, &adc4(&P.m, &P.m).0);
            top.1 < 2 && (top.1 == 0 || b == 1)
        }
    }

    #[test]
    fn lane_field_matches_portable() {
        if !has_ifma() {
            eprintln!("no AVX-512 IFMA on this CPU: the lane field is not run here");
            return;
        }
        let v = values();
        let mut checked = 0;
        for chunk_a in v.chunks(LANES) {
            for chunk_b in v.rchunks(LANES) {
                if chunk_a.len() != LANES || chunk_b.len() != LANES {
                    continue;
                }
                let a: [[u64; 5]; LANES] = chunk_a.try_into().unwrap();
                let b: [[u64; 5]; LANES] = chunk_b.try_into().unwrap();
                // SAFETY: the CPU has AVX-512 F and IFMA (checked above).
                let (m, s, ad, sb) = unsafe {
                    let (fa, fb) = (load(&a), load(&b));
                    (store(&mul(&fa, &fb)), store(&square(&fa)), store(&add(&fa, &fb)), store(&sub(&fa, &fb)))
                };
                for j in 0..LANES {
                    let (sa, sbv) = (soft_of(&a[j]), soft_of(&b[j]));
                    for (what, got, want) in [
                        ("mul", m[j], Soft::mul(&sa, &sbv)),
                        ("square", s[j], Soft::sqr(&sa)),
                        ("add", ad[j], sa.add(&sbv)),
                        ("sub", sb[j], sa.sub(&sbv)),
                    ] {
                        assert!(normalised(&got), "{what} {:x?} {:x?}: not normalised {got:x?}", a[j], b[j]);
                        assert_eq!(soft_of(&got), want, "{what} {:x?} {:x?}", a[j], b[j]);
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000);
    }

    #[test]
    fn constants() {
        assert_eq!(canonical(&ONE), canonical(&from_soft(&SoftFe::ONE)));
        assert_eq!(canonical(&to_radix52(&P.m)), [0; 4]);
        assert_eq!(canonical(&TWO_P), P.m);
        assert_eq!(soft_of(&ONE), SoftFe::ONE);
        // R2 is R·R mod p: its lane-form value is R.
        assert_eq!(soft_of(&R2), SoftFe::from_canonical_limbs(canonical(&ONE)));
    }
}

#[cfg(test)]
mod point_tests {
    extern crate std;
    use super::*;
    use crate::ec::p256::field::{FieldArith, Soft};
    use crate::ec::p256::point;
    use crate::ec::p256::scalar::Scalar;

    /// The affine x of lane-form Jacobian (X, Z), or `None` for Z = 0.
    fn affine_x(x: &[u64; 5], z: &[u64; 5]) -> Option<[u64; 4]> {
        let to_soft = |l: &[u64; 5]| {
            let inv16 = Soft::invert_vartime(&SoftFe::from_canonical_limbs([16, 0, 0, 0]));
            Soft::mul(&SoftFe(canonical(l)), &inv16)
        };
        let (x, z) = (to_soft(x), to_soft(z));
        if z == SoftFe::ZERO {
            return None;
        }
        let zi = Soft::invert_vartime(&Soft::sqr(&z));
        Some(Soft::mul(&x, &zi).to_canonical_limbs())
    }

    #[test]
    fn lane_sums_match_portable() {
        if !(std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512ifma")) {
            std::eprintln!("no AVX-512 IFMA on this CPU: the lane sums are not run here");
            return;
        }
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let q = point::to_affine::<Soft>(&point::mul_base::<Soft>(&Scalar::from_canonical_limbs(&[12345, 0, 0, 0])))
            .unwrap();
        let cases: [(u64, u64); 4] = [(1, 0), (0, 1), (1, 1), (2, 3)];
        for &(m1, m2) in &cases {
            let scalars: [(Scalar, Scalar); LANES] = core::array::from_fn(|j| {
                let a = Scalar::from_canonical_limbs(&[next(), next(), next(), next() >> 1]);
                let b = Scalar::from_canonical_limbs(&[next(), next(), next(), next() >> 1]);
                let pick = |m: u64, v: Scalar| {
                    if m == 0 {
                        Scalar::from_canonical_limbs(&[0; 4])
                    } else if m == 1 {
                        v
                    } else {
                        Scalar::from_canonical_limbs(&[(j as u64 + 1) * m, 0, 0, 0])
                    }
                };
                (pick(m1, a), pick(m2, b))
            });
            let inputs: [LaneInput; LANES] = core::array::from_fn(|j| LaneInput {
                qx: from_soft(&q.x),
                qy: from_soft(&q.y),
                d1: point::signed_digits::<52>(&scalars[j].0.to_canonical_limbs(), 5),
                d2: point::signed_digits::<52>(&scalars[j].1.to_canonical_limbs(), 5),
                r: [0; 5],
                rn: [0; 5],
            });
            // SAFETY: the CPU has AVX-512 F and IFMA (checked above).
            let out = unsafe { verify8_ifma(&inputs) };
            for j in 0..LANES {
                let (u1, u2) = scalars[j];
                let want = point::to_affine::<Soft>(&point::add::<Soft>(
                    &point::mul_base::<Soft>(&u1),
                    &point::mul::<Soft>(&q, &u2),
                ))
                .map(|a| a.x.to_canonical_limbs());
                assert_eq!(affine_x(&out[j].x, &out[j].z), want, "case ({m1}, {m2}) lane {j}");
            }
        }
    }
}
