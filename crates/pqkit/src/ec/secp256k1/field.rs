//! Arithmetic in GF(p), p = 2^256 − 2^32 − 977, the field of secp256k1: the portable implementation.
//!
//! ## Representation
//! An element is four little-endian 64-bit limbs holding any value below 2^256, not necessarily below p.
//! Since 2^256 = 2^32 + 977 = `C` (mod p), a carry out of the top limb folds back in as `C`, and the upper
//! half of a 512-bit product folds in as `hi·C` (a 33-bit multiplier). Every operation returns a value below
//! 2^256; [`Fe::to_bytes`] and the comparisons reduce fully.
//!
//! ## Constant time
//! No operation branches on or indexes by an element's value: carries fold by multiplication, borrows by
//! masks; selections use all-zero/all-one masks; inversion and square roots are fixed addition chains.
//! The `_vartime` helpers are for public data only.
//!
//! Every operation is a `const fn`, so the precomputed tables of multiples of the generator are computed by
//! the compiler from their definitions (see `group`), not pasted in.

/// Bit masks for constant-time choices: all ones for "yes", zero for "no".
pub(crate) type Mask = u64;

/// 2^256 mod p.
const C: u64 = 0x1_0000_03D1;

/// p, little-endian limbs.
pub(crate) const P: [u64; 4] = [0xFFFF_FFFE_FFFF_FC2F, u64::MAX, u64::MAX, u64::MAX];

/// p in the limbs of the safegcd inversions.
const P62: crate::ec::safegcd::Mod62 = crate::ec::safegcd::Mod62::new(&P);

/// The mask for `bit` (0 or 1), through `black_box` so the optimiser cannot turn later selections into
/// branches.
#[inline(always)]
pub(crate) fn mask_from_bit(bit: u64) -> Mask {
    0u64.wrapping_sub(core::hint::black_box(bit & 1))
}

/// The same as a `const fn`, without the barrier (for table computation only).
#[inline(always)]
const fn cmask(bit: u64) -> Mask {
    0u64.wrapping_sub(bit & 1)
}

/// All ones if the 64-bit word `x` is zero.
#[inline(always)]
pub(crate) fn mask_is_zero_u64(x: u64) -> Mask {
    // (x | −x) has its top bit set exactly when x ≠ 0.
    mask_from_bit(!((x | x.wrapping_neg()) >> 63) & 1)
}

#[inline(always)]
const fn m(a: u64, b: u64) -> u128 {
    (a as u128) * (b as u128)
}

/// The low 64 bits of `x`, widened.
#[inline(always)]
const fn lo(x: u128) -> u128 {
    x as u64 as u128
}

/// The high 64 bits of `x`.
#[inline(always)]
const fn hi(x: u128) -> u128 {
    x >> 64
}

/// An element of GF(p): four 64-bit limbs, value below 2^256 (see the module docs).
#[derive(Clone, Copy)]
pub(crate) struct Fe(pub(crate) [u64; 4]);

impl Fe {
    pub(crate) const ZERO: Fe = Fe([0; 4]);
    pub(crate) const ONE: Fe = Fe([1, 0, 0, 0]);
    /// The curve constant b = 7.
    pub(crate) const B: Fe = Fe([7, 0, 0, 0]);

    /// `v + c·C` for a 4-limb `v` and a carry word `c` < 2^63, folded twice so the result is below 2^256.
    #[inline(always)]
    const fn fold(v: [u64; 4], c: u64) -> Fe {
        let mut r = [0u64; 4];
        let mut carry = m(c, C);
        let mut i = 0;
        while i < 4 {
            let t = v[i] as u128 + carry;
            r[i] = t as u64;
            carry = t >> 64;
            i += 1;
        }
        // A carry here leaves r below c·C < 2^97, so adding C once more carries at most into limb 2 and
        // cannot carry out.
        let t = r[0] as u128 + (cmask(carry as u64) & C) as u128;
        r[0] = t as u64;
        let t = r[1] as u128 + (t >> 64);
        r[1] = t as u64;
        r[2] += (t >> 64) as u64;
        Fe(r)
    }

    /// The 512-bit product `t` reduced below 2^256: `lo + hi·C`, then the top word folded.
    #[inline(always)]
    const fn reduce_wide(t: &[u64; 8]) -> Fe {
        let mut r = [0u64; 4];
        let mut carry = 0u128;
        let mut i = 0;
        while i < 4 {
            let s = t[i] as u128 + m(t[i + 4], C) + carry;
            r[i] = s as u64;
            carry = s >> 64;
            i += 1;
        }
        Fe::fold(r, carry as u64)
    }

    /// The element of a 32-byte big-endian string: `None` unless it is below p (canonical).
    #[inline]
    pub(crate) const fn from_bytes(b: &[u8; 32]) -> Option<Fe> {
        let w = Self::words_be(b);
        // w < p exactly when w − p borrows.
        let (_, borrow) = sub4(&w, &P);
        if borrow == 0 { None } else { Some(Fe(w)) }
    }

    /// The element of a 32-byte big-endian string taken modulo p (values p..2^256 − 1 wrap).
    #[inline]
    pub(crate) const fn from_bytes_wrapping(b: &[u8; 32]) -> Fe {
        Fe(Self::words_be(b))
    }

    /// The limbs of a big-endian string.
    #[inline(always)]
    pub(crate) const fn words_be(b: &[u8; 32]) -> [u64; 4] {
        let mut w = [0u64; 4];
        let mut i = 0;
        while i < 4 {
            let o = 32 - 8 * (i + 1);
            w[i] = u64::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3], b[o + 4], b[o + 5], b[o + 6], b[o + 7]]);
            i += 1;
        }
        w
    }

    /// The fully reduced value, as limbs below p.
    #[inline]
    pub(crate) const fn normalize(&self) -> [u64; 4] {
        // v < 2^256 < 2p. v ≥ p exactly when v + C carries out of 2^256, and then v − p = v + C − 2^256.
        let v = self.0;
        let mut w = [0u64; 4];
        let mut carry = C as u128;
        let mut i = 0;
        while i < 4 {
            let t = v[i] as u128 + carry;
            w[i] = t as u64;
            carry = t >> 64;
            i += 1;
        }
        // The barrier stops LLVM from turning the carry into a branch (valgrind ct job, docs/hardening.md: it
        // emitted `jae` here, a branch on the secret in ECDH and on the nonce point in signing).
        let ge = core::hint::black_box(cmask(carry as u64));
        let mut out = [0u64; 4];
        let mut i = 0;
        while i < 4 {
            out[i] = (w[i] & ge) | (v[i] & !ge);
            i += 1;
        }
        out
    }

    /// The canonical 32-byte big-endian encoding.
    #[inline]
    pub(crate) const fn to_bytes(self) -> [u8; 32] {
        let w = self.normalize();
        let mut out = [0u8; 32];
        let mut i = 0;
        while i < 4 {
            let b = w[3 - i].to_be_bytes();
            let mut j = 0;
            while j < 8 {
                out[8 * i + j] = b[j];
                j += 1;
            }
            i += 1;
        }
        out
    }

    /// `self + rhs`.
    #[inline(always)]
    pub(crate) const fn add(&self, rhs: &Fe) -> Fe {
        let mut r = [0u64; 4];
        let mut carry = 0u64;
        let mut i = 0;
        while i < 4 {
            let (s1, o1) = self.0[i].overflowing_add(rhs.0[i]);
            let (s2, o2) = s1.overflowing_add(carry);
            r[i] = s2;
            carry = (o1 | o2) as u64;
            i += 1;
        }
        // A carry out is 2^256 = C: add C by mask, and once more if that carries (then r is below C, so the
        // second addition cannot carry).
        let (r, c) = add4_small(&r, cmask(carry) & C);
        let mut r = r;
        r[0] = r[0].wrapping_add(cmask(c) & C);
        Fe(r)
    }

    /// `self − rhs`.
    #[inline(always)]
    pub(crate) const fn sub(&self, rhs: &Fe) -> Fe {
        let (mut r, borrow) = sub4(&self.0, &rhs.0);
        // A borrow left r = a − b + 2^256, which is C too much: take C away, and once more if that borrows
        // (r was below C, so now it is at least 2^256 − C and the second subtraction cannot borrow).
        let c1 = cmask(borrow) & C;
        let (r1, b1) = sub4(&r, &[c1, 0, 0, 0]);
        r = r1;
        let c2 = cmask(b1) & C;
        r[0] = r[0].wrapping_sub(c2);
        Fe(r)
    }

    /// `−self`.
    #[inline(always)]
    pub(crate) const fn neg(&self) -> Fe {
        Fe::ZERO.sub(self)
    }

    /// `self / 2`: an odd value gains p first (by mask), then the 257-bit sum shifts right by one. The
    /// result, at most (2^256 + p) / 2, stays below 2^256. A `const fn` (the doubling is one); the valgrind
    /// constant-time job checks that the mask stays a mask.
    #[inline(always)]
    pub(crate) const fn half(&self) -> Fe {
        let odd = cmask(self.0[0]);
        let mut r = [0u64; 4];
        let mut carry = 0u128;
        let mut i = 0;
        while i < 4 {
            let s = self.0[i] as u128 + (P[i] & odd) as u128 + carry;
            r[i] = s as u64;
            carry = s >> 64;
            i += 1;
        }
        Fe([
            (r[0] >> 1) | (r[1] << 63),
            (r[1] >> 1) | (r[2] << 63),
            (r[2] >> 1) | (r[3] << 63),
            (r[3] >> 1) | ((carry as u64) << 63),
        ])
    }

    /// The eight column sums `c` of a 512-bit product (column k has weight 2^(64k), each sum below 2^68)
    /// reduced below 2^256. The high columns fold down by 2^256 = C before any carry is propagated, so the
    /// only serial carry chain is four words long: `c[k] + c[k+4]·C` is below 2^101.
    #[inline(always)]
    const fn reduce_columns(c: &[u128; 8]) -> Fe {
        let mut r = [0u64; 4];
        let mut carry = 0u128;
        let mut i = 0;
        while i < 4 {
            let h = c[i + 4];
            let s = c[i] + m(h as u64, C) + (((h >> 64) as u64 * C) as u128) * (1u128 << 64) + carry;
            r[i] = s as u64;
            carry = s >> 64;
            i += 1;
        }
        Fe::fold(r, carry as u64)
    }

    /// `self · rhs`, the same value as [`Fe::mul`] computed another way: the sixteen 128-bit products,
    /// independent column sums (no carry chain across products), then [`Fe::reduce_columns`]. Measured
    /// faster in the variable-time Jacobian formulas of verification, slightly slower in the projective
    /// ones, so each uses its own.
    #[inline(always)]
    pub(crate) const fn mul_c(&self, rhs: &Fe) -> Fe {
        let (a, b) = (&self.0, &rhs.0);
        let (p00, p01, p02, p03) = (m(a[0], b[0]), m(a[0], b[1]), m(a[0], b[2]), m(a[0], b[3]));
        let (p10, p11, p12, p13) = (m(a[1], b[0]), m(a[1], b[1]), m(a[1], b[2]), m(a[1], b[3]));
        let (p20, p21, p22, p23) = (m(a[2], b[0]), m(a[2], b[1]), m(a[2], b[2]), m(a[2], b[3]));
        let (p30, p31, p32, p33) = (m(a[3], b[0]), m(a[3], b[1]), m(a[3], b[2]), m(a[3], b[3]));
        let c = [
            lo(p00),
            hi(p00) + lo(p01) + lo(p10),
            (hi(p01) + hi(p10)) + (lo(p02) + lo(p11) + lo(p20)),
            (hi(p02) + hi(p11) + hi(p20)) + ((lo(p03) + lo(p12)) + (lo(p21) + lo(p30))),
            (hi(p03) + hi(p12)) + (hi(p21) + hi(p30)) + (lo(p13) + lo(p22) + lo(p31)),
            (hi(p13) + hi(p22) + hi(p31)) + (lo(p23) + lo(p32)),
            (hi(p23) + hi(p32)) + lo(p33),
            hi(p33),
        ];
        Fe::reduce_columns(&c)
    }

    /// `self²` as [`Fe::mul_c`] computes products: the six cross products once (doubled in the column
    /// sums) and the four squares.
    #[inline(always)]
    pub(crate) const fn square_c(&self) -> Fe {
        let a = &self.0;
        let (p00, p01, p02, p03) = (m(a[0], a[0]), m(a[0], a[1]), m(a[0], a[2]), m(a[0], a[3]));
        let (p11, p12, p13) = (m(a[1], a[1]), m(a[1], a[2]), m(a[1], a[3]));
        let (p22, p23, p33) = (m(a[2], a[2]), m(a[2], a[3]), m(a[3], a[3]));
        let c = [
            lo(p00),
            hi(p00) + 2 * lo(p01),
            2 * (hi(p01) + lo(p02)) + lo(p11),
            2 * (hi(p02) + lo(p03) + lo(p12)) + hi(p11),
            2 * (hi(p03) + hi(p12) + lo(p13)) + lo(p22),
            2 * (hi(p13) + lo(p23)) + hi(p22),
            2 * hi(p23) + lo(p33),
            hi(p33),
        ];
        Fe::reduce_columns(&c)
    }

    /// `self · rhs` by row-wise schoolbook (the faster form inside the complete projective formulas; see
    /// [`Fe::mul_c`] for the Jacobian ones).
    #[inline(always)]
    pub(crate) const fn mul(&self, rhs: &Fe) -> Fe {
        let (a, b) = (&self.0, &rhs.0);
        let mut t = [0u64; 8];
        let mut i = 0;
        while i < 4 {
            let mut carry = 0u128;
            let mut j = 0;
            while j < 4 {
                let s = t[i + j] as u128 + m(a[i], b[j]) + carry;
                t[i + j] = s as u64;
                carry = s >> 64;
                j += 1;
            }
            t[i + 4] = carry as u64;
            i += 1;
        }
        Fe::reduce_wide(&t)
    }

    /// `self²` by rows: the six cross products once, doubled, plus the four squares.
    #[inline(always)]
    pub(crate) const fn square(&self) -> Fe {
        let a = &self.0;
        let mut t = [0u64; 8];
        // Cross products a_i·a_j, i < j.
        let mut i = 0;
        while i < 3 {
            let mut carry = 0u128;
            let mut j = i + 1;
            while j < 4 {
                let s = t[i + j] as u128 + m(a[i], a[j]) + carry;
                t[i + j] = s as u64;
                carry = s >> 64;
                j += 1;
            }
            t[i + 4] = carry as u64;
            i += 1;
        }
        // Double, then add the squares.
        let mut top = 0u64;
        let mut k = 0;
        while k < 8 {
            let v = t[k];
            t[k] = (v << 1) | top;
            top = v >> 63;
            k += 1;
        }
        let mut carry = 0u128;
        let mut i = 0;
        while i < 4 {
            let sq = m(a[i], a[i]);
            let s = t[2 * i] as u128 + (sq as u64) as u128 + carry;
            t[2 * i] = s as u64;
            let s2 = t[2 * i + 1] as u128 + (sq >> 64) + (s >> 64);
            t[2 * i + 1] = s2 as u64;
            carry = s2 >> 64;
            i += 1;
        }
        Fe::reduce_wide(&t)
    }

    /// `self^(2^n)`, n ≥ 1.
    #[inline]
    pub(crate) const fn square_n(&self, n: u32) -> Fe {
        let mut r = self.square();
        let mut i = 1;
        while i < n {
            r = r.square();
            i += 1;
        }
        r
    }

    /// `self · k` for a small constant `k` < 2^31.
    #[inline(always)]
    pub(crate) const fn mul_small(&self, k: u64) -> Fe {
        let mut r = [0u64; 4];
        let mut carry = 0u128;
        let mut i = 0;
        while i < 4 {
            let t = m(self.0[i], k) + carry;
            r[i] = t as u64;
            carry = t >> 64;
            i += 1;
        }
        Fe::fold(r, carry as u64)
    }

    /// `a` where `mask` is all ones, `b` where it is zero.
    #[inline(always)]
    pub(crate) const fn select(a: &Fe, b: &Fe, mask: Mask) -> Fe {
        let mut r = b.0;
        let mut i = 0;
        while i < 4 {
            r[i] ^= mask & (a.0[i] ^ r[i]);
            i += 1;
        }
        Fe(r)
    }

    /// All ones if `self == 0` (mod p).
    #[inline]
    pub(crate) fn mask_is_zero(&self) -> Mask {
        let w = self.normalize();
        mask_is_zero_u64(w[0] | w[1] | w[2] | w[3])
    }

    /// All ones if `self == rhs` (mod p).
    #[inline]
    pub(crate) fn mask_eq(&self, rhs: &Fe) -> Mask {
        self.sub(rhs).mask_is_zero()
    }

    /// `self == rhs` for public values.
    #[inline]
    pub(crate) fn eq_vartime(&self, rhs: &Fe) -> bool {
        self.normalize() == rhs.normalize()
    }

    /// The low bit of the fully reduced value (1 for "odd").
    #[inline]
    pub(crate) const fn is_odd(&self) -> u64 {
        self.normalize()[0] & 1
    }

    /// `a` or `−a`, making the result's parity equal to `odd` (0 or 1), in constant time.
    #[inline]
    pub(crate) fn with_parity(&self, odd: u64) -> Fe {
        let flip = mask_from_bit(self.is_odd() ^ odd);
        Fe::select(&self.neg(), self, flip)
    }

    /// `self^(2^223 − 1)` and the intermediate powers the chains need: `(x223, x22, x2)` where `xk` is
    /// `self^(2^k − 1)`.
    #[inline]
    const fn pow_chain(&self) -> (Fe, Fe, Fe) {
        let x2 = self.square().mul(self);
        let x3 = x2.square().mul(self);
        let x6 = x3.square_n(3).mul(&x3);
        let x9 = x6.square_n(3).mul(&x3);
        let x11 = x9.square_n(2).mul(&x2);
        let x22 = x11.square_n(11).mul(&x11);
        let x44 = x22.square_n(22).mul(&x22);
        let x88 = x44.square_n(44).mul(&x44);
        let x176 = x88.square_n(88).mul(&x88);
        let x220 = x176.square_n(44).mul(&x44);
        let x223 = x220.square_n(3).mul(&x3);
        (x223, x22, x2)
    }

    /// `self^(p − 2) = self^-1` (Fermat; 0 maps to 0). Constant time.
    ///
    /// p − 2 in binary: 223 ones, a zero, 22 ones, then `0000101101`.
    #[cfg(test)]
    #[inline]
    pub(crate) const fn invert(&self) -> Fe {
        let (x223, x22, x2) = self.pow_chain();
        let t = x223.square_n(23).mul(&x22);
        let t = t.square_n(5).mul(self);
        let t = t.square_n(3).mul(&x2);
        t.square_n(2).mul(self)
    }

    /// `self^-1` (0 maps to 0) in variable time, for public values only ([`crate::ec::safegcd`]).
    pub(crate) fn invert_vartime(&self) -> Fe {
        Fe(crate::ec::safegcd::invert_vartime_bitwise(&self.normalize(), &P62))
    }

    /// `self^-1` (0 maps to 0) in constant time by the Bernstein–Yang divsteps ([`crate::ec::safegcd`]; on
    /// x86_64 with the packed divsteps of [`crate::x86::divsteps`]), for run-time inversions of secrets: a
    /// fixed sequence of steps without branches, several times faster than the Fermat chain of
    /// `Fe::invert`, which stays for the derivation of the generated tables (a `const fn`).
    #[inline]
    pub(crate) fn invert_ct(&self) -> Fe {
        #[cfg(target_arch = "x86_64")]
        let r = crate::x86::divsteps::invert(&self.normalize(), &P62);
        #[cfg(not(target_arch = "x86_64"))]
        let r = crate::ec::safegcd::invert(&self.normalize(), &P62);
        Fe(r)
    }

    /// A square root, in constant time: `(mask, r)` with `mask` all ones and `r² = self` when `self` is a
    /// square, else zero. p ≡ 3 (mod 4), so the candidate is `self^((p+1)/4)`; (p + 1)/4 in binary: 223
    /// ones, a zero, 22 ones, then `00001100`.
    #[inline]
    pub(crate) fn sqrt(&self) -> (Mask, Fe) {
        let (x223, x22, x2) = self.pow_chain();
        let r = x223.square_n(23).mul(&x22).square_n(6).mul(&x2).square_n(2);
        (r.square().mask_eq(self), r)
    }
}

/// `a + k` over four limbs for a one-word `k`, and the carry out (0 or 1).
#[inline(always)]
const fn add4_small(a: &[u64; 4], k: u64) -> ([u64; 4], u64) {
    let mut r = [0u64; 4];
    let mut carry = k;
    let mut i = 0;
    while i < 4 {
        let (s, o) = a[i].overflowing_add(carry);
        r[i] = s;
        carry = o as u64;
        i += 1;
    }
    (r, carry)
}

/// `a − b` over four limbs and the borrow out (0 or 1).
#[inline(always)]
pub(crate) const fn sub4(a: &[u64; 4], b: &[u64; 4]) -> ([u64; 4], u64) {
    let mut r = [0u64; 4];
    let mut borrow = 0u64;
    let mut i = 0;
    while i < 4 {
        let (d1, o1) = a[i].overflowing_sub(b[i]);
        let (d2, o2) = d1.overflowing_sub(borrow);
        r[i] = d2;
        borrow = (o1 | o2) as u64;
        i += 1;
    }
    (r, borrow)
}

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use super::*;
    use num_bigint::BigUint;
    use std::vec::Vec;

    /// xorshift64*: deterministic test data.
    pub(crate) struct Xs(pub(crate) u64);
    impl Xs {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        pub(crate) fn bytes(&mut self) -> [u8; 32] {
            let mut b = [0u8; 32];
            for c in b.chunks_exact_mut(8) {
                c.copy_from_slice(&self.next().to_le_bytes());
            }
            b
        }
    }

    pub(crate) fn p() -> BigUint {
        (BigUint::from(1u8) << 256) - (BigUint::from(1u8) << 32) - 977u32
    }

    pub(crate) fn big(w: &[u64; 4]) -> BigUint {
        let mut b = [0u8; 32];
        for i in 0..4 {
            b[8 * i..8 * i + 8].copy_from_slice(&w[i].to_le_bytes());
        }
        BigUint::from_bytes_le(&b)
    }

    pub(crate) fn to_big(a: &Fe) -> BigUint {
        BigUint::from_bytes_be(&a.to_bytes())
    }

    /// Random and edge-case limb patterns over the whole range below 2^256.
    pub(crate) fn edge_words(seed: u64) -> Vec<[u64; 4]> {
        let mx = u64::MAX;
        let mut words: Vec<[u64; 4]> = std::vec![
            [0, 0, 0, 0],
            [1, 0, 0, 0],
            [P[0] - 1, mx, mx, mx],
            P,
            [P[0] + 1, mx, mx, mx],
            [mx, mx, mx, mx],
            [C - 1, 0, 0, 0],
            [C, 0, 0, 0],
            [0, 0, 0, 1 << 63],
            [0xFFFF_FFFF_FFFF_FC2F, mx, mx, mx], // 2^256 − 977 (= 2^32): its square folds twice
            [mx - C, mx, mx, mx],
        ];
        for c in 0..256u32 {
            let pick = |k: u32| [0, 1, 1 << 63, mx][((c >> (2 * k)) & 3) as usize];
            words.push([pick(0), pick(1), pick(2), pick(3)]);
        }
        let mut rng = Xs(seed);
        for _ in 0..400 {
            words.push([rng.next(), rng.next(), rng.next(), rng.next()]);
        }
        // Values just below 2^256, whose products fold twice.
        for _ in 0..100 {
            words.push([rng.next(), mx, mx, mx]);
            words.push([rng.next() | (mx << 40), rng.next(), mx, mx]);
        }
        words
    }

    #[test]
    fn fe_matches_bigint() {
        let p = p();
        let words = edge_words(0x5ec9_0001);
        for (i, wa) in words.iter().enumerate() {
            let wb = &words[(i * 7 + 3) % words.len()];
            let (a, b) = (Fe(*wa), Fe(*wb));
            let (va, vb) = (big(wa) % &p, big(wb) % &p);
            assert_eq!(to_big(&a), va, "to_bytes {i}");
            assert_eq!(to_big(&a.mul(&b)), (&va * &vb) % &p, "mul {i}");
            assert_eq!(to_big(&a.square()), (&va * &va) % &p, "square {i}");
            assert_eq!(a.mul_c(&b).normalize(), a.mul(&b).normalize(), "mul_c vs mul {i}");
            assert_eq!(a.square_c().normalize(), a.square().normalize(), "square_c vs square {i}");
            assert_eq!(to_big(&a.add(&b)), (&va + &vb) % &p, "add {i}");
            assert_eq!(to_big(&a.sub(&b)), (&va + &p - &vb) % &p, "sub {i}");
            assert_eq!(to_big(&a.neg()), (&p - &va) % &p, "neg {i}");
            // Halving: 2·half(a) = a (mod p) for every limb pattern, including odd values at or above p, whose
            // sum with p carries into bit 256.
            assert_eq!((to_big(&a.half()) * 2u8) % &p, va, "half {i}");
            assert_eq!(to_big(&a.mul_small(21)), (&va * 21u32) % &p, "mul_small {i}");
            assert_eq!(to_big(&a.invert()), va.modpow(&(&p - 2u8), &p), "invert {i}");
            assert_eq!(to_big(&a.invert_vartime()), va.modpow(&(&p - 2u8), &p), "invert_vartime {i}");
            assert_eq!(to_big(&a.invert_ct()), va.modpow(&(&p - 2u8), &p), "invert_ct {i}");
            let (ok, r) = a.sqrt();
            let is_square = va.modpow(&((&p - 1u8) >> 1), &p) != &p - 1u8;
            assert_eq!(ok == u64::MAX, is_square, "sqrt {i}");
            if is_square {
                assert_eq!((to_big(&r) * to_big(&r)) % &p, va);
            }
            assert_eq!(a.mask_is_zero() == u64::MAX, va == BigUint::from(0u8));
            assert_eq!(a.mask_eq(&b) == u64::MAX, va == vb);
            assert_eq!(a.is_odd() == 1, (&va % 2u8) == BigUint::from(1u8), "is_odd {i}");
            let bytes = {
                let mut b = [0u8; 32];
                for k in 0..4 {
                    b[32 - 8 * (k + 1)..32 - 8 * k].copy_from_slice(&wa[k].to_be_bytes());
                }
                b
            };
            assert_eq!(Fe::from_bytes(&bytes).is_some(), big(wa) < p, "from_bytes {i}");
            assert_eq!(to_big(&Fe::from_bytes_wrapping(&bytes)), va);
        }
    }

    /// The column-sum product and square against the row-wise ones, on many random inputs (uniform,
    /// and biased to limbs of all ones or zero so that every column sum and carry reaches its extremes).
    #[test]
    fn fe_mul_matches_reference_random() {
        let mut rng = Xs(0x5ec9_0002);
        let mx = u64::MAX;
        for i in 0..200_000 {
            let mut w = [[0u64; 4]; 2];
            for x in w.iter_mut() {
                for l in x.iter_mut() {
                    *l = match rng.next() % 5 {
                        0 => mx,
                        1 => 0,
                        2 => mx - (rng.next() & 0xFFFF),
                        _ => rng.next(),
                    };
                }
            }
            let (a, b) = (Fe(w[0]), Fe(w[1]));
            let (r, rr) = (a.mul_c(&b), a.mul(&b));
            assert_eq!(r.normalize(), rr.normalize(), "mul {i}");
            let (s, sr) = (a.square_c(), a.square());
            assert_eq!(s.normalize(), sr.normalize(), "square {i}");
        }
    }
}
