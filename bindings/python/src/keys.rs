//! Public-key classes shaped like pyca/cryptography's: Ed25519, X25519, ECDSA and ECDH on P-256 and
//! secp256k1, and RSA (PSS, PKCS#1 v1.5, OAEP), with PKCS#8 / SubjectPublicKeyInfo (and SEC1, PKCS#1) key files
//! in PEM or DER.
//!
//! Method names are pyca's where pyca has the same thing (`generate`, `from_private_bytes`, `sign`, `verify`,
//! `public_key`, `exchange`, `private_bytes`, `public_bytes`, `load_pem_private_key`, ...). Serialisation
//! arguments take pyca's enum members (`serialization.Encoding.PEM`, `PrivateFormat.PKCS8`, ...) or their
//! names as strings ("PEM", "PKCS8"). A signature that does not verify raises `InvalidSignature`.

use crate::{AuthenticationFailed, Buf, UnknownAlgorithm, err};
use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey};
use pqkit::ec::{ed25519, p256, secp256k1};
use pqkit::rng::ChaCha20Rng;
use pqkit::rsa::{HashAlg, RsaPrivateKey, RsaPublicKey, oaep, pkcs1v15, pss};
use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

create_exception!(
    _pqkit,
    InvalidSignature,
    AuthenticationFailed,
    "A signature did not verify (pyca/cryptography's name for it)."
);

/// Maps a failed verification to `InvalidSignature`: a signature that does not verify, and one that cannot be
/// decoded (wrong length, R not on the curve, bad DER), as pyca does; other errors as usual.
fn sig_err(e: pqkit::Error) -> PyErr {
    match e {
        pqkit::Error::AuthenticationFailed { .. }
        | pqkit::Error::InvalidEncoding { .. }
        | pqkit::Error::InvalidLength { .. } => InvalidSignature::new_err(e.to_string()),
        _ => err(e),
    }
}

fn rng() -> PyResult<ChaCha20Rng> {
    ChaCha20Rng::from_os_rng().map_err(err)
}

/// The name of a serialisation choice: a string, or a pyca enum member (`Encoding.PEM`: its `.name` where it
/// has one, else the part of its `str()` after the last dot).
fn choice(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = obj.extract::<String>() {
        return Ok(s);
    }
    if let Ok(n) = obj.getattr("name").and_then(|n| n.extract::<String>()) {
        return Ok(n);
    }
    let s = obj.str()?.to_string();
    match s.rsplit_once('.') {
        Some((_, name)) if !name.is_empty() => Ok(name.to_string()),
        _ => {
            Err(PyTypeError::new_err("expected a string or a cryptography.hazmat.primitives.serialization enum member"))
        }
    }
}

/// Key files here are never encrypted: `None` or pyca's `NoEncryption()` only.
fn no_encryption(obj: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match obj {
        None => Ok(()),
        Some(o) if o.is_none() || o.get_type().name()? == "NoEncryption" => Ok(()),
        Some(_) => Err(PyValueError::new_err("encrypted key files are not supported: pass NoEncryption() or None")),
    }
}

fn no_password(password: &Option<Buf<'_, '_>>) -> PyResult<()> {
    if password.is_some() {
        return Err(PyTypeError::new_err("encrypted key files are not supported: password must be None"));
    }
    Ok(())
}

fn pem_str(data: &[u8]) -> PyResult<&str> {
    core::str::from_utf8(data).map_err(|_| PyValueError::new_err("PEM: not ASCII text"))
}

fn bad_format(kind: &str, encoding: &str, format: &str, allowed: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{kind}: encoding {encoding:?} with format {format:?} is not supported; use {allowed}"
    ))
}

/// Which standard a private key file follows.
enum PrivForm {
    Pkcs8,
    Traditional,
    Raw,
}

/// Reads the (encoding, format) of a `private_bytes` call: `Ok((pem, form))`.
fn private_form(kind: &str, encoding: &Bound<'_, PyAny>, format: &Bound<'_, PyAny>) -> PyResult<(bool, PrivForm)> {
    let (e, f) = (choice(encoding)?, choice(format)?);
    let pem = match e.as_str() {
        "PEM" => true,
        "DER" | "Raw" => false,
        _ => return Err(bad_format(kind, &e, &f, "PEM or DER")),
    };
    let form = match (e.as_str(), f.as_str()) {
        ("PEM" | "DER", "PKCS8") => PrivForm::Pkcs8,
        ("PEM" | "DER", "TraditionalOpenSSL") => PrivForm::Traditional,
        ("Raw", "Raw") => PrivForm::Raw,
        _ => {
            return Err(bad_format(kind, &e, &f, "PKCS8 (PEM or DER), TraditionalOpenSSL where it exists, or Raw/Raw"));
        }
    };
    Ok((pem, form))
}

/// Which standard a public key file follows.
enum PubForm {
    Spki,
    Pkcs1,
    Raw,
    Uncompressed,
    Compressed,
}

fn public_form(kind: &str, encoding: &Bound<'_, PyAny>, format: &Bound<'_, PyAny>) -> PyResult<(bool, PubForm)> {
    let (e, f) = (choice(encoding)?, choice(format)?);
    let form = match (e.as_str(), f.as_str()) {
        ("PEM" | "DER", "SubjectPublicKeyInfo") => PubForm::Spki,
        ("PEM" | "DER", "PKCS1") => PubForm::Pkcs1,
        ("Raw", "Raw") => PubForm::Raw,
        ("X962", "UncompressedPoint") => PubForm::Uncompressed,
        ("X962", "CompressedPoint") => PubForm::Compressed,
        _ => return Err(bad_format(kind, &e, &f, "SubjectPublicKeyInfo (PEM or DER) or the key's raw form")),
    };
    Ok((e == "PEM", form))
}

fn pem_or_der<'py>(
    py: Python<'py>,
    pem: bool,
    p: impl FnOnce() -> pqkit::Result<String>,
    d: impl FnOnce() -> pqkit::Result<Vec<u8>>,
) -> PyResult<Bound<'py, PyBytes>> {
    if pem { Ok(PyBytes::new(py, p().map_err(err)?.as_bytes())) } else { Ok(PyBytes::new(py, &d().map_err(err)?)) }
}

fn secret_pem_or_der<'py>(
    py: Python<'py>,
    pem: bool,
    p: impl FnOnce() -> pqkit::Result<Zeroizing<String>>,
    d: impl FnOnce() -> pqkit::Result<Zeroizing<Vec<u8>>>,
) -> PyResult<Bound<'py, PyBytes>> {
    if pem { Ok(PyBytes::new(py, p().map_err(err)?.as_bytes())) } else { Ok(PyBytes::new(py, &d().map_err(err)?)) }
}

// ---------------------------------------------------------------------------------------------------------
// Ed25519

/// An Ed25519 private key (RFC 8032), as pyca's `Ed25519PrivateKey`.
#[pyclass(module = "pqkit", name = "Ed25519PrivateKey", frozen)]
pub(crate) struct Ed25519PrivateKey {
    k: Box<ed25519::SigningKey>,
}
fits_python_alignment!(Ed25519PrivateKey);

/// An Ed25519 public key, as pyca's `Ed25519PublicKey`.
#[pyclass(module = "pqkit", name = "Ed25519PublicKey", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct Ed25519PublicKey {
    k: ed25519::VerifyingKey,
}
fits_python_alignment!(Ed25519PublicKey);

#[pymethods]
impl Ed25519PrivateKey {
    /// A fresh key from the operating system's randomness.
    #[staticmethod]
    fn generate() -> PyResult<Self> {
        Ok(Self { k: Box::new(ed25519::SigningKey::generate(&mut rng()?)) })
    }

    /// The key of a 32-byte seed (what `private_bytes_raw` returns).
    #[staticmethod]
    fn from_private_bytes(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: Box::new(ed25519::SigningKey::from_bytes(&data).map_err(err)?) })
    }

    /// Loads a PKCS#8 PEM file holding an Ed25519 key.
    #[staticmethod]
    fn from_pem(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: Box::new(ed25519::SigningKey::from_pkcs8_pem(pem_str(&data)?).map_err(err)?) })
    }

    /// Loads a PKCS#8 DER file holding an Ed25519 key.
    #[staticmethod]
    fn from_der(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: Box::new(ed25519::SigningKey::from_pkcs8_der(&data).map_err(err)?) })
    }

    /// The 64-byte signature of `data`.
    fn sign<'py>(&self, py: Python<'py>, data: Buf<'_, '_>) -> Bound<'py, PyBytes> {
        let data: &[u8] = &data;
        let sig = crate::maybe_detach(py, data.len(), || self.k.sign(data));
        PyBytes::new(py, sig.as_bytes())
    }

    fn public_key(&self) -> Ed25519PublicKey {
        Ed25519PublicKey { k: self.k.verifying_key() }
    }

    /// The 32-byte seed.
    fn private_bytes_raw<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &Zeroizing::new(self.k.to_seed())[..])
    }

    /// The key as PKCS#8 (PEM or DER) or Raw.
    #[pyo3(signature = (encoding, format, encryption_algorithm=None))]
    fn private_bytes<'py>(
        &self,
        py: Python<'py>,
        encoding: &Bound<'py, PyAny>,
        format: &Bound<'py, PyAny>,
        encryption_algorithm: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        no_encryption(encryption_algorithm)?;
        match private_form("Ed25519", encoding, format)? {
            (_, PrivForm::Raw) => Ok(self.private_bytes_raw(py)),
            (pem, PrivForm::Pkcs8) => secret_pem_or_der(py, pem, || self.k.to_pkcs8_pem(), || self.k.to_pkcs8_der()),
            _ => Err(PyValueError::new_err("Ed25519 keys have no TraditionalOpenSSL form: use PKCS8")),
        }
    }

    fn __repr__(&self) -> &'static str {
        "<pqkit.Ed25519PrivateKey (key hidden)>"
    }
}

#[pymethods]
impl Ed25519PublicKey {
    #[staticmethod]
    fn from_public_bytes(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: ed25519::VerifyingKey::from_bytes(&data).map_err(err)? })
    }

    /// Loads a SubjectPublicKeyInfo PEM file holding an Ed25519 key.
    #[staticmethod]
    fn from_pem(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: ed25519::VerifyingKey::from_public_key_pem(pem_str(&data)?).map_err(err)? })
    }

    #[staticmethod]
    fn from_der(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: ed25519::VerifyingKey::from_public_key_der(&data).map_err(err)? })
    }

    /// Raises `InvalidSignature` unless `signature` is a valid signature of `data`.
    fn verify(&self, py: Python<'_>, signature: Buf<'_, '_>, data: Buf<'_, '_>) -> PyResult<()> {
        let sig = ed25519::Signature::from_bytes(&signature).map_err(sig_err)?;
        let data: &[u8] = &data;
        crate::maybe_detach(py, data.len(), || self.k.verify(data, &sig)).map_err(sig_err)
    }

    fn public_bytes_raw<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.k.as_bytes())
    }

    /// The key as SubjectPublicKeyInfo (PEM or DER) or Raw.
    fn public_bytes<'py>(
        &self,
        py: Python<'py>,
        encoding: &Bound<'py, PyAny>,
        format: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        match public_form("Ed25519", encoding, format)? {
            (_, PubForm::Raw) => Ok(self.public_bytes_raw(py)),
            (pem, PubForm::Spki) => pem_or_der(py, pem, || self.k.to_public_key_pem(), || self.k.to_public_key_der()),
            _ => Err(PyValueError::new_err("Ed25519 public keys: SubjectPublicKeyInfo or Raw")),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// X25519

/// An X25519 private key (RFC 7748), as pyca's `X25519PrivateKey`.
#[pyclass(module = "pqkit", name = "X25519PrivateKey", frozen)]
pub(crate) struct X25519PrivateKey {
    k: X25519SecretKey,
}
fits_python_alignment!(X25519PrivateKey);

/// An X25519 public key, as pyca's `X25519PublicKey`.
#[pyclass(module = "pqkit", name = "X25519PublicKey", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct X25519PublicKeyPy {
    k: [u8; 32],
}
fits_python_alignment!(X25519PublicKeyPy);

#[pymethods]
impl X25519PrivateKey {
    #[staticmethod]
    fn generate() -> PyResult<Self> {
        Ok(Self { k: X25519SecretKey::generate(&mut rng()?) })
    }

    #[staticmethod]
    fn from_private_bytes(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: X25519SecretKey::from_bytes(&data).map_err(err)? })
    }

    #[staticmethod]
    fn from_pem(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: X25519SecretKey::from_pkcs8_pem(pem_str(&data)?).map_err(err)? })
    }

    #[staticmethod]
    fn from_der(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: X25519SecretKey::from_pkcs8_der(&data).map_err(err)? })
    }

    fn public_key(&self) -> X25519PublicKeyPy {
        X25519PublicKeyPy { k: self.k.public_key().to_bytes() }
    }

    /// The 32-byte shared secret with `peer_public_key`; an all-zero result (a small-order peer key) raises.
    fn exchange<'py>(&self, py: Python<'py>, peer_public_key: &X25519PublicKeyPy) -> PyResult<Bound<'py, PyBytes>> {
        let ss = self.k.diffie_hellman(&X25519PublicKey::from(peer_public_key.k)).map_err(err)?;
        Ok(PyBytes::new(py, ss.as_bytes()))
    }

    fn private_bytes_raw<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &Zeroizing::new(self.k.to_bytes())[..])
    }

    #[pyo3(signature = (encoding, format, encryption_algorithm=None))]
    fn private_bytes<'py>(
        &self,
        py: Python<'py>,
        encoding: &Bound<'py, PyAny>,
        format: &Bound<'py, PyAny>,
        encryption_algorithm: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        no_encryption(encryption_algorithm)?;
        match private_form("X25519", encoding, format)? {
            (_, PrivForm::Raw) => Ok(self.private_bytes_raw(py)),
            (pem, PrivForm::Pkcs8) => secret_pem_or_der(py, pem, || self.k.to_pkcs8_pem(), || self.k.to_pkcs8_der()),
            _ => Err(PyValueError::new_err("X25519 keys have no TraditionalOpenSSL form: use PKCS8")),
        }
    }

    fn __repr__(&self) -> &'static str {
        "<pqkit.X25519PrivateKey (key hidden)>"
    }
}

#[pymethods]
impl X25519PublicKeyPy {
    #[staticmethod]
    fn from_public_bytes(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: X25519PublicKey::from_bytes(&data).map_err(err)?.to_bytes() })
    }

    #[staticmethod]
    fn from_pem(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: X25519PublicKey::from_public_key_pem(pem_str(&data)?).map_err(err)?.to_bytes() })
    }

    #[staticmethod]
    fn from_der(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self { k: X25519PublicKey::from_public_key_der(&data).map_err(err)?.to_bytes() })
    }

    fn public_bytes_raw<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.k)
    }

    fn public_bytes<'py>(
        &self,
        py: Python<'py>,
        encoding: &Bound<'py, PyAny>,
        format: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let k = X25519PublicKey::from(self.k);
        match public_form("X25519", encoding, format)? {
            (_, PubForm::Raw) => Ok(self.public_bytes_raw(py)),
            (pem, PubForm::Spki) => pem_or_der(py, pem, || k.to_public_key_pem(), || k.to_public_key_der()),
            _ => Err(PyValueError::new_err("X25519 public keys: SubjectPublicKeyInfo or Raw")),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// ECDSA and ECDH on P-256 and secp256k1

enum EcSk {
    P256(p256::SigningKey),
    K256(secp256k1::SigningKey),
}

#[derive(PartialEq)]
enum EcPk {
    P256(p256::VerifyingKey),
    K256(secp256k1::VerifyingKey),
}

/// Runs `$body` with `$k` bound to the key of either curve.
macro_rules! on_curve {
    ($e:expr, $enum:ident, $k:ident => $body:expr) => {
        match $e {
            $enum::P256($k) => $body,
            $enum::K256($k) => $body,
        }
    };
}

#[derive(Clone, Copy, PartialEq)]
enum Curve {
    P256,
    K256,
}

impl Curve {
    /// pyca's curve names ("secp256r1", "secp256k1"), also accepted with the standard "P-256".
    fn parse(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let name = match obj.extract::<String>() {
            Ok(s) => s,
            Err(_) => obj.getattr("name").and_then(|n| n.extract::<String>()).map_err(|_| {
                PyTypeError::new_err("curve: a name (\"secp256r1\", \"P-256\", \"secp256k1\") or a pyca curve object")
            })?,
        };
        match name.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "secp256r1" | "p256" | "prime256v1" => Ok(Curve::P256),
            "secp256k1" => Ok(Curve::K256),
            _ => Err(UnknownAlgorithm::new_err(format!(
                "unknown curve {name:?}; expected one of: secp256r1 (P-256), secp256k1"
            ))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Curve::P256 => "secp256r1",
            Curve::K256 => "secp256k1",
        }
    }
}

/// ECDSA here hashes with SHA-256: `None`, "sha256", or pyca's `ECDSA(hashes.SHA256())`.
fn check_ecdsa_alg(alg: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let Some(a) = alg else { return Ok(()) };
    if a.is_none() {
        return Ok(());
    }
    let hash =
        if let Ok(s) = a.extract::<String>() { s } else { a.getattr("algorithm")?.getattr("name")?.extract()? };
    if crate::hash_key(&hash) != "sha256" {
        return Err(UnknownAlgorithm::new_err(format!("ECDSA signs with SHA-256 only here, not {hash:?}")));
    }
    Ok(())
}

/// An ECDSA / ECDH private key on P-256 (secp256r1) or secp256k1, as pyca's `EllipticCurvePrivateKey`.
#[pyclass(module = "pqkit", name = "EllipticCurvePrivateKey", frozen)]
pub(crate) struct EcPrivateKey {
    k: Box<EcSk>,
}
fits_python_alignment!(EcPrivateKey);

/// An ECDSA / ECDH public key, as pyca's `EllipticCurvePublicKey`.
#[pyclass(module = "pqkit", name = "EllipticCurvePublicKey", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct EcPublicKey {
    k: EcPk,
}
fits_python_alignment!(EcPublicKey);

impl EcPrivateKey {
    fn curve(&self) -> Curve {
        match *self.k {
            EcSk::P256(_) => Curve::P256,
            EcSk::K256(_) => Curve::K256,
        }
    }
}

impl EcPublicKey {
    fn curve(&self) -> Curve {
        match self.k {
            EcPk::P256(_) => Curve::P256,
            EcPk::K256(_) => Curve::K256,
        }
    }
}

#[pymethods]
impl EcPrivateKey {
    /// A fresh key on `curve` ("secp256r1" / "P-256", "secp256k1", or a pyca curve object).
    #[staticmethod]
    fn generate(curve: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut r = rng()?;
        let k = match Curve::parse(curve)? {
            Curve::P256 => EcSk::P256(p256::SigningKey::generate(&mut r)),
            Curve::K256 => EcSk::K256(secp256k1::SigningKey::generate(&mut r)),
        };
        Ok(Self { k: Box::new(k) })
    }

    /// The key of a 32-byte big-endian scalar in [1, n - 1] (what `private_bytes_raw` returns).
    #[staticmethod]
    fn from_private_bytes(curve: &Bound<'_, PyAny>, data: Buf<'_, '_>) -> PyResult<Self> {
        let k = match Curve::parse(curve)? {
            Curve::P256 => EcSk::P256(p256::SigningKey::from_bytes(&data).map_err(err)?),
            Curve::K256 => EcSk::K256(secp256k1::SigningKey::from_bytes(&data).map_err(err)?),
        };
        Ok(Self { k: Box::new(k) })
    }

    /// Loads a PKCS#8 or SEC1 ("EC PRIVATE KEY") PEM file.
    #[staticmethod]
    fn from_pem(data: Buf<'_, '_>) -> PyResult<Self> {
        let pem = pem_str(&data)?;
        let k = if let Ok(k) = p256::SigningKey::from_pkcs8_pem(pem).or_else(|_| p256::SigningKey::from_sec1_pem(pem)) {
            EcSk::P256(k)
        } else {
            EcSk::K256(
                secp256k1::SigningKey::from_pkcs8_pem(pem)
                    .or_else(|_| secp256k1::SigningKey::from_sec1_pem(pem))
                    .map_err(err)?,
            )
        };
        Ok(Self { k: Box::new(k) })
    }

    /// Loads a PKCS#8 or SEC1 DER file.
    #[staticmethod]
    fn from_der(data: Buf<'_, '_>) -> PyResult<Self> {
        let k = if let Ok(k) =
            p256::SigningKey::from_pkcs8_der(&data).or_else(|_| p256::SigningKey::from_sec1_der(&data))
        {
            EcSk::P256(k)
        } else {
            EcSk::K256(
                secp256k1::SigningKey::from_pkcs8_der(&data)
                    .or_else(|_| secp256k1::SigningKey::from_sec1_der(&data))
                    .map_err(err)?,
            )
        };
        Ok(Self { k: Box::new(k) })
    }

    /// "secp256r1" or "secp256k1" (pyca's `key.curve.name`).
    #[getter]
    fn curve_name(&self) -> &'static str {
        self.curve().name()
    }

    #[getter]
    fn key_size(&self) -> usize {
        256
    }

    /// The DER ECDSA signature of `data` with SHA-256 (RFC 6979 deterministic nonce; secp256k1 in low-S form).
    /// `signature_algorithm` may be pyca's `ECDSA(hashes.SHA256())`.
    #[pyo3(signature = (data, signature_algorithm=None))]
    fn sign<'py>(
        &self,
        py: Python<'py>,
        data: Buf<'_, '_>,
        signature_algorithm: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        check_ecdsa_alg(signature_algorithm)?;
        let data: &[u8] = &data;
        let der = crate::maybe_detach(
            py,
            data.len(),
            || on_curve!(&*self.k, EcSk, k => k.sign(data).to_der().as_bytes().to_vec()),
        );
        Ok(PyBytes::new(py, &der))
    }

    /// ECDH (SEC1): the 32-byte x-coordinate shared with `peer_public_key`. Takes pyca's form
    /// `exchange(ECDH(), peer_public_key)` as well.
    #[pyo3(signature = (algorithm_or_peer, peer_public_key=None))]
    fn exchange<'py>(
        &self,
        py: Python<'py>,
        algorithm_or_peer: &Bound<'py, PyAny>,
        peer_public_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let peer = peer_public_key.unwrap_or(algorithm_or_peer).cast::<EcPublicKey>()?.get();
        let ss = match (&*self.k, &peer.k) {
            (EcSk::P256(a), EcPk::P256(b)) => a.as_secret_key().diffie_hellman(b.as_public_key()),
            (EcSk::K256(a), EcPk::K256(b)) => a.as_secret_key().diffie_hellman(b.as_public_key()),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "ECDH: the peer key is on {}, this key on {}",
                    peer.curve().name(),
                    self.curve().name()
                )));
            }
        }
        .map_err(err)?;
        Ok(PyBytes::new(py, ss.as_bytes()))
    }

    fn public_key(&self) -> EcPublicKey {
        let k = match &*self.k {
            EcSk::P256(k) => EcPk::P256(k.verifying_key()),
            EcSk::K256(k) => EcPk::K256(k.verifying_key()),
        };
        EcPublicKey { k }
    }

    /// The 32-byte big-endian private scalar.
    fn private_bytes_raw<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b = Zeroizing::new(on_curve!(&*self.k, EcSk, k => k.to_bytes()));
        PyBytes::new(py, &b[..])
    }

    /// The key as PKCS#8 or TraditionalOpenSSL (SEC1 `EC PRIVATE KEY`), PEM or DER.
    #[pyo3(signature = (encoding, format, encryption_algorithm=None))]
    fn private_bytes<'py>(
        &self,
        py: Python<'py>,
        encoding: &Bound<'py, PyAny>,
        format: &Bound<'py, PyAny>,
        encryption_algorithm: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        no_encryption(encryption_algorithm)?;
        match private_form("EC", encoding, format)? {
            (pem, PrivForm::Pkcs8) => {
                on_curve!(&*self.k, EcSk, k => secret_pem_or_der(py, pem, || k.to_pkcs8_pem(), || k.to_pkcs8_der()))
            }
            (pem, PrivForm::Traditional) => {
                on_curve!(&*self.k, EcSk, k => secret_pem_or_der(py, pem, || k.to_sec1_pem(), || k.to_sec1_der()))
            }
            (_, PrivForm::Raw) => {
                Err(PyValueError::new_err("EC keys: PKCS8 or TraditionalOpenSSL (see private_bytes_raw)"))
            }
        }
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.EllipticCurvePrivateKey {} (key hidden)>", self.curve().name())
    }
}

#[pymethods]
impl EcPublicKey {
    /// The key of a SEC1 point (compressed or uncompressed), as pyca's `from_encoded_point(curve, data)`.
    #[staticmethod]
    fn from_encoded_point(curve: &Bound<'_, PyAny>, data: Buf<'_, '_>) -> PyResult<Self> {
        let k = match Curve::parse(curve)? {
            Curve::P256 => EcPk::P256(p256::VerifyingKey::from_sec1_bytes(&data).map_err(err)?),
            Curve::K256 => EcPk::K256(secp256k1::VerifyingKey::from_sec1_bytes(&data).map_err(err)?),
        };
        Ok(Self { k })
    }

    /// Loads a SubjectPublicKeyInfo PEM file.
    #[staticmethod]
    fn from_pem(data: Buf<'_, '_>) -> PyResult<Self> {
        let pem = pem_str(&data)?;
        let k = match p256::VerifyingKey::from_public_key_pem(pem) {
            Ok(k) => EcPk::P256(k),
            Err(_) => EcPk::K256(secp256k1::VerifyingKey::from_public_key_pem(pem).map_err(err)?),
        };
        Ok(Self { k })
    }

    /// Loads a SubjectPublicKeyInfo DER file.
    #[staticmethod]
    fn from_der(data: Buf<'_, '_>) -> PyResult<Self> {
        let k = match p256::VerifyingKey::from_public_key_der(&data) {
            Ok(k) => EcPk::P256(k),
            Err(_) => EcPk::K256(secp256k1::VerifyingKey::from_public_key_der(&data).map_err(err)?),
        };
        Ok(Self { k })
    }

    #[getter]
    fn curve_name(&self) -> &'static str {
        self.curve().name()
    }

    #[getter]
    fn key_size(&self) -> usize {
        256
    }

    /// Raises `InvalidSignature` unless `signature` (DER) is a valid ECDSA-SHA-256 signature of `data`.
    #[pyo3(signature = (signature, data, signature_algorithm=None))]
    fn verify(
        &self,
        py: Python<'_>,
        signature: Buf<'_, '_>,
        data: Buf<'_, '_>,
        signature_algorithm: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        check_ecdsa_alg(signature_algorithm)?;
        let (sig, data): (&[u8], &[u8]) = (&signature, &data);
        let r = crate::maybe_detach(py, data.len(), || match &self.k {
            EcPk::P256(k) => p256::Signature::from_der(sig).and_then(|s| k.verify(data, &s)),
            EcPk::K256(k) => secp256k1::Signature::from_der(sig).and_then(|s| k.verify(data, &s)),
        });
        r.map_err(sig_err)
    }

    /// The key as SubjectPublicKeyInfo (PEM or DER) or an X9.62 point (`Encoding.X962` with
    /// `PublicFormat.UncompressedPoint` or `CompressedPoint`).
    fn public_bytes<'py>(
        &self,
        py: Python<'py>,
        encoding: &Bound<'py, PyAny>,
        format: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        match public_form("EC", encoding, format)? {
            (pem, PubForm::Spki) => {
                on_curve!(&self.k, EcPk, k => pem_or_der(py, pem, || k.to_public_key_pem(), || k.to_public_key_der()))
            }
            (_, PubForm::Uncompressed) => {
                Ok(PyBytes::new(py, on_curve!(&self.k, EcPk, k => k.to_sec1_bytes(false)).as_bytes()))
            }
            (_, PubForm::Compressed) => {
                Ok(PyBytes::new(py, on_curve!(&self.k, EcPk, k => k.to_sec1_bytes(true)).as_bytes()))
            }
            _ => Err(PyValueError::new_err("EC public keys: SubjectPublicKeyInfo or X9.62 points")),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// RSA

/// A hash for RSA: a name (hashlib's or standard) or a pyca hash object (its `.name`); SHA-256 by default.
fn rsa_hash(obj: Option<&Bound<'_, PyAny>>) -> PyResult<HashAlg> {
    let Some(o) = obj.filter(|o| !o.is_none()) else { return Ok(HashAlg::Sha256) };
    let name: String = match o.extract::<String>() {
        Ok(s) => s,
        Err(_) => o.getattr("name")?.extract()?,
    };
    Ok(match crate::hash_key(&name).as_str() {
        "sha1" => HashAlg::Sha1,
        "sha224" => HashAlg::Sha224,
        "sha256" => HashAlg::Sha256,
        "sha384" => HashAlg::Sha384,
        "sha512" => HashAlg::Sha512,
        "sha512224" => HashAlg::Sha512_224,
        "sha512256" => HashAlg::Sha512_256,
        _ => return Err(UnknownAlgorithm::new_err(format!("RSA: unknown hash {name:?}"))),
    })
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Padding {
    Pss,
    Pkcs1v15,
    Oaep,
}

/// A padding: "PSS", "PKCS1v15", "OAEP", or a pyca padding object (its `.name`: "EMSA-PSS", ...). For a pyca
/// OAEP object its `algorithm` (when it has one) is the hash.
fn padding<'py>(obj: &Bound<'py, PyAny>) -> PyResult<(Padding, Option<Bound<'py, PyAny>>)> {
    let name: String = match obj.extract::<String>() {
        Ok(s) => s,
        Err(_) => obj.getattr("name")?.extract()?,
    };
    let p = match name.to_ascii_uppercase().replace(['-', '_', ' ', '.'], "").as_str() {
        "PSS" | "EMSAPSS" => Padding::Pss,
        "PKCS1V15" | "EMSAPKCS1V15" | "EMEPKCS1V15" => Padding::Pkcs1v15,
        "OAEP" | "EMEOAEP" => Padding::Oaep,
        _ => {
            return Err(UnknownAlgorithm::new_err(format!(
                "RSA: unknown padding {name:?}; expected PSS, PKCS1v15, OAEP"
            )));
        }
    };
    let inner_hash = if p == Padding::Oaep { obj.getattr("algorithm").ok() } else { None };
    Ok((p, inner_hash))
}

/// The label of a pyca `OAEP` object (kept in its `_label`), when it has one.
fn pyca_oaep_label(obj: &Bound<'_, PyAny>) -> Option<Vec<u8>> {
    obj.getattr("_label").ok().and_then(|l| l.extract::<Vec<u8>>().ok())
}

/// An RSA private key, as pyca's `RSAPrivateKey`.
#[pyclass(module = "pqkit", name = "RSAPrivateKey", frozen)]
pub(crate) struct RsaPrivateKeyPy {
    k: Box<RsaPrivateKey>,
}
fits_python_alignment!(RsaPrivateKeyPy);

/// An RSA public key, as pyca's `RSAPublicKey`.
#[pyclass(module = "pqkit", name = "RSAPublicKey", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct RsaPublicKeyPy {
    // Boxed: the key's Montgomery context for the IFMA backend is 64-byte aligned (see `fits_python_alignment`).
    k: Box<RsaPublicKey>,
}
fits_python_alignment!(RsaPublicKeyPy);

#[pymethods]
impl RsaPrivateKeyPy {
    /// A fresh key (FIPS 186-5 probable primes): `key_size` 2048, 3072 or 4096, `public_exponent` 65537.
    #[staticmethod]
    #[pyo3(signature = (public_exponent=65537, key_size=2048))]
    fn generate(py: Python<'_>, public_exponent: u64, key_size: usize) -> PyResult<Self> {
        if public_exponent != 65537 {
            return Err(PyValueError::new_err("RSA: public_exponent must be 65537"));
        }
        let k = py.detach(|| RsaPrivateKey::generate(key_size, &mut ChaCha20Rng::from_os_rng()?)).map_err(err)?;
        Ok(Self { k: Box::new(k) })
    }

    /// Loads a PKCS#8 or PKCS#1 ("RSA PRIVATE KEY") PEM file.
    #[staticmethod]
    fn from_pem(data: Buf<'_, '_>) -> PyResult<Self> {
        let pem = pem_str(&data)?;
        let k = RsaPrivateKey::from_pkcs8_pem(pem).or_else(|_| RsaPrivateKey::from_pkcs1_pem(pem)).map_err(err)?;
        Ok(Self { k: Box::new(k) })
    }

    /// Loads a PKCS#8 or PKCS#1 DER file.
    #[staticmethod]
    fn from_der(data: Buf<'_, '_>) -> PyResult<Self> {
        let k = RsaPrivateKey::from_pkcs8_der(&data).or_else(|_| RsaPrivateKey::from_pkcs1_der(&data)).map_err(err)?;
        Ok(Self { k: Box::new(k) })
    }

    #[getter]
    fn key_size(&self) -> usize {
        self.k.public_key().bits()
    }

    fn public_key(&self) -> RsaPublicKeyPy {
        RsaPublicKeyPy { k: Box::new(self.k.public_key().clone()) }
    }

    /// Signs `data` with RSASSA-PSS (MGF1 with the same hash, salt length = hash length) or PKCS#1 v1.5.
    /// `padding` is "PSS", "PKCS1v15" or a pyca padding object (a pyca PSS object's salt length is not read);
    /// `algorithm` SHA-256 by default.
    #[pyo3(signature = (data, padding, algorithm=None))]
    fn sign<'py>(
        &self,
        py: Python<'py>,
        data: Buf<'_, '_>,
        padding: &Bound<'py, PyAny>,
        algorithm: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (p, _) = self::padding(padding)?;
        let hash = rsa_hash(algorithm)?;
        let data: &[u8] = &data;
        let sig = py
            .detach(|| {
                let digest = hash.digest(data);
                match p {
                    Padding::Pss => {
                        let mut r = ChaCha20Rng::from_os_rng()?;
                        pss::sign_prehashed_with_rng(&self.k, hash, hash.output_len(), &digest, &mut r)
                    }
                    Padding::Pkcs1v15 => pkcs1v15::sign_prehashed(&self.k, hash, &digest),
                    Padding::Oaep => Err(pqkit::Error::InvalidParameter {
                        algorithm: "RSA",
                        reason: "OAEP is an encryption padding: sign with PSS or PKCS1v15",
                    }),
                }
            })
            .map_err(err)?;
        Ok(PyBytes::new(py, &sig))
    }

    /// Decrypts an RSAES-OAEP ciphertext (MGF1 with the same hash; SHA-256 by default; optional label).
    #[pyo3(signature = (ciphertext, padding, algorithm=None, label=None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ciphertext: Buf<'_, '_>,
        padding: &Bound<'py, PyAny>,
        algorithm: Option<&Bound<'py, PyAny>>,
        label: Option<Buf<'_, '_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let oaep = oaep_params(padding, algorithm, label.as_deref())?;
        let ct: &[u8] = &ciphertext;
        let pt = py.detach(|| oaep.decrypt(&self.k, ct)).map_err(err)?;
        Ok(PyBytes::new(py, &pt))
    }

    /// The key as PKCS#8 or TraditionalOpenSSL (PKCS#1 `RSA PRIVATE KEY`), PEM or DER.
    #[pyo3(signature = (encoding, format, encryption_algorithm=None))]
    fn private_bytes<'py>(
        &self,
        py: Python<'py>,
        encoding: &Bound<'py, PyAny>,
        format: &Bound<'py, PyAny>,
        encryption_algorithm: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        no_encryption(encryption_algorithm)?;
        match private_form("RSA", encoding, format)? {
            (pem, PrivForm::Pkcs8) => secret_pem_or_der(py, pem, || self.k.to_pkcs8_pem(), || self.k.to_pkcs8_der()),
            (pem, PrivForm::Traditional) => {
                secret_pem_or_der(py, pem, || self.k.to_pkcs1_pem(), || self.k.to_pkcs1_der())
            }
            (_, PrivForm::Raw) => Err(PyValueError::new_err("RSA keys have no Raw form: PKCS8 or TraditionalOpenSSL")),
        }
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.RSAPrivateKey {} bits (key hidden)>", self.k.public_key().bits())
    }
}

fn oaep_params(
    padding: &Bound<'_, PyAny>,
    algorithm: Option<&Bound<'_, PyAny>>,
    label: Option<&[u8]>,
) -> PyResult<oaep::Oaep> {
    let (p, inner) = self::padding(padding)?;
    if p != Padding::Oaep {
        return Err(PyValueError::new_err("RSA encryption here is OAEP only"));
    }
    let hash = rsa_hash(algorithm.or(inner.as_ref()))?;
    let mut o = oaep::Oaep::new(hash);
    if let Some(l) = label {
        o = o.with_label(l);
    } else if let Some(l) = pyca_oaep_label(padding) {
        o = o.with_label(&l);
    }
    Ok(o)
}

#[pymethods]
impl RsaPublicKeyPy {
    /// Loads a SubjectPublicKeyInfo or PKCS#1 ("RSA PUBLIC KEY") PEM file.
    #[staticmethod]
    fn from_pem(data: Buf<'_, '_>) -> PyResult<Self> {
        let pem = pem_str(&data)?;
        Ok(Self {
            k: Box::new(
                RsaPublicKey::from_public_key_pem(pem).or_else(|_| RsaPublicKey::from_pkcs1_pem(pem)).map_err(err)?,
            ),
        })
    }

    /// Loads a SubjectPublicKeyInfo or PKCS#1 DER file.
    #[staticmethod]
    fn from_der(data: Buf<'_, '_>) -> PyResult<Self> {
        Ok(Self {
            k: Box::new(
                RsaPublicKey::from_public_key_der(&data)
                    .or_else(|_| RsaPublicKey::from_pkcs1_der(&data))
                    .map_err(err)?,
            ),
        })
    }

    #[getter]
    fn key_size(&self) -> usize {
        self.k.bits()
    }

    /// Raises `InvalidSignature` unless `signature` is a valid PSS (any salt length) or PKCS#1 v1.5 signature
    /// of `data`.
    #[pyo3(signature = (signature, data, padding, algorithm=None))]
    fn verify(
        &self,
        py: Python<'_>,
        signature: Buf<'_, '_>,
        data: Buf<'_, '_>,
        padding: &Bound<'_, PyAny>,
        algorithm: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let (p, _) = self::padding(padding)?;
        let hash = rsa_hash(algorithm)?;
        let (sig, data): (&[u8], &[u8]) = (&signature, &data);
        py.detach(|| {
            let digest = hash.digest(data);
            match p {
                Padding::Pss => pss::verify_prehashed(&self.k, hash, hash, None, &digest, sig),
                Padding::Pkcs1v15 => pkcs1v15::verify_prehashed(&self.k, hash, &digest, sig),
                Padding::Oaep => Err(pqkit::Error::InvalidParameter {
                    algorithm: "RSA",
                    reason: "OAEP is an encryption padding: verify with PSS or PKCS1v15",
                }),
            }
        })
        .map_err(|e| match e {
            pqkit::Error::InvalidParameter { .. } => err(e),
            _ => InvalidSignature::new_err(format!("RSA: the signature does not verify ({e})")),
        })
    }

    /// Encrypts with RSAES-OAEP (MGF1 with the same hash; SHA-256 by default; optional label).
    #[pyo3(signature = (plaintext, padding, algorithm=None, label=None))]
    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        plaintext: Buf<'_, '_>,
        padding: &Bound<'py, PyAny>,
        algorithm: Option<&Bound<'py, PyAny>>,
        label: Option<Buf<'_, '_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let oaep = oaep_params(padding, algorithm, label.as_deref())?;
        let pt: &[u8] = &plaintext;
        let ct = py.detach(|| oaep.encrypt(&self.k, pt)).map_err(err)?;
        Ok(PyBytes::new(py, &ct))
    }

    /// The key as SubjectPublicKeyInfo or PKCS#1, PEM or DER.
    fn public_bytes<'py>(
        &self,
        py: Python<'py>,
        encoding: &Bound<'py, PyAny>,
        format: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        match public_form("RSA", encoding, format)? {
            (pem, PubForm::Spki) => pem_or_der(py, pem, || self.k.to_public_key_pem(), || self.k.to_public_key_der()),
            (pem, PubForm::Pkcs1) => pem_or_der(py, pem, || self.k.to_pkcs1_pem(), || self.k.to_pkcs1_der()),
            _ => Err(PyValueError::new_err("RSA public keys: SubjectPublicKeyInfo or PKCS1")),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// pyca's loaders: the key class is read from the file.

fn first_private(py: Python<'_>, data: &[u8], pem: bool) -> PyResult<Py<PyAny>> {
    macro_rules! try_load {
        ($cls:ty) => {
            let r = if pem { <$cls>::from_pem(Buf::Borrowed(data)) } else { <$cls>::from_der(Buf::Borrowed(data)) };
            if let Ok(k) = r {
                return Ok(Bound::new(py, k)?.into_any().unbind());
            }
        };
    }
    try_load!(Ed25519PrivateKey);
    try_load!(X25519PrivateKey);
    try_load!(EcPrivateKey);
    try_load!(RsaPrivateKeyPy);
    Err(PyValueError::new_err(
        "no supported private key found (unencrypted PKCS#8, SEC1 or PKCS#1 holding Ed25519, X25519, P-256, secp256k1 or RSA)",
    ))
}

fn first_public(py: Python<'_>, data: &[u8], pem: bool) -> PyResult<Py<PyAny>> {
    macro_rules! try_load {
        ($cls:ty) => {
            let r = if pem { <$cls>::from_pem(Buf::Borrowed(data)) } else { <$cls>::from_der(Buf::Borrowed(data)) };
            if let Ok(k) = r {
                return Ok(Bound::new(py, k)?.into_any().unbind());
            }
        };
    }
    try_load!(Ed25519PublicKey);
    try_load!(X25519PublicKeyPy);
    try_load!(EcPublicKey);
    try_load!(RsaPublicKeyPy);
    Err(PyValueError::new_err(
        "no supported public key found (SubjectPublicKeyInfo or PKCS#1 holding Ed25519, X25519, P-256, secp256k1 or RSA)",
    ))
}

/// Loads a PEM private key file of any supported type (pyca's `load_pem_private_key`; `password` must be None).
#[pyfunction]
#[pyo3(signature = (data, password=None))]
pub(crate) fn load_pem_private_key(
    py: Python<'_>,
    data: Buf<'_, '_>,
    password: Option<Buf<'_, '_>>,
) -> PyResult<Py<PyAny>> {
    no_password(&password)?;
    first_private(py, &data, true)
}

/// Loads a DER private key file of any supported type (pyca's `load_der_private_key`).
#[pyfunction]
#[pyo3(signature = (data, password=None))]
pub(crate) fn load_der_private_key(
    py: Python<'_>,
    data: Buf<'_, '_>,
    password: Option<Buf<'_, '_>>,
) -> PyResult<Py<PyAny>> {
    no_password(&password)?;
    first_private(py, &data, false)
}

/// Loads a PEM public key file of any supported type (pyca's `load_pem_public_key`).
#[pyfunction]
pub(crate) fn load_pem_public_key(py: Python<'_>, data: Buf<'_, '_>) -> PyResult<Py<PyAny>> {
    first_public(py, &data, true)
}

/// Loads a DER public key file of any supported type (pyca's `load_der_public_key`).
#[pyfunction]
pub(crate) fn load_der_public_key(py: Python<'_>, data: Buf<'_, '_>) -> PyResult<Py<PyAny>> {
    first_public(py, &data, false)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InvalidSignature", py.get_type::<InvalidSignature>())?;
    m.add_class::<Ed25519PrivateKey>()?;
    m.add_class::<Ed25519PublicKey>()?;
    m.add_class::<X25519PrivateKey>()?;
    m.add_class::<X25519PublicKeyPy>()?;
    m.add_class::<EcPrivateKey>()?;
    m.add_class::<EcPublicKey>()?;
    m.add_class::<RsaPrivateKeyPy>()?;
    m.add_class::<RsaPublicKeyPy>()?;
    m.add_function(wrap_pyfunction!(load_pem_private_key, m)?)?;
    m.add_function(wrap_pyfunction!(load_der_private_key, m)?)?;
    m.add_function(wrap_pyfunction!(load_pem_public_key, m)?)?;
    m.add_function(wrap_pyfunction!(load_der_public_key, m)?)?;
    Ok(())
}
