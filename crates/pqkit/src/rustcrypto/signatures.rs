//! `signature` 3.0: `Signer`, `Verifier`, `Keypair` and `SignatureEncoding` for pqkit's signature schemes.
//!
//! | scheme | `Signer` | `RandomizedSigner` | `Verifier` | encoding |
//! |---|---|---|---|---|
//! | ML-DSA-44/65/87 | deterministic (rnd = 0), empty context | hedged (32 bytes from the RNG), empty context | pure ML-DSA, empty context | FIPS 204 bytes |
//! | Ed25519 | RFC 8032 (deterministic) | – | strict, cofactored, as the native `verify` | R ‖ S, 64 bytes |
//! | ECDSA P-256, secp256k1 | RFC 6979 over SHA-256 (secp256k1: low S) | RFC 6979 with 32 random bytes as k' | SHA-256 | r ‖ s, 64 bytes (P1363) |
//! | RSA-PSS | with OS randomness (`std`) | salt from the RNG | the key's salt length and hash | [`RsaSignature`] |
//! | RSA PKCS#1 v1.5 | deterministic | – | the key's hash | [`RsaSignature`] |
//!
//! These are the choices of the RustCrypto crates for the same algorithms (ml-dsa, ed25519-dalek, p256, k256,
//! rsa), so a signature made through the traits equals theirs byte for byte where the scheme is
//! deterministic. ECDSA also implements the hazmat `PrehashSigner`/`PrehashVerifier` (a digest of at least 16
//! bytes, as the native `*_prehashed` calls).
//!
//! Errors are the trait's opaque `signature::Error`. A failing RNG makes a randomized signing call fail; no
//! signature made with the failed randomness is returned.

use crate::ec::weierstrass::{self, PrimeCurve};
use crate::ec::{ed25519, weierstrass::ecdsa::SIGNATURE_LEN};
use crate::mldsa::{self, MlDsa44, MlDsa65, MlDsa87, Params};
use ::signature::hazmat::{PrehashSigner, PrehashVerifier};
use ::signature::rand_core::TryCryptoRng;
use ::signature::{Error, Keypair, RandomizedSigner, SignatureEncoding, Signer, Verifier};
use zeroize::Zeroize;

fn err(_: crate::Error) -> Error {
    Error::new()
}

/// 32 bytes from the caller's RNG, or the trait's error if it fails.
fn draw32<R: TryCryptoRng + ?Sized>(rng: &mut R) -> Result<[u8; 32], Error> {
    let mut rnd = [0u8; 32];
    rng.try_fill_bytes(&mut rnd).map_err(|_| Error::new())?;
    Ok(rnd)
}

// ---- ML-DSA ----

impl<P: Params> Signer<mldsa::Signature<P>> for mldsa::SigningKey<P> {
    /// Deterministic ML-DSA (FIPS 204, rnd = 0^32) with an empty context, as RustCrypto's `ml-dsa`. For a
    /// context string or hedged signing use the native [`sign`](mldsa::SigningKey::sign).
    fn try_sign(&self, msg: &[u8]) -> Result<mldsa::Signature<P>, Error> {
        self.sign_deterministic(msg, &[]).map_err(err)
    }
}

impl<P: Params> RandomizedSigner<mldsa::Signature<P>> for mldsa::SigningKey<P> {
    /// Hedged ML-DSA (FIPS 204 Algorithm 2) with 32 bytes from `rng` and an empty context.
    fn try_sign_with_rng<R: TryCryptoRng + ?Sized>(
        &self,
        rng: &mut R,
        msg: &[u8],
    ) -> Result<mldsa::Signature<P>, Error> {
        let mut rnd = draw32(rng)?;
        let sig = self.sign_internal_with_rnd(msg, &[], &rnd).map_err(err);
        rnd.zeroize();
        sig
    }
}

impl<P: Params> Verifier<mldsa::Signature<P>> for mldsa::VerifyingKey<P> {
    /// Pure ML-DSA verification with an empty context.
    fn verify(&self, msg: &[u8], signature: &mldsa::Signature<P>) -> Result<(), Error> {
        mldsa::VerifyingKey::verify(self, msg, &[], signature).map_err(err)
    }
}

impl<P: Params> Keypair for mldsa::SigningKey<P> {
    type VerifyingKey = mldsa::VerifyingKey<P>;

    fn verifying_key(&self) -> mldsa::VerifyingKey<P> {
        mldsa::SigningKey::verifying_key(self)
    }
}

/// Parses an encoded signature (length and hint encoding checked).
impl<P: Params> TryFrom<&[u8]> for mldsa::Signature<P> {
    type Error = crate::Error;

    fn try_from(bytes: &[u8]) -> crate::Result<Self> {
        mldsa::Signature::from_bytes(bytes)
    }
}

macro_rules! mldsa_encoding {
    ($($p:ident: $len:literal;)*) => {$(
        impl From<mldsa::Signature<$p>> for [u8; $len] {
            fn from(sig: mldsa::Signature<$p>) -> Self {
                sig.to_bytes()
            }
        }

        impl SignatureEncoding for mldsa::Signature<$p> {
            type Repr = [u8; $len];
        }
    )*};
}

mldsa_encoding! {
    MlDsa44: 2420;
    MlDsa65: 3309;
    MlDsa87: 4627;
}

// ---- Ed25519 ----

impl Signer<ed25519::Signature> for ed25519::SigningKey {
    /// Ed25519 (RFC 8032), deterministic. Never fails.
    fn try_sign(&self, msg: &[u8]) -> Result<ed25519::Signature, Error> {
        Ok(ed25519::SigningKey::sign(self, msg))
    }
}

impl Verifier<ed25519::Signature> for ed25519::VerifyingKey {
    /// Ed25519 verification as the native [`verify`](ed25519::VerifyingKey::verify): canonical S, cofactored
    /// equation.
    fn verify(&self, msg: &[u8], signature: &ed25519::Signature) -> Result<(), Error> {
        ed25519::VerifyingKey::verify(self, msg, signature).map_err(err)
    }
}

impl Keypair for ed25519::SigningKey {
    type VerifyingKey = ed25519::VerifyingKey;

    fn verifying_key(&self) -> ed25519::VerifyingKey {
        ed25519::SigningKey::verifying_key(self)
    }
}

/// Parses `R ‖ S` (64 bytes, S below the group order).
impl TryFrom<&[u8]> for ed25519::Signature {
    type Error = crate::Error;

    fn try_from(bytes: &[u8]) -> crate::Result<Self> {
        ed25519::Signature::from_bytes(bytes)
    }
}

impl From<ed25519::Signature> for [u8; 64] {
    fn from(sig: ed25519::Signature) -> Self {
        sig.to_bytes()
    }
}

impl SignatureEncoding for ed25519::Signature {
    type Repr = [u8; 64];
}

// ---- ECDSA (P-256, secp256k1) ----

impl<C: PrimeCurve> Signer<weierstrass::Signature<C>> for weierstrass::SigningKey<C> {
    /// Deterministic ECDSA (RFC 6979) of SHA-256(`msg`); low-S on curves that normalize (secp256k1). Never
    /// fails.
    fn try_sign(&self, msg: &[u8]) -> Result<weierstrass::Signature<C>, Error> {
        Ok(weierstrass::SigningKey::sign(self, msg))
    }
}

impl<C: PrimeCurve> RandomizedSigner<weierstrass::Signature<C>> for weierstrass::SigningKey<C> {
    /// Hedged ECDSA of SHA-256(`msg`): RFC 6979 with 32 bytes from `rng` as the additional data k'.
    fn try_sign_with_rng<R: TryCryptoRng + ?Sized>(
        &self,
        rng: &mut R,
        msg: &[u8],
    ) -> Result<weierstrass::Signature<C>, Error> {
        let mut extra = draw32(rng)?;
        let digest = crate::hash::sha2::Sha256::digest(msg);
        let sig = self.sign_prehashed_with_extra(&digest, &extra).map_err(err);
        extra.zeroize();
        sig
    }
}

impl<C: PrimeCurve> PrehashSigner<weierstrass::Signature<C>> for weierstrass::SigningKey<C> {
    /// Deterministic ECDSA of a digest computed by the caller (at least 16 bytes).
    fn sign_prehash(&self, prehash: &[u8]) -> Result<weierstrass::Signature<C>, Error> {
        self.sign_prehashed(prehash).map_err(err)
    }
}

impl<C: PrimeCurve> Verifier<weierstrass::Signature<C>> for weierstrass::VerifyingKey<C> {
    /// ECDSA verification of SHA-256(`msg`) (high and low S both accepted, as the native `verify`).
    fn verify(&self, msg: &[u8], signature: &weierstrass::Signature<C>) -> Result<(), Error> {
        weierstrass::VerifyingKey::verify(self, msg, signature).map_err(err)
    }
}

impl<C: PrimeCurve> PrehashVerifier<weierstrass::Signature<C>> for weierstrass::VerifyingKey<C> {
    /// ECDSA verification of a digest computed by the caller (at least 16 bytes).
    fn verify_prehash(&self, prehash: &[u8], signature: &weierstrass::Signature<C>) -> Result<(), Error> {
        self.verify_prehashed(prehash, signature).map_err(err)
    }
}

impl<C: PrimeCurve> Keypair for weierstrass::SigningKey<C> {
    type VerifyingKey = weierstrass::VerifyingKey<C>;

    fn verifying_key(&self) -> weierstrass::VerifyingKey<C> {
        weierstrass::SigningKey::verifying_key(self)
    }
}

/// Parses `r ‖ s` (P1363, 64 bytes; r and s in [1, n − 1]).
impl<C: PrimeCurve> TryFrom<&[u8]> for weierstrass::Signature<C> {
    type Error = crate::Error;

    fn try_from(bytes: &[u8]) -> crate::Result<Self> {
        weierstrass::Signature::from_bytes(bytes)
    }
}

impl<C: PrimeCurve> From<weierstrass::Signature<C>> for [u8; SIGNATURE_LEN] {
    fn from(sig: weierstrass::Signature<C>) -> Self {
        sig.to_bytes()
    }
}

impl<C: PrimeCurve> SignatureEncoding for weierstrass::Signature<C> {
    type Repr = [u8; SIGNATURE_LEN];
}

// ---- RSA ----

#[cfg(feature = "alloc")]
pub use rsa_impl::RsaSignature;

#[cfg(feature = "alloc")]
mod rsa_impl {
    use super::{Error, Keypair, RandomizedSigner, SignatureEncoding, Signer, TryCryptoRng, Verifier, err};
    use crate::rsa::{pkcs1v15, pss};
    use alloc::boxed::Box;
    use alloc::vec::Vec;
    use core::convert::Infallible;

    /// An RSA signature (PSS or PKCS#1 v1.5): the big-endian integer, as long as the modulus. Parsing accepts
    /// any bytes; the verifier checks the length against its key.
    #[derive(Clone, PartialEq, Eq)]
    pub struct RsaSignature(Box<[u8]>);

    impl RsaSignature {
        /// The encoded signature.
        pub fn as_bytes(&self) -> &[u8] {
            &self.0
        }
    }

    impl AsRef<[u8]> for RsaSignature {
        fn as_ref(&self) -> &[u8] {
            &self.0
        }
    }

    impl core::fmt::Debug for RsaSignature {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            write!(f, "RsaSignature({} bytes)", self.0.len())
        }
    }

    impl From<Vec<u8>> for RsaSignature {
        fn from(v: Vec<u8>) -> Self {
            RsaSignature(v.into_boxed_slice())
        }
    }

    /// Any bytes (so `TryFrom<&[u8]>`, which `SignatureEncoding` asks for, never fails); the verifier checks
    /// the length against its key.
    impl From<&[u8]> for RsaSignature {
        fn from(bytes: &[u8]) -> Self {
            RsaSignature(bytes.into())
        }
    }

    impl From<RsaSignature> for Box<[u8]> {
        fn from(sig: RsaSignature) -> Self {
            sig.0
        }
    }

    impl SignatureEncoding for RsaSignature {
        type Repr = Box<[u8]>;
    }

    /// Turns the trait's fallible RNG into the infallible one pqkit's RSA calls take: a failure fills zeros
    /// and is remembered, and the caller then discards the signature and reports the error.
    struct FailureRecorder<'a, R: ?Sized> {
        rng: &'a mut R,
        failed: bool,
    }

    impl<R: TryCryptoRng + ?Sized> rand_core::TryRng for FailureRecorder<'_, R> {
        type Error = Infallible;

        fn try_next_u32(&mut self) -> Result<u32, Infallible> {
            let mut b = [0u8; 4];
            self.try_fill_bytes(&mut b)?;
            Ok(u32::from_le_bytes(b))
        }

        fn try_next_u64(&mut self) -> Result<u64, Infallible> {
            let mut b = [0u8; 8];
            self.try_fill_bytes(&mut b)?;
            Ok(u64::from_le_bytes(b))
        }

        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
            if self.failed || self.rng.try_fill_bytes(dst).is_err() {
                self.failed = true;
                dst.fill(0);
            }
            Ok(())
        }
    }

    impl<R: TryCryptoRng + ?Sized> rand_core::TryCryptoRng for FailureRecorder<'_, R> {}

    #[cfg(feature = "std")]
    impl Signer<RsaSignature> for pss::SigningKey {
        /// RSASSA-PSS with a salt from the operating system's RNG (the key's hash and salt length).
        fn try_sign(&self, msg: &[u8]) -> Result<RsaSignature, Error> {
            pss::SigningKey::sign(self, msg).map(RsaSignature::from).map_err(err)
        }
    }

    impl RandomizedSigner<RsaSignature> for pss::SigningKey {
        /// RSASSA-PSS with the salt drawn from `rng`.
        fn try_sign_with_rng<R: TryCryptoRng + ?Sized>(&self, rng: &mut R, msg: &[u8]) -> Result<RsaSignature, Error> {
            let mut checked = FailureRecorder { rng, failed: false };
            let sig = pss::SigningKey::sign_with_rng(self, msg, &mut checked).map_err(err)?;
            if checked.failed {
                return Err(Error::new());
            }
            Ok(RsaSignature::from(sig))
        }
    }

    impl Verifier<RsaSignature> for pss::VerifyingKey {
        /// RSASSA-PSS verification with the key's hash and salt-length rule.
        fn verify(&self, msg: &[u8], signature: &RsaSignature) -> Result<(), Error> {
            pss::VerifyingKey::verify(self, msg, &signature.0).map_err(err)
        }
    }

    impl Keypair for pss::SigningKey {
        type VerifyingKey = pss::VerifyingKey;

        fn verifying_key(&self) -> pss::VerifyingKey {
            pss::SigningKey::verifying_key(self)
        }
    }

    impl Signer<RsaSignature> for pkcs1v15::SigningKey {
        /// RSASSA-PKCS1-v1_5 with the key's hash (deterministic).
        fn try_sign(&self, msg: &[u8]) -> Result<RsaSignature, Error> {
            pkcs1v15::SigningKey::sign(self, msg).map(RsaSignature::from).map_err(err)
        }
    }

    impl Verifier<RsaSignature> for pkcs1v15::VerifyingKey {
        /// RSASSA-PKCS1-v1_5 verification with the key's hash.
        fn verify(&self, msg: &[u8], signature: &RsaSignature) -> Result<(), Error> {
            pkcs1v15::VerifyingKey::verify(self, msg, &signature.0).map_err(err)
        }
    }

    impl Keypair for pkcs1v15::SigningKey {
        type VerifyingKey = pkcs1v15::VerifyingKey;

        fn verifying_key(&self) -> pkcs1v15::VerifyingKey {
            pkcs1v15::SigningKey::verifying_key(self)
        }
    }
}
