//! SHA-512 on x86_64 with AVX-512VL and BMI2: the message schedule of the *next* four blocks is computed on
//! `ymm` registers (one block per 64-bit lane, `vprorq` + `vpternlogq` for the sigmas) interleaved with the
//! scalar rounds of the current four blocks, so the vector work fills the issue slots the latency-bound
//! scalar rounds leave free. A tail of fewer than four blocks uses the portable schedule.
#![allow(unsafe_code)]

use super::soft::{K512, rounds512, schedule512};
use core::arch::x86_64::*;

/// The schedule of a group of four blocks: `w[i][k]` is word `i` of block `k`, `wk[i][k]` is `w[i][k] + K[i]`.
#[repr(C, align(64))]
struct Sched {
    w: [[u64; 4]; 80],
    wk: [[u64; 4]; 80],
}

/// Words 0..16 of the four 128-byte blocks of `group` into `s`.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl")]
fn load_words(s: &mut Sched, group: &[u8]) {
    assert!(group.len() >= 512);
    // Reverses the bytes of each 64-bit word (big-endian message words).
    let bswap = _mm256_set_epi8(
        8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
    );
    for j in 0..4 {
        // SAFETY: block k's bytes 32j..32j+32 lie inside `group` (at least 512 bytes, asserted); loadu needs no
        // alignment.
        let r: [__m256i; 4] =
            core::array::from_fn(|k| unsafe { _mm256_loadu_si256(group.as_ptr().add(128 * k + 32 * j).cast()) });
        // 4x4 transpose of 64-bit words: word 4j+c of every block into one register.
        let t0 = _mm256_unpacklo_epi64(r[0], r[1]);
        let t1 = _mm256_unpackhi_epi64(r[0], r[1]);
        let t2 = _mm256_unpacklo_epi64(r[2], r[3]);
        let t3 = _mm256_unpackhi_epi64(r[2], r[3]);
        let w = [
            _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x20>(t0, t2), bswap),
            _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x20>(t1, t3), bswap),
            _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x31>(t0, t2), bswap),
            _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x31>(t1, t3), bswap),
        ];
        for (c, v) in w.into_iter().enumerate() {
            let i = 4 * j + c;
            let wk = _mm256_add_epi64(v, _mm256_set1_epi64x(K512[i] as i64));
            // SAFETY: rows of 32 bytes inside `s`, which is 64-byte aligned, so every row is 32-byte aligned.
            unsafe {
                _mm256_store_si256(s.w[i].as_mut_ptr().cast(), v);
                _mm256_store_si256(s.wk[i].as_mut_ptr().cast(), wk);
            }
        }
    }
}

/// Schedule word `i` (16 <= i < 80) of the four blocks in `s`, from the words before it.
#[inline(always)]
fn step(s: &mut Sched, i: usize) {
    debug_assert!((16..80).contains(&i));
    // SAFETY: callers pass 16 <= i < 80, so rows i-16..=i are inside `s.w`; rows are 32-byte aligned (see
    // `Sched`). The intrinsics need AVX-512F/VL, which every caller (`compress`) enables.
    unsafe {
        let p = s.w.as_mut_ptr();
        let ld = |j: usize| _mm256_load_si256(p.add(j).cast());
        let x = ld(i - 15);
        let s0 = _mm256_ternarylogic_epi64::<0x96>(
            _mm256_ror_epi64::<1>(x),
            _mm256_ror_epi64::<8>(x),
            _mm256_srli_epi64::<7>(x),
        );
        let y = ld(i - 2);
        let s1 = _mm256_ternarylogic_epi64::<0x96>(
            _mm256_ror_epi64::<19>(y),
            _mm256_ror_epi64::<61>(y),
            _mm256_srli_epi64::<6>(y),
        );
        let w = _mm256_add_epi64(_mm256_add_epi64(ld(i - 16), s0), _mm256_add_epi64(ld(i - 7), s1));
        _mm256_store_si256(p.add(i).cast(), w);
        let wk = _mm256_add_epi64(w, _mm256_set1_epi64x(*K512.get_unchecked(i) as i64));
        _mm256_store_si256(s.wk.as_mut_ptr().add(i).cast(), wk);
    }
}

/// The 80 rounds of block `k` of the group scheduled in `cur`, with `sched()` called after every eight rounds
/// to interleave the next group's schedule.
///
/// **Split rounds.** A SHA-512 round has two recurrences: `e' = d + T1` with `T1 = h + W + K + Ch(e, f, g) +
/// Sigma1(e)`, and `a' = T1 + Sigma0(a) + Maj(a, b, c)`. All in general-purpose registers that is 22 integer
/// operations per round, and Zen 4 runs them at about 7 cycles a round however they are ordered (OpenSSL's
/// hand-scheduled code: about 6.8). Here the `e` half stays in general-purpose registers (about 14 operations,
/// four cycles of latency) while `a`, `b`, `c` live in xmm registers, where `Maj` is one `vpternlogq` and
/// `Sigma0` three `vprorq` and one `vpternlogq`. Each round moves `T1` over to the vector side and the new `a`
/// back (`vmovq`, three cycles each way); neither move is on a recurrence, because the scalar side needs `a` only
/// three rounds later, as `d`. Both halves then run about five cycles a round.
///
/// Each round is one `asm!` block, so that LLVM can neither turn the single-lane vector arithmetic back into
/// scalar code nor reassociate the additions.
#[inline(always)]
fn rounds(h: &mut [u64; 8], cur: &Sched, k: usize, mut sched: impl FnMut()) {
    assert!(k < 4);
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = *h;
    // SAFETY: SSE2 register moves; the caller (`compress`) enables AVX-512F/VL.
    let (mut va, mut vb, mut vc) =
        unsafe { (_mm_cvtsi64_si128(a as i64), _mm_cvtsi64_si128(b as i64), _mm_cvtsi64_si128(c as i64)) };
    // Walks column k of `cur.wk`, eight rows per stretch.
    let mut p: *const u64 = cur.wk[0][k..].as_ptr();
    // One round. General-purpose: `$d` becomes the new `e`, `$h` the new `a` (a copy of the vector one, which
    // becomes `d` three rounds later); `$a`, `$b`, `$c` are not read (they are copies of the vector `a`, `b`,
    // `c`). Vector: `$vc` becomes the new `a`, so the next round's vector `a`, `b`, `c` are `$vc`, `$va`, `$vb`.
    macro_rules! round {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $i:literal) => {{
            // SAFETY: `p` points at row 8n, column k (k < 4) of `cur.wk` with n < 10, so the word 32 * $i bytes
            // further (row 8n + $i < 80) is in bounds and 8-byte aligned. Register arithmetic otherwise;
            // BMI2 (`rorx`) and AVX-512F/VL (`vprorq`, `vpternlogq` on xmm) are enabled by the caller.
            unsafe {
                core::arch::asm!(
                    "add {h}, qword ptr [{p} + {off}]",  // h + W + K
                    "mov {t1}, {f}",
                    "xor {t1}, {g}",
                    "and {t1}, {e}",
                    "xor {t1}, {g}",                     // Ch(e, f, g)
                    "add {d}, {h}",                      // d + h + W + K: off the e recurrence
                    "rorx {t2}, {e}, 14",
                    "rorx {t3}, {e}, 18",
                    "add {h}, {t1}",
                    "xor {t2}, {t3}",
                    "rorx {t3}, {e}, 41",
                    "add {d}, {t1}",
                    "xor {t2}, {t3}",                    // Sigma1(e)
                    "add {h}, {t2}",                     // T1
                    "add {d}, {t2}",                     // new e = d + T1
                    "vmovq {x1}, {h}",
                    "vprorq {x2}, {va}, 28",
                    "vprorq {x3}, {va}, 34",
                    "vpternlogq {vc}, {va}, {vb}, 0xe8", // Maj(c, a, b)
                    "vprorq {x4}, {va}, 39",
                    "vpaddq {vc}, {vc}, {x1}",           // Maj + T1
                    "vpternlogq {x2}, {x3}, {x4}, 0x96", // Sigma0(a)
                    "vpaddq {vc}, {vc}, {x2}",           // new a
                    "vmovq {h}, {vc}",
                    p = in(reg) p,
                    off = const 32 * $i,
                    d = inout(reg) $d,
                    e = in(reg) $e,
                    f = in(reg) $f,
                    g = in(reg) $g,
                    h = inout(reg) $h,
                    va = in(xmm_reg) va,
                    vb = in(xmm_reg) vb,
                    vc = inout(xmm_reg) vc,
                    t1 = out(reg) _,
                    t2 = out(reg) _,
                    t3 = out(reg) _,
                    x1 = out(xmm_reg) _,
                    x2 = out(xmm_reg) _,
                    x3 = out(xmm_reg) _,
                    x4 = out(xmm_reg) _,
                    options(pure, readonly, nostack),
                );
            }
            (va, vb, vc) = (vc, va, vb);
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
        p = p.wrapping_add(32);
        sched();
    }
    let _ = (va, vb, vc);
    for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
        *x = x.wrapping_add(y);
    }
}

#[target_feature(enable = "avx2,avx512f,avx512vl,bmi2")]
fn compress(h: &mut [u64; 8], blocks: &[u8]) {
    let mut groups = blocks.chunks_exact(512);
    let n = groups.len();
    if n > 0 {
        let mut bufs = [Sched { w: [[0; 4]; 80], wk: [[0; 4]; 80] }, Sched { w: [[0; 4]; 80], wk: [[0; 4]; 80] }];
        let [b0, b1] = &mut bufs;
        let (mut cur, mut next) = (b0, b1);
        let first = groups.next().unwrap_or_default();
        load_words(cur, first);
        for i in 16..80 {
            step(cur, i);
        }
        for gi in 0..n {
            let following = groups.next();
            if let Some(grp) = following {
                load_words(next, grp);
                // 64 steps over the 40 eight-round stretches of this group: two per stretch for the first 32.
                let mut i = 16;
                for k in 0..4 {
                    rounds(h, cur, k, || {
                        if i < 80 {
                            step(next, i);
                            step(next, i + 1);
                            i += 2;
                        }
                    });
                }
            } else {
                for k in 0..4 {
                    rounds(h, cur, k, || {});
                }
            }
            let _ = gi;
            core::mem::swap(&mut cur, &mut next);
        }
    }
    for block in groups.remainder().chunks_exact(128) {
        let mut wk = schedule512(block);
        for (x, k) in wk.iter_mut().zip(K512.iter()) {
            *x = x.wrapping_add(*k);
        }
        rounds512(h, &wk);
    }
}

/// SHA-512 compression of every 128-byte block. The caller (the dispatch in `mod.rs`) has checked AVX-512F/VL
/// and BMI2.
pub(super) fn compress512(h: &mut [u64; 8], blocks: &[u8]) {
    debug_assert!(crate::cpu::features().has(
        crate::cpu::Features::AVX2
            | crate::cpu::Features::AVX512F
            | crate::cpu::Features::AVX512VL
            | crate::cpu::Features::BMI2
    ));
    // SAFETY: only reached through Backend::ShaNiAvx512, which `Backend::detect` selects only when the CPU and OS
    // support AVX2, AVX-512F/VL and BMI2 (checked there).
    unsafe { compress(h, blocks) }
}
