//! `EVP_CIPHER`: AEAD seal/open and stream-cipher contexts, keyed once, through the `openssl` crate.

use super::e;
use openssl::cipher_ctx::CipherCtx;

pub use openssl::cipher::{Cipher, CipherRef};

/// An AEAD `EVP_CIPHER_CTX` keyed once for sealing or for opening; each operation re-initialises only the nonce.
pub struct Aead {
    ctx: CipherCtx,
}

impl Aead {
    /// A context that seals with `key` and nonces of `nonce_len` bytes.
    pub fn sealer(cipher: &CipherRef, key: &[u8], nonce_len: usize) -> Result<Self, String> {
        let mut ctx = CipherCtx::new().map_err(e)?;
        ctx.encrypt_init(Some(cipher), Some(key), None).map_err(e)?;
        ctx.set_iv_length(nonce_len).map_err(e)?;
        Ok(Aead { ctx })
    }

    /// A context that opens with `key` and nonces of `nonce_len` bytes.
    pub fn opener(cipher: &CipherRef, key: &[u8], nonce_len: usize) -> Result<Self, String> {
        let mut ctx = CipherCtx::new().map_err(e)?;
        ctx.decrypt_init(Some(cipher), Some(key), None).map_err(e)?;
        ctx.set_iv_length(nonce_len).map_err(e)?;
        Ok(Aead { ctx })
    }

    /// Encrypts `data` in place under `nonce` and `aad` (a sealer's context); writes the tag.
    #[inline]
    pub fn seal(&mut self, nonce: &[u8], aad: &[u8], data: &mut [u8], tag: &mut [u8]) -> Result<(), String> {
        self.ctx.encrypt_init(None, None, Some(nonce)).map_err(e)?;
        self.ctx.cipher_update(aad, None).map_err(e)?;
        let n = data.len();
        self.ctx.cipher_update_inplace(data, n).map_err(e)?;
        self.ctx.cipher_final(&mut []).map_err(e)?;
        self.ctx.tag(tag).map_err(e)
    }

    /// Verifies `tag` and decrypts `data` in place under `nonce` and `aad` (an opener's context).
    #[inline]
    pub fn open(&mut self, nonce: &[u8], aad: &[u8], data: &mut [u8], tag: &[u8]) -> Result<(), String> {
        let n = data.len();
        self.ctx.decrypt_init(None, None, Some(nonce)).map_err(e)?;
        self.ctx.set_tag(tag).map_err(e)?;
        self.ctx.cipher_update(aad, None).map_err(e)?;
        self.ctx.cipher_update_inplace(data, n).map_err(e)?;
        self.ctx.cipher_final(&mut []).map_err(|_| "openssl: open failed".to_string())?;
        Ok(())
    }
}

/// A stream-cipher `EVP_CIPHER_CTX` (ChaCha20), keyed once; each call continues the keystream.
pub struct Stream {
    ctx: CipherCtx,
}

impl Stream {
    /// An encrypting context for `cipher` with `key` and `iv`.
    pub fn new(cipher: &CipherRef, key: &[u8], iv: &[u8]) -> Result<Self, String> {
        let mut ctx = CipherCtx::new().map_err(e)?;
        ctx.encrypt_init(Some(cipher), Some(key), Some(iv)).map_err(e)?;
        Ok(Stream { ctx })
    }

    /// XORs the next `data.len()` keystream bytes into `data` (in-place `EVP_CipherUpdate`).
    #[inline]
    pub fn apply(&mut self, data: &mut [u8]) -> Result<(), String> {
        let n = data.len();
        self.ctx.cipher_update_inplace(data, n).map_err(e)?;
        Ok(())
    }
}
