//! ChaCha with AArch64 NEON: 4 blocks per pass, word-sliced.
//!
//! Register `x[i]` holds state word `i` of 4 consecutive blocks, one block per 32-bit lane, so the column and
//! diagonal rounds need no shuffles. Rotation by 16 is `rev32` on halfwords, by 8 a byte table lookup
//! (`tbl`), by 12 and 7 shift-left plus shift-right-insert (`shl` + `sri`). After the rounds a 4x4 transpose
//! per group of four words (`trn1`/`trn2` on 32- then 64-bit lanes) gives each block as four vectors, XORed
//! with the data through unaligned loads and stores. A final partial pass goes through a stack buffer.
#![allow(unsafe_code)]

use super::{BLOCK_LEN, Backend};
use crate::dispatch::Checked;
use core::arch::aarch64::*;
use zeroize::Zeroize;

/// See [`super::apply_blocks`].
pub(super) fn apply_blocks(backend: Checked<Backend>, rounds: usize, state: &[u32; 16], data: &mut [u8], xor: bool) {
    assert!(backend.covers(Backend::Neon));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Neon, so the CPU has NEON.
    unsafe { apply_neon(rounds, state, data, xor) }
}

#[target_feature(enable = "neon")]
fn apply_neon(rounds: usize, state: &[u32; 16], data: &mut [u8], xor: bool) {
    let mut ctr = state[12] as u64 | (state[13] as u64) << 32;
    let mut chunks = data.chunks_exact_mut(4 * BLOCK_LEN);
    for chunk in &mut chunks {
        // SAFETY: `chunk` is exactly 256 bytes.
        unsafe { blocks4(rounds, state, ctr, chunk.as_mut_ptr(), xor) };
        ctr = ctr.wrapping_add(4);
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        let mut tmp = [0u8; 4 * BLOCK_LEN];
        // SAFETY: `tmp` is 256 bytes.
        unsafe { blocks4(rounds, state, ctr, tmp.as_mut_ptr(), false) };
        for (d, k) in rest.iter_mut().zip(&tmp) {
            *d = if xor { *d ^ k } else { *k };
        }
        tmp.zeroize();
    }
}

#[inline(always)]
fn rol16(x: uint32x4_t) -> uint32x4_t {
    // SAFETY: NEON is baseline on aarch64; the intrinsics only operate on registers.
    unsafe { vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(x))) }
}

#[inline(always)]
fn rol8(x: uint32x4_t, tbl: uint8x16_t) -> uint32x4_t {
    // SAFETY: as above.
    unsafe { vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(x), tbl)) }
}

#[inline(always)]
fn rol12(x: uint32x4_t) -> uint32x4_t {
    // SAFETY: as above.
    unsafe { vsriq_n_u32::<20>(vshlq_n_u32::<12>(x), x) }
}

#[inline(always)]
fn rol7(x: uint32x4_t) -> uint32x4_t {
    // SAFETY: as above.
    unsafe { vsriq_n_u32::<25>(vshlq_n_u32::<7>(x), x) }
}

/// One quarter round on four vectors (4 independent quarter rounds).
#[inline(always)]
fn qr(a: &mut uint32x4_t, b: &mut uint32x4_t, c: &mut uint32x4_t, d: &mut uint32x4_t, tbl: uint8x16_t) {
    // SAFETY: as above.
    unsafe {
        *a = vaddq_u32(*a, *b);
        *d = rol16(veorq_u32(*d, *a));
        *c = vaddq_u32(*c, *d);
        *b = rol12(veorq_u32(*b, *c));
        *a = vaddq_u32(*a, *b);
        *d = rol8(veorq_u32(*d, *a), tbl);
        *c = vaddq_u32(*c, *d);
        *b = rol7(veorq_u32(*b, *c));
    }
}

/// 4 blocks from counter `ctr`, XORed into (or written over) the 256 bytes at `p`.
///
/// # Safety
/// `p` must be valid for reads and writes of 256 bytes; NEON must be available.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn blocks4(rounds: usize, state: &[u32; 16], ctr: u64, p: *mut u8, xor: bool) {
    // Byte indices rotating each 32-bit lane left by 8.
    const ROT8: [u8; 16] = [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14];
    let c: [u64; 4] = core::array::from_fn(|i| ctr.wrapping_add(i as u64));
    let lo: [u32; 4] = core::array::from_fn(|i| c[i] as u32);
    let hi: [u32; 4] = core::array::from_fn(|i| (c[i] >> 32) as u32);
    // SAFETY: the loads read the 16-byte arrays above; everything else works on registers.
    let (tbl, x12_0, x13_0) = unsafe { (vld1q_u8(ROT8.as_ptr()), vld1q_u32(lo.as_ptr()), vld1q_u32(hi.as_ptr())) };
    let init: [uint32x4_t; 16] = core::array::from_fn(|i| match i {
        12 => x12_0,
        13 => x13_0,
        _ => vdupq_n_u32(state[i]),
    });
    let mut x = init;
    for _ in 0..rounds / 2 {
        let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] = &mut x;
        qr(x0, x4, x8, x12, tbl);
        qr(x1, x5, x9, x13, tbl);
        qr(x2, x6, x10, x14, tbl);
        qr(x3, x7, x11, x15, tbl);
        qr(x0, x5, x10, x15, tbl);
        qr(x1, x6, x11, x12, tbl);
        qr(x2, x7, x8, x13, tbl);
        qr(x3, x4, x9, x14, tbl);
    }
    for (v, i) in x.iter_mut().zip(init) {
        *v = vaddq_u32(*v, i);
    }
    // Per group of four words g: transpose so that out[j] holds words 4g..4g+3 of block j.
    for g in 0..4 {
        let (a, b, cc, d) = (x[4 * g], x[4 * g + 1], x[4 * g + 2], x[4 * g + 3]);
        let t0 = vreinterpretq_u64_u32(vtrn1q_u32(a, b)); // a0 b0 a2 b2
        let t1 = vreinterpretq_u64_u32(vtrn2q_u32(a, b)); // a1 b1 a3 b3
        let t2 = vreinterpretq_u64_u32(vtrn1q_u32(cc, d)); // c0 d0 c2 d2
        let t3 = vreinterpretq_u64_u32(vtrn2q_u32(cc, d)); // c1 d1 c3 d3
        let out = [
            vreinterpretq_u8_u64(vtrn1q_u64(t0, t2)), // block 0
            vreinterpretq_u8_u64(vtrn1q_u64(t1, t3)), // block 1
            vreinterpretq_u8_u64(vtrn2q_u64(t0, t2)), // block 2
            vreinterpretq_u8_u64(vtrn2q_u64(t1, t3)), // block 3
        ];
        for (j, ks) in out.into_iter().enumerate() {
            // SAFETY: offset 64 j + 16 g + 16 <= 256, inside the caller-guaranteed bytes; unaligned access.
            unsafe {
                let q = p.add(j * BLOCK_LEN + 16 * g);
                let v = if xor { veorq_u8(ks, vld1q_u8(q)) } else { ks };
                vst1q_u8(q, v);
            }
        }
    }
}
