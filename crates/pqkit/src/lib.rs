//! # pqkit
//!
//! Fast, constant-time, post-quantum-ready cryptography.
//!
//! | module | what it holds |
//! |---|---|
//! | [`cpu`] | CPU features, detected once (cpuid + xgetbv, no `std` needed), and the `PQKIT_CPU` cap |
//! | [`dispatch`] | the one mechanism that chooses each family's backend: `backends!` and the `Checked` proof |
//! | [`chacha`] | ChaCha20 (RFC 8439), XChaCha20, HChaCha20, legacy ChaCha20, ChaCha12/ChaCha8 |
//! | [`aes`] | the AES block cipher (AES-128, AES-256) and its backends (bitsliced, AES-NI, VAES) |
//! | [`cipher`] | the [`cipher::StreamCipher`] trait and `std::io` adapters shared by every stream cipher |
//! | [`aead`] | the [`aead::Aead`] trait, every AEAD, and the pqkit file format ([`aead::stream`]) |
//! | [`kusumi`] | Kusumi512 stream cipher (64-byte key, 100-byte blocks) |
//! | [`threefish`] | Threefish-512 block cipher and its CTR stream mode |
//! | [`poly1305`] | the Poly1305 one-time authenticator (RFC 8439), portable, AVX2 and AVX-512 IFMA |
//! | [`hash`] | hash functions: SHA-2, SHA-3/SHAKE, BLAKE2, Skein-512 |
//! | [`mac`] | HMAC over any hash |
//! | [`kdf`] | HKDF over any hash; Argon2id (RFC 9106) |
//! | [`mlkem`] | ML-KEM-512/768/1024 (FIPS 203) key encapsulation |
//! | [`mldsa`] | ML-DSA-44/65/87 signatures (FIPS 204), pure, HashML-DSA and external-μ |
//! | [`ec`] | elliptic curves: X25519 (RFC 7748), Ed25519/Ed25519ctx/Ed25519ph (RFC 8032), P-256 ECDSA and ECDH, secp256k1 ECDSA, ECDH and BIP-340 Schnorr |
//! | [`hybrid`] | hybrid post-quantum KEMs: X25519MLKEM768 (TLS) and X-Wing (ML-KEM-768 + X25519) |
//! | [`hpke`] | Hybrid Public Key Encryption (RFC 9180) with DHKEM(X25519), ML-KEM and X-Wing |
//! | [`rsa`] | RSA 2048/3072/4096: PSS and PKCS#1 v1.5 signatures, OAEP and PKCS#1 v1.5 encryption |
//! | [`rng`] | the ChaCha20/12/8 CSPRNG (`rand_core` traits) and OS randomness |
//! | `rustcrypto` | (feature `rustcrypto`) the RustCrypto traits on pqkit's types |
//! | [`ct`] | constant-time comparison and selection |
//! | [`error`] | the one error type, [`Error`] |
//! | `x86` | (internal) x86-64 code shared by several families' backends, such as register transposes |
//!
//! Each algorithm family is a module with one safe public API. Its backends (portable, AVX2, AVX-512, NEON,
//! ...) are declared once with the features each needs, and chosen at run time by the one mechanism of
//! [`dispatch`]; a backend runs only with a [`dispatch::Checked`] proof that the CPU has those features.
//! `unsafe` code lives in the per-instruction-set backend files and a few shared low-level modules (`cpu`,
//! `ct`, `x86`), each block with its `// SAFETY:` reason.
//!
//! ## Example
//!
//! ```
//! use pqkit::aead::{Aead, XChaCha20Poly1305};
//!
//! let aead = XChaCha20Poly1305::new(&[0x42; 32])?;
//! let mut nonce = [0u8; 24]; // 24 bytes: a random nonce is safe
//! pqkit::rng::fill_os(&mut nonce)?;
//! let sealed = aead.seal(&nonce, b"header", b"attack at dawn")?;
//! assert_eq!(aead.open(&nonce, b"header", &sealed)?, b"attack at dawn");
//! # Ok::<(), pqkit::Error>(())
//! ```
//!
//! More in `crates/pqkit/examples/` (`cargo run -p pqkit --example NAME`).
//!
//! ## Features
//! - `std` (default): `std::io` adapters and OS randomness; implies `alloc`.
//! - `alloc`: APIs that return a `Vec`.
//! - `rustcrypto`: the RustCrypto traits (`aead`, `cipher`, `digest`, `signature`, `kem`) on pqkit's types, in
//!   `pqkit::rustcrypto` (listed there with the trait crates' versions).
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
pub mod chacha;
pub mod cipher;
pub mod cpu;
pub mod ct;
pub mod dispatch;
pub mod ec;
pub mod error;
pub mod families;
pub mod hash;
#[cfg(feature = "alloc")]
pub mod hpke;
pub mod hybrid;
pub mod kdf;
pub mod kusumi;
pub mod mac;
pub mod mldsa;
pub mod mlkem;
pub mod poly1305;
pub mod rng;
#[cfg(feature = "alloc")]
pub mod rsa;
#[cfg(feature = "rustcrypto")]
#[cfg_attr(docsrs, doc(cfg(feature = "rustcrypto")))]
pub mod rustcrypto;
pub mod threefish;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

pub use error::{Error, Result};

/// The README's Rust examples, compiled and run as doctests so the quick start cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
