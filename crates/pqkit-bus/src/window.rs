//! The 64-entry sliding replay window (as in IPsec and DTLS) used by the in-process publish leg and by the
//! NATS receive path: the highest sequence number accepted and a bitmap of the 64 numbers at and below it.

use crate::{Error, Result};

/// Replay window of one stream. A sequence number is accepted once: above the highest seen, or within 64
/// below it and not seen yet; anything older than that is rejected as a replay.
#[derive(Default, Clone, Copy)]
pub(crate) struct Window {
    top: u64,
    bits: u64,
    any: bool,
}

impl Window {
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
}
