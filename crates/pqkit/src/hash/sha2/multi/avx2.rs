//! SHA-512 of four messages in the 64-bit lanes of `ymm` registers (AVX2): the rounds and the message schedule
//! of FIPS 180-4 section 6.4 on whole lanes, each rotation two shifts and an or.
#![allow(unsafe_code)]

use super::super::soft::K512;
use super::Backend;
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// One block of each of the four lanes into the states `h` (`h[i][k]`: word `i` of lane `k`); `w[i][k]` is
/// message word `i` of lane `k`'s block. Lanes whose `active` is false keep their state.
pub(super) fn compress4(backend: Checked<Backend>, h: &mut [[u64; 4]; 8], w: &[[u64; 4]; 16], active: &[bool; 4]) {
    assert!(backend.covers(Backend::Avx2));
    let mask = active.map(|a| 0u64.wrapping_sub(a as u64));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU (and OS) support AVX2.
    unsafe { compress(h, w, &mask) }
}

/// `x` rotated right by `$n` bits in each lane.
macro_rules! ror {
    ($x:expr, $n:literal) => {{
        let x = $x;
        _mm256_or_si256(_mm256_srli_epi64::<$n>(x), _mm256_slli_epi64::<{ 64 - $n }>(x))
    }};
}

/// Three-way xor.
#[inline]
#[target_feature(enable = "avx2")]
fn xor3(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
    _mm256_xor_si256(_mm256_xor_si256(a, b), c)
}

#[target_feature(enable = "avx2")]
fn compress(h: &mut [[u64; 4]; 8], w: &[[u64; 4]; 16], mask: &[u64; 4]) {
    // SAFETY: every row of `h` and `w`, and `mask`, is 32 bytes, read unaligned.
    let load = |row: &[u64; 4]| unsafe { _mm256_loadu_si256(row.as_ptr().cast()) };
    let mut x: [__m256i; 16] = core::array::from_fn(|i| load(&w[i]));
    let st: [__m256i; 8] = core::array::from_fn(|i| load(&h[i]));
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = st;
    for r in 0..5 {
        for i in 0..16 {
            let t = 16 * r + i;
            if r > 0 {
                // W[t] = sigma1(W[t-2]) + W[t-7] + sigma0(W[t-15]) + W[t-16], in a ring of sixteen.
                let w2 = x[(i + 14) % 16];
                let w15 = x[(i + 1) % 16];
                let s1 = xor3(ror!(w2, 19), ror!(w2, 61), _mm256_srli_epi64::<6>(w2));
                let s0 = xor3(ror!(w15, 1), ror!(w15, 8), _mm256_srli_epi64::<7>(w15));
                x[i] = _mm256_add_epi64(_mm256_add_epi64(x[i], s0), _mm256_add_epi64(x[(i + 9) % 16], s1));
            }
            let wk = _mm256_add_epi64(x[i], _mm256_set1_epi64x(K512[t] as i64));
            // The additions are ordered for short recurrences: h + W + K and d + h + W + K do not depend on this
            // round's e or a, so e' = (d + h + W + K + Ch) + Sigma1(e) and a' = (T1 + Maj) + Sigma0(a) each wait
            // for one addition after their Sigma.
            let hwk = _mm256_add_epi64(hh, wk);
            let dhwk = _mm256_add_epi64(d, hwk);
            let s1 = xor3(ror!(e, 14), ror!(e, 18), ror!(e, 41));
            // Ch(e, f, g) = (e & f) ^ (!e & g).
            let ch = _mm256_xor_si256(_mm256_and_si256(e, f), _mm256_andnot_si256(e, g));
            let s0 = xor3(ror!(a, 28), ror!(a, 34), ror!(a, 39));
            // Maj(a, b, c) = ((a ^ b) & c) ^ (a & b).
            let maj = _mm256_xor_si256(_mm256_and_si256(_mm256_xor_si256(a, b), c), _mm256_and_si256(a, b));
            let t1 = _mm256_add_epi64(_mm256_add_epi64(hwk, ch), s1);
            hh = g;
            g = f;
            f = e;
            e = _mm256_add_epi64(_mm256_add_epi64(dhwk, ch), s1);
            d = c;
            c = b;
            b = a;
            a = _mm256_add_epi64(_mm256_add_epi64(t1, maj), s0);
        }
    }
    let m = load(mask);
    for (i, v) in [a, b, c, d, e, f, g, hh].into_iter().enumerate() {
        // Finished lanes (mask word zero) keep their state.
        let sum = _mm256_add_epi64(st[i], _mm256_and_si256(v, m));
        // SAFETY: row `i` of `h` is 32 bytes, written unaligned.
        unsafe { _mm256_storeu_si256(h[i].as_mut_ptr().cast(), sum) };
    }
}
