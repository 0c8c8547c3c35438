//! The state the broker and the subscription queues share, kept together because each side reaches into
//! the other: the broker's tables (`Inner`: sessions, topic keys, sender slots and their replay windows), the
//! delivery keys and streams a subscription's messages are sealed under, the message bodies and routes queued,
//! and each subscription's queue with its per-publisher lanes (`SubShared`, `SubState`), including how a message
//! is enqueued, when the subscriber's delivery key rotates, and how a taker drains lanes and the main queue.

use super::config::{Backpressure, Counters, INLINE, IdHash, lock};
use crate::envelope::{self, Header, Kind, TAG_LEN};
use crate::identity::{AgentId, Identity};
use crate::policy::Policy;
use crate::queue::{LEVELS, Meta, MsgQueue, Priority};
use crate::window::Window;
use crate::{Error, Result};
use pqkit::aead::{Aead, Aes256Gcm};
use pqkit::hash::sha2::Sha256;
use pqkit::kdf::Hkdf;
use pqkit::rng::ChaCha20Rng;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::task::Waker;
use std::time::{Duration, Instant};
use zeroize::Zeroizing;

/// A sender slot is found by (sender, topic).
pub(super) type SlotKeyId = (AgentId, Arc<str>);

pub(super) struct Inner {
    pub(super) sealed: bool,
    pub(super) identity: Identity,
    pub(super) policy: Policy,
    pub(super) capacity: usize,
    pub(super) rotate_msgs: u64,
    pub(super) rotate_age: Duration,
    pub(super) subs: RwLock<HashMap<u64, Arc<SubShared>, IdHash>>,
    /// Bumped on every subscribe/unsubscribe: publishers' routing caches compare against it.
    pub(super) gen_: AtomicU64,
    pub(super) next_sub: AtomicU64,
    pub(super) topics: Mutex<HashMap<Arc<str>, Arc<TopicState>>>,
    pub(super) slots: Mutex<HashMap<SlotKeyId, Arc<SenderSlot>>>,
    pub(super) sessions: Mutex<HashMap<AgentId, Arc<BrokerSession>>>,
    pub(super) rng: Mutex<ChaCha20Rng>,
    pub(super) counters: Counters,
}

impl Inner {
    /// A new route generation: publishers rebuild their cached routes. Called only under `subs`' write lock
    /// (the only writers), so a load and a store, not a locked read-modify-write.
    #[inline]
    pub(super) fn bump_gen(&self) {
        self.gen_.store(self.gen_.load(Ordering::Relaxed) + 1, Ordering::Release);
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let subs = std::mem::take(&mut *self.subs.write().unwrap_or_else(|e| e.into_inner()));
        for s in subs.values() {
            s.close();
        }
    }
}

/// The broker's end of an agent's session.
pub(super) struct BrokerSession {
    /// Seals grants to the agent.
    pub(super) send: Aes256Gcm,
    /// Per-connection salt of sender-key derivation: a reconnect of the same identity gets new keys, so two
    /// connections never share a (key, nonce) pair.
    pub(super) conn: [u8; 16],
}

pub(super) struct TopicKeys {
    pub(super) epoch: u32,
    pub(super) secret: Zeroizing<[u8; 32]>,
    pub(super) started: Instant,
}

pub(super) struct TopicState {
    pub(super) name: Arc<str>,
    pub(super) epoch: AtomicU32,
    pub(super) keys: Mutex<TopicKeys>,
}

/// Live publisher handles one agent may hold on one subject. Each handle owns a *stream* of the sender key:
/// the envelope's 64-bit sequence is `stream (24 bits) || counter (40 bits)`, and the broker keeps one replay
/// window per stream. Handles that publish concurrently therefore never race each other through a shared
/// window (a handle preempted between taking a sequence and reaching the broker would otherwise fall more
/// than 64 behind and be rejected as a replay), and a (key, nonce) pair still never repeats: a dropped
/// handle returns its stream, with its counter where it stopped, for the next handle to continue.
pub const MAX_PUBLISHERS: usize = 4096;
/// Bits of the sequence number that count within one stream.
pub(super) const COUNTER_BITS: u32 = 40;

pub(super) struct SlotKey {
    pub(super) epoch: u32,
    pub(super) aead: Aes256Gcm,
    /// One window per stream, indexed by stream id (ids are handed out densely from 0, so at most
    /// [`MAX_PUBLISHERS`] entries); grown only after an envelope of the stream authenticated.
    pub(super) windows: Vec<Window>,
    pub(super) count: u64,
    pub(super) started: Instant,
}

/// The broker's state for one (sender, topic): the sender keys of the current and previous epoch (older ones
/// are erased: `Aes256Gcm` zeroizes its schedule on drop), their replay windows and counters.
pub(super) struct SenderSlot {
    pub(super) topic: Arc<TopicState>,
    pub(super) published: AtomicU64,
    /// Plain-mode publisher handles' own counters (each has one writer, so counting is a plain store, not a
    /// read-modify-write); folded into `published` when the handle drops, under this lock.
    pub(super) handles: Mutex<Vec<Arc<AtomicU64>>>,
    pub(super) keys: Mutex<Vec<SlotKey>>,
}

pub(super) fn derive_send_key(
    secret: &[u8; 32],
    topic: &str,
    sender: &AgentId,
    conn: &[u8; 16],
) -> Result<Zeroizing<[u8; 32]>> {
    let hk = Hkdf::<Sha256>::new(b"pqkit-bus send v1", secret);
    let mut info = Vec::with_capacity(topic.len() + 32);
    info.extend_from_slice(&sender.0);
    info.extend_from_slice(conn);
    info.extend_from_slice(topic.as_bytes());
    let mut k = Zeroizing::new([0u8; 32]);
    hk.expand(&info, k.as_mut())?;
    Ok(k)
}

/// Grants travel broker → agent sealed under the session: `nonce (12) || AES-256-GCM(kind || id || epoch ||
/// key)`. The nonce is random (grants are rare); a replayed grant only re-installs a key the agent already had
/// or an older one, which is refused.
pub(super) const GRANT_AAD: &[u8] = b"pqkit-bus grant v1";
pub(super) const GRANT_LEN: usize = 12 + 1 + 8 + 4 + 32 + 16;

impl Inner {
    pub(super) fn random<const N: usize>(&self) -> Zeroizing<[u8; N]> {
        let mut b = Zeroizing::new([0u8; N]);
        lock(&self.rng).fill(b.as_mut());
        b
    }

    pub(super) fn seal_grant(
        &self,
        s: &BrokerSession,
        kind: u8,
        id: u64,
        epoch: u32,
        key: &[u8; 32],
    ) -> Result<Vec<u8>> {
        let nonce = self.random::<12>();
        let mut g = Vec::with_capacity(GRANT_LEN);
        g.extend_from_slice(nonce.as_ref());
        g.push(kind);
        g.extend_from_slice(&id.to_be_bytes());
        g.extend_from_slice(&epoch.to_be_bytes());
        g.extend_from_slice(key);
        let tag = s.send.seal_in_place_detached(nonce.as_ref(), GRANT_AAD, &mut g[12..])?;
        g.extend_from_slice(&tag);
        Ok(g)
    }
}
/// A message body: sealed (ciphertext || tag) or plain, inline when short.
#[derive(Clone)]
pub(crate) enum Body {
    Inline { len: u8, buf: [u8; INLINE] },
    Heap(Vec<u8>),
}

impl Body {
    pub(super) const EMPTY: Body = Body::Inline { len: 0, buf: [0; INLINE] };

    /// Replaces the contents with `b`, in place when it fits inline.
    #[inline]
    pub(super) fn set(&mut self, b: &[u8]) {
        match self {
            Body::Inline { len, buf } if b.len() <= INLINE => {
                buf[..b.len()].copy_from_slice(b);
                *len = b.len() as u8;
            }
            _ => *self = Body::from_slice(b, 0),
        }
    }

    /// `b` (with room for `extra` more bytes), inline when it fits.
    #[inline]
    pub(crate) fn from_slice(b: &[u8], extra: usize) -> Body {
        if b.len() + extra <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..b.len()].copy_from_slice(b);
            Body::Inline { len: b.len() as u8, buf }
        } else {
            let mut v = Vec::with_capacity(b.len() + extra);
            v.extend_from_slice(b);
            Body::Heap(v)
        }
    }
    #[inline]
    pub(super) fn as_slice(&self) -> &[u8] {
        match self {
            Body::Inline { len, buf } => &buf[..*len as usize],
            Body::Heap(v) => v,
        }
    }
    /// The bytes, writable (the NATS receive path decrypts the payload in place here).
    #[cfg(feature = "nats")]
    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        match self {
            Body::Inline { len, buf } => &mut buf[..*len as usize],
            Body::Heap(v) => v,
        }
    }
}

/// An AAD buffer: on the stack for the usual short subjects.
pub(super) fn with_aad<R>(h: &Header<'_>, f: impl FnOnce(&[u8]) -> R) -> R {
    let hl = h.len();
    if hl <= 128 {
        let mut a = [0u8; 128];
        h.write(&mut a[..hl]);
        f(&a[..hl])
    } else {
        let mut a = vec![0u8; hl];
        h.write(&mut a);
        f(&a)
    }
}

/// Who sent a message and where: one shared allocation per publisher handle (a new one only for a message
/// with a reply-to), so a queued [`Message`] carries one pointer for all three and stays small.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Route {
    pub(super) topic: Arc<str>,
    pub(super) sender: AgentId,
    pub(super) reply: Option<Box<str>>,
}

#[cfg(feature = "nats")]
impl Route {
    /// A route for messages a transport opened.
    pub(crate) fn shared(topic: Arc<str>, sender: AgentId, reply: Option<&str>) -> Arc<Route> {
        Arc::new(Route { topic, sender, reply: reply.map(Into::into) })
    }
    /// Whether this route is `topic` (compared by pointer first), `sender` and `reply`.
    pub(crate) fn is(&self, topic: &Arc<str>, sender: AgentId, reply: Option<&str>) -> bool {
        (Arc::ptr_eq(&self.topic, topic) || self.topic == *topic)
            && self.sender == sender
            && self.reply.as_deref() == reply
    }
}

/// Seals `body` (the payload) in place as a delivery to subscription `sub` under `aead`, epoch `epoch` and
/// sequence `seq`; returns the tag, or `None` if the AEAD refused.
#[inline]
pub(super) fn seal_delivery(
    aead: &Aes256Gcm,
    epoch: u32,
    seq: u64,
    sub: u64,
    out: &Outgoing<'_>,
    body: &mut [u8],
) -> Option<[u8; TAG_LEN]> {
    let h = Header {
        kind: Kind::Deliver,
        priority: out.priority,
        epoch,
        seq,
        sender: out.route.sender,
        sub,
        topic: &out.route.topic,
        reply: out.route.reply.as_deref().unwrap_or(""),
    };
    let nonce = envelope::nonce(Kind::Deliver, out.priority, seq);
    with_aad(&h, |aad| aead.seal_in_place_detached(&nonce, aad, body)).ok()
}

/// Payloads up to this length (plus the tag) are sealed outside the queue lock in a stack buffer.
pub(super) const STREAM_STACK: usize = 256;

pub(super) struct Outgoing<'a> {
    pub(super) priority: Priority,
    pub(super) route: &'a Arc<Route>,
    pub(super) payload: &'a [u8],
}

/// Delivery streams per delivery key (stream ids `0..MAX_DELIVER_STREAMS`; 0 is the broker's own, sealed under
/// the queue lock). A publisher handle past the cap falls back to stream 0 (docs/bus.md §3, "Delivery streams").
pub(super) const MAX_DELIVER_STREAMS: u32 = 1 << 16;

/// One delivery key of a subscription (one delivery epoch): held by the subscription while current, and by
/// the publisher handles sealing under it (an old one is erased when the last of them lets it go).
pub(super) struct DeliverKey {
    pub(super) epoch: u32,
    pub(super) aead: Aes256Gcm,
    /// The key's stream ids for publisher handles (from 1; 0 is the broker's).
    pub(super) streams: Mutex<DeliverPool>,
}

/// Stream ids of one delivery key: never handed out from `next` on, returned ones with their counters.
pub(super) struct DeliverPool {
    pub(super) next: u32,
    pub(super) free: Vec<(u32, [u64; LEVELS])>,
}

/// The broker's delivery keys of one subscription.
pub(super) struct DeliverKeys {
    pub(super) cur: Arc<DeliverKey>,
    /// Stream 0's counters per level.
    pub(super) seqs: [u64; LEVELS],
    pub(super) count: u64,
    /// The count at which the age is checked next (every 1024 messages; the count may move in steps).
    pub(super) next_age: u64,
    pub(super) started: Instant,
    pub(super) session: Arc<BrokerSession>,
}

impl DeliverKeys {
    pub(super) fn new_key(
        inner: &Inner,
        session: &BrokerSession,
        sub: u64,
        epoch: u32,
    ) -> Option<(Arc<DeliverKey>, Vec<u8>)> {
        let key = inner.random::<32>();
        let aead = Aes256Gcm::new(key.as_ref()).ok()?;
        let g = inner.seal_grant(session, 2, sub, epoch, &key).ok()?;
        let streams = Mutex::new(DeliverPool { next: 1, free: Vec::new() });
        Some((Arc::new(DeliverKey { epoch, aead, streams }), g))
    }
}

/// A publisher handle's delivery stream into one subscription: the key it seals under, its stream id and its
/// next counter per level. Dropping it returns the id, with the counters, to the key's pool.
#[derive(Default)]
pub(super) struct DeliverStream {
    pub(super) key: Option<Arc<DeliverKey>>,
    /// The subscription the key belongs to.
    pub(super) sub: u64,
    pub(super) id: u32,
    pub(super) next: [u64; LEVELS],
    /// The subscription moved to a newer key: take a stream of it before the next message.
    pub(super) stale: bool,
}

impl DeliverStream {
    /// A stream of `key`, or `None` when its ids are used up (the caller then seals under the lock).
    pub(super) fn take(key: &Arc<DeliverKey>, sub: u64) -> Option<DeliverStream> {
        let (id, next) = {
            let mut pool = lock(&key.streams);
            match pool.free.pop() {
                Some(s) => s,
                None if pool.next < MAX_DELIVER_STREAMS => {
                    pool.next += 1;
                    (pool.next - 1, [0; LEVELS])
                }
                None => return None,
            }
        };
        Some(DeliverStream { key: Some(key.clone()), sub, id, next, stale: false })
    }
}

impl Drop for DeliverStream {
    fn drop(&mut self) {
        if let Some(k) = self.key.take() {
            lock(&k.streams).free.push((self.id, self.next));
        }
    }
}

/// Lanes per subscription at most; publisher handles past it use the main queue (docs/bus.md §6, "lanes").
pub(super) const MAX_LANES: usize = 16;
/// Capacity a lane reserves at most at once (and at most a sixteenth of the subscription's).
pub(super) const CREDIT_CHUNK: usize = 1024;

/// One publisher handle's sub-queue in one subscription (docs/bus.md §6, "Per-producer sub-queues"): its own
/// lock and store on their own cache lines, so two producers into one subscription share no line per message.
#[repr(align(128))]
pub(super) struct Lane {
    pub(super) st: Mutex<LaneState>,
}

#[derive(Default)]
pub(super) struct LaneState {
    pub(super) q: MsgQueue<Route>,
    /// Slots of the subscription's capacity reserved for this lane (one spent per message).
    pub(super) credit: usize,
    /// Messages pushed and not yet added to the subscription's `delivered` and its delivery key's count.
    pub(super) unfolded: u64,
    /// Delivery epochs of the queued messages with their counts (sealed), in epoch order.
    pub(super) live: std::collections::VecDeque<(u32, u64)>,
    /// Set by a receiver about to wait (docs/bus.md §6, "Wake-ups"): the next push wakes it.
    pub(super) wake: bool,
    pub(super) closed: bool,
    /// The subscription's current delivery epoch (sealed; 0 before the first key), set under both locks.
    pub(super) epoch: u32,
}

/// A publisher handle's place in one subscription: its delivery stream (sealed) and its lane.
#[derive(Default)]
pub(super) struct SubLink {
    pub(super) ds: DeliverStream,
    pub(super) lane: LaneSlot,
}

#[cfg(test)]
impl SubLink {
    pub(super) fn lane_ref(&self) -> &Lane {
        match &self.lane {
            LaneSlot::Lane(l) => l,
            _ => panic!("no lane"),
        }
    }
}

#[derive(Default)]
pub(super) enum LaneSlot {
    /// Not asked for yet (made on the first delivery).
    #[default]
    None,
    Lane(Arc<Lane>),
    /// The subscription had `MAX_LANES` live lanes: this handle uses the main queue.
    Main,
}

pub(super) struct SubState {
    /// Queued messages (sealed ones still sealed: opened in place when received), see [`MsgQueue`].
    pub(super) q: MsgQueue<Route>,
    pub(super) closed: bool,
    pub(super) recv_waiters: u32,
    pub(super) send_waiters: u32,
    pub(super) waker: Option<Waker>,
    pub(super) send_wakers: Vec<Waker>,
    pub(super) keys: Option<Box<DeliverKeys>>,
    /// The subscriber's session (sealed mode): delivery-key grants are sealed under it.
    pub(super) session: Option<Arc<BrokerSession>>,
    pub(super) grants: Vec<Vec<u8>>,
    /// Delivery epochs of the queued messages in epoch order, with their counts: the subscriber erases a key
    /// once no queued message needs it.
    pub(super) live: std::collections::VecDeque<(u32, u64)>,
    pub(super) delivered: u64,
    pub(super) dropped: u64,
    pub(super) refused: u64,
    /// The publisher handles' lanes, oldest first (merged in this order).
    pub(super) lanes: Vec<Arc<Lane>>,
    /// Capacity held by the lanes: their queued messages plus their credit.
    pub(super) lane_held: usize,
    /// The delivery epoch last written into the lanes.
    pub(super) lane_epoch: u32,
    /// The lane whose turn it is, or where to look for the next, when several lanes are busy (docs/bus.md §8,
    /// "Lanes, turns and buffer reuse"), and how many messages its turn may still take (0: the turn is over).
    pub(super) lane_turn: usize,
    pub(super) turn_left: usize,
}

pub(super) struct SubShared {
    pub(super) id: u64,
    pub(super) pattern: Pattern,
    pub(super) backpressure: Backpressure,
    pub(super) capacity: usize,
    pub(super) state: Mutex<SubState>,
    pub(super) not_empty: Condvar,
    pub(super) not_full: Condvar,
    /// Messages handed to the subscriber (added once per batch).
    pub(super) received: AtomicU64,
}

/// `n` more queued messages of delivery epoch `epoch` in `live` (kept in epoch order).
#[inline]
pub(super) fn live_add_n(live: &mut std::collections::VecDeque<(u32, u64)>, epoch: u32, n: u64) {
    match live.iter().rposition(|x| x.0 <= epoch) {
        Some(i) if live[i].0 == epoch => live[i].1 += n,
        Some(i) => live.insert(i + 1, (epoch, n)),
        None => live.push_front((epoch, n)),
    }
}

impl SubState {
    /// One more queued message of delivery epoch `epoch` (kept in epoch order: a stream's message sealed under
    /// the previous epoch may be queued after messages of the current one).
    #[inline]
    pub(super) fn live_add(&mut self, epoch: u32) {
        live_add_n(&mut self.live, epoch, 1);
    }

    /// The subscription's delivery keys, made when the first message is routed here (not at subscribe);
    /// rotated when due. `None` without a session (plain) or when a key could not be made.
    #[inline]
    pub(super) fn deliver_keys(&mut self, inner: &Inner, sub: u64) -> Option<&mut DeliverKeys> {
        if self.keys.is_none() {
            let session = self.session.as_ref()?.clone();
            let (cur, g) = DeliverKeys::new_key(inner, &session, sub, 1)?;
            self.grants.push(g);
            self.keys = Some(Box::new(DeliverKeys {
                cur,
                seqs: [0; LEVELS],
                count: 0,
                next_age: 1023,
                started: Instant::now(),
                session,
            }));
        }
        let k = self.keys.as_mut()?;
        let aged = k.count >= k.next_age && {
            k.next_age = (k.count | 1023) + 1024;
            k.started.elapsed() >= inner.rotate_age
        };
        let due = k.count >= inner.rotate_msgs || aged;
        if due && k.cur.epoch < u32::MAX {
            // Rotate the pairwise delivery key; the grant reaches the subscriber before any message under it.
            let (cur, g) = DeliverKeys::new_key(inner, &k.session, sub, k.cur.epoch + 1)?;
            self.grants.push(g);
            k.cur = cur;
            k.seqs = [0; LEVELS];
            k.count = 0;
            k.next_age = 1023;
            k.started = Instant::now();
        }
        Some(k)
    }

    #[inline]
    pub(super) fn live_dec(&mut self, epoch: u32) {
        self.live_sub(epoch, 1);
    }

    /// `n` queued messages of delivery epoch `epoch` left the queue.
    #[inline]
    pub(super) fn live_sub(&mut self, epoch: u32, n: u64) {
        if let Some(x) = self.live.iter_mut().find(|x| x.0 == epoch) {
            x.1 = x.1.saturating_sub(n);
        }
        while self.live.front().is_some_and(|x| x.1 == 0) {
            self.live.pop_front();
        }
    }
}

/// A subscription pattern, stored inline when short (one allocation less per subscribe).
pub(super) enum Pattern {
    Inline { len: u8, buf: [u8; 48] },
    Heap(Box<str>),
}

impl Pattern {
    pub(super) fn new(p: &str) -> Pattern {
        if p.len() <= 48 {
            let mut buf = [0u8; 48];
            buf[..p.len()].copy_from_slice(p.as_bytes());
            Pattern::Inline { len: p.len() as u8, buf }
        } else {
            Pattern::Heap(p.into())
        }
    }
    pub(super) fn as_str(&self) -> &str {
        match self {
            // Copied from a `&str` at a character boundary (the whole string): always UTF-8.
            Pattern::Inline { len, buf } => std::str::from_utf8(&buf[..*len as usize]).unwrap_or(""),
            Pattern::Heap(s) => s,
        }
    }
}

pub(super) enum Enq {
    Done,
    Dropped,
    Full,
    Closed,
}

/// What one publish did across its subscriptions: deliveries made, and refusals for lack of room.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) n: usize,
    pub(super) full: usize,
}

impl Tally {
    #[inline(always)]
    pub(super) fn add(&mut self, r: Enq) {
        match r {
            Enq::Done => self.n += 1,
            Enq::Full => self.full += 1,
            Enq::Dropped | Enq::Closed => {}
        }
    }

    /// The publish's result: the number of deliveries, or [`Error::QueueFull`] with the number of refusals.
    #[inline(always)]
    pub(super) fn result(self, topic: &str) -> Result<usize> {
        if self.full > 0 {
            return Err(Error::QueueFull { subject: topic.to_string(), full: self.full });
        }
        Ok(self.n)
    }
}

impl SubShared {
    /// Closes the subscription; returns its (delivered, dropped, refused) counts as they stand once closed
    /// (read under the same lock, so a closing `Subscription` needs no second one).
    pub(super) fn close(&self) -> (u64, u64, u64) {
        let mut st = lock(&self.state);
        st.closed = true;
        st.keys = None;
        st.session = None;
        // Lanes: closed and emptied (their handles get `Closed`; the memory goes now, not with the handles).
        for lane in std::mem::take(&mut st.lanes) {
            let mut ls = lock(&lane.st);
            // Its pushes count as delivered (the retired metrics are read from the state after this).
            Self::fold(&mut st, &mut ls);
            ls.closed = true;
            ls.credit = 0;
            ls.q = MsgQueue::default();
        }
        st.lane_held = 0;
        if let Some(w) = st.waker.take() {
            w.wake();
        }
        for w in st.send_wakers.drain(..) {
            w.wake();
        }
        // A notify is a system call even with nobody waiting: only when someone is.
        let (r, w) = (st.recv_waiters > 0, st.send_waiters > 0);
        let counts = (st.delivered, st.dropped, st.refused);
        drop(st);
        if r {
            self.not_empty.notify_all();
        }
        if w {
            self.not_full.notify_all();
        }
        counts
    }

    /// Wakes a waiting receiver and the async one (under the state lock).
    #[inline]
    pub(super) fn notify_locked(&self, st: &mut SubState) {
        if st.recv_waiters > 0 {
            self.not_empty.notify_one();
        }
        if let Some(w) = st.waker.take() {
            w.wake();
        }
    }

    /// A lane push found its lane's `wake` set: wakes the receiver under the state lock.
    #[cold]
    pub(super) fn wake_receiver(&self) {
        let mut st = lock(&self.state);
        self.notify_locked(&mut st);
    }

    /// The delivery keys (made or rotated when due, see [`SubState::deliver_keys`]); a new current epoch is
    /// written into every lane under its lock (so a lane push, which checks it under that lock, never seals
    /// under a key older than the previous one; docs/bus.md §6, "Rotation and keys").
    #[inline]
    pub(super) fn keys<'a>(&self, st: &'a mut SubState, inner: &Inner) -> Option<&'a mut DeliverKeys> {
        let e = st.deliver_keys(inner, self.id)?.cur.epoch;
        if st.lane_epoch != e {
            st.lane_epoch = e;
            for lane in &st.lanes {
                lock(&lane.st).epoch = e;
            }
        }
        st.keys.as_deref_mut()
    }

    /// Adds a lane's pushed-message count to `delivered` and to the delivery key's count (rotation).
    #[inline]
    pub(super) fn fold(st: &mut SubState, ls: &mut LaneState) {
        if ls.unfolded > 0 {
            st.delivered += ls.unfolded;
            if let Some(k) = st.keys.as_mut() {
                k.count += ls.unfolded;
            }
            ls.unfolded = 0;
        }
    }

    /// Moves every lane's messages into the main queue, oldest lane first (under the state lock, which the
    /// lanes' locks nest in), with their epochs and counts, and sets each lane's `wake` to `arm` (a receiver
    /// about to wait arms them, a take disarms them); frees the lanes whose handle is gone (the subscription
    /// holds the last reference), returning their credit.
    pub(super) fn merge_lanes(&self, st: &mut SubState, arm: bool) {
        // A merge by anyone else (a publisher on the main queue) keeps the lanes armed for a waiting receiver.
        let arm = arm || st.recv_waiters > 0 || st.waker.is_some();
        let mut lanes = std::mem::take(&mut st.lanes);
        lanes.retain(|lane| {
            let mut ls = lock(&lane.st);
            ls.wake = arm;
            Self::fold(st, &mut ls);
            let SubState { q, live, lane_held, .. } = &mut *st;
            let n = q.append_from(&mut ls.q);
            for (e, c) in ls.live.drain(..) {
                live_add_n(live, e, c);
            }
            *lane_held -= n;
            let dead = Arc::strong_count(lane) == 1;
            if dead {
                *lane_held -= ls.credit;
                ls.credit = 0;
            }
            !dead
        });
        st.lanes = lanes;
    }

    /// Takes back every lane's unspent credit (the subscription looks full).
    #[cold]
    pub(super) fn reclaim_credit(&self, st: &mut SubState) {
        for lane in &st.lanes {
            let mut ls = lock(&lane.st);
            st.lane_held -= ls.credit;
            ls.credit = 0;
        }
    }

    /// The lane for a publisher handle's first delivery here: a new one, or [`LaneSlot::Main`] once the
    /// subscription has `MAX_LANES` live lanes (the lanes are merged first, so the handle's messages still
    /// queued in an older lane of its stay ahead of its next ones).
    #[cold]
    pub(super) fn new_lane(&self) -> LaneSlot {
        let mut st = lock(&self.state);
        if st.lanes.len() >= MAX_LANES {
            self.merge_lanes(&mut st, false);
        }
        if st.lanes.len() >= MAX_LANES || st.closed {
            if !st.lanes.is_empty() {
                self.merge_lanes(&mut st, false);
            }
            return LaneSlot::Main;
        }
        let wake = st.recv_waiters > 0 || st.waker.is_some();
        let epoch = st.lane_epoch;
        let lane = Arc::new(Lane { st: Mutex::new(LaneState { wake, epoch, ..LaneState::default() }) });
        st.lanes.push(lane.clone());
        LaneSlot::Lane(lane)
    }

    /// Credit for `lane`, which has none (called without its lock): folds its count, makes or rotates the
    /// delivery key when due (sealed), then reserves up to a chunk of free capacity for it, taking back the
    /// other lanes' credit when nothing is free; when even then nothing is, applies the back-pressure policy
    /// (`Block` waits, `Fail` refuses, `DropOldest` drops the oldest of the lowest level across the whole
    /// subscription, lanes merged). `Ok` when the lane has credit (or a drop made room for this message).
    #[cold]
    #[inline(never)]
    pub(super) fn refill(&self, inner: &Inner, lane: &Lane, priority: Priority) -> std::result::Result<(), Enq> {
        let mut st = lock(&self.state);
        loop {
            if st.closed {
                return Err(Enq::Closed);
            }
            Self::fold(&mut st, &mut lock(&lane.st));
            let until_rotation = if st.session.is_some() {
                match self.keys(&mut st, inner) {
                    Some(k) => inner.rotate_msgs.saturating_sub(k.count).max(1),
                    None => return Err(Enq::Dropped),
                }
            } else {
                u64::MAX
            };
            if lock(&lane.st).credit > 0 {
                return Ok(());
            }
            let mut free = self.capacity.saturating_sub(st.q.len() + st.lane_held);
            if free == 0 {
                self.reclaim_credit(&mut st);
                free = self.capacity.saturating_sub(st.q.len() + st.lane_held);
            }
            if free == 0 {
                let made;
                (st, made) = self.on_full(st, priority)?;
                if !made {
                    continue;
                }
                free = 1;
            }
            let chunk = (self.capacity / 16).clamp(1, CREDIT_CHUNK);
            let grant = chunk.min(free).min(usize::try_from(until_rotation).unwrap_or(usize::MAX));
            lock(&lane.st).credit += grant;
            st.lane_held += grant;
            return Ok(());
        }
    }

    /// Places one plain message in the handle's lane: under the lane's lock only, while it has credit.
    #[inline(always)]
    pub(super) fn lane_enqueue_plain(&self, inner: &Inner, lane: &Lane, out: &Outgoing<'_>) -> Enq {
        loop {
            let mut ls = lock(&lane.st);
            if ls.credit > 0 {
                ls.credit -= 1;
                let meta = Meta { seq: 0, len: 0, route: 0, epoch: 0, kind: Kind::Plain };
                ls.q.push(out.priority, meta, out.route, out.payload);
                ls.unfolded += 1;
                // A receiver arms `wake` under this lock before it waits (docs/bus.md §6, "Wake-ups").
                let wake = std::mem::take(&mut ls.wake);
                drop(ls);
                if wake {
                    self.wake_receiver();
                }
                return Enq::Done;
            }
            drop(ls);
            if let Err(e) = self.refill(inner, lane, out.priority) {
                return e;
            }
        }
    }

    /// Places one sealed message in the handle's lane, sealed in place in the lane's store under the handle's
    /// delivery stream of the current key (docs/bus.md §3, "Delivery streams"; §6, lanes). A handle that cannot
    /// have a stream goes through the main queue (stream 0).
    #[inline]
    pub(super) fn lane_enqueue_sealed(&self, inner: &Inner, link: &mut SubLink, out: &Outgoing<'_>) -> Enq {
        let SubLink { ds, lane: LaneSlot::Lane(lane) } = link else {
            return self.enqueue_stream(inner, &mut link.ds, out);
        };
        // Set when the lane showed a newer epoch than the stream's key.
        let mut stale = false;
        for _ in 0..64 {
            // (`links` are rebuilt with the route, so a stream here was taken for this subscription.)
            if stale || ds.key.is_none() {
                stale = false;
                let mut st = lock(&self.state);
                if st.closed {
                    return Enq::Closed;
                }
                let Some(k) = self.keys(&mut st, inner) else { return Enq::Dropped };
                if ds.sub != self.id || ds.key.as_ref().is_none_or(|x| !Arc::ptr_eq(x, &k.cur)) {
                    let cur = k.cur.clone();
                    // The old stream goes back to its key's pool first (that pool's lock is a leaf).
                    *ds = DeliverStream::default();
                    match DeliverStream::take(&cur, self.id) {
                        Some(n) => *ds = n,
                        None => break,
                    }
                }
                continue;
            }
            let Some(key) = ds.key.as_ref() else { break };
            let mut ls = lock(&lane.st);
            if ls.credit == 0 {
                if ls.closed {
                    return Enq::Closed;
                }
                drop(ls);
                if let Err(e) = self.refill(inner, lane, out.priority) {
                    return e;
                }
                continue;
            }
            let epoch = key.epoch;
            if ls.epoch != epoch {
                // Rotated since: take a stream of the new key first (a message sealed now could be erased).
                stale = true;
                continue;
            }
            let p = out.priority as usize;
            let c = ds.next[p];
            if c >= 1 << COUNTER_BITS {
                // Unreachable with rotation by count (capped below 2^40): never wrap a counter.
                break;
            }
            ds.next[p] = c + 1;
            let seq = (u64::from(ds.id) << COUNTER_BITS) | c;
            let meta = Meta { seq, len: 0, route: 0, epoch, kind: Kind::Deliver };
            let aead = &key.aead;
            let sub = ds.sub;
            if !ls.q.push_sealed(out.priority, meta, out.route, out.payload, |body| {
                seal_delivery(aead, epoch, seq, sub, out, body)
            }) {
                return Enq::Dropped;
            }
            ls.credit -= 1;
            ls.unfolded += 1;
            live_add_n(&mut ls.live, epoch, 1);
            let wake = std::mem::take(&mut ls.wake);
            drop(ls);
            if wake {
                self.wake_receiver();
            }
            return Enq::Done;
        }
        self.enqueue_locked(inner, out)
    }

    /// The subscription is full: applies its back-pressure policy. `Block` waits for a take and gives the guard
    /// back with `false` (the caller checks again); `DropOldest` merges the lanes and drops the oldest message of
    /// the lowest level if that level is at most `priority`, giving the guard back with `true` (one slot free),
    /// else refuses with [`Enq::Dropped`]; `Fail` refuses with [`Enq::Full`]. Drops and refusals are counted.
    pub(super) fn on_full<'a>(
        &'a self,
        mut st: MutexGuard<'a, SubState>,
        priority: Priority,
    ) -> std::result::Result<(MutexGuard<'a, SubState>, bool), Enq> {
        match self.backpressure {
            Backpressure::Block => {
                st.send_waiters += 1;
                st = self.not_full.wait(st).unwrap_or_else(|e| e.into_inner());
                st.send_waiters -= 1;
                Ok((st, false))
            }
            Backpressure::Fail => {
                st.refused += 1;
                Err(Enq::Full)
            }
            Backpressure::DropOldest => {
                self.merge_lanes(&mut st, false);
                st.dropped += 1;
                match st.q.lowest() {
                    Some(l) if l <= priority => {
                        if let Some((_, m)) = st.q.pop_lowest() {
                            st.live_dec(m.epoch);
                        }
                        Ok((st, true))
                    }
                    _ => Err(Enq::Dropped),
                }
            }
        }
    }

    /// [`try_enqueue`](Self::try_enqueue), waiting for room while the queue is full and its policy is `Block`;
    /// returns the guard (still held) and the outcome.
    pub(super) fn enqueue_waiting<'a>(
        &'a self,
        mut st: MutexGuard<'a, SubState>,
        inner: &Inner,
        out: &Outgoing<'_>,
    ) -> (MutexGuard<'a, SubState>, Enq) {
        loop {
            match self.try_enqueue(&mut st, inner, out) {
                Enq::Full if self.backpressure == Backpressure::Block => {
                    st.send_waiters += 1;
                    st = self.not_full.wait(st).unwrap_or_else(|e| e.into_inner());
                    st.send_waiters -= 1;
                }
                r => return (st, r),
            }
        }
    }

    /// Places one message (sealing it for this subscriber in sealed mode). Called with the queue lock held.
    #[inline(always)]
    pub(super) fn try_enqueue(&self, st: &mut SubState, inner: &Inner, out: &Outgoing<'_>) -> Enq {
        if st.closed {
            return Enq::Closed;
        }
        if !st.lanes.is_empty() {
            self.merge_lanes(st, false);
            if st.q.len() + st.lane_held >= self.capacity {
                self.reclaim_credit(st);
            }
        }
        if st.q.len() + st.lane_held >= self.capacity {
            match self.backpressure {
                Backpressure::Block => return Enq::Full,
                Backpressure::Fail => {
                    st.refused += 1;
                    return Enq::Full;
                }
                Backpressure::DropOldest => {
                    st.dropped += 1;
                    match st.q.lowest() {
                        Some(l) if l <= out.priority => {
                            if let Some((_, m)) = st.q.pop_lowest() {
                                st.live_dec(m.epoch);
                            }
                        }
                        _ => return Enq::Dropped,
                    }
                }
            }
        }
        if st.session.is_some() && self.keys(st, inner).is_none() {
            return Enq::Dropped;
        }
        let (kind, epoch) = if let Some(k) = st.keys.as_mut() {
            // Stream 0 (the broker's own, sealed under the lock): its counter is the sequence.
            let seq = k.seqs[out.priority as usize];
            k.seqs[out.priority as usize] += 1;
            k.count += 1;
            let epoch = k.cur.epoch;
            let meta = Meta { seq, len: 0, route: 0, epoch, kind: Kind::Deliver };
            let aead = &k.cur.aead;
            let sealed = st.q.push_sealed(out.priority, meta, out.route, out.payload, |body| {
                seal_delivery(aead, epoch, seq, self.id, out, body)
            });
            if !sealed {
                return Enq::Dropped;
            }
            (Kind::Deliver, epoch)
        } else {
            // Plain: the payload is copied once, into the level's byte buffer; the route is interned (no
            // reference count per message).
            let meta = Meta { seq: 0, len: 0, route: 0, epoch: 0, kind: Kind::Plain };
            st.q.push(out.priority, meta, out.route, out.payload);
            (Kind::Plain, 0)
        };
        if kind == Kind::Deliver {
            st.live_add(epoch);
        }
        st.delivered += 1;
        self.notify_locked(st);
        Enq::Done
    }

    /// [`try_enqueue`](Self::try_enqueue) under the lock, waiting for room on a `Block` queue.
    pub(super) fn enqueue_locked(&self, inner: &Inner, out: &Outgoing<'_>) -> Enq {
        let mut st = lock(&self.state);
        loop {
            match self.try_enqueue(&mut st, inner, out) {
                Enq::Full if self.backpressure == Backpressure::Block => {
                    st.send_waiters += 1;
                    st = self.not_full.wait(st).unwrap_or_else(|e| e.into_inner());
                    st.send_waiters -= 1;
                }
                r => return r,
            }
        }
    }

    /// Places one message sealed on the publishing thread under the handle's delivery stream `ds` (sealed
    /// mode; docs/bus.md §3, "Delivery streams"): the seal runs without the queue lock, which is taken once to
    /// queue the entry (back-pressure as in [`try_enqueue`](Self::try_enqueue)). A message whose key is two or
    /// more epochs old by then is sealed again under the current key; a handle that cannot have a stream
    /// (ids or counter used up, no key) goes through `try_enqueue` under the lock (stream 0).
    pub(super) fn enqueue_stream(&self, inner: &Inner, ds: &mut DeliverStream, out: &Outgoing<'_>) -> Enq {
        'retry: for _ in 0..4 {
            if ds.key.is_none() || ds.stale || ds.sub != self.id {
                let mut st = lock(&self.state);
                if st.closed {
                    return Enq::Closed;
                }
                let Some(k) = self.keys(&mut st, inner) else { break };
                if ds.sub != self.id || ds.key.as_ref().is_none_or(|x| !Arc::ptr_eq(x, &k.cur)) {
                    let cur = k.cur.clone();
                    // The old stream goes back to its key's pool first (that pool's lock is a leaf).
                    *ds = DeliverStream::default();
                    match DeliverStream::take(&cur, self.id) {
                        Some(n) => *ds = n,
                        None => break,
                    }
                }
                ds.stale = false;
            }
            let Some(key) = ds.key.as_ref() else { break };
            let p = out.priority as usize;
            let c = ds.next[p];
            if c >= 1 << COUNTER_BITS {
                // Unreachable with rotation by count (capped below 2^40): never wrap a counter.
                break;
            }
            ds.next[p] = c + 1;
            let seq = (u64::from(ds.id) << COUNTER_BITS) | c;
            let epoch = key.epoch;
            // Payload || tag, sealed here without the queue lock (on the stack when short).
            let n = out.payload.len();
            let mut stack = [0u8; STREAM_STACK];
            let mut heap = Vec::new();
            let body: &mut [u8] = if n + TAG_LEN <= STREAM_STACK {
                &mut stack[..n + TAG_LEN]
            } else {
                heap.resize(n + TAG_LEN, 0);
                &mut heap
            };
            let (ct, tg) = body.split_at_mut(n);
            ct.copy_from_slice(out.payload);
            let Some(tag) = seal_delivery(&key.aead, epoch, seq, self.id, out, ct) else { return Enq::Dropped };
            tg.copy_from_slice(&tag);
            let mut st = lock(&self.state);
            loop {
                if st.closed {
                    return Enq::Closed;
                }
                let Some(k) = self.keys(&mut st, inner) else { return Enq::Dropped };
                let cur = k.cur.epoch;
                if epoch.saturating_add(1) < cur {
                    // The subscriber may have erased this key: seal again under the current one.
                    ds.stale = true;
                    continue 'retry;
                }
                if !st.lanes.is_empty() {
                    self.merge_lanes(&mut st, false);
                    if st.q.len() + st.lane_held >= self.capacity {
                        self.reclaim_credit(&mut st);
                    }
                }
                if st.q.len() + st.lane_held >= self.capacity {
                    match self.on_full(st, out.priority) {
                        Ok((g, true)) => st = g,
                        Ok((g, false)) => {
                            st = g;
                            continue;
                        }
                        Err(r) => return r,
                    }
                }
                if epoch == cur {
                    if let Some(k) = st.keys.as_mut() {
                        k.count += 1;
                    }
                } else {
                    // Sealed under the previous key (it still opens): the next message takes the current one.
                    ds.stale = true;
                }
                // Sealed outside the lock; the store copies the ciphertext and tag (`kind: Deliver` marks it
                // sealed, so `open_body` opens it).
                let meta = Meta { seq, len: 0, route: 0, epoch, kind: Kind::Deliver };
                st.q.push(out.priority, meta, out.route, body);
                st.live_add(epoch);
                st.delivered += 1;
                self.notify_locked(&mut st);
                return Enq::Done;
            }
        }
        self.enqueue_locked(inner, out)
    }
}
