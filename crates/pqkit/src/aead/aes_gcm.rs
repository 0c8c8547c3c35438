//! AES-128-GCM and AES-256-GCM (NIST SP 800-38D), with 16-byte tags.
//!
//! ## Nonces
//! [`Aead::NONCE_LEN`] is 12: 96-bit nonces are the fast path and the recommended choice
//! (J0 = nonce || 0x00000001). Other **non-empty** nonce lengths are accepted as SP 800-38D allows, with
//! J0 = GHASH(nonce || zero padding || 0^64 || bit length of the nonce). An empty nonce is rejected with
//! [`Error::InvalidLength`].
//!
//! ## Security contract
//! - A (key, nonce) pair must never be used for two messages: reuse reveals the XOR of the plaintexts and lets an
//!   attacker forge tags. With random 96-bit nonces, stay well below 2^32 messages per key (SP 800-38D 8.3).
//! - Plaintext is at most 2^36 - 32 bytes per message (else [`Error::MessageTooLong`]);
//!   associated data at most 2^61 - 1 bytes.
//! - Opening hashes the ciphertext while decrypting it, then compares tags in constant time
//!   ([`crate::ct::eq`]); on a mismatch the buffer is re-encrypted, so it holds the ciphertext again, and the
//!   error is [`Error::AuthenticationFailed`]. No plaintext is released.
//! - Tags are always 16 bytes; shorter tags are rejected.

use super::{Aead, TAG_LEN};
use crate::aes::{Backend, GcmKey, inc32};
use crate::dispatch::Checked;
use crate::{Error, Result};
use zeroize::Zeroize;

/// Largest plaintext under one nonce: 2^36 - 32 bytes (2^32 - 2 counter blocks).
pub const MAX_PLAINTEXT_LEN: u64 = (1 << 36) - 32;
/// Largest associated data: 2^61 - 1 bytes (its bit length must fit in 64 bits).
pub const MAX_AAD_LEN: u64 = (1 << 61) - 1;

fn seal_core(alg: &'static str, k: &GcmKey, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
    let j0 = prepare(alg, k, nonce, aad, buf.len())?;
    Ok(k.seal_full(&j0, aad, buf))
}

fn open_core(alg: &'static str, k: &GcmKey, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
    Error::check_length(alg, "tag", TAG_LEN, tag.len())?;
    let j0 = prepare(alg, k, nonce, aad, buf.len())?;
    // Hash the ciphertext and decrypt in one pass; on a bad tag, encrypt again to restore the ciphertext.
    let mut expected = k.open_full(&j0, aad, buf);
    let ok = crate::ct::eq(&expected, tag);
    expected.zeroize();
    if ok {
        Ok(())
    } else {
        let mut dummy = 0u128;
        k.seal(&inc32(&j0), &mut dummy, buf);
        Err(Error::AuthenticationFailed { algorithm: alg })
    }
}

/// Checks lengths and returns J0.
fn prepare(alg: &'static str, k: &GcmKey, nonce: &[u8], aad: &[u8], len: usize) -> Result<[u8; 16]> {
    if nonce.is_empty() {
        return Err(Error::InvalidLength {
            algorithm: alg,
            field: "nonce",
            expected: crate::error::Expected::AtLeast(1),
            actual: 0,
        });
    }
    if len as u64 > MAX_PLAINTEXT_LEN {
        return Err(Error::MessageTooLong { algorithm: alg, max: MAX_PLAINTEXT_LEN });
    }
    if aad.len() as u64 > MAX_AAD_LEN {
        return Err(Error::InvalidLength {
            algorithm: alg,
            field: "associated data",
            expected: crate::error::Expected::AtMost(MAX_AAD_LEN as usize),
            actual: aad.len(),
        });
    }
    if nonce.len() as u64 > MAX_AAD_LEN {
        return Err(Error::InvalidLength {
            algorithm: alg,
            field: "nonce",
            expected: crate::error::Expected::AtMost(MAX_AAD_LEN as usize),
            actual: nonce.len(),
        });
    }
    let mut j0 = [0u8; 16];
    if nonce.len() == 12 {
        j0[..12].copy_from_slice(nonce);
        j0[15] = 1;
    } else {
        let mut s = 0u128;
        k.ghash(&mut s, nonce);
        let mut lens = [0u8; 16];
        lens[8..].copy_from_slice(&(nonce.len() as u64 * 8).to_be_bytes());
        k.ghash(&mut s, &lens);
        j0 = s.to_be_bytes();
    }
    Ok(j0)
}

macro_rules! gcm_type {
    ($name:ident, $alg:literal, $klen:literal, $doc:literal) => {
        #[doc = $doc]
        ///
        /// See the [module documentation](self) for nonce lengths, limits and the security contract. The key
        /// schedule and the powers of the hash key are zeroized on drop; `Debug` prints no key material.
        #[derive(Clone)]
        pub struct $name {
            key: GcmKey,
        }

        impl $name {
            /// Creates the AEAD from a key of exactly [`Aead::KEY_LEN`] bytes
            /// (else [`Error::InvalidLength`]).
            pub fn new(key: &[u8]) -> Result<Self> {
                Self::new_with_backend(key, Backend::detect())
            }

            /// Like [`Self::new`] on a chosen backend (for tests and benchmarks), checked by
            /// `Backend::X.checked()` or taken from `Backend::available()`.
            #[doc(hidden)]
            pub fn new_with_backend(key: &[u8], backend: Checked<Backend>) -> Result<Self> {
                Error::check_length($alg, "key", $klen, key.len())?;
                Ok($name { key: GcmKey::new(key, backend) })
            }

            /// The backend this key runs on.
            #[doc(hidden)]
            pub fn backend(&self) -> Checked<Backend> {
                self.key.backend
            }
        }

        impl Aead for $name {
            const NAME: &'static str = $alg;
            const KEY_LEN: usize = $klen;
            /// 12, the recommended length; any other non-empty length is also accepted (see the module docs).
            const NONCE_LEN: usize = 12;

            fn seal_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
                seal_core($alg, &self.key, nonce, aad, buf)
            }

            fn open_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
                open_core($alg, &self.key, nonce, aad, buf, tag)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($name), " { .. }"))
            }
        }
    };
}

gcm_type!(
    Aes128Gcm,
    "AES-128-GCM",
    16,
    "AES-128-GCM: 16-byte key, 12-byte nonce (other non-empty lengths accepted), 16-byte tag."
);
gcm_type!(
    Aes256Gcm,
    "AES-256-GCM",
    32,
    "AES-256-GCM: 32-byte key, 12-byte nonce (other non-empty lengths accepted), 16-byte tag."
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The SP 800-38D plaintext limit, checked on the length alone (a 64 GiB buffer is not practical in a test).
    #[test]
    fn plaintext_limit_is_exact() {
        let k = GcmKey::new(&[0u8; 16], Backend::Soft.checked().unwrap());
        assert!(prepare("AES-128-GCM", &k, &[0u8; 12], b"", MAX_PLAINTEXT_LEN as usize).is_ok());
        assert_eq!(
            prepare("AES-128-GCM", &k, &[0u8; 12], b"", MAX_PLAINTEXT_LEN as usize + 1).unwrap_err(),
            Error::MessageTooLong { algorithm: "AES-128-GCM", max: (1 << 36) - 32 }
        );
        assert_eq!(MAX_PLAINTEXT_LEN, 68_719_476_704);
    }

    #[test]
    fn j0_for_96_bit_nonces_is_nonce_then_one() {
        let k = GcmKey::new(&[0u8; 16], Backend::Soft.checked().unwrap());
        let j0 = prepare("AES-128-GCM", &k, &[7u8; 12], b"", 0).unwrap();
        assert_eq!(&j0[..12], &[7u8; 12]);
        assert_eq!(&j0[12..], &[0, 0, 0, 1]);
    }
}
