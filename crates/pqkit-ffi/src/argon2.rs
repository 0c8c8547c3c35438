//! Argon2id (RFC 9106) and BLAKE2 with a key, salt and personalisation (RFC 7693).

use crate::{PqkitStatus, guard, input, output};
use pqkit::hash::blake2::{Blake2b, Blake2s};
use pqkit::kdf::argon2::{Argon2id, Params};
use zeroize::Zeroize;

/// Argon2id (RFC 9106, version 0x13): fills `out` (at least 4 bytes) from the password `pwd` and `salt` (at
/// least 8 bytes) with `m_cost` KiB of memory, `t_cost` passes and `p_cost` lanes (`m_cost >= 8 * p_cost`);
/// `secret` and `ad` may be empty. Bad costs or lengths give `PQKIT_STATUS_INVALID_PARAMETER` or
/// `PQKIT_STATUS_INVALID_LENGTH`, and leave `out` zeroed.
///
/// # Safety
/// Every buffer readable (writable for `out`) for its length, or NULL with length 0; `out` overlaps none.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_argon2id(
    pwd: *const u8,
    pwd_len: usize,
    salt: *const u8,
    salt_len: usize,
    secret: *const u8,
    secret_len: usize,
    ad: *const u8,
    ad_len: usize,
    m_cost: u32,
    t_cost: u32,
    p_cost: u32,
    out: *mut u8,
    out_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every (pointer, length) pair, with out not overlapping the inputs.
        let (pwd, salt, secret, ad, out) = unsafe {
            (
                input(pwd, pwd_len, "pwd")?,
                input(salt, salt_len, "salt")?,
                input(secret, secret_len, "secret")?,
                input(ad, ad_len, "ad")?,
                output(out, out_len, "out")?,
            )
        };
        let r =
            Params::new(m_cost, t_cost, p_cost).and_then(|p| Argon2id::new(p).hash_with(pwd, salt, secret, ad, out));
        if r.is_err() {
            out.zeroize();
        }
        r?;
        Ok(())
    })
}

/// One BLAKE2 call over already-checked buffers.
fn blake2_into(b2b: bool, key: &[u8], salt: &[u8], personal: &[u8], msg: &[u8], out: &mut [u8]) -> pqkit::Result<()> {
    if b2b {
        let mut h = Blake2b::with_params(key, salt, personal, out.len())?;
        h.update(msg);
        h.finalize_into(out)
    } else {
        let mut h = Blake2s::with_params(key, salt, personal, out.len())?;
        h.update(msg);
        h.finalize_into(out)
    }
}

/// Borrows the five buffers of a BLAKE2 call and runs it.
///
/// # Safety
/// As for [`pqkit_blake2b`].
#[allow(clippy::too_many_arguments)]
unsafe fn blake2_call(
    b2b: bool,
    key: *const u8,
    key_len: usize,
    salt: *const u8,
    salt_len: usize,
    personal: *const u8,
    personal_len: usize,
    msg: *const u8,
    msg_len: usize,
    out: *mut u8,
    out_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every (pointer, length) pair, with out not overlapping the inputs.
        let (key, salt, personal, msg, out) = unsafe {
            (
                input(key, key_len, "key")?,
                input(salt, salt_len, "salt")?,
                input(personal, personal_len, "personal")?,
                input(msg, msg_len, "msg")?,
                output(out, out_len, "out")?,
            )
        };
        blake2_into(b2b, key, salt, personal, msg, out)?;
        Ok(())
    })
}

/// BLAKE2b of `msg` into `out` (1 to 64 bytes, the digest length), with `key` (0 to 64 bytes: keyed, a MAC),
/// `salt` and `personal` (0 to 16 bytes each, zero-padded). Empty key, salt and personal give plain BLAKE2b.
///
/// # Safety
/// Every buffer readable (writable for `out`) for its length, or NULL with length 0; `out` overlaps none.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_blake2b(
    key: *const u8,
    key_len: usize,
    salt: *const u8,
    salt_len: usize,
    personal: *const u8,
    personal_len: usize,
    msg: *const u8,
    msg_len: usize,
    out: *mut u8,
    out_len: usize,
) -> PqkitStatus {
    // SAFETY: the caller's guarantees are this function's.
    unsafe { blake2_call(true, key, key_len, salt, salt_len, personal, personal_len, msg, msg_len, out, out_len) }
}

/// BLAKE2s of `msg` into `out` (1 to 32 bytes), with `key` (0 to 32 bytes), `salt` and `personal` (0 to 8
/// bytes each).
///
/// # Safety
/// Every buffer readable (writable for `out`) for its length, or NULL with length 0; `out` overlaps none.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_blake2s(
    key: *const u8,
    key_len: usize,
    salt: *const u8,
    salt_len: usize,
    personal: *const u8,
    personal_len: usize,
    msg: *const u8,
    msg_len: usize,
    out: *mut u8,
    out_len: usize,
) -> PqkitStatus {
    // SAFETY: the caller's guarantees are this function's.
    unsafe { blake2_call(false, key, key_len, salt, salt_len, personal, personal_len, msg, msg_len, out, out_len) }
}
