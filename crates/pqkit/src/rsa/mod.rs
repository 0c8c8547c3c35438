//! RSA (RFC 8017, FIPS 186-5): 2048-, 3072- and 4096-bit keys; RSASSA-PSS and RSASSA-PKCS1-v1_5 signatures;
//! RSAES-OAEP and RSAES-PKCS1-v1_5 decryption with implicit rejection.
//!
//! Layout (one file per concern):
//! - `bigint` / `mont`: the fixed-size big-integer core (Montgomery arithmetic, constant-time exponentiation)
//!   and its backends: `x86_64` (BMI2/ADX `mulx` rows) and `ifma` (AVX-512 IFMA, radix 2^52, both CRT
//!   exponentiations in one loop);
//! - `prime`: FIPS 186-5 probable-prime generation;
//! - `key`: [`RsaPublicKey`] and [`RsaPrivateKey`]: generation, import from components, the key check, and the
//!   raw RSA operations (the private one with CRT, blinding and a check against the public one);
//! - `pss`, `pkcs1v15`, `oaep`: the padding schemes;
//! - `encoding`: PKCS#1, PKCS#8 and SubjectPublicKeyInfo, DER and PEM.

mod bigint;
mod digest;
pub mod encoding;
#[cfg(target_arch = "x86_64")]
mod ifma;
mod key;
mod mont;
pub mod oaep;
pub mod pkcs1v15;
mod prime;
pub mod pss;
#[cfg(target_arch = "x86_64")]
mod x86_64;

pub use digest::HashAlg;
pub use key::{RsaPrivateKey, RsaPublicKey};
#[doc(hidden)]
pub use mont::Backend;
