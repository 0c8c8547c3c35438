//! SHA-512 on x86_64 with AVX-512VL and BMI2.
//!
//! - **Schedule:** four blocks at a time on `ymm` registers (one block per 64-bit lane, `vprorq` +
//!   `vpternlogq` for the sigmas), interleaved with the rounds of the previous four blocks; the first group's
//!   schedule is interleaved with its own first block, a few rows ahead of the rounds. A last group of one to
//!   three blocks runs the same code with zero words in the missing lanes.
//! - **Rounds:** split between the integer and the vector units (see `rounds`): the `e` half in
//!   general-purpose registers, the `a` half in xmm registers.
#![allow(unsafe_code)]

use super::Backend;
use super::avx2;
use super::soft::K512;
use crate::dispatch::Checked;
use core::arch::x86_64::*;
use core::mem::MaybeUninit;

/// The schedule of a group of four blocks: `w[i][k]` is word `i` of block `k`, `wk[i][k]` is `w[i][k] + K[i]`.
#[repr(C, align(64))]
struct Sched {
    w: [[u64; 4]; 80],
    wk: [[u64; 4]; 80],
}

load_words!("avx2,avx512f,avx512vl");

/// Schedule word `i` (16 <= i < 80) of the four blocks in `*s`, from the words before it.
///
/// # Safety
/// `s` must be valid for reads and writes, and no reference to `*s` may be live (the rounds read other rows
/// of the same schedule through a raw pointer meanwhile). The caller must enable AVX-512F/VL.
#[inline(always)]
unsafe fn step(s: *mut Sched, i: usize) {
    debug_assert!((16..80).contains(&i));
    // SAFETY: callers pass 16 <= i < 80, so rows i-16..=i are inside `w` and row i inside `wk`; rows are 32-byte
    // aligned (see `Sched`); the caller guarantees access to `*s` and the target features.
    unsafe {
        let p = (&raw mut (*s).w) as *mut [u64; 4];
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
        _mm256_store_si256(((&raw mut (*s).wk) as *mut [u64; 4]).add(i).cast(), wk);
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
///
/// # Safety
/// `cur` must point at a schedule whose rows are written before the stretch that reads them, and no reference
/// to it may be live (`sched` may write later rows meanwhile). The caller must enable AVX-512F/VL and BMI2.
#[inline(always)]
unsafe fn rounds(h: &mut [u64; 8], cur: *const Sched, k: usize, sched: impl FnMut()) {
    assert!(k < 4);
    // Column k of `cur.wk`: rows of four words.
    // SAFETY: in bounds of `*cur` (k < 4); no reference is created. The rest is `rounds_at`'s contract, which
    // the caller upholds (see above).
    unsafe { rounds_at::<4>(h, ((&raw const (*cur).wk) as *const u64).add(k), sched) }
}

/// [`rounds`] reading `W[i] + K[i]` at `p + STRIDE * i` (in words): `STRIDE` 4 for a column of a four-block
/// [`Sched`], 1 for the one-block schedule of `avx2::Sched1`.
///
/// # Safety
/// `p + STRIDE * i` must be readable for every `i < 80`, each word written before the stretch of eight rounds
/// that reads it (`sched` may write later words meanwhile), with no reference to that memory live. The caller
/// must enable AVX-512F/VL and BMI2.
#[inline(always)]
unsafe fn rounds_at<const STRIDE: usize>(h: &mut [u64; 8], mut p: *const u64, mut sched: impl FnMut()) {
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = *h;
    // SAFETY: SSE2 register moves; the caller (`compress`) enables AVX-512F/VL.
    let (mut va, mut vb, mut vc) =
        unsafe { (_mm_cvtsi64_si128(a as i64), _mm_cvtsi64_si128(b as i64), _mm_cvtsi64_si128(c as i64)) };
    // One round. General-purpose: `$d` becomes the new `e`, `$h` the new `a` (a copy of the vector one, which
    // becomes `d` three rounds later); `$a`, `$b`, `$c` are not read (they are copies of the vector `a`, `b`,
    // `c`). Vector: `$vc` becomes the new `a`, so the next round's vector `a`, `b`, `c` are `$vc`, `$va`, `$vb`.
    macro_rules! round {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $i:literal) => {{
            // SAFETY: `p` points at word 8n of the schedule (n < 10), so the word `$i` further (8n + $i < 80), at
            // 8 * STRIDE * $i bytes, is readable and written (the caller's contract) and 8-byte aligned. Register arithmetic otherwise;
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
                    off = const 8 * STRIDE * $i,
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
        p = p.wrapping_add(8 * STRIDE);
        sched();
    }
    let _ = (va, vb, vc);
    for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
        *x = x.wrapping_add(y);
    }
}

/// One 128-byte block: the AVX2 backend's one-block schedule (two words per 128-bit register, see
/// `avx2::compress_one`; AVX-512 would save only a few of its operations) a few rows ahead of these rounds.
#[target_feature(enable = "avx2,avx512f,avx512vl,bmi2")]
fn compress_one(h: &mut [u64; 8], block: &[u8; 128]) {
    let mut buf = MaybeUninit::<avx2::Sched1>::uninit();
    let s = buf.as_mut_ptr();
    // SAFETY: `s` is valid for writes with no reference live; AVX2 is enabled on this function.
    unsafe { avx2::load_one(s, block) };
    let mut own = 16;
    // SAFETY: words 14, 15 are written above (16-byte aligned pair); no reference to `*s` is live; AVX2 is enabled.
    let mut y = unsafe { _mm_load_si128(((&raw const (*s).w) as *const u64).add(14).cast()) };
    // SAFETY: words 0..16 are written above; after stretch n (rounds 8n..8n + 7) `sched` writes words
    // 16 + 8n..24 + 8n, which stretch n + 2 reads first, each pair from `y`, the pair before it; `s` is only
    // accessed through raw pointers. AVX2, AVX-512F/VL and BMI2 are enabled on this function.
    unsafe {
        rounds_at::<1>(h, (&raw const (*s).wk) as *const u64, || {
            if own < 80 {
                for i in (own..own + 8).step_by(2) {
                    y = avx2::step_pair(s, i, y);
                }
                own += 8;
            }
        })
    };
}

#[target_feature(enable = "avx2,avx512f,avx512vl,bmi2")]
fn compress(h: &mut [u64; 8], blocks: &[u8]) {
    let blocks = &blocks[..blocks.len() / 128 * 128];
    if let Ok(block) = <&[u8; 128]>::try_from(blocks) {
        return compress_one(h, block);
    }
    // Groups of four blocks; the last one may be short. Group g's schedule is computed during the rounds of group
    // g - 1, into `next`, two rows after each eight-round stretch; the first group's during its own first block:
    // after stretch n (rounds 8n..8n+7) the eight rows that stretch n + 2 reads.
    let mut groups = blocks.chunks(512);
    let Some(mut group) = groups.next() else { return };
    // Uninitialized: every row is written (`load_words`, `step`) before it is read, and zeroing 10 KiB would
    // cost a short message more than its schedule.
    let mut bufs = [MaybeUninit::<Sched>::uninit(), MaybeUninit::<Sched>::uninit()];
    let [b0, b1] = &mut bufs;
    let (mut cur, mut next) = (b0.as_mut_ptr(), b1.as_mut_ptr());
    // What every `unsafe` below relies on: `cur` and `next` point at the two distinct buffers, no reference to
    // either is ever created, and every row is written before it is read: rows 0..16 by `load_words`, rows
    // `own..80` of `cur` two stretches before the rounds read them, all rows of `next` before the swap. This
    // function enables AVX2, AVX-512F/VL and BMI2, which `load_words`, `step` and `rounds` need.
    // SAFETY: `cur` is valid for writes with no live reference (see above); it is only written here.
    unsafe { load_words(cur, group) };
    let mut own = 16;
    loop {
        let following = groups.next();
        if let Some(g) = following {
            // SAFETY: `next` is valid for writes with no live reference (see above); it is only written here.
            unsafe { load_words(next, g) };
        }
        let mut i = 16;
        for k in 0..group.len() / 128 {
            // A separate closure on purpose: with its body written into the `rounds` closure below, LLVM
            // compiled the rounds about 5% slower (pqkit-bench, SHA-512 at 16 KiB and 1 MiB).
            let step_next = |i: &mut usize| {
                if following.is_some() && *i < 80 {
                    // SAFETY: 16 <= i < i + 1 < 80 (i is even); `next` has rows 0..i written and no live
                    // reference (see above).
                    unsafe {
                        step(next, *i);
                        step(next, *i + 1);
                    }
                    *i += 2;
                }
            };
            // SAFETY: k < 4; `cur` has rows 0..16 written and its rows `own..own + 8` are written two stretches
            // before the rounds read them; `next` is only written through `step_next` (see above).
            unsafe {
                rounds(h, cur, k, || {
                    if own < 80 {
                        for j in own..own + 8 {
                            step(cur, j);
                        }
                        own += 8;
                    } else {
                        step_next(&mut i);
                    }
                })
            };
        }
        let Some(g) = following else { break };
        // A full group leaves exactly 32 stretches for the 64 rows of `next`; a short group is always the last.
        debug_assert_eq!(i, 80);
        core::mem::swap(&mut cur, &mut next);
        group = g;
    }
}

/// SHA-512 compression of every 128-byte block, for [`Backend::ShaNiAvx512`].
pub(super) fn compress512(backend: Checked<Backend>, h: &mut [u64; 8], blocks: &[u8]) {
    assert!(backend.covers(Backend::ShaNiAvx512));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::ShaNiAvx512, so the CPU (and OS)
    // support AVX2, AVX-512F/VL and BMI2.
    unsafe { compress(h, blocks) }
}
