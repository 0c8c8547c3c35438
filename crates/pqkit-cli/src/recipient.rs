//! Public-key file encryption (docs/file-format.md, "Version 2: recipients"): X-Wing identities and recipient
//! strings, and the recipient-stanza section that wraps a file key for each recipient with HPKE.
//!
//! A version-2 file is `"PQKITENC" || 0x02 || recipient section || a complete version-1 file`, where the
//! version-1 part uses key source 1 (raw key) with the raw key `HMAC-SHA-256(file key, "pqkit recipients v2"
//! || every byte before the version-1 header)`. So every stanza is authenticated by segment 0 of the inner
//! file, and the inner file is read by the unchanged `pqkit::aead::stream` code.

use crate::error::{CliError, CliResult};
use pqkit::hash::sha2::Sha256;
use pqkit::hash::sha3::Sha3_256;
use pqkit::hpke::{Aead, Kdf, Kem, PrivateKey, PublicKey, RecipientMode, SenderMode, Suite};
use pqkit::hybrid::xwing;
use pqkit::mac::Hmac;
use std::io::{Read, Write};
use std::path::Path;
use zeroize::Zeroizing;

/// The recipient string's prefix (then unpadded base64url of the 1216-byte X-Wing key and a 4-byte check).
pub const RECIPIENT_PREFIX: &str = "pqkit-xwing1";
/// The identity file's key line prefix (then 64 hex digits of the 32-byte X-Wing seed).
pub const IDENTITY_PREFIX: &str = "PQKIT-XWING-IDENTITY-1:";
/// The file-format version of recipient files.
pub const VERSION: u8 = 2;
/// HPKE `info` of every stanza.
pub const STANZA_INFO: &[u8] = b"pqkit file key v2";
/// HMAC label binding the recipient section to the inner file's raw key.
pub const BIND_LABEL: &[u8] = b"pqkit recipients v2";
/// The stanzas' HPKE suite: X-Wing, HKDF-SHA256, ChaCha20-Poly1305.
pub const SUITE: Suite = Suite::new(Kem::XWing, Kdf::HkdfSha256, Aead::ChaCha20Poly1305);
/// Most recipients per file (bounds what a forged header can make a reader parse).
pub const MAX_RECIPIENTS: usize = 1024;
/// Length of the wrapped file key: 32 bytes and a 16-byte tag.
pub const WRAPPED_LEN: usize = 48;
/// Longest `enc` a reader accepts in a stanza (ML-KEM-1024's 1568 bytes).
const MAX_ENC_LEN: usize = 1568;

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn b64url_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = u32::from_be_bytes([0, b[0], b[1], b[2]]);
        for i in 0..chunk.len() + 1 {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn b64url_decode(s: &str) -> Option<Vec<u8>> {
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            let v = B64.iter().position(|&x| x == c)? as u32;
            n |= v << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
        // Non-canonical trailing bits are refused so that every key has exactly one string.
        let used = (chunk.len() - 1) * 8;
        if n & ((1 << (24 - used)) - 1) != 0 {
            return None;
        }
    }
    Some(out)
}

fn check4(pk: &[u8]) -> [u8; 4] {
    let mut h = Sha3_256::new();
    h.update(RECIPIENT_PREFIX.as_bytes()).update(pk);
    let d = h.finalize();
    [d[0], d[1], d[2], d[3]]
}

/// The recipient string of an X-Wing public key.
pub fn recipient_string(pk: &[u8]) -> String {
    let mut data = pk.to_vec();
    data.extend_from_slice(&check4(pk));
    format!("{RECIPIENT_PREFIX}{}", b64url_encode(&data))
}

/// Parses a recipient string; errors say what is wrong (usage error, exit 2). Only a string that starts
/// like a recipient (public) is quoted in a message: anything else may be a secret pasted by mistake.
pub fn parse_recipient(s: &str) -> CliResult<PublicKey> {
    let s = s.trim();
    if s.starts_with(IDENTITY_PREFIX) || s.starts_with(crate::keyfile::SYMMETRIC_PREFIX) || s.starts_with("seed ") {
        return Err(CliError::usage(
            "this is a secret key (an identity or key file line), not a recipient: give the recipient that \
             `pqkit pubkey IDENTITY` prints, and keep the identity secret",
        ));
    }
    let body = s.strip_prefix(RECIPIENT_PREFIX).ok_or_else(|| {
        CliError::usage(format!("not a pqkit recipient (a recipient starts with {RECIPIENT_PREFIX})"))
    })?;
    let short: String = s.chars().take(24).collect();
    let data = b64url_decode(body)
        .filter(|d| d.len() == xwing::EK_LEN + 4)
        .ok_or_else(|| CliError::usage(format!("recipient {short}...: bad encoding or length (truncated copy?)")))?;
    let (pk, check) = data.split_at(xwing::EK_LEN);
    if check != check4(pk) {
        return Err(CliError::usage(format!("recipient {short}...: checksum mismatch (mistyped or truncated copy?)")));
    }
    PublicKey::from_bytes(Kem::XWing, pk).map_err(|e| CliError::usage(format!("recipient {short}...: {e}")))
}

/// Reads `-R FILE`: one recipient per line; blank lines and lines starting with `#` are ignored.
pub fn read_recipients_file(path: &Path) -> CliResult<Vec<PublicKey>> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CliError::io(&name, e))?;
    let mut out = Vec::new();
    if text.lines().any(|l| l.trim().starts_with(IDENTITY_PREFIX)) || text.starts_with(crate::keyfile::AGENT_HEADER) {
        return Err(CliError::usage(format!(
            "{name}: this is an identity file (a secret key), not a recipients file: give its recipient \
             (pqkit pubkey {name}) instead"
        )));
    }
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        out.push(parse_recipient(line).map_err(|e| match e {
            CliError::Usage(m) => CliError::usage(format!("{name}:{}: {m}", i + 1)),
            other => other,
        })?);
    }
    if out.is_empty() {
        return Err(CliError::usage(format!("{name}: no recipients in the file")));
    }
    Ok(out)
}

/// A new X-Wing identity: the identity file's text and its recipient string (`pqkit keygen --alg xwing`).
pub fn new_identity() -> CliResult<(Zeroizing<Vec<u8>>, String)> {
    let dk = xwing::DecapsulationKey::generate()?;
    let recipient = recipient_string(&dk.encapsulation_key().to_bytes());
    let text = Zeroizing::new(
        format!(
            "# pqkit X-Wing identity (ML-KEM-768 + X25519). Keep this file secret.\n# recipient: {recipient}\n\
             {IDENTITY_PREFIX}{}\n",
            hex::encode(&dk.to_seed()[..])
        )
        .into_bytes(),
    );
    Ok((text, recipient))
}

/// The recipient string of the identity in `path` (`pqkit pubkey IDENTITY`).
pub fn recipient_of_identity(path: &Path) -> CliResult<String> {
    let seed = identity_seed(path)?;
    let dk = xwing::DecapsulationKey::from_seed(&seed);
    Ok(recipient_string(&dk.encapsulation_key().to_bytes()))
}

/// Reads an identity file; errors name the file, never its content.
pub fn read_identity(path: &Path) -> CliResult<PrivateKey> {
    let seed = identity_seed(path)?;
    Ok(PrivateKey::from_bytes(Kem::XWing, &seed[..])?)
}

/// The 32-byte seed of an identity file.
fn identity_seed(path: &Path) -> CliResult<Zeroizing<[u8; 32]>> {
    let name = path.display().to_string();
    let text = Zeroizing::new(std::fs::read(path).map_err(|e| CliError::io(&name, e))?);
    crate::io::warn_if_exposed(path);
    let bad = || {
        CliError::usage(format!(
            "{name}: not a pqkit identity file (expected a line {IDENTITY_PREFIX} and 64 hex digits; make one with \
             pqkit keygen --alg xwing)"
        ))
    };
    let s = std::str::from_utf8(&text).map_err(|_| bad())?;
    let line = s.lines().map(str::trim).find(|l| l.starts_with(IDENTITY_PREFIX)).ok_or_else(bad)?;
    let hexpart = &line[IDENTITY_PREFIX.len()..];
    if hexpart.len() != 64 {
        return Err(bad());
    }
    let mut seed = Zeroizing::new([0u8; 32]);
    hex::decode_to_slice(hexpart, &mut seed[..]).map_err(|_| bad())?;
    Ok(seed)
}

/// The version-2 prefix (magic, version, recipient section) for `recipients`, and the raw key of the inner
/// version-1 file.
pub fn wrap(recipients: &[PublicKey]) -> CliResult<(Vec<u8>, Zeroizing<[u8; 32]>)> {
    if recipients.is_empty() || recipients.len() > MAX_RECIPIENTS {
        return Err(CliError::usage(format!("between 1 and {MAX_RECIPIENTS} recipients, got {}", recipients.len())));
    }
    let mut file_key = Zeroizing::new([0u8; 32]);
    pqkit::rng::fill_os(&mut file_key[..])?;
    let mut out = Vec::new();
    out.extend_from_slice(&pqkit::aead::stream::MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&(recipients.len() as u16).to_be_bytes());
    for pk in recipients {
        let (enc, ct) = SUITE.seal(pk, STANZA_INFO, b"", &file_key[..], SenderMode::Base)?;
        for id in [SUITE.kem.id(), SUITE.kdf.id(), SUITE.aead.id()] {
            out.extend_from_slice(&id.to_be_bytes());
        }
        out.extend_from_slice(&(enc.len() as u16).to_be_bytes());
        out.extend_from_slice(&enc);
        out.extend_from_slice(&(ct.len() as u16).to_be_bytes());
        out.extend_from_slice(&ct);
    }
    let raw = bind(&file_key, &out);
    Ok((out, raw))
}

fn bind(file_key: &[u8; 32], section: &[u8]) -> Zeroizing<[u8; 32]> {
    let mut m = Hmac::<Sha256>::new(file_key);
    m.update(BIND_LABEL).update(section);
    Zeroizing::new(m.finalize())
}

/// One parsed stanza.
struct Stanza {
    kem: u16,
    kdf: u16,
    aead: u16,
    enc: Vec<u8>,
    wrapped: Vec<u8>,
}

fn read_exact_or(r: &mut dyn Read, buf: &mut [u8], name: &str) -> CliResult {
    let n = crate::format::read_full(r, buf).map_err(|e| CliError::io(name, e))?;
    if n < buf.len() {
        return Err(CliError::auth(format!("{name}: ciphertext truncated inside the recipient section")));
    }
    Ok(())
}

fn read_u16(r: &mut dyn Read, name: &str, section: &mut Vec<u8>) -> CliResult<u16> {
    let mut b = [0u8; 2];
    read_exact_or(r, &mut b, name)?;
    section.extend_from_slice(&b);
    Ok(u16::from_be_bytes(b))
}

/// Reads the recipient section that follows `"PQKITENC" || 0x02` (already consumed; `section` holds them) and
/// unwraps the file key with `identities`; returns the inner file's raw key. Every failure is exit 1 and
/// happens before any output exists.
pub fn unwrap(
    r: &mut dyn Read,
    name: &str,
    mut section: Vec<u8>,
    identities: &[PrivateKey],
) -> CliResult<Zeroizing<[u8; 32]>> {
    let count = read_u16(r, name, &mut section)? as usize;
    if count == 0 || count > MAX_RECIPIENTS {
        return Err(CliError::auth(format!(
            "{name}: corrupted recipient section ({count} recipients; 1 to {MAX_RECIPIENTS} allowed)"
        )));
    }
    let mut stanzas = Vec::with_capacity(count);
    for _ in 0..count {
        let kem = read_u16(r, name, &mut section)?;
        let kdf = read_u16(r, name, &mut section)?;
        let aead = read_u16(r, name, &mut section)?;
        let enc_len = read_u16(r, name, &mut section)? as usize;
        if enc_len > MAX_ENC_LEN {
            return Err(CliError::auth(format!("{name}: corrupted recipient stanza (enc of {enc_len} bytes)")));
        }
        let mut enc = vec![0u8; enc_len];
        read_exact_or(r, &mut enc, name)?;
        section.extend_from_slice(&enc);
        let wlen = read_u16(r, name, &mut section)? as usize;
        if wlen != WRAPPED_LEN {
            return Err(CliError::auth(format!("{name}: corrupted recipient stanza (wrapped key of {wlen} bytes)")));
        }
        let mut wrapped = vec![0u8; wlen];
        read_exact_or(r, &mut wrapped, name)?;
        section.extend_from_slice(&wrapped);
        stanzas.push(Stanza { kem, kdf, aead, enc, wrapped });
    }
    let mut unknown = None;
    for st in &stanzas {
        let suite = match Suite::from_ids(st.kem, st.kdf, st.aead) {
            Ok(s) if s == SUITE => s,
            _ => {
                unknown.get_or_insert((st.kem, st.kdf, st.aead));
                continue;
            }
        };
        for id in identities.iter().filter(|i| i.kem() == suite.kem) {
            if st.enc.len() != suite.kem.enc_len() {
                continue;
            }
            if let Ok(k) = suite.open(&st.enc, id, STANZA_INFO, b"", &st.wrapped, RecipientMode::Base) {
                let k = Zeroizing::new(k);
                let mut fk = Zeroizing::new([0u8; 32]);
                if k.len() != 32 {
                    return Err(CliError::auth(format!("{name}: corrupted recipient stanza (file key length)")));
                }
                fk.copy_from_slice(&k);
                return Ok(bind(&fk, &section));
            }
        }
    }
    match unknown {
        Some((k, d, a)) if stanzas.iter().all(|s| Suite::from_ids(s.kem, s.kdf, s.aead).ok() != Some(SUITE)) => {
            Err(CliError::auth(format!(
                "{name}: unknown KEM/KDF/AEAD in the recipient stanzas (kem 0x{k:04x}, kdf 0x{d:04x}, aead 0x{a:04x}): \
                 this pqkit unwraps X-Wing stanzas only; nothing was written"
            )))
        }
        _ => Err(CliError::auth(format!(
            "{name}: no recipient stanza opens with this identity (wrong identity, or a tampered stanza); nothing \
             was written"
        ))),
    }
}

/// Writes the version-2 prefix.
pub fn write_prefix(w: &mut dyn Write, prefix: &[u8], name: &str) -> CliResult {
    w.write_all(prefix).map_err(|e| CliError::io(name, e))
}
