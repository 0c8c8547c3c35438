//! Signed checkpoints: sender authentication against other members of a topic over NATS (docs/bus.md §9).
//!
//! Over NATS every subscriber of a topic holds its publishers' AEAD keys, so the AEAD alone cannot stop a
//! subscribing member from forging a message in a publisher's name. With checkpoints on, a publisher keeps the
//! **digest** of each envelope of one (topic, epoch, stream) exactly as it sends it and, every `N` messages or
//! `T` after the first unsigned one, publishes a **checkpoint** envelope ([`crate::envelope::Kind::Checkpoint`])
//! on the topic's own subject that lists those digests, signed with its hybrid identity (ML-DSA-65 + Ed25519)
//! and carrying its public identity. A subscriber with sender authentication on ([`Verifier`]) holds each
//! message it opened in a bounded per-(sender, topic, epoch, stream) buffer and releases it only when a
//! checkpoint that verifies under the identity whose [`AgentId`] is the claimed sender lists its digest at its
//! sequence.
//!
//! - `d = SHA-256(r (1) || reply || envelope)` over the NATS (v3) envelope exactly as sent (its header holds the
//!   epoch and sequence) and its NATS reply subject (empty for none: the NATS envelope does not carry it, so the
//!   digest binds it here). One hash pass per envelope on each side, and each message verifies on its own: a
//!   forged or lost envelope costs only itself, and a durable subscriber verifies a redelivered message against
//!   the checkpoint that covered it, so it acknowledges message by message.
//! - A batch is one run of consecutive sequences (`first..=last`, at most [`MAX_COVERED`]); the checkpoint
//!   header names the sender, topic, epoch and `last`, its body `first` and the digests in sequence order.
//! - Security contract: nothing a [`Verifier`] releases was sent by anyone but the holder of the sender's
//!   identity keys (forging needs both ML-DSA-65 and Ed25519 broken, or a SHA-256 second preimage or
//!   collision); an envelope whose digest is not the one signed for its sequence is rejected; what no valid
//!   checkpoint covers within the timeout is rejected; memory is bounded by [`SenderAuth`]. Rejections are
//!   tallied in [`Tally`], never released.

use crate::envelope::{self, CHECKPOINT_LABEL, Header, Kind, MAX_COVERED, STREAM_SHIFT};
use crate::identity::{AgentId, Identity, PublicIdentity};
use crate::queue::Priority;
use crate::{Error, Message, Result};
use pqkit::hash::sha2::Sha256;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default messages per checkpoint (`N`).
pub const DEFAULT_EVERY: u64 = 256;
/// Default largest batch in envelope bytes: a checkpoint follows once this much is unsigned, so a publisher of
/// large messages that waits for its subscriber (a credit window of a few MiB) does not wait for `T`.
pub const DEFAULT_MAX_BYTES: usize = 256 << 10;
/// Default longest wait between the first unsigned message and its checkpoint (`T`).
pub const DEFAULT_AFTER: Duration = Duration::from_millis(5);
/// Verified checkpoints (digest lists) a buffer keeps, to verify late arrivals and drop duplicate checkpoints.
const LISTS_KEPT: usize = 16;
/// Sender identities a verifier keeps decoded; the cache is emptied past it.
const MAX_IDENTITIES: usize = 256;

/// Publisher-side checkpoint settings of a topic pattern ([`crate::nats::NatsAgent::sign_checkpoints`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoints {
    /// Sign after this many messages (`N`, default 256, at least 1, at most [`MAX_COVERED`]).
    pub every: u64,
    /// Sign at the latest this long after the first unsigned message (`T`, default 5 ms).
    pub after: Duration,
    /// Sign once the batch's envelopes total this many bytes (default 256 KiB).
    pub max_bytes: usize,
}

impl Default for Checkpoints {
    fn default() -> Self {
        Checkpoints { every: DEFAULT_EVERY, after: DEFAULT_AFTER, max_bytes: DEFAULT_MAX_BYTES }
    }
}

/// Subscriber-side sender authentication settings ([`crate::nats::NatsAgent::subscribe_authenticated`]).
/// The buffer limits bound memory: at most `max_buffers × max_bytes` of held payload per subscription, plus
/// 16 digest lists (at most 32 bytes per covered message each) per buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderAuth {
    /// A message no valid checkpoint covers this long after it arrived is rejected (`rejected_unsigned`).
    /// Default `T + 1 s` = 1.005 s.
    pub timeout: Duration,
    /// Messages held per (sender, topic, epoch, stream) (default `4 N` = 1024); past it the oldest are rejected.
    pub max_messages: usize,
    /// Payload bytes held per (sender, topic, epoch, stream) (default 4 MiB); past it the oldest are rejected.
    pub max_bytes: usize,
    /// Buffers held (default 64); past it the buffer with the oldest message is rejected whole.
    pub max_buffers: usize,
}

impl Default for SenderAuth {
    fn default() -> Self {
        SenderAuth {
            timeout: DEFAULT_AFTER + Duration::from_secs(1),
            max_messages: 4 * DEFAULT_EVERY as usize,
            max_bytes: 4 << 20,
            max_buffers: 64,
        }
    }
}

/// `SHA-256(r (1) || reply || envelope)`: one envelope exactly as sent with the NATS reply subject it was sent
/// with (`""`: none; a valid subject is at most 255 bytes, a longer one is cut to its length byte's 255,
/// which no valid envelope reaches).
pub fn envelope_digest(reply: &str, envelope: &[u8]) -> [u8; 32] {
    let r = &reply.as_bytes()[..reply.len().min(255)];
    let mut h = Sha256::new();
    h.update(&[r.len() as u8]).update(r).update(envelope);
    h.finalize()
}

/// Builds and signs a checkpoint envelope for `first..` (one digest per sequence) of `topic` under `epoch`.
pub fn build(identity: &Identity, topic: &str, epoch: u32, first: u64, digests: &[[u8; 32]]) -> Result<Vec<u8>> {
    let n = digests.len() as u64;
    let last = first.wrapping_add(n).wrapping_sub(1);
    if n == 0 || n > MAX_COVERED || last < first || first >> STREAM_SHIFT != last >> STREAM_SHIFT {
        return Err(Error::Malformed { reason: "checkpoint range is empty, too long or spans two streams" });
    }
    let h = Header {
        kind: Kind::Checkpoint,
        priority: Priority::Low,
        epoch,
        seq: last,
        sender: identity.id(),
        sub: 0,
        topic,
        reply: "",
    };
    let mut v = Vec::with_capacity(h.len() + 8 + 32 * digests.len() + 2100 + crate::identity::SIG_LEN);
    h.append(&mut v);
    v.extend_from_slice(&first.to_be_bytes());
    for d in digests {
        v.extend_from_slice(d);
    }
    identity.public().encode(&mut v);
    let mut msg = Vec::with_capacity(CHECKPOINT_LABEL.len() + v.len());
    msg.extend_from_slice(CHECKPOINT_LABEL);
    msg.extend_from_slice(&v);
    identity.sign(&msg, &mut v)?;
    Ok(v)
}

/// The publisher's pending batch for one topic: the digests of the envelopes sent since the last checkpoint.
/// Its buffer is kept from batch to batch (no allocation per message or per batch).
#[derive(Clone, Debug)]
pub struct Chain {
    epoch: u32,
    first: u64,
    bytes: usize,
    digests: Vec<[u8; 32]>,
    since: Option<Instant>,
}

impl Default for Chain {
    fn default() -> Self {
        Chain::new()
    }
}

impl Chain {
    /// An empty batch.
    pub fn new() -> Chain {
        Chain { epoch: 0, first: 0, bytes: 0, digests: Vec::new(), since: None }
    }

    /// Messages since the last checkpoint.
    pub fn pending(&self) -> u64 {
        self.digests.len() as u64
    }

    /// Envelope bytes since the last checkpoint.
    pub fn pending_bytes(&self) -> usize {
        self.bytes
    }

    /// Whether `cfg` asks for a checkpoint now (by count or by bytes; the timer handles `after`).
    pub fn full(&self, cfg: &Checkpoints) -> bool {
        self.pending() >= cfg.every.clamp(1, MAX_COVERED) || self.bytes >= cfg.max_bytes
    }

    /// The pending batch's (epoch, first, last sequence), if any.
    pub fn range(&self) -> Option<(u32, u64, u64)> {
        (!self.digests.is_empty()).then(|| (self.epoch, self.first, self.first + self.pending() - 1))
    }

    /// When the first unsigned message was recorded (`None`: nothing pending).
    pub fn since(&self) -> Option<Instant> {
        self.since
    }

    /// Whether an envelope under (`epoch`, `seq`) can join the pending batch (same epoch, the next sequence of
    /// the same stream, room left); if not, the batch must be checkpointed first.
    pub fn accepts(&self, epoch: u32, seq: u64) -> bool {
        let Some((e, first, last)) = self.range() else { return true };
        epoch == e
            && seq == last.wrapping_add(1)
            && seq >> STREAM_SHIFT == first >> STREAM_SHIFT
            && self.pending() < MAX_COVERED
    }

    /// Records one envelope exactly as it is sent, with the NATS reply subject it is sent with (`""`: none; the
    /// caller checked [`accepts`](Self::accepts)): one SHA-256 pass over it.
    pub fn push(&mut self, epoch: u32, seq: u64, reply: &str, envelope: &[u8]) {
        if self.digests.is_empty() {
            self.epoch = epoch;
            self.first = seq;
            self.since = Some(Instant::now());
        }
        self.digests.push(envelope_digest(reply, envelope));
        self.bytes += envelope.len();
    }

    /// Signs the pending batch into a checkpoint envelope (`None` if nothing is pending); the batch stays
    /// pending until [`clear`](Self::clear) (after the checkpoint was sent).
    pub fn sign(&self, identity: &Identity, topic: &str) -> Result<Option<Vec<u8>>> {
        if self.digests.is_empty() {
            return Ok(None);
        }
        build(identity, topic, self.epoch, self.first, &self.digests).map(Some)
    }

    /// Empties the batch (keeping its buffer).
    pub fn clear(&mut self) {
        self.digests.clear();
        self.bytes = 0;
        self.since = None;
    }

    /// [`sign`](Self::sign), then [`clear`](Self::clear).
    pub fn checkpoint(&mut self, identity: &Identity, topic: &str) -> Result<Option<Vec<u8>>> {
        let v = self.sign(identity, topic)?;
        self.clear();
        Ok(v)
    }
}

/// Rejections a [`Verifier`] made since the last [`Verifier::take_tally`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Messages no valid checkpoint covered in time, or pushed out of a full buffer.
    pub unsigned: u64,
    /// Messages whose digest is not the one their sender signed, and checkpoints whose signature or identity is
    /// wrong.
    pub auth: u64,
    /// Checkpoints for batches already verified (duplicates).
    pub replayed: u64,
    /// Checkpoints that do not parse, or arrived on another subject than their topic.
    pub malformed: u64,
}

type BufKey = (AgentId, Arc<str>, u32, u32);

struct Entry<T> {
    seq: u64,
    msg: Message,
    len: usize,
    /// `None` once verified (released in order); else the digest and the time it is rejected at.
    wait: Option<([u8; 32], Instant)>,
    token: T,
    /// Tokens of checkpoints settled while this message waited (verified) behind an earlier one.
    more: Vec<T>,
}

/// A verified checkpoint's digest list, with its token while messages it covers may still come.
struct List<T> {
    first: u64,
    last: u64,
    digests: Vec<[u8; 32]>,
    /// Covered sequences not processed here yet (released or rejected).
    open: Vec<bool>,
    remaining: usize,
    /// The checkpoint's token, handed back once every covered message was processed (or by
    /// [`Verifier::settle_where`]).
    token: Option<T>,
}

impl<T> List<T> {
    /// Marks `seq` processed; `true` when that was the last open one.
    fn processed(&mut self, seq: u64) -> bool {
        let i = (seq - self.first) as usize;
        if self.open[i] {
            self.open[i] = false;
            self.remaining -= 1;
            return self.remaining == 0;
        }
        false
    }
}

struct Buffer<T> {
    /// Held messages, in sequence order.
    entries: VecDeque<Entry<T>>,
    bytes: usize,
    /// The last verified checkpoints, oldest first.
    lists: VecDeque<List<T>>,
}

impl<T> Buffer<T> {
    fn new() -> Self {
        Buffer { entries: VecDeque::new(), bytes: 0, lists: VecDeque::new() }
    }
    fn oldest_arrival(&self) -> Option<Instant> {
        self.entries.iter().filter_map(|e| e.wait.map(|(_, d)| d)).min()
    }
    fn list_for(&mut self, seq: u64) -> Option<&mut List<T>> {
        self.lists.iter_mut().rev().find(|l| l.first <= seq && seq <= l.last)
    }
}

/// Subscriber-side sender authentication: holds opened messages until a checkpoint releases them.
///
/// `T` is a token returned with each message (and each checkpoint) once it is released or rejected: the
/// durable subscription uses it to acknowledge JetStream messages, each message on its own and a checkpoint
/// once every message it covers was handed over; core subscriptions use `()`. Released messages come out in
/// sequence order per (sender, topic, epoch, stream).
pub struct Verifier<T> {
    opts: SenderAuth,
    /// Durable mode: a checkpoint is verified and kept even when it covers nothing held yet (a redelivery may
    /// bring its messages after it).
    keep_all: bool,
    buffers: HashMap<BufKey, Buffer<T>>,
    /// Released messages, each with the tokens to acknowledge once it has been handed over.
    ready: VecDeque<(Message, Vec<T>)>,
    /// Tokens of rejected messages and checkpoints, and of checkpoints all of whose messages were handed over
    /// (acknowledge them away).
    discard: Vec<T>,
    ids: HashMap<AgentId, (Vec<u8>, PublicIdentity)>,
    next_check: Option<Instant>,
    tally: Tally,
}

impl<T> std::fmt::Debug for Verifier<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("buffers", &self.buffers.len())
            .field("ready", &self.ready.len())
            .field("tally", &self.tally)
            .finish()
    }
}

impl<T> Verifier<T> {
    /// A verifier with these limits (zero limits are raised to 1).
    pub fn new(opts: SenderAuth) -> Self {
        let opts = SenderAuth {
            max_messages: opts.max_messages.max(1),
            max_bytes: opts.max_bytes.max(1),
            max_buffers: opts.max_buffers.max(1),
            ..opts
        };
        Verifier {
            opts,
            keep_all: false,
            buffers: HashMap::new(),
            ready: VecDeque::new(),
            discard: Vec::new(),
            ids: HashMap::new(),
            next_check: None,
            tally: Tally::default(),
        }
    }

    /// A verifier for a durable subscription: every checkpoint is verified and kept (bounded), also one that
    /// arrives before the messages it covers (a redelivery after a crash), and a checkpoint's token is handed
    /// back only once every message it covers was handed over ([`settle_where`](Self::settle_where) for the
    /// ones a predecessor handed over).
    pub fn durable(opts: SenderAuth) -> Self {
        Verifier { keep_all: true, ..Verifier::new(opts) }
    }

    /// The next released message and the tokens to acknowledge after handing it over.
    pub fn pop(&mut self) -> Option<(Message, Vec<T>)> {
        self.ready.pop_front()
    }

    /// Tokens of rejected messages and checkpoints since the last call.
    pub fn take_discarded(&mut self) -> Vec<T> {
        std::mem::take(&mut self.discard)
    }

    /// Rejections since the last call.
    pub fn take_tally(&mut self) -> Tally {
        std::mem::take(&mut self.tally)
    }

    /// Messages held (not yet released or rejected), over all buffers.
    pub fn held(&self) -> usize {
        self.buffers.values().map(|b| b.entries.len()).sum()
    }

    /// Released messages not yet popped.
    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    /// Verified checkpoints whose token is still held (some message they cover was not processed here).
    pub fn unsettled(&self) -> usize {
        self.buffers.values().flat_map(|b| b.lists.iter()).filter(|l| l.token.is_some()).count()
    }

    /// Hands back (as discarded: acknowledge them) the held tokens of verified checkpoints for which `done`
    /// says every message they cover was taken care of elsewhere (a durable consumer's acknowledgement floor).
    pub fn settle_where(&mut self, done: impl Fn(&T) -> bool) {
        for b in self.buffers.values_mut() {
            for l in b.lists.iter_mut() {
                if l.token.as_ref().is_some_and(&done)
                    && let Some(t) = l.token.take()
                {
                    self.discard.push(t);
                }
            }
        }
    }

    /// Every token still held (messages held or released but not popped, checkpoints not settled), the
    /// verifier emptied: a durable subscription that stops hands these back to the server for redelivery.
    pub fn take_held(&mut self) -> Vec<T> {
        let mut out: Vec<T> = self.ready.drain(..).flat_map(|(_, t)| t).collect();
        for (_, b) in self.buffers.drain() {
            for e in b.entries {
                out.push(e.token);
                out.extend(e.more);
            }
            out.extend(b.lists.into_iter().filter_map(|l| l.token));
        }
        self.next_check = None;
        out
    }

    /// Whether a held (or released, not yet popped) message's token satisfies `f`.
    pub fn holds_where(&self, f: impl Fn(&T) -> bool) -> bool {
        self.buffers.values().flat_map(|b| b.entries.iter()).any(|e| f(&e.token))
            || self.ready.iter().flat_map(|(_, t)| t.first()).any(&f)
    }

    /// When [`expire`](Self::expire) has something to do next (`None`: nothing is held).
    pub fn next_deadline(&self) -> Option<Instant> {
        self.next_check
    }

    /// A checkpoint token whose messages were all processed: handed back with the last verified message still
    /// held in `b` or else the last released one (so never acknowledged before a message it covers), or at once
    /// when none is waiting to be handed over.
    fn settle(b: &mut Buffer<T>, ready: &mut VecDeque<(Message, Vec<T>)>, discard: &mut Vec<T>, t: T) {
        if let Some(e) = b.entries.iter_mut().rev().find(|e| e.wait.is_none()) {
            e.more.push(t);
        } else if let Some(last) = ready.back_mut() {
            last.1.push(t);
        } else {
            discard.push(t);
        }
    }

    /// Holds an opened (AEAD-authenticated) message: `envelope` is the envelope exactly as received (its reply
    /// subject, which the AEAD authenticated, is the message's), `epoch` and the sequence's stream name its buffer.
    /// A message whose checkpoint was verified already is checked (and released or rejected) at once.
    pub fn push(&mut self, msg: Message, epoch: u32, envelope: &[u8], token: T, now: Instant) {
        self.expire(now);
        let seq = msg.seq();
        let key: BufKey = (msg.sender(), msg.subject_shared(), epoch, (seq >> STREAM_SHIFT) as u32);
        if !self.buffers.contains_key(&key) {
            if self.buffers.len() >= self.opts.max_buffers {
                self.evict_buffer();
            }
            self.buffers.insert(key.clone(), Buffer::new());
        }
        let Some(b) = self.buffers.get_mut(&key) else { return };
        let digest = envelope_digest(msg.reply_to().unwrap_or(""), envelope);
        let len = msg.payload().len();
        let mut wait = Some((digest, now + self.opts.timeout));
        let mut settled = None;
        if let Some(l) = b.list_for(seq) {
            let ok = l.digests[(seq - l.first) as usize] == digest;
            if l.processed(seq) {
                settled = l.token.take();
            }
            if !ok {
                self.tally.auth += 1;
                self.discard.push(token);
                if let Some(t) = settled {
                    Self::settle(b, &mut self.ready, &mut self.discard, t);
                }
                return;
            }
            wait = None;
        }
        let (max_m, max_b) = (self.opts.max_messages, self.opts.max_bytes);
        // Bounded: the oldest held messages make room (they are rejected, never released).
        while !b.entries.is_empty() && (b.entries.len() >= max_m || b.bytes + len > max_b) {
            if let Some(e) = b.entries.pop_front() {
                b.bytes -= e.len;
                self.tally.unsigned += 1;
                self.discard.push(e.token);
                self.discard.extend(e.more);
            }
        }
        let e = Entry { seq, msg, len, wait, token, more: Vec::new() };
        match b.entries.back() {
            None => b.entries.push_back(e),
            Some(back) if back.seq < seq => b.entries.push_back(e),
            _ => match b.entries.binary_search_by_key(&seq, |e| e.seq) {
                // Cannot happen behind a replay window; if it does, the newer copy replaces the older.
                Ok(i) => {
                    let old = std::mem::replace(&mut b.entries[i], e);
                    b.bytes -= old.len;
                    self.tally.unsigned += 1;
                    self.discard.push(old.token);
                    self.discard.extend(old.more);
                }
                Err(i) => b.entries.insert(i, e),
            },
        }
        b.bytes += len;
        if let Some((_, deadline)) = wait {
            self.next_check = Some(self.next_check.map_or(deadline, |d| d.min(deadline)));
        }
        Self::release(b, &mut self.ready);
        if let Some(t) = settled {
            Self::settle(b, &mut self.ready, &mut self.discard, t);
        }
    }

    fn evict_buffer(&mut self) {
        // An empty buffer first (it only remembers verified checkpoints), else the one with the oldest message.
        let victim = self
            .buffers
            .iter()
            .find(|(_, b)| b.entries.is_empty() && b.lists.iter().all(|l| l.token.is_none()))
            .or_else(|| self.buffers.iter().find(|(_, b)| b.entries.is_empty()))
            .map(|(k, _)| k.clone())
            .or_else(|| self.buffers.iter().min_by_key(|(_, b)| b.oldest_arrival()).map(|(k, _)| k.clone()));
        if let Some(k) = victim
            && let Some(b) = self.buffers.remove(&k)
        {
            for e in b.entries {
                self.tally.unsigned += 1;
                self.discard.push(e.token);
                self.discard.extend(e.more);
            }
            // Held checkpoint tokens are dropped unacknowledged: a durable server redelivers them.
        }
    }

    /// Rejects what timed out (`now` past its deadline and not verified) and releases what it was holding up.
    pub fn expire(&mut self, now: Instant) {
        if self.next_check.is_none_or(|d| now < d) {
            return;
        }
        let mut next: Option<Instant> = None;
        for b in self.buffers.values_mut() {
            let mut i = 0;
            while i < b.entries.len() {
                match b.entries[i].wait {
                    Some((_, d)) if d <= now => {
                        if let Some(e) = b.entries.remove(i) {
                            b.bytes -= e.len;
                            self.tally.unsigned += 1;
                            self.discard.push(e.token);
                            self.discard.extend(e.more);
                        }
                    }
                    Some((_, d)) => {
                        next = Some(next.map_or(d, |n| n.min(d)));
                        i += 1;
                    }
                    None => i += 1,
                }
            }
            Self::release(b, &mut self.ready);
        }
        self.next_check = next;
    }

    /// Hands the verified messages at the front of `b` over, in order, each with its own token.
    fn release(b: &mut Buffer<T>, ready: &mut VecDeque<(Message, Vec<T>)>) {
        while b.entries.front().is_some_and(|e| e.wait.is_none()) {
            if let Some(e) = b.entries.pop_front() {
                b.bytes -= e.len;
                let mut tokens = Vec::with_capacity(1 + e.more.len());
                tokens.push(e.token);
                tokens.extend(e.more);
                ready.push_back((e.msg, tokens));
            }
        }
    }

    /// Checks a checkpoint envelope that arrived on `subject`; releases or rejects the messages it covers.
    pub fn checkpoint(&mut self, subject: &str, bytes: &[u8], token: T) {
        let cm = match envelope::parse_checkpoint(bytes) {
            Ok(c) => c,
            Err(_) => {
                self.tally.malformed += 1;
                self.discard.push(token);
                return;
            }
        };
        let topic = &bytes[cm.meta.topic.clone()];
        if topic != subject.as_bytes() {
            self.tally.malformed += 1;
            self.discard.push(token);
            return;
        }
        let (first, last, sender, epoch) = (cm.first, cm.meta.seq, cm.meta.sender, cm.meta.epoch);
        let key: BufKey = (sender, Arc::from(subject), epoch, (last >> STREAM_SHIFT) as u32);
        if !self.buffers.contains_key(&key) {
            if !self.keep_all {
                // Covers nothing this subscription holds (joined later, or everything was lost): nothing to do.
                self.discard.push(token);
                return;
            }
            if self.buffers.len() >= self.opts.max_buffers {
                self.evict_buffer();
            }
            self.buffers.insert(key.clone(), Buffer::new());
        }
        let Some(b) = self.buffers.get_mut(&key) else { return };
        if let Some(l) = b.lists.iter_mut().find(|l| l.first == first && l.last == last) {
            match l.token.as_mut() {
                // A redelivery of a checkpoint whose token is held: keep the newest delivery's token.
                Some(t) if self.keep_all => *t = token,
                // A durable redelivery of a settled one (its acknowledgement was lost): not an attack.
                None if self.keep_all => self.discard.push(token),
                _ => {
                    self.tally.replayed += 1;
                    self.discard.push(token);
                }
            }
            return;
        }
        if !self.keep_all && !b.entries.iter().any(|e| first <= e.seq && e.seq <= last) {
            self.discard.push(token);
            return;
        }
        // The identity must be the sender's (its AgentId is recomputed from its keys) and sign the checkpoint.
        let id_bytes = &bytes[cm.identity.clone()];
        if self.ids.get(&sender).is_none_or(|(enc, _)| enc.as_slice() != id_bytes) {
            match PublicIdentity::decode(id_bytes) {
                Ok((p, n)) if n == id_bytes.len() && p.id() == sender => {
                    if self.ids.len() >= MAX_IDENTITIES {
                        self.ids.clear();
                    }
                    self.ids.insert(sender, (id_bytes.to_vec(), p));
                }
                _ => {
                    self.tally.auth += 1;
                    self.discard.push(token);
                    return;
                }
            }
        }
        let Some((_, public)) = self.ids.get(&sender) else { return };
        let mut signed = Vec::with_capacity(CHECKPOINT_LABEL.len() + cm.signed.len());
        signed.extend_from_slice(CHECKPOINT_LABEL);
        signed.extend_from_slice(&bytes[cm.signed.clone()]);
        if public.verify(&signed, &bytes[cm.signature.clone()]).is_err() {
            self.tally.auth += 1;
            self.discard.push(token);
            return;
        }
        let n = (last - first + 1) as usize;
        let digests: Vec<[u8; 32]> = bytes[cm.digests.clone()]
            .chunks_exact(32)
            .map(|c| {
                let mut d = [0u8; 32];
                d.copy_from_slice(c);
                d
            })
            .collect();
        let mut list = List { first, last, digests, open: vec![true; n], remaining: n, token: Some(token) };
        // Each held message of the range on its own: its digest is the signed one, or it is rejected.
        let mut i = 0;
        while i < b.entries.len() {
            let e = &mut b.entries[i];
            if e.seq < first || e.seq > last {
                i += 1;
                continue;
            }
            list.processed(e.seq);
            let ok = match e.wait {
                Some((d, _)) => d == list.digests[(e.seq - first) as usize],
                None => true,
            };
            if ok {
                e.wait = None;
                i += 1;
            } else if let Some(e) = b.entries.remove(i) {
                b.bytes -= e.len;
                self.tally.auth += 1;
                self.discard.push(e.token);
                self.discard.extend(e.more);
            }
        }
        let settled = if list.remaining == 0 { list.token.take() } else { None };
        if b.lists.len() >= LISTS_KEPT {
            // Its token (if still held) is dropped unacknowledged: a durable server redelivers it.
            b.lists.pop_front();
        }
        b.lists.push_back(list);
        Self::release(b, &mut self.ready);
        if let Some(t) = settled {
            Self::settle(b, &mut self.ready, &mut self.discard, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(seed: u8) -> Identity {
        Identity::from_seed(if seed == 1 { "alice" } else { "bob" }, &[seed; 32]).unwrap()
    }

    /// A publish-like envelope (its content is only hashed here) and the message it opens to.
    fn msg(sender: AgentId, topic: &str, seq: u64, body: &[u8]) -> (Message, Vec<u8>) {
        msg_with_reply(sender, topic, seq, body, None)
    }

    fn msg_with_reply(sender: AgentId, topic: &str, seq: u64, body: &[u8], reply: Option<&str>) -> (Message, Vec<u8>) {
        let mut env = envelope::NatsHeader { priority: Priority::Normal, epoch: 1, seq }.encode().to_vec();
        env.extend_from_slice(body);
        env.extend_from_slice(&[0u8; 16]);
        let route = crate::bus::Route::shared(Arc::from(topic), sender, reply);
        (Message::opened_body(route, Priority::Normal, seq, crate::bus::Body::from_slice(body, 0)), env)
    }

    /// The NATS envelope does not carry the reply-to, so the digest binds it: a message held with another reply-to
    /// than the one its publisher recorded is rejected; with the recorded one it is released.
    #[test]
    fn the_digest_binds_each_messages_reply_to() {
        let a = id(1);
        let now = Instant::now();
        for (held, released) in [(None, false), (Some("_INBOX.y.1"), false), (Some("_INBOX.x.1"), true)] {
            let mut v = verifier(1024, 1 << 20, 8);
            let mut ch = Chain::new();
            let (m, e) = msg_with_reply(a.id(), "t", 1, b"one", held);
            ch.push(1, 1, "_INBOX.x.1", &e);
            v.push(m, 1, &e, 1, now);
            v.checkpoint("t", &ch.checkpoint(&a, "t").unwrap().unwrap(), 100);
            let got = v.pop();
            assert_eq!(got.is_some(), released, "{held:?}");
            if let Some((m, _)) = got {
                assert_eq!(m.reply_to(), Some("_INBOX.x.1"));
            }
            assert_eq!(v.take_tally().auth, u64::from(!released), "{held:?}");
        }
    }

    #[test]
    fn the_digest_matches_a_hand_computation() {
        assert_eq!(envelope_digest("", b"envelope"), Sha256::digest(b"\x00envelope"));
        // The reply subject is bound, length-prefixed (not confusable with envelope bytes).
        assert_eq!(envelope_digest("_I.r", b"envelope"), Sha256::digest(b"\x04_I.renvelope"));
        assert_ne!(envelope_digest("_I.r", b"envelope"), envelope_digest("_I.", b"renvelope"));
    }

    #[test]
    fn publisher_batches_list_one_digest_per_sequence_and_refuse_gaps_and_other_streams() {
        let a = id(1);
        let mut ch = Chain::new();
        assert!(ch.checkpoint(&a, "t").unwrap().is_none());
        let (_, e1) = msg(a.id(), "t", 10, b"one");
        let (_, e2) = msg(a.id(), "t", 11, b"two");
        ch.push(1, 10, "", &e1);
        assert!(ch.accepts(1, 11));
        for (epoch, seq) in [(2, 11), (1, 10), (1, 12), (1, (1 << 40) | 11)] {
            assert!(!ch.accepts(epoch, seq), "{epoch} {seq}");
        }
        ch.push(1, 11, "", &e2);
        assert_eq!((ch.pending(), ch.range()), (2, Some((1, 10, 11))));
        let cp = ch.checkpoint(&a, "t").unwrap().unwrap();
        assert_eq!(ch.pending(), 0);
        let cm = envelope::parse_checkpoint(&cp).unwrap();
        assert_eq!((cm.first, cm.meta.seq, cm.meta.epoch, cm.meta.sender), (10, 11, 1, a.id()));
        let mut want = envelope_digest("", &e1).to_vec();
        want.extend_from_slice(&envelope_digest("", &e2));
        assert_eq!(&cp[cm.digests.clone()], &want[..]);
        let mut signed = CHECKPOINT_LABEL.to_vec();
        signed.extend_from_slice(&cp[cm.signed.clone()]);
        a.public().verify(&signed, &cp[cm.signature.clone()]).unwrap();
        // Full by count or by bytes; never more than MAX_COVERED.
        let cfg = Checkpoints { every: 3, max_bytes: 2 * e1.len() + 1, ..Checkpoints::default() };
        let mut ch = Chain::new();
        ch.push(1, 10, "", &e1);
        ch.push(1, 11, "", &e2);
        assert_eq!((ch.pending_bytes(), ch.full(&cfg)), (e1.len() + e2.len(), false));
        assert!(ch.full(&Checkpoints { every: 2, ..cfg }));
        assert!(ch.full(&Checkpoints { max_bytes: e1.len() + e2.len(), ..cfg }));
        let d = [[0u8; 32]; 2];
        assert!(build(&a, "t", 1, 5, &[]).is_err());
        assert!(build(&a, "t", 1, (1 << 40) - 1, &d).is_err());
        assert!(build(&a, "t", 1, 5, &vec![[0u8; 32]; MAX_COVERED as usize + 1]).is_err());
        let mut ch = Chain::new();
        for s in 0..MAX_COVERED {
            ch.push(1, s, "", b"x");
        }
        assert!(!ch.accepts(1, MAX_COVERED) && ch.full(&Checkpoints { every: u64::MAX, ..cfg }));
    }

    fn verifier(max_messages: usize, max_bytes: usize, max_buffers: usize) -> Verifier<u64> {
        Verifier::new(SenderAuth { timeout: Duration::from_secs(1), max_messages, max_bytes, max_buffers })
    }

    /// Pushes messages `seqs` of `who` on `topic`; returns their envelopes and the publisher's checkpoint.
    fn batch(v: &mut Verifier<u64>, who: &Identity, topic: &str, seqs: &[u64], now: Instant) -> Vec<u8> {
        let mut ch = Chain::new();
        for &s in seqs {
            let (m, e) = msg(who.id(), topic, s, &s.to_be_bytes());
            ch.push(1, s, "", &e);
            v.push(m, 1, &e, s, now);
        }
        ch.checkpoint(who, topic).unwrap().unwrap()
    }

    fn drain(v: &mut Verifier<u64>) -> Vec<u64> {
        std::iter::from_fn(|| v.pop()).map(|(m, _)| m.seq()).collect()
    }

    #[test]
    fn nothing_is_released_before_its_checkpoint_and_a_valid_one_releases_in_order() {
        let a = id(1);
        let now = Instant::now();
        let mut v = verifier(1024, 1 << 20, 8);
        let cp = batch(&mut v, &a, "t", &[1, 2, 3], now);
        assert!(v.pop().is_none());
        assert_eq!(v.held(), 3);
        v.checkpoint("t", &cp, 100);
        let got: Vec<(Message, Vec<u64>)> = std::iter::from_fn(|| v.pop()).collect();
        assert_eq!(got.iter().map(|(m, _)| m.seq()).collect::<Vec<_>>(), [1, 2, 3]);
        // Each message comes with its own token; the checkpoint's comes with the last one it covers.
        assert_eq!(got.iter().map(|(_, t)| t.clone()).collect::<Vec<_>>(), [vec![1], vec![2], vec![3, 100]]);
        // The same checkpoint again is a duplicate, not verified again.
        v.checkpoint("t", &cp, 101);
        assert_eq!(v.take_tally(), Tally { replayed: 1, ..Tally::default() });
        assert_eq!(v.take_discarded(), [101]);
    }

    #[test]
    fn a_forged_or_missing_envelope_costs_only_itself_and_a_wrong_signer_nothing_is_released() {
        let (a, b) = (id(1), id(2));
        let now = Instant::now();
        // Forged: B's message in A's name, with a sequence inside A's batch. Only it is rejected.
        let mut v = verifier(1024, 1 << 20, 8);
        let mut ch = Chain::new();
        for s in [1u64, 2, 3] {
            let (m, e) = msg(a.id(), "t", s, b"genuine");
            ch.push(1, s, "", &e);
            if s == 2 {
                let (m, e) = msg(a.id(), "t", 2, b"forged by bob");
                v.push(m, 1, &e, 2, now);
            } else {
                v.push(m, 1, &e, s, now);
            }
        }
        v.checkpoint("t", &ch.checkpoint(&a, "t").unwrap().unwrap(), 9);
        assert_eq!(drain(&mut v), [1, 3]);
        assert_eq!(v.take_tally(), Tally { auth: 1, ..Tally::default() });
        assert_eq!(v.take_discarded(), [2]);
        assert_eq!(v.held(), 0);
        // Missing: one message lost on the wire; the others are released.
        let mut v = verifier(1024, 1 << 20, 8);
        let mut ch = Chain::new();
        for s in [1u64, 2, 3] {
            let (m, e) = msg(a.id(), "t", s, b"x");
            ch.push(1, s, "", &e);
            if s != 2 {
                v.push(m, 1, &e, s, now);
            }
        }
        v.checkpoint("t", &ch.checkpoint(&a, "t").unwrap().unwrap(), 9);
        assert_eq!(drain(&mut v), [1, 3]);
        assert_eq!(v.take_tally(), Tally::default());
        // Signed by the wrong identity: B signs a checkpoint claiming A; the batch waits and then times out.
        let mut v = verifier(1024, 1 << 20, 8);
        let _ = batch(&mut v, &a, "t", &[1, 2], now);
        let mut forged = build(&b, "t", 1, 1, &[[0; 32]; 2]).unwrap();
        forged[16..32].copy_from_slice(&a.id().0); // the header claims A; the identity inside is B's
        v.checkpoint("t", &forged, 9);
        assert_eq!(v.take_tally(), Tally { auth: 1, ..Tally::default() });
        // B lists the genuine digests of A's batch, claims A in the header and signs all that with his own
        // keys (so the signature verifies under the identity inside): the identity does not hash to A's id.
        let genuine = batch(&mut verifier(1024, 1 << 20, 8), &a, "t", &[1, 2], now);
        let gm = envelope::parse_checkpoint(&genuine).unwrap();
        let digests: Vec<[u8; 32]> = genuine[gm.digests.clone()].chunks(32).map(|c| c.try_into().unwrap()).collect();
        let mut claimed = build(&b, "t", 1, 1, &digests).unwrap();
        claimed[16..32].copy_from_slice(&a.id().0);
        let cm = envelope::parse_checkpoint(&claimed).unwrap();
        claimed.truncate(cm.signature.start);
        let mut signed = CHECKPOINT_LABEL.to_vec();
        signed.extend_from_slice(&claimed);
        b.sign(&signed, &mut claimed).unwrap();
        v.checkpoint("t", &claimed, 8);
        assert!(v.pop().is_none());
        assert_eq!(v.take_tally(), Tally { auth: 1, ..Tally::default() });
        // A checkpoint moved to another subject is malformed.
        let cp = batch(&mut v, &a, "u", &[5], now);
        v.checkpoint("t", &cp, 9);
        assert_eq!(v.take_tally(), Tally { malformed: 1, ..Tally::default() });
        v.expire(now + Duration::from_secs(2));
        assert!(v.pop().is_none());
        assert_eq!(v.take_tally(), Tally { unsigned: 3, ..Tally::default() });
        assert_eq!(v.held(), 0);
        assert_eq!(v.next_deadline(), None);
    }

    #[test]
    fn a_later_batch_waits_for_an_earlier_one_and_timeouts_release_it() {
        let a = id(1);
        let now = Instant::now();
        let mut v = verifier(1024, 1 << 20, 8);
        let cp1 = batch(&mut v, &a, "t", &[1, 2], now);
        let cp2 = batch(&mut v, &a, "t", &[3, 4], now);
        // Reordered: the second checkpoint first. Its batch verifies but waits behind the first.
        v.checkpoint("t", &cp2, 20);
        assert!(v.pop().is_none());
        v.checkpoint("t", &cp1, 10);
        assert_eq!(drain(&mut v), [1, 2, 3, 4]);
        assert_eq!(v.take_tally(), Tally::default());
        // The first checkpoint lost: after the timeout its batch is rejected and the second one released.
        let cp3 = batch(&mut v, &a, "t", &[5, 6], now);
        let cp4 = batch(&mut v, &a, "t", &[7], now);
        let _ = cp3;
        v.checkpoint("t", &cp4, 40);
        assert!(v.pop().is_none());
        v.expire(now + Duration::from_millis(500));
        assert!(v.pop().is_none(), "not before the timeout");
        v.expire(now + Duration::from_secs(1));
        assert_eq!(drain(&mut v), [7]);
        assert_eq!(v.take_tally(), Tally { unsigned: 2, ..Tally::default() });
        let mut d = v.take_discarded();
        d.sort();
        assert_eq!(d, [5, 6]);
    }

    /// Durable mode: a checkpoint that comes back before the messages it covers (a redelivery after a crash)
    /// verifies them one by one as they arrive; its token is held until every message it covers was processed,
    /// or until `settle_where` says a predecessor handled the rest; a redelivery of it replaces the token.
    #[test]
    fn a_durable_verifier_checks_redelivered_messages_against_a_kept_checkpoint() {
        let a = id(1);
        let now = Instant::now();
        let mut v: Verifier<u64> =
            Verifier::durable(SenderAuth { timeout: Duration::from_secs(1), ..SenderAuth::default() });
        let mut ch = Chain::new();
        let mut envs = Vec::new();
        for s in 1u64..=4 {
            let (m, e) = msg(a.id(), "t", s, &s.to_be_bytes());
            ch.push(1, s, "", &e);
            envs.push((m, e));
        }
        let cp = ch.checkpoint(&a, "t").unwrap().unwrap();
        v.checkpoint("t", &cp, 100);
        assert_eq!((v.held(), v.unsettled(), v.take_discarded()), (0, 1, vec![]));
        // A redelivery of the checkpoint while its token is held: the newer token is kept, nothing counted.
        v.checkpoint("t", &cp, 101);
        assert_eq!((v.take_tally(), v.take_discarded()), (Tally::default(), vec![]));
        // Message 3 arrives first (1 was handed over by a predecessor), is verified at once and released.
        let (m3, e3) = envs[2].clone();
        v.push(m3, 1, &e3, 3, now);
        assert_eq!(v.pop().map(|(m, t)| (m.seq(), t)), Some((3, vec![3])));
        // A forgery for sequence 4 after the checkpoint: rejected at once, alone.
        let (f, fe) = msg(a.id(), "t", 4, b"forged");
        v.push(f, 1, &fe, 44, now);
        assert_eq!((v.take_tally().auth, v.take_discarded()), (1, vec![44]));
        let (m2, e2) = envs[1].clone();
        v.push(m2, 1, &e2, 2, now);
        assert_eq!(v.pop().map(|(m, t)| (m.seq(), t)), Some((2, vec![2])));
        // Sequence 1 never comes: the token stays held until the acknowledgement floor says so.
        assert_eq!(v.unsettled(), 1);
        v.settle_where(|t| *t == 999);
        assert_eq!((v.unsettled(), v.take_discarded()), (1, vec![]));
        v.settle_where(|t| *t == 101);
        assert_eq!((v.unsettled(), v.take_discarded()), (0, vec![101]));
        // All covered messages processed here: the token rides with the last one released.
        let mut v: Verifier<u64> = Verifier::durable(SenderAuth::default());
        v.checkpoint("t", &cp, 100);
        for (i, (m, e)) in envs.iter().cloned().enumerate() {
            v.push(m, 1, &e, i as u64 + 1, now);
        }
        let got: Vec<Vec<u64>> = std::iter::from_fn(|| v.pop()).map(|(_, t)| t).collect();
        assert_eq!(got, [vec![1], vec![2], vec![3], vec![4, 100]]);
        assert_eq!(v.unsettled(), 0);
        // Held tokens are handed back whole when the subscription stops.
        let mut v: Verifier<u64> = Verifier::durable(SenderAuth::default());
        let (m, e) = envs[0].clone();
        v.push(m, 1, &e, 1, now);
        v.checkpoint("u", &build(&a, "u", 1, 1, &[[0; 32]]).unwrap(), 7);
        let mut held = v.take_held();
        held.sort();
        assert_eq!((held, v.held(), v.unsettled()), (vec![1, 7], 0, 0));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Whatever a checkpoint is turned into, the verifier neither panics nor releases the batch unless it is
        /// still the genuine checkpoint.
        #[test]
        fn mutated_checkpoints_never_panic_nor_release(i in 0usize..6000, x in 1u8..=255, cut in 0usize..3) {
            let a = id(1);
            let now = Instant::now();
            let mut v = verifier(1024, 1 << 20, 8);
            let cp = batch(&mut v, &a, "t", &[1, 2], now);
            let mut bad = cp.clone();
            let i = i % bad.len();
            bad[i] ^= x;
            bad.truncate(bad.len() - cut * 1000);
            v.checkpoint("t", &bad, 9);
            proptest::prop_assert!(v.pop().is_none());
            v.checkpoint("t", &cp, 10);
            proptest::prop_assert_eq!(drain(&mut v), vec![1, 2]);
        }
    }

    #[test]
    fn buffers_are_bounded_by_count_bytes_and_number() {
        let a = id(1);
        let now = Instant::now();
        // At most 4 messages: the fifth pushes the oldest out (rejected, never released).
        let mut v = verifier(4, 1 << 20, 8);
        let cp = batch(&mut v, &a, "t", &[1, 2, 3, 4, 5], now);
        assert_eq!(v.held(), 4);
        assert_eq!(v.take_tally().unsigned, 1);
        v.checkpoint("t", &cp, 9);
        assert_eq!(drain(&mut v), [2, 3, 4, 5]);
        // At most 20 payload bytes (8 per message): the third evicts the first.
        let mut v = verifier(100, 20, 8);
        let _ = batch(&mut v, &a, "t", &[1, 2, 3], now);
        assert_eq!((v.held(), v.take_tally().unsigned), (2, 1));
        // At most 2 buffers: a third (sender, topic) evicts the one holding the oldest message.
        let mut v = verifier(100, 1 << 20, 2);
        let _ = batch(&mut v, &a, "t1", &[1], now);
        let _ = batch(&mut v, &a, "t2", &[1, 2], now + Duration::from_millis(1));
        let cp3 = batch(&mut v, &a, "t3", &[1], now + Duration::from_millis(2));
        assert_eq!((v.held(), v.take_tally().unsigned), (3, 1));
        assert_eq!(v.take_discarded(), [1]);
        v.checkpoint("t3", &cp3, 9);
        assert_eq!(drain(&mut v), [1]);
    }
}
