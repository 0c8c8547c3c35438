//! ChaCha20 and XChaCha20 keystreams, the ChaCha20 RNG, and Poly1305.
//!
//! Peers are wrapped in pqkit's own `StreamCipher` trait so that every mode (in-place, one-shot, streaming)
//! goes through the same code path for every implementation.

#[cfg(feature = "pqkit-algs")]
use super::e;
use super::{KEY32, NONCE12, NONCE24, in_place, ossl, v};
use crate::registry::{Algorithm, Candidate, Op, Report};
use chacha20::cipher::{KeyIvInit, StreamCipherSeek};
use pqkit::cipher::StreamCipher;

/// Sizes of the ChaCha20 keystream: the bulk sizes plus the 2-8 KiB steps of report (c).
pub const CHACHA_SIZES: [usize; 8] = [64, 1024, 2048, 4096, 8192, 16384, 1 << 20, 10 << 20];
/// Sizes of report (c).
pub const RNG_SIZES: [usize; 5] = [1024, 2048, 4096, 8192, 16384];

/// RustCrypto's `chacha20` behind pqkit's `StreamCipher` trait.
pub struct RcStream<C>(pub C);

impl<C: chacha20::cipher::StreamCipher + StreamCipherSeek> StreamCipher for RcStream<C> {
    fn apply_keystream(&mut self, data: &mut [u8]) -> pqkit::Result<()> {
        self.0
            .try_apply_keystream(data)
            .map_err(|_| pqkit::Error::CounterExhausted { algorithm: "ChaCha20 (rustcrypto)" })
    }
    fn seek(&mut self, position: u64) -> pqkit::Result<()> {
        self.0
            .try_seek(position)
            .map_err(|_| pqkit::Error::MessageTooLong { algorithm: "ChaCha20 (rustcrypto)", max: 0 })
    }
    fn position(&self) -> u64 {
        self.0.current_pos()
    }
}

/// RustCrypto ChaCha20 (IETF, 12-byte nonce, counter from 0).
pub fn rc_chacha20() -> RcStream<chacha20::ChaCha20> {
    RcStream(chacha20::ChaCha20::new(&KEY32.into(), &NONCE12.into()))
}

/// OpenSSL's EVP cipher context behind pqkit's `StreamCipher` trait (in-place `EVP_CipherUpdate`).
pub struct OsslStream {
    ctx: super::ossl_ffi::Stream,
    pos: u64,
}

impl StreamCipher for OsslStream {
    fn apply_keystream(&mut self, data: &mut [u8]) -> pqkit::Result<()> {
        let n = data.len();
        self.ctx
            .apply(data)
            .map_err(|_| pqkit::Error::InvalidParameter { algorithm: "ChaCha20 (openssl)", reason: "update failed" })?;
        self.pos += n as u64;
        Ok(())
    }
    fn seek(&mut self, _position: u64) -> pqkit::Result<()> {
        Err(pqkit::Error::InvalidParameter { algorithm: "ChaCha20 (openssl)", reason: "seek is not supported" })
    }
    fn position(&self) -> u64 {
        self.pos
    }
}

/// OpenSSL ChaCha20: its 16-byte IV is the 32-bit little-endian block counter followed by the 12-byte nonce.
pub fn ossl_chacha20() -> Result<OsslStream, String> {
    let mut iv = [0u8; 16];
    iv[4..].copy_from_slice(&NONCE12);
    let ctx = super::ossl_ffi::Stream::new(super::ossl_ffi::Cipher::chacha20(), &KEY32, &iv)?;
    Ok(OsslStream { ctx, pos: 0 })
}

#[cfg(feature = "pqkit-algs")]
mod pqkit_adapters {
    use super::super::{KEY32, NONCE12, NONCE24, e};
    /// pqkit ChaCha20 with the benchmark key and nonce.
    pub fn chacha20() -> Result<pqkit::chacha::ChaCha20, String> {
        pqkit::chacha::ChaCha20::new(&KEY32, &NONCE12).map_err(e)
    }
    /// pqkit XChaCha20.
    pub fn xchacha20() -> Result<pqkit::chacha::XChaCha20, String> {
        pqkit::chacha::XChaCha20::new(&KEY32, &NONCE24).map_err(e)
    }
}
#[cfg(feature = "pqkit-algs")]
pub use pqkit_adapters::{chacha20 as pqkit_chacha20, xchacha20 as pqkit_xchacha20};

/// The fixed 8-byte nonce of the legacy ChaCha20 layout.
pub const NONCE8: [u8; 8] = *b"nonce-8b";

/// The fixed RNG seed.
pub const SEED: [u8; 32] = KEY32;

fn rng_op<R: rand_core::Rng + Send + 'static>(mut r: R) -> Box<dyn Op> {
    Box::new(move |data: &mut [u8], _out: &mut Vec<u8>| {
        r.fill_bytes(data);
        Ok(())
    })
}

/// The family's algorithms.
pub fn algorithms() -> Vec<Algorithm> {
    #[allow(unused_mut)]
    let mut chacha = Algorithm::bulk("ChaCha20", "apply_keystream")
        .sizes(&CHACHA_SIZES)
        .reports(&[Report::A, Report::C])
        .with(Candidate::new("openssl", ossl(), |_| Ok(in_place(ossl_chacha20()?))))
        .with(Candidate::new("rustcrypto", v("chacha20"), |_| Ok(in_place(rc_chacha20()))));
    #[cfg(feature = "pqkit-algs")]
    {
        chacha
            .candidates
            .insert(0, Candidate::new("pqkit", super::pqkit_version(), |_| Ok(in_place(pqkit_chacha20()?))));
    }

    #[allow(unused_mut)]
    let mut xchacha =
        Algorithm::bulk("XChaCha20", "apply_keystream").with(Candidate::new("rustcrypto", v("chacha20"), |_| {
            Ok(in_place(RcStream(chacha20::XChaCha20::new(&KEY32.into(), &NONCE24.into()))))
        }));
    #[cfg(feature = "pqkit-algs")]
    {
        xchacha
            .candidates
            .insert(0, Candidate::new("pqkit", super::pqkit_version(), |_| Ok(in_place(pqkit_xchacha20()?))));
    }

    // The original (Bernstein) layout: 64-bit nonce, 64-bit counter. Secondary sizes.
    #[allow(unused_mut)]
    let mut legacy = Algorithm::bulk("ChaCha20-legacy", "apply_keystream").sizes(&super::hash::SECONDARY_SIZES).with(
        Candidate::new("rustcrypto", v("chacha20"), |_| {
            Ok(in_place(RcStream(chacha20::ChaCha20Legacy::new(&KEY32.into(), &NONCE8.into()))))
        }),
    );
    #[cfg(feature = "pqkit-algs")]
    legacy.candidates.insert(
        0,
        Candidate::new("pqkit", super::pqkit_version(), |_| {
            Ok(in_place(pqkit::chacha::ChaCha20Legacy::new(&KEY32, &NONCE8).map_err(e)?))
        }),
    );

    // The reduced-round RNGs, secondary sizes.
    #[allow(unused_mut)]
    let mut rng12 = Algorithm::bulk("ChaCha12Rng", "fill_bytes").sizes(&[1024, 16384]).with(Candidate::new(
        "rustcrypto",
        v("chacha20"),
        |_| Ok(rng_op(<chacha20::ChaCha12Rng as rand_core::SeedableRng>::from_seed(SEED))),
    ));
    #[allow(unused_mut)]
    let mut rng8 = Algorithm::bulk("ChaCha8Rng", "fill_bytes").sizes(&[1024, 16384]).with(Candidate::new(
        "rustcrypto",
        v("chacha20"),
        |_| Ok(rng_op(<chacha20::ChaCha8Rng as rand_core::SeedableRng>::from_seed(SEED))),
    ));
    #[cfg(feature = "pqkit-algs")]
    {
        rng12.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), |_| {
                Ok(rng_op(<pqkit::rng::ChaCha12Rng as rand_core::SeedableRng>::from_seed(SEED)))
            }),
        );
        rng8.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), |_| {
                Ok(rng_op(<pqkit::rng::ChaCha8Rng as rand_core::SeedableRng>::from_seed(SEED)))
            }),
        );
    }

    #[allow(unused_mut)]
    let mut rng = Algorithm::bulk("ChaCha20Rng", "fill_bytes").sizes(&RNG_SIZES).reports(&[Report::C]).with(
        Candidate::new("rustcrypto", v("chacha20"), |_| {
            Ok(rng_op(<chacha20::ChaCha20Rng as rand_core::SeedableRng>::from_seed(SEED)))
        }),
    );
    #[cfg(feature = "pqkit-algs")]
    {
        rng.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), |_| {
                Ok(rng_op(<pqkit::rng::ChaCha20Rng as rand_core::SeedableRng>::from_seed(SEED)))
            }),
        );
    }

    #[allow(unused_mut)]
    let mut poly = Algorithm::bulk("Poly1305", "mac")
        .with(Candidate::new("openssl", ossl(), |_| {
            // One `EVP_MAC_CTX` for all operations (created outside timing); each operation sets its one-time key
            // with `EVP_MAC_init`, like the other sides' per-message key setup.
            let mut m = super::ossl_ffi::Mac::new(c"POLY1305", &[])?;
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                m.init(Some(&KEY32))?;
                m.update(data)?;
                let mut tag = [0u8; 16];
                let n = m.finalize(&mut tag)?;
                out.clear();
                out.extend_from_slice(&tag[..n]);
                Ok(())
            }) as Box<dyn Op>)
        }))
        .with(Candidate::new("rustcrypto", v("poly1305"), |_| {
            use poly1305::universal_hash::KeyInit;
            Ok(Box::new(|data: &mut [u8], out: &mut Vec<u8>| {
                // The one-time key is part of every call for both sides (Poly1305 keys are single-use).
                let tag = poly1305::Poly1305::new(&KEY32.into()).compute_unpadded(data);
                out.clear();
                out.extend_from_slice(&tag);
                Ok(())
            }) as Box<dyn Op>)
        }));
    #[cfg(feature = "pqkit-algs")]
    {
        poly.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), |_| {
                Ok(Box::new(|data: &mut [u8], out: &mut Vec<u8>| {
                    let tag = pqkit::poly1305::poly1305(&KEY32, data);
                    out.clear();
                    out.extend_from_slice(&tag);
                    Ok(())
                }) as Box<dyn Op>)
            }),
        );
    }
    vec![chacha, xchacha, legacy, rng, rng12, rng8, poly]
}
