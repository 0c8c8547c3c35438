//! Elliptic-curve commands: `pqkit sign --alg ed25519` (the keygen/sign/verify functions below, called from
//! [`crate::pq::sign`]) and `pqkit ecdh` (X25519).
//!
//! Keys are written as PEM: private keys as PKCS#8 `PRIVATE KEY` (mode 0600), public keys as
//! SubjectPublicKeyInfo `PUBLIC KEY` (RFC 8410), the files `openssl genpkey`/`openssl pkey` make and read.
//! Key files are read as PEM, or as DER when they are not PEM text. Signatures are the raw 64 bytes with
//! `--out`, else printed in hex; shared secrets are printed in hex. Errors name the file, never a secret.

use crate::pq::{check_new, in_file, print_line, read_file, read_input, unhex, write_new};
use crate::{CliError, CliResult};
use clap::{Args, Subcommand, ValueEnum};
use pqkit::ec::ed25519::{self, SigningKey, VerifyingKey};
use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey};
use std::path::{Path, PathBuf};

/// A key-agreement algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EcdhAlg {
    /// X25519 (RFC 7748).
    #[value(name = "x25519")]
    X25519,
}

#[derive(Args)]
pub struct EcdhArgs {
    #[command(subcommand)]
    cmd: EcdhCmd,
}

#[derive(Subcommand)]
enum EcdhCmd {
    /// Make a key pair: the private key (PKCS#8 PEM, mode 0600) and the public key (SubjectPublicKeyInfo PEM).
    Keygen {
        #[arg(long)]
        alg: EcdhAlg,
        /// The 32-byte private key in hex (deterministic keygen, e.g. RFC 7748 §6.1); random if absent.
        #[arg(long, value_name = "HEX")]
        seed: Option<String>,
        /// Where to write the private key.
        #[arg(long, value_name = "FILE")]
        sk: PathBuf,
        /// Where to write the public key.
        #[arg(long, value_name = "FILE")]
        pk: PathBuf,
        /// Replace existing files.
        #[arg(long)]
        force: bool,
    },
    /// Derive the shared secret of our private key and the peer's public key; prints it in hex. A peer key
    /// of small order (all-zero secret) is refused.
    Derive {
        #[arg(long, default_value = "x25519")]
        alg: EcdhAlg,
        /// Our private key file (PKCS#8, PEM or DER).
        #[arg(long, value_name = "FILE")]
        sk: PathBuf,
        /// The peer's public key file (SubjectPublicKeyInfo, PEM or DER).
        #[arg(long, value_name = "FILE")]
        peer: PathBuf,
    },
}

/// The key file as PEM text, if it is one (else it is taken as DER).
fn as_pem(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok().filter(|s| s.contains("-----BEGIN "))
}

/// Reads a key file as PEM or DER with the given parsers; errors are prefixed with the file name.
fn read_key<K>(path: &Path, pem: fn(&str) -> pqkit::Result<K>, der: fn(&[u8]) -> pqkit::Result<K>) -> CliResult<K> {
    let data = read_file(path)?;
    match as_pem(&data) {
        Some(s) => pem(s),
        None => der(&data),
    }
    .map_err(in_file(path))
}

fn seed32(seed: Option<&[u8]>) -> Option<zeroize::Zeroizing<[u8; 32]>> {
    seed.map(|s| {
        let mut a = zeroize::Zeroizing::new([0u8; 32]);
        a.copy_from_slice(s);
        a
    })
}

// ---- Ed25519 (pqkit sign --alg ed25519) ----

/// `sign keygen --alg ed25519`; `seed` has been checked to be 32 bytes.
pub fn ed25519_keygen(seed: Option<&[u8]>, sk: &Path, vk: &Path, force: bool) -> CliResult {
    check_new(sk, force)?;
    check_new(vk, force)?;
    let key = match seed32(seed) {
        Some(s) => SigningKey::from_seed(&s),
        None => {
            let mut s = zeroize::Zeroizing::new([0u8; 32]);
            pqkit::rng::fill_os(&mut s[..])?;
            SigningKey::from_seed(&s)
        }
    };
    let pem = key.to_pkcs8_pem()?;
    let pub_pem = key.verifying_key().to_public_key_pem()?;
    write_new(sk, pem.as_bytes(), force, true)?;
    write_new(vk, pub_pem.as_bytes(), force, false)
}

/// Ed25519 (pure) has no context: a non-empty `--ctx` is refused rather than ignored.
fn no_context(ctx: &[u8]) -> CliResult {
    if ctx.is_empty() {
        Ok(())
    } else {
        Err(CliError::usage("--ctx: Ed25519 takes no context (it signs the message as is)"))
    }
}

/// `sign sign --alg ed25519`.
pub fn ed25519_sign(sk: &Path, ctx: &[u8], out: Option<&Path>, force: bool, input: &Option<PathBuf>) -> CliResult {
    no_context(ctx)?;
    let key = read_key(sk, SigningKey::from_pkcs8_pem, SigningKey::from_pkcs8_der)?;
    if let Some(o) = out {
        check_new(o, force)?;
    }
    let msg = read_input(input)?;
    let sig = key.sign(&msg);
    match out {
        Some(o) => write_new(o, sig.as_bytes(), force, false),
        None => print_line(&hex::encode(sig.as_bytes())),
    }
}

/// `sign verify --alg ed25519`: exit 1 when the signature does not verify, 2 when a file is malformed.
pub fn ed25519_verify(vk: &Path, sig: &Path, ctx: &[u8], input: &Option<PathBuf>) -> CliResult {
    no_context(ctx)?;
    let key = read_key(vk, VerifyingKey::from_public_key_pem, VerifyingKey::from_public_key_der)?;
    let raw = read_file(sig)?;
    // Raw if it has the signature length, else hex (as printed by `sign`).
    let sig_bytes = if raw.len() == ed25519::SIGNATURE_LEN {
        raw.to_vec()
    } else {
        match std::str::from_utf8(&raw).ok().and_then(|s| hex::decode(s.trim()).ok()) {
            Some(v) => v,
            None => raw.to_vec(),
        }
    };
    let s = ed25519::Signature::from_bytes(&sig_bytes).map_err(in_file(sig))?;
    let msg = read_input(input)?;
    match key.verify(&msg, &s) {
        Ok(()) => print_line("OK"),
        Err(pqkit::Error::AuthenticationFailed { .. }) => {
            Err(CliError::auth(format!("{}: signature verification failed", sig.display())))
        }
        // A malformed R: the signature file is at fault.
        Err(e) => Err(in_file(sig)(e)),
    }
}

// ---- X25519 (pqkit ecdh) ----

fn x25519_keygen(seed: Option<&[u8]>, sk: &Path, pk: &Path, force: bool) -> CliResult {
    check_new(sk, force)?;
    check_new(pk, force)?;
    let key = match seed32(seed) {
        Some(s) => X25519SecretKey::from_array(*s),
        None => {
            let mut s = zeroize::Zeroizing::new([0u8; 32]);
            pqkit::rng::fill_os(&mut s[..])?;
            X25519SecretKey::from_array(*s)
        }
    };
    let pem = key.to_pkcs8_pem()?;
    let pub_pem = key.public_key().to_public_key_pem()?;
    write_new(sk, pem.as_bytes(), force, true)?;
    write_new(pk, pub_pem.as_bytes(), force, false)
}

fn x25519_derive(sk: &Path, peer: &Path) -> CliResult {
    let key = read_key(sk, X25519SecretKey::from_pkcs8_pem, X25519SecretKey::from_pkcs8_der)?;
    let their = read_key(peer, X25519PublicKey::from_public_key_pem, X25519PublicKey::from_public_key_der)?;
    // An all-zero result means the peer's key has small order: that file is at fault.
    let ss = key.diffie_hellman(&their).map_err(in_file(peer))?;
    print_line(&zeroize::Zeroizing::new(hex::encode(ss.as_bytes())))
}

/// `pqkit ecdh ...`.
pub fn ecdh(a: EcdhArgs) -> CliResult {
    match a.cmd {
        EcdhCmd::Keygen { alg: EcdhAlg::X25519, seed, sk, pk, force } => {
            let seed = seed.map(|s| unhex("--seed", &s, Some(32))).transpose()?;
            x25519_keygen(seed.as_deref().map(|v| v.as_slice()), &sk, &pk, force)
        }
        EcdhCmd::Derive { alg: EcdhAlg::X25519, sk, peer } => x25519_derive(&sk, &peer),
    }
}
