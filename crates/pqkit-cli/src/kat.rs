//! Known-answer and interop commands: hex in, hex out.

use crate::error::{CliError, CliResult};
use clap::{Args, Subcommand, ValueEnum};
use pqkit::aead::legacy::GreenfieldKusumi512Poly1305;
use pqkit::aead::{Aead, Aes128Gcm, Aes256Gcm, ChaCha20Poly1305, Kusumi512Poly1305, XChaCha20Poly1305};
use pqkit::chacha::{ChaCha20, XChaCha20};
use pqkit::cipher::StreamCipher;
use pqkit::hash::Hasher;
use pqkit::hash::blake2::Blake2b512;
use pqkit::hash::sha2::{Sha256, Sha384, Sha512};
use pqkit::hash::sha3::{Sha3_256, Sha3_512};
use pqkit::kdf::Hkdf;
use pqkit::kdf::argon2::{Argon2id, Params};
use pqkit::kusumi::Kusumi512;
use pqkit::mac::Hmac;
use pqkit::threefish::Threefish512Ctr;
use std::io::{Read, Write};
use zeroize::Zeroizing;

/// Decodes a hex argument; the error names the option, never its value (it may be a key).
fn unhex(opt: &str, s: &str) -> CliResult<Zeroizing<Vec<u8>>> {
    pqkit_cli::parse::hex::decode_spaced(s).ok_or_else(|| CliError::usage(format!("{opt}: not valid hex")))
}

fn read_stdin(hex_in: bool) -> CliResult<Zeroizing<Vec<u8>>> {
    let mut v = Zeroizing::new(Vec::new());
    std::io::stdin().lock().read_to_end(&mut v).map_err(|e| CliError::io("stdin", e))?;
    if hex_in {
        return pqkit_cli::parse::hex::decode_stdin(&v).ok_or_else(|| CliError::usage("stdin: not valid hex"));
    }
    Ok(v)
}

fn write_out(data: &[u8], hex_out: bool) -> CliResult {
    let mut o = std::io::stdout().lock();
    let r = if hex_out { writeln!(o, "{}", hex::encode(data)) } else { o.write_all(data) };
    r.and_then(|_| o.flush()).map_err(|e| CliError::io("stdout", e))
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum CipherAlg {
    Chacha20,
    Xchacha20,
    Kusumi512,
    #[value(name = "threefish512-ctr")]
    Threefish512Ctr,
}

#[derive(Args)]
pub struct CipherArgs {
    #[arg(long, value_enum)]
    alg: CipherAlg,
    /// Key, hex.
    #[arg(long)]
    key: String,
    /// Nonce, hex (threefish512-ctr: the 16-byte tweak).
    #[arg(long)]
    nonce: String,
    /// Initial block counter. Default: the library's (0; Kusumi512: 1).
    #[arg(long)]
    counter: Option<u64>,
    /// Read hex from stdin and print hex.
    #[arg(long)]
    hex: bool,
}

pub fn cipher(a: CipherArgs) -> CliResult {
    let key = unhex("--key", &a.key)?;
    let nonce = unhex("--nonce", &a.nonce)?;
    let mut data = read_stdin(a.hex)?;
    let c32 = |c: u64| u32::try_from(c).map_err(|_| CliError::usage("--counter must fit in 32 bits for this cipher"));
    let mut c: Box<dyn StreamCipher> = match (a.alg, a.counter) {
        (CipherAlg::Chacha20, None) => Box::new(ChaCha20::new(&key, &nonce)?),
        (CipherAlg::Chacha20, Some(n)) => Box::new(ChaCha20::new_with_counter(&key, &nonce, c32(n)?)?),
        (CipherAlg::Xchacha20, None) => Box::new(XChaCha20::new(&key, &nonce)?),
        (CipherAlg::Xchacha20, Some(n)) => Box::new(XChaCha20::new_with_counter(&key, &nonce, c32(n)?)?),
        (CipherAlg::Kusumi512, None) => Box::new(Kusumi512::new(&key, &nonce)?),
        (CipherAlg::Kusumi512, Some(n)) => Box::new(Kusumi512::new_with_counter(&key, &nonce, n)?),
        (CipherAlg::Threefish512Ctr, None) => Box::new(Threefish512Ctr::new(&key, &nonce)?),
        (CipherAlg::Threefish512Ctr, Some(n)) => Box::new(Threefish512Ctr::new_with_counter(&key, &nonce, n)?),
    };
    c.apply_keystream(&mut data)?;
    write_out(&data, a.hex)
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum AeadAlg {
    #[value(name = "chacha20-poly1305")]
    ChaCha20Poly1305,
    #[value(name = "xchacha20-poly1305")]
    XChaCha20Poly1305,
    #[value(name = "kusumi512-poly1305")]
    Kusumi512Poly1305,
    /// The legacy GreenfieldPQC format (no AAD). For reading old data.
    #[value(name = "greenfield-kusumi512-poly1305")]
    GreenfieldKusumi512Poly1305,
    #[value(name = "aes-128-gcm")]
    Aes128Gcm,
    #[value(name = "aes-256-gcm")]
    Aes256Gcm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Subcommand)]
pub enum AeadOp {
    /// Encrypt stdin; output ciphertext || tag.
    Seal,
    /// Verify and decrypt ciphertext || tag from stdin. Exit 1 if it does not authenticate.
    Open,
}

#[derive(Args)]
pub struct AeadArgs {
    #[command(subcommand)]
    op: AeadOp,
    #[arg(long, value_enum, global = true)]
    alg: Option<AeadAlg>,
    /// Key, hex.
    #[arg(long, global = true)]
    key: Option<String>,
    /// Nonce, hex.
    #[arg(long, global = true)]
    nonce: Option<String>,
    /// Associated data, hex.
    #[arg(long, global = true, default_value = "")]
    aad: String,
    /// Input and output in hex.
    #[arg(long, global = true)]
    hex: bool,
}

fn run_aead<A: Aead>(a: A, op: AeadOp, nonce: &[u8], aad: &[u8], data: &[u8]) -> pqkit::Result<Vec<u8>> {
    match op {
        AeadOp::Seal => a.seal(nonce, aad, data),
        AeadOp::Open => a.open(nonce, aad, data),
    }
}

pub fn aead(a: AeadArgs) -> CliResult {
    let need = |o: Option<String>, n: &str| o.ok_or_else(|| CliError::usage(format!("{n} is required")));
    let alg = a.alg.ok_or_else(|| CliError::usage("--alg is required"))?;
    let key = unhex("--key", &need(a.key, "--key")?)?;
    let nonce = unhex("--nonce", &need(a.nonce, "--nonce")?)?;
    let aad = unhex("--aad", &a.aad)?;
    let data = read_stdin(a.hex)?;
    let out = match alg {
        AeadAlg::ChaCha20Poly1305 => run_aead(ChaCha20Poly1305::new(&key)?, a.op, &nonce, &aad, &data),
        AeadAlg::XChaCha20Poly1305 => run_aead(XChaCha20Poly1305::new(&key)?, a.op, &nonce, &aad, &data),
        AeadAlg::Kusumi512Poly1305 => run_aead(Kusumi512Poly1305::new(&key)?, a.op, &nonce, &aad, &data),
        AeadAlg::Aes128Gcm => run_aead(Aes128Gcm::new(&key)?, a.op, &nonce, &aad, &data),
        AeadAlg::Aes256Gcm => run_aead(Aes256Gcm::new(&key)?, a.op, &nonce, &aad, &data),
        AeadAlg::GreenfieldKusumi512Poly1305 => {
            if !aad.is_empty() {
                return Err(CliError::usage("greenfield-kusumi512-poly1305 has no associated data: drop --aad"));
            }
            let g = GreenfieldKusumi512Poly1305::new(&key)?;
            match a.op {
                AeadOp::Seal => g.seal(&nonce, &data),
                AeadOp::Open => g.open(&nonce, &data),
            }
        }
    };
    let out = Zeroizing::new(out?);
    write_out(&out, a.hex)
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum MacAlg {
    #[value(name = "hmac-sha256")]
    HmacSha256,
    #[value(name = "hmac-sha384")]
    HmacSha384,
    #[value(name = "hmac-sha512")]
    HmacSha512,
    #[value(name = "hmac-sha3-256")]
    HmacSha3_256,
    #[value(name = "hmac-sha3-512")]
    HmacSha3_512,
    #[value(name = "hmac-blake2b512")]
    HmacBlake2b512,
}

#[derive(Args)]
pub struct MacArgs {
    #[arg(value_enum)]
    alg: MacAlg,
    /// Key, hex.
    #[arg(long)]
    key: String,
    /// Read the message from stdin as hex.
    #[arg(long)]
    hex: bool,
}

fn mac_with<H: Hasher>(key: &[u8], msg: &[u8]) -> Vec<u8> {
    Hmac::<H>::new(key).mac(msg).as_ref().to_vec()
}

pub fn mac(a: MacArgs) -> CliResult {
    let key = unhex("--key", &a.key)?;
    let msg = read_stdin(a.hex)?;
    let tag = match a.alg {
        MacAlg::HmacSha256 => mac_with::<Sha256>(&key, &msg),
        MacAlg::HmacSha384 => mac_with::<Sha384>(&key, &msg),
        MacAlg::HmacSha512 => mac_with::<Sha512>(&key, &msg),
        MacAlg::HmacSha3_256 => mac_with::<Sha3_256>(&key, &msg),
        MacAlg::HmacSha3_512 => mac_with::<Sha3_512>(&key, &msg),
        MacAlg::HmacBlake2b512 => mac_with::<Blake2b512>(&key, &msg),
    };
    write_out(&tag, true)
}

#[derive(Args)]
pub struct KdfArgs {
    #[command(subcommand)]
    kdf: KdfCmd,
}

#[derive(Subcommand)]
enum KdfCmd {
    /// HKDF-SHA-256 (RFC 5869).
    #[command(name = "hkdf-sha256")]
    HkdfSha256(HkdfArgs),
    /// HKDF-SHA-512 (RFC 5869).
    #[command(name = "hkdf-sha512")]
    HkdfSha512(HkdfArgs),
    /// Argon2id (RFC 9106), all inputs in hex.
    Argon2id(Argon2Args),
}

#[derive(Args)]
struct HkdfArgs {
    #[arg(long)]
    ikm: String,
    #[arg(long, default_value = "")]
    salt: String,
    #[arg(long, default_value = "")]
    info: String,
    /// Output length in bytes.
    #[arg(long)]
    len: usize,
}

#[derive(Args)]
struct Argon2Args {
    /// Password, hex.
    #[arg(long)]
    password: String,
    /// Salt, hex (at least 8 bytes).
    #[arg(long)]
    salt: String,
    /// Secret key K, hex.
    #[arg(long, default_value = "")]
    secret: String,
    /// Associated data X, hex.
    #[arg(long, default_value = "")]
    ad: String,
    /// Memory in KiB.
    #[arg(long, short = 'm')]
    memory: u32,
    /// Passes.
    #[arg(long, short = 't')]
    passes: u32,
    /// Lanes.
    #[arg(long, short = 'p')]
    lanes: u32,
    /// Output length in bytes.
    #[arg(long, default_value_t = 32)]
    len: usize,
}

const MAX_KDF_OUT: usize = 1 << 20;

pub fn kdf(a: KdfArgs) -> CliResult {
    let out = match a.kdf {
        KdfCmd::HkdfSha256(h) | KdfCmd::HkdfSha512(h) if h.len > MAX_KDF_OUT => {
            return Err(CliError::usage(format!("--len {} too large", h.len)));
        }
        KdfCmd::HkdfSha256(h) => {
            let mut o = Zeroizing::new(vec![0u8; h.len]);
            Hkdf::<Sha256>::derive(
                &unhex("--salt", &h.salt)?,
                &unhex("--ikm", &h.ikm)?,
                &unhex("--info", &h.info)?,
                &mut o,
            )?;
            o
        }
        KdfCmd::HkdfSha512(h) => {
            let mut o = Zeroizing::new(vec![0u8; h.len]);
            Hkdf::<Sha512>::derive(
                &unhex("--salt", &h.salt)?,
                &unhex("--ikm", &h.ikm)?,
                &unhex("--info", &h.info)?,
                &mut o,
            )?;
            o
        }
        KdfCmd::Argon2id(g) => {
            if g.len > MAX_KDF_OUT {
                return Err(CliError::usage(format!("--len {} too large", g.len)));
            }
            let mut o = Zeroizing::new(vec![0u8; g.len]);
            Argon2id::new(Params::new(g.memory, g.passes, g.lanes)?).hash_with(
                &unhex("--password", &g.password)?,
                &unhex("--salt", &g.salt)?,
                &unhex("--secret", &g.secret)?,
                &unhex("--ad", &g.ad)?,
                &mut o,
            )?;
            o
        }
    };
    write_out(&out, true)
}

#[derive(Args)]
pub struct RandArgs {
    /// Number of bytes.
    n: u64,
    /// Print hex instead of raw bytes.
    #[arg(long)]
    hex: bool,
}

pub fn rand(a: RandArgs) -> CliResult {
    let mut o = std::io::stdout().lock();
    let mut left = a.n;
    let mut buf = vec![0u8; 1 << 16];
    while left > 0 {
        let k = left.min(buf.len() as u64) as usize;
        pqkit::rng::fill_os(&mut buf[..k]).map_err(|e| CliError::usage(e.to_string()))?;
        let r = if a.hex { write!(o, "{}", hex::encode(&buf[..k])) } else { o.write_all(&buf[..k]) };
        r.map_err(|e| CliError::io("stdout", e))?;
        left -= k as u64;
    }
    if a.hex {
        writeln!(o).map_err(|e| CliError::io("stdout", e))?;
    }
    o.flush().map_err(|e| CliError::io("stdout", e))
}
