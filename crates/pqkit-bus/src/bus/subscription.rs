//! The [`Subscription`] handle: taking messages from the subscription's queue (one, a batch, with a
//! timeout, or async), opening sealed ones, and unsubscribing on drop.

use super::config::lock;
use super::message::{KeyRing, Message, MessageRef, open_body};
use super::session::{AgentSession, open_grant};
use super::state::{Body, Inner, Lane, Route, SubShared, SubState, live_add_n};
use crate::envelope::{self, Header, Kind};
use crate::queue::{Batch, Meta};
use crate::{Error, Result};
use pqkit::aead::Aes256Gcm;
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::{Duration, Instant};

/// A subscription. Dropping it unsubscribes.
pub struct Subscription {
    pub(super) inner: Arc<Inner>,
    pub(super) shared: Arc<SubShared>,
    pub(super) session: Option<Arc<AgentSession>>,
    pub(super) ring: Option<KeyRing>,
    /// Messages taken from the queue under its lock, read (and opened in place) after it is released.
    pub(super) batch: Batch<Route>,
    /// The lane the batch was last taken from directly (by swapping its buffers): once the batch is handed
    /// over, its emptied buffers go back to that lane, so the publisher's next messages land in memory the
    /// subscriber has just read (warm) instead of in the batch's previous buffers, last touched two rounds
    /// earlier (sealed fan-out to 100 subscriptions: twice the L2 between two writes of a buffer, docs/bus.md §8,
    /// "Lanes, turns and buffer reuse").
    pub(super) back: Option<Arc<Lane>>,
    pub(super) done: bool,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.shared.id)
            .field("pattern", &self.shared.pattern.as_str())
            .finish()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.close();
    }
}

impl Subscription {
    /// The subscription id.
    pub fn id(&self) -> u64 {
        self.shared.id
    }
    /// The pattern.
    pub fn pattern(&self) -> &str {
        self.shared.pattern.as_str()
    }
    /// Messages queued now (the publishers' lanes included).
    pub fn len(&self) -> usize {
        let mut st = lock(&self.shared.state);
        if !st.lanes.is_empty() {
            self.shared.merge_lanes(&mut st, false);
        }
        st.q.len()
    }
    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Messages dropped by `DropOldest` on this subscription.
    pub fn dropped(&self) -> u64 {
        lock(&self.shared.state).dropped
    }
    /// Messages refused by `Fail` on this subscription.
    pub fn refused(&self) -> u64 {
        lock(&self.shared.state).refused
    }

    pub(super) fn close(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let i = &self.inner;
        {
            let mut subs = i.subs.write().unwrap_or_else(|e| e.into_inner());
            subs.remove(&self.shared.id);
            i.bump_gen();
        }
        let (delivered, dropped, refused) = self.shared.close();
        let c = &i.counters;
        // Only this handle adds to `received` (once per batch), and it is out of the map now: a load will do.
        let received = self.shared.received.load(Ordering::Relaxed);
        for (a, n) in [
            (&c.retired_delivered, delivered),
            (&c.retired_dropped, dropped),
            (&c.retired_refused, refused),
            (&c.retired_received, received),
        ] {
            if n > 0 {
                a.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// Unsubscribes; queued messages are discarded, later receives give [`Error::Closed`].
    pub fn unsubscribe(mut self) {
        self.close();
    }

    /// Feeds one delivery envelope from a transport into this subscription's queue; it is checked when
    /// received (a forged, replayed or wrongly keyed one is then dropped and counted).
    pub fn inject(&self, envelope: &[u8]) -> Result<()> {
        let m = self.inner.counted(envelope::parse(envelope))?;
        let topic: Arc<str> = Arc::from(std::str::from_utf8(&envelope[m.topic.clone()]).unwrap_or("?"));
        let reply = std::str::from_utf8(&envelope[m.reply.clone()]).unwrap_or("");
        let route = Arc::new(Route { topic, sender: m.sender, reply: (!reply.is_empty()).then(|| reply.into()) });
        if m.sub != self.shared.id && m.kind == Kind::Deliver {
            return self.inner.counted(Err(Error::UnknownKey));
        }
        let meta = Meta { seq: m.seq, len: 0, route: 0, epoch: m.epoch, kind: m.kind };
        let mut st = lock(&self.shared.state);
        if st.closed {
            return Err(Error::Closed);
        }
        st.q.push(m.priority, meta, &route, &envelope[m.payload.start..]);
        Ok(())
    }

    /// Takes the next queued delivery envelope in its wire form without opening it: the hook a transport
    /// uses to carry deliveries to a remote subscriber (which feeds them to its [`inject`](Self::inject)).
    pub fn take_envelope(&mut self) -> Result<Option<Vec<u8>>> {
        if self.take(1)? == 0 {
            return Ok(None);
        }
        let sub = self.shared.id;
        let mut env = None;
        self.batch.for_each(|priority, m, r, body| {
            let h = Header {
                kind: m.kind,
                priority,
                epoch: m.epoch,
                seq: m.seq,
                sender: r.sender,
                sub: if m.kind == Kind::Deliver { sub } else { 0 },
                topic: &r.topic,
                reply: r.reply.as_deref().unwrap_or(""),
            };
            let mut v = Vec::with_capacity(h.len() + body.len());
            h.append(&mut v);
            v.extend_from_slice(body);
            env = Some(v);
        });
        self.batch.clear();
        self.give_back();
        Ok(env)
    }

    /// The batch is handed over and cleared: its buffers go back to the lane it was taken from directly, if
    /// any (see `back`). Releases that lane reference either way, so no stale one outlives the hand-over (a
    /// lane's reference count tells whether its publisher handle is gone).
    pub(super) fn give_back(&mut self) {
        if let Some(lane) = self.back.take() {
            let mut ls = lock(&lane.st);
            if !ls.closed {
                ls.q.give_back(&mut self.batch);
            }
        }
    }

    pub(super) fn install_grants(&mut self, grants: Vec<Vec<u8>>, floor: Option<u32>) {
        let (Some(ring), Some(session)) = (self.ring.as_mut(), self.session.as_ref()) else { return };
        for g in grants {
            let Ok((kind, id, epoch, key)) = open_grant(session, &g) else {
                self.inner.count(&Error::AuthFailed);
                continue;
            };
            let newest = ring.keys.iter().map(|k| k.0).max().unwrap_or(0);
            if kind != 2 || id != self.shared.id || epoch <= newest {
                self.inner.count(&Error::Replayed { seq: epoch as u64 });
                continue;
            }
            let Ok(aead) = Aes256Gcm::new(key.as_ref()) else { continue };
            ring.keys.push((epoch, aead, Default::default()));
        }
        // Keep the newest key and every key a queued message still needs (normally the current and previous
        // epoch); older keys are dropped, which zeroizes them.
        let newest = ring.keys.iter().map(|k| k.0).max().unwrap_or(0);
        let keep_from = floor.unwrap_or(newest).min(newest.saturating_sub(1));
        ring.keys.retain(|k| k.0 >= keep_from);
    }

    /// Moves up to `max` queued messages into `self.batch` and installs pending grants, under one lock; wakes
    /// blocked publishers.
    pub(super) fn take(&mut self, max: usize) -> std::result::Result<usize, Error> {
        // Every hand-over releases it; a take never sees its own stale lane reference in the counts below.
        self.back = None;
        let mut st = lock(&self.shared.state);
        // The one lane to take from directly: the main queue is empty and no other lane holds messages.
        let mut direct = None;
        // Whether `direct` is the lane whose turn it is (several lanes busy).
        let mut turn = false;
        if !st.lanes.is_empty() {
            if st.q.is_empty() {
                // A lane whose handle is gone is left to `merge_lanes`, which frees it; while one holds messages
                // there is no direct take, so that its epochs count in the floor below (a key its messages need
                // is not erased by grants installed after this take).
                let mut busy = st.lanes.iter().filter(|l| !lock(&l.st).q.is_empty());
                if let (Some(l), None) = (busy.next(), busy.next()) {
                    if Arc::strong_count(l) > 1 {
                        direct = Some(l.clone());
                    }
                } else {
                    direct = Self::lane_turn(&mut st);
                    turn = direct.is_some();
                }
            }
            if direct.is_none() {
                // The publishers' lanes first (docs/bus.md §6): order and aging are then those of one queue,
                // and the oldest epoch below covers every queued message.
                self.shared.merge_lanes(&mut st, false);
            }
        }
        let (floor, n) = if let Some(lane) = direct {
            // Taking from the lane with the main queue's aging state gives exactly what merging it into the
            // empty main queue and taking would (the same levels in the same order), without a third set of
            // buffers cycling between lane, main queue and batch. Its epochs join the main queue's first.
            let mut ls = lock(&lane.st);
            ls.wake = st.recv_waiters > 0 || st.waker.is_some();
            SubShared::fold(&mut st, &mut ls);
            for (e, c) in ls.live.drain(..) {
                live_add_n(&mut st.live, e, c);
            }
            let floor = st.live.front().map(|x| x.0);
            let n = ls.q.take_aged(&mut self.batch, max, &mut st.q.skips);
            st.lane_held -= n;
            if n > 0 {
                self.back = Some(lane.clone());
            }
            if turn {
                st.turn_left = st.turn_left.saturating_sub(n);
                if st.turn_left == 0 || ls.q.is_empty() {
                    st.turn_left = 0;
                    st.lane_turn += 1;
                }
            }
            drop(ls);
            if st.lanes.iter().any(|l| Arc::strong_count(l) == 1) {
                // Lanes of dropped handles: freed now (the taken messages are out already; anything left in
                // the lane goes to the main queue, in order).
                self.shared.merge_lanes(&mut st, false);
            }
            (floor, n)
        } else {
            if st.q.is_empty() && st.closed {
                self.batch.clear();
                return Err(Error::Closed);
            }
            // The oldest delivery epoch still needed: by this batch or by anything left queued.
            let floor = st.live.front().map(|x| x.0);
            (floor, st.q.take(&mut self.batch, max))
        };
        if !st.live.is_empty() {
            // Count the taken deliveries off their epochs, one run of equal epochs at a time (the counts do not
            // depend on the order).
            let mut run: Option<(u32, u64)> = None;
            for x in self.batch.metas().filter(|x| x.kind == Kind::Deliver) {
                match run.as_mut() {
                    Some((e, c)) if *e == x.epoch => *c += 1,
                    _ => {
                        if let Some((e, c)) = run.take() {
                            st.live_sub(e, c);
                        }
                        run = Some((x.epoch, 1));
                    }
                }
            }
            if let Some((e, c)) = run {
                st.live_sub(e, c);
            }
        }
        let grants = std::mem::take(&mut st.grants);
        if n > 0 {
            if st.send_waiters > 0 {
                self.shared.not_full.notify_all();
            }
            for w in st.send_wakers.drain(..) {
                w.wake();
            }
        }
        drop(st);
        if !grants.is_empty() {
            self.install_grants(grants, floor);
        }
        Ok(n)
    }

    /// Several live lanes hold messages and the main queue is empty: when every one of them holds messages of
    /// one and the same level only, the lane whose turn it is (round robin from `lane_turn`) to take from
    /// directly instead of merging them all (which copies every lane after the first into the main queue).
    /// Any order of whole lanes is an order the merge could give: one level (no aging between levels), FIFO
    /// within each lane, and no order across handles promised (docs/bus.md §8, "Lanes, turns and buffer reuse"). The
    /// busy lanes' counts and epochs are folded into the subscription first, so the oldest queued epoch covers them
    /// all.
    pub(super) fn lane_turn(st: &mut SubState) -> Option<Arc<Lane>> {
        let mut level = None;
        let mut busy = 0;
        for lane in &st.lanes {
            let ls = lock(&lane.st);
            if ls.q.is_empty() {
                continue;
            }
            // A lane whose handle is gone is left to `merge_lanes` (which frees it), and with it this take.
            if Arc::strong_count(lane) == 1 {
                return None;
            }
            let l = ls.q.single_level()?;
            if level.is_some_and(|x| x != l) {
                return None;
            }
            level = Some(l);
            busy += 1;
        }
        if busy < 2 {
            return None;
        }
        let n = st.lanes.len();
        let mut pick = None;
        for k in 0..n {
            let i = (st.lane_turn + k) % n;
            let lane = st.lanes[i].clone();
            let mut ls = lock(&lane.st);
            if ls.q.is_empty() {
                continue;
            }
            SubShared::fold(st, &mut ls);
            for (e, c) in ls.live.drain(..) {
                live_add_n(&mut st.live, e, c);
            }
            if pick.is_none() {
                // A turn lasts for the messages the lane held when it began (a lane filled as fast as it is
                // taken cannot keep the others waiting), or until the lane is empty.
                if i != st.lane_turn || st.turn_left == 0 {
                    st.turn_left = ls.q.len();
                }
                st.lane_turn = i;
                drop(ls);
                pick = Some(lane);
            }
        }
        pick
    }

    /// Opens the taken batch's messages in place (sealed subscriptions) and hands each valid one to `f` in
    /// delivery order, with its shared route; rejected ones are counted and skipped. Empties the batch and
    /// returns how many reached `f` (also added to the `received` metric).
    #[inline]
    pub(super) fn hand_over(&mut self, mut f: impl FnMut(MessageRef<'_>, &Arc<Route>, &Meta)) -> usize {
        let Subscription { inner, shared, ring, batch, .. } = self;
        let sub = shared.id;
        let mut n = 0;
        batch.for_each(|priority, m, route, body| {
            if let Ok(len) = inner.counted(open_body(ring.as_mut(), sub, priority, m, route, body)) {
                n += 1;
                f(MessageRef { route, priority, seq: m.seq, payload: &body[..len] }, route, m);
            }
        });
        batch.clear();
        shared.received.fetch_add(n as u64, Ordering::Relaxed);
        self.give_back();
        n
    }

    /// Receives up to `max` messages without waiting, appending them to `out`; returns how many were
    /// appended (0 if none are queued; rejected envelopes are dropped and counted). One lock per batch; the
    /// messages are opened in place in the subscription's batch buffer, then copied into owned [`Message`]s
    /// ([`drain`](Self::drain) skips that copy).
    pub fn recv_batch(&mut self, out: &mut Vec<Message>, max: usize) -> Result<usize> {
        let n = self.take(max)?;
        let start = out.len();
        let mut w = start;
        let got = self.hand_over(|r, route, _| {
            if w == out.len() {
                // Room for the whole batch at once, as clones of this message's record: each message is then
                // written where it lies (fields and body in place) instead of being built on the stack and
                // moved, whose reload stalls on store forwarding; the clones share this route's count.
                let head = Message { route: route.clone(), priority: r.priority, seq: r.seq, body: Body::EMPTY };
                out.resize(start + n, head);
            }
            let Some(m) = out.get_mut(w) else { return };
            if !Arc::ptr_eq(&m.route, route) {
                m.route = route.clone();
            }
            m.priority = r.priority;
            m.seq = r.seq;
            m.body.set(r.payload);
            w += 1;
        });
        // Rejected (counted) envelopes leave their room unused.
        out.truncate(w);
        Ok(got)
    }

    /// Receives up to `max` messages without waiting and without copying them: calls `f` with each, in
    /// delivery order, as a [`MessageRef`] borrowing the subscription's buffer (sealed messages are checked
    /// and opened in place there; rejected ones are dropped and counted, never passed to `f`). Returns how
    /// many reached `f` (0 if none are queued). The queue's lock is taken once and released before `f` runs,
    /// so `f` may publish, even to this subscription's subjects. The fastest receive of the bus: no record,
    /// no reference count and no allocation per message.
    pub fn drain(&mut self, max: usize, mut f: impl FnMut(MessageRef<'_>)) -> Result<usize> {
        self.take(max)?;
        Ok(self.hand_over(|r, _, _| f(r)))
    }

    /// Receives one message without waiting.
    pub fn try_recv(&mut self) -> Result<Option<Message>> {
        loop {
            if self.take(1)? == 0 {
                return Ok(None);
            }
            let mut one = None;
            self.hand_over(|r, route, _| {
                one = Some(Message {
                    route: route.clone(),
                    priority: r.priority,
                    seq: r.seq,
                    body: Body::from_slice(r.payload, 0),
                })
            });
            if one.is_some() {
                return Ok(one);
            }
        }
    }

    /// Waits for one message.
    pub fn recv(&mut self) -> Result<Message> {
        self.recv_deadline(None)
    }

    /// Waits up to `timeout` for one message ([`Error::Timeout`] after).
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Message> {
        self.recv_deadline(Some(Instant::now() + timeout))
    }

    pub(super) fn recv_deadline(&mut self, deadline: Option<Instant>) -> Result<Message> {
        loop {
            if let Some(m) = self.try_recv()? {
                return Ok(m);
            }
            let sh = &self.shared;
            let mut st = lock(&sh.state);
            // Each lane's `wake` is armed as it is looked at (docs/bus.md §6, "Wake-ups").
            st.recv_waiters += 1;
            loop {
                if !st.lanes.is_empty() {
                    sh.merge_lanes(&mut st, true);
                }
                if !st.q.is_empty() || st.closed || !st.grants.is_empty() {
                    break;
                }
                st = match deadline {
                    None => sh.not_empty.wait(st).unwrap_or_else(|e| e.into_inner()),
                    Some(d) => {
                        let now = Instant::now();
                        if now >= d {
                            st.recv_waiters -= 1;
                            return Err(Error::Timeout);
                        }
                        sh.not_empty.wait_timeout(st, d - now).unwrap_or_else(|e| e.into_inner()).0
                    }
                };
            }
            st.recv_waiters -= 1;
        }
    }

    /// Waits for one message without blocking the thread (any async runtime).
    pub async fn recv_async(&mut self) -> Result<Message> {
        loop {
            if let Some(m) = self.try_recv()? {
                return Ok(m);
            }
            let shared = self.shared.clone();
            poll_fn(|cx| {
                let mut st = lock(&shared.state);
                // The lanes' `wake` is armed as they are looked at (docs/bus.md §6, "Wake-ups").
                if !st.lanes.is_empty() {
                    shared.merge_lanes(&mut st, true);
                }
                if !st.q.is_empty() || st.closed || !st.grants.is_empty() {
                    Poll::Ready(())
                } else {
                    st.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            })
            .await;
        }
    }
}
