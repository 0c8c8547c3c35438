//! Threefish-512-CTR on AVX-512: 8 blocks at a time, word j of block i in lane i of zmm j.
//!
//! Rotations are `vprolq`, the word permutation is register renaming (free), and each key-schedule injection
//! adds broadcast subkey words. The 8×8 qword transpose at the end puts each 64-byte block in one register.
#![allow(unsafe_code)]

use super::soft::R;
use super::{BLOCK, Backend};
use crate::dispatch::Checked;
use crate::x86::transpose::transpose8x8_epi64;
use core::arch::x86_64::*;

const LANES: usize = 8;
const CHUNK: usize = LANES * BLOCK;

macro_rules! mix {
    ($v:ident, $a:literal, $b:literal, $i:literal, $j:literal) => {
        $v[$a] = _mm512_add_epi64($v[$a], $v[$b]);
        $v[$b] = _mm512_xor_si512(_mm512_rol_epi64::<{ R[$i][$j] as i32 }>($v[$b]), $v[$a]);
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

#[inline]
#[target_feature(enable = "avx512f")]
fn xor8(sk: &[[u64; 8]; 19], counter: u64, chunk: &mut [u8; CHUNK]) {
    let inject = |v: &mut [__m512i; 8], s: usize| {
        for i in 0..8 {
            v[i] = _mm512_add_epi64(v[i], _mm512_set1_epi64(sk[s][i] as i64));
        }
    };
    let c = counter as i64;
    let mut v = [_mm512_setzero_si512(); 8];
    v[0] = _mm512_add_epi64(_mm512_set1_epi64(c), _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
    let mut s = 0;
    while s < 18 {
        inject(&mut v, s);
        four!(v, 0, 1, 2, 3);
        inject(&mut v, s + 1);
        four!(v, 4, 5, 6, 7);
        s += 2;
    }
    inject(&mut v, 18);
    let o = transpose8x8_epi64(v);
    let p = chunk.as_mut_ptr();
    for (blk, ks) in o.iter().enumerate() {
        // SAFETY: block `blk` is bytes blk*64 .. blk*64+64 of the 512-byte chunk; unaligned load/store.
        unsafe {
            let q = p.add(blk * BLOCK).cast::<__m512i>();
            _mm512_storeu_si512(q, _mm512_xor_si512(_mm512_loadu_si512(q), *ks));
        }
    }
}

#[target_feature(enable = "avx512f")]
fn xor_blocks_impl(k: &[u64; 9], t: &[u64; 3], counter: u64, data: &mut [u8]) {
    let mut sk = super::soft::subkeys(k, t);
    let mut ctr = counter;
    let mut chunks = data.chunks_exact_mut(CHUNK);
    for chunk in &mut chunks {
        let chunk: &mut [u8; CHUNK] = chunk.try_into().expect("chunks_exact yields CHUNK bytes");
        xor8(&sk, ctr, chunk);
        ctr = ctr.wrapping_add(LANES as u64);
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() && tail.len() <= 2 * BLOCK {
        // One or two blocks: cheaper one at a time than an 8-wide batch.
        super::soft::xor_blocks(k, t, ctr, tail);
    } else if !tail.is_empty() {
        // Unused lanes compute blocks past the end (wrapping counters); their keystream is discarded.
        let mut buf = [0u8; CHUNK];
        buf[..tail.len()].copy_from_slice(tail);
        xor8(&sk, ctr, &mut buf);
        tail.copy_from_slice(&buf[..tail.len()]);
        zeroize::Zeroize::zeroize(&mut buf);
    }
    for w in sk.iter_mut() {
        zeroize::Zeroize::zeroize(w);
    }
}

/// XORs the CTR keystream of blocks `counter, counter + 1, ...` into `data`.
pub(super) fn xor_blocks(backend: Checked<Backend>, k: &[u64; 9], t: &[u64; 3], counter: u64, data: &mut [u8]) {
    assert!(backend.covers(Backend::Avx512));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU has AVX-512F.
    unsafe { xor_blocks_impl(k, t, counter, data) }
}
