//! Kusumi512-Poly1305: RFC 8439 section 2.8 with Kusumi512 in place of ChaCha20.
//!
//! - one-time Poly1305 key = the first 32 bytes of the Kusumi512 block at counter 0;
//! - ciphertext = plaintext XOR the Kusumi512 keystream from counter 1;
//! - tag = Poly1305(otk, AAD || pad16 || CT || pad16 || LE64(len AAD) || LE64(len CT)).
//!
//! ## Security contract
//! - 64-byte key, 12-byte nonce. A (key, nonce) pair must never seal two different messages; with random
//!   nonces keep the number of messages per key well below 2^32.
//! - A message may be up to (2^64 - 1) * 100 bytes, more than any buffer can hold.
//! - Opening verifies the tag in constant time before decrypting; on failure the buffer holds the ciphertext.
//!
//! Sealing is one pass over memory: each chunk of a few KiB is encrypted and then fed to Poly1305 while it is
//! still in cache.

use super::{Aead, TAG_LEN};
use crate::cipher::StreamCipher;
use crate::kusumi::Kusumi512;
use crate::poly1305::Poly1305;
use crate::{Error, Result};
use zeroize::Zeroize;

const NAME: &str = "Kusumi512-Poly1305";
/// Encrypt-then-MAC granularity: three 16-block AVX-512 batches, a multiple of Poly1305's 16-byte block.
pub(super) const CHUNK: usize = 4800;

/// The Kusumi512-Poly1305 AEAD with a fixed 64-byte key.
#[derive(Clone)]
pub struct Kusumi512Poly1305 {
    key: [u8; 64],
}

impl Kusumi512Poly1305 {
    /// Keys the AEAD. `key` must be 64 bytes.
    pub fn new(key: &[u8]) -> Result<Self> {
        Error::check_length(NAME, "key", 64, key.len())?;
        let mut k = [0u8; 64];
        k.copy_from_slice(key);
        Ok(Kusumi512Poly1305 { key: k })
    }

    fn start(&self, nonce: &[u8]) -> Result<(Kusumi512, Poly1305)> {
        start(NAME, &self.key, nonce)
    }
}

/// The cipher positioned at counter 1 and the Poly1305 instance keyed from block 0: shared with the legacy
/// Greenfield format, which derives both the same way. `name` is the format named in a nonce-length error.
pub(super) fn start(name: &'static str, key: &[u8; 64], nonce: &[u8]) -> Result<(Kusumi512, Poly1305)> {
    Error::check_length(name, "nonce", 12, nonce.len())?;
    let cipher = Kusumi512::new(key, nonce)?;
    let mut block0 = cipher.keystream_block(0);
    let mut otk = [0u8; 32];
    otk.copy_from_slice(&block0[..32]);
    let mac = Poly1305::new(&otk);
    block0.zeroize();
    otk.zeroize();
    Ok((cipher, mac))
}

/// Feeds the RFC 8439 trailer: zero padding of the ciphertext, then both lengths.
fn finish(mut mac: Poly1305, aad_len: usize, ct_len: usize) -> Poly1305 {
    let pad = (16 - ct_len % 16) % 16;
    mac.update(&[0u8; 16][..pad]);
    let mut lens = [0u8; 16];
    lens[..8].copy_from_slice(&(aad_len as u64).to_le_bytes());
    lens[8..].copy_from_slice(&(ct_len as u64).to_le_bytes());
    mac.update(&lens);
    mac
}

impl Aead for Kusumi512Poly1305 {
    const NAME: &'static str = NAME;
    const KEY_LEN: usize = 64;
    const NONCE_LEN: usize = 12;

    fn seal_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
        let (mut cipher, mut mac) = self.start(nonce)?;
        mac.update_padded(aad);
        for chunk in buf.chunks_mut(CHUNK) {
            cipher.apply_keystream(chunk)?;
            mac.update(chunk);
        }
        Ok(finish(mac, aad.len(), buf.len()).finalize())
    }

    fn open_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
        Error::check_length(NAME, "tag", TAG_LEN, tag.len())?;
        let (mut cipher, mut mac) = self.start(nonce)?;
        mac.update_padded(aad);
        mac.update(buf);
        finish(mac, aad.len(), buf.len()).verify(tag).map_err(|_| Error::AuthenticationFailed { algorithm: NAME })?;
        cipher.apply_keystream(buf)
    }
}

impl Drop for Kusumi512Poly1305 {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for Kusumi512Poly1305 {}

impl core::fmt::Debug for Kusumi512Poly1305 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Kusumi512Poly1305 { .. }")
    }
}
