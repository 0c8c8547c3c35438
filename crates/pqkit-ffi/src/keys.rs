//! Key objects behind opaque handles: generate, import and export (raw, PKCS#8, SEC1, SubjectPublicKeyInfo,
//! as DER or PEM), sign and verify, key agreement. One pair of handle types serves every key type
//! ([`PqkitKeyType`]), as OpenSSL's `EVP_PKEY` does; the files are the ones `openssl genpkey` and `openssl pkey`
//! read and write.

use crate::{
    Fail, FfiResult, PqkitStatus, emit, free_handle, guard, guard_free, handle_ref, input, new_handle, output,
    write_out,
};
use pqkit::ec::ed25519;
use pqkit::ec::weierstrass::{self as ws, PrimeCurve};
use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey};
use pqkit::ec::{p256::NistP256, secp256k1::Secp256k1};
use pqkit::rsa::{RsaPrivateKey, RsaPublicKey};
use zeroize::Zeroizing;

/// Key types (pass them as `uint32_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitKeyType {
    /// Ed25519 signatures (RFC 8032). Raw keys: a 32-byte seed, a 32-byte public key.
    Ed25519 = 1,
    /// X25519 key agreement (RFC 7748). Raw keys: 32 bytes each.
    X25519 = 2,
    /// ECDSA-SHA-256 and ECDH on NIST P-256. Raw keys: a 32-byte big-endian scalar, a SEC1 point.
    P256 = 3,
    /// ECDSA-SHA-256 (low-S) and ECDH on secp256k1. Raw keys as P-256.
    Secp256k1 = 4,
    /// RSA (RFC 8017): PSS and PKCS#1 v1.5 signatures, OAEP encryption (`pqkit_rsa_*`). No raw form; keys
    /// are made by [`crate::pqkit_private_key_generate_rsa`].
    Rsa = 5,
}

/// Key encodings (pass them as `uint32_t`). PEM output is ASCII text with `\n` line ends and no NUL
/// terminator; PEM input need not be NUL-terminated either (its length is given).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitKeyFormat {
    /// The bare key: private, the seed or scalar (32 bytes); public, 32 bytes (Ed25519, X25519) or a SEC1
    /// point (65 bytes uncompressed when written; compressed 33-byte points are accepted).
    Raw = 1,
    /// PKCS#8 `PrivateKeyInfo` (RFC 5208 / 5958), DER. Private keys only.
    Pkcs8Der = 2,
    /// PKCS#8 as PEM, label `PRIVATE KEY`. Private keys only.
    Pkcs8Pem = 3,
    /// SEC1 `ECPrivateKey` (RFC 5915), DER. P-256 and secp256k1 private keys only.
    Sec1Der = 4,
    /// SEC1 as PEM, label `EC PRIVATE KEY`. P-256 and secp256k1 private keys only.
    Sec1Pem = 5,
    /// X.509 `SubjectPublicKeyInfo` (RFC 5280 / 5480 / 8410), DER. Public keys only.
    SpkiDer = 6,
    /// SubjectPublicKeyInfo as PEM, label `PUBLIC KEY`. Public keys only.
    SpkiPem = 7,
    /// PKCS#1 `RSAPrivateKey` or `RSAPublicKey` (RFC 8017 appendix A.1), DER. RSA keys only.
    Pkcs1Der = 8,
    /// PKCS#1 as PEM, label `RSA PRIVATE KEY` or `RSA PUBLIC KEY`. RSA keys only.
    Pkcs1Pem = 9,
}

/// Signature encodings (pass them as `uint32_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitSignatureFormat {
    /// Fixed length: Ed25519's 64 bytes, or ECDSA's `r || s` (IEEE P1363, 64 bytes).
    Raw = 1,
    /// ECDSA only: the DER `SEQUENCE { r, s }` of X.509 and `openssl dgst -sign` (at most 72 bytes).
    Der = 2,
}

/// The largest DER ECDSA signature, in bytes: a capacity that always suffices for `PQKIT_SIGNATURE_FORMAT_DER`.
pub const PQKIT_ECDSA_DER_SIGNATURE_MAX_LEN: usize = 72;

/// A private key (opaque). Made by [`pqkit_private_key_generate`] or [`pqkit_private_key_import`], released
/// (and wiped) by [`pqkit_private_key_free`].
pub struct PqkitPrivateKey {
    key: PrivateKey,
}

/// A public key (opaque). Made by [`pqkit_public_key_import`] or [`pqkit_private_key_public_key`], released
/// by [`pqkit_public_key_free`].
pub struct PqkitPublicKey {
    key: PublicKey,
}

enum PrivateKey {
    Ed25519(ed25519::SigningKey),
    X25519(X25519SecretKey),
    P256(ws::SigningKey<NistP256>),
    Secp256k1(ws::SigningKey<Secp256k1>),
    Rsa(Box<RsaPrivateKey>),
}

enum PublicKey {
    Ed25519(ed25519::VerifyingKey),
    X25519(X25519PublicKey),
    P256(ws::VerifyingKey<NistP256>),
    Secp256k1(ws::VerifyingKey<Secp256k1>),
    Rsa(Box<RsaPublicKey>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Raw,
    Pkcs8(Enc),
    Sec1(Enc),
    Spki(Enc),
    Pkcs1(Enc),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Enc {
    Der,
    Pem,
}

fn format(id: u32) -> FfiResult<Format> {
    Ok(match id {
        1 => Format::Raw,
        2 => Format::Pkcs8(Enc::Der),
        3 => Format::Pkcs8(Enc::Pem),
        4 => Format::Sec1(Enc::Der),
        5 => Format::Sec1(Enc::Pem),
        6 => Format::Spki(Enc::Der),
        7 => Format::Spki(Enc::Pem),
        8 => Format::Pkcs1(Enc::Der),
        9 => Format::Pkcs1(Enc::Pem),
        other => return Err(crate::unknown_alg("key format", other)),
    })
}

fn param(message: String) -> Fail {
    Fail::new(PqkitStatus::InvalidParameter, message)
}

fn type_name(id: u32) -> &'static str {
    match id {
        1 => "Ed25519",
        2 => "X25519",
        3 => "P-256",
        4 => "secp256k1",
        5 => "RSA",
        _ => "unknown",
    }
}

fn unsupported(kind: u32, what: &str) -> Fail {
    param(format!("pqkit: {} keys have no {what}", type_name(kind)))
}

/// PEM input as text: a PEM document is ASCII.
fn pem_text(data: &[u8]) -> FfiResult<&str> {
    core::str::from_utf8(data)
        .map_err(|_| Fail::new(PqkitStatus::InvalidEncoding, "pqkit: a PEM document must be ASCII text"))
}

impl PrivateKey {
    fn kind(&self) -> u32 {
        match self {
            PrivateKey::Ed25519(_) => 1,
            PrivateKey::X25519(_) => 2,
            PrivateKey::P256(_) => 3,
            PrivateKey::Secp256k1(_) => 4,
            PrivateKey::Rsa(_) => 5,
        }
    }

    fn generate(kind: u32) -> FfiResult<Self> {
        let mut rng = pqkit::rng::ChaCha20Rng::from_os_rng()?;
        Ok(match kind {
            1 => PrivateKey::Ed25519(ed25519::SigningKey::generate(&mut rng)),
            2 => PrivateKey::X25519(X25519SecretKey::generate(&mut rng)),
            3 => PrivateKey::P256(ws::SigningKey::generate(&mut rng)),
            4 => PrivateKey::Secp256k1(ws::SigningKey::generate(&mut rng)),
            5 => {
                return Err(param(
                    "pqkit: RSA keys are made by pqkit_private_key_generate_rsa (it takes the size)".into(),
                ));
            }
            other => return Err(crate::unknown_alg("key type", other)),
        })
    }

    fn import(kind: u32, fmt: Format, data: &[u8]) -> FfiResult<Self> {
        use ed25519::SigningKey as Ed;
        Ok(match (kind, fmt) {
            (_, Format::Spki(_)) => return Err(spki_private()),
            (5, f) => PrivateKey::Rsa(Box::new(rsa_import(f, data)?)),
            (1..=4, Format::Pkcs1(_)) => return Err(unsupported(kind, "PKCS#1 encoding (it is RSA's)")),
            (1, Format::Raw) => PrivateKey::Ed25519(Ed::from_bytes(data)?),
            (1, Format::Pkcs8(Enc::Der)) => PrivateKey::Ed25519(Ed::from_pkcs8_der(data)?),
            (1, Format::Pkcs8(Enc::Pem)) => PrivateKey::Ed25519(Ed::from_pkcs8_pem(pem_text(data)?)?),
            (2, Format::Raw) => PrivateKey::X25519(X25519SecretKey::from_bytes(data)?),
            (2, Format::Pkcs8(Enc::Der)) => PrivateKey::X25519(X25519SecretKey::from_pkcs8_der(data)?),
            (2, Format::Pkcs8(Enc::Pem)) => PrivateKey::X25519(X25519SecretKey::from_pkcs8_pem(pem_text(data)?)?),
            (1 | 2, Format::Sec1(_)) => return Err(unsupported(kind, "SEC1 encoding")),
            (3, f) => PrivateKey::P256(ws_import(f, data)?),
            (4, f) => PrivateKey::Secp256k1(ws_import(f, data)?),
            (other, _) => return Err(crate::unknown_alg("key type", other)),
        })
    }

    fn export(&self, fmt: Format) -> FfiResult<Zeroizing<Vec<u8>>> {
        let text = |s: Zeroizing<String>| Zeroizing::new(s.as_bytes().to_vec());
        Ok(match (self, fmt) {
            (_, Format::Spki(_)) => return Err(spki_private()),
            (PrivateKey::Rsa(k), f) => rsa_export(k, f)?,
            (_, Format::Pkcs1(_)) => return Err(unsupported(self.kind(), "PKCS#1 encoding (it is RSA's)")),
            (PrivateKey::Ed25519(k), Format::Raw) => Zeroizing::new(k.to_seed().to_vec()),
            (PrivateKey::Ed25519(k), Format::Pkcs8(Enc::Der)) => k.to_pkcs8_der()?,
            (PrivateKey::Ed25519(k), Format::Pkcs8(Enc::Pem)) => text(k.to_pkcs8_pem()?),
            (PrivateKey::X25519(k), Format::Raw) => Zeroizing::new(k.to_bytes().to_vec()),
            (PrivateKey::X25519(k), Format::Pkcs8(Enc::Der)) => k.to_pkcs8_der()?,
            (PrivateKey::X25519(k), Format::Pkcs8(Enc::Pem)) => text(k.to_pkcs8_pem()?),
            (PrivateKey::Ed25519(_) | PrivateKey::X25519(_), Format::Sec1(_)) => {
                return Err(unsupported(self.kind(), "SEC1 encoding"));
            }
            (PrivateKey::P256(k), f) => ws_export(k, f)?,
            (PrivateKey::Secp256k1(k), f) => ws_export(k, f)?,
        })
    }

    fn public(&self) -> PublicKey {
        match self {
            PrivateKey::Ed25519(k) => PublicKey::Ed25519(k.verifying_key()),
            PrivateKey::X25519(k) => PublicKey::X25519(k.public_key()),
            PrivateKey::P256(k) => PublicKey::P256(k.verifying_key()),
            PrivateKey::Secp256k1(k) => PublicKey::Secp256k1(k.verifying_key()),
            PrivateKey::Rsa(k) => PublicKey::Rsa(Box::new(k.public_key().clone())),
        }
    }

    fn sign(&self, msg: &[u8], sig_format: u32) -> FfiResult<Vec<u8>> {
        if !matches!(sig_format, 1 | 2) {
            return Err(crate::unknown_alg("signature format", sig_format));
        }
        Ok(match (self, sig_format) {
            (PrivateKey::Ed25519(k), 1) => k.sign(msg).as_bytes().to_vec(),
            (PrivateKey::Ed25519(_), _) => {
                return Err(param("pqkit: Ed25519 signatures are raw (64 bytes), not DER".into()));
            }
            (PrivateKey::X25519(_), _) => return Err(unsupported(2, "signatures (X25519 is for key agreement)")),
            (PrivateKey::Rsa(_), _) => return Err(rsa_sign_elsewhere()),
            (PrivateKey::P256(k), f) => ecdsa_bytes(k.sign(msg), f),
            (PrivateKey::Secp256k1(k), f) => ecdsa_bytes(k.sign(msg), f),
        })
    }

    fn agree(&self, peer: &PublicKey) -> FfiResult<pqkit::ct::SharedSecret> {
        Ok(match (self, peer) {
            (PrivateKey::X25519(k), PublicKey::X25519(p)) => k.diffie_hellman(p)?,
            (PrivateKey::P256(k), PublicKey::P256(p)) => k.as_secret_key().diffie_hellman(p.as_public_key())?,
            (PrivateKey::Secp256k1(k), PublicKey::Secp256k1(p)) => {
                k.as_secret_key().diffie_hellman(p.as_public_key())?
            }
            (PrivateKey::Ed25519(_), _) => return Err(unsupported(1, "key agreement (Ed25519 is for signatures)")),
            (PrivateKey::Rsa(_), _) => {
                return Err(unsupported(5, "key agreement (encrypt with pqkit_rsa_oaep_encrypt)"));
            }
            _ => {
                return Err(param(format!(
                    "pqkit: key agreement needs two keys of one type, got {} and {}",
                    type_name(self.kind()),
                    type_name(peer.kind())
                )));
            }
        })
    }
}

impl PqkitPrivateKey {
    /// The RSA key inside, or an error naming the key type it holds.
    pub(crate) fn rsa(&self) -> FfiResult<&RsaPrivateKey> {
        match &self.key {
            PrivateKey::Rsa(k) => Ok(k),
            other => Err(param(format!("pqkit: an RSA key is needed, this one is {}", type_name(other.kind())))),
        }
    }

    pub(crate) fn from_rsa(key: RsaPrivateKey) -> Self {
        PqkitPrivateKey { key: PrivateKey::Rsa(Box::new(key)) }
    }
}

impl PqkitPublicKey {
    /// The RSA key inside, or an error naming the key type it holds.
    pub(crate) fn rsa(&self) -> FfiResult<&RsaPublicKey> {
        match &self.key {
            PublicKey::Rsa(k) => Ok(k),
            other => Err(param(format!("pqkit: an RSA key is needed, this one is {}", type_name(other.kind())))),
        }
    }
}

fn ws_import<C: PrimeCurve>(fmt: Format, data: &[u8]) -> FfiResult<ws::SigningKey<C>> {
    Ok(match fmt {
        Format::Raw => ws::SigningKey::from_bytes(data)?,
        Format::Pkcs8(Enc::Der) => ws::SigningKey::from_pkcs8_der(data)?,
        Format::Pkcs8(Enc::Pem) => ws::SigningKey::from_pkcs8_pem(pem_text(data)?)?,
        Format::Sec1(Enc::Der) => ws::SigningKey::from_sec1_der(data)?,
        Format::Sec1(Enc::Pem) => ws::SigningKey::from_sec1_pem(pem_text(data)?)?,
        Format::Spki(_) => return Err(spki_private()),
        Format::Pkcs1(_) => return Err(param("pqkit: PKCS#1 encodes RSA keys only".into())),
    })
}

fn ws_export<C: PrimeCurve>(k: &ws::SigningKey<C>, fmt: Format) -> FfiResult<Zeroizing<Vec<u8>>> {
    let text = |s: Zeroizing<String>| Zeroizing::new(s.as_bytes().to_vec());
    Ok(match fmt {
        Format::Raw => Zeroizing::new(Zeroizing::new(k.to_bytes()).to_vec()),
        Format::Pkcs8(Enc::Der) => k.to_pkcs8_der()?,
        Format::Pkcs8(Enc::Pem) => text(k.to_pkcs8_pem()?),
        Format::Sec1(Enc::Der) => k.to_sec1_der()?,
        Format::Sec1(Enc::Pem) => text(k.to_sec1_pem()?),
        Format::Spki(_) => return Err(spki_private()),
        Format::Pkcs1(_) => return Err(param("pqkit: PKCS#1 encodes RSA keys only".into())),
    })
}

fn rsa_sign_elsewhere() -> Fail {
    param(
        "pqkit: RSA keys sign and verify with pqkit_rsa_sign / pqkit_rsa_verify (they take the padding and hash)"
            .into(),
    )
}

fn rsa_import(fmt: Format, data: &[u8]) -> FfiResult<RsaPrivateKey> {
    Ok(match fmt {
        Format::Pkcs8(Enc::Der) => RsaPrivateKey::from_pkcs8_der(data)?,
        Format::Pkcs8(Enc::Pem) => RsaPrivateKey::from_pkcs8_pem(pem_text(data)?)?,
        Format::Pkcs1(Enc::Der) => RsaPrivateKey::from_pkcs1_der(data)?,
        Format::Pkcs1(Enc::Pem) => RsaPrivateKey::from_pkcs1_pem(pem_text(data)?)?,
        Format::Spki(_) => return Err(spki_private()),
        Format::Raw | Format::Sec1(_) => return Err(unsupported(5, "raw or SEC1 encoding (use PKCS#8 or PKCS#1)")),
    })
}

fn rsa_export(k: &RsaPrivateKey, fmt: Format) -> FfiResult<Zeroizing<Vec<u8>>> {
    let text = |s: Zeroizing<String>| Zeroizing::new(s.as_bytes().to_vec());
    Ok(match fmt {
        Format::Pkcs8(Enc::Der) => k.to_pkcs8_der()?,
        Format::Pkcs8(Enc::Pem) => text(k.to_pkcs8_pem()?),
        Format::Pkcs1(Enc::Der) => k.to_pkcs1_der()?,
        Format::Pkcs1(Enc::Pem) => text(k.to_pkcs1_pem()?),
        Format::Spki(_) => return Err(spki_private()),
        Format::Raw | Format::Sec1(_) => return Err(unsupported(5, "raw or SEC1 encoding (use PKCS#8 or PKCS#1)")),
    })
}

fn spki_private() -> Fail {
    param("pqkit: SubjectPublicKeyInfo holds a public key, not a private one".into())
}

fn private_format_for_public() -> Fail {
    param("pqkit: PKCS#8 and SEC1 hold private keys; a public key is raw or SubjectPublicKeyInfo".into())
}

fn ecdsa_bytes<C: PrimeCurve>(sig: ws::Signature<C>, sig_format: u32) -> Vec<u8> {
    if sig_format == 2 { sig.to_der().as_bytes().to_vec() } else { sig.to_bytes().to_vec() }
}

fn ecdsa_parse<C: PrimeCurve>(sig: &[u8], sig_format: u32) -> pqkit::Result<ws::Signature<C>> {
    if sig_format == 2 { ws::Signature::from_der(sig) } else { ws::Signature::from_bytes(sig) }
}

impl PublicKey {
    fn kind(&self) -> u32 {
        match self {
            PublicKey::Ed25519(_) => 1,
            PublicKey::X25519(_) => 2,
            PublicKey::P256(_) => 3,
            PublicKey::Secp256k1(_) => 4,
            PublicKey::Rsa(_) => 5,
        }
    }

    fn import(kind: u32, fmt: Format, data: &[u8]) -> FfiResult<Self> {
        use ed25519::VerifyingKey as Ed;
        Ok(match (kind, fmt) {
            (_, Format::Pkcs8(_) | Format::Sec1(_)) => return Err(private_format_for_public()),
            (5, Format::Raw) => return Err(unsupported(5, "raw encoding (use SubjectPublicKeyInfo or PKCS#1)")),
            (5, Format::Pkcs1(Enc::Der)) => PublicKey::Rsa(Box::new(RsaPublicKey::from_pkcs1_der(data)?)),
            (5, Format::Pkcs1(Enc::Pem)) => PublicKey::Rsa(Box::new(RsaPublicKey::from_pkcs1_pem(pem_text(data)?)?)),
            (5, Format::Spki(Enc::Der)) => PublicKey::Rsa(Box::new(RsaPublicKey::from_public_key_der(data)?)),
            (5, Format::Spki(Enc::Pem)) => {
                PublicKey::Rsa(Box::new(RsaPublicKey::from_public_key_pem(pem_text(data)?)?))
            }
            (1..=4, Format::Pkcs1(_)) => return Err(unsupported(kind, "PKCS#1 encoding (it is RSA's)")),
            (1, Format::Raw) => PublicKey::Ed25519(Ed::from_bytes(data)?),
            (1, Format::Spki(Enc::Der)) => PublicKey::Ed25519(Ed::from_public_key_der(data)?),
            (1, Format::Spki(Enc::Pem)) => PublicKey::Ed25519(Ed::from_public_key_pem(pem_text(data)?)?),
            (2, Format::Raw) => PublicKey::X25519(X25519PublicKey::from_bytes(data)?),
            (2, Format::Spki(Enc::Der)) => PublicKey::X25519(X25519PublicKey::from_public_key_der(data)?),
            (2, Format::Spki(Enc::Pem)) => PublicKey::X25519(X25519PublicKey::from_public_key_pem(pem_text(data)?)?),
            (3, f) => PublicKey::P256(ws_public_import(f, data)?),
            (4, f) => PublicKey::Secp256k1(ws_public_import(f, data)?),
            (other, _) => return Err(crate::unknown_alg("key type", other)),
        })
    }

    fn export(&self, fmt: Format) -> FfiResult<Vec<u8>> {
        Ok(match (self, fmt) {
            (_, Format::Pkcs8(_) | Format::Sec1(_)) => return Err(private_format_for_public()),
            (PublicKey::Rsa(_), Format::Raw) => {
                return Err(unsupported(5, "raw encoding (use SubjectPublicKeyInfo or PKCS#1)"));
            }
            (PublicKey::Rsa(k), Format::Pkcs1(Enc::Der)) => k.to_pkcs1_der()?,
            (PublicKey::Rsa(k), Format::Pkcs1(Enc::Pem)) => k.to_pkcs1_pem()?.into_bytes(),
            (PublicKey::Rsa(k), Format::Spki(Enc::Der)) => k.to_public_key_der()?,
            (PublicKey::Rsa(k), Format::Spki(Enc::Pem)) => k.to_public_key_pem()?.into_bytes(),
            (_, Format::Pkcs1(_)) => return Err(unsupported(self.kind(), "PKCS#1 encoding (it is RSA's)")),
            (PublicKey::Ed25519(k), Format::Raw) => k.as_bytes().to_vec(),
            (PublicKey::Ed25519(k), Format::Spki(Enc::Der)) => k.to_public_key_der()?,
            (PublicKey::Ed25519(k), Format::Spki(Enc::Pem)) => k.to_public_key_pem()?.into_bytes(),
            (PublicKey::X25519(k), Format::Raw) => k.as_bytes().to_vec(),
            (PublicKey::X25519(k), Format::Spki(Enc::Der)) => k.to_public_key_der()?,
            (PublicKey::X25519(k), Format::Spki(Enc::Pem)) => k.to_public_key_pem()?.into_bytes(),
            (PublicKey::P256(k), f) => ws_public_export(k, f)?,
            (PublicKey::Secp256k1(k), f) => ws_public_export(k, f)?,
        })
    }

    fn verify(&self, msg: &[u8], sig_format: u32, sig: &[u8]) -> FfiResult<()> {
        if !matches!(sig_format, 1 | 2) {
            return Err(crate::unknown_alg("signature format", sig_format));
        }
        match (self, sig_format) {
            (PublicKey::Ed25519(k), 1) => k.verify(msg, &ed25519::Signature::from_bytes(sig)?)?,
            (PublicKey::Ed25519(_), _) => {
                return Err(param("pqkit: Ed25519 signatures are raw (64 bytes), not DER".into()));
            }
            (PublicKey::X25519(_), _) => return Err(unsupported(2, "signatures (X25519 is for key agreement)")),
            (PublicKey::Rsa(_), _) => return Err(rsa_sign_elsewhere()),
            (PublicKey::P256(k), f) => k.verify(msg, &ecdsa_parse(sig, f)?)?,
            (PublicKey::Secp256k1(k), f) => k.verify(msg, &ecdsa_parse(sig, f)?)?,
        }
        Ok(())
    }
}

fn ws_public_import<C: PrimeCurve>(fmt: Format, data: &[u8]) -> FfiResult<ws::VerifyingKey<C>> {
    Ok(match fmt {
        Format::Raw => ws::VerifyingKey::from_sec1_bytes(data)?,
        Format::Spki(Enc::Der) => ws::VerifyingKey::from_public_key_der(data)?,
        Format::Spki(Enc::Pem) => ws::VerifyingKey::from_public_key_pem(pem_text(data)?)?,
        Format::Pkcs8(_) | Format::Sec1(_) => return Err(private_format_for_public()),
        Format::Pkcs1(_) => return Err(param("pqkit: PKCS#1 encodes RSA keys only".into())),
    })
}

fn ws_public_export<C: PrimeCurve>(k: &ws::VerifyingKey<C>, fmt: Format) -> FfiResult<Vec<u8>> {
    Ok(match fmt {
        Format::Raw => k.as_public_key().to_uncompressed().to_vec(),
        Format::Spki(Enc::Der) => k.to_public_key_der()?,
        Format::Spki(Enc::Pem) => k.to_public_key_pem()?.into_bytes(),
        Format::Pkcs8(_) | Format::Sec1(_) => return Err(private_format_for_public()),
        Format::Pkcs1(_) => return Err(param("pqkit: PKCS#1 encodes RSA keys only".into())),
    })
}

/// The private and the public handle as the import, export and type entry points see them.
trait KeyHandle: Sized {
    /// The output's name in errors.
    const OUTPUT: &'static str;
    fn import(kind: u32, fmt: Format, data: &[u8]) -> FfiResult<Self>;
    fn export(&self, fmt: Format) -> FfiResult<Zeroizing<Vec<u8>>>;
    fn kind(&self) -> u32;
}

impl KeyHandle for PqkitPrivateKey {
    const OUTPUT: &'static str = "private key output";
    fn import(kind: u32, fmt: Format, data: &[u8]) -> FfiResult<Self> {
        Ok(PqkitPrivateKey { key: PrivateKey::import(kind, fmt, data)? })
    }
    fn export(&self, fmt: Format) -> FfiResult<Zeroizing<Vec<u8>>> {
        self.key.export(fmt)
    }
    fn kind(&self) -> u32 {
        self.key.kind()
    }
}

impl KeyHandle for PqkitPublicKey {
    const OUTPUT: &'static str = "public key output";
    fn import(kind: u32, fmt: Format, data: &[u8]) -> FfiResult<Self> {
        Ok(PqkitPublicKey { key: PublicKey::import(kind, fmt, data)? })
    }
    fn export(&self, fmt: Format) -> FfiResult<Zeroizing<Vec<u8>>> {
        Ok(Zeroizing::new(self.key.export(fmt)?))
    }
    fn kind(&self) -> u32 {
        self.key.kind()
    }
}

/// The body of `pqkit_private_key_import` and `pqkit_public_key_import`.
///
/// # Safety
/// `data` readable for `data_len` bytes; `out` NULL or valid for a pointer write.
unsafe fn import_entry<H: KeyHandle>(
    key_type: u32,
    fmt: u32,
    data: *const u8,
    data_len: usize,
    out: *mut *mut H,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees data.
        let data = unsafe { input(data, data_len, "data") }?;
        crate::check_out(out, "handle out-pointer")?;
        let key = H::import(key_type, format(fmt)?, data)?;
        // SAFETY: out is valid for a pointer write (caller's contract).
        unsafe { new_handle(out, key) }
    })
}

/// The body of `pqkit_private_key_export` and `pqkit_public_key_export`.
///
/// # Safety
/// `key` NULL or a live handle; `out` writable for `out_cap` bytes (or NULL with 0); `out_len` NULL or valid
/// for a write.
unsafe fn export_entry<H: KeyHandle>(
    key: *const H,
    fmt: u32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees a live handle.
        let key = unsafe { handle_ref(key) }?;
        let bytes = key.export(format(fmt)?)?;
        // SAFETY: the caller guarantees out and out_len.
        unsafe { emit(&bytes, out, out_cap, out_len, H::OUTPUT) }
    })
}

/// The body of `pqkit_private_key_type` and `pqkit_public_key_type`.
///
/// # Safety
/// `key` NULL or a live handle; `key_type` NULL or valid for a write.
unsafe fn type_entry<H: KeyHandle>(key: *const H, key_type: *mut u32) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees a live handle and a writable key_type.
        unsafe { write_out(key_type, handle_ref(key)?.kind(), "key_type") }
    })
}

/// Generates a private key of type `key_type` ([`PqkitKeyType`]) from the operating system's randomness and
/// writes its handle to `*out`.
///
/// # Safety
/// `out` must be valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_private_key_generate(key_type: u32, out: *mut *mut PqkitPrivateKey) -> PqkitStatus {
    guard(|| {
        crate::check_out(out, "handle out-pointer")?;
        let key = PrivateKey::generate(key_type)?;
        // SAFETY: out is valid for a pointer write (caller's contract).
        unsafe { new_handle(out, PqkitPrivateKey { key }) }
    })
}

/// Reads a private key of type `key_type` encoded as `format` ([`PqkitKeyFormat`]: raw, PKCS#8 or SEC1, DER or
/// PEM) and writes its handle to `*out`. A malformed encoding, another algorithm or curve in the document, or
/// a PEM label that does not match the format is `PQKIT_STATUS_INVALID_ENCODING`; a format the key type does
/// not have (SEC1 for Ed25519, SubjectPublicKeyInfo for any private key) is `PQKIT_STATUS_INVALID_PARAMETER`.
///
/// # Safety
/// `data` readable for `data_len` bytes; `out` valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_private_key_import(
    key_type: u32,
    format: u32,
    data: *const u8,
    data_len: usize,
    out: *mut *mut PqkitPrivateKey,
) -> PqkitStatus {
    // SAFETY: the caller's contract is import_entry's.
    unsafe { import_entry(key_type, format, data, data_len, out) }
}

/// Writes the private key `key` encoded as `format` to `out` (capacity `out_cap`) and its length to
/// `*out_len`; if `out_cap` is too small, `PQKIT_STATUS_BUFFER_TOO_SMALL` with the size needed in `*out_len`.
/// The output is secret: wipe it when done.
///
/// # Safety
/// `key` a live handle; `out` writable for `out_cap` bytes (or NULL with 0); `out_len` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_private_key_export(
    key: *const PqkitPrivateKey,
    format: u32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    // SAFETY: the caller's contract is export_entry's.
    unsafe { export_entry(key, format, out, out_cap, out_len) }
}

/// Writes the type ([`PqkitKeyType`]) of the private key `key` to `*key_type`.
///
/// # Safety
/// `key` a live handle; `key_type` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_private_key_type(key: *const PqkitPrivateKey, key_type: *mut u32) -> PqkitStatus {
    // SAFETY: the caller's contract is type_entry's.
    unsafe { type_entry(key, key_type) }
}

/// Writes a handle to the public key of the private key `key` to `*out`.
///
/// # Safety
/// `key` a live handle; `out` valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_private_key_public_key(
    key: *const PqkitPrivateKey,
    out: *mut *mut PqkitPublicKey,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees a live handle.
        let key = unsafe { handle_ref(key) }?;
        crate::check_out(out, "handle out-pointer")?;
        // SAFETY: out is valid for a pointer write (caller's contract).
        unsafe { new_handle(out, PqkitPublicKey { key: key.key.public() }) }
    })
}

/// Signs `msg` with `key` and writes the signature, encoded as `sig_format` ([`PqkitSignatureFormat`]), to
/// `sig` (capacity `sig_cap`) and its length to `*sig_len`. Ed25519 (RFC 8032) signs raw only; ECDSA signs
/// SHA-256(`msg`) with an RFC 6979 nonce (low-S on secp256k1), raw `r || s` or DER. An X25519 key is
/// `PQKIT_STATUS_INVALID_PARAMETER`.
///
/// # Safety
/// `key` a live handle; `msg` readable for `msg_len`; `sig` writable for `sig_cap`; `sig_len` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_private_key_sign(
    key: *const PqkitPrivateKey,
    msg: *const u8,
    msg_len: usize,
    sig_format: u32,
    sig: *mut u8,
    sig_cap: usize,
    sig_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and msg.
        let (key, msg) = unsafe { (handle_ref(key)?, input(msg, msg_len, "message")?) };
        crate::check_out(sig_len, "sig_len")?;
        let s = key.key.sign(msg, sig_format)?;
        // SAFETY: the caller guarantees sig and sig_len.
        unsafe { emit(&s, sig, sig_cap, sig_len, "signature output") }
    })
}

/// Key agreement: writes the 32-byte secret shared by the private key `key` and the peer's public key `peer`
/// (X25519, or ECDH's x-coordinate on P-256 and secp256k1) to `ss` (exactly 32 bytes; zeroed on any error).
/// Keys of different types, or an Ed25519 key, are `PQKIT_STATUS_INVALID_PARAMETER`; a peer key that makes
/// the secret all zero (X25519 small order) or the identity is `PQKIT_STATUS_INVALID_ENCODING`.
///
/// # Safety
/// `key` and `peer` live handles; `ss` writable for `ss_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_private_key_agree(
    key: *const PqkitPrivateKey,
    peer: *const PqkitPublicKey,
    ss: *mut u8,
    ss_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both handles and ss.
        let (key, peer, ss) = unsafe { (handle_ref(key)?, handle_ref(peer)?, output(ss, ss_len, "ss")?) };
        pqkit::Error::check_length("key agreement", "shared secret output", 32, ss.len())?;
        ss.fill(0);
        let shared = key.key.agree(&peer.key)?;
        ss.copy_from_slice(shared.as_bytes());
        Ok(())
    })
}

/// Releases a private key handle and wipes the key. NULL does nothing.
///
/// # Safety
/// `key` NULL or a live handle, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_private_key_free(key: *mut PqkitPrivateKey) {
    // SAFETY: the caller's contract is free_handle's.
    guard_free(|| unsafe { free_handle(key) })
}

/// Reads a public key of type `key_type` encoded as `format` (raw or SubjectPublicKeyInfo, DER or PEM) and
/// writes its handle to `*out`. Points are validated (on the curve; Ed25519 canonical and not of small order).
///
/// # Safety
/// `data` readable for `data_len` bytes; `out` valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_public_key_import(
    key_type: u32,
    format: u32,
    data: *const u8,
    data_len: usize,
    out: *mut *mut PqkitPublicKey,
) -> PqkitStatus {
    // SAFETY: the caller's contract is import_entry's.
    unsafe { import_entry(key_type, format, data, data_len, out) }
}

/// Writes the public key `key` encoded as `format` to `out` (capacity `out_cap`) and its length to
/// `*out_len` (`PQKIT_STATUS_BUFFER_TOO_SMALL` with the size needed if `out_cap` is too small).
///
/// # Safety
/// `key` a live handle; `out` writable for `out_cap` bytes (or NULL with 0); `out_len` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_public_key_export(
    key: *const PqkitPublicKey,
    format: u32,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    // SAFETY: the caller's contract is export_entry's.
    unsafe { export_entry(key, format, out, out_cap, out_len) }
}

/// Writes the type ([`PqkitKeyType`]) of the public key `key` to `*key_type`.
///
/// # Safety
/// `key` a live handle; `key_type` valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_public_key_type(key: *const PqkitPublicKey, key_type: *mut u32) -> PqkitStatus {
    // SAFETY: the caller's contract is type_entry's.
    unsafe { type_entry(key, key_type) }
}

/// Verifies the signature `sig` (encoded as `sig_format`) of `msg` under `key`: `PQKIT_STATUS_OK` if valid,
/// `PQKIT_STATUS_AUTHENTICATION_FAILED` if not, `PQKIT_STATUS_INVALID_LENGTH` or
/// `PQKIT_STATUS_INVALID_ENCODING` for a signature that cannot be one.
///
/// # Safety
/// `key` a live handle; `msg` and `sig` readable for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_public_key_verify(
    key: *const PqkitPublicKey,
    msg: *const u8,
    msg_len: usize,
    sig_format: u32,
    sig: *const u8,
    sig_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and both buffers.
        let (key, msg, sig) =
            unsafe { (handle_ref(key)?, input(msg, msg_len, "message")?, input(sig, sig_len, "sig")?) };
        key.key.verify(msg, sig_format, sig)
    })
}

/// Releases a public key handle. NULL does nothing.
///
/// # Safety
/// `key` NULL or a live handle, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_public_key_free(key: *mut PqkitPublicKey) {
    // SAFETY: the caller's contract is free_handle's.
    guard_free(|| unsafe { free_handle(key) })
}
