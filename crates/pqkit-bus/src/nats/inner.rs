//! The agent's shared core (`AgentInner`), which every handle holds: the connection and its key-server
//! session, fetching and caching sender and receive keys, sealing and publishing envelopes, opening and
//! checking received ones against replay windows and checkpoints, and the background tasks that watch the
//! key server and emit checkpoints on a timer.

use super::keys::{AgentSession, Counters, NatsOptions, RecvKey, RecvKeys, SendKey, SendKeys, Signing, TopicChain};
use super::wire::{
    COUNTER_BITS, KS_CHECK, MAX_KEYS, MAX_WINDOWS, OP_PING, OP_RECV, OP_SEND, SESSION_UNKNOWN, ST_EXPIRED, ST_OK,
    ST_UNAUTHORISED, ST_UNKNOWN, ks_call, lock, msg_id, req_nonce, scope_of, transport,
};
use crate::bus::{Body, Route};
use crate::checkpoint::{Chain, Tally};
use crate::envelope::{self, Kind, MAX_PAYLOAD, NatsAad, NatsHeader, TAG_LEN};
use crate::identity::{AgentId, Identity};
use crate::queue::Priority;
use crate::subject::{matches, same, validate_subject};
use crate::window::Replay;
use crate::{Error, Message, Result};
use async_nats::jetstream;
use futures_util::StreamExt;
use pqkit::aead::{Aead, Aes256Gcm};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use zeroize::Zeroizing;

/// Keeps an agent's key-server session alive across key-server restarts: on the key server's start-up
/// announcement, and every [`KS_CHECK`], asks it whether it knows the session, and runs the handshake again
/// if not ([`AgentInner::ks_request`]). Ends with the agent.
pub(super) async fn watch_key_server(weak: Weak<AgentInner>, mut up: async_nats::Subscriber) {
    loop {
        if let Ok(None) = tokio::time::timeout(KS_CHECK, up.next()).await {
            return;
        }
        let Some(a) = weak.upgrade() else { return };
        let _ = a.ks_request(&[OP_PING]).await;
    }
}

pub(super) struct AgentInner {
    pub(super) client: async_nats::Client,
    pub(super) js: jetstream::Context,
    pub(super) id: AgentId,
    pub(super) ks: AgentId,
    pub(super) opts: NatsOptions,
    pub(super) session: Mutex<AgentSession>,
    pub(super) send_keys: Mutex<SendKeys>,
    pub(super) recv_keys: Mutex<RecvKeys>,
    pub(super) inbox: String,
    pub(super) pending: Mutex<HashMap<String, tokio::sync::oneshot::Sender<Result<Message>>>>,
    pub(super) inbox_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    pub(super) counters: Counters,
    /// The agent's identity (signs checkpoints).
    pub(super) identity: Arc<Identity>,
    pub(super) signing: Mutex<Signing>,
    /// Checkpoint rules added so far (each [`NatsAgent::sign_checkpoints`] adds one, after the rule is in
    /// place): publishes on an agent without rules never take the signing lock, and a [`NatsPublisher`]
    /// decides again whether a rule covers its subject only when this moved.
    pub(super) rules: AtomicU64,
    /// Moves each time the agent ran the handshake again (a restarted key server): the sender keys are gone
    /// and [`NatsPublisher`]s fetch theirs again.
    pub(super) keys_gen: AtomicU64,
    /// The key-server watch task ([`watch_key_server`]).
    pub(super) watch_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The NATS server address(es) the agent was given, for error messages.
    pub(super) url: String,
    /// Wakes the checkpoint timer task when a batch starts.
    pub(super) timer_wake: Arc<tokio::sync::Notify>,
    pub(super) timer_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
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

/// Replay windows of one subscription, per (key scope, epoch, stream): a stream is granted to one sender per
/// scope and epoch, so this is per (sender, scope, epoch, stream).
#[derive(Default)]
pub(super) struct Windows {
    /// Exact replay sets ([`Replay::Exact`], durable subscriptions) instead of 64-entry windows.
    pub(super) exact: bool,
    /// By key scope, then (epoch, stream).
    pub(super) map: HashMap<String, HashMap<(u32, u32), Replay>>,
    pub(super) len: usize,
    /// The entry the last message used, with its key: a stream of messages from one sender on one topic opens
    /// without a lock or a hash lookup. Its window is the authoritative copy while it is hot and is written
    /// back to `map` before any other entry is used.
    pub(super) hot: Option<Hot>,
    /// The topic of the last message, shared by the messages handed over (one allocation per topic change).
    pub(super) last_topic: Option<Arc<str>>,
    /// The route (topic, sender, reply-to) of the last message handed over, shared by the next ones while they
    /// repeat it (no allocation per message).
    pub(super) route: Option<Arc<Route>>,
    /// The associated data of the last message opened (`envelope::nats_aad_into`): only its header changes
    /// while the topic and reply-to repeat.
    pub(super) aad: Vec<u8>,
}

pub(super) struct Hot {
    pub(super) scope: String,
    pub(super) wid: (u32, u32),
    pub(super) window: Replay,
    pub(super) key: Arc<RecvKey>,
}

impl Windows {
    /// The replay state as text, one line per sender stream: `<scope> <epoch> <stream> <replay>` (see
    /// [`Replay::to_text`]).
    pub(super) fn to_text(&self) -> String {
        let mut out = String::new();
        let hot = self.hot.as_ref().map(|h| (h.scope.as_str(), h.wid, &h.window));
        let cold = self.map.iter().flat_map(|(scope, m)| m.iter().map(move |(wid, r)| (scope.as_str(), *wid, r)));
        for (scope, (epoch, stream), r) in hot.into_iter().chain(cold) {
            out.push_str(&format!("{scope} {epoch} {stream} {}\n", r.to_text()));
        }
        out
    }

    /// Loads [`to_text`](Self::to_text)'s output (replacing nothing already held for the same stream).
    pub(super) fn load_text(&mut self, text: &str) -> Result<()> {
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
    pub(super) fn cool_fields(hot: &mut Option<Hot>, map: &mut HashMap<String, HashMap<(u32, u32), Replay>>) {
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
    pub(super) fn route(&mut self, topic: &str, same_topic: bool, sender: AgentId, reply: Option<&str>) -> Arc<Route> {
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

    pub(super) fn topic(&mut self, topic: &str) -> Arc<str> {
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

/// The checkpoint timer of an agent that signs checkpoints: signs every batch whose first unsigned message is
/// older than its topic's `after`, sleeping until the next such moment or until a batch starts.
pub(super) async fn checkpoint_timer(weak: Weak<AgentInner>, wake: Arc<tokio::sync::Notify>) {
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
    pub(super) fn chain_for(&self, subject: &str) -> Option<Arc<tokio::sync::Mutex<TopicChain>>> {
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
        let Some(cfg) = sg.rules.iter().find(|(p, _)| matches(p, subject)).map(|(_, c)| *c).or(sg.default) else {
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
        // Bounded: every topic is chained by default.
        sg.prune(MAX_KEYS);
        let c = Arc::new(tokio::sync::Mutex::new(TopicChain { chain: Chain::new(), cfg, durable: false }));
        sg.chains.insert(subject.to_string(), c.clone());
        sg.remember(subject, Some(c.clone()));
        Some(c)
    }

    /// Seals, chains and publishes one message on a checkpointed topic (under the topic's chain lock, so the
    /// chain order is the order on the wire); signs when the batch is full or `sign_now`.
    pub(super) async fn send_chained(
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
        g.chain.push(epoch, seq, reply.unwrap_or(""), &env);
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
    pub(super) async fn emit_checkpoint(&self, topic: &str, g: &mut TopicChain) -> Result<()> {
        if g.chain.range().is_none() {
            return Ok(());
        }
        let Some(cp) = g.chain.sign(&self.identity, topic)? else { return Ok(()) };
        let r = if g.durable {
            self.js_store(topic, &cp, &msg_id(&cp)).await.map(|_| ())
        } else {
            self.client.publish(topic.to_string(), cp.into()).await.map_err(transport)
        };
        // Not sent: the batch stays pending so a later attempt signs it (nothing is lost on a transient failure).
        r?;
        g.chain.clear();
        g.durable = false;
        self.counters.checkpoints.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Stores one envelope in JetStream with `msg_id` (deduplicated by the server), retrying until acknowledged
    /// or [`NatsOptions::durable_retry`] has passed. Returns the stream sequence.
    pub(super) async fn js_store(&self, subject: &str, env: &[u8], msg_id: &str) -> Result<u64> {
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

    pub(super) fn tally(&self, t: Tally) {
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

    pub(super) fn count(&self, e: &Error) {
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
    pub(super) async fn ks_request(&self, body: &[u8]) -> Result<Vec<u8>> {
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
    pub(super) async fn rehandshake(&self) -> Result<()> {
        let s = AgentSession::handshake(&self.client, &self.identity, self.ks, &self.url).await?;
        *lock(&self.session) = s;
        *lock(&self.send_keys) = SendKeys::default();
        self.keys_gen.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// The request to the key server over NATS, with a bounded wait (NATS reports "no responders" at once only
    /// when nobody at all subscribes to the subject; a monitoring `>` subscriber would otherwise turn a key
    /// server that is down into the client's long request timeout).
    pub(super) async fn ks_call(&self, op: &str, body: Vec<u8>) -> Result<async_nats::Message> {
        ks_call(&self.client, &self.ks, op, body, &self.url).await
    }

    pub(super) async fn ks_request_once(&self, body: &[u8]) -> Result<Vec<u8>> {
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
    pub(super) fn send_key_cached(&self, subject: &str) -> Result<Option<Arc<SendKey>>> {
        Ok(self.send_key_lookup(subject, false)?.map(|(k, _)| k))
    }

    /// [`send_key_cached`](Self::send_key_cached), and with `nats_subject` the client's subject for `subject`
    /// ([`SendKeys::subject`]), under the same lock.
    pub(super) fn send_key_lookup(
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
    pub(super) async fn send_key(&self, subject: &str) -> Result<Arc<SendKey>> {
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

    pub(super) async fn seal(
        &self,
        subject: &str,
        payload: &[u8],
        priority: Priority,
        reply: Option<&str>,
    ) -> Result<Vec<u8>> {
        Ok(self.seal_meta(subject, payload, priority, reply).await?.0)
    }

    /// [`seal`](Self::seal), also returning the envelope's epoch and sequence. With a cached sender key that has
    /// messages left (the common case) nothing is awaited; the key-server round trip is a boxed future, so it
    /// does not grow (and get copied with) every publish's future.
    pub(super) async fn seal_meta(
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

    pub(super) fn check_seal_input(payload: &[u8], reply: Option<&str>) -> Result<()> {
        if payload.len() > MAX_PAYLOAD {
            return Err(Error::PayloadTooLarge { len: payload.len() });
        }
        if let Some(r) = reply {
            validate_subject(r)?;
        }
        Ok(())
    }

    /// Seals under the cached sender key; `Ok(None)` when there is none or it is used up (ask the key server).
    pub(super) fn seal_cached(
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
    pub(super) fn publish_cached(
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

    pub(super) async fn seal_fetching(
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
    pub(super) fn seal_with(
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
    pub(super) async fn recv_key(&self, topic: &str, epoch: u32, stream: u32) -> Result<Arc<RecvKey>> {
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
    pub(super) async fn open(
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
    pub(super) fn open_now(
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
    pub(super) fn counted(&self, r: Result<Message>, handed_over: bool) -> Result<Message> {
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
    pub(super) async fn open_fetching(
        &self,
        subject: &str,
        reply: &str,
        bytes: &[u8],
        windows: &mut Windows,
    ) -> Result<Message> {
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
    pub(super) fn open_sync(
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
