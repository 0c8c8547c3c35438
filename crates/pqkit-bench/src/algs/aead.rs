//! ChaCha20-Poly1305 and XChaCha20-Poly1305, sealing in place with a detached tag (every side keeps its key
//! schedule outside the timed region; the observable output is `ciphertext || tag`).

use super::{AAD, KEY32, NONCE12, NONCE24, e, ossl, v};
use crate::registry::{Algorithm, Candidate, Op};

/// ring's `LessSafeKey` seal in place.
pub fn ring_seal(alg: &'static ring::aead::Algorithm, key: &[u8]) -> Result<Box<dyn Op>, String> {
    use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey};
    let k = LessSafeKey::new(UnboundKey::new(alg, key).map_err(|_| "ring: bad key".to_string())?);
    Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        let tag = k
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(NONCE12), Aad::from(AAD), data)
            .map_err(|_| "ring: seal failed".to_string())?;
        out.clear();
        out.extend_from_slice(tag.as_ref());
        Ok(())
    }))
}

/// aws-lc-rs's `LessSafeKey` seal in place.
pub fn awslc_seal(alg: &'static aws_lc_rs::aead::Algorithm, key: &[u8]) -> Result<Box<dyn Op>, String> {
    use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey};
    let k = LessSafeKey::new(UnboundKey::new(alg, key).map_err(|_| "aws-lc-rs: bad key".to_string())?);
    Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        let tag = k
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(NONCE12), Aad::from(AAD), data)
            .map_err(|_| "aws-lc-rs: seal failed".to_string())?;
        out.clear();
        out.extend_from_slice(tag.as_ref());
        Ok(())
    }))
}

/// OpenSSL EVP AEAD seal in place: the key is set once; each operation re-initialises only the nonce.
pub fn ossl_seal(cipher: &'static openssl::cipher::CipherRef, key: &[u8], nonce: &[u8]) -> Result<Box<dyn Op>, String> {
    let mut ctx = openssl::cipher_ctx::CipherCtx::new().map_err(e)?;
    ctx.encrypt_init(Some(cipher), Some(key), None).map_err(e)?;
    ctx.set_iv_length(nonce.len()).map_err(e)?;
    let nonce = nonce.to_vec();
    Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        ctx.encrypt_init(None, None, Some(&nonce)).map_err(e)?;
        ctx.cipher_update(&AAD, None).map_err(e)?;
        let n = data.len();
        ctx.cipher_update_inplace(data, n).map_err(e)?;
        ctx.cipher_final(&mut []).map_err(e)?;
        let mut tag = [0u8; 16];
        ctx.tag(&mut tag).map_err(e)?;
        out.clear();
        out.extend_from_slice(&tag);
        Ok(())
    }))
}

/// A RustCrypto `AeadInOut` seal in place.
pub fn rc_seal<A>(cipher: A, nonce: aead_nonce::Nonce<A>) -> Box<dyn Op>
where
    A: chacha20poly1305::aead::AeadInOut + Send + 'static,
    aead_nonce::Nonce<A>: Send,
{
    Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        let tag = cipher.encrypt_inout_detached(&nonce, &AAD, data.into()).map_err(|_| "seal failed".to_string())?;
        out.clear();
        out.extend_from_slice(&tag);
        Ok(())
    })
}

/// Re-export of the RustCrypto nonce type alias.
pub mod aead_nonce {
    pub use chacha20poly1305::aead::Nonce;
}

#[cfg(feature = "pqkit-algs")]
/// pqkit AEAD seal in place through the `Aead` trait.
pub fn pqkit_seal<A: pqkit::aead::Aead + Send + 'static>(a: A, nonce: &'static [u8]) -> Box<dyn Op> {
    Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        let tag = a.seal_in_place_detached(nonce, &AAD, data).map_err(e)?;
        out.clear();
        out.extend_from_slice(&tag);
        Ok(())
    })
}

/// The family's algorithms.
pub fn algorithms() -> Vec<Algorithm> {
    use chacha20poly1305::KeyInit;
    #[allow(unused_mut)]
    let mut c = Algorithm::bulk("ChaCha20-Poly1305", "seal")
        .scaling()
        .with(Candidate::new("openssl", ossl(), |_| {
            ossl_seal(openssl::cipher::Cipher::chacha20_poly1305(), &KEY32, &NONCE12)
        }))
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
        .with(Candidate::new("openssl", ossl(), |_| {
            super::aes_gcm::ossl_open(openssl::cipher::Cipher::chacha20_poly1305(), &KEY32)
        }))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| {
            super::aes_gcm::awslc_open(&aws_lc_rs::aead::CHACHA20_POLY1305, &KEY32)
        }))
        .with(Candidate::new("ring", v("ring"), |_| super::aes_gcm::ring_open(&ring::aead::CHACHA20_POLY1305, &KEY32)))
        .with(Candidate::new("rustcrypto", v("chacha20poly1305"), |_| {
            Ok(super::aes_gcm::rc_open(chacha20poly1305::ChaCha20Poly1305::new(&KEY32.into())))
        }));
    #[cfg(feature = "pqkit-algs")]
    o.candidates.insert(
        0,
        Candidate::new("pqkit", super::pqkit_version(), |_| {
            Ok(super::aes_gcm::pqkit_open(pqkit::aead::ChaCha20Poly1305::new(&KEY32).map_err(e)?))
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
