//! BLAKE2s with AVX-512 VL, row-vectorized like the AVX2 backend, with two changes that cut the instruction
//! count: every rotation is one `vprord`, and the message words of each G step are picked from the block by
//! one `vpermt2d` with precomputed indexes instead of being assembled from scalars. Only `xmm`/`ymm`
//! registers are used: 512-bit instructions switch off one vector port on current Intel cores.
//!
//! BLAKE2b has no AVX-512 code: the same two changes (`vprorq`, `vpermt2q` + blend message loading) measured
//! about 5% *slower* than the AVX2 code on the development machine (Sapphire Rapids), whose byte-shuffle
//! rotations are as cheap, so [`Backend::Avx512`](super::Backend::Avx512) runs the AVX2 BLAKE2b.
#![allow(unsafe_code)]

use super::{Backend, IV_S, SIGMA};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// For round r (mod 10) and step j (0: column x, 1: column y, 2: diagonal x, 3: diagonal y): the indexes
/// of the four message words, i.e. SIGMA[r][2i + (j & 1) + 8 * (j >> 1)] for lanes i = 0..4 (lanes 4..8 unused).
const fn message_index() -> [[u64; 8]; 40] {
    let mut out = [[0u64; 8]; 40];
    let mut r = 0;
    while r < 10 {
        let mut j = 0;
        while j < 4 {
            let mut i = 0;
            while i < 4 {
                out[4 * r + j][i] = SIGMA[r][2 * i + (j & 1) + 8 * (j >> 1)] as u64;
                i += 1;
            }
            j += 1;
        }
        r += 1;
    }
    out
}
const MSG_INDEX: [[u64; 8]; 40] = message_index();

/// The same for BLAKE2s, as 32-bit indexes into the 16 message words held in two `ymm`.
const fn message_index_s() -> [[u32; 8]; 40] {
    let mut out = [[0u32; 8]; 40];
    let mut k = 0;
    while k < 40 {
        let mut i = 0;
        while i < 4 {
            out[k][i] = MSG_INDEX[k][i] as u32;
            i += 1;
        }
        k += 1;
    }
    out
}
const MSG_INDEX_S: [[u32; 8]; 40] = message_index_s();

#[target_feature(enable = "avx2,avx512f,avx512vl")]
fn compress_s_avx512(h: &mut [u32; 8], block: &[u8], t: u128, last: bool) {
    debug_assert_eq!(block.len(), 64);
    // SAFETY: `block` is 64 readable bytes, `h` and IV_S 32 bytes each; loadu needs no alignment.
    let (mlo, mhi, h0, h1, iv0, iv1) = unsafe {
        (
            _mm256_loadu_si256(block.as_ptr().cast()),
            _mm256_loadu_si256(block.as_ptr().add(32).cast()),
            _mm_loadu_si128(h.as_ptr().cast()),
            _mm_loadu_si128(h.as_ptr().add(4).cast()),
            _mm_loadu_si128(IV_S.as_ptr().cast()),
            _mm_loadu_si128(IV_S.as_ptr().add(4).cast()),
        )
    };
    let mut a = h0;
    let mut b = h1;
    let mut c = iv0;
    let fin = if last { -1i32 } else { 0 };
    let mut d = _mm_xor_si128(iv1, _mm_set_epi32(0, fin, (t >> 32) as i32, t as i32));

    let msg = |k: usize| {
        // SAFETY: k < 40, so MSG_INDEX_S[k] is 32 readable bytes.
        let idx = unsafe { _mm256_loadu_si256(MSG_INDEX_S[k].as_ptr().cast()) };
        _mm256_castsi256_si128(_mm256_permutex2var_epi32(mlo, idx, mhi))
    };
    macro_rules! g {
        ($x:expr, $y:expr) => {{
            a = _mm_add_epi32(_mm_add_epi32(a, $x), b);
            d = _mm_ror_epi32::<16>(_mm_xor_si128(d, a));
            c = _mm_add_epi32(c, d);
            b = _mm_ror_epi32::<12>(_mm_xor_si128(b, c));
            a = _mm_add_epi32(_mm_add_epi32(a, $y), b);
            d = _mm_ror_epi32::<8>(_mm_xor_si128(d, a));
            c = _mm_add_epi32(c, d);
            b = _mm_ror_epi32::<7>(_mm_xor_si128(b, c));
        }};
    }
    for r in 0..10 {
        let k = 4 * r;
        g!(msg(k), msg(k + 1));
        b = _mm_shuffle_epi32::<0x39>(b);
        c = _mm_shuffle_epi32::<0x4e>(c);
        d = _mm_shuffle_epi32::<0x93>(d);
        g!(msg(k + 2), msg(k + 3));
        b = _mm_shuffle_epi32::<0x93>(b);
        c = _mm_shuffle_epi32::<0x4e>(c);
        d = _mm_shuffle_epi32::<0x39>(d);
    }
    let n0 = _mm_xor_si128(h0, _mm_xor_si128(a, c));
    let n1 = _mm_xor_si128(h1, _mm_xor_si128(b, d));
    // SAFETY: `h` is 32 writable bytes; storeu needs no alignment.
    unsafe {
        _mm_storeu_si128(h.as_mut_ptr().cast(), n0);
        _mm_storeu_si128(h.as_mut_ptr().add(4).cast(), n1);
    }
}

/// BLAKE2s compression, for [`Backend::Avx512`].
#[inline]
pub(super) fn compress_s(backend: Checked<Backend>, h: &mut [u32; 8], block: &[u8], t: u128, last: bool) {
    assert!(backend.covers(Backend::Avx512));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU (and OS) support
    // AVX2, AVX-512F and AVX-512VL.
    unsafe { compress_s_avx512(h, block, t, last) }
}
