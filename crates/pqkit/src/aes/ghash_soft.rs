//! Portable, constant-time GHASH.
//!
//! Field elements are `u128` in the byte-reversed domain (`u128::from_be_bytes(block)`), the same form the
//! PCLMULQDQ backends use, so the one table of powers of H serves every backend.
//!
//! The 64x64-bit carry-less multiply uses ordinary integer multiplications on operands with "holes": each
//! operand is split into four parts holding every fourth bit, so the integer sums that land on a kept bit
//! position never carry into the next kept position. The high half comes from the same routine on bit-reversed
//! inputs. No tables, no secret-dependent branches.
//!
//! Multiplication `mul(a, b)` returns `a * b * x` (in GCM's bit order), so a hash key pre-multiplied by x^-1
//! gives a true product; [`powers`] prepares the table that way.

/// Low 64 bits of the carry-less product of `x` and `y`.
#[inline]
fn bmul64(x: u64, y: u64) -> u64 {
    const M0: u64 = 0x1111_1111_1111_1111;
    const M1: u64 = M0 << 1;
    const M2: u64 = M0 << 2;
    const M3: u64 = M0 << 3;
    let (x0, x1, x2, x3) = (x & M0, x & M1, x & M2, x & M3);
    let (y0, y1, y2, y3) = (y & M0, y & M1, y & M2, y & M3);
    let m = |a: u64, b: u64| a.wrapping_mul(b);
    let z0 = m(x0, y0) ^ m(x1, y3) ^ m(x2, y2) ^ m(x3, y1);
    let z1 = m(x0, y1) ^ m(x1, y0) ^ m(x2, y3) ^ m(x3, y2);
    let z2 = m(x0, y2) ^ m(x1, y1) ^ m(x2, y0) ^ m(x3, y3);
    let z3 = m(x0, y3) ^ m(x1, y2) ^ m(x2, y1) ^ m(x3, y0);
    (z0 & M0) | (z1 & M1) | (z2 & M2) | (z3 & M3)
}

/// Full 128-bit carry-less product of two 64-bit values.
#[inline]
pub(crate) fn clmul(x: u64, y: u64) -> u128 {
    let lo = bmul64(x, y);
    let hi = bmul64(x.reverse_bits(), y.reverse_bits()).reverse_bits() >> 1;
    (u128::from(hi) << 64) | u128::from(lo)
}

/// Reduces the 256-bit product `hi:lo` modulo the GCM polynomial.
#[inline]
fn reduce(lo: u128, hi: u128) -> u128 {
    const P: u64 = 0xc200_0000_0000_0000;
    let t = clmul(lo as u64, P);
    let lo = lo.rotate_left(64) ^ t;
    let t = clmul(lo as u64, P);
    let lo = lo.rotate_left(64) ^ t;
    hi ^ lo
}

/// Unreduced product accumulated as (lo, hi).
#[inline]
fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let (a0, a1) = (a as u64, (a >> 64) as u64);
    let (b0, b1) = (b as u64, (b >> 64) as u64);
    let lo = clmul(a0, b0);
    let hi = clmul(a1, b1);
    // Karatsuba middle term.
    let mid = clmul(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
    (lo ^ (mid << 64), hi ^ (mid >> 64))
}

/// `a * b * x` in GCM's field (see the module docs).
#[inline]
pub(crate) fn mul(a: u128, b: u128) -> u128 {
    let (lo, hi) = mul_wide(a, b);
    reduce(lo, hi)
}

/// `htab[i]` = H^(16-i) * x^-1 for the hash key `h` = E(K, 0^128) read big-endian.
pub(crate) fn powers(h: u128) -> [u128; 16] {
    powers_with(h, mul)
}

/// [`powers`] with the field multiplication `mul` (this module's, or a carry-less-multiply instruction's).
#[inline]
pub(crate) fn powers_with(h: u128, mut mul: impl FnMut(u128, u128) -> u128) -> [u128; 16] {
    // H * x^-1: shift left by one in this bit order, folding the polynomial in when the top bit falls out.
    let carry = 0u128.wrapping_sub(h >> 127);
    let h1 = (h << 1) ^ (carry & 0xc200_0000_0000_0000_0000_0000_0000_0001);
    let mut t = [0u128; 16];
    t[15] = h1;
    for i in (0..15).rev() {
        t[i] = mul(t[i + 1], h1);
    }
    t
}

/// Absorbs `data` (final partial block zero-padded), 8 blocks per reduction when it can.
pub(crate) fn ghash(htab: &super::HTable, state: &mut u128, data: &[u8]) {
    let h = &htab.h;
    let mut y = *state;
    let mut chunks = data.chunks_exact(128);
    for c in &mut chunks {
        let (mut lo, mut hi) = (0u128, 0u128);
        for j in 0..8 {
            let mut x = u128::from_be_bytes(c[16 * j..16 * j + 16].try_into().unwrap());
            if j == 0 {
                x ^= y;
            }
            let (l, hh) = mul_wide(x, h[8 + j]);
            lo ^= l;
            hi ^= hh;
        }
        y = reduce(lo, hi);
    }
    for c in chunks.remainder().chunks(16) {
        let mut b = [0u8; 16];
        b[..c.len()].copy_from_slice(c);
        y = mul(y ^ u128::from_be_bytes(b), h[15]);
    }
    *state = y;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clmul_ref(x: u64, y: u64) -> u128 {
        let mut r = 0u128;
        for i in 0..64 {
            if (y >> i) & 1 == 1 {
                r ^= u128::from(x) << i;
            }
        }
        r
    }

    #[test]
    fn clmul_matches_schoolbook() {
        let mut s = 0x0123_4567_89ab_cdefu64;
        for _ in 0..200 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let x = s;
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let y = s;
            assert_eq!(clmul(x, y), clmul_ref(x, y));
        }
        assert_eq!(clmul(u64::MAX, u64::MAX), clmul_ref(u64::MAX, u64::MAX));
    }
}
