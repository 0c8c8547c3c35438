//! SHA-512 on x86_64 with AVX2 and BMI2.
//!
//! The message schedule is computed for four blocks at once, one block per 64-bit lane of a `ymm` register
//! (so there is no dependency between lanes), and the constants are added in the same pass. The 80 rounds of
//! each block then run on scalar registers, compiled for BMI2 (`rorx`). A tail of fewer than four blocks uses
//! the portable schedule.
#![allow(unsafe_code)]
#![allow(clippy::needless_range_loop)] // word-index loops mirror the spec

use super::Backend;
use super::soft::{K512, rounds512, rounds512_by, schedule512};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

#[inline]
#[target_feature(enable = "avx2")]
fn rotr<const R: i32, const L: i32>(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_srli_epi64::<R>(x), _mm256_slli_epi64::<L>(x))
}

/// `W[i] + K[i]` for i in 0..80 of the four 128-byte blocks in `group`; lane k belongs to block k.
#[inline]
#[target_feature(enable = "avx2")]
fn schedule4(group: &[u8]) -> [[u64; 4]; 80] {
    debug_assert_eq!(group.len(), 512);
    // Reverses the bytes of each 64-bit word (big-endian message words).
    let bswap = _mm256_set_epi8(
        8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
    );
    let mut w = [_mm256_setzero_si256(); 80];
    for j in 0..4 {
        // SAFETY: block k's bytes 32j..32j+32 lie inside `group` (512 bytes); loadu needs no alignment.
        let r: [__m256i; 4] =
            core::array::from_fn(|k| unsafe { _mm256_loadu_si256(group.as_ptr().add(128 * k + 32 * j).cast()) });
        // 4x4 transpose of 64-bit words: word 4j+c of every block into one register.
        let t0 = _mm256_unpacklo_epi64(r[0], r[1]);
        let t1 = _mm256_unpackhi_epi64(r[0], r[1]);
        let t2 = _mm256_unpacklo_epi64(r[2], r[3]);
        let t3 = _mm256_unpackhi_epi64(r[2], r[3]);
        w[4 * j] = _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x20>(t0, t2), bswap);
        w[4 * j + 1] = _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x20>(t1, t3), bswap);
        w[4 * j + 2] = _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x31>(t0, t2), bswap);
        w[4 * j + 3] = _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x31>(t1, t3), bswap);
    }
    for i in 16..80 {
        let x = w[i - 15];
        let s0 = _mm256_xor_si256(_mm256_xor_si256(rotr::<1, 63>(x), rotr::<8, 56>(x)), _mm256_srli_epi64::<7>(x));
        let y = w[i - 2];
        let s1 = _mm256_xor_si256(_mm256_xor_si256(rotr::<19, 45>(y), rotr::<61, 3>(y)), _mm256_srli_epi64::<6>(y));
        w[i] = _mm256_add_epi64(_mm256_add_epi64(w[i - 16], s0), _mm256_add_epi64(w[i - 7], s1));
    }
    let mut out = [[0u64; 4]; 80];
    for i in 0..80 {
        let wk = _mm256_add_epi64(w[i], _mm256_set1_epi64x(K512[i] as i64));
        // SAFETY: `out[i]` is 32 writable bytes; storeu needs no alignment.
        unsafe { _mm256_storeu_si256(out[i].as_mut_ptr().cast(), wk) };
    }
    out
}

#[target_feature(enable = "avx2,bmi2")]
fn compress(h: &mut [u64; 8], blocks: &[u8]) {
    let mut groups = blocks.chunks_exact(512);
    for group in &mut groups {
        let wk4 = schedule4(group);
        for k in 0..4 {
            rounds512_by(h, |i| wk4[i][k]);
        }
    }
    for block in groups.remainder().chunks_exact(128) {
        let mut wk = schedule512(block);
        for (x, k) in wk.iter_mut().zip(K512.iter()) {
            *x = x.wrapping_add(*k);
        }
        rounds512(h, &wk);
    }
}

/// SHA-512 compression of every 128-byte block, for [`Backend::Avx2`] and [`Backend::ShaNi`].
pub(super) fn compress512(backend: Checked<Backend>, h: &mut [u64; 8], blocks: &[u8]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU (and OS) support AVX2
    // and BMI2.
    unsafe { compress(h, blocks) }
}
