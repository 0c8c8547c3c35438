//! The `pqkit._pqkit` extension module: Python bindings of the pqkit library (re-exported by `pqkit`).
//!
//! Security contract, for every function and class:
//! - Inputs and outputs are `bytes`. Keys are copied into Rust objects that wipe them when garbage-collected;
//!   the caller's own `bytes` objects cannot be wiped (Python strings are immutable), so keep their lifetime
//!   short.
//! - Errors are exceptions named after the pqkit error (`InvalidLength`, `AuthenticationFailed`, ...), all
//!   subclasses of `PqkitError`; messages name the algorithm, the field and the expected size, never secrets.
//! - A failed decryption or verification releases nothing.
//! - The GIL is released while bulk work runs (messages of at least `GIL_RELEASE_MIN` bytes, and all
//!   public-key operations), so other Python threads run meanwhile.

use pqkit::aead::{Aead, Aes128Gcm, Aes256Gcm, ChaCha20Poly1305, Kusumi512Poly1305, TAG_LEN, XChaCha20Poly1305};
use pqkit::hash::Hasher;
use pqkit::hash::blake2::{Blake2b512, Blake2s256};
use pqkit::hash::sha2::{Sha224, Sha256, Sha384, Sha512, Sha512_224, Sha512_256};
use pqkit::hash::sha3::{Sha3_224, Sha3_256, Sha3_384, Sha3_512, Shake128, Shake256};
use pqkit::kdf::Hkdf;
use pqkit::mac::Hmac;
use pqkit::{mldsa, mlkem};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};
use std::sync::{Mutex, PoisonError, TryLockError};
use zeroize::{Zeroize, Zeroizing};

/// Fails the build for a class whose Rust value needs more than 16-byte alignment. Python's allocator aligns an
/// object to 16 bytes and PyO3 stores the class's value inside it, so a value that needs more (pqkit's key
/// schedules, vector states and ML-KEM keys are 64-byte aligned) would sit misaligned: undefined behaviour, which
/// a build with debug assertions stops as a "misaligned pointer dereference". Such fields are boxed.
macro_rules! fits_python_alignment {
    ($($class:ty),+ $(,)?) => {
        $(
            const _: () = assert!(
                core::mem::align_of::<$class>() <= 16,
                concat!(stringify!($class), " needs more alignment than Python gives an object: box the field")
            );
        )+
    };
}

mod bus;
mod bus_errors;
mod files;
mod hpke;
mod keys;
mod more;
mod runtime;

/// Messages at least this long are processed with the GIL released; shorter ones are not worth the switch.
const GIL_RELEASE_MIN: usize = 4096;

/// An input argument: any object with the buffer protocol (`bytes`, `bytearray`, `memoryview`, `array`, ...),
/// as pyca/cryptography accepts.
///
/// `bytes` (immutable) is read in place. Anything else is copied first: the stable ABI this module is built
/// against (CPython 3.9+) has no `PyObject_GetBuffer`, and a copy is also what makes it safe to read a
/// `bytearray` with the GIL released while another thread could resize it. A `bytearray` is copied into
/// memory that is wiped when the call returns; other buffers go through a temporary `bytes` object (one copy,
/// not wiped: Python owns that allocation).
enum Buf<'a, 'py> {
    Borrowed(&'a [u8]),
    Wiped(Zeroizing<Vec<u8>>),
    Copied(Bound<'py, PyBytes>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Buf<'a, 'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(b) = <&'a [u8]>::extract(obj) {
            return Ok(Buf::Borrowed(b));
        }
        if let Ok(ba) = obj.cast::<PyByteArray>() {
            return Ok(Buf::Wiped(Zeroizing::new(ba.to_vec())));
        }
        // Only objects with the buffer protocol: memoryview() refuses ints, strings and iterables, which
        // bytes() would accept.
        let view = PyMemoryView::from(&obj.to_owned())?;
        // SAFETY: the GIL is held; PyBytes_FromObject (stable ABI) returns a new reference or NULL with an
        // exception set.
        let raw = unsafe { pyo3::ffi::PyBytes_FromObject(view.as_ptr()) };
        // SAFETY: raw is an owned reference or NULL with an exception set.
        let copy = unsafe { Bound::from_owned_ptr_or_err(obj.py(), raw) }?;
        Ok(Buf::Copied(copy.cast_into::<PyBytes>()?))
    }
}

impl core::ops::Deref for Buf<'_, '_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Buf::Borrowed(b) => b,
            Buf::Wiped(v) => v,
            Buf::Copied(b) => b.as_bytes(),
        }
    }
}

/// `Option<Buf>` as an `Option<&[u8]>`.
fn opt<'s>(b: &'s Option<Buf<'_, '_>>) -> Option<&'s [u8]> {
    b.as_deref()
}

create_exception!(_pqkit, PqkitError, PyException, "Base class of every pqkit error.");
create_exception!(_pqkit, InvalidLength, PqkitError, "An input or output had the wrong length.");
create_exception!(
    _pqkit,
    AuthenticationFailed,
    PqkitError,
    "A tag or signature did not verify (wrong key, nonce or associated data, or modified data). Nothing was released."
);
create_exception!(_pqkit, CounterExhausted, PqkitError, "A counter would pass its maximum.");
create_exception!(_pqkit, MessageTooLong, PqkitError, "A message is longer than the algorithm allows.");
create_exception!(_pqkit, InvalidEncoding, PqkitError, "A key, ciphertext or signature encoding is malformed.");
create_exception!(_pqkit, InvalidParameter, PqkitError, "A parameter is out of range.");
create_exception!(_pqkit, RngFailure, PqkitError, "The operating system's random number generator failed.");
create_exception!(_pqkit, UnknownAlgorithm, PqkitError, "An algorithm name is not one pqkit knows.");

/// Maps a pqkit error to the exception of the same name.
fn err(e: pqkit::Error) -> PyErr {
    use pqkit::Error as E;
    let msg = e.to_string();
    match e {
        E::InvalidLength { .. } => InvalidLength::new_err(msg),
        E::AuthenticationFailed { .. } => AuthenticationFailed::new_err(msg),
        E::CounterExhausted { .. } => CounterExhausted::new_err(msg),
        E::MessageTooLong { .. } => MessageTooLong::new_err(msg),
        E::InvalidEncoding { .. } => InvalidEncoding::new_err(msg),
        E::Rng => RngFailure::new_err(msg),
        _ => InvalidParameter::new_err(msg),
    }
}

fn unknown(kind: &str, name: &str, known: &str) -> PyErr {
    UnknownAlgorithm::new_err(format!("unknown {kind} {name:?}; expected one of: {known}"))
}

/// Runs `f` with the GIL released if `len` is large enough to be worth it.
fn maybe_detach<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> T + Send) -> T {
    if len >= GIL_RELEASE_MIN { py.detach(f) } else { f() }
}

// ---------------------------------------------------------------------------------------------------------
// AEADs

#[allow(clippy::large_enum_variant)]
enum Keyed {
    C(ChaCha20Poly1305),
    X(XChaCha20Poly1305),
    G128(Aes128Gcm),
    G256(Aes256Gcm),
    K(Kusumi512Poly1305),
}

impl Keyed {
    /// True where the library seals and opens out of place in one pass (AES-GCM). The binding then hands it the
    /// input and a fresh output; for the others (whose out-of-place form is the trait's copy-then-in-place
    /// default) it copies the input into the new object itself and works in place, which saves zeroing it.
    fn one_pass(&self) -> bool {
        matches!(self, Keyed::G128(_) | Keyed::G256(_))
    }

    /// Seals `input` into `out` (`out` holds a copy of `input` already when `!one_pass()`). On error `out` is
    /// zeroed.
    fn seal(&self, nonce: &[u8], aad: &[u8], input: &[u8], out: &mut [u8]) -> pqkit::Result<[u8; TAG_LEN]> {
        let r = match self {
            Keyed::C(a) => a.seal_in_place_detached(nonce, aad, out),
            Keyed::X(a) => a.seal_in_place_detached(nonce, aad, out),
            Keyed::G128(a) => a.seal_detached_into(nonce, aad, input, out),
            Keyed::G256(a) => a.seal_detached_into(nonce, aad, input, out),
            Keyed::K(a) => a.seal_in_place_detached(nonce, aad, out),
        };
        if r.is_err() {
            out.zeroize();
        }
        r
    }

    /// Opens `input` into `out` (`out` holds a copy of `input` already when `!one_pass()`). On a bad tag (or any
    /// error) `out` is zeroed before this returns.
    fn open(&self, nonce: &[u8], aad: &[u8], input: &[u8], tag: &[u8], out: &mut [u8]) -> pqkit::Result<()> {
        let r = match self {
            Keyed::C(a) => a.open_in_place_detached(nonce, aad, out, tag),
            Keyed::X(a) => a.open_in_place_detached(nonce, aad, out, tag),
            Keyed::G128(a) => a.open_detached_into(nonce, aad, input, tag, out),
            Keyed::G256(a) => a.open_detached_into(nonce, aad, input, tag, out),
            Keyed::K(a) => a.open_in_place_detached(nonce, aad, out, tag),
        };
        if r.is_err() {
            out.zeroize();
        }
        r
    }

    fn name(&self) -> &'static str {
        match self {
            Keyed::C(_) => ChaCha20Poly1305::NAME,
            Keyed::X(_) => XChaCha20Poly1305::NAME,
            Keyed::G128(_) => Aes128Gcm::NAME,
            Keyed::G256(_) => Aes256Gcm::NAME,
            Keyed::K(_) => Kusumi512Poly1305::NAME,
        }
    }
}

/// A raw pointer to the buffer of a `bytes` object that no Python code can see yet, carried across
/// `Python::detach`.
struct Fresh(*mut u8);
// SAFETY: the object it points into is referenced only by the thread that made it, which waits for the
// detached closure to finish; no other thread reads or writes the buffer meanwhile.
unsafe impl Send for Fresh {}

/// A new `bytes` of `len` bytes whose first `prefix.len()` bytes are a copy of `prefix` and whose rest is
/// zeroed, then filled by `fill` (called with the whole buffer, prefix included). The zeroing is needed because a
/// `&mut [u8]` must not cover uninitialised memory. AES-GCM passes no prefix (the library writes the output out
/// of place), so for it this is one `memset` of the new object instead of a copy of the input; the other AEADs
/// pass the input as the prefix and work in place (no zeroing beyond the 16-byte tag).
///
/// Only the allocation holds the GIL: for outputs of at least `GIL_RELEASE_MIN` bytes, the copy, the zeroing
/// (where a fresh large allocation is first touched, page by page) and `fill` run with it released.
///
/// If `fill` fails, the object is dropped unseen (its bytes never reach Python), after `fill` wiped what it
/// must.
fn bytes_from_prefix<'py>(
    py: Python<'py>,
    len: usize,
    prefix: &[u8],
    fill: impl FnOnce(&mut [u8]) -> pqkit::Result<()> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    if prefix.len() > len {
        return Err(InvalidParameter::new_err("output shorter than its prefix"));
    }
    let ssize = isize::try_from(len).map_err(|_| MessageTooLong::new_err("message too long"))?;
    // SAFETY: PyBytes_FromStringAndSize(NULL, n) is the documented way to make an uninitialised bytes object
    // of n bytes (part of the stable ABI); the GIL is held (we have `py`).
    let raw = unsafe { pyo3::ffi::PyBytes_FromStringAndSize(core::ptr::null(), ssize) };
    // SAFETY: raw is a new (owned) reference, or NULL with a Python exception set.
    let obj = unsafe { Bound::from_owned_ptr_or_err(py, raw) }?;
    // SAFETY: obj is a bytes object of len bytes; PyBytes_AsString returns its buffer (len + 1 bytes with the
    // trailing NUL), which nothing else references yet, so writing it before it is handed out is allowed.
    let buf = unsafe { pyo3::ffi::PyBytes_AsString(obj.as_ptr()) }.cast::<u8>();
    if buf.is_null() {
        return Err(PyErr::fetch(py));
    }
    let fresh = Fresh(buf);
    let work = move || {
        let buf = fresh;
        // SAFETY: buf.0 is valid for len >= prefix.len() bytes and does not overlap prefix (a fresh allocation).
        unsafe { core::ptr::copy_nonoverlapping(prefix.as_ptr(), buf.0, prefix.len()) };
        // SAFETY: the bytes after the prefix are initialised here (zeroed), so the slice below covers
        // initialised memory.
        unsafe { core::ptr::write_bytes(buf.0.add(prefix.len()), 0, len - prefix.len()) };
        // SAFETY: buf.0 holds len initialised bytes, exclusively ours until obj is returned.
        let slice = unsafe { core::slice::from_raw_parts_mut(buf.0, len) };
        fill(slice)
    };
    maybe_detach(py, len, work).map_err(err)?;
    // SAFETY: obj is a bytes object (made above).
    Ok(unsafe { obj.cast_into_unchecked::<PyBytes>() })
}

/// Seals into a new `bytes` of `len(data) + 16`, GIL released for large messages.
fn aead_encrypt<'py>(
    py: Python<'py>,
    k: &Keyed,
    nonce: &[u8],
    data: &[u8],
    aad: Option<&[u8]>,
) -> PyResult<Bound<'py, PyBytes>> {
    let aad = aad.unwrap_or_default();
    let n = data.len();
    let total = n.checked_add(TAG_LEN).ok_or_else(|| MessageTooLong::new_err("message too long"))?;
    // AES-GCM: the library reads `data` and writes the new bytes object directly (one pass). The others: the
    // input is copied into the object and sealed there.
    let prefix = if k.one_pass() { &[][..] } else { data };
    bytes_from_prefix(py, total, prefix, |out: &mut [u8]| {
        let (body, tag_out) = out.split_at_mut(n);
        // On an error `body` is zeroed.
        let tag = k.seal(nonce, aad, data, body)?;
        tag_out.copy_from_slice(&tag);
        Ok(())
    })
}

/// Opens into a new `bytes`; on failure the buffer is wiped and never handed to Python.
fn aead_decrypt<'py>(
    py: Python<'py>,
    k: &Keyed,
    nonce: &[u8],
    data: &[u8],
    aad: Option<&[u8]>,
) -> PyResult<Bound<'py, PyBytes>> {
    let aad = aad.unwrap_or_default();
    if data.len() < TAG_LEN {
        return Err(err(pqkit::Error::InvalidLength {
            algorithm: k.name(),
            field: "sealed message",
            expected: pqkit::error::Expected::AtLeast(TAG_LEN),
            actual: data.len(),
        }));
    }
    let (ct, tag) = data.split_at(data.len() - TAG_LEN);
    let prefix = if k.one_pass() { &[][..] } else { ct };
    // On a bad tag `out` is zeroed before `open` returns, and the object is dropped unseen.
    bytes_from_prefix(py, ct.len(), prefix, |out: &mut [u8]| k.open(nonce, aad, ct, tag, out))
}

macro_rules! aead_class {
    ($py_name:ident, $rust:ident, $variant:ident, $label:literal, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(module = "pqkit", name = $label, frozen)]
        struct $py_name {
            // Boxed: the key schedules are over-aligned (64 bytes for the vector backends) and Python's
            // allocator, which holds the pyclass itself, only guarantees 16; a Box honours the alignment.
            inner: Box<Keyed>,
        }
        fits_python_alignment!($py_name);

        #[pymethods]
        impl $py_name {
            /// Key length in bytes.
            #[classattr]
            const KEY_SIZE: usize = $rust::KEY_LEN;
            /// Nonce length in bytes.
            #[classattr]
            const NONCE_SIZE: usize = $rust::NONCE_LEN;
            /// Tag length in bytes.
            #[classattr]
            const TAG_SIZE: usize = TAG_LEN;

            #[new]
            fn new(key: Buf<'_, '_>) -> PyResult<Self> {
                Ok(Self { inner: Box::new(Keyed::$variant($rust::new(&key).map_err(err)?)) })
            }

            /// Returns `ciphertext || tag`. A (key, nonce) pair must never encrypt two different messages.
            #[pyo3(signature = (nonce, data, associated_data=None))]
            fn encrypt<'py>(
                &self,
                py: Python<'py>,
                nonce: Buf<'_, '_>,
                data: Buf<'_, '_>,
                associated_data: Option<Buf<'_, '_>>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                aead_encrypt(py, &self.inner, &nonce, &data, opt(&associated_data))
            }

            /// Verifies and decrypts `ciphertext || tag`; raises `AuthenticationFailed` and releases nothing if
            /// the tag does not verify.
            #[pyo3(signature = (nonce, data, associated_data=None))]
            fn decrypt<'py>(
                &self,
                py: Python<'py>,
                nonce: Buf<'_, '_>,
                data: Buf<'_, '_>,
                associated_data: Option<Buf<'_, '_>>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                aead_decrypt(py, &self.inner, &nonce, &data, opt(&associated_data))
            }

            fn __repr__(&self) -> &'static str {
                concat!("<pqkit.", $label, " (key hidden)>")
            }
        }
    };
}

aead_class!(
    ChaCha20Poly1305Py,
    ChaCha20Poly1305,
    C,
    "ChaCha20Poly1305",
    "ChaCha20-Poly1305 (RFC 8439): 32-byte key, 12-byte nonce."
);
aead_class!(
    XChaCha20Poly1305Py,
    XChaCha20Poly1305,
    X,
    "XChaCha20Poly1305",
    "XChaCha20-Poly1305: 32-byte key, 24-byte nonce (safe to draw at random)."
);
aead_class!(Aes128GcmPy, Aes128Gcm, G128, "Aes128Gcm", "AES-128-GCM (SP 800-38D): 16-byte key, 12-byte nonce.");
aead_class!(Aes256GcmPy, Aes256Gcm, G256, "Aes256Gcm", "AES-256-GCM (SP 800-38D): 32-byte key, 12-byte nonce.");
aead_class!(Kusumi512Poly1305Py, Kusumi512Poly1305, K, "Kusumi512Poly1305", "Kusumi512-Poly1305: 64-byte key.");

// ---------------------------------------------------------------------------------------------------------
// Hashes

const HASH_NAMES: &str = "sha224, sha256, sha384, sha512, sha512_224, sha512_256, sha3_224, sha3_256, sha3_384, \
     sha3_512, blake2b, blake2s (or the standard spellings that `Hash.name` returns: SHA-256, SHA-512/256, \
     SHA3-256, BLAKE2b-512, ...)";

/// A hash name folded for matching: lowercase, without `-`, `_` and `/`, so hashlib's names ("sha512_256",
/// "sha3_256") and the standard ones that `Hash.name` returns ("SHA-512/256", "SHA3-256") meet.
fn hash_key(name: &str) -> String {
    name.chars().filter(|c| !matches!(c, '-' | '_' | '/')).map(|c| c.to_ascii_lowercase()).collect()
}

/// Calls `$f::<H>($args)` for the hash named `$name` (hashlib's names or the standard spellings).
macro_rules! with_hash {
    ($name:expr, $f:ident ( $($arg:expr),* )) => {
        match hash_key($name).as_str() {
            "sha224" => $f::<Sha224>($($arg),*),
            "sha256" => $f::<Sha256>($($arg),*),
            "sha384" => $f::<Sha384>($($arg),*),
            "sha512" => $f::<Sha512>($($arg),*),
            "sha512224" => $f::<Sha512_224>($($arg),*),
            "sha512256" => $f::<Sha512_256>($($arg),*),
            "sha3224" => $f::<Sha3_224>($($arg),*),
            "sha3256" => $f::<Sha3_256>($($arg),*),
            "sha3384" => $f::<Sha3_384>($($arg),*),
            "sha3512" => $f::<Sha3_512>($($arg),*),
            "blake2b" | "blake2b512" => $f::<Blake2b512>($($arg),*),
            "blake2s" | "blake2s256" => $f::<Blake2s256>($($arg),*),
            _ => Err(unknown("hash", $name, HASH_NAMES)),
        }
    };
}

fn digest_of<'py, H: Hasher>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, H::OUTPUT_LEN, |out: &mut [u8]| {
        maybe_detach(py, data.len(), || out.copy_from_slice(H::digest(data).as_ref()));
        Ok(())
    })
}

/// One-shot digest of `data` with the hash `algorithm` (hashlib's names: "sha256", "sha3_256", "blake2b", ...).
#[pyfunction]
fn digest<'py>(py: Python<'py>, algorithm: &str, data: Buf<'_, '_>) -> PyResult<Bound<'py, PyBytes>> {
    with_hash!(algorithm, digest_of(py, &data))
}

trait DynHash: Send + Sync {
    fn update(&mut self, data: &[u8]);
    fn finalize(&self) -> Vec<u8>;
    fn size(&self) -> usize;
    fn block_size(&self) -> usize;
    fn name(&self) -> &'static str;
    fn boxed_clone(&self) -> Box<dyn DynHash>;
}

struct Wiped<H: Hasher>(H);

impl<H: Hasher> Drop for Wiped<H> {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl<H: Hasher + Send + Sync + 'static> DynHash for Wiped<H> {
    fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    fn finalize(&self) -> Vec<u8> {
        self.0.clone().finalize().as_ref().to_vec()
    }
    fn size(&self) -> usize {
        H::OUTPUT_LEN
    }
    fn block_size(&self) -> usize {
        H::BLOCK_LEN
    }
    fn name(&self) -> &'static str {
        H::NAME
    }
    fn boxed_clone(&self) -> Box<dyn DynHash> {
        Box::new(Wiped(self.0.clone()))
    }
}

fn new_hash<H: Hasher + Send + Sync + 'static>() -> PyResult<Box<dyn DynHash>> {
    Ok(Box::new(Wiped(H::new())))
}

/// An incremental hash with hashlib's shape: `Hash("sha256")`, `update(data)`, `digest()`, `hexdigest()`,
/// `copy()`.
///
/// One object may be shared between threads: its state sits behind a mutex, so concurrent updates are
/// serialised (as hashlib does) instead of failing. A thread waiting for the lock does so with the GIL
/// released.
#[pyclass(module = "pqkit", name = "Hash", frozen)]
struct HashPy {
    inner: Mutex<Box<dyn DynHash>>,
}
fits_python_alignment!(HashPy);

impl HashPy {
    /// Runs `f` on the state under the lock. Small jobs that find the lock free run with the GIL held; large
    /// ones, and any that must wait for another thread, run with it released.
    fn with<T: Send>(&self, py: Python<'_>, len: usize, f: impl FnOnce(&mut dyn DynHash) -> T + Send) -> T {
        let lock = || self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if len < GIL_RELEASE_MIN {
            match self.inner.try_lock() {
                Ok(mut g) => return f(g.as_mut()),
                Err(TryLockError::Poisoned(p)) => return f(p.into_inner().as_mut()),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        py.detach(|| f(lock().as_mut()))
    }
}

#[pymethods]
impl HashPy {
    #[new]
    #[pyo3(signature = (algorithm, data=None))]
    fn new(py: Python<'_>, algorithm: &str, data: Option<Buf<'_, '_>>) -> PyResult<Self> {
        let h = Self { inner: Mutex::new(with_hash!(algorithm, new_hash())?) };
        if let Some(d) = data {
            h.update(py, d);
        }
        Ok(h)
    }

    /// Absorbs `data`.
    fn update(&self, py: Python<'_>, data: Buf<'_, '_>) {
        let data: &[u8] = &data;
        self.with(py, data.len(), |h| h.update(data));
    }

    /// The digest of everything absorbed so far (the state is kept; more updates may follow).
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.with(py, 0, |h| h.finalize()))
    }

    /// The digest as lowercase hex.
    fn hexdigest(&self, py: Python<'_>) -> String {
        self.with(py, 0, |h| h.finalize()).iter().map(|b| format!("{b:02x}")).collect()
    }

    /// An independent copy of the current state.
    fn copy(&self, py: Python<'_>) -> Self {
        Self { inner: Mutex::new(self.with(py, 0, |h| h.boxed_clone())) }
    }

    /// Digest length in bytes.
    #[getter]
    fn digest_size(&self, py: Python<'_>) -> usize {
        self.with(py, 0, |h| h.size())
    }

    /// Input block length in bytes.
    #[getter]
    fn block_size(&self, py: Python<'_>) -> usize {
        self.with(py, 0, |h| h.block_size())
    }

    /// The algorithm's name, e.g. "SHA-256" (accepted by `Hash()` as well).
    #[getter]
    fn name(&self, py: Python<'_>) -> &'static str {
        self.with(py, 0, |h| h.name())
    }
}

/// SHAKE128 of `data`, `length` bytes.
#[pyfunction]
fn shake128<'py>(py: Python<'py>, data: Buf<'_, '_>, length: usize) -> PyResult<Bound<'py, PyBytes>> {
    let data: &[u8] = &data;
    if data.len() >= GIL_RELEASE_MIN && length < GIL_RELEASE_MIN {
        let mut out = Zeroizing::new(vec![0u8; length]);
        py.detach(|| Shake128::digest_into(data, &mut out));
        return Ok(PyBytes::new(py, &out));
    }
    bytes_from_prefix(py, length, &[], |out: &mut [u8]| {
        Shake128::digest_into(data, out);
        Ok(())
    })
}

/// SHAKE256 of `data`, `length` bytes.
#[pyfunction]
fn shake256<'py>(py: Python<'py>, data: Buf<'_, '_>, length: usize) -> PyResult<Bound<'py, PyBytes>> {
    let data: &[u8] = &data;
    if data.len() >= GIL_RELEASE_MIN && length < GIL_RELEASE_MIN {
        let mut out = Zeroizing::new(vec![0u8; length]);
        py.detach(|| Shake256::digest_into(data, &mut out));
        return Ok(PyBytes::new(py, &out));
    }
    bytes_from_prefix(py, length, &[], |out: &mut [u8]| {
        Shake256::digest_into(data, out);
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------------------
// HMAC and HKDF

fn hmac_of<'py, H: Hasher>(py: Python<'py>, key: &[u8], msg: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, H::OUTPUT_LEN, |out: &mut [u8]| {
        maybe_detach(py, msg.len(), || {
            let mut t = Hmac::<H>::new(key).mac(msg);
            out.copy_from_slice(t.as_ref());
            t.as_mut().zeroize();
        });
        Ok(())
    })
}

fn hmac_check<H: Hasher>(py: Python<'_>, key: &[u8], msg: &[u8], tag: &[u8]) -> PyResult<()> {
    pqkit::Error::check_length("HMAC", "tag", H::OUTPUT_LEN, tag.len()).map_err(err)?;
    maybe_detach(py, msg.len(), || Hmac::<H>::new(key).verify_mac(msg, tag)).map_err(err)
}

/// HMAC (RFC 2104) of `msg` under `key` with the hash `algorithm`.
#[pyfunction]
fn hmac<'py>(py: Python<'py>, algorithm: &str, key: Buf<'_, '_>, msg: Buf<'_, '_>) -> PyResult<Bound<'py, PyBytes>> {
    with_hash!(algorithm, hmac_of(py, &key, &msg))
}

/// Checks an HMAC tag in constant time; raises `AuthenticationFailed` if it is wrong, `InvalidLength` if it is
/// not the full digest length.
#[pyfunction]
fn hmac_verify(py: Python<'_>, algorithm: &str, key: Buf<'_, '_>, msg: Buf<'_, '_>, tag: Buf<'_, '_>) -> PyResult<()> {
    with_hash!(algorithm, hmac_check(py, &key, &msg, &tag))
}

fn hkdf_of<'py, H: Hasher>(
    py: Python<'py>,
    ikm: &[u8],
    length: usize,
    salt: &[u8],
    info: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, length, |out: &mut [u8]| Hkdf::<H>::derive(salt, ikm, info, out).map_err(err))
}

fn hkdf_extract_of<'py, H: Hasher>(py: Python<'py>, salt: &[u8], ikm: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let mut prk = pqkit::kdf::extract::<H>(salt, ikm);
    let b = PyBytes::new(py, prk.as_ref());
    prk.as_mut().zeroize();
    Ok(b)
}

fn hkdf_expand_of<'py, H: Hasher>(
    py: Python<'py>,
    prk: &[u8],
    info: &[u8],
    length: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let h = Hkdf::<H>::from_prk(prk).map_err(err)?;
    PyBytes::new_with(py, length, |out: &mut [u8]| h.expand(info, out).map_err(err))
}

/// HKDF derives at least one byte: a length of 0 is a caller's mistake (as pyca/cryptography says too).
fn check_hkdf_length(length: usize) -> PyResult<()> {
    if length == 0 {
        return Err(PyValueError::new_err("HKDF: length must be at least 1, got 0"));
    }
    Ok(())
}

/// HKDF (RFC 5869) with the hash `algorithm`: `length` bytes from `ikm`, `salt` and `info`.
#[pyfunction]
#[pyo3(signature = (algorithm, ikm, length, salt=None, info=None))]
fn hkdf<'py>(
    py: Python<'py>,
    algorithm: &str,
    ikm: Buf<'_, '_>,
    length: usize,
    salt: Option<Buf<'_, '_>>,
    info: Option<Buf<'_, '_>>,
) -> PyResult<Bound<'py, PyBytes>> {
    check_hkdf_length(length)?;
    let (salt, info) = (opt(&salt).unwrap_or_default(), opt(&info).unwrap_or_default());
    with_hash!(algorithm, hkdf_of(py, &ikm, length, salt, info))
}

/// HKDF-Extract: the pseudorandom key `HMAC(salt, ikm)`.
#[pyfunction]
fn hkdf_extract<'py>(
    py: Python<'py>,
    algorithm: &str,
    salt: Buf<'_, '_>,
    ikm: Buf<'_, '_>,
) -> PyResult<Bound<'py, PyBytes>> {
    with_hash!(algorithm, hkdf_extract_of(py, &salt, &ikm))
}

/// HKDF-Expand: `length` bytes from the pseudorandom key `prk` and `info`.
#[pyfunction]
fn hkdf_expand<'py>(
    py: Python<'py>,
    algorithm: &str,
    prk: Buf<'_, '_>,
    info: Buf<'_, '_>,
    length: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    check_hkdf_length(length)?;
    with_hash!(algorithm, hkdf_expand_of(py, &prk, &info, length))
}

// ---------------------------------------------------------------------------------------------------------
// ML-KEM and ML-DSA

const KEM_NAMES: &str = "ML-KEM-512, ML-KEM-768, ML-KEM-1024";
const DSA_NAMES: &str = "ML-DSA-44, ML-DSA-65, ML-DSA-87";

macro_rules! with_kem {
    ($name:expr, $f:ident ( $($arg:expr),* )) => {
        match $name.to_ascii_uppercase().replace('_', "-").as_str() {
            "ML-KEM-512" | "MLKEM512" => $f::<mlkem::MlKem512>($($arg),*),
            "ML-KEM-768" | "MLKEM768" => $f::<mlkem::MlKem768>($($arg),*),
            "ML-KEM-1024" | "MLKEM1024" => $f::<mlkem::MlKem1024>($($arg),*),
            _ => Err(unknown("ML-KEM parameter set", $name, KEM_NAMES)),
        }
    };
}

macro_rules! with_dsa {
    ($name:expr, $f:ident ( $($arg:expr),* )) => {
        match $name.to_ascii_uppercase().replace('_', "-").as_str() {
            "ML-DSA-44" | "MLDSA44" => $f::<mldsa::MlDsa44>($($arg),*),
            "ML-DSA-65" | "MLDSA65" => $f::<mldsa::MlDsa65>($($arg),*),
            "ML-DSA-87" | "MLDSA87" => $f::<mldsa::MlDsa87>($($arg),*),
            _ => Err(unknown("ML-DSA parameter set", $name, DSA_NAMES)),
        }
    };
}

type Pair<'py> = (Bound<'py, PyBytes>, Bound<'py, PyBytes>);

fn kem_keygen<'py, P: mlkem::Params>(py: Python<'py>, seed: Option<&[u8]>) -> PyResult<Pair<'py>> {
    // Key types are not Send for every parameter set; only their encodings leave the GIL-free closure.
    let (ek, dk) = py
        .detach(|| {
            let (dk, ek) = match seed {
                Some(s) => mlkem::DecapsulationKey::<P>::from_seed64(s)?,
                None => mlkem::DecapsulationKey::<P>::generate()?,
            };
            Ok((ek.as_bytes().to_vec(), Zeroizing::new(dk.to_bytes().as_ref().to_vec())))
        })
        .map_err(err)?;
    Ok((PyBytes::new(py, &ek), PyBytes::new(py, &dk)))
}

fn kem_encaps<'py, P: mlkem::Params>(py: Python<'py>, ek: &[u8]) -> PyResult<Pair<'py>> {
    let (ct, ss) = py
        .detach(|| {
            let (ct, ss) = mlkem::EncapsulationKey::<P>::from_bytes(ek)?.encapsulate()?;
            Ok((ct.as_bytes().to_vec(), ss))
        })
        .map_err(err)?;
    Ok((PyBytes::new(py, &ct), PyBytes::new(py, ss.as_bytes())))
}

fn kem_decaps<'py, P: mlkem::Params>(py: Python<'py>, dk: &[u8], ct: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let ss = py
        .detach(|| {
            let dk = mlkem::DecapsulationKey::<P>::from_bytes(dk)?;
            let ct = mlkem::Ciphertext::<P>::from_bytes(ct)?;
            Ok(dk.decapsulate(&ct))
        })
        .map_err(err)?;
    Ok(PyBytes::new(py, ss.as_bytes()))
}

/// A fresh ML-KEM key pair `(encapsulation_key, decapsulation_key)` from the OS's randomness; `params` is
/// "ML-KEM-512", "ML-KEM-768" or "ML-KEM-1024".
#[pyfunction]
#[pyo3(signature = (params="ML-KEM-768"))]
fn mlkem_keygen<'py>(py: Python<'py>, params: &str) -> PyResult<Pair<'py>> {
    with_kem!(params, kem_keygen(py, None))
}

/// The ML-KEM key pair of a 64-byte seed `d || z` (FIPS 203 ML-KEM.KeyGen_internal). The seed is secret.
#[pyfunction]
fn mlkem_keygen_from_seed<'py>(py: Python<'py>, params: &str, seed: Buf<'_, '_>) -> PyResult<Pair<'py>> {
    with_kem!(params, kem_keygen(py, Some(&seed)))
}

/// Encapsulates to `encapsulation_key`: returns `(ciphertext, shared_secret)` (32-byte secret).
#[pyfunction]
fn mlkem_encapsulate<'py>(py: Python<'py>, params: &str, encapsulation_key: Buf<'_, '_>) -> PyResult<Pair<'py>> {
    with_kem!(params, kem_encaps(py, &encapsulation_key))
}

/// Decapsulates `ciphertext`: the 32-byte shared secret. A modified ciphertext yields an unrelated secret
/// (implicit rejection), not an exception: authenticate what the secret protects.
#[pyfunction]
fn mlkem_decapsulate<'py>(
    py: Python<'py>,
    params: &str,
    decapsulation_key: Buf<'_, '_>,
    ciphertext: Buf<'_, '_>,
) -> PyResult<Bound<'py, PyBytes>> {
    with_kem!(params, kem_decaps(py, &decapsulation_key, &ciphertext))
}

fn dsa_keygen<'py, P: mldsa::Params>(py: Python<'py>, seed: Option<&[u8]>) -> PyResult<Pair<'py>> {
    let (pk, sk) = py
        .detach(|| {
            let (sk, pk) = match seed {
                Some(s) => mldsa::SigningKey::<P>::from_seed_bytes(s)?,
                None => mldsa::SigningKey::<P>::generate()?,
            };
            Ok((pk.as_bytes().to_vec(), Zeroizing::new(sk.to_bytes().as_ref().to_vec())))
        })
        .map_err(err)?;
    Ok((PyBytes::new(py, &pk), PyBytes::new(py, &sk)))
}

fn dsa_sign<'py, P: mldsa::Params>(
    py: Python<'py>,
    sk: &[u8],
    msg: &[u8],
    ctx: &[u8],
    det: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let sig = py
        .detach(|| {
            let sk = mldsa::SigningKey::<P>::from_bytes(sk)?;
            let sig = if det { sk.sign_deterministic(msg, ctx)? } else { sk.sign(msg, ctx)? };
            Ok(sig.as_bytes().to_vec())
        })
        .map_err(err)?;
    Ok(PyBytes::new(py, &sig))
}

fn dsa_verify<P: mldsa::Params>(py: Python<'_>, pk: &[u8], msg: &[u8], sig: &[u8], ctx: &[u8]) -> PyResult<()> {
    py.detach(|| {
        let pk = mldsa::VerifyingKey::<P>::from_bytes(pk)?;
        let sig = mldsa::Signature::<P>::from_bytes(sig)?;
        pk.verify(msg, ctx, &sig)
    })
    .map_err(err)
}

/// A fresh ML-DSA key pair `(public_key, secret_key)`; `params` is "ML-DSA-44", "ML-DSA-65" or "ML-DSA-87".
#[pyfunction]
#[pyo3(signature = (params="ML-DSA-65"))]
fn mldsa_keygen<'py>(py: Python<'py>, params: &str) -> PyResult<Pair<'py>> {
    with_dsa!(params, dsa_keygen(py, None))
}

/// The ML-DSA key pair of a 32-byte seed ξ (FIPS 204 ML-DSA.KeyGen_internal). The seed is secret.
#[pyfunction]
fn mldsa_keygen_from_seed<'py>(py: Python<'py>, params: &str, seed: Buf<'_, '_>) -> PyResult<Pair<'py>> {
    with_dsa!(params, dsa_keygen(py, Some(&seed)))
}

/// Signs `message` with context `context` (at most 255 bytes): hedged with fresh randomness, or deterministic.
#[pyfunction]
#[pyo3(signature = (params, secret_key, message, context=None, deterministic=false))]
fn mldsa_sign<'py>(
    py: Python<'py>,
    params: &str,
    secret_key: Buf<'_, '_>,
    message: Buf<'_, '_>,
    context: Option<Buf<'_, '_>>,
    deterministic: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let ctx = opt(&context).unwrap_or_default();
    with_dsa!(params, dsa_sign(py, &secret_key, &message, ctx, deterministic))
}

/// Verifies `signature` of `message` (with `context`); raises `AuthenticationFailed` if it is not valid.
#[pyfunction]
#[pyo3(signature = (params, public_key, message, signature, context=None))]
fn mldsa_verify(
    py: Python<'_>,
    params: &str,
    public_key: Buf<'_, '_>,
    message: Buf<'_, '_>,
    signature: Buf<'_, '_>,
    context: Option<Buf<'_, '_>>,
) -> PyResult<()> {
    let ctx = opt(&context).unwrap_or_default();
    with_dsa!(params, dsa_verify(py, &public_key, &message, &signature, ctx))
}

/// `length` bytes from the operating system's random number generator.
#[pyfunction]
fn random_bytes<'py>(py: Python<'py>, length: usize) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, length, |out: &mut [u8]| pqkit::rng::fill_os(out).map_err(err))
}

#[pymodule]
fn _pqkit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("GIL_RELEASE_MIN", GIL_RELEASE_MIN)?;
    m.add("PqkitError", py.get_type::<PqkitError>())?;
    m.add("InvalidLength", py.get_type::<InvalidLength>())?;
    m.add("AuthenticationFailed", py.get_type::<AuthenticationFailed>())?;
    m.add("CounterExhausted", py.get_type::<CounterExhausted>())?;
    m.add("MessageTooLong", py.get_type::<MessageTooLong>())?;
    m.add("InvalidEncoding", py.get_type::<InvalidEncoding>())?;
    m.add("InvalidParameter", py.get_type::<InvalidParameter>())?;
    m.add("RngFailure", py.get_type::<RngFailure>())?;
    m.add("UnknownAlgorithm", py.get_type::<UnknownAlgorithm>())?;
    m.add("ChaCha20Poly1305", py.get_type::<ChaCha20Poly1305Py>())?;
    m.add("XChaCha20Poly1305", py.get_type::<XChaCha20Poly1305Py>())?;
    m.add("Aes128Gcm", py.get_type::<Aes128GcmPy>())?;
    m.add("Aes256Gcm", py.get_type::<Aes256GcmPy>())?;
    m.add("Kusumi512Poly1305", py.get_type::<Kusumi512Poly1305Py>())?;
    m.add_class::<HashPy>()?;
    m.add_function(wrap_pyfunction!(digest, m)?)?;
    m.add_function(wrap_pyfunction!(shake128, m)?)?;
    m.add_function(wrap_pyfunction!(shake256, m)?)?;
    m.add_function(wrap_pyfunction!(hmac, m)?)?;
    m.add_function(wrap_pyfunction!(hmac_verify, m)?)?;
    m.add_function(wrap_pyfunction!(hkdf, m)?)?;
    m.add_function(wrap_pyfunction!(hkdf_extract, m)?)?;
    m.add_function(wrap_pyfunction!(hkdf_expand, m)?)?;
    m.add_function(wrap_pyfunction!(mlkem_keygen, m)?)?;
    m.add_function(wrap_pyfunction!(mlkem_keygen_from_seed, m)?)?;
    m.add_function(wrap_pyfunction!(mlkem_encapsulate, m)?)?;
    m.add_function(wrap_pyfunction!(mlkem_decapsulate, m)?)?;
    m.add_function(wrap_pyfunction!(mldsa_keygen, m)?)?;
    m.add_function(wrap_pyfunction!(mldsa_keygen_from_seed, m)?)?;
    m.add_function(wrap_pyfunction!(mldsa_sign, m)?)?;
    m.add_function(wrap_pyfunction!(mldsa_verify, m)?)?;
    m.add_function(wrap_pyfunction!(random_bytes, m)?)?;
    keys::register(m)?;
    files::register(m)?;
    more::register(m)?;
    hpke::register(m)?;
    bus::register(m)?;
    Ok(())
}
