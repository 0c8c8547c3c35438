//! `EVP_MAC`: HMAC and Poly1305 with one context reused for every operation.

use super::{Param, build, err, ffi};
use std::ffi::CStr;
use std::ptr;

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
