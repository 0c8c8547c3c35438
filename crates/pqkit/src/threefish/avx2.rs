//! Threefish-512-CTR on AVX2: 4 blocks at a time, word j of block i in 64-bit lane i of ymm j.
//!
//! The same word-sliced layout as `avx512.rs` at half the width. AVX2 has no 64-bit rotate: the three rotation
//! amounts that are whole bytes (8, 24, 56) are one `vpshufb`, the others shift left, shift right and OR. The
//! word permutation is register renaming (free); each key-schedule injection adds broadcast subkey words from
//! the table of 19 subkeys computed once per call. A 4×4 qword transpose at the end puts each block's two
//! 32-byte halves in two registers.
#![allow(unsafe_code)]

use super::soft::R;
use super::{BLOCK, Backend};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

const LANES: usize = 4;
const CHUNK: usize = LANES * BLOCK;

/// Rotates each 64-bit lane left by `N` bits: one `vpshufb` for 8, 24 and 56, shift/shift/OR otherwise.
#[inline(always)]
fn rotl<const N: u32>(x: __m256i) -> __m256i {
    // SAFETY: only ever inlined into the `#[target_feature(enable = "avx2")]` functions below, which run only on
    // a CPU with AVX2 (the `Checked` backend proves it); the intrinsics touch no memory.
    unsafe {
        match N {
            // Byte i of the result is byte (i - N/8) mod 8 of the same qword.
            8 => _mm256_shuffle_epi8(
                x,
                _mm256_setr_epi8(
                    7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14, 7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12,
                    13, 14,
                ),
            ),
            24 => _mm256_shuffle_epi8(
                x,
                _mm256_setr_epi8(
                    5, 6, 7, 0, 1, 2, 3, 4, 13, 14, 15, 8, 9, 10, 11, 12, 5, 6, 7, 0, 1, 2, 3, 4, 13, 14, 15, 8, 9, 10,
                    11, 12,
                ),
            ),
            56 => _mm256_shuffle_epi8(
                x,
                _mm256_setr_epi8(
                    1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13,
                    14, 15, 8,
                ),
            ),
            _ => _mm256_or_si256(
                _mm256_sll_epi64(x, _mm_cvtsi32_si128(N as i32)),
                _mm256_srl_epi64(x, _mm_cvtsi32_si128(64 - N as i32)),
            ),
        }
    }
}

macro_rules! mix {
    ($v:ident, $a:literal, $b:literal, $i:literal, $j:literal) => {
        $v[$a] = _mm256_add_epi64($v[$a], $v[$b]);
        $v[$b] = _mm256_xor_si256(rotl::<{ R[$i][$j] }>($v[$b]), $v[$a]);
    };
}

macro_rules! four {
    ($v:ident, $i0:literal, $i1:literal, $i2:literal, $i3:literal) => {
        mix!($v, 0, 1, $i0, 0);
        mix!($v, 2, 3, $i0, 1);
        mix!($v, 4, 5, $i0, 2);
        mix!($v, 6, 7, $i0, 3);
        mix!($v, 2, 1, $i1, 0);
        mix!($v, 4, 7, $i1, 1);
        mix!($v, 6, 5, $i1, 2);
        mix!($v, 0, 3, $i1, 3);
        mix!($v, 4, 1, $i2, 0);
        mix!($v, 6, 3, $i2, 1);
        mix!($v, 0, 5, $i2, 2);
        mix!($v, 2, 7, $i2, 3);
        mix!($v, 6, 1, $i3, 0);
        mix!($v, 0, 7, $i3, 1);
        mix!($v, 2, 5, $i3, 2);
        mix!($v, 4, 3, $i3, 3);
    };
}

/// 4×4 transpose of 64-bit words: lane `j` of output `b` is lane `b` of input `j`.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose4x4_epi64(a: [__m256i; 4]) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi64(a[0], a[1]);
    let t1 = _mm256_unpackhi_epi64(a[0], a[1]);
    let t2 = _mm256_unpacklo_epi64(a[2], a[3]);
    let t3 = _mm256_unpackhi_epi64(a[2], a[3]);
    [
        _mm256_permute2x128_si256::<0x20>(t0, t2),
        _mm256_permute2x128_si256::<0x20>(t1, t3),
        _mm256_permute2x128_si256::<0x31>(t0, t2),
        _mm256_permute2x128_si256::<0x31>(t1, t3),
    ]
}

/// Encrypts counters `counter .. counter + 4` (wrapping) and XORs the keystream into the 256-byte `chunk`.
#[inline]
#[target_feature(enable = "avx2")]
fn xor4(sk: &[[u64; 8]; 19], counter: u64, chunk: &mut [u8; CHUNK]) {
    let inject = |v: &mut [__m256i; 8], s: usize| {
        for i in 0..8 {
            v[i] = _mm256_add_epi64(v[i], _mm256_set1_epi64x(sk[s][i] as i64));
        }
    };
    let mut v = [_mm256_setzero_si256(); 8];
    v[0] = _mm256_add_epi64(_mm256_set1_epi64x(counter as i64), _mm256_setr_epi64x(0, 1, 2, 3));
    let mut s = 0;
    while s < 18 {
        inject(&mut v, s);
        four!(v, 0, 1, 2, 3);
        inject(&mut v, s + 1);
        four!(v, 4, 5, 6, 7);
        s += 2;
    }
    inject(&mut v, 18);
    let lo = transpose4x4_epi64([v[0], v[1], v[2], v[3]]);
    let hi = transpose4x4_epi64([v[4], v[5], v[6], v[7]]);
    let p = chunk.as_mut_ptr();
    for blk in 0..LANES {
        // SAFETY: block `blk` is bytes blk*64 .. blk*64+64 of the 256-byte chunk: its two halves at +0 and +32;
        // unaligned loads/stores.
        unsafe {
            let q = p.add(blk * BLOCK).cast::<__m256i>();
            _mm256_storeu_si256(q, _mm256_xor_si256(_mm256_loadu_si256(q), lo[blk]));
            let q = q.add(1);
            _mm256_storeu_si256(q, _mm256_xor_si256(_mm256_loadu_si256(q), hi[blk]));
        }
    }
}

#[target_feature(enable = "avx2")]
fn xor_blocks_impl(k: &[u64; 9], t: &[u64; 3], counter: u64, data: &mut [u8]) {
    let mut sk = super::soft::subkeys(k, t);
    let mut ctr = counter;
    let mut chunks = data.chunks_exact_mut(CHUNK);
    for chunk in &mut chunks {
        let chunk: &mut [u8; CHUNK] = chunk.try_into().expect("chunks_exact yields CHUNK bytes");
        xor4(&sk, ctr, chunk);
        ctr = ctr.wrapping_add(LANES as u64);
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() && tail.len() <= BLOCK {
        // One block or less: cheaper alone than a 4-wide batch.
        super::soft::xor_blocks(k, t, ctr, tail);
    } else if !tail.is_empty() {
        // Unused lanes compute blocks past the end (wrapping counters); their keystream is discarded.
        let mut buf = [0u8; CHUNK];
        buf[..tail.len()].copy_from_slice(tail);
        xor4(&sk, ctr, &mut buf);
        tail.copy_from_slice(&buf[..tail.len()]);
        crate::ct::wipe(&mut buf);
    }
    crate::ct::wipe(sk.as_flattened_mut());
}

/// XORs the CTR keystream of blocks `counter, counter + 1, ...` into `data`.
pub(super) fn xor_blocks(backend: Checked<Backend>, k: &[u64; 9], t: &[u64; 3], counter: u64, data: &mut [u8]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { xor_blocks_impl(k, t, counter, data) }
}
