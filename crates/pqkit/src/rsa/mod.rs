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
#[cfg(target_arch = "x86_64")]
mod bmi2_adx;
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

pub use digest::HashAlg;
pub use key::{RsaPrivateKey, RsaPublicKey};

crate::dispatch::backends! {
    /// An implementation of the RSA Montgomery product and square.
    ///
    /// Crate-internal plumbing, public only so tests and benchmarks can force each backend.
    #[doc(hidden)]
    pub enum Backend for "RSA" {
        /// Portable Rust: 64-bit limbs, `u128` products (CIOS; a dedicated square). The reference.
        Soft: [],
        /// x86_64 BMI2 + ADX: each row of the product and of the reduction is a `mulx` loop with the two carry
        /// chains of `adcx`/`adox`, in `asm!`; the exponentiation's constant-time table read in AVX2 registers.
        Bmi2Adx: [BMI2, ADX, AVX2],
        /// [`Backend::Bmi2Adx`] with the 16-limb reduction (the 1024-bit CRT halves of RSA-2048) as plain rows,
        /// the one routine of every other size, instead of the register window: chosen everywhere but on AMD
        /// Zen 4 and Zen 5. The rows made a 1024-bit constant-time exponentiation 4-5% faster on Zen 3, and an
        /// RSA-2048 private operation 2-3% faster on an Intel Xeon (family 6, model 167), while the window is
        /// 7% faster on Zen 5 (see `bmi2_adx.rs`).
        Bmi2AdxRows: [BMI2, ADX, AVX2] avoid_on [Zen4, Zen5],
        /// AVX-512 IFMA exponentiation in radix 2^52 for 1024-, 1536- and 2048-bit moduli, both CRT halves in one
        /// loop (`ifma.rs`): 256-bit vectors at 1024 bits, where 512-bit ones would carry empty lanes, 512-bit ones
        /// at the larger sizes (the same lanes in half the instructions); products and squares outside the
        /// exponentiation, and other sizes, use `Bmi2Adx`.
        Ifma: [BMI2, ADX, AVX2, AVX512F, AVX512VL, AVX512IFMA],
        /// `Ifma` with 512-bit vectors at every size: half the instructions at 1024 bits too, where the core runs
        /// 512-bit IFMA operations at the 256-bit rate; passed over on Zen 4, which splits them in two.
        Ifma512: [BMI2, ADX, AVX2, AVX512F, AVX512VL, AVX512IFMA] avoid_on [Zen4],
    }
}
