//! `pqkit rsa`: encryption (RSAES-OAEP and RSAES-PKCS1-v1_5 with implicit rejection, RFC 8017) with key
//! files, and the raw operations for known-answer tests. RSA keys come from `pqkit keygen --alg rsaNNNN`;
//! signatures are `pqkit sign` / `pqkit verify`.
//!
//! - `pqkit rsa encrypt -k PUBLIC [--padding oaep|pkcs1] [--hash H] [--label HEX] [-o OUT] [FILE|-]`: the
//!   ciphertext raw to `-o`, else printed in hex;
//! - `pqkit rsa decrypt -k PRIVATE [--padding oaep|pkcs1] [--hash H] [--label HEX] [-o OUT] [FILE|-]`: the
//!   ciphertext raw or hex; the plaintext to `-o`, else to stdout. An OAEP failure exits 1; PKCS#1 v1.5
//!   never fails on a bad ciphertext (implicit rejection: an unrelated message comes out).
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

use crate::cmd::keys::{rsa_private, rsa_public};
use crate::error::{CliError, CliResult};
use crate::io::{print_line, read_input};
use crate::keyfile::{self, Kind};
use crate::output::Guard;
use clap::{Args, Subcommand, ValueEnum};
use pqkit::rsa::{HashAlg, RsaPrivateKey, RsaPublicKey, oaep::Oaep, pkcs1v15};
use std::path::PathBuf;
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

/// The encryption padding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Padding {
    /// RSAES-OAEP (MGF1 with the same hash as --hash).
    #[default]
    #[value(name = "oaep")]
    Oaep,
    /// RSAES-PKCS1-v1_5 (decryption with implicit rejection). For old peers only.
    #[value(name = "pkcs1")]
    Pkcs1,
}

/// The OAEP hash (label hash and MGF1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum OaepHash {
    /// SHA-1 (what `openssl pkeyutl` uses unless told otherwise).
    #[value(name = "sha1")]
    Sha1,
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

#[derive(Args)]
struct CryptArgs {
    /// The key file (public to encrypt, private to decrypt; PEM or DER, PKCS#8/SPKI or PKCS#1).
    #[arg(long, short = 'k', value_name = "KEY")]
    key: PathBuf,
    /// The padding.
    #[arg(long, value_enum, default_value = "oaep")]
    padding: Padding,
    /// OAEP: the hash for the label and MGF1.
    #[arg(long, value_enum, default_value = "sha256")]
    hash: OaepHash,
    /// OAEP: the label, hex (default empty).
    #[arg(long, value_name = "HEX", default_value = "")]
    label: String,
    /// Where to write the result (`-` for stdout). Default: encrypt prints hex, decrypt writes to stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
    /// Replace an existing output file (never the key or the input).
    #[arg(long, short = 'f')]
    force: bool,
    /// The input; stdin when absent or `-`.
    input: Option<PathBuf>,
}

#[derive(Subcommand)]
enum RsaCmd {
    /// Encrypt a short message to a public key (at most the modulus length − 66 bytes with OAEP-SHA-256).
    Encrypt(CryptArgs),
    /// Decrypt with a private key (the ciphertext raw or in hex).
    Decrypt(CryptArgs),
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

fn oaep(a: &CryptArgs) -> CliResult<Oaep> {
    let h = match a.hash {
        OaepHash::Sha1 => HashAlg::Sha1,
        OaepHash::Sha256 => HashAlg::Sha256,
        OaepHash::Sha384 => HashAlg::Sha384,
        OaepHash::Sha512 => HashAlg::Sha512,
    };
    let label = unhex("--label", &a.label)?;
    if a.padding == Padding::Pkcs1 && (!label.is_empty() || a.hash != OaepHash::Sha256) {
        return Err(CliError::usage("--hash, --label: only for --padding oaep"));
    }
    Ok(Oaep::new(h).with_label(&label))
}

fn crypt(a: CryptArgs, encrypt: bool) -> CliResult {
    let mut g = Guard::new(a.force);
    g.protect(&a.key, "key file");
    if let Some(i) = &a.input {
        g.protect(i, "input");
    }
    let out = g.output_opt(a.out.as_deref())?;
    let k = keyfile::read(&a.key)?;
    k.expect(&a.key, &[Kind::Rsa], !encrypt, None)?;
    let params = oaep(&a)?;
    let input = read_input(&a.input)?;
    if encrypt {
        let key = rsa_public(&k, &a.key)?;
        let ct = match a.padding {
            Padding::Oaep => params.encrypt(&key, &input),
            Padding::Pkcs1 => pkcs1v15::encrypt(&key, &input),
        }
        .map_err(|e| {
            CliError::usage(format!("{}: {e}", a.input.as_ref().map_or("stdin".into(), |p| p.display().to_string())))
        })?;
        match out {
            Some(d) => g.write(&d, &ct, false),
            None => print_line(&hex::encode(&ct)),
        }
    } else {
        let key = rsa_private(&k, &a.key)?;
        let ct = if input.len() == key.public_key().size() {
            input.to_vec()
        } else {
            pqkit_cli::parse::hex::decode_file(&input).unwrap_or_else(|| input.to_vec())
        };
        let pt = match a.padding {
            Padding::Oaep => params.decrypt(&key, &ct).map_err(|_| CliError::auth("decryption failed"))?,
            Padding::Pkcs1 => pkcs1v15::decrypt(&key, &ct).map_err(|e| CliError::usage(e.to_string()))?,
        };
        g.write(out.as_ref().unwrap_or(&crate::output::Dest::Stdout), &pt, true)
    }
}

/// `pqkit rsa ...`.
pub fn run(a: RsaArgs) -> CliResult {
    match a.cmd {
        RsaCmd::Encrypt(c) => crypt(c, true),
        RsaCmd::Decrypt(c) => crypt(c, false),
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
