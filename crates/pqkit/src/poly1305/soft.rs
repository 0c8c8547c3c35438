//! Portable Poly1305: radix 2^64 (two 64-bit limbs plus a few bits), products in `u128`.
//!
//! The accumulator is `h = h0 + h1·2^64 + h2·2^128` with `h2 <= 4` between blocks (so `h < 5·2^128 < 2p`).
//! The clamped key `r = r0 + r1·2^64` has `r0, r1 < 2^60` and `r1 ≡ 0 (mod 4)`, which lets the terms that land
//! at `2^128·2^64 = 2^130·2^62` fold back exactly as `h1·r1·2^128 ≡ h1·(5·r1/4)` with `s1 = r1 + r1/4`. One
//! block is four 64×64→128 products, two small ones, and a short carry chain.
//!
//! Every function here runs in time independent of the values: no branch and no table index depends on the
//! key, the accumulator or the message; the final conditional subtraction of p is a mask select.
//!
//! This file is the reference the SIMD backends are tested against. It also holds the radix-2^44 helpers
//! (`*44`) the SIMD backends use to precompute powers of `r` and to move the accumulator in and out of their
//! own representations.

#[cfg(target_arch = "x86_64")]
pub(super) const M44: u64 = (1 << 44) - 1;
#[cfg(target_arch = "x86_64")]
pub(super) const M42: u64 = (1 << 42) - 1;

/// Loads and clamps `r` (the first 16 key bytes): two little-endian words.
pub(super) fn load_r(key: &[u8; 32]) -> [u64; 2] {
    [
        u64::from_le_bytes(key[0..8].try_into().unwrap()) & 0x0fff_fffc_0fff_ffff,
        u64::from_le_bytes(key[8..16].try_into().unwrap()) & 0x0fff_fffc_0fff_fffc,
    ]
}

/// Loads `s` (the last 16 key bytes) as two little-endian words.
pub(super) fn load_s(key: &[u8; 32]) -> [u64; 2] {
    [u64::from_le_bytes(key[16..24].try_into().unwrap()), u64::from_le_bytes(key[24..32].try_into().unwrap())]
}

/// Absorbs whole 16-byte blocks (`data.len()` a multiple of 16), each with the 2^128 bit set.
pub(super) fn blocks(h: &mut [u64; 3], r: &[u64; 2], data: &[u8]) {
    debug_assert!(data.len().is_multiple_of(16));
    let mut acc = *h;
    for block in data.chunks_exact(16) {
        acc = absorb(acc, *r, block.try_into().unwrap(), 1);
    }
    *h = acc;
}

/// Absorbs the final short block: `block` already holds the message bytes, then `0x01`, then zeros, and the
/// 2^128 bit is not added.
pub(super) fn last_block(h: &mut [u64; 3], r: &[u64; 2], block: &[u8; 16]) {
    *h = absorb(*h, *r, block, 0);
}

/// `(h + block + hibit·2^128) · r mod p`, with the output's `h2 <= 4`.
#[inline(always)]
fn absorb(h: [u64; 3], r: [u64; 2], block: &[u8; 16], hibit: u64) -> [u64; 3] {
    let m0 = u64::from_le_bytes(block[0..8].try_into().unwrap());
    let m1 = u64::from_le_bytes(block[8..16].try_into().unwrap());
    absorb_words(h, r, m0, m1, hibit)
}

/// [`absorb`] on a block given as its two little-endian words `m0`, `m1`.
#[inline(always)]
pub(super) fn absorb_words(h: [u64; 3], r: [u64; 2], m0: u64, m1: u64, hibit: u64) -> [u64; 3] {
    let (h0, c0) = h[0].overflowing_add(m0);
    let (h1, c1a) = h[1].overflowing_add(m1);
    let (h1, c1b) = h1.overflowing_add(u64::from(c0));
    let h2 = h[2] + u64::from(c1a) + u64::from(c1b) + hibit; // <= 4 + 1 + 1
    let [r0, r1] = r;
    let s1 = r1 + (r1 >> 2); // 5·r1/4, exact since r1 ≡ 0 (mod 4); below 2^60.33

    let wide = |a: u64, b: u64| u128::from(a) * u128::from(b);
    // Columns of weight 2^0, 2^64, 2^128 (the 2^128·2^64 and 2^64·2^64 overflow terms folded via s1).
    let d0 = wide(h0, r0) + wide(h1, s1); // < 2^125.2
    let d1 = wide(h0, r1) + wide(h1, r0) + u128::from(h2 * s1); // h2·s1 < 2^63.3
    let d2 = h2 * r0; // < 2^63
    let d1 = d1 + (d0 >> 64);
    let t = d2 + (d1 >> 64) as u64; // bits from 2^128 up, < 2^63.5
    // Keep bits 128, 129; fold t >> 2 (weight 2^130) back as 5·(t >> 2) = (t & !3) + (t >> 2).
    let fold = (t & !3) + (t >> 2);
    // One 128-bit addition (add/adc) instead of two 64-bit ones with an explicit carry between them.
    let low = u128::from(d0 as u64) | (d1 << 64);
    let (sum, k) = low.overflowing_add(u128::from(fold));
    [sum as u64, (sum >> 64) as u64, (t & 3) + u64::from(k)]
}

/// Fully reduces `h` (with `h2 <= 4`, so `h < 2p`) and returns it as (low 128 bits, bits 128..130).
///
/// Branch-free: `g = h + 5` reaches 2^130 exactly when `h >= p`, and then `h - p = g - 2^130`.
#[inline(always)]
fn reduce(h: [u64; 3]) -> (u128, u64) {
    let lo = u128::from(h[0]) | (u128::from(h[1]) << 64);
    let (g, c) = lo.overflowing_add(5);
    let g2 = h[2] + u64::from(c);
    let ge = core::hint::black_box(g2 >> 2); // 1 iff h >= p (g2 <= 5)
    let mask = 0u128.wrapping_sub(u128::from(ge));
    let low = (g & mask) | (lo & !mask);
    let top_mask = 0u64.wrapping_sub(ge);
    let top = ((g2 & 3) & top_mask) | (h[2] & !top_mask);
    (low, top)
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
    // t - p = t + 5 - 2^130: with u = t + 5, t >= p iff u >= 2^130 iff bit 2 of u's top (at most 5) is set.
    let (u, c2) = sum.overflowing_add(5);
    let utop = top + u64::from(c2);
    let ge = core::hint::black_box((utop >> 2) & 1);
    let mask = 0u128.wrapping_sub(u128::from(ge));
    ((u & mask) | (sum & !mask)).to_le_bytes()
}

// ---- radix 2^44 helpers for the x86 SIMD backends ---------------------------------------------------------
//
// An element is `h0 + h1·2^44 + h2·2^88`, limbs nominally 44, 44, 42 bits, allowed to run a few bits over.

/// An accumulator in the radix-2^64 form above (or `[r0, r1, 0]`) in radix 2^44. The top limb is below 2^43.
#[cfg(target_arch = "x86_64")]
pub(super) fn to44(h: [u64; 3]) -> [u64; 3] {
    [h[0] & M44, ((h[0] >> 44) | (h[1] << 20)) & M44, (h[1] >> 24) | (h[2] << 40)]
}

/// A radix-2^44 element (limbs below 2^60) back to the radix-2^64 form with `h2 <= 4`.
#[cfg(target_arch = "x86_64")]
pub(super) fn from44(h: [u64; 3]) -> [u64; 3] {
    let [h0, h1, h2] = normalize44(h); // h0, h1 < 2^44, h2 <= 2^42
    [h0 | (h1 << 44), (h1 >> 20) | (h2 << 24), h2 >> 40]
}

/// `a · b mod p` in radix 2^44, partially reduced.
///
/// Input bounds: limbs of `a` below 2^47, limbs of `b` below 2^45. Output: `h0 < 2^44`, `h1 < 2^44 + 2^15`,
/// `h2 < 2^42`, so outputs can be fed back in as either operand.
#[cfg(target_arch = "x86_64")]
pub(super) fn mul44(a: [u64; 3], b: [u64; 3]) -> [u64; 3] {
    let [a0, a1, a2] = a.map(u128::from);
    let [b0, b1, b2] = b.map(u128::from);
    // Terms of weight 2^132 and 2^176 wrap to weight 2^0 and 2^44 times 20 (2^132 = 4·2^130 ≡ 4·5).
    let s1 = b1 * 20;
    let s2 = b2 * 20;
    let d0 = a0 * b0 + a1 * s2 + a2 * s1;
    let d1 = a0 * b1 + a1 * b0 + a2 * s2 + (d0 >> 44);
    let d2 = a0 * b2 + a1 * b1 + a2 * b0 + (d1 >> 44);
    let h0 = d0 as u64 & M44;
    let h1 = d1 as u64 & M44;
    let h2 = d2 as u64 & M42;
    // Bits at and above 2^130 fold back times 5.
    let h0 = h0 + (d2 >> 42) as u64 * 5;
    [h0 & M44, h1 + (h0 >> 44), h2]
}

/// One carry pass with the wrap-around, for limbs up to 2^60 each.
/// Output: `h0 < 2^44`, `h1 < 2^44 + 2^20`, `h2 < 2^42`.
#[cfg(target_arch = "x86_64")]
pub(super) fn carry44(h: [u64; 3]) -> [u64; 3] {
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

/// `h · k mod p` for `h` in the radix-2^64 form (`h2 <= 15`) and a general `k` (a power of `r`) in radix 2^44
/// as [`normalize44`] leaves it; the result has `h2 <= 4`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn mul_by44(h: [u64; 3], k: [u64; 3]) -> [u64; 3] {
    // to44 of h: limbs below 2^44 (h2 <= 15 puts at most 4 bits above bit 40 of the top limb), within mul44's
    // bound of 2^47 for `a`; k's limbs are below 2^45.
    from44(mul44(to44(h), k))
}

/// `a + b` for two radix-2^64 values with `h2 <= 4`, partially reduced back to `h2 <= 4`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn add_reduce(a: [u64; 3], b: [u64; 3]) -> [u64; 3] {
    let (h0, c0) = a[0].overflowing_add(b[0]);
    let (h1, c1a) = a[1].overflowing_add(b[1]);
    let (h1, c1b) = h1.overflowing_add(u64::from(c0));
    let h2 = a[2] + b[2] + u64::from(c1a) + u64::from(c1b); // <= 10
    // Bits from 2^130 up fold back times 5: h2 = 4q + (h2 & 3), q <= 2.
    let q = h2 >> 2;
    let (h0, k0) = h0.overflowing_add(q * 5);
    let (h1, k1) = h1.overflowing_add(u64::from(k0));
    [h0, h1, (h2 & 3) + u64::from(k1)]
}

/// `r^16` in radix 2^44 (limbs as [`normalize44`] leaves them), for two-chain hashing of 32-block runs.
#[cfg(target_arch = "x86_64")]
pub(super) fn r16_44(r: &[u64; 2]) -> [u64; 3] {
    let mut k = to44([r[0], r[1], 0]);
    for _ in 0..4 {
        k = mul44(k, k);
    }
    normalize44(k)
}

/// Limbs that fit their nominal widths (`h0, h1 < 2^44`, `h2 <= 2^42`), for re-splitting by bit extraction.
#[cfg(target_arch = "x86_64")]
pub(super) fn normalize44(h: [u64; 3]) -> [u64; 3] {
    let [h0, mut h1, mut h2] = carry44(h);
    h2 += h1 >> 44;
    h1 &= M44;
    [h0, h1, h2]
}
