//! Hashes, SHAKE, HMAC and HKDF.

use crate::{Fail, FfiResult, PqkitStatus, check_out, guard, guard_free, input, output, unknown_alg, write_out};
use pqkit::hash::Hasher;
use pqkit::hash::blake2::{Blake2b512, Blake2s256};
use pqkit::hash::sha2::{Sha224, Sha256, Sha384, Sha512, Sha512_224, Sha512_256};
use pqkit::hash::sha3::{Sha3_224, Sha3_256, Sha3_384, Sha3_512, Shake128, Shake256};
use pqkit::kdf::Hkdf;
use pqkit::mac::Hmac;
use zeroize::Zeroize;

/// Hash algorithm ids (pass them as `uint32_t`), for the hash, HMAC and HKDF functions.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitHashAlg {
    /// SHA-224 (FIPS 180-4), 28-byte digest.
    Sha224 = 1,
    /// SHA-256 (FIPS 180-4), 32-byte digest.
    Sha256 = 2,
    /// SHA-384 (FIPS 180-4), 48-byte digest.
    Sha384 = 3,
    /// SHA-512 (FIPS 180-4), 64-byte digest.
    Sha512 = 4,
    /// SHA-512/224 (FIPS 180-4), 28-byte digest.
    Sha512_224 = 5,
    /// SHA-512/256 (FIPS 180-4), 32-byte digest.
    Sha512_256 = 6,
    /// SHA3-224 (FIPS 202), 28-byte digest.
    Sha3_224 = 7,
    /// SHA3-256 (FIPS 202), 32-byte digest.
    Sha3_256 = 8,
    /// SHA3-384 (FIPS 202), 48-byte digest.
    Sha3_384 = 9,
    /// SHA3-512 (FIPS 202), 64-byte digest.
    Sha3_512 = 10,
    /// BLAKE2b-512 (RFC 7693), 64-byte digest.
    Blake2b512 = 11,
    /// BLAKE2s-256 (RFC 7693), 32-byte digest.
    Blake2s256 = 12,
}

/// Extendable-output function ids (pass them as `uint32_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitXofAlg {
    /// SHAKE128 (FIPS 202).
    Shake128 = 1,
    /// SHAKE256 (FIPS 202).
    Shake256 = 2,
}

/// Calls `$f::<H>($args)` with `H` the hash type of `$id`, or returns the unknown-algorithm error.
macro_rules! with_hash {
    ($id:expr, $f:ident ( $($arg:expr),* )) => {
        match $id {
            1 => $f::<Sha224>($($arg),*),
            2 => $f::<Sha256>($($arg),*),
            3 => $f::<Sha384>($($arg),*),
            4 => $f::<Sha512>($($arg),*),
            5 => $f::<Sha512_224>($($arg),*),
            6 => $f::<Sha512_256>($($arg),*),
            7 => $f::<Sha3_224>($($arg),*),
            8 => $f::<Sha3_256>($($arg),*),
            9 => $f::<Sha3_384>($($arg),*),
            10 => $f::<Sha3_512>($($arg),*),
            11 => $f::<Blake2b512>($($arg),*),
            12 => $f::<Blake2s256>($($arg),*),
            other => Err(unknown_alg("hash", other)),
        }
    };
}

fn out_len_of<H: Hasher>() -> FfiResult<usize> {
    Ok(H::OUTPUT_LEN)
}

/// Writes the digest length of hash `alg_id` to `*len`.
///
/// # Safety
/// `len` must be NULL or valid for a `size_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hash_len(alg_id: u32, len: *mut usize) -> PqkitStatus {
    guard(|| {
        let n = with_hash!(alg_id, out_len_of())?;
        // SAFETY: len is NULL (rejected) or valid for a size_t write, by the caller's contract.
        unsafe { write_out(len, n, "len") }
    })
}

fn digest_into<H: Hasher>(data: &[u8], out: &mut [u8]) -> FfiResult<()> {
    pqkit::Error::check_length(H::NAME, "output", H::OUTPUT_LEN, out.len())?;
    let mut h = H::new();
    h.update(data);
    h.finalize_into(out)?;
    Ok(())
}

/// One-shot hash: writes the digest of `data` to `out`, whose length must be exactly the digest length
/// (`pqkit_hash_len`), else `PQKIT_STATUS_INVALID_LENGTH`.
///
/// # Safety
/// `data` must be readable for `data_len` bytes and `out` writable for `out_len` bytes (or NULL with length 0);
/// they must not overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hash(
    alg_id: u32,
    data: *const u8,
    data_len: usize,
    out: *mut u8,
    out_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both (pointer, length) pairs, non-overlapping.
        let (data, out) = unsafe { (input(data, data_len, "data")?, output(out, out_len, "out")?) };
        with_hash!(alg_id, digest_into(data, out))
    })
}

/// Object-safe view of a [`Hasher`], so one handle type serves every hash.
trait DynHash: Send {
    fn update(&mut self, data: &[u8]);
    fn finalize_reset(&mut self, out: &mut [u8]) -> FfiResult<()>;
}

/// A hash state wiped on drop.
struct Wiped<H: Hasher>(H);

impl<H: Hasher> Drop for Wiped<H> {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl<H: Hasher + Send> DynHash for Wiped<H> {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    fn finalize_reset(&mut self, out: &mut [u8]) -> FfiResult<()> {
        pqkit::Error::check_length(H::NAME, "output", H::OUTPUT_LEN, out.len())?;
        let h = core::mem::replace(&mut self.0, H::new());
        h.finalize_into(out)?;
        Ok(())
    }
}

fn boxed_hash<H: Hasher + Send + 'static>() -> FfiResult<Box<dyn DynHash>> {
    Ok(Box::new(Wiped(H::new())))
}

/// An incremental hash (opaque): [`pqkit_hash_new`], [`pqkit_hash_update`], [`pqkit_hash_finalize`],
/// [`pqkit_hash_free`].
pub struct PqkitHash {
    inner: Box<dyn DynHash>,
}

/// Creates an incremental hash of algorithm `alg_id` and writes its handle to `*out`.
///
/// # Safety
/// `out` must be NULL or valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hash_new(alg_id: u32, out: *mut *mut PqkitHash) -> PqkitStatus {
    guard(|| {
        let inner = with_hash!(alg_id, boxed_hash())?;
        // SAFETY: out is NULL (rejected) or valid for a pointer write, by the caller's contract.
        unsafe { crate::new_handle(out, PqkitHash { inner }) }
    })
}

/// Absorbs `data` into the hash.
///
/// # Safety
/// `h` must be a live handle from [`pqkit_hash_new`]; `data` readable for `data_len` bytes (or NULL with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hash_update(h: *mut PqkitHash, data: *const u8, data_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and the buffer.
        let (h, data) = unsafe { (crate::handle(h)?, input(data, data_len, "data")?) };
        h.inner.update(data);
        Ok(())
    })
}

/// Writes the digest of everything absorbed to `out` (exactly the digest length, else
/// `PQKIT_STATUS_INVALID_LENGTH` and the state is unchanged) and resets the hash to its fresh state.
///
/// # Safety
/// `h` must be a live handle from [`pqkit_hash_new`]; `out` writable for `out_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hash_finalize(h: *mut PqkitHash, out: *mut u8, out_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and the buffer.
        let (h, out) = unsafe { (crate::handle(h)?, output(out, out_len, "out")?) };
        h.inner.finalize_reset(out)
    })
}

/// Frees a hash handle, wiping its state. NULL does nothing.
///
/// # Safety
/// `h` must be NULL or a live handle from [`pqkit_hash_new`], not used again afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hash_free(h: *mut PqkitHash) {
    // SAFETY: by the caller's contract h is NULL or a live handle freed only here.
    guard_free(|| unsafe { crate::free_handle(h) })
}

/// SHAKE128 or SHAKE256 of `data`, `out_len` bytes of output (any length).
///
/// # Safety
/// `data` readable for `data_len` bytes, `out` writable for `out_len` bytes (or NULL with 0); no overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_xof(
    alg_id: u32,
    data: *const u8,
    data_len: usize,
    out: *mut u8,
    out_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both (pointer, length) pairs, non-overlapping.
        let (data, out) = unsafe { (input(data, data_len, "data")?, output(out, out_len, "out")?) };
        match alg_id {
            1 => Shake128::digest_into(data, out),
            2 => Shake256::digest_into(data, out),
            other => return Err(unknown_alg("XOF", other)),
        }
        Ok(())
    })
}

fn hmac_into<H: Hasher>(key: &[u8], msg: &[u8], out: &mut [u8]) -> FfiResult<()> {
    pqkit::Error::check_length("HMAC", "tag output", H::OUTPUT_LEN, out.len())?;
    let mut tag = Hmac::<H>::new(key).mac(msg);
    out.copy_from_slice(tag.as_ref());
    tag.as_mut().zeroize();
    Ok(())
}

fn hmac_verify<H: Hasher>(key: &[u8], msg: &[u8], tag: &[u8]) -> FfiResult<()> {
    pqkit::Error::check_length("HMAC", "tag", H::OUTPUT_LEN, tag.len())?;
    Hmac::<H>::new(key).verify_mac(msg, tag)?;
    Ok(())
}

/// HMAC (RFC 2104) with hash `alg_id`: writes the tag of `msg` under `key` (any length) to `out`, which must
/// be exactly the hash's digest length.
///
/// # Safety
/// Every buffer readable (writable for `out`) for its length, or NULL with length 0; no overlap with `out`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hmac(
    alg_id: u32,
    key: *const u8,
    key_len: usize,
    msg: *const u8,
    msg_len: usize,
    out: *mut u8,
    out_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every (pointer, length) pair, with out not overlapping the inputs.
        let (key, msg, out) =
            unsafe { (input(key, key_len, "key")?, input(msg, msg_len, "message")?, output(out, out_len, "out")?) };
        with_hash!(alg_id, hmac_into(key, msg, out))
    })
}

/// Verifies an HMAC tag in constant time: `PQKIT_STATUS_OK` if `tag` (exactly the digest length, else
/// `PQKIT_STATUS_INVALID_LENGTH`) is the tag of `msg` under `key`, else `PQKIT_STATUS_AUTHENTICATION_FAILED`.
///
/// # Safety
/// Every buffer readable for its length, or NULL with length 0.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_hmac_verify(
    alg_id: u32,
    key: *const u8,
    key_len: usize,
    msg: *const u8,
    msg_len: usize,
    tag: *const u8,
    tag_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every (pointer, length) pair.
        let (key, msg, tag) =
            unsafe { (input(key, key_len, "key")?, input(msg, msg_len, "message")?, input(tag, tag_len, "tag")?) };
        with_hash!(alg_id, hmac_verify(key, msg, tag))
    })
}

/// Object-safe view of a keyed [`Hmac`].
trait DynMac: Send {
    fn update(&mut self, data: &[u8]);
    fn finalize_reset(&mut self, out: &mut [u8]) -> FfiResult<()>;
    fn verify_reset(&mut self, tag: &[u8]) -> FfiResult<()>;
}

impl<H: Hasher + Send> DynMac for Hmac<H> {
    fn update(&mut self, data: &[u8]) {
        Hmac::update(self, data);
    }
    fn finalize_reset(&mut self, out: &mut [u8]) -> FfiResult<()> {
        pqkit::Error::check_length("HMAC", "tag output", H::OUTPUT_LEN, out.len())?;
        let mut tag = Hmac::finalize_reset(self);
        out.copy_from_slice(tag.as_ref());
        tag.as_mut().zeroize();
        Ok(())
    }
    fn verify_reset(&mut self, tag: &[u8]) -> FfiResult<()> {
        pqkit::Error::check_length("HMAC", "tag", H::OUTPUT_LEN, tag.len())?;
        Hmac::verify(self, tag)?;
        Ok(())
    }
}

fn boxed_mac<H: Hasher + Send + 'static>(key: &[u8]) -> FfiResult<Box<dyn DynMac>> {
    Ok(Box::new(Hmac::<H>::new(key)))
}

/// An incremental HMAC with its key (opaque): [`pqkit_hmac_new`], [`pqkit_hmac_update`],
/// [`pqkit_hmac_finalize`] or [`pqkit_hmac_finalize_verify`], [`pqkit_hmac_free`] (which wipes the key).
pub struct PqkitHmac {
    inner: Box<dyn DynMac>,
}

/// Creates an incremental HMAC with hash `alg_id` and `key` (any length) and writes its handle to `*out`.
///
/// # Safety
/// `key` readable for `key_len` bytes (or NULL with 0); `out` NULL or valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hmac_new(
    alg_id: u32,
    key: *const u8,
    key_len: usize,
    out: *mut *mut PqkitHmac,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the key buffer.
        let key = unsafe { input(key, key_len, "key") }?;
        check_out(out, "out")?;
        let inner = with_hash!(alg_id, boxed_mac(key))?;
        // SAFETY: out is valid for a pointer write by the caller's contract.
        unsafe { crate::new_handle(out, PqkitHmac { inner }) }
    })
}

/// Absorbs `data` into the HMAC.
///
/// # Safety
/// `h` a live handle from [`pqkit_hmac_new`]; `data` readable for `data_len` bytes (or NULL with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hmac_update(h: *mut PqkitHmac, data: *const u8, data_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and the buffer.
        let (h, data) = unsafe { (crate::handle(h)?, input(data, data_len, "data")?) };
        h.inner.update(data);
        Ok(())
    })
}

/// Writes the tag of everything absorbed to `out` (exactly the digest length) and resets to the keyed state.
///
/// # Safety
/// `h` a live handle from [`pqkit_hmac_new`]; `out` writable for `out_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hmac_finalize(h: *mut PqkitHmac, out: *mut u8, out_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and the buffer.
        let (h, out) = unsafe { (crate::handle(h)?, output(out, out_len, "out")?) };
        h.inner.finalize_reset(out)
    })
}

/// Compares the tag of everything absorbed with `tag` in constant time (`PQKIT_STATUS_AUTHENTICATION_FAILED`
/// if they differ) and resets to the keyed state.
///
/// # Safety
/// `h` a live handle from [`pqkit_hmac_new`]; `tag` readable for `tag_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hmac_finalize_verify(h: *mut PqkitHmac, tag: *const u8, tag_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and the buffer.
        let (h, tag) = unsafe { (crate::handle(h)?, input(tag, tag_len, "tag")?) };
        h.inner.verify_reset(tag)
    })
}

/// Frees an HMAC handle, wiping its keyed state. NULL does nothing.
///
/// # Safety
/// `h` must be NULL or a live handle from [`pqkit_hmac_new`], not used again afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hmac_free(h: *mut PqkitHmac) {
    // SAFETY: by the caller's contract h is NULL or a live handle freed only here.
    guard_free(|| unsafe { crate::free_handle(h) })
}

/// HKDF has no zero-length output: a caller asking for none has made a mistake (a forgotten length), which
/// is reported instead of "succeeding" with nothing derived.
fn check_okm_len(okm: &[u8]) -> FfiResult<()> {
    if okm.is_empty() {
        return Err(Fail::new(PqkitStatus::InvalidParameter, "HKDF okm_len must be at least 1, got 0"));
    }
    Ok(())
}

fn hkdf_derive<H: Hasher>(salt: &[u8], ikm: &[u8], info: &[u8], okm: &mut [u8]) -> FfiResult<()> {
    check_okm_len(okm)?;
    Hkdf::<H>::derive(salt, ikm, info, okm).inspect_err(|_| okm.zeroize())?;
    Ok(())
}

fn hkdf_extract<H: Hasher>(salt: &[u8], ikm: &[u8], prk: &mut [u8]) -> FfiResult<()> {
    pqkit::Error::check_length("HKDF", "PRK output", H::OUTPUT_LEN, prk.len())?;
    let mut p = pqkit::kdf::extract::<H>(salt, ikm);
    prk.copy_from_slice(p.as_ref());
    p.as_mut().zeroize();
    Ok(())
}

fn hkdf_expand<H: Hasher>(prk: &[u8], info: &[u8], okm: &mut [u8]) -> FfiResult<()> {
    check_okm_len(okm)?;
    Hkdf::<H>::from_prk(prk)?.expand(info, okm).inspect_err(|_| okm.zeroize())?;
    Ok(())
}

/// HKDF (RFC 5869) with hash `alg_id`: extract from `salt` (may be empty) and `ikm`, then expand with `info`
/// into `okm` (1 to 255 digest lengths: `okm_len` 0 gives `PQKIT_STATUS_INVALID_PARAMETER`, more than 255
/// digest lengths an error status too).
///
/// # Safety
/// Every buffer readable (writable for `okm`) for its length, or NULL with length 0; `okm` overlaps none.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_hkdf(
    alg_id: u32,
    salt: *const u8,
    salt_len: usize,
    ikm: *const u8,
    ikm_len: usize,
    info: *const u8,
    info_len: usize,
    okm: *mut u8,
    okm_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every (pointer, length) pair, with okm not overlapping the inputs.
        let (salt, ikm, info, okm) = unsafe {
            (
                input(salt, salt_len, "salt")?,
                input(ikm, ikm_len, "ikm")?,
                input(info, info_len, "info")?,
                output(okm, okm_len, "okm")?,
            )
        };
        with_hash!(alg_id, hkdf_derive(salt, ikm, info, okm))
    })
}

/// HKDF-Extract: writes `PRK = HMAC(salt, ikm)` to `prk` (exactly the digest length).
///
/// # Safety
/// Every buffer readable (writable for `prk`) for its length, or NULL with length 0; `prk` overlaps none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hkdf_extract(
    alg_id: u32,
    salt: *const u8,
    salt_len: usize,
    ikm: *const u8,
    ikm_len: usize,
    prk: *mut u8,
    prk_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every (pointer, length) pair, with prk not overlapping the inputs.
        let (salt, ikm, prk) =
            unsafe { (input(salt, salt_len, "salt")?, input(ikm, ikm_len, "ikm")?, output(prk, prk_len, "prk")?) };
        with_hash!(alg_id, hkdf_extract(salt, ikm, prk))
    })
}

/// HKDF-Expand: expands `prk` (at least the digest length) with `info` into `okm` (1 to 255 digest lengths;
/// `okm_len` 0 gives `PQKIT_STATUS_INVALID_PARAMETER`).
///
/// # Safety
/// Every buffer readable (writable for `okm`) for its length, or NULL with length 0; `okm` overlaps none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hkdf_expand(
    alg_id: u32,
    prk: *const u8,
    prk_len: usize,
    info: *const u8,
    info_len: usize,
    okm: *mut u8,
    okm_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every (pointer, length) pair, with okm not overlapping the inputs.
        let (prk, info, okm) =
            unsafe { (input(prk, prk_len, "prk")?, input(info, info_len, "info")?, output(okm, okm_len, "okm")?) };
        with_hash!(alg_id, hkdf_expand(prk, info, okm))
    })
}
