//! The Curve25519 layer shared by [`x25519`](super::x25519) and [`ed25519`](super::ed25519): the field
//! GF(2^255 − 19) (`field`), the Edwards group (`edwards`), the Montgomery ladder (`montgomery`) and the
//! integers modulo the group order L (`scalar`), each testable alone; and the family's backends.
//!
//! ## Backends
//! The field arithmetic is the only part that differs between backends; the group formulas, ladder and
//! scalar multiplications are written once, generic over the field, and each backend instantiates them with
//! its own element type. The choice is made once per key or operation, by the one dispatch mechanism
//! ([`crate::dispatch`]): `Backend::detect()` gives a `Checked<Backend>` that keys store and every
//! operation here takes.
//!
//! Crate-internal plumbing: public only so tests and benchmarks can force each backend.

#[allow(dead_code)]
pub(crate) mod edwards;
#[allow(dead_code)]
pub(crate) mod field;
pub(crate) mod montgomery;
#[allow(dead_code)]
pub(crate) mod scalar;

use crate::dispatch::Checked;
use edwards::CurveField;
use field::Fe51;

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

/// Runs the generic function `$f` with the chosen backend's field type.
macro_rules! with_field {
    ($backend:expr, $f:ident ( $($arg:expr),* )) => {
        match $backend.get() {
            Backend::Soft => generic::$f::<Fe51>($($arg),*),
        }
    };
}

/// X25519(k, u) (RFC 7748 §5) for an already clamped `k`: the ladder.
pub(crate) fn x25519(backend: Checked<Backend>, k: &[u8; 32], u: &[u8; 32]) -> [u8; 32] {
    with_field!(backend, x25519(k, u))
}

/// X25519(k, 9) for an already clamped `k`, through the fixed-base Edwards multiplication and the
/// birational map u = (1 + y)/(1 − y).
pub(crate) fn x25519_base(backend: Checked<Backend>, k: &[u8; 32]) -> [u8; 32] {
    with_field!(backend, x25519_base(k))
}

/// The functions every backend runs, over its field type.
mod generic {
    use super::*;

    #[inline]
    pub(super) fn x25519<F: CurveField>(k: &[u8; 32], u: &[u8; 32]) -> [u8; 32] {
        montgomery::ladder(k, &F::from_bytes(u)).to_bytes()
    }

    #[inline]
    pub(super) fn x25519_base<F: CurveField>(k: &[u8; 32]) -> [u8; 32] {
        edwards::mul_base::<F>(k).to_montgomery_u()
    }
}

/// Test hooks: the internal paths with a forced backend, so integration tests can compare them.
#[doc(hidden)]
pub mod testing {
    use super::*;

    /// X25519 through the ladder on u = 9 (the other fixed-base path).
    pub fn x25519_base_ladder(backend: Checked<Backend>, k: &[u8; 32]) -> [u8; 32] {
        let mut nine = [0u8; 32];
        nine[0] = 9;
        x25519(backend, k, &nine)
    }

    /// X25519 through the Edwards fixed-base multiplication (`k` clamped by the caller).
    pub fn x25519_base_edwards(backend: Checked<Backend>, k: &[u8; 32]) -> [u8; 32] {
        x25519_base(backend, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use field::tests::Xs;

    #[test]
    fn both_fixed_base_paths_agree() {
        let mut rng = Xs(0x7748_0001);
        for b in Backend::available() {
            for i in 0..64 {
                let mut k = rng.bytes();
                if i == 0 {
                    k = [0; 32];
                }
                k[0] &= 248;
                k[31] &= 127;
                k[31] |= 64;
                assert_eq!(testing::x25519_base_ladder(b, &k), testing::x25519_base_edwards(b, &k));
            }
        }
    }
}
