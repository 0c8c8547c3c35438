//! ChaCha with AVX2.
//!
//! - **8 blocks per pass, word-sliced:** ymm register `x[i]` holds state word `i` of 8 consecutive blocks (one
//!   block per 32-bit lane), so a quarter round is 12 plain vector instructions on 8 blocks and no shuffles
//!   are needed between column and diagonal rounds. After the rounds an 8x8 transpose of 32-bit words turns
//!   the 16 word vectors into 8 blocks of two ymm each, which are XORed into (or written over) the data.
//! - **Short inputs** (at most 4 blocks) use the row layout instead: each 128-bit lane holds one block's row,
//!   two blocks per ymm, two independent ymm sets, with word rotations (`vpshufd`) between column and diagonal
//!   rounds. This does 4 blocks of work instead of 8 and has half the latency of the transposing path.
//!
//! - **Stitched AEAD pass** (`xor20_stitched`, 512-byte chunks): the 8-block pass with the scalar Poly1305 of a
//!   neighbouring chunk interleaved between its double rounds, all 32 blocks as 16 pairs on two independent
//!   accumulators (blocks `k` and `16 + k`), joined by one multiplication by `r^16` at the end of the chunk. One
//!   serial chain (about 15 cycles a block) could not keep pace with the vector pass; two do. The accumulators
//!   stay in registers for the whole pass (the side job is a local of the pass, not a reference into the MAC).
//!
//! Rotations by 16 and 8 are byte shuffles (`vpshufb`), by 12 and 7 shift-shift-or.
#![allow(unsafe_code)]

use super::{BLOCK_LEN, Backend};
use crate::dispatch::Checked;
use crate::x86::transpose::transpose8x8_epi32;
use core::arch::x86_64::*;
use core::mem::MaybeUninit;
use zeroize::Zeroize;

/// The body of [`blocks8`], of the 8-block passes of `apply_avx2` and of the stitched loop: 8 keystream blocks from counter `$ctr`, XORed into (or written
/// over) the `min($avail, 512)` bytes at `$p`, with `$side.step(k)` after double round `k`. A macro so that both
/// inline into their callers (a `#[target_feature]` function cannot be `#[inline(always)]`).
macro_rules! blocks8_body {
    ($rounds:ident, $state:ident, $ctr:ident, $m:ident, $p:ident, $avail:ident, $xor:ident, $side:ident) => {{
        if $side.none() && $avail >= 8 * BLOCK_LEN {
            // SAFETY: AVX2 is enabled in every caller of this macro; the 512 bytes at `$p` are caller-guaranteed;
            // `rounds` is 8, 12 or 20.
            unsafe { pass8(&$state, $ctr, $rounds / 2, $m, $p, $xor) };
        } else {
            blocks8_body!(@general $rounds, $state, $ctr, $m, $p, $avail, $xor, $side);
        }
    }};
    (@general $rounds:ident, $state:ident, $ctr:ident, $m:ident, $p:ident, $avail:ident, $xor:ident, $side:ident) => {{
        let c: [u64; 8] = core::array::from_fn(|i| $ctr.wrapping_add(i as u64));
        let w = |i: usize| _mm256_set1_epi32($state[i] as i32);
        let x12 = _mm256_setr_epi32(
            c[0] as i32,
            c[1] as i32,
            c[2] as i32,
            c[3] as i32,
            c[4] as i32,
            c[5] as i32,
            c[6] as i32,
            c[7] as i32,
        );
        let x13 = _mm256_setr_epi32(
            (c[0] >> 32) as i32,
            (c[1] >> 32) as i32,
            (c[2] >> 32) as i32,
            (c[3] >> 32) as i32,
            (c[4] >> 32) as i32,
            (c[5] >> 32) as i32,
            (c[6] >> 32) as i32,
            (c[7] >> 32) as i32,
        );
        let mut x: [__m256i; 16] = core::array::from_fn(|i| match i {
            12 => x12,
            13 => x13,
            _ => w(i),
        });
        if $side.none() {
            // SAFETY: AVX2 is enabled in every caller of this macro; `rounds` is 8, 12 or 20, so at least one
            // double round.
            unsafe { rounds_asm(&mut x, $rounds / 2, $m) };
        }
        for k in 0..if $side.none() { 0 } else { $rounds / 2 } {
            let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15] = &mut x;
            qr(x0, x4, x8, x12, $m);
            qr(x1, x5, x9, x13, $m);
            qr(x2, x6, x10, x14, $m);
            qr(x3, x7, x11, x15, $m);
            qr(x0, x5, x10, x15, $m);
            qr(x1, x6, x11, x12, $m);
            qr(x2, x7, x8, x13, $m);
            qr(x3, x4, x9, x14, $m);
            $side.step(k);
        }
        for (i, v) in x.iter_mut().enumerate() {
            let orig = match i {
                12 => x12,
                13 => x13,
                _ => w(i),
            };
            *v = _mm256_add_epi32(*v, orig);
        }
        let lo = transpose8x8_epi32([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]);
        let hi = transpose8x8_epi32([x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]]);
        if $avail >= 8 * BLOCK_LEN {
            for j in 0..8 {
                // SAFETY: the 512 bytes at `p` are caller-guaranteed; unaligned loads and stores.
                unsafe {
                    let q = $p.add(j * BLOCK_LEN);
                    let (l, h) = if $xor {
                        (
                            _mm256_xor_si256(lo[j], _mm256_loadu_si256(q as *const __m256i)),
                            _mm256_xor_si256(hi[j], _mm256_loadu_si256(q.add(32) as *const __m256i)),
                        )
                    } else {
                        (lo[j], hi[j])
                    };
                    _mm256_storeu_si256(q as *mut __m256i, l);
                    _mm256_storeu_si256(q.add(32) as *mut __m256i, h);
                }
            }
        } else {
            for j in 0..$avail.div_ceil(BLOCK_LEN) {
                // SAFETY: block j starts inside the caller-guaranteed bytes; at most `avail - 64 j` are touched.
                unsafe { out_block($p.add(j * BLOCK_LEN), lo[j], hi[j], $avail - j * BLOCK_LEN, $xor) };
            }
        }
    }};
}

/// See [`super::apply_blocks`].
pub(super) fn apply_blocks(backend: Checked<Backend>, rounds: usize, state: &[u32; 16], data: &mut [u8], xor: bool) {
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2.
    unsafe { apply_avx2(rounds, state, data, xor) }
}

#[target_feature(enable = "avx2")]
fn apply_avx2(rounds: usize, state: &[u32; 16], data: &mut [u8], xor: bool) {
    let mut ctr = state[12] as u64 | (state[13] as u64) << 32;
    let len = data.len();
    let ptr = data.as_mut_ptr();
    let masks = masks();
    let mut off = 0usize;
    while off < len {
        let rest = len - off;
        if rest > 4 * BLOCK_LEN {
            // The pass's body written out here rather than a call to `blocks8`, so that it inlines (with the state
            // broadcasts hoisted out of the loop): as a call it measured 3-4% slower. It touches at most `rest`
            // bytes from `off < len`.
            let (p, m, side) = (ptr.wrapping_add(off), &masks, &mut NoSide);
            blocks8_body!(rounds, state, ctr, m, p, rest, xor, side);
            ctr = ctr.wrapping_add(8);
            off += rest.min(8 * BLOCK_LEN);
        } else {
            let ks = blocks4_rows(rounds, state, ctr, &masks, &mut NoSide);
            for j in 0..rest.div_ceil(BLOCK_LEN) {
                // SAFETY: block j starts inside `data`; `out_block` touches at most `rest - 64 j` bytes from there.
                unsafe { out_block(ptr.add(off + j * BLOCK_LEN), ks[2 * j], ks[2 * j + 1], rest - j * BLOCK_LEN, xor) };
            }
            off = len;
        }
    }
}

/// Byte-shuffle masks for the rotations by 16 and 8 (in this order: `rounds_asm` reads them at offsets 0 and 32).
#[derive(Clone, Copy)]
#[repr(C)]
struct Masks {
    rot16: __m256i,
    rot8: __m256i,
}

/// The rotation masks. They go through `black_box` so that LLVM keeps one `vpshufb` per rotation instead of
/// rewriting it into `vpshuflw`+`vpshufhw` or pushing it through the preceding XOR (which doubles the shuffles,
/// and shuffles are the scarcest port).
#[inline]
#[target_feature(enable = "avx2")]
fn masks() -> Masks {
    core::hint::black_box(Masks {
        rot16: _mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
        ),
        rot8: _mm256_setr_epi8(
            3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
        ),
    })
}

/// XORs (or writes) one keystream block `lo || hi` into the `min(avail, 64)` bytes at `p`.
///
/// # Safety
/// `p` must be valid for reads and writes of `min(avail, 64)` bytes, and AVX2 must be available.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn out_block(p: *mut u8, lo: __m256i, hi: __m256i, avail: usize, xor: bool) {
    if avail >= BLOCK_LEN {
        // SAFETY: the caller guarantees 64 valid bytes at `p`; loads and stores are unaligned.
        unsafe {
            let (lo, hi) = if xor {
                (
                    _mm256_xor_si256(lo, _mm256_loadu_si256(p as *const __m256i)),
                    _mm256_xor_si256(hi, _mm256_loadu_si256(p.add(32) as *const __m256i)),
                )
            } else {
                (lo, hi)
            };
            _mm256_storeu_si256(p as *mut __m256i, lo);
            _mm256_storeu_si256(p.add(32) as *mut __m256i, hi);
        }
    } else {
        let mut tmp = [0u8; BLOCK_LEN];
        // SAFETY: `tmp` is 64 bytes; the byte loop then touches only `avail` (< 64) caller-guaranteed bytes.
        unsafe {
            _mm256_storeu_si256(tmp.as_mut_ptr() as *mut __m256i, lo);
            _mm256_storeu_si256(tmp.as_mut_ptr().add(32) as *mut __m256i, hi);
            for (i, k) in tmp[..avail].iter().enumerate() {
                let d = p.add(i);
                *d = if xor { *d ^ k } else { *k };
            }
        }
        tmp.zeroize();
    }
}

#[inline]
#[target_feature(enable = "avx2")]
fn rol12(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<12>(x), _mm256_srli_epi32::<20>(x))
}

#[inline]
#[target_feature(enable = "avx2")]
fn rol7(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<7>(x), _mm256_srli_epi32::<25>(x))
}

/// One quarter round on four vectors (each lane an independent quarter round).
#[inline]
#[target_feature(enable = "avx2")]
fn qr(a: &mut __m256i, b: &mut __m256i, c: &mut __m256i, d: &mut __m256i, m: &Masks) {
    *a = _mm256_add_epi32(*a, *b);
    *d = _mm256_shuffle_epi8(_mm256_xor_si256(*d, *a), m.rot16);
    *c = _mm256_add_epi32(*c, *d);
    *b = rol12(_mm256_xor_si256(*b, *c));
    *a = _mm256_add_epi32(*a, *b);
    *d = _mm256_shuffle_epi8(_mm256_xor_si256(*d, *a), m.rot8);
    *c = _mm256_add_epi32(*c, *d);
    *b = rol7(_mm256_xor_si256(*b, *c));
}

/// The `dr` double rounds of an 8-block pass on the word vectors `x` (row-major: `x[i]` is state word `i` of the 8
/// blocks), in place, as one `asm!` block.
///
/// Why `asm!`: with 16 word vectors, two rotation masks and the rotation temporaries in 16 `ymm` registers, LLVM
/// spilled about 14 vectors per double round at places of its choosing, several on the critical path (a value
/// stored and reloaded one quarter round later pays the store-to-load forwarding latency). Here the allocation is
/// fixed, as in OpenSSL's 8x AVX2 code (the technique, not its text): `a` (words 0-3), `b` (4-7) and `d` (12-15)
/// stay in `ymm0..ymm11`; of the `c` row (8-11) two words at a time live in `ymm12`/`ymm13`, the other two in `x`;
/// `ymm14`/`ymm15` are the temporaries of the shift-shift-or rotations by 12 and 7; the `vpshufb` masks of the
/// rotations by 16 and 8 are memory operands. Quarter rounds run in interleaved pairs: columns (0, 1) with `c` words
/// 8, 9, then (2, 3) with 10, 11; diagonals (0, 1) with 10, 11, then (2, 3) with 8, 9; so one double round swaps the
/// `c` pair twice (four stores and four loads, each away from its value's next use), and the order of the pairs
/// leaves words 8, 9 in registers at the loop's head. The text is generated by `avx2_rounds.py` (next to this
/// file); each line is one instruction.
///
/// # Safety
/// AVX2 must be available; `dr > 0`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn rounds_asm(x: &mut [__m256i; 16], dr: usize, m: &Masks) {
    debug_assert!(dr > 0);
    // SAFETY: reads and writes only the 512 bytes of `x` and reads the 64 bytes of `m` (both valid, `Masks` is
    // `repr(C)` with rot16 at 0 and rot8 at 32); every ymm register it writes is declared clobbered; `dr > 0`, so
    // the `dec`/`jnz` loop ends; no stack use; AVX2 is enabled by the caller.
    unsafe {
        core::arch::asm!(
            "vmovdqu ymm0, ymmword ptr [{x} + 0]",
            "vmovdqu ymm1, ymmword ptr [{x} + 32]",
            "vmovdqu ymm2, ymmword ptr [{x} + 64]",
            "vmovdqu ymm3, ymmword ptr [{x} + 96]",
            "vmovdqu ymm4, ymmword ptr [{x} + 128]",
            "vmovdqu ymm5, ymmword ptr [{x} + 160]",
            "vmovdqu ymm6, ymmword ptr [{x} + 192]",
            "vmovdqu ymm7, ymmword ptr [{x} + 224]",
            "vmovdqu ymm8, ymmword ptr [{x} + 384]",
            "vmovdqu ymm9, ymmword ptr [{x} + 416]",
            "vmovdqu ymm10, ymmword ptr [{x} + 448]",
            "vmovdqu ymm11, ymmword ptr [{x} + 480]",
            "vmovdqu ymm12, ymmword ptr [{x} + 256]",
            "vmovdqu ymm13, ymmword ptr [{x} + 288]",
            ".p2align 5",
            "2:",
            "vpaddd ymm0, ymm0, ymm4",
            "vpaddd ymm1, ymm1, ymm5",
            "vpxor ymm8, ymm8, ymm0",
            "vpxor ymm9, ymm9, ymm1",
            "vpshufb ymm8, ymm8, ymmword ptr [{m}]",
            "vpshufb ymm9, ymm9, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm8",
            "vpaddd ymm13, ymm13, ymm9",
            "vpxor ymm4, ymm4, ymm12",
            "vpxor ymm5, ymm5, ymm13",
            "vpslld ymm14, ymm4, 12",
            "vpslld ymm15, ymm5, 12",
            "vpsrld ymm4, ymm4, 20",
            "vpsrld ymm5, ymm5, 20",
            "vpor ymm4, ymm4, ymm14",
            "vpor ymm5, ymm5, ymm15",
            "vpaddd ymm0, ymm0, ymm4",
            "vpaddd ymm1, ymm1, ymm5",
            "vpxor ymm8, ymm8, ymm0",
            "vpxor ymm9, ymm9, ymm1",
            "vpshufb ymm8, ymm8, ymmword ptr [{m} + 32]",
            "vpshufb ymm9, ymm9, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm8",
            "vpaddd ymm13, ymm13, ymm9",
            "vpxor ymm4, ymm4, ymm12",
            "vpxor ymm5, ymm5, ymm13",
            "vpslld ymm14, ymm4, 7",
            "vpslld ymm15, ymm5, 7",
            "vpsrld ymm4, ymm4, 25",
            "vpsrld ymm5, ymm5, 25",
            "vpor ymm4, ymm4, ymm14",
            "vpor ymm5, ymm5, ymm15",
            "vmovdqu ymmword ptr [{x} + 256], ymm12",
            "vmovdqu ymmword ptr [{x} + 288], ymm13",
            "vmovdqu ymm12, ymmword ptr [{x} + 320]",
            "vmovdqu ymm13, ymmword ptr [{x} + 352]",
            "vpaddd ymm2, ymm2, ymm6",
            "vpaddd ymm3, ymm3, ymm7",
            "vpxor ymm10, ymm10, ymm2",
            "vpxor ymm11, ymm11, ymm3",
            "vpshufb ymm10, ymm10, ymmword ptr [{m}]",
            "vpshufb ymm11, ymm11, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm10",
            "vpaddd ymm13, ymm13, ymm11",
            "vpxor ymm6, ymm6, ymm12",
            "vpxor ymm7, ymm7, ymm13",
            "vpslld ymm14, ymm6, 12",
            "vpslld ymm15, ymm7, 12",
            "vpsrld ymm6, ymm6, 20",
            "vpsrld ymm7, ymm7, 20",
            "vpor ymm6, ymm6, ymm14",
            "vpor ymm7, ymm7, ymm15",
            "vpaddd ymm2, ymm2, ymm6",
            "vpaddd ymm3, ymm3, ymm7",
            "vpxor ymm10, ymm10, ymm2",
            "vpxor ymm11, ymm11, ymm3",
            "vpshufb ymm10, ymm10, ymmword ptr [{m} + 32]",
            "vpshufb ymm11, ymm11, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm10",
            "vpaddd ymm13, ymm13, ymm11",
            "vpxor ymm6, ymm6, ymm12",
            "vpxor ymm7, ymm7, ymm13",
            "vpslld ymm14, ymm6, 7",
            "vpslld ymm15, ymm7, 7",
            "vpsrld ymm6, ymm6, 25",
            "vpsrld ymm7, ymm7, 25",
            "vpor ymm6, ymm6, ymm14",
            "vpor ymm7, ymm7, ymm15",
            "vpaddd ymm0, ymm0, ymm5",
            "vpaddd ymm1, ymm1, ymm6",
            "vpxor ymm11, ymm11, ymm0",
            "vpxor ymm8, ymm8, ymm1",
            "vpshufb ymm11, ymm11, ymmword ptr [{m}]",
            "vpshufb ymm8, ymm8, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm11",
            "vpaddd ymm13, ymm13, ymm8",
            "vpxor ymm5, ymm5, ymm12",
            "vpxor ymm6, ymm6, ymm13",
            "vpslld ymm14, ymm5, 12",
            "vpslld ymm15, ymm6, 12",
            "vpsrld ymm5, ymm5, 20",
            "vpsrld ymm6, ymm6, 20",
            "vpor ymm5, ymm5, ymm14",
            "vpor ymm6, ymm6, ymm15",
            "vpaddd ymm0, ymm0, ymm5",
            "vpaddd ymm1, ymm1, ymm6",
            "vpxor ymm11, ymm11, ymm0",
            "vpxor ymm8, ymm8, ymm1",
            "vpshufb ymm11, ymm11, ymmword ptr [{m} + 32]",
            "vpshufb ymm8, ymm8, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm11",
            "vpaddd ymm13, ymm13, ymm8",
            "vpxor ymm5, ymm5, ymm12",
            "vpxor ymm6, ymm6, ymm13",
            "vpslld ymm14, ymm5, 7",
            "vpslld ymm15, ymm6, 7",
            "vpsrld ymm5, ymm5, 25",
            "vpsrld ymm6, ymm6, 25",
            "vpor ymm5, ymm5, ymm14",
            "vpor ymm6, ymm6, ymm15",
            "vmovdqu ymmword ptr [{x} + 320], ymm12",
            "vmovdqu ymmword ptr [{x} + 352], ymm13",
            "vmovdqu ymm12, ymmword ptr [{x} + 256]",
            "vmovdqu ymm13, ymmword ptr [{x} + 288]",
            "vpaddd ymm2, ymm2, ymm7",
            "vpaddd ymm3, ymm3, ymm4",
            "vpxor ymm9, ymm9, ymm2",
            "vpxor ymm10, ymm10, ymm3",
            "vpshufb ymm9, ymm9, ymmword ptr [{m}]",
            "vpshufb ymm10, ymm10, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm9",
            "vpaddd ymm13, ymm13, ymm10",
            "vpxor ymm7, ymm7, ymm12",
            "vpxor ymm4, ymm4, ymm13",
            "vpslld ymm14, ymm7, 12",
            "vpslld ymm15, ymm4, 12",
            "vpsrld ymm7, ymm7, 20",
            "vpsrld ymm4, ymm4, 20",
            "vpor ymm7, ymm7, ymm14",
            "vpor ymm4, ymm4, ymm15",
            "vpaddd ymm2, ymm2, ymm7",
            "vpaddd ymm3, ymm3, ymm4",
            "vpxor ymm9, ymm9, ymm2",
            "vpxor ymm10, ymm10, ymm3",
            "vpshufb ymm9, ymm9, ymmword ptr [{m} + 32]",
            "vpshufb ymm10, ymm10, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm9",
            "vpaddd ymm13, ymm13, ymm10",
            "vpxor ymm7, ymm7, ymm12",
            "vpxor ymm4, ymm4, ymm13",
            "vpslld ymm14, ymm7, 7",
            "vpslld ymm15, ymm4, 7",
            "vpsrld ymm7, ymm7, 25",
            "vpsrld ymm4, ymm4, 25",
            "vpor ymm7, ymm7, ymm14",
            "vpor ymm4, ymm4, ymm15",
            "dec {n}",
            "jnz 2b",
            "vmovdqu ymmword ptr [{x} + 0], ymm0",
            "vmovdqu ymmword ptr [{x} + 32], ymm1",
            "vmovdqu ymmword ptr [{x} + 64], ymm2",
            "vmovdqu ymmword ptr [{x} + 96], ymm3",
            "vmovdqu ymmword ptr [{x} + 128], ymm4",
            "vmovdqu ymmword ptr [{x} + 160], ymm5",
            "vmovdqu ymmword ptr [{x} + 192], ymm6",
            "vmovdqu ymmword ptr [{x} + 224], ymm7",
            "vmovdqu ymmword ptr [{x} + 384], ymm8",
            "vmovdqu ymmword ptr [{x} + 416], ymm9",
            "vmovdqu ymmword ptr [{x} + 448], ymm10",
            "vmovdqu ymmword ptr [{x} + 480], ymm11",
            "vmovdqu ymmword ptr [{x} + 256], ymm12",
            "vmovdqu ymmword ptr [{x} + 288], ymm13",
            x = in(reg) x.as_mut_ptr(),
            m = in(reg) m as *const Masks,
            n = inout(reg) dr => _,
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
            out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
            options(nostack),
        );
    }
}

/// One whole 8-block pass as one `asm!` block: the state words broadcast from `state` (the counters of the 8 blocks
/// from `ctr`), the `dr` double rounds with the register plan of [`rounds_asm`], the feed-forward, the two 8x8 word
/// transposes, and the 512 bytes at `p` XORed with (`xor`) or overwritten by the keystream, all without leaving
/// registers except for the `c`-pair swaps and six words parked in a scratch buffer during the first transpose.
/// Written out by LLVM, the same pass stored and reloaded every word vector two or three times after the rounds
/// (about 60 extra 32-byte stores per 512 bytes). Text generated by `avx2_rounds.py xor` and `avx2_rounds.py ks`.
///
/// # Safety
/// AVX2 must be available; `p` must be valid for reads and writes of 512 bytes; `dr > 0`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn pass8(state: &[u32; 16], ctr: u64, dr: usize, m: &Masks, p: *mut u8, xor: bool) {
    debug_assert!(dr > 0);
    let lo = _mm256_set1_epi32(ctr as i32);
    let x12 = _mm256_add_epi32(lo, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    // Carry into word 13 where the low word wrapped: x12 < lo as unsigned (compare with the sign bits flipped).
    let sign = _mm256_set1_epi32(i32::MIN);
    let wrapped = _mm256_cmpgt_epi32(_mm256_xor_si256(lo, sign), _mm256_xor_si256(x12, sign));
    let x13 = _mm256_sub_epi32(_mm256_set1_epi32((ctr >> 32) as i32), wrapped);
    let c = [x12, x13];
    let mut scratch = MaybeUninit::<[__m256i; 16]>::uninit();
    macro_rules! run {
        ($($text:literal,)*) => {
            // SAFETY: reads the 64 bytes of `state`, `c` and `m` (`Masks` is `repr(C)`: rot16 at 0, rot8 at 32);
            // writes the scratch buffer (words 8..15 at 32 i, each written before it is read) and reads and writes
            // the 512 bytes at `p` (caller-guaranteed); every ymm register it writes is declared clobbered;
            // `dr > 0`, so the `dec`/`jnz` loop ends; no stack use; AVX2 is enabled by the caller.
            unsafe {
                core::arch::asm!(
                    $($text,)*
                    st = in(reg) state.as_ptr(),
                    c = in(reg) c.as_ptr(),
                    m = in(reg) m as *const Masks,
                    s = in(reg) scratch.as_mut_ptr(),
                    p = in(reg) p,
                    n = inout(reg) dr => _,
                    out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                    out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                    out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                    out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
                    options(nostack),
                )
            }
        };
    }
    if xor {
        run!(
            "vpbroadcastd ymm0, dword ptr [{st} + 0]",
            "vpbroadcastd ymm1, dword ptr [{st} + 4]",
            "vpbroadcastd ymm2, dword ptr [{st} + 8]",
            "vpbroadcastd ymm3, dword ptr [{st} + 12]",
            "vpbroadcastd ymm4, dword ptr [{st} + 16]",
            "vpbroadcastd ymm5, dword ptr [{st} + 20]",
            "vpbroadcastd ymm6, dword ptr [{st} + 24]",
            "vpbroadcastd ymm7, dword ptr [{st} + 28]",
            "vmovdqu ymm8, ymmword ptr [{c}]",
            "vmovdqu ymm9, ymmword ptr [{c} + 32]",
            "vpbroadcastd ymm10, dword ptr [{st} + 56]",
            "vpbroadcastd ymm11, dword ptr [{st} + 60]",
            "vpbroadcastd ymm12, dword ptr [{st} + 32]",
            "vpbroadcastd ymm13, dword ptr [{st} + 36]",
            "vpbroadcastd ymm14, dword ptr [{st} + 40]",
            "vpbroadcastd ymm15, dword ptr [{st} + 44]",
            "vmovdqu ymmword ptr [{s} + 320], ymm14",
            "vmovdqu ymmword ptr [{s} + 352], ymm15",
            ".p2align 5",
            "2:",
            "vpaddd ymm0, ymm0, ymm4",
            "vpaddd ymm1, ymm1, ymm5",
            "vpxor ymm8, ymm8, ymm0",
            "vpxor ymm9, ymm9, ymm1",
            "vpshufb ymm8, ymm8, ymmword ptr [{m}]",
            "vpshufb ymm9, ymm9, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm8",
            "vpaddd ymm13, ymm13, ymm9",
            "vpxor ymm4, ymm4, ymm12",
            "vpxor ymm5, ymm5, ymm13",
            "vpslld ymm14, ymm4, 12",
            "vpslld ymm15, ymm5, 12",
            "vpsrld ymm4, ymm4, 20",
            "vpsrld ymm5, ymm5, 20",
            "vpor ymm4, ymm4, ymm14",
            "vpor ymm5, ymm5, ymm15",
            "vpaddd ymm0, ymm0, ymm4",
            "vpaddd ymm1, ymm1, ymm5",
            "vpxor ymm8, ymm8, ymm0",
            "vpxor ymm9, ymm9, ymm1",
            "vpshufb ymm8, ymm8, ymmword ptr [{m} + 32]",
            "vpshufb ymm9, ymm9, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm8",
            "vpaddd ymm13, ymm13, ymm9",
            "vpxor ymm4, ymm4, ymm12",
            "vpxor ymm5, ymm5, ymm13",
            "vpslld ymm14, ymm4, 7",
            "vpslld ymm15, ymm5, 7",
            "vpsrld ymm4, ymm4, 25",
            "vpsrld ymm5, ymm5, 25",
            "vpor ymm4, ymm4, ymm14",
            "vpor ymm5, ymm5, ymm15",
            "vmovdqu ymmword ptr [{s} + 256], ymm12",
            "vmovdqu ymmword ptr [{s} + 288], ymm13",
            "vmovdqu ymm12, ymmword ptr [{s} + 320]",
            "vmovdqu ymm13, ymmword ptr [{s} + 352]",
            "vpaddd ymm2, ymm2, ymm6",
            "vpaddd ymm3, ymm3, ymm7",
            "vpxor ymm10, ymm10, ymm2",
            "vpxor ymm11, ymm11, ymm3",
            "vpshufb ymm10, ymm10, ymmword ptr [{m}]",
            "vpshufb ymm11, ymm11, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm10",
            "vpaddd ymm13, ymm13, ymm11",
            "vpxor ymm6, ymm6, ymm12",
            "vpxor ymm7, ymm7, ymm13",
            "vpslld ymm14, ymm6, 12",
            "vpslld ymm15, ymm7, 12",
            "vpsrld ymm6, ymm6, 20",
            "vpsrld ymm7, ymm7, 20",
            "vpor ymm6, ymm6, ymm14",
            "vpor ymm7, ymm7, ymm15",
            "vpaddd ymm2, ymm2, ymm6",
            "vpaddd ymm3, ymm3, ymm7",
            "vpxor ymm10, ymm10, ymm2",
            "vpxor ymm11, ymm11, ymm3",
            "vpshufb ymm10, ymm10, ymmword ptr [{m} + 32]",
            "vpshufb ymm11, ymm11, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm10",
            "vpaddd ymm13, ymm13, ymm11",
            "vpxor ymm6, ymm6, ymm12",
            "vpxor ymm7, ymm7, ymm13",
            "vpslld ymm14, ymm6, 7",
            "vpslld ymm15, ymm7, 7",
            "vpsrld ymm6, ymm6, 25",
            "vpsrld ymm7, ymm7, 25",
            "vpor ymm6, ymm6, ymm14",
            "vpor ymm7, ymm7, ymm15",
            "vpaddd ymm0, ymm0, ymm5",
            "vpaddd ymm1, ymm1, ymm6",
            "vpxor ymm11, ymm11, ymm0",
            "vpxor ymm8, ymm8, ymm1",
            "vpshufb ymm11, ymm11, ymmword ptr [{m}]",
            "vpshufb ymm8, ymm8, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm11",
            "vpaddd ymm13, ymm13, ymm8",
            "vpxor ymm5, ymm5, ymm12",
            "vpxor ymm6, ymm6, ymm13",
            "vpslld ymm14, ymm5, 12",
            "vpslld ymm15, ymm6, 12",
            "vpsrld ymm5, ymm5, 20",
            "vpsrld ymm6, ymm6, 20",
            "vpor ymm5, ymm5, ymm14",
            "vpor ymm6, ymm6, ymm15",
            "vpaddd ymm0, ymm0, ymm5",
            "vpaddd ymm1, ymm1, ymm6",
            "vpxor ymm11, ymm11, ymm0",
            "vpxor ymm8, ymm8, ymm1",
            "vpshufb ymm11, ymm11, ymmword ptr [{m} + 32]",
            "vpshufb ymm8, ymm8, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm11",
            "vpaddd ymm13, ymm13, ymm8",
            "vpxor ymm5, ymm5, ymm12",
            "vpxor ymm6, ymm6, ymm13",
            "vpslld ymm14, ymm5, 7",
            "vpslld ymm15, ymm6, 7",
            "vpsrld ymm5, ymm5, 25",
            "vpsrld ymm6, ymm6, 25",
            "vpor ymm5, ymm5, ymm14",
            "vpor ymm6, ymm6, ymm15",
            "vmovdqu ymmword ptr [{s} + 320], ymm12",
            "vmovdqu ymmword ptr [{s} + 352], ymm13",
            "vmovdqu ymm12, ymmword ptr [{s} + 256]",
            "vmovdqu ymm13, ymmword ptr [{s} + 288]",
            "vpaddd ymm2, ymm2, ymm7",
            "vpaddd ymm3, ymm3, ymm4",
            "vpxor ymm9, ymm9, ymm2",
            "vpxor ymm10, ymm10, ymm3",
            "vpshufb ymm9, ymm9, ymmword ptr [{m}]",
            "vpshufb ymm10, ymm10, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm9",
            "vpaddd ymm13, ymm13, ymm10",
            "vpxor ymm7, ymm7, ymm12",
            "vpxor ymm4, ymm4, ymm13",
            "vpslld ymm14, ymm7, 12",
            "vpslld ymm15, ymm4, 12",
            "vpsrld ymm7, ymm7, 20",
            "vpsrld ymm4, ymm4, 20",
            "vpor ymm7, ymm7, ymm14",
            "vpor ymm4, ymm4, ymm15",
            "vpaddd ymm2, ymm2, ymm7",
            "vpaddd ymm3, ymm3, ymm4",
            "vpxor ymm9, ymm9, ymm2",
            "vpxor ymm10, ymm10, ymm3",
            "vpshufb ymm9, ymm9, ymmword ptr [{m} + 32]",
            "vpshufb ymm10, ymm10, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm9",
            "vpaddd ymm13, ymm13, ymm10",
            "vpxor ymm7, ymm7, ymm12",
            "vpxor ymm4, ymm4, ymm13",
            "vpslld ymm14, ymm7, 7",
            "vpslld ymm15, ymm4, 7",
            "vpsrld ymm7, ymm7, 25",
            "vpsrld ymm4, ymm4, 25",
            "vpor ymm7, ymm7, ymm14",
            "vpor ymm4, ymm4, ymm15",
            "dec {n}",
            "jnz 2b",
            "vpbroadcastd ymm14, dword ptr [{st} + 0]",
            "vpaddd ymm0, ymm0, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 4]",
            "vpaddd ymm1, ymm1, ymm15",
            "vpbroadcastd ymm14, dword ptr [{st} + 8]",
            "vpaddd ymm2, ymm2, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 12]",
            "vpaddd ymm3, ymm3, ymm15",
            "vpbroadcastd ymm14, dword ptr [{st} + 16]",
            "vpaddd ymm4, ymm4, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 20]",
            "vpaddd ymm5, ymm5, ymm15",
            "vpbroadcastd ymm14, dword ptr [{st} + 24]",
            "vpaddd ymm6, ymm6, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 28]",
            "vpaddd ymm7, ymm7, ymm15",
            "vpbroadcastd ymm14, dword ptr [{st} + 32]",
            "vpaddd ymm12, ymm12, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 36]",
            "vpaddd ymm13, ymm13, ymm15",
            "vpbroadcastd ymm14, dword ptr [{st} + 56]",
            "vpaddd ymm10, ymm10, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 60]",
            "vpaddd ymm11, ymm11, ymm15",
            "vpaddd ymm8, ymm8, ymmword ptr [{c}]",
            "vpaddd ymm9, ymm9, ymmword ptr [{c} + 32]",
            "vmovdqu ymmword ptr [{s} + 256], ymm12",
            "vmovdqu ymmword ptr [{s} + 288], ymm13",
            "vmovdqu ymmword ptr [{s} + 384], ymm8",
            "vmovdqu ymmword ptr [{s} + 416], ymm9",
            "vmovdqu ymmword ptr [{s} + 448], ymm10",
            "vmovdqu ymmword ptr [{s} + 480], ymm11",
            "vpunpckldq ymm8, ymm0, ymm1",
            "vpunpckhdq ymm9, ymm0, ymm1",
            "vpunpckldq ymm10, ymm2, ymm3",
            "vpunpckhdq ymm11, ymm2, ymm3",
            "vpunpcklqdq ymm0, ymm8, ymm10",
            "vpunpckhqdq ymm1, ymm8, ymm10",
            "vpunpcklqdq ymm2, ymm9, ymm11",
            "vpunpckhqdq ymm3, ymm9, ymm11",
            "vpunpckldq ymm12, ymm4, ymm5",
            "vpunpckhdq ymm13, ymm4, ymm5",
            "vpunpckldq ymm14, ymm6, ymm7",
            "vpunpckhdq ymm15, ymm6, ymm7",
            "vpunpcklqdq ymm4, ymm12, ymm14",
            "vpunpckhqdq ymm5, ymm12, ymm14",
            "vpunpcklqdq ymm6, ymm13, ymm15",
            "vpunpckhqdq ymm7, ymm13, ymm15",
            "vperm2i128 ymm8, ymm0, ymm4, 0x20",
            "vpxor ymm8, ymm8, ymmword ptr [{p} + 0]",
            "vmovdqu ymmword ptr [{p} + 0], ymm8",
            "vperm2i128 ymm9, ymm0, ymm4, 0x31",
            "vpxor ymm9, ymm9, ymmword ptr [{p} + 256]",
            "vmovdqu ymmword ptr [{p} + 256], ymm9",
            "vperm2i128 ymm8, ymm1, ymm5, 0x20",
            "vpxor ymm8, ymm8, ymmword ptr [{p} + 64]",
            "vmovdqu ymmword ptr [{p} + 64], ymm8",
            "vperm2i128 ymm9, ymm1, ymm5, 0x31",
            "vpxor ymm9, ymm9, ymmword ptr [{p} + 320]",
            "vmovdqu ymmword ptr [{p} + 320], ymm9",
            "vperm2i128 ymm8, ymm2, ymm6, 0x20",
            "vpxor ymm8, ymm8, ymmword ptr [{p} + 128]",
            "vmovdqu ymmword ptr [{p} + 128], ymm8",
            "vperm2i128 ymm9, ymm2, ymm6, 0x31",
            "vpxor ymm9, ymm9, ymmword ptr [{p} + 384]",
            "vmovdqu ymmword ptr [{p} + 384], ymm9",
            "vperm2i128 ymm8, ymm3, ymm7, 0x20",
            "vpxor ymm8, ymm8, ymmword ptr [{p} + 192]",
            "vmovdqu ymmword ptr [{p} + 192], ymm8",
            "vperm2i128 ymm9, ymm3, ymm7, 0x31",
            "vpxor ymm9, ymm9, ymmword ptr [{p} + 448]",
            "vmovdqu ymmword ptr [{p} + 448], ymm9",
            "vmovdqu ymm0, ymmword ptr [{s} + 256]",
            "vmovdqu ymm1, ymmword ptr [{s} + 288]",
            "vmovdqu ymm2, ymmword ptr [{s} + 320]",
            "vmovdqu ymm3, ymmword ptr [{s} + 352]",
            "vmovdqu ymm4, ymmword ptr [{s} + 384]",
            "vmovdqu ymm5, ymmword ptr [{s} + 416]",
            "vmovdqu ymm6, ymmword ptr [{s} + 448]",
            "vmovdqu ymm7, ymmword ptr [{s} + 480]",
            "vpbroadcastd ymm10, dword ptr [{st} + 40]",
            "vpaddd ymm2, ymm2, ymm10",
            "vpbroadcastd ymm11, dword ptr [{st} + 44]",
            "vpaddd ymm3, ymm3, ymm11",
            "vpunpckldq ymm8, ymm0, ymm1",
            "vpunpckhdq ymm9, ymm0, ymm1",
            "vpunpckldq ymm10, ymm2, ymm3",
            "vpunpckhdq ymm11, ymm2, ymm3",
            "vpunpcklqdq ymm0, ymm8, ymm10",
            "vpunpckhqdq ymm1, ymm8, ymm10",
            "vpunpcklqdq ymm2, ymm9, ymm11",
            "vpunpckhqdq ymm3, ymm9, ymm11",
            "vpunpckldq ymm12, ymm4, ymm5",
            "vpunpckhdq ymm13, ymm4, ymm5",
            "vpunpckldq ymm14, ymm6, ymm7",
            "vpunpckhdq ymm15, ymm6, ymm7",
            "vpunpcklqdq ymm4, ymm12, ymm14",
            "vpunpckhqdq ymm5, ymm12, ymm14",
            "vpunpcklqdq ymm6, ymm13, ymm15",
            "vpunpckhqdq ymm7, ymm13, ymm15",
            "vperm2i128 ymm8, ymm0, ymm4, 0x20",
            "vpxor ymm8, ymm8, ymmword ptr [{p} + 32]",
            "vmovdqu ymmword ptr [{p} + 32], ymm8",
            "vperm2i128 ymm9, ymm0, ymm4, 0x31",
            "vpxor ymm9, ymm9, ymmword ptr [{p} + 288]",
            "vmovdqu ymmword ptr [{p} + 288], ymm9",
            "vperm2i128 ymm8, ymm1, ymm5, 0x20",
            "vpxor ymm8, ymm8, ymmword ptr [{p} + 96]",
            "vmovdqu ymmword ptr [{p} + 96], ymm8",
            "vperm2i128 ymm9, ymm1, ymm5, 0x31",
            "vpxor ymm9, ymm9, ymmword ptr [{p} + 352]",
            "vmovdqu ymmword ptr [{p} + 352], ymm9",
            "vperm2i128 ymm8, ymm2, ymm6, 0x20",
            "vpxor ymm8, ymm8, ymmword ptr [{p} + 160]",
            "vmovdqu ymmword ptr [{p} + 160], ymm8",
            "vperm2i128 ymm9, ymm2, ymm6, 0x31",
            "vpxor ymm9, ymm9, ymmword ptr [{p} + 416]",
            "vmovdqu ymmword ptr [{p} + 416], ymm9",
            "vperm2i128 ymm8, ymm3, ymm7, 0x20",
            "vpxor ymm8, ymm8, ymmword ptr [{p} + 224]",
            "vmovdqu ymmword ptr [{p} + 224], ymm8",
            "vperm2i128 ymm9, ymm3, ymm7, 0x31",
            "vpxor ymm9, ymm9, ymmword ptr [{p} + 480]",
            "vmovdqu ymmword ptr [{p} + 480], ymm9",
        );
    } else {
        run!(
            "vpbroadcastd ymm0, dword ptr [{st} + 0]",
            "vpbroadcastd ymm1, dword ptr [{st} + 4]",
            "vpbroadcastd ymm2, dword ptr [{st} + 8]",
            "vpbroadcastd ymm3, dword ptr [{st} + 12]",
            "vpbroadcastd ymm4, dword ptr [{st} + 16]",
            "vpbroadcastd ymm5, dword ptr [{st} + 20]",
            "vpbroadcastd ymm6, dword ptr [{st} + 24]",
            "vpbroadcastd ymm7, dword ptr [{st} + 28]",
            "vmovdqu ymm8, ymmword ptr [{c}]",
            "vmovdqu ymm9, ymmword ptr [{c} + 32]",
            "vpbroadcastd ymm10, dword ptr [{st} + 56]",
            "vpbroadcastd ymm11, dword ptr [{st} + 60]",
            "vpbroadcastd ymm12, dword ptr [{st} + 32]",
            "vpbroadcastd ymm13, dword ptr [{st} + 36]",
            "vpbroadcastd ymm14, dword ptr [{st} + 40]",
            "vpbroadcastd ymm15, dword ptr [{st} + 44]",
            "vmovdqu ymmword ptr [{s} + 320], ymm14",
            "vmovdqu ymmword ptr [{s} + 352], ymm15",
            ".p2align 5",
            "2:",
            "vpaddd ymm0, ymm0, ymm4",
            "vpaddd ymm1, ymm1, ymm5",
            "vpxor ymm8, ymm8, ymm0",
            "vpxor ymm9, ymm9, ymm1",
            "vpshufb ymm8, ymm8, ymmword ptr [{m}]",
            "vpshufb ymm9, ymm9, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm8",
            "vpaddd ymm13, ymm13, ymm9",
            "vpxor ymm4, ymm4, ymm12",
            "vpxor ymm5, ymm5, ymm13",
            "vpslld ymm14, ymm4, 12",
            "vpslld ymm15, ymm5, 12",
            "vpsrld ymm4, ymm4, 20",
            "vpsrld ymm5, ymm5, 20",
            "vpor ymm4, ymm4, ymm14",
            "vpor ymm5, ymm5, ymm15",
            "vpaddd ymm0, ymm0, ymm4",
            "vpaddd ymm1, ymm1, ymm5",
            "vpxor ymm8, ymm8, ymm0",
            "vpxor ymm9, ymm9, ymm1",
            "vpshufb ymm8, ymm8, ymmword ptr [{m} + 32]",
            "vpshufb ymm9, ymm9, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm8",
            "vpaddd ymm13, ymm13, ymm9",
            "vpxor ymm4, ymm4, ymm12",
            "vpxor ymm5, ymm5, ymm13",
            "vpslld ymm14, ymm4, 7",
            "vpslld ymm15, ymm5, 7",
            "vpsrld ymm4, ymm4, 25",
            "vpsrld ymm5, ymm5, 25",
            "vpor ymm4, ymm4, ymm14",
            "vpor ymm5, ymm5, ymm15",
            "vmovdqu ymmword ptr [{s} + 256], ymm12",
            "vmovdqu ymmword ptr [{s} + 288], ymm13",
            "vmovdqu ymm12, ymmword ptr [{s} + 320]",
            "vmovdqu ymm13, ymmword ptr [{s} + 352]",
            "vpaddd ymm2, ymm2, ymm6",
            "vpaddd ymm3, ymm3, ymm7",
            "vpxor ymm10, ymm10, ymm2",
            "vpxor ymm11, ymm11, ymm3",
            "vpshufb ymm10, ymm10, ymmword ptr [{m}]",
            "vpshufb ymm11, ymm11, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm10",
            "vpaddd ymm13, ymm13, ymm11",
            "vpxor ymm6, ymm6, ymm12",
            "vpxor ymm7, ymm7, ymm13",
            "vpslld ymm14, ymm6, 12",
            "vpslld ymm15, ymm7, 12",
            "vpsrld ymm6, ymm6, 20",
            "vpsrld ymm7, ymm7, 20",
            "vpor ymm6, ymm6, ymm14",
            "vpor ymm7, ymm7, ymm15",
            "vpaddd ymm2, ymm2, ymm6",
            "vpaddd ymm3, ymm3, ymm7",
            "vpxor ymm10, ymm10, ymm2",
            "vpxor ymm11, ymm11, ymm3",
            "vpshufb ymm10, ymm10, ymmword ptr [{m} + 32]",
            "vpshufb ymm11, ymm11, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm10",
            "vpaddd ymm13, ymm13, ymm11",
            "vpxor ymm6, ymm6, ymm12",
            "vpxor ymm7, ymm7, ymm13",
            "vpslld ymm14, ymm6, 7",
            "vpslld ymm15, ymm7, 7",
            "vpsrld ymm6, ymm6, 25",
            "vpsrld ymm7, ymm7, 25",
            "vpor ymm6, ymm6, ymm14",
            "vpor ymm7, ymm7, ymm15",
            "vpaddd ymm0, ymm0, ymm5",
            "vpaddd ymm1, ymm1, ymm6",
            "vpxor ymm11, ymm11, ymm0",
            "vpxor ymm8, ymm8, ymm1",
            "vpshufb ymm11, ymm11, ymmword ptr [{m}]",
            "vpshufb ymm8, ymm8, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm11",
            "vpaddd ymm13, ymm13, ymm8",
            "vpxor ymm5, ymm5, ymm12",
            "vpxor ymm6, ymm6, ymm13",
            "vpslld ymm14, ymm5, 12",
            "vpslld ymm15, ymm6, 12",
            "vpsrld ymm5, ymm5, 20",
            "vpsrld ymm6, ymm6, 20",
            "vpor ymm5, ymm5, ymm14",
            "vpor ymm6, ymm6, ymm15",
            "vpaddd ymm0, ymm0, ymm5",
            "vpaddd ymm1, ymm1, ymm6",
            "vpxor ymm11, ymm11, ymm0",
            "vpxor ymm8, ymm8, ymm1",
            "vpshufb ymm11, ymm11, ymmword ptr [{m} + 32]",
            "vpshufb ymm8, ymm8, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm11",
            "vpaddd ymm13, ymm13, ymm8",
            "vpxor ymm5, ymm5, ymm12",
            "vpxor ymm6, ymm6, ymm13",
            "vpslld ymm14, ymm5, 7",
            "vpslld ymm15, ymm6, 7",
            "vpsrld ymm5, ymm5, 25",
            "vpsrld ymm6, ymm6, 25",
            "vpor ymm5, ymm5, ymm14",
            "vpor ymm6, ymm6, ymm15",
            "vmovdqu ymmword ptr [{s} + 320], ymm12",
            "vmovdqu ymmword ptr [{s} + 352], ymm13",
            "vmovdqu ymm12, ymmword ptr [{s} + 256]",
            "vmovdqu ymm13, ymmword ptr [{s} + 288]",
            "vpaddd ymm2, ymm2, ymm7",
            "vpaddd ymm3, ymm3, ymm4",
            "vpxor ymm9, ymm9, ymm2",
            "vpxor ymm10, ymm10, ymm3",
            "vpshufb ymm9, ymm9, ymmword ptr [{m}]",
            "vpshufb ymm10, ymm10, ymmword ptr [{m}]",
            "vpaddd ymm12, ymm12, ymm9",
            "vpaddd ymm13, ymm13, ymm10",
            "vpxor ymm7, ymm7, ymm12",
            "vpxor ymm4, ymm4, ymm13",
            "vpslld ymm14, ymm7, 12",
            "vpslld ymm15, ymm4, 12",
            "vpsrld ymm7, ymm7, 20",
            "vpsrld ymm4, ymm4, 20",
            "vpor ymm7, ymm7, ymm14",
            "vpor ymm4, ymm4, ymm15",
            "vpaddd ymm2, ymm2, ymm7",
            "vpaddd ymm3, ymm3, ymm4",
            "vpxor ymm9, ymm9, ymm2",
            "vpxor ymm10, ymm10, ymm3",
            "vpshufb ymm9, ymm9, ymmword ptr [{m} + 32]",
            "vpshufb ymm10, ymm10, ymmword ptr [{m} + 32]",
            "vpaddd ymm12, ymm12, ymm9",
            "vpaddd ymm13, ymm13, ymm10",
            "vpxor ymm7, ymm7, ymm12",
            "vpxor ymm4, ymm4, ymm13",
            "vpslld ymm14, ymm7, 7",
            "vpslld ymm15, ymm4, 7",
            "vpsrld ymm7, ymm7, 25",
            "vpsrld ymm4, ymm4, 25",
            "vpor ymm7, ymm7, ymm14",
            "vpor ymm4, ymm4, ymm15",
            "dec {n}",
            "jnz 2b",
            "vpbroadcastd ymm14, dword ptr [{st} + 0]",
            "vpaddd ymm0, ymm0, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 4]",
            "vpaddd ymm1, ymm1, ymm15",
            "vpbroadcastd ymm14, dword ptr [{st} + 8]",
            "vpaddd ymm2, ymm2, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 12]",
            "vpaddd ymm3, ymm3, ymm15",
            "vpbroadcastd ymm14, dword ptr [{st} + 16]",
            "vpaddd ymm4, ymm4, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 20]",
            "vpaddd ymm5, ymm5, ymm15",
            "vpbroadcastd ymm14, dword ptr [{st} + 24]",
            "vpaddd ymm6, ymm6, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 28]",
            "vpaddd ymm7, ymm7, ymm15",
            "vpbroadcastd ymm14, dword ptr [{st} + 32]",
            "vpaddd ymm12, ymm12, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 36]",
            "vpaddd ymm13, ymm13, ymm15",
            "vpbroadcastd ymm14, dword ptr [{st} + 56]",
            "vpaddd ymm10, ymm10, ymm14",
            "vpbroadcastd ymm15, dword ptr [{st} + 60]",
            "vpaddd ymm11, ymm11, ymm15",
            "vpaddd ymm8, ymm8, ymmword ptr [{c}]",
            "vpaddd ymm9, ymm9, ymmword ptr [{c} + 32]",
            "vmovdqu ymmword ptr [{s} + 256], ymm12",
            "vmovdqu ymmword ptr [{s} + 288], ymm13",
            "vmovdqu ymmword ptr [{s} + 384], ymm8",
            "vmovdqu ymmword ptr [{s} + 416], ymm9",
            "vmovdqu ymmword ptr [{s} + 448], ymm10",
            "vmovdqu ymmword ptr [{s} + 480], ymm11",
            "vpunpckldq ymm8, ymm0, ymm1",
            "vpunpckhdq ymm9, ymm0, ymm1",
            "vpunpckldq ymm10, ymm2, ymm3",
            "vpunpckhdq ymm11, ymm2, ymm3",
            "vpunpcklqdq ymm0, ymm8, ymm10",
            "vpunpckhqdq ymm1, ymm8, ymm10",
            "vpunpcklqdq ymm2, ymm9, ymm11",
            "vpunpckhqdq ymm3, ymm9, ymm11",
            "vpunpckldq ymm12, ymm4, ymm5",
            "vpunpckhdq ymm13, ymm4, ymm5",
            "vpunpckldq ymm14, ymm6, ymm7",
            "vpunpckhdq ymm15, ymm6, ymm7",
            "vpunpcklqdq ymm4, ymm12, ymm14",
            "vpunpckhqdq ymm5, ymm12, ymm14",
            "vpunpcklqdq ymm6, ymm13, ymm15",
            "vpunpckhqdq ymm7, ymm13, ymm15",
            "vperm2i128 ymm8, ymm0, ymm4, 0x20",
            "vmovdqu ymmword ptr [{p} + 0], ymm8",
            "vperm2i128 ymm9, ymm0, ymm4, 0x31",
            "vmovdqu ymmword ptr [{p} + 256], ymm9",
            "vperm2i128 ymm8, ymm1, ymm5, 0x20",
            "vmovdqu ymmword ptr [{p} + 64], ymm8",
            "vperm2i128 ymm9, ymm1, ymm5, 0x31",
            "vmovdqu ymmword ptr [{p} + 320], ymm9",
            "vperm2i128 ymm8, ymm2, ymm6, 0x20",
            "vmovdqu ymmword ptr [{p} + 128], ymm8",
            "vperm2i128 ymm9, ymm2, ymm6, 0x31",
            "vmovdqu ymmword ptr [{p} + 384], ymm9",
            "vperm2i128 ymm8, ymm3, ymm7, 0x20",
            "vmovdqu ymmword ptr [{p} + 192], ymm8",
            "vperm2i128 ymm9, ymm3, ymm7, 0x31",
            "vmovdqu ymmword ptr [{p} + 448], ymm9",
            "vmovdqu ymm0, ymmword ptr [{s} + 256]",
            "vmovdqu ymm1, ymmword ptr [{s} + 288]",
            "vmovdqu ymm2, ymmword ptr [{s} + 320]",
            "vmovdqu ymm3, ymmword ptr [{s} + 352]",
            "vmovdqu ymm4, ymmword ptr [{s} + 384]",
            "vmovdqu ymm5, ymmword ptr [{s} + 416]",
            "vmovdqu ymm6, ymmword ptr [{s} + 448]",
            "vmovdqu ymm7, ymmword ptr [{s} + 480]",
            "vpbroadcastd ymm10, dword ptr [{st} + 40]",
            "vpaddd ymm2, ymm2, ymm10",
            "vpbroadcastd ymm11, dword ptr [{st} + 44]",
            "vpaddd ymm3, ymm3, ymm11",
            "vpunpckldq ymm8, ymm0, ymm1",
            "vpunpckhdq ymm9, ymm0, ymm1",
            "vpunpckldq ymm10, ymm2, ymm3",
            "vpunpckhdq ymm11, ymm2, ymm3",
            "vpunpcklqdq ymm0, ymm8, ymm10",
            "vpunpckhqdq ymm1, ymm8, ymm10",
            "vpunpcklqdq ymm2, ymm9, ymm11",
            "vpunpckhqdq ymm3, ymm9, ymm11",
            "vpunpckldq ymm12, ymm4, ymm5",
            "vpunpckhdq ymm13, ymm4, ymm5",
            "vpunpckldq ymm14, ymm6, ymm7",
            "vpunpckhdq ymm15, ymm6, ymm7",
            "vpunpcklqdq ymm4, ymm12, ymm14",
            "vpunpckhqdq ymm5, ymm12, ymm14",
            "vpunpcklqdq ymm6, ymm13, ymm15",
            "vpunpckhqdq ymm7, ymm13, ymm15",
            "vperm2i128 ymm8, ymm0, ymm4, 0x20",
            "vmovdqu ymmword ptr [{p} + 32], ymm8",
            "vperm2i128 ymm9, ymm0, ymm4, 0x31",
            "vmovdqu ymmword ptr [{p} + 288], ymm9",
            "vperm2i128 ymm8, ymm1, ymm5, 0x20",
            "vmovdqu ymmword ptr [{p} + 96], ymm8",
            "vperm2i128 ymm9, ymm1, ymm5, 0x31",
            "vmovdqu ymmword ptr [{p} + 352], ymm9",
            "vperm2i128 ymm8, ymm2, ymm6, 0x20",
            "vmovdqu ymmword ptr [{p} + 160], ymm8",
            "vperm2i128 ymm9, ymm2, ymm6, 0x31",
            "vmovdqu ymmword ptr [{p} + 416], ymm9",
            "vperm2i128 ymm8, ymm3, ymm7, 0x20",
            "vmovdqu ymmword ptr [{p} + 224], ymm8",
            "vperm2i128 ymm9, ymm3, ymm7, 0x31",
            "vmovdqu ymmword ptr [{p} + 480], ymm9",
        );
    }
}

/// 8 keystream blocks from counter `ctr`, XORed into (or written over) the `min(avail, 512)` bytes at `p`.
///
/// # Safety
/// `p` must be valid for reads and writes of `min(avail, 512)` bytes; AVX2 must be available.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn blocks8(rounds: usize, state: &[u32; 16], ctr: u64, m: &Masks, p: *mut u8, avail: usize, xor: bool) {
    let side = &mut NoSide;
    blocks8_body!(rounds, state, ctr, m, p, avail, xor, side)
}

/// Work interleaved with the double rounds of `blocks8_body!`.
trait Side {
    /// Runs after double round `k`.
    fn step(&mut self, k: usize);
    /// True if `step` does nothing: the pass may then run all its double rounds in one `asm!` block.
    #[inline(always)]
    fn none(&self) -> bool {
        false
    }
}

struct NoSide;

impl Side for NoSide {
    #[inline(always)]
    fn step(&mut self, _: usize) {}
    #[inline(always)]
    fn none(&self) -> bool {
        true
    }
}

/// The stitched scalar Poly1305 share of one pass (8-block, or 4-block rows): all 32 16-byte blocks of the chunk
/// at `src` as 16 pairs (blocks `k` and `16 + k`), pairs `16 k / 10 .. 16 (k + 1) / 10` after double round `k` (one
/// or two per double round); or, for the medium path's 28-block first chunk (`pairs == 14`), its blocks in order
/// on one chain, two or three per double round. A local of the pass, so that the accumulators stay in registers.
struct ScalarSide<'a, J: super::Stitch2> {
    job: &'a J,
    acc: J::Acc,
    src: *const u8,
    /// Pairs in the chunk at `src` (`32 * pairs` bytes): 16, or 14 for the medium path's first chunk.
    pairs: usize,
}

impl<J: super::Stitch2> Side for ScalarSide<'_, J> {
    #[inline(always)]
    fn step(&mut self, k: usize) {
        let (pairs, src) = (self.pairs, self.src);
        let word = |j: usize, i: usize| {
            // SAFETY: `src` is a whole chunk of `32 * pairs` bytes other than the one the pass writes, and no
            // mutable reference to it is live (see `xor20_stitched_avx2` and `ks_pass_avx2`); word `i < 2` of
            // block `j < 2 * pairs` lies inside it; unaligned.
            u64::from_le(unsafe { (src.add(16 * j + 8 * i) as *const u64).read_unaligned() })
        };
        if pairs == 14 {
            // The 28-block first chunk of the medium path, on one chain (no join, so no power of r for it).
            for j in 28 * k / 10..28 * (k + 1) / 10 {
                self.job.single(&mut self.acc, [word(j, 0), word(j, 1)]);
            }
            return;
        }
        for j in pairs * k / 10..pairs * (k + 1) / 10 {
            let (a, b) = ([word(j, 0), word(j, 1)], [word(pairs + j, 0), word(pairs + j, 1)]);
            self.job.pair(&mut self.acc, a, b);
        }
    }
}

/// Bytes per pass of the stitched AEAD loop: one 8-block pass.
pub(super) const STITCH_CHUNK: usize = 8 * BLOCK_LEN;

/// See [`super::xor20_stitched`]: here every 16-byte block of the neighbouring chunk goes to the scalar job during
/// the pass, as pairs on two chains (two serial 64-bit multiply chains keep pace with the AVX2 ChaCha20).
pub(super) fn xor20_stitched<const SEAL: bool, J: super::Stitch2>(
    backend: Checked<Backend>,
    state: &[u32; 16],
    data: &mut [u8],
    job: &mut J,
) {
    debug_assert!(data.len().is_multiple_of(STITCH_CHUNK));
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2, BMI1 and BMI2.
    unsafe { xor20_stitched_avx2::<SEAL, J>(state, data, job) }
}

#[target_feature(enable = "avx2,bmi1,bmi2")]
fn xor20_stitched_avx2<const SEAL: bool, J: super::Stitch2>(state: &[u32; 16], data: &mut [u8], job: &mut J) {
    let masks = masks();
    let mut ctr = state[12] as u64 | (state[13] as u64) << 32;
    let ptr = data.as_mut_ptr();
    let n = data.len() / STITCH_CHUNK;
    for i in 0..n {
        let p = ptr.wrapping_add(i * STITCH_CHUNK);
        let has_side = if SEAL { i > 0 } else { i + 1 < n };
        if !has_side {
            // SAFETY: the chunk at `p` lies inside `data`.
            unsafe { blocks8(20, state, ctr, &masks, p, STITCH_CHUNK, true) };
        } else {
            let src = if SEAL { p.wrapping_sub(STITCH_CHUNK) } else { p.wrapping_add(STITCH_CHUNK) } as *const u8;
            let mut side = ScalarSide { acc: job.begin(), job: &*job, src, pairs: STITCH_CHUNK / 32 };
            let (rounds, avail, xor, m) = (20, STITCH_CHUNK, true, &masks);
            let side = &mut side;
            blocks8_body!(rounds, state, ctr, m, p, avail, xor, side);
            let acc = side.acc;
            job.end(acc, STITCH_CHUNK / 32);
        }
        ctr = ctr.wrapping_add(8);
    }
}

/// See [`super::ks_pass2`].
pub(super) fn ks_pass<J: super::Stitch2>(
    backend: Checked<Backend>,
    state: &[u32; 16],
    skip: u64,
    out: &mut [u8],
    side: Option<(&[u8], &mut J)>,
) {
    assert!(out.len() == 4 * BLOCK_LEN || out.len() == 8 * BLOCK_LEN);
    if let Some((src, _)) = &side {
        assert!(src.len() == 448 || src.len() == STITCH_CHUNK);
    }
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2, BMI1 and BMI2.
    unsafe { ks_pass_avx2(state, skip, out, side) }
}

#[target_feature(enable = "avx2,bmi1,bmi2")]
fn ks_pass_avx2<J: super::Stitch2>(state: &[u32; 16], skip: u64, out: &mut [u8], side: Option<(&[u8], &mut J)>) {
    let ctr = (state[12] as u64 | (state[13] as u64) << 32).wrapping_add(skip);
    let masks = masks();
    let (rounds, m, xor, avail, p) = (20, &masks, false, out.len(), out.as_mut_ptr());
    let rows = avail == 4 * BLOCK_LEN;
    // Writes the keystream over `out` (256 or 512 bytes, checked by `ks_pass`).
    macro_rules! pass {
        ($side:ident) => {
            if rows {
                let ks = blocks4_rows(rounds, state, ctr, m, $side);
                for (j, v) in ks.into_iter().enumerate() {
                    // SAFETY: `out` is 256 bytes here: eight 32-byte stores; unaligned.
                    unsafe { _mm256_storeu_si256(p.add(32 * j) as *mut __m256i, v) };
                }
            } else {
                blocks8_body!(rounds, state, ctr, m, p, avail, xor, $side);
            }
        };
    }
    match side {
        None => {
            let side = &mut NoSide;
            pass!(side);
        }
        Some((src, job)) => {
            // `src` is 448 or 512 bytes (checked by `ks_pass`), a borrow disjoint from `out`.
            let pairs = src.len() / 32;
            let mut sd = ScalarSide { acc: job.begin(), job: &*job, src: src.as_ptr(), pairs };
            let side = &mut sd;
            pass!(side);
            let acc = sd.acc;
            job.end(acc, if pairs == 14 { 0 } else { pairs });
        }
    }
}

/// 4 keystream blocks from counter `ctr` in the row layout (one block per 128-bit lane, two per ymm):
/// block `j` is `out[2j] || out[2j + 1]`; `side.step(k)` runs after double round `k`.
#[inline]
#[target_feature(enable = "avx2")]
fn blocks4_rows<S: Side>(rounds: usize, state: &[u32; 16], ctr: u64, m: &Masks, side: &mut S) -> [__m256i; 8] {
    let row = |r: usize| {
        let s = &state[4 * r..4 * r + 4];
        _mm256_setr_epi32(
            s[0] as i32,
            s[1] as i32,
            s[2] as i32,
            s[3] as i32,
            s[0] as i32,
            s[1] as i32,
            s[2] as i32,
            s[3] as i32,
        )
    };
    let d_row = |c0: u64| {
        let c1 = c0.wrapping_add(1);
        _mm256_setr_epi32(
            c0 as i32,
            (c0 >> 32) as i32,
            state[14] as i32,
            state[15] as i32,
            c1 as i32,
            (c1 >> 32) as i32,
            state[14] as i32,
            state[15] as i32,
        )
    };
    let (a0, b0, c0) = (row(0), row(1), row(2));
    let d0 = d_row(ctr);
    let d1 = d_row(ctr.wrapping_add(2));
    let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
    let (mut e, mut f, mut g, mut h) = (a0, b0, c0, d1);
    for k in 0..rounds / 2 {
        qr(&mut a, &mut b, &mut c, &mut d, m);
        qr(&mut e, &mut f, &mut g, &mut h, m);
        // Diagonalise: rotate rows 1, 2, 3 left by 1, 2, 3 words.
        b = _mm256_shuffle_epi32::<0x39>(b);
        c = _mm256_shuffle_epi32::<0x4e>(c);
        d = _mm256_shuffle_epi32::<0x93>(d);
        f = _mm256_shuffle_epi32::<0x39>(f);
        g = _mm256_shuffle_epi32::<0x4e>(g);
        h = _mm256_shuffle_epi32::<0x93>(h);
        qr(&mut a, &mut b, &mut c, &mut d, m);
        qr(&mut e, &mut f, &mut g, &mut h, m);
        b = _mm256_shuffle_epi32::<0x93>(b);
        c = _mm256_shuffle_epi32::<0x4e>(c);
        d = _mm256_shuffle_epi32::<0x39>(d);
        f = _mm256_shuffle_epi32::<0x93>(f);
        g = _mm256_shuffle_epi32::<0x4e>(g);
        h = _mm256_shuffle_epi32::<0x39>(h);
        side.step(k);
    }
    a = _mm256_add_epi32(a, a0);
    b = _mm256_add_epi32(b, b0);
    c = _mm256_add_epi32(c, c0);
    d = _mm256_add_epi32(d, d0);
    e = _mm256_add_epi32(e, a0);
    f = _mm256_add_epi32(f, b0);
    g = _mm256_add_epi32(g, c0);
    h = _mm256_add_epi32(h, d1);
    [
        _mm256_permute2x128_si256::<0x20>(a, b),
        _mm256_permute2x128_si256::<0x20>(c, d),
        _mm256_permute2x128_si256::<0x31>(a, b),
        _mm256_permute2x128_si256::<0x31>(c, d),
        _mm256_permute2x128_si256::<0x20>(e, f),
        _mm256_permute2x128_si256::<0x20>(g, h),
        _mm256_permute2x128_si256::<0x31>(e, f),
        _mm256_permute2x128_si256::<0x31>(g, h),
    ]
}
