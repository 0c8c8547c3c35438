//! Hash functions: SHA-2 ([`sha2`]), SHA-3 and SHAKE ([`sha3`]), BLAKE2 ([`blake2`]), Skein-512 ([`skein`]).
//!
//! Every fixed-output hash implements [`Hasher`] and has the same inherent API:
//! `new()`, `update(&mut self, data) -> &mut Self`, `finalize(self) -> [u8; N]`, `reset()`, and the one-shot
//! `digest(data) -> [u8; N]`. With `std`, hashers implement `std::io::Write`, so `std::io::copy` can feed them.
//!
//! Each family declares its backends in the one dispatch mechanism ([`crate::dispatch`]) and picks one once
//! (its `Backend::detect()`); all backends give identical results. A backend forced by name (the hidden
//! `with_backend` hooks, for tests and benchmarks) must be a checked one (`Backend::X.checked()?`), so a backend
//! this CPU cannot run is an error, never a fallback.

/// A fixed-output hash function with an incremental interface. Generic code (HMAC, HKDF) uses this.
pub trait Hasher: Clone + zeroize::Zeroize {
    /// The algorithm's name, e.g. `"SHA-256"`.
    const NAME: &'static str;
    /// Digest length in bytes.
    const OUTPUT_LEN: usize;
    /// Input block length in bytes (the HMAC block size).
    const BLOCK_LEN: usize;
    /// The digest: `[u8; OUTPUT_LEN]`.
    type Output: AsRef<[u8]> + AsMut<[u8]> + Copy + core::fmt::Debug + PartialEq + Eq;

    /// A fresh hasher.
    fn new() -> Self;
    /// Absorbs `data`.
    fn update(&mut self, data: &[u8]);
    /// Returns the digest of everything absorbed.
    fn finalize(self) -> Self::Output;
    /// Returns to the fresh state.
    fn reset(&mut self);

    /// One-shot digest of `data`.
    fn digest(data: &[u8]) -> Self::Output {
        let mut h = Self::new();
        h.update(data);
        h.finalize()
    }

    /// HMAC's outer step: the digest of `inner`, absorbed into a copy of the prepared outer state `outer`, and
    /// finalized; `inner` is left wiped. Hashes may override it with a faster equivalent (SHA-2 builds the
    /// single padded block directly); the result must equal this default. Intermediate digests are wiped.
    #[doc(hidden)]
    #[inline]
    fn hmac_outer(outer: &Self, inner: &mut Self) -> Self::Output {
        let mut ih = inner.clone().finalize();
        inner.zeroize();
        let mut o = outer.clone();
        o.update(ih.as_ref());
        zeroize::Zeroize::zeroize(ih.as_mut());
        o.finalize()
    }

    /// HMAC of `msg` from the prepared states `inner` (`K ^ ipad` absorbed) and `outer` (`K ^ opad` absorbed).
    /// Hashes may override it with a faster equivalent (SHA-2 runs the inner hash as a one-shot from the prepared
    /// state); the result must equal this default. Intermediate digests are wiped.
    #[doc(hidden)]
    #[inline]
    fn hmac_mac(inner: &Self, outer: &Self, msg: &[u8]) -> Self::Output {
        let mut i = inner.clone();
        i.update(msg);
        Self::hmac_outer(outer, &mut i)
    }

    /// Writes the digest into `out`, which must be exactly [`OUTPUT_LEN`](Self::OUTPUT_LEN) bytes.
    fn finalize_into(self, out: &mut [u8]) -> crate::Result<()> {
        crate::Error::check_length(Self::NAME, "output", Self::OUTPUT_LEN, out.len())?;
        out.copy_from_slice(self.finalize().as_ref());
        Ok(())
    }
}

/// `std::io::Write` for a hasher: every write is absorbed whole.
macro_rules! impl_write {
    ($name:ident) => {
        #[cfg(feature = "std")]
        impl std::io::Write for $name {
            fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
                <$name as $crate::hash::Hasher>::update(self, data);
                Ok(data.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
    };
}
use impl_write;

pub mod blake2;
pub mod sha2;
pub mod sha3;
pub mod skein;
