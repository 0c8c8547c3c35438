//! The Montgomery ladder of RFC 7748 §5 on Curve25519, v² = u³ + 486662u² + u, over any [`Field`].

use super::field::{self, Field, mask_from_bit};

/// (A − 2)/4 for A = 486662.
const A24: u32 = 121665;

/// The u-coordinate of `k·P` for the u-coordinate `u` of P, with `k` used as given (callers clamp it): the
/// constant-time ladder of RFC 7748 over bits 254 down to 0. Every step does the same operations; the
/// scalar bits only decide masked swaps.
pub(crate) fn ladder<F: Field>(k: &[u8; 32], u: &F) -> F {
    let (x2, z2) = ladder_projective(k, u);
    x2.mul(&field::invert(&z2))
}

/// [`ladder`] without its final inversion: the projective (X : Z) of `k·P`.
pub(crate) fn ladder_projective<F: Field>(k: &[u8; 32], u: &F) -> (F, F) {
    let x1 = *u;
    let (mut x2, mut z2) = (F::ONE, F::ZERO);
    let (mut x3, mut z3) = (*u, F::ONE);
    let mut swap = 0u64;
    for t in (0..255).rev() {
        let bit = ((k[t >> 3] >> (t & 7)) & 1) as u64;
        swap ^= bit;
        let mask = mask_from_bit(swap);
        F::cswap(&mut x2, &mut x3, mask);
        F::cswap(&mut z2, &mut z3, mask);
        swap = bit;

        let a = x2.add(&z2);
        let aa = a.square();
        let b = x2.sub(&z2);
        let bb = b.square();
        let e = aa.sub(&bb);
        let c = x3.add(&z3);
        let d = x3.sub(&z3);
        let da = d.mul(&a);
        let cb = c.mul(&b);
        x3 = da.add(&cb).square();
        z3 = x1.mul(&da.sub(&cb).square());
        x2 = aa.mul(&bb);
        z2 = e.mul(&aa.add(&e.mul_small(A24)));
    }
    let mask = mask_from_bit(swap);
    F::cswap(&mut x2, &mut x3, mask);
    F::cswap(&mut z2, &mut z3, mask);
    (x2, z2)
}
