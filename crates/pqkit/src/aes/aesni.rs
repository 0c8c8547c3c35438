//! AES-NI + PCLMULQDQ backend (x86_64): single blocks, GHASH and stitched GCM.
//!
//! GCM processes 8 blocks per iteration: the AES rounds of 8 counter blocks and the carry-less products of
//! 8 ciphertext blocks with H^8..H^1 are independent work in one loop body, and the 8 products are summed
//! unreduced and reduced once. Counter blocks live in registers in byte-reversed form, where GCM's inc32 is a
//! 32-bit lane addition (wrapping exactly like inc32), and are byte-swapped just before the first round.
#![allow(unsafe_code)]
#![allow(clippy::needless_range_loop)] // indexed round loops read like the specification

use super::{Backend, HTable, InOut, J0, RoundKeys};
use crate::ct::wipe;
use crate::dispatch::Checked;
use core::arch::x86_64::*;
use zeroize::Zeroize;

#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn bswap(x: __m128i) -> __m128i {
    _mm_shuffle_epi8(x, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
}

/// J0 in a register: for a 96-bit nonce, its first 8 and last 4 bytes loaded as they are (no 16-byte reload of a
/// block just written in pieces) and 0x00000001 inserted as the last word.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
pub(super) fn load_j0(j0: &J0<'_>) -> __m128i {
    match j0 {
        J0::Nonce(n) => {
            // SAFETY: `n` is 12 readable bytes; `loadl` reads the first 8 with no alignment requirement.
            let lo = unsafe { _mm_loadl_epi64(n.as_ptr().cast()) };
            let w = u32::from_ne_bytes([n[8], n[9], n[10], n[11]]);
            // Little-endian lanes: word 2 is bytes 8..12, word 3 bytes 12..16 = 00 00 00 01.
            _mm_insert_epi32::<3>(_mm_insert_epi32::<2>(lo, w as i32), 0x0100_0000)
        }
        // SAFETY: `b` is 16 readable bytes; `loadu` has no alignment requirement.
        J0::Block(b) => unsafe { _mm_loadu_si128(b.as_ptr().cast()) },
    }
}

#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn load_keys(k: &[[u8; 16]; 15]) -> [__m128i; 15] {
    // SAFETY: each element is a 16-byte array; `loadu` has no alignment requirement.
    core::array::from_fn(|i| unsafe { _mm_loadu_si128(k[i].as_ptr().cast()) })
}

#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn enc1<const NR: usize>(k: &[__m128i; 15], b: __m128i) -> __m128i {
    let mut x = _mm_xor_si128(b, k[0]);
    for r in 1..NR {
        x = _mm_aesenc_si128(x, k[r]);
    }
    _mm_aesenclast_si128(x, k[NR])
}

#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn enc8<const NR: usize>(k: &[__m128i; 15], b: &mut [__m128i; 8]) {
    enc_first::<NR, 8>(k, b)
}

/// Encrypts the first `N` blocks of `b` (a tail needs only as many as it has).
#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn enc_first<const NR: usize, const N: usize>(k: &[__m128i; 15], b: &mut [__m128i; 8]) {
    for x in b[..N].iter_mut() {
        *x = _mm_xor_si128(*x, k[0]);
    }
    for r in 1..NR {
        for x in b[..N].iter_mut() {
            *x = _mm_aesenc_si128(*x, k[r]);
        }
    }
    for x in b[..N].iter_mut() {
        *x = _mm_aesenclast_si128(*x, k[NR]);
    }
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn encrypt_block_impl(keys: &RoundKeys, block: &mut [u8; 16]) {
    let k = load_keys(&keys.enc);
    // SAFETY: `block` is 16 readable and writable bytes.
    let b = unsafe { _mm_loadu_si128(block.as_ptr().cast()) };
    let x = if keys.nr == 10 { enc1::<10>(&k, b) } else { enc1::<14>(&k, b) };
    // SAFETY: as above.
    unsafe { _mm_storeu_si128(block.as_mut_ptr().cast(), x) };
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn decrypt_block_impl(keys: &RoundKeys, block: &mut [u8; 16]) {
    let k = load_keys(&keys.dec);
    // SAFETY: `block` is 16 readable and writable bytes.
    let mut x = unsafe { _mm_loadu_si128(block.as_ptr().cast()) };
    x = _mm_xor_si128(x, k[0]);
    for r in 1..keys.nr {
        x = _mm_aesdec_si128(x, k[r]);
    }
    x = _mm_aesdeclast_si128(x, k[keys.nr]);
    // SAFETY: as above.
    unsafe { _mm_storeu_si128(block.as_mut_ptr().cast(), x) };
}

/// Encrypts one block. Also serves the VAES backend, whose features include these.
pub(super) fn encrypt_block(backend: Checked<Backend>, keys: &RoundKeys, block: &mut [u8; 16]) {
    assert!(backend.covers(Backend::AesNi));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::AesNi, so the CPU has AES, PCLMULQDQ,
    // SSSE3 and SSE4.1, every feature enabled in this file.
    unsafe { encrypt_block_impl(keys, block) }
}

/// Decrypts one block. Also serves the VAES backend, whose features include these.
pub(super) fn decrypt_block(backend: Checked<Backend>, keys: &RoundKeys, block: &mut [u8; 16]) {
    assert!(backend.covers(Backend::AesNi));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::AesNi, so the CPU has AES, PCLMULQDQ,
    // SSSE3 and SSE4.1, every feature enabled in this file.
    unsafe { decrypt_block_impl(keys, block) }
}

// --- Key setup --------------------------------------------------------------------------------------------------

/// FIPS 197 key expansion with AES-NI: `SubWord` is `aesenclast` of the word broadcast to all four columns (its
/// ShiftRows then only moves equal bytes, and the zero round key adds nothing), and the equivalent inverse
/// cipher's round keys come from `aesimc`. Writes `enc` and `dec` for rounds 0..=nr and returns nr. The same
/// schedule as the portable expansion (tested against it); no table, no secret-dependent branch.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn expand_impl(key: &[u8], enc: &mut [[u8; 16]; 15], dec: &mut [[u8; 16]; 15]) -> usize {
    let nk = key.len() / 4;
    let nr = nk + 6;
    let sub = |w: u32| -> u32 {
        _mm_cvtsi128_si32(_mm_aesenclast_si128(_mm_set1_epi32(w as i32), _mm_setzero_si128())) as u32
    };
    let mut w = [0u32; 60];
    for (i, c) in key.chunks_exact(4).enumerate() {
        w[i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    let mut rcon = 1u32;
    for i in nk..4 * (nr + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            // RotWord on little-endian words, SubWord, then Rcon into the first byte.
            t = sub(t.rotate_right(8)) ^ rcon;
            rcon = ((rcon << 1) & 0xff) ^ (0x1b & 0u32.wrapping_sub(rcon >> 7));
        } else if nk > 6 && i % nk == 4 {
            t = sub(t);
        }
        w[i] = w[i - nk] ^ t;
    }
    for r in 0..=nr {
        for c in 0..4 {
            enc[r][4 * c..4 * c + 4].copy_from_slice(&w[4 * r + c].to_le_bytes());
        }
    }
    w.zeroize();
    // SAFETY: every round key is 16 readable and writable bytes.
    unsafe {
        dec[0] = enc[nr];
        dec[nr] = enc[0];
        for r in 1..nr {
            let k = _mm_aesimc_si128(_mm_loadu_si128(enc[nr - r].as_ptr().cast()));
            _mm_storeu_si128(dec[r].as_mut_ptr().cast(), k);
        }
    }
    nr
}

/// [`expand_impl`] for a backend with AES-NI.
pub(super) fn expand(
    backend: Checked<Backend>,
    key: &[u8],
    enc: &mut [[u8; 16]; 15],
    dec: &mut [[u8; 16]; 15],
) -> usize {
    assert!(backend.covers(Backend::AesNi));
    assert!(key.len() == 16 || key.len() == 32);
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::AesNi, so the CPU has AES, PCLMULQDQ,
    // SSSE3 and SSE4.1, every feature enabled in this file.
    unsafe { expand_impl(key, enc, dec) }
}

/// `a * b * x` in GCM's field on PCLMULQDQ: the same product and reduction as `ghash_soft::mul`.
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn mul_impl(a: u128, b: u128) -> u128 {
    // SAFETY: a u128 is 16 readable bytes.
    let (x, h) = unsafe { (_mm_loadu_si128((&a as *const u128).cast()), _mm_loadu_si128((&b as *const u128).cast())) };
    let mut acc = acc_new();
    acc_mul(&mut acc, x, h);
    let lo = _mm_xor_si128(acc.lo, _mm_slli_si128(acc.mid, 8));
    let hi = _mm_xor_si128(acc.hi, _mm_srli_si128(acc.mid, 8));
    let y = reduce(lo, hi);
    let mut out = 0u128;
    // SAFETY: a u128 is 16 writable bytes.
    unsafe { _mm_storeu_si128((&mut out as *mut u128).cast(), y) };
    out
}

/// The table of powers of H (`ghash_soft::powers`'s layout) with PCLMULQDQ products.
pub(super) fn powers(backend: Checked<Backend>, h: u128) -> [u128; 16] {
    assert!(backend.covers(Backend::AesNi));
    // SAFETY: as in `expand`.
    super::ghash_soft::powers_with(h, |a, b| unsafe { mul_impl(a, b) })
}

// --- GHASH ------------------------------------------------------------------------------------------------------

/// Accumulator of unreduced products.
#[derive(Clone, Copy)]
pub(super) struct Acc {
    lo: __m128i,
    mid: __m128i,
    hi: __m128i,
}

#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn acc_new() -> Acc {
    Acc { lo: _mm_setzero_si128(), mid: _mm_setzero_si128(), hi: _mm_setzero_si128() }
}

#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn acc_mul(a: &mut Acc, x: __m128i, h: __m128i) {
    a.lo = _mm_xor_si128(a.lo, _mm_clmulepi64_si128(x, h, 0x00));
    a.hi = _mm_xor_si128(a.hi, _mm_clmulepi64_si128(x, h, 0x11));
    a.mid = _mm_xor_si128(a.mid, _mm_clmulepi64_si128(x, h, 0x01));
    a.mid = _mm_xor_si128(a.mid, _mm_clmulepi64_si128(x, h, 0x10));
}

/// Reduces the 256-bit `hi:lo` modulo the GCM polynomial (same steps as `ghash_soft::reduce`).
#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
pub(super) fn reduce(lo: __m128i, hi: __m128i) -> __m128i {
    let p = _mm_set_epi64x(0xc200_0000_0000_0000u64 as i64, 1);
    let t = _mm_clmulepi64_si128(lo, p, 0x10);
    let lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);
    let t = _mm_clmulepi64_si128(lo, p, 0x10);
    let lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), t);
    _mm_xor_si128(hi, lo)
}

#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn acc_reduce(a: &Acc) -> __m128i {
    let lo = _mm_xor_si128(a.lo, _mm_slli_si128(a.mid, 8));
    let hi = _mm_xor_si128(a.hi, _mm_srli_si128(a.mid, 8));
    reduce(lo, hi)
}

#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn load_h(htab: &HTable, i: usize) -> __m128i {
    // SAFETY: `i < 16`, checked by the slice index; u128 is 16 bytes.
    unsafe { _mm_loadu_si128((&htab.h[i] as *const u128).cast()) }
}

#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn load_state(s: &u128) -> __m128i {
    // SAFETY: a u128 is 16 readable bytes.
    unsafe { _mm_loadu_si128((s as *const u128).cast()) }
}

#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn store_state(s: &mut u128, v: __m128i) {
    // SAFETY: a u128 is 16 writable bytes.
    unsafe { _mm_storeu_si128((s as *mut u128).cast(), v) }
}

/// GHASH of `n <= 8` byte-reversed blocks `x[..n]` into `y` with one reduction.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
pub(super) fn ghash_n(htab: &HTable, y: __m128i, x: &[__m128i], n: usize) -> __m128i {
    let mut a = acc_new();
    for j in 0..n {
        let xj = if j == 0 { _mm_xor_si128(x[0], y) } else { x[j] };
        acc_mul(&mut a, xj, load_h(htab, 16 - n + j));
    }
    acc_reduce(&a)
}

/// GHASH of `data` into `y`: 8 blocks and one reduction per 128 bytes; the rest through a wiped stack block.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn ghash_data(htab: &HTable, mut y: __m128i, data: &[u8]) -> __m128i {
    let mut chunks = data.chunks_exact(128);
    for c in &mut chunks {
        // SAFETY: `c` is 128 bytes; block j is at offset 16 j.
        let x: [__m128i; 8] =
            core::array::from_fn(|j| bswap(unsafe { _mm_loadu_si128(c.as_ptr().add(16 * j).cast()) }));
        y = ghash_n(htab, y, &x, 8);
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        let mut buf = [0u8; 128];
        buf[..rem.len()].copy_from_slice(rem);
        let n = rem.len().div_ceil(16);
        // SAFETY: `buf` is 128 bytes.
        let x: [__m128i; 8] =
            core::array::from_fn(|j| bswap(unsafe { _mm_loadu_si128(buf.as_ptr().add(16 * j).cast()) }));
        y = ghash_n(htab, y, &x, n);
        wipe(&mut buf);
    }
    y
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn ghash_impl(htab: &HTable, state: &mut u128, data: &[u8]) {
    let y = ghash_data(htab, load_state(state), data);
    store_state(state, y);
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn ghash_block_impl(htab: &HTable, state: &mut u128, block: &[u8; 16]) {
    // SAFETY: `block` is 16 bytes.
    let x = bswap(unsafe { _mm_loadu_si128(block.as_ptr().cast()) });
    let y = ghash_n(htab, load_state(state), &[x], 1);
    store_state(state, y);
}

/// Absorbs one block into the GHASH state. Also serves the VAES backend, whose features include these.
pub(super) fn ghash_block(backend: Checked<Backend>, htab: &HTable, state: &mut u128, block: &[u8; 16]) {
    assert!(backend.covers(Backend::AesNi));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::AesNi, so the CPU has AES, PCLMULQDQ,
    // SSSE3 and SSE4.1, every feature enabled in this file.
    unsafe { ghash_block_impl(htab, state, block) }
}

// --- GCM ------------------------------------------------------------------------------------------------------

/// Encrypts (`SEAL`) or decrypts the `len` bytes at `src` into `dst` in CTR mode from the byte-reversed counter
/// `c` and absorbs the ciphertext into the GHASH state `y`, which it returns. Every chunk is read from `src`
/// before its output is written, so `src == dst` (in place) is the same code.
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `len` bytes; they are equal or do not overlap.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
unsafe fn gcm_core<const NR: usize, const SEAL: bool>(
    k: &[__m128i; 15],
    htab: &HTable,
    mut c: __m128i,
    mut y: __m128i,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) -> __m128i {
    let one = _mm_set_epi32(0, 0, 0, 1);
    let full = len / 128;
    // Ciphertext of the previous chunk, still to be hashed (seal only).
    let mut prev = [_mm_setzero_si128(); 8];
    for i in 0..full {
        let mut b = [_mm_setzero_si128(); 8];
        for x in b.iter_mut() {
            *x = bswap(c);
            c = _mm_add_epi32(c, one);
        }
        // SAFETY: chunk i spans bytes [128 i, 128 i + 128) of the input, in bounds since i < len / 128.
        let inp: [__m128i; 8] = core::array::from_fn(|j| unsafe { _mm_loadu_si128(src.add(128 * i + 16 * j).cast()) });
        if SEAL {
            if i > 0 {
                y = ghash_n(htab, y, &prev, 8);
            }
        } else {
            let x: [__m128i; 8] = core::array::from_fn(|j| bswap(inp[j]));
            y = ghash_n(htab, y, &x, 8);
        }
        enc8::<NR>(k, &mut b);
        for j in 0..8 {
            let o = _mm_xor_si128(b[j], inp[j]);
            // SAFETY: the same chunk of the output, `len` bytes like the input.
            unsafe { _mm_storeu_si128(dst.add(128 * i + 16 * j).cast(), o) };
            if SEAL {
                prev[j] = bswap(o);
            }
        }
    }
    if SEAL && full > 0 {
        y = ghash_n(htab, y, &prev, 8);
    }
    let rem = len - 128 * full;
    if rem > 0 {
        let mut t = [0u8; 128];
        // SAFETY: the input's last `rem` bytes start at 128 full; `t` has room for rem < 128 bytes.
        unsafe { core::ptr::copy_nonoverlapping(src.add(128 * full), t.as_mut_ptr(), rem) };
        let n = rem.div_ceil(16);
        let tp = t.as_mut_ptr();
        if !SEAL {
            // SAFETY: `t` is 128 bytes.
            let x: [__m128i; 8] = core::array::from_fn(|j| bswap(unsafe { _mm_loadu_si128(tp.add(16 * j).cast()) }));
            y = ghash_n(htab, y, &x, n);
        }
        let mut b = [_mm_setzero_si128(); 8];
        for x in b.iter_mut() {
            *x = bswap(c);
            c = _mm_add_epi32(c, one);
        }
        match n {
            1 => enc_first::<NR, 1>(k, &mut b),
            2 => enc_first::<NR, 2>(k, &mut b),
            3 | 4 => enc_first::<NR, 4>(k, &mut b),
            _ => enc8::<NR>(k, &mut b),
        }
        for (j, kb) in b.iter().enumerate() {
            // SAFETY: `t` is 128 bytes.
            unsafe {
                let v = _mm_loadu_si128(tp.add(16 * j).cast());
                _mm_storeu_si128(tp.add(16 * j).cast(), _mm_xor_si128(v, *kb));
            }
        }
        // SAFETY: the output's last `rem` bytes start at 128 full; `t` holds rem bytes.
        unsafe { core::ptr::copy_nonoverlapping(t.as_ptr(), dst.add(128 * full), rem) };
        if SEAL {
            t[rem..].fill(0);
            // SAFETY: `t` is 128 bytes.
            let x: [__m128i; 8] = core::array::from_fn(|j| bswap(unsafe { _mm_loadu_si128(tp.add(16 * j).cast()) }));
            y = ghash_n(htab, y, &x, n);
        }
        wipe(&mut t);
    }
    y
}

#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn gcm_impl<const NR: usize, const SEAL: bool>(
    keys: &RoundKeys,
    htab: &HTable,
    ctr: &[u8; 16],
    state: &mut u128,
    buf: &mut InOut<'_>,
) {
    let k = load_keys(&keys.enc);
    // SAFETY: `ctr` is 16 bytes.
    let c = bswap(unsafe { _mm_loadu_si128(ctr.as_ptr().cast()) });
    let len = buf.len();
    let (src, dst) = buf.ptrs();
    // SAFETY: `InOut::ptrs` gives an input readable and an output writable for `len` bytes, equal or disjoint.
    let y = unsafe { gcm_core::<NR, SEAL>(&k, htab, c, load_state(state), src, dst, len) };
    store_state(state, y);
}

/// The whole of GCM after J0 is known, in one function (no call boundary, the round keys loaded once): E(K, J0),
/// GHASH of the AAD, the stitched bulk, the lengths block and the tag (for open: the expected tag).
#[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1")]
fn gcm_full<const NR: usize, const SEAL: bool>(
    keys: &RoundKeys,
    htab: &HTable,
    j0: &J0<'_>,
    aad: &[u8],
    mut buf: InOut<'_>,
) -> [u8; 16] {
    let k = load_keys(&keys.enc);
    let j = load_j0(j0);
    // Independent of the bulk work, so its latency hides behind it.
    let ek = enc1::<NR>(&k, j);
    let c = _mm_add_epi32(bswap(j), _mm_set_epi32(0, 0, 0, 1));
    let mut y = _mm_setzero_si128();
    if !aad.is_empty() {
        y = ghash_data(htab, y, aad);
    }
    let len = buf.len();
    let (src, dst) = buf.ptrs();
    // SAFETY: `InOut::ptrs` gives an input readable and an output writable for `len` bytes, equal or disjoint.
    y = unsafe { gcm_core::<NR, SEAL>(&k, htab, c, y, src, dst, len) };
    let lens = _mm_set_epi64x((aad.len() as u64 * 8) as i64, (len as u64 * 8) as i64);
    y = ghash_n(htab, y, &[lens], 1);
    let tag = _mm_xor_si128(bswap(y), ek);
    let mut out = [0u8; 16];
    // SAFETY: `out` is 16 writable bytes.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), tag) };
    out
}

gcm_entry_points!(Backend::AesNi);
