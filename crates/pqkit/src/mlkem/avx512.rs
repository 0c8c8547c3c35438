//! AVX-512 (BW + VBMI + VBMI2) rejection sampling for SampleNTT: 48 bytes of XOF output become 32 candidate
//! 12-bit values with one `vpermb` and a variable shift, are compared with q in one instruction, and the
//! accepted ones are packed with `vpcompressw`. Only public data (the matrix seed's XOF output) goes through
//! here, so the data-dependent loop counts leak nothing secret.
#![allow(unsafe_code)]

use super::Backend;
use super::poly::Poly;
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// Byte 2i of the word vector takes input byte 3(i/2) + (i&1), byte 2i+1 the next one.
const PERM: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 32 {
        t[2 * i] = (3 * (i / 2) + (i & 1)) as u8;
        t[2 * i + 1] = (3 * (i / 2) + (i & 1) + 1) as u8;
        i += 1;
    }
    t
};

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
fn rej_uniform_avx512(p: &mut Poly, n: &mut usize, buf: &[u8]) {
    // SAFETY: PERM is 64 readable bytes.
    let perm = unsafe { _mm512_loadu_si512(PERM.as_ptr().cast()) };
    let shifts = _mm512_set1_epi32(0x0004_0000);
    let mask12 = _mm512_set1_epi16(0x0fff);
    let q = _mm512_set1_epi16(3329);
    let mut j = 0;
    while *n < 256 && j + 3 <= buf.len() {
        let m = (buf.len() - j).min(48) / 3 * 3;
        let bytes_mask: u64 = (1u64 << m) - 1;
        let cand_mask: u32 = if m == 48 { u32::MAX } else { (1u32 << (2 * m / 3)) - 1 };
        // SAFETY: the mask selects only bytes j..j+m, which are in bounds; masked-off bytes are not read.
        let raw = unsafe { _mm512_maskz_loadu_epi8(bytes_mask, buf.as_ptr().add(j).cast()) };
        let v = _mm512_permutexvar_epi8(perm, raw);
        let v = _mm512_and_si512(_mm512_srlv_epi16(v, shifts), mask12);
        let ok = _mm512_cmplt_epu16_mask(v, q) & cand_mask;
        let packed = _mm512_maskz_compress_epi16(ok, v);
        let cnt = ok.count_ones() as usize;
        if *n + 32 <= 256 {
            // SAFETY: coefficients n..n+32 are in bounds; lanes past `cnt` are overwritten later or ignored.
            unsafe { _mm512_storeu_si512(p.c.as_mut_ptr().add(*n).cast(), packed) };
            *n += cnt;
        } else {
            let mut tmp = [0i16; 32];
            // SAFETY: `tmp` is 64 writable bytes.
            unsafe { _mm512_storeu_si512(tmp.as_mut_ptr().cast(), packed) };
            let take = cnt.min(256 - *n);
            p.c[*n..*n + take].copy_from_slice(&tmp[..take]);
            *n += take;
        }
        j += m;
    }
}

/// Appends the accepted SampleNTT candidates of `buf` to `p.c[*n..]`; the same result as
/// `poly::rej_uniform`.
pub(crate) fn rej_uniform(backend: Checked<Backend>, p: &mut Poly, n: &mut usize, buf: &[u8]) {
    assert!(backend.covers(Backend::Avx512));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU and OS support
    // AVX-512 F, BW, VBMI and VBMI2.
    unsafe { rej_uniform_avx512(p, n, buf) }
}
