//! Test hooks: the arithmetic of one backend on raw coefficients (the NTT, its inverse, pointwise products,
//! ExpandMask and the rounding steps), so that integration tests and benchmarks can compare every backend with
//! the portable one coefficient by coefficient. Hidden from the documentation; not a stable API.

use super::{Backend, Checked, N, Poly};

fn canon(p: &Poly) -> [i32; N] {
    p.0.map(super::poly::freeze)
}

/// Forward NTT, result reduced to \[0, q).
pub fn ntt(b: Checked<Backend>, a: &[i32; N]) -> [i32; N] {
    let mut p = Poly(*a);
    b.ntt(&mut p);
    canon(&p)
}

/// Inverse NTT (of Montgomery products, i.e. with the factor 2^32 removed), result in \[0, q).
pub fn invntt(b: Checked<Backend>, a: &[i32; N]) -> [i32; N] {
    let mut p = Poly(*a);
    b.invntt(&mut p);
    canon(&p)
}

/// Pointwise Montgomery product, result in \[0, q).
pub fn pointwise(b: Checked<Backend>, x: &[i32; N], y: &[i32; N]) -> [i32; N] {
    let mut p = Poly::ZERO;
    b.pointwise(&mut p, &Poly(*x), &Poly(*y));
    canon(&p)
}

/// ExpandMask as the signer calls it: `l` polynomials for each κ of `kappas` in turn, through one scratch
/// (so through its window of polynomials computed ahead), coefficients as `i32` in (-γ1, γ1\].
#[cfg(feature = "alloc")]
pub fn expand_mask(
    b: Checked<Backend>,
    rho2: &[u8; 64],
    kappas: &[u16],
    l: usize,
    gamma1: i32,
) -> alloc::vec::Vec<[i32; N]> {
    let mut sc = super::sampling::MaskScratch::new(b);
    let mut out = alloc::vec::Vec::with_capacity(kappas.len() * l);
    for &kappa in kappas {
        let mut y = alloc::vec![Poly::ZERO; l];
        super::sampling::expand_mask(b, rho2, kappa, &mut y, gamma1, &mut sc);
        out.extend(y.iter().map(|p| p.0));
    }
    out
}

/// The signer's rounding steps on one polynomial, as (w, w1) after `w_decompose`, (z, bad) after
/// `z_finish`, (r, r1, bad) after `r_finish` and (h, bad, ones) after `hint`, for comparing backends.
#[allow(clippy::type_complexity)]
pub fn rounding(
    b: Checked<Backend>,
    gamma2: i32,
    bound: i32,
    w: &[i32; N],
    y: &[i32; N],
    cs2: &[i32; N],
    ct0: &[i32; N],
) -> ([i32; N], [i32; N], [i32; N], bool, [i32; N], [i32; N], bool, [i32; N], bool, u32) {
    let (mut pw, mut pw1) = (Poly(*w), Poly::ZERO);
    b.w_decompose(&mut pw, &mut pw1, gamma2);
    let mut z = Poly(*w);
    let zbad = b.z_finish(&mut z, &Poly(*y), bound) != 0;
    let (mut r, mut r1) = (pw, Poly::ZERO);
    let rbad = b.r_finish(&mut r, &mut r1, &Poly(*cs2), gamma2, bound) != 0;
    let mut h = r1;
    let (hbad, ones) = b.hint(&Poly(*ct0), &r, &mut h, gamma2);
    (pw.0, pw1.0, z.0, zbad, r.0, r1.0, rbad, h.0, hbad != 0, ones)
}

/// Sum of pointwise Montgomery products, result in \[0, q).
pub fn pointwise_acc(b: Checked<Backend>, x: &[[i32; N]], y: &[[i32; N]]) -> [i32; N] {
    let xs: [Poly; 8] = core::array::from_fn(|i| Poly(x.get(i).copied().unwrap_or([0; N])));
    let ys: [Poly; 8] = core::array::from_fn(|i| Poly(y.get(i).copied().unwrap_or([0; N])));
    let n = x.len().min(y.len()).min(8);
    let mut p = Poly::ZERO;
    b.pointwise_acc(&mut p, &xs[..n], &ys[..n]);
    canon(&p)
}
