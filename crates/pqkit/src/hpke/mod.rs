//! Hybrid Public Key Encryption (RFC 9180), with the post-quantum KEMs of draft-ietf-hpke-pq.
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use pqkit::hpke::{Aead, Kdf, Kem, RecipientMode, SenderMode, Suite};
//! let suite = Suite::new(Kem::XWing, Kdf::HkdfSha256, Aead::ChaCha20Poly1305);
//! let (sk_r, pk_r) = Kem::XWing.generate_key_pair().unwrap();
//! // Single shot: the encapsulated key `enc` travels with the ciphertext.
//! let (enc, ct) = suite.seal(&pk_r, b"app info", b"aad", b"hello", SenderMode::Base).unwrap();
//! let pt = suite.open(&enc, &sk_r, b"app info", b"aad", &ct, RecipientMode::Base).unwrap();
//! assert_eq!(pt, b"hello");
//! // Contexts: many messages (in order) and secret export.
//! let (enc, mut tx) = suite.setup_sender(&pk_r, b"info", SenderMode::Base).unwrap();
//! let mut rx = suite.setup_recipient(&enc, &sk_r, b"info", RecipientMode::Base).unwrap();
//! let c0 = tx.seal(b"", b"first").unwrap();
//! assert_eq!(rx.open(b"", &c0).unwrap(), b"first");
//! assert_eq!(&tx.export(b"ctx", 32).unwrap()[..], &rx.export(b"ctx", 32).unwrap()[..]);
//! # }
//! ```
//!
//! ## Algorithms
//! | KEM | id | `enc` | public key | private key | modes |
//! |---|---|---:|---:|---:|---|
//! | DHKEM(X25519, HKDF-SHA256) | 0x0020 | 32 | 32 | 32 | base, psk, auth, auth_psk |
//! | ML-KEM-512 | 0x0040 | 768 | 800 | 64 (seed) | base, psk |
//! | ML-KEM-768 | 0x0041 | 1088 | 1184 | 64 (seed) | base, psk |
//! | ML-KEM-1024 | 0x0042 | 1568 | 1568 | 64 (seed) | base, psk |
//! | X-Wing (MLKEM768-X25519) | 0x647a | 1120 | 1216 | 32 (seed) | base, psk |
//!
//! KDFs: HKDF-SHA256 (0x0001), HKDF-SHA384 (0x0002), HKDF-SHA512 (0x0003) with RFC 9180's two-stage key
//! schedule, and SHAKE256 (0x0011), the single-stage KDF of draft-ietf-hpke-pq. AEADs: AES-128-GCM (0x0001),
//! AES-256-GCM (0x0002), ChaCha20-Poly1305 (0x0003) and export-only (0xffff).
//!
//! The ML-KEM and X-Wing KEMs follow draft-ietf-hpke-pq (editor's copy of April 2026, code points 0x0040-0x0042
//! and 0x647a): private keys are seeds, `DeriveKeyPair(ikm)` is `SHAKE256.LabeledDerive(ikm, "DeriveKeyPair",
//! "", Nsk)` with `suite_id = "KEM" || kem_id`, and the KEM shared secret is the ML-KEM / X-Wing secret as is.
//! Those KEMs have no authenticated encapsulation, so the auth modes are refused for them.
//!
//! ## Security contract
//! - A [`SenderContext`] seals messages with nonces `base_nonce XOR seq`; the sequence number never wraps: at
//!   2^96 − 1 messages sealing (and opening) fails with [`Error::CounterExhausted`]. A context must be used by
//!   one sender; the recipient must open messages in the order they were sealed.
//! - Opening verifies the tag before releasing anything; a failure is [`Error::AuthenticationFailed`]
//!   (`algorithm: "HPKE"`) and does not advance the sequence number.
//! - PSKs must hold at least 32 bytes of entropy; pqkit refuses shorter ones, and empty PSK ids.
//! - Private keys, key-schedule secrets and exported secrets zeroize on drop; `Debug` prints none of them.
//! - A KEM's decapsulation failure (an all-zero X25519 result) is an error; ML-KEM and X-Wing reject
//!   implicitly, so a wrong key or a tampered `enc` surfaces as [`Error::AuthenticationFailed`] on open.

mod kdf;

use crate::ec::x25519::{X25519PublicKey, X25519SecretKey};
use crate::error::Expected;
use crate::hybrid::xwing;
use crate::mlkem::{self, MlKem512, MlKem768, MlKem1024};
use crate::{Error, Result};
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;
use zeroize::{Zeroize, Zeroizing};

const ALG: &str = "HPKE";

/// A KEM of HPKE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kem {
    /// DHKEM(X25519, HKDF-SHA256), 0x0020 (RFC 9180).
    DhKemX25519HkdfSha256,
    /// ML-KEM-512, 0x0040 (draft-ietf-hpke-pq).
    MlKem512,
    /// ML-KEM-768, 0x0041 (draft-ietf-hpke-pq).
    MlKem768,
    /// ML-KEM-1024, 0x0042 (draft-ietf-hpke-pq).
    MlKem1024,
    /// X-Wing / MLKEM768-X25519, 0x647a (draft-ietf-hpke-pq, draft-connolly-cfrg-xwing-kem).
    XWing,
}

impl Kem {
    /// Every KEM, in id order.
    pub const ALL: [Kem; 5] = [Kem::DhKemX25519HkdfSha256, Kem::MlKem512, Kem::MlKem768, Kem::MlKem1024, Kem::XWing];

    /// The IANA code point.
    pub const fn id(self) -> u16 {
        match self {
            Kem::DhKemX25519HkdfSha256 => 0x0020,
            Kem::MlKem512 => 0x0040,
            Kem::MlKem768 => 0x0041,
            Kem::MlKem1024 => 0x0042,
            Kem::XWing => 0x647a,
        }
    }

    /// The KEM with code point `id`; [`Error::InvalidParameter`] for one pqkit does not implement.
    pub fn from_id(id: u16) -> Result<Kem> {
        Kem::ALL
            .into_iter()
            .find(|k| k.id() == id)
            .ok_or(Error::InvalidParameter { algorithm: ALG, reason: "unsupported KEM id" })
    }

    /// The name, e.g. `"X-Wing"`.
    pub const fn name(self) -> &'static str {
        match self {
            Kem::DhKemX25519HkdfSha256 => "DHKEM(X25519, HKDF-SHA256)",
            Kem::MlKem512 => "ML-KEM-512",
            Kem::MlKem768 => "ML-KEM-768",
            Kem::MlKem1024 => "ML-KEM-1024",
            Kem::XWing => "X-Wing",
        }
    }

    /// `Nenc`: length of the encapsulated key.
    pub const fn enc_len(self) -> usize {
        match self {
            Kem::DhKemX25519HkdfSha256 => 32,
            Kem::MlKem512 => 768,
            Kem::MlKem768 => 1088,
            Kem::MlKem1024 => 1568,
            Kem::XWing => xwing::CT_LEN,
        }
    }

    /// `Npk`: length of a serialized public key.
    pub const fn public_key_len(self) -> usize {
        match self {
            Kem::DhKemX25519HkdfSha256 => 32,
            Kem::MlKem512 => 800,
            Kem::MlKem768 => 1184,
            Kem::MlKem1024 => 1568,
            Kem::XWing => xwing::EK_LEN,
        }
    }

    /// `Nsk`: length of a serialized private key.
    pub const fn private_key_len(self) -> usize {
        match self {
            Kem::DhKemX25519HkdfSha256 | Kem::XWing => 32,
            Kem::MlKem512 | Kem::MlKem768 | Kem::MlKem1024 => 64,
        }
    }

    /// Whether the KEM has `AuthEncap`/`AuthDecap` (the auth and auth_psk modes): DHKEM only.
    pub const fn supports_auth(self) -> bool {
        matches!(self, Kem::DhKemX25519HkdfSha256)
    }

    fn suite_id(self) -> [u8; 5] {
        let id = self.id().to_be_bytes();
        [b'K', b'E', b'M', id[0], id[1]]
    }

    /// A fresh key pair from the operating system's RNG.
    #[cfg(feature = "std")]
    pub fn generate_key_pair(self) -> Result<(PrivateKey, PublicKey)> {
        let mut seed = Zeroizing::new([0u8; 64]);
        crate::rng::fill_os(&mut seed[..self.private_key_len()])?;
        let sk = PrivateKey::from_bytes(self, &seed[..self.private_key_len()])?;
        let pk = sk.public_key();
        Ok((sk, pk))
    }

    /// `DeriveKeyPair(ikm)`: the key pair for input keying material `ikm`, which must hold at least `Nsk` bytes
    /// of entropy (RFC 9180 §7.1.3; draft-ietf-hpke-pq for ML-KEM and X-Wing). Empty `ikm` is refused.
    pub fn derive_key_pair(self, ikm: &[u8]) -> Result<(PrivateKey, PublicKey)> {
        if ikm.is_empty() {
            return Err(Error::InvalidLength {
                algorithm: ALG,
                field: "DeriveKeyPair ikm",
                expected: Expected::AtLeast(1),
                actual: 0,
            });
        }
        let sid = self.suite_id();
        let sk_bytes = match self {
            Kem::DhKemX25519HkdfSha256 => {
                let prk = kdf::labeled_extract(Kdf::HkdfSha256, &sid, b"", b"dkp_prk", ikm);
                kdf::labeled_expand(Kdf::HkdfSha256, &sid, &prk, b"sk", b"", 32)?
            }
            _ => kdf::labeled_derive(&sid, ikm, b"DeriveKeyPair", b"", self.private_key_len())?,
        };
        let sk = PrivateKey::from_bytes(self, &sk_bytes)?;
        let pk = sk.public_key();
        Ok((sk, pk))
    }
}

/// A KDF of HPKE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kdf {
    /// HKDF-SHA256, 0x0001.
    HkdfSha256,
    /// HKDF-SHA384, 0x0002.
    HkdfSha384,
    /// HKDF-SHA512, 0x0003.
    HkdfSha512,
    /// SHAKE256, 0x0011: the single-stage KDF of draft-ietf-hpke-pq.
    Shake256,
}

impl Kdf {
    /// Every KDF, in id order.
    pub const ALL: [Kdf; 4] = [Kdf::HkdfSha256, Kdf::HkdfSha384, Kdf::HkdfSha512, Kdf::Shake256];

    /// The IANA code point.
    pub const fn id(self) -> u16 {
        match self {
            Kdf::HkdfSha256 => 0x0001,
            Kdf::HkdfSha384 => 0x0002,
            Kdf::HkdfSha512 => 0x0003,
            Kdf::Shake256 => 0x0011,
        }
    }

    /// The KDF with code point `id`; [`Error::InvalidParameter`] for one pqkit does not implement.
    pub fn from_id(id: u16) -> Result<Kdf> {
        Kdf::ALL
            .into_iter()
            .find(|k| k.id() == id)
            .ok_or(Error::InvalidParameter { algorithm: ALG, reason: "unsupported KDF id" })
    }

    /// `Nh`: the output length of `Extract` (two-stage) or the secret length (SHAKE256).
    pub const fn hash_len(self) -> usize {
        match self {
            Kdf::HkdfSha256 => 32,
            Kdf::HkdfSha384 => 48,
            Kdf::HkdfSha512 | Kdf::Shake256 => 64,
        }
    }
}

/// An AEAD of HPKE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Aead {
    /// AES-128-GCM, 0x0001.
    Aes128Gcm,
    /// AES-256-GCM, 0x0002.
    Aes256Gcm,
    /// ChaCha20-Poly1305, 0x0003.
    ChaCha20Poly1305,
    /// Export-only, 0xffff: the context only exports secrets; `seal`/`open` are refused.
    ExportOnly,
}

impl Aead {
    /// Every AEAD, in id order.
    pub const ALL: [Aead; 4] = [Aead::Aes128Gcm, Aead::Aes256Gcm, Aead::ChaCha20Poly1305, Aead::ExportOnly];

    /// The IANA code point.
    pub const fn id(self) -> u16 {
        match self {
            Aead::Aes128Gcm => 0x0001,
            Aead::Aes256Gcm => 0x0002,
            Aead::ChaCha20Poly1305 => 0x0003,
            Aead::ExportOnly => 0xffff,
        }
    }

    /// The AEAD with code point `id`; [`Error::InvalidParameter`] for one pqkit does not implement.
    pub fn from_id(id: u16) -> Result<Aead> {
        Aead::ALL
            .into_iter()
            .find(|k| k.id() == id)
            .ok_or(Error::InvalidParameter { algorithm: ALG, reason: "unsupported AEAD id" })
    }

    /// `Nk`: key length (0 for export-only).
    pub const fn key_len(self) -> usize {
        match self {
            Aead::Aes128Gcm => 16,
            Aead::Aes256Gcm | Aead::ChaCha20Poly1305 => 32,
            Aead::ExportOnly => 0,
        }
    }

    /// `Nn`: nonce length (0 for export-only).
    pub const fn nonce_len(self) -> usize {
        match self {
            Aead::ExportOnly => 0,
            _ => 12,
        }
    }
}

/// The sender's mode (RFC 9180 §5): which of PSK and sender authentication are used.
#[derive(Clone, Copy)]
pub enum SenderMode<'a> {
    /// mode_base (0x00).
    Base,
    /// mode_psk (0x01): a pre-shared key of at least 32 bytes and its non-empty id.
    Psk {
        /// The pre-shared key.
        psk: &'a [u8],
        /// Its identifier.
        psk_id: &'a [u8],
    },
    /// mode_auth (0x02): the sender's private key authenticates (DHKEM only).
    Auth {
        /// The sender's private key.
        sk_s: &'a PrivateKey,
    },
    /// mode_auth_psk (0x03).
    AuthPsk {
        /// The sender's private key.
        sk_s: &'a PrivateKey,
        /// The pre-shared key.
        psk: &'a [u8],
        /// Its identifier.
        psk_id: &'a [u8],
    },
}

/// The recipient's mode, matching the sender's.
#[derive(Clone, Copy)]
pub enum RecipientMode<'a> {
    /// mode_base (0x00).
    Base,
    /// mode_psk (0x01).
    Psk {
        /// The pre-shared key.
        psk: &'a [u8],
        /// Its identifier.
        psk_id: &'a [u8],
    },
    /// mode_auth (0x02): the sender's public key.
    Auth {
        /// The sender's public key.
        pk_s: &'a PublicKey,
    },
    /// mode_auth_psk (0x03).
    AuthPsk {
        /// The sender's public key.
        pk_s: &'a PublicKey,
        /// The pre-shared key.
        psk: &'a [u8],
        /// Its identifier.
        psk_id: &'a [u8],
    },
}

impl fmt::Debug for SenderMode<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SenderMode::Base => "Base",
            SenderMode::Psk { .. } => "Psk { .. }",
            SenderMode::Auth { .. } => "Auth { .. }",
            SenderMode::AuthPsk { .. } => "AuthPsk { .. }",
        })
    }
}

impl fmt::Debug for RecipientMode<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecipientMode::Base => "Base",
            RecipientMode::Psk { .. } => "Psk { .. }",
            RecipientMode::Auth { .. } => "Auth { .. }",
            RecipientMode::AuthPsk { .. } => "AuthPsk { .. }",
        })
    }
}

/// The smallest PSK pqkit accepts (RFC 9180 §9.5: at least 32 bytes of entropy).
pub const MIN_PSK_LEN: usize = 32;

/// Checks the PSK inputs (RFC 9180 `VerifyPSKInputs`) and returns (mode byte, psk, psk_id).
fn psk_inputs<'a>(mode: u8, psk: Option<(&'a [u8], &'a [u8])>) -> Result<(u8, &'a [u8], &'a [u8])> {
    match psk {
        None => Ok((mode, b"", b"")),
        Some((psk, id)) => {
            if psk.len() < MIN_PSK_LEN {
                return Err(Error::InvalidLength {
                    algorithm: ALG,
                    field: "psk",
                    expected: Expected::AtLeast(MIN_PSK_LEN),
                    actual: psk.len(),
                });
            }
            if id.is_empty() {
                return Err(Error::InvalidLength {
                    algorithm: ALG,
                    field: "psk_id",
                    expected: Expected::AtLeast(1),
                    actual: 0,
                });
            }
            Ok((mode, psk, id))
        }
    }
}

const NO_AUTH: Error = Error::InvalidParameter {
    algorithm: ALG,
    reason: "the auth modes need a KEM with authenticated encapsulation (DHKEM); ML-KEM and X-Wing have none",
};
const WRONG_KEM: Error =
    Error::InvalidParameter { algorithm: ALG, reason: "the key belongs to a different KEM than the suite's" };

enum SkInner {
    X25519(X25519SecretKey),
    MlKem512(Box<mlkem::DecapsulationKey<MlKem512>>),
    MlKem768(Box<mlkem::DecapsulationKey<MlKem768>>),
    MlKem1024(Box<mlkem::DecapsulationKey<MlKem1024>>),
    XWing(Box<xwing::DecapsulationKey>),
}

/// An HPKE private key of one KEM. Zeroized on drop; `Debug` prints only the KEM.
pub struct PrivateKey {
    kem: Kem,
    seed: Zeroizing<Vec<u8>>,
    inner: SkInner,
}

impl PrivateKey {
    /// Parses a serialized private key (`DeserializePrivateKey`): `Nsk` bytes ([`Error::InvalidLength`]). For
    /// X25519 the 32-byte scalar; for ML-KEM the 64-byte seed `d || z`; for X-Wing the 32-byte seed.
    pub fn from_bytes(kem: Kem, bytes: &[u8]) -> Result<Self> {
        Error::check_length(kem.name(), "HPKE private key", kem.private_key_len(), bytes.len())?;
        let inner = match kem {
            Kem::DhKemX25519HkdfSha256 => SkInner::X25519(X25519SecretKey::from_bytes(bytes)?),
            Kem::MlKem512 => SkInner::MlKem512(Box::new(mlkem::DecapsulationKey::from_seed64(bytes)?.0)),
            Kem::MlKem768 => SkInner::MlKem768(Box::new(mlkem::DecapsulationKey::from_seed64(bytes)?.0)),
            Kem::MlKem1024 => SkInner::MlKem1024(Box::new(mlkem::DecapsulationKey::from_seed64(bytes)?.0)),
            Kem::XWing => SkInner::XWing(Box::new(xwing::DecapsulationKey::from_bytes(bytes)?)),
        };
        Ok(PrivateKey { kem, seed: Zeroizing::new(bytes.to_vec()), inner })
    }

    /// The KEM.
    pub fn kem(&self) -> Kem {
        self.kem
    }

    /// `SerializePrivateKey`: the `Nsk` bytes [`from_bytes`](Self::from_bytes) reads. Secret.
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        self.seed.clone()
    }

    /// The matching public key.
    pub fn public_key(&self) -> PublicKey {
        let inner = match &self.inner {
            SkInner::X25519(k) => PkInner::X25519(k.public_key()),
            SkInner::MlKem512(k) => PkInner::MlKem512(Box::new(k.encapsulation_key())),
            SkInner::MlKem768(k) => PkInner::MlKem768(Box::new(k.encapsulation_key())),
            SkInner::MlKem1024(k) => PkInner::MlKem1024(Box::new(k.encapsulation_key())),
            SkInner::XWing(k) => PkInner::XWing(Box::new(k.encapsulation_key())),
        };
        PublicKey::from_inner(self.kem, inner)
    }
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hpke::PrivateKey({}) {{ .. }}", self.kem.name())
    }
}

impl zeroize::ZeroizeOnDrop for PrivateKey {}

enum PkInner {
    X25519(X25519PublicKey),
    MlKem512(Box<mlkem::EncapsulationKey<MlKem512>>),
    MlKem768(Box<mlkem::EncapsulationKey<MlKem768>>),
    MlKem1024(Box<mlkem::EncapsulationKey<MlKem1024>>),
    XWing(Box<xwing::EncapsulationKey>),
}

/// An HPKE public key of one KEM.
pub struct PublicKey {
    kem: Kem,
    bytes: Vec<u8>,
    inner: PkInner,
}

impl PublicKey {
    fn from_inner(kem: Kem, inner: PkInner) -> Self {
        let bytes = match &inner {
            PkInner::X25519(k) => k.as_bytes().to_vec(),
            PkInner::MlKem512(k) => k.as_bytes().to_vec(),
            PkInner::MlKem768(k) => k.as_bytes().to_vec(),
            PkInner::MlKem1024(k) => k.as_bytes().to_vec(),
            PkInner::XWing(k) => k.to_bytes().to_vec(),
        };
        PublicKey { kem, bytes, inner }
    }

    /// Parses a serialized public key (`DeserializePublicKey`): `Npk` bytes ([`Error::InvalidLength`]); ML-KEM
    /// and X-Wing keys must pass the FIPS 203 modulus check ([`Error::InvalidEncoding`]).
    pub fn from_bytes(kem: Kem, bytes: &[u8]) -> Result<Self> {
        Error::check_length(kem.name(), "HPKE public key", kem.public_key_len(), bytes.len())?;
        let inner = match kem {
            Kem::DhKemX25519HkdfSha256 => PkInner::X25519(X25519PublicKey::from_bytes(bytes)?),
            Kem::MlKem512 => PkInner::MlKem512(Box::new(mlkem::EncapsulationKey::from_bytes(bytes)?)),
            Kem::MlKem768 => PkInner::MlKem768(Box::new(mlkem::EncapsulationKey::from_bytes(bytes)?)),
            Kem::MlKem1024 => PkInner::MlKem1024(Box::new(mlkem::EncapsulationKey::from_bytes(bytes)?)),
            Kem::XWing => PkInner::XWing(Box::new(xwing::EncapsulationKey::from_bytes(bytes)?)),
        };
        Ok(PublicKey { kem, bytes: bytes.to_vec(), inner })
    }

    /// The KEM.
    pub fn kem(&self) -> Kem {
        self.kem
    }

    /// `SerializePublicKey`.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl Clone for PublicKey {
    fn clone(&self) -> Self {
        PublicKey::from_bytes(self.kem, &self.bytes).expect("a parsed key parses again")
    }
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.kem == other.kem && self.bytes == other.bytes
    }
}
impl Eq for PublicKey {}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hpke::PublicKey({}, {} bytes)", self.kem.name(), self.bytes.len())
    }
}

/// DHKEM's `ExtractAndExpand(dh, kem_context)` with HKDF-SHA256.
fn dhkem_secret(dh: &[u8], kem_context: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
    let sid = Kem::DhKemX25519HkdfSha256.suite_id();
    let prk = kdf::labeled_extract(Kdf::HkdfSha256, &sid, b"", b"eae_prk", dh);
    kdf::labeled_expand(Kdf::HkdfSha256, &sid, &prk, b"shared_secret", kem_context, 32)
}

fn x25519_dh(sk: &X25519SecretKey, pk: &X25519PublicKey) -> Result<crate::ct::SharedSecret> {
    sk.diffie_hellman(pk)
}

/// `Encap` / `AuthEncap` with the encapsulation randomness `ikm_e` (DHKEM: `DeriveKeyPair(ikm_e)`; ML-KEM: `m`,
/// 32 bytes; X-Wing: `eseed`, 64 bytes). Returns (shared_secret, enc).
fn encap(pk_r: &PublicKey, sk_s: Option<&PrivateKey>, ikm_e: &[u8]) -> Result<(Zeroizing<Vec<u8>>, Vec<u8>)> {
    let need = |n: usize| Error::check_length(pk_r.kem.name(), "HPKE encapsulation randomness", n, ikm_e.len());
    match &pk_r.inner {
        PkInner::X25519(pk) => {
            let (sk_e, pk_e) = Kem::DhKemX25519HkdfSha256.derive_key_pair(ikm_e)?;
            let SkInner::X25519(e) = &sk_e.inner else { unreachable!("derived for DHKEM") };
            let mut dh = Zeroizing::new(Vec::with_capacity(64));
            dh.extend_from_slice(x25519_dh(e, pk)?.as_bytes());
            let enc = pk_e.bytes.clone();
            let mut ctx = Vec::with_capacity(96);
            ctx.extend_from_slice(&enc);
            ctx.extend_from_slice(&pk_r.bytes);
            if let Some(s) = sk_s {
                let SkInner::X25519(s_key) = &s.inner else { return Err(WRONG_KEM) };
                dh.extend_from_slice(x25519_dh(s_key, pk)?.as_bytes());
                ctx.extend_from_slice(s_key.public_key().as_bytes());
            }
            Ok((dhkem_secret(&dh, &ctx)?, enc))
        }
        _ if sk_s.is_some() => Err(NO_AUTH),
        PkInner::MlKem512(k) => {
            need(32)?;
            let (ct, ss) = k.encapsulate_deterministic(ikm_e.try_into().expect("checked"));
            Ok((Zeroizing::new(ss.as_bytes().to_vec()), ct.as_bytes().to_vec()))
        }
        PkInner::MlKem768(k) => {
            need(32)?;
            let (ct, ss) = k.encapsulate_deterministic(ikm_e.try_into().expect("checked"));
            Ok((Zeroizing::new(ss.as_bytes().to_vec()), ct.as_bytes().to_vec()))
        }
        PkInner::MlKem1024(k) => {
            need(32)?;
            let (ct, ss) = k.encapsulate_deterministic(ikm_e.try_into().expect("checked"));
            Ok((Zeroizing::new(ss.as_bytes().to_vec()), ct.as_bytes().to_vec()))
        }
        PkInner::XWing(k) => {
            need(64)?;
            let (ct, ss) = k.encapsulate_deterministic(ikm_e.try_into().expect("checked"));
            Ok((Zeroizing::new(ss.as_bytes().to_vec()), ct.as_bytes().to_vec()))
        }
    }
}

/// `Decap` / `AuthDecap`.
fn decap(enc: &[u8], sk_r: &PrivateKey, pk_s: Option<&PublicKey>) -> Result<Zeroizing<Vec<u8>>> {
    let kem = sk_r.kem;
    Error::check_length(kem.name(), "HPKE enc", kem.enc_len(), enc.len())?;
    match &sk_r.inner {
        SkInner::X25519(sk) => {
            let pk_e = X25519PublicKey::from_bytes(enc)?;
            let mut dh = Zeroizing::new(Vec::with_capacity(64));
            dh.extend_from_slice(x25519_dh(sk, &pk_e)?.as_bytes());
            let mut ctx = Vec::with_capacity(96);
            ctx.extend_from_slice(enc);
            ctx.extend_from_slice(sk.public_key().as_bytes());
            if let Some(s) = pk_s {
                let PkInner::X25519(pk_s) = &s.inner else { return Err(WRONG_KEM) };
                dh.extend_from_slice(x25519_dh(sk, pk_s)?.as_bytes());
                ctx.extend_from_slice(pk_s.as_bytes());
            }
            dhkem_secret(&dh, &ctx)
        }
        _ if pk_s.is_some() => Err(NO_AUTH),
        SkInner::MlKem512(k) => {
            Ok(Zeroizing::new(k.decapsulate(&mlkem::Ciphertext::from_bytes(enc)?).as_bytes().to_vec()))
        }
        SkInner::MlKem768(k) => {
            Ok(Zeroizing::new(k.decapsulate(&mlkem::Ciphertext::from_bytes(enc)?).as_bytes().to_vec()))
        }
        SkInner::MlKem1024(k) => {
            Ok(Zeroizing::new(k.decapsulate(&mlkem::Ciphertext::from_bytes(enc)?).as_bytes().to_vec()))
        }
        SkInner::XWing(k) => {
            Ok(Zeroizing::new(k.decapsulate(&xwing::Ciphertext::from_bytes(enc)?).as_bytes().to_vec()))
        }
    }
}

/// An HPKE ciphersuite: KEM, KDF and AEAD.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Suite {
    /// The KEM.
    pub kem: Kem,
    /// The KDF of the key schedule.
    pub kdf: Kdf,
    /// The AEAD.
    pub aead: Aead,
}

impl Suite {
    /// The suite (KEM, KDF, AEAD).
    pub const fn new(kem: Kem, kdf: Kdf, aead: Aead) -> Self {
        Suite { kem, kdf, aead }
    }

    /// The suite with these code points; [`Error::InvalidParameter`] names the unsupported one.
    pub fn from_ids(kem: u16, kdf: u16, aead: u16) -> Result<Self> {
        Ok(Suite { kem: Kem::from_id(kem)?, kdf: Kdf::from_id(kdf)?, aead: Aead::from_id(aead)? })
    }

    /// `suite_id = "HPKE" || kem_id || kdf_id || aead_id`.
    pub fn suite_id(&self) -> [u8; 10] {
        let (k, d, a) = (self.kem.id().to_be_bytes(), self.kdf.id().to_be_bytes(), self.aead.id().to_be_bytes());
        [b'H', b'P', b'K', b'E', k[0], k[1], d[0], d[1], a[0], a[1]]
    }

    fn check_kem(&self, kem: Kem) -> Result<()> {
        if kem == self.kem { Ok(()) } else { Err(WRONG_KEM) }
    }

    /// `SetupBaseS` / `SetupPSKS` / `SetupAuthS` / `SetupAuthPSKS` with fresh randomness: the encapsulated key
    /// `enc` (send it to the recipient) and the sender's context.
    #[cfg(feature = "std")]
    pub fn setup_sender(&self, pk_r: &PublicKey, info: &[u8], mode: SenderMode) -> Result<(Vec<u8>, SenderContext)> {
        let n = match self.kem {
            Kem::DhKemX25519HkdfSha256 | Kem::MlKem512 | Kem::MlKem768 | Kem::MlKem1024 => 32,
            Kem::XWing => 64,
        };
        let mut ikm_e = Zeroizing::new([0u8; 64]);
        crate::rng::fill_os(&mut ikm_e[..n])?;
        self.setup_sender_deterministic(pk_r, info, mode, &ikm_e[..n])
    }

    /// As [`setup_sender`](Self::setup_sender) with the caller's encapsulation randomness `ikm_e` (DHKEM: the
    /// `ikmE` of `DeriveKeyPair`; ML-KEM: `m`, 32 bytes; X-Wing: `eseed`, 64 bytes). For known-answer tests:
    /// `ikm_e` must be fresh and uniformly random, used once.
    #[doc(hidden)]
    pub fn setup_sender_deterministic(
        &self,
        pk_r: &PublicKey,
        info: &[u8],
        mode: SenderMode,
        ikm_e: &[u8],
    ) -> Result<(Vec<u8>, SenderContext)> {
        self.check_kem(pk_r.kem)?;
        let (sk_s, m, psk, psk_id) = match mode {
            SenderMode::Base => (None, psk_inputs(0, None)?, b"" as &[u8], b"" as &[u8]),
            SenderMode::Psk { psk, psk_id } => (None, psk_inputs(1, Some((psk, psk_id)))?, psk, psk_id),
            SenderMode::Auth { sk_s } => (Some(sk_s), psk_inputs(2, None)?, b"" as &[u8], b"" as &[u8]),
            SenderMode::AuthPsk { sk_s, psk, psk_id } => (Some(sk_s), psk_inputs(3, Some((psk, psk_id)))?, psk, psk_id),
        };
        if let Some(s) = sk_s {
            if !self.kem.supports_auth() {
                return Err(NO_AUTH);
            }
            self.check_kem(s.kem)?;
        }
        let (ss, enc) = encap(pk_r, sk_s, ikm_e)?;
        let ctx = self.key_schedule(m.0, &ss, info, psk, psk_id)?;
        Ok((enc, SenderContext(ctx)))
    }

    /// `SetupBaseR` / `SetupPSKR` / `SetupAuthR` / `SetupAuthPSKR`: the recipient's context for `enc`.
    pub fn setup_recipient(
        &self,
        enc: &[u8],
        sk_r: &PrivateKey,
        info: &[u8],
        mode: RecipientMode,
    ) -> Result<RecipientContext> {
        self.check_kem(sk_r.kem)?;
        let (pk_s, m, psk, psk_id) = match mode {
            RecipientMode::Base => (None, psk_inputs(0, None)?, b"" as &[u8], b"" as &[u8]),
            RecipientMode::Psk { psk, psk_id } => (None, psk_inputs(1, Some((psk, psk_id)))?, psk, psk_id),
            RecipientMode::Auth { pk_s } => (Some(pk_s), psk_inputs(2, None)?, b"" as &[u8], b"" as &[u8]),
            RecipientMode::AuthPsk { pk_s, psk, psk_id } => {
                (Some(pk_s), psk_inputs(3, Some((psk, psk_id)))?, psk, psk_id)
            }
        };
        if let Some(s) = pk_s {
            if !self.kem.supports_auth() {
                return Err(NO_AUTH);
            }
            self.check_kem(s.kem)?;
        }
        let ss = decap(enc, sk_r, pk_s)?;
        Ok(RecipientContext(self.key_schedule(m.0, &ss, info, psk, psk_id)?))
    }

    fn key_schedule(&self, mode: u8, ss: &[u8], info: &[u8], psk: &[u8], psk_id: &[u8]) -> Result<Context> {
        let sid = self.suite_id();
        let (nk, nn, nh) = (self.aead.key_len(), self.aead.nonce_len(), self.kdf.hash_len());
        let (key, base_nonce, exporter_secret) = match self.kdf {
            Kdf::Shake256 => {
                let mut secrets = Zeroizing::new(Vec::with_capacity(4 + psk.len() + ss.len()));
                kdf::push_prefixed(&mut secrets, psk);
                kdf::push_prefixed(&mut secrets, ss);
                let mut context = Vec::with_capacity(5 + psk_id.len() + info.len());
                context.push(mode);
                kdf::push_prefixed(&mut context, psk_id);
                kdf::push_prefixed(&mut context, info);
                let all = kdf::labeled_derive(&sid, &secrets, b"secret", &context, nk + nn + nh)?;
                (
                    Zeroizing::new(all[..nk].to_vec()),
                    Zeroizing::new(all[nk..nk + nn].to_vec()),
                    Zeroizing::new(all[nk + nn..].to_vec()),
                )
            }
            k => {
                let psk_id_hash = kdf::labeled_extract(k, &sid, b"", b"psk_id_hash", psk_id);
                let info_hash = kdf::labeled_extract(k, &sid, b"", b"info_hash", info);
                let mut ksc = Vec::with_capacity(1 + 2 * nh);
                ksc.push(mode);
                ksc.extend_from_slice(&psk_id_hash);
                ksc.extend_from_slice(&info_hash);
                let secret = kdf::labeled_extract(k, &sid, ss, b"secret", psk);
                (
                    kdf::labeled_expand(k, &sid, &secret, b"key", &ksc, nk)?,
                    kdf::labeled_expand(k, &sid, &secret, b"base_nonce", &ksc, nn)?,
                    kdf::labeled_expand(k, &sid, &secret, b"exp", &ksc, nh)?,
                )
            }
        };
        let aead = match self.aead {
            Aead::Aes128Gcm => AeadKey::Aes128(crate::aead::Aes128Gcm::new(&key)?),
            Aead::Aes256Gcm => AeadKey::Aes256(crate::aead::Aes256Gcm::new(&key)?),
            Aead::ChaCha20Poly1305 => AeadKey::ChaCha(crate::aead::ChaCha20Poly1305::new(&key)?),
            Aead::ExportOnly => AeadKey::ExportOnly,
        };
        let mut nonce = [0u8; 12];
        nonce[..nn].copy_from_slice(&base_nonce);
        Ok(Context { suite: *self, aead, base_nonce: nonce, seq: 0, exporter_secret })
    }

    /// Single-shot `Seal`: `(enc, ciphertext)` of `pt` for `pk_r`.
    #[cfg(feature = "std")]
    pub fn seal(
        &self,
        pk_r: &PublicKey,
        info: &[u8],
        aad: &[u8],
        pt: &[u8],
        mode: SenderMode,
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        let (enc, mut ctx) = self.setup_sender(pk_r, info, mode)?;
        Ok((enc, ctx.seal(aad, pt)?))
    }

    /// Single-shot `Open`: the plaintext of `ct` sealed to `sk_r`'s public key with `enc`.
    pub fn open(
        &self,
        enc: &[u8],
        sk_r: &PrivateKey,
        info: &[u8],
        aad: &[u8],
        ct: &[u8],
        mode: RecipientMode,
    ) -> Result<Vec<u8>> {
        self.setup_recipient(enc, sk_r, info, mode)?.open(aad, ct)
    }

    /// Single-shot `SendExport`: `(enc, secret)` with a `len`-byte secret exported under `exporter_context`.
    #[cfg(feature = "std")]
    pub fn send_export(
        &self,
        pk_r: &PublicKey,
        info: &[u8],
        exporter_context: &[u8],
        len: usize,
        mode: SenderMode,
    ) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>)> {
        let (enc, ctx) = self.setup_sender(pk_r, info, mode)?;
        Ok((enc, ctx.export(exporter_context, len)?))
    }

    /// Single-shot `ReceiveExport`.
    pub fn receive_export(
        &self,
        enc: &[u8],
        sk_r: &PrivateKey,
        info: &[u8],
        exporter_context: &[u8],
        len: usize,
        mode: RecipientMode,
    ) -> Result<Zeroizing<Vec<u8>>> {
        self.setup_recipient(enc, sk_r, info, mode)?.export(exporter_context, len)
    }
}

enum AeadKey {
    Aes128(crate::aead::Aes128Gcm),
    Aes256(crate::aead::Aes256Gcm),
    ChaCha(crate::aead::ChaCha20Poly1305),
    ExportOnly,
}

/// The largest sequence number: 2^96 − 1 (RFC 9180 §5.2, `Nn` = 12); at it the context is exhausted.
pub const MAX_SEQUENCE: u128 = (1 << 96) - 1;

struct Context {
    suite: Suite,
    aead: AeadKey,
    base_nonce: [u8; 12],
    seq: u128,
    exporter_secret: Zeroizing<Vec<u8>>,
}

const EXPORT_ONLY: Error =
    Error::InvalidParameter { algorithm: ALG, reason: "export-only suite: seal and open are not available" };

impl Context {
    fn nonce(&self) -> Result<[u8; 12]> {
        if self.seq >= MAX_SEQUENCE {
            return Err(Error::CounterExhausted { algorithm: ALG });
        }
        let mut n = self.base_nonce;
        let s = self.seq.to_be_bytes();
        for (a, b) in n.iter_mut().zip(&s[4..]) {
            *a ^= b;
        }
        Ok(n)
    }

    fn seal(&mut self, aad: &[u8], pt: &[u8]) -> Result<Vec<u8>> {
        use crate::aead::Aead as _;
        if matches!(self.aead, AeadKey::ExportOnly) {
            return Err(EXPORT_ONLY);
        }
        let nonce = self.nonce()?;
        let ct = match &self.aead {
            AeadKey::Aes128(k) => k.seal(&nonce, aad, pt)?,
            AeadKey::Aes256(k) => k.seal(&nonce, aad, pt)?,
            AeadKey::ChaCha(k) => k.seal(&nonce, aad, pt)?,
            AeadKey::ExportOnly => return Err(EXPORT_ONLY),
        };
        self.seq += 1;
        Ok(ct)
    }

    fn open(&mut self, aad: &[u8], ct: &[u8]) -> Result<Vec<u8>> {
        use crate::aead::Aead as _;
        if matches!(self.aead, AeadKey::ExportOnly) {
            return Err(EXPORT_ONLY);
        }
        let nonce = self.nonce()?;
        let r = match &self.aead {
            AeadKey::Aes128(k) => k.open(&nonce, aad, ct),
            AeadKey::Aes256(k) => k.open(&nonce, aad, ct),
            AeadKey::ChaCha(k) => k.open(&nonce, aad, ct),
            AeadKey::ExportOnly => return Err(EXPORT_ONLY),
        };
        let pt = r.map_err(|e| match e {
            Error::AuthenticationFailed { .. } | Error::InvalidLength { field: "sealed message", .. } => {
                Error::AuthenticationFailed { algorithm: ALG }
            }
            other => other,
        })?;
        self.seq += 1;
        Ok(pt)
    }

    fn export(&self, exporter_context: &[u8], len: usize) -> Result<Zeroizing<Vec<u8>>> {
        let sid = self.suite.suite_id();
        match self.suite.kdf {
            Kdf::Shake256 => kdf::labeled_derive(&sid, &self.exporter_secret, b"sec", exporter_context, len),
            k => kdf::labeled_expand(k, &sid, &self.exporter_secret, b"sec", exporter_context, len),
        }
    }
}

/// The sender's encryption context (RFC 9180 §5.2). Its secrets zeroize on drop.
pub struct SenderContext(Context);

impl SenderContext {
    /// `ContextS.Seal(aad, pt)`: `ciphertext || tag` under the next nonce. Export-only suites refuse
    /// ([`Error::InvalidParameter`]); an exhausted sequence number is [`Error::CounterExhausted`].
    pub fn seal(&mut self, aad: &[u8], pt: &[u8]) -> Result<Vec<u8>> {
        self.0.seal(aad, pt)
    }

    /// `Context.Export(exporter_context, L)`: a secret of `len` bytes (at most 255·`Nh` for HKDF, 65535 for
    /// SHAKE256; more is [`Error::InvalidLength`]).
    pub fn export(&self, exporter_context: &[u8], len: usize) -> Result<Zeroizing<Vec<u8>>> {
        self.0.export(exporter_context, len)
    }

    /// The number of messages sealed so far.
    pub fn sequence_number(&self) -> u128 {
        self.0.seq
    }

    /// Sets the sequence number (tests of known answers at high sequence numbers and of exhaustion).
    #[doc(hidden)]
    pub fn set_sequence_number(&mut self, seq: u128) {
        self.0.seq = seq;
    }
}

/// The recipient's decryption context (RFC 9180 §5.2). Its secrets zeroize on drop.
pub struct RecipientContext(Context);

impl RecipientContext {
    /// `ContextR.Open(aad, ct)`: the plaintext, or [`Error::AuthenticationFailed`] (`algorithm: "HPKE"`)
    /// without advancing the sequence number.
    pub fn open(&mut self, aad: &[u8], ct: &[u8]) -> Result<Vec<u8>> {
        self.0.open(aad, ct)
    }

    /// `Context.Export(exporter_context, L)`, as [`SenderContext::export`].
    pub fn export(&self, exporter_context: &[u8], len: usize) -> Result<Zeroizing<Vec<u8>>> {
        self.0.export(exporter_context, len)
    }

    /// The number of messages opened so far.
    pub fn sequence_number(&self) -> u128 {
        self.0.seq
    }

    /// Sets the sequence number (tests).
    #[doc(hidden)]
    pub fn set_sequence_number(&mut self, seq: u128) {
        self.0.seq = seq;
    }
}

impl fmt::Debug for SenderContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hpke::SenderContext({:?}, seq {}) {{ .. }}", self.0.suite, self.0.seq)
    }
}

impl fmt::Debug for RecipientContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hpke::RecipientContext({:?}, seq {}) {{ .. }}", self.0.suite, self.0.seq)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        self.base_nonce.zeroize();
    }
}
