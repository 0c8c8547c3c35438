//! Legacy formats, for reading old data only. Do not use them for new data.
//!
//! [`GreenfieldKusumi512Poly1305`] is the "Kusumi512Poly1305" of the published .NET library (GreenfieldPQC).
//! It authenticates the ciphertext only (no associated data, no lengths) and finishes Poly1305 with
//! `((h + s) mod (2^130 - 5)) mod 2^128` instead of RFC 8439's `(h + s) mod 2^128`. pqkit implements it
//! byte for byte so that such data can be opened and migrated to [`super::Kusumi512Poly1305`].

use super::TAG_LEN;
use crate::cipher::StreamCipher;
use crate::kusumi::Kusumi512;
use crate::poly1305::Poly1305;
use crate::{Error, Result};
#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use zeroize::Zeroize;

const NAME: &str = "Greenfield-Kusumi512-Poly1305";

/// The .NET library's Kusumi512-Poly1305 format (legacy; see the module documentation).
///
/// Same key (64 bytes), nonce (12 bytes), one-time key (Kusumi512 block 0) and ciphertext (keystream from
/// counter 1) as [`super::Kusumi512Poly1305`]; the tag is Poly1305 over the ciphertext alone with the
/// non-standard final reduction. Sealed form: `ciphertext || tag`.
#[derive(Clone)]
pub struct GreenfieldKusumi512Poly1305 {
    key: [u8; 64],
}

impl GreenfieldKusumi512Poly1305 {
    /// Keys the format. `key` must be 64 bytes.
    pub fn new(key: &[u8]) -> Result<Self> {
        Error::check_length(NAME, "key", 64, key.len())?;
        let mut k = [0u8; 64];
        k.copy_from_slice(key);
        Ok(GreenfieldKusumi512Poly1305 { key: k })
    }

    fn start(&self, nonce: &[u8]) -> Result<(Kusumi512, Poly1305)> {
        super::kusumi512_poly1305::start(NAME, &self.key, nonce)
    }

    /// Encrypts `buf` in place and returns the legacy tag. Only for producing test data for old readers.
    pub fn seal_in_place_detached(&self, nonce: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
        let (mut cipher, mut mac) = self.start(nonce)?;
        for chunk in buf.chunks_mut(super::kusumi512_poly1305::CHUNK) {
            cipher.apply_keystream(chunk)?;
            mac.update(chunk);
        }
        Ok(mac.finalize_mod_p())
    }

    /// Verifies the legacy tag over the ciphertext in `buf` in constant time, then decrypts in place. On a bad
    /// tag `buf` still holds the ciphertext and the error is [`Error::AuthenticationFailed`].
    pub fn open_in_place_detached(&self, nonce: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
        Error::check_length(NAME, "tag", TAG_LEN, tag.len())?;
        let (mut cipher, mut mac) = self.start(nonce)?;
        mac.update(buf);
        let mut want = mac.finalize_mod_p();
        // The tag check's outcome is returned to the caller: public.
        let ok = crate::ct::declassify(crate::ct::eq(&want, tag));
        want.zeroize();
        if !ok {
            return Err(Error::AuthenticationFailed { algorithm: NAME });
        }
        cipher.apply_keystream(buf)
    }

    /// Encrypts `plaintext` and returns `ciphertext || tag`.
    #[cfg(feature = "alloc")]
    pub fn seal(&self, nonce: &[u8], plaintext: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(plaintext.len() + TAG_LEN);
        out.extend_from_slice(plaintext);
        let tag = self.seal_in_place_detached(nonce, &mut out)?;
        out.extend_from_slice(&tag);
        Ok(out)
    }

    /// Verifies and decrypts `ciphertext || tag`. Nothing is returned on failure.
    #[cfg(feature = "alloc")]
    pub fn open(&self, nonce: &[u8], sealed: &[u8]) -> Result<Vec<u8>> {
        if sealed.len() < TAG_LEN {
            return Err(Error::InvalidLength {
                algorithm: NAME,
                field: "sealed message",
                expected: crate::error::Expected::AtLeast(TAG_LEN),
                actual: sealed.len(),
            });
        }
        let (ct, tag) = sealed.split_at(sealed.len() - TAG_LEN);
        let mut out = ct.to_vec();
        self.open_in_place_detached(nonce, &mut out, tag)?;
        Ok(out)
    }
}

impl Drop for GreenfieldKusumi512Poly1305 {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for GreenfieldKusumi512Poly1305 {}

impl core::fmt::Debug for GreenfieldKusumi512Poly1305 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("GreenfieldKusumi512Poly1305 { .. }")
    }
}
