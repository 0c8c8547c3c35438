//! The `pqkit` command line. Thin: parsing, files and progress; all cryptography lives in the library.
//!
//! Post-quantum: `pqkit kem` (ML-KEM-512/768/1024) and `pqkit sign` (ML-DSA-44/65/87) keep keys, ciphertexts
//! and signatures as raw FIPS encodings in files; seeds, shared secrets and printed signatures are hex.
//! Elliptic curves: `pqkit sign --alg ed25519|p256|secp256k1` and `pqkit ecdh --alg x25519|p256|secp256k1`
//! keep keys as PEM files (PKCS#8 and SubjectPublicKeyInfo, RFC 8410 / RFC 5480), the form OpenSSL reads and
//! writes; ECDSA signatures are DER.
//!
//! Exit codes: 0 success, 1 authentication or verification failure, 2 usage or input error.

mod bench;
mod bus; // issue 19: pqkit agent / pqkit bus (pqkit-bus over NATS)
mod ec;
mod fileenc;
mod format;
mod hashcmd;
mod kat;
mod outfile;
mod pq;
mod recipient; // h-hpke: X-Wing identities, recipients, version-2 files
mod rsa;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// A failure, with the exit code it maps to. Messages never hold secrets.
#[derive(Debug)]
pub enum CliError {
    /// Authentication or verification failed (exit 1).
    Auth(String),
    /// Usage, input or I/O error (exit 2).
    Usage(String),
}

impl CliError {
    pub fn usage(msg: impl Into<String>) -> Self {
        CliError::Usage(msg.into())
    }
    pub fn auth(msg: impl Into<String>) -> Self {
        CliError::Auth(msg.into())
    }
    /// An I/O error on `what` (a file name or "stdin").
    pub fn io(what: &str, e: std::io::Error) -> Self {
        CliError::Usage(format!("{what}: {e}"))
    }
}

/// Library errors on caller input (bad lengths, parameters) are usage errors; authentication is exit 1.
impl From<pqkit::Error> for CliError {
    fn from(e: pqkit::Error) -> Self {
        match e {
            pqkit::Error::AuthenticationFailed { .. } => CliError::Auth(e.to_string()),
            _ => CliError::Usage(e.to_string()),
        }
    }
}

pub type CliResult<T = ()> = Result<T, CliError>;

#[derive(Parser)]
#[command(
    name = "pqkit",
    version,
    about = "Fast, post-quantum-ready cryptography",
    max_term_width = 100,
    after_help = "Exit codes: 0 success; 1 decryption, verification or a --check failed (or a file could not be \
                  checked); 2 usage or input error (bad option, unreadable input, refused output, a limit exceeded)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Encrypt a file (or stdin to stdout) into the pqkit streaming format (docs/file-format.md).
    Encrypt(fileenc::EncryptArgs),
    /// Decrypt a pqkit file. The output appears only after every segment has authenticated.
    Decrypt(fileenc::DecryptArgs),
    /// Write a new random key file (mode 0600) for `encrypt --key` / `decrypt --key`.
    Keygen(KeygenArgs),
    /// ML-KEM (FIPS 203) key encapsulation: `kem keygen`, `kem encaps`, `kem decaps`.
    Kem(pq::KemArgs),
    /// Signatures, ML-DSA (FIPS 204), Ed25519 or ECDSA (P-256, secp256k1): `sign keygen`, `sign sign`,
    /// `sign verify` (exit 1 on a bad signature).
    Sign(pq::SignArgs),
    /// Key agreement, X25519, P-256 or secp256k1: `ecdh keygen`, `ecdh derive` (prints the shared secret in
    /// hex).
    Ecdh(ec::EcdhArgs),
    /// Hash files (or stdin) and print sha256sum-style lines, or check such a list with --check.
    Hash(hashcmd::HashArgs),
    /// Known-answer: XOR stdin with a stream cipher's keystream.
    Cipher(kat::CipherArgs),
    /// Known-answer: AEAD seal or open, stdin to stdout (sealed form: ciphertext || tag).
    Aead(kat::AeadArgs),
    /// Known-answer: a MAC over stdin, printed in hex.
    Mac(kat::MacArgs),
    /// Known-answer: key derivation (HKDF, Argon2id), printed in hex.
    Kdf(kat::KdfArgs),
    /// N random bytes from the operating system.
    Rand(kat::RandArgs),
    /// Known-answer: the raw RSA operations with hex keys and inputs (`rsa public`, `rsa private`).
    Rsa(rsa::RsaArgs),
    /// pqkit's own throughput figures on this machine (the comparison with peers is pqkit-bench).
    Bench(bench::BenchArgs),
    /// Agent identities for pqkit-bus: `agent keygen`, `agent id`.
    Agent(bus::AgentArgs),
    /// pqkit-bus over NATS: `bus keyserver`, `bus pub`, `bus sub` (sealed end to end).
    Bus(bus::BusArgs),
    /// Show the CPU features pqkit detected, the cap in force (PQKIT_CPU) and the backend each family uses.
    Cpu,
}

#[derive(Args)]
struct KeygenArgs {
    /// Where to write the key file.
    #[arg(long, short = 'o', value_name = "KEYFILE")]
    out: PathBuf,
    /// Replace an existing file.
    #[arg(long)]
    force: bool,
    /// An RSA key pair instead of a symmetric key: the private key (PKCS#8 PEM, mode 0600) to --out, the public
    /// key (SubjectPublicKeyInfo PEM) to --pub; or `xwing`: an identity file (mode 0600) to --out for
    /// `decrypt -i`, its recipient string (for `encrypt -r`) printed on stdout.
    #[arg(long)]
    alg: Option<recipient::KeygenAlg>,
    /// Where to write the RSA public key (with --alg).
    #[arg(long = "pub", value_name = "FILE", requires = "alg")]
    public: Option<PathBuf>,
}

fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Encrypt(a) => fileenc::encrypt(a),
        Command::Decrypt(a) => fileenc::decrypt(a),
        Command::Keygen(a) => match a.alg {
            Some(alg) => match alg.rsa() {
                Some(r) => rsa::keygen(r, &a.out, a.public.as_deref(), a.force),
                None if a.public.is_some() => Err(CliError::usage("--pub is for RSA key pairs, not --alg xwing")),
                None => recipient::keygen(&a.out, a.force),
            },
            None => format::keygen(&a.out, a.force),
        },
        Command::Kem(a) => pq::kem(a),
        Command::Sign(a) => pq::sign(a),
        Command::Ecdh(a) => ec::ecdh(a),
        Command::Hash(a) => hashcmd::run(a),
        Command::Cipher(a) => kat::cipher(a),
        Command::Aead(a) => kat::aead(a),
        Command::Mac(a) => kat::mac(a),
        Command::Kdf(a) => kat::kdf(a),
        Command::Rand(a) => kat::rand(a),
        Command::Rsa(a) => rsa::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Agent(a) => bus::agent(a),
        Command::Bus(a) => bus::bus(a),
        Command::Cpu => {
            use pqkit::cpu;
            let cap = cpu::cap();
            let source = match std::env::var("PQKIT_CPU") {
                Ok(v) if !v.trim().is_empty() => format!("PQKIT_CPU={v}"),
                _ => "PQKIT_CPU unset".to_string(),
            };
            println!("features in use: {}", cpu::features());
            println!("detected:        {}", cpu::detected());
            println!("cap:             {cap} ({source})");
            let lacking = cap.expects().without(cpu::detected());
            if !lacking.is_empty() {
                println!("                 this CPU lacks {lacking}: the cap is not reached");
            }
            println!("backends:");
            for (family, backend) in pqkit::dispatch::chosen() {
                println!("  {family:<16} {backend}");
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The library ignores a bad PQKIT_CPU with a warning; the command line refuses it, so that a typo in a
    // cap meant to restrict pqkit never goes unnoticed.
    if let Err(e) = pqkit::cpu::Cap::from_env() {
        eprintln!("pqkit: {e} (got {:?})", std::env::var_os("PQKIT_CPU").unwrap_or_default());
        return ExitCode::from(2);
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Auth(m)) => {
            if !m.is_empty() {
                eprintln!("pqkit: {m}");
            }
            ExitCode::from(1)
        }
        Err(CliError::Usage(m)) => {
            eprintln!("pqkit: {m}");
            ExitCode::from(2)
        }
    }
}
