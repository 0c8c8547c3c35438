//! Earlier spellings, kept working as hidden aliases so that scripts do not break: `sign keygen|sign|verify`,
//! `kem keygen|encaps|decaps`, `ecdh keygen|derive` and `agent keygen|id`. Each maps onto the one grammar's
//! command (docs/cli.md), so it gets the same output safety and key-file reading.

use crate::cmd::kem::{DecapsArgs, DeriveArgs, EcdhAlg, EncapsArgs, KemAlg};
use crate::cmd::keys::{KeyAlg, KeygenArgs, PubkeyArgs};
use crate::cmd::sign::{SigAlg, SigHash, SigOpts, SignNew, VerifyArgs};
use crate::error::{CliError, CliResult};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum LegacySign {
    /// Same as `pqkit keygen --alg ALG -o SK --pub VK`.
    #[command(hide = true)]
    Keygen {
        #[arg(long)]
        alg: SigAlg,
        #[arg(long, value_name = "HEX")]
        seed: Option<String>,
        #[arg(long, value_name = "FILE")]
        sk: PathBuf,
        #[arg(long, value_name = "FILE")]
        vk: PathBuf,
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Same as `pqkit sign -k SK`.
    #[command(hide = true)]
    Sign {
        #[arg(long)]
        alg: Option<SigAlg>,
        #[arg(long, short = 'k', alias = "sk", value_name = "FILE")]
        key: PathBuf,
        #[arg(long, value_name = "HEX", default_value = "")]
        ctx: String,
        #[arg(long, conflicts_with = "hedged")]
        deterministic: bool,
        #[arg(long)]
        hedged: bool,
        #[arg(long)]
        hash: Option<SigHash>,
        #[arg(long, short = 'o', value_name = "FILE")]
        out: Option<PathBuf>,
        #[arg(long, short = 'f')]
        force: bool,
        input: Option<PathBuf>,
    },
    /// Same as `pqkit verify -k VK --sig SIG`.
    #[command(hide = true)]
    Verify {
        #[arg(long)]
        alg: Option<SigAlg>,
        #[arg(long, short = 'k', alias = "vk", value_name = "FILE")]
        key: PathBuf,
        #[arg(long, value_name = "FILE")]
        sig: PathBuf,
        #[arg(long, value_name = "HEX", default_value = "")]
        ctx: String,
        #[arg(long)]
        low_s: bool,
        #[arg(long)]
        hash: Option<SigHash>,
        input: Option<PathBuf>,
    },
}

#[derive(Args)]
pub struct KemArgs {
    #[command(subcommand)]
    cmd: KemCmd,
}

#[derive(Subcommand)]
enum KemCmd {
    /// Same as `pqkit keygen --alg ALG -o DK --pub EK`.
    Keygen {
        #[arg(long)]
        alg: KemAlg,
        #[arg(long, value_name = "HEX")]
        seed: Option<String>,
        #[arg(long, value_name = "FILE")]
        dk: PathBuf,
        #[arg(long, value_name = "FILE")]
        ek: PathBuf,
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Same as `pqkit encaps -k EK -o CT`.
    Encaps {
        #[arg(long)]
        alg: Option<KemAlg>,
        #[arg(long, value_name = "FILE")]
        ek: PathBuf,
        #[arg(long, value_name = "FILE")]
        ct: PathBuf,
        #[arg(long, value_name = "HEX")]
        m: Option<String>,
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Same as `pqkit decaps -k DK CT`.
    Decaps {
        #[arg(long)]
        alg: Option<KemAlg>,
        #[arg(long, value_name = "FILE")]
        dk: PathBuf,
        #[arg(long, value_name = "FILE")]
        ct: PathBuf,
    },
}

#[derive(Args)]
pub struct EcdhArgs {
    #[command(subcommand)]
    cmd: EcdhCmd,
}

#[derive(Subcommand)]
enum EcdhCmd {
    /// Same as `pqkit keygen --alg ALG -o SK --pub PK`.
    Keygen {
        #[arg(long)]
        alg: EcdhAlg,
        #[arg(long, value_name = "HEX")]
        seed: Option<String>,
        #[arg(long, value_name = "FILE")]
        sk: PathBuf,
        #[arg(long, value_name = "FILE")]
        pk: PathBuf,
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Same as `pqkit derive -k SK --peer PK` (the algorithm is read from the key).
    Derive {
        #[arg(long)]
        alg: Option<EcdhAlg>,
        #[arg(long, value_name = "FILE")]
        sk: PathBuf,
        #[arg(long, value_name = "FILE")]
        peer: PathBuf,
    },
}

#[derive(Args)]
pub struct AgentArgs {
    #[command(subcommand)]
    cmd: AgentCmd,
}

#[derive(Subcommand)]
enum AgentCmd {
    /// Same as `pqkit keygen --alg agent --name NAME -o FILE`.
    Keygen {
        #[arg(long)]
        name: String,
        #[arg(long, short = 'o', value_name = "FILE")]
        out: PathBuf,
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Same as `pqkit pubkey FILE`: prints the agent id.
    Id { file: PathBuf },
}

fn keygen(alg: KeyAlg, seed: Option<String>, out: PathBuf, public: PathBuf, force: bool) -> CliResult {
    crate::cmd::keys::keygen(KeygenArgs { alg, out, public: Some(public), seed, name: None, force })
}

fn sig_key_alg(alg: SigAlg) -> CliResult<KeyAlg> {
    Ok(match alg {
        SigAlg::MlDsa44 => KeyAlg::MlDsa44,
        SigAlg::MlDsa65 => KeyAlg::MlDsa65,
        SigAlg::MlDsa87 => KeyAlg::MlDsa87,
        SigAlg::Ed25519 => KeyAlg::Ed25519,
        SigAlg::P256 => KeyAlg::P256,
        SigAlg::Secp256k1 => KeyAlg::Secp256k1,
        SigAlg::RsaPss | SigAlg::RsaPkcs1 => {
            return Err(CliError::usage(
                "RSA keys come from `pqkit keygen --alg rsa2048|rsa3072|rsa4096 -o SK --pub PK`",
            ));
        }
    })
}

/// `pqkit sign keygen|sign|verify`.
pub fn sign(cmd: LegacySign) -> CliResult {
    match cmd {
        LegacySign::Keygen { alg, seed, sk, vk, force } => keygen(sig_key_alg(alg)?, seed, sk, vk, force),
        LegacySign::Sign { alg, key, ctx, deterministic, hedged, hash, out, force, input } => {
            crate::cmd::sign::sign(SignNew {
                key: Some(key),
                opts: SigOpts { alg, ctx, hash, salt_len: None },
                deterministic,
                hedged,
                out,
                force,
                input,
            })
        }
        LegacySign::Verify { alg, key, sig, ctx, low_s, hash, input } => crate::cmd::sign::verify(VerifyArgs {
            key,
            sig,
            opts: SigOpts { alg, ctx, hash, salt_len: None },
            low_s,
            input,
        }),
    }
}

/// `pqkit kem keygen|encaps|decaps`.
pub fn kem(a: KemArgs) -> CliResult {
    match a.cmd {
        KemCmd::Keygen { alg, seed, dk, ek, force } => {
            let k = match alg {
                KemAlg::MlKem512 => KeyAlg::MlKem512,
                KemAlg::MlKem768 => KeyAlg::MlKem768,
                KemAlg::MlKem1024 => KeyAlg::MlKem1024,
            };
            keygen(k, seed, dk, ek, force)
        }
        KemCmd::Encaps { alg, ek, ct, m, force } => {
            crate::cmd::kem::encaps(EncapsArgs { key: ek, out: ct, alg, m, force })
        }
        KemCmd::Decaps { alg, dk, ct } => crate::cmd::kem::decaps(DecapsArgs { key: dk, alg, ct }),
    }
}

/// `pqkit ecdh keygen|derive`.
pub fn ecdh(a: EcdhArgs) -> CliResult {
    match a.cmd {
        EcdhCmd::Keygen { alg, seed, sk, pk, force } => {
            let k = match alg {
                EcdhAlg::X25519 => KeyAlg::X25519,
                EcdhAlg::P256 => KeyAlg::P256,
                EcdhAlg::Secp256k1 => KeyAlg::Secp256k1,
            };
            keygen(k, seed, sk, pk, force)
        }
        EcdhCmd::Derive { alg, sk, peer } => crate::cmd::kem::derive(DeriveArgs { key: sk, peer, alg }),
    }
}

/// `pqkit agent keygen|id`.
pub fn agent(a: AgentArgs) -> CliResult {
    match a.cmd {
        AgentCmd::Keygen { name, out, force } => crate::cmd::keys::keygen(KeygenArgs {
            alg: KeyAlg::Agent,
            out,
            public: None,
            seed: None,
            name: Some(name),
            force,
        }),
        AgentCmd::Id { file } => crate::cmd::keys::pubkey(PubkeyArgs { key: file, out: None, force: false }),
    }
}
