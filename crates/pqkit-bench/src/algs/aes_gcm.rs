//! AES-128-GCM and AES-256-GCM, sealing in place with a detached tag.

use super::aead_ops::{awslc_open, awslc_seal, ossl_open, ossl_seal, rc_open, rc_seal, ring_open, ring_seal};
#[cfg(feature = "pqkit-algs")]
use super::aead_ops::{pqkit_open, pqkit_seal};
#[cfg(feature = "pqkit-algs")]
use super::e;
use super::ossl_ffi::Cipher;
use super::{KEY32, NONCE12, ossl, v};
use crate::registry::{Algorithm, Candidate};

/// The family's algorithms.
pub fn algorithms() -> Vec<Algorithm> {
    use aes_gcm::KeyInit;
    let k16: [u8; 16] = KEY32[..16].try_into().unwrap_or([0; 16]);
    #[allow(unused_mut)]
    let mut a128 = Algorithm::bulk("AES-128-GCM", "seal")
        .scaling()
        .with(Candidate::new("openssl", ossl(), move |_| ossl_seal(Cipher::aes_128_gcm(), &k16, &NONCE12)))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), move |_| awslc_seal(&aws_lc_rs::aead::AES_128_GCM, &k16)))
        .with(Candidate::new("ring", v("ring"), move |_| ring_seal(&ring::aead::AES_128_GCM, &k16)))
        .with(Candidate::new("rustcrypto", v("aes-gcm"), move |_| {
            Ok(rc_seal(aes_gcm::Aes128Gcm::new(&k16.into()), NONCE12.into()))
        }));
    #[allow(unused_mut)]
    let mut a256 = Algorithm::bulk("AES-256-GCM", "seal")
        .scaling()
        .with(Candidate::new("openssl", ossl(), |_| ossl_seal(Cipher::aes_256_gcm(), &KEY32, &NONCE12)))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| awslc_seal(&aws_lc_rs::aead::AES_256_GCM, &KEY32)))
        .with(Candidate::new("ring", v("ring"), |_| ring_seal(&ring::aead::AES_256_GCM, &KEY32)))
        .with(Candidate::new("rustcrypto", v("aes-gcm"), |_| {
            Ok(rc_seal(aes_gcm::Aes256Gcm::new(&KEY32.into()), NONCE12.into()))
        }));
    #[cfg(feature = "pqkit-algs")]
    {
        a128.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), move |_| {
                Ok(pqkit_seal(pqkit::aead::Aes128Gcm::new(&k16).map_err(e)?, &NONCE12))
            }),
        );
        a256.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), |_| {
                Ok(pqkit_seal(pqkit::aead::Aes256Gcm::new(&KEY32).map_err(e)?, &NONCE12))
            }),
        );
    }
    vec![a128, a256]
}

/// AES-128-GCM and AES-256-GCM open (verify and decrypt in place).
pub fn open_algorithms() -> Vec<Algorithm> {
    use aes_gcm::KeyInit;
    let k16: [u8; 16] = KEY32[..16].try_into().unwrap_or([0; 16]);
    #[allow(unused_mut)]
    let mut a128 = Algorithm::bulk("AES-128-GCM", "open")
        .with(Candidate::new("openssl", ossl(), move |_| ossl_open(Cipher::aes_128_gcm(), &k16)))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), move |_| awslc_open(&aws_lc_rs::aead::AES_128_GCM, &k16)))
        .with(Candidate::new("ring", v("ring"), move |_| ring_open(&ring::aead::AES_128_GCM, &k16)))
        .with(Candidate::new("rustcrypto", v("aes-gcm"), move |_| Ok(rc_open(aes_gcm::Aes128Gcm::new(&k16.into())))));
    #[allow(unused_mut)]
    let mut a256 = Algorithm::bulk("AES-256-GCM", "open")
        .with(Candidate::new("openssl", ossl(), |_| ossl_open(Cipher::aes_256_gcm(), &KEY32)))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| awslc_open(&aws_lc_rs::aead::AES_256_GCM, &KEY32)))
        .with(Candidate::new("ring", v("ring"), |_| ring_open(&ring::aead::AES_256_GCM, &KEY32)))
        .with(Candidate::new("rustcrypto", v("aes-gcm"), |_| Ok(rc_open(aes_gcm::Aes256Gcm::new(&KEY32.into())))));
    #[cfg(feature = "pqkit-algs")]
    {
        a128.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), move |_| {
                Ok(pqkit_open(pqkit::aead::Aes128Gcm::new(&k16).map_err(e)?))
            }),
        );
        a256.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), |_| {
                Ok(pqkit_open(pqkit::aead::Aes256Gcm::new(&KEY32).map_err(e)?))
            }),
        );
    }
    vec![a128, a256]
}
