//! Streaming AEAD: the pqkit encrypted file format (`pqkit::aead::stream`, STREAM over 64 KiB segments) as
//! push-style encryptor and decryptor handles.
//!
//! The framing follows `pqkit::aead::stream::{Encryptor, Decryptor}` exactly (a segment is sealed once it is
//! full and more data follows; the final one is sealed by `finish`), over the library's `Header` and
//! `FileKey::{seal_segment, open_segment}`, so the output is a file `pqkit decrypt` reads and vice versa.

use crate::{Fail, FfiResult, PqkitStatus, check_out, guard, guard_free, input, output, write_out};
use pqkit::aead::stream::{
    Algorithm, FIXED_HEADER_LEN, FileKey, Header, KeySource, MAX_HEADER_LEN, SEGMENT_CT_LEN, SEGMENT_LEN, errors,
};
use zeroize::{Zeroize, Zeroizing};

/// Plaintext bytes per segment (64 KiB). Every segment but the last holds exactly this many.
pub const PQKIT_STREAM_SEGMENT_LEN: usize = 65536;
const _: () = assert!(PQKIT_STREAM_SEGMENT_LEN == SEGMENT_LEN);
/// Bytes of a full segment in the stream: `PQKIT_STREAM_SEGMENT_LEN` plus a 16-byte tag.
pub const PQKIT_STREAM_SEGMENT_CT_LEN: usize = 65552;
const _: () = assert!(PQKIT_STREAM_SEGMENT_CT_LEN == SEGMENT_CT_LEN);
/// The longest stream header, in bytes.
pub const PQKIT_STREAM_MAX_HEADER_LEN: usize = 75;
const _: () = assert!(PQKIT_STREAM_MAX_HEADER_LEN == MAX_HEADER_LEN);
/// Length of the raw key of a stream, in bytes.
pub const PQKIT_STREAM_KEY_LEN: usize = 32;
const _: () = assert!(PQKIT_STREAM_KEY_LEN == pqkit::aead::stream::KEY_LEN);

/// Stream AEAD ids (pass them as `uint32_t`); the ids are those of the file header.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitStreamAlg {
    /// XChaCha20-Poly1305 segments (the default of `pqkit encrypt`).
    XChacha20Poly1305 = 1,
    /// Kusumi512-Poly1305 segments.
    Kusumi512Poly1305 = 2,
    /// AES-256-GCM segments.
    Aes256Gcm = 3,
}

/// The shortest header of any algorithm (a lower bound while the algorithm id is not read yet).
const MIN_HEADER_LEN: usize = {
    let (x, k, g) = (
        Algorithm::XChaCha20Poly1305.header_len(),
        Algorithm::Kusumi512Poly1305.header_len(),
        Algorithm::Aes256Gcm.header_len(),
    );
    let m = if x < k { x } else { k };
    if m < g { m } else { g }
};

fn poisoned() -> Fail {
    Fail::new(PqkitStatus::BadState, "pqkit stream: this stream has finished or failed; start a new one")
}

/// Computes `a + b` or fails with `MessageTooLong`.
fn add(a: usize, b: usize) -> FfiResult<usize> {
    a.checked_add(b).ok_or_else(|| Fail::new(PqkitStatus::MessageTooLong, "pqkit stream: length overflows size_t"))
}

/// A streaming encryptor (opaque): [`pqkit_stream_encryptor_new`], [`pqkit_stream_encryptor_update`],
/// [`pqkit_stream_encryptor_finish`], [`pqkit_stream_encryptor_free`] (which wipes the key and the buffered
/// plaintext).
pub struct PqkitStreamEncryptor {
    key: FileKey,
    header_written: bool,
    /// Plaintext not yet sealed: at most one segment (it is sealed only once more data follows it).
    pending: Zeroizing<Vec<u8>>,
    index: u64,
    done: bool,
}

/// Creates a streaming encryptor for AEAD `alg_id` (a [`PqkitStreamAlg`]) under a 32-byte raw `key`, with a
/// fresh random salt and nonce prefix from the OS, and writes its handle to `*out`.
///
/// Security contract: the file key is derived per stream with HKDF-SHA-512 from `key` and the random salt, so
/// reusing `key` across streams is safe. The whole stream (header, every segment, their order and the end)
/// is authenticated.
///
/// # Safety
/// `key` readable for `key_len` bytes; `out` NULL or valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_stream_encryptor_new(
    alg_id: u32,
    key: *const u8,
    key_len: usize,
    out: *mut *mut PqkitStreamEncryptor,
) -> PqkitStatus {
    guard(|| {
        let alg = Algorithm::from_id(u8::try_from(alg_id).unwrap_or(0))
            .ok_or_else(|| crate::unknown_alg("stream", alg_id))?;
        // SAFETY: the caller guarantees the key buffer.
        let key = unsafe { input(key, key_len, "key") }?;
        check_out(out, "out")?;
        let header = Header::random(alg, KeySource::Key)?;
        let key = FileKey::from_key(&header, key)?;
        let enc = PqkitStreamEncryptor {
            key,
            header_written: false,
            pending: Zeroizing::new(Vec::with_capacity(SEGMENT_LEN)),
            index: 0,
            done: false,
        };
        // SAFETY: out is valid for a pointer write by the caller's contract.
        unsafe { crate::new_handle(out, enc) }
    })
}

impl PqkitStreamEncryptor {
    fn header_len(&self) -> usize {
        if self.header_written { 0 } else { self.key.header().as_bytes().len() }
    }

    /// Bytes `update` with `in_len` more bytes writes.
    fn update_len(&self, in_len: usize) -> FfiResult<usize> {
        let total = add(self.pending.len(), in_len)?;
        let segments = if total == 0 { 0 } else { (total - 1) / SEGMENT_LEN };
        let body = segments
            .checked_mul(SEGMENT_CT_LEN)
            .ok_or_else(|| Fail::new(PqkitStatus::MessageTooLong, "pqkit stream: length overflows size_t"))?;
        add(self.header_len(), body)
    }

    fn write_header(&mut self, out: &mut [u8]) -> usize {
        let n = self.header_len();
        if n > 0 {
            out[..n].copy_from_slice(self.key.header().as_bytes());
            self.header_written = true;
        }
        n
    }

    fn update(&mut self, mut data: &[u8], out: &mut [u8]) -> FfiResult<usize> {
        let mut o = self.write_header(out);
        while self.pending.len() + data.len() > SEGMENT_LEN {
            let seg = &mut out[o..o + SEGMENT_CT_LEN];
            let p = self.pending.len();
            let take = SEGMENT_LEN - p;
            seg[..p].copy_from_slice(&self.pending);
            seg[p..SEGMENT_LEN].copy_from_slice(&data[..take]);
            data = &data[take..];
            self.pending.zeroize();
            self.pending.clear();
            let (body, tag) = seg.split_at_mut(SEGMENT_LEN);
            match self.key.seal_segment(self.index, false, body) {
                Ok(t) => tag.copy_from_slice(&t),
                Err(e) => {
                    body.zeroize();
                    return Err(e.into());
                }
            }
            self.index += 1;
            o += SEGMENT_CT_LEN;
        }
        self.pending.extend_from_slice(data);
        Ok(o)
    }

    fn finish(&mut self, out: &mut [u8]) -> FfiResult<usize> {
        let mut o = self.write_header(out);
        let n = self.pending.len();
        let seg = &mut out[o..o + n + pqkit::aead::TAG_LEN];
        let (body, tag) = seg.split_at_mut(n);
        body.copy_from_slice(&self.pending);
        self.pending.zeroize();
        self.pending.clear();
        match self.key.seal_segment(self.index, true, body) {
            Ok(t) => tag.copy_from_slice(&t),
            Err(e) => {
                body.zeroize();
                return Err(e.into());
            }
        }
        o += n + pqkit::aead::TAG_LEN;
        Ok(o)
    }
}

/// Encrypts `data` (any length, possibly 0) and writes the stream bytes it completes to `out`, their count to
/// `*out_len`: the header on the first call, then every full 64 KiB segment that more data follows (the last
/// segment waits for [`pqkit_stream_encryptor_finish`]).
///
/// The output is at most `PQKIT_STREAM_MAX_HEADER_LEN + data_len + PQKIT_STREAM_SEGMENT_LEN +
/// 16 * (data_len / PQKIT_STREAM_SEGMENT_LEN + 1)` bytes; if `out_cap` is smaller than what this call
/// writes it returns `PQKIT_STATUS_BUFFER_TOO_SMALL` with the exact size in `*out_len` and consumes nothing.
/// After any other error the stream is unusable (`PQKIT_STATUS_BAD_STATE`).
///
/// # Safety
/// `enc` a live handle; `data` readable for `data_len`, `out` writable for `out_cap` bytes (or NULL with 0),
/// not overlapping; `out_len` valid for a `size_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_stream_encryptor_update(
    enc: *mut PqkitStreamEncryptor,
    data: *const u8,
    data_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and the input buffer.
        let (h, data) = unsafe { (crate::handle(enc)?, input(data, data_len, "data")?) };
        check_out(out_len, "out_len")?;
        if h.done {
            return Err(poisoned());
        }
        let needed = h.update_len(data.len())?;
        // SAFETY (both blocks below): out_len is non-NULL (checked) and valid for a size_t write; out is
        // writable for out_cap >= needed bytes and overlaps no input, by the caller's contract.
        if out_cap < needed {
            // SAFETY: out_len is non-NULL (checked) and valid for a size_t write by the caller's contract.
            unsafe { write_out(out_len, needed, "out_len")? };
            return Err(crate::too_small("stream encryptor output", needed, out_cap));
        }
        // SAFETY: see above.
        let out = unsafe { output(out, needed, "out") }?;
        match h.update(data, out) {
            Ok(n) => {
                debug_assert_eq!(n, needed);
                // SAFETY: see above.
                unsafe { write_out(out_len, n, "out_len") }
            }
            Err(e) => {
                h.done = true;
                Err(e)
            }
        }
    })
}

/// Seals the final segment (the buffered plaintext, 0 to 64 KiB) and writes it, preceded by the header if no
/// update wrote it, to `out`; its size to `*out_len`. Without this call the stream is truncated and a reader
/// rejects it. Needs at most `PQKIT_STREAM_MAX_HEADER_LEN + PQKIT_STREAM_SEGMENT_CT_LEN` bytes
/// (`PQKIT_STATUS_BUFFER_TOO_SMALL` with the exact size otherwise, nothing done). The encryptor is finished
/// afterwards: further calls return `PQKIT_STATUS_BAD_STATE`.
///
/// # Safety
/// `enc` a live handle; `out` writable for `out_cap` bytes; `out_len` valid for a `size_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_stream_encryptor_finish(
    enc: *mut PqkitStreamEncryptor,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle.
        let h = unsafe { crate::handle(enc) }?;
        check_out(out_len, "out_len")?;
        if h.done {
            return Err(poisoned());
        }
        let needed = h.header_len() + h.pending.len() + pqkit::aead::TAG_LEN;
        // SAFETY (this block and the ones below): out_len is non-NULL (checked) and valid for a size_t write;
        // out is writable for out_cap >= needed bytes, by the caller's contract.
        if out_cap < needed {
            // SAFETY: out_len is non-NULL (checked) and valid for a size_t write by the caller's contract.
            unsafe { write_out(out_len, needed, "out_len")? };
            return Err(crate::too_small("stream encryptor final output", needed, out_cap));
        }
        // SAFETY: see above.
        let out = unsafe { output(out, needed, "out") }?;
        h.done = true;
        let n = h.finish(out)?;
        // SAFETY: see above.
        unsafe { write_out(out_len, n, "out_len") }
    })
}

/// Frees an encryptor, wiping its key and buffered plaintext. NULL does nothing.
///
/// # Safety
/// `enc` must be NULL or a live handle, not used again afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_stream_encryptor_free(enc: *mut PqkitStreamEncryptor) {
    // SAFETY: by the caller's contract enc is NULL or a live handle freed only here.
    guard_free(|| unsafe { crate::free_handle(enc) })
}

/// A streaming decryptor (opaque): [`pqkit_stream_decryptor_new`], [`pqkit_stream_decryptor_update`],
/// [`pqkit_stream_decryptor_finish`], [`pqkit_stream_decryptor_free`] (which wipes the key).
pub struct PqkitStreamDecryptor {
    raw_key: Zeroizing<[u8; PQKIT_STREAM_KEY_LEN]>,
    /// Header bytes collected until the header is complete.
    header_buf: Vec<u8>,
    key: Option<FileKey>,
    /// Ciphertext not yet opened: at most one segment with its tag.
    pending: Vec<u8>,
    index: u64,
    done: bool,
}

/// Creates a streaming decryptor for streams made under the 32-byte raw `key` (any algorithm: the header says
/// which) and writes its handle to `*out`.
///
/// # Safety
/// `key` readable for `key_len` bytes; `out` NULL or valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_stream_decryptor_new(
    key: *const u8,
    key_len: usize,
    out: *mut *mut PqkitStreamDecryptor,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the key buffer.
        let key = unsafe { input(key, key_len, "key") }?;
        pqkit::Error::check_length(pqkit::aead::stream::NAME, "key", PQKIT_STREAM_KEY_LEN, key.len())?;
        check_out(out, "out")?;
        let mut raw_key = Zeroizing::new([0u8; PQKIT_STREAM_KEY_LEN]);
        raw_key.copy_from_slice(key);
        let dec = PqkitStreamDecryptor {
            raw_key,
            header_buf: Vec::with_capacity(MAX_HEADER_LEN),
            key: None,
            pending: Vec::with_capacity(SEGMENT_CT_LEN),
            index: 0,
            done: false,
        };
        // SAFETY: out is valid for a pointer write by the caller's contract.
        unsafe { crate::new_handle(out, dec) }
    })
}

impl PqkitStreamDecryptor {
    /// Moves header bytes from `data` into `header_buf`; once the header is complete, parses it and derives
    /// the file key. Returns the rest of `data`.
    fn take_header<'a>(&mut self, mut data: &'a [u8]) -> FfiResult<&'a [u8]> {
        if self.key.is_some() {
            return Ok(data);
        }
        let want = |buf: &Vec<u8>| -> usize {
            if buf.len() < FIXED_HEADER_LEN {
                FIXED_HEADER_LEN
            } else {
                Algorithm::from_id(buf[9]).map_or(FIXED_HEADER_LEN, |a| a.header_len())
            }
        };
        loop {
            let need = want(&self.header_buf);
            if self.header_buf.len() >= need {
                break;
            }
            let take = (need - self.header_buf.len()).min(data.len());
            self.header_buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            // Check what is there so far (the magic first) so a wrong input fails early.
            match Header::parse(&self.header_buf) {
                Ok(_) => break,
                Err(e) if e == errors::HEADER_TRUNCATED => {
                    if data.is_empty() {
                        return Ok(data);
                    }
                }
                Err(e) if e == errors::BAD_MAGIC && self.header_buf.len() < 8 => {
                    if self.header_buf[..] != pqkit::aead::stream::MAGIC[..self.header_buf.len()] {
                        return Err(e.into());
                    }
                    if data.is_empty() {
                        return Ok(data);
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        let header = Header::parse(&self.header_buf)?;
        self.key = Some(FileKey::from_key(&header, &self.raw_key[..])?);
        // The file key is derived; the raw key is not needed any more.
        self.raw_key.zeroize();
        Ok(data)
    }

    /// Bytes of plaintext `update` with `data` (after the header) releases.
    fn update_len(&self, data_len: usize) -> FfiResult<usize> {
        let total = add(self.pending.len(), data_len)?;
        let segments = if total == 0 { 0 } else { (total - 1) / SEGMENT_CT_LEN };
        Ok(segments * SEGMENT_LEN)
    }

    fn open_segments(&mut self, mut data: &[u8], out: &mut [u8]) -> FfiResult<usize> {
        let Some(key) = self.key.as_ref() else {
            self.pending.extend_from_slice(data);
            return Ok(0);
        };
        let mut o = 0;
        while self.pending.len() + data.len() > SEGMENT_CT_LEN {
            let take = SEGMENT_CT_LEN - self.pending.len();
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            let body = &mut out[o..o + SEGMENT_LEN];
            body.copy_from_slice(&self.pending[..SEGMENT_LEN]);
            let r = key.open_segment(self.index, false, body, &self.pending[SEGMENT_LEN..]);
            self.pending.clear();
            if let Err(e) = r {
                // Nothing of this call is released: wipe all it wrote.
                out[..o + SEGMENT_LEN].zeroize();
                return Err(e.into());
            }
            self.index += 1;
            o += SEGMENT_LEN;
        }
        self.pending.extend_from_slice(data);
        Ok(o)
    }
}

/// Feeds stream bytes `data` and writes the plaintext of every segment that authenticated (as a non-final
/// segment: one is opened only once more data follows it) to `out`, its length to `*out_len`.
///
/// Plaintext is released one 64 KiB segment at a time and only after that segment authenticated; but the
/// stream as a whole is authentic and complete only when [`pqkit_stream_decryptor_finish`] returns
/// `PQKIT_STATUS_OK`, so callers that must not act on a prefix should hold the output until then. On an error
/// nothing from this call is released (`out` is zeroed where it was written, `*out_len` is 0) and the
/// decryptor is unusable afterwards. The plaintext of one call is at most `data_len + 64 KiB`; with a smaller
/// `out_cap` the call returns `PQKIT_STATUS_BUFFER_TOO_SMALL` with the size needed in `*out_len` (exact once
/// the header is complete) and consumes nothing. Errors: a bad header (`PQKIT_STATUS_INVALID_ENCODING`), a segment that fails to authenticate
/// (wrong key, corrupted, reordered, spliced: `PQKIT_STATUS_AUTHENTICATION_FAILED`), data after the final
/// segment (`PQKIT_STATUS_INVALID_ENCODING`).
///
/// # Safety
/// `dec` a live handle; `data` readable for `data_len`, `out` writable for `out_cap` bytes (or NULL with 0),
/// not overlapping; `out_len` valid for a `size_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_stream_decryptor_update(
    dec: *mut PqkitStreamDecryptor,
    data: *const u8,
    data_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and the input buffer.
        let (h, data) = unsafe { (crate::handle(dec)?, input(data, data_len, "data")?) };
        check_out(out_len, "out_len")?;
        if h.done {
            return Err(poisoned());
        }
        // An upper bound first (the header may not be complete yet): header bytes release nothing.
        let header_left = if h.key.is_some() {
            0
        } else {
            let len = match h.header_buf.get(9).and_then(|&id| Algorithm::from_id(id)) {
                Some(a) => a.header_len(),
                None => MIN_HEADER_LEN,
            };
            len.saturating_sub(h.header_buf.len())
        };
        let needed = h.update_len(data.len().saturating_sub(header_left))?;
        // SAFETY (this block and the ones below): out_len is non-NULL (checked) and valid for a size_t write;
        // out is writable for out_cap >= needed bytes and overlaps no input, by the caller's contract.
        if out_cap < needed {
            // SAFETY: out_len is non-NULL (checked) and valid for a size_t write by the caller's contract.
            unsafe { write_out(out_len, needed, "out_len")? };
            return Err(crate::too_small("stream decryptor output", needed, out_cap));
        }
        // SAFETY: see above.
        let out = unsafe { output(out, out_cap, "out") }?;
        let r = h.take_header(data).and_then(|rest| h.open_segments(rest, out));
        match r {
            Ok(n) => {
                // SAFETY: see above.
                unsafe { write_out(out_len, n, "out_len") }
            }
            Err(e) => {
                h.done = true;
                // SAFETY: see above.
                unsafe { write_out(out_len, 0, "out_len")? };
                Err(e)
            }
        }
    })
}

/// Ends the stream: opens the buffered last segment as the final one and writes its plaintext (at most
/// 64 KiB) to `out`, its length to `*out_len`. `PQKIT_STATUS_OK` means the whole stream authenticated and is
/// complete. A stream cut after a segment, or cut inside the header or a tag, is rejected
/// (`PQKIT_STATUS_INVALID_ENCODING`); a forged or corrupted last segment is
/// `PQKIT_STATUS_AUTHENTICATION_FAILED`. On error nothing is released. The decryptor is finished afterwards.
///
/// # Safety
/// `dec` a live handle; `out` writable for `out_cap` bytes; `out_len` valid for a `size_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_stream_decryptor_finish(
    dec: *mut PqkitStreamDecryptor,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle.
        let h = unsafe { crate::handle(dec) }?;
        check_out(out_len, "out_len")?;
        if h.done {
            return Err(poisoned());
        }
        let needed = h.pending.len().saturating_sub(pqkit::aead::TAG_LEN);
        // SAFETY (this block and the ones below): out_len is non-NULL (checked) and valid for a size_t write;
        // out is writable for out_cap >= needed bytes, by the caller's contract.
        if out_cap < needed {
            // SAFETY: out_len is non-NULL (checked) and valid for a size_t write by the caller's contract.
            unsafe { write_out(out_len, needed, "out_len")? };
            return Err(crate::too_small("stream decryptor final output", needed, out_cap));
        }
        h.done = true;
        // SAFETY: see above.
        unsafe { write_out(out_len, 0, "out_len")? };
        let Some(key) = h.key.as_ref() else {
            return Err(if h.header_buf.len() < 8 && !h.header_buf.is_empty() {
                errors::BAD_MAGIC
            } else {
                errors::HEADER_TRUNCATED
            }
            .into());
        };
        if h.pending.is_empty() {
            return Err(if h.index == 0 { errors::NO_SEGMENTS } else { errors::TRUNCATED }.into());
        }
        if h.pending.len() < pqkit::aead::TAG_LEN {
            return Err(errors::SHORT_SEGMENT.into());
        }
        // SAFETY: see above.
        let out = unsafe { output(out, needed, "out") }?;
        out.copy_from_slice(&h.pending[..needed]);
        if let Err(e) = key.open_segment(h.index, true, out, &h.pending[needed..]) {
            out.zeroize();
            return Err(e.into());
        }
        // SAFETY: see above.
        unsafe { write_out(out_len, needed, "out_len") }
    })
}

/// Frees a decryptor, wiping its keys. NULL does nothing.
///
/// # Safety
/// `dec` must be NULL or a live handle, not used again afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_stream_decryptor_free(dec: *mut PqkitStreamDecryptor) {
    // SAFETY: by the caller's contract dec is NULL or a live handle freed only here.
    guard_free(|| unsafe { crate::free_handle(dec) })
}
