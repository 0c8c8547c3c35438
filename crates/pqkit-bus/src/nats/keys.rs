//! The keys an agent holds: its options ([`NatsOptions`]), its counters, its session with the key server,
//! its sender keys per topic (each with the stream it publishes in and its checkpoint chain), the checkpoint
//! signing settings, and the receive keys it fetched per sender, topic and epoch.

use super::wire::{HELLO_AAD, ST_OK, ST_UNAUTHORISED, SUBSCRIPTION_CAPACITY, ks_call};
use crate::checkpoint::{Chain, Checkpoints};
use crate::envelope::{self, Kind, TAG_LEN};
use crate::handshake;
use crate::identity::{AgentId, Identity};
use crate::queue::Priority;
use crate::{Error, Result};
use pqkit::aead::{Aead, Aes256Gcm};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// Options of a [`NatsAgent`](crate::nats::NatsAgent).
#[derive(Clone, Copy, Debug)]
pub struct NatsOptions {
    /// Ask the key server for a new epoch after this many messages under one sender key (default 2^24, at most
    /// 2^39).
    pub rotate_after_messages: u64,
    /// How long a durable consumer waits for an acknowledgement before the server redelivers (default 2 s):
    /// also how long a restarted subscriber waits for what its predecessor held unacknowledged.
    pub ack_wait: Duration,
    /// How long [`NatsAgent::publish_durable`](crate::nats::NatsAgent::publish_durable) retries (server down, no
    /// acknowledgement) before it gives up (default 30 s).
    pub durable_retry: Duration,
    /// Messages the NATS client buffers per subscription before it drops them as a slow consumer (core NATS is
    /// at-most-once; default 65,536, async-nats's own default). Raise it for bursty topics with slow readers.
    pub subscription_capacity: usize,
    /// **Sender authentication** (docs/bus.md §9), on by default: every topic this agent publishes on is
    /// covered by signed checkpoints listing each envelope's digest ([`Checkpoints::default`]: `N` = 256,
    /// `T` = 5 ms, unless a [`NatsAgent::sign_checkpoints`](crate::nats::NatsAgent::sign_checkpoints) rule says
    /// otherwise; durable messages too, the checkpoints stored with them), and every subscription, core
    /// ([`NatsAgent::subscribe`](crate::nats::NatsAgent::subscribe)) and durable
    /// ([`NatsAgent::subscribe_durable`](crate::nats::NatsAgent::subscribe_durable), still acknowledging each
    /// message on its own), hands a message over only once a checkpoint signed by its sender lists it
    /// ([`SenderAuth::default`](crate::checkpoint::SenderAuth)). Then no other member of a topic can make this
    /// agent's subscriptions accept a message in a publisher's name. `false` opts out (no checkpoints signed,
    /// messages handed over as soon as they open): lower latency (no wait of up to `T` for the checkpoint) and
    /// more throughput, but any subscriber of a topic can forge messages of its other publishers to this agent.
    pub sender_auth: bool,
}

impl Default for NatsOptions {
    fn default() -> Self {
        NatsOptions {
            rotate_after_messages: 1 << 24,
            ack_wait: Duration::from_secs(2),
            durable_retry: Duration::from_secs(30),
            subscription_capacity: SUBSCRIPTION_CAPACITY,
            sender_auth: true,
        }
    }
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) published: AtomicU64,
    pub(super) received: AtomicU64,
    pub(super) duplicates: AtomicU64,
    pub(super) malformed: AtomicU64,
    pub(super) auth_failed: AtomicU64,
    pub(super) replayed: AtomicU64,
    pub(super) expired: AtomicU64,
    pub(super) unknown_key: AtomicU64,
    pub(super) unauthorised: AtomicU64,
    pub(super) unsigned: AtomicU64,
    pub(super) checkpoints: AtomicU64,
}

pub(super) struct AgentSession {
    pub(super) sid: [u8; 16],
    pub(super) send: Aes256Gcm,
    pub(super) recv: Aes256Gcm,
    pub(super) ctr: u64,
}

impl AgentSession {
    /// Runs the handshake with the key server over NATS requests and confirms the session it names.
    pub(super) async fn handshake(
        client: &async_nats::Client,
        identity: &Identity,
        ks: AgentId,
        url: &str,
    ) -> Result<AgentSession> {
        let bad = |reason| Error::Handshake { reason };
        let (st, m1) = handshake::initiate()?;
        let r = ks_call(client, &ks, "hs1", m1, url).await?;
        let p = &r.payload;
        if p.len() < 17 || p[0] != ST_OK {
            return Err(bad("the key server refused message 1"));
        }
        let (keys, _, m3) = st.finish(identity, &p[17..], Some(ks))?;
        let mut b = p[1..17].to_vec();
        b.extend_from_slice(&m3);
        let r = ks_call(client, &ks, "hs3", b, url).await?;
        let p = &r.payload;
        if p.first() == Some(&ST_UNAUTHORISED) {
            return Err(Error::Unauthorised { action: "connect as", subject: identity.id().to_hex() });
        }
        if p.len() != 1 + 16 + TAG_LEN || p[0] != ST_OK {
            return Err(bad("the key server refused message 3"));
        }
        let sid: [u8; 16] = p[1..17].try_into().map_err(|_| bad("session id"))?;
        let mut aad = HELLO_AAD.to_vec();
        aad.extend_from_slice(&sid);
        keys.recv
            .open(&[0u8; 12], &aad, &p[17..])
            .map_err(|_| bad("the session confirmation does not authenticate"))?;
        Ok(AgentSession { sid, send: keys.send, recv: keys.recv, ctr: 0 })
    }
}

/// A sender key granted for one scope: its epoch, this holder's stream, and the stream's counter.
pub(super) struct SendKey {
    pub(super) epoch: u32,
    pub(super) stream: u32,
    pub(super) aead: Aes256Gcm,
    pub(super) next: AtomicU64,
}

/// The publisher's chain of one checkpointed topic (its lock also keeps seal, chain and send in one order).
pub(super) struct TopicChain {
    pub(super) chain: Chain,
    pub(super) cfg: Checkpoints,
    /// Some message of the pending batch went through JetStream: so does its checkpoint.
    pub(super) durable: bool,
}

impl SendKey {
    /// Seals one envelope (`header || payload sealed || tag`) with sequence number `seq` under `aad`, whose first
    /// bytes are `header`. One allocation, no zero-fill of the payload's room: header, payload, sealed in place,
    /// then the tag.
    #[inline]
    pub(super) fn seal(
        &self,
        seq: u64,
        priority: Priority,
        header: &[u8; envelope::NATS_HEADER_LEN],
        aad: &[u8],
        payload: &[u8],
    ) -> Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(header.len() + payload.len() + TAG_LEN);
        buf.extend_from_slice(header);
        buf.extend_from_slice(payload);
        let body = &mut buf[header.len()..];
        let tag = self.aead.seal_in_place_detached(&envelope::nonce(Kind::Publish, priority, seq), aad, body)?;
        buf.extend_from_slice(&tag);
        Ok(buf)
    }
}

/// The sender keys by key scope, and the last one looked up: a publisher that keeps to one scope finds its key
/// by one comparison instead of hashing the subject on every publish.
#[derive(Default)]
pub(super) struct SendKeys {
    pub(super) map: HashMap<String, Arc<SendKey>>,
    /// The scope and key of the last lookup that found one (the `String` is reused: no allocation per switch).
    pub(super) last: Option<(String, Arc<SendKey>)>,
    /// The NATS client's subject of the last publish: handed to the client again while the subject repeats (a
    /// reference count on shared bytes instead of allocating and copying the subject per publish).
    pub(super) subject: Option<async_nats::Subject>,
}

impl SendKeys {
    pub(super) fn get(&mut self, scope: &str) -> Option<Arc<SendKey>> {
        if let Some((s, k)) = &self.last
            && s == scope
        {
            return Some(k.clone());
        }
        let k = self.map.get(scope)?.clone();
        match &mut self.last {
            Some((s, last)) => {
                s.clear();
                s.push_str(scope);
                *last = k.clone();
            }
            None => self.last = Some((scope.to_string(), k.clone())),
        }
        Some(k)
    }
    /// The client's subject for `subject`, shared with the last publish when it is the same.
    pub(super) fn subject(&mut self, subject: &str) -> async_nats::Subject {
        match &self.subject {
            Some(s) if s.as_str() == subject => s.clone(),
            _ => {
                let s = async_nats::Subject::from(subject);
                self.subject = Some(s.clone());
                s
            }
        }
    }
    pub(super) fn insert(&mut self, scope: &str, k: Arc<SendKey>) {
        if let Some((s, last)) = &mut self.last
            && s == scope
        {
            *last = k.clone();
        }
        self.map.insert(scope.to_string(), k);
    }
}

/// Checkpoint rules (patterns that opt in) and the running chains per topic.
#[derive(Default)]
pub(super) struct Signing {
    pub(super) rules: Vec<(String, Checkpoints)>,
    /// The checkpoint settings of every topic no rule covers ([`NatsOptions::sender_auth`]; `None`: opted out).
    pub(super) default: Option<Checkpoints>,
    pub(super) chains: HashMap<String, Arc<tokio::sync::Mutex<TopicChain>>>,
    /// Subjects published on that no rule covers (emptied when a rule is added, and past `MAX_KEYS`).
    pub(super) unchained: std::collections::HashSet<String>,
    /// The last subject looked up and its answer (`None`: no rule covers it); forgotten when a rule is added.
    /// A publisher that keeps to one subject finds it by one comparison instead of a hash per publish.
    pub(super) last: Option<(String, Option<Arc<tokio::sync::Mutex<TopicChain>>>)>,
}

impl Signing {
    /// Once there are `max` chains, forgets those that nothing else holds (no publisher handle, no running
    /// timer pass) and that have nothing pending: a later publish on their topic starts a new chain, and its
    /// sequence numbers go on (they belong to the sender key, not the chain).
    pub(super) fn prune(&mut self, max: usize) {
        if self.chains.len() < max {
            return;
        }
        self.last = None;
        self.chains.retain(|_, c| Arc::strong_count(c) > 1 || c.try_lock().map_or(true, |g| g.chain.pending() > 0));
    }

    pub(super) fn remember(&mut self, subject: &str, c: Option<Arc<tokio::sync::Mutex<TopicChain>>>) {
        match &mut self.last {
            Some((s, last)) => {
                s.clear();
                s.push_str(subject);
                *last = c;
            }
            None => self.last = Some((subject.to_string(), c)),
        }
    }
}

/// A key to open one sender stream with, and the sender the key server granted that stream to.
pub(super) struct RecvKey {
    pub(super) sender: AgentId,
    pub(super) aead: Aes256Gcm,
}

/// Receive keys by key scope, then (epoch, stream): looked up by `&str` without allocating.
pub(super) type RecvKeys = HashMap<String, HashMap<(u32, u32), Arc<RecvKey>>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_map_forgets_only_idle_chains_that_nothing_else_holds() {
        let new = || {
            Arc::new(tokio::sync::Mutex::new(TopicChain {
                chain: Chain::new(),
                cfg: Checkpoints::default(),
                durable: false,
            }))
        };
        let mut sg = Signing::default();
        // Held by a publisher handle; with a pending batch; idle (only the map, and the last-lookup cache).
        let held = new();
        sg.chains.insert("held".into(), held.clone());
        let pending = new();
        pending.try_lock().unwrap().chain.push(1, 1, "", b"envelope");
        sg.chains.insert("pending".into(), pending);
        let idle = new();
        sg.chains.insert("idle".into(), idle.clone());
        sg.remember("idle", Some(idle));
        sg.prune(4);
        assert_eq!(sg.chains.len(), 3, "under the bound nothing is forgotten");
        sg.prune(3);
        let mut left: Vec<&str> = sg.chains.keys().map(String::as_str).collect();
        left.sort_unstable();
        assert_eq!(left, ["held", "pending"]);
        assert!(sg.last.is_none(), "the last lookup is forgotten with it");
        drop(held);
    }
}
