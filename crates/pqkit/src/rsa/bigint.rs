//! Fixed-length big integers as little-endian slices of 64-bit limbs.
//!
//! Every function here whose name does not end in `_vartime` runs in time that depends only on the slice
//! lengths (which are public: they follow from the key size), never on the limb values. The `_vartime` ones
//! are for public data only (the modulus, the public exponent, ciphertexts and signatures).

use alloc::vec;
use alloc::vec::Vec;

/// Largest modulus in limbs (8192 bits).
pub(crate) const MAX_LIMBS: usize = 128;

/// All-ones if `bit` is 1, zero if it is 0 (`bit` must be 0 or 1).
///
/// The value barrier is on the mask, not on the bit: with it on the bit, LLVM still knew the mask to be 0 or
/// all-ones and compiled the selections `(a & !m) | (b & m)` into branches on the secret bit (the constant-time
/// job found it in `mont_mul_n`, `mont_sqr_n`, `cond_sub`, `cond_add` and the table scan `select`).
#[inline(always)]
pub(crate) fn mask(bit: u64) -> u64 {
    core::hint::black_box(0u64.wrapping_sub(bit & 1))
}

/// 1 if `x` is zero, else 0, without a branch.
#[inline(always)]
pub(crate) fn is_zero_u64(x: u64) -> u64 {
    1 ^ ((x | x.wrapping_neg()) >> 63)
}

/// Number of limbs needed for `bits` bits.
pub(crate) fn limbs_for_bits(bits: usize) -> usize {
    bits.div_ceil(64)
}

/// Big-endian bytes (any length; leading zeros allowed) into `n` limbs. Returns `None` if the value does not
/// fit. Time depends only on the lengths.
pub(crate) fn from_be(bytes: &[u8], n: usize) -> Option<Vec<u64>> {
    let mut out = vec![0u64; n];
    let mut overflow = 0u8;
    for (i, &b) in bytes.iter().rev().enumerate() {
        let limb = i / 8;
        if limb < n {
            out[limb] |= (b as u64) << (8 * (i % 8));
        } else {
            overflow |= b;
        }
    }
    if core::hint::black_box(overflow) != 0 {
        return None;
    }
    Some(out)
}

/// The low `len` bytes of `a`, big-endian. Bytes of `a` beyond `len` are ignored (callers make sure they are
/// zero).
pub(crate) fn to_be(a: &[u64], len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    for i in 0..len {
        let limb = i / 8;
        let b = if limb < a.len() { (a[limb] >> (8 * (i % 8))) as u8 } else { 0 };
        out[len - 1 - i] = b;
    }
    out
}

/// Strips leading zero bytes (for public values, or for exports whose length is public anyway).
pub(crate) fn minimal_be(mut v: Vec<u8>) -> Vec<u8> {
    let z = v.iter().take_while(|&&b| b == 0).count();
    if z == v.len() {
        return vec![0];
    }
    v.drain(..z);
    v
}

/// Bit length of a public value.
pub(crate) fn bits_vartime(a: &[u64]) -> usize {
    for i in (0..a.len()).rev() {
        if a[i] != 0 {
            return 64 * i + 64 - a[i].leading_zeros() as usize;
        }
    }
    0
}

/// Bit length of a secret value, without secret-dependent branches (time depends on `a.len()` only).
pub(crate) fn bits_ct(a: &[u64]) -> usize {
    let mut bits = 0u64;
    for (i, &w) in a.iter().enumerate() {
        let nz = 1 ^ is_zero_u64(w);
        // 64 - lzcnt; lzcnt is constant time on x86-64 (and `leading_zeros` compiles to it or to a bsr with a
        // zero fix-up); written branch-free anyway.
        let lb = 64 - leading_zeros_ct(w);
        bits = (bits & !mask(nz)) | ((64 * i as u64 + lb) & mask(nz));
    }
    bits as usize
}

fn leading_zeros_ct(mut x: u64) -> u64 {
    // Branch-free binary search.
    let mut n = 0u64;
    for s in [32u32, 16, 8, 4, 2, 1] {
        let hi_zero = is_zero_u64(x >> (64 - s));
        n += hi_zero * s as u64;
        x = (x & !mask(hi_zero)) | ((x << s) & mask(hi_zero));
    }
    n + is_zero_u64(x)
}

/// `a += b` over `a.len()` limbs (`b` may be shorter); returns the carry out.
pub(crate) fn add_assign(a: &mut [u64], b: &[u64]) -> u64 {
    let mut c = 0u64;
    for i in 0..a.len() {
        let bi = if i < b.len() { b[i] } else { 0 };
        let (s1, c1) = a[i].overflowing_add(bi);
        let (s2, c2) = s1.overflowing_add(c);
        a[i] = s2;
        c = (c1 | c2) as u64;
    }
    c
}

/// `a -= b` over `a.len()` limbs (`b` may be shorter); returns the borrow out.
pub(crate) fn sub_assign(a: &mut [u64], b: &[u64]) -> u64 {
    let mut br = 0u64;
    for i in 0..a.len() {
        let bi = if i < b.len() { b[i] } else { 0 };
        let (d1, b1) = a[i].overflowing_sub(bi);
        let (d2, b2) = d1.overflowing_sub(br);
        a[i] = d2;
        br = (b1 | b2) as u64;
    }
    br
}

/// `a -= b` only if `bit` is 1 (constant time).
pub(crate) fn cond_sub(a: &mut [u64], b: &[u64], bit: u64) -> u64 {
    let m = mask(bit);
    let mut br = 0u64;
    for i in 0..a.len() {
        let bi = if i < b.len() { b[i] & m } else { 0 };
        let (d1, b1) = a[i].overflowing_sub(bi);
        let (d2, b2) = d1.overflowing_sub(br);
        a[i] = d2;
        br = (b1 | b2) as u64;
    }
    br
}

/// `a += b` only if `bit` is 1 (constant time).
pub(crate) fn cond_add(a: &mut [u64], b: &[u64], bit: u64) -> u64 {
    let m = mask(bit);
    let mut c = 0u64;
    for i in 0..a.len() {
        let bi = if i < b.len() { b[i] & m } else { 0 };
        let (s1, c1) = a[i].overflowing_add(bi);
        let (s2, c2) = s1.overflowing_add(c);
        a[i] = s2;
        c = (c1 | c2) as u64;
    }
    c
}

/// `dst = if bit { src } else { dst }` (constant time).
pub(crate) fn cond_copy(dst: &mut [u64], src: &[u64], bit: u64) {
    let m = mask(bit);
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = (*d & !m) | (s & m);
    }
}

/// 1 if `a < b` (same length or `b` shorter), constant time.
pub(crate) fn lt(a: &[u64], b: &[u64]) -> u64 {
    let mut br = 0u64;
    for i in 0..a.len() {
        let bi = if i < b.len() { b[i] } else { 0 };
        let (d1, b1) = a[i].overflowing_sub(bi);
        let (_, b2) = d1.overflowing_sub(br);
        br = (b1 | b2) as u64;
    }
    // Limbs of b beyond a.len() make b larger if any is non-zero.
    let mut hi = 0u64;
    for &w in b.iter().skip(a.len()) {
        hi |= w;
    }
    br | (1 ^ is_zero_u64(hi))
}

/// 1 if `a == b` (same length), constant time.
pub(crate) fn eq(a: &[u64], b: &[u64]) -> u64 {
    let mut acc = 0u64;
    for i in 0..a.len().max(b.len()) {
        let x = if i < a.len() { a[i] } else { 0 };
        let y = if i < b.len() { b[i] } else { 0 };
        acc |= x ^ y;
    }
    is_zero_u64(acc)
}

/// 1 if `a` is zero, constant time.
pub(crate) fn is_zero(a: &[u64]) -> u64 {
    let mut acc = 0u64;
    for &w in a {
        acc |= w;
    }
    is_zero_u64(acc)
}

/// Schoolbook product `a·b` into `a.len() + b.len()` limbs.
pub(crate) fn mul(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; a.len() + b.len()];
    for (i, &ai) in a.iter().enumerate() {
        let mut c = 0u128;
        for (j, &bj) in b.iter().enumerate() {
            let t = (ai as u128) * (bj as u128) + out[i + j] as u128 + c;
            out[i + j] = t as u64;
            c = t >> 64;
        }
        out[i + b.len()] = c as u64;
    }
    out
}

/// `a·s` for a one-limb `s`, into `a.len() + 1` limbs.
pub(crate) fn mul_small(a: &[u64], s: u64) -> Vec<u64> {
    let mut out = vec![0u64; a.len() + 1];
    let mut c = 0u128;
    for (i, &ai) in a.iter().enumerate() {
        let t = (ai as u128) * (s as u128) + c;
        out[i] = t as u64;
        c = t >> 64;
    }
    out[a.len()] = c as u64;
    out
}

/// `a mod m` by shift-and-subtract, one bit at a time: constant time in both `a` and `m` (only the lengths
/// matter). Slow (bits(a)·len(m) limb operations) and meant for key import and generation, never per
/// operation. `m` must be non-zero. Returns `m.len()` limbs.
pub(crate) fn rem_ct(a: &[u64], m: &[u64]) -> Vec<u64> {
    let n = m.len();
    // r has one extra limb so that 2r + bit never overflows.
    let mut r = vec![0u64; n + 1];
    for i in (0..a.len() * 64).rev() {
        let bit = (a[i / 64] >> (i % 64)) & 1;
        // r = 2r + bit
        let mut carry = bit;
        for w in r.iter_mut() {
            let nc = *w >> 63;
            *w = (*w << 1) | carry;
            carry = nc;
        }
        // if r >= m { r -= m }
        let ge = 1 ^ lt(&r, m);
        cond_sub(&mut r, m, ge);
    }
    r.truncate(n);
    r
}

/// Residue of `a` modulo a small public odd `s < 2^20`, constant time in `a`: Barrett reduction on 16-bit
/// digits, no division instruction on secret data.
pub(crate) fn rem_small(a: &[u64], s: u32) -> u32 {
    debug_assert!(s > 1 && s < (1 << 20));
    let s64 = s as u64;
    // x < s·2^16 < 2^36; mu = floor(2^64 / s) (public).
    let mu = (u64::MAX / s64) as u128;
    let mut r = 0u64;
    for &w in a.iter().rev() {
        for k in (0..4).rev() {
            let x = (r << 16) | ((w >> (16 * k)) & 0xffff);
            let q = (((x as u128) * mu) >> 64) as u64;
            let mut t = x - q * s64;
            // q is at most 2 short.
            t -= s64 & mask((s64.wrapping_sub(1).wrapping_sub(t) >> 63) & 1);
            t -= s64 & mask((s64.wrapping_sub(1).wrapping_sub(t) >> 63) & 1);
            r = t;
        }
    }
    r as u32
}

/// `x mod s` for `x < 2^40`, `s < 2^20` public, constant time in `x`.
pub(crate) fn rem_small_u64(x: u64, s: u32) -> u32 {
    rem_small(&[x], s)
}

/// Exact division of `a` by a small odd public `e` (the caller knows `e` divides `a`): multiplication by
/// `e^-1 mod 2^64` limb by limb (Hensel / Jebelean), constant time.
pub(crate) fn div_exact_small(a: &[u64], e: u64) -> Vec<u64> {
    debug_assert!(e & 1 == 1);
    // Newton iteration for the inverse mod 2^64.
    let mut inv = e; // correct to 3 bits (e·e ≡ 1 mod 8)
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(e.wrapping_mul(inv)));
    }
    let mut out = vec![0u64; a.len()];
    let mut borrow = 0u64; // carried high part
    for i in 0..a.len() {
        let (y, b) = a[i].overflowing_sub(borrow);
        let q = y.wrapping_mul(inv);
        out[i] = q;
        let hi = (((q as u128) * (e as u128)) >> 64) as u64;
        borrow = hi + b as u64;
    }
    out
}

/// Shift right by one bit.
pub(crate) fn shr1(a: &mut [u64]) {
    for i in 0..a.len() {
        let hi = if i + 1 < a.len() { a[i + 1] << 63 } else { 0 };
        a[i] = (a[i] >> 1) | hi;
    }
}

/// Number of trailing zero bits of `a` (all of `64·len` if `a` is zero), constant time.
pub(crate) fn trailing_zeros_ct(a: &[u64]) -> u64 {
    let mut tz = 0u64;
    let mut seen = 0u64;
    for i in 0..64 * a.len() {
        seen |= (a[i / 64] >> (i % 64)) & 1;
        tz += 1 ^ seen;
    }
    tz
}

/// `a >>= s` for a secret shift `s < 64·len`, constant time: a barrel shifter, one masked stage per bit of `s`
/// (whole limbs by 1, 2, 4, … then bits by 1, 2, 4, … 32).
pub(crate) fn shr_ct(a: &mut [u64], s: u64) {
    let n = a.len();
    let mut sh = vec![0u64; n];
    let mut w = 1usize;
    let mut k = 6;
    while w < n {
        for i in 0..n {
            sh[i] = if i + w < n { a[i + w] } else { 0 };
        }
        cond_copy(a, &sh, (s >> k) & 1);
        w <<= 1;
        k += 1;
    }
    for b in 0..6 {
        let d = 1u32 << b;
        for i in 0..n {
            let hi = if i + 1 < n { a[i + 1] << (64 - d) } else { 0 };
            sh[i] = (a[i] >> d) | hi;
        }
        cond_copy(a, &sh, (s >> b) & 1);
    }
    crate::ct::wipe(&mut sh);
}

/// gcd of two odd values of the same length, constant time: the binary algorithm run for a fixed
/// `2·64·len` steps with a masked swap and subtraction (each step removes at least one bit of u or v).
pub(crate) fn gcd_odd_ct(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut u = a.to_vec();
    let mut v = b.to_vec();
    let mut t = vec![0u64; a.len()];
    for _ in 0..2 * 64 * a.len() {
        let odd = u[0] & 1;
        let swap = odd & lt(&u, &v);
        // masked swap
        t.copy_from_slice(&u);
        cond_copy(&mut u, &v, swap);
        cond_copy(&mut v, &t, swap);
        cond_sub(&mut u, &v, odd);
        shr1(&mut u);
    }
    crate::ct::wipe(&mut u);
    crate::ct::wipe(&mut t);
    v
}

/// The inverse of an odd `a` modulo 2^(64·a.len()) by Newton iteration, constant time.
pub(crate) fn inv_pow2_ct(a: &[u64]) -> Vec<u64> {
    let w = a.len();
    let mut x = vec![0u64; w];
    let mut inv = a[0];
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(a[0].wrapping_mul(inv)));
    }
    x[0] = inv;
    // precision doubles each step: 64, 128, ... ≥ 64·w bits
    let mut prec = 64;
    while prec < 64 * w {
        // x = x·(2 − a·x) mod 2^(64w)
        let mut ax = mul(a, &x);
        ax.truncate(w);
        let mut two = vec![0u64; w];
        two[0] = 2;
        sub_assign(&mut two, &ax);
        let mut nx = mul(&x, &two);
        nx.truncate(w);
        crate::ct::wipe(&mut x);
        x = nx;
        crate::ct::wipe(&mut ax);
        prec *= 2;
    }
    x
}

/// lcm(a, b) for two even values of the same length (p − 1 and q − 1), constant time: with
/// g = gcd(a, b) = 2^s·g′ (g′ odd), λ = (a·b·g′^-1 mod 2^(64·2len)) >> s, an exact division.
pub(crate) fn lcm_even_ct(a: &[u64], b: &[u64]) -> Vec<u64> {
    let l = a.len();
    let ta = trailing_zeros_ct(a);
    let tb = trailing_zeros_ct(b);
    let s = ta ^ ((ta ^ tb) & mask(((tb.wrapping_sub(ta)) >> 63) & 1)); // min(ta, tb)
    let mut ao = a.to_vec();
    shr_ct(&mut ao, ta);
    let mut bo = b.to_vec();
    shr_ct(&mut bo, tb);
    let g = gcd_odd_ct(&ao, &bo);
    let mut gw = vec![0u64; 2 * l];
    gw[..l].copy_from_slice(&g);
    let ginv = inv_pow2_ct(&gw);
    let ab = mul(a, b);
    let mut q = mul(&ab, &ginv);
    q.truncate(2 * l);
    shr_ct(&mut q, s);
    crate::ct::wipe(&mut ao);
    crate::ct::wipe(&mut bo);
    crate::ct::wipe(&mut gw);
    q
}

/// `a >>= k` for `0 < k < 64` (public or blinded data).
fn shr_bits_vartime(a: &mut [u64], k: u32) {
    for i in 0..a.len() {
        let hi = if i + 1 < a.len() { a[i + 1] << (64 - k) } else { 0 };
        a[i] = (a[i] >> k) | hi;
    }
}

/// Modular inverse of a public (or blinded) `a` modulo an odd public `m`, variable time (binary extended
/// Euclid, stripping up to 63 factors of two per step: x·2^-k mod m = (x + t·m)/2^k with t = −x·m^-1 mod 2^k).
/// `a` and `m` have the same length. Returns `None` if gcd(a, m) ≠ 1.
pub(crate) fn inv_mod_odd_vartime(a: &[u64], m: &[u64]) -> Option<Vec<u64>> {
    let n = m.len();
    let mut minv = m[0];
    for _ in 0..5 {
        minv = minv.wrapping_mul(2u64.wrapping_sub(m[0].wrapping_mul(minv)));
    }
    let mut u = a.to_vec();
    let mut v = m.to_vec();
    let mut x1 = vec![0u64; n];
    x1[0] = 1;
    let mut x2 = vec![0u64; n];
    if is_zero(&u) == 1 {
        return None;
    }
    let mut y = vec![0u64; n + 1];
    // x = x·2^-k mod m, x < m.
    let mut half_k = |x: &mut Vec<u64>, k: u32| {
        let t = x[0].wrapping_mul(minv).wrapping_neg() & ((1u64 << k) - 1);
        let mut c = 0u128;
        for i in 0..n {
            let s = (t as u128) * (m[i] as u128) + x[i] as u128 + c;
            y[i] = s as u64;
            c = s >> 64;
        }
        y[n] = c as u64;
        shr_bits_vartime(&mut y, k);
        x.copy_from_slice(&y[..n]);
        if y[n] != 0 || lt(x, m) == 0 {
            sub_assign(x, m);
        }
    };
    // Active length of u and v: both only shrink.
    let mut len = n;
    loop {
        while len > 1 && u[len - 1] == 0 && v[len - 1] == 0 {
            len -= 1;
        }
        if u[0] & 1 == 0 {
            if u[..len].iter().all(|&w| w == 0) {
                return None;
            }
            let k = u[0].trailing_zeros().min(63);
            shr_bits_vartime(&mut u[..len], k);
            half_k(&mut x1, k);
            continue;
        }
        if v[0] & 1 == 0 {
            let k = v[0].trailing_zeros().min(63);
            shr_bits_vartime(&mut v[..len], k);
            half_k(&mut x2, k);
            continue;
        }
        if u[..len] == v[..len] {
            // gcd = u; inverse exists iff u = 1
            let mut one = vec![0u64; len];
            one[0] = 1;
            return if u[..len] == one[..] { Some(x1) } else { None };
        }
        if lt(&u[..len], &v[..len]) == 0 {
            sub_assign(&mut u[..len], &v[..len]);
            if sub_assign(&mut x1, &x2) == 1 {
                add_assign(&mut x1, m);
            }
        } else {
            sub_assign(&mut v[..len], &u[..len]);
            if sub_assign(&mut x2, &x1) == 1 {
                add_assign(&mut x2, m);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rem_small_matches_division() {
        let a = [0x0123_4567_89ab_cdefu64, 0xfedc_ba98_7654_3210, 0xdead_beef];
        for s in [3u32, 5, 7, 65537, 1021, 999_983] {
            let mut want = 0u128;
            for &w in a.iter().rev() {
                want = ((want << 64) | w as u128) % s as u128;
            }
            assert_eq!(rem_small(&a, s) as u128, want, "s = {s}");
        }
    }

    #[test]
    fn shr_ct_matches_plain_shift() {
        let a = [0x0123_4567_89ab_cdefu64, 0xfedc_ba98_7654_3210, 0xdead_beef_0bad_f00d, 0x8000_0000_0000_0001, 7];
        for s in 0..(64 * a.len() as u64) {
            let mut got = a.to_vec();
            shr_ct(&mut got, s);
            let mut want = a.to_vec();
            for _ in 0..s {
                shr1(&mut want);
            }
            assert_eq!(got, want, "shift {s}");
        }
    }

    #[test]
    fn div_exact_small_roundtrip() {
        let a = [0x0123_4567_89ab_cdefu64, 0xfedc_ba98_7654_3210, 0xdead_beef, 0];
        let p = mul_small(&a, 65537);
        let q = div_exact_small(&p[..4], 65537);
        assert_eq!(&q[..], &a[..]);
    }

    #[test]
    fn bits_ct_matches() {
        for a in [[0u64, 0], [1, 0], [0, 1], [u64::MAX, 5], [7, 0x8000_0000_0000_0000]] {
            assert_eq!(bits_ct(&a), bits_vartime(&a));
        }
    }

    #[test]
    fn lcm_small() {
        fn gcd(a: u64, b: u64) -> u64 {
            if b == 0 { a } else { gcd(b, a % b) }
        }
        for (a, b) in [(12u64, 18u64), (1_000_000_006, 998_244_352), (2, 2), (96, 1024), (65536, 6), (10, 15 * 2)] {
            let l = lcm_even_ct(&[a, 0], &[b, 0]);
            let want = (a as u128) * (b as u128) / gcd(a, b) as u128;
            assert_eq!(l[0] as u128 | ((l[1] as u128) << 64), want, "{a} {b}");
            assert!(l[2..].iter().all(|&w| w == 0));
        }
    }

    fn gcd_u128(a: u128, b: u128) -> u128 {
        if b == 0 { a } else { gcd_u128(b, a % b) }
    }

    #[test]
    fn inverse_differential() {
        use num_bigint::BigUint;
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for l in [1usize, 2, 5, 16, 32, 64] {
            for _ in 0..5 {
                let mut m: Vec<u64> = (0..l).map(|_| next()).collect();
                m[0] |= 1;
                m[l - 1] |= 1 << 63;
                let mut a: Vec<u64> = (0..l).map(|_| next()).collect();
                a[l - 1] >>= 1; // a < m
                let big = |x: &[u64]| {
                    BigUint::from_slice(&x.iter().flat_map(|w| [*w as u32, (*w >> 32) as u32]).collect::<Vec<_>>())
                };
                let (ab, mb) = (big(&a), big(&m));
                match inv_mod_odd_vartime(&a, &m) {
                    Some(i) => {
                        assert!(big(&i) < mb);
                        assert_eq!((big(&i) * &ab) % &mb, BigUint::from(1u8));
                    }
                    None => {
                        // gcd must be > 1
                        let (mut x, mut y) = (ab.clone(), mb.clone());
                        while y != BigUint::from(0u8) {
                            let r = &x % &y;
                            x = y;
                            y = r;
                        }
                        assert!(x > BigUint::from(1u8));
                    }
                }
            }
        }
        // a sharing a factor with m
        assert!(inv_mod_odd_vartime(&[6, 0], &[15, 0]).is_none());
        assert!(
            inv_mod_odd_vartime(&[21, 0], &[0xffff_ffff_ffff_fff9, 6]).is_none()
                == (gcd_u128(21, (6u128 << 64) | 0xffff_ffff_ffff_fff9) != 1)
        );
        assert!(inv_mod_odd_vartime(&[0, 0], &[7, 1]).is_none());
    }

    #[test]
    fn inverse_small() {
        let m = [101u64];
        for a in 1..101u64 {
            let i = inv_mod_odd_vartime(&[a], &m).unwrap();
            assert_eq!((a * i[0]) % 101, 1);
        }
        assert!(inv_mod_odd_vartime(&[3], &[9]).is_none());
    }
}
