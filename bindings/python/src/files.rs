//! Public-key file encryption (the pqkit file format version 2, `docs/file-format.md`): X-Wing identities
//! and recipient strings, whole files as `bytes` or streamed between file-like objects. The files are the
//! ones `pqkit encrypt -r/-R` writes and `pqkit decrypt -i` reads.

use crate::{Buf, InvalidParameter, err};
use pqkit::aead::recipients::{self, Identity as RustIdentity, Recipient as RustRecipient};
use pqkit::aead::stream::Algorithm;
use pyo3::exceptions::{PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::io::{Read, Write};
use zeroize::Zeroizing;

/// Plaintext moves between Python and the library in chunks of this size.
const CHUNK: usize = 1 << 16;

/// An X-Wing identity (private key) for decrypting files, with its text form
/// (`PQKIT-XWING-IDENTITY-1:` and the seed in hex, what `pqkit keygen --alg xwing` writes).
#[pyclass(module = "pqkit", name = "Identity", frozen)]
pub(crate) struct Identity {
    id: Box<RustIdentity>,
}
fits_python_alignment!(Identity);

/// A recipient (X-Wing public key), written as a `pqkit-xwing1...` string.
#[pyclass(module = "pqkit", name = "Recipient", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct Recipient {
    r: RustRecipient,
}
fits_python_alignment!(Recipient);

#[pymethods]
impl Identity {
    /// A fresh identity from the operating system's randomness.
    #[staticmethod]
    fn generate() -> PyResult<Self> {
        Ok(Self { id: Box::new(RustIdentity::generate().map_err(err)?) })
    }

    /// Reads an identity file's text (comment lines starting with `#` are skipped).
    #[staticmethod]
    fn from_text(text: &str) -> PyResult<Self> {
        Ok(Self { id: Box::new(RustIdentity::from_text(text).map_err(err)?) })
    }

    /// The identity file's text. It holds the secret key: write it to a file only you can read.
    fn to_text(&self) -> String {
        let t: Zeroizing<String> = self.id.to_text();
        t.as_str().to_owned()
    }

    /// The recipient to give to senders.
    fn recipient(&self) -> Recipient {
        Recipient { r: self.id.recipient() }
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.Identity for {}... (key hidden)>", &self.id.recipient().to_string()[..24])
    }
}

#[pymethods]
impl Recipient {
    /// Parses a `pqkit-xwing1...` string (surrounding whitespace is ignored); a mistyped string fails its
    /// check.
    #[new]
    fn new(text: &str) -> PyResult<Self> {
        Ok(Self { r: text.parse().map_err(err)? })
    }

    /// The X-Wing public key's bytes.
    fn public_bytes_raw<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.r.as_bytes())
    }

    fn __str__(&self) -> String {
        self.r.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Recipient({:?})", self.r.to_string())
    }
}

/// A recipient argument: a `Recipient`, or its string.
fn recipients_of(objs: &Bound<'_, PyAny>) -> PyResult<Vec<RustRecipient>> {
    let mut out = Vec::new();
    for o in objs.try_iter()? {
        let o = o?;
        if let Ok(r) = o.cast::<Recipient>() {
            out.push(r.get().r.clone());
        } else if let Ok(s) = o.extract::<String>() {
            out.push(s.parse().map_err(err)?);
        } else {
            return Err(PyTypeError::new_err("recipients: expected Recipient objects or pqkit-xwing1 strings"));
        }
    }
    if out.is_empty() {
        return Err(InvalidParameter::new_err("pqkit recipients: at least one recipient is needed"));
    }
    Ok(out)
}

fn identities_of(objs: &Bound<'_, PyAny>) -> PyResult<Vec<RustIdentity>> {
    let mut out = Vec::new();
    // A single Identity is taken as a list of one.
    if let Ok(i) = objs.cast::<Identity>() {
        out.push(RustIdentity::from_text(&i.get().id.to_text()).map_err(err)?);
        return Ok(out);
    }
    for o in objs.try_iter()? {
        let i =
            o?.cast_into::<Identity>().map_err(|_| PyTypeError::new_err("identities: expected Identity objects"))?;
        out.push(RustIdentity::from_text(&i.get().id.to_text()).map_err(err)?);
    }
    if out.is_empty() {
        return Err(InvalidParameter::new_err("pqkit recipients: at least one identity is needed"));
    }
    Ok(out)
}

fn algorithm(name: &str) -> PyResult<Algorithm> {
    match name.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
        "xchacha20poly1305" => Ok(Algorithm::XChaCha20Poly1305),
        "aes256gcm" => Ok(Algorithm::Aes256Gcm),
        "kusumi512poly1305" => Ok(Algorithm::Kusumi512Poly1305),
        _ => Err(crate::unknown("file algorithm", name, "XChaCha20Poly1305, Aes256Gcm, Kusumi512Poly1305")),
    }
}

/// A Python file-like object as a `Read` (its `read(n)`) or a `Write` (its `write(b)`), keeping the first
/// Python exception it meets so that it can be raised as itself.
struct PyFile<'py> {
    obj: Bound<'py, PyAny>,
    failed: Option<PyErr>,
}

impl<'py> PyFile<'py> {
    fn new(obj: Bound<'py, PyAny>) -> Self {
        Self { obj, failed: None }
    }

    fn keep(&mut self, e: PyErr) -> std::io::Error {
        let msg = e.to_string();
        self.failed = Some(e);
        std::io::Error::other(msg)
    }
}

impl Read for PyFile<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let r = self.obj.call_method1("read", (buf.len(),)).and_then(|b| {
            let data: Buf<'_, '_> = b.extract()?;
            if data.len() > buf.len() {
                return Err(PyOSError::new_err("read(n) returned more than n bytes"));
            }
            buf[..data.len()].copy_from_slice(&data);
            Ok(data.len())
        });
        r.map_err(|e| self.keep(e))
    }
}

impl Write for PyFile<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let py = self.obj.py();
        let r = self.obj.call_method1("write", (PyBytes::new(py, buf),));
        match r {
            Ok(_) => Ok(buf.len()),
            Err(e) => Err(self.keep(e)),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An `io::Error` from the library as the pqkit exception it carries, or the Python exception a file raised.
fn io_err(e: std::io::Error, failed: &mut Option<PyErr>) -> PyErr {
    if let Some(p) = failed.take() {
        return p;
    }
    match e.get_ref().and_then(|x| x.downcast_ref::<pqkit::Error>()) {
        Some(pe) => err(pe.clone()),
        None => PyOSError::new_err(e.to_string()),
    }
}

/// Encrypts `data` to `recipients` (Recipient objects or `pqkit-xwing1` strings): a whole version-2 file.
#[pyfunction]
#[pyo3(signature = (recipients, data, algorithm="XChaCha20Poly1305"))]
pub(crate) fn encrypt_to_recipients<'py>(
    py: Python<'py>,
    recipients: &Bound<'py, PyAny>,
    data: Buf<'_, '_>,
    algorithm: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let rs = recipients_of(recipients)?;
    let alg = self::algorithm(algorithm)?;
    let data: &[u8] = &data;
    let file = py
        .detach(|| -> std::io::Result<Vec<u8>> {
            let mut enc = recipients::encrypt(&rs, alg, Vec::with_capacity(data.len() + 2048))?;
            enc.write_all(data)?;
            enc.finish()
        })
        .map_err(|e| io_err(e, &mut None))?;
    Ok(PyBytes::new(py, &file))
}

/// Decrypts a whole version-2 file with any of `identities` (one Identity or a list). Nothing is returned
/// unless the whole file authenticates.
#[pyfunction]
pub(crate) fn decrypt_with_identities<'py>(
    py: Python<'py>,
    identities: &Bound<'py, PyAny>,
    data: Buf<'_, '_>,
) -> PyResult<Bound<'py, PyBytes>> {
    let ids = identities_of(identities)?;
    let data: &[u8] = &data;
    let pt = py
        .detach(|| -> std::io::Result<Zeroizing<Vec<u8>>> {
            let mut dec = recipients::decrypt(&ids, data)?;
            let mut out = Zeroizing::new(Vec::new());
            dec.read_to_end(&mut out)?;
            Ok(out)
        })
        .map_err(|e| io_err(e, &mut None))?;
    Ok(PyBytes::new(py, &pt))
}

/// Encrypts everything read from the file-like `src` (`read(n)`) to `recipients`, writing the file to the
/// file-like `dst` (`write(b)`).
#[pyfunction]
#[pyo3(signature = (recipients, src, dst, algorithm="XChaCha20Poly1305"))]
pub(crate) fn encrypt_file<'py>(
    recipients: &Bound<'py, PyAny>,
    src: Bound<'py, PyAny>,
    dst: Bound<'py, PyAny>,
    algorithm: &str,
) -> PyResult<()> {
    let rs = recipients_of(recipients)?;
    let alg = self::algorithm(algorithm)?;
    let mut input = PyFile::new(src);
    let mut failed = None;
    let r = (|| -> std::io::Result<()> {
        let mut enc = recipients::encrypt(&rs, alg, PyFile::new(dst))?;
        let mut buf = Zeroizing::new(vec![0u8; CHUNK]);
        loop {
            let n = input.read(&mut buf)?;
            if n == 0 {
                break;
            }
            enc.write_all(&buf[..n])?;
        }
        let mut out = enc.finish()?;
        failed = out.failed.take();
        Ok(())
    })();
    if let Some(e) = input.failed.take() {
        return Err(e);
    }
    r.map_err(|e| io_err(e, &mut failed))
}

/// Decrypts the version-2 file read from `src` with any of `identities`, writing the plaintext to `dst`.
///
/// Plaintext is written only as each segment authenticates; a file cut short or modified later on raises
/// after the segments before the damage were written, so discard `dst` when this raises.
#[pyfunction]
pub(crate) fn decrypt_file<'py>(
    identities: &Bound<'py, PyAny>,
    src: Bound<'py, PyAny>,
    dst: Bound<'py, PyAny>,
) -> PyResult<()> {
    let ids = identities_of(identities)?;
    let mut output = PyFile::new(dst);
    let mut src = PyFile::new(src);
    let r = (|| -> std::io::Result<()> {
        let mut dec = recipients::decrypt(&ids, &mut src)?;
        let mut buf = Zeroizing::new(vec![0u8; CHUNK]);
        loop {
            let n = dec.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            output.write_all(&buf[..n])?;
        }
    })();
    if let Some(e) = output.failed.take() {
        return Err(e);
    }
    r.map_err(|e| io_err(e, &mut src.failed))
}

/// The key-file prefix: `pqkit keygen -o FILE` writes `PQKIT-KEY-V1:` and 64 hex digits.
const KEY_PREFIX: &str = "PQKIT-KEY-V1:";

/// A 32-byte file key: raw bytes, or a key file's text (`PQKIT-KEY-V1:<64 hex digits>`).
fn file_key(key: &Bound<'_, PyAny>) -> PyResult<Zeroizing<Vec<u8>>> {
    if let Ok(text) = key.extract::<String>() {
        let text = Zeroizing::new(text);
        let hex = text.trim().strip_prefix(KEY_PREFIX).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err("key file: expected PQKIT-KEY-V1:<64 hex digits>")
        })?;
        if hex.len() != 64 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(pyo3::exceptions::PyValueError::new_err("key file: expected PQKIT-KEY-V1:<64 hex digits>"));
        }
        let mut out = Zeroizing::new(vec![0u8; 32]);
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or_default();
        }
        return Ok(out);
    }
    let b: Buf<'_, '_> = key.extract()?;
    pqkit::Error::check_length("pqkit file", "key", 32, b.len()).map_err(err)?;
    Ok(Zeroizing::new(b.to_vec()))
}

/// A fresh key file's text, `PQKIT-KEY-V1:<64 hex digits>\n` (what `pqkit keygen -o FILE` writes). It is
/// the secret key: store it like one.
#[pyfunction]
pub(crate) fn generate_key_file() -> PyResult<String> {
    let mut k = Zeroizing::new([0u8; 32]);
    pqkit::rng::fill_os(&mut k[..]).map_err(err)?;
    Ok(format!("{KEY_PREFIX}{}\n", k.iter().map(|b| format!("{b:02x}")).collect::<String>()))
}

fn encrypt_v1(
    py: Python<'_>,
    data: &[u8],
    make: impl FnOnce(Vec<u8>) -> pqkit::Result<pqkit::aead::stream::Encryptor<Vec<u8>>> + Send,
) -> PyResult<Vec<u8>> {
    py.detach(|| -> std::io::Result<Vec<u8>> {
        let mut enc = make(Vec::with_capacity(data.len() + 256)).map_err(std::io::Error::from)?;
        enc.write_all(data)?;
        enc.finish()
    })
    .map_err(|e| io_err(e, &mut None))
}

fn decrypt_v1<'py, R: Read>(
    py: Python<'py>,
    make: impl FnOnce() -> std::io::Result<pqkit::aead::stream::Decryptor<R>> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    let pt = py
        .detach(|| -> std::io::Result<Zeroizing<Vec<u8>>> {
            let mut dec = make()?;
            let mut out = Zeroizing::new(Vec::new());
            dec.read_to_end(&mut out)?;
            Ok(out)
        })
        .map_err(|e| io_err(e, &mut None))?;
    Ok(PyBytes::new(py, &pt))
}

/// Encrypts `data` under a key file (`key`: the file's text or the 32 raw bytes): a whole version-1 file, as
/// `pqkit encrypt -k KEYFILE` writes.
#[pyfunction]
#[pyo3(signature = (key, data, algorithm="XChaCha20Poly1305"))]
pub(crate) fn encrypt_with_key<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    data: Buf<'_, '_>,
    algorithm: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let (k, alg) = (file_key(key)?, self::algorithm(algorithm)?);
    let file = encrypt_v1(py, &data, |w| pqkit::aead::stream::Encryptor::with_key(alg, &k, w))?;
    Ok(PyBytes::new(py, &file))
}

/// Decrypts a whole version-1 file made with a key file (as `pqkit decrypt -k KEYFILE`).
#[pyfunction]
pub(crate) fn decrypt_with_key<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    data: Buf<'_, '_>,
) -> PyResult<Bound<'py, PyBytes>> {
    let k = file_key(key)?;
    let data: &[u8] = &data;
    decrypt_v1(py, || pqkit::aead::stream::Decryptor::with_key(&k, data))
}

/// Encrypts `data` under a passphrase stretched by Argon2id (`memory_cost` KiB, `iterations`, `lanes`: the
/// CLI's defaults): a whole version-1 file, as `pqkit encrypt --passphrase-file` writes.
#[pyfunction]
#[pyo3(signature = (passphrase, data, algorithm="XChaCha20Poly1305", *, memory_cost=65536, iterations=3, lanes=4))]
pub(crate) fn encrypt_with_passphrase<'py>(
    py: Python<'py>,
    passphrase: Buf<'_, '_>,
    data: Buf<'_, '_>,
    algorithm: &str,
    memory_cost: u32,
    iterations: u32,
    lanes: u32,
) -> PyResult<Bound<'py, PyBytes>> {
    let alg = self::algorithm(algorithm)?;
    let params = pqkit::kdf::argon2::Params::new(memory_cost, iterations, lanes).map_err(err)?;
    let pw: &[u8] = &passphrase;
    let file = encrypt_v1(py, &data, |w| pqkit::aead::stream::Encryptor::with_passphrase(alg, pw, params, w))?;
    Ok(PyBytes::new(py, &file))
}

/// Decrypts a whole version-1 file made with a passphrase (the Argon2id cost is read from the file, within
/// the library's limits).
#[pyfunction]
pub(crate) fn decrypt_with_passphrase<'py>(
    py: Python<'py>,
    passphrase: Buf<'_, '_>,
    data: Buf<'_, '_>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (pw, data): (&[u8], &[u8]) = (&passphrase, &data);
    decrypt_v1(py, || pqkit::aead::stream::Decryptor::with_passphrase(pw, data))
}

/// Streams everything read from `src` through the version-1 encryptor `make` builds over `dst`.
fn encrypt_v1_stream<'py>(
    src: Bound<'py, PyAny>,
    dst: Bound<'py, PyAny>,
    make: impl FnOnce(PyFile<'py>) -> pqkit::Result<pqkit::aead::stream::Encryptor<PyFile<'py>>>,
) -> PyResult<()> {
    let mut input = PyFile::new(src);
    let mut failed = None;
    let r = (|| -> std::io::Result<()> {
        let mut enc = make(PyFile::new(dst)).map_err(std::io::Error::from)?;
        let mut buf = Zeroizing::new(vec![0u8; CHUNK]);
        loop {
            let n = input.read(&mut buf)?;
            if n == 0 {
                break;
            }
            enc.write_all(&buf[..n])?;
        }
        let mut out = enc.finish()?;
        failed = out.failed.take();
        Ok(())
    })();
    if let Some(e) = input.failed.take() {
        return Err(e);
    }
    r.map_err(|e| io_err(e, &mut failed))
}

/// Streams the version-1 file read from `src` through the decryptor `make` builds, writing the plaintext to
/// `dst` segment by segment as each authenticates.
fn decrypt_v1_stream<'py>(
    src: Bound<'py, PyAny>,
    dst: Bound<'py, PyAny>,
    make: impl for<'a> FnOnce(&'a mut PyFile<'py>) -> std::io::Result<pqkit::aead::stream::Decryptor<&'a mut PyFile<'py>>>,
) -> PyResult<()> {
    let mut output = PyFile::new(dst);
    let mut src = PyFile::new(src);
    let r = (|| -> std::io::Result<()> {
        let mut dec = make(&mut src)?;
        let mut buf = Zeroizing::new(vec![0u8; CHUNK]);
        loop {
            let n = dec.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            output.write_all(&buf[..n])?;
        }
    })();
    if let Some(e) = output.failed.take() {
        return Err(e);
    }
    r.map_err(|e| io_err(e, &mut src.failed))
}

/// Encrypts everything read from the file-like `src` under a key file (its text or the 32 raw bytes), writing
/// the version-1 file (as `pqkit encrypt -k KEYFILE` writes) to the file-like `dst`.
#[pyfunction]
#[pyo3(signature = (key, src, dst, algorithm="XChaCha20Poly1305"))]
pub(crate) fn encrypt_file_with_key<'py>(
    key: &Bound<'py, PyAny>,
    src: Bound<'py, PyAny>,
    dst: Bound<'py, PyAny>,
    algorithm: &str,
) -> PyResult<()> {
    let (k, alg) = (file_key(key)?, self::algorithm(algorithm)?);
    encrypt_v1_stream(src, dst, |w| pqkit::aead::stream::Encryptor::with_key(alg, &k, w))
}

/// Decrypts the version-1 file read from `src` with a key file, writing the plaintext to `dst` as each segment
/// authenticates (discard `dst` when this raises).
#[pyfunction]
pub(crate) fn decrypt_file_with_key<'py>(
    key: &Bound<'py, PyAny>,
    src: Bound<'py, PyAny>,
    dst: Bound<'py, PyAny>,
) -> PyResult<()> {
    let k = file_key(key)?;
    decrypt_v1_stream(src, dst, |r| pqkit::aead::stream::Decryptor::with_key(&k, r))
}

/// Encrypts everything read from `src` under a passphrase stretched by Argon2id, writing the version-1 file
/// (as `pqkit encrypt --passphrase-file` writes) to `dst`.
#[pyfunction]
#[pyo3(signature = (passphrase, src, dst, algorithm="XChaCha20Poly1305", *, memory_cost=65536, iterations=3, lanes=4))]
pub(crate) fn encrypt_file_with_passphrase<'py>(
    passphrase: Buf<'_, '_>,
    src: Bound<'py, PyAny>,
    dst: Bound<'py, PyAny>,
    algorithm: &str,
    memory_cost: u32,
    iterations: u32,
    lanes: u32,
) -> PyResult<()> {
    let alg = self::algorithm(algorithm)?;
    let params = pqkit::kdf::argon2::Params::new(memory_cost, iterations, lanes).map_err(err)?;
    let pw: &[u8] = &passphrase;
    encrypt_v1_stream(src, dst, |w| pqkit::aead::stream::Encryptor::with_passphrase(alg, pw, params, w))
}

/// Decrypts the version-1 file read from `src` with a passphrase, writing the plaintext to `dst` as each
/// segment authenticates (discard `dst` when this raises).
#[pyfunction]
pub(crate) fn decrypt_file_with_passphrase<'py>(
    passphrase: Buf<'_, '_>,
    src: Bound<'py, PyAny>,
    dst: Bound<'py, PyAny>,
) -> PyResult<()> {
    let pw: &[u8] = &passphrase;
    decrypt_v1_stream(src, dst, |r| pqkit::aead::stream::Decryptor::with_passphrase(pw, r))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate_key_file, m)?)?;
    m.add_function(wrap_pyfunction!(encrypt_with_key, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_with_key, m)?)?;
    m.add_function(wrap_pyfunction!(encrypt_with_passphrase, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_with_passphrase, m)?)?;
    m.add_class::<Identity>()?;
    m.add_class::<Recipient>()?;
    m.add_function(wrap_pyfunction!(encrypt_to_recipients, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_with_identities, m)?)?;
    m.add_function(wrap_pyfunction!(encrypt_file, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_file, m)?)?;
    m.add_function(wrap_pyfunction!(encrypt_file_with_key, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_file_with_key, m)?)?;
    m.add_function(wrap_pyfunction!(encrypt_file_with_passphrase, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_file_with_passphrase, m)?)?;
    Ok(())
}
