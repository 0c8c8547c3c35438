//! Portable arithmetic backend: the NTT (FIPS 204 Algorithm 41), its inverse (Algorithm 42) and the pointwise
//! products, with Montgomery reduction. Constant-time: no branch or index depends on coefficient values.

use super::N;
use super::poly::{
    INV_NTT_F, INV_NTT_ZF, Poly, ZETAS, center, decompose, exceeds, freeze, high_bits, mont_reduce, reduce32,
};

/// Forward NTT. Input |a_i| ≤ q; output in the NTT domain (bit-reversed order), |a_i| < q.
pub fn ntt(p: &mut Poly) {
    let a = &mut p.0;
    let mut k = 0;
    let mut len = 128;
    while len > 0 {
        let mut start = 0;
        while start < N {
            k += 1;
            let z = ZETAS[k] as i64;
            for j in start..start + len {
                let t = mont_reduce(z * a[j + len] as i64);
                a[j + len] = a[j] - t;
                a[j] += t;
            }
            start += 2 * len;
        }
        len >>= 1;
    }
    for c in a.iter_mut() {
        *c = reduce32(*c);
    }
}

/// Inverse NTT of a vector of Montgomery products (carrying a factor 2^-32), which it removes.
/// Input |a_i| < q; output |a_i| < q in the normal domain.
///
/// Lazy reduction (the same integers as the AVX2 code): the sums are reduced only in the third layer
/// (len = 4), so they stay below 8q before it and 32q after it (the differences go through a Montgomery
/// product and are below q); the last layer folds the final factor f into its constants: a := (a + b)·f,
/// b := (a − b)·(−ζ·f), one Montgomery product each ([`INV_NTT_ZF`]).
pub fn invntt(p: &mut Poly) {
    let a = &mut p.0;
    let mut k = N;
    let mut len = 1;
    while len < N / 2 {
        let mut start = 0;
        while start < N {
            k -= 1;
            let z = -(ZETAS[k] as i64);
            for j in start..start + len {
                let t = a[j];
                let u = a[j + len];
                a[j] = if len == 4 { reduce32(t + u) } else { t + u };
                a[j + len] = mont_reduce(z * (t - u) as i64);
            }
            start += 2 * len;
        }
        len <<= 1;
    }
    for j in 0..N / 2 {
        let t = a[j];
        let u = a[j + N / 2];
        a[j] = mont_reduce(INV_NTT_F as i64 * (t + u) as i64);
        a[j + N / 2] = mont_reduce(INV_NTT_ZF as i64 * (t - u) as i64);
    }
}

/// `out = a ∘ b · 2^-32` coefficient-wise (|a_i|, |b_i| < q); output |out_i| < q.
pub fn pointwise(out: &mut Poly, a: &Poly, b: &Poly) {
    for i in 0..N {
        out.0[i] = mont_reduce(a.0[i] as i64 * b.0[i] as i64);
    }
}

/// `out = Σ_j a[j] ∘ b[j] · 2^-32` (at most 8 terms, each |.| < q); output |out_i| < q.
///
/// The products are summed exactly (|Σ| < 8q² < 2^31·q) and reduced once, as the AVX2 code does.
pub fn pointwise_acc(out: &mut Poly, a: &[Poly], b: &[Poly]) {
    debug_assert!(a.len() <= 8);
    for i in 0..N {
        let mut s = 0i64;
        for (x, y) in a.iter().zip(b) {
            s += x.0[i] as i64 * y.0[i] as i64;
        }
        out.0[i] = mont_reduce(s);
    }
}

/// w := w mod q in \[0, q) and w1 := HighBits(w) (input |w_i| < q).
pub fn w_decompose(w: &mut Poly, w1: &mut Poly, gamma2: i32) {
    for (a, h) in w.0.iter_mut().zip(w1.0.iter_mut()) {
        let v = freeze(*a);
        *a = v;
        *h = high_bits(v, gamma2);
    }
}

/// z := (z + y) mod± q; returns non-zero iff some |z_i| ≥ `bound` (every coefficient is examined).
pub fn z_finish(z: &mut Poly, y: &Poly, bound: i32) -> u32 {
    let mut bad = 0;
    for (a, b) in z.0.iter_mut().zip(y.0.iter()) {
        let v = center(freeze(*a + *b));
        *a = v;
        bad |= exceeds(v, bound);
    }
    bad
}

/// r := (w − cs2) mod q, w1 := HighBits(r); returns non-zero iff some |LowBits(r)_i| ≥ `bound`.
pub fn r_finish(w: &mut Poly, w1: &mut Poly, cs2: &Poly, gamma2: i32, bound: i32) -> u32 {
    let mut bad = 0;
    for i in 0..N {
        let r = freeze(w.0[i] - cs2.0[i]);
        let (r1, r0) = decompose(r, gamma2);
        w.0[i] = r;
        w1.0[i] = r1;
        bad |= exceeds(r0, bound);
    }
    bad
}

/// With ct0 = c·t0 (|.| < q) and r, r1 = HighBits(r) from [`r_finish`]: w1 := MakeHint(−ct0, r + ct0) as 0/1.
/// Returns (non-zero iff some |ct0_i| ≥ γ2, number of ones).
pub fn hint(ct0: &Poly, r: &Poly, w1: &mut Poly, gamma2: i32) -> (u32, u32) {
    let mut bad = 0;
    let mut ones = 0;
    for i in 0..N {
        let c = center(freeze(ct0.0[i]));
        bad |= exceeds(c, gamma2);
        let hi = high_bits(freeze(r.0[i] + c), gamma2);
        let d = (hi ^ w1.0[i]) as u32;
        let h = (d | d.wrapping_neg()) >> 31;
        w1.0[i] = h as i32;
        ones += h;
    }
    (bad, ones)
}
