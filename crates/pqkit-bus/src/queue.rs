//! The per-subscription priority queue: four FIFO levels, highest first, with bounded starvation.
//!
//! Order: the highest non-empty level first, FIFO within a level. Aging (weighted draining): each delivery that
//! passes over a lower, non-empty level adds one to that level's skip counter; a level whose counter reaches
//! [`AGING_LIMIT`] is served next (the lowest such level first) and its counter resets. So the head of a
//! non-empty level leaves within `AGING_LIMIT + 3` deliveries, and its `k`-th message within
//! `k * (AGING_LIMIT + 3)`.

use std::collections::VecDeque;

/// Number of priority levels.
pub const LEVELS: usize = 4;
/// Skips after which a passed-over level is served (see the module docs).
pub const AGING_LIMIT: u32 = 16;

/// A message priority. Higher is delivered first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Priority {
    /// Background traffic.
    Low = 0,
    /// The default.
    #[default]
    Normal = 1,
    /// Ahead of normal traffic.
    High = 2,
    /// Ahead of everything.
    Critical = 3,
}

impl Priority {
    /// The priority for a wire byte, if valid (0..=3).
    pub fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            0 => Priority::Low,
            1 => Priority::Normal,
            2 => Priority::High,
            3 => Priority::Critical,
            _ => return None,
        })
    }
    /// All levels, lowest first.
    pub const ALL: [Priority; LEVELS] = [Priority::Low, Priority::Normal, Priority::High, Priority::Critical];
}

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
