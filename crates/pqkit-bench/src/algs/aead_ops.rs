//! The per-implementation AEAD operations shared by the AEAD families (ChaCha20-Poly1305 in `aead`, AES-GCM in
//! `aes_gcm`): seal in place with a detached tag (the observable output is `ciphertext || tag`), and open (verify
//! and decrypt in place). Every side keeps its key schedule outside the timed region. Both families build on this
//! module and neither imports the other.

#[cfg(feature = "pqkit-algs")]
use super::e;
use super::ossl_ffi::{Aead, CipherRef};
use super::{AAD, NONCE12};
use crate::registry::Op;

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
pub fn ossl_seal(cipher: &'static CipherRef, key: &[u8], nonce: &[u8]) -> Result<Box<dyn Op>, String> {
    let mut ctx = Aead::sealer(cipher, key, nonce.len())?;
    let nonce = nonce.to_vec();
    Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        let mut tag = [0u8; 16];
        ctx.seal(&nonce, &AAD, data, &mut tag)?;
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

/// ring open in place.
pub fn ring_open(alg: &'static ring::aead::Algorithm, key: &[u8]) -> Result<Box<dyn Op>, String> {
    use ring::aead::{Aad, LessSafeKey, Nonce, Tag, UnboundKey};
    let k = LessSafeKey::new(UnboundKey::new(alg, key).map_err(|_| "ring: bad key".to_string())?);
    Ok(open_op(ring_seal(alg, key)?, move |ct: &mut [u8], tag: &[u8; 16]| {
        k.open_in_place_separate_tag(Nonce::assume_unique_for_key(NONCE12), Aad::from(AAD), Tag::from(*tag), ct, 0..)
            .map_err(|_| "ring: open failed".to_string())?;
        Ok(())
    }))
}

/// aws-lc-rs open in place.
pub fn awslc_open(alg: &'static aws_lc_rs::aead::Algorithm, key: &[u8]) -> Result<Box<dyn Op>, String> {
    use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey};
    let k = LessSafeKey::new(UnboundKey::new(alg, key).map_err(|_| "aws-lc-rs: bad key".to_string())?);
    Ok(open_op(awslc_seal(alg, key)?, move |ct: &mut [u8], tag: &[u8; 16]| {
        k.open_in_place_separate_tag(Nonce::assume_unique_for_key(NONCE12), Aad::from(AAD), tag, ct)
            .map_err(|_| "aws-lc-rs: open failed".to_string())?;
        Ok(())
    }))
}

/// OpenSSL EVP AEAD open in place: the key is set once; each operation re-initialises the nonce and sets the tag.
pub fn ossl_open(cipher: &'static CipherRef, key: &[u8]) -> Result<Box<dyn Op>, String> {
    let mut ctx = Aead::opener(cipher, key, NONCE12.len())?;
    Ok(open_op(ossl_seal(cipher, key, &NONCE12)?, move |ct: &mut [u8], tag: &[u8; 16]| {
        ctx.open(&NONCE12, &AAD, ct, tag)
    }))
}

/// A RustCrypto `AeadInOut` open in place.
pub fn rc_open<A>(cipher: A) -> Box<dyn Op>
where
    A: aes_gcm::aead::AeadInOut + Clone + Send + 'static,
    aead_nonce::Nonce<A>: Send + From<[u8; 12]>,
{
    let nonce: aead_nonce::Nonce<A> = NONCE12.into();
    open_op(rc_seal(cipher.clone(), nonce.clone()), move |ct: &mut [u8], tag: &[u8; 16]| {
        let tag = aes_gcm::aead::Tag::<A>::try_from(&tag[..]).map_err(|_| "tag length".to_string())?;
        cipher
            .decrypt_inout_detached(&nonce, &AAD, ct.into(), &tag)
            .map_err(|_| "rustcrypto: open failed".to_string())?;
        Ok(())
    })
}

/// pqkit AEAD open in place through the `Aead` trait.
#[cfg(feature = "pqkit-algs")]
pub fn pqkit_open<A: pqkit::aead::Aead + Clone + Send + 'static>(a: A) -> Box<dyn Op> {
    open_op(pqkit_seal(a.clone(), &NONCE12), move |ct: &mut [u8], tag: &[u8; 16]| {
        a.open_in_place_detached(&NONCE12, &AAD, ct, tag).map_err(e)
    })
}
