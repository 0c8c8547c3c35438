//! Key derivation: [`Hkdf`] (RFC 5869) over any [`Hasher`], and [`argon2`] (Argon2id, RFC 9106).
//!
//! ```
//! use pqkit::hash::sha2::Sha256;
//! use pqkit::kdf::Hkdf;
//! let hk = Hkdf::<Sha256>::new(b"salt", b"input keying material");
//! let mut okm = [0u8; 42];
//! hk.expand(b"context", &mut okm).unwrap();
//! ```
//!
//! ## Security contract
//! - `ikm` must hold enough entropy; the salt (optional, may be empty) should be random or a fixed
//!   application constant. Expansion outputs at most `255 * OUTPUT_LEN` bytes; longer requests fail with
//!   [`Error::InvalidLength`] and write nothing.
//! - The pseudorandom key is secret and is wiped on drop (it lives in a prepared [`Hmac`]).

use crate::ct::wipe;
use crate::error::Expected;
use crate::hash::Hasher;
use crate::mac::Hmac;
use crate::{Error, Result};

/// HKDF with hash `H`, holding the pseudorandom key (PRK) prepared for expansion.
#[derive(Clone)]
pub struct Hkdf<H: Hasher> {
    prk: Hmac<H>,
}

/// HKDF-Extract: `PRK = HMAC(salt, ikm)`. An empty salt means `OUTPUT_LEN` zero bytes, as RFC 5869 says
/// (HMAC pads keys with zeros, so both give the same PRK).
pub fn extract<H: Hasher>(salt: &[u8], ikm: &[u8]) -> H::Output {
    Hmac::<H>::new(salt).mac(ikm)
}

impl<H: Hasher> Hkdf<H> {
    /// Extract, then prepare the PRK for expansion.
    pub fn new(salt: &[u8], ikm: &[u8]) -> Self {
        let mut prk = extract::<H>(salt, ikm);
        let h = Hkdf { prk: Hmac::new(prk.as_ref()) };
        wipe(prk.as_mut());
        h
    }

    /// Skips extraction: uses `prk` (at least `OUTPUT_LEN` bytes) as the pseudorandom key.
    pub fn from_prk(prk: &[u8]) -> Result<Self> {
        if prk.len() < H::OUTPUT_LEN {
            return Err(Error::InvalidLength {
                algorithm: "HKDF",
                field: "PRK",
                expected: Expected::AtLeast(H::OUTPUT_LEN),
                actual: prk.len(),
            });
        }
        Ok(Hkdf { prk: Hmac::new(prk) })
    }

    /// The largest output [`expand`](Self::expand) gives: `255 * OUTPUT_LEN` bytes.
    pub const MAX_OUTPUT_LEN: usize = 255 * H::OUTPUT_LEN;

    /// HKDF-Expand: fills `okm` with `T(1) || T(2) || ...` for context `info`.
    pub fn expand(&self, info: &[u8], okm: &mut [u8]) -> Result<()> {
        if okm.len() > Self::MAX_OUTPUT_LEN {
            return Err(Error::InvalidLength {
                algorithm: "HKDF",
                field: "output",
                expected: Expected::AtMost(Self::MAX_OUTPUT_LEN),
                actual: okm.len(),
            });
        }
        // The PRK's HMAC states are prepared once (in `new`); each `T(i)` starts from a copy of the inner
        // state and ends with the hash's fast outer step.
        let mut prev: Option<H::Output> = None;
        for (i, chunk) in okm.chunks_mut(H::OUTPUT_LEN).enumerate() {
            let mut m = self.prk.inner();
            if let Some(p) = prev.as_ref() {
                m.update(p.as_ref());
            }
            m.update(info);
            m.update(&[(i + 1) as u8]);
            let t = self.prk.finish_inner(&mut m);
            chunk.copy_from_slice(&t.as_ref()[..chunk.len()]);
            if let Some(p) = prev.as_mut() {
                wipe(p.as_mut());
            }
            prev = Some(t);
        }
        if let Some(p) = prev.as_mut() {
            wipe(p.as_mut());
        }
        Ok(())
    }

    /// Extract-and-expand in one call.
    pub fn derive(salt: &[u8], ikm: &[u8], info: &[u8], okm: &mut [u8]) -> Result<()> {
        Self::new(salt, ikm).expand(info, okm)
    }
}

impl<H: Hasher> core::fmt::Debug for Hkdf<H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Hkdf<{}> {{ .. }}", H::NAME)
    }
}

#[cfg(feature = "alloc")]
pub mod argon2;
#[cfg(feature = "alloc")]
pub use argon2::Argon2id;
