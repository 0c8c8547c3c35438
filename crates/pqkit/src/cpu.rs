//! CPU features, detected once at run time and cached.
//!
//! Detection uses `cpuid` and `xgetbv` directly, so it works without `std`. A feature counts as present only
//! when both the CPU reports it and the operating system saves the register state it needs (XCR0): AVX and
//! AVX2 need the YMM state, AVX-512 also the opmask and ZMM state.
//!
//! This module only *reports*. Choosing a backend is the job of each family's single dispatch point
//! (for example `chacha::Backend::detect()`), which reads [`features()`] once.
#![allow(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};

/// A set of CPU features, as a bit mask. Obtain the machine's set with [`features()`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Features(u64);

macro_rules! features {
    ($( $(#[$doc:meta])* $name:ident = $bit:expr, $label:expr; )*) => {
        impl Features {
            $(
                $(#[$doc])*
                pub const $name: Features = Features(1 << $bit);
            )*
            const ALL: &'static [(Features, &'static str)] = &[$((Features::$name, $label),)*];
        }
    };
}

features! {
    /// SSE2 (x86_64 baseline).
    SSE2 = 0, "sse2";
    /// SSSE3 (`pshufb`).
    SSSE3 = 1, "ssse3";
    /// SSE4.1.
    SSE41 = 2, "sse4.1";
    /// AVX, with OS support for YMM state.
    AVX = 3, "avx";
    /// AVX2, with OS support for YMM state.
    AVX2 = 4, "avx2";
    /// BMI2 (`mulx`, `rorx`).
    BMI2 = 5, "bmi2";
    /// ADX (`adcx`, `adox`).
    ADX = 6, "adx";
    /// AES-NI.
    AES = 7, "aes";
    /// PCLMULQDQ (carry-less multiply).
    PCLMULQDQ = 8, "pclmulqdq";
    /// SHA extensions (SHA-NI: SHA-1 and SHA-256).
    SHA = 9, "sha";
    /// AVX-512 Foundation, with OS support for opmask and ZMM state.
    AVX512F = 10, "avx512f";
    /// AVX-512 Vector Length extensions (AVX-512 instructions on xmm/ymm).
    AVX512VL = 11, "avx512vl";
    /// AVX-512 Byte and Word.
    AVX512BW = 12, "avx512bw";
    /// AVX-512 Doubleword and Quadword.
    AVX512DQ = 13, "avx512dq";
    /// AVX-512 Integer Fused Multiply-Add (52-bit `vpmadd52luq`/`vpmadd52huq`).
    AVX512IFMA = 14, "avx512ifma";
    /// AVX-512 Vector Byte Manipulation.
    AVX512VBMI = 15, "avx512vbmi";
    /// AVX-512 Vector Byte Manipulation 2.
    AVX512VBMI2 = 16, "avx512vbmi2";
    /// VAES (AES on ymm/zmm).
    VAES = 17, "vaes";
    /// VPCLMULQDQ (carry-less multiply on ymm/zmm).
    VPCLMULQDQ = 18, "vpclmulqdq";
    /// Galois Field New Instructions.
    GFNI = 19, "gfni";
    /// SHA-512 extensions (`vsha512rnds2`).
    SHA512 = 20, "sha512";
    /// AArch64 Advanced SIMD (always present on aarch64 Linux).
    NEON = 32, "neon";
    /// AArch64 AES/PMULL extensions.
    ARM_AES = 33, "aes(arm)";
    /// AArch64 SHA-2 extensions.
    ARM_SHA2 = 34, "sha2(arm)";
    /// AArch64 SHA-3 extensions (`eor3`, `rax1`, `xar`, `bcax`).
    ARM_SHA3 = 35, "sha3(arm)";
}

impl Features {
    /// The empty set.
    pub const NONE: Features = Features(0);

    /// True if every feature in `other` is present in `self`.
    #[inline]
    pub const fn has(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }

    /// The union of two sets.
    #[inline]
    pub const fn union(self, other: Features) -> Features {
        Features(self.0 | other.0)
    }

    /// Names of the features in the set, in a fixed order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Features::ALL.iter().filter(move |(f, _)| self.has(*f)).map(|(_, n)| *n)
    }
}

impl core::ops::BitOr for Features {
    type Output = Features;
    fn bitor(self, rhs: Features) -> Features {
        self.union(rhs)
    }
}

impl core::fmt::Debug for Features {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

impl core::fmt::Display for Features {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut first = true;
        for n in self.names() {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(n)?;
            first = false;
        }
        Ok(())
    }
}

/// Bit 63 marks the cache as filled (no real feature uses it).
const DETECTED: u64 = 1 << 63;
static CACHE: AtomicU64 = AtomicU64::new(0);

/// The features of the CPU this process runs on. The first call detects; later calls read a cached value.
#[inline]
pub fn features() -> Features {
    let v = CACHE.load(Ordering::Relaxed);
    if v & DETECTED != 0 {
        return Features(v & !DETECTED);
    }
    let f = detect();
    CACHE.store(f.0 | DETECTED, Ordering::Relaxed);
    f
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Features {
    use core::arch::x86_64::{__cpuid_count, CpuidResult};

    #[allow(unused_unsafe)]
    fn cpuid(leaf: u32, sub: u32) -> CpuidResult {
        // SAFETY: `cpuid` exists on every x86_64 CPU and only reads identification registers.
        unsafe { __cpuid_count(leaf, sub) }
    }

    let bit = |reg: u32, b: u32| reg >> b & 1 == 1;
    let mut f = Features::SSE2;
    let max_leaf = cpuid(0, 0).eax;
    let l1 = cpuid(1, 0);
    if bit(l1.ecx, 9) {
        f = f | Features::SSSE3;
    }
    if bit(l1.ecx, 19) {
        f = f | Features::SSE41;
    }
    if bit(l1.ecx, 25) {
        f = f | Features::AES;
    }
    if bit(l1.ecx, 1) {
        f = f | Features::PCLMULQDQ;
    }

    // OS support for extended register state: OSXSAVE set, then XCR0 says which states are saved.
    let osxsave = bit(l1.ecx, 27);
    let xcr0 = if osxsave { xgetbv0() } else { 0 };
    let ymm_ok = xcr0 & 0b110 == 0b110; // SSE + AVX state
    let zmm_ok = ymm_ok && xcr0 & 0b1110_0000 == 0b1110_0000; // opmask, ZMM_Hi256, Hi16_ZMM

    if ymm_ok && bit(l1.ecx, 28) {
        f = f | Features::AVX;
    }
    if max_leaf >= 7 {
        let l7 = cpuid(7, 0);
        if bit(l7.ebx, 8) {
            f = f | Features::BMI2;
        }
        if bit(l7.ebx, 19) {
            f = f | Features::ADX;
        }
        if bit(l7.ebx, 29) {
            f = f | Features::SHA;
        }
        if f.has(Features::AVX) {
            if bit(l7.ebx, 5) {
                f = f | Features::AVX2;
            }
            if bit(l7.ecx, 9) {
                f = f | Features::VAES;
            }
            if bit(l7.ecx, 10) {
                f = f | Features::VPCLMULQDQ;
            }
        }
        if bit(l7.ecx, 8) {
            f = f | Features::GFNI;
        }
        if zmm_ok && bit(l7.ebx, 16) {
            f = f | Features::AVX512F;
            if bit(l7.ebx, 31) {
                f = f | Features::AVX512VL;
            }
            if bit(l7.ebx, 30) {
                f = f | Features::AVX512BW;
            }
            if bit(l7.ebx, 17) {
                f = f | Features::AVX512DQ;
            }
            if bit(l7.ebx, 21) {
                f = f | Features::AVX512IFMA;
            }
            if bit(l7.ecx, 1) {
                f = f | Features::AVX512VBMI;
            }
            if bit(l7.ecx, 6) {
                f = f | Features::AVX512VBMI2;
            }
        }
        if l7.eax >= 1 && f.has(Features::AVX) {
            let l71 = cpuid(7, 1);
            if bit(l71.eax, 0) {
                f = f | Features::SHA512;
            }
        }
    }
    f
}

#[cfg(target_arch = "x86_64")]
fn xgetbv0() -> u64 {
    #[target_feature(enable = "xsave")]
    unsafe fn inner() -> u64 {
        // SAFETY: only called after cpuid reported OSXSAVE, so `xgetbv` is enabled by the OS.
        unsafe { core::arch::x86_64::_xgetbv(0) }
    }
    // SAFETY: the caller checked OSXSAVE (CPUID.1:ECX[27]), which implies XSAVE support.
    unsafe { inner() }
}

#[cfg(target_arch = "aarch64")]
fn detect() -> Features {
    // NEON is architecturally required on aarch64 Linux targets. The crypto extensions are taken from the
    // compile-time target features only (runtime HWCAP reading would need std or libc).
    #[allow(unused_mut)]
    let mut f = Features::NEON;
    #[cfg(target_feature = "aes")]
    {
        f = f | Features::ARM_AES;
    }
    #[cfg(target_feature = "sha2")]
    {
        f = f | Features::ARM_SHA2;
    }
    #[cfg(target_feature = "sha3")]
    {
        f = f | Features::ARM_SHA3;
    }
    f
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn detect() -> Features {
    Features::NONE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_is_cached_and_stable() {
        let a = features();
        let b = features();
        assert_eq!(a, b);
    }

    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    #[test]
    fn agrees_with_std_detection() {
        // std's detector is independent code; both must agree feature by feature.
        let f = features();
        assert_eq!(f.has(Features::SSSE3), std::is_x86_feature_detected!("ssse3"));
        assert_eq!(f.has(Features::SSE41), std::is_x86_feature_detected!("sse4.1"));
        assert_eq!(f.has(Features::AVX), std::is_x86_feature_detected!("avx"));
        assert_eq!(f.has(Features::AVX2), std::is_x86_feature_detected!("avx2"));
        assert_eq!(f.has(Features::BMI2), std::is_x86_feature_detected!("bmi2"));
        assert_eq!(f.has(Features::ADX), std::is_x86_feature_detected!("adx"));
        assert_eq!(f.has(Features::AES), std::is_x86_feature_detected!("aes"));
        assert_eq!(f.has(Features::PCLMULQDQ), std::is_x86_feature_detected!("pclmulqdq"));
        assert_eq!(f.has(Features::SHA), std::is_x86_feature_detected!("sha"));
        assert_eq!(f.has(Features::AVX512F), std::is_x86_feature_detected!("avx512f"));
        assert_eq!(f.has(Features::AVX512VL), std::is_x86_feature_detected!("avx512vl"));
        assert_eq!(f.has(Features::AVX512BW), std::is_x86_feature_detected!("avx512bw"));
        assert_eq!(f.has(Features::AVX512DQ), std::is_x86_feature_detected!("avx512dq"));
        assert_eq!(f.has(Features::AVX512IFMA), std::is_x86_feature_detected!("avx512ifma"));
        assert_eq!(f.has(Features::AVX512VBMI), std::is_x86_feature_detected!("avx512vbmi"));
        assert_eq!(f.has(Features::AVX512VBMI2), std::is_x86_feature_detected!("avx512vbmi2"));
        assert_eq!(f.has(Features::VAES), std::is_x86_feature_detected!("vaes"));
        assert_eq!(f.has(Features::VPCLMULQDQ), std::is_x86_feature_detected!("vpclmulqdq"));
        assert_eq!(f.has(Features::GFNI), std::is_x86_feature_detected!("gfni"));
    }

    #[test]
    fn names_and_set_operations() {
        let s = Features::AVX2 | Features::SHA;
        assert!(s.has(Features::AVX2) && s.has(Features::SHA) && !s.has(Features::AVX512F));
        assert!(!s.has(Features::AVX2 | Features::AVX512F));
        let mut names = s.names();
        assert_eq!(names.next(), Some("avx2"));
        assert_eq!(names.next(), Some("sha"));
        assert_eq!(names.next(), None);
    }
}
