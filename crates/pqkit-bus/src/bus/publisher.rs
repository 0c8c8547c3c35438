//! The [`Publisher`] handle: publishing on one subject with a cached route and its own stream of the
//! sender key, one message or a batch, blocking or async; and the agent's shared core (`AgentCore`), which
//! caches the agent's sender keys and publisher handles and fetches a new sender key when the epoch moves on.

use super::config::lock;
use super::session::{AgentSession, SendKey, Stream, open_grant};
use super::state::{BrokerSession, Inner, Outgoing, Route, SenderSlot, SubLink, SubShared, TopicState};
use crate::envelope::{self, FIXED_LEN, Header, Kind, MAX_PAYLOAD, TAG_LEN};
use crate::identity::PublicIdentity;
use crate::queue::Priority;
use crate::subject::validate_subject;
use crate::{Error, Result};
use pqkit::aead::{Aead, Aes256Gcm};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A handle that publishes on one subject. Not shared between threads: give each producer its own.
pub struct Publisher {
    pub(super) agent: Arc<AgentCore>,
    pub(super) topic: Arc<str>,
    /// The route of this handle's messages without a reply-to (shared by all of them).
    pub(super) plain_route: Arc<Route>,
    /// Messages this handle published in plain mode (this handle is its only writer; see `SenderSlot`).
    pub(super) count: Arc<AtomicU64>,
    pub(super) slot: Arc<SenderSlot>,
    pub(super) key: Option<Stream>,
    pub(super) route_gen: u64,
    pub(super) route: Arc<[Arc<SubShared>]>,
    /// This handle's lane (and, sealed, its delivery stream) in each subscription of `route` (same index).
    pub(super) links: Vec<SubLink>,
    pub(super) buf: Vec<u8>,
}

impl Drop for Publisher {
    fn drop(&mut self) {
        // Fold this handle's count into the slot's, under the lock `metrics` reads both under.
        let mut h = lock(&self.slot.handles);
        h.retain(|c| !Arc::ptr_eq(c, &self.count));
        self.slot.published.fetch_add(self.count.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher").field("topic", &self.topic).finish()
    }
}

impl Publisher {
    /// The subject.
    pub fn subject(&self) -> &str {
        &self.topic
    }

    /// Seals `payload` into a publish envelope (wire form) without sending it: for transports, and for
    /// tests of [`Bus::ingest`](crate::Bus::ingest). Uses one sequence number.
    pub fn seal(&mut self, payload: &[u8], priority: Priority, reply_to: Option<&str>) -> Result<Vec<u8>> {
        self.build(payload, priority, reply_to)?;
        Ok(self.buf.clone())
    }

    /// Builds the envelope into `self.buf`; returns its header length.
    #[inline]
    pub(super) fn build(&mut self, payload: &[u8], priority: Priority, reply_to: Option<&str>) -> Result<usize> {
        if payload.len() > MAX_PAYLOAD {
            return Err(Error::PayloadTooLarge { len: payload.len() });
        }
        if let Some(r) = reply_to {
            validate_subject(r)?;
        }
        let sealed = self.agent.inner.sealed;
        let (kind, epoch, seq) = if sealed {
            let k = self.current_key()?;
            (Kind::Publish, k.key.epoch, k.seq()?)
        } else {
            (Kind::Plain, 0, 0)
        };
        let h = Header {
            kind,
            priority,
            epoch,
            seq,
            sender: self.agent.public.id(),
            sub: 0,
            topic: &self.topic,
            reply: reply_to.unwrap_or(""),
        };
        let hl = h.len();
        self.buf.clear();
        h.append(&mut self.buf);
        self.buf.extend_from_slice(payload);
        if let Some(k) = &self.key
            && sealed
        {
            let (aad, body) = self.buf.split_at_mut(hl);
            let tag = k.key.aead.seal_in_place_detached(&envelope::nonce(kind, priority, seq), aad, body)?;
            self.buf.extend_from_slice(&tag);
        }
        Ok(hl)
    }

    /// The sender key stream of the topic's current epoch (a new grant, policy-checked by the broker, when the
    /// epoch moved).
    #[inline]
    pub(super) fn current_key(&mut self) -> Result<&mut Stream> {
        let cur = self.slot.topic.epoch.load(Ordering::Acquire);
        if self.key.as_ref().is_none_or(|k| k.key.epoch != cur) {
            self.key = None;
            self.key = Some(Stream::take(self.agent.send_key(&self.slot.topic)?, &self.topic)?);
        }
        self.key.as_mut().ok_or(Error::UnknownKey)
    }

    /// Sealed mode, local publish: checks the payload and reply-to, holds the current grant, counts the message
    /// at the broker (rotation) and refreshes the routing cache. No publish envelope is built (docs/bus.md §3,
    /// "Local publishes"): the deliver leg seals for each subscriber.
    #[inline]
    pub(super) fn local_accept(&mut self, payload: &[u8], reply_to: Option<&str>) -> Result<()> {
        if payload.len() > MAX_PAYLOAD {
            return Err(Error::PayloadTooLarge { len: payload.len() });
        }
        if let Some(r) = reply_to {
            validate_subject(r)?;
        }
        let epoch = self.current_key()?.key.epoch;
        let inner = &self.agent.inner;
        inner.counted(inner.accept_local(&self.slot, epoch))?;
        let g = inner.gen_.load(Ordering::Acquire);
        if g != self.route_gen {
            self.route = inner.matching(&self.topic);
            self.route_gen = g;
            // New routes, new streams (the old ones go back to their keys' pools with their counters) and
            // new lanes (the old ones are merged and freed by their subscriptions).
            self.links.clear();
        }
        if self.links.len() != self.route.len() {
            self.links.clear();
            self.links.resize_with(self.route.len(), SubLink::default);
        }
        Ok(())
    }

    /// Broker side of an envelope built by [`build`](Self::build): authenticates it in `self.buf`, refreshes the
    /// routing cache.
    /// Returns the plaintext range.
    #[inline]
    pub(super) fn broker_accept(
        &mut self,
        hl: usize,
        priority: Priority,
        reply_len: usize,
    ) -> Result<std::ops::Range<usize>> {
        let inner = &self.agent.inner;
        let end = if inner.sealed {
            let len = self.buf.len();
            let m = envelope::Meta {
                kind: Kind::Publish,
                priority,
                epoch: u32::from_be_bytes([self.buf[4], self.buf[5], self.buf[6], self.buf[7]]),
                seq: u64::from_be_bytes(self.buf[8..16].try_into().map_err(|_| Error::Malformed { reason: "seq" })?),
                sender: self.agent.public.id(),
                sub: 0,
                topic: FIXED_LEN..FIXED_LEN + self.topic.len(),
                reply: FIXED_LEN + self.topic.len()..hl,
                payload: hl..len - TAG_LEN,
            };
            debug_assert_eq!(m.reply.len(), reply_len);
            inner.accept(&self.slot, &m, &mut self.buf)?;
            len - TAG_LEN
        } else {
            self.count_published(1);
            self.buf.len()
        };
        let g = inner.gen_.load(Ordering::Acquire);
        if g != self.route_gen {
            self.route = inner.matching(&self.topic);
            self.route_gen = g;
            self.links.clear();
        }
        Ok(hl..end)
    }

    /// Counts `n` plain-mode publications: one writer per counter, so a load and a store.
    #[inline]
    pub(super) fn count_published(&self, n: u64) {
        self.count.store(self.count.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    /// The route of a message: the shared one, or a new one with the reply-to (already validated).
    #[inline]
    pub(super) fn route_for(&self, reply_to: Option<&str>) -> Arc<Route> {
        match reply_to {
            None => self.plain_route.clone(),
            Some(r) => {
                Arc::new(Route { topic: self.topic.clone(), sender: self.plain_route.sender, reply: Some(r.into()) })
            }
        }
    }

    /// Publishes one message; returns how many subscriptions it reached. With `Block` subscribers that are
    /// full, waits for room.
    #[inline]
    pub fn publish(&mut self, payload: &[u8], priority: Priority) -> Result<usize> {
        self.publish_with_reply(payload, priority, None)
    }

    /// Publishes with a reply-to subject.
    pub fn publish_with_reply(&mut self, payload: &[u8], priority: Priority, reply_to: Option<&str>) -> Result<usize> {
        if !self.agent.inner.sealed {
            // Plain mode, local path: nothing to seal or check, so no envelope is built.
            if payload.len() > MAX_PAYLOAD {
                return Err(Error::PayloadTooLarge { len: payload.len() });
            }
            if let Some(r) = reply_to {
                validate_subject(r)?;
            }
            // The shared route is lent, not cloned: the queue entry takes the one reference it needs.
            let owned;
            let route = match reply_to {
                None => &self.plain_route,
                Some(_) => {
                    owned = self.route_for(reply_to);
                    &owned
                }
            };
            self.count_published(1);
            let inner = &self.agent.inner;
            let g = inner.gen_.load(Ordering::Acquire);
            if g != self.route_gen {
                self.route = inner.matching(&self.topic);
                self.route_gen = g;
                self.links.clear();
            }
            if self.links.len() != self.route.len() {
                self.links.clear();
                self.links.resize_with(self.route.len(), SubLink::default);
            }
            let out = Outgoing { priority, route, payload };
            return inner.route_lanes(&self.route, &mut self.links, &out);
        }
        self.local_accept(payload, reply_to)?;
        let route = self.route_for(reply_to);
        let out = Outgoing { priority, route: &route, payload };
        self.agent.inner.route_streams(&self.route, &mut self.links, &out)
    }

    /// Publishes several messages of one priority, in order; returns the number of deliveries (messages ×
    /// subscriptions reached).
    ///
    /// Plain mode: each subscription's queue lock is taken once for the whole batch instead of once per
    /// message, and the metrics are counted once; a subscriber sees the batch in order and whole (a concurrent
    /// receiver waits for the batch to be queued, so keep batches modest, e.g. up to a few hundred). Back-pressure
    /// applies per message as in [`publish`](Self::publish): `Block` waits (releasing the lock), `DropOldest`
    /// drops, `Fail` refuses and [`Error::QueueFull`] is returned after the whole batch reached every other
    /// subscriber (its `full` counts refused deliveries).
    ///
    /// Sealed mode: every message is still checked by the broker and sealed for each subscriber on its own
    /// (the security of section 3 of docs/bus.md is per message), so this is
    /// [`publish`](Self::publish) in a loop with the same `Fail` accounting; any other error stops it, the
    /// messages before it having been published. A payload over 1 MiB fails the whole batch before anything
    /// is published, in both modes.
    pub fn publish_batch<P: AsRef<[u8]>>(&mut self, payloads: &[P], priority: Priority) -> Result<usize> {
        if let Some(p) = payloads.iter().find(|p| p.as_ref().len() > MAX_PAYLOAD) {
            return Err(Error::PayloadTooLarge { len: p.as_ref().len() });
        }
        if self.agent.inner.sealed {
            let (mut n, mut full) = (0, 0);
            for p in payloads {
                match self.publish_with_reply(p.as_ref(), priority, None) {
                    Ok(k) => n += k,
                    Err(Error::QueueFull { full: f, .. }) => full += f,
                    Err(e) => return Err(e),
                }
            }
            if full > 0 {
                return Err(Error::QueueFull { subject: self.topic.to_string(), full });
            }
            return Ok(n);
        }
        if payloads.is_empty() {
            return Ok(0);
        }
        self.count_published(payloads.len() as u64);
        let inner = &self.agent.inner;
        let g = inner.gen_.load(Ordering::Acquire);
        if g != self.route_gen {
            self.route = inner.matching(&self.topic);
            self.route_gen = g;
            self.links.clear();
        }
        inner.route_batch(&self.route, &self.plain_route, priority, payloads)
    }

    /// Async publish: waits on full `Block` subscribers without blocking the thread.
    pub async fn publish_async(&mut self, payload: &[u8], priority: Priority) -> Result<usize> {
        if self.agent.inner.sealed {
            self.local_accept(payload, None)?;
        } else {
            let hl = self.build(payload, priority, None)?;
            self.broker_accept(hl, priority, 0)?;
        }
        let out = Outgoing { priority, route: &self.plain_route, payload };
        let route = self.route.clone();
        self.agent.inner.route_async(&route, &out).await
    }
}

pub(super) struct AgentCore {
    pub(super) inner: Arc<Inner>,
    pub(super) public: PublicIdentity,
    pub(super) session: Option<Arc<AgentSession>>,
    /// The broker's end of this connection (the broker's routing state for it; opaque to the agent).
    pub(super) broker_session: Option<Arc<BrokerSession>>,
    pub(super) sends: Mutex<HashMap<Arc<str>, Arc<SendKey>>>,
    pub(super) pubs: Mutex<HashMap<String, Publisher>>,
}

impl AgentCore {
    /// The current sender key for `topic`, fetching a grant from the broker when the epoch moved on.
    pub(super) fn send_key(&self, ts: &TopicState) -> Result<Arc<SendKey>> {
        let epoch = ts.epoch.load(Ordering::Acquire);
        if let Some(k) = lock(&self.sends).get(&ts.name)
            && k.epoch == epoch
        {
            return Ok(k.clone());
        }
        let (_, grant) = self.inner.grant_send(self.public.id(), &ts.name)?;
        let session = self.session.as_ref().ok_or(Error::UnknownKey)?;
        let (kind, _, e, key) = open_grant(session, grant.as_deref().ok_or(Error::UnknownKey)?)?;
        if kind != 1 {
            return Err(Error::Malformed { reason: "grant of the wrong kind" });
        }
        let k = Arc::new(SendKey { epoch: e, aead: Aes256Gcm::new(key.as_ref())?, streams: Default::default() });
        lock(&self.sends).insert(ts.name.clone(), k.clone());
        Ok(k)
    }
}
