//! Integers modulo the group order n of secp256k1 (n = 2^256 − 0x14551231950b75fc4402da1732fc9bebf).
//!
//! A [`Scalar`] is four little-endian 64-bit limbs holding a value below n. Products use Montgomery
//! multiplication with R = 2^256 (word by word, the CIOS order): `mont_mul(a, b) = a·b·R^-1 mod n`, and plain
//! products multiply once more by R² mod n. The constants (−n^-1 mod 2^64, R² mod n) are computed by
//! `const fn` from n itself.
//!
//! Everything here is constant time (fixed loops, carries by shifts, the final subtraction of n by mask),
//! because signing and ECDH run it on secret keys and nonces. That includes [`Scalar::invert`] (Fermat's
//! little theorem with a fixed window over the public exponent n − 2) and the GLV decomposition
//! [`Scalar::split_glv`].

use super::field::{Mask, mask_from_bit, mask_is_zero_u64, sub4};

/// n, little-endian limbs.
pub(crate) const N: [u64; 4] = [0xBFD2_5E8C_D036_4141, 0xBAAE_DCE6_AF48_A03B, 0xFFFF_FFFF_FFFF_FFFE, u64::MAX];

/// ⌊n/2⌋: a scalar above it is "high" (its negation is smaller).
const N_HALF: [u64; 4] = [0xDFE9_2F46_681B_20A0, 0x5D57_6E73_57A4_501D, 0xFFFF_FFFF_FFFF_FFFF, 0x7FFF_FFFF_FFFF_FFFF];

/// −n^-1 mod 2^64, by Newton's iteration x ← x(2 − n·x).
const NINV: u64 = {
    let mut inv: u64 = 1;
    let mut i = 0;
    while i < 7 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(N[0].wrapping_mul(inv)));
        i += 1;
    }
    inv.wrapping_neg()
};

/// 2^k mod n, by doubling.
const fn pow2_mod_n(k: u32) -> [u64; 4] {
    let mut x = [1u64, 0, 0, 0];
    let mut i = 0;
    while i < k {
        let top = x[3] >> 63;
        let mut j = 3;
        while j > 0 {
            x[j] = (x[j] << 1) | (x[j - 1] >> 63);
            j -= 1;
        }
        x[0] <<= 1;
        // x < 2n (with the bit `top` above the four limbs): subtract n once if x ≥ n.
        let (d, borrow) = sub4(&x, &N);
        if top == 1 || borrow == 0 {
            x = d;
        }
        i += 1;
    }
    x
}

/// R² mod n, R = 2^256.
const R2: [u64; 4] = pow2_mod_n(512);
/// R mod n (1 in the Montgomery domain).
const R1: [u64; 4] = pow2_mod_n(256);

/// The GLV endomorphism's eigenvalue λ (λ³ = 1 mod n): λ·(x, y) = (β·x, y).
pub(crate) const LAMBDA: Scalar =
    Scalar::from_be_const(&hex32("5363ad4cc05c30e0a5261c028812645a122e22ea20816678df02967c1b23bd72"));
/// −b1 and −b2 of the short lattice basis {(a1, b1), (a2, b2)} of {(x, y) : x + y·λ = 0 mod n}, reduced mod n.
const MINUS_B1: Scalar =
    Scalar::from_be_const(&hex32("00000000000000000000000000000000e4437ed6010e88286f547fa90abfe4c3"));
const MINUS_B2: Scalar =
    Scalar::from_be_const(&hex32("fffffffffffffffffffffffffffffffe8a280ac50774346dd765cda83db1562c"));
/// round(2^384·b2/n) and round(2^384·(−b1)/n).
const G1: [u64; 4] =
    Scalar::from_be_const(&hex32("3086d221a7d46bcde86c90e49284eb153daa8a1471e8ca7fe893209a45dbb031")).0;
const G2: [u64; 4] =
    Scalar::from_be_const(&hex32("e4437ed6010e88286f547fa90abfe4c4221208ac9df506c61571b4ae8ac47f71")).0;

/// 64 hex digits as 32 bytes, at compile time.
pub(crate) const fn hex32(s: &str) -> [u8; 32] {
    let s = s.as_bytes();
    assert!(s.len() == 64);
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 64 {
        let c = s[i];
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => panic!("not hex"),
        };
        out[i / 2] |= v << (4 * (1 - i % 2));
        i += 1;
    }
    out
}

#[inline(always)]
const fn m(a: u64, b: u64) -> u128 {
    (a as u128) * (b as u128)
}

/// `x − n` if `x` (with the extra top bit `hi`) is at least n, else `x`; constant time.
#[inline(always)]
fn sub_n_if_ge(x: [u64; 4], hi: u64) -> [u64; 4] {
    let (d, borrow) = sub4(&x, &N);
    // Keep d when there was a top bit or no borrow.
    let take = mask_from_bit(hi | (borrow ^ 1));
    let mut r = [0u64; 4];
    for i in 0..4 {
        r[i] = (d[i] & take) | (x[i] & !take);
    }
    r
}

/// `a·b·2^-256 mod n` for `a, b < n` (CIOS Montgomery multiplication).
#[inline(always)]
fn mont_mul(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let mut t = [0u64; 6];
    for &ai in a.iter() {
        let mut carry = 0u128;
        for j in 0..4 {
            let s = t[j] as u128 + m(ai, b[j]) + carry;
            t[j] = s as u64;
            carry = s >> 64;
        }
        let s = t[4] as u128 + carry;
        t[4] = s as u64;
        t[5] = (s >> 64) as u64;
        let q = t[0].wrapping_mul(NINV);
        let s = t[0] as u128 + m(q, N[0]);
        let mut carry = s >> 64;
        for j in 1..4 {
            let s = t[j] as u128 + m(q, N[j]) + carry;
            t[j - 1] = s as u64;
            carry = s >> 64;
        }
        let s = t[4] as u128 + carry;
        t[3] = s as u64;
        t[4] = t[5] + (s >> 64) as u64;
    }
    sub_n_if_ge([t[0], t[1], t[2], t[3]], t[4])
}

/// An integer modulo n, below n (crate-internal form; public only as [`PrimeCurve`](crate::ec::weierstrass::PrimeCurve)'s
/// associated type). Zeroize it when it holds a secret.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Scalar(pub(crate) [u64; 4]);

impl Scalar {
    pub(crate) const ZERO: Scalar = Scalar([0; 4]);
    #[cfg(test)]
    pub(crate) const ONE: Scalar = Scalar([1, 0, 0, 0]);

    /// A constant from big-endian bytes (must be below n; checked at compile time).
    pub(crate) const fn from_be_const(b: &[u8; 32]) -> Scalar {
        let w = super::field::Fe::words_be(b);
        let (_, borrow) = sub4(&w, &N);
        assert!(borrow == 1, "constant not below n");
        Scalar(w)
    }

    /// The scalar of a 32-byte big-endian string reduced modulo n (the string is below 2^256 < 2n, so one
    /// conditional subtraction). Used for hashes (ECDSA's z, BIP-340's e).
    #[inline]
    pub(crate) fn from_bytes_reduced(b: &[u8; 32]) -> Scalar {
        Scalar(sub_n_if_ge(super::field::Fe::words_be(b), 0))
    }

    /// The scalar of a 32-byte big-endian string, with an all-ones mask when it was below n (canonical);
    /// when it was not, the value returned is reduced. Constant time.
    #[inline]
    pub(crate) fn from_bytes_checked(b: &[u8; 32]) -> (Scalar, Mask) {
        let w = super::field::Fe::words_be(b);
        let (_, borrow) = sub4(&w, &N);
        (Scalar(sub_n_if_ge(w, 0)), mask_from_bit(borrow))
    }

    /// The scalar of a 32-byte big-endian string, `None` unless it is below n (public data).
    #[inline]
    pub(crate) fn from_bytes_vartime(b: &[u8; 32]) -> Option<Scalar> {
        let (s, ok) = Self::from_bytes_checked(b);
        if ok == 0 { None } else { Some(s) }
    }

    /// The 32-byte big-endian encoding.
    #[inline]
    pub(crate) fn to_bytes(self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for i in 0..4 {
            out[8 * i..8 * i + 8].copy_from_slice(&self.0[3 - i].to_be_bytes());
        }
        out
    }

    /// `self + rhs`.
    #[inline]
    pub(crate) fn add(&self, rhs: &Scalar) -> Scalar {
        let mut r = [0u64; 4];
        let mut carry = 0u128;
        for ((o, &a), &b) in r.iter_mut().zip(&self.0).zip(&rhs.0) {
            let t = a as u128 + b as u128 + carry;
            *o = t as u64;
            carry = t >> 64;
        }
        Scalar(sub_n_if_ge(r, carry as u64))
    }

    /// `self − rhs`.
    #[inline]
    pub(crate) fn sub(&self, rhs: &Scalar) -> Scalar {
        let (d, borrow) = sub4(&self.0, &rhs.0);
        // A borrow: add n back.
        let mask = mask_from_bit(borrow);
        let mut r = [0u64; 4];
        let mut carry = 0u128;
        for i in 0..4 {
            let t = d[i] as u128 + (N[i] & mask) as u128 + carry;
            r[i] = t as u64;
            carry = t >> 64;
        }
        Scalar(r)
    }

    /// `−self`.
    #[inline]
    pub(crate) fn neg(&self) -> Scalar {
        Scalar::ZERO.sub(self)
    }

    /// `−self` where `mask` is all ones, `self` where it is zero.
    #[inline]
    pub(crate) fn cneg(&self, mask: Mask) -> Scalar {
        Scalar::select(&self.neg(), self, mask)
    }

    /// `self · rhs`.
    #[inline]
    pub(crate) fn mul(&self, rhs: &Scalar) -> Scalar {
        Scalar(mont_mul(&mont_mul(&self.0, &rhs.0), &R2))
    }

    /// `self^-1` (0 maps to 0), by Fermat: `self^(n−2)`, in constant time (the window indices are digits of
    /// the public exponent, never of `self`).
    pub(crate) fn invert(&self) -> Scalar {
        let x = mont_mul(&self.0, &R2);
        let mut table = [R1; 16];
        for i in 1..16 {
            table[i] = mont_mul(&table[i - 1], &x);
        }
        let e = Scalar::ZERO.sub(&Scalar([2, 0, 0, 0])).0; // n − 2
        let mut r = R1;
        for i in (0..64).rev() {
            for _ in 0..4 {
                r = mont_mul(&r, &r);
            }
            let digit = ((e[i / 16] >> (4 * (i % 16))) & 15) as usize;
            r = mont_mul(&r, &table[digit]);
        }
        Scalar(mont_mul(&r, &[1, 0, 0, 0]))
    }

    /// `self^-1` (0 maps to 0) in variable time, for public values only ([`crate::ec::safegcd`]).
    pub(crate) fn invert_vartime(&self) -> Scalar {
        const N62: crate::ec::safegcd::Mod62 = crate::ec::safegcd::Mod62::new(&N);
        Scalar(crate::ec::safegcd::invert_vartime_bitwise(&self.0, &N62))
    }

    /// `a` where `mask` is all ones, `b` where it is zero.
    #[inline(always)]
    pub(crate) fn select(a: &Scalar, b: &Scalar, mask: Mask) -> Scalar {
        let mut r = b.0;
        for (o, &x) in r.iter_mut().zip(&a.0) {
            *o ^= mask & (x ^ *o);
        }
        Scalar(r)
    }

    /// All ones if `self == 0`.
    #[inline]
    pub(crate) fn mask_is_zero(&self) -> Mask {
        mask_is_zero_u64(self.0[0] | self.0[1] | self.0[2] | self.0[3])
    }

    /// All ones if `self > n/2` (the "high" half, whose negation is smaller).
    #[inline]
    pub(crate) fn mask_is_high(&self) -> Mask {
        let (_, borrow) = sub4(&N_HALF, &self.0);
        mask_from_bit(borrow)
    }

    /// The GLV decomposition: `(k1, k2)` with `self = k1 + k2·λ (mod n)` and both `|k1|, |k2| < 2^128`, each
    /// given as a magnitude (a scalar below 2^128) and a negation mask (all ones when the value is −magnitude).
    /// Constant time.
    ///
    /// With the short basis {(a1, b1), (a2, b2)} of the lattice of pairs (x, y) with x + y·λ = 0 (mod n),
    /// c1 = round(b2·k/n) and c2 = round(−b1·k/n) are taken from the precomputed g1 = round(2^384·b2/n) and
    /// g2 = round(2^384·(−b1)/n) as round(k·g/2^384); then k2 = −c1·b1 − c2·b2 and k1 = k − k2·λ.
    pub(crate) fn split_glv(&self) -> ((Scalar, Mask), (Scalar, Mask)) {
        let c1 = Scalar(mul_shift_384(&self.0, &G1));
        let c2 = Scalar(mul_shift_384(&self.0, &G2));
        let k2 = c1.mul(&MINUS_B1).add(&c2.mul(&MINUS_B2));
        let k1 = self.sub(&k2.mul(&LAMBDA));
        let (n1, n2) = (k1.mask_is_high(), k2.mask_is_high());
        ((k1.cneg(n1), n1), (k2.cneg(n2), n2))
    }
}

/// round(a·b / 2^384) for 256-bit `a`, `b` (the result is below 2^128).
#[inline]
fn mul_shift_384(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let mut t = [0u64; 8];
    for i in 0..4 {
        let mut carry = 0u128;
        for j in 0..4 {
            let s = t[i + j] as u128 + m(a[i], b[j]) + carry;
            t[i + j] = s as u64;
            carry = s >> 64;
        }
        t[i + 4] = carry as u64;
    }
    let round = t[5] >> 63;
    let lo = t[6] as u128 + round as u128;
    let hi = t[7] as u128 + (lo >> 64);
    [lo as u64, hi as u64, 0, 0]
}

impl zeroize::Zeroize for Scalar {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::field::tests::{Xs, big, edge_words};
    use super::*;
    use num_bigint::BigUint;

    fn n() -> BigUint {
        big(&N)
    }

    #[test]
    fn constants() {
        let n = n();
        assert_eq!(big(&N_HALF), &n >> 1);
        assert_eq!(big(&R2), (BigUint::from(1u8) << 512) % &n);
        assert_eq!(big(&R1), (BigUint::from(1u8) << 256) % &n);
        assert_eq!(NINV.wrapping_mul(N[0]), u64::MAX);
        let lambda = big(&LAMBDA.0);
        assert_eq!(lambda.modpow(&BigUint::from(3u8), &n), BigUint::from(1u8));
        // a1 + b1·λ = 0 and a2 + b2·λ = 0 (mod n), with a1 = −(−b2)... check the basis through the constants.
        let a1 = BigUint::parse_bytes(b"3086d221a7d46bcde86c90e49284eb15", 16).unwrap();
        let a2 = BigUint::parse_bytes(b"114ca50f7a8e2f3f657c1108d9d44cfd8", 16).unwrap();
        let (mb1, mb2) = (big(&MINUS_B1.0), big(&MINUS_B2.0));
        assert_eq!((&a1 + &n - (&mb1 * &lambda) % &n) % &n, BigUint::from(0u8));
        assert_eq!((&a2 + &n - (&mb2 * &lambda) % &n) % &n, BigUint::from(0u8));
        assert_eq!(mb2, &n - &a1);
        let b2 = &a1;
        assert_eq!(big(&G1), ((b2 << 384u32) + (&n >> 1)) / &n);
        assert_eq!(big(&G2), ((&mb1 << 384u32) + (&n >> 1)) / &n);
    }

    #[test]
    fn scalar_matches_bigint() {
        let n = n();
        let mut words = edge_words(0x5ca1_0001);
        let mut rng = Xs(7);
        // n − 1, n/2, n/2 + 1, small values.
        let nm1 = big(&N) - 1u8;
        for v in [nm1.clone(), &n >> 1, (&n >> 1) + 1u8, BigUint::from(2u8)] {
            let mut w = [0u64; 4];
            for (i, d) in v.to_u64_digits().iter().enumerate() {
                w[i] = *d;
            }
            words.push(w);
        }
        for _ in 0..100 {
            words.push([rng.next(), rng.next(), 0, 0]);
        }
        for (i, wa) in words.iter().enumerate() {
            let wb = &words[(i * 5 + 1) % words.len()];
            let mut bytes = [0u8; 32];
            for k in 0..4 {
                bytes[32 - 8 * (k + 1)..32 - 8 * k].copy_from_slice(&wa[k].to_be_bytes());
            }
            let (a, ok) = Scalar::from_bytes_checked(&bytes);
            assert_eq!(ok == u64::MAX, big(wa) < n, "checked {i}");
            assert_eq!(Scalar::from_bytes_vartime(&bytes).is_some(), big(wa) < n);
            assert_eq!(big(&Scalar::from_bytes_reduced(&bytes).0), big(wa) % &n);
            let b = {
                let mut bb = [0u8; 32];
                for k in 0..4 {
                    bb[32 - 8 * (k + 1)..32 - 8 * k].copy_from_slice(&wb[k].to_be_bytes());
                }
                Scalar::from_bytes_reduced(&bb)
            };
            let (va, vb) = (big(&a.0), big(&b.0));
            assert_eq!(va, big(wa) % &n);
            assert_eq!(BigUint::from_bytes_be(&a.to_bytes()), va);
            assert_eq!(big(&a.add(&b).0), (&va + &vb) % &n, "add {i}");
            assert_eq!(big(&a.sub(&b).0), (&va + &n - &vb) % &n, "sub {i}");
            assert_eq!(big(&a.neg().0), (&n - &va) % &n, "neg {i}");
            assert_eq!(big(&a.mul(&b).0), (&va * &vb) % &n, "mul {i}");
            assert_eq!(big(&a.invert().0), va.modpow(&(&n - 2u8), &n), "invert {i}");
            assert!(a.invert_vartime() == a.invert(), "invert_vartime {i}");
            assert_eq!(a.mask_is_zero() == u64::MAX, va == BigUint::from(0u8));
            assert_eq!(a.mask_is_high() == u64::MAX, va > (&n >> 1));
            // GLV: k = k1 + k2·λ with |k1|, |k2| < 2^128.
            let ((k1, n1), (k2, n2)) = a.split_glv();
            let bound = BigUint::from(1u8) << 128;
            assert!(big(&k1.0) < bound && big(&k2.0) < bound, "glv bound {i}");
            let s1 = if n1 != 0 { k1.neg() } else { k1 };
            let s2 = if n2 != 0 { k2.neg() } else { k2 };
            assert_eq!(big(&s1.add(&s2.mul(&LAMBDA)).0), va, "glv {i}");
        }
    }
}
