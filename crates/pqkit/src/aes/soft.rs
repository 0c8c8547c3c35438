//! Portable, constant-time, bitsliced AES.
//!
//! Four blocks (64 bytes) are held as eight 64-bit bit planes: bit `j` of plane `b` is bit `b` of byte `j`,
//! where byte `j` is byte `j % 16` of block `j / 16`. Within each 16-bit lane (one block) byte `r + 4c` is row
//! `r` of column `c`, so every 4-bit nibble of a plane is one column:
//! - SubBytes is computed on the planes: inversion in GF(2^8) as x^254 (4 multiplications, 7 squarings, all
//!   ANDs and XORs of whole planes) followed by the affine map. No table, no secret index, no branch.
//! - ShiftRows is a fixed rotation of each row's bits within a lane; MixColumns rotates bits within nibbles.

#![allow(clippy::needless_range_loop)] // indexed plane loops read like the specification

use super::RoundKeys;
use zeroize::Zeroize;

type Planes = [u64; 8];

/// Packs up to 64 bytes into bit planes.
#[inline]
fn pack(bytes: &[u8; 64]) -> Planes {
    let mut p = [0u64; 8];
    // Gather 8 bytes at a time, then transpose each 8x8 bit matrix with three delta swaps.
    for (w, chunk) in bytes.chunks_exact(8).enumerate() {
        let mut x = u64::from_le_bytes(chunk.try_into().unwrap());
        x = transpose8(x);
        // Now byte b of x holds bit b of the 8 bytes (bit i of that byte = byte i).
        for (b, plane) in p.iter_mut().enumerate() {
            *plane |= ((x >> (8 * b)) & 0xff) << (8 * w);
        }
    }
    p
}

#[inline]
fn unpack(p: &Planes) -> [u8; 64] {
    let mut out = [0u8; 64];
    for w in 0..8 {
        let mut x = 0u64;
        for (b, plane) in p.iter().enumerate() {
            x |= ((plane >> (8 * w)) & 0xff) << (8 * b);
        }
        x = transpose8(x);
        out[8 * w..8 * w + 8].copy_from_slice(&x.to_le_bytes());
    }
    out
}

/// Transposes an 8x8 bit matrix stored as 8 bytes (byte i = row i, bit j = column j).
#[inline]
fn transpose8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00aa_00aa_00aa_00aa;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_cccc_0000_cccc;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_f0f0_f0f0;
    x ^= t ^ (t << 28);
    x
}

/// Bit planes of a 16-byte round key, replicated into all four lanes.
pub(crate) fn pack_key(k: &[u8; 16]) -> Planes {
    let mut b = [0u8; 64];
    for i in 0..4 {
        b[16 * i..16 * i + 16].copy_from_slice(k);
    }
    let p = pack(&b);
    b.zeroize();
    p
}

#[inline]
fn gf_reduce(p: &mut [u64; 15]) -> Planes {
    // x^8 = x^4 + x^3 + x + 1
    for k in (8..15).rev() {
        let t = p[k];
        p[k - 4] ^= t;
        p[k - 5] ^= t;
        p[k - 7] ^= t;
        p[k - 8] ^= t;
    }
    [p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]]
}

#[inline]
fn gf_mul(a: &Planes, b: &Planes) -> Planes {
    let mut p = [0u64; 15];
    for i in 0..8 {
        for j in 0..8 {
            p[i + j] ^= a[i] & b[j];
        }
    }
    gf_reduce(&mut p)
}

#[inline]
fn gf_sq(a: &Planes) -> Planes {
    let mut p = [0u64; 15];
    for i in 0..8 {
        p[2 * i] = a[i];
    }
    gf_reduce(&mut p)
}

/// x^254 = x^-1 in GF(2^8) (0 maps to 0).
#[inline]
fn gf_inv(x: &Planes) -> Planes {
    let x2 = gf_sq(x);
    let x3 = gf_mul(&x2, x);
    let x6 = gf_sq(&x3);
    let x12 = gf_sq(&x6);
    let x15 = gf_mul(&x12, &x3);
    let x30 = gf_sq(&x15);
    let x60 = gf_sq(&x30);
    let x120 = gf_sq(&x60);
    let x240 = gf_sq(&x120);
    let x252 = gf_mul(&x240, &x12);
    gf_mul(&x252, &x2)
}

#[inline]
fn sub_bytes(s: &mut Planes) {
    let b = gf_inv(s);
    for i in 0..8 {
        s[i] = b[i] ^ b[(i + 4) % 8] ^ b[(i + 5) % 8] ^ b[(i + 6) % 8] ^ b[(i + 7) % 8];
    }
    // XOR 0x63: bits 0, 1, 5, 6.
    s[0] = !s[0];
    s[1] = !s[1];
    s[5] = !s[5];
    s[6] = !s[6];
}

#[inline]
fn inv_sub_bytes(s: &mut Planes) {
    let mut b = [0u64; 8];
    for i in 0..8 {
        b[i] = s[(i + 2) % 8] ^ s[(i + 5) % 8] ^ s[(i + 7) % 8];
    }
    // XOR 0x05: bits 0 and 2.
    b[0] = !b[0];
    b[2] = !b[2];
    *s = gf_inv(&b);
}

const LANE: u64 = 0x0001_0001_0001_0001;
const ROW0: u64 = 0x1111_1111_1111_1111;

/// Rotates every 16-bit lane right by `s` bits (0 < s < 16).
#[inline]
fn rotr_lanes(x: u64, s: u32) -> u64 {
    let low = LANE * ((1u64 << (16 - s)) - 1);
    ((x >> s) & low) | ((x << (16 - s)) & !low)
}

#[inline]
fn shift_rows_plane(x: u64) -> u64 {
    (x & ROW0) | rotr_lanes(x & (ROW0 << 1), 4) | rotr_lanes(x & (ROW0 << 2), 8) | rotr_lanes(x & (ROW0 << 3), 12)
}

#[inline]
fn inv_shift_rows_plane(x: u64) -> u64 {
    (x & ROW0) | rotr_lanes(x & (ROW0 << 1), 12) | rotr_lanes(x & (ROW0 << 2), 8) | rotr_lanes(x & (ROW0 << 3), 4)
}

/// Row `r` of each column takes row `r + k` (k = 1, 2, 3).
#[inline]
fn rot1(x: u64) -> u64 {
    ((x >> 1) & 0x7777_7777_7777_7777) | ((x << 3) & 0x8888_8888_8888_8888)
}
#[inline]
fn rot2(x: u64) -> u64 {
    ((x >> 2) & 0x3333_3333_3333_3333) | ((x << 2) & 0xcccc_cccc_cccc_cccc)
}
#[inline]
fn rot3(x: u64) -> u64 {
    ((x >> 3) & 0x1111_1111_1111_1111) | ((x << 1) & 0xeeee_eeee_eeee_eeee)
}

#[inline]
fn xtime(a: &Planes) -> Planes {
    [a[7], a[0] ^ a[7], a[1], a[2] ^ a[7], a[3] ^ a[7], a[4], a[5], a[6]]
}

#[inline]
fn mix_columns(s: &mut Planes) {
    let mut t = [0u64; 8];
    for i in 0..8 {
        t[i] = s[i] ^ rot1(s[i]);
    }
    let t2 = xtime(&t);
    for i in 0..8 {
        s[i] = t2[i] ^ rot1(s[i]) ^ rot2(s[i]) ^ rot3(s[i]);
    }
}

#[inline]
fn inv_mix_columns(s: &mut Planes) {
    // InvMixColumns = MixColumns o (a_r ^= 4 (a_r ^ a_{r+2})).
    let mut t = [0u64; 8];
    for i in 0..8 {
        t[i] = s[i] ^ rot2(s[i]);
    }
    let t4 = xtime(&xtime(&t));
    for i in 0..8 {
        s[i] ^= t4[i];
    }
    mix_columns(s);
}

#[inline]
fn add_key(s: &mut Planes, k: &Planes) {
    for i in 0..8 {
        s[i] ^= k[i];
    }
}

fn encrypt_planes(keys: &RoundKeys, s: &mut Planes) {
    let nr = keys.nr;
    add_key(s, &keys.bs[0]);
    for r in 1..=nr {
        sub_bytes(s);
        for x in s.iter_mut() {
            *x = shift_rows_plane(*x);
        }
        if r != nr {
            mix_columns(s);
        }
        add_key(s, &keys.bs[r]);
    }
}

fn decrypt_planes(keys: &RoundKeys, s: &mut Planes) {
    let nr = keys.nr;
    add_key(s, &keys.bs[nr]);
    for r in (0..nr).rev() {
        for x in s.iter_mut() {
            *x = inv_shift_rows_plane(*x);
        }
        inv_sub_bytes(s);
        add_key(s, &keys.bs[r]);
        if r != 0 {
            inv_mix_columns(s);
        }
    }
}

/// Encrypts four blocks at once.
pub(crate) fn encrypt4(keys: &RoundKeys, blocks: &mut [u8; 64]) {
    let mut s = pack(blocks);
    encrypt_planes(keys, &mut s);
    *blocks = unpack(&s);
    s.zeroize();
}

pub(crate) fn encrypt_block(keys: &RoundKeys, block: &mut [u8; 16]) {
    let mut b = [0u8; 64];
    b[..16].copy_from_slice(block);
    encrypt4(keys, &mut b);
    block.copy_from_slice(&b[..16]);
    b.zeroize();
}

pub(crate) fn decrypt_block(keys: &RoundKeys, block: &mut [u8; 16]) {
    let mut b = [0u8; 64];
    b[..16].copy_from_slice(block);
    let mut s = pack(&b);
    decrypt_planes(keys, &mut s);
    b = unpack(&s);
    block.copy_from_slice(&b[..16]);
    b.zeroize();
    s.zeroize();
}

/// The S-box applied to each byte of a word, for the key schedule (same constant-time circuit).
pub(crate) fn sub_word(w: [u8; 4]) -> [u8; 4] {
    let mut b = [0u8; 64];
    b[..4].copy_from_slice(&w);
    let mut s = pack(&b);
    sub_bytes(&mut s);
    b = unpack(&s);
    let out = [b[0], b[1], b[2], b[3]];
    b.zeroize();
    s.zeroize();
    out
}

/// AES-CTR with GCM's inc32 counter (the low 32 bits, big-endian, wrap modulo 2^32).
pub(crate) fn ctr(keys: &RoundKeys, ctr: &[u8; 16], buf: &mut [u8]) {
    let mut c = u32::from_be_bytes([ctr[12], ctr[13], ctr[14], ctr[15]]);
    let mut ks = [0u8; 64];
    for chunk in buf.chunks_mut(64) {
        for i in 0..4 {
            ks[16 * i..16 * i + 12].copy_from_slice(&ctr[..12]);
            ks[16 * i + 12..16 * i + 16].copy_from_slice(&c.wrapping_add(i as u32).to_be_bytes());
        }
        c = c.wrapping_add(4);
        encrypt4(keys, &mut ks);
        for (d, k) in chunk.iter_mut().zip(ks.iter()) {
            *d ^= k;
        }
    }
    ks.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_roundtrip() {
        let mut b = [0u8; 64];
        for (i, x) in b.iter_mut().enumerate() {
            *x = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
        let p = pack(&b);
        for j in 0..64 {
            for bit in 0..8 {
                assert_eq!((p[bit] >> j) & 1, ((b[j] >> bit) & 1) as u64);
            }
        }
        assert_eq!(unpack(&p), b);
    }

    #[test]
    fn sbox_known_values() {
        // FIPS 197 Figure 7: S(0x00)=0x63, S(0x53)=0xed, S(0xff)=0x16, S(0x01)=0x7c.
        assert_eq!(sub_word([0x00, 0x53, 0xff, 0x01]), [0x63, 0xed, 0x16, 0x7c]);
        let mut b = [0u8; 64];
        b[..4].copy_from_slice(&[0x63, 0xed, 0x16, 0x7c]);
        let mut s = pack(&b);
        inv_sub_bytes(&mut s);
        assert_eq!(&unpack(&s)[..4], &[0x00, 0x53, 0xff, 0x01]);
    }
}
