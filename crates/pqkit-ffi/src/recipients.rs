//! Encryption to public keys: the pqkit file format version 2 (`docs/file-format.md`), the files
//! `pqkit encrypt -r` writes and `pqkit decrypt -i` reads. An identity (X-Wing private key) is an opaque
//! handle with its text form; a recipient is its public string `pqkit-xwing1...`. Encryption and decryption
//! work on whole buffers in memory.

use crate::{
    Fail, FfiResult, PqkitStatus, PqkitStreamDecryptor, PqkitStreamEncryptor, emit, free_handle, guard, guard_free,
    handle_ref, input, new_handle, unknown_alg, write_out,
};
use pqkit::aead::recipients::{self, Identity, Recipient};
use pqkit::aead::stream::Algorithm;
use std::io::{Read, Write};
use zeroize::Zeroizing;

/// An identity (opaque): an X-Wing private key that can open files encrypted to its recipient string. Made by
/// [`pqkit_identity_generate`] or [`pqkit_identity_from_text`], released (and wiped) by
/// [`pqkit_identity_free`].
pub struct PqkitIdentity {
    id: Identity,
}

/// The library's error inside an `std::io::Error`, or the I/O error itself as an encoding error.
fn io_fail(e: std::io::Error) -> Fail {
    match e.get_ref().and_then(|i| i.downcast_ref::<pqkit::Error>()) {
        Some(inner) => inner.clone().into(),
        None => Fail::new(PqkitStatus::InvalidEncoding, format!("pqkit recipients: {e}")),
    }
}

fn text(data: &[u8], what: &str) -> FfiResult<String> {
    String::from_utf8(data.to_vec())
        .map_err(|_| Fail::new(PqkitStatus::InvalidEncoding, format!("pqkit recipients: the {what} is not UTF-8 text")))
}

/// Generates an identity from the operating system's randomness and writes its handle to `*out`.
///
/// # Safety
/// `out` valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_identity_generate(out: *mut *mut PqkitIdentity) -> PqkitStatus {
    guard(|| {
        crate::check_out(out, "handle out-pointer")?;
        let id = Identity::generate()?;
        // SAFETY: out is valid for a pointer write (caller's contract).
        unsafe { new_handle(out, PqkitIdentity { id }) }
    })
}

/// Reads an identity from its text (an identity file as `pqkit keygen --alg xwing` writes it: a line
/// `PQKIT-XWING-IDENTITY-1:` and 64 hex digits, other lines ignored) and writes its handle to `*out`.
///
/// # Safety
/// `text` readable for `text_len` bytes; `out` valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_identity_from_text(
    text_ptr: *const u8,
    text_len: usize,
    out: *mut *mut PqkitIdentity,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the text buffer.
        let t = Zeroizing::new(text(unsafe { input(text_ptr, text_len, "text") }?, "identity")?);
        crate::check_out(out, "handle out-pointer")?;
        let id = Identity::from_text(&t)?;
        // SAFETY: out is valid for a pointer write (caller's contract).
        unsafe { new_handle(out, PqkitIdentity { id }) }
    })
}

/// Writes the identity's text (secret: what an identity file holds) to `out` (capacity `out_cap`, no NUL
/// terminator) and its length to `*out_len`.
///
/// # Safety
/// `id` a live handle; `out` writable for `out_cap` bytes; `out_len` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_identity_to_text(
    id: *const PqkitIdentity,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle.
        let t = unsafe { handle_ref(id) }?.id.to_text();
        // SAFETY: the caller guarantees out and out_len.
        unsafe { emit(t.as_bytes(), out, out_cap, out_len, "identity text output") }
    })
}

/// Writes the identity's recipient string (`pqkit-xwing1...`, public: give it to senders) to `out` (no NUL
/// terminator) and its length to `*out_len`.
///
/// # Safety
/// `id` a live handle; `out` writable for `out_cap` bytes; `out_len` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_identity_recipient(
    id: *const PqkitIdentity,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle.
        let r = unsafe { handle_ref(id) }?.id.recipient().to_string();
        // SAFETY: the caller guarantees out and out_len.
        unsafe { emit(r.as_bytes(), out, out_cap, out_len, "recipient output") }
    })
}

/// Releases an identity and wipes its key. NULL does nothing.
///
/// # Safety
/// `id` NULL or a live handle, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_identity_free(id: *mut PqkitIdentity) {
    // SAFETY: the caller's contract is free_handle's.
    guard_free(|| unsafe { free_handle(id) })
}

/// The identities behind `len` handles, as owned values (the library's readers take a slice of them).
///
/// # Safety
/// `ptr` NULL or readable for `len` pointers, each NULL or a live identity handle.
unsafe fn identities_of(ptr: *const *const PqkitIdentity, len: usize) -> FfiResult<Vec<Identity>> {
    if len == 0 {
        return Err(Fail::new(PqkitStatus::InvalidParameter, "pqkit recipients: at least one identity is needed"));
    }
    if ptr.is_null() {
        return Err(crate::null("identities"));
    }
    // SAFETY: ptr points to len handle pointers (this function's contract), checked non-NULL.
    let handles = unsafe { core::slice::from_raw_parts(ptr, len) };
    let mut ids = Vec::with_capacity(handles.len());
    for &h in handles {
        // SAFETY: each is NULL (refused) or a live handle (this function's contract).
        let id = unsafe { handle_ref(h) }?;
        ids.push(Identity::from_text(&id.id.to_text())?);
    }
    Ok(ids)
}

/// Parses recipients: one recipient string per line; blank lines and lines starting with `#` are skipped.
fn parse_recipients(list: &str) -> FfiResult<Vec<Recipient>> {
    let mut out = Vec::new();
    for line in list.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        out.push(line.parse::<Recipient>()?);
    }
    if out.is_empty() {
        return Err(recipients::errors::RECIPIENT_COUNT.into());
    }
    Ok(out)
}

/// Encrypts `pt` to every recipient in `recipients` (text: one `pqkit-xwing1...` string per line, blank lines
/// and `#` comments skipped; 1 to 1024 recipients) with the file format's segments in `alg_id`
/// ([`crate::PqkitStreamAlg`]), and writes the whole file to `out` and its length to `*out_len`. The output is
/// the plaintext length plus about 1.2 KiB per recipient and 16 bytes per 64 KiB segment; a capacity too small
/// gives `PQKIT_STATUS_BUFFER_TOO_SMALL` and the size needed (each call draws a fresh file key, so the bytes
/// differ between calls, not the length). `pqkit decrypt -i` reads the file.
///
/// # Safety
/// `recipients` and `pt` readable for their lengths; `out` writable for `out_cap`; `out_len` valid for a write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_recipients_encrypt(
    alg_id: u32,
    recipients_text: *const u8,
    recipients_len: usize,
    pt: *const u8,
    pt_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both input buffers.
        let (list, pt) =
            unsafe { (input(recipients_text, recipients_len, "recipients")?, input(pt, pt_len, "plaintext")?) };
        crate::check_out(out_len, "out_len")?;
        let alg = Algorithm::from_id(u8::try_from(alg_id).unwrap_or(0)).ok_or_else(|| unknown_alg("stream", alg_id))?;
        let to = parse_recipients(&text(list, "recipient list")?)?;
        let mut enc = recipients::encrypt(&to, alg, Vec::new()).map_err(io_fail)?;
        enc.write_all(pt).map_err(io_fail)?;
        let file = enc.finish().map_err(io_fail)?;
        // SAFETY: the caller guarantees out and out_len.
        unsafe { emit(&file, out, out_cap, out_len, "encrypted file output") }
    })
}

/// Decrypts a file encrypted to recipients (by [`pqkit_recipients_encrypt`] or `pqkit encrypt -r`) with any of
/// the `identities_len` identities in `identities`, and writes the plaintext to `out` (at most `ct_len` bytes)
/// and its length to `*out_len`. No identity matching is `PQKIT_STATUS_AUTHENTICATION_FAILED`; a modified,
/// truncated or extended file is `PQKIT_STATUS_AUTHENTICATION_FAILED` or `PQKIT_STATUS_INVALID_ENCODING`; on
/// any error nothing is written to `out`.
///
/// # Safety
/// `identities` readable for `identities_len` live handles; `ct` readable for `ct_len`; `out` writable for
/// `out_cap`; `out_len` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_recipients_decrypt(
    identities: *const *const PqkitIdentity,
    identities_len: usize,
    ct: *const u8,
    ct_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees ct.
        let ct = unsafe { input(ct, ct_len, "ciphertext") }?;
        crate::check_out(out_len, "out_len")?;
        // SAFETY: the caller guarantees the identities array.
        let ids = unsafe { identities_of(identities, identities_len) }?;
        let mut dec = recipients::decrypt(&ids, ct).map_err(io_fail)?;
        let mut pt = Zeroizing::new(Vec::with_capacity(ct.len()));
        dec.read_to_end(&mut pt).map_err(io_fail)?;
        // SAFETY: the caller guarantees out and out_len.
        unsafe { emit(&pt, out, out_cap, out_len, "plaintext output") }
    })
}

/// Starts a streaming encryption to `recipients` (as [`pqkit_recipients_encrypt`]): writes the file's
/// recipient section (11 bytes plus 1178 per X-Wing recipient) to `section` and its length to
/// `*section_len`, and the handle of a [`PqkitStreamEncryptor`] to `*out`. Write the section first, then
/// everything `pqkit_stream_encryptor_update` and `_finish` give: together they are the file
/// `pqkit_recipients_decrypt` and `pqkit decrypt -i` read. Free the encryptor with
/// `pqkit_stream_encryptor_free`. A `section_cap` too small is `PQKIT_STATUS_BUFFER_TOO_SMALL` with the size
/// needed in `*section_len` and no encryptor.
///
/// # Safety
/// `recipients` readable; `section` writable for `section_cap`; `section_len` and `out` valid for writes.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_recipients_encryptor_new(
    alg_id: u32,
    recipients_text: *const u8,
    recipients_len: usize,
    section: *mut u8,
    section_cap: usize,
    section_len: *mut usize,
    out: *mut *mut PqkitStreamEncryptor,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the recipient list.
        let list = unsafe { input(recipients_text, recipients_len, "recipients") }?;
        crate::check_out(section_len, "section_len")?;
        crate::check_out(out, "handle out-pointer")?;
        Algorithm::from_id(u8::try_from(alg_id).unwrap_or(0)).ok_or_else(|| unknown_alg("stream", alg_id))?;
        let to = parse_recipients(&text(list, "recipient list")?)?;
        let (prefix, raw) = recipients::wrap(&to)?;
        // SAFETY: the caller guarantees section and section_len.
        unsafe { emit(&prefix, section, section_cap, section_len, "recipient section output") }?;
        // SAFETY: raw is 32 readable bytes; out is valid for a pointer write (caller's contract).
        let st = unsafe { crate::pqkit_stream_encryptor_new(alg_id, raw.as_ptr(), raw.len(), out) };
        if st == PqkitStatus::Ok { Ok(()) } else { Err(Fail::new(st, "pqkit recipients: the stream did not start")) }
    })
}

/// The length of the recipient section at the start of `data` (after `PQKITENC` and the version byte), or
/// `Err(n)`: `data` ends inside it and at least `n` bytes are needed.
fn section_len(data: &[u8]) -> Result<usize, usize> {
    let u16_at = |p: usize| -> Result<usize, usize> {
        data.get(p..p + 2).map(|b| usize::from(u16::from_be_bytes([b[0], b[1]]))).ok_or(p + 2)
    };
    let count = u16_at(9)?;
    let mut pos = 11;
    for _ in 0..count {
        let enc_len = u16_at(pos + 6)?;
        pos += 8 + enc_len;
        let wrapped_len = u16_at(pos)?;
        pos += 2 + wrapped_len;
    }
    if data.len() < pos { Err(pos) } else { Ok(pos) }
}

/// Starts a streaming decryption of a file encrypted to recipients: `data` is the start of the file, holding
/// at least its recipient section (11 bytes plus 1178 per recipient); the section is opened with any of the
/// identities, `*consumed` gets its length, and `*out` the handle of a [`PqkitStreamDecryptor`]. Feed it the
/// rest of `data` (from `data + *consumed`) and then the rest of the file with
/// `pqkit_stream_decryptor_update`, and end with `_finish`: it releases plaintext only as it authenticates.
/// If `data` ends inside the section: `PQKIT_STATUS_BUFFER_TOO_SMALL`, with the number of bytes needed (so
/// far) in `*consumed`; call again with more. No identity matching is `PQKIT_STATUS_AUTHENTICATION_FAILED`.
///
/// # Safety
/// `identities` readable for `identities_len` live handles; `data` readable; `consumed` and `out` valid for
/// writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_recipients_decryptor_new(
    identities: *const *const PqkitIdentity,
    identities_len: usize,
    data: *const u8,
    data_len: usize,
    consumed: *mut usize,
    out: *mut *mut PqkitStreamDecryptor,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees data.
        let data = unsafe { input(data, data_len, "data") }?;
        crate::check_out(consumed, "consumed")?;
        crate::check_out(out, "handle out-pointer")?;
        // SAFETY: the caller guarantees the identities array.
        let ids = unsafe { identities_of(identities, identities_len) }?;
        if data.len() >= 9 && (data[..8] != pqkit::aead::stream::MAGIC || data[8] != recipients::VERSION) {
            return Err(recipients::errors::NOT_VERSION_2.into());
        }
        let n = match section_len(data) {
            Ok(n) => n,
            Err(need) => {
                // SAFETY: consumed is not NULL (checked) and valid for a write (caller's contract).
                unsafe { write_out(consumed, need.max(11), "consumed")? };
                return Err(crate::too_small("recipient section input", need.max(11), data.len()));
            }
        };
        let mut rest = &data[9..n];
        let mut next = |buf: &mut [u8]| -> pqkit::Result<()> {
            if rest.len() < buf.len() {
                return Err(recipients::errors::TRUNCATED);
            }
            let (a, b) = rest.split_at(buf.len());
            buf.copy_from_slice(a);
            rest = b;
            Ok(())
        };
        let raw = recipients::unwrap_with(&data[..9], &mut next, &ids)?;
        // SAFETY: raw is 32 readable bytes; out is valid for a pointer write (caller's contract).
        let st = unsafe { crate::pqkit_stream_decryptor_new(raw.as_ptr(), raw.len(), out) };
        if st != PqkitStatus::Ok {
            return Err(Fail::new(st, "pqkit recipients: the stream did not start"));
        }
        // SAFETY: consumed is not NULL (checked) and valid for a write (caller's contract).
        unsafe { write_out(consumed, n, "consumed") }
    })
}
