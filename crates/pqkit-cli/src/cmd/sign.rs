//! `pqkit sign` and `pqkit verify`: ML-DSA (FIPS 204), Ed25519 (RFC 8032), ECDSA with SHA-256 on P-256 and
//! secp256k1 (RFC 6979 nonces), RSASSA-PSS and RSASSA-PKCS1-v1_5 (RFC 8017).
//!
//! The algorithm is read from the key file; `--alg` is needed only for RSA (the key does not say PSS or
//! PKCS#1 v1.5) and is checked against the key when given. Signatures are printed in hex, or written raw with
//! `-o FILE` (`-o -`: raw to stdout). Verification reads raw or hex signatures (ECDSA: DER or P1363 `r || s`)
//! and exits 1 when the signature does not verify.

use crate::cmd::keys::{K256, P256, rsa_private, rsa_public, weierstrass_public, weierstrass_secret};
use crate::error::{CliError, CliResult, in_file};
use crate::io::{print_line, read_file, read_input, unhex};
use crate::keyfile::{self, Kind};
use crate::output::Guard;
use clap::{Args, ValueEnum};
use pqkit::ec::ed25519;
use pqkit::ec::weierstrass::{self as ws, PrimeCurve};
use pqkit::mldsa::{self, MlDsa44, MlDsa65, MlDsa87};
use pqkit::rsa::{HashAlg, pkcs1v15, pss};
use std::path::{Path, PathBuf};

/// A signature algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SigAlg {
    /// ML-DSA-44 (FIPS 204).
    #[value(name = "ml-dsa-44")]
    MlDsa44,
    /// ML-DSA-65 (FIPS 204).
    #[value(name = "ml-dsa-65")]
    MlDsa65,
    /// ML-DSA-87 (FIPS 204).
    #[value(name = "ml-dsa-87")]
    MlDsa87,
    /// Ed25519 (RFC 8032).
    #[value(name = "ed25519")]
    Ed25519,
    /// ECDSA P-256 with SHA-256 (DER signatures).
    #[value(name = "p256")]
    P256,
    /// ECDSA secp256k1 with SHA-256 (low-S, DER signatures).
    #[value(name = "secp256k1")]
    Secp256k1,
    /// RSASSA-PSS (MGF1 with the same hash; --hash, --salt-len).
    #[value(name = "rsa-pss")]
    RsaPss,
    /// RSASSA-PKCS1-v1_5 (--hash).
    #[value(name = "rsa-pkcs1")]
    RsaPkcs1,
}

impl SigAlg {
    fn kind(self) -> Kind {
        match self {
            SigAlg::MlDsa44 => Kind::MlDsa44,
            SigAlg::MlDsa65 => Kind::MlDsa65,
            SigAlg::MlDsa87 => Kind::MlDsa87,
            SigAlg::Ed25519 => Kind::Ed25519,
            SigAlg::P256 => Kind::P256,
            SigAlg::Secp256k1 => Kind::Secp256k1,
            SigAlg::RsaPss | SigAlg::RsaPkcs1 => Kind::Rsa,
        }
    }
    fn name(self) -> String {
        self.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
    }
}

/// The hash of an RSA signature (PSS: also MGF1's).
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
    pub fn alg(self) -> HashAlg {
        match self {
            SigHash::Sha256 => HashAlg::Sha256,
            SigHash::Sha384 => HashAlg::Sha384,
            SigHash::Sha512 => HashAlg::Sha512,
        }
    }
}

/// RSA-PSS salt length: `auto` (verify: any length, recovered from the padding; sign: the digest length),
/// `digest` (the hash's output length), or a number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaltLen {
    Auto,
    Digest,
    Bytes(usize),
}

pub fn parse_salt_len(s: &str) -> Result<SaltLen, String> {
    match s {
        "auto" => Ok(SaltLen::Auto),
        "digest" => Ok(SaltLen::Digest),
        n => n.parse().map(SaltLen::Bytes).map_err(|_| format!("{n:?}: expected auto, digest or a number of bytes")),
    }
}

/// The options shared by sign and verify.
#[derive(Args, Default)]
pub struct SigOpts {
    /// The algorithm; read from the key file when absent (required for RSA: rsa-pss or rsa-pkcs1).
    #[arg(long, value_enum)]
    pub alg: Option<SigAlg>,
    /// Context string in hex (ML-DSA only, at most 255 bytes).
    #[arg(long, value_name = "HEX", default_value = "")]
    pub ctx: String,
    /// RSA: the hash (default sha256).
    #[arg(long, value_enum)]
    pub hash: Option<SigHash>,
    /// RSA-PSS salt length: auto, digest or N bytes. Signing: default digest (auto = digest). Verifying:
    /// default auto, any salt length (OpenSSL 3 signs with the maximum).
    #[arg(long, value_name = "LEN", value_parser = parse_salt_len)]
    pub salt_len: Option<SaltLen>,
}

#[derive(Args)]
pub struct SignNew {
    /// The private key file (PEM or DER; raw for ML-DSA).
    #[arg(long, short = 'k', value_name = "PRIVATE", alias = "sk", required = true)]
    pub key: Option<PathBuf>,
    #[command(flatten)]
    pub opts: SigOpts,
    /// ML-DSA: deterministic signing (rnd = 0) instead of hedged.
    #[arg(long, conflicts_with = "hedged")]
    pub deterministic: bool,
    /// ECDSA: hedged nonces (RFC 6979 §3.6 with fresh randomness) instead of deterministic ones.
    #[arg(long)]
    pub hedged: bool,
    /// Write the raw signature here (`-` for stdout) instead of printing it in hex.
    #[arg(long, short = 'o', value_name = "SIG")]
    pub out: Option<PathBuf>,
    /// Replace an existing output file (never the key or the message).
    #[arg(long, short = 'f')]
    pub force: bool,
    /// The message; stdin when absent or `-`.
    pub input: Option<PathBuf>,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The public key file (PEM or DER; raw for ML-DSA).
    #[arg(long, short = 'k', value_name = "PUBLIC", alias = "vk")]
    pub key: PathBuf,
    /// The signature file: raw or hex (ECDSA: DER or r || s).
    #[arg(long, value_name = "SIG")]
    pub sig: PathBuf,
    #[command(flatten)]
    pub opts: SigOpts,
    /// ECDSA: also refuse a signature whose S is above n/2 (the strict rule of Bitcoin and libsecp256k1); such
    /// a signature fails verification (exit 1).
    #[arg(long)]
    pub low_s: bool,
    /// The message; stdin when absent or `-`.
    pub input: Option<PathBuf>,
}

/// The algorithm for `key`: `--alg` checked against the file, or what the file says.
fn resolve(alg: Option<SigAlg>, k: &keyfile::KeyFile, path: &Path, private: bool) -> CliResult<SigAlg> {
    let a = match alg {
        Some(a) => {
            k.expect(path, &[a.kind()], private, Some(&a.name()))?;
            return Ok(a);
        }
        None => match k.kind {
            Kind::MlDsa44 => SigAlg::MlDsa44,
            Kind::MlDsa65 => SigAlg::MlDsa65,
            Kind::MlDsa87 => SigAlg::MlDsa87,
            Kind::Ed25519 => SigAlg::Ed25519,
            Kind::P256 => SigAlg::P256,
            Kind::Secp256k1 => SigAlg::Secp256k1,
            Kind::Rsa => {
                return Err(CliError::usage(format!(
                    "{}: an RSA key signs with --alg rsa-pss or --alg rsa-pkcs1: say which",
                    path.display()
                )));
            }
            other => {
                return Err(CliError::usage(format!(
                    "{}: the key is {other}; signatures need an ML-DSA, Ed25519, P-256, secp256k1 or RSA key",
                    path.display()
                )));
            }
        },
    };
    k.expect(path, &[a.kind()], private, None)?;
    Ok(a)
}

/// Refuses options that do not apply to `alg`.
fn check_opts(alg: SigAlg, o: &SigOpts, ctx: &[u8]) -> CliResult {
    let rsa = alg.kind() == Kind::Rsa;
    let mldsa = matches!(alg, SigAlg::MlDsa44 | SigAlg::MlDsa65 | SigAlg::MlDsa87);
    if !ctx.is_empty() && !mldsa {
        let k = alg.kind();
        return Err(CliError::usage(format!("--ctx: not for {k} ({k} takes no context; only ML-DSA does)")));
    }
    if o.hash.is_some() && !rsa {
        return Err(CliError::usage("--hash: only for RSA"));
    }
    if o.salt_len.is_some() && alg != SigAlg::RsaPss {
        return Err(CliError::usage("--salt-len: only for rsa-pss"));
    }
    Ok(())
}

/// `pqkit sign`.
pub fn sign(a: SignNew) -> CliResult {
    let key = a.key.as_deref().ok_or_else(|| CliError::usage("--key: required (the private key file)"))?;
    let mut g = Guard::new(a.force);
    g.protect(key, "key file");
    if let Some(i) = &a.input {
        g.protect(i, "message file");
    }
    let out = g.output_opt(a.out.as_deref())?;
    let k = keyfile::read(key)?;
    let alg = resolve(a.opts.alg, &k, key, true)?;
    let ctx = unhex("--ctx", &a.opts.ctx, None)?;
    check_opts(alg, &a.opts, &ctx)?;
    if a.hedged && !matches!(alg, SigAlg::P256 | SigAlg::Secp256k1) {
        return Err(CliError::usage(
            "--hedged: only for ECDSA (ML-DSA is hedged by default, Ed25519 is deterministic)",
        ));
    }
    if a.deterministic && !matches!(alg, SigAlg::MlDsa44 | SigAlg::MlDsa65 | SigAlg::MlDsa87) {
        return Err(CliError::usage("--deterministic: only for ML-DSA (Ed25519 and ECDSA are deterministic already)"));
    }
    let msg = read_input(&a.input)?;
    let f = in_file(key);
    let sig: Vec<u8> = match alg {
        SigAlg::MlDsa44 => mldsa_sign::<MlDsa44>(&k.data, &msg, &ctx, a.deterministic).map_err(&f)?,
        SigAlg::MlDsa65 => mldsa_sign::<MlDsa65>(&k.data, &msg, &ctx, a.deterministic).map_err(&f)?,
        SigAlg::MlDsa87 => mldsa_sign::<MlDsa87>(&k.data, &msg, &ctx, a.deterministic).map_err(&f)?,
        SigAlg::Ed25519 => ed25519::SigningKey::from_pkcs8_der(&k.data).map_err(&f)?.sign(&msg).as_bytes().to_vec(),
        SigAlg::P256 => ecdsa_sign::<P256>(&k, key, &msg, a.hedged)?,
        SigAlg::Secp256k1 => ecdsa_sign::<K256>(&k, key, &msg, a.hedged)?,
        SigAlg::RsaPss => {
            let h = a.opts.hash.unwrap_or_default().alg();
            let mut s = pss::SigningKey::with_hash(rsa_private(&k, key)?, h).map_err(&f)?;
            if let Some(SaltLen::Bytes(n)) = a.opts.salt_len {
                s = s.with_salt_len(n).map_err(|e| CliError::usage(format!("--salt-len: {e}")))?;
            }
            s.sign(&msg)?
        }
        SigAlg::RsaPkcs1 => {
            let h = a.opts.hash.unwrap_or_default().alg();
            pkcs1v15::SigningKey::with_hash(rsa_private(&k, key)?, h).map_err(&f)?.sign(&msg)?
        }
    };
    match out {
        Some(d) => g.write(&d, &sig, false),
        None => print_line(&hex::encode(&sig)),
    }
}

fn mldsa_sign<P: mldsa::Params>(sk: &[u8], msg: &[u8], ctx: &[u8], det: bool) -> pqkit::Result<Vec<u8>> {
    let key = mldsa::SigningKey::<P>::from_bytes(sk)?;
    let s = if det { key.sign_deterministic(msg, ctx)? } else { key.sign(msg, ctx)? };
    Ok(s.as_bytes().to_vec())
}

fn ecdsa_sign<C: PrimeCurve>(k: &keyfile::KeyFile, path: &Path, msg: &[u8], hedged: bool) -> CliResult<Vec<u8>> {
    let key = ws::SigningKey::<C>::from(weierstrass_secret::<C>(k, path)?);
    let sig = if hedged {
        let mut rng = pqkit::rng::ChaChaRng::<20>::from_os_rng()?;
        key.sign_hedged(msg, &mut rng)
    } else {
        key.sign(msg)
    };
    Ok(sig.to_der().as_bytes().to_vec())
}

/// A signature file's bytes: raw when it has the expected length (if one), else hex when it is hex.
fn sig_bytes(raw: &[u8], raw_len: Option<usize>) -> Vec<u8> {
    if raw_len == Some(raw.len()) {
        return raw.to_vec();
    }
    pqkit_cli::parse::hex::decode_file(raw).unwrap_or_else(|| raw.to_vec())
}

/// `pqkit verify`: prints OK, or exits 1 when the signature does not verify.
pub fn verify(a: VerifyArgs) -> CliResult {
    let k = keyfile::read(&a.key)?;
    let alg = resolve(a.opts.alg, &k, &a.key, false)?;
    let ctx = unhex("--ctx", &a.opts.ctx, None)?;
    check_opts(alg, &a.opts, &ctx)?;
    if a.low_s && !matches!(alg, SigAlg::P256 | SigAlg::Secp256k1) {
        return Err(CliError::usage("--low-s: only for ECDSA"));
    }
    let raw = read_file(&a.sig)?;
    let msg = read_input(&a.input)?;
    let fkey = in_file(&a.key);
    let failed = |why: Option<String>| {
        CliError::auth(match why {
            Some(w) => format!("{}: signature verification failed ({w})", a.sig.display()),
            None => format!("{}: signature verification failed", a.sig.display()),
        })
    };
    let verdict: pqkit::Result<()> = match alg {
        SigAlg::MlDsa44 => mldsa_verify::<MlDsa44>(&k.data, &raw, &msg, &ctx).map_err(&fkey)?,
        SigAlg::MlDsa65 => mldsa_verify::<MlDsa65>(&k.data, &raw, &msg, &ctx).map_err(&fkey)?,
        SigAlg::MlDsa87 => mldsa_verify::<MlDsa87>(&k.data, &raw, &msg, &ctx).map_err(&fkey)?,
        SigAlg::Ed25519 => {
            let key = ed25519::VerifyingKey::from_public_key_der(&k.data).map_err(&fkey)?;
            let s = ed25519::Signature::from_bytes(&sig_bytes(&raw, Some(ed25519::SIGNATURE_LEN)))
                .map_err(|e| failed(Some(e.to_string())))?;
            key.verify(&msg, &s)
        }
        SigAlg::P256 => {
            let key = ws::VerifyingKey::<P256>::from(weierstrass_public::<P256>(&k, &a.key)?);
            ecdsa_verify(&key, &raw, &msg, a.low_s).map_err(|e| failed(Some(e)))?
        }
        SigAlg::Secp256k1 => {
            let key = ws::VerifyingKey::<K256>::from(weierstrass_public::<K256>(&k, &a.key)?);
            ecdsa_verify(&key, &raw, &msg, a.low_s).map_err(|e| failed(Some(e)))?
        }
        SigAlg::RsaPss | SigAlg::RsaPkcs1 => {
            let key = rsa_public(&k, &a.key)?;
            let s = sig_bytes(&raw, Some(key.size()));
            let h = a.opts.hash.unwrap_or_default().alg();
            if alg == SigAlg::RsaPss {
                let v = pss::VerifyingKey::with_hash(key, h);
                let v = match a.opts.salt_len.unwrap_or(SaltLen::Auto) {
                    SaltLen::Auto => v.with_any_salt_len(),
                    SaltLen::Digest => v.with_salt_len(h.output_len()),
                    SaltLen::Bytes(n) => v.with_salt_len(n),
                };
                v.verify(&msg, &s)
            } else {
                pkcs1v15::VerifyingKey::with_hash(key, h).verify(&msg, &s)
            }
        }
    };
    match verdict {
        Ok(()) => print_line("OK"),
        Err(pqkit::Error::AuthenticationFailed { .. }) => Err(failed(None)),
        Err(e) => Err(failed(Some(e.to_string()))),
    }
}

/// ML-DSA: the outer error is the key's; the inner result is the verdict (a malformed signature fails).
fn mldsa_verify<P: mldsa::Params>(vk: &[u8], raw: &[u8], msg: &[u8], ctx: &[u8]) -> pqkit::Result<pqkit::Result<()>> {
    let key = mldsa::VerifyingKey::<P>::from_bytes(vk)?;
    Ok(mldsa::Signature::<P>::from_bytes(&sig_bytes(raw, Some(P::SIG_LEN))).and_then(|s| key.verify(msg, ctx, &s)))
}

/// ECDSA: DER or P1363 `r || s`, raw or hex. The error (a malformed signature) is a failed verification.
fn ecdsa_verify<C: PrimeCurve>(
    key: &ws::VerifyingKey<C>,
    raw: &[u8],
    msg: &[u8],
    low_s: bool,
) -> Result<pqkit::Result<()>, String> {
    let b = sig_bytes(raw, None);
    let s = ws::Signature::<C>::from_der(&b)
        .or_else(|e| if b.len() == ws::ecdsa::SIGNATURE_LEN { ws::Signature::<C>::from_bytes(&b) } else { Err(e) })
        .map_err(|e| e.to_string())?;
    Ok(if low_s { key.verify_low_s(msg, &s) } else { key.verify(msg, &s) })
}
