//! The broker, agents, publishers and subscriptions.

use crate::envelope::{self, FIXED_LEN, Header, Kind, MAX_PAYLOAD, TAG_LEN};
use crate::handshake;
use crate::identity::{AgentId, Identity, PublicIdentity};
use crate::policy::Policy;
use crate::queue::{Batch, LEVELS, Meta, MsgQueue, Priority};
use crate::subject::{matches, validate_pattern, validate_subject};
use crate::window::Window;
use crate::{Error, Result};
use pqkit::aead::{Aead, Aes256Gcm};
use pqkit::hash::sha2::Sha256;
use pqkit::kdf::Hkdf;
use pqkit::rng::ChaCha20Rng;
use std::collections::HashMap;
use std::future::poll_fn;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};
use zeroize::Zeroizing;

/// Sealed bodies up to this many bytes (payload + tag) are stored inline, without an allocation.
const INLINE: usize = 80;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a bus lock cannot leave the queue half-updated in a way that breaks memory safety;
    // keep serving rather than cascading the panic.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ---------------------------------------------------------------------------------------------------------
// Configuration

/// What a full subscription queue does with a new message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backpressure {
    /// The publisher waits until there is room (only publishers to this subscription wait).
    Block,
    /// The oldest message of the lowest non-empty level is dropped (or the new one, if it is lower than
    /// everything queued). Counted as `dropped`.
    #[default]
    DropOldest,
    /// This subscription does not get the message; `publish` returns [`Error::QueueFull`] after delivering to
    /// every other subscriber. Counted as `refused`.
    Fail,
}

/// Options of one subscription.
#[derive(Clone, Copy, Debug)]
pub struct SubOptions {
    /// Queue capacity in messages (at least 1). Default: the bus's.
    pub capacity: Option<usize>,
    /// What a full queue does. Default: [`Backpressure::DropOldest`].
    pub backpressure: Backpressure,
}

impl Default for SubOptions {
    fn default() -> Self {
        SubOptions { capacity: None, backpressure: Backpressure::DropOldest }
    }
}

/// Builds a [`Bus`].
pub struct BusBuilder {
    policy: Policy,
    sealed: bool,
    capacity: usize,
    rotate_after_messages: u64,
    rotate_after: Duration,
    identity: Option<Identity>,
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

/// Hashing for subscription ids (sequential `u64`s chosen by the bus, never by a peer): the splitmix64
/// finaliser instead of SipHash, whose flooding resistance is not needed for keys nobody else picks.
#[derive(Clone, Copy, Default)]
struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

// ---------------------------------------------------------------------------------------------------------
// Metrics

#[derive(Default)]
struct Counters {
    malformed: AtomicU64,
    auth_failed: AtomicU64,
    replayed: AtomicU64,
    expired: AtomicU64,
    unknown_key: AtomicU64,
    unauthorised: AtomicU64,
    // Counters of subscriptions and sender slots that are gone.
    retired_delivered: AtomicU64,
    retired_received: AtomicU64,
    retired_dropped: AtomicU64,
    retired_refused: AtomicU64,
}

/// A snapshot of the bus counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    /// Messages the broker accepted from publishers.
    pub published: u64,
    /// Messages placed in subscription queues.
    pub delivered: u64,
    /// Messages handed to subscribers after their checks.
    pub received: u64,
    /// Messages dropped by `DropOldest` back-pressure.
    pub dropped: u64,
    /// Messages refused by `Fail` back-pressure.
    pub refused: u64,
    /// Envelopes rejected as truncated or malformed.
    pub rejected_malformed: u64,
    /// Envelopes rejected because the tag failed (forged or wrongly keyed).
    pub rejected_auth: u64,
    /// Envelopes rejected as replays or reordered beyond the window.
    pub rejected_replayed: u64,
    /// Envelopes rejected under an expired (erased) epoch.
    pub rejected_expired: u64,
    /// Envelopes rejected for want of a key (unknown sender, subscription or epoch).
    pub rejected_unknown_key: u64,
    /// Operations or envelopes refused by the policy.
    pub rejected_unauthorised: u64,
    /// Messages no valid signed checkpoint covered in time (NATS sender authentication, docs/bus.md §9).
    pub rejected_unsigned: u64,
}

impl Metrics {
    /// Every rejected envelope or operation.
    pub fn rejected(&self) -> u64 {
        self.rejected_malformed
            + self.rejected_auth
            + self.rejected_replayed
            + self.rejected_expired
            + self.rejected_unknown_key
            + self.rejected_unauthorised
            + self.rejected_unsigned
    }
}

// ---------------------------------------------------------------------------------------------------------
// Broker state

/// A sender slot is found by (sender, topic).
type SlotKeyId = (AgentId, Arc<str>);

struct Inner {
    sealed: bool,
    identity: Identity,
    policy: Policy,
    capacity: usize,
    rotate_msgs: u64,
    rotate_age: Duration,
    subs: RwLock<HashMap<u64, Arc<SubShared>, IdHash>>,
    /// Bumped on every subscribe/unsubscribe: publishers' routing caches compare against it.
    gen_: AtomicU64,
    next_sub: AtomicU64,
    topics: Mutex<HashMap<Arc<str>, Arc<TopicState>>>,
    slots: Mutex<HashMap<SlotKeyId, Arc<SenderSlot>>>,
    sessions: Mutex<HashMap<AgentId, Arc<BrokerSession>>>,
    rng: Mutex<ChaCha20Rng>,
    counters: Counters,
}

impl Inner {
    /// A new route generation: publishers rebuild their cached routes. Called only under `subs`' write lock
    /// (the only writers), so a load and a store, not a locked read-modify-write.
    #[inline]
    fn bump_gen(&self) {
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
struct BrokerSession {
    /// Seals grants to the agent.
    send: Aes256Gcm,
    /// Per-connection salt of sender-key derivation: a reconnect of the same identity gets new keys, so two
    /// connections never share a (key, nonce) pair.
    conn: [u8; 16],
}

struct TopicKeys {
    epoch: u32,
    secret: Zeroizing<[u8; 32]>,
    started: Instant,
}

struct TopicState {
    name: Arc<str>,
    epoch: AtomicU32,
    keys: Mutex<TopicKeys>,
}

/// Live publisher handles one agent may hold on one subject. Each handle owns a *stream* of the sender key:
/// the envelope's 64-bit sequence is `stream (24 bits) || counter (40 bits)`, and the broker keeps one replay
/// window per stream. Handles that publish concurrently therefore never race each other through a shared
/// window (a handle preempted between taking a sequence and reaching the broker would otherwise fall more
/// than 64 behind and be rejected as a replay), and a (key, nonce) pair still never repeats: a dropped
/// handle returns its stream, with its counter where it stopped, for the next handle to continue.
pub const MAX_PUBLISHERS: usize = 4096;
/// Bits of the sequence number that count within one stream.
const COUNTER_BITS: u32 = 40;

struct SlotKey {
    epoch: u32,
    aead: Aes256Gcm,
    /// One window per stream, indexed by stream id (ids are handed out densely from 0, so at most
    /// [`MAX_PUBLISHERS`] entries); grown only after an envelope of the stream authenticated.
    windows: Vec<Window>,
    count: u64,
    started: Instant,
}

/// The broker's state for one (sender, topic): the sender keys of the current and previous epoch (older ones
/// are erased: `Aes256Gcm` zeroizes its schedule on drop), their replay windows and counters.
struct SenderSlot {
    topic: Arc<TopicState>,
    published: AtomicU64,
    /// Plain-mode publisher handles' own counters (each has one writer, so counting is a plain store, not a
    /// read-modify-write); folded into `published` when the handle drops, under this lock.
    handles: Mutex<Vec<Arc<AtomicU64>>>,
    keys: Mutex<Vec<SlotKey>>,
}

fn derive_send_key(secret: &[u8; 32], topic: &str, sender: &AgentId, conn: &[u8; 16]) -> Result<Zeroizing<[u8; 32]>> {
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
const GRANT_AAD: &[u8] = b"pqkit-bus grant v1";
const GRANT_LEN: usize = 12 + 1 + 8 + 4 + 32 + 16;

impl Inner {
    fn random<const N: usize>(&self) -> Zeroizing<[u8; N]> {
        let mut b = Zeroizing::new([0u8; N]);
        lock(&self.rng).fill(b.as_mut());
        b
    }

    fn seal_grant(&self, s: &BrokerSession, kind: u8, id: u64, epoch: u32, key: &[u8; 32]) -> Result<Vec<u8>> {
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

    fn count(&self, e: &Error) {
        let c = &self.counters;
        let a = match e {
            Error::Malformed { .. } | Error::PayloadTooLarge { .. } => &c.malformed,
            Error::AuthFailed => &c.auth_failed,
            Error::Replayed { .. } => &c.replayed,
            Error::Expired { .. } => &c.expired,
            Error::UnknownKey => &c.unknown_key,
            Error::Unauthorised { .. } => &c.unauthorised,
            _ => return,
        };
        a.fetch_add(1, Ordering::Relaxed);
    }

    fn counted<T>(&self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            self.count(e);
        }
        r
    }

    fn topic(&self, name: &str) -> Result<Arc<TopicState>> {
        let mut t = lock(&self.topics);
        if let Some(s) = t.get(name) {
            return Ok(s.clone());
        }
        let name: Arc<str> = Arc::from(name);
        let s = Arc::new(TopicState {
            name: name.clone(),
            epoch: AtomicU32::new(1),
            keys: Mutex::new(TopicKeys { epoch: 1, secret: self.random::<32>(), started: Instant::now() }),
        });
        t.insert(name, s.clone());
        Ok(s)
    }

    /// Advances a topic to a fresh epoch secret if it is still at `from` (the old secret is zeroized on drop).
    fn rotate_topic(&self, t: &TopicState, from: u32) {
        let mut k = lock(&t.keys);
        // At the last epoch number (2^32 rotations) the key stays: numbers never wrap back to an erased epoch.
        if k.epoch == from && from < u32::MAX {
            *k = TopicKeys { epoch: from + 1, secret: self.random::<32>(), started: Instant::now() };
            t.epoch.store(from + 1, Ordering::Release);
        }
    }

    /// Authorises `sender` on `topic` and returns the broker's slot and (sealed mode) the sealed sender-key grant.
    fn grant_send(&self, sender: AgentId, topic: &str) -> Result<(Arc<SenderSlot>, Option<Vec<u8>>)> {
        validate_subject(topic)?;
        if !self.policy.may_publish(&sender, topic) {
            return self.counted(Err(Error::Unauthorised { action: "publish", subject: topic.into() }));
        }
        let ts = self.topic(topic)?;
        let slot = {
            let mut slots = lock(&self.slots);
            slots
                .entry((sender, ts.name.clone()))
                .or_insert_with(|| {
                    Arc::new(SenderSlot {
                        topic: ts.clone(),
                        published: AtomicU64::new(0),
                        handles: Mutex::new(Vec::new()),
                        keys: Mutex::new(Vec::new()),
                    })
                })
                .clone()
        };
        if !self.sealed {
            return Ok((slot, None));
        }
        let session = lock(&self.sessions).get(&sender).cloned().ok_or(Error::UnknownKey)?;
        let (epoch, key) = {
            let mut k = lock(&ts.keys);
            if k.started.elapsed() >= self.rotate_age {
                let e = k.epoch;
                drop(k);
                self.rotate_topic(&ts, e);
                k = lock(&ts.keys);
            }
            (k.epoch, derive_send_key(&k.secret, topic, &sender, &session.conn)?)
        };
        {
            let mut keys = lock(&slot.keys);
            // A second grant in the same epoch (another publisher handle) derives the same key: the slot key,
            // its replay windows and its counters are kept, never reset (a reset would let the envelopes
            // already accepted under this epoch be replayed).
            keys.retain(|k| k.epoch.saturating_add(1) >= epoch);
            if !keys.iter().any(|k| k.epoch == epoch) {
                keys.push(SlotKey {
                    epoch,
                    aead: Aes256Gcm::new(key.as_ref())?,
                    windows: Vec::new(),
                    count: 0,
                    started: Instant::now(),
                });
            }
            keys.sort_by_key(|k| k.epoch);
            while keys.len() > 2 {
                keys.remove(0);
            }
        }
        let g = self.seal_grant(&session, 1, 0, epoch, &key)?;
        Ok((slot, Some(g)))
    }

    /// The broker's check of a sealed publish envelope in `buf` (header already parsed into `m`): key by
    /// epoch, replay window, tag; decrypts in place. Counts rejections.
    fn accept(&self, slot: &SenderSlot, m: &envelope::Meta, buf: &mut [u8]) -> Result<()> {
        let r = self.accept_inner(slot, m, buf);
        self.counted(r)
    }

    fn accept_inner(&self, slot: &SenderSlot, m: &envelope::Meta, buf: &mut [u8]) -> Result<()> {
        let rotate_from;
        {
            let mut keys = lock(&slot.keys);
            let oldest = keys.first().map(|k| k.epoch).ok_or(Error::UnknownKey)?;
            let Some(k) = keys.iter_mut().find(|k| k.epoch == m.epoch) else {
                return Err(if m.epoch < oldest { Error::Expired { epoch: m.epoch } } else { Error::UnknownKey });
            };
            let stream = (m.seq >> COUNTER_BITS) as usize;
            if stream >= MAX_PUBLISHERS {
                return Err(Error::Malformed { reason: "sequence stream out of range" });
            }
            if let Some(w) = k.windows.get(stream) {
                w.check(m.seq)?;
            }
            let aad_len = m.aad_len();
            let (aad, rest) = buf.split_at_mut(aad_len);
            let (body, tag) = rest.split_at_mut(rest.len() - TAG_LEN);
            let nonce = envelope::nonce(Kind::Publish, m.priority, m.seq);
            k.aead.open_in_place_detached(&nonce, aad, body, tag).map_err(|_| Error::AuthFailed)?;
            if k.windows.len() <= stream {
                k.windows.resize(stream + 1, Window::default());
            }
            k.windows[stream].commit(m.seq);
            rotate_from = self.count_sent(slot, k);
        }
        if let Some(e) = rotate_from {
            self.rotate_topic(&slot.topic, e);
        }
        Ok(())
    }

    /// Counts one message against the sender key `k` of `slot` (called with `slot.keys` held); returns the epoch
    /// to rotate from when the count or the age is due.
    #[inline]
    fn count_sent(&self, slot: &SenderSlot, k: &mut SlotKey) -> Option<u32> {
        k.count += 1;
        let due = k.count >= self.rotate_msgs || (k.count & 1023 == 0 && k.started.elapsed() >= self.rotate_age);
        // In sealed mode every writer of `published` holds `slot.keys`: a plain store, no read-modify-write.
        slot.published.store(slot.published.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        due.then_some(k.epoch)
    }

    /// Broker side of a local sealed publish (a method call on the agent's handle, docs/bus.md §3 "Local
    /// publishes"): no envelope to open; the sender's grant for `epoch` must still be held (current or previous
    /// epoch, else `Expired` / `UnknownKey`), and the message counts towards rotation.
    fn accept_local(&self, slot: &SenderSlot, epoch: u32) -> Result<()> {
        let rotate_from;
        {
            let mut keys = lock(&slot.keys);
            let oldest = keys.first().map(|k| k.epoch).ok_or(Error::UnknownKey)?;
            let Some(k) = keys.iter_mut().find(|k| k.epoch == epoch) else {
                return Err(if epoch < oldest { Error::Expired { epoch } } else { Error::UnknownKey });
            };
            rotate_from = self.count_sent(slot, k);
        }
        if let Some(e) = rotate_from {
            self.rotate_topic(&slot.topic, e);
        }
        Ok(())
    }

    fn matching(&self, topic: &str) -> Arc<[Arc<SubShared>]> {
        let subs = self.subs.read().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<Arc<SubShared>> =
            subs.values().filter(|s| matches(s.pattern.as_str(), topic)).cloned().collect();
        v.sort_by_key(|s| s.id);
        v.into()
    }

    /// Routes a plaintext to every subscription in `subs`, blocking on `Block` queues.
    fn route(&self, subs: &[Arc<SubShared>], out: &Outgoing<'_>) -> Result<usize> {
        let mut t = Tally::default();
        for s in subs {
            t.add(s.enqueue_waiting(lock(&s.state), self, out).1);
        }
        t.result(&out.route.topic)
    }

    /// [`route`](Self::route) for a sealed publisher handle: each delivery is sealed on this thread under the
    /// handle's own stream of the subscription's key (`streams[i]` for `subs[i]`), outside the queue lock
    /// (docs/bus.md §3, "Delivery streams").
    fn route_streams(&self, subs: &[Arc<SubShared>], links: &mut [SubLink], out: &Outgoing<'_>) -> Result<usize> {
        let mut t = Tally::default();
        for (s, link) in subs.iter().zip(links.iter_mut()) {
            if matches!(link.lane, LaneSlot::None) {
                link.lane = s.new_lane();
            }
            t.add(s.lane_enqueue_sealed(self, link, out));
        }
        t.result(&out.route.topic)
    }

    /// [`route`](Self::route) for a plain publisher handle: each delivery goes into the handle's lane of the
    /// subscription (`links[i]` for `subs[i]`; docs/bus.md §6), under the lane's lock only.
    #[inline(always)]
    fn route_lanes(&self, subs: &[Arc<SubShared>], links: &mut [SubLink], out: &Outgoing<'_>) -> Result<usize> {
        let mut t = Tally::default();
        for (s, link) in subs.iter().zip(links.iter_mut()) {
            let r = match &link.lane {
                LaneSlot::Lane(lane) => s.lane_enqueue_plain(self, lane, out),
                LaneSlot::Main => s.enqueue_locked(self, out),
                LaneSlot::None => {
                    link.lane = s.new_lane();
                    match &link.lane {
                        LaneSlot::Lane(lane) => s.lane_enqueue_plain(self, lane, out),
                        _ => s.enqueue_locked(self, out),
                    }
                }
            };
            t.add(r);
        }
        t.result(&out.route.topic)
    }

    /// [`route`](Self::route) for a batch of plain messages of one route and priority: each subscription's
    /// lock is taken once for the whole batch (released only while a `Block` queue waits for room).
    fn route_batch<P: AsRef<[u8]>>(
        &self,
        subs: &[Arc<SubShared>],
        route: &Arc<Route>,
        priority: Priority,
        payloads: &[P],
    ) -> Result<usize> {
        let mut t = Tally::default();
        for s in subs {
            let mut st = lock(&s.state);
            for p in payloads {
                let out = Outgoing { priority, route, payload: p.as_ref() };
                let r;
                (st, r) = s.enqueue_waiting(st, self, &out);
                t.add(r);
            }
        }
        t.result(&route.topic)
    }

    /// [`route`](Self::route) for async publishers: waits on `Block` queues without blocking the thread.
    async fn route_async(&self, subs: &[Arc<SubShared>], out: &Outgoing<'_>) -> Result<usize> {
        let mut t = Tally::default();
        for s in subs {
            let r = poll_fn(|cx| {
                let mut st = lock(&s.state);
                match s.try_enqueue(&mut st, self, out) {
                    Enq::Full if s.backpressure == Backpressure::Block => {
                        st.send_wakers.push(cx.waker().clone());
                        Poll::Pending
                    }
                    r => Poll::Ready(r),
                }
            })
            .await;
            t.add(r);
        }
        t.result(&out.route.topic)
    }

    fn ingest(&self, bytes: &[u8]) -> Result<usize> {
        let m = self.counted(envelope::parse(bytes))?;
        let want = if self.sealed { Kind::Publish } else { Kind::Plain };
        if m.kind != want {
            return self.counted(Err(Error::Malformed { reason: "wrong envelope kind for this bus" }));
        }
        let topic = std::str::from_utf8(&bytes[m.topic.clone()]).map_err(|_| Error::Malformed { reason: "topic" })?;
        let reply = std::str::from_utf8(&bytes[m.reply.clone()]).map_err(|_| Error::Malformed { reason: "reply" })?;
        let mut buf = bytes.to_vec();
        if self.sealed {
            let slot = lock(&self.slots).get(&(m.sender, Arc::<str>::from(topic))).cloned();
            let Some(slot) = slot else { return self.counted(Err(Error::UnknownKey)) };
            self.accept(&slot, &m, &mut buf)?;
        } else {
            if !self.policy.may_publish(&m.sender, topic) {
                return self.counted(Err(Error::Unauthorised { action: "publish", subject: topic.into() }));
            }
            if let Some(slot) = lock(&self.slots).get(&(m.sender, Arc::<str>::from(topic))) {
                slot.published.fetch_add(1, Ordering::Relaxed);
            }
        }
        let route = Arc::new(Route {
            topic: Arc::from(topic),
            sender: m.sender,
            reply: (!reply.is_empty()).then(|| reply.into()),
        });
        let subs = self.matching(topic);
        let out = Outgoing { priority: m.priority, route: &route, payload: &buf[m.payload.clone()] };
        self.route(&subs, &out)
    }
}

// ---------------------------------------------------------------------------------------------------------
// Subscriptions: shared queue state

/// A message body: sealed (ciphertext || tag) or plain, inline when short.
#[derive(Clone)]
pub(crate) enum Body {
    Inline { len: u8, buf: [u8; INLINE] },
    Heap(Vec<u8>),
}

impl Body {
    const EMPTY: Body = Body::Inline { len: 0, buf: [0; INLINE] };

    /// Replaces the contents with `b`, in place when it fits inline.
    #[inline]
    fn set(&mut self, b: &[u8]) {
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
    fn as_slice(&self) -> &[u8] {
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
fn with_aad<R>(h: &Header<'_>, f: impl FnOnce(&[u8]) -> R) -> R {
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
    topic: Arc<str>,
    sender: AgentId,
    reply: Option<Box<str>>,
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
fn seal_delivery(
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
const STREAM_STACK: usize = 256;

struct Outgoing<'a> {
    priority: Priority,
    route: &'a Arc<Route>,
    payload: &'a [u8],
}

/// Delivery streams per delivery key (stream ids `0..MAX_DELIVER_STREAMS`; 0 is the broker's own, sealed under
/// the queue lock). A publisher handle past the cap falls back to stream 0 (docs/bus.md §3, "Delivery streams").
const MAX_DELIVER_STREAMS: u32 = 1 << 16;

/// One delivery key of a subscription (one delivery epoch): held by the subscription while current, and by
/// the publisher handles sealing under it (an old one is erased when the last of them lets it go).
struct DeliverKey {
    epoch: u32,
    aead: Aes256Gcm,
    /// The key's stream ids for publisher handles (from 1; 0 is the broker's).
    streams: Mutex<DeliverPool>,
}

/// Stream ids of one delivery key: never handed out from `next` on, returned ones with their counters.
struct DeliverPool {
    next: u32,
    free: Vec<(u32, [u64; LEVELS])>,
}

/// The broker's delivery keys of one subscription.
struct DeliverKeys {
    cur: Arc<DeliverKey>,
    /// Stream 0's counters per level.
    seqs: [u64; LEVELS],
    count: u64,
    /// The count at which the age is checked next (every 1024 messages; the count may move in steps).
    next_age: u64,
    started: Instant,
    session: Arc<BrokerSession>,
}

impl DeliverKeys {
    fn new_key(inner: &Inner, session: &BrokerSession, sub: u64, epoch: u32) -> Option<(Arc<DeliverKey>, Vec<u8>)> {
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
struct DeliverStream {
    key: Option<Arc<DeliverKey>>,
    /// The subscription the key belongs to.
    sub: u64,
    id: u32,
    next: [u64; LEVELS],
    /// The subscription moved to a newer key: take a stream of it before the next message.
    stale: bool,
}

impl DeliverStream {
    /// A stream of `key`, or `None` when its ids are used up (the caller then seals under the lock).
    fn take(key: &Arc<DeliverKey>, sub: u64) -> Option<DeliverStream> {
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
const MAX_LANES: usize = 16;
/// Capacity a lane reserves at most at once (and at most a sixteenth of the subscription's).
const CREDIT_CHUNK: usize = 1024;

/// One publisher handle's sub-queue in one subscription (docs/bus.md §6, "Per-producer sub-queues"): its own
/// lock and store on their own cache lines, so two producers into one subscription share no line per message.
#[repr(align(128))]
struct Lane {
    st: Mutex<LaneState>,
}

#[derive(Default)]
struct LaneState {
    q: MsgQueue<Route>,
    /// Slots of the subscription's capacity reserved for this lane (one spent per message).
    credit: usize,
    /// Messages pushed and not yet added to the subscription's `delivered` and its delivery key's count.
    unfolded: u64,
    /// Delivery epochs of the queued messages with their counts (sealed), in epoch order.
    live: std::collections::VecDeque<(u32, u64)>,
    /// Set by a receiver about to wait (docs/bus.md §6, "Wake-ups"): the next push wakes it.
    wake: bool,
    closed: bool,
    /// The subscription's current delivery epoch (sealed; 0 before the first key), set under both locks.
    epoch: u32,
}

/// A publisher handle's place in one subscription: its delivery stream (sealed) and its lane.
#[derive(Default)]
struct SubLink {
    ds: DeliverStream,
    lane: LaneSlot,
}

#[cfg(test)]
impl SubLink {
    fn lane_ref(&self) -> &Lane {
        match &self.lane {
            LaneSlot::Lane(l) => l,
            _ => panic!("no lane"),
        }
    }
}

#[derive(Default)]
enum LaneSlot {
    /// Not asked for yet (made on the first delivery).
    #[default]
    None,
    Lane(Arc<Lane>),
    /// The subscription had `MAX_LANES` live lanes: this handle uses the main queue.
    Main,
}

struct SubState {
    /// Queued messages (sealed ones still sealed: opened in place when received), see [`MsgQueue`].
    q: MsgQueue<Route>,
    closed: bool,
    recv_waiters: u32,
    send_waiters: u32,
    waker: Option<Waker>,
    send_wakers: Vec<Waker>,
    keys: Option<Box<DeliverKeys>>,
    /// The subscriber's session (sealed mode): delivery-key grants are sealed under it.
    session: Option<Arc<BrokerSession>>,
    grants: Vec<Vec<u8>>,
    /// Delivery epochs of the queued messages in epoch order, with their counts: the subscriber erases a key
    /// once no queued message needs it.
    live: std::collections::VecDeque<(u32, u64)>,
    delivered: u64,
    dropped: u64,
    refused: u64,
    /// The publisher handles' lanes, oldest first (merged in this order).
    lanes: Vec<Arc<Lane>>,
    /// Capacity held by the lanes: their queued messages plus their credit.
    lane_held: usize,
    /// The delivery epoch last written into the lanes.
    lane_epoch: u32,
    /// The lane whose turn it is, or where to look for the next, when several lanes are busy (docs/bus.md §8,
    /// fair sharing), and how many messages its turn may still take (0: the turn is over).
    lane_turn: usize,
    turn_left: usize,
}

struct SubShared {
    id: u64,
    pattern: Pattern,
    backpressure: Backpressure,
    capacity: usize,
    state: Mutex<SubState>,
    not_empty: Condvar,
    not_full: Condvar,
    /// Messages handed to the subscriber (added once per batch).
    received: AtomicU64,
}

/// `n` more queued messages of delivery epoch `epoch` in `live` (kept in epoch order).
#[inline]
fn live_add_n(live: &mut std::collections::VecDeque<(u32, u64)>, epoch: u32, n: u64) {
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
    fn live_add(&mut self, epoch: u32) {
        live_add_n(&mut self.live, epoch, 1);
    }

    /// The subscription's delivery keys, made when the first message is routed here (not at subscribe);
    /// rotated when due. `None` without a session (plain) or when a key could not be made.
    #[inline]
    fn deliver_keys(&mut self, inner: &Inner, sub: u64) -> Option<&mut DeliverKeys> {
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
    fn live_dec(&mut self, epoch: u32) {
        self.live_sub(epoch, 1);
    }

    /// `n` queued messages of delivery epoch `epoch` left the queue.
    #[inline]
    fn live_sub(&mut self, epoch: u32, n: u64) {
        if let Some(x) = self.live.iter_mut().find(|x| x.0 == epoch) {
            x.1 = x.1.saturating_sub(n);
        }
        while self.live.front().is_some_and(|x| x.1 == 0) {
            self.live.pop_front();
        }
    }
}

/// A subscription pattern, stored inline when short (one allocation less per subscribe).
enum Pattern {
    Inline { len: u8, buf: [u8; 48] },
    Heap(Box<str>),
}

impl Pattern {
    fn new(p: &str) -> Pattern {
        if p.len() <= 48 {
            let mut buf = [0u8; 48];
            buf[..p.len()].copy_from_slice(p.as_bytes());
            Pattern::Inline { len: p.len() as u8, buf }
        } else {
            Pattern::Heap(p.into())
        }
    }
    fn as_str(&self) -> &str {
        match self {
            // Copied from a `&str` at a character boundary (the whole string): always UTF-8.
            Pattern::Inline { len, buf } => std::str::from_utf8(&buf[..*len as usize]).unwrap_or(""),
            Pattern::Heap(s) => s,
        }
    }
}

enum Enq {
    Done,
    Dropped,
    Full,
    Closed,
}

/// What one publish did across its subscriptions: deliveries made, and refusals for lack of room.
#[derive(Default)]
struct Tally {
    n: usize,
    full: usize,
}

impl Tally {
    #[inline(always)]
    fn add(&mut self, r: Enq) {
        match r {
            Enq::Done => self.n += 1,
            Enq::Full => self.full += 1,
            Enq::Dropped | Enq::Closed => {}
        }
    }

    /// The publish's result: the number of deliveries, or [`Error::QueueFull`] with the number of refusals.
    #[inline(always)]
    fn result(self, topic: &str) -> Result<usize> {
        if self.full > 0 {
            return Err(Error::QueueFull { subject: topic.to_string(), full: self.full });
        }
        Ok(self.n)
    }
}

impl SubShared {
    /// Closes the subscription; returns its (delivered, dropped, refused) counts as they stand once closed
    /// (read under the same lock, so a closing `Subscription` needs no second one).
    fn close(&self) -> (u64, u64, u64) {
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
    fn notify_locked(&self, st: &mut SubState) {
        if st.recv_waiters > 0 {
            self.not_empty.notify_one();
        }
        if let Some(w) = st.waker.take() {
            w.wake();
        }
    }

    /// A lane push found its lane's `wake` set: wakes the receiver under the state lock.
    #[cold]
    fn wake_receiver(&self) {
        let mut st = lock(&self.state);
        self.notify_locked(&mut st);
    }

    /// The delivery keys (made or rotated when due, see [`SubState::deliver_keys`]); a new current epoch is
    /// written into every lane under its lock (so a lane push, which checks it under that lock, never seals
    /// under a key older than the previous one; docs/bus.md §6, "Rotation and keys").
    #[inline]
    fn keys<'a>(&self, st: &'a mut SubState, inner: &Inner) -> Option<&'a mut DeliverKeys> {
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
    fn fold(st: &mut SubState, ls: &mut LaneState) {
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
    fn merge_lanes(&self, st: &mut SubState, arm: bool) {
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
    fn reclaim_credit(&self, st: &mut SubState) {
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
    fn new_lane(&self) -> LaneSlot {
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
    fn refill(&self, inner: &Inner, lane: &Lane, priority: Priority) -> std::result::Result<(), Enq> {
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
    fn lane_enqueue_plain(&self, inner: &Inner, lane: &Lane, out: &Outgoing<'_>) -> Enq {
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
    fn lane_enqueue_sealed(&self, inner: &Inner, link: &mut SubLink, out: &Outgoing<'_>) -> Enq {
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
    fn on_full<'a>(
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
    fn enqueue_waiting<'a>(
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
    fn try_enqueue(&self, st: &mut SubState, inner: &Inner, out: &Outgoing<'_>) -> Enq {
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
    fn enqueue_locked(&self, inner: &Inner, out: &Outgoing<'_>) -> Enq {
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
    fn enqueue_stream(&self, inner: &Inner, ds: &mut DeliverStream, out: &Outgoing<'_>) -> Enq {
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

// ---------------------------------------------------------------------------------------------------------
// Public API

/// The in-process broker. Cheap to clone (all clones are the same bus).
#[derive(Clone)]
pub struct Bus {
    inner: Arc<Inner>,
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

    /// Feeds one publish envelope from a transport (the wire form of [`Publisher::seal`]) to the broker:
    /// parsed, authenticated under the sender's key, replay-checked and routed. Every rejection is counted in
    /// [`metrics`](Self::metrics) and returned; nothing unauthenticated is delivered. Returns the number of
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

/// The agent's end of its session.
struct AgentSession {
    /// Opens grants from the broker.
    recv: Aes256Gcm,
}

/// Opens a grant: returns (kind, id, epoch, key).
fn open_grant(s: &AgentSession, g: &[u8]) -> Result<(u8, u64, u32, Zeroizing<[u8; 32]>)> {
    if g.len() != GRANT_LEN {
        return Err(Error::Malformed { reason: "grant has the wrong length" });
    }
    let mut body = Zeroizing::new([0u8; GRANT_LEN - 12 - 16]);
    body.copy_from_slice(&g[12..GRANT_LEN - 16]);
    s.recv
        .open_in_place_detached(&g[..12], GRANT_AAD, body.as_mut(), &g[GRANT_LEN - 16..])
        .map_err(|_| Error::AuthFailed)?;
    let mut key = Zeroizing::new([0u8; 32]);
    key.copy_from_slice(&body[13..45]);
    let id = u64::from_be_bytes(body[1..9].try_into().map_err(|_| Error::Malformed { reason: "grant" })?);
    let epoch = u32::from_be_bytes(body[9..13].try_into().map_err(|_| Error::Malformed { reason: "grant" })?);
    Ok((body[0], id, epoch, key))
}

/// The agent's sender key for one topic and epoch, and the pool of its sequence streams (see
/// [`MAX_PUBLISHERS`]): each publisher handle takes one stream and alone counts in it, so no (key, nonce)
/// pair repeats and each stream reaches the broker in order.
struct SendKey {
    epoch: u32,
    aead: Aes256Gcm,
    streams: Mutex<StreamPool>,
}

#[derive(Default)]
struct StreamPool {
    /// Streams never handed out start here.
    next: u32,
    /// Returned streams: (id, next counter value).
    free: Vec<(u32, u64)>,
}

/// A publisher handle's stream of one sender key.
struct Stream {
    key: Arc<SendKey>,
    id: u32,
    next: u64,
}

impl Stream {
    fn take(key: Arc<SendKey>, topic: &str) -> Result<Stream> {
        let (id, next) = {
            let mut pool = lock(&key.streams);
            match pool.free.pop() {
                Some(s) => s,
                None if (pool.next as usize) < MAX_PUBLISHERS => {
                    pool.next += 1;
                    (pool.next - 1, 0)
                }
                None => return Err(Error::TooManyPublishers { subject: topic.into() }),
            }
        };
        Ok(Stream { key, id, next })
    }

    /// The next sequence number of this stream.
    fn seq(&mut self) -> Result<u64> {
        if self.next >= 1 << COUNTER_BITS {
            // Unreachable with rotation by count (capped below 2^40), kept so a nonce can never wrap.
            return Err(Error::Expired { epoch: self.key.epoch });
        }
        self.next += 1;
        Ok((u64::from(self.id) << COUNTER_BITS) | (self.next - 1))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        lock(&self.key.streams).free.push((self.id, self.next));
    }
}

struct AgentCore {
    inner: Arc<Inner>,
    public: PublicIdentity,
    session: Option<Arc<AgentSession>>,
    /// The broker's end of this connection (the broker's routing state for it; opaque to the agent).
    broker_session: Option<Arc<BrokerSession>>,
    sends: Mutex<HashMap<Arc<str>, Arc<SendKey>>>,
    pubs: Mutex<HashMap<String, Publisher>>,
}

/// A connected agent. Cheap to clone (clones share the connection).
#[derive(Clone)]
pub struct Agent {
    core: Arc<AgentCore>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").field("identity", &self.core.public).finish()
    }
}

impl AgentCore {
    /// The current sender key for `topic`, fetching a grant from the broker when the epoch moved on.
    fn send_key(&self, ts: &TopicState) -> Result<Arc<SendKey>> {
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

    fn cached<R>(&self, subject: &str, f: impl FnOnce(&mut Publisher) -> Result<R>) -> Result<R> {
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
        // locked instruction each; subscribe + unsubscribe is a benchmarked row, see docs/bus.md §8).
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

    fn inbox(&self) -> String {
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

/// A handle that publishes on one subject. Not shared between threads: give each producer its own.
pub struct Publisher {
    agent: Arc<AgentCore>,
    topic: Arc<str>,
    /// The route of this handle's messages without a reply-to (shared by all of them).
    plain_route: Arc<Route>,
    /// Messages this handle published in plain mode (this handle is its only writer; see `SenderSlot`).
    count: Arc<AtomicU64>,
    slot: Arc<SenderSlot>,
    key: Option<Stream>,
    route_gen: u64,
    route: Arc<[Arc<SubShared>]>,
    /// This handle's lane (and, sealed, its delivery stream) in each subscription of `route` (same index).
    links: Vec<SubLink>,
    buf: Vec<u8>,
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
    /// tests of [`Bus::ingest`]. Uses one sequence number.
    pub fn seal(&mut self, payload: &[u8], priority: Priority, reply_to: Option<&str>) -> Result<Vec<u8>> {
        self.build(payload, priority, reply_to)?;
        Ok(self.buf.clone())
    }

    /// Builds the envelope into `self.buf`; returns its header length.
    #[inline]
    fn build(&mut self, payload: &[u8], priority: Priority, reply_to: Option<&str>) -> Result<usize> {
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
    fn current_key(&mut self) -> Result<&mut Stream> {
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
    fn local_accept(&mut self, payload: &[u8], reply_to: Option<&str>) -> Result<()> {
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
    fn broker_accept(&mut self, hl: usize, priority: Priority, reply_len: usize) -> Result<std::ops::Range<usize>> {
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
    fn count_published(&self, n: u64) {
        self.count.store(self.count.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    /// The route of a message: the shared one, or a new one with the reply-to (already validated).
    #[inline]
    fn route_for(&self, reply_to: Option<&str>) -> Arc<Route> {
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

/// A received message.
#[derive(Clone)]
pub struct Message {
    route: Arc<Route>,
    priority: Priority,
    seq: u64,
    body: Body,
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

/// A received message borrowed from its subscription ([`Subscription::drain`]): the same accessors as
/// [`Message`], without an owned copy.
#[derive(Clone, Copy)]
pub struct MessageRef<'a> {
    route: &'a Route,
    priority: Priority,
    seq: u64,
    payload: &'a [u8],
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
fn open_body(
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
struct KeyRing {
    keys: Vec<(u32, Aes256Gcm, [Vec<u64>; LEVELS])>,
}

/// A subscription. Dropping it unsubscribes.
pub struct Subscription {
    inner: Arc<Inner>,
    shared: Arc<SubShared>,
    session: Option<Arc<AgentSession>>,
    ring: Option<KeyRing>,
    /// Messages taken from the queue under its lock, read (and opened in place) after it is released.
    batch: Batch<Route>,
    /// The lane the batch was last taken from directly (by swapping its buffers): once the batch is handed
    /// over, its emptied buffers go back to that lane, so the publisher's next messages land in memory the
    /// subscriber has just read (warm) instead of in the batch's previous buffers, last touched two rounds
    /// earlier (sealed fan-out to 100 subscriptions: twice the L2 between two writes of a buffer, docs/bus.md §8).
    back: Option<Arc<Lane>>,
    done: bool,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.shared.id)
            .field("pattern", &self.shared.pattern.as_str())
            .finish()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.close();
    }
}

impl Subscription {
    /// The subscription id.
    pub fn id(&self) -> u64 {
        self.shared.id
    }
    /// The pattern.
    pub fn pattern(&self) -> &str {
        self.shared.pattern.as_str()
    }
    /// Messages queued now (the publishers' lanes included).
    pub fn len(&self) -> usize {
        let mut st = lock(&self.shared.state);
        if !st.lanes.is_empty() {
            self.shared.merge_lanes(&mut st, false);
        }
        st.q.len()
    }
    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Messages dropped by `DropOldest` on this subscription.
    pub fn dropped(&self) -> u64 {
        lock(&self.shared.state).dropped
    }
    /// Messages refused by `Fail` on this subscription.
    pub fn refused(&self) -> u64 {
        lock(&self.shared.state).refused
    }

    fn close(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let i = &self.inner;
        {
            let mut subs = i.subs.write().unwrap_or_else(|e| e.into_inner());
            subs.remove(&self.shared.id);
            i.bump_gen();
        }
        let (delivered, dropped, refused) = self.shared.close();
        let c = &i.counters;
        // Only this handle adds to `received` (once per batch), and it is out of the map now: a load will do.
        let received = self.shared.received.load(Ordering::Relaxed);
        for (a, n) in [
            (&c.retired_delivered, delivered),
            (&c.retired_dropped, dropped),
            (&c.retired_refused, refused),
            (&c.retired_received, received),
        ] {
            if n > 0 {
                a.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// Unsubscribes; queued messages are discarded, later receives give [`Error::Closed`].
    pub fn unsubscribe(mut self) {
        self.close();
    }

    /// Feeds one delivery envelope from a transport into this subscription's queue; it is checked when
    /// received (a forged, replayed or wrongly keyed one is then dropped and counted).
    pub fn inject(&self, envelope: &[u8]) -> Result<()> {
        let m = self.inner.counted(envelope::parse(envelope))?;
        let topic: Arc<str> = Arc::from(std::str::from_utf8(&envelope[m.topic.clone()]).unwrap_or("?"));
        let reply = std::str::from_utf8(&envelope[m.reply.clone()]).unwrap_or("");
        let route = Arc::new(Route { topic, sender: m.sender, reply: (!reply.is_empty()).then(|| reply.into()) });
        if m.sub != self.shared.id && m.kind == Kind::Deliver {
            return self.inner.counted(Err(Error::UnknownKey));
        }
        let meta = Meta { seq: m.seq, len: 0, route: 0, epoch: m.epoch, kind: m.kind };
        let mut st = lock(&self.shared.state);
        if st.closed {
            return Err(Error::Closed);
        }
        st.q.push(m.priority, meta, &route, &envelope[m.payload.start..]);
        Ok(())
    }

    /// Takes the next queued delivery envelope in its wire form without opening it: the hook a transport
    /// uses to carry deliveries to a remote subscriber (which feeds them to its [`inject`](Self::inject)).
    pub fn take_envelope(&mut self) -> Result<Option<Vec<u8>>> {
        if self.take(1)? == 0 {
            return Ok(None);
        }
        let sub = self.shared.id;
        let mut env = None;
        self.batch.for_each(|priority, m, r, body| {
            let h = Header {
                kind: m.kind,
                priority,
                epoch: m.epoch,
                seq: m.seq,
                sender: r.sender,
                sub: if m.kind == Kind::Deliver { sub } else { 0 },
                topic: &r.topic,
                reply: r.reply.as_deref().unwrap_or(""),
            };
            let mut v = Vec::with_capacity(h.len() + body.len());
            h.append(&mut v);
            v.extend_from_slice(body);
            env = Some(v);
        });
        self.batch.clear();
        self.give_back();
        Ok(env)
    }

    /// The batch is handed over and cleared: its buffers go back to the lane it was taken from directly, if
    /// any (see `back`). Releases that lane reference either way, so no stale one outlives the hand-over (a
    /// lane's reference count tells whether its publisher handle is gone).
    fn give_back(&mut self) {
        if let Some(lane) = self.back.take() {
            let mut ls = lock(&lane.st);
            if !ls.closed {
                ls.q.give_back(&mut self.batch);
            }
        }
    }

    fn install_grants(&mut self, grants: Vec<Vec<u8>>, floor: Option<u32>) {
        let (Some(ring), Some(session)) = (self.ring.as_mut(), self.session.as_ref()) else { return };
        for g in grants {
            let Ok((kind, id, epoch, key)) = open_grant(session, &g) else {
                self.inner.count(&Error::AuthFailed);
                continue;
            };
            let newest = ring.keys.iter().map(|k| k.0).max().unwrap_or(0);
            if kind != 2 || id != self.shared.id || epoch <= newest {
                self.inner.count(&Error::Replayed { seq: epoch as u64 });
                continue;
            }
            let Ok(aead) = Aes256Gcm::new(key.as_ref()) else { continue };
            ring.keys.push((epoch, aead, Default::default()));
        }
        // Keep the newest key and every key a queued message still needs (normally the current and previous
        // epoch); older keys are dropped, which zeroizes them.
        let newest = ring.keys.iter().map(|k| k.0).max().unwrap_or(0);
        let keep_from = floor.unwrap_or(newest).min(newest.saturating_sub(1));
        ring.keys.retain(|k| k.0 >= keep_from);
    }

    /// Moves up to `max` queued messages into `self.batch` and installs pending grants, under one lock; wakes
    /// blocked publishers.
    fn take(&mut self, max: usize) -> std::result::Result<usize, Error> {
        // Every hand-over releases it; a take never sees its own stale lane reference in the counts below.
        self.back = None;
        let mut st = lock(&self.shared.state);
        // The one lane to take from directly: the main queue is empty and no other lane holds messages.
        let mut direct = None;
        // Whether `direct` is the lane whose turn it is (several lanes busy).
        let mut turn = false;
        if !st.lanes.is_empty() {
            if st.q.is_empty() {
                // A lane whose handle is gone is left to `merge_lanes`, which frees it; while one holds messages
                // there is no direct take, so that its epochs count in the floor below (a key its messages need
                // is not erased by grants installed after this take).
                let mut busy = st.lanes.iter().filter(|l| !lock(&l.st).q.is_empty());
                if let (Some(l), None) = (busy.next(), busy.next()) {
                    if Arc::strong_count(l) > 1 {
                        direct = Some(l.clone());
                    }
                } else {
                    direct = Self::lane_turn(&mut st);
                    turn = direct.is_some();
                }
            }
            if direct.is_none() {
                // The publishers' lanes first (docs/bus.md §6): order and aging are then those of one queue,
                // and the oldest epoch below covers every queued message.
                self.shared.merge_lanes(&mut st, false);
            }
        }
        let (floor, n) = if let Some(lane) = direct {
            // Taking from the lane with the main queue's aging state gives exactly what merging it into the
            // empty main queue and taking would (the same levels in the same order), without a third set of
            // buffers cycling between lane, main queue and batch. Its epochs join the main queue's first.
            let mut ls = lock(&lane.st);
            ls.wake = st.recv_waiters > 0 || st.waker.is_some();
            SubShared::fold(&mut st, &mut ls);
            for (e, c) in ls.live.drain(..) {
                live_add_n(&mut st.live, e, c);
            }
            let floor = st.live.front().map(|x| x.0);
            let n = ls.q.take_aged(&mut self.batch, max, &mut st.q.skips);
            st.lane_held -= n;
            if n > 0 {
                self.back = Some(lane.clone());
            }
            if turn {
                st.turn_left = st.turn_left.saturating_sub(n);
                if st.turn_left == 0 || ls.q.is_empty() {
                    st.turn_left = 0;
                    st.lane_turn += 1;
                }
            }
            drop(ls);
            if st.lanes.iter().any(|l| Arc::strong_count(l) == 1) {
                // Lanes of dropped handles: freed now (the taken messages are out already; anything left in
                // the lane goes to the main queue, in order).
                self.shared.merge_lanes(&mut st, false);
            }
            (floor, n)
        } else {
            if st.q.is_empty() && st.closed {
                self.batch.clear();
                return Err(Error::Closed);
            }
            // The oldest delivery epoch still needed: by this batch or by anything left queued.
            let floor = st.live.front().map(|x| x.0);
            (floor, st.q.take(&mut self.batch, max))
        };
        if !st.live.is_empty() {
            // Count the taken deliveries off their epochs, one run of equal epochs at a time (the counts do not
            // depend on the order).
            let mut run: Option<(u32, u64)> = None;
            for x in self.batch.metas().filter(|x| x.kind == Kind::Deliver) {
                match run.as_mut() {
                    Some((e, c)) if *e == x.epoch => *c += 1,
                    _ => {
                        if let Some((e, c)) = run.take() {
                            st.live_sub(e, c);
                        }
                        run = Some((x.epoch, 1));
                    }
                }
            }
            if let Some((e, c)) = run {
                st.live_sub(e, c);
            }
        }
        let grants = std::mem::take(&mut st.grants);
        if n > 0 {
            if st.send_waiters > 0 {
                self.shared.not_full.notify_all();
            }
            for w in st.send_wakers.drain(..) {
                w.wake();
            }
        }
        drop(st);
        if !grants.is_empty() {
            self.install_grants(grants, floor);
        }
        Ok(n)
    }

    /// Several live lanes hold messages and the main queue is empty: when every one of them holds messages of
    /// one and the same level only, the lane whose turn it is (round robin from `lane_turn`) to take from
    /// directly instead of merging them all (which copies every lane after the first into the main queue).
    /// Any order of whole lanes is an order the merge could give: one level (no aging between levels), FIFO
    /// within each lane, and no order across handles promised (docs/bus.md §8). The busy lanes'
    /// counts and epochs are folded into the subscription first, so the oldest queued epoch covers them all.
    fn lane_turn(st: &mut SubState) -> Option<Arc<Lane>> {
        let mut level = None;
        let mut busy = 0;
        for lane in &st.lanes {
            let ls = lock(&lane.st);
            if ls.q.is_empty() {
                continue;
            }
            // A lane whose handle is gone is left to `merge_lanes` (which frees it), and with it this take.
            if Arc::strong_count(lane) == 1 {
                return None;
            }
            let l = ls.q.single_level()?;
            if level.is_some_and(|x| x != l) {
                return None;
            }
            level = Some(l);
            busy += 1;
        }
        if busy < 2 {
            return None;
        }
        let n = st.lanes.len();
        let mut pick = None;
        for k in 0..n {
            let i = (st.lane_turn + k) % n;
            let lane = st.lanes[i].clone();
            let mut ls = lock(&lane.st);
            if ls.q.is_empty() {
                continue;
            }
            SubShared::fold(st, &mut ls);
            for (e, c) in ls.live.drain(..) {
                live_add_n(&mut st.live, e, c);
            }
            if pick.is_none() {
                // A turn lasts for the messages the lane held when it began (a lane filled as fast as it is
                // taken cannot keep the others waiting), or until the lane is empty.
                if i != st.lane_turn || st.turn_left == 0 {
                    st.turn_left = ls.q.len();
                }
                st.lane_turn = i;
                drop(ls);
                pick = Some(lane);
            }
        }
        pick
    }

    /// Opens the taken batch's messages in place (sealed subscriptions) and hands each valid one to `f` in
    /// delivery order, with its shared route; rejected ones are counted and skipped. Empties the batch and
    /// returns how many reached `f` (also added to the `received` metric).
    #[inline]
    fn hand_over(&mut self, mut f: impl FnMut(MessageRef<'_>, &Arc<Route>, &Meta)) -> usize {
        let Subscription { inner, shared, ring, batch, .. } = self;
        let sub = shared.id;
        let mut n = 0;
        batch.for_each(|priority, m, route, body| {
            if let Ok(len) = inner.counted(open_body(ring.as_mut(), sub, priority, m, route, body)) {
                n += 1;
                f(MessageRef { route, priority, seq: m.seq, payload: &body[..len] }, route, m);
            }
        });
        batch.clear();
        shared.received.fetch_add(n as u64, Ordering::Relaxed);
        self.give_back();
        n
    }

    /// Receives up to `max` messages without waiting, appending them to `out`; returns how many were
    /// appended (0 if none are queued; rejected envelopes are dropped and counted). One lock per batch; the
    /// messages are opened in place in the subscription's batch buffer, then copied into owned [`Message`]s
    /// ([`drain`](Self::drain) skips that copy).
    pub fn recv_batch(&mut self, out: &mut Vec<Message>, max: usize) -> Result<usize> {
        let n = self.take(max)?;
        let start = out.len();
        let mut w = start;
        let got = self.hand_over(|r, route, _| {
            if w == out.len() {
                // Room for the whole batch at once, as clones of this message's record: each message is then
                // written where it lies (fields and body in place) instead of being built on the stack and
                // moved, whose reload stalls on store forwarding; the clones share this route's count.
                let head = Message { route: route.clone(), priority: r.priority, seq: r.seq, body: Body::EMPTY };
                out.resize(start + n, head);
            }
            let Some(m) = out.get_mut(w) else { return };
            if !Arc::ptr_eq(&m.route, route) {
                m.route = route.clone();
            }
            m.priority = r.priority;
            m.seq = r.seq;
            m.body.set(r.payload);
            w += 1;
        });
        // Rejected (counted) envelopes leave their room unused.
        out.truncate(w);
        Ok(got)
    }

    /// Receives up to `max` messages without waiting and without copying them: calls `f` with each, in
    /// delivery order, as a [`MessageRef`] borrowing the subscription's buffer (sealed messages are checked
    /// and opened in place there; rejected ones are dropped and counted, never passed to `f`). Returns how
    /// many reached `f` (0 if none are queued). The queue's lock is taken once and released before `f` runs,
    /// so `f` may publish, even to this subscription's subjects. The fastest receive of the bus: no record,
    /// no reference count and no allocation per message.
    pub fn drain(&mut self, max: usize, mut f: impl FnMut(MessageRef<'_>)) -> Result<usize> {
        self.take(max)?;
        Ok(self.hand_over(|r, _, _| f(r)))
    }

    /// Receives one message without waiting.
    pub fn try_recv(&mut self) -> Result<Option<Message>> {
        loop {
            if self.take(1)? == 0 {
                return Ok(None);
            }
            let mut one = None;
            self.hand_over(|r, route, _| {
                one = Some(Message {
                    route: route.clone(),
                    priority: r.priority,
                    seq: r.seq,
                    body: Body::from_slice(r.payload, 0),
                })
            });
            if one.is_some() {
                return Ok(one);
            }
        }
    }

    /// Waits for one message.
    pub fn recv(&mut self) -> Result<Message> {
        self.recv_deadline(None)
    }

    /// Waits up to `timeout` for one message ([`Error::Timeout`] after).
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Message> {
        self.recv_deadline(Some(Instant::now() + timeout))
    }

    fn recv_deadline(&mut self, deadline: Option<Instant>) -> Result<Message> {
        loop {
            if let Some(m) = self.try_recv()? {
                return Ok(m);
            }
            let sh = &self.shared;
            let mut st = lock(&sh.state);
            // Each lane's `wake` is armed as it is looked at (docs/bus.md §6, "Wake-ups").
            st.recv_waiters += 1;
            loop {
                if !st.lanes.is_empty() {
                    sh.merge_lanes(&mut st, true);
                }
                if !st.q.is_empty() || st.closed || !st.grants.is_empty() {
                    break;
                }
                st = match deadline {
                    None => sh.not_empty.wait(st).unwrap_or_else(|e| e.into_inner()),
                    Some(d) => {
                        let now = Instant::now();
                        if now >= d {
                            st.recv_waiters -= 1;
                            return Err(Error::Timeout);
                        }
                        sh.not_empty.wait_timeout(st, d - now).unwrap_or_else(|e| e.into_inner()).0
                    }
                };
            }
            st.recv_waiters -= 1;
        }
    }

    /// Waits for one message without blocking the thread (any async runtime).
    pub async fn recv_async(&mut self) -> Result<Message> {
        loop {
            if let Some(m) = self.try_recv()? {
                return Ok(m);
            }
            let shared = self.shared.clone();
            poll_fn(|cx| {
                let mut st = lock(&shared.state);
                // The lanes' `wake` is armed as they are looked at (docs/bus.md §6, "Wake-ups").
                if !st.lanes.is_empty() {
                    shared.merge_lanes(&mut st, true);
                }
                if !st.q.is_empty() || st.closed || !st.grants.is_empty() {
                    Poll::Ready(())
                } else {
                    st.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            })
            .await;
        }
    }
}

#[cfg(test)]
mod lane_tests {
    use super::*;

    fn lanes(sub: &Subscription) -> (usize, usize) {
        let st = lock(&sub.shared.state);
        (st.lanes.len(), st.lane_held)
    }

    /// A handle's lane is made on its first delivery, freed (with its credit) at the first take after the
    /// handle is dropped, and the subscription holds at most `MAX_LANES`: later handles use the main queue,
    /// each still FIFO, nothing lost.
    #[test]
    fn lanes_are_bounded_and_freed_with_their_handles() {
        for sealed in [false, true] {
            let b = Bus::builder(Policy::allow_all());
            let bus = if sealed { b.build() } else { b.plain().build() }.unwrap();
            let a = bus.connect(&Identity::from_seed("lanes", &[5; 32]).unwrap()).unwrap();
            let mut sub = a.subscribe("l").unwrap();
            let mut p = a.publisher("l").unwrap();
            assert_eq!(lanes(&sub).0, 0, "no lane before the first delivery");
            p.publish(b"x", Priority::Normal).unwrap();
            assert_eq!(lanes(&sub).0, 1);
            assert!(lanes(&sub).1 >= 1, "the lane holds its message and credit");
            drop(p);
            let mut got = Vec::new();
            assert_eq!(sub.recv_batch(&mut got, 10).unwrap(), 1);
            assert_eq!(lanes(&sub), (0, 0), "a dropped handle's lane and credit are freed");

            let n = MAX_LANES + 4;
            let mut ps: Vec<_> = (0..n).map(|_| a.publisher("l").unwrap()).collect();
            for i in 0..5u8 {
                for (k, p) in ps.iter_mut().enumerate() {
                    p.publish(&[k as u8, i], Priority::Normal).unwrap();
                }
            }
            assert_eq!(lanes(&sub).0, MAX_LANES);
            got.clear();
            while sub.recv_batch(&mut got, 7).unwrap() > 0 {}
            assert_eq!(got.len(), 5 * n);
            let mut next = vec![0u8; n];
            for m in &got {
                let (k, i) = (m.payload()[0] as usize, m.payload()[1]);
                assert_eq!(i, next[k], "handle {k} out of order");
                next[k] += 1;
            }
            drop(ps);
            assert_eq!(sub.recv_batch(&mut got, 7).unwrap(), 0);
            assert_eq!(lanes(&sub), (0, 0));
            assert_eq!(bus.metrics().delivered, 1 + 5 * n as u64);
            // Messages still in a lane when the subscription goes count as delivered in the retired metrics.
            let mut p = a.publisher("l").unwrap();
            p.publish(b"y", Priority::Normal).unwrap();
            p.publish(b"z", Priority::Normal).unwrap();
            sub.unsubscribe();
            assert_eq!(bus.metrics().delivered, 3 + 5 * n as u64);
            assert!(matches!(p.publish(b"w", Priority::Normal), Ok(0)));
        }
    }

    /// A take from a lane gives the batch's buffers back to it and then lets go of it, by every receive path
    /// (`take_envelope` included): the subscription keeps no reference of its own, so a lane whose handle is
    /// dropped is seen as dead and freed (a live-looking dead lane would allow the direct take that 72fc5ca
    /// forbids while it holds messages).
    #[test]
    fn a_take_keeps_no_reference_to_the_lane() {
        for sealed in [false, true] {
            let b = Bus::builder(Policy::allow_all());
            let bus = if sealed { b } else { b.plain() }.build().unwrap();
            let a = bus.connect(&Identity::from_seed("a", &[1; 32]).unwrap()).unwrap();
            let mut sub = a.subscribe("t").unwrap();
            for way in 0..3 {
                let mut p = a.publisher("t").unwrap();
                p.publish(b"x", Priority::Normal).unwrap();
                p.publish(b"y", Priority::Normal).unwrap();
                assert_eq!(lanes(&sub).0, 1);
                let mut got = Vec::new();
                match way {
                    0 => assert!(sub.take_envelope().unwrap().is_some()),
                    1 => assert_eq!(sub.recv_batch(&mut got, 1).unwrap(), 1),
                    _ => assert_eq!(sub.drain(1, |_| {}).unwrap(), 1),
                }
                assert!(sub.back.is_none(), "way {way}: a lane reference outlived the hand-over");
                drop(p);
                // The dropped handle's lane still holds one message: merged (not taken directly), then freed.
                assert_eq!(sub.len(), 1, "way {way}");
                assert_eq!(lanes(&sub), (0, 0), "way {way}: the dead lane was freed");
                assert_eq!(sub.drain(10, |_| {}).unwrap(), 1);
            }
        }
    }
}

#[cfg(test)]
mod lane_turn_tests {
    use super::*;

    /// Two handles' lanes holding one level only are taken from directly, whole, in turns (no merge into the
    /// main queue): each take returns one lane's messages, the other lane's come next even while the first
    /// handle keeps publishing, each handle stays FIFO, and nothing is lost, plain and sealed (the epochs of
    /// the lane left waiting stay counted, so its key is never erased under it, even across rotations).
    #[test]
    fn busy_single_level_lanes_are_taken_in_turns() {
        for sealed in [false, true] {
            let b = Bus::builder(Policy::allow_all()).rotate_after_messages(7);
            let bus = if sealed { b.build() } else { b.plain().build() }.unwrap();
            let a = bus.connect(&Identity::from_seed("turn", &[8; 32]).unwrap()).unwrap();
            let mut sub = a.subscribe("t").unwrap();
            let mut ps = [a.publisher("t").unwrap(), a.publisher("t").unwrap()];
            let mut next = [0u8; 2];
            let mut sent = [0u8; 2];
            let mut got = Vec::new();
            let mut last = None;
            for round in 0..20 {
                for _ in 0..5 {
                    for (k, p) in ps.iter_mut().enumerate() {
                        p.publish(&[k as u8, sent[k]], Priority::Normal).unwrap();
                        sent[k] += 1;
                    }
                }
                got.clear();
                let n = sub.recv_batch(&mut got, 100).unwrap();
                assert!(n >= 5, "round {round}: a whole lane per take ({n})");
                let k = got[0].payload()[0] as usize;
                assert!(got.iter().all(|m| m.payload()[0] as usize == k), "one handle's lane");
                assert_eq!(n, usize::from(sent[k] - next[k]), "round {round}: the whole lane");
                assert_ne!(Some(k), last, "round {round}: the lanes take turns");
                last = Some(k);
                assert!(lock(&sub.shared.state).q.is_empty(), "nothing merged into the main queue");
                for m in &got {
                    assert_eq!(m.payload()[1], next[k], "handle {k} out of order");
                    next[k] += 1;
                }
            }
            assert!(next[0].abs_diff(next[1]) <= 10, "lanes taken in turns: {next:?}");
            got.clear();
            while sub.recv_batch(&mut got, 1000).unwrap() > 0 {}
            let total: usize = next.iter().map(|&x| x as usize).sum::<usize>() + got.len();
            assert_eq!(total, 200);
            assert_eq!(bus.metrics().rejected(), 0);
        }
    }

    /// A dropped handle's lane that still holds messages under an old key epoch keeps that key alive: a take
    /// while another handle's lane holds only newer epochs (and a rotation's grant is pending) does not go
    /// straight to that lane with a floor that leaves the dead lane's epochs out, so nothing is rejected.
    #[test]
    fn a_dead_lanes_old_epoch_survives_a_take_from_another_lane() {
        let bus = Bus::builder(Policy::allow_all()).rotate_after_messages(7).build().unwrap();
        let a = bus.connect(&Identity::from_seed("dead", &[12; 32]).unwrap()).unwrap();
        let mut sub = a.subscribe("t").unwrap();
        let mut pa = a.publisher("t").unwrap();
        for i in 0..8u8 {
            pa.publish(&[0, i], Priority::Normal).unwrap();
        }
        drop(pa);
        let mut pb = a.publisher("t").unwrap();
        for i in 0..3u8 {
            pb.publish(&[1, i], Priority::Normal).unwrap();
        }
        let mut got = Vec::new();
        while sub.recv_batch(&mut got, 4).unwrap() > 0 {}
        assert_eq!(bus.metrics().rejected(), 0);
        let mut a_seen: Vec<u8> = got.iter().filter(|m| m.payload()[0] == 0).map(|m| m.payload()[1]).collect();
        a_seen.sort_unstable();
        assert_eq!(a_seen, (0..8).collect::<Vec<u8>>(), "the dropped handle's messages all arrive");
        assert_eq!(got.len(), 11);
    }

    /// Partial takes continue the lane whose turn it is (so a handle's run is not interleaved with another's
    /// message by message), but a turn ends after the messages its lane held when it began: a handle that
    /// keeps its lane full cannot keep the other waiting.
    #[test]
    fn a_lane_turn_is_bounded() {
        let bus = Bus::builder(Policy::allow_all()).plain().build().unwrap();
        let a = bus.connect(&Identity::from_seed("turn3", &[10; 32]).unwrap()).unwrap();
        let mut sub = a.subscribe("t").unwrap();
        let mut pa = a.publisher("t").unwrap();
        let mut pb = a.publisher("t").unwrap();
        for i in 0..3u8 {
            pa.publish(&[0, i], Priority::Normal).unwrap();
        }
        pb.publish(&[1, 0], Priority::Normal).unwrap();
        let mut order = Vec::new();
        let mut got = Vec::new();
        for i in 3..9u8 {
            // A publishes one more before every take: its lane never empties.
            pa.publish(&[0, i], Priority::Normal).unwrap();
            got.clear();
            assert_eq!(sub.recv_batch(&mut got, 1).unwrap(), 1);
            order.push((got[0].payload()[0], got[0].payload()[1]));
        }
        // A's turn: the 4 it held when its turn began (3 + the one published before the first take); then B.
        assert_eq!(&order[..5], &[(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)], "{order:?}");
        assert_eq!(order[5], (0, 4));
    }

    /// Lanes holding different levels (or one lane two levels) are merged as before: priority order holds.
    #[test]
    fn lanes_of_several_levels_are_merged_in_priority_order() {
        let bus = Bus::builder(Policy::allow_all()).plain().build().unwrap();
        let a = bus.connect(&Identity::from_seed("turn2", &[9; 32]).unwrap()).unwrap();
        let mut sub = a.subscribe("t").unwrap();
        let mut p0 = a.publisher("t").unwrap();
        let mut p1 = a.publisher("t").unwrap();
        for i in 0..4u8 {
            p0.publish(&[0, i], Priority::Low).unwrap();
            p1.publish(&[1, i], Priority::High).unwrap();
        }
        let mut got = Vec::new();
        assert_eq!(sub.recv_batch(&mut got, 100).unwrap(), 8);
        assert!(got[..4].iter().all(|m| m.priority() == Priority::High), "the high level first");
        assert!(got[4..].iter().all(|m| m.priority() == Priority::Low));
    }
}

#[cfg(test)]
mod lane_rotation_tests {
    use super::*;

    /// A handle whose lane still has credit while other traffic rotates the subscription's delivery key twice
    /// (and the subscriber drains, erasing the old key) must not seal its next message under its old key:
    /// the lane carries the current epoch, the handle takes a stream of the new key, and nothing is rejected.
    #[test]
    fn a_lane_handle_follows_rotation() {
        let bus = Bus::builder(Policy::allow_all()).rotate_after_messages(3).build().unwrap();
        let a = bus.connect(&Identity::from_seed("rot-a", &[6; 32]).unwrap()).unwrap();
        let b = bus.connect(&Identity::from_seed("rot-b", &[7; 32]).unwrap()).unwrap();
        let mut sub = a.subscribe("rot").unwrap();
        let mut pa = a.publisher("rot").unwrap();
        let mut pb = b.publisher("rot").unwrap();
        let mut got = Vec::new();
        pa.publish(&[0], Priority::Normal).unwrap();
        sub.recv_batch(&mut got, 10).unwrap();
        let first = pa.links[0].ds.key.as_ref().map(|k| k.epoch).unwrap();
        for i in 1..20u8 {
            pb.publish(&[i], Priority::Normal).unwrap();
            while sub.recv_batch(&mut got, 100).unwrap() > 0 {}
        }
        let cur = lock(&sub.shared.state).keys.as_ref().map(|k| k.cur.epoch).unwrap();
        assert!(cur >= first + 2, "rotated twice: {first} -> {cur}");
        let held: Vec<u32> = sub.ring.as_ref().unwrap().keys.iter().map(|k| k.0).collect();
        assert!(!held.contains(&first), "the subscriber erased epoch {first}: {held:?}");
        assert!(lock(&pa.links[0].lane_ref().st).credit > 0, "A's lane still has credit (no refill on the way)");
        pa.publish(&[100], Priority::Normal).unwrap();
        while sub.recv_batch(&mut got, 100).unwrap() > 0 {}
        assert_eq!(got.len(), 21);
        assert_eq!(got.last().unwrap().payload(), [100]);
        assert_eq!(bus.metrics().rejected(), 0, "{:?}", bus.metrics());
        assert!(pa.links[0].ds.key.as_ref().unwrap().epoch + 1 >= cur);
    }
}
