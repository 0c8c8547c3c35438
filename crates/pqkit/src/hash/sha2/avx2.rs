//! SHA-512 on x86_64 with AVX2, BMI1 and BMI2.
//!
//! - **Schedule:** four blocks at a time on `ymm` registers (one block per 64-bit lane, so there is no dependency
//!   between lanes; rotations as two shifts and an `or`), with the constants added in the same pass, interleaved
//!   with the rounds of the previous four blocks (the vector units are otherwise idle while the integer units run
//!   the rounds); the first group's schedule is interleaved with its own first block, a few rows ahead of the
//!   rounds. A last group of one to three blocks runs the same code with zero words in the missing lanes. The
//!   structure is that of the AVX-512 backend (`avx512.rs`), with AVX2 instructions.
//! - **Rounds:** on scalar registers, one `asm!` block per round (see `rounds`): 22 integer operations with
//!   `rorx`, `Ch` and `Maj` in three operations each.
#![allow(unsafe_code)]

use super::Backend;
use super::soft::K512;
use crate::dispatch::Checked;
use core::arch::x86_64::*;
use core::mem::MaybeUninit;

#[inline]
#[target_feature(enable = "avx2")]
fn rotr<const R: i32, const L: i32>(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_srli_epi64::<R>(x), _mm256_slli_epi64::<L>(x))
}

/// The schedule of a group of four blocks: `w[i][k]` is word `i` of block `k`, `wk[i][k]` is `w[i][k] + K[i]`.
#[repr(C, align(64))]
struct Sched {
    w: [[u64; 4]; 80],
    wk: [[u64; 4]; 80],
}

/// Words 0..16 (rows 0..16 of `w` and `wk`) of the one to four 128-byte blocks of `group` into `*s`; the lanes of
/// missing blocks get zero words (scheduled like the others, never used).
///
/// # Safety
/// `s` must be valid for writes (it may be uninitialized), and no reference to `*s` may be live.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_words(s: *mut Sched, group: &[u8]) {
    let nb = group.len() / 128;
    assert!((1..=4).contains(&nb));
    // Reverses the bytes of each 64-bit word (big-endian message words).
    let bswap = _mm256_set_epi8(
        8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
    );
    for j in 0..4 {
        let r: [__m256i; 4] = core::array::from_fn(|k| {
            if k < nb {
                // SAFETY: block k < nb: its bytes 32j..32j+32 lie inside `group`; loadu needs no alignment.
                unsafe { _mm256_loadu_si256(group.as_ptr().add(128 * k + 32 * j).cast()) }
            } else {
                _mm256_setzero_si256()
            }
        });
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
            // SAFETY: rows of 32 bytes inside `*s`, which is 64-byte aligned, so every row is 32-byte aligned; the
            // caller guarantees write access and that no reference is live.
            unsafe {
                _mm256_store_si256(((&raw mut (*s).w) as *mut [u64; 4]).add(i).cast(), v);
                _mm256_store_si256(((&raw mut (*s).wk) as *mut [u64; 4]).add(i).cast(), wk);
            }
        }
    }
}

/// Schedule word `i` (16 <= i < 80) of the four blocks in `*s`, from the words before it.
///
/// # Safety
/// `s` must be valid for reads and writes, and no reference to `*s` may be live (the rounds read other rows
/// of the same schedule through a raw pointer meanwhile). The caller must enable AVX2.
#[inline(always)]
unsafe fn step(s: *mut Sched, i: usize) {
    debug_assert!((16..80).contains(&i));
    // SAFETY: callers pass 16 <= i < 80, so rows i-16..=i are inside `w` and row i inside `wk`; rows are 32-byte
    // aligned (see `Sched`); the caller guarantees access to `*s` and the target features.
    unsafe {
        let p = (&raw mut (*s).w) as *mut [u64; 4];
        let ld = |j: usize| _mm256_load_si256(p.add(j).cast());
        let x = ld(i - 15);
        let s0 = _mm256_xor_si256(_mm256_xor_si256(rotr::<1, 63>(x), rotr::<8, 56>(x)), _mm256_srli_epi64::<7>(x));
        let y = ld(i - 2);
        let s1 = _mm256_xor_si256(_mm256_xor_si256(rotr::<19, 45>(y), rotr::<61, 3>(y)), _mm256_srli_epi64::<6>(y));
        let w = _mm256_add_epi64(_mm256_add_epi64(ld(i - 16), s0), _mm256_add_epi64(ld(i - 7), s1));
        _mm256_store_si256(p.add(i).cast(), w);
        let wk = _mm256_add_epi64(w, _mm256_set1_epi64x(*K512.get_unchecked(i) as i64));
        _mm256_store_si256(((&raw mut (*s).wk) as *mut [u64; 4]).add(i).cast(), wk);
    }
}

/// [`step`] with row `i - 2` given in a register (`prev2`) instead of loaded, returning row `i`: for the first
/// block's own schedule, where each row is needed two rows later and a store-to-load round trip on that chain made
/// the schedule, not the rounds, the critical path of a one-block message.
///
/// # Safety
/// As [`step`]; `prev2` must be row `i - 2`.
#[inline(always)]
unsafe fn step_reg(s: *mut Sched, i: usize, prev2: __m256i) -> __m256i {
    debug_assert!((16..80).contains(&i));
    // SAFETY: as in `step`: rows i-16..i are inside `w` and row i inside `wk`, 32-byte aligned; the caller
    // guarantees access to `*s` and the target features.
    unsafe {
        let p = (&raw mut (*s).w) as *mut [u64; 4];
        let ld = |j: usize| _mm256_load_si256(p.add(j).cast());
        let x = ld(i - 15);
        let s0 = _mm256_xor_si256(_mm256_xor_si256(rotr::<1, 63>(x), rotr::<8, 56>(x)), _mm256_srli_epi64::<7>(x));
        // Everything but sigma1(row i - 2) first, off the chain.
        let rest = _mm256_add_epi64(_mm256_add_epi64(ld(i - 16), s0), ld(i - 7));
        let y = prev2;
        let s1 = _mm256_xor_si256(_mm256_xor_si256(rotr::<19, 45>(y), rotr::<61, 3>(y)), _mm256_srli_epi64::<6>(y));
        let w = _mm256_add_epi64(rest, s1);
        _mm256_store_si256(p.add(i).cast(), w);
        let wk = _mm256_add_epi64(w, _mm256_set1_epi64x(*K512.get_unchecked(i) as i64));
        _mm256_store_si256(((&raw mut (*s).wk) as *mut [u64; 4]).add(i).cast(), wk);
        w
    }
}

/// The 80 rounds of block `k` of the group scheduled in `cur`, with `sched()` called after every eight rounds
/// to interleave the next group's schedule.
///
/// One `asm!` block per round, so that LLVM keeps the order written (it re-associated the portable rounds into a
/// longer dependency chain): 22 integer operations and three register moves (free on recent cores).
/// `Ch(e, f, g) = ((f ^ g) & e) ^ g` and `Maj(a, b, c) = ((a ^ b) & (b ^ c)) ^ b`, where `a ^ b` of one round is
/// `b ^ c` of the next; rotations with `rorx`. The rounds are bound by the integer units' throughput, not by the
/// four- and five-cycle recurrences, so the fewest operations win (the previous version had 24 and the schedule in
/// a separate pass: about 25% slower).
///
/// # Safety
/// `cur` must point at a schedule whose rows are written before the stretch that reads them, and no reference
/// to it may be live (`sched` may write later rows meanwhile). The caller must enable AVX2 and BMI2.
#[inline(always)]
unsafe fn rounds(h: &mut [u64; 8], cur: *const Sched, k: usize, sched: impl FnMut()) {
    assert!(k < 4);
    // Column k of `cur.wk`: rows of four words.
    // SAFETY: in bounds of `*cur` (k < 4); no reference is created. The rest is `rounds_at`'s contract, which
    // the caller upholds (see above).
    unsafe { rounds_at::<4>(h, ((&raw const (*cur).wk) as *const u64).add(k), sched) }
}

/// [`rounds`] reading `W[i] + K[i]` at `p + STRIDE * i` (in words): `STRIDE` 4 for a column of a four-block
/// [`Sched`], 1 for the one-block [`Sched1`].
///
/// # Safety
/// `p + STRIDE * i` must be readable for every `i < 80`, each word written before the stretch of eight rounds
/// that reads it (`sched` may write later words meanwhile), with no reference to that memory live. The caller
/// must enable AVX2 and BMI2.
#[inline(always)]
unsafe fn rounds_at<const STRIDE: usize>(h: &mut [u64; 8], mut p: *const u64, mut sched: impl FnMut()) {
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = *h;
    let mut bc = b ^ c;
    // One round: `$d` becomes the new `e`, `$h` the new `a`; `$c` is not read (`bc` carries `b ^ c`).
    macro_rules! round {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $i:literal) => {{
            // SAFETY: `p` points at word 8n of the schedule (n < 10), so the word `$i` further (8n + $i < 80), at
            // 8 * STRIDE * $i bytes, is readable and written (the caller's contract) and 8-byte aligned. Register arithmetic otherwise;
            // BMI2 (`rorx`) is enabled by the caller.
            unsafe {
                core::arch::asm!(
                    "add {h}, qword ptr [{p} + {off}]",  // h + W + K
                    "mov {t1}, {f}",
                    "xor {t1}, {g}",
                    "and {t1}, {e}",
                    "xor {t1}, {g}",                     // Ch(e, f, g)
                    "rorx {t2}, {e}, 14",
                    "rorx {t3}, {e}, 18",
                    "add {h}, {t1}",
                    "xor {t2}, {t3}",
                    "rorx {t3}, {e}, 41",
                    "xor {t2}, {t3}",                    // Sigma1(e)
                    "rorx {t1}, {a}, 28",
                    "add {h}, {t2}",                     // T1
                    "rorx {t2}, {a}, 34",
                    "add {d}, {h}",                      // new e = d + T1
                    "xor {t1}, {t2}",
                    "rorx {t2}, {a}, 39",
                    "xor {t1}, {t2}",                    // Sigma0(a)
                    "mov {t2}, {a}",
                    "xor {t2}, {b}",                     // a ^ b: the next round's b ^ c
                    "add {h}, {t1}",
                    "and {bc}, {t2}",                    // (a ^ b) & (b ^ c)
                    "xor {bc}, {b}",                     // Maj(a, b, c)
                    "add {h}, {bc}",                     // new a = T1 + Sigma0(a) + Maj(a, b, c)
                    "mov {bc}, {t2}",
                    p = in(reg) p,
                    off = const 8 * STRIDE * $i,
                    a = in(reg) $a,
                    b = in(reg) $b,
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
        p = p.wrapping_add(8 * STRIDE);
        sched();
    }
    for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
        *x = x.wrapping_add(y);
    }
}

/// The schedule of one block: `w[i]` is word `i`, `wk[i]` is `w[i] + K[i]`.
#[repr(C, align(64))]
pub(super) struct Sched1 {
    w: [u64; 80],
    pub(super) wk: [u64; 80],
}

/// Words `i` and `i + 1` (i even, 16 <= i < 80) of the one-block schedule `*s`, from the words before them, on
/// 128-bit registers: the two words only need words up to `i - 1`. Every load is a 16-byte aligned pair
/// (`alignr` builds the odd-aligned ones), so each reads back exactly one earlier 16-byte store.
///
/// # Safety
/// `s` must be valid for reads and writes with words `0..i` of `w` written, and no reference to `*s` may be
/// live. The caller must enable AVX2.
#[inline(always)]
pub(super) unsafe fn step_pair(s: *mut Sched1, i: usize) {
    debug_assert!((16..80).contains(&i) && i.is_multiple_of(2));
    // SAFETY: 16 <= i < 80 and i even: the pairs at words i - 16, i - 14, i - 8, i - 6 and i - 2 are inside
    // `w`, written, and 16-byte aligned (the struct is 64-byte aligned); the pair at word i is inside `w` and `wk`,
    // and the pair at K512[i] is in bounds (loadu needs no alignment). The caller guarantees access and AVX2.
    unsafe {
        let w = (&raw mut (*s).w) as *mut u64;
        let ld = |j: usize| _mm_load_si128(w.add(j).cast());
        let (p16, p14, p8, p6) = (ld(i - 16), ld(i - 14), ld(i - 8), ld(i - 6));
        let x = _mm_alignr_epi8::<8>(p14, p16); // words i - 15, i - 14
        let y = ld(i - 2); // words i - 2, i - 1
        let a7 = _mm_alignr_epi8::<8>(p6, p8); // words i - 7, i - 6
        let rot8 = _mm_set_epi8(8, 15, 14, 13, 12, 11, 10, 9, 0, 7, 6, 5, 4, 3, 2, 1);
        let s0 = _mm_xor_si128(
            _mm_xor_si128(_mm_srli_epi64::<1>(x), _mm_slli_epi64::<63>(x)),
            _mm_xor_si128(_mm_shuffle_epi8(x, rot8), _mm_srli_epi64::<7>(x)),
        );
        let s1 = _mm_xor_si128(
            _mm_xor_si128(
                _mm_xor_si128(_mm_srli_epi64::<19>(y), _mm_slli_epi64::<45>(y)),
                _mm_xor_si128(_mm_srli_epi64::<61>(y), _mm_slli_epi64::<3>(y)),
            ),
            _mm_srli_epi64::<6>(y),
        );
        let n = _mm_add_epi64(_mm_add_epi64(p16, s0), _mm_add_epi64(a7, s1));
        _mm_store_si128(w.add(i).cast(), n);
        let k = _mm_loadu_si128(K512.as_ptr().add(i).cast());
        _mm_store_si128(((&raw mut (*s).wk) as *mut u64).add(i).cast(), _mm_add_epi64(n, k));
    }
}

/// Words 0..16 of `block` into rows 0..16 of `w` and `wk` of the one-block schedule `*s`.
///
/// # Safety
/// `s` must be valid for writes (it may be uninitialized), and no reference to `*s` may be live. The caller
/// must enable AVX2.
#[inline(always)]
pub(super) unsafe fn load_one(s: *mut Sched1, block: &[u8; 128]) {
    // SAFETY: SSSE3 constant; the caller enables AVX2.
    let bswap = unsafe { _mm_set_epi8(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7) };
    for j in 0..8 {
        // SAFETY: bytes 16j..16j + 16 of the 128-byte block; words 2j, 2j + 1 of `w` and `wk` (16-byte aligned)
        // and of K512; the caller guarantees write access to `*s`, that no reference is live, and AVX2.
        unsafe {
            let v = _mm_shuffle_epi8(_mm_loadu_si128(block.as_ptr().add(16 * j).cast()), bswap);
            _mm_store_si128(((&raw mut (*s).w) as *mut u64).add(2 * j).cast(), v);
            let k = _mm_loadu_si128(K512.as_ptr().add(2 * j).cast());
            _mm_store_si128(((&raw mut (*s).wk) as *mut u64).add(2 * j).cast(), _mm_add_epi64(v, k));
        }
    }
}

/// One 128-byte block: its own schedule two words at a time on 128-bit registers, a few rows ahead of the
/// rounds. A lone block (a short message, the padding block of every hash, each HMAC outer block) would pay the
/// four-lane schedule of [`compress`] four times over with nothing to share it with.
#[target_feature(enable = "avx2,bmi1,bmi2")]
fn compress_one(h: &mut [u64; 8], block: &[u8; 128]) {
    let mut buf = MaybeUninit::<Sched1>::uninit();
    let s = buf.as_mut_ptr();
    // SAFETY: `s` is valid for writes with no reference live; AVX2 is enabled on this function.
    unsafe { load_one(s, block) };
    let mut own = 16;
    // SAFETY: words 0..16 are written above; after stretch n (rounds 8n..8n + 7) `sched` writes words
    // 16 + 8n..24 + 8n, which stretch n + 2 reads first; `s` is only accessed through raw pointers. AVX2 and
    // BMI2 are enabled on this function.
    unsafe {
        rounds_at::<1>(h, (&raw const (*s).wk) as *const u64, || {
            if own < 80 {
                for i in (own..own + 8).step_by(2) {
                    step_pair(s, i);
                }
                own += 8;
            }
        })
    };
}

#[target_feature(enable = "avx2,bmi1,bmi2")]
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
    // function enables AVX2, BMI1 and BMI2, which `load_words`, `step` and `rounds` need.
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
                        // Rows own - 2 and own - 1 were written a stretch ago; within the stretch each row's
                        // predecessor-but-one stays in a register.
                        let p = (&raw const (*cur).w) as *const [u64; 4];
                        let mut p2 = _mm256_load_si256(p.add(own - 2).cast());
                        let mut p1 = _mm256_load_si256(p.add(own - 1).cast());
                        for j in own..own + 8 {
                            let w = step_reg(cur, j, p2);
                            p2 = p1;
                            p1 = w;
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

/// SHA-512 compression of every 128-byte block, for [`Backend::Avx2`] and [`Backend::ShaNi`].
pub(super) fn compress512(backend: Checked<Backend>, h: &mut [u64; 8], blocks: &[u8]) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU (and OS) support AVX2,
    // BMI1 and BMI2.
    unsafe { compress(h, blocks) }
}
