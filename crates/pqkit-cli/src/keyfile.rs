//! Key files: read as lax PEM (RFC 7468 §2) or DER or pqkit's own text forms, and told apart by what they
//! say (the PEM label, the PKCS#8 / SubjectPublicKeyInfo algorithm and curve, or the length of a raw FIPS 203 /
//! FIPS 204 key), so that `--alg` is needed only where a file cannot say it. The keys themselves are parsed by
//! the library, from the DER this module hands it.
//!
//! PEM is read as leniently as RFC 7468 §2 allows: any line width (64 or 76 columns, or one long line),
//! text before and after the block, and other blocks skipped (the `EC PARAMETERS` block that
//! `openssl ecparam -genkey` writes before its key). Base64 is decoded in constant time (`base64ct`).
//! Errors name the file and what was found, never a byte of a secret.

use crate::error::{CliError, CliResult};
use crate::io::read_file;
use der::Decode;
use der::asn1::ObjectIdentifier as Oid;
use std::fmt;
use std::path::Path;
use zeroize::Zeroizing;

const OID_RSA: Oid = Oid::new_unwrap("1.2.840.113549.1.1.1");
const OID_EC: Oid = Oid::new_unwrap("1.2.840.10045.2.1");
const OID_P256: Oid = Oid::new_unwrap("1.2.840.10045.3.1.7");
const OID_K256: Oid = Oid::new_unwrap("1.3.132.0.10");
const OID_X25519: Oid = Oid::new_unwrap("1.3.101.110");
const OID_ED25519: Oid = Oid::new_unwrap("1.3.101.112");

/// The symmetric key file's prefix (`pqkit keygen`).
pub const SYMMETRIC_PREFIX: &str = "PQKIT-KEY-V1:";
/// The agent identity file's first line (`pqkit keygen --alg agent`).
pub const AGENT_HEADER: &str = pqkit_bus::identity::KEY_FILE_HEADER;

/// What a key file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    X25519,
    Ed25519,
    P256,
    Secp256k1,
    Rsa,
    MlKem512,
    MlKem768,
    MlKem1024,
    MlDsa44,
    MlDsa65,
    MlDsa87,
    XWing,
    Agent,
    Symmetric,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::X25519 => "X25519",
            Kind::Ed25519 => "Ed25519",
            Kind::P256 => "P-256",
            Kind::Secp256k1 => "secp256k1",
            Kind::Rsa => "RSA",
            Kind::MlKem512 => "ML-KEM-512",
            Kind::MlKem768 => "ML-KEM-768",
            Kind::MlKem1024 => "ML-KEM-1024",
            Kind::MlDsa44 => "ML-DSA-44",
            Kind::MlDsa65 => "ML-DSA-65",
            Kind::MlDsa87 => "ML-DSA-87",
            Kind::XWing => "X-Wing",
            Kind::Agent => "pqkit-bus agent",
            Kind::Symmetric => "pqkit symmetric",
        })
    }
}

/// How the key is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// PKCS#8 `PrivateKeyInfo` (DER in [`KeyFile::data`]).
    Pkcs8,
    /// SubjectPublicKeyInfo (DER).
    Spki,
    /// SEC1 `ECPrivateKey` (DER).
    Sec1,
    /// PKCS#1 `RSAPrivateKey` (DER).
    Pkcs1Private,
    /// PKCS#1 `RSAPublicKey` (DER).
    Pkcs1Public,
    /// The raw FIPS 203 / FIPS 204 encoding.
    Raw,
    /// pqkit's own text forms: a symmetric key file, an X-Wing identity or recipient, an agent identity
    /// (the whole file in [`KeyFile::data`]).
    Text,
}

/// A key file, read and classified.
pub struct KeyFile {
    pub kind: Kind,
    /// True for a private key (or identity), false for a public key (or recipient).
    pub private: bool,
    pub form: Form,
    /// The DER, raw or text bytes the form names.
    pub data: Zeroizing<Vec<u8>>,
}

/// One PEM block: its label and decoded body.
pub struct PemBlock {
    pub label: String,
    pub der: Zeroizing<Vec<u8>>,
}

/// The label and length only: the body may be a private key.
impl fmt::Debug for PemBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PemBlock({:?}, {} bytes)", self.label, self.der.len())
    }
}

/// Every PEM block of `text`, in order (text around and between blocks ignored). `None` when `text` holds no
/// `-----BEGIN` line; an error when a block is malformed (the message says which part).
pub fn pem_blocks(text: &str) -> Option<Result<Vec<PemBlock>, String>> {
    if !text.contains("-----BEGIN ") {
        return None;
    }
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim();
        let Some(label) = line.strip_prefix("-----BEGIN ").and_then(|l| l.strip_suffix("-----")) else {
            continue;
        };
        let end = format!("-----END {label}-----");
        let mut body = Zeroizing::new(String::new());
        let mut closed = false;
        for l in lines.by_ref() {
            let l = l.trim();
            if l == end {
                closed = true;
                break;
            }
            if l.starts_with("-----") {
                return Some(Err(format!("PEM: the \"{label}\" block ends with {l:?}, not {end:?}")));
            }
            if l.contains(':') {
                // RFC 1421 headers (Proc-Type, DEK-Info): an encrypted key.
                return Some(Err(format!(
                    "PEM: the \"{label}\" block has headers (an encrypted key?): decrypt it first, e.g. with \
                     openssl pkey"
                )));
            }
            body.extend(l.chars().filter(|c| !c.is_whitespace()));
        }
        if !closed {
            return Some(Err(format!("PEM: the \"{label}\" block has no {end:?} line (truncated?)")));
        }
        use base64ct::{Base64, Encoding};
        let der = match Base64::decode_vec(&body) {
            Ok(d) => Zeroizing::new(d),
            Err(_) => return Some(Err(format!("PEM: the body of the \"{label}\" block is not valid base64"))),
        };
        blocks.push(PemBlock { label: label.to_string(), der });
    }
    Some(Ok(blocks))
}

fn curve(oid: Oid) -> Option<Kind> {
    match oid {
        OID_P256 => Some(Kind::P256),
        OID_K256 => Some(Kind::Secp256k1),
        _ => None,
    }
}

fn kind_of_algorithm(alg: &spki::AlgorithmIdentifierRef<'_>) -> Result<Kind, String> {
    match alg.oid {
        OID_RSA => Ok(Kind::Rsa),
        OID_X25519 => Ok(Kind::X25519),
        OID_ED25519 => Ok(Kind::Ed25519),
        OID_EC => {
            let named = alg.parameters.as_ref().and_then(|p| p.decode_as::<Oid>().ok());
            match named {
                Some(c) => curve(c).ok_or_else(|| format!("an EC key on a curve pqkit does not support ({c})")),
                None => Err("an EC key without a named curve (explicit parameters are not supported)".into()),
            }
        }
        other => Err(format!("a key of an algorithm pqkit does not read here (OID {other})")),
    }
}

/// Classifies DER: PKCS#8, then SubjectPublicKeyInfo, SEC1, PKCS#1. `hint` is the PEM label, if any.
fn classify_der(der: &[u8], label: Option<&str>, curve_hint: Option<Kind>) -> Result<(Kind, bool, Form), String> {
    let try_pkcs8 = || pkcs8::PrivateKeyInfoRef::from_der(der).map_err(|_| ()).map(|k| kind_of_algorithm(&k.algorithm));
    let try_spki =
        || spki::SubjectPublicKeyInfoRef::from_der(der).map_err(|_| ()).map(|k| kind_of_algorithm(&k.algorithm));
    let try_sec1 = || {
        sec1::EcPrivateKey::from_der(der).map_err(|_| ()).map(|k| match k.parameters.and_then(|p| p.named_curve()) {
            Some(c) => curve(c).ok_or_else(|| format!("an EC key on a curve pqkit does not support ({c})")),
            None => curve_hint.ok_or_else(|| "an EC private key that names no curve".to_string()),
        })
    };
    let is_pkcs1_private = || pkcs1_shape(der, 9);
    let is_pkcs1_public = || pkcs1_shape(der, 2);
    match label {
        Some("PRIVATE KEY") => match try_pkcs8() {
            Ok(k) => k.map(|k| (k, true, Form::Pkcs8)),
            Err(()) => Err("PKCS#8: not a valid PrivateKeyInfo structure".into()),
        },
        Some("PUBLIC KEY") => match try_spki() {
            Ok(k) => k.map(|k| (k, false, Form::Spki)),
            Err(()) => Err("not a valid SubjectPublicKeyInfo structure".into()),
        },
        Some("EC PRIVATE KEY") => match try_sec1() {
            Ok(k) => k.map(|k| (k, true, Form::Sec1)),
            Err(()) => Err("SEC1: not a valid ECPrivateKey structure".into()),
        },
        Some("RSA PRIVATE KEY") => Ok((Kind::Rsa, true, Form::Pkcs1Private)),
        Some("RSA PUBLIC KEY") => Ok((Kind::Rsa, false, Form::Pkcs1Public)),
        Some("ENCRYPTED PRIVATE KEY") => {
            Err("an encrypted PKCS#8 key: decrypt it first (openssl pkey -in FILE -out PLAIN)".into())
        }
        Some(other) => Err(format!("a PEM \"{other}\" block, not a key pqkit reads")),
        None => {
            if let Ok(k) = try_pkcs8() {
                return k.map(|k| (k, true, Form::Pkcs8));
            }
            if let Ok(k) = try_spki() {
                return k.map(|k| (k, false, Form::Spki));
            }
            if let Ok(k) = try_sec1() {
                return k.map(|k| (k, true, Form::Sec1));
            }
            if is_pkcs1_private() {
                return Ok((Kind::Rsa, true, Form::Pkcs1Private));
            }
            if is_pkcs1_public() {
                return Ok((Kind::Rsa, false, Form::Pkcs1Public));
            }
            Err("not a key file pqkit recognises".into())
        }
    }
}

/// A DER SEQUENCE of exactly `n` INTEGERs (PKCS#1 keys: 9 for a two-prime private key, 2 for a public key).
fn pkcs1_shape(der: &[u8], n: usize) -> bool {
    let Ok(seq) = der::asn1::AnyRef::from_der(der) else { return false };
    if der::Tagged::tag(&seq) != der::Tag::Sequence {
        return false;
    }
    let mut reader = match der::SliceReader::new(seq.value()) {
        Ok(r) => r,
        Err(_) => return false,
    };
    use der::Reader;
    let mut count = 0;
    while !reader.is_finished() {
        match der::asn1::UintRef::decode(&mut reader) {
            Ok(_) => count += 1,
            Err(_) => return false,
        }
    }
    count == n
}

/// The raw FIPS 203 / FIPS 204 encodings, by length: (kind, private).
fn classify_raw(len: usize) -> Option<(Kind, bool)> {
    Some(match len {
        1632 => (Kind::MlKem512, true),
        800 => (Kind::MlKem512, false),
        2400 => (Kind::MlKem768, true),
        1184 => (Kind::MlKem768, false),
        3168 => (Kind::MlKem1024, true),
        1568 => (Kind::MlKem1024, false),
        2560 => (Kind::MlDsa44, true),
        1312 => (Kind::MlDsa44, false),
        4032 => (Kind::MlDsa65, true),
        1952 => (Kind::MlDsa65, false),
        4896 => (Kind::MlDsa87, true),
        2592 => (Kind::MlDsa87, false),
        _ => return None,
    })
}

/// Reads and classifies a key file. A private key readable by others gets a warning, as ssh gives.
pub fn read(path: &Path) -> CliResult<KeyFile> {
    let data = read_file(path)?;
    let k = classify(&data).map_err(|m| CliError::usage(format!("{}: {m}", path.display())))?;
    if k.private {
        crate::io::warn_if_exposed(path);
    }
    Ok(k)
}

/// Classifies the bytes of a key file.
pub fn classify(data: &Zeroizing<Vec<u8>>) -> Result<KeyFile, String> {
    let text = std::str::from_utf8(data).ok();
    if let Some(t) = text {
        let trimmed = t.trim_start();
        let whole = || Zeroizing::new(data.to_vec());
        if trimmed.starts_with(SYMMETRIC_PREFIX) {
            return Ok(KeyFile { kind: Kind::Symmetric, private: true, form: Form::Text, data: whole() });
        }
        if trimmed.starts_with(AGENT_HEADER) {
            return Ok(KeyFile { kind: Kind::Agent, private: true, form: Form::Text, data: whole() });
        }
        if t.lines().any(|l| l.trim().starts_with(pqkit::aead::recipients::IDENTITY_PREFIX)) {
            return Ok(KeyFile { kind: Kind::XWing, private: true, form: Form::Text, data: whole() });
        }
        if trimmed.starts_with(pqkit::aead::recipients::RECIPIENT_PREFIX) {
            return Ok(KeyFile { kind: Kind::XWing, private: false, form: Form::Text, data: whole() });
        }
        if let Some(blocks) = pem_blocks(t) {
            let blocks = blocks?;
            let mut curve_hint = None;
            for b in &blocks {
                if b.label == "EC PARAMETERS" {
                    curve_hint = Oid::from_der(&b.der).ok().and_then(curve);
                    continue;
                }
                let (kind, private, form) = classify_der(&b.der, Some(&b.label), curve_hint)?;
                return Ok(KeyFile { kind, private, form, data: Zeroizing::new(b.der.to_vec()) });
            }
            return Err("PEM: no key block in the file (only EC PARAMETERS?)".into());
        }
    }
    if data.first() == Some(&0x30)
        && let Ok((kind, private, form)) = classify_der(data, None, None)
    {
        return Ok(KeyFile { kind, private, form, data: Zeroizing::new(data.to_vec()) });
    }
    if let Some((kind, private)) = classify_raw(data.len()) {
        return Ok(KeyFile { kind, private, form: Form::Raw, data: Zeroizing::new(data.to_vec()) });
    }
    Err(format!("not a key file pqkit recognises ({} bytes: not PEM, DER, or a raw ML-KEM or ML-DSA key)", data.len()))
}

impl KeyFile {
    /// Checks that this is a private (or public) key of `want` (any of them), with a message that says what
    /// the file holds instead.
    pub fn expect(&self, path: &Path, want: &[Kind], private: bool, alg_flag: Option<&str>) -> CliResult {
        let half = |p: bool| if p { "private" } else { "public" };
        if !want.contains(&self.kind) {
            let wanted = want.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(" or ");
            // "an Ed25519", "an RSA", "an ML-DSA", "an X25519"; "a P-256", "a secp256k1".
            let an = if wanted.starts_with(['E', 'R', 'M', 'X']) { "an" } else { "a" };
            let because = match alg_flag {
                Some(a) => format!("--alg {a} needs {an} {wanted} key"),
                None => format!("this needs {an} {wanted} key"),
            };
            return Err(CliError::usage(format!("{}: the key is {}; {because}", path.display(), self.kind)));
        }
        if self.private != private {
            return Err(CliError::usage(format!(
                "{}: this is a {} {} key; a {} key is needed here{}",
                path.display(),
                half(self.private),
                self.kind,
                half(private),
                if self.private { " (make it with pqkit pubkey)" } else { "" }
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_any_width_and_text_around() {
        let body: Vec<u8> = (0..200u8).collect();
        use base64ct::{Base64, Encoding};
        let b64 = Base64::encode_string(&body);
        for width in [64, 76, 1000] {
            let lines: Vec<&str> = b64.as_bytes().chunks(width).map(|c| std::str::from_utf8(c).unwrap()).collect();
            let text = format!(
                "some text\n-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\ntrailer\n",
                lines.join("\r\n")
            );
            let blocks = pem_blocks(&text).unwrap().unwrap();
            assert_eq!(blocks.len(), 1);
            assert_eq!(blocks[0].label, "PUBLIC KEY");
            assert_eq!(&blocks[0].der[..], &body[..]);
        }
    }

    #[test]
    fn pem_errors_say_what() {
        let e = pem_blocks("-----BEGIN X-----\nAAAA\n").unwrap().unwrap_err();
        assert!(e.contains("no \"-----END X-----\""), "{e}");
        let e = pem_blocks("-----BEGIN X-----\nA!AA\n-----END X-----\n").unwrap().unwrap_err();
        assert!(e.contains("not valid base64"), "{e}");
        let e = pem_blocks("-----BEGIN X-----\nProc-Type: 4,ENCRYPTED\nAAAA\n-----END X-----\n").unwrap().unwrap_err();
        assert!(e.contains("encrypted"), "{e}");
        assert!(pem_blocks("no pem here").is_none());
    }

    #[test]
    fn raw_lengths_are_distinct() {
        let all = [1632, 800, 2400, 1184, 3168, 1568, 2560, 1312, 4032, 1952, 4896, 2592];
        let mut seen = std::collections::HashSet::new();
        for l in all {
            assert!(seen.insert(classify_raw(l).unwrap()), "{l}");
        }
        assert!(classify_raw(32).is_none());
    }
}
