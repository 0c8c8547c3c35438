//! AES-128-GCM and AES-256-GCM (NIST SP 800-38D), with 16-byte tags.
//!
//! ## Nonces
//! Keys made with `new` take 96-bit nonces only: [`Aead::NONCE_LEN`] is 12, J0 = nonce || 0x00000001, and
//! `seal`/`open` (every method of the [`Aead`] trait) reject any other length with
//! [`Error::InvalidLength`] (`field: "nonce"`, `expected: Exactly(12)`). SP 800-38D also defines other
//! non-empty lengths, with J0 = GHASH(nonce || zero padding || 0^64 || bit length of the nonce); those are
//! accepted only by a key made with `new_with_any_nonce_length` (e.g.
//! [`Aes256Gcm::new_with_any_nonce_length`]), for protocols and test vectors that need them. Its documentation
//! says why they are not the default.
//!
//! ## Security contract
//! - A (key, nonce) pair must never be used for two messages: reuse reveals the XOR of the plaintexts and lets an
//!   attacker forge tags. With random 96-bit nonces, stay well below 2^32 messages per key (SP 800-38D 8.3).
//! - Plaintext is at most 2^36 - 32 bytes per message (else [`Error::MessageTooLong`]);
//!   associated data at most 2^61 - 1 bytes.
//! - Opening hashes the ciphertext while decrypting it, then compares tags in constant time
//!   ([`crate::ct::eq`]); on a mismatch the buffer is re-encrypted, so it holds the ciphertext again, and the
//!   error is [`Error::AuthenticationFailed`]. Out of place ([`Aead::open_detached_into`]) the output is zeroed
//!   instead. No plaintext is released.
//! - [`Aead::seal_detached_into`] / [`Aead::open_detached_into`] run the same kernels as the in-place methods
//!   (one code path: in place is the case output = input), reading the input and writing the output in one pass.
//! - Tags are always 16 bytes; shorter tags are rejected.

use super::{Aead, TAG_LEN};
use crate::aes::{Backend, GcmKey, InOut, J0, inc32};
use crate::dispatch::Checked;
use crate::{Error, Result};
use zeroize::Zeroize;

/// Largest plaintext under one nonce: 2^36 - 32 bytes (2^32 - 2 counter blocks).
pub const MAX_PLAINTEXT_LEN: u64 = (1 << 36) - 32;
/// Largest associated data: 2^61 - 1 bytes (its bit length must fit in 64 bits).
pub const MAX_AAD_LEN: u64 = (1 << 61) - 1;

/// The standard nonce length, 96 bits: the only one the ordinary API accepts.
const NONCE_LEN: usize = 12;

/// Which nonce lengths a key accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Nonces {
    /// Exactly [`NONCE_LEN`] bytes (the ordinary API).
    Standard,
    /// Any non-empty length; lengths other than 12 derive J0 through GHASH (the explicit constructor).
    AnyLength,
}

fn seal_core(
    alg: &'static str,
    k: &GcmKey,
    rule: Nonces,
    nonce: &[u8],
    aad: &[u8],
    mut buf: InOut<'_>,
) -> Result<[u8; TAG_LEN]> {
    if let Err(e) = check(alg, rule, nonce, aad, buf.len()) {
        // In place the buffer is untouched (the plaintext stays); out of place the output is zeroed.
        if let InOut::Split(_, out) = &mut buf {
            out.zeroize();
        }
        return Err(e);
    }
    Ok(k.seal_full(&j0(k, nonce), aad, buf))
}

fn open_core(
    alg: &'static str,
    k: &GcmKey,
    rule: Nonces,
    nonce: &[u8],
    aad: &[u8],
    mut buf: InOut<'_>,
    tag: &[u8],
) -> Result<()> {
    if let Err(e) =
        Error::check_length(alg, "tag", TAG_LEN, tag.len()).and_then(|()| check(alg, rule, nonce, aad, buf.len()))
    {
        // In place the buffer is untouched (the ciphertext stays); out of place the output is zeroed.
        if let InOut::Split(_, out) = &mut buf {
            out.zeroize();
        }
        return Err(e);
    }
    let j0 = j0(k, nonce);
    // Hash the ciphertext and decrypt in one pass; on a bad tag, encrypt again to restore the ciphertext (in
    // place) or wipe the output (out of place).
    let in_place = matches!(buf, InOut::InPlace(_));
    let mut expected = k.open_full(&j0, aad, reborrow(&mut buf));
    // The tag check's outcome is returned to the caller: public.
    let ok = crate::ct::declassify(tags_equal(&expected, tag));
    expected.zeroize();
    if ok {
        Ok(())
    } else {
        if in_place {
            let mut dummy = 0u128;
            k.seal(&inc32(&j0.bytes()), &mut dummy, buf.out());
        } else {
            buf.out().zeroize();
        }
        Err(Error::AuthenticationFailed { algorithm: alg })
    }
}

/// Constant-time comparison of two 16-byte tags (the caller checked `b`'s length): one 128-bit XOR and one
/// test of the whole difference, no early exit and no branch on the bytes (a call to the byte loop of
/// [`crate::ct::eq`] was 4 % of a sealed bus delivery's profile).
#[inline]
fn tags_equal(a: &[u8; TAG_LEN], b: &[u8]) -> bool {
    let mut t = [0u8; TAG_LEN];
    t.copy_from_slice(b);
    // `black_box` keeps the optimiser from turning the test into a byte-wise early-exit comparison.
    core::hint::black_box(u128::from_ne_bytes(*a) ^ u128::from_ne_bytes(t)) == 0
}

/// A shorter-lived `InOut` over the same buffers, so the caller keeps `buf` after the kernel consumed the copy.
fn reborrow<'a>(buf: &'a mut InOut<'_>) -> InOut<'a> {
    match buf {
        InOut::InPlace(b) => InOut::InPlace(b),
        InOut::Split(s, d) => InOut::Split(s, d),
    }
}

/// Checks the lengths of a call: the nonce's against `rule`, the message's and the associated data's against
/// their limits.
//
// Apart from [`j0`] on purpose: when one function checked and returned `Result<J0>`, LLVM (once it inlined that
// function into the AEAD front) copied the J0 out of the `Result` with an 8-byte load at an odd offset that spans
// narrower stores, which is not forwarded from them but waits for them to reach the cache: on an Intel Xeon
// (family 6 model 167) it was most of the front's samples and cost about 30 ns per seal.
#[inline]
fn check(alg: &'static str, rule: Nonces, nonce: &[u8], aad: &[u8], len: usize) -> Result<()> {
    if rule == Nonces::Standard {
        Error::check_length(alg, "nonce", NONCE_LEN, nonce.len())?;
    } else if nonce.is_empty() {
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
    Ok(())
}

/// J0 of a nonce that passed [`check`]: a 96-bit nonce as it is (the kernels build nonce || 0x00000001 in a
/// register), any other length hashed.
#[inline]
fn j0<'n>(k: &GcmKey, nonce: &'n [u8]) -> J0<'n> {
    if let Ok(n) = <&[u8; NONCE_LEN]>::try_from(nonce) {
        return J0::Nonce(n);
    }
    let mut s = 0u128;
    k.ghash(&mut s, nonce);
    let mut lens = [0u8; 16];
    lens[8..].copy_from_slice(&(nonce.len() as u64 * 8).to_be_bytes());
    k.ghash(&mut s, &lens);
    J0::Block(s.to_be_bytes())
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
            nonces: Nonces,
        }

        impl $name {
            /// Creates the AEAD from a key of exactly [`Aead::KEY_LEN`] bytes
            /// (else [`Error::InvalidLength`]). It takes 12-byte nonces only; `seal` and `open` reject any other
            /// length with [`Error::InvalidLength`].
            pub fn new(key: &[u8]) -> Result<Self> {
                Self::new_with_backend(key, Backend::detect())
            }

            /// Creates the AEAD from a key of exactly [`Aead::KEY_LEN`] bytes, accepting nonces of any
            /// non-empty length: 12 bytes as with [`Self::new`], any other length through
            /// J0 = GHASH(nonce || zero padding || 0^64 || bit length of the nonce) (SP 800-38D 7.1).
            ///
            /// Use it only where a protocol or a set of test vectors fixes another length; prefer
            /// [`Self::new`] and 12-byte nonces everywhere else. Why:
            /// - A 96-bit nonce becomes the counter block directly, so distinct nonces give disjoint counter
            ///   sequences and never share keystream. Any other length is compressed by GHASH into a 128-bit
            ///   J0, so two distinct nonces can give the same or overlapping counter blocks: keystream reuse,
            ///   which leaks the XOR of the plaintexts, and where J0 itself repeats also the hash key (and with
            ///   it, forgeries). The bound on such collisions over many messages is weaker than for 96-bit
            ///   nonces (the corrected analysis of Iwata, Ohashi and Minematsu, CRYPTO 2012, is larger by a
            ///   factor of up to about 2^22).
            /// - Short nonces (8 bytes, say) collide among themselves far sooner when drawn at random.
            /// - NIST SP 800-38D recommends restricting IVs to 96 bits "to promote interoperability,
            ///   efficiency, and simplicity of design" (5.2.1.1), and caps a key that takes IVs of another
            ///   length at 2^32 invocations in total (8.3).
            ///
            /// An empty nonce is still rejected ([`Error::InvalidLength`], `expected: AtLeast(1)`).
            pub fn new_with_any_nonce_length(key: &[u8]) -> Result<Self> {
                Self::new_with_any_nonce_length_and_backend(key, Backend::detect())
            }

            /// Like [`Self::new`] on a chosen backend (for tests and benchmarks), checked by
            /// `Backend::X.checked()` or taken from `Backend::available()`.
            #[doc(hidden)]
            pub fn new_with_backend(key: &[u8], backend: Checked<Backend>) -> Result<Self> {
                Error::check_length($alg, "key", $klen, key.len())?;
                Ok($name { key: GcmKey::new(key, backend), nonces: Nonces::Standard })
            }

            /// Like [`Self::new_with_any_nonce_length`] on a chosen backend (for tests).
            #[doc(hidden)]
            pub fn new_with_any_nonce_length_and_backend(key: &[u8], backend: Checked<Backend>) -> Result<Self> {
                let mut g = Self::new_with_backend(key, backend)?;
                g.nonces = Nonces::AnyLength;
                Ok(g)
            }

            /// True for a key made by [`Self::new_with_any_nonce_length`], false for one that takes 12-byte
            /// nonces only.
            pub fn accepts_any_nonce_length(&self) -> bool {
                self.nonces == Nonces::AnyLength
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
            /// 12, the only length a key from `new` accepts (see `new_with_any_nonce_length` for others).
            const NONCE_LEN: usize = NONCE_LEN;

            fn seal_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
                seal_core($alg, &self.key, self.nonces, nonce, aad, InOut::InPlace(buf))
            }

            fn open_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
                open_core($alg, &self.key, self.nonces, nonce, aad, InOut::InPlace(buf), tag)
            }

            /// One pass: the kernels read `input` and write `out` (see [`Aead::seal_detached_into`]).
            fn seal_detached_into(
                &self,
                nonce: &[u8],
                aad: &[u8],
                input: &[u8],
                out: &mut [u8],
            ) -> Result<[u8; TAG_LEN]> {
                if let Err(e) = super::check_output_len($alg, input.len(), out.len()) {
                    out.zeroize();
                    return Err(e);
                }
                seal_core($alg, &self.key, self.nonces, nonce, aad, InOut::split(input, out))
            }

            /// One pass: the kernels read `input` and write `out`; on a bad tag `out` is zeroed (see
            /// [`Aead::open_detached_into`]).
            fn open_detached_into(
                &self,
                nonce: &[u8],
                aad: &[u8],
                input: &[u8],
                tag: &[u8],
                out: &mut [u8],
            ) -> Result<()> {
                if let Err(e) = super::check_output_len($alg, input.len(), out.len()) {
                    out.zeroize();
                    return Err(e);
                }
                open_core($alg, &self.key, self.nonces, nonce, aad, InOut::split(input, out), tag)
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
    "AES-128-GCM: 16-byte key, 12-byte nonce (other lengths only through `new_with_any_nonce_length`), 16-byte tag."
);
gcm_type!(
    Aes256Gcm,
    "AES-256-GCM",
    32,
    "AES-256-GCM: 32-byte key, 12-byte nonce (other lengths only through `new_with_any_nonce_length`), 16-byte tag."
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Expected;

    fn soft_key() -> GcmKey {
        GcmKey::new(&[0u8; 16], Backend::Soft.checked().unwrap())
    }

    /// What the AEAD front does before the kernels: [`check`], then [`j0`].
    fn prepare<'n>(
        alg: &'static str,
        k: &GcmKey,
        rule: Nonces,
        nonce: &'n [u8],
        aad: &[u8],
        len: usize,
    ) -> Result<J0<'n>> {
        check(alg, rule, nonce, aad, len).map(|()| j0(k, nonce))
    }

    /// The SP 800-38D plaintext limit, checked on the length alone (a 64 GiB buffer is not practical in a test).
    #[test]
    fn plaintext_limit_is_exact() {
        let k = soft_key();
        for rule in [Nonces::Standard, Nonces::AnyLength] {
            assert!(prepare("AES-128-GCM", &k, rule, &[0u8; 12], b"", MAX_PLAINTEXT_LEN as usize).is_ok());
            assert_eq!(
                prepare("AES-128-GCM", &k, rule, &[0u8; 12], b"", MAX_PLAINTEXT_LEN as usize + 1).unwrap_err(),
                Error::MessageTooLong { algorithm: "AES-128-GCM", max: (1 << 36) - 32 }
            );
        }
        assert_eq!(MAX_PLAINTEXT_LEN, 68_719_476_704);
    }

    #[test]
    fn j0_for_96_bit_nonces_is_nonce_then_one() {
        let k = soft_key();
        for rule in [Nonces::Standard, Nonces::AnyLength] {
            let j0 = prepare("AES-128-GCM", &k, rule, &[7u8; 12], b"", 0).unwrap().bytes();
            assert_eq!(&j0[..12], &[7u8; 12]);
            assert_eq!(&j0[12..], &[0, 0, 0, 1]);
        }
    }

    #[test]
    fn nonce_rules() {
        let k = soft_key();
        for len in [0usize, 1, 8, 11, 13, 16, 64] {
            assert_eq!(
                prepare("AES-128-GCM", &k, Nonces::Standard, &[7u8; 64][..len], b"", 0).unwrap_err(),
                Error::InvalidLength {
                    algorithm: "AES-128-GCM",
                    field: "nonce",
                    expected: Expected::Exactly(12),
                    actual: len
                }
            );
            let any = prepare("AES-128-GCM", &k, Nonces::AnyLength, &[7u8; 64][..len], b"", 0);
            if len == 0 {
                assert_eq!(
                    any.unwrap_err(),
                    Error::InvalidLength {
                        algorithm: "AES-128-GCM",
                        field: "nonce",
                        expected: Expected::AtLeast(1),
                        actual: 0
                    }
                );
            } else {
                // GHASH-derived: not the 96-bit layout.
                assert_ne!(&any.unwrap().bytes()[12..], &[0, 0, 0, 1]);
            }
        }
    }
}
