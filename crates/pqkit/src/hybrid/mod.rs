//! Hybrid post-quantum/traditional KEMs: ML-KEM-768 combined with X25519.
//!
//! - [`x25519mlkem768`]: **X25519MLKEM768**, the TLS 1.3 key-exchange group (draft-ietf-tls-ecdhe-mlkem,
//!   group 0x11EC): the client's key share is the ML-KEM-768 encapsulation key followed by an X25519 public
//!   key (1184 + 32 bytes), the server's share is the ML-KEM-768 ciphertext followed by its X25519 public key
//!   (1088 + 32 bytes), and the shared secret is the ML-KEM secret followed by the X25519 secret (32 + 32
//!   bytes), to be fed to the TLS key schedule. An all-zero X25519 result is an error, as TLS requires.
//! - [`xwing`]: **X-Wing** (draft-connolly-cfrg-xwing-kem-10; unchanged since -06 in the construction and
//!   the test vectors): a 32-byte seed expands with SHAKE256 into an ML-KEM-768 and an X25519 key pair; the
//!   shared secret is `SHA3-256(ss_M || ss_X || ct_X || pk_X || "\.//^\")`. X-Wing is a KEM in its own
//!   right (HPKE KEM 0x647A, see [`crate::hpke`]); decapsulation never fails.
//!
//! Both are built from pqkit's own [`crate::mlkem`] and [`crate::ec::x25519`], so they run on the fastest
//! backends of those families and are constant time wherever those are. Secret keys and shared secrets
//! zeroize on drop and never show in `Debug`.

/// A public, fixed-length encoding `pub struct $name([u8; $len])` of a module whose algorithm name is its
/// `ALG`: `from_bytes` (the only check is the length), `as_bytes`, `AsRef<[u8]>`, and a `Debug` that prints
/// `$debug` only. `$what` names the value in the error and the docs.
macro_rules! public_bytes {
    ($(#[$m:meta])* $name:ident, $len:expr, $what:literal, $debug:literal) => {
        $(#[$m])*
        #[derive(Clone, PartialEq, Eq)]
        pub struct $name([u8; $len]);

        impl $name {
            #[doc = concat!("Parses a ", $what, "; the only check is the length ([`Error::InvalidLength`]).")]
            pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
                Error::check_length(ALG, $what, $len, bytes.len())?;
                let mut c = [0u8; $len];
                c.copy_from_slice(bytes);
                Ok($name(c))
            }

            #[doc = concat!("The encoded ", $what, ".")]
            pub fn as_bytes(&self) -> &[u8; $len] {
                &self.0
            }
        }

        impl AsRef<[u8]> for $name {
            fn as_ref(&self) -> &[u8] {
                &self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str($debug)
            }
        }
    };
}

pub mod x25519mlkem768;
pub mod xwing;

use core::fmt;

/// A 64-byte shared secret (X25519MLKEM768's `ML-KEM secret || X25519 secret`). Zeroized on drop; compared
/// in constant time; `Debug` prints nothing. Feed it to a KDF (the TLS key schedule does), never use it as a
/// key directly.
#[derive(Clone)]
pub struct SharedSecret64(pub(crate) [u8; 64]);

impl SharedSecret64 {
    /// The secret bytes.
    pub fn as_bytes(&self) -> &[u8; 64] {
        &self.0
    }
}

impl PartialEq for SharedSecret64 {
    fn eq(&self, other: &Self) -> bool {
        crate::ct::eq(&self.0, &other.0)
    }
}
impl Eq for SharedSecret64 {}

impl fmt::Debug for SharedSecret64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedSecret64 { .. }")
    }
}

impl zeroize::Zeroize for SharedSecret64 {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

impl Drop for SharedSecret64 {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

impl zeroize::ZeroizeOnDrop for SharedSecret64 {}
