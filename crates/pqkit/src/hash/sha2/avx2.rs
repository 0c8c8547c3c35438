//! SHA-512 on x86_64 with AVX2, BMI1 and BMI2.
//!
//! The message schedule is computed for four blocks at once, one block per 64-bit lane of a `ymm` register
//! (so there is no dependency between lanes), and the constants are added in the same pass. The 80 rounds of
//! each block then run on scalar registers, one `asm!` block per round (`rorx`, `andn`, additions in a fixed
//! order, see `rounds`). A tail of fewer than four blocks uses the portable schedule with the same rounds.
#![allow(unsafe_code)]
#![allow(clippy::needless_range_loop)] // word-index loops mirror the spec

use super::Backend;
use super::soft::{K512, schedule512};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

#[inline]
#[target_feature(enable = "avx2")]
fn rotr<const R: i32, const L: i32>(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_srli_epi64::<R>(x), _mm256_slli_epi64::<L>(x))
}

/// `W[i] + K[i]` for i in 0..80 of the four 128-byte blocks in `group`; lane k belongs to block k.
#[inline]
#[target_feature(enable = "avx2")]
fn schedule4(group: &[u8], out: &mut [[u64; 4]; 80]) {
    debug_assert_eq!(group.len(), 512);
    // Reverses the bytes of each 64-bit word (big-endian message words).
    let bswap = _mm256_set_epi8(
        8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
    );
    let mut w = [_mm256_setzero_si256(); 80];
    for j in 0..4 {
        // SAFETY: block k's bytes 32j..32j+32 lie inside `group` (512 bytes); loadu needs no alignment.
        let r: [__m256i; 4] =
            core::array::from_fn(|k| unsafe { _mm256_loadu_si256(group.as_ptr().add(128 * k + 32 * j).cast()) });
        // 4x4 transpose of 64-bit words: word 4j+c of every block into one register.
        let t0 = _mm256_unpacklo_epi64(r[0], r[1]);
        let t1 = _mm256_unpackhi_epi64(r[0], r[1]);
        let t2 = _mm256_unpacklo_epi64(r[2], r[3]);
        let t3 = _mm256_unpackhi_epi64(r[2], r[3]);
        w[4 * j] = _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x20>(t0, t2), bswap);
        w[4 * j + 1] = _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x20>(t1, t3), bswap);
        w[4 * j + 2] = _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x31>(t0, t2), bswap);
        w[4 * j + 3] = _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x31>(t1, t3), bswap);
    }
    for i in 16..80 {
        let x = w[i - 15];
        let s0 = _mm256_xor_si256(_mm256_xor_si256(rotr::<1, 63>(x), rotr::<8, 56>(x)), _mm256_srli_epi64::<7>(x));
        let y = w[i - 2];
        let s1 = _mm256_xor_si256(_mm256_xor_si256(rotr::<19, 45>(y), rotr::<61, 3>(y)), _mm256_srli_epi64::<6>(y));
        w[i] = _mm256_add_epi64(_mm256_add_epi64(w[i - 16], s0), _mm256_add_epi64(w[i - 7], s1));
    }
    for i in 0..80 {
        let wk = _mm256_add_epi64(w[i], _mm256_set1_epi64x(K512[i] as i64));
        // SAFETY: `out[i]` is 32 writable bytes; storeu needs no alignment.
        unsafe { _mm256_storeu_si256(out[i].as_mut_ptr().cast(), wk) };
    }
}

/// The 80 rounds of one block on `h`, reading `W[i] + K[i]` at `wk[S * i + k]` (column `k` of a schedule of
/// `S` interleaved blocks).
///
/// One `asm!` block per round, so the order of the additions is the one written (LLVM re-associated the
/// portable rounds into a longer dependency chain): `h + W + K` and `Ch` are added to `d` before `Sigma1(e)`
/// arrives, `Ch = (e & f) + (!e & g)` (the two terms share no bit) with `andn`, rotations with `rorx`, and
/// `Maj = (a & (b ^ c)) + (b & c)` (again no common bit; `b & c` is added before `a` is known, so `a` reaches the
/// next `a` through one `and` and one add), where `a ^ b` of one round is `b ^ c` of the next.
#[inline]
#[target_feature(enable = "avx2,bmi1,bmi2")]
fn rounds<const S: usize>(h: &mut [u64; 8], wk: &[u64], k: usize) {
    assert!(k < S && wk.len() == 80 * S);
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = *h;
    let mut bc = b ^ c;
    let mut p: *const u64 = wk[k..].as_ptr();
    macro_rules! round {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $i:literal) => {{
            // SAFETY: `p` points at row 8n, column k (k < S) of `wk` (80 rows of S words) with n < 10, so the
            // word 8 * S * $i bytes further (row 8n + $i < 80) is in bounds and 8-byte aligned. Register arithmetic otherwise; BMI1
            // (`andn`) and BMI2 (`rorx`) are enabled on this function.
            unsafe {
                core::arch::asm!(
                    "add {h}, qword ptr [{p} + {off}]",  // h + W + K
                    "andn {t1}, {e}, {g}",
                    "mov {t2}, {f}",
                    "and {t2}, {e}",
                    "add {h}, {t1}",
                    "rorx {t1}, {e}, 14",
                    "add {h}, {t2}",                     // h + W + K + Ch(e, f, g)
                    "rorx {t2}, {e}, 18",
                    "add {d}, {h}",                      // off the e recurrence
                    "xor {t1}, {t2}",
                    "rorx {t2}, {e}, 41",
                    "xor {t1}, {t2}",                    // Sigma1(e)
                    "mov {t3}, {b}",
                    "and {t3}, {c}",
                    "add {d}, {t1}",                     // new e = d + T1
                    "add {h}, {t3}",                     // b & c: off the a recurrence
                    "add {h}, {t1}",                     // T1 + (b & c)
                    "rorx {t1}, {a}, 28",
                    "rorx {t2}, {a}, 34",
                    "and {bc}, {a}",                     // a & (b ^ c); Maj = (a & (b ^ c)) + (b & c)
                    "xor {t1}, {t2}",
                    "rorx {t2}, {a}, 39",
                    "add {h}, {bc}",
                    "xor {t1}, {t2}",                    // Sigma0(a)
                    "mov {bc}, {a}",
                    "xor {bc}, {b}",                     // a ^ b: the next round's b ^ c
                    "add {h}, {t1}",                     // new a = T1 + Sigma0(a) + Maj(a, b, c)
                    p = in(reg) p,
                    off = const 8 * S * $i,
                    a = in(reg) $a,
                    b = in(reg) $b,
                    c = in(reg) $c,
                    d = inout(reg) $d,
                    e = in(reg) $e,
                    f = in(reg) $f,
                    g = in(reg) $g,
                    h = inout(reg) $h,
                    bc = inout(reg) bc,
                    t1 = out(reg) _,
                    t2 = out(reg) _,
                    t3 = out(reg) _,
                    options(pure, readonly, nostack),
                );
            }
        }};
    }
    for _ in 0..10 {
        round!(a, b, c, d, e, f, g, hh, 0);
        round!(hh, a, b, c, d, e, f, g, 1);
        round!(g, hh, a, b, c, d, e, f, 2);
        round!(f, g, hh, a, b, c, d, e, 3);
        round!(e, f, g, hh, a, b, c, d, 4);
        round!(d, e, f, g, hh, a, b, c, 5);
        round!(c, d, e, f, g, hh, a, b, 6);
        round!(b, c, d, e, f, g, hh, a, 7);
        p = p.wrapping_add(8 * S);
    }
    for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
        *x = x.wrapping_add(y);
    }
}

#[target_feature(enable = "avx2,bmi1,bmi2")]
fn compress(h: &mut [u64; 8], blocks: &[u8]) {
    let mut groups = blocks.chunks_exact(512);
    if blocks.len() >= 512 {
        let mut wk4 = [[0u64; 4]; 80];
        for group in &mut groups {
            schedule4(group, &mut wk4);
            for k in 0..4 {
                rounds::<4>(h, wk4.as_flattened(), k);
            }
        }
    }
    // One to three blocks left (short messages, tails): the portable schedule, one block at a time.
    for block in groups.remainder().chunks_exact(128) {
        let mut wk = schedule512(block);
        for (x, k) in wk.iter_mut().zip(K512.iter()) {
            *x = x.wrapping_add(*k);
        }
        rounds::<1>(h, &wk, 0);
    }
}

/// SHA-512 compression of every 128-byte block, for [`Backend::Avx2`] and [`Backend::ShaNi`].
pub(super) fn compress512(backend: Checked<Backend>, h: &mut [u64; 8], blocks: &[u8]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU (and OS) support AVX2,
    // BMI1 and BMI2.
    unsafe { compress(h, blocks) }
}
