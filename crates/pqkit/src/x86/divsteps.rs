//! The constant-time safegcd inversion on x86_64: the Bernstein–Yang divsteps of [`crate::ec::safegcd`]
//! (its batches of 62 and its updates of f, g, d and e), with each batch's divsteps done on packed words by
//! `cmov` instead of on six separate variables by masks. Baseline x86_64 only (no CPU feature to check):
//! both Curve25519 backends invert with it.
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
//! Each step is the same straight-line sequence of `add`, `sub`, `test`, `cmov` and shifts; the conditions
//! select values through `cmov`, never a branch, and the only jump is the loop's, on the step count (public).

#![allow(unsafe_code)]

use crate::ec::safegcd::{self, BATCH, Mod62};
use core::arch::asm;

/// The longest run of divsteps on one pair of packed words.
const RUN: u32 = 19;
/// The low bits of f and g a run starts from.
const LOW: u64 = (1 << RUN) - 1;

/// `n` (1 ≤ n ≤ [`RUN`]) divsteps in the half-delta variant of [`safegcd::divsteps`] from η and the low
/// [`RUN`] bits of f (odd) and g, on packed words (see the module docs). Returns the new η and the exact
/// matrix [u, v, q, r] with 2^n·(f', g') = (u·f + v·g, q·f + r·g).
#[inline(always)]
fn run(eta: i64, f: u64, g: u64, n: u32) -> (i64, [i64; 4]) {
    debug_assert!((1..=RUN).contains(&n) && f & 1 == 1);
    let mut ff = (f & LOW) as i64 | (1i64 << (n + 21));
    let mut gg = (g & LOW) as i64 | (1i64 << (n + 42));
    let mut eta = eta;
    // SAFETY: plain x86_64 integer instructions on registers only (no memory, no stack); `cmov` is part of
    // every x86_64 CPU. The loop runs `n` ≥ 1 times.
    unsafe {
        asm!(
            "2:",
            // a = g + f, b = g − f, h = f, ne = ¬η = −η − 1.
            "mov {a}, {g}",
            "add {a}, {f}",
            "mov {b}, {g}",
            "sub {b}, {f}",
            "mov {h}, {f}",
            "mov {ne}, {eta}",
            "not {ne}",
            // δ > 0 (η < 0): g − f, and f would take the old g, and η would become −η − 1 (then − 1).
            "test {eta}, {eta}",
            "cmovs {a}, {b}",
            "cmovs {h}, {g}",
            "cmovns {ne}, {eta}",
            // g odd: take them. Then g ← g/2, η ← η − 1.
            "test {g:l}, 1",
            "cmovnz {g}, {a}",
            "cmovnz {f}, {h}",
            "cmovnz {eta}, {ne}",
            "sar {g}, 1",
            "dec {eta}",
            "dec {n:e}",
            "jnz 2b",
            f = inout(reg) ff,
            g = inout(reg) gg,
            eta = inout(reg) eta,
            n = inout(reg) n => _,
            a = out(reg) _,
            b = out(reg) _,
            h = out(reg) _,
            ne = out(reg) _,
            options(pure, nomem, nostack),
        );
    }
    // Fields by rounding: + 2^20 makes the low field non-negative, + 2^41 the middle one (|u|, |q| < 2^20).
    const BIAS: i64 = (1 << 20) + (1 << 41);
    const FIELD: i64 = (1 << 21) - 1;
    let (wf, wg) = (ff.wrapping_add(BIAS), gg.wrapping_add(BIAS));
    let u = ((wf >> 21) & FIELD) - (1 << 20);
    let v = wf >> 42;
    let q = ((wg >> 21) & FIELD) - (1 << 20);
    let r = wg >> 42;
    (eta, [u, v, q, r])
}

/// `n` ∈ {[`BATCH`], [`LAST`](safegcd::LAST)} divsteps from η and the low 64 bits of f (odd) and g: what
/// [`safegcd::divsteps`]`::<n>` returns (the matrix scaled to 2^62), in runs of at most [`RUN`] steps.
#[inline(always)]
pub(crate) fn batch(mut eta: i64, mut f: u64, mut g: u64, n: u32) -> (i64, [i64; 4]) {
    let (mut u, mut v, mut q, mut r) = (1i64, 0i64, 0i64, 1i64);
    let mut done = 0;
    while done < n {
        let k = if n - done < RUN { n - done } else { RUN };
        let (eta2, [u1, v1, q1, r1]) = run(eta, f, g, k);
        eta = eta2;
        // The low bits of f and g after the run (64 − k of them are right), and the matrix so far.
        let nf = (u1 as u64).wrapping_mul(f).wrapping_add((v1 as u64).wrapping_mul(g));
        let ng = (q1 as u64).wrapping_mul(f).wrapping_add((r1 as u64).wrapping_mul(g));
        f = nf >> k;
        g = ng >> k;
        (u, v, q, r) = (
            u1.wrapping_mul(u).wrapping_add(v1.wrapping_mul(q)),
            u1.wrapping_mul(v).wrapping_add(v1.wrapping_mul(r)),
            q1.wrapping_mul(u).wrapping_add(r1.wrapping_mul(q)),
            q1.wrapping_mul(v).wrapping_add(r1.wrapping_mul(r)),
        );
        done += k;
    }
    let s = BATCH - n;
    (eta, [u << s, v << s, q << s, r << s])
}

/// x⁻¹ mod m for x below m (0 for 0), fully reduced, constant time: [`safegcd::invert`] with [`batch`].
#[inline]
pub(crate) fn invert(x: &[u64; 4], md: &Mod62) -> [u64; 4] {
    safegcd::invert_with(x, md, batch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ec::curve25519::field::tests::Xs;
    use crate::ec::safegcd::LAST;

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
