//! Integers modulo the prime order of the base point, L = 2^252 + 27742317777372353535851937790883648493.
//!
//! A [`Scalar`] is five 52-bit limbs holding a value below L. Products are reduced by Montgomery reduction
//! with R = 2^260 (word-by-word, one 52-bit word at a time): `mont_mul(a, b) = a·b·R^-1 mod L`. Plain
//! products multiply once more by R² mod L. A 64-byte hash splits at bit 260 into `lo + hi·R`, so its
//! residue is `mont_mul(lo, R) + mont_mul(hi, R²)`.
//!
//! The constants (−L^-1 mod 2^52, R mod L, R² mod L) are computed by `const fn` from L itself.
//!
//! Everything here is constant time (fixed loops, carries by shifts, the final subtraction of L by mask),
//! because signing runs it on the secret scalar and nonce.

const MASK52: u64 = (1 << 52) - 1;

/// An integer modulo L, below L.
#[derive(Clone, Copy)]
pub(crate) struct Scalar(pub(crate) [u64; 5]);

/// L = 2^252 + 0x14def9dea2f79cd65812631a5cf5d3ed, little-endian.
pub(crate) const L_BYTES: [u8; 32] = [
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];

const L: [u64; 5] = limbs52(&L_BYTES);

/// −L^-1 mod 2^52, by Newton's iteration x ← x(2 − Lx) (each step doubles the correct low bits).
const LFACTOR: u64 = {
    let l0 = L[0];
    let mut inv: u64 = 1;
    let mut i = 0;
    while i < 6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(l0.wrapping_mul(inv)));
        i += 1;
    }
    inv.wrapping_neg() & MASK52
};

/// 2^k mod L, by doubling.
const fn pow2_mod_l(k: u32) -> [u64; 5] {
    let mut x = [1u64, 0, 0, 0, 0];
    let mut i = 0;
    while i < k {
        let mut carry = 0;
        let mut j = 0;
        while j < 5 {
            let t = (x[j] << 1) | carry;
            carry = t >> 52;
            x[j] = t & MASK52;
            j += 1;
        }
        x = sub_l_if_ge(x);
        i += 1;
    }
    x
}

/// R mod L, R = 2^260.
const R1: [u64; 5] = pow2_mod_l(260);
/// R² mod L.
const R2: [u64; 5] = pow2_mod_l(520);

/// The 52-bit limbs of the first 260 bits of a little-endian string of at least 33 bytes (missing bytes are
/// zero).
const fn limbs52(b: &[u8]) -> [u64; 5] {
    let mut words = [0u64; 5];
    let mut i = 0;
    while i < b.len() && i < 40 {
        words[i / 8] |= (b[i] as u64) << (8 * (i % 8));
        i += 1;
    }
    let mut out = [0u64; 5];
    let mut k = 0;
    while k < 5 {
        let bit = 52 * k;
        let (w, s) = (bit / 64, bit % 64);
        let mut v = words[w] >> s;
        if s > 12 && w + 1 < 5 {
            v |= words[w + 1] << (64 - s);
        }
        out[k] = v & MASK52;
        k += 1;
    }
    out
}

/// `x - L` if `x >= L`, else `x` (x < 2L, limbs normalised), by mask.
#[inline(always)]
const fn sub_l_if_ge(x: [u64; 5]) -> [u64; 5] {
    let mut d = [0u64; 5];
    let mut borrow = 0u64;
    let mut i = 0;
    while i < 5 {
        let t = x[i].wrapping_sub(L[i]).wrapping_sub(borrow);
        borrow = t >> 63;
        d[i] = t & MASK52;
        i += 1;
    }
    // borrow = 1: x < L, keep x. The barrier stops LLVM from turning the mask into a branch on the borrow
    // (valgrind ct job, docs/hardening.md: it emitted `js` here in Ed25519 signing).
    let keep = core::hint::black_box(0u64.wrapping_sub(borrow));
    let mut r = [0u64; 5];
    let mut i = 0;
    while i < 5 {
        r[i] = (x[i] & keep) | (d[i] & !keep);
        i += 1;
    }
    r
}

#[inline(always)]
fn m(a: u64, b: u64) -> u128 {
    (a as u128) * (b as u128)
}

/// `a·b·R^-1 mod L` for a, b < 2^260 with a·b < R·L.
#[inline]
fn mont_mul(a: &[u64; 5], b: &[u64; 5]) -> [u64; 5] {
    let mut t = [0u128; 10];
    for i in 0..5 {
        for j in 0..5 {
            t[i + j] += m(a[i], b[j]);
        }
    }
    mont_reduce(t)
}

/// `t·R^-1 mod L` for t < R·L given as nine 52-bit-position columns (each < 2^107).
#[inline]
fn mont_reduce(mut t: [u128; 10]) -> [u64; 5] {
    for i in 0..5 {
        // Choose q with t[i] + q·L[0] = 0 (mod 2^52), add q·L at position i: the low word vanishes.
        let q = (t[i] as u64).wrapping_mul(LFACTOR) & MASK52;
        for j in 0..5 {
            t[i + j] += m(q, L[j]);
        }
        t[i + 1] += t[i] >> 52;
    }
    // The result (< 2L) is t[5..] carried.
    let mut r = [0u64; 5];
    let mut carry = 0u128;
    for k in 0..5 {
        let v = t[5 + k] + carry;
        r[k] = v as u64 & MASK52;
        carry = v >> 52;
    }
    r[4] |= (carry as u64) << 52;
    sub_l_if_ge(r)
}

/// `a + b mod L` for a, b < L.
#[inline]
fn add_mod(a: &[u64; 5], b: &[u64; 5]) -> [u64; 5] {
    let mut r = [0u64; 5];
    let mut carry = 0;
    for i in 0..5 {
        let t = a[i] + b[i] + carry;
        r[i] = t & MASK52;
        carry = t >> 52;
    }
    r[4] |= carry << 52;
    sub_l_if_ge(r)
}

impl Scalar {
    pub(crate) const ZERO: Scalar = Scalar([0; 5]);

    /// The residue of a 64-byte little-endian integer (a SHA-512 output).
    pub(crate) fn from_bytes_wide(b: &[u8; 64]) -> Scalar {
        let lo = limbs52(&b[..40]);
        // Bits 260..511: shift the top 32.5 bytes right by 4 bits.
        let mut hi_bytes = [0u8; 32];
        for i in 0..32 {
            let next = if i + 33 < 64 { b[i + 33] } else { 0 };
            hi_bytes[i] = (b[i + 32] >> 4) | (next << 4);
        }
        let hi = limbs52(&hi_bytes);
        let lo = mont_mul(&lo, &R1);
        let hi = mont_mul(&hi, &R2);
        Scalar(add_mod(&lo, &hi))
    }

    /// The residue of a 32-byte little-endian integer (any value below 2^256).
    pub(crate) fn from_bytes_mod_order(b: &[u8; 32]) -> Scalar {
        let mut wide = [0u8; 64];
        wide[..32].copy_from_slice(b);
        let s = Scalar::from_bytes_wide(&wide);
        crate::ct::wipe(&mut wide);
        s
    }

    /// The scalar encoded by `b` if it is canonical (below L), else `None`. Variable time (for public S).
    pub(crate) fn from_canonical_bytes(b: &[u8; 32]) -> Option<Scalar> {
        if is_canonical(b) { Some(Scalar(limbs52(b))) } else { None }
    }

    /// The 32-byte little-endian encoding.
    pub(crate) fn to_bytes(self) -> [u8; 32] {
        let l = &self.0;
        let w = [
            l[0] | (l[1] << 52),
            (l[1] >> 12) | (l[2] << 40),
            (l[2] >> 24) | (l[3] << 28),
            (l[3] >> 36) | (l[4] << 16),
        ];
        let mut out = [0u8; 32];
        for (o, w) in out.chunks_exact_mut(8).zip(w) {
            o.copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// `self · rhs mod L`.
    pub(crate) fn mul(&self, rhs: &Scalar) -> Scalar {
        Scalar(mont_mul(&mont_mul(&self.0, &rhs.0), &R2))
    }

    /// `self + rhs mod L`.
    pub(crate) fn add(&self, rhs: &Scalar) -> Scalar {
        Scalar(add_mod(&self.0, &rhs.0))
    }

    /// `-self mod L`.
    pub(crate) fn neg(&self) -> Scalar {
        // L - self, then reduce (self = 0 gives L, which reduces to 0).
        let mut r = [0u64; 5];
        let mut borrow = 0u64;
        for i in 0..5 {
            let t = L[i].wrapping_sub(self.0[i]).wrapping_sub(borrow);
            borrow = t >> 63;
            r[i] = t & MASK52;
        }
        Scalar(sub_l_if_ge(r))
    }

    /// `self · b + c mod L`: the S of a signature.
    pub(crate) fn mul_add(&self, b: &Scalar, c: &Scalar) -> Scalar {
        self.mul(b).add(c)
    }
}

impl zeroize::Zeroize for Scalar {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

/// True if the little-endian `b` is below L (variable time; S is public).
pub(crate) fn is_canonical(b: &[u8; 32]) -> bool {
    for i in (0..32).rev() {
        if b[i] != L_BYTES[i] {
            return b[i] < L_BYTES[i];
        }
    }
    false
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::ec::curve25519::field::tests::Xs;
    use num_bigint::BigUint;
    use std::vec;

    fn l() -> BigUint {
        (BigUint::from(1u8) << 252u32) + "27742317777372353535851937790883648493".parse::<BigUint>().unwrap()
    }

    fn big(s: &Scalar) -> BigUint {
        BigUint::from_bytes_le(&s.to_bytes())
    }

    #[test]
    fn constants() {
        let l = l();
        assert_eq!(BigUint::from_bytes_le(&L_BYTES), l);
        assert_eq!(LFACTOR.wrapping_mul(L[0]) & MASK52, MASK52, "L·LFACTOR = -1 mod 2^52");
        assert_eq!(big(&Scalar(R1)), (BigUint::from(1u8) << 260u32) % &l);
        assert_eq!(big(&Scalar(R2)), (BigUint::from(1u8) << 520u32) % &l);
    }

    #[test]
    fn reduction_and_arithmetic_match_bigint() {
        let l = l();
        let mut rng = Xs(0x8032_0001);
        let mut edge = vec![[0u8; 64], [0xff; 64]];
        let mut lb = [0u8; 64];
        lb[..32].copy_from_slice(&L_BYTES);
        edge.push(lb);
        lb[0] -= 1;
        edge.push(lb);
        for _ in 0..300 {
            let mut b = [0u8; 64];
            b[..32].copy_from_slice(&rng.bytes());
            b[32..].copy_from_slice(&rng.bytes());
            edge.push(b);
        }
        let mut prev = Scalar::ZERO;
        for b in &edge {
            let s = Scalar::from_bytes_wide(b);
            let v = BigUint::from_bytes_le(b) % &l;
            assert_eq!(big(&s), v);
            let mut h = [0u8; 32];
            h.copy_from_slice(&b[..32]);
            assert_eq!(big(&Scalar::from_bytes_mod_order(&h)), BigUint::from_bytes_le(&h) % &l);
            let pv = big(&prev);
            assert_eq!(big(&s.mul(&prev)), (&v * &pv) % &l);
            assert_eq!(big(&s.add(&prev)), (&v + &pv) % &l);
            assert_eq!(big(&s.neg()), (&l - &v) % &l);
            assert_eq!(big(&s.mul_add(&prev, &s)), (&v * &pv + &v) % &l);
            prev = s;
        }
    }

    #[test]
    fn canonical_check() {
        let l = l();
        let enc = |v: &BigUint| {
            let mut b = [0u8; 32];
            let le = v.to_bytes_le();
            b[..le.len()].copy_from_slice(&le);
            b
        };
        assert!(is_canonical(&[0; 32]));
        assert!(is_canonical(&enc(&(&l - 1u8))));
        assert!(!is_canonical(&enc(&l)));
        assert!(!is_canonical(&enc(&(&l + 1u8))));
        assert!(!is_canonical(&[0xff; 32]));
        let s = Scalar::from_canonical_bytes(&enc(&(&l - 1u8))).unwrap();
        assert_eq!(big(&s), &l - 1u8);
        assert!(Scalar::from_canonical_bytes(&L_BYTES).is_none());
    }
}
