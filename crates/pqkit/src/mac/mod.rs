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
//!   [`Error::AuthenticationFailed`](crate::Error::AuthenticationFailed).
//! - Truncated tags ([`Hmac::verify_truncated`]) must keep at least half the output and at least 10 bytes
//!   (RFC 2104, section 5).
//! - A prepared key ([`Hmac::new`]) holds the hash states after the padded key blocks, so each MAC costs only
//!   the message's compressions plus two; the states are secret and are wiped on drop.

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
    pub fn new(key: &[u8]) -> Self {
        Self::with_hasher(key, H::new())
    }

    /// Prepares `key` using copies of `fresh` (reset first) as the hash instances, e.g. a hasher built with a
    /// forced backend. Tests use this to run HMAC on every backend.
    #[doc(hidden)]
    pub fn with_hasher(key: &[u8], mut fresh: H) -> Self {
        fresh.reset();
        // The largest block of any pqkit hash is SHA3-224's 144 bytes.
        let mut k = [0u8; 168];
        let bl = H::BLOCK_LEN;
        debug_assert!(bl <= k.len());
        if key.len() > bl {
            let mut h = fresh.clone();
            h.update(key);
            let mut d = h.finalize();
            k[..H::OUTPUT_LEN].copy_from_slice(d.as_ref());
            d.as_mut().zeroize();
        } else {
            k[..key.len()].copy_from_slice(key);
        }
        let mut pad = [0u8; 168];
        for (p, x) in pad[..bl].iter_mut().zip(&k[..bl]) {
            *p = x ^ 0x36;
        }
        let mut inner_start = fresh.clone();
        inner_start.update(&pad[..bl]);
        for (p, x) in pad[..bl].iter_mut().zip(&k[..bl]) {
            *p = x ^ 0x5c;
        }
        let mut outer_start = fresh;
        outer_start.update(&pad[..bl]);
        pad.zeroize();
        k.zeroize();
        let running = inner_start.clone();
        Hmac { inner_start, outer_start, running }
    }

    /// Tag length in bytes (the hash's output length).
    pub const TAG_LEN: usize = H::OUTPUT_LEN;

    /// One-shot MAC of `msg` with this key. Does not touch the incremental computation.
    pub fn mac(&self, msg: &[u8]) -> H::Output {
        let mut inner = self.inner_start.clone();
        inner.update(msg);
        self.outer(inner)
    }

    /// Checks `tag` (full length) over `msg` in constant time.
    pub fn verify_mac(&self, msg: &[u8], tag: &[u8]) -> Result<()> {
        let mut t = self.mac(msg);
        let r = check(t.as_ref(), tag, H::OUTPUT_LEN);
        t.as_mut().zeroize();
        r
    }

    /// Absorbs `data` into the incremental computation.
    pub fn update(&mut self, data: &[u8]) -> &mut Self {
        self.running.update(data);
        self
    }

    /// Returns the tag of everything passed to [`update`](Self::update) and starts over with the same key.
    pub fn finalize_reset(&mut self) -> H::Output {
        let inner = core::mem::replace(&mut self.running, self.inner_start.clone());
        self.outer(inner)
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
        t.as_mut().zeroize();
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

    fn outer(&self, inner: H) -> H::Output {
        let mut ih = inner.finalize();
        let mut outer = self.outer_start.clone();
        outer.update(ih.as_ref());
        ih.as_mut().zeroize();
        outer.finalize()
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
    if crate::ct::eq(expected, tag) { Ok(()) } else { Err(Error::AuthenticationFailed { algorithm: "HMAC" }) }
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
