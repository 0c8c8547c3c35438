//! The constant-time safegcd inversion on x86_64: the Bernstein–Yang divsteps of [`crate::ec::safegcd`]
//! (its batches of 62 and its updates of f, g, d and e), with each batch's divsteps done on packed words by
//! `cmov` instead of on six separate variables by masks. Baseline x86_64 only (no CPU feature to check).
//! Both Curve25519 backends invert with [`invert_p25519`], the same inversion with the updates of d and e
//! specialised to 2^255 − 19 (its signed limbs have three zeros, see [`P25519`]) and its runs unrolled
//! ([`batch_unrolled`]).
//!
//! ## Packing
//! A batch of up to 62 divsteps runs as runs of at most [`RUN`] = 19 steps. A run starts from the low 19
//! bits of f and g and keeps each row of its transition matrix in the same 64-bit word as the value it
//! transforms:
//!
//! F = f̃ + u·2^21 + v·2^42, G = g̃ + q·2^21 + r·2^42,
//!
//! where, after j of the run's n steps, (u, v, q, r) is the matrix of those j steps times 2^(n − j) and
//! f̃ = (u·f₀ + v·g₀)/2^n, g̃ = (q·f₀ + r·g₀)/2^n for the run's starting low bits f₀, g₀. A divstep is linear
//! in (f, g) and its matrix rows alike: g ← g ± f, f ← the old g, g ← g/2. On the packed words these are
//! the same additions, moves and one arithmetic shift of G; the shift is exact because g̃ is even at that
//! point and q, r are multiples of 2^(n − j) ≥ 2 for j < n. The branch conditions read only bit 0 of G,
//! which is bit 0 of g̃, which is bit j of the true g (f₀, g₀ agree with f, g on their low 19 ≥ n bits).
//!
//! Bounds: |u| + |v| ≤ 2^n, |q| + |r| ≤ 2^n after each step (below 2^(n+1) inside one), so |f̃|, |g̃| < 2^19
//! and every word stays below 2^63 in magnitude. At the end of a run the matrix is the exact one (the
//! factor 2^(n − n) = 1), |u|, |v|, |q|, |r| ≤ 2^19 < 2^20, and each field is read by rounding: adding 2^20
//! and 2^41 makes the fields below it non-negative, so the bits above are exactly the field.
//!
//! A batch applies its runs' matrices to the low 64 bits of f and g between runs (run k needs 19 correct
//! bits; after 19·k steps 64 − 19·k remain, 7 after three runs, enough for the fourth run of 5 steps of a
//! batch of 62) and multiplies them together, giving what [`safegcd::divsteps`] gives.
//!
//! ## Constant time
//! Each step is the same straight-line sequence of `mov`, `test`, `cmov`, `xor`, `lea`, `sub` and a shift;
//! the conditions select values through `cmov`, never a branch, and the only jump is the loop's, on the step
//! count (public).

#![allow(unsafe_code)]

use crate::ec::safegcd::{self, BATCH, LAST, M62, Mod62, to62, update_fg};
use core::arch::asm;

/// The longest run of divsteps on one pair of packed words.
const RUN: u32 = 19;
/// The low bits of f and g a run starts from.
const LOW: u64 = (1 << RUN) - 1;

/// One divstep on the packed words, as `asm!` text over the operands `f`, `g`, `d` and the scratch registers
/// `m`, `t`, with the constants `z` = 0 and `n2` = −2; [`run`] loops it and [`run_unrolled`] repeats it.
/// Straight-line: the conditions select through `cmov`, never a branch.
///
/// The step keeps D = 2η and G = 2g (the sum g ± f before its halving): bit 1 of G is the parity of g, and
/// the halving of one step runs beside the parity test of the next instead of after it. With the swap
/// condition as the mask m = −2 (δ > 0 and g odd) or 0, both negations are one `xor`: f is odd, so
/// f ⊕ −2 = −f, and D is even, so D ⊕ −2 = −D − 2 (then − 2: 2·(−η − 2)). It expects the flags of a `test`
/// (or the `sub`) of `d` and leaves those of its final `sub` of `d` for the next step.
macro_rules! divstep {
    () => {
        concat!(
            // m = −2 where δ > 0 (η < 0), t = f.
            "mov {m}, {n2}\n",
            "cmovns {m}, {z}\n",
            "mov {t}, {f}\n",
            // g even: neither (m = 0, t = 0).
            "test {g:l}, 2\n",
            "cmovz {m}, {z}\n",
            "cmovz {t}, {z}\n",
            // g = G/2; on a swap t = −f and D = −D − 2.
            "sar {g}, 1\n",
            "xor {t}, {m}\n",
            "xor {d}, {m}\n",
            // On a swap f takes g. G ← g + t (2·(g ± f)/2 or 2·g/2), D ← D − 2.
            "test {m}, {m}\n",
            "cmovnz {f}, {g}\n",
            "lea {g}, [{g} + {t}]\n",
            "sub {d}, 2\n",
        )
    };
}

/// `n` (1 ≤ n ≤ [`RUN`]) divsteps in the half-delta variant of [`safegcd::divsteps`] from η and the low
/// [`RUN`] bits of f (odd) and g, on packed words (see the module docs). Returns the new η and the exact
/// matrix [u, v, q, r] with 2^n·(f', g') = (u·f + v·g, q·f + r·g).
#[inline(always)]
fn run(eta: i64, f: u64, g: u64, n: u32) -> (i64, [i64; 4]) {
    debug_assert!((1..=RUN).contains(&n) && f & 1 == 1);
    let mut ff = (f & LOW) as i64 | (1i64 << (n + 21));
    let mut gg = ((g & LOW) as i64 | (1i64 << (n + 42))) << 1;
    let mut d = eta << 1;
    // SAFETY: plain x86_64 integer instructions on registers only (no memory, no stack); `cmov` is part of
    // every x86_64 CPU. The loop runs `n` ≥ 1 times.
    unsafe {
        asm!(
            "2:",
            "test {d}, {d}",
            divstep!(),
            "dec {n:e}",
            "jnz 2b",
            f = inout(reg) ff,
            g = inout(reg) gg,
            d = inout(reg) d,
            n = inout(reg) n => _,
            m = out(reg) _,
            t = out(reg) _,
            z = in(reg) 0i64,
            n2 = in(reg) -2i64,
            options(pure, nomem, nostack),
        );
    }
    let (u, v, q, r) = unpack(ff, gg >> 1);
    (d >> 1, [u, v, q, r])
}

/// The matrix (u, v, q, r) from the packed words F, G at the end of a run, by rounding: + 2^20 makes the low
/// field non-negative, + 2^41 the middle one (|u|, |q| < 2^20).
#[inline(always)]
fn unpack(ff: i64, gg: i64) -> (i64, i64, i64, i64) {
    const BIAS: i64 = (1 << 20) + (1 << 41);
    const FIELD: i64 = (1 << 21) - 1;
    let (wf, wg) = (ff.wrapping_add(BIAS), gg.wrapping_add(BIAS));
    let u = ((wf >> 21) & FIELD) - (1 << 20);
    let v = wf >> 42;
    let q = ((wg >> 21) & FIELD) - (1 << 20);
    let r = wg >> 42;
    (u, v, q, r)
}

/// `n` ∈ {[`BATCH`], [`LAST`](safegcd::LAST)} divsteps from η and the low 64 bits of f (odd) and g: what
/// [`safegcd::divsteps`]`::<n>` returns (the matrix scaled to 2^62), in runs of at most [`RUN`] steps.
#[inline(always)]
pub(crate) fn batch(mut eta: i64, mut f: u64, mut g: u64, n: u32) -> (i64, [i64; 4]) {
    let mut m = [1i64, 0, 0, 1];
    let mut done = 0;
    while done < n {
        let k = if n - done < RUN { n - done } else { RUN };
        let (eta2, t) = run(eta, f, g, k);
        eta = eta2;
        compose(&t, k, &mut f, &mut g, &mut m);
        done += k;
    }
    let s = BATCH - n;
    (eta, m.map(|x| x << s))
}

/// After a run of `k` steps with matrix `t`: the low bits of f and g (64 − k of them are right) and the
/// batch's matrix so far, `m` ← `t`·`m`.
#[inline(always)]
fn compose(t: &[i64; 4], k: u32, f: &mut u64, g: &mut u64, m: &mut [i64; 4]) {
    let [u1, v1, q1, r1] = *t;
    let nf = (u1 as u64).wrapping_mul(*f).wrapping_add((v1 as u64).wrapping_mul(*g));
    let ng = (q1 as u64).wrapping_mul(*f).wrapping_add((r1 as u64).wrapping_mul(*g));
    *f = nf >> k;
    *g = ng >> k;
    let [u, v, q, r] = *m;
    *m = [
        u1.wrapping_mul(u).wrapping_add(v1.wrapping_mul(q)),
        u1.wrapping_mul(v).wrapping_add(v1.wrapping_mul(r)),
        q1.wrapping_mul(u).wrapping_add(r1.wrapping_mul(q)),
        q1.wrapping_mul(v).wrapping_add(r1.wrapping_mul(r)),
    ];
}

/// [`run`] with the step count `N` (1 ≤ N ≤ [`RUN`]) fixed at compile time and the steps unrolled: the same
/// straight-line step `N` times with no loop branch, whose exit the branch predictor would miss once a run.
#[inline(always)]
fn run_unrolled<const N: u32>(eta: i64, f: u64, g: u64) -> (i64, [i64; 4]) {
    const { assert!(N >= 1 && N <= RUN) };
    debug_assert!(f & 1 == 1);
    let mut ff = (f & LOW) as i64 | (1i64 << (N + 21));
    let mut gg = ((g & LOW) as i64 | (1i64 << (N + 42))) << 1;
    let mut d = eta << 1;
    // SAFETY: plain x86_64 integer instructions on registers only (no memory, no stack); `cmov` is part of
    // every x86_64 CPU. `.rept` repeats the step `N` times at assembly time.
    unsafe {
        asm!(
            "test {d}, {d}",
            ".rept {n}",
            divstep!(),
            ".endr",
            n = const N,
            f = inout(reg) ff,
            g = inout(reg) gg,
            d = inout(reg) d,
            m = out(reg) _,
            t = out(reg) _,
            z = in(reg) 0i64,
            n2 = in(reg) -2i64,
            options(pure, nomem, nostack),
        );
    }
    let (u, v, q, r) = unpack(ff, gg >> 1);
    (d >> 1, [u, v, q, r])
}

/// One unrolled run of `K` steps inside a batch: advances η, the low bits of f and g, and the batch's
/// matrix so far (as [`batch`] does between its runs).
#[inline(always)]
fn advance<const K: u32>(eta: &mut i64, f: &mut u64, g: &mut u64, m: &mut [i64; 4]) {
    let (eta2, t) = run_unrolled::<K>(*eta, *f, *g);
    *eta = eta2;
    compose(&t, K, f, g, m);
}

/// [`batch`] for `N` ∈ {[`BATCH`], [`LAST`]} fixed at compile time, in unrolled runs: 19 + 19 + 19 + 5 steps
/// for a batch of 62, 19 + 13 for the last one of 32. Returns what `batch(eta, f, g, N)` returns.
#[inline(always)]
fn batch_unrolled<const N: u32>(mut eta: i64, mut f: u64, mut g: u64) -> (i64, [i64; 4]) {
    const { assert!(3 * RUN + 5 == BATCH && RUN + 13 == LAST && (N == BATCH || N == LAST)) };
    let mut m = [1i64, 0, 0, 1];
    if N == BATCH {
        advance::<RUN>(&mut eta, &mut f, &mut g, &mut m);
        advance::<RUN>(&mut eta, &mut f, &mut g, &mut m);
        advance::<RUN>(&mut eta, &mut f, &mut g, &mut m);
        advance::<5>(&mut eta, &mut f, &mut g, &mut m);
    } else {
        advance::<RUN>(&mut eta, &mut f, &mut g, &mut m);
        advance::<13>(&mut eta, &mut f, &mut g, &mut m);
    }
    let s = BATCH - N;
    (eta, m.map(|x| x << s))
}

/// x⁻¹ mod m for x below m (0 for 0), fully reduced, constant time: [`safegcd::invert`] with [`batch`].
#[inline]
pub(crate) fn invert(x: &[u64; 4], md: &Mod62) -> [u64; 4] {
    safegcd::invert_with(x, md, batch)
}

/// 2^255 − 19 in signed 62-bit limbs: −19 + 2^7·2^248. With three zero limbs, the multiple of p that
/// makes d and e divisible by 2^62 costs two small products instead of five full ones.
const P25519: [i64; 5] = [-19, 0, 0, 0, 128];
/// 2^255 − 19 in normalised 62-bit limbs (the low four in [0, 2^62)).
const P25519_NORM: [i64; 5] = [(1 << 62) - 19, M62, M62, M62, 127];
/// (2^255 − 19)⁻¹ mod 2^62, by Newton's iteration at compile time (each step doubles the correct bits).
const P25519_INV62: u64 = {
    let m = 0u64.wrapping_sub(19); // p mod 2^64
    let mut inv: u64 = 1;
    let mut i = 0;
    while i < 7 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(m.wrapping_mul(inv)));
        i += 1;
    }
    inv & (M62 as u64)
};

/// (d, e) ← t·(d, e) / 2^62 mod 2^255 − 19 for d, e in (−2p, p) with normalised limbs, leaving them there:
/// the update of `safegcd` specialised to this modulus (its limbs [`P25519`]). Constant time.
#[inline(always)]
fn update_de_25519(d: &mut [i64; 5], e: &mut [i64; 5], t: &[i64; 4]) {
    // Into (−p, p): add p to a negative one (d[4] is the sign; the low limb may go negative, which the
    // products below allow).
    let (sd, se) = (d[4] >> 63, e[4] >> 63);
    d[0] += P25519[0] & sd;
    d[4] += P25519[4] & sd;
    e[0] += P25519[0] & se;
    e[4] += P25519[4] & se;
    let [u, v, q, r] = *t;
    // k ≡ −N·p⁻¹ (mod 2^62) in (−2^62, 0] for N = u·d + v·e, so that N + k·p is divisible by 2^62 and,
    // with |N| < 2^62·p, the quotient lies in (−2p, p).
    let nd = (u as u64).wrapping_mul(d[0] as u64).wrapping_add((v as u64).wrapping_mul(e[0] as u64));
    let ne = (q as u64).wrapping_mul(d[0] as u64).wrapping_add((r as u64).wrapping_mul(e[0] as u64));
    let kd = -((nd.wrapping_mul(P25519_INV62) & M62 as u64) as i64);
    let ke = -((ne.wrapping_mul(P25519_INV62) & M62 as u64) as i64);
    let [u, v, q, r, kd, ke] = [u, v, q, r, kd, ke].map(|x| x as i128);
    let mut cd = u * d[0] as i128 + v * e[0] as i128 + kd * P25519[0] as i128;
    let mut ce = q * d[0] as i128 + r * e[0] as i128 + ke * P25519[0] as i128;
    debug_assert!(cd as i64 & M62 == 0 && ce as i64 & M62 == 0);
    cd >>= 62;
    ce >>= 62;
    for k in 1..4 {
        cd += u * d[k] as i128 + v * e[k] as i128;
        ce += q * d[k] as i128 + r * e[k] as i128;
        d[k - 1] = cd as i64 & M62;
        e[k - 1] = ce as i64 & M62;
        cd >>= 62;
        ce >>= 62;
    }
    cd += u * d[4] as i128 + v * e[4] as i128 + kd * P25519[4] as i128;
    ce += q * d[4] as i128 + r * e[4] as i128 + ke * P25519[4] as i128;
    d[3] = cd as i64 & M62;
    e[3] = ce as i64 & M62;
    d[4] = (cd >> 62) as i64;
    e[4] = (ce >> 62) as i64;
}

/// a + (m & mask), limbs normalised (the top limb keeps the sign).
#[inline(always)]
fn add_masked(a: &[i64; 5], m: &[i64; 5], mask: i64) -> [i64; 5] {
    // The barrier hides that the mask is 0 or all ones, so that LLVM cannot branch on it.
    let mask = core::hint::black_box(mask);
    let mut r = [0i64; 5];
    let mut c = 0i64;
    for k in 0..4 {
        let s = a[k] + (m[k] & mask) + c;
        r[k] = s & M62;
        c = s >> 62;
    }
    r[4] = a[4] + (m[4] & mask) + c;
    r
}

/// With g = 0 and f = ±1 (or f = ±p and d = 0 for x = 0), x⁻¹ = d·f, taken from (−2p, 2p) to [0, p) in
/// constant time.
#[inline(always)]
fn finish_25519(mut d: [i64; 5], f4: i64) -> [u64; 4] {
    // Negate d where f < 0, then add p twice where negative ([0, 2p)) and subtract p where that stays
    // non-negative ([0, p)).
    let sf = f4 >> 63;
    let mut c = 0i64;
    for dk in d.iter_mut().take(4) {
        let s = (*dk ^ sf).wrapping_sub(sf) + c;
        *dk = s & M62;
        c = s >> 62;
    }
    d[4] = (d[4] ^ sf).wrapping_sub(sf) + c;
    let mut v = add_masked(&d, &P25519_NORM, d[4] >> 63);
    v = add_masked(&v, &P25519_NORM, v[4] >> 63);
    let neg_p = P25519_NORM.map(|x| -x);
    let mut w = add_masked(&v, &neg_p, -1);
    // All ones when v − p < 0: keep v (behind the same barrier).
    let keep = core::hint::black_box(w[4] >> 63);
    for k in 0..5 {
        v[k] = (v[k] & keep) | (w[k] & !keep);
    }
    let l = v.map(|x| x as u64);
    let r = [l[0] | (l[1] << 62), (l[1] >> 2) | (l[2] << 60), (l[2] >> 4) | (l[3] << 58), (l[3] >> 6) | (l[4] << 56)];
    crate::ct::wipe(&mut d);
    crate::ct::wipe(&mut v);
    crate::ct::wipe(&mut w);
    r
}

/// x⁻¹ mod 2^255 − 19 for x below p (0 for 0), fully reduced, constant time: the inversion of
/// [`safegcd::invert`] (590 divsteps in nine batches of 62 and one of 32) with [`batch`] and the updates
/// specialised to this modulus.
#[inline]
pub(crate) fn invert_p25519(x: &[u64; 4]) -> [u64; 4] {
    let mut f = P25519_NORM;
    let mut g = to62(x);
    let mut d = [0i64; 5];
    let mut e = [1i64, 0, 0, 0, 0];
    let mut eta = -1i64; // δ = 1/2
    for b in 0..10 {
        let lf = (f[0] | (f[1] << 62)) as u64;
        let lg = (g[0] | (g[1] << 62)) as u64;
        let (eta2, t) = if b < 9 { batch_unrolled::<BATCH>(eta, lf, lg) } else { batch_unrolled::<LAST>(eta, lf, lg) };
        eta = eta2;
        update_fg(&mut f, &mut g, &t);
        update_de_25519(&mut d, &mut e, &t);
    }
    let r = finish_25519(d, f[4]);
    crate::ct::wipe(&mut d);
    crate::ct::wipe(&mut e);
    crate::ct::wipe(&mut g);
    r
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::ec::curve25519::field::tests::Xs;

    fn big(w: &[u64; 4]) -> num_bigint::BigInt {
        num_bigint::BigInt::from(num_bigint::BigUint::from_slice(
            &w.iter().flat_map(|x| [*x as u32, (*x >> 32) as u32]).collect::<std::vec::Vec<_>>(),
        ))
    }

    fn big62(v: &[i64; 5]) -> num_bigint::BigInt {
        v.iter().rev().fold(num_bigint::BigInt::from(0), |a, &x| (a << 62u32) + x)
    }

    fn p25519() -> num_bigint::BigInt {
        (num_bigint::BigInt::from(1) << 255u32) - 19
    }

    /// Edge values below p (0, 1, 2, p − 1, p − 2, (p ± 1)/2, values with only high limbs, 2^k and
    /// 2^k − 1) and random ones, as 64-bit words.
    fn values(rng: &mut Xs, random: usize) -> std::vec::Vec<[u64; 4]> {
        let p = [!18u64, !0, !0, (1 << 63) - 1];
        let mut xs = std::vec![
            [0, 0, 0, 0],
            [1, 0, 0, 0],
            [2, 0, 0, 0],
            [!19, !0, !0, (1 << 63) - 1],
            [!20, !0, !0, (1 << 63) - 1],
            [!9, !0, !0, (1 << 62) - 1],
            [!8, !0, !0, (1 << 62) - 1],
            [0, 0, 0, 1 << 62],
            [0, 0, 0, (1 << 63) - 1],
            [0, 0, !0, (1 << 63) - 1],
            [!0, !0, !0, (1 << 62) - 1],
        ];
        for k in [1u32, 61, 62, 63, 64, 124, 128, 186, 192, 248, 254] {
            let mut w = [0u64; 4];
            w[(k / 64) as usize] = 1 << (k % 64);
            xs.push(w);
            let mut m = [0u64; 4];
            for (i, o) in m.iter_mut().enumerate() {
                let lo = 64 * i as u32;
                *o = if k >= lo + 64 {
                    !0
                } else if k > lo {
                    (1u64 << (k - lo)) - 1
                } else {
                    0
                };
            }
            xs.push(m);
        }
        for _ in 0..random {
            let mut w = [rng.next(), rng.next(), rng.next(), rng.next() >> 1];
            if w >= p {
                w[3] >>= 1;
            }
            xs.push(w);
        }
        xs
    }

    /// The specialised update of d and e against its definition: 2^62·(d', e') ≡ t·(d, e) (mod p) and
    /// d', e' in (−2p, p) with normalised limbs, for the matrices of real batches and d, e from edge and
    /// random values in (−2p, p).
    #[test]
    fn update_de_25519_matches_its_definition() {
        let mut rng = Xs(0x5afe_9cd0_0000_0003);
        let p = p25519();
        let xs = values(&mut rng, 300);
        let mut n = 0;
        for (i, a) in xs.iter().enumerate() {
            let b = &xs[(i * 7 + 3) % xs.len()];
            // d, e in (−2p, p): a, a − p, a − 2p + 1 (and the same for b).
            for (sa, sb) in [(0, 0), (1, 2), (2, 1), (2, 2), (1, 0)] {
                let to = |w: &[u64; 4], s: i32| -> [i64; 5] {
                    let mut v = big(w);
                    if s == 1 {
                        v -= &p;
                    } else if s == 2 {
                        v -= &p * 2u32 - 1u32;
                    }
                    // Normalised limbs of v (top limb signed).
                    let mut out = [0i64; 5];
                    let mut rest = v;
                    for o in out.iter_mut().take(4) {
                        let lo = &rest & num_bigint::BigInt::from(M62);
                        *o = i64::try_from(&lo).unwrap();
                        rest = (rest - lo) >> 62u32;
                    }
                    out[4] = i64::try_from(&rest).unwrap();
                    out
                };
                let (mut d, mut e) = (to(a, sa), to(b, sb));
                let (d0, e0) = (big62(&d), big62(&e));
                let eta = (rng.next() % 40) as i64 - 20;
                let (_, t) = batch(eta, rng.next() | 1, rng.next(), if n % 3 == 0 { LAST } else { BATCH });
                n += 1;
                update_de_25519(&mut d, &mut e, &t);
                let [u, v, q, r] = t.map(num_bigint::BigInt::from);
                for (got, want) in [(&d, &u * &d0 + &v * &e0), (&e, &q * &d0 + &r * &e0)] {
                    let g = big62(got);
                    assert!(got[..4].iter().all(|&l| (0..=M62).contains(&l)), "limbs {got:?}");
                    assert!(g > -(&p * 2u32) && g < p, "range {g}");
                    assert_eq!(((g << 62u32) - want) % &p, num_bigint::BigInt::from(0), "{i}");
                }
            }
        }
    }

    /// The specialised inversion: x·x⁻¹ ≡ 1 (mod p), fully reduced, and the same result as the generic
    /// inversion, on edge and random x (0 gives 0).
    #[test]
    fn invert_p25519_inverts() {
        let mut rng = Xs(0x5afe_9cd0_0000_0004);
        let p = p25519();
        for x in values(&mut rng, 3000) {
            let got = invert_p25519(&x);
            assert_eq!(got, invert(&x, &crate::ec::curve25519::field::P62), "{x:x?}");
            let g = big(&got);
            assert!(g < p, "{x:x?}");
            let want = if x == [0; 4] { 0 } else { 1 };
            assert_eq!(big(&x) * g % &p, num_bigint::BigInt::from(want), "{x:x?}");
        }
    }

    /// The final reduction: d·sign(f) taken to [0, p) for d over (−2p, p) (edges around 0, ±p and −2p,
    /// and random values), with f of either sign.
    #[test]
    fn finish_25519_reduces() {
        let mut rng = Xs(0x5afe_9cd0_0000_0005);
        let p = p25519();
        let limbs = |v: &num_bigint::BigInt| -> [i64; 5] {
            let mut out = [0i64; 5];
            let mut rest = v.clone();
            for o in out.iter_mut().take(4) {
                let lo = &rest & num_bigint::BigInt::from(M62);
                *o = i64::try_from(&lo).unwrap();
                rest = (rest - lo) >> 62u32;
            }
            out[4] = i64::try_from(&rest).unwrap();
            out
        };
        let mut ds = std::vec::Vec::new();
        for base in [num_bigint::BigInt::from(0), p.clone(), -p.clone(), -(&p * 2u32) + 1u32] {
            for k in 0..4u32 {
                ds.push(&base + k);
                ds.push(&base - k);
            }
        }
        for x in values(&mut rng, 200) {
            ds.push(big(&x));
            ds.push(big(&x) - &p);
            ds.push(big(&x) - &p * 2u32 + 1u32);
        }
        for d in ds.iter().filter(|d| **d > -(&p * 2u32) && **d < p) {
            for f4 in [1i64, -1] {
                let got = big(&finish_25519(limbs(d), f4));
                let want = ((d * f4) % &p + &p) % &p;
                assert_eq!(got, want, "{d} {f4}");
            }
        }
    }

    /// Every batch length the inversion uses, and every run length, against the reference divsteps, from
    /// random and edge starting points (η over a range wider than an inversion reaches, f odd, g with long
    /// runs of zeros and ones, so that the conditions take every combination).
    #[test]
    fn packed_divsteps_match_the_reference() {
        let mut rng = Xs(0x5afe_9cd0_0000_0002);
        for i in 0..20_000u32 {
            let eta = (rng.next() % 1400) as i64 - 700;
            let mut f = rng.next() | 1;
            let mut g = rng.next();
            match i % 8 {
                0 => g = 0,
                1 => g = 1 << (i % 64),
                2 => g = u64::MAX,
                3 => f = u64::MAX,
                4 => f = 1,
                5 => g &= rng.next() & rng.next(),
                _ => {}
            }
            assert_eq!(batch(eta, f, g, BATCH), safegcd::divsteps::<BATCH>(eta, f as i64, g as i64), "62: {i}");
            assert_eq!(batch(eta, f, g, LAST), safegcd::divsteps::<LAST>(eta, f as i64, g as i64), "last: {i}");
            assert_eq!(batch_unrolled::<BATCH>(eta, f, g), batch(eta, f, g, BATCH), "unrolled 62: {i}");
            assert_eq!(batch_unrolled::<LAST>(eta, f, g), batch(eta, f, g, LAST), "unrolled last: {i}");
            // Single runs, including the lengths a batch ends with (5 of 62, 13 of 32).
            macro_rules! runs {
                ($($n:literal),*) => {$(
                    let (e1, [u, v, q, r]) = run(eta, f, g, $n);
                    let s = BATCH - $n;
                    let want = safegcd::divsteps::<$n>(eta, f as i64, g as i64);
                    assert_eq!((e1, [u << s, v << s, q << s, r << s]), want, "run {}: {i}", $n);
                )*};
            }
            runs!(1, 2, 5, 13, 18, 19);
        }
    }
}
