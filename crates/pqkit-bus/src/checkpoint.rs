//! Signed checkpoints: sender authentication against other members of a topic over NATS (docs/bus.md §9).
//!
//! Over NATS every subscriber of a topic holds its publishers' AEAD keys, so the AEAD alone cannot stop a
//! subscribing member from forging a message in a publisher's name. With checkpoints on, a publisher keeps a
//! running hash **chain** over the envelopes of one (topic, epoch, stream) exactly as it sends them and, every
//! `N` messages or `T` after the first unsigned one, publishes a **checkpoint** envelope
//! ([`crate::envelope::Kind::Checkpoint`]) on the topic's own subject, signed with its hybrid identity
//! (ML-DSA-65 + Ed25519) and carrying its public identity. A subscriber with sender authentication on
//! ([`Verifier`]) holds each message it opened in a bounded per-(sender, topic, epoch, stream) buffer and
//! releases it only when a checkpoint that verifies under the identity whose [`AgentId`] is the claimed sender
//! covers it and the chain recomputed over the buffered envelopes matches.
//!
//! - `c_0 = SHA-256("pqkit-bus nats chain v3" || sender (16) || epoch (4) || stream (4) || first (8) || topic)`,
//!   `first` being the batch's first sequence; `c_k = SHA-256(c_{k-1} || SHA-256(r (1) || reply_k || envelope_k))`
//!   over the NATS (v3) envelope exactly as sent and its NATS reply subject (empty for none: the NATS envelope
//!   does not carry it, so the chain binds it here; the topic is in `c_0`). Each batch starts its own chain, so a
//!   subscriber that joins mid-stream verifies from the next batch on. (Label `v1` chained v1 envelopes, which
//!   carried topic and reply-to, `v2` the earlier NATS envelope with its sender field; the label changes with the
//!   format so chains over different formats cannot be mixed.) The sender in `c_0` is the one the subscriber
//!   learnt from the key server's grant of the envelope's stream (v3 carries no sender field).
//! - Security contract: nothing a [`Verifier`] releases was sent by anyone but the holder of the sender's
//!   identity keys (forging needs both ML-DSA-65 and Ed25519 broken, or SHA-256 collisions); a batch with a
//!   forged, replaced or missing envelope is rejected whole; what no valid checkpoint covers within the timeout
//!   is rejected; memory is bounded by [`SenderAuth`]. Rejections are tallied in [`Tally`], never released.

use crate::envelope::{self, CHECKPOINT_LABEL, Header, Kind, STREAM_SHIFT};
use crate::identity::{AgentId, Identity, PublicIdentity};
use crate::queue::Priority;
use crate::{Error, Message, Result};
use pqkit::hash::sha2::Sha256;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default messages per checkpoint (`N`).
pub const DEFAULT_EVERY: u64 = 256;
/// Default largest batch in envelope bytes: a checkpoint follows once this much is unsigned, so a publisher of
/// large messages that waits for its subscriber (a credit window of a few MiB) does not wait for `T`.
pub const DEFAULT_MAX_BYTES: usize = 256 << 10;
/// Default longest wait between the first unsigned message and its checkpoint (`T`).
pub const DEFAULT_AFTER: Duration = Duration::from_millis(5);
const CHAIN_LABEL: &[u8] = b"pqkit-bus nats chain v3";
/// Verified checkpoint ranges a buffer remembers, to drop duplicates without verifying them again.
const DONE_KEPT: usize = 16;
/// Sender identities a verifier keeps decoded; the cache is emptied past it.
const MAX_IDENTITIES: usize = 256;

/// Publisher-side checkpoint settings of a topic pattern ([`crate::nats::NatsAgent::sign_checkpoints`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoints {
    /// Sign after this many messages (`N`, default 256, at least 1).
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
/// The buffer limits bound memory: at most `max_buffers × max_bytes` of held payload per subscription.
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

/// The chain's start `c_0` for a batch beginning at sequence `first`.
pub fn chain_start(sender: &AgentId, topic: &str, epoch: u32, first: u64) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(CHAIN_LABEL)
        .update(&sender.0)
        .update(&epoch.to_be_bytes())
        .update(&((first >> STREAM_SHIFT) as u32).to_be_bytes())
        .update(&first.to_be_bytes())
        .update(topic.as_bytes());
    h.finalize()
}

/// One chain step: `SHA-256(c || digest)`.
pub fn chain_next(c: &[u8; 32], digest: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(c).update(digest);
    h.finalize()
}

/// Builds and signs a checkpoint envelope for `first..=last` of `topic` under `epoch`.
pub fn build(identity: &Identity, topic: &str, epoch: u32, first: u64, last: u64, chain: &[u8; 32]) -> Result<Vec<u8>> {
    if first > last || first >> STREAM_SHIFT != last >> STREAM_SHIFT {
        return Err(Error::Malformed { reason: "checkpoint range is empty or spans two streams" });
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
    let mut v = Vec::with_capacity(h.len() + 40 + 2100 + crate::identity::SIG_LEN);
    h.append(&mut v);
    v.extend_from_slice(&first.to_be_bytes());
    v.extend_from_slice(chain);
    identity.public().encode(&mut v);
    let mut msg = Vec::with_capacity(CHECKPOINT_LABEL.len() + v.len());
    msg.extend_from_slice(CHECKPOINT_LABEL);
    msg.extend_from_slice(&v);
    identity.sign(&msg, &mut v)?;
    Ok(v)
}

/// The publisher's running chain for one topic: the batch since the last checkpoint.
#[derive(Clone, Debug)]
pub struct Chain {
    epoch: u32,
    first: u64,
    last: u64,
    count: u64,
    bytes: usize,
    c: [u8; 32],
    since: Option<Instant>,
}

impl Default for Chain {
    fn default() -> Self {
        Chain::new()
    }
}

impl Chain {
    /// An empty chain.
    pub fn new() -> Chain {
        Chain { epoch: 0, first: 0, last: 0, count: 0, bytes: 0, c: [0; 32], since: None }
    }

    /// Messages chained since the last checkpoint.
    pub fn pending(&self) -> u64 {
        self.count
    }

    /// Envelope bytes chained since the last checkpoint.
    pub fn pending_bytes(&self) -> usize {
        self.bytes
    }

    /// Whether `cfg` asks for a checkpoint now (by count or by bytes; the timer handles `after`).
    pub fn full(&self, cfg: &Checkpoints) -> bool {
        self.count >= cfg.every || self.bytes >= cfg.max_bytes
    }

    /// The pending batch's (epoch, first, last sequence), if any.
    pub fn range(&self) -> Option<(u32, u64, u64)> {
        (self.count > 0).then_some((self.epoch, self.first, self.last))
    }

    /// When the first unsigned message was chained (`None`: nothing pending).
    pub fn since(&self) -> Option<Instant> {
        self.since
    }

    /// Whether an envelope under (`epoch`, `seq`) can join the pending batch (same epoch and stream, a later
    /// sequence); if not, the batch must be checkpointed first.
    pub fn accepts(&self, epoch: u32, seq: u64) -> bool {
        self.count == 0 || (epoch == self.epoch && seq >> STREAM_SHIFT == self.last >> STREAM_SHIFT && seq > self.last)
    }

    /// Chains one envelope exactly as it is sent, with the NATS reply subject it is sent with (`""`: none; the
    /// caller checked [`accepts`](Self::accepts)).
    pub fn push(&mut self, sender: &AgentId, topic: &str, epoch: u32, seq: u64, reply: &str, envelope: &[u8]) {
        if self.count == 0 {
            self.epoch = epoch;
            self.first = seq;
            self.c = chain_start(sender, topic, epoch, seq);
            self.since = Some(Instant::now());
        }
        self.c = chain_next(&self.c, &envelope_digest(reply, envelope));
        self.last = seq;
        self.count += 1;
        self.bytes += envelope.len();
    }

    /// Signs the pending batch into a checkpoint envelope and empties the chain (`None` if nothing is pending).
    pub fn checkpoint(&mut self, identity: &Identity, topic: &str) -> Result<Option<Vec<u8>>> {
        if self.count == 0 {
            return Ok(None);
        }
        let v = build(identity, topic, self.epoch, self.first, self.last, &self.c)?;
        *self = Chain::new();
        Ok(Some(v))
    }
}

/// Rejections a [`Verifier`] made since the last [`Verifier::take_tally`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Messages no valid checkpoint covered in time, or pushed out of a full buffer.
    pub unsigned: u64,
    /// Messages of a batch whose chain did not match, and checkpoints whose signature or identity is wrong.
    pub auth: u64,
    /// Checkpoints for batches already released (duplicates).
    pub replayed: u64,
    /// Checkpoints that do not parse, or arrived on another subject than their topic.
    pub malformed: u64,
}

type BufKey = (AgentId, Arc<str>, u32, u32);

struct Entry<T> {
    msg: Message,
    digest: [u8; 32],
    len: usize,
    deadline: Instant,
    verified: bool,
    token: T,
}

struct Buffer<T> {
    entries: BTreeMap<u64, Entry<T>>,
    bytes: usize,
    /// The ranges of the last checkpoints that verified (a duplicate of one is dropped unverified).
    done: VecDeque<(u64, u64)>,
    /// Tokens of verified checkpoints, by their last sequence: handed back with their batch.
    acks: Vec<(u64, T)>,
}

impl<T> Buffer<T> {
    fn new() -> Self {
        Buffer { entries: BTreeMap::new(), bytes: 0, done: VecDeque::new(), acks: Vec::new() }
    }
    fn oldest_arrival(&self) -> Option<Instant> {
        self.entries.values().map(|e| e.deadline).min()
    }
}

/// Subscriber-side sender authentication: holds opened messages until a checkpoint releases them.
///
/// `T` is a token returned with each message (and each checkpoint) once it is released or rejected: the
/// durable subscription uses it to acknowledge JetStream messages per released batch; core subscriptions use
/// `()`. Released messages come out in sequence order per (sender, topic, epoch, stream).
pub struct Verifier<T> {
    opts: SenderAuth,
    buffers: HashMap<BufKey, Buffer<T>>,
    /// Released messages, each with the tokens to acknowledge once it has been handed over.
    ready: VecDeque<(Message, Vec<T>)>,
    /// Tokens of rejected messages and checkpoints (acknowledge them away).
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
            buffers: HashMap::new(),
            ready: VecDeque::new(),
            discard: Vec::new(),
            ids: HashMap::new(),
            next_check: None,
            tally: Tally::default(),
        }
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

    /// When [`expire`](Self::expire) has something to do next (`None`: nothing is held).
    pub fn next_deadline(&self) -> Option<Instant> {
        self.next_check
    }

    /// Holds an opened (AEAD-authenticated) message: `envelope` is the envelope exactly as received (its reply
    /// subject, which the AEAD authenticated, is the message's), `epoch` and the sequence's stream name its buffer.
    pub fn push(&mut self, msg: Message, epoch: u32, envelope: &[u8], token: T, now: Instant) {
        let key: BufKey = (msg.sender(), msg.subject_shared(), epoch, (msg.seq() >> STREAM_SHIFT) as u32);
        if !self.buffers.contains_key(&key) && self.buffers.len() >= self.opts.max_buffers {
            self.evict_buffer();
        }
        let (max_m, max_b) = (self.opts.max_messages, self.opts.max_bytes);
        let len = msg.payload().len();
        let seq = msg.seq();
        let digest = envelope_digest(msg.reply_to().unwrap_or(""), envelope);
        let deadline = now + self.opts.timeout;
        let b = self.buffers.entry(key).or_insert_with(Buffer::new);
        // Bounded: the oldest held messages make room (they are rejected, never released).
        while !b.entries.is_empty() && (b.entries.len() >= max_m || b.bytes + len > max_b) {
            if let Some((_, e)) = b.entries.pop_first() {
                b.bytes -= e.len;
                self.tally.unsigned += 1;
                self.discard.push(e.token);
            }
        }
        if let Some(old) = b.entries.insert(seq, Entry { msg, digest, len, deadline, verified: false, token }) {
            // Cannot happen behind a replay window; if it does, the newer copy replaces the older.
            b.bytes -= old.len;
            self.tally.unsigned += 1;
            self.discard.push(old.token);
        }
        b.bytes += len;
        self.next_check = Some(self.next_check.map_or(deadline, |d| d.min(deadline)));
    }

    fn evict_buffer(&mut self) {
        // An empty buffer first (it only remembers what was released), else the one with the oldest message.
        let victim = self
            .buffers
            .iter()
            .find(|(_, b)| b.entries.is_empty())
            .map(|(k, _)| k.clone())
            .or_else(|| self.buffers.iter().min_by_key(|(_, b)| b.oldest_arrival()).map(|(k, _)| k.clone()));
        if let Some(k) = victim
            && let Some(b) = self.buffers.remove(&k)
        {
            for (_, e) in b.entries {
                self.tally.unsigned += 1;
                self.discard.push(e.token);
            }
            self.discard.extend(b.acks.into_iter().map(|(_, t)| t));
        }
    }

    /// Rejects what timed out (`now` past its deadline and not verified) and releases what it was holding up.
    pub fn expire(&mut self, now: Instant) {
        if self.next_check.is_none_or(|d| now < d) {
            return;
        }
        let mut next: Option<Instant> = None;
        let keys: Vec<BufKey> = self.buffers.keys().cloned().collect();
        for k in keys {
            let Some(b) = self.buffers.get_mut(&k) else { continue };
            let late: Vec<u64> =
                b.entries.iter().filter(|(_, e)| !e.verified && e.deadline <= now).map(|(s, _)| *s).collect();
            for s in late {
                if let Some(e) = b.entries.remove(&s) {
                    b.bytes -= e.len;
                    self.tally.unsigned += 1;
                    self.discard.push(e.token);
                }
            }
            for e in b.entries.values().filter(|e| !e.verified) {
                next = Some(next.map_or(e.deadline, |d| d.min(e.deadline)));
            }
            Self::release(b, &mut self.ready, &mut self.discard);
        }
        self.next_check = next;
    }

    /// Hands the verified messages at the front of `b` over, in order, with the tokens of their batch.
    fn release(b: &mut Buffer<T>, ready: &mut VecDeque<(Message, Vec<T>)>, discard: &mut Vec<T>) {
        let mut tokens = Vec::new();
        let mut last_seq = None;
        let start = ready.len();
        while let Some(e) = b.entries.first_entry() {
            if !e.get().verified {
                break;
            }
            let (s, e) = e.remove_entry();
            b.bytes -= e.len;
            tokens.push(e.token);
            ready.push_back((e.msg, Vec::new()));
            last_seq = Some(s);
        }
        // Checkpoint tokens whose batch is out of the buffer (released now, earlier, or rejected).
        let front = b.entries.first_key_value().map(|(s, _)| *s);
        let mut i = 0;
        while i < b.acks.len() {
            if front.is_none_or(|f| b.acks[i].0 < f) {
                let (_, t) = b.acks.swap_remove(i);
                if last_seq.is_some() {
                    tokens.push(t);
                } else {
                    discard.push(t);
                }
            } else {
                i += 1;
            }
        }
        if ready.len() > start {
            if let Some(last) = ready.back_mut() {
                last.1 = tokens;
            }
        } else {
            discard.extend(tokens);
        }
    }

    /// Checks a checkpoint envelope that arrived on `subject`; releases or rejects the batch it covers.
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
        let Some(b) = self.buffers.get_mut(&key) else {
            // Covers nothing this subscription holds (joined later, or everything was lost): nothing to do.
            self.discard.push(token);
            return;
        };
        if b.done.contains(&(first, last)) {
            self.tally.replayed += 1;
            self.discard.push(token);
            return;
        }
        if b.entries.range(first..=last).next().is_none() {
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
        let mut c = chain_start(&sender, subject, epoch, first);
        for e in b.entries.range(first..=last).map(|(_, e)| e) {
            c = chain_next(&c, &e.digest);
        }
        if c == cm.chain {
            for e in b.entries.range_mut(first..=last).map(|(_, e)| e) {
                e.verified = true;
            }
            if b.done.len() >= DONE_KEPT {
                b.done.pop_front();
            }
            b.done.push_back((first, last));
            b.acks.push((last, token));
        } else {
            // A forged, replaced or missing envelope: the whole batch goes.
            let seqs: Vec<u64> = b.entries.range(first..=last).map(|(s, _)| *s).collect();
            for s in seqs {
                if let Some(e) = b.entries.remove(&s) {
                    b.bytes -= e.len;
                    self.tally.auth += 1;
                    self.discard.push(e.token);
                }
            }
            self.discard.push(token);
        }
        Self::release(b, &mut self.ready, &mut self.discard);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(seed: u8) -> Identity {
        Identity::from_seed(if seed == 1 { "alice" } else { "bob" }, &[seed; 32]).unwrap()
    }

    /// A publish-like envelope for the chain (its content is only hashed here) and the message it opens to.
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

    /// The NATS envelope does not carry the reply-to, so the chain binds it: a message held with another reply-to
    /// than the one its publisher chained fails the chain; with the chained one it is released.
    #[test]
    fn the_chain_binds_each_messages_reply_to() {
        let a = id(1);
        let now = Instant::now();
        for (held, released) in [(None, false), (Some("_INBOX.y.1"), false), (Some("_INBOX.x.1"), true)] {
            let mut v = verifier(1024, 1 << 20, 8);
            let mut ch = Chain::new();
            let (m, e) = msg_with_reply(a.id(), "t", 1, b"one", held);
            ch.push(&a.id(), "t", 1, 1, "_INBOX.x.1", &e);
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
    fn chain_matches_a_hand_computation_and_binds_every_field() {
        let s = AgentId([7; 16]);
        let mut h = Sha256::new();
        h.update(b"pqkit-bus nats chain v3").update(&[7; 16]).update(&[0, 0, 0, 3]).update(&[0, 0, 0, 2]);
        h.update(&((2u64 << 40) | 5).to_be_bytes()).update(b"a.b");
        let c0 = h.finalize();
        assert_eq!(chain_start(&s, "a.b", 3, (2 << 40) | 5), c0);
        let d = Sha256::digest(b"\x00envelope");
        let mut h = Sha256::new();
        h.update(&c0).update(&d);
        assert_eq!(chain_next(&c0, &envelope_digest("", b"envelope")), h.finalize());
        // The reply subject is bound, length-prefixed (not confusable with envelope bytes).
        assert_eq!(envelope_digest("_I.r", b"envelope"), Sha256::digest(b"\x04_I.renvelope"));
        assert_ne!(envelope_digest("_I.r", b"envelope"), envelope_digest("_I.", b"renvelope"));
        for other in [
            chain_start(&AgentId([8; 16]), "a.b", 3, (2 << 40) | 5),
            chain_start(&s, "a.c", 3, (2 << 40) | 5),
            chain_start(&s, "a.b", 4, (2 << 40) | 5),
            chain_start(&s, "a.b", 3, (3 << 40) | 5),
            chain_start(&s, "a.b", 3, (2 << 40) | 6),
        ] {
            assert_ne!(other, c0);
        }
    }

    #[test]
    fn publisher_chain_batches_and_refuses_other_streams() {
        let a = id(1);
        let mut ch = Chain::new();
        assert!(ch.checkpoint(&a, "t").unwrap().is_none());
        let (_, e1) = msg(a.id(), "t", 10, b"one");
        let (_, e2) = msg(a.id(), "t", 11, b"two");
        ch.push(&a.id(), "t", 1, 10, "", &e1);
        assert!(ch.accepts(1, 11) && !ch.accepts(2, 11) && !ch.accepts(1, 10) && !ch.accepts(1, (1 << 40) | 11));
        ch.push(&a.id(), "t", 1, 11, "", &e2);
        assert_eq!(ch.pending(), 2);
        let cp = ch.checkpoint(&a, "t").unwrap().unwrap();
        assert_eq!(ch.pending(), 0);
        let cm = envelope::parse_checkpoint(&cp).unwrap();
        assert_eq!((cm.first, cm.meta.seq, cm.meta.epoch, cm.meta.sender), (10, 11, 1, a.id()));
        let want = chain_next(
            &chain_next(&chain_start(&a.id(), "t", 1, 10), &envelope_digest("", &e1)),
            &envelope_digest("", &e2),
        );
        assert_eq!(cm.chain, want);
        let mut signed = CHECKPOINT_LABEL.to_vec();
        signed.extend_from_slice(&cp[cm.signed.clone()]);
        a.public().verify(&signed, &cp[cm.signature.clone()]).unwrap();
        // Full by count or by bytes.
        let cfg = Checkpoints { every: 3, max_bytes: 2 * e1.len() + 1, ..Checkpoints::default() };
        let mut ch = Chain::new();
        ch.push(&a.id(), "t", 1, 10, "", &e1);
        ch.push(&a.id(), "t", 1, 11, "", &e2);
        assert_eq!((ch.pending_bytes(), ch.full(&cfg)), (e1.len() + e2.len(), false));
        assert!(ch.full(&Checkpoints { every: 2, ..cfg }));
        assert!(ch.full(&Checkpoints { max_bytes: e1.len() + e2.len(), ..cfg }));
        assert!(build(&a, "t", 1, 5, 4, &want).is_err());
        assert!(build(&a, "t", 1, 5, (1 << 40) | 5, &want).is_err());
    }

    fn verifier(max_messages: usize, max_bytes: usize, max_buffers: usize) -> Verifier<u64> {
        Verifier::new(SenderAuth { timeout: Duration::from_secs(1), max_messages, max_bytes, max_buffers })
    }

    /// Pushes messages `seqs` of `who` on `topic`; returns their envelopes and the publisher's checkpoint.
    fn batch(v: &mut Verifier<u64>, who: &Identity, topic: &str, seqs: &[u64], now: Instant) -> Vec<u8> {
        let mut ch = Chain::new();
        for &s in seqs {
            let (m, e) = msg(who.id(), topic, s, &s.to_be_bytes());
            ch.push(&who.id(), topic, 1, s, "", &e);
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
        // The batch's tokens (its messages and its checkpoint) come with its last message.
        assert!(got[0].1.is_empty() && got[1].1.is_empty());
        let mut t = got[2].1.clone();
        t.sort();
        assert_eq!(t, [1, 2, 3, 100]);
        // The same checkpoint again is a duplicate, not verified again.
        v.checkpoint("t", &cp, 101);
        assert_eq!(v.take_tally(), Tally { replayed: 1, ..Tally::default() });
        assert_eq!(v.take_discarded(), [101]);
    }

    #[test]
    fn a_forged_missing_or_reordered_envelope_rejects_the_whole_batch() {
        let (a, b) = (id(1), id(2));
        let now = Instant::now();
        // Forged: B's message in A's name, with a sequence inside A's batch.
        let mut v = verifier(1024, 1 << 20, 8);
        let (m, e) = msg(a.id(), "t", 2, b"forged by bob");
        v.push(m, 1, &e, 2, now);
        let mut ch = Chain::new();
        for s in [1u64, 3] {
            let (m, e) = msg(a.id(), "t", s, b"genuine");
            v.push(m, 1, &e, s, now);
            ch.push(&a.id(), "t", 1, s, "", &e);
        }
        v.checkpoint("t", &ch.checkpoint(&a, "t").unwrap().unwrap(), 9);
        assert!(v.pop().is_none());
        assert_eq!(v.take_tally(), Tally { auth: 3, ..Tally::default() });
        assert_eq!(v.held(), 0);
        // Missing: one message lost on the wire.
        let mut v = verifier(1024, 1 << 20, 8);
        let mut ch = Chain::new();
        for s in [1u64, 2, 3] {
            let (m, e) = msg(a.id(), "t", s, b"x");
            ch.push(&a.id(), "t", 1, s, "", &e);
            if s != 2 {
                v.push(m, 1, &e, s, now);
            }
        }
        v.checkpoint("t", &ch.checkpoint(&a, "t").unwrap().unwrap(), 9);
        assert!(v.pop().is_none());
        assert_eq!(v.take_tally().auth, 2);
        // Signed by the wrong identity: B signs a checkpoint claiming A; the batch waits and then times out.
        let mut v = verifier(1024, 1 << 20, 8);
        let _ = batch(&mut v, &a, "t", &[1, 2], now);
        let mut forged = build(&b, "t", 1, 1, 2, &[0; 32]).unwrap();
        forged[16..32].copy_from_slice(&a.id().0); // the header claims A; the identity inside is B's
        v.checkpoint("t", &forged, 9);
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
        v.checkpoint("t", &cp, 9); // its chain needs message 1: the batch is rejected
        assert!(v.pop().is_none());
        assert_eq!(v.take_tally().auth, 4);
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
