//! Kusumi512 on AVX2: 8 blocks at a time, one ymm register per state word (lane i = block i).
//!
//! The body is [`super::simd`], shared with AVX-512; this file gives it its 256-bit operations. AVX2 has no
//! vector rotate: 16 and 8 are byte shuffles (`vpshufb`), 12 and 7 are shift/shift/or. With 25 state words and
//! 16 ymm registers some words live on the stack; the compiler schedules the spills. Output is three 8×8 dword
//! transposes (words 0..7, 8..15, 16..23) plus word 24 stored lane by lane.
#![allow(unsafe_code)]

use super::simd::{self, Lanes};
use super::{BLOCK, Backend};
use crate::dispatch::Checked;
use crate::x86::transpose::transpose8x8_epi32;
use core::arch::x86_64::*;

/// `vpshufb` mask rotating each 32-bit lane left by 16 bits (swapping its two 16-bit halves).
#[repr(align(32))]
#[allow(dead_code)] // read only by the `asm!` in `rot16`, through its address
struct Mask([u8; 32]);
static ROT16: Mask =
    Mask([2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13]);

/// Rotates each 32-bit lane left by 16 bits with one `vpshufb`, its mask a memory operand. Written as `asm!`
/// because LLVM rewrites `_mm256_shuffle_epi8` with this mask into `vpshuflw` + `vpshufhw`: two shuffle-port
/// instructions instead of one (the 8-block loop had 68 shuffles per pass for its 34 byte rotations; now 34).
/// `#[inline]` with the same features as its callers, so LLVM inlines it into them.
#[inline]
#[target_feature(enable = "avx2")]
fn rot16(x: __m256i) -> __m256i {
    let out: __m256i;
    // SAFETY: the function is compiled with AVX2 (so `vpshufb` on ymm is available wherever it runs). The `asm!`
    // reads only the 32 bytes of the local static `ROT16` (RIP-relative) and writes only its output register.
    unsafe {
        core::arch::asm!(
            "vpshufb {o}, {x}, ymmword ptr [rip + {m}]",
            o = lateout(ymm_reg) out,
            x = in(ymm_reg) x,
            m = sym ROT16,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    out
}

/// 8 lanes of 32 bits, for [`lanes`]. Every method needs AVX2 (the [`Lanes`] contract).
impl Lanes<8> for __m256i {
    /// Word 24 of each block, lane by lane.
    type Rest = [u32; 8];

    #[inline(always)]
    unsafe fn splat(x: u32) -> Self {
        // SAFETY: AVX2 is present (the trait's contract).
        unsafe { _mm256_set1_epi32(x as i32) }
    }

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: AVX2 is present and `p` is valid for 32 bytes (the trait's contract); loadu needs no alignment.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }

    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: AVX2 is present and `p` is valid for 32 bytes (the trait's contract); storeu needs no alignment.
        unsafe { _mm256_storeu_si256(p.cast(), self) }
    }

    #[inline(always)]
    unsafe fn add(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (the trait's contract).
        unsafe { _mm256_add_epi32(self, other) }
    }

    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: AVX2 is present (the trait's contract).
        unsafe { _mm256_xor_si256(self, other) }
    }

    /// AVX2 has no vector rotate: 16 and 8 are byte shuffles (`vpshufb`), 12 and 7 shift/shift/or; no other
    /// count is needed (checked at compile time).
    #[inline(always)]
    unsafe fn rotl<const R: i32>(self) -> Self {
        const { assert!(matches!(R, 16 | 12 | 8 | 7), "Kusumi512 rotates by 16, 12, 8 and 7 only") };
        // SAFETY: AVX2 is present (the trait's contract), which `rot16` needs.
        unsafe {
            match R {
                // One `vpshufb` with the mask as a memory operand, written as `asm!` because LLVM rewrites the
                // intrinsic into `vpshuflw` + `vpshufhw`: two shuffle-port instructions instead of one, 17
                // more per pass of the rounds (measured in the disassembly of the 8-block loop).
                16 => rot16(self),
                8 => _mm256_shuffle_epi8(
                    self,
                    _mm256_setr_epi8(
                        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15,
                        12, 13, 14,
                    ),
                ),
                12 => _mm256_or_si256(_mm256_slli_epi32::<12>(self), _mm256_srli_epi32::<20>(self)),
                7 => _mm256_or_si256(_mm256_slli_epi32::<7>(self), _mm256_srli_epi32::<25>(self)),
                _ => unreachable!(),
            }
        }
    }

    #[inline(always)]
    unsafe fn transpose(rows: &[Self; 8]) -> [Self; 8] {
        // SAFETY: AVX2 is present (the trait's contract).
        unsafe { transpose8x8_epi32(*rows) }
    }

    #[inline(always)]
    unsafe fn rest(words: &[Self]) -> [u32; 8] {
        let mut last = [0u32; 8];
        // SAFETY: AVX2 is present (the trait's contract); `last` is 8 u32 = 32 writable bytes.
        unsafe { _mm256_storeu_si256(last.as_mut_ptr().cast(), words[0]) };
        last
    }

    #[inline(always)]
    unsafe fn xor_rest(rest: &[u32; 8], blk: usize, p: *mut u8) {
        let q = p.cast::<u32>();
        // SAFETY: `p` is valid for the 4 bytes of word 24 (the trait's contract); unaligned access.
        unsafe { q.write_unaligned(q.read_unaligned() ^ rest[blk].to_le()) };
    }
}

/// The AVX2 loop: whole 8-block chunks, then a shorter tail as one padded batch ([`simd::xor_padded`]). Also the AVX-512 backend's
/// path for tails of eight blocks or fewer. Returns true if `data` ends inside a block, whose keystream is then
/// in `last` (see [`super::xor_blocks`]).
#[target_feature(enable = "avx2")]
pub(super) fn xor_blocks_impl(
    key: &[u32; 16],
    nonce: &[u32; 3],
    counter: u64,
    data: &mut [u8],
    last: &mut [u8; BLOCK],
) -> bool {
    // SAFETY: this function is compiled with AVX2 and may only run on a CPU that has it (a `#[target_feature]`
    // function), which is all `__m256i`'s `Lanes` methods need.
    unsafe {
        let (ctr, tail) = simd::xor_chunks::<__m256i, 8>(key, nonce, counter, data);
        !tail.is_empty() && simd::xor_padded::<__m256i, 8>(key, nonce, ctr, tail, last)
    }
}

/// The AEAD's stitched pass on AVX2 (8-block chunks); see [`simd::xor_stitched`].
#[target_feature(enable = "avx2")]
fn xor_stitched_impl<J: super::Stitch>(
    key: &[u32; 16],
    nonce: &[u32; 3],
    counter: u64,
    data: &mut [u8],
    lead: usize,
    chunks: usize,
    job: &mut J,
) {
    // SAFETY: this function is compiled with AVX2 and may only run on a CPU that has it (a `#[target_feature]`
    // function), which is all `__m256i`'s `Lanes` methods need.
    unsafe { simd::xor_stitched::<__m256i, 8, J>(key, nonce, counter, data, lead, chunks, job) }
}

/// The AEAD's first batch on AVX2 ([`simd::xor_head`]): block 0 and up to 7 message blocks, one 8-lane batch.
#[target_feature(enable = "avx2")]
fn xor_head_impl(
    key: &[u32; 16],
    nonce: &[u32; 3],
    head: &mut [u8],
    block0: &mut [u8; BLOCK],
    last: &mut [u8; BLOCK],
) -> bool {
    // SAFETY: this function is compiled with AVX2 and may only run on a CPU that has it (a `#[target_feature]`
    // function), which is all `__m256i`'s `Lanes` methods need.
    unsafe { simd::xor_head::<__m256i, 8>(key, nonce, head, block0, last) }
}

lanes_entry_points!(Backend::Avx2);
