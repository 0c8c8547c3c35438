//! Post-quantum commands: `pqkit kem` (ML-KEM, FIPS 203) and `pqkit sign` (ML-DSA, FIPS 204; and Ed25519,
//! RFC 8032, whose keys are PEM files: see [`crate::ec`]).
//!
//! ML-KEM and ML-DSA key files, ciphertexts and `--out` signatures hold the raw FIPS encodings (no header). Secret keys
//! (`--dk`, `--sk`) are written with mode 0600; no output file is replaced without `--force`. Seeds, `--m`,
//! `--ctx`, shared secrets and printed signatures are hex. Errors name the file, never a secret value.

use crate::{CliError, CliResult};
use clap::{Args, Subcommand, ValueEnum};
use pqkit::mldsa::{self, MlDsa44, MlDsa65, MlDsa87};
use pqkit::mlkem::{self, MlKem512, MlKem768, MlKem1024};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// An ML-KEM parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KemAlg {
    /// ML-KEM-512 (category 1).
    #[value(name = "ml-kem-512")]
    MlKem512,
    /// ML-KEM-768 (category 3).
    #[value(name = "ml-kem-768")]
    MlKem768,
    /// ML-KEM-1024 (category 5).
    #[value(name = "ml-kem-1024")]
    MlKem1024,
}

/// A signature algorithm: an ML-DSA parameter set, Ed25519, or ECDSA with SHA-256 on P-256 or secp256k1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SigAlg {
    /// ML-DSA-44 (category 2).
    #[value(name = "ml-dsa-44")]
    MlDsa44,
    /// ML-DSA-65 (category 3).
    #[value(name = "ml-dsa-65")]
    MlDsa65,
    /// ML-DSA-87 (category 5).
    #[value(name = "ml-dsa-87")]
    MlDsa87,
    /// Ed25519 (RFC 8032; keys as PKCS#8 / SubjectPublicKeyInfo PEM, RFC 8410).
    #[value(name = "ed25519")]
    Ed25519,
    /// ECDSA P-256 with SHA-256 (FIPS 186-5; RFC 6979 nonces; keys as PKCS#8 / SubjectPublicKeyInfo PEM,
    /// RFC 5480; DER signatures).
    #[value(name = "p256")]
    P256,
    /// ECDSA secp256k1 with SHA-256 (low-S signatures, RFC 6979 nonces; key files as for p256).
    #[value(name = "secp256k1")]
    Secp256k1,
    /// RSASSA-PSS (RFC 8017; --hash, default SHA-256; salt length = hash length). Keys from `pqkit keygen --alg
    /// rsa2048|rsa3072|rsa4096` (PKCS#8 / SubjectPublicKeyInfo PEM).
    #[value(name = "rsa-pss")]
    RsaPss,
    /// RSASSA-PKCS1-v1_5 (RFC 8017; --hash, default SHA-256; deterministic). Keys as for rsa-pss.
    #[value(name = "rsa-pkcs1")]
    RsaPkcs1,
}

impl SigAlg {
    /// The RSA scheme, for the RSA algorithms.
    fn rsa(self) -> Option<crate::rsa::Scheme> {
        match self {
            SigAlg::RsaPss => Some(crate::rsa::Scheme::Pss),
            SigAlg::RsaPkcs1 => Some(crate::rsa::Scheme::Pkcs1),
            _ => None,
        }
    }
}

#[derive(Args)]
pub struct KemArgs {
    #[command(subcommand)]
    cmd: KemCmd,
}

#[derive(Subcommand)]
enum KemCmd {
    /// Make a key pair: the decapsulation key (secret, mode 0600) and the encapsulation key (public).
    Keygen {
        #[arg(long)]
        alg: KemAlg,
        /// 64-byte seed d || z in hex (deterministic keygen, FIPS 203 Algorithm 16); random if absent.
        #[arg(long, value_name = "HEX")]
        seed: Option<String>,
        /// Where to write the decapsulation key (raw FIPS 203 encoding).
        #[arg(long, value_name = "FILE")]
        dk: PathBuf,
        /// Where to write the encapsulation key (raw FIPS 203 encoding).
        #[arg(long, value_name = "FILE")]
        ek: PathBuf,
        /// Replace existing files.
        #[arg(long)]
        force: bool,
    },
    /// Encapsulate to an encapsulation key: writes the ciphertext to --ct, prints the shared secret in hex.
    Encaps {
        #[arg(long)]
        alg: KemAlg,
        /// The encapsulation key file.
        #[arg(long, value_name = "FILE")]
        ek: PathBuf,
        /// Where to write the ciphertext (raw).
        #[arg(long, value_name = "FILE")]
        ct: PathBuf,
        /// The 32-byte randomness m in hex (known-answer tests only; random if absent).
        #[arg(long, value_name = "HEX")]
        m: Option<String>,
        /// Replace an existing ciphertext file.
        #[arg(long)]
        force: bool,
    },
    /// Decapsulate a ciphertext and print the shared secret in hex. A modified ciphertext yields an
    /// unrelated secret (implicit rejection), not an error.
    Decaps {
        #[arg(long)]
        alg: KemAlg,
        /// The decapsulation key file.
        #[arg(long, value_name = "FILE")]
        dk: PathBuf,
        /// The ciphertext file (raw).
        #[arg(long, value_name = "FILE")]
        ct: PathBuf,
    },
}

#[derive(Args)]
pub struct SignArgs {
    #[command(subcommand)]
    cmd: SignCmd,
}

#[derive(Subcommand)]
enum SignCmd {
    /// Make a key pair: the signing key (secret, mode 0600) and the verifying key (public).
    Keygen {
        #[arg(long)]
        alg: SigAlg,
        /// 32-byte seed in hex (deterministic keygen: ML-DSA's ξ, FIPS 204 Algorithm 6, the Ed25519
        /// private key of RFC 8032, or the ECDSA private scalar, big-endian, between 1 and n − 1); random if
        /// absent.
        #[arg(long, value_name = "HEX")]
        seed: Option<String>,
        /// Where to write the signing key (raw FIPS 204 encoding; PKCS#8 PEM for Ed25519 and ECDSA).
        #[arg(long, value_name = "FILE")]
        sk: PathBuf,
        /// Where to write the verifying key (raw FIPS 204 encoding; SubjectPublicKeyInfo PEM for Ed25519 and
        /// ECDSA).
        #[arg(long, value_name = "FILE")]
        vk: PathBuf,
        /// Replace existing files.
        #[arg(long)]
        force: bool,
    },
    /// Sign a file (or stdin); prints the signature in hex, or writes it raw to --out.
    Sign {
        #[arg(long)]
        alg: SigAlg,
        /// The signing key file.
        #[arg(long, value_name = "FILE")]
        sk: PathBuf,
        /// Context string in hex (at most 255 bytes; ML-DSA only, Ed25519 and ECDSA take none).
        #[arg(long, value_name = "HEX", default_value = "")]
        ctx: String,
        /// ML-DSA: deterministic signing (rnd = 0) instead of the default hedged signing (Ed25519 and ECDSA
        /// are deterministic by default).
        #[arg(long, conflicts_with = "hedged")]
        deterministic: bool,
        /// ECDSA: hedged nonces (RFC 6979 with 32 fresh random bytes mixed in, §3.6) instead of the default
        /// deterministic RFC 6979 nonces.
        #[arg(long)]
        hedged: bool,
        /// RSA: the hash (default sha256).
        #[arg(long)]
        hash: Option<crate::rsa::SigHash>,
        /// Write the raw signature here instead of printing it in hex.
        #[arg(long, short = 'o', value_name = "FILE")]
        out: Option<PathBuf>,
        /// Replace an existing --out file.
        #[arg(long)]
        force: bool,
        /// The message file; stdin if absent.
        input: Option<PathBuf>,
    },
    /// Verify a signature over a file (or stdin): prints OK and exits 0, or exits 1.
    Verify {
        #[arg(long)]
        alg: SigAlg,
        /// The verifying key file.
        #[arg(long, value_name = "FILE")]
        vk: PathBuf,
        /// The signature file: raw, or hex (as printed by `sign`).
        #[arg(long, value_name = "FILE")]
        sig: PathBuf,
        /// Context string in hex (ML-DSA only).
        #[arg(long, value_name = "HEX", default_value = "")]
        ctx: String,
        /// ECDSA: also refuse a signature whose S is above n/2 (the strict rule of Bitcoin and
        /// libsecp256k1), as a malformed signature (exit 2).
        #[arg(long)]
        low_s: bool,
        /// RSA: the hash (default sha256).
        #[arg(long)]
        hash: Option<crate::rsa::SigHash>,
        /// The message file; stdin if absent.
        input: Option<PathBuf>,
    },
}

/// Decodes a hex option of an exact length (if given); the error names the option, never its value.
pub(crate) fn unhex(opt: &str, s: &str, len: Option<usize>) -> CliResult<Zeroizing<Vec<u8>>> {
    use pqkit_cli::parse::hex::{HexError, decode_exact};
    decode_exact(s, len).map_err(|e| match e {
        HexError::NotHex => CliError::usage(format!("{opt}: not valid hex")),
        HexError::WrongLength { expected, actual } => {
            CliError::usage(format!("{opt}: expected {expected} bytes, got {actual}"))
        }
    })
}

pub(crate) fn read_file(path: &Path) -> CliResult<Zeroizing<Vec<u8>>> {
    std::fs::read(path).map(Zeroizing::new).map_err(|e| CliError::io(&path.display().to_string(), e))
}

pub(crate) fn read_input(input: &Option<PathBuf>) -> CliResult<Vec<u8>> {
    match input {
        Some(p) => Ok(read_file(p)?.to_vec()),
        None => {
            let mut v = Vec::new();
            std::io::stdin().read_to_end(&mut v).map_err(|e| CliError::io("stdin", e))?;
            Ok(v)
        }
    }
}

/// A library error about a file, prefixed with its name.
pub(crate) fn in_file(path: &Path) -> impl Fn(pqkit::Error) -> CliError + '_ {
    move |e| {
        let c = CliError::from(e);
        match c {
            CliError::Usage(m) => CliError::Usage(format!("{}: {m}", path.display())),
            other => other,
        }
    }
}

/// Refuses early if an output exists and `force` is not set (so no key pair is half written).
pub(crate) fn check_new(path: &Path, force: bool) -> CliResult {
    crate::outfile::refuse_special(path)?;
    if !force && path.symlink_metadata().is_ok() {
        return Err(CliError::usage(format!("{}: already exists (use --force to replace it)", path.display())));
    }
    Ok(())
}

/// Writes a new file (mode 0600 if `secret`), refusing to replace one unless `force`.
pub(crate) fn write_new(path: &Path, data: &[u8], force: bool, secret: bool) -> CliResult {
    let name = path.display().to_string();
    crate::outfile::refuse_special(path)?;
    if force && path.symlink_metadata().is_ok() {
        std::fs::remove_file(path).map_err(|e| CliError::io(&name, e))?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(if secret { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut f = opts.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::usage(format!("{name}: already exists (use --force to replace it)"))
        } else {
            CliError::io(&name, e)
        }
    })?;
    f.write_all(data).and_then(|_| f.sync_all()).map_err(|e| CliError::io(&name, e))
}

/// Writes a key pair: refuses the same path twice before writing anything, and removes the first file if
/// the second cannot be written, so that no half pair is left behind.
pub(crate) fn write_pair(sk: &Path, sk_data: &[u8], vk: &Path, vk_data: &[u8], force: bool) -> CliResult {
    check_pair(sk, vk, force)?;
    write_new(sk, sk_data, force, true)?;
    write_new(vk, vk_data, force, false).inspect_err(|_| {
        let _ = std::fs::remove_file(sk);
    })
}

/// The checks before a key pair is generated: two distinct paths, neither existing unless `force`.
pub(crate) fn check_pair(sk: &Path, vk: &Path, force: bool) -> CliResult {
    let same = sk == vk
        || match (std::path::absolute(sk), std::path::absolute(vk)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
        || crate::fileenc::same_file(sk, vk);
    if same {
        return Err(CliError::usage(format!(
            "{}: the private and public keys cannot be written to the same file",
            vk.display()
        )));
    }
    check_new(sk, force)?;
    check_new(vk, force)
}

pub(crate) fn print_line(s: &str) -> CliResult {
    let mut o = std::io::stdout().lock();
    writeln!(o, "{s}").and_then(|_| o.flush()).map_err(|e| CliError::io("stdout", e))
}

// ---- ML-KEM ----

fn kem_keygen<P: mlkem::Params>(seed: Option<&[u8]>, dk: &Path, ek: &Path, force: bool) -> CliResult {
    check_pair(dk, ek, force)?;
    let (d, e) = match seed {
        Some(s) => mlkem::DecapsulationKey::<P>::from_seed64(s)?,
        None => mlkem::DecapsulationKey::<P>::generate()?,
    };
    let dk_bytes = d.to_bytes();
    write_pair(dk, dk_bytes.as_ref(), ek, e.as_bytes(), force)
}

fn kem_encaps<P: mlkem::Params>(ek: &Path, ct: &Path, m: Option<&[u8]>, force: bool) -> CliResult {
    let ek_bytes = read_file(ek)?;
    let key = mlkem::EncapsulationKey::<P>::from_bytes(&ek_bytes).map_err(in_file(ek))?;
    check_new(ct, force)?;
    let (c, ss) = match m {
        Some(m) => {
            let mut arr = Zeroizing::new([0u8; 32]);
            arr.copy_from_slice(m);
            key.encapsulate_deterministic(&arr)
        }
        None => key.encapsulate()?,
    };
    write_new(ct, c.as_bytes(), force, false)?;
    print_line(&Zeroizing::new(hex::encode(ss.as_bytes())))
}

fn kem_decaps<P: mlkem::Params>(dk: &Path, ct: &Path) -> CliResult {
    let dk_bytes = read_file(dk)?;
    let key = mlkem::DecapsulationKey::<P>::from_bytes(&dk_bytes).map_err(in_file(dk))?;
    let ct_bytes = read_file(ct)?;
    let c = mlkem::Ciphertext::<P>::from_bytes(&ct_bytes).map_err(in_file(ct))?;
    let ss = key.decapsulate(&c);
    print_line(&Zeroizing::new(hex::encode(ss.as_bytes())))
}

/// `pqkit kem ...`.
pub fn kem(a: KemArgs) -> CliResult {
    match a.cmd {
        KemCmd::Keygen { alg, seed, dk, ek, force } => {
            let seed = seed.map(|s| unhex("--seed", &s, Some(64))).transpose()?;
            let s = seed.as_deref().map(|v| v.as_slice());
            match alg {
                KemAlg::MlKem512 => kem_keygen::<MlKem512>(s, &dk, &ek, force),
                KemAlg::MlKem768 => kem_keygen::<MlKem768>(s, &dk, &ek, force),
                KemAlg::MlKem1024 => kem_keygen::<MlKem1024>(s, &dk, &ek, force),
            }
        }
        KemCmd::Encaps { alg, ek, ct, m, force } => {
            let m = m.map(|s| unhex("--m", &s, Some(32))).transpose()?;
            let m = m.as_deref().map(|v| v.as_slice());
            match alg {
                KemAlg::MlKem512 => kem_encaps::<MlKem512>(&ek, &ct, m, force),
                KemAlg::MlKem768 => kem_encaps::<MlKem768>(&ek, &ct, m, force),
                KemAlg::MlKem1024 => kem_encaps::<MlKem1024>(&ek, &ct, m, force),
            }
        }
        KemCmd::Decaps { alg, dk, ct } => match alg {
            KemAlg::MlKem512 => kem_decaps::<MlKem512>(&dk, &ct),
            KemAlg::MlKem768 => kem_decaps::<MlKem768>(&dk, &ct),
            KemAlg::MlKem1024 => kem_decaps::<MlKem1024>(&dk, &ct),
        },
    }
}

// ---- ML-DSA ----

fn sig_keygen<P: mldsa::Params>(seed: Option<&[u8]>, sk: &Path, vk: &Path, force: bool) -> CliResult {
    check_pair(sk, vk, force)?;
    let (s, v) = match seed {
        Some(s) => mldsa::SigningKey::<P>::from_seed_bytes(s)?,
        None => mldsa::SigningKey::<P>::generate()?,
    };
    let sk_bytes = s.to_bytes();
    write_pair(sk, (*sk_bytes).as_ref(), vk, v.as_bytes(), force)
}

fn sig_sign<P: mldsa::Params>(
    sk: &Path,
    ctx: &[u8],
    deterministic: bool,
    out: Option<&Path>,
    force: bool,
    input: &Option<PathBuf>,
) -> CliResult {
    let sk_bytes = read_file(sk)?;
    let key = mldsa::SigningKey::<P>::from_bytes(&sk_bytes).map_err(in_file(sk))?;
    if let Some(o) = out {
        check_new(o, force)?;
    }
    let msg = read_input(input)?;
    let sig = if deterministic { key.sign_deterministic(&msg, ctx)? } else { key.sign(&msg, ctx)? };
    match out {
        Some(o) => write_new(o, sig.as_bytes(), force, false),
        None => print_line(&hex::encode(sig.as_bytes())),
    }
}

fn sig_verify<P: mldsa::Params>(vk: &Path, sig: &Path, ctx: &[u8], input: &Option<PathBuf>) -> CliResult {
    let vk_bytes = read_file(vk)?;
    let key = mldsa::VerifyingKey::<P>::from_bytes(&vk_bytes).map_err(in_file(vk))?;
    let raw = read_file(sig)?;
    // Raw if it has the signature length, else hex (as printed by `sign`).
    let sig_bytes = if raw.len() == P::SIG_LEN {
        raw.to_vec()
    } else {
        match pqkit_cli::parse::hex::decode_file(&raw) {
            Some(v) => v,
            None => raw.to_vec(),
        }
    };
    // A malformed signature is a failed verification (exit 1), not a usage error.
    let s = mldsa::Signature::<P>::from_bytes(&sig_bytes)
        .map_err(|e| CliError::auth(format!("{}: signature verification failed ({e})", sig.display())))?;
    let msg = read_input(input)?;
    match key.verify(&msg, ctx, &s) {
        Ok(()) => print_line("OK"),
        Err(pqkit::Error::AuthenticationFailed { .. }) => {
            Err(CliError::auth(format!("{}: signature verification failed", sig.display())))
        }
        Err(e) => Err(e.into()),
    }
}

/// `pqkit sign ...`.
pub fn sign(a: SignArgs) -> CliResult {
    match a.cmd {
        SignCmd::Keygen { alg, .. } if alg.rsa().is_some() => {
            Err(CliError::usage("RSA keys come from `pqkit keygen --alg rsa2048|rsa3072|rsa4096 -o SK --pub PK`"))
        }
        SignCmd::Keygen { alg, seed, sk, vk, force } => {
            let seed = seed.map(|s| unhex("--seed", &s, Some(32))).transpose()?;
            let s = seed.as_deref().map(|v| v.as_slice());
            match alg {
                SigAlg::MlDsa44 => sig_keygen::<MlDsa44>(s, &sk, &vk, force),
                SigAlg::MlDsa65 => sig_keygen::<MlDsa65>(s, &sk, &vk, force),
                SigAlg::MlDsa87 => sig_keygen::<MlDsa87>(s, &sk, &vk, force),
                SigAlg::Ed25519 => crate::ec::ed25519_keygen(s, &sk, &vk, force),
                SigAlg::P256 => crate::ec::weierstrass_keygen::<crate::ec::P256>(s, &sk, &vk, force),
                SigAlg::Secp256k1 => crate::ec::weierstrass_keygen::<crate::ec::K256>(s, &sk, &vk, force),
                SigAlg::RsaPss | SigAlg::RsaPkcs1 => Err(CliError::usage("RSA keys come from `pqkit keygen --alg`")),
            }
        }
        SignCmd::Sign { alg, sk, ctx, deterministic, hedged, hash, out, force, input } => {
            let ctx = unhex("--ctx", &ctx, None)?;
            let o = out.as_deref();
            if let Some(scheme) = alg.rsa() {
                if !ctx.is_empty() || deterministic || hedged {
                    return Err(CliError::usage("--ctx, --deterministic, --hedged: not for RSA"));
                }
                return crate::rsa::sign(scheme, hash.unwrap_or_default(), &sk, o, force, &input);
            }
            if hash.is_some() {
                return Err(CliError::usage("--hash: only for RSA"));
            }
            if hedged && !matches!(alg, SigAlg::P256 | SigAlg::Secp256k1) {
                return Err(CliError::usage(
                    "--hedged: only for ECDSA (ML-DSA is hedged by default, Ed25519 is deterministic)",
                ));
            }
            match alg {
                SigAlg::MlDsa44 => sig_sign::<MlDsa44>(&sk, &ctx, deterministic, o, force, &input),
                SigAlg::MlDsa65 => sig_sign::<MlDsa65>(&sk, &ctx, deterministic, o, force, &input),
                SigAlg::MlDsa87 => sig_sign::<MlDsa87>(&sk, &ctx, deterministic, o, force, &input),
                SigAlg::Ed25519 => crate::ec::ed25519_sign(&sk, &ctx, o, force, &input),
                SigAlg::P256 => crate::ec::ecdsa_sign::<crate::ec::P256>(&sk, &ctx, hedged, o, force, &input),
                SigAlg::Secp256k1 => crate::ec::ecdsa_sign::<crate::ec::K256>(&sk, &ctx, hedged, o, force, &input),
                SigAlg::RsaPss | SigAlg::RsaPkcs1 => Err(CliError::usage("RSA is signed above")),
            }
        }
        SignCmd::Verify { alg, vk, sig, ctx, low_s, hash, input } => {
            let ctx = unhex("--ctx", &ctx, None)?;
            if low_s && !matches!(alg, SigAlg::P256 | SigAlg::Secp256k1) {
                return Err(CliError::usage("--low-s: only for ECDSA"));
            }
            if let Some(scheme) = alg.rsa() {
                if !ctx.is_empty() {
                    return Err(CliError::usage("--ctx: RSA takes no context"));
                }
                return crate::rsa::verify(scheme, hash.unwrap_or_default(), &vk, &sig, &input);
            }
            if hash.is_some() {
                return Err(CliError::usage("--hash: only for RSA"));
            }
            match alg {
                SigAlg::MlDsa44 => sig_verify::<MlDsa44>(&vk, &sig, &ctx, &input),
                SigAlg::MlDsa65 => sig_verify::<MlDsa65>(&vk, &sig, &ctx, &input),
                SigAlg::MlDsa87 => sig_verify::<MlDsa87>(&vk, &sig, &ctx, &input),
                SigAlg::Ed25519 => crate::ec::ed25519_verify(&vk, &sig, &ctx, &input),
                SigAlg::P256 => crate::ec::ecdsa_verify::<crate::ec::P256>(&vk, &sig, &ctx, low_s, &input),
                SigAlg::Secp256k1 => crate::ec::ecdsa_verify::<crate::ec::K256>(&vk, &sig, &ctx, low_s, &input),
                SigAlg::RsaPss | SigAlg::RsaPkcs1 => Err(CliError::usage("RSA is verified above")),
            }
        }
    }
}
