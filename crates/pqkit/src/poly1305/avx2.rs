//! Poly1305 for AVX2 machines: radix 2^26, four blocks per `ymm` step, two interleaved accumulators.
//!
//! An element is five 26-bit limbs, one limb per register, one block per 64-bit lane. `vpmuludq` multiplies the
//! low 32 bits of each lane into a 64-bit product, so an element product is 25 multiplies with the key limbs
//! `r_i` and their multiples `5 r_i` (the terms of weight 2^130 and above fold back times 5), followed by a lazy
//! carry pass (two interleaved carry chains, limbs left a few bits over 26).
//!
//! Block `4g + j` of a run goes to lane `j` of group `g` (the unpacking of two 32-byte loads leaves the lanes in
//! the block order 0, 2, 1, 3, which only changes which power of `r` each lane is finally multiplied by). The
//! state before the last step of the serial Horner rule is `x_j = Σ_g m_{4g+j} r^{4(n-1-g)}` per lane; the last
//! step multiplies lane `j` by `r^(4-j)` and the lanes are summed. The incoming accumulator is added into lane 0
//! (block 0). With one accumulator the loop is bound by its own dependency chain (multiply, add tree, carry chain:
//! the 4-way loop this file held before ran at half of OpenSSL's speed for that reason), so two accumulators run
//! interleaved, `a` on the even groups and `b` on the odd ones, each stepping by `r^8`; they merge as
//! `(a + G) r^4 + (b + G')` before the last step. This is the published structure of OpenSSL's AVX2 Poly1305
//! (powers of `r` in the lanes, lazy reduction), written independently and with the second accumulator.
//!
//! Bounds: between steps the limbs are below 2^26 + 2^11; with a message block (limbs below 2^26) and, at the
//! merge, the other accumulator added they stay below 2^28. Powers of `r` are partially reduced (limbs below
//! 2^27, their multiples by 5 below 2^29.4), so every product is below 2^57.4, the five-term column sums below
//! 2^60, and every multiplier input stays within the 32 bits `vpmuludq` reads.
//!
//! Inputs shorter than [`MIN_LEN`] and the final `< 4` blocks go to the portable code. Nothing branches on data.
//! The scalar `r^16` kept in the powers table serves the AEAD's stitched two-chain loop (`Poly1305::chain2`).
#![allow(unsafe_code)]

use super::soft;
use super::{Backend, Core, POWERS_LEN};
use crate::dispatch::Checked;
use core::arch::x86_64::*;

/// Below this many bytes the portable code is as fast: the powers of `r`, the last step, the lane sum and the
/// conversions cost about as much as 256 bytes of scalar blocks (measured on Zen 4, a fresh key per message:
/// 256 bytes 105 ns portable against 142 ns here, 512 bytes 175 against 171 ns). A fresh state's
/// runs of 512..4096 bytes on two scalar chains (32-block runs joined by `r^16`, as the AEAD's stitched loop does)
/// instead of this vector path measured slower, 1 KiB 165-199 -> 265 ns with PQKIT_CPU=avx2: the scalar block is
/// bound by the integer instructions it issues (about 4 ns a block on one chain or two), not by one chain's latency.
const MIN_LEN: usize = 512;

const M26: u64 = (1 << 26) - 1;

/// Offsets in `Core::powers`: `[0..3]` `r^16` in radix 2^44 (for the stitched scalar chains, filled by [`r16`]);
/// filled together on the first long input by [`fill_powers`]: `[R8..R8 + 5]` the limbs of `r^8` in radix 2^26,
/// `[LAST..LAST + 20]` the last-step powers, `powers[LAST + 4 limb + lane]` = limb `limb` of the power lane `lane`
/// needs: `r^4, r^2, r^3, r^1` (lanes hold blocks 0, 2, 1, 3). Lane 0 is also the `r^4` of the merge. Then
/// [`R8_44`].
const R8: usize = 3;
const LAST: usize = 8;
/// `r^8` in radix 2^44 (`powers[R8_44..R8_44 + 3]`), from which [`r16`] squares `r^16` when needed later.
const R8_44: usize = 28;
const _: () = assert!(R8_44 + 3 <= POWERS_LEN);

/// Absorbs whole blocks (`data.len()` a multiple of 16) for a state whose (checked) backend is `Avx2`.
pub(super) fn blocks(backend: Checked<Backend>, core: &mut Core, data: &[u8]) {
    if data.len() < MIN_LEN {
        soft::blocks(&mut core.h, &core.r, data);
        return;
    }
    fill_powers(core, false);
    let vec_len = data.len() & !63;
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has AVX2, the
    // feature `blocks4` enables; `vec_len` is a non-zero multiple of 64 (data.len() >= MIN_LEN >= 64).
    unsafe { blocks4(&mut core.h, &core.powers, &data[..vec_len]) };
    soft::blocks(&mut core.h, &core.r, &data[vec_len..]);
}

/// `r^16` in radix 2^44 for the AEAD's stitched scalar chains, computed once per state (only there: the vector
/// loop does not need it) and kept in `core.powers[..3]`; from the stored `r^8` if the table is filled, else
/// filled with it.
pub(super) fn r16(core: &mut Core) -> [u64; 3] {
    if !core.r16_ready {
        if core.powers_ready {
            let r8 = [core.powers[R8_44], core.powers[R8_44 + 1], core.powers[R8_44 + 2]];
            core.powers[..3].copy_from_slice(&soft::normalize44(soft::mul44(r8, r8)));
            core.r16_ready = true;
        } else {
            fill_powers(core, true);
        }
    }
    [core.powers[0], core.powers[1], core.powers[2]]
}

/// Fills the table of powers of `r` (see [`R8`]) unless it is ready, and `r^16` too if `with_r16`.
fn fill_powers(core: &mut Core, with_r16: bool) {
    if core.powers_ready {
        return;
    }
    // r^2..r^4 as the portable block step does, times the clamped r (h2 <= 4 throughout: `to26` takes them as
    // they are); only r^8, the square of r^4, needs the general product of radix 2^44.
    let r = [core.r[0], core.r[1], 0];
    let r2 = soft::absorb_words(r, core.r, 0, 0, 0);
    let r3 = soft::absorb_words(r2, core.r, 0, 0, 0);
    let r4 = soft::absorb_words(r3, core.r, 0, 0, 0);
    let r4_44 = soft::to44(r4);
    let r8 = soft::mul44(r4_44, r4_44);
    if with_r16 {
        core.powers[..3].copy_from_slice(&soft::normalize44(soft::mul44(r8, r8)));
        core.r16_ready = true;
    }
    core.powers[R8_44..R8_44 + 3].copy_from_slice(&r8);
    core.powers[R8..R8 + 5].copy_from_slice(&to26(soft::from44(r8)));
    for (lane, p) in [r4, r2, r3, r].into_iter().enumerate() {
        let limbs = to26(p);
        for (limb, x) in limbs.into_iter().enumerate() {
            core.powers[LAST + 4 * limb + lane] = x;
        }
    }
    core.powers_ready = true;
}

/// A radix-2^64 value with `h2 <= 4` in five 26-bit limbs (the top one below 2^27).
fn to26(h: [u64; 3]) -> [u64; 5] {
    [
        h[0] & M26,
        (h[0] >> 26) & M26,
        ((h[0] >> 52) | (h[1] << 12)) & M26,
        (h[1] >> 14) & M26,
        (h[1] >> 40) | (h[2] << 24),
    ]
}

/// Five radix-2^26 limbs (each below 2^62) back to the radix-2^64 form with `h2 <= 4`.
fn from26(l: [u64; 5]) -> [u64; 3] {
    let [mut l0, mut l1, mut l2, mut l3, mut l4] = l;
    // Two full carry passes with the wrap-around: after the first every limb is below 2^26 + 2^39, after the
    // second l0..l3 are below 2^26 and l4 is at most 2^26 (so the value is below 2^130 + 2^104).
    for _ in 0..2 {
        l1 += l0 >> 26;
        l0 &= M26;
        l2 += l1 >> 26;
        l1 &= M26;
        l3 += l2 >> 26;
        l2 &= M26;
        l4 += l3 >> 26;
        l3 &= M26;
        l0 += (l4 >> 26) * 5;
        l4 &= M26;
    }
    l1 += l0 >> 26;
    l0 &= M26;
    l2 += l1 >> 26;
    l1 &= M26;
    l3 += l2 >> 26;
    l2 &= M26;
    l4 += l3 >> 26;
    l3 &= M26;
    [l0 | (l1 << 26) | (l2 << 52), (l2 >> 12) | (l3 << 14) | (l4 << 40), l4 >> 24]
}

/// Five radix-2^26 limb vectors.
type Limbs = [__m256i; 5];

/// A power of `r` (per lane) and the multiples `5 r_1 .. 5 r_4`.
struct Key {
    r: Limbs,
    s: [__m256i; 4],
}

impl Key {
    /// The key whose limb `i` is the vector `r[i]`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn new(r: Limbs) -> Key {
        Key { r, s: [times5(r[1]), times5(r[2]), times5(r[3]), times5(r[4])] }
    }

    /// The same power (limbs `r`) in every lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(r: &[u64]) -> Key {
        Key::new(core::array::from_fn(|i| _mm256_set1_epi64x(r[i] as i64)))
    }
}

/// `vpmuludq`: the 64-bit products of the low 32 bits of each lane.
///
/// Written as `asm!`: LLVM rewrites `_mm256_mul_epu32` into a 64-bit multiply of masked operands, drops the masks
/// it believes redundant and then, unable to prove the high halves zero across the loop, expands the multiply
/// into three `vpmuludq` and shifts (measured: 105 multiplies per 128 bytes instead of 50).
#[inline]
#[target_feature(enable = "avx2")]
fn mul32(x: __m256i, y: __m256i) -> __m256i {
    let out: __m256i;
    // SAFETY: register-only arithmetic (no memory, no stack, no flags); AVX2 is enabled on this function.
    unsafe {
        core::arch::asm!(
            "vpmuludq {o}, {x}, {y}",
            o = lateout(ymm_reg) out,
            x = in(ymm_reg) x,
            y = in(ymm_reg) y,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    out
}

#[inline]
#[target_feature(enable = "avx2")]
fn times5(x: __m256i) -> __m256i {
    _mm256_add_epi64(x, _mm256_slli_epi64::<2>(x))
}

#[inline]
#[target_feature(enable = "avx2")]
fn add(a: Limbs, b: Limbs) -> Limbs {
    core::array::from_fn(|i| _mm256_add_epi64(a[i], b[i]))
}

/// Loads four 16-byte blocks as radix-2^26 limbs with the 2^128 bit set, blocks 0, 2, 1, 3 in lanes 0..4.
///
/// # Safety
/// `p` must be valid for reading 64 bytes; the CPU must have AVX2.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load4(p: *const u8) -> Limbs {
    // SAFETY: the caller guarantees 64 readable bytes at `p`; loads are unaligned.
    let (v0, v1) = unsafe { (_mm256_loadu_si256(p.cast()), _mm256_loadu_si256(p.add(32).cast())) };
    let lo = _mm256_unpacklo_epi64(v0, v1); // low words of blocks 0, 2, 1, 3
    let hi = _mm256_unpackhi_epi64(v0, v1);
    let m = _mm256_set1_epi64x(M26 as i64);
    [
        _mm256_and_si256(lo, m),
        _mm256_and_si256(_mm256_srli_epi64::<26>(lo), m),
        _mm256_and_si256(_mm256_or_si256(_mm256_srli_epi64::<52>(lo), _mm256_slli_epi64::<12>(hi)), m),
        _mm256_and_si256(_mm256_srli_epi64::<14>(hi), m),
        _mm256_or_si256(_mm256_srli_epi64::<40>(hi), _mm256_set1_epi64x(1 << 24)),
    ]
}

/// Lane-wise `a · k mod p`, partially reduced (limbs below 2^26 + 2^11).
#[inline]
#[target_feature(enable = "avx2")]
fn mul(a: Limbs, k: &Key) -> Limbs {
    let [a0, a1, a2, a3, a4] = a;
    let [r0, r1, r2, r3, r4] = k.r;
    let [s1, s2, s3, s4] = k.s;
    let m = |x, y| mul32(x, y);
    let sum5 = |p: [__m256i; 5]| {
        _mm256_add_epi64(_mm256_add_epi64(_mm256_add_epi64(p[0], p[1]), _mm256_add_epi64(p[2], p[3])), p[4])
    };
    let d0 = sum5([m(a0, r0), m(a1, s4), m(a2, s3), m(a3, s2), m(a4, s1)]);
    let d1 = sum5([m(a0, r1), m(a1, r0), m(a2, s4), m(a3, s3), m(a4, s2)]);
    let d2 = sum5([m(a0, r2), m(a1, r1), m(a2, r0), m(a3, s4), m(a4, s3)]);
    let d3 = sum5([m(a0, r3), m(a1, r2), m(a2, r1), m(a3, r0), m(a4, s4)]);
    let d4 = sum5([m(a0, r4), m(a1, r3), m(a2, r2), m(a3, r1), m(a4, r0)]);
    carry([d0, d1, d2, d3, d4])
}

/// The lazy carry pass: two chains (3 → 4 → 0 → 1 and 0 → 1 → 2 → 3 → 4) interleaved. Column sums below 2^62
/// come out with every limb below 2^26 except limbs 1 and 4, below 2^26 + 2^11.
#[inline]
#[target_feature(enable = "avx2")]
fn carry(d: Limbs) -> Limbs {
    let m = _mm256_set1_epi64x(M26 as i64);
    let [mut d0, mut d1, mut d2, mut d3, mut d4] = d;
    let c = _mm256_srli_epi64::<26>(d3);
    d3 = _mm256_and_si256(d3, m);
    d4 = _mm256_add_epi64(d4, c);
    let c2 = _mm256_srli_epi64::<26>(d0);
    d0 = _mm256_and_si256(d0, m);
    d1 = _mm256_add_epi64(d1, c2);

    let c = _mm256_srli_epi64::<26>(d4);
    d4 = _mm256_and_si256(d4, m);
    d0 = _mm256_add_epi64(d0, times5(c));
    let c2 = _mm256_srli_epi64::<26>(d1);
    d1 = _mm256_and_si256(d1, m);
    d2 = _mm256_add_epi64(d2, c2);

    let c = _mm256_srli_epi64::<26>(d0);
    d0 = _mm256_and_si256(d0, m);
    d1 = _mm256_add_epi64(d1, c);
    let c2 = _mm256_srli_epi64::<26>(d2);
    d2 = _mm256_and_si256(d2, m);
    d3 = _mm256_add_epi64(d3, c2);

    let c = _mm256_srli_epi64::<26>(d3);
    d3 = _mm256_and_si256(d3, m);
    d4 = _mm256_add_epi64(d4, c);
    [d0, d1, d2, d3, d4]
}

/// Absorbs `data` (a non-empty multiple of 64 bytes: `n` groups of four blocks) into `h`; `table` is the filled
/// powers table (see [`R8`]).
///
/// With `x` the merged accumulator: after the last pair `x = (a + G) r^4 + (b + G')` is the one-accumulator state
/// before its last multiplication; a final odd group `G''` makes it `x r^4 + G''`.
#[target_feature(enable = "avx2")]
unsafe fn blocks4(h: &mut [u64; 3], table: &[u64; POWERS_LEN], data: &[u8]) {
    debug_assert!(data.len().is_multiple_of(64) && !data.is_empty());
    let r8 = Key::splat(&table[R8..R8 + 5]);
    let r4 = Key::splat(&[table[LAST], table[LAST + 4], table[LAST + 8], table[LAST + 12], table[LAST + 16]]);
    // SAFETY: LAST + 20 <= POWERS_LEN (checked at compile time), so the five 4-lane unaligned loads are in bounds.
    let last = Key::new(core::array::from_fn(|limb| unsafe {
        _mm256_loadu_si256(table.as_ptr().add(LAST + 4 * limb).cast())
    }));

    let zero = _mm256_setzero_si256();
    let h26 = to26(*h);
    let mut x: Limbs = core::array::from_fn(|i| _mm256_set_epi64x(0, 0, 0, h26[i] as i64));

    let n = data.len() / 64;
    let p = data.as_ptr();
    // Every `load4(p.add(64 * i))` below has `i < n`, and `data` is `64 n` bytes long.
    if n >= 2 {
        let pairs = n / 2;
        let mut a = x;
        let mut b = [zero; 5];
        for k in 0..pairs - 1 {
            // SAFETY: groups 2k and 2k + 1 < n, so both 64-byte loads are inside `data`; AVX2 is enabled.
            let (g0, g1) = unsafe { (load4(p.add(128 * k)), load4(p.add(128 * k + 64))) };
            a = mul(add(a, g0), &r8);
            b = mul(add(b, g1), &r8);
        }
        let k = pairs - 1;
        // SAFETY: as above, with 2k + 1 = 2 pairs - 1 < n.
        let (g0, g1) = unsafe { (load4(p.add(128 * k)), load4(p.add(128 * k + 64))) };
        x = add(add(mul(add(a, g0), &r4), b), g1);
        if n % 2 == 1 {
            x = mul(x, &r4);
        }
    }
    if n % 2 == 1 {
        // SAFETY: group n - 1 is the last 64 bytes of `data`.
        let g = unsafe { load4(p.add(64 * (n - 1))) };
        x = add(x, g);
    }
    x = mul(x, &last);

    let mut sum = [0u64; 5];
    for (s, v) in sum.iter_mut().zip(x) {
        let mut lanes = [0u64; 4];
        // SAFETY: `lanes` is 32 writable bytes; unaligned store.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), v) };
        // Four limbs below 2^26 + 2^11: no overflow.
        *s = lanes.iter().sum();
    }
    *h = from26(sum);
}
