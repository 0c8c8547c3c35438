//! The NATS transport (feature `nats`): agents in many processes and machines, over a NATS server or
//! cluster, with the server seeing only sealed envelopes. Design and what the server still learns:
//! `docs/bus.md` §9.
//!
//! - A [`KeyServer`] (one process, any machine that reaches NATS) holds the [`Policy`] and the topic epoch
//!   secrets. Agents run the same authenticated hybrid handshake with it as with the in-process broker
//!   ([`crate::handshake`]), carried in NATS requests, and then ask it for keys over the resulting session.
//! - A [`NatsAgent`] publishes envelopes (the v1 wire format of [`crate::envelope`], kind `publish`) sealed under
//!   its own per-topic sender key straight onto the NATS subject of the topic; subscribers fetch the sender's
//!   key for that topic and epoch from the key server, which grants it only if the policy lets the subscriber
//!   subscribe to the topic and the sender publish on it. Priority, sender and sequence travel in the
//!   authenticated header.
//! - A producer that keeps to one subject takes a [`NatsPublisher`] ([`NatsAgent::publisher`]): key, checkpoint
//!   rule and associated data resolved once, then each message is a seal and a queue.
//! - Request/reply uses NATS inboxes (`_INBOX.<agent id hex>.<token>`), with NATS "no responders".
//! - Durable topics are JetStream streams: [`NatsAgent::declare_durable`], [`NatsAgent::publish_durable`]
//!   (acknowledged by the server, retried with the same envelope and message id) and
//!   [`NatsAgent::subscribe_durable`] (a durable pull consumer; duplicates removed by stream sequence and by the
//!   envelope's replay window).
//!
//! ```no_run
//! # async fn demo() -> pqkit_bus::Result<()> {
//! use pqkit_bus::nats::{KeyServer, NatsAgent};
//! use pqkit_bus::{Identity, Policy, Priority};
//! let ks = KeyServer::new(Identity::generate("keys")?, Policy::allow_all()).serve("nats://127.0.0.1:4222").await?;
//! let alice = NatsAgent::connect("nats://127.0.0.1:4222", &Identity::generate("alice")?, ks.id()).await?;
//! let bob = NatsAgent::connect("nats://127.0.0.1:4222", &Identity::generate("bob")?, ks.id()).await?;
//! let mut sub = bob.subscribe("greetings.*").await?;
//! alice.publish("greetings.bob", b"hello", Priority::Normal).await?;
//! let m = sub.recv().await?;
//! assert_eq!((m.payload(), m.sender()), (&b"hello"[..], alice.id()));
//! # Ok(()) }
//! ```

use crate::bus::{Body, Route};
use crate::checkpoint::{Chain, Checkpoints, SenderAuth, Tally, Verifier};
use crate::envelope::{self, Kind, MAX_PAYLOAD, NatsAad, NatsHeader, TAG_LEN};
use crate::handshake;
use crate::identity::{AgentId, Identity};
use crate::policy::Policy;
use crate::queue::Priority;
use crate::subject::{matches, same, validate_pattern, validate_subject};
use crate::window::{Replay, Window};
use crate::{Error, Message, Metrics, Result};
use async_nats::jetstream;
use futures_util::StreamExt;
use pqkit::aead::{Aead, Aes256Gcm};
use pqkit::hash::sha2::Sha256;
use pqkit::kdf::Hkdf;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};
use zeroize::Zeroizing;

/// Subjects under this prefix are the key server's (`_PQKIT.ks.<key server id hex>.{hs1,hs3,req}`); no topic
/// key is ever granted for them.
pub const CONTROL_PREFIX: &str = "_PQKIT.";
/// Bits of the envelope sequence that count within one stream (the rest is the stream id the key server
/// handed out with the sender key, as in the in-process bus).
const COUNTER_BITS: u32 = 40;
/// Stream ids per (key scope, epoch): after this many sender-key grants the epoch rotates. The envelope has
/// room for 2^24; the key server keeps the grantee of every stream of a kept epoch (16 bytes each, to answer
/// receive-key requests by stream), so it rotates at 2^20 grants: at most 16 MiB per scope and kept epoch.
const MAX_STREAMS: u32 = 1 << 20;
/// Replay windows a subscription keeps (one per sender stream and epoch); past this, new streams are refused.
const MAX_WINDOWS: usize = 1 << 16;
/// Keys an agent caches (sender keys it opens with, per sender, topic and epoch); the cache is emptied past it.
const MAX_KEYS: usize = 1 << 14;
/// Handshakes the key server keeps half-open (between message 1 and 3); the oldest is dropped past it.
const MAX_PENDING: usize = 1024;
/// Sessions the key server keeps; the least recently used is dropped past it (that agent must reconnect).
const MAX_SESSIONS: usize = 1 << 16;
/// Default messages buffered per subscription by the NATS client ([`NatsOptions::subscription_capacity`]).
pub const SUBSCRIPTION_CAPACITY: usize = 1 << 16;
const HELLO_AAD: &[u8] = b"pqkit-bus ks hello v1";

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The NATS servers of `url`: one URL, or a comma-separated list (the nodes of a cluster; the client connects
/// to one and fails over to the others). Errors name the URL at fault.
fn servers(url: &str) -> Result<Vec<async_nats::ServerAddr>> {
    let list: Vec<&str> = url.split(',').map(str::trim).filter(|u| !u.is_empty()).collect();
    if list.is_empty() {
        return Err(transport("no NATS server URL given (--nats / $NATS_URL)"));
    }
    list.iter()
        .map(|u| u.parse::<async_nats::ServerAddr>().map_err(|e| transport(format!("NATS URL `{u}`: {e}"))))
        .collect()
}

fn transport(e: impl std::fmt::Display) -> Error {
    Error::Transport { reason: e.to_string() }
}

/// Returns once the NATS server has processed everything this connection sent before (a SUB in particular).
/// The server handles one connection's operations in order, so a message published to a fresh subject and
/// received back proves it. `flush` alone only empties the client's socket buffer: a request from another
/// connection could still reach the server before the subscription and get "no responders" (seen in CI).
async fn sync_with_server(client: &async_nats::Client) -> Result<()> {
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

fn random<const N: usize>() -> Result<Zeroizing<[u8; N]>> {
    let mut b = Zeroizing::new([0u8; N]);
    pqkit::rng::fill_os(b.as_mut())?;
    Ok(b)
}

fn ks_subject(ks: &AgentId, op: &str) -> String {
    format!("_PQKIT.ks.{}.{op}", ks.to_hex())
}

const SESSION_UNKNOWN: &str = "the key server does not know this session";

/// One request to the key server `ks` (operation `op`), waiting at most [`KS_TIMEOUT`]; errors name the key
/// server and the NATS address.
async fn ks_call(
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

/// Keeps an agent's key-server session alive across key-server restarts: on the key server's start-up
/// announcement, and every [`KS_CHECK`], asks it whether it knows the session, and runs the handshake again
/// if not ([`AgentInner::ks_request`]). Ends with the agent.
async fn watch_key_server(weak: Weak<AgentInner>, mut up: async_nats::Subscriber) {
    loop {
        if let Ok(None) = tokio::time::timeout(KS_CHECK, up.next()).await {
            return;
        }
        let Some(a) = weak.upgrade() else { return };
        let _ = a.ks_request(&[OP_PING]).await;
    }
}

/// The key scope of a subject: the subject itself, except replies: every `_INBOX.<id>.<token>` of one
/// requester shares the scope `_INBOX.<id>`, so a responder needs one grant per requester, not per request.
fn scope_of(topic: &str) -> &str {
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
fn derive_send_key(secret: &[u8; 32], sender: &AgentId, stream: u32, scope: &str) -> Result<Zeroizing<[u8; 32]>> {
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
fn req_nonce(ctr: u64) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&ctr.to_be_bytes());
    n
}

// Key-server status codes (first byte of a sealed answer).
const ST_OK: u8 = 0;
const ST_UNAUTHORISED: u8 = 1;
const ST_EXPIRED: u8 = 2;
const ST_UNKNOWN: u8 = 3;
const ST_MALFORMED: u8 = 4;
// Request operations.
const OP_SEND: u8 = 1;
/// Receive key by stream (envelope v3): `3 || epoch (4) || stream (4) || topic` → `sender (16) || key (32)`.
/// (Op 2, a receive key by sender, is gone: the v3 envelope carries no sender.)
const OP_RECV: u8 = 3;
/// Liveness: `4` → nothing. Answered `ST_UNKNOWN` (unsealed) when the key server does not know the session,
/// as after its restart: the agent then runs the handshake again.
const OP_PING: u8 = 4;
/// Subscription check: `5 || pattern` → nothing if the policy lets the agent subscribe to every topic the
/// pattern matches, `ST_UNAUTHORISED` if not.
const OP_MAY_SUB: u8 = 5;
/// How often an agent checks that its key server still knows its session (besides the key server's start-up
/// announcement on `_PQKIT.ks.<id hex>.up`).
const KS_CHECK: Duration = Duration::from_secs(5);
/// How long an agent waits for an answer of the key server before it reports it unreachable.
const KS_TIMEOUT: Duration = Duration::from_secs(3);

/// The first epoch of a key scope: random in `[1, 2^31)` (not 1), so that a restarted key server does not hand
/// out an (epoch, stream) its predecessor did (a subscriber holding the old key and replay state of that pair
/// would otherwise reject the new publisher's messages); leaves 2^31 rotations of room.
fn first_epoch() -> u32 {
    random::<4>().map_or(1, |b| (u32::from_be_bytes(*b) >> 1).max(1))
}

// ---------------------------------------------------------------------------------------------------------
// Key server

/// Counters of a running key server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyServerMetrics {
    /// Completed handshakes (sessions opened).
    pub handshakes: u64,
    /// Sender keys granted to publishers.
    pub send_grants: u64,
    /// Sender keys granted to subscribers (to open with).
    pub recv_grants: u64,
    /// Requests refused: failed handshakes, unknown sessions, bad tags, replays, policy refusals.
    pub refused: u64,
}

#[derive(Default)]
struct KsCounters {
    handshakes: AtomicU64,
    send_grants: AtomicU64,
    recv_grants: AtomicU64,
    refused: AtomicU64,
}

/// The key server of a NATS deployment: holds the policy and every topic's epoch secrets, authenticates agents
/// with the hybrid handshake, and grants sender keys. It is trusted exactly as the in-process broker is (it is
/// the key server); the NATS server is not trusted with anything but delivery.
pub struct KeyServer {
    identity: Identity,
    policy: Policy,
    rotate_after: Duration,
    keep_epochs: usize,
}

impl std::fmt::Debug for KeyServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyServer").field("identity", self.identity.public()).finish_non_exhaustive()
    }
}

struct KsSession {
    peer: AgentId,
    send: Aes256Gcm,
    recv: Aes256Gcm,
    window: Window,
    used: Instant,
}

struct EpochKey {
    epoch: u32,
    secret: Zeroizing<[u8; 32]>,
    started: Instant,
    next_stream: u32,
    /// The agent each stream was granted to (index = stream; `len() == next_stream`).
    grantees: Vec<AgentId>,
}

struct KsState {
    identity: Identity,
    policy: Policy,
    rotate_after: Duration,
    keep_epochs: usize,
    pending: HashMap<[u8; 16], (handshake::Responder, Instant)>,
    sessions: HashMap<[u8; 16], KsSession>,
    /// Per key scope, the kept epochs, oldest first (older ones are dropped: their secrets zeroize).
    scopes: HashMap<String, Vec<EpochKey>>,
    counters: Arc<KsCounters>,
}

/// A running key server; dropping it (or [`shutdown`](Self::shutdown)) stops it.
pub struct KeyServerHandle {
    id: AgentId,
    counters: Arc<KsCounters>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for KeyServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyServerHandle").field("id", &self.id).finish_non_exhaustive()
    }
}

impl KeyServerHandle {
    /// The key server's [`AgentId`]: agents pin it when they connect.
    pub fn id(&self) -> AgentId {
        self.id
    }
    /// A snapshot of the counters.
    pub fn metrics(&self) -> KeyServerMetrics {
        let c = &self.counters;
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        KeyServerMetrics {
            handshakes: r(&c.handshakes),
            send_grants: r(&c.send_grants),
            recv_grants: r(&c.recv_grants),
            refused: r(&c.refused),
        }
    }
    /// Runs until the task ends (it ends only if its NATS subscription does).
    pub async fn wait(&mut self) {
        let _ = (&mut self.task).await;
    }
    /// Stops serving (sessions and epoch secrets are dropped and zeroized).
    pub fn shutdown(self) {}
}

impl Drop for KeyServerHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl KeyServer {
    /// A key server with `identity` (agents pin its id) and `policy`; epochs rotate every 10 minutes and the
    /// current and previous epoch are kept.
    pub fn new(identity: Identity, policy: Policy) -> KeyServer {
        KeyServer { identity, policy, rotate_after: Duration::from_secs(600), keep_epochs: 2 }
    }
    /// Rotate each topic's epoch after this age (checked at each grant).
    pub fn rotate_after(mut self, d: Duration) -> Self {
        self.rotate_after = d;
        self
    }
    /// How many epochs of each topic to keep (at least 2: the current and the previous). Durable topics need
    /// more: a subscriber returning after `n - 1` rotations can no longer open what it missed (`Expired`).
    pub fn keep_epochs(mut self, n: usize) -> Self {
        self.keep_epochs = n.max(2);
        self
    }
    /// The key server's id.
    pub fn id(&self) -> AgentId {
        self.identity.id()
    }

    /// Connects to NATS at `url` and serves on `_PQKIT.ks.<id hex>.*` in a tokio task.
    pub async fn serve(self, url: &str) -> Result<KeyServerHandle> {
        let client = async_nats::ConnectOptions::new()
            .name("pqkit-bus key server")
            .connect(servers(url)?)
            .await
            .map_err(|e| transport(format!("NATS {url}: {e}")))?;
        let id = self.identity.id();
        let prefix = format!("_PQKIT.ks.{}.", id.to_hex());
        let mut sub = client.subscribe(format!("{prefix}*")).await.map_err(transport)?;
        sync_with_server(&client).await?;
        // Running agents check their sessions at once (a predecessor's are gone) instead of at their next
        // periodic check.
        client.publish(format!("{prefix}up"), Vec::new().into()).await.map_err(transport)?;
        let counters = Arc::new(KsCounters::default());
        let mut st = KsState {
            identity: self.identity,
            policy: self.policy,
            rotate_after: self.rotate_after,
            keep_epochs: self.keep_epochs,
            pending: HashMap::new(),
            sessions: HashMap::new(),
            scopes: HashMap::new(),
            counters: counters.clone(),
        };
        let c2 = client.clone();
        let task = tokio::spawn(async move {
            while let Some(msg) = sub.next().await {
                let Some(reply) = msg.reply.clone() else { continue };
                let op = msg.subject.as_str().strip_prefix(prefix.as_str()).unwrap_or("");
                let answer = match op {
                    "hs1" => st.hs1(&msg.payload),
                    "hs3" => st.hs3(&msg.payload),
                    "req" => st.req(&msg.payload),
                    _ => None,
                };
                match answer {
                    Some(a) => {
                        let _ = c2.publish(reply, a.into()).await;
                    }
                    None => {
                        st.counters.refused.fetch_add(1, Ordering::Relaxed);
                        let _ = c2.publish(reply, vec![0xFF].into()).await;
                    }
                }
            }
        });
        Ok(KeyServerHandle { id, counters, task })
    }
}

impl KsState {
    /// Handshake message 1 → `0 || token (16) || message 2`.
    fn hs1(&mut self, m1: &[u8]) -> Option<Vec<u8>> {
        let (rs, m2) = handshake::respond(&self.identity, m1).ok()?;
        let token = *random::<16>().ok()?;
        let now = Instant::now();
        self.pending.retain(|_, (_, t)| now.duration_since(*t) < Duration::from_secs(30));
        if self.pending.len() >= MAX_PENDING
            && let Some(k) = self.pending.iter().min_by_key(|(_, (_, t))| *t).map(|(k, _)| *k)
        {
            self.pending.remove(&k);
        }
        self.pending.insert(token, (rs, now));
        let mut out = Vec::with_capacity(17 + m2.len());
        out.push(ST_OK);
        out.extend_from_slice(&token);
        out.extend_from_slice(&m2);
        Some(out)
    }

    /// `token (16) || message 3` → `0 || session id (16) || tag(hello)`, or `1` if the policy does not know
    /// the agent.
    fn hs3(&mut self, b: &[u8]) -> Option<Vec<u8>> {
        if b.len() < 16 {
            return None;
        }
        let token: [u8; 16] = b[..16].try_into().ok()?;
        let (rs, _) = self.pending.remove(&token)?;
        let (keys, peer) = rs.finish(&b[16..]).ok()?;
        if !self.policy.knows(&peer.id()) {
            self.counters.refused.fetch_add(1, Ordering::Relaxed);
            return Some(vec![ST_UNAUTHORISED]);
        }
        let sid = *random::<16>().ok()?;
        let mut aad = HELLO_AAD.to_vec();
        aad.extend_from_slice(&sid);
        let tag = keys.send.seal(&[0u8; 12], &aad, b"").ok()?;
        if self.sessions.len() >= MAX_SESSIONS
            && let Some(k) = self.sessions.iter().min_by_key(|(_, s)| s.used).map(|(k, _)| *k)
        {
            self.sessions.remove(&k);
        }
        self.sessions.insert(
            sid,
            KsSession {
                peer: peer.id(),
                send: keys.send,
                recv: keys.recv,
                window: Window::default(),
                used: Instant::now(),
            },
        );
        self.counters.handshakes.fetch_add(1, Ordering::Relaxed);
        let mut out = vec![ST_OK];
        out.extend_from_slice(&sid);
        out.extend_from_slice(&tag);
        Some(out)
    }

    /// `session id (16) || counter (8) || sealed request` → `0 || sealed answer`; `3` for an unknown session.
    fn req(&mut self, b: &[u8]) -> Option<Vec<u8>> {
        if b.len() < 24 + TAG_LEN + 1 {
            return None;
        }
        let sid: [u8; 16] = b[..16].try_into().ok()?;
        let ctr = u64::from_be_bytes(b[16..24].try_into().ok()?);
        let Some(s) = self.sessions.get_mut(&sid) else { return Some(vec![ST_UNKNOWN]) };
        s.window.check(ctr).ok()?;
        let mut body = Zeroizing::new(b[24..b.len() - TAG_LEN].to_vec());
        s.recv.open_in_place_detached(&req_nonce(ctr), &b[..24], &mut body, &b[b.len() - TAG_LEN..]).ok()?;
        s.window.commit(ctr);
        s.used = Instant::now();
        let peer = s.peer;
        let mut answer = Zeroizing::new(self.op(peer, &body).unwrap_or_else(|st| vec![st]));
        let s = self.sessions.get(&sid)?;
        let tag = s.send.seal_in_place_detached(&req_nonce(ctr), &b[..24], &mut answer).ok()?;
        let mut out = Vec::with_capacity(1 + answer.len() + TAG_LEN);
        out.push(ST_OK);
        out.extend_from_slice(&answer);
        out.extend_from_slice(&tag);
        Some(out)
    }

    fn refuse(&self, st: u8) -> u8 {
        self.counters.refused.fetch_add(1, Ordering::Relaxed);
        st
    }

    fn op(&mut self, peer: AgentId, body: &[u8]) -> std::result::Result<Vec<u8>, u8> {
        match body.first() {
            // 1 || rotate_from (4) || topic
            Some(&OP_SEND) if body.len() > 5 => {
                let rotate_from = u32::from_be_bytes([body[1], body[2], body[3], body[4]]);
                let topic = std::str::from_utf8(&body[5..]).map_err(|_| ST_MALFORMED)?;
                validate_subject(topic).map_err(|_| ST_MALFORMED)?;
                if topic.starts_with(CONTROL_PREFIX) || !self.policy.may_publish(&peer, topic) {
                    return Err(self.refuse(ST_UNAUTHORISED));
                }
                let scope = scope_of(topic).to_string();
                let (rotate_after, keep) = (self.rotate_after, self.keep_epochs);
                let epochs = self.scopes.entry(scope.clone()).or_default();
                let due = match epochs.last() {
                    None => true,
                    Some(e) => {
                        e.started.elapsed() >= rotate_after
                            || (rotate_from != 0 && rotate_from == e.epoch)
                            || e.next_stream >= MAX_STREAMS
                    }
                };
                if due {
                    let epoch = epochs.last().map_or_else(first_epoch, |e| e.epoch.saturating_add(1));
                    if epochs.last().is_none_or(|e| e.epoch < epoch) {
                        let secret = random::<32>().map_err(|_| ST_UNKNOWN)?;
                        epochs.push(EpochKey {
                            epoch,
                            secret,
                            started: Instant::now(),
                            next_stream: 0,
                            grantees: Vec::new(),
                        });
                    }
                    while epochs.len() > keep {
                        epochs.remove(0);
                    }
                }
                let e = epochs.last_mut().ok_or(ST_UNKNOWN)?;
                if e.next_stream >= MAX_STREAMS {
                    return Err(ST_EXPIRED);
                }
                let stream = e.next_stream;
                let key = derive_send_key(&e.secret, &peer, stream, &scope).map_err(|_| ST_UNKNOWN)?;
                e.next_stream += 1;
                e.grantees.push(peer);
                let mut out = vec![ST_OK];
                out.extend_from_slice(&e.epoch.to_be_bytes());
                out.extend_from_slice(&stream.to_be_bytes());
                out.extend_from_slice(key.as_ref());
                self.counters.send_grants.fetch_add(1, Ordering::Relaxed);
                Ok(out)
            }
            // 3 || epoch (4) || stream (4) || topic → sender (16) || key (32)
            Some(&OP_RECV) if body.len() > 9 => {
                let epoch = u32::from_be_bytes([body[1], body[2], body[3], body[4]]);
                let stream = u32::from_be_bytes([body[5], body[6], body[7], body[8]]);
                let topic = std::str::from_utf8(&body[9..]).map_err(|_| ST_MALFORMED)?;
                validate_subject(topic).map_err(|_| ST_MALFORMED)?;
                if topic.starts_with(CONTROL_PREFIX) || !self.policy.may_subscribe(&peer, topic) {
                    return Err(self.refuse(ST_UNAUTHORISED));
                }
                let scope = scope_of(topic);
                let Some(epochs) = self.scopes.get(scope) else { return Err(self.refuse(ST_UNKNOWN)) };
                let Some(e) = epochs.iter().find(|e| e.epoch == epoch) else {
                    let oldest = epochs.first().map_or(0, |e| e.epoch);
                    return Err(self.refuse(if epoch < oldest { ST_EXPIRED } else { ST_UNKNOWN }));
                };
                // The stream names the sender: the one agent it was granted to in this scope and epoch.
                let Some(&sender) = e.grantees.get(stream as usize) else { return Err(self.refuse(ST_UNKNOWN)) };
                if !self.policy.may_publish(&sender, topic) {
                    return Err(self.refuse(ST_UNAUTHORISED));
                }
                let key = derive_send_key(&e.secret, &sender, stream, scope).map_err(|_| ST_UNKNOWN)?;
                let mut out = vec![ST_OK];
                out.extend_from_slice(&sender.0);
                out.extend_from_slice(key.as_ref());
                self.counters.recv_grants.fetch_add(1, Ordering::Relaxed);
                Ok(out)
            }
            Some(&OP_PING) => Ok(vec![ST_OK]),
            Some(&OP_MAY_SUB) if body.len() > 1 => {
                let pattern = std::str::from_utf8(&body[1..]).map_err(|_| ST_MALFORMED)?;
                validate_pattern(pattern).map_err(|_| ST_MALFORMED)?;
                if pattern.starts_with(CONTROL_PREFIX) || !self.policy.may_subscribe(&peer, pattern) {
                    return Err(ST_UNAUTHORISED);
                }
                Ok(vec![ST_OK])
            }
            _ => Err(self.refuse(ST_MALFORMED)),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Agents

/// Options of a [`NatsAgent`].
#[derive(Clone, Copy, Debug)]
pub struct NatsOptions {
    /// Ask the key server for a new epoch after this many messages under one sender key (default 2^24, at most
    /// 2^39).
    pub rotate_after_messages: u64,
    /// How long a durable consumer waits for an acknowledgement before the server redelivers (default 2 s):
    /// also how long a restarted subscriber waits for what its predecessor held unacknowledged.
    pub ack_wait: Duration,
    /// How long [`NatsAgent::publish_durable`] retries (server down, no acknowledgement) before it gives up
    /// (default 30 s).
    pub durable_retry: Duration,
    /// Messages the NATS client buffers per subscription before it drops them as a slow consumer (core NATS is
    /// at-most-once; default 65,536, async-nats's own default). Raise it for bursty topics with slow readers.
    pub subscription_capacity: usize,
}

impl Default for NatsOptions {
    fn default() -> Self {
        NatsOptions {
            rotate_after_messages: 1 << 24,
            ack_wait: Duration::from_secs(2),
            durable_retry: Duration::from_secs(30),
            subscription_capacity: SUBSCRIPTION_CAPACITY,
        }
    }
}

#[derive(Default)]
struct Counters {
    published: AtomicU64,
    received: AtomicU64,
    duplicates: AtomicU64,
    malformed: AtomicU64,
    auth_failed: AtomicU64,
    replayed: AtomicU64,
    expired: AtomicU64,
    unknown_key: AtomicU64,
    unauthorised: AtomicU64,
    unsigned: AtomicU64,
    checkpoints: AtomicU64,
}

struct AgentSession {
    sid: [u8; 16],
    send: Aes256Gcm,
    recv: Aes256Gcm,
    ctr: u64,
}

/// A sender key granted for one scope: its epoch, this holder's stream, and the stream's counter.
struct SendKey {
    epoch: u32,
    stream: u32,
    aead: Aes256Gcm,
    next: AtomicU64,
}

/// The publisher's chain of one checkpointed topic (its lock also keeps seal, chain and send in one order).
struct TopicChain {
    chain: Chain,
    cfg: Checkpoints,
    /// Some message of the pending batch went through JetStream: so does its checkpoint.
    durable: bool,
}

impl SendKey {
    /// Seals one envelope (`header || payload sealed || tag`) with sequence number `seq` under `aad`, whose first
    /// bytes are `header`. One allocation, no zero-fill of the payload's room: header, payload, sealed in place,
    /// then the tag.
    #[inline]
    fn seal(
        &self,
        seq: u64,
        priority: Priority,
        header: &[u8; envelope::NATS_HEADER_LEN],
        aad: &[u8],
        payload: &[u8],
    ) -> Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(header.len() + payload.len() + TAG_LEN);
        buf.extend_from_slice(header);
        buf.extend_from_slice(payload);
        let body = &mut buf[header.len()..];
        let tag = self.aead.seal_in_place_detached(&envelope::nonce(Kind::Publish, priority, seq), aad, body)?;
        buf.extend_from_slice(&tag);
        Ok(buf)
    }
}

/// The sender keys by key scope, and the last one looked up: a publisher that keeps to one scope finds its key
/// by one comparison instead of hashing the subject on every publish.
#[derive(Default)]
struct SendKeys {
    map: HashMap<String, Arc<SendKey>>,
    /// The scope and key of the last lookup that found one (the `String` is reused: no allocation per switch).
    last: Option<(String, Arc<SendKey>)>,
    /// The NATS client's subject of the last publish: handed to the client again while the subject repeats (a
    /// reference count on shared bytes instead of allocating and copying the subject per publish).
    subject: Option<async_nats::Subject>,
}

impl SendKeys {
    fn get(&mut self, scope: &str) -> Option<Arc<SendKey>> {
        if let Some((s, k)) = &self.last
            && s == scope
        {
            return Some(k.clone());
        }
        let k = self.map.get(scope)?.clone();
        match &mut self.last {
            Some((s, last)) => {
                s.clear();
                s.push_str(scope);
                *last = k.clone();
            }
            None => self.last = Some((scope.to_string(), k.clone())),
        }
        Some(k)
    }
    /// The client's subject for `subject`, shared with the last publish when it is the same.
    fn subject(&mut self, subject: &str) -> async_nats::Subject {
        match &self.subject {
            Some(s) if s.as_str() == subject => s.clone(),
            _ => {
                let s = async_nats::Subject::from(subject);
                self.subject = Some(s.clone());
                s
            }
        }
    }
    fn insert(&mut self, scope: &str, k: Arc<SendKey>) {
        if let Some((s, last)) = &mut self.last
            && s == scope
        {
            *last = k.clone();
        }
        self.map.insert(scope.to_string(), k);
    }
}

/// A publisher on one NATS subject, from [`NatsAgent::publisher`]: the subject checked, the sender key held,
/// the checkpoint decision made, and the associated data built once. Cheap to hold; not `Clone` (each producer
/// takes its own with [`NatsAgent::publisher`]).
pub struct NatsPublisher {
    agent: Arc<AgentInner>,
    subject: String,
    /// The client's subject, shared by every message (a reference count, not a copy per message).
    nats_subject: async_nats::Subject,
    /// The sender key of the subject's scope (the agent's: its counter is shared with every publish there).
    key: Arc<SendKey>,
    /// The value of [`AgentInner::rules`] when `chain` was decided.
    rules: u64,
    /// The value of [`AgentInner::keys_gen`] when `key` was taken.
    keys_gen: u64,
    /// The subject's checkpoint chain, when a rule covers it.
    chain: Option<Arc<tokio::sync::Mutex<TopicChain>>>,
    /// `header || t || subject || 0` (no reply-to), the header rewritten per message.
    aad: Vec<u8>,
}

impl std::fmt::Debug for NatsPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsPublisher").field("subject", &self.subject).finish_non_exhaustive()
    }
}

impl NatsPublisher {
    /// The subject.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// Publishes one sealed message, as [`NatsAgent::publish`] on the handle's subject does: returns once the
    /// client queued it ([`NatsAgent::flush`] waits until the server has it). When the sender key is used up
    /// the agent asks the key server for the next epoch and the handle keeps the new key.
    pub async fn publish(&mut self, payload: &[u8], priority: Priority) -> Result<()> {
        let rules = self.agent.rules.load(Ordering::Acquire);
        if rules != self.rules {
            self.chain = self.agent.chain_for(&self.subject);
            self.rules = rules;
        }
        let keys_gen = self.agent.keys_gen.load(Ordering::Acquire);
        if keys_gen != self.keys_gen {
            // The agent ran the handshake again (a restarted key server): the held key is its predecessor's.
            self.key = self.agent.send_key(&self.subject).await?;
            self.keys_gen = keys_gen;
        }
        let a = &*self.agent;
        if let Some(tc) = &self.chain {
            return a.send_chained(tc, &self.subject, payload, priority, None, false).await;
        }
        if payload.len() > MAX_PAYLOAD {
            return Err(Error::PayloadTooLarge { len: payload.len() });
        }
        let k = &self.key;
        let n = k.next.fetch_add(1, Ordering::Relaxed);
        let env = if n < a.opts.rotate_after_messages {
            let seq = (u64::from(k.stream) << COUNTER_BITS) | n;
            let header = NatsHeader { priority, epoch: k.epoch, seq }.encode();
            self.aad[..header.len()].copy_from_slice(&header);
            k.seal(seq, priority, &header, &self.aad, payload)?
        } else {
            let env = Box::pin(a.seal_fetching(&self.subject, payload, priority, None)).await?.0;
            if let Some(k) = a.send_key_cached(&self.subject)? {
                self.key = k;
            }
            env
        };
        a.client.publish(self.nats_subject.clone(), env.into()).await.map_err(transport)?;
        a.counters.published.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// Checkpoint rules (patterns that opt in) and the running chains per topic.
#[derive(Default)]
struct Signing {
    rules: Vec<(String, Checkpoints)>,
    chains: HashMap<String, Arc<tokio::sync::Mutex<TopicChain>>>,
    /// Subjects published on that no rule covers (emptied when a rule is added, and past `MAX_KEYS`).
    unchained: std::collections::HashSet<String>,
    /// The last subject looked up and its answer (`None`: no rule covers it); forgotten when a rule is added.
    /// A publisher that keeps to one subject finds it by one comparison instead of a hash per publish.
    last: Option<(String, Option<Arc<tokio::sync::Mutex<TopicChain>>>)>,
}

impl Signing {
    fn remember(&mut self, subject: &str, c: Option<Arc<tokio::sync::Mutex<TopicChain>>>) {
        match &mut self.last {
            Some((s, last)) => {
                s.clear();
                s.push_str(subject);
                *last = c;
            }
            None => self.last = Some((subject.to_string(), c)),
        }
    }
}

/// A key to open one sender stream with, and the sender the key server granted that stream to.
struct RecvKey {
    sender: AgentId,
    aead: Aes256Gcm,
}

/// Receive keys by key scope, then (epoch, stream): looked up by `&str` without allocating.
type RecvKeys = HashMap<String, HashMap<(u32, u32), Arc<RecvKey>>>;

struct AgentInner {
    client: async_nats::Client,
    js: jetstream::Context,
    id: AgentId,
    ks: AgentId,
    opts: NatsOptions,
    session: Mutex<AgentSession>,
    send_keys: Mutex<SendKeys>,
    recv_keys: Mutex<RecvKeys>,
    inbox: String,
    pending: Mutex<HashMap<String, tokio::sync::oneshot::Sender<Result<Message>>>>,
    inbox_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    counters: Counters,
    /// The agent's identity (signs checkpoints).
    identity: Arc<Identity>,
    signing: Mutex<Signing>,
    /// Checkpoint rules added so far (each [`NatsAgent::sign_checkpoints`] adds one, after the rule is in
    /// place): publishes on an agent without rules never take the signing lock, and a [`NatsPublisher`]
    /// decides again whether a rule covers its subject only when this moved.
    rules: AtomicU64,
    /// Moves each time the agent ran the handshake again (a restarted key server): the sender keys are gone
    /// and [`NatsPublisher`]s fetch theirs again.
    keys_gen: AtomicU64,
    /// The key-server watch task ([`watch_key_server`]).
    watch_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The NATS server address(es) the agent was given, for error messages.
    url: String,
    /// Wakes the checkpoint timer task when a batch starts.
    timer_wake: Arc<tokio::sync::Notify>,
    timer_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for AgentInner {
    fn drop(&mut self) {
        if let Some(t) = lock(&self.inbox_task).take() {
            t.abort();
        }
        if let Some(t) = lock(&self.timer_task).take() {
            t.abort();
        }
        if let Some(t) = lock(&self.watch_task).take() {
            t.abort();
        }
    }
}

/// An agent connected to a NATS server (or cluster) and authenticated to a [`KeyServer`]. Cheap to clone.
#[derive(Clone)]
pub struct NatsAgent {
    inner: Arc<AgentInner>,
}

impl std::fmt::Debug for NatsAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsAgent").field("id", &self.inner.id).finish_non_exhaustive()
    }
}

/// Replay windows of one subscription, per (key scope, epoch, stream): a stream is granted to one sender per
/// scope and epoch, so this is per (sender, scope, epoch, stream).
#[derive(Default)]
struct Windows {
    /// Exact replay sets ([`Replay::Exact`], durable subscriptions) instead of 64-entry windows.
    exact: bool,
    /// By key scope, then (epoch, stream).
    map: HashMap<String, HashMap<(u32, u32), Replay>>,
    len: usize,
    /// The entry the last message used, with its key: a stream of messages from one sender on one topic opens
    /// without a lock or a hash lookup. Its window is the authoritative copy while it is hot and is written
    /// back to `map` before any other entry is used.
    hot: Option<Hot>,
    /// The topic of the last message, shared by the messages handed over (one allocation per topic change).
    last_topic: Option<Arc<str>>,
    /// The route (topic, sender, reply-to) of the last message handed over, shared by the next ones while they
    /// repeat it (no allocation per message).
    route: Option<Arc<Route>>,
    /// The associated data of the last message opened (`envelope::nats_aad_into`): only its header changes
    /// while the topic and reply-to repeat.
    aad: Vec<u8>,
}

struct Hot {
    scope: String,
    wid: (u32, u32),
    window: Replay,
    key: Arc<RecvKey>,
}

impl Windows {
    /// The replay state as text, one line per sender stream: `<scope> <epoch> <stream> <replay>` (see
    /// [`Replay::to_text`]).
    fn to_text(&self) -> String {
        let mut out = String::new();
        let hot = self.hot.as_ref().map(|h| (h.scope.as_str(), h.wid, &h.window));
        let cold = self.map.iter().flat_map(|(scope, m)| m.iter().map(move |(wid, r)| (scope.as_str(), *wid, r)));
        for (scope, (epoch, stream), r) in hot.into_iter().chain(cold) {
            out.push_str(&format!("{scope} {epoch} {stream} {}\n", r.to_text()));
        }
        out
    }

    /// Loads [`to_text`](Self::to_text)'s output (replacing nothing already held for the same stream).
    fn load_text(&mut self, text: &str) -> Result<()> {
        Windows::cool_fields(&mut self.hot, &mut self.map);
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let bad = || Error::Malformed { reason: "replay state: a line is not `scope epoch stream kind fields`" };
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 5 {
                return Err(bad());
            }
            validate_subject(f[0]).map_err(|_| bad())?;
            let epoch: u32 = f[1].parse().map_err(|_| bad())?;
            let stream: u32 = f[2].parse().map_err(|_| bad())?;
            let r = Replay::from_text(f[3], &f[4..]).ok_or_else(bad)?;
            if self.len >= MAX_WINDOWS {
                return Err(Error::Malformed { reason: "replay state: too many streams" });
            }
            if self.map.entry(f[0].to_string()).or_default().insert((epoch, stream), r).is_none() {
                self.len += 1;
            }
        }
        Ok(())
    }

    /// Writes the hot window back into the map (before the map is read or another entry becomes hot). On the
    /// two fields it touches, so that a caller may hold another field (the associated data) borrowed.
    fn cool_fields(hot: &mut Option<Hot>, map: &mut HashMap<String, HashMap<(u32, u32), Replay>>) {
        if let Some(h) = hot.take() {
            let per_scope = match map.get_mut(h.scope.as_str()) {
                Some(w) => w,
                None => map.entry(h.scope.clone()).or_default(),
            };
            per_scope.insert(h.wid, h.window);
        }
    }

    /// The shared route for a message on `topic` from `sender` with `reply`: the last one when it is the same.
    /// `same_topic`: the caller found `topic` equal to the last topic already (not compared again).
    fn route(&mut self, topic: &str, same_topic: bool, sender: AgentId, reply: Option<&str>) -> Arc<Route> {
        let topic = match &self.last_topic {
            Some(t) if same_topic => t.clone(),
            _ => self.topic(topic),
        };
        match &self.route {
            Some(r) if r.is(&topic, sender, reply) => r.clone(),
            _ => {
                let r = Route::shared(topic, sender, reply);
                self.route = Some(r.clone());
                r
            }
        }
    }

    fn topic(&mut self, topic: &str) -> Arc<str> {
        match &self.last_topic {
            Some(t) if &**t == topic => t.clone(),
            _ => {
                let t: Arc<str> = Arc::from(topic);
                self.last_topic = Some(t.clone());
                t
            }
        }
    }
}

impl NatsAgent {
    /// Connects to NATS at `url` (`nats://host:port`, or `tls://`; a comma-separated list for a cluster) and runs
    /// the authenticated handshake with the key server whose id is `key_server` (pinned: any other responder is
    /// refused).
    pub async fn connect(url: &str, identity: &Identity, key_server: AgentId) -> Result<NatsAgent> {
        Self::connect_with(url, identity, key_server, NatsOptions::default()).await
    }

    /// [`connect`](Self::connect) with options.
    pub async fn connect_with(
        url: &str,
        identity: &Identity,
        key_server: AgentId,
        opts: NatsOptions,
    ) -> Result<NatsAgent> {
        let client = async_nats::ConnectOptions::new()
            .name(format!("pqkit-bus agent {}", identity.id()))
            .subscription_capacity(opts.subscription_capacity.max(1))
            .connect(servers(url)?)
            .await
            .map_err(|e| transport(format!("NATS {url}: {e}")))?;
        let session = Self::handshake(&client, identity, key_server, url).await?;
        let mut js = jetstream::new(client.clone());
        js.set_timeout(Duration::from_secs(2));
        let id = identity.id();
        let inbox = format!("_INBOX.{}", id.to_hex());
        let mut inbox_sub = client.subscribe(format!("{inbox}.*")).await.map_err(transport)?;
        let inner = Arc::new(AgentInner {
            client,
            js,
            id,
            ks: key_server,
            opts: NatsOptions { rotate_after_messages: opts.rotate_after_messages.clamp(1, 1 << 39), ..opts },
            session: Mutex::new(session),
            send_keys: Mutex::new(SendKeys::default()),
            recv_keys: Mutex::new(HashMap::new()),
            inbox,
            pending: Mutex::new(HashMap::new()),
            inbox_task: Mutex::new(None),
            counters: Counters::default(),
            identity: Arc::new(identity.clone()),
            signing: Mutex::new(Signing::default()),
            rules: AtomicU64::new(0),
            keys_gen: AtomicU64::new(0),
            watch_task: Mutex::new(None),
            url: url.to_string(),
            timer_wake: Arc::new(tokio::sync::Notify::new()),
            timer_task: Mutex::new(None),
        });
        let weak: Weak<AgentInner> = Arc::downgrade(&inner);
        let task = tokio::spawn(async move {
            let mut windows = Windows::default();
            while let Some(msg) = inbox_sub.next().await {
                let Some(a) = weak.upgrade() else { break };
                let token = msg.subject.as_str().rsplit('.').next().unwrap_or("").to_string();
                let r = if msg.status == Some(async_nats::StatusCode::NO_RESPONDERS) {
                    Err(Error::NoResponders { subject: String::new() })
                } else {
                    a.open(msg.subject.as_str(), reply_of(&msg), &msg.payload, &mut windows, true).await
                };
                if let Some(tx) = lock(&a.pending).remove(&token) {
                    let _ = tx.send(r);
                }
            }
        });
        *lock(&inner.inbox_task) = Some(task);
        let up = inner.client.subscribe(ks_subject(&key_server, "up")).await.map_err(transport)?;
        *lock(&inner.watch_task) = Some(tokio::spawn(watch_key_server(Arc::downgrade(&inner), up)));
        inner.client.flush().await.map_err(transport)?;
        Ok(NatsAgent { inner })
    }

    async fn handshake(
        client: &async_nats::Client,
        identity: &Identity,
        ks: AgentId,
        url: &str,
    ) -> Result<AgentSession> {
        let bad = |reason| Error::Handshake { reason };
        let (st, m1) = handshake::initiate()?;
        let r = ks_call(client, &ks, "hs1", m1, url).await?;
        let p = &r.payload;
        if p.len() < 17 || p[0] != ST_OK {
            return Err(bad("the key server refused message 1"));
        }
        let (keys, _, m3) = st.finish(identity, &p[17..], Some(ks))?;
        let mut b = p[1..17].to_vec();
        b.extend_from_slice(&m3);
        let r = ks_call(client, &ks, "hs3", b, url).await?;
        let p = &r.payload;
        if p.first() == Some(&ST_UNAUTHORISED) {
            return Err(Error::Unauthorised { action: "connect as", subject: identity.id().to_hex() });
        }
        if p.len() != 1 + 16 + TAG_LEN || p[0] != ST_OK {
            return Err(bad("the key server refused message 3"));
        }
        let sid: [u8; 16] = p[1..17].try_into().map_err(|_| bad("session id"))?;
        let mut aad = HELLO_AAD.to_vec();
        aad.extend_from_slice(&sid);
        keys.recv
            .open(&[0u8; 12], &aad, &p[17..])
            .map_err(|_| bad("the session confirmation does not authenticate"))?;
        Ok(AgentSession { sid, send: keys.send, recv: keys.recv, ctr: 0 })
    }

    /// The agent's id.
    pub fn id(&self) -> AgentId {
        self.inner.id
    }

    /// The key server this agent is pinned to.
    pub fn key_server(&self) -> AgentId {
        self.inner.ks
    }

    /// The underlying NATS client (for flushing, connection state, and tests).
    pub fn client(&self) -> &async_nats::Client {
        &self.inner.client
    }

    /// A snapshot of this agent's counters: `published` (sent), `received` (handed to the application) and
    /// every rejection by reason (`rejected_replayed` also counts duplicates removed on durable topics).
    pub fn metrics(&self) -> Metrics {
        let c = &self.inner.counters;
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Metrics {
            published: r(&c.published),
            delivered: r(&c.received),
            received: r(&c.received),
            rejected_malformed: r(&c.malformed),
            rejected_auth: r(&c.auth_failed),
            rejected_replayed: r(&c.replayed),
            rejected_expired: r(&c.expired),
            rejected_unknown_key: r(&c.unknown_key),
            rejected_unauthorised: r(&c.unauthorised),
            rejected_unsigned: r(&c.unsigned),
            ..Metrics::default()
        }
    }

    /// Checkpoints this agent signed and published.
    pub fn checkpoints_sent(&self) -> u64 {
        self.inner.counters.checkpoints.load(Ordering::Relaxed)
    }

    /// Duplicates removed on durable subscriptions (redeliveries; not attacks).
    pub fn duplicates(&self) -> u64 {
        self.inner.counters.duplicates.load(Ordering::Relaxed)
    }

    /// Seals `payload` for `subject` into a publish envelope without sending it (for transports and tests).
    pub async fn seal(
        &self,
        subject: &str,
        payload: &[u8],
        priority: Priority,
        reply_to: Option<&str>,
    ) -> Result<Vec<u8>> {
        self.inner.seal(subject, payload, priority, reply_to).await
    }

    /// Publishes one sealed message on `subject` (the NATS subject is the topic). Returns once the client
    /// queued it; [`flush`](Self::flush) waits until the server has it.
    pub async fn publish(&self, subject: &str, payload: &[u8], priority: Priority) -> Result<()> {
        if let Some(tc) = self.inner.chain_for(subject) {
            return self.inner.send_chained(&tc, subject, payload, priority, None, false).await;
        }
        // The common case (a cached sender key with messages left) seals without building a future.
        let (env, nats_subject) = match self.inner.publish_cached(subject, payload, priority)? {
            Some(x) => x,
            None => {
                let env = Box::pin(self.inner.seal_fetching(subject, payload, priority, None)).await?.0;
                (env, async_nats::Subject::from(subject))
            }
        };
        self.inner.client.publish(nats_subject, env.into()).await.map_err(transport)?;
        self.inner.counters.published.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// A publisher for one subject, the NATS counterpart of [`crate::Agent::publisher`]: checks the subject,
    /// takes the sender key of its scope (so an [`Error::Unauthorised`] comes now, not at the first message)
    /// and decides whether a checkpoint rule covers it, once; then each [`NatsPublisher::publish`] seals and
    /// queues without looking any of these up. It shares the agent's sender stream of the scope (sequence
    /// numbers, key rotation, checkpoint chain) with [`publish`](Self::publish) and with other handles, so
    /// they may be mixed. Give each producing task its own handle.
    pub async fn publisher(&self, subject: &str) -> Result<NatsPublisher> {
        validate_subject(subject)?;
        let key = self.inner.send_key(subject).await?;
        // The associated data of every message of the handle, the header to be written in per message.
        let aad = NatsAad::new(&[0; envelope::NATS_HEADER_LEN], subject, "")?.as_bytes().to_vec();
        let rules = self.inner.rules.load(Ordering::Acquire);
        Ok(NatsPublisher {
            keys_gen: self.inner.keys_gen.load(Ordering::Acquire),
            chain: self.inner.chain_for(subject),
            agent: self.inner.clone(),
            subject: subject.into(),
            nats_subject: async_nats::Subject::from(subject),
            key,
            rules,
            aad,
        })
    }

    /// Opts the topics matching `pattern` (NATS wildcards) into **signed checkpoints** (sender authentication
    /// against other members, docs/bus.md §9): every envelope this agent publishes on such a topic is chained,
    /// and a checkpoint signed with the agent's hybrid identity follows every `cfg.every` messages or
    /// `cfg.after` after the first unsigned one (a timer task signs for a quiet topic; [`close`](Self::close)
    /// or [`flush_checkpoints`](Self::flush_checkpoints) sign what is pending). Subscribers that turned sender
    /// authentication on ([`subscribe_authenticated`](Self::subscribe_authenticated)) deliver only what a
    /// checkpoint covers; others ignore checkpoints. Reply subjects (`_INBOX.*`) are never checkpointed (they
    /// are member-proof already). The first rule matching a subject applies. A request on a checkpointed topic
    /// is signed at once (one signature per request, no wait for the timer).
    pub fn sign_checkpoints(&self, pattern: &str, cfg: Checkpoints) -> Result<()> {
        validate_pattern(pattern)?;
        let cfg = Checkpoints { every: cfg.every.max(1), ..cfg };
        {
            let mut sg = lock(&self.inner.signing);
            sg.rules.push((pattern.to_string(), cfg));
            sg.unchained.clear();
            sg.last = None;
        }
        self.inner.rules.fetch_add(1, Ordering::Release);
        let mut t = lock(&self.inner.timer_task);
        if t.is_none() {
            let weak = Arc::downgrade(&self.inner);
            let wake = self.inner.timer_wake.clone();
            *t = Some(tokio::spawn(checkpoint_timer(weak, wake)));
        }
        Ok(())
    }

    /// Signs and publishes a checkpoint for every pending batch now.
    pub async fn flush_checkpoints(&self) -> Result<()> {
        let chains: Vec<(String, Arc<tokio::sync::Mutex<TopicChain>>)> =
            lock(&self.inner.signing).chains.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        for (topic, tc) in chains {
            let mut g = tc.lock().await;
            self.inner.emit_checkpoint(&topic, &mut g).await?;
        }
        Ok(())
    }

    /// Signs what is pending ([`flush_checkpoints`](Self::flush_checkpoints)) and waits until the NATS server
    /// has everything published so far. Call it before dropping an agent that signs checkpoints, so that its
    /// last batch is covered.
    pub async fn close(&self) -> Result<()> {
        self.flush_checkpoints().await?;
        self.flush().await
    }

    /// Publishes with a reply-to subject (sealed in the header and set as the NATS reply subject).
    pub async fn publish_with_reply(
        &self,
        subject: &str,
        payload: &[u8],
        priority: Priority,
        reply_to: &str,
    ) -> Result<()> {
        if let Some(tc) = self.inner.chain_for(subject) {
            return self.inner.send_chained(&tc, subject, payload, priority, Some(reply_to), false).await;
        }
        let env = self.inner.seal(subject, payload, priority, Some(reply_to)).await?;
        self.inner
            .client
            .publish_with_reply(subject.to_string(), reply_to.to_string(), env.into())
            .await
            .map_err(transport)?;
        self.inner.counters.published.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Waits until the NATS server has everything published so far.
    pub async fn flush(&self) -> Result<()> {
        self.inner.client.flush().await.map_err(transport)
    }

    /// Request/reply over a NATS inbox (`_INBOX.<id hex>.<token>`): publishes `payload` with that reply-to and
    /// waits up to `timeout` for the first reply. [`Error::NoResponders`] when the server reports nobody
    /// subscribed, [`Error::Timeout`] when nobody answers in time.
    pub async fn request(&self, subject: &str, payload: &[u8], timeout: Duration) -> Result<Message> {
        let token = format!("{:016x}", u64::from_be_bytes(*random::<8>()?));
        let inbox = format!("{}.{token}", self.inner.inbox);
        let (tx, rx) = tokio::sync::oneshot::channel();
        lock(&self.inner.pending).insert(token.clone(), tx);
        let r = async {
            self.publish_with_reply(subject, payload, Priority::Normal, &inbox).await?;
            match tokio::time::timeout(timeout, rx).await {
                Err(_) => Err(Error::Timeout),
                Ok(Err(_)) => Err(Error::Closed),
                Ok(Ok(Err(Error::NoResponders { .. }))) => Err(Error::NoResponders { subject: subject.into() }),
                Ok(Ok(r)) => r,
            }
        }
        .await;
        lock(&self.inner.pending).remove(&token);
        r
    }

    /// Answers a request: publishes `payload`, sealed, to the message's reply-to subject.
    pub async fn reply(&self, request: &Message, payload: &[u8]) -> Result<()> {
        let to = request.reply_to().ok_or(Error::InvalidSubject { subject: String::new(), reason: "no reply-to" })?;
        self.publish(to, payload, request.priority()).await
    }

    /// Asks the key server whether the policy lets this agent subscribe to `pattern`, all of it (every topic
    /// the pattern matches): [`Error::Unauthorised`] if not. NATS itself accepts any subscription, and
    /// [`subscribe`](Self::subscribe) does not ask (a subscription wider than the grant receives what the grant
    /// covers); call this first to refuse such a pattern up front.
    pub async fn check_subscribe(&self, pattern: &str) -> Result<()> {
        validate_pattern(pattern)?;
        let mut body = vec![OP_MAY_SUB];
        body.extend_from_slice(pattern.as_bytes());
        self.inner.ks_request(&body).await.map(|_| ()).map_err(|e| match e {
            Error::Unauthorised { .. } => Error::Unauthorised { action: "subscribe", subject: pattern.into() },
            e => e,
        })
    }

    /// Subscribes to `pattern` (NATS wildcards). Keys are fetched from the key server when a sender's first
    /// envelope arrives; it grants them only if the policy lets this agent subscribe to the topic. Returns once
    /// the NATS server has registered the subscription, so a message published after it returns is delivered.
    pub async fn subscribe(&self, pattern: &str) -> Result<NatsSubscription> {
        validate_pattern(pattern)?;
        if pattern.starts_with(CONTROL_PREFIX) {
            return Err(Error::Unauthorised { action: "subscribe", subject: pattern.into() });
        }
        let sub = self.inner.client.subscribe(pattern.to_string()).await.map_err(transport)?;
        sync_with_server(&self.inner.client).await?;
        Ok(NatsSubscription {
            agent: self.inner.clone(),
            sub,
            pattern: pattern.into(),
            windows: Windows::default(),
            auth: None,
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            armed: None,
            matched: None,
            fetch: None,
        })
    }

    /// [`subscribe`](Self::subscribe) with **sender authentication** on (docs/bus.md §9): a message is handed
    /// over only when a checkpoint signed by its sender's identity (whose `AgentId` is recomputed from the keys
    /// it carries) covers it and the chain over the envelopes matches, so no other member of the topic can make
    /// this subscriber accept a message in a publisher's name. Publishers must opt the topic in
    /// ([`sign_checkpoints`](Self::sign_checkpoints)); anything else is rejected after `auth.timeout`
    /// (`rejected_unsigned`). Adds up to the publisher's `after` plus a signature and a verification of latency;
    /// memory is bounded by `auth`'s limits.
    pub async fn subscribe_authenticated(&self, pattern: &str, auth: SenderAuth) -> Result<NatsSubscription> {
        let mut s = self.subscribe(pattern).await?;
        s.auth = Some(Verifier::new(auth));
        Ok(s)
    }

    /// [`subscribe_durable`](Self::subscribe_durable) with sender authentication on (see
    /// [`subscribe_authenticated`](Self::subscribe_authenticated)): checkpoints are stored in the stream with the
    /// messages they cover, so a subscriber that was away verifies what it missed.
    pub async fn subscribe_durable_authenticated(
        &self,
        stream: &str,
        consumer: &str,
        pattern: &str,
        auth: SenderAuth,
    ) -> Result<DurableSubscription> {
        let mut s = self.subscribe_durable(stream, consumer, pattern).await?;
        s.auth = Some(Verifier::new(auth));
        Ok(s)
    }

    /// Declares a durable stream named `name` capturing `subjects` (JetStream, file storage, duplicate window
    /// 2 minutes). Idempotent. Messages on those subjects are stored sealed.
    pub async fn declare_durable(&self, name: &str, subjects: &[&str]) -> Result<()> {
        self.declare_durable_replicated(name, subjects, 1).await
    }

    /// [`declare_durable`](Self::declare_durable) with `replicas` copies of the stream on a JetStream cluster
    /// (3: the stream survives the loss of one node of three; at most 5).
    pub async fn declare_durable_replicated(&self, name: &str, subjects: &[&str], replicas: usize) -> Result<()> {
        for s in subjects {
            validate_pattern(s)?;
        }
        self.inner
            .js
            .get_or_create_stream(jetstream::stream::Config {
                name: name.to_string(),
                subjects: subjects.iter().map(|s| s.to_string()).collect(),
                storage: jetstream::stream::StorageType::File,
                duplicate_window: Duration::from_secs(120),
                num_replicas: replicas.clamp(1, 5),
                ..Default::default()
            })
            .await
            .map_err(|e| transport(format!("declaring stream `{name}` on NATS {}: {e}", self.inner.url)))?;
        Ok(())
    }

    /// Publishes on a durable subject and waits for the server's acknowledgement; on a timeout or a lost
    /// connection it retries the *same* envelope with the same `Nats-Msg-Id` (so the server stores it once)
    /// for up to [`NatsOptions::durable_retry`]. Returns the stream sequence.
    pub async fn publish_durable(&self, subject: &str, payload: &[u8], priority: Priority) -> Result<u64> {
        if let Some(tc) = self.inner.chain_for(subject) {
            let mut g = tc.lock().await;
            let (env, epoch, seq) = self.inner.seal_meta(subject, payload, priority, None).await?;
            if !g.chain.accepts(epoch, seq) {
                self.inner.emit_checkpoint(subject, &mut g).await?;
            }
            let n = self.inner.js_store(subject, &env, &msg_id(tag_of(&env))).await?;
            self.inner.counters.published.fetch_add(1, Ordering::Relaxed);
            g.durable = true;
            let first = g.chain.pending() == 0;
            g.chain.push(&self.inner.id, subject, epoch, seq, "", &env);
            if g.chain.full(&g.cfg) {
                self.inner.emit_checkpoint(subject, &mut g).await?;
            } else if first {
                self.inner.timer_wake.notify_one();
            }
            return Ok(n);
        }
        let env = self.inner.seal(subject, payload, priority, None).await?;
        let n = self.inner.js_store(subject, &env, &msg_id(tag_of(&env))).await?;
        self.inner.counters.published.fetch_add(1, Ordering::Relaxed);
        Ok(n)
    }

    /// Subscribes to `pattern` on the durable stream `stream` through the durable consumer `consumer`: a
    /// subscriber that was away gets what it missed, in order, and resumes after the last message it
    /// acknowledged. Each message is acknowledged when it is handed to the application; redeliveries are
    /// removed by stream sequence and by the envelope's replay window.
    pub async fn subscribe_durable(&self, stream: &str, consumer: &str, pattern: &str) -> Result<DurableSubscription> {
        validate_pattern(pattern)?;
        let s = self.inner.js.get_stream(stream).await.map_err(transport)?;
        let c = s
            .get_or_create_consumer(
                consumer,
                jetstream::consumer::pull::Config {
                    durable_name: Some(consumer.to_string()),
                    filter_subject: pattern.to_string(),
                    ack_policy: jetstream::consumer::AckPolicy::Explicit,
                    ack_wait: self.inner.opts.ack_wait,
                    ..Default::default()
                },
            )
            .await
            .map_err(transport)?;
        Ok(DurableSubscription {
            agent: self.inner.clone(),
            consumer: c,
            messages: None,
            unacked: Vec::new(),
            budget: None,
            pattern: pattern.into(),
            windows: Windows { exact: true, ..Windows::default() },
            last: 0,
            done: Processed::default(),
            auth: None,
        })
    }
}

/// The checkpoint timer of an agent that signs checkpoints: signs every batch whose first unsigned message is
/// older than its topic's `after`, sleeping until the next such moment or until a batch starts.
async fn checkpoint_timer(weak: Weak<AgentInner>, wake: Arc<tokio::sync::Notify>) {
    loop {
        let next = {
            let Some(a) = weak.upgrade() else { return };
            let chains: Vec<(String, Arc<tokio::sync::Mutex<TopicChain>>)> =
                lock(&a.signing).chains.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let mut next: Option<Instant> = None;
            for (topic, tc) in chains {
                let mut g = tc.lock().await;
                let Some(since) = g.chain.since() else { continue };
                let due = since + g.cfg.after;
                if due <= Instant::now() {
                    // A failure (connection down) leaves the batch pending: retried on the next pass.
                    if a.emit_checkpoint(&topic, &mut g).await.is_err() {
                        let retry = Instant::now() + Duration::from_millis(50);
                        next = Some(next.map_or(retry, |d| d.min(retry)));
                    }
                } else {
                    next = Some(next.map_or(due, |d| d.min(due)));
                }
            }
            next
        };
        match next {
            Some(d) => {
                let _ = tokio::time::timeout_at(d.into(), wake.notified()).await;
            }
            None => wake.notified().await,
        }
    }
}

impl AgentInner {
    /// The chain of `subject` if a checkpoint rule covers it (never for `_INBOX.*`).
    fn chain_for(&self, subject: &str) -> Option<Arc<tokio::sync::Mutex<TopicChain>>> {
        if self.rules.load(Ordering::Acquire) == 0 || subject.starts_with("_INBOX.") {
            return None;
        }
        let mut sg = lock(&self.signing);
        if let Some((s, c)) = &sg.last
            && s == subject
        {
            return c.clone();
        }
        if sg.unchained.contains(subject) {
            sg.remember(subject, None);
            return None;
        }
        if let Some(c) = sg.chains.get(subject).cloned() {
            sg.remember(subject, Some(c.clone()));
            return Some(c);
        }
        let Some(cfg) = sg.rules.iter().find(|(p, _)| matches(p, subject)).map(|(_, c)| *c) else {
            // Remembered (bounded), so a topic no rule covers costs one lookup per publish, not a pattern match
            // per rule; a new rule forgets these.
            if sg.unchained.len() >= MAX_KEYS {
                sg.unchained.clear();
            }
            sg.unchained.insert(subject.to_string());
            sg.remember(subject, None);
            return None;
        };
        validate_subject(subject).ok()?;
        let c = Arc::new(tokio::sync::Mutex::new(TopicChain { chain: Chain::new(), cfg, durable: false }));
        sg.chains.insert(subject.to_string(), c.clone());
        sg.remember(subject, Some(c.clone()));
        Some(c)
    }

    /// Seals, chains and publishes one message on a checkpointed topic (under the topic's chain lock, so the
    /// chain order is the order on the wire); signs when the batch is full or `sign_now`.
    async fn send_chained(
        &self,
        tc: &tokio::sync::Mutex<TopicChain>,
        subject: &str,
        payload: &[u8],
        priority: Priority,
        reply: Option<&str>,
        sign_now: bool,
    ) -> Result<()> {
        let mut g = tc.lock().await;
        let (env, epoch, seq) = self.seal_meta(subject, payload, priority, reply).await?;
        if !g.chain.accepts(epoch, seq) {
            self.emit_checkpoint(subject, &mut g).await?;
        }
        let first = g.chain.pending() == 0;
        g.chain.push(&self.id, subject, epoch, seq, reply.unwrap_or(""), &env);
        let r = match reply {
            Some(r) => self.client.publish_with_reply(subject.to_string(), r.to_string(), env.into()).await,
            None => self.client.publish(subject.to_string(), env.into()).await,
        };
        r.map_err(transport)?;
        self.counters.published.fetch_add(1, Ordering::Relaxed);
        if sign_now || reply.is_some() || g.chain.full(&g.cfg) {
            self.emit_checkpoint(subject, &mut g).await?;
        } else if first {
            self.timer_wake.notify_one();
        }
        Ok(())
    }

    /// Signs the pending batch of `topic` (if any) and publishes its checkpoint on the topic's subject (through
    /// JetStream, acknowledged and retried like [`NatsAgent::publish_durable`], when the batch was durable).
    async fn emit_checkpoint(&self, topic: &str, g: &mut TopicChain) -> Result<()> {
        if g.chain.range().is_none() {
            return Ok(());
        }
        let saved = g.chain.clone();
        let Some(cp) = g.chain.checkpoint(&self.identity, topic)? else { return Ok(()) };
        let r = if g.durable {
            self.js_store(topic, &cp, &msg_id(&cp)).await.map(|_| ())
        } else {
            self.client.publish(topic.to_string(), cp.into()).await.map_err(transport)
        };
        if r.is_err() {
            // Not sent: keep the batch so a later attempt signs it (nothing is lost on a transient failure).
            g.chain = saved;
            return r;
        }
        g.durable = false;
        self.counters.checkpoints.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Stores one envelope in JetStream with `msg_id` (deduplicated by the server), retrying until acknowledged
    /// or [`NatsOptions::durable_retry`] has passed. Returns the stream sequence.
    async fn js_store(&self, subject: &str, env: &[u8], msg_id: &str) -> Result<u64> {
        let deadline = Instant::now() + self.opts.durable_retry;
        let body = env.to_vec();
        loop {
            let mut h = async_nats::HeaderMap::new();
            h.insert("Nats-Msg-Id", msg_id);
            let r = match self.js.publish_with_headers(subject.to_string(), h, body.clone().into()).await {
                Ok(fut) => fut.await.map_err(transport),
                Err(e) => Err(transport(e)),
            };
            match r {
                Ok(ack) => return Ok(ack.sequence),
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    fn tally(&self, t: Tally) {
        let c = &self.counters;
        for (a, n) in [
            (&c.unsigned, t.unsigned),
            (&c.auth_failed, t.auth),
            (&c.replayed, t.replayed),
            (&c.malformed, t.malformed),
        ] {
            if n > 0 {
                a.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    fn count(&self, e: &Error) {
        let c = &self.counters;
        let a = match e {
            Error::Malformed { .. } | Error::PayloadTooLarge { .. } | Error::InvalidSubject { .. } => &c.malformed,
            Error::AuthFailed => &c.auth_failed,
            Error::Replayed { .. } => &c.replayed,
            Error::Expired { .. } => &c.expired,
            Error::UnknownKey => &c.unknown_key,
            Error::Unauthorised { .. } => &c.unauthorised,
            _ => return,
        };
        a.fetch_add(1, Ordering::Relaxed);
    }

    /// One sealed request to the key server; returns the answer's body after its status byte. When the key
    /// server does not know the session (it restarted), runs the handshake again and retries once.
    async fn ks_request(&self, body: &[u8]) -> Result<Vec<u8>> {
        match self.ks_request_once(body).await {
            Err(Error::Handshake { reason: SESSION_UNKNOWN }) => {
                self.rehandshake().await?;
                self.ks_request_once(body).await
            }
            r => r,
        }
    }

    /// Runs the handshake with the key server again (it lost this agent's session: restarted) and drops the
    /// sender keys (the new key server knows none of them; publishers fetch new ones). Receive keys stay:
    /// they still open what was sealed under them.
    async fn rehandshake(&self) -> Result<()> {
        let s = NatsAgent::handshake(&self.client, &self.identity, self.ks, &self.url).await?;
        *lock(&self.session) = s;
        *lock(&self.send_keys) = SendKeys::default();
        self.keys_gen.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// The request to the key server over NATS, with a bounded wait (NATS reports "no responders" at once only
    /// when nobody at all subscribes to the subject; a monitoring `>` subscriber would otherwise turn a key
    /// server that is down into the client's long request timeout).
    async fn ks_call(&self, op: &str, body: Vec<u8>) -> Result<async_nats::Message> {
        ks_call(&self.client, &self.ks, op, body, &self.url).await
    }

    async fn ks_request_once(&self, body: &[u8]) -> Result<Vec<u8>> {
        let (msg, ctr, head) = {
            let mut s = lock(&self.session);
            s.ctr += 1;
            let ctr = s.ctr;
            let mut head = [0u8; 24];
            head[..16].copy_from_slice(&s.sid);
            head[16..].copy_from_slice(&ctr.to_be_bytes());
            let mut sealed = body.to_vec();
            let tag = s.send.seal_in_place_detached(&req_nonce(ctr), &head, &mut sealed)?;
            let mut m = head.to_vec();
            m.extend_from_slice(&sealed);
            m.extend_from_slice(&tag);
            (m, ctr, head)
        };
        let r = self.ks_call("req", msg).await?;
        let p = &r.payload;
        if p[..] == [ST_UNKNOWN] {
            return Err(Error::Handshake { reason: SESSION_UNKNOWN });
        }
        if p.len() < 1 + 1 + TAG_LEN || p[0] != ST_OK {
            return Err(Error::Handshake { reason: "the key server refused the request" });
        }
        let mut ans = Zeroizing::new(p[1..p.len() - TAG_LEN].to_vec());
        lock(&self.session)
            .recv
            .open_in_place_detached(&req_nonce(ctr), &head, &mut ans, &p[p.len() - TAG_LEN..])
            .map_err(|_| Error::AuthFailed)?;
        match ans[0] {
            ST_OK => Ok(ans[1..].to_vec()),
            ST_UNAUTHORISED => Err(Error::Unauthorised { action: "key", subject: String::new() }),
            ST_EXPIRED => Err(Error::Expired { epoch: 0 }),
            ST_UNKNOWN => Err(Error::UnknownKey),
            _ => Err(Error::Malformed { reason: "the key server did not understand the request" }),
        }
    }

    /// The sender key for `subject`'s scope, asking the key server when there is none or it is used up.
    /// The cached sender key for `subject`'s scope if it has messages left (`None`: ask the key server).
    fn send_key_cached(&self, subject: &str) -> Result<Option<Arc<SendKey>>> {
        Ok(self.send_key_lookup(subject, false)?.map(|(k, _)| k))
    }

    /// [`send_key_cached`](Self::send_key_cached), and with `nats_subject` the client's subject for `subject`
    /// ([`SendKeys::subject`]), under the same lock.
    fn send_key_lookup(
        &self,
        subject: &str,
        nats_subject: bool,
    ) -> Result<Option<(Arc<SendKey>, Option<async_nats::Subject>)>> {
        let scope = scope_of(subject);
        let (k, s) = {
            let mut keys = lock(&self.send_keys);
            let k = match keys.get(scope) {
                Some(k) if k.next.load(Ordering::Relaxed) < self.opts.rotate_after_messages => k,
                _ => return Ok(None),
            };
            (k, nats_subject.then(|| keys.subject(subject)))
        };
        if scope.len() != subject.len() {
            validate_subject(subject)?;
        }
        Ok(Some((k, s)))
    }

    /// Checks `subject` unless it is a scope already granted (it was checked then).
    async fn send_key(&self, subject: &str) -> Result<Arc<SendKey>> {
        let scope = scope_of(subject);
        let mut rotate_from = 0;
        let mut checked = false;
        if let Some(k) = lock(&self.send_keys).get(scope) {
            if k.next.load(Ordering::Relaxed) < self.opts.rotate_after_messages {
                if scope.len() != subject.len() {
                    validate_subject(subject)?;
                }
                return Ok(k);
            }
            rotate_from = k.epoch;
            checked = scope.len() == subject.len();
        }
        if !checked {
            validate_subject(subject)?;
        }
        let mut body = vec![OP_SEND];
        body.extend_from_slice(&rotate_from.to_be_bytes());
        body.extend_from_slice(subject.as_bytes());
        let a = self.ks_request(&body).await.map_err(|e| match e {
            Error::Unauthorised { .. } => Error::Unauthorised { action: "publish", subject: subject.into() },
            e => e,
        })?;
        if a.len() != 4 + 4 + 32 {
            return Err(Error::Malformed { reason: "sender-key grant has the wrong length" });
        }
        let epoch = u32::from_be_bytes([a[0], a[1], a[2], a[3]]);
        let stream = u32::from_be_bytes([a[4], a[5], a[6], a[7]]);
        let k = Arc::new(SendKey { epoch, stream, aead: Aes256Gcm::new(&a[8..40])?, next: AtomicU64::new(0) });
        let mut a = a;
        zeroize::Zeroize::zeroize(&mut a);
        lock(&self.send_keys).insert(scope, k.clone());
        Ok(k)
    }

    async fn seal(&self, subject: &str, payload: &[u8], priority: Priority, reply: Option<&str>) -> Result<Vec<u8>> {
        Ok(self.seal_meta(subject, payload, priority, reply).await?.0)
    }

    /// [`seal`](Self::seal), also returning the envelope's epoch and sequence. With a cached sender key that has
    /// messages left (the common case) nothing is awaited; the key-server round trip is a boxed future, so it
    /// does not grow (and get copied with) every publish's future.
    async fn seal_meta(
        &self,
        subject: &str,
        payload: &[u8],
        priority: Priority,
        reply: Option<&str>,
    ) -> Result<(Vec<u8>, u32, u64)> {
        match self.seal_cached(subject, payload, priority, reply)? {
            Some(r) => Ok(r),
            None => Box::pin(self.seal_fetching(subject, payload, priority, reply)).await,
        }
    }

    fn check_seal_input(payload: &[u8], reply: Option<&str>) -> Result<()> {
        if payload.len() > MAX_PAYLOAD {
            return Err(Error::PayloadTooLarge { len: payload.len() });
        }
        if let Some(r) = reply {
            validate_subject(r)?;
        }
        Ok(())
    }

    /// Seals under the cached sender key; `Ok(None)` when there is none or it is used up (ask the key server).
    fn seal_cached(
        &self,
        subject: &str,
        payload: &[u8],
        priority: Priority,
        reply: Option<&str>,
    ) -> Result<Option<(Vec<u8>, u32, u64)>> {
        Self::check_seal_input(payload, reply)?;
        let Some(k) = self.send_key_cached(subject)? else { return Ok(None) };
        let n = k.next.fetch_add(1, Ordering::Relaxed);
        if n >= self.opts.rotate_after_messages {
            return Ok(None);
        }
        self.seal_with(&k, n, subject, payload, priority, reply).map(Some)
    }

    /// [`seal_cached`](Self::seal_cached) for [`NatsAgent::publish`] (no reply-to), also returning the client's
    /// subject to publish on (shared with the previous publish when it repeats).
    fn publish_cached(
        &self,
        subject: &str,
        payload: &[u8],
        priority: Priority,
    ) -> Result<Option<(Vec<u8>, async_nats::Subject)>> {
        Self::check_seal_input(payload, None)?;
        let Some((k, Some(nats_subject))) = self.send_key_lookup(subject, true)? else { return Ok(None) };
        let n = k.next.fetch_add(1, Ordering::Relaxed);
        if n >= self.opts.rotate_after_messages {
            return Ok(None);
        }
        let (env, _, _) = self.seal_with(&k, n, subject, payload, priority, None)?;
        Ok(Some((env, nats_subject)))
    }

    async fn seal_fetching(
        &self,
        subject: &str,
        payload: &[u8],
        priority: Priority,
        reply: Option<&str>,
    ) -> Result<(Vec<u8>, u32, u64)> {
        Self::check_seal_input(payload, reply)?;
        loop {
            let k = self.send_key(subject).await?;
            let n = k.next.fetch_add(1, Ordering::Relaxed);
            if n < self.opts.rotate_after_messages {
                return self.seal_with(&k, n, subject, payload, priority, reply);
            }
        }
    }

    /// Seals one envelope under `k` with counter `n` of its stream.
    fn seal_with(
        &self,
        k: &SendKey,
        n: u64,
        subject: &str,
        payload: &[u8],
        priority: Priority,
        reply: Option<&str>,
    ) -> Result<(Vec<u8>, u32, u64)> {
        let seq = (u64::from(k.stream) << COUNTER_BITS) | n;
        let header = NatsHeader { priority, epoch: k.epoch, seq }.encode();
        // The topic and reply-to travel as the NATS subject and reply subject; they are bound here, in the
        // associated data (docs/bus.md §9), not sent twice.
        let aad = NatsAad::new(&header, subject, reply.unwrap_or(""))?;
        Ok((k.seal(seq, priority, &header, aad.as_bytes(), payload)?, k.epoch, seq))
    }

    /// The key of sender stream `stream` of `topic`'s scope in `epoch`, and its sender: cached, or granted by
    /// the key server (which names the agent it granted the stream to).
    async fn recv_key(&self, topic: &str, epoch: u32, stream: u32) -> Result<Arc<RecvKey>> {
        let scope = scope_of(topic);
        if let Some(k) = lock(&self.recv_keys).get(scope).and_then(|m| m.get(&(epoch, stream))) {
            return Ok(k.clone());
        }
        let mut body = vec![OP_RECV];
        body.extend_from_slice(&epoch.to_be_bytes());
        body.extend_from_slice(&stream.to_be_bytes());
        body.extend_from_slice(topic.as_bytes());
        let mut a = self.ks_request(&body).await.map_err(|e| match e {
            Error::Unauthorised { .. } => Error::Unauthorised { action: "subscribe", subject: topic.into() },
            Error::Expired { .. } => Error::Expired { epoch },
            e => e,
        })?;
        if a.len() != 16 + 32 {
            return Err(Error::Malformed { reason: "receive grant has the wrong length" });
        }
        let sender = AgentId(a[..16].try_into().map_err(|_| Error::Malformed { reason: "receive grant" })?);
        let k = Arc::new(RecvKey { sender, aead: Aes256Gcm::new(&a[16..])? });
        zeroize::Zeroize::zeroize(&mut a);
        let mut keys = lock(&self.recv_keys);
        if keys.values().map(HashMap::len).sum::<usize>() >= MAX_KEYS {
            keys.clear();
        }
        keys.entry(scope.to_string()).or_default().insert((epoch, stream), k.clone());
        Ok(k)
    }

    /// Checks and opens one envelope that arrived on NATS subject `subject`. Counts rejections, and the
    /// message as received if `handed_over` (a message held for a checkpoint is counted when released).
    ///
    /// The common case (a sender whose key this agent holds) completes without awaiting anything
    /// ([`open_sync`](Self::open_sync)); only a first message from a sender, topic or epoch waits for the key
    /// server, in a boxed future, so the per-message future stays small.
    async fn open(
        &self,
        subject: &str,
        reply: &str,
        bytes: &[u8],
        windows: &mut Windows,
        handed_over: bool,
    ) -> Result<Message> {
        if let Some(r) = self.open_now(subject, reply, bytes, windows, handed_over) {
            return r;
        }
        let r = Box::pin(self.open_fetching(subject, reply, bytes, windows)).await;
        self.counted(r, handed_over)
    }

    /// [`open`](Self::open) without awaiting: `None` when the sender's key must be fetched from the key server
    /// (nothing counted then; call [`open`](Self::open)). The subscriptions call this first, so the common case
    /// builds no future at all.
    fn open_now(
        &self,
        subject: &str,
        reply: &str,
        bytes: &[u8],
        windows: &mut Windows,
        handed_over: bool,
    ) -> Option<Result<Message>> {
        match self.open_sync(subject, reply, bytes, windows, None) {
            Ok(Some(m)) => Some(self.counted(Ok(m), handed_over)),
            Ok(None) => None,
            Err(e) => Some(self.counted(Err(e), handed_over)),
        }
    }

    /// Counts the outcome of opening one envelope (see [`open`](Self::open)).
    fn counted(&self, r: Result<Message>, handed_over: bool) -> Result<Message> {
        match &r {
            Ok(_) => {
                if handed_over {
                    self.counters.received.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(e) => self.count(e),
        }
        r
    }

    /// The rare path of [`open`](Self::open): asks the key server for the sender's key, then opens with it.
    async fn open_fetching(&self, subject: &str, reply: &str, bytes: &[u8], windows: &mut Windows) -> Result<Message> {
        // `open_sync` parsed and checked the envelope and its window already; these cannot fail here.
        let m = envelope::parse_nats(bytes)?;
        let key = self.recv_key(subject, m.epoch, m.stream()).await?;
        self.open_sync(subject, reply, bytes, windows, Some(key))?.ok_or(Error::UnknownKey)
    }

    /// Parses, checks and opens one envelope without waiting: `Ok(None)` when the sender's key for its scope
    /// and epoch is neither hot nor cached (and `fetched` is `None`), after every check that needs no key
    /// (structure, subject, replay window) has passed. The checks and their order are those of docs/bus.md §9.
    ///
    /// `subject` and `reply` are the NATS message's subject and reply subject (`""`: none; a durable
    /// subscription passes `""`, JetStream's reply field being its acknowledgement subject). Neither is in the
    /// envelope: both are bound into the associated data, so a message relabelled with another subject or
    /// reply-to fails the tag (`AuthFailed`).
    fn open_sync(
        &self,
        subject: &str,
        reply: &str,
        bytes: &[u8],
        windows: &mut Windows,
        fetched: Option<Arc<RecvKey>>,
    ) -> Result<Option<Message>> {
        let m = envelope::parse_nats(bytes)?;
        // The topic is the NATS subject, which the server (untrusted) chose: it must be a valid subject. The
        // topic of the last message this subscription handed over was validated then: not again.
        let same_topic = windows.last_topic.as_deref().is_some_and(|t| same(t.as_bytes(), subject.as_bytes()));
        if !same_topic {
            validate_subject(subject).map_err(|_| Error::Malformed { reason: "topic is not a valid subject" })?;
        }
        if !reply.is_empty() {
            validate_subject(reply).map_err(|_| Error::Malformed { reason: "reply-to is not a valid subject" })?;
        }
        let header: &[u8; envelope::NATS_HEADER_LEN] =
            bytes[..envelope::NATS_HEADER_LEN].try_into().map_err(|_| Error::Malformed { reason: "header" })?;
        // The associated data reuses the last message's buffer: only the header is rewritten while the topic and
        // reply-to repeat. (Only fields of `windows` are borrowed until the tag is checked: no method calls.)
        envelope::nats_aad_into(&mut windows.aad, header, subject, reply)?;
        let aad = &windows.aad[..];
        let topic = subject;
        let scope = scope_of(topic);
        let wid = (m.epoch, m.stream());
        let nonce = envelope::nonce(Kind::Publish, m.priority, m.seq);
        let (ct, tag) = bytes[m.payload.start..].split_at(m.payload.len());
        // Decrypt in place in the message's own body (inline when short, else one `Vec`): the ciphertext is
        // copied once, and nothing is handed over unless the tag verifies.
        let mut body = Body::from_slice(ct, 0);
        let out = body.as_mut_slice();
        let sender = match windows.hot.as_mut() {
            Some(h) if h.wid == wid && same(h.scope.as_bytes(), scope.as_bytes()) => {
                h.window.check(m.seq)?;
                h.key.aead.open_in_place_detached(&nonce, aad, out, tag).map_err(|_| Error::AuthFailed)?;
                h.window.commit(m.seq);
                h.key.sender
            }
            _ => {
                Windows::cool_fields(&mut windows.hot, &mut windows.map);
                match windows.map.get(scope).and_then(|w| w.get(&wid)) {
                    Some(w) => w.check(m.seq)?,
                    None if windows.len >= MAX_WINDOWS => return Err(Error::Replayed { seq: m.seq }),
                    None => {}
                }
                let key = match fetched {
                    Some(k) => k,
                    None => match lock(&self.recv_keys).get(scope).and_then(|k| k.get(&wid)) {
                        Some(k) => k.clone(),
                        None => return Ok(None),
                    },
                };
                key.aead.open_in_place_detached(&nonce, aad, out, tag).map_err(|_| Error::AuthFailed)?;
                let per_scope = match windows.map.get_mut(scope) {
                    Some(w) => w,
                    None => windows.map.entry(scope.to_string()).or_default(),
                };
                let mut window = match per_scope.remove(&wid) {
                    Some(w) => w,
                    None => {
                        windows.len += 1;
                        Replay::new(windows.exact)
                    }
                };
                window.commit(m.seq);
                let sender = key.sender;
                windows.hot = Some(Hot { scope: scope.to_string(), wid, window, key });
                sender
            }
        };
        let reply = (!reply.is_empty()).then_some(reply);
        let route = windows.route(topic, same_topic, sender, reply);
        Ok(Some(Message::opened_body(route, m.priority, m.seq, body)))
    }
}

// ---------------------------------------------------------------------------------------------------------
// Subscriptions

/// [`AgentInner::open`], retried while the key server cannot be reached (the NATS connection is down or being
/// re-established), for at most `limit` after the first failure if one is given.
async fn open_retrying(
    agent: &AgentInner,
    subject: &str,
    reply: &str,
    bytes: &[u8],
    windows: &mut Windows,
    limit: Option<Duration>,
    handed_over: bool,
) -> Result<Message> {
    // The deadline is taken at the first failure only: the common case reads no clock.
    let mut deadline = None;
    loop {
        match agent.open(subject, reply, bytes, windows, handed_over).await {
            Err(Error::Transport { .. })
                if limit.is_none_or(|l| Instant::now() < *deadline.get_or_insert_with(|| Instant::now() + l)) =>
            {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            r => return r,
        }
    }
}

/// A subscription over NATS (core, not durable). Dropping it unsubscribes.
pub struct NatsSubscription {
    agent: Arc<AgentInner>,
    sub: async_nats::Subscriber,
    pattern: String,
    windows: Windows,
    /// Sender authentication (signed checkpoints) when on.
    auth: Option<Verifier<()>>,
    /// The verifier's next deadline, as one timer reset only when the deadline moves (not one per message).
    timer: std::pin::Pin<Box<tokio::time::Sleep>>,
    armed: Option<Instant>,
    /// The last NATS subject that matched `pattern` (checked once per change of subject).
    matched: Option<async_nats::Subject>,
    /// A message whose sender key is being fetched from the key server, with the subscription's replay
    /// windows (taken while it runs). Polled before anything else, so messages stay in order; it survives a
    /// cancelled [`recv`](NatsSubscription::recv) (a timeout), so the message is not lost then.
    fetch: Option<Fetch>,
}

/// The key-server round trip of [`NatsSubscription`]: the outcome, the windows it borrowed, the NATS message.
type Fetch = std::pin::Pin<Box<dyn Future<Output = (Result<Message>, Windows, async_nats::Message)> + Send>>;

/// Whether `bytes` is a checkpoint envelope (kind byte 4): it is verified by the subscription, not opened.
fn is_checkpoint(bytes: &[u8]) -> bool {
    bytes.len() > 1 && bytes[0] == envelope::VERSION && bytes[1] == Kind::Checkpoint as u8
}

/// The JetStream message id (`Nats-Msg-Id`) of an envelope, 32 hex digits of SHA-256 over `unique`: the AEAD tag
/// of a publish envelope (the last [`TAG_LEN`] bytes), a whole checkpoint. Unique per envelope, so per stream
/// whatever the subject and sender (JetStream deduplicates by id across a whole stream), equal for the retries
/// of one envelope, and derived from bytes the server stores anyway: it tells the server nothing new (no
/// sender id, no sequence).
fn msg_id(unique: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(b"pqkit-bus msg-id v1").update(unique);
    let d = h.finalize();
    let mut s = String::with_capacity(32);
    for b in &d[..16] {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The AEAD tag of a sealed publish envelope (its last [`TAG_LEN`] bytes).
fn tag_of(env: &[u8]) -> &[u8] {
    &env[env.len().saturating_sub(TAG_LEN)..]
}

/// The epoch field of a NATS (v3) envelope that opened (so its header parsed).
fn epoch_of(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[3], bytes[4], bytes[5], bytes[6]])
}

/// The reply subject of a core NATS message (`""`: none).
fn reply_of(msg: &async_nats::Message) -> &str {
    msg.reply.as_ref().map_or("", |r| r.as_str())
}

/// On a subscription without sender authentication a well-formed checkpoint for its subject is ignored (it
/// authenticates nothing there); anything else with the checkpoint kind is counted as malformed.
fn skip_checkpoint(agent: &AgentInner, subject: &str, bytes: &[u8]) {
    match envelope::parse_checkpoint(bytes) {
        Ok(c) if &bytes[c.meta.topic.clone()] == subject.as_bytes() => {}
        _ => {
            agent.counters.malformed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl std::fmt::Debug for NatsSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsSubscription").field("pattern", &self.pattern).finish_non_exhaustive()
    }
}

impl NatsSubscription {
    /// The pattern.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Waits for the next message that authenticates; forged, replayed, corrupted, unauthorised or wrongly
    /// keyed envelopes are dropped and counted in the agent's [`metrics`](NatsAgent::metrics). NATS messages
    /// are delivered in the order the server sends them (NATS has no priorities; the priority is in the
    /// authenticated header for the application). [`Error::Closed`] when the subscription ends.
    ///
    /// With sender authentication on ([`NatsAgent::subscribe_authenticated`]) a message is handed over only
    /// once a valid signed checkpoint of its sender covers it (in sequence order per sender and topic); what no
    /// checkpoint covers within [`SenderAuth::timeout`] is dropped and counted (`rejected_unsigned`).
    ///
    /// The future is a thin [`poll_fn`](std::future::poll_fn) over the subscription (no per-message state
    /// machine to build and move): a message whose sender key is held opens within one poll; a key-server
    /// round trip is kept in the subscription, so dropping the future (a timeout) loses no message.
    pub fn recv(&mut self) -> impl Future<Output = Result<Message>> + Send + '_ {
        std::future::poll_fn(move |cx| self.poll_recv(cx))
    }

    fn poll_recv(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<Message>> {
        use std::task::Poll;
        loop {
            if let Some(f) = self.fetch.as_mut() {
                let Poll::Ready((r, windows, msg)) = f.as_mut().poll(cx) else { return Poll::Pending };
                self.fetch = None;
                self.windows = windows;
                if let Some(m) = self.opened(r, &msg.payload) {
                    return Poll::Ready(Ok(m));
                }
                continue;
            }
            let mut deadline = None;
            if let Some(v) = self.auth.as_mut() {
                v.expire(Instant::now());
                self.agent.tally(v.take_tally());
                v.take_discarded();
                if let Some((m, _)) = v.pop() {
                    self.agent.counters.received.fetch_add(1, Ordering::Relaxed);
                    return Poll::Ready(Ok(m));
                }
                deadline = v.next_deadline();
            }
            // The NATS message first, then the checkpoint deadline (as a biased select would).
            let msg = match self.sub.poll_next_unpin(cx) {
                Poll::Ready(Some(m)) => m,
                Poll::Ready(None) => return Poll::Ready(Err(Error::Closed)),
                Poll::Pending => {
                    if let Some(d) = deadline {
                        if self.armed != Some(d) {
                            self.timer.as_mut().reset(d.into());
                            self.armed = Some(d);
                        }
                        if self.timer.as_mut().poll(cx).is_ready() {
                            self.armed = None;
                            continue;
                        }
                    }
                    return Poll::Pending;
                }
            };
            let subject = msg.subject.as_str();
            // The server delivers only what the pattern matches, but it is not trusted: check, once per subject.
            if !self.matched.as_deref().is_some_and(|m| same(m.as_bytes(), subject.as_bytes())) {
                if !matches(&self.pattern, subject) {
                    continue;
                }
                self.matched = Some(msg.subject.clone());
            }
            if is_checkpoint(&msg.payload) {
                match self.auth.as_mut() {
                    Some(v) => {
                        v.checkpoint(subject, &msg.payload, ());
                        self.agent.tally(v.take_tally());
                    }
                    None => skip_checkpoint(&self.agent, subject, &msg.payload),
                }
                continue;
            }
            let held = self.auth.is_some();
            match self.agent.open_now(subject, reply_of(&msg), &msg.payload, &mut self.windows, !held) {
                Some(r) => {
                    if let Some(m) = self.opened(r, &msg.payload) {
                        return Poll::Ready(Ok(m));
                    }
                }
                None => {
                    // The sender's key is not held: fetch it (retried for 10 s while the key server cannot be
                    // reached), with the windows moved into the future and back when it ends.
                    let (agent, mut windows) = (self.agent.clone(), std::mem::take(&mut self.windows));
                    self.fetch = Some(Box::pin(async move {
                        let limit = Some(Duration::from_secs(10));
                        let r = open_retrying(
                            &agent,
                            msg.subject.as_str(),
                            reply_of(&msg),
                            &msg.payload,
                            &mut windows,
                            limit,
                            !held,
                        )
                        .await;
                        (r, windows, msg)
                    }));
                }
            }
        }
    }

    /// An opened message: handed over, or held for its checkpoint when sender authentication is on. A
    /// rejection was counted by the open and yields nothing.
    fn opened(&mut self, r: Result<Message>, payload: &[u8]) -> Option<Message> {
        let m = r.ok()?;
        match self.auth.as_mut() {
            Some(v) => {
                v.push(m, epoch_of(payload), payload, (), Instant::now());
                None
            }
            None => Some(m),
        }
    }

    /// [`recv`](Self::recv) with a timeout ([`Error::Timeout`]).
    ///
    /// One [`poll_fn`](std::future::poll_fn) over the subscription and a timer (polled only when no message is
    /// ready, as `tokio::time::timeout` does): the message is returned straight from the poll, not moved through
    /// the nested `Result`s of `timeout(recv())`. Cancelling it loses no message, as with [`recv`](Self::recv).
    pub fn recv_timeout(&mut self, timeout: Duration) -> impl Future<Output = Result<Message>> + Send + '_ {
        let sleep = tokio::time::sleep(timeout);
        async move {
            tokio::pin!(sleep);
            std::future::poll_fn(move |cx| match self.poll_recv(cx) {
                std::task::Poll::Ready(r) => std::task::Poll::Ready(r),
                std::task::Poll::Pending => sleep.as_mut().poll(cx).map(|()| Err(Error::Timeout)),
            })
            .await
        }
    }

    /// The subscription's replay state (the window of every sender stream it accepted from), as text to save
    /// and hand to [`restore_replay_state`](Self::restore_replay_state) after a restart: then an envelope
    /// accepted before the restart and re-published by anyone on the NATS server is rejected as a replay.
    /// Save it after each message, before acting on the message.
    pub fn replay_state(&self) -> String {
        self.windows.to_text()
    }

    /// Loads a [`replay_state`](Self::replay_state) saved by an earlier subscription. [`Error::Malformed`] if
    /// the text is not one.
    pub fn restore_replay_state(&mut self, state: &str) -> Result<()> {
        self.windows.load_text(state)
    }

    /// Unsubscribes.
    pub async fn unsubscribe(mut self) -> Result<()> {
        self.sub.unsubscribe().await.map_err(transport)
    }
}

/// A subscription to a durable (JetStream) topic through a named durable consumer.
pub struct DurableSubscription {
    agent: Arc<AgentInner>,
    consumer: jetstream::consumer::Consumer<jetstream::consumer::pull::Config>,
    messages: Option<Pull>,
    /// What the last [`recv`](DurableSubscription::recv) handed over (with sender authentication: its
    /// batch), acknowledged when the application comes back for the next message, or on
    /// [`ack`](DurableSubscription::ack) and [`close`](DurableSubscription::close): a subscriber that dies
    /// while processing a message gets it again.
    unacked: Vec<jetstream::Message>,
    /// Messages still wanted ([`limit`](DurableSubscription::limit)): pulls ask the server for no more, so
    /// nothing extra sits delivered and unacknowledged when the subscriber stops.
    budget: Option<u64>,
    pattern: String,
    windows: Windows,
    last: u64,
    /// Stream sequences processed (handed over, held, or rejected), to remove redeliveries.
    done: Processed,
    /// Sender authentication (signed checkpoints) when on; tokens are the JetStream messages to acknowledge.
    auth: Option<Verifier<jetstream::Message>>,
}

/// The pull of a durable subscription: a continuous pull stream, or batches of at most the messages still wanted.
type Pull = std::pin::Pin<Box<dyn futures_util::Stream<Item = std::result::Result<jetstream::Message, ()>> + Send>>;

/// The stream sequences a durable subscription has processed: every one at or below `floor`, and those in
/// `above` (at most [`MAX_PROCESSED`]; past it the lowest move into `floor`). A redelivery is recognised by
/// its sequence even when it arrives after later ones: after a predecessor on the same consumer died with
/// part of its prefetch delivered and part not, the server sends the undelivered ones first and redelivers
/// the others only after `ack_wait` (tested), so "the highest sequence so far" would drop them.
#[derive(Debug, Default)]
struct Processed {
    floor: u64,
    above: std::collections::BTreeSet<u64>,
}

/// Sequences a durable subscription remembers above its floor.
const MAX_PROCESSED: usize = 1 << 16;

impl Processed {
    fn contains(&self, seq: u64) -> bool {
        seq <= self.floor || self.above.contains(&seq)
    }
    fn insert(&mut self, seq: u64) {
        if seq <= self.floor {
            return;
        }
        self.above.insert(seq);
        // Contiguous from the floor: fold in (keeps the set small in the common, in-order case).
        while self.above.first() == Some(&(self.floor + 1)) {
            self.above.pop_first();
            self.floor += 1;
        }
        while self.above.len() > MAX_PROCESSED {
            if let Some(s) = self.above.pop_first() {
                self.floor = s;
            }
        }
    }
}

impl std::fmt::Debug for DurableSubscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableSubscription").field("pattern", &self.pattern).field("last", &self.last).finish()
    }
}

impl DurableSubscription {
    /// The stream sequence of the last message handed to the application (0 before the first).
    pub fn last_sequence(&self) -> u64 {
        self.last
    }

    /// The stream sequence up to which the server has every acknowledgement of this consumer.
    pub async fn ack_floor(&mut self) -> Result<u64> {
        Ok(self.consumer.info().await.map_err(transport)?.ack_floor.stream_sequence)
    }

    /// Waits for the next message, in stream order (except redeliveries of what a predecessor on the same
    /// consumer died holding, which come after `ack_wait`). The message handed over before is acknowledged
    /// first (at-least-once: a subscriber that dies while processing a message gets it again). Reconnects
    /// the pull stream after a server restart. Duplicates (redeliveries) are removed; forged, replayed,
    /// corrupted or wrongly keyed envelopes are acknowledged away (never redelivered) and counted.
    ///
    /// With sender authentication on ([`NatsAgent::subscribe_durable_authenticated`]) messages are held until
    /// a valid checkpoint covers them, as on core subscriptions, and acknowledged **per batch**: a batch's
    /// messages and its checkpoint are acknowledged after its last message is handed over, so a subscriber that
    /// restarts in the middle of a batch gets the whole batch again (and verifies it again). Rejected messages
    /// and checkpoints are acknowledged away. [`last_sequence`](Self::last_sequence) is then the last stream
    /// sequence processed (held or handed over).
    pub async fn recv(&mut self) -> Result<Message> {
        let _ = self.ack().await;
        loop {
            let mut deadline = None;
            if let Some(v) = self.auth.as_mut() {
                v.expire(Instant::now());
                self.agent.tally(v.take_tally());
                for t in v.take_discarded() {
                    let _ = t.ack().await;
                }
                if let Some((m, acks)) = v.pop() {
                    self.unacked.extend(acks);
                    self.handed_over();
                    return Ok(m);
                }
                deadline = v.next_deadline();
            }
            if self.messages.is_none() {
                let pull: std::result::Result<Pull, ()> = match self.budget {
                    Some(0) => return Err(Error::Closed),
                    Some(n) => {
                        let want = usize::try_from(n).unwrap_or(usize::MAX).min(1 << 16);
                        match self.consumer.batch().max_messages(want).expires(Duration::from_secs(5)).messages().await
                        {
                            Ok(b) => Ok(Box::pin(b.map(|r| r.map_err(|_| ())))),
                            Err(_) => Err(()),
                        }
                    }
                    None => match self.consumer.messages().await {
                        Ok(st) => Ok(Box::pin(st.map(|r| r.map_err(|_| ())))),
                        Err(_) => Err(()),
                    },
                };
                match pull {
                    Ok(p) => self.messages = Some(p),
                    Err(()) => {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                }
            }
            let Some(s) = self.messages.as_mut() else { continue };
            let next = match deadline {
                Some(d) => match tokio::time::timeout_at(d.into(), s.next()).await {
                    Ok(n) => n,
                    Err(_) => continue,
                },
                None => s.next().await,
            };
            let msg = match next {
                Some(Ok(m)) => m,
                Some(Err(_)) | None => {
                    // Missed heartbeats, a lost connection or a closed stream: start a new pull stream.
                    self.messages = None;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Ok(seq) = msg.info().map(|i| i.stream_sequence) else {
                let _ = msg.ack().await;
                continue;
            };
            if self.done.contains(seq) {
                self.agent.counters.duplicates.fetch_add(1, Ordering::Relaxed);
                let _ = msg.ack().await;
                continue;
            }
            if is_checkpoint(&msg.payload) {
                self.last = seq;
                self.done.insert(seq);
                match self.auth.as_mut() {
                    Some(v) => {
                        let (subject, payload) = (msg.subject.to_string(), msg.payload.clone());
                        v.checkpoint(&subject, &payload, msg);
                        self.agent.tally(v.take_tally());
                    }
                    None => {
                        skip_checkpoint(&self.agent, msg.subject.as_str(), &msg.payload);
                        let _ = msg.ack().await;
                    }
                }
                continue;
            }
            let held = self.auth.is_some();
            let r = open_retrying(&self.agent, msg.subject.as_str(), "", &msg.payload, &mut self.windows, None, !held)
                .await;
            if matches!(r, Err(Error::Transport { .. })) {
                // Not acknowledged: the server redelivers it after `ack_wait`.
                continue;
            }
            if let Some(v) = self.auth.as_mut() {
                self.last = seq;
                self.done.insert(seq);
                match r {
                    Ok(m) => {
                        let (epoch, payload) = (epoch_of(&msg.payload), msg.payload.clone());
                        v.push(m, epoch, &payload, msg, Instant::now());
                    }
                    Err(_) => {
                        let _ = msg.ack().await;
                    }
                }
                continue;
            }
            self.done.insert(seq);
            match r {
                Ok(m) => {
                    self.last = seq;
                    self.unacked.push(msg);
                    if !held {
                        self.budget = self.budget.map(|b| b.saturating_sub(1));
                    }
                    return Ok(m);
                }
                Err(_) => {
                    let _ = msg.ack().await;
                }
            }
        }
    }

    /// Counts a message released by the verifier.
    fn handed_over(&mut self) {
        self.agent.counters.received.fetch_add(1, Ordering::Relaxed);
        self.budget = self.budget.map(|b| b.saturating_sub(1));
    }

    /// The replay state, as [`NatsSubscription::replay_state`] (the exact sets of the sender streams).
    pub fn replay_state(&self) -> String {
        self.windows.to_text()
    }

    /// Loads a [`replay_state`](Self::replay_state) saved by an earlier subscription on the same consumer.
    pub fn restore_replay_state(&mut self, state: &str) -> Result<()> {
        self.windows.load_text(state)
    }

    /// Hands over at most `n` more messages ([`recv`](Self::recv) then returns [`Error::Closed`]), and asks the
    /// server for no more than that: a subscriber that stops after `n` leaves nothing delivered and
    /// unacknowledged behind, so the next one on the consumer resumes in stream order at once (not after
    /// `ack_wait`).
    pub fn limit(&mut self, n: u64) {
        self.budget = Some(n);
        self.messages = None;
    }

    /// Acknowledges what the last [`recv`](Self::recv) handed over (it is acknowledged anyway by the next
    /// `recv`). The acknowledgements are queued on the connection; [`close`](Self::close) also waits until the
    /// server has them.
    pub async fn ack(&mut self) -> Result<()> {
        let mut r = Ok(());
        for m in self.unacked.drain(..) {
            if let Err(e) = m.ack().await {
                r = Err(transport(e));
            }
        }
        r
    }

    /// Acknowledges what was handed over, stops pulling and waits until the server has the acknowledgements.
    /// Call it on every way out of a consumer loop. (With sender authentication, messages held for a
    /// checkpoint are not acknowledged: the server redelivers them after `ack_wait`.)
    pub async fn close(mut self) -> Result<()> {
        let acked = self.ack().await;
        self.messages = None;
        let flushed = self.agent.client.flush().await.map_err(transport);
        acked.and(flushed)
    }

    /// [`recv`](Self::recv) with a timeout ([`Error::Timeout`]).
    pub async fn recv_timeout(&mut self, timeout: Duration) -> Result<Message> {
        tokio::time::timeout(timeout, self.recv()).await.map_err(|_| Error::Timeout)?
    }
}
