//! # pqkit
//!
//! Fast, constant-time, post-quantum-ready cryptography.
//!
//! | module | what it holds |
//! |---|---|
//! | [`cpu`] | CPU features, detected once (cpuid + xgetbv, no `std` needed) |
//! | [`aes`] | the AES block cipher (AES-128, AES-256) and its backends (bitsliced, AES-NI, VAES) |
//! | [`cipher`] | the [`cipher::StreamCipher`] trait and `std::io` adapters shared by every stream cipher |
//! | [`aead`] | the [`aead::Aead`] trait and every AEAD |
//! | [`hash`] | hash functions |
//! | [`ct`] | constant-time comparison and selection |
//! | [`error`] | the one error type, [`Error`] |
//!
//! Each algorithm family is a module with one safe public API and a single dispatch point that picks a
//! backend (portable, AVX2, AVX-512, NEON) once, at run time. `unsafe` code lives only in the
//! per-instruction-set backend files.
//!
//! ## Features
//! - `std` (default): `std::io` adapters and OS randomness; implies `alloc`.
//! - `alloc`: APIs that return a `Vec`.
//!
//! Without either, the crate is `no_std` and allocation-free.
#![no_std]
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod aead;
pub mod aes;
pub mod cipher;
pub mod cpu;
pub mod ct;
pub mod error;
pub mod hash;

pub use error::{Error, Result};
