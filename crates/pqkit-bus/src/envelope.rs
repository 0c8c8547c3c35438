//! The envelope wire format v1 (docs/bus.md §4). The header is the AEAD's associated data.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | version = 1 |
//! | 1 | 1 | kind: 1 publish, 2 deliver, 3 plain |
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
//! [`parse`] is total: any byte string gives `Ok` or an [`Error::Malformed`], never a panic.

use crate::queue::Priority;
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
}

impl Kind {
    /// Whether the body ends in a tag.
    pub fn sealed(self) -> bool {
        self != Kind::Plain
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
        _ => return Err(malformed("unknown kind")),
    };
    let priority = Priority::from_u8(b[2]).ok_or(malformed("priority above 3"))?;
    if b[3] != 0 {
        return Err(malformed("reserved flags set"));
    }
    let epoch = u32::from_be_bytes(b[4..8].try_into().map_err(|_| malformed("epoch"))?);
    let seq = u64::from_be_bytes(b[8..16].try_into().map_err(|_| malformed("sequence"))?);
    let mut sender = [0u8; 16];
    sender.copy_from_slice(&b[16..32]);
    let sub = u64::from_be_bytes(b[32..40].try_into().map_err(|_| malformed("subscription"))?);
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
    let ts = std::str::from_utf8(&b[topic.clone()]).map_err(|_| malformed("topic is not UTF-8"))?;
    validate_subject(ts).map_err(|_| malformed("topic is not a valid subject"))?;
    if r > 0 {
        let rs = std::str::from_utf8(&b[reply.clone()]).map_err(|_| malformed("reply-to is not UTF-8"))?;
        validate_subject(rs).map_err(|_| malformed("reply-to is not a valid subject"))?;
    }
    if kind != Kind::Deliver && sub != 0 {
        return Err(malformed("subscription id set outside a delivery"));
    }
    Ok(Meta { kind, priority, epoch, seq, sender: AgentId(sender), sub, topic, reply, payload })
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
        let t = FIXED_LEN + self.topic.len();
        out[FIXED_LEN..t].copy_from_slice(self.topic.as_bytes());
        out[t..t + self.reply.len()].copy_from_slice(self.reply.as_bytes());
    }

    /// Appends the header to `out`.
    pub fn append(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + self.len(), 0);
        self.write(&mut out[at..]);
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
