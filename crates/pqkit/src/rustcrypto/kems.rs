//! `kem` 0.3: ML-KEM-512/768/1024 as `kem::Kem`.
//!
//! The parameter-set types ([`MlKem512`], [`MlKem768`], [`MlKem1024`]) implement `Kem`. The encapsulation key is
//! pqkit's [`EncapsulationKey`] (`Encapsulate`, `TryKeyInit` with the FIPS 203 modulus check, `KeyExport`);
//! the decapsulation key is [`KemDecapsulationKey`], pqkit's [`DecapsulationKey`] together with its
//! encapsulation key, which the trait wants to lend by reference (`Decapsulate`, `Generate`, and `KeyInit`
//! from the 64-byte seed `d ‖ z`, which gives `kem::FromSeed`).
//!
//! ## Security contract
//! - Decapsulation never fails: a ciphertext not made for the key gives the implicit-rejection secret
//!   (FIPS 203), in constant time. Do not reveal which case happened.
//! - The shared key is returned in the trait's plain array type, which is not wiped on drop; callers that keep
//!   it should wipe it (or use the native API, whose [`SharedSecret`](crate::ct::SharedSecret) wipes itself).
//! - Randomness (the seed in `Generate`, the message `m` in `encapsulate_with_rng`) comes from the caller's
//!   RNG, which must be a cryptographic one; a failing RNG makes `try_generate_from_rng` fail.

use crate::mlkem::{Ciphertext, DecapsulationKey, EncapsulationKey, MlKem512, MlKem768, MlKem1024, Params};
use ::kem::{Decapsulate, Decapsulator, Encapsulate, Kem};
use crypto_common::array::Array;
use crypto_common::rand_core::{CryptoRng, TryCryptoRng};
use crypto_common::typenum::{U32, U64, U768, U800};
use crypto_common::{Generate, InvalidKey, Key, KeyExport, KeyInit, KeySizeUser, TryKeyInit};
use hybrid_array::sizes::{U1088, U1184, U1568};
use zeroize::Zeroize;

/// An ML-KEM decapsulation key for the `kem` traits: pqkit's [`DecapsulationKey`] and its encapsulation key.
/// The private key is wiped on drop; `Debug` prints nothing secret.
pub struct KemDecapsulationKey<P: Params> {
    dk: DecapsulationKey<P>,
    ek: EncapsulationKey<P>,
}

impl<P: Params> KemDecapsulationKey<P> {
    /// The native decapsulation key.
    pub fn decapsulation_key(&self) -> &DecapsulationKey<P> {
        &self.dk
    }

    /// Gives back the native decapsulation key.
    pub fn into_inner(self) -> DecapsulationKey<P> {
        self.dk
    }
}

impl<P: Params> From<DecapsulationKey<P>> for KemDecapsulationKey<P> {
    fn from(dk: DecapsulationKey<P>) -> Self {
        let ek = dk.encapsulation_key();
        KemDecapsulationKey { dk, ek }
    }
}

/// The native key inside wipes itself on drop; the encapsulation key is public.
impl<P: Params> zeroize::ZeroizeOnDrop for KemDecapsulationKey<P> {}

impl<P: Params> core::fmt::Debug for KemDecapsulationKey<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "KemDecapsulationKey<{}> {{ .. }}", P::NAME)
    }
}

/// The seed `d ‖ z` (64 bytes, secret, uniformly random) of ML-KEM.KeyGen_internal.
impl<P: Params> KeySizeUser for KemDecapsulationKey<P> {
    type KeySize = U64;
}

impl<P: Params> KeyInit for KemDecapsulationKey<P> {
    fn new(seed: &Key<Self>) -> Self {
        let (dk, ek) = super::fixed_len(DecapsulationKey::from_seed64(seed.as_slice()));
        KemDecapsulationKey { dk, ek }
    }
}

/// Key generation from 64 bytes of the caller's RNG (ML-KEM.KeyGen, FIPS 203 Algorithm 19).
impl<P: Params> Generate for KemDecapsulationKey<P> {
    fn try_generate_from_rng<R: TryCryptoRng + ?Sized>(rng: &mut R) -> Result<Self, R::Error> {
        let mut seed = [0u8; 64];
        rng.try_fill_bytes(&mut seed)?;
        let out = super::fixed_len(DecapsulationKey::from_seed64(&seed));
        seed.zeroize();
        Ok(KemDecapsulationKey { dk: out.0, ek: out.1 })
    }
}

macro_rules! rustcrypto_kem {
    ($($p:ident: ek $ek:ty, ct $ct:ty;)*) => {$(
        impl Kem for $p {
            type DecapsulationKey = KemDecapsulationKey<$p>;
            type EncapsulationKey = EncapsulationKey<$p>;
            type SharedKeySize = U32;
            type CiphertextSize = $ct;
        }

        impl Decapsulator for KemDecapsulationKey<$p> {
            type Kem = $p;

            fn encapsulation_key(&self) -> &EncapsulationKey<$p> {
                &self.ek
            }
        }

        impl Decapsulate for KemDecapsulationKey<$p> {
            /// ML-KEM.Decaps: never fails (implicit rejection), constant time.
            fn decapsulate(&self, ct: &::kem::Ciphertext<$p>) -> ::kem::SharedKey<$p> {
                let ct = super::fixed_len(Ciphertext::<$p>::from_bytes(ct.as_slice()));
                Array(*self.dk.decapsulate(&ct).as_bytes())
            }
        }

        /// The encoded key (FIPS 203 `ek`).
        impl KeySizeUser for EncapsulationKey<$p> {
            type KeySize = $ek;
        }

        /// Parses `ek` with the FIPS 203 §7.2 modulus check; a key that fails it is `InvalidKey`.
        impl TryKeyInit for EncapsulationKey<$p> {
            fn new(key: &Key<Self>) -> Result<Self, InvalidKey> {
                EncapsulationKey::from_bytes(key.as_slice()).map_err(|_| InvalidKey)
            }
        }

        impl KeyExport for EncapsulationKey<$p> {
            fn to_bytes(&self) -> Key<Self> {
                let mut out = Key::<Self>::default();
                out.copy_from_slice(self.as_bytes());
                out
            }
        }

        impl Encapsulate for EncapsulationKey<$p> {
            type Kem = $p;

            /// ML-KEM.Encaps with the 32-byte message `m` from `rng`.
            fn encapsulate_with_rng<R>(&self, rng: &mut R) -> (::kem::Ciphertext<$p>, ::kem::SharedKey<$p>)
            where
                R: CryptoRng + ?Sized,
            {
                let mut m = [0u8; 32];
                rng.fill_bytes(&mut m);
                let (ct, ss) = self.encapsulate_deterministic(&m);
                m.zeroize();
                let mut c = ::kem::Ciphertext::<$p>::default();
                c.copy_from_slice(ct.as_bytes());
                (c, Array(*ss.as_bytes()))
            }
        }
    )*};
}

rustcrypto_kem! {
    MlKem512: ek U800, ct U768;
    MlKem768: ek U1184, ct U1088;
    MlKem1024: ek U1568, ct U1568;
}
