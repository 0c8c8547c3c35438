//! Polynomials of R_q = Z_q\[X\]/(X^256 + 1), the scalar modular arithmetic, the NTT constants and the
//! rounding functions of FIPS 204 §7.4 (Power2Round, Decompose, HighBits, LowBits, MakeHint, UseHint).
//!
//! Everything here that touches secrets is branch-free: reductions use multiplications and shifts, selections
//! use masks.

use super::{N, Q};

/// One polynomial: 256 coefficients as `i32`. Which range they are in is stated by each function.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Poly(pub [i32; N]);

impl Poly {
    /// The zero polynomial.
    pub const ZERO: Poly = Poly([0; N]);
}

impl Default for Poly {
    fn default() -> Self {
        Poly::ZERO
    }
}

impl core::fmt::Debug for Poly {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Poly { .. }")
    }
}

impl zeroize::Zeroize for Poly {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

/// q^-1 mod 2^32.
pub const QINV: i32 = 58_728_449;

/// Montgomery reduction: for |a| < 2^31 · q returns a · 2^-32 mod q in (-q, q).
#[inline(always)]
pub const fn mont_reduce(a: i64) -> i32 {
    let t = (a as i32).wrapping_mul(QINV);
    ((a - (t as i64) * (Q as i64)) >> 32) as i32
}

/// For |a| < 2^31 - 2^22, returns r ≡ a (mod q) with |r| ≤ 6283009.
#[inline(always)]
pub const fn reduce32(a: i32) -> i32 {
    let t = (a + (1 << 22)) >> 23;
    a - t * Q
}

/// Adds q if `a` is negative.
#[inline(always)]
pub const fn caddq(a: i32) -> i32 {
    a + ((a >> 31) & Q)
}

/// The representative of `a` in \[0, q) (for |a| < 2^31 - 2^22).
#[inline(always)]
pub const fn freeze(a: i32) -> i32 {
    caddq(reduce32(a))
}

/// For `a` in \[0, q), the centred representative a mod± q in \[-(q-1)/2, (q-1)/2\].
#[inline(always)]
pub const fn center(a: i32) -> i32 {
    a - (((((Q - 1) / 2) - a) >> 31) & Q)
}

const fn pow_mod(mut b: u64, mut e: u64) -> u64 {
    let q = Q as u64;
    let mut r = 1u64;
    b %= q;
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % q;
        }
        b = b * b % q;
        e >>= 1;
    }
    r
}

const fn brv8(x: usize) -> usize {
    (x as u8).reverse_bits() as usize
}

/// ζ^brv8(k) · 2^32 mod q, centred, for k = 0..256 (ζ = 1753, FIPS 204 Appendix B), in Montgomery form.
pub const ZETAS: [i32; N] = {
    let mut z = [0i32; N];
    let r = (1u64 << 32) % (Q as u64);
    let mut k = 0;
    while k < N {
        let v = pow_mod(1753, brv8(k) as u64) * r % (Q as u64);
        z[k] = center(v as i32);
        k += 1;
    }
    z
};

/// 2^64 / 256 mod q: the final factor of the inverse NTT (undoes 256 and the 2^-32 of one Montgomery product).
pub const INV_NTT_F: i32 = pow_mod(2, 56) as i32;

/// −ζ₁·f·2^-32 mod q (centred), ζ₁ = `ZETAS[1]`: the last inverse layer's difference factor with the final
/// factor folded in, so (a − b)·(−ζ₁)·f costs one Montgomery product instead of two.
pub const INV_NTT_ZF: i32 =
    center((mont_reduce(-(ZETAS[1] as i64) * INV_NTT_F as i64) as i64).rem_euclid(Q as i64) as i32);

/// Power2Round (Algorithm 35) for r in \[0, q): returns (r1, r0) with r = r1·2^13 + r0, r0 in (-2^12, 2^12\].
#[inline(always)]
pub const fn power2round(r: i32) -> (i32, i32) {
    let r1 = (r + (1 << 12) - 1) >> 13;
    (r1, r - (r1 << 13))
}

/// Decompose (Algorithm 36) for r in \[0, q): (r1, r0) with r ≡ r1·2γ2 + r0, r0 in (-γ2, γ2\] (or -γ2 in the
/// wrap-around case), r1 in \[0, (q-1)/2γ2). Branch-free, and the same integer steps as the AVX2 code:
/// r1 = floor((r + γ2 - 1) / 2γ2), computed as floor(x / d) = ((x + 1)·M) >> 20 with x = (r + γ2 - 1) >> s,
/// 2γ2 = 2^s·d and d·M = 2^20 - 1 (exact for every r < q; checked exhaustively in the tests).
#[inline(always)]
pub const fn decompose(r: i32, gamma2: i32) -> (i32, i32) {
    let (s, mm) = decompose_consts(gamma2);
    let alpha = 2 * gamma2;
    let m = (Q - 1) / alpha;
    let x = (r + gamma2 - 1) >> s;
    let mut r1 = ((x + 1) * mm) >> 20;
    let mut r0 = r - r1 * alpha;
    // r - r0 = q - 1 exactly when r1 = m: then r1 = 0 and r0 = r0 - 1.
    let wrap = ((r1 ^ m) - 1) >> 31; // all-ones iff r1 == m
    r1 &= !wrap;
    r0 += wrap; // -1 where wrapping
    (r1, r0)
}

/// (s, M) for [`decompose`]: 2γ2 = 2^s·d with d·M = 2^20 - 1.
#[inline(always)]
pub const fn decompose_consts(gamma2: i32) -> (u32, i32) {
    if gamma2 == (Q - 1) / 32 { (9, 1025) } else { (11, 11275) }
}

/// HighBits of r in \[0, q).
#[inline(always)]
pub const fn high_bits(r: i32, gamma2: i32) -> i32 {
    decompose(r, gamma2).0
}

/// UseHint (Algorithm 40) for r in \[0, q) and a public hint bit h.
#[inline(always)]
pub const fn use_hint(h: bool, r: i32, gamma2: i32) -> i32 {
    let m = (Q - 1) / (2 * gamma2);
    let (r1, r0) = decompose(r, gamma2);
    if !h {
        r1
    } else if r0 > 0 {
        if r1 + 1 == m { 0 } else { r1 + 1 }
    } else if r1 == 0 {
        m - 1
    } else {
        r1 - 1
    }
}

/// 1 if |a| ≥ bound (for |a| < 2^30), else 0, without a branch.
#[inline(always)]
pub const fn exceeds(a: i32, bound: i32) -> u32 {
    let abs = a ^ (a >> 31);
    let abs = abs - (a >> 31);
    ((bound - 1 - abs) >> 31) as u32 & 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants() {
        // ζ^256 = -1 mod q: ζ is a primitive 512th root of unity.
        assert_eq!(pow_mod(1753, 512), 1);
        assert_eq!(pow_mod(1753, 256), Q as u64 - 1);
        assert_eq!((QINV as i64 * Q as i64) as i32, 1);
        // First entries from FIPS 204 Appendix B (plain values 1, 4808194, 3765607, ...).
        let plain =
            |k: usize| -> i64 { (ZETAS[k] as i64 * pow_mod(1 << 32, Q as u64 - 2) as i64).rem_euclid(Q as i64) };
        assert_eq!(plain(1), 4808194);
        assert_eq!(plain(2), 3765607);
        assert_eq!(plain(255) as u64, pow_mod(1753, 255));
        assert_eq!(plain(128) as u64, pow_mod(1753, 1));
    }

    #[test]
    fn decompose_matches_definition() {
        for &g2 in &[(Q - 1) / 88, (Q - 1) / 32] {
            let mut r = 0;
            while r < Q {
                let (r1, r0) = decompose(r, g2);
                // Reference definition from FIPS 204 Algorithm 36.
                let a = 2 * g2;
                let mut e0 = r % a;
                if e0 > a / 2 {
                    e0 -= a;
                }
                let (e1, e0) = if r - e0 == Q - 1 { (0, e0 - 1) } else { ((r - e0) / a, e0) };
                assert_eq!((r1, r0), (e1, e0), "r = {r}");
                r += 1;
            }
        }
    }

    #[test]
    fn exceeds_is_abs_compare() {
        for a in [-10, -9, -8, 0, 8, 9, 10] {
            assert_eq!(exceeds(a, 9), (a.abs() >= 9) as u32);
        }
    }
}
