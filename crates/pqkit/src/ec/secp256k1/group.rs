//! The group of secp256k1, y² = x³ + 7 over GF(p), of prime order n (cofactor 1).
//!
//! Two coordinate systems, each where it is best:
//!
//! - [`Proj`], homogeneous projective (X : Y : Z) with the *complete* mixed addition of Renes, Costello and
//!   Batina ("Complete addition formulas for prime order elliptic curves", 2016, algorithm 8 for a = 0): one
//!   formula for every accumulator, including the identity (0 : 1 : 0) and the point being added, with no
//!   branch and no special case. The fixed-base multiplication (key generation, signing nonces) runs on it.
//! - [`Jac`], Jacobian (X : Y : Z) = (X/Z², Y/Z³), with the cheaper doubling (3M + 4S, no branch: no point has
//!   y = 0). Two kinds of mixed addition: a *unified* one (Brier–Joye, 7M + 5S) whose special cases are chosen
//!   by masks, for the variable-base multiplication (ECDH), and a cheaper one that branches on its exceptional
//!   cases, for verification only (public inputs).
//!
//! The multiplications and the formulas under them are `#[inline(always)]`: the curve's entry points are built
//! twice (portable, and with BMI2 and ADX enabled, see the parent module), and each build needs its own copy of
//! the whole computation.
//!
//! ## Scalar multiplication
//! - `mul_base`: k·G with signed radix-16 digits and a table of `(j + 1)·16^i·G` (64 rows of 8 affine points,
//!   generated, see `crate::ec::table`): 64 complete mixed additions and no doubling. Each row is read with a masked
//!   scan of all 8 entries; the digit's sign is applied by a masked negation. A scalar above n/2 is negated
//!   first (and the result after), so that the top digit stays within the table.
//! - `mul_ct`: k·P for a secret k: the GLV split (constant time) into two halves below 2^128, signed radix-16
//!   digits of each over tables of P..8P and λP..8λP built at run time as affine points of an isomorphic curve
//!   (no inversion), 128 Jacobian doublings and two unified mixed additions per digit.
//! - `double_mul_vartime`: u1·G + u2·P for verification: each scalar split by the GLV endomorphism
//!   λ·(x, y) = (β·x, y) into two halves of about 128 bits, four width-w NAFs (w = 5 for P and λP, whose odd
//!   multiples are computed per call as affine points of an isomorphic curve, without inversion; [`WINDOW_G`] for G and
//!   λ·G, from generated tables), interleaved (Straus–Shamir) over 129 doublings, all additions mixed.

use super::field::{Fe, Mask, mask_from_bit};
use super::scalar::Scalar;

/// The generator's coordinates.
pub(crate) const GX: Fe =
    Fe::from_bytes_wrapping(&super::scalar::hex32("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"));
pub(crate) const GY: Fe =
    Fe::from_bytes_wrapping(&super::scalar::hex32("483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8"));
/// β, a cube root of unity mod p: λ·(x, y) = (β·x, y).
pub(crate) const BETA: Fe =
    Fe::from_bytes_wrapping(&super::scalar::hex32("7ae96a2b657c07106e64479eac3434e99cf0497512f58995c1396c28719501ee"));

/// 3·b = 21, for the complete formulas.
const B3: u64 = 21;

/// A point in affine coordinates, never the identity.
#[derive(Clone, Copy)]
pub(crate) struct Affine {
    pub(crate) x: Fe,
    pub(crate) y: Fe,
}

impl Affine {
    pub(crate) const G: Affine = Affine { x: GX, y: GY };

    /// A point from its row of a generated table (see [`crate::ec::table`]): x's limbs, then y's.
    const fn from_words(w: &[u64; 8]) -> Affine {
        Affine { x: Fe([w[0], w[1], w[2], w[3]]), y: Fe([w[4], w[5], w[6], w[7]]) }
    }

    /// The point's row of a generated table.
    #[cfg(test)]
    fn words(&self) -> [u64; 8] {
        let (x, y) = (self.x.0, self.y.0);
        [x[0], x[1], x[2], x[3], y[0], y[1], y[2], y[3]]
    }

    /// `(x, y)` if it satisfies the curve equation (public data; the coordinates are already field
    /// elements, so below p).
    pub(crate) fn from_xy_vartime(x: Fe, y: Fe) -> Option<Affine> {
        let rhs = x.square().mul(&x).add(&Fe::B);
        if y.square().eq_vartime(&rhs) { Some(Affine { x, y }) } else { None }
    }

    /// The point with this x and y of the given parity (0 even, 1 odd), if x³ + 7 is a square. The square
    /// root is constant time; the result (whether a point exists) is not secret.
    pub(crate) fn lift_x(x: Fe, odd: u64) -> Option<Affine> {
        let (ok, y) = x.square().mul(&x).add(&Fe::B).sqrt();
        if ok == 0 { None } else { Some(Affine { x, y: y.with_parity(odd) }) }
    }

    /// `−self`.
    #[inline]
    pub(crate) const fn neg(&self) -> Affine {
        Affine { x: self.x, y: self.y.neg() }
    }

    /// `a` where `mask` is all ones, `b` where it is zero.
    #[inline(always)]
    const fn select(a: &Affine, b: &Affine, mask: Mask) -> Affine {
        Affine { x: Fe::select(&a.x, &b.x, mask), y: Fe::select(&a.y, &b.y, mask) }
    }

    /// λ·self = (β·x, y).
    #[inline]
    const fn endo(&self) -> Affine {
        Affine { x: self.x.mul(&BETA), y: self.y }
    }
}

// ---- Homogeneous projective coordinates, complete formulas (constant time) ---------------------------

/// A point (X : Y : Z) = (X/Z, Y/Z); the identity is (0 : 1 : 0).
#[derive(Clone, Copy)]
pub(crate) struct Proj {
    pub(crate) x: Fe,
    pub(crate) y: Fe,
    pub(crate) z: Fe,
}

impl Proj {
    pub(crate) const IDENTITY: Proj = Proj { x: Fe::ZERO, y: Fe::ONE, z: Fe::ZERO };

    /// `self + q` for an affine `q` (never the identity), complete in `self` (RCB algorithm 8, a = 0):
    /// 11M + 2·m(3b).
    #[inline(always)]
    pub(crate) const fn add_affine(&self, q: &Affine) -> Proj {
        let (x1, y1, z1) = (&self.x, &self.y, &self.z);
        let (x2, y2) = (&q.x, &q.y);
        let t0 = x1.mul(x2);
        let t1 = y1.mul(y2);
        let t3 = x2.add(y2).mul(&x1.add(y1)).sub(&t0.add(&t1));
        let t4 = y2.mul(z1).add(y1);
        let y3 = x2.mul(z1).add(x1);
        let t0 = t0.add(&t0).add(&t0);
        let t2 = z1.mul_small(B3);
        let z3 = t1.add(&t2);
        let t1 = t1.sub(&t2);
        let y3 = y3.mul_small(B3);
        let x3 = t3.mul(&t1).sub(&t4.mul(&y3));
        let y3n = t1.mul(&z3).add(&y3.mul(&t0));
        let z3n = z3.mul(&t4).add(&t0.mul(&t3));
        Proj { x: x3, y: y3n, z: z3n }
    }

    /// `−self`.
    #[inline]
    pub(crate) const fn neg(&self) -> Proj {
        Proj { x: self.x, y: self.y.neg(), z: self.z }
    }

    /// `a` where `mask` is all ones, `b` where it is zero.
    #[inline(always)]
    pub(crate) const fn select(a: &Proj, b: &Proj, mask: Mask) -> Proj {
        Proj { x: Fe::select(&a.x, &b.x, mask), y: Fe::select(&a.y, &b.y, mask), z: Fe::select(&a.z, &b.z, mask) }
    }

    /// All ones if `self` is the identity (Z = 0).
    #[inline]
    pub(crate) fn mask_is_identity(&self) -> Mask {
        self.z.mask_is_zero()
    }

    /// The affine coordinates (constant-time inversion) and a mask that is all ones when `self` is the
    /// identity (then the coordinates are (0, 0)).
    pub(crate) fn to_affine(self) -> (Affine, Mask) {
        let zinv = self.z.invert_ct();
        (Affine { x: self.x.mul(&zinv), y: self.y.mul(&zinv) }, self.mask_is_identity())
    }
}

/// Signed radix-16 digits d_0..d_63 of `s` < 2^255 with `s = Σ d_i·16^i`, each in [−8, 8).
/// Constant time (no branch on the digits).
fn radix16(s: &[u8; 32]) -> [i8; 64] {
    // s is big-endian; nibble 2i is the low nibble of byte 31 − i.
    let mut d = [0i8; 64];
    for i in 0..32 {
        d[2 * i] = (s[31 - i] & 15) as i8;
        d[2 * i + 1] = (s[31 - i] >> 4) as i8;
    }
    for i in 0..63 {
        let carry = (d[i] + 8) >> 4;
        d[i] -= carry << 4;
        d[i + 1] += carry;
    }
    d
}

/// The sign mask and magnitude of a digit in [−8, 8], without branches.
#[inline(always)]
fn digit_parts(d: i8) -> (Mask, u8) {
    let neg = mask_from_bit(((d as u8) >> 7) as u64);
    let abs = ((d as i64 ^ neg as i64) - neg as i64) as u8;
    (neg, abs)
}

/// All ones if `a == b` (small values).
#[inline(always)]
fn mask_eq_small(a: u8, b: u8) -> Mask {
    let x = (a ^ b) as u64;
    mask_from_bit(x.wrapping_sub(1) >> 63)
}

/// `|d|·P` from a row holding P..8P (affine), with a mask that is all ones when d = 0 (then the point returned
/// is meaningless), negated when d < 0. Every entry is read.
#[inline(always)]
fn lookup_affine(row: &[Affine; 8], d: i8) -> (Affine, Mask) {
    let (neg, abs) = digit_parts(d);
    let mut r = row[0];
    for (j, e) in row.iter().enumerate() {
        r = Affine::select(e, &r, mask_eq_small(abs, j as u8 + 1));
    }
    let r = Affine::select(&r.neg(), &r, neg);
    (r, mask_eq_small(abs, 0))
}

/// `k·G` for a secret scalar `k`, in constant time (see the module docs).
#[inline(always)]
pub(crate) fn mul_base(k: &Scalar) -> Proj {
    let high = k.mask_is_high();
    let mut s = k.cneg(high).to_bytes();
    let mut digits = radix16(&s);
    let mut acc = Proj::IDENTITY;
    for (row, &d) in BASE_TABLE.iter().zip(digits.iter()) {
        let (q, zero) = lookup_affine(row, d);
        acc = Proj::select(&acc, &acc.add_affine(&q), zero);
    }
    zeroize::Zeroize::zeroize(&mut s);
    zeroize::Zeroize::zeroize(&mut digits);
    Proj::select(&acc.neg(), &acc, high)
}

/// `k·P` for a secret scalar `k`, in constant time in `k` and `P` (see the module docs): the GLV split
/// k = k1 + k2·λ (constant time, |k1|, |k2| < 2^128), the signs folded into the tables by masked negation, then
/// signed radix-16 digits of both halves over tables of P..8P and of their images under λ, all on one
/// isomorphic curve ([`multiples_scaled`]): 4 Jacobian doublings and two unified mixed additions per digit.
#[inline(always)]
pub(crate) fn mul_ct(k: &Scalar, p: &Affine) -> Jac {
    let ((mut k1, n1), (mut k2, n2)) = k.split_glv();
    let (mut t1, zg) = multiples_scaled(p);
    // λ·(x, y) = (β·x, y) on the scaled curve too; each half's sign negates its whole table.
    let mut t2 = t1;
    for (a, b) in t1.iter_mut().zip(t2.iter_mut()) {
        *a = Affine::select(&a.neg(), a, n1);
        let l = Affine { x: b.x.mul_c(&BETA), y: b.y };
        *b = Affine::select(&l.neg(), &l, n2);
    }
    let (mut b1, mut b2) = (k1.to_bytes(), k2.to_bytes());
    let (mut d1, mut d2) = (radix16(&b1), radix16(&b2));
    // Both halves are below 2^128: digits 33..63 are zero (digit 32 holds the recoding's carry).
    let mut acc = Jac::IDENTITY.add_digit(&t1, d1[32]).add_digit(&t2, d2[32]);
    for i in (0..32).rev() {
        // One copy of the (inlined) doubling, four times.
        for _ in 0..4 {
            acc = acc.double();
        }
        acc = acc.add_digit(&t1, d1[i]).add_digit(&t2, d2[i]);
    }
    zeroize::Zeroize::zeroize(&mut b1);
    zeroize::Zeroize::zeroize(&mut b2);
    zeroize::Zeroize::zeroize(&mut d1);
    zeroize::Zeroize::zeroize(&mut d2);
    zeroize::Zeroize::zeroize(&mut k1);
    zeroize::Zeroize::zeroize(&mut k2);
    // Back from the scaled curve: (X : Y : Z) there is (X : Y : Z·zg) here.
    Jac { x: acc.x, y: acc.y, z: acc.z.mul_c(&zg) }
}

/// `(j + 1)·P` for j = 0..7 as affine points of the curve y² = x³ + 7·zg⁶, which (x, y) ↦ (x·zg², y·zg³)
/// maps onto from secp256k1, and `zg`. The Jacobian formulas for a = 0 never read b, so they run on that
/// curve unchanged, and a point (X : Y : Z) there is (X : Y : Z·zg) on secp256k1; λ is (β·x, y) there too.
///
/// The multiples come from one doubling and six mixed additions of P, none of them exceptional (jP = ±P
/// only for j ≡ ±1 mod n); each Z is the previous one times a known ratio, so every multiple is brought to
/// the last Z, `zg`, by the product of the ratios after it. No inversion and no branch: constant time in P as
/// well.
#[inline(always)]
fn multiples_scaled(p: &Affine) -> ([Affine; 8], Fe) {
    let mut jac = [Jac::from_affine(p); 8];
    // ratio[j] = Z_j / Z_(j−1); Z_0 = 1.
    let mut ratio = [Fe::ONE; 8];
    jac[1] = jac[0].double();
    ratio[1] = jac[1].z;
    for j in 2..8 {
        let (next, h) = jac[j - 1].add_affine_ratio(p);
        jac[j] = next;
        ratio[j] = h;
    }
    let zg = jac[7].z;
    let mut out = [Affine { x: jac[7].x, y: jac[7].y }; 8];
    // s = Z_7 / Z_j, so that (X_j·s², Y_j·s³) is the point with Z = Z_7.
    let mut s = Fe::ONE;
    for j in (0..7).rev() {
        s = s.mul_c(&ratio[j + 1]);
        let s2 = s.square_c();
        out[j] = Affine { x: jac[j].x.mul_c(&s2), y: jac[j].y.mul_c(&s2.mul_c(&s)) };
    }
    (out, zg)
}

// ---- Jacobian coordinates: constant-time doubling and unified addition, variable-time rest --------------

/// A point (X : Y : Z) = (X/Z², Y/Z³); the identity has Z = 0.
#[derive(Clone, Copy)]
pub(crate) struct Jac {
    pub(crate) x: Fe,
    pub(crate) y: Fe,
    pub(crate) z: Fe,
}

/// Whether two field elements are equal (`const`, for the table computation and variable-time code).
#[inline]
const fn fe_eq(a: &Fe, b: &Fe) -> bool {
    let (x, y) = (a.normalize(), b.normalize());
    x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3]
}

impl Jac {
    pub(crate) const IDENTITY: Jac = Jac { x: Fe::ONE, y: Fe::ONE, z: Fe::ZERO };

    #[inline]
    pub(crate) const fn from_affine(p: &Affine) -> Jac {
        Jac { x: p.x, y: p.y, z: Fe::ONE }
    }

    #[inline]
    pub(crate) const fn is_identity(&self) -> bool {
        fe_eq(&self.z, &Fe::ZERO)
    }

    /// `2·self` (3M + 4S), in the form that keeps the additions few: with L = 3·X²/2, S = Y² and T = X·S,
    /// X3 = L² − 2·T, Y3 = L·(T − X3) − S², Z3 = Y·Z. It is the usual doubling (3·X², 4·X·Y², 2·Y·Z) with
    /// every coordinate divided by the matching power of 2. No point of secp256k1 has y = 0, so only the
    /// identity is special, and it maps to itself (Z3 = Y·Z = 0): no branch, constant time.
    #[inline(always)]
    pub(crate) const fn double(&self) -> Jac {
        let xx = self.x.square_c();
        let l = xx.add(&xx).add(&xx).half();
        let s = self.y.square_c();
        let t = self.x.mul_c(&s);
        let x3 = l.square_c().sub(&t.add(&t));
        let y3 = l.mul_c(&t.sub(&x3)).sub(&s.square_c());
        Jac { x: x3, y: y3, z: self.y.mul_c(&self.z) }
    }

    /// `self + q` for an affine `q`, variable time (8M + 3S).
    #[inline(always)]
    pub(crate) const fn add_affine_vartime(&self, q: &Affine) -> Jac {
        if self.is_identity() {
            return Jac::from_affine(q);
        }
        let z1z1 = self.z.square_c();
        let u2 = q.x.mul_c(&z1z1);
        let s2 = q.y.mul_c(&self.z).mul_c(&z1z1);
        let h = u2.sub(&self.x);
        let r = s2.sub(&self.y);
        if fe_eq(&h, &Fe::ZERO) {
            return if fe_eq(&r, &Fe::ZERO) { self.double() } else { Jac::IDENTITY };
        }
        self.add_finish(&h, &r)
    }

    /// The common tail of the mixed additions: with `h = u2 − X1` (non-zero) and `r = s2 − Y1`, the sum is
    /// `(r² − h³ − 2·X1·h², r·(X1·h² − X3) − Y1·h³, Z1·h)`.
    #[inline(always)]
    const fn add_finish(&self, h: &Fe, r: &Fe) -> Jac {
        let hh = h.square_c();
        let hhh = h.mul_c(&hh);
        let v = self.x.mul_c(&hh);
        let x3 = r.square_c().sub(&hhh.add(&v.add(&v)));
        let y3 = r.mul_c(&v.sub(&x3)).sub(&self.y.mul_c(&hhh));
        Jac { x: x3, y: y3, z: self.z.mul_c(h) }
    }

    /// `self + q` for an affine `q`, in constant time, for every `self`: the identity, `q`, `−q` and the rest
    /// (7M + 5S). The unified formula of Brier and Joye (one for addition and doubling), on Jacobian
    /// coordinates with U1 = X1, U2 = x2·Z1², S1 = Y1, S2 = y2·Z1³:
    ///
    /// T = U1 + U2, M = S1 + S2, R = T² − U1·U2, X3 = R² − T·M², Y3 = −(R·(2·X3 − T·M²) + M⁴) / 2, Z3 = M·Z1,
    ///
    /// the slope (x1² + x1·x2 + x2²) / (y1 + y2) scaled. It gives the identity (M = 0, R ≠ 0) for q = −self
    /// and fails only where y1 = −y2 and x1 ≠ x2, that is x1 = β·x2 or β²·x2 (then R = 0 as well; the curve
    /// has no point with x = 0, so R = M = 0 means exactly this case): there the chord slope (y1 − y2) /
    /// (x1 − x2) takes over, R = 2·S1 and M = U1 − U2 with no M⁴ term (y1 + y2 = 0). The cases are chosen by
    /// masks, and a `self` at the identity gives q by a final masked selection.
    #[inline(always)]
    pub(crate) fn add_affine_ct(&self, q: &Affine) -> Jac {
        let zz = self.z.square_c();
        let (u1, s1) = (&self.x, &self.y);
        let u2 = q.x.mul_c(&zz);
        let s2 = q.y.mul_c(&zz).mul_c(&self.z);
        let t = u1.add(&u2);
        let m = s1.add(&s2);
        let r = t.square_c().sub(&u1.mul_c(&u2));
        let degenerate = m.mask_is_zero() & r.mask_is_zero();
        let r = Fe::select(&s1.add(s1), &r, degenerate);
        let m_used = Fe::select(&u1.sub(&u2), &m, degenerate);
        let mm = m_used.square_c();
        let tmm = t.mul_c(&mm);
        // M⁴, or zero (which M is) in the degenerate case.
        let m4 = Fe::select(&m, &mm.square_c(), degenerate);
        let x3 = r.square_c().sub(&tmm);
        let y3 = r.mul_c(&x3.add(&x3).sub(&tmm)).add(&m4).neg().half();
        let z3 = self.z.mul_c(&m_used);
        let inf = self.z.mask_is_zero();
        Jac { x: Fe::select(&q.x, &x3, inf), y: Fe::select(&q.y, &y3, inf), z: Fe::select(&Fe::ONE, &z3, inf) }
    }

    /// `self + row[|d| − 1]·sign(d)` for a signed digit `d` of a radix-16 recoding, `self` for d = 0, in
    /// constant time: every entry is read and the sum is always computed.
    #[inline(always)]
    fn add_digit(&self, row: &[Affine; 8], d: i8) -> Jac {
        let (q, zero) = lookup_affine(row, d);
        Jac::select(self, &self.add_affine_ct(&q), zero)
    }

    /// `a` where `mask` is all ones, `b` where it is zero.
    #[inline(always)]
    pub(crate) const fn select(a: &Jac, b: &Jac, mask: Mask) -> Jac {
        Jac { x: Fe::select(&a.x, &b.x, mask), y: Fe::select(&a.y, &b.y, mask), z: Fe::select(&a.z, &b.z, mask) }
    }

    /// The affine coordinates (constant-time inversion) and a mask that is all ones when `self` is the
    /// identity (then the coordinates are (0, 0)).
    pub(crate) fn to_affine_ct(self) -> (Affine, Mask) {
        let zinv = self.z.invert_ct();
        let zinv2 = zinv.square_c();
        (Affine { x: self.x.mul_c(&zinv2), y: self.y.mul_c(&zinv2).mul_c(&zinv) }, self.z.mask_is_zero())
    }

    /// `self + q` and the ratio `h` of the new Z to the old one, for `self` not the identity and
    /// `q ≠ ±self` (the caller guarantees it: multiples of a point of prime order). It has no branch, so it
    /// serves the constant-time table of [`multiples_scaled`] as well.
    #[inline(always)]
    fn add_affine_ratio(&self, q: &Affine) -> (Jac, Fe) {
        let z1z1 = self.z.square_c();
        let u2 = q.x.mul_c(&z1z1);
        let s2 = q.y.mul_c(&self.z).mul_c(&z1z1);
        let h = u2.sub(&self.x);
        let r = s2.sub(&self.y);
        (self.add_finish(&h, &r), h)
    }

    /// `self + q` where `self` lives on the isomorphic curve scaled by `zg` (the point it stands for is
    /// (X : Y : Z·zg)) and `q` is an ordinary affine point; the result is in the same scaled frame. This is
    /// the mixed addition of q to (X : Y : Z·zg), whose Z comes back as Z·zg·h, divided by zg again
    /// (9M + 3S). Variable time.
    #[inline(always)]
    fn add_affine_scaled_vartime(&self, q: &Affine, zg: &Fe) -> Jac {
        if self.is_identity() {
            // q in the scaled frame: (x·zg², y·zg³, 1).
            let zg2 = zg.square_c();
            return Jac { x: q.x.mul_c(&zg2), y: q.y.mul_c(&zg2).mul_c(zg), z: Fe::ONE };
        }
        let az = self.z.mul_c(zg);
        let z1z1 = az.square_c();
        let u2 = q.x.mul_c(&z1z1);
        let s2 = q.y.mul_c(&az).mul_c(&z1z1);
        let h = u2.sub(&self.x);
        let r = s2.sub(&self.y);
        if fe_eq(&h, &Fe::ZERO) {
            return if fe_eq(&r, &Fe::ZERO) { self.double() } else { Jac::IDENTITY };
        }
        self.add_finish(&h, &r)
    }

    /// `self + q`, variable time (12M + 4S).
    #[cfg(test)]
    #[inline]
    pub(crate) const fn add_vartime(&self, q: &Jac) -> Jac {
        if self.is_identity() {
            return *q;
        }
        if q.is_identity() {
            return *self;
        }
        let z1z1 = self.z.square_c();
        let z2z2 = q.z.square_c();
        let u1 = self.x.mul_c(&z2z2);
        let u2 = q.x.mul_c(&z1z1);
        let s1 = self.y.mul_c(&q.z).mul_c(&z2z2);
        let s2 = q.y.mul_c(&self.z).mul_c(&z1z1);
        let h = u2.sub(&u1);
        let r = s2.sub(&s1);
        if fe_eq(&h, &Fe::ZERO) {
            return if fe_eq(&r, &Fe::ZERO) { self.double() } else { Jac::IDENTITY };
        }
        let hh = h.square_c();
        let hhh = h.mul_c(&hh);
        let v = u1.mul_c(&hh);
        let x3 = r.square_c().sub(&hhh.add(&v.add(&v)));
        let y3 = r.mul_c(&v.sub(&x3)).sub(&s1.mul_c(&hhh));
        Jac { x: x3, y: y3, z: self.z.mul_c(&q.z).mul_c(&h) }
    }

    /// `−self`.
    #[cfg(test)]
    #[inline]
    pub(crate) const fn neg(&self) -> Jac {
        Jac { x: self.x, y: self.y.neg(), z: self.z }
    }

    /// The affine point, `None` for the identity (variable time).
    pub(crate) fn to_affine_vartime(self) -> Option<Affine> {
        if self.is_identity() {
            return None;
        }
        let zinv = self.z.invert_vartime();
        let zinv2 = zinv.square_c();
        Some(Affine { x: self.x.mul_c(&zinv2), y: self.y.mul_c(&zinv2).mul_c(&zinv) })
    }

    /// Whether the affine x-coordinate, as an integer, is `r` modulo n — without an inversion: x = X/Z² is
    /// below p, so x mod n = r means x = r or (when r + n < p) x = r + n; each is checked as r·Z² = X.
    #[inline(always)]
    pub(crate) fn x_equals_mod_n_vartime(&self, r: &Scalar) -> bool {
        if self.is_identity() {
            return false;
        }
        let zz = self.z.square_c();
        let rb = r.to_bytes();
        let rf = Fe::from_bytes_wrapping(&rb); // r < n < p: exact
        if fe_eq(&rf.mul_c(&zz), &self.x) {
            return true;
        }
        // r + n < p  ⇔  r < p − n.
        let mut r_plus_n = [0u64; 4];
        let mut carry = 0u128;
        for (i, o) in r_plus_n.iter_mut().enumerate() {
            let t = r.0[i] as u128 + super::scalar::N[i] as u128 + carry;
            *o = t as u64;
            carry = t >> 64;
        }
        let (_, borrow) = super::field::sub4(&r_plus_n, &super::field::P);
        if carry == 0 && borrow == 1 {
            return fe_eq(&Fe(r_plus_n).mul_c(&zz), &self.x);
        }
        false
    }
}

/// The width-w NAF of a value below 2^130 given as little-endian limbs: digits odd and in (−2^(w−1), 2^(w−1))
/// or zero, at most one non-zero in any w consecutive positions. Variable time (public scalars only).
fn wnaf(k: &[u64; 4], w: u32) -> [i16; NAF_LEN] {
    let mut naf = [0i16; NAF_LEN];
    let mut x = *k;
    let bit = |x: &[u64; 4], i: usize| -> u64 { if i >= 256 { 0 } else { (x[i / 64] >> (i % 64)) & 1 } };
    let mut i = 0;
    while i < NAF_LEN {
        if bit(&x, i) == 0 {
            i += 1;
            continue;
        }
        // The w bits at i.
        let mut word = 0u64;
        for j in 0..w as usize {
            word |= bit(&x, i + j) << j;
        }
        let mut d = word as i64;
        if d >= 1 << (w - 1) {
            d -= 1 << w;
        }
        naf[i] = d as i16;
        // x −= d·2^i (x ≥ 0 stays true; a negative d adds).
        let add = |x: &mut [u64; 4], v: u64, at: usize, sub: bool| {
            let mut limb = at / 64;
            let shift = at % 64;
            let wide = (v as u128) << shift;
            let parts = [wide as u64, (wide >> 64) as u64];
            let mut carry = 0u64;
            let mut k = 0;
            while limb < 4 {
                let p = if k < 2 { parts[k] } else { 0 };
                if sub {
                    let (a, o1) = x[limb].overflowing_sub(p);
                    let (a, o2) = a.overflowing_sub(carry);
                    x[limb] = a;
                    carry = (o1 | o2) as u64;
                } else {
                    let (a, o1) = x[limb].overflowing_add(p);
                    let (a, o2) = a.overflowing_add(carry);
                    x[limb] = a;
                    carry = (o1 | o2) as u64;
                }
                if k >= 1 && carry == 0 {
                    break;
                }
                limb += 1;
                k += 1;
            }
        };
        if d > 0 {
            add(&mut x, d as u64, i, true);
        } else {
            add(&mut x, (-d) as u64, i, false);
        }
        i += w as usize;
    }
    naf
}

/// Digits of a GLV half (below 2^128, plus the carry the NAF may add).
const NAF_LEN: usize = 131;

/// The window width for the odd multiples of G and λ·G (2^(w−2) entries each, in the generated tables: 512 KiB
/// each at w = 15, as libsecp256k1's default). A wider window means fewer additions of G per verification (about
/// 2·129/(w + 1)); each step from 12 to 15 saves about one, while the table lookups stay mostly in L2/L3.
pub(crate) const WINDOW_G: u32 = 15;
const G_ODD_LEN: usize = 1 << (WINDOW_G - 2);
/// The window width for the odd multiples of P and λ·P, computed per verification.
const WINDOW_P: u32 = 5;
const P_ODD_LEN: usize = 1 << (WINDOW_P - 2);

/// `u1·G + u2·P` (variable time, public inputs): see the module docs.
#[inline(always)]
pub(crate) fn double_mul_vartime(u1: &Scalar, u2: &Scalar, p: &Affine) -> Jac {
    let ((a1, na1), (b1, nb1)) = u1.split_glv();
    let ((a2, na2), (b2, nb2)) = u2.split_glv();
    let naf_a1 = wnaf(&a1.0, WINDOW_G);
    let naf_b1 = wnaf(&b1.0, WINDOW_G);
    let naf_a2 = wnaf(&a2.0, WINDOW_P);
    let naf_b2 = wnaf(&b2.0, WINDOW_P);
    // Odd multiples of P and of λ·P as affine points of an isomorphic curve ("effective affine", no
    // inversion): with D = 2P = (Dx : Dy : Dz), the map (x, y) -> (x·Dz², y·Dz³) takes the curve to
    // y² = x³ + 7·Dz⁶, where D is the affine (Dx, Dy); the formulas never use b, so the odd multiples are
    // computed there with mixed additions, then brought to their common Z (the last one's) through the
    // ratios each addition returns. The accumulator lives in that frame (scale zg = Dz·Z); the G tables are
    // added with `add_affine_scaled_vartime`, and the result's Z is multiplied by zg at the end.
    let d = Jac::from_affine(p).double();
    let da = Affine { x: d.x, y: d.y };
    let dz2 = d.z.square_c();
    let mut pts = [Jac::IDENTITY; P_ODD_LEN];
    let mut ratios = [Fe::ONE; P_ODD_LEN];
    pts[0] = Jac { x: p.x.mul_c(&dz2), y: p.y.mul_c(&dz2).mul_c(&d.z), z: Fe::ONE };
    for j in 1..P_ODD_LEN {
        let (pt, h) = pts[j - 1].add_affine_ratio(&da);
        pts[j] = pt;
        ratios[j] = h;
    }
    let last = P_ODD_LEN - 1;
    let zg = d.z.mul_c(&pts[last].z);
    let mut tp = [Affine::G; P_ODD_LEN];
    tp[last] = Affine { x: pts[last].x, y: pts[last].y };
    // rho = Z_last / Z_i = ratios[i + 1]·…·ratios[last].
    let mut rho = ratios[last];
    for i in (0..last).rev() {
        let rho2 = rho.square_c();
        tp[i] = Affine { x: pts[i].x.mul_c(&rho2), y: pts[i].y.mul_c(&rho2).mul_c(&rho) };
        rho = rho.mul_c(&ratios[i]);
    }
    let mut tl = tp;
    for e in tl.iter_mut() {
        *e = e.endo();
    }
    let top = (0..NAF_LEN).rev().find(|&i| naf_a1[i] != 0 || naf_b1[i] != 0 || naf_a2[i] != 0 || naf_b2[i] != 0);
    let Some(top) = top else { return Jac::IDENTITY };
    let mut acc = Jac::IDENTITY;
    // The sign of each half flips its digits.
    let flip = |d: i16, neg: Mask| if neg != 0 { -d } else { d };
    for i in (0..=top).rev() {
        acc = acc.double();
        let d = flip(naf_a1[i], na1);
        if d != 0 {
            let e = &G_ODD[(d.unsigned_abs() / 2) as usize];
            acc = acc.add_affine_scaled_vartime(&if d > 0 { *e } else { e.neg() }, &zg);
        }
        let d = flip(naf_b1[i], nb1);
        if d != 0 {
            let e = &G_LAMBDA_ODD[(d.unsigned_abs() / 2) as usize];
            acc = acc.add_affine_scaled_vartime(&if d > 0 { *e } else { e.neg() }, &zg);
        }
        let d = flip(naf_a2[i], na2);
        if d != 0 {
            let e = &tp[(d.unsigned_abs() / 2) as usize];
            acc = acc.add_affine_vartime(&if d > 0 { *e } else { e.neg() });
        }
        let d = flip(naf_b2[i], nb2);
        if d != 0 {
            let e = &tl[(d.unsigned_abs() / 2) as usize];
            acc = acc.add_affine_vartime(&if d > 0 { *e } else { e.neg() });
        }
    }
    // Back from the scaled frame (the identity keeps Z = 0).
    Jac { x: acc.x, y: acc.y, z: acc.z.mul_c(&zg) }
}

// ---- Tables ------------------------------------------------------------------------------------------
//
// Generated from the derivations below (compiled for the tests only) into src/ec/tables/; see
// crate::ec::table.

/// A generated list of points.
const fn affine_list<const N: usize>(w: &[[u64; 8]; N]) -> [Affine; N] {
    let mut out = [Affine::G; N];
    let mut j = 0;
    while j < N {
        out[j] = Affine::from_words(&w[j]);
        j += 1;
    }
    out
}

/// A generated table of `R` rows of `C` points.
const fn affine_rows<const R: usize, const C: usize>(w: &[[[u64; 8]; C]; R]) -> [[Affine; C]; R] {
    let mut out = [[Affine::G; C]; R];
    let mut i = 0;
    while i < R {
        out[i] = affine_list(&w[i]);
        i += 1;
    }
    out
}

/// Converts `N` Jacobian points (none the identity) to affine with one inversion (Montgomery's trick).
#[cfg(test)]
const fn batch_to_affine<const N: usize>(pts: &[Jac; N]) -> [Affine; N] {
    let mut prefix = [Fe::ONE; N];
    let mut acc = Fe::ONE;
    let mut i = 0;
    while i < N {
        prefix[i] = acc;
        acc = acc.mul(&pts[i].z);
        i += 1;
    }
    let mut inv = acc.invert();
    let mut out = [Affine::G; N];
    let mut i = N;
    while i > 0 {
        i -= 1;
        let zinv = inv.mul(&prefix[i]);
        inv = inv.mul(&pts[i].z);
        let zinv2 = zinv.square();
        out[i] = Affine { x: pts[i].x.mul(&zinv2), y: pts[i].y.mul(&zinv2).mul(&zinv) };
    }
    out
}

#[cfg(test)]
const fn compute_base_table() -> [[Affine; 8]; 64] {
    let g = Jac::from_affine(&Affine::G);
    let mut pts = [g; 512];
    let mut row_base = g;
    let mut i = 0;
    while i < 64 {
        let mut cur = row_base;
        let mut j = 0;
        while j < 8 {
            pts[8 * i + j] = cur;
            cur = cur.add_vartime(&row_base);
            j += 1;
        }
        // row_base ← 16·row_base
        row_base = row_base.double().double().double().double();
        i += 1;
    }
    let flat = batch_to_affine(&pts);
    let mut out = [[Affine::G; 8]; 64];
    let mut i = 0;
    while i < 64 {
        let mut j = 0;
        while j < 8 {
            out[i][j] = flat[8 * i + j];
            j += 1;
        }
        i += 1;
    }
    out
}

/// Entries per part of the derivation of the G tables.
#[cfg(test)]
const G_PART: usize = 1024;

/// `G_ODD[part·G_PART + j] = (2·(part·G_PART + j) + 1)·G` for `j < G_PART`.
#[cfg(test)]
const fn compute_g_odd_part(part: usize) -> [Affine; G_PART] {
    let g = Jac::from_affine(&Affine::G);
    let g2 = g.double();
    // 2·G_PART·G, the distance between the first entries of consecutive parts.
    let mut stride = g2;
    let mut k = 1;
    while k < G_PART {
        stride = stride.double();
        k *= 2;
    }
    let mut first = g;
    let mut i = 0;
    while i < part {
        first = first.add_vartime(&stride);
        i += 1;
    }
    let mut pts = [first; G_PART];
    let mut j = 1;
    while j < G_PART {
        pts[j] = pts[j - 1].add_vartime(&g2);
        j += 1;
    }
    batch_to_affine(&pts)
}

/// `BASE_TABLE[i][j] = (j + 1)·16^i·G`.
pub(crate) static BASE_TABLE: [[Affine; 8]; 64] = affine_rows(&include!("../tables/secp256k1_base.rs"));
/// `G_ODD[j] = (2j + 1)·G`.
pub(crate) static G_ODD: [Affine; G_ODD_LEN] = affine_list(&include!("../tables/secp256k1_g_odd.rs"));
/// `G_LAMBDA_ODD[j] = (2j + 1)·λ·G`.
pub(crate) static G_LAMBDA_ODD: [Affine; G_ODD_LEN] = affine_list(&include!("../tables/secp256k1_g_lambda_odd.rs"));

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use super::super::field::tests::{Xs, p, to_big};
    use super::*;
    use num_bigint::BigUint;

    /// A reference implementation over num-bigint, affine, `None` for the identity.
    pub(crate) type RefPt = Option<(BigUint, BigUint)>;

    pub(crate) fn ref_add(a: &RefPt, b: &RefPt) -> RefPt {
        let p = p();
        let (Some((x1, y1)), Some((x2, y2))) = (a, b) else { return a.clone().or(b.clone()) };
        let inv = |v: &BigUint| v.modpow(&(&p - 2u8), &p);
        let l = if x1 == x2 {
            if (y1 + y2) % &p == BigUint::from(0u8) {
                return None;
            }
            (x1 * x1 * 3u8) % &p * inv(&((y1 * 2u8) % &p)) % &p
        } else {
            ((y2 + &p - y1) % &p) * inv(&((x2 + &p - x1) % &p)) % &p
        };
        let x3 = (&l * &l + &p * 2u8 - x1 - x2) % &p;
        let y3 = (&l * ((x1 + &p - &x3) % &p) + &p - y1) % &p;
        Some((x3, y3))
    }

    pub(crate) fn ref_mul(k: &BigUint, pt: &RefPt) -> RefPt {
        let mut r: RefPt = None;
        for i in (0..k.bits()).rev() {
            r = ref_add(&r, &r);
            if k.bit(i) {
                r = ref_add(&r, pt);
            }
        }
        r
    }

    pub(crate) fn ref_g() -> RefPt {
        Some((to_big(&GX), to_big(&GY)))
    }

    fn of_affine(a: &Affine) -> RefPt {
        Some((to_big(&a.x), to_big(&a.y)))
    }

    fn of_proj(p: &Proj) -> RefPt {
        let (a, id) = p.to_affine();
        if id != 0 { None } else { of_affine(&a) }
    }

    fn of_jac(p: &Jac) -> RefPt {
        p.to_affine_vartime().map(|a| (to_big(&a.x), to_big(&a.y)))
    }

    fn scalar_of(rng: &mut Xs) -> Scalar {
        Scalar::from_bytes_reduced(&rng.bytes())
    }

    #[test]
    fn generator_on_curve_and_tables() {
        assert!(Affine::from_xy_vartime(GX, GY).is_some());
        let g = ref_g();
        for i in [0usize, 1, 17, 63] {
            for (j, e) in BASE_TABLE[i].iter().enumerate() {
                let k = (BigUint::from(j as u32 + 1)) << (4 * i);
                assert_eq!(of_affine(e), ref_mul(&k, &g), "base table {i} {j}");
            }
        }
        // The first, second and last entries of every part of the G tables, and a few inside, for both tables.
        let lambda = BigUint::from_bytes_be(&super::super::scalar::LAMBDA.to_bytes());
        let mut js = std::vec![3usize, 700, 5000];
        for part in 0..G_ODD_LEN / G_PART {
            js.extend([part * G_PART, part * G_PART + 1, part * G_PART + G_PART - 1]);
        }
        for j in js {
            let k = BigUint::from(2 * j as u32 + 1);
            assert_eq!(of_affine(&G_ODD[j]), ref_mul(&k, &g), "G_ODD[{j}]");
            // λ·P = (β·x, y).
            assert_eq!(of_affine(&G_LAMBDA_ODD[j]), ref_mul(&(&lambda * k), &g), "G_LAMBDA_ODD[{j}]");
        }
    }

    #[test]
    fn generated_tables_match_their_derivation() {
        use crate::ec::table::tests::{check, report};
        let words = |t: &[Affine]| t.iter().map(Affine::words).collect::<std::vec::Vec<_>>();
        let odd: std::vec::Vec<Affine> = (0..G_ODD_LEN / G_PART).flat_map(compute_g_odd_part).collect();
        let lambda_odd: std::vec::Vec<Affine> = odd.iter().map(Affine::endo).collect();
        report(&[
            check(
                "secp256k1_base.rs",
                "secp256k1: BASE_TABLE[i][j] = (j + 1)·16^i·G, affine (x, y), each as four 64-bit limbs",
                8,
                &words(BASE_TABLE.as_flattened()),
                &words(compute_base_table().as_flattened()),
            ),
            check(
                "secp256k1_g_odd.rs",
                "secp256k1: G_ODD[j] = (2j + 1)·G, affine (x, y), each as four 64-bit limbs",
                0,
                &words(&G_ODD),
                &words(&odd),
            ),
            check(
                "secp256k1_g_lambda_odd.rs",
                "secp256k1: G_LAMBDA_ODD[j] = (2j + 1)·λ·G = (β·x, y) of G_ODD[j], each as four 64-bit limbs",
                0,
                &words(&G_LAMBDA_ODD),
                &words(&lambda_odd),
            ),
        ]);
    }

    #[test]
    fn formulas_match_reference_including_exceptional_cases() {
        let mut rng = Xs(0x6e0_0001);
        let g = Affine::G;
        for _ in 0..8 {
            let k = scalar_of(&mut rng);
            let kb = BigUint::from_bytes_be(&k.to_bytes());
            let want = ref_mul(&kb, &ref_g());
            let p = mul_base(&k);
            assert_eq!(of_proj(&p), want);
            let (pa, _) = p.to_affine();
            // Complete mixed addition: P + P, P + (−P), O + P.
            assert_eq!(of_proj(&p.add_affine(&pa)), ref_add(&want, &want));
            assert!(of_proj(&p.add_affine(&pa.neg())).is_none());
            assert_eq!(of_proj(&Proj::IDENTITY.add_affine(&pa)), want);
            // Jacobian, same cases.
            let j = Jac::from_affine(&pa);
            assert_eq!(of_jac(&j.double()), ref_add(&want, &want));
            assert_eq!(of_jac(&j.add_vartime(&j)), ref_add(&want, &want));
            assert_eq!(of_jac(&j.add_affine_vartime(&pa)), ref_add(&want, &want));
            assert!(of_jac(&j.add_vartime(&j.neg())).is_none());
            assert!(of_jac(&j.add_affine_vartime(&pa.neg())).is_none());
            assert_eq!(of_jac(&Jac::IDENTITY.add_affine_vartime(&pa)), want);
            assert_eq!(of_jac(&j.add_vartime(&Jac::IDENTITY)), want);
            assert_eq!(of_jac(&j.double().add_affine_vartime(&g)), ref_add(&ref_add(&want, &want), &ref_g()));
            // The unified constant-time mixed addition, with self at Z = 1 and rescaled to a random Z: P + P,
            // P + (−P), O + P, P + G, and the case its main formula cannot take, y1 = −y2 with x1 ≠ x2, which
            // is (−λ·P) + P and (−λ²·P) + P.
            let z = Fe::from_bytes_wrapping(&scalar_of(&mut rng).to_bytes());
            let (z2, z3) = (z.square(), z.square().mul(&z));
            let rescale = |q: &Jac| Jac { x: q.x.mul(&z2), y: q.y.mul(&z3), z: q.z.mul(&z) };
            let lambda = BigUint::from_bytes_be(&super::super::scalar::LAMBDA.to_bytes());
            let n = BigUint::from_bytes_be(&Scalar::ZERO.sub(&Scalar::ONE).to_bytes()) + 1u8;
            let neg_lp = pa.endo().neg();
            let neg_l2p = neg_lp.endo();
            let want_neg_lp = ref_mul(&((&n - &lambda) * &kb % &n), &ref_g());
            let want_neg_l2p = ref_mul(&((&n - (&lambda * &lambda % &n)) * &kb % &n), &ref_g());
            assert_eq!(of_affine(&neg_lp), want_neg_lp);
            assert_eq!(of_affine(&neg_l2p), want_neg_l2p);
            assert_eq!(neg_lp.y.to_bytes(), pa.y.neg().to_bytes());
            for s in [j, rescale(&j)] {
                assert_eq!(of_jac(&s.add_affine_ct(&pa)), ref_add(&want, &want));
                assert!(of_jac(&s.add_affine_ct(&pa.neg())).is_none());
                assert_eq!(of_jac(&s.add_affine_ct(&g)), ref_add(&want, &ref_g()));
                assert_eq!(of_jac(&s.double().add_affine_ct(&g)), ref_add(&ref_add(&want, &want), &ref_g()));
            }
            for (q, wq) in [(neg_lp, &want_neg_lp), (neg_l2p, &want_neg_l2p)] {
                for s in [Jac::from_affine(&q), rescale(&Jac::from_affine(&q))] {
                    assert_eq!(of_jac(&s.add_affine_ct(&pa)), ref_add(wq, &want));
                }
            }
            assert_eq!(of_jac(&Jac::IDENTITY.add_affine_ct(&pa)), want);
            assert_eq!(of_jac(&rescale(&Jac::IDENTITY).add_affine_ct(&pa)), want);
            // The constant-time conversion to affine coordinates, and its identity mask.
            let (ct, inf) = rescale(&j).to_affine_ct();
            assert_eq!(inf, 0);
            assert_eq!(of_affine(&ct), want);
            assert_eq!(rescale(&Jac::IDENTITY).to_affine_ct().1, u64::MAX);
        }
    }

    #[test]
    fn scalar_multiplications_match_reference() {
        let mut rng = Xs(0x6e0_0002);
        let n = BigUint::from_bytes_be(&Scalar::ZERO.sub(&Scalar::ONE).to_bytes()) + 1u8;
        let mut ks: std::vec::Vec<Scalar> = (0..12).map(|_| scalar_of(&mut rng)).collect();
        // Edge scalars: 1, 2, n − 1, n − 2 (the doubling case of a windowed ladder), n/2, small and 128-bit.
        for v in [1u64, 2, 3, 8, 16, 17] {
            ks.push(Scalar([v, 0, 0, 0]));
        }
        for v in [1u64, 2, 3, 16] {
            ks.push(Scalar::ZERO.sub(&Scalar([v, 0, 0, 0])));
        }
        ks.push(Scalar([u64::MAX, u64::MAX, 0, 0]));
        ks.push(Scalar::ZERO);
        let p_scalar = scalar_of(&mut rng);
        let (pa, _) = mul_base(&p_scalar).to_affine();
        let pref = of_affine(&pa);
        for (i, k) in ks.iter().enumerate() {
            let kb = BigUint::from_bytes_be(&k.to_bytes());
            assert_eq!(of_proj(&mul_base(k)), ref_mul(&kb, &ref_g()), "mul_base {i}");
            assert_eq!(of_jac(&mul_ct(k, &pa)), ref_mul(&kb, &pref), "mul_ct {i}");
            let u2 = ks[(i + 3) % ks.len()];
            let u2b = BigUint::from_bytes_be(&u2.to_bytes());
            let want = ref_add(&ref_mul(&kb, &ref_g()), &ref_mul(&u2b, &pref));
            assert_eq!(of_jac(&double_mul_vartime(k, &u2, &pa)), want, "double_mul {i}");
            // x mod n comparison.
            if let Some((x, _)) = &want {
                let r = Scalar::from_bytes_reduced(&{
                    let mut b = [0u8; 32];
                    let xb = x.to_bytes_be();
                    b[32 - xb.len()..].copy_from_slice(&xb);
                    b
                });
                assert!(double_mul_vartime(k, &u2, &pa).x_equals_mod_n_vartime(&r));
                assert!(!double_mul_vartime(k, &u2, &pa).x_equals_mod_n_vartime(&r.add(&Scalar::ONE)));
            }
        }
        let _ = n;
    }

    /// The digits sum to the value, are odd and below 2^(w−1) in size, and no two non-zero digits lie within w
    /// positions of each other: together these define the width-w NAF uniquely.
    #[test]
    fn wnaf_reconstructs() {
        let mut rng = Xs(0x6e0_0003);
        let edges = [
            [0u64, 0, 0, 0],
            [1, 0, 0, 0],
            [u64::MAX, 0, 0, 0],
            [u64::MAX, u64::MAX, 0, 0],
            [0, 0, 1, 0],
            [u64::MAX, u64::MAX, 1, 0],
            [u64::MAX, u64::MAX, 3, 0],
            [0x5555_5555_5555_5555, 0xaaaa_aaaa_aaaa_aaaa, 2, 0],
        ];
        for w in [2u32, 3, 4, 5, 8, WINDOW_P, WINDOW_G, 16] {
            let random = (0..200).map(|_| [rng.next(), rng.next(), rng.next() & 3, 0]);
            for k in edges.into_iter().chain(random) {
                let naf = wnaf(&k, w);
                let mut acc = num_bigint::BigInt::from(0);
                let mut last_set: Option<usize> = None;
                for i in (0..NAF_LEN).rev() {
                    acc = acc * 2 + naf[i];
                    assert!(naf[i] == 0 || (naf[i] % 2 != 0 && naf[i].unsigned_abs() < (1 << (w - 1))));
                    if naf[i] != 0 {
                        if let Some(j) = last_set {
                            assert!(j - i >= w as usize, "w {w}: non-zero digits at {i} and {j} in {k:x?}");
                        }
                        last_set = Some(i);
                    }
                }
                assert_eq!(acc, num_bigint::BigInt::from(super::super::field::tests::big(&k)), "w {w}, {k:x?}");
            }
        }
    }
}
