//! Incremental SHAKE (absorb, then squeeze any number of times), the 512-bit-key stream ciphers Kusumi512 and
//! Threefish-512 in counter mode, the Threefish-512 block cipher, and Skein-512 with any output length.

use crate::{Fail, FfiResult, PqkitStatus, guard, guard_free, handle, input, new_handle, output, unknown_alg};
use pqkit::cipher::StreamCipher;
use pqkit::hash::sha3::{Shake128, Shake256, ShakeReader};
use pqkit::kusumi::Kusumi512;
use pqkit::threefish::{Threefish512, Threefish512Ctr};
use zeroize::Zeroizing;

/// SHAKE being absorbed or squeezed (opaque). Made by [`pqkit_xof_new`], released by [`pqkit_xof_free`].
pub struct PqkitXof {
    state: Xof,
}

enum Xof {
    Absorb128(Shake128),
    Absorb256(Shake256),
    Squeeze(ShakeReader),
}

/// Starts SHAKE128 (`alg_id` 1) or SHAKE256 (2) ([`crate::PqkitXofAlg`]) and writes its handle to `*out`.
///
/// # Safety
/// `out` must be valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_xof_new(alg_id: u32, out: *mut *mut PqkitXof) -> PqkitStatus {
    guard(|| {
        let state = match alg_id {
            1 => Xof::Absorb128(Shake128::new()),
            2 => Xof::Absorb256(Shake256::new()),
            other => return Err(unknown_alg("XOF", other)),
        };
        // SAFETY: out is valid for a pointer write (caller's contract); NULL is refused.
        unsafe { new_handle(out, PqkitXof { state }) }
    })
}

/// Absorbs `data`. After the first [`pqkit_xof_squeeze`] this is `PQKIT_STATUS_BAD_STATE` (the input is closed).
///
/// # Safety
/// `x` a live handle; `data` readable for `data_len` bytes (or NULL with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_xof_update(x: *mut PqkitXof, data: *const u8, data_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and data.
        let (x, data) = unsafe { (handle(x)?, input(data, data_len, "data")?) };
        match &mut x.state {
            Xof::Absorb128(s) => {
                s.update(data);
            }
            Xof::Absorb256(s) => {
                s.update(data);
            }
            Xof::Squeeze(_) => {
                return Err(Fail::new(
                    PqkitStatus::BadState,
                    "pqkit SHAKE: the output is being read; no more input (start a new XOF)",
                ));
            }
        }
        Ok(())
    })
}

/// Writes the next `out_len` bytes of output to `out`. The first call ends the input; successive calls
/// continue the same output stream (squeezing 10 then 20 bytes gives the 30 bytes one call would).
///
/// # Safety
/// `x` a live handle; `out` writable for `out_len` bytes (or NULL with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_xof_squeeze(x: *mut PqkitXof, out: *mut u8, out_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and out.
        let (x, out) = unsafe { (handle(x)?, output(out, out_len, "out")?) };
        let reader = match &x.state {
            Xof::Absorb128(s) => Some(s.finalize_xof()),
            Xof::Absorb256(s) => Some(s.finalize_xof()),
            Xof::Squeeze(_) => None,
        };
        if let Some(r) = reader {
            x.state = Xof::Squeeze(r);
        }
        if let Xof::Squeeze(r) = &mut x.state {
            r.read(out);
        }
        Ok(())
    })
}

/// Releases an XOF handle (its state is wiped). NULL does nothing.
///
/// # Safety
/// `x` NULL or a live handle, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_xof_free(x: *mut PqkitXof) {
    // SAFETY: the caller's contract is free_handle's.
    guard_free(|| unsafe { crate::free_handle(x) })
}

/// Stream cipher ids (pass them as `uint32_t`). Both take a 64-byte key.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitCipherAlg {
    /// Kusumi512 (docs/kusumi512.md): 64-byte key, 12-byte nonce, 100-byte blocks.
    Kusumi512 = 1,
    /// Threefish-512 in counter mode: 64-byte key, 16-byte nonce (the tweak), 64-byte blocks.
    Threefish512Ctr = 2,
}

/// A keyed stream cipher (opaque). Made by [`pqkit_cipher_new`], released (and its key wiped) by
/// [`pqkit_cipher_free`].
pub struct PqkitCipher {
    cipher: Box<dyn StreamCipher + Send>,
}

/// Keys the stream cipher `alg_id` ([`PqkitCipherAlg`]) with `key` (64 bytes) and `nonce` (12 bytes for
/// Kusumi512, 16 for Threefish-512-CTR), its keystream starting at block counter `counter` (usually 0; the
/// vectors of docs/kusumi512-vectors.json give one), and writes its handle to `*out`.
///
/// Security contract: a stream cipher alone authenticates nothing, and a (key, nonce) pair must never encrypt
/// two messages; use an AEAD (`pqkit_aead_*`) unless a protocol needs the bare keystream.
///
/// # Safety
/// `key` and `nonce` readable for their lengths; `out` valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_cipher_new(
    alg_id: u32,
    key: *const u8,
    key_len: usize,
    nonce: *const u8,
    nonce_len: usize,
    counter: u64,
    out: *mut *mut PqkitCipher,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees key and nonce.
        let (key, nonce) = unsafe { (input(key, key_len, "key")?, input(nonce, nonce_len, "nonce")?) };
        crate::check_out(out, "handle out-pointer")?;
        let cipher: Box<dyn StreamCipher + Send> = match alg_id {
            1 => Box::new(Kusumi512::new_with_counter(key, nonce, counter)?),
            2 => Box::new(Threefish512Ctr::new_with_counter(key, nonce, counter)?),
            other => return Err(unknown_alg("stream cipher", other)),
        };
        // SAFETY: out is valid for a pointer write (caller's contract).
        unsafe { new_handle(out, PqkitCipher { cipher }) }
    })
}

/// XORs the next `data_len` bytes of keystream into `data`, in place (encryption and decryption are the same
/// operation). Passing the end of the keystream is `PQKIT_STATUS_COUNTER_EXHAUSTED` with `data` unchanged.
///
/// # Safety
/// `c` a live handle; `data` readable and writable for `data_len` bytes (or NULL with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_cipher_apply_keystream(
    c: *mut PqkitCipher,
    data: *mut u8,
    data_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and data.
        let (c, data) = unsafe { (handle(c)?, output(data, data_len, "data")?) };
        c.cipher.apply_keystream(data)?;
        Ok(())
    })
}

/// Moves to keystream byte `position`, counted from the start of block `counter` given to [`pqkit_cipher_new`].
///
/// # Safety
/// `c` a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_cipher_seek(c: *mut PqkitCipher, position: u64) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle.
        unsafe { handle(c) }?.cipher.seek(position)?;
        Ok(())
    })
}

/// Releases a stream cipher handle and wipes its key. NULL does nothing.
///
/// # Safety
/// `c` NULL or a live handle, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_cipher_free(c: *mut PqkitCipher) {
    // SAFETY: the caller's contract is free_handle's.
    guard_free(|| unsafe { crate::free_handle(c) })
}

/// The body of both Threefish-512 block entry points.
///
/// # Safety
/// `key` and `tweak` readable for their lengths; `block` readable and writable for `block_len` bytes, not
/// overlapping them.
unsafe fn block_entry(
    key: *const u8,
    key_len: usize,
    tweak: *const u8,
    tweak_len: usize,
    block: *mut u8,
    block_len: usize,
    decrypt: bool,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the three buffers, block not overlapping key or tweak.
        let (key, tweak, block) = unsafe {
            (input(key, key_len, "key")?, input(tweak, tweak_len, "tweak")?, output(block, block_len, "block")?)
        };
        threefish_block(key, tweak, block, decrypt)
    })
}

fn threefish_block(key: &[u8], tweak: &[u8], block: &mut [u8], decrypt: bool) -> FfiResult<()> {
    pqkit::Error::check_length("Threefish-512", "key", 64, key.len())?;
    pqkit::Error::check_length("Threefish-512", "tweak", 16, tweak.len())?;
    pqkit::Error::check_length("Threefish-512", "block", 64, block.len())?;
    let mut k = Zeroizing::new([0u8; 64]);
    k.copy_from_slice(key);
    let mut t = [0u8; 16];
    t.copy_from_slice(tweak);
    let tf = Threefish512::new(&k, &t);
    let mut b = Zeroizing::new([0u8; 64]);
    b.copy_from_slice(block);
    if decrypt {
        tf.decrypt_block(&mut b)
    } else {
        tf.encrypt_block(&mut b)
    }
    block.copy_from_slice(&b[..]);
    Ok(())
}

/// Threefish-512 (Skein 1.3 §3.3): encrypts the 64-byte `block` in place under the 64-byte `key` and the
/// 16-byte `tweak`.
///
/// # Safety
/// `key` and `tweak` readable for their lengths; `block` readable and writable for `block_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_threefish512_encrypt_block(
    key: *const u8,
    key_len: usize,
    tweak: *const u8,
    tweak_len: usize,
    block: *mut u8,
    block_len: usize,
) -> PqkitStatus {
    // SAFETY: the caller's contract is block_entry's.
    unsafe { block_entry(key, key_len, tweak, tweak_len, block, block_len, false) }
}

/// Threefish-512: decrypts the 64-byte `block` in place (the inverse of [`pqkit_threefish512_encrypt_block`]).
///
/// # Safety
/// As [`pqkit_threefish512_encrypt_block`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_threefish512_decrypt_block(
    key: *const u8,
    key_len: usize,
    tweak: *const u8,
    tweak_len: usize,
    block: *mut u8,
    block_len: usize,
) -> PqkitStatus {
    // SAFETY: the caller's contract is block_entry's.
    unsafe { block_entry(key, key_len, tweak, tweak_len, block, block_len, true) }
}

/// Skein-512 (Skein 1.3, simple hashing) of `data` with an output of `out_len` bytes (1 or more; Skein-512-256
/// is `out_len` 32, Skein-512-512 is 64). The output length is part of the hash: 32 bytes are not a prefix of
/// the 64-byte output.
///
/// # Safety
/// `data` readable for `data_len` bytes; `out` writable for `out_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_skein512(data: *const u8, data_len: usize, out: *mut u8, out_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both buffers, not overlapping.
        let (data, out) = unsafe { (input(data, data_len, "data")?, output(out, out_len, "out")?) };
        let mut h = pqkit::hash::skein::Skein512::new(out_len)?;
        h.update(data);
        h.finalize_into(out)?;
        Ok(())
    })
}
