//! The envelope wire format v1 (docs/bus.md §4). The header is the AEAD's associated data.
//! The NATS transport's publish envelopes use the compact **NATS envelope v3** at the end of this module
//! ([`parse_nats`], [`NatsHeader`], [`NatsAad`]; docs/bus.md §9), whose topic and reply-to are bound into the
//! associated data from NATS's own fields instead of travelling in the envelope.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | version = 1 |
//! | 1 | 1 | kind: 1 publish, 2 deliver, 3 plain, 4 checkpoint |
//! | 2 | 1 | priority 0..=3 |
//! | 3 | 1 | flags = 0 |
//! | 4 | 4 | epoch (BE) |
//! | 8 | 8 | sequence (BE) |
//! | 16 | 16 | sender `AgentId` |
//! | 32 | 8 | subscription id (deliver) or 0 |
//! | 40 | 2 | topic length t (1..=255) |
//! | 42 | 2 | reply-to length r (0..=255) |
//! | 44 | t + r | topic, reply-to |
//! | .. | n | payload (ciphertext when sealed) |
//! | end-16 | 16 | AES-256-GCM tag (sealed kinds) |
//!
//! A **checkpoint** (kind 4, NATS sender authentication, docs/bus.md §9) has the same fixed header with
//! priority 0, the *last* sequence it covers in the sequence field, subscription id 0 and no reply-to; its
//! body is not sealed but signed (no tag):
//!
//! | size | field |
//! |---|---|
//! | 8 | first sequence covered (BE; same 24-bit stream as the last) |
//! | 32 | chain value `c_last` |
//! | 1 + n + 1952 + 32 | the sender's public identity (`PublicIdentity::encode`) |
//! | 3373 | hybrid signature (ML-DSA-65 then Ed25519) over `"pqkit-bus nats checkpoint v1" \|\| everything before it` |
//!
//! [`parse`] is total: any byte string gives `Ok` or an [`Error::Malformed`], never a panic; so is
//! [`parse_checkpoint`], which also splits a checkpoint's body (it checks structure, not the signature).

use crate::identity::{MLDSA_PK_LEN, SIG_LEN};
use crate::priority::Priority;
use crate::subject::{MAX_SUBJECT_LEN, validate_subject};
use crate::{AgentId, Error, Result};
use std::ops::Range;

/// Wire format version.
pub const VERSION: u8 = 1;
/// Fixed header length (before topic and reply-to).
pub const FIXED_LEN: usize = 44;
/// AEAD tag length.
pub const TAG_LEN: usize = 16;
/// Largest payload, in bytes.
pub const MAX_PAYLOAD: usize = 1 << 20;

/// Envelope kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Sender → broker, sealed under the sender key.
    Publish = 1,
    /// Broker → subscriber, sealed under the subscription's delivery key.
    Deliver = 2,
    /// Unsealed (plain mode only).
    Plain = 3,
    /// A signed checkpoint over a batch of publish envelopes (NATS sender authentication, [`parse_checkpoint`]).
    /// Never sealed; refused by the in-process bus.
    Checkpoint = 4,
}

impl Kind {
    /// Whether the body ends in a tag.
    pub fn sealed(self) -> bool {
        matches!(self, Kind::Publish | Kind::Deliver)
    }
}

/// A parsed header; ranges index the envelope it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Kind.
    pub kind: Kind,
    /// Priority.
    pub priority: Priority,
    /// Key epoch.
    pub epoch: u32,
    /// Sequence number.
    pub seq: u64,
    /// Sender.
    pub sender: AgentId,
    /// Subscription id (deliver) or 0.
    pub sub: u64,
    /// Topic bytes.
    pub topic: Range<usize>,
    /// Reply-to bytes (empty: none).
    pub reply: Range<usize>,
    /// Payload bytes (without the tag).
    pub payload: Range<usize>,
}

impl Meta {
    /// The header length: the associated data of the AEAD.
    pub fn aad_len(&self) -> usize {
        self.reply.end
    }
}

fn malformed(reason: &'static str) -> Error {
    Error::Malformed { reason }
}

/// Parses and checks an envelope's structure (not its tag).
pub fn parse(b: &[u8]) -> Result<Meta> {
    parse_checking(b, true)
}

/// The whole of [`parse`]; with `check_topic` false the topic's UTF-8 and subject checks are skipped (the caller
/// knows the topic bytes equal a subject that passed them: [`parse_known_topic`]). Every other check is made.
fn parse_checking(b: &[u8], check_topic: bool) -> Result<Meta> {
    if b.len() < FIXED_LEN {
        return Err(malformed("shorter than the fixed header"));
    }
    if b[0] != VERSION {
        return Err(malformed("unknown version"));
    }
    let kind = match b[1] {
        1 => Kind::Publish,
        2 => Kind::Deliver,
        3 => Kind::Plain,
        4 => Kind::Checkpoint,
        _ => return Err(malformed("unknown kind")),
    };
    let priority = Priority::from_u8(b[2]).ok_or(malformed("priority above 3"))?;
    if b[3] != 0 {
        return Err(malformed("reserved flags set"));
    }
    let epoch = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
    let seq = u64::from_be_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
    let mut sender = [0u8; 16];
    sender.copy_from_slice(&b[16..32]);
    let sub = u64::from_be_bytes([b[32], b[33], b[34], b[35], b[36], b[37], b[38], b[39]]);
    let t = u16::from_be_bytes([b[40], b[41]]) as usize;
    let r = u16::from_be_bytes([b[42], b[43]]) as usize;
    if t == 0 || t > MAX_SUBJECT_LEN || r > MAX_SUBJECT_LEN {
        return Err(malformed("topic or reply-to length out of range"));
    }
    let topic = FIXED_LEN..FIXED_LEN + t;
    let reply = topic.end..topic.end + r;
    let tag = if kind.sealed() { TAG_LEN } else { 0 };
    if b.len() < reply.end + tag {
        return Err(malformed("truncated"));
    }
    let payload = reply.end..b.len() - tag;
    if payload.len() > MAX_PAYLOAD {
        return Err(malformed("payload longer than 1 MiB"));
    }
    if check_topic {
        let ts = std::str::from_utf8(&b[topic.clone()]).map_err(|_| malformed("topic is not UTF-8"))?;
        validate_subject(ts).map_err(|_| malformed("topic is not a valid subject"))?;
    }
    if r > 0 {
        let rs = std::str::from_utf8(&b[reply.clone()]).map_err(|_| malformed("reply-to is not UTF-8"))?;
        validate_subject(rs).map_err(|_| malformed("reply-to is not a valid subject"))?;
    }
    if kind != Kind::Deliver && sub != 0 {
        return Err(malformed("subscription id set outside a delivery"));
    }
    if kind == Kind::Checkpoint && (b[2] != 0 || r != 0) {
        return Err(malformed("checkpoint with a priority or a reply-to"));
    }
    Ok(Meta { kind, priority, epoch, seq, sender: AgentId(sender), sub, topic, reply, payload })
}

/// Domain separation of the checkpoint signature (signed: this label, then the checkpoint up to its signature).
pub const CHECKPOINT_LABEL: &[u8] = b"pqkit-bus nats checkpoint v2";
/// Most messages one checkpoint covers (its digest list is at most 128 KiB).
pub const MAX_COVERED: u64 = 4096;
/// Bits of a sequence number that count within one stream (the top 24 bits are the stream id).
pub const STREAM_SHIFT: u32 = 40;

/// A parsed checkpoint envelope; ranges index the envelope it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointMeta {
    /// The header (kind [`Kind::Checkpoint`]; `meta.seq` is the last sequence covered).
    pub meta: Meta,
    /// The first sequence covered (same stream as `meta.seq`, not above it).
    pub first: u64,
    /// The covered envelopes' digests, `32 × (last - first + 1)` bytes: the one of sequence `first + i` at
    /// `32 i` (`crate::checkpoint::envelope_digest`).
    pub digests: Range<usize>,
    /// The sender's encoded public identity (structure checked here, keys decoded by the caller).
    pub identity: Range<usize>,
    /// The signed bytes (everything before the signature; the signature also covers [`CHECKPOINT_LABEL`]).
    pub signed: Range<usize>,
    /// The hybrid signature.
    pub signature: Range<usize>,
}

/// Parses a checkpoint envelope (structure only: the signature, the identity's keys and its binding to the
/// sender are the caller's to check). Total: `Ok` or [`Error::Malformed`], never a panic.
pub fn parse_checkpoint(b: &[u8]) -> Result<CheckpointMeta> {
    let meta = parse(b)?;
    if meta.kind != Kind::Checkpoint {
        return Err(malformed("not a checkpoint"));
    }
    let body = &b[meta.payload.clone()];
    if body.len() < 8 {
        return Err(malformed("checkpoint body truncated"));
    }
    let first = u64::from_be_bytes(body[..8].try_into().map_err(|_| malformed("checkpoint first sequence"))?);
    if first > meta.seq || first >> STREAM_SHIFT != meta.seq >> STREAM_SHIFT {
        return Err(malformed("checkpoint range is empty or spans two streams"));
    }
    let n = meta.seq - first + 1;
    if n > MAX_COVERED {
        return Err(malformed("checkpoint covers too many messages"));
    }
    let list = 8 + 32 * n as usize;
    if body.len() < list + 1 {
        return Err(malformed("checkpoint body truncated"));
    }
    let id_len = 1 + body[list] as usize + MLDSA_PK_LEN + 32;
    if body.len() != list + id_len + SIG_LEN {
        return Err(malformed("checkpoint body length does not match its digests, identity and signature"));
    }
    let at = meta.payload.start;
    let digests = at + 8..at + list;
    let identity = at + list..at + list + id_len;
    let signature = identity.end..b.len();
    Ok(CheckpointMeta { signed: 0..identity.end, meta, first, digests, identity, signature })
}

/// The fields of a header to write.
#[derive(Clone, Copy, Debug)]
pub struct Header<'a> {
    /// Kind.
    pub kind: Kind,
    /// Priority.
    pub priority: Priority,
    /// Epoch.
    pub epoch: u32,
    /// Sequence.
    pub seq: u64,
    /// Sender.
    pub sender: AgentId,
    /// Subscription id or 0.
    pub sub: u64,
    /// Topic (a valid subject; the caller checks).
    pub topic: &'a str,
    /// Reply-to or "".
    pub reply: &'a str,
}

impl Header<'_> {
    /// Length of the encoded header.
    pub fn len(&self) -> usize {
        FIXED_LEN + self.topic.len() + self.reply.len()
    }
    /// Never empty (the fixed part alone is 44 bytes).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Writes the header into `out[..self.len()]`.
    #[inline]
    pub fn write(&self, out: &mut [u8]) {
        self.write_fixed(&mut out[..FIXED_LEN]);
        let t = FIXED_LEN + self.topic.len();
        out[FIXED_LEN..t].copy_from_slice(self.topic.as_bytes());
        out[t..t + self.reply.len()].copy_from_slice(self.reply.as_bytes());
    }

    /// Appends the header to `out` (the fixed part is built on the stack: `out` is not zero-filled first).
    pub fn append(&self, out: &mut Vec<u8>) {
        let mut fixed = [0u8; FIXED_LEN];
        self.write_fixed(&mut fixed);
        out.extend_from_slice(&fixed);
        out.extend_from_slice(self.topic.as_bytes());
        out.extend_from_slice(self.reply.as_bytes());
    }

    /// Writes the fixed part (the first [`FIXED_LEN`] bytes).
    #[inline]
    fn write_fixed(&self, out: &mut [u8]) {
        out[0] = VERSION;
        out[1] = self.kind as u8;
        out[2] = self.priority as u8;
        out[3] = 0;
        out[4..8].copy_from_slice(&self.epoch.to_be_bytes());
        out[8..16].copy_from_slice(&self.seq.to_be_bytes());
        out[16..32].copy_from_slice(&self.sender.0);
        out[32..40].copy_from_slice(&self.sub.to_be_bytes());
        out[40..42].copy_from_slice(&(self.topic.len() as u16).to_be_bytes());
        out[42..44].copy_from_slice(&(self.reply.len() as u16).to_be_bytes());
    }
}

/// The AEAD nonce: `kind || priority || 0x0000 || sequence` (the priority byte is 0 on the publish leg).
#[inline]
pub fn nonce(kind: Kind, priority: Priority, seq: u64) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[0] = kind as u8;
    n[1] = if kind == Kind::Deliver { priority as u8 } else { 0 };
    n[4..].copy_from_slice(&seq.to_be_bytes());
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample(kind: Kind) -> Vec<u8> {
        let h = Header {
            kind,
            priority: Priority::High,
            epoch: 7,
            seq: 42,
            sender: AgentId([9; 16]),
            sub: if kind == Kind::Deliver { 5 } else { 0 },
            topic: "a.b.c",
            reply: "_INBOX.x",
        };
        let mut v = Vec::new();
        h.append(&mut v);
        v.extend_from_slice(b"payload");
        if kind.sealed() {
            v.extend_from_slice(&[0xAA; TAG_LEN]);
        }
        v
    }

    #[test]
    fn round_trip() {
        for k in [Kind::Publish, Kind::Deliver, Kind::Plain] {
            let v = sample(k);
            let m = parse(&v).unwrap();
            assert_eq!(m.kind, k);
            assert_eq!((m.priority, m.epoch, m.seq, m.sender), (Priority::High, 7, 42, AgentId([9; 16])));
            assert_eq!(&v[m.topic.clone()], b"a.b.c");
            assert_eq!(&v[m.reply.clone()], b"_INBOX.x");
            assert_eq!(&v[m.payload.clone()], b"payload");
        }
    }

    /// The header's bytes, written out by hand from the table in the module docs (not by the code under test),
    /// and `append` (after bytes already in the buffer) and `write` agree with them.
    #[test]
    fn header_bytes_are_the_documented_layout() {
        let h = Header {
            kind: Kind::Deliver,
            priority: Priority::High,
            epoch: 0x0102_0304,
            seq: 0x1112_1314_1516_1718,
            sender: AgentId([0xA5; 16]),
            sub: 0x2122_2324_2526_2728,
            topic: "t.x",
            reply: "_I.r",
        };
        let mut want = vec![1, 2, 2, 0, 1, 2, 3, 4, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18];
        want.extend_from_slice(&[0xA5; 16]);
        want.extend_from_slice(&[0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0, 3, 0, 4]);
        want.extend_from_slice(b"t.x_I.r");
        assert_eq!(h.len(), want.len());
        let mut appended = vec![0xEE, 0xEF];
        h.append(&mut appended);
        assert_eq!(&appended[..2], &[0xEE, 0xEF]);
        assert_eq!(&appended[2..], &want[..]);
        let mut written = vec![0u8; h.len()];
        h.write(&mut written);
        assert_eq!(written, want);
    }

    #[test]
    fn every_malformation_is_rejected() {
        let good = sample(Kind::Publish);
        type Mutation = Box<dyn Fn(&mut Vec<u8>)>;
        let cases: Vec<(&str, Mutation)> = vec![
            ("empty", Box::new(|v| v.clear())),
            ("short", Box::new(|v| v.truncate(FIXED_LEN - 1))),
            ("version", Box::new(|v| v[0] = 2)),
            ("kind", Box::new(|v| v[1] = 9)),
            ("priority", Box::new(|v| v[2] = 4)),
            ("flags", Box::new(|v| v[3] = 1)),
            ("sub outside deliver", Box::new(|v| v[39] = 1)),
            ("topic len 0", Box::new(|v| v[41] = 0)),
            ("topic len big", Box::new(|v| v[40] = 1)),
            ("reply len big", Box::new(|v| v[42] = 1)),
            ("truncated tag", Box::new(|v| v.truncate(v.len() - 20))),
            ("topic wildcard", Box::new(|v| v[FIXED_LEN] = b'*')),
            ("topic not utf8", Box::new(|v| v[FIXED_LEN] = 0xFF)),
            ("reply invalid", Box::new(|v| v[FIXED_LEN + 5] = b'.')),
        ];
        for (name, f) in cases {
            let mut v = good.clone();
            f(&mut v);
            assert!(matches!(parse(&v), Err(Error::Malformed { .. })), "{name}");
        }
    }

    #[cfg(feature = "nats")]
    fn checkpoint_sample() -> Vec<u8> {
        let id = crate::Identity::from_seed("alice", &[1; 32]).unwrap();
        crate::checkpoint::build(&id, "a.b.c", 7, (3 << STREAM_SHIFT) | 1, &[[5; 32]; 9]).unwrap()
    }

    #[cfg(feature = "nats")]
    #[test]
    fn checkpoint_round_trip_and_malformations() {
        let v = checkpoint_sample();
        let c = parse_checkpoint(&v).unwrap();
        assert_eq!(c.meta.kind, Kind::Checkpoint);
        assert_eq!((c.first, c.meta.seq, c.meta.epoch), ((3 << 40) | 1, (3 << 40) | 9, 7));
        assert_eq!(&v[c.digests.clone()], &[5; 9 * 32][..]);
        assert_eq!(&v[c.meta.topic.clone()], b"a.b.c");
        assert_eq!(c.signature.len(), SIG_LEN);
        assert_eq!(c.signed.end, c.identity.end);
        // The other kinds are not checkpoints, and a checkpoint is not any other kind.
        assert!(matches!(parse_checkpoint(&sample(Kind::Publish)), Err(Error::Malformed { .. })));
        assert!(!Kind::Checkpoint.sealed());
        type Mutation = Box<dyn Fn(&mut Vec<u8>)>;
        let at = c.meta.payload.start;
        let cases: Vec<(&str, Mutation)> = vec![
            ("priority set", Box::new(|v| v[2] = 1)),
            ("sub set", Box::new(|v| v[39] = 1)),
            ("one byte short", Box::new(|v| v.truncate(v.len() - 1))),
            ("one byte long", Box::new(|v| v.push(0))),
            ("body truncated", Box::new(move |v| v.truncate(at + 20))),
            ("name length", Box::new(move |v| v[at + 8 + 9 * 32] ^= 1)),
            ("first lowered: one digest missing", Box::new(move |v| v[at + 7] = 0)),
            ("first raised: one digest too many", Box::new(move |v| v[at + 7] = 2)),
            ("first above last", Box::new(move |v| v[at + 7] = 10)),
            ("first in another stream", Box::new(move |v| v[at + 2] = 4)),
        ];
        for (name, f) in cases {
            let mut w = v.clone();
            f(&mut w);
            assert!(matches!(parse_checkpoint(&w), Err(Error::Malformed { .. })), "{name}");
        }
        // A reply-to on a checkpoint.
        let mut w = Vec::new();
        let h = Header {
            kind: Kind::Checkpoint,
            priority: Priority::Low,
            epoch: 1,
            seq: 1,
            sender: AgentId([1; 16]),
            sub: 0,
            topic: "a",
            reply: "b",
        };
        h.append(&mut w);
        w.extend_from_slice(&v[c.meta.payload.clone()]);
        assert!(matches!(parse(&w), Err(Error::Malformed { .. })));
    }

    #[cfg(feature = "nats")]
    proptest! {
        #[test]
        fn mutated_checkpoints_never_panic(i in 0usize..6000, x in any::<u8>(), cut in 0usize..6000) {
            let mut v = checkpoint_sample();
            let i = i % v.len();
            v[i] ^= x;
            v.truncate(v.len().saturating_sub(cut));
            if let Ok(c) = parse_checkpoint(&v) {
                prop_assert!(c.signature.end == v.len() && c.identity.end == c.signature.start);
                prop_assert!(c.meta.topic.end <= c.identity.start && c.first <= c.meta.seq);
            }
        }

        #[test]
        fn random_bytes_with_the_checkpoint_kind_never_panic(b in proptest::collection::vec(any::<u8>(), 0..6000)) {
            let mut b = b;
            if b.len() > 3 {
                b[0] = VERSION;
                b[1] = Kind::Checkpoint as u8;
                b[2] = 0;
                b[3] = 0;
            }
            let _ = parse(&b);
            let _ = parse_checkpoint(&b);
        }
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse(&b);
        }

        #[test]
        fn mutated_envelopes_never_panic(i in 0usize..80, x in any::<u8>(), cut in 0usize..80) {
            let mut v = sample(Kind::Deliver);
            let i = i % v.len();
            v[i] ^= x;
            v.truncate(v.len().saturating_sub(cut));
            if let Ok(m) = parse(&v) {
                // Whatever parses has consistent ranges inside the buffer.
                prop_assert!(m.payload.end <= v.len() && m.topic.end <= m.reply.start);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// NATS transport additions (owned by the NATS transport, docs/bus.md §9). `parse` above is
// `parse_checking(b, true)`: the known-topic parser below shares all of it but the topic check.

/// [`parse`] for a receiver that already validated a topic: when the envelope's topic bytes equal
/// `known_topic` (a subject that passed [`validate_subject`] before, such as the topic of the last message the
/// same subscription opened), its validation is not repeated; otherwise the topic is checked exactly as
/// [`parse`] checks it. Accepts and rejects exactly what [`parse`] does (tested against it on random and mutated
/// envelopes), so it is total too. The caller must pass a valid subject (or `""`, which matches no topic).
pub fn parse_known_topic(b: &[u8], known_topic: &str) -> Result<Meta> {
    if b.len() < FIXED_LEN {
        return Err(malformed("shorter than the fixed header"));
    }
    let t = u16::from_be_bytes([b[40], b[41]]) as usize;
    let known = !known_topic.is_empty() && b.get(FIXED_LEN..FIXED_LEN + t) == Some(known_topic.as_bytes());
    parse_checking(b, !known)
}

#[cfg(test)]
mod nats_additions_tests {
    use super::*;
    use proptest::prelude::*;

    fn envelope(kind: Kind, topic: &str, reply: &str, body: usize) -> Vec<u8> {
        let h = Header {
            kind,
            priority: Priority::Normal,
            epoch: 3,
            seq: 99,
            sender: AgentId([4; 16]),
            sub: if kind == Kind::Deliver { 1 } else { 0 },
            topic,
            reply,
        };
        let mut v = Vec::new();
        h.append(&mut v);
        v.resize(v.len() + body + if kind.sealed() { TAG_LEN } else { 0 }, 0xA5);
        v
    }

    /// The two parsers agree (same `Meta`, or both malformed) on `b` for every known topic tried.
    fn agree(b: &[u8]) -> std::result::Result<(), TestCaseError> {
        let want = parse(b);
        for known in ["", "a.b.c", "_INBOX.x.y", "t"] {
            let got = parse_known_topic(b, known);
            match (&want, &got) {
                (Ok(x), Ok(y)) => prop_assert_eq!(x, y),
                (Err(Error::Malformed { .. }), Err(Error::Malformed { .. })) => {}
                _ => prop_assert!(false, "parse {:?} vs parse_known_topic({:?}) {:?}", want, known, got),
            }
        }
        Ok(())
    }

    #[test]
    fn a_known_topic_skips_only_its_own_validation() {
        let v = envelope(Kind::Publish, "a.b.c", "_INBOX.x.y", 64);
        assert_eq!(parse_known_topic(&v, "a.b.c").unwrap(), parse(&v).unwrap());
        assert_eq!(parse_known_topic(&v, "a.b").unwrap(), parse(&v).unwrap());
        // Every rejection of the fixed header, the reply-to and the lengths still applies with a known topic.
        type Mutation = Box<dyn Fn(&mut Vec<u8>)>;
        let cases: Vec<(&str, Mutation)> = vec![
            ("version", Box::new(|v| v[0] = 2)),
            ("kind", Box::new(|v| v[1] = 9)),
            ("priority", Box::new(|v| v[2] = 4)),
            ("flags", Box::new(|v| v[3] = 1)),
            ("sub outside deliver", Box::new(|v| v[39] = 1)),
            ("reply len big", Box::new(|v| v[42] = 1)),
            ("reply invalid", Box::new(|v| v[FIXED_LEN + 5] = b'.')),
            ("reply not utf8", Box::new(|v| v[FIXED_LEN + 6] = 0xFF)),
            ("truncated tag", Box::new(|v| v.truncate(FIXED_LEN + 5 + 10 + 8))),
            ("short", Box::new(|v| v.truncate(FIXED_LEN - 1))),
        ];
        for (name, f) in cases {
            let mut w = v.clone();
            f(&mut w);
            assert!(matches!(parse_known_topic(&w, "a.b.c"), Err(Error::Malformed { .. })), "{name}");
            assert!(matches!(parse(&w), Err(Error::Malformed { .. })), "{name}");
        }
        // A topic that is not the known one is validated: a wildcard topic is refused.
        let bad = envelope(Kind::Publish, "a.*.c", "", 4);
        assert!(matches!(parse_known_topic(&bad, "a.b.c"), Err(Error::Malformed { .. })));
        let cp = envelope(Kind::Checkpoint, "t", "r", 4);
        assert!(matches!(parse_known_topic(&cp, "t"), Err(Error::Malformed { .. })));
    }

    proptest! {
        #[test]
        fn agrees_with_parse_on_mutated_envelopes(
            which in 0usize..4, i in 0usize..400, x in any::<u8>(), cut in 0usize..120, body in 0usize..80,
        ) {
            let (kind, topic, reply) = [
                (Kind::Publish, "a.b.c", ""),
                (Kind::Publish, "_INBOX.x.y", "a.b.c"),
                (Kind::Deliver, "t", "_INBOX.x.y"),
                (Kind::Checkpoint, "a.b.c", ""),
            ][which];
            let mut v = envelope(kind, topic, reply, body);
            let i = i % v.len();
            v[i] ^= x;
            v.truncate(v.len().saturating_sub(cut));
            agree(&v)?;
        }

        #[test]
        fn agrees_with_parse_on_random_bytes(b in proptest::collection::vec(any::<u8>(), 0..200), t in 0usize..4) {
            let mut b = b;
            if b.len() >= FIXED_LEN + 5 {
                // Often make the topic one of the known ones, so the skipping branch is exercised.
                let topic = ["a.b.c", "t", "_INBOX.x.y", "a.b.c"][t];
                b[40] = 0;
                b[41] = topic.len() as u8;
                let end = (FIXED_LEN + topic.len()).min(b.len());
                b[FIXED_LEN..end].copy_from_slice(&topic.as_bytes()[..end - FIXED_LEN]);
                b[0] = VERSION;
                b[1] = (t % 4) as u8 + 1;
                b[3] = 0;
            }
            agree(&b)?;
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// The NATS envelope (v3; docs/bus.md §9 "Messages on the wire"). Used only by the NATS transport for
// its publish envelopes; the in-process bus and checkpoints keep v1. The topic and the reply-to are *not* in
// it: they travel in NATS's own subject and reply fields, and both sides bind them into the AEAD's associated
// data ([`NatsAad`]), so a message relabelled with another subject or reply-to fails to open. Nor is the
// sender: the stream number in the sequence's top 24 bits names the sender, through the key server's grant of
// that stream (unique per key scope and epoch) and the sender key derived for (sender, stream, scope).
//
// | offset | size | field |
// |---|---|---|
// | 0 | 1 | version = 3 ([`NATS_VERSION`]) |
// | 1 | 1 | kind = 1 (publish; the only v3 kind) |
// | 2 | 1 | priority 0..=3 |
// | 3 | 4 | epoch (BE) |
// | 7 | 8 | sequence (BE): stream (24 bits) \|\| counter (40 bits) |
// | 15 | n | payload, AES-256-GCM ciphertext |
// | end-16 | 16 | tag |
//
// Associated data: `header (15) || t (1) || topic (NATS subject) || r (1) || reply-to (NATS reply, or empty)`.
// Nonce: [`nonce`]`(Kind::Publish, _, seq)`, as v1's publish leg.

/// Version byte of the NATS envelope (v1 parsers refuse it as an unknown version; [`parse_nats`] refuses v1
/// and the earlier v2, whose sender field this version dropped).
pub const NATS_VERSION: u8 = 3;
/// Length of the NATS envelope's header (everything before the payload).
pub const NATS_HEADER_LEN: usize = 15;
/// Largest associated data of a NATS envelope: the header, two length bytes, a topic and a reply-to.
pub const NATS_AAD_MAX: usize = NATS_HEADER_LEN + 2 + 2 * MAX_SUBJECT_LEN;

/// A parsed NATS (v3) envelope; `payload` indexes the envelope (the ciphertext, without the tag). The sender
/// is not in it: [`stream`](Self::stream) names it through the key server's grant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NatsMeta {
    /// Priority.
    pub priority: Priority,
    /// Key epoch.
    pub epoch: u32,
    /// Sequence number (`stream (24) || counter (40)`).
    pub seq: u64,
    /// Ciphertext bytes (without the tag).
    pub payload: Range<usize>,
}

impl NatsMeta {
    /// The sender stream: the top 24 bits of the sequence, granted by the key server to one sender per key
    /// scope and epoch.
    #[inline]
    pub fn stream(&self) -> u32 {
        (self.seq >> STREAM_SHIFT) as u32
    }
}

/// The header fields of a NATS (v3) publish envelope.
#[derive(Clone, Copy, Debug)]
pub struct NatsHeader {
    /// Priority.
    pub priority: Priority,
    /// Epoch.
    pub epoch: u32,
    /// Sequence (`stream (24) || counter (40)`).
    pub seq: u64,
}

impl NatsHeader {
    /// The encoded header ([`NATS_HEADER_LEN`] bytes).
    #[inline]
    pub fn encode(&self) -> [u8; NATS_HEADER_LEN] {
        let mut out = [0u8; NATS_HEADER_LEN];
        out[0] = NATS_VERSION;
        out[1] = Kind::Publish as u8;
        out[2] = self.priority as u8;
        out[3..7].copy_from_slice(&self.epoch.to_be_bytes());
        out[7..15].copy_from_slice(&self.seq.to_be_bytes());
        out
    }
}

/// Parses a NATS (v3) envelope's structure (not its tag). Total: `Ok` or [`Error::Malformed`], never a panic.
/// A v1 envelope (any kind) or an earlier v2 envelope is refused ("not a NATS envelope").
pub fn parse_nats(b: &[u8]) -> Result<NatsMeta> {
    if b.len() < NATS_HEADER_LEN + TAG_LEN {
        return Err(malformed("shorter than the NATS header and tag"));
    }
    if b[0] != NATS_VERSION {
        return Err(malformed("not a NATS envelope (version 3)"));
    }
    if b[1] != Kind::Publish as u8 {
        return Err(malformed("unknown kind"));
    }
    let priority = Priority::from_u8(b[2]).ok_or(malformed("priority above 3"))?;
    let epoch = u32::from_be_bytes([b[3], b[4], b[5], b[6]]);
    let seq = u64::from_be_bytes([b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14]]);
    let payload = NATS_HEADER_LEN..b.len() - TAG_LEN;
    if payload.len() > MAX_PAYLOAD {
        return Err(malformed("payload longer than 1 MiB"));
    }
    Ok(NatsMeta { priority, epoch, seq, payload })
}

/// The associated data of a NATS envelope: `header || t (1) || topic || r (1) || reply`, where `topic` is the
/// NATS subject and `reply` the NATS reply subject (`""` for none). Built on the stack when it fits 128 bytes
/// (a topic and reply-to of up to 95 bytes together), else in one `Vec`.
pub struct NatsAad {
    small: [u8; 128],
    large: Vec<u8>,
    len: usize,
}

impl NatsAad {
    /// Builds the associated data. The caller checks that `topic` and `reply` are valid subjects; a length
    /// outside 1..=255 (topic) or 0..=255 (reply) is refused ([`Error::Malformed`]), so the length bytes are exact.
    #[inline]
    pub fn new(header: &[u8; NATS_HEADER_LEN], topic: &str, reply: &str) -> Result<NatsAad> {
        let (t, r) = (topic.len(), reply.len());
        if t == 0 || t > MAX_SUBJECT_LEN || r > MAX_SUBJECT_LEN {
            return Err(malformed("topic or reply-to length out of range"));
        }
        let len = NATS_HEADER_LEN + 2 + t + r;
        let mut a = NatsAad { small: [0u8; 128], large: Vec::new(), len };
        let out: &mut [u8] = if len <= a.small.len() {
            &mut a.small[..len]
        } else {
            a.large.resize(len, 0);
            &mut a.large
        };
        out[..NATS_HEADER_LEN].copy_from_slice(header);
        out[NATS_HEADER_LEN] = t as u8;
        let at = NATS_HEADER_LEN + 1;
        out[at..at + t].copy_from_slice(topic.as_bytes());
        out[at + t] = r as u8;
        out[at + t + 1..].copy_from_slice(reply.as_bytes());
        Ok(a)
    }

    /// The bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        if self.len <= self.small.len() { &self.small[..self.len] } else { &self.large }
    }
}

/// Writes the associated data of [`NatsAad::new`] into `buf`, reusing what is there: when `buf` already holds
/// the associated data of the same topic and reply-to (the common case on a subscription, where messages repeat
/// both), only the header is rewritten. Self-checking (the topic and reply-to in `buf` are compared, not
/// assumed), so a stale buffer can never bind a message to another subject. Same refusals as [`NatsAad::new`].
#[inline]
pub fn nats_aad_into(buf: &mut Vec<u8>, header: &[u8; NATS_HEADER_LEN], topic: &str, reply: &str) -> Result<()> {
    let (t, r) = (topic.len(), reply.len());
    if t == 0 || t > MAX_SUBJECT_LEN || r > MAX_SUBJECT_LEN {
        return Err(malformed("topic or reply-to length out of range"));
    }
    let at = NATS_HEADER_LEN + 1;
    // `subject::same`, not `==`: no libc call, and an empty reply-to is not read (glibc's memcmp of zero bytes
    // at the dangling address of an empty slice took ~100 ns per call on Zen 5: perf, memcmp 7 -> 117 ns per
    // message, when this compared with `==`).
    let same = buf.len() == at + t + 1 + r
        && buf[NATS_HEADER_LEN] == t as u8
        && buf[at + t] == r as u8
        && crate::subject::same(&buf[at..at + t], topic.as_bytes())
        && crate::subject::same(&buf[at + t + 1..], reply.as_bytes());
    if same {
        buf[..NATS_HEADER_LEN].copy_from_slice(header);
    } else {
        buf.clear();
        buf.extend_from_slice(header);
        buf.push(t as u8);
        buf.extend_from_slice(topic.as_bytes());
        buf.push(r as u8);
        buf.extend_from_slice(reply.as_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod nats_v3_tests {
    use super::*;
    use proptest::prelude::*;

    fn sample(body: usize) -> Vec<u8> {
        let h = NatsHeader { priority: Priority::High, epoch: 7, seq: (3 << STREAM_SHIFT) | 42 };
        let mut v = h.encode().to_vec();
        v.resize(v.len() + body + TAG_LEN, 0xA5);
        v
    }

    /// The header's bytes, written out by hand from the table above (not by the code under test).
    #[test]
    fn header_bytes_are_the_documented_layout() {
        let h = NatsHeader { priority: Priority::Critical, epoch: 0x0102_0304, seq: 0x1112_1314_1516_1718 };
        let mut want = vec![3, 1, 3, 1, 2, 3, 4, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18];
        assert_eq!(&h.encode()[..], &want[..]);
        let aad = NatsAad::new(&h.encode(), "t.x", "_I.r").unwrap();
        want.extend_from_slice(b"\x03t.x\x04_I.r");
        assert_eq!(aad.as_bytes(), &want[..]);
        let aad = NatsAad::new(&h.encode(), "t.x", "").unwrap();
        want.truncate(want.len() - 5);
        want.push(0);
        assert_eq!(aad.as_bytes(), &want[..]);
    }

    proptest! {
        /// `nats_aad_into` writes exactly `NatsAad::new`, whatever the buffer held before: a previous message's
        /// associated data with the same, a shorter or longer topic, topic and reply-to bytes shifted between
        /// the two, or garbage; and refuses what `new` refuses, leaving nothing a later call could trust.
        #[test]
        fn aad_into_equals_new_from_any_previous_buffer(
            prev in proptest::collection::vec(any::<u8>(), 0..80),
            prev_topic in "[a-c.]{1,6}",
            prev_reply in "[a-c.]{0,6}",
            topic in "[a-c.]{0,6}",
            reply in "[a-c.]{0,6}",
            header in any::<[u8; NATS_HEADER_LEN]>(),
            from_garbage in any::<bool>(),
        ) {
            let mut buf = if from_garbage {
                prev
            } else {
                NatsAad::new(&[7; NATS_HEADER_LEN], &prev_topic, &prev_reply).unwrap().as_bytes().to_vec()
            };
            match NatsAad::new(&header, &topic, &reply) {
                Ok(want) => {
                    nats_aad_into(&mut buf, &header, &topic, &reply).unwrap();
                    prop_assert_eq!(&buf[..], want.as_bytes());
                }
                Err(e) => prop_assert_eq!(nats_aad_into(&mut buf, &header, &topic, &reply).unwrap_err(), e),
            }
        }
    }

    /// The cases the random test may miss: the same topic as the buffer's with another reply-to of the same
    /// total length, and reply-to bytes moved into the topic.
    #[test]
    fn aad_into_rebuilds_when_topic_and_reply_shift() {
        let h = [1u8; NATS_HEADER_LEN];
        let mut buf = Vec::new();
        for (t, r) in [("a.b", "c"), ("a", "b.c"), ("a.b", "d"), ("a.b", ""), ("a.b.", ""), ("a.b", "c")] {
            nats_aad_into(&mut buf, &h, t, r).unwrap();
            assert_eq!(&buf[..], NatsAad::new(&h, t, r).unwrap().as_bytes(), "{t} / {r}");
        }
        let long = "x".repeat(256);
        assert!(nats_aad_into(&mut buf, &h, &long, "").is_err());
        assert!(nats_aad_into(&mut buf, &h, "", "").is_err());
    }

    /// The associated data is injective in (topic, reply): moving bytes between the two changes it.
    #[test]
    fn aad_separates_topic_and_reply() {
        let h = sample(0)[..NATS_HEADER_LEN].try_into().unwrap();
        let a = NatsAad::new(&h, "a.b", "c").unwrap();
        let b = NatsAad::new(&h, "a", "b.c").unwrap();
        assert_ne!(a.as_bytes(), b.as_bytes());
        assert_ne!(NatsAad::new(&h, "a", "").unwrap().as_bytes(), NatsAad::new(&h, "a", "b").unwrap().as_bytes());
        let long = "x".repeat(256);
        assert!(NatsAad::new(&h, &long, "").is_err());
        assert!(NatsAad::new(&h, "t", &long).is_err());
        assert!(NatsAad::new(&h, "", "").is_err());
        // Both buffers: the stack one up to 128 bytes, the heap one beyond, the same layout.
        let max = "y".repeat(255);
        let big = NatsAad::new(&h, &max, &max).unwrap();
        assert_eq!(big.as_bytes().len(), NATS_AAD_MAX);
        assert_eq!(&big.as_bytes()[..NATS_HEADER_LEN], &h[..]);
        assert_eq!(big.as_bytes()[NATS_HEADER_LEN], 255);
        assert_eq!(big.as_bytes()[NATS_HEADER_LEN + 256], 255);
        for t in [94usize, 95, 96] {
            let topic = "z".repeat(t);
            let a = NatsAad::new(&h, &topic, "").unwrap();
            assert_eq!(a.as_bytes().len(), NATS_HEADER_LEN + 2 + t);
            assert_eq!(&a.as_bytes()[NATS_HEADER_LEN + 1..NATS_HEADER_LEN + 1 + t], topic.as_bytes());
            assert_eq!(a.as_bytes().last(), Some(&0));
        }
    }

    #[test]
    fn round_trip_and_every_malformation() {
        let v = sample(5);
        let m = parse_nats(&v).unwrap();
        assert_eq!((m.priority, m.epoch, m.seq, m.stream()), (Priority::High, 7, (3 << STREAM_SHIFT) | 42, 3));
        assert_eq!(m.payload, NATS_HEADER_LEN..NATS_HEADER_LEN + 5);
        assert_eq!(parse_nats(&sample(0)).unwrap().payload.len(), 0);
        type Mutation = Box<dyn Fn(&mut Vec<u8>)>;
        let cases: Vec<(&str, Mutation)> = vec![
            ("empty", Box::new(|v| v.clear())),
            ("no room for the tag", Box::new(|v| v.truncate(NATS_HEADER_LEN + TAG_LEN - 1))),
            ("version 1", Box::new(|v| v[0] = VERSION)),
            ("version 2 (the earlier layout, with a sender field)", Box::new(|v| v[0] = 2)),
            ("version 4", Box::new(|v| v[0] = 4)),
            ("kind deliver", Box::new(|v| v[1] = Kind::Deliver as u8)),
            ("kind checkpoint", Box::new(|v| v[1] = Kind::Checkpoint as u8)),
            ("priority", Box::new(|v| v[2] = 4)),
        ];
        for (name, f) in cases {
            let mut w = v.clone();
            f(&mut w);
            assert!(matches!(parse_nats(&w), Err(Error::Malformed { .. })), "{name}");
        }
    }

    /// Old and new envelopes are not confusable: each parser refuses the other's envelopes, whatever follows.
    #[test]
    fn v1_v2_and_v3_refuse_each_other() {
        let v3 = sample(64);
        assert!(matches!(parse(&v3), Err(Error::Malformed { .. })));
        // The earlier v2 layout (version 2, then a 16-byte sender after the sequence): refused whatever follows.
        let mut v2 = v3.clone();
        v2[0] = 2;
        v2.splice(NATS_HEADER_LEN..NATS_HEADER_LEN, [7u8; 16]);
        assert!(matches!(parse_nats(&v2), Err(Error::Malformed { .. })));
        assert!(matches!(parse(&v2), Err(Error::Malformed { .. })));
        for kind in [Kind::Publish, Kind::Deliver, Kind::Plain, Kind::Checkpoint] {
            let h = Header {
                kind,
                priority: Priority::Low,
                epoch: 1,
                seq: 1,
                sender: AgentId([1; 16]),
                sub: if kind == Kind::Deliver { 1 } else { 0 },
                topic: "a.b",
                reply: "",
            };
            let mut v1 = Vec::new();
            h.append(&mut v1);
            v1.resize(v1.len() + 64 + TAG_LEN, 0);
            assert!(parse(&v1).is_ok(), "{kind:?}");
            assert!(matches!(parse_nats(&v1), Err(Error::Malformed { .. })), "{kind:?}");
        }
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..200), v3 in any::<bool>()) {
            let mut b = b;
            if v3 && b.len() > 2 {
                b[0] = NATS_VERSION;
                b[1] = 1;
            }
            if let Ok(m) = parse_nats(&b) {
                prop_assert!(m.payload.start == NATS_HEADER_LEN && m.payload.end + TAG_LEN == b.len());
            }
            let _ = parse(&b);
        }

        #[test]
        fn mutated_envelopes_never_panic(i in 0usize..120, x in any::<u8>(), cut in 0usize..120, body in 0usize..80) {
            let mut v = sample(body);
            let i = i % v.len();
            v[i] ^= x;
            v.truncate(v.len().saturating_sub(cut));
            if let Ok(m) = parse_nats(&v) {
                prop_assert!(m.payload.end + TAG_LEN == v.len());
            }
        }
    }
}
