//! Elliptic-curve cryptography on Curve25519 (in progress: the field layer).

pub mod curve25519;
