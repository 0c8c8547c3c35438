//! SHA-512 of eight messages in the 64-bit lanes of `zmm` registers (AVX-512F): the rounds and the message
//! schedule of FIPS 180-4 section 6.4 on whole lanes, `vprorq` for the rotations and `vpternlogq` for the
//! three-input functions (each Sigma's three-way xor, Ch and Maj).
#![allow(unsafe_code)]

use super::super::soft::K512;
use super::Backend;
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// One block of each of the eight lanes into the states `h` (`h[i][k]`: word `i` of lane `k`); `w[i][k]` is
/// message word `i` of lane `k`'s block. Lanes whose `active` is false keep their state.
pub(super) fn compress8(backend: Checked<Backend>, h: &mut [[u64; 8]; 8], w: &[[u64; 8]; 16], active: &[bool; 8]) {
    assert!(backend.covers(Backend::Avx512));
    let mut mask = 0u8;
    for (k, &a) in active.iter().enumerate() {
        mask |= (a as u8) << k;
    }
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU (and OS) support
    // AVX-512F.
    unsafe { compress(h, w, mask) }
}

/// Three-way xor.
#[inline]
#[target_feature(enable = "avx512f")]
fn xor3(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    _mm512_ternarylogic_epi64::<0x96>(a, b, c)
}

#[target_feature(enable = "avx512f")]
fn compress(h: &mut [[u64; 8]; 8], w: &[[u64; 8]; 16], mask: u8) {
    // SAFETY: every row of `h` and `w` is 64 bytes, read and written unaligned.
    let load = |row: &[u64; 8]| unsafe { _mm512_loadu_si512(row.as_ptr().cast()) };
    let mut x: [__m512i; 16] = core::array::from_fn(|i| load(&w[i]));
    let st: [__m512i; 8] = core::array::from_fn(|i| load(&h[i]));
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = st;
    for r in 0..5 {
        for i in 0..16 {
            let t = 16 * r + i;
            if r > 0 {
                // W[t] = sigma1(W[t-2]) + W[t-7] + sigma0(W[t-15]) + W[t-16], in a ring of sixteen.
                let w2 = x[(i + 14) % 16];
                let w15 = x[(i + 1) % 16];
                let s1 = xor3(_mm512_ror_epi64::<19>(w2), _mm512_ror_epi64::<61>(w2), _mm512_srli_epi64::<6>(w2));
                let s0 = xor3(_mm512_ror_epi64::<1>(w15), _mm512_ror_epi64::<8>(w15), _mm512_srli_epi64::<7>(w15));
                x[i] = _mm512_add_epi64(_mm512_add_epi64(x[i], s0), _mm512_add_epi64(x[(i + 9) % 16], s1));
            }
            let wk = _mm512_add_epi64(x[i], _mm512_set1_epi64(K512[t] as i64));
            // The additions are ordered for short recurrences: h + W + K and d + h + W + K do not depend on this
            // round's e or a, so e' = (d + h + W + K + Ch) + Sigma1(e) and a' = (T1 + Maj) + Sigma0(a) each wait
            // for one addition after their Sigma.
            let hwk = _mm512_add_epi64(hh, wk);
            let dhwk = _mm512_add_epi64(d, hwk);
            let s1 = xor3(_mm512_ror_epi64::<14>(e), _mm512_ror_epi64::<18>(e), _mm512_ror_epi64::<41>(e));
            // Ch(e, f, g) = e ? f : g.
            let ch = _mm512_ternarylogic_epi64::<0xca>(e, f, g);
            let s0 = xor3(_mm512_ror_epi64::<28>(a), _mm512_ror_epi64::<34>(a), _mm512_ror_epi64::<39>(a));
            // Maj(a, b, c): the majority of each bit.
            let maj = _mm512_ternarylogic_epi64::<0xe8>(a, b, c);
            let t1 = _mm512_add_epi64(_mm512_add_epi64(hwk, ch), s1);
            hh = g;
            g = f;
            f = e;
            e = _mm512_add_epi64(_mm512_add_epi64(dhwk, ch), s1);
            d = c;
            c = b;
            b = a;
            a = _mm512_add_epi64(_mm512_add_epi64(t1, maj), s0);
        }
    }
    for (i, v) in [a, b, c, d, e, f, g, hh].into_iter().enumerate() {
        // Finished lanes (mask bit clear) keep their state.
        let sum = _mm512_mask_add_epi64(st[i], mask as __mmask8, st[i], v);
        // SAFETY: row `i` of `h` is 64 bytes, written unaligned.
        unsafe { _mm512_storeu_si512(h[i].as_mut_ptr().cast(), sum) };
    }
}
