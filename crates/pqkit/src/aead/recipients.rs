//! Encryption to public keys: the pqkit file format version 2 (`docs/file-format.md`, "Version 2").
//!
//! A version-2 file is `"PQKITENC" || 0x02 || recipient section || a complete version-1 file`. The section
//! wraps one fresh 32-byte file key for each recipient with HPKE (RFC 9180, base mode) in the suite X-Wing /
//! HKDF-SHA256 / ChaCha20-Poly1305. The inner version-1 file (see [`super::stream`]) uses the raw key
//! `HMAC-SHA-256(file key, "pqkit recipients v2" || every byte before the version-1 header)`, so segment 0 of
//! the inner file authenticates every stanza, the count and the version.
//!
//! - [`Identity`]: an X-Wing private key, with its text form (`PQKIT-XWING-IDENTITY-1:` and the 32-byte seed
//!   in hex) and its [`Recipient`];
//! - [`Recipient`]: an X-Wing public key, written as `pqkit-xwing1` followed by the unpadded base64url of the
//!   key and a 4-byte check (`SHA3-256("pqkit-xwing1" || key)[0..4]`);
//! - [`wrap`] / [`unwrap`]: the recipient section alone;
//! - with `std`, [`encrypt`] and [`decrypt`]: a whole file over any writer or reader.
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use pqkit::aead::recipients::{self, Identity};
//! use pqkit::aead::stream::Algorithm;
//! use std::io::{Read, Write};
//!
//! let alice = Identity::generate()?;
//! let to = alice.recipient().to_string(); // "pqkit-xwing1...": give this to senders
//!
//! let recipient = to.parse()?;
//! let mut enc = recipients::encrypt(&[recipient], Algorithm::XChaCha20Poly1305, Vec::new())?;
//! enc.write_all(b"for alice")?;
//! let file = enc.finish()?;
//!
//! let mut dec = recipients::decrypt(&[alice], &file[..])?;
//! let mut plaintext = Vec::new();
//! dec.read_to_end(&mut plaintext)?;
//! assert_eq!(plaintext, b"for alice");
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Errors are [`Error`] values: [`Error::InvalidEncoding`] for a malformed recipient string, identity or
//! section, [`Error::AuthenticationFailed`] when no stanza opens with the identities given. Through `std::io`
//! they arrive wrapped in an [`std::io::Error`], as for [`super::stream`]. No message holds a secret byte.

use crate::hash::sha2::Sha256;
use crate::hash::sha3::Sha3_256;
#[cfg(feature = "std")]
use crate::hpke::SenderMode;
use crate::hpke::{Aead, Kdf, Kem, PrivateKey, PublicKey, RecipientMode, Suite};
use crate::hybrid::xwing;
use crate::mac::Hmac;
use crate::{Error, Result};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use zeroize::Zeroizing;

/// The name in errors.
pub const NAME: &str = "pqkit recipients";
/// The recipient string's prefix.
pub const RECIPIENT_PREFIX: &str = "pqkit-xwing1";
/// The identity text's key line prefix (then 64 hex digits of the 32-byte X-Wing seed).
pub const IDENTITY_PREFIX: &str = "PQKIT-XWING-IDENTITY-1:";
/// The file-format version of recipient files.
pub const VERSION: u8 = 2;
/// HPKE `info` of every stanza.
pub const STANZA_INFO: &[u8] = b"pqkit file key v2";
/// HMAC label binding the recipient section to the inner file's raw key.
pub const BIND_LABEL: &[u8] = b"pqkit recipients v2";
/// The stanzas' HPKE suite: X-Wing, HKDF-SHA256, ChaCha20-Poly1305.
pub const SUITE: Suite = Suite::new(Kem::XWing, Kdf::HkdfSha256, Aead::ChaCha20Poly1305);
/// Most recipients per file (bounds what a forged section can make a reader parse).
pub const MAX_RECIPIENTS: usize = 1024;
/// Length of the wrapped file key: 32 bytes and a 16-byte tag.
pub const WRAPPED_LEN: usize = 48;
/// Longest `enc` a reader accepts in a stanza (ML-KEM-1024's 1568 bytes).
pub const MAX_ENC_LEN: usize = 1568;

/// The errors of this module.
pub mod errors {
    use super::NAME;
    use crate::Error;

    /// A recipient string without the `pqkit-xwing1` prefix.
    pub const NOT_A_RECIPIENT: Error = Error::InvalidEncoding {
        algorithm: NAME,
        reason: "not a pqkit recipient (a recipient starts with pqkit-xwing1)",
    };
    /// A recipient string whose base64url or length is wrong.
    pub const RECIPIENT_ENCODING: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "recipient: bad encoding or length (truncated copy?)" };
    /// A recipient string whose check bytes do not match.
    pub const RECIPIENT_CHECKSUM: Error = Error::InvalidEncoding {
        algorithm: NAME,
        reason: "recipient: checksum mismatch (mistyped or truncated copy?)",
    };
    /// Identity text without a valid key line.
    pub const NOT_AN_IDENTITY: Error = Error::InvalidEncoding {
        algorithm: NAME,
        reason: "not a pqkit identity (expected a line PQKIT-XWING-IDENTITY-1: and 64 hex digits)",
    };
    /// Zero or more than [`MAX_RECIPIENTS`](super::MAX_RECIPIENTS) recipients.
    pub const RECIPIENT_COUNT: Error =
        Error::InvalidParameter { algorithm: NAME, reason: "between 1 and 1024 recipients are needed" };
    /// The section's count is 0 or above the limit.
    pub const BAD_COUNT: Error = Error::InvalidEncoding {
        algorithm: NAME,
        reason: "corrupted recipient section (recipient count 0 or above 1024)",
    };
    /// A stanza's `enc` or wrapped-key length is out of bounds.
    pub const BAD_STANZA: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "corrupted recipient stanza (length out of bounds)" };
    /// The input ends inside the section.
    pub const TRUNCATED: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "ciphertext truncated inside the recipient section" };
    /// No stanza has a suite this pqkit implements.
    pub const UNKNOWN_SUITE: Error = Error::InvalidEncoding {
        algorithm: NAME,
        reason: "unknown KEM/KDF/AEAD in the recipient stanzas: this pqkit unwraps X-Wing stanzas only",
    };
    /// No stanza opens with the identities given.
    pub const NO_MATCH: Error = Error::AuthenticationFailed { algorithm: NAME };
    /// Not a version-2 file.
    pub const NOT_VERSION_2: Error =
        Error::InvalidEncoding { algorithm: NAME, reason: "not a file encrypted to recipients (no version-2 header)" };
}

fn check4(pk: &[u8]) -> [u8; 4] {
    let mut h = Sha3_256::new();
    h.update(RECIPIENT_PREFIX.as_bytes()).update(pk);
    let d = h.finalize();
    [d[0], d[1], d[2], d[3]]
}

/// An X-Wing public key that files can be encrypted to.
#[derive(Clone, PartialEq, Eq)]
pub struct Recipient(PublicKey);

impl Recipient {
    /// From the 1216-byte X-Wing public key.
    pub fn from_bytes(pk: &[u8]) -> Result<Self> {
        Ok(Recipient(PublicKey::from_bytes(Kem::XWing, pk)?))
    }
    /// The X-Wing public key.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
    /// The HPKE public key.
    pub fn public_key(&self) -> &PublicKey {
        &self.0
    }
}

/// The recipient string, `pqkit-xwing1...`.
impl fmt::Display for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use base64ct::Encoding;
        let mut data = Vec::from(self.as_bytes());
        data.extend_from_slice(&check4(self.as_bytes()));
        write!(f, "{RECIPIENT_PREFIX}{}", base64ct::Base64UrlUnpadded::encode_string(&data))
    }
}

impl fmt::Debug for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = alloc::format!("{self}");
        write!(f, "Recipient({}...)", &s[..24.min(s.len())])
    }
}

/// Parses a recipient string (surrounding whitespace ignored). Non-canonical base64url is refused, so each key
/// has exactly one string.
impl core::str::FromStr for Recipient {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        use base64ct::Encoding;
        let body = s.trim().strip_prefix(RECIPIENT_PREFIX).ok_or(errors::NOT_A_RECIPIENT)?;
        let data = base64ct::Base64UrlUnpadded::decode_vec(body).map_err(|_| errors::RECIPIENT_ENCODING)?;
        if data.len() != xwing::EK_LEN + 4 {
            return Err(errors::RECIPIENT_ENCODING);
        }
        let (pk, check) = data.split_at(xwing::EK_LEN);
        // The check is public: an ordinary comparison is fine.
        if check != check4(pk) {
            return Err(errors::RECIPIENT_CHECKSUM);
        }
        Recipient::from_bytes(pk)
    }
}

/// An X-Wing private key (an identity): what decrypts files sent to its [`Recipient`]. Zeroized on drop;
/// `Debug` shows no secret.
pub struct Identity {
    seed: Zeroizing<[u8; 32]>,
    key: PrivateKey,
}

impl Identity {
    /// A fresh identity from the operating system's random number generator.
    #[cfg(feature = "std")]
    pub fn generate() -> Result<Self> {
        let mut seed = Zeroizing::new([0u8; 32]);
        crate::rng::fill_os(&mut seed[..])?;
        Self::from_seed(&seed)
    }

    /// The identity of a 32-byte X-Wing seed.
    pub fn from_seed(seed: &[u8; 32]) -> Result<Self> {
        Ok(Identity { seed: Zeroizing::new(*seed), key: PrivateKey::from_bytes(Kem::XWing, seed)? })
    }

    /// Reads identity text: the first line that starts with `PQKIT-XWING-IDENTITY-1:`; other lines (comments)
    /// are ignored.
    pub fn from_text(text: &str) -> Result<Self> {
        let line =
            text.lines().map(str::trim).find(|l| l.starts_with(IDENTITY_PREFIX)).ok_or(errors::NOT_AN_IDENTITY)?;
        let hexpart = &line.as_bytes()[IDENTITY_PREFIX.len()..];
        if hexpart.len() != 64 {
            return Err(errors::NOT_AN_IDENTITY);
        }
        let mut seed = Zeroizing::new([0u8; 32]);
        for (i, pair) in hexpart.chunks(2).enumerate() {
            let hi = hex_digit(pair[0]).ok_or(errors::NOT_AN_IDENTITY)?;
            let lo = hex_digit(pair[1]).ok_or(errors::NOT_AN_IDENTITY)?;
            seed[i] = (hi << 4) | lo;
        }
        Self::from_seed(&seed)
    }

    /// The identity file's text: a comment naming the recipient, then the key line.
    pub fn to_text(&self) -> Zeroizing<String> {
        let mut hex = Zeroizing::new(String::with_capacity(64));
        for b in self.seed.iter() {
            hex.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            hex.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
        }
        Zeroizing::new(alloc::format!(
            "# pqkit X-Wing identity (ML-KEM-768 + X25519). Keep this file secret.\n# recipient: {}\n{IDENTITY_PREFIX}{}\n",
            self.recipient(),
            hex.as_str()
        ))
    }

    /// The recipient (public key) of this identity.
    pub fn recipient(&self) -> Recipient {
        Recipient(self.key.public_key())
    }

    /// The HPKE private key.
    pub fn private_key(&self) -> &PrivateKey {
        &self.key
    }
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Identity { .. }")
    }
}

/// Lower- or upper-case hex digit, without a data-dependent table look-up.
fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn bind(file_key: &[u8; 32], section: &[u8]) -> Zeroizing<[u8; 32]> {
    let mut m = Hmac::<Sha256>::new(file_key);
    m.update(BIND_LABEL).update(section);
    Zeroizing::new(m.finalize())
}

/// The version-2 prefix (magic, version, recipient section) for `recipients`, and the raw key of the inner
/// version-1 file. The file key comes from the operating system.
#[cfg(feature = "std")]
pub fn wrap(recipients: &[Recipient]) -> Result<(Vec<u8>, Zeroizing<[u8; 32]>)> {
    let mut file_key = Zeroizing::new([0u8; 32]);
    crate::rng::fill_os(&mut file_key[..])?;
    wrap_with_key(recipients, &file_key)
}

/// [`wrap`] with a given file key (known-answer tests; a real file key must be fresh and random). Needs `std`:
/// each stanza's HPKE sender takes its ephemeral key from the operating system.
#[cfg(feature = "std")]
pub fn wrap_with_key(recipients: &[Recipient], file_key: &[u8; 32]) -> Result<(Vec<u8>, Zeroizing<[u8; 32]>)> {
    if recipients.is_empty() || recipients.len() > MAX_RECIPIENTS {
        return Err(errors::RECIPIENT_COUNT);
    }
    let mut out = Vec::new();
    out.extend_from_slice(&super::stream::MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&(recipients.len() as u16).to_be_bytes());
    for r in recipients {
        let (enc, ct) = SUITE.seal(&r.0, STANZA_INFO, b"", &file_key[..], SenderMode::Base)?;
        for id in [SUITE.kem.id(), SUITE.kdf.id(), SUITE.aead.id()] {
            out.extend_from_slice(&id.to_be_bytes());
        }
        out.extend_from_slice(&(enc.len() as u16).to_be_bytes());
        out.extend_from_slice(&enc);
        out.extend_from_slice(&(ct.len() as u16).to_be_bytes());
        out.extend_from_slice(&ct);
    }
    let raw = bind(file_key, &out);
    Ok((out, raw))
}

struct Stanza {
    kem: u16,
    kdf: u16,
    aead: u16,
    enc: Vec<u8>,
    wrapped: Vec<u8>,
}

/// A source of section bytes that records them (the section is bound into the inner file's key).
struct Recorder<'a> {
    next: &'a mut dyn FnMut(&mut [u8]) -> Result<()>,
    section: Vec<u8>,
}

impl Recorder<'_> {
    fn bytes(&mut self, n: usize) -> Result<Vec<u8>> {
        let mut b = alloc::vec![0u8; n];
        (self.next)(&mut b)?;
        self.section.extend_from_slice(&b);
        Ok(b)
    }
    fn u16(&mut self) -> Result<u16> {
        let b = self.bytes(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
}

/// Reads the recipient section after `"PQKITENC" || 0x02` (given in `start`, already read) with `next`, which
/// fills a buffer exactly or fails with [`errors::TRUNCATED`], and unwraps the file key with `identities`;
/// returns the inner version-1 file's raw key.
pub fn unwrap_with(
    start: &[u8],
    next: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    identities: &[Identity],
) -> Result<Zeroizing<[u8; 32]>> {
    let mut r = Recorder { next, section: Vec::from(start) };
    let count = usize::from(r.u16()?);
    if count == 0 || count > MAX_RECIPIENTS {
        return Err(errors::BAD_COUNT);
    }
    let mut stanzas = Vec::with_capacity(count);
    for _ in 0..count {
        let (kem, kdf, aead) = (r.u16()?, r.u16()?, r.u16()?);
        let enc_len = usize::from(r.u16()?);
        if enc_len > MAX_ENC_LEN {
            return Err(errors::BAD_STANZA);
        }
        let enc = r.bytes(enc_len)?;
        let wlen = usize::from(r.u16()?);
        if wlen != WRAPPED_LEN {
            return Err(errors::BAD_STANZA);
        }
        let wrapped = r.bytes(wlen)?;
        stanzas.push(Stanza { kem, kdf, aead, enc, wrapped });
    }
    let known = |s: &Stanza| Suite::from_ids(s.kem, s.kdf, s.aead).ok() == Some(SUITE);
    for st in stanzas.iter().filter(|s| known(s)) {
        if st.enc.len() != SUITE.kem.enc_len() {
            continue;
        }
        for id in identities {
            if let Ok(k) = SUITE.open(&st.enc, &id.key, STANZA_INFO, b"", &st.wrapped, RecipientMode::Base) {
                let k = Zeroizing::new(k);
                if k.len() != 32 {
                    return Err(errors::BAD_STANZA);
                }
                let mut fk = Zeroizing::new([0u8; 32]);
                fk.copy_from_slice(&k);
                return Ok(bind(&fk, &r.section));
            }
        }
    }
    if stanzas.iter().any(known) { Err(errors::NO_MATCH) } else { Err(errors::UNKNOWN_SUITE) }
}

/// [`unwrap_with`] over a reader: reads the section after `start` (`"PQKITENC" || 0x02`, already read).
#[cfg(feature = "std")]
pub fn unwrap<R: std::io::Read + ?Sized>(
    reader: &mut R,
    start: &[u8],
    identities: &[Identity],
) -> std::io::Result<Zeroizing<[u8; 32]>> {
    let mut io_err = None;
    let mut next = |buf: &mut [u8]| -> Result<()> {
        match super::stream::read_full(reader, buf) {
            Ok(n) if n == buf.len() => Ok(()),
            Ok(_) => Err(errors::TRUNCATED),
            Err(e) => {
                io_err = Some(e);
                Err(errors::TRUNCATED)
            }
        }
    };
    let r = unwrap_with(start, &mut next, identities);
    if let Some(e) = io_err {
        return Err(e);
    }
    r.map_err(std::io::Error::from)
}

/// Starts a file encrypted to `recipients`: writes the recipient section to `inner` and returns the
/// [`Encryptor`](super::stream::Encryptor) of the inner file. Call its `finish`.
#[cfg(feature = "std")]
pub fn encrypt<W: std::io::Write>(
    recipients: &[Recipient],
    alg: super::stream::Algorithm,
    mut inner: W,
) -> std::io::Result<super::stream::Encryptor<W>> {
    let (prefix, raw) = wrap(recipients).map_err(std::io::Error::from)?;
    inner.write_all(&prefix)?;
    super::stream::Encryptor::with_key(alg, &raw[..], inner).map_err(std::io::Error::from)
}

/// Opens a file encrypted to recipients with any of `identities`: reads the recipient section from `inner`
/// and returns the [`Decryptor`](super::stream::Decryptor) of the inner file, which releases plaintext only
/// as it authenticates.
#[cfg(feature = "std")]
pub fn decrypt<R: std::io::Read>(
    identities: &[Identity],
    mut inner: R,
) -> std::io::Result<super::stream::Decryptor<R>> {
    let mut start = [0u8; 9];
    let n = super::stream::read_full(&mut inner, &mut start)?;
    if n < start.len() || start[..8] != super::stream::MAGIC || start[8] != VERSION {
        return Err(std::io::Error::from(errors::NOT_VERSION_2));
    }
    let raw = unwrap(&mut inner, &start, identities)?;
    super::stream::Decryptor::with_key(&raw[..], inner)
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::ToString;

    #[test]
    fn recipient_string_round_trip_and_refusals() {
        let id = Identity::from_seed(&[7u8; 32]).unwrap();
        let s = id.recipient().to_string();
        assert!(s.starts_with(RECIPIENT_PREFIX));
        assert_eq!(s.len(), 1639);
        assert_eq!(s.parse::<Recipient>().unwrap(), id.recipient());
        assert_eq!(format!("  {s}\n").parse::<Recipient>().unwrap(), id.recipient());
        assert_eq!("age1xyz".parse::<Recipient>().unwrap_err(), errors::NOT_A_RECIPIENT);
        assert_eq!(s[..s.len() - 5].parse::<Recipient>().unwrap_err(), errors::RECIPIENT_ENCODING);
        // One character changed: the check catches it (or the encoding, at the last character's spare bits).
        let mut b = s.clone().into_bytes();
        b[100] = if b[100] == b'A' { b'B' } else { b'A' };
        assert_eq!(String::from_utf8(b).unwrap().parse::<Recipient>().unwrap_err(), errors::RECIPIENT_CHECKSUM);
    }

    #[test]
    fn identity_text_round_trip_and_no_secret_in_debug() {
        let id = Identity::from_seed(&[0xab; 32]).unwrap();
        let text = id.to_text();
        assert!(text.contains(&"ab".repeat(32)));
        let again = Identity::from_text(&text).unwrap();
        assert_eq!(again.recipient(), id.recipient());
        assert!(!format!("{id:?}").contains("ab"));
        assert_eq!(Identity::from_text("no key line").unwrap_err(), errors::NOT_AN_IDENTITY);
        assert_eq!(Identity::from_text("PQKIT-XWING-IDENTITY-1:zz").unwrap_err(), errors::NOT_AN_IDENTITY);
    }

    #[test]
    fn encrypt_decrypt_and_the_wrong_identity() {
        use std::io::{Read, Write};
        let a = Identity::generate().unwrap();
        let b = Identity::generate().unwrap();
        let c = Identity::generate().unwrap();
        let mut enc =
            encrypt(&[a.recipient(), b.recipient()], super::super::stream::Algorithm::Aes256Gcm, Vec::new()).unwrap();
        enc.write_all(&[5u8; 70_000]).unwrap();
        let file = enc.finish().unwrap();
        for id in [&a, &b] {
            let mut out = Vec::new();
            decrypt(core::slice::from_ref(id), &file[..]).unwrap().read_to_end(&mut out).unwrap();
            assert_eq!(out, [5u8; 70_000]);
        }
        let e = decrypt(&[c], &file[..]).err().unwrap();
        assert_eq!(e.get_ref().and_then(|i| i.downcast_ref::<Error>()), Some(&errors::NO_MATCH));
        let e = decrypt(&[a], &file[..100]).err().unwrap();
        assert_eq!(e.get_ref().and_then(|i| i.downcast_ref::<Error>()), Some(&errors::TRUNCATED));
        assert!(encrypt(&[], super::super::stream::Algorithm::Aes256Gcm, Vec::new()).is_err());
    }
}
