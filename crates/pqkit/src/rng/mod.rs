//! A ChaCha-based CSPRNG, in ChaCha20, ChaCha12 and ChaCha8 forms, and OS randomness.
//!
//! [`ChaChaRng`] is the keystream of ChaCha with a 32-byte seed as key, a 64-bit block counter starting at 0
//! (state words 12 and 13) and a 64-bit stream id (words 14 and 15), the layout `rand_chacha` uses; from a
//! fresh state it produces the same bytes as `rand_chacha`/RustCrypto `chacha20`'s RNGs with the same seed and
//! stream.
//!
//! Large requests are written by the cipher's widest SIMD backend straight into the caller's buffer (no copy,
//! no zeroing pass); small ones are served from a 1 KiB buffer refilled 16 blocks at a time.
//!
//! It implements the `rand_core` 0.10 traits: [`TryRng`] (infallible, so [`rand_core::Rng`] too),
//! [`TryCryptoRng`] (so [`rand_core::CryptoRng`]) and [`SeedableRng`].
//!
//! ## The end of the counter
//! 2^64 blocks (2^70 bytes) per seed and stream cannot be reached in practice, but the counter still never
//! wraps: when it runs out, the generator derives a fresh key (see `rekey`) and restarts the counter, so no
//! keystream is ever repeated.

use crate::chacha::{self, Backend};
use crate::dispatch::Checked;
use core::convert::Infallible;
use rand_core::{SeedableRng, TryCryptoRng, TryRng};
use zeroize::{Zeroize, ZeroizeOnDrop};

const BUF_LEN: usize = 1024;

/// A ChaCha CSPRNG with `ROUNDS` rounds (20, 12 or 8). Use the aliases [`ChaCha20Rng`], [`ChaCha12Rng`],
/// [`ChaCha8Rng`].
///
/// Not `Clone`: a copy would repeat the original's output.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct ChaChaRng<const ROUNDS: usize> {
    /// The input block of the next block to generate (key, counter, stream).
    state: [u32; 16],
    /// Keystream generated ahead; `buf[pos..]` is unused.
    buf: [u8; BUF_LEN],
    pos: usize,
    /// Set once the 64-bit counter has reached 2^64 (the next block must come after a rekey).
    exhausted: bool,
    #[zeroize(skip)]
    backend: Checked<Backend>,
}

/// ChaCha20 CSPRNG: the conservative choice.
pub type ChaCha20Rng = ChaChaRng<20>;
/// ChaCha12 CSPRNG: a common speed/margin trade-off (rand's `StdRng`).
pub type ChaCha12Rng = ChaChaRng<12>;
/// ChaCha8 CSPRNG: the fastest, with the smallest security margin.
pub type ChaCha8Rng = ChaChaRng<8>;

impl<const ROUNDS: usize> ChaChaRng<ROUNDS> {
    const VALID_ROUNDS: () = assert!(ROUNDS == 20 || ROUNDS == 12 || ROUNDS == 8, "ChaCha has 8, 12 or 20 rounds");

    /// A generator keyed by `seed`, stream 0.
    pub fn from_key(seed: [u8; 32]) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::VALID_ROUNDS;
        let state = chacha::state_legacy(&seed, 0, &[0; 8]);
        let mut seed = seed;
        seed.zeroize();
        ChaChaRng { state, buf: [0; BUF_LEN], pos: BUF_LEN, exhausted: false, backend: Backend::detect() }
    }

    /// A generator seeded from the operating system's randomness.
    #[cfg(feature = "std")]
    pub fn from_os_rng() -> crate::Result<Self> {
        let mut seed = [0u8; 32];
        fill_os(&mut seed)?;
        let rng = Self::from_key(seed);
        seed.zeroize();
        Ok(rng)
    }

    /// Selects stream `stream` (state words 14 and 15) and restarts at block 0, discarding buffered output.
    pub fn set_stream(&mut self, stream: u64) {
        self.state[14] = stream as u32;
        self.state[15] = (stream >> 32) as u32;
        self.set_block_pos(0);
    }

    /// The current stream id.
    pub fn stream(&self) -> u64 {
        u64::from(self.state[14]) | u64::from(self.state[15]) << 32
    }

    /// Moves to the start of block `block` of the current stream, discarding buffered output.
    pub fn set_block_pos(&mut self, block: u64) {
        self.state[12] = block as u32;
        self.state[13] = (block >> 32) as u32;
        self.buf.zeroize();
        self.pos = BUF_LEN;
        self.exhausted = false;
    }

    /// Forces a ChaCha backend (for tests and benchmarks).
    #[doc(hidden)]
    pub fn with_backend(mut self, backend: Checked<Backend>) -> Self {
        self.backend = backend;
        self
    }

    fn counter(&self) -> u64 {
        u64::from(self.state[12]) | u64::from(self.state[13]) << 32
    }

    fn set_counter(&mut self, c: u64) {
        self.state[12] = c as u32;
        self.state[13] = (c >> 32) as u32;
    }

    /// How many whole blocks may be generated before the counter runs out (saturating at `u64::MAX`).
    fn blocks_left(&self) -> u64 {
        if self.exhausted { 0 } else { (u64::MAX - self.counter()).saturating_add(1) }
    }

    /// Writes `out.len() / 64` whole keystream blocks into `out` (its length must be a multiple of 64), or fewer
    /// if the counter runs out first; returns how many bytes were written.
    fn generate_blocks(&mut self, out: &mut [u8]) -> usize {
        debug_assert_eq!(out.len() % 64, 0);
        if self.exhausted {
            self.rekey();
        }
        let want = (out.len() / 64) as u64;
        let n = want.min(self.blocks_left());
        let bytes = (n * 64) as usize;
        chacha::apply_blocks(self.backend, ROUNDS, &self.state, &mut out[..bytes], false);
        let (next, overflow) = self.counter().overflowing_add(n);
        self.set_counter(next);
        self.exhausted = overflow;
        bytes
    }

    /// Counter exhausted: derive a fresh key and restart the counter at 0.
    ///
    /// The new key is the first half of a ChaCha block computed with the four constant words complemented.
    /// No output of any pqkit or standard ChaCha stream uses those constants, so the new key is independent of
    /// everything this generator has output, and it is never output itself.
    fn rekey(&mut self) {
        let mut s = self.state;
        for (w, c) in s[..4].iter_mut().zip(chacha::CONSTANTS) {
            *w = !c;
        }
        s[12] = 0;
        s[13] = 0;
        let mut block = [0u8; 64];
        chacha::apply_blocks(self.backend, ROUNDS, &s, &mut block, false);
        for (w, c) in self.state[4..12].iter_mut().zip(block.chunks_exact(4)) {
            *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        block.zeroize();
        s.zeroize();
        self.set_counter(0);
        self.exhausted = false;
    }

    fn refill(&mut self) {
        let mut buf = core::mem::replace(&mut self.buf, [0; BUF_LEN]);
        let mut filled = 0;
        while filled < BUF_LEN {
            filled += self.generate_blocks(&mut buf[filled..]);
        }
        self.buf = buf;
        self.pos = 0;
    }

    /// Fills `dst` with random bytes.
    pub fn fill(&mut self, dst: &mut [u8]) {
        // 1. Whatever is buffered.
        let take = dst.len().min(BUF_LEN - self.pos);
        let (head, mut rest) = dst.split_at_mut(take);
        head.copy_from_slice(&self.buf[self.pos..self.pos + take]);
        self.buf[self.pos..self.pos + take].zeroize();
        self.pos += take;
        // 2. Whole blocks straight into the destination.
        while rest.len() >= 64 {
            let whole = rest.len() & !63;
            let n = self.generate_blocks(&mut rest[..whole]);
            rest = &mut rest[n..];
        }
        // 3. A tail shorter than a block, from a fresh buffer.
        if !rest.is_empty() {
            self.refill();
            let n = rest.len();
            rest.copy_from_slice(&self.buf[..n]);
            self.buf[..n].zeroize();
            self.pos = n;
        }
    }
}

impl<const ROUNDS: usize> TryRng for ChaChaRng<ROUNDS> {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        let mut b = [0u8; 4];
        self.fill(&mut b);
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut b = [0u8; 8];
        self.fill(&mut b);
        Ok(u64::from_le_bytes(b))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.fill(dst);
        Ok(())
    }
}

impl<const ROUNDS: usize> TryCryptoRng for ChaChaRng<ROUNDS> {}

impl<const ROUNDS: usize> SeedableRng for ChaChaRng<ROUNDS> {
    type Seed = [u8; 32];

    fn from_seed(seed: [u8; 32]) -> Self {
        Self::from_key(seed)
    }
}

impl<const ROUNDS: usize> core::fmt::Debug for ChaChaRng<ROUNDS> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ChaCha{ROUNDS}Rng {{ .. }}")
    }
}

/// Fills `dst` from the operating system's randomness (`getrandom`).
#[cfg(feature = "std")]
pub fn fill_os(dst: &mut [u8]) -> crate::Result<()> {
    getrandom::fill(dst).map_err(|_| crate::Error::Rng)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_end_rekeys_instead_of_wrapping() {
        let mut a = ChaCha20Rng::from_key([3; 32]);
        let mut first = [0u8; 128];
        a.fill(&mut first);

        let mut b = ChaCha20Rng::from_key([3; 32]);
        b.set_block_pos(u64::MAX);
        let mut out = [0u8; 64 * 3];
        b.fill(&mut out);
        // The last block of the counter range is ordinary keystream...
        let mut c = ChaCha20Rng::from_key([3; 32]);
        c.set_block_pos(u64::MAX);
        let mut last = [0u8; 64];
        c.fill(&mut last);
        assert_eq!(&out[..64], &last[..]);
        // ...and what follows it is neither a repeat of block 0 nor zeros.
        assert_ne!(&out[64..192], &first[..]);
        assert_ne!(&out[64..128], &[0u8; 64][..]);
        assert_ne!(&out[64..128], &out[128..192]);
    }

    #[test]
    fn debug_hides_state() {
        extern crate alloc;
        let r = ChaCha8Rng::from_key([0xAB; 32]);
        assert_eq!(alloc::format!("{r:?}"), "ChaCha8Rng { .. }");
    }
}
