//! Kusumi512 on AVX2: 8 blocks at a time, one ymm register per state word (lane i = block i).
//!
//! AVX2 has no vector rotate: 16 and 8 are byte shuffles (`vpshufb`), 12 and 7 are shift/shift/or. With 25 state
//! words and 16 ymm registers some words live on the stack; the compiler schedules the spills. Output is three
//! 8×8 dword transposes (words 0..7, 8..15, 16..23) plus word 24 stored lane by lane.
#![allow(unsafe_code)]

use super::soft::SIGMA;
use super::{BLOCK, Backend};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

const LANES: usize = 8;
const CHUNK: usize = LANES * BLOCK;

#[inline]
#[target_feature(enable = "avx2")]
fn rol16(x: __m256i) -> __m256i {
    let m = _mm256_setr_epi8(
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    );
    _mm256_shuffle_epi8(x, m)
}

#[inline]
#[target_feature(enable = "avx2")]
fn rol8(x: __m256i) -> __m256i {
    let m = _mm256_setr_epi8(
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
    );
    _mm256_shuffle_epi8(x, m)
}

macro_rules! rol {
    ($x:expr, $n:literal, $m:literal) => {
        _mm256_or_si256(_mm256_slli_epi32::<$n>($x), _mm256_srli_epi32::<$m>($x))
    };
}

macro_rules! qr {
    ($s:ident, $a:literal, $b:literal, $c:literal, $d:literal) => {
        $s[$a] = _mm256_add_epi32($s[$a], $s[$b]);
        $s[$d] = rol16(_mm256_xor_si256($s[$d], $s[$a]));
        $s[$c] = _mm256_add_epi32($s[$c], $s[$d]);
        $s[$b] = rol!(_mm256_xor_si256($s[$b], $s[$c]), 12, 20);
        $s[$a] = _mm256_add_epi32($s[$a], $s[$b]);
        $s[$d] = rol8(_mm256_xor_si256($s[$d], $s[$a]));
        $s[$c] = _mm256_add_epi32($s[$c], $s[$d]);
        $s[$b] = rol!(_mm256_xor_si256($s[$b], $s[$c]), 7, 25);
    };
}

/// 8×8 dword transpose: `r[j]` lane `b` becomes `o[b]` lane `j`.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose8(r: &[__m256i]) -> [__m256i; 8] {
    let mut t = [_mm256_setzero_si256(); 8];
    for p in 0..4 {
        t[2 * p] = _mm256_unpacklo_epi32(r[2 * p], r[2 * p + 1]);
        t[2 * p + 1] = _mm256_unpackhi_epi32(r[2 * p], r[2 * p + 1]);
    }
    let mut u = [_mm256_setzero_si256(); 8];
    for g in 0..2 {
        let (a0, a1, b0, b1) = (t[4 * g], t[4 * g + 1], t[4 * g + 2], t[4 * g + 3]);
        u[4 * g] = _mm256_unpacklo_epi64(a0, b0);
        u[4 * g + 1] = _mm256_unpackhi_epi64(a0, b0);
        u[4 * g + 2] = _mm256_unpacklo_epi64(a1, b1);
        u[4 * g + 3] = _mm256_unpackhi_epi64(a1, b1);
    }
    let mut o = [_mm256_setzero_si256(); 8];
    for k in 0..4 {
        o[k] = _mm256_permute2x128_si256::<0x20>(u[k], u[4 + k]);
        o[4 + k] = _mm256_permute2x128_si256::<0x31>(u[k], u[4 + k]);
    }
    o
}

/// Computes blocks `counter .. counter + 8` and XORs them into `chunk` (exactly 800 bytes).
#[inline]
#[target_feature(enable = "avx2")]
fn xor8(key: &[u32; 16], nonce: &[u32; 3], counter: u64, chunk: &mut [u8; CHUNK]) {
    let mut lo = [0u32; LANES];
    let mut hi = [0u32; LANES];
    for i in 0..LANES {
        let c = counter.wrapping_add(i as u64);
        lo[i] = c as u32;
        hi[i] = (c >> 32) as u32;
    }
    let mut init = [0u32; 25];
    init[..4].copy_from_slice(&SIGMA);
    init[4..20].copy_from_slice(key);
    init[22..25].copy_from_slice(nonce);
    let mut s = [_mm256_setzero_si256(); 25];
    for (j, w) in s.iter_mut().enumerate() {
        *w = _mm256_set1_epi32(init[j] as i32);
    }
    // SAFETY: `lo` and `hi` are 8 u32 = 32 readable bytes each; loadu has no alignment requirement.
    let (ctr_lo, ctr_hi) = unsafe { (_mm256_loadu_si256(lo.as_ptr().cast()), _mm256_loadu_si256(hi.as_ptr().cast())) };
    s[20] = ctr_lo;
    s[21] = ctr_hi;
    for _ in 0..10 {
        qr!(s, 0, 4, 8, 12);
        qr!(s, 1, 5, 9, 13);
        qr!(s, 2, 6, 10, 14);
        qr!(s, 3, 7, 11, 15);
        qr!(s, 16, 20, 0, 4);
        qr!(s, 17, 21, 1, 5);
        qr!(s, 18, 22, 2, 6);
        qr!(s, 19, 23, 3, 7);
        qr!(s, 0, 5, 10, 15);
        qr!(s, 1, 6, 11, 12);
        qr!(s, 2, 7, 8, 13);
        qr!(s, 3, 4, 9, 14);
        qr!(s, 16, 21, 2, 7);
        qr!(s, 17, 22, 3, 4);
        qr!(s, 18, 23, 0, 5);
        qr!(s, 19, 20, 1, 6);
        qr!(s, 19, 24, 0, 5);
    }
    for (j, w) in s.iter_mut().enumerate() {
        let add = match j {
            20 => ctr_lo,
            21 => ctr_hi,
            _ => _mm256_set1_epi32(init[j] as i32),
        };
        *w = _mm256_add_epi32(*w, add);
    }
    let a = transpose8(&s[0..8]);
    let b = transpose8(&s[8..16]);
    let c = transpose8(&s[16..24]);
    let mut last = [0u32; LANES];
    // SAFETY: `last` is 8 u32 = 32 writable bytes.
    unsafe { _mm256_storeu_si256(last.as_mut_ptr().cast(), s[24]) };
    let p = chunk.as_mut_ptr();
    for blk in 0..LANES {
        // SAFETY: block `blk` occupies bytes blk*100 .. blk*100+100 of the 800-byte chunk; the three 32-byte
        // unaligned loads/stores cover +0..+96, all in bounds.
        unsafe {
            let q = p.add(blk * BLOCK);
            for (i, v) in [a[blk], b[blk], c[blk]].into_iter().enumerate() {
                let qi = q.add(32 * i).cast::<__m256i>();
                _mm256_storeu_si256(qi, _mm256_xor_si256(_mm256_loadu_si256(qi), v));
            }
        }
        let w = &mut chunk[blk * BLOCK + 96..blk * BLOCK + 100];
        let x = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) ^ last[blk];
        w.copy_from_slice(&x.to_le_bytes());
    }
}

/// The AVX2 loop; also the AVX-512 backend's path for short tails.
#[target_feature(enable = "avx2")]
pub(super) fn xor_blocks_impl(key: &[u32; 16], nonce: &[u32; 3], counter: u64, data: &mut [u8]) {
    let mut ctr = counter;
    let mut chunks = data.chunks_exact_mut(CHUNK);
    for chunk in &mut chunks {
        let chunk: &mut [u8; CHUNK] = chunk.try_into().expect("chunks_exact yields CHUNK bytes");
        xor8(key, nonce, ctr, chunk);
        ctr = ctr.wrapping_add(LANES as u64);
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        // Unused lanes compute blocks past the end (wrapping counters); their keystream is discarded.
        let mut buf = [0u8; CHUNK];
        buf[..tail.len()].copy_from_slice(tail);
        xor8(key, nonce, ctr, &mut buf);
        tail.copy_from_slice(&buf[..tail.len()]);
        zeroize::Zeroize::zeroize(&mut buf);
    }
}

/// XORs the keystream of blocks `counter, counter + 1, ...` into `data`.
pub(super) fn xor_blocks(backend: Checked<Backend>, key: &[u32; 16], nonce: &[u32; 3], counter: u64, data: &mut [u8]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { xor_blocks_impl(key, nonce, counter, data) }
}
