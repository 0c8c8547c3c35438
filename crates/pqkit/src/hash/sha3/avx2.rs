//! AVX2 Keccak-f[1600], 4-way: 25 `ymm` registers, lane `k` of every register belongs to state `k`.
#![allow(unsafe_code)]

use super::{Backend, RC};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

#[inline]
#[target_feature(enable = "avx2")]
fn xor(a: __m256i, b: __m256i) -> __m256i {
    _mm256_xor_si256(a, b)
}

#[inline]
#[target_feature(enable = "avx2")]
fn xor5(a: __m256i, b: __m256i, c: __m256i, d: __m256i, e: __m256i) -> __m256i {
    xor(xor(xor(a, b), xor(c, d)), e)
}

#[inline]
#[target_feature(enable = "avx2")]
fn chi(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
    _mm256_xor_si256(a, _mm256_andnot_si256(b, c))
}

#[inline]
#[target_feature(enable = "avx2")]
fn rol(a: __m256i, n: i32) -> __m256i {
    // The amounts are constants after inlining, so these become immediate shifts.
    _mm256_or_si256(_mm256_sll_epi64(a, _mm_cvtsi32_si128(n)), _mm256_srl_epi64(a, _mm_cvtsi32_si128(64 - n)))
}

#[target_feature(enable = "avx2")]
fn f1600_x4_avx2(states: &mut [[u64; 4]; 25]) {
    let mut a = [_mm256_setzero_si256(); 25];
    for (r, s) in a.iter_mut().zip(states.iter()) {
        // SAFETY: `s` is 32 readable bytes; loadu has no alignment requirement.
        *r = unsafe { _mm256_loadu_si256(s.as_ptr().cast()) };
    }
    for &rc in RC.iter() {
        let rc = _mm256_set1_epi64x(rc as i64);
        keccak_round!(a, rc, xor, xor5, chi, rol);
    }
    for (r, s) in a.iter().zip(states.iter_mut()) {
        // SAFETY: `s` is 32 writable bytes; storeu has no alignment requirement.
        unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), *r) };
    }
}

/// 4-way Keccak-f[1600].
pub(super) fn f1600_x4(backend: Checked<Backend>, states: &mut [[u64; 4]; 25]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU and OS support AVX2.
    unsafe { f1600_x4_avx2(states) }
}

/// One Keccak-f\[1600\] round, computed plane by plane: for each output plane y, its five lanes are gathered
/// (theta + rho + pi) and chi-ed at once, so few lanes are live at a time; the column parities for the next
/// round's theta are accumulated as the lanes come out. `c` holds the column parities of `a` on entry and of
/// the result on exit.
#[inline(always)]
fn round_planes(a: &mut [u64; 25], c: &mut [u64; 5], rc: u64) {
    let d = [
        c[4] ^ c[1].rotate_left(1),
        c[0] ^ c[2].rotate_left(1),
        c[1] ^ c[3].rotate_left(1),
        c[2] ^ c[4].rotate_left(1),
        c[3] ^ c[0].rotate_left(1),
    ];
    let mut n = [0u64; 25];
    // (source lane, rotation) for the five lanes of each output plane, in x order (FIPS 202 rho and pi).
    const SRC: [[(usize, u32); 5]; 5] = [
        [(0, 0), (6, 44), (12, 43), (18, 21), (24, 14)],
        [(3, 28), (9, 20), (10, 3), (16, 45), (22, 61)],
        [(1, 1), (7, 6), (13, 25), (19, 8), (20, 18)],
        [(4, 27), (5, 36), (11, 10), (17, 15), (23, 56)],
        [(2, 62), (8, 55), (14, 39), (15, 41), (21, 2)],
    ];
    let mut cn = [0u64; 5];
    for y in 0..5 {
        let b: [u64; 5] = core::array::from_fn(|x| {
            let (i, r) = SRC[y][x];
            (a[i] ^ d[i % 5]).rotate_left(r)
        });
        for x in 0..5 {
            let mut v = b[x] ^ (!b[(x + 1) % 5] & b[(x + 2) % 5]);
            if y == 0 && x == 0 {
                // Iota, before the lane enters the next round's column parity.
                v ^= rc;
            }
            n[5 * y + x] = v;
            cn[x] ^= v;
        }
    }
    *a = n;
    *c = cn;
}

/// The 24 rounds on `a`.
#[inline(always)]
fn permute(a: &mut [u64; 25]) {
    let mut c: [u64; 5] = core::array::from_fn(|x| a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20]);
    for rc in RC.chunks_exact(4) {
        round_planes(a, &mut c, rc[0]);
        round_planes(a, &mut c, rc[1]);
        round_planes(a, &mut c, rc[2]);
        round_planes(a, &mut c, rc[3]);
    }
}

#[target_feature(enable = "avx2,bmi1,bmi2")]
fn f1600_bmi2(state: &mut [u64; 25]) {
    let mut a = *state;
    permute(&mut a);
    *state = a;
}

/// Absorbs every whole `8 * L`-byte block of `data` (XOR as little-endian lanes, then permute) with the state
/// kept in locals across blocks. Returns the number of bytes absorbed.
#[inline]
#[target_feature(enable = "avx2,bmi1,bmi2")]
fn absorb_bmi2<const L: usize>(state: &mut [u64; 25], data: &[u8]) -> usize {
    let mut a = *state;
    let mut blocks = data.chunks_exact(8 * L);
    for blk in &mut blocks {
        for (s, w) in a[..L].iter_mut().zip(blk.chunks_exact(8)) {
            *s ^= u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        }
        permute(&mut a);
    }
    *state = a;
    data.len() - blocks.remainder().len()
}

/// Absorbs the whole `rate`-byte blocks of `data` into `state`; returns the bytes absorbed (0 for a rate this
/// fast path does not cover).
pub(super) fn absorb_blocks(backend: Checked<Backend>, state: &mut [u64; 25], data: &[u8], rate: usize) -> usize {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU and OS support AVX2,
    // BMI1 and BMI2.
    unsafe {
        match rate {
            72 => absorb_bmi2::<9>(state, data),
            104 => absorb_bmi2::<13>(state, data),
            136 => absorb_bmi2::<17>(state, data),
            144 => absorb_bmi2::<18>(state, data),
            168 => absorb_bmi2::<21>(state, data),
            _ => 0,
        }
    }
}

/// Single-state Keccak-f[1600]: plane-ordered scalar rounds compiled with BMI1/BMI2 (`andn` for chi, `rorx` for the
/// rotations).
pub(super) fn f1600(backend: Checked<Backend>, state: &mut [u64; 25]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU and OS support AVX2,
    // BMI1 and BMI2.
    unsafe { f1600_bmi2(state) }
}
