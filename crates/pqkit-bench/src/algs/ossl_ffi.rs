//! Thin safe wrappers over the OpenSSL 3 `EVP_MAC` and `EVP_KDF` APIs, which the `openssl` crate does not wrap
//! (or wraps only as one-shot calls that fetch the algorithm and build a context on every call).
//!
//! They exist so that OpenSSL is measured the way a careful C program would use it: the algorithm is fetched
//! and the context created once, outside timing, and reused for every operation.
//! - [`Mac`]: `EVP_MAC_CTX`. For HMAC the key is set once and every operation re-initialises with
//!   `EVP_MAC_init(ctx, NULL, 0, NULL)`, which restarts from the prepared inner/outer hash states (OpenSSL's
//!   `HMAC_Init_ex` with a NULL key). For Poly1305 every operation passes its fresh one-time key.
//! - [`Kdf`]: `EVP_KDF_CTX`. The fixed parameters (digest, salt, info, costs) are set once; each derivation
//!   passes only its input keying material / password, as `EVP_KDF_derive` parameters.
#![allow(unsafe_code)]

use openssl_sys as ffi;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr;

unsafe extern "C" {
    // Public OpenSSL 3.0 API (include/openssl/params.h), not declared by `openssl-sys`.
    fn OSSL_PARAM_construct_utf8_string(key: *const c_char, buf: *mut c_char, bsize: usize) -> ffi::OSSL_PARAM;
    fn OSSL_PARAM_construct_int(key: *const c_char, buf: *mut c_int) -> ffi::OSSL_PARAM;
}

/// A parameter for [`Mac::new`] / [`Kdf::set`].
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
    _ints: Vec<(u32, c_int)>,
}

fn build(list: &[Param<'_>]) -> Built {
    let mut ints: Vec<(u32, c_int)> = list
        .iter()
        .map(|p| match *p {
            Param::Uint(_, v) => (v, 0),
            Param::Int(_, v) => (0, v),
            _ => (0, 0),
        })
        .collect();
    let mut params = Vec::with_capacity(list.len() + 1);
    for (p, slot) in list.iter().zip(ints.iter_mut()) {
        // SAFETY: every constructor only records the key and buffer pointers and sizes; the keys are static C
        // strings and the buffers outlive the returned `Built` (borrowed slices, or `ints`, owned by it and never
        // resized). OpenSSL only reads these buffers on set-params calls.
        let param = unsafe {
            match *p {
                Param::Utf8(k, v) => {
                    OSSL_PARAM_construct_utf8_string(k.as_ptr(), v.as_ptr() as *mut c_char, v.to_bytes().len())
                }
                Param::Octets(k, v) => {
                    ffi::OSSL_PARAM_construct_octet_string(k.as_ptr(), v.as_ptr() as *mut c_void, v.len())
                }
                Param::Uint(k, _) => ffi::OSSL_PARAM_construct_uint(k.as_ptr(), &mut slot.0),
                Param::Int(k, _) => OSSL_PARAM_construct_int(k.as_ptr(), &mut slot.1),
            }
        };
        params.push(param);
    }
    // SAFETY: constructs the terminating empty parameter; no pointers involved.
    params.push(unsafe { ffi::OSSL_PARAM_construct_end() });
    Built { params, _ints: ints }
}

fn err(what: &str) -> String {
    let stack = openssl::error::ErrorStack::get();
    format!("openssl {what} failed: {stack}")
}

/// An `EVP_MAC_CTX` with its fetched `EVP_MAC`.
pub struct Mac {
    mac: *mut ffi::EVP_MAC,
    ctx: *mut ffi::EVP_MAC_CTX,
}

// SAFETY: the context is owned exclusively by this value and used from one thread at a time (`&mut self`);
// OpenSSL contexts may move between threads.
unsafe impl Send for Mac {}

impl Mac {
    /// Fetches MAC `name` (e.g. `HMAC`, `POLY1305`) and creates a context with `params` set.
    pub fn new(name: &CStr, params: &[Param<'_>]) -> Result<Self, String> {
        ffi::init();
        // SAFETY: `name` is a valid C string; NULL library context and properties mean the defaults.
        let mac = unsafe { ffi::EVP_MAC_fetch(ptr::null_mut(), name.as_ptr(), ptr::null()) };
        if mac.is_null() {
            return Err(err(&format!("EVP_MAC_fetch({name:?})")));
        }
        // SAFETY: `mac` is a valid fetched MAC.
        let ctx = unsafe { ffi::EVP_MAC_CTX_new(mac) };
        let m = Mac { mac, ctx };
        if ctx.is_null() {
            return Err(err("EVP_MAC_CTX_new"));
        }
        if !params.is_empty() {
            let b = build(params);
            // SAFETY: `ctx` is valid; `b.params` is an END-terminated array whose buffers live until the call returns.
            if unsafe { ffi::EVP_MAC_CTX_set_params(m.ctx, b.params.as_ptr()) } != 1 {
                return Err(err("EVP_MAC_CTX_set_params"));
            }
        }
        Ok(m)
    }

    /// `EVP_MAC_init`: with `Some(key)` sets a new key; with `None` restarts with the key already set.
    #[inline]
    pub fn init(&mut self, key: Option<&[u8]>) -> Result<(), String> {
        let (p, n) = key.map_or((ptr::null(), 0), |k| (k.as_ptr(), k.len()));
        // SAFETY: `ctx` is valid; `p` is NULL or points to `n` readable bytes.
        if unsafe { ffi::EVP_MAC_init(self.ctx, p, n, ptr::null()) } != 1 {
            return Err(err("EVP_MAC_init"));
        }
        Ok(())
    }

    /// `EVP_MAC_update`.
    #[inline]
    pub fn update(&mut self, data: &[u8]) -> Result<(), String> {
        // SAFETY: `ctx` is valid and initialised; `data` is readable.
        if unsafe { ffi::EVP_MAC_update(self.ctx, data.as_ptr(), data.len()) } != 1 {
            return Err(err("EVP_MAC_update"));
        }
        Ok(())
    }

    /// `EVP_MAC_final` into `out`; returns the tag length.
    #[inline]
    pub fn finalize(&mut self, out: &mut [u8]) -> Result<usize, String> {
        let mut n = 0usize;
        // SAFETY: `ctx` is valid; `out` is writable for `out.len()` bytes, which OpenSSL checks against the tag size.
        if unsafe { ffi::EVP_MAC_final(self.ctx, out.as_mut_ptr(), &mut n, out.len()) } != 1 {
            return Err(err("EVP_MAC_final"));
        }
        Ok(n)
    }
}

impl Drop for Mac {
    fn drop(&mut self) {
        // SAFETY: both pointers came from the matching constructors (or are NULL, which the free functions accept)
        // and are freed once.
        unsafe {
            ffi::EVP_MAC_CTX_free(self.ctx);
            ffi::EVP_MAC_free(self.mac);
        }
    }
}

/// An `EVP_KDF_CTX` with its fetched `EVP_KDF`.
pub struct Kdf {
    kdf: *mut ffi::EVP_KDF,
    ctx: *mut ffi::EVP_KDF_CTX,
}

// SAFETY: as for `Mac`.
unsafe impl Send for Kdf {}

impl Kdf {
    /// Fetches KDF `name` (e.g. `HKDF`, `ARGON2ID`) and creates a context with `params` set.
    pub fn new(name: &CStr, params: &[Param<'_>]) -> Result<Self, String> {
        ffi::init();
        // SAFETY: `name` is a valid C string; NULL library context and properties mean the defaults.
        let kdf = unsafe { ffi::EVP_KDF_fetch(ptr::null_mut(), name.as_ptr(), ptr::null()) };
        if kdf.is_null() {
            return Err(err(&format!("EVP_KDF_fetch({name:?})")));
        }
        // SAFETY: `kdf` is a valid fetched KDF.
        let ctx = unsafe { ffi::EVP_KDF_CTX_new(kdf) };
        let k = Kdf { kdf, ctx };
        if ctx.is_null() {
            return Err(err("EVP_KDF_CTX_new"));
        }
        let b = build(params);
        // SAFETY: `ctx` is valid; `b.params` is END-terminated and its buffers live until the call returns (OpenSSL
        // copies what it keeps).
        if unsafe { kdf_set(k.ctx, b.params.as_ptr()) } != 1 {
            return Err(err("EVP_KDF_CTX_set_params"));
        }
        Ok(k)
    }

    /// `EVP_KDF_derive` into `out`, passing the one per-derivation octet-string parameter `name = value`
    /// (HKDF's `key`, Argon2's `pass`). The parameter array lives on the stack.
    #[inline]
    pub fn derive(&mut self, name: &'static CStr, value: &[u8], out: &mut [u8]) -> Result<(), String> {
        // SAFETY: the parameter points at `value`, which outlives the derive call; OpenSSL copies it.
        let params = unsafe {
            [
                ffi::OSSL_PARAM_construct_octet_string(name.as_ptr(), value.as_ptr() as *mut c_void, value.len()),
                ffi::OSSL_PARAM_construct_end(),
            ]
        };
        // SAFETY: `ctx` is valid; `out` is writable for `out.len()` bytes; `params` is END-terminated.
        if unsafe { ffi::EVP_KDF_derive(self.ctx, out.as_mut_ptr(), out.len(), params.as_ptr()) } != 1 {
            return Err(err("EVP_KDF_derive"));
        }
        Ok(())
    }
}

impl Drop for Kdf {
    fn drop(&mut self) {
        // SAFETY: both pointers came from the matching constructors (or are NULL) and are freed once.
        unsafe {
            ffi::EVP_KDF_CTX_free(self.ctx);
            ffi::EVP_KDF_free(self.kdf);
        }
    }
}

unsafe extern "C" {
    // Public OpenSSL 3.0 API (include/openssl/kdf.h); `openssl-sys` 0.9 does not declare it.
    #[link_name = "EVP_KDF_CTX_set_params"]
    fn kdf_set(ctx: *mut ffi::EVP_KDF_CTX, params: *const ffi::OSSL_PARAM) -> c_int;
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
