//! Inversion modulo an odd modulus below 2^256 by Bernstein–Yang "safegcd" division steps (Bernstein,
//! Yang, "Fast constant-time gcd computation and modular inversion", 2019): the one implementation behind
//! every curve's field and scalar inversions (GF(2^255 − 19) for the BMI2/ADX Curve25519 backend, P-256's p
//! and n, secp256k1's p and n).
//!
//! Two entry points share the arithmetic:
//! - [`invert`], constant time, for secrets: a fixed 590 divsteps in the half-delta variant (δ starts at
//!   1/2), which suffice for every modulus and input below 2^256 (nine batches of 62 and one of 32).
//! - [`invert_vartime`] and [`invert_vartime_bitwise`], for public values only (verification, tables of
//!   public points): the classic variant (δ starts at 1) that skips runs of zero bits and stops as soon as
//!   g = 0; the first also takes up to six odd steps at once, the second one at a time.
//!
//! ## Method
//! Start with f = m, g = x (below m), d = 0, e = 1, keeping `d·x ≡ f` and `e·x ≡ g` (mod m). Each divstep
//! halves g after possibly swapping f and g and adding or subtracting one from the other; after enough of
//! them g = 0 and f = ±1, so x⁻¹ = ±d. The steps run in batches of 62 on the low 64 bits of f and g only
//! (step j reads only bit j of the originals), recording the batch's effect as a 2×2 matrix of integers of
//! at most 62 bits (`t = [u, v, q, r]` with 2^62·(f', g') = t·(f, g)), which is then applied to the full f,
//! g (exactly divisible by 2^62) and to d, e modulo m (made divisible by adding a multiple of m).
//!
//! Numbers are five signed 62-bit limbs (`[i64; 5]`, value Σ lᵢ·2^(62i), limbs 0..3 in [0, 2^62), the top
//! limb signed); d and e stay in (−2m, m).
//!
//! ## Constant time
//! [`invert`] runs a fixed number of steps and every step is straight-line arithmetic on masks (no branch,
//! no table index depends on the value). [`invert_vartime`] branches on everything and must never see a
//! secret.

pub(crate) const M62: i64 = (1 << 62) - 1;

/// An odd modulus below 2^256 in the form the inversion needs (built at compile time with [`Mod62::new`]).
pub(crate) struct Mod62 {
    /// The modulus in five 62-bit limbs.
    m: [i64; 5],
    /// m⁻¹ mod 2^62.
    minv62: u64,
}

impl Mod62 {
    /// The constants of the odd modulus `m` (little-endian 64-bit limbs), at compile time.
    pub(crate) const fn new(m: &[u64; 4]) -> Mod62 {
        assert!(m[0] & 1 == 1, "the modulus must be odd");
        // Newton's iteration: each step doubles the number of correct low bits (1 → 64 in six steps).
        let mut inv: u64 = 1;
        let mut i = 0;
        while i < 7 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(m[0].wrapping_mul(inv)));
            i += 1;
        }
        Mod62 { m: to62(m), minv62: inv & (M62 as u64) }
    }
}

/// The 62-bit limbs of a 256-bit value.
#[inline(always)]
pub(crate) const fn to62(w: &[u64; 4]) -> [i64; 5] {
    let m = M62 as u64;
    [
        (w[0] & m) as i64,
        (((w[0] >> 62) | (w[1] << 2)) & m) as i64,
        (((w[1] >> 60) | (w[2] << 4)) & m) as i64,
        (((w[2] >> 58) | (w[3] << 6)) & m) as i64,
        (w[3] >> 56) as i64,
    ]
}

/// The 256-bit value of normalised limbs in [0, 2^256).
#[inline(always)]
fn from62(v: &[i64; 5]) -> [u64; 4] {
    let l = v.map(|x| x as u64);
    [l[0] | (l[1] << 62), (l[1] >> 2) | (l[2] << 60), (l[2] >> 4) | (l[3] << 58), (l[3] >> 6) | (l[4] << 56)]
}

/// The low 64 bits of a value in limbs.
#[inline(always)]
fn low64(v: &[i64; 5]) -> i64 {
    v[0] | (v[1] << 62)
}

/// Divsteps per batch, and batches of the constant-time inversion: nine full ones and a last one of
/// `LAST` steps, 9·62 + 32 = 590 in all, the bound for the half-delta variant and inputs below 2^256.
pub(crate) const BATCH: u32 = 62;
const BATCHES: usize = 10;
pub(crate) const LAST: u32 = 590 - 9 * BATCH;

/// `N` ≤ 62 divsteps on the low 64 bits of f (odd) and g, with η = −(δ + 1/2) (so δ > 0 exactly when
/// η < 0). Returns the new η and the transition matrix [u, v, q, r], scaled to 2^62 whatever `N`:
/// 2^62·f' = u·f + v·g, 2^62·g' = q·f + r·g (N steps give the factor 2^N; the entries are multiplied by
/// 2^(62 − N), which keeps |u| + |v| and |q| + |r| within 2^62). Constant time.
#[inline(always)]
pub(crate) fn divsteps<const N: u32>(mut eta: i64, mut f: i64, mut g: i64) -> (i64, [i64; 4]) {
    const { assert!(N <= BATCH) };
    let (mut u, mut v, mut q, mut r) = (1i64, 0i64, 0i64, 1i64);
    for _ in 0..N {
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
    let k = BATCH - N;
    (eta, [u.wrapping_shl(k), v.wrapping_shl(k), q.wrapping_shl(k), r.wrapping_shl(k)])
}

/// The same 62 divsteps in the classic variant (δ, starting at 1) with branches, several at a time. Runs
/// of zero bits of g are skipped at once. An odd g with δ ≤ 0 starts a run of up to 1 − δ steps in which no
/// swap can occur (δ only grows); those steps add f at each odd position, which together add w·f for the
/// one w below 2^k with g + w·f ≡ 0 (mod 2^k), computed from f⁻¹ mod 64 = f·(2 − f²) (k ≤ 6). A swap
/// (δ > 0, g odd) is (f, g) ← (g, −f), δ ← −δ, after which the same run gives the classic (g − f)/2 and
/// the steps that follow it. The matrix is the one of the classic divsteps, step for step. Variable time:
/// public values only.
fn divsteps_vartime(mut delta: i64, f0: u64, g0: u64) -> (i64, [i64; 4]) {
    let (mut f, mut g) = (f0, g0);
    let (mut u, mut v, mut q, mut r) = (1i64, 0i64, 0i64, 1i64);
    let mut i = BATCH;
    loop {
        // Each zero of g is g ← g/2, δ ← 1 + δ, (u, v) doubled; at most i of them (bits i and up set).
        let z = (g | (u64::MAX << i)).trailing_zeros();
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
            (f, g) = (g, f.wrapping_neg());
            (u, q) = (q, -u);
            (v, r) = (r, -v);
            delta = -delta;
        }
        // δ ≤ 0: the next min(1 − δ, i, 6) steps do not swap.
        let k = ((1 - delta) as u64).min(i as u64).min(6) as u32;
        let mask = (1u64 << k) - 1;
        let w = g.wrapping_mul(f).wrapping_mul(f.wrapping_mul(f).wrapping_sub(2)) & mask;
        g = g.wrapping_add(f.wrapping_mul(w));
        q += u * w as i64;
        r += v * w as i64;
    }
    (delta, [u, v, q, r])
}

/// The classic divsteps one odd step at a time (runs of zeros skipped at once): the reference for
/// [`divsteps_vartime`] in the tests, and the divsteps of [`invert_vartime_bitwise`].
fn divsteps_vartime_bitwise(mut delta: i64, f0: u64, g0: u64) -> (i64, [i64; 4]) {
    let (mut f, mut g) = (f0, g0);
    let (mut u, mut v, mut q, mut r) = (1i64, 0i64, 0i64, 1i64);
    let mut i = BATCH;
    while i > 0 {
        // Each zero of g is g ← g/2, δ ← 1 + δ, (u, v) doubled.
        let z = g.trailing_zeros().min(i);
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

/// (f, g) ← t·(f, g) / 2^62 (exact).
#[inline(always)]
pub(crate) fn update_fg(f: &mut [i64; 5], g: &mut [i64; 5], t: &[i64; 4]) {
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

/// (d, e) ← t·(d, e) / 2^62 mod m, for d, e in (−2m, m), leaving them in (−2m, m). Constant time.
///
/// Holds for any matrix of 62 divsteps (|u| + |v| ≤ 2^62 and |q| + |r| ≤ 2^62), whichever variant made it.
#[inline(always)]
fn update_de(d: &mut [i64; 5], e: &mut [i64; 5], t: &[i64; 4], md: &Mod62) {
    let p = &md.m;
    // Into (−m, m): add m to a negative one.
    let (sd, se) = (d[4] >> 63, e[4] >> 63);
    for k in 0..5 {
        d[k] += p[k] & sd;
        e[k] += p[k] & se;
    }
    let [u, v, q, r] = *t;
    // k ≡ −N·m⁻¹ (mod 2^62) in (−2^62, 0] for N = u·d + v·e (only its low limb matters), so that N + k·m
    // is divisible by 2^62 and, with |N| < 2^62·m, the quotient lies in (−2m, m).
    let nd = (u as u64).wrapping_mul(d[0] as u64).wrapping_add((v as u64).wrapping_mul(e[0] as u64));
    let ne = (q as u64).wrapping_mul(d[0] as u64).wrapping_add((r as u64).wrapping_mul(e[0] as u64));
    let kd = -((nd.wrapping_mul(md.minv62) & M62 as u64) as i64);
    let ke = -((ne.wrapping_mul(md.minv62) & M62 as u64) as i64);
    let [u, v, q, r, kd, ke] = [u, v, q, r, kd, ke].map(|x| x as i128);
    let mut cd = u * d[0] as i128 + v * e[0] as i128 + kd * p[0] as i128;
    let mut ce = q * d[0] as i128 + r * e[0] as i128 + ke * p[0] as i128;
    debug_assert!(cd as i64 & M62 == 0 && ce as i64 & M62 == 0);
    cd >>= 62;
    ce >>= 62;
    for k in 1..5 {
        cd += u * d[k] as i128 + v * e[k] as i128 + kd * p[k] as i128;
        ce += q * d[k] as i128 + r * e[k] as i128 + ke * p[k] as i128;
        d[k - 1] = cd as i64 & M62;
        e[k - 1] = ce as i64 & M62;
        cd >>= 62;
        ce >>= 62;
    }
    d[4] = cd as i64;
    e[4] = ce as i64;
}

/// a + (m & mask), limbs normalised (the top limb keeps the sign).
#[inline(always)]
fn add_masked(a: &[i64; 5], m: &[i64; 5], mask: i64) -> [i64; 5] {
    // The barrier hides that the mask is 0 or all ones: otherwise LLVM branches on it (valgrind ct job:
    // `add if negative` became a conditional jump here).
    let mask = core::hint::black_box(mask);
    let mut r = [0i64; 5];
    let mut c = 0i64;
    for k in 0..5 {
        let s = a[k] + (m[k] & mask) + c;
        if k < 4 {
            r[k] = s & M62;
            c = s >> 62;
        } else {
            r[k] = s;
        }
    }
    r
}

/// The end of both inversions: with g = 0 and f = ±1 (or f = ±m and d = 0 for x = 0), x⁻¹ = d·f, taken
/// from (−2m, 2m) to [0, m) in constant time.
#[inline(always)]
fn finish(mut d: [i64; 5], f4: i64, md: &Mod62) -> [u64; 4] {
    // Negate d where f < 0, then add m twice where negative ([0, 2m)) and subtract m where that stays
    // non-negative ([0, m)).
    let sf = f4 >> 63;
    let mut c = 0i64;
    for dk in d.iter_mut().take(4) {
        let s = (*dk ^ sf).wrapping_sub(sf) + c;
        *dk = s & M62;
        c = s >> 62;
    }
    d[4] = (d[4] ^ sf).wrapping_sub(sf) + c;
    let mut v = add_masked(&d, &md.m, d[4] >> 63);
    v = add_masked(&v, &md.m, v[4] >> 63);
    let neg_m = md.m.map(|x| -x);
    let w = add_masked(&v, &neg_m, -1);
    // All ones when v − m < 0: keep v (behind the same barrier).
    let keep = core::hint::black_box(w[4] >> 63);
    for k in 0..5 {
        v[k] = (v[k] & keep) | (w[k] & !keep);
    }
    crate::ct::wipe(&mut d);
    let r = from62(&v);
    crate::ct::wipe(&mut v);
    r
}

/// x⁻¹ mod m for x below m (0 for 0), fully reduced, constant time.
#[inline]
pub(crate) fn invert(x: &[u64; 4], md: &Mod62) -> [u64; 4] {
    invert_with(x, md, |eta, f, g, n| {
        if n == BATCH { divsteps::<BATCH>(eta, f as i64, g as i64) } else { divsteps::<LAST>(eta, f as i64, g as i64) }
    })
}

/// [`invert`] with another implementation of its batches: `batch(η, f, g, n)` must return what
/// [`divsteps`]`::<n>(η, f, g)` does (n is [`BATCH`] or [`LAST`]; f and g are the low 64 bits), in constant
/// time. For a backend's faster divsteps.
#[inline(always)]
pub(crate) fn invert_with<B>(x: &[u64; 4], md: &Mod62, batch: B) -> [u64; 4]
where
    B: Fn(i64, u64, u64, u32) -> (i64, [i64; 4]),
{
    let mut f = md.m;
    let mut g = to62(x);
    let mut d = [0i64; 5];
    let mut e = [1i64, 0, 0, 0, 0];
    let mut eta = -1i64; // δ = 1/2
    for b in 0..BATCHES {
        let n = if b + 1 < BATCHES { BATCH } else { LAST };
        let (eta2, t) = batch(eta, low64(&f) as u64, low64(&g) as u64, n);
        eta = eta2;
        update_fg(&mut f, &mut g, &t);
        update_de(&mut d, &mut e, &t, md);
    }
    let r = finish(d, f[4], md);
    crate::ct::wipe(&mut d);
    crate::ct::wipe(&mut e);
    crate::ct::wipe(&mut g);
    r
}

/// x⁻¹ mod m for x below m (0 for 0), fully reduced. Variable time: for public values only. Several
/// division steps at a time ([`divsteps_vartime`]).
pub(crate) fn invert_vartime(x: &[u64; 4], md: &Mod62) -> [u64; 4] {
    invert_vartime_with(x, md, divsteps_vartime)
}

/// [`invert_vartime`] with one odd division step at a time ([`divsteps_vartime_bitwise`]), the same
/// result. secp256k1 uses this one: its verification is faster with it on AMD Zen 5, while P-256's is
/// faster with the batched steps.
pub(crate) fn invert_vartime_bitwise(x: &[u64; 4], md: &Mod62) -> [u64; 4] {
    invert_vartime_with(x, md, divsteps_vartime_bitwise)
}

#[inline(always)]
fn invert_vartime_with<S: Fn(i64, u64, u64) -> (i64, [i64; 4])>(x: &[u64; 4], md: &Mod62, steps: S) -> [u64; 4] {
    let mut f = md.m;
    let mut g = to62(x);
    let mut d = [0i64; 5];
    let mut e = [1i64, 0, 0, 0, 0];
    let mut delta = 1i64;
    // The classic divsteps need at most 741 steps for 256-bit inputs (12 batches); the bound only guards the loop.
    for _ in 0..14 {
        if g == [0; 5] {
            break;
        }
        let (nd, t) = steps(delta, low64(&f) as u64, low64(&g) as u64);
        delta = nd;
        update_fg(&mut f, &mut g, &t);
        update_de(&mut d, &mut e, &t, md);
    }
    finish(d, f[4], md)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use num_bigint::BigUint;
    use std::vec::Vec;

    fn big(w: &[u64; 4]) -> BigUint {
        BigUint::from_slice(&w.iter().flat_map(|x| [*x as u32, (*x >> 32) as u32]).collect::<Vec<_>>())
    }

    fn words(v: &BigUint) -> [u64; 4] {
        let mut w = [0u64; 4];
        for (o, d) in w.iter_mut().zip(v.to_u64_digits()) {
            *o = d;
        }
        w
    }

    /// The moduli pqkit inverts modulo: 2^255 − 19, P-256's p and n, secp256k1's p and n; and two more
    /// primes at the edges (2^256 − 189, the largest below 2^256; 2^127 − 1, whose top limbs are zero).
    fn moduli() -> Vec<[u64; 4]> {
        std::vec![
            [!18, !0, !0, (1 << 63) - 1],
            [!0, 0x0000_0000_ffff_ffff, 0, 0xffff_ffff_0000_0001],
            [0xf3b9_cac2_fc63_2551, 0xbce6_faad_a717_9e84, !0, 0xffff_ffff_0000_0000],
            [0xffff_fffe_ffff_fc2f, !0, !0, !0],
            [0xbfd2_5e8c_d036_4141, 0xbaae_dce6_af48_a03b, 0xffff_ffff_ffff_fffe, !0],
            [!188, !0, !0, !0],
            [!0, (1 << 63) - 1, 0, 0],
        ]
    }

    /// Against num-bigint's modular exponentiation (x^(m−2): every modulus above is prime), both entry points, on edge values (0, 1, 2, m − 1,
    /// m − 2, (m ± 1)/2, powers of two and 2^k − 1, long runs of ones or zeros) and random ones.
    /// The batched variable-time divsteps give the matrix and δ of the classic ones, step for step, on
    /// random odd f, random g (including runs of zeros and all ones) and δ from −70 to 70.
    #[test]
    fn vartime_divsteps_match_bitwise() {
        let mut x = 0x5afe_6cd0_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for i in 0..200_000u64 {
            let f = next() | 1;
            let g = match i % 5 {
                0 => next() & (next() | next()),
                1 => next() << (next() % 64),
                2 => u64::MAX << (i % 64),
                _ => next(),
            };
            let delta = (next() % 141) as i64 - 70;
            assert_eq!(divsteps_vartime(delta, f, g), divsteps_vartime_bitwise(delta, f, g), "{f:x} {g:x} {delta}");
        }
    }

    #[test]
    fn inverts_modulo_every_modulus() {
        let mut state = 0x5afe_9cd0_0000_0001u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for modulus in moduli() {
            let md = Mod62::new(&modulus);
            let m = big(&modulus);
            assert_eq!(big(&from62(&md.m)), m);
            assert_eq!((md.minv62 as u128 * (modulus[0] as u128)) & M62 as u128, 1);
            let one = BigUint::from(1u8);
            let mut xs: Vec<BigUint> = std::vec![
                BigUint::from(0u8),
                one.clone(),
                BigUint::from(2u8),
                &m - 1u8,
                &m - 2u8,
                (&m - 1u8) >> 1u32,
                (&m + 1u8) >> 1u32,
            ];
            for k in [1u32, 32, 61, 62, 63, 64, 96, 124, 128, 192, 200, 224, 248, 254, 255] {
                xs.push((&one << k) % &m);
                xs.push(((&one << k) - 1u8) % &m);
            }
            for _ in 0..1000 {
                xs.push(big(&[next(), next(), next(), next()]) % &m);
            }
            for x in &xs {
                let xw = words(x);
                for (name, got) in [
                    ("ct", invert(&xw, &md)),
                    ("vartime", invert_vartime(&xw, &md)),
                    ("vartime bitwise", invert_vartime_bitwise(&xw, &md)),
                ] {
                    let got = big(&got);
                    assert!(got < m, "{name}: not reduced: {x} mod {m}");
                    assert_eq!(got, x.modpow(&(&m - 2u8), &m), "{name}: {x} mod {m}");
                }
            }
        }
    }
}
