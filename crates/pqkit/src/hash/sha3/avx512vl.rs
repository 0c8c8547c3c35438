//! AVX-512F/VL single-state Keccak-f\[1600\]: one lane per `xmm` register.
//!
//! Each of the 25 lanes lives in the low 64 bits of its own `xmm` register (the high half is don't-care), so
//! EVEX's 32 vector registers hold the whole state and no shuffles are needed: theta's column parities are
//! two `vpternlogq` per column, `D[x] = C[x-1] ^ rol(C[x+1], 1)` a `vprolq` and a `vpxorq`, each lane's theta
//! a `vpxorq` and its rho a `vprolq` with an immediate, pi only a renaming of registers, chi one `vpternlogq`
//! (truth table `0xd2`, `a ^ (!b & c)`) per lane, and iota one `vpxorq`: 95 vector operations per round
//! (plus about 20 register copies, as `vpternlogq` overwrites an input) on the vector pipes, which scalar
//! code leaves idle.
//!
//! Measured choices (shared Zen 4, thread CPU clock; see `examples/keccak_speed.rs`):
//! - `D[x]` is materialised rather than folded as `vpternlogq(a, C[x-1], rol(C[x+1], 1))`: the fold saves five
//!   operations but keeps ten values live instead of five, and the spills cost more (about 615 vs 545 TSC
//!   ticks per permutation).
//! - The round loop is not unrolled: unrolled by 2, 4 or 24, LLVM spilled and moved more (about 600 ticks).
#![allow(unsafe_code)]

use super::{Backend, RC};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// `a ^ b ^ c`.
macro_rules! xor3 {
    ($a:expr, $b:expr, $c:expr) => {
        _mm_ternarylogic_epi64::<0x96>($a, $b, $c)
    };
}

/// Theta's lane update and rho: `rol(a ^ d, r)`.
macro_rules! tr {
    ($a:expr, $d:expr, 0) => {
        _mm_xor_si128($a, $d)
    };
    ($a:expr, $d:expr, $r:literal) => {
        _mm_rol_epi64::<$r>(_mm_xor_si128($a, $d))
    };
}

/// Chi on one lane: `a ^ (!b & c)`.
macro_rules! chi {
    ($a:expr, $b:expr, $c:expr) => {
        _mm_ternarylogic_epi64::<0xd2>($a, $b, $c)
    };
}

/// One round on `$a: [__m128i; 25]` (lane x + 5y at index x + 5y) with round constant `$rc: __m128i`.
macro_rules! round {
    ($a:ident, $rc:expr) => {{
        let c0 = xor3!(xor3!($a[0], $a[5], $a[10]), $a[15], $a[20]);
        let c1 = xor3!(xor3!($a[1], $a[6], $a[11]), $a[16], $a[21]);
        let c2 = xor3!(xor3!($a[2], $a[7], $a[12]), $a[17], $a[22]);
        let c3 = xor3!(xor3!($a[3], $a[8], $a[13]), $a[18], $a[23]);
        let c4 = xor3!(xor3!($a[4], $a[9], $a[14]), $a[19], $a[24]);
        // D[x] = C[x-1] ^ rol(C[x+1], 1).
        let d0 = _mm_xor_si128(c4, _mm_rol_epi64::<1>(c1));
        let d1 = _mm_xor_si128(c0, _mm_rol_epi64::<1>(c2));
        let d2 = _mm_xor_si128(c1, _mm_rol_epi64::<1>(c3));
        let d3 = _mm_xor_si128(c2, _mm_rol_epi64::<1>(c4));
        let d4 = _mm_xor_si128(c3, _mm_rol_epi64::<1>(c0));
        // Theta, rho and pi: b_j is the lane that lands at index j; chi plane by plane into `n`.
        let mut n = [_mm_setzero_si128(); 25];
        let b0 = tr!($a[0], d0, 0);
        let b1 = tr!($a[6], d1, 44);
        let b2 = tr!($a[12], d2, 43);
        let b3 = tr!($a[18], d3, 21);
        let b4 = tr!($a[24], d4, 14);
        n[0] = _mm_xor_si128(chi!(b0, b1, b2), $rc);
        n[1] = chi!(b1, b2, b3);
        n[2] = chi!(b2, b3, b4);
        n[3] = chi!(b3, b4, b0);
        n[4] = chi!(b4, b0, b1);
        let b5 = tr!($a[3], d3, 28);
        let b6 = tr!($a[9], d4, 20);
        let b7 = tr!($a[10], d0, 3);
        let b8 = tr!($a[16], d1, 45);
        let b9 = tr!($a[22], d2, 61);
        n[5] = chi!(b5, b6, b7);
        n[6] = chi!(b6, b7, b8);
        n[7] = chi!(b7, b8, b9);
        n[8] = chi!(b8, b9, b5);
        n[9] = chi!(b9, b5, b6);
        let b10 = tr!($a[1], d1, 1);
        let b11 = tr!($a[7], d2, 6);
        let b12 = tr!($a[13], d3, 25);
        let b13 = tr!($a[19], d4, 8);
        let b14 = tr!($a[20], d0, 18);
        n[10] = chi!(b10, b11, b12);
        n[11] = chi!(b11, b12, b13);
        n[12] = chi!(b12, b13, b14);
        n[13] = chi!(b13, b14, b10);
        n[14] = chi!(b14, b10, b11);
        let b15 = tr!($a[4], d4, 27);
        let b16 = tr!($a[5], d0, 36);
        let b17 = tr!($a[11], d1, 10);
        let b18 = tr!($a[17], d2, 15);
        let b19 = tr!($a[23], d3, 56);
        n[15] = chi!(b15, b16, b17);
        n[16] = chi!(b16, b17, b18);
        n[17] = chi!(b17, b18, b19);
        n[18] = chi!(b18, b19, b15);
        n[19] = chi!(b19, b15, b16);
        let b20 = tr!($a[2], d2, 62);
        let b21 = tr!($a[8], d3, 55);
        let b22 = tr!($a[14], d4, 39);
        let b23 = tr!($a[15], d0, 41);
        let b24 = tr!($a[21], d1, 2);
        n[20] = chi!(b20, b21, b22);
        n[21] = chi!(b21, b22, b23);
        n[22] = chi!(b22, b23, b24);
        n[23] = chi!(b23, b24, b20);
        n[24] = chi!(b24, b20, b21);
        $a = n;
    }};
}

/// The 24 rounds on the register state.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn permute(a: &mut [__m128i; 25]) {
    let mut s = *a;
    for &rc in RC.iter() {
        round!(s, _mm_cvtsi64_si128(rc as i64));
    }
    *a = s;
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn load(state: &[u64; 25]) -> [__m128i; 25] {
    core::array::from_fn(|i| _mm_cvtsi64_si128(state[i] as i64))
}

#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn store(a: &[__m128i; 25], state: &mut [u64; 25]) {
    for (s, r) in state.iter_mut().zip(a.iter()) {
        *s = _mm_cvtsi128_si64(*r) as u64;
    }
}

#[target_feature(enable = "avx512f,avx512vl")]
fn f1600_xmm(state: &mut [u64; 25]) {
    let mut a = load(state);
    permute(&mut a);
    store(&a, state);
}

/// Absorbs every whole `8 * L`-byte block of `data` (XOR as little-endian lanes, then permute), with the
/// state kept in registers across blocks. Returns the number of bytes absorbed.
#[target_feature(enable = "avx512f,avx512vl")]
fn absorb_xmm<const L: usize>(state: &mut [u64; 25], data: &[u8]) -> usize {
    let mut a = load(state);
    let mut blocks = data.chunks_exact(8 * L);
    for blk in &mut blocks {
        for (r, w) in a[..L].iter_mut().zip(blk.chunks_exact(8)) {
            let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            *r = _mm_xor_si128(*r, _mm_cvtsi64_si128(w as i64));
        }
        permute(&mut a);
    }
    store(&a, state);
    data.len() - blocks.remainder().len()
}

/// Single-state Keccak-f\[1600\].
pub(super) fn f1600(backend: Checked<Backend>, state: &mut [u64; 25]) {
    assert!(backend.covers(Backend::Avx512));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU and OS support
    // AVX-512F and AVX-512VL.
    unsafe { f1600_xmm(state) }
}

/// Absorbs the whole `rate`-byte blocks of `data` into `state`; returns the bytes absorbed (0 for a rate this
/// fast path does not cover).
pub(super) fn absorb_blocks(backend: Checked<Backend>, state: &mut [u64; 25], data: &[u8], rate: usize) -> usize {
    assert!(backend.covers(Backend::Avx512));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU and OS support
    // AVX-512F and AVX-512VL.
    unsafe {
        match rate {
            72 => absorb_xmm::<9>(state, data),
            104 => absorb_xmm::<13>(state, data),
            136 => absorb_xmm::<17>(state, data),
            144 => absorb_xmm::<18>(state, data),
            168 => absorb_xmm::<21>(state, data),
            _ => 0,
        }
    }
}
