//! The [`NatsAgent`] handle: connecting to NATS and the key server, publishing and subscribing (plain,
//! authenticated and durable), request/reply, checkpoint signing and metrics.

use super::durable::{DurableSubscription, Processed};
use super::inner::{AgentInner, Windows, checkpoint_timer, watch_key_server};
use super::keys::{AgentSession, Counters, NatsOptions, SendKeys, Signing, TopicChain};
use super::publisher::NatsPublisher;
use super::subscription::{NatsSubscription, reply_of, tag_of};
use super::wire::{CONTROL_PREFIX, OP_MAY_SUB, ks_subject, lock, msg_id, random, servers, sync_with_server, transport};
use crate::checkpoint::{Checkpoints, SenderAuth, Verifier};
use crate::envelope::{self, NatsAad};
use crate::identity::{AgentId, Identity};
use crate::queue::Priority;
use crate::subject::{validate_pattern, validate_subject};
use crate::{Error, Message, Metrics, Result};
use async_nats::jetstream;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// An agent connected to a NATS server (or cluster) and authenticated to a [`KeyServer`](crate::nats::KeyServer). Cheap
/// to clone.
#[derive(Clone)]
pub struct NatsAgent {
    pub(super) inner: Arc<AgentInner>,
}

impl std::fmt::Debug for NatsAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsAgent").field("id", &self.inner.id).finish_non_exhaustive()
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
        let session = AgentSession::handshake(&client, identity, key_server, url).await?;
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
        if inner.opts.sender_auth {
            lock(&inner.signing).default = Some(Checkpoints::default());
            inner.rules.fetch_add(1, Ordering::Release);
            let (weak, wake) = (Arc::downgrade(&inner), inner.timer_wake.clone());
            *lock(&inner.timer_task) = Some(tokio::spawn(checkpoint_timer(weak, wake)));
        }
        inner.client.flush().await.map_err(transport)?;
        Ok(NatsAgent { inner })
    }

    /// The verifier a subscription to `pattern` starts with: sender authentication with the default limits
    /// when [`NatsOptions::sender_auth`] is on (not for reply inboxes, which are never checkpointed).
    fn default_auth<T>(&self, pattern: &str) -> Option<Verifier<T>> {
        (self.inner.opts.sender_auth && !pattern.starts_with("_INBOX.")).then(|| Verifier::new(SenderAuth::default()))
    }

    /// The sender authentication limits of a durable subscription by default: [`SenderAuth::default`] with a
    /// timeout that also covers the publisher's retries of a checkpoint ([`NatsOptions::durable_retry`], 30 s by
    /// default: a checkpoint stored late, after a server restart, still verifies what it covers).
    fn durable_auth(&self) -> SenderAuth {
        let d = SenderAuth::default();
        SenderAuth { timeout: self.inner.opts.durable_retry + d.timeout, ..d }
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
    /// against other members, docs/bus.md §9): the digest of every envelope this agent publishes on such a topic
    /// is recorded, and a checkpoint listing them, signed with the agent's hybrid identity follows every `cfg.every` messages or
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
    /// With [`NatsOptions::sender_auth`] on (the default) this is
    /// [`subscribe_authenticated`](Self::subscribe_authenticated) with [`SenderAuth::default`].
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
            auth: self.default_auth(pattern),
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            armed: None,
            matched: None,
            fetch: None,
        })
    }

    /// [`subscribe`](Self::subscribe) with **sender authentication** on (docs/bus.md §9): a message is handed
    /// over only when a checkpoint signed by its sender's identity (whose `AgentId` is recomputed from the keys
    /// it carries) lists the digest of its envelope at its sequence, so no other member of the topic can make
    /// this subscriber accept a message in a publisher's name. Publishers must opt the topic in
    /// ([`sign_checkpoints`](Self::sign_checkpoints)); anything else is rejected after `auth.timeout`
    /// (`rejected_unsigned`). Adds up to the publisher's `after` plus a signature and a verification of latency;
    /// memory is bounded by `auth`'s limits.
    pub async fn subscribe_authenticated(&self, pattern: &str, auth: SenderAuth) -> Result<NatsSubscription> {
        let mut s = self.subscribe(pattern).await?;
        s.auth = Some(Verifier::new(auth));
        Ok(s)
    }

    /// [`subscribe_durable`](Self::subscribe_durable) with sender authentication on and these limits (see
    /// [`subscribe_authenticated`](Self::subscribe_authenticated)), also for an agent that opted out: checkpoints are
    /// stored in the stream with the messages they cover, so a subscriber that was away verifies what it missed,
    /// and each message is verified and acknowledged on its own.
    pub async fn subscribe_durable_authenticated(
        &self,
        stream: &str,
        consumer: &str,
        pattern: &str,
        auth: SenderAuth,
    ) -> Result<DurableSubscription> {
        let mut s = self.subscribe_durable(stream, consumer, pattern).await?;
        s.auth = Some(Verifier::durable(auth));
        Ok(s)
    }

    /// [`subscribe_durable`](Self::subscribe_durable) without sender authentication, also for an agent that has
    /// it on: a message is handed over as soon as it opens, so any member of the topic can write one in another
    /// publisher's name. For readers of a topic whose publishers opted out, which a default subscriber drops as
    /// unsigned.
    pub async fn subscribe_durable_unauthenticated(
        &self,
        stream: &str,
        consumer: &str,
        pattern: &str,
    ) -> Result<DurableSubscription> {
        let mut s = self.subscribe_durable(stream, consumer, pattern).await?;
        s.auth = None;
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
            g.chain.push(epoch, seq, "", &env);
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
    /// removed by stream sequence and by the envelope's replay window. With [`NatsOptions::sender_auth`] on (the
    /// default) a message is handed over only once a checkpoint signed by its sender lists its digest
    /// ([`subscribe_durable_authenticated`](Self::subscribe_durable_authenticated) with [`SenderAuth::default`]).
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
            auth: (self.inner.opts.sender_auth && !pattern.starts_with("_INBOX."))
                .then(|| Verifier::durable(self.durable_auth())),
            floor_checked: None,
        })
    }
}
