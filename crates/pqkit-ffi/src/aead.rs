//! One-shot AEADs: `pqkit_aead_new` / `_seal` / `_open` / `_free`.

use crate::{Fail, FfiResult, PqkitStatus, guard, guard_free, input, output, unknown_alg, write_out};
use pqkit::aead::{Aead, Aes128Gcm, Aes256Gcm, ChaCha20Poly1305, Kusumi512Poly1305, XChaCha20Poly1305};

/// Length of every AEAD tag, in bytes. A sealed message is `ciphertext || tag`, `PQKIT_AEAD_TAG_LEN` bytes
/// longer than the plaintext.
pub const PQKIT_AEAD_TAG_LEN: usize = 16;
const _: () = assert!(PQKIT_AEAD_TAG_LEN == pqkit::aead::TAG_LEN);

/// AEAD algorithm ids (pass them as `uint32_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitAeadAlg {
    /// ChaCha20-Poly1305 (RFC 8439): 32-byte key, 12-byte nonce.
    Chacha20Poly1305 = 1,
    /// XChaCha20-Poly1305: 32-byte key, 24-byte nonce (long enough to draw at random).
    XChacha20Poly1305 = 2,
    /// AES-128-GCM (SP 800-38D): 16-byte key, 12-byte nonce.
    Aes128Gcm = 3,
    /// AES-256-GCM (SP 800-38D): 32-byte key, 12-byte nonce.
    Aes256Gcm = 4,
    /// Kusumi512-Poly1305: 64-byte key, see `pqkit::aead::Kusumi512Poly1305` for its nonce length.
    Kusumi512Poly1305 = 5,
}

/// The keyed AEADs, each wiping its key schedule on drop.
#[allow(clippy::large_enum_variant)]
enum Keyed {
    C(ChaCha20Poly1305),
    X(XChaCha20Poly1305),
    G128(Aes128Gcm),
    G256(Aes256Gcm),
    K(Kusumi512Poly1305),
}

/// An AEAD with its key set (opaque). Made by [`pqkit_aead_new`], released (and its key schedule wiped) by
/// [`pqkit_aead_free`].
pub struct PqkitAead {
    aead: Keyed,
}

fn alg(id: u32) -> FfiResult<PqkitAeadAlg> {
    Ok(match id {
        1 => PqkitAeadAlg::Chacha20Poly1305,
        2 => PqkitAeadAlg::XChacha20Poly1305,
        3 => PqkitAeadAlg::Aes128Gcm,
        4 => PqkitAeadAlg::Aes256Gcm,
        5 => PqkitAeadAlg::Kusumi512Poly1305,
        _ => return Err(unknown_alg("AEAD", id)),
    })
}

fn lens(a: PqkitAeadAlg) -> (usize, usize) {
    match a {
        PqkitAeadAlg::Chacha20Poly1305 => (ChaCha20Poly1305::KEY_LEN, ChaCha20Poly1305::NONCE_LEN),
        PqkitAeadAlg::XChacha20Poly1305 => (XChaCha20Poly1305::KEY_LEN, XChaCha20Poly1305::NONCE_LEN),
        PqkitAeadAlg::Aes128Gcm => (Aes128Gcm::KEY_LEN, Aes128Gcm::NONCE_LEN),
        PqkitAeadAlg::Aes256Gcm => (Aes256Gcm::KEY_LEN, Aes256Gcm::NONCE_LEN),
        PqkitAeadAlg::Kusumi512Poly1305 => (Kusumi512Poly1305::KEY_LEN, Kusumi512Poly1305::NONCE_LEN),
    }
}

impl Keyed {
    fn new(a: PqkitAeadAlg, key: &[u8]) -> pqkit::Result<Self> {
        Ok(match a {
            PqkitAeadAlg::Chacha20Poly1305 => Keyed::C(ChaCha20Poly1305::new(key)?),
            PqkitAeadAlg::XChacha20Poly1305 => Keyed::X(XChaCha20Poly1305::new(key)?),
            PqkitAeadAlg::Aes128Gcm => Keyed::G128(Aes128Gcm::new(key)?),
            PqkitAeadAlg::Aes256Gcm => Keyed::G256(Aes256Gcm::new(key)?),
            PqkitAeadAlg::Kusumi512Poly1305 => Keyed::K(Kusumi512Poly1305::new(key)?),
        })
    }

    /// Out of place (AES-GCM in one pass, no copy first); on error the library zeroes `out`.
    fn seal(&self, nonce: &[u8], aad: &[u8], input: &[u8], out: &mut [u8]) -> pqkit::Result<[u8; PQKIT_AEAD_TAG_LEN]> {
        match self {
            Keyed::C(a) => a.seal_detached_into(nonce, aad, input, out),
            Keyed::X(a) => a.seal_detached_into(nonce, aad, input, out),
            Keyed::G128(a) => a.seal_detached_into(nonce, aad, input, out),
            Keyed::G256(a) => a.seal_detached_into(nonce, aad, input, out),
            Keyed::K(a) => a.seal_detached_into(nonce, aad, input, out),
        }
    }

    /// Out of place; on a bad tag (or any error) the library zeroes `out` before returning.
    fn open(&self, nonce: &[u8], aad: &[u8], input: &[u8], tag: &[u8], out: &mut [u8]) -> pqkit::Result<()> {
        match self {
            Keyed::C(a) => a.open_detached_into(nonce, aad, input, tag, out),
            Keyed::X(a) => a.open_detached_into(nonce, aad, input, tag, out),
            Keyed::G128(a) => a.open_detached_into(nonce, aad, input, tag, out),
            Keyed::G256(a) => a.open_detached_into(nonce, aad, input, tag, out),
            Keyed::K(a) => a.open_detached_into(nonce, aad, input, tag, out),
        }
    }
}

/// Writes the key and nonce lengths of AEAD `alg` to `*key_len` and `*nonce_len`.
///
/// # Safety
/// `key_len` and `nonce_len` must be NULL or valid for a `size_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_aead_lengths(alg_id: u32, key_len: *mut usize, nonce_len: *mut usize) -> PqkitStatus {
    guard(|| {
        let (k, n) = lens(alg(alg_id)?);
        crate::check_out(nonce_len, "nonce_len")?;
        // SAFETY: both pointers are NULL (rejected) or valid for a size_t write, by the caller's contract.
        unsafe {
            write_out(key_len, k, "key_len")?;
            write_out(nonce_len, n, "nonce_len")
        }
    })
}

/// Creates an AEAD of algorithm `alg_id` keyed with `key` (exactly the algorithm's key length, else
/// `PQKIT_STATUS_INVALID_LENGTH`) and writes its handle to `*out`. Free it with [`pqkit_aead_free`].
///
/// # Safety
/// `key` must point to `key_len` readable bytes (or be NULL with `key_len == 0`); `out` must be valid for a
/// pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_aead_new(
    alg_id: u32,
    key: *const u8,
    key_len: usize,
    out: *mut *mut PqkitAead,
) -> PqkitStatus {
    guard(|| {
        let a = alg(alg_id)?;
        // SAFETY: the caller guarantees key/key_len describe a readable buffer.
        let key = unsafe { input(key, key_len, "key") }?;
        crate::check_out(out, "out")?;
        let aead = Keyed::new(a, key)?;
        // SAFETY: out is a valid pointer location by the caller's contract.
        unsafe { crate::new_handle(out, PqkitAead { aead }) }
    })
}

/// Encrypts `pt` with `nonce` and `aad` and writes `ciphertext || tag` (`pt_len + PQKIT_AEAD_TAG_LEN` bytes) to
/// `out`, its length to `*out_len`.
///
/// Security contract: a (key, nonce) pair must never seal two different messages; with random nonces use
/// XChaCha20-Poly1305. Errors: a nonce of the wrong length (`PQKIT_STATUS_INVALID_LENGTH`), `out_cap` too
/// small (`PQKIT_STATUS_BUFFER_TOO_SMALL`, `*out_len` = size needed), a message over the algorithm's limit
/// (`PQKIT_STATUS_MESSAGE_TOO_LONG`). On error `out` holds no ciphertext.
///
/// # Safety
/// `aead` must be a live handle from [`pqkit_aead_new`]; every buffer must be readable (writable for `out`)
/// for its length, or NULL with length 0; `out` must not overlap the inputs; `out_len` must be valid for a
/// `size_t` write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_aead_seal(
    aead: *mut PqkitAead,
    nonce: *const u8,
    nonce_len: usize,
    aad: *const u8,
    aad_len: usize,
    pt: *const u8,
    pt_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and every (pointer, length) pair, per this function's contract.
        let (h, nonce, aad, pt) = unsafe {
            (
                crate::handle(aead)?,
                input(nonce, nonce_len, "nonce")?,
                input(aad, aad_len, "aad")?,
                input(pt, pt_len, "plaintext")?,
            )
        };
        crate::check_out(out_len, "out_len")?;
        let needed = pt
            .len()
            .checked_add(PQKIT_AEAD_TAG_LEN)
            .ok_or_else(|| Fail::new(PqkitStatus::MessageTooLong, "pqkit AEAD: plaintext length overflows size_t"))?;
        if out_cap < needed {
            // SAFETY: out_len checked non-NULL; valid for a write by the caller's contract.
            unsafe { write_out(out_len, needed, "out_len")? };
            return Err(crate::too_small("AEAD seal output", needed, out_cap));
        }
        // SAFETY: out is writable for out_cap >= needed bytes and does not overlap the inputs (caller's contract).
        let out = unsafe { output(out, needed, "out") }?;
        let (body, tag_out) = out.split_at_mut(pt.len());
        // Out of place: the library reads `pt` and writes `body` (and zeroes it on error).
        let tag = h.aead.seal(nonce, aad, pt, body)?;
        tag_out.copy_from_slice(&tag);
        // SAFETY: out_len checked non-NULL; valid for a write by the caller's contract.
        unsafe { write_out(out_len, needed, "out_len") }
    })
}

/// Verifies and decrypts `sealed` (`ciphertext || tag`, at least `PQKIT_AEAD_TAG_LEN` bytes) and writes the
/// plaintext (`sealed_len - PQKIT_AEAD_TAG_LEN` bytes) to `out`, its length to `*out_len`.
///
/// Security contract: the tag is checked in constant time before any plaintext is written. On
/// `PQKIT_STATUS_AUTHENTICATION_FAILED` (wrong key, nonce or aad, or modified data) the first
/// `sealed_len - PQKIT_AEAD_TAG_LEN` bytes of `out` are zeroed and `*out_len` is 0: no plaintext is released.
/// Other errors: `PQKIT_STATUS_INVALID_LENGTH` (nonce, or `sealed` shorter than a tag),
/// `PQKIT_STATUS_BUFFER_TOO_SMALL` (`*out_len` = size needed).
///
/// # Safety
/// As for [`pqkit_aead_seal`].
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_aead_open(
    aead: *mut PqkitAead,
    nonce: *const u8,
    nonce_len: usize,
    aad: *const u8,
    aad_len: usize,
    sealed: *const u8,
    sealed_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and every (pointer, length) pair, per this function's contract.
        let (h, nonce, aad, sealed) = unsafe {
            (
                crate::handle(aead)?,
                input(nonce, nonce_len, "nonce")?,
                input(aad, aad_len, "aad")?,
                input(sealed, sealed_len, "sealed")?,
            )
        };
        crate::check_out(out_len, "out_len")?;
        if sealed.len() < PQKIT_AEAD_TAG_LEN {
            return Err(pqkit::Error::InvalidLength {
                algorithm: "pqkit AEAD",
                field: "sealed message",
                expected: pqkit::error::Expected::AtLeast(PQKIT_AEAD_TAG_LEN),
                actual: sealed.len(),
            }
            .into());
        }
        let (ct, tag) = sealed.split_at(sealed.len() - PQKIT_AEAD_TAG_LEN);
        if out_cap < ct.len() {
            // SAFETY: out_len checked non-NULL; valid for a write by the caller's contract.
            unsafe { write_out(out_len, ct.len(), "out_len")? };
            return Err(crate::too_small("AEAD open output", ct.len(), out_cap));
        }
        // SAFETY: out is writable for out_cap >= ct.len() bytes and does not overlap the inputs.
        let out = unsafe { output(out, ct.len(), "out") }?;
        // Out of place: on a bad tag the library zeroes `out` before returning, so it holds nothing of the message.
        if let Err(e) = h.aead.open(nonce, aad, ct, tag, out) {
            // SAFETY: out_len checked non-NULL; valid for a write by the caller's contract.
            unsafe { write_out(out_len, 0, "out_len")? };
            return Err(e.into());
        }
        // SAFETY: out_len checked non-NULL; valid for a write by the caller's contract.
        unsafe { write_out(out_len, ct.len(), "out_len") }
    })
}

/// Frees an AEAD handle, wiping its key schedule. NULL does nothing; a handle must be freed once.
///
/// # Safety
/// `aead` must be NULL or a live handle from [`pqkit_aead_new`], not used again afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_aead_free(aead: *mut PqkitAead) {
    // SAFETY: by the caller's contract aead is NULL or a live handle freed only here.
    guard_free(|| unsafe { crate::free_handle(aead) })
}
