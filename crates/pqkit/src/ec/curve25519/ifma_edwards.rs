//! AVX-512 IFMA: eight fixed-base multiplications s·B at once, one operation per 64-bit lane, for
//! [`multi_ed`](super::multi_ed) (Ed25519 key generation and signing in bulk).
//!
//! The field is the radix-2^52 arithmetic of [`ifma`](super::ifma) (five `zmm` registers per element, limb `i`
//! of the eight lanes in register `i`; every result carried, so any result can be multiplied again). The group
//! formulas are those of [`edwards`](super::edwards): extended coordinates, additions of precomputed points
//! with Z = 1 cached as (y + x, y − x, 2d·x·y).
//!
//! ## The comb
//! The 64 signed radix-16 digits of each lane's scalar, in \[−8, 8\], as in the one-at-a-time
//! [`mul_base`](super::edwards::mul_base), over two tables: `j·256^i·B` for the even digits and
//! `j·16·256^i·B` for the odd ones (i < 32, 1 ≤ j ≤ 8), so that no doublings are needed. Every lane runs the
//! same 64 additions.
//!
//! ## Constant time
//! Each addition's operand is chosen per lane by a scan of the whole table row: all 8 entries are read (the
//! same addresses for every scalar, each limb broadcast to the eight lanes) and kept in the lanes whose digit
//! magnitude equals the entry's index (a `vpcmpeqq` mask), over the identity (1, 1, 0) for a digit 0; the
//! negation of a negative digit's entry is a masked blend as well. No branch or address depends on a scalar.
#![allow(unsafe_code)]
// The batch APIs need `alloc`; without it this code is unused.
#![cfg_attr(not(feature = "alloc"), allow(dead_code))]

use super::edwards::{AffineNiels, BASE_TABLE, BASE_TABLE_ODD, radix16};
use super::field::Fe51;
use super::ifma::{Fe, add, mul, splat, store, sub};
use super::lanes::{Backend, LANES, M52};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// A point of each lane in projective form (X : Y : Z), radix 2^52, carried (limbs 0–3 below 2^52, limb 4
/// below 2^48).
pub(super) type Xyz = [[u64; 5]; 3];

/// The radix-2^52 limbs of a canonical field element, at compile time.
const fn limbs52(f: Fe51) -> [u64; 5] {
    let b = f.to_bytes();
    let mut w = [0u64; 4];
    let mut i = 0;
    while i < 32 {
        w[i / 8] |= (b[i] as u64) << (8 * (i % 8));
        i += 1;
    }
    [
        w[0] & M52,
        ((w[0] >> 52) | (w[1] << 12)) & M52,
        ((w[1] >> 40) | (w[2] << 24)) & M52,
        ((w[2] >> 28) | (w[3] << 36)) & M52,
        w[3] >> 16,
    ]
}

/// `TABLE[i][j]` = (j + 1)·256^i·B as (y + x, y − x, 2d·x·y), each coordinate's five radix-2^52 limbs in turn
/// (canonical values, so limb 4 is below 2^47).
static TABLE: [[[u64; 15]; 8]; 32] = table(&BASE_TABLE);
/// `TABLE_ODD[i][j]` = (j + 1)·16·256^i·B, laid out as [`TABLE`]: the rows of the odd digits.
static TABLE_ODD: [[[u64; 15]; 8]; 32] = table(&BASE_TABLE_ODD);

/// A table of the portable backend in radix 2^52.
const fn table(src: &[[AffineNiels<Fe51>; 8]; 32]) -> [[[u64; 15]; 8]; 32] {
    let mut out = [[[0u64; 15]; 8]; 32];
    let mut i = 0;
    while i < 32 {
        let mut j = 0;
        while j < 8 {
            let e = &src[i][j];
            let coords = [limbs52(e.ypx), limbs52(e.ymx), limbs52(e.xy2d)];
            let mut c = 0;
            while c < 15 {
                out[i][j][c] = coords[c / 5][c % 5];
                c += 1;
            }
            j += 1;
        }
        i += 1;
    }
    out
}

/// The points `s[j]·B` (each `s[j]` below 2^255, little-endian) in projective form, for a `Checked` proof of
/// [`Backend::Ifma`].
pub(super) fn mul_base8(backend: Checked<Backend>, s: &[[u8; 32]; LANES]) -> [Xyz; LANES] {
    assert!(backend.covers(Backend::Ifma));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Ifma, so the CPU has AVX-512 F and
    // IFMA, the features `mul_base8_ifma` and everything it calls enable.
    unsafe { mul_base8_ifma(s) }
}

/// A point in extended coordinates (X : Y : Z : T), eight lanes.
#[derive(Clone, Copy)]
struct Extended {
    x: Fe,
    y: Fe,
    z: Fe,
    t: Fe,
}

/// A point cached for addition with Z = 1: (y + x, y − x, 2d·x·y), eight lanes.
#[derive(Clone, Copy)]
struct Niels {
    ypx: Fe,
    ymx: Fe,
    xy2d: Fe,
}

/// The result of an addition: x = E/G, y = H/F.
struct Completed {
    e: Fe,
    f: Fe,
    g: Fe,
    h: Fe,
}

#[inline]
#[target_feature(enable = "avx512f")]
fn zero_fe() -> Fe {
    [_mm512_setzero_si512(); 5]
}

impl Completed {
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn to_extended(&self) -> Extended {
        Extended {
            x: mul(&self.e, &self.f),
            y: mul(&self.g, &self.h),
            z: mul(&self.f, &self.g),
            t: mul(&self.e, &self.h),
        }
    }
}

/// `p + q` (the unified a = −1 addition with a Z = 1 operand).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn add_niels(p: &Extended, q: &Niels) -> Completed {
    let a = mul(&sub(&p.y, &p.x), &q.ymx);
    let b = mul(&add(&p.y, &p.x), &q.ypx);
    let c = mul(&p.t, &q.xy2d);
    let d = add(&p.z, &p.z);
    Completed { e: sub(&b, &a), f: sub(&d, &c), g: add(&d, &c), h: add(&b, &a) }
}

/// The cached point as an extended one with Z = 4: (2(ypx − ymx), 2(ypx + ymx), 4, (ypx − ymx)(ypx + ymx)).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
fn niels_to_extended(q: &Niels) -> Extended {
    let x2 = sub(&q.ypx, &q.ymx);
    let y2 = add(&q.ypx, &q.ymx);
    let mut z = zero_fe();
    z[0] = splat(4);
    Extended { x: add(&x2, &x2), y: add(&y2, &y2), z, t: mul(&x2, &y2) }
}

/// Per lane, `d·row[0]` for the lane's digit `d` in \[−8, 8\]: every entry of the row is read and kept by the
/// mask of the lanes whose |d| is its index; a negative digit's entry is negated by mask.
#[inline]
#[target_feature(enable = "avx512f")]
fn lookup(row: &[[u64; 15]; 8], d: __m512i) -> Niels {
    let zero = _mm512_setzero_si512();
    let neg = _mm512_srai_epi64::<63>(d);
    let abs = _mm512_sub_epi64(_mm512_xor_si512(d, neg), neg);
    // The identity (y + x, y − x, 2dxy) = (1, 1, 0) where no entry matches (d = 0).
    let mut r = [zero; 15];
    r[0] = splat(1);
    r[5] = splat(1);
    for (j, entry) in row.iter().enumerate() {
        let keep = _mm512_cmpeq_epi64_mask(abs, splat(j as u64 + 1));
        for (rl, &limb) in r.iter_mut().zip(entry) {
            *rl = _mm512_mask_mov_epi64(*rl, keep, _mm512_set1_epi64(limb as i64));
        }
    }
    let ypx: Fe = core::array::from_fn(|l| r[l]);
    let ymx: Fe = core::array::from_fn(|l| r[5 + l]);
    let xy2d: Fe = core::array::from_fn(|l| r[10 + l]);
    // −(x, y) = (−x, y): y + x and y − x trade places and 2dxy changes sign.
    let negate = _mm512_test_epi64_mask(neg, neg);
    let minus_xy2d = sub(&zero_fe(), &xy2d);
    Niels {
        ypx: core::array::from_fn(|l| _mm512_mask_mov_epi64(ypx[l], negate, ymx[l])),
        ymx: core::array::from_fn(|l| _mm512_mask_mov_epi64(ymx[l], negate, ypx[l])),
        xy2d: core::array::from_fn(|l| _mm512_mask_mov_epi64(xy2d[l], negate, minus_xy2d[l])),
    }
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn mul_base8_ifma(s: &[[u8; 32]; LANES]) -> [Xyz; LANES] {
    // Digit `k` of every lane in row `k`.
    let mut digits = [[0i64; LANES]; 64];
    for (j, sj) in s.iter().enumerate() {
        debug_assert!(sj[31] < 0x80);
        let mut d = radix16(sj);
        for (k, dk) in d.iter().enumerate() {
            digits[k][j] = *dk as i64;
        }
        crate::ct::wipe(&mut d);
    }
    // SAFETY: each `digits[k]` is 64 readable bytes; unaligned load.
    let digit = |k: usize| unsafe { _mm512_loadu_si512(digits[k].as_ptr().cast()) };

    // Digit k has weight 16^k = 16^(k mod 2)·256^(k/2): odd digits from TABLE_ODD, even ones from TABLE.
    let mut acc = niels_to_extended(&lookup(&TABLE_ODD[0], digit(1)));
    for k in 2..64 {
        let t = if k % 2 == 1 { &TABLE_ODD } else { &TABLE };
        acc = add_niels(&acc, &lookup(&t[k / 2], digit(k))).to_extended();
    }
    acc = add_niels(&acc, &lookup(&TABLE[0], digit(0))).to_extended();
    zeroize::Zeroize::zeroize(&mut digits);
    let (x, y, z) = (store(&acc.x), store(&acc.y), store(&acc.z));
    core::array::from_fn(|j| [x[j], y[j], z[j]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ec::curve25519::edwards::compute_base_table;

    /// The radix-2^52 tables hold the portable tables' entries, limb for limb: `TABLE` the portable
    /// `BASE_TABLE`, `TABLE_ODD` sixteen times each of its entries.
    #[test]
    fn tables_match_portable_table() {
        let sixteen = compute_base_table(4);
        for (ours, theirs) in [(&TABLE, &BASE_TABLE), (&TABLE_ODD, &sixteen)] {
            for i in 0..32 {
                for j in 0..8 {
                    let e = &theirs[i][j];
                    let want = [limbs52(e.ypx), limbs52(e.ymx), limbs52(e.xy2d)];
                    for c in 0..15 {
                        assert_eq!(ours[i][j][c], want[c / 5][c % 5], "row {i} entry {j} limb {c}");
                        assert!(ours[i][j][c] < 1 << 52);
                    }
                    assert!(ours[i][j][4] < 1 << 47 && ours[i][j][9] < 1 << 47 && ours[i][j][14] < 1 << 47);
                }
            }
        }
        // 16·(j + 1)·256^i·B is (j + 1)·16·256^i·B: the odd rows are the even rows times 16.
        let b = crate::ec::curve25519::edwards::base_point_runtime::<Fe51>();
        let mut p16 = b;
        for _ in 0..4 {
            p16 = p16.double().to_extended();
        }
        let (x, y) = p16.to_affine();
        let (x, y) = (x.to_bytes(), y.to_bytes());
        let e = &sixteen[0][0];
        let (ex, ey) = (e.ypx.sub(&e.ymx).mul(&Fe51::ONE.mul_small(2).invert()), e.ypx.add(&e.ymx));
        assert_eq!(ex.to_bytes(), x);
        assert_eq!(ey.mul(&Fe51::ONE.mul_small(2).invert()).to_bytes(), y);
    }
}
