//! `EVP_KDF`: HKDF and Argon2id with the fixed parameters set once.

use super::{EVP_KDF_CTX_set_params, Param, build, end, err, ffi, octets};
use std::ffi::CStr;
use std::ptr;

/// An `EVP_KDF_CTX` with its fetched `EVP_KDF`.
pub struct Kdf {
    kdf: *mut ffi::EVP_KDF,
    ctx: *mut ffi::EVP_KDF_CTX,
}

// SAFETY: as for `Mac`: owned exclusively, used through `&mut self`; OpenSSL contexts may move between threads.
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
        if unsafe { EVP_KDF_CTX_set_params(k.ctx, b.params.as_ptr()) } != 1 {
            return Err(err("EVP_KDF_CTX_set_params"));
        }
        Ok(k)
    }

    /// `EVP_KDF_derive` into `out`, passing the one per-derivation octet-string parameter `name = value`
    /// (HKDF's `key`, Argon2's `pass`). The parameter array lives on the stack.
    #[inline]
    pub fn derive(&mut self, name: &'static CStr, value: &[u8], out: &mut [u8]) -> Result<(), String> {
        // The parameter points at `value`, which outlives the derive call; OpenSSL copies it.
        let params = [octets(name, value), end()];
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
