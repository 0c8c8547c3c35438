//! ECDSA (FIPS 186-5 §6.4) over any [`PrimeCurve`], with SHA-256.
//!
//! ## Signing
//! - [`SigningKey::sign`]: deterministic, the nonce k from RFC 6979 (HMAC-DRBG over the key and the message
//!   digest). The same key and message always give the same signature, equal byte for byte to every other
//!   RFC 6979 implementation's.
//! - [`SigningKey::sign_hedged`]: RFC 6979 with 32 fresh random bytes as the additional data k' of §3.6. The
//!   nonce stays secret even if the random source fails (it is then plain RFC 6979), and differs between two
//!   signatures of one message (a defence against fault attacks on deterministic signing).
//! - `*_prehashed`: the same with a digest computed by the caller (at least 16 bytes; bits2int keeps its
//!   leftmost 256 bits).
//!
//! Signatures are produced as computed unless the curve sets [`PrimeCurve::NORMALIZE_S`] (secp256k1 does):
//! s may be "high" (above n/2). [`Signature::normalize_s`] gives the
//! low-S twin (n − s), which verifies equally; [`VerifyingKey::verify_low_s`] accepts only low-S signatures.
//!
//! ## Verification
//! r and s must lie in [1, n − 1] (checked when a [`Signature`] is parsed); the check is
//! x(u1·G + u2·Q) mod n = r with u1 = z·s⁻¹ and u2 = r·s⁻¹, and the point must not be the identity. A failed
//! check is [`Error::AuthenticationFailed`]; a malformed signature is [`Error::InvalidEncoding`] or
//! [`Error::InvalidLength`].
//!
//! ## Encodings of signatures
//! - P1363 / "raw": `r ‖ s`, 32 bytes each, big-endian ([`Signature::from_bytes`], [`Signature::to_bytes`]).
//! - DER: `SEQUENCE { INTEGER r, INTEGER s }` (RFC 3279 `Ecdsa-Sig-Value`), strictly: definite short-form
//!   lengths, minimal positive INTEGERs, nothing after the SEQUENCE ([`Signature::from_der`],
//!   [`Signature::to_der`]). Every BER variant is refused.
//!
//! ## Constant time
//! Key generation and signing: the fixed-base multiplication, the scalar arithmetic and the inversion of k
//! are constant time; the only branches are the RFC 6979 rejections (k ≥ n, r = 0, s = 0), which happen
//! with probability about 2^−128 and reveal nothing of the nonce that is kept. Verification is variable time
//! (public inputs).

use super::rfc6979::Drbg;
use super::{PrimeCurve, PublicKey, SecretKey};
use crate::dispatch::Checked;
use crate::hash::sha2::Sha256;
use crate::{Error, Result};
use core::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Length of a P1363 signature (`r ‖ s`).
pub const SIGNATURE_LEN: usize = 64;
/// Longest DER signature: SEQUENCE header 2 + two INTEGERs of at most 2 + 33 bytes.
pub const MAX_DER_LEN: usize = 72;
/// Shortest digest accepted by the prehashed entry points.
pub const MIN_DIGEST_LEN: usize = 16;

/// bits2int(digest) mod n for a 256-bit n: the leftmost 32 bytes, or the digest left-padded with zeros.
fn digest_scalar<C: PrimeCurve>(digest: &[u8]) -> Result<C::Scalar> {
    if digest.len() < MIN_DIGEST_LEN {
        return Err(Error::InvalidLength {
            algorithm: C::ECDSA_NAME,
            field: "digest",
            expected: crate::error::Expected::AtLeast(MIN_DIGEST_LEN),
            actual: digest.len(),
        });
    }
    let mut z = [0u8; 32];
    let n = digest.len().min(32);
    z[32 - n..].copy_from_slice(&digest[..n]);
    Ok(C::scalar_from_reduced(&z))
}

/// An ECDSA signature: r and s, both in [1, n − 1].
pub struct Signature<C: PrimeCurve> {
    r: [u8; 32],
    s: [u8; 32],
    _curve: core::marker::PhantomData<C>,
}

impl<C: PrimeCurve> Clone for Signature<C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C: PrimeCurve> Copy for Signature<C> {}

impl<C: PrimeCurve> PartialEq for Signature<C> {
    fn eq(&self, other: &Self) -> bool {
        self.r == other.r && self.s == other.s
    }
}
impl<C: PrimeCurve> Eq for Signature<C> {}

fn bad_sig<C: PrimeCurve>(reason: &'static str) -> Error {
    Error::InvalidEncoding { algorithm: C::ECDSA_NAME, reason }
}

impl<C: PrimeCurve> Signature<C> {
    /// The signature with these r and s (32 bytes each, big-endian), if both are in [1, n − 1]
    /// ([`Error::InvalidEncoding`] otherwise).
    pub fn from_scalars(r: &[u8; 32], s: &[u8; 32]) -> Result<Self> {
        for (v, zero, range) in [
            (r, "signature r is zero", "signature r is not below the group order n"),
            (s, "signature s is zero", "signature s is not below the group order n"),
        ] {
            if *v == [0u8; 32] {
                return Err(bad_sig::<C>(zero));
            }
            if !super::lt_be(v, &C::ORDER) {
                return Err(bad_sig::<C>(range));
            }
        }
        Ok(Signature { r: *r, s: *s, _curve: core::marker::PhantomData })
    }

    /// Parses a P1363 signature `r ‖ s`: exactly 64 bytes ([`Error::InvalidLength`]), r and s in [1, n − 1]
    /// ([`Error::InvalidEncoding`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Error::check_length(C::ECDSA_NAME, "signature", SIGNATURE_LEN, bytes.len())?;
        let (mut r, mut s) = ([0u8; 32], [0u8; 32]);
        r.copy_from_slice(&bytes[..32]);
        s.copy_from_slice(&bytes[32..]);
        Self::from_scalars(&r, &s)
    }

    /// The P1363 encoding `r ‖ s`.
    pub fn to_bytes(&self) -> [u8; SIGNATURE_LEN] {
        let mut out = [0u8; 64];
        out[..32].copy_from_slice(&self.r);
        out[32..].copy_from_slice(&self.s);
        out
    }

    /// r, big-endian.
    pub fn r(&self) -> [u8; 32] {
        self.r
    }

    /// s, big-endian.
    pub fn s(&self) -> [u8; 32] {
        self.s
    }

    /// Parses a strict DER `Ecdsa-Sig-Value` (see the [module docs](self)); then r and s as
    /// [`from_scalars`](Self::from_scalars).
    pub fn from_der(der: &[u8]) -> Result<Self> {
        let rest = match der {
            [0x30, len, rest @ ..] if *len < 0x80 && *len as usize == rest.len() => rest,
            [0x30, len, ..] if *len >= 0x80 => {
                return Err(bad_sig::<C>(
                    "DER: the SEQUENCE length is not in short form (no valid signature needs more)",
                ));
            }
            [0x30, _, ..] => {
                return Err(bad_sig::<C>(
                    "DER: the SEQUENCE length does not match the data (truncated or trailing bytes)",
                ));
            }
            [] | [_] => return Err(bad_sig::<C>("DER: truncated signature")),
            _ => return Err(bad_sig::<C>("DER: the signature is not a SEQUENCE")),
        };
        let (r, rest) = der_integer::<C>(rest)?;
        let (s, rest) = der_integer::<C>(rest)?;
        if !rest.is_empty() {
            return Err(bad_sig::<C>("DER: data after the two INTEGERs inside the SEQUENCE"));
        }
        Self::from_scalars(&r, &s)
    }

    /// The strict DER encoding.
    pub fn to_der(&self) -> DerSignature {
        let mut buf = [0u8; MAX_DER_LEN];
        let mut len = 2;
        for v in [&self.r, &self.s] {
            // Minimal: skip leading zero bytes (v is not zero), then a 0x00 if the top bit is set.
            let skip = v.iter().take_while(|&&b| b == 0).count();
            let body = &v[skip..];
            let pad = (body[0] >> 7) as usize;
            buf[len] = 0x02;
            buf[len + 1] = (body.len() + pad) as u8;
            len += 2 + pad;
            buf[len..len + body.len()].copy_from_slice(body);
            len += body.len();
        }
        buf[0] = 0x30;
        buf[1] = (len - 2) as u8;
        DerSignature { buf, len: len as u8 }
    }

    /// Whether s ≤ (n − 1)/2.
    pub fn is_low_s(&self) -> bool {
        match C::scalar_from_canonical(&self.s) {
            Some(s) => !C::scalar_is_high(&s),
            None => false,
        }
    }

    /// The low-S form: `(r, n − s)` if s is high, else the signature itself. Both verify under the same key.
    pub fn normalize_s(&self) -> Self {
        match C::scalar_from_canonical(&self.s) {
            Some(s) if C::scalar_is_high(&s) => {
                Signature { r: self.r, s: C::scalar_to_bytes(&C::scalar_neg(&s)), _curve: core::marker::PhantomData }
            }
            _ => *self,
        }
    }
}

/// One DER INTEGER holding a value below 2^256: its 32-byte big-endian value and the rest of the input.
fn der_integer<C: PrimeCurve>(b: &[u8]) -> Result<([u8; 32], &[u8])> {
    let (len, rest) = match b {
        [0x02, len, rest @ ..] => (*len as usize, rest),
        [] | [_] => return Err(bad_sig::<C>("DER: truncated signature (missing INTEGER)")),
        _ => return Err(bad_sig::<C>("DER: expected an INTEGER")),
    };
    if len >= 0x80 {
        return Err(bad_sig::<C>("DER: an INTEGER length is not in short form"));
    }
    if len > rest.len() {
        return Err(bad_sig::<C>("DER: truncated INTEGER"));
    }
    let (v, rest) = rest.split_at(len);
    match v {
        [] => return Err(bad_sig::<C>("DER: empty INTEGER")),
        [b0, ..] if b0 & 0x80 != 0 => return Err(bad_sig::<C>("DER: negative INTEGER")),
        [0, b1, ..] if b1 & 0x80 == 0 => return Err(bad_sig::<C>("DER: INTEGER not minimally encoded")),
        _ => {}
    }
    let v = if v[0] == 0 && v.len() > 1 { &v[1..] } else { v };
    if v.len() > 32 {
        return Err(bad_sig::<C>("DER: INTEGER larger than the group order n"));
    }
    let mut out = [0u8; 32];
    out[32 - v.len()..].copy_from_slice(v);
    Ok((out, rest))
}

impl<C: PrimeCurve> fmt::Debug for Signature<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Signature<{}>(", C::NAME)?;
        for b in self.to_bytes() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// A DER-encoded signature (at most [`MAX_DER_LEN`] bytes), without allocation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct DerSignature {
    buf: [u8; MAX_DER_LEN],
    len: u8,
}

impl DerSignature {
    /// The encoding.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

impl AsRef<[u8]> for DerSignature {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for DerSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DerSignature(")?;
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// An ECDSA signing key: a [`SecretKey`] used for signatures. Zeroized on drop; `Debug` prints nothing of it.
pub struct SigningKey<C: PrimeCurve> {
    key: SecretKey<C>,
}

impl<C: PrimeCurve> Clone for SigningKey<C> {
    fn clone(&self) -> Self {
        SigningKey { key: self.key.clone() }
    }
}

impl<C: PrimeCurve> From<SecretKey<C>> for SigningKey<C> {
    fn from(key: SecretKey<C>) -> Self {
        SigningKey { key }
    }
}

impl<C: PrimeCurve> SigningKey<C> {
    /// A fresh key (see [`SecretKey::generate`]).
    pub fn generate<R: rand_core::CryptoRng + ?Sized>(rng: &mut R) -> Self {
        SigningKey { key: SecretKey::generate(rng) }
    }

    /// The key with this big-endian scalar (see [`SecretKey::from_bytes`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        SecretKey::from_bytes(bytes).map(|key| SigningKey { key })
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(backend: Checked<C::Backend>, bytes: &[u8]) -> Result<Self> {
        SecretKey::from_bytes_with_backend(backend, bytes).map(|key| SigningKey { key })
    }

    /// The secret scalar, big-endian. Handle with care.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.key.to_bytes()
    }

    /// The secret key (for ECDH with the same key, which is best avoided).
    pub fn as_secret_key(&self) -> &SecretKey<C> {
        &self.key
    }

    /// The verifying key d·G.
    pub fn verifying_key(&self) -> VerifyingKey<C> {
        VerifyingKey { key: self.key.public }
    }

    /// Deterministic ECDSA (RFC 6979) of SHA-256(`msg`).
    pub fn sign(&self, msg: &[u8]) -> Signature<C> {
        let digest = Sha256::digest(msg);
        self.sign_digest(&digest, &[])
    }

    /// Deterministic ECDSA (RFC 6979) of a digest computed by the caller (at least [`MIN_DIGEST_LEN`] bytes,
    /// else [`Error::InvalidLength`]).
    pub fn sign_prehashed(&self, digest: &[u8]) -> Result<Signature<C>> {
        digest_scalar::<C>(digest)?;
        Ok(self.sign_digest(digest, &[]))
    }

    /// Hedged ECDSA of SHA-256(`msg`): RFC 6979 with 32 bytes from `rng` as k' (§3.6).
    pub fn sign_hedged<R: rand_core::CryptoRng + ?Sized>(&self, msg: &[u8], rng: &mut R) -> Signature<C> {
        let digest = Sha256::digest(msg);
        let mut extra = [0u8; 32];
        rng.fill_bytes(&mut extra);
        let sig = self.sign_digest(&digest, &extra);
        extra.zeroize();
        sig
    }

    /// Hedged ECDSA of a digest computed by the caller.
    pub fn sign_prehashed_hedged<R: rand_core::CryptoRng + ?Sized>(
        &self,
        digest: &[u8],
        rng: &mut R,
    ) -> Result<Signature<C>> {
        digest_scalar::<C>(digest)?;
        let mut extra = [0u8; 32];
        rng.fill_bytes(&mut extra);
        let sig = self.sign_digest(digest, &extra);
        extra.zeroize();
        Ok(sig)
    }

    /// RFC 6979 with additional data `extra` (k'), for a digest already checked by [`digest_scalar`]. Public
    /// for tests that compare the nonce derivation with other implementations.
    #[doc(hidden)]
    pub fn sign_prehashed_with_extra(&self, digest: &[u8], extra: &[u8]) -> Result<Signature<C>> {
        digest_scalar::<C>(digest)?;
        Ok(self.sign_digest(digest, extra))
    }

    fn sign_digest(&self, digest: &[u8], extra: &[u8]) -> Signature<C> {
        let backend = self.key.public.backend;
        let z = match digest_scalar::<C>(digest) {
            Ok(z) => z,
            // Every caller checked the length.
            Err(_) => unreachable!("digest length checked by the caller"),
        };
        let mut x = C::scalar_to_bytes(&self.key.d);
        let h1 = C::scalar_to_bytes(&z);
        let mut drbg = Drbg::new(&x, &h1, extra);
        x.zeroize();
        loop {
            let mut t = drbg.candidate();
            let k = C::scalar_from_canonical(&t);
            t.zeroize();
            let Some(mut k) = k else { continue };
            // Nonce candidate rejection (RFC 6979 retry): public.
            if crate::ct::declassify(C::scalar_is_zero(&k)) {
                continue;
            }
            // r = x(k·G) mod n.
            let Some(big_r) = C::mul_base(backend, &k) else { continue };
            let r = C::scalar_from_reduced(&C::affine_coordinates(&big_r).0);
            // r is output.
            if crate::ct::declassify(C::scalar_is_zero(&r)) {
                continue;
            }
            // s = k⁻¹ (z + r·d) mod n.
            let mut kinv = C::scalar_invert(backend, &k);
            k.zeroize();
            let mut rd = C::scalar_mul(backend, &r, &self.key.d);
            let mut sum = C::scalar_add(&z, &rd);
            let s = C::scalar_mul(backend, &kinv, &sum);
            kinv.zeroize();
            rd.zeroize();
            sum.zeroize();
            // s is output.
            if crate::ct::declassify(C::scalar_is_zero(&s)) {
                continue;
            }
            // s is public from here on: the branch reveals nothing secret.
            // Low-s normalisation of the output s: public.
            let s = if C::NORMALIZE_S && crate::ct::declassify(C::scalar_is_high(&s)) { C::scalar_neg(&s) } else { s };
            return Signature {
                r: C::scalar_to_bytes(&r),
                s: C::scalar_to_bytes(&s),
                _curve: core::marker::PhantomData,
            };
        }
    }

    /// Switches the backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, backend: Checked<C::Backend>) -> Self {
        self.key.public.backend = backend;
        self
    }
}

impl<C: PrimeCurve> Zeroize for SigningKey<C> {
    fn zeroize(&mut self) {
        self.key.zeroize();
    }
}

impl<C: PrimeCurve> ZeroizeOnDrop for SigningKey<C> {}

impl<C: PrimeCurve> fmt::Debug for SigningKey<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SigningKey<{}> {{ .. }}", C::NAME)
    }
}

/// An ECDSA verifying key: a [`PublicKey`] used for signatures.
pub struct VerifyingKey<C: PrimeCurve> {
    key: PublicKey<C>,
}

impl<C: PrimeCurve> Clone for VerifyingKey<C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C: PrimeCurve> Copy for VerifyingKey<C> {}

impl<C: PrimeCurve> PartialEq for VerifyingKey<C> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<C: PrimeCurve> Eq for VerifyingKey<C> {}

impl<C: PrimeCurve> From<PublicKey<C>> for VerifyingKey<C> {
    fn from(key: PublicKey<C>) -> Self {
        VerifyingKey { key }
    }
}

impl<C: PrimeCurve> VerifyingKey<C> {
    /// Parses a SEC1 point (see [`PublicKey::from_sec1_bytes`]).
    pub fn from_sec1_bytes(bytes: &[u8]) -> Result<Self> {
        PublicKey::from_sec1_bytes(bytes).map(|key| VerifyingKey { key })
    }

    /// As [`from_sec1_bytes`](Self::from_sec1_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_sec1_bytes_with_backend(backend: Checked<C::Backend>, bytes: &[u8]) -> Result<Self> {
        PublicKey::from_sec1_bytes_with_backend(backend, bytes).map(|key| VerifyingKey { key })
    }

    /// The SEC1 encoding: 33 bytes if `compressed`, else 65.
    pub fn to_sec1_bytes(&self, compressed: bool) -> super::EncodedPoint {
        self.key.to_sec1_bytes(compressed)
    }

    /// The public key.
    pub fn as_public_key(&self) -> &PublicKey<C> {
        &self.key
    }

    /// Verifies `sig` over SHA-256(`msg`).
    pub fn verify(&self, msg: &[u8], sig: &Signature<C>) -> Result<()> {
        self.verify_digest(&Sha256::digest(msg), sig)
    }

    /// Verifies `sig` over a digest computed by the caller (at least [`MIN_DIGEST_LEN`] bytes).
    pub fn verify_prehashed(&self, digest: &[u8], sig: &Signature<C>) -> Result<()> {
        self.verify_digest(digest, sig)
    }

    /// As [`verify`](Self::verify), and s must be low (s ≤ (n − 1)/2, as Bitcoin's and Ethereum's rules
    /// ask): a high-S signature is [`Error::InvalidEncoding`] even when it would verify.
    pub fn verify_low_s(&self, msg: &[u8], sig: &Signature<C>) -> Result<()> {
        self.verify_prehashed_low_s(&Sha256::digest(msg), sig)
    }

    /// As [`verify_prehashed`](Self::verify_prehashed) with the low-S rule of [`verify_low_s`](Self::verify_low_s).
    pub fn verify_prehashed_low_s(&self, digest: &[u8], sig: &Signature<C>) -> Result<()> {
        if !sig.is_low_s() {
            return Err(bad_sig::<C>("signature s is high (above n/2): refused by the low-S rule"));
        }
        self.verify_digest(digest, sig)
    }

    fn verify_digest(&self, digest: &[u8], sig: &Signature<C>) -> Result<()> {
        let backend = self.key.backend;
        let (z, r, s) = verify_scalars::<C>(digest, sig)?;
        let w = C::scalar_invert_vartime(backend, &s);
        let u1 = C::scalar_mul(backend, &z, &w);
        let u2 = C::scalar_mul(backend, &r, &w);
        if C::verify_vartime(backend, &self.key.point, &u1, &u2, &r) {
            Ok(())
        } else {
            Err(Error::AuthenticationFailed { algorithm: C::ECDSA_NAME })
        }
    }

    /// Switches the backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, backend: Checked<C::Backend>) -> Self {
        self.key.backend = backend;
        self
    }

    /// The key's point, for the batched verifications.
    #[cfg(all(feature = "alloc", target_arch = "x86_64"))]
    pub(crate) fn point(&self) -> &C::Affine {
        &self.key.point
    }
}

/// The scalars of a verification: z = bits2int(digest) mod n, r and s, or the error
/// [`VerifyingKey::verify_prehashed`] returns for this digest and signature before any point arithmetic.
pub(crate) fn verify_scalars<C: PrimeCurve>(
    digest: &[u8],
    sig: &Signature<C>,
) -> Result<(C::Scalar, C::Scalar, C::Scalar)> {
    let z = digest_scalar::<C>(digest)?;
    let (Some(r), Some(s)) = (C::scalar_from_canonical(&sig.r), C::scalar_from_canonical(&sig.s)) else {
        // Signature values are checked when they are made.
        return Err(bad_sig::<C>("signature r or s is not below the group order n"));
    };
    Ok((z, r, s))
}

impl<C: PrimeCurve> fmt::Debug for VerifyingKey<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VerifyingKey<{}>({:?})", C::NAME, self.key.to_sec1_bytes(true))
    }
}
