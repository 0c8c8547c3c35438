//! The P-256 group: projective coordinates (X : Y : Z), x = X/Z, y = Y/Z, the identity (0 : 1 : 0), and the
//! complete formulas of Renes, Costello and Batina ("Complete addition formulas for prime order elliptic
//! curves", 2016, Algorithms 4, 5 and 6 for a = −3): one formula for every pair of inputs, no exceptions,
//! no branches. They derive the generated tables and are the reference of the tests; the run-time
//! multiplications use the cheaper Jacobian formulas for a = −3, whose exceptional inputs are shown not to
//! arise (or are masked) where each multiplication is documented.
//!
//! ## Multiplications
//! - [`mul_base`] (constant time): k (or n − k, whichever is below 2^255, the point negated back at the end)
//!   written in 52 signed radix-32 digits dᵢ ∈ [−16, 16]; k·G = Σ dᵢ·32^i·G with `BASE_TABLE`, row i holding
//!   (j + 1)·32^i·G (affine, a generated table): 52 mixed Jacobian additions (8M + 3S; its exceptional cases
//!   cannot occur except the identity, handled by masks: the argument is at [`mul_base`]) and no doubling. Each look-up
//!   reads all 16 entries of its row and keeps one by masks; the sign is applied by a masked negation of y.
//! - [`mul`] (constant time): the same recoding, a table of 1·P … 8·P in affine form, a Jacobian
//!   accumulator with 4 doublings (a = −3, 4M + 4S) and one mixed addition (8M + 3S) per digit, every
//!   look-up a masked scan of the 8 entries; the mixed addition's exceptional cases cannot occur except the
//!   identity, which masks handle (the argument is at [`mul`]).
//! - [`verify`] (variable time, public inputs): u1·G + u2·Q by Straus interleaving of width-8 NAF digits of
//!   u1 over the generated table of the odd multiples G … 127·G, and width-5 NAF digits of u2 over
//!   Q … 15·Q (made affine with one inversion, so that both use mixed additions); the final x-coordinate
//!   is compared with r in projective form (X = r·Z or X = (r + n)·Z),
//!   without an inversion.

use super::field::{Fe, FieldArith, P, Soft, eq_mask, limbs_from_be, sbb4};
use super::scalar::{N, Scalar};

/// A point in projective coordinates.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Proj {
    pub(crate) x: Fe,
    pub(crate) y: Fe,
    pub(crate) z: Fe,
}

/// A point in affine coordinates (never the identity), Montgomery-form field elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Aff {
    pub(crate) x: Fe,
    pub(crate) y: Fe,
}

/// The arithmetic of one backend as the point layer uses it: the field operations of [`FieldArith`] and the
/// constant-time scan of a table row of affine points.
pub(crate) trait Arith: FieldArith {
    /// Entry `idx − 1` of a row of K affine points, constant time: every entry is read and the one kept
    /// by masks; `idx` = 0 gives entry 0 (a stand-in the callers discard by mask). `idx` is at most K.
    /// Backends with vector registers scan the row with them.
    #[inline(always)]
    fn lookup<const K: usize>(row: &[Aff; K], idx: u64) -> Aff {
        let mut out = row[0];
        for (j, e) in row.iter().enumerate() {
            let m = eq_mask(&[idx, 0, 0, 0], &[j as u64 + 1, 0, 0, 0]);
            out.x = Fe::select(m, &e.x, &out.x);
            out.y = Fe::select(m, &e.y, &out.y);
        }
        out
    }

    /// 2·P in Jacobian coordinates: [`jdouble_formula`] unless a backend runs the whole formula as one
    /// routine (which must give the same coordinates).
    #[inline(always)]
    fn jdouble(p: &Jac) -> Jac {
        jdouble_formula::<Self>(p)
    }

    /// 2^n·P: [`Arith::jdouble`] n times, unless a backend keeps the point in its own working memory
    /// between the doublings (which must give the same coordinates).
    #[inline(always)]
    fn jdouble_n(p: &Jac, n: usize) -> Jac {
        let mut r = *p;
        for _ in 0..n {
            r = Self::jdouble(&r);
        }
        r
    }

    /// P + Q for an affine Q without the exceptional cases: [`jadd_affine_formula`] unless a backend runs
    /// the whole formula as one routine (which must give the same coordinates, exceptional inputs included).
    #[inline(always)]
    fn jadd_affine(p: &Jac, q: &Aff) -> Jac {
        jadd_affine_formula::<Self>(p, q)
    }
}

impl Arith for Soft {}

/// The curve constant b.
pub(crate) const B: Fe = Fe::from_hex("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b");

/// The base point G.
#[cfg(test)]
pub(crate) const G: Aff = Aff {
    x: Fe::from_hex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"),
    y: Fe::from_hex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"),
};

impl Proj {
    #[cfg(test)]
    pub(crate) const IDENTITY: Proj = Proj { x: Fe::ZERO, y: Fe::ONE, z: Fe::ZERO };

    #[cfg(test)]
    #[inline(always)]
    pub(crate) const fn from_affine(a: &Aff) -> Proj {
        Proj { x: a.x, y: a.y, z: Fe::ONE }
    }

    #[inline(always)]
    fn neg(&self) -> Proj {
        Proj { x: self.x, y: self.y.neg(), z: self.z }
    }

    #[inline(always)]
    fn select(mask: u64, a: &Proj, b: &Proj) -> Proj {
        Proj { x: Fe::select(mask, &a.x, &b.x), y: Fe::select(mask, &a.y, &b.y), z: Fe::select(mask, &a.z, &b.z) }
    }
}

// The formulas, written once as macros over the multiplication so that both the `const fn` table builder
// and the backends' generic code expand them.

/// Algorithm 4: P + Q, complete.
#[cfg(test)]
macro_rules! rcb_add {
    ($mul:expr, $add:expr, $sub:expr, $p:expr, $q:expr) => {{
        let (p, q) = ($p, $q);
        let mul = $mul;
        let add = $add;
        let sub = $sub;
        let t0 = mul(&p.x, &q.x);
        let t1 = mul(&p.y, &q.y);
        let t2 = mul(&p.z, &q.z);
        let t3 = add(&p.x, &p.y);
        let t4 = add(&q.x, &q.y);
        let t3 = mul(&t3, &t4);
        let t4 = add(&t0, &t1);
        let t3 = sub(&t3, &t4);
        let t4 = add(&p.y, &p.z);
        let x3 = add(&q.y, &q.z);
        let t4 = mul(&t4, &x3);
        let x3 = add(&t1, &t2);
        let t4 = sub(&t4, &x3);
        let x3 = add(&p.x, &p.z);
        let y3 = add(&q.x, &q.z);
        let x3 = mul(&x3, &y3);
        let y3 = add(&t0, &t2);
        let y3 = sub(&x3, &y3);
        let z3 = mul(&B, &t2);
        let x3 = sub(&y3, &z3);
        let z3 = add(&x3, &x3);
        let x3 = add(&x3, &z3);
        let z3 = sub(&t1, &x3);
        let x3 = add(&t1, &x3);
        let y3 = mul(&B, &y3);
        let t1 = add(&t2, &t2);
        let t2 = add(&t1, &t2);
        let y3 = sub(&y3, &t2);
        let y3 = sub(&y3, &t0);
        let t1 = add(&y3, &y3);
        let y3 = add(&t1, &y3);
        let t1 = add(&t0, &t0);
        let t0 = add(&t1, &t0);
        let t0 = sub(&t0, &t2);
        let t1 = mul(&t4, &y3);
        let t2 = mul(&t0, &y3);
        let y3 = mul(&x3, &z3);
        let y3 = add(&y3, &t2);
        let x3 = mul(&t3, &x3);
        let x3 = sub(&x3, &t1);
        let z3 = mul(&t4, &z3);
        let t1 = mul(&t3, &t0);
        let z3 = add(&z3, &t1);
        Proj { x: x3, y: y3, z: z3 }
    }};
}

/// Algorithm 5: P + Q for an affine Q (not the identity), complete otherwise.
#[cfg(test)]
macro_rules! rcb_add_affine {
    ($mul:expr, $add:expr, $sub:expr, $p:expr, $q:expr) => {{
        let (p, q) = ($p, $q);
        let mul = $mul;
        let add = $add;
        let sub = $sub;
        let t0 = mul(&p.x, &q.x);
        let t1 = mul(&p.y, &q.y);
        let t3 = add(&q.x, &q.y);
        let t4 = add(&p.x, &p.y);
        let t3 = mul(&t3, &t4);
        let t4 = add(&t0, &t1);
        let t3 = sub(&t3, &t4);
        let t4 = mul(&q.y, &p.z);
        let t4 = add(&t4, &p.y);
        let y3 = mul(&q.x, &p.z);
        let y3 = add(&y3, &p.x);
        let z3 = mul(&B, &p.z);
        let x3 = sub(&y3, &z3);
        let z3 = add(&x3, &x3);
        let x3 = add(&x3, &z3);
        let z3 = sub(&t1, &x3);
        let x3 = add(&t1, &x3);
        let y3 = mul(&B, &y3);
        let t1 = add(&p.z, &p.z);
        let t2 = add(&t1, &p.z);
        let y3 = sub(&y3, &t2);
        let y3 = sub(&y3, &t0);
        let t1 = add(&y3, &y3);
        let y3 = add(&t1, &y3);
        let t1 = add(&t0, &t0);
        let t0 = add(&t1, &t0);
        let t0 = sub(&t0, &t2);
        let t1 = mul(&t4, &y3);
        let t2 = mul(&t0, &y3);
        let y3 = mul(&x3, &z3);
        let y3 = add(&y3, &t2);
        let x3 = mul(&t3, &x3);
        let x3 = sub(&x3, &t1);
        let z3 = mul(&t4, &z3);
        let t1 = mul(&t3, &t0);
        let z3 = add(&z3, &t1);
        Proj { x: x3, y: y3, z: z3 }
    }};
}

/// Algorithm 6: 2·P, complete.
#[cfg(test)]
macro_rules! rcb_double {
    ($mul:expr, $sqr:expr, $add:expr, $sub:expr, $p:expr) => {{
        let p = $p;
        let mul = $mul;
        let sqr = $sqr;
        let add = $add;
        let sub = $sub;
        let t0 = sqr(&p.x);
        let t1 = sqr(&p.y);
        let t2 = sqr(&p.z);
        let t3 = mul(&p.x, &p.y);
        let t3 = add(&t3, &t3);
        let z3 = mul(&p.x, &p.z);
        let z3 = add(&z3, &z3);
        let y3 = mul(&B, &t2);
        let y3 = sub(&y3, &z3);
        let x3 = add(&y3, &y3);
        let y3 = add(&x3, &y3);
        let x3 = sub(&t1, &y3);
        let y3 = add(&t1, &y3);
        let y3 = mul(&x3, &y3);
        let x3 = mul(&x3, &t3);
        let t3 = add(&t2, &t2);
        let t2 = add(&t2, &t3);
        let z3 = mul(&B, &z3);
        let z3 = sub(&z3, &t2);
        let z3 = sub(&z3, &t0);
        let t3 = add(&z3, &z3);
        let z3 = add(&z3, &t3);
        let t3 = add(&t0, &t0);
        let t0 = add(&t3, &t0);
        let t0 = sub(&t0, &t2);
        let t0 = mul(&t0, &z3);
        let y3 = add(&y3, &t0);
        let t0 = mul(&p.y, &p.z);
        let t0 = add(&t0, &t0);
        let z3 = mul(&t0, &z3);
        let x3 = sub(&x3, &z3);
        let z3 = mul(&t0, &t1);
        let z3 = add(&z3, &z3);
        let z3 = add(&z3, &z3);
        Proj { x: x3, y: y3, z: z3 }
    }};
}

/// P + Q.
#[cfg(test)]
#[inline(always)]
pub(crate) fn add<A: Arith>(p: &Proj, q: &Proj) -> Proj {
    rcb_add!(A::mul, A::add, A::sub, p, q)
}

/// P + Q for an affine Q (not the identity).
#[cfg(test)]
#[inline(always)]
pub(crate) fn add_affine<A: Arith>(p: &Proj, q: &Aff) -> Proj {
    rcb_add_affine!(A::mul, A::add, A::sub, p, q)
}

/// 2·P.
#[cfg(test)]
#[inline(always)]
pub(crate) fn double<A: Arith>(p: &Proj) -> Proj {
    rcb_double!(A::mul, A::sqr, A::add, A::sub, p)
}

/// The affine form, or `None` for the identity (constant time up to that answer: one inversion).
pub(crate) fn to_affine<A: Arith>(p: &Proj) -> Option<Aff> {
    let zinv = A::invert(&p.z);
    let a = Aff { x: A::mul(&p.x, &zinv), y: A::mul(&p.y, &zinv) };
    // The identity as a result is an error or a candidate rejection: public.
    if crate::ct::declassify(p.z.is_zero_mask()) == 0 { Some(a) } else { None }
}

/// Whether (x, y) satisfies y² = x³ − 3x + b.
pub(crate) fn is_on_curve<A: Arith>(x: &Fe, y: &Fe) -> bool {
    A::sqr(y) == rhs::<A>(x)
}

/// x³ − 3x + b.
pub(crate) fn rhs<A: Arith>(x: &Fe) -> Fe {
    let x3 = A::mul(&A::sqr(x), x);
    let three_x = x.add(x).add(x);
    x3.sub(&three_x).add(&B)
}

// ---- tables ----
//
// Generated from the derivations below (compiled for the tests only) into src/ec/tables/; see crate::ec::table.

impl Aff {
    /// A point from its row of a generated table: x's limbs, then y's (Montgomery form).
    const fn from_words(w: &[u64; 8]) -> Aff {
        Aff { x: Fe([w[0], w[1], w[2], w[3]]), y: Fe([w[4], w[5], w[6], w[7]]) }
    }

    /// The point's row of a generated table.
    #[cfg(test)]
    fn words(&self) -> [u64; 8] {
        let (x, y) = (self.x.0, self.y.0);
        [x[0], x[1], x[2], x[3], y[0], y[1], y[2], y[3]]
    }
}

/// A generated list of points.
const fn aff_list<const K: usize>(w: &[[u64; 8]; K]) -> [Aff; K] {
    let mut out = [Aff { x: Fe::ZERO, y: Fe::ZERO }; K];
    let mut j = 0;
    while j < K {
        out[j] = Aff::from_words(&w[j]);
        j += 1;
    }
    out
}

/// A generated table of `R` rows of `K` points.
const fn aff_rows<const R: usize, const K: usize>(w: &[[[u64; 8]; K]; R]) -> [[Aff; K]; R] {
    let mut out = [[Aff { x: Fe::ZERO, y: Fe::ZERO }; K]; R];
    let mut i = 0;
    while i < R {
        out[i] = aff_list(&w[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
const fn cmul(a: &Fe, b: &Fe) -> Fe {
    a.mul_soft(b)
}

#[cfg(test)]
const fn cadd(p: &Proj, q: &Proj) -> Proj {
    rcb_add!(cmul, cfadd, cfsub, p, q)
}

#[cfg(test)]
const fn cfadd(a: &Fe, b: &Fe) -> Fe {
    a.add(b)
}

#[cfg(test)]
const fn cfsub(a: &Fe, b: &Fe) -> Fe {
    a.sub(b)
}

#[cfg(test)]
const fn csqr(a: &Fe) -> Fe {
    a.mul_soft(a)
}

#[cfg(test)]
const fn cdouble(p: &Proj) -> Proj {
    rcb_double!(cmul, csqr, cfadd, cfsub, p)
}

/// a^(p − 2) by square-and-multiply over the public exponent (the derivations only).
#[cfg(test)]
const fn cinvert(a: &Fe) -> Fe {
    let e = sbb4(&P.m, &[2, 0, 0, 0]).0;
    let mut r = Fe::ONE;
    let mut i = 256;
    while i > 0 {
        i -= 1;
        r = r.mul_soft(&r);
        if (e[i / 64] >> (i % 64)) & 1 == 1 {
            r = r.mul_soft(a);
        }
    }
    r
}

/// Affine forms of N projective points with one inversion (Montgomery's trick); none may be the identity.
#[cfg(test)]
const fn batch_affine<const K: usize>(pts: &[Proj; K]) -> [Aff; K] {
    let mut prefix = [Fe::ONE; K];
    let mut acc = Fe::ONE;
    let mut i = 0;
    while i < K {
        prefix[i] = acc;
        acc = acc.mul_soft(&pts[i].z);
        i += 1;
    }
    let mut inv = cinvert(&acc);
    let mut out = [Aff { x: Fe::ZERO, y: Fe::ZERO }; K];
    let mut i = K;
    while i > 0 {
        i -= 1;
        let zinv = inv.mul_soft(&prefix[i]);
        inv = inv.mul_soft(&pts[i].z);
        out[i] = Aff { x: pts[i].x.mul_soft(&zinv), y: pts[i].y.mul_soft(&zinv) };
    }
    out
}

/// The digit width of [`mul_base`]'s recoding: radix 2^5.
const BASE_W: u32 = 5;
/// The rows of [`mul_base`]'s table: 52 digits of 5 bits cover k < 2^255 and the last carry (see [`signed_digits`]).
const BASE_ROWS: usize = 52;
/// The entries of a row of [`mul_base`]'s table: 1 … 2^(w−1) times the row's base.
const BASE_ENTRIES: usize = 1 << (BASE_W - 1);

/// `[i][j] = (j + 1)·32^i·G`: [`mul_base`]'s table.
#[cfg(test)]
const fn compute_base_table() -> [[Aff; BASE_ENTRIES]; BASE_ROWS] {
    let mut flat = [Proj::IDENTITY; BASE_ROWS * BASE_ENTRIES];
    let mut row_base = Proj::from_affine(&G);
    let mut i = 0;
    while i < BASE_ROWS {
        let mut acc = row_base;
        let mut j = 0;
        while j < BASE_ENTRIES {
            flat[BASE_ENTRIES * i + j] = acc;
            acc = cadd(&acc, &row_base);
            j += 1;
        }
        let mut k = 0;
        while k < BASE_W {
            row_base = cdouble(&row_base);
            k += 1;
        }
        i += 1;
    }
    let aff = batch_affine(&flat);
    let mut out = [[Aff { x: Fe::ZERO, y: Fe::ZERO }; BASE_ENTRIES]; BASE_ROWS];
    let mut i = 0;
    while i < BASE_ROWS {
        let mut j = 0;
        while j < BASE_ENTRIES {
            out[i][j] = aff[BASE_ENTRIES * i + j];
            j += 1;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
const fn compute_base_odd() -> [Aff; 64] {
    let g = Proj::from_affine(&G);
    let g2 = cdouble(&g);
    let mut pts = [Proj::IDENTITY; 64];
    pts[0] = g;
    let mut i = 1;
    while i < 64 {
        pts[i] = cadd(&pts[i - 1], &g2);
        i += 1;
    }
    batch_affine(&pts)
}

/// `BASE_TABLE[i][j] = (j + 1)·32^i·G`: [`mul_base`]'s table, 52 rows of 16 entries.
pub(crate) static BASE_TABLE: [[Aff; BASE_ENTRIES]; BASE_ROWS] = aff_rows(&include!("../tables/p256_base.rs"));
/// `BASE_ODD[j] = (2j + 1)·G`: the odd multiples up to 127·G, for width-8 NAF digits.
pub(crate) static BASE_ODD: [Aff; 64] = aff_list(&include!("../tables/p256_base_odd.rs"));

// ---- scalar recoding ----

/// The signed radix-2^w digits of k (canonical limbs, k < 2^255), 2 ≤ w ≤ 6: R digits in
/// [−2^(w−1), 2^(w−1)] with k = Σ dᵢ·2^(w·i), constant time (fixed bit positions, arithmetic carries).
/// Each w-bit chunk plus the carry, c ∈ [0, 2^w], becomes c − 2^w with a carry when c > 2^(w−1). R·w ≥ 256
/// leaves no carry: the last chunk holds at most the bits 255 − w·(R − 1) … of k < 2^255, so it is below
/// 2^(w−1) and it plus a carry is at most 2^(w−1). `radix16` is R = 64, w = 4; [`mul_base`] R = 52, w = 5.
#[inline]
pub(crate) fn signed_digits<const R: usize>(k: &[u64; 4], w: u32) -> [i8; R] {
    debug_assert!((2..=6).contains(&w) && R * w as usize >= 256);
    let mut d = [0i8; R];
    let mut carry = 0i8;
    for (i, di) in d.iter_mut().enumerate() {
        let pos = w as usize * i;
        // The w bits of k from pos (zeros above bit 255); pos and the shifts are public.
        let (limb, sh) = (pos / 64, pos % 64);
        let mut v = if limb < 4 { k[limb] >> sh } else { 0 };
        if sh != 0 && limb < 3 {
            v |= k[limb + 1] << (64 - sh);
        }
        let c = (v & ((1 << w) - 1)) as i8 + carry;
        // c in [0, 2^w]; above 2^(w−1) it becomes c − 2^w with a carry. Arithmetic, no branch.
        carry = (c + (1 << (w - 1)) - 1) >> w;
        *di = c - (carry << w);
    }
    d
}

/// The signed radix-16 digits of k (canonical limbs, k < 2^255): 64 digits in [−8, 8].
#[inline]
fn radix16(k: &[u64; 4]) -> [i8; 64] {
    signed_digits::<64>(k, 4)
}

/// k or n − k, whichever is below 2^255, and the mask (all ones) when it is n − k: the recoding's input.
#[inline]
fn half_scalar(k: &Scalar) -> ([u64; 4], u64) {
    let v = k.to_canonical_limbs();
    let neg = k.neg().to_canonical_limbs();
    let flip = (v[3] >> 63).wrapping_neg();
    (super::field::select(flip, &neg, &v), flip)
}

/// The affine entry |d| of a row (|d|·B for a row 1·B … K·B; the identity's stand-in, entry 0, when
/// d = 0), y negated when d < 0, and the mask "d was zero". Reads every entry of the row.
#[inline(always)]
fn lookup_base<A: Arith, const K: usize>(row: &[Aff; K], d: i8) -> (Aff, u64) {
    let sign = ((d as i64) >> 63) as u64; // all ones if negative
    let abs = ((d as i64 ^ sign as i64) - sign as i64) as u64; // |d|
    let mut out = A::lookup::<K>(row, abs);
    out.y = Fe::select(sign, &out.y.neg(), &out.y);
    let zero = super::field::eq_mask(&[abs, 0, 0, 0], &[0; 4]);
    (out, zero)
}

/// k·G, constant time: one mixed Jacobian addition (8M + 3S, [`jadd_affine_ct`]) per row of the table,
/// 52 rows of 16 entries (radix 32: 52 additions where radix 16 takes 64, each look-up scanning 16
/// entries instead of 8).
///
/// The mixed formula fails when the accumulator equals ±(the entry) or is the identity; only the identity
/// can occur, and masks handle it. Proof: before row i the accumulator is V·G with V = Σ_{j<i} dⱼ·32^j,
/// so |V| ≤ 16·(32^i − 1)/31 < 32^i, and the entry is d·32^i·G with 1 ≤ |d| ≤ 16 (a zero digit keeps the
/// accumulator by mask without using the sum). V·G = ±d·32^i·G means V ≡ ±d·32^i (mod n), and
/// |V ∓ d·32^i| < 17·32^i ≤ 17·2^250 < n for i ≤ 50 (the last row, i = 51 at 2^255, has d ∈ {0, 1}
/// as k < 2^255, and |V ∓ 2^255| < (16/31 + 1)·2^255 < n) makes it an integer equality, impossible as
/// |V| < 32^i. An
/// identity accumulator (all digits below i zero) takes the entry by mask.
pub(crate) fn mul_base<A: Arith>(k: &Scalar) -> Proj {
    let (v, flip) = half_scalar(k);
    let digits = signed_digits::<BASE_ROWS>(&v, BASE_W);
    let mut acc = Jac::IDENTITY;
    for (row, &d) in BASE_TABLE.iter().zip(digits.iter()) {
        let (e, zero) = lookup_base::<A, BASE_ENTRIES>(row, d);
        let sum = jadd_affine_ct::<A>(&acc, &e);
        let sum = Jac::select(acc.z.is_zero_mask(), &Jac::from_affine(&e), &sum);
        acc = Jac::select(zero, &acc, &sum);
    }
    let out = acc.projective::<A>();
    Proj::select(flip, &out.neg(), &out)
}

/// k·P, constant time: 63 windows of four Jacobian doublings and one mixed addition of a table entry.
///
/// The table holds 1·P … 8·P in affine form (one variable-time safegcd inversion for all eight,
/// Montgomery's trick: P is public, only k is secret), so each window adds with the 8M + 3S mixed formula ([`jadd_affine_ct`]) instead of the 12M complete one.
/// That formula fails when the accumulator equals ±(the entry) or is the identity; only the identity can
/// occur here, and it is handled by masks. Proof: before window i the accumulator is V·P with V the
/// integer value of the digits above i (|V| ≤ 8·(16^(63−i) + … + 1) < 2^255, since k < 2^255 after
/// [`half_scalar`]); after the doublings it is 16V·P and the entry is d·P, |d| ≤ 8. P has the prime order
/// n > 2^255 (every point but the identity), so 16V·P = ±d·P means 16V ≡ ±d (mod n), and |16V ∓ d| < n
/// makes it an integer equality; |d| < 16 then forces V = 0 and d = 0: the identity, and a zero digit,
/// which keeps the accumulator by mask without using the sum. An identity accumulator takes the entry
/// (as a Jacobian point) by mask.
pub(crate) fn mul<A: Arith>(p: &Aff, k: &Scalar) -> Proj {
    let (v, flip) = half_scalar(k);
    let digits = radix16(&v);
    let table = affine_multiples::<A>(p);
    let mut acc = Jac::IDENTITY;
    for (i, &d) in digits.iter().enumerate().rev() {
        if i != 63 {
            acc = A::jdouble_n(&acc, 4);
        }
        let (e, zero) = lookup_base::<A, 8>(&table, d);
        let sum = jadd_affine_ct::<A>(&acc, &e);
        let sum = Jac::select(acc.z.is_zero_mask(), &Jac::from_affine(&e), &sum);
        acc = Jac::select(zero, &acc, &sum);
    }
    let out = acc.projective::<A>();
    Proj::select(flip, &out.neg(), &out)
}

/// 1·P … 8·P in affine form: Jacobian doublings and mixed additions (none exceptional: P has order
/// n > 16), then one inversion of the product of the Z's (Montgomery's trick).
#[inline(always)]
fn affine_multiples<A: Arith>(p: &Aff) -> [Aff; 8] {
    let mut j = [Jac::from_affine(p); 8];
    j[1] = jdouble::<A>(&j[0]);
    j[2] = jadd_affine_ct::<A>(&j[1], p);
    j[3] = jdouble::<A>(&j[1]);
    j[4] = jadd_affine_ct::<A>(&j[3], p);
    j[5] = jdouble::<A>(&j[2]);
    j[6] = jadd_affine_ct::<A>(&j[5], p);
    j[7] = jdouble::<A>(&j[3]);
    batch_to_affine::<A, 8>(&j)
}

/// The affine forms of K Jacobian points, none the identity, with one inversion (Montgomery's trick).
/// Public points only (the peer's key in ECDH, the key in verification): the inversion is the
/// variable-time one.
#[inline(always)]
fn batch_to_affine<A: Arith, const K: usize>(j: &[Jac; K]) -> [Aff; K] {
    let mut prefix = [Fe::ONE; K];
    let mut acc = Fe::ONE;
    for (pre, pt) in prefix.iter_mut().zip(j.iter()) {
        *pre = acc;
        acc = A::mul(&acc, &pt.z);
    }
    let mut inv = A::invert_vartime(&acc);
    let mut out = [Aff { x: Fe::ZERO, y: Fe::ZERO }; K];
    for ((o, pt), pre) in out.iter_mut().zip(j.iter()).zip(prefix.iter()).rev() {
        let zinv = A::mul(&inv, pre);
        inv = A::mul(&inv, &pt.z);
        let zinv2 = A::sqr(&zinv);
        *o = Aff { x: A::mul(&pt.x, &zinv2), y: A::mul(&pt.y, &A::mul(&zinv2, &zinv)) };
    }
    out
}

/// P + Q for a Jacobian P and an affine Q, a = −3 (8M + 3S), constant time, without the exceptional
/// cases: the result is meaningless when P = ±Q or P is the identity, which the callers rule out or
/// replace by mask (see [`mul`]). The backend's [`Arith::jadd_affine`].
#[inline(always)]
fn jadd_affine_ct<A: Arith>(p: &Jac, q: &Aff) -> Jac {
    A::jadd_affine(p, q)
}

/// The mixed addition's formula, the portable reference of [`Arith::jadd_affine`]: z1z1 = z1², u2 = x2·z1z1,
/// s2 = y2·z1·z1z1, h = u2 − x1, r = 2·(s2 − y1), i = 4h², j = h·i, v = x1·i, x3 = r² − j − 2v,
/// y3 = r·(v − x3) − 2·y1·j, z3 = 2·z1·h (equal to (z1 + h)² − z1² − h², one product instead of a square
/// and three additions). Each linear step is one [`FieldArith::lincomb`]. With h = 0 (P = ±Q) it gives
/// z3 = 0 and x3 = r², which [`jadd_affine`] uses to recognise those cases.
#[inline(always)]
pub(crate) fn jadd_affine_formula<A: FieldArith>(p: &Jac, q: &Aff) -> Jac {
    let z1z1 = A::sqr(&p.z);
    let u2 = A::mul(&q.x, &z1z1);
    let s2 = A::mul(&A::mul(&q.y, &p.z), &z1z1);
    let h = A::sub(&u2, &p.x);
    let r = A::lincomb(&s2, 2, &p.y, 2, &Fe::ZERO, 0);
    let hh = A::sqr(&h);
    let i = A::lincomb(&hh, 4, &Fe::ZERO, 0, &Fe::ZERO, 0);
    let j = A::mul(&h, &i);
    let v = A::mul(&p.x, &i);
    let x3 = A::lincomb(&A::sqr(&r), 1, &j, 1, &v, 2);
    let yj = A::mul(&p.y, &j);
    let y3 = A::lincomb(&A::mul(&r, &A::sub(&v, &x3)), 1, &yj, 2, &Fe::ZERO, 0);
    let zh = A::mul(&p.z, &h);
    let z3 = A::add(&zh, &zh);
    Jac { x: x3, y: y3, z: z3 }
}

/// The width-`w` non-adjacent form of k (canonical limbs), 2 ≤ w ≤ 8: 257 digits, odd or zero,
/// |dᵢ| < 2^(w−1), k = Σ dᵢ·2^i, and at least w − 1 zeros after every nonzero digit.
///
/// Read off the bits of k with a carry instead of subtracting each digit from a copy of k: at position i
/// the pending value is bit i of k plus the carry; when that is even the digit is 0, else the w bits from i
/// plus the carry give a word t (odd, below 2^w), the digit is t − 2^w with a carry into position i + w
/// when t ≥ 2^(w−1), else t, and the next w − 1 digits are 0. A carry is left only after a window with
/// t ≥ 2^(w−1), which needs 256 − i ≥ w (k < 2^256), so it lands at 256 at the latest.
fn naf(k: &[u64; 4], w: u32) -> [i8; 257] {
    debug_assert!((2..=8).contains(&w));
    // The `count` (at most 8) bits of k from position `pos` (below 256), zeros above bit 255.
    let bits = |pos: usize, count: u32| -> u64 {
        let (limb, sh) = (pos / 64, pos % 64);
        let mut v = k[limb] >> sh;
        if sh != 0 && limb < 3 {
            v |= k[limb + 1] << (64 - sh);
        }
        v & ((1u64 << count) - 1)
    };
    let mut out = [0i8; 257];
    let mut carry = 0u64;
    let mut i = 0usize;
    while i < 256 {
        if bits(i, 1) == carry {
            i += 1;
            continue;
        }
        let t = bits(i, w) + carry;
        carry = (t >> (w - 1)) & 1;
        out[i] = (t as i64 - ((carry << w) as i64)) as i8;
        i += w as usize;
    }
    out[256] = carry as i8;
    out
}

/// A point in Jacobian coordinates (x = X/Z², y = Y/Z³; Z = 0 the identity), for the variable-time
/// verification only: its formulas are faster than the complete ones but have exceptional cases (equal
/// inputs, opposite inputs, the identity), which the functions below test for and handle by branching — on
/// public data only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Jac {
    pub(crate) x: Fe,
    pub(crate) y: Fe,
    pub(crate) z: Fe,
}

impl Jac {
    const IDENTITY: Jac = Jac { x: Fe::ONE, y: Fe::ONE, z: Fe::ZERO };

    fn from_affine(a: &Aff) -> Jac {
        Jac { x: a.x, y: a.y, z: Fe::ONE }
    }

    fn is_identity(&self) -> bool {
        self.z == Fe::ZERO
    }

    /// The projective form: (X : Y : Z) Jacobian is (X·Z : Y : Z³); the identity keeps Z = 0.
    #[inline(always)]
    fn projective<A: Arith>(&self) -> Proj {
        let zz = A::sqr(&self.z);
        Proj { x: A::mul(&self.x, &self.z), y: self.y, z: A::mul(&zz, &self.z) }
    }

    #[inline(always)]
    fn select(mask: u64, a: &Jac, b: &Jac) -> Jac {
        Jac { x: Fe::select(mask, &a.x, &b.x), y: Fe::select(mask, &a.y, &b.y), z: Fe::select(mask, &a.z, &b.z) }
    }
}

/// 2·P in Jacobian coordinates for a = −3 (the identity stays the identity): the backend's
/// [`Arith::jdouble`].
#[inline(always)]
fn jdouble<A: Arith>(p: &Jac) -> Jac {
    A::jdouble(p)
}

/// The doubling's formula, the portable reference of [`Arith::jdouble`] (4M + 4S): δ = z², γ = y², β = x·γ,
/// α = 3·(x − δ)·(x + δ), x3 = α² − 8β, y3 = α·(4β − x3) − 8γ², z3 = 2·y·z (equal to (y + z)² − γ − δ; one
/// product instead of a square and three additions). Each linear step is one [`FieldArith::lincomb`]
/// instead of a chain of modular additions.
pub(crate) fn jdouble_formula<A: FieldArith>(p: &Jac) -> Jac {
    let delta = A::sqr(&p.z);
    let gamma = A::sqr(&p.y);
    let beta = A::mul(&p.x, &gamma);
    let t = A::mul(&A::sub(&p.x, &delta), &A::add(&p.x, &delta));
    let alpha = A::lincomb(&t, 3, &Fe::ZERO, 0, &Fe::ZERO, 0);
    let x3 = A::lincomb(&A::sqr(&alpha), 1, &beta, 8, &Fe::ZERO, 0);
    let yz = A::mul(&p.y, &p.z);
    let z3 = A::add(&yz, &yz);
    let w = A::lincomb(&beta, 4, &x3, 1, &Fe::ZERO, 0);
    let y3 = A::lincomb(&A::mul(&alpha, &w), 1, &A::sqr(&gamma), 8, &Fe::ZERO, 0);
    Jac { x: x3, y: y3, z: z3 }
}

/// P + Q for an affine Q, variable time (exceptional cases branched on): the mixed addition, and when it
/// reports h = 0 (z3 = 0 with P not the identity, so Q = ±P) the doubling for r = 0 (x3 = r² = 0) or else
/// the identity.
fn jadd_affine<A: Arith>(p: &Jac, q: &Aff) -> Jac {
    if p.is_identity() {
        return Jac::from_affine(q);
    }
    let s = jadd_affine_ct::<A>(p, q);
    if s.z == Fe::ZERO {
        return if s.x == Fe::ZERO { jdouble::<A>(p) } else { Jac::IDENTITY };
    }
    s
}

/// P + Q, variable time (exceptional cases branched on).
fn jadd<A: Arith>(p: &Jac, q: &Jac) -> Jac {
    if p.is_identity() {
        return *q;
    }
    if q.is_identity() {
        return *p;
    }
    let z1z1 = A::sqr(&p.z);
    let z2z2 = A::sqr(&q.z);
    let u1 = A::mul(&p.x, &z2z2);
    let u2 = A::mul(&q.x, &z1z1);
    let s1 = A::mul(&A::mul(&p.y, &q.z), &z2z2);
    let s2 = A::mul(&A::mul(&q.y, &p.z), &z1z1);
    let h = A::sub(&u2, &u1);
    let r = A::sub(&s2, &s1);
    if h == Fe::ZERO {
        return if r == Fe::ZERO { jdouble::<A>(p) } else { Jac::IDENTITY };
    }
    let h2 = A::add(&h, &h);
    let i = A::sqr(&h2);
    let j = A::mul(&h, &i);
    let r = A::add(&r, &r);
    let v = A::mul(&u1, &i);
    let x3 = A::sub(&A::sub(&A::sqr(&r), &j), &A::add(&v, &v));
    let sj = A::mul(&s1, &j);
    let y3 = A::sub(&A::mul(&r, &A::sub(&v, &x3)), &A::add(&sj, &sj));
    let z3 = A::mul(&A::sub(&A::sub(&A::sqr(&A::add(&p.z, &q.z)), &z1z1), &z2z2), &h);
    Jac { x: x3, y: y3, z: z3 }
}

/// Whether x(u1·G + u2·Q) mod n = r (and the sum is not the identity). Variable time, public inputs.
pub(crate) fn verify<A: Arith>(q: &Aff, u1: &Scalar, u2: &Scalar, r: &Scalar) -> bool {
    let n1 = naf(&u1.to_canonical_limbs(), 8);
    let n2 = naf(&u2.to_canonical_limbs(), 5);
    // Q, 3Q, ..., 15Q.
    let mut qj = [Jac::from_affine(q); 8];
    let q2 = jdouble::<A>(&qj[0]);
    for j in 1..8 {
        qj[j] = jadd::<A>(&qj[j - 1], &q2);
    }
    // Affine, for the cheaper mixed additions (Q has order n, so no multiple here is the identity).
    let qt = batch_to_affine::<A, 8>(&qj);
    let top = (0..257).rev().find(|&i| n1[i] != 0 || n2[i] != 0);
    // acc plus d·P for an odd or zero digit d, from a row of odd multiples P, 3P, 5P, …
    let add_digit = |acc: Jac, d: i8, row: &[Aff]| {
        let e = &row[(d.unsigned_abs() / 2) as usize];
        match d {
            0 => acc,
            1.. => jadd_affine::<A>(&acc, e),
            _ => jadd_affine::<A>(&acc, &Aff { x: e.x, y: e.y.neg() }),
        }
    };
    // The digits of position i added to acc.
    let add_digits = |acc: Jac, i: usize| add_digit(add_digit(acc, n1[i], &BASE_ODD), n2[i], &qt);
    let mut acc = Jac::IDENTITY;
    if let Some(top) = top {
        // From the top digit down: each run of positions where both digits are zero is one call of
        // `jdouble_n` for the run and the next position, then that position's digits.
        let mut i = top;
        acc = add_digits(acc, i);
        while i > 0 {
            let mut j = i - 1;
            while j > 0 && n1[j] == 0 && n2[j] == 0 {
                j -= 1;
            }
            acc = A::jdouble_n(&acc, i - j);
            i = j;
            acc = add_digits(acc, i);
        }
    }
    if acc.is_identity() {
        return false;
    }
    // x = X/Z² is below p; x mod n = r means x = r or x = r + n (possible only when r + n < p).
    let z2 = A::sqr(&acc.z);
    let rv = r.to_canonical_limbs();
    if A::mul(&Fe::from_canonical_limbs(rv), &z2) == acc.x {
        return true;
    }
    let (rn, carry) = super::field::adc4(&rv, &N.m);
    if carry == 0 && sbb4(&rn, &P.m).1 == 1 {
        return A::mul(&Fe::from_canonical_limbs(rn), &z2) == acc.x;
    }
    false
}

/// The reference for tests: x(u1·G + u2·Q) by the complete formulas, or `None` for the identity.
#[cfg(test)]
fn double_mul_reference<A: Arith>(q: &Aff, u1: &Scalar, u2: &Scalar) -> Option<Aff> {
    to_affine::<A>(&add::<A>(&mul_base::<A>(u1), &mul::<A>(q, u2)))
}

/// The affine point with these big-endian coordinates, if valid.
pub(crate) fn from_coordinates<A: Arith>(x: &[u8; 32], y: &[u8; 32]) -> Result<Aff, &'static str> {
    let (Some(xf), Some(yf)) = (Fe::from_be_bytes(x), Fe::from_be_bytes(y)) else {
        return Err("public key: a coordinate is not below p");
    };
    if !is_on_curve::<A>(&xf, &yf) {
        return Err("public key: the point is not on the curve");
    }
    Ok(Aff { x: xf, y: yf })
}

/// The affine point with this x and the parity of y, if x is below p and on the curve.
pub(crate) fn decompress<A: Arith>(x: &[u8; 32], y_odd: bool) -> Result<Aff, &'static str> {
    let Some(xf) = Fe::from_be_bytes(x) else { return Err("public key: x is not below p") };
    let Some(y) = A::sqrt(&rhs::<A>(&xf)) else {
        return Err("public key: no point on the curve has this x");
    };
    let odd = y.to_be_bytes()[31] & 1 == 1;
    let y = if odd == y_odd { y } else { y.neg() };
    Ok(Aff { x: xf, y })
}

/// Limbs of big-endian bytes (re-exported for the curve impl).
#[allow(dead_code)]
pub(crate) fn limbs(b: &[u8; 32]) -> [u64; 4] {
    limbs_from_be(b)
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use super::super::field::{Soft, limbs_to_be};
    use super::*;

    fn aff(p: &Proj) -> Aff {
        to_affine::<Soft>(p).unwrap()
    }

    #[test]
    fn formulas_agree() {
        let g = Proj::from_affine(&G);
        let d = aff(&double::<Soft>(&g));
        assert!(is_on_curve::<Soft>(&d.x, &d.y), "double");
        // 2G from SEC 2 / the p256 crate's tests.
        assert_eq!(
            d.x.to_be_bytes(),
            limbs_to_be(&super::super::field::hex_limbs(
                "7cf27b188d034f7e8a52380304b51ac3c08969e277f21b35a60b48fc47669978"
            ))
        );
        assert_eq!(aff(&add::<Soft>(&g, &g)), d, "add");
        assert_eq!(aff(&add_affine::<Soft>(&g, &G)), d, "add_affine");
        let t = aff(&add::<Soft>(&double::<Soft>(&g), &g));
        assert!(is_on_curve::<Soft>(&t.x, &t.y), "3G");
        assert_eq!(aff(&add_affine::<Soft>(&double::<Soft>(&g), &G)), t);
        assert_eq!(BASE_TABLE[0][1], d);
        assert_eq!(BASE_TABLE[0][2], t);
        assert_eq!(BASE_ODD[1], t);
    }

    #[test]
    fn generated_tables_match_their_derivation() {
        use crate::ec::table::tests::{check, report};
        let words = |t: &[Aff]| t.iter().map(Aff::words).collect::<std::vec::Vec<_>>();
        report(&[
            check(
                "p256_base.rs",
                "P-256: BASE_TABLE[i][j] = (j + 1)·32^i·G, affine (x, y), each as four 64-bit limbs in Montgomery form",
                BASE_ENTRIES,
                &words(BASE_TABLE.as_flattened()),
                &words(compute_base_table().as_flattened()),
            ),
            check(
                "p256_base_odd.rs",
                "P-256: BASE_ODD[j] = (2j + 1)·G, affine (x, y), each as four 64-bit limbs in Montgomery form",
                0,
                &words(&BASE_ODD),
                &words(&compute_base_odd()),
            ),
        ]);
    }

    /// The variable-base multiplication agrees with the fixed-base one, for small scalars (long runs of
    /// zero digits: the identity through the Jacobian doublings), the identity result, and random scalars.
    #[test]
    fn mul_matches_mul_base() {
        use super::super::field::tests::Xs;
        let mut rng = Xs(0x9256_0005);
        let mut ks: std::vec::Vec<Scalar> = (0u64..40).map(|v| Scalar::from_canonical_limbs(&[v, 0, 0, 0])).collect();
        ks.push(Scalar::from_canonical_limbs(&[0, 0, 0, 1 << 60]));
        ks.push(Scalar::from_canonical_limbs(&[1, 0, 1, 0]).neg());
        // n − 1, n − 2 (the recoding's negated half), 2^255 − 1 and 2^255 (either side of the flip), long
        // runs of ones and of zeros.
        ks.push(Scalar::from_canonical_limbs(&[1, 0, 0, 0]).neg());
        ks.push(Scalar::from_canonical_limbs(&[2, 0, 0, 0]).neg());
        ks.push(Scalar::from_canonical_limbs(&[u64::MAX, u64::MAX, u64::MAX, u64::MAX >> 1]));
        ks.push(Scalar::from_canonical_limbs(&[0, 0, 0, 1 << 63]));
        ks.push(Scalar::from_canonical_limbs(&[u64::MAX, u64::MAX, 0, 0]));
        ks.push(Scalar::from_canonical_limbs(&[0, 0, u64::MAX, u64::MAX >> 1]));
        ks.push(Scalar::from_canonical_limbs(&[0x8888_8888_8888_8888; 4]));
        ks.push(Scalar::from_canonical_limbs(&[0x7777_7777_7777_7777; 4]));
        // Every 5-bit chunk (the radix-32 recoding of mul_base) 15, 16, 17 or 31: no carry, a carry at the
        // boundary, carries all along.
        for c in [15u64, 16, 17, 31] {
            let mut v = [0u64; 4];
            for pos in (0..255).step_by(5) {
                v[pos / 64] |= c << (pos % 64);
                if pos % 64 > 59 && pos / 64 < 3 {
                    v[pos / 64 + 1] |= c >> (64 - pos % 64);
                }
            }
            v[3] &= u64::MAX >> 1;
            ks.push(Scalar::from_canonical_limbs(&v));
        }
        for _ in 0..40 {
            ks.push(Scalar::from_be_reduced(&limbs_to_be(&rng.limbs())));
        }
        // Against plain double-and-add over the complete formulas (the reference, no recoding).
        let reference = |p: &Aff, k: &Scalar| {
            let v = k.to_canonical_limbs();
            let mut acc = Proj::IDENTITY;
            for i in (0..256).rev() {
                acc = double::<Soft>(&acc);
                if (v[i / 64] >> (i % 64)) & 1 == 1 {
                    acc = add::<Soft>(&acc, &Proj::from_affine(p));
                }
            }
            to_affine::<Soft>(&acc)
        };
        for (i, k) in ks.iter().enumerate() {
            assert_eq!(to_affine::<Soft>(&mul_base::<Soft>(k)), reference(&G, k), "mul_base {i}");
        }
        let p7 = aff(&mul_base::<Soft>(&Scalar::from_canonical_limbs(&[7, 0, 0, 0])));
        for (i, k) in ks.iter().enumerate() {
            assert_eq!(to_affine::<Soft>(&mul::<Soft>(&G, k)), to_affine::<Soft>(&mul_base::<Soft>(k)), "{i}");
            let k7 = k.mul(&Scalar::from_canonical_limbs(&[7, 0, 0, 0]));
            assert_eq!(to_affine::<Soft>(&mul::<Soft>(&p7, k)), to_affine::<Soft>(&mul_base::<Soft>(&k7)), "7·{i}");
        }
        assert_eq!(to_affine::<Soft>(&mul::<Soft>(&G, &Scalar::ZERO)), None);
    }

    /// The Jacobian doubling against the complete doubling over `A`: chains of 8
    /// doublings from G and from random points ([`Arith::jdouble_n`] against each prefix of the chain),
    /// and the identity staying the identity (the Bmi2Adx run is
    /// in bmi2_adx.rs's tests).
    pub(crate) fn check_jdouble<A: Arith>() {
        use super::super::field::tests::Xs;
        let mut rng = Xs(0x9256_0008);
        assert!(jdouble::<A>(&Jac::IDENTITY).is_identity());
        for i in 0..24 {
            let k = Scalar::from_be_reduced(&limbs_to_be(&rng.limbs()));
            let p = if i == 0 { G } else { to_affine::<A>(&mul::<A>(&G, &k)).unwrap() };
            let (mut j, mut r) = (Jac::from_affine(&p), Proj::from_affine(&p));
            let start = j;
            for step in 0..8 {
                j = jdouble::<A>(&j);
                r = double::<A>(&r);
                assert_eq!(to_affine::<A>(&j.projective::<A>()), to_affine::<A>(&r), "{i} {step}");
                // n doublings at once: the same coordinates as n single ones.
                assert_eq!(A::jdouble_n(&start, step + 1), j, "{i} jdouble_n {}", step + 1);
            }
            assert_eq!(A::jdouble_n(&start, 0), start, "{i} jdouble_n 0");
        }
    }

    /// A backend's whole-formula doubling and mixed addition ([`Arith::jdouble`], [`Arith::jadd_affine`])
    /// against the portable formulas, coordinate for coordinate: random points in Jacobian form with random
    /// Z (and Z with high limbs: p − 1, p − 2^k, all-ones words), the identity, P + P, P + (−P), and
    /// random field values off the curve (the formulas are identities in the field, so they agree there too).
    pub(crate) fn check_whole_formulas<A: Arith>() {
        use super::super::field::tests::Xs;
        let mut rng = Xs(0x9256_0009);
        let p = P.m;
        let below_p = |v: [u64; 4]| Fe(if sbb4(&v, &p).1 == 1 { v } else { [v[0], v[1], v[2], p[3] - 1] });
        let mut zs: std::vec::Vec<Fe> = std::vec![
            Fe::ONE,
            Fe([p[0] - 1, p[1], p[2], p[3]]),
            Fe([p[0], p[1] - 1, p[2], p[3]]),
            Fe([u64::MAX, u64::MAX, u64::MAX, p[3] - 1]),
            Fe([0, 0, 0, p[3] - 1]),
            Fe([1, 0, 0, 0]),
            Fe([u64::MAX, 0, u64::MAX, 0]),
        ];
        for _ in 0..40 {
            zs.push(below_p(rng.limbs()));
        }
        // Every routine is called through an opaque function pointer. Inlined at each call in the loop below (the
        // formulas, the inversion's squarings, the multiplication's windows), they made this one function cost
        // about a minute of LLVM time in every test build.
        let soft_double: fn(&Jac) -> Jac = core::hint::black_box(jdouble_formula::<Soft>);
        let soft_add: fn(&Jac, &Aff) -> Jac = core::hint::black_box(jadd_affine_formula::<Soft>);
        let vartime_add: fn(&Jac, &Aff) -> Jac = core::hint::black_box(jadd_affine::<A>);
        let projective: fn(&Jac) -> Proj = core::hint::black_box(Jac::projective::<Soft>);
        let to_affine: fn(&Proj) -> Option<Aff> = core::hint::black_box(to_affine::<Soft>);
        let mul: fn(&Aff, &Scalar) -> Proj = core::hint::black_box(mul::<Soft>);
        let double: fn(&Proj) -> Proj = core::hint::black_box(double::<Soft>);
        let add: fn(&Proj, &Proj) -> Proj = core::hint::black_box(add::<Soft>);
        let jac = |a: &Aff, z: &Fe| {
            let zz = Soft::sqr(z);
            Jac { x: Soft::mul(&a.x, &zz), y: Soft::mul(&a.y, &Soft::mul(&zz, z)), z: *z }
        };
        // The identity, in its form here and with other X, Y.
        for id in [Jac::IDENTITY, Jac { x: G.x, y: G.y, z: Fe::ZERO }] {
            assert_eq!(A::jdouble(&id), soft_double(&id), "double identity");
            assert!(A::jdouble(&id).is_identity());
            assert_eq!(A::jadd_affine(&id, &G), soft_add(&id, &G), "add to identity");
        }
        for (i, z) in zs.iter().enumerate() {
            let k = Scalar::from_be_reduced(&limbs_to_be(&rng.limbs()));
            let a = if i == 0 { G } else { to_affine(&mul(&G, &k)).unwrap() };
            let k2 = Scalar::from_be_reduced(&limbs_to_be(&rng.limbs()));
            let b = to_affine(&mul(&G, &k2)).unwrap();
            let pj = jac(&a, z);
            assert_eq!(A::jdouble(&pj), soft_double(&pj), "double {i}");
            assert_eq!(A::jadd_affine(&pj, &b), soft_add(&pj, &b), "add {i}");
            // P + P (h = 0, r = 0) and P + (−P) (h = 0, r ≠ 0): z3 = 0, x3 = r².
            let same = A::jadd_affine(&pj, &a);
            assert_eq!(same, soft_add(&pj, &a), "P + P {i}");
            assert_eq!((same.z, same.x), (Fe::ZERO, Fe::ZERO), "P + P {i}");
            let neg = Aff { x: a.x, y: a.y.neg() };
            let opp = A::jadd_affine(&pj, &neg);
            assert_eq!(opp, soft_add(&pj, &neg), "P − P {i}");
            assert!(opp.z == Fe::ZERO && opp.x != Fe::ZERO, "P − P {i}");
            // The variable-time mixed addition recognises both: P + P is the doubling, P + (−P) the
            // identity; the identity plus Q is Q.
            let dbl = vartime_add(&pj, &a);
            let want = double(&Proj::from_affine(&a));
            assert_eq!(to_affine(&projective(&dbl)), to_affine(&want), "vartime P + P {i}");
            assert!(vartime_add(&pj, &neg).is_identity(), "vartime P − P {i}");
            assert_eq!(vartime_add(&Jac::IDENTITY, &b), Jac::from_affine(&b), "vartime O + Q {i}");
            // Off the curve: any field values.
            let r = Jac { x: below_p(rng.limbs()), y: below_p(rng.limbs()), z: *z };
            let q = Aff { x: below_p(rng.limbs()), y: below_p(rng.limbs()) };
            assert_eq!(A::jdouble(&r), soft_double(&r), "double off-curve {i}");
            assert_eq!(A::jadd_affine(&r, &q), soft_add(&r, &q), "add off-curve {i}");
            // A chain: the sum and the doubling in the affine form against the complete formulas.
            let sum = A::jadd_affine(&A::jdouble(&pj), &b);
            let want = add(&double(&Proj::from_affine(&a)), &Proj::from_affine(&b));
            assert_eq!(to_affine(&projective(&sum)), to_affine(&want), "chain {i}");
        }
    }

    #[test]
    fn whole_formulas_match_portable() {
        check_whole_formulas::<Soft>();
    }

    #[test]
    fn jdouble_matches_complete_doubling() {
        check_jdouble::<Soft>();
    }

    /// The signed radix-2^w recodings of mul (w = 4) and mul_base (w = 5): digits in [−2^(w−1), 2^(w−1)]
    /// summing back to k, for edge values below 2^255 and random ones.
    #[test]
    fn signed_digits_sum_back() {
        use super::super::field::tests::Xs;
        let mut rng = Xs(0x9256_000a);
        let m = u64::MAX;
        let mut vals =
            std::vec![[0u64; 4], [1, 0, 0, 0], [m, m, m, m >> 1], [0, 0, 0, 1 << 62], [0x8421_0842_1084_2108; 4]];
        vals.push([0x8888_8888_8888_8888, 0x8888_8888_8888_8888, 0x8888_8888_8888_8888, 0x0888_8888_8888_8888]);
        for _ in 0..2000 {
            let mut v = rng.limbs();
            v[3] >>= 1;
            vals.push(v);
        }
        for k in &vals {
            let k = &[k[0], k[1], k[2], k[3] & (m >> 1)];
            let d4 = radix16(k);
            let d5 = signed_digits::<BASE_ROWS>(k, BASE_W);
            for (w, d) in [(4u32, &d4[..]), (5, &d5[..])] {
                // Horner from the top digit: acc = 2^w·acc + dᵢ over five two's-complement limbs.
                let mut acc = [0u64; 5];
                for &di in d.iter().rev() {
                    assert!((di as i32).abs() <= 1 << (w - 1), "w {w} k {k:x?}: digit {di}");
                    horner_step(&mut acc, w, di as i64);
                }
                assert_eq!(acc, [k[0], k[1], k[2], k[3], 0], "w {w}: the digits do not sum to k");
            }
        }
    }

    /// acc ← 2^shift·acc + d over five two's-complement limbs (0 < shift < 64): one Horner step of the
    /// digit checks.
    fn horner_step(acc: &mut [u64; 5], shift: u32, d: i64) {
        for j in (1..5).rev() {
            acc[j] = (acc[j] << shift) | (acc[j - 1] >> (64 - shift));
        }
        acc[0] <<= shift;
        let ext = (d >> 63) as u64;
        let mut c = 0u64;
        for (j, a) in acc.iter_mut().enumerate() {
            let add = if j == 0 { d as u64 } else { ext };
            let (s1, c1) = a.overflowing_add(add);
            let (s2, c2) = s1.overflowing_add(c);
            *a = s2;
            c = (c1 | c2) as u64;
        }
    }

    /// The width-w NAF of edge and random values: the digits are odd or zero, below 2^(w−1) in absolute
    /// value, separated by at least w − 1 zeros, and sum back to k (Horner over five two's-complement limbs).
    #[test]
    fn naf_digits_sum_back() {
        use super::super::field::tests::Xs;
        let mut rng = Xs(0x9256_0009);
        let m = u64::MAX;
        let mut vals = std::vec![[0u64; 4], [1, 0, 0, 0], [m; 4], [m, m, m, m >> 1], [0, 0, 0, 1 << 63], N.m, P.m];
        vals.push(sbb4(&N.m, &[1, 0, 0, 0]).0);
        vals.push([0x7f, 0, 0, m << 57]);
        for _ in 0..2000 {
            vals.push(rng.limbs());
        }
        for w in 2..=8u32 {
            for k in &vals {
                let d = naf(k, w);
                let mut acc = [0u64; 5];
                for (i, &di) in d.iter().enumerate().rev() {
                    assert!(
                        di == 0 || (di & 1 == 1 && (di as i32).abs() < (1 << (w - 1))),
                        "w {w} k {k:x?} digit {i}: {di}"
                    );
                    if di != 0 {
                        for j in 1..w as usize {
                            assert!(i < j || d[i - j] == 0, "w {w} k {k:x?}: digits {i} and {} both nonzero", i - j);
                        }
                    }
                    horner_step(&mut acc, 1, di as i64);
                }
                assert_eq!(acc, [k[0], k[1], k[2], k[3], 0], "w {w}: the digits do not sum to k");
            }
        }
    }

    /// The Jacobian verification sum agrees with the complete formulas, including the exceptional cases
    /// (u2·Q = ±u1·G, Q = G, zero scalars).
    #[test]
    fn verify_matches_complete_formulas() {
        use super::super::field::tests::Xs;
        let mut rng = Xs(0x9256_0004);
        let rand_scalar = |rng: &mut Xs| Scalar::from_be_reduced(&limbs_to_be(&rng.limbs()));
        for i in 0..64 {
            let (u1, mut u2, k) = (rand_scalar(&mut rng), rand_scalar(&mut rng), rand_scalar(&mut rng));
            let mut q = aff(&mul::<Soft>(&G, &k));
            match i {
                0 => q = G,         // Q = G
                1 => u2 = u1,       // u2·Q = u1·G with Q = G below
                2 => u2 = u1.neg(), // u2·Q = −u1·G
                3 => u2 = Scalar::ZERO,
                _ => {}
            }
            if (1..=2).contains(&i) {
                q = G;
            }
            let want = double_mul_reference::<Soft>(&q, &u1, &u2);
            match want {
                None => assert!(!verify::<Soft>(&q, &u1, &u2, &Scalar::from_be_reduced(&[0; 32])), "{i}"),
                Some(p) => {
                    let r = Scalar::from_be_reduced(&p.x.to_be_bytes());
                    assert!(verify::<Soft>(&q, &u1, &u2, &r), "{i}");
                    assert!(!verify::<Soft>(&q, &u1, &u2, &r.add(&Scalar::from_be_reduced(&[1; 32]))), "{i}");
                }
            }
        }
    }
}
