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

/// Position bookkeeping shared by the stream ciphers with a 64-bit block counter (Kusumi512 with 100-byte
/// blocks, Threefish-512-CTR with 64-byte blocks): the range check, the leading partial block and seeking.
///
/// `start` is the block counter of position 0; the last usable block is `2^64 - 1`, and positions are `u64`
/// bytes, whichever limit comes first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counter64Position<const BLOCK: usize> {
    start: u64,
    pos: u64,
}

impl<const BLOCK: usize> Counter64Position<BLOCK> {
    /// Position 0 at block counter `start`.
    pub(crate) const fn new(start: u64) -> Self {
        Counter64Position { start, pos: 0 }
    }

    /// Keystream bytes available from the starting counter to the end of the counter range.
    fn capacity(&self) -> u128 {
        ((1u128 << 64) - self.start as u128) * BLOCK as u128
    }

    /// One `apply_keystream` call: fails with [`Error::CounterExhausted`](crate::Error::CounterExhausted)
    /// (changing nothing) if `data` would run past the counter range; otherwise XORs a leading partial block
    /// with `block(counter)`, hands the block-aligned rest to `bulk(first_counter, rest)` and advances.
    /// The partial keystream block is zeroized after use.
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
        // No overflow below: every block touched is at most 2^64 - 1.
        let mut counter = self.start + self.pos / BLOCK as u64;
        let off = (self.pos % BLOCK as u64) as usize;
        let mut rest = data;
        if off != 0 {
            let mut ks = block(counter);
            let n = (BLOCK - off).min(rest.len());
            for (d, k) in rest[..n].iter_mut().zip(&ks[off..off + n]) {
                *d ^= k;
            }
            zeroize::Zeroize::zeroize(&mut ks[..]);
            rest = &mut rest[n..];
            counter = counter.wrapping_add(1);
        }
        if !rest.is_empty() {
            bulk(counter, rest);
        }
        self.pos = end as u64;
        Ok(())
    }

    /// Moves to `position`, or fails with [`Error::MessageTooLong`](crate::Error::MessageTooLong) (changing
    /// nothing) if it lies beyond the counter range.
    pub(crate) fn seek(&mut self, algorithm: &'static str, position: u64) -> Result<()> {
        let cap = self.capacity();
        if position as u128 > cap {
            return Err(crate::Error::MessageTooLong { algorithm, max: cap.min(u64::MAX as u128) as u64 });
        }
        self.pos = position;
        Ok(())
    }

    /// Keystream bytes consumed since the starting counter.
    pub(crate) const fn position(&self) -> u64 {
        self.pos
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

    /// Encrypts (or decrypts: it is the same XOR) everything written to it, and writes the result to `inner`.
    ///
    /// Holds one buffer of at most [`STREAM_BUFFER_MAX`] bytes. If the inner writer fails, the adapter is
    /// poisoned: the keystream has moved on, so every later call returns an error instead of continuing
    /// with a stream that no longer lines up.
    pub struct StreamWriter<W: Write, C: StreamCipher> {
        inner: W,
        cipher: C,
        buf: Vec<u8>,
        poisoned: bool,
    }

    impl<W: Write, C: StreamCipher> StreamWriter<W, C> {
        /// Wraps `inner` with a buffer of [`STREAM_BUFFER_MAX`] bytes.
        pub fn new(inner: W, cipher: C) -> Self {
            Self::with_buffer_size(inner, cipher, STREAM_BUFFER_MAX)
        }

        /// Wraps `inner` with a buffer of `size` bytes, clamped to `1..=STREAM_BUFFER_MAX`.
        pub fn with_buffer_size(inner: W, cipher: C, size: usize) -> Self {
            let size = size.clamp(1, STREAM_BUFFER_MAX);
            StreamWriter { inner, cipher, buf: Vec::with_capacity(size), poisoned: false }
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
            let n = data.len().min(self.buf.capacity());
            self.buf.clear();
            self.buf.extend_from_slice(&data[..n]);
            self.cipher.apply_keystream(&mut self.buf)?;
            if let Err(e) = self.inner.write_all(&self.buf) {
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
