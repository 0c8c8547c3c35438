//! X25519MLKEM768, the hybrid key exchange of TLS 1.3 (draft-ietf-tls-ecdhe-mlkem, named group 0x11EC).
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use pqkit::hybrid::x25519mlkem768::{DecapsulationKey, EncapsulationKey};
//! // Client: a fresh key pair; the key share goes in the ClientHello.
//! let client = DecapsulationKey::generate().unwrap();
//! let share = client.encapsulation_key().to_bytes(); // 1216 bytes
//! // Server: encapsulate to the client's share; the ciphertext goes in the ServerHello.
//! let (ct, server_secret) = EncapsulationKey::from_bytes(&share).unwrap().encapsulate().unwrap();
//! // Client: the same 64-byte secret.
//! assert_eq!(client.decapsulate(&ct).unwrap(), server_secret);
//! # }
//! ```
//!
//! ## Wire format (ML-KEM first, as the TLS draft fixes it)
//! - client key share (encapsulation key): `ML-KEM-768 ek (1184) || X25519 public key (32)` = 1216 bytes;
//! - server key share (ciphertext): `ML-KEM-768 ct (1088) || X25519 public key (32)` = 1120 bytes;
//! - shared secret: `ML-KEM-768 shared secret (32) || X25519 shared secret (32)` = 64 bytes
//!   ([`SharedSecret64`]); TLS feeds it to its key schedule as is.
//!
//! ## Security contract
//! - Both sides refuse an all-zero X25519 result ([`Error::InvalidEncoding`], naming X25519MLKEM768), as
//!   TLS 1.3 requires (RFC 8446 §7.4.2): the peer's X25519 share had small order.
//! - The server parses the client's share with the ML-KEM modulus check (FIPS 203 §7.2): a failing key is
//!   [`Error::InvalidEncoding`]; wrong lengths are [`Error::InvalidLength`].
//! - The ML-KEM part rejects implicitly: a tampered ML-KEM ciphertext gives an unrelated secret, not an
//!   error; a tampered X25519 share gives a different X25519 secret. Either way the TLS handshake fails at
//!   its Finished messages.
//! - Keys are meant to be ephemeral (one per handshake). Secret keys and secrets zeroize on drop.

use super::SharedSecret64;
use crate::ec::x25519::{X25519PublicKey, X25519SecretKey};
use crate::mlkem::{self, MlKem768};
use crate::{Error, Result};
use core::fmt;
use zeroize::Zeroize;
#[cfg(feature = "std")]
use zeroize::Zeroizing;

const ALG: &str = "X25519MLKEM768";

/// The TLS named-group code point.
pub const TLS_GROUP_ID: u16 = 0x11ec;
/// Length of the client's key share (the encapsulation key), in bytes.
pub const EK_LEN: usize = 1216;
/// Length of the server's key share (the ciphertext), in bytes.
pub const CT_LEN: usize = 1120;
/// Length of the shared secret, in bytes.
pub const SS_LEN: usize = 64;

const EK_M: usize = 1184;
const CT_M: usize = 1088;

const ZERO_SHARED: Error = Error::InvalidEncoding {
    algorithm: ALG,
    reason: "all-zero X25519 shared secret: the peer's X25519 share is a point of small order",
};

fn dh(sk: &X25519SecretKey, pk: &[u8]) -> Result<crate::ct::SharedSecret> {
    let pk = X25519PublicKey::from_bytes(pk)?;
    sk.diffie_hellman(&pk).map_err(|_| ZERO_SHARED)
}

/// The client's private state: an ML-KEM-768 decapsulation key and an X25519 secret key. Zeroized on drop;
/// `Debug` prints nothing.
#[derive(Clone)]
pub struct DecapsulationKey {
    dk_m: mlkem::DecapsulationKey<MlKem768>,
    sk_x: X25519SecretKey,
}

impl DecapsulationKey {
    /// A fresh key pair from the operating system's RNG (64 bytes for ML-KEM-768, 32 for X25519).
    #[cfg(feature = "std")]
    pub fn generate() -> Result<Self> {
        let mut seed = Zeroizing::new([0u8; 96]);
        crate::rng::fill_os(&mut seed[..])?;
        Self::from_seed(&seed[..])
    }

    /// The key pair for 96 secret uniformly random bytes: `d || z` (ML-KEM-768.KeyGen_internal) followed by
    /// the X25519 secret key. TLS defines no stored form; this one is pqkit's, for tests and callers with
    /// their own RNG. Any other length is [`Error::InvalidLength`].
    pub fn from_seed(seed: &[u8]) -> Result<Self> {
        Error::check_length(ALG, "seed", 96, seed.len())?;
        let (dk_m, _) = mlkem::DecapsulationKey::<MlKem768>::from_seed64(&seed[..64])?;
        let sk_x = X25519SecretKey::from_bytes(&seed[64..])?;
        Ok(DecapsulationKey { dk_m, sk_x })
    }

    /// The key share to send: `ek || X25519 public key`.
    pub fn encapsulation_key(&self) -> EncapsulationKey {
        EncapsulationKey { ek_m: self.dk_m.encapsulation_key(), pk_x: self.sk_x.public_key() }
    }

    /// The shared secret for the server's key share `ct`. Fails only when the X25519 result is all zeros
    /// ([`Error::InvalidEncoding`]); a forged ML-KEM ciphertext gives an unrelated secret (implicit
    /// rejection).
    pub fn decapsulate(&self, ct: &Ciphertext) -> Result<SharedSecret64> {
        let ct_m = mlkem::Ciphertext::<MlKem768>::from_bytes(&ct.0[..CT_M])?;
        let ss_x = dh(&self.sk_x, &ct.0[CT_M..])?;
        let ss_m = self.dk_m.decapsulate(&ct_m);
        let mut out = [0u8; SS_LEN];
        out[..32].copy_from_slice(ss_m.as_bytes());
        out[32..].copy_from_slice(ss_x.as_bytes());
        Ok(SharedSecret64(out))
    }
}

impl Zeroize for DecapsulationKey {
    fn zeroize(&mut self) {
        self.dk_m.zeroize();
        self.sk_x.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for DecapsulationKey {}

impl fmt::Debug for DecapsulationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("x25519mlkem768::DecapsulationKey { .. }")
    }
}

/// The client's key share: an ML-KEM-768 encapsulation key and an X25519 public key (1216 bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct EncapsulationKey {
    ek_m: mlkem::EncapsulationKey<MlKem768>,
    pk_x: X25519PublicKey,
}

impl EncapsulationKey {
    /// Parses a client key share: exactly [`EK_LEN`] bytes ([`Error::InvalidLength`]), the ML-KEM part
    /// passing the modulus check ([`Error::InvalidEncoding`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Error::check_length(ALG, "client key share", EK_LEN, bytes.len())?;
        let ek_m = mlkem::EncapsulationKey::<MlKem768>::from_bytes(&bytes[..EK_M]).map_err(|e| match e {
            Error::InvalidEncoding { .. } => Error::InvalidEncoding {
                algorithm: ALG,
                reason: "client key share: ML-KEM-768 coefficient not reduced modulo q",
            },
            other => other,
        })?;
        let pk_x = X25519PublicKey::from_bytes(&bytes[EK_M..])?;
        Ok(EncapsulationKey { ek_m, pk_x })
    }

    /// The encoded key share, `ek || X25519 public key`.
    pub fn to_bytes(&self) -> [u8; EK_LEN] {
        let mut out = [0u8; EK_LEN];
        out[..EK_M].copy_from_slice(self.ek_m.as_bytes());
        out[EK_M..].copy_from_slice(self.pk_x.as_bytes());
        out
    }

    /// The server's side: a fresh ciphertext (key share) and the 64-byte secret, with randomness from the
    /// operating system. Fails with [`Error::InvalidEncoding`] if the client's X25519 share has small order.
    #[cfg(feature = "std")]
    pub fn encapsulate(&self) -> Result<(Ciphertext, SharedSecret64)> {
        let mut r = Zeroizing::new([0u8; 64]);
        crate::rng::fill_os(&mut r[..])?;
        self.encapsulate_deterministic(&r)
    }

    /// As [`encapsulate`](Self::encapsulate) with the caller's randomness: `r[..32]` is ML-KEM's `m`,
    /// `r[32..]` the server's X25519 secret key. Both must be fresh, uniform and used once.
    pub fn encapsulate_deterministic(&self, r: &[u8; 64]) -> Result<(Ciphertext, SharedSecret64)> {
        let sk_x = X25519SecretKey::from_bytes(&r[32..])?;
        let ss_x = dh(&sk_x, self.pk_x.as_bytes())?;
        let mut m = [0u8; 32];
        m.copy_from_slice(&r[..32]);
        let (ct_m, ss_m) = self.ek_m.encapsulate_deterministic(&m);
        m.zeroize();
        let mut ct = [0u8; CT_LEN];
        ct[..CT_M].copy_from_slice(ct_m.as_bytes());
        ct[CT_M..].copy_from_slice(sk_x.public_key().as_bytes());
        let mut out = [0u8; SS_LEN];
        out[..32].copy_from_slice(ss_m.as_bytes());
        out[32..].copy_from_slice(ss_x.as_bytes());
        Ok((Ciphertext(ct), SharedSecret64(out)))
    }
}

impl fmt::Debug for EncapsulationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("x25519mlkem768::EncapsulationKey { .. }")
    }
}

public_bytes!(
    /// The server's key share: an ML-KEM-768 ciphertext and an X25519 public key (1120 bytes, public).
    Ciphertext,
    CT_LEN,
    "server key share",
    "x25519mlkem768::Ciphertext { .. }"
);
