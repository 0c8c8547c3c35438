//! ChaCha with AVX-512 (F + VL + BW).
//!
//! - **16 blocks per pass, word-sliced** (the layout of OpenSSL's 16x path): zmm register `x[i]` holds state
//!   word `i` of 16 consecutive blocks, one block per 32-bit lane. A quarter round is 12 instructions on 16
//!   blocks, rotations are single `vprold`s, and no shuffles are needed between column and diagonal rounds.
//!   Afterwards a 16x16 transpose of 32-bit words (`vpunpck{l,h}{dq,qdq}` then two `vshufi32x4` stages) gives
//!   one zmm per block, XORed with the data through unaligned loads and stores.
//! - **Plus one scalar block** (block 16 of a 17-block pass), for as many passes as leave a multiple of 16
//!   whole blocks to the plain passes (a ragged tail would cost more than it saves): the vector loop leaves
//!   the integer ALUs idle (on Zen 4 zmm ops run as two halves on the 256-bit pipes), so one more block per
//!   pass comes almost free. Its quarter rounds are tiny `asm!` blocks only so that LLVM cannot vectorize them
//!   back onto the busy vector pipes.
//! - **Stitched AEAD pass** (`xor20_stitched`): the same 16-block pass with scalar Poly1305 blocks of a
//!   neighbouring chunk interleaved between the double rounds.
//! - **8 blocks per pass in ymm** (AVX-512VL gives `vprold` on ymm) for remainders of 256 bytes to 1 KiB.
//! - **4 blocks in the row layout** (one block per 128-bit lane of a zmm) for the last at most 256 bytes.
//! - Partial blocks use byte-masked loads and stores (`vmovdqu8` with a mask, AVX512BW): no scalar tail loop
//!   and no access outside the data.
//!
//! The 64-bit block counter of lane `j` is `ctr + j`: `j` is added to word 12, and each lane whose word 12
//! wrapped (it is then below the starting word 12) adds one to word 13.
#![allow(unsafe_code)]

use super::BLOCK_LEN;
use crate::cpu::Features;
use core::arch::x86_64::*;

/// True if the CPU has AVX-512 F, VL and BW (with OS support for the opmask and zmm state).
#[inline]
pub(super) fn available() -> bool {
    crate::cpu::features().has(Features::AVX512F | Features::AVX512VL | Features::AVX512BW)
}

/// See [`super::apply_blocks`]. Falls back to the portable code on a CPU without AVX-512 F/VL/BW.
pub(super) fn apply_blocks(rounds: usize, state: &[u32; 16], data: &mut [u8], xor: bool) {
    if !available() {
        return super::soft::apply_blocks(rounds, state, data, xor);
    }
    // SAFETY: AVX-512 F, VL and BW are present (checked just above).
    unsafe { apply_avx512(rounds, state, data, xor) }
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
fn apply_avx512(rounds: usize, state: &[u32; 16], data: &mut [u8], xor: bool) {
    let mut ctr = state[12] as u64 | (state[13] as u64) << 32;
    let len = data.len();
    let ptr = data.as_mut_ptr();
    let mut off = 0usize;
    // 17-block passes: 16 in zmm registers and one on the integer units, which the vector loop leaves idle (on
    // Zen 4 about 3% more throughput for the same vector work). But a ragged tail of 1..15 whole blocks after
    // them costs more than the scalar blocks save (4 KiB ran 11% slower as 3 x 17 + 13), so take `hybrid`
    // passes only as many as leave the whole blocks a multiple of 16 for the plain passes: since 17 = 1 mod 16
    // that means hybrid = whole (mod 16). Multiples of 1 KiB below 17 KiB get plain passes only.
    let whole = len / BLOCK_LEN;
    let first = whole % 16;
    let fit = whole / 17;
    let hybrid = if first > fit { 0 } else { first + (fit - first) / 16 * 16 };
    for _ in 0..hybrid {
        // SAFETY: hybrid * 17 <= whole, so the 1088 bytes from `off` lie inside `data`.
        unsafe { blocks16_plus::<1>(rounds, state, ctr, ptr.add(off), xor) };
        ctr = ctr.wrapping_add(17);
        off += 17 * BLOCK_LEN;
    }
    while len - off >= 16 * BLOCK_LEN {
        // SAFETY: the 1024 bytes from `off` lie inside `data`.
        unsafe { blocks16(rounds, state, ctr, ptr.add(off), xor) };
        ctr = ctr.wrapping_add(16);
        off += 16 * BLOCK_LEN;
    }
    while off < len {
        let rest = len - off;
        if rest > 4 * BLOCK_LEN {
            let ks = blocks8(rounds, state, ctr);
            let n = rest.min(8 * BLOCK_LEN);
            for j in 0..n.div_ceil(BLOCK_LEN) {
                // SAFETY: block j starts inside `data`; at most `n - 64 j` bytes from there are touched.
                unsafe {
                    out_block_ymm(ptr.add(off + j * BLOCK_LEN), ks[2 * j], ks[2 * j + 1], n - j * BLOCK_LEN, xor)
                };
            }
            ctr = ctr.wrapping_add(8);
            off += n;
        } else {
            let ks = blocks4_rows(rounds, state, ctr);
            for (j, &k) in ks.iter().enumerate().take(rest.div_ceil(BLOCK_LEN)) {
                // SAFETY: as above, with `rest - 64 j` bytes.
                unsafe { out_block_zmm(ptr.add(off + j * BLOCK_LEN), k, rest - j * BLOCK_LEN, xor) };
            }
            off = len;
        }
    }
}

/// Byte mask selecting the first `min(n, 64)` bytes.
#[inline(always)]
fn mask64(n: usize) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// XORs (or writes) one keystream block `ks` into the `min(avail, 64)` bytes at `p`.
///
/// # Safety
/// `p` must be valid for reads and writes of `min(avail, 64)` bytes; AVX-512 F/BW must be available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
unsafe fn out_block_zmm(p: *mut u8, ks: __m512i, avail: usize, xor: bool) {
    let m = mask64(avail);
    // SAFETY: masked-off bytes are neither read nor written (and cannot fault); the rest are caller-guaranteed.
    unsafe {
        let v = if xor { _mm512_xor_si512(ks, _mm512_maskz_loadu_epi8(m, p as *const i8)) } else { ks };
        _mm512_mask_storeu_epi8(p as *mut i8, m, v);
    }
}

/// XORs (or writes) one keystream block `lo || hi` into the `min(avail, 64)` bytes at `p`.
///
/// # Safety
/// `p` must be valid for reads and writes of `min(avail, 64)` bytes; AVX-512 VL/BW must be available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
unsafe fn out_block_ymm(p: *mut u8, lo: __m256i, hi: __m256i, avail: usize, xor: bool) {
    if avail >= BLOCK_LEN {
        // SAFETY: 64 caller-guaranteed bytes at `p`; loads and stores are unaligned.
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
        let m = mask64(avail);
        let (m_lo, m_hi) = (m as u32, (m >> 32) as u32);
        // SAFETY: masked-off bytes are neither read nor written (and cannot fault); the rest are
        // caller-guaranteed. `p + 32` is at most one past the block, and fully masked when beyond the data.
        unsafe {
            let q = p.wrapping_add(32);
            let (lo, hi) = if xor {
                (
                    _mm256_xor_si256(lo, _mm256_maskz_loadu_epi8(m_lo, p as *const i8)),
                    _mm256_xor_si256(hi, _mm256_maskz_loadu_epi8(m_hi, q as *const i8)),
                )
            } else {
                (lo, hi)
            };
            _mm256_mask_storeu_epi8(p as *mut i8, m_lo, lo);
            _mm256_mask_storeu_epi8(q as *mut i8, m_hi, hi);
        }
    }
}

/// One quarter round on four zmm vectors (16 independent quarter rounds).
macro_rules! qr512 {
    ($a:expr, $b:expr, $c:expr, $d:expr) => {
        $a = _mm512_add_epi32($a, $b);
        $d = _mm512_rol_epi32::<16>(_mm512_xor_si512($d, $a));
        $c = _mm512_add_epi32($c, $d);
        $b = _mm512_rol_epi32::<12>(_mm512_xor_si512($b, $c));
        $a = _mm512_add_epi32($a, $b);
        $d = _mm512_rol_epi32::<8>(_mm512_xor_si512($d, $a));
        $c = _mm512_add_epi32($c, $d);
        $b = _mm512_rol_epi32::<7>(_mm512_xor_si512($b, $c));
    };
}

/// One quarter round on four ymm vectors, rotations with AVX-512VL `vprold`.
macro_rules! qr256 {
    ($a:expr, $b:expr, $c:expr, $d:expr) => {
        $a = _mm256_add_epi32($a, $b);
        $d = _mm256_rol_epi32::<16>(_mm256_xor_si256($d, $a));
        $c = _mm256_add_epi32($c, $d);
        $b = _mm256_rol_epi32::<12>(_mm256_xor_si256($b, $c));
        $a = _mm256_add_epi32($a, $b);
        $d = _mm256_rol_epi32::<8>(_mm256_xor_si256($d, $a));
        $c = _mm256_add_epi32($c, $d);
        $b = _mm256_rol_epi32::<7>(_mm256_xor_si256($b, $c));
    };
}

/// The body of [`blocks16`] and [`blocks16_with`], a macro so that both inline into their callers (a
/// `#[target_feature]` function cannot be `#[inline(always)]`).
macro_rules! blocks16_body {
    ($rounds:ident, $state:ident, $ctr:ident, $p:ident, $xor:ident, $side:ident) => {{
        let lo = _mm512_set1_epi32($ctr as u32 as i32);
        let hi = _mm512_set1_epi32(($ctr >> 32) as u32 as i32);
        let x12_0 = _mm512_add_epi32(lo, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        // Lanes whose word 12 wrapped carry one into word 13.
        let carry = _mm512_cmplt_epu32_mask(x12_0, lo);
        let x13_0 = _mm512_mask_add_epi32(hi, carry, hi, _mm512_set1_epi32(1));
        let w = |i: usize| _mm512_set1_epi32($state[i] as i32);

        let (mut x0, mut x1, mut x2, mut x3) = (w(0), w(1), w(2), w(3));
        let (mut x4, mut x5, mut x6, mut x7) = (w(4), w(5), w(6), w(7));
        let (mut x8, mut x9, mut x10, mut x11) = (w(8), w(9), w(10), w(11));
        let (mut x12, mut x13, mut x14, mut x15) = (x12_0, x13_0, w(14), w(15));
        for k in 0..$rounds / 2 {
            qr512!(x0, x4, x8, x12);
            qr512!(x1, x5, x9, x13);
            qr512!(x2, x6, x10, x14);
            qr512!(x3, x7, x11, x15);
            qr512!(x0, x5, x10, x15);
            qr512!(x1, x6, x11, x12);
            qr512!(x2, x7, x8, x13);
            qr512!(x3, x4, x9, x14);
            $side.step(k);
        }
        $side.step($rounds / 2);
        x0 = _mm512_add_epi32(x0, w(0));
        x1 = _mm512_add_epi32(x1, w(1));
        x2 = _mm512_add_epi32(x2, w(2));
        x3 = _mm512_add_epi32(x3, w(3));
        x4 = _mm512_add_epi32(x4, w(4));
        x5 = _mm512_add_epi32(x5, w(5));
        x6 = _mm512_add_epi32(x6, w(6));
        x7 = _mm512_add_epi32(x7, w(7));
        x8 = _mm512_add_epi32(x8, w(8));
        x9 = _mm512_add_epi32(x9, w(9));
        x10 = _mm512_add_epi32(x10, w(10));
        x11 = _mm512_add_epi32(x11, w(11));
        x12 = _mm512_add_epi32(x12, x12_0);
        x13 = _mm512_add_epi32(x13, x13_0);
        x14 = _mm512_add_epi32(x14, w(14));
        x15 = _mm512_add_epi32(x15, w(15));

        // Stage 1, per group of four words: 4x4 transposes inside each 128-bit lane. Afterwards g{G}[r] holds,
        // in lane k, words 4G..4G+3 of block 4k + r.
        let g0 = transpose4x4(x0, x1, x2, x3);
        let g1 = transpose4x4(x4, x5, x6, x7);
        let g2 = transpose4x4(x8, x9, x10, x11);
        let g3 = transpose4x4(x12, x13, x14, x15);
        // Stage 2, per r: a 4x4 transpose of 128-bit lanes gives whole blocks 4k + r, k = 0..3.
        for r in 0..4 {
            let v0 = _mm512_shuffle_i32x4::<0x88>(g0[r], g1[r]); // lanes: g0.0 g0.2 g1.0 g1.2
            let v1 = _mm512_shuffle_i32x4::<0xdd>(g0[r], g1[r]); // lanes: g0.1 g0.3 g1.1 g1.3
            let v2 = _mm512_shuffle_i32x4::<0x88>(g2[r], g3[r]);
            let v3 = _mm512_shuffle_i32x4::<0xdd>(g2[r], g3[r]);
            let blocks = [
                _mm512_shuffle_i32x4::<0x88>(v0, v2), // block r      (lane 0 of each group)
                _mm512_shuffle_i32x4::<0x88>(v1, v3), // block 4 + r  (lane 1)
                _mm512_shuffle_i32x4::<0xdd>(v0, v2), // block 8 + r  (lane 2)
                _mm512_shuffle_i32x4::<0xdd>(v1, v3), // block 12 + r (lane 3)
            ];
            for (k, ks) in blocks.into_iter().enumerate() {
                // SAFETY: block 4k + r lies inside the caller-guaranteed 1024 bytes; unaligned access.
                unsafe {
                    let q = $p.add((4 * k + r) * BLOCK_LEN) as *mut __m512i;
                    let v = if $xor { _mm512_xor_si512(ks, _mm512_loadu_si512(q)) } else { ks };
                    _mm512_storeu_si512(q, v);
                }
            }
        }
    }};
}

/// 16 blocks from counter `ctr`, XORed into (or written over) the 1024 bytes at `p`.
///
/// # Safety
/// `p` must be valid for reads and writes of 1024 bytes; AVX-512 F/VL/BW must be available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
unsafe fn blocks16(rounds: usize, state: &[u32; 16], ctr: u64, p: *mut u8, xor: bool) {
    let side = &mut NoSide;
    blocks16_body!(rounds, state, ctr, p, xor, side)
}

/// 16 vector blocks from counter `ctr` plus `NS` scalar blocks (counters `ctr + 16..`, 64-bit with carry like the
/// vector lanes) computed on the integer units in the same loop, XORed into (or written over) the
/// `(16 + NS) · 64` bytes at `p`. One scalar block pays off on Zen 4; two spill too many registers and are much
/// slower.
///
/// # Safety
/// `p` must be valid for reads and writes of `(16 + NS) · 64` bytes; AVX-512 F/VL/BW must be available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
unsafe fn blocks16_plus<const NS: usize>(rounds: usize, state: &[u32; 16], ctr: u64, p: *mut u8, xor: bool) {
    let side = &mut ScalarChaCha::<NS> {
        x: core::array::from_fn(|b| {
            let mut x = *state;
            let c = ctr.wrapping_add(16 + b as u64);
            x[12] = c as u32;
            x[13] = (c >> 32) as u32;
            x
        }),
        ctr: ctr.wrapping_add(16),
        last: rounds / 2,
        state,
        out: p.wrapping_add(16 * BLOCK_LEN),
        xor,
    };
    blocks16_body!(rounds, state, ctr, p, xor, side)
}

/// One ChaCha quarter round on four words in general-purpose registers. Written as `asm!` so that LLVM's
/// SLP vectorizer cannot move the scalar share into vector registers, which would defeat its purpose.
#[inline(always)]
fn qr_gpr(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    let (mut wa, mut wb, mut wc, mut wd) = (s[a], s[b], s[c], s[d]);
    // SAFETY: pure register arithmetic (add, xor, rol) on the four operands; no memory, stack or flags
    // contract beyond what `asm!` assumes by default.
    unsafe {
        core::arch::asm!(
            "add {a:e}, {b:e}",
            "xor {d:e}, {a:e}",
            "rol {d:e}, 16",
            "add {c:e}, {d:e}",
            "xor {b:e}, {c:e}",
            "rol {b:e}, 12",
            "add {a:e}, {b:e}",
            "xor {d:e}, {a:e}",
            "rol {d:e}, 8",
            "add {c:e}, {d:e}",
            "xor {b:e}, {c:e}",
            "rol {b:e}, 7",
            a = inout(reg) wa,
            b = inout(reg) wb,
            c = inout(reg) wc,
            d = inout(reg) wd,
            options(pure, nomem, nostack),
        );
    }
    (s[a], s[b], s[c], s[d]) = (wa, wb, wc, wd);
}

#[inline(always)]
fn scalar_double_round(s: &mut [u32; 16]) {
    qr_gpr(s, 0, 4, 8, 12);
    qr_gpr(s, 1, 5, 9, 13);
    qr_gpr(s, 2, 6, 10, 14);
    qr_gpr(s, 3, 7, 11, 15);
    qr_gpr(s, 0, 5, 10, 15);
    qr_gpr(s, 1, 6, 11, 12);
    qr_gpr(s, 2, 7, 8, 13);
    qr_gpr(s, 3, 4, 9, 14);
}

/// `NS` scalar ChaCha blocks run one double round per step alongside the vector double rounds; the last step
/// adds the input and XORs (or writes) them at `out`.
struct ScalarChaCha<'a, const NS: usize> {
    x: [[u32; 16]; NS],
    /// Block counter of the first scalar block.
    ctr: u64,
    last: usize,
    state: &'a [u32; 16],
    out: *mut u8,
    xor: bool,
}

impl<const NS: usize> Side for ScalarChaCha<'_, NS> {
    #[inline(always)]
    fn step(&mut self, k: usize) {
        if k < self.last {
            for x in self.x.iter_mut() {
                scalar_double_round(x);
            }
            return;
        }
        for (b, x) in self.x.iter().enumerate() {
            let c = self.ctr.wrapping_add(b as u64);
            let q = self.out.wrapping_add(b * BLOCK_LEN) as *mut u32;
            for (i, &w) in x.iter().enumerate() {
                let input = match i {
                    12 => c as u32,
                    13 => (c >> 32) as u32,
                    _ => self.state[i],
                };
                let ks = w.wrapping_add(input).to_le();
                // SAFETY: word i of block b of the scalar share, inside the caller-guaranteed bytes
                // (`blocks16_plus`); unaligned access through the caller's raw pointer.
                unsafe {
                    let v = if self.xor { ks ^ q.add(i).read_unaligned() } else { ks };
                    q.add(i).write_unaligned(v);
                }
            }
        }
    }
}

/// Work interleaved with the double rounds of [`blocks16_with`].
trait Side {
    /// Runs after double round `k`, and with `k = rounds / 2` after the feed-forward.
    fn step(&mut self, k: usize);
}

struct NoSide;

impl Side for NoSide {
    #[inline(always)]
    fn step(&mut self, _: usize) {}
}

/// The stitched scalar Poly1305 share of one pass: blocks `S·k/11..S·(k+1)/11` of the chunk at `src` after step
/// `k`, `S` = [`super::STITCH_SCALAR_BLOCKS`].
struct ScalarSide<'a, J> {
    job: &'a mut J,
    src: *const u8,
}

impl<J: super::Stitch> Side for ScalarSide<'_, J> {
    #[inline(always)]
    fn step(&mut self, k: usize) {
        const S: usize = super::STITCH_SCALAR_BLOCKS;
        // SAFETY: `src` is a whole chunk of `data` other than the one the pass writes, and no reference to it is
        // live (see `xor20_stitched_avx512`).
        unsafe { scalar_blocks(self.job, self.src, S * k / 11, S * (k + 1) / 11) }
    }
}

/// Feeds blocks `lo..hi` of the 1 KiB chunk at `src` to the job's scalar chain.
///
/// # Safety
/// `src` must be valid for reading 1024 bytes, not written through any live reference; `hi <= 64`.
#[inline(always)]
unsafe fn scalar_blocks<J: super::Stitch>(job: &mut J, src: *const u8, lo: usize, hi: usize) {
    for j in lo..hi {
        // SAFETY: block j < 64 lies inside the caller-guaranteed 1024 bytes; unaligned reads.
        let [m0, m1] = unsafe {
            let q = src.add(16 * j) as *const u64;
            [q.read_unaligned(), q.add(1).read_unaligned()]
        };
        job.scalar_block(u64::from_le(m0), u64::from_le(m1));
    }
}

/// See [`super::xor20_stitched`]. Falls back to the portable code on a CPU without AVX-512 F/VL/BW or BMI2.
pub(super) fn xor20_stitched<const SEAL: bool, J: super::Stitch>(state: &[u32; 16], data: &mut [u8], job: &mut J) {
    const CHUNK: usize = 16 * BLOCK_LEN;
    const S: usize = super::STITCH_SCALAR_BLOCKS;
    debug_assert!(data.len().is_multiple_of(CHUNK));
    if !(available() && crate::cpu::features().has(Features::BMI2)) {
        let n = data.len() / CHUNK;
        let hash = |job: &mut J, chunk: &[u8]| {
            // SAFETY: `chunk` is 1024 readable bytes, only read while borrowed.
            unsafe { scalar_blocks(job, chunk.as_ptr(), 0, S) };
            job.rest(&chunk[16 * S..]);
        };
        if SEAL {
            super::soft::apply_blocks(20, state, data, true);
            for chunk in data.chunks_exact(CHUNK).take(n.saturating_sub(1)) {
                hash(job, chunk);
            }
        } else {
            for chunk in data.chunks_exact(CHUNK).skip(1) {
                hash(job, chunk);
            }
            super::soft::apply_blocks(20, state, data, true);
        }
        return;
    }
    // SAFETY: AVX-512 F, VL, BW and BMI2 are present (checked just above).
    unsafe { xor20_stitched_avx512::<SEAL, J>(state, data, job) }
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,bmi2")]
fn xor20_stitched_avx512<const SEAL: bool, J: super::Stitch>(state: &[u32; 16], data: &mut [u8], job: &mut J) {
    const CHUNK: usize = 16 * BLOCK_LEN;
    const S: usize = super::STITCH_SCALAR_BLOCKS;
    let mut ctr = state[12] as u64 | (state[13] as u64) << 32;
    let ptr = data.as_mut_ptr();
    let n = data.len() / CHUNK;
    for i in 0..n {
        let p = ptr.wrapping_add(i * CHUNK);
        let has_side = if SEAL { i > 0 } else { i + 1 < n };
        if !has_side {
            // SAFETY: the 1024 bytes at `p` lie inside `data`.
            unsafe { blocks16(20, state, ctr, p, true) };
        } else {
            let src = if SEAL { p.wrapping_sub(CHUNK) } else { p.wrapping_add(CHUNK) } as *const u8;
            let mut side = ScalarSide { job: &mut *job, src };
            // SAFETY: the 1024 bytes at `p` lie inside `data`.
            unsafe { blocks16_with(20, state, ctr, p, true, &mut side) };
            // SAFETY: the rest of the chunk at `src`, inside `data`; the pass wrote only the chunk at `p`, and the
            // shared slice lives only for this call.
            job.rest(unsafe { core::slice::from_raw_parts(src.add(16 * S), CHUNK - 16 * S) });
        }
        ctr = ctr.wrapping_add(16);
    }
}

/// [`blocks16`] with a side job: `side.step(k)` runs after double round `k` (`0..rounds / 2`) and `step(rounds / 2)`
/// after the feed-forward, all before the stores.
///
/// # Safety
/// As [`blocks16`], and the CPU must have BMI2 (`mulx` for the scalar side job).
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,bmi2")]
unsafe fn blocks16_with<S: Side>(rounds: usize, state: &[u32; 16], ctr: u64, p: *mut u8, xor: bool, side: &mut S) {
    blocks16_body!(rounds, state, ctr, p, xor, side)
}

/// 4x4 transposes of 32-bit words inside each 128-bit lane: lane `k` of output `r` holds word `4k + r` of
/// `a`, `b`, `c`, `d`, in that order.
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose4x4(a: __m512i, b: __m512i, c: __m512i, d: __m512i) -> [__m512i; 4] {
    let t0 = _mm512_unpacklo_epi32(a, b);
    let t1 = _mm512_unpackhi_epi32(a, b);
    let t2 = _mm512_unpacklo_epi32(c, d);
    let t3 = _mm512_unpackhi_epi32(c, d);
    [
        _mm512_unpacklo_epi64(t0, t2),
        _mm512_unpackhi_epi64(t0, t2),
        _mm512_unpacklo_epi64(t1, t3),
        _mm512_unpackhi_epi64(t1, t3),
    ]
}

/// 8 keystream blocks from counter `ctr` in ymm registers: block `j` is `out[2j] || out[2j + 1]`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
fn blocks8(rounds: usize, state: &[u32; 16], ctr: u64) -> [__m256i; 16] {
    let lo = _mm256_set1_epi32(ctr as u32 as i32);
    let hi = _mm256_set1_epi32((ctr >> 32) as u32 as i32);
    let x12_0 = _mm256_add_epi32(lo, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    let carry = _mm256_cmplt_epu32_mask(x12_0, lo);
    let x13_0 = _mm256_mask_add_epi32(hi, carry, hi, _mm256_set1_epi32(1));
    let w = |i: usize| _mm256_set1_epi32(state[i] as i32);

    let (mut x0, mut x1, mut x2, mut x3) = (w(0), w(1), w(2), w(3));
    let (mut x4, mut x5, mut x6, mut x7) = (w(4), w(5), w(6), w(7));
    let (mut x8, mut x9, mut x10, mut x11) = (w(8), w(9), w(10), w(11));
    let (mut x12, mut x13, mut x14, mut x15) = (x12_0, x13_0, w(14), w(15));
    for _ in 0..rounds / 2 {
        qr256!(x0, x4, x8, x12);
        qr256!(x1, x5, x9, x13);
        qr256!(x2, x6, x10, x14);
        qr256!(x3, x7, x11, x15);
        qr256!(x0, x5, x10, x15);
        qr256!(x1, x6, x11, x12);
        qr256!(x2, x7, x8, x13);
        qr256!(x3, x4, x9, x14);
    }
    let x = [
        _mm256_add_epi32(x0, w(0)),
        _mm256_add_epi32(x1, w(1)),
        _mm256_add_epi32(x2, w(2)),
        _mm256_add_epi32(x3, w(3)),
        _mm256_add_epi32(x4, w(4)),
        _mm256_add_epi32(x5, w(5)),
        _mm256_add_epi32(x6, w(6)),
        _mm256_add_epi32(x7, w(7)),
        _mm256_add_epi32(x8, w(8)),
        _mm256_add_epi32(x9, w(9)),
        _mm256_add_epi32(x10, w(10)),
        _mm256_add_epi32(x11, w(11)),
        _mm256_add_epi32(x12, x12_0),
        _mm256_add_epi32(x13, x13_0),
        _mm256_add_epi32(x14, w(14)),
        _mm256_add_epi32(x15, w(15)),
    ];
    let lo = transpose8([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]);
    let hi = transpose8([x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]]);
    core::array::from_fn(|i| if i % 2 == 0 { lo[i / 2] } else { hi[i / 2] })
}

/// Transposes 8 vectors of 8 words: in `a[w]` lane `j` is word `w` of block `j`; out `r[j]` is words 0..7 of
/// block `j`.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose8(a: [__m256i; 8]) -> [__m256i; 8] {
    let t0 = _mm256_unpacklo_epi32(a[0], a[1]);
    let t1 = _mm256_unpackhi_epi32(a[0], a[1]);
    let t2 = _mm256_unpacklo_epi32(a[2], a[3]);
    let t3 = _mm256_unpackhi_epi32(a[2], a[3]);
    let t4 = _mm256_unpacklo_epi32(a[4], a[5]);
    let t5 = _mm256_unpackhi_epi32(a[4], a[5]);
    let t6 = _mm256_unpacklo_epi32(a[6], a[7]);
    let t7 = _mm256_unpackhi_epi32(a[6], a[7]);
    let u0 = _mm256_unpacklo_epi64(t0, t2);
    let u1 = _mm256_unpackhi_epi64(t0, t2);
    let u2 = _mm256_unpacklo_epi64(t1, t3);
    let u3 = _mm256_unpackhi_epi64(t1, t3);
    let u4 = _mm256_unpacklo_epi64(t4, t6);
    let u5 = _mm256_unpackhi_epi64(t4, t6);
    let u6 = _mm256_unpacklo_epi64(t5, t7);
    let u7 = _mm256_unpackhi_epi64(t5, t7);
    [
        _mm256_permute2x128_si256::<0x20>(u0, u4),
        _mm256_permute2x128_si256::<0x20>(u1, u5),
        _mm256_permute2x128_si256::<0x20>(u2, u6),
        _mm256_permute2x128_si256::<0x20>(u3, u7),
        _mm256_permute2x128_si256::<0x31>(u0, u4),
        _mm256_permute2x128_si256::<0x31>(u1, u5),
        _mm256_permute2x128_si256::<0x31>(u2, u6),
        _mm256_permute2x128_si256::<0x31>(u3, u7),
    ]
}

/// 4 keystream blocks from counter `ctr` in the row layout (block `j` in 128-bit lane `j` of each row
/// register); returns one zmm per block.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
fn blocks4_rows(rounds: usize, state: &[u32; 16], ctr: u64) -> [__m512i; 4] {
    let row = |r: usize| {
        let s = &state[4 * r..4 * r + 4];
        _mm512_broadcast_i32x4(_mm_setr_epi32(s[0] as i32, s[1] as i32, s[2] as i32, s[3] as i32))
    };
    let c: [u64; 4] = core::array::from_fn(|i| ctr.wrapping_add(i as u64));
    let (n0, n1) = (state[14] as i32, state[15] as i32);
    let d0 = _mm512_setr_epi32(
        c[0] as i32,
        (c[0] >> 32) as i32,
        n0,
        n1,
        c[1] as i32,
        (c[1] >> 32) as i32,
        n0,
        n1,
        c[2] as i32,
        (c[2] >> 32) as i32,
        n0,
        n1,
        c[3] as i32,
        (c[3] >> 32) as i32,
        n0,
        n1,
    );
    let (a0, b0, c0) = (row(0), row(1), row(2));
    let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
    for _ in 0..rounds / 2 {
        qr512!(a, b, c, d);
        // Diagonalise: rotate rows 1, 2, 3 left by 1, 2, 3 words, so diagonals become columns.
        b = _mm512_shuffle_epi32::<0x39>(b);
        c = _mm512_shuffle_epi32::<0x4e>(c);
        d = _mm512_shuffle_epi32::<0x93>(d);
        qr512!(a, b, c, d);
        b = _mm512_shuffle_epi32::<0x93>(b);
        c = _mm512_shuffle_epi32::<0x4e>(c);
        d = _mm512_shuffle_epi32::<0x39>(d);
    }
    a = _mm512_add_epi32(a, a0);
    b = _mm512_add_epi32(b, b0);
    c = _mm512_add_epi32(c, c0);
    d = _mm512_add_epi32(d, d0);
    // 4x4 transpose of 128-bit lanes: block j = lane j of a, b, c, d.
    let v0 = _mm512_shuffle_i32x4::<0x44>(a, b); // a.0 a.1 b.0 b.1
    let v1 = _mm512_shuffle_i32x4::<0xee>(a, b); // a.2 a.3 b.2 b.3
    let v2 = _mm512_shuffle_i32x4::<0x44>(c, d);
    let v3 = _mm512_shuffle_i32x4::<0xee>(c, d);
    [
        _mm512_shuffle_i32x4::<0x88>(v0, v2),
        _mm512_shuffle_i32x4::<0xdd>(v0, v2),
        _mm512_shuffle_i32x4::<0x88>(v1, v3),
        _mm512_shuffle_i32x4::<0xdd>(v1, v3),
    ]
}
