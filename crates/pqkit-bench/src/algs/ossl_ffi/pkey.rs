//! `EVP_PKEY`: ML-KEM and ML-DSA keys from their FIPS 203/204 seeds, KEM encapsulation with given randomness and
//! one-shot message signing with parameters, which the `openssl` crate does not wrap; X25519 and Ed25519 keys from
//! their raw private bytes, X25519 key agreement ([`Agreement`]) and pure Ed25519 signing, through the same calls.

use super::{EVP_PKEY_CTX_new_from_pkey, clear_errors, end, err, ffi, int, octets, param};
use std::ffi::{CStr, c_int};
use std::ptr::{null, null_mut};
use std::sync::Mutex;

/// An owned `EVP_PKEY`.
pub struct Pkey(*mut ffi::EVP_PKEY);
// SAFETY: an EVP_PKEY is reference counted and safe to use from several threads for read-only operations;
// every operation here goes through its own EVP_PKEY_CTX.
unsafe impl Send for Pkey {}
// SAFETY: as above.
unsafe impl Sync for Pkey {}
impl Drop for Pkey {
    fn drop(&mut self) {
        // SAFETY: we own the key (non-null, from EVP_PKEY_generate / new_raw_public_key_ex).
        unsafe { ffi::EVP_PKEY_free(self.0) }
    }
}

impl Pkey {
    /// The key pair of `alg` (e.g. "ML-KEM-768") for the FIPS 203/204 seed, by key generation with the
    /// "seed" parameter (`EVP_PKEY_fromdata` would import it instead, and an import runs a pairwise
    /// consistency test that key generation does not).
    pub fn from_seed(alg: &'static CStr, seed: &[u8]) -> Result<Pkey, String> {
        ffi::init();
        // SAFETY: the context is created, used and freed here; `params` lives across the set_params call and
        // points into `seed`, which outlives it; `pkey` is written by OpenSSL only on success.
        unsafe {
            let ctx = ffi::EVP_PKEY_CTX_new_from_name(null_mut(), alg.as_ptr(), null());
            if ctx.is_null() {
                return Err(err("EVP_PKEY_CTX_new_from_name"));
            }
            let params = [octets(c"seed", seed), end()];
            let mut pkey = null_mut();
            let ok = ffi::EVP_PKEY_keygen_init(ctx) == 1
                && ffi::EVP_PKEY_CTX_set_params(ctx, params.as_ptr()) == 1
                && ffi::EVP_PKEY_generate(ctx, &mut pkey) == 1;
            ffi::EVP_PKEY_CTX_free(ctx);
            if !ok || pkey.is_null() {
                return Err(err("EVP_PKEY_generate(seed)"));
            }
            Ok(Pkey(pkey))
        }
    }

    /// The key pair of `alg` ("X25519" or "ED25519") for its raw 32-byte private key (the RFC 7748 scalar or the
    /// RFC 8032 seed). OpenSSL computes the public key here, as part of creating the key.
    pub fn private_from_raw(alg: &'static CStr, key: &[u8]) -> Result<Pkey, String> {
        ffi::init();
        // SAFETY: `key` is a valid slice for the call; the result is checked for null.
        let p =
            unsafe { ffi::EVP_PKEY_new_raw_private_key_ex(null_mut(), alg.as_ptr(), null(), key.as_ptr(), key.len()) };
        if p.is_null() { Err(err("EVP_PKEY_new_raw_private_key_ex")) } else { Ok(Pkey(p)) }
    }

    /// A public key of `alg` from its encoding.
    pub fn public_from_raw(alg: &'static CStr, key: &[u8]) -> Result<Pkey, String> {
        ffi::init();
        // SAFETY: `key` is a valid slice for the call; the result is checked for null.
        let p =
            unsafe { ffi::EVP_PKEY_new_raw_public_key_ex(null_mut(), alg.as_ptr(), null(), key.as_ptr(), key.len()) };
        if p.is_null() { Err(err("EVP_PKEY_new_raw_public_key_ex")) } else { Ok(Pkey(p)) }
    }

    /// An elliptic-curve key pair of the named group `group` ("P-256", "secp256k1"; `nid` the same group) from
    /// its 32-byte big-endian private scalar: OpenSSL computes the public key (`EC_POINT_mul` on the generator,
    /// through the `openssl` crate) and the key is imported with `EVP_PKEY_fromdata`, as OpenSSL's own key
    /// generation would hold it. Writes the uncompressed public point into `public`.
    pub fn ec_from_private(
        group: &'static CStr,
        nid: openssl::nid::Nid,
        private: &[u8; 32],
        public: &mut Vec<u8>,
    ) -> Result<Pkey, String> {
        use openssl::bn::{BigNum, BigNumContext};
        use openssl::ec::{EcGroup, EcPoint, PointConversionForm};
        ffi::init();
        let g = EcGroup::from_curve_name(nid).map_err(super::e)?;
        let d = BigNum::from_slice(private).map_err(super::e)?;
        let mut bctx = BigNumContext::new().map_err(super::e)?;
        let mut q = EcPoint::new(&g).map_err(super::e)?;
        q.mul_generator2(&g, &d, &mut bctx).map_err(super::e)?;
        let point = q.to_bytes(&g, PointConversionForm::UNCOMPRESSED, &mut bctx).map_err(super::e)?;
        // OSSL_PARAM integers are in native byte order.
        let mut le = *private;
        if cfg!(target_endian = "little") {
            le.reverse();
        }
        let key = Self::ec_from_params(group, Some(&le), &point, ffi::EVP_PKEY_KEYPAIR);
        le.fill(0);
        public.clear();
        public.extend_from_slice(&point);
        key
    }

    /// An elliptic-curve public key of the named group from its SEC1 encoding.
    pub fn ec_from_public(group: &'static CStr, point: &[u8]) -> Result<Pkey, String> {
        ffi::init();
        Self::ec_from_params(group, None, point, ffi::EVP_PKEY_PUBLIC_KEY)
    }

    fn ec_from_params(
        group: &'static CStr,
        private_le: Option<&[u8; 32]>,
        point: &[u8],
        selection: c_int,
    ) -> Result<Pkey, String> {
        let mut params = vec![
            param(c"group", super::OSSL_PARAM_UTF8_STRING, group.as_ptr() as *mut _, group.to_bytes().len()),
            octets(c"pub", point),
        ];
        if let Some(d) = private_le {
            params.push(param(c"priv", super::OSSL_PARAM_UNSIGNED_INTEGER, d.as_ptr() as *mut _, d.len()));
        }
        params.push(end());
        // SAFETY: the context is created, used and freed here; `params` is END-terminated and points into
        // `group`, `point` and `private_le`, which outlive the call; `pkey` is written only on success.
        unsafe {
            let ctx = ffi::EVP_PKEY_CTX_new_from_name(null_mut(), c"EC".as_ptr(), null());
            if ctx.is_null() {
                return Err(err("EVP_PKEY_CTX_new_from_name(EC)"));
            }
            let mut pkey = null_mut();
            let ok = ffi::EVP_PKEY_fromdata_init(ctx) == 1
                && ffi::EVP_PKEY_fromdata(ctx, &mut pkey, selection, params.as_mut_ptr()) == 1;
            ffi::EVP_PKEY_CTX_free(ctx);
            if !ok || pkey.is_null() {
                return Err(err("EVP_PKEY_fromdata(EC)"));
            }
            Ok(Pkey(pkey))
        }
    }

    /// The public key encoding into `out`.
    pub fn raw_public_key(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let mut len = 0usize;
        // SAFETY: first call with a null buffer asks for the length; the second writes at most `len` bytes
        // into a buffer of that size.
        unsafe {
            if ffi::EVP_PKEY_get_raw_public_key(self.0, null_mut(), &mut len) != 1 {
                return Err(err("EVP_PKEY_get_raw_public_key"));
            }
            out.clear();
            out.resize(len, 0);
            if ffi::EVP_PKEY_get_raw_public_key(self.0, out.as_mut_ptr(), &mut len) != 1 {
                return Err(err("EVP_PKEY_get_raw_public_key"));
            }
        }
        out.truncate(len);
        Ok(())
    }
}

/// An owned `EVP_PKEY_CTX` (plus the fetched signature algorithm it was initialised with, if any).
struct Ctx(*mut ffi::EVP_PKEY_CTX, *mut ffi::EVP_SIGNATURE);
// SAFETY: the context is only ever used by one thread at a time: under the Mutex of its `Keyed`, or through
// `&mut Agreement`.
unsafe impl Send for Ctx {}
impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: we own both (either may be null, which the free functions accept).
        unsafe {
            ffi::EVP_PKEY_CTX_free(self.0);
            if !self.1.is_null() {
                ffi::EVP_SIGNATURE_free(self.1);
            }
        }
    }
}

/// A key with its operation context, made on first use (so that key generation times only the key).
pub struct Keyed {
    pkey: Pkey,
    ctx: Mutex<Option<Ctx>>,
}

impl Keyed {
    /// Wraps a key.
    pub fn new(pkey: Pkey) -> Self {
        Keyed { pkey, ctx: Mutex::new(None) }
    }

    fn with_ctx<R>(
        &self,
        init: impl FnOnce(*mut ffi::EVP_PKEY_CTX) -> Result<*mut ffi::EVP_SIGNATURE, String>,
        f: impl FnOnce(*mut ffi::EVP_PKEY_CTX) -> Result<R, String>,
    ) -> Result<R, String> {
        let mut guard = self.ctx.lock().map_err(|_| "poisoned".to_string())?;
        if guard.is_none() {
            // SAFETY: the key is valid for the lifetime of self; the context is owned by the Ctx below.
            let ctx = unsafe { EVP_PKEY_CTX_new_from_pkey(null_mut(), self.pkey.0, null()) };
            if ctx.is_null() {
                return Err(err("EVP_PKEY_CTX_new_from_pkey"));
            }
            let mut c = Ctx(ctx, null_mut());
            c.1 = init(ctx)?;
            *guard = Some(c);
        }
        f(guard.as_ref().map(|c| c.0).unwrap_or(null_mut()))
    }

    /// Encapsulates with `m` as the FIPS 203 randomness; writes ciphertext || shared secret.
    pub fn encapsulate(&self, m: &[u8; 32], ct_len: usize, out: &mut Vec<u8>) -> Result<(), String> {
        self.with_ctx(
            |ctx| kem_init(ctx, ffi::EVP_PKEY_encapsulate_init, "EVP_PKEY_encapsulate_init"),
            |ctx| {
                out.clear();
                out.resize(ct_len + 32, 0);
                let (ct, ss) = out.split_at_mut(ct_len);
                let (mut cl, mut sl) = (ct.len(), ss.len());
                let params = [octets(c"ikme", m), end()];
                // SAFETY: ctx is valid and initialised for encapsulation; params point into `m` for the call;
                // the output buffers have the lengths passed in.
                let ok = unsafe {
                    ffi::EVP_PKEY_CTX_set_params(ctx, params.as_ptr()) == 1
                        && ffi::EVP_PKEY_encapsulate(ctx, ct.as_mut_ptr(), &mut cl, ss.as_mut_ptr(), &mut sl) == 1
                };
                if !ok || cl != ct_len || sl != 32 {
                    return Err(err("EVP_PKEY_encapsulate"));
                }
                Ok(())
            },
        )
    }

    /// Decapsulates `ct`; writes the shared secret.
    pub fn decapsulate(&self, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        self.with_ctx(
            |ctx| kem_init(ctx, ffi::EVP_PKEY_decapsulate_init, "EVP_PKEY_decapsulate_init"),
            |ctx| {
                out.clear();
                out.resize(32, 0);
                let mut sl = 32usize;
                // SAFETY: ctx is initialised for decapsulation; `ct` and `out` are valid for their lengths.
                let ok =
                    unsafe { ffi::EVP_PKEY_decapsulate(ctx, out.as_mut_ptr(), &mut sl, ct.as_ptr(), ct.len()) } == 1;
                if !ok || sl != 32 {
                    return Err(err("EVP_PKEY_decapsulate"));
                }
                Ok(())
            },
        )
    }

    /// Deterministic pure ML-DSA signature of `msg` with an empty context.
    pub fn sign(&self, alg: &'static CStr, msg: &[u8], sig_len: usize, out: &mut Vec<u8>) -> Result<(), String> {
        self.sign_message(alg, true, msg, sig_len, out)
    }

    /// A signature of `msg` by a scheme that takes no parameters (pure Ed25519, "ED25519", deterministic by
    /// definition).
    pub fn sign_pure(&self, alg: &'static CStr, msg: &[u8], sig_len: usize, out: &mut Vec<u8>) -> Result<(), String> {
        self.sign_message(alg, false, msg, sig_len, out)
    }

    /// A signature of `msg` by a digest-based scheme with variable-length output of at most `max_len` bytes,
    /// e.g. "ECDSA-SHA256" (OpenSSL 3.4+ message signing: hashing included, random nonce, DER). A one-shot
    /// digest signature finalises its context, so every call re-initialises it with
    /// `EVP_PKEY_sign_message_init` (reusing the key's context and the signature algorithm fetched once).
    pub fn sign_der(&self, alg: &'static CStr, msg: &[u8], max_len: usize, out: &mut Vec<u8>) -> Result<(), String> {
        self.with_ctx_reinit(alg, ffi::EVP_PKEY_sign_message_init, "EVP_PKEY_sign_message_init", |ctx| {
            out.clear();
            out.resize(max_len, 0);
            let mut len = max_len;
            // SAFETY: ctx is initialised for signing; the buffers are valid for the lengths passed.
            let ok = unsafe { ffi::EVP_PKEY_sign(ctx, out.as_mut_ptr(), &mut len, msg.as_ptr(), msg.len()) } == 1;
            if !ok || len > max_len {
                return Err(err("EVP_PKEY_sign"));
            }
            out.truncate(len);
            Ok(())
        })
    }

    /// Verifies a signature of a digest-based scheme (see [`sign_der`](Self::sign_der)).
    pub fn verify_der(&self, alg: &'static CStr, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        self.with_ctx_reinit(alg, ffi::EVP_PKEY_verify_message_init, "EVP_PKEY_verify_message_init", |ctx| {
            // SAFETY: ctx is initialised for verification; the slices are valid.
            let r = unsafe { ffi::EVP_PKEY_verify(ctx, sig.as_ptr(), sig.len(), msg.as_ptr(), msg.len()) };
            if r != 1 {
                clear_errors();
            }
            Ok(r == 1)
        })
    }

    /// Runs `f` on the key's context freshly initialised by `init(ctx, signature, NULL)`; the context and the
    /// fetched signature algorithm are made on first use and kept.
    fn with_ctx_reinit<R>(
        &self,
        alg: &'static CStr,
        init: unsafe extern "C" fn(*mut ffi::EVP_PKEY_CTX, *mut ffi::EVP_SIGNATURE, *const ffi::OSSL_PARAM) -> c_int,
        what: &str,
        f: impl FnOnce(*mut ffi::EVP_PKEY_CTX) -> Result<R, String>,
    ) -> Result<R, String> {
        let mut guard = self.ctx.lock().map_err(|_| "poisoned".to_string())?;
        if guard.is_none() {
            // SAFETY: the key is valid for the lifetime of self; the context is owned by the Ctx below.
            let ctx = unsafe { EVP_PKEY_CTX_new_from_pkey(null_mut(), self.pkey.0, null()) };
            if ctx.is_null() {
                return Err(err("EVP_PKEY_CTX_new_from_pkey"));
            }
            // SAFETY: plain fetch by name; the result is checked below and owned by the Ctx.
            let s = unsafe { ffi::EVP_SIGNATURE_fetch(null_mut(), alg.as_ptr(), null()) };
            let c = Ctx(ctx, s);
            if s.is_null() {
                return Err(err("EVP_SIGNATURE_fetch"));
            }
            *guard = Some(c);
        }
        let Some(c) = guard.as_ref() else { return Err("no context".into()) };
        // SAFETY: c.0 and c.1 are valid (made above); `init` is one of the two message initialisers, which
        // accept NULL parameters.
        if unsafe { init(c.0, c.1, null()) } != 1 {
            return Err(err(what));
        }
        f(c.0)
    }

    /// One-shot message signing; the context is initialised on first use, with the "deterministic" parameter set
    /// to 1 if `deterministic` (ML-DSA) and no parameters otherwise.
    fn sign_message(
        &self,
        alg: &'static CStr,
        deterministic: bool,
        msg: &[u8],
        sig_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        self.with_ctx(
            |ctx| {
                let mut det: c_int = 1;
                let params = [int(c"deterministic", &mut det), end()];
                let params = if deterministic { Some(&params[..]) } else { None };
                message_init(ctx, alg, ffi::EVP_PKEY_sign_message_init, params, "EVP_PKEY_sign_message_init")
            },
            |ctx| {
                out.clear();
                out.resize(sig_len, 0);
                let mut len = sig_len;
                // SAFETY: ctx is initialised for signing; the buffers are valid for the lengths passed.
                let ok = unsafe { ffi::EVP_PKEY_sign(ctx, out.as_mut_ptr(), &mut len, msg.as_ptr(), msg.len()) } == 1;
                if !ok || len != sig_len {
                    return Err(err("EVP_PKEY_sign"));
                }
                Ok(())
            },
        )
    }

    /// Verifies a pure ML-DSA signature with an empty context, or a pure Ed25519 signature.
    pub fn verify(&self, alg: &'static CStr, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        self.with_ctx(
            |ctx| message_init(ctx, alg, ffi::EVP_PKEY_verify_message_init, None, "EVP_PKEY_verify_message_init"),
            |ctx| {
                // SAFETY: ctx is initialised for verification; the slices are valid.
                let r = unsafe { ffi::EVP_PKEY_verify(ctx, sig.as_ptr(), sig.len(), msg.as_ptr(), msg.len()) };
                if r != 1 {
                    // A rejected signature: clear the error queue so that rejections do not pile up errors.
                    clear_errors();
                }
                Ok(r == 1)
            },
        )
    }
}

/// X25519 key agreement of one private key with one peer public key: an `EVP_PKEY_CTX` initialised for derivation
/// with the peer set, once, then reused for every [`derive`](Agreement::derive), as a careful C program would.
pub struct Agreement {
    ctx: Ctx,
    /// The keys the context was made from (it holds references of its own; these keep the ownership explicit).
    _ours: Pkey,
    _peer: Pkey,
}

impl Agreement {
    /// Prepares the agreement of `ours` (a private key) with `peer` (a public key of the same type).
    pub fn new(ours: Pkey, peer: Pkey) -> Result<Self, String> {
        // SAFETY: `ours` is a valid key; the result is checked for null and owned by the Ctx below.
        let ctx = unsafe { EVP_PKEY_CTX_new_from_pkey(null_mut(), ours.0, null()) };
        if ctx.is_null() {
            return Err(err("EVP_PKEY_CTX_new_from_pkey"));
        }
        let ctx = Ctx(ctx, null_mut());
        // SAFETY: ctx is a fresh, valid context; `peer` is a valid key, which set_peer references (up-ref) for
        // the context's lifetime.
        let ok = unsafe { ffi::EVP_PKEY_derive_init(ctx.0) == 1 && ffi::EVP_PKEY_derive_set_peer(ctx.0, peer.0) == 1 };
        if !ok {
            return Err(err("EVP_PKEY_derive_init / EVP_PKEY_derive_set_peer"));
        }
        Ok(Agreement { ctx, _ours: ours, _peer: peer })
    }

    /// Derives the 32-byte shared secret into `out`.
    pub fn derive(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        out.clear();
        out.resize(32, 0);
        let mut len = 32usize;
        // SAFETY: the context is initialised for derivation with its peer set; `out` has room for `len` bytes.
        let ok = unsafe { ffi::EVP_PKEY_derive(self.ctx.0, out.as_mut_ptr(), &mut len) } == 1;
        if !ok || len != 32 {
            return Err(err("EVP_PKEY_derive"));
        }
        Ok(())
    }
}

/// The initialisation of a KEM operation context: `init(ctx, NULL)` with `init` `EVP_PKEY_encapsulate_init` or
/// `EVP_PKEY_decapsulate_init`. No signature algorithm is fetched.
fn kem_init(
    ctx: *mut ffi::EVP_PKEY_CTX,
    init: unsafe extern "C" fn(*mut ffi::EVP_PKEY_CTX, *const ffi::OSSL_PARAM) -> c_int,
    what: &str,
) -> Result<*mut ffi::EVP_SIGNATURE, String> {
    // SAFETY: ctx is a fresh, valid context and `init` one of the two KEM initialisers, which accept null params.
    if unsafe { init(ctx, null()) } == 1 { Ok(null_mut()) } else { Err(err(what)) }
}

/// The initialisation of a message signing or verification context for `alg`: fetches the signature algorithm and
/// calls `init(ctx, signature, params)` (NULL for `None`) with `init` `EVP_PKEY_sign_message_init` or
/// `EVP_PKEY_verify_message_init`. Returns the fetched algorithm, which the context's owner frees.
fn message_init(
    ctx: *mut ffi::EVP_PKEY_CTX,
    alg: &'static CStr,
    init: unsafe extern "C" fn(*mut ffi::EVP_PKEY_CTX, *mut ffi::EVP_SIGNATURE, *const ffi::OSSL_PARAM) -> c_int,
    params: Option<&[ffi::OSSL_PARAM]>,
    what: &str,
) -> Result<*mut ffi::EVP_SIGNATURE, String> {
    let params = match params {
        Some(list) => {
            assert!(list.last().is_some_and(|p| p.key.is_null()), "parameters must end with end()");
            list.as_ptr()
        }
        None => null(),
    };
    // SAFETY: plain fetch by name; the result is checked below.
    let s = unsafe { ffi::EVP_SIGNATURE_fetch(null_mut(), alg.as_ptr(), null()) };
    if s.is_null() {
        return Err(err("EVP_SIGNATURE_fetch"));
    }
    // SAFETY: ctx and s are valid; `init` is one of the two message initialisers; `params` is NULL or
    // END-terminated (checked above) and its buffers live across the call.
    if unsafe { init(ctx, s, params) } == 1 {
        Ok(s)
    } else {
        // SAFETY: s was fetched above and is not stored anywhere.
        unsafe { ffi::EVP_SIGNATURE_free(s) };
        Err(err(what))
    }
}
