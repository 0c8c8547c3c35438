//! RSA (RFC 8017) on the key handles of `keys.rs`: key generation, RSASSA-PSS and RSASSA-PKCS1-v1_5
//! signatures, RSAES-OAEP encryption. Keys are read and written with `pqkit_private_key_import` / `_export`
//! (PKCS#8, PKCS#1, SubjectPublicKeyInfo; DER or PEM).

use crate::{Fail, FfiResult, PqkitPrivateKey, PqkitPublicKey, PqkitStatus, emit, guard, handle_ref, input};
use pqkit::rsa::{self, HashAlg, RsaPrivateKey};

/// RSA signature paddings (pass them as `uint32_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitRsaPadding {
    /// RSASSA-PSS: MGF1 with the signature's hash, a random salt as long as the hash when signing; any salt
    /// length is accepted when verifying (as OpenSSL's `auto`).
    Pss = 1,
    /// RSASSA-PKCS1-v1_5 (deterministic).
    Pkcs1v15 = 2,
}

/// Hashes for RSA (pass them as `uint32_t`). The SHA-2 ids equal those of `PqkitHashAlg`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitRsaHash {
    /// SHA-224.
    Sha224 = 1,
    /// SHA-256: the usual choice.
    Sha256 = 2,
    /// SHA-384.
    Sha384 = 3,
    /// SHA-512.
    Sha512 = 4,
    /// SHA-512/224.
    Sha512_224 = 5,
    /// SHA-512/256.
    Sha512_256 = 6,
    /// SHA-1: OAEP only (OpenSSL's default OAEP hash); refused for signatures.
    Sha1 = 100,
}

fn hash(id: u32) -> FfiResult<HashAlg> {
    Ok(match id {
        1 => HashAlg::Sha224,
        2 => HashAlg::Sha256,
        3 => HashAlg::Sha384,
        4 => HashAlg::Sha512,
        5 => HashAlg::Sha512_224,
        6 => HashAlg::Sha512_256,
        100 => HashAlg::Sha1,
        other => return Err(crate::unknown_alg("RSA hash", other)),
    })
}

fn signing_hash(id: u32) -> FfiResult<HashAlg> {
    match hash(id)? {
        HashAlg::Sha1 => Err(Fail::new(PqkitStatus::InvalidParameter, "pqkit RSA: SHA-1 is refused for signatures")),
        h => Ok(h),
    }
}

/// Generates an RSA key of `bits` bits (2048, 3072 or 4096; e = 65537; FIPS 186-5 probable primes) from the
/// operating system's randomness and writes its handle to `*out`. Takes from tens of milliseconds (2048) to
/// seconds (4096).
///
/// # Safety
/// `out` must be valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_private_key_generate_rsa(bits: u32, out: *mut *mut PqkitPrivateKey) -> PqkitStatus {
    guard(|| {
        crate::check_out(out, "handle out-pointer")?;
        let mut rng = pqkit::rng::ChaCha20Rng::from_os_rng()?;
        let key = RsaPrivateKey::generate(bits as usize, &mut rng)?;
        // SAFETY: out is valid for a pointer write (caller's contract).
        unsafe { crate::new_handle(out, PqkitPrivateKey::from_rsa(key)) }
    })
}

/// Signs `msg` with the RSA key `key` under `padding` ([`PqkitRsaPadding`]) and `hash_id` ([`PqkitRsaHash`]:
/// SHA-256, SHA-384 or SHA-512 for PSS; any SHA-2 for PKCS#1 v1.5; never SHA-1) and writes the signature (the modulus length) to `sig`, its length to `*sig_len`
/// (`PQKIT_STATUS_BUFFER_TOO_SMALL` with the size needed if `sig_cap` is too small). A non-RSA key is
/// `PQKIT_STATUS_INVALID_PARAMETER`.
///
/// # Safety
/// `key` a live handle; `msg` readable for `msg_len`; `sig` writable for `sig_cap`; `sig_len` valid for a write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_rsa_sign(
    key: *const PqkitPrivateKey,
    padding: u32,
    hash_id: u32,
    msg: *const u8,
    msg_len: usize,
    sig: *mut u8,
    sig_cap: usize,
    sig_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and msg.
        let (key, msg) = unsafe { (handle_ref(key)?, input(msg, msg_len, "message")?) };
        crate::check_out(sig_len, "sig_len")?;
        let key = key.rsa()?;
        let h = signing_hash(hash_id)?;
        let digest = h.digest(msg);
        let s = match padding {
            1 => {
                let mut rng = pqkit::rng::ChaCha20Rng::from_os_rng()?;
                rsa::pss::sign_prehashed_with_rng(key, h, h.output_len(), &digest, &mut rng)?
            }
            2 => rsa::pkcs1v15::sign_prehashed(key, h, &digest)?,
            other => return Err(crate::unknown_alg("RSA padding", other)),
        };
        // SAFETY: the caller guarantees sig and sig_len.
        unsafe { emit(&s, sig, sig_cap, sig_len, "RSA signature output") }
    })
}

/// Verifies the RSA signature `sig` of `msg` under `key` with `padding` and `hash_id`: `PQKIT_STATUS_OK` if
/// valid, `PQKIT_STATUS_AUTHENTICATION_FAILED` if not, `PQKIT_STATUS_INVALID_LENGTH` for a signature that is
/// not the modulus length.
///
/// # Safety
/// `key` a live handle; `msg` and `sig` readable for their lengths.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_rsa_verify(
    key: *const PqkitPublicKey,
    padding: u32,
    hash_id: u32,
    msg: *const u8,
    msg_len: usize,
    sig: *const u8,
    sig_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and both buffers.
        let (key, msg, sig) =
            unsafe { (handle_ref(key)?, input(msg, msg_len, "message")?, input(sig, sig_len, "sig")?) };
        let key = key.rsa()?;
        let h = signing_hash(hash_id)?;
        let digest = h.digest(msg);
        match padding {
            1 => rsa::pss::verify_prehashed(key, h, h, None, &digest, sig)?,
            2 => rsa::pkcs1v15::verify_prehashed(key, h, &digest, sig)?,
            other => return Err(crate::unknown_alg("RSA padding", other)),
        }
        Ok(())
    })
}

/// RSAES-OAEP encryption of `msg` to `key` with `hash_id` for the label hash and MGF1 ([`PqkitRsaHash`],
/// SHA-1 allowed) and the optional `label`: writes the ciphertext (the modulus length) to `out`, its length to
/// `*out_len`. A message longer than the modulus length − 2·hash length − 2 is `PQKIT_STATUS_MESSAGE_TOO_LONG`
/// or `PQKIT_STATUS_INVALID_LENGTH`.
///
/// # Safety
/// `key` a live handle; `label` and `msg` readable for their lengths; `out` writable for `out_cap`; `out_len`
/// valid for a write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_rsa_oaep_encrypt(
    key: *const PqkitPublicKey,
    hash_id: u32,
    label: *const u8,
    label_len: usize,
    msg: *const u8,
    msg_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and the buffers.
        let (key, label, msg) =
            unsafe { (handle_ref(key)?, input(label, label_len, "label")?, input(msg, msg_len, "message")?) };
        crate::check_out(out_len, "out_len")?;
        let ct = rsa::oaep::Oaep::new(hash(hash_id)?).with_label(label).encrypt(key.rsa()?, msg)?;
        // SAFETY: the caller guarantees out and out_len.
        unsafe { emit(&ct, out, out_cap, out_len, "RSA-OAEP ciphertext output") }
    })
}

/// RSAES-OAEP decryption of `ct` with `key`, `hash_id` and `label` as given to the encryption: writes the
/// message to `out` and its length to `*out_len`. Every kind of failure (wrong key, hash, label or a modified
/// ciphertext) is one `PQKIT_STATUS_INVALID_ENCODING`, "decryption error" (the padding is checked in constant
/// time), with nothing written.
///
/// # Safety
/// `key` a live handle; `label` and `ct` readable for their lengths; `out` writable for `out_cap`; `out_len`
/// valid for a write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_rsa_oaep_decrypt(
    key: *const PqkitPrivateKey,
    hash_id: u32,
    label: *const u8,
    label_len: usize,
    ct: *const u8,
    ct_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and the buffers.
        let (key, label, ct) =
            unsafe { (handle_ref(key)?, input(label, label_len, "label")?, input(ct, ct_len, "ciphertext")?) };
        crate::check_out(out_len, "out_len")?;
        let msg = rsa::oaep::Oaep::new(hash(hash_id)?).with_label(label).decrypt(key.rsa()?, ct)?;
        // SAFETY: the caller guarantees out and out_len.
        unsafe { emit(&msg, out, out_cap, out_len, "RSA-OAEP plaintext output") }
    })
}
