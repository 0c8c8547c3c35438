//! Elliptic-curve cryptography on Curve25519 (in progress): [`x25519`].

pub mod curve25519;
pub mod x25519;
