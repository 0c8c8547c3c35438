//! X-Wing, the general-purpose hybrid KEM of ML-KEM-768 and X25519 (draft-connolly-cfrg-xwing-kem-10).
//!
//! ```
//! # #[cfg(feature = "std")] {
//! use pqkit::hybrid::xwing::DecapsulationKey;
//! let dk = DecapsulationKey::generate().unwrap();
//! let ek = dk.encapsulation_key();
//! let (ct, k_sender) = ek.encapsulate().unwrap();
//! assert_eq!(dk.decapsulate(&ct), k_sender);
//! # }
//! ```
//!
//! ## Construction (the draft's §5)
//! - Private key: a 32-byte seed `sk`. `SHAKE256(sk, 96 bytes)` gives `d || z` for
//!   `ML-KEM-768.KeyGen_internal(d, z)` and the X25519 secret `sk_X`.
//! - Public key (1216 bytes): `pk_M (1184) || pk_X (32)`. Ciphertext (1120 bytes): `ct_M (1088) || ct_X (32)`.
//! - Shared secret: `SHA3-256(ss_M || ss_X || ct_X || pk_X || XWingLabel)`, `XWingLabel = "\.//^\"`
//!   (`5c2e2f2f5e5c`), the label last.
//!
//! ## Security contract
//! - Decapsulation never fails and never says whether the ciphertext was honest: ML-KEM's implicit rejection
//!   gives a pseudorandom secret for a forged `ct_M`, and the combiner hashes `ct_X`, so any change to the
//!   ciphertext gives an unrelated secret. As the draft specifies, an all-zero X25519 result (a small-order
//!   `ct_X` or `pk_X`) is not an error here: the secret still depends on the ML-KEM secret.
//! - Parsing a public key runs the ML-KEM modulus check (FIPS 203 §7.2); a key that fails it is
//!   [`Error::InvalidEncoding`].
//! - The seed is the only private key form that is stored or sent ([`DecapsulationKey::to_seed`]); the
//!   expanded keys are cached inside [`DecapsulationKey`] and wiped on drop, never exported (the draft warns
//!   that exporting them voids the binding properties).
//! - `*_deterministic` functions exist for known-answer tests; their randomness must be fresh and uniform.

use crate::ec::x25519;
use crate::hash::sha3::{Sha3_256, Shake256};
use crate::mlkem::{self, MlKem768};
use crate::{Error, Result};
use core::fmt;
use zeroize::{Zeroize, Zeroizing};

pub use crate::ct::SharedSecret;

const ALG: &str = "X-Wing";

/// The combiner label `\.//^\`.
pub const LABEL: [u8; 6] = *b"\\.//^\\";
/// Length of a private key (the seed), in bytes.
pub const SEED_LEN: usize = 32;
/// Length of a public (encapsulation) key, in bytes.
pub const EK_LEN: usize = 1216;
/// Length of a ciphertext, in bytes.
pub const CT_LEN: usize = 1120;
/// Length of the encapsulation randomness (`m` for ML-KEM, then the X25519 ephemeral secret).
pub const ESEED_LEN: usize = 64;

const EK_M: usize = 1184;
const CT_M: usize = 1088;

fn combine(ss_m: &[u8; 32], ss_x: &[u8; 32], ct_x: &[u8; 32], pk_x: &[u8; 32]) -> SharedSecret {
    let mut h = Sha3_256::new();
    h.update(ss_m).update(ss_x).update(ct_x).update(pk_x).update(&LABEL);
    SharedSecret(h.finalize())
}

/// An X-Wing private key: the 32-byte seed and the keys it expands to. Zeroized on drop; `Debug` prints
/// nothing.
pub struct DecapsulationKey {
    seed: [u8; 32],
    dk_m: mlkem::DecapsulationKey<MlKem768>,
    sk_x: [u8; 32],
    pk_x: [u8; 32],
}

impl DecapsulationKey {
    /// A fresh key: a 32-byte seed from the operating system's RNG.
    #[cfg(feature = "std")]
    pub fn generate() -> Result<Self> {
        let mut seed = Zeroizing::new([0u8; 32]);
        crate::rng::fill_os(&mut seed[..])?;
        Ok(Self::from_seed(&seed))
    }

    /// `GenerateKeyPairDerand(seed)`: the key for a 32-byte seed (which must be secret and uniformly random).
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let mut expanded = Zeroizing::new([0u8; 96]);
        Shake256::digest_into(seed, &mut expanded[..]);
        let mut d = Zeroizing::new([0u8; 32]);
        let mut z = Zeroizing::new([0u8; 32]);
        let mut sk_x = [0u8; 32];
        d.copy_from_slice(&expanded[..32]);
        z.copy_from_slice(&expanded[32..64]);
        sk_x.copy_from_slice(&expanded[64..]);
        let (dk_m, _) = mlkem::DecapsulationKey::<MlKem768>::from_seed(&d, &z);
        let pk_x = x25519::x25519_base(&sk_x);
        DecapsulationKey { seed: *seed, dk_m, sk_x, pk_x }
    }

    /// The key for a stored seed: exactly [`SEED_LEN`] bytes, else [`Error::InvalidLength`].
    pub fn from_bytes(seed: &[u8]) -> Result<Self> {
        Error::check_length(ALG, "private key (seed)", SEED_LEN, seed.len())?;
        let mut s = Zeroizing::new([0u8; 32]);
        s.copy_from_slice(seed);
        Ok(Self::from_seed(&s))
    }

    /// The 32-byte seed, the one serialized form of the private key. Secret: the copy is wiped on drop.
    pub fn to_seed(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(self.seed)
    }

    /// The matching public key.
    pub fn encapsulation_key(&self) -> EncapsulationKey {
        EncapsulationKey { ek_m: self.dk_m.encapsulation_key(), pk_x: self.pk_x }
    }

    /// Decapsulates `ct`. Never fails: a ciphertext not made for this key gives an unrelated pseudorandom
    /// secret (see the [module docs](self)); do not reveal which case happened.
    pub fn decapsulate(&self, ct: &Ciphertext) -> SharedSecret {
        let ct_m = mlkem::Ciphertext::<MlKem768>::from_bytes(&ct.0[..CT_M]).expect("fixed length");
        let ss_m = self.dk_m.decapsulate(&ct_m);
        let mut ct_x = [0u8; 32];
        ct_x.copy_from_slice(&ct.0[CT_M..]);
        let mut ss_x = x25519::x25519_unchecked(&self.sk_x, &ct_x);
        let out = combine(ss_m.as_bytes(), &ss_x, &ct_x, &self.pk_x);
        ss_x.zeroize();
        out
    }
}

impl Clone for DecapsulationKey {
    fn clone(&self) -> Self {
        DecapsulationKey { seed: self.seed, dk_m: self.dk_m.clone(), sk_x: self.sk_x, pk_x: self.pk_x }
    }
}

impl Zeroize for DecapsulationKey {
    fn zeroize(&mut self) {
        self.seed.zeroize();
        self.dk_m.zeroize();
        self.sk_x.zeroize();
    }
}

impl Drop for DecapsulationKey {
    fn drop(&mut self) {
        self.seed.zeroize();
        self.sk_x.zeroize();
        // dk_m wipes itself.
    }
}

impl zeroize::ZeroizeOnDrop for DecapsulationKey {}

impl fmt::Debug for DecapsulationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("xwing::DecapsulationKey { .. }")
    }
}

/// An X-Wing public key, `pk_M || pk_X` (1216 bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct EncapsulationKey {
    ek_m: mlkem::EncapsulationKey<MlKem768>,
    pk_x: [u8; 32],
}

impl EncapsulationKey {
    /// Parses a public key: exactly [`EK_LEN`] bytes ([`Error::InvalidLength`]) whose ML-KEM part passes the
    /// FIPS 203 modulus check ([`Error::InvalidEncoding`]). Every X25519 part is accepted.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Error::check_length(ALG, "public key", EK_LEN, bytes.len())?;
        let ek_m = mlkem::EncapsulationKey::<MlKem768>::from_bytes(&bytes[..EK_M]).map_err(|e| match e {
            Error::InvalidEncoding { .. } => Error::InvalidEncoding {
                algorithm: ALG,
                reason: "public key: ML-KEM-768 coefficient not reduced modulo q",
            },
            other => other,
        })?;
        let mut pk_x = [0u8; 32];
        pk_x.copy_from_slice(&bytes[EK_M..]);
        Ok(EncapsulationKey { ek_m, pk_x })
    }

    /// The encoded key, `pk_M || pk_X`.
    pub fn to_bytes(&self) -> [u8; EK_LEN] {
        let mut out = [0u8; EK_LEN];
        out[..EK_M].copy_from_slice(self.ek_m.as_bytes());
        out[EK_M..].copy_from_slice(&self.pk_x);
        out
    }

    /// Encapsulates a fresh secret with 64 bytes from the operating system's RNG.
    #[cfg(feature = "std")]
    pub fn encapsulate(&self) -> Result<(Ciphertext, SharedSecret)> {
        let mut eseed = Zeroizing::new([0u8; ESEED_LEN]);
        crate::rng::fill_os(&mut eseed[..])?;
        Ok(self.encapsulate_deterministic(&eseed))
    }

    /// `EncapsulateDerand(pk, eseed)`: `eseed[..32]` is ML-KEM's `m`, `eseed[32..]` the X25519 ephemeral
    /// secret. `eseed` must be 64 fresh uniformly random bytes, used once (known-answer tests, own RNGs).
    pub fn encapsulate_deterministic(&self, eseed: &[u8; ESEED_LEN]) -> (Ciphertext, SharedSecret) {
        let mut m = [0u8; 32];
        let mut ek_x = [0u8; 32];
        m.copy_from_slice(&eseed[..32]);
        ek_x.copy_from_slice(&eseed[32..]);
        let ct_x = x25519::x25519_base(&ek_x);
        let mut ss_x = x25519::x25519_unchecked(&ek_x, &self.pk_x);
        let (ct_m, ss_m) = self.ek_m.encapsulate_deterministic(&m);
        let ss = combine(ss_m.as_bytes(), &ss_x, &ct_x, &self.pk_x);
        m.zeroize();
        ek_x.zeroize();
        ss_x.zeroize();
        let mut ct = [0u8; CT_LEN];
        ct[..CT_M].copy_from_slice(ct_m.as_bytes());
        ct[CT_M..].copy_from_slice(&ct_x);
        (Ciphertext(ct), ss)
    }
}

impl fmt::Debug for EncapsulationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("xwing::EncapsulationKey { .. }")
    }
}

public_bytes!(
    /// An X-Wing ciphertext, `ct_M || ct_X` (1120 bytes, public).
    Ciphertext,
    CT_LEN,
    "ciphertext",
    "xwing::Ciphertext { .. }"
);
