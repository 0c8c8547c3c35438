//! The [`KeyServer`]: the process that holds the [`Policy`] and the topic epoch secrets, runs the
//! handshake with each agent over NATS requests, and answers key requests only when the policy allows them;
//! with its running [`KeyServerHandle`] and [`KeyServerMetrics`].

use super::ksfile::{self, EpochKey};
use super::wire::{
    CONTROL_PREFIX, HELLO_AAD, MAX_PENDING, MAX_SESSIONS, MAX_STREAMS, OP_MAY_SUB, OP_PING, OP_RECV, OP_SEND,
    ST_EXPIRED, ST_MALFORMED, ST_OK, ST_UNAUTHORISED, ST_UNKNOWN, derive_send_key, first_epoch, random, req_nonce,
    scope_of, servers, sync_with_server, transport,
};
use crate::Result;
use crate::envelope::TAG_LEN;
use crate::handshake;
use crate::identity::{AgentId, Identity};
use crate::policy::Policy;
use crate::subject::{validate_pattern, validate_subject};
use crate::window::Window;
use futures_util::StreamExt;
use pqkit::aead::{Aead, Aes256Gcm};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};
use zeroize::Zeroizing;

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
pub(super) struct KsCounters {
    pub(super) handshakes: AtomicU64,
    pub(super) send_grants: AtomicU64,
    pub(super) recv_grants: AtomicU64,
    pub(super) refused: AtomicU64,
}

/// The key server of a NATS deployment: holds the policy and every topic's epoch secrets, authenticates agents
/// with the hybrid handshake, and grants sender keys. It is trusted exactly as the in-process broker is (it is
/// the key server); the NATS server is not trusted with anything but delivery.
pub struct KeyServer {
    pub(super) identity: Identity,
    pub(super) policy: Policy,
    pub(super) rotate_after: Duration,
    pub(super) keep_epochs: usize,
    pub(super) state: Option<PathBuf>,
}

impl std::fmt::Debug for KeyServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyServer").field("identity", self.identity.public()).finish_non_exhaustive()
    }
}

pub(super) struct KsSession {
    pub(super) peer: AgentId,
    pub(super) send: Aes256Gcm,
    pub(super) recv: Aes256Gcm,
    pub(super) window: Window,
    pub(super) used: Instant,
}

pub(super) struct KsState {
    pub(super) identity: Identity,
    pub(super) policy: Policy,
    pub(super) rotate_after: Duration,
    pub(super) keep_epochs: usize,
    /// The state file ([`KeyServer::state_file`]), rewritten before each grant that changes the epochs is answered.
    pub(super) state: Option<PathBuf>,
    pub(super) pending: HashMap<[u8; 16], (handshake::Responder, Instant)>,
    pub(super) sessions: HashMap<[u8; 16], KsSession>,
    /// Per key scope, the kept epochs, oldest first (older ones are dropped: their secrets zeroize).
    pub(super) scopes: HashMap<String, Vec<EpochKey>>,
    pub(super) counters: Arc<KsCounters>,
}

/// A running key server; dropping it (or [`shutdown`](Self::shutdown)) stops it.
pub struct KeyServerHandle {
    pub(super) id: AgentId,
    pub(super) counters: Arc<KsCounters>,
    pub(super) task: tokio::task::JoinHandle<()>,
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
        KeyServer { identity, policy, rotate_after: Duration::from_secs(600), keep_epochs: 2, state: None }
    }
    /// Keeps the epochs (secrets, start times, and the agent each sender stream was granted to) in the file `path`,
    /// sealed under a key derived from the key server's identity seed, mode 0600: a key server restarted with the
    /// same identity and file still grants the keys of what was sealed before the restart (durable messages not
    /// read yet), and never grants an (epoch, stream) twice. The file is read by [`serve`](Self::serve) (created if
    /// missing) and rewritten before each grant that changes it is answered; a grant whose write fails is refused.
    /// Without a state file the epochs die with the process. One key server per file.
    pub fn state_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.state = Some(path.into());
        self
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
        let scopes = match &self.state {
            Some(path) => match ksfile::load(path, &self.identity)? {
                Some(scopes) => scopes,
                None => {
                    // Created now, so that an unwritable path fails here and not at the first grant.
                    let empty = HashMap::new();
                    ksfile::save(path, &self.identity, &empty)?;
                    empty
                }
            },
            None => HashMap::new(),
        };
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
            state: self.state,
            pending: HashMap::new(),
            sessions: HashMap::new(),
            scopes,
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
    pub(super) fn hs1(&mut self, m1: &[u8]) -> Option<Vec<u8>> {
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
    pub(super) fn hs3(&mut self, b: &[u8]) -> Option<Vec<u8>> {
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
    pub(super) fn req(&mut self, b: &[u8]) -> Option<Vec<u8>> {
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

    pub(super) fn refuse(&self, st: u8) -> u8 {
        self.counters.refused.fetch_add(1, Ordering::Relaxed);
        st
    }

    pub(super) fn op(&mut self, peer: AgentId, body: &[u8]) -> std::result::Result<Vec<u8>, u8> {
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
                        SystemTime::now().duration_since(e.started).is_ok_and(|d| d >= rotate_after)
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
                            started: SystemTime::now(),
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
                // On disk before the key leaves: a restart never grants this (epoch, stream) again.
                if let Some(path) = &self.state
                    && ksfile::save(path, &self.identity, &self.scopes).is_err()
                {
                    zeroize::Zeroize::zeroize(&mut out);
                    return Err(self.refuse(ST_UNKNOWN));
                }
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
