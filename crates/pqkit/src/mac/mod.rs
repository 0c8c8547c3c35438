//! Message authentication codes: [`Hmac`] (RFC 2104, FIPS 198-1) over any [`Hasher`].
//!
//! ```
//! use pqkit::hash::sha2::Sha256;
//! use pqkit::mac::Hmac;
//! let key = Hmac::<Sha256>::new(b"key");
//! let tag = key.mac(b"message");
//! assert!(key.verify_mac(b"message", &tag).is_ok());
//! ```
//!
//! ## Security contract
//! - Keys of any length are accepted; keys longer than the hash's block are hashed first (RFC 2104). Use keys
//!   of at least the hash's output length drawn from a good random source.
//! - Tags are compared in constant time ([`crate::ct::eq`]); a mismatch is
//!   [`Error::AuthenticationFailed`].
//! - Truncated tags ([`Hmac::verify_truncated`]) must keep at least half the output and at least 10 bytes
//!   (RFC 2104, section 5).
//! - A prepared key ([`Hmac::new`]) holds the hash states after the padded key blocks, so each MAC costs only
//!   the message's compressions plus two; the states are secret and are wiped on drop.

use crate::ct::wipe;
use crate::error::Expected;
use crate::hash::Hasher;
use crate::{Error, Result};
use zeroize::Zeroize;

/// HMAC with hash `H`: a prepared key, plus a running computation for the incremental interface.
#[derive(Clone)]
pub struct Hmac<H: Hasher> {
    /// State after absorbing `K ^ ipad`.
    inner_start: H,
    /// State after absorbing `K ^ opad`.
    outer_start: H,
    /// The incremental computation in progress (starts as `inner_start`).
    running: H,
}

impl<H: Hasher> Hmac<H> {
    /// Prepares `key` (any length).
    #[inline]
    pub fn new(key: &[u8]) -> Self {
        Self::with_hasher(key, H::new())
    }

    /// Prepares `key` using copies of `fresh` (reset first) as the hash instances, e.g. a hasher built with a
    /// forced, checked backend (`Sha256::with_backend(sha2::Backend::ShaNi.checked()?)`). Tests use this to run
    /// HMAC on every backend of `Backend::available()`.
    #[doc(hidden)]
    pub fn with_hasher(key: &[u8], mut fresh: H) -> Self {
        fresh.reset();
        let bl = H::BLOCK_LEN;
        // Keys longer than a block are replaced by their hash; shorter ones are zero-padded to the block.
        let mut hashed = (key.len() > bl).then(|| {
            let mut h = fresh.clone();
            h.update(key);
            h.finalize()
        });
        let k: &[u8] = match &hashed {
            Some(d) => d.as_ref(),
            None => key,
        };
        // Absorb `K ^ ipad` and `K ^ opad` in 64-byte pieces (any block length works, nothing is sized by the
        // hash); the key bytes are XORed in slice-wise, the pieces wiped once at the end.
        let mut inner_start = fresh.clone();
        let mut outer_start = fresh;
        let mut ipiece = [0u8; 64];
        let mut opiece = [0u8; 64];
        let mut start = 0;
        while start < bl {
            let n = (bl - start).min(64);
            ipiece[..n].fill(0x36);
            opiece[..n].fill(0x5c);
            let kpart = k.get(start..k.len().min(start + n)).unwrap_or(&[]);
            for ((i, o), &kb) in ipiece.iter_mut().zip(opiece.iter_mut()).zip(kpart) {
                *i ^= kb;
                *o ^= kb;
            }
            inner_start.update(&ipiece[..n]);
            outer_start.update(&opiece[..n]);
            start += n;
        }
        wipe(&mut ipiece);
        wipe(&mut opiece);
        if let Some(d) = hashed.as_mut() {
            d.as_mut().zeroize();
        }
        let running = inner_start.clone();
        Hmac { inner_start, outer_start, running }
    }

    /// Tag length in bytes (the hash's output length).
    pub const TAG_LEN: usize = H::OUTPUT_LEN;

    /// One-shot MAC of `msg` with this key. Does not touch the incremental computation.
    #[inline]
    pub fn mac(&self, msg: &[u8]) -> H::Output {
        H::hmac_mac(&self.inner_start, &self.outer_start, msg)
    }

    /// A copy of the prepared inner state (`K ^ ipad` absorbed), for callers that feed the message in
    /// pieces without touching the incremental computation (HKDF's `T(i)` blocks).
    #[inline]
    pub(crate) fn inner(&self) -> H {
        self.inner_start.clone()
    }

    /// Finishes a computation started from [`inner`](Self::inner): the tag; `inner` is left wiped.
    #[inline]
    pub(crate) fn finish_inner(&self, inner: &mut H) -> H::Output {
        H::hmac_outer(&self.outer_start, inner)
    }

    /// Checks `tag` (full length) over `msg` in constant time.
    pub fn verify_mac(&self, msg: &[u8], tag: &[u8]) -> Result<()> {
        let mut t = self.mac(msg);
        let r = check(t.as_ref(), tag, H::OUTPUT_LEN);
        wipe(t.as_mut());
        r
    }

    /// Absorbs `data` into the incremental computation.
    pub fn update(&mut self, data: &[u8]) -> &mut Self {
        self.running.update(data);
        self
    }

    /// Forgets everything passed to [`update`](Self::update) and starts over with the same key.
    pub fn reset(&mut self) {
        self.running = self.inner_start.clone();
    }

    /// Returns the tag of everything passed to [`update`](Self::update) and starts over with the same key.
    pub fn finalize_reset(&mut self) -> H::Output {
        let tag = H::hmac_outer(&self.outer_start, &mut self.running);
        self.running = self.inner_start.clone();
        tag
    }

    /// Returns the tag of everything passed to [`update`](Self::update).
    pub fn finalize(mut self) -> H::Output {
        self.finalize_reset()
    }

    /// Checks a full-length `tag` over everything passed to [`update`](Self::update), in constant time,
    /// and starts over with the same key.
    pub fn verify(&mut self, tag: &[u8]) -> Result<()> {
        let mut t = self.finalize_reset();
        let r = check(t.as_ref(), tag, H::OUTPUT_LEN);
        wipe(t.as_mut());
        r
    }

    /// Checks a tag truncated to its first `tag.len()` bytes, in constant time, and starts over with the same
    /// key. `tag.len()` must be at least `max(OUTPUT_LEN / 2, 10)` and at most `OUTPUT_LEN`.
    pub fn verify_truncated(&mut self, tag: &[u8]) -> Result<()> {
        let min = (H::OUTPUT_LEN / 2).max(10);
        if tag.len() < min || tag.len() > H::OUTPUT_LEN {
            return Err(Error::InvalidParameter {
                algorithm: "HMAC",
                reason: "truncated tag must keep at least half the output and 10 bytes, and not exceed it",
            });
        }
        let mut t = self.finalize_reset();
        let r = check(&t.as_ref()[..tag.len()], tag, tag.len());
        t.as_mut().zeroize();
        r
    }
}

fn check(expected: &[u8], tag: &[u8], len: usize) -> Result<()> {
    if tag.len() != len {
        return Err(Error::InvalidLength {
            algorithm: "HMAC",
            field: "tag",
            expected: Expected::Exactly(len),
            actual: tag.len(),
        });
    }
    // The outcome is returned: public.
    if crate::ct::declassify(crate::ct::eq(expected, tag)) {
        Ok(())
    } else {
        Err(Error::AuthenticationFailed { algorithm: "HMAC" })
    }
}

impl<H: Hasher> Drop for Hmac<H> {
    fn drop(&mut self) {
        self.inner_start.zeroize();
        self.outer_start.zeroize();
        self.running.zeroize();
    }
}

impl<H: Hasher> zeroize::ZeroizeOnDrop for Hmac<H> {}

impl<H: Hasher> core::fmt::Debug for Hmac<H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Hmac<{}> {{ .. }}", H::NAME)
    }
}

#[cfg(feature = "std")]
impl<H: Hasher> std::io::Write for Hmac<H> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.running.update(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
