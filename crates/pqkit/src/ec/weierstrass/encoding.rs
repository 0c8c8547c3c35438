//! Key files of the Weierstrass curves, generic over the curve's OID ([`PrimeCurve::OID`]):
//!
//! - private keys as PKCS#8 `PrivateKeyInfo` (RFC 5208 / RFC 5958, label `PRIVATE KEY`) holding a SEC1
//!   `ECPrivateKey` (RFC 5915), or as that `ECPrivateKey` alone (label `EC PRIVATE KEY`, OpenSSL's
//!   "traditional" form), DER or PEM;
//! - public keys as `SubjectPublicKeyInfo` (RFC 5480, label `PUBLIC KEY`), DER or PEM.
//!
//! The algorithm identifier is id-ecPublicKey (1.2.840.10045.2.1) with the curve's named-curve OID as its
//! parameters (RFC 5480 §2.1.1), as `openssl ecparam -genkey` and `openssl pkey` write.
//!
//! ## What is written
//! - PKCS#8: version 1, parameters = the curve OID; the inner `ECPrivateKey` holds the 32-byte scalar and
//!   the uncompressed public key, and omits the parameters (they are in the outer identifier), as OpenSSL
//!   writes it.
//! - `EC PRIVATE KEY`: the scalar, the parameters (the curve OID) and the uncompressed public key.
//! - SubjectPublicKeyInfo: the uncompressed point (65 bytes).
//!
//! ## What parsing accepts
//! PKCS#8 versions 1 and 2; `ECPrivateKey` version 1 with a 32-byte private key in [1, n − 1]; parameters,
//! where present (in the PKCS#8 identifier, which must have them, and optionally inside the
//! `ECPrivateKey`), must be the curve's named-curve OID (explicit curve parameters are refused); a public
//! key inside the private key, where present, must be the one the scalar derives. Public keys: SEC1 points,
//! compressed or uncompressed, validated as [`PublicKey::from_sec1_bytes`]. Everything else is
//! [`Error::InvalidEncoding`] naming what was wrong: malformed DER, trailing data, another algorithm or curve,
//! a PEM document that is malformed or carries another label.

use super::{PrimeCurve, PublicKey, SecretKey, SigningKey, VerifyingKey};
use crate::{Error, Result};
use alloc::string::String;
use alloc::vec::Vec;
use der::asn1::{AnyRef, BitStringRef, ObjectIdentifier, OctetStringRef};
use der::{Decode, Encode};
use pkcs8::PrivateKeyInfoRef;
use sec1::{EcParameters, EcPrivateKey};
use spki::{AlgorithmIdentifierRef, SubjectPublicKeyInfoRef};
use zeroize::{Zeroize, Zeroizing};

/// PEM label of a PKCS#8 private key.
pub const PRIVATE_KEY_LABEL: &str = "PRIVATE KEY";
/// PEM label of a SEC1 `ECPrivateKey`.
pub const EC_PRIVATE_KEY_LABEL: &str = "EC PRIVATE KEY";
/// PEM label of a SubjectPublicKeyInfo.
pub const PUBLIC_KEY_LABEL: &str = "PUBLIC KEY";
/// id-ecPublicKey (RFC 5480 §2.1.1).
pub const EC_PUBLIC_KEY_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");

/// Largest decoded PEM private key accepted.
const MAX_PRIVATE_DER: usize = 1024;

fn bad<C: PrimeCurve>(reason: &'static str) -> Error {
    Error::InvalidEncoding { algorithm: C::NAME, reason }
}

fn encode_failed<C: PrimeCurve>() -> Error {
    bad::<C>("DER encoding failed")
}

fn curve_oid<C: PrimeCurve>() -> Result<ObjectIdentifier> {
    ObjectIdentifier::new(C::OID).map_err(|_| bad::<C>("the curve's OID is malformed"))
}

/// Checks an algorithm identifier: id-ecPublicKey with this curve's named-curve OID.
fn check_algorithm<C: PrimeCurve>(alg: &AlgorithmIdentifierRef<'_>, what: &'static str) -> Result<()> {
    if alg.oid != EC_PUBLIC_KEY_OID {
        return Err(bad::<C>(match what {
            "pkcs8" => "PKCS#8: the algorithm is not id-ecPublicKey (OID 1.2.840.10045.2.1)",
            _ => "SubjectPublicKeyInfo: the algorithm is not id-ecPublicKey (OID 1.2.840.10045.2.1)",
        }));
    }
    let params: Option<AnyRef<'_>> = alg.parameters;
    let Some(params) = params else {
        return Err(bad::<C>("the algorithm parameters (the named curve) are missing"));
    };
    match params.decode_as::<ObjectIdentifier>() {
        Ok(oid) if oid == curve_oid::<C>()? => Ok(()),
        Ok(_) => Err(bad::<C>("the named curve is another curve")),
        Err(_) => Err(bad::<C>("the curve parameters are not a named-curve OID (explicit parameters are refused)")),
    }
}

// ---- private keys ----

/// The DER `ECPrivateKey` of `key`, with or without the parameters.
fn ec_private_der<C: PrimeCurve>(key: &SecretKey<C>, with_params: bool) -> Result<Zeroizing<Vec<u8>>> {
    let d = Zeroizing::new(key.to_bytes());
    let public = key.public_key().to_uncompressed();
    let ec = EcPrivateKey {
        private_key: &d[..],
        parameters: if with_params { Some(EcParameters::NamedCurve(curve_oid::<C>()?)) } else { None },
        public_key: Some(&public),
    };
    ec.to_der().map(Zeroizing::new).map_err(|_| encode_failed::<C>())
}

/// Parses a DER `ECPrivateKey`; `outer_checked` when the curve was named by an enclosing PKCS#8 identifier.
fn ec_private_from_der<C: PrimeCurve>(der: &[u8], outer_checked: bool) -> Result<SecretKey<C>> {
    let (ec, rest) = EcPrivateKey::from_der_partial(der)
        .map_err(|_| bad::<C>("ECPrivateKey: not a DER ECPrivateKey version 1 (malformed or truncated)"))?;
    if !rest.is_empty() {
        return Err(bad::<C>("ECPrivateKey: trailing data after the structure"));
    }
    match ec.parameters {
        Some(EcParameters::NamedCurve(oid)) if oid != curve_oid::<C>()? => {
            return Err(bad::<C>("ECPrivateKey: the named curve is another curve"));
        }
        None if !outer_checked => {
            return Err(bad::<C>("ECPrivateKey: the curve parameters are missing"));
        }
        _ => {}
    }
    if ec.private_key.len() != 32 {
        return Err(bad::<C>("ECPrivateKey: the private key must be 32 bytes"));
    }
    let key = SecretKey::<C>::from_bytes(ec.private_key)?;
    if let Some(p) = ec.public_key {
        let theirs = PublicKey::<C>::from_sec1_bytes(p)
            .map_err(|_| bad::<C>("ECPrivateKey: the public key is not a valid point"))?;
        if theirs != key.public_key() {
            return Err(bad::<C>("ECPrivateKey: the public key does not match the private key"));
        }
    }
    Ok(key)
}

fn pkcs8_der<C: PrimeCurve>(key: &SecretKey<C>) -> Result<Zeroizing<Vec<u8>>> {
    let inner = ec_private_der(key, false)?;
    let oid = curve_oid::<C>()?;
    let params = AnyRef::from(&oid);
    let info = PrivateKeyInfoRef::new(
        AlgorithmIdentifierRef { oid: EC_PUBLIC_KEY_OID, parameters: Some(params) },
        OctetStringRef::new(&inner[..]).map_err(|_| encode_failed::<C>())?,
    );
    info.to_der().map(Zeroizing::new).map_err(|_| encode_failed::<C>())
}

fn pkcs8_from_der<C: PrimeCurve>(der: &[u8]) -> Result<SecretKey<C>> {
    let (info, rest) = PrivateKeyInfoRef::from_der_partial(der)
        .map_err(|_| bad::<C>("PKCS#8: not a DER PrivateKeyInfo (malformed or truncated)"))?;
    if !rest.is_empty() {
        return Err(bad::<C>("PKCS#8: trailing data after the PrivateKeyInfo"));
    }
    check_algorithm::<C>(&info.algorithm, "pkcs8")?;
    let key = ec_private_from_der::<C>(info.private_key.as_bytes(), true)?;
    if let Some(bits) = info.public_key {
        let ok = bits
            .as_bytes()
            .and_then(|b| PublicKey::<C>::from_sec1_bytes(b).ok())
            .is_some_and(|p| p == key.public_key());
        if !ok {
            return Err(bad::<C>("PKCS#8: the public key does not match the private key"));
        }
    }
    Ok(key)
}

fn to_pem<C: PrimeCurve>(label: &'static str, der: &[u8]) -> Result<Zeroizing<String>> {
    pem_rfc7468::encode_string(label, pem_rfc7468::LineEnding::LF, der)
        .map(Zeroizing::new)
        .map_err(|_| encode_failed::<C>())
}

/// Decodes a PEM private key with `label` into a wiped stack buffer and parses it with `parse`.
fn private_from_pem<C: PrimeCurve>(
    pem: &str,
    label: &'static str,
    wrong_label: &'static str,
    parse: fn(&[u8]) -> Result<SecretKey<C>>,
) -> Result<SecretKey<C>> {
    let got = pem_rfc7468::decode_label(pem.as_bytes())
        .map_err(|_| bad::<C>("PEM: malformed document (RFC 7468 boundaries)"))?;
    if got != label {
        return Err(bad::<C>(wrong_label));
    }
    let mut buf = Zeroizing::new([0u8; MAX_PRIVATE_DER]);
    let (_, der) = pem_rfc7468::decode(pem.as_bytes(), &mut buf[..])
        .map_err(|_| bad::<C>("PEM: malformed document (base64 body)"))?;
    parse(der)
}

impl<C: PrimeCurve> SecretKey<C> {
    /// The key as PKCS#8 DER (id-ecPublicKey, the named curve, an `ECPrivateKey` with the public key).
    pub fn to_pkcs8_der(&self) -> Result<Zeroizing<Vec<u8>>> {
        pkcs8_der(self)
    }

    /// The key as a PEM `PRIVATE KEY` document (PKCS#8).
    pub fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>> {
        to_pem::<C>(PRIVATE_KEY_LABEL, &pkcs8_der(self)?)
    }

    /// Parses a PKCS#8 DER private key (see the [module docs](self)).
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self> {
        pkcs8_from_der(der)
    }

    /// Parses a PEM `PRIVATE KEY` document (PKCS#8).
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self> {
        private_from_pem(
            pem,
            PRIVATE_KEY_LABEL,
            "PEM: the label must be \"PRIVATE KEY\" (an unencrypted PKCS#8 key)",
            pkcs8_from_der::<C>,
        )
    }

    /// The key as a SEC1 `ECPrivateKey` DER (RFC 5915: with the named curve and the public key).
    pub fn to_sec1_der(&self) -> Result<Zeroizing<Vec<u8>>> {
        ec_private_der(self, true)
    }

    /// The key as a PEM `EC PRIVATE KEY` document.
    pub fn to_sec1_pem(&self) -> Result<Zeroizing<String>> {
        to_pem::<C>(EC_PRIVATE_KEY_LABEL, &ec_private_der(self, true)?)
    }

    /// Parses a SEC1 `ECPrivateKey` DER (the named curve must be present).
    pub fn from_sec1_der(der: &[u8]) -> Result<Self> {
        ec_private_from_der(der, false)
    }

    /// Parses a PEM `EC PRIVATE KEY` document.
    pub fn from_sec1_pem(pem: &str) -> Result<Self> {
        private_from_pem(
            pem,
            EC_PRIVATE_KEY_LABEL,
            "PEM: the label must be \"EC PRIVATE KEY\" (an unencrypted SEC1 key)",
            |d| ec_private_from_der::<C>(d, false),
        )
    }
}

impl<C: PrimeCurve> SigningKey<C> {
    /// See [`SecretKey::to_pkcs8_der`].
    pub fn to_pkcs8_der(&self) -> Result<Zeroizing<Vec<u8>>> {
        self.as_secret_key().to_pkcs8_der()
    }
    /// See [`SecretKey::to_pkcs8_pem`].
    pub fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>> {
        self.as_secret_key().to_pkcs8_pem()
    }
    /// See [`SecretKey::from_pkcs8_der`].
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self> {
        SecretKey::from_pkcs8_der(der).map(SigningKey::from)
    }
    /// See [`SecretKey::from_pkcs8_pem`].
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self> {
        SecretKey::from_pkcs8_pem(pem).map(SigningKey::from)
    }
    /// See [`SecretKey::to_sec1_der`].
    pub fn to_sec1_der(&self) -> Result<Zeroizing<Vec<u8>>> {
        self.as_secret_key().to_sec1_der()
    }
    /// See [`SecretKey::to_sec1_pem`].
    pub fn to_sec1_pem(&self) -> Result<Zeroizing<String>> {
        self.as_secret_key().to_sec1_pem()
    }
    /// See [`SecretKey::from_sec1_der`].
    pub fn from_sec1_der(der: &[u8]) -> Result<Self> {
        SecretKey::from_sec1_der(der).map(SigningKey::from)
    }
    /// See [`SecretKey::from_sec1_pem`].
    pub fn from_sec1_pem(pem: &str) -> Result<Self> {
        SecretKey::from_sec1_pem(pem).map(SigningKey::from)
    }
}

// ---- public keys ----

fn spki_der<C: PrimeCurve>(key: &PublicKey<C>) -> Result<Vec<u8>> {
    let point = key.to_uncompressed();
    let oid = curve_oid::<C>()?;
    let spki = SubjectPublicKeyInfoRef {
        algorithm: AlgorithmIdentifierRef { oid: EC_PUBLIC_KEY_OID, parameters: Some(AnyRef::from(&oid)) },
        subject_public_key: BitStringRef::from_bytes(&point).map_err(|_| encode_failed::<C>())?,
    };
    spki.to_der().map_err(|_| encode_failed::<C>())
}

fn spki_from_der<C: PrimeCurve>(der: &[u8]) -> Result<PublicKey<C>> {
    let (spki, rest) = SubjectPublicKeyInfoRef::from_der_partial(der)
        .map_err(|_| bad::<C>("SubjectPublicKeyInfo: not a DER structure (malformed or truncated)"))?;
    if !rest.is_empty() {
        return Err(bad::<C>("SubjectPublicKeyInfo: trailing data after the structure"));
    }
    check_algorithm::<C>(&spki.algorithm, "spki")?;
    let Some(point) = spki.subject_public_key.as_bytes() else {
        return Err(bad::<C>("SubjectPublicKeyInfo: the public key BIT STRING has unused bits"));
    };
    PublicKey::from_sec1_bytes(point)
}

fn spki_from_pem<C: PrimeCurve>(pem: &str) -> Result<PublicKey<C>> {
    let (label, mut der) = pem_rfc7468::decode_vec(pem.as_bytes())
        .map_err(|_| bad::<C>("PEM: malformed document (RFC 7468 boundaries or base64 body)"))?;
    let r = if label != PUBLIC_KEY_LABEL {
        Err(bad::<C>("PEM: the label must be \"PUBLIC KEY\" (a SubjectPublicKeyInfo)"))
    } else {
        spki_from_der(&der)
    };
    der.zeroize();
    r
}

impl<C: PrimeCurve> PublicKey<C> {
    /// The key as SubjectPublicKeyInfo DER (uncompressed point).
    pub fn to_public_key_der(&self) -> Result<Vec<u8>> {
        spki_der(self)
    }

    /// The key as a PEM `PUBLIC KEY` document.
    pub fn to_public_key_pem(&self) -> Result<String> {
        let der = spki_der(self)?;
        pem_rfc7468::encode_string(PUBLIC_KEY_LABEL, pem_rfc7468::LineEnding::LF, &der)
            .map_err(|_| encode_failed::<C>())
    }

    /// Parses a SubjectPublicKeyInfo DER public key (see the [module docs](self)).
    pub fn from_public_key_der(der: &[u8]) -> Result<Self> {
        spki_from_der(der)
    }

    /// Parses a PEM `PUBLIC KEY` document.
    pub fn from_public_key_pem(pem: &str) -> Result<Self> {
        spki_from_pem(pem)
    }
}

impl<C: PrimeCurve> VerifyingKey<C> {
    /// See [`PublicKey::to_public_key_der`].
    pub fn to_public_key_der(&self) -> Result<Vec<u8>> {
        self.as_public_key().to_public_key_der()
    }
    /// See [`PublicKey::to_public_key_pem`].
    pub fn to_public_key_pem(&self) -> Result<String> {
        self.as_public_key().to_public_key_pem()
    }
    /// See [`PublicKey::from_public_key_der`].
    pub fn from_public_key_der(der: &[u8]) -> Result<Self> {
        PublicKey::from_public_key_der(der).map(VerifyingKey::from)
    }
    /// See [`PublicKey::from_public_key_pem`].
    pub fn from_public_key_pem(pem: &str) -> Result<Self> {
        PublicKey::from_public_key_pem(pem).map(VerifyingKey::from)
    }
}
