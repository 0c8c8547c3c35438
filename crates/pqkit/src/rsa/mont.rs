//! Montgomery arithmetic modulo an odd modulus of up to 8192 bits, and constant-time exponentiation.
//!
//! R = 2^(64·L) for an L-limb modulus. Values in the Montgomery domain are `x·R mod m`, fully reduced
//! (`< m`). Every operation is constant time in the values (modulus included, so the same code serves the
//! secret primes p and q); only L is public.

use alloc::vec;
use alloc::vec::Vec;
use zeroize::Zeroize;

use super::bigint::{self, cond_sub, mask};

/// Largest modulus in limbs (8192 bits).
pub(crate) const MAX_LIMBS: usize = 128;

/// A modulus with its Montgomery constants. For p and q these are secret: zeroized on drop.
#[derive(Clone)]
pub(crate) struct MontCtx {
    /// The odd modulus, L limbs.
    pub(crate) m: Vec<u64>,
    /// −m^-1 mod 2^64.
    pub(crate) m0inv: u64,
    /// R mod m (the Montgomery form of 1).
    pub(crate) one: Vec<u64>,
    /// R^2 mod m.
    pub(crate) r2: Vec<u64>,
}

impl Drop for MontCtx {
    fn drop(&mut self) {
        self.m.zeroize();
        self.m0inv.zeroize();
        self.one.zeroize();
        self.r2.zeroize();
    }
}

impl MontCtx {
    /// Constants for an odd modulus `m` (its top limb non-zero is not required). Constant time in `m`.
    pub(crate) fn new(m: &[u64]) -> Self {
        let l = m.len();
        debug_assert!(m[0] & 1 == 1);
        // m^-1 mod 2^64 by Newton, then negate.
        let mut inv = m[0];
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(m[0].wrapping_mul(inv)));
        }
        let m0inv = inv.wrapping_neg();
        // R mod m, then R^2 mod m, by doubling with a constant-time conditional subtraction.
        let mut x = vec![0u64; l];
        x[0] = 1;
        // 1 < m unless m = 1 (rejected by callers); make it 1 mod m anyway.
        let ge = 1 ^ bigint::lt(&x, m);
        cond_sub(&mut x, m, ge);
        let mut one = Vec::new();
        for i in 0..2 * 64 * l {
            let top = x[l - 1] >> 63;
            let mut c = 0u64;
            for w in x.iter_mut() {
                let nc = *w >> 63;
                *w = (*w << 1) | c;
                c = nc;
            }
            // x (with the carried-out bit `top`) >= m ?
            let lt = bigint::lt(&x, m);
            let sub = top | (1 ^ lt);
            cond_sub(&mut x, m, sub);
            if i + 1 == 64 * l {
                one = x.clone();
            }
        }
        MontCtx { m: m.to_vec(), m0inv, one, r2: x }
    }

    pub(crate) fn limbs(&self) -> usize {
        self.m.len()
    }

    /// `out = a·b·R^-1 mod m` for `a, b < R` with `a·b < R·m` (e.g. one of them `< m`); result `< m`.
    /// CIOS, portable.
    pub(crate) fn mul(&self, out: &mut [u64], a: &[u64], b: &[u64]) {
        let l = self.m.len();
        let m = &self.m[..l];
        let (a, b) = (&a[..l], &b[..l]);
        let mut t = [0u64; MAX_LIMBS + 2];
        for &ai in a {
            let ai = ai as u128;
            let mut c = 0u128;
            for j in 0..l {
                let s = ai * b[j] as u128 + t[j] as u128 + c;
                t[j] = s as u64;
                c = s >> 64;
            }
            let s = t[l] as u128 + c;
            t[l] = s as u64;
            t[l + 1] = (s >> 64) as u64;
            let u = t[0].wrapping_mul(self.m0inv) as u128;
            let s = u * m[0] as u128 + t[0] as u128;
            let mut c = s >> 64;
            for j in 1..l {
                let s = u * m[j] as u128 + t[j] as u128 + c;
                t[j - 1] = s as u64;
                c = s >> 64;
            }
            let s = t[l] as u128 + c;
            t[l - 1] = s as u64;
            let s2 = t[l + 1] as u128 + (s >> 64);
            t[l] = s2 as u64;
            t[l + 1] = 0;
        }
        // t < 2m: subtract m if t >= m (t has L+1 limbs). Subtract into `out`, keep t if it borrowed.
        let mut br = 0u64;
        for j in 0..l {
            let (d1, b1) = t[j].overflowing_sub(m[j]);
            let (d2, b2) = d1.overflowing_sub(br);
            out[j] = d2;
            br = (b1 | b2) as u64;
        }
        // borrow out of the L+1-limb subtraction: t < m, keep t.
        let (_, keep) = t[l].overflowing_sub(br);
        let keep = mask(keep as u64);
        for j in 0..l {
            out[j] = (out[j] & !keep) | (t[j] & keep);
        }
        crate::ct::wipe(&mut t[..l + 2]);
    }

    pub(crate) fn sqr(&self, out: &mut [u64], a: &[u64]) {
        self.mul(out, a, a)
    }

    /// Montgomery form of `a < m` (or `a < R`: the product `a·R^2 < R·m` holds either way).
    pub(crate) fn to_mont(&self, a: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; self.limbs()];
        self.mul(&mut out, a, &self.r2);
        out
    }

    /// Leaves the Montgomery domain.
    pub(crate) fn from_mont(&self, a: &[u64]) -> Vec<u64> {
        let mut one = vec![0u64; self.limbs()];
        one[0] = 1;
        let mut out = vec![0u64; self.limbs()];
        self.mul(&mut out, a, &one);
        out
    }

    /// `a mod m` in the Montgomery domain (`a·R mod m`) for any `a` (any number of limbs), constant time:
    /// `a` is split into L-limb chunks and folded by Horner's rule with Montgomery products by R^2 (no
    /// division).
    pub(crate) fn reduce_to_mont(&self, a: &[u64]) -> Vec<u64> {
        let l = self.limbs();
        let chunks = a.len().div_ceil(l);
        let mut acc = vec![0u64; l];
        let mut tmp = vec![0u64; l];
        let mut chunk = vec![0u64; l];
        for c in (0..chunks).rev() {
            // acc = acc·R (in Montgomery form: mul by R^2)
            self.mul(&mut tmp, &acc, &self.r2);
            chunk.fill(0);
            for i in 0..l {
                if c * l + i < a.len() {
                    chunk[i] = a[c * l + i];
                }
            }
            // chunk < R; chunk·R^2·R^-1 = chunk·R mod m
            self.mul(&mut acc, &chunk, &self.r2);
            self.add_mod(&mut acc, &tmp);
        }
        tmp.zeroize();
        chunk.zeroize();
        acc
    }

    /// `a = a + b mod m` for `a, b < m`.
    pub(crate) fn add_mod(&self, a: &mut [u64], b: &[u64]) {
        let c = bigint::add_assign(a, b);
        let ge = c | (1 ^ bigint::lt(a, &self.m));
        cond_sub(a, &self.m, ge);
    }

    /// `a = a − b mod m` for `a, b < m`.
    pub(crate) fn sub_mod(&self, a: &mut [u64], b: &[u64]) {
        let br = bigint::sub_assign(a, b);
        bigint::cond_add(a, &self.m, br);
    }

    /// `base^exp` with `base` in Montgomery form, result in Montgomery form. Constant time in `base`, `exp`
    /// and `m`: a fixed 5-bit window over all `exp.len()·64` bits, the table read by a full scan with masks.
    pub(crate) fn pow_ct(&self, base: &[u64], exp: &[u64]) -> Vec<u64> {
        const W: usize = 5;
        let l = self.limbs();
        let tsize = 1 << W;
        let mut table = vec![0u64; tsize * l];
        table[..l].copy_from_slice(&self.one);
        table[l..2 * l].copy_from_slice(base);
        let mut tmp = vec![0u64; l];
        for i in 2..tsize {
            let (lo, hi) = table.split_at_mut(i * l);
            self.mul(&mut hi[..l], &lo[(i - 1) * l..i * l], base);
        }
        let mut acc = self.one.clone();
        let mut sel = vec![0u64; l];
        let nbits = exp.len() * 64;
        let nwin = nbits.div_ceil(W);
        for w in (0..nwin).rev() {
            for _ in 0..W {
                self.sqr(&mut tmp, &acc);
                core::mem::swap(&mut acc, &mut tmp);
            }
            let mut idx = 0u64;
            for b in 0..W {
                let bit = w * W + b;
                if bit < nbits {
                    idx |= ((exp[bit / 64] >> (bit % 64)) & 1) << b;
                }
            }
            select(&mut sel, &table, idx, l);
            self.mul(&mut tmp, &acc, &sel);
            core::mem::swap(&mut acc, &mut tmp);
        }
        table.zeroize();
        tmp.zeroize();
        sel.zeroize();
        acc
    }

    /// `base^e` for a public exponent (variable time in `e` only; the products themselves are the same
    /// constant-time ones). `base` in Montgomery form.
    pub(crate) fn pow_vartime(&self, base: &[u64], e: u64) -> Vec<u64> {
        let l = self.limbs();
        let mut acc = base.to_vec();
        let mut tmp = vec![0u64; l];
        let top = 63 - e.leading_zeros();
        for i in (0..top).rev() {
            self.sqr(&mut tmp, &acc);
            core::mem::swap(&mut acc, &mut tmp);
            if (e >> i) & 1 == 1 {
                self.mul(&mut tmp, &acc, base);
                core::mem::swap(&mut acc, &mut tmp);
            }
        }
        acc
    }
}

/// `out = table[idx]` (entries of `l` limbs) reading every entry, constant time in `idx`.
pub(crate) fn select(out: &mut [u64], table: &[u64], idx: u64, l: usize) {
    out.fill(0);
    for (i, entry) in table.chunks_exact(l).enumerate() {
        let m = mask(bigint::is_zero_u64(i as u64 ^ idx));
        for (o, &t) in out.iter_mut().zip(entry) {
            *o |= t & m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_modulus() {
        // m = 2^64 - 59 (prime), check a·b mod m through the Montgomery domain.
        let m = [0xffff_ffff_ffff_ffc5u64];
        let ctx = MontCtx::new(&m);
        let a = [0x1234_5678_9abc_def0u64];
        let b = [0x0fed_cba9_8765_4321u64];
        let am = ctx.to_mont(&a);
        let bm = ctx.to_mont(&b);
        let mut p = [0u64];
        ctx.mul(&mut p, &am, &bm);
        let r = ctx.from_mont(&p);
        let want = ((a[0] as u128 * b[0] as u128) % m[0] as u128) as u64;
        assert_eq!(r[0], want);
        // Fermat: a^(m-1) = 1.
        let e = [m[0] - 1];
        let x = ctx.from_mont(&ctx.pow_ct(&am, &e));
        assert_eq!(x[0], 1);
    }
}
