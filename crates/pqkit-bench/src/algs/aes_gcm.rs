//! AES-128-GCM and AES-256-GCM, sealing in place with a detached tag.

use super::aead::{awslc_seal, ossl_seal, rc_seal, ring_seal};
use super::{AAD, KEY32, NONCE12, e, ossl, v};
use crate::registry::{Algorithm, Candidate, Op};

/// The family's algorithms.
pub fn algorithms() -> Vec<Algorithm> {
    use aes_gcm::KeyInit;
    let k16: [u8; 16] = KEY32[..16].try_into().unwrap_or([0; 16]);
    #[allow(unused_mut)]
    let mut a128 = Algorithm::bulk("AES-128-GCM", "seal")
        .scaling()
        .with(Candidate::new("openssl", ossl(), move |_| {
            ossl_seal(openssl::cipher::Cipher::aes_128_gcm(), &k16, &NONCE12)
        }))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), move |_| awslc_seal(&aws_lc_rs::aead::AES_128_GCM, &k16)))
        .with(Candidate::new("ring", v("ring"), move |_| ring_seal(&ring::aead::AES_128_GCM, &k16)))
        .with(Candidate::new("rustcrypto", v("aes-gcm"), move |_| {
            Ok(rc_seal(aes_gcm::Aes128Gcm::new(&k16.into()), NONCE12.into()))
        }));
    #[allow(unused_mut)]
    let mut a256 = Algorithm::bulk("AES-256-GCM", "seal")
        .scaling()
        .with(Candidate::new("openssl", ossl(), |_| {
            ossl_seal(openssl::cipher::Cipher::aes_256_gcm(), &KEY32, &NONCE12)
        }))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| awslc_seal(&aws_lc_rs::aead::AES_256_GCM, &KEY32)))
        .with(Candidate::new("ring", v("ring"), |_| ring_seal(&ring::aead::AES_256_GCM, &KEY32)))
        .with(Candidate::new("rustcrypto", v("aes-gcm"), |_| {
            Ok(rc_seal(aes_gcm::Aes256Gcm::new(&KEY32.into()), NONCE12.into()))
        }));
    #[cfg(feature = "pqkit-algs")]
    {
        use super::aead::pqkit_seal;
        use super::e;
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

/// An open operation: on its first call the op seals `data` with the same implementation's seal (which the seal
/// algorithm's agreement check has vetted) and keeps the ciphertext and tag. Every run then copies the ciphertext
/// back into `data` (the harness's aligned buffer) and opens it there in place, so `data` ends as the plaintext;
/// every side pays the same one copy. All sides must therefore output the original plaintext.
fn open_op(
    mut seal: Box<dyn Op>,
    mut open: impl FnMut(&mut [u8], &[u8; 16]) -> Result<(), String> + Send + 'static,
) -> Box<dyn Op> {
    let mut sealed: Vec<u8> = Vec::new();
    let mut tag = [0u8; 16];
    Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        if sealed.len() != data.len() {
            let mut ct = data.to_vec();
            let mut t = Vec::new();
            seal.run(&mut ct, &mut t)?;
            tag = t.as_slice().try_into().map_err(|_| format!("seal gave a {}-byte tag", t.len()))?;
            sealed = ct;
        }
        out.clear();
        data.copy_from_slice(&sealed);
        open(data, &tag)
    })
}

pub(super) fn ring_open(alg: &'static ring::aead::Algorithm, key: &[u8]) -> Result<Box<dyn Op>, String> {
    use ring::aead::{Aad, LessSafeKey, Nonce, Tag, UnboundKey};
    let k = LessSafeKey::new(UnboundKey::new(alg, key).map_err(|_| "ring: bad key".to_string())?);
    Ok(open_op(ring_seal(alg, key)?, move |ct: &mut [u8], tag: &[u8; 16]| {
        k.open_in_place_separate_tag(Nonce::assume_unique_for_key(NONCE12), Aad::from(AAD), Tag::from(*tag), ct, 0..)
            .map_err(|_| "ring: open failed".to_string())?;
        Ok(())
    }))
}

pub(super) fn awslc_open(alg: &'static aws_lc_rs::aead::Algorithm, key: &[u8]) -> Result<Box<dyn Op>, String> {
    use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey};
    let k = LessSafeKey::new(UnboundKey::new(alg, key).map_err(|_| "aws-lc-rs: bad key".to_string())?);
    Ok(open_op(awslc_seal(alg, key)?, move |ct: &mut [u8], tag: &[u8; 16]| {
        k.open_in_place_separate_tag(Nonce::assume_unique_for_key(NONCE12), Aad::from(AAD), tag, ct)
            .map_err(|_| "aws-lc-rs: open failed".to_string())?;
        Ok(())
    }))
}

pub(super) fn ossl_open(cipher: &'static openssl::cipher::CipherRef, key: &[u8]) -> Result<Box<dyn Op>, String> {
    let mut ctx = openssl::cipher_ctx::CipherCtx::new().map_err(e)?;
    ctx.decrypt_init(Some(cipher), Some(key), None).map_err(e)?;
    ctx.set_iv_length(NONCE12.len()).map_err(e)?;
    Ok(open_op(ossl_seal(cipher, key, &NONCE12)?, move |ct: &mut [u8], tag: &[u8; 16]| {
        let n = ct.len();
        ctx.decrypt_init(None, None, Some(&NONCE12)).map_err(e)?;
        ctx.set_tag(tag).map_err(e)?;
        ctx.cipher_update(&AAD, None).map_err(e)?;
        ctx.cipher_update_inplace(ct, n).map_err(e)?;
        ctx.cipher_final(&mut []).map_err(|_| "openssl: open failed".to_string())?;
        Ok(())
    }))
}

pub(super) fn rc_open<A>(cipher: A) -> Box<dyn Op>
where
    A: aes_gcm::aead::AeadInOut + Clone + Send + 'static,
    super::aead::aead_nonce::Nonce<A>: Send + From<[u8; 12]>,
{
    let nonce: super::aead::aead_nonce::Nonce<A> = NONCE12.into();
    open_op(rc_seal(cipher.clone(), nonce.clone()), move |ct: &mut [u8], tag: &[u8; 16]| {
        let tag = aes_gcm::aead::Tag::<A>::try_from(&tag[..]).map_err(|_| "tag length".to_string())?;
        cipher
            .decrypt_inout_detached(&nonce, &AAD, ct.into(), &tag)
            .map_err(|_| "rustcrypto: open failed".to_string())?;
        Ok(())
    })
}

#[cfg(feature = "pqkit-algs")]
pub(super) fn pqkit_open<A: pqkit::aead::Aead + Clone + Send + 'static>(a: A) -> Box<dyn Op> {
    open_op(super::aead::pqkit_seal(a.clone(), &NONCE12), move |ct: &mut [u8], tag: &[u8; 16]| {
        a.open_in_place_detached(&NONCE12, &AAD, ct, tag).map_err(e)
    })
}

/// AES-128-GCM and AES-256-GCM open (verify and decrypt in place).
pub fn open_algorithms() -> Vec<Algorithm> {
    use aes_gcm::KeyInit;
    let k16: [u8; 16] = KEY32[..16].try_into().unwrap_or([0; 16]);
    #[allow(unused_mut)]
    let mut a128 = Algorithm::bulk("AES-128-GCM", "open")
        .with(Candidate::new("openssl", ossl(), move |_| ossl_open(openssl::cipher::Cipher::aes_128_gcm(), &k16)))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), move |_| awslc_open(&aws_lc_rs::aead::AES_128_GCM, &k16)))
        .with(Candidate::new("ring", v("ring"), move |_| ring_open(&ring::aead::AES_128_GCM, &k16)))
        .with(Candidate::new("rustcrypto", v("aes-gcm"), move |_| Ok(rc_open(aes_gcm::Aes128Gcm::new(&k16.into())))));
    #[allow(unused_mut)]
    let mut a256 = Algorithm::bulk("AES-256-GCM", "open")
        .with(Candidate::new("openssl", ossl(), |_| ossl_open(openssl::cipher::Cipher::aes_256_gcm(), &KEY32)))
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
