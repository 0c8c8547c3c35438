//! The `pqkit` command line. Thin: one grammar (docs/cli.md), files, output safety and progress; every
//! format and protocol lives in the library.
//!
//! Organised by concern: [`error`] (the error type and exit codes), [`io`] (inputs, `-`, stdout),
//! [`output`] (the one output-safety mechanism), [`keyfile`] (reading and classifying key files), and one
//! module per command under [`cmd`] (plus the older command modules beside it).

mod bench;
mod bus;
mod cmd;
mod error;
mod fileenc;
mod format;
mod hashcmd;
mod io;
mod kat;
mod keyfile;
mod output;
mod recipient;
mod rsa;

use clap::{CommandFactory, Parser, Subcommand};
use error::{CliError, CliResult};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "pqkit",
    version,
    about = "Fast, post-quantum-ready cryptography",
    max_term_width = 100,
    after_help = "Exit codes: 0 success; 1 decryption, verification or a --check failed (or a file could not be \
                  checked); 2 usage or input error (bad option, unreadable input, refused output, a limit exceeded); \
                  141 stdout was closed by its reader. The full grammar: docs/cli.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Encrypt a file (or stdin) with a key file, a passphrase or to recipients (docs/file-format.md).
    Encrypt(fileenc::EncryptArgs),
    /// Decrypt a pqkit file. The output appears only after every segment has authenticated.
    Decrypt(fileenc::DecryptArgs),
    /// Make a key of any kind: symmetric, x25519, ed25519, p256, secp256k1, rsa2048/3072/4096, ml-kem-*,
    /// ml-dsa-*, xwing or agent (`--alg`); the private key to -o, the public key to --pub.
    Keygen(cmd::keys::KeygenArgs),
    /// Print (or write with -o) the public key, X-Wing recipient or agent id of a private key file.
    Pubkey(cmd::keys::PubkeyArgs),
    /// Sign a file (or stdin) with ML-DSA, Ed25519, ECDSA (P-256, secp256k1) or RSA; the algorithm is read
    /// from the key.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Sign {
        #[command(subcommand)]
        legacy: Option<cmd::legacy::LegacySign>,
        #[command(flatten)]
        args: cmd::sign::SignNew,
    },
    /// Verify a signature: prints OK and exits 0, or exits 1.
    Verify(cmd::sign::VerifyArgs),
    /// ML-KEM: encapsulate to a public key; writes the ciphertext, prints the shared secret in hex.
    Encaps(cmd::kem::EncapsArgs),
    /// ML-KEM: decapsulate a ciphertext; prints the shared secret in hex.
    Decaps(cmd::kem::DecapsArgs),
    /// ECDH (X25519, P-256, secp256k1): our private key and the peer's public key; prints the secret in hex.
    Derive(cmd::kem::DeriveArgs),
    /// RSA encryption (OAEP, PKCS#1 v1.5) with key files, and the raw operations for known-answer tests.
    Rsa(rsa::RsaArgs),
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
    /// pqkit-bus over NATS: `bus keyserver`, `bus pub`, `bus sub` (sealed end to end).
    Bus(bus::BusArgs),
    /// pqkit's own throughput figures on this machine (the comparison with peers is pqkit-bench).
    Bench(bench::BenchArgs),
    /// Show the CPU features pqkit detected, the cap in force (PQKIT_CPU) and the backend each family uses.
    Cpu,
    /// Print a shell completion script: `pqkit completions bash > /etc/bash_completion.d/pqkit`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `pqkit man | man -l -`.
    Man,
    /// Older spelling of `keygen`, `encaps`, `decaps` for ML-KEM.
    #[command(hide = true)]
    Kem(cmd::legacy::KemArgs),
    /// Older spelling of `keygen` and `derive` for ECDH.
    #[command(hide = true)]
    Ecdh(cmd::legacy::EcdhArgs),
    /// Older spelling of `keygen --alg agent` and `pubkey`.
    #[command(hide = true)]
    Agent(cmd::legacy::AgentArgs),
}

fn cpu() -> CliResult {
    use pqkit::cpu;
    use std::fmt::Write;
    let cap = cpu::cap();
    let source = match std::env::var("PQKIT_CPU") {
        Ok(v) if !v.trim().is_empty() => format!("PQKIT_CPU={v}"),
        _ => "PQKIT_CPU unset".to_string(),
    };
    let mut s = String::new();
    let _ = writeln!(s, "features in use: {}", cpu::features());
    let _ = writeln!(s, "detected:        {}", cpu::detected());
    let _ = writeln!(s, "cap:             {cap} ({source})");
    let lacking = cap.expects().without(cpu::detected());
    if !lacking.is_empty() {
        let _ = writeln!(s, "                 this CPU lacks {lacking}: the cap is not reached");
    }
    let _ = writeln!(s, "backends:");
    for (family, backend) in pqkit::families::chosen() {
        let _ = writeln!(s, "  {family:<16} {backend}");
    }
    io::write_stdout(s.as_bytes())
}

fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Encrypt(a) => fileenc::encrypt(a),
        Command::Decrypt(a) => fileenc::decrypt(a),
        Command::Keygen(a) => cmd::keys::keygen(a),
        Command::Pubkey(a) => cmd::keys::pubkey(a),
        Command::Sign { legacy: Some(l), .. } => cmd::legacy::sign(l),
        Command::Sign { legacy: None, args } => cmd::sign::sign(args),
        Command::Verify(a) => cmd::sign::verify(a),
        Command::Encaps(a) => cmd::kem::encaps(a),
        Command::Decaps(a) => cmd::kem::decaps(a),
        Command::Derive(a) => cmd::kem::derive(a),
        Command::Rsa(a) => rsa::run(a),
        Command::Hash(a) => hashcmd::run(a),
        Command::Cipher(a) => kat::cipher(a),
        Command::Aead(a) => kat::aead(a),
        Command::Mac(a) => kat::mac(a),
        Command::Kdf(a) => kat::kdf(a),
        Command::Rand(a) => kat::rand(a),
        Command::Bus(a) => bus::bus(a),
        Command::Bench(a) => bench::run(a),
        Command::Cpu => cpu(),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "pqkit", &mut out);
            io::write_stdout(&out)
        }
        Command::Man => {
            let mut out = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut out).map_err(|e| CliError::io("man page", e))?;
            io::write_stdout(&out)
        }
        Command::Kem(a) => cmd::legacy::kem(a),
        Command::Ecdh(a) => cmd::legacy::ecdh(a),
        Command::Agent(a) => cmd::legacy::agent(a),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to stdout: a closed stdout ends quietly there too.
            let code = e.exit_code();
            if e.print().is_err() {
                return ExitCode::from(141);
            }
            return ExitCode::from(code as u8);
        }
    };
    // The library ignores a bad PQKIT_CPU with a warning; the command line refuses it, so that a typo in a
    // cap meant to restrict pqkit never goes unnoticed.
    if let Err(e) = pqkit::cpu::Cap::from_env() {
        io::warn(&format!("{e} (got {:?})", std::env::var_os("PQKIT_CPU").unwrap_or_default()));
        return ExitCode::from(2);
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            match &e {
                CliError::Auth(m) | CliError::Usage(m) if !m.is_empty() => io::warn(m),
                _ => {}
            }
            ExitCode::from(e.code())
        }
    }
}
