//! The [`NatsSubscription`]: receiving a topic's envelopes from core NATS, fetching the sender's key when
//! needed, opening and checking each message, and skipping checkpoints.

use super::inner::{AgentInner, Windows};
use super::wire::transport;
use crate::checkpoint::Verifier;
use crate::envelope::{self, Kind, TAG_LEN};
use crate::subject::{matches, same};
use crate::{Error, Message, Result};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// [`AgentInner::open`], retried while the key server cannot be reached (the NATS connection is down or being
/// re-established), for at most `limit` after the first failure if one is given.
pub(super) async fn open_retrying(
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
    pub(super) agent: Arc<AgentInner>,
    pub(super) sub: async_nats::Subscriber,
    pub(super) pattern: String,
    pub(super) windows: Windows,
    /// Sender authentication (signed checkpoints) when on.
    pub(super) auth: Option<Verifier<()>>,
    /// The verifier's next deadline, as one timer reset only when the deadline moves (not one per message).
    pub(super) timer: std::pin::Pin<Box<tokio::time::Sleep>>,
    pub(super) armed: Option<Instant>,
    /// The last NATS subject that matched `pattern` (checked once per change of subject).
    pub(super) matched: Option<async_nats::Subject>,
    /// A message whose sender key is being fetched from the key server, with the subscription's replay
    /// windows (taken while it runs). Polled before anything else, so messages stay in order; it survives a
    /// cancelled [`recv`](NatsSubscription::recv) (a timeout), so the message is not lost then.
    pub(super) fetch: Option<Fetch>,
}

/// The key-server round trip of [`NatsSubscription`]: the outcome, the windows it borrowed, the NATS message.
pub(super) type Fetch = std::pin::Pin<Box<dyn Future<Output = (Result<Message>, Windows, async_nats::Message)> + Send>>;

/// Whether `bytes` is a checkpoint envelope (kind byte 4): it is verified by the subscription, not opened.
pub(super) fn is_checkpoint(bytes: &[u8]) -> bool {
    bytes.len() > 1 && bytes[0] == envelope::VERSION && bytes[1] == Kind::Checkpoint as u8
}

/// The AEAD tag of a sealed publish envelope (its last [`TAG_LEN`] bytes).
pub(super) fn tag_of(env: &[u8]) -> &[u8] {
    &env[env.len().saturating_sub(TAG_LEN)..]
}

/// The epoch field of a NATS (v3) envelope that opened (so its header parsed).
pub(super) fn epoch_of(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[3], bytes[4], bytes[5], bytes[6]])
}

/// The reply subject of a core NATS message (`""`: none).
pub(super) fn reply_of(msg: &async_nats::Message) -> &str {
    msg.reply.as_ref().map_or("", |r| r.as_str())
}

/// On a subscription without sender authentication a well-formed checkpoint for its subject is ignored (it
/// authenticates nothing there); anything else with the checkpoint kind is counted as malformed.
pub(super) fn skip_checkpoint(agent: &AgentInner, subject: &str, bytes: &[u8]) {
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
    /// keyed envelopes are dropped and counted in the agent's [`metrics`](crate::nats::NatsAgent::metrics). NATS
    /// messages are delivered in the order the server sends them (NATS has no priorities; the priority is in the
    /// authenticated header for the application). [`Error::Closed`] when the subscription ends.
    ///
    /// With sender authentication on
    /// ([`NatsAgent::subscribe_authenticated`](crate::nats::NatsAgent::subscribe_authenticated)) a message is handed
    /// over only once a valid signed checkpoint of its sender covers it (in sequence order per sender and topic); what
    /// no checkpoint covers within [`SenderAuth::timeout`](crate::checkpoint::SenderAuth::timeout) is dropped and
    /// counted (`rejected_unsigned`).
    ///
    /// The future is a thin [`poll_fn`](std::future::poll_fn) over the subscription (no per-message state
    /// machine to build and move): a message whose sender key is held opens within one poll; a key-server
    /// round trip is kept in the subscription, so dropping the future (a timeout) loses no message.
    pub fn recv(&mut self) -> impl Future<Output = Result<Message>> + Send + '_ {
        std::future::poll_fn(move |cx| self.poll_recv(cx))
    }

    pub(super) fn poll_recv(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<Message>> {
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
    pub(super) fn opened(&mut self, r: Result<Message>, payload: &[u8]) -> Option<Message> {
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
