//! AVX2 Poly1305: radix 2^26, four blocks in parallel.
//!
//! The technique of the well-known vectorised Poly1305 (Goll–Gueron; OpenSSL's `poly1305-x86_64`): four
//! accumulators `a_0..a_3` run in the four 64-bit lanes of a ymm register, each limb of 26 bits in its own
//! register, multiplied with `vpmuludq` (32×32→64). Each group of four blocks is spread over the lanes (in
//! the order [`LANE_BLOCK`] the 64-bit unpacks produce) and every step computes `a = (a + m) · r^4` lane-wise.
//! The last step instead multiplies the lane holding block `k` of the last group by `r^(4-k)`, so that the
//! sum of the lanes is exactly the serial Horner result `Σ m_k r^(n-k)`. The incoming accumulator `h` is
//! added into lane 0 (block 0) before the first step.
//!
//! Lazy reduction: limbs stay below 2^27 between steps (products of 27-bit limbs and 29-bit `5·r` limbs, five
//! per column, stay below 2^59), and one interleaved carry round per step keeps them there. Inputs shorter
//! than [`MIN_LEN`] and the final `< 4` blocks go to the portable code. Nothing branches on data.
#![allow(unsafe_code)]

use super::soft;
use super::{Backend, Core, POWERS_LEN};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// Below this many bytes the radix-2^64 scalar code is as fast as this backend (measured on Sapphire Rapids;
/// the 4-way loop is only about 1.3 times the scalar speed on long inputs there).
const MIN_LEN: usize = 1024;

const M26: u64 = (1 << 26) - 1;

/// Absorbs whole blocks (`data.len()` a multiple of 16) for a state whose (checked) backend is `Avx2`.
pub(super) fn blocks(backend: Checked<Backend>, core: &mut Core, data: &[u8]) {
    if data.len() < MIN_LEN {
        soft::blocks(&mut core.h, &core.r, data);
        return;
    }
    if !core.powers_ready {
        core.powers = powers(soft::to44([core.r[0], core.r[1], 0]));
        core.powers_ready = true;
    }
    let vec_len = data.len() & !63;
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2, the only
    // feature enabled in this file.
    unsafe { blocks4(&mut core.h, &core.powers, &data[..vec_len]) };
    soft::blocks(&mut core.h, &core.r, &data[vec_len..]);
}

/// Lane `j` of the vector loop holds block `LANE_BLOCK[j]` of each group of four (the order `vpunpck*qdq`
/// produces), so it is finally multiplied by `r^(4 - LANE_BLOCK[j])`.
const LANE_BLOCK: [usize; 4] = [0, 2, 1, 3];

/// The table: `powers[5 * lane + limb]` is 26-bit limb `limb` of `r^(4 - LANE_BLOCK[lane])`.
fn powers(r: [u64; 3]) -> [u64; POWERS_LEN] {
    let r2 = soft::mul44(r, r);
    let r3 = soft::mul44(r2, r);
    let r4 = soft::mul44(r2, r2);
    let by_exp = [r, r2, r3, r4];
    let mut t = [0u64; POWERS_LEN];
    for (lane, &blk) in LANE_BLOCK.iter().enumerate() {
        let limbs = to_radix26(by_exp[3 - blk]);
        t[5 * lane..5 * lane + 5].copy_from_slice(&limbs);
    }
    t
}

/// Radix 2^44 → radix 2^26 (limbs below 2^26, the top one at most 2^26).
fn to_radix26(h: [u64; 3]) -> [u64; 5] {
    let [h0, h1, h2] = soft::normalize44(h);
    [h0 & M26, ((h0 >> 26) | (h1 << 18)) & M26, (h1 >> 8) & M26, ((h1 >> 34) | (h2 << 10)) & M26, h2 >> 16]
}

/// Radix 2^26 (limbs below 2^61) → partially reduced radix 2^44.
fn from_radix26(d: [u64; 5]) -> [u64; 3] {
    let [mut d0, mut d1, mut d2, mut d3, mut d4] = d;
    d1 += d0 >> 26;
    d0 &= M26;
    d2 += d1 >> 26;
    d1 &= M26;
    d3 += d2 >> 26;
    d2 &= M26;
    d4 += d3 >> 26;
    d3 &= M26;
    d0 += (d4 >> 26) * 5;
    d4 &= M26;
    d1 += d0 >> 26;
    d0 &= M26;
    // d1 may exceed 26 bits by a little: add (not OR) the pieces, so overlaps carry correctly.
    let h0 = d0 + ((d1 & ((1 << 18) - 1)) << 26);
    let h1 = (d1 >> 18) + (d2 << 8) + ((d3 & ((1 << 10) - 1)) << 34);
    let h2 = (d3 >> 10) + (d4 << 16);
    soft::carry44([h0, h1, h2])
}

/// `[x0, x1, x2, x3]` as lanes 0..3.
#[inline]
#[target_feature(enable = "avx2")]
fn lanes4(x: [u64; 4]) -> __m256i {
    _mm256_set_epi64x(x[3] as i64, x[2] as i64, x[1] as i64, x[0] as i64)
}

/// Five 26-bit limb vectors.
type Limbs = [__m256i; 5];

#[inline]
#[target_feature(enable = "avx2")]
fn splat(x: u64) -> __m256i {
    _mm256_set1_epi64x(x as i64)
}

#[target_feature(enable = "avx2")]
unsafe fn blocks4(h: &mut [u64; 3], table: &[u64; POWERS_LEN], data: &[u8]) {
    debug_assert!(data.len().is_multiple_of(64) && !data.is_empty());
    let mask = splat(M26);
    let hibit = splat(1 << 24);

    // r^4 in every lane (lane 0 of the table holds r^4), and 5·r^4.
    let mut r4 = [mask; 5];
    let mut r4x5 = [mask; 5];
    for i in 0..5 {
        r4[i] = splat(table[i]);
        r4x5[i] = splat(table[i] * 5);
    }
    // Per-lane final powers.
    let mut rf = [mask; 5];
    let mut rfx5 = [mask; 5];
    let h26 = to_radix26(soft::to44(*h));
    let mut a = [mask; 5];
    for i in 0..5 {
        let lanes = [table[i], table[5 + i], table[10 + i], table[15 + i]];
        rf[i] = lanes4(lanes);
        rfx5[i] = lanes4(lanes.map(|x| x * 5));
        a[i] = lanes4([h26[i], 0, 0, 0]);
    }

    let mut chunks = data.chunks_exact(64);
    let n = chunks.len();
    for _ in 0..n - 1 {
        let chunk = chunks.next().unwrap();
        // SAFETY: `chunk` is 64 bytes long; AVX2 is enabled in this function.
        let m = unsafe { load4(chunk.as_ptr(), mask, hibit) };
        for i in 0..5 {
            a[i] = _mm256_add_epi64(a[i], m[i]);
        }
        a = carry(mul(&a, &r4, &r4x5), mask);
    }
    let chunk = chunks.next().unwrap();
    // SAFETY: as above.
    let m = unsafe { load4(chunk.as_ptr(), mask, hibit) };
    for i in 0..5 {
        a[i] = _mm256_add_epi64(a[i], m[i]);
    }
    let d = mul(&a, &rf, &rfx5);

    // Sum the four lanes of each (uncarried, < 2^59) column: the total stays below 2^61.
    let mut sum = [0u64; 5];
    for i in 0..5 {
        let mut lanes = [0u64; 4];
        // SAFETY: `lanes` is 32 bytes of writable memory; unaligned store.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), d[i]) };
        sum[i] = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    }
    *h = soft::from44(from_radix26(sum));
}

/// Loads four 16-byte blocks from `p` into 26-bit limbs, lane `j` holding block `LANE_BLOCK[j]`, with the
/// 2^128 bit of each block set.
///
/// # Safety
/// `p` must be valid for reading 64 bytes; the CPU must have AVX2.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load4(p: *const u8, mask: __m256i, hibit: __m256i) -> Limbs {
    // SAFETY: the caller guarantees 64 readable bytes at `p`; loads are unaligned.
    let (v0, v1) = unsafe { (_mm256_loadu_si256(p.cast()), _mm256_loadu_si256(p.add(32).cast())) };
    let lo = _mm256_unpacklo_epi64(v0, v1); // blocks 0, 2, 1, 3: low halves
    let hi = _mm256_unpackhi_epi64(v0, v1); // and high halves
    [
        _mm256_and_si256(lo, mask),
        _mm256_and_si256(_mm256_srli_epi64::<26>(lo), mask),
        _mm256_and_si256(_mm256_or_si256(_mm256_srli_epi64::<52>(lo), _mm256_slli_epi64::<12>(hi)), mask),
        _mm256_and_si256(_mm256_srli_epi64::<14>(hi), mask),
        _mm256_or_si256(_mm256_srli_epi64::<40>(hi), hibit),
    ]
}

/// Lane-wise `a · r` without carries (column sums below 2^59 for limbs of `a` below 2^27).
#[inline]
#[target_feature(enable = "avx2")]
fn mul(a: &Limbs, r: &Limbs, r5: &Limbs) -> Limbs {
    let [a0, a1, a2, a3, a4] = *a;
    let d0 = dot5([a0, a1, a2, a3, a4], [r[0], r5[4], r5[3], r5[2], r5[1]]);
    let d1 = dot5([a0, a1, a2, a3, a4], [r[1], r[0], r5[4], r5[3], r5[2]]);
    let d2 = dot5([a0, a1, a2, a3, a4], [r[2], r[1], r[0], r5[4], r5[3]]);
    let d3 = dot5([a0, a1, a2, a3, a4], [r[3], r[2], r[1], r[0], r5[4]]);
    let d4 = dot5([a0, a1, a2, a3, a4], [r[4], r[3], r[2], r[1], r[0]]);
    [d0, d1, d2, d3, d4]
}

/// `Σ x_i · y_i` lane-wise on the low 32 bits of each 64-bit lane, as a balanced tree of additions.
#[inline]
#[target_feature(enable = "avx2")]
fn dot5(x: Limbs, y: Limbs) -> __m256i {
    let p0 = _mm256_mul_epu32(x[0], y[0]);
    let p1 = _mm256_mul_epu32(x[1], y[1]);
    let p2 = _mm256_mul_epu32(x[2], y[2]);
    let p3 = _mm256_mul_epu32(x[3], y[3]);
    let p4 = _mm256_mul_epu32(x[4], y[4]);
    _mm256_add_epi64(_mm256_add_epi64(_mm256_add_epi64(p0, p1), _mm256_add_epi64(p2, p3)), p4)
}

/// One interleaved carry round (0→1, 3→4, 1→2, 4→0 (×5), 2→3, 0→1, 3→4): limbs end below 2^26 + 2^9.
#[inline]
#[target_feature(enable = "avx2")]
fn carry(d: Limbs, mask: __m256i) -> Limbs {
    let [mut d0, mut d1, mut d2, mut d3, mut d4] = d;
    let c = _mm256_srli_epi64::<26>(d0);
    d0 = _mm256_and_si256(d0, mask);
    d1 = _mm256_add_epi64(d1, c);
    let c = _mm256_srli_epi64::<26>(d3);
    d3 = _mm256_and_si256(d3, mask);
    d4 = _mm256_add_epi64(d4, c);
    let c = _mm256_srli_epi64::<26>(d1);
    d1 = _mm256_and_si256(d1, mask);
    d2 = _mm256_add_epi64(d2, c);
    let c = _mm256_srli_epi64::<26>(d4);
    d4 = _mm256_and_si256(d4, mask);
    d0 = _mm256_add_epi64(d0, _mm256_add_epi64(c, _mm256_slli_epi64::<2>(c)));
    let c = _mm256_srli_epi64::<26>(d2);
    d2 = _mm256_and_si256(d2, mask);
    d3 = _mm256_add_epi64(d3, c);
    let c = _mm256_srli_epi64::<26>(d0);
    d0 = _mm256_and_si256(d0, mask);
    d1 = _mm256_add_epi64(d1, c);
    let c = _mm256_srli_epi64::<26>(d3);
    d3 = _mm256_and_si256(d3, mask);
    d4 = _mm256_add_epi64(d4, c);
    [d0, d1, d2, d3, d4]
}
