//! ChaCha20-Poly1305 and XChaCha20-Poly1305, sealing in place with a detached tag (every side keeps its key
//! schedule outside the timed region; the observable output is `ciphertext || tag`).

use super::aead_ops::{awslc_open, awslc_seal, ossl_open, ossl_seal, rc_open, rc_seal, ring_open, ring_seal};
#[cfg(feature = "pqkit-algs")]
use super::aead_ops::{pqkit_open, pqkit_seal};
#[cfg(feature = "pqkit-algs")]
use super::e;
use super::ossl_ffi::Cipher;
use super::{KEY32, NONCE12, NONCE24, ossl, v};
use crate::registry::{Algorithm, Candidate};

/// The family's algorithms.
pub fn algorithms() -> Vec<Algorithm> {
    use chacha20poly1305::KeyInit;
    #[allow(unused_mut)]
    let mut c = Algorithm::bulk("ChaCha20-Poly1305", "seal")
        .scaling()
        .with(Candidate::new("openssl", ossl(), |_| ossl_seal(Cipher::chacha20_poly1305(), &KEY32, &NONCE12)))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| awslc_seal(&aws_lc_rs::aead::CHACHA20_POLY1305, &KEY32)))
        .with(Candidate::new("ring", v("ring"), |_| ring_seal(&ring::aead::CHACHA20_POLY1305, &KEY32)))
        .with(Candidate::new("rustcrypto", v("chacha20poly1305"), |_| {
            Ok(rc_seal(chacha20poly1305::ChaCha20Poly1305::new(&KEY32.into()), NONCE12.into()))
        }));
    #[cfg(feature = "pqkit-algs")]
    {
        c.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), |_| {
                Ok(pqkit_seal(pqkit::aead::ChaCha20Poly1305::new(&KEY32).map_err(e)?, &NONCE12))
            }),
        );
    }
    #[allow(unused_mut)]
    let mut x = Algorithm::bulk("XChaCha20-Poly1305", "seal").scaling().with(Candidate::new(
        "rustcrypto",
        v("chacha20poly1305"),
        |_| Ok(rc_seal(chacha20poly1305::XChaCha20Poly1305::new(&KEY32.into()), NONCE24.into())),
    ));
    #[cfg(feature = "pqkit-algs")]
    {
        x.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), |_| {
                Ok(pqkit_seal(pqkit::aead::XChaCha20Poly1305::new(&KEY32).map_err(e)?, &NONCE24))
            }),
        );
    }
    // ChaCha20-Poly1305 open (verify and decrypt in place), with the same machinery as AES-GCM open.
    #[allow(unused_mut)]
    let mut o = Algorithm::bulk("ChaCha20-Poly1305", "open")
        .with(Candidate::new("openssl", ossl(), |_| ossl_open(Cipher::chacha20_poly1305(), &KEY32)))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| awslc_open(&aws_lc_rs::aead::CHACHA20_POLY1305, &KEY32)))
        .with(Candidate::new("ring", v("ring"), |_| ring_open(&ring::aead::CHACHA20_POLY1305, &KEY32)))
        .with(Candidate::new("rustcrypto", v("chacha20poly1305"), |_| {
            Ok(rc_open(chacha20poly1305::ChaCha20Poly1305::new(&KEY32.into())))
        }));
    #[cfg(feature = "pqkit-algs")]
    o.candidates.insert(
        0,
        Candidate::new("pqkit", super::pqkit_version(), |_| {
            Ok(pqkit_open(pqkit::aead::ChaCha20Poly1305::new(&KEY32).map_err(e)?))
        }),
    );
    #[allow(unused_mut)]
    let mut out = vec![c, o, x];
    // Kusumi512-Poly1305 has no peer implementation; it is measured for the comparison with ChaCha20-Poly1305.
    #[cfg(feature = "pqkit-algs")]
    out.push(Algorithm::bulk("Kusumi512-Poly1305", "seal").scaling().with(Candidate::new(
        "pqkit",
        super::pqkit_version(),
        |_| Ok(pqkit_seal(pqkit::aead::Kusumi512Poly1305::new(&super::arx512::KEY64).map_err(e)?, &NONCE12)),
    )));
    out
}
