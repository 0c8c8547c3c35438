//! Portable, constant-time polynomial arithmetic: the NTT (FIPS 203 Algorithm 9), its inverse (Algorithm 10)
//! and the base-case multiplication (Algorithms 11-12), all with Montgomery/Barrett reduction.

use super::poly::{GAMMAS, INV_NTT_F, Poly, R2, ZETAS, barrett, fqmul, mont_reduce};

/// Forward NTT in place. Input coefficients |c| ≤ q; output |c| ≤ (q-1)/2 (Barrett-reduced), in the
/// bit-reversed order of FIPS 203.
pub(crate) fn ntt(p: &mut Poly) {
    let c = &mut p.c;
    let mut k = 1;
    let mut len = 128;
    while len >= 2 {
        let mut start = 0;
        while start < 256 {
            let zeta = ZETAS[k];
            k += 1;
            for j in start..start + len {
                let t = fqmul(zeta, c[j + len]);
                c[j + len] = c[j] - t;
                c[j] += t;
            }
            start += 2 * len;
        }
        len >>= 1;
    }
    for x in c.iter_mut() {
        *x = barrett(*x);
    }
}

/// Inverse NTT in place, including the multiplication by R^2/128 (so the R^-1 of a base multiplication is
/// undone as well). Input |c| < q; output |c| < q.
pub(crate) fn invntt(p: &mut Poly) {
    let c = &mut p.c;
    let mut k = 127;
    let mut len = 2;
    while len <= 128 {
        let mut start = 0;
        while start < 256 {
            let zeta = ZETAS[k];
            k -= 1;
            for j in start..start + len {
                let t = c[j];
                c[j] = barrett(t + c[j + len]);
                c[j + len] = fqmul(zeta, c[j + len] - t);
            }
            start += 2 * len;
        }
        len <<= 1;
    }
    for x in c.iter_mut() {
        *x = fqmul(*x, INV_NTT_F);
    }
}

/// `out = Σ_j a[j] ∘ b[j] · R^-1` (NTT-domain products, FIPS 203 Algorithm 11), at most 4 terms, inputs
/// |c| ≤ q. Output |c| < q.
pub(crate) fn basemul_acc(out: &mut Poly, a: &[Poly], b: &[Poly]) {
    for (i, &g) in GAMMAS.iter().enumerate() {
        let gamma = i32::from(g);
        let mut c0 = 0i32;
        let mut c1 = 0i32;
        for (x, y) in a.iter().zip(b) {
            let (a0, a1) = (x.c[2 * i], x.c[2 * i + 1]);
            let (b0, b1) = (y.c[2 * i], y.c[2 * i + 1]);
            c0 += i32::from(a0) * i32::from(b0) + i32::from(fqmul(a1, b1)) * gamma;
            c1 += i32::from(a0) * i32::from(b1) + i32::from(a1) * i32::from(b0);
        }
        out.c[2 * i] = mont_reduce(c0);
        out.c[2 * i + 1] = mont_reduce(c1);
    }
}

/// Multiplies every coefficient by R (into the Montgomery domain); output |c| < q.
pub(crate) fn to_mont(p: &mut Poly) {
    for x in p.c.iter_mut() {
        *x = fqmul(*x, R2);
    }
}
