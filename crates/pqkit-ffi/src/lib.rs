//! The C ABI of pqkit.
//!
//! This crate builds `libpqkit_ffi.so` and `libpqkit_ffi.a`; their header, `include/pqkit.h`, is generated
//! from this source by `cbindgen` (configuration in `cbindgen.toml`) and committed. It exposes the AEADs (one-shot
//! and the streaming file format), the hashes, SHAKE (one-shot and incremental), HMAC, HKDF, ML-KEM, ML-DSA,
//! key handles with PEM and DER import and export (Ed25519, X25519, P-256, secp256k1, RSA), RSA PSS, PKCS#1
//! v1.5 and OAEP, HPKE, X-Wing and X25519MLKEM768, encryption to recipients, Kusumi512, Threefish-512 and
//! Skein-512, Argon2id and the random number generators, all implemented by the `pqkit` crate, and agents on
//! the message bus over NATS, implemented by the `pqkit-bus` crate; this crate only checks arguments and moves
//! bytes.
//!
//! ## Conventions (the security contract of every function)
//! - Every function returns a [`PqkitStatus`] (`PQKIT_STATUS_OK` is 0), except the `*_free` functions (which
//!   return nothing), [`pqkit_status_string`], [`pqkit_last_error`] and [`pqkit_version`].
//! - Algorithms are chosen with `uint32_t` ids from the enums [`PqkitAeadAlg`], [`PqkitHashAlg`],
//!   [`PqkitXofAlg`], [`PqkitStreamAlg`], [`PqkitMlkemAlg`], [`PqkitMldsaAlg`]; an unknown id is
//!   `PQKIT_STATUS_UNKNOWN_ALGORITHM`.
//! - Every buffer comes with an explicit length. A pointer may be NULL only when its length is 0; otherwise NULL
//!   is `PQKIT_STATUS_NULL_POINTER`. Input and output buffers must not overlap.
//! - Fixed-size outputs (digests, keys, shared secrets, signatures) must be given exactly their size, else
//!   `PQKIT_STATUS_INVALID_LENGTH`. Variable outputs take a capacity and an `out_len`: if the capacity is too
//!   small the call returns `PQKIT_STATUS_BUFFER_TOO_SMALL`, writes the size needed to `*out_len` and changes
//!   nothing else.
//! - Handles are opaque, created by `*_new`, `*_generate` or `*_import` (written to an out-pointer) and released
//!   by `*_free`, which wipes any key material they hold; `*_free(NULL)` does nothing. A handle may be used by
//!   one thread at a time.
//! - No Rust panic crosses the boundary: one would be caught and returned as `PQKIT_STATUS_INTERNAL_ERROR`.
//! - On any error no plaintext, secret or partial result is released: the output buffer is left unchanged or
//!   zeroed (documented per function).
//! - [`pqkit_last_error`] gives the message of the last error on the calling thread (algorithm, field and
//!   expected size, never secret content).

use core::ffi::c_char;
use std::cell::RefCell;
use std::ffi::CString;
use std::panic::{AssertUnwindSafe, catch_unwind};

mod aead;
mod argon2;
mod bus;
mod ec;
mod ecdsa;
mod hash;
mod hpke;
mod hybrid;
mod keys;
mod pq;
mod primitives;
mod recipients;
mod rng;
mod rsa;
mod stream;

pub use aead::*;
pub use argon2::*;
pub use bus::*;
pub use ec::*;
pub use ecdsa::*;
pub use hash::*;
pub use hpke::*;
pub use hybrid::*;
pub use keys::*;
pub use pq::*;
pub use primitives::*;
pub use recipients::*;
pub use rng::*;
pub use rsa::*;
pub use stream::*;

/// The result of every fallible function. `PQKIT_STATUS_OK` (0) is success; every other value is an error and
/// [`pqkit_last_error`] has its message.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitStatus {
    /// Success.
    Ok = 0,
    /// A pointer was NULL while its length was not 0 (or an out-pointer or handle was NULL).
    NullPointer = 1,
    /// An input or a fixed-size output had the wrong length (key, nonce, tag, digest, key encoding...).
    InvalidLength = 2,
    /// An output buffer is too small; `*out_len` holds the size needed and nothing was done.
    BufferTooSmall = 3,
    /// A tag or signature did not verify, or a stream segment did not authenticate. No plaintext was released.
    AuthenticationFailed = 4,
    /// An encoding (stream header, key, ciphertext) is malformed, or a stream was truncated or extended.
    InvalidEncoding = 5,
    /// A parameter is out of range (e.g. an HKDF output longer than 255 hash lengths).
    InvalidParameter = 6,
    /// A message is longer than the algorithm allows under one nonce.
    MessageTooLong = 7,
    /// A counter would pass its maximum (never wrapped).
    CounterExhausted = 8,
    /// The operating system's random number generator failed.
    RngFailure = 9,
    /// An algorithm id is not one of the enum's values.
    UnknownAlgorithm = 10,
    /// The handle cannot do this now: a stream already finished or that failed earlier.
    BadState = 11,
    /// A bug: a Rust panic was caught at the boundary. Please report it.
    InternalError = 12,
    /// The bus key server's policy does not allow this agent to connect, publish or subscribe here.
    Unauthorised = 13,
    /// A bus receive or request timed out.
    Timeout = 14,
    /// A bus request reached no subscriber.
    NoResponders = 15,
    /// The NATS transport failed: the server could not be reached, the connection was lost, the key-server
    /// handshake failed, or JetStream refused an operation.
    Transport = 16,
}

/// An error: the status plus the message kept for [`pqkit_last_error`].
pub(crate) struct Fail {
    status: PqkitStatus,
    message: String,
}

pub(crate) type FfiResult<T> = Result<T, Fail>;

impl Fail {
    pub(crate) fn new(status: PqkitStatus, message: impl Into<String>) -> Self {
        Fail { status, message: message.into() }
    }
}

impl From<pqkit::Error> for Fail {
    fn from(e: pqkit::Error) -> Self {
        Fail { status: status_of(&e), message: e.to_string() }
    }
}

/// The status of a pqkit error.
pub(crate) fn status_of(e: &pqkit::Error) -> PqkitStatus {
    use pqkit::Error as E;
    match e {
        E::InvalidLength { .. } => PqkitStatus::InvalidLength,
        E::AuthenticationFailed { .. } => PqkitStatus::AuthenticationFailed,
        E::CounterExhausted { .. } => PqkitStatus::CounterExhausted,
        E::MessageTooLong { .. } => PqkitStatus::MessageTooLong,
        E::InvalidEncoding { .. } => PqkitStatus::InvalidEncoding,
        E::Rng => PqkitStatus::RngFailure,
        // InvalidParameter, BackendUnavailable and future variants.
        _ => PqkitStatus::InvalidParameter,
    }
}

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

fn set_last_error(message: &str) {
    // Messages are ours and never hold NUL; if one did, keep the part before it.
    let message = message.split('\0').next().unwrap_or_default();
    let c = CString::new(message).unwrap_or_default();
    LAST_ERROR.with(|l| *l.borrow_mut() = Some(c));
}

/// Runs `f`, catching any panic, and turns its result into a status (recording the message of an error).
pub(crate) fn guard(f: impl FnOnce() -> FfiResult<()>) -> PqkitStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => PqkitStatus::Ok,
        Ok(Err(fail)) => {
            set_last_error(&fail.message);
            fail.status
        }
        Err(_) => {
            set_last_error("pqkit internal error: a panic was caught at the C boundary (please report it)");
            PqkitStatus::InternalError
        }
    }
}

/// Runs a `*_free` body, swallowing any panic (there is no status to return it in).
pub(crate) fn guard_free(f: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(f));
}

pub(crate) fn null(what: &str) -> Fail {
    Fail::new(PqkitStatus::NullPointer, format!("pqkit: {what} is NULL"))
}

pub(crate) fn unknown_alg(kind: &str, id: u32) -> Fail {
    Fail::new(PqkitStatus::UnknownAlgorithm, format!("pqkit: unknown {kind} algorithm id {id}"))
}

pub(crate) fn too_small(what: &str, needed: usize, cap: usize) -> Fail {
    Fail::new(PqkitStatus::BufferTooSmall, format!("pqkit: {what} needs {needed} bytes, capacity is {cap}"))
}

/// Borrows the input buffer `(ptr, len)`; NULL is allowed only with `len == 0`.
///
/// # Safety
/// If `ptr` is not NULL it must point to `len` readable bytes that stay valid and unmodified for `'a`.
pub(crate) unsafe fn input<'a>(ptr: *const u8, len: usize, what: &str) -> FfiResult<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(null(what));
    }
    if len > isize::MAX as usize {
        return Err(Fail::new(PqkitStatus::InvalidLength, format!("pqkit: {what} length {len} is too large")));
    }
    // SAFETY: ptr is non-NULL and, by this function's contract, points to `len` readable bytes valid for 'a;
    // len <= isize::MAX was checked.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// Borrows the output buffer `(ptr, len)`; NULL is allowed only with `len == 0`.
///
/// # Safety
/// If `ptr` is not NULL it must point to `len` writable bytes, valid for `'a` and not aliased by any other
/// buffer of the same call.
pub(crate) unsafe fn output<'a>(ptr: *mut u8, len: usize, what: &str) -> FfiResult<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(null(what));
    }
    if len > isize::MAX as usize {
        return Err(Fail::new(PqkitStatus::InvalidLength, format!("pqkit: {what} length {len} is too large")));
    }
    // SAFETY: ptr is non-NULL and, by this function's contract, points to `len` writable bytes valid for 'a
    // and not aliased; len <= isize::MAX was checked.
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

/// Writes `value` through the out-pointer `ptr`.
///
/// # Safety
/// If `ptr` is not NULL it must be valid for a write of `T` and suitably aligned.
pub(crate) unsafe fn write_out<T>(ptr: *mut T, value: T, what: &str) -> FfiResult<()> {
    if ptr.is_null() {
        return Err(null(what));
    }
    // SAFETY: ptr is non-NULL and, by this function's contract, valid and aligned for a write of T.
    unsafe { ptr.write(value) };
    Ok(())
}

/// Checks that an out-pointer is not NULL (before any work is done, so a NULL out-pointer changes nothing).
pub(crate) fn check_out<T>(ptr: *mut T, what: &str) -> FfiResult<()> {
    if ptr.is_null() { Err(null(what)) } else { Ok(()) }
}

/// Writes a variable-length result: if `out_cap` is too small, writes the size needed to `*out_len` and
/// returns `PQKIT_STATUS_BUFFER_TOO_SMALL` without writing `out`; else copies `bytes` to `out` and its length
/// to `*out_len`.
///
/// # Safety
/// `out` must be NULL or writable for `out_cap` bytes, not overlapping `bytes`; `out_len` NULL or valid for a
/// `size_t` write.
pub(crate) unsafe fn emit(
    bytes: &[u8],
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    what: &str,
) -> FfiResult<()> {
    check_out(out_len, "out_len")?;
    if out_cap < bytes.len() {
        // SAFETY: out_len is not NULL (checked) and valid for a write by this function's contract.
        unsafe { write_out(out_len, bytes.len(), "out_len")? };
        return Err(too_small(what, bytes.len(), out_cap));
    }
    // SAFETY: out is writable for out_cap >= bytes.len() bytes by this function's contract.
    unsafe { output(out, bytes.len(), "out")? }.copy_from_slice(bytes);
    // SAFETY: as above.
    unsafe { write_out(out_len, bytes.len(), "out_len") }
}

/// Moves `value` to the heap and writes the handle to `*out`.
///
/// # Safety
/// `out` must be NULL or valid for a write of a pointer.
pub(crate) unsafe fn new_handle<T>(out: *mut *mut T, value: T) -> FfiResult<()> {
    check_out(out, "handle out-pointer")?;
    let raw = Box::into_raw(Box::new(value));
    // SAFETY: out is non-NULL (checked) and valid for a pointer write by this function's contract.
    unsafe { write_out(out, raw, "handle out-pointer") }
}

/// Borrows the object behind a handle.
///
/// # Safety
/// `h` must be NULL or a handle returned by the matching `*_new` and not yet freed, used by no other thread
/// during `'a`.
pub(crate) unsafe fn handle<'a, T>(h: *mut T) -> FfiResult<&'a mut T> {
    // SAFETY: by this function's contract h is NULL or a live, exclusively used Box<T> pointer.
    unsafe { h.as_mut() }.ok_or_else(|| null("handle"))
}

/// Borrows the object behind a handle for reading.
///
/// # Safety
/// `h` must be NULL or a handle returned by the matching `*_new` and not yet freed, not written by another
/// thread during `'a`.
pub(crate) unsafe fn handle_ref<'a, T>(h: *const T) -> FfiResult<&'a T> {
    // SAFETY: by this function's contract h is NULL or a live Box<T> pointer not mutated during 'a.
    unsafe { h.as_ref() }.ok_or_else(|| null("handle"))
}

/// Frees a handle made by [`new_handle`]; dropping the value wipes its secrets.
///
/// # Safety
/// `h` must be NULL or a handle returned by the matching `*_new` and not yet freed.
pub(crate) unsafe fn free_handle<T>(h: *mut T) {
    if !h.is_null() {
        // SAFETY: h came from Box::into_raw in new_handle and is freed only once, by this function's contract.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// The library version, e.g. `"0.1.0"`, as a static NUL-terminated string.
#[unsafe(no_mangle)]
pub extern "C" fn pqkit_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// A static NUL-terminated description of a status code (an unknown code gives `"unknown status"`).
#[unsafe(no_mangle)]
pub extern "C" fn pqkit_status_string(status: i32) -> *const c_char {
    let s: &'static str = match status {
        0 => "ok\0",
        1 => "NULL pointer\0",
        2 => "invalid length\0",
        3 => "buffer too small\0",
        4 => "authentication failed\0",
        5 => "invalid encoding\0",
        6 => "invalid parameter\0",
        7 => "message too long\0",
        8 => "counter exhausted\0",
        9 => "random number generator failure\0",
        10 => "unknown algorithm\0",
        11 => "bad state\0",
        12 => "internal error\0",
        13 => "unauthorised by the bus policy\0",
        14 => "timed out\0",
        15 => "no responders\0",
        16 => "NATS transport failure\0",
        _ => "unknown status\0",
    };
    s.as_ptr().cast()
}

/// The message of the last error on the calling thread, as a NUL-terminated string, or NULL if no call on
/// this thread has failed yet. The pointer stays valid until the next failing pqkit call on the same thread.
/// Messages name the algorithm, the field and the expected size; they never hold secret data.
#[unsafe(no_mangle)]
pub extern "C" fn pqkit_last_error() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ref().map_or(core::ptr::null(), |c| c.as_ptr()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_internal_error_with_a_message() {
        let st = guard(|| panic!("boom"));
        assert_eq!(st, PqkitStatus::InternalError);
        // SAFETY: pqkit_last_error returns NULL or a NUL-terminated string valid until the next failing call.
        let msg = unsafe { std::ffi::CStr::from_ptr(pqkit_last_error()) }.to_str().unwrap();
        assert!(msg.contains("panic was caught"), "{msg}");
    }

    #[test]
    fn errors_map_to_their_status() {
        let st = guard(|| Err(pqkit::Error::length("X", "key", 32, 1).into()));
        assert_eq!(st, PqkitStatus::InvalidLength);
        // SAFETY: as above.
        let msg = unsafe { std::ffi::CStr::from_ptr(pqkit_last_error()) }.to_str().unwrap();
        assert_eq!(msg, "X key must be 32 bytes, got 1");
        assert_eq!(guard(|| Err(pqkit::Error::Rng.into())), PqkitStatus::RngFailure);
        assert_eq!(guard(|| Ok(())), PqkitStatus::Ok);
    }
}
