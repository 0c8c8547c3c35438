//! Authenticated encryption with associated data.
//!
//! Every AEAD in pqkit implements [`Aead`]: a key is set once with `new(key)`, then
//! - [`Aead::seal`] / [`Aead::open`] return a new `Vec` (sealed form: `ciphertext || tag`);
//! - [`Aead::seal_in_place_detached`] / [`Aead::open_in_place_detached`] work in place and allocate nothing;
//! - [`Aead::seal_detached_into`] / [`Aead::open_detached_into`] read an input and write an output buffer of the
//!   same length (for bindings and callers whose output buffer is fresh: AES-GCM does it in one pass, with no
//!   copy first). The two buffers cannot overlap: one is borrowed shared and the other exclusively, so safe Rust
//!   rejects overlapping slices at compile time.
//!
//! ## Security contract
//! - A (key, nonce) pair must never seal two different messages. With random nonces prefer the 24-byte-nonce
//!   AEADs (XChaCha20-Poly1305), whose nonces are long enough to be drawn at random.
//! - `open` verifies the tag in constant time *before* releasing any plaintext. On failure it returns
//!   [`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed) and, in the in-place form, the buffer
//!   holds the ciphertext again (never plaintext); in the out-of-place form the output is zeroed.
//! - For data of any length use [`stream`], the pqkit file format: STREAM over 64 KiB segments, truncation-proof.

use crate::Result;
#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use zeroize::Zeroize;

pub mod kusumi512_poly1305;
pub mod legacy;
#[cfg(feature = "alloc")]
pub mod recipients;
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

    /// Encrypts `input` into `out` (out of place) and returns the tag; `input` is not modified.
    ///
    /// `out.len()` must equal `input.len()`, else [`Error::InvalidLength`](crate::Error::InvalidLength)
    /// (`field: "output"`, `expected: Exactly(input.len())`). On any error `out` is zeroed. Same nonce rules and
    /// limits as [`Aead::seal_in_place_detached`]; the ciphertext and tag are identical to it bit for bit.
    ///
    /// The default copies `input` into `out` and seals in place; AES-GCM overrides it with a one-pass kernel
    /// (read the input, write the output).
    fn seal_detached_into(&self, nonce: &[u8], aad: &[u8], input: &[u8], out: &mut [u8]) -> Result<[u8; TAG_LEN]> {
        let r = check_output_len(Self::NAME, input.len(), out.len()).and_then(|()| {
            out.copy_from_slice(input);
            self.seal_in_place_detached(nonce, aad, out)
        });
        if r.is_err() {
            out.zeroize();
        }
        r
    }

    /// Verifies `tag` over `aad` and the ciphertext `input` and decrypts it into `out` (out of place); `input` is
    /// not modified.
    ///
    /// `out.len()` must equal `input.len()`, else [`Error::InvalidLength`](crate::Error::InvalidLength)
    /// (`field: "output"`, `expected: Exactly(input.len())`). On a bad tag the error is
    /// [`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed) and `out` is zeroed before the call
    /// returns: no unauthenticated plaintext is released (AES-GCM decrypts while it hashes, then wipes). On any
    /// other error `out` is zeroed too.
    ///
    /// The default copies `input` into `out` and opens in place; AES-GCM overrides it with a one-pass kernel.
    fn open_detached_into(&self, nonce: &[u8], aad: &[u8], input: &[u8], tag: &[u8], out: &mut [u8]) -> Result<()> {
        let r = check_output_len(Self::NAME, input.len(), out.len()).and_then(|()| {
            out.copy_from_slice(input);
            self.open_in_place_detached(nonce, aad, out, tag)
        });
        if r.is_err() {
            out.zeroize();
        }
        r
    }

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

/// The out-of-place methods' check: the output must be exactly as long as the input.
pub(crate) fn check_output_len(alg: &'static str, input: usize, out: usize) -> Result<()> {
    crate::Error::check_length(alg, "output", input, out)
}

pub mod chacha20poly1305;
pub use chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
pub mod aes_gcm;
pub use aes_gcm::{Aes128Gcm, Aes256Gcm};
