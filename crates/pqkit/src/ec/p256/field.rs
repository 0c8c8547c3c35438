//! Arithmetic modulo a 256-bit odd modulus in four little-endian 64-bit limbs, Montgomery form (R = 2^256):
//! the portable reference, in `const fn` so that the compiler can build the tables with it. The field
//! GF(p), p = 2^256 − 2^224 + 2^192 + 2^96 − 1 ([`Fe`]), and the scalars modulo n ([`super::scalar`]) are
//! both instances.
//!
//! ## Constant time
//! No branch and no memory index depends on a value: carries and the final conditional subtraction are
//! folded by masks. Values are always fully reduced (below the modulus), so equality is limb equality.

/// A 256-bit modulus with its Montgomery constants.
pub(crate) struct Modulus {
    /// The modulus m, little-endian limbs.
    pub(crate) m: [u64; 4],
    /// −m⁻¹ mod 2^64.
    pub(crate) minv: u64,
    /// R mod m (the Montgomery form of 1).
    pub(crate) r: [u64; 4],
    /// R² mod m (converts into Montgomery form).
    pub(crate) r2: [u64; 4],
}

impl Modulus {
    /// The constants of the odd modulus `m`, computed at compile time.
    pub(crate) const fn new(m: [u64; 4]) -> Modulus {
        // Newton's iteration for m⁻¹ mod 2^64: each step doubles the correct low bits.
        let mut inv: u64 = 1;
        let mut i = 0;
        while i < 7 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(m[0].wrapping_mul(inv)));
            i += 1;
        }
        let minv = inv.wrapping_neg();
        // R mod m = 2^256 − m when m > 2^255 (both our moduli); general: reduce 2^256 − m once more.
        let (neg, _) = sbb4(&[0; 4], &m);
        let r = sub_if_ge(&neg, 0, &m);
        // R² mod m: R doubled 256 times.
        let mut r2 = r;
        let mut k = 0;
        while k < 256 {
            r2 = add_mod(&r2, &r2, &m);
            k += 1;
        }
        Modulus { m, minv, r, r2 }
    }
}

/// a − b and the borrow (0 or 1).
#[inline(always)]
pub(crate) const fn sbb4(a: &[u64; 4], b: &[u64; 4]) -> ([u64; 4], u64) {
    let mut r = [0u64; 4];
    let mut borrow = 0u64;
    let mut i = 0;
    while i < 4 {
        let (d1, b1) = a[i].overflowing_sub(b[i]);
        let (d2, b2) = d1.overflowing_sub(borrow);
        r[i] = d2;
        borrow = (b1 | b2) as u64;
        i += 1;
    }
    (r, borrow)
}

/// a + b and the carry (0 or 1).
#[inline(always)]
pub(crate) const fn adc4(a: &[u64; 4], b: &[u64; 4]) -> ([u64; 4], u64) {
    let mut r = [0u64; 4];
    let mut carry = 0u64;
    let mut i = 0;
    while i < 4 {
        let (s1, c1) = a[i].overflowing_add(b[i]);
        let (s2, c2) = s1.overflowing_add(carry);
        r[i] = s2;
        carry = (c1 | c2) as u64;
        i += 1;
    }
    (r, carry)
}

/// The value `hi·2^256 + a` minus m if that is at least m (for values below 2m), by mask.
#[inline(always)]
pub(crate) const fn sub_if_ge(a: &[u64; 4], hi: u64, m: &[u64; 4]) -> [u64; 4] {
    let (d, borrow) = sbb4(a, m);
    // Keep a when the subtraction borrowed and there was no high word.
    // The barrier stops LLVM from turning the mask into a branch (valgrind ct job, docs/hardening.md: it
    // emitted `je` here inside the field inversion).
    let keep = core::hint::black_box((borrow & !hi & 1).wrapping_neg());
    let mut r = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        r[i] = (a[i] & keep) | (d[i] & !keep);
        i += 1;
    }
    r
}

/// a + b mod m for a, b below m.
#[inline(always)]
pub(crate) const fn add_mod(a: &[u64; 4], b: &[u64; 4], m: &[u64; 4]) -> [u64; 4] {
    let (s, c) = adc4(a, b);
    sub_if_ge(&s, c, m)
}

/// a − b mod m for a, b below m.
#[inline(always)]
pub(crate) const fn sub_mod(a: &[u64; 4], b: &[u64; 4], m: &[u64; 4]) -> [u64; 4] {
    let (d, borrow) = sbb4(a, b);
    let mask = borrow.wrapping_neg();
    let mm = [m[0] & mask, m[1] & mask, m[2] & mask, m[3] & mask];
    adc4(&d, &mm).0
}

/// a·b·R⁻¹ mod m (CIOS Montgomery multiplication) for a, b below m.
#[inline(always)]
pub(crate) const fn mont_mul(a: &[u64; 4], b: &[u64; 4], md: &Modulus) -> [u64; 4] {
    let m = &md.m;
    let mut t = [0u64; 6];
    let mut i = 0;
    while i < 4 {
        // t += a·b[i]
        let mut c = 0u64;
        let mut j = 0;
        while j < 4 {
            let uv = t[j] as u128 + (a[j] as u128) * (b[i] as u128) + c as u128;
            t[j] = uv as u64;
            c = (uv >> 64) as u64;
            j += 1;
        }
        let uv = t[4] as u128 + c as u128;
        t[4] = uv as u64;
        t[5] = (uv >> 64) as u64;
        // t = (t + q·m) / 2^64 with q = t[0]·(−m⁻¹).
        let q = t[0].wrapping_mul(md.minv);
        let uv = t[0] as u128 + (q as u128) * (m[0] as u128);
        let mut c = (uv >> 64) as u64;
        let mut j = 1;
        while j < 4 {
            let uv = t[j] as u128 + (q as u128) * (m[j] as u128) + c as u128;
            t[j - 1] = uv as u64;
            c = (uv >> 64) as u64;
            j += 1;
        }
        let uv = t[4] as u128 + c as u128;
        t[3] = uv as u64;
        t[4] = t[5] + (uv >> 64) as u64;
        i += 1;
    }
    sub_if_ge(&[t[0], t[1], t[2], t[3]], t[4], m)
}

/// Big-endian bytes to little-endian limbs.
#[inline]
pub(crate) const fn limbs_from_be(b: &[u8; 32]) -> [u64; 4] {
    let mut w = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        let mut j = 0;
        while j < 8 {
            w[3 - i] = (w[3 - i] << 8) | b[8 * i + j] as u64;
            j += 1;
        }
        i += 1;
    }
    w
}

/// Little-endian limbs to big-endian bytes.
#[inline]
pub(crate) const fn limbs_to_be(w: &[u64; 4]) -> [u8; 32] {
    let mut b = [0u8; 32];
    let mut i = 0;
    while i < 4 {
        let x = w[3 - i].to_be_bytes();
        let mut j = 0;
        while j < 8 {
            b[8 * i + j] = x[j];
            j += 1;
        }
        i += 1;
    }
    b
}

/// 64 hexadecimal digits (big-endian) as limbs, at compile time.
pub(crate) const fn hex_limbs(s: &str) -> [u64; 4] {
    let s = s.as_bytes();
    assert!(s.len() == 64);
    let mut w = [0u64; 4];
    let mut i = 0;
    while i < 64 {
        let c = s[i];
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => panic!("not a hex digit"),
        } as u64;
        let limb = 3 - i / 16;
        w[limb] = (w[limb] << 4) | v;
        i += 1;
    }
    w
}

/// All-ones if the limbs are equal, else zero (constant time).
#[inline(always)]
pub(crate) fn eq_mask(a: &[u64; 4], b: &[u64; 4]) -> u64 {
    let d = (a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]);
    // d == 0 → top bit of (d | −d) is 0.
    (((d | d.wrapping_neg()) >> 63) ^ 1).wrapping_neg()
}

/// `a` where mask is all ones, `b` where it is zero.
#[inline(always)]
pub(crate) fn select(mask: u64, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    // The barrier hides that the mask is 0 or all ones: otherwise LLVM compiles this into a choice of pointer
    // (cmov) and one load, whose address then depends on the mask (valgrind ct job, docs/hardening.md: the
    // base-point table scan loaded only the selected entry).
    let mask = core::hint::black_box(mask);
    [
        b[0] ^ (mask & (a[0] ^ b[0])),
        b[1] ^ (mask & (a[1] ^ b[1])),
        b[2] ^ (mask & (a[2] ^ b[2])),
        b[3] ^ (mask & (a[3] ^ b[3])),
    ]
}

// ---- the field GF(p) ----

/// p = 2^256 − 2^224 + 2^192 + 2^96 − 1.
pub(crate) const P: Modulus =
    Modulus::new(hex_limbs("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"));

/// p in the safegcd inversion's limbs.
pub(crate) const P62: super::safegcd::Mod62 = super::safegcd::Mod62::new(&P.m);

/// R³ mod p (R = 2^256): a Montgomery product with it turns (a·R)⁻¹ into a⁻¹·R.
pub(crate) const R3: Fe = Fe(mont_mul(&P.r2, &P.r2, &P));

/// A field element in Montgomery form (a·R mod p), fully reduced.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Fe(pub(crate) [u64; 4]);

impl Fe {
    pub(crate) const ZERO: Fe = Fe([0; 4]);
    pub(crate) const ONE: Fe = Fe(P.r);

    /// The element with this canonical value (below p), at compile time.
    pub(crate) const fn from_canonical_limbs(w: [u64; 4]) -> Fe {
        Fe(mont_mul(&w, &P.r2, &P))
    }

    /// The element of 64 hex digits, at compile time.
    pub(crate) const fn from_hex(s: &str) -> Fe {
        Fe::from_canonical_limbs(hex_limbs(s))
    }

    /// The element with these big-endian bytes, if they are below p.
    pub(crate) fn from_be_bytes(b: &[u8; 32]) -> Option<Fe> {
        let w = limbs_from_be(b);
        let (_, borrow) = sbb4(&w, &P.m);
        if borrow == 1 { Some(Fe::from_canonical_limbs(w)) } else { None }
    }

    /// The canonical value, little-endian limbs.
    #[inline]
    pub(crate) const fn to_canonical_limbs(self) -> [u64; 4] {
        mont_mul(&self.0, &[1, 0, 0, 0], &P)
    }

    /// The canonical big-endian encoding.
    #[inline]
    pub(crate) const fn to_be_bytes(self) -> [u8; 32] {
        limbs_to_be(&self.to_canonical_limbs())
    }

    #[inline(always)]
    pub(crate) const fn add(&self, b: &Fe) -> Fe {
        Fe(add_mod(&self.0, &b.0, &P.m))
    }

    #[inline(always)]
    pub(crate) const fn sub(&self, b: &Fe) -> Fe {
        Fe(sub_mod(&self.0, &b.0, &P.m))
    }

    #[inline(always)]
    pub(crate) const fn neg(&self) -> Fe {
        Fe(sub_mod(&[0; 4], &self.0, &P.m))
    }

    /// The portable product (other backends have their own; see [`FieldArith`]).
    #[cfg(test)]
    #[inline(always)]
    pub(crate) const fn mul_soft(&self, b: &Fe) -> Fe {
        Fe(mont_mul(&self.0, &b.0, &P))
    }

    /// All ones if zero.
    #[inline(always)]
    pub(crate) fn is_zero_mask(&self) -> u64 {
        eq_mask(&self.0, &[0; 4])
    }

    #[inline(always)]
    pub(crate) fn select(mask: u64, a: &Fe, b: &Fe) -> Fe {
        Fe(select(mask, &a.0, &b.0))
    }
}

/// The multiplication of one backend: the only field operations that differ between backends. The point layer
/// adds the table scan ([`super::point::Arith`]).
pub(crate) trait FieldArith: Copy + 'static {
    /// a·b.
    fn mul(a: &Fe, b: &Fe) -> Fe;
    /// a².
    fn sqr(a: &Fe) -> Fe;
    /// a + b (the portable one unless a backend has its own).
    #[inline(always)]
    fn add(a: &Fe, b: &Fe) -> Fe {
        a.add(b)
    }
    /// a − b (the portable one unless a backend has its own).
    #[inline(always)]
    fn sub(a: &Fe, b: &Fe) -> Fe {
        a.sub(b)
    }

    /// ca·a − cb·b − cc·c for small constants ([`lincomb_p`]; backends may have their own).
    #[inline(always)]
    fn lincomb(a: &Fe, ca: u64, b: &Fe, cb: u64, c: &Fe, cc: u64) -> Fe {
        Fe(lincomb_p(&a.0, ca, &b.0, cb, &c.0, cc))
    }

    /// a^(2^k).
    #[inline(always)]
    fn sqr_n(a: &Fe, k: usize) -> Fe {
        let mut r = *a;
        for _ in 0..k {
            r = Self::sqr(&r);
        }
        r
    }

    /// a⁻¹ (0 for 0), constant time: the safegcd inversion of the Montgomery form a·R gives a⁻¹·R⁻¹, and
    /// one product with R³ brings it to a⁻¹·R. About a fifth of the cost of the Fermat power a^(p − 2)
    /// (255 squarings), which it replaced.
    #[inline(always)]
    fn invert(a: &Fe) -> Fe {
        let inv = super::safegcd::invert(&a.0, &P62);
        Self::mul(&Fe(inv), &R3)
    }

    /// a⁻¹ (0 for 0) for public values only: the variable-time safegcd, then the product with R³.
    #[inline(always)]
    fn invert_vartime(a: &Fe) -> Fe {
        let inv = super::safegcd::invert_vartime(&a.0, &P62);
        Self::mul(&Fe(inv), &R3)
    }

    /// A square root of a, if a is a square: a^((p + 1)/4) (p ≡ 3 mod 4), checked by squaring. Public
    /// inputs (point decompression); the exponent is public, so this is constant time anyway.
    /// (p + 1)/4 = 3fffffffc0000000400000000000000000000000400000000000000000000000.
    fn sqrt(a: &Fe) -> Option<Fe> {
        let x2 = Self::mul(&Self::sqr(a), a);
        let x4 = Self::mul(&Self::sqr_n(&x2, 2), &x2);
        let x8 = Self::mul(&Self::sqr_n(&x4, 4), &x4);
        let x16 = Self::mul(&Self::sqr_n(&x8, 8), &x8);
        let x32 = Self::mul(&Self::sqr_n(&x16, 16), &x16);
        // Exponent bits from the top: 32 ones, 31 zeros and a one, then 95 zeros and a one, then 94 zeros.
        let mut t = Self::mul(&Self::sqr_n(&x32, 32), a);
        t = Self::mul(&Self::sqr_n(&t, 96), a);
        t = Self::sqr_n(&t, 94);
        if Self::sqr(&t) == *a { Some(t) } else { None }
    }
}

// ---- the product modulo p, specialised to its shape ----
//
// p = 2^256 − 2^224 + 2^192 + 2^96 − 1 has p ≡ −1 mod 2^64, so −p⁻¹ ≡ 1 and each Montgomery round's factor q
// is the low word itself. Adding q·p then needs one multiplication, not four: with p's words
// (2^64 − 1, 2^32 − 1, 0, p₃), t₀ + q·(2^64 − 1) = q·2^64 (t₀ = q), so the next word receives
// q + q·(2^32 − 1) = q·2^32, that is q << 32 and q >> 32 one word higher; word 2 of p is zero; and word 3
// takes the one product q·p₃.

/// The top word of p.
const P3: u64 = 0xffff_ffff_0000_0001;

/// a + b + c as (sum, carry) with c ∈ {0, 1}.
#[inline(always)]
fn adc(a: u64, b: u64, c: u64) -> (u64, u64) {
    let s = a as u128 + b as u128 + c as u128;
    (s as u64, (s >> 64) as u64)
}

/// The Montgomery reduction of the 512-bit t modulo p: t·2^−256 mod p, for t < p·2^256.
#[inline(always)]
fn reduce_p(t: &[u64; 8]) -> [u64; 4] {
    let mut t = *t;
    // The carry out of word i + 4 of the previous round, due into word i + 5.
    let mut e = 0u64;
    let mut i = 0;
    while i < 4 {
        let q = t[i];
        let (s1, c) = adc(t[i + 1], q << 32, 0);
        let (s2, c) = adc(t[i + 2], q >> 32, c);
        let w = t[i + 3] as u128 + (q as u128) * (P3 as u128) + c as u128;
        let (s4, c4) = adc(t[i + 4], (w >> 64) as u64, e);
        t[i + 1] = s1;
        t[i + 2] = s2;
        t[i + 3] = w as u64;
        t[i + 4] = s4;
        e = c4;
        i += 1;
    }
    // (t + Q·p)/2^256 < 2p: one conditional subtraction.
    sub_if_ge(&[t[4], t[5], t[6], t[7]], e, &P.m)
}

/// The 512-bit product a·b (schoolbook, `u128`).
#[inline(always)]
fn wide_mul(a: &[u64; 4], b: &[u64; 4]) -> [u64; 8] {
    let mut t = [0u64; 8];
    let mut i = 0;
    while i < 4 {
        let mut c = 0u64;
        let mut j = 0;
        while j < 4 {
            let uv = t[i + j] as u128 + (a[j] as u128) * (b[i] as u128) + c as u128;
            t[i + j] = uv as u64;
            c = (uv >> 64) as u64;
            j += 1;
        }
        t[i + 4] = c;
        i += 1;
    }
    t
}

/// The 512-bit square a² (six cross products doubled, four squares).
#[inline(always)]
fn wide_sqr(a: &[u64; 4]) -> [u64; 8] {
    let mut t = [0u64; 9];
    let mut i = 0;
    while i < 3 {
        let mut c = 0u64;
        let mut j = i + 1;
        while j < 4 {
            let uv = t[i + j] as u128 + (a[i] as u128) * (a[j] as u128) + c as u128;
            t[i + j] = uv as u64;
            c = (uv >> 64) as u64;
            j += 1;
        }
        t[i + 4] = c;
        i += 1;
    }
    let mut k = 8;
    while k > 0 {
        t[k] = (t[k] << 1) | (t[k - 1] >> 63);
        k -= 1;
    }
    t[0] <<= 1;
    let mut c = 0u64;
    let mut i = 0;
    while i < 4 {
        let sq = (a[i] as u128) * (a[i] as u128);
        let lo = t[2 * i] as u128 + (sq as u64) as u128 + c as u128;
        t[2 * i] = lo as u64;
        let hi = t[2 * i + 1] as u128 + (sq >> 64) + (lo >> 64);
        t[2 * i + 1] = hi as u64;
        c = (hi >> 64) as u64;
        i += 1;
    }
    [t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]]
}

/// a·b·2^−256 mod p, the reduction specialised to p.
#[inline(always)]
pub(crate) fn mul_p(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    reduce_p(&wide_mul(a, b))
}

/// a²·2^−256 mod p, the reduction specialised to p.
#[inline(always)]
pub(crate) fn sqr_p(a: &[u64; 4]) -> [u64; 4] {
    reduce_p(&wide_sqr(a))
}

/// 2^256 − p = 2^224 − 2^192 − 2^96 + 1, the value of the word above 2^256 modulo p.
const R0: [u64; 4] = [1, 0xffff_ffff_0000_0000, u64::MAX, 0x0000_0000_ffff_fffe];

/// ca·a − cb·b − cc·c mod p for a, b, c below p and small constants (ca + cb + cc below 2^20), constant time.
///
/// The point formulas need a few such combinations per step (3t, α² − 8β, r² − j − 2v); one pass here
/// replaces the chain of modular additions and subtractions they would otherwise take. The value
/// V = ca·a + cb·(p − b) + cc·(p − c) is a five-word h·2^256 + L with h < 2^20. With q = h + 1, V − q·p =
/// L + q·(2^256 − p) − 2^256 = S − 2^256 for S = L + q·R0 (q·R0 < 2^245, so S < 2^257), and V − q·p lies in
/// [−p, 2^245): V − h·p = L + h·R0 ≥ 0. So the result is S mod 2^256 when S carries past 2^256 and
/// (S + p) mod 2^256 when it does not; the carry chooses p by mask, no branch.
#[inline(always)]
pub(crate) fn lincomb_p(a: &[u64; 4], ca: u64, b: &[u64; 4], cb: u64, c: &[u64; 4], cc: u64) -> [u64; 4] {
    let (nb, _) = sbb4(&P.m, b);
    let (nc, _) = sbb4(&P.m, c);
    let mut l = [0u64; 4];
    let mut carry = 0u128;
    for i in 0..4 {
        let t = (a[i] as u128) * (ca as u128) + (nb[i] as u128) * (cb as u128) + (nc[i] as u128) * (cc as u128) + carry;
        l[i] = t as u64;
        carry = t >> 64;
    }
    let q = carry as u64 + 1;
    let mut s = [0u64; 4];
    let mut k = 0u128;
    for i in 0..4 {
        let t = l[i] as u128 + (R0[i] as u128) * (q as u128) + k;
        s[i] = t as u64;
        k = t >> 64;
    }
    // k is 1 when S ≥ 2^256. The barrier keeps the mask a mask (see `select`).
    let add = core::hint::black_box((k as u64).wrapping_sub(1));
    let pm = [P.m[0] & add, P.m[1] & add, P.m[2] & add, P.m[3] & add];
    adc4(&s, &pm).0
}

/// The portable backend.
#[derive(Clone, Copy)]
pub(crate) struct Soft;

impl FieldArith for Soft {
    #[inline(always)]
    fn mul(a: &Fe, b: &Fe) -> Fe {
        Fe(mul_p(&a.0, &b.0))
    }
    #[inline(always)]
    fn sqr(a: &Fe) -> Fe {
        Fe(sqr_p(&a.0))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use super::*;
    use num_bigint::BigUint;

    /// A small deterministic generator for tests.
    pub(crate) struct Xs(pub(crate) u64);
    impl Xs {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        pub(crate) fn limbs(&mut self) -> [u64; 4] {
            [self.next(), self.next(), self.next(), self.next()]
        }
    }

    pub(crate) fn big(w: &[u64; 4]) -> BigUint {
        BigUint::from_bytes_be(&limbs_to_be(w))
    }

    pub(crate) fn edge_values(m: &[u64; 4], rng: &mut Xs) -> std::vec::Vec<[u64; 4]> {
        let mb = big(m);
        let mut v = std::vec::Vec::new();
        for k in [0u32, 1, 2] {
            v.push(limbs_from_big(&BigUint::from(k)));
            v.push(limbs_from_big(&(&mb - 1u32 - k)));
        }
        let mx = u64::MAX;
        for c in 0..256u32 {
            let pick = |k: u32| [0, 1, 1 << 63, mx][((c >> (2 * k)) & 3) as usize];
            let w = [pick(0), pick(1), pick(2), pick(3)];
            v.push(limbs_from_big(&(big(&w) % &mb)));
        }
        for _ in 0..300 {
            v.push(limbs_from_big(&(big(&rng.limbs()) % &mb)));
        }
        v
    }

    pub(crate) fn limbs_from_big(b: &BigUint) -> [u64; 4] {
        let bytes = b.to_bytes_be();
        let mut out = [0u8; 32];
        out[32 - bytes.len()..].copy_from_slice(&bytes);
        limbs_from_be(&out)
    }

    pub(crate) fn check_arith<A: FieldArith>() {
        let p = big(&P.m);
        let r: BigUint = BigUint::from(1u8) << 256usize;
        let rinv = r.modpow(&(&p - 2u32), &p);
        let mut rng = Xs(0x9256_0001);
        let vals = edge_values(&P.m, &mut rng);
        for (i, wa) in vals.iter().enumerate() {
            let wb = &vals[(i * 7 + 3) % vals.len()];
            let (a, b) = (Fe::from_canonical_limbs(*wa), Fe::from_canonical_limbs(*wb));
            let (va, vb) = (big(wa), big(wb));
            assert_eq!(big(&a.0), (&va * &r) % &p, "montgomery form {i}");
            assert_eq!(big(&a.to_canonical_limbs()), va);
            assert_eq!(big(&A::mul(&a, &b).to_canonical_limbs()), (&va * &vb) % &p, "mul {i}");
            assert_eq!(big(&A::sqr(&a).to_canonical_limbs()), (&va * &va) % &p, "sqr {i}");
            assert_eq!(big(&a.add(&b).to_canonical_limbs()), (&va + &vb) % &p, "add {i}");
            assert_eq!(big(&a.sub(&b).to_canonical_limbs()), (&va + &p - &vb) % &p, "sub {i}");
            assert_eq!(big(&a.neg().to_canonical_limbs()), (&p - &va) % &p, "neg {i}");
            assert_eq!(A::add(&a, &b), a.add(&b), "backend add {i}");
            assert_eq!(A::sub(&a, &b), a.sub(&b), "backend sub {i}");
            assert_eq!(A::sub(&b, &a), b.sub(&a), "backend sub {i}");
            assert_eq!(A::add(&a, &a), a.add(&a), "backend double {i}");
            // The fused combinations, on the limbs (linear, so the Montgomery form does not matter).
            let wc = &vals[(i * 11 + 5) % vals.len()];
            let vc = big(wc);
            for (ca, cb, cc) in
                [(3, 0, 0), (1, 8, 0), (4, 1, 0), (1, 1, 2), (2, 2, 0), (1, 1, 1), (0, 0, 0), (31, 15, 15)]
            {
                let got = A::lincomb(&Fe(*wa), ca, &Fe(*wb), cb, &Fe(*wc), cc);
                let want = (&va * ca + (&p - &vb) * cb + (&p - &vc) * cc) % &p;
                assert_eq!(big(&got.0), want, "lincomb {ca} {cb} {cc} {i}");
            }
            // Raw Montgomery products of arbitrary reduced limbs.
            let raw = Fe(*wa);
            assert_eq!(big(&A::mul(&raw, &Fe(*wb)).0), (&va * &vb * &rinv) % &p, "raw mul {i}");
            if i % 8 == 0 {
                assert_eq!(big(&A::invert(&a).to_canonical_limbs()), va.modpow(&(&p - 2u32), &p), "inv {i}");
                assert_eq!(A::invert_vartime(&a), A::invert(&a), "inv vartime {i}");
                let sq = A::sqr(&a);
                let root = A::sqrt(&sq).expect("a square has a root");
                assert_eq!(A::sqr(&root), sq);
                let e = (&p + 1u32) >> 2;
                let is_sq = va.modpow(&((&p - 1u32) >> 1), &p) <= BigUint::from(1u8);
                assert_eq!(A::sqrt(&a).is_some(), is_sq, "sqrt {i}");
                if let Some(s) = A::sqrt(&a) {
                    assert_eq!(big(&s.to_canonical_limbs()), va.modpow(&e, &p));
                }
            }
        }
    }

    /// The specialised reduction agrees with the generic Montgomery product, including near 2^256 and p.
    #[test]
    fn specialised_matches_generic() {
        let mut rng = Xs(0x9256_0003);
        let vals = edge_values(&P.m, &mut rng);
        for (i, a) in vals.iter().enumerate() {
            for b in vals.iter().skip(i % 17).step_by(17) {
                assert_eq!(mul_p(a, b), mont_mul(a, b, &P), "mul {i}");
            }
            assert_eq!(sqr_p(a), mont_mul(a, a, &P), "sqr {i}");
        }
    }

    #[test]
    fn soft_matches_bigint() {
        check_arith::<Soft>();
    }

    #[test]
    fn constants() {
        let p = big(&P.m);
        let r: BigUint = BigUint::from(1u8) << 256usize;
        assert_eq!(big(&P.r), &r % &p);
        assert_eq!(big(&P.r2), (&r * &r) % &p);
        assert_eq!(P.m[0].wrapping_mul(P.minv), u64::MAX); // m·(−m⁻¹) = −1
        assert_eq!(
            p,
            (BigUint::from(1u8) << 256usize) - (BigUint::from(1u8) << 224usize)
                + (BigUint::from(1u8) << 192usize)
                + (BigUint::from(1u8) << 96usize)
                - 1u32
        );
        let mut b = [0u8; 32];
        assert_eq!(Fe::from_be_bytes(&limbs_to_be(&P.m)), None);
        b[31] = 5;
        assert_eq!(Fe::from_be_bytes(&b).unwrap().to_be_bytes(), b);
    }
}
