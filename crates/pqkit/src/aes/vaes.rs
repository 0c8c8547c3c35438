//! VAES + VPCLMULQDQ backend on AVX-512 (x86_64): GHASH and stitched GCM, 16 blocks per iteration.
//!
//! Four zmm registers hold 16 blocks. The 16 counter blocks stay in registers (byte-reversed, where inc32 is a
//! 32-bit lane addition that wraps exactly like inc32) and are byte-swapped right before the first round. In
//! the same loop iteration the 16 ciphertext blocks of the previous iteration (seal) or of this one (open) are
//! multiplied by H^16..H^1 (one zmm of powers per register), the products are summed unreduced across all
//! lanes and reduced once per 16 blocks. Tails use AVX-512 byte masks, so no bytes outside the buffer are read
//! or written.
//!
//! Single-block AES (key setup, E(K, J0)) reuses the AES-NI code.
#![allow(unsafe_code)]
#![allow(clippy::needless_range_loop)] // indexed round loops read like the specification

use super::{HTable, RoundKeys, aesni};
use core::arch::x86_64::*;

macro_rules! tf {
    ($($item:item)*) => {
        $(
            #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,avx512f,avx512bw,avx512vl,vaes,vpclmulqdq")]
            $item
        )*
    };
}

tf! {
#[inline]
fn bswap(x: __m512i) -> __m512i {
    let m = _mm512_broadcast_i32x4(_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    _mm512_shuffle_epi8(x, m)
}

#[inline]
fn load_keys(k: &[[u8; 16]; 15]) -> [__m512i; 15] {
    // SAFETY: each element is a 16-byte array; `loadu` has no alignment requirement.
    core::array::from_fn(|i| _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(k[i].as_ptr().cast()) }))
}

#[inline]
fn enc16<const NR: usize>(k: &[__m512i; 15], b: &mut [__m512i; 4]) {
    enc_regs::<NR, 4>(k, b)
}

/// Encrypts the 4 `N` blocks in `b` (N registers of 4 blocks).
#[inline]
fn enc_regs<const NR: usize, const N: usize>(k: &[__m512i; 15], b: &mut [__m512i; N]) {
    for x in b.iter_mut() {
        *x = _mm512_xor_si512(*x, k[0]);
    }
    for r in 1..NR {
        for x in b.iter_mut() {
            *x = _mm512_aesenc_epi128(*x, k[r]);
        }
    }
    for x in b.iter_mut() {
        *x = _mm512_aesenclast_epi128(*x, k[NR]);
    }
}

/// The 16 counter blocks starting at `base` (byte-reversed), byte-swapped for the rounds.
#[inline]
fn counters(base: __m512i, four: __m512i, sixteen: __m512i) -> [__m512i; 4] {
    [
        bswap(base),
        bswap(_mm512_add_epi32(base, four)),
        bswap(_mm512_add_epi32(base, _mm512_add_epi32(four, four))),
        bswap(_mm512_sub_epi32(_mm512_add_epi32(base, sixteen), four)),
    ]
}

/// One stitched iteration: the rounds of the 16 counter blocks in `b`, with the 12 carry-less products of the
/// 16 blocks `x` (Karatsuba, H^16..H^1) spread between the rounds, then one reduction. Returns the new state.
#[inline]
fn enc16_ghash16<const NR: usize>(
    k: &[__m512i; 15],
    h: &([__m512i; 4], [__m512i; 4]),
    b: &mut [__m512i; 4],
    y: __m128i,
    x: &[__m512i; 4],
) -> __m128i {
    let xs = [_mm512_xor_si512(x[0], _mm512_zextsi128_si512(y)), x[1], x[2], x[3]];
    let (mut lo, mut hi, mut mid);
    let z = _mm512_setzero_si512();
    for v in b.iter_mut() {
        *v = _mm512_xor_si512(*v, k[0]);
    }
    let mut acc = [z, z, z];
    macro_rules! round {
        ($($r:literal)*) => {$(
            for v in b.iter_mut() {
                *v = _mm512_aesenc_epi128(*v, k[$r]);
            }
        )*};
    }
    macro_rules! step {
        ($($s:literal)*) => {$( ghash_step(&mut acc, &xs, h, $s); )*};
    }
    // Straight-line schedule: the 12 products spread over the rounds (one per round for AES-256; two per round
    // in the first rounds of AES-128).
    if NR == 14 {
        round!(1);
        step!(0);
        round!(2);
        step!(1);
        round!(3);
        step!(2);
        round!(4);
        step!(3);
        round!(5);
        step!(4);
        round!(6);
        step!(5);
        round!(7);
        step!(6);
        round!(8);
        step!(7);
        round!(9);
        step!(8);
        round!(10);
        step!(9);
        round!(11);
        step!(10);
        round!(12);
        step!(11);
        round!(13);
    } else {
        round!(1);
        step!(0 1);
        round!(2);
        step!(2 3);
        round!(3);
        step!(4 5);
        round!(4);
        step!(6);
        round!(5);
        step!(7);
        round!(6);
        step!(8);
        round!(7);
        step!(9);
        round!(8);
        step!(10);
        round!(9);
        step!(11);
    }
    [lo, hi, mid] = acc;
    for v in b.iter_mut() {
        *v = _mm512_aesenclast_epi128(*v, k[NR]);
    }
    mid = _mm512_ternarylogic_epi64(mid, lo, hi, 0x96);
    lo = _mm512_xor_si512(lo, _mm512_bslli_epi128::<8>(mid));
    hi = _mm512_xor_si512(hi, _mm512_bsrli_epi128::<8>(mid));
    aesni::reduce(hxor(lo), hxor(hi))
}

/// Product `step` (0..12) of a 16-block GHASH: register `step / 3`, and lo, hi or Karatsuba middle.
#[inline]
fn ghash_step(acc: &mut [__m512i; 3], xs: &[__m512i; 4], h: &([__m512i; 4], [__m512i; 4]), step: usize) {
    let j = step / 3;
    match step % 3 {
        0 => acc[0] = _mm512_xor_si512(acc[0], _mm512_clmulepi64_epi128(xs[j], h.0[j], 0x00)),
        1 => acc[1] = _mm512_xor_si512(acc[1], _mm512_clmulepi64_epi128(xs[j], h.0[j], 0x11)),
        _ => {
            let xk = _mm512_xor_si512(xs[j], _mm512_shuffle_epi32(xs[j], _MM_PERM_BADC));
            acc[2] = _mm512_xor_si512(acc[2], _mm512_clmulepi64_epi128(xk, h.1[j], 0x00));
        }
    }
}

/// Horizontal XOR of the four 128-bit lanes.
#[inline]
fn hxor(v: __m512i) -> __m128i {
    let a = _mm256_xor_si256(_mm512_extracti64x4_epi64::<0>(v), _mm512_extracti64x4_epi64::<1>(v));
    _mm_xor_si128(_mm256_extracti128_si256::<0>(a), _mm256_extracti128_si256::<1>(a))
}

/// Sums `x[j] * h[j]` over the registers given, unreduced (Karatsuba: `hk[j]` holds `lo ^ hi` of `h[j]`), then
/// reduces once. `x[0]` lane 0 already has the running state folded in.
#[inline]
fn mul_sum(x: &[__m512i], h: &[__m512i], hk: &[__m512i]) -> __m128i {
    let mut lo = _mm512_setzero_si512();
    let mut hi = _mm512_setzero_si512();
    let mut mid = _mm512_setzero_si512();
    for j in 0..x.len() {
        lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(x[j], h[j], 0x00));
        hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(x[j], h[j], 0x11));
        let xk = _mm512_xor_si512(x[j], _mm512_shuffle_epi32(x[j], _MM_PERM_BADC));
        mid = _mm512_xor_si512(mid, _mm512_clmulepi64_epi128(xk, hk[j], 0x00));
    }
    mid = _mm512_ternarylogic_epi64(mid, lo, hi, 0x96);
    lo = _mm512_xor_si512(lo, _mm512_bslli_epi128::<8>(mid));
    hi = _mm512_xor_si512(hi, _mm512_bsrli_epi128::<8>(mid));
    // The enclosing target features include the AES-NI backend's, so this call is safe.
    aesni::reduce(hxor(lo), hxor(hi))
}

#[inline]
fn load_htab16(htab: &HTable) -> ([__m512i; 4], [__m512i; 4]) {
    // SAFETY: `htab.h` and `htab.k` are 16 u128 = 256 bytes each; register j reads entries 4j..4j+4.
    unsafe {
        (
            core::array::from_fn(|j| _mm512_loadu_si512(htab.h.as_ptr().add(4 * j).cast())),
            core::array::from_fn(|j| _mm512_loadu_si512(htab.k.as_ptr().add(4 * j).cast())),
        )
    }
}

/// GHASH of 16 byte-reversed blocks into `y`.
#[inline]
fn ghash16(h: &([__m512i; 4], [__m512i; 4]), y: __m128i, x: &[__m512i; 4]) -> __m128i {
    let x0 = _mm512_xor_si512(x[0], _mm512_zextsi128_si512(y));
    mul_sum(&[x0, x[1], x[2], x[3]], &h.0, &h.1)
}

/// GHASH of `n` (1..=16) byte-reversed blocks in `x` (blocks past `n` are zero) into `y`.
#[inline]
fn ghash_n(htab: &HTable, y: __m128i, x: &[__m512i; 4], n: usize) -> __m128i {
    debug_assert!((1..=16).contains(&n));
    let regs = n.div_ceil(4);
    let mut h = [_mm512_setzero_si512(); 4];
    let mut hk = [_mm512_setzero_si512(); 4];
    for j in 0..regs {
        let lanes = (n - 4 * j).min(4);
        let k: __mmask8 = ((1u32 << (2 * lanes)) - 1) as u8;
        // SAFETY: block 4j + l uses entry 16 - n + 4j + l; the mask enables only l < lanes, i.e. entries < 16.
        unsafe {
            h[j] = _mm512_maskz_loadu_epi64(k, htab.h.as_ptr().add(16 - n + 4 * j).cast());
            hk[j] = _mm512_maskz_loadu_epi64(k, htab.k.as_ptr().add(16 - n + 4 * j).cast());
        }
    }
    let x0 = _mm512_xor_si512(x[0], _mm512_zextsi128_si512(y));
    let xs = [x0, x[1], x[2], x[3]];
    mul_sum(&xs[..regs], &h[..regs], &hk[..regs])
}

/// Byte mask of register `j` for a tail of `rem` bytes.
#[inline]
fn tail_mask(rem: usize, j: usize) -> __mmask64 {
    if rem >= 64 * (j + 1) {
        !0
    } else if rem > 64 * j {
        (1u64 << (rem - 64 * j)) - 1
    } else {
        0
    }
}

/// Loads a tail of `rem < 256` bytes at `p`, zero-padded, as four registers.
///
/// # Safety
/// `p` must be valid for reading `rem` bytes.
#[inline]
unsafe fn load_tail(p: *const u8, rem: usize) -> [__m512i; 4] {
    let mut x = [_mm512_setzero_si512(); 4];
    for j in 0..4 {
        let m = tail_mask(rem, j);
        if m != 0 {
            // SAFETY: the mask enables only bytes below `rem`, which the caller guarantees are readable, and
            // `p + 64 j` is inside the buffer because `rem > 64 j`.
            x[j] = unsafe { _mm512_maskz_loadu_epi8(m, p.add(64 * j).cast()) };
        }
    }
    x
}

#[inline]
fn ghash_data(h: &([__m512i; 4], [__m512i; 4]), htab: &HTable, mut y: __m128i, data: &[u8]) -> __m128i {
    let mut chunks = data.chunks_exact(256);
    for c in &mut chunks {
        // SAFETY: `c` is 256 bytes.
        let x: [__m512i; 4] = core::array::from_fn(|j| bswap(unsafe { _mm512_loadu_si512(c.as_ptr().add(64 * j).cast()) }));
        y = ghash16(h, y, &x);
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        // SAFETY: `rem` is readable for its length.
        let mut x = unsafe { load_tail(rem.as_ptr(), rem.len()) };
        for v in x.iter_mut() {
            *v = bswap(*v);
        }
        y = ghash_n(htab, y, &x, rem.len().div_ceil(16));
    }
    y
}

fn ghash_impl(htab: &HTable, state: &mut u128, data: &[u8]) {
    // SAFETY: a u128 is 16 readable bytes.
    let y = unsafe { _mm_loadu_si128((state as *const u128).cast()) };
    let h = load_htab16(htab);
    let y = ghash_data(&h, htab, y, data);
    // SAFETY: a u128 is 16 writable bytes.
    unsafe { _mm_storeu_si128((state as *mut u128).cast(), y) };
}

/// The whole of GCM after J0 is known: E(K, J0), GHASH of the AAD, the stitched bulk loop, the lengths block
/// and the tag (for open: the expected tag), in one function so that nothing waits on a call boundary.
fn gcm_full<const NR: usize, const SEAL: bool>(
    keys: &RoundKeys,
    htab: &HTable,
    j0: &[u8; 16],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; 16] {
    let k = load_keys(&keys.enc);
    let h = load_htab16(htab);
    let rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    // SAFETY: `j0` is 16 bytes.
    let j = unsafe { _mm_loadu_si128(j0.as_ptr().cast()) };
    let c0 = _mm_add_epi32(_mm_shuffle_epi8(j, rev), _mm_set_epi32(0, 0, 0, 1));
    let mut y = _mm_setzero_si128();
    if !aad.is_empty() {
        y = ghash_data(&h, htab, y, aad);
    }
    let ek;
    (y, ek) = gcm_core::<NR, SEAL>(&k, &h, htab, j, c0, y, buf);
    let lens = _mm_set_epi64x((aad.len() as u64 * 8) as i64, (buf.len() as u64 * 8) as i64);
    y = aesni::ghash_n(htab, y, &[lens], 1);
    let tag = _mm_xor_si128(_mm_shuffle_epi8(y, rev), ek);
    let mut out = [0u8; 16];
    // SAFETY: `out` is 16 writable bytes.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), tag) };
    out
}

fn gcm_impl<const NR: usize, const SEAL: bool>(
    keys: &RoundKeys,
    htab: &HTable,
    ctr: &[u8; 16],
    state: &mut u128,
    buf: &mut [u8],
) {
    let k = load_keys(&keys.enc);
    let h = load_htab16(htab);
    // SAFETY: `ctr` is 16 bytes and `state` a u128.
    let (c0, y) = unsafe {
        (
            _mm_shuffle_epi8(
                _mm_loadu_si128(ctr.as_ptr().cast()),
                _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            ),
            _mm_loadu_si128((state as *const u128).cast()),
        )
    };
    let (y, _) = gcm_core::<NR, SEAL>(&k, &h, htab, _mm_setzero_si128(), c0, y, buf);
    // SAFETY: a u128 is 16 writable bytes.
    unsafe { _mm_storeu_si128((state as *mut u128).cast(), y) };
}

/// CTR from counter `c0` (byte-reversed) over `buf`, GHASH of the ciphertext into `y`; also returns E(K, `j`)
/// (computed first, so its latency hides behind the bulk work).
#[inline]
fn gcm_core<const NR: usize, const SEAL: bool>(
    k: &[__m512i; 15],
    h: &([__m512i; 4], [__m512i; 4]),
    htab: &HTable,
    j: __m128i,
    c0: __m128i,
    mut y: __m128i,
    buf: &mut [u8],
) -> (__m128i, __m128i) {
    let mut ek = _mm_xor_si128(j, _mm512_castsi512_si128(k[0]));
    for r in 1..NR {
        ek = _mm_aesenc_si128(ek, _mm512_castsi512_si128(k[r]));
    }
    ek = _mm_aesenclast_si128(ek, _mm512_castsi512_si128(k[NR]));
    // Lane l of register j holds counter c0 + 4 j + l.
    let mut base = _mm512_add_epi32(_mm512_broadcast_i32x4(c0), _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0));
    let four = _mm512_broadcast_i32x4(_mm_set_epi32(0, 0, 0, 4));
    let sixteen = _mm512_broadcast_i32x4(_mm_set_epi32(0, 0, 0, 16));
    let len = buf.len();
    let full = len / 256;
    let p = buf.as_mut_ptr();
    let mut prev = [_mm512_setzero_si512(); 4];
    let mut i = 0;
    if SEAL && full > 0 {
        // The first chunk has no previous ciphertext to hash.
        let mut b = counters(base, four, sixteen);
        base = _mm512_add_epi32(base, sixteen);
        enc16::<NR>(k, &mut b);
        for j in 0..4 {
            // SAFETY: chunk 0 spans bytes [0, 256) of `buf`, in bounds since full > 0.
            unsafe {
                let o = _mm512_xor_si512(b[j], _mm512_loadu_si512(p.add(64 * j).cast()));
                _mm512_storeu_si512(p.add(64 * j).cast(), o);
                prev[j] = bswap(o);
            }
        }
        i = 1;
    }
    while i < full {
        let mut b = counters(base, four, sixteen);
        base = _mm512_add_epi32(base, sixteen);
        // SAFETY: chunk i spans bytes [256 i, 256 i + 256) of `buf`, in bounds since i < len / 256.
        let src: [__m512i; 4] = core::array::from_fn(|j| unsafe { _mm512_loadu_si512(p.add(256 * i + 64 * j).cast()) });
        let x = if SEAL { prev } else { core::array::from_fn(|j| bswap(src[j])) };
        y = enc16_ghash16::<NR>(k, h, &mut b, y, &x);
        for j in 0..4 {
            let o = _mm512_xor_si512(b[j], src[j]);
            // SAFETY: same chunk as the loads above.
            unsafe { _mm512_storeu_si512(p.add(256 * i + 64 * j).cast(), o) };
            if SEAL {
                prev[j] = bswap(o);
            }
        }
        i += 1;
    }
    if SEAL && full > 0 {
        y = ghash16(h, y, &prev);
    }
    let rem = len - 256 * full;
    if rem > 0 {
        // SAFETY: the tail starts at byte 256 * full and has `rem` bytes.
        let tp = unsafe { p.add(256 * full) };
        // SAFETY: `tp` is readable for `rem` bytes.
        let src = unsafe { load_tail(tp, rem) };
        let n = rem.div_ceil(16);
        if !SEAL {
            let x: [__m512i; 4] = core::array::from_fn(|j| bswap(src[j]));
            y = ghash_n(htab, y, &x, n);
        }
        let mut b = counters(base, four, sixteen);
        // Only as many registers as the tail needs go through the rounds.
        match n.div_ceil(4) {
            1 => {
                let mut t = [b[0]];
                enc_regs::<NR, 1>(k, &mut t);
                b[0] = t[0];
            }
            2 => {
                let mut t = [b[0], b[1]];
                enc_regs::<NR, 2>(k, &mut t);
                b[..2].copy_from_slice(&t);
            }
            3 => {
                let mut t = [b[0], b[1], b[2]];
                enc_regs::<NR, 3>(k, &mut t);
                b[..3].copy_from_slice(&t);
            }
            _ => enc16::<NR>(k, &mut b),
        }
        let mut ct = [_mm512_setzero_si512(); 4];
        for j in 0..4 {
            let m = tail_mask(rem, j);
            if m != 0 {
                let o = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(b[j], src[j]));
                // SAFETY: the mask enables only bytes below `rem`, inside the tail.
                unsafe { _mm512_mask_storeu_epi8(tp.add(64 * j).cast(), m, o) };
                ct[j] = bswap(o);
            }
        }
        if SEAL {
            y = ghash_n(htab, y, &ct, n);
        }
    }
    (y, ek)
}
}

pub(super) fn seal_full(keys: &RoundKeys, htab: &HTable, j0: &[u8; 16], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
    // SAFETY: the dispatcher selects this backend only when `Backend::Vaes` is available, which includes
    // every feature enabled above.
    unsafe {
        if keys.nr == 10 {
            gcm_full::<10, true>(keys, htab, j0, aad, buf)
        } else {
            gcm_full::<14, true>(keys, htab, j0, aad, buf)
        }
    }
}

pub(super) fn open_full(keys: &RoundKeys, htab: &HTable, j0: &[u8; 16], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
    // SAFETY: as in `seal_full`.
    unsafe {
        if keys.nr == 10 {
            gcm_full::<10, false>(keys, htab, j0, aad, buf)
        } else {
            gcm_full::<14, false>(keys, htab, j0, aad, buf)
        }
    }
}

pub(super) fn ghash(htab: &HTable, state: &mut u128, data: &[u8]) {
    // SAFETY: the dispatcher selects this backend only when `Backend::Vaes` is available, which includes
    // every feature enabled above.
    unsafe { ghash_impl(htab, state, data) }
}

pub(super) fn seal(keys: &RoundKeys, htab: &HTable, ctr: &[u8; 16], state: &mut u128, buf: &mut [u8]) {
    // SAFETY: as in `ghash`.
    unsafe {
        if keys.nr == 10 {
            gcm_impl::<10, true>(keys, htab, ctr, state, buf)
        } else {
            gcm_impl::<14, true>(keys, htab, ctr, state, buf)
        }
    }
}

pub(super) fn open(keys: &RoundKeys, htab: &HTable, ctr: &[u8; 16], state: &mut u128, buf: &mut [u8]) {
    // SAFETY: as in `ghash`.
    unsafe {
        if keys.nr == 10 {
            gcm_impl::<10, false>(keys, htab, ctr, state, buf)
        } else {
            gcm_impl::<14, false>(keys, htab, ctr, state, buf)
        }
    }
}
