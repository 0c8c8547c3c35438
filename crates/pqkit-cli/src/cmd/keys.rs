//! `pqkit keygen` (every key kind, one grammar) and `pqkit pubkey` (the public half of a private key file).
//!
//! Private keys are written with mode 0600 and public keys with 0644, through the one output mechanism
//! ([`crate::output::Guard`]): a pair is written whole or not at all, never onto the other half or an input.
//! EC and RSA keys are PEM (PKCS#8 and SubjectPublicKeyInfo, the files `openssl genpkey` and `openssl pkey`
//! make); ML-KEM and ML-DSA keys are their raw FIPS 203 / FIPS 204 encodings; X-Wing identities, agent
//! identities and symmetric keys are pqkit's own text files.

use crate::error::{CliError, CliResult, in_file};
use crate::io::{print_line, unhex};
use crate::keyfile::{self, Form, Kind};
use crate::output::{Dest, Guard};
use clap::{Args, ValueEnum};
use pqkit::ec::ed25519::SigningKey as Ed25519Key;
use pqkit::ec::weierstrass::{self as ws, PrimeCurve};
use pqkit::ec::x25519::X25519SecretKey;
use pqkit::mldsa::{self, MlDsa44, MlDsa65, MlDsa87};
use pqkit::mlkem::{self, MlKem512, MlKem768, MlKem1024};
use pqkit::rsa::RsaPrivateKey;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// The P-256 curve.
pub type P256 = pqkit::ec::p256::NistP256;
/// The secp256k1 curve.
pub type K256 = pqkit::ec::secp256k1::Secp256k1;

/// Every kind of key `pqkit keygen` makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeyAlg {
    /// A 32-byte symmetric key file for `encrypt -k` / `decrypt -k` (the default).
    #[value(name = "symmetric")]
    Symmetric,
    /// X25519 key agreement (RFC 7748).
    #[value(name = "x25519")]
    X25519,
    /// Ed25519 signatures (RFC 8032).
    #[value(name = "ed25519")]
    Ed25519,
    /// P-256 (ECDSA with SHA-256, and ECDH).
    #[value(name = "p256")]
    P256,
    /// secp256k1 (ECDSA with SHA-256, low-S, and ECDH).
    #[value(name = "secp256k1")]
    Secp256k1,
    /// RSA with a 2048-bit modulus, e = 65537.
    #[value(name = "rsa2048")]
    Rsa2048,
    /// RSA with a 3072-bit modulus, e = 65537.
    #[value(name = "rsa3072")]
    Rsa3072,
    /// RSA with a 4096-bit modulus, e = 65537.
    #[value(name = "rsa4096")]
    Rsa4096,
    /// ML-KEM-512 (FIPS 203).
    #[value(name = "ml-kem-512")]
    MlKem512,
    /// ML-KEM-768 (FIPS 203).
    #[value(name = "ml-kem-768")]
    MlKem768,
    /// ML-KEM-1024 (FIPS 203).
    #[value(name = "ml-kem-1024")]
    MlKem1024,
    /// ML-DSA-44 (FIPS 204).
    #[value(name = "ml-dsa-44")]
    MlDsa44,
    /// ML-DSA-65 (FIPS 204).
    #[value(name = "ml-dsa-65")]
    MlDsa65,
    /// ML-DSA-87 (FIPS 204).
    #[value(name = "ml-dsa-87")]
    MlDsa87,
    /// An X-Wing identity (ML-KEM-768 + X25519) for `decrypt -i`; its recipient (for `encrypt -r`) is printed.
    #[value(name = "xwing")]
    Xwing,
    /// A pqkit-bus agent identity (needs --name); its id is printed.
    #[value(name = "agent")]
    Agent,
}

#[derive(Args)]
pub struct KeygenArgs {
    /// The kind of key (default: symmetric).
    #[arg(long, value_enum, default_value = "symmetric")]
    pub alg: KeyAlg,
    /// Where to write the private key (mode 0600); `-` for stdout.
    #[arg(long, short = 'o', value_name = "PRIVATE")]
    pub out: PathBuf,
    /// Also write the public key (or the X-Wing recipient, or the agent id) here.
    #[arg(long = "pub", value_name = "PUBLIC")]
    pub public: Option<PathBuf>,
    /// Deterministic key generation from a seed in hex (known-answer tests): 64 bytes d || z for ML-KEM,
    /// 32 bytes for ML-DSA (ξ), Ed25519 and X25519 (the private key), P-256 and secp256k1 (the big-endian
    /// scalar, 1 to n − 1), and agents.
    #[arg(long, value_name = "HEX")]
    pub seed: Option<String>,
    /// The agent's name (1 to 64 bytes, no control characters); --alg agent only.
    #[arg(long)]
    pub name: Option<String>,
    /// Replace existing files (never an input, nor one half of the pair with the other).
    #[arg(long, short = 'f')]
    pub force: bool,
}

#[derive(Args)]
pub struct PubkeyArgs {
    /// The private key, identity or agent identity file.
    pub key: PathBuf,
    /// Where to write it; stdout when absent or `-`.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Replace an existing file.
    #[arg(long, short = 'f')]
    pub force: bool,
}

/// What keygen produced: the private file, the public file's content, and a line to print.
struct Made {
    private: Zeroizing<Vec<u8>>,
    public: Option<Vec<u8>>,
    print: Option<String>,
}

fn seed_of(seed: &Option<String>, len: usize) -> CliResult<Option<Zeroizing<Vec<u8>>>> {
    seed.as_ref().map(|s| unhex("--seed", s, Some(len))).transpose()
}

fn seed32(seed: &Option<String>) -> CliResult<Option<Zeroizing<[u8; 32]>>> {
    Ok(seed_of(seed, 32)?.map(|s| {
        let mut a = Zeroizing::new([0u8; 32]);
        a.copy_from_slice(&s);
        a
    }))
}

fn random32() -> CliResult<Zeroizing<[u8; 32]>> {
    let mut s = Zeroizing::new([0u8; 32]);
    pqkit::rng::fill_os(&mut s[..])?;
    Ok(s)
}

fn pem_pair(private: Zeroizing<String>, public: String) -> Made {
    Made { private: Zeroizing::new(private.as_bytes().to_vec()), public: Some(public.into_bytes()), print: None }
}

fn weierstrass<C: PrimeCurve>(seed: &Option<String>) -> CliResult<Made> {
    let key = match seed_of(seed, 32)? {
        Some(s) => ws::SecretKey::<C>::from_bytes(&s).map_err(|_| {
            CliError::usage(format!("--seed: not a {} private key (it must be between 1 and n - 1)", C::NAME))
        })?,
        None => {
            let mut rng = pqkit::rng::ChaChaRng::<20>::from_os_rng()?;
            ws::SecretKey::<C>::generate(&mut rng)
        }
    };
    Ok(pem_pair(key.to_pkcs8_pem()?, key.public_key().to_public_key_pem()?))
}

fn mlkem_pair<P: mlkem::Params>(seed: &Option<String>) -> CliResult<Made> {
    let (d, e) = match seed_of(seed, 64)? {
        Some(s) => mlkem::DecapsulationKey::<P>::from_seed64(&s)?,
        None => mlkem::DecapsulationKey::<P>::generate()?,
    };
    Ok(Made {
        private: Zeroizing::new(d.to_bytes().as_ref().to_vec()),
        public: Some(e.as_bytes().to_vec()),
        print: None,
    })
}

fn mldsa_pair<P: mldsa::Params>(seed: &Option<String>) -> CliResult<Made> {
    let (s, v) = match seed_of(seed, 32)? {
        Some(s) => mldsa::SigningKey::<P>::from_seed_bytes(&s)?,
        None => mldsa::SigningKey::<P>::generate()?,
    };
    Ok(Made {
        private: Zeroizing::new((*s.to_bytes()).as_ref().to_vec()),
        public: Some(v.as_bytes().to_vec()),
        print: None,
    })
}

fn make(a: &KeygenArgs) -> CliResult<Made> {
    let no_seed = |what: &str| -> CliResult {
        if a.seed.is_some() { Err(CliError::usage(format!("--seed: not for {what} keys"))) } else { Ok(()) }
    };
    if a.name.is_some() && a.alg != KeyAlg::Agent {
        return Err(CliError::usage("--name: only for --alg agent"));
    }
    Ok(match a.alg {
        KeyAlg::Symmetric => {
            no_seed("symmetric")?;
            if a.public.is_some() {
                return Err(CliError::usage("--pub: a symmetric key has no public half"));
            }
            Made { private: crate::format::new_symmetric_key_text()?, public: None, print: None }
        }
        KeyAlg::X25519 => {
            let s = match seed32(&a.seed)? {
                Some(s) => s,
                None => random32()?,
            };
            let key = X25519SecretKey::from_array(*s);
            pem_pair(key.to_pkcs8_pem()?, key.public_key().to_public_key_pem()?)
        }
        KeyAlg::Ed25519 => {
            let s = match seed32(&a.seed)? {
                Some(s) => s,
                None => random32()?,
            };
            let key = Ed25519Key::from_seed(&s);
            pem_pair(key.to_pkcs8_pem()?, key.verifying_key().to_public_key_pem()?)
        }
        KeyAlg::P256 => weierstrass::<P256>(&a.seed)?,
        KeyAlg::Secp256k1 => weierstrass::<K256>(&a.seed)?,
        KeyAlg::Rsa2048 | KeyAlg::Rsa3072 | KeyAlg::Rsa4096 => {
            no_seed("RSA")?;
            let bits = match a.alg {
                KeyAlg::Rsa2048 => 2048,
                KeyAlg::Rsa3072 => 3072,
                _ => 4096,
            };
            let mut rng = pqkit::rng::ChaCha20Rng::from_os_rng()?;
            let key = RsaPrivateKey::generate(bits, &mut rng)?;
            pem_pair(key.to_pkcs8_pem()?, key.public_key().to_public_key_pem()?)
        }
        KeyAlg::MlKem512 => mlkem_pair::<MlKem512>(&a.seed)?,
        KeyAlg::MlKem768 => mlkem_pair::<MlKem768>(&a.seed)?,
        KeyAlg::MlKem1024 => mlkem_pair::<MlKem1024>(&a.seed)?,
        KeyAlg::MlDsa44 => mldsa_pair::<MlDsa44>(&a.seed)?,
        KeyAlg::MlDsa65 => mldsa_pair::<MlDsa65>(&a.seed)?,
        KeyAlg::MlDsa87 => mldsa_pair::<MlDsa87>(&a.seed)?,
        KeyAlg::Xwing => {
            no_seed("X-Wing")?;
            let (text, recipient) = crate::recipient::new_identity()?;
            Made { private: text, public: Some(format!("{recipient}\n").into_bytes()), print: Some(recipient) }
        }
        KeyAlg::Agent => {
            let name = a.name.as_deref().ok_or_else(|| CliError::usage("--name: required with --alg agent"))?;
            let seed = match seed32(&a.seed)? {
                Some(s) => s,
                None => random32()?,
            };
            let id = pqkit_bus::Identity::from_seed(name, &seed)?;
            let line = format!("id {}", id.id());
            Made {
                private: crate::bus::write_identity(name, &seed)?,
                public: Some(format!("{}\n", id.id()).into_bytes()),
                print: Some(line),
            }
        }
    })
}

/// `pqkit keygen --alg ALG -o PRIVATE [--pub PUBLIC]`.
pub fn keygen(a: KeygenArgs) -> CliResult {
    let mut g = Guard::new(a.force);
    let sk = g.output(&a.out)?;
    let pk = g.output_opt(a.public.as_deref())?;
    let made = make(&a)?;
    let mut outs: Vec<(&Dest, &[u8], bool)> = vec![(&sk, &made.private[..], true)];
    if let (Some(pk), Some(data)) = (&pk, &made.public) {
        outs.push((pk, data, false));
    }
    g.write_files(&outs)?;
    match made.print {
        // With the private key on stdout, the line would be mixed into it.
        Some(line) if sk != Dest::Stdout && pk != Some(Dest::Stdout) => print_line(&line),
        _ => Ok(()),
    }
}

/// The public half of the key in `path`, as the bytes of a public key file.
pub fn public_of(path: &Path) -> CliResult<Vec<u8>> {
    let k = keyfile::read(path)?;
    if !k.private {
        return Err(CliError::usage(format!(
            "{}: this is already a public {} key (pubkey reads a private key)",
            path.display(),
            k.kind
        )));
    }
    let d = &k.data[..];
    let f = in_file(path);
    Ok(match k.kind {
        Kind::X25519 => X25519SecretKey::from_pkcs8_der(d).map_err(&f)?.public_key().to_public_key_pem()?.into_bytes(),
        Kind::Ed25519 => Ed25519Key::from_pkcs8_der(d).map_err(&f)?.verifying_key().to_public_key_pem()?.into_bytes(),
        Kind::P256 => weierstrass_secret::<P256>(&k, path)?.public_key().to_public_key_pem()?.into_bytes(),
        Kind::Secp256k1 => weierstrass_secret::<K256>(&k, path)?.public_key().to_public_key_pem()?.into_bytes(),
        Kind::Rsa => rsa_private(&k, path)?.public_key().to_public_key_pem()?.into_bytes(),
        Kind::MlKem512 => {
            mlkem::DecapsulationKey::<MlKem512>::from_bytes(d).map_err(&f)?.encapsulation_key().as_bytes().to_vec()
        }
        Kind::MlKem768 => {
            mlkem::DecapsulationKey::<MlKem768>::from_bytes(d).map_err(&f)?.encapsulation_key().as_bytes().to_vec()
        }
        Kind::MlKem1024 => {
            mlkem::DecapsulationKey::<MlKem1024>::from_bytes(d).map_err(&f)?.encapsulation_key().as_bytes().to_vec()
        }
        Kind::MlDsa44 => mldsa::SigningKey::<MlDsa44>::from_bytes(d).map_err(&f)?.verifying_key().as_bytes().to_vec(),
        Kind::MlDsa65 => mldsa::SigningKey::<MlDsa65>::from_bytes(d).map_err(&f)?.verifying_key().as_bytes().to_vec(),
        Kind::MlDsa87 => mldsa::SigningKey::<MlDsa87>::from_bytes(d).map_err(&f)?.verifying_key().as_bytes().to_vec(),
        Kind::XWing => format!("{}\n", crate::recipient::recipient_of_identity(path)?).into_bytes(),
        Kind::Agent => format!("{}\n", crate::bus::read_identity(path)?.id()).into_bytes(),
        Kind::Symmetric => {
            return Err(CliError::usage(format!("{}: a symmetric key has no public half", path.display())));
        }
    })
}

/// `pqkit pubkey PRIVATE [-o PUBLIC]`.
pub fn pubkey(a: PubkeyArgs) -> CliResult {
    let mut g = Guard::new(a.force);
    g.protect(&a.key, "private key");
    let dest = g.output(a.out.as_deref().unwrap_or(Path::new("-")))?;
    let data = public_of(&a.key)?;
    let text = std::str::from_utf8(&data).is_ok();
    if dest == Dest::Stdout && !text && std::io::stdout().is_terminal() {
        return Err(CliError::usage(
            "refusing to write a binary public key to a terminal: give -o FILE or redirect it",
        ));
    }
    g.write(&dest, &data, false)
}

/// A P-256 / secp256k1 private key from PKCS#8 or SEC1.
pub fn weierstrass_secret<C: PrimeCurve>(k: &keyfile::KeyFile, path: &Path) -> CliResult<ws::SecretKey<C>> {
    match k.form {
        Form::Sec1 => ws::SecretKey::<C>::from_sec1_der(&k.data),
        _ => ws::SecretKey::<C>::from_pkcs8_der(&k.data),
    }
    .map_err(in_file(path))
}

/// A P-256 / secp256k1 public key (SubjectPublicKeyInfo).
pub fn weierstrass_public<C: PrimeCurve>(k: &keyfile::KeyFile, path: &Path) -> CliResult<ws::PublicKey<C>> {
    ws::PublicKey::<C>::from_public_key_der(&k.data).map_err(in_file(path))
}

/// An RSA private key from PKCS#8 or PKCS#1.
pub fn rsa_private(k: &keyfile::KeyFile, path: &Path) -> CliResult<RsaPrivateKey> {
    match k.form {
        Form::Pkcs1Private => RsaPrivateKey::from_pkcs1_der(&k.data),
        _ => RsaPrivateKey::from_pkcs8_der(&k.data),
    }
    .map_err(in_file(path))
}

/// An RSA public key from SubjectPublicKeyInfo or PKCS#1.
pub fn rsa_public(k: &keyfile::KeyFile, path: &Path) -> CliResult<pqkit::rsa::RsaPublicKey> {
    match k.form {
        Form::Pkcs1Public => pqkit::rsa::RsaPublicKey::from_pkcs1_der(&k.data),
        _ => pqkit::rsa::RsaPublicKey::from_public_key_der(&k.data),
    }
    .map_err(in_file(path))
}
