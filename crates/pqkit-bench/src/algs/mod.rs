//! The registry: one module per algorithm family, each returning its [`Algorithm`]s with every candidate.
//!
//! ## Adding an algorithm
//! Write a `Candidate::new(implementation, version, |size| -> Result<Box<dyn Op>, String>)` per
//! implementation: the closure does all keyed setup and returns the operation (see [`crate::registry`] for
//! the contract), then add it to an `Algorithm` with `.with(...)`. pqkit's own adapters sit behind the
//! `pqkit-algs` cargo feature until the pqkit API they call exists on main.

pub mod aead;
pub mod aead_ops;
pub mod aes_gcm;
pub mod arx512;
pub mod bus;
pub mod bus_nats; // `pqkit-bench --nats` (wall clock, its own loop; not in `all()`)
pub mod chacha;
pub mod ec;
pub mod ecdsa;
pub mod hash;
pub mod hybrid;
pub mod kdf;
pub mod ossl_ffi;
pub mod pq;
pub mod rsa;
pub mod secp256k1;

use crate::registry::{Algorithm, Op};
use pqkit::cipher::StreamCipher;

/// Every registered algorithm, in report order.
pub fn all() -> Vec<Algorithm> {
    let mut v = Vec::new();
    v.extend(chacha::algorithms());
    v.extend(aead::algorithms());
    v.extend(aes_gcm::algorithms());
    v.extend(aes_gcm::open_algorithms());
    v.extend(hash::algorithms());
    v.extend(kdf::algorithms());
    v.extend(arx512::algorithms());
    v.extend(pq::algorithms());
    v.extend(hybrid::algorithms());
    v.extend(ec::algorithms());
    v.extend(ecdsa::algorithms());
    v.extend(secp256k1::algorithms());
    v.extend(rsa::algorithms());
    v.extend(bus::algorithms());
    v
}

/// The fixed 32-byte key every symmetric candidate uses.
pub const KEY32: [u8; 32] = *b"pqkit-bench fixed 32-byte key!!!";
/// The fixed 12-byte nonce.
pub const NONCE12: [u8; 12] = *b"nonce-12-byt";
/// The fixed 24-byte nonce.
pub const NONCE24: [u8; 24] = *b"xchacha nonce, 24 bytes!";
/// The fixed 16-byte associated data of the AEADs.
pub const AAD: [u8; 16] = *b"associated data!";

/// Stringifies any displayable error.
pub fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

/// `implementation crate-version`, e.g. `chacha20 0.10.2`.
pub fn v(name: &str) -> String {
    crate::env::crate_label(name)
}

/// OpenSSL's version.
pub fn ossl() -> String {
    crate::env::openssl_version()
}

/// pqkit's version and revision.
pub fn pqkit_version() -> String {
    format!("pqkit {}", crate::env::crate_version("pqkit"))
}

/// Boxes an in-place stream-cipher operation: XOR the keystream into `data`.
pub fn in_place<C: StreamCipher + Send + 'static>(mut c: C) -> Box<dyn Op> {
    Box::new(move |data: &mut [u8], _out: &mut Vec<u8>| c.apply_keystream(data).map_err(e))
}

/// A `&mut` handle that is itself a [`StreamCipher`], so that `StreamWriter` can borrow a cipher that lives
/// across operations (its key schedule stays outside the timed region).
pub struct ByRef<'a, C: StreamCipher>(pub &'a mut C);

impl<C: StreamCipher> StreamCipher for ByRef<'_, C> {
    fn apply_keystream(&mut self, data: &mut [u8]) -> pqkit::Result<()> {
        self.0.apply_keystream(data)
    }
    fn seek(&mut self, position: u64) -> pqkit::Result<()> {
        self.0.seek(position)
    }
    fn position(&self) -> u64 {
        self.0.position()
    }
}
