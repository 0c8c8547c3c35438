//! Portable Keccak-f[1600].

#![allow(clippy::needless_range_loop)] // lane-index loops mirror the spec

use super::RC;

#[inline(always)]
fn xor(a: u64, b: u64) -> u64 {
    a ^ b
}

#[inline(always)]
fn xor5(a: u64, b: u64, c: u64, d: u64, e: u64) -> u64 {
    a ^ b ^ c ^ d ^ e
}

#[inline(always)]
fn chi(a: u64, b: u64, c: u64) -> u64 {
    a ^ (!b & c)
}

#[inline(always)]
fn rol(a: u64, n: u32) -> u64 {
    a.rotate_left(n)
}

/// Keccak-f[1600] on one state.
#[inline(always)]
pub(super) fn f1600(state: &mut [u64; 25]) {
    let mut a = *state;
    for &rc in RC.iter() {
        keccak_round!(a, rc, xor, xor5, chi, rol);
    }
    *state = a;
}

/// Keccak-f[1600] on `N` interleaved states, one after another.
pub(super) fn f1600_xn<const N: usize>(states: &mut [[u64; N]; 25]) {
    for k in 0..N {
        let mut s = [0u64; 25];
        for i in 0..25 {
            s[i] = states[i][k];
        }
        f1600(&mut s);
        for i in 0..25 {
            states[i][k] = s[i];
        }
    }
}
