//! AVX2 Keccak-f[1600], 4-way: 25 `ymm` registers, lane `k` of every register belongs to state `k`.
#![allow(unsafe_code)]

use super::RC;
use core::arch::x86_64::*;

#[inline]
#[target_feature(enable = "avx2")]
fn xor(a: __m256i, b: __m256i) -> __m256i {
    _mm256_xor_si256(a, b)
}

#[inline]
#[target_feature(enable = "avx2")]
fn xor5(a: __m256i, b: __m256i, c: __m256i, d: __m256i, e: __m256i) -> __m256i {
    xor(xor(xor(a, b), xor(c, d)), e)
}

#[inline]
#[target_feature(enable = "avx2")]
fn chi(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
    _mm256_xor_si256(a, _mm256_andnot_si256(b, c))
}

#[inline]
#[target_feature(enable = "avx2")]
fn rol(a: __m256i, n: i32) -> __m256i {
    // The amounts are constants after inlining, so these become immediate shifts.
    _mm256_or_si256(_mm256_sll_epi64(a, _mm_cvtsi32_si128(n)), _mm256_srl_epi64(a, _mm_cvtsi32_si128(64 - n)))
}

#[target_feature(enable = "avx2")]
fn f1600_x4_avx2(states: &mut [[u64; 4]; 25]) {
    let mut a = [_mm256_setzero_si256(); 25];
    for (r, s) in a.iter_mut().zip(states.iter()) {
        // SAFETY: `s` is 32 readable bytes; loadu has no alignment requirement.
        *r = unsafe { _mm256_loadu_si256(s.as_ptr().cast()) };
    }
    for &rc in RC.iter() {
        let rc = _mm256_set1_epi64x(rc as i64);
        keccak_round!(a, rc, xor, xor5, chi, rol);
    }
    for (r, s) in a.iter().zip(states.iter_mut()) {
        // SAFETY: `s` is 32 writable bytes; storeu has no alignment requirement.
        unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), *r) };
    }
}

/// 4-way Keccak-f[1600]. The caller (the dispatch in `mod.rs`) has checked AVX2.
pub(super) fn f1600_x4(states: &mut [[u64; 4]; 25]) {
    debug_assert!(crate::cpu::features().has(crate::cpu::Features::AVX2));
    // SAFETY: only reached through Backend::Avx2/Avx512, which `Backend::detect` selects only when the CPU
    // and OS support AVX2.
    unsafe { f1600_x4_avx2(states) }
}

#[target_feature(enable = "avx2,bmi1,bmi2")]
fn f1600_bmi2(state: &mut [u64; 25]) {
    super::soft::f1600(state)
}

/// True if the CPU has BMI1 (`andn`), which `crate::cpu::Features` does not list. Read once with `cpuid`.
pub(super) fn has_bmi1() -> bool {
    use core::sync::atomic::{AtomicU8, Ordering};
    static CACHE: AtomicU8 = AtomicU8::new(0);
    match CACHE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            #[allow(unused_unsafe)]
            // SAFETY: `cpuid` exists on every x86_64 CPU and only reads identification registers.
            let l0 = unsafe { __cpuid_count(0, 0) };
            #[allow(unused_unsafe)]
            // SAFETY: as above; leaf 7 is only read when the CPU reports it.
            let yes = l0.eax >= 7 && unsafe { __cpuid_count(7, 0) }.ebx >> 3 & 1 == 1;
            CACHE.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
    }
}

/// Single-state Keccak-f[1600]: the portable rounds compiled with BMI1/BMI2 (`andn` for chi, `rorx` for the
/// rotations). The caller has checked AVX2, BMI1 and BMI2.
pub(super) fn f1600(state: &mut [u64; 25]) {
    debug_assert!(has_bmi1() && crate::cpu::features().has(crate::cpu::Features::AVX2 | crate::cpu::Features::BMI2));
    // SAFETY: only reached through Backend::Avx2/Avx512, which `Backend::detect` selects only when the CPU and
    // OS support AVX2, BMI1 and BMI2.
    unsafe { f1600_bmi2(state) }
}
