//! Montgomery arithmetic modulo an odd modulus of up to 8192 bits, and constant-time exponentiation.
//!
//! R = 2^(64·L) for an L-limb modulus. Values in the Montgomery domain are `x·R mod m`, fully reduced
//! (`< m`), except inside the constant-time exponentiation's chains of squarings, which may hold any value below
//! R congruent to it (see `sqr_loose`); every window's product brings the value below m again. Every operation is
//! constant time in the values (modulus included, so the same code serves the secret primes p and q); only L is
//! public.

use alloc::vec;
use alloc::vec::Vec;
use zeroize::Zeroize;

use super::Backend;
use super::bigint::{self, MAX_LIMBS, cond_sub, mask};

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
    /// The arithmetic backend (read only by the x86-64 backends).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) backend: crate::dispatch::Checked<Backend>,
    /// The IFMA constants, when the backend is `Ifma` and the size is one it handles.
    #[cfg(target_arch = "x86_64")]
    ifma: Option<super::ifma::IfmaCtx>,
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
        Self::with_backend(m, crate::dispatch::Checked::best())
    }

    /// As [`new`](Self::new) with a forced backend (tests).
    pub(crate) fn with_backend(m: &[u64], backend: crate::dispatch::Checked<Backend>) -> Self {
        let l = m.len();
        debug_assert!(m[0] & 1 == 1);
        // m^-1 mod 2^64 by Newton, then negate.
        let mut inv = m[0];
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(m[0].wrapping_mul(inv)));
        }
        let m0inv = inv.wrapping_neg();
        // R mod m: when the top bit of m is set (every RSA modulus and prime: their sizes are multiples of 64
        // bits), m > R/2, so R mod m = R − m, the two's complement of m. Otherwise by doubling. The branch is on
        // the bit length of m, which is public (declassified for the constant-time checker: RSA primes and
        // moduli always have exactly their nominal size).
        let one = if crate::ct::declassify(m[l - 1] >> 63) == 1 {
            let mut x = vec![0u64; l];
            bigint::sub_assign(&mut x, m);
            x
        } else {
            pow2_mod(m, 64 * l)
        };
        let mut ctx = MontCtx {
            m: m.to_vec(),
            m0inv,
            one,
            r2: vec![0u64; l],
            backend,
            #[cfg(target_arch = "x86_64")]
            ifma: None,
        };
        // R^2 mod m is the Montgomery form of 2^(64·L): a few squarings and doublings instead of 64·L doublings.
        ctx.r2 = ctx.pow2_mont(64 * l);
        #[cfg(target_arch = "x86_64")]
        if backend.covers(Backend::Ifma) {
            // The IFMA constant 2^k mod m (k ≥ 64·L) is the Montgomery form of 2^(k − 64·L).
            ctx.ifma = super::ifma::IfmaCtx::new(m, m0inv, |k| ctx.pow2_mont(k - 64 * l));
        }
        ctx
    }

    /// The Montgomery form of 2^e (that is, 2^e·R mod m) for a public `e`: left-to-right square-and-double
    /// from R mod m, constant time in `m`.
    fn pow2_mont(&self, e: usize) -> Vec<u64> {
        let mut x = self.one.clone();
        if e == 0 {
            return x;
        }
        let mut t = vec![0u64; self.limbs()];
        for i in (0..usize::BITS - e.leading_zeros()).rev() {
            self.sqr(&mut t, &x);
            core::mem::swap(&mut x, &mut t);
            if (e >> i) & 1 == 1 {
                double_mod(&mut x, &self.m, 1);
            }
        }
        t.zeroize();
        x
    }

    pub(crate) fn limbs(&self) -> usize {
        self.m.len()
    }

    /// `out = a·b·R^-1 mod m` for `a, b < R` with `a·b < R·m` (e.g. one of them `< m`); result `< m`.
    /// CIOS, portable.
    pub(crate) fn mul(&self, out: &mut [u64], a: &[u64], b: &[u64]) {
        #[cfg(target_arch = "x86_64")]
        if self.backend.covers(Backend::Bmi2Adx) {
            return super::bmi2_adx::mul(self.backend, out, a, b, &self.m, self.m0inv);
        }
        // Fixed sizes for the common primes and moduli, so the compiler unrolls and drops bounds checks.
        match self.m.len() {
            16 => mont_mul_n::<16>(out, a, b, &self.m, self.m0inv),
            24 => mont_mul_n::<24>(out, a, b, &self.m, self.m0inv),
            32 => mont_mul_n::<32>(out, a, b, &self.m, self.m0inv),
            48 => mont_mul_n::<48>(out, a, b, &self.m, self.m0inv),
            64 => mont_mul_n::<64>(out, a, b, &self.m, self.m0inv),
            _ => mont_mul_any(out, a, b, &self.m, self.m0inv),
        }
    }

    /// `out = a²·R^-1 mod m` for `a < m`: a dedicated square (cross products once, doubled) then a
    /// separate Montgomery reduction; about 3/4 of the multiplications of [`mul`](Self::mul).
    pub(crate) fn sqr(&self, out: &mut [u64], a: &[u64]) {
        #[cfg(target_arch = "x86_64")]
        if self.backend.covers(Backend::Bmi2Adx) {
            return super::bmi2_adx::sqr(self.backend, out, a, &self.m, self.m0inv);
        }
        match self.m.len() {
            16 => mont_sqr_n::<16, 32>(out, a, &self.m, self.m0inv),
            24 => mont_sqr_n::<24, 48>(out, a, &self.m, self.m0inv),
            32 => mont_sqr_n::<32, 64>(out, a, &self.m, self.m0inv),
            48 => mont_sqr_n::<48, 96>(out, a, &self.m, self.m0inv),
            64 => mont_sqr_n::<64, 128>(out, a, &self.m, self.m0inv),
            _ => self.mul(out, a, a),
        }
    }

    /// `out ≡ a²·R^-1 (mod m)` with `out < R`, not necessarily `< m`: the square of the exponentiation's chains
    /// of squarings. On the BMI2/ADX backends `a` may be any value below R and the final subtraction of m is
    /// decided by the top bit alone (`bmi2_adx::sqr_loose`); the other backends reduce fully, as [`sqr`](Self::sqr)
    /// (which wants `a < m`: a chain that starts below m stays below m there).
    fn sqr_loose(&self, out: &mut [u64], a: &[u64]) {
        #[cfg(target_arch = "x86_64")]
        if self.backend.covers(Backend::Bmi2Adx) {
            return super::bmi2_adx::sqr_loose(self.backend, out, a, &self.m, self.m0inv);
        }
        self.sqr(out, a)
    }

    /// Montgomery form of `a < m` (or `a < R`: the product `a·R^2 < R·m` holds either way).
    pub(crate) fn to_mont(&self, a: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; self.limbs()];
        self.mul(&mut out, a, &self.r2);
        out
    }

    /// Leaves the Montgomery domain.
    pub(crate) fn leave_mont(&self, a: &[u64]) -> Vec<u64> {
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
        #[cfg(target_arch = "x86_64")]
        if let Some(ic) = &self.ifma {
            let mut x = self.leave_mont(base);
            let mut r = super::ifma::pow(self.backend, ic, &x, exp);
            let out = self.to_mont(&r);
            x.zeroize();
            r.zeroize();
            return out;
        }
        self.pow_ct_limbs(base, exp)
    }

    /// `(a^ea, b^eb)` in two contexts (the CRT halves), as two [`pow_ct`](Self::pow_ct) calls; with the IFMA
    /// backend and two moduli and exponents of the same size, both in one loop.
    pub(crate) fn pow_ct_pair(
        ca: &MontCtx,
        a: &[u64],
        ea: &[u64],
        cb: &MontCtx,
        b: &[u64],
        eb: &[u64],
    ) -> (Vec<u64>, Vec<u64>) {
        #[cfg(target_arch = "x86_64")]
        if let (Some(ia), Some(ib)) = (&ca.ifma, &cb.ifma)
            && ca.limbs() == cb.limbs()
            && ea.len() == eb.len()
        {
            let (mut xa, mut xb) = (ca.leave_mont(a), cb.leave_mont(b));
            let [mut ra, mut rb] = super::ifma::pow2(ca.backend, [ia, ib], [&xa, &xb], [ea, eb]);
            let out = (ca.to_mont(&ra), cb.to_mont(&rb));
            for v in [&mut xa, &mut xb, &mut ra, &mut rb] {
                v.zeroize();
            }
            return out;
        }
        (ca.pow_ct(a, ea), cb.pow_ct(b, eb))
    }

    /// `x^e mod m` in normal form, for `x < m` in normal form and a public `e ≥ 1`, on the IFMA backend (its
    /// products are faster than the 64-bit ones even one at a time); `None` when this context has no IFMA
    /// constants (another backend, or a size IFMA does not handle).
    pub(crate) fn pow_public_ifma(&self, x: &[u64], e: u64) -> Option<Vec<u64>> {
        #[cfg(target_arch = "x86_64")]
        if let Some(ic) = &self.ifma {
            return Some(super::ifma::pow_public(self.backend, ic, x, e));
        }
        let _ = (x, e);
        None
    }

    /// [`pow_ct`](Self::pow_ct) with the 64-bit-limb products.
    fn pow_ct_limbs(&self, base: &[u64], exp: &[u64]) -> Vec<u64> {
        const W: usize = 5;
        let l = self.limbs();
        if exp.is_empty() {
            return self.one.clone();
        }
        let tsize = 1 << W;
        let mut table = vec![0u64; tsize * l];
        table[..l].copy_from_slice(&self.one);
        table[l..2 * l].copy_from_slice(base);
        let mut tmp = vec![0u64; l];
        for i in 2..tsize {
            let (lo, hi) = table.split_at_mut(i * l);
            self.mul(&mut hi[..l], &lo[(i - 1) * l..i * l], base);
        }
        let nbits = exp.len() * 64;
        let nwin = nbits.div_ceil(W);
        let window = |w: usize| {
            let mut idx = 0u64;
            for b in 0..W {
                let bit = w * W + b;
                if bit < nbits {
                    idx |= ((exp[bit / 64] >> (bit % 64)) & 1) << b;
                }
            }
            idx
        };
        // The top window starts the accumulator straight from the table: squaring R mod m and multiplying it by
        // the entry would give the same value.
        let mut acc = vec![0u64; l];
        self.select(&mut acc, &table, window(nwin - 1));
        let mut sel = vec![0u64; l];
        // The squarings may leave acc in [m, R) (`sqr_loose`); the product with the entry (below m) brings it
        // below m again, so acc is fully reduced after every window, the last included.
        for w in (0..nwin - 1).rev() {
            for _ in 0..W {
                self.sqr_loose(&mut tmp, &acc);
                core::mem::swap(&mut acc, &mut tmp);
            }
            self.select(&mut sel, &table, window(w));
            self.mul(&mut tmp, &acc, &sel);
            core::mem::swap(&mut acc, &mut tmp);
        }
        table.zeroize();
        tmp.zeroize();
        sel.zeroize();
        acc
    }

    /// `out = table[idx]` (entries of L limbs), reading every entry: constant time in `idx`.
    fn select(&self, out: &mut [u64], table: &[u64], idx: u64) {
        #[cfg(target_arch = "x86_64")]
        if self.backend.covers(Backend::Bmi2Adx) && self.limbs().is_multiple_of(4) {
            return super::bmi2_adx::select(self.backend, out, table, idx);
        }
        select(out, table, idx, self.limbs());
    }

    /// `base^e` for a public exponent (variable time in `e` only; the products themselves are the same
    /// constant-time ones). `base` in Montgomery form; for a plain `base < m` the result is `base^e·R^-(e − 1)`
    /// (each product divides by R once), which the RSA public operation relies on. For an odd `e` (every RSA
    /// public exponent) the squarings are loose (`sqr_loose`), as in [`pow_ct`](Self::pow_ct): each run of them
    /// ends in a product by `base < m`, the last step included, which brings the value below m.
    pub(crate) fn pow_vartime(&self, base: &[u64], e: u64) -> Vec<u64> {
        let mut out = vec![0u64; self.limbs()];
        self.pow_vartime_into(&mut out, base, e);
        out
    }

    /// [`pow_vartime`](Self::pow_vartime) into `out` (L limbs), its scratch on the stack (no allocation) and
    /// wiped before it returns (the powers of a secret base, in the blinding and the fault check, are secret).
    pub(crate) fn pow_vartime_into(&self, out: &mut [u64], base: &[u64], e: u64) {
        let l = self.limbs();
        let (mut s1, mut s2) = ([0u64; MAX_LIMBS], [0u64; MAX_LIMBS]);
        let (mut acc, mut tmp) = (&mut s1[..l], &mut s2[..l]);
        acc.copy_from_slice(&base[..l]);
        let top = 63 - e.leading_zeros();
        let loose = e & 1 == 1;
        for i in (0..top).rev() {
            if loose {
                self.sqr_loose(tmp, acc);
            } else {
                self.sqr(tmp, acc);
            }
            core::mem::swap(&mut acc, &mut tmp);
            if (e >> i) & 1 == 1 {
                self.mul(tmp, acc, base);
                core::mem::swap(&mut acc, &mut tmp);
            }
        }
        out.copy_from_slice(acc);
        crate::ct::wipe(acc);
        crate::ct::wipe(tmp);
    }
}

/// `2^k mod m` for an odd `m > 1` (1 reduced, then [`double_mod`]), constant time in `m`.
pub(super) fn pow2_mod(m: &[u64], k: usize) -> Vec<u64> {
    let mut x = vec![0u64; m.len()];
    x[0] = 1;
    // 1 < m unless m = 1 (rejected by callers); make it 1 mod m anyway.
    let ge = 1 ^ bigint::lt(&x, m);
    cond_sub(&mut x, m, ge);
    double_mod(&mut x, m, k);
    x
}

/// `x = x·2^k mod m` for `x < m`, by doubling with a constant-time conditional subtraction (constant time in
/// `x` and `m`; `k` is public).
pub(super) fn double_mod(x: &mut [u64], m: &[u64], k: usize) {
    let l = m.len();
    for _ in 0..k {
        let top = x[l - 1] >> 63;
        let mut c = 0u64;
        for w in x.iter_mut() {
            let nc = *w >> 63;
            *w = (*w << 1) | c;
            c = nc;
        }
        // x (with the carried-out bit `top`) >= m ?
        let lt = bigint::lt(x, m);
        cond_sub(x, m, top | (1 ^ lt));
    }
}

/// CIOS Montgomery product for an N-limb modulus (portable).
#[inline(never)]
fn mont_mul_n<const N: usize>(out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64) {
    let a: &[u64; N] = a[..N].try_into().expect("N limbs");
    let b: &[u64; N] = b[..N].try_into().expect("N limbs");
    let m: &[u64; N] = m[..N].try_into().expect("N limbs");
    let out: &mut [u64; N] = (&mut out[..N]).try_into().expect("N limbs");
    let mut t = [0u64; N];
    let mut t_hi = 0u64; // limb N of the running sum (at most 1 bit beyond it carried in `t_hi`)
    for &ai in a.iter() {
        let ai = ai as u128;
        let mut c = 0u128;
        for j in 0..N {
            let s = ai * b[j] as u128 + t[j] as u128 + c;
            t[j] = s as u64;
            c = s >> 64;
        }
        let s = t_hi as u128 + c;
        let top0 = s as u64;
        let top1 = (s >> 64) as u64;
        let u = t[0].wrapping_mul(m0inv) as u128;
        let s = u * m[0] as u128 + t[0] as u128;
        let mut c = s >> 64;
        for j in 1..N {
            let s = u * m[j] as u128 + t[j] as u128 + c;
            t[j - 1] = s as u64;
            c = s >> 64;
        }
        let s = top0 as u128 + c;
        t[N - 1] = s as u64;
        t_hi = top1 + (s >> 64) as u64;
    }
    let mut br = 0u64;
    for j in 0..N {
        let (d1, b1) = t[j].overflowing_sub(m[j]);
        let (d2, b2) = d1.overflowing_sub(br);
        out[j] = d2;
        br = (b1 | b2) as u64;
    }
    let (_, keep) = t_hi.overflowing_sub(br);
    let keep = mask(keep as u64);
    for j in 0..N {
        out[j] = (out[j] & !keep) | (t[j] & keep);
    }
    crate::ct::wipe(&mut t);
}

/// Montgomery square for an N-limb modulus (`W = 2N`), portable: full square then reduction.
#[inline(never)]
fn mont_sqr_n<const N: usize, const W: usize>(out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64) {
    let a: &[u64; N] = a[..N].try_into().expect("N limbs");
    let m: &[u64; N] = m[..N].try_into().expect("N limbs");
    let out: &mut [u64; N] = (&mut out[..N]).try_into().expect("N limbs");
    let mut t = [0u64; W];
    // cross products a[i]·a[j], i < j
    for i in 0..N {
        let ai = a[i] as u128;
        let mut c = 0u128;
        for j in i + 1..N {
            let s = ai * a[j] as u128 + t[i + j] as u128 + c;
            t[i + j] = s as u64;
            c = s >> 64;
        }
        t[i + N] = c as u64;
    }
    // double
    let mut top = 0u64;
    for w in t.iter_mut() {
        let nt = *w >> 63;
        *w = (*w << 1) | top;
        top = nt;
    }
    // diagonal a[i]²
    let mut c = 0u128;
    for i in 0..N {
        let sq = a[i] as u128 * a[i] as u128;
        let s = t[2 * i] as u128 + (sq as u64) as u128 + c;
        t[2 * i] = s as u64;
        let s2 = t[2 * i + 1] as u128 + (sq >> 64) + (s >> 64);
        t[2 * i + 1] = s2 as u64;
        c = s2 >> 64;
    }
    // Montgomery reduction, one limb at a time; `hi` carries out of limb i + N.
    let mut hi = 0u64;
    for i in 0..N {
        let u = t[i].wrapping_mul(m0inv) as u128;
        let mut c = 0u128;
        for j in 0..N {
            let s = u * m[j] as u128 + t[i + j] as u128 + c;
            t[i + j] = s as u64;
            c = s >> 64;
        }
        let s = t[i + N] as u128 + c + hi as u128;
        t[i + N] = s as u64;
        hi = (s >> 64) as u64;
    }
    // result t[N..2N] + hi·R < 2m
    let mut br = 0u64;
    for j in 0..N {
        let (d1, b1) = t[N + j].overflowing_sub(m[j]);
        let (d2, b2) = d1.overflowing_sub(br);
        out[j] = d2;
        br = (b1 | b2) as u64;
    }
    let (_, keep) = hi.overflowing_sub(br);
    let keep = mask(keep as u64);
    for j in 0..N {
        out[j] = (out[j] & !keep) | (t[N + j] & keep);
    }
    crate::ct::wipe(&mut t);
}

/// CIOS Montgomery product for any length up to [`MAX_LIMBS`] (portable).
fn mont_mul_any(out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64) {
    let l = m.len();
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
        let u = t[0].wrapping_mul(m0inv) as u128;
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
    let (_, keep) = t[l].overflowing_sub(br);
    let keep = mask(keep as u64);
    for j in 0..l {
        out[j] = (out[j] & !keep) | (t[j] & keep);
    }
    crate::ct::wipe(&mut t[..l + 2]);
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
    use num_bigint::BigUint;

    fn to_big(a: &[u64]) -> BigUint {
        let mut b = Vec::new();
        for w in a {
            b.extend_from_slice(&w.to_le_bytes());
        }
        BigUint::from_bytes_le(&b)
    }

    fn from_big(x: &BigUint, l: usize) -> Vec<u64> {
        let mut v = x.to_u64_digits();
        v.resize(l, 0);
        v
    }

    /// Deterministic pseudo-random limbs (xorshift; test data only).
    fn limbs(seed: &mut u64, l: usize) -> Vec<u64> {
        (0..l)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                *seed
            })
            .collect()
    }

    /// Differential test against num-bigint: Montgomery product, square, reduction of wide inputs,
    /// constant-time and public exponentiation, at the RSA sizes (moduli and primes) and odd sizes.
    #[test]
    fn differential_against_num_bigint() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let cpu = crate::cpu::features();
        if cpu.has(crate::cpu::Features::BMI2 | crate::cpu::Features::ADX | crate::cpu::Features::AVX2) {
            for b in [Backend::Bmi2Adx, Backend::Bmi2AdxRows] {
                assert!(Backend::available().any(|a| a == b), "the {b:?} backend must be tested here");
            }
        }
        for bits in [512usize, 1024, 1536, 2048, 3072, 4096, 8192, 1000, 2050] {
            let l = bigint::limbs_for_bits(bits);
            for _ in 0..3 {
                let mut m = limbs(&mut seed, l);
                m[0] |= 1;
                let top = bits - 64 * (l - 1);
                m[l - 1] &= u64::MAX >> (64 - top);
                m[l - 1] |= 1 << (top - 1);
                let mb = to_big(&m);
                for backend in Backend::available() {
                    let ctx = MontCtx::with_backend(&m, backend);
                    let r = BigUint::from(1u8) << (64 * l);
                    assert_eq!(to_big(&ctx.one), &r % &mb);
                    assert_eq!(to_big(&ctx.r2), (&r * &r) % &mb);
                    let a = from_big(&(to_big(&limbs(&mut seed, l)) % &mb), l);
                    let b = from_big(&(to_big(&limbs(&mut seed, l)) % &mb), l);
                    let (ab, bb) = (to_big(&a), to_big(&b));
                    let mut out = vec![0u64; l];
                    ctx.mul(&mut out, &a, &b);
                    // out·R ≡ a·b (mod m)
                    assert_eq!((to_big(&out) * &r) % &mb, (&ab * &bb) % &mb);
                    assert!(to_big(&out) < mb);
                    ctx.sqr(&mut out, &a);
                    assert_eq!((to_big(&out) * &r) % &mb, (&ab * &ab) % &mb);
                    // round trip through the domain
                    assert_eq!(to_big(&ctx.leave_mont(&ctx.to_mont(&a))), ab);
                    // reduction of a wide (3L-limb) value
                    let w = limbs(&mut seed, 3 * l);
                    assert_eq!(to_big(&ctx.leave_mont(&ctx.reduce_to_mont(&w))), to_big(&w) % &mb);
                    // exponentiation with a full-width secret exponent and with a short public one
                    let e = limbs(&mut seed, if bits <= 2048 { l } else { 4 });
                    let got = ctx.leave_mont(&ctx.pow_ct(&ctx.to_mont(&a), &e));
                    assert_eq!(to_big(&got), ab.modpow(&to_big(&e), &mb));
                    // Public exponents: odd ones (loose squarings, long runs of them included) and even ones
                    // (full squarings: the last step is a square).
                    for e in [65537u64, 3, (1 << 40) + 1, 65536, 6] {
                        let got = ctx.leave_mont(&ctx.pow_vartime(&ctx.to_mont(&a), e));
                        assert_eq!(to_big(&got), ab.modpow(&BigUint::from(e), &mb), "{backend:?} e = {e}");
                    }
                }
            }
        }
    }

    /// The L-limb moduli at the edges of the reduction's carries: R − 1, just above R/2, alternating words.
    fn edge_moduli(l: usize) -> [Vec<u64>; 3] {
        let mut near_half = vec![0u64; l];
        near_half[0] = 1;
        near_half[l - 1] = 1 << 63;
        let all_ones = vec![u64::MAX; l];
        let mut alt = vec![0xaaaa_aaaa_aaaa_aaabu64; l];
        alt[l - 1] |= 1 << 63;
        [all_ones, near_half, alt]
    }

    /// Moduli at the edges of the reduction's carries (R − 1, just above R/2, alternating words) with operands
    /// m − 1, 1, 0 and random values: every backend's product and square equal num-bigint's, at the sizes with
    /// dedicated reduction code (16, 24, 32 limbs) and one without.
    #[test]
    fn product_carry_edges() {
        let mut seed = 0x5eed_cafe_u64;
        for l in [16usize, 24, 32, 20] {
            for m in edge_moduli(l) {
                let mb = to_big(&m);
                let mut m1 = m.clone();
                m1[0] -= 1;
                let mut one = vec![0u64; l];
                one[0] = 1;
                let mut rnd = limbs(&mut seed, l);
                rnd[l - 1] &= u64::MAX >> 2;
                let r_inv = {
                    let r = BigUint::from(1u8) << (64 * l);
                    r.modinv(&mb).unwrap()
                };
                for backend in crate::dispatch::Checked::<Backend>::all() {
                    let ctx = MontCtx::with_backend(&m, backend);
                    for a in [&m1, &one, &rnd] {
                        for b in [&m1, &one, &rnd] {
                            let mut out = vec![0u64; l];
                            ctx.mul(&mut out, a, b);
                            let want = (to_big(a) * to_big(b) * &r_inv) % &mb;
                            assert_eq!(to_big(&out), want, "{backend:?} mul, {l} limbs");
                        }
                        let mut out = vec![0u64; l];
                        ctx.sqr(&mut out, a);
                        let want = (to_big(a) * to_big(a) * &r_inv) % &mb;
                        assert_eq!(to_big(&out), want, "{backend:?} sqr, {l} limbs");
                    }
                }
            }
        }
    }

    /// The loose square of the exponentiation's squarings, at the moduli of `product_carry_edges` and with inputs
    /// anywhere below R (m − 1, m, R − 1, m plus a random value, random full-width values): on the BMI2/ADX
    /// backends it equals the reduction's own definition, s = (a² + u·m)/R with u = −a²·m^-1 mod R, minus m exactly
    /// when s ≥ R; on every backend, for inputs below m, it is congruent to the full square.
    #[test]
    // The loose square's check above R runs on the x86_64 BMI2/ADX backends only; elsewhere its key and counter
    // are set up but never used.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut, unused_variables))]
    fn loose_square_below_r() {
        let mut seed = 0x5eed_1005_u64;
        let cpu = crate::cpu::features();
        if cpu.has(crate::cpu::Features::BMI2 | crate::cpu::Features::ADX | crate::cpu::Features::AVX2) {
            assert!(Backend::available().any(|a| a == Backend::Bmi2Adx), "the Bmi2Adx backend must be tested here");
        }
        let mut loose_checked = 0;
        // 23 limbs: three of sub_masked's single steps (n mod 4), the borrow carried between them, then its blocks.
        for l in [16usize, 24, 32, 20, 23] {
            let mut rnd_m = limbs(&mut seed, l);
            rnd_m[0] |= 1;
            rnd_m[l - 1] |= 1 << 63;
            let r = BigUint::from(1u8) << (64 * l);
            let [all_ones, near_half, alt] = edge_moduli(l);
            for m in [all_ones, near_half, alt, rnd_m] {
                let mb = to_big(&m);
                let r_inv = r.modinv(&mb).unwrap();
                let neg_minv = (&r - mb.modinv(&r).unwrap()) % &r;
                let below_m = {
                    let mut m1 = m.clone();
                    m1[0] -= 1;
                    vec![m1, from_big(&(to_big(&limbs(&mut seed, l)) % &mb), l)]
                };
                let mut anywhere = vec![m.clone(), vec![u64::MAX; l], limbs(&mut seed, l), limbs(&mut seed, l)];
                let plus = to_big(&m) + (to_big(&limbs(&mut seed, l)) % (&r - &mb));
                anywhere.push(from_big(&plus, l));
                for backend in crate::dispatch::Checked::<Backend>::all() {
                    let ctx = MontCtx::with_backend(&m, backend);
                    let mut out = vec![0u64; l];
                    for a in &below_m {
                        ctx.sqr_loose(&mut out, a);
                        let got = to_big(&out);
                        let want = (to_big(a) * to_big(a) * &r_inv) % &mb;
                        assert_eq!(got % &mb, want, "{backend:?} sqr_loose below m, {l} limbs");
                    }
                    #[cfg(target_arch = "x86_64")]
                    if backend.covers(Backend::Bmi2Adx) {
                        for a in &anywhere {
                            let t = to_big(a) * to_big(a);
                            let u = ((&t % &r) * &neg_minv) % &r;
                            let s = (&t + &u * &mb) >> (64 * l);
                            let want = if s >= r { s - &mb } else { s };
                            ctx.sqr_loose(&mut out, a);
                            assert_eq!(to_big(&out), want, "{backend:?} sqr_loose, {l} limbs");
                            assert!(to_big(&out) < r);
                            loose_checked += 1;
                        }
                    }
                }
            }
        }
        if cpu.has(crate::cpu::Features::BMI2 | crate::cpu::Features::ADX | crate::cpu::Features::AVX2) {
            assert!(loose_checked > 0);
        }
    }

    /// The paired exponentiation (both CRT halves in one loop on the IFMA backend) against num-bigint, for every
    /// backend and every size the IFMA code handles, with a base of 0, 1, m − 1 and random values; and the
    /// fallback for moduli of different sizes.
    #[test]
    fn pow_pair_differential() {
        let mut seed = 0x5eed_0002u64;
        let cpu = crate::cpu::features();
        if cpu.has(crate::cpu::Features::AVX512F | crate::cpu::Features::AVX512IFMA) {
            assert!(Backend::available().any(|b| b == Backend::Ifma), "the IFMA backend must be tested here");
        }
        let odd = |seed: &mut u64, bits: usize| {
            let l = bigint::limbs_for_bits(bits);
            let mut m = limbs(seed, l);
            m[0] |= 1;
            let top = bits - 64 * (l - 1);
            m[l - 1] &= u64::MAX >> (64 - top);
            m[l - 1] |= 1 << (top - 1);
            m
        };
        for (ba, bb) in [(1024usize, 1024usize), (1536, 1536), (2048, 2048), (1024, 1000), (1024, 1536)] {
            for backend in Backend::available() {
                for trial in 0..3 {
                    let (ma, mb) = (odd(&mut seed, ba), odd(&mut seed, bb));
                    let (ca, cb) = (MontCtx::with_backend(&ma, backend), MontCtx::with_backend(&mb, backend));
                    let (bigma, bigmb) = (to_big(&ma), to_big(&mb));
                    let pick = |seed: &mut u64, m: &BigUint, l: usize| match trial {
                        0 => from_big(&(m - 1u8), l),
                        1 if l == 16 => vec![0u64; l],
                        1 => from_big(&BigUint::from(1u8), l),
                        _ => from_big(&(to_big(&limbs(seed, l)) % m), l),
                    };
                    let a = pick(&mut seed, &bigma, ma.len());
                    let b = pick(&mut seed, &bigmb, mb.len());
                    let el = ma.len().min(mb.len());
                    let (ea, eb) = (limbs(&mut seed, el), limbs(&mut seed, el));
                    let (ra, rb) = MontCtx::pow_ct_pair(&ca, &ca.to_mont(&a), &ea, &cb, &cb.to_mont(&b), &eb);
                    assert_eq!(
                        to_big(&ca.leave_mont(&ra)),
                        to_big(&a).modpow(&to_big(&ea), &bigma),
                        "{backend:?} {ba}"
                    );
                    assert_eq!(
                        to_big(&cb.leave_mont(&rb)),
                        to_big(&b).modpow(&to_big(&eb), &bigmb),
                        "{backend:?} {bb}"
                    );
                    assert!(to_big(&ra) < bigma && to_big(&rb) < bigmb);
                }
            }
        }
    }

    /// The constant-time table read of every backend returns exactly the entry asked for (and zeros for an
    /// index past the table), at the limb counts of the RSA primes and moduli and at ones the vector read
    /// splits into several passes or leaves to the portable read.
    /// The IFMA exponentiation by a public exponent against num-bigint, at every size it handles, with both
    /// vector widths: random bases, 0, 1 and m − 1, and exponents 1, 2, 3, 65537, 2^64 − 1 and random ones;
    /// contexts without IFMA constants return `None`.
    #[test]
    fn pow_public_ifma_differential() {
        let mut seed = 0x7075_625f_6966_6d61u64;
        let mut tested = 0;
        for backend in Backend::available() {
            for l in [16usize, 24, 32, 8, 48] {
                let mut m = limbs(&mut seed, l);
                m[0] |= 1;
                m[l - 1] |= 1 << 63;
                let ctx = MontCtx::with_backend(&m, backend);
                let bigm = to_big(&m);
                let expect = backend.covers(Backend::Ifma) && matches!(l, 16 | 24 | 32);
                for (t, e) in [1u64, 2, 3, 65537, u64::MAX, limbs(&mut seed, 1)[0] | 1, limbs(&mut seed, 1)[0]]
                    .into_iter()
                    .enumerate()
                {
                    let x = match t {
                        0 => vec![0u64; l],
                        1 => from_big(&BigUint::from(1u8), l),
                        2 => from_big(&(&bigm - 1u8), l),
                        _ => from_big(&(to_big(&limbs(&mut seed, l)) % &bigm), l),
                    };
                    let e = e.max(1);
                    match ctx.pow_public_ifma(&x, e) {
                        Some(y) => {
                            assert!(expect, "{backend:?} l={l}");
                            assert_eq!(
                                to_big(&y),
                                to_big(&x).modpow(&BigUint::from(e), &bigm),
                                "{backend:?} l={l} e={e}"
                            );
                            assert_eq!(y.len(), l);
                            tested += 1;
                        }
                        None => assert!(!expect, "{backend:?} l={l}: IFMA constants expected"),
                    }
                }
            }
        }
        if crate::cpu::features().has(crate::cpu::Features::AVX512F | crate::cpu::Features::AVX512IFMA) {
            assert!(tested > 0, "the IFMA exponentiation must be tested on this CPU");
        }
    }

    #[test]
    fn table_select_every_backend() {
        let mut seed = 0x7ab1_e5e1_ec70_0001u64;
        for l in [4usize, 8, 16, 20, 24, 32, 36, 48, 64, 17] {
            let mut m = limbs(&mut seed, l);
            m[0] |= 1;
            m[l - 1] |= 1 << 63;
            let table = limbs(&mut seed, 32 * l);
            for backend in crate::dispatch::Checked::<Backend>::all() {
                let ctx = MontCtx::with_backend(&m, backend);
                let mut out = vec![0u64; l];
                for idx in 0..34u64 {
                    out.fill(0x5555);
                    ctx.select(&mut out, &table, idx);
                    let want = match table.get(idx as usize * l..(idx as usize + 1) * l) {
                        Some(e) => e.to_vec(),
                        None => vec![0u64; l],
                    };
                    assert_eq!(out, want, "{backend:?}, {l} limbs, index {idx}");
                }
            }
        }
    }

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
        let r = ctx.leave_mont(&p);
        let want = ((a[0] as u128 * b[0] as u128) % m[0] as u128) as u64;
        assert_eq!(r[0], want);
        // Fermat: a^(m-1) = 1.
        let e = [m[0] - 1];
        let x = ctx.leave_mont(&ctx.pow_ct(&am, &e));
        assert_eq!(x[0], 1);
    }
}
