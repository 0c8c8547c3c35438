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

fn small_primes() -> &'static [u32] {
    &SMALL_PRIMES
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

/// True if no small prime divides `w` (`w` itself larger than every small prime).
pub(crate) fn passes_trial_division(w: &[u64]) -> bool {
    for &s in small_primes() {
        if bigint::rem_small(w, s) == 0 {
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
    // a = number of trailing zero bits of w − 1, found without branches; m = (w − 1) >> a.
    let mut a = 0u64;
    let mut seen = 0u64;
    for i in 0..64 * l {
        let bit = (wm1[i / 64] >> (i % 64)) & 1;
        seen |= bit;
        a += 1 ^ seen;
    }
    let mut m = wm1.clone();
    for k in 0..64 * l {
        let mut sh = m.clone();
        bigint::shr1(&mut sh);
        let doit = ((k as u64).wrapping_sub(a) >> 63) & 1; // k < a
        bigint::cond_copy(&mut m, &sh, doit);
        sh.zeroize();
    }
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
        let t = small_primes();
        assert_eq!(t[0], 3);
        assert_eq!(t[t.len() - 1], 16381);
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
