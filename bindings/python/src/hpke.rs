//! HPKE (RFC 9180, with the post-quantum KEMs of draft-ietf-hpke-pq) and the hybrid KEMs X-Wing and
//! X25519MLKEM768. Keys are `bytes`: HPKE private keys in the KEM's serialisation (an X-Wing key is its
//! 32-byte seed), public keys likewise.

use crate::{Buf, err};
use pqkit::hpke::{self, Aead, Kdf, Kem, RecipientMode, SenderMode};
use pqkit::hybrid::{x25519mlkem768 as xmlkem, xwing};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

type Pair<'py> = (Bound<'py, PyBytes>, Bound<'py, PyBytes>);

/// A name or an integer code point.
fn name_or_id(obj: &Bound<'_, PyAny>) -> PyResult<Result<u16, String>> {
    if let Ok(id) = obj.extract::<u16>() {
        return Ok(Ok(id));
    }
    Ok(Err(obj.extract::<String>()?))
}

fn fold(s: &str) -> String {
    s.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect()
}

fn kem_of(obj: &Bound<'_, PyAny>) -> PyResult<Kem> {
    match name_or_id(obj)? {
        Ok(id) => Kem::from_id(id).map_err(err),
        Err(name) => match fold(&name).as_str() {
            "x25519" | "dhkemx25519hkdfsha256" => Ok(Kem::DhKemX25519HkdfSha256),
            "mlkem512" => Ok(Kem::MlKem512),
            "mlkem768" => Ok(Kem::MlKem768),
            "mlkem1024" => Ok(Kem::MlKem1024),
            "xwing" | "mlkem768x25519" => Ok(Kem::XWing),
            _ => Err(crate::unknown("HPKE KEM", &name, "X25519, ML-KEM-512, ML-KEM-768, ML-KEM-1024, X-Wing")),
        },
    }
}

fn kdf_of(obj: &Bound<'_, PyAny>) -> PyResult<Kdf> {
    match name_or_id(obj)? {
        Ok(id) => Kdf::from_id(id).map_err(err),
        Err(name) => match fold(&name).as_str() {
            "hkdfsha256" => Ok(Kdf::HkdfSha256),
            "hkdfsha384" => Ok(Kdf::HkdfSha384),
            "hkdfsha512" => Ok(Kdf::HkdfSha512),
            "shake256" => Ok(Kdf::Shake256),
            _ => Err(crate::unknown("HPKE KDF", &name, "HKDF-SHA256, HKDF-SHA384, HKDF-SHA512, SHAKE256")),
        },
    }
}

fn aead_of(obj: &Bound<'_, PyAny>) -> PyResult<Aead> {
    match name_or_id(obj)? {
        Ok(id) => Aead::from_id(id).map_err(err),
        Err(name) => match fold(&name).as_str() {
            "aes128gcm" => Ok(Aead::Aes128Gcm),
            "aes256gcm" => Ok(Aead::Aes256Gcm),
            "chacha20poly1305" => Ok(Aead::ChaCha20Poly1305),
            "exportonly" => Ok(Aead::ExportOnly),
            _ => Err(crate::unknown("HPKE AEAD", &name, "AES-128-GCM, AES-256-GCM, ChaCha20Poly1305, export-only")),
        },
    }
}

/// An HPKE suite: `HpkeSuite("X-Wing", "HKDF-SHA256", "ChaCha20Poly1305")` (names or code points). Modes:
/// base; PSK with `psk` and `psk_id`; auth with the sender's key (DHKEM only); auth-PSK.
#[pyclass(module = "pqkit", name = "HpkeSuite", frozen)]
pub(crate) struct HpkeSuite {
    suite: hpke::Suite,
    kem: Kem,
}
fits_python_alignment!(HpkeSuite);

fn both<'a>(psk: &'a Option<Buf<'_, '_>>, psk_id: &'a Option<Buf<'_, '_>>) -> PyResult<Option<(&'a [u8], &'a [u8])>> {
    match (psk.as_deref(), psk_id.as_deref()) {
        (None, None) => Ok(None),
        (Some(p), Some(i)) => Ok(Some((p, i))),
        _ => Err(PyValueError::new_err("HPKE: psk and psk_id go together")),
    }
}

impl HpkeSuite {
    fn private(&self, bytes: &[u8]) -> PyResult<hpke::PrivateKey> {
        hpke::PrivateKey::from_bytes(self.kem, bytes).map_err(err)
    }
    fn public(&self, bytes: &[u8]) -> PyResult<hpke::PublicKey> {
        hpke::PublicKey::from_bytes(self.kem, bytes).map_err(err)
    }
}

#[pymethods]
impl HpkeSuite {
    #[new]
    fn new(kem: &Bound<'_, PyAny>, kdf: &Bound<'_, PyAny>, aead: &Bound<'_, PyAny>) -> PyResult<Self> {
        let kem = kem_of(kem)?;
        Ok(Self { suite: hpke::Suite::new(kem, kdf_of(kdf)?, aead_of(aead)?), kem })
    }

    /// A fresh `(private_key, public_key)` of the suite's KEM.
    fn generate_key_pair<'py>(&self, py: Python<'py>) -> PyResult<Pair<'py>> {
        let (sk, pk) = py.detach(|| self.kem.generate_key_pair()).map_err(err)?;
        Ok((PyBytes::new(py, &sk.to_bytes()), PyBytes::new(py, pk.as_bytes())))
    }

    /// RFC 9180 DeriveKeyPair: the `(private_key, public_key)` of `ikm` (secret).
    fn derive_key_pair<'py>(&self, py: Python<'py>, ikm: Buf<'_, '_>) -> PyResult<Pair<'py>> {
        let (sk, pk) = self.kem.derive_key_pair(&ikm).map_err(err)?;
        Ok((PyBytes::new(py, &sk.to_bytes()), PyBytes::new(py, pk.as_bytes())))
    }

    /// The public key of `private_key`.
    fn public_key<'py>(&self, py: Python<'py>, private_key: Buf<'_, '_>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, self.private(&private_key)?.public_key().as_bytes()))
    }

    /// Single-shot seal to `public_key`: `(enc, ciphertext)`.
    #[pyo3(signature = (public_key, plaintext, info=None, aad=None, *, psk=None, psk_id=None, sender_private_key=None))]
    #[allow(clippy::too_many_arguments)]
    fn seal<'py>(
        &self,
        py: Python<'py>,
        public_key: Buf<'_, '_>,
        plaintext: Buf<'_, '_>,
        info: Option<Buf<'_, '_>>,
        aad: Option<Buf<'_, '_>>,
        psk: Option<Buf<'_, '_>>,
        psk_id: Option<Buf<'_, '_>>,
        sender_private_key: Option<Buf<'_, '_>>,
    ) -> PyResult<Pair<'py>> {
        let pk = self.public(&public_key)?;
        let sk_s = sender_private_key.as_deref().map(|b| self.private(b)).transpose()?;
        let p = both(&psk, &psk_id)?;
        let mode = match (&sk_s, p) {
            (None, None) => SenderMode::Base,
            (None, Some((psk, psk_id))) => SenderMode::Psk { psk, psk_id },
            (Some(sk_s), None) => SenderMode::Auth { sk_s },
            (Some(sk_s), Some((psk, psk_id))) => SenderMode::AuthPsk { sk_s, psk, psk_id },
        };
        let (info, aad, pt) = (info.as_deref().unwrap_or_default(), aad.as_deref().unwrap_or_default(), &*plaintext);
        let (enc, ct) = py.detach(|| self.suite.seal(&pk, info, aad, pt, mode)).map_err(err)?;
        Ok((PyBytes::new(py, &enc), PyBytes::new(py, &ct)))
    }

    /// Single-shot open: the plaintext of `ciphertext` sealed with `enc` to `private_key`'s public key.
    #[pyo3(signature = (enc, private_key, ciphertext, info=None, aad=None, *, psk=None, psk_id=None, sender_public_key=None))]
    #[allow(clippy::too_many_arguments)]
    fn open<'py>(
        &self,
        py: Python<'py>,
        enc: Buf<'_, '_>,
        private_key: Buf<'_, '_>,
        ciphertext: Buf<'_, '_>,
        info: Option<Buf<'_, '_>>,
        aad: Option<Buf<'_, '_>>,
        psk: Option<Buf<'_, '_>>,
        psk_id: Option<Buf<'_, '_>>,
        sender_public_key: Option<Buf<'_, '_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let sk = self.private(&private_key)?;
        let pk_s = sender_public_key.as_deref().map(|b| self.public(b)).transpose()?;
        let p = both(&psk, &psk_id)?;
        let mode = match (&pk_s, p) {
            (None, None) => RecipientMode::Base,
            (None, Some((psk, psk_id))) => RecipientMode::Psk { psk, psk_id },
            (Some(pk_s), None) => RecipientMode::Auth { pk_s },
            (Some(pk_s), Some((psk, psk_id))) => RecipientMode::AuthPsk { pk_s, psk, psk_id },
        };
        let (info, aad, ct, enc) =
            (info.as_deref().unwrap_or_default(), aad.as_deref().unwrap_or_default(), &*ciphertext, &*enc);
        let pt = Zeroizing::new(py.detach(|| self.suite.open(enc, &sk, info, aad, ct, mode)).map_err(err)?);
        Ok(PyBytes::new(py, &pt))
    }

    /// Base-mode SendExport: `(enc, secret)` with a `length`-byte secret for `exporter_context`.
    #[pyo3(signature = (public_key, exporter_context, length, info=None))]
    fn send_export<'py>(
        &self,
        py: Python<'py>,
        public_key: Buf<'_, '_>,
        exporter_context: Buf<'_, '_>,
        length: usize,
        info: Option<Buf<'_, '_>>,
    ) -> PyResult<Pair<'py>> {
        let pk = self.public(&public_key)?;
        let (info, ctx) = (info.as_deref().unwrap_or_default(), &*exporter_context);
        let (enc, secret) =
            py.detach(|| self.suite.send_export(&pk, info, ctx, length, SenderMode::Base)).map_err(err)?;
        Ok((PyBytes::new(py, &enc), PyBytes::new(py, &secret)))
    }

    /// Base-mode ReceiveExport: the `length`-byte secret the sender exported for `exporter_context`.
    #[pyo3(signature = (enc, private_key, exporter_context, length, info=None))]
    fn receive_export<'py>(
        &self,
        py: Python<'py>,
        enc: Buf<'_, '_>,
        private_key: Buf<'_, '_>,
        exporter_context: Buf<'_, '_>,
        length: usize,
        info: Option<Buf<'_, '_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let sk = self.private(&private_key)?;
        let (info, ctx, enc) = (info.as_deref().unwrap_or_default(), &*exporter_context, &*enc);
        let secret =
            py.detach(|| self.suite.receive_export(enc, &sk, info, ctx, length, RecipientMode::Base)).map_err(err)?;
        Ok(PyBytes::new(py, &secret))
    }

    /// pyca's single-shot form: `enc || ciphertext` (base mode, empty aad).
    #[pyo3(signature = (plaintext, public_key, info=None))]
    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        plaintext: Buf<'_, '_>,
        public_key: Buf<'_, '_>,
        info: Option<Buf<'_, '_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let pk = self.public(&public_key)?;
        let (info, pt) = (info.as_deref().unwrap_or_default(), &*plaintext);
        let (mut enc, ct) = py.detach(|| self.suite.seal(&pk, info, &[], pt, SenderMode::Base)).map_err(err)?;
        enc.extend_from_slice(&ct);
        Ok(PyBytes::new(py, &enc))
    }

    /// pyca's single-shot form: opens `enc || ciphertext`.
    #[pyo3(signature = (ciphertext, private_key, info=None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ciphertext: Buf<'_, '_>,
        private_key: Buf<'_, '_>,
        info: Option<Buf<'_, '_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let sk = self.private(&private_key)?;
        let n = enc_len(self.kem);
        let data: &[u8] = &ciphertext;
        if data.len() < n {
            return Err(err(pqkit::Error::InvalidLength {
                algorithm: "HPKE",
                field: "enc || ciphertext",
                expected: pqkit::error::Expected::AtLeast(n),
                actual: data.len(),
            }));
        }
        let (enc, ct) = data.split_at(n);
        let info = info.as_deref().unwrap_or_default();
        let pt =
            Zeroizing::new(py.detach(|| self.suite.open(enc, &sk, info, &[], ct, RecipientMode::Base)).map_err(err)?);
        Ok(PyBytes::new(py, &pt))
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.HpkeSuite {:?}>", self.suite)
    }
}

/// Length of the KEM's `enc`.
fn enc_len(kem: Kem) -> usize {
    match kem {
        Kem::DhKemX25519HkdfSha256 => 32,
        Kem::MlKem512 => 768,
        Kem::MlKem768 => 1088,
        Kem::MlKem1024 => 1568,
        Kem::XWing => xwing::CT_LEN,
    }
}

// ---------------------------------------------------------------------------------------------------------
// X-Wing and X25519MLKEM768 as KEMs

/// A fresh X-Wing key pair `(public_key, private_key)`: the 1216-byte public key and the 32-byte seed.
#[pyfunction]
pub(crate) fn xwing_keygen<'py>(py: Python<'py>) -> PyResult<Pair<'py>> {
    let dk = xwing::DecapsulationKey::generate().map_err(err)?;
    Ok((PyBytes::new(py, &dk.encapsulation_key().to_bytes()), PyBytes::new(py, &dk.to_seed()[..])))
}

/// The X-Wing public key of a 32-byte seed.
#[pyfunction]
pub(crate) fn xwing_public_key<'py>(py: Python<'py>, private_key: Buf<'_, '_>) -> PyResult<Bound<'py, PyBytes>> {
    let dk = xwing::DecapsulationKey::from_bytes(&private_key).map_err(err)?;
    Ok(PyBytes::new(py, &dk.encapsulation_key().to_bytes()))
}

/// Encapsulates to an X-Wing public key: `(ciphertext, shared_secret)` (1120 and 32 bytes).
#[pyfunction]
pub(crate) fn xwing_encapsulate<'py>(py: Python<'py>, public_key: Buf<'_, '_>) -> PyResult<Pair<'py>> {
    let ek = xwing::EncapsulationKey::from_bytes(&public_key).map_err(err)?;
    let (ct, ss) = py.detach(|| ek.encapsulate()).map_err(err)?;
    Ok((PyBytes::new(py, ct.as_bytes()), PyBytes::new(py, ss.as_bytes())))
}

/// Decapsulates an X-Wing ciphertext with the 32-byte seed (implicit rejection: a modified ciphertext gives an
/// unrelated secret).
#[pyfunction]
pub(crate) fn xwing_decapsulate<'py>(
    py: Python<'py>,
    private_key: Buf<'_, '_>,
    ciphertext: Buf<'_, '_>,
) -> PyResult<Bound<'py, PyBytes>> {
    let dk = xwing::DecapsulationKey::from_bytes(&private_key).map_err(err)?;
    let ct = xwing::Ciphertext::from_bytes(&ciphertext).map_err(err)?;
    let ss = py.detach(|| dk.decapsulate(&ct));
    Ok(PyBytes::new(py, ss.as_bytes()))
}

/// The X25519MLKEM768 key share (TLS group 0x11ec) of a 96-byte seed `d || z || x25519 secret`: returns the
/// 1216-byte `ek || X25519 public key`.
#[pyfunction]
pub(crate) fn x25519mlkem768_public_key<'py>(py: Python<'py>, seed: Buf<'_, '_>) -> PyResult<Bound<'py, PyBytes>> {
    let dk = xmlkem::DecapsulationKey::from_seed(&seed).map_err(err)?;
    Ok(PyBytes::new(py, &dk.encapsulation_key().to_bytes()))
}

/// Encapsulates to an X25519MLKEM768 key share: `(ciphertext, shared_secret)` (1120 and 64 bytes:
/// ML-KEM's secret then X25519's, as TLS uses them).
#[pyfunction]
pub(crate) fn x25519mlkem768_encapsulate<'py>(py: Python<'py>, public_key: Buf<'_, '_>) -> PyResult<Pair<'py>> {
    let ek = xmlkem::EncapsulationKey::from_bytes(&public_key).map_err(err)?;
    let (ct, ss) = py.detach(|| ek.encapsulate()).map_err(err)?;
    Ok((PyBytes::new(py, ct.as_bytes()), PyBytes::new(py, ss.as_bytes())))
}

/// Decapsulates with the 96-byte seed: the 64-byte shared secret.
#[pyfunction]
pub(crate) fn x25519mlkem768_decapsulate<'py>(
    py: Python<'py>,
    seed: Buf<'_, '_>,
    ciphertext: Buf<'_, '_>,
) -> PyResult<Bound<'py, PyBytes>> {
    let dk = xmlkem::DecapsulationKey::from_seed(&seed).map_err(err)?;
    let ct = xmlkem::Ciphertext::from_bytes(&ciphertext).map_err(err)?;
    let ss = py.detach(|| dk.decapsulate(&ct)).map_err(err)?;
    Ok(PyBytes::new(py, ss.as_bytes()))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<HpkeSuite>()?;
    m.add_function(wrap_pyfunction!(xwing_keygen, m)?)?;
    m.add_function(wrap_pyfunction!(xwing_public_key, m)?)?;
    m.add_function(wrap_pyfunction!(xwing_encapsulate, m)?)?;
    m.add_function(wrap_pyfunction!(xwing_decapsulate, m)?)?;
    m.add_function(wrap_pyfunction!(x25519mlkem768_public_key, m)?)?;
    m.add_function(wrap_pyfunction!(x25519mlkem768_encapsulate, m)?)?;
    m.add_function(wrap_pyfunction!(x25519mlkem768_decapsulate, m)?)?;
    Ok(())
}
