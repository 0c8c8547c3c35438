//! Key encodings of RSA keys: PKCS#1 `RSAPrivateKey` / `RSAPublicKey` (RFC 8017 Appendix A.1), PKCS#8
//! `PrivateKeyInfo` (RFC 5208) and X.509 `SubjectPublicKeyInfo` (RFC 5280) with the rsaEncryption algorithm
//! (OID 1.2.840.113549.1.1.1, parameters NULL, RFC 3279 §2.3.1), each as DER or PEM (RFC 7468, labels
//! `RSA PRIVATE KEY`, `RSA PUBLIC KEY`, `PRIVATE KEY`, `PUBLIC KEY`). These are what `openssl genpkey`,
//! `openssl rsa` and `openssl pkey` read and write.
//!
//! ## What parsing accepts
//! Two-prime keys only: a multi-prime (version 1) PKCS#1 key is refused. Malformed DER, trailing data,
//! another algorithm's OID (RSASSA-PSS keys included), parameters other than NULL, and a PEM document with
//! another label are refused with [`Error::InvalidEncoding`] naming what was wrong. The components are then
//! checked by [`RsaPrivateKey::from_crt_components`] / [`RsaPublicKey::new`].
//!
//! ## Secrets
//! Exported private keys come back in [`Zeroizing`] containers; the intermediate PKCS#1 DER is wiped.

use alloc::string::String;
use alloc::vec::Vec;
use der::asn1::{AnyRef, BitStringRef, ObjectIdentifier, OctetStringRef, UintRef};
use der::{Decode, Encode};
use pkcs8::PrivateKeyInfoRef;
use spki::{AlgorithmIdentifierRef, SubjectPublicKeyInfoRef};
use zeroize::Zeroizing;

use super::{RsaPrivateKey, RsaPublicKey};
use crate::{Error, Result};

/// rsaEncryption (RFC 8017 Appendix A.1).
pub const RSA_ENCRYPTION_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
/// PEM label of a PKCS#1 private key.
pub const PKCS1_PRIVATE_LABEL: &str = "RSA PRIVATE KEY";
/// PEM label of a PKCS#1 public key.
pub const PKCS1_PUBLIC_LABEL: &str = "RSA PUBLIC KEY";
/// PEM label of a PKCS#8 private key.
pub const PRIVATE_KEY_LABEL: &str = "PRIVATE KEY";
/// PEM label of a SubjectPublicKeyInfo.
pub const PUBLIC_KEY_LABEL: &str = "PUBLIC KEY";

const ALG: &str = "RSA";

fn enc(reason: &'static str) -> Error {
    Error::InvalidEncoding { algorithm: ALG, reason }
}

fn uint(bytes: &[u8]) -> Result<UintRef<'_>> {
    UintRef::new(bytes).map_err(|_| enc("could not encode an integer"))
}

fn pem_decode(pem: &str, label: &'static str, wrong: &'static str) -> Result<Zeroizing<Vec<u8>>> {
    let (got, der) = pem_rfc7468::decode_vec(pem.as_bytes()).map_err(|_| enc("PEM: malformed document"))?;
    let der = Zeroizing::new(der);
    if got != label {
        return Err(enc(wrong));
    }
    Ok(der)
}

fn pem_encode(label: &'static str, der: &[u8]) -> Result<String> {
    pem_rfc7468::encode_string(label, pem_rfc7468::LineEnding::LF, der).map_err(|_| enc("PEM: encoding failed"))
}

fn alg_id() -> AlgorithmIdentifierRef<'static> {
    AlgorithmIdentifierRef { oid: RSA_ENCRYPTION_OID, parameters: Some(AnyRef::NULL) }
}

fn check_alg(alg: &AlgorithmIdentifierRef<'_>, wrong_oid: &'static str) -> Result<()> {
    if alg.oid != RSA_ENCRYPTION_OID {
        return Err(enc(wrong_oid));
    }
    match alg.parameters {
        Some(p) if p == AnyRef::NULL => Ok(()),
        _ => Err(enc("rsaEncryption parameters must be NULL")),
    }
}

impl RsaPublicKey {
    /// PKCS#1 `RSAPublicKey` DER.
    pub fn to_pkcs1_der(&self) -> Result<Vec<u8>> {
        let (n, e) = (self.n(), self.e());
        let k = pkcs1::RsaPublicKey { modulus: uint(&n)?, public_exponent: uint(&e)? };
        k.to_der().map_err(|_| enc("PKCS#1: encoding failed"))
    }

    /// Parses PKCS#1 `RSAPublicKey` DER.
    pub fn from_pkcs1_der(der: &[u8]) -> Result<Self> {
        let k = pkcs1::RsaPublicKeyRef::from_der(der).map_err(|_| enc("PKCS#1 RSAPublicKey: malformed DER"))?;
        RsaPublicKey::new(k.modulus.as_bytes(), k.public_exponent.as_bytes())
    }

    /// PKCS#1 `RSAPublicKey` PEM (`RSA PUBLIC KEY`).
    pub fn to_pkcs1_pem(&self) -> Result<String> {
        pem_encode(PKCS1_PUBLIC_LABEL, &self.to_pkcs1_der()?)
    }

    /// Parses PKCS#1 `RSAPublicKey` PEM.
    pub fn from_pkcs1_pem(pem: &str) -> Result<Self> {
        let der = pem_decode(pem, PKCS1_PUBLIC_LABEL, "PEM: the label is not RSA PUBLIC KEY")?;
        Self::from_pkcs1_der(&der)
    }

    /// SubjectPublicKeyInfo DER (rsaEncryption).
    pub fn to_public_key_der(&self) -> Result<Vec<u8>> {
        let inner = self.to_pkcs1_der()?;
        let spki = SubjectPublicKeyInfoRef {
            algorithm: alg_id(),
            subject_public_key: BitStringRef::from_bytes(&inner).map_err(|_| enc("SPKI: encoding failed"))?,
        };
        spki.to_der().map_err(|_| enc("SPKI: encoding failed"))
    }

    /// Parses SubjectPublicKeyInfo DER (rsaEncryption only).
    pub fn from_public_key_der(der: &[u8]) -> Result<Self> {
        let spki = SubjectPublicKeyInfoRef::from_der(der).map_err(|_| enc("SubjectPublicKeyInfo: malformed DER"))?;
        check_alg(&spki.algorithm, "SubjectPublicKeyInfo: the algorithm is not rsaEncryption (1.2.840.113549.1.1.1)")?;
        let bits = spki
            .subject_public_key
            .as_bytes()
            .ok_or_else(|| enc("SubjectPublicKeyInfo: the key BIT STRING has unused bits"))?;
        Self::from_pkcs1_der(bits)
    }

    /// SubjectPublicKeyInfo PEM (`PUBLIC KEY`).
    pub fn to_public_key_pem(&self) -> Result<String> {
        pem_encode(PUBLIC_KEY_LABEL, &self.to_public_key_der()?)
    }

    /// Parses SubjectPublicKeyInfo PEM.
    pub fn from_public_key_pem(pem: &str) -> Result<Self> {
        let der = pem_decode(pem, PUBLIC_KEY_LABEL, "PEM: the label is not PUBLIC KEY")?;
        Self::from_public_key_der(&der)
    }
}

impl RsaPrivateKey {
    /// PKCS#1 `RSAPrivateKey` DER (two-prime, version 0).
    pub fn to_pkcs1_der(&self) -> Result<Zeroizing<Vec<u8>>> {
        let public = self.public_key();
        let (n, e) = (public.n(), public.e());
        let (d, p, q, dp, dq, qinv) = (self.d(), self.p(), self.q(), self.dp(), self.dq(), self.qinv());
        let k = pkcs1::RsaPrivateKey {
            modulus: uint(&n)?,
            public_exponent: uint(&e)?,
            private_exponent: uint(&d)?,
            prime1: uint(&p)?,
            prime2: uint(&q)?,
            exponent1: uint(&dp)?,
            exponent2: uint(&dq)?,
            coefficient: uint(&qinv)?,
            other_prime_infos: None,
        };
        let mut out = Zeroizing::new(Vec::new());
        k.encode_to_vec(&mut out).map_err(|_| enc("PKCS#1: encoding failed"))?;
        Ok(out)
    }

    /// Parses PKCS#1 `RSAPrivateKey` DER; every component is checked for consistency.
    pub fn from_pkcs1_der(der: &[u8]) -> Result<Self> {
        let k = pkcs1::RsaPrivateKeyRef::from_der(der).map_err(|_| enc("PKCS#1 RSAPrivateKey: malformed DER"))?;
        if k.other_prime_infos.is_some() {
            return Err(enc("PKCS#1 RSAPrivateKey: multi-prime keys are not supported"));
        }
        RsaPrivateKey::from_crt_components(
            k.modulus.as_bytes(),
            k.public_exponent.as_bytes(),
            k.private_exponent.as_bytes(),
            k.prime1.as_bytes(),
            k.prime2.as_bytes(),
            k.exponent1.as_bytes(),
            k.exponent2.as_bytes(),
            k.coefficient.as_bytes(),
        )
    }

    /// PKCS#1 `RSAPrivateKey` PEM (`RSA PRIVATE KEY`).
    pub fn to_pkcs1_pem(&self) -> Result<Zeroizing<String>> {
        let der = self.to_pkcs1_der()?;
        pem_encode(PKCS1_PRIVATE_LABEL, &der).map(Zeroizing::new)
    }

    /// Parses PKCS#1 `RSAPrivateKey` PEM.
    pub fn from_pkcs1_pem(pem: &str) -> Result<Self> {
        let der = pem_decode(pem, PKCS1_PRIVATE_LABEL, "PEM: the label is not RSA PRIVATE KEY")?;
        Self::from_pkcs1_der(&der)
    }

    /// PKCS#8 `PrivateKeyInfo` DER (version 1, rsaEncryption with NULL parameters).
    pub fn to_pkcs8_der(&self) -> Result<Zeroizing<Vec<u8>>> {
        let inner = self.to_pkcs1_der()?;
        let info = PrivateKeyInfoRef {
            algorithm: alg_id(),
            private_key: OctetStringRef::new(&inner).map_err(|_| enc("PKCS#8: encoding failed"))?,
            public_key: None,
        };
        let mut out = Zeroizing::new(Vec::new());
        info.encode_to_vec(&mut out).map_err(|_| enc("PKCS#8: encoding failed"))?;
        Ok(out)
    }

    /// Parses PKCS#8 `PrivateKeyInfo` DER (rsaEncryption only).
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self> {
        let info = PrivateKeyInfoRef::from_der(der).map_err(|_| enc("PKCS#8: malformed DER"))?;
        check_alg(&info.algorithm, "PKCS#8: the algorithm is not rsaEncryption (1.2.840.113549.1.1.1)")?;
        Self::from_pkcs1_der(info.private_key.as_bytes())
    }

    /// PKCS#8 PEM (`PRIVATE KEY`).
    pub fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>> {
        let der = self.to_pkcs8_der()?;
        pem_encode(PRIVATE_KEY_LABEL, &der).map(Zeroizing::new)
    }

    /// Parses PKCS#8 PEM.
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self> {
        let der = pem_decode(pem, PRIVATE_KEY_LABEL, "PEM: the label is not PRIVATE KEY")?;
        Self::from_pkcs8_der(&der)
    }
}
