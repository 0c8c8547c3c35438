//! Kusumi512 on AVX-512: 16 blocks at a time, one zmm register per state word (lane i = block i).
//!
//! Rotations use `vprold`. After the 10 passes the 25 word-sliced registers are transposed to block order
//! (two 16×16 dword transposes: words 0..15, and words 16..24 padded) and XORed into the data, 1600 bytes at a
//! time: words 0..15 of a block with one 64-byte load/store, words 16..23 with a 32-byte one and word 24 as a
//! u32. (Masked 9-dword loads/stores were ~20% slower overall on the development machine.) A tail of 9..15
//! blocks goes through a 16-block stack buffer, a shorter one to the AVX2 path.
#![allow(unsafe_code)]

use super::soft::SIGMA;
use super::{BLOCK, Backend};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

const LANES: usize = 16;
const CHUNK: usize = LANES * BLOCK;

macro_rules! qr {
    ($s:ident, $a:literal, $b:literal, $c:literal, $d:literal) => {
        $s[$a] = _mm512_add_epi32($s[$a], $s[$b]);
        $s[$d] = _mm512_rol_epi32::<16>(_mm512_xor_si512($s[$d], $s[$a]));
        $s[$c] = _mm512_add_epi32($s[$c], $s[$d]);
        $s[$b] = _mm512_rol_epi32::<12>(_mm512_xor_si512($s[$b], $s[$c]));
        $s[$a] = _mm512_add_epi32($s[$a], $s[$b]);
        $s[$d] = _mm512_rol_epi32::<8>(_mm512_xor_si512($s[$d], $s[$a]));
        $s[$c] = _mm512_add_epi32($s[$c], $s[$d]);
        $s[$b] = _mm512_rol_epi32::<7>(_mm512_xor_si512($s[$b], $s[$c]));
    };
}

/// 16×16 dword transpose: `r[j]` lane `b` becomes `o[b]` lane `j`.
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose16(r: &[__m512i; 16]) -> [__m512i; 16] {
    // Step 1: interleave dwords of word pairs.
    let mut t = [_mm512_setzero_si512(); 16];
    for p in 0..8 {
        t[2 * p] = _mm512_unpacklo_epi32(r[2 * p], r[2 * p + 1]);
        t[2 * p + 1] = _mm512_unpackhi_epi32(r[2 * p], r[2 * p + 1]);
    }
    // Step 2: interleave qwords; u[4g + k] lane-128 L holds words 4g..4g+3 of block 4L + k.
    let mut u = [_mm512_setzero_si512(); 16];
    for g in 0..4 {
        let (a0, a1, b0, b1) = (t[4 * g], t[4 * g + 1], t[4 * g + 2], t[4 * g + 3]);
        u[4 * g] = _mm512_unpacklo_epi64(a0, b0);
        u[4 * g + 1] = _mm512_unpackhi_epi64(a0, b0);
        u[4 * g + 2] = _mm512_unpacklo_epi64(a1, b1);
        u[4 * g + 3] = _mm512_unpackhi_epi64(a1, b1);
    }
    // Step 3: gather 128-bit lanes across the four word groups.
    let mut o = [_mm512_setzero_si512(); 16];
    for k in 0..4 {
        let v = _mm512_shuffle_i32x4::<0x88>(u[k], u[4 + k]);
        let w = _mm512_shuffle_i32x4::<0xDD>(u[k], u[4 + k]);
        let v2 = _mm512_shuffle_i32x4::<0x88>(u[8 + k], u[12 + k]);
        let w2 = _mm512_shuffle_i32x4::<0xDD>(u[8 + k], u[12 + k]);
        o[k] = _mm512_shuffle_i32x4::<0x88>(v, v2);
        o[8 + k] = _mm512_shuffle_i32x4::<0xDD>(v, v2);
        o[4 + k] = _mm512_shuffle_i32x4::<0x88>(w, w2);
        o[12 + k] = _mm512_shuffle_i32x4::<0xDD>(w, w2);
    }
    o
}

/// Computes blocks `counter .. counter + 16` and XORs them into `chunk` (exactly 1600 bytes).
#[inline]
#[target_feature(enable = "avx512f")]
fn xor16(key: &[u32; 16], nonce: &[u32; 3], counter: u64, chunk: &mut [u8; CHUNK]) {
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
    let mut s = [_mm512_setzero_si512(); 25];
    for (j, w) in s.iter_mut().enumerate() {
        *w = _mm512_set1_epi32(init[j] as i32);
    }
    // SAFETY: `lo` and `hi` are 16 u32 = 64 readable bytes each; loadu has no alignment requirement.
    let (ctr_lo, ctr_hi) = unsafe { (_mm512_loadu_si512(lo.as_ptr().cast()), _mm512_loadu_si512(hi.as_ptr().cast())) };
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
            _ => _mm512_set1_epi32(init[j] as i32),
        };
        *w = _mm512_add_epi32(*w, add);
    }
    let mut first = [_mm512_setzero_si512(); 16];
    first.copy_from_slice(&s[..16]);
    let mut rest = [_mm512_setzero_si512(); 16];
    rest[..9].copy_from_slice(&s[16..]);
    let a = transpose16(&first);
    let b = transpose16(&rest);
    let p = chunk.as_mut_ptr();
    for blk in 0..LANES {
        // SAFETY: block `blk` occupies bytes blk*100 .. blk*100+100 of the 1600-byte chunk: the 64-byte
        // unaligned load/store covers blk*100 .. +64, the 32-byte ones +64 .. +96 and the u32 +96 .. +100, all
        // in bounds.
        unsafe {
            let q = p.add(blk * BLOCK);
            let x = _mm512_loadu_si512(q.cast());
            _mm512_storeu_si512(q.cast(), _mm512_xor_si512(x, a[blk]));
            let q2 = q.add(64).cast::<__m256i>();
            let y = _mm256_loadu_si256(q2);
            _mm256_storeu_si256(q2, _mm256_xor_si256(y, _mm512_castsi512_si256(b[blk])));
            let w24 = _mm_cvtsi128_si32(_mm512_extracti32x4_epi32::<2>(b[blk])) as u32;
            let q3 = q.add(96).cast::<u32>();
            q3.write_unaligned(q3.read_unaligned() ^ w24.to_le());
        }
    }
}

#[target_feature(enable = "avx512f")]
fn xor_blocks_impl(key: &[u32; 16], nonce: &[u32; 3], counter: u64, data: &mut [u8]) {
    let mut ctr = counter;
    let mut chunks = data.chunks_exact_mut(CHUNK);
    for chunk in &mut chunks {
        let chunk: &mut [u8; CHUNK] = chunk.try_into().expect("chunks_exact yields CHUNK bytes");
        xor16(key, nonce, ctr, chunk);
        ctr = ctr.wrapping_add(LANES as u64);
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() && tail.len() <= CHUNK / 2 {
        // Eight blocks or fewer: the 8-wide AVX2 path wastes less work than a 16-wide batch.
        // (AVX-512F implies AVX2, and Backend::Avx512 requires both.)
        super::avx2::xor_blocks_impl(key, nonce, ctr, tail);
    } else if !tail.is_empty() {
        // Unused lanes compute blocks past the end (wrapping counters); their keystream is discarded.
        let mut buf = [0u8; CHUNK];
        buf[..tail.len()].copy_from_slice(tail);
        xor16(key, nonce, ctr, &mut buf);
        tail.copy_from_slice(&buf[..tail.len()]);
        zeroize::Zeroize::zeroize(&mut buf);
    }
}

/// XORs the keystream of blocks `counter, counter + 1, ...` into `data`.
pub(super) fn xor_blocks(backend: Checked<Backend>, key: &[u32; 16], nonce: &[u32; 3], counter: u64, data: &mut [u8]) {
    assert!(backend.covers(Backend::Avx512));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU has AVX-512F and
    // AVX2.
    unsafe { xor_blocks_impl(key, nonce, counter, data) }
}
