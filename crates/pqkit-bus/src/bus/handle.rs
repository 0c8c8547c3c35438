//! The [`Bus`] handle and its [`BusBuilder`]: building a broker with its policy and limits, connecting
//! agents, and reading the broker's metrics.

use super::agent::Agent;
use super::config::{Counters, IdHash, Metrics, lock};
use super::publisher::AgentCore;
use super::session::AgentSession;
use super::state::{BrokerSession, Inner};
use crate::handshake;
use crate::identity::{Identity, PublicIdentity};
use crate::policy::Policy;
use crate::{Error, Result};
use pqkit::rng::ChaCha20Rng;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use zeroize::Zeroizing;

/// Builds a [`Bus`].
pub struct BusBuilder {
    pub(super) policy: Policy,
    pub(super) sealed: bool,
    pub(super) capacity: usize,
    pub(super) rotate_after_messages: u64,
    pub(super) rotate_after: Duration,
    pub(super) identity: Option<Identity>,
}

impl std::fmt::Debug for BusBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusBuilder").field("sealed", &self.sealed).field("capacity", &self.capacity).finish()
    }
}

impl BusBuilder {
    /// **Plain mode**: no handshake crypto, no sealing; the policy still applies to claimed identities. Only
    /// for measuring the cost of security, never across a trust boundary.
    pub fn plain(mut self) -> Self {
        self.sealed = false;
        self
    }
    /// Default queue capacity of subscriptions (default 65 536).
    pub fn capacity(mut self, n: usize) -> Self {
        self.capacity = n.max(1);
        self
    }
    /// Rotate a key after this many messages under it (default 2^24, at most 2^39).
    pub fn rotate_after_messages(mut self, n: u64) -> Self {
        // Capped so a publisher's 40-bit stream counter is never reached under one key.
        self.rotate_after_messages = n.clamp(1, 1 << 39);
        self
    }
    /// Rotate a key after this age (default 10 minutes; checked every 1024 messages and at each grant).
    pub fn rotate_after(mut self, d: Duration) -> Self {
        self.rotate_after = d;
        self
    }
    /// The broker's identity (default: a fresh one named `broker`).
    pub fn identity(mut self, id: Identity) -> Self {
        self.identity = Some(id);
        self
    }
    /// Builds the bus.
    pub fn build(self) -> Result<Bus> {
        let identity = match self.identity {
            Some(i) => i,
            None => Identity::generate("broker")?,
        };
        let mut seed = Zeroizing::new([0u8; 32]);
        pqkit::rng::fill_os(seed.as_mut())?;
        Ok(Bus {
            inner: Arc::new(Inner {
                sealed: self.sealed,
                identity,
                policy: self.policy,
                capacity: self.capacity,
                rotate_msgs: self.rotate_after_messages,
                rotate_age: self.rotate_after,
                subs: RwLock::new(HashMap::with_hasher(IdHash)),
                gen_: AtomicU64::new(1),
                next_sub: AtomicU64::new(1),
                topics: Mutex::new(HashMap::new()),
                slots: Mutex::new(HashMap::new()),
                sessions: Mutex::new(HashMap::new()),
                rng: Mutex::new(ChaCha20Rng::from_key(*seed)),
                counters: Counters::default(),
            }),
        })
    }
}

/// The in-process broker. Cheap to clone (all clones are the same bus).
#[derive(Clone)]
pub struct Bus {
    pub(super) inner: Arc<Inner>,
}

impl std::fmt::Debug for Bus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bus")
            .field("sealed", &self.inner.sealed)
            .field("identity", self.inner.identity.public())
            .finish()
    }
}

impl Bus {
    /// A sealed bus with `policy` and the defaults.
    pub fn new(policy: Policy) -> Result<Bus> {
        Self::builder(policy).build()
    }

    /// A builder, sealed by default.
    pub fn builder(policy: Policy) -> BusBuilder {
        BusBuilder {
            policy,
            sealed: true,
            capacity: 1 << 16,
            rotate_after_messages: 1 << 24,
            rotate_after: Duration::from_secs(600),
            identity: None,
        }
    }

    /// Whether messages are sealed (false only in explicit plain mode).
    pub fn is_sealed(&self) -> bool {
        self.inner.sealed
    }

    /// The broker's public identity (agents pin it in the handshake).
    pub fn identity(&self) -> &PublicIdentity {
        self.inner.identity.public()
    }

    /// Connects an agent: runs the authenticated handshake (sealed mode) and checks the policy.
    pub fn connect(&self, identity: &Identity) -> Result<Agent> {
        let inner = &self.inner;
        let session = if inner.sealed {
            let (st, m1) = handshake::initiate()?;
            let (rs, m2) = handshake::respond(&inner.identity, &m1)?;
            let (ka, m3) = st.finish_pinned(identity, &m2, inner.identity.public())?;
            let (kb, peer) = rs.finish(&m3)?;
            if !inner.policy.knows(&peer.id()) {
                return inner.counted(Err(Error::Unauthorised { action: "connect", subject: String::new() }));
            }
            let conn = *inner.random::<16>();
            let bs = Arc::new(BrokerSession { send: kb.send, conn });
            lock(&inner.sessions).insert(peer.id(), bs.clone());
            Some((Arc::new(AgentSession { recv: ka.recv }), bs))
        } else {
            if !inner.policy.knows(&identity.id()) {
                return inner.counted(Err(Error::Unauthorised { action: "connect", subject: String::new() }));
            }
            None
        };
        Ok(Agent {
            core: Arc::new(AgentCore {
                inner: inner.clone(),
                public: identity.public().clone(),
                session: session.as_ref().map(|s| s.0.clone()),
                broker_session: session.map(|s| s.1),
                sends: Mutex::new(HashMap::new()),
                pubs: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// Feeds one publish envelope from a transport (the wire form of [`Publisher::seal`](crate::Publisher::seal)) to
    /// the broker: parsed, authenticated under the sender's key, replay-checked and routed. Every rejection is counted
    /// in [`metrics`](Self::metrics) and returned; nothing unauthenticated is delivered. Returns the number of
    /// subscriptions reached.
    pub fn ingest(&self, envelope: &[u8]) -> Result<usize> {
        self.inner.ingest(envelope)
    }

    /// Live subscriptions.
    pub fn subscription_count(&self) -> usize {
        self.inner.subs.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// A snapshot of the counters.
    pub fn metrics(&self) -> Metrics {
        let i = &self.inner;
        let c = &i.counters;
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mut m = Metrics {
            published: 0,
            delivered: r(&c.retired_delivered),
            received: r(&c.retired_received),
            dropped: r(&c.retired_dropped),
            refused: r(&c.retired_refused),
            rejected_malformed: r(&c.malformed),
            rejected_auth: r(&c.auth_failed),
            rejected_replayed: r(&c.replayed),
            rejected_expired: r(&c.expired),
            rejected_unknown_key: r(&c.unknown_key),
            rejected_unauthorised: r(&c.unauthorised),
            rejected_unsigned: 0,
        };
        for s in lock(&i.slots).values() {
            let h = lock(&s.handles);
            m.published += s.published.load(Ordering::Relaxed);
            m.published += h.iter().map(|c| c.load(Ordering::Relaxed)).sum::<u64>();
        }
        for s in i.subs.read().unwrap_or_else(|e| e.into_inner()).values() {
            let st = lock(&s.state);
            m.delivered += st.delivered;
            m.delivered += st.lanes.iter().map(|l| lock(&l.st).unfolded).sum::<u64>();
            m.dropped += st.dropped;
            m.refused += st.refused;
            m.received += s.received.load(Ordering::Relaxed);
        }
        m
    }
}
