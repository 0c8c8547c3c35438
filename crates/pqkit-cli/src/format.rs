//! The pqkit file format v1 (see docs/file-format.md): header, key derivation, segment nonces, key files.

use crate::{CliError, CliResult};
use pqkit::aead::{Aead, Aes256Gcm, Kusumi512Poly1305, TAG_LEN, XChaCha20Poly1305};
use pqkit::hash::sha2::Sha512;
use pqkit::kdf::Hkdf;
use pqkit::kdf::argon2::{Argon2id, Params};
use std::io::{Read, Write};
use std::path::Path;
use zeroize::Zeroizing;

pub const MAGIC: [u8; 8] = *b"PQKITENC";
pub const VERSION: u8 = 1;
/// log2 of the plaintext segment size.
pub const SEG_LOG2: u8 = 16;
pub const SEG_LEN: usize = 1 << SEG_LOG2;
pub const SEG_CT_LEN: usize = SEG_LEN + TAG_LEN;
pub const SALT_LEN: usize = 32;
/// Fixed part of the header, before the nonce prefix.
pub const FIXED_LEN: usize = 56;
/// Segment counter is 32 bits.
pub const MAX_SEGMENTS: u64 = 1 << 32;

/// Key-source ids.
const SRC_KEYFILE: u8 = 1;
const SRC_ARGON2ID: u8 = 2;

/// Upper bounds a decrypting pqkit accepts from a header, so a forged header cannot make it allocate or spin
/// without limit before authentication.
pub const MAX_M_COST: u32 = 4 * 1024 * 1024; // 4 GiB
pub const MAX_T_COST: u32 = 64;
pub const MAX_P_COST: u32 = 64;

const KEYFILE_PREFIX: &str = "PQKIT-KEY-V1:";

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
    pub fn id(self) -> u8 {
        match self {
            FileAlg::XChaCha20Poly1305 => 1,
            FileAlg::Kusumi512Poly1305 => 2,
            FileAlg::Aes256Gcm => 3,
        }
    }
    pub fn from_id(id: u8) -> Option<Self> {
        match id {
            1 => Some(FileAlg::XChaCha20Poly1305),
            2 => Some(FileAlg::Kusumi512Poly1305),
            3 => Some(FileAlg::Aes256Gcm),
            _ => None,
        }
    }
    pub fn nonce_len(self) -> usize {
        match self {
            FileAlg::XChaCha20Poly1305 => XChaCha20Poly1305::NONCE_LEN,
            FileAlg::Kusumi512Poly1305 => Kusumi512Poly1305::NONCE_LEN,
            FileAlg::Aes256Gcm => Aes256Gcm::NONCE_LEN,
        }
    }
    pub fn key_len(self) -> usize {
        match self {
            FileAlg::XChaCha20Poly1305 => XChaCha20Poly1305::KEY_LEN,
            FileAlg::Kusumi512Poly1305 => Kusumi512Poly1305::KEY_LEN,
            FileAlg::Aes256Gcm => Aes256Gcm::KEY_LEN,
        }
    }
    /// Nonce = prefix || 4-byte counter || 1-byte last flag.
    pub fn prefix_len(self) -> usize {
        self.nonce_len() - 5
    }
}

/// Where the key comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySource {
    KeyFile,
    Argon2id { m_cost: u32, t_cost: u32, p_cost: u32 },
}

/// A parsed header.
#[derive(Clone, Debug)]
pub struct Header {
    pub alg: FileAlg,
    pub source: KeySource,
    pub salt: [u8; SALT_LEN],
    pub prefix: Vec<u8>,
}

impl Header {
    /// A new header with a fresh random salt and nonce prefix.
    pub fn new(alg: FileAlg, source: KeySource) -> CliResult<Self> {
        let mut salt = [0u8; SALT_LEN];
        let mut prefix = vec![0u8; alg.prefix_len()];
        pqkit::rng::fill_os(&mut salt).map_err(|e| CliError::usage(e.to_string()))?;
        pqkit::rng::fill_os(&mut prefix).map_err(|e| CliError::usage(e.to_string()))?;
        // Debug builds only: a fixed salt and prefix so tests can compare two encryptions byte for byte
        // (e.g. parallel against sequential). Release builds never read this variable.
        #[cfg(debug_assertions)]
        if let Some(seed) = std::env::var_os("PQKIT_TEST_FIXED_RANDOM") {
            let seed = seed.as_encoded_bytes();
            Hkdf::<Sha512>::derive(b"test", seed, b"salt", &mut salt).expect("short output");
            Hkdf::<Sha512>::derive(b"test", seed, b"prefix", &mut prefix).expect("short output");
        }
        Ok(Header { alg, source, salt, prefix })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(FIXED_LEN + self.prefix.len());
        h.extend_from_slice(&MAGIC);
        h.push(VERSION);
        h.push(self.alg.id());
        let (src, m, t, p) = match self.source {
            KeySource::KeyFile => (SRC_KEYFILE, 0, 0, 0),
            KeySource::Argon2id { m_cost, t_cost, p_cost } => (SRC_ARGON2ID, m_cost, t_cost, p_cost),
        };
        h.push(src);
        h.push(SEG_LOG2);
        h.extend_from_slice(&m.to_be_bytes());
        h.extend_from_slice(&t.to_be_bytes());
        h.extend_from_slice(&p.to_be_bytes());
        h.extend_from_slice(&self.salt);
        h.extend_from_slice(&self.prefix);
        h
    }

    /// Reads and validates a header; returns it with its exact bytes (the AAD of segment 0).
    /// Format errors are verification failures (exit 1): the input is not a valid pqkit file.
    pub fn read(r: &mut dyn Read, name: &str) -> CliResult<(Header, Vec<u8>)> {
        let mut fixed = [0u8; FIXED_LEN];
        let n = read_full(r, &mut fixed).map_err(|e| CliError::io(name, e))?;
        if n < MAGIC.len() || fixed[..8] != MAGIC {
            return Err(CliError::auth(format!("{name}: not a pqkit encrypted file (bad magic)")));
        }
        if n < FIXED_LEN {
            return Err(CliError::auth(format!("{name}: ciphertext truncated inside the header")));
        }
        if fixed[8] != VERSION {
            return Err(CliError::auth(format!(
                "{name}: unsupported format version {} (this pqkit reads version {VERSION}) or corrupted header",
                fixed[8]
            )));
        }
        let alg = FileAlg::from_id(fixed[9])
            .ok_or_else(|| CliError::auth(format!("{name}: unknown algorithm id {}: corrupted header", fixed[9])))?;
        if fixed[11] != SEG_LOG2 {
            return Err(CliError::auth(format!("{name}: unsupported segment size: corrupted header")));
        }
        let be = |i: usize| u32::from_be_bytes([fixed[i], fixed[i + 1], fixed[i + 2], fixed[i + 3]]);
        let (m, t, p) = (be(12), be(16), be(20));
        let source = match fixed[10] {
            SRC_KEYFILE if m == 0 && t == 0 && p == 0 => KeySource::KeyFile,
            SRC_ARGON2ID => {
                if Params::new(m, t, p).is_err() {
                    return Err(CliError::auth(format!("{name}: invalid Argon2id parameters: corrupted header")));
                }
                if m > MAX_M_COST || t > MAX_T_COST || p > MAX_P_COST {
                    return Err(CliError::auth(format!(
                        "{name}: header asks for Argon2id m={m} KiB, t={t}, p={p}, above this pqkit's limits \
                         (m <= {MAX_M_COST}, t <= {MAX_T_COST}, p <= {MAX_P_COST}): refusing (corrupted header?)"
                    )));
                }
                KeySource::Argon2id { m_cost: m, t_cost: t, p_cost: p }
            }
            _ => return Err(CliError::auth(format!("{name}: unknown key source: corrupted header"))),
        };
        let mut salt = [0u8; SALT_LEN];
        salt.copy_from_slice(&fixed[24..56]);
        let mut prefix = vec![0u8; alg.prefix_len()];
        let n = read_full(r, &mut prefix).map_err(|e| CliError::io(name, e))?;
        if n < prefix.len() {
            return Err(CliError::auth(format!("{name}: ciphertext truncated inside the header")));
        }
        let header = Header { alg, source, salt, prefix };
        let bytes = header.encode();
        Ok((header, bytes))
    }

    /// The nonce of segment `index`.
    pub fn nonce(&self, index: u64, last: bool) -> Vec<u8> {
        let mut n = Vec::with_capacity(self.alg.nonce_len());
        n.extend_from_slice(&self.prefix);
        n.extend_from_slice(&(index as u32).to_be_bytes());
        n.push(last as u8);
        n
    }

    /// The file key: HKDF-SHA-512(salt = header salt, ikm, info = "pqkit file key v1" || alg id).
    pub fn file_key(&self, ikm: &[u8]) -> Zeroizing<Vec<u8>> {
        let mut key = Zeroizing::new(vec![0u8; self.alg.key_len()]);
        let mut info = b"pqkit file key v1".to_vec();
        info.push(self.alg.id());
        // 32 or 64 bytes is far below HKDF-SHA-512's 255 * 64 limit.
        Hkdf::<Sha512>::derive(&self.salt, ikm, &info, &mut key).expect("key length within HKDF limits");
        key
    }

    /// The input keying material from a passphrase: Argon2id(passphrase, salt, header costs), 32 bytes.
    pub fn stretch(&self, passphrase: &[u8]) -> CliResult<Zeroizing<Vec<u8>>> {
        let KeySource::Argon2id { m_cost, t_cost, p_cost } = self.source else {
            return Err(CliError::usage("internal: not a passphrase header"));
        };
        let params = Params::new(m_cost, t_cost, p_cost)?;
        let mut out = Zeroizing::new(vec![0u8; 32]);
        Argon2id::new(params).hash(passphrase, &self.salt, &mut out)?;
        Ok(out)
    }
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

/// `pqkit keygen`: 32 random bytes, written as `PQKIT-KEY-V1:<64 hex>\n` with mode 0600.
pub fn keygen(path: &Path, force: bool) -> CliResult {
    let name = path.display().to_string();
    let mut key = Zeroizing::new([0u8; 32]);
    pqkit::rng::fill_os(&mut key[..]).map_err(|e| CliError::usage(e.to_string()))?;
    let text = Zeroizing::new(format!("{KEYFILE_PREFIX}{}\n", hex::encode(&key[..])));
    if force && path.exists() {
        std::fs::remove_file(path).map_err(|e| CliError::io(&name, e))?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::usage(format!("{name}: already exists (use --force to replace it)"))
        } else {
            CliError::io(&name, e)
        }
    })?;
    f.write_all(text.as_bytes()).and_then(|_| f.sync_all()).map_err(|e| CliError::io(&name, e))?;
    Ok(())
}

/// Reads a key file; errors name the file, never its content.
pub fn read_keyfile(path: &Path) -> CliResult<Zeroizing<Vec<u8>>> {
    let name = path.display().to_string();
    let text = Zeroizing::new(std::fs::read(path).map_err(|e| CliError::io(&name, e))?);
    let bad = || CliError::usage(format!("{name}: not a pqkit key file (expected {KEYFILE_PREFIX} and 64 hex digits)"));
    let s = std::str::from_utf8(&text).map_err(|_| bad())?.trim_end();
    let hexpart = s.strip_prefix(KEYFILE_PREFIX).ok_or_else(bad)?;
    if hexpart.len() != 64 {
        return Err(bad());
    }
    let key = Zeroizing::new(hex::decode(hexpart).map_err(|_| bad())?);
    Ok(key)
}
