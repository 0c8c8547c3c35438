//! VAES + VPCLMULQDQ backend on 256-bit lanes (x86_64, AVX2 machines such as AMD Zen 3, and Intel parts capped
//! to the AVX2 tier): GHASH and stitched GCM, 16 blocks per iteration, no AVX-512 instruction.
//!
//! Eight ymm registers hold 16 blocks (two per register). The main loop is inline assembly with a fixed register
//! allocation, because all 16 ymm registers are needed: ymm0-7 the AES blocks, ymm8 the round key of the current
//! round (broadcast from the key schedule in memory, one load per round for 8 `vaesenc`), ymm9/10/11 the lo/hi/mid
//! sums of the carry-less products, ymm12 the GHASH state (lane 0), ymm13/14 scratch, ymm15 the counter blocks.
//! In each iteration the 16 ciphertext blocks of the previous chunk (seal) or of this chunk (open) are loaded from
//! memory, byte-reversed and multiplied by H^16..H^1 between the AES rounds (Karatsuba, three products per
//! block); the products are summed unreduced and reduced once per 16 blocks. The last round takes the round key XORed with the input (AESENCLAST ends with the
//! key XOR), so the keystream XOR costs nothing extra.
//!
//! Short messages and tails run on intrinsics without a slow path: whole 32-byte pairs are read and written in
//! place, only a final partial pair goes through a 32-byte stack block (wiped afterwards). When the associated
//! data, the message and the lengths block are at most 16 blocks together (a 64-byte message with 16 bytes of
//! AAD is 6), they are all hashed with one reduction.
//!
//! Single-block AES (key setup, E(K, J0) of the non-stitched paths) and the lengths block of the non-stitched
//! paths reuse the AES-NI code.
#![allow(unsafe_code)]
#![allow(clippy::needless_range_loop)] // indexed round loops read like the specification

use super::{Backend, HTable, InOut, J0, RoundKeys};
use crate::ct::wipe;
use crate::dispatch::Checked;
use core::arch::x86_64::*;

macro_rules! tf {
    ($($item:item)*) => {
        $(
            #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq")]
            $item
        )*
    };
}

/// Constants of the assembly loop and the tails, at fixed offsets (the assembly addresses them from one pointer).
#[repr(C, align(32))]
struct Consts {
    /// Offset 0: byte reversal within each 128-bit lane (`vpshufb` control).
    mask: [u8; 32],
    /// Offset 32: adds 2 to the counter of each lane in the byte-reversed domain (low dword of the lane).
    two: [u64; 4],
    /// Offset 64: the reduction constant of `aesni::reduce` in both lanes (only the high qword is used).
    poly: [u64; 4],
    /// Offset 96 + 32 (i - 1), i = 1..=8: adds 2 i to the last byte of both lanes' counter blocks (block byte
    /// order: the top byte of each lane's high qword).
    inc: [[u64; 4]; 8],
    /// Offset 352: 32 bytes 0xff then 32 zero bytes; 32 bytes read at 352 + 32 - n keep the first n bytes.
    keep: [u8; 64],
    /// Offset 416: 0, 1, ..., 15, then 16 bytes 0x80; 16 bytes read at 416 + s are the `pshufb` control that
    /// shifts a block down by s bytes, filling with zeros.
    shift: [u8; 32],
}

const fn consts() -> Consts {
    let mut mask = [0u8; 32];
    let mut i = 0;
    while i < 16 {
        mask[i] = 15 - i as u8;
        mask[16 + i] = 15 - i as u8;
        i += 1;
    }
    let mut inc = [[0u64; 4]; 8];
    let mut j = 0;
    while j < 8 {
        let v = (2 * (j as u64 + 1)) << 56;
        inc[j] = [0, v, 0, v];
        j += 1;
    }
    let mut keep = [0u8; 64];
    let mut b = 0;
    while b < 32 {
        keep[b] = 0xff;
        b += 1;
    }
    let mut shift = [0x80u8; 32];
    let mut q = 0;
    while q < 16 {
        shift[q] = q as u8;
        q += 1;
    }
    Consts { mask, two: [2, 0, 2, 0], poly: [1, 0xc200_0000_0000_0000, 1, 0xc200_0000_0000_0000], inc, keep, shift }
}

static CONSTS: Consts = consts();

// ---------------------------------------------------------------------------------------------------------------
// The 16-block main loop in inline assembly. Operands: {p} the input chunk, {d} the distance to its output chunk
// (0 in place), {g} the chunk being hashed (seal: {p} + {d} - 256, the previous chunk's ciphertext; open: {p}),
// {end} the end of the input chunks, {h} the
// powers H^16..H^1 (ymm pair j = H^(16-2j), H^(15-2j)), {k} the key schedule (16-byte round keys), {c} CONSTS,
// {cb} the last byte of block 0's counter. ymm15 holds the counters of blocks 0 and 1 in block byte order.
// ---------------------------------------------------------------------------------------------------------------

/// The round key at byte offset `$o` of the key schedule, in both lanes of ymm8, and one round of all 16 blocks.
#[rustfmt::skip]
macro_rules! rnd {
    ($o:literal) => {
        concat!(
            "vbroadcasti128 ymm8, xmmword ptr [{k} + ", $o, "]\n",
            "vaesenc ymm0, ymm0, ymm8\n",
            "vaesenc ymm1, ymm1, ymm8\n",
            "vaesenc ymm2, ymm2, ymm8\n",
            "vaesenc ymm3, ymm3, ymm8\n",
            "vaesenc ymm4, ymm4, ymm8\n",
            "vaesenc ymm5, ymm5, ymm8\n",
            "vaesenc ymm6, ymm6, ymm8\n",
            "vaesenc ymm7, ymm7, ymm8\n",
        )
    };
}

/// Step `j` of the 16-block GHASH: pair `j` of the hashed chunk (byte offset `$o` = 32 j, also the offset of
/// its powers of H), byte-reversed, times H^(16-2j), H^(15-2j), into the sums. Karatsuba: three carry-less
/// products per block, the middle one of (lo ^ hi) of both factors (`HTable::k`, 256 bytes after the powers),
/// corrected by `red!(0)`. On Sapphire Rapids it runs as fast as the four-product schoolbook form; on Zen 3, where
/// 256-bit VPCLMULQDQ is reported at half the VAES issue rate, 26 instead of 34 products per 16 blocks keep the
/// multiplier from becoming the bound. Step 0 folds in the state and starts the sums.
#[rustfmt::skip]
macro_rules! gh {
    (0) => {
        concat!(
            "vmovdqu ymm13, ymmword ptr [{g}]\n",
            "vpshufb ymm13, ymm13, ymmword ptr [{c}]\n",
            "vpxor ymm13, ymm13, ymm12\n",
            "vpclmulqdq ymm9, ymm13, ymmword ptr [{h}], 0x00\n",
            "vpclmulqdq ymm10, ymm13, ymmword ptr [{h}], 0x11\n",
            "vpshufd ymm14, ymm13, 0x4e\n",
            "vpxor ymm13, ymm13, ymm14\n",
            "vpclmulqdq ymm11, ymm13, ymmword ptr [{h} + 256], 0x00\n",
        )
    };
    ($o:literal) => {
        concat!(
            "vmovdqu ymm13, ymmword ptr [{g} + ", $o, "]\n",
            "vpshufb ymm13, ymm13, ymmword ptr [{c}]\n",
            "vpclmulqdq ymm14, ymm13, ymmword ptr [{h} + ", $o, "], 0x00\n",
            "vpxor ymm9, ymm9, ymm14\n",
            "vpclmulqdq ymm14, ymm13, ymmword ptr [{h} + ", $o, "], 0x11\n",
            "vpxor ymm10, ymm10, ymm14\n",
            "vpshufd ymm14, ymm13, 0x4e\n",
            "vpxor ymm13, ymm13, ymm14\n",
            "vpclmulqdq ymm14, ymm13, ymmword ptr [{h} + 256 + ", $o, "], 0x00\n",
            "vpxor ymm11, ymm11, ymm14\n",
        )
    };
}

/// `red!(0)`: the Karatsuba middle term minus lo and hi. Then the reduction, in both lanes (it is linear, so
/// reducing before the horizontal sum is the same): the 256-bit product is lo + mid x^64 + hi x^128; fold the low
/// 64 bits of lo into mid (which absorbs lo's high half), then the low 64 bits of mid into hi; the two lanes'
/// results XORed are the new state in xmm12 (the VEX write clears its upper lane). These are the steps of
/// `aesni::reduce` without first splitting mid into lo and hi.
macro_rules! red {
    (0) => {
        concat!("vpxor ymm11, ymm11, ymm9\n", "vpxor ymm11, ymm11, ymm10\n",)
    };
    (1) => {
        concat!(
            "vpclmulqdq ymm14, ymm9, ymmword ptr [{c} + 64], 0x10\n",
            "vpshufd ymm9, ymm9, 0x4e\n",
            "vpxor ymm11, ymm11, ymm9\n",
            "vpxor ymm11, ymm11, ymm14\n",
        )
    };
    (2) => {
        concat!(
            "vpclmulqdq ymm14, ymm11, ymmword ptr [{c} + 64], 0x10\n",
            "vpshufd ymm11, ymm11, 0x4e\n",
            "vpxor ymm10, ymm10, ymm11\n",
            "vpxor ymm10, ymm10, ymm14\n",
        )
    };
    (3) => {
        concat!("vextracti128 xmm14, ymm10, 1\n", "vpxor xmm12, xmm10, xmm14\n",)
    };
}

/// Round key 0 into ymm8 and the 16 counter blocks XORed with it into ymm0-7; ymm15 advances by 16. While the
/// last byte of block 0's counter ({cb}) is at most 238, no counter computed here (up to block 0's + 17) carries
/// out of its last byte when 2..16 is added there, so that addition is inc32 and needs no byte swaps; otherwise
/// (one iteration in 16) the counters go through the byte-reversed domain, where inc32 is a 32-bit lane addition.
/// The branch depends only on the counter, which is public.
macro_rules! ctr16 {
    () => {
        concat!(
            "vbroadcasti128 ymm8, xmmword ptr [{k}]\n",
            "cmp {cb:l}, 238\n",
            "ja 3f\n",
            "vpaddd ymm1, ymm15, ymmword ptr [{c} + 96]\n",
            "vpaddd ymm2, ymm15, ymmword ptr [{c} + 128]\n",
            "vpaddd ymm3, ymm15, ymmword ptr [{c} + 160]\n",
            "vpaddd ymm4, ymm15, ymmword ptr [{c} + 192]\n",
            "vpaddd ymm5, ymm15, ymmword ptr [{c} + 224]\n",
            "vpaddd ymm6, ymm15, ymmword ptr [{c} + 256]\n",
            "vpaddd ymm7, ymm15, ymmword ptr [{c} + 288]\n",
            "vpxor ymm0, ymm15, ymm8\n",
            "vpaddd ymm15, ymm15, ymmword ptr [{c} + 320]\n",
            "jmp 4f\n",
            "3:\n",
            "vpshufb ymm13, ymm15, ymmword ptr [{c}]\n",
            "vpxor ymm0, ymm15, ymm8\n",
            "vpaddd ymm13, ymm13, ymmword ptr [{c} + 32]\n",
            "vpshufb ymm1, ymm13, ymmword ptr [{c}]\n",
            "vpaddd ymm13, ymm13, ymmword ptr [{c} + 32]\n",
            "vpshufb ymm2, ymm13, ymmword ptr [{c}]\n",
            "vpaddd ymm13, ymm13, ymmword ptr [{c} + 32]\n",
            "vpshufb ymm3, ymm13, ymmword ptr [{c}]\n",
            "vpaddd ymm13, ymm13, ymmword ptr [{c} + 32]\n",
            "vpshufb ymm4, ymm13, ymmword ptr [{c}]\n",
            "vpaddd ymm13, ymm13, ymmword ptr [{c} + 32]\n",
            "vpshufb ymm5, ymm13, ymmword ptr [{c}]\n",
            "vpaddd ymm13, ymm13, ymmword ptr [{c} + 32]\n",
            "vpshufb ymm6, ymm13, ymmword ptr [{c}]\n",
            "vpaddd ymm13, ymm13, ymmword ptr [{c} + 32]\n",
            "vpshufb ymm7, ymm13, ymmword ptr [{c}]\n",
            "vpaddd ymm13, ymm13, ymmword ptr [{c} + 32]\n",
            "vpshufb ymm15, ymm13, ymmword ptr [{c}]\n",
            "4:\n",
            "add {cb:l}, 16\n",
            "vpxor ymm1, ymm1, ymm8\n",
            "vpxor ymm2, ymm2, ymm8\n",
            "vpxor ymm3, ymm3, ymm8\n",
            "vpxor ymm4, ymm4, ymm8\n",
            "vpxor ymm5, ymm5, ymm8\n",
            "vpxor ymm6, ymm6, ymm8\n",
            "vpxor ymm7, ymm7, ymm8\n",
        )
    };
}

/// The last round with the round key at byte offset `$o` XORed with the input first, the store to the output
/// (`{d}` bytes from the input, 0 in place), and the step to the next chunk.
#[rustfmt::skip]
macro_rules! last {
    ($o:literal) => {
        concat!(
            "vbroadcasti128 ymm8, xmmword ptr [{k} + ", $o, "]\n",
            "vpxor ymm13, ymm8, ymmword ptr [{p}]\n",
            "vpxor ymm14, ymm8, ymmword ptr [{p} + 32]\n",
            "vaesenclast ymm0, ymm0, ymm13\n",
            "vaesenclast ymm1, ymm1, ymm14\n",
            "vpxor ymm13, ymm8, ymmword ptr [{p} + 64]\n",
            "vpxor ymm14, ymm8, ymmword ptr [{p} + 96]\n",
            "vaesenclast ymm2, ymm2, ymm13\n",
            "vaesenclast ymm3, ymm3, ymm14\n",
            "vpxor ymm13, ymm8, ymmword ptr [{p} + 128]\n",
            "vpxor ymm14, ymm8, ymmword ptr [{p} + 160]\n",
            "vaesenclast ymm4, ymm4, ymm13\n",
            "vaesenclast ymm5, ymm5, ymm14\n",
            "vpxor ymm13, ymm8, ymmword ptr [{p} + 192]\n",
            "vpxor ymm14, ymm8, ymmword ptr [{p} + 224]\n",
            "vaesenclast ymm6, ymm6, ymm13\n",
            "vaesenclast ymm7, ymm7, ymm14\n",
            "vmovdqu ymmword ptr [{p} + {d}], ymm0\n",
            "vmovdqu ymmword ptr [{p} + {d} + 32], ymm1\n",
            "vmovdqu ymmword ptr [{p} + {d} + 64], ymm2\n",
            "vmovdqu ymmword ptr [{p} + {d} + 96], ymm3\n",
            "vmovdqu ymmword ptr [{p} + {d} + 128], ymm4\n",
            "vmovdqu ymmword ptr [{p} + {d} + 160], ymm5\n",
            "vmovdqu ymmword ptr [{p} + {d} + 192], ymm6\n",
            "vmovdqu ymmword ptr [{p} + {d} + 224], ymm7\n",
            // The input 2 KiB ahead, as in the AVX-512 loop (see its `next!`); prefetches do not fault.
            "prefetcht0 [{p} + 2048]\n",
            "prefetcht0 [{p} + 2112]\n",
            "prefetcht0 [{p} + 2176]\n",
            "prefetcht0 [{p} + 2240]\n",
            "add {p}, 256\n",
            "add {g}, 256\n",
            "cmp {p}, {end}\n",
            "jne 2b\n",
        )
    };
}

/// Operands of the assembly loop.
struct Bulk {
    p: *const u8,
    /// Output minus input, in bytes (0 in place).
    d: isize,
    g: *const u8,
    end: *const u8,
    h: *const u128,
    k: *const [u8; 16],
    cb: u32,
    y: __m256i,
    base: __m256i,
}

macro_rules! bulk_asm {
    ($st:ident, $body:expr) => {
        // SAFETY: `{p}..{end}` is the caller's input, a nonzero multiple of 256 bytes, read only through {p} in
        // 256-byte steps until {p} == {end} (`prefetcht0` up to 2.3 KiB past {p} neither faults nor changes memory); the output is as long and starts {d} bytes further (0 in place), and
        // is written only through {p} + {d}, after the same chunk's input was read; {g} runs over 256-byte chunks
        // that are readable (seal: the output chunk before {p} + {d}, already written; open: the input chunk at
        // {p}); {h} points to the 16 powers of H (256 bytes), {k} to
        // the 15 round keys (240 bytes) and {c} to CONSTS (448 bytes). Every register written is an output or a
        // clobber; no stack use.
        unsafe {
            core::arch::asm!(
                ".p2align 5",
                "2:",
                $body,
                p = inout(reg) $st.p => _,
                d = in(reg) $st.d,
                g = inout(reg) $st.g => _,
                end = in(reg) $st.end,
                h = in(reg) $st.h,
                k = in(reg) $st.k,
                c = in(reg) &CONSTS as *const Consts,
                cb = inout(reg) $st.cb => _,
                inout("ymm12") $st.y,
                inout("ymm15") $st.base,
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                out("ymm13") _, out("ymm14") _,
                options(nostack),
            )
        }
    };
}

/// Unreduced sums of carry-less products, per lane.
#[derive(Clone, Copy)]
struct Acc {
    lo: __m256i,
    mid: __m256i,
    hi: __m256i,
}

tf! {
#[inline]
fn mask() -> __m256i {
    // SAFETY: CONSTS.mask is 32 readable bytes.
    unsafe { _mm256_loadu_si256(CONSTS.mask.as_ptr().cast()) }
}

#[inline]
fn bswap(x: __m256i) -> __m256i {
    _mm256_shuffle_epi8(x, mask())
}

/// Round key `r` in both lanes.
#[inline]
fn rk(keys: &RoundKeys, r: usize) -> __m256i {
    // SAFETY: a round key is 16 readable bytes.
    _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(keys.enc[r].as_ptr().cast()) })
}

/// Encrypts the blocks in the first `N` registers of `b`.
#[inline]
fn enc_n<const NR: usize, const N: usize>(keys: &RoundKeys, b: &mut [__m256i; 8]) {
    let k = rk(keys, 0);
    for x in b[..N].iter_mut() {
        *x = _mm256_xor_si256(*x, k);
    }
    for r in 1..NR {
        let k = rk(keys, r);
        for x in b[..N].iter_mut() {
            *x = _mm256_aesenc_epi128(*x, k);
        }
    }
    let k = rk(keys, NR);
    for x in b[..N].iter_mut() {
        *x = _mm256_aesenclast_epi128(*x, k);
    }
}

/// Encrypts the blocks in the first `m` (1..=8) registers of `b`, and only those.
#[inline]
fn enc_m<const NR: usize>(keys: &RoundKeys, b: &mut [__m256i; 8], m: usize) {
    match m {
        1 => enc_n::<NR, 1>(keys, b),
        2 => enc_n::<NR, 2>(keys, b),
        3 => enc_n::<NR, 3>(keys, b),
        4 => enc_n::<NR, 4>(keys, b),
        5 => enc_n::<NR, 5>(keys, b),
        6 => enc_n::<NR, 6>(keys, b),
        7 => enc_n::<NR, 7>(keys, b),
        _ => enc_n::<NR, 8>(keys, b),
    }
}

#[inline]
fn acc_zero() -> Acc {
    Acc { lo: _mm256_setzero_si256(), mid: _mm256_setzero_si256(), hi: _mm256_setzero_si256() }
}

/// Adds `x * h` (per lane, unreduced, schoolbook) to the sums.
#[inline]
fn acc_mul(a: &mut Acc, x: __m256i, h: __m256i) {
    a.lo = _mm256_xor_si256(a.lo, _mm256_clmulepi64_epi128(x, h, 0x00));
    a.hi = _mm256_xor_si256(a.hi, _mm256_clmulepi64_epi128(x, h, 0x11));
    let m = _mm256_xor_si256(_mm256_clmulepi64_epi128(x, h, 0x01), _mm256_clmulepi64_epi128(x, h, 0x10));
    a.mid = _mm256_xor_si256(a.mid, m);
}

/// Reduces the sums (both lanes, then their XOR): the same steps as the assembly's `red!`.
#[inline]
fn acc_reduce(a: &Acc) -> __m128i {
    // SAFETY: CONSTS.poly is 32 readable bytes.
    let p = unsafe { _mm256_loadu_si256(CONSTS.poly.as_ptr().cast()) };
    let t = _mm256_clmulepi64_epi128(a.lo, p, 0x10);
    let mid = _mm256_xor_si256(_mm256_xor_si256(a.mid, _mm256_shuffle_epi32(a.lo, 0x4e)), t);
    let t = _mm256_clmulepi64_epi128(mid, p, 0x10);
    let hi = _mm256_xor_si256(_mm256_xor_si256(a.hi, _mm256_shuffle_epi32(mid, 0x4e)), t);
    _mm_xor_si128(_mm256_castsi256_si128(hi), _mm256_extracti128_si256::<1>(hi))
}

/// Adds the `n` (1..=16) byte-reversed blocks in `x` (two per register; when `n` is odd the upper lane of the
/// last register is zero) times H^pow, H^(pow-1), ..., H^(pow-n+1) to the sums, with `y` folded into the first
/// block. `n <= pow <= 16`.
#[inline]
fn acc_regs(a: &mut Acc, htab: &HTable, x: &[__m256i; 8], n: usize, pow: usize, y: __m128i) {
    debug_assert!(n >= 1 && n <= pow && pow <= 16);
    let base = 16 - pow;
    let hp = htab.h.as_ptr();
    for i in 0..n / 2 {
        let xi = if i == 0 { _mm256_xor_si256(x[0], _mm256_zextsi128_si256(y)) } else { x[i] };
        // SAFETY: entries base + 2i and base + 2i + 1 <= base + n - 1 <= 15 are inside `htab.h`.
        let h = unsafe { _mm256_loadu_si256(hp.add(base + 2 * i).cast()) };
        acc_mul(a, xi, h);
    }
    if n % 2 == 1 {
        let i = n / 2;
        let xi = if i == 0 { _mm256_xor_si256(x[0], _mm256_zextsi128_si256(y)) } else { x[i] };
        // SAFETY: entry base + n - 1 <= 15 is inside `htab.h`.
        let h = _mm256_zextsi128_si256(unsafe { _mm_loadu_si128(hp.add(base + n - 1).cast()) });
        acc_mul(a, xi, h);
    }
}

/// Loads `len` (at most 256) bytes at `p` as blocks, zero-padded, two per register (not byte-reversed).
///
/// # Safety
/// `p` must be valid for reading `len` bytes.
#[inline]
unsafe fn load_blocks(p: *const u8, len: usize) -> [__m256i; 8] {
    debug_assert!(len <= 256);
    let mut x = [_mm256_setzero_si256(); 8];
    let full = len / 32;
    for i in 0..full {
        // SAFETY: bytes [32 i, 32 i + 32) are below `len`.
        x[i] = unsafe { _mm256_loadu_si256(p.add(32 * i).cast()) };
    }
    let part = len % 32;
    if part > 0 {
        // SAFETY: bytes [32 full, len) are readable, and so are the 32 full bytes before them.
        x[full] = unsafe { load_partial(p.add(32 * full), part, full > 0) };
    }
    x
}

/// The `len` (1..=31) bytes at `p`, zero-padded to 32. A whole first block is loaded directly; a final block of
/// r < 16 bytes is the 16 bytes ending at `p + len` shifted down when 16 bytes before its start are readable
/// (`back`, or a whole first block), else it goes through a wiped stack block.
///
/// # Safety
/// `p` must be valid for reading `len` bytes, and with `back` also the 16 bytes before `p`.
#[inline]
unsafe fn load_partial(p: *const u8, len: usize, back: bool) -> __m256i {
    debug_assert!(len > 0 && len < 32);
    if len >= 16 {
        // SAFETY: the first 16 bytes are readable.
        let lo = unsafe { _mm_loadu_si128(p.cast()) };
        let r = len - 16;
        if r == 0 {
            return _mm256_zextsi128_si256(lo);
        }
        // SAFETY: `p + 16` has `r` readable bytes and the 16 before it are the block just loaded.
        let hi = unsafe { load_last(p.add(16), r, true) };
        _mm256_set_m128i(hi, lo)
    } else {
        // SAFETY: as the caller guarantees.
        _mm256_zextsi128_si256(unsafe { load_last(p, len, back) })
    }
}

/// The `r` (1..=15) bytes at `p`, zero-padded to 16.
///
/// # Safety
/// `p` must be valid for reading `r` bytes, and with `back` also the 16 bytes before `p`.
#[inline]
unsafe fn load_last(p: *const u8, r: usize, back: bool) -> __m128i {
    debug_assert!(r > 0 && r < 16);
    if back {
        // SAFETY: the 16 bytes ending at `p + r` start at most 15 bytes before `p`, inside the readable range;
        // `shift` has 32 bytes, so 16 from offset 16 - r <= 15 are inside it.
        unsafe {
            let v = _mm_loadu_si128(p.add(r).sub(16).cast());
            _mm_shuffle_epi8(v, _mm_loadu_si128(CONSTS.shift.as_ptr().add(16 - r).cast()))
        }
    } else {
        let mut t = [0u8; 32];
        // SAFETY: `p` has `r` readable bytes and `t` room for them.
        unsafe { core::ptr::copy_nonoverlapping(p, t.as_mut_ptr(), r) };
        // SAFETY: `t` is 32 bytes.
        let v = unsafe { _mm_loadu_si128(t.as_ptr().cast()) };
        wipe(&mut t);
        v
    }
}

/// GHASH of `data` into `y`: 16 blocks and one reduction per 256 bytes, then the rest with one more.
#[inline]
fn ghash_bytes(htab: &HTable, mut y: __m128i, data: &[u8]) -> __m128i {
    let mut chunks = data.chunks_exact(256);
    for c in &mut chunks {
        // SAFETY: `c` is 256 readable bytes.
        let x = unsafe { load_blocks(c.as_ptr(), 256) };
        let x = x.map(|v| bswap(v));
        let mut a = acc_zero();
        acc_regs(&mut a, htab, &x, 16, 16, y);
        y = acc_reduce(&a);
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        // SAFETY: `rem` is readable for its length, below 256.
        let x = unsafe { load_blocks(rem.as_ptr(), rem.len()) };
        let x = x.map(|v| bswap(v));
        let n = rem.len().div_ceil(16);
        let mut a = acc_zero();
        acc_regs(&mut a, htab, &x, n, n, y);
        y = acc_reduce(&a);
    }
    y
}

/// The 16 counter blocks from `ctr` (byte-reversed domain, lanes: counters c and c + 1), byte-swapped for the
/// rounds; inc32 is a 32-bit addition in the low dword of each lane, which wraps exactly like it.
#[inline]
fn counters(ctr: __m256i) -> [__m256i; 8] {
    let two = _mm256_set_epi32(0, 0, 0, 2, 0, 0, 0, 2);
    let mut c = ctr;
    core::array::from_fn(|_| {
        let b = bswap(c);
        c = _mm256_add_epi32(c, two);
        b
    })
}

/// `ctr` advanced by `n` blocks.
#[inline]
fn advance(ctr: __m256i, n: i32) -> __m256i {
    _mm256_add_epi32(ctr, _mm256_set_epi32(0, 0, 0, n, 0, 0, 0, n))
}

/// The last `rem` (1..=255) bytes at `p`, output to `q`: CTR with counters from `ctr`, and the ciphertext blocks
/// added to the sums with powers from H^pow down, `y` folded into the first.
///
/// # Safety
/// `p` must be valid for reading and `q` for writing `rem` bytes; they are equal or do not overlap.
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn tail<const NR: usize, const SEAL: bool>(
    keys: &RoundKeys,
    htab: &HTable,
    ctr: __m256i,
    p: *const u8,
    q: *mut u8,
    rem: usize,
    a: &mut Acc,
    pow: usize,
    y: __m128i,
) {
    debug_assert!(rem > 0 && rem < 256);
    let n = rem.div_ceil(16);
    // SAFETY: the caller guarantees `rem` readable bytes.
    let d = unsafe { load_blocks(p, rem) };
    if !SEAL {
        acc_regs(a, htab, &d.map(|v| bswap(v)), n, pow, y);
    }
    let mut b = counters(ctr);
    enc_m::<NR>(keys, &mut b, rem.div_ceil(32));
    let full = rem / 32;
    let mut x = [_mm256_setzero_si256(); 8];
    for i in 0..full {
        let o = _mm256_xor_si256(b[i], d[i]);
        // SAFETY: bytes [32 i, 32 i + 32) are below `rem`.
        unsafe { _mm256_storeu_si256(q.add(32 * i).cast(), o) };
        x[i] = bswap(o);
    }
    let part = rem % 32;
    if part > 0 {
        // SAFETY: 32 bytes at offset 32 - part of the 64-byte `keep` are readable.
        let keep = unsafe { _mm256_loadu_si256(CONSTS.keep.as_ptr().add(32 - part).cast()) };
        let o = _mm256_and_si256(_mm256_xor_si256(b[full], d[full]), keep);
        let mut t = [0u8; 32];
        // SAFETY: `t` is 32 writable bytes.
        unsafe { _mm256_storeu_si256(t.as_mut_ptr().cast(), o) };
        // SAFETY: bytes [32 full, rem) of the output are writable, and `t` holds `part` < 32 bytes.
        unsafe { core::ptr::copy_nonoverlapping(t.as_ptr(), q.add(32 * full), part) };
        wipe(&mut t);
        x[full] = bswap(o);
    }
    if SEAL {
        acc_regs(a, htab, &x, n, pow, y);
    }
}

/// CTR over the `len` bytes at `src` into `dst` from counter `c0` (byte-reversed) and GHASH of the ciphertext
/// into `y`, after the associated data `aad` and before the lengths block `lens` when given. Returns the new
/// GHASH state. Each chunk's input is read before its output is written, so in place (`src == dst`) is the same
/// code.
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `len` bytes; they are equal or do not overlap.
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn crypt<const NR: usize, const SEAL: bool>(
    keys: &RoundKeys,
    htab: &HTable,
    c0: __m128i,
    mut y: __m128i,
    aad: &[u8],
    src: *const u8,
    dst: *mut u8,
    len: usize,
    lens: Option<__m128i>,
) -> __m128i {
    let full = len / 256;
    let rem = len % 256;
    let nb = rem.div_ceil(16);
    let extra = lens.is_some() as usize;
    let ab = aad.len().div_ceil(16);
    // Short messages: the associated data, the message and the lengths block under one reduction.
    let fuse = full == 0 && ab + nb + extra <= 16;
    if !fuse && !aad.is_empty() {
        y = ghash_bytes(htab, y, aad);
    }
    // Lanes: counters c0 and c0 + 1.
    let mut ctr = _mm256_add_epi32(_mm256_broadcastsi128_si256(c0), _mm256_set_epi32(0, 0, 0, 1, 0, 0, 0, 0));
    if full > 0 {
        let mut i = 0;
        if SEAL {
            // The first chunk has no previous ciphertext to hash.
            let mut b = counters(ctr);
            enc_n::<NR, 8>(keys, &mut b);
            for j in 0..8 {
                // SAFETY: chunk 0 spans bytes [0, 256) of input and output, in bounds since full > 0.
                unsafe {
                    let o = _mm256_xor_si256(b[j], _mm256_loadu_si256(src.add(32 * j).cast()));
                    _mm256_storeu_si256(dst.add(32 * j).cast(), o);
                }
            }
            ctr = advance(ctr, 16);
            i = 1;
        }
        if i < full {
            // SAFETY: chunk i starts inside the input (i < full).
            let start = unsafe { src.add(256 * i) };
            let mut st = Bulk {
                p: start,
                d: (dst as isize).wrapping_sub(src as isize),
                // SAFETY: seal hashes the output chunk before (i = 1, so it is chunk 0, already written); open
                // hashes its own input chunk.
                g: if SEAL { unsafe { dst.add(256 * (i - 1)) } } else { start },
                // SAFETY: one past the last full chunk, inside or one past the end of the input.
                end: unsafe { src.add(256 * full) },
                h: htab.h.as_ptr(),
                k: keys.enc.as_ptr(),
                cb: _mm256_cvtsi256_si32(ctr) as u32 & 0xff,
                y: _mm256_zextsi128_si256(y),
                base: bswap(ctr),
            };
            if NR == 14 {
                bulk_asm!(st, concat!(
                    ctr16!(),
                    rnd!(16), gh!(0), rnd!(32), gh!(32), rnd!(48), gh!(64), rnd!(64), gh!(96),
                    rnd!(80), gh!(128), rnd!(96), gh!(160), rnd!(112), gh!(192), rnd!(128), gh!(224),
                    rnd!(144), red!(0), red!(1), rnd!(160), red!(2), rnd!(176), red!(3), rnd!(192), rnd!(208),
                    last!(224)
                ));
            } else {
                bulk_asm!(st, concat!(
                    ctr16!(),
                    rnd!(16), gh!(0), rnd!(32), gh!(32), rnd!(48), gh!(64), rnd!(64), gh!(96),
                    rnd!(80), gh!(128), rnd!(96), gh!(160), rnd!(112), gh!(192), rnd!(128), gh!(224),
                    rnd!(144), red!(0), red!(1), red!(2), red!(3),
                    last!(160)
                ));
            }
            y = _mm256_castsi256_si128(st.y);
            ctr = bswap(st.base);
        }
        if SEAL {
            // SAFETY: the last full chunk of the output is 256 bytes, written above (readable: `dst` is
            // exclusively ours for `len` bytes).
            let x = unsafe { load_blocks(dst.add(256 * (full - 1)), 256) }.map(|v| bswap(v));
            let mut a = acc_zero();
            acc_regs(&mut a, htab, &x, 16, 16, y);
            y = acc_reduce(&a);
        }
    }
    // A tail of 16 blocks (241..=255 bytes) leaves no power of H for the lengths block: it gets its own
    // reduction.
    let lens_apart = nb + extra > 16;
    let total = if fuse { ab } else { 0 } + nb + if lens_apart { 0 } else { extra };
    if total == 0 {
        return y;
    }
    let mut a = acc_zero();
    let mut pow = total;
    if fuse && ab > 0 {
        // SAFETY: `aad` is readable for its length, at most 15 blocks here.
        let x = unsafe { load_blocks(aad.as_ptr(), aad.len()) }.map(|v| bswap(v));
        acc_regs(&mut a, htab, &x, ab, pow, y);
        y = _mm_setzero_si128();
        pow -= ab;
    }
    if rem > 0 {
        // SAFETY: the tail is the last `rem` bytes of input and output.
        unsafe { tail::<NR, SEAL>(keys, htab, ctr, src.add(256 * full), dst.add(256 * full), rem, &mut a, pow, y) };
        y = _mm_setzero_si128();
    }
    if let Some(l) = lens {
        if lens_apart {
            y = acc_reduce(&a);
            a = acc_zero();
        }
        let mut x = [_mm256_setzero_si256(); 8];
        x[0] = _mm256_zextsi128_si256(l);
        acc_regs(&mut a, htab, &x, 1, 1, y);
    }
    acc_reduce(&a)
}

/// E(K, `j`) on one block.
#[inline]
fn enc1<const NR: usize>(keys: &RoundKeys, j: __m128i) -> __m128i {
    let k = |r: usize| {
        // SAFETY: a round key is 16 readable bytes.
        unsafe { _mm_loadu_si128(keys.enc[r].as_ptr().cast()) }
    };
    let mut x = _mm_xor_si128(j, k(0));
    for r in 1..NR {
        x = _mm_aesenc_si128(x, k(r));
    }
    _mm_aesenclast_si128(x, k(NR))
}

/// The whole of GCM after J0 is known: E(K, J0), GHASH of the AAD, the stitched bulk, the lengths block and
/// the tag (for open: the expected tag).
fn gcm_full<const NR: usize, const SEAL: bool>(
    keys: &RoundKeys,
    htab: &HTable,
    j0: &J0<'_>,
    aad: &[u8],
    mut buf: InOut<'_>,
) -> [u8; 16] {
    let rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let j = super::aesni::load_j0(j0);
    // Independent of the bulk work, so its latency hides behind it.
    let ek = enc1::<NR>(keys, j);
    let c0 = _mm_add_epi32(_mm_shuffle_epi8(j, rev), _mm_set_epi32(0, 0, 0, 1));
    let len = buf.len();
    let (src, dst) = buf.ptrs();
    let lens = _mm_set_epi64x((aad.len() as u64 * 8) as i64, (len as u64 * 8) as i64);
    // SAFETY: `InOut::ptrs` gives an input readable and an output writable for `len` bytes, equal or disjoint.
    let y = unsafe { crypt::<NR, SEAL>(keys, htab, c0, _mm_setzero_si128(), aad, src, dst, len, Some(lens)) };
    let tag = _mm_xor_si128(_mm_shuffle_epi8(y, rev), ek);
    let mut out = [0u8; 16];
    // SAFETY: `out` is 16 writable bytes.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), tag) };
    out
}

fn gcm_impl<const NR: usize, const SEAL: bool>(
    keys: &RoundKeys,
    htab: &HTable,
    ctr: &[u8; 16],
    state: &mut u128,
    buf: &mut InOut<'_>,
) {
    let rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    // SAFETY: `ctr` is 16 bytes and `state` a u128.
    let (c0, y) = unsafe {
        (_mm_shuffle_epi8(_mm_loadu_si128(ctr.as_ptr().cast()), rev), _mm_loadu_si128((state as *const u128).cast()))
    };
    let len = buf.len();
    let (src, dst) = buf.ptrs();
    // SAFETY: `InOut::ptrs` gives an input readable and an output writable for `len` bytes, equal or disjoint.
    let y = unsafe { crypt::<NR, SEAL>(keys, htab, c0, y, &[], src, dst, len, None) };
    // SAFETY: a u128 is 16 writable bytes.
    unsafe { _mm_storeu_si128((state as *mut u128).cast(), y) };
}

fn ghash_impl(htab: &HTable, state: &mut u128, data: &[u8]) {
    // SAFETY: a u128 is 16 readable bytes.
    let y = unsafe { _mm_loadu_si128((state as *const u128).cast()) };
    let y = ghash_bytes(htab, y, data);
    // SAFETY: a u128 is 16 writable bytes.
    unsafe { _mm_storeu_si128((state as *mut u128).cast(), y) };
}
}

gcm_entry_points!(Backend::Vaes256);
