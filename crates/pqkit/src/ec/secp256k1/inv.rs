//! Variable-time modular inversion for public values (verification): Bernstein and Yang's "divsteps"
//! ("Fast constant-time gcd computation and modular inversion", 2019), in the variable-time form that stops
//! as soon as g = 0, batched 62 steps at a time.
//!
//! Each batch runs 62 divsteps on the low 64 bits of f and g (enough: step j reads only bit j of the
//! originals) and records them as a 2×2 matrix (u, v; q, r) scaled by 2^62; the full-width f, g and the
//! Bézout-like coefficients d, e (f ≡ d·a, g ≡ e·a mod m) are then updated once per batch. f, g, d, e are
//! signed integers in five limbs of 62 bits (`i64`, products summed in `i128`). At the end f = ±1, so
//! a⁻¹ = ±d.
//!
//! Never use it on secrets: the number of batches and every branch depend on the input.

const M62: u64 = (1 << 62) - 1;

/// A signed integer Σ limb[i]·2^(62·i); limbs 0..3 in [0, 2^62), the top limb signed.
type S62 = [i64; 5];

fn to_s62(a: &[u64; 4]) -> S62 {
    let mut r = [0i64; 5];
    for (i, o) in r.iter_mut().enumerate() {
        let bit = 62 * i;
        let (w, s) = (bit / 64, bit % 64);
        let mut v = a[w] >> s;
        if s > 2 && w + 1 < 4 {
            v |= a[w + 1] << (64 - s);
        }
        *o = (v & M62) as i64;
    }
    r
}

/// The value of a non-negative S62 below 2^256.
fn from_s62(a: &S62) -> [u64; 4] {
    let mut r = [0u64; 4];
    for (i, &l) in a.iter().enumerate() {
        let bit = 62 * i;
        let (w, s) = (bit / 64, bit % 64);
        let l = l as u64;
        if w < 4 {
            r[w] |= l << s;
        }
        if s > 2 && w + 1 < 4 {
            r[w + 1] |= l >> (64 - s);
        }
    }
    r
}

/// Normalizes the limbs of `a` (carries into the signed top limb).
fn carry(a: &mut S62) {
    for i in 0..4 {
        let c = a[i] >> 62;
        a[i] &= M62 as i64;
        a[i + 1] += c;
    }
}

fn is_neg(a: &S62) -> bool {
    a[4] < 0
}

fn add(a: &S62, b: &S62) -> S62 {
    let mut r = [0i64; 5];
    for i in 0..5 {
        r[i] = a[i] + b[i];
    }
    carry(&mut r);
    r
}

fn sub(a: &S62, b: &S62) -> S62 {
    let mut r = [0i64; 5];
    for i in 0..5 {
        r[i] = a[i] - b[i];
    }
    carry(&mut r);
    r
}

/// a ≥ b as signed values (both normalized).
fn ge(a: &S62, b: &S62) -> bool {
    !is_neg(&sub(a, b))
}

/// 62 divsteps from (δ, f_lo, g_lo): the new δ and the matrix (u, v, q, r) with
/// 2^62·(f', g') = (u·f + v·g, q·f + r·g).
fn divsteps_62(mut delta: i64, f0: u64, g0: u64) -> (i64, [i64; 4]) {
    let (mut f, mut g) = (f0, g0);
    let (mut u, mut v, mut q, mut r) = (1i64, 0i64, 0i64, 1i64);
    let mut i = 62;
    while i > 0 {
        // Skip the zeros of g at once: each is g ← g/2, δ ← 1 + δ, (u, v) doubled.
        let z = (g.trailing_zeros()).min(i);
        g >>= z;
        u <<= z;
        v <<= z;
        delta += z as i64;
        i -= z;
        if i == 0 {
            break;
        }
        // g odd.
        if delta > 0 {
            // (f, g) ← (g, (g − f)/2), δ ← 1 − δ.
            let (nf, nu, nv) = (g, q, r);
            g = g.wrapping_sub(f) >> 1;
            q -= u;
            r -= v;
            f = nf;
            u = nu << 1;
            v = nv << 1;
            delta = 1 - delta;
        } else {
            // g ← (g + f)/2, δ ← 1 + δ.
            g = g.wrapping_add(f) >> 1;
            q += u;
            r += v;
            u <<= 1;
            v <<= 1;
            delta += 1;
        }
        i -= 1;
    }
    (delta, [u, v, q, r])
}

/// (a·x + b·y) / 2^62 for an exactly divisible sum.
fn mat_row(a: i64, x: &S62, b: i64, y: &S62) -> S62 {
    let mut acc = a as i128 * x[0] as i128 + b as i128 * y[0] as i128;
    debug_assert_eq!(acc & M62 as i128, 0);
    acc >>= 62;
    let mut r = [0i64; 5];
    for i in 1..5 {
        acc += a as i128 * x[i] as i128 + b as i128 * y[i] as i128;
        r[i - 1] = (acc as i64) & M62 as i64;
        acc >>= 62;
    }
    r[4] = acc as i64;
    r
}

/// (a·x + b·y + k·m) / 2^62 with k chosen so the sum is divisible: the modular update of d and e.
fn mat_row_mod(a: i64, x: &S62, b: i64, y: &S62, m: &S62, minv: u64) -> S62 {
    let low = (a as i128 * x[0] as i128 + b as i128 * y[0] as i128) as u64;
    // k = −low·m⁻¹ mod 2^62, as a signed value in (−2^61, 2^61].
    let mut k = (low.wrapping_mul(minv).wrapping_neg() & M62) as i64;
    if k > 1 << 61 {
        k -= 1 << 62;
    }
    let mut acc = a as i128 * x[0] as i128 + b as i128 * y[0] as i128 + k as i128 * m[0] as i128;
    debug_assert_eq!(acc & M62 as i128, 0);
    acc >>= 62;
    let mut r = [0i64; 5];
    for i in 1..5 {
        acc += a as i128 * x[i] as i128 + b as i128 * y[i] as i128 + k as i128 * m[i] as i128;
        r[i - 1] = (acc as i64) & M62 as i64;
        acc >>= 62;
    }
    r[4] = acc as i64;
    r
}

/// Brings `d` from (−2m, 2m) into (−m, m).
fn reduce(d: S62, m: &S62) -> S62 {
    let neg_m = sub(&[0; 5], m);
    if ge(&d, m) {
        sub(&d, m)
    } else if !ge(&d, &neg_m) || d == neg_m {
        add(&d, m)
    } else {
        d
    }
}

/// a⁻¹ mod m for an odd modulus m < 2^256 and a < m (0 maps to 0). `minv` is m⁻¹ mod 2^64. Variable time.
pub(crate) fn invert_vartime(a: &[u64; 4], m: &[u64; 4], minv: u64) -> [u64; 4] {
    let ms = to_s62(m);
    let (mut f, mut g) = (ms, to_s62(a));
    let (mut d, mut e): (S62, S62) = ([0; 5], [1, 0, 0, 0, 0]);
    let mut delta = 1i64;
    // At most ~741 divsteps are ever needed for 256-bit inputs; the bound only guards against misuse.
    for _ in 0..14 {
        if g == [0; 5] {
            break;
        }
        let f_lo = (f[0] as u64) | ((f[1] as u64) << 62);
        let g_lo = (g[0] as u64) | ((g[1] as u64) << 62);
        let (nd, [u, v, q, r]) = divsteps_62(delta, f_lo, g_lo);
        delta = nd;
        let nf = mat_row(u, &f, v, &g);
        let ng = mat_row(q, &f, r, &g);
        let dn = mat_row_mod(u, &d, v, &e, &ms, minv);
        let en = mat_row_mod(q, &d, r, &e, &ms, minv);
        f = nf;
        g = ng;
        d = reduce(dn, &ms);
        e = reduce(en, &ms);
    }
    // f = ±1 (a and m coprime) or f = ±m (a = 0: then d = 0).
    if is_neg(&f) {
        d = sub(&[0; 5], &d);
    }
    if is_neg(&d) {
        d = add(&d, &ms);
    }
    from_s62(&d)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::field::tests::{Xs, big, edge_words};
    use super::*;

    fn check(m: &[u64; 4]) {
        let mb = big(m);
        let mut minv: u64 = 1;
        for _ in 0..7 {
            minv = minv.wrapping_mul(2u64.wrapping_sub(m[0].wrapping_mul(minv)));
        }
        let mut words = edge_words(0x1_0000 + m[0]);
        let mut rng = Xs(m[1] | 1);
        for _ in 0..500 {
            words.push([rng.next(), rng.next(), rng.next(), rng.next()]);
        }
        for w in words {
            let a = big(&w) % &mb;
            let mut aw = [0u64; 4];
            for (i, d) in a.to_u64_digits().iter().enumerate() {
                aw[i] = *d;
            }
            let got = big(&invert_vartime(&aw, m, minv));
            assert_eq!(got, a.modpow(&(&mb - 2u8), &mb), "{a:x}");
        }
    }

    #[test]
    fn matches_fermat_mod_p_and_n() {
        check(&super::super::field::P);
        check(&super::super::scalar::N);
    }
}
