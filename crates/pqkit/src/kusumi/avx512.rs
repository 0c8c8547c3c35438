//! Kusumi512 on AVX-512: 16 blocks at a time, one zmm register per state word (lane i = block i).
//!
//! The body is [`super::simd`], shared with AVX2; this file gives it its 512-bit operations. Rotations use
//! `vprold`. After the 10 passes the 25 word-sliced registers are transposed to block order (two 16×16 dword
//! transposes: words 0..15, and words 16..24 padded) and XORed into the data, 1600 bytes at a time: words 0..15
//! of a block with one 64-byte load/store, words 16..23 with a 32-byte one and word 24 as a u32. (Masked 9-dword
//! loads/stores were ~20% slower overall on the development machine.) A tail of 9..15 blocks is one more 16-lane
//! batch written straight into the tail's whole blocks (its partial last block through the kept-block buffer),
//! a shorter one is one 8-lane ymm batch with the AVX-512VL encodings ([`Vl`]: `vprold`, 32 registers).
#![allow(unsafe_code)]

use super::simd::{self, Lanes};
use super::{BLOCK, Backend};
use crate::dispatch::Checked;
use crate::x86::transpose::{transpose8x8_epi32, transpose16x16_epi32};
use core::arch::x86_64::*;

/// 16 lanes of 32 bits, for [`lanes`]. Every method needs AVX-512F (the [`Lanes`] contract).
impl Lanes<16> for __m512i {
    /// Words 16..24 of each block: the nine leftover registers padded with zeros and transposed, so that output
    /// `b` holds block `b`'s words 16..24 in lanes 0..8.
    type Rest = [__m512i; 16];

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: AVX-512F is present (the trait's contract).
        unsafe { _mm512_set1_epi32(x as i32) }
    }

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: AVX-512F is present and `p` is valid for 64 bytes (the trait's contract); loadu needs no
        // alignment.
        unsafe { _mm512_loadu_si512(p.cast()) }
    }

    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: AVX-512F is present and `p` is valid for 64 bytes (the trait's contract); storeu needs no
        // alignment.
        unsafe { _mm512_storeu_si512(p.cast(), self) }
    }

    #[inline(always)]
    unsafe fn add(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (the trait's contract).
        unsafe { _mm512_add_epi32(self, other) }
    }

    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: AVX-512F is present (the trait's contract).
        unsafe { _mm512_xor_si512(self, other) }
    }

    /// One `vprold`.
    #[inline(always)]
    unsafe fn rotl<const R: i32>(self) -> Self {
        // SAFETY: AVX-512F is present (the trait's contract).
        unsafe { _mm512_rol_epi32::<R>(self) }
    }

    #[inline(always)]
    unsafe fn transpose(rows: &[Self; 16]) -> [Self; 16] {
        // SAFETY: AVX-512F is present (the trait's contract).
        unsafe { transpose16x16_epi32(*rows) }
    }

    #[inline(always)]
    unsafe fn rest(words: &[Self]) -> [__m512i; 16] {
        // SAFETY: AVX-512F is present (the trait's contract).
        unsafe {
            let mut rows = [_mm512_setzero_si512(); 16];
            rows[..9].copy_from_slice(words);
            transpose16x16_epi32(rows)
        }
    }

    /// Words 16..23 with a 32-byte load/store, word 24 as a u32. (Masked 9-dword loads/stores were ~20% slower
    /// overall on the development machine.)
    #[inline(always)]
    unsafe fn xor_rest(rest: &[__m512i; 16], blk: usize, p: *mut u8) {
        // SAFETY: AVX-512F (which implies AVX) is present and `p` is valid for the 36 bytes of words 16..24 (the
        // trait's contract): the 32-byte unaligned load/store covers +0..+32, the u32 +32..+36.
        unsafe {
            let q = p.cast::<__m256i>();
            let y = _mm256_loadu_si256(q);
            _mm256_storeu_si256(q, _mm256_xor_si256(y, _mm512_castsi512_si256(rest[blk])));
            let w24 = _mm_cvtsi128_si32(_mm512_extracti32x4_epi32::<2>(rest[blk])) as u32;
            let q3 = p.add(32).cast::<u32>();
            q3.write_unaligned(q3.read_unaligned() ^ w24.to_le());
        }
    }
}

/// Eight lanes in a ymm register with the AVX-512VL encodings: `vprold` on ymm (12 instructions per quarter round
/// instead of AVX2's 16) and 32 ymm registers (the 25 state words need no spills). The tail path for eight
/// blocks or fewer. Every method needs AVX-512F and AVX-512VL (the [`Lanes`] contract).
#[derive(Clone, Copy)]
pub(super) struct Vl(__m256i);

impl Lanes<8> for Vl {
    /// Word 24 of each block.
    type Rest = [u32; 8];

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: AVX-512VL (hence AVX) is present (the trait's contract).
        Vl(unsafe { _mm256_set1_epi32(x as i32) })
    }

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: AVX is present and `p` is valid for 32 bytes (the trait's contract); loadu needs no alignment.
        Vl(unsafe { _mm256_loadu_si256(p.cast()) })
    }

    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: AVX is present and `p` is valid for 32 bytes (the trait's contract); storeu needs no alignment.
        unsafe { _mm256_storeu_si256(p.cast(), self.0) }
    }

    #[inline(always)]
    unsafe fn add(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (the trait's contract: AVX-512F implies it).
        Vl(unsafe { _mm256_add_epi32(self.0, other.0) })
    }

    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (as above).
        Vl(unsafe { _mm256_xor_si256(self.0, other.0) })
    }

    /// One `vprold` on ymm.
    #[inline(always)]
    unsafe fn rotl<const R: i32>(self) -> Self {
        // SAFETY: AVX-512F and AVX-512VL are present (the trait's contract).
        Vl(unsafe { _mm256_rol_epi32::<R>(self.0) })
    }

    #[inline(always)]
    unsafe fn transpose(rows: &[Self; 8]) -> [Self; 8] {
        // SAFETY: AVX2 is present (as above).
        unsafe { transpose8x8_epi32(rows.map(|v| v.0)).map(Vl) }
    }

    #[inline(always)]
    unsafe fn rest(words: &[Self]) -> [u32; 8] {
        let mut last = [0u32; 8];
        // SAFETY: AVX is present (as above); `last` is 8 u32 = 32 writable bytes.
        unsafe { _mm256_storeu_si256(last.as_mut_ptr().cast(), words[0].0) };
        last
    }

    #[inline(always)]
    unsafe fn xor_rest(rest: &[u32; 8], blk: usize, p: *mut u8) {
        let q = p.cast::<u32>();
        // SAFETY: `p` is valid for the 4 bytes of word 24 (the trait's contract); unaligned access.
        unsafe { q.write_unaligned(q.read_unaligned() ^ rest[blk].to_le()) };
    }
}

/// A tail of eight blocks or fewer: one 8-lane batch with the AVX-512VL encodings ([`Vl`]). Returns true if
/// `tail` ends inside a block, whose keystream is then in `last`.
#[target_feature(enable = "avx512f,avx512vl,avx2")]
fn xor_tail8(key: &[u32; 16], nonce: &[u32; 3], counter: u64, tail: &mut [u8], last: &mut [u8; BLOCK]) -> bool {
    // SAFETY: this function is compiled with AVX-512F, AVX-512VL and AVX2 and may only run on a CPU that has them
    // (a `#[target_feature]` function), which is all `Vl`'s `Lanes` methods need.
    unsafe { simd::xor_padded::<Vl, 8>(key, nonce, counter, tail, last) }
}

/// The AVX-512 loop: whole 16-block chunks, then a tail of 9..15 blocks as one padded batch
/// ([`simd::xor_padded`]) or a shorter one as an 8-lane AVX-512VL batch ([`xor_tail8`]). Returns true if `data` ends inside a block, whose keystream is then in `last`.
#[target_feature(enable = "avx512f")]
fn xor_blocks_impl(key: &[u32; 16], nonce: &[u32; 3], counter: u64, data: &mut [u8], last: &mut [u8; BLOCK]) -> bool {
    // SAFETY: this function is compiled with AVX-512F and may only run on a CPU that has it (a `#[target_feature]`
    // function), which is all `__m512i`'s `Lanes` methods need.
    let (ctr, tail) = unsafe { simd::xor_chunks::<__m512i, 16>(key, nonce, counter, data) };
    if tail.is_empty() {
        false
    } else if tail.len() <= 8 * BLOCK {
        // Eight blocks or fewer: an 8-lane ymm batch wastes less work than a 16-wide one.
        // SAFETY: Backend::Avx512 requires AVX-512F, AVX-512VL and AVX2 (see `xor_blocks`).
        unsafe { xor_tail8(key, nonce, ctr, tail, last) }
    } else {
        // SAFETY: as above.
        unsafe { simd::xor_padded::<__m512i, 16>(key, nonce, ctr, tail, last) }
    }
}

/// The AEAD's stitched pass on AVX-512 (16-block chunks); see [`simd::xor_stitched`].
#[target_feature(enable = "avx512f")]
fn xor_stitched_impl<J: super::Stitch>(
    key: &[u32; 16],
    nonce: &[u32; 3],
    counter: u64,
    data: &mut [u8],
    lead: usize,
    chunks: usize,
    job: &mut J,
) {
    // SAFETY: this function is compiled with AVX-512F and may only run on a CPU that has it (a `#[target_feature]`
    // function), which is all `__m512i`'s `Lanes` methods need.
    unsafe { simd::xor_stitched::<__m512i, 16, J>(key, nonce, counter, data, lead, chunks, job) }
}

/// The AEAD's first batch on AVX-512 ([`simd::xor_head`]): block 0 and up to 7 message blocks as one 8-lane
/// AVX-512VL batch, up to 15 as one 16-lane batch.
#[target_feature(enable = "avx512f,avx512vl,avx2")]
fn xor_head_impl(
    key: &[u32; 16],
    nonce: &[u32; 3],
    head: &mut [u8],
    block0: &mut [u8; BLOCK],
    last: &mut [u8; BLOCK],
) -> bool {
    // SAFETY: this function is compiled with AVX-512F, AVX-512VL and AVX2 and may only run on a CPU that has them
    // (a `#[target_feature]` function), which is all the `Lanes` methods of `Vl` and `__m512i` need.
    unsafe {
        if head.len() <= 7 * BLOCK {
            simd::xor_head::<Vl, 8>(key, nonce, head, block0, last)
        } else {
            simd::xor_head::<__m512i, 16>(key, nonce, head, block0, last)
        }
    }
}

lanes_entry_points!(Backend::Avx512);
