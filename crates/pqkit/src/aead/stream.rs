//! The pqkit encrypted file format, version 1: the STREAM construction over 64 KiB AEAD segments.
//!
//! This module holds the format that `pqkit encrypt` writes and `pqkit decrypt` reads; the byte layout is
//! specified in `docs/file-format.md`. In short:
//!
//! ```text
//! file    = header || segment_0 || ... || segment_{n-1}                            (n >= 1)
//! segment = AEAD-Seal(file_key, prefix || index (u32, big-endian) || last flag, aad_i, plaintext_i)
//! aad_0   = the header, byte for byte; aad_i = empty for i > 0
//! ```
//!
//! Every segment but the last holds exactly [`SEGMENT_LEN`] bytes of plaintext; the last holds 0 to
//! [`SEGMENT_LEN`] bytes (0 only for an empty file). The AEAD key is derived per file from a random salt in
//! the header, with HKDF-SHA-512, from a 32-byte raw key or from a passphrase stretched by Argon2id with the
//! costs written in the header.
//!
//! ## The API
//! - [`Header`]: a file's header; [`Header::random`] makes a fresh one, [`Header::parse`] and
//!   [`Header::read_from`] read and check one.
//! - [`FileKey`]: the AEAD key of one file ([`FileKey::from_key`], [`FileKey::from_passphrase`]), with the
//!   segment-level operations [`FileKey::seal_segment`] and [`FileKey::open_segment`]. Segments are
//!   independent, so callers may seal or open them on several threads (a `FileKey` is `Sync`).
//! - With the `std` feature, [`Encryptor`] (a [`std::io::Write`]) and [`Decryptor`] (a [`std::io::Read`]) do
//!   the framing over any writer or reader, holding one segment in memory.
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use pqkit::aead::stream::{Algorithm, Decryptor, Encryptor};
//! use std::io::{Read, Write};
//!
//! let key = [7u8; 32]; // a real key comes from a CSPRNG
//! let mut enc = Encryptor::with_key(Algorithm::XChaCha20Poly1305, &key, Vec::new())?;
//! enc.write_all(b"attack at dawn")?;
//! let file = enc.finish()?; // writes the final segment; without it the file is truncated
//!
//! let mut dec = Decryptor::with_key(&key, &file[..])?;
//! let mut plaintext = Vec::new();
//! dec.read_to_end(&mut plaintext)?; // Ok only once the final segment authenticated
//! assert_eq!(plaintext, b"attack at dawn");
//! # }
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! ## Security contract
//! - **What is authenticated.** Every segment is an AEAD message whose nonce holds its index and whether it
//!   is the final one, and segment 0 authenticates the whole header (algorithm, key source, Argon2id costs,
//!   salt, nonce prefix). So a segment opens only at its own position of its own file, and dropping,
//!   duplicating, reordering or splicing segments, cutting the file at a segment boundary (truncation) or
//!   appending after the final segment is detected. Only a stream that ends with an authentic final segment is
//!   a complete file.
//! - **What a reader checks before authentication**, and nothing more: the magic, the version, known ids, the
//!   segment size, valid Argon2id parameters, and the upper bounds [`MAX_M_COST`], [`MAX_T_COST`] and
//!   [`MAX_P_COST`], so that a forged header cannot make a reader allocate or compute without limit. These
//!   checks happen in [`Header::parse`] / [`Header::read_from`], before any key derivation.
//! - **Release of plaintext.** [`FileKey::open_segment`] and [`Decryptor`] never release a segment's plaintext
//!   before that segment authenticated. A decryption that fails part way has released only segments that
//!   authenticated one by one, in order, from the start; those form a prefix of the plaintext, but the file
//!   as a whole is authentic and complete only when [`Decryptor`]'s `read` returns `Ok(0)` (end of file).
//!   Callers that must not act on a prefix should buffer the output (or write it to a temporary file) until
//!   then.
//! - **Limits.** At most [`MAX_SEGMENTS`] (2^32) segments, i.e. 256 TiB of plaintext per file. Memory is
//!   bounded: the adapters hold one segment, never an amount that grows with the file.
//! - **Freshness.** Each file needs a fresh random salt and nonce prefix ([`Header::random`]); the file key
//!   then differs for every file even when the raw key or passphrase is reused.
//! - **Errors.** Failures are [`Error`] values, listed in [`errors`]. Through `std::io` they arrive as an
//!   [`std::io::Error`] that wraps the [`Error`] (`get_ref()` + `downcast_ref`): of kind `InvalidData` for a
//!   bad or inauthentic file, `InvalidInput` for a caller's mistake (a key of the wrong kind or length).

use crate::aead::{Aead, Aes256Gcm, Kusumi512Poly1305, TAG_LEN, XChaCha20Poly1305};
use crate::error::Expected;
use crate::hash::sha2::Sha512;
use crate::kdf::Hkdf;
use crate::{Error, Result};
use zeroize::Zeroize;

/// The format's name in errors.
pub const NAME: &str = "pqkit stream";
/// The first 8 bytes of every file.
pub const MAGIC: [u8; 8] = *b"PQKITENC";
/// The format version this module reads and writes.
pub const VERSION: u8 = 1;
/// log2 of [`SEGMENT_LEN`], as written in the header.
const SEGMENT_LOG2: u8 = 16;
/// Plaintext bytes in every segment but the last (64 KiB).
pub const SEGMENT_LEN: usize = 1 << SEGMENT_LOG2;
/// Bytes of a full segment in the file: plaintext plus tag.
pub const SEGMENT_CT_LEN: usize = SEGMENT_LEN + TAG_LEN;
/// The most segments one file can have: the counter is 32 bits.
pub const MAX_SEGMENTS: u64 = 1 << 32;
/// Length of the header's salt.
pub const SALT_LEN: usize = 32;
/// Length of a raw key ([`FileKey::from_key`]).
pub const KEY_LEN: usize = 32;
/// Length of the header before the nonce prefix.
pub const FIXED_HEADER_LEN: usize = 56;
/// The longest header (XChaCha20-Poly1305's, with a 19-byte nonce prefix).
pub const MAX_HEADER_LEN: usize = FIXED_HEADER_LEN + 19;
/// Largest Argon2id memory cost (KiB) a reader accepts from a header: 4 GiB.
pub const MAX_M_COST: u32 = 4 * 1024 * 1024;
/// Largest Argon2id pass count a reader accepts from a header.
pub const MAX_T_COST: u32 = 64;
/// Largest Argon2id lane count a reader accepts from a header.
pub const MAX_P_COST: u32 = 64;

/// Key-source ids in the header.
const SRC_KEY: u8 = 1;
const SRC_ARGON2ID: u8 = 2;
/// Length of the Argon2id output that becomes the HKDF input.
#[cfg(feature = "alloc")]
const ARGON2_OUT_LEN: usize = 32;
/// HKDF info, followed by the algorithm id.
const KEY_INFO: &[u8] = b"pqkit file key v1";
/// Longest AEAD nonce of the format.
const MAX_NONCE_LEN: usize = 24;

/// The errors of this module, as constants to compare with.
///
/// Header problems are [`Error::InvalidEncoding`]; a segment that fails to authenticate is
/// [`Error::AuthenticationFailed`] (a wrong key or passphrase shows up as a failure of segment 0). Which
/// segment failed is known to the caller of [`FileKey::open_segment`], and to a [`Decryptor`] user from
/// [`Decryptor::segments_authenticated`].
pub mod errors {
    use super::NAME;
    use crate::Error;

    /// The input does not start with [`MAGIC`](super::MAGIC).
    pub const BAD_MAGIC: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "not a pqkit encrypted file (bad magic)" };
    /// The input ends inside the header.
    pub const HEADER_TRUNCATED: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "ciphertext truncated inside the header" };
    /// The version byte is not [`VERSION`](super::VERSION).
    pub const BAD_VERSION: Error = Error::InvalidEncoding {
        algorithm: NAME,
        reason: "unsupported format version (this pqkit reads version 1) or corrupted header",
    };
    /// The algorithm id is unknown.
    pub const UNKNOWN_ALGORITHM: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "unknown algorithm id: corrupted header" };
    /// The key-source id is unknown (or a key-file header carries Argon2id costs).
    pub const UNKNOWN_KEY_SOURCE: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "unknown key source: corrupted header" };
    /// The segment size is not 64 KiB.
    pub const BAD_SEGMENT_SIZE: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "unsupported segment size: corrupted header" };
    /// The Argon2id costs are not valid Argon2id parameters.
    pub const BAD_ARGON2_PARAMS: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "invalid Argon2id parameters: corrupted header" };
    /// The Argon2id costs exceed [`MAX_M_COST`](super::MAX_M_COST), [`MAX_T_COST`](super::MAX_T_COST) or
    /// [`MAX_P_COST`](super::MAX_P_COST).
    pub const ARGON2_LIMITS: Error = Error::InvalidEncoding {
        algorithm: NAME,
        reason: "the header asks for Argon2id costs above this pqkit's limits (m <= 4194304 KiB, t <= 64, \
                 p <= 64): refusing (corrupted header?)",
    };
    /// Nothing follows the header.
    pub const NO_SEGMENTS: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "ciphertext truncated after the header: no segments" };
    /// The last segment is shorter than a tag.
    pub const SHORT_SEGMENT: Error = Error::InvalidEncoding {
        algorithm: NAME,
        reason: "ciphertext truncated or extended: the last segment is shorter than a tag",
    };
    /// The stream ends after a segment that authenticates only as a non-final one: the file was cut at a
    /// segment boundary.
    pub const TRUNCATED: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "ciphertext truncated: the final segment is missing" };
    /// Data follows a segment that authenticates only as the final one: the file was extended.
    pub const APPENDED: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "data appended after the final segment" };
    /// The stream has more than [`MAX_SEGMENTS`](super::MAX_SEGMENTS) segments.
    pub const TOO_MANY_SEGMENTS: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "more than 2^32 segments: not a valid pqkit file" };
    /// A segment failed to authenticate: corrupted, reordered, dropped, duplicated, spliced from another file,
    /// or (at segment 0) a wrong key or passphrase or a corrupted header.
    pub const SEGMENT_FAILED: Error = Error::AuthenticationFailed { algorithm: NAME };
    /// [`FileKey::from_key`](super::FileKey::from_key) on a header whose key source is a passphrase.
    pub const NEEDS_PASSPHRASE: Error = Error::InvalidParameter {
        algorithm: NAME,
        reason: "this file is protected by a passphrase (Argon2id), not a raw key",
    };
    /// [`FileKey::from_passphrase`](super::FileKey::from_passphrase) on a header whose key source is a raw key.
    pub const NEEDS_KEY: Error =
        Error::InvalidParameter { algorithm: NAME, reason: "this file is protected by a raw key, not a passphrase" };
}

/// The AEAD of a file.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// XChaCha20-Poly1305 (id 1), the default: fast and constant-time on every CPU, 19-byte nonce prefix.
    #[default]
    XChaCha20Poly1305,
    /// Kusumi512-Poly1305 (id 2): 64-byte file key, 7-byte nonce prefix.
    Kusumi512Poly1305,
    /// AES-256-GCM (id 3): 7-byte nonce prefix.
    Aes256Gcm,
}

impl Algorithm {
    /// The id written in the header.
    pub const fn id(self) -> u8 {
        match self {
            Algorithm::XChaCha20Poly1305 => 1,
            Algorithm::Kusumi512Poly1305 => 2,
            Algorithm::Aes256Gcm => 3,
        }
    }

    /// The algorithm with header id `id`, if any.
    pub const fn from_id(id: u8) -> Option<Self> {
        match id {
            1 => Some(Algorithm::XChaCha20Poly1305),
            2 => Some(Algorithm::Kusumi512Poly1305),
            3 => Some(Algorithm::Aes256Gcm),
            _ => None,
        }
    }

    /// The AEAD's name.
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::XChaCha20Poly1305 => XChaCha20Poly1305::NAME,
            Algorithm::Kusumi512Poly1305 => Kusumi512Poly1305::NAME,
            Algorithm::Aes256Gcm => Aes256Gcm::NAME,
        }
    }

    /// Length of the file key (the AEAD key) in bytes.
    pub const fn key_len(self) -> usize {
        match self {
            Algorithm::XChaCha20Poly1305 => XChaCha20Poly1305::KEY_LEN,
            Algorithm::Kusumi512Poly1305 => Kusumi512Poly1305::KEY_LEN,
            Algorithm::Aes256Gcm => Aes256Gcm::KEY_LEN,
        }
    }

    /// Length of the AEAD nonce in bytes.
    pub const fn nonce_len(self) -> usize {
        match self {
            Algorithm::XChaCha20Poly1305 => XChaCha20Poly1305::NONCE_LEN,
            Algorithm::Kusumi512Poly1305 => Kusumi512Poly1305::NONCE_LEN,
            Algorithm::Aes256Gcm => Aes256Gcm::NONCE_LEN,
        }
    }

    /// Length of the random nonce prefix: the nonce less the 4-byte counter and the 1-byte last flag.
    pub const fn prefix_len(self) -> usize {
        self.nonce_len() - 5
    }

    /// Length of the header of a file with this algorithm (75 or 63 bytes).
    pub const fn header_len(self) -> usize {
        FIXED_HEADER_LEN + self.prefix_len()
    }
}

/// Where a file's key comes from.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// A 32-byte raw key (the CLI's key file), id 1.
    Key,
    /// A passphrase stretched by Argon2id (RFC 9106, version 0x13) with these costs, id 2.
    Argon2id {
        /// Memory in KiB.
        m_cost: u32,
        /// Passes.
        t_cost: u32,
        /// Lanes.
        p_cost: u32,
    },
}

/// The same rule as [`crate::kdf::argon2::Params::new`] (which needs `alloc`): at least one lane and at most
/// `2^24 - 1`, at least one pass, at least 8 KiB of memory per lane.
const fn argon2_params_valid(m: u32, t: u32, p: u32) -> bool {
    p != 0 && p < (1 << 24) && t != 0 && m as u64 >= 8 * p as u64
}

/// A file's header: algorithm, key source, salt and nonce prefix, with its exact bytes (the associated data
/// of segment 0).
#[derive(Clone, PartialEq, Eq)]
pub struct Header {
    alg: Algorithm,
    source: KeySource,
    bytes: [u8; MAX_HEADER_LEN],
}

impl Header {
    /// A header with the given salt and nonce prefix (`alg.prefix_len()` bytes).
    ///
    /// Both must be fresh random values for every file: use [`Header::random`] unless you need a
    /// reproducible file (test vectors). Argon2id costs must be valid parameters
    /// ([`Error::InvalidParameter`] otherwise); note that readers refuse costs above [`MAX_M_COST`],
    /// [`MAX_T_COST`] and [`MAX_P_COST`].
    pub fn new(alg: Algorithm, source: KeySource, salt: &[u8; SALT_LEN], prefix: &[u8]) -> Result<Self> {
        Error::check_length(NAME, "nonce prefix", alg.prefix_len(), prefix.len())?;
        let (src, m, t, p) = match source {
            KeySource::Key => (SRC_KEY, 0, 0, 0),
            KeySource::Argon2id { m_cost, t_cost, p_cost } => {
                if !argon2_params_valid(m_cost, t_cost, p_cost) {
                    return Err(Error::InvalidParameter {
                        algorithm: NAME,
                        reason: "invalid Argon2id parameters (need m >= 8 * p KiB, t >= 1, 1 <= p < 2^24)",
                    });
                }
                (SRC_ARGON2ID, m_cost, t_cost, p_cost)
            }
        };
        let mut bytes = [0u8; MAX_HEADER_LEN];
        bytes[..8].copy_from_slice(&MAGIC);
        bytes[8] = VERSION;
        bytes[9] = alg.id();
        bytes[10] = src;
        bytes[11] = SEGMENT_LOG2;
        bytes[12..16].copy_from_slice(&m.to_be_bytes());
        bytes[16..20].copy_from_slice(&t.to_be_bytes());
        bytes[20..24].copy_from_slice(&p.to_be_bytes());
        bytes[24..FIXED_HEADER_LEN].copy_from_slice(salt);
        bytes[FIXED_HEADER_LEN..alg.header_len()].copy_from_slice(prefix);
        Ok(Header { alg, source, bytes })
    }

    /// A header with a fresh salt and nonce prefix from the operating system's randomness.
    #[cfg(feature = "std")]
    pub fn random(alg: Algorithm, source: KeySource) -> Result<Self> {
        let mut salt = [0u8; SALT_LEN];
        let mut prefix = [0u8; MAX_NONCE_LEN - 5];
        let prefix = &mut prefix[..alg.prefix_len()];
        crate::rng::fill_os(&mut salt)?;
        crate::rng::fill_os(prefix)?;
        Header::new(alg, source, &salt, prefix)
    }

    /// Checks the fixed part of a header, of which `fixed` holds the first `fixed.len()` bytes (a short slice
    /// means the input ended there).
    fn check_fixed(fixed: &[u8]) -> Result<(Algorithm, KeySource)> {
        if fixed.len() < MAGIC.len() || fixed[..MAGIC.len()] != MAGIC {
            return Err(errors::BAD_MAGIC);
        }
        if fixed.len() < FIXED_HEADER_LEN {
            return Err(errors::HEADER_TRUNCATED);
        }
        if fixed[8] != VERSION {
            return Err(errors::BAD_VERSION);
        }
        let alg = Algorithm::from_id(fixed[9]).ok_or(errors::UNKNOWN_ALGORITHM)?;
        if fixed[11] != SEGMENT_LOG2 {
            return Err(errors::BAD_SEGMENT_SIZE);
        }
        let be = |i: usize| u32::from_be_bytes([fixed[i], fixed[i + 1], fixed[i + 2], fixed[i + 3]]);
        let (m, t, p) = (be(12), be(16), be(20));
        let source = match fixed[10] {
            SRC_KEY if m == 0 && t == 0 && p == 0 => KeySource::Key,
            SRC_ARGON2ID => {
                if !argon2_params_valid(m, t, p) {
                    return Err(errors::BAD_ARGON2_PARAMS);
                }
                if m > MAX_M_COST || t > MAX_T_COST || p > MAX_P_COST {
                    return Err(errors::ARGON2_LIMITS);
                }
                KeySource::Argon2id { m_cost: m, t_cost: t, p_cost: p }
            }
            _ => return Err(errors::UNKNOWN_KEY_SOURCE),
        };
        Ok((alg, source))
    }

    /// Parses and checks the header at the start of `input` (bytes after it are ignored; the header is
    /// `header.as_bytes().len()` bytes long).
    ///
    /// Checks exactly what a reader must before authentication (see the module's security contract); the
    /// header is authenticated only when segment 0 opens. Errors: the header ones of [`errors`].
    pub fn parse(input: &[u8]) -> Result<Self> {
        let (alg, source) = Self::check_fixed(&input[..input.len().min(FIXED_HEADER_LEN)])?;
        let len = alg.header_len();
        if input.len() < len {
            return Err(errors::HEADER_TRUNCATED);
        }
        let mut bytes = [0u8; MAX_HEADER_LEN];
        bytes[..len].copy_from_slice(&input[..len]);
        Ok(Header { alg, source, bytes })
    }

    /// Reads exactly one header from `reader` and checks it like [`Header::parse`].
    ///
    /// Reads nothing past the header, and stops after the fixed part if that is already wrong. Format errors
    /// come as an [`std::io::Error`] of kind `InvalidData` wrapping the [`Error`].
    #[cfg(feature = "std")]
    pub fn read_from<R: std::io::Read + ?Sized>(reader: &mut R) -> std::io::Result<Self> {
        let mut buf = [0u8; MAX_HEADER_LEN];
        let n = io::read_full(reader, &mut buf[..FIXED_HEADER_LEN])?;
        let (alg, _) = Self::check_fixed(&buf[..n])?;
        let len = alg.header_len();
        let k = io::read_full(reader, &mut buf[FIXED_HEADER_LEN..len])?;
        Ok(Self::parse(&buf[..FIXED_HEADER_LEN + k])?)
    }

    /// The AEAD.
    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// Where the key comes from.
    pub fn key_source(&self) -> KeySource {
        self.source
    }

    /// The salt (HKDF salt and Argon2id salt).
    pub fn salt(&self) -> &[u8; SALT_LEN] {
        self.bytes[24..FIXED_HEADER_LEN].try_into().expect("32 bytes")
    }

    /// The nonce prefix.
    pub fn nonce_prefix(&self) -> &[u8] {
        &self.bytes[FIXED_HEADER_LEN..self.alg.header_len()]
    }

    /// The header's bytes, as written at the start of the file.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.alg.header_len()]
    }

    /// The nonce of segment `index`: prefix || index (u32, big-endian) || last flag. `index < MAX_SEGMENTS`.
    fn nonce(&self, index: u64, last: bool) -> ([u8; MAX_NONCE_LEN], usize) {
        let p = self.alg.prefix_len();
        let mut n = [0u8; MAX_NONCE_LEN];
        n[..p].copy_from_slice(self.nonce_prefix());
        n[p..p + 4].copy_from_slice(&(index as u32).to_be_bytes());
        n[p + 4] = last as u8;
        (n, p + 5)
    }
}

impl core::fmt::Debug for Header {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Header").field("algorithm", &self.alg).field("key_source", &self.source).finish_non_exhaustive()
    }
}

/// The keyed AEAD of a file.
///
/// Not boxed, so the core needs no allocator: a `FileKey` is made once per file and rarely moved, so the
/// size of AES-256-GCM's key schedule and hash-key powers costs nothing that matters.
#[allow(clippy::large_enum_variant)]
enum Keyed {
    X(XChaCha20Poly1305),
    K(Kusumi512Poly1305),
    G(Aes256Gcm),
}

impl Keyed {
    fn seal(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
        match self {
            Keyed::X(a) => a.seal_in_place_detached(nonce, aad, buf),
            Keyed::K(a) => a.seal_in_place_detached(nonce, aad, buf),
            Keyed::G(a) => a.seal_in_place_detached(nonce, aad, buf),
        }
    }

    fn open(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
        match self {
            Keyed::X(a) => a.open_in_place_detached(nonce, aad, buf, tag),
            Keyed::K(a) => a.open_in_place_detached(nonce, aad, buf, tag),
            Keyed::G(a) => a.open_in_place_detached(nonce, aad, buf, tag),
        }
    }
}

/// The AEAD key of one file, bound to its header: seals and opens that file's segments.
///
/// Derived as `HKDF-SHA-512(salt = header salt, ikm, info = "pqkit file key v1" || algorithm id)`, where
/// `ikm` is the raw key or `Argon2id(passphrase, header salt, header costs)`. The key material is wiped on
/// drop; `Debug` prints none of it.
pub struct FileKey {
    aead: Keyed,
    header: Header,
}

impl FileKey {
    /// The file key for `header` from a raw key of [`KEY_LEN`] (32) bytes.
    ///
    /// Fails with [`errors::NEEDS_PASSPHRASE`] if the header says a passphrase protects the file, and with
    /// [`Error::InvalidLength`] for a key of another length.
    pub fn from_key(header: &Header, key: &[u8]) -> Result<Self> {
        if header.source != KeySource::Key {
            return Err(errors::NEEDS_PASSPHRASE);
        }
        Error::check_length(NAME, "key", KEY_LEN, key.len())?;
        Self::from_ikm(header, key)
    }

    /// The file key for `header` from a passphrase, stretched by Argon2id with the header's salt and costs.
    ///
    /// This is the expensive step (the header's costs: memory `m` KiB, `t` passes). Fails with
    /// [`errors::NEEDS_KEY`] if the header says a raw key protects the file, with [`Error::InvalidLength`] for
    /// an empty passphrase, and with [`Error::InvalidParameter`] if the memory cannot be allocated.
    #[cfg(feature = "alloc")]
    pub fn from_passphrase(header: &Header, passphrase: &[u8]) -> Result<Self> {
        let KeySource::Argon2id { m_cost, t_cost, p_cost } = header.source else {
            return Err(errors::NEEDS_KEY);
        };
        if passphrase.is_empty() {
            return Err(Error::InvalidLength {
                algorithm: NAME,
                field: "passphrase",
                expected: Expected::AtLeast(1),
                actual: 0,
            });
        }
        let params = crate::kdf::argon2::Params::new(m_cost, t_cost, p_cost)?;
        let mut ikm = [0u8; ARGON2_OUT_LEN];
        let r = crate::kdf::argon2::Argon2id::new(params)
            .hash(passphrase, header.salt(), &mut ikm)
            .and_then(|()| Self::from_ikm(header, &ikm));
        ikm.zeroize();
        r
    }

    fn from_ikm(header: &Header, ikm: &[u8]) -> Result<Self> {
        let alg = header.alg;
        let mut info = [0u8; KEY_INFO.len() + 1];
        info[..KEY_INFO.len()].copy_from_slice(KEY_INFO);
        info[KEY_INFO.len()] = alg.id();
        let mut key = [0u8; 64];
        let key_part = &mut key[..alg.key_len()];
        // 32 or 64 bytes: far below HKDF-SHA-512's limit of 255 * 64.
        let r = Hkdf::<Sha512>::derive(header.salt(), ikm, &info, key_part).and_then(|()| {
            Ok(match alg {
                Algorithm::XChaCha20Poly1305 => Keyed::X(XChaCha20Poly1305::new(key_part)?),
                Algorithm::Kusumi512Poly1305 => Keyed::K(Kusumi512Poly1305::new(key_part)?),
                Algorithm::Aes256Gcm => Keyed::G(Aes256Gcm::new(key_part)?),
            })
        });
        key.zeroize();
        Ok(FileKey { aead: r?, header: header.clone() })
    }

    /// The header this key belongs to (write it before segment 0).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Checks a segment's position and plaintext length against the format.
    fn check_segment(last: bool, len: usize) -> Result<()> {
        if last {
            if len > SEGMENT_LEN {
                return Err(Error::InvalidLength {
                    algorithm: NAME,
                    field: "final segment",
                    expected: Expected::AtMost(SEGMENT_LEN),
                    actual: len,
                });
            }
        } else {
            Error::check_length(NAME, "non-final segment", SEGMENT_LEN, len)?;
        }
        Ok(())
    }

    /// Whether a segment may stand at `index`: the counter is 32 bits, and a non-final segment needs room for
    /// a final one after it.
    fn index_fits(index: u64, last: bool) -> bool {
        index < MAX_SEGMENTS && (last || index < MAX_SEGMENTS - 1)
    }

    /// Encrypts segment `index` in place and returns its tag; the file stores `buf || tag`.
    ///
    /// `buf` is the segment's plaintext: exactly [`SEGMENT_LEN`] bytes unless `last`; the final segment holds
    /// 1 to [`SEGMENT_LEN`] bytes, or 0 when it is segment 0 (an empty file). A file is segments `0, 1, ...,
    /// n-1` in order with `last` set on segment `n-1` only. Segments are independent and may be sealed in any
    /// order or in parallel. Errors, before anything is encrypted: [`Error::InvalidLength`] for a length the
    /// format does not allow, [`Error::CounterExhausted`] past [`MAX_SEGMENTS`].
    pub fn seal_segment(&self, index: u64, last: bool, buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
        if !Self::index_fits(index, last) {
            return Err(Error::CounterExhausted { algorithm: NAME });
        }
        Self::check_segment(last, buf.len())?;
        if last && buf.is_empty() && index > 0 {
            return Err(Error::InvalidLength {
                algorithm: NAME,
                field: "final segment after others",
                expected: Expected::AtLeast(1),
                actual: 0,
            });
        }
        let (nonce, n) = self.header.nonce(index, last);
        let aad: &[u8] = if index == 0 { self.header.as_bytes() } else { &[] };
        self.aead.seal(&nonce[..n], aad, buf)
    }

    /// Verifies segment `index` (`buf` holds its ciphertext, `tag` the 16 bytes after it) and decrypts it in
    /// place. `last` says whether the caller expects it to be the final segment (nothing follows it).
    ///
    /// On success `buf` holds the plaintext. On failure `buf` holds no plaintext (the ciphertext, or zeros)
    /// and the error says why:
    /// - [`errors::TRUNCATED`]: `last` was set but the segment is authentic only as a non-final one (the file
    ///   was cut after it);
    /// - [`errors::APPENDED`]: `last` was clear but the segment is the authentic final one (data follows the
    ///   end of the file);
    /// - [`errors::SEGMENT_FAILED`]: anything else: corrupted, reordered, dropped, duplicated or spliced
    ///   segments, or at index 0 a wrong key or a corrupted header;
    /// - [`errors::TOO_MANY_SEGMENTS`], or [`Error::InvalidLength`] for lengths the format does not allow
    ///   (a non-final segment is exactly [`SEGMENT_LEN`] bytes, the tag [`TAG_LEN`]).
    ///
    /// Telling truncation and appending apart costs a second AEAD pass, on failure only.
    pub fn open_segment(&self, index: u64, last: bool, buf: &mut [u8], tag: &[u8]) -> Result<()> {
        if !Self::index_fits(index, last) {
            return Err(errors::TOO_MANY_SEGMENTS);
        }
        Self::check_segment(last, buf.len())?;
        Error::check_length(NAME, "tag", TAG_LEN, tag.len())?;
        let aad: &[u8] = if index == 0 { self.header.as_bytes() } else { &[] };
        let (nonce, n) = self.header.nonce(index, last);
        if self.aead.open(&nonce[..n], aad, buf, tag).is_ok() {
            return Ok(());
        }
        // `buf` holds the ciphertext again. Does the segment open with the other flag?
        let other = !last;
        if Self::index_fits(index, other) && Self::check_segment(other, buf.len()).is_ok() {
            let (nonce, n) = self.header.nonce(index, other);
            if self.aead.open(&nonce[..n], aad, buf, tag).is_ok() {
                // Authentic, but not at this place in the stream: never released.
                buf.zeroize();
                return Err(if last { errors::TRUNCATED } else { errors::APPENDED });
            }
        }
        Err(errors::SEGMENT_FAILED)
    }
}

impl core::fmt::Debug for FileKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FileKey").field("header", &self.header).finish_non_exhaustive()
    }
}

#[cfg(feature = "std")]
pub(crate) use io::read_full;
#[cfg(feature = "std")]
pub use io::{Decryptor, Encryptor};

#[cfg(feature = "std")]
mod io {
    use super::{Algorithm, FileKey, Header, KeySource, SEGMENT_CT_LEN, SEGMENT_LEN, errors};
    use crate::aead::TAG_LEN;
    use crate::kdf::argon2::Params;
    use alloc::boxed::Box;
    use alloc::vec;
    use std::io::{self, ErrorKind, Read, Write};
    use zeroize::Zeroize;

    /// Reads until `buf` is full or the end of input; returns the bytes read. Retries `Interrupted`.
    pub(crate) fn read_full<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match r.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }

    /// A heap buffer wiped on drop (it holds plaintext).
    struct Wiped(Box<[u8]>);

    impl Wiped {
        fn new(len: usize) -> Self {
            Wiped(vec![0u8; len].into_boxed_slice())
        }
    }

    impl Drop for Wiped {
        fn drop(&mut self) {
            self.0.zeroize();
        }
    }

    /// Encrypts everything written to it into the pqkit file format and writes the file to `inner`.
    ///
    /// Holds one segment (64 KiB) of plaintext. The header and each segment are written once the next byte
    /// (or [`finish`](Encryptor::finish)) shows whether that segment is the final one; so nothing reaches
    /// `inner` before the first 64 KiB + 1 bytes or `finish`.
    ///
    /// **Call [`finish`](Encryptor::finish).** It seals and writes the final segment. An `Encryptor` dropped
    /// without it leaves a file that every reader rejects as truncated (the buffered plaintext is wiped, not
    /// written). `flush` flushes `inner` but cannot emit a partial segment. After an error (from `inner` or
    /// past [`MAX_SEGMENTS`](super::MAX_SEGMENTS)) the encryptor is poisoned: every later call fails, so a
    /// failed encryption can never end in a valid file.
    pub struct Encryptor<W: Write> {
        key: FileKey,
        inner: W,
        /// The current segment's plaintext in `buf[..len]`; room for its tag after it.
        buf: Wiped,
        len: usize,
        index: u64,
        header_written: bool,
        poisoned: bool,
    }

    impl<W: Write> Encryptor<W> {
        /// An encryptor for the file `key` belongs to (its header is written first).
        pub fn new(key: FileKey, inner: W) -> Self {
            Encryptor {
                key,
                inner,
                buf: Wiped::new(SEGMENT_CT_LEN),
                len: 0,
                index: 0,
                header_written: false,
                poisoned: false,
            }
        }

        /// A new file under a 32-byte raw key, with a fresh random header.
        pub fn with_key(alg: Algorithm, key: &[u8], inner: W) -> crate::Result<Self> {
            let header = Header::random(alg, KeySource::Key)?;
            Ok(Self::new(FileKey::from_key(&header, key)?, inner))
        }

        /// A new file under a passphrase stretched by Argon2id with `params`, with a fresh random header.
        /// Runs Argon2id once (the expensive step). Readers refuse costs above
        /// [`MAX_M_COST`](super::MAX_M_COST), [`MAX_T_COST`](super::MAX_T_COST) and
        /// [`MAX_P_COST`](super::MAX_P_COST).
        pub fn with_passphrase(alg: Algorithm, passphrase: &[u8], params: Params, inner: W) -> crate::Result<Self> {
            let source =
                KeySource::Argon2id { m_cost: params.m_cost(), t_cost: params.t_cost(), p_cost: params.p_cost() };
            let header = Header::random(alg, source)?;
            Ok(Self::new(FileKey::from_passphrase(&header, passphrase)?, inner))
        }

        /// The file's header.
        pub fn header(&self) -> &Header {
            self.key.header()
        }

        fn check(&self) -> io::Result<()> {
            if self.poisoned {
                return Err(io::Error::other("pqkit stream encryptor is poisoned by an earlier error"));
            }
            Ok(())
        }

        /// Seals the buffered segment and writes it (after the header, the first time).
        fn emit(&mut self, last: bool) -> io::Result<()> {
            // Poisoned unless everything below succeeds.
            self.poisoned = true;
            let len = self.len;
            let tag = self.key.seal_segment(self.index, last, &mut self.buf.0[..len])?;
            self.buf.0[len..len + TAG_LEN].copy_from_slice(&tag);
            if !self.header_written {
                self.inner.write_all(self.key.header().as_bytes())?;
                self.header_written = true;
            }
            self.inner.write_all(&self.buf.0[..len + TAG_LEN])?;
            self.len = 0;
            self.index += 1;
            self.poisoned = false;
            Ok(())
        }

        /// Seals and writes the final segment, flushes `inner` and returns it. The file is complete only after
        /// this returns `Ok`.
        pub fn finish(mut self) -> io::Result<W> {
            self.check()?;
            self.emit(true)?;
            self.inner.flush()?;
            let Encryptor { inner, .. } = self;
            Ok(inner)
        }
    }

    impl<W: Write> Write for Encryptor<W> {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.check()?;
            if data.is_empty() {
                return Ok(0);
            }
            if self.len == SEGMENT_LEN {
                // More data follows, so the buffered segment is not the final one.
                self.emit(false)?;
            }
            let n = data.len().min(SEGMENT_LEN - self.len);
            self.buf.0[self.len..self.len + n].copy_from_slice(&data[..n]);
            self.len += n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            self.check()?;
            self.inner.flush()
        }
    }

    impl<W: Write> core::fmt::Debug for Encryptor<W> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("Encryptor")
                .field("header", self.header())
                .field("segments", &self.index)
                .finish_non_exhaustive()
        }
    }

    /// Where a [`Decryptor`] is.
    enum State {
        Reading,
        Done,
        Failed(crate::Error),
    }

    /// Reads a file in the pqkit format from `inner` and returns its plaintext.
    ///
    /// Holds one segment. A segment's plaintext is returned only after the segment authenticated, in order.
    /// `read` returns `Ok(0)` only after the final segment authenticated: only then is the plaintext
    /// complete and the file as a whole authentic. Any failure (see [`errors`]) is returned as an
    /// [`io::Error`] of kind `InvalidData` wrapping the [`Error`](crate::Error), and is returned again by every
    /// later `read`; what was returned before it came from segments that each authenticated, a prefix of the
    /// plaintext, not a complete file. [`segments_authenticated`](Decryptor::segments_authenticated) tells
    /// how far it got: a failure with 0 segments authenticated at segment 0 means a wrong key or passphrase
    /// or a corrupted header. Errors of `inner` itself are passed through and leave the decryptor able to
    /// continue.
    pub struct Decryptor<R: Read> {
        key: FileKey,
        inner: R,
        /// A segment's ciphertext and one byte more (to know whether it is the last); after it opened, its
        /// plaintext in `buf[pos..end]`.
        buf: Wiped,
        filled: usize,
        pos: usize,
        end: usize,
        /// The byte after the last segment read, which belongs to the next segment.
        carry: Option<u8>,
        index: u64,
        state: State,
    }

    impl<R: Read> Decryptor<R> {
        /// A decryptor for the segments that follow the header in `inner`; `key` was made from that header
        /// (read it with [`Header::read_from`], which leaves `inner` just after it).
        pub fn new(key: FileKey, inner: R) -> Self {
            Decryptor {
                key,
                inner,
                buf: Wiped::new(SEGMENT_CT_LEN + 1),
                filled: 0,
                pos: 0,
                end: 0,
                carry: None,
                index: 0,
                state: State::Reading,
            }
        }

        /// Reads the header from `inner` and derives the file key from a 32-byte raw key.
        pub fn with_key(key: &[u8], mut inner: R) -> io::Result<Self> {
            let header = Header::read_from(&mut inner)?;
            Ok(Self::new(FileKey::from_key(&header, key)?, inner))
        }

        /// Reads the header from `inner` and derives the file key from a passphrase with the header's
        /// Argon2id costs (checked against the limits before any work).
        pub fn with_passphrase(passphrase: &[u8], mut inner: R) -> io::Result<Self> {
            let header = Header::read_from(&mut inner)?;
            Ok(Self::new(FileKey::from_passphrase(&header, passphrase)?, inner))
        }

        /// The file's header.
        pub fn header(&self) -> &Header {
            self.key.header()
        }

        /// How many segments have authenticated so far (their plaintext has been or will be returned).
        pub fn segments_authenticated(&self) -> u64 {
            self.index
        }

        /// Reads, checks and opens the next segment; on success its plaintext is in `buf[pos..end]`.
        fn next_segment(&mut self) -> io::Result<()> {
            if self.filled == 0
                && let Some(b) = self.carry.take()
            {
                self.buf.0[0] = b;
                self.filled = 1;
            }
            // An error of `inner` returns here with `filled` kept, so a retry continues where it stopped.
            let cap = self.buf.0.len();
            while self.filled < cap {
                match self.inner.read(&mut self.buf.0[self.filled..]) {
                    Ok(0) => break,
                    Ok(k) => self.filled += k,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            }
            let last = self.filled < cap;
            let len = if last { self.filled } else { SEGMENT_CT_LEN };
            self.filled = 0;
            if !last {
                self.carry = Some(self.buf.0[SEGMENT_CT_LEN]);
            }
            let failure = if len == 0 {
                // Only at segment 0: after a segment, the carried byte starts the next one.
                Some(if self.index == 0 { errors::NO_SEGMENTS } else { errors::TRUNCATED })
            } else if len < TAG_LEN {
                Some(errors::SHORT_SEGMENT)
            } else {
                let (body, tag) = self.buf.0[..len].split_at_mut(len - TAG_LEN);
                self.key.open_segment(self.index, last, body, tag).err()
            };
            if let Some(e) = failure {
                self.buf.0.zeroize();
                self.state = State::Failed(e.clone());
                return Err(e.into());
            }
            self.pos = 0;
            self.end = len - TAG_LEN;
            self.index += 1;
            if last {
                self.state = State::Done;
            }
            Ok(())
        }
    }

    impl<R: Read> Read for Decryptor<R> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if out.is_empty() {
                return Ok(0);
            }
            loop {
                if self.pos < self.end {
                    let n = out.len().min(self.end - self.pos);
                    out[..n].copy_from_slice(&self.buf.0[self.pos..self.pos + n]);
                    self.pos += n;
                    if self.pos == self.end {
                        self.buf.0[..self.end].zeroize();
                    }
                    return Ok(n);
                }
                match &self.state {
                    State::Done => return Ok(0),
                    State::Failed(e) => return Err(e.clone().into()),
                    State::Reading => self.next_segment()?,
                }
            }
        }
    }

    impl<R: Read> core::fmt::Debug for Decryptor<R> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.debug_struct("Decryptor")
                .field("header", self.header())
                .field("segments_authenticated", &self.index)
                .finish_non_exhaustive()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout_and_nonces() {
        let salt = [0xa5; SALT_LEN];
        let prefix: [u8; 19] = core::array::from_fn(|i| i as u8);
        let source = KeySource::Argon2id { m_cost: 65536, t_cost: 3, p_cost: 4 };
        let h = Header::new(Algorithm::XChaCha20Poly1305, source, &salt, &prefix).unwrap();
        let b = h.as_bytes();
        assert_eq!(b.len(), 75);
        assert_eq!(&b[..8], b"PQKITENC");
        assert_eq!(b[8..12], [1, 1, 2, 16]);
        assert_eq!(b[12..24], [0, 1, 0, 0, 0, 0, 0, 3, 0, 0, 0, 4]);
        assert_eq!(&b[24..56], &salt);
        assert_eq!(&b[56..], &prefix);
        assert_eq!(Header::parse(b).unwrap(), h);
        let (n, len) = h.nonce(0x0102_0304, true);
        assert_eq!(len, 24);
        assert_eq!(&n[..19], &prefix);
        assert_eq!(n[19..24], [1, 2, 3, 4, 1]);
        let (n, len) = h.nonce(MAX_SEGMENTS - 1, false);
        assert_eq!(n[19..len], [0xff, 0xff, 0xff, 0xff, 0]);

        let h = Header::new(Algorithm::Aes256Gcm, KeySource::Key, &salt, &prefix[..7]).unwrap();
        assert_eq!(h.as_bytes().len(), 63);
        assert_eq!(h.as_bytes()[9..24], [3, 1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(h.nonce(5, false).1, 12);
        assert!(Header::new(Algorithm::Aes256Gcm, KeySource::Key, &salt, &prefix).is_err());
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn argon2_validity_matches_params_new() {
        for m in [0u32, 1, 7, 8, 15, 16, 63, 64, 65, 4096, u32::MAX] {
            for t in [0u32, 1, 2, u32::MAX] {
                for p in [0u32, 1, 2, 8, 64, (1 << 24) - 1, 1 << 24, u32::MAX] {
                    assert_eq!(
                        argon2_params_valid(m, t, p),
                        crate::kdf::argon2::Params::new(m, t, p).is_ok(),
                        "m={m} t={t} p={p}"
                    );
                }
            }
        }
    }

    #[test]
    fn segment_index_limits() {
        assert!(FileKey::index_fits(MAX_SEGMENTS - 1, true));
        assert!(!FileKey::index_fits(MAX_SEGMENTS - 1, false));
        assert!(FileKey::index_fits(MAX_SEGMENTS - 2, false));
        assert!(!FileKey::index_fits(MAX_SEGMENTS, true));
        let h = Header::new(Algorithm::XChaCha20Poly1305, KeySource::Key, &[1; 32], &[2; 19]).unwrap();
        let k = FileKey::from_key(&h, &[3; 32]).unwrap();
        let mut seg = [0u8; 10];
        assert_eq!(k.seal_segment(MAX_SEGMENTS, true, &mut seg), Err(Error::CounterExhausted { algorithm: NAME }));
        assert_eq!(k.open_segment(MAX_SEGMENTS, true, &mut seg, &[0; 16]), Err(errors::TOO_MANY_SEGMENTS));
        // The last possible segment seals and opens.
        let tag = k.seal_segment(MAX_SEGMENTS - 1, true, &mut seg).unwrap();
        k.open_segment(MAX_SEGMENTS - 1, true, &mut seg, &tag).unwrap();
        assert_eq!(seg, [0u8; 10]);
    }
}
