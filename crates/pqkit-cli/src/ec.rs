//! Elliptic-curve commands: `pqkit sign --alg ed25519|p256|secp256k1` (the keygen/sign/verify functions
//! below, called from [`crate::pq::sign`]) and `pqkit ecdh --alg x25519|p256|secp256k1`.
//!
//! Keys are written as PEM: private keys as PKCS#8 `PRIVATE KEY` (mode 0600), public keys as
//! SubjectPublicKeyInfo `PUBLIC KEY` (RFC 8410 for the 25519 family, RFC 5480 for P-256 and secp256k1), the
//! files `openssl genpkey`/`openssl pkey` make and read. Key files are read as PEM, or as DER when they are
//! not PEM text; P-256 and secp256k1 private keys may also be SEC1 `EC PRIVATE KEY` files (what
//! `openssl ecparam -genkey` writes). Ed25519 signatures are the raw 64 bytes; ECDSA signatures are DER (as
//! `openssl dgst -sign` writes them), and P1363 `r || s` is accepted on verification. Signatures are written
//! raw with `--out`, else printed in hex; shared secrets are printed in hex. Errors name the file, never a
//! secret.

use crate::pq::{check_new, check_pair, in_file, print_line, read_file, read_input, unhex, write_new, write_pair};
use crate::{CliError, CliResult};
use clap::{Args, Subcommand, ValueEnum};
use pqkit::ec::ed25519::{self, SigningKey, VerifyingKey};
use pqkit::ec::weierstrass::{self as ws, PrimeCurve};
use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey};
use std::path::{Path, PathBuf};

/// A key-agreement algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EcdhAlg {
    /// X25519 (RFC 7748).
    #[value(name = "x25519")]
    X25519,
    /// ECDH on P-256 (SEC1 §3.3.1: the x-coordinate of the shared point).
    #[value(name = "p256")]
    P256,
    /// ECDH on secp256k1 (SEC1 §3.3.1: the x-coordinate of the shared point).
    #[value(name = "secp256k1")]
    Secp256k1,
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
        /// The 32-byte private key in hex (deterministic keygen, e.g. RFC 7748 §6.1; for P-256 and secp256k1
        /// the big-endian scalar, between 1 and n − 1); random if absent.
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
    /// of small order (X25519's all-zero secret) or not on the curve is refused.
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
    check_pair(sk, vk, force)?;
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
    write_pair(sk, pem.as_bytes(), vk, pub_pem.as_bytes(), force)
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
        match pqkit_cli::parse::hex::decode_file(&raw) {
            Some(v) => v,
            None => raw.to_vec(),
        }
    };
    let s = ed25519::Signature::from_bytes(&sig_bytes)
        .map_err(|e| CliError::auth(format!("{}: signature verification failed ({e})", sig.display())))?;
    let msg = read_input(input)?;
    match key.verify(&msg, &s) {
        Ok(()) => print_line("OK"),
        Err(pqkit::Error::AuthenticationFailed { .. }) => {
            Err(CliError::auth(format!("{}: signature verification failed", sig.display())))
        }
        // A malformed R: the signature file is at fault.
        Err(e) => Err(CliError::auth(format!("{}: signature verification failed ({e})", sig.display()))),
    }
}

// ---- X25519 (pqkit ecdh) ----

fn x25519_keygen(seed: Option<&[u8]>, sk: &Path, pk: &Path, force: bool) -> CliResult {
    check_pair(sk, pk, force)?;
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
    write_pair(sk, pem.as_bytes(), pk, pub_pem.as_bytes(), force)
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
        EcdhCmd::Keygen { alg, seed, sk, pk, force } => {
            let seed = seed.map(|s| unhex("--seed", &s, Some(32))).transpose()?;
            let s = seed.as_deref().map(|v| v.as_slice());
            match alg {
                EcdhAlg::X25519 => x25519_keygen(s, &sk, &pk, force),
                EcdhAlg::P256 => weierstrass_keygen::<P256>(s, &sk, &pk, force),
                EcdhAlg::Secp256k1 => weierstrass_keygen::<K256>(s, &sk, &pk, force),
            }
        }
        EcdhCmd::Derive { alg, sk, peer } => match alg {
            EcdhAlg::X25519 => x25519_derive(&sk, &peer),
            EcdhAlg::P256 => weierstrass_derive::<P256>(&sk, &peer),
            EcdhAlg::Secp256k1 => weierstrass_derive::<K256>(&sk, &peer),
        },
    }
}

// ---- P-256 and secp256k1 (pqkit sign --alg p256|secp256k1, pqkit ecdh --alg p256|secp256k1) ----

/// The P-256 curve.
pub type P256 = pqkit::ec::p256::NistP256;
/// The secp256k1 curve.
pub type K256 = pqkit::ec::secp256k1::Secp256k1;

/// A private key file: PKCS#8 or SEC1 `ECPrivateKey`, each as PEM or DER.
fn read_weierstrass_secret<C: PrimeCurve>(path: &Path) -> CliResult<ws::SecretKey<C>> {
    let data = zeroize::Zeroizing::new(read_file(path)?.to_vec());
    let parsed = match as_pem(&data) {
        Some(s) if s.contains("-----BEGIN EC PRIVATE KEY-----") => ws::SecretKey::<C>::from_sec1_pem(s),
        Some(s) => ws::SecretKey::<C>::from_pkcs8_pem(s),
        // DER: PKCS#8 first, then SEC1; the PKCS#8 error is the one reported.
        None => ws::SecretKey::<C>::from_pkcs8_der(&data)
            .or_else(|e| ws::SecretKey::<C>::from_sec1_der(&data).map_err(|_| e)),
    };
    parsed.map_err(in_file(path))
}

/// A public key file: SubjectPublicKeyInfo, PEM or DER.
fn read_weierstrass_public<C: PrimeCurve>(path: &Path) -> CliResult<ws::PublicKey<C>> {
    read_key(path, ws::PublicKey::<C>::from_public_key_pem, ws::PublicKey::<C>::from_public_key_der)
}

/// Key pair for ECDSA or ECDH on a short-Weierstrass curve: PKCS#8 PEM (mode 0600) and SubjectPublicKeyInfo
/// PEM. `seed` is the 32-byte big-endian secret scalar; a value of 0 or ≥ n is refused.
pub fn weierstrass_keygen<C: PrimeCurve>(seed: Option<&[u8]>, sk: &Path, pk: &Path, force: bool) -> CliResult {
    check_pair(sk, pk, force)?;
    let key = match seed {
        Some(s) => ws::SecretKey::<C>::from_bytes(s).map_err(|_| {
            CliError::usage(format!("--seed: not a {} private key (it must be between 1 and n - 1)", C::NAME))
        })?,
        None => {
            let mut rng = pqkit::rng::ChaChaRng::<20>::from_os_rng()?;
            ws::SecretKey::<C>::generate(&mut rng)
        }
    };
    let pem = key.to_pkcs8_pem()?;
    let pub_pem = key.public_key().to_public_key_pem()?;
    write_pair(sk, pem.as_bytes(), pk, pub_pem.as_bytes(), force)
}

fn weierstrass_derive<C: PrimeCurve>(sk: &Path, peer: &Path) -> CliResult {
    let key = read_weierstrass_secret::<C>(sk)?;
    let their = read_weierstrass_public::<C>(peer)?;
    let ss = key.diffie_hellman(&their).map_err(in_file(peer))?;
    print_line(&zeroize::Zeroizing::new(hex::encode(ss.as_bytes())))
}

/// `sign sign --alg p256|secp256k1`: ECDSA with SHA-256, RFC 6979 deterministic nonces unless `hedged`
/// (RFC 6979 §3.6 with 32 fresh random bytes). The signature is DER. secp256k1 signatures are low-S.
pub fn ecdsa_sign<C: PrimeCurve>(
    sk: &Path,
    ctx: &[u8],
    hedged: bool,
    out: Option<&Path>,
    force: bool,
    input: &Option<PathBuf>,
) -> CliResult {
    if !ctx.is_empty() {
        return Err(CliError::usage(format!("--ctx: ECDSA {} takes no context", C::NAME)));
    }
    let key = ws::SigningKey::<C>::from(read_weierstrass_secret::<C>(sk)?);
    if let Some(o) = out {
        check_new(o, force)?;
    }
    let msg = read_input(input)?;
    let sig = if hedged {
        let mut rng = pqkit::rng::ChaChaRng::<20>::from_os_rng()?;
        key.sign_hedged(&msg, &mut rng)
    } else {
        key.sign(&msg)
    };
    let der = sig.to_der();
    match out {
        Some(o) => write_new(o, der.as_bytes(), force, false),
        None => print_line(&hex::encode(der.as_bytes())),
    }
}

/// An ECDSA signature file: DER or P1363 (`r || s`, 64 bytes), raw or in hex.
fn read_ecdsa_signature<C: PrimeCurve>(path: &Path) -> CliResult<ws::Signature<C>> {
    let raw = read_file(path)?;
    let hexed = pqkit_cli::parse::hex::decode_file(&raw);
    let bytes: &[u8] = hexed.as_deref().unwrap_or(&raw);
    ws::Signature::<C>::from_der(bytes)
        .or_else(
            |e| if bytes.len() == ws::ecdsa::SIGNATURE_LEN { ws::Signature::<C>::from_bytes(bytes) } else { Err(e) },
        )
        .map_err(in_file(path))
}

/// `sign verify --alg p256|secp256k1`: exit 1 when the signature does not verify, 2 when a file is malformed
/// (with `low_s`, a high S counts as malformed).
pub fn ecdsa_verify<C: PrimeCurve>(
    vk: &Path,
    sig: &Path,
    ctx: &[u8],
    low_s: bool,
    input: &Option<PathBuf>,
) -> CliResult {
    if !ctx.is_empty() {
        return Err(CliError::usage(format!("--ctx: ECDSA {} takes no context", C::NAME)));
    }
    let key = ws::VerifyingKey::<C>::from(read_weierstrass_public::<C>(vk)?);
    // A malformed signature is a failed verification (exit 1); an unreadable file stays exit 2.
    let s = read_ecdsa_signature::<C>(sig).map_err(|e| match e {
        CliError::Usage(m) if sig.exists() => CliError::auth(format!("signature verification failed ({m})")),
        other => other,
    })?;
    let msg = read_input(input)?;
    let verdict = if low_s { key.verify_low_s(&msg, &s) } else { key.verify(&msg, &s) };
    match verdict {
        Ok(()) => print_line("OK"),
        Err(pqkit::Error::AuthenticationFailed { .. }) => {
            Err(CliError::auth(format!("{}: signature verification failed", sig.display())))
        }
        Err(e) => Err(CliError::auth(format!("{}: signature verification failed ({e})", sig.display()))),
    }
}
