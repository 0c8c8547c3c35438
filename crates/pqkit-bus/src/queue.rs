//! The per-subscription priority queue: four FIFO levels, highest first, with bounded starvation.
//!
//! Order: the highest non-empty level first, FIFO within a level. Aging (weighted draining): each delivery that
//! passes over a lower, non-empty level adds one to that level's skip counter; a level whose counter reaches
//! [`AGING_LIMIT`] is served next (the lowest such level first) and its counter resets. So the head of a
//! non-empty level leaves within `AGING_LIMIT + 3` deliveries, and its `k`-th message within
//! `k * (AGING_LIMIT + 3)`.

use crate::envelope::{Kind, TAG_LEN};
pub use crate::priority::{LEVELS, Priority};
use std::collections::VecDeque;
use std::sync::Arc;

/// Skips after which a passed-over level is served (see the module docs).
pub const AGING_LIMIT: u32 = 16;

/// A bounded-starvation priority queue of `T` (unbounded itself; the subscription enforces its capacity).
#[derive(Debug)]
pub struct PriorityQueue<T> {
    levels: [VecDeque<T>; LEVELS],
    skips: [u32; LEVELS],
    len: usize,
}

impl<T> Default for PriorityQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> PriorityQueue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        PriorityQueue { levels: Default::default(), skips: [0; LEVELS], len: 0 }
    }

    /// An empty queue with room for `n` messages per level before it reallocates.
    pub fn with_capacity(n: usize) -> Self {
        PriorityQueue { levels: std::array::from_fn(|_| VecDeque::with_capacity(n)), skips: [0; LEVELS], len: 0 }
    }

    /// Messages queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Messages queued at one level.
    pub fn len_at(&self, p: Priority) -> usize {
        self.levels[p as usize].len()
    }

    /// Appends at the back of level `p`.
    #[inline]
    pub fn push(&mut self, p: Priority, item: T) {
        self.levels[p as usize].push_back(item);
        self.len += 1;
    }

    /// The lowest non-empty level.
    pub fn lowest(&self) -> Option<Priority> {
        (0..LEVELS).find(|&l| !self.levels[l].is_empty()).map(|l| Priority::ALL[l])
    }

    /// Removes the oldest message of the lowest non-empty level (drop-oldest back-pressure).
    pub fn pop_lowest(&mut self) -> Option<(Priority, T)> {
        let l = self.lowest()? as usize;
        let item = self.levels[l].pop_front()?;
        self.len -= 1;
        if self.levels[l].is_empty() {
            self.skips[l] = 0;
        }
        Some((Priority::ALL[l], item))
    }

    /// Removes the next message in delivery order.
    #[inline]
    pub fn pop(&mut self) -> Option<(Priority, T)> {
        if self.len == 0 {
            return None;
        }
        let aged = (0..LEVELS).find(|&l| self.skips[l] >= AGING_LIMIT && !self.levels[l].is_empty());
        let l = match aged {
            Some(l) => l,
            None => (0..LEVELS).rev().find(|&l| !self.levels[l].is_empty())?,
        };
        let item = self.levels[l].pop_front()?;
        self.len -= 1;
        self.skips[l] = 0;
        for m in 0..l {
            if !self.levels[m].is_empty() {
                self.skips[m] += 1;
            }
        }
        Some((Priority::ALL[l], item))
    }
}

impl<T> PriorityQueue<T> {
    /// Moves up to `max` messages to the end of `out`, in exactly the order repeated [`pop`](Self::pop)
    /// calls would give, with the same aging; returns how many. Runs of one level are moved in bulk: while
    /// no lower level is due, the highest non-empty level is served `k` times in a row, where `k` is the
    /// smallest number of skips any non-empty lower level still has before it reaches [`AGING_LIMIT`].
    pub fn pop_batch(&mut self, out: &mut Vec<T>, max: usize) -> usize {
        // The whole queue is one level and fits in the batch, and `out` is empty: hand over the level's buffer
        // and keep `out`'s (no copy of the messages). With one non-empty level, `pop` would serve it `len`
        // times in a row and reset its skips; the empty levels' skips are left as they are, as `pop` leaves them.
        if out.is_empty()
            && self.len > 0
            && self.len <= max
            && let Some(h) = (0..LEVELS).find(|&l| self.levels[l].len() == self.len)
        {
            let n = self.len;
            let mine = std::mem::replace(&mut self.levels[h], VecDeque::from(std::mem::take(out)));
            *out = Vec::from(mine);
            self.len = 0;
            self.skips[h] = 0;
            return n;
        }
        let mut n = 0;
        while n < max && self.len > 0 {
            if let Some(l) = (0..LEVELS).find(|&l| self.skips[l] >= AGING_LIMIT && !self.levels[l].is_empty()) {
                // An aged level is served once, as `pop` does.
                let Some(item) = self.levels[l].pop_front() else { break };
                out.push(item);
                self.len -= 1;
                n += 1;
                self.skips[l] = 0;
                for m in 0..l {
                    if !self.levels[m].is_empty() {
                        self.skips[m] += 1;
                    }
                }
                continue;
            }
            let Some(h) = (0..LEVELS).rev().find(|&l| !self.levels[l].is_empty()) else { break };
            // Serves of `h` before some non-empty lower level reaches the limit (none is at it now).
            let budget = (0..h)
                .filter(|&m| !self.levels[m].is_empty())
                .map(|m| AGING_LIMIT.saturating_sub(self.skips[m]).max(1) as usize)
                .min()
                .unwrap_or(usize::MAX);
            let k = budget.min(self.levels[h].len()).min(max - n);
            out.extend(self.levels[h].drain(..k));
            self.len -= k;
            n += k;
            self.skips[h] = 0;
            for m in 0..h {
                if !self.levels[m].is_empty() {
                    self.skips[m] += k as u32;
                }
            }
        }
        n
    }
}

// ---------------------------------------------------------------------------------------------------------
// The subscription's message store: the same order and aging as `PriorityQueue`, in a compact layout.

/// Plans the next at most `max` deliveries of a queue whose levels hold `lens` messages, in exactly the order
/// and with exactly the aging of repeated [`PriorityQueue::pop`] calls: updates `lens` and `skips` and calls
/// `run(level, k)` for each run of `k` messages served from one level in a row; returns the number planned.
/// (The loop of [`PriorityQueue::pop_batch`] on lengths only.)
fn plan(lens: &mut [usize; LEVELS], skips: &mut [u32; LEVELS], max: usize, mut run: impl FnMut(usize, usize)) -> usize {
    let mut n = 0;
    let mut total: usize = lens.iter().sum();
    while n < max && total > 0 {
        if let Some(l) = (0..LEVELS).find(|&l| skips[l] >= AGING_LIMIT && lens[l] > 0) {
            // An aged level is served once, as `pop` does.
            run(l, 1);
            lens[l] -= 1;
            total -= 1;
            n += 1;
            skips[l] = 0;
            for m in 0..l {
                if lens[m] > 0 {
                    skips[m] += 1;
                }
            }
            continue;
        }
        let Some(h) = (0..LEVELS).rev().find(|&l| lens[l] > 0) else { break };
        // Serves of `h` before some non-empty lower level reaches the limit (none is at it now).
        let budget = (0..h)
            .filter(|&m| lens[m] > 0)
            .map(|m| AGING_LIMIT.saturating_sub(skips[m]).max(1) as usize)
            .min()
            .unwrap_or(usize::MAX);
        let k = budget.min(lens[h]).min(max - n);
        run(h, k);
        lens[h] -= k;
        total -= k;
        n += k;
        skips[h] = 0;
        for m in 0..h {
            if lens[m] > 0 {
                skips[m] += k as u32;
            }
        }
    }
    n
}

/// A level that has delivered this many messages from its front is compacted (its live part moved to the
/// start) once the delivered part is at least half of what it holds.
const COMPACT: usize = 1024;
/// A level's body buffer above this many bytes is released when the level empties (so one burst of large
/// payloads does not keep its memory for the subscription's lifetime).
const SHRINK_BYTES: usize = 4 << 20;

/// What the store keeps of one queued message besides its body: 24 bytes, no pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    /// Delivery sequence number (sealed), 0 for plain messages.
    pub(crate) seq: u64,
    /// Body length in bytes (payload, plus the tag when sealed).
    pub(crate) len: u32,
    /// Index into the store's route table.
    pub(crate) route: u32,
    /// Delivery key epoch (sealed), 0 for plain messages.
    pub(crate) epoch: u32,
    /// Envelope kind.
    pub(crate) kind: Kind,
}

/// One priority level: the metadata in arrival order and the bodies back to back in one byte buffer. The
/// front `head` entries (and `bhead` bytes) are already delivered.
#[derive(Debug, Default)]
pub(crate) struct Level {
    metas: Vec<Meta>,
    head: usize,
    bytes: Vec<u8>,
    bhead: usize,
}

impl Level {
    #[inline]
    fn len(&self) -> usize {
        self.metas.len() - self.head
    }

    fn clear(&mut self) {
        self.metas.clear();
        self.bytes.clear();
        self.head = 0;
        self.bhead = 0;
        if self.bytes.capacity() > SHRINK_BYTES {
            self.bytes = Vec::new();
        }
    }

    /// Moves the live part to the start when the delivered front is large (amortised O(1) per message).
    #[inline]
    fn compact_if_due(&mut self) {
        if self.head >= COMPACT && self.head * 2 >= self.metas.len() {
            self.metas.drain(..self.head);
            self.bytes.drain(..self.bhead);
            self.head = 0;
            self.bhead = 0;
        }
    }

    /// Removes the front message (its body is discarded).
    fn pop_front(&mut self) -> Option<Meta> {
        let m = *self.metas.get(self.head)?;
        self.head += 1;
        self.bhead += m.len as usize;
        if self.head == self.metas.len() {
            self.clear();
        }
        Some(m)
    }
}

/// A table of the routes (subject, sender, reply-to) of queued messages: each is held once, referenced by a
/// `u32` index from [`Meta::route`] with a count of the queued messages using it, and released (its `Arc`
/// dropped, its index reused) when the last of them leaves the queue.
#[derive(Debug)]
pub(crate) struct Routes<R> {
    slots: Vec<(Option<Arc<R>>, u32)>,
    free: Vec<u32>,
    /// The index interned last: a stream of messages of one route finds it with one pointer comparison.
    last: u32,
}

impl<R> Default for Routes<R> {
    fn default() -> Self {
        Routes { slots: Vec::new(), free: Vec::new(), last: 0 }
    }
}

impl<R: PartialEq> Routes<R> {
    /// The index of `r` with one more reference: the last route interned if it is the same (by pointer, then
    /// by value), else a free or new slot holding a clone of `r`.
    #[inline]
    pub(crate) fn intern(&mut self, r: &Arc<R>) -> u32 {
        if let Some((Some(a), n)) = self.slots.get_mut(self.last as usize)
            && (Arc::ptr_eq(a, r) || **a == **r)
        {
            *n += 1;
            return self.last;
        }
        self.intern_slow(r)
    }

    #[cold]
    fn intern_slow(&mut self, r: &Arc<R>) -> u32 {
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = (Some(r.clone()), 1);
                i
            }
            None => {
                self.slots.push((Some(r.clone()), 1));
                (self.slots.len() - 1) as u32
            }
        };
        self.last = i;
        i
    }

    /// Adds `n` references to slot `i` (in use).
    #[inline]
    fn add(&mut self, i: u32, n: u32) {
        if let Some(s) = self.slots.get_mut(i as usize) {
            s.1 += n;
        }
    }

    /// Drops `n` references of slot `i`; returns its route if that was the last (the slot is then free).
    pub(crate) fn release(&mut self, i: u32, n: u32) -> Option<Arc<R>> {
        let s = self.slots.get_mut(i as usize)?;
        s.1 = s.1.saturating_sub(n);
        if s.1 > 0 {
            return None;
        }
        let r = s.0.take();
        if r.is_some() {
            self.free.push(i);
        }
        r
    }

    /// The route of slot `i`, if it is in use.
    pub(crate) fn get(&self, i: u32) -> Option<&Arc<R>> {
        self.slots.get(i as usize).and_then(|s| s.0.as_ref())
    }

    /// Routes in use.
    #[cfg(test)]
    pub(crate) fn live(&self) -> usize {
        self.slots.iter().filter(|s| s.0.is_some()).count()
    }
}

/// The per-subscription store of queued messages: per priority level a metadata ring ([`Meta`], 24 bytes a
/// message) and a byte buffer holding the bodies back to back; one route table for all levels. Delivery order
/// and aging are exactly those of [`PriorityQueue`] (the same plan; a test compares them). A publish copies
/// the payload once, from the caller's slice into the level's byte buffer, and writes a 24-byte record;
/// nothing is allocated per message once the buffers have grown.
///
/// Memory: the store holds at most the subscription's capacity in messages (the subscription enforces it);
/// a level's buffers hold its queued messages plus a delivered front that is compacted away once it is at
/// least [`COMPACT`] messages and half of the level, so a level uses at most about twice its queued bytes
/// (plus the vectors' growth slack), and a byte buffer above [`SHRINK_BYTES`] is released when its level empties.
#[derive(Debug)]
pub(crate) struct MsgQueue<R> {
    levels: [Level; LEVELS],
    pub(crate) skips: [u32; LEVELS],
    len: usize,
    routes: Routes<R>,
}

impl<R> Default for MsgQueue<R> {
    fn default() -> Self {
        MsgQueue { levels: Default::default(), skips: [0; LEVELS], len: 0, routes: Routes::default() }
    }
}

impl<R: PartialEq> MsgQueue<R> {
    /// Messages queued.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The only non-empty level, if exactly one level holds messages.
    pub(crate) fn single_level(&self) -> Option<Priority> {
        let mut it = (0..LEVELS).filter(|&l| self.levels[l].len() > 0);
        match (it.next(), it.next()) {
            (Some(l), None) => Some(Priority::ALL[l]),
            _ => None,
        }
    }

    /// The lowest non-empty level.
    pub(crate) fn lowest(&self) -> Option<Priority> {
        (0..LEVELS).find(|&l| self.levels[l].len() > 0).map(|l| Priority::ALL[l])
    }

    /// Appends a message at the back of level `p`: its metadata (`meta.route` and `meta.len` are set here),
    /// its route (interned) and its body (copied).
    #[inline(always)]
    pub(crate) fn push(&mut self, p: Priority, mut meta: Meta, route: &Arc<R>, body: &[u8]) {
        let lv = &mut self.levels[p as usize];
        lv.compact_if_due();
        lv.bytes.extend_from_slice(body);
        meta.len = body.len() as u32;
        meta.route = self.routes.intern(route);
        lv.metas.push(meta);
        self.len += 1;
    }

    /// [`push`](Self::push) with a body that `seal` transforms in place and that gets `seal`'s tag appended;
    /// nothing is queued (and `false` returned) when `seal` fails.
    #[inline]
    pub(crate) fn push_sealed(
        &mut self,
        p: Priority,
        mut meta: Meta,
        route: &Arc<R>,
        payload: &[u8],
        seal: impl FnOnce(&mut [u8]) -> Option<[u8; TAG_LEN]>,
    ) -> bool {
        let lv = &mut self.levels[p as usize];
        lv.compact_if_due();
        let start = lv.bytes.len();
        lv.bytes.extend_from_slice(payload);
        let Some(tag) = seal(&mut lv.bytes[start..]) else {
            lv.bytes.truncate(start);
            return false;
        };
        lv.bytes.extend_from_slice(&tag);
        meta.len = (payload.len() + TAG_LEN) as u32;
        meta.route = self.routes.intern(route);
        lv.metas.push(meta);
        self.len += 1;
        true
    }

    /// Moves every message of `other` (a publisher's lane, docs/bus.md §6) to the back of this queue: per level,
    /// after this queue's messages of that level and in `other`'s order. A level empty here takes `other`'s
    /// buffers by a swap; otherwise the records and bodies are appended. The moved messages' routes are
    /// re-interned here and released in `other`; when this queue is empty, the levels and the route tables are
    /// swapped whole (no pass over the messages). `other` is left empty; its aging state is not used (a lane is
    /// never taken from) and this queue's is kept. Returns the number moved.
    pub(crate) fn append_from(&mut self, other: &mut MsgQueue<R>) -> usize {
        let moved = other.len;
        if moved == 0 {
            return 0;
        }
        if self.len == 0 {
            // Every level is empty here and every route released: take `other`'s store as it is.
            for lv in &mut self.levels {
                lv.clear();
            }
            std::mem::swap(&mut self.levels, &mut other.levels);
            std::mem::swap(&mut self.routes, &mut other.routes);
            self.len = moved;
            other.len = 0;
            other.skips = [0; LEVELS];
            return moved;
        }
        let MsgQueue { levels, routes, len, .. } = self;
        for (dst, src) in levels.iter_mut().zip(other.levels.iter_mut()) {
            if src.len() == 0 {
                continue;
            }
            let start = if dst.len() == 0 {
                dst.clear();
                std::mem::swap(dst, src);
                dst.head
            } else {
                dst.compact_if_due();
                let start = dst.metas.len();
                dst.metas.extend_from_slice(&src.metas[src.head..]);
                dst.bytes.extend_from_slice(&src.bytes[src.bhead..]);
                start
            };
            src.clear();
            // Re-intern the routes one run of equal routes at a time.
            let mut run: Option<(u32, u32, u32)> = None;
            for m in &mut dst.metas[start..] {
                match run.as_mut() {
                    Some((old, new, c)) if *old == m.route => {
                        m.route = *new;
                        *c += 1;
                    }
                    _ => {
                        if let Some((old, new, c)) = run.take() {
                            other.routes.release(old, c);
                            routes.add(new, c - 1);
                        }
                        let new = match other.routes.get(m.route) {
                            Some(r) => routes.intern(&r.clone()),
                            None => 0,
                        };
                        run = Some((m.route, new, 1));
                        m.route = new;
                    }
                }
            }
            if let Some((old, new, c)) = run {
                other.routes.release(old, c);
                routes.add(new, c - 1);
            }
        }
        *len += moved;
        other.len = 0;
        other.skips = [0; LEVELS];
        moved
    }

    /// Removes the oldest message of the lowest non-empty level (drop-oldest back-pressure); its route reference
    /// is released.
    pub(crate) fn pop_lowest(&mut self) -> Option<(Priority, Meta)> {
        let l = self.lowest()? as usize;
        let m = self.levels[l].pop_front()?;
        self.len -= 1;
        if self.levels[l].len() == 0 {
            self.skips[l] = 0;
        }
        self.routes.release(m.route, 1);
        Some((Priority::ALL[l], m))
    }

    /// Swaps the emptied buffers of `batch` (handed over and cleared) into every level of this queue that is
    /// empty: the buffers a take moved out come back to be written again while still warm. No message moves;
    /// levels holding messages keep their buffers.
    pub(crate) fn give_back(&mut self, batch: &mut Batch<R>) {
        for (q, b) in self.levels.iter_mut().zip(batch.levels.iter_mut()) {
            if q.len() == 0 && b.len() == 0 {
                q.clear();
                b.clear();
                std::mem::swap(q, b);
            }
        }
    }

    /// [`take`](Self::take) with the aging state `skips` (another queue's) instead of this queue's own: what
    /// merging this queue into an empty queue with those skips and taking from it would give.
    pub(crate) fn take_aged(&mut self, batch: &mut Batch<R>, max: usize, skips: &mut [u32; LEVELS]) -> usize {
        std::mem::swap(&mut self.skips, skips);
        let n = self.take(batch, max);
        std::mem::swap(&mut self.skips, skips);
        n
    }

    /// Moves up to `max` messages, in delivery order, into `batch` (emptied first); returns how many. A level
    /// taken whole is handed over by swapping buffers (no copy); a part of a level is copied. The batch gets
    /// the routes its messages use (moved out of the table when no queued message needs them any more).
    pub(crate) fn take(&mut self, batch: &mut Batch<R>, max: usize) -> usize {
        batch.clear();
        let mut lens = [0; LEVELS];
        for (n, lv) in lens.iter_mut().zip(&self.levels) {
            *n = lv.len();
        }
        let mut want = [0usize; LEVELS];
        let runs = &mut batch.runs;
        let n = plan(&mut lens, &mut self.skips, max, |l, k| {
            want[l] += k;
            match runs.last_mut() {
                Some((rl, rk)) if *rl as usize == l => *rk += k,
                _ => runs.push((l as u8, k)),
            }
        });
        for (l, &k) in want.iter().enumerate() {
            if k == 0 {
                continue;
            }
            let q = &mut self.levels[l];
            let b = &mut batch.levels[l];
            if k == q.len() {
                std::mem::swap(q, b);
            } else {
                let ms = &q.metas[q.head..q.head + k];
                let nb: usize = ms.iter().map(|m| m.len as usize).sum();
                b.metas.extend_from_slice(ms);
                b.bytes.extend_from_slice(&q.bytes[q.bhead..q.bhead + nb]);
                q.head += k;
                q.bhead += nb;
            }
            // Route references of the taken messages, one run of equal routes at a time.
            let mut run: Option<(u32, u32)> = None;
            for m in &b.metas[b.head..] {
                match run.as_mut() {
                    Some((r, c)) if *r == m.route => *c += 1,
                    _ => {
                        if let Some((r, c)) = run.take() {
                            batch.routes.keep(&mut self.routes, r, c);
                        }
                        run = Some((m.route, 1));
                    }
                }
            }
            if let Some((r, c)) = run {
                batch.routes.keep(&mut self.routes, r, c);
            }
        }
        self.len -= n;
        n
    }
}

/// The routes a [`Batch`] refers to, by the table's indices at the time it was taken.
#[derive(Debug)]
pub(crate) struct BatchRoutes<R> {
    by_index: Vec<Option<Arc<R>>>,
}

impl<R> Default for BatchRoutes<R> {
    fn default() -> Self {
        BatchRoutes { by_index: Vec::new() }
    }
}

impl<R: PartialEq> BatchRoutes<R> {
    /// Releases `n` references of route `i` in `table`, keeping the route for the batch (moved when this was
    /// its last reference, else cloned once per batch).
    fn keep(&mut self, table: &mut Routes<R>, i: u32, n: u32) {
        let i_us = i as usize;
        if self.by_index.len() <= i_us {
            self.by_index.resize_with(i_us + 1, || None);
        }
        match table.release(i, n) {
            Some(r) => self.by_index[i_us] = Some(r),
            None => {
                if self.by_index[i_us].is_none() {
                    self.by_index[i_us] = table.get(i).cloned();
                }
            }
        }
    }
}

/// Messages taken out of a [`MsgQueue`] under its lock, read and opened in place after the lock is released.
#[derive(Debug)]
pub(crate) struct Batch<R> {
    levels: [Level; LEVELS],
    /// (level, count) in delivery order.
    runs: Vec<(u8, usize)>,
    routes: BatchRoutes<R>,
}

impl<R> Default for Batch<R> {
    fn default() -> Self {
        Batch { levels: Default::default(), runs: Vec::new(), routes: BatchRoutes::default() }
    }
}

impl<R> Batch<R> {
    /// Empties the batch, keeping its buffers.
    pub(crate) fn clear(&mut self) {
        for lv in &mut self.levels {
            lv.clear();
        }
        self.runs.clear();
        self.routes.by_index.clear();
    }

    /// Messages held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.levels.iter().map(Level::len).sum()
    }

    /// Every message's metadata, level by level (not in delivery order).
    pub(crate) fn metas(&self) -> impl Iterator<Item = &Meta> {
        self.levels.iter().flat_map(|lv| &lv.metas[lv.head..])
    }

    /// Calls `f` with each message in delivery order: priority, metadata, route and body (mutable, to be
    /// opened in place).
    #[inline]
    pub(crate) fn for_each(&mut self, mut f: impl FnMut(Priority, &Meta, &Arc<R>, &mut [u8])) {
        let mut at = [(0usize, 0usize); LEVELS];
        for (l, lv) in self.levels.iter().enumerate() {
            at[l] = (lv.head, lv.bhead);
        }
        for &(l, k) in &self.runs {
            let l = l as usize;
            let lv = &mut self.levels[l];
            let (mut i, mut b) = at[l];
            let end = (i + k).min(lv.metas.len());
            let mut cached: Option<(u32, &Arc<R>)> = None;
            while i < end {
                let m = lv.metas[i];
                let e = b + m.len as usize;
                let route = match cached {
                    Some((ri, r)) if ri == m.route => Some(r),
                    _ => self.routes.by_index.get(m.route as usize).and_then(|r| r.as_ref()),
                };
                if let (Some(r), Some(body)) = (route, lv.bytes.get_mut(b..e)) {
                    cached = Some((m.route, r));
                    f(Priority::ALL[l], &m, r, body);
                }
                i += 1;
                b = e;
            }
            at[l] = (i, b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_then_fifo() {
        let mut q = PriorityQueue::new();
        q.push(Priority::Low, 1);
        q.push(Priority::High, 2);
        q.push(Priority::Normal, 3);
        q.push(Priority::High, 4);
        q.push(Priority::Critical, 5);
        let order: Vec<i32> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
        assert_eq!(order, [5, 2, 4, 3, 1]);
        assert!(q.is_empty());
    }

    #[test]
    fn starvation_is_bounded() {
        let mut q = PriorityQueue::new();
        q.push(Priority::Low, u32::MAX);
        for i in 0..1000 {
            q.push(Priority::Critical, i);
        }
        let pos = std::iter::from_fn(|| q.pop()).position(|(_, x)| x == u32::MAX).unwrap();
        assert!(pos as u32 <= AGING_LIMIT + 3, "low message waited {pos} deliveries");
        assert_eq!(pos as u32, AGING_LIMIT, "served exactly after AGING_LIMIT skips");
    }

    #[test]
    fn starvation_bound_all_levels() {
        // Every level loaded; each head must leave within AGING_LIMIT + 3 deliveries of the start.
        let mut q = PriorityQueue::new();
        for p in Priority::ALL {
            for i in 0..100u32 {
                q.push(p, (p as u32) * 1000 + i);
            }
        }
        let order: Vec<u32> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
        for p in 0..4u32 {
            let first = order.iter().position(|&x| x / 1000 == p).unwrap();
            assert!(first as u32 <= AGING_LIMIT + 3, "level {p} first served at {first}");
        }
        // FIFO within each level.
        for p in 0..4u32 {
            let lv: Vec<u32> = order.iter().copied().filter(|&x| x / 1000 == p).collect();
            assert!(lv.windows(2).all(|w| w[0] < w[1]));
        }
    }

    /// `pop_batch` gives exactly the order and aging state of repeated `pop`, for random pushes interleaved
    /// with batches of random sizes.
    #[test]
    fn pop_batch_equals_repeated_pop() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..300 {
            let (mut a, mut b) = (PriorityQueue::new(), PriorityQueue::new());
            let mut next = 0u32;
            // Some rounds use one level only (the whole-level hand-over of `pop_batch`).
            let one = rnd(3) == 0;
            let level = rnd(4) as usize;
            for _ in 0..20 {
                for _ in 0..rnd(60) {
                    let p = Priority::ALL[if one { level } else { rnd(4) as usize }];
                    a.push(p, next);
                    b.push(p, next);
                    next += 1;
                }
                let max = rnd(70) as usize;
                // `out` is appended to: sometimes it already holds messages (or only spare capacity).
                let pre = rnd(3) as u32;
                let mut got: Vec<u32> = Vec::with_capacity(rnd(100) as usize);
                got.extend((0..pre).map(|i| u32::MAX - i));
                let n = a.pop_batch(&mut got, max);
                let want: Vec<u32> = std::iter::from_fn(|| b.pop().map(|x| x.1)).take(max).collect();
                assert_eq!(n, got.len() - pre as usize);
                assert_eq!(got[..pre as usize], (0..pre).map(|i| u32::MAX - i).collect::<Vec<_>>()[..]);
                assert_eq!(got[pre as usize..], want[..]);
                assert_eq!((a.len(), a.skips), (b.len(), b.skips));
            }
        }
    }

    fn xorshift(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed;
        move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        }
    }

    fn meta() -> Meta {
        Meta { seq: 0, len: 0, route: 0, epoch: 0, kind: Kind::Plain }
    }

    /// A body that names its message: the id, then `id % 23` filler bytes (lengths vary, so a wrong offset
    /// into the byte buffer shows).
    fn body(id: u32) -> Vec<u8> {
        let mut b = id.to_le_bytes().to_vec();
        b.extend(std::iter::repeat_n(id as u8, (id % 23) as usize));
        b
    }

    /// Takes up to `max` from `q`; returns (priority, id) in delivery order, checking every body.
    fn take_ids(q: &mut MsgQueue<u32>, max: usize) -> Vec<(Priority, u32)> {
        let mut b = Batch::default();
        let n = q.take(&mut b, max);
        batch_ids(&mut b, n)
    }

    /// The `n` messages of a taken batch as (priority, id) in delivery order, checking every body.
    fn batch_ids(b: &mut Batch<u32>, n: usize) -> Vec<(Priority, u32)> {
        assert_eq!(b.len(), n);
        let mut got = Vec::new();
        b.for_each(|p, m, r, body_| {
            let id = u32::from_le_bytes(body_[..4].try_into().unwrap());
            assert_eq!(body_, &body(id)[..], "body of message {id}");
            assert_eq!(m.len as usize, body_.len());
            assert_eq!(**r, id % 3, "route of message {id}");
            got.push((p, id));
        });
        assert_eq!(got.len(), n);
        got
    }

    /// The compact store gives exactly the order, aging and drop-oldest choices of `PriorityQueue` (the
    /// reference: repeated `pop` / `pop_lowest`), for random pushes, drops and batches of random sizes; long
    /// runs make the levels compact (delivered fronts of over `COMPACT` messages) while messages are queued.
    #[test]
    fn msg_queue_equals_priority_queue() {
        let mut rnd = xorshift(0x2545_F491_4F6C_DD1D);
        let routes: Vec<Arc<u32>> = (0..3).map(Arc::new).collect();
        for round in 0..60 {
            let (mut a, mut b) = (MsgQueue::<u32>::default(), PriorityQueue::new());
            let mut next = 0u32;
            let one = rnd(3) == 0;
            let level = rnd(4) as usize;
            let big = round % 10 == 0;
            for _ in 0..30 {
                for _ in 0..rnd(if big { 3000 } else { 60 }) {
                    let p = Priority::ALL[if one { level } else { rnd(4) as usize }];
                    a.push(p, meta(), &routes[(next % 3) as usize], &body(next));
                    b.push(p, next);
                    next += 1;
                }
                if rnd(4) == 0 {
                    for _ in 0..rnd(5) {
                        let x = a.pop_lowest().map(|(p, _)| p);
                        assert_eq!(x, b.pop_lowest().map(|(p, _)| p));
                    }
                }
                let max = rnd(if big { 2500 } else { 70 }) as usize;
                let got = take_ids(&mut a, max);
                let want: Vec<(Priority, u32)> = std::iter::from_fn(|| b.pop()).take(max).collect();
                assert_eq!(got, want);
                assert_eq!((a.len(), a.skips), (b.len(), b.skips));
            }
            let rest = take_ids(&mut a, usize::MAX);
            assert_eq!(rest, std::iter::from_fn(|| b.pop()).collect::<Vec<_>>());
            assert_eq!(a.routes.live(), 0, "every route released once the queue is empty");
        }
    }

    /// Lanes merged into a main queue (docs/bus.md §6): P producers push into their own `MsgQueue`s, the
    /// main queue takes them in with `append_from` at random moments (and gets messages of its own, as the
    /// broker's stream 0 does), and takes batches of random sizes. The result equals `PriorityQueue` fed in
    /// the merged order (lane by lane at each merge); every producer's messages come out FIFO per level, and
    /// every route is released in lanes and main (both the whole swap into an empty main queue and the append).
    #[test]
    fn lanes_merged_equal_priority_queue() {
        let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
        let routes: Vec<Arc<u32>> = (0..3).map(Arc::new).collect();
        for round in 0..40 {
            let producers = 1 + rnd(5) as usize;
            let mut lanes: Vec<MsgQueue<u32>> = (0..producers).map(|_| MsgQueue::default()).collect();
            // What each lane holds, in push order, for the reference.
            let mut pending: Vec<Vec<(Priority, u32)>> = vec![Vec::new(); producers];
            let (mut main, mut reference) = (MsgQueue::<u32>::default(), PriorityQueue::new());
            let mut next = 0u32;
            let big = round % 8 == 0;
            let mut last_seen: std::collections::HashMap<(u32, Priority), u32> = Default::default();
            for _ in 0..25 {
                for _ in 0..rnd(if big { 2000 } else { 80 }) {
                    let k = rnd(producers as u64 + 1) as usize;
                    let p = Priority::ALL[rnd(4) as usize];
                    // id: the producer in the low 3 bits (k == producers: the main queue itself).
                    let id = (next << 3) | k as u32;
                    next += 1;
                    let m = Meta { seq: 0, len: 0, route: 0, epoch: id % 2, kind: Kind::Deliver };
                    if k == producers {
                        main.push(p, m, &routes[(id % 3) as usize], &body(id));
                        reference.push(p, id);
                    } else {
                        lanes[k].push(p, m, &routes[(id % 3) as usize], &body(id));
                        pending[k].push((p, id));
                    }
                }
                if rnd(3) != 0 {
                    for (lane, pend) in lanes.iter_mut().zip(pending.iter_mut()) {
                        let want = pend.len();
                        let n = main.append_from(lane);
                        assert_eq!(n, want);
                        for &(p, id) in pend.iter() {
                            reference.push(p, id);
                        }
                        pend.clear();
                        assert!(lane.is_empty());
                        assert_eq!(lane.routes.live(), 0, "a merged lane keeps no route");
                    }
                }
                let max = rnd(if big { 3000 } else { 90 }) as usize;
                let busy: Vec<usize> = (0..producers).filter(|&k| !lanes[k].is_empty()).collect();
                if main.is_empty() && busy.len() == 1 && rnd(2) == 0 {
                    // Taken straight from the one busy lane with the main queue's aging state (`take_aged`),
                    // as the subscription does: the same as merging it into the empty main queue first.
                    let k = busy[0];
                    for &(p, id) in &pending[k] {
                        reference.push(p, id);
                    }
                    pending[k].clear();
                    let mut b = Batch::default();
                    let n = lanes[k].take_aged(&mut b, max, &mut main.skips);
                    let got = batch_ids(&mut b, n);
                    let want: Vec<(Priority, u32)> = std::iter::from_fn(|| reference.pop()).take(max).collect();
                    assert_eq!(got, want, "take_aged from a lane");
                    // What is left in the lane is still pending (per level in order) for the reference, which
                    // keeps its own aging state: re-queue it there at the next merge or direct take.
                    let skips = reference.skips;
                    let rest: Vec<(Priority, u32)> = std::iter::from_fn(|| reference.pop()).collect();
                    assert_eq!(rest.len(), lanes[k].len());
                    reference = PriorityQueue::new();
                    reference.skips = skips;
                    assert_eq!(main.skips, skips, "aging state after a direct take");
                    pending[k] = rest;
                    continue;
                }
                let got = take_ids(&mut main, max);
                let want: Vec<(Priority, u32)> = std::iter::from_fn(|| reference.pop()).take(max).collect();
                assert_eq!(got, want);
                for (p, id) in got {
                    // FIFO per producer and level.
                    if let Some(prev) = last_seen.insert((id & 7, p), id) {
                        assert!(prev < id, "producer {} level {p:?}: {prev} after {id}", id & 7);
                    }
                }
                assert_eq!((main.len(), main.skips), (reference.len(), reference.skips));
            }
            for (lane, pend) in lanes.iter_mut().zip(pending.iter_mut()) {
                main.append_from(lane);
                for &(p, id) in pend.iter() {
                    reference.push(p, id);
                }
            }
            let rest = take_ids(&mut main, usize::MAX);
            assert_eq!(rest, std::iter::from_fn(|| reference.pop()).collect::<Vec<_>>());
            assert_eq!(main.routes.live(), 0);
        }
    }

    /// `take_aged` keeps the aging in the state it is given (the main queue's): a low message passed over in a
    /// direct take from a lane is served on time after the rest of the lane is merged into the main queue.
    #[test]
    fn take_aged_keeps_the_main_queues_aging() {
        let r = Arc::new(0u32);
        let (mut lane, mut main) = (MsgQueue::<u32>::default(), MsgQueue::<u32>::default());
        lane.push(Priority::Low, meta(), &r, &body(3));
        for i in 1..=40u32 {
            lane.push(Priority::Critical, meta(), &r, &body(i * 3));
        }
        let mut b = Batch::default();
        assert_eq!(lane.take_aged(&mut b, 10, &mut main.skips), 10);
        assert_eq!(main.skips[0], 10, "the low level was passed over 10 times");
        assert_eq!(main.append_from(&mut lane), 31);
        let mut got = Vec::new();
        main.take(&mut b, 10);
        b.for_each(|p, _, _, _| got.push(p));
        // 16 deliveries after it was first passed over, the low message is served (AGING_LIMIT).
        assert_eq!(got.iter().position(|&p| p == Priority::Low), Some(AGING_LIMIT as usize - 10));
    }

    /// `give_back` returns the batch's emptied buffers to the levels that are empty (the buffers a whole-level
    /// take swapped out come back to be written again) and leaves a level holding messages as it is.
    #[test]
    fn give_back_returns_buffers_to_empty_levels_only() {
        let r = Arc::new(0u32);
        let mut q = MsgQueue::<u32>::default();
        for i in 0..100 {
            q.push(Priority::Normal, meta(), &r, &body(i));
        }
        let mut b = Batch::default();
        assert_eq!(q.take(&mut b, 100), 100, "the whole level, by a swap");
        let taken = b.levels[1].bytes.as_ptr();
        assert!(q.levels[1].bytes.capacity() < 100, "the level has the batch's old (empty) buffers");
        b.for_each(|_, _, _, _| {});
        b.clear();
        // Meanwhile a message of another level arrived: that level keeps it.
        q.push(Priority::High, meta(), &r, &body(7));
        let high = q.levels[0].bytes.as_ptr();
        q.give_back(&mut b);
        assert_eq!(q.levels[1].bytes.as_ptr(), taken, "the taken buffers are back in their level");
        assert_eq!(q.levels[0].bytes.as_ptr(), high);
        assert_eq!(q.len(), 1);
        let mut got = Vec::new();
        assert_eq!(q.take(&mut b, 10), 1);
        b.for_each(|p, _, _, body| got.push((p, body.to_vec())));
        assert_eq!(got, vec![(Priority::High, body(7))]);
    }

    /// A level whose delivered front grows past `COMPACT` while messages stay queued moves its live part to the
    /// start (the byte buffer's "wrap-around"): bodies of different lengths keep their contents and order.
    #[test]
    fn level_compaction_keeps_bodies() {
        let r = Arc::new(0u32);
        let mut q = MsgQueue::<u32>::default();
        let mut next = 0u32;
        let mut expect = 0u32;
        for _ in 0..6 {
            for _ in 0..1500 {
                q.push(Priority::Normal, meta(), &r, &body(next * 3));
                next += 1;
            }
            let mut b = Batch::default();
            let n = q.take(&mut b, 1200);
            assert_eq!(n, 1200);
            b.for_each(|_, _, _, got| {
                assert_eq!(got, &body(expect * 3)[..]);
                expect += 1;
            });
            assert!(q.levels[1].head > 0 || q.levels[1].bhead == 0);
        }
        // The documented bound: a level holds at most twice its queued messages plus `COMPACT` delivered ones
        // (9,000 were pushed and 7,200 delivered).
        let held = q.levels[1].metas.len();
        assert!(held <= 2 * q.len() + COMPACT, "{held} entries kept for {} queued", q.len());
        assert_eq!(q.len(), 6 * 300);
        let mut b = Batch::default();
        q.take(&mut b, usize::MAX);
        b.for_each(|_, _, _, got| {
            assert_eq!(got, &body(expect * 3)[..]);
            expect += 1;
        });
        assert_eq!(expect, next);
    }

    #[test]
    fn msg_queue_per_level_order() {
        let r = Arc::new(0u32);
        let mut q = MsgQueue::<u32>::default();
        for (p, id) in [(0, 1), (2, 2), (1, 3), (2, 4), (3, 5), (0, 6), (1, 7)] {
            q.push(Priority::ALL[p], meta(), &r, &body(id));
        }
        let mut b = Batch::default();
        q.take(&mut b, 3);
        let mut got = Vec::new();
        b.for_each(|p, _, _, x| got.push((p as u8, x[0])));
        q.take(&mut b, 10);
        b.for_each(|p, _, _, x| got.push((p as u8, x[0])));
        assert_eq!(got, [(3, 5), (2, 2), (2, 4), (1, 3), (1, 7), (0, 1), (0, 6)]);
    }

    #[test]
    fn msg_queue_drop_oldest_of_lowest() {
        let (ra, rb) = (Arc::new(1u32), Arc::new(2u32));
        let mut q = MsgQueue::<u32>::default();
        q.push(Priority::High, meta(), &ra, &body(10));
        q.push(Priority::Normal, meta(), &rb, &body(20));
        q.push(Priority::Normal, meta(), &ra, &body(21));
        q.push(Priority::Critical, meta(), &ra, &body(30));
        let (p, m) = q.pop_lowest().unwrap();
        assert_eq!((p, m.len as usize), (Priority::Normal, body(20).len()));
        // Its route was only used by the dropped message: released.
        assert_eq!(Arc::strong_count(&rb), 1);
        let mut b = Batch::default();
        q.take(&mut b, 10);
        let mut got = Vec::new();
        b.for_each(|_, _, _, x| got.push(x[0]));
        assert_eq!(got, [30, 10, 21]);
    }

    /// Routes are held once per distinct route while messages use them, and released when the last message
    /// using one leaves (taken or dropped); a released index is reused.
    #[test]
    fn route_table_reclaims_after_drain() {
        let (ra, rb) = (Arc::new(7u32), Arc::new(8u32));
        let mut q = MsgQueue::<u32>::default();
        for i in 0..10 {
            q.push(Priority::Normal, meta(), &ra, &body(i));
        }
        // An equal route in another allocation shares the slot.
        q.push(Priority::Normal, meta(), &Arc::new(7u32), &body(10));
        q.push(Priority::Low, meta(), &rb, &body(11));
        assert_eq!(q.routes.live(), 2);
        assert_eq!((Arc::strong_count(&ra), Arc::strong_count(&rb)), (2, 2));
        let mut b = Batch::default();
        q.take(&mut b, 5);
        // Six messages still use `ra`: kept in the table (and lent to the batch).
        assert_eq!(q.routes.live(), 2);
        assert_eq!(Arc::strong_count(&ra), 3);
        b.clear();
        assert_eq!(Arc::strong_count(&ra), 2);
        q.take(&mut b, 6);
        assert_eq!(q.routes.live(), 1, "ra released once its last message was taken");
        b.clear();
        assert_eq!(Arc::strong_count(&ra), 1);
        q.take(&mut b, 6);
        b.clear();
        assert_eq!((q.routes.live(), Arc::strong_count(&rb)), (0, 1));
        // Freed slots are reused, not appended.
        q.push(Priority::Normal, meta(), &rb, &body(1));
        q.push(Priority::Normal, meta(), &ra, &body(2));
        assert_eq!(q.routes.slots.len(), 2);
    }

    #[test]
    fn pop_lowest_takes_oldest_of_lowest() {
        let mut q = PriorityQueue::new();
        q.push(Priority::High, 1);
        q.push(Priority::Normal, 2);
        q.push(Priority::Normal, 3);
        assert_eq!(q.pop_lowest(), Some((Priority::Normal, 2)));
        assert_eq!(q.len(), 2);
        assert_eq!(Priority::from_u8(4), None);
    }
}
