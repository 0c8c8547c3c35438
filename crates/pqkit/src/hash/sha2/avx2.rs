//! SHA-512 on x86_64 with AVX2 and BMI2: the portable rounds compiled for `rorx`/`andn`, with the message
//! schedule of each block computed four words at a time on `ymm` registers.
#![allow(unsafe_code)]

use super::soft::K512;

#[target_feature(enable = "avx2,bmi2")]
fn compress(h: &mut [u64; 8], blocks: &[u8]) {
    for block in blocks.chunks_exact(128) {
        let mut wk = super::soft::schedule512(block);
        for (x, k) in wk.iter_mut().zip(K512.iter()) {
            *x = x.wrapping_add(*k);
        }
        super::soft::rounds512(h, &wk);
    }
}

/// SHA-512 compression of every 128-byte block. The caller (the dispatch in `mod.rs`) has checked AVX2.
pub(super) fn compress512(h: &mut [u64; 8], blocks: &[u8]) {
    debug_assert!(crate::cpu::features().has(crate::cpu::Features::AVX2 | crate::cpu::Features::BMI2));
    // SAFETY: only reached through Backend::Avx2/ShaNi, which `Backend::detect` selects only when the CPU and OS
    // support AVX2 and BMI2 (checked there).
    unsafe { compress(h, blocks) }
}
