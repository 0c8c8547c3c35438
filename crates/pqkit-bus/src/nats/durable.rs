//! The [`DurableSubscription`]: a durable JetStream pull consumer of a durable topic, opening each message,
//! dropping duplicates by stream sequence and replay window, and acknowledging what the caller has taken.

use super::inner::{AgentInner, Windows};
use super::subscription::{epoch_of, is_checkpoint, open_retrying, skip_checkpoint};
use super::wire::transport;
use crate::checkpoint::Verifier;
use crate::{Error, Message, Result};
use async_nats::jetstream;
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A subscription to a durable (JetStream) topic through a named durable consumer.
pub struct DurableSubscription {
    pub(super) agent: Arc<AgentInner>,
    pub(super) consumer: jetstream::consumer::Consumer<jetstream::consumer::pull::Config>,
    pub(super) messages: Option<Pull>,
    /// What the last [`recv`](DurableSubscription::recv) handed over (with sender authentication: its
    /// batch), acknowledged when the application comes back for the next message, or on
    /// [`ack`](DurableSubscription::ack) and [`close`](DurableSubscription::close): a subscriber that dies
    /// while processing a message gets it again.
    pub(super) unacked: Vec<jetstream::Message>,
    /// Messages still wanted ([`limit`](DurableSubscription::limit)): pulls ask the server for no more, so
    /// nothing extra sits delivered and unacknowledged when the subscriber stops.
    pub(super) budget: Option<u64>,
    pub(super) pattern: String,
    pub(super) windows: Windows,
    pub(super) last: u64,
    /// Stream sequences processed (handed over, held, or rejected), to remove redeliveries.
    pub(super) done: Processed,
    /// Sender authentication (signed checkpoints) when on; tokens are the JetStream messages to acknowledge.
    pub(super) auth: Option<Verifier<jetstream::Message>>,
    /// When the consumer's acknowledgement floor was last asked for (to settle checkpoints whose messages a
    /// predecessor handed over).
    pub(super) floor_checked: Option<Instant>,
}

/// How often a durable subscription holding checkpoints with messages it never saw asks for the consumer's
/// acknowledgement floor.
const FLOOR_EVERY: Duration = Duration::from_secs(1);

/// The idle heartbeat the server sends on a durable subscription's continuous pull when it has nothing to deliver.
const PULL_HEARTBEAT: Duration = Duration::from_secs(2);
/// How long each pull request of the continuous pull lasts before the client renews it.
const PULL_EXPIRES: Duration = Duration::from_secs(10);

/// The pull of a durable subscription: a continuous pull stream, or batches of at most the messages still wanted.
pub(super) type Pull =
    std::pin::Pin<Box<dyn futures_util::Stream<Item = std::result::Result<jetstream::Message, ()>> + Send>>;

/// The stream sequences a durable subscription has processed: every one at or below `floor`, and those in
/// `above` (at most [`MAX_PROCESSED`]; past it the lowest move into `floor`). A redelivery is recognised by
/// its sequence even when it arrives after later ones: after a predecessor on the same consumer died with
/// part of its prefetch delivered and part not, the server sends the undelivered ones first and redelivers
/// the others only after `ack_wait` (tested), so "the highest sequence so far" would drop them.
#[derive(Debug, Default)]
pub(super) struct Processed {
    pub(super) floor: u64,
    pub(super) above: std::collections::BTreeSet<u64>,
}

/// Sequences a durable subscription remembers above its floor.
pub(super) const MAX_PROCESSED: usize = 1 << 16;

impl Processed {
    pub(super) fn contains(&self, seq: u64) -> bool {
        seq <= self.floor || self.above.contains(&seq)
    }
    pub(super) fn insert(&mut self, seq: u64) {
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
    /// With sender authentication on
    /// ([`NatsAgent::subscribe_durable_authenticated`](crate::nats::NatsAgent::subscribe_durable_authenticated))
    /// (the default) messages are held until a valid checkpoint lists their digest, as on core subscriptions, and
    /// each is still acknowledged **on its own** once handed over. A checkpoint is acknowledged only once every
    /// message it covers was handed over (by this subscription, or before it: the consumer's acknowledgement
    /// floor passed it), so a message redelivered after a crash is verified against the checkpoint that covered
    /// it, which comes back with it. Rejected messages and checkpoints are acknowledged away.
    /// Messages come in stream order per sender and topic; across topics and senders, in the order their
    /// checkpoints verify.
    pub async fn recv(&mut self) -> Result<Message> {
        let _ = self.ack().await;
        loop {
            let mut deadline = None;
            if self.auth.as_ref().is_some_and(|v| v.unsettled() > 0)
                && self.floor_checked.is_none_or(|t| t.elapsed() >= FLOOR_EVERY)
            {
                self.floor_checked = Some(Instant::now());
                if let Ok(floor) = self.ack_floor().await
                    && let Some(v) = self.auth.as_mut()
                {
                    // Every stream message below the checkpoint is acknowledged: so is every message it covers.
                    v.settle_where(|t| t.info().is_ok_and(|i| i.stream_sequence <= floor.saturating_add(1)));
                }
            }
            if let Some(v) = self.auth.as_mut() {
                v.expire(Instant::now());
                self.agent.tally(v.take_tally());
                for t in v.take_discarded() {
                    let _ = t.ack().await;
                }
                if let Some((m, acks)) = v.pop() {
                    if let Some(i) = acks.first().and_then(|t| t.info().ok()) {
                        self.last = i.stream_sequence;
                    }
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
                        // Messages already in hand count against the budget (at least one more is asked for:
                        // the checkpoint that releases them may be next), so nothing beyond it sits in flight
                        // when the budget is reached.
                        let have = self.auth.as_ref().map_or(0, |v| v.held() + v.ready_len()) as u64;
                        let n = n.saturating_sub(have).max(1);
                        let want = usize::try_from(n).unwrap_or(usize::MAX).min(1 << 16);
                        match self.consumer.batch().max_messages(want).expires(Duration::from_secs(5)).messages().await
                        {
                            Ok(b) => Ok(Box::pin(b.map(|r| r.map_err(|_| ())))),
                            Err(_) => Err(()),
                        }
                    }
                    // A short idle heartbeat: a pull request lost with the node that held it (a cluster node
                    // restarting, the consumer's leader moving) shows as missed heartbeats within 2 × PULL_HEARTBEAT,
                    // and a new pull starts (the client's defaults, 15 s and 30 s, left the subscription idle for
                    // about 30 s with a backlog waiting).
                    None => {
                        match self.consumer.stream().heartbeat(PULL_HEARTBEAT).expires(PULL_EXPIRES).messages().await {
                            Ok(st) => Ok(Box::pin(st.map(|r| r.map_err(|_| ())))),
                            Err(_) => Err(()),
                        }
                    }
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
            let checkpoint = is_checkpoint(&msg.payload);
            // A checkpoint's redelivery goes to the verifier, which holds its token until the messages it covers
            // were handed over (acknowledging the copy here would acknowledge the checkpoint).
            if self.done.contains(seq) && !(checkpoint && self.auth.is_some()) {
                self.agent.counters.duplicates.fetch_add(1, Ordering::Relaxed);
                let seq_of = |t: &jetstream::Message| t.info().is_ok_and(|i| i.stream_sequence == seq);
                if self.auth.as_ref().is_some_and(|v| v.holds_where(seq_of)) {
                    // Redelivered while held for its checkpoint: the held copy is acknowledged once handed over.
                    continue;
                }
                let _ = msg.ack().await;
                continue;
            }
            if checkpoint {
                self.last = self.last.max(seq);
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
    pub(super) fn handed_over(&mut self) {
        self.agent.counters.received.fetch_add(1, Ordering::Relaxed);
        self.budget = self.budget.map(|b| b.saturating_sub(1));
    }

    /// The replay state, as [`NatsSubscription::replay_state`](crate::nats::NatsSubscription::replay_state) (the exact
    /// sets of the sender streams).
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
    /// checkpoint and checkpoints not yet settled are handed back unacknowledged, for redelivery at once.)
    pub async fn close(mut self) -> Result<()> {
        let acked = self.ack().await;
        // The pull ends first (its unsubscription is sent before the NAKs below, on the same connection), so the
        // server does not hand what is given back to this subscription's open pull request.
        self.messages = None;
        if self.auth.as_ref().is_some_and(|v| v.held() > 0 || v.unsettled() > 0) {
            let _ = self.agent.client.flush().await;
        }
        if let Some(v) = self.auth.as_mut() {
            // Held and unsettled messages (pulled past `limit`, or waiting for a checkpoint) go back to the
            // server now, not after `ack_wait`: the next subscriber on the consumer gets them first, in order.
            for t in v.take_held() {
                let _ = t.ack_with(jetstream::AckKind::Nak(None)).await;
            }
        }
        let flushed = self.agent.client.flush().await.map_err(transport);
        acked.and(flushed)
    }

    /// [`recv`](Self::recv) with a timeout ([`Error::Timeout`]).
    pub async fn recv_timeout(&mut self, timeout: Duration) -> Result<Message> {
        tokio::time::timeout(timeout, self.recv()).await.map_err(|_| Error::Timeout)?
    }
}
