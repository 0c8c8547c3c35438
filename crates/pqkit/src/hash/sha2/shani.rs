//! SHA-256 with the x86 SHA extensions (`sha256rnds2`, `sha256msg1`, `sha256msg2`).
//!
//! The state lives in two registers in the order the instructions want: `ABEF` and `CDGH` (high to low).
//! Each `sha256rnds2` runs two rounds, so a group of four message words takes two of them.
#![allow(unsafe_code)]

use super::Backend;
use super::soft::K256;
use crate::dispatch::Checked;
use core::arch::x86_64::*;

#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn compress(h: &mut [u32; 8], blocks: &[u8]) {
    let bswap = _mm_set_epi64x(0x0c0d_0e0f_0809_0a0b, 0x0405_0607_0001_0203);
    // SAFETY: `h` is 32 readable bytes; loadu has no alignment requirement.
    let (dcba, hgfe) = unsafe { (_mm_loadu_si128(h.as_ptr().cast()), _mm_loadu_si128(h.as_ptr().add(4).cast())) };
    let cdab = _mm_shuffle_epi32::<0xb1>(dcba);
    let efgh = _mm_shuffle_epi32::<0x1b>(hgfe);
    let mut abef = _mm_alignr_epi8::<8>(cdab, efgh);
    let mut cdgh = _mm_blend_epi16::<0xf0>(efgh, cdab);

    let k = |i: usize| {
        // SAFETY: i <= 60, so K256[i..i + 4] is in bounds; loadu has no alignment requirement.
        unsafe { _mm_loadu_si128(K256.as_ptr().add(i).cast()) }
    };

    for block in blocks.chunks_exact(64) {
        let (abef0, cdgh0) = (abef, cdgh);
        // SAFETY: `block` is 64 readable bytes.
        // SAFETY (all four loads): `block` is 64 readable bytes; loadu has no alignment requirement.
        let ld = |i: usize| unsafe { _mm_shuffle_epi8(_mm_loadu_si128(block.as_ptr().add(16 * i).cast()), bswap) };
        let (mut m0, mut m1, mut m2, mut m3) = (ld(0), ld(1), ld(2), ld(3));
        // Four rounds on `wk` = W + K for four message words.
        macro_rules! four_rounds {
            ($wk:expr) => {{
                let wk = $wk;
                cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
                // After two rounds the old ABEF is the new CDGH: pass it as such.
                abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32::<0x0e>(wk));
                // Now `abef` is four rounds on and `cdgh` (two rounds on) is its CDGH.
            }};
        }
        // W[4t..4t+4] from the previous 16 words (a = W[t-4 group] .. d = W[t-1 group]): the sigma0 terms
        // (msg1), W[j-7] (alignr), then the sigma1 terms (msg2). The result replaces `a`.
        macro_rules! schedule_rounds {
            ($a:ident, $b:ident, $c:ident, $d:ident, $t:expr) => {{
                let x = _mm_add_epi32(_mm_sha256msg1_epu32($a, $b), _mm_alignr_epi8::<4>($d, $c));
                $a = _mm_sha256msg2_epu32(x, $d);
                four_rounds!(_mm_add_epi32($a, k(4 * $t)));
            }};
        }
        four_rounds!(_mm_add_epi32(m0, k(0)));
        four_rounds!(_mm_add_epi32(m1, k(4)));
        four_rounds!(_mm_add_epi32(m2, k(8)));
        four_rounds!(_mm_add_epi32(m3, k(12)));
        schedule_rounds!(m0, m1, m2, m3, 4);
        schedule_rounds!(m1, m2, m3, m0, 5);
        schedule_rounds!(m2, m3, m0, m1, 6);
        schedule_rounds!(m3, m0, m1, m2, 7);
        schedule_rounds!(m0, m1, m2, m3, 8);
        schedule_rounds!(m1, m2, m3, m0, 9);
        schedule_rounds!(m2, m3, m0, m1, 10);
        schedule_rounds!(m3, m0, m1, m2, 11);
        schedule_rounds!(m0, m1, m2, m3, 12);
        schedule_rounds!(m1, m2, m3, m0, 13);
        schedule_rounds!(m2, m3, m0, m1, 14);
        schedule_rounds!(m3, m0, m1, m2, 15);
        abef = _mm_add_epi32(abef, abef0);
        cdgh = _mm_add_epi32(cdgh, cdgh0);
    }

    let feba = _mm_shuffle_epi32::<0x1b>(abef);
    let dchg = _mm_shuffle_epi32::<0xb1>(cdgh);
    let dcba = _mm_blend_epi16::<0xf0>(feba, dchg);
    let hgfe = _mm_alignr_epi8::<8>(dchg, feba);
    // SAFETY: `h` is 32 writable bytes; storeu has no alignment requirement.
    unsafe {
        _mm_storeu_si128(h.as_mut_ptr().cast(), dcba);
        _mm_storeu_si128(h.as_mut_ptr().add(4).cast(), hgfe);
    }
}

/// SHA-256 compression of every 64-byte block, for [`Backend::ShaNi`], [`Backend::ShaNiZen5`] and
/// [`Backend::ShaNiAvx512`].
pub(super) fn compress256(backend: Checked<Backend>, h: &mut [u32; 8], blocks: &[u8]) {
    assert!(backend.covers(Backend::ShaNi));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::ShaNi, so the CPU has the SHA
    // extensions, SSE2, SSSE3 and SSE4.1.
    unsafe { compress(h, blocks) }
}
