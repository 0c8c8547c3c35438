//! The family registry: every family that declares its backends with [`crate::dispatch::backends!`], in a
//! fixed order, and the backend each one chooses on this CPU.
//!
//! The dispatch mechanism ([`crate::dispatch`]) knows instruction sets and CPU features, never the algorithms;
//! this module sits above the families and names them, so that the mechanism stays at the bottom of the crate.
//! `pqkit cpu` and the benchmark reports print [`chosen`].

use crate::dispatch::{BackendSet, Checked};

/// The backend each family chose on this CPU under the cap in force, as (family, backend) names, in a fixed
/// order. For `pqkit cpu` and benchmark reports.
pub fn chosen() -> impl Iterator<Item = (&'static str, &'static str)> {
    fn one<B: BackendSet>() -> (&'static str, &'static str) {
        (B::FAMILY, Checked::<B>::best().get().name())
    }
    let all = [
        one::<crate::chacha::Backend>(),
        one::<crate::kusumi::Backend>(),
        one::<crate::threefish::Backend>(),
        one::<crate::poly1305::Backend>(),
        one::<crate::aes::Backend>(),
        one::<crate::hash::sha2::Backend>(),
        one::<crate::hash::sha2::multi::Backend>(),
        one::<crate::hash::blake2::Backend>(),
        one::<crate::hash::sha3::Backend>(),
        one::<crate::mlkem::Backend>(),
        one::<crate::mldsa::Backend>(),
        one::<crate::ec::curve25519::Backend>(),
        one::<crate::ec::curve25519::multi::Backend>(),
        one::<crate::ec::p256::Backend>(),
        one::<crate::ec::p256::batch::Backend>(),
        one::<crate::ec::secp256k1::Backend>(),
        #[cfg(feature = "alloc")]
        one::<crate::kdf::argon2::Backend>(),
        #[cfg(feature = "alloc")]
        one::<crate::rsa::Backend>(),
    ];
    all.into_iter()
}
