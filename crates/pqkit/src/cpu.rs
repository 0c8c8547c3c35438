//! CPU features, detected once at run time and cached.
//!
//! Detection uses `cpuid` and `xgetbv` directly, so it works without `std`. A feature counts as present only
//! when both the CPU reports it and the operating system saves the register state it needs (XCR0): AVX and
//! AVX2 need the YMM state, AVX-512 also the opmask and ZMM state.
//!
//! ## The cap
//! [`features()`] is the detected set narrowed by a *cap*, so that one machine can run pqkit as a lesser one
//! would: `PQKIT_CPU=portable|avx2|avx512|native` in the environment (read once, at the first call, with the
//! `std` feature), or [`set_cap`] from a program or test. A cap only ever removes features: no value of it
//! can make pqkit use an instruction the CPU lacks. An unknown value, or a tier the CPU does not reach, is
//! reported on standard error once and otherwise ignored (see [`Cap::from_env`] for a checked reading).
//!
//! ## The microarchitecture
//! [`uarch()`] names the core design for the few CPUs where measurements showed that the backend with the
//! most features is not the fastest (AMD Zen 5: simple vector integer operations take two cycles of latency
//! where Zen 4 takes one, so latency-bound vector code loses to scalar code there). It comes from `cpuid`
//! (vendor, family, model), never from `/proc`, and is not affected by the cap: `PQKIT_CPU=avx2` on a Zen 5
//! still runs on Zen 5's execution units.
//!
//! This module only *reports*. Choosing a backend is the job of the one dispatch mechanism,
//! [`crate::dispatch`], which reads [`features()`] and [`uarch()`].
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
    /// BMI1 (`andn`, `blsr`, ...).
    BMI1 = 21, "bmi1";
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

    /// Every AVX-512 subset pqkit knows (the features an `avx2` cap removes).
    pub const AVX512_ALL: Features = Features(
        Features::AVX512F.0
            | Features::AVX512VL.0
            | Features::AVX512BW.0
            | Features::AVX512DQ.0
            | Features::AVX512IFMA.0
            | Features::AVX512VBMI.0
            | Features::AVX512VBMI2.0,
    );

    /// The features of `self` that `other` lacks.
    #[inline]
    pub const fn without(self, other: Features) -> Features {
        Features(self.0 & !other.0)
    }

    /// The features present in both sets.
    #[inline]
    pub const fn intersect(self, other: Features) -> Features {
        Features(self.0 & other.0)
    }

    /// True if the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

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

/// A ceiling on the features pqkit may use, whatever the CPU has. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cap {
    /// No SIMD or crypto extension: every family runs its portable code.
    Portable,
    /// At most what an AVX2 machine has (AVX2, BMI1/2, ADX, AES-NI, PCLMULQDQ, SHA-NI, 256-bit VAES and
    /// VPCLMULQDQ, GFNI): every AVX-512 subset is removed.
    Avx2,
    /// Everything up to AVX-512 (on x86_64 the same as [`Cap::Native`]; named so a run can say which tier it
    /// expects).
    Avx512,
    /// No cap: everything the CPU has.
    Native,
}

impl Cap {
    /// Every cap, narrowest first.
    pub const ALL: [Cap; 4] = [Cap::Portable, Cap::Avx2, Cap::Avx512, Cap::Native];

    /// The name `PQKIT_CPU` takes for this cap.
    pub const fn name(self) -> &'static str {
        match self {
            Cap::Portable => "portable",
            Cap::Avx2 => "avx2",
            Cap::Avx512 => "avx512",
            Cap::Native => "native",
        }
    }

    /// Parses a cap name (`portable`, `avx2`, `avx512`, `native`; ASCII case ignored).
    pub fn parse(name: &str) -> crate::Result<Cap> {
        Cap::ALL.into_iter().find(|c| c.name().eq_ignore_ascii_case(name.trim())).ok_or(
            crate::Error::InvalidParameter {
                algorithm: "PQKIT_CPU",
                reason: "unknown CPU cap: expected portable, avx2, avx512 or native",
            },
        )
    }

    /// The cap named by the `PQKIT_CPU` environment variable: `Ok(None)` when it is unset or empty, an error
    /// naming the accepted values when it is set to anything else. Programs that want to refuse a bad value
    /// (the `pqkit` command line does) call this; the library itself warns and ignores it.
    #[cfg(feature = "std")]
    pub fn from_env() -> crate::Result<Option<Cap>> {
        match std::env::var("PQKIT_CPU") {
            Ok(v) if v.trim().is_empty() => Ok(None),
            Ok(v) => Cap::parse(&v).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(crate::Error::InvalidParameter {
                algorithm: "PQKIT_CPU",
                reason: "unknown CPU cap: expected portable, avx2, avx512 or native",
            }),
        }
    }

    /// The features this cap leaves of `detected`.
    pub const fn apply(self, detected: Features) -> Features {
        match self {
            Cap::Portable => Features::NONE,
            Cap::Avx2 => detected.without(Features::AVX512_ALL.union(Features::SHA512)),
            Cap::Avx512 | Cap::Native => detected,
        }
    }

    /// The features a CPU must have for this cap to be reached (for the warning when it is not).
    pub const fn expects(self) -> Features {
        match self {
            Cap::Portable | Cap::Native => Features::NONE,
            Cap::Avx2 => Features::AVX2,
            Cap::Avx512 => Features::AVX512F,
        }
    }

    const fn code(self) -> u64 {
        match self {
            Cap::Portable => 1,
            Cap::Avx2 => 2,
            Cap::Avx512 => 3,
            Cap::Native => 4,
        }
    }
}

impl core::fmt::Display for Cap {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A CPU core design that the dispatch mechanism can tell apart (see the module docs). Only designs some family
/// has measurements for are named; every other CPU is [`Uarch::Other`] and gets the feature-based choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Uarch {
    /// Any CPU not named below (every Intel, every non-x86 CPU, AMD before Zen 3, unknown models).
    Other,
    /// AMD Zen 3 (family 19h, models 00h-0Fh and 20h-5Fh).
    Zen3,
    /// AMD Zen 4 (family 19h, models 10h-1Fh, 60h-7Fh and A0h-AFh).
    Zen4,
    /// AMD Zen 5 (family 1Ah, models 00h-2Fh, 40h-4Fh and 60h-7Fh; other family-1Ah models are left as
    /// [`Uarch::Other`] until measured).
    Zen5,
}

impl Uarch {
    /// The design of a CPU with this `cpuid` vendor string and display family and model (family = base family +
    /// extended family when the base is 0Fh; model = extended model * 16 + base model when the base family is
    /// 06h or 0Fh).
    pub const fn from_cpuid(vendor: &[u8; 12], family: u32, model: u32) -> Uarch {
        if !matches!(vendor, b"AuthenticAMD") {
            return Uarch::Other;
        }
        match (family, model) {
            (0x19, 0x00..=0x0f | 0x20..=0x5f) => Uarch::Zen3,
            (0x19, 0x10..=0x1f | 0x60..=0x7f | 0xa0..=0xaf) => Uarch::Zen4,
            (0x1a, 0x00..=0x2f | 0x40..=0x4f | 0x60..=0x7f) => Uarch::Zen5,
            _ => Uarch::Other,
        }
    }

    const fn code(self) -> u64 {
        match self {
            Uarch::Other => 1,
            Uarch::Zen3 => 2,
            Uarch::Zen4 => 3,
            Uarch::Zen5 => 4,
        }
    }

    const fn from_code(c: u64) -> Option<Uarch> {
        match c {
            1 => Some(Uarch::Other),
            2 => Some(Uarch::Zen3),
            3 => Some(Uarch::Zen4),
            4 => Some(Uarch::Zen5),
            _ => None,
        }
    }
}

/// The detected microarchitecture, 0 until first read ([`Uarch::code`]).
static UARCH: AtomicU64 = AtomicU64::new(0);

/// This CPU's core design, from `cpuid` (detected once, then cached). Not narrowed by the cap.
#[inline]
pub fn uarch() -> Uarch {
    if let Some(u) = Uarch::from_code(UARCH.load(Ordering::Relaxed)) {
        return u;
    }
    let u = detect_uarch();
    UARCH.store(u.code(), Ordering::Relaxed);
    u
}

#[cfg(target_arch = "x86_64")]
fn detect_uarch() -> Uarch {
    use core::arch::x86_64::__cpuid_count;
    // SAFETY: `cpuid` exists on every x86_64 CPU and only reads identification registers.
    #[allow(unused_unsafe)]
    let (l0, l1) = unsafe { (__cpuid_count(0, 0), __cpuid_count(1, 0)) };
    let mut vendor = [0u8; 12];
    vendor[..4].copy_from_slice(&l0.ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&l0.edx.to_le_bytes());
    vendor[8..].copy_from_slice(&l0.ecx.to_le_bytes());
    let base_family = l1.eax >> 8 & 0xf;
    let family = if base_family == 0xf { base_family + (l1.eax >> 20 & 0xff) } else { base_family };
    let base_model = l1.eax >> 4 & 0xf;
    let model =
        if base_family == 0xf || base_family == 0x6 { (l1.eax >> 16 & 0xf) << 4 | base_model } else { base_model };
    Uarch::from_cpuid(&vendor, family, model)
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_uarch() -> Uarch {
    Uarch::Other
}

/// Bit 63 marks a cache as filled (no real feature uses it).
const FILLED: u64 = 1 << 63;
/// The detected features, unfiltered.
static DETECTED: AtomicU64 = AtomicU64::new(0);
/// The features in force: detected, narrowed by the cap.
static CACHE: AtomicU64 = AtomicU64::new(0);
/// The cap in force ([`Cap::code`]), 0 until first read.
static CAP: AtomicU64 = AtomicU64::new(0);

/// The features pqkit may use on this CPU: everything it detected, narrowed by the cap in force ([`cap`]).
/// The first call detects (and reads `PQKIT_CPU`); later calls read a cached value.
#[inline]
pub fn features() -> Features {
    let v = CACHE.load(Ordering::Relaxed);
    if v & FILLED != 0 {
        return Features(v & !FILLED);
    }
    let f = cap().apply(detected());
    CACHE.store(f.0 | FILLED, Ordering::Relaxed);
    f
}

/// Everything the CPU (and OS) supports, ignoring the cap. Backends never read this: they go by
/// [`features()`].
pub fn detected() -> Features {
    let v = DETECTED.load(Ordering::Relaxed);
    if v & FILLED != 0 {
        return Features(v & !FILLED);
    }
    let f = detect();
    DETECTED.store(f.0 | FILLED, Ordering::Relaxed);
    f
}

/// The cap in force: the last [`set_cap`], else `PQKIT_CPU`, else [`Cap::Native`].
pub fn cap() -> Cap {
    match CAP.load(Ordering::Relaxed) {
        1 => Cap::Portable,
        2 => Cap::Avx2,
        3 => Cap::Avx512,
        4 => Cap::Native,
        _ => {
            let c = env_cap();
            // A racing set_cap wins over the environment.
            let _ = CAP.compare_exchange(0, c.code(), Ordering::Relaxed, Ordering::Relaxed);
            cap()
        }
    }
}

/// Sets the cap for the rest of the process (or until the next call), from now on: backends chosen from
/// now on obey it; values already holding a checked backend keep it, which stays sound because a cap never
/// adds a feature the CPU lacks. Returns the features now in force. For tests and benchmarks that compare
/// tiers on one machine.
pub fn set_cap(c: Cap) -> Features {
    CAP.store(c.code(), Ordering::Relaxed);
    let f = c.apply(detected());
    CACHE.store(f.0 | FILLED, Ordering::Relaxed);
    f
}

#[cfg(feature = "std")]
fn env_cap() -> Cap {
    match Cap::from_env() {
        Ok(Some(c)) => {
            let missing = c.expects().without(detected());
            if !missing.is_empty() {
                std::eprintln!(
                    "pqkit: PQKIT_CPU={c}, but this CPU lacks {missing}; pqkit uses what it has ({})",
                    c.apply(detected())
                );
            }
            c
        }
        Ok(None) => Cap::Native,
        Err(_) => {
            std::eprintln!(
                "pqkit: ignoring PQKIT_CPU={:?}: expected portable, avx2, avx512 or native",
                std::env::var_os("PQKIT_CPU").unwrap_or_default()
            );
            Cap::Native
        }
    }
}

#[cfg(not(feature = "std"))]
fn env_cap() -> Cap {
    Cap::Native
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
        if bit(l7.ebx, 3) {
            f = f | Features::BMI1;
        }
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
    // The constant-time job's build only: valgrind executes `adcx`/`adox` but its virtual CPU does not report
    // ADX (leaf 7 EBX bit 19 reads 0 under valgrind 3.19), so without this the job would run the portable code
    // in place of every BMI2/ADX backend and never see their asm.
    #[cfg(pqkit_ct_check)]
    if f.has(Features::BMI2) && crate::ct::running_on_valgrind() {
        f = f | Features::ADX;
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
        let f = detected();
        assert_eq!(f.has(Features::BMI1), std::is_x86_feature_detected!("bmi1"));
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
    fn caps_only_remove_features() {
        let all = detected();
        for c in Cap::ALL {
            let f = c.apply(all);
            assert!(all.has(f), "{c} added features");
            assert_eq!(Cap::parse(c.name()), Ok(c));
            assert_eq!(Cap::parse(&c.name().to_ascii_uppercase()), Ok(c));
        }
        assert_eq!(Cap::Portable.apply(all), Features::NONE);
        assert!(!Cap::Avx2.apply(all).has(Features::AVX512F));
        assert_eq!(Cap::Avx2.apply(all).has(Features::AVX2), all.has(Features::AVX2));
        assert_eq!(Cap::Native.apply(all), all);
        assert!(Cap::parse("avx").is_err() && Cap::parse("").is_err() && Cap::parse("native2").is_err());
    }

    #[test]
    fn uarch_from_cpuid() {
        let amd = b"AuthenticAMD";
        assert_eq!(Uarch::from_cpuid(amd, 26, 2), Uarch::Zen5);
        assert_eq!(Uarch::from_cpuid(amd, 0x1a, 0x44), Uarch::Zen5);
        assert_eq!(Uarch::from_cpuid(amd, 0x1a, 0x50), Uarch::Other);
        assert_eq!(Uarch::from_cpuid(amd, 25, 17), Uarch::Zen4);
        assert_eq!(Uarch::from_cpuid(amd, 25, 0x61), Uarch::Zen4);
        assert_eq!(Uarch::from_cpuid(amd, 25, 1), Uarch::Zen3);
        assert_eq!(Uarch::from_cpuid(amd, 25, 0x21), Uarch::Zen3);
        assert_eq!(Uarch::from_cpuid(amd, 23, 49), Uarch::Other);
        assert_eq!(Uarch::from_cpuid(b"GenuineIntel", 26, 2), Uarch::Other);
        assert_eq!(Uarch::from_cpuid(b"GenuineIntel", 6, 0x8f), Uarch::Other);
        for u in [Uarch::Other, Uarch::Zen3, Uarch::Zen4, Uarch::Zen5] {
            assert_eq!(Uarch::from_code(u.code()), Some(u));
        }
        assert_eq!(uarch(), uarch());
    }

    /// The cpuid reading agrees with the kernel's (an independent decoder of the same registers).
    #[cfg(all(target_arch = "x86_64", target_os = "linux", feature = "std"))]
    #[test]
    fn uarch_agrees_with_proc_cpuinfo() {
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else { return };
        let field = |name: &str| {
            info.lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim())
        };
        let (Some(vendor), Some(family), Some(model)) = (field("vendor_id"), field("cpu family"), field("model"))
        else {
            return;
        };
        let vendor: [u8; 12] = vendor.as_bytes().try_into().unwrap_or([0; 12]);
        let want = Uarch::from_cpuid(&vendor, family.parse().unwrap(), model.parse().unwrap());
        assert_eq!(uarch(), want);
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
