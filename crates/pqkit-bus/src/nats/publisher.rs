//! The [`NatsPublisher`] handle: publishing on one subject with the key, checkpoint rule and associated
//! data resolved once, so that each message is a seal and a queue.

use super::inner::AgentInner;
use super::keys::{SendKey, TopicChain};
use super::wire::{COUNTER_BITS, transport};
use crate::envelope::{MAX_PAYLOAD, NatsHeader};
use crate::queue::Priority;
use crate::{Error, Result};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A publisher on one NATS subject, from [`NatsAgent::publisher`](crate::nats::NatsAgent::publisher): the subject
/// checked, the sender key held, the checkpoint decision made, and the associated data built once. Cheap to hold; not
/// `Clone` (each producer takes its own with [`NatsAgent::publisher`](crate::nats::NatsAgent::publisher)).
pub struct NatsPublisher {
    pub(super) agent: Arc<AgentInner>,
    pub(super) subject: String,
    /// The client's subject, shared by every message (a reference count, not a copy per message).
    pub(super) nats_subject: async_nats::Subject,
    /// The sender key of the subject's scope (the agent's: its counter is shared with every publish there).
    pub(super) key: Arc<SendKey>,
    /// The value of [`AgentInner::rules`] when `chain` was decided.
    pub(super) rules: u64,
    /// The value of [`AgentInner::keys_gen`] when `key` was taken.
    pub(super) keys_gen: u64,
    /// The subject's checkpoint chain, when a rule covers it.
    pub(super) chain: Option<Arc<tokio::sync::Mutex<TopicChain>>>,
    /// `header || t || subject || 0` (no reply-to), the header rewritten per message.
    pub(super) aad: Vec<u8>,
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

    /// Publishes one sealed message, as [`NatsAgent::publish`](crate::nats::NatsAgent::publish) on the handle's subject
    /// does: returns once the client queued it ([`NatsAgent::flush`](crate::nats::NatsAgent::flush) waits until the
    /// server has it). When the sender key is used up the agent asks the key server for the next epoch and the handle
    /// keeps the new key.
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
        if payload.len() > MAX_PAYLOAD {
            return Err(Error::PayloadTooLarge { len: payload.len() });
        }
        // A chained subject (sender authentication): seal, chain and send under the chain's lock, so the chain
        // follows the order on the wire; a checkpoint follows when the batch is full (the agent's timer signs a
        // batch that stays open for `T`).
        let guard = match &self.chain {
            Some(tc) => Some(tc.lock().await),
            None => None,
        };
        let k = &self.key;
        let n = k.next.fetch_add(1, Ordering::Relaxed);
        let (env, epoch, seq) = if n < a.opts.rotate_after_messages {
            let seq = (u64::from(k.stream) << COUNTER_BITS) | n;
            let header = NatsHeader { priority, epoch: k.epoch, seq }.encode();
            self.aad[..header.len()].copy_from_slice(&header);
            (k.seal(seq, priority, &header, &self.aad, payload)?, k.epoch, seq)
        } else {
            let r = Box::pin(a.seal_fetching(&self.subject, payload, priority, None)).await?;
            if let Some(k) = a.send_key_cached(&self.subject)? {
                self.key = k;
            }
            r
        };
        if let Some(mut g) = guard {
            if !g.chain.accepts(epoch, seq) {
                a.emit_checkpoint(&self.subject, &mut g).await?;
            }
            let first = g.chain.pending() == 0;
            g.chain.push(epoch, seq, "", &env);
            a.client.publish(self.nats_subject.clone(), env.into()).await.map_err(transport)?;
            a.counters.published.fetch_add(1, Ordering::Relaxed);
            if g.chain.full(&g.cfg) {
                a.emit_checkpoint(&self.subject, &mut g).await?;
            } else if first {
                a.timer_wake.notify_one();
            }
            return Ok(());
        }
        a.client.publish(self.nats_subject.clone(), env.into()).await.map_err(transport)?;
        a.counters.published.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}
