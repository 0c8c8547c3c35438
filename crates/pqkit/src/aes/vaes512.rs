//! VAES + VPCLMULQDQ backend on AVX-512 (x86_64): GHASH and stitched GCM, 16 blocks per iteration.
//!
//! Four zmm registers hold 16 blocks. The 16 counter blocks stay in registers (byte-reversed, where inc32 is a
//! 32-bit lane addition that wraps exactly like inc32; the main loop keeps them in block order while no carry
//! can leave the last byte). In the same loop iteration the 16 ciphertext blocks of the previous iteration
//! (seal) or of this one (open) are multiplied by H^16..H^1 (one zmm of powers per register), the products are
//! summed unreduced across all lanes and reduced once per 16 blocks. That main loop is inline assembly (fixed
//! register allocation, AES rounds interleaved with the carry-less products); the rest uses intrinsics. Tails use
//! AVX-512 byte masks, so no bytes outside the buffer are read or written.
//!
//! Single-block AES (key setup, E(K, J0)) reuses the AES-NI code.
#![allow(unsafe_code)]
#![allow(clippy::needless_range_loop)] // indexed round loops read like the specification

use super::{Backend, HTable, InOut, J0, RoundKeys, aesni};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

macro_rules! tf {
    ($($item:item)*) => {
        $(
            #[target_feature(enable = "aes,pclmulqdq,ssse3,sse4.1,avx,avx2,avx512f,avx512bw,avx512vl,vaes,vpclmulqdq")]
            $item
        )*
    };
}

#[repr(C, align(64))]
struct Const64([u64; 8]);

/// Adds 4 to the counter in each lane (byte-reversed domain: the low 32 bits of the lane).
static FOUR: Const64 = Const64([4, 0, 4, 0, 4, 0, 4, 0]);
/// Adds 4, 8, 12, 16 to the last byte of each lane's counter block (big-endian: the top byte of lane dword 3).
static BE_INC: [Const64; 4] = [
    Const64([0, 4 << 56, 0, 4 << 56, 0, 4 << 56, 0, 4 << 56]),
    Const64([0, 8 << 56, 0, 8 << 56, 0, 8 << 56, 0, 8 << 56]),
    Const64([0, 12 << 56, 0, 12 << 56, 0, 12 << 56, 0, 12 << 56]),
    Const64([0, 16 << 56, 0, 16 << 56, 0, 16 << 56, 0, 16 << 56]),
];
/// The reduction constant of `aesni::reduce` in every lane (only the high qword is used).
static POLY: Const64 =
    Const64([1, 0xc200_0000_0000_0000, 1, 0xc200_0000_0000_0000, 1, 0xc200_0000_0000_0000, 1, 0xc200_0000_0000_0000]);

// ---------------------------------------------------------------------------------------------------------------
// The 16-block main loop in inline assembly. With intrinsics LLVM ran the AES rounds of each register back to back
// after all of GHASH, rotated the round keys through registers every iteration and reloaded keys and powers of H
// from the stack; here the register allocation is fixed and the rounds are interleaved with the GHASH work.
//
// Registers: zmm0-3 the 16 AES blocks; zmm4-7 the 16 byte-reversed GHASH input blocks (seal: the previous
// iteration's ciphertext; open: this iteration's); zmm8/9/10 the lo/hi/middle product sums; zmm11, zmm15 scratch;
// zmm12 the GHASH state (lane 0, other lanes zero); zmm13 the byte-swap mask; zmm14 the counters (in
// block byte order, lane l = counter + l); zmm16.. the round keys. Powers of H come from memory operands.
// ---------------------------------------------------------------------------------------------------------------

/// One AES round of all 16 blocks with the round key in `zmm$k`.
#[rustfmt::skip]
macro_rules! rnd {
    ($k:literal) => {
        concat!(
            "vaesenc zmm0, zmm0, zmm", $k, "\n",
            "vaesenc zmm1, zmm1, zmm", $k, "\n",
            "vaesenc zmm2, zmm2, zmm", $k, "\n",
            "vaesenc zmm3, zmm3, zmm", $k, "\n",
        )
    };
}

/// Step `n` of the 16-block GHASH (products of zmm4-7 with H^16..H^1, schoolbook: four products per block, which
/// is fewer instructions than Karatsuba's shuffles and XORs; one reduction), in the order they must run: 1-7 use
/// only zmm5-7; 8 folds the state into zmm4; 11-13 reduce and leave the new state in zmm12.
macro_rules! gh {
    (1) => {
        "vpclmulqdq zmm8, zmm7, zmmword ptr [{h} + 192], 0x00\n"
    };
    (2) => {
        "vpclmulqdq zmm9, zmm7, zmmword ptr [{h} + 192], 0x11\n"
    };
    (3) => {
        concat!(
            "vpclmulqdq zmm10, zmm7, zmmword ptr [{h} + 192], 0x01\n",
            "vpclmulqdq zmm11, zmm7, zmmword ptr [{h} + 192], 0x10\n",
        )
    };
    (4) => {
        concat!("vpclmulqdq zmm15, zmm6, zmmword ptr [{h} + 128], 0x01\n", "vpternlogq zmm10, zmm11, zmm15, 0x96\n",)
    };
    (5) => {
        concat!(
            "vpclmulqdq zmm11, zmm6, zmmword ptr [{h} + 128], 0x00\n",
            "vpclmulqdq zmm15, zmm5, zmmword ptr [{h} + 64], 0x00\n",
            "vpternlogq zmm8, zmm11, zmm15, 0x96\n",
        )
    };
    (6) => {
        concat!(
            "vpclmulqdq zmm11, zmm6, zmmword ptr [{h} + 128], 0x11\n",
            "vpclmulqdq zmm15, zmm5, zmmword ptr [{h} + 64], 0x11\n",
            "vpternlogq zmm9, zmm11, zmm15, 0x96\n",
        )
    };
    (7) => {
        concat!(
            "vpclmulqdq zmm11, zmm6, zmmword ptr [{h} + 128], 0x10\n",
            "vpclmulqdq zmm15, zmm5, zmmword ptr [{h} + 64], 0x01\n",
            "vpternlogq zmm10, zmm11, zmm15, 0x96\n",
        )
    };
    (8) => {
        concat!(
            "vpxorq zmm4, zmm4, zmm12\n",
            "vpclmulqdq zmm11, zmm5, zmmword ptr [{h} + 64], 0x10\n",
            "vpclmulqdq zmm15, zmm4, zmmword ptr [{h}], 0x01\n",
            "vpternlogq zmm10, zmm11, zmm15, 0x96\n",
        )
    };
    (9) => {
        concat!(
            "vpclmulqdq zmm11, zmm4, zmmword ptr [{h}], 0x10\n",
            "vpxorq zmm10, zmm10, zmm11\n",
            "vpclmulqdq zmm12, zmm4, zmmword ptr [{h}], 0x00\n",
            "vpxorq zmm8, zmm8, zmm12\n",
        )
    };
    (10) => {
        concat!("vpclmulqdq zmm15, zmm4, zmmword ptr [{h}], 0x11\n", "vpxorq zmm9, zmm9, zmm15\n",)
    };
    // Reduction, in every lane (it is linear, so reducing before the horizontal sum is the same). The 256-bit
    // product is lo + mid x^64 + hi x^128; fold the low 64 bits of lo into mid (which absorbs lo's high half),
    // then the low 64 bits of mid into hi. This is `aesni::reduce` without first splitting mid into lo and hi.
    (11) => {
        concat!(
            "vpclmulqdq zmm11, zmm8, zmmword ptr [{pc}], 0x10\n",
            "vpshufd zmm8, zmm8, 0x4e\n",
            "vpternlogq zmm10, zmm8, zmm11, 0x96\n",
        )
    };
    (12) => {
        concat!(
            "vpclmulqdq zmm11, zmm10, zmmword ptr [{pc}], 0x10\n",
            "vpshufd zmm10, zmm10, 0x4e\n",
            "vpternlogq zmm9, zmm10, zmm11, 0x96\n",
        )
    };
    // Horizontal XOR into xmm12 (the VEX write clears the upper lanes).
    (13) => {
        concat!(
            "vextracti64x4 ymm11, zmm9, 1\n",
            "vpxor ymm9, ymm9, ymm11\n",
            "vextracti128 xmm11, ymm9, 1\n",
            "vpxor xmm12, xmm9, xmm11\n",
        )
    };
}

/// The 16 counter blocks, first round key added, from zmm14, which holds them in block (big-endian) byte order
/// and advances by 16. While the low byte of the first counter ({cb}) is at most 236, no counter computed here
/// (up to first counter + 19) carries out of its last byte when 4, 8, 12 or 16 is added there, so that addition
/// is inc32 and needs no byte swaps; otherwise (about one iteration in 16) the counters go through the
/// byte-reversed domain, where inc32 is a 32-bit lane addition. The branch depends only on the counter, which is
/// public.
macro_rules! ctr16 {
    () => {
        concat!(
            "cmp {cb:l}, 236\n",
            "ja 3f\n",
            "vpaddd zmm1, zmm14, zmmword ptr [{inc}]\n",
            "vpaddd zmm2, zmm14, zmmword ptr [{inc} + 64]\n",
            "vpaddd zmm3, zmm14, zmmword ptr [{inc} + 128]\n",
            "vpxorq zmm0, zmm14, zmm16\n",
            "vpaddd zmm14, zmm14, zmmword ptr [{inc} + 192]\n",
            "jmp 4f\n",
            "3:\n",
            "vpshufb zmm11, zmm14, zmm13\n",
            "vpaddd zmm11, zmm11, zmmword ptr [{four}]\n",
            "vpshufb zmm1, zmm11, zmm13\n",
            "vpaddd zmm11, zmm11, zmmword ptr [{four}]\n",
            "vpshufb zmm2, zmm11, zmm13\n",
            "vpaddd zmm11, zmm11, zmmword ptr [{four}]\n",
            "vpshufb zmm3, zmm11, zmm13\n",
            "vpaddd zmm11, zmm11, zmmword ptr [{four}]\n",
            "vpxorq zmm0, zmm14, zmm16\n",
            "vpshufb zmm14, zmm11, zmm13\n",
            "4:\n",
            "add {cb:l}, 16\n",
            "vpxorq zmm1, zmm1, zmm16\n",
            "vpxorq zmm2, zmm2, zmm16\n",
            "vpxorq zmm3, zmm3, zmm16\n",
        )
    };
}

/// Open: this chunk's ciphertext, byte-reversed, into zmm4-7.
macro_rules! load_ct {
    () => {
        concat!(
            "vmovdqu64 zmm4, zmmword ptr [{p}]\n",
            "vmovdqu64 zmm5, zmmword ptr [{p} + 64]\n",
            "vmovdqu64 zmm6, zmmword ptr [{p} + 128]\n",
            "vmovdqu64 zmm7, zmmword ptr [{p} + 192]\n",
            "vpshufb zmm4, zmm4, zmm13\n",
            "vpshufb zmm5, zmm5, zmm13\n",
            "vpshufb zmm6, zmm6, zmm13\n",
            "vpshufb zmm7, zmm7, zmm13\n",
        )
    };
}

/// The last round with key `zmm$k` XORed with the input first (AESENCLAST ends with the key XOR, so this is the
/// keystream XOR for free), and the store to the output, `{d}` bytes from the input (0 in place).
#[rustfmt::skip]
macro_rules! last {
    ($k:literal) => {
        concat!(
            "vpxorq zmm8, zmm", $k, ", zmmword ptr [{p}]\n",
            "vpxorq zmm10, zmm", $k, ", zmmword ptr [{p} + 64]\n",
            "vpxorq zmm11, zmm", $k, ", zmmword ptr [{p} + 128]\n",
            "vpxorq zmm15, zmm", $k, ", zmmword ptr [{p} + 192]\n",
            "vaesenclast zmm0, zmm0, zmm8\n",
            "vaesenclast zmm1, zmm1, zmm10\n",
            "vaesenclast zmm2, zmm2, zmm11\n",
            "vaesenclast zmm3, zmm3, zmm15\n",
            "vmovdqu64 zmmword ptr [{p} + {d}], zmm0\n",
            "vmovdqu64 zmmword ptr [{p} + {d} + 64], zmm1\n",
            "vmovdqu64 zmmword ptr [{p} + {d} + 128], zmm2\n",
            "vmovdqu64 zmmword ptr [{p} + {d} + 192], zmm3\n",
        )
    };
}

/// Seal: this chunk's ciphertext, byte-reversed, becomes the next iteration's GHASH input.
macro_rules! keep_ct {
    () => {
        concat!(
            "vpshufb zmm4, zmm0, zmm13\n",
            "vpshufb zmm5, zmm1, zmm13\n",
            "vpshufb zmm6, zmm2, zmm13\n",
            "vpshufb zmm7, zmm3, zmm13\n",
        )
    };
}

/// The step to the next 256-byte chunk, with a software prefetch of the input 2 KiB (eight chunks) ahead.
//
// The input is read only in the last round (seal) or at the top of the iteration (open), so without the prefetch a
// message larger than the caches waits for memory at every chunk: on an Intel Xeon (family 6 model 167) a 10 MiB
// AES-256-GCM seal took 873-890 us against aws-lc's 803-810 (ratio 0.91-0.92) and 746-772 us with it (aws-lc
// 808-842 in the same runs); 1 and 4 KiB ahead measured no better. Prefetches do not fault, so reading past the
// end of the input is harmless.
macro_rules! next {
    () => {
        concat!(
            "prefetcht0 [{p} + 2048]\n",
            "prefetcht0 [{p} + 2112]\n",
            "prefetcht0 [{p} + 2176]\n",
            "prefetcht0 [{p} + 2240]\n",
            "add {p}, 256\n",
            "cmp {p}, {end}\n",
            "jne 2b\n",
        )
    };
}

/// The asm! call with loop body `$body`. All 15 round-key registers are loaded (AES-128 leaves the last four
/// unused) so that one operand list serves both key sizes.
macro_rules! bulk_asm {
    ($st:ident, $body:expr) => {
        // SAFETY: `p..end` is the caller's input, a nonzero multiple of 256 bytes, read only through {p} in
        // 256-byte steps until {p} == {end} (`prefetcht0` up to 2.3 KiB past {p} neither faults nor changes memory); the output is as long and starts {d} bytes further (0 in place), and
        // is written only through {p} + {d}, after the same chunk's input was read; {h} points to the 4 zmm of
        // H^16..H^1;
        // {four} and {pc} to 64-byte constants. Every register written is an output or clobber; no stack use.
        unsafe {
            core::arch::asm!(
                ".p2align 6",
                "2:",
                $body,
                p = inout(reg) $st.p => _,
                d = in(reg) $st.d,
                end = in(reg) $st.end,
                h = in(reg) $st.h,
                four = in(reg) $st.four,
                inc = in(reg) $st.inc,
                cb = inout(reg) $st.cb => _,
                pc = in(reg) $st.pc,
                inout("zmm12") $st.y,
                inout("zmm14") $st.base,
                in("zmm13") $st.mask,
                inout("zmm4") $st.x[0],
                inout("zmm5") $st.x[1],
                inout("zmm6") $st.x[2],
                inout("zmm7") $st.x[3],
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
                out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _, out("zmm15") _,
                in("zmm16") $st.k[0], in("zmm17") $st.k[1], in("zmm18") $st.k[2], in("zmm19") $st.k[3],
                in("zmm20") $st.k[4], in("zmm21") $st.k[5], in("zmm22") $st.k[6], in("zmm23") $st.k[7],
                in("zmm24") $st.k[8], in("zmm25") $st.k[9], in("zmm26") $st.k[10], in("zmm27") $st.k[11],
                in("zmm28") $st.k[12], in("zmm29") $st.k[13], in("zmm30") $st.k[14],
                options(nostack),
            )
        }
    };
}

/// Operands of the assembly main loop.
struct Bulk {
    p: *const u8,
    end: *const u8,
    /// Output minus input, in bytes (0 in place).
    d: isize,
    h: *const u128,
    four: *const Const64,
    inc: *const [Const64; 4],
    cb: u32,
    pc: *const Const64,
    y: __m512i,
    base: __m512i,
    mask: __m512i,
    x: [__m512i; 4],
    k: [__m512i; 15],
}

/// Unreduced GHASH sums of Karatsuba products: low, high and middle terms, four lanes each.
#[derive(Clone, Copy)]
struct Sums {
    lo: __m512i,
    hi: __m512i,
    mid: __m512i,
}

tf! {
#[inline]
fn bswap(x: __m512i) -> __m512i {
    let m = _mm512_broadcast_i32x4(_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    _mm512_shuffle_epi8(x, m)
}

#[inline]
fn load_keys(k: &[[u8; 16]; 15]) -> [__m512i; 15] {
    // SAFETY: each element is a 16-byte array; `loadu` has no alignment requirement.
    core::array::from_fn(|i| _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(k[i].as_ptr().cast()) }))
}

#[inline]
fn enc16<const NR: usize>(k: &[__m512i; 15], b: &mut [__m512i; 4]) {
    enc_regs::<NR, 4>(k, b)
}

/// Encrypts the 4 `N` blocks in `b` (N registers of 4 blocks).
#[inline]
fn enc_regs<const NR: usize, const N: usize>(k: &[__m512i; 15], b: &mut [__m512i; N]) {
    for x in b.iter_mut() {
        *x = _mm512_xor_si512(*x, k[0]);
    }
    for r in 1..NR {
        for x in b.iter_mut() {
            *x = _mm512_aesenc_epi128(*x, k[r]);
        }
    }
    for x in b.iter_mut() {
        *x = _mm512_aesenclast_epi128(*x, k[NR]);
    }
}

/// The 16 counter blocks starting at `base` (byte-reversed), byte-swapped for the rounds.
#[inline]
fn counters(base: __m512i, four: __m512i, sixteen: __m512i) -> [__m512i; 4] {
    [
        bswap(base),
        bswap(_mm512_add_epi32(base, four)),
        bswap(_mm512_add_epi32(base, _mm512_add_epi32(four, four))),
        bswap(_mm512_sub_epi32(_mm512_add_epi32(base, sixteen), four)),
    ]
}

/// Horizontal XOR of the four 128-bit lanes.
#[inline]
fn hxor(v: __m512i) -> __m128i {
    let a = _mm256_xor_si256(_mm512_extracti64x4_epi64::<0>(v), _mm512_extracti64x4_epi64::<1>(v));
    _mm_xor_si128(_mm256_extracti128_si256::<0>(a), _mm256_extracti128_si256::<1>(a))
}

/// Sums `x[j] * h[j]` over the registers given, unreduced (Karatsuba: `hk[j]` holds `lo ^ hi` of `h[j]`), then
/// reduces once. `x[0]` lane 0 already has the running state folded in.
#[inline]
fn mul_sum(x: &[__m512i], h: &[__m512i], hk: &[__m512i]) -> __m128i {
    let mut lo = _mm512_setzero_si512();
    let mut hi = _mm512_setzero_si512();
    let mut mid = _mm512_setzero_si512();
    for j in 0..x.len() {
        lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(x[j], h[j], 0x00));
        hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(x[j], h[j], 0x11));
        let xk = _mm512_xor_si512(x[j], _mm512_shuffle_epi32(x[j], _MM_PERM_BADC));
        mid = _mm512_xor_si512(mid, _mm512_clmulepi64_epi128(xk, hk[j], 0x00));
    }
    mid = _mm512_ternarylogic_epi64(mid, lo, hi, 0x96);
    lo = _mm512_xor_si512(lo, _mm512_bslli_epi128::<8>(mid));
    hi = _mm512_xor_si512(hi, _mm512_bsrli_epi128::<8>(mid));
    // The enclosing target features include the AES-NI backend's, so this call is safe.
    aesni::reduce(hxor(lo), hxor(hi))
}

#[inline]
fn load_htab16(htab: &HTable) -> ([__m512i; 4], [__m512i; 4]) {
    // SAFETY: `htab.h` and `htab.k` are 16 u128 = 256 bytes each; register j reads entries 4j..4j+4.
    unsafe {
        (
            core::array::from_fn(|j| _mm512_loadu_si512(htab.h.as_ptr().add(4 * j).cast())),
            core::array::from_fn(|j| _mm512_loadu_si512(htab.k.as_ptr().add(4 * j).cast())),
        )
    }
}

/// GHASH of 16 byte-reversed blocks into `y`.
#[inline]
fn ghash16(h: &([__m512i; 4], [__m512i; 4]), y: __m128i, x: &[__m512i; 4]) -> __m128i {
    let x0 = _mm512_xor_si512(x[0], _mm512_zextsi128_si512(y));
    mul_sum(&[x0, x[1], x[2], x[3]], &h.0, &h.1)
}

/// GHASH of `n` (1..=16) byte-reversed blocks in `x` (blocks past `n` are zero) into `y`.
#[inline]
fn ghash_n(htab: &HTable, y: __m128i, x: &[__m512i; 4], n: usize) -> __m128i {
    debug_assert!((1..=16).contains(&n));
    let regs = n.div_ceil(4);
    let mut h = [_mm512_setzero_si512(); 4];
    let mut hk = [_mm512_setzero_si512(); 4];
    for j in 0..regs {
        let lanes = (n - 4 * j).min(4);
        let k: __mmask8 = ((1u32 << (2 * lanes)) - 1) as u8;
        // SAFETY: block 4j + l uses entry 16 - n + 4j + l; the mask enables only l < lanes, i.e. entries < 16.
        unsafe {
            h[j] = _mm512_maskz_loadu_epi64(k, htab.h.as_ptr().add(16 - n + 4 * j).cast());
            hk[j] = _mm512_maskz_loadu_epi64(k, htab.k.as_ptr().add(16 - n + 4 * j).cast());
        }
    }
    let x0 = _mm512_xor_si512(x[0], _mm512_zextsi128_si512(y));
    let xs = [x0, x[1], x[2], x[3]];
    mul_sum(&xs[..regs], &h[..regs], &hk[..regs])
}

/// Byte mask of register `j` for a tail of `rem` bytes.
#[inline]
fn tail_mask(rem: usize, j: usize) -> __mmask64 {
    if rem >= 64 * (j + 1) {
        !0
    } else if rem > 64 * j {
        (1u64 << (rem - 64 * j)) - 1
    } else {
        0
    }
}

/// Loads a tail of `rem < 256` bytes at `p`, zero-padded, as four registers.
///
/// # Safety
/// `p` must be valid for reading `rem` bytes.
#[inline]
unsafe fn load_tail(p: *const u8, rem: usize) -> [__m512i; 4] {
    let mut x = [_mm512_setzero_si512(); 4];
    for j in 0..4 {
        let m = tail_mask(rem, j);
        if m != 0 {
            // SAFETY: the mask enables only bytes below `rem`, which the caller guarantees are readable, and
            // `p + 64 j` is inside the buffer because `rem > 64 j`.
            x[j] = unsafe { _mm512_maskz_loadu_epi8(m, p.add(64 * j).cast()) };
        }
    }
    x
}

#[inline]
fn ghash_data(h: &([__m512i; 4], [__m512i; 4]), htab: &HTable, mut y: __m128i, data: &[u8]) -> __m128i {
    let mut chunks = data.chunks_exact(256);
    for c in &mut chunks {
        // SAFETY: `c` is 256 bytes.
        let x: [__m512i; 4] = core::array::from_fn(|j| bswap(unsafe { _mm512_loadu_si512(c.as_ptr().add(64 * j).cast()) }));
        y = ghash16(h, y, &x);
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        // SAFETY: `rem` is readable for its length.
        let mut x = unsafe { load_tail(rem.as_ptr(), rem.len()) };
        for v in x.iter_mut() {
            *v = bswap(*v);
        }
        y = ghash_n(htab, y, &x, rem.len().div_ceil(16));
    }
    y
}

fn ghash_impl(htab: &HTable, state: &mut u128, data: &[u8]) {
    // SAFETY: a u128 is 16 readable bytes.
    let y = unsafe { _mm_loadu_si128((state as *const u128).cast()) };
    let h = load_htab16(htab);
    let y = ghash_data(&h, htab, y, data);
    // SAFETY: a u128 is 16 writable bytes.
    unsafe { _mm_storeu_si128((state as *mut u128).cast(), y) };
}

/// The whole of GCM after J0 is known: E(K, J0), GHASH of the AAD, the stitched bulk loop, the lengths block
/// and the tag (for open: the expected tag), in one function so that nothing waits on a call boundary.
fn gcm_full<const NR: usize, const SEAL: bool>(
    keys: &RoundKeys,
    htab: &HTable,
    j0: &J0<'_>,
    aad: &[u8],
    mut buf: InOut<'_>,
) -> [u8; 16] {
    let k = load_keys(&keys.enc);
    let h = load_htab16(htab);
    let rev = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let j = aesni::load_j0(j0);
    let c0 = _mm_add_epi32(_mm_shuffle_epi8(j, rev), _mm_set_epi32(0, 0, 0, 1));
    let len = buf.len();
    let (src, dst) = buf.ptrs();
    let lens = _mm_set_epi64x((aad.len() as u64 * 8) as i64, (len as u64 * 8) as i64);
    if len < 256 && aad.len().div_ceil(16) + len.div_ceil(16) < 16 {
        // SAFETY: `InOut::ptrs` gives an input readable and an output writable for `len` bytes, equal or
        // disjoint; `len < 256` and the blocks fit in one aggregated GHASH, as `short` requires.
        let (y, ek) = unsafe { short::<NR, SEAL>(&k, htab, j, c0, aad, src, dst, len, lens) };
        let tag = _mm_xor_si128(_mm_shuffle_epi8(y, rev), ek);
        let mut out = [0u8; 16];
        // SAFETY: `out` is 16 writable bytes.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), tag) };
        return out;
    }
    let mut y = _mm_setzero_si128();
    if !aad.is_empty() {
        y = ghash_data(&h, htab, y, aad);
    }
    let ek;
    // SAFETY: `InOut::ptrs` gives an input readable and an output writable for `len` bytes, equal or disjoint.
    (y, ek) = unsafe { gcm_core::<NR, SEAL>(&k, &h, htab, j, c0, y, src, dst, len) };
    y = aesni::ghash_n(htab, y, &[lens], 1);
    let tag = _mm_xor_si128(_mm_shuffle_epi8(y, rev), ek);
    let mut out = [0u8; 16];
    // SAFETY: `out` is 16 writable bytes.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), tag) };
    out
}

/// Adds block `i` (0..`n`) of `x` (byte-reversed, four per register) times `htab.h[idx + i]` to the sums, unreduced.
/// Lanes at or past `n` get a zero power (masked loads), so whatever they hold adds nothing. `idx + n <= 16`.
#[inline]
fn acc_blocks(s: &mut Sums, htab: &HTable, x: &[__m512i; 4], n: usize, idx: usize) {
    debug_assert!(idx + n <= 16);
    for j in 0..n.div_ceil(4) {
        let lanes = (n - 4 * j).min(4);
        let m: __mmask8 = ((1u32 << (2 * lanes)) - 1) as u8;
        // SAFETY: lane l of register j reads entry idx + 4j + l; the mask enables only l < lanes, whose entries
        // are below idx + n <= 16, inside `htab.h` and `htab.k`.
        let (h, hk) = unsafe {
            (
                _mm512_maskz_loadu_epi64(m, htab.h.as_ptr().add(idx + 4 * j).cast()),
                _mm512_maskz_loadu_epi64(m, htab.k.as_ptr().add(idx + 4 * j).cast()),
            )
        };
        s.lo = _mm512_xor_si512(s.lo, _mm512_clmulepi64_epi128(x[j], h, 0x00));
        s.hi = _mm512_xor_si512(s.hi, _mm512_clmulepi64_epi128(x[j], h, 0x11));
        let xk = _mm512_xor_si512(x[j], _mm512_shuffle_epi32(x[j], _MM_PERM_BADC));
        s.mid = _mm512_xor_si512(s.mid, _mm512_clmulepi64_epi128(xk, hk, 0x00));
    }
}

/// Short messages (`len < 256`, with a + n + 1 <= 16 for a blocks of associated data and n of message): the
/// whole GHASH under ONE reduction. Block i of the m = a + n + 1 blocks (associated data, ciphertext, lengths)
/// is multiplied by its own power H^(m - i), the products are summed unreduced and reduced once, which is
/// GHASH's Horner evaluation rearranged. The message's counter blocks go through the rounds together (only
/// the registers the message needs), and E(K, J0) runs beside them on one block. Returns (GHASH, E(K, J0)).
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `len` bytes; they are equal or do not overlap.
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn short<const NR: usize, const SEAL: bool>(
    k: &[__m512i; 15],
    htab: &HTable,
    j: __m128i,
    c0: __m128i,
    aad: &[u8],
    src: *const u8,
    dst: *mut u8,
    len: usize,
    lens: __m128i,
) -> (__m128i, __m128i) {
    let ab = aad.len().div_ceil(16);
    let nb = len.div_ceil(16);
    debug_assert!(len < 256 && ab + nb < 16);
    let base_idx = 15 - ab - nb;
    let mut ek = _mm_xor_si128(j, _mm512_castsi512_si128(k[0]));
    let mut s = Sums { lo: _mm512_setzero_si512(), hi: _mm512_setzero_si512(), mid: _mm512_setzero_si512() };
    if ab > 0 {
        // SAFETY: `aad` is readable for its length, below 256 bytes here.
        let x = unsafe { load_tail(aad.as_ptr(), aad.len()) }.map(|v| bswap(v));
        acc_blocks(&mut s, htab, &x, ab, base_idx);
    }
    if nb > 0 {
        // SAFETY: the caller guarantees `len` readable bytes at `src`.
        let inp = unsafe { load_tail(src, len) };
        if !SEAL {
            acc_blocks(&mut s, htab, &inp.map(|v| bswap(v)), nb, base_idx + ab);
        }
        let base = _mm512_add_epi32(_mm512_broadcast_i32x4(c0), _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0));
        let four = _mm512_broadcast_i32x4(_mm_set_epi32(0, 0, 0, 4));
        let sixteen = _mm512_broadcast_i32x4(_mm_set_epi32(0, 0, 0, 16));
        let mut b = counters(base, four, sixteen);
        // Only as many registers as the message needs go through the rounds, E(K, J0) beside them.
        macro_rules! rounds {
            ($n:literal) => {{
                for x in b[..$n].iter_mut() {
                    *x = _mm512_xor_si512(*x, k[0]);
                }
                for r in 1..NR {
                    for x in b[..$n].iter_mut() {
                        *x = _mm512_aesenc_epi128(*x, k[r]);
                    }
                    ek = _mm_aesenc_si128(ek, _mm512_castsi512_si128(k[r]));
                }
                for x in b[..$n].iter_mut() {
                    *x = _mm512_aesenclast_epi128(*x, k[NR]);
                }
            }};
        }
        match nb.div_ceil(4) {
            1 => rounds!(1),
            2 => rounds!(2),
            3 => rounds!(3),
            _ => rounds!(4),
        }
        let mut ct = [_mm512_setzero_si512(); 4];
        for r in 0..4 {
            let m = tail_mask(len, r);
            if m != 0 {
                let o = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(b[r], inp[r]));
                // SAFETY: the mask enables only bytes below `len`, inside the output.
                unsafe { _mm512_mask_storeu_epi8(dst.add(64 * r).cast(), m, o) };
                ct[r] = bswap(o);
            }
        }
        if SEAL {
            acc_blocks(&mut s, htab, &ct, nb, base_idx + ab);
        }
    } else {
        for r in 1..NR {
            ek = _mm_aesenc_si128(ek, _mm512_castsi512_si128(k[r]));
        }
    }
    ek = _mm_aesenclast_si128(ek, _mm512_castsi512_si128(k[NR]));
    // The lengths block times H^1 (entry 15), on 128 bits, then the Karatsuba fix-up and the one reduction.
    // SAFETY: entry 15 of `htab.h` and `htab.k` is 16 readable bytes.
    let (h1, k1) = unsafe { (_mm_loadu_si128(htab.h.as_ptr().add(15).cast()), _mm_loadu_si128(htab.k.as_ptr().add(15).cast())) };
    let lo = _mm_xor_si128(hxor(s.lo), _mm_clmulepi64_si128(lens, h1, 0x00));
    let hi = _mm_xor_si128(hxor(s.hi), _mm_clmulepi64_si128(lens, h1, 0x11));
    let lk = _mm_xor_si128(lens, _mm_shuffle_epi32(lens, 0x4e));
    let mut mid = _mm_xor_si128(hxor(s.mid), _mm_clmulepi64_si128(lk, k1, 0x00));
    mid = _mm_ternarylogic_epi64(mid, lo, hi, 0x96);
    let lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
    let hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
    (aesni::reduce(lo, hi), ek)
}

fn gcm_impl<const NR: usize, const SEAL: bool>(
    keys: &RoundKeys,
    htab: &HTable,
    ctr: &[u8; 16],
    state: &mut u128,
    buf: &mut InOut<'_>,
) {
    let k = load_keys(&keys.enc);
    let h = load_htab16(htab);
    // SAFETY: `ctr` is 16 bytes and `state` a u128.
    let (c0, y) = unsafe {
        (
            _mm_shuffle_epi8(
                _mm_loadu_si128(ctr.as_ptr().cast()),
                _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            ),
            _mm_loadu_si128((state as *const u128).cast()),
        )
    };
    let len = buf.len();
    let (src, dst) = buf.ptrs();
    // SAFETY: `InOut::ptrs` gives an input readable and an output writable for `len` bytes, equal or disjoint.
    let (y, _) = unsafe { gcm_core::<NR, SEAL>(&k, &h, htab, _mm_setzero_si128(), c0, y, src, dst, len) };
    // SAFETY: a u128 is 16 writable bytes.
    unsafe { _mm_storeu_si128((state as *mut u128).cast(), y) };
}

/// The stitched 16-block loop over the `len` bytes (a nonzero multiple of 256) at `src`, output to `dst`: CTR
/// from the byte-reversed counters in `base`, GHASH into `y` (lane 0) of the previous chunk's ciphertext `prev`
/// (seal; returned updated with this loop's last chunk) or of each chunk's own ciphertext (open).
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `len` bytes; they are equal or do not overlap.
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn bulk<const NR: usize, const SEAL: bool>(
    k: &[__m512i; 15],
    htab: &HTable,
    y: __m512i,
    base: __m512i,
    prev: [__m512i; 4],
    src: *const u8,
    dst: *mut u8,
    len: usize,
) -> (__m512i, __m512i, [__m512i; 4]) {
    debug_assert!(len > 0 && len.is_multiple_of(256));
    let mut st = Bulk {
        p: src,
        // SAFETY: one past the end of the input.
        end: unsafe { src.add(len) },
        d: (dst as isize).wrapping_sub(src as isize),
        h: htab.h.as_ptr(),
        four: &FOUR,
        inc: &BE_INC,
        // The low byte of lane 0's counter (the byte-reversed counter's low 32 bits).
        cb: _mm512_cvtsi512_si32(base) as u32 & 0xff,
        pc: &POLY,
        y,
        base: bswap(base),
        mask: _mm512_broadcast_i32x4(_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
        x: prev,
        k: *k,
    };
    match (NR, SEAL) {
        (14, true) => bulk_asm!(st, concat!(
            ctr16!(),
            rnd!(17), gh!(1), rnd!(18), gh!(2), rnd!(19), gh!(3), rnd!(20), gh!(4), rnd!(21), gh!(5),
            rnd!(22), gh!(6), rnd!(23), gh!(7), rnd!(24), gh!(8), rnd!(25), gh!(9), rnd!(26), gh!(10),
            rnd!(27), gh!(11), rnd!(28), gh!(12), rnd!(29), gh!(13),
            last!(30), keep_ct!(), next!()
        )),
        (14, false) => bulk_asm!(st, concat!(
            load_ct!(), ctr16!(),
            rnd!(17), gh!(1), rnd!(18), gh!(2), rnd!(19), gh!(3), rnd!(20), gh!(4), rnd!(21), gh!(5),
            rnd!(22), gh!(6), rnd!(23), gh!(7), rnd!(24), gh!(8), rnd!(25), gh!(9), rnd!(26), gh!(10),
            rnd!(27), gh!(11), rnd!(28), gh!(12), rnd!(29), gh!(13),
            last!(30), next!()
        )),
        (_, true) => bulk_asm!(st, concat!(
            ctr16!(),
            rnd!(17), gh!(1), gh!(2), rnd!(18), gh!(3), rnd!(19), gh!(4), rnd!(20), gh!(5), gh!(6),
            rnd!(21), gh!(7), rnd!(22), gh!(8), gh!(9), rnd!(23), gh!(10), gh!(11), rnd!(24), gh!(12),
            rnd!(25), gh!(13),
            last!(26), keep_ct!(), next!()
        )),
        (_, false) => bulk_asm!(st, concat!(
            load_ct!(), ctr16!(),
            rnd!(17), gh!(1), gh!(2), rnd!(18), gh!(3), rnd!(19), gh!(4), rnd!(20), gh!(5), gh!(6),
            rnd!(21), gh!(7), rnd!(22), gh!(8), gh!(9), rnd!(23), gh!(10), gh!(11), rnd!(24), gh!(12),
            rnd!(25), gh!(13),
            last!(26), next!()
        )),
    }
    (st.y, bswap(st.base), st.x)
}

/// CTR from counter `c0` (byte-reversed) over the `len` bytes at `src` into `dst`, GHASH of the ciphertext into
/// `y`; also returns E(K, `j`) (computed first, so its latency hides behind the bulk work). Each chunk's input is
/// read before its output is written, so in place (`src == dst`) is the same code.
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `len` bytes; they are equal or do not overlap.
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn gcm_core<const NR: usize, const SEAL: bool>(
    k: &[__m512i; 15],
    h: &([__m512i; 4], [__m512i; 4]),
    htab: &HTable,
    j: __m128i,
    c0: __m128i,
    mut y: __m128i,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) -> (__m128i, __m128i) {
    let mut ek = _mm_xor_si128(j, _mm512_castsi512_si128(k[0]));
    for r in 1..NR {
        ek = _mm_aesenc_si128(ek, _mm512_castsi512_si128(k[r]));
    }
    ek = _mm_aesenclast_si128(ek, _mm512_castsi512_si128(k[NR]));
    // Lane l of register j holds counter c0 + 4 j + l.
    let mut base = _mm512_add_epi32(_mm512_broadcast_i32x4(c0), _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0));
    let four = _mm512_broadcast_i32x4(_mm_set_epi32(0, 0, 0, 4));
    let sixteen = _mm512_broadcast_i32x4(_mm_set_epi32(0, 0, 0, 16));
    let full = len / 256;
    let mut prev = [_mm512_setzero_si512(); 4];
    let mut i = 0;
    if SEAL && full > 0 {
        // The first chunk has no previous ciphertext to hash.
        let mut b = counters(base, four, sixteen);
        base = _mm512_add_epi32(base, sixteen);
        enc16::<NR>(k, &mut b);
        for j in 0..4 {
            // SAFETY: chunk 0 spans bytes [0, 256) of input and output, in bounds since full > 0.
            unsafe {
                let o = _mm512_xor_si512(b[j], _mm512_loadu_si512(src.add(64 * j).cast()));
                _mm512_storeu_si512(dst.add(64 * j).cast(), o);
                prev[j] = bswap(o);
            }
        }
        i = 1;
    }
    if i < full {
        let yz;
        // SAFETY: chunks i..full of input and output, in bounds since i < full.
        (yz, base, prev) = unsafe {
            bulk::<NR, SEAL>(
                k,
                htab,
                _mm512_zextsi128_si512(y),
                base,
                prev,
                src.add(256 * i),
                dst.add(256 * i),
                256 * (full - i),
            )
        };
        y = _mm512_castsi512_si128(yz);
    }
    if SEAL && full > 0 {
        y = ghash16(h, y, &prev);
    }
    let rem = len - 256 * full;
    if rem > 0 {
        // SAFETY: the tail starts at byte 256 * full of input and output and has `rem` bytes.
        let (sp, tp) = unsafe { (src.add(256 * full), dst.add(256 * full)) };
        // SAFETY: `sp` is readable for `rem` bytes.
        let inp = unsafe { load_tail(sp, rem) };
        let n = rem.div_ceil(16);
        if !SEAL {
            let x: [__m512i; 4] = core::array::from_fn(|j| bswap(inp[j]));
            y = ghash_n(htab, y, &x, n);
        }
        let mut b = counters(base, four, sixteen);
        // Only as many registers as the tail needs go through the rounds.
        match n.div_ceil(4) {
            1 => {
                let mut t = [b[0]];
                enc_regs::<NR, 1>(k, &mut t);
                b[0] = t[0];
            }
            2 => {
                let mut t = [b[0], b[1]];
                enc_regs::<NR, 2>(k, &mut t);
                b[..2].copy_from_slice(&t);
            }
            3 => {
                let mut t = [b[0], b[1], b[2]];
                enc_regs::<NR, 3>(k, &mut t);
                b[..3].copy_from_slice(&t);
            }
            _ => enc16::<NR>(k, &mut b),
        }
        let mut ct = [_mm512_setzero_si512(); 4];
        for j in 0..4 {
            let m = tail_mask(rem, j);
            if m != 0 {
                let o = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(b[j], inp[j]));
                // SAFETY: the mask enables only bytes below `rem`, inside the tail.
                unsafe { _mm512_mask_storeu_epi8(tp.add(64 * j).cast(), m, o) };
                ct[j] = bswap(o);
            }
        }
        if SEAL {
            y = ghash_n(htab, y, &ct, n);
        }
    }
    (y, ek)
}
}

gcm_entry_points!(Backend::Vaes);
