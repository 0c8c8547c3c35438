//! AVX-512 Keccak-f[1600]: a single state on five `zmm` registers, and 8 states on 25 `zmm` registers.
//!
//! ## Single state
//! Theta and rho run on *rows* (register y holds lanes x = 0..4 of plane y; lanes 5..7 are don't-care):
//! the column parities are two `vpternlogq`, the rotations one `vprolvq` per row. Pi is a pure per-register
//! permutation when its output is read as *columns* (register x holds lanes y = 0..4), and chi along x is then
//! a `vpternlogq` across registers with no shuffles. A 5x5 transpose (12 `vpermt2q`) returns to rows.
#![allow(unsafe_code)]

use super::{Backend, RC};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// The rotation amounts of rho for row y, lane x (FIPS 202 table 2).
const RHO_ROWS: [[u64; 8]; 5] = [
    [0, 1, 62, 28, 27, 0, 0, 0],
    [36, 44, 6, 55, 20, 0, 0, 0],
    [3, 10, 43, 25, 39, 0, 0, 0],
    [41, 45, 15, 21, 8, 0, 0, 0],
    [18, 2, 61, 56, 14, 0, 0, 0],
];

/// Pi read as columns: column x, lane y comes from row x, lane (x + 3y) mod 5.
const PI_COLS: [[u64; 8]; 5] = [
    [0, 3, 1, 4, 2, 0, 0, 0],
    [1, 4, 2, 0, 3, 0, 0, 0],
    [2, 0, 3, 1, 4, 0, 0, 0],
    [3, 1, 4, 2, 0, 0, 0, 0],
    [4, 2, 0, 3, 1, 0, 0, 0],
];

#[inline]
#[target_feature(enable = "avx512f")]
fn v(a: &[u64; 8]) -> __m512i {
    // SAFETY: `a` is 64 readable bytes; loadu has no alignment requirement.
    unsafe { _mm512_loadu_si512(a.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f")]
fn f1600_avx512(state: &mut [u64; 25]) {
    const MASK: __mmask8 = 0x1f;
    let mut r = [_mm512_setzero_si512(); 5];
    for (y, row) in r.iter_mut().enumerate() {
        // SAFETY: lanes 5y..5y+5 are in bounds of the 25-lane state; the mask reads exactly those 40 bytes.
        *row = unsafe { _mm512_maskz_loadu_epi64(MASK, state.as_ptr().add(5 * y).cast()) };
    }
    let rho = [v(&RHO_ROWS[0]), v(&RHO_ROWS[1]), v(&RHO_ROWS[2]), v(&RHO_ROWS[3]), v(&RHO_ROWS[4])];
    let pi = [v(&PI_COLS[0]), v(&PI_COLS[1]), v(&PI_COLS[2]), v(&PI_COLS[3]), v(&PI_COLS[4])];
    let prev = v(&[4, 0, 1, 2, 3, 0, 0, 0]);
    let next = v(&[1, 2, 3, 4, 0, 0, 0, 0]);
    let t_a0 = v(&[0, 8, 1, 9, 2, 10, 3, 11]);
    let t_a1 = v(&[4, 12, 0, 0, 0, 0, 0, 0]);
    let t_w01 = v(&[0, 1, 8, 9, 2, 3, 10, 11]);
    let t_w23 = v(&[4, 5, 12, 13, 6, 7, 14, 15]);
    let t_r0 = v(&[0, 1, 2, 3, 8, 0, 0, 0]);
    let t_r1 = v(&[4, 5, 6, 7, 9, 0, 0, 0]);
    let t_r2 = v(&[0, 1, 2, 3, 10, 0, 0, 0]);
    let t_r3 = v(&[4, 5, 6, 7, 11, 0, 0, 0]);
    let t_r4 = v(&[0, 1, 2, 3, 12, 0, 0, 0]);

    for &rc in RC.iter() {
        // Theta: column parities, then D[x] = C[x-1] ^ rol(C[x+1], 1) folded into each row.
        let c = _mm512_ternarylogic_epi64::<0x96>(r[0], r[1], r[2]);
        let c = _mm512_ternarylogic_epi64::<0x96>(c, r[3], r[4]);
        let cp = _mm512_permutexvar_epi64(prev, c);
        let cn = _mm512_rol_epi64::<1>(_mm512_permutexvar_epi64(next, c));
        // Theta's xor, then rho.
        let b0 = _mm512_rolv_epi64(_mm512_ternarylogic_epi64::<0x96>(r[0], cp, cn), rho[0]);
        let b1 = _mm512_rolv_epi64(_mm512_ternarylogic_epi64::<0x96>(r[1], cp, cn), rho[1]);
        let b2 = _mm512_rolv_epi64(_mm512_ternarylogic_epi64::<0x96>(r[2], cp, cn), rho[2]);
        let b3 = _mm512_rolv_epi64(_mm512_ternarylogic_epi64::<0x96>(r[3], cp, cn), rho[3]);
        let b4 = _mm512_rolv_epi64(_mm512_ternarylogic_epi64::<0x96>(r[4], cp, cn), rho[4]);
        // Pi, landing in column form.
        let k0 = _mm512_permutexvar_epi64(pi[0], b0);
        let k1 = _mm512_permutexvar_epi64(pi[1], b1);
        let k2 = _mm512_permutexvar_epi64(pi[2], b2);
        let k3 = _mm512_permutexvar_epi64(pi[3], b3);
        let k4 = _mm512_permutexvar_epi64(pi[4], b4);
        // Chi along x (a ^ (!b & c) is truth table 0xd2), then iota on lane (0, 0).
        let c0 = _mm512_ternarylogic_epi64::<0xd2>(k0, k1, k2);
        let c1 = _mm512_ternarylogic_epi64::<0xd2>(k1, k2, k3);
        let c2 = _mm512_ternarylogic_epi64::<0xd2>(k2, k3, k4);
        let c3 = _mm512_ternarylogic_epi64::<0xd2>(k3, k4, k0);
        let c4 = _mm512_ternarylogic_epi64::<0xd2>(k4, k0, k1);
        let c0 = _mm512_xor_si512(c0, _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, rc as i64));
        // Transpose columns back to rows: row y, lane x = column x, lane y.
        let a0 = _mm512_permutex2var_epi64(c0, t_a0, c1);
        let a1 = _mm512_permutex2var_epi64(c0, t_a1, c1);
        let e0 = _mm512_permutex2var_epi64(c2, t_a0, c3);
        let e1 = _mm512_permutex2var_epi64(c2, t_a1, c3);
        let w01 = _mm512_permutex2var_epi64(a0, t_w01, e0);
        let w23 = _mm512_permutex2var_epi64(a0, t_w23, e0);
        let w4 = _mm512_permutex2var_epi64(a1, t_w01, e1);
        r[0] = _mm512_permutex2var_epi64(w01, t_r0, c4);
        r[1] = _mm512_permutex2var_epi64(w01, t_r1, c4);
        r[2] = _mm512_permutex2var_epi64(w23, t_r2, c4);
        r[3] = _mm512_permutex2var_epi64(w23, t_r3, c4);
        r[4] = _mm512_permutex2var_epi64(w4, t_r4, c4);
    }
    for (y, row) in r.iter().enumerate() {
        // SAFETY: as for the load: the mask writes exactly lanes 5y..5y+5, which are in bounds.
        unsafe { _mm512_mask_storeu_epi64(state.as_mut_ptr().add(5 * y).cast(), MASK, *row) };
    }
}

/// Single-state Keccak-f[1600] on five `zmm` rows (the `Avx512Rows` backend).
pub(super) fn f1600(backend: Checked<Backend>, state: &mut [u64; 25]) {
    assert!(backend.covers(Backend::Avx512Rows));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512Rows, so the CPU and OS support
    // AVX-512F.
    unsafe { f1600_avx512(state) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn xor(a: __m512i, b: __m512i) -> __m512i {
    _mm512_xor_si512(a, b)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn xor5(a: __m512i, b: __m512i, c: __m512i, d: __m512i, e: __m512i) -> __m512i {
    _mm512_ternarylogic_epi64::<0x96>(_mm512_ternarylogic_epi64::<0x96>(a, b, c), d, e)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn chi(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    _mm512_ternarylogic_epi64::<0xd2>(a, b, c)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn rol(a: __m512i, n: i64) -> __m512i {
    // A constant amount after inlining: becomes `vprolq` with an immediate.
    _mm512_rolv_epi64(a, _mm512_set1_epi64(n))
}

#[target_feature(enable = "avx512f")]
fn f1600_x8_avx512(states: &mut [[u64; 8]; 25]) {
    let mut a = [_mm512_setzero_si512(); 25];
    for (r, s) in a.iter_mut().zip(states.iter()) {
        *r = v(s);
    }
    for &rc in RC.iter() {
        let rc = _mm512_set1_epi64(rc as i64);
        keccak_round!(a, rc, xor, xor5, chi, rol);
    }
    for (r, s) in a.iter().zip(states.iter_mut()) {
        // SAFETY: `s` is 64 writable bytes; storeu has no alignment requirement.
        unsafe { _mm512_storeu_si512(s.as_mut_ptr().cast(), *r) };
    }
}

/// 8-way Keccak-f[1600] (the `Avx512` and `Avx512Rows` backends, which need the same features).
pub(super) fn f1600_x8(backend: Checked<Backend>, states: &mut [[u64; 8]; 25]) {
    assert!(backend.covers(Backend::Avx512));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU and OS support
    // AVX-512F.
    unsafe { f1600_x8_avx512(states) }
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn xor4(a: __m256i, b: __m256i) -> __m256i {
    _mm256_xor_si256(a, b)
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn xor5_4(a: __m256i, b: __m256i, c: __m256i, d: __m256i, e: __m256i) -> __m256i {
    _mm256_ternarylogic_epi64::<0x96>(_mm256_ternarylogic_epi64::<0x96>(a, b, c), d, e)
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn chi4(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
    _mm256_ternarylogic_epi64::<0xd2>(a, b, c)
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn rol4(a: __m256i, n: i64) -> __m256i {
    // A constant amount after inlining: becomes `vprolq` with an immediate.
    _mm256_rolv_epi64(a, _mm256_set1_epi64x(n))
}

/// The 4-way permutation on `ymm` registers with AVX-512VL: `vprolq` and `vpternlogq` instead of AVX2's
/// shift/shift/or rotations and andnot/xor chi, about 40% fewer instructions than the AVX2 code.
#[target_feature(enable = "avx2,avx512f,avx512vl")]
fn f1600_x4_avx512vl(states: &mut [[u64; 4]; 25]) {
    let mut a = [_mm256_setzero_si256(); 25];
    for (r, s) in a.iter_mut().zip(states.iter()) {
        // SAFETY: `s` is 32 readable bytes; loadu has no alignment requirement.
        *r = unsafe { _mm256_loadu_si256(s.as_ptr().cast()) };
    }
    for &rc in RC.iter() {
        let rc = _mm256_set1_epi64x(rc as i64);
        keccak_round!(a, rc, xor4, xor5_4, chi4, rol4);
    }
    for (r, s) in a.iter().zip(states.iter_mut()) {
        // SAFETY: `s` is 32 writable bytes; storeu has no alignment requirement.
        unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), *r) };
    }
}

/// 4-way Keccak-f[1600] with AVX-512VL (the `Avx512` and `Avx512Rows` backends).
pub(super) fn f1600_x4(backend: Checked<Backend>, states: &mut [[u64; 4]; 25]) {
    assert!(backend.covers(Backend::Avx512));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU and OS support
    // AVX2, AVX-512F and AVX-512VL.
    unsafe { f1600_x4_avx512vl(states) }
}
