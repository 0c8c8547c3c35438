//! The one error type of pqkit.
//!
//! Every fallible public function returns [`Result<T>`]. Messages name the algorithm, the field and the
//! expected size, e.g. `ChaCha20-Poly1305 key must be 32 bytes, got 31`. No variant ever carries secret
//! material, so errors are safe to log.

use core::fmt;

/// Shorthand for `core::result::Result<T, pqkit::Error>`.
pub type Result<T> = core::result::Result<T, Error>;

/// What went wrong. The enum is non-exhaustive: match on the variants you handle and keep a fallback arm.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// An input had the wrong length (`key`, `nonce`, `tag`, `seed`, `output`, ...).
    InvalidLength {
        /// Algorithm name as the user knows it, e.g. `"XChaCha20-Poly1305"`.
        algorithm: &'static str,
        /// Which input, e.g. `"key"`.
        field: &'static str,
        /// The length that is required.
        expected: Expected,
        /// The length that was given.
        actual: usize,
    },
    /// A tag or signature did not verify. No plaintext was released.
    AuthenticationFailed {
        /// Algorithm name.
        algorithm: &'static str,
    },
    /// The block counter of a stream cipher would pass its maximum; pqkit never wraps a counter.
    CounterExhausted {
        /// Algorithm name.
        algorithm: &'static str,
    },
    /// A message (or seek target) is longer than the algorithm allows under one nonce.
    MessageTooLong {
        /// Algorithm name.
        algorithm: &'static str,
        /// The largest length in bytes that is allowed.
        max: u64,
    },
    /// An encoding (key, ciphertext, signature, header) is malformed.
    InvalidEncoding {
        /// Algorithm or format name.
        algorithm: &'static str,
        /// What was wrong, without any secret content.
        reason: &'static str,
    },
    /// A parameter is out of its allowed range (for example an output length).
    InvalidParameter {
        /// Algorithm name.
        algorithm: &'static str,
        /// What was wrong.
        reason: &'static str,
    },
    /// The operating system's random number generator failed.
    Rng,
    /// A backend was asked for by name that this CPU, under the cap in force ([`crate::cpu::cap`]), cannot
    /// run. Nothing ran.
    BackendUnavailable {
        /// The family, e.g. `"ChaCha"`.
        algorithm: &'static str,
        /// The backend's name, e.g. `"Avx512"`.
        backend: &'static str,
        /// The features it needs that are not in force.
        missing: crate::cpu::Features,
    },
}

/// The length an [`Error::InvalidLength`] asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Exactly this many bytes.
    Exactly(usize),
    /// At least this many bytes.
    AtLeast(usize),
    /// At most this many bytes.
    AtMost(usize),
    /// One of two lengths (e.g. a 12- or 24-byte nonce).
    OneOf(usize, usize),
}

impl Error {
    /// Convenience constructor for the common "must be exactly N bytes" case.
    pub const fn length(algorithm: &'static str, field: &'static str, expected: usize, actual: usize) -> Self {
        Error::InvalidLength { algorithm, field, expected: Expected::Exactly(expected), actual }
    }

    /// Returns `Ok(())` if `actual == expected`, else the [`Error::InvalidLength`] for it.
    pub const fn check_length(
        algorithm: &'static str,
        field: &'static str,
        expected: usize,
        actual: usize,
    ) -> Result<()> {
        if actual == expected { Ok(()) } else { Err(Self::length(algorithm, field, expected, actual)) }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Expected::Exactly(n) => write!(f, "{n} bytes"),
            Expected::AtLeast(n) => write!(f, "at least {n} bytes"),
            Expected::AtMost(n) => write!(f, "at most {n} bytes"),
            Expected::OneOf(a, b) => write!(f, "{a} or {b} bytes"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidLength { algorithm, field, expected, actual } => {
                write!(f, "{algorithm} {field} must be {expected}, got {actual}")
            }
            Error::AuthenticationFailed { algorithm } => write!(
                f,
                "{algorithm} authentication failed: wrong key, nonce or associated data, or the data was modified"
            ),
            Error::CounterExhausted { algorithm } => {
                write!(f, "{algorithm} block counter exhausted: no keystream is left under this key and nonce")
            }
            Error::MessageTooLong { algorithm, max } => {
                write!(f, "{algorithm} message too long: at most {max} bytes under one nonce")
            }
            Error::InvalidEncoding { algorithm, reason } => write!(f, "{algorithm} invalid encoding: {reason}"),
            Error::InvalidParameter { algorithm, reason } => write!(f, "{algorithm} invalid parameter: {reason}"),
            Error::Rng => f.write_str("the operating system's random number generator failed"),
            Error::BackendUnavailable { algorithm, backend, missing } => write!(
                f,
                "{algorithm} backend {backend} cannot run here: it needs {missing}, which this CPU lacks or the \
                 PQKIT_CPU cap removes"
            ),
        }
    }
}

impl core::error::Error for Error {}

#[cfg(feature = "std")]
impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        let kind = match e {
            Error::AuthenticationFailed { .. } | Error::InvalidEncoding { .. } => std::io::ErrorKind::InvalidData,
            _ => std::io::ErrorKind::InvalidInput,
        };
        std::io::Error::new(kind, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate alloc;
    use alloc::string::ToString;

    #[test]
    fn messages_name_algorithm_field_and_sizes() {
        let e = Error::length("ChaCha20-Poly1305", "key", 32, 31);
        assert_eq!(e.to_string(), "ChaCha20-Poly1305 key must be 32 bytes, got 31");
        let e =
            Error::InvalidLength { algorithm: "ChaCha20", field: "nonce", expected: Expected::OneOf(8, 12), actual: 7 };
        assert_eq!(e.to_string(), "ChaCha20 nonce must be 8 or 12 bytes, got 7");
        assert!(Error::check_length("X", "tag", 16, 15).is_err());
        assert!(Error::check_length("X", "tag", 16, 16).is_ok());
        assert!(
            Error::AuthenticationFailed { algorithm: "XChaCha20-Poly1305" }
                .to_string()
                .starts_with("XChaCha20-Poly1305 authentication failed")
        );
    }
}
