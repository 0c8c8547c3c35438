//! The one dispatch mechanism: how every family chooses the code that runs on this CPU.
//!
//! Each family declares its backends once, with [`backends!`]: one enum variant per implementation, and next
//! to its name the CPU features it needs. The macro writes the rest, the same for every family:
//!
//! - [`Checked<B>`] is the only proof that backend `B` may run. It is made only by [`Checked::new`] (an
//!   [`Error::BackendUnavailable`] when the CPU, under the cap of [`crate::cpu`], lacks a feature),
//!   [`Checked::best`] and [`Checked::all`]. Every `with_backend`, every test hook and every backend file's
//!   entry point takes a `Checked`, never a bare backend name, so no safe call can run an instruction the CPU
//!   does not have.
//! - `Backend::detect()` is [`Checked::best`]: the last backend in declaration order (so declare them slowest
//!   first) that this CPU runs, skipping those marked `manual` (kept and tested, but not chosen on their own)
//!   and those marked `avoid_on [..]` a microarchitecture this CPU is (below).
//! - **Per-microarchitecture preference.** Declaration order is one ranking for every CPU. Where measurements
//!   show that a backend loses to an earlier one on a particular core design, the backend says so next to its
//!   features: `Avx512: [AVX512F, AVX512VL] avoid_on [Zen5]`. On a CPU whose [`crate::cpu::uarch()`] (from
//!   `cpuid` vendor, family and model, never `/proc`) is listed, [`Checked::best`] passes over that backend and
//!   takes the next one down the declaration order, exactly as if the CPU lacked its features; every other CPU
//!   chooses as before. It only steers the automatic choice: [`Checked::new`], `Backend::X.checked()`, every
//!   `with_backend` and [`Checked::all`] still accept any backend the CPU runs, and the `PQKIT_CPU` cap still
//!   removes features first (a cap never changes the microarchitecture: `PQKIT_CPU=avx2` on a Zen 5 is still a
//!   Zen 5). [`choose`] is the same choice as a pure function of features and microarchitecture, for tests.
//! - `Backend::available()` is [`Checked::all`]: every backend this CPU runs, portable first, for the
//!   cross-backend tests.
//! - A backend file's safe entry point asserts [`Checked::covers`] for its own backend before its `unsafe`
//!   call into `#[target_feature]` code; the `// SAFETY:` comment there cites this mechanism. After inlining
//!   behind the family's `match`, that check is a constant and disappears.
//!
//! One family's backend may run another family's code (ML-KEM runs SHA-3's Keccak): [`Checked::derive`] turns
//! the proof for one into the proof for the other when the first's features include the second's.
//!
//! The rule, everywhere: a backend asked for by name that cannot run is an `Err`, never a silent fallback and
//! never undefined behaviour; a backend chosen automatically is always one that can.

use crate::cpu::{self, Features, Uarch};
use crate::{Error, Result};
use core::fmt;

/// The backends of one family: implemented by the enum that [`backends!`] writes.
pub trait BackendSet: Copy + Eq + fmt::Debug + 'static {
    /// The family's name, for errors (`"ChaCha"`, `"SHA-3"`).
    const FAMILY: &'static str;
    /// Every backend, in declaration order: the portable one first, then slower before faster.
    const ALL: &'static [Self];
    /// The CPU features the backend needs (empty for the portable one).
    fn required(self) -> Features;
    /// Whether [`Checked::best`] may choose it (false for backends marked `manual`).
    fn auto(self) -> bool;
    /// Whether [`Checked::best`] passes over it on CPUs of this microarchitecture (marked `avoid_on [..]`).
    fn avoided_on(self, uarch: Uarch) -> bool;
    /// The variant's name.
    fn name(self) -> &'static str;
}

/// A backend of family `B` that this CPU has been checked to run: see the [module docs](self).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Checked<B>(B);

impl<B: BackendSet> Checked<B> {
    /// The proof that `backend` can run, or [`Error::BackendUnavailable`] naming what is missing.
    #[inline]
    pub fn new(backend: B) -> Result<Self> {
        let missing = backend.required().without(cpu::features());
        if missing.is_empty() {
            Ok(Checked(backend))
        } else {
            Err(Error::BackendUnavailable { algorithm: B::FAMILY, backend: backend.name(), missing })
        }
    }

    /// For a test of one backend: the proof, or `None` when only a lower `PQKIT_CPU` cap withholds it (the
    /// uncapped test pass runs the test then). Panics on a CPU that lacks the backend's features, so that a
    /// test never passes by skipping where the machine cannot run it.
    #[cfg(test)]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn for_test(backend: B) -> Option<Self> {
        match Self::new(backend) {
            Ok(c) => Some(c),
            Err(_) if backend.required().without(cpu::detected()).is_empty() => None,
            Err(e) => panic!("this test needs a CPU that runs {backend:?}: {e}"),
        }
    }

    /// The portable backend, which every CPU runs.
    #[inline]
    pub fn portable() -> Self {
        let b = B::ALL[0];
        assert!(b.required().is_empty(), "the first backend of a family must be the portable one");
        Checked(b)
    }

    /// The fastest backend this CPU runs: the last one declared that it runs, skipping `manual` ones and those
    /// avoided on this CPU's microarchitecture ([`choose`]).
    #[inline]
    pub fn best() -> Self {
        // `choose` under the features in force, which the CPU has: so the choice may run.
        Checked(choose::<B>(cpu::features(), cpu::uarch()))
    }

    /// Every backend this CPU runs, portable first.
    pub fn all() -> impl Iterator<Item = Self> + Clone {
        B::ALL.iter().filter_map(|&b| Self::new(b).ok())
    }

    /// The backend.
    #[inline(always)]
    pub fn get(self) -> B {
        self.0
    }

    /// True if this backend's features include everything `other` needs, so that code written for `other` may
    /// run. Backend files assert it at their entry points.
    #[inline(always)]
    pub fn covers(self, other: B) -> bool {
        self.0.required().has(other.required())
    }

    /// The proof for a backend `other` of another family, from this one, when this one's features include
    /// everything `other` needs; `None` otherwise.
    #[inline(always)]
    pub fn derive<C: BackendSet>(self, other: C) -> Option<Checked<C>> {
        if self.0.required().has(other.required()) { Some(Checked(other)) } else { None }
    }
}

/// The backend [`Checked::best`] chooses on a CPU with features `f` and microarchitecture `uarch`: the last one
/// declared that needs nothing outside `f`, is not `manual` and is not avoided on `uarch`; the portable one when
/// none is. A pure function (the bare backend, no proof that it runs here), for tests of the rule on CPUs this
/// machine is not.
#[inline]
pub fn choose<B: BackendSet>(f: Features, uarch: Uarch) -> B {
    // From the fastest end, so the common case (the top backend runs) is one test: per-message constructors
    // (Poly1305 inside every AEAD call) pay for this.
    for &b in B::ALL.iter().rev() {
        if b.auto() && f.has(b.required()) && !b.avoided_on(uarch) {
            return b;
        }
    }
    B::ALL[0]
}

impl<B: fmt::Debug> fmt::Debug for Checked<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<B: PartialEq> PartialEq<B> for Checked<B> {
    fn eq(&self, other: &B) -> bool {
        self.0 == *other
    }
}

/// Declares a family's backends: the enum, its [`BackendSet`] impl and the family's `detect`, `available`,
/// `is_available`, `required` and `checked`. The features each variant needs are named (as
/// [`Features`](crate::cpu::Features) constants) next to it, and nowhere else.
///
/// ```ignore
/// crate::dispatch::backends! {
///     /// An implementation of the ChaCha block function.
///     pub enum Backend for "ChaCha" {
///         /// Portable Rust, the reference.
///         Soft: [],
///         /// AVX2, 8 blocks per pass.
///         Avx2: [AVX2],
///         /// Kept for CPUs where it wins; `detect` does not choose it.
///         Avx512Rows: [AVX512F, AVX512VL] manual,
///         /// Chosen where the CPU has the features, except on Zen 5 (measured slower there than `Avx2`).
///         Avx512: [AVX512F, AVX512VL] avoid_on [Zen5],
///     }
/// }
/// ```
#[macro_export]
#[doc(hidden)]
macro_rules! backends {
    (
        $(#[$meta:meta])*
        pub enum $name:ident for $family:literal {
            $( $(#[$vmeta:meta])* $variant:ident : [ $($feat:ident),* ] $($kw:ident $([ $($ua:ident),+ ])?)? ),+
            $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $crate::dispatch::BackendSet for $name {
            const FAMILY: &'static str = $family;
            const ALL: &'static [Self] = &[$($name::$variant),+];
            #[inline(always)]
            fn required(self) -> $crate::cpu::Features {
                match self {
                    $( $name::$variant => $crate::cpu::Features::NONE $(.union($crate::cpu::Features::$feat))*, )+
                }
            }
            #[inline(always)]
            fn auto(self) -> bool {
                match self {
                    $( $name::$variant => $crate::backends!(@auto $($kw $([$($ua),+])?)?), )+
                }
            }
            #[inline(always)]
            fn avoided_on(self, _uarch: $crate::cpu::Uarch) -> bool {
                match self {
                    $( $name::$variant => false $($($(|| _uarch == $crate::cpu::Uarch::$ua)+)?)?, )+
                }
            }
            fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => stringify!($variant), )+
                }
            }
        }

        impl $name {
            /// The fastest backend this CPU runs, under the cap in force (the one dispatch rule of
            /// [`crate::dispatch`]).
            #[inline]
            pub fn detect() -> $crate::dispatch::Checked<$name> {
                $crate::dispatch::Checked::best()
            }

            /// Every backend this CPU runs, portable first.
            pub fn available() -> impl Iterator<Item = $crate::dispatch::Checked<$name>> + Clone {
                $crate::dispatch::Checked::all()
            }

            /// The proof that this backend can run here, or [`Error::BackendUnavailable`](crate::Error).
            #[inline]
            pub fn checked(self) -> $crate::Result<$crate::dispatch::Checked<$name>> {
                $crate::dispatch::Checked::new(self)
            }

            /// True if this CPU, under the cap in force, runs the backend.
            #[inline]
            pub fn is_available(self) -> bool {
                self.checked().is_ok()
            }

            /// The CPU features the backend needs.
            #[inline]
            pub fn required(self) -> $crate::cpu::Features {
                <$name as $crate::dispatch::BackendSet>::required(self)
            }
        }
    };
    // After a variant's features: nothing, `manual`, or `avoid_on [Uarch, ..]` (see the module docs).
    (@auto) => { true };
    (@auto manual) => { false };
    (@auto avoid_on [$($ua:ident),+]) => { true };
}

pub use backends;

#[cfg(test)]
mod tests {
    use super::*;

    backends! {
        /// A test family.
        pub enum TestBackend for "Test" {
            /// Portable.
            Soft: [],
            /// Needs a feature no CPU reports together with NEON on x86 or AVX2 on aarch64.
            Impossible: [AVX2, NEON],
            /// Every x86 SIMD feature this machine might have.
            Avx2: [AVX2, BMI1, BMI2],
            /// Not chosen automatically.
            Manual: [] manual,
        }
    }

    #[test]
    fn rule_holds_for_every_backend() {
        for &b in TestBackend::ALL_FOR_TEST {
            let ok = cpu::features().has(b.required());
            match b.checked() {
                Ok(c) => {
                    assert!(ok);
                    assert_eq!(c.get(), b);
                    assert!(c.covers(TestBackend::Soft));
                }
                Err(Error::BackendUnavailable { algorithm: "Test", backend, missing }) => {
                    assert!(!ok);
                    assert_eq!(backend, b.name());
                    assert!(!missing.is_empty() && b.required().has(missing));
                    assert!(cpu::features().intersect(missing).is_empty());
                }
                Err(e) => panic!("unexpected error {e:?}"),
            }
        }
        assert!(TestBackend::Impossible.checked().is_err());
        assert!(TestBackend::Manual.checked().is_ok());
        // best() never chooses a manual or unavailable backend.
        let best = TestBackend::detect().get();
        assert!(best != TestBackend::Manual && best != TestBackend::Impossible);
        assert_eq!(best == TestBackend::Avx2, TestBackend::Avx2.is_available());
        let all: alloc_free::Vec4 = TestBackend::available().map(|c| c.get()).collect();
        assert_eq!(all.0[0], Some(TestBackend::Soft));
        assert!(all.0.contains(&Some(TestBackend::Manual)));
        assert!(!all.0.contains(&Some(TestBackend::Impossible)));
    }

    backends! {
        /// A test family for the per-microarchitecture preference.
        pub enum PrefBackend for "TestPref" {
            /// Portable.
            Soft: [],
            /// Needs AVX2.
            Wide: [AVX2],
            /// Needs AVX2 and AVX-512F; passed over on Zen 4 and Zen 5.
            Wider: [AVX2, AVX512F] avoid_on [Zen4, Zen5],
        }
    }

    #[test]
    fn choice_honours_the_microarchitecture() {
        let all = Features::AVX2 | Features::AVX512F;
        for u in [Uarch::Other, Uarch::Zen3] {
            assert_eq!(choose::<PrefBackend>(all, u), PrefBackend::Wider);
            assert_eq!(choose::<PrefBackend>(Features::AVX2, u), PrefBackend::Wide);
            assert_eq!(choose::<PrefBackend>(Features::NONE, u), PrefBackend::Soft);
        }
        for u in [Uarch::Zen4, Uarch::Zen5] {
            assert_eq!(choose::<PrefBackend>(all, u), PrefBackend::Wide);
            assert_eq!(choose::<PrefBackend>(Features::AVX512F, u), PrefBackend::Soft);
        }
        assert!(PrefBackend::Wider.avoided_on(Uarch::Zen5) && !PrefBackend::Wider.avoided_on(Uarch::Other));
        assert!(PrefBackend::Wider.auto() && !PrefBackend::Wide.avoided_on(Uarch::Zen5));
        // best() is choose() on this CPU; an avoided backend stays available by name.
        assert_eq!(PrefBackend::detect().get(), choose::<PrefBackend>(cpu::features(), cpu::uarch()));
        assert_eq!(PrefBackend::Wider.checked().is_ok(), cpu::features().has(all));
        assert_eq!(PrefBackend::Wider.is_available(), cpu::features().has(PrefBackend::Wider.required()));
        assert!(PrefBackend::available().any(|c| c.get() == PrefBackend::Soft));
        // The manual marker still works beside it.
        assert_eq!(choose::<TestBackend>(Features::NONE, Uarch::Zen5), TestBackend::Soft);
    }

    #[test]
    fn derive_needs_covering_features() {
        let soft = TestBackend::Soft.checked().unwrap();
        assert!(soft.derive(TestBackend::Soft).is_some());
        assert!(soft.derive(TestBackend::Avx2).is_none());
        if let Ok(a) = TestBackend::Avx2.checked() {
            assert!(a.derive(TestBackend::Soft).is_some() && a.covers(TestBackend::Soft));
            assert!(!a.covers(TestBackend::Impossible));
        }
    }

    impl TestBackend {
        const ALL_FOR_TEST: &'static [TestBackend] = <TestBackend as BackendSet>::ALL;
    }

    /// A fixed-size collection so the test runs without alloc.
    mod alloc_free {
        pub struct Vec4(pub [Option<super::TestBackend>; 4]);
        impl FromIterator<super::TestBackend> for Vec4 {
            fn from_iter<I: IntoIterator<Item = super::TestBackend>>(it: I) -> Self {
                let mut v = [None; 4];
                for (slot, b) in v.iter_mut().zip(it) {
                    *slot = Some(b);
                }
                Vec4(v)
            }
        }
    }
}
