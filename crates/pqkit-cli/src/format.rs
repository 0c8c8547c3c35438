//! The command line's side of the pqkit file format v1 (docs/file-format.md): the `--alg` names, fresh
//! headers, key files. The format itself (header, key derivation, segment nonces, sealing and opening) is
//! `pqkit::aead::stream`.

use crate::error::{CliError, CliResult};
use pqkit::aead::stream::{Algorithm, Header, KeySource};
use std::io::Read;
use std::path::Path;
use zeroize::Zeroizing;

const KEYFILE_PREFIX: &str = crate::keyfile::SYMMETRIC_PREFIX;

/// The file-encryption AEADs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FileAlg {
    /// XChaCha20-Poly1305 (the default).
    #[value(name = "xchacha20-poly1305")]
    XChaCha20Poly1305,
    /// Kusumi512-Poly1305 (64-byte key).
    #[value(name = "kusumi512-poly1305")]
    Kusumi512Poly1305,
    /// AES-256-GCM.
    #[value(name = "aes-256-gcm")]
    Aes256Gcm,
}

impl FileAlg {
    /// The library's name for it.
    pub fn algorithm(self) -> Algorithm {
        match self {
            FileAlg::XChaCha20Poly1305 => Algorithm::XChaCha20Poly1305,
            FileAlg::Kusumi512Poly1305 => Algorithm::Kusumi512Poly1305,
            FileAlg::Aes256Gcm => Algorithm::Aes256Gcm,
        }
    }
}

/// A new header with a fresh random salt and nonce prefix.
pub fn new_header(alg: FileAlg, source: KeySource) -> CliResult<Header> {
    let alg = alg.algorithm();
    // Debug builds only: a fixed salt and prefix so tests can compare two encryptions byte for byte
    // (e.g. parallel against sequential). Release builds never read this variable.
    #[cfg(debug_assertions)]
    if let Some(seed) = std::env::var_os("PQKIT_TEST_FIXED_RANDOM") {
        use pqkit::hash::sha2::Sha512;
        use pqkit::kdf::Hkdf;
        let seed = seed.as_encoded_bytes();
        let mut salt = [0u8; pqkit::aead::stream::SALT_LEN];
        let mut prefix = vec![0u8; alg.prefix_len()];
        Hkdf::<Sha512>::derive(b"test", seed, b"salt", &mut salt).expect("short output");
        Hkdf::<Sha512>::derive(b"test", seed, b"prefix", &mut prefix).expect("short output");
        return Ok(Header::new(alg, source, &salt, &prefix)?);
    }
    Ok(Header::random(alg, source)?)
}

/// Reads until `buf` is full or EOF; returns the number of bytes read.
pub fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A new symmetric key file's text: 32 random bytes as `PQKIT-KEY-V1:<64 hex>\n` (`pqkit keygen`).
pub fn new_symmetric_key_text() -> CliResult<Zeroizing<Vec<u8>>> {
    let mut key = Zeroizing::new([0u8; 32]);
    pqkit::rng::fill_os(&mut key[..]).map_err(|e| CliError::usage(e.to_string()))?;
    Ok(Zeroizing::new(format!("{KEYFILE_PREFIX}{}\n", hex::encode(&key[..])).into_bytes()))
}

/// Reads a key file; errors name the file, never its content.
pub fn read_keyfile(path: &Path) -> CliResult<Zeroizing<Vec<u8>>> {
    let name = path.display().to_string();
    let text = Zeroizing::new(std::fs::read(path).map_err(|e| CliError::io(&name, e))?);
    crate::io::warn_if_exposed(path);
    let bad = || CliError::usage(format!("{name}: not a pqkit key file (expected {KEYFILE_PREFIX} and 64 hex digits)"));
    let s = std::str::from_utf8(&text).map_err(|_| bad())?.trim_end();
    let hexpart = s.strip_prefix(KEYFILE_PREFIX).ok_or_else(bad)?;
    if hexpart.len() != 64 {
        return Err(bad());
    }
    let key = Zeroizing::new(hex::decode(hexpart).map_err(|_| bad())?);
    Ok(key)
}
