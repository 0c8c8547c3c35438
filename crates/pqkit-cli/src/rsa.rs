//! RSA commands. Known-answer primitives with hex in and hex out, keys given as their hex components (the form
//! RFC 8017 and NIST test vectors print them in):
//!
//! - `pqkit rsa public --n HEX --e HEX --input HEX`: RSAEP / RSAVP1, `input^e mod n`;
//! - `pqkit rsa private --n HEX --e HEX --d HEX --p HEX --q HEX --input HEX`: RSADP / RSASP1, `input^d mod n`
//!   (with CRT, blinding and the check against the public operation, as the library always does it).
//!
//! `--input` must be exactly as long as the modulus (leading zeros included) and below it. The result is printed
//! as hex of the modulus length. Errors name the option, never a secret value.

use crate::pq::print_line;
use crate::{CliError, CliResult};
use clap::{Args, Subcommand};
use pqkit::rsa::{RsaPrivateKey, RsaPublicKey};
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
