//! Report (a), public key: RSA-2048, RSA-3072 and RSA-4096 — key generation, RSAES-OAEP (SHA-256, MGF1-SHA-256,
//! empty label) encryption and decryption, RSASSA-PSS (SHA-256, salt length 32) and RSASSA-PKCS1-v1_5 (SHA-256)
//! signing and verification — for pqkit, OpenSSL (the vendored 3.6 through its EVP API: [`super::ossl_ffi`]),
//! aws-lc-rs, ring (signatures only: it has neither RSA key generation nor encryption) and RustCrypto (`rsa`).
//!
//! Every implementation works on the same fixed test key per size ([`TestKey`]: PKCS#8 DER files under
//! `rsa_keys/`, made once with `openssl genpkey`, e = 65537), each importing it its own way outside timing. The
//! adapters implement [`RsaImpl`], and the rows are checked before timing by:
//! - [`sign_check`]: PKCS#1 v1.5 signatures are deterministic, so every signer's signature must be byte-identical;
//!   every verifier accepts every signer's signature (PSS and PKCS#1 v1.5) and rejects it with one bit flipped;
//! - [`oaep_check`]: every encryptor's ciphertext of the same message decrypts to it under every decryptor, and a
//!   corrupted ciphertext is rejected by every decryptor;
//! - [`keygen_check`]: every generator's fresh key has the requested modulus size and e = 65537, and its PKCS#1
//!   v1.5 signature verifies under every verifier.
//!
//! ## What each row times
//! - keygen: one fresh key pair (e = 65537) and its key object. OpenSSL: `EVP_PKEY_generate` on a key-generation
//!   context initialised once; aws-lc-rs `KeyPair::generate`; RustCrypto `RsaPrivateKey::new` with `rand::rng()`.
//!   The time varies from key to key (how many candidates until a prime), so the row is timed over a fixed
//!   number of keys per implementation and the report shows the spread (see [`crate::registry::KeyCount`]).
//! - sign: SHA-256 of a 1 KiB message and one signature with the private key (CRT, with each library's
//!   blinding); PSS draws a fresh 32-byte salt.
//! - verify: SHA-256 of the message and the public-key operation with a key parsed outside timing (ring parses
//!   its key from the components in every call, as its API does).
//! - OAEP encrypt: a 32-byte message (a symmetric key) under the public key, fresh seed per call.
//! - OAEP decrypt: the private-key operation and the padding check on a ciphertext made outside timing.

use super::e;
use super::ossl_ffi as ossl;
use super::pq::{AnyKey, Id, Named};
use crate::registry::{Algorithm, Candidate, Check, Op, Report};
use std::sync::{Arc, OnceLock};

/// Length of the signed message (as in the ECDSA, Ed25519 and ML-DSA rows).
pub const MSG_LEN: usize = super::pq::MSG_LEN;
/// Length of the OAEP plaintext: a 256-bit key.
pub const PT_LEN: usize = 32;
/// The modulus sizes.
pub const SIZES: [usize; 3] = [2048, 3072, 4096];

const OPENSSL: Id = Id { name: "openssl", version: super::ossl, deterministic: true };
const AWS_LC_RS: Id = Id { name: "aws-lc-rs", version: || super::v("aws-lc-rs"), deterministic: true };
const RING: Id = Id { name: "ring", version: || super::v("ring"), deterministic: true };
const RUSTCRYPTO: Id = Id { name: "rustcrypto", version: || super::v("rsa"), deterministic: true };
#[cfg(feature = "pqkit-algs")]
const PQKIT: Id = Id { name: "pqkit", version: super::pqkit_version, deterministic: true };

fn key<T: 'static>(k: &AnyKey) -> Result<&T, String> {
    k.downcast_ref::<T>().ok_or_else(|| "key of another implementation".to_string())
}

#[inline]
fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.clear();
    out.extend_from_slice(bytes);
}

// ---------------------------------------------------------------------------------------------- the test keys

/// One fixed test key in the forms the adapters import: PKCS#8 DER and its components (minimal big-endian).
pub struct TestKey {
    /// Modulus size in bits.
    pub bits: usize,
    /// PKCS#8 PrivateKeyInfo (rsaEncryption), DER.
    pub pkcs8: &'static [u8],
    /// Modulus.
    pub n: Vec<u8>,
    /// Public exponent.
    pub e: Vec<u8>,
    /// Private exponent.
    pub d: Vec<u8>,
    /// First prime.
    pub p: Vec<u8>,
    /// Second prime.
    pub q: Vec<u8>,
    /// d mod (p - 1).
    pub dp: Vec<u8>,
    /// d mod (q - 1).
    pub dq: Vec<u8>,
    /// q^-1 mod p.
    pub qinv: Vec<u8>,
}

impl TestKey {
    /// The modulus length in bytes (signature and ciphertext length).
    pub fn size(&self) -> usize {
        self.bits.div_ceil(8)
    }
}

fn parse_test_key(bits: usize, pkcs8: &'static [u8]) -> Result<TestKey, String> {
    use rsa::pkcs1::der::Decode;
    let info = rsa::pkcs8::PrivateKeyInfoRef::from_der(pkcs8).map_err(e)?;
    let k = rsa::pkcs1::RsaPrivateKey::from_der(info.private_key.as_bytes()).map_err(e)?;
    if k.other_prime_infos.is_some() {
        return Err("multi-prime test key".into());
    }
    let b = |u: rsa::pkcs1::UintRef<'_>| u.as_bytes().to_vec();
    let t = TestKey {
        bits,
        pkcs8,
        n: b(k.modulus),
        e: b(k.public_exponent),
        d: b(k.private_exponent),
        p: b(k.prime1),
        q: b(k.prime2),
        dp: b(k.exponent1),
        dq: b(k.exponent2),
        qinv: b(k.coefficient),
    };
    let top = t.n.first().copied().unwrap_or(0);
    let n_bits = t.n.len() * 8 - top.leading_zeros() as usize;
    if n_bits != bits {
        return Err(format!("the {bits}-bit test key has a {n_bits}-bit modulus"));
    }
    Ok(t)
}

/// The fixed test key of `bits` (2048, 3072 or 4096), parsed once.
pub fn test_key(bits: usize) -> Result<&'static TestKey, String> {
    static KEYS: [OnceLock<Result<TestKey, String>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let (slot, der): (usize, &'static [u8]) = match bits {
        2048 => (0, include_bytes!("rsa_keys/rsa-2048.pk8.der")),
        3072 => (1, include_bytes!("rsa_keys/rsa-3072.pk8.der")),
        4096 => (2, include_bytes!("rsa_keys/rsa-4096.pk8.der")),
        _ => return Err(format!("no {bits}-bit test key")),
    };
    KEYS[slot].get_or_init(|| parse_test_key(bits, der)).as_ref().map_err(Clone::clone)
}

// ---------------------------------------------------------------------------------------------- the adapter trait

/// The signature scheme of a sign or verify row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// RSASSA-PSS, SHA-256, MGF1-SHA-256, 32-byte salt.
    Pss,
    /// RSASSA-PKCS1-v1_5, SHA-256.
    Pkcs1,
}

impl Scheme {
    /// The row name part.
    pub fn label(self) -> &'static str {
        match self {
            Scheme::Pss => "PSS-SHA256",
            Scheme::Pkcs1 => "PKCS1v15-SHA256",
        }
    }
}

/// What an implementation offers.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    /// Key generation.
    pub keygen: bool,
    /// RSASSA-PSS and RSASSA-PKCS1-v1_5 signing and verification.
    pub sign: bool,
    /// RSAES-OAEP encryption and decryption.
    pub oaep: bool,
}

/// One RSA implementation. Keys are opaque objects ([`AnyKey`]) of the implementation that made them.
pub trait RsaImpl: Named + Send + Sync {
    /// What it implements.
    fn caps(&self) -> Caps;
    /// The private key object of a test key.
    fn private(&self, k: &TestKey) -> Result<AnyKey, String>;
    /// A public key object from the modulus and exponent.
    fn public(&self, n: &[u8], e: &[u8]) -> Result<AnyKey, String>;
    /// A fresh `bits`-bit key pair with e = 65537 (the timed keygen operation); a private key object.
    fn keygen(&self, _bits: usize) -> Result<AnyKey, String> {
        Err(format!("{} has no RSA key generation", self.name()))
    }
    /// The modulus and public exponent of a key from [`keygen`](Self::keygen).
    fn generated_public(&self, _key: &AnyKey) -> Result<(Vec<u8>, Vec<u8>), String> {
        Err(format!("{} has no RSA key generation", self.name()))
    }
    /// A PKCS#1 v1.5 SHA-256 signature of `msg` by a key from [`keygen`](Self::keygen), for the keygen check.
    fn sign_generated(&self, key: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        self.sign(key, Scheme::Pkcs1, msg, out)
    }
    /// Signs `msg`; writes the signature into `out`.
    fn sign(&self, _sk: &AnyKey, _scheme: Scheme, _msg: &[u8], _out: &mut Vec<u8>) -> Result<(), String> {
        Err(format!("{} has no RSA signatures", self.name()))
    }
    /// Verifies a signature of `msg` (`Ok(false)` for a rejected signature).
    fn verify(&self, _pk: &AnyKey, _scheme: Scheme, _msg: &[u8], _sig: &[u8]) -> Result<bool, String> {
        Err(format!("{} has no RSA signatures", self.name()))
    }
    /// OAEP-encrypts `msg`; writes the ciphertext into `out`.
    fn encrypt(&self, _pk: &AnyKey, _msg: &[u8], _out: &mut Vec<u8>) -> Result<(), String> {
        Err(format!("{} has no RSA encryption", self.name()))
    }
    /// OAEP-decrypts `ct`; writes the message into `out` (`Err` for a rejected ciphertext).
    fn decrypt(&self, _sk: &AnyKey, _ct: &[u8], _out: &mut Vec<u8>) -> Result<(), String> {
        Err(format!("{} has no RSA decryption", self.name()))
    }
}

// ---------------------------------------------------------------------------------------------- pqkit

/// pqkit's `rsa` module: keys from their CRT components, `pss`, `pkcs1v15` (SHA-256) and `oaep` (SHA-256 default)
/// with their OS-seeded randomness, key generation with pqkit's ChaCha20 RNG (seeded from the OS once).
#[cfg(feature = "pqkit-algs")]
struct Pq {
    rng: std::sync::Mutex<pqkit::rng::ChaCha20Rng>,
}

#[cfg(feature = "pqkit-algs")]
impl Pq {
    fn new() -> Result<Self, String> {
        Ok(Pq { rng: std::sync::Mutex::new(pqkit::rng::ChaCha20Rng::from_os_rng().map_err(e)?) })
    }
}

#[cfg(feature = "pqkit-algs")]
impl Named for Pq {
    fn id(&self) -> Id {
        PQKIT
    }
}

/// A pqkit private key with its PSS and PKCS#1 v1.5 signers (SHA-256).
#[cfg(feature = "pqkit-algs")]
struct PqPrivate {
    key: pqkit::rsa::RsaPrivateKey,
    pss: pqkit::rsa::pss::SigningKey,
    pkcs1: pqkit::rsa::pkcs1v15::SigningKey,
}

/// A pqkit public key with its PSS and PKCS#1 v1.5 verifiers (SHA-256).
#[cfg(feature = "pqkit-algs")]
struct PqPublic {
    key: pqkit::rsa::RsaPublicKey,
    pss: pqkit::rsa::pss::VerifyingKey,
    pkcs1: pqkit::rsa::pkcs1v15::VerifyingKey,
}

#[cfg(feature = "pqkit-algs")]
impl RsaImpl for Pq {
    fn caps(&self) -> Caps {
        Caps { keygen: true, sign: true, oaep: true }
    }
    fn private(&self, k: &TestKey) -> Result<AnyKey, String> {
        use pqkit::rsa::{RsaPrivateKey, pkcs1v15, pss};
        let key = RsaPrivateKey::from_crt_components(&k.n, &k.e, &k.d, &k.p, &k.q, &k.dp, &k.dq, &k.qinv).map_err(e)?;
        Ok(Box::new(PqPrivate {
            pss: pss::SigningKey::new(key.clone()).map_err(e)?,
            pkcs1: pkcs1v15::SigningKey::new(key.clone()).map_err(e)?,
            key,
        }))
    }
    fn public(&self, n: &[u8], e_: &[u8]) -> Result<AnyKey, String> {
        use pqkit::rsa::{RsaPublicKey, pkcs1v15, pss};
        let key = RsaPublicKey::new(n, e_).map_err(e)?;
        Ok(Box::new(PqPublic {
            pss: pss::VerifyingKey::new(key.clone()),
            pkcs1: pkcs1v15::VerifyingKey::new(key.clone()),
            key,
        }))
    }
    fn keygen(&self, bits: usize) -> Result<AnyKey, String> {
        let mut rng = self.rng.lock().map_err(|_| "poisoned".to_string())?;
        Ok(Box::new(pqkit::rsa::RsaPrivateKey::generate(bits, &mut *rng).map_err(e)?))
    }
    fn generated_public(&self, k: &AnyKey) -> Result<(Vec<u8>, Vec<u8>), String> {
        let pk = key::<pqkit::rsa::RsaPrivateKey>(k)?.public_key();
        Ok((pk.n(), pk.e()))
    }
    fn sign_generated(&self, k: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let sk = key::<pqkit::rsa::RsaPrivateKey>(k)?.clone();
        put(out, &pqkit::rsa::pkcs1v15::SigningKey::new(sk).map_err(e)?.sign(msg).map_err(e)?);
        Ok(())
    }
    fn sign(&self, sk: &AnyKey, scheme: Scheme, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let k = key::<PqPrivate>(sk)?;
        let sig = match scheme {
            Scheme::Pss => k.pss.sign(msg),
            Scheme::Pkcs1 => k.pkcs1.sign(msg),
        };
        put(out, &sig.map_err(e)?);
        Ok(())
    }
    fn verify(&self, pk: &AnyKey, scheme: Scheme, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let k = key::<PqPublic>(pk)?;
        Ok(match scheme {
            Scheme::Pss => k.pss.verify(msg, sig).is_ok(),
            Scheme::Pkcs1 => k.pkcs1.verify(msg, sig).is_ok(),
        })
    }
    fn encrypt(&self, pk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        put(out, &pqkit::rsa::oaep::encrypt(&key::<PqPublic>(pk)?.key, msg).map_err(e)?);
        Ok(())
    }
    fn decrypt(&self, sk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        put(out, &pqkit::rsa::oaep::decrypt(&key::<PqPrivate>(sk)?.key, ct).map_err(e)?);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------- OpenSSL

/// OpenSSL through `EVP_PKEY` ([`ossl::Rsa`]); key generation through one [`ossl::RsaKeygen`] per size.
struct Ossl {
    keygen: [OnceLock<Result<ossl::RsaKeygen, String>>; 3],
}

impl Ossl {
    fn new() -> Self {
        Ossl { keygen: [OnceLock::new(), OnceLock::new(), OnceLock::new()] }
    }
    fn padding(s: Scheme) -> ossl::RsaPadding {
        match s {
            Scheme::Pss => ossl::RsaPadding::Pss,
            Scheme::Pkcs1 => ossl::RsaPadding::Pkcs1,
        }
    }
}

impl Named for Ossl {
    fn id(&self) -> Id {
        OPENSSL
    }
}

impl RsaImpl for Ossl {
    fn caps(&self) -> Caps {
        Caps { keygen: true, sign: true, oaep: true }
    }
    fn private(&self, k: &TestKey) -> Result<AnyKey, String> {
        Ok(Box::new(ossl::Rsa::private_from_der(k.pkcs8)?))
    }
    fn public(&self, n: &[u8], e: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(ossl::Rsa::public_from_components(n, e)?))
    }
    fn keygen(&self, bits: usize) -> Result<AnyKey, String> {
        let slot = SIZES.iter().position(|&b| b == bits).ok_or_else(|| format!("no {bits}-bit keygen"))?;
        let g = self.keygen[slot].get_or_init(|| ossl::RsaKeygen::new(bits as u32)).as_ref().map_err(Clone::clone)?;
        Ok(Box::new(g.generate()?))
    }
    fn generated_public(&self, k: &AnyKey) -> Result<(Vec<u8>, Vec<u8>), String> {
        let k = key::<ossl::Rsa>(k)?;
        Ok((k.component(c"n")?, k.component(c"e")?))
    }
    fn sign(&self, sk: &AnyKey, scheme: Scheme, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Rsa>(sk)?.sign(Self::padding(scheme), msg, out)
    }
    fn verify(&self, pk: &AnyKey, scheme: Scheme, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        key::<ossl::Rsa>(pk)?.verify(Self::padding(scheme), msg, sig)
    }
    fn encrypt(&self, pk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Rsa>(pk)?.encrypt(msg, out)
    }
    fn decrypt(&self, sk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Rsa>(sk)?.decrypt(ct, out)
    }
}

// ---------------------------------------------------------------------------------------------- aws-lc-rs

/// aws-lc-rs: `rsa::KeyPair` for signing, `ParsedPublicKey` for verification, `OaepPublicEncryptingKey` /
/// `OaepPrivateDecryptingKey` for OAEP.
struct Aws;

/// An aws-lc-rs private key: the signing key pair and, for test keys, the OAEP decrypting key.
struct AwsPrivate {
    pair: aws_lc_rs::rsa::KeyPair,
    oaep: Option<aws_lc_rs::rsa::OaepPrivateDecryptingKey>,
}

/// An aws-lc-rs public key, parsed once per scheme, and for OAEP.
struct AwsPublic {
    pss: aws_lc_rs::signature::ParsedPublicKey,
    pkcs1: aws_lc_rs::signature::ParsedPublicKey,
    oaep: aws_lc_rs::rsa::OaepPublicEncryptingKey,
}

impl Named for Aws {
    fn id(&self) -> Id {
        AWS_LC_RS
    }
}

impl RsaImpl for Aws {
    fn caps(&self) -> Caps {
        Caps { keygen: true, sign: true, oaep: true }
    }
    fn private(&self, k: &TestKey) -> Result<AnyKey, String> {
        use aws_lc_rs::rsa::{KeyPair, OaepPrivateDecryptingKey, PrivateDecryptingKey};
        let pair = KeyPair::from_pkcs8(k.pkcs8).map_err(e)?;
        let dec = OaepPrivateDecryptingKey::new(PrivateDecryptingKey::from_pkcs8(k.pkcs8).map_err(e)?).map_err(e)?;
        Ok(Box::new(AwsPrivate { pair, oaep: Some(dec) }))
    }
    fn public(&self, n: &[u8], e_: &[u8]) -> Result<AnyKey, String> {
        use aws_lc_rs::encoding::AsDer;
        use aws_lc_rs::rsa::{OaepPublicEncryptingKey, PublicEncryptingKey};
        use aws_lc_rs::signature::{RSA_PKCS1_2048_8192_SHA256, RSA_PSS_2048_8192_SHA256, RsaPublicKeyComponents};
        let c = RsaPublicKeyComponents { n, e: e_ };
        let pss = c.to_parsed_public_key(&RSA_PSS_2048_8192_SHA256).map_err(e)?;
        let pkcs1 = c.to_parsed_public_key(&RSA_PKCS1_2048_8192_SHA256).map_err(e)?;
        let spki = c.as_der().map_err(e)?;
        let oaep = OaepPublicEncryptingKey::new(PublicEncryptingKey::from_der(spki.as_ref()).map_err(e)?).map_err(e)?;
        Ok(Box::new(AwsPublic { pss, pkcs1, oaep }))
    }
    fn keygen(&self, bits: usize) -> Result<AnyKey, String> {
        use aws_lc_rs::rsa::{KeyPair, KeySize};
        let size = match bits {
            2048 => KeySize::Rsa2048,
            3072 => KeySize::Rsa3072,
            4096 => KeySize::Rsa4096,
            _ => return Err(format!("aws-lc-rs: no {bits}-bit keygen")),
        };
        Ok(Box::new(AwsPrivate { pair: KeyPair::generate(size).map_err(e)?, oaep: None }))
    }
    fn generated_public(&self, k: &AnyKey) -> Result<(Vec<u8>, Vec<u8>), String> {
        use aws_lc_rs::signature::KeyPair as _;
        let pk = key::<AwsPrivate>(k)?.pair.public_key();
        Ok((
            pk.modulus().big_endian_without_leading_zero().to_vec(),
            pk.exponent().big_endian_without_leading_zero().to_vec(),
        ))
    }
    fn sign(&self, sk: &AnyKey, scheme: Scheme, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use aws_lc_rs::signature::{RSA_PKCS1_SHA256, RSA_PSS_SHA256, RsaEncoding};
        let pair = &key::<AwsPrivate>(sk)?.pair;
        let pad: &'static dyn RsaEncoding = if scheme == Scheme::Pss { &RSA_PSS_SHA256 } else { &RSA_PKCS1_SHA256 };
        out.clear();
        out.resize(pair.public_modulus_len(), 0);
        pair.sign(pad, &aws_lc_rs::rand::SystemRandom::new(), msg, out).map_err(e)
    }
    fn verify(&self, pk: &AnyKey, scheme: Scheme, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let pk = key::<AwsPublic>(pk)?;
        let parsed = if scheme == Scheme::Pss { &pk.pss } else { &pk.pkcs1 };
        Ok(parsed.verify_sig(msg, sig).is_ok())
    }
    fn encrypt(&self, pk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let pk = &key::<AwsPublic>(pk)?.oaep;
        out.clear();
        out.resize(pk.ciphertext_size(), 0);
        let n = pk.encrypt(&aws_lc_rs::rsa::OAEP_SHA256_MGF1SHA256, msg, out, None).map_err(e)?.len();
        out.truncate(n);
        Ok(())
    }
    fn decrypt(&self, sk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let sk = key::<AwsPrivate>(sk)?.oaep.as_ref().ok_or("aws-lc-rs: no decrypting key")?;
        out.clear();
        out.resize(sk.min_output_size(), 0);
        let n = sk.decrypt(&aws_lc_rs::rsa::OAEP_SHA256_MGF1SHA256, ct, out, None).map_err(e)?.len();
        out.truncate(n);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------- ring

/// ring: `rsa::KeyPair` from PKCS#8 for signing; `RsaPublicKeyComponents` for verification (ring has no parsed
/// RSA public key type: it parses the components in every call).
struct Ring;

impl Named for Ring {
    fn id(&self) -> Id {
        RING
    }
}

impl RsaImpl for Ring {
    fn caps(&self) -> Caps {
        Caps { keygen: false, sign: true, oaep: false }
    }
    fn private(&self, k: &TestKey) -> Result<AnyKey, String> {
        Ok(Box::new(ring::rsa::KeyPair::from_pkcs8(k.pkcs8).map_err(e)?))
    }
    fn public(&self, n: &[u8], e: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(ring::rsa::PublicKeyComponents { n: n.to_vec(), e: e.to_vec() }))
    }
    fn sign(&self, sk: &AnyKey, scheme: Scheme, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use ring::signature::{RSA_PKCS1_SHA256, RSA_PSS_SHA256, RsaEncoding};
        let pair = key::<ring::rsa::KeyPair>(sk)?;
        let pad: &'static dyn RsaEncoding = if scheme == Scheme::Pss { &RSA_PSS_SHA256 } else { &RSA_PKCS1_SHA256 };
        out.clear();
        out.resize(pair.public().modulus_len(), 0);
        pair.sign(pad, &ring::rand::SystemRandom::new(), msg, out).map_err(e)
    }
    fn verify(&self, pk: &AnyKey, scheme: Scheme, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        use ring::signature::{RSA_PKCS1_2048_8192_SHA256, RSA_PSS_2048_8192_SHA256};
        let pk = key::<ring::rsa::PublicKeyComponents<Vec<u8>>>(pk)?;
        let params = if scheme == Scheme::Pss { &RSA_PSS_2048_8192_SHA256 } else { &RSA_PKCS1_2048_8192_SHA256 };
        Ok(pk.verify(params, msg, sig).is_ok())
    }
}

// ---------------------------------------------------------------------------------------------- RustCrypto

/// RustCrypto `rsa`: typed PSS, PKCS#1 v1.5 and OAEP keys over one `RsaPrivateKey`, `rand::rng()` for key
/// generation and OAEP; its default (blinded) private operation.
struct Rc;

type Sha256 = rsa::sha2::Sha256;

/// A RustCrypto private key and its typed signing and decrypting keys.
struct RcPrivate {
    key: rsa::PrivateKey,
    pss: rsa::pss::SigningKey<Sha256>,
    pkcs1: rsa::pkcs1v15::SigningKey<Sha256>,
    oaep: rsa::oaep::DecryptingKey<Sha256>,
}

impl RcPrivate {
    fn new(key: rsa::PrivateKey) -> Self {
        RcPrivate {
            pss: rsa::pss::SigningKey::new(key.clone()),
            pkcs1: rsa::pkcs1v15::SigningKey::new(key.clone()),
            oaep: rsa::oaep::DecryptingKey::new(key.clone()),
            key,
        }
    }
}

/// A RustCrypto public key's typed verifying and encrypting keys.
struct RcPublic {
    pss: rsa::pss::VerifyingKey<Sha256>,
    pkcs1: rsa::pkcs1v15::VerifyingKey<Sha256>,
    oaep: rsa::oaep::EncryptingKey<Sha256>,
}

impl Named for Rc {
    fn id(&self) -> Id {
        RUSTCRYPTO
    }
}

impl RsaImpl for Rc {
    fn caps(&self) -> Caps {
        Caps { keygen: true, sign: true, oaep: true }
    }
    fn private(&self, k: &TestKey) -> Result<AnyKey, String> {
        use rsa::pkcs8::DecodePrivateKey;
        Ok(Box::new(RcPrivate::new(rsa::PrivateKey::from_pkcs8_der(k.pkcs8).map_err(e)?)))
    }
    fn public(&self, n: &[u8], e_: &[u8]) -> Result<AnyKey, String> {
        use rsa::BoxedUint;
        let pk = rsa::PublicKey::new(BoxedUint::from_be_slice_vartime(n), BoxedUint::from_be_slice_vartime(e_))
            .map_err(e)?;
        Ok(Box::new(RcPublic {
            pss: rsa::pss::VerifyingKey::new(pk.clone()),
            pkcs1: rsa::pkcs1v15::VerifyingKey::new(pk.clone()),
            oaep: rsa::oaep::EncryptingKey::new(pk),
        }))
    }
    fn keygen(&self, bits: usize) -> Result<AnyKey, String> {
        Ok(Box::new(rsa::PrivateKey::new(&mut rand::rng(), bits).map_err(e)?))
    }
    fn generated_public(&self, k: &AnyKey) -> Result<(Vec<u8>, Vec<u8>), String> {
        use rsa::traits::PublicKeyParts;
        let k = key::<rsa::PrivateKey>(k)?;
        Ok((k.n_bytes().to_vec(), k.e_bytes().to_vec()))
    }
    fn sign(&self, sk: &AnyKey, scheme: Scheme, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use rsa::signature::{SignatureEncoding, Signer};
        // A key from `keygen` is a bare `RsaPrivateKey` (the keygen check signs with it).
        if let Some(k) = sk.downcast_ref::<rsa::PrivateKey>() {
            let s = rsa::pkcs1v15::SigningKey::<Sha256>::new(k.clone());
            put(out, &s.try_sign(msg).map_err(e)?.to_vec());
            return Ok(());
        }
        let k = key::<RcPrivate>(sk)?;
        let sig = match scheme {
            Scheme::Pss => k.pss.try_sign(msg).map_err(e)?.to_vec(),
            Scheme::Pkcs1 => k.pkcs1.try_sign(msg).map_err(e)?.to_vec(),
        };
        let _ = &k.key;
        put(out, &sig);
        Ok(())
    }
    fn verify(&self, pk: &AnyKey, scheme: Scheme, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        use rsa::signature::Verifier;
        let pk = key::<RcPublic>(pk)?;
        Ok(match scheme {
            Scheme::Pss => match rsa::pss::Signature::try_from(sig) {
                Ok(s) => pk.pss.verify(msg, &s).is_ok(),
                Err(_) => false,
            },
            Scheme::Pkcs1 => match rsa::pkcs1v15::Signature::try_from(sig) {
                Ok(s) => pk.pkcs1.verify(msg, &s).is_ok(),
                Err(_) => false,
            },
        })
    }
    fn encrypt(&self, pk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use rsa::traits::RandomizedEncryptor;
        let pk = key::<RcPublic>(pk)?;
        put(out, &pk.oaep.encrypt_with_rng(&mut rand::rng(), msg).map_err(e)?);
        Ok(())
    }
    fn decrypt(&self, sk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use rsa::traits::Decryptor;
        put(out, &key::<RcPrivate>(sk)?.oaep.decrypt(ct).map_err(e)?);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------- checks

fn private_keys(impls: &[Arc<dyn RsaImpl>], k: &TestKey) -> Result<Vec<AnyKey>, String> {
    impls.iter().map(|i| i.private(k).map_err(|x| format!("{} cannot import the test key: {x}", i.name()))).collect()
}

fn public_keys(impls: &[Arc<dyn RsaImpl>], n: &[u8], e: &[u8]) -> Result<Vec<AnyKey>, String> {
    impls.iter().map(|i| i.public(n, e).map_err(|x| format!("{} cannot parse the public key: {x}", i.name()))).collect()
}

/// The signature check of one scheme and size (see the module docs).
pub fn sign_check(impls: &[Arc<dyn RsaImpl>], bits: usize, scheme: Scheme) -> Result<(), String> {
    let k = test_key(bits)?;
    let msg = crate::harness::input_bytes(MSG_LEN);
    let sks = private_keys(impls, k)?;
    let pks = public_keys(impls, &k.n, &k.e)?;
    let mut sigs = Vec::new();
    for (i, s) in impls.iter().enumerate() {
        let mut sig = Vec::new();
        s.sign(&sks[i], scheme, &msg, &mut sig).map_err(|x| format!("{} cannot sign: {x}", s.name()))?;
        if sig.len() != k.size() {
            return Err(format!("{} signs {} bytes, not {}", s.name(), sig.len(), k.size()));
        }
        sigs.push(sig);
    }
    if scheme == Scheme::Pkcs1 {
        for (i, s) in impls.iter().enumerate() {
            if sigs[i] != sigs[0] {
                return Err(format!("{} and {} make different PKCS#1 v1.5 signatures", s.name(), impls[0].name()));
            }
        }
    }
    for (a, signer) in impls.iter().enumerate() {
        for (b, verifier) in impls.iter().enumerate() {
            if !verifier.verify(&pks[b], scheme, &msg, &sigs[a])? {
                return Err(format!("{} rejects {}'s {} signature", verifier.name(), signer.name(), scheme.label()));
            }
            let mut bad = sigs[a].clone();
            bad[k.size() / 2] ^= 0x10;
            if verifier.verify(&pks[b], scheme, &msg, &bad)? {
                return Err(format!("{} accepts a corrupted signature of {}", verifier.name(), signer.name()));
            }
            let mut other = msg.clone();
            other[0] ^= 1;
            if verifier.verify(&pks[b], scheme, &other, &sigs[a])? {
                return Err(format!("{} accepts {}'s signature for another message", verifier.name(), signer.name()));
            }
        }
    }
    Ok(())
}

/// The OAEP check of one size (see the module docs). `impls` are the implementations with OAEP.
pub fn oaep_check(impls: &[Arc<dyn RsaImpl>], bits: usize) -> Result<(), String> {
    let k = test_key(bits)?;
    let msg = crate::harness::input_bytes(PT_LEN);
    let sks = private_keys(impls, k)?;
    let pks = public_keys(impls, &k.n, &k.e)?;
    for (a, enc) in impls.iter().enumerate() {
        let mut ct = Vec::new();
        enc.encrypt(&pks[a], &msg, &mut ct).map_err(|x| format!("{} cannot encrypt: {x}", enc.name()))?;
        if ct.len() != k.size() {
            return Err(format!("{} makes a {}-byte ciphertext, not {}", enc.name(), ct.len(), k.size()));
        }
        let mut again = Vec::new();
        enc.encrypt(&pks[a], &msg, &mut again)?;
        if again == ct {
            return Err(format!("{} encrypts the same message twice to the same ciphertext", enc.name()));
        }
        for (b, dec) in impls.iter().enumerate() {
            let mut pt = Vec::new();
            dec.decrypt(&sks[b], &ct, &mut pt)
                .map_err(|x| format!("{} cannot decrypt {}'s ciphertext: {x}", dec.name(), enc.name()))?;
            if pt != msg {
                return Err(format!("{} decrypts {}'s ciphertext to another message", dec.name(), enc.name()));
            }
            let mut bad = ct.clone();
            bad[k.size() / 2] ^= 0x10;
            if dec.decrypt(&sks[b], &bad, &mut pt).is_ok() {
                return Err(format!("{} accepts a corrupted ciphertext of {}", dec.name(), enc.name()));
            }
        }
    }
    Ok(())
}

/// The key-generation check of one size (see the module docs). `gens` generate, `verifiers` verify.
pub fn keygen_check(gens: &[Arc<dyn RsaImpl>], verifiers: &[Arc<dyn RsaImpl>], bits: usize) -> Result<(), String> {
    let msg = crate::harness::input_bytes(MSG_LEN);
    for g in gens {
        let sk = g.keygen(bits).map_err(|x| format!("{} keygen: {x}", g.name()))?;
        let (n, e) = g.generated_public(&sk)?;
        let n_bits = n.len() * 8 - n.first().map_or(8, |b| b.leading_zeros() as usize);
        if n_bits != bits || e != [1, 0, 1] {
            return Err(format!("{} generated a {n_bits}-bit modulus / exponent {e:02x?} for {bits} bits", g.name()));
        }
        let mut sig = Vec::new();
        g.sign_generated(&sk, &msg, &mut sig).map_err(|x| format!("{} cannot sign with its new key: {x}", g.name()))?;
        for v in verifiers {
            let pk = v.public(&n, &e).map_err(|x| format!("{} cannot parse {}'s new key: {x}", v.name(), g.name()))?;
            if !v.verify(&pk, Scheme::Pkcs1, &msg, &sig)? {
                return Err(format!("{} rejects a signature by {}'s new key", v.name(), g.name()));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------- registry

/// The RSA implementations, pqkit first.
pub fn impls() -> Vec<Arc<dyn RsaImpl>> {
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn RsaImpl>> = vec![Arc::new(Ossl::new()), Arc::new(Aws), Arc::new(Ring), Arc::new(Rc)];
    #[cfg(feature = "pqkit-algs")]
    match Pq::new() {
        Ok(p) => v.insert(0, Arc::new(p)),
        Err(x) => eprintln!("pqkit-bench: no pqkit RSA adapter (its RNG failed to seed: {x})"),
    }
    v
}

/// Keys per implementation in the keygen rows, `(--full, --quick)`: at least 50 everywhere (the issue asks for the
/// median of at least 50 keys; key generation times vary widely from key to key). 4096-bit keys take about half
/// a second each for the peers, so that row alone adds a minute or two to a `--quick` run.
fn key_counts(bits: usize) -> (usize, usize) {
    match bits {
        2048 => (101, 51),
        _ => (51, 51),
    }
}

/// The rows of one modulus size.
pub fn size_algorithms(bits: usize, impls: &[Arc<dyn RsaImpl>]) -> Vec<Algorithm> {
    let mut algs = Vec::new();
    let name = format!("RSA-{bits}");
    // keygen
    let gens: Vec<Arc<dyn RsaImpl>> = impls.iter().filter(|i| i.caps().keygen).cloned().collect();
    let signers: Vec<Arc<dyn RsaImpl>> = impls.iter().filter(|i| i.caps().sign).cloned().collect();
    let (all, g2) = (signers.clone(), gens.clone());
    let check = Check::Custom(Box::new(move || keygen_check(&g2, &all, bits)));
    let (full, quick) = key_counts(bits);
    let mut alg = Algorithm::public_key(&name, "keygen", 0, check).reports(&[Report::A]).keys(full, quick);
    for g in &gens {
        let g2 = g.clone();
        let setup = move |_size: usize| -> Result<Box<dyn Op>, String> {
            let g = g2.clone();
            Ok(Box::new(move |_d: &mut [u8], _out: &mut Vec<u8>| g.keygen(bits).map(drop)))
        };
        alg = alg.with(Candidate::new(g.name(), g.version(), setup));
    }
    algs.push(alg);
    // OAEP
    let encs: Vec<Arc<dyn RsaImpl>> = impls.iter().filter(|i| i.caps().oaep).cloned().collect();
    for op in ["encrypt", "decrypt"] {
        let list = encs.clone();
        let check = Check::Custom(Box::new(move || oaep_check(&list, bits)));
        let mut alg = Algorithm::public_key(&format!("{name} OAEP-SHA256"), op, PT_LEN, check).reports(&[Report::A]);
        for i in &encs {
            let i2 = i.clone();
            let setup = move |_size: usize| -> Result<Box<dyn Op>, String> {
                let i = i2.clone();
                let k = test_key(bits)?;
                let msg = crate::harness::input_bytes(PT_LEN);
                let pk = i.public(&k.n, &k.e)?;
                Ok(if op == "encrypt" {
                    Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| i.encrypt(&pk, &msg, out))
                } else {
                    let sk = i.private(k)?;
                    let mut ct = Vec::new();
                    i.encrypt(&pk, &msg, &mut ct)?;
                    Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| i.decrypt(&sk, &ct, out))
                })
            };
            alg = alg.with(Candidate::new(i.name(), i.version(), setup));
        }
        algs.push(alg);
    }
    // PSS and PKCS#1 v1.5 signatures
    for scheme in [Scheme::Pss, Scheme::Pkcs1] {
        for op in ["sign", "verify"] {
            let list = signers.clone();
            let check = Check::Custom(Box::new(move || sign_check(&list, bits, scheme)));
            let mut alg =
                Algorithm::public_key(&format!("{name} {}", scheme.label()), op, MSG_LEN, check).reports(&[Report::A]);
            for i in &signers {
                let i2 = i.clone();
                let setup = move |_size: usize| -> Result<Box<dyn Op>, String> {
                    let i = i2.clone();
                    let k = test_key(bits)?;
                    let msg = crate::harness::input_bytes(MSG_LEN);
                    let sk = i.private(k)?;
                    Ok(if op == "sign" {
                        Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| i.sign(&sk, scheme, &msg, out))
                    } else {
                        let mut sig = Vec::new();
                        i.sign(&sk, scheme, &msg, &mut sig)?;
                        let pk = i.public(&k.n, &k.e)?;
                        Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                            if i.verify(&pk, scheme, &msg, &sig)? {
                                out.clear();
                                Ok(())
                            } else {
                                Err("valid signature rejected".into())
                            }
                        })
                    })
                };
                alg = alg.with(Candidate::new(i.name(), i.version(), setup));
            }
            algs.push(alg);
        }
    }
    algs
}

/// The family's algorithms: RSA-2048, RSA-3072, RSA-4096.
pub fn algorithms() -> Vec<Algorithm> {
    let impls = impls();
    SIZES.iter().flat_map(|&bits| size_algorithms(bits, &impls)).collect()
}
