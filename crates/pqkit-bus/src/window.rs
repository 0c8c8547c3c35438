//! The 64-entry sliding replay window (as in IPsec and DTLS) used by the in-process publish leg and by the
//! NATS receive path: the highest sequence number accepted and a bitmap of the 64 numbers at and below it.

use crate::{Error, Result};

/// Replay window of one stream. A sequence number is accepted once: above the highest seen, or within 64
/// below it and not seen yet; anything older than that is rejected as a replay.
#[derive(Default, Clone, Copy, Debug)]
pub(crate) struct Window {
    top: u64,
    bits: u64,
    any: bool,
}

impl Window {
    /// `top bits` in hex, or `-` before the first number (the text form of [`Replay::to_text`]).
    fn to_text(self) -> String {
        if self.any { format!("{:x} {:x}", self.top, self.bits) } else { "-".into() }
    }

    /// `Ok` when `seq` would be accepted; [`Error::Replayed`] when it was seen or is too old. Does not record it
    /// (call [`commit`](Self::commit) once the message authenticated).
    pub(crate) fn check(&self, seq: u64) -> Result<()> {
        if !self.any || seq > self.top {
            return Ok(());
        }
        let d = self.top - seq;
        if d >= 64 || self.bits & (1u64 << d) != 0 { Err(Error::Replayed { seq }) } else { Ok(()) }
    }

    /// Records `seq` as seen, sliding the window forward when it is the new highest.
    pub(crate) fn commit(&mut self, seq: u64) {
        if !self.any {
            *self = Window { top: seq, bits: 1, any: true };
        } else if seq > self.top {
            let s = seq - self.top;
            self.bits = if s >= 64 { 0 } else { self.bits << s };
            self.bits |= 1;
            self.top = seq;
        } else {
            self.bits |= 1u64 << (self.top - seq);
        }
    }
}

/// Ranges of sequence numbers a [`Seen`] keeps per stream; past this the two lowest merge (the gap between them
/// counts as seen). Each range is one run of consecutive numbers, so this bounds the gaps, not the messages.
pub(crate) const MAX_RANGES: usize = 4096;

/// Every sequence number accepted so far, exactly, as disjoint ranges: a number is a replay only if it was
/// accepted before, however late it comes back. For durable topics, where the server redelivers what a
/// crashed consumer held after `ack_wait`, behind any number of newer messages. Memory grows with the gaps in
/// what arrived (bounded by [`MAX_RANGES`]), not with the messages.
#[derive(Default, Clone, Debug)]
pub(crate) struct Seen {
    /// Start → end (inclusive) of each run.
    runs: std::collections::BTreeMap<u64, u64>,
}

impl Seen {
    pub(crate) fn check(&self, seq: u64) -> Result<()> {
        match self.runs.range(..=seq).next_back() {
            Some((_, &end)) if end >= seq => Err(Error::Replayed { seq }),
            _ => Ok(()),
        }
    }

    pub(crate) fn commit(&mut self, seq: u64) {
        if self.check(seq).is_err() {
            return;
        }
        let before =
            self.runs.range(..seq).next_back().map(|(&s, &e)| (s, e)).filter(|&(_, e)| e.checked_add(1) == Some(seq));
        let after = seq.checked_add(1).and_then(|n| self.runs.get(&n).map(|&e| (n, e)));
        let start = match before {
            Some((s, _)) => s,
            None => seq,
        };
        let end = match after {
            Some((n, e)) => {
                self.runs.remove(&n);
                e
            }
            None => seq,
        };
        self.runs.insert(start, end);
        while self.runs.len() > MAX_RANGES {
            let (Some((s0, _)), Some((&s1, &e1))) = (self.runs.pop_first(), self.runs.iter().next()) else { break };
            self.runs.remove(&s1);
            self.runs.insert(s0, e1);
        }
    }
}

/// The replay check of one sender stream: the 64-entry [`Window`] (core topics: at-most-once, bounded and
/// constant-time) or the exact [`Seen`] set (durable topics: a late redelivery is never mistaken for a replay).
#[derive(Clone, Debug)]
pub(crate) enum Replay {
    Recent(Window),
    Exact(Seen),
}

impl Replay {
    /// One line of text: `R <top hex> <bits hex>` (or `R -`), `E <start hex>-<end hex>,...` (or `E -`).
    pub(crate) fn to_text(&self) -> String {
        match self {
            Replay::Recent(w) => format!("R {}", w.to_text()),
            Replay::Exact(s) if s.runs.is_empty() => "E -".into(),
            Replay::Exact(s) => {
                let runs: Vec<String> = s.runs.iter().map(|(a, b)| format!("{a:x}-{b:x}")).collect();
                format!("E {}", runs.join(","))
            }
        }
    }

    /// Parses [`to_text`](Self::to_text)'s fields (after the kind letter).
    pub(crate) fn from_text(kind: &str, fields: &[&str]) -> Option<Replay> {
        let hex = |s: &str| u64::from_str_radix(s, 16).ok();
        match (kind, fields) {
            ("R", ["-"]) => Some(Replay::Recent(Window::default())),
            ("R", [top, bits]) => Some(Replay::Recent(Window { top: hex(top)?, bits: hex(bits)?, any: true })),
            ("E", ["-"]) => Some(Replay::Exact(Seen::default())),
            ("E", [runs]) => {
                let mut s = Seen::default();
                for r in runs.split(',') {
                    let (a, b) = r.split_once('-')?;
                    let (a, b) = (hex(a)?, hex(b)?);
                    if a > b || s.runs.len() >= MAX_RANGES {
                        return None;
                    }
                    s.runs.insert(a, b);
                }
                Some(Replay::Exact(s))
            }
            _ => None,
        }
    }

    pub(crate) fn new(exact: bool) -> Replay {
        if exact { Replay::Exact(Seen::default()) } else { Replay::Recent(Window::default()) }
    }
    #[inline]
    pub(crate) fn check(&self, seq: u64) -> Result<()> {
        match self {
            Replay::Recent(w) => w.check(seq),
            Replay::Exact(s) => s.check(seq),
        }
    }
    #[inline]
    pub(crate) fn commit(&mut self, seq: u64) {
        match self {
            Replay::Recent(w) => w.commit(seq),
            Replay::Exact(s) => s.commit(seq),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Window;

    fn accept(w: &mut Window, seq: u64) -> bool {
        let ok = w.check(seq).is_ok();
        if ok {
            w.commit(seq);
        }
        ok
    }

    #[test]
    fn each_number_once_within_the_window_and_nothing_older() {
        let mut w = Window::default();
        assert!(accept(&mut w, 5));
        assert!(!accept(&mut w, 5), "a repeat is a replay");
        assert!(accept(&mut w, 3), "an older number not seen yet, inside the window");
        assert!(!accept(&mut w, 3));
        assert!(accept(&mut w, 100));
        assert!(accept(&mut w, 37), "100 - 37 = 63: the last slot of the window");
        assert!(!accept(&mut w, 36), "64 behind the highest: outside the window");
        assert!(!accept(&mut w, 5), "seen before the slide, now outside");
        assert!(accept(&mut w, 99));
        assert!(!accept(&mut w, 100));
        assert!(accept(&mut w, 1000), "a jump of 64 or more clears the bitmap");
        assert!(!accept(&mut w, 999 - 63), "1000 - 936 = 64");
        assert!(accept(&mut w, 999));
    }

    #[test]
    fn zero_is_a_valid_first_number() {
        let mut w = Window::default();
        assert!(accept(&mut w, 0));
        assert!(!accept(&mut w, 0));
        assert!(accept(&mut w, 1));
    }

    #[test]
    fn seen_rejects_exactly_what_was_accepted_however_late() {
        use super::{MAX_RANGES, Seen};
        let mut s = Seen::default();
        for n in (0..1000).filter(|n| n % 10 != 3) {
            assert!(s.check(n).is_ok());
            s.commit(n);
        }
        for n in (0..1000).filter(|n| n % 10 != 3) {
            assert!(s.check(n).is_err(), "{n} was accepted before");
        }
        // The gaps are genuine late arrivals: accepted once, 997 numbers behind the highest.
        for n in (0..1000).filter(|n| n % 10 == 3) {
            assert!(s.check(n).is_ok(), "{n} never seen");
            s.commit(n);
            assert!(s.check(n).is_err());
        }
        assert_eq!(s.runs.len(), 1, "the runs merged into one: {:?}", s.runs.iter().take(4).collect::<Vec<_>>());
        assert!(s.check(1000).is_ok() && s.check(u64::MAX).is_ok());
        s.commit(u64::MAX);
        assert!(s.check(u64::MAX).is_err());
        // Bounded: past MAX_RANGES runs the lowest merge.
        let mut s = Seen::default();
        for n in 0..(MAX_RANGES as u64 + 10) {
            s.commit(n * 2);
        }
        assert!(s.runs.len() <= MAX_RANGES);
        assert!(s.check(2 * (MAX_RANGES as u64 + 9) - 1).is_ok(), "a recent gap stays open");
    }
}
