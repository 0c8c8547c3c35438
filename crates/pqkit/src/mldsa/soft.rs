//! Portable arithmetic backend: the NTT (FIPS 204 Algorithm 41), its inverse (Algorithm 42) and the pointwise
//! products, with Montgomery reduction. Constant-time: no branch or index depends on coefficient values.

use super::N;
use super::poly::{INV_NTT_F, Poly, ZETAS, mont_reduce, reduce32};

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
pub fn invntt(p: &mut Poly) {
    let a = &mut p.0;
    let mut k = N;
    let mut len = 1;
    while len < N {
        let mut start = 0;
        while start < N {
            k -= 1;
            let z = -(ZETAS[k] as i64);
            for j in start..start + len {
                let t = a[j];
                let u = a[j + len];
                a[j] = reduce32(t + u);
                a[j + len] = mont_reduce(z * (t - u) as i64);
            }
            start += 2 * len;
        }
        len <<= 1;
    }
    for c in a.iter_mut() {
        *c = mont_reduce(INV_NTT_F as i64 * *c as i64);
    }
}

/// `out = a ∘ b · 2^-32` coefficient-wise (|a_i|, |b_i| < q); output |out_i| < q.
pub fn pointwise(out: &mut Poly, a: &Poly, b: &Poly) {
    for i in 0..N {
        out.0[i] = mont_reduce(a.0[i] as i64 * b.0[i] as i64);
    }
}

/// `out = Σ_j a[j] ∘ b[j] · 2^-32` (at most 8 terms, each |.| < q); output |out_i| < q.
pub fn pointwise_acc(out: &mut Poly, a: &[Poly], b: &[Poly]) {
    for i in 0..N {
        let mut s = 0i32;
        for (x, y) in a.iter().zip(b) {
            s += mont_reduce(x.0[i] as i64 * y.0[i] as i64);
        }
        out.0[i] = reduce32(s);
    }
}
