//! Arithmetic in GF(p), p = 2^255 - 19: the [`Field`] interface every backend implements, the operations
//! built on it (inversion, square roots), and the portable implementation [`Fe51`].
//!
//! ## `Fe51`: five 51-bit limbs
//! An element is `l0 + l1·2^51 + l2·2^102 + l3·2^153 + l4·2^204` with `u64` limbs; products are formed in
//! `u128`. The representation is redundant: limbs may exceed 51 bits and the value may exceed p. Bounds
//! (checked by `debug_assert!` in the arithmetic, so every test run checks them):
//!
//! - *reduced*: every limb < 2^52. The output of [`Fe51::mul`], [`Fe51::square`], [`Fe51::sub`],
//!   [`Fe51::neg`], [`Fe51::mul_small`], [`Fe51::from_bytes`] and the selections.
//! - [`Fe51::add`] does not carry: two reduced inputs give limbs < 2^53, and adding a reduced value to that
//!   gives < 2^54.
//! - `mul`, `square`, `sub`, `neg` and `mul_small` accept limbs < 2^54. The largest column sum of a product
//!   is then 5·19·2^108 < 2^115, far inside `u128`; `sub` adds 16p (limbs ≈ 2^55) before subtracting, so
//!   it cannot underflow.
//!
//! So the group formulas may add at most twice before multiplying (what they need: `D + C` with `D = 2Z`).
//!
//! ## Constant time
//! No operation branches on or indexes by an element's value: carries are shifts and masks, the final
//! reduction in [`Fe51::to_bytes`] is arithmetic, selections and swaps use all-zero/all-one masks.
//! Inversion ([`Field::inv`]: on x86_64 the safegcd divsteps of [`crate::x86::divsteps`], for `Fe51` and
//! the BMI2/ADX backend alike; Fermat's addition chain elsewhere) and square roots are fixed sequences of
//! operations.
//!
//! Every `Fe51` operation is a `const fn`, so the curve constants are computed by the compiler from their
//! definitions, not pasted in; so are the derivations of the tables of multiples of the base point, which
//! the tests run to check the generated tables (see `edwards`).

/// 2^51 - 1.
const MASK51: u64 = (1 << 51) - 1;

/// Bit masks for constant-time choices: all ones for "yes", zero for "no".
pub(crate) type Mask = u64;

/// The mask for `bit` (0 or 1), through `black_box` so the optimiser cannot turn later selections into
/// branches.
#[inline(always)]
pub(crate) fn mask_from_bit(bit: u64) -> Mask {
    0u64.wrapping_sub(core::hint::black_box(bit & 1))
}

/// All ones if `a == b`, else zero; no branch.
#[inline(always)]
pub(crate) fn mask_eq_u8(a: u8, b: u8) -> Mask {
    let x = (a ^ b) as u64;
    // x - 1 wraps (top bit set) exactly when x == 0, since x < 256.
    mask_from_bit(x.wrapping_sub(1) >> 63)
}

/// What the group and scalar-multiplication code needs from a field implementation. Every backend's
/// element type implements it; its operations must agree bit for bit on [`to_bytes`](Field::to_bytes).
///
/// Inputs of every operation may be any value produced by the others, except that the result of
/// [`add`](Field::add) may be passed through `add` at most once more before it is multiplied, squared or
/// subtracted (the lazy reduction of [`Fe51`]).
pub(crate) trait Field: Copy {
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// The Edwards curve constant d = -121665/121666.
    const D: Self;
    /// 2d.
    const D2: Self;
    /// A square root of -1.
    const SQRT_M1: Self;

    /// The element of a 32-byte little-endian string, ignoring bit 255; values p..2^255-1 are accepted
    /// (they wrap, as RFC 7748 asks for u-coordinates).
    fn from_bytes(b: &[u8; 32]) -> Self;
    /// The canonical (fully reduced) little-endian encoding.
    fn to_bytes(&self) -> [u8; 32];
    /// `self + rhs` (lazy: see the trait docs).
    fn add(&self, rhs: &Self) -> Self;
    /// `self - rhs`.
    fn sub(&self, rhs: &Self) -> Self;
    /// `-self`.
    fn neg(&self) -> Self;
    /// `self · rhs`.
    fn mul(&self, rhs: &Self) -> Self;
    /// `self²`.
    fn square(&self) -> Self;
    /// `self · k` for a small constant `k` < 2^17.
    fn mul_small(&self, k: u32) -> Self;
    /// `a` where `mask` is all ones, `b` where it is zero.
    fn select(a: &Self, b: &Self, mask: Mask) -> Self;
    /// Swaps `a` and `b` where `mask` is all ones.
    fn cswap(a: &mut Self, b: &mut Self, mask: Mask);
    /// The limbs of `self` ORed with those of `a` where `mask` is all ones (`self` unchanged where it is
    /// zero): for table look-ups that start from all-zero limbs and OR in exactly one entry.
    fn or_masked(&self, a: &Self, mask: Mask) -> Self;

    /// `self^(2^n)`, n ≥ 1.
    #[inline]
    fn square_n(&self, n: u32) -> Self {
        let mut r = self.square();
        for _ in 1..n {
            r = r.square();
        }
        r
    }

    /// `self^-1` (0 for 0), in constant time. Fermat's addition chain unless a backend has better.
    #[inline]
    fn inv(&self) -> Self {
        fermat_invert(self)
    }
}

/// The addition chain shared by inversion and square roots: returns `(z^(2^250 - 1), z^11)`. Written once
/// as a macro so that the `const fn` versions of [`Fe51`] and the generic versions use the same chain.
macro_rules! pow_2_250_1 {
    ($z:expr, $mul:path, $sq:path, $sqn:path) => {{
        let z = $z;
        let z2 = $sq(z); // 2
        let z8 = $sqn(&z2, 2); // 8
        let z9 = $mul(z, &z8); // 9
        let z11 = $mul(&z2, &z9); // 11
        let z22 = $sq(&z11); // 22
        let z_5_0 = $mul(&z9, &z22); // 2^5 - 1
        let z_10_0 = $mul(&$sqn(&z_5_0, 5), &z_5_0); // 2^10 - 1
        let z_20_0 = $mul(&$sqn(&z_10_0, 10), &z_10_0); // 2^20 - 1
        let z_40_0 = $mul(&$sqn(&z_20_0, 20), &z_20_0); // 2^40 - 1
        let z_50_0 = $mul(&$sqn(&z_40_0, 10), &z_10_0); // 2^50 - 1
        let z_100_0 = $mul(&$sqn(&z_50_0, 50), &z_50_0); // 2^100 - 1
        let z_200_0 = $mul(&$sqn(&z_100_0, 100), &z_100_0); // 2^200 - 1
        let z_250_0 = $mul(&$sqn(&z_200_0, 50), &z_50_0); // 2^250 - 1
        (z_250_0, z11)
    }};
}

/// `z^-1` (0 maps to 0) with the field's own method ([`Field::inv`]).
#[inline]
pub(crate) fn invert<F: Field>(z: &F) -> F {
    z.inv()
}

/// `z^(p-2) = z^-1` (Fermat; 0 maps to 0).
#[inline]
pub(crate) fn fermat_invert<F: Field>(z: &F) -> F {
    let (t, z11) = pow_2_250_1!(z, F::mul, F::square, F::square_n);
    // (2^250 - 1)·2^5 + 11 = 2^255 - 21 = p - 2.
    t.square_n(5).mul(&z11)
}

/// `z^((p-5)/8) = z^(2^252 - 3)`.
#[inline]
fn pow_p58<F: Field>(z: &F) -> F {
    let (t, _) = pow_2_250_1!(z, F::mul, F::square, F::square_n);
    t.square_n(2).mul(z)
}

/// All ones if `a == b` (as field elements, whatever their representations).
#[inline]
pub(crate) fn mask_equal<F: Field>(a: &F, b: &F) -> Mask {
    let (x, y) = (a.to_bytes(), b.to_bytes());
    let mut acc = 0u8;
    for i in 0..32 {
        acc |= x[i] ^ y[i];
    }
    mask_eq_u8(acc, 0)
}

/// All ones if `a == 0`.
#[inline]
pub(crate) fn mask_is_zero<F: Field>(a: &F) -> Mask {
    mask_equal(a, &F::ZERO)
}

/// The low bit of the canonical encoding ("negative" in RFC 8032's sense), 0 or 1.
#[inline]
pub(crate) fn is_negative<F: Field>(a: &F) -> u64 {
    (a.to_bytes()[0] & 1) as u64
}

/// `a` or `-a`, making the result's low bit (its "sign") equal to `sign` (0 or 1).
#[inline]
pub(crate) fn with_sign<F: Field>(a: &F, sign: u64) -> F {
    let flip = mask_from_bit(is_negative(a) ^ sign);
    F::select(&a.neg(), a, flip)
}

/// The square root of `u/v`, in constant time: `(mask, x)` with `mask` all ones and `x² = u/v` when `u/v` is
/// a square (including u = 0), else `mask` zero. `x` is one of the two roots; callers fix the sign.
///
/// RFC 8032 §5.1.3: `x = u v³ (u v⁷)^((p-5)/8)`; if `v x² = u` it is a root, if `v x² = -u` then
/// `x·sqrt(-1)` is, otherwise there is none. `v = 0` gives no root unless `u = 0`.
pub(crate) fn sqrt_ratio<F: Field>(u: &F, v: &F) -> (Mask, F) {
    let v3 = v.square().mul(v);
    let v7 = v3.square().mul(v);
    let x = u.mul(&v3).mul(&pow_p58(&u.mul(&v7)));
    let check = v.mul(&x.square());
    let is_root = mask_equal(&check, u);
    let is_flipped = mask_equal(&check, &u.neg());
    let x = F::select(&x.mul(&F::SQRT_M1), &x, is_flipped & !is_root);
    (is_root | is_flipped, x)
}

/// An element of GF(2^255 - 19) as five 51-bit limbs: the portable implementation. See the module docs for
/// the bounds.
#[derive(Clone, Copy)]
pub(crate) struct Fe51(pub(crate) [u64; 5]);

#[inline(always)]
const fn m(a: u64, b: u64) -> u128 {
    (a as u128) * (b as u128)
}

#[inline(always)]
const fn load8(b: &[u8; 32], i: usize) -> u64 {
    u64::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]])
}

impl Fe51 {
    pub(crate) const ZERO: Fe51 = Fe51([0; 5]);
    pub(crate) const ONE: Fe51 = Fe51([1, 0, 0, 0, 0]);

    /// True if every limb is below `2^bits` (for the bound assertions).
    #[inline(always)]
    const fn below(&self, bits: u32) -> bool {
        let l = &self.0;
        (l[0] | l[1] | l[2] | l[3] | l[4]) >> bits == 0
    }

    /// The small constant `k` as an element.
    pub(crate) const fn from_u64(k: u64) -> Fe51 {
        Fe51([k & MASK51, k >> 51, 0, 0, 0])
    }

    /// See [`Field::from_bytes`]: bit 255 is ignored, the value is not reduced (limbs < 2^51).
    pub(crate) const fn from_bytes(b: &[u8; 32]) -> Fe51 {
        let (w0, w1, w2, w3) = (load8(b, 0), load8(b, 8), load8(b, 16), load8(b, 24));
        Fe51([
            w0 & MASK51,
            ((w0 >> 51) | (w1 << 13)) & MASK51,
            ((w1 >> 38) | (w2 << 26)) & MASK51,
            ((w2 >> 25) | (w3 << 39)) & MASK51,
            (w3 >> 12) & MASK51,
        ])
    }

    /// Carries every limb into the next (the top one times 19 into the bottom): limbs below 2^64 in, every
    /// limb < 2^51 + 2^18 out.
    #[inline(always)]
    const fn carry(&self) -> Fe51 {
        let l = &self.0;
        let c = [l[0] >> 51, l[1] >> 51, l[2] >> 51, l[3] >> 51, l[4] >> 51];
        Fe51([
            (l[0] & MASK51) + 19 * c[4],
            (l[1] & MASK51) + c[0],
            (l[2] & MASK51) + c[1],
            (l[3] & MASK51) + c[2],
            (l[4] & MASK51) + c[3],
        ])
    }

    /// Reduces five column sums (each < 2^115) to a reduced element.
    #[inline(always)]
    const fn carry_wide(c: [u128; 5]) -> Fe51 {
        let c1 = c[1] + (c[0] >> 51);
        let c2 = c[2] + (c1 >> 51);
        let c3 = c[3] + (c2 >> 51);
        let c4 = c[4] + (c3 >> 51);
        // The carry out of the top column is below 2^64 but 19 times it need not be: fold it in u128.
        let t = (c[0] as u64 & MASK51) as u128 + 19 * (c4 >> 51);
        Fe51([
            t as u64 & MASK51,
            (c1 as u64 & MASK51) + (t >> 51) as u64,
            c2 as u64 & MASK51,
            c3 as u64 & MASK51,
            c4 as u64 & MASK51,
        ])
    }

    /// The canonical little-endian encoding (the value reduced below p).
    pub(crate) const fn to_bytes(self) -> [u8; 32] {
        let l = self.carry().0;
        // l < 2^255 + 2^218 < 2p. q = 1 exactly when l >= p, i.e. when l + 19 reaches 2^255; the carries of
        // l + 19 are exact even though limbs may exceed 51 bits.
        let mut q = (l[0] + 19) >> 51;
        q = (l[1] + q) >> 51;
        q = (l[2] + q) >> 51;
        q = (l[3] + q) >> 51;
        q = (l[4] + q) >> 51;
        // l - q·p = l + 19q - q·2^255: add 19q, carry through, drop bit 255.
        let mut r = [l[0] + 19 * q, l[1], l[2], l[3], l[4]];
        r[1] += r[0] >> 51;
        r[0] &= MASK51;
        r[2] += r[1] >> 51;
        r[1] &= MASK51;
        r[3] += r[2] >> 51;
        r[2] &= MASK51;
        r[4] += r[3] >> 51;
        r[3] &= MASK51;
        r[4] &= MASK51;
        let w = [
            r[0] | (r[1] << 51),
            (r[1] >> 13) | (r[2] << 38),
            (r[2] >> 26) | (r[3] << 25),
            (r[3] >> 39) | (r[4] << 12),
        ];
        let mut out = [0u8; 32];
        let mut i = 0;
        while i < 4 {
            let b = w[i].to_le_bytes();
            let mut j = 0;
            while j < 8 {
                out[8 * i + j] = b[j];
                j += 1;
            }
            i += 1;
        }
        out
    }

    /// `self + rhs`, without carrying.
    #[inline(always)]
    pub(crate) const fn add(&self, rhs: &Fe51) -> Fe51 {
        let (a, b) = (&self.0, &rhs.0);
        Fe51([a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4]])
    }

    /// `self - rhs`, as `self + 16p - rhs`, carried. Inputs < 2^54.
    #[inline(always)]
    pub(crate) const fn sub(&self, rhs: &Fe51) -> Fe51 {
        debug_assert!(self.below(54) && rhs.below(54));
        let (a, b) = (&self.0, &rhs.0);
        // 16p in this radix: 16·(2^51 - 19) in limb 0, 16·(2^51 - 1) in the others.
        const P16_0: u64 = 16 * ((1 << 51) - 19);
        const P16_I: u64 = 16 * ((1 << 51) - 1);
        Fe51([
            (a[0] + P16_0) - b[0],
            (a[1] + P16_I) - b[1],
            (a[2] + P16_I) - b[2],
            (a[3] + P16_I) - b[3],
            (a[4] + P16_I) - b[4],
        ])
        .carry()
    }

    /// `-self`.
    #[inline(always)]
    pub(crate) const fn neg(&self) -> Fe51 {
        Fe51::ZERO.sub(self)
    }

    /// `self · rhs`. Inputs < 2^54.
    #[inline(always)]
    pub(crate) const fn mul(&self, rhs: &Fe51) -> Fe51 {
        debug_assert!(self.below(54) && rhs.below(54));
        let (a, b) = (&self.0, &rhs.0);
        // 2^255 = 19 (mod p): a column's terms with i + j >= 5 wrap around times 19.
        let (b1, b2, b3, b4) = (19 * b[1], 19 * b[2], 19 * b[3], 19 * b[4]);
        Fe51::carry_wide([
            m(a[0], b[0]) + m(a[1], b4) + m(a[2], b3) + m(a[3], b2) + m(a[4], b1),
            m(a[0], b[1]) + m(a[1], b[0]) + m(a[2], b4) + m(a[3], b3) + m(a[4], b2),
            m(a[0], b[2]) + m(a[1], b[1]) + m(a[2], b[0]) + m(a[3], b4) + m(a[4], b3),
            m(a[0], b[3]) + m(a[1], b[2]) + m(a[2], b[1]) + m(a[3], b[0]) + m(a[4], b4),
            m(a[0], b[4]) + m(a[1], b[3]) + m(a[2], b[2]) + m(a[3], b[1]) + m(a[4], b[0]),
        ])
    }

    /// `self²`. Input < 2^54.
    #[inline(always)]
    pub(crate) const fn square(&self) -> Fe51 {
        debug_assert!(self.below(54));
        let a = &self.0;
        let (d0, d1, d2, d3) = (2 * a[0], 2 * a[1], 2 * a[2], 2 * a[3]);
        let (a3_19, a4_19) = (19 * a[3], 19 * a[4]);
        Fe51::carry_wide([
            m(a[0], a[0]) + m(d1, a4_19) + m(d2, a3_19),
            m(d0, a[1]) + m(d2, a4_19) + m(a[3], a3_19),
            m(d0, a[2]) + m(a[1], a[1]) + m(d3, a4_19),
            m(d0, a[3]) + m(d1, a[2]) + m(a[4], a4_19),
            m(d0, a[4]) + m(d1, a[3]) + m(a[2], a[2]),
        ])
    }

    /// `self^(2^n)`, n ≥ 1.
    pub(crate) const fn square_n(&self, n: u32) -> Fe51 {
        let mut r = self.square();
        let mut i = 1;
        while i < n {
            r = r.square();
            i += 1;
        }
        r
    }

    /// `self · k`, k < 2^17. Input < 2^54.
    #[inline(always)]
    pub(crate) const fn mul_small(&self, k: u32) -> Fe51 {
        debug_assert!(self.below(54) && k < 1 << 17);
        let a = &self.0;
        let k = k as u64;
        Fe51::carry_wide([m(a[0], k), m(a[1], k), m(a[2], k), m(a[3], k), m(a[4], k)])
    }

    /// `self^-1` (0 for 0), for compile-time constants.
    pub(crate) const fn invert(&self) -> Fe51 {
        let (t, z11) = pow_2_250_1!(self, Fe51::mul, Fe51::square, Fe51::square_n);
        t.square_n(5).mul(&z11)
    }

    /// `self^((p-5)/8)`, for the derivation of the tables.
    #[cfg(test)]
    pub(crate) const fn pow_p58(&self) -> Fe51 {
        let (t, _) = pow_2_250_1!(self, Fe51::mul, Fe51::square, Fe51::square_n);
        t.square_n(2).mul(self)
    }

    /// True if the two represent the same element (variable time; for the derivation of the tables).
    #[cfg(test)]
    pub(crate) const fn equals(&self, rhs: &Fe51) -> bool {
        let (a, b) = (Fe51::to_bytes(*self), Fe51::to_bytes(*rhs));
        let mut i = 0;
        while i < 32 {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// d = -121665/121666.
    pub(crate) const D: Fe51 = Fe51::from_u64(121665).mul(&Fe51::from_u64(121666).invert()).neg();
    /// 2d.
    pub(crate) const D2: Fe51 = Fe51::D.add(&Fe51::D).carry();
    /// 2^((p-1)/4), a square root of -1: (2^250 - 1)·8 + 3 = 2^253 - 5 = (p - 1)/4.
    pub(crate) const SQRT_M1: Fe51 = {
        let two = Fe51::from_u64(2);
        let (t, _) = pow_2_250_1!(&two, Fe51::mul, Fe51::square, Fe51::square_n);
        t.square_n(3).mul(&two.square().mul(&two))
    };
}

/// p in the limbs of the generic safegcd inversion (the reference for the specialised one in the tests).
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) const P62: crate::ec::safegcd::Mod62 = crate::ec::safegcd::Mod62::new(&[!18, !0, !0, (1 << 63) - 1]);

impl Field for Fe51 {
    /// On x86_64, the safegcd divsteps of [`crate::x86::divsteps`] (about four times faster than Fermat's
    /// chain of 254 squarings with these limbs); elsewhere Fermat's chain.
    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn inv(&self) -> Self {
        let b = Fe51::to_bytes(*self);
        let w: [u64; 4] = core::array::from_fn(|i| {
            u64::from_le_bytes([
                b[8 * i],
                b[8 * i + 1],
                b[8 * i + 2],
                b[8 * i + 3],
                b[8 * i + 4],
                b[8 * i + 5],
                b[8 * i + 6],
                b[8 * i + 7],
            ])
        });
        let r = crate::x86::divsteps::invert_p25519(&w);
        let mut out = [0u8; 32];
        for (o, x) in out.chunks_exact_mut(8).zip(r) {
            o.copy_from_slice(&x.to_le_bytes());
        }
        Fe51::from_bytes(&out)
    }

    const ZERO: Self = Fe51::ZERO;
    const ONE: Self = Fe51::ONE;
    const D: Self = Fe51::D;
    const D2: Self = Fe51::D2;
    const SQRT_M1: Self = Fe51::SQRT_M1;

    #[inline(always)]
    fn from_bytes(b: &[u8; 32]) -> Self {
        Fe51::from_bytes(b)
    }
    #[inline(always)]
    fn to_bytes(&self) -> [u8; 32] {
        Fe51::to_bytes(*self)
    }
    #[inline(always)]
    fn add(&self, rhs: &Self) -> Self {
        Fe51::add(self, rhs)
    }
    #[inline(always)]
    fn sub(&self, rhs: &Self) -> Self {
        Fe51::sub(self, rhs)
    }
    #[inline(always)]
    fn neg(&self) -> Self {
        Fe51::neg(self)
    }
    #[inline(always)]
    fn mul(&self, rhs: &Self) -> Self {
        Fe51::mul(self, rhs)
    }
    #[inline(always)]
    fn square(&self) -> Self {
        Fe51::square(self)
    }
    #[inline(always)]
    fn mul_small(&self, k: u32) -> Self {
        Fe51::mul_small(self, k)
    }
    #[inline(always)]
    fn select(a: &Self, b: &Self, mask: Mask) -> Self {
        let mut r = *b;
        for i in 0..5 {
            r.0[i] ^= mask & (a.0[i] ^ b.0[i]);
        }
        r
    }
    #[inline(always)]
    fn cswap(a: &mut Self, b: &mut Self, mask: Mask) {
        for i in 0..5 {
            let t = mask & (a.0[i] ^ b.0[i]);
            a.0[i] ^= t;
            b.0[i] ^= t;
        }
    }
    #[inline(always)]
    fn or_masked(&self, a: &Self, mask: Mask) -> Self {
        let mut r = *self;
        for i in 0..5 {
            r.0[i] |= mask & a.0[i];
        }
        r
    }
    #[inline]
    fn square_n(&self, n: u32) -> Self {
        Fe51::square_n(self, n)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use super::*;
    use num_bigint::BigUint;
    use std::{vec, vec::Vec};

    pub(crate) fn p() -> BigUint {
        (BigUint::from(1u8) << 255u32) - BigUint::from(19u8)
    }

    pub(crate) fn to_big<F: Field>(a: &F) -> BigUint {
        BigUint::from_bytes_le(&a.to_bytes())
    }

    /// The value of an `Fe51` from its limbs, unreduced.
    fn limbs_value(a: &Fe51) -> BigUint {
        let mut v = BigUint::from(0u8);
        for i in (0..5).rev() {
            v = (v << 51u32) + BigUint::from(a.0[i]);
        }
        v
    }

    fn from_big(v: &BigUint) -> [u8; 32] {
        let mut b = [0u8; 32];
        let le = v.to_bytes_le();
        b[..le.len()].copy_from_slice(&le);
        b
    }

    /// A tiny deterministic generator (xorshift), so the unit tests need no RNG crate.
    pub(crate) struct Xs(pub(crate) u64);
    impl Xs {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        pub(crate) fn bytes(&mut self) -> [u8; 32] {
            let mut b = [0u8; 32];
            for c in b.chunks_mut(8) {
                c.copy_from_slice(&self.next().to_le_bytes());
            }
            b
        }
    }

    /// Edge values: 0, 1, 2, p-1, p, p+1, 2^255-20..2^255-1 (bit 255 set and clear), 2^51 boundaries.
    fn edges() -> Vec<[u8; 32]> {
        let p = p();
        let one = BigUint::from(1u8);
        let mut v = vec![[0u8; 32], from_big(&one), from_big(&BigUint::from(2u8))];
        v.push(from_big(&(&p - &one)));
        v.push(from_big(&p));
        v.push(from_big(&(&p + &one)));
        for k in 0..20u8 {
            v.push(from_big(&((&one << 255u32) - &one - BigUint::from(k))));
        }
        v.push(from_big(&(one.clone() << 51u32)));
        v.push(from_big(&((one.clone() << 51u32) - &one)));
        v.push(from_big(&((one.clone() << 204u32) - &one)));
        v.push([0xff; 32]);
        let mut top = [0u8; 32];
        top[31] = 0x80;
        v.push(top);
        v
    }

    /// Elements with deliberately large limbs (up to the 2^54 input bound), to exercise lazy reduction.
    fn loose(rng: &mut Xs) -> Fe51 {
        let mut l = [0u64; 5];
        for x in l.iter_mut() {
            *x = rng.next() >> (10 + rng.next() % 14);
        }
        Fe51(l)
    }

    fn inputs(rng: &mut Xs) -> Vec<Fe51> {
        let mut v: Vec<Fe51> = edges().iter().map(Fe51::from_bytes).collect();
        for _ in 0..300 {
            v.push(Fe51::from_bytes(&rng.bytes()));
            v.push(loose(rng));
        }
        v.push(Fe51([(1 << 54) - 1; 5]));
        v
    }

    #[test]
    fn decode_ignores_bit_255_and_keeps_noncanonical_values() {
        let p = p();
        for b in edges() {
            let mut masked = b;
            masked[31] &= 0x7f;
            let a = Fe51::from_bytes(&b);
            assert_eq!(limbs_value(&a), BigUint::from_bytes_le(&masked));
            assert_eq!(to_big(&a), BigUint::from_bytes_le(&masked) % &p);
        }
    }

    #[test]
    fn encode_is_canonical() {
        let p = p();
        let mut rng = Xs(0x2551_9000_0001);
        for a in inputs(&mut rng) {
            let enc = a.to_bytes();
            let v = BigUint::from_bytes_le(&enc);
            assert!(v < p);
            assert_eq!(v, limbs_value(&a) % &p);
        }
    }

    #[test]
    fn arithmetic_matches_bigint() {
        let p = p();
        let mut rng = Xs(0x2551_9000_0002);
        let xs = inputs(&mut rng);
        for (i, a) in xs.iter().enumerate() {
            let b = &xs[(i * 7 + 3) % xs.len()];
            let (va, vb) = (limbs_value(a) % &p, limbs_value(b) % &p);
            let mul = Fe51::mul(a, b);
            assert!(mul.below(52));
            assert_eq!(to_big(&mul), (&va * &vb) % &p, "mul {i}");
            let sq = Fe51::square(a);
            assert!(sq.below(52));
            assert_eq!(to_big(&sq), (&va * &va) % &p, "square {i}");
            let sub = Fe51::sub(a, b);
            assert!(sub.below(52));
            assert_eq!(to_big(&sub), (&va + &p - &vb) % &p, "sub {i}");
            assert_eq!(to_big(&Fe51::neg(a)), (&p - &va) % &p, "neg {i}");
            let ms = Fe51::mul_small(a, 121665);
            assert!(ms.below(52));
            assert_eq!(to_big(&ms), (&va * BigUint::from(121665u32)) % &p, "mul_small {i}");
            if a.below(53) && b.below(53) {
                assert_eq!(to_big(&Fe51::add(a, b)), (&va + &vb) % &p, "add {i}");
            }
        }
    }

    #[test]
    fn lazy_sums_within_the_bounds_multiply_correctly() {
        // The pattern of the group formulas: (x + y) + z with reduced x, y, z, then multiplied.
        let p = p();
        let mut rng = Xs(0x2551_9000_0003);
        for _ in 0..200 {
            let x = Fe51::from_bytes(&rng.bytes()).mul(&Fe51::ONE);
            let y = Fe51::from_bytes(&rng.bytes()).square();
            let z = Fe51::from_bytes(&rng.bytes()).sub(&x);
            let s = x.add(&y).add(&z);
            assert!(s.below(54));
            let w = Fe51::from_bytes(&rng.bytes());
            let want = ((to_big(&x) + to_big(&y) + to_big(&z)) * to_big(&w)) % &p;
            assert_eq!(to_big(&s.mul(&w)), want);
            assert_eq!(to_big(&s.sub(&w)), (to_big(&x) + to_big(&y) + to_big(&z) + &p - to_big(&w)) % &p);
        }
    }

    #[test]
    fn invert_sqrt_and_constants() {
        let p = p();
        let one = BigUint::from(1u8);
        let mut rng = Xs(0x2551_9000_0004);
        for a in inputs(&mut rng) {
            let va = limbs_value(&a) % &p;
            let inv = invert(&a);
            let want = va.modpow(&(&p - BigUint::from(2u8)), &p);
            assert_eq!(to_big(&inv), want);
            assert!(Fe51::invert(&a).equals(&inv));
        }
        // d·121666 = -121665, sqrt(-1)² = -1.
        assert_eq!(to_big(&Fe51::D) * BigUint::from(121666u32) % &p, &p - BigUint::from(121665u32));
        assert_eq!(to_big(&Fe51::D2), (to_big(&Fe51::D) * 2u32) % &p);
        assert_eq!(to_big(&Fe51::SQRT_M1.square()), &p - &one);
        // sqrt_ratio on random ratios: a root exactly when u/v is a square (Euler's criterion).
        let half = (&p - &one) >> 1u32;
        for _ in 0..200 {
            let u = Fe51::from_bytes(&rng.bytes());
            let v = Fe51::from_bytes(&rng.bytes());
            let (ok, x) = sqrt_ratio(&u, &v);
            let (vu, vv) = (to_big(&u), to_big(&v));
            let ratio = &vu * vv.modpow(&(&p - BigUint::from(2u8)), &p) % &p;
            let is_square = ratio == BigUint::from(0u8) || ratio.modpow(&half, &p) == one;
            assert_eq!(ok == u64::MAX, is_square);
            assert!(ok == 0 || ok == u64::MAX);
            if is_square {
                assert_eq!(to_big(&x).modpow(&BigUint::from(2u8), &p), ratio);
            }
        }
        // 0/v = 0; u/0 has no root for u != 0.
        let (ok, x) = sqrt_ratio(&Fe51::ZERO, &Fe51::from_u64(5));
        assert!(ok == u64::MAX && to_big(&x) == BigUint::from(0u8));
        assert_eq!(sqrt_ratio(&Fe51::ONE, &Fe51::ZERO).0, 0);
    }

    #[test]
    fn select_swap_and_signs() {
        let a = Fe51::from_u64(7);
        let b = Fe51::from_u64(9);
        assert!(Fe51::select(&a, &b, u64::MAX).equals(&a));
        assert!(Fe51::select(&a, &b, 0).equals(&b));
        let (mut x, mut y) = (a, b);
        Fe51::cswap(&mut x, &mut y, 0);
        assert!(x.equals(&a) && y.equals(&b));
        Fe51::cswap(&mut x, &mut y, u64::MAX);
        assert!(x.equals(&b) && y.equals(&a));
        assert!(Fe51::ZERO.or_masked(&a, u64::MAX).equals(&a));
        assert!(Fe51::ZERO.or_masked(&a, 0).equals(&Fe51::ZERO));
        assert!(b.or_masked(&a, 0).equals(&b));
        assert_eq!(is_negative(&a), 1);
        assert_eq!(is_negative(&a.neg()), 0);
        assert_eq!(is_negative(&with_sign(&a, 0)), 0);
        assert_eq!(is_negative(&with_sign(&a, 1)), 1);
        assert_eq!(mask_is_zero(&Fe51::from_bytes(&from_big(&p()))), u64::MAX);
        assert_eq!(mask_is_zero(&a), 0);
        for x in 0..=255u8 {
            for y in [0u8, 1, 7, 128, 255] {
                assert_eq!(mask_eq_u8(x, y) == u64::MAX, x == y);
            }
        }
    }
}
