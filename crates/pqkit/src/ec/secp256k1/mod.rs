//! secp256k1 (SEC 2, the curve of Bitcoin): y² = x³ + 7 over GF(2^256 − 2^32 − 977), with BIP-340 Schnorr
//! signatures ([`schnorr`]).
//!
//! ## Layers
//! - `field`: GF(p) in four 64-bit limbs with the special reduction 2^256 = 2^32 + 977 (portable Rust,
//!   `u128` products).
//! - `scalar`: integers modulo the group order n (Montgomery multiplication, constant-time inversion, the
//!   GLV decomposition).
//! - `group`: complete projective formulas for every secret path (fixed-base comb, variable-base
//!   windowed multiplication), Jacobian formulas with the GLV endomorphism and wNAF interleaving for
//!   verification.
//! - [`schnorr`]: BIP-340.

pub(crate) mod field;
pub(crate) mod group;
pub(crate) mod scalar;
pub mod schnorr;

crate::dispatch::backends! {
    /// An implementation of the secp256k1 field arithmetic.
    ///
    /// Crate-internal plumbing, public only so tests and benchmarks can force each backend.
    #[doc(hidden)]
    pub enum Backend for "secp256k1" {
        /// Portable Rust: four 64-bit limbs, `u128` products. The reference.
        Soft: [],
    }
}
