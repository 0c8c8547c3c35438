//! Key encodings of the Curve25519 keys (RFC 8410): private keys as PKCS#8 `PrivateKeyInfo` (RFC 5208 /
//! RFC 5958), public keys as X.509 `SubjectPublicKeyInfo` (RFC 5280), each as DER or as PEM (RFC 7468,
//! labels `PRIVATE KEY` and `PUBLIC KEY`). These are the files `openssl genpkey -algorithm ed25519` (or
//! `x25519`) and `openssl pkey` read and write.
//!
//! ```
//! use pqkit::ec::ed25519::{SigningKey, VerifyingKey};
//! let sk = SigningKey::from_seed(&[42; 32]);
//! let pem = sk.to_pkcs8_pem().unwrap(); // Zeroizing<String>: "-----BEGIN PRIVATE KEY-----\n..."
//! assert_eq!(SigningKey::from_pkcs8_pem(&pem).unwrap().to_seed(), [42; 32]);
//! let pub_pem = sk.verifying_key().to_public_key_pem().unwrap();
//! assert_eq!(VerifyingKey::from_public_key_pem(&pub_pem).unwrap(), sk.verifying_key());
//! ```
//!
//! ## Layout
//! - Algorithm identifiers: id-Ed25519 (1.3.101.112) and id-X25519 (1.3.101.110), with the parameters
//!   **absent** (RFC 8410 §3).
//! - Private key: the PKCS#8 `privateKey` OCTET STRING holds the DER of `CurvePrivateKey ::= OCTET STRING`
//!   with the 32-byte key (the Ed25519 seed, or the X25519 scalar as given, unclamped). pqkit writes
//!   version 1 (no public key), as OpenSSL does.
//! - Public key: the `subjectPublicKey` BIT STRING holds the 32-byte key with no unused bits.
//!
//! ## What parsing accepts
//! Version 1 and version 2 (`OneAsymmetricKey`, RFC 5958) private keys; attributes are skipped; a version 2
//! public key must be the one the private key derives (else [`Error::InvalidEncoding`]). Everything else is
//! refused with [`Error::InvalidEncoding`] naming what was wrong: malformed DER, data after the structure,
//! another algorithm's OID, parameters present, a key that is not 32 bytes (or a BIT STRING with unused
//! bits), a PEM document that is malformed or carries another label (e.g. `ENCRYPTED PRIVATE KEY`). Ed25519
//! public keys are then checked as [`VerifyingKey::from_bytes`] does (canonical, on the curve, not of small
//! order); X25519 public keys are any 32 bytes (RFC 7748).
//!
//! ## Secrets
//! Exported private keys come back in [`Zeroizing`] containers, built in one allocation of the exact size;
//! intermediate buffers (the inner `CurvePrivateKey`, decoded PEM) live on the stack and are wiped.

use super::ed25519::{SigningKey, VerifyingKey};
use super::x25519::{X25519PublicKey, X25519SecretKey};
use crate::{Error, Result};
use alloc::string::String;
use alloc::vec::Vec;
use der::asn1::{BitStringRef, ObjectIdentifier, OctetStringRef};
use der::{Decode, Encode};
use pkcs8::PrivateKeyInfoRef;
use spki::{AlgorithmIdentifierRef, SubjectPublicKeyInfoRef};
use zeroize::{Zeroize, Zeroizing};

/// PEM label of a PKCS#8 private key.
pub const PRIVATE_KEY_LABEL: &str = "PRIVATE KEY";
/// PEM label of a SubjectPublicKeyInfo.
pub const PUBLIC_KEY_LABEL: &str = "PUBLIC KEY";

/// id-Ed25519 (RFC 8410 §3).
pub const ED25519_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
/// id-X25519 (RFC 8410 §3).
pub const X25519_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.110");

/// One of the two algorithms, with its error texts.
struct Alg {
    name: &'static str,
    oid: ObjectIdentifier,
    wrong_oid_private: &'static str,
    wrong_oid_public: &'static str,
}

const ED25519: Alg = Alg {
    name: "Ed25519",
    oid: ED25519_OID,
    wrong_oid_private: "PKCS#8: the algorithm is not id-Ed25519 (OID 1.3.101.112)",
    wrong_oid_public: "SubjectPublicKeyInfo: the algorithm is not id-Ed25519 (OID 1.3.101.112)",
};

const X25519: Alg = Alg {
    name: "X25519",
    oid: X25519_OID,
    wrong_oid_private: "PKCS#8: the algorithm is not id-X25519 (OID 1.3.101.110)",
    wrong_oid_public: "SubjectPublicKeyInfo: the algorithm is not id-X25519 (OID 1.3.101.110)",
};

/// Largest decoded PEM private key accepted (a version 2 key with attributes is ~120 bytes).
const MAX_PRIVATE_DER: usize = 1024;

/// A parsed private key: the 32-byte key and the version 2 public key, if present.
type Parsed = (Zeroizing<[u8; 32]>, Option<[u8; 32]>);

fn bad(alg: &Alg, reason: &'static str) -> Error {
    Error::InvalidEncoding { algorithm: alg.name, reason }
}

/// DER encoding of fixed-size structures cannot fail; should it ever, it is an error, not a panic.
fn encode_failed(alg: &Alg) -> Error {
    bad(alg, "DER encoding failed")
}

// ---- PKCS#8 ----

fn private_to_der(alg: &Alg, key: &[u8; 32]) -> Result<Zeroizing<Vec<u8>>> {
    // CurvePrivateKey ::= OCTET STRING, on the stack: 04 20 || key.
    let mut inner = Zeroizing::new([0u8; 34]);
    let inner_len = OctetStringRef::new(key)
        .and_then(|o| o.encode_to_slice(&mut inner[..]).map(<[u8]>::len))
        .map_err(|_| encode_failed(alg))?;
    let info = PrivateKeyInfoRef::new(
        AlgorithmIdentifierRef { oid: alg.oid, parameters: None },
        OctetStringRef::new(&inner[..inner_len]).map_err(|_| encode_failed(alg))?,
    );
    // `to_der` sizes the vector once (no reallocation leaves copies behind).
    info.to_der().map(Zeroizing::new).map_err(|_| encode_failed(alg))
}

/// The 32-byte private key and the version 2 public key, if present.
fn private_from_der(alg: &Alg, der: &[u8]) -> Result<Parsed> {
    let (info, rest) = PrivateKeyInfoRef::from_der_partial(der)
        .map_err(|_| bad(alg, "PKCS#8: not a DER PrivateKeyInfo (malformed or truncated)"))?;
    if !rest.is_empty() {
        return Err(bad(alg, "PKCS#8: trailing data after the PrivateKeyInfo"));
    }
    if info.algorithm.oid != alg.oid {
        return Err(bad(alg, alg.wrong_oid_private));
    }
    if info.algorithm.parameters.is_some() {
        return Err(bad(alg, "PKCS#8: the algorithm parameters must be absent (RFC 8410)"));
    }
    let curve_key = <&OctetStringRef>::from_der(info.private_key.as_bytes()).map_err(|_| {
        bad(alg, "PKCS#8: privateKey must hold exactly one DER OCTET STRING (CurvePrivateKey, RFC 8410)")
    })?;
    let bytes = curve_key.as_bytes();
    if bytes.len() != 32 {
        return Err(bad(alg, "PKCS#8: the private key must be 32 bytes"));
    }
    let mut key = Zeroizing::new([0u8; 32]);
    key.copy_from_slice(bytes);
    let public = match info.public_key {
        None => None,
        Some(bits) => match bits.as_bytes() {
            Some(b) if b.len() == 32 => {
                let mut p = [0u8; 32];
                p.copy_from_slice(b);
                Some(p)
            }
            _ => return Err(bad(alg, "PKCS#8: the public key must be 32 bytes with no unused bits")),
        },
    };
    Ok((key, public))
}

fn private_to_pem(alg: &Alg, key: &[u8; 32]) -> Result<Zeroizing<String>> {
    let der = private_to_der(alg, key)?;
    pem_rfc7468::encode_string(PRIVATE_KEY_LABEL, pem_rfc7468::LineEnding::LF, &der)
        .map(Zeroizing::new)
        .map_err(|_| encode_failed(alg))
}

/// Decodes a PEM private key into a wiped stack buffer and parses it.
fn private_from_pem(alg: &Alg, pem: &str) -> Result<Parsed> {
    let label = pem_rfc7468::decode_label(pem.as_bytes())
        .map_err(|_| bad(alg, "PEM: malformed document (RFC 7468 boundaries)"))?;
    if label != PRIVATE_KEY_LABEL {
        return Err(bad(alg, "PEM: the label must be \"PRIVATE KEY\" (an unencrypted PKCS#8 key)"));
    }
    let mut buf = Zeroizing::new([0u8; MAX_PRIVATE_DER]);
    let (_, der) = pem_rfc7468::decode(pem.as_bytes(), &mut buf[..])
        .map_err(|_| bad(alg, "PEM: malformed document (base64 body)"))?;
    private_from_der(alg, der)
}

// ---- SubjectPublicKeyInfo ----

fn public_to_der(alg: &Alg, key: &[u8; 32]) -> Result<Vec<u8>> {
    let spki = SubjectPublicKeyInfoRef {
        algorithm: AlgorithmIdentifierRef { oid: alg.oid, parameters: None },
        subject_public_key: BitStringRef::from_bytes(key).map_err(|_| encode_failed(alg))?,
    };
    spki.to_der().map_err(|_| encode_failed(alg))
}

fn public_from_der(alg: &Alg, der: &[u8]) -> Result<[u8; 32]> {
    let (spki, rest) = SubjectPublicKeyInfoRef::from_der_partial(der)
        .map_err(|_| bad(alg, "SubjectPublicKeyInfo: not a DER structure (malformed or truncated)"))?;
    if !rest.is_empty() {
        return Err(bad(alg, "SubjectPublicKeyInfo: trailing data after the structure"));
    }
    if spki.algorithm.oid != alg.oid {
        return Err(bad(alg, alg.wrong_oid_public));
    }
    if spki.algorithm.parameters.is_some() {
        return Err(bad(alg, "SubjectPublicKeyInfo: the algorithm parameters must be absent (RFC 8410)"));
    }
    match spki.subject_public_key.as_bytes() {
        Some(b) if b.len() == 32 => {
            let mut p = [0u8; 32];
            p.copy_from_slice(b);
            Ok(p)
        }
        _ => Err(bad(alg, "SubjectPublicKeyInfo: the public key must be 32 bytes with no unused bits")),
    }
}

fn public_to_pem(alg: &Alg, key: &[u8; 32]) -> Result<String> {
    let der = public_to_der(alg, key)?;
    pem_rfc7468::encode_string(PUBLIC_KEY_LABEL, pem_rfc7468::LineEnding::LF, &der).map_err(|_| encode_failed(alg))
}

fn public_from_pem(alg: &Alg, pem: &str) -> Result<[u8; 32]> {
    let (label, der) = pem_rfc7468::decode_vec(pem.as_bytes())
        .map_err(|_| bad(alg, "PEM: malformed document (RFC 7468 boundaries or base64 body)"))?;
    if label != PUBLIC_KEY_LABEL {
        return Err(bad(alg, "PEM: the label must be \"PUBLIC KEY\" (a SubjectPublicKeyInfo)"));
    }
    public_from_der(alg, &der)
}

// ---- Ed25519 ----

impl SigningKey {
    fn from_parsed(parsed: Parsed) -> Result<Self> {
        let (seed, public) = parsed;
        let key = SigningKey::from_seed(&seed);
        match public {
            // Consistency of the stored public key is returned as an error: public.
            Some(p) if !crate::ct::declassify(crate::ct::eq(&p, key.verifying_key().as_bytes())) => {
                Err(bad(&ED25519, "PKCS#8: the public key does not match the private key"))
            }
            _ => Ok(key),
        }
    }

    /// The key as PKCS#8 DER (RFC 8410: id-Ed25519, the seed as `CurvePrivateKey`).
    pub fn to_pkcs8_der(&self) -> Result<Zeroizing<Vec<u8>>> {
        let mut seed = self.to_seed();
        let r = private_to_der(&ED25519, &seed);
        seed.zeroize();
        r
    }

    /// The key as a PEM `PRIVATE KEY` document (PKCS#8), lines of 64 characters ending in `\n`.
    pub fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>> {
        let mut seed = self.to_seed();
        let r = private_to_pem(&ED25519, &seed);
        seed.zeroize();
        r
    }

    /// Parses a PKCS#8 DER private key (see the [module docs](self) for what is refused).
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self> {
        Self::from_parsed(private_from_der(&ED25519, der)?)
    }

    /// Parses a PEM `PRIVATE KEY` document.
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self> {
        Self::from_parsed(private_from_pem(&ED25519, pem)?)
    }
}

impl VerifyingKey {
    /// The key as SubjectPublicKeyInfo DER.
    pub fn to_public_key_der(&self) -> Result<Vec<u8>> {
        public_to_der(&ED25519, self.as_bytes())
    }

    /// The key as a PEM `PUBLIC KEY` document.
    pub fn to_public_key_pem(&self) -> Result<String> {
        public_to_pem(&ED25519, self.as_bytes())
    }

    /// Parses a SubjectPublicKeyInfo DER public key; the key is then checked as by
    /// [`from_bytes`](Self::from_bytes).
    pub fn from_public_key_der(der: &[u8]) -> Result<Self> {
        VerifyingKey::from_bytes(&public_from_der(&ED25519, der)?)
    }

    /// Parses a PEM `PUBLIC KEY` document.
    pub fn from_public_key_pem(pem: &str) -> Result<Self> {
        VerifyingKey::from_bytes(&public_from_pem(&ED25519, pem)?)
    }
}

// ---- X25519 ----

impl X25519SecretKey {
    fn from_parsed(parsed: Parsed) -> Result<Self> {
        let (bytes, public) = parsed;
        let key = X25519SecretKey::from_array(*bytes);
        match public {
            // As above.
            Some(p) if !crate::ct::declassify(crate::ct::eq(&p, key.public_key().as_bytes())) => {
                Err(bad(&X25519, "PKCS#8: the public key does not match the private key"))
            }
            _ => Ok(key),
        }
    }

    /// The key as PKCS#8 DER (RFC 8410: id-X25519, the 32 bytes as given, unclamped).
    pub fn to_pkcs8_der(&self) -> Result<Zeroizing<Vec<u8>>> {
        let mut k = self.to_bytes();
        let r = private_to_der(&X25519, &k);
        k.zeroize();
        r
    }

    /// The key as a PEM `PRIVATE KEY` document (PKCS#8).
    pub fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>> {
        let mut k = self.to_bytes();
        let r = private_to_pem(&X25519, &k);
        k.zeroize();
        r
    }

    /// Parses a PKCS#8 DER private key (see the [module docs](self) for what is refused).
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self> {
        Self::from_parsed(private_from_der(&X25519, der)?)
    }

    /// Parses a PEM `PRIVATE KEY` document.
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self> {
        Self::from_parsed(private_from_pem(&X25519, pem)?)
    }
}

impl X25519PublicKey {
    /// The key as SubjectPublicKeyInfo DER.
    pub fn to_public_key_der(&self) -> Result<Vec<u8>> {
        public_to_der(&X25519, self.as_bytes())
    }

    /// The key as a PEM `PUBLIC KEY` document.
    pub fn to_public_key_pem(&self) -> Result<String> {
        public_to_pem(&X25519, self.as_bytes())
    }

    /// Parses a SubjectPublicKeyInfo DER public key (any 32 bytes, RFC 7748).
    pub fn from_public_key_der(der: &[u8]) -> Result<Self> {
        public_from_der(&X25519, der).map(X25519PublicKey::from)
    }

    /// Parses a PEM `PUBLIC KEY` document.
    pub fn from_public_key_pem(pem: &str) -> Result<Self> {
        public_from_pem(&X25519, pem).map(X25519PublicKey::from)
    }
}
