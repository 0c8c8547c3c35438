//! The broker's operations on its tables: counting failures, topic keys and their rotation, granting
//! sender keys, authenticating and accepting published envelopes (replay windows, per-key message counts), and
//! routing an accepted message to the matching subscriptions, one by one, through delivery streams, through
//! lanes, or as a batch.

use super::config::{Backpressure, lock};
use super::state::{
    COUNTER_BITS, Enq, Inner, LaneSlot, MAX_PUBLISHERS, Outgoing, Route, SenderSlot, SlotKey, SubLink, SubShared,
    Tally, TopicKeys, TopicState, derive_send_key,
};
use crate::envelope::{self, Kind, TAG_LEN};
use crate::identity::AgentId;
use crate::queue::Priority;
use crate::subject::{matches, validate_subject};
use crate::window::Window;
use crate::{Error, Result};
use pqkit::aead::{Aead, Aes256Gcm};
use std::future::poll_fn;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Instant;

impl Inner {
    pub(super) fn count(&self, e: &Error) {
        let c = &self.counters;
        let a = match e {
            Error::Malformed { .. } | Error::PayloadTooLarge { .. } => &c.malformed,
            Error::AuthFailed => &c.auth_failed,
            Error::Replayed { .. } => &c.replayed,
            Error::Expired { .. } => &c.expired,
            Error::UnknownKey => &c.unknown_key,
            Error::Unauthorised { .. } => &c.unauthorised,
            _ => return,
        };
        a.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn counted<T>(&self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            self.count(e);
        }
        r
    }

    pub(super) fn topic(&self, name: &str) -> Result<Arc<TopicState>> {
        let mut t = lock(&self.topics);
        if let Some(s) = t.get(name) {
            return Ok(s.clone());
        }
        let name: Arc<str> = Arc::from(name);
        let s = Arc::new(TopicState {
            name: name.clone(),
            epoch: AtomicU32::new(1),
            keys: Mutex::new(TopicKeys { epoch: 1, secret: self.random::<32>(), started: Instant::now() }),
        });
        t.insert(name, s.clone());
        Ok(s)
    }

    /// Advances a topic to a fresh epoch secret if it is still at `from` (the old secret is zeroized on drop).
    pub(super) fn rotate_topic(&self, t: &TopicState, from: u32) {
        let mut k = lock(&t.keys);
        // At the last epoch number (2^32 rotations) the key stays: numbers never wrap back to an erased epoch.
        if k.epoch == from && from < u32::MAX {
            *k = TopicKeys { epoch: from + 1, secret: self.random::<32>(), started: Instant::now() };
            t.epoch.store(from + 1, Ordering::Release);
        }
    }

    /// Authorises `sender` on `topic` and returns the broker's slot and (sealed mode) the sealed sender-key grant.
    pub(super) fn grant_send(&self, sender: AgentId, topic: &str) -> Result<(Arc<SenderSlot>, Option<Vec<u8>>)> {
        validate_subject(topic)?;
        if !self.policy.may_publish(&sender, topic) {
            return self.counted(Err(Error::Unauthorised { action: "publish", subject: topic.into() }));
        }
        let ts = self.topic(topic)?;
        let slot = {
            let mut slots = lock(&self.slots);
            slots
                .entry((sender, ts.name.clone()))
                .or_insert_with(|| {
                    Arc::new(SenderSlot {
                        topic: ts.clone(),
                        published: AtomicU64::new(0),
                        handles: Mutex::new(Vec::new()),
                        keys: Mutex::new(Vec::new()),
                    })
                })
                .clone()
        };
        if !self.sealed {
            return Ok((slot, None));
        }
        let session = lock(&self.sessions).get(&sender).cloned().ok_or(Error::UnknownKey)?;
        let (epoch, key) = {
            let mut k = lock(&ts.keys);
            if k.started.elapsed() >= self.rotate_age {
                let e = k.epoch;
                drop(k);
                self.rotate_topic(&ts, e);
                k = lock(&ts.keys);
            }
            (k.epoch, derive_send_key(&k.secret, topic, &sender, &session.conn)?)
        };
        {
            let mut keys = lock(&slot.keys);
            // A second grant in the same epoch (another publisher handle) derives the same key: the slot key,
            // its replay windows and its counters are kept, never reset (a reset would let the envelopes
            // already accepted under this epoch be replayed).
            keys.retain(|k| k.epoch.saturating_add(1) >= epoch);
            if !keys.iter().any(|k| k.epoch == epoch) {
                keys.push(SlotKey {
                    epoch,
                    aead: Aes256Gcm::new(key.as_ref())?,
                    windows: Vec::new(),
                    count: 0,
                    started: Instant::now(),
                });
            }
            keys.sort_by_key(|k| k.epoch);
            while keys.len() > 2 {
                keys.remove(0);
            }
        }
        let g = self.seal_grant(&session, 1, 0, epoch, &key)?;
        Ok((slot, Some(g)))
    }

    /// The broker's check of a sealed publish envelope in `buf` (header already parsed into `m`): key by
    /// epoch, replay window, tag; decrypts in place. Counts rejections.
    pub(super) fn accept(&self, slot: &SenderSlot, m: &envelope::Meta, buf: &mut [u8]) -> Result<()> {
        let r = self.accept_inner(slot, m, buf);
        self.counted(r)
    }

    pub(super) fn accept_inner(&self, slot: &SenderSlot, m: &envelope::Meta, buf: &mut [u8]) -> Result<()> {
        let rotate_from;
        {
            let mut keys = lock(&slot.keys);
            let oldest = keys.first().map(|k| k.epoch).ok_or(Error::UnknownKey)?;
            let Some(k) = keys.iter_mut().find(|k| k.epoch == m.epoch) else {
                return Err(if m.epoch < oldest { Error::Expired { epoch: m.epoch } } else { Error::UnknownKey });
            };
            let stream = (m.seq >> COUNTER_BITS) as usize;
            if stream >= MAX_PUBLISHERS {
                return Err(Error::Malformed { reason: "sequence stream out of range" });
            }
            if let Some(w) = k.windows.get(stream) {
                w.check(m.seq)?;
            }
            let aad_len = m.aad_len();
            let (aad, rest) = buf.split_at_mut(aad_len);
            let (body, tag) = rest.split_at_mut(rest.len() - TAG_LEN);
            let nonce = envelope::nonce(Kind::Publish, m.priority, m.seq);
            k.aead.open_in_place_detached(&nonce, aad, body, tag).map_err(|_| Error::AuthFailed)?;
            if k.windows.len() <= stream {
                k.windows.resize(stream + 1, Window::default());
            }
            k.windows[stream].commit(m.seq);
            rotate_from = self.count_sent(slot, k);
        }
        if let Some(e) = rotate_from {
            self.rotate_topic(&slot.topic, e);
        }
        Ok(())
    }

    /// Counts one message against the sender key `k` of `slot` (called with `slot.keys` held); returns the epoch
    /// to rotate from when the count or the age is due.
    #[inline]
    pub(super) fn count_sent(&self, slot: &SenderSlot, k: &mut SlotKey) -> Option<u32> {
        k.count += 1;
        let due = k.count >= self.rotate_msgs || (k.count & 1023 == 0 && k.started.elapsed() >= self.rotate_age);
        // In sealed mode every writer of `published` holds `slot.keys`: a plain store, no read-modify-write.
        slot.published.store(slot.published.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        due.then_some(k.epoch)
    }

    /// Broker side of a local sealed publish (a method call on the agent's handle, docs/bus.md §3 "Local
    /// publishes"): no envelope to open; the sender's grant for `epoch` must still be held (current or previous
    /// epoch, else `Expired` / `UnknownKey`), and the message counts towards rotation.
    pub(super) fn accept_local(&self, slot: &SenderSlot, epoch: u32) -> Result<()> {
        let rotate_from;
        {
            let mut keys = lock(&slot.keys);
            let oldest = keys.first().map(|k| k.epoch).ok_or(Error::UnknownKey)?;
            let Some(k) = keys.iter_mut().find(|k| k.epoch == epoch) else {
                return Err(if epoch < oldest { Error::Expired { epoch } } else { Error::UnknownKey });
            };
            rotate_from = self.count_sent(slot, k);
        }
        if let Some(e) = rotate_from {
            self.rotate_topic(&slot.topic, e);
        }
        Ok(())
    }

    pub(super) fn matching(&self, topic: &str) -> Arc<[Arc<SubShared>]> {
        let subs = self.subs.read().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<Arc<SubShared>> =
            subs.values().filter(|s| matches(s.pattern.as_str(), topic)).cloned().collect();
        v.sort_by_key(|s| s.id);
        v.into()
    }

    /// Routes a plaintext to every subscription in `subs`, blocking on `Block` queues.
    pub(super) fn route(&self, subs: &[Arc<SubShared>], out: &Outgoing<'_>) -> Result<usize> {
        let mut t = Tally::default();
        for s in subs {
            t.add(s.enqueue_waiting(lock(&s.state), self, out).1);
        }
        t.result(&out.route.topic)
    }

    /// [`route`](Self::route) for a sealed publisher handle: each delivery is sealed on this thread under the
    /// handle's own stream of the subscription's key (`streams[i]` for `subs[i]`), outside the queue lock
    /// (docs/bus.md §3, "Delivery streams").
    pub(super) fn route_streams(
        &self,
        subs: &[Arc<SubShared>],
        links: &mut [SubLink],
        out: &Outgoing<'_>,
    ) -> Result<usize> {
        let mut t = Tally::default();
        for (s, link) in subs.iter().zip(links.iter_mut()) {
            if matches!(link.lane, LaneSlot::None) {
                link.lane = s.new_lane();
            }
            t.add(s.lane_enqueue_sealed(self, link, out));
        }
        t.result(&out.route.topic)
    }

    /// [`route`](Self::route) for a plain publisher handle: each delivery goes into the handle's lane of the
    /// subscription (`links[i]` for `subs[i]`; docs/bus.md §6), under the lane's lock only.
    #[inline(always)]
    pub(super) fn route_lanes(
        &self,
        subs: &[Arc<SubShared>],
        links: &mut [SubLink],
        out: &Outgoing<'_>,
    ) -> Result<usize> {
        let mut t = Tally::default();
        for (s, link) in subs.iter().zip(links.iter_mut()) {
            let r = match &link.lane {
                LaneSlot::Lane(lane) => s.lane_enqueue_plain(self, lane, out),
                LaneSlot::Main => s.enqueue_locked(self, out),
                LaneSlot::None => {
                    link.lane = s.new_lane();
                    match &link.lane {
                        LaneSlot::Lane(lane) => s.lane_enqueue_plain(self, lane, out),
                        _ => s.enqueue_locked(self, out),
                    }
                }
            };
            t.add(r);
        }
        t.result(&out.route.topic)
    }

    /// [`route`](Self::route) for a batch of plain messages of one route and priority: each subscription's
    /// lock is taken once for the whole batch (released only while a `Block` queue waits for room).
    pub(super) fn route_batch<P: AsRef<[u8]>>(
        &self,
        subs: &[Arc<SubShared>],
        route: &Arc<Route>,
        priority: Priority,
        payloads: &[P],
    ) -> Result<usize> {
        let mut t = Tally::default();
        for s in subs {
            let mut st = lock(&s.state);
            for p in payloads {
                let out = Outgoing { priority, route, payload: p.as_ref() };
                let r;
                (st, r) = s.enqueue_waiting(st, self, &out);
                t.add(r);
            }
        }
        t.result(&route.topic)
    }

    /// [`route`](Self::route) for async publishers: waits on `Block` queues without blocking the thread.
    pub(super) async fn route_async(&self, subs: &[Arc<SubShared>], out: &Outgoing<'_>) -> Result<usize> {
        let mut t = Tally::default();
        for s in subs {
            let r = poll_fn(|cx| {
                let mut st = lock(&s.state);
                match s.try_enqueue(&mut st, self, out) {
                    Enq::Full if s.backpressure == Backpressure::Block => {
                        st.send_wakers.push(cx.waker().clone());
                        Poll::Pending
                    }
                    r => Poll::Ready(r),
                }
            })
            .await;
            t.add(r);
        }
        t.result(&out.route.topic)
    }

    pub(super) fn ingest(&self, bytes: &[u8]) -> Result<usize> {
        let m = self.counted(envelope::parse(bytes))?;
        let want = if self.sealed { Kind::Publish } else { Kind::Plain };
        if m.kind != want {
            return self.counted(Err(Error::Malformed { reason: "wrong envelope kind for this bus" }));
        }
        let topic = std::str::from_utf8(&bytes[m.topic.clone()]).map_err(|_| Error::Malformed { reason: "topic" })?;
        let reply = std::str::from_utf8(&bytes[m.reply.clone()]).map_err(|_| Error::Malformed { reason: "reply" })?;
        let mut buf = bytes.to_vec();
        if self.sealed {
            let slot = lock(&self.slots).get(&(m.sender, Arc::<str>::from(topic))).cloned();
            let Some(slot) = slot else { return self.counted(Err(Error::UnknownKey)) };
            self.accept(&slot, &m, &mut buf)?;
        } else {
            if !self.policy.may_publish(&m.sender, topic) {
                return self.counted(Err(Error::Unauthorised { action: "publish", subject: topic.into() }));
            }
            if let Some(slot) = lock(&self.slots).get(&(m.sender, Arc::<str>::from(topic))) {
                slot.published.fetch_add(1, Ordering::Relaxed);
            }
        }
        let route = Arc::new(Route {
            topic: Arc::from(topic),
            sender: m.sender,
            reply: (!reply.is_empty()).then(|| reply.into()),
        });
        let subs = self.matching(topic);
        let out = Outgoing { priority: m.priority, route: &route, payload: &buf[m.payload.clone()] };
        self.route(&subs, &out)
    }
}
