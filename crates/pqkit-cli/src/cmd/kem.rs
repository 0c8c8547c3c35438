//! `pqkit encaps` / `pqkit decaps` (ML-KEM, FIPS 203) and `pqkit derive` (ECDH: X25519, P-256, secp256k1).
//!
//! ML-KEM keys and ciphertexts are raw FIPS 203 encodings; the parameter set is read from the key's length.
//! Shared secrets are printed in hex on stdout. A modified ML-KEM ciphertext yields an unrelated secret
//! (implicit rejection), not an error; an ECDH peer key of small order or off the curve is refused.

use crate::cmd::keys::{K256, P256, weierstrass_public, weierstrass_secret};
use crate::error::{CliError, CliResult, in_file};
use crate::io::{print_line, read_file, unhex};
use crate::keyfile::{self, Kind};
use crate::output::Guard;
use clap::{Args, ValueEnum};
use pqkit::ec::weierstrass::PrimeCurve;
use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey};
use pqkit::mlkem::{self, MlKem512, MlKem768, MlKem1024};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// An ML-KEM parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KemAlg {
    /// ML-KEM-512.
    #[value(name = "ml-kem-512")]
    MlKem512,
    /// ML-KEM-768.
    #[value(name = "ml-kem-768")]
    MlKem768,
    /// ML-KEM-1024.
    #[value(name = "ml-kem-1024")]
    MlKem1024,
}

impl KemAlg {
    pub fn kind(self) -> Kind {
        match self {
            KemAlg::MlKem512 => Kind::MlKem512,
            KemAlg::MlKem768 => Kind::MlKem768,
            KemAlg::MlKem1024 => Kind::MlKem1024,
        }
    }
    fn name(self) -> String {
        self.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
    }
}

/// A key-agreement algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EcdhAlg {
    /// X25519 (RFC 7748).
    #[value(name = "x25519")]
    X25519,
    /// ECDH on P-256 (the x-coordinate of the shared point).
    #[value(name = "p256")]
    P256,
    /// ECDH on secp256k1 (the x-coordinate of the shared point).
    #[value(name = "secp256k1")]
    Secp256k1,
}

impl EcdhAlg {
    fn kind(self) -> Kind {
        match self {
            EcdhAlg::X25519 => Kind::X25519,
            EcdhAlg::P256 => Kind::P256,
            EcdhAlg::Secp256k1 => Kind::Secp256k1,
        }
    }
    fn name(self) -> String {
        self.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
    }
}

#[derive(Args)]
pub struct EncapsArgs {
    /// The encapsulation (public) key file.
    #[arg(long, short = 'k', value_name = "PUBLIC", alias = "ek")]
    pub key: PathBuf,
    /// Where to write the ciphertext (`-` for stdout).
    #[arg(long, short = 'o', value_name = "CT", alias = "ct")]
    pub out: PathBuf,
    /// The parameter set; read from the key when absent.
    #[arg(long, value_enum)]
    pub alg: Option<KemAlg>,
    /// The 32-byte randomness m in hex (known-answer tests only; random when absent).
    #[arg(long, value_name = "HEX")]
    pub m: Option<String>,
    /// Replace an existing ciphertext file (never the key).
    #[arg(long, short = 'f')]
    pub force: bool,
}

#[derive(Args)]
pub struct DecapsArgs {
    /// The decapsulation (private) key file.
    #[arg(long, short = 'k', value_name = "PRIVATE", alias = "dk")]
    pub key: PathBuf,
    /// The parameter set; read from the key when absent.
    #[arg(long, value_enum)]
    pub alg: Option<KemAlg>,
    /// The ciphertext; stdin when `-`.
    #[arg(value_name = "CT")]
    pub ct: PathBuf,
}

#[derive(Args)]
pub struct DeriveArgs {
    /// Our private key file (PKCS#8 or SEC1, PEM or DER).
    #[arg(long, short = 'k', value_name = "PRIVATE", alias = "sk")]
    pub key: PathBuf,
    /// The peer's public key file (SubjectPublicKeyInfo, PEM or DER).
    #[arg(long, value_name = "PUBLIC")]
    pub peer: PathBuf,
    /// The algorithm; read from the key when absent.
    #[arg(long, value_enum)]
    pub alg: Option<EcdhAlg>,
}

fn kem_kind(k: &keyfile::KeyFile, path: &Path, alg: Option<KemAlg>, private: bool) -> CliResult<Kind> {
    let all = [Kind::MlKem512, Kind::MlKem768, Kind::MlKem1024];
    match alg {
        Some(a) => k.expect(path, &[a.kind()], private, Some(&a.name()))?,
        None => k.expect(path, &all, private, None)?,
    }
    Ok(k.kind)
}

/// `pqkit encaps`.
pub fn encaps(a: EncapsArgs) -> CliResult {
    let mut g = Guard::new(a.force);
    g.protect(&a.key, "key file");
    let out = g.output(&a.out)?;
    let k = keyfile::read(&a.key)?;
    let kind = kem_kind(&k, &a.key, a.alg, false)?;
    let m = a.m.as_ref().map(|s| unhex("--m", s, Some(32))).transpose()?;
    let m = m.as_ref().map(|v| {
        let mut arr = Zeroizing::new([0u8; 32]);
        arr.copy_from_slice(v);
        arr
    });
    let (ct, ss) = match kind {
        Kind::MlKem512 => encaps_with::<MlKem512>(&k.data, m.as_deref()),
        Kind::MlKem768 => encaps_with::<MlKem768>(&k.data, m.as_deref()),
        _ => encaps_with::<MlKem1024>(&k.data, m.as_deref()),
    }
    .map_err(in_file(&a.key))?;
    if out == crate::output::Dest::Stdout {
        return Err(CliError::usage("-o -: the shared secret goes to stdout; write the ciphertext to a file"));
    }
    g.write(&out, &ct, false)?;
    print_line(&ss)
}

fn encaps_with<P: mlkem::Params>(ek: &[u8], m: Option<&[u8; 32]>) -> pqkit::Result<(Vec<u8>, Zeroizing<String>)> {
    let key = mlkem::EncapsulationKey::<P>::from_bytes(ek)?;
    let (c, ss) = match m {
        Some(m) => key.encapsulate_deterministic(m),
        None => key.encapsulate()?,
    };
    Ok((c.as_bytes().to_vec(), Zeroizing::new(hex::encode(ss.as_bytes()))))
}

/// `pqkit decaps`.
pub fn decaps(a: DecapsArgs) -> CliResult {
    let k = keyfile::read(&a.key)?;
    let kind = kem_kind(&k, &a.key, a.alg, true)?;
    let ct = read_file(&a.ct)?;
    let f = in_file(&a.ct);
    let ss = match kind {
        Kind::MlKem512 => decaps_with::<MlKem512>(&k.data, &ct, &a.key, &f)?,
        Kind::MlKem768 => decaps_with::<MlKem768>(&k.data, &ct, &a.key, &f)?,
        _ => decaps_with::<MlKem1024>(&k.data, &ct, &a.key, &f)?,
    };
    print_line(&ss)
}

fn decaps_with<P: mlkem::Params>(
    dk: &[u8],
    ct: &[u8],
    key_path: &Path,
    ct_err: &dyn Fn(pqkit::Error) -> CliError,
) -> CliResult<Zeroizing<String>> {
    let key = mlkem::DecapsulationKey::<P>::from_bytes(dk).map_err(in_file(key_path))?;
    let c = mlkem::Ciphertext::<P>::from_bytes(ct).map_err(ct_err)?;
    Ok(Zeroizing::new(hex::encode(key.decapsulate(&c).as_bytes())))
}

/// `pqkit derive`: prints the shared secret in hex.
pub fn derive(a: DeriveArgs) -> CliResult {
    let k = keyfile::read(&a.key)?;
    let all = [Kind::X25519, Kind::P256, Kind::Secp256k1];
    match a.alg {
        Some(alg) => k.expect(&a.key, &[alg.kind()], true, Some(&alg.name()))?,
        None => k.expect(&a.key, &all, true, None)?,
    }
    let p = keyfile::read(&a.peer)?;
    p.expect(&a.peer, &[k.kind], false, None)?;
    let ss = match k.kind {
        Kind::X25519 => {
            let key = X25519SecretKey::from_pkcs8_der(&k.data).map_err(in_file(&a.key))?;
            let their = X25519PublicKey::from_public_key_der(&p.data).map_err(in_file(&a.peer))?;
            // An all-zero result means the peer's key has small order: that file is at fault.
            let ss = key.diffie_hellman(&their).map_err(in_file(&a.peer))?;
            Zeroizing::new(hex::encode(ss.as_bytes()))
        }
        Kind::P256 => weierstrass_derive::<P256>(&k, &a.key, &p, &a.peer)?,
        _ => weierstrass_derive::<K256>(&k, &a.key, &p, &a.peer)?,
    };
    print_line(&ss)
}

fn weierstrass_derive<C: PrimeCurve>(
    k: &keyfile::KeyFile,
    kp: &Path,
    p: &keyfile::KeyFile,
    pp: &Path,
) -> CliResult<Zeroizing<String>> {
    let key = weierstrass_secret::<C>(k, kp)?;
    let their = weierstrass_public::<C>(p, pp)?;
    let ss = key.diffie_hellman(&their).map_err(in_file(pp))?;
    Ok(Zeroizing::new(hex::encode(ss.as_bytes())))
}
