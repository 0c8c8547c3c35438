//! RSA through `EVP_PKEY`: private keys from PKCS#8 DER, public keys from their components (`EVP_PKEY_fromdata`),
//! key generation (`EVP_PKEY_generate` with a reused key-generation context), RSASSA-PSS and RSASSA-PKCS1-v1_5
//! with SHA-256, and RSAES-OAEP with SHA-256 (MGF1-SHA-256, empty label).
//!
//! As a careful C program would: every key gets one `EVP_PKEY_CTX` per operation (sign PSS, sign PKCS#1,
//! verify PSS, verify PKCS#1, encrypt, decrypt), initialised with its padding parameters on first use and
//! reused for every later operation (`EVP_PKEY_sign`, `EVP_PKEY_verify`, `EVP_PKEY_encrypt` and
//! `EVP_PKEY_decrypt` leave the context ready for the next call). Signing and verification take the SHA-256
//! digest of the message, computed by OpenSSL (`SHA256()`) inside the timed operation, which is what
//! `EVP_DigestSign` does too, minus its per-call context set-up. (OpenSSL 3.4+'s one-shot message signing,
//! `EVP_PKEY_sign_message_init` with "RSA-SHA256", does not support PSS.)

use super::{EVP_PKEY_CTX_new_from_pkey, Param, build, clear_errors, end, err, ffi, param};
use std::ffi::CStr;
use std::ptr::{null, null_mut};
use std::sync::Mutex;

/// The signature padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// RSASSA-PSS, SHA-256, MGF1-SHA-256, salt length = digest length.
    Pss,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Pkcs1,
}

/// An owned RSA `EVP_PKEY`.
struct RsaPkey(*mut ffi::EVP_PKEY);
// SAFETY: an EVP_PKEY is reference counted and safe to share between threads for read-only use; every operation
// goes through a context of its own, used under a Mutex.
unsafe impl Send for RsaPkey {}
// SAFETY: as above.
unsafe impl Sync for RsaPkey {}
impl Drop for RsaPkey {
    fn drop(&mut self) {
        // SAFETY: we own the key (non-null, from d2i / fromdata / generate).
        unsafe { ffi::EVP_PKEY_free(self.0) }
    }
}

/// An owned `EVP_PKEY_CTX`.
struct PkeyCtx(*mut ffi::EVP_PKEY_CTX);
// SAFETY: a context is used by one thread at a time, under the Mutex that holds it.
unsafe impl Send for PkeyCtx {}
impl Drop for PkeyCtx {
    fn drop(&mut self) {
        // SAFETY: we own the context (non-null).
        unsafe { ffi::EVP_PKEY_CTX_free(self.0) }
    }
}

/// The operations a key's contexts are initialised for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operation {
    SignPss,
    SignPkcs1,
    VerifyPss,
    VerifyPkcs1,
    Encrypt,
    Decrypt,
}

/// An RSA key (private, or public only) with one lazily made operation context per `Operation`.
pub struct Rsa {
    pkey: RsaPkey,
    ctxs: Mutex<Vec<(Operation, PkeyCtx)>>,
}

/// `SHA256()` (include/openssl/sha.h), declared by `openssl-sys`.
fn sha256(msg: &[u8]) -> [u8; 32] {
    let mut md = [0u8; 32];
    // SAFETY: `msg` is valid for its length and `md` has room for the 32-byte digest.
    unsafe { ffi::SHA256(msg.as_ptr(), msg.len(), md.as_mut_ptr()) };
    md
}

/// The padding parameters of `op` (pad mode, digests, salt length).
fn op_params(op: Operation) -> Vec<Param<'static>> {
    match op {
        Operation::SignPss | Operation::VerifyPss => vec![
            Param::Utf8(c"pad-mode", c"pss"),
            Param::Utf8(c"digest", c"SHA256"),
            Param::Utf8(c"mgf1-digest", c"SHA256"),
            Param::Utf8(c"saltlen", c"digest"),
        ],
        Operation::SignPkcs1 | Operation::VerifyPkcs1 => {
            vec![Param::Utf8(c"pad-mode", c"pkcs1"), Param::Utf8(c"digest", c"SHA256")]
        }
        Operation::Encrypt | Operation::Decrypt => vec![
            Param::Utf8(c"pad-mode", c"oaep"),
            Param::Utf8(c"digest", c"SHA256"),
            Param::Utf8(c"mgf1-digest", c"SHA256"),
        ],
    }
}

impl Rsa {
    fn wrap(p: *mut ffi::EVP_PKEY) -> Rsa {
        Rsa { pkey: RsaPkey(p), ctxs: Mutex::new(Vec::new()) }
    }

    /// A private key from its PKCS#8 (or PKCS#1) DER encoding.
    pub fn private_from_der(der: &[u8]) -> Result<Rsa, String> {
        ffi::init();
        let mut p = der.as_ptr();
        let len = std::ffi::c_long::try_from(der.len()).map_err(|_| "key too long".to_string())?;
        // SAFETY: `p` points at `len` readable bytes; d2i advances its local copy only; the result is checked.
        let k = unsafe { ffi::d2i_AutoPrivateKey(null_mut(), &mut p, len) };
        if k.is_null() { Err(err("d2i_AutoPrivateKey")) } else { Ok(Rsa::wrap(k)) }
    }

    /// A public key from its modulus and public exponent (big-endian, as in the encodings).
    pub fn public_from_components(n: &[u8], e: &[u8]) -> Result<Rsa, String> {
        ffi::init();
        // OSSL_PARAM integers are in native byte order.
        let (mut n_ne, mut e_ne) = (n.to_vec(), e.to_vec());
        if cfg!(target_endian = "little") {
            n_ne.reverse();
            e_ne.reverse();
        }
        let mut params = [
            param(c"n", super::OSSL_PARAM_UNSIGNED_INTEGER, n_ne.as_mut_ptr().cast(), n_ne.len()),
            param(c"e", super::OSSL_PARAM_UNSIGNED_INTEGER, e_ne.as_mut_ptr().cast(), e_ne.len()),
            end(),
        ];
        // SAFETY: the context is created, used and freed here; `params` is END-terminated and points into
        // `n_ne` and `e_ne`, which outlive the call; `pkey` is written only on success.
        unsafe {
            let ctx = ffi::EVP_PKEY_CTX_new_from_name(null_mut(), c"RSA".as_ptr(), null());
            if ctx.is_null() {
                return Err(err("EVP_PKEY_CTX_new_from_name(RSA)"));
            }
            let mut pkey = null_mut();
            let ok = ffi::EVP_PKEY_fromdata_init(ctx) == 1
                && ffi::EVP_PKEY_fromdata(ctx, &mut pkey, ffi::EVP_PKEY_PUBLIC_KEY, params.as_mut_ptr()) == 1;
            ffi::EVP_PKEY_CTX_free(ctx);
            if !ok || pkey.is_null() {
                return Err(err("EVP_PKEY_fromdata(RSA)"));
            }
            Ok(Rsa::wrap(pkey))
        }
    }

    /// The size of the modulus in bits.
    pub fn bits(&self) -> usize {
        // SAFETY: the key is valid.
        let b = unsafe { ffi::EVP_PKEY_get_bits(self.pkey.0) };
        usize::try_from(b).unwrap_or(0)
    }

    /// A big-integer component ("n", "e", ...) as minimal big-endian bytes.
    pub fn component(&self, name: &'static CStr) -> Result<Vec<u8>, String> {
        let mut bn = null_mut();
        // SAFETY: the key is valid; `bn` is allocated by OpenSSL on success, read, then freed here.
        unsafe {
            if ffi::EVP_PKEY_get_bn_param(self.pkey.0, name.as_ptr(), &mut bn) != 1 || bn.is_null() {
                return Err(err("EVP_PKEY_get_bn_param"));
            }
            let len = (usize::try_from(ffi::BN_num_bits(bn)).unwrap_or(0)).div_ceil(8);
            let mut out = vec![0u8; len];
            let w = ffi::BN_bn2bin(bn, out.as_mut_ptr());
            ffi::BN_free(bn);
            out.truncate(usize::try_from(w).unwrap_or(0));
            Ok(out)
        }
    }

    /// Runs `f` on this key's context for `op`, made and initialised on first use.
    fn with_ctx<R>(
        &self,
        op: Operation,
        f: impl FnOnce(*mut ffi::EVP_PKEY_CTX) -> Result<R, String>,
    ) -> Result<R, String> {
        let mut ctxs = self.ctxs.lock().map_err(|_| "poisoned".to_string())?;
        if !ctxs.iter().any(|(o, _)| *o == op) {
            // SAFETY: the key is valid for the lifetime of self; the context is owned by the PkeyCtx below.
            let ctx = unsafe { EVP_PKEY_CTX_new_from_pkey(null_mut(), self.pkey.0, null()) };
            if ctx.is_null() {
                return Err(err("EVP_PKEY_CTX_new_from_pkey"));
            }
            let c = PkeyCtx(ctx);
            let list = op_params(op);
            let built = build(&list);
            // SAFETY: `ctx` is a fresh, valid context; the parameter array is END-terminated and points into
            // `list` and `built`, which live across the calls.
            let ok = unsafe {
                let init = match op {
                    Operation::SignPss | Operation::SignPkcs1 => ffi::EVP_PKEY_sign_init(ctx),
                    Operation::VerifyPss | Operation::VerifyPkcs1 => ffi::EVP_PKEY_verify_init(ctx),
                    Operation::Encrypt => ffi::EVP_PKEY_encrypt_init(ctx),
                    Operation::Decrypt => ffi::EVP_PKEY_decrypt_init(ctx),
                };
                init == 1 && ffi::EVP_PKEY_CTX_set_params(ctx, built.params.as_ptr()) == 1
            };
            if !ok {
                return Err(err("RSA operation initialisation"));
            }
            ctxs.push((op, c));
        }
        let ctx = ctxs.iter().find(|(o, _)| *o == op).map(|(_, c)| c.0).unwrap_or(null_mut());
        f(ctx)
    }

    /// Signs the SHA-256 digest of `msg` with `padding`; writes the signature (the modulus length) into `out`.
    pub fn sign(&self, padding: Padding, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let op = if padding == Padding::Pss { Operation::SignPss } else { Operation::SignPkcs1 };
        let k = self.bits().div_ceil(8);
        self.with_ctx(op, |ctx| {
            let md = sha256(msg);
            out.clear();
            out.resize(k, 0);
            let mut len = k;
            // SAFETY: ctx is initialised for signing; the buffers are valid for the lengths passed.
            let ok = unsafe { ffi::EVP_PKEY_sign(ctx, out.as_mut_ptr(), &mut len, md.as_ptr(), md.len()) } == 1;
            if !ok || len != k {
                return Err(err("EVP_PKEY_sign"));
            }
            Ok(())
        })
    }

    /// Verifies a signature of the SHA-256 digest of `msg` with `padding`.
    pub fn verify(&self, padding: Padding, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let op = if padding == Padding::Pss { Operation::VerifyPss } else { Operation::VerifyPkcs1 };
        self.with_ctx(op, |ctx| {
            let md = sha256(msg);
            // SAFETY: ctx is initialised for verification; the slices are valid.
            let r = unsafe { ffi::EVP_PKEY_verify(ctx, sig.as_ptr(), sig.len(), md.as_ptr(), md.len()) };
            if r != 1 {
                // A rejected signature: clear the error queue so that rejections do not pile up errors.
                clear_errors();
            }
            Ok(r == 1)
        })
    }

    /// RSAES-OAEP encryption of `msg` (SHA-256, empty label); writes the ciphertext into `out`.
    pub fn encrypt(&self, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let k = self.bits().div_ceil(8);
        self.with_ctx(Operation::Encrypt, |ctx| {
            out.clear();
            out.resize(k, 0);
            let mut len = k;
            // SAFETY: ctx is initialised for encryption; `out` has room for `len` bytes, `msg` is valid.
            let ok = unsafe { ffi::EVP_PKEY_encrypt(ctx, out.as_mut_ptr(), &mut len, msg.as_ptr(), msg.len()) } == 1;
            if !ok || len != k {
                return Err(err("EVP_PKEY_encrypt"));
            }
            Ok(())
        })
    }

    /// RSAES-OAEP decryption of `ct`; writes the message into `out`.
    pub fn decrypt(&self, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let k = self.bits().div_ceil(8);
        self.with_ctx(Operation::Decrypt, |ctx| {
            out.clear();
            out.resize(k, 0);
            let mut len = k;
            // SAFETY: ctx is initialised for decryption; `out` has room for `len` bytes, `ct` is valid.
            let ok = unsafe { ffi::EVP_PKEY_decrypt(ctx, out.as_mut_ptr(), &mut len, ct.as_ptr(), ct.len()) } == 1;
            if !ok || len > k {
                clear_errors();
                return Err("openssl: OAEP decryption failed".into());
            }
            out.truncate(len);
            Ok(())
        })
    }
}

/// RSA key generation with e = 65537: one key-generation context, initialised once with the modulus size, and
/// reused for every key (`EVP_PKEY_generate`).
pub struct RsaKeygen {
    ctx: Mutex<PkeyCtx>,
}

impl RsaKeygen {
    /// A generator of `bits`-bit keys.
    pub fn new(bits: u32) -> Result<Self, String> {
        ffi::init();
        let list = [Param::Uint(c"bits", bits)];
        let built = build(&list);
        // SAFETY: the context is created here and owned by the PkeyCtx; the parameter array is END-terminated
        // and points into `built`, which lives across the call.
        unsafe {
            let ctx = ffi::EVP_PKEY_CTX_new_from_name(null_mut(), c"RSA".as_ptr(), null());
            if ctx.is_null() {
                return Err(err("EVP_PKEY_CTX_new_from_name(RSA)"));
            }
            let c = PkeyCtx(ctx);
            if ffi::EVP_PKEY_keygen_init(ctx) != 1 || ffi::EVP_PKEY_CTX_set_params(ctx, built.params.as_ptr()) != 1 {
                return Err(err("EVP_PKEY_keygen_init"));
            }
            Ok(RsaKeygen { ctx: Mutex::new(c) })
        }
    }

    /// A fresh key pair.
    pub fn generate(&self) -> Result<Rsa, String> {
        let ctx = self.ctx.lock().map_err(|_| "poisoned".to_string())?;
        let mut pkey = null_mut();
        // SAFETY: the context is initialised for key generation; `pkey` is written only on success.
        let ok = unsafe { ffi::EVP_PKEY_generate(ctx.0, &mut pkey) } == 1;
        if !ok || pkey.is_null() {
            return Err(err("EVP_PKEY_generate(RSA)"));
        }
        Ok(Rsa::wrap(pkey))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_key_signs_and_verifies_and_round_trips_oaep() {
        let kg = RsaKeygen::new(2048).unwrap();
        let k = kg.generate().unwrap();
        assert_eq!(k.bits(), 2048);
        assert_eq!(k.component(c"e").unwrap(), vec![1, 0, 1]);
        let n = k.component(c"n").unwrap();
        let public = Rsa::public_from_components(&n, &[1, 0, 1]).unwrap();
        for pad in [Padding::Pss, Padding::Pkcs1] {
            let mut sig = Vec::new();
            k.sign(pad, b"message", &mut sig).unwrap();
            assert!(public.verify(pad, b"message", &sig).unwrap());
            assert!(!public.verify(pad, b"messagf", &sig).unwrap());
        }
        let (mut ct, mut pt) = (Vec::new(), Vec::new());
        public.encrypt(b"secret", &mut ct).unwrap();
        k.decrypt(&ct, &mut pt).unwrap();
        assert_eq!(pt, b"secret");
        ct[5] ^= 1;
        assert!(k.decrypt(&ct, &mut pt).is_err());
    }
}
