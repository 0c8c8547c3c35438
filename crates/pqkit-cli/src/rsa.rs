//! RSA commands.
//!
//! - `pqkit keygen --alg rsa2048|rsa3072|rsa4096 -o SK --pub PK`: PKCS#8 PEM private key (mode 0600) and
//!   SubjectPublicKeyInfo PEM public key, the files `openssl genpkey` / `openssl pkey -pubout` write;
//! - `pqkit sign sign|verify --alg rsa-pss|rsa-pkcs1 [--hash sha256|sha384|sha512]` (through [`crate::pq::sign`]):
//!   signatures raw or in hex, as for the other algorithms; key files may also be PKCS#1 (`RSA PRIVATE KEY`,
//!   `RSA PUBLIC KEY`) and DER.
//!
//! Known-answer primitives with hex in and hex out, keys given as their hex components (the form
//! RFC 8017 and NIST test vectors print them in):
//!
//! - `pqkit rsa public --n HEX --e HEX --input HEX`: RSAEP / RSAVP1, `input^e mod n`;
//! - `pqkit rsa private --n HEX --e HEX --d HEX --p HEX --q HEX --input HEX`: RSADP / RSASP1, `input^d mod n`
//!   (with CRT, blinding and the check against the public operation, as the library always does it).
//!
//! `--input` must be exactly as long as the modulus (leading zeros included) and below it. The result is printed
//! as hex of the modulus length. Errors name the option, never a secret value.

use crate::pq::{check_new, in_file, print_line, read_file, read_input, write_new};
use crate::{CliError, CliResult};
use clap::{Args, Subcommand, ValueEnum};
use pqkit::rsa::{HashAlg, RsaPrivateKey, RsaPublicKey, pkcs1v15, pss};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Decodes a hex option (whitespace ignored); the error names the option, never its value (it may be a key).
fn unhex(opt: &str, s: &str) -> CliResult<Zeroizing<Vec<u8>>> {
    let s: Zeroizing<String> = Zeroizing::new(s.chars().filter(|c| !c.is_whitespace()).collect());
    hex::decode(s.as_str()).map(Zeroizing::new).map_err(|_| CliError::usage(format!("{opt}: not valid hex")))
}

/// The public components.
#[derive(Args)]
struct PublicComponents {
    /// The modulus n, hex (big-endian).
    #[arg(long, value_name = "HEX")]
    n: String,
    /// The public exponent e, hex (big-endian), e.g. 010001.
    #[arg(long, value_name = "HEX")]
    e: String,
}

#[derive(Args)]
pub struct RsaArgs {
    #[command(subcommand)]
    cmd: RsaCmd,
}

#[derive(Subcommand)]
enum RsaCmd {
    /// The public-key operation input^e mod n (RSAEP / RSAVP1), printed in hex.
    Public {
        #[command(flatten)]
        key: PublicComponents,
        /// The input, hex, exactly the modulus length and below n.
        #[arg(long, value_name = "HEX")]
        input: String,
    },
    /// The private-key operation input^d mod n (RSADP / RSASP1), printed in hex. The key is checked (n = pq,
    /// d·e ≡ 1) before use.
    Private {
        #[command(flatten)]
        key: PublicComponents,
        /// The private exponent d, hex.
        #[arg(long, value_name = "HEX")]
        d: String,
        /// The first prime p, hex.
        #[arg(long, value_name = "HEX")]
        p: String,
        /// The second prime q, hex.
        #[arg(long, value_name = "HEX")]
        q: String,
        /// The input, hex, exactly the modulus length and below n.
        #[arg(long, value_name = "HEX")]
        input: String,
    },
}

fn public_key(k: &PublicComponents) -> CliResult<RsaPublicKey> {
    let (n, e) = (unhex("--n", &k.n)?, unhex("--e", &k.e)?);
    RsaPublicKey::new(&n, &e).map_err(|err| CliError::usage(format!("--n/--e: {err}")))
}

/// `pqkit rsa ...`.
pub fn run(a: RsaArgs) -> CliResult {
    match a.cmd {
        RsaCmd::Public { key, input } => {
            let pk = public_key(&key)?;
            let x = unhex("--input", &input)?;
            let y = pk.raw_public(&x).map_err(|err| CliError::usage(format!("--input: {err}")))?;
            print_line(&hex::encode(y))
        }
        RsaCmd::Private { key, d, p, q, input } => {
            let (n, e) = (unhex("--n", &key.n)?, unhex("--e", &key.e)?);
            let (d, p, q) = (unhex("--d", &d)?, unhex("--p", &p)?, unhex("--q", &q)?);
            let sk = RsaPrivateKey::from_components(&n, &e, &d, &p, &q)
                .map_err(|err| CliError::usage(format!("--n/--e/--d/--p/--q: {err}")))?;
            let x = unhex("--input", &input)?;
            let y = sk.raw_private(&x).map_err(|err| CliError::usage(format!("--input: {err}")))?;
            print_line(&Zeroizing::new(hex::encode(&y[..])))
        }
    }
}

// ---- pqkit keygen --alg rsaNNNN, pqkit sign sign|verify --alg rsa-pss|rsa-pkcs1 ----

/// An RSA key size for `pqkit keygen --alg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeyAlg {
    /// RSA with a 2048-bit modulus, e = 65537.
    #[value(name = "rsa2048")]
    Rsa2048,
    /// RSA with a 3072-bit modulus, e = 65537.
    #[value(name = "rsa3072")]
    Rsa3072,
    /// RSA with a 4096-bit modulus, e = 65537.
    #[value(name = "rsa4096")]
    Rsa4096,
}

impl KeyAlg {
    fn bits(self) -> usize {
        match self {
            KeyAlg::Rsa2048 => 2048,
            KeyAlg::Rsa3072 => 3072,
            KeyAlg::Rsa4096 => 4096,
        }
    }
}

/// The hash of an RSA signature (PSS: also MGF1's; the salt is as long as the hash).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SigHash {
    /// SHA-256.
    #[default]
    #[value(name = "sha256")]
    Sha256,
    /// SHA-384.
    #[value(name = "sha384")]
    Sha384,
    /// SHA-512.
    #[value(name = "sha512")]
    Sha512,
}

impl SigHash {
    fn alg(self) -> HashAlg {
        match self {
            SigHash::Sha256 => HashAlg::Sha256,
            SigHash::Sha384 => HashAlg::Sha384,
            SigHash::Sha512 => HashAlg::Sha512,
        }
    }
}

/// An RSA signature scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// RSASSA-PSS (RFC 8017 §8.1), MGF1 with the signature's hash, salt length = hash length.
    Pss,
    /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2).
    Pkcs1,
}

/// `pqkit keygen --alg rsa2048|rsa3072|rsa4096 --out SK --pub PK`: a fresh key pair (FIPS 186-5 probable
/// primes, e = 65537); the private key as PKCS#8 PEM (mode 0600), the public key as SubjectPublicKeyInfo PEM.
pub fn keygen(alg: KeyAlg, sk: &Path, pk: Option<&Path>, force: bool) -> CliResult {
    let pk = pk.ok_or_else(|| CliError::usage("--pub: required with --alg (where to write the public key)"))?;
    check_new(sk, force)?;
    check_new(pk, force)?;
    let mut rng = pqkit::rng::ChaCha20Rng::from_os_rng()?;
    let key = RsaPrivateKey::generate(alg.bits(), &mut rng)?;
    let pem = key.to_pkcs8_pem()?;
    let pub_pem = key.public_key().to_public_key_pem()?;
    write_new(sk, pem.as_bytes(), force, true)?;
    write_new(pk, pub_pem.as_bytes(), force, false)
}

/// The key file as PEM text, if it is one (else it is taken as DER).
fn as_pem(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok().filter(|s| s.contains("-----BEGIN "))
}

/// A private key file: PKCS#8 (`PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`, what `openssl genrsa -traditional`
/// writes), PEM or DER.
fn read_private(path: &Path) -> CliResult<RsaPrivateKey> {
    let data = read_file(path)?;
    match as_pem(&data) {
        Some(s) if s.contains("-----BEGIN RSA PRIVATE KEY-----") => RsaPrivateKey::from_pkcs1_pem(s),
        Some(s) => RsaPrivateKey::from_pkcs8_pem(s),
        None => RsaPrivateKey::from_pkcs8_der(&data).or_else(|e| RsaPrivateKey::from_pkcs1_der(&data).map_err(|_| e)),
    }
    .map_err(in_file(path))
}

/// A public key file: SubjectPublicKeyInfo (`PUBLIC KEY`) or PKCS#1 (`RSA PUBLIC KEY`), PEM or DER.
fn read_public(path: &Path) -> CliResult<RsaPublicKey> {
    let data = read_file(path)?;
    match as_pem(&data) {
        Some(s) if s.contains("-----BEGIN RSA PUBLIC KEY-----") => RsaPublicKey::from_pkcs1_pem(s),
        Some(s) => RsaPublicKey::from_public_key_pem(s),
        None => {
            RsaPublicKey::from_public_key_der(&data).or_else(|e| RsaPublicKey::from_pkcs1_der(&data).map_err(|_| e))
        }
    }
    .map_err(in_file(path))
}

/// `sign sign --alg rsa-pss|rsa-pkcs1 [--hash H]`: the signature (the modulus length) written raw to `out`, or
/// printed in hex. PSS draws its salt from the OS.
pub fn sign(
    scheme: Scheme,
    hash: SigHash,
    sk: &Path,
    out: Option<&Path>,
    force: bool,
    input: &Option<PathBuf>,
) -> CliResult {
    let key = read_private(sk)?;
    if let Some(o) = out {
        check_new(o, force)?;
    }
    let msg = read_input(input)?;
    let sig = match scheme {
        Scheme::Pss => pss::SigningKey::with_hash(key, hash.alg()).map_err(in_file(sk))?.sign(&msg)?,
        Scheme::Pkcs1 => pkcs1v15::SigningKey::with_hash(key, hash.alg()).map_err(in_file(sk))?.sign(&msg)?,
    };
    match out {
        Some(o) => write_new(o, &sig, force, false),
        None => print_line(&hex::encode(&sig)),
    }
}

/// `sign verify --alg rsa-pss|rsa-pkcs1 [--hash H]`: prints OK, or exits 1 when the signature does not verify
/// (wrong length, wrong key, wrong message or padding); 2 for a malformed key file.
pub fn verify(scheme: Scheme, hash: SigHash, vk: &Path, sig: &Path, input: &Option<PathBuf>) -> CliResult {
    let key = read_public(vk)?;
    let raw = read_file(sig)?;
    // Raw if it has the modulus length, else hex (as printed by `sign`).
    let sig_bytes = if raw.len() == key.size() {
        raw.to_vec()
    } else {
        match pqkit_cli::parse::hex::decode_file(&raw) {
            Some(v) => v,
            None => raw.to_vec(),
        }
    };
    let msg = read_input(input)?;
    let verdict = match scheme {
        Scheme::Pss => pss::VerifyingKey::with_hash(key, hash.alg()).verify(&msg, &sig_bytes),
        Scheme::Pkcs1 => pkcs1v15::VerifyingKey::with_hash(key, hash.alg()).verify(&msg, &sig_bytes),
    };
    match verdict {
        Ok(()) => print_line("OK"),
        // Every rejection of a signature (bad padding, wrong length, >= n) is a failed verification.
        Err(_) => Err(CliError::auth(format!("{}: signature verification failed", sig.display()))),
    }
}
