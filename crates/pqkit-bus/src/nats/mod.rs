//! The NATS transport (feature `nats`): agents in many processes and machines, over a NATS server or
//! cluster, with the server seeing only sealed envelopes. Design and what the server still learns:
//! `docs/bus.md` §9.
//!
//! - A [`KeyServer`] (one process, any machine that reaches NATS) holds the [`Policy`](crate::Policy) and the
//!   topic epoch secrets. Agents run the same authenticated hybrid handshake with it as with the in-process broker
//!   ([`crate::handshake`]), carried in NATS requests, and then ask it for keys over the resulting session.
//! - A [`NatsAgent`] publishes envelopes (the v1 wire format of [`crate::envelope`], kind `publish`) sealed under
//!   its own per-topic sender key straight onto the NATS subject of the topic; subscribers fetch the sender's
//!   key for that topic and epoch from the key server, which grants it only if the policy lets the subscriber
//!   subscribe to the topic and the sender publish on it. Priority, sender and sequence travel in the
//!   authenticated header.
//! - A producer that keeps to one subject takes a [`NatsPublisher`] ([`NatsAgent::publisher`]): key, checkpoint
//!   rule and associated data resolved once, then each message is a seal and a queue.
//! - Request/reply uses NATS inboxes (`_INBOX.<agent id hex>.<token>`), with NATS "no responders".
//! - Durable topics are JetStream streams: [`NatsAgent::declare_durable`], [`NatsAgent::publish_durable`]
//!   (acknowledged by the server, retried with the same envelope and message id) and
//!   [`NatsAgent::subscribe_durable`] (a durable pull consumer; duplicates removed by stream sequence and by the
//!   envelope's replay window).
//!
//! ```no_run
//! # async fn demo() -> pqkit_bus::Result<()> {
//! use pqkit_bus::nats::{KeyServer, NatsAgent};
//! use pqkit_bus::{Identity, Policy, Priority};
//! let ks = KeyServer::new(Identity::generate("keys")?, Policy::allow_all()).serve("nats://127.0.0.1:4222").await?;
//! let alice = NatsAgent::connect("nats://127.0.0.1:4222", &Identity::generate("alice")?, ks.id()).await?;
//! let bob = NatsAgent::connect("nats://127.0.0.1:4222", &Identity::generate("bob")?, ks.id()).await?;
//! let mut sub = bob.subscribe("greetings.*").await?;
//! alice.publish("greetings.bob", b"hello", Priority::Normal).await?;
//! let m = sub.recv().await?;
//! assert_eq!((m.payload(), m.sender()), (&b"hello"[..], alice.id()));
//! # Ok(()) }
//! ```
//!
//! Each file owns one part and imports only the parts below it: `wire` (what the key server and the agents
//! share), `ksfile` (the key server's state file), `keyserver`, `keys` (what an agent holds), `inner` (the agent's shared state and operations), the
//! handles `publisher`, `subscription` and `durable`, and `agent` ([`NatsAgent`]) at the top.

mod agent;
mod durable;
mod inner;
mod keys;
mod keyserver;
mod ksfile;
mod publisher;
mod subscription;
mod wire;

pub use agent::NatsAgent;
pub use durable::DurableSubscription;
pub use keys::NatsOptions;
pub use keyserver::{KeyServer, KeyServerHandle, KeyServerMetrics};
pub use publisher::NatsPublisher;
pub use subscription::NatsSubscription;
pub use wire::{CONTROL_PREFIX, SUBSCRIPTION_CAPACITY};
