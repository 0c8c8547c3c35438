//! The [`Agent`] handle: an identity's authenticated session with the bus, from which it publishes,
//! subscribes and makes requests.

use super::config::{SubOptions, lock};
use super::message::{KeyRing, Message};
use super::publisher::{AgentCore, Publisher};
use super::session::Stream;
use super::state::{Pattern, Route, SubShared, SubState};
use super::subscription::Subscription;
use crate::identity::AgentId;
use crate::queue::{Batch, MsgQueue, Priority};
use crate::subject::validate_pattern;
use crate::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// A connected agent. Cheap to clone (clones share the connection).
#[derive(Clone)]
pub struct Agent {
    pub(super) core: Arc<AgentCore>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").field("identity", &self.core.public).finish()
    }
}

impl Agent {
    /// The agent's id.
    pub fn id(&self) -> AgentId {
        self.core.public.id()
    }
    /// The agent's name.
    pub fn name(&self) -> &str {
        self.core.public.name()
    }

    /// A publisher for one subject: resolves authorisation, keys and routing once, then publishes fast.
    pub fn publisher(&self, subject: &str) -> Result<Publisher> {
        let c = &self.core;
        let (slot, _) = c.inner.grant_send(c.public.id(), subject)?;
        let key = if c.inner.sealed { Some(Stream::take(c.send_key(&slot.topic)?, subject)?) } else { None };
        let topic: Arc<str> = Arc::from(subject);
        let count = Arc::new(AtomicU64::new(0));
        lock(&slot.handles).push(count.clone());
        Ok(Publisher {
            count,
            agent: c.clone(),
            plain_route: Arc::new(Route { topic: topic.clone(), sender: c.public.id(), reply: None }),
            topic,
            slot,
            key,
            route_gen: 0,
            route: Arc::from(Vec::new()),
            links: Vec::new(),
            buf: Vec::with_capacity(256),
        })
    }

    /// Publishes one message on `subject` (through a cached [`Publisher`]); returns how many subscriptions it
    /// reached.
    pub fn publish(&self, subject: &str, payload: &[u8], priority: Priority) -> Result<usize> {
        self.publish_with_reply(subject, payload, priority, None)
    }

    pub(super) fn cached<R>(&self, subject: &str, f: impl FnOnce(&mut Publisher) -> Result<R>) -> Result<R> {
        let mut pubs = lock(&self.core.pubs);
        if !pubs.contains_key(subject) {
            if pubs.len() >= 1024 {
                pubs.clear();
            }
            let p = self.publisher(subject)?;
            pubs.insert(subject.to_string(), p);
        }
        match pubs.get_mut(subject) {
            Some(p) => f(p),
            None => Err(Error::Closed),
        }
    }

    /// Publishes with a reply-to subject.
    pub fn publish_with_reply(
        &self,
        subject: &str,
        payload: &[u8],
        priority: Priority,
        reply_to: Option<&str>,
    ) -> Result<usize> {
        self.cached(subject, |p| p.publish_with_reply(payload, priority, reply_to))
    }

    /// Answers a request: publishes `payload` to the message's reply-to subject.
    pub fn reply(&self, request: &Message, payload: &[u8]) -> Result<usize> {
        let to = request.reply_to().ok_or(Error::InvalidSubject { subject: String::new(), reason: "no reply-to" })?;
        self.publish(to, payload, request.priority())
    }

    /// Subscribes to a pattern with the default options.
    pub fn subscribe(&self, pattern: &str) -> Result<Subscription> {
        self.subscribe_with(pattern, SubOptions::default())
    }

    /// Subscribes to a pattern.
    pub fn subscribe_with(&self, pattern: &str, opts: SubOptions) -> Result<Subscription> {
        let c = &self.core;
        let inner = &c.inner;
        validate_pattern(pattern)?;
        if !inner.policy.may_subscribe(&c.public.id(), pattern) {
            return inner.counted(Err(Error::Unauthorised { action: "subscribe", subject: pattern.into() }));
        }
        let (session, ring) = if inner.sealed {
            let session = c.broker_session.clone().ok_or(Error::UnknownKey)?;
            (Some(session), Some(KeyRing::default()))
        } else {
            (None, None)
        };
        // The id and the route generation change only under the map's write lock: plain loads and stores (no
        // locked instruction each; subscribe + unsubscribe is a benchmarked row, see docs/bus.md §8, "`subscribe`").
        let mut subs = inner.subs.write().unwrap_or_else(|e| e.into_inner());
        let id = inner.next_sub.load(Ordering::Relaxed);
        inner.next_sub.store(id + 1, Ordering::Relaxed);
        let shared = Arc::new(SubShared {
            id,
            pattern: Pattern::new(pattern),
            backpressure: opts.backpressure,
            capacity: opts.capacity.unwrap_or(inner.capacity).max(1),
            state: Mutex::new(SubState {
                q: MsgQueue::default(),
                closed: false,
                recv_waiters: 0,
                send_waiters: 0,
                waker: None,
                send_wakers: Vec::new(),
                keys: None,
                session,
                grants: Vec::new(),
                live: Default::default(),
                delivered: 0,
                dropped: 0,
                refused: 0,
                lanes: Vec::new(),
                lane_held: 0,
                lane_epoch: 0,
                lane_turn: 0,
                turn_left: 0,
            }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            received: AtomicU64::new(0),
        });
        subs.insert(id, shared.clone());
        inner.bump_gen();
        drop(subs);
        Ok(Subscription {
            inner: inner.clone(),
            shared,
            session: c.session.clone(),
            ring,
            batch: Batch::default(),
            back: None,
            done: false,
        })
    }

    pub(super) fn inbox(&self) -> String {
        let n = u64::from_be_bytes(*self.core.inner.random::<8>());
        format!("_INBOX.{}.{n:016x}", self.id().to_hex())
    }

    /// Request/reply: publishes `payload` on `subject` with a fresh inbox as reply-to and waits up to `timeout`
    /// for the first reply. [`Error::NoResponders`] if nobody is subscribed, [`Error::Timeout`] if nobody
    /// answers in time.
    pub fn request(&self, subject: &str, payload: &[u8], timeout: Duration) -> Result<Message> {
        let inbox = self.inbox();
        let mut sub = self.subscribe_with(&inbox, SubOptions { capacity: Some(16), ..Default::default() })?;
        let n = self.publish_with_reply(subject, payload, Priority::Normal, Some(&inbox))?;
        if n == 0 {
            return Err(Error::NoResponders { subject: subject.into() });
        }
        sub.recv_timeout(timeout)
    }

    /// Async [`request`](Self::request) (tokio timer).
    pub async fn request_async(&self, subject: &str, payload: &[u8], timeout: Duration) -> Result<Message> {
        let inbox = self.inbox();
        let mut sub = self.subscribe_with(&inbox, SubOptions { capacity: Some(16), ..Default::default() })?;
        let n = self.publish_with_reply(subject, payload, Priority::Normal, Some(&inbox))?;
        if n == 0 {
            return Err(Error::NoResponders { subject: subject.into() });
        }
        tokio::time::timeout(timeout, sub.recv_async()).await.map_err(|_| Error::Timeout)?
    }
}
