//! What every pqkit stream cipher shares: the [`StreamCipher`] trait, and, with `std`, the
//! [`StreamWriter`]/[`StreamReader`] adapters over `std::io`.
//!
//! ## The three usage modes
//! - **In-place:** [`StreamCipher::apply_keystream`] on a `&mut [u8]`. Allocates nothing.
//! - **One-shot:** [`StreamCipher::apply_keystream_to_vec`] returns a new `Vec` and allocates exactly the output.
//! - **Streaming:** [`StreamWriter`] and [`StreamReader`] wrap any `std::io::Write`/`Read`. They use a bounded
//!   buffer (at most [`STREAM_BUFFER_MAX`] bytes, whatever the input size), and their output is byte-identical
//!   to the one-shot mode: the keystream continues across chunk boundaries, it never restarts.
//!
//! ## Position and exhaustion
//! A keyed instance keeps its position across calls. The position is the number of keystream bytes consumed
//! since the instance's starting block counter; [`StreamCipher::seek`] sets it. When a call would need a block
//! past the counter's maximum it fails with [`Error::CounterExhausted`](crate::Error::CounterExhausted) and
//! leaves the data and the position untouched: a counter never wraps.

use crate::Result;
#[cfg(feature = "alloc")]
use alloc::vec::Vec;

/// A keyed, seekable stream cipher instance.
pub trait StreamCipher {
    /// XORs the keystream into `data` and advances the position by `data.len()`.
    ///
    /// On [`Error::CounterExhausted`](crate::Error::CounterExhausted) neither `data` nor the position changes.
    fn apply_keystream(&mut self, data: &mut [u8]) -> Result<()>;

    /// Moves to `position` bytes from the instance's starting counter.
    ///
    /// Fails with [`Error::MessageTooLong`](crate::Error::MessageTooLong) if the position lies beyond the
    /// counter's range; the position is then unchanged.
    fn seek(&mut self, position: u64) -> Result<()>;

    /// The number of keystream bytes consumed since the starting counter.
    fn position(&self) -> u64;

    /// Writes `input XOR keystream` into `output`, which must have the same length.
    fn apply_keystream_inout(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        if input.len() != output.len() {
            return Err(crate::Error::length("stream cipher", "output buffer", input.len(), output.len()));
        }
        output.copy_from_slice(input);
        self.apply_keystream(output)
    }

    /// One-shot mode: returns `input XOR keystream` in a new `Vec` of exactly `input.len()` bytes.
    #[cfg(feature = "alloc")]
    fn apply_keystream_to_vec(&mut self, input: &[u8]) -> Result<Vec<u8>> {
        let mut out = input.to_vec();
        self.apply_keystream(&mut out)?;
        Ok(out)
    }
}

/// Position bookkeeping shared by every counter-mode stream cipher (ChaCha with its 32- or 64-bit counter,
/// Kusumi512 with 100-byte blocks, Threefish-512-CTR with 64-byte blocks): the range check, the leading
/// partial block, seeking, and the keystream of a partly used block kept for the next call.
///
/// `start` is the block counter of position 0 and `last` the last usable counter (`u32::MAX` for a 32-bit
/// counter, `u64::MAX` for a 64-bit one); positions are `u64` bytes, whichever limit comes first. A counter
/// never wraps: a call that would pass `last` fails and changes nothing.
///
/// The cached block is keystream: it is wiped when the position leaves its block and on drop.
#[derive(Clone)]
pub(crate) struct Counter64Position<const BLOCK: usize> {
    start: u64,
    last: u64,
    pos: u64,
    /// The keystream of the block holding `pos`, when `cached` (only while `pos % BLOCK != 0`).
    ks: [u8; BLOCK],
    cached: bool,
}

impl<const BLOCK: usize> Counter64Position<BLOCK> {
    /// Position 0 at block counter `start`, with a 64-bit counter.
    pub(crate) const fn new(start: u64) -> Self {
        Self::with_last(start, u64::MAX)
    }

    /// Position 0 at block counter `start`; `last` is the largest counter value (`start <= last`).
    pub(crate) const fn with_last(start: u64, last: u64) -> Self {
        Counter64Position { start, last, pos: 0, ks: [0; BLOCK], cached: false }
    }

    /// Keystream bytes available from the starting counter to the end of the counter range.
    fn capacity(&self) -> u128 {
        (self.last as u128 + 1 - self.start as u128) * BLOCK as u128
    }

    /// Keystream bytes available from position 0, as a `u64` (the most any position can be).
    pub(crate) fn max_position(&self) -> u64 {
        self.capacity().min(u64::MAX as u128) as u64
    }

    /// The block counter of position `pos`'s block (no overflow for a position within the range).
    #[inline]
    pub(crate) fn counter_at(&self, pos: u64) -> u64 {
        self.start + pos / BLOCK as u64
    }

    /// One `apply_keystream` call: fails with [`Error::CounterExhausted`](crate::Error::CounterExhausted)
    /// (changing nothing) if `data` would run past the counter range; otherwise XORs a leading partial block
    /// with the cached keystream or `block(counter)`, hands the block-aligned rest to `bulk(first_counter,
    /// rest)` and advances. Every counter passed is at most `last`.
    pub(crate) fn apply(
        &mut self,
        algorithm: &'static str,
        data: &mut [u8],
        block: impl FnOnce(u64) -> [u8; BLOCK],
        bulk: impl FnOnce(u64, &mut [u8]),
    ) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let end = self.pos as u128 + data.len() as u128;
        if end > self.capacity() || end > u64::MAX as u128 {
            return Err(crate::Error::CounterExhausted { algorithm });
        }
        // No overflow below: every block touched is at most `last`.
        let mut counter = self.counter_at(self.pos);
        let off = (self.pos % BLOCK as u64) as usize;
        let mut rest = data;
        if off != 0 {
            if !self.cached {
                self.ks = block(counter);
                self.cached = true;
            }
            let n = (BLOCK - off).min(rest.len());
            for (d, k) in rest[..n].iter_mut().zip(&self.ks[off..off + n]) {
                *d ^= k;
            }
            rest = &mut rest[n..];
            if off + n == BLOCK {
                self.uncache();
                // Wraps only after the last block, when nothing is left for `bulk`.
                counter = counter.wrapping_add(1);
            }
        }
        if !rest.is_empty() {
            bulk(counter, rest);
            // The bulk pass ends inside a block whose keystream it did not keep: computed again if needed.
            self.uncache();
        }
        self.pos = end as u64;
        Ok(())
    }

    /// Reserves the next `len` bytes of keystream for a caller that computes them itself (a stitched AEAD pass):
    /// fails like [`apply`](Self::apply) with [`Error::CounterExhausted`](crate::Error::CounterExhausted)
    /// (changing nothing) if they would run past the counter range; returns `None` (changing nothing) when the
    /// position is inside a block; otherwise advances and returns the block counter of their first byte.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn take_aligned(&mut self, algorithm: &'static str, len: usize) -> Result<Option<u64>> {
        if !self.pos.is_multiple_of(BLOCK as u64) {
            return Ok(None);
        }
        let end = self.pos as u128 + len as u128;
        if end > self.capacity() || end > u64::MAX as u128 {
            return Err(crate::Error::CounterExhausted { algorithm });
        }
        let counter = self.counter_at(self.pos);
        self.uncache();
        self.pos = end as u64;
        Ok(Some(counter))
    }

    /// Moves to `position`, or fails with [`Error::MessageTooLong`](crate::Error::MessageTooLong) (changing
    /// nothing) if it lies beyond the counter range.
    pub(crate) fn seek(&mut self, algorithm: &'static str, position: u64) -> Result<()> {
        if position as u128 > self.capacity() {
            return Err(crate::Error::MessageTooLong { algorithm, max: self.max_position() });
        }
        if position / BLOCK as u64 != self.pos / BLOCK as u64 {
            self.uncache();
        }
        self.pos = position;
        Ok(())
    }

    fn uncache(&mut self) {
        if self.cached {
            zeroize::Zeroize::zeroize(&mut self.ks[..]);
            self.cached = false;
        }
    }

    /// Keystream bytes consumed since the starting counter.
    pub(crate) const fn position(&self) -> u64 {
        self.pos
    }
}

impl<const BLOCK: usize> Drop for Counter64Position<BLOCK> {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.ks[..]);
    }
}

impl<const BLOCK: usize> core::fmt::Debug for Counter64Position<BLOCK> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Counter64Position").field("start", &self.start).field("pos", &self.pos).finish_non_exhaustive()
    }
}

/// The largest buffer the streaming adapters ever hold.
pub const STREAM_BUFFER_MAX: usize = 64 * 1024;

#[cfg(feature = "std")]
pub use io::{StreamReader, StreamWriter};

#[cfg(feature = "std")]
mod io {
    use super::{STREAM_BUFFER_MAX, StreamCipher};
    use alloc::vec::Vec;
    use std::io::{self, Read, Write};

    /// A buffer wiped over its whole capacity when it is dropped, with the crate's vectorised wipe
    /// ([`crate::ct::wipe`]): a writer made per message drops one per message, and `zeroize`'s byte-wise
    /// volatile loop over 16 KiB costs about as much as encrypting it.
    struct WipedBuf(Vec<u8>);

    impl Drop for WipedBuf {
        fn drop(&mut self) {
            let cap = self.0.capacity();
            self.0.resize(cap, 0);
            crate::ct::wipe(&mut self.0[..]);
        }
    }

    /// Encrypts (or decrypts: it is the same XOR) everything written to it, and writes the result to `inner`.
    ///
    /// Holds one buffer of at most [`STREAM_BUFFER_MAX`] bytes, allocated at the first write and sized to the
    /// writes: a writer that only ever sees short writes holds a short buffer. Decrypting, the buffer holds
    /// plaintext, so it is wiped when it is replaced and when the writer is dropped (or taken apart by
    /// [`into_inner`](Self::into_inner)). If the inner writer fails, the adapter is poisoned: the keystream has
    /// moved on, so every later call returns an error instead of continuing with a stream that no longer lines
    /// up.
    pub struct StreamWriter<W: Write, C: StreamCipher> {
        inner: W,
        cipher: C,
        /// Empty until the first write; its capacity grows with the writes, never beyond `max`. It holds the last
        /// write's data after the XOR (decrypting: plaintext), so it is wiped whenever it is let go: replaced by
        /// a larger one, or dropped with the writer.
        buf: WipedBuf,
        /// The largest chunk encrypted at once: the buffer size asked for, clamped to `1..=STREAM_BUFFER_MAX`.
        max: usize,
        poisoned: bool,
    }

    impl<W: Write, C: StreamCipher> StreamWriter<W, C> {
        /// Wraps `inner` with a buffer of at most [`STREAM_BUFFER_MAX`] bytes.
        pub fn new(inner: W, cipher: C) -> Self {
            Self::with_buffer_size(inner, cipher, STREAM_BUFFER_MAX)
        }

        /// Wraps `inner` with a buffer of at most `size` bytes, clamped to `1..=STREAM_BUFFER_MAX`: each write
        /// encrypts and passes on at most that many bytes. Nothing is allocated until the first write.
        pub fn with_buffer_size(inner: W, cipher: C, size: usize) -> Self {
            let max = size.clamp(1, STREAM_BUFFER_MAX);
            StreamWriter { inner, cipher, buf: WipedBuf(Vec::new()), max, poisoned: false }
        }

        /// The cipher, e.g. to read its position.
        pub fn cipher(&self) -> &C {
            &self.cipher
        }

        /// Returns the inner writer and the cipher.
        pub fn into_inner(self) -> (W, C) {
            (self.inner, self.cipher)
        }
    }

    impl<W: Write, C: StreamCipher> Write for StreamWriter<W, C> {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            if self.poisoned {
                return Err(io::Error::other("stream cipher writer is poisoned by an earlier write error"));
            }
            let n = data.len().min(self.max);
            if self.buf.0.capacity() < n {
                // Sized to the write rather than to `max`: glibc serves a 64 KiB request from its large bins, at
                // a cost that depends on the heap's history (up to a sixth of a 1 KiB ChaCha20 encryption for a
                // writer made per message), and a short write's size from its per-thread cache. Growth at least
                // doubles, so ever longer writes reallocate only a few times.
                let cap = n.max(self.buf.0.capacity().saturating_mul(2)).min(self.max);
                self.buf = WipedBuf(Vec::with_capacity(cap));
            }
            self.buf.0.clear();
            self.buf.0.extend_from_slice(&data[..n]);
            self.cipher.apply_keystream(&mut self.buf.0)?;
            if let Err(e) = self.inner.write_all(&self.buf.0) {
                self.poisoned = true;
                return Err(e);
            }
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            self.inner.flush()
        }
    }

    /// Reads from `inner` and XORs the keystream into what it returns. Needs no buffer of its own.
    pub struct StreamReader<R: Read, C: StreamCipher> {
        inner: R,
        cipher: C,
    }

    impl<R: Read, C: StreamCipher> StreamReader<R, C> {
        /// Wraps `inner`.
        pub fn new(inner: R, cipher: C) -> Self {
            StreamReader { inner, cipher }
        }

        /// The cipher, e.g. to read its position.
        pub fn cipher(&self) -> &C {
            &self.cipher
        }

        /// Returns the inner reader and the cipher.
        pub fn into_inner(self) -> (R, C) {
            (self.inner, self.cipher)
        }
    }

    impl<R: Read, C: StreamCipher> Read for StreamReader<R, C> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.inner.read(out)?;
            self.cipher.apply_keystream(&mut out[..n])?;
            Ok(n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Counter64Position;
    use core::cell::Cell;

    const B: usize = 8;

    /// Keystream byte `i` of block `c`: distinct for every (counter, offset) in the tested ranges.
    fn ks_byte(c: u64, i: usize) -> u8 {
        (c as u8).wrapping_mul(16).wrapping_add(i as u8) ^ (c >> 56) as u8
    }

    /// Applies `len` bytes at the current position, counting calls of the one-block function.
    fn apply(p: &mut Counter64Position<B>, len: usize, calls: &Cell<u32>) -> crate::Result<[u8; 64]> {
        let mut data = [0u8; 64];
        p.apply(
            "test",
            &mut data[..len],
            |c| {
                calls.set(calls.get() + 1);
                core::array::from_fn(|i| ks_byte(c, i))
            },
            |c, rest| {
                for (j, d) in rest.iter_mut().enumerate() {
                    *d ^= ks_byte(c + (j / B) as u64, j % B);
                }
            },
        )?;
        Ok(data)
    }

    fn want(start: u64, pos: u64, len: usize) -> [u8; 64] {
        core::array::from_fn(|j| {
            if j < len {
                let p = pos + j as u64;
                ks_byte(start + p / B as u64, (p % B as u64) as usize)
            } else {
                0
            }
        })
    }

    #[test]
    fn partial_calls_and_seeks_give_the_keystream_at_the_position() {
        let calls = Cell::new(0);
        let start = 5;
        let mut p = Counter64Position::<B>::new(start);
        let mut pos = 0u64;
        // Lengths that end inside, at and across block boundaries; seeks inside the cached block and elsewhere.
        for (len, seek) in [(3, None), (2, None), (3, None), (1, Some(2)), (13, None), (4, Some(9)), (0, Some(0))] {
            if let Some(s) = seek {
                p.seek("test", s).unwrap();
                pos = s;
            }
            assert_eq!(apply(&mut p, len, &calls).unwrap(), want(start, pos, len), "len {len} at {pos}");
            pos += len as u64;
            assert_eq!(p.position(), pos);
        }
        // 3, 2, 3 share block 0: one block computation, then the cache is dropped at the boundary.
        let before = calls.get();
        p.seek("test", 17).unwrap();
        apply(&mut p, 1, &calls).unwrap();
        apply(&mut p, 1, &calls).unwrap();
        assert_eq!(calls.get(), before + 1, "second partial call in the same block must use the cache");
        p.seek("test", 26).unwrap();
        apply(&mut p, 1, &calls).unwrap();
        assert_eq!(calls.get(), before + 2, "a seek to another block must drop the cache");
    }

    #[test]
    fn never_passes_the_last_counter() {
        let calls = Cell::new(0);
        // A 32-bit-style counter with two blocks left.
        let mut p = Counter64Position::<B>::with_last(u32::MAX as u64 - 1, u32::MAX as u64);
        assert_eq!(p.max_position(), 2 * B as u64);
        assert!(matches!(apply(&mut p, 2 * B + 1, &calls), Err(crate::Error::CounterExhausted { .. })));
        assert_eq!(p.position(), 0, "a failed call changes nothing");
        assert_eq!(apply(&mut p, B + 3, &calls).unwrap(), want(u32::MAX as u64 - 1, 0, B + 3));
        assert_eq!(apply(&mut p, B - 3, &calls).unwrap(), want(u32::MAX as u64 - 1, B as u64 + 3, B - 3));
        assert!(matches!(apply(&mut p, 1, &calls), Err(crate::Error::CounterExhausted { .. })));
        assert!(matches!(p.seek("test", 2 * B as u64 + 1), Err(crate::Error::MessageTooLong { max: 16, .. })));
        p.seek("test", 2 * B as u64).unwrap();
        // The 64-bit end: the last block is usable, finishing it ends the range.
        let mut p = Counter64Position::<B>::new(u64::MAX);
        p.seek("test", 5).unwrap();
        assert_eq!(apply(&mut p, 3, &calls).unwrap(), want(u64::MAX, 5, 3));
        assert!(matches!(apply(&mut p, 1, &calls), Err(crate::Error::CounterExhausted { .. })));
    }
}
