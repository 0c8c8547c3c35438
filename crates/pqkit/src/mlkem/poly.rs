//! Polynomials of R_q = Z_q[X]/(X^256 + 1), q = 3329: constants, the NTT twiddle tables (computed at compile
//! time from ζ = 17), and the byte encodings and compression of FIPS 203 §4.2.1.
//!
//! Coefficients are `i16`. Arithmetic uses Montgomery reduction with R = 2^16 and Barrett reduction, never
//! `%` or `/` on secret values.

use zeroize::Zeroize;

/// The modulus q.
pub(crate) const Q: i16 = 3329;
/// q^-1 mod 2^16, as a signed 16-bit value.
pub(crate) const QINV: i16 = -3327;
/// Barrett constant round(2^26 / q).
pub(crate) const BARRETT_V: i32 = 20159;
/// R^2 / 128 mod q (R = 2^16): multiplying by it with a Montgomery multiplication undoes both the 1/128 of the
/// inverse NTT and the R^-1 a base multiplication leaves.
pub(crate) const INV_NTT_F: i16 = 1441;
/// R^2 mod q: a Montgomery multiplication by it converts to the Montgomery domain (multiplies by R).
pub(crate) const R2: i16 = 1353;

/// A polynomial: 256 coefficients, aligned for 32-byte vector loads.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Poly {
    pub(crate) c: [i16; 256],
}

impl Poly {
    pub(crate) const ZERO: Poly = Poly { c: [0; 256] };
}

impl Zeroize for Poly {
    fn zeroize(&mut self) {
        crate::ct::wipe(&mut self.c);
    }
}

/// `a^e mod q` (compile time only).
const fn pow_mod(a: u32, mut e: u32) -> u32 {
    let mut r = 1u32;
    let mut b = a % 3329;
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % 3329;
        }
        b = b * b % 3329;
        e >>= 1;
    }
    r
}

const fn bitrev7(i: u32) -> u32 {
    (i.reverse_bits() >> 25) & 0x7f
}

/// Maps `x` in [0, q) to the centred representative in (-q/2, q/2].
const fn centre(x: u32) -> i16 {
    if x > 1664 { x as i16 - 3329 } else { x as i16 }
}

/// `ZETAS[i] = ζ^BitRev7(i) · R mod q` (centred): the NTT twiddles in Montgomery form (FIPS 203 §4.3).
pub(crate) const ZETAS: [i16; 128] = {
    let mut t = [0i16; 128];
    let mut i = 0;
    while i < 128 {
        let z = pow_mod(17, bitrev7(i as u32));
        t[i] = centre(((z as u64) * 65536 % 3329) as u32);
        i += 1;
    }
    t
};

/// `GAMMAS[i] = ζ^(2·BitRev7(i)+1) · R mod q` (centred): the base-multiplication moduli, Montgomery form.
pub(crate) const GAMMAS: [i16; 128] = {
    let mut t = [0i16; 128];
    let mut i = 0;
    while i < 128 {
        let z = pow_mod(17, 2 * bitrev7(i as u32) + 1);
        t[i] = centre(((z as u64) * 65536 % 3329) as u32);
        i += 1;
    }
    t
};

/// Montgomery reduction: returns `a · 2^-16 mod q` in (-q, q) for |a| < q · 2^15.
#[inline(always)]
pub(crate) fn mont_reduce(a: i32) -> i16 {
    let t = (a as i16).wrapping_mul(QINV);
    ((a - i32::from(t) * i32::from(Q)) >> 16) as i16
}

/// Montgomery multiplication: `a · b · 2^-16 mod q`.
#[inline(always)]
pub(crate) fn fqmul(a: i16, b: i16) -> i16 {
    mont_reduce(i32::from(a) * i32::from(b))
}

/// Barrett reduction: the representative of `a mod q` in [-(q-1)/2, (q-1)/2].
#[inline(always)]
pub(crate) fn barrett(a: i16) -> i16 {
    let t = ((BARRETT_V * i32::from(a) + (1 << 25)) >> 26) as i16;
    a.wrapping_sub(t.wrapping_mul(Q))
}

/// Maps a value in (-q, q) to [0, q) without a branch.
#[inline(always)]
pub(crate) fn to_unsigned(a: i16) -> i16 {
    a + ((a >> 15) & Q)
}

/// `Compress_d(x)` for x in [0, q): round(2^d · x / q) mod 2^d, by multiply and shift (no division).
#[inline(always)]
pub(crate) fn compress(x: i16, d: u32) -> u16 {
    // floor((2^d x + 1664) / q) == round(2^d x / q) because q is odd; the division by q is the exact
    // multiply-shift floor(y · ceil(2^35 / q) / 2^35), valid for y < 2^23.
    let y = ((x as u64) << d) + 1664;
    ((y * 10_321_340) >> 35) as u16 & ((1u16 << d) - 1)
}

/// `Decompress_d(y)`: round(q · y / 2^d).
#[inline(always)]
pub(crate) fn decompress(y: u16, d: u32) -> i16 {
    ((u32::from(y) * 3329 + (1 << (d - 1))) >> d) as i16
}

/// ByteEncode_12 of a polynomial whose coefficients are in [0, q).
pub(crate) fn encode12(p: &Poly, out: &mut [u8]) {
    for (pair, o) in p.c.chunks_exact(2).zip(out.chunks_exact_mut(3)) {
        let a = pair[0] as u16;
        let b = pair[1] as u16;
        o[0] = a as u8;
        o[1] = ((a >> 8) | (b << 4)) as u8;
        o[2] = (b >> 4) as u8;
    }
}

/// ByteDecode_12 without the reduction: the raw 12-bit values (0..4096).
#[inline]
pub(crate) fn decode12_raw(bytes: &[u8], p: &mut Poly) {
    for (pair, b) in p.c.chunks_exact_mut(2).zip(bytes.chunks_exact(3)) {
        pair[0] = (u16::from(b[0]) | (u16::from(b[1] & 0x0f) << 8)) as i16;
        pair[1] = ((u16::from(b[1]) >> 4) | (u16::from(b[2]) << 4)) as i16;
    }
}

/// ByteDecode_12 (FIPS 203 Algorithm 6 with m = q): every 12-bit value reduced mod q, constant time.
pub(crate) fn decode12(bytes: &[u8], p: &mut Poly) {
    decode12_raw(bytes, p);
    for c in p.c.iter_mut() {
        // 12-bit values are below 2q, so one conditional subtraction reduces them.
        let t = *c - Q;
        *c = t + ((t >> 15) & Q);
    }
}

/// True if every 12-bit value in `bytes` (a multiple of 3 bytes) is below q: the modulus check of §7.2,
/// equivalent to ByteEncode_12(ByteDecode_12(bytes)) == bytes. Public data only.
pub(crate) fn is_reduced12(bytes: &[u8]) -> bool {
    let mut bad = 0u16;
    for b in bytes.chunks_exact(3) {
        let x = u16::from(b[0]) | (u16::from(b[1] & 0x0f) << 8);
        let y = (u16::from(b[1]) >> 4) | (u16::from(b[2]) << 4);
        bad |= u16::from(x >= 3329) | u16::from(y >= 3329);
    }
    bad == 0
}

/// ByteEncode_d(Compress_d(p)) for d in {1, 4, 5, 10, 11}; coefficients of `p` must be in [0, q).
/// Writes `32 · d` bytes.
pub(crate) fn compress_encode(p: &Poly, d: u32, out: &mut [u8]) {
    match d {
        1 => compress_encode_d::<1>(p, out),
        4 => compress_encode_d::<4>(p, out),
        5 => compress_encode_d::<5>(p, out),
        10 => compress_encode_d::<10>(p, out),
        _ => compress_encode_d::<11>(p, out),
    }
}

/// Eight coefficients at a time: 8·D bits are exactly D bytes.
fn compress_encode_d<const D: u32>(p: &Poly, out: &mut [u8]) {
    for (c8, o) in p.c.chunks_exact(8).zip(out.chunks_exact_mut(D as usize)) {
        let mut acc = 0u128;
        for (i, &c) in c8.iter().enumerate() {
            acc |= u128::from(compress(c, D)) << (D as usize * i);
        }
        o.copy_from_slice(&acc.to_le_bytes()[..D as usize]);
    }
}

/// Decompress_d(ByteDecode_d(bytes)) for d in {1, 4, 5, 10, 11}: reads `32 · d` bytes.
pub(crate) fn decode_decompress(bytes: &[u8], d: u32, p: &mut Poly) {
    match d {
        1 => decode_decompress_d::<1>(bytes, p),
        4 => decode_decompress_d::<4>(bytes, p),
        5 => decode_decompress_d::<5>(bytes, p),
        10 => decode_decompress_d::<10>(bytes, p),
        _ => decode_decompress_d::<11>(bytes, p),
    }
}

fn decode_decompress_d<const D: u32>(bytes: &[u8], p: &mut Poly) {
    let mask = (1u128 << D) - 1;
    for (b, c8) in bytes.chunks_exact(D as usize).zip(p.c.chunks_exact_mut(8)) {
        let mut buf = [0u8; 16];
        buf[..D as usize].copy_from_slice(b);
        let acc = u128::from_le_bytes(buf);
        for (i, c) in c8.iter_mut().enumerate() {
            *c = decompress(((acc >> (D as usize * i)) & mask) as u16, D);
        }
    }
}

/// Decompress_1(ByteDecode_1(m)): bit i of the message becomes 0 or round(q/2) = 1665, without a branch.
pub(crate) fn from_msg(m: &[u8; 32], p: &mut Poly) {
    for (i, c) in p.c.iter_mut().enumerate() {
        let bit = i16::from((m[i / 8] >> (i % 8)) & 1);
        *c = (-bit) & 1665;
    }
}

/// ByteEncode_1(Compress_1(p)); coefficients in [0, q).
pub(crate) fn to_msg(p: &Poly, m: &mut [u8; 32]) {
    compress_encode(p, 1, m);
}

/// SamplePolyCBD_η (FIPS 203 Algorithm 8) from `64 · η` bytes, η in {2, 3}.
pub(crate) fn cbd(bytes: &[u8], eta: usize, p: &mut Poly) {
    if eta == 2 {
        for (i, w) in bytes.chunks_exact(4).enumerate() {
            let t = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            let d = (t & 0x5555_5555) + ((t >> 1) & 0x5555_5555);
            for j in 0..8 {
                let a = ((d >> (4 * j)) & 3) as i16;
                let b = ((d >> (4 * j + 2)) & 3) as i16;
                p.c[8 * i + j] = a - b;
            }
        }
    } else {
        for (i, w) in bytes.chunks_exact(3).enumerate() {
            let t = u32::from(w[0]) | (u32::from(w[1]) << 8) | (u32::from(w[2]) << 16);
            let d = (t & 0x0024_9249) + ((t >> 1) & 0x0024_9249) + ((t >> 2) & 0x0024_9249);
            for j in 0..4 {
                let a = ((d >> (6 * j)) & 7) as i16;
                let b = ((d >> (6 * j + 3)) & 7) as i16;
                p.c[4 * i + j] = a - b;
            }
        }
    }
}

/// Rejection sampling of SampleNTT (FIPS 203 Algorithm 7) on public XOF output: appends accepted
/// coefficients to `p.c[*n..]` and returns when the buffer is used up or the polynomial is full.
pub(crate) fn rej_uniform(p: &mut Poly, n: &mut usize, buf: &[u8]) {
    let mut j = 0;
    while *n < 256 && j + 3 <= buf.len() {
        let d1 = u16::from(buf[j]) | (u16::from(buf[j + 1] & 0x0f) << 8);
        let d2 = (u16::from(buf[j + 1]) >> 4) | (u16::from(buf[j + 2]) << 4);
        j += 3;
        if d1 < 3329 {
            p.c[*n] = d1 as i16;
            *n += 1;
        }
        if d2 < 3329 && *n < 256 {
            p.c[*n] = d2 as i16;
            *n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants() {
        assert_eq!((i32::from(Q) * i32::from(QINV)) & 0xffff, 1);
        assert_eq!(BARRETT_V, ((1i64 << 26) + 1664) as i32 / 3329);
        assert_eq!(i64::from(R2), (65536i64 * 65536) % 3329);
        // 128^-1 mod q is 3303; INV_NTT_F = 3303 · R^2 mod q.
        assert_eq!(128 * 3303 % 3329, 1);
        assert_eq!(i64::from(INV_NTT_F), 3303 * ((65536i64 * 65536) % 3329) % 3329);
        assert_eq!(pow_mod(17, 128), 3328);
        // ZETAS[1] = 17^64 · R.
        assert_eq!((i64::from(ZETAS[1]) + 3329) % 3329, i64::from(pow_mod(17, 64)) * 65536 % 3329);
    }

    #[test]
    fn compress_matches_exact_rounding() {
        for d in [1u32, 4, 5, 10, 11] {
            for x in 0..3329i64 {
                // round(2^d x / q) with halves rounded up, computed exactly on public test data.
                let exact = (((x << d) * 2 + 3329) / (2 * 3329)) & ((1 << d) - 1);
                assert_eq!(i64::from(compress(x as i16, d)), exact, "d={d} x={x}");
            }
        }
    }

    #[test]
    fn reductions() {
        for a in i16::MIN..=i16::MAX {
            let r = barrett(a);
            assert!((-1664..=1664).contains(&r));
            assert_eq!((i32::from(r) - i32::from(a)).rem_euclid(3329), 0);
        }
        for a in [-(3329 << 15) + 1, -1, 0, 1, 12345678, (3329 << 15) - 1] {
            let r = mont_reduce(a);
            assert!(r > -3329 && r < 3329);
            assert_eq!((i64::from(r) * 65536 - i64::from(a)).rem_euclid(3329), 0);
        }
    }
}
