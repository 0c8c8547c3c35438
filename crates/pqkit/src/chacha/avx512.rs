//! ChaCha with AVX-512 (F + VL + BW).
//!
//! - **16 blocks per pass, word-sliced** (the layout of OpenSSL's 16x path): zmm register `x[i]` holds state
//!   word `i` of 16 consecutive blocks, one block per 32-bit lane. A quarter round is 12 instructions on 16
//!   blocks, rotations are single `vprold`s, and no shuffles are needed between column and diagonal rounds.
//!   Afterwards a 16x16 transpose of 32-bit words (`vpunpck{l,h}{dq,qdq}` then two `vshufi32x4` stages) gives
//!   one zmm per block, XORed with the data through unaligned loads and stores.
//! - **Double rounds in `asm!`, quarter rounds interleaved op by op.** On Zen 4 a zmm `vprold` has two cycles of
//!   latency and one pipe pair, so four independent quarter-round chains leave the vector pipes idle about a
//!   quarter of the time: 16 blocks took 64 cycles per double round against a throughput bound of 48. The double
//!   round is therefore one `asm!` block (`double_round16!`) whose order LLVM cannot undo, and bulk
//!   data goes through **32-block passes**: two independent 16-block groups in all 32 zmm registers, eight
//!   chains per half-round (`double_round32!`), about 3.5 instead of 4.0 cycles per block and double round.
//! - **The next pass's data is prefetched** (`prefetch_pass`) when a 32-block pass starts: for inputs beyond
//!   the caches, the loads of the XOR otherwise wait for memory at the end of every pass (on Zen 5, 10 MiB ran
//!   at half the 1 MiB speed without it, and at the same speed with it).
//! - **First double round precomputed in part** (`Pass16`): columns 2 and 3 hold no counter word, so their
//!   first quarter rounds are the same in every lane and every pass.
//! - **Stitched AEAD pass** (`xor20_stitched`): the same 32-block pass with scalar Poly1305 blocks of a
//!   neighbouring chunk interleaved between the double rounds.
//! - A tail of 9 to 15 blocks takes a whole 16-block pass that writes only the bytes present.
//! - **8 blocks per pass in ymm** (AVX-512VL gives `vprold` on ymm) for remainders of 257 to 512 bytes.
//! - **4 blocks in the row layout** (one block per 128-bit lane of a zmm) for a last 65 to 256 bytes; the
//!   diagonal rotations leave row 1 in place, so no shuffle sits on the serial chain. On AMD Zen 4, which runs a
//!   512-bit operation as two 256-bit halves, [`Backend::Avx512Zen4`] takes a whole call of 65 to 256 bytes
//!   through the AVX2 backend's 4-block row pass instead (two blocks per ymm register set: one set for two
//!   blocks, half the vector work of the zmm rows; two independent sets for three or four). On Zen 4 a 64-byte
//!   ChaCha20-Poly1305 seal (two blocks) measured 151-154 ns against 162-174 ns (four interleaved pairs, best of
//!   40 runs each), while the same zmm rows in a function of their own measured 166-168 ns; ChaCha20 calls of
//!   128, 192 and 256 bytes 144, 158 and 155 ns against 165, 164 and 167 ns.
//! - **One block** for a last at most 64 bytes, chosen by the dispatch as on AVX2 (see the AVX2 module):
//!   [`Backend::Avx512`] computes it in the row layout on 128-bit registers (`block_rows`, rotations single
//!   `vprold`s: 12 operations per quarter round on the serial chain); [`Backend::Avx512Zen5`] on the integer units
//!   (`block_scalar`): every vector pass is bound by its serial quarter-round chain, which on Zen 5 (two-cycle
//!   vector integer latency) made 64 bytes cost as much as a 16-block pass; the scalar chain has one-cycle
//!   operations. A call of at most 64 bytes goes straight to it, before any pass's set-up.
//! - Partial blocks use byte-masked loads and stores (`vmovdqu8` with a mask, AVX512BW): no scalar tail loop
//!   and no access outside the data.
//!
//! The 64-bit block counter of lane `j` is `ctr + j`: `j` is added to word 12, and each lane whose word 12
//! wrapped (it is then below the starting word 12) adds one to word 13.
#![allow(unsafe_code)]

use super::{BLOCK_LEN, Backend};
use crate::dispatch::Checked;
use crate::x86::transpose::{transpose4x4_epi32_lanes, transpose8x8_epi32};
use core::arch::x86_64::*;

/// See [`super::apply_blocks_at`]: no kernel here reads words 12 and 13 of `state`, only `ctr`.
pub(super) fn apply_blocks(
    backend: Checked<Backend>,
    rounds: usize,
    state: &[u32; 16],
    ctr: u64,
    data: &mut [u8],
    xor: bool,
) {
    assert!(backend.covers(Backend::Avx512));
    let rows = backend.get() != Backend::Avx512Zen5;
    if data.len() <= BLOCK_LEN {
        // SAFETY: as below; `data` holds `0 < len <= 64` bytes (the caller passes no empty data).
        unsafe { one_block(rows, rounds, state, ctr, data.as_mut_ptr(), data.len(), xor) };
        return;
    }
    if backend.get() == Backend::Avx512Zen4 && data.len() <= 4 * BLOCK_LEN {
        assert!(backend.covers(Backend::Avx2));
        // SAFETY: `backend` is a `Checked` covering Backend::Avx2, so the CPU has AVX2, BMI1 and BMI2, the features
        // `short` enables; `data` holds `64 < len <= 256` bytes.
        unsafe { super::avx2::short(rounds, state, ctr, data.as_mut_ptr(), data.len(), xor) };
        return;
    }
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU has AVX-512 F, VL and BW.
    unsafe { apply_avx512(rows, rounds, state, ctr, data, xor) }
}

/// One block (`0 < avail <= 64` bytes at `p`) from counter `ctr`: in the row layout when `rows`, else on the
/// integer units (see the module docs).
///
/// # Safety
/// `p` must be valid for reads and writes of `avail` bytes, `0 < avail <= 64`; AVX-512 F, VL, BW and BMI2 must be
/// available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,bmi2")]
unsafe fn one_block(rows: bool, rounds: usize, state: &[u32; 16], ctr: u64, p: *mut u8, avail: usize, xor: bool) {
    // SAFETY: forwarded from the caller.
    unsafe {
        if rows {
            block_rows(rounds, state, ctr, p, avail, xor)
        } else {
            block_scalar(rounds, state, ctr, p, avail, xor)
        }
    }
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,bmi2")]
fn apply_avx512(rows: bool, rounds: usize, state: &[u32; 16], mut ctr: u64, data: &mut [u8], xor: bool) {
    let len = data.len();
    let ptr = data.as_mut_ptr();
    let mut off = 0usize;
    if len > 8 * BLOCK_LEN && len <= 16 * BLOCK_LEN {
        // SAFETY: the `len` bytes lie inside `data`.
        unsafe { blocks16_single(rounds, state, ctr, ptr, xor, len) };
        return;
    }
    if len > 8 * BLOCK_LEN {
        // Only the 16- and 32-block passes use the precomputed first round; short inputs skip its set-up.
        let pre = Pass16::new(state);
        while len - off >= 32 * BLOCK_LEN {
            if xor {
                // The next pass's data, requested now so that its cache misses overlap this pass's rounds
                // instead of stalling the XOR at the end of the next one (inputs beyond the caches).
                prefetch_pass(ptr.wrapping_add(off + 32 * BLOCK_LEN), (len - off - 32 * BLOCK_LEN).min(32 * BLOCK_LEN));
            }
            // SAFETY: the 2048 bytes from `off` lie inside `data`.
            unsafe { blocks32(rounds, &pre, ctr, ptr.add(off), xor) };
            ctr = ctr.wrapping_add(32);
            off += 32 * BLOCK_LEN;
        }
        while len - off >= 16 * BLOCK_LEN {
            // SAFETY: the 1024 bytes from `off` lie inside `data`.
            unsafe { blocks16(rounds, &pre, ctr, ptr.add(off), xor) };
            ctr = ctr.wrapping_add(16);
            off += 16 * BLOCK_LEN;
        }
        let rest = len - off;
        if rest > 8 * BLOCK_LEN {
            // 9 to 15 blocks: a whole 16-block pass costs less than an 8-block pass plus another (on Zen 4 about
            // 520 against 620 TSC ticks for 12 blocks).
            // SAFETY: the `rest` bytes from `off` lie inside `data`.
            unsafe { blocks16_partial(rounds, &pre, ctr, ptr.add(off), xor, rest) };
            off = len;
        }
    }
    while off < len {
        let rest = len - off;
        if rest <= BLOCK_LEN {
            // SAFETY: the `rest` bytes from `off` lie inside `data`.
            unsafe { one_block(rows, rounds, state, ctr, ptr.add(off), rest, xor) };
            off = len;
        } else if rest > 4 * BLOCK_LEN {
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

/// Asks for the cache lines of the `n` bytes at `p` (a software prefetch: no access, no fault, no effect on the
/// result). The addresses depend only on the data's position and length, never on its content.
#[inline(always)]
fn prefetch_pass(p: *const u8, n: usize) {
    let mut i = 0;
    while i < n {
        // SAFETY: a prefetch is a hint that neither reads nor writes memory and cannot fault, whatever the
        // address; `wrapping_add` keeps the pointer arithmetic defined.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(i) as *const i8) };
        i += 64;
    }
}

/// One block (the last `avail <= 64` bytes of a call) on the integer units, XORed into (or written over) the
/// bytes at `p` with a masked vector load and store.
///
/// A vector pass is bound by its serial quarter-round chain (12 dependent operations per half-round, plus the
/// row rotations of the row layout) however few blocks it computes; on Zen 5, with two-cycle vector integer
/// latency, 64 bytes through the 4-block row pass cost as much as a 16-block pass. The scalar chain has
/// one-cycle operations, and one block is a quarter of the row pass's work (less work on every CPU). Two
/// blocks on the integer units, interleaved or one after the other, lost to the row pass on Zen 5 (spills).
///
/// # Safety
/// `p` must be valid for reads and writes of `avail` bytes, `0 < avail <= 64`; AVX-512 F/BW must be available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,bmi2")]
unsafe fn block_scalar(rounds: usize, state: &[u32; 16], ctr: u64, p: *mut u8, avail: usize, xor: bool) {
    let mut s = *state;
    s[12] = ctr as u32;
    s[13] = (ctr >> 32) as u32;
    let mut ks = super::soft::block_words(&s, rounds, super::avx2::pin_gpr);
    // One masked vector store (or XOR); LLVM builds the zmm from the registers with masked broadcasts. XORing
    // eight bytes at a time from general-purpose registers (`avx2::out_words`, which gains there) gave nothing
    // here at 64 B (86.5 against 86.8 ns) and the AEADs' 1 KiB seal and open lost 1-3 %.
    // SAFETY: `ks` is 64 readable bytes; `p` holds `avail <= 64` caller-guaranteed bytes.
    unsafe { out_block_zmm(p, _mm512_loadu_si512(ks.as_ptr() as *const __m512i), avail, xor) };
    zeroize::Zeroize::zeroize(&mut ks);
    zeroize::Zeroize::zeroize(&mut s);
}

/// One block (the last `avail <= 64` bytes of a call) in the row layout on 128-bit registers, XORed into (or
/// written over) the bytes at `p` with a masked store: as `avx2::block_rows`, with every rotation one `vprold`
/// (AVX-512VL), so 12 operations per quarter round on the serial chain. The diagonal rotations leave row 1, the
/// last one a quarter round writes, in place.
///
/// # Safety
/// `p` must be valid for reads and writes of `avail` bytes, `0 < avail <= 64`; AVX-512 F, VL and BW must be
/// available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
unsafe fn block_rows(rounds: usize, state: &[u32; 16], ctr: u64, p: *mut u8, avail: usize, xor: bool) {
    let row = |r: usize| {
        _mm_setr_epi32(state[4 * r] as i32, state[4 * r + 1] as i32, state[4 * r + 2] as i32, state[4 * r + 3] as i32)
    };
    let (a0, b0, c0) = (row(0), row(1), row(2));
    let d0 = _mm_setr_epi32(ctr as i32, (ctr >> 32) as i32, state[14] as i32, state[15] as i32);
    let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
    let quarter = |a: &mut __m128i, b: &mut __m128i, c: &mut __m128i, d: &mut __m128i| {
        *a = _mm_add_epi32(*a, *b);
        *d = _mm_rol_epi32::<16>(_mm_xor_si128(*d, *a));
        *c = _mm_add_epi32(*c, *d);
        *b = _mm_rol_epi32::<12>(_mm_xor_si128(*b, *c));
        *a = _mm_add_epi32(*a, *b);
        *d = _mm_rol_epi32::<8>(_mm_xor_si128(*d, *a));
        *c = _mm_add_epi32(*c, *d);
        *b = _mm_rol_epi32::<7>(_mm_xor_si128(*b, *c));
    };
    for _ in 0..rounds / 2 {
        quarter(&mut a, &mut b, &mut c, &mut d);
        a = _mm_shuffle_epi32::<0x93>(a);
        c = _mm_shuffle_epi32::<0x39>(c);
        d = _mm_shuffle_epi32::<0x4e>(d);
        quarter(&mut a, &mut b, &mut c, &mut d);
        a = _mm_shuffle_epi32::<0x39>(a);
        c = _mm_shuffle_epi32::<0x93>(c);
        d = _mm_shuffle_epi32::<0x4e>(d);
    }
    let lo = _mm256_set_m128i(_mm_add_epi32(b, b0), _mm_add_epi32(a, a0));
    let hi = _mm256_set_m128i(_mm_add_epi32(d, d0), _mm_add_epi32(c, c0));
    // SAFETY: the caller guarantees `avail <= 64` bytes at `p`.
    unsafe { out_block_zmm(p, _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi), avail, xor) };
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

/// The counter-independent part of a 16-block pass, computed once per call.
///
/// Columns 2 and 3 (words 2, 6, 10, 14 and 3, 7, 11, 15) hold no block-counter word, so their first quarter
/// rounds give the same result in every lane of every pass; so does the first addition of columns 0 and 1
/// (`x0 + x4`, `x1 + x5`). A pass starts from these words instead of repeating 26 of its 960 vector operations.
struct Pass16<'a> {
    /// The input state; words 12 and 13 are replaced by each lane's block counter.
    s: &'a [u32; 16],
    /// Words 2, 3, 6, 7, 10, 11, 14 and 15 after the first column round; word 0 is `s0 + s4`, word 1 `s1 + s5`.
    r: [u32; 16],
}

impl<'a> Pass16<'a> {
    #[inline(always)]
    fn new(s: &'a [u32; 16]) -> Self {
        use super::soft::quarter_round;
        let mut r = [0u32; 16];
        (r[2], r[6], r[10], r[14]) = quarter_round(s[2], s[6], s[10], s[14]);
        (r[3], r[7], r[11], r[15]) = quarter_round(s[3], s[7], s[11], s[15]);
        r[0] = s[0].wrapping_add(s[4]);
        r[1] = s[1].wrapping_add(s[5]);
        Pass16 { s, r }
    }
}

/// The first half of a column quarter round whose `a += b` is already done (`a` holds the sum), in zmm.
macro_rules! qr512_tail {
    ($a:expr, $b:expr, $c:expr, $d:expr) => {
        $d = _mm512_rol_epi32::<16>(_mm512_xor_si512($d, $a));
        $c = _mm512_add_epi32($c, $d);
        $b = _mm512_rol_epi32::<12>(_mm512_xor_si512($b, $c));
        $a = _mm512_add_epi32($a, $b);
        $d = _mm512_rol_epi32::<8>(_mm512_xor_si512($d, $a));
        $c = _mm512_add_epi32($c, $d);
        $b = _mm512_rol_epi32::<7>(_mm512_xor_si512($b, $c));
    };
}

/// The asm text of one half-round (four or eight independent quarter rounds on named zmm operands), interleaved
/// op by op: step 1 of every quarter round, then step 2 of every one, and so on, so that the out-of-order core
/// always has independent work next to each `vprold`.
macro_rules! half_round_text {
    ($(($a:literal, $b:literal, $c:literal, $d:literal)),+) => {
        concat!(
            $("vpaddd {", $a, "}, {", $a, "}, {", $b, "}\n",)+
            $("vpxord {", $d, "}, {", $d, "}, {", $a, "}\n",)+
            $("vprold {", $d, "}, {", $d, "}, 16\n",)+
            $("vpaddd {", $c, "}, {", $c, "}, {", $d, "}\n",)+
            $("vpxord {", $b, "}, {", $b, "}, {", $c, "}\n",)+
            $("vprold {", $b, "}, {", $b, "}, 12\n",)+
            $("vpaddd {", $a, "}, {", $a, "}, {", $b, "}\n",)+
            $("vpxord {", $d, "}, {", $d, "}, {", $a, "}\n",)+
            $("vprold {", $d, "}, {", $d, "}, 8\n",)+
            $("vpaddd {", $c, "}, {", $c, "}, {", $d, "}\n",)+
            $("vpxord {", $b, "}, {", $b, "}, {", $c, "}\n",)+
            $("vprold {", $b, "}, {", $b, "}, 7\n",)+
        )
    };
}

/// One double round on 16 blocks: zmm `x0..x15` hold state words 0..15, one block per lane.
macro_rules! double_round16 {
    ($x0:ident, $x1:ident, $x2:ident, $x3:ident, $x4:ident, $x5:ident, $x6:ident, $x7:ident,
     $x8:ident, $x9:ident, $x10:ident, $x11:ident, $x12:ident, $x13:ident, $x14:ident, $x15:ident) => {
        core::arch::asm!(
            half_round_text!(("x0", "x4", "x8", "x12"), ("x1", "x5", "x9", "x13"),
                             ("x2", "x6", "x10", "x14"), ("x3", "x7", "x11", "x15")),
            half_round_text!(("x0", "x5", "x10", "x15"), ("x1", "x6", "x11", "x12"),
                             ("x2", "x7", "x8", "x13"), ("x3", "x4", "x9", "x14")),
            x0 = inout(zmm_reg) $x0, x1 = inout(zmm_reg) $x1, x2 = inout(zmm_reg) $x2, x3 = inout(zmm_reg) $x3,
            x4 = inout(zmm_reg) $x4, x5 = inout(zmm_reg) $x5, x6 = inout(zmm_reg) $x6, x7 = inout(zmm_reg) $x7,
            x8 = inout(zmm_reg) $x8, x9 = inout(zmm_reg) $x9, x10 = inout(zmm_reg) $x10, x11 = inout(zmm_reg) $x11,
            x12 = inout(zmm_reg) $x12, x13 = inout(zmm_reg) $x13, x14 = inout(zmm_reg) $x14,
            x15 = inout(zmm_reg) $x15,
            options(pure, nomem, nostack, preserves_flags),
        )
    };
}

/// One double round on two independent 16-block groups, `a0..a15` and `b0..b15`: eight quarter rounds per
/// half-round, interleaved like `double_round16!`'s four. Takes all 32 zmm registers.
macro_rules! double_round32 {
    ($a0:ident, $a1:ident, $a2:ident, $a3:ident, $a4:ident, $a5:ident, $a6:ident, $a7:ident,
     $a8:ident, $a9:ident, $a10:ident, $a11:ident, $a12:ident, $a13:ident, $a14:ident, $a15:ident,
     $b0:ident, $b1:ident, $b2:ident, $b3:ident, $b4:ident, $b5:ident, $b6:ident, $b7:ident,
     $b8:ident, $b9:ident, $b10:ident, $b11:ident, $b12:ident, $b13:ident, $b14:ident, $b15:ident) => {
        core::arch::asm!(
            half_round_text!(("a0", "a4", "a8", "a12"), ("a1", "a5", "a9", "a13"),
                             ("a2", "a6", "a10", "a14"), ("a3", "a7", "a11", "a15"),
                             ("b0", "b4", "b8", "b12"), ("b1", "b5", "b9", "b13"),
                             ("b2", "b6", "b10", "b14"), ("b3", "b7", "b11", "b15")),
            half_round_text!(("a0", "a5", "a10", "a15"), ("a1", "a6", "a11", "a12"),
                             ("a2", "a7", "a8", "a13"), ("a3", "a4", "a9", "a14"),
                             ("b0", "b5", "b10", "b15"), ("b1", "b6", "b11", "b12"),
                             ("b2", "b7", "b8", "b13"), ("b3", "b4", "b9", "b14")),
            a0 = inout(zmm_reg) $a0, a1 = inout(zmm_reg) $a1, a2 = inout(zmm_reg) $a2, a3 = inout(zmm_reg) $a3,
            a4 = inout(zmm_reg) $a4, a5 = inout(zmm_reg) $a5, a6 = inout(zmm_reg) $a6, a7 = inout(zmm_reg) $a7,
            a8 = inout(zmm_reg) $a8, a9 = inout(zmm_reg) $a9, a10 = inout(zmm_reg) $a10, a11 = inout(zmm_reg) $a11,
            a12 = inout(zmm_reg) $a12, a13 = inout(zmm_reg) $a13, a14 = inout(zmm_reg) $a14,
            a15 = inout(zmm_reg) $a15,
            b0 = inout(zmm_reg) $b0, b1 = inout(zmm_reg) $b1, b2 = inout(zmm_reg) $b2, b3 = inout(zmm_reg) $b3,
            b4 = inout(zmm_reg) $b4, b5 = inout(zmm_reg) $b5, b6 = inout(zmm_reg) $b6, b7 = inout(zmm_reg) $b7,
            b8 = inout(zmm_reg) $b8, b9 = inout(zmm_reg) $b9, b10 = inout(zmm_reg) $b10, b11 = inout(zmm_reg) $b11,
            b12 = inout(zmm_reg) $b12, b13 = inout(zmm_reg) $b13, b14 = inout(zmm_reg) $b14,
            b15 = inout(zmm_reg) $b15,
            options(pure, nomem, nostack, preserves_flags),
        )
    };
}

/// The counter words of a 16-block group starting at block counter `ctr`: word 12 of lane `j` is the low half
/// of `ctr + j`, and lanes whose word 12 wrapped carry one into word 13.
#[inline]
#[target_feature(enable = "avx512f")]
fn counters(ctr: u64) -> (__m512i, __m512i) {
    let lo = _mm512_set1_epi32(ctr as u32 as i32);
    let hi = _mm512_set1_epi32((ctr >> 32) as u32 as i32);
    let x12 = _mm512_add_epi32(lo, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    let carry = _mm512_cmplt_epu32_mask(x12, lo);
    (x12, _mm512_mask_add_epi32(hi, carry, hi, _mm512_set1_epi32(1)))
}

/// Double round 0 of a 16-block group with counter words `$x12_0`, `$x13_0`: columns 0 and 1 from their
/// precomputed first addition, columns 2 and 3 precomputed whole (see `Pass16`), then the diagonal round. Binds
/// `$x0..$x15`.
macro_rules! first_double_round {
    ($pre:ident, $x12_0:ident, $x13_0:ident; $x0:ident, $x1:ident, $x2:ident, $x3:ident, $x4:ident, $x5:ident,
     $x6:ident, $x7:ident, $x8:ident, $x9:ident, $x10:ident, $x11:ident, $x12:ident, $x13:ident, $x14:ident,
     $x15:ident) => {
        let w = |i: usize| _mm512_set1_epi32($pre.s[i] as i32);
        let r = |i: usize| _mm512_set1_epi32($pre.r[i] as i32);
        let (mut $x0, mut $x4, mut $x8, mut $x12) = (r(0), w(4), w(8), $x12_0);
        qr512_tail!($x0, $x4, $x8, $x12);
        let (mut $x1, mut $x5, mut $x9, mut $x13) = (r(1), w(5), w(9), $x13_0);
        qr512_tail!($x1, $x5, $x9, $x13);
        let (mut $x2, mut $x6, mut $x10, mut $x14) = (r(2), r(6), r(10), r(14));
        let (mut $x3, mut $x7, mut $x11, mut $x15) = (r(3), r(7), r(11), r(15));
        qr512!($x0, $x5, $x10, $x15);
        qr512!($x1, $x6, $x11, $x12);
        qr512!($x2, $x7, $x8, $x13);
        qr512!($x3, $x4, $x9, $x14);
    };
}

/// Feed-forward, transpose and output of a finished 16-block group `$x` (`[__m512i; 16]`): adds the input
/// (`$s`, with counter words `$x12_0`, `$x13_0`), turns the 16 word-sliced registers into 16 blocks and XORs them
/// into (or writes them over) the 1024 bytes at `$p`, which the caller guarantees. A macro so that it inlines (a
/// `#[target_feature]` function cannot be `#[inline(always)]`, and LLVM kept it out of line, passing the 16
/// registers through memory).
macro_rules! finish16 {
    ($x:ident, $s:expr, $x12_0:ident, $x13_0:ident, $p:expr, $xor:ident) => {
        finish16!($x, $s, $x12_0, $x13_0, $p, $xor, 16 * BLOCK_LEN)
    };
    // Only the first `$avail` bytes (at most 1024) at `$p` are touched, the last block with a byte mask.
    ($x:ident, $s:expr, $x12_0:ident, $x13_0:ident, $p:expr, $xor:ident, $avail:expr) => {{
        let mut x = $x;
        for (i, v) in x.iter_mut().enumerate() {
            let input = match i {
                12 => $x12_0,
                13 => $x13_0,
                _ => _mm512_set1_epi32($s[i] as i32),
            };
            *v = _mm512_add_epi32(*v, input);
        }
        // Stage 1, per group of four words: 4x4 transposes inside each 128-bit lane. Afterwards g{G}[r] holds,
        // in lane k, words 4G..4G+3 of block 4k + r.
        let g0 = transpose4x4_epi32_lanes(x[0], x[1], x[2], x[3]);
        let g1 = transpose4x4_epi32_lanes(x[4], x[5], x[6], x[7]);
        let g2 = transpose4x4_epi32_lanes(x[8], x[9], x[10], x[11]);
        let g3 = transpose4x4_epi32_lanes(x[12], x[13], x[14], x[15]);
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
                let at = (4 * k + r) * BLOCK_LEN;
                if $avail >= at + BLOCK_LEN {
                    // SAFETY: block 4k + r lies inside the caller-guaranteed bytes; unaligned access.
                    unsafe {
                        let q = $p.add(at) as *mut __m512i;
                        let v = if $xor { _mm512_xor_si512(ks, _mm512_loadu_si512(q)) } else { ks };
                        _mm512_storeu_si512(q, v);
                    }
                } else if $avail > at {
                    // SAFETY: the block starts inside the caller-guaranteed bytes, and only `avail - at` of its
                    // bytes are touched.
                    unsafe { out_block_zmm($p.add(at), ks, $avail - at, $xor) };
                }
            }
        }
    }};
}

/// The body of [`blocks16`] and [`blocks16_partial`], a macro so that both inline into their callers (a
/// `#[target_feature]` function cannot be `#[inline(always)]`).
macro_rules! blocks16_body {
    ($rounds:ident, $pre:ident, $ctr:ident, $p:ident, $xor:ident, $avail:expr) => {{
        let (x12_0, x13_0) = counters($ctr);
        first_double_round!($pre, x12_0, x13_0; x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15);
        for _ in 1..$rounds / 2 {
            // SAFETY: register-only vector arithmetic; AVX-512F is enabled for the enclosing function.
            unsafe { double_round16!(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15) };
        }
        let x = [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15];
        finish16!(x, $pre.s, x12_0, x13_0, $p, $xor, $avail);
    }};
}

/// The body of [`blocks32`] and [`blocks32_with`] (see `blocks16_body!`): `$side.step(k)` runs after double
/// round `k` and with `k = rounds / 2` after the last one.
macro_rules! blocks32_body {
    ($rounds:ident, $pre:ident, $ctr:ident, $p:ident, $xor:ident, $side:ident) => {{
        let (a12_0, a13_0) = counters($ctr);
        let (b12_0, b13_0) = counters($ctr.wrapping_add(16));
        first_double_round!($pre, a12_0, a13_0; a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15);
        first_double_round!($pre, b12_0, b13_0; b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15);
        $side.step(0);
        for k in 1..$rounds / 2 {
            // SAFETY: register-only vector arithmetic; AVX-512F is enabled for the enclosing function.
            unsafe {
                double_round32!(
                    a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, b0, b1, b2, b3, b4, b5, b6,
                    b7, b8, b9, b10, b11, b12, b13, b14, b15
                )
            };
            $side.step(k);
        }
        $side.step($rounds / 2);
        let a = [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15];
        let b = [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15];
        // The caller guarantees the 2048 bytes at `$p`.
        finish16!(a, $pre.s, a12_0, a13_0, $p, $xor);
        finish16!(b, $pre.s, b12_0, b13_0, $p.wrapping_add(16 * BLOCK_LEN), $xor);
    }};
}

/// 32 blocks from counter `ctr` as two independent 16-block groups whose quarter rounds are interleaved: with
/// eight independent dependency chains per half-round instead of four, the vector pipes stay busier (on Zen 4
/// about 3.5 instead of 4.0 cycles per block and double round).
///
/// # Safety
/// `p` must be valid for reads and writes of 2048 bytes; AVX-512 F/VL/BW must be available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
unsafe fn blocks32(rounds: usize, pre: &Pass16, ctr: u64, p: *mut u8, xor: bool) {
    let side = &mut NoSide;
    blocks32_body!(rounds, pre, ctr, p, xor, side)
}

/// [`blocks32`] with a side job: `side.step(k)` runs after double round `k` (`0..rounds / 2`) and
/// `step(rounds / 2)` after the last, all before the feed-forward and the stores.
///
/// # Safety
/// As [`blocks32`], and the CPU must have BMI2 (`mulx` for the scalar side job).
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,bmi2")]
unsafe fn blocks32_with<S: Side>(rounds: usize, pre: &Pass16, ctr: u64, p: *mut u8, xor: bool, side: &mut S) {
    blocks32_body!(rounds, pre, ctr, p, xor, side)
}

/// 16 blocks from counter `ctr`, XORed into (or written over) the 1024 bytes at `p`.
///
/// # Safety
/// `p` must be valid for reads and writes of 1024 bytes; AVX-512 F/VL/BW must be available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
unsafe fn blocks16(rounds: usize, pre: &Pass16, ctr: u64, p: *mut u8, xor: bool) {
    blocks16_body!(rounds, pre, ctr, p, xor, 16 * BLOCK_LEN)
}

/// [`blocks16`] for the last `avail` (< 1024) bytes of the data: all 16 blocks are computed, only `avail` bytes at
/// `p` are touched.
///
/// # Safety
/// `p` must be valid for reads and writes of `avail` bytes; AVX-512 F/VL/BW must be available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
unsafe fn blocks16_partial(rounds: usize, pre: &Pass16, ctr: u64, p: *mut u8, xor: bool, avail: usize) {
    blocks16_body!(rounds, pre, ctr, p, xor, avail)
}

/// Work interleaved with the double rounds of [`blocks32_with`].
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
/// `k`, `S` = [`super::STITCH_SCALAR_BLOCKS`] (ChaCha20: ten double rounds, eleven steps).
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

/// Feeds 16-byte blocks `lo..hi` of the chunk at `src` to the job's scalar chain.
///
/// # Safety
/// `src` must be valid for reading a whole [`super::STITCH_CHUNK`], not written through any live reference;
/// `16 hi <= STITCH_CHUNK`.
#[inline(always)]
unsafe fn scalar_blocks<J: super::Stitch>(job: &mut J, src: *const u8, lo: usize, hi: usize) {
    debug_assert!(16 * hi <= super::STITCH_CHUNK);
    for j in lo..hi {
        // SAFETY: block j lies inside the caller-guaranteed chunk; unaligned reads.
        let [m0, m1] = unsafe {
            let q = src.add(16 * j) as *const u64;
            [q.read_unaligned(), q.add(1).read_unaligned()]
        };
        job.scalar_block(u64::from_le(m0), u64::from_le(m1));
    }
}

/// See [`super::xor20_stitched`].
pub(super) fn xor20_stitched<const SEAL: bool, J: super::Stitch>(
    backend: Checked<Backend>,
    state: &[u32; 16],
    data: &mut [u8],
    job: &mut J,
) {
    debug_assert!(data.len().is_multiple_of(super::STITCH_CHUNK));
    assert!(backend.covers(Backend::Avx512));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx512, so the CPU has AVX-512 F, VL,
    // BW and BMI2.
    unsafe { xor20_stitched_avx512::<SEAL, J>(state, data, job) }
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,bmi2")]
fn xor20_stitched_avx512<const SEAL: bool, J: super::Stitch>(state: &[u32; 16], data: &mut [u8], job: &mut J) {
    const CHUNK: usize = super::STITCH_CHUNK;
    const S: usize = super::STITCH_SCALAR_BLOCKS;
    let mut ctr = super::avx2::counter(state);
    let ptr = data.as_mut_ptr();
    let n = data.len() / CHUNK;
    let pre = Pass16::new(state);
    for i in 0..n {
        let p = ptr.wrapping_add(i * CHUNK);
        let has_side = if SEAL { i > 0 } else { i + 1 < n };
        if !has_side {
            // SAFETY: the chunk at `p` lies inside `data`.
            unsafe { blocks32(20, &pre, ctr, p, true) };
        } else {
            let src = if SEAL { p.wrapping_sub(CHUNK) } else { p.wrapping_add(CHUNK) } as *const u8;
            let mut side = ScalarSide { job: &mut *job, src };
            // SAFETY: the chunk at `p` lies inside `data`.
            unsafe { blocks32_with(20, &pre, ctr, p, true, &mut side) };
            // SAFETY: the rest of the chunk at `src`, inside `data`; the pass wrote only the chunk at `p`, and the
            // shared slice lives only for this call.
            job.rest(unsafe { core::slice::from_raw_parts(src.add(16 * S), CHUNK - 16 * S) });
        }
        ctr = ctr.wrapping_add(32);
    }
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
    let lo = transpose8x8_epi32([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]);
    let hi = transpose8x8_epi32([x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]]);
    core::array::from_fn(|i| if i % 2 == 0 { lo[i / 2] } else { hi[i / 2] })
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
        // Diagonalise, so that diagonals become columns: rotate row 0 right by one word, row 2 left by one and
        // row 3 left by two; column i then holds diagonal i - 1 (a[i-1], b[i], c[i+1], d[i+2]). Row 1, the last
        // one a quarter round writes, stays in place, so no shuffle sits on the serial chain from one
        // half-round to the next (the usual rotation of rows 1, 2, 3 puts one there: about 8 % of the rounds'
        // latency with two-cycle vector operations).
        a = _mm512_shuffle_epi32::<0x93>(a);
        c = _mm512_shuffle_epi32::<0x39>(c);
        d = _mm512_shuffle_epi32::<0x4e>(d);
        qr512!(a, b, c, d);
        a = _mm512_shuffle_epi32::<0x39>(a);
        c = _mm512_shuffle_epi32::<0x93>(c);
        d = _mm512_shuffle_epi32::<0x4e>(d);
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

/// One 16-block pass for a whole call of 9 to 16 blocks, without the precomputed first round.
///
/// # Safety
/// `p` must be valid for reads and writes of `avail` bytes; AVX-512 F/VL/BW must be available.
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw")]
unsafe fn blocks16_single(rounds: usize, s: &[u32; 16], ctr: u64, p: *mut u8, xor: bool, avail: usize) {
    let (x12_0, x13_0) = counters(ctr);
    let w = |i: usize| _mm512_set1_epi32(s[i] as i32);
    let (mut x0, mut x1, mut x2, mut x3, mut x4, mut x5, mut x6, mut x7) =
        (w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7));
    let (mut x8, mut x9, mut x10, mut x11, mut x12, mut x13, mut x14, mut x15) =
        (w(8), w(9), w(10), w(11), x12_0, x13_0, w(14), w(15));
    for _ in 0..rounds / 2 {
        // SAFETY: register-only vector arithmetic; AVX-512F is enabled for the enclosing function.
        unsafe { double_round16!(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15) };
    }
    let x = [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15];
    finish16!(x, s, x12_0, x13_0, p, xor, avail);
}
