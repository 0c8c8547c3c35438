//! The in-process bus: the broker, agents, publishers and subscriptions.
//!
//! Each file owns one part and imports only the parts below it: `config` (options, counters, helpers), then
//! `state` (the broker's tables and the subscription queues, which reach into each other), `broker` (the
//! broker's operations), `session` (the agent's end of its session), `message`, `publisher` (with the
//! agent's core, which caches publisher handles),
//! `subscription`, `agent`, and `handle` (the [`Bus`] and its builder) at the top.

mod agent;
mod broker;
mod config;
mod handle;
mod message;
mod publisher;
mod session;
mod state;
mod subscription;
#[cfg(test)]
mod tests;

pub use agent::Agent;
pub use config::{Backpressure, Metrics, SubOptions};
pub use handle::{Bus, BusBuilder};
pub use message::{Message, MessageRef};
pub use publisher::Publisher;
pub use state::MAX_PUBLISHERS;
pub(crate) use state::{Body, Route};
pub use subscription::Subscription;
