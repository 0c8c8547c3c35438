//! Helpers shared by the NATS test files: identities, a key server, a plain client that sees the wire, and a
//! round trip through the server.
#![allow(dead_code)]

use futures_util::StreamExt;
use pqkit_bus::nats::{KeyServer, KeyServerHandle, NatsOptions};
use pqkit_bus::{Identity, Policy};
use std::time::Duration;

pub fn ident(name: &str, seed: u8) -> Identity {
    Identity::from_seed(name, &[seed; 32]).unwrap()
}

pub async fn key_server(url: &str, policy: Policy) -> KeyServerHandle {
    KeyServer::new(ident("keys", 200), policy).serve(url).await.unwrap()
}

/// A plain async-nats client: what the NATS server (or anyone on the wire) sees and can inject.
pub async fn plain(url: &str) -> async_nats::Client {
    async_nats::connect(url).await.unwrap()
}

pub const T: Duration = Duration::from_secs(5);

/// Agent options opted out of sender authentication: for the tests of what the AEAD, the replay windows and
/// durable delivery do on their own (no checkpoints on the wire or in the streams, nothing held for one).
pub fn opted_out() -> NatsOptions {
    NatsOptions { sender_auth: false, ..NatsOptions::default() }
}

/// Returns once the server has processed everything `wire` sent before (a round trip through the server on
/// that connection; `flush` only empties the client's socket buffer, so a message another connection sends
/// next could otherwise overtake what `wire` injected: seen under load).
pub async fn sync(wire: &async_nats::Client) {
    let probe = wire.new_inbox();
    let mut s = wire.subscribe(probe.clone()).await.unwrap();
    wire.publish(probe, Vec::new().into()).await.unwrap();
    wire.flush().await.unwrap();
    tokio::time::timeout(T, s.next()).await.unwrap().unwrap();
}
