//! A Rust agent asking questions over NATS: each question goes out as a sealed request, and the first sealed
//! reply is printed with the id of the agent that answered. Any agent subscribed to the subject can answer, in
//! Rust or in Python (`bindings/python/examples/bus_responder.py`).
//!
//! `cargo run -p pqkit-bus --features nats --example nats_ask -- URL IDENTITY-FILE KEY-SERVER-ID SUBJECT QUESTION...`
//!
//! IDENTITY-FILE is an agent identity from `pqkit keygen --alg agent`; KEY-SERVER-ID is printed by
//! `pqkit bus keyserver`. Prints `<answerer id> <reply>` per question.

use pqkit_bus::nats::NatsAgent;
use pqkit_bus::{AgentId, Identity};
use std::time::Duration;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn hex(s: &str) -> Res<Vec<u8>> {
    let s = s.trim();
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return Err(format!("not hex: {s:?}").into());
    }
    (0..s.len()).step_by(2).map(|i| Ok(u8::from_str_radix(&s[i..i + 2], 16)?)).collect()
}

/// Reads the identity file that `pqkit keygen --alg agent` writes.
fn read_identity(path: &str) -> Res<Identity> {
    Ok(Identity::from_key_file(&std::fs::read(path)?)?)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, identity, key_server, subject, questions @ ..] = args.as_slice() else {
        return Err("usage: nats_ask URL IDENTITY-FILE KEY-SERVER-ID SUBJECT QUESTION...".into());
    };
    let key_server = AgentId(hex(key_server)?.try_into().map_err(|_| "the key server id is 16 bytes")?);
    // The handshake authenticates both ends: this identity to the key server, and the pinned key server to us.
    let agent = NatsAgent::connect(url, &read_identity(identity)?, key_server).await?;
    for q in questions {
        let reply = agent.request(subject, q.as_bytes(), Duration::from_secs(5)).await?;
        println!("{} {}", reply.sender(), String::from_utf8_lossy(reply.payload()));
    }
    Ok(())
}
