//! hashlib-shaped keyed, salted and personalised BLAKE2, incremental SHAKE, and Argon2id (pyca's parameter
//! names).

use crate::{Buf, GIL_RELEASE_MIN, err, maybe_detach};
use pqkit::hash::blake2::{Blake2b, Blake2s};
use pqkit::hash::sha3::{Shake128, Shake256};
use pqkit::kdf::argon2::{Argon2id, Params};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Mutex, PoisonError};
use zeroize::Zeroizing;

macro_rules! blake2_fn {
    ($fname:ident, $ty:ident, $default:expr, $doc:literal) => {
        #[doc = $doc]
        #[pyfunction]
        #[pyo3(signature = (data, *, digest_size=$default, key=None, salt=None, person=None))]
        pub(crate) fn $fname<'py>(
            py: Python<'py>,
            data: Buf<'_, '_>,
            digest_size: usize,
            key: Option<Buf<'_, '_>>,
            salt: Option<Buf<'_, '_>>,
            person: Option<Buf<'_, '_>>,
        ) -> PyResult<Bound<'py, PyBytes>> {
            let (key, salt, person) = (
                key.as_deref().unwrap_or_default(),
                salt.as_deref().unwrap_or_default(),
                person.as_deref().unwrap_or_default(),
            );
            let mut h = $ty::with_params(key, salt, person, digest_size).map_err(err)?;
            let data: &[u8] = &data;
            let mut out = Zeroizing::new(vec![0u8; digest_size]);
            maybe_detach(py, data.len(), || {
                h.update(data);
                h.finalize_into(&mut out)
            })
            .map_err(err)?;
            Ok(PyBytes::new(py, &out))
        }
    };
}

blake2_fn!(
    blake2b,
    Blake2b,
    64,
    "BLAKE2b (RFC 7693) of `data` as hashlib.blake2b: digest_size 1..=64, key up to 64 bytes (a MAC), salt and \
     person up to 16 bytes each."
);
blake2_fn!(
    blake2s,
    Blake2s,
    32,
    "BLAKE2s of `data` as hashlib.blake2s: digest_size 1..=32, key up to 32 bytes, salt and person up to 8 bytes \
     each."
);

#[derive(Clone)]
enum ShakeState {
    S128(Shake128),
    S256(Shake256),
}

/// Incremental SHAKE128 / SHAKE256 with hashlib's shape: `Shake("shake128")`, `update(data)`,
/// `digest(length)`, `hexdigest(length)`, `copy()`. Safe to share between threads (updates are serialised).
#[pyclass(module = "pqkit", name = "Shake", frozen)]
pub(crate) struct Shake {
    s: Mutex<ShakeState>,
    name: &'static str,
}
fits_python_alignment!(Shake);

impl Shake {
    fn state(&self, py: Python<'_>) -> ShakeState {
        py.detach(|| self.s.lock().unwrap_or_else(PoisonError::into_inner).clone())
    }
}

#[pymethods]
impl Shake {
    #[new]
    #[pyo3(signature = (algorithm, data=None))]
    fn new(py: Python<'_>, algorithm: &str, data: Option<Buf<'_, '_>>) -> PyResult<Self> {
        let (s, name) = match crate::hash_key(algorithm).as_str() {
            "shake128" => (ShakeState::S128(Shake128::new()), "shake_128"),
            "shake256" => (ShakeState::S256(Shake256::new()), "shake_256"),
            _ => return Err(crate::unknown("XOF", algorithm, "shake128, shake256")),
        };
        let me = Self { s: Mutex::new(s), name };
        if let Some(d) = data {
            me.update(py, d);
        }
        Ok(me)
    }

    /// Absorbs `data`.
    fn update(&self, py: Python<'_>, data: Buf<'_, '_>) {
        let data: &[u8] = &data;
        let run = || match &mut *self.s.lock().unwrap_or_else(PoisonError::into_inner) {
            ShakeState::S128(s) => {
                s.update(data);
            }
            ShakeState::S256(s) => {
                s.update(data);
            }
        };
        if data.len() >= GIL_RELEASE_MIN { py.detach(run) } else { run() }
    }

    /// `length` bytes of output for everything absorbed so far (the state is kept).
    fn digest<'py>(&self, py: Python<'py>, length: usize) -> Bound<'py, PyBytes> {
        let st = self.state(py);
        let mut out = vec![0u8; length];
        maybe_detach(py, length, || match st {
            ShakeState::S128(s) => s.finalize_into(&mut out),
            ShakeState::S256(s) => s.finalize_into(&mut out),
        });
        PyBytes::new(py, &out)
    }

    fn hexdigest(&self, py: Python<'_>, length: usize) -> String {
        self.digest(py, length).as_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn copy(&self, py: Python<'_>) -> Self {
        Self { s: Mutex::new(self.state(py)), name: self.name }
    }

    /// hashlib's name: "shake_128" or "shake_256".
    #[getter]
    fn name(&self) -> &'static str {
        self.name
    }
}

/// Argon2id (RFC 9106) with pyca's parameter names: `length` bytes from `key_material` and `salt` (at least 8
/// bytes), `iterations` passes over `memory_cost` KiB in `lanes` lanes; optional `secret` and `ad`. Runs with the
/// GIL released.
#[pyfunction]
#[pyo3(signature = (key_material, *, salt, length=32, iterations=3, lanes=4, memory_cost=65536, ad=None, secret=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn argon2id<'py>(
    py: Python<'py>,
    key_material: Buf<'_, '_>,
    salt: Buf<'_, '_>,
    length: usize,
    iterations: u32,
    lanes: u32,
    memory_cost: u32,
    ad: Option<Buf<'_, '_>>,
    secret: Option<Buf<'_, '_>>,
) -> PyResult<Bound<'py, PyBytes>> {
    if length < 4 {
        return Err(PyValueError::new_err(format!("Argon2id: length must be at least 4, got {length}")));
    }
    let params = Params::new(memory_cost, iterations, lanes).map_err(err)?;
    let (pw, salt): (&[u8], &[u8]) = (&key_material, &salt);
    let (ad, secret) = (ad.as_deref().unwrap_or_default(), secret.as_deref().unwrap_or_default());
    let mut out = Zeroizing::new(vec![0u8; length]);
    py.detach(|| Argon2id::new(params).hash_with(pw, salt, secret, ad, &mut out)).map_err(err)?;
    Ok(PyBytes::new(py, &out))
}

/// Skein-512 (Skein 1.3) of `data`, `digest_size` bytes (64 by default).
#[pyfunction]
#[pyo3(signature = (data, digest_size=64))]
pub(crate) fn skein512<'py>(py: Python<'py>, data: Buf<'_, '_>, digest_size: usize) -> PyResult<Bound<'py, PyBytes>> {
    let data: &[u8] = &data;
    let out = maybe_detach(py, data.len(), || pqkit::hash::skein::skein512(digest_size, data)).map_err(err)?;
    Ok(PyBytes::new(py, &out))
}

fn stream_xor<'py, C: pqkit::cipher::StreamCipher + Send>(
    py: Python<'py>,
    mut c: C,
    data: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    crate::bytes_from_prefix(py, data.len(), data, |out: &mut [u8]| c.apply_keystream(out))
}

/// Kusumi512 (64-byte key, 12-byte nonce): `data` XOR the keystream from block `counter`. Encrypts and
/// decrypts; unauthenticated: use `Kusumi512Poly1305` unless a MAC is added.
#[pyfunction]
#[pyo3(signature = (key, nonce, data, counter=0))]
pub(crate) fn kusumi512_xor<'py>(
    py: Python<'py>,
    key: Buf<'_, '_>,
    nonce: Buf<'_, '_>,
    data: Buf<'_, '_>,
    counter: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let c = pqkit::kusumi::Kusumi512::new_with_counter(&key, &nonce, counter).map_err(err)?;
    stream_xor(py, c, &data)
}

/// Threefish-512 in counter mode (64-byte key, 16-byte nonce): `data` XOR the keystream from block `counter`.
/// Unauthenticated.
#[pyfunction]
#[pyo3(signature = (key, nonce, data, counter=0))]
pub(crate) fn threefish512_ctr_xor<'py>(
    py: Python<'py>,
    key: Buf<'_, '_>,
    nonce: Buf<'_, '_>,
    data: Buf<'_, '_>,
    counter: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let c = pqkit::threefish::Threefish512Ctr::new_with_counter(&key, &nonce, counter).map_err(err)?;
    stream_xor(py, c, &data)
}

fn threefish_block<'py>(
    py: Python<'py>,
    key: &[u8],
    tweak: &[u8],
    block: &[u8],
    enc: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    use pqkit::threefish::{BLOCK_LEN, KEY_LEN, TWEAK_LEN, Threefish512};
    pqkit::Error::check_length("Threefish-512", "key", KEY_LEN, key.len()).map_err(err)?;
    pqkit::Error::check_length("Threefish-512", "tweak", TWEAK_LEN, tweak.len()).map_err(err)?;
    pqkit::Error::check_length("Threefish-512", "block", BLOCK_LEN, block.len()).map_err(err)?;
    let mut k = Zeroizing::new([0u8; KEY_LEN]);
    k.copy_from_slice(key);
    let mut t = [0u8; TWEAK_LEN];
    t.copy_from_slice(tweak);
    let mut b = Zeroizing::new([0u8; BLOCK_LEN]);
    b.copy_from_slice(block);
    let c = Threefish512::new(&k, &t);
    if enc {
        c.encrypt_block(&mut b)
    } else {
        c.decrypt_block(&mut b)
    }
    Ok(PyBytes::new(py, &b[..]))
}

/// Threefish-512 block encryption: 64-byte key, 16-byte tweak, 64-byte block.
#[pyfunction]
pub(crate) fn threefish512_encrypt_block<'py>(
    py: Python<'py>,
    key: Buf<'_, '_>,
    tweak: Buf<'_, '_>,
    block: Buf<'_, '_>,
) -> PyResult<Bound<'py, PyBytes>> {
    threefish_block(py, &key, &tweak, &block, true)
}

/// Threefish-512 block decryption.
#[pyfunction]
pub(crate) fn threefish512_decrypt_block<'py>(
    py: Python<'py>,
    key: Buf<'_, '_>,
    tweak: Buf<'_, '_>,
    block: Buf<'_, '_>,
) -> PyResult<Bound<'py, PyBytes>> {
    threefish_block(py, &key, &tweak, &block, false)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(skein512, m)?)?;
    m.add_function(wrap_pyfunction!(kusumi512_xor, m)?)?;
    m.add_function(wrap_pyfunction!(threefish512_ctr_xor, m)?)?;
    m.add_function(wrap_pyfunction!(threefish512_encrypt_block, m)?)?;
    m.add_function(wrap_pyfunction!(threefish512_decrypt_block, m)?)?;
    m.add_function(wrap_pyfunction!(blake2b, m)?)?;
    m.add_function(wrap_pyfunction!(blake2s, m)?)?;
    m.add_function(wrap_pyfunction!(argon2id, m)?)?;
    m.add_class::<Shake>()?;
    Ok(())
}
