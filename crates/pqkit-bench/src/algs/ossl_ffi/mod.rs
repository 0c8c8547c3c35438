//! The benchmark's one OpenSSL layer: every family reaches OpenSSL (the vendored OpenSSL 3 that `openssl-sys`
//! links into this binary) through this module, and no other module calls OpenSSL or declares its functions.
//!
//! It exists so that OpenSSL is measured the way a careful C program would use it: the algorithm is fetched and
//! the context created once, outside timing, and reused for every operation.
//! - [`Aead`], [`Stream`]: `EVP_CIPHER_CTX`, keyed once (through the `openssl` crate's safe wrappers). An AEAD
//!   operation re-initialises only the nonce.
//! - [`Digest`]: a fetched `EVP_MD` and one `EVP_MD_CTX`, re-initialised per operation (`EVP_DigestInit_ex` with
//!   the same fetched digest reuses the provider context).
//! - [`Mac`]: `EVP_MAC_CTX`, which the `openssl` crate does not wrap. For HMAC the key is set once and every
//!   operation re-initialises with `EVP_MAC_init(ctx, NULL, 0, NULL)`, which restarts from the prepared
//!   inner/outer hash states (OpenSSL's `HMAC_Init_ex` with a NULL key). For Poly1305 every operation passes its
//!   fresh one-time key.
//! - [`Kdf`]: `EVP_KDF_CTX`, likewise unwrapped there. The fixed parameters (digest, salt, info, costs) are set
//!   once; each derivation passes only its input keying material / password, as `EVP_KDF_derive` parameters.
//! - [`Pkey`], [`Keyed`]: ML-KEM and ML-DSA through `EVP_PKEY` / `EVP_PKEY_CTX` (key generation from a seed,
//!   KEM encapsulation, message signing with parameters), with one operation context per key; Ed25519 likewise
//!   (keys from their raw seed, pure message signing and verification).
//! - [`Rsa`], [`RsaKeygen`]: RSA keys from PKCS#8 DER or their components, key generation, PSS and PKCS#1 v1.5
//!   signatures over SHA-256 and OAEP-SHA-256 encryption, one reused `EVP_PKEY_CTX` per key and operation.
//! - [`Agreement`]: X25519 key agreement, one `EVP_PKEY_CTX` per (private key, peer) pair, initialised for
//!   derivation with the peer set once.
//!
//! Raw calls use the declarations of `openssl-sys`; the few public OpenSSL 3 functions it lacks are declared
//! once, here. `OSSL_PARAM` arrays are built here too, in Rust ([`Param`] for set-up, `octets`, `int` and
//! `end` for the parameters passed per operation), with the layout OpenSSL's `OSSL_PARAM_construct_*` give.
#![allow(unsafe_code)]

mod cipher;
mod digest;
mod kdf;
mod mac;
mod pkey;
mod rsa;

pub use cipher::{Aead, Cipher, CipherRef, Stream};
pub use digest::Digest;
pub use kdf::Kdf;
pub use mac::Mac;
pub use pkey::{Agreement, Keyed, Pkey};
pub use rsa::{Padding as RsaPadding, Rsa, RsaKeygen};

use openssl_sys as ffi;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::ptr::{null, null_mut};

unsafe extern "C" {
    // Public OpenSSL 3.0 API (include/openssl/kdf.h, include/openssl/evp.h) that `openssl-sys` 0.9 does not
    // declare.
    fn EVP_KDF_CTX_set_params(ctx: *mut ffi::EVP_KDF_CTX, params: *const ffi::OSSL_PARAM) -> c_int;
    fn EVP_PKEY_CTX_new_from_pkey(
        lib: *mut ffi::OSSL_LIB_CTX,
        pkey: *mut ffi::EVP_PKEY,
        propq: *const c_char,
    ) -> *mut ffi::EVP_PKEY_CTX;
}

/// OpenSSL's version string, e.g. `OpenSSL 3.6.0 1 Oct 2025`.
pub fn version() -> String {
    openssl::version::version().to_string()
}

/// Stringifies an error of the `openssl` crate.
fn e(err: openssl::error::ErrorStack) -> String {
    err.to_string()
}

/// The error of a failed raw call: `what` and this thread's OpenSSL error queue, which it empties.
fn err(what: &str) -> String {
    let stack = openssl::error::ErrorStack::get();
    format!("openssl {what} failed: {stack}")
}

/// Empties this thread's OpenSSL error queue (after an expected failure, such as a rejected signature, so that
/// errors do not pile up).
fn clear_errors() {
    // SAFETY: clears this thread's OpenSSL error queue; no pointers involved.
    unsafe { ffi::ERR_clear_error() };
}

// ---------------------------------------------------------------------------------------------- OSSL_PARAM

// include/openssl/core.h and params.h.
const OSSL_PARAM_INTEGER: c_uint = 1;
const OSSL_PARAM_UNSIGNED_INTEGER: c_uint = 2;
const OSSL_PARAM_UTF8_STRING: c_uint = 4;
const OSSL_PARAM_OCTET_STRING: c_uint = 5;
const OSSL_PARAM_UNMODIFIED: usize = usize::MAX;

/// One `OSSL_PARAM`, as OpenSSL's constructors fill it. It records the pointer only: the caller keeps `data`
/// alive and in place for as long as OpenSSL may read it (the call it is passed to).
#[inline]
fn param(key: &'static CStr, data_type: c_uint, data: *mut c_void, data_size: usize) -> ffi::OSSL_PARAM {
    ffi::OSSL_PARAM { key: key.as_ptr(), data_type, data, data_size, return_size: OSSL_PARAM_UNMODIFIED }
}

/// An octet-string parameter pointing at `data` (`OSSL_PARAM_construct_octet_string`).
#[inline]
fn octets(key: &'static CStr, data: &[u8]) -> ffi::OSSL_PARAM {
    param(key, OSSL_PARAM_OCTET_STRING, data.as_ptr() as *mut c_void, data.len())
}

/// A signed integer parameter pointing at `v` (`OSSL_PARAM_construct_int`).
#[inline]
fn int(key: &'static CStr, v: &mut c_int) -> ffi::OSSL_PARAM {
    param(key, OSSL_PARAM_INTEGER, (v as *mut c_int).cast(), size_of::<c_int>())
}

/// The terminating parameter (`OSSL_PARAM_construct_end`).
#[inline]
fn end() -> ffi::OSSL_PARAM {
    ffi::OSSL_PARAM { key: null(), data_type: 0, data: null_mut(), data_size: 0, return_size: 0 }
}

/// A parameter for [`Mac::new`] / [`Kdf::new`].
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    /// A UTF-8 string parameter (e.g. `digest`).
    Utf8(&'static CStr, &'a CStr),
    /// An octet-string parameter (e.g. `salt`, `info`, `key`, `pass`).
    Octets(&'static CStr, &'a [u8]),
    /// An unsigned integer parameter (e.g. `iter`, `memcost`).
    Uint(&'static CStr, u32),
    /// A signed integer parameter (e.g. HKDF's `mode`).
    Int(&'static CStr, i32),
}

/// An `OSSL_PARAM` array with the storage its integer values point into.
struct Built {
    params: Vec<ffi::OSSL_PARAM>,
    /// One slot per parameter, allocated once before any pointer into it is taken and never resized (moving
    /// the `Vec` does not move its heap buffer).
    _ints: Vec<(c_uint, c_int)>,
}

/// Builds the END-terminated array of `list`. The string and octet parameters point into `list`'s borrowed
/// values, so the array is valid while they are.
fn build(list: &[Param<'_>]) -> Built {
    let mut ints: Vec<(c_uint, c_int)> = list
        .iter()
        .map(|p| match *p {
            Param::Uint(_, v) => (v, 0),
            Param::Int(_, v) => (0, v),
            _ => (0, 0),
        })
        .collect();
    let mut params = Vec::with_capacity(list.len() + 1);
    for (p, slot) in list.iter().zip(ints.iter_mut()) {
        params.push(match *p {
            Param::Utf8(k, v) => param(k, OSSL_PARAM_UTF8_STRING, v.as_ptr() as *mut c_void, v.to_bytes().len()),
            Param::Octets(k, v) => octets(k, v),
            Param::Uint(k, _) => {
                param(k, OSSL_PARAM_UNSIGNED_INTEGER, (&mut slot.0 as *mut c_uint).cast(), size_of::<c_uint>())
            }
            Param::Int(k, _) => int(k, &mut slot.1),
        });
    }
    params.push(end());
    Built { params, _ints: ints }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_reinit_reuses_the_key_and_matches_rfc4231() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let mut m = Mac::new(c"HMAC", &[Param::Utf8(c"digest", c"SHA256")]).unwrap();
        m.init(Some(b"Jefe")).unwrap();
        let want = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
        for _ in 0..3 {
            m.init(None).unwrap();
            m.update(b"what do ya want for nothing?").unwrap();
            let mut tag = [0u8; 32];
            assert_eq!(m.finalize(&mut tag).unwrap(), 32);
            let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(hex, want);
        }
    }

    #[test]
    fn hkdf_matches_rfc5869_case1() {
        let salt: Vec<u8> = (0..=0x0c).collect();
        let info: Vec<u8> = (0xf0..=0xf9).collect();
        let mut k = Kdf::new(
            c"HKDF",
            &[Param::Utf8(c"digest", c"SHA256"), Param::Octets(c"salt", &salt), Param::Octets(c"info", &info)],
        )
        .unwrap();
        let mut okm = [0u8; 42];
        k.derive(c"key", &[0x0b; 22], &mut okm).unwrap();
        let hex: String = okm.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
    }
}
