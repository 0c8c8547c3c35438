//! What the key server and the agents share: the limits, the key server's request subjects, status codes
//! and operations, the sealed request/answer exchange with the key server (`ks_call`), sender-key derivation
//! and its scopes, the JetStream message id of an envelope, and the small helpers that turn NATS errors and URLs into
//! the crate's own.

use crate::identity::AgentId;
use crate::{Error, Result};
use futures_util::StreamExt;
use pqkit::hash::sha2::Sha256;
use pqkit::kdf::Hkdf;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use zeroize::Zeroizing;

/// Subjects under this prefix are the key server's (`_PQKIT.ks.<key server id hex>.{hs1,hs3,req}`); no topic
/// key is ever granted for them.
pub const CONTROL_PREFIX: &str = "_PQKIT.";
/// Bits of the envelope sequence that count within one stream (the rest is the stream id the key server
/// handed out with the sender key, as in the in-process bus).
pub(super) const COUNTER_BITS: u32 = 40;
/// Stream ids per (key scope, epoch): after this many sender-key grants the epoch rotates. The envelope has
/// room for 2^24; the key server keeps the grantee of every stream of a kept epoch (16 bytes each, to answer
/// receive-key requests by stream), so it rotates at 2^20 grants: at most 16 MiB per scope and kept epoch.
pub(super) const MAX_STREAMS: u32 = 1 << 20;
/// Replay windows a subscription keeps (one per sender stream and epoch); past this, new streams are refused.
pub(super) const MAX_WINDOWS: usize = 1 << 16;
/// Keys an agent caches (sender keys it opens with, per sender, topic and epoch); the cache is emptied past it.
pub(super) const MAX_KEYS: usize = 1 << 14;
/// Handshakes the key server keeps half-open (between message 1 and 3); the oldest is dropped past it.
pub(super) const MAX_PENDING: usize = 1024;
/// Sessions the key server keeps; the least recently used is dropped past it (that agent must reconnect).
pub(super) const MAX_SESSIONS: usize = 1 << 16;
/// Default messages buffered per subscription by the NATS client
/// ([`NatsOptions::subscription_capacity`](crate::nats::NatsOptions::subscription_capacity)).
pub const SUBSCRIPTION_CAPACITY: usize = 1 << 16;
pub(super) const HELLO_AAD: &[u8] = b"pqkit-bus ks hello v1";

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The NATS servers of `url`: one URL, or a comma-separated list (the nodes of a cluster; the client connects
/// to one and fails over to the others). Errors name the URL at fault.
pub(super) fn servers(url: &str) -> Result<Vec<async_nats::ServerAddr>> {
    let list: Vec<&str> = url.split(',').map(str::trim).filter(|u| !u.is_empty()).collect();
    if list.is_empty() {
        return Err(transport("no NATS server URL given (--nats / $NATS_URL)"));
    }
    list.iter()
        .map(|u| u.parse::<async_nats::ServerAddr>().map_err(|e| transport(format!("NATS URL `{u}`: {e}"))))
        .collect()
}

pub(super) fn transport(e: impl std::fmt::Display) -> Error {
    Error::Transport { reason: e.to_string() }
}

/// Returns once the NATS server has processed everything this connection sent before (a SUB in particular).
/// The server handles one connection's operations in order, so a message published to a fresh subject and
/// received back proves it. `flush` alone only empties the client's socket buffer: a request from another
/// connection could still reach the server before the subscription and get "no responders" (seen in CI).
pub(super) async fn sync_with_server(client: &async_nats::Client) -> Result<()> {
    let probe = format!("{CONTROL_PREFIX}sync.{}", client.new_inbox().trim_start_matches("_INBOX."));
    let mut sub = client.subscribe(probe.clone()).await.map_err(transport)?;
    client.publish(probe, Vec::new().into()).await.map_err(transport)?;
    client.flush().await.map_err(transport)?;
    match tokio::time::timeout(std::time::Duration::from_secs(10), sub.next()).await {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(transport("connection closed while waiting for the NATS server's round trip")),
        Err(_) => Err(transport("no round trip from the NATS server within 10 s")),
    }
}

pub(super) fn random<const N: usize>() -> Result<Zeroizing<[u8; N]>> {
    let mut b = Zeroizing::new([0u8; N]);
    pqkit::rng::fill_os(b.as_mut())?;
    Ok(b)
}

pub(super) fn ks_subject(ks: &AgentId, op: &str) -> String {
    format!("_PQKIT.ks.{}.{op}", ks.to_hex())
}

pub(super) const SESSION_UNKNOWN: &str = "the key server does not know this session";

/// One request to the key server `ks` (operation `op`), waiting at most [`KS_TIMEOUT`]; errors name the key
/// server and the NATS address.
pub(super) async fn ks_call(
    client: &async_nats::Client,
    ks: &AgentId,
    op: &str,
    body: Vec<u8>,
    url: &str,
) -> Result<async_nats::Message> {
    let unreachable = |why: &str| Error::Transport {
        reason: format!("key server {ks} on NATS {url}: {why} (is `pqkit bus keyserver` running with that identity?)"),
    };
    match tokio::time::timeout(KS_TIMEOUT, client.request(ks_subject(ks, op), body.into())).await {
        Err(_) => Err(unreachable(&format!("no answer within {} s", KS_TIMEOUT.as_secs()))),
        Ok(Err(e)) if matches!(e.kind(), async_nats::RequestErrorKind::NoResponders) => {
            Err(unreachable("no responders"))
        }
        Ok(Err(e)) => Err(unreachable(&e.to_string())),
        Ok(Ok(m)) => Ok(m),
    }
}

/// The key scope of a subject: the subject itself, except replies: every `_INBOX.<id>.<token>` of one
/// requester shares the scope `_INBOX.<id>`, so a responder needs one grant per requester, not per request.
pub(super) fn scope_of(topic: &str) -> &str {
    if let Some(rest) = topic.strip_prefix("_INBOX.")
        && let Some(dot) = rest.find('.')
    {
        return &topic[..7 + dot];
    }
    topic
}

/// `K_send(scope, e, A, s) = HKDF-SHA256(salt = "pqkit-bus nats send v3", ikm = T(scope, e), info = A (16) ||
/// s (4, BE) || scope)`: one key per grant, bound to the grantee `A` and the stream `s` the key server handed
/// out with it (docs/bus.md §9, envelope v3: the stream, not a sender field, names the sender).
pub(super) fn derive_send_key(
    secret: &[u8; 32],
    sender: &AgentId,
    stream: u32,
    scope: &str,
) -> Result<Zeroizing<[u8; 32]>> {
    let hk = Hkdf::<Sha256>::new(b"pqkit-bus nats send v3", secret);
    let mut info = Vec::with_capacity(20 + scope.len());
    info.extend_from_slice(&sender.0);
    info.extend_from_slice(&stream.to_be_bytes());
    info.extend_from_slice(scope.as_bytes());
    let mut k = Zeroizing::new([0u8; 32]);
    hk.expand(&info, k.as_mut())?;
    Ok(k)
}

/// Session-request nonce: `0x00000000 || counter (8)`; each direction has its own key.
pub(super) fn req_nonce(ctr: u64) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&ctr.to_be_bytes());
    n
}

// Key-server status codes (first byte of a sealed answer).
pub(super) const ST_OK: u8 = 0;
pub(super) const ST_UNAUTHORISED: u8 = 1;
pub(super) const ST_EXPIRED: u8 = 2;
pub(super) const ST_UNKNOWN: u8 = 3;
pub(super) const ST_MALFORMED: u8 = 4;
// Request operations.
pub(super) const OP_SEND: u8 = 1;
/// Receive key by stream (envelope v3): `3 || epoch (4) || stream (4) || topic` → `sender (16) || key (32)`.
/// (Op 2, a receive key by sender, is gone: the v3 envelope carries no sender.)
pub(super) const OP_RECV: u8 = 3;
/// Liveness: `4` → nothing. Answered `ST_UNKNOWN` (unsealed) when the key server does not know the session,
/// as after its restart: the agent then runs the handshake again.
pub(super) const OP_PING: u8 = 4;
/// Subscription check: `5 || pattern` → nothing if the policy lets the agent subscribe to every topic the
/// pattern matches, `ST_UNAUTHORISED` if not.
pub(super) const OP_MAY_SUB: u8 = 5;
/// How often an agent checks that its key server still knows its session (besides the key server's start-up
/// announcement on `_PQKIT.ks.<id hex>.up`).
pub(super) const KS_CHECK: Duration = Duration::from_secs(5);
/// How long an agent waits for an answer of the key server before it reports it unreachable.
pub(super) const KS_TIMEOUT: Duration = Duration::from_secs(3);

/// The first epoch of a key scope: random in `[1, 2^31)` (not 1), so that a restarted key server does not hand
/// out an (epoch, stream) its predecessor did (a subscriber holding the old key and replay state of that pair
/// would otherwise reject the new publisher's messages); leaves 2^31 rotations of room.
pub(super) fn first_epoch() -> u32 {
    random::<4>().map_or(1, |b| (u32::from_be_bytes(*b) >> 1).max(1))
}

/// The JetStream message id (`Nats-Msg-Id`) of an envelope, 32 hex digits of SHA-256 over `unique`: the AEAD tag
/// of a publish envelope (the last [`TAG_LEN`] bytes), a whole checkpoint. Unique per envelope, so per stream
/// whatever the subject and sender (JetStream deduplicates by id across a whole stream), equal for the retries
/// of one envelope, and derived from bytes the server stores anyway: it tells the server nothing new (no
/// sender id, no sequence).
pub(super) fn msg_id(unique: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(b"pqkit-bus msg-id v1").update(unique);
    let d = h.finalize();
    let mut s = String::with_capacity(32);
    for b in &d[..16] {
        s.push_str(&format!("{b:02x}"));
    }
    s
}
