//! FIPS 186-5 §A.1.3 probable-prime generation for RSA: random odd candidates with the top two bits set, trial
//! division by small primes, gcd(e, p − 1) = 1, then Miller–Rabin (§B.3.1) with the round counts of Table B.1.
//!
//! A candidate that fails is discarded, so where it fails may leak; the arithmetic on the candidate that is kept
//! (the residues, the Miller–Rabin exponentiations) is constant time. The one exception: the Miller–Rabin loop
//! runs `a` squarings where 2^a is the largest power of two dividing w − 1 (a few low bits of p).

use alloc::vec;
use alloc::vec::Vec;
use zeroize::Zeroize;

use super::bigint;
use super::mont::MontCtx;

const SIEVE_LIMIT: usize = 1 << 14;
const SMALL_COUNT: usize = 1899; // odd primes below 2^14

/// Odd primes below 2^14 used for trial division (public), computed at compile time by a sieve.
static SMALL_PRIMES: [u32; SMALL_COUNT] = sieve();

const fn sieve() -> [u32; SMALL_COUNT] {
    let mut composite = [false; SIEVE_LIMIT];
    let mut out = [0u32; SMALL_COUNT];
    let mut k = 0;
    let mut i = 3;
    while i < SIEVE_LIMIT {
        if !composite[i] {
            out[k] = i as u32;
            k += 1;
            let mut j = i * i;
            while j < SIEVE_LIMIT {
                composite[j] = true;
                j += i;
            }
        }
        i += 2;
    }
    assert!(k == SMALL_COUNT);
    out
}

/// Consecutive small primes whose product `m` stays below 2^32, with `mu = floor(2^64 / m)` for the
/// Barrett step of [`residues`] (public constants, computed at compile time).
#[derive(Clone, Copy)]
struct Group {
    m: u64,
    mu: u64,
    first: usize,
    end: usize,
}

const fn make_groups<const N: usize>() -> [Group; N] {
    let mut out = [Group { m: 1, mu: u64::MAX, first: 0, end: 0 }; N];
    let mut g = 0;
    let mut i = 0;
    while i < SMALL_COUNT {
        let first = i;
        let mut m = 1u64;
        while i < SMALL_COUNT && m * (SMALL_PRIMES[i] as u64) < (1 << 32) {
            m *= SMALL_PRIMES[i] as u64;
            i += 1;
        }
        if g < N {
            out[g] = Group { m, mu: u64::MAX / m, first, end: i };
        }
        g += 1;
    }
    assert!(g == N);
    out
}

const fn group_count() -> usize {
    // The same walk as make_groups, counting.
    let mut g = 0;
    let mut i = 0;
    while i < SMALL_COUNT {
        let mut m = 1u64;
        while i < SMALL_COUNT && m * (SMALL_PRIMES[i] as u64) < (1 << 32) {
            m *= SMALL_PRIMES[i] as u64;
            i += 1;
        }
        g += 1;
    }
    g
}

const GROUP_COUNT: usize = group_count();
static GROUPS: [Group; GROUP_COUNT] = make_groups::<GROUP_COUNT>();

/// Per small prime p: (p^-1 mod 2^32, floor((2^32 − 1) / p)). For odd p and r < 2^32, p divides r exactly when
/// r·p^-1 mod 2^32 ≤ floor((2^32 − 1) / p) (Granlund–Montgomery): a multiplication and a comparison, no division.
static DIVISIBILITY: [(u32, u32); SMALL_COUNT] = divisibility();

const fn divisibility() -> [(u32, u32); SMALL_COUNT] {
    let mut out = [(0u32, 0u32); SMALL_COUNT];
    let mut i = 0;
    while i < SMALL_COUNT {
        let p = SMALL_PRIMES[i];
        let mut inv = p; // correct to 3 bits
        let mut k = 0;
        while k < 4 {
            inv = inv.wrapping_mul(2u32.wrapping_sub(p.wrapping_mul(inv)));
            k += 1;
        }
        assert!(p.wrapping_mul(inv) == 1);
        out[i] = (inv, u32::MAX / p);
        i += 1;
    }
    out
}

/// One Barrett step: `(r·2^32 + h) mod m` for `r < m < 2^32`, `h < 2^32`. The estimate `x·mu/2^64` is at most one
/// below the true quotient, so one masked subtraction finishes. Constant time.
#[inline(always)]
fn barrett_step(r: u64, h: u64, m: u64, mu: u64) -> u64 {
    let x = (r << 32) | h;
    let q = ((x as u128 * mu as u128) >> 64) as u64;
    let t = x.wrapping_sub(q.wrapping_mul(m));
    t - (m & bigint::mask((m.wrapping_sub(1).wrapping_sub(t) >> 63) & 1))
}

/// `w mod m` for four group moduli at once (four independent chains), 32 bits at a time from the top.
#[inline(always)]
fn residues(w: &[u64], g: [&Group; 4]) -> [u64; 4] {
    let mut r = [0u64; 4];
    for &limb in w.iter().rev() {
        for h in [limb >> 32, limb & 0xffff_ffff] {
            for k in 0..4 {
                r[k] = barrett_step(r[k], h, g[k].m, g[k].mu);
            }
        }
    }
    r
}

/// Miller–Rabin rounds for a prime of `bits` bits in an RSA modulus of 2·bits bits: FIPS 186-5 Table B.1
/// (p, q probable primes, M-R only): nlen 2048 → 5 rounds, 3072 → 4, 4096 → 4 (error ≤ 2^-112/2^-128/2^-144
/// per the table's targets). Smaller sizes (tests only) get 7.
pub(crate) fn mr_rounds(bits: usize) -> usize {
    if bits >= 1536 {
        4
    } else if bits >= 1024 {
        5
    } else {
        7
    }
}

/// True if no small prime (3 … 16381) divides `w` (`w` itself larger than every small prime).
///
/// The residues of `w` modulo products of about two to eight small primes (each below 2^32) are computed with
/// multiplications only, four products at a time, then tested against each prime by multiplication. A
/// candidate stops at the first block of four products with a divisor: only rejected candidates stop early, so
/// the work done on a candidate that is kept is always the same.
pub(crate) fn passes_trial_division(w: &[u64]) -> bool {
    for block in GROUPS.chunks(4) {
        let g: [&Group; 4] = core::array::from_fn(|k| &block[k.min(block.len() - 1)]);
        let r = residues(w, g);
        let mut hit = 0u32;
        for (k, grp) in block.iter().enumerate() {
            for &(inv, lim) in &DIVISIBILITY[grp.first..grp.end] {
                hit |= ((r[k] as u32).wrapping_mul(inv) <= lim) as u32;
            }
        }
        if hit != 0 {
            return false;
        }
    }
    true
}

/// Miller–Rabin (FIPS 186-5 §B.3.1) with `rounds` random bases. `w` odd, > 3.
pub(crate) fn miller_rabin<R: rand_core::CryptoRng + ?Sized>(w: &[u64], rounds: usize, rng: &mut R) -> bool {
    let l = w.len();
    let ctx = MontCtx::new(w);
    let mut wm1 = w.to_vec();
    wm1[0] &= !1; // w odd: w − 1
    // a = number of trailing zero bits of w − 1; m = (w − 1) >> a (both constant time).
    let a = bigint::trailing_zeros_ct(&wm1);
    let mut m = wm1.clone();
    bigint::shr_ct(&mut m, a);
    let minus_one_m = {
        let mut t = ctx.one.clone();
        let z = vec![0u64; l];
        let mut zz = z.clone();
        ctx.sub_mod(&mut zz, &t);
        t.zeroize();
        zz // −1 in Montgomery form
    };
    let nbytes = 8 * l;
    let mut buf = vec![0u8; nbytes];
    let bits = bigint::bits_ct(w);
    let mut result = true;
    for _ in 0..rounds {
        // b uniform in [2, w − 2] by rejection.
        let b = loop {
            rng.fill_bytes(&mut buf);
            let mut b = bigint::from_be(&buf, l).unwrap_or_else(|| vec![0u64; l]);
            // keep only `bits` bits
            for i in 0..64 * l {
                let keep = ((i as u64).wrapping_sub(bits as u64) >> 63) & 1;
                b[i / 64] &= !(((1 ^ keep) & 1) << (i % 64));
            }
            let mut two = vec![0u64; l];
            two[0] = 2;
            let mut wm2 = wm1.clone();
            bigint::sub_assign(&mut wm2, &[1]);
            let ok = (1 ^ bigint::lt(&b, &two)) & (1 ^ bigint::lt(&wm2, &b));
            wm2.zeroize();
            if ok == 1 {
                break b;
            }
            b.zeroize();
        };
        let bm = ctx.to_mont(&b);
        let mut z = ctx.pow_ct(&bm, &m);
        let mut pass = bigint::eq(&z, &ctx.one) | bigint::eq(&z, &minus_one_m);
        let mut tmp = vec![0u64; l];
        for _ in 1..a {
            ctx.sqr(&mut tmp, &z);
            core::mem::swap(&mut z, &mut tmp);
            pass |= bigint::eq(&z, &minus_one_m);
            // reaching 1 without −1 first means composite; pass stays 0 from then on as 1² = 1 ≠ −1.
        }
        z.zeroize();
        tmp.zeroize();
        if pass == 0 {
            result = false;
            break;
        }
    }
    buf.zeroize();
    m.zeroize();
    wm1.zeroize();
    result
}

/// A probable prime of exactly `bits` bits (a multiple of 64 here: 1024, 1536 or 2048, or smaller in tests)
/// with its top two bits set and gcd(e, p − 1) = 1 (e an odd prime < 2^20).
pub(crate) fn generate_prime<R: rand_core::CryptoRng + ?Sized>(bits: usize, e: u32, rng: &mut R) -> Vec<u64> {
    let l = bigint::limbs_for_bits(bits);
    let nbytes = bits.div_ceil(8);
    let mut buf = vec![0u8; nbytes];
    loop {
        rng.fill_bytes(&mut buf);
        let extra = nbytes * 8 - bits;
        buf[0] &= 0xff >> extra;
        buf[0] |= 0xc0 >> extra;
        if extra == 7 {
            buf[1] |= 0x80;
        }
        buf[nbytes - 1] |= 1;
        let mut w = bigint::from_be(&buf, l).expect("fits");
        let ok = passes_trial_division(&w)
            && {
                let mut wm1 = w.clone();
                wm1[0] &= !1;
                let r = bigint::rem_small(&wm1, e);
                wm1.zeroize();
                r != 0
            }
            && miller_rabin(&w, mr_rounds(bits), rng);
        if ok {
            buf.zeroize();
            return w;
        }
        w.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_primes() {
        let t = &SMALL_PRIMES[..];
        assert_eq!(t[0], 3);
        assert_eq!(t[t.len() - 1], 16381);
    }

    #[test]
    fn groups_cover_every_prime_once() {
        let mut next = 0;
        for g in GROUPS.iter() {
            assert_eq!(g.first, next);
            assert!(g.end > g.first);
            let prod: u64 = SMALL_PRIMES[g.first..g.end].iter().map(|&p| p as u64).product();
            assert_eq!(prod, g.m);
            assert!(g.m < 1 << 32);
            assert_eq!(g.mu, u64::MAX / g.m);
            next = g.end;
        }
        assert_eq!(next, SMALL_COUNT);
    }

    /// The multiplication-only trial division agrees with plain division on random and constructed inputs:
    /// multiples of each small prime (first, last, every group boundary) are rejected, and values free of
    /// small factors pass.
    #[test]
    fn trial_division_matches_plain_division() {
        use rand_core::Rng;
        let mut rng = crate::rng::ChaCha20Rng::from_key([9; 32]);
        let plain = |w: &[u64]| {
            SMALL_PRIMES.iter().all(|&s| {
                let mut r = 0u128;
                for &x in w.iter().rev() {
                    r = ((r << 64) | x as u128) % s as u128;
                }
                r != 0
            })
        };
        let mut passed = 0;
        for len in [1usize, 2, 16, 24, 32] {
            for _ in 0..300 {
                let mut w = vec![0u64; len];
                for x in w.iter_mut() {
                    *x = rng.next_u64();
                }
                w[0] |= 1;
                w[len - 1] |= 1 << 63;
                let want = plain(&w);
                assert_eq!(passes_trial_division(&w), want);
                passed += want as usize;
            }
        }
        assert!(passed > 100, "some random odd values must pass");
        // w = p · (random odd), for primes at the start, the end and every group boundary.
        for g in GROUPS.iter() {
            for &p in [SMALL_PRIMES[g.first], SMALL_PRIMES[g.end - 1]].iter() {
                let mut x = vec![0u64; 16];
                for v in x.iter_mut() {
                    *v = rng.next_u64();
                }
                x[15] >>= 16;
                let w = bigint::mul_small(&x, p as u64);
                assert!(!passes_trial_division(&w[..16]), "multiple of {p} passed");
            }
        }
        // A large prime (2^127 − 1) has no small factor.
        assert!(passes_trial_division(&[u64::MAX, (1u64 << 63) - 1]));
    }

    #[test]
    fn mr_known() {
        let mut rng = crate::rng::ChaCha20Rng::from_key([7; 32]);
        // 2^127 − 1 is prime; 2^128 + 1 = 59649589127497217 · 5704689200685129054721 is not.
        let p = [u64::MAX, (1u64 << 63) - 1];
        assert!(miller_rabin(&p, 10, &mut rng));
        let c = [1u64, 0, 1];
        assert!(!miller_rabin(&c, 10, &mut rng));
        // Carmichael 561·... use a strong pseudoprime-to-base-2 composite: 3215031751 = 151·751·28351
        assert!(!miller_rabin(&[3_215_031_751], 10, &mut rng));
        assert!(miller_rabin(&[0xffff_ffff_ffff_ffc5], 10, &mut rng));
    }
}
