//! Constant-time inversion modulo p = 2^255 − 19 by Bernstein–Yang "safegcd" divisions steps (Bernstein,
//! Yang, "Fast constant-time gcd computation and modular inversion", 2019), in the half-delta variant
//! (δ starts at 1/2), for which 590 steps suffice for every input below 2^256.
//!
//! ## Method
//! Start with f = p, g = x (below p), d = 0, e = 1, keeping `d·x ≡ f` and `e·x ≡ g` (mod p). Each divstep
//! halves g after possibly swapping f and g and adding or subtracting one from the other; after enough of
//! them g = 0 and f = ±1, so x^−1 = ±d. The steps are done in batches of 62 on the low 64 bits of f and g
//! only, recording the batch's effect as a 2×2 matrix of integers of at most 62 bits (`t = [u, v, q, r]`
//! with 2^62·(f', g') = t·(f, g)), which is then applied to the full f, g (exactly divisible by 2^62) and to
//! d, e modulo p (made divisible by adding a multiple of p). 10 batches: 620 steps.
//!
//! Numbers are five signed 62-bit limbs (`[i64; 5]`, value Σ lᵢ·2^(62i)); d and e stay in (−2p, p).
//!
//! ## Constant time
//! The number of steps is fixed and every step is straight-line arithmetic on masks (no branch, no
//! table index depends on the value).

const M62: i64 = (1 << 62) - 1;

/// p in 62-bit limbs: 2^62 − 19, 2^62 − 1 (three times), 2^7 − 1.
const P: [i64; 5] = [M62 - 18, M62, M62, M62, 127];

/// p^−1 mod 2^62, by Newton's iteration (each step doubles the correct low bits; p is odd).
const PINV62: u64 = {
    let p0 = P[0] as u64;
    let mut inv: u64 = 1;
    let mut i = 0;
    while i < 6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(p0.wrapping_mul(inv)));
        i += 1;
    }
    inv & (M62 as u64)
};

/// Divsteps per batch and batches: 10·62 = 620 ≥ 590.
const BATCH: u32 = 62;
const BATCHES: usize = 10;

/// 62 divsteps on the low 64 bits of f (odd) and g, with η = −(δ + 1/2) (so δ > 0 exactly when η < 0).
/// Returns the new η and the transition matrix [u, v, q, r]: 2^62·f' = u·f + v·g, 2^62·g' = q·f + r·g.
#[inline(always)]
fn divsteps(mut eta: i64, mut f: i64, mut g: i64) -> (i64, [i64; 4]) {
    let (mut u, mut v, mut q, mut r) = (1i64, 0i64, 0i64, 1i64);
    for _ in 0..BATCH {
        // c1: δ > 0; c2: g odd. If both: (f, g) ← (g, (g − f)/2), δ ← 1 − δ; else if g odd:
        // g ← (g + f)/2, δ ← 1 + δ; else g ← g/2, δ ← 1 + δ. Done as: g += ±f when g is odd (− when δ > 0),
        // then, in the swap case, f += the new g (giving the old g).
        let c1 = eta >> 63;
        let c2 = -(g & 1);
        let x = (f ^ c1).wrapping_sub(c1);
        let y = (u ^ c1).wrapping_sub(c1);
        let z = (v ^ c1).wrapping_sub(c1);
        g = g.wrapping_add(x & c2);
        q = q.wrapping_add(y & c2);
        r = r.wrapping_add(z & c2);
        let c = c1 & c2;
        // Swap: δ' = 1 − δ, η' = −η − 2; else δ' = 1 + δ, η' = η − 1.
        eta = (eta ^ c).wrapping_sub(1);
        f = f.wrapping_add(g & c);
        u = u.wrapping_add(q & c);
        v = v.wrapping_add(r & c);
        g >>= 1;
        u = u.wrapping_shl(1);
        v = v.wrapping_shl(1);
    }
    (eta, [u, v, q, r])
}

/// (f, g) ← t·(f, g) / 2^62 (exact).
#[inline(always)]
fn update_fg(f: &mut [i64; 5], g: &mut [i64; 5], t: &[i64; 4]) {
    let [u, v, q, r] = t.map(|x| x as i128);
    let mut cf = u * f[0] as i128 + v * g[0] as i128;
    let mut cg = q * f[0] as i128 + r * g[0] as i128;
    debug_assert!(cf as i64 & M62 == 0 && cg as i64 & M62 == 0);
    cf >>= 62;
    cg >>= 62;
    for k in 1..5 {
        cf += u * f[k] as i128 + v * g[k] as i128;
        cg += q * f[k] as i128 + r * g[k] as i128;
        f[k - 1] = cf as i64 & M62;
        g[k - 1] = cg as i64 & M62;
        cf >>= 62;
        cg >>= 62;
    }
    f[4] = cf as i64;
    g[4] = cg as i64;
}

/// (d, e) ← t·(d, e) / 2^62 mod p, for d, e in (−2p, p), leaving them in (−2p, p).
#[inline(always)]
fn update_de(d: &mut [i64; 5], e: &mut [i64; 5], t: &[i64; 4]) {
    // Into (−p, p): add p to a negative one.
    let (sd, se) = (d[4] >> 63, e[4] >> 63);
    for k in 0..5 {
        d[k] += P[k] & sd;
        e[k] += P[k] & se;
    }
    let [u, v, q, r] = *t;
    // m ≡ −N·p^−1 (mod 2^62) in (−2^62, 0] for N = u·d + v·e (only its low limb matters), so that N + m·p
    // is divisible by 2^62 and, with |N| < 2^62·p, the quotient lies in (−2p, p).
    let nd = (u as u64).wrapping_mul(d[0] as u64).wrapping_add((v as u64).wrapping_mul(e[0] as u64));
    let ne = (q as u64).wrapping_mul(d[0] as u64).wrapping_add((r as u64).wrapping_mul(e[0] as u64));
    let md = -((nd.wrapping_mul(PINV62) & M62 as u64) as i64);
    let me = -((ne.wrapping_mul(PINV62) & M62 as u64) as i64);
    let [u, v, q, r, md, me] = [u, v, q, r, md, me].map(|x| x as i128);
    let mut cd = u * d[0] as i128 + v * e[0] as i128 + md * P[0] as i128;
    let mut ce = q * d[0] as i128 + r * e[0] as i128 + me * P[0] as i128;
    debug_assert!(cd as i64 & M62 == 0 && ce as i64 & M62 == 0);
    cd >>= 62;
    ce >>= 62;
    for k in 1..5 {
        cd += u * d[k] as i128 + v * e[k] as i128 + md * P[k] as i128;
        ce += q * d[k] as i128 + r * e[k] as i128 + me * P[k] as i128;
        d[k - 1] = cd as i64 & M62;
        e[k - 1] = ce as i64 & M62;
        cd >>= 62;
        ce >>= 62;
    }
    d[4] = cd as i64;
    e[4] = ce as i64;
}

/// The 62-bit limbs of a 256-bit little-endian value.
fn limbs62(b: &[u8; 32]) -> [i64; 5] {
    let mut w = [0u64; 4];
    for (w, c) in w.iter_mut().zip(b.chunks_exact(8)) {
        *w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    }
    let m = M62 as u64;
    [
        (w[0] & m) as i64,
        (((w[0] >> 62) | (w[1] << 2)) & m) as i64,
        (((w[1] >> 60) | (w[2] << 4)) & m) as i64,
        (((w[2] >> 58) | (w[3] << 6)) & m) as i64,
        (w[3] >> 56) as i64,
    ]
}

/// x^−1 mod p for the canonical encoding `x` of an element (below p); 0 for 0. Returns the result as four
/// little-endian 64-bit words plus a fifth carry word: the value is `w[0..4] + 2^256·w[4]`, below 4p.
pub(crate) fn invert_words(x: &[u8; 32]) -> ([u64; 4], u64) {
    let mut f = P;
    let mut g = limbs62(x);
    let mut d = [0i64; 5];
    let mut e = [1i64, 0, 0, 0, 0];
    let mut eta = -1i64; // δ = 1/2
    for _ in 0..BATCHES {
        let (eta2, t) = divsteps(eta, f[0] | (f[1] << 62), g[0] | (g[1] << 62));
        eta = eta2;
        update_fg(&mut f, &mut g, &t);
        update_de(&mut d, &mut e, &t);
    }
    // Now g = 0 and f = ±1 (or f = p, d = 0 for x = 0): x^−1 = d·f. Negate d where f < 0, then add 2p:
    // d·f + 2p lies in (0, 4p).
    let sf = f[4] >> 63;
    let mut c: i128 = 0;
    let mut l = [0u64; 5];
    for k in 0..5 {
        let dk = (d[k] ^ sf).wrapping_sub(sf);
        c += dk as i128 + 2 * P[k] as i128;
        l[k] = (c as i64 & M62) as u64;
        c >>= 62;
    }
    debug_assert!(c == 0);
    crate::ct::wipe(&mut d);
    crate::ct::wipe(&mut e);
    crate::ct::wipe(&mut g);
    let w = [l[0] | (l[1] << 62), (l[1] >> 2) | (l[2] << 60), (l[2] >> 4) | (l[3] << 58), (l[3] >> 6) | (l[4] << 56)];
    (w, l[4] >> 8)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::ec::curve25519::field::tests::{Xs, p};
    use num_bigint::BigUint;

    fn value(w: &([u64; 4], u64)) -> BigUint {
        let mut b = [0u8; 40];
        for i in 0..4 {
            b[8 * i..8 * i + 8].copy_from_slice(&w.0[i].to_le_bytes());
        }
        b[32..].copy_from_slice(&w.1.to_le_bytes());
        BigUint::from_bytes_le(&b)
    }

    fn bytes(v: &BigUint) -> [u8; 32] {
        let mut b = [0u8; 32];
        let le = v.to_bytes_le();
        b[..le.len()].copy_from_slice(&le);
        b
    }

    #[test]
    fn constants() {
        let p = p();
        assert_eq!(
            (BigUint::from(PINV62) * (&p % (BigUint::from(1u8) << 62u32))) % (BigUint::from(1u8) << 62u32),
            BigUint::from(1u8)
        );
        let mut v = BigUint::from(0u8);
        for k in (0..5).rev() {
            v = (v << 62u32) + BigUint::from(P[k] as u64);
        }
        assert_eq!(v, p);
    }

    /// Against num-bigint's modular exponentiation on edge values (0, 1, 2, p − 1, p − 2, powers of two,
    /// values with long runs of ones or zeros) and random ones; the result is below 4p and correct mod p.
    #[test]
    fn inverts() {
        let p = p();
        let one = BigUint::from(1u8);
        let mut xs: std::vec::Vec<BigUint> = std::vec![
            BigUint::from(0u8),
            one.clone(),
            BigUint::from(2u8),
            &p - 1u8,
            &p - 2u8,
            (&p - 1u8) >> 1u32,
            &p >> 1u32,
        ];
        for k in [1u32, 61, 62, 63, 64, 124, 128, 200, 248, 253, 254] {
            xs.push(&one << k);
            xs.push((&one << k) - 1u8);
        }
        let mut rng = Xs(0x5afe_6cd0);
        for _ in 0..2000 {
            xs.push(BigUint::from_bytes_le(&rng.bytes()) % &p);
        }
        for x in &xs {
            let got = value(&invert_words(&bytes(x)));
            assert!(got < &p * 4u8);
            assert_eq!(got % &p, x.modpow(&(&p - 2u8), &p), "x = {x}");
        }
    }
}
