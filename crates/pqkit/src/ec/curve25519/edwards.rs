//! The group: the twisted Edwards curve edwards25519, −x² + y² = 1 + d·x²·y², written once over any
//! [`Field`] implementation.
//!
//! ## Coordinates and formulas
//! Points are kept in extended coordinates (X : Y : Z : T) with x = X/Z, y = Y/Z, T = XY/Z (Hisil, Wong,
//! Carter, Dawson, "Twisted Edwards curves revisited", 2008). Addition uses their unified formulas for
//! a = −1, which are complete on this curve (a is a square, d is not), so no input needs a special case:
//! the identity, a point plus itself and a point plus its negative all come out right. The other operand of
//! an addition is *cached*: (Y+X, Y−X, Z, 2dT) ([`ProjNiels`]) or, for precomputed multiples with Z = 1,
//! (y+x, y−x, 2dxy) ([`AffineNiels`]). An addition or doubling yields a [`Completed`] point
//! ((E : G), (H : F)), from which the projective form (3 multiplications) is enough for a following
//! doubling and the extended form (4) for a following addition.
//!
//! ## Scalar multiplication
//! - Secret scalars, fixed base ([`mul_base`]): signed radix 16 (64 digits in \[−8, 8\]) over a table of
//!   `j·256^i·B` (i < 32, 1 ≤ j ≤ 8): 64 additions and 4 doublings. Each table entry is chosen by reading
//!   all 8 entries of the row and keeping one by mask, then negated by mask, so neither the memory
//!   addresses nor the branches depend on the digit.
//! - Public scalars ([`straus_vartime`]): width-w non-adjacent forms, interleaved (Straus): one shared
//!   doubling per bit; odd multiples up to 15P for each point (w = 5) and a precomputed table of odd
//!   multiples up to 127B for the base point (w = 8). Variable time: verification only.
//!
//! The precomputed tables are generated source (`src/ec/tables/`, see `crate::ec::table`), derived from the
//! encoding of B in the portable field; other backends convert them (see `CurveField`).

use super::field::{self, Fe51, Field, Mask, mask_eq_u8, mask_from_bit};
#[cfg(test)]
use super::scalar::Scalar;

/// A point in extended coordinates.
#[derive(Clone, Copy)]
pub(crate) struct Point<F> {
    pub(crate) x: F,
    pub(crate) y: F,
    pub(crate) z: F,
    pub(crate) t: F,
}

/// A point in projective coordinates (X : Y : Z): the input of a doubling.
#[derive(Clone, Copy)]
pub(crate) struct Projective<F> {
    x: F,
    y: F,
    z: F,
}

/// The result of an addition or doubling: x = E/G, y = H/F.
#[derive(Clone, Copy)]
pub(crate) struct Completed<F> {
    e: F,
    f: F,
    g: F,
    h: F,
}

/// A point with Z = 1 cached for addition: (y + x, y − x, 2d·x·y). `repr(C)`: backends may read the
/// coordinates of a table row as one block of memory, in this order.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct AffineNiels<F> {
    pub(crate) ypx: F,
    pub(crate) ymx: F,
    pub(crate) xy2d: F,
}

/// A point cached for addition: (Y + X, Y − X, Z, 2d·T).
#[derive(Clone, Copy)]
pub(crate) struct ProjNiels<F> {
    ypx: F,
    ymx: F,
    z: F,
    t2d: F,
}

/// A field implementation together with its copies of the precomputed tables of multiples of B.
pub(crate) trait CurveField: Field + 'static {
    /// `BASE_TABLE[i][j] = (j + 1)·256^i·B`.
    fn base_table() -> &'static [[AffineNiels<Self>; 8]; 32];
    /// `BASE_ODD[j] = (2j + 1)·B`.
    fn base_odd() -> &'static [AffineNiels<Self>; 64];
    /// `BASE128_ODD[j] = (2j + 1)·2^128·B` (the upper half of a split base-point scalar).
    fn base128_odd() -> &'static [AffineNiels<Self>; 64];
}

impl CurveField for Fe51 {
    #[inline(always)]
    fn base_table() -> &'static [[AffineNiels<Fe51>; 8]; 32] {
        &BASE_TABLE
    }
    #[inline(always)]
    fn base_odd() -> &'static [AffineNiels<Fe51>; 64] {
        &BASE_ODD
    }
    #[inline(always)]
    fn base128_odd() -> &'static [AffineNiels<Fe51>; 64] {
        &BASE128_ODD
    }
}

impl<F: Field> Point<F> {
    pub(crate) const IDENTITY: Point<F> = Point { x: F::ZERO, y: F::ONE, z: F::ONE, t: F::ZERO };

    /// The point (x, y) for affine coordinates known to be on the curve.
    #[inline]
    pub(crate) fn from_affine(x: F, y: F) -> Point<F> {
        Point { x, y, z: F::ONE, t: x.mul(&y) }
    }

    #[inline(always)]
    fn to_projective(self) -> Projective<F> {
        Projective { x: self.x, y: self.y, z: self.z }
    }

    #[inline]
    pub(crate) fn to_proj_niels(self) -> ProjNiels<F> {
        ProjNiels { ypx: self.y.add(&self.x), ymx: self.y.sub(&self.x), z: self.z, t2d: self.t.mul(&F::D2) }
    }

    /// `self + q`.
    #[inline]
    pub(crate) fn add(&self, q: &ProjNiels<F>) -> Completed<F> {
        let a = self.y.sub(&self.x).mul(&q.ymx);
        let b = self.y.add(&self.x).mul(&q.ypx);
        let c = self.t.mul(&q.t2d);
        let zz = self.z.mul(&q.z);
        let d = zz.add(&zz);
        Completed { e: b.sub(&a), f: d.sub(&c), g: d.add(&c), h: b.add(&a) }
    }

    /// `self − q`.
    #[inline]
    pub(crate) fn sub(&self, q: &ProjNiels<F>) -> Completed<F> {
        let a = self.y.sub(&self.x).mul(&q.ypx);
        let b = self.y.add(&self.x).mul(&q.ymx);
        let c = self.t.mul(&q.t2d);
        let zz = self.z.mul(&q.z);
        let d = zz.add(&zz);
        Completed { e: b.sub(&a), f: d.add(&c), g: d.sub(&c), h: b.add(&a) }
    }

    /// `self + q`, q with Z = 1.
    #[inline(always)]
    pub(crate) fn add_affine(&self, q: &AffineNiels<F>) -> Completed<F> {
        let a = self.y.sub(&self.x).mul(&q.ymx);
        let b = self.y.add(&self.x).mul(&q.ypx);
        let c = self.t.mul(&q.xy2d);
        let d = self.z.add(&self.z);
        Completed { e: b.sub(&a), f: d.sub(&c), g: d.add(&c), h: b.add(&a) }
    }

    /// `self − q`, q with Z = 1.
    #[inline]
    pub(crate) fn sub_affine(&self, q: &AffineNiels<F>) -> Completed<F> {
        let a = self.y.sub(&self.x).mul(&q.ypx);
        let b = self.y.add(&self.x).mul(&q.ymx);
        let c = self.t.mul(&q.xy2d);
        let d = self.z.add(&self.z);
        Completed { e: b.sub(&a), f: d.add(&c), g: d.sub(&c), h: b.add(&a) }
    }

    /// `2·self`.
    #[inline]
    pub(crate) fn double(&self) -> Completed<F> {
        self.to_projective().double()
    }

    /// `−self`.
    #[inline]
    pub(crate) fn neg(&self) -> Point<F> {
        Point { x: self.x.neg(), y: self.y, z: self.z, t: self.t.neg() }
    }

    /// `8·self`.
    #[inline]
    pub(crate) fn mul_by_cofactor(&self) -> Point<F> {
        let p = self.double().to_projective().double().to_projective().double();
        p.to_extended()
    }

    /// All ones if this is the identity (x = 0, y = 1).
    #[inline]
    pub(crate) fn mask_is_identity(&self) -> Mask {
        field::mask_is_zero(&self.x) & field::mask_equal(&self.y, &self.z)
    }

    /// True if `8·self` is the identity, i.e. the point lies in the torsion subgroup of order 8 (public data
    /// only).
    pub(crate) fn is_small_order(&self) -> bool {
        self.mul_by_cofactor().mask_is_identity() != 0
    }

    /// The affine coordinates (x, y).
    #[inline]
    pub(crate) fn to_affine(self) -> (F, F) {
        let zinv = field::invert(&self.z);
        (self.x.mul(&zinv), self.y.mul(&zinv))
    }

    /// The RFC 8032 encoding: y, with the low bit of x in bit 255.
    pub(crate) fn compress(&self) -> [u8; 32] {
        let (x, y) = self.to_affine();
        let mut b = y.to_bytes();
        b[31] |= (field::is_negative(&x) as u8) << 7;
        b
    }

    /// RFC 8032 §5.1.3 decoding, strictly: y must be canonical (below p), (x, y) on the curve, and the
    /// encoding "x = 0 with the sign bit set" is refused. The error is the reason, for
    /// [`crate::Error::InvalidEncoding`]. Runs in constant time apart from the verdict.
    pub(crate) fn decompress(b: &[u8; 32]) -> Result<Point<F>, &'static str> {
        let mut yb = *b;
        yb[31] &= 0x7f;
        let sign = (b[31] >> 7) as u64;
        let y = F::from_bytes(&yb);
        if y.to_bytes() != yb {
            return Err("non-canonical point encoding (y >= p)");
        }
        let yy = y.square();
        let u = yy.sub(&F::ONE);
        let v = yy.mul(&F::D).add(&F::ONE);
        let (is_square, x) = field::sqrt_ratio(&u, &v);
        if is_square == 0 {
            return Err("not a point on the curve");
        }
        if field::mask_is_zero(&x) != 0 && sign == 1 {
            return Err("non-canonical point encoding (x = 0 with the sign bit set)");
        }
        let x = field::with_sign(&x, sign);
        Ok(Point::from_affine(x, y))
    }

    /// The Montgomery u-coordinate of this point, u = (1 + y)/(1 − y) = (Z + Y)/(Z − Y), encoded (0 for the
    /// identity, where 1 − y = 0 and the inversion gives 0).
    pub(crate) fn to_montgomery_u(self) -> [u8; 32] {
        let num = self.z.add(&self.y);
        let den = self.z.sub(&self.y);
        num.mul(&field::invert(&den)).to_bytes()
    }
}

impl<F: Field> Projective<F> {
    const IDENTITY: Projective<F> = Projective { x: F::ZERO, y: F::ONE, z: F::ONE };

    /// `2·self` (dbl-2008-hwcd with a = −1).
    #[inline(always)]
    fn double(&self) -> Completed<F> {
        let a = self.x.square();
        let b = self.y.square();
        let zz = self.z.square();
        let c = zz.add(&zz);
        let s = self.x.add(&self.y).square();
        let ab = a.add(&b);
        let g = b.sub(&a);
        Completed { e: s.sub(&ab), f: g.sub(&c), g, h: ab.neg() }
    }
}

impl<F: Field> Completed<F> {
    #[inline(always)]
    pub(crate) fn to_projective(self) -> Projective<F> {
        Projective { x: self.e.mul(&self.f), y: self.g.mul(&self.h), z: self.f.mul(&self.g) }
    }

    #[inline(always)]
    pub(crate) fn to_extended(self) -> Point<F> {
        Point { x: self.e.mul(&self.f), y: self.g.mul(&self.h), z: self.f.mul(&self.g), t: self.e.mul(&self.h) }
    }
}

impl<F: Field> ProjNiels<F> {
    pub(crate) const IDENTITY: ProjNiels<F> = ProjNiels { ypx: F::ONE, ymx: F::ONE, z: F::ONE, t2d: F::ZERO };
}

impl<F: Field> AffineNiels<F> {
    const IDENTITY: AffineNiels<F> = AffineNiels { ypx: F::ONE, ymx: F::ONE, xy2d: F::ZERO };

    /// The point in extended coordinates with Z = 4: (2(y+x − (y−x)), 2(y+x + (y−x)), 4, (2x)·(2y)) =
    /// 4·(x, y, 1, xy). One multiplication, where adding it to the identity would take seven.
    #[inline(always)]
    pub(crate) fn to_extended(self) -> Point<F> {
        let x2 = self.ypx.sub(&self.ymx); // 2x
        let y2 = self.ypx.add(&self.ymx); // 2y
        Point { x: x2.mul_small(2), y: y2.mul_small(2), z: F::ONE.mul_small(4), t: x2.mul(&y2) }
    }

    /// All-zero limbs (not a point): the start of a look-up.
    const ZEROS: AffineNiels<F> = AffineNiels { ypx: F::ZERO, ymx: F::ZERO, xy2d: F::ZERO };

    /// `self` with `a`'s limbs ORed in where `mask` is all ones.
    #[inline(always)]
    fn or_masked(&self, a: &Self, mask: Mask) -> Self {
        AffineNiels {
            ypx: self.ypx.or_masked(&a.ypx, mask),
            ymx: self.ymx.or_masked(&a.ymx, mask),
            xy2d: self.xy2d.or_masked(&a.xy2d, mask),
        }
    }

    /// `−self` where `mask` is all ones.
    #[inline(always)]
    pub(crate) fn cneg(&mut self, mask: Mask) {
        F::cswap(&mut self.ypx, &mut self.ymx, mask);
        self.xy2d = F::select(&self.xy2d.neg(), &self.xy2d, mask);
    }
}

/// The entry `d·row[0]` for a digit d in \[−8, 8\], in constant time: every entry is read and ORed, by
/// mask, into all-zero limbs (exactly one of the identity and the 8 entries has its mask set; independent
/// ORs, unlike a chain of selections, so the compiler can vectorise them), and the negation is by mask.
#[inline]
pub(crate) fn lookup<F: Field>(row: &[AffineNiels<F>; 8], d: i8) -> AffineNiels<F> {
    let d = d as i64;
    let neg = d >> 63; // all ones if d < 0
    let abs = ((d ^ neg) - neg) as u8;
    let mut r = AffineNiels::ZEROS.or_masked(&AffineNiels::IDENTITY, mask_eq_u8(abs, 0));
    for (j, entry) in row.iter().enumerate() {
        r = r.or_masked(entry, mask_eq_u8(abs, j as u8 + 1));
    }
    r.cneg(mask_from_bit(neg as u64 & 1));
    r
}

/// The signed radix-16 digits of `s` < 2^255: 64 digits in \[−8, 8\] (the last in \[−8, 8\] too, since
/// s < 2^255), `s = Σ d[i]·16^i`. Arithmetic only.
pub(crate) fn radix16(s: &[u8; 32]) -> [i8; 64] {
    let mut d = [0i8; 64];
    for i in 0..32 {
        d[2 * i] = (s[i] & 15) as i8;
        d[2 * i + 1] = (s[i] >> 4) as i8;
    }
    // Move each digit into [−8, 8) by carrying into the next.
    let mut carry = 0i8;
    for x in d.iter_mut().take(63) {
        *x += carry;
        carry = (*x + 8) >> 4;
        *x -= carry << 4;
    }
    d[63] += carry;
    d
}

/// The signed radix-32 digits of `s` < 2^255: 52 digits, `s = Σ d[i]·32^i`, the first 51 in \[−16, 15\]
/// and the last (the carry out of bit 255) 0 or 1. Arithmetic only: the positions are public, the values
/// only meet shifts, masks and additions.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn radix32(s: &[u8; 32]) -> [i8; 52] {
    let mut w = [0u64; 5];
    for (w, c) in w.iter_mut().zip(s.chunks_exact(8)) {
        *w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    }
    let mut d = [0i8; 52];
    for (i, x) in d.iter_mut().take(51).enumerate() {
        let (k, o) = (5 * i / 64, 5 * i % 64);
        let v = if o == 0 { w[k] } else { (w[k] >> o) | (w[k + 1] << (64 - o)) };
        *x = (v & 31) as i8;
    }
    // Move each digit into [−16, 16) by carrying into the next.
    let mut carry = 0i8;
    for x in d.iter_mut().take(51) {
        *x += carry;
        carry = (*x + 16) >> 5;
        *x -= carry << 5;
    }
    d[51] = carry;
    crate::ct::wipe(&mut w);
    d
}

/// `s·B` for a secret `s` < 2^255 (little-endian), in constant time, with the portable [`lookup`].
#[inline]
pub(crate) fn mul_base<F: CurveField>(s: &[u8; 32]) -> Point<F> {
    mul_base_with(s, lookup::<F>)
}

/// `s·B` as [`mul_base`], with `lookup` choosing each table entry: a backend passes its own, which must
/// return what [`lookup`] returns for every row and digit in \[−8, 8\], in constant time (tested per backend).
#[inline]
pub(crate) fn mul_base_with<F: CurveField, L>(s: &[u8; 32], lookup: L) -> Point<F>
where
    L: Fn(&[AffineNiels<F>; 8], i8) -> AffineNiels<F>,
{
    debug_assert!(s[31] < 0x80);
    let mut digits = radix16(s);
    let table = F::base_table();
    // Each entry is looked up one addition ahead (software pipelining): the look-up's loads do not depend
    // on the accumulator, so they run while the previous addition's products do.
    // The first entry becomes the accumulator directly (no addition to the identity).
    let mut acc = lookup(&table[0], digits[1]).to_extended();
    let mut next = lookup(&table[1], digits[3]);
    for i in (3..63).step_by(2) {
        let cur = next;
        next = lookup(&table[(i + 2) / 2], digits[i + 2]);
        acc = acc.add_affine(&cur).to_extended();
    }
    // The last addition before the doublings needs no T (a doubling reads X, Y, Z only).
    let cur = next;
    next = lookup(&table[0], digits[0]);
    let acc = acc.add_affine(&cur).to_projective();
    let acc16 = acc.double().to_projective().double().to_projective().double().to_projective().double();
    let mut acc = acc16.to_extended();
    for i in (0..62).step_by(2) {
        let cur = next;
        next = lookup(&table[(i + 2) / 2], digits[i + 2]);
        acc = acc.add_affine(&cur).to_extended();
    }
    acc = acc.add_affine(&next).to_extended();
    crate::ct::wipe(&mut digits);
    acc
}

/// The width-`w` non-adjacent form of `s` < 2^255: `s = Σ n[i]·2^i` with every nonzero `n[i]` odd and
/// below 2^(w−1) in absolute value, and at most one nonzero digit in any w consecutive ones. Variable
/// time (public scalars only).
pub(crate) fn naf(s: &[u8; 32], w: u32) -> [i8; 256] {
    debug_assert!((2..=8).contains(&w) && s[31] < 0x80);
    let mut x = [0u64; 5];
    for (i, c) in s.chunks_exact(8).enumerate() {
        x[i] = u64::from_le_bytes(c.try_into().unwrap());
    }
    let width = 1i64 << w;
    let mut out = [0i8; 256];
    for digit in out.iter_mut() {
        if x[0] & 1 == 1 {
            let mut d = (x[0] & (width as u64 - 1)) as i64;
            if d >= width / 2 {
                d -= width;
            }
            *digit = d as i8;
            // x −= d, leaving the low w bits zero.
            if d > 0 {
                let (v, mut borrow) = x[0].overflowing_sub(d as u64);
                x[0] = v;
                for limb in x.iter_mut().skip(1) {
                    let (v, b) = limb.overflowing_sub(borrow as u64);
                    *limb = v;
                    borrow = b;
                }
            } else {
                let (v, mut carry) = x[0].overflowing_add((-d) as u64);
                x[0] = v;
                for limb in x.iter_mut().skip(1) {
                    let (v, c) = limb.overflowing_add(carry as u64);
                    *limb = v;
                    carry = c;
                }
            }
        }
        for i in 0..4 {
            x[i] = (x[i] >> 1) | (x[i + 1] << 63);
        }
        x[4] >>= 1;
    }
    out
}

/// The odd multiples P, 3P, …, 15P, cached for addition (the table of a width-5 NAF).
pub(crate) fn odd_multiples<F: Field>(p: &Point<F>) -> [ProjNiels<F>; 8] {
    let p2 = p.double().to_extended().to_proj_niels();
    let mut out = [p.to_proj_niels(); 8];
    let mut cur = *p;
    for entry in out.iter_mut().skip(1) {
        cur = cur.add(&p2).to_extended();
        *entry = cur.to_proj_niels();
    }
    out
}

/// `b·B + Σ nafs[j]·points` where `nafs[j]` is the width-5 NAF of the j-th scalar and `tables[j]` the
/// [`odd_multiples`] of the j-th point, and `b_naf` the width-8 NAF of b. Variable time.
pub(crate) fn straus_vartime<F: CurveField>(
    b_naf: &[i8; 256],
    nafs: &[[i8; 256]],
    tables: &[[ProjNiels<F>; 8]],
) -> Point<F> {
    straus_vartime_split(b_naf, None, nafs, tables)
}

/// [`straus_vartime`] with the base point's scalar split as `b_lo + 2^128·b_hi`: `b_hi_naf`, when given, is
/// the width-8 NAF of `b_hi`, taken from the table of odd multiples of 2^128·B. With every other scalar
/// below 2^128 too, the loop runs about 128 doublings instead of 253. Variable time.
pub(crate) fn straus_vartime_split<F: CurveField>(
    b_naf: &[i8; 256],
    b_hi_naf: Option<&[i8; 256]>,
    nafs: &[[i8; 256]],
    tables: &[[ProjNiels<F>; 8]],
) -> Point<F> {
    debug_assert_eq!(nafs.len(), tables.len());
    let base = F::base_odd();
    let base128 = F::base128_odd();
    let zero = [0i8; 256];
    let b_hi = b_hi_naf.unwrap_or(&zero);
    let mut top = None;
    for i in (0..256).rev() {
        if b_naf[i] != 0 || b_hi[i] != 0 || nafs.iter().any(|n| n[i] != 0) {
            top = Some(i);
            break;
        }
    }
    let Some(top) = top else { return Point::IDENTITY };
    let mut acc = Projective::IDENTITY;
    let mut last = Point::IDENTITY;
    for i in (0..=top).rev() {
        let mut c = acc.double();
        for (n, t) in nafs.iter().zip(tables) {
            let d = n[i];
            if d > 0 {
                c = c.to_extended().add(&t[(d / 2) as usize]);
            } else if d < 0 {
                c = c.to_extended().sub(&t[(-d / 2) as usize]);
            }
        }
        let d = b_naf[i];
        if d > 0 {
            c = c.to_extended().add_affine(&base[(d / 2) as usize]);
        } else if d < 0 {
            c = c.to_extended().sub_affine(&base[(-d / 2) as usize]);
        }
        let d = b_hi[i];
        if d > 0 {
            c = c.to_extended().add_affine(&base128[(d / 2) as usize]);
        } else if d < 0 {
            c = c.to_extended().sub_affine(&base128[(-d / 2) as usize]);
        }
        if i == 0 {
            last = c.to_extended();
        } else {
            acc = c.to_projective();
        }
    }
    last
}

/// `s·P` for a public scalar (variable time); for tests of the other paths.
#[cfg(test)]
pub(crate) fn mul_vartime<F: CurveField>(s: &Scalar, p: &Point<F>) -> Point<F> {
    straus_vartime(&[0; 256], &[naf(&s.to_bytes(), 5)], &[odd_multiples(p)])
}

// ---- Tables, in the portable field -------------------------------------------------------------------
//
// Generated from the derivations below (compiled for the tests only) into src/ec/tables/; see
// crate::ec::table.

/// The encoding of the base point B: y = 4/5, x even.
#[cfg(test)]
pub(crate) const BASE_ENCODED: [u8; 32] = {
    let mut b = [0x66u8; 32];
    b[0] = 0x58;
    b
};

/// A point in extended coordinates for the `const fn` table computation.
#[cfg(test)]
#[derive(Clone, Copy)]
struct CPoint {
    x: Fe51,
    y: Fe51,
    z: Fe51,
    t: Fe51,
}

/// B, decoded in `const` code (the constant-time run-time decoder is generic, so it cannot run in `const`).
#[cfg(test)]
const fn base_point() -> CPoint {
    let y = Fe51::from_bytes(&BASE_ENCODED);
    let yy = y.square();
    let u = yy.sub(&Fe51::ONE);
    let v = yy.mul(&Fe51::D).add(&Fe51::ONE);
    let v3 = v.square().mul(&v);
    let v7 = v3.square().mul(&v);
    let mut x = u.mul(&v3).mul(&u.mul(&v7).pow_p58());
    if !v.mul(&x.square()).equals(&u) {
        x = x.mul(&Fe51::SQRT_M1);
    }
    if x.to_bytes()[0] & 1 == 1 {
        x = x.neg();
    }
    CPoint { x, y, z: Fe51::ONE, t: x.mul(&y) }
}

/// The unified addition (the same formula as [`Point::add`], written out on `Fe51` for `const`).
#[cfg(test)]
const fn cadd(p: &CPoint, q: &CPoint) -> CPoint {
    let a = p.y.sub(&p.x).mul(&q.y.sub(&q.x));
    let b = p.y.add(&p.x).mul(&q.y.add(&q.x));
    let c = p.t.mul(&Fe51::D2).mul(&q.t);
    let zz = p.z.mul(&q.z);
    let d = zz.add(&zz);
    let (e, f, g, h) = (b.sub(&a), d.sub(&c), d.add(&c), b.add(&a));
    CPoint { x: e.mul(&f), y: g.mul(&h), z: f.mul(&g), t: e.mul(&h) }
}

/// Converts `n` points to affine Niels form with one inversion (Montgomery's trick).
#[cfg(test)]
const fn to_affine_niels<const N: usize>(pts: &[CPoint; N]) -> [AffineNiels<Fe51>; N] {
    // prefix[i] = z_0 ⋯ z_{i−1}
    let mut prefix = [Fe51::ONE; N];
    let mut acc = Fe51::ONE;
    let mut i = 0;
    while i < N {
        prefix[i] = acc;
        acc = acc.mul(&pts[i].z);
        i += 1;
    }
    let mut inv = acc.invert(); // (z_0 ⋯ z_{N−1})^−1
    let mut out = [AffineNiels { ypx: Fe51::ZERO, ymx: Fe51::ZERO, xy2d: Fe51::ZERO }; N];
    let mut i = N;
    while i > 0 {
        i -= 1;
        let zinv = inv.mul(&prefix[i]);
        inv = inv.mul(&pts[i].z);
        let x = pts[i].x.mul(&zinv);
        let y = pts[i].y.mul(&zinv);
        out[i] = AffineNiels { ypx: y.add(&x).mul(&Fe51::ONE), ymx: y.sub(&x), xy2d: x.mul(&y).mul(&Fe51::D2) };
    }
    out
}

/// `[[(j + 1)·2^shift·256^i·B for j in 0..8] for i in 0..32]`: shift 0 for `BASE_TABLE`; shift 4 gives the
/// rows of the odd radix-16 digits, which a comb without doublings reads.
#[cfg(test)]
pub(crate) const fn compute_base_table(shift: u32) -> [[AffineNiels<Fe51>; 8]; 32] {
    let mut pts = [base_point(); 256];
    let mut row_base = base_point();
    let mut k = 0;
    while k < shift {
        row_base = cadd(&row_base, &row_base);
        k += 1;
    }
    let mut i = 0;
    while i < 32 {
        let mut cur = row_base;
        let mut j = 0;
        while j < 8 {
            pts[8 * i + j] = cur;
            cur = cadd(&cur, &row_base);
            j += 1;
        }
        // row_base ← 256·row_base
        let mut k = 0;
        while k < 8 {
            row_base = cadd(&row_base, &row_base);
            k += 1;
        }
        i += 1;
    }
    let flat = to_affine_niels(&pts);
    let mut out = [[AffineNiels { ypx: Fe51::ZERO, ymx: Fe51::ZERO, xy2d: Fe51::ZERO }; 8]; 32];
    let mut i = 0;
    while i < 32 {
        let mut j = 0;
        while j < 8 {
            out[i][j] = flat[8 * i + j];
            j += 1;
        }
        i += 1;
    }
    out
}

/// `[[(j + 1)·32^(first + i)·B for j in 0..16] for i in 0..R]` (`N` = 16·R): rows of the signed radix-32
/// fixed-base comb, from row `first`.
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) const fn compute_radix32_rows<const R: usize, const N: usize>(first: u32) -> [[AffineNiels<Fe51>; 16]; R] {
    assert!(N == 16 * R);
    let mut row_base = base_point();
    let mut k = 0;
    while k < 5 * first {
        row_base = cadd(&row_base, &row_base);
        k += 1;
    }
    let mut pts = [row_base; N];
    let mut i = 0;
    while i < R {
        let mut cur = row_base;
        let mut j = 0;
        while j < 16 {
            pts[16 * i + j] = cur;
            cur = cadd(&cur, &row_base);
            j += 1;
        }
        // row_base ← 32·row_base
        let mut k = 0;
        while k < 5 {
            row_base = cadd(&row_base, &row_base);
            k += 1;
        }
        i += 1;
    }
    let flat = to_affine_niels(&pts);
    let mut out = [[AffineNiels { ypx: Fe51::ZERO, ymx: Fe51::ZERO, xy2d: Fe51::ZERO }; 16]; R];
    let mut i = 0;
    while i < R {
        let mut j = 0;
        while j < 16 {
            out[i][j] = flat[16 * i + j];
            j += 1;
        }
        i += 1;
    }
    out
}

/// `[(2j + 1)·2^shift·B for j in 0..64]`: the odd multiples of 2^shift·B (shift 0 for `BASE_ODD`, 128 for the
/// upper half of a split base-point scalar, `BASE128_ODD`).
#[cfg(test)]
const fn compute_odd_multiples(shift: u32) -> [AffineNiels<Fe51>; 64] {
    let mut b = base_point();
    let mut k = 0;
    while k < shift {
        b = cadd(&b, &b);
        k += 1;
    }
    let b2 = cadd(&b, &b);
    let mut pts = [b; 64];
    let mut j = 1;
    while j < 64 {
        pts[j] = cadd(&pts[j - 1], &b2);
        j += 1;
    }
    to_affine_niels(&pts)
}

impl AffineNiels<Fe51> {
    /// An entry from its row of a generated table: the limbs of y + x, y − x and 2d·x·y in turn.
    const fn from_words(w: &[u64; 15]) -> Self {
        AffineNiels {
            ypx: Fe51([w[0], w[1], w[2], w[3], w[4]]),
            ymx: Fe51([w[5], w[6], w[7], w[8], w[9]]),
            xy2d: Fe51([w[10], w[11], w[12], w[13], w[14]]),
        }
    }

    /// The entry's row of a generated table.
    #[cfg(test)]
    fn words(&self) -> [u64; 15] {
        let mut w = [0; 15];
        w[..5].copy_from_slice(&self.ypx.0);
        w[5..10].copy_from_slice(&self.ymx.0);
        w[10..].copy_from_slice(&self.xy2d.0);
        w
    }
}

/// A generated list of entries.
const fn niels_list<const N: usize>(w: &[[u64; 15]; N]) -> [AffineNiels<Fe51>; N] {
    let mut out = [AffineNiels { ypx: Fe51::ZERO, ymx: Fe51::ZERO, xy2d: Fe51::ZERO }; N];
    let mut j = 0;
    while j < N {
        out[j] = AffineNiels::from_words(&w[j]);
        j += 1;
    }
    out
}

/// A generated table of `R` rows of `C` entries.
const fn niels_rows<const R: usize, const C: usize>(w: &[[[u64; 15]; C]; R]) -> [[AffineNiels<Fe51>; C]; R] {
    let mut out = [[AffineNiels { ypx: Fe51::ZERO, ymx: Fe51::ZERO, xy2d: Fe51::ZERO }; C]; R];
    let mut i = 0;
    while i < R {
        out[i] = niels_list(&w[i]);
        i += 1;
    }
    out
}

/// `BASE_TABLE[i][j] = (j + 1)·256^i·B` (other backends convert it in their own static initializers).
pub(crate) static BASE_TABLE: [[AffineNiels<Fe51>; 8]; 32] = niels_rows(&include!("../tables/ed25519_base.rs"));
/// `BASE_ODD[j] = (2j + 1)·B`.
pub(crate) static BASE_ODD: [AffineNiels<Fe51>; 64] = niels_list(&include!("../tables/ed25519_base_odd.rs"));
/// `BASE128_ODD[j] = (2j + 1)·2^128·B`.
pub(crate) static BASE128_ODD: [AffineNiels<Fe51>; 64] = niels_list(&include!("../tables/ed25519_base128_odd.rs"));
/// `BASE_TABLE_ODD[i][j] = (j + 1)·16·256^i·B`: the rows of the odd radix-16 digits, which a comb without
/// doublings reads. Only other backends' static initializers read it, to convert it.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::large_const_arrays)]
pub(crate) const BASE_TABLE_ODD: [[AffineNiels<Fe51>; 8]; 32] =
    niels_rows(&include!("../tables/ed25519_base_odd_rows.rs"));
/// `BASE_RADIX32[i][j] = (j + 1)·32^i·B`: the rows of the signed radix-32 digits ([`radix32`]) of a fixed-base
/// comb. Only other backends' static initializers read it, to convert it.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::large_const_arrays)]
pub(crate) const BASE_RADIX32: [[AffineNiels<Fe51>; 16]; 52] = niels_rows(&include!("../tables/ed25519_radix32.rs"));

/// The base point B.
#[cfg(test)]
pub(crate) fn base_point_runtime<F: Field>() -> Point<F> {
    match Point::decompress(&BASE_ENCODED) {
        Ok(p) => p,
        Err(_) => unreachable!("the base point encoding decodes"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use super::*;
    use crate::ec::curve25519::field::tests::{Xs, p, to_big};
    use num_bigint::BigUint;
    use std::{vec, vec::Vec};

    /// Affine points over BigUint: the textbook addition law, as the reference.
    #[derive(Clone, PartialEq, Debug)]
    pub(crate) struct Ref {
        pub(crate) x: BigUint,
        pub(crate) y: BigUint,
    }

    fn d() -> BigUint {
        to_big(&Fe51::D)
    }

    fn inv(a: &BigUint) -> BigUint {
        let p = p();
        a.modpow(&(&p - 2u8), &p)
    }

    impl Ref {
        pub(crate) fn add(&self, o: &Ref) -> Ref {
            let p = p();
            let dxy = d() * &self.x * &o.x % &p * &self.y * &o.y % &p;
            let xn = (&self.x * &o.y + &self.y * &o.x) % &p;
            let yn = (&self.y * &o.y + &self.x * &o.x) % &p; // a = −1: y1y2 − a·x1x2
            let one = BigUint::from(1u8);
            Ref { x: xn * inv(&((&one + &dxy) % &p)) % &p, y: yn * inv(&((&one + &p - &dxy) % &p)) % &p }
        }
        pub(crate) fn mul(&self, k: &BigUint) -> Ref {
            let mut r = Ref { x: BigUint::from(0u8), y: BigUint::from(1u8) };
            for i in (0..k.bits()).rev() {
                r = r.add(&r);
                if k.bit(i) {
                    r = r.add(self);
                }
            }
            r
        }
        pub(crate) fn of<F: Field>(pt: &Point<F>) -> Ref {
            let (x, y) = pt.to_affine();
            Ref { x: to_big(&x), y: to_big(&y) }
        }
    }

    pub(crate) fn base_ref() -> Ref {
        Ref::of(&base_point_runtime::<Fe51>())
    }

    #[test]
    fn base_point_is_the_rfc_one() {
        let p = p();
        let b = base_ref();
        // y = 4/5; x = 15112221349535400772501151409588531511454012693041857206046113283949847762202 (RFC 8032 §5.1)
        assert_eq!(b.y, BigUint::from(4u8) * inv(&BigUint::from(5u8)) % &p);
        assert_eq!(
            b.x,
            "15112221349535400772501151409588531511454012693041857206046113283949847762202".parse().unwrap()
        );
        // On the curve, and of order L.
        let (x2, y2) = (&b.x * &b.x % &p, &b.y * &b.y % &p);
        assert_eq!((&y2 + &p - &x2) % &p, (BigUint::from(1u8) + d() * &x2 % &p * &y2) % &p);
        let l = BigUint::from_bytes_le(&super::super::scalar::L_BYTES);
        assert_eq!(b.mul(&l), Ref { x: BigUint::from(0u8), y: BigUint::from(1u8) });
    }

    #[test]
    fn generated_tables_match_their_derivation() {
        use crate::ec::table::tests::{check, report};
        let words = |t: &[AffineNiels<Fe51>]| t.iter().map(AffineNiels::words).collect::<Vec<_>>();
        let coords = "affine Niels form (y + x, y − x, 2d·x·y), each as five 51-bit limbs";
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut outcomes = vec![
            check(
                "ed25519_base.rs",
                &std::format!("Curve25519: BASE_TABLE[i][j] = (j + 1)·256^i·B, {coords}"),
                8,
                &words(BASE_TABLE.as_flattened()),
                &words(compute_base_table(0).as_flattened()),
            ),
            check(
                "ed25519_base_odd.rs",
                &std::format!("Curve25519: BASE_ODD[j] = (2j + 1)·B, {coords}"),
                0,
                &words(&BASE_ODD),
                &words(&compute_odd_multiples(0)),
            ),
            check(
                "ed25519_base128_odd.rs",
                &std::format!("Curve25519: BASE128_ODD[j] = (2j + 1)·2^128·B, {coords}"),
                0,
                &words(&BASE128_ODD),
                &words(&compute_odd_multiples(128)),
            ),
        ];
        #[cfg(target_arch = "x86_64")]
        {
            let radix32: Vec<AffineNiels<Fe51>> =
                (0..4).flat_map(|g| compute_radix32_rows::<13, 208>(13 * g).into_iter().flatten()).collect();
            outcomes.push(check(
                "ed25519_base_odd_rows.rs",
                &std::format!("Curve25519: BASE_TABLE_ODD[i][j] = (j + 1)·16·256^i·B, {coords}"),
                8,
                &words(BASE_TABLE_ODD.as_flattened()),
                &words(compute_base_table(4).as_flattened()),
            ));
            outcomes.push(check(
                "ed25519_radix32.rs",
                &std::format!("Curve25519: BASE_RADIX32[i][j] = (j + 1)·32^i·B, {coords}"),
                16,
                &words(BASE_RADIX32.as_flattened()),
                &words(&radix32),
            ));
        }
        report(&outcomes);
    }

    #[test]
    fn tables_hold_the_right_multiples() {
        let b = base_ref();
        let niels = |n: &AffineNiels<Fe51>, want: &Ref| {
            let p = p();
            assert_eq!(to_big(&n.ypx), (&want.y + &want.x) % &p);
            assert_eq!(to_big(&n.ymx), (&want.y + &p - &want.x) % &p);
            assert_eq!(to_big(&n.xy2d), BigUint::from(2u8) * d() * &want.x % &p * &want.y % &p);
        };
        for i in 0..32u32 {
            for j in 0..8u32 {
                let k = BigUint::from(j + 1) << (8 * i);
                niels(&BASE_TABLE[i as usize][j as usize], &b.mul(&k));
            }
        }
        for j in 0..64u32 {
            niels(&BASE_ODD[j as usize], &b.mul(&BigUint::from(2 * j + 1)));
        }
    }

    #[test]
    fn group_law_matches_the_affine_reference() {
        let b = base_point_runtime::<Fe51>();
        let mut rng = Xs(0x2008_0001);
        let id = Point::<Fe51>::IDENTITY;
        let mut pts = vec![b, id, b.neg()];
        for _ in 0..20 {
            let s = Scalar::from_bytes_mod_order(&rng.bytes());
            pts.push(mul_vartime(&s, &b));
        }
        for (i, p) in pts.iter().enumerate() {
            let q = &pts[(i * 5 + 1) % pts.len()];
            let (rp, rq) = (Ref::of(p), Ref::of(q));
            assert_eq!(Ref::of(&p.add(&q.to_proj_niels()).to_extended()), rp.add(&rq));
            assert_eq!(Ref::of(&p.sub(&q.to_proj_niels()).to_extended()), rp.add(&Ref::of(&q.neg())));
            assert_eq!(Ref::of(&p.double().to_extended()), rp.add(&rp));
            assert_eq!(Ref::of(&p.add(&p.to_proj_niels()).to_extended()), rp.add(&rp), "unified: P + P");
            assert!(p.sub(&p.to_proj_niels()).to_extended().mask_is_identity() != 0, "complete: P − P");
            // Affine-Niels addition on an affine copy of q.
            let (qx, qy) = q.to_affine();
            let qa = AffineNiels { ypx: qy.add(&qx), ymx: qy.sub(&qx), xy2d: qx.mul(&qy).mul(&Fe51::D2) };
            assert_eq!(Ref::of(&p.add_affine(&qa).to_extended()), rp.add(&rq));
            assert_eq!(Ref::of(&p.sub_affine(&qa).to_extended()), rp.add(&Ref::of(&q.neg())));
            // Compression round trip.
            let enc = p.compress();
            assert_eq!(Ref::of(&Point::<Fe51>::decompress(&enc).unwrap()), rp);
        }
    }

    #[test]
    fn fixed_base_and_straus_match_the_reference() {
        let b = base_ref();
        let l = BigUint::from_bytes_le(&super::super::scalar::L_BYTES);
        let mut rng = Xs(0x2008_0002);
        let mut scalars: Vec<[u8; 32]> = vec![[0; 32], [1; 32], [0x7f; 32]];
        let mut top = [0xff; 32];
        top[31] = 0x7f;
        scalars.push(top);
        scalars.push(super::super::scalar::L_BYTES);
        for _ in 0..40 {
            let mut s = rng.bytes();
            s[31] &= 0x7f;
            scalars.push(s);
        }
        for s in &scalars {
            let k = BigUint::from_bytes_le(s);
            let want = b.mul(&(&k % &l));
            assert_eq!(Ref::of(&mul_base::<Fe51>(s)), want);
            // The radix-32 digits reconstruct the scalar, each in its range.
            let r32 = radix32(s);
            let mut v = num_bigint::BigInt::from(0);
            for i in (0..52).rev() {
                v = v * 32 + r32[i];
                assert!(if i < 51 { (-16..16).contains(&r32[i]) } else { (0..=1).contains(&r32[i]) });
            }
            assert_eq!(v, num_bigint::BigInt::from(k.clone()), "radix32");
            let n5 = naf(s, 5);
            let n8 = naf(s, 8);
            // NAF reconstructs the scalar.
            for (n, w) in [(&n5, 5), (&n8, 8)] {
                let mut v = num_bigint::BigInt::from(0);
                for i in (0..256).rev() {
                    v = v * 2 + n[i];
                    assert!(n[i] == 0 || (n[i] % 2 != 0 && (n[i] as i32).abs() < 1 << (w - 1)));
                }
                assert_eq!(v, num_bigint::BigInt::from(k.clone()));
            }
            if s[31] < 0x10 {
                let sc = Scalar::from_bytes_mod_order(s);
                let p = base_point_runtime::<Fe51>();
                assert_eq!(Ref::of(&mul_vartime(&sc, &p)), want);
                // b·B + s·B through the base-point table.
                let two = straus_vartime(&n8, &[n5], &[odd_multiples(&p)]);
                assert_eq!(Ref::of(&two), want.add(&want));
            }
        }
    }

    #[test]
    fn decompression_is_strict() {
        // y = p (non-canonical encoding of 0), y = 1 with the sign bit set, and a y off the curve.
        let mut pb = [0xffu8; 32];
        pb[0] = 0xed;
        pb[31] = 0x7f;
        assert!(Point::<Fe51>::decompress(&pb).err().unwrap().contains("y >= p"));
        let mut one = [0u8; 32];
        one[0] = 1;
        assert!(Point::<Fe51>::decompress(&one).is_ok());
        one[31] = 0x80;
        assert!(Point::<Fe51>::decompress(&one).err().unwrap().contains("x = 0"));
        let mut two = [0u8; 32];
        two[0] = 2;
        assert!(Point::<Fe51>::decompress(&two).err().unwrap().contains("not a point"));
        // Small order: the identity and the point of order 2 (y = −1).
        let id = Point::<Fe51>::decompress(&{
            let mut b = [0u8; 32];
            b[0] = 1;
            b
        })
        .unwrap();
        assert!(id.is_small_order());
        let mut m1 = [0xffu8; 32];
        m1[0] = 0xec;
        m1[31] = 0x7f;
        assert!(Point::<Fe51>::decompress(&m1).unwrap().is_small_order());
        assert!(!base_point_runtime::<Fe51>().is_small_order());
    }
}
