//! Authenticated encryption with associated data.
//!
//! Every AEAD in pqkit implements [`Aead`]: a key is set once with `new(key)`, then
//! - [`Aead::seal`] / [`Aead::open`] return a new `Vec` (sealed form: `ciphertext || tag`);
//! - [`Aead::seal_in_place_detached`] / [`Aead::open_in_place_detached`] work in place and allocate nothing.
//!
//! ## Security contract
//! - A (key, nonce) pair must never seal two different messages. With random nonces prefer the 24-byte-nonce
//!   AEADs (XChaCha20-Poly1305), whose nonces are long enough to be drawn at random.
//! - `open` verifies the tag in constant time *before* releasing any plaintext. On failure it returns
//!   [`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed) and, in the in-place form, the buffer
//!   holds the ciphertext again (never plaintext).
//! - For data of any length use [`stream`], the pqkit file format: STREAM over 64 KiB segments, truncation-proof.

use crate::Result;
#[cfg(feature = "alloc")]
use alloc::vec::Vec;

pub mod kusumi512_poly1305;
pub mod legacy;
pub mod stream;
pub use kusumi512_poly1305::Kusumi512Poly1305;

/// Length of every pqkit AEAD tag, in bytes.
pub const TAG_LEN: usize = 16;

/// An AEAD with a fixed key.
pub trait Aead {
    /// The algorithm's name, as used in error messages.
    const NAME: &'static str;
    /// Key length in bytes.
    const KEY_LEN: usize;
    /// Nonce length in bytes.
    const NONCE_LEN: usize;

    /// Encrypts `buf` in place and returns the tag.
    fn seal_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]>;

    /// Verifies `tag` over `aad` and the ciphertext in `buf`, then decrypts `buf` in place.
    ///
    /// On a bad tag `buf` is left holding the ciphertext and the error is
    /// [`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed).
    fn open_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()>;

    /// Encrypts `plaintext` and returns `ciphertext || tag` in one allocation of exactly that size.
    #[cfg(feature = "alloc")]
    fn seal(&self, nonce: &[u8], aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(plaintext.len() + TAG_LEN);
        out.extend_from_slice(plaintext);
        let tag = self.seal_in_place_detached(nonce, aad, &mut out)?;
        out.extend_from_slice(&tag);
        Ok(out)
    }

    /// Verifies and decrypts `ciphertext || tag`, returning the plaintext. Nothing is returned on failure.
    #[cfg(feature = "alloc")]
    fn open(&self, nonce: &[u8], aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>> {
        if sealed.len() < TAG_LEN {
            return Err(crate::Error::InvalidLength {
                algorithm: Self::NAME,
                field: "sealed message",
                expected: crate::error::Expected::AtLeast(TAG_LEN),
                actual: sealed.len(),
            });
        }
        let (ct, tag) = sealed.split_at(sealed.len() - TAG_LEN);
        let mut out = ct.to_vec();
        // On failure `out` holds ciphertext only; it is dropped without being returned.
        self.open_in_place_detached(nonce, aad, &mut out, tag)?;
        Ok(out)
    }
}

pub mod chacha20poly1305;
pub use chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
pub mod aes_gcm;
pub use aes_gcm::{Aes128Gcm, Aes256Gcm};
