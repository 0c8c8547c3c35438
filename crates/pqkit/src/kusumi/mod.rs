//! Kusumi512: ChaCha20's quarter round on a 25-word state, with a 64-byte key, a 12-byte nonce, a 64-bit block
//! counter and 100-byte keystream blocks.
//!
//! pqkit's Kusumi512 matches the keystream of the published .NET library ("GreenfieldPQC") byte for byte, but
//! not its defects: an instance keeps its position across calls, can seek, and never reuses keystream. The
//! definition pqkit implements, with known-answer vectors, is `docs/kusumi512.md` in the repository.
//!
//! ## Security contract
//! - A (key, nonce) pair must never encrypt two different messages (or two parts of one message at the same
//!   position). Kusumi512 alone provides no integrity; use [`crate::aead`] when you need it.
//! - [`Kusumi512::new`] starts at block counter 1 (counter 0 keys the AEAD's MAC). The counter never wraps:
//!   asking for keystream past block 2^64 - 1 fails with [`Error::CounterExhausted`].
//!
//! Backends: portable, AVX2 (8 blocks at a time) and AVX-512 (16 blocks at a time); the one dispatch mechanism
//! ([`crate::dispatch`], through `Backend::detect`) picks the fastest one this CPU runs.

use crate::cipher::{Counter64Position, StreamCipher};
use crate::dispatch::Checked;
use crate::{Error, Result};
use zeroize::Zeroize;

/// The safe entry points of one SIMD backend file, the same for each: every one asserts that the `Checked`
/// proof covers the file's backend `$b`, then calls the file's `#[target_feature]` function of the same name
/// with `_impl` appended (`xor_blocks_impl`, `xor_stitched_impl`, `xor_head_impl`).
#[cfg(target_arch = "x86_64")]
macro_rules! lanes_entry_points {
    ($b:expr) => {
        /// XORs the keystream of blocks `counter, counter + 1, ...` into `data`; see [`super::xor_blocks`].
        pub(super) fn xor_blocks(
            backend: Checked<Backend>,
            key: &[u32; 16],
            nonce: &[u32; 3],
            counter: u64,
            data: &mut [u8],
            last: &mut [u8; BLOCK],
        ) -> bool {
            assert!(backend.covers($b));
            // SAFETY: `backend` is a `Checked` (crate::dispatch) covering `$b`, so the CPU has every feature `$b`
            // is declared with in `Backend`: every feature the calling module's `target_feature` functions enable.
            unsafe { xor_blocks_impl(key, nonce, counter, data, last) }
        }

        /// See [`simd::xor_stitched`] (chunks of this backend's lane count).
        #[allow(clippy::too_many_arguments)]
        pub(super) fn xor_stitched<J: super::Stitch>(
            backend: Checked<Backend>,
            key: &[u32; 16],
            nonce: &[u32; 3],
            counter: u64,
            data: &mut [u8],
            lead: usize,
            chunks: usize,
            job: &mut J,
        ) {
            assert!(backend.covers($b));
            // SAFETY: as in `xor_blocks`.
            unsafe { xor_stitched_impl(key, nonce, counter, data, lead, chunks, job) }
        }

        /// See [`simd::xor_head`]; `head` is shorter than this backend's lane count in blocks.
        pub(super) fn xor_head(
            backend: Checked<Backend>,
            key: &[u32; 16],
            nonce: &[u32; 3],
            head: &mut [u8],
            block0: &mut [u8; BLOCK],
            last: &mut [u8; BLOCK],
        ) -> bool {
            assert!(backend.covers($b));
            // SAFETY: as in `xor_blocks`.
            unsafe { xor_head_impl(key, nonce, head, block0, last) }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod simd;
mod soft;

/// Keystream block length in bytes.
pub const BLOCK_LEN: usize = 100;
/// Key length in bytes.
pub const KEY_LEN: usize = 64;
/// Nonce length in bytes.
pub const NONCE_LEN: usize = 12;

const BLOCK: usize = BLOCK_LEN;
const NAME: &str = "Kusumi512";

crate::dispatch::backends! {
    /// The Kusumi512 implementations. Public only so tests and benchmarks can force one.
    #[doc(hidden)]
    pub enum Backend for "Kusumi512" {
        /// Portable Rust.
        Soft: [],
        /// AVX2, 8 blocks at a time.
        Avx2: [AVX2],
        /// AVX-512F, 16 blocks at a time; a tail of eight blocks or fewer is one 8-lane batch in ymm registers
        /// with the AVX-512VL encodings.
        Avx512: [AVX512F, AVX512VL, AVX2],
    }
}

/// XORs the keystream of blocks `counter, counter + 1, ...` into `data` (last block may be partial). If `data`
/// ends inside a block, that block's whole keystream is written to `last` and the result is true.
///
/// `backend` is checked ([`crate::dispatch`]): only a backend this CPU runs can be passed.
#[inline]
fn xor_blocks(
    backend: Checked<Backend>,
    key: &[u32; 16],
    nonce: &[u32; 3],
    counter: u64,
    data: &mut [u8],
    last: &mut [u8; BLOCK],
) -> bool {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => avx512::xor_blocks(backend, key, nonce, counter, data, last),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => avx2::xor_blocks(backend, key, nonce, counter, data, last),
        _ => soft::xor_blocks(key, nonce, counter, data, last),
    }
}

/// Bytes per step of a stitched pass's scalar job: five 16-byte Poly1305 blocks. A chunk of 8 blocks (800
/// bytes) is 10 steps, one after each of the 10 passes of the rounds; a chunk of 16 blocks, 20 steps.
#[cfg(target_arch = "x86_64")]
pub(crate) const STITCH_STEP: usize = 80;

/// The scalar work of a stitched pass ([`Kusumi512::xor_stitched`]): the AEAD's Poly1305 over ciphertext
/// already written, run between the quarter rounds so the integer units hash while the vector units compute.
#[cfg(target_arch = "x86_64")]
pub(crate) trait Stitch {
    /// Takes the next [`STITCH_STEP`] bytes.
    fn step(&mut self, data: &[u8; STITCH_STEP]);
}

/// The keystream of the block a bulk pass ended inside. The vector backends compute it anyway (their last batch
/// covers whole blocks); keeping it saves the next call, which starts inside that block, a single-block
/// computation on the portable path, the dominant cost of sequential calls of a few KiB.
#[derive(Clone)]
struct TailKeystream {
    counter: u64,
    valid: bool,
    ks: [u8; BLOCK],
}

impl TailKeystream {
    /// The keystream of block `counter`: the kept one if it is that block's (then forgotten), else computed.
    fn take(&mut self, key: &[u32; 16], nonce: &[u32; 3], counter: u64) -> [u8; BLOCK] {
        if self.valid && self.counter == counter {
            let ks = self.ks;
            self.forget();
            ks
        } else {
            soft::block(key, nonce, counter)
        }
    }

    fn forget(&mut self) {
        if self.valid {
            crate::ct::wipe(&mut self.ks);
            self.valid = false;
        }
    }
}

/// A keyed Kusumi512 instance at a position in its keystream.
///
/// The position counts keystream bytes from the starting block counter (1 for [`Kusumi512::new`]).
#[derive(Clone)]
pub struct Kusumi512 {
    key: [u32; 16],
    nonce: [u32; 3],
    pos: Counter64Position<BLOCK>,
    backend: Checked<Backend>,
    tail: TailKeystream,
}

impl Kusumi512 {
    /// Creates an instance whose position 0 is block counter 1, where encryption starts in the specification.
    ///
    /// `key` must be 64 bytes and `nonce` 12 bytes.
    pub fn new(key: &[u8], nonce: &[u8]) -> Result<Self> {
        Self::new_with_counter(key, nonce, 1)
    }

    /// Creates an instance whose position 0 is block counter `counter`.
    pub fn new_with_counter(key: &[u8], nonce: &[u8], counter: u64) -> Result<Self> {
        Self::new_with_backend(key, nonce, counter, Backend::detect())
    }

    /// Like [`Kusumi512::new_with_counter`], forcing a backend (for tests and benchmarks); obtain it from
    /// `Backend::available()` or `Backend::X.checked()?`, which is where an unavailable one is refused.
    #[doc(hidden)]
    pub fn new_with_backend(key: &[u8], nonce: &[u8], counter: u64, backend: Checked<Backend>) -> Result<Self> {
        Error::check_length(NAME, "key", KEY_LEN, key.len())?;
        Error::check_length(NAME, "nonce", NONCE_LEN, nonce.len())?;
        let mut k = [0u32; 16];
        for (w, c) in k.iter_mut().zip(key.chunks_exact(4)) {
            *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        let mut n = [0u32; 3];
        for (w, c) in n.iter_mut().zip(nonce.chunks_exact(4)) {
            *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        Ok(Kusumi512 {
            key: k,
            nonce: n,
            pos: Counter64Position::new(counter),
            backend,
            tail: TailKeystream { counter: 0, valid: false, ks: [0; BLOCK] },
        })
    }

    /// The backend this instance uses.
    #[doc(hidden)]
    pub fn backend(&self) -> Checked<Backend> {
        self.backend
    }

    /// The largest position: the keystream bytes from the starting counter to the counter's end.
    #[cfg(feature = "rustcrypto")]
    pub(crate) fn max_position(&self) -> u64 {
        self.pos.max_position()
    }

    /// The AEAD's one-pass sealing loop: encrypts whole vector chunks (8 blocks on AVX2, 16 on AVX-512) of
    /// `data[lead..]` from the current position, and hands `job` the bytes written before each chunk's
    /// predecessor ends (`data[..lead]`, which the caller has encrypted, then the ciphertext) while the next
    /// chunk's keystream is computed (the caller's bytes, rounded down to a [`STITCH_STEP`], during the first
    /// chunk). Returns `(e, h)`: `data[lead..lead + e]` is now encrypted (the position moved by `e`) and `job`
    /// has taken `data[..h]` (`h` a multiple of [`STITCH_STEP`]); the caller hashes
    /// `data[h..lead + e]` and goes on after it. `(0, 0)`, changing nothing, on the portable backend, when
    /// the position is inside a block, or when fewer than two chunks fit (nothing to stitch).
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn xor_stitched<J: Stitch>(
        &mut self,
        data: &mut [u8],
        lead: usize,
        job: &mut J,
    ) -> Result<(usize, usize)> {
        let n = match self.backend.get() {
            Backend::Avx512 => 16,
            Backend::Avx2 => 8,
            Backend::Soft => return Ok((0, 0)),
        };
        let ch = n * BLOCK;
        let chunks = data.len().saturating_sub(lead) / ch;
        if chunks < 2 || lead >= ch {
            return Ok((0, 0));
        }
        let Some(counter) = self.pos.take_aligned(NAME, chunks * ch)? else {
            return Ok((0, 0));
        };
        self.tail.forget();
        let (key, nonce, backend) = (&self.key, &self.nonce, self.backend);
        if n == 16 {
            avx512::xor_stitched(backend, key, nonce, counter, data, lead, chunks, job);
        } else {
            avx2::xor_stitched(backend, key, nonce, counter, data, lead, chunks, job);
        }
        Ok((chunks * ch, lead - lead % STITCH_STEP + (chunks - 1) * ch))
    }

    /// The AEAD's first batch: writes block 0's keystream (the Poly1305 key) to `block0` and XORs the keystream
    /// from counter 1 into the first `h` bytes of `data`, computed together in one vector batch (16 lanes on
    /// AVX-512: up to 15 message blocks; 8 on AVX2: up to 7); returns `h` (0 on the portable backend, which computes
    /// block 0 alone). The position moves past block 0 and those `h` bytes. Only for an instance at position 0
    /// whose position 0 is block counter 0, as the AEAD creates it (asserted: never caller input).
    pub(crate) fn xor_head(&mut self, data: &mut [u8], block0: &mut [u8; BLOCK]) -> Result<usize> {
        let max = match self.backend.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => 15 * BLOCK,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => 7 * BLOCK,
            _ => 0,
        };
        let h = data.len().min(max);
        let counter = self.pos.take_aligned(NAME, BLOCK + h)?;
        assert_eq!(counter, Some(0), "Kusumi512::xor_head: not at the start of counter 0");
        self.tail.forget();
        let (key, nonce, backend, t) = (&self.key, &self.nonce, self.backend, &mut self.tail);
        let head = &mut data[..h];
        t.valid = match backend.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => avx512::xor_head(backend, key, nonce, head, block0, &mut t.ks),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => avx2::xor_head(backend, key, nonce, head, block0, &mut t.ks),
            _ => {
                // No vector batch here (`max` is 0), so there is no head to encrypt: only block 0.
                debug_assert!(head.is_empty());
                *block0 = soft::block(key, nonce, 0);
                false
            }
        };
        // A kept block is the one `head` ends inside.
        t.counter = 1 + (h / BLOCK) as u64;
        Ok(h)
    }

    /// The 100-byte keystream block at an absolute block counter (the AEAD takes its Poly1305 key from block 0).
    pub(crate) fn keystream_block(&self, counter: u64) -> [u8; BLOCK] {
        soft::block(&self.key, &self.nonce, counter)
    }
}

impl StreamCipher for Kusumi512 {
    fn apply_keystream(&mut self, data: &mut [u8]) -> Result<()> {
        let (key, nonce, backend) = (&self.key, &self.nonce, self.backend);
        let tail = core::cell::RefCell::new(&mut self.tail);
        self.pos.apply(
            NAME,
            data,
            |counter| tail.borrow_mut().take(key, nonce, counter),
            |counter, rest| {
                let mut t = tail.borrow_mut();
                t.forget();
                t.valid = xor_blocks(backend, key, nonce, counter, rest, &mut t.ks);
                // `rest` is non-empty; a kept block is its last, partial one.
                t.counter = counter.wrapping_add((rest.len() / BLOCK) as u64);
            },
        )
    }

    fn seek(&mut self, position: u64) -> Result<()> {
        self.pos.seek(NAME, position)
    }

    fn position(&self) -> u64 {
        self.pos.position()
    }
}

impl Drop for Kusumi512 {
    fn drop(&mut self) {
        self.key.zeroize();
        self.nonce.zeroize();
        self.tail.ks.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for Kusumi512 {}

impl core::fmt::Debug for Kusumi512 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Kusumi512 { .. }")
    }
}
