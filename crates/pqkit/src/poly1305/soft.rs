//! Portable Poly1305: radix 2^44, three 64-bit limbs, products in `u128`.
//!
//! An element of GF(2^130 - 5) is held as `h = h0 + h1·2^44 + h2·2^88` with `h0, h1` nominally 44 bits and
//! `h2` nominally 42 bits. Limbs are allowed to run a few bits over between operations ("partially reduced");
//! [`carry`] brings them back and [`finalize`] reduces fully. Reduction uses `2^130 ≡ 5 (mod p)`, so the
//! product terms that land at `2^132` are folded back multiplied by 20 (the `s1`, `s2` below).
//!
//! Every function here runs in time independent of the values: no branch and no table index depends on the
//! key, the accumulator or the message; the final conditional subtraction is a mask select.
//!
//! This file is the reference the SIMD backends are tested against. Its helpers ([`mul`], [`carry`],
//! [`load_r`]) are also used by them to precompute powers of `r` and to finish short tails.

pub(super) const M44: u64 = (1 << 44) - 1;
pub(super) const M42: u64 = (1 << 42) - 1;

/// Loads and clamps `r` (the first 16 key bytes) into radix-2^44 limbs.
pub(super) fn load_r(key: &[u8; 32]) -> [u64; 3] {
    let t0 = u64::from_le_bytes(key[0..8].try_into().unwrap()) & 0x0ffffffc0fffffff;
    let t1 = u64::from_le_bytes(key[8..16].try_into().unwrap()) & 0x0ffffffc0ffffffc;
    [t0 & M44, ((t0 >> 44) | (t1 << 20)) & M44, (t1 >> 24) & M42]
}

/// Loads `s` (the last 16 key bytes) as two little-endian 64-bit words.
pub(super) fn load_s(key: &[u8; 32]) -> [u64; 2] {
    [u64::from_le_bytes(key[16..24].try_into().unwrap()), u64::from_le_bytes(key[24..32].try_into().unwrap())]
}

/// `a · b mod p`, partially reduced.
///
/// Input bounds: every limb of `a` below 2^47, `b` limbs below 2^44 (any power of a clamped `r`, carried).
/// Output: `h0 < 2^44`, `h1 < 2^44 + 2^14`, `h2 < 2^42`.
#[inline(always)]
pub(super) fn mul(a: [u64; 3], b: [u64; 3]) -> [u64; 3] {
    let [a0, a1, a2] = a.map(u128::from);
    let [b0, b1, b2] = b.map(u128::from);
    // Terms of weight 2^132 and 2^176 wrap to weight 2^0 and 2^44 times 20 (2^132 = 4·2^130 ≡ 4·5).
    let s1 = b1 * 20;
    let s2 = b2 * 20;
    let d0 = a0 * b0 + a1 * s2 + a2 * s1;
    let d1 = a0 * b1 + a1 * b0 + a2 * s2;
    let d2 = a0 * b2 + a1 * b1 + a2 * b0;
    carry_wide(d0, d1, d2)
}

/// Carries a 3-limb product (each below 2^100) down to a partially reduced element.
#[inline(always)]
fn carry_wide(d0: u128, mut d1: u128, mut d2: u128) -> [u64; 3] {
    d1 += d0 >> 44;
    let h0 = d0 as u64 & M44;
    d2 += d1 >> 44;
    let h1 = d1 as u64 & M44;
    let h2 = d2 as u64 & M42;
    // Bits at and above 2^130: fold back times 5. `c` < 2^58 for the bounds of `mul`.
    let c = (d2 >> 42) as u64;
    let h0 = h0 + c * 5;
    let h1 = h1 + (h0 >> 44);
    [h0 & M44, h1, h2]
}

/// One carry pass with the wrap-around, for limbs up to 2^60 each.
///
/// Output: `h0 < 2^44`, `h1 < 2^44 + 2^20`, `h2 < 2^42`.
#[inline(always)]
pub(super) fn carry(h: [u64; 3]) -> [u64; 3] {
    let [mut h0, mut h1, mut h2] = h;
    h1 += h0 >> 44;
    h0 &= M44;
    h2 += h1 >> 44;
    h1 &= M44;
    h0 += (h2 >> 42) * 5;
    h2 &= M42;
    h1 += h0 >> 44;
    h0 &= M44;
    [h0, h1, h2]
}

/// Brings a partially reduced element to limbs that fit their nominal widths exactly
/// (`h0, h1 < 2^44`, `h2 <= 2^42`), so that it can be re-split into another radix by bit extraction.
#[inline(always)]
pub(super) fn normalize(h: [u64; 3]) -> [u64; 3] {
    let [h0, mut h1, mut h2] = carry(h);
    h2 += h1 >> 44;
    h1 &= M44;
    [h0, h1, h2]
}

/// Absorbs whole 16-byte blocks (`data.len()` a multiple of 16), each with the 2^128 bit set.
pub(super) fn blocks(h: &mut [u64; 3], r: &[u64; 3], data: &[u8]) {
    debug_assert!(data.len() % 16 == 0);
    let mut acc = *h;
    for block in data.chunks_exact(16) {
        acc = absorb(acc, r, block.try_into().unwrap(), 1 << 40);
    }
    *h = acc;
}

/// Absorbs the final short block: `block` already holds the message bytes, then `0x01`, then zeros, and
/// the 2^128 bit is not added.
pub(super) fn last_block(h: &mut [u64; 3], r: &[u64; 3], block: &[u8; 16]) {
    *h = absorb(*h, r, block, 0);
}

/// `(h + block + hibit·2^88) · r`.
#[inline(always)]
fn absorb(h: [u64; 3], r: &[u64; 3], block: &[u8; 16], hibit: u64) -> [u64; 3] {
    let t0 = u64::from_le_bytes(block[0..8].try_into().unwrap());
    let t1 = u64::from_le_bytes(block[8..16].try_into().unwrap());
    let a = [h[0] + (t0 & M44), h[1] + (((t0 >> 44) | (t1 << 20)) & M44), h[2] + ((t1 >> 24) | hibit)];
    mul(a, *r)
}

/// Fully reduces `h` modulo p = 2^130 - 5 and returns it as (low 128 bits, bits 128..130).
///
/// Branch-free: `g = h + 5 - 2^130` is computed and selected by the sign of its top limb.
#[inline(always)]
fn reduce(h: [u64; 3]) -> (u128, u64) {
    let [h0, h1, h2] = normalize(carry(h));
    // Now h2 <= 2^42. Fold a possible bit at 2^130 once more; afterwards h < 2^130 strictly (the second
    // carry into h2 can only happen when the fold made h2 zero).
    let c = h2 >> 42;
    let h2 = h2 & M42;
    let h0 = h0 + c * 5;
    let h1 = h1 + (h0 >> 44);
    let h0 = h0 & M44;
    let h2 = h2 + (h1 >> 44);
    let h1 = h1 & M44;
    // h < 2^130 < 2p, so h mod p is h or h - p.
    let g0 = h0 + 5;
    let g1 = h1 + (g0 >> 44);
    let g0 = g0 & M44;
    let g2 = (h2 + (g1 >> 44)).wrapping_sub(1 << 42);
    let g1 = g1 & M44;
    // g2's top bit is set iff h + 5 < 2^130, i.e. h < p: then keep h, else take g = h - p.
    let keep_h = 0u64.wrapping_sub(g2 >> 63);
    let take_g = !keep_h;
    let f0 = (h0 & keep_h) | (g0 & take_g);
    let f1 = (h1 & keep_h) | (g1 & take_g);
    let f2 = (h2 & keep_h) | (g2 & take_g);
    let lo = u128::from(f0) | (u128::from(f1) << 44) | (u128::from(f2) << 88);
    (lo, f2 >> 40)
}

/// RFC 8439 tag: `(h mod p + s) mod 2^128`, little-endian.
pub(super) fn finalize(h: [u64; 3], s: [u64; 2]) -> [u8; 16] {
    let (lo, _) = reduce(h);
    let s = u128::from(s[0]) | (u128::from(s[1]) << 64);
    lo.wrapping_add(s).to_le_bytes()
}

/// Legacy tag: `((h mod p + s) mod p) mod 2^128`.
///
/// `t = h + s < p + 2^128 < 2p`, so one branch-free conditional subtraction of p finishes the reduction.
pub(super) fn finalize_mod_p(h: [u64; 3], s: [u64; 2]) -> [u8; 16] {
    let (lo, top) = reduce(h);
    let s = u128::from(s[0]) | (u128::from(s[1]) << 64);
    let (sum, c1) = lo.overflowing_add(s);
    let top = top + u64::from(c1); // t = top·2^128 + sum, top <= 4
    // t - p = t + 5 - 2^130: compute u = t + 5; t >= p iff u >= 2^130 iff bit 2 of u's top is set
    // (u's top is at most 5).
    let (u, c2) = sum.overflowing_add(5);
    let utop = top + u64::from(c2);
    let ge = u128::from((utop >> 2) & 1);
    let mask = 0u128.wrapping_sub(ge);
    ((u & mask) | (sum & !mask)).to_le_bytes()
}
