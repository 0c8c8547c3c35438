//! The RustCrypto traits on pqkit's types (feature `rustcrypto`).
//!
//! Code written against the traits of the RustCrypto project can take pqkit's implementations unchanged.
//! The trait crates are re-exported here at the versions pqkit implements, so callers name the same traits:
//!
//! | trait crate | version | implemented for |
//! |---|---|---|
//! | [`aead`] | 0.6 | `AeadCore`, `AeadInOut` (and through it `Aead`, `AeadInPlace`), `KeyInit`: [`ChaCha20Poly1305`](crate::aead::ChaCha20Poly1305), [`XChaCha20Poly1305`](crate::aead::XChaCha20Poly1305), [`Aes128Gcm`](crate::aead::Aes128Gcm), [`Aes256Gcm`](crate::aead::Aes256Gcm), [`Kusumi512Poly1305`](crate::aead::Kusumi512Poly1305) |
//! | [`cipher`] | 0.5 | `StreamCipher`, `StreamCipherSeek`, `KeyIvInit`: [`ChaCha20`](crate::chacha::ChaCha20), [`XChaCha20`](crate::chacha::XChaCha20), [`ChaCha20Legacy`](crate::chacha::ChaCha20Legacy), [`ChaCha12`](crate::chacha::ChaCha12) and [`ChaCha8`](crate::chacha::ChaCha8) (legacy layout), [`Kusumi512`](crate::kusumi::Kusumi512), [`Threefish512Ctr`](crate::threefish::Threefish512Ctr) |
//! | [`digest`] | 0.11 | `Digest` (through `Update`, `FixedOutput`, `FixedOutputReset`, `HashMarker`) for SHA-224/256/384/512, SHA-512/224, SHA-512/256, SHA3-224/256/384/512, BLAKE2b-512, BLAKE2s-256, Skein-512-256/512; `ExtendableOutput` and `XofReader` for SHAKE128/256; `Mac` and `KeyInit` for [`Hmac`](crate::mac::Hmac) over those fixed hashes |
//! | [`signature`] | 3.0 | `Signer`, `Verifier`, `Keypair`, `SignatureEncoding` (and `RandomizedSigner` where signing takes randomness): ML-DSA-44/65/87, Ed25519, ECDSA P-256 and secp256k1 (SHA-256), RSA PSS and PKCS#1 v1.5 |
//! | [`kem`] | 0.3 | `Kem`, `Encapsulate`, `Decapsulate`, `KeyInit` (from the 64-byte seed), `Generate`: ML-KEM-512/768/1024 |
//! | `rand_core` | 0.10 | (not behind this feature) [`ChaChaRng`](crate::rng::ChaChaRng) implements `TryRng`, `TryCryptoRng`, `SeedableRng` |
//!
//! ## Security contract
//! The traits add no cryptography: every method calls the same pqkit code as the native API, with the same
//! constant-time behaviour, key wiping and checks. Where the trait's shape differs from pqkit's, the choice is
//! stated on the implementation; the ones that matter:
//! - AEADs: decryption verifies the tag before releasing anything; on failure the buffer holds the ciphertext
//!   again and the error is the trait's opaque `aead::Error`. The AES-GCM keys made by `KeyInit` take 12-byte
//!   nonces only.
//! - Stream ciphers: pqkit never wraps a counter. The checked trait methods return `StreamCipherError` before
//!   touching data; the `unchecked_*` methods, which the trait lets callers reach without a check, panic
//!   rather than reuse keystream. Unlike the RustCrypto ciphers the very last keystream block can be used.
//! - Signatures: `Signer` is deterministic where the algorithm allows it, as in the RustCrypto crates
//!   (ML-DSA with rnd = 0 and an empty context, ECDSA with RFC 6979, Ed25519 by definition);
//!   `RandomizedSigner` gives hedged ML-DSA and ECDSA and randomly salted RSA-PSS.
//! - `KeyInit`/`KeyIvInit` constructors take fixed-size arrays, so their length checks cannot fail;
//!   `new_from_slice`/`new_from_slices` return `InvalidLength` for a wrong length.
//!
//! ```
//! use pqkit::rustcrypto::aead::{AeadInOut, KeyInit};
//! use pqkit::rustcrypto::digest::Digest;
//!
//! // Code generic over the RustCrypto traits...
//! fn seal_in_place<A: AeadInOut + KeyInit>(key: &[u8], nonce: &[u8], msg: &mut Vec<u8>) {
//!     let aead = A::new_from_slice(key).expect("key length");
//!     aead.encrypt_in_place(nonce.try_into().expect("nonce length"), b"ad", msg).expect("seal");
//! }
//! fn hash<D: Digest>(data: &[u8]) -> Vec<u8> {
//!     D::digest(data).to_vec()
//! }
//!
//! // ...runs on pqkit's types.
//! let mut msg = b"attack at dawn".to_vec();
//! seal_in_place::<pqkit::aead::ChaCha20Poly1305>(&[7; 32], &[0; 12], &mut msg);
//! assert_eq!(msg.len(), 14 + 16);
//! assert_eq!(hash::<pqkit::hash::sha2::Sha256>(b"abc")[..4], [0xba, 0x78, 0x16, 0xbf]);
//! ```

pub use ::aead;
pub use ::cipher;
pub use ::crypto_common;
pub use ::digest;
pub use ::kem;
pub use ::signature;

mod aeads;
mod ciphers;
mod digests;
mod kems;
mod signatures;

pub use kems::KemDecapsulationKey;
#[cfg(feature = "alloc")]
pub use signatures::RsaSignature;

/// Unwraps the result of a pqkit constructor whose only failure is a length check, called with inputs whose
/// lengths the trait's array types already fix. The panic is unreachable; it exists because the native
/// constructors take slices.
#[inline]
#[track_caller]
fn fixed_len<T>(r: crate::Result<T>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => unreachable!("pqkit: a length fixed by the trait's array type was refused: {e}"),
    }
}
