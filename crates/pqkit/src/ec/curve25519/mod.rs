//! The Curve25519 layer shared by X25519 and Ed25519. This commit: the field GF(2^255 − 19) (`field`), the
//! Edwards group (`edwards`), the integers modulo L (`scalar`) and the family's backends.
//!
//! Crate-internal plumbing: public only so tests and benchmarks can force each backend.

#[allow(dead_code)]
pub(crate) mod edwards;
#[allow(dead_code)]
pub(crate) mod field;
#[allow(dead_code)]
pub(crate) mod scalar;

crate::dispatch::backends! {
    /// An implementation of the Curve25519 field arithmetic.
    ///
    /// Crate-internal plumbing, public only so tests and benchmarks can force each backend.
    #[doc(hidden)]
    pub enum Backend for "Curve25519" {
        /// Portable Rust: five 51-bit limbs, `u128` products. The reference.
        Soft: [],
    }
}
