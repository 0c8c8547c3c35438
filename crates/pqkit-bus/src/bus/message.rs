//! Received messages: the owned [`Message`], the borrowed [`MessageRef`] a batch callback sees, opening
//! a sealed body under the subscriber's delivery keys, and the key ring that tracks those keys per epoch.

use super::state::{Body, COUNTER_BITS, MAX_DELIVER_STREAMS, Route, with_aad};
use crate::envelope::{self, Header, Kind, TAG_LEN};
use crate::identity::AgentId;
use crate::queue::{LEVELS, Meta, Priority};
use crate::{Error, Result};
use pqkit::aead::{Aead, Aes256Gcm};
use std::sync::Arc;

/// A received message.
#[derive(Clone)]
pub struct Message {
    pub(super) route: Arc<Route>,
    pub(super) priority: Priority,
    pub(super) seq: u64,
    pub(super) body: Body,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Message")
            .field("topic", &self.route.topic)
            .field("sender", &self.route.sender)
            .field("priority", &self.priority)
            .field("len", &self.body.as_slice().len())
            .finish()
    }
}

impl PartialEq for Message {
    fn eq(&self, o: &Self) -> bool {
        self.route == o.route && self.priority == o.priority && self.seq == o.seq && self.payload() == o.payload()
    }
}
impl Eq for Message {}

impl Message {
    /// A message opened by a transport (the NATS one): already authenticated and decrypted (in place in
    /// `body`, inline when short), with a route the transport keeps (one per sender and topic while they
    /// repeat, so a stream of messages allocates no route each).
    #[cfg(feature = "nats")]
    #[inline]
    pub(crate) fn opened_body(route: Arc<Route>, priority: Priority, seq: u64, body: Body) -> Message {
        Message { route, priority, seq, body }
    }

    /// The subject it was published on.
    pub fn subject(&self) -> &str {
        &self.route.topic
    }

    /// The subject, shared (a reference count, no copy).
    pub(crate) fn subject_shared(&self) -> Arc<str> {
        self.route.topic.clone()
    }
    /// The reply-to subject, if any.
    pub fn reply_to(&self) -> Option<&str> {
        self.route.reply.as_deref()
    }
    /// The authenticated sender (vouched for by the broker, which checked the sender's own key).
    pub fn sender(&self) -> AgentId {
        self.route.sender
    }
    /// The priority.
    pub fn priority(&self) -> Priority {
        self.priority
    }
    /// The delivery sequence number: `stream (24 bits) || counter (40 bits)`, the counter increasing per
    /// subscription, key epoch, priority level and delivery stream (one stream per publisher handle;
    /// docs/bus.md §4).
    pub fn seq(&self) -> u64 {
        self.seq
    }
    /// The payload.
    pub fn payload(&self) -> &[u8] {
        self.body.as_slice()
    }
}

/// A received message borrowed from its subscription ([`Subscription::drain`](crate::Subscription::drain)): the same
/// accessors as [`Message`], without an owned copy.
#[derive(Clone, Copy)]
pub struct MessageRef<'a> {
    pub(super) route: &'a Route,
    pub(super) priority: Priority,
    pub(super) seq: u64,
    pub(super) payload: &'a [u8],
}

impl std::fmt::Debug for MessageRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageRef")
            .field("topic", &self.route.topic)
            .field("sender", &self.route.sender)
            .field("priority", &self.priority)
            .field("len", &self.payload.len())
            .finish()
    }
}

impl<'a> MessageRef<'a> {
    /// The subject it was published on.
    pub fn subject(&self) -> &'a str {
        &self.route.topic
    }
    /// The reply-to subject, if any.
    pub fn reply_to(&self) -> Option<&'a str> {
        self.route.reply.as_deref()
    }
    /// The authenticated sender (vouched for by the broker, which checked the sender's own key).
    pub fn sender(&self) -> AgentId {
        self.route.sender
    }
    /// The priority.
    pub fn priority(&self) -> Priority {
        self.priority
    }
    /// The delivery sequence number: `stream (24 bits) || counter (40 bits)`, as [`Message::seq`].
    pub fn seq(&self) -> u64 {
        self.seq
    }
    /// The payload (already authenticated and decrypted on a sealed bus).
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }
}

/// Checks one queued message and opens its body in place (sealed subscriptions: key by epoch, strictly
/// increasing counter per level and delivery stream, tag over the rebuilt delivery header); returns the payload length.
#[inline]
pub(super) fn open_body(
    ring: Option<&mut KeyRing>,
    sub: u64,
    p: Priority,
    e: &Meta,
    route: &Route,
    body: &mut [u8],
) -> Result<usize> {
    let Some(ring) = ring else {
        return if e.kind != Kind::Plain {
            Err(Error::Malformed { reason: "sealed envelope on a plain subscription" })
        } else {
            Ok(body.len())
        };
    };
    if e.kind != Kind::Deliver {
        return Err(Error::Malformed { reason: "not a delivery envelope" });
    }
    let oldest = ring.keys.first().map(|k| k.0).ok_or(Error::UnknownKey)?;
    let Some(k) = ring.keys.iter_mut().find(|k| k.0 == e.epoch) else {
        return Err(if e.epoch < oldest { Error::Expired { epoch: e.epoch } } else { Error::UnknownKey });
    };
    // Per (epoch, level, stream): only a counter above the last accepted (docs/bus.md §4).
    let stream = (e.seq >> COUNTER_BITS) as usize;
    let counter = e.seq & ((1 << COUNTER_BITS) - 1);
    if stream >= MAX_DELIVER_STREAMS as usize {
        return Err(Error::Malformed { reason: "delivery stream out of range" });
    }
    if k.2[p as usize].get(stream).is_some_and(|&next| counter < next) {
        return Err(Error::Replayed { seq: e.seq });
    }
    if body.len() < TAG_LEN {
        return Err(Error::Malformed { reason: "truncated" });
    }
    let n = body.len() - TAG_LEN;
    let h = Header {
        kind: Kind::Deliver,
        priority: p,
        epoch: e.epoch,
        seq: e.seq,
        sender: route.sender,
        sub,
        topic: &route.topic,
        reply: route.reply.as_deref().unwrap_or(""),
    };
    let (ct, tag) = body.split_at_mut(n);
    let nonce = envelope::nonce(Kind::Deliver, p, e.seq);
    with_aad(&h, |aad| k.1.open_in_place_detached(&nonce, aad, ct, tag)).map_err(|_| Error::AuthFailed)?;
    let next = &mut k.2[p as usize];
    if next.len() <= stream {
        next.resize(stream + 1, 0);
    }
    next[stream] = counter + 1;
    Ok(n)
}

/// The subscriber's delivery keys: current and previous epoch (and any a queued message needs), each with,
/// per level, the next counter it accepts in each delivery stream (indexed by stream id; 0 = none yet).
#[derive(Default)]
pub(super) struct KeyRing {
    pub(super) keys: Vec<(u32, Aes256Gcm, [Vec<u64>; LEVELS])>,
}
