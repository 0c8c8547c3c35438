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
//! - Opening verifies the tag in constant time before releasing any plaintext; on failure the buffer holds the
//!   ciphertext (the first batch's bytes, decrypted in place with the Poly1305 key, are put back).
//!
//! Sealing is one pass over memory. On the vector backends it is stitched: while Kusumi512 computes the keystream
//! of one 8- or 16-block chunk, the scalar Poly1305 hashes the chunk before it (during the first chunk, the
//! first batch's ciphertext), a few blocks between the quarter rounds, so the integer and vector units work at
//! once (`Kusumi512::xor_stitched`). Otherwise each chunk of a few KiB is encrypted and then fed to Poly1305
//! while it is still in cache. Block 0 (the Poly1305 key) is computed in the same vector batch as the first
//! blocks of the message (`Kusumi512::xor_head`), whose keystream goes straight into the message: one batch
//! instead of two for a short message, and no stack copy of the keystream.

use super::{Aead, TAG_LEN};
use crate::cipher::StreamCipher;
use crate::kusumi::{BLOCK_LEN, Kusumi512};
#[cfg(target_arch = "x86_64")]
use crate::kusumi::{STITCH_STEP, Stitch};
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

/// The cipher after the AEAD's first batch ([`Kusumi512::xor_head`]): block 0's keystream, from which the
/// Poly1305 key comes, computed with the first message blocks, whose keystream went straight into `buf` (no
/// stack copy of it). Returns the cipher, positioned after those `h` bytes, the MAC and `h`.
fn head(key: &[u8; 64], nonce: &[u8], buf: &mut [u8]) -> Result<(Kusumi512, Poly1305, usize)> {
    Error::check_length(NAME, "nonce", 12, nonce.len())?;
    let mut cipher = Kusumi512::new_with_counter(key, nonce, 0)?;
    let mut block0 = [0u8; BLOCK_LEN];
    let h = cipher.xor_head(buf, &mut block0)?;
    let otk: &[u8; 32] = block0[..32].try_into().expect("32 bytes");
    let mac = Poly1305::new(otk);
    crate::ct::wipe(&mut block0);
    Ok((cipher, mac, h))
}

/// Ciphertext bytes an opening keeps a copy of while the head batch decrypts them in place: at most 15 blocks
/// (the AVX-512 head), restored if the tag is bad.
const HEAD_MAX: usize = 15 * BLOCK_LEN;

/// Poly1305 as the scalar job of Kusumi512's stitched pass: five blocks per step on the portable scalar code,
/// whose integer multiplies run beside the vector rounds. The MAC's input is on a 16-byte boundary whenever the
/// pass runs (see `seal_in_place_detached`).
#[cfg(target_arch = "x86_64")]
struct PolyJob<'a>(&'a mut Poly1305);

#[cfg(target_arch = "x86_64")]
impl Stitch for PolyJob<'_> {
    #[inline(always)]
    fn step(&mut self, data: &[u8; STITCH_STEP]) {
        for b in data.chunks_exact(16) {
            let m0 = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
            let m1 = u64::from_le_bytes(b[8..].try_into().expect("8 bytes"));
            self.0.scalar_block(m0, m1);
        }
    }
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
        let (mut cipher, mut mac, hl) = head(&self.key, nonce, buf)?;
        mac.update_padded(aad);
        // The head's ciphertext is hashed during the first stitched chunk (its whole steps) so that the MAC, on a
        // 16-byte boundary after the padded AAD, starts with it.
        #[cfg(target_arch = "x86_64")]
        let (enc, hashed) = cipher.xor_stitched(buf, hl, &mut PolyJob(&mut mac))?;
        #[cfg(not(target_arch = "x86_64"))]
        let (enc, hashed) = (0, 0);
        let done = hl + enc;
        if buf.len() - done <= CHUNK {
            // A short rest (a 1 KiB message's last blocks): encrypt it, then hash everything left in one call,
            // one Poly1305 pass instead of two.
            cipher.apply_keystream(&mut buf[done..])?;
            mac.update(&buf[hashed..]);
        } else {
            mac.update(&buf[hashed..done]);
            for chunk in buf[done..].chunks_mut(CHUNK) {
                cipher.apply_keystream(chunk)?;
                mac.update(chunk);
            }
        }
        Ok(finish(mac, aad.len(), buf.len()).finalize())
    }

    fn open_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
        Error::check_length(NAME, "tag", TAG_LEN, tag.len())?;
        Error::check_length(NAME, "nonce", 12, nonce.len())?;
        // The head batch decrypts the first bytes in place while it computes the Poly1305 key; their ciphertext
        // (public) is kept to be hashed, and put back if the tag is bad, so no plaintext is released.
        let mut ct = [0u8; HEAD_MAX];
        let n = buf.len().min(HEAD_MAX);
        ct[..n].copy_from_slice(&buf[..n]);
        let (mut cipher, mut mac, hl) = head(&self.key, nonce, buf)?;
        mac.update_padded(aad);
        // `ct` holds the first `n >= hl` ciphertext bytes: hashing all of them in one call keeps a short message
        // to one Poly1305 pass.
        mac.update(&ct[..n]);
        mac.update(&buf[n..]);
        if finish(mac, aad.len(), buf.len()).verify(tag).is_err() {
            buf[..hl].copy_from_slice(&ct[..hl]);
            return Err(Error::AuthenticationFailed { algorithm: NAME });
        }
        cipher.apply_keystream(&mut buf[hl..])
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
