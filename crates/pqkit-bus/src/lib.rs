//! # pqkit-bus
//!
//! An in-process message bus for cooperating agents with post-quantum security on by default. Design, threat
//! model and wire format: `docs/bus.md`.
//!
//! - **Agents** have a name and a hybrid identity (ML-DSA-65 + Ed25519, [`Identity`]). Connecting runs an
//!   authenticated hybrid handshake (ML-KEM-768 + X25519, [`handshake`]) with the broker ([`Bus`]).
//! - **Subjects** are NATS-style (`orders.eu.new`; patterns `orders.*.new`, `orders.>`), see [`subject`].
//! - **Publish / subscribe / unsubscribe / request-reply**, blocking and async.
//! - **Priorities**: four levels ([`Priority`]), priority order per subscriber, FIFO within a level, bounded
//!   starvation ([`queue`]).
//! - **Back-pressure** per subscription: [`Backpressure::Block`], [`Backpressure::DropOldest`],
//!   [`Backpressure::Fail`]; every drop is counted ([`Metrics`]).
//! - **Sealed envelopes** ([`envelope`]): AES-256-GCM under the sender's own key to the broker, then under a
//!   key pairwise with each subscriber; sender, sequence and priority authenticated; replay windows; key
//!   rotation by count and age with old keys erased. Plain mode only by [`BusBuilder::plain`].
//!
//! ```
//! use pqkit_bus::{Bus, Identity, Policy, Priority};
//! let bus = Bus::new(Policy::allow_all())?;
//! let alice = bus.connect(&Identity::generate("alice")?)?;
//! let bob = bus.connect(&Identity::generate("bob")?)?;
//! let mut sub = bob.subscribe("greetings.*")?;
//! alice.publish("greetings.bob", b"hello", Priority::Normal)?;
//! let m = sub.recv()?;
//! assert_eq!(m.payload(), b"hello");
//! assert_eq!(m.sender(), alice.id());
//! # Ok::<(), pqkit_bus::Error>(())
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod bus;
#[cfg(feature = "nats")]
pub mod checkpoint;
pub mod envelope;
pub mod handshake;
pub mod identity;
#[cfg(feature = "nats")]
pub mod nats;
pub mod policy;
mod priority;
pub mod queue;
pub mod subject;
mod window;

pub use bus::{
    Agent, Backpressure, Bus, BusBuilder, MAX_PUBLISHERS, Message, MessageRef, Metrics, Publisher, SubOptions,
    Subscription,
};
pub use identity::{AgentId, Identity, PublicIdentity};
pub use policy::Policy;
pub use queue::Priority;

use std::fmt;

/// Shorthand for `Result<T, pqkit_bus::Error>`.
pub type Result<T> = std::result::Result<T, Error>;

/// What went wrong. No variant carries key material.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A pqkit primitive failed (bad key encoding, OS randomness, ...).
    Crypto(pqkit::Error),
    /// A subject or pattern is not valid.
    InvalidSubject {
        /// The subject (at most its first 64 characters).
        subject: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An agent name is empty, longer than 64 bytes, or holds control characters.
    InvalidName,
    /// A payload is larger than [`envelope::MAX_PAYLOAD`].
    PayloadTooLarge {
        /// Its length.
        len: usize,
    },
    /// An envelope is truncated or malformed.
    Malformed {
        /// What is wrong.
        reason: &'static str,
    },
    /// An envelope's tag does not verify: forged, modified, or sealed under another key.
    AuthFailed,
    /// An envelope's sequence number was already seen or is below the replay window.
    Replayed {
        /// The sequence number.
        seq: u64,
    },
    /// An envelope is sealed under an epoch key that has been rotated out and erased.
    Expired {
        /// Its epoch.
        epoch: u32,
    },
    /// No key is known for the envelope's sender, subscription or epoch.
    UnknownKey,
    /// The policy does not allow this.
    Unauthorised {
        /// `connect`, `publish` or `subscribe`.
        action: &'static str,
        /// The subject or pattern (empty for `connect`).
        subject: String,
    },
    /// Subscriptions with the `Fail` policy were full; every other subscriber got the message.
    QueueFull {
        /// The subject published.
        subject: String,
        /// How many subscriptions refused it.
        full: usize,
    },
    /// The subscription was unsubscribed or the bus was dropped.
    Closed,
    /// A request reached no subscriber.
    NoResponders {
        /// The subject of the request.
        subject: String,
    },
    /// A receive or request timed out.
    Timeout,
    /// An agent holds more than [`MAX_PUBLISHERS`] live publisher handles on one subject
    /// (each handle owns a sequence stream of the sender key).
    TooManyPublishers {
        /// The subject.
        subject: String,
    },
    /// Bytes are not an agent identity file (see [`identity::key_file`]).
    KeyFile {
        /// Which line is at fault (never the seed).
        reason: &'static str,
    },
    /// The handshake failed.
    Handshake {
        /// Why.
        reason: &'static str,
    },
    /// The NATS transport failed (connection, request, JetStream); nothing was delivered unauthenticated.
    Transport {
        /// The transport's message.
        reason: String,
    },
    /// A key server's state file cannot be read or written (never names a secret).
    StateFile {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

impl From<pqkit::Error> for Error {
    fn from(e: pqkit::Error) -> Self {
        Error::Crypto(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Crypto(e) => write!(f, "pqkit-bus: {e}"),
            Error::InvalidSubject { subject, reason } => write!(f, "pqkit-bus: invalid subject `{subject}`: {reason}"),
            Error::InvalidName => f.write_str("pqkit-bus: agent names are 1 to 64 bytes without control characters"),
            Error::PayloadTooLarge { len } => {
                write!(f, "pqkit-bus: payload of {len} bytes is larger than {} bytes", envelope::MAX_PAYLOAD)
            }
            Error::Malformed { reason } => write!(f, "pqkit-bus: malformed envelope: {reason}"),
            Error::AuthFailed => f.write_str("pqkit-bus: envelope does not authenticate (forged or wrong key)"),
            Error::Replayed { seq } => write!(f, "pqkit-bus: envelope sequence {seq} replayed or outside the window"),
            Error::Expired { epoch } => write!(f, "pqkit-bus: envelope key epoch {epoch} has expired"),
            Error::UnknownKey => f.write_str("pqkit-bus: no key for the envelope's sender, subscription or epoch"),
            Error::Unauthorised { action, subject } => {
                write!(f, "pqkit-bus: the policy does not allow {action} `{subject}`")
            }
            Error::QueueFull { subject, full } => {
                write!(f, "pqkit-bus: {full} subscription queue(s) full for `{subject}` (policy Fail)")
            }
            Error::Closed => f.write_str("pqkit-bus: the subscription is closed"),
            Error::NoResponders { subject } => write!(f, "pqkit-bus: no subscriber for request on `{subject}`"),
            Error::Timeout => f.write_str("pqkit-bus: timed out"),
            Error::TooManyPublishers { subject } => write!(
                f,
                "pqkit-bus: more than {} live publisher handles of one agent on `{subject}`",
                crate::MAX_PUBLISHERS
            ),
            Error::KeyFile { reason } => write!(f, "pqkit-bus: not an agent identity file: {reason}"),
            Error::Handshake { reason } => write!(f, "pqkit-bus: handshake failed: {reason}"),
            Error::Transport { reason } => write!(f, "pqkit-bus: NATS transport: {reason}"),
            Error::StateFile { path, reason } => write!(f, "pqkit-bus: key-server state file {path}: {reason}"),
        }
    }
}

impl std::error::Error for Error {}
