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
    ///
    /// Without products: b = h·2^252 + m with h < 16 and m < 2^252, and 2^252 ≡ −δ (mod L) for
    /// δ = L − 2^252 < 2^125, so b ≡ m − h·δ, which lies in (−L, 2^252) ⊂ (−L, L): one subtraction on the
    /// limbs, then L added by mask when the result is negative.
    pub(crate) fn from_bytes_mod_order(b: &[u8; 32]) -> Scalar {
        const _: () = assert!(L[3] == 0 && L[4] == 1 << 44);
        let mut x = limbs52(b);
        let h = x[4] >> 44;
        x[4] &= (1 << 44) - 1;
        let delta = [L[0], L[1], L[2], 0, 0];
        let mut r = [0u64; 5];
        // Signed limbs: each t is within (−2^57, 2^53), the carry t >> 52 (arithmetic) within [−32, 1].
        let mut carry = 0i64;
        for i in 0..5 {
            let t = x[i] as i64 - (h * delta[i]) as i64 + carry;
            r[i] = t as u64 & MASK52;
            carry = t >> 52;
        }
        // The final carry is 0, or −1 when the value is negative (r then holds it plus 2^260): add L by
        // mask, dropping the carry out of 2^260. The barrier keeps the mask arithmetic (as in `sub_l_if_ge`).
        let neg = core::hint::black_box(carry as u64);
        let mut c = 0u64;
        for i in 0..5 {
            let t = r[i] + (L[i] & neg) + c;
            r[i] = t & MASK52;
            c = t >> 52;
        }
        crate::ct::wipe(&mut x);
        Scalar(r)
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

/// A 256-bit unsigned integer in four little-endian 64-bit words (for [`half_size_vartime`] only).
type U256 = [u64; 4];

fn u256_bits(a: &U256) -> u32 {
    for i in (0..4).rev() {
        if a[i] != 0 {
            return 64 * i as u32 + 64 - a[i].leading_zeros();
        }
    }
    0
}

/// `a << s` for `s` < 256, when no set bit leaves the word (the caller guarantees it).
fn u256_shl(a: &U256, s: u32) -> U256 {
    let (w, b) = ((s / 64) as usize, s % 64);
    let mut r = [0u64; 4];
    for i in (w..4).rev() {
        r[i] = a[i - w] << b;
        if b != 0 && i > w {
            r[i] |= a[i - w - 1] >> (64 - b);
        }
    }
    r
}

/// `a − b` when `a ≥ b`, else `None`.
fn u256_sub(a: &U256, b: &U256) -> Option<U256> {
    let mut r = [0u64; 4];
    let mut borrow = false;
    for i in 0..4 {
        let (v, b1) = a[i].overflowing_sub(b[i]);
        let (v, b2) = v.overflowing_sub(borrow as u64);
        r[i] = v;
        borrow = b1 | b2;
    }
    if borrow { None } else { Some(r) }
}

/// `(a / b, a mod b)` for `b` ≥ 2^127 and `a` < 2^253 (so the quotient is below 2^126): shift and subtract.
fn u256_divrem(a: &U256, b: &U256) -> (u128, U256) {
    // Most quotients are small (1: 42%, 2: 17%, 3: 9%): try a few subtractions first.
    let mut r = *a;
    let mut q = 0u128;
    while q < 3 {
        match u256_sub(&r, b) {
            Some(d) => {
                r = d;
                q += 1;
            }
            None => return (q, r),
        }
    }
    let (ab, bb) = (u256_bits(&r), u256_bits(b));
    if ab >= bb {
        for s in (0..=ab - bb).rev() {
            if let Some(d) = u256_sub(&r, &u256_shl(b, s)) {
                r = d;
                q += 1 << s;
            }
        }
    }
    (q, r)
}

/// Splits a public challenge `k` (below L, little-endian) into half-size multipliers: `(c0, c1, negative)`
/// with `c0 ≡ ±c1·k (mod L)` (the sign − when `negative`), `c0 < 2^127` and `0 < c1 ≤ 2^126`. Ed25519
/// verification multiplies its equation by `±c1` (invertible mod L), so that A and R take 127-bit scalars
/// and B a 253-bit one split in two halves: half the doublings (Pornin, "Optimized Lattice Basis Reduction
/// In Dimension 2, and Fast Schnorr and EdDSA Signature Verification", 2020, takes the same route with a
/// faster reduction).
///
/// The extended Euclidean algorithm on (L, k), stopped at the first remainder below 2^127: each remainder
/// is `rᵢ = sᵢ·L + tᵢ·k`, so `rᵢ ≡ tᵢ·k`, and `|tᵢ| ≤ L / rᵢ₋₁ ≤ 2^253 / 2^127`. The signs of the `tᵢ`
/// alternate (t₁ = 1 > 0, t₂ < 0, …), so only magnitudes are kept. Variable time: for public data only.
/// `None` (never expected) if a bound is broken; the caller then takes the full-length path.
pub(crate) fn half_size_vartime(k: &[u8; 32]) -> Option<(u128, u128, bool)> {
    let word = |b: &[u8; 32], i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]));
    let mut r_prev: U256 = core::array::from_fn(|i| word(&L_BYTES, i));
    let mut r: U256 = core::array::from_fn(|i| word(k, i));
    if u256_sub(&r, &r_prev).is_some() {
        return None; // k ≥ L
    }
    let (mut t_prev, mut t) = (0u128, 1u128);
    let mut odd = true;
    loop {
        if u256_bits(&r) <= 127 {
            let c0 = (r[0] as u128) | ((r[1] as u128) << 64);
            return if t != 0 && t <= 1 << 126 { Some((c0, t, !odd)) } else { None };
        }
        let (q, rem) = u256_divrem(&r_prev, &r);
        let t_next = q.checked_mul(t)?.checked_add(t_prev)?;
        (r_prev, r, t_prev, t) = (r, rem, t, t_next);
        odd = !odd;
    }
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
    fn half_size_split_matches_bigint() {
        let l = l();
        let mut rng = Xs(0x8032_0077);
        let mut ks: std::vec::Vec<[u8; 32]> = vec![[0; 32], L_BYTES];
        let mut one = [0u8; 32];
        one[0] = 1;
        ks.push(one);
        let mut lm1 = L_BYTES;
        lm1[0] -= 1;
        ks.push(lm1);
        let mut p127 = [0u8; 32];
        p127[15] = 0x80;
        ks.push(p127);
        let mut p127m1 = [0xffu8; 32];
        p127m1[15] = 0x7f;
        p127m1[16..].fill(0);
        ks.push(p127m1);
        for _ in 0..2000 {
            ks.push(Scalar::from_bytes_mod_order(&rng.bytes()).to_bytes());
        }
        for k in &ks {
            let kb = BigUint::from_bytes_le(k);
            let got = half_size_vartime(k);
            if kb >= l {
                assert!(got.is_none(), "k >= L is refused");
                continue;
            }
            let (c0, c1, neg) = got.expect("every k < L splits");
            assert!(c0 < 1 << 127 && c1 > 0 && c1 <= 1 << 126, "bounds for {kb}");
            let lhs = BigUint::from(c0) % &l;
            let prod = (BigUint::from(c1) * &kb) % &l;
            let rhs = if neg { (&l - prod) % &l } else { prod };
            assert_eq!(lhs, rhs, "c0 = ±c1·k mod L for {kb}");
        }
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
        lb[0] += 2;
        edge.push(lb);
        // The bounds of the short reduction of 32-byte values: h·2^252 with the low part 0 (most negative),
        // 2^252 − 1, and every top nibble over the low part all ones or L's.
        for top in 0..16u8 {
            let mut b = [0u8; 64];
            b[31] = top << 4;
            edge.push(b);
            b[..31].fill(0xff);
            b[31] |= 0x0f;
            edge.push(b);
            let mut b = lb;
            b[31] = (top << 4) | (L_BYTES[31] & 0x0f);
            edge.push(b);
        }
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
