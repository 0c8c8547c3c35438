//! Poly1305 for AVX2 machines: four independent scalar chains with `mulx` (BMI2).
//!
//! The portable radix-2^64 block step (`soft.rs`) is bound by the latency of its serial multiply chain (about
//! 15 cycles a block), not by the multiplier's throughput (six multiplies a block). So runs of 64 blocks are
//! split into four runs of 16, hashed on four accumulators at once (the first continuing the state, the others
//! from zero), and joined with three multiplications by `r^16`: `((h_0 r^16 + h_1) r^16 + h_2) r^16 + h_3` is the
//! serial Horner value (`soft::blocks_chains`). The integer units then run near the multiplier's throughput.
//!
//! Measured against the 4-way radix-2^26 `vpmuludq` loop this file held before (one accumulator per lane, one
//! carry round per step): with `--isa avx2` on Sapphire Rapids that loop reached 2.7 GB/s at 16 KiB, one
//! scalar chain 3.6 GB/s, two chains 4.9 GB/s and four chains 5.3 GB/s (OpenSSL's AVX2 code: 7.2 GB/s). The
//! vector loop was bound by its own dependency chain (multiply, add tree, carry chain: about 17 cycles per
//! 64 bytes); a faster vector loop would need two interleaved accumulators.
//!
//! Inputs shorter than one run and the tails go to the portable code. Nothing branches on data.
#![allow(unsafe_code)]

use super::soft;
use super::{Backend, Core};
use crate::dispatch::Checked;

/// Absorbs whole blocks (`data.len()` a multiple of 16) for a state whose (checked) backend is `Avx2`.
pub(super) fn blocks(backend: Checked<Backend>, core: &mut Core, data: &[u8]) {
    if data.len() < RUN_LEN / 2 {
        soft::blocks(&mut core.h, &core.r, data);
        return;
    }
    let r16 = r16(core);
    let four = data.len() / RUN_LEN * RUN_LEN;
    // One 512-byte run on two chains after the four-chain runs, if that much is left.
    let two = four + (data.len() - four) / (RUN_LEN / 2) * (RUN_LEN / 2);
    assert!(backend.covers(Backend::Avx2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Avx2, so the CPU has BMI1 and BMI2.
    unsafe { chains_bmi2(&mut core.h, &core.r, &r16, &data[..four], &data[four..two]) };
    soft::blocks(&mut core.h, &core.r, &data[two..]);
}

/// `r^16` in radix 2^44, computed once per state and kept in `core.powers[..3]`.
pub(super) fn r16(core: &mut Core) -> [u64; 3] {
    if !core.powers_ready {
        core.powers[..3].copy_from_slice(&soft::r16_44(&core.r));
        core.powers_ready = true;
    }
    [core.powers[0], core.powers[1], core.powers[2]]
}

/// Independent accumulators of [`soft::blocks_chains`].
const CHAINS: usize = 4;

/// Bytes per run of [`soft::blocks_chains`]; shorter inputs go to the portable code.
const RUN_LEN: usize = 256 * CHAINS;

/// [`soft::blocks_chains`] with four chains over `four` and with two over `two`, compiled with `mulx`.
#[target_feature(enable = "bmi1,bmi2")]
fn chains_bmi2(h: &mut [u64; 3], r: &[u64; 2], r16: &[u64; 3], four: &[u8], two: &[u8]) {
    soft::blocks_chains::<CHAINS>(h, r, r16, four);
    soft::blocks_chains::<2>(h, r, r16, two);
}
