//! The ChaCha stream cipher family: [`ChaCha20`] (RFC 8439), [`ChaCha20Legacy`] (Bernstein's original 64-bit
//! nonce layout), [`XChaCha20`] (draft-irtf-cfrg-xchacha, 192-bit nonce), [`hchacha20`], and the reduced-round
//! [`ChaCha12`] and [`ChaCha8`] used by the ChaCha random number generators.
//!
//! Every cipher implements [`StreamCipher`]: it XORs a keystream into data, keeps its position across calls
//! (consecutive calls of any lengths give exactly the one-shot result) and can seek to any byte position.
//!
//! ## Security contract
//! - A stream cipher provides **confidentiality only**: anyone can flip ciphertext bits undetected. To protect
//!   messages use an AEAD (ChaCha20-Poly1305, XChaCha20-Poly1305) from [`crate::aead`].
//! - A (key, nonce) pair must never encrypt two different messages: the XOR of the two ciphertexts is the XOR
//!   of the plaintexts. Nonces of [`ChaCha20`] (96 bits) and [`ChaCha20Legacy`] (64 bits) are too short to be
//!   drawn at random safely for many messages; use a counter, or [`XChaCha20`] whose 192-bit nonces may be
//!   random.
//! - Limits: [`ChaCha20`] and [`XChaCha20`] have a 32-bit block counter, so at most 2^32 blocks (256 GiB)
//!   from counter 0 under one nonce; the legacy layout and [`ChaCha12`]/[`ChaCha8`] have a 64-bit counter.
//!   A counter never wraps: using keystream past the last block fails with
//!   [`Error::CounterExhausted`] and leaves data and position untouched.
//! - Key material (state and buffered keystream) is zeroized on drop; `Debug` prints no key bytes.
//!
//! ## Backends
//! The one dispatch mechanism ([`crate::dispatch`], through `Backend::detect`) picks the fastest implementation
//! once: AVX-512 (16 blocks per pass, one state word per zmm register, plus one block on the integer units), AVX2
//! (8 blocks per pass in ymm registers, with a stitched AEAD pass except on Zen 3), NEON (4 blocks per pass) or the
//! portable reference. Every backend equals the portable one bit for bit.

use crate::cipher::{Counter64Position, StreamCipher};
use crate::dispatch::Checked;
use crate::{Error, Result};
use zeroize::{Zeroize, Zeroizing};

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "aarch64")]
mod neon;
mod soft;

/// The four constant words of the ChaCha state, "expand 32-byte k" read little-endian.
pub(crate) const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Bytes per ChaCha block.
pub(crate) const BLOCK_LEN: usize = 64;

crate::dispatch::backends! {
    /// An implementation of the ChaCha block function for many blocks at once.
    ///
    /// Crate-internal plumbing, public only so tests and benchmarks can force each backend.
    #[doc(hidden)]
    pub enum Backend for "ChaCha" {
        /// Portable Rust, the reference.
        Soft: [],
        /// x86_64 AVX2: 8 blocks per pass, word-sliced in ymm registers; BMI1 and BMI2 for the scalar Poly1305
        /// of the stitched AEAD loop. A last block of at most 64 bytes in the row layout on the vector units.
        Avx2: [AVX2, BMI1, BMI2],
        /// [`Backend::Avx2`] without the stitched AEAD loops: ChaCha20-Poly1305 runs the 8-block passes and the
        /// vector Poly1305 one after the other on each 4 KiB chunk. Chosen on AMD Zen 3 only, where the stitched
        /// loops lose more than anything else when the core is busy (see docs/chacha.md): averaged over a minute
        /// of seals, the two apart were 6-9% faster (1 KiB, 16 KiB, 1 MiB).
        Avx2Zen3: [AVX2, BMI1, BMI2] avoid_on [Other, Zen4, Zen5],
        /// [`Backend::Avx2`] with ChaCha20-Poly1305's open of whole 8-block passes (512, 1024 or 1536 bytes) in
        /// place, block 0 first (`open_whole_block0_first`): chosen on AMD Zen 4 only.
        Avx2Zen4: [AVX2, BMI1, BMI2] avoid_on [Other, Zen3, Zen5],
        /// [`Backend::Avx2`] with a last block of at most 64 bytes on the integer units: chosen on AMD Zen 5 only,
        /// whose two-cycle vector integer latency doubles the row layout's serial chain (see the module docs).
        Avx2Zen5: [AVX2, BMI1, BMI2] avoid_on [Other, Zen3, Zen4],
        /// x86_64 AVX-512 (F, VL, BW): 32 blocks per pass, word-sliced in zmm registers; BMI2 for the scalar
        /// Poly1305 share of the stitched AEAD loop. A last block of at most 64 bytes in the row layout.
        Avx512: [AVX512F, AVX512VL, AVX512BW, BMI2],
        /// [`Backend::Avx512`] with a call of 65 to 256 bytes in the AVX2 row pass (two blocks per ymm register
        /// set: one set for two blocks, two independent ones for three or four) instead of four blocks in one
        /// chain of zmm rows: chosen on AMD Zen 4 only, which runs each 512-bit operation as two 256-bit halves
        /// (see the AVX-512 module).
        Avx512Zen4: [AVX512F, AVX512VL, AVX512BW, BMI2, AVX2, BMI1] avoid_on [Other, Zen3, Zen5],
        /// [`Backend::Avx512`] with a last block of at most 64 bytes on the integer units: chosen on AMD Zen 5
        /// only (see [`Backend::Avx2Zen5`]).
        Avx512Zen5: [AVX512F, AVX512VL, AVX512BW, BMI2] avoid_on [Other, Zen3, Zen4],
        /// AArch64 NEON: 4 blocks per pass, word-sliced in 128-bit registers.
        Neon: [NEON],
    }
}

/// Runs the ChaCha block function over `data` with the chosen backend.
///
/// `state` is the full 16-word ChaCha input of the first block: constants, 8 key words, then w12..w15.
/// The block counter is the 64-bit value w12 | (w13 << 32), incremented by one per block WITH carry
/// into w13 (for IETF ChaCha20 w13 is nonce word 0; callers guarantee the 32-bit counter never overflows
/// within the call, so the carry never fires there). Processes data.len().div_ceil(64) blocks; a final
/// partial block uses the first bytes of its keystream block. If `xor`, data ^= keystream, else
/// data = keystream (used by the RNG: it must not need a zeroing pass). `rounds` is 20, 12 or 8.
/// Caller guarantees the 64-bit counter does not overflow within the call.
///
/// `backend` is checked ([`crate::dispatch`]): only a backend this CPU runs can be passed.
#[inline]
pub(crate) fn apply_blocks(backend: Checked<Backend>, rounds: usize, state: &[u32; 16], data: &mut [u8], xor: bool) {
    debug_assert!(matches!(rounds, 8 | 12 | 20));
    if data.is_empty() {
        return;
    }
    match backend.get() {
        // The x86 kernels take the counter as a value: two 32-bit loads (see `avx2::counter`), since callers
        // store word 12 alone just before the call.
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512
        | Backend::Avx512Zen4
        | Backend::Avx512Zen5
        | Backend::Avx2
        | Backend::Avx2Zen3
        | Backend::Avx2Zen4
        | Backend::Avx2Zen5 => apply_blocks_at(backend, rounds, state, avx2::counter(state), data, xor),
        #[cfg(target_arch = "aarch64")]
        Backend::Neon => neon::apply_blocks(backend, rounds, state, data, xor),
        _ => soft::apply_blocks(rounds, state, data, xor),
    }
}

/// [`apply_blocks`] from the 64-bit block counter `ctr` (low word in word 12, high word in word 13, with the same
/// carry) instead of words 12 and 13 of `state`, which are not read: for a caller that keeps one state for many
/// calls ([`Core`]), which then never writes that state after creating it. Storing the counter into it before
/// each call put a 4-byte store just ahead of the kernels' loads of the state, which LLVM may merge into one
/// vector load of all 16 words; a load that spans a narrower store is not forwarded from it but waits for the
/// store to reach the cache (on an Intel Xeon, family 6 model 167, that load was the hottest instruction of a
/// 1 KiB AVX-512 call).
#[inline]
pub(crate) fn apply_blocks_at(
    backend: Checked<Backend>,
    rounds: usize,
    state: &[u32; 16],
    ctr: u64,
    data: &mut [u8],
    xor: bool,
) {
    debug_assert!(matches!(rounds, 8 | 12 | 20));
    if data.is_empty() {
        return;
    }
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 | Backend::Avx512Zen4 | Backend::Avx512Zen5 => {
            avx512::apply_blocks(backend, rounds, state, ctr, data, xor)
        }
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 | Backend::Avx2Zen3 | Backend::Avx2Zen4 | Backend::Avx2Zen5 => {
            avx2::apply_blocks(backend, rounds, state, ctr, data, xor)
        }
        _ => {
            let mut s = *state;
            s[12] = ctr as u32;
            s[13] = (ctr >> 32) as u32;
            apply_blocks(backend, rounds, &s, data, xor);
            s.zeroize();
        }
    }
}

/// Bytes per pass of the AVX-512 [`xor20_stitched`]: one 32-block pass.
#[cfg(target_arch = "x86_64")]
pub(crate) const STITCH_CHUNK: usize = 32 * BLOCK_LEN;

/// The stitched AEAD loop of a backend (see [`stitch`]).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) enum StitchLoop {
    /// [`xor20_stitched`]: 32-block passes of [`STITCH_CHUNK`] bytes.
    Avx512(Checked<Backend>),
    /// [`xor20_stitched2`]: 8-block passes of [`STITCH2_CHUNK`] bytes.
    Avx2(Checked<Backend>),
}

/// Bytes per pass of [`xor20_stitched2`]: one 8-block pass.
#[cfg(target_arch = "x86_64")]
pub(crate) const STITCH2_CHUNK: usize = 8 * BLOCK_LEN;

/// The stitched AEAD loop of `backend`, if it has one (not [`Backend::Avx2Zen3`], which has the same passes but
/// keeps ChaCha20 and Poly1305 apart).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn stitch(backend: Checked<Backend>) -> Option<StitchLoop> {
    match backend.get() {
        Backend::Avx512 | Backend::Avx512Zen4 | Backend::Avx512Zen5 => Some(StitchLoop::Avx512(backend)),
        Backend::Avx2 | Backend::Avx2Zen4 | Backend::Avx2Zen5 => Some(StitchLoop::Avx2(backend)),
        // The same passes, ChaCha20 and Poly1305 kept apart on purpose (see its docs).
        Backend::Avx2Zen3 => None,
        _ => None,
    }
}

/// Whether the AVX2 AEAD open of a message of whole 8-block passes (512, 1024 or 1536 bytes) computes block 0 (the
/// Poly1305 key) first, alone, so that each pass can hash its own ciphertext and decrypt it in place (the AEAD's
/// `medium_open_in_place`, which restores the ciphertext on a bad tag), rather than on the integer units during
/// the first pass, each pass then hashing the one before it and writing its keystream to a buffer that is XORed in
/// once the tag checks out (`medium`, the shape of every other medium length). `backend` comes from [`stitch`]
/// (`StitchLoop::Avx2`).
///
/// [`Backend::Avx2Zen4`] and [`Backend::Avx2Zen5`] compute block 0 first. On AMD Zen 4 (AVX2 tier, both shapes
/// and ring interleaved in one process, best of each run): 1 KiB 580-586 ns against 612-626 ns, 1536 bytes
/// 783-800 ns against 838-866 ns, 512 bytes the same (391-414 ns against 393-419 ns). Zen 5's reports measured
/// block 0 first with the keystream buffer (1 KiB open 1.07x ring on the AVX2 tier); decrypting in place drops
/// that buffer's writes, reads and clearing. [`Backend::Avx2`] does not: on an Intel Xeon with AVX-512 (family 6,
/// model 167; AVX2 tier) the other shape opened 512 bytes 12-14% faster, 1 KiB 6-7% and 1536 bytes 4-5% than
/// block 0 first with the buffer, and decrypting in place measured within 2% of the buffer there.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn open_whole_block0_first(backend: Checked<Backend>) -> bool {
    matches!(backend.get(), Backend::Avx2Zen4 | Backend::Avx2Zen5)
}

/// How many of the 128 16-byte blocks of each chunk the AVX-512 [`xor20_stitched`] hands to
/// [`Stitch::scalar_block`] during the vector pass; the rest go to [`Stitch::rest`] after it. A multiple of 8, so
/// the rest is whole 128-byte steps of the IFMA MAC. Measured on Zen 4 with the 32-block pass (pqkit/OpenSSL seal
/// and open, 16 KiB and 1 MiB): 16 gives 1.09-1.13, 8 and 24 1.05-1.11, 32 0.99-1.12, 64 1.00-1.04, 80
/// 0.87-0.97: the interleaved double rounds leave the integer units less room than the old 16-block pass did
/// (which took 40 of 64), and a longer serial Poly1305 chain (about 12-16 cycles per block) slows the vector
/// pass.
#[cfg(target_arch = "x86_64")]
pub(crate) const STITCH_SCALAR_BLOCKS: usize = 16;

/// A job stitched into a ChaCha20 loop ([`xor20_stitched`]): hashing the data as it goes.
#[cfg(target_arch = "x86_64")]
pub(crate) trait Stitch {
    /// One 16-byte block (its two little-endian words) of the scalar share, interleaved with the vector work.
    fn scalar_block(&mut self, m0: u64, m1: u64);
    /// The rest of a chunk after the blocks given to [`scalar_block`](Self::scalar_block), right after the pass.
    fn rest(&mut self, data: &[u8]);
}

/// A job stitched into the AVX2 ChaCha20 loop ([`xor20_stitched2`]): hashing each 512-byte chunk as 32 16-byte
/// blocks on two independent chains (blocks `k` and `16 + k` together), so that two serial multiply chains keep
/// the integer units busy. The accumulators stay in registers for a whole pass.
#[cfg(target_arch = "x86_64")]
pub(crate) trait Stitch2 {
    /// The accumulators of a chunk in progress.
    type Acc: Copy;
    /// Starts a chunk.
    fn begin(&mut self) -> Self::Acc;
    /// Blocks `k` and `16 + k` of the chunk (each as its two little-endian words), `k` = 0..16 in order.
    fn pair(&self, acc: &mut Self::Acc, a: [u64; 2], b: [u64; 2]);
    /// Ends the chunk of 16 pairs.
    fn end(&mut self, acc: Self::Acc);
}

/// ChaCha20 (20 rounds) XORed into `data`, a whole number of [`STITCH_CHUNK`]s, from the first-block input
/// `state`, with a job stitched into the AVX-512 32-block passes: during pass `i` the first
/// [`STITCH_SCALAR_BLOCKS`] 16-byte blocks of a neighbouring chunk go to [`Stitch::scalar_block`], a few after
/// each double round, so that the integer units work while the vector units compute keystream; right after the
/// pass the rest of that chunk goes to [`Stitch::rest`]. With `SEAL` the neighbour is chunk `i - 1` (already
/// encrypted; the job sees every chunk but the last, which the caller must hash afterwards); without, it is
/// chunk `i + 1` (not yet decrypted; every chunk but the first, which the caller must hash beforehand). So the
/// job sees the chunks in order, each whole. `backend` comes from [`stitch`] (`StitchLoop::Avx512`).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn xor20_stitched<const SEAL: bool, J: Stitch>(
    backend: Checked<Backend>,
    state: &[u32; 16],
    data: &mut [u8],
    job: &mut J,
) {
    avx512::xor20_stitched::<SEAL, J>(backend, state, data, job)
}

/// [`xor20_stitched`] for the AVX2 loop: chunks of [`STITCH2_CHUNK`] bytes, every 16-byte block of the
/// neighbouring chunk hashed by the job's two scalar chains during the pass ([`Stitch2`]). `backend` comes from
/// [`stitch`] (`StitchLoop::Avx2`).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn xor20_stitched2<const SEAL: bool, J: Stitch2>(
    backend: Checked<Backend>,
    state: &[u32; 16],
    data: &mut [u8],
    job: &mut J,
) {
    avx2::xor20_stitched::<SEAL, J>(backend, state, data, job)
}

/// What the integer units do during one [`ks_pass2`].
#[cfg(target_arch = "x86_64")]
pub(crate) enum PassSide<'a, J> {
    /// Hash every 16-byte block of these 512 bytes with the job ([`Stitch2`]), as 16 pairs on two chains.
    Hash(&'a [u8], &'a mut J),
    /// Hash the pass's own `out` (512 bytes, `xor` set) as [`PassSide::Hash`] would, every block read during the
    /// double rounds, before the pass XORs its keystream into it: an open in place, which hashes the ciphertext
    /// the pass decrypts.
    HashOut(&'a mut J),
    /// Compute the keystream block of the pass's `state` itself (its own counter, `skip` not applied) as words,
    /// feed-forward added, one scalar double round after each of the pass's: the AEAD's block 0, whose first half
    /// keys Poly1305, at no vector cost.
    Block(&'a mut [u32; 16]),
}

/// One AVX2 keystream pass for the AEAD's medium-length path: the 20-round keystream of the
/// `out.len().div_ceil(64)` blocks from the block `skip` blocks after `state`'s (the counter carried as in
/// [`apply_blocks`]; `out` is 1 to 512 bytes: up to 4 blocks in the row layout, else one 8-block pass) XORed into
/// `out` if `xor`, else written over it, with `side` done on the integer units during the pass ([`PassSide`]).
/// `backend` comes from [`stitch`] (`StitchLoop::Avx2`).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn ks_pass2<J: Stitch2>(
    backend: Checked<Backend>,
    state: &[u32; 16],
    skip: u64,
    out: &mut [u8],
    xor: bool,
    side: PassSide<'_, J>,
) {
    avx2::ks_pass(backend, state, skip, out, xor, side)
}

/// HChaCha20 (draft-irtf-cfrg-xchacha §2.2): derives a 256-bit subkey from a key and a 128-bit input.
///
/// The state is set up like a ChaCha20 block with `input` in words 12..15, the 20 rounds run, and words
/// 0..3 and 12..15 are returned (no feed-forward). It is the first step of [`XChaCha20`]; on its own it is a
/// key-derivation step, not a cipher.
pub fn hchacha20(key: &[u8; 32], input: &[u8; 16]) -> [u8; 32] {
    let mut state = [0u32; 16];
    state[..4].copy_from_slice(&CONSTANTS);
    for (w, chunk) in state[4..12].iter_mut().zip(key.chunks_exact(4)) {
        *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    for (w, chunk) in state[12..].iter_mut().zip(input.chunks_exact(4)) {
        *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    soft::rounds(&mut state, 20);
    let mut out = [0u8; 32];
    for (i, &w) in state[..4].iter().chain(&state[12..]).enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    state.zeroize();
    out
}

/// The shared engine of every public type: the initial state, the backend, and the position (with the
/// keystream of a partly used block) kept by the shared [`Counter64Position`].
#[derive(Clone)]
struct Core {
    /// The ChaCha input of the starting block (counter words hold the starting counter).
    state: [u32; 16],
    pos: Counter64Position<BLOCK_LEN>,
    backend: Checked<Backend>,
    rounds: u8,
    /// True for the 32-bit counter of the IETF layout (word 12 only), false for the 64-bit legacy counter
    /// (words 12 and 13).
    ietf: bool,
    name: &'static str,
}

/// The first-block input for [`apply_blocks`] in the IETF layout (RFC 8439): constants, key, 32-bit `counter`
/// in word 12, the 96-bit nonce in words 13..15.
pub(crate) fn state_ietf(key: &[u8; 32], counter: u32, nonce: &[u8; 12]) -> [u32; 16] {
    let mut state = [0u32; 16];
    fill_state(&mut state, key, counter as u64, nonce, 13);
    state
}

/// The first-block input for [`apply_blocks`] in the legacy layout (also the ChaCha RNGs'): constants, key,
/// 64-bit `counter` in words 12..13, the 64-bit nonce in words 14..15.
pub(crate) fn state_legacy(key: &[u8; 32], counter: u64, nonce: &[u8; 8]) -> [u32; 16] {
    let mut state = [0u32; 16];
    fill_state(&mut state, key, counter, nonce, 14);
    state
}

fn fill_state(state: &mut [u32; 16], key: &[u8; 32], counter: u64, nonce: &[u8], first_nonce_word: usize) {
    state[..4].copy_from_slice(&CONSTANTS);
    for (w, chunk) in state[4..12].iter_mut().zip(key.chunks_exact(4)) {
        *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    state[12] = counter as u32;
    state[13] = (counter >> 32) as u32;
    for (w, chunk) in state[first_nonce_word..].iter_mut().zip(nonce.chunks_exact(4)) {
        *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
}

impl Core {
    /// `state` is the first-block input from [`state_ietf`] (`ietf`) or [`state_legacy`].
    fn new(name: &'static str, rounds: u8, state: [u32; 16], ietf: bool) -> Core {
        let pos = if ietf {
            Counter64Position::with_last(state[12] as u64, u32::MAX as u64)
        } else {
            Counter64Position::new(state[12] as u64 | (state[13] as u64) << 32)
        };
        Core { state, pos, backend: Backend::detect(), rounds, ietf, name }
    }

    fn apply(&mut self, data: &mut [u8]) -> Result<()> {
        let Core { state, pos, backend, rounds, ietf, name } = self;
        let (backend, rounds, state) = (*backend, *rounds as usize, &*state);
        // The 64-bit counter of block `counter` as `apply_blocks_at` takes it: in the IETF layout word 13 is the
        // nonce's first word, above the 32-bit counter (which `Counter64Position` keeps below 2^32).
        let ctr = |counter: u64| if *ietf { counter | (state[13] as u64) << 32 } else { counter };
        // The kept state is never written after `new`: every call passes its counter apart (`apply_blocks_at`).
        // At a block boundary (every call of a caller that passes whole blocks, and every first call) the data is
        // one bulk pass from the current counter.
        if !data.is_empty()
            && let Some(counter) = pos.take_aligned(name, data.len())?
        {
            apply_blocks_at(backend, rounds, state, ctr(counter), data, true);
            return Ok(());
        }
        let block = |counter: u64| {
            let mut ks = [0u8; BLOCK_LEN];
            apply_blocks_at(backend, rounds, state, ctr(counter), &mut ks, false);
            ks
        };
        // One pass over the block-aligned rest, a partial last block included.
        let bulk = |counter: u64, rest: &mut [u8]| apply_blocks_at(backend, rounds, state, ctr(counter), rest, true);
        pos.apply(name, data, block, bulk)
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        self.state.zeroize();
    }
}

fn key32(name: &'static str, key: &[u8]) -> Result<[u8; 32]> {
    key.try_into().map_err(|_| Error::length(name, "key", 32, key.len()))
}

fn nonce_n<const N: usize>(name: &'static str, nonce: &[u8]) -> Result<[u8; N]> {
    nonce.try_into().map_err(|_| Error::length(name, "nonce", N, nonce.len()))
}

macro_rules! stream_cipher_type {
    ($(#[$doc:meta])* $ty:ident, $name:expr) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $ty(Core);

        impl $ty {
            /// The algorithm's name, as used in error messages.
            pub const NAME: &'static str = $name;

            /// Forces a backend (for tests and benchmarks); obtain it from `Backend::available()` or
            /// `Backend::X.checked()?`.
            #[doc(hidden)]
            pub fn with_backend(mut self, backend: Checked<Backend>) -> Self {
                self.0.backend = backend;
                self
            }

            /// The backend this instance uses.
            #[doc(hidden)]
            pub fn backend(&self) -> Checked<Backend> {
                self.0.backend
            }

            /// The largest position: the keystream bytes from the starting counter to the counter's end.
            #[cfg(feature = "rustcrypto")]
            pub(crate) fn max_position(&self) -> u64 {
                self.0.pos.max_position()
            }
        }

        impl StreamCipher for $ty {
            fn apply_keystream(&mut self, data: &mut [u8]) -> Result<()> {
                self.0.apply(data)
            }

            fn seek(&mut self, position: u64) -> Result<()> {
                self.0.pos.seek(self.0.name, position)
            }

            fn position(&self) -> u64 {
                self.0.pos.position()
            }
        }

        impl zeroize::ZeroizeOnDrop for $ty {}

        impl core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($ty), " { .. }"))
            }
        }
    };
}

stream_cipher_type! {
    /// ChaCha20 as in RFC 8439: 256-bit key, 96-bit nonce, 32-bit block counter.
    ///
    /// Under one (key, nonce) at most 2^32 − start blocks (256 GiB from counter 0) are available; the nonce must
    /// never repeat under a key. Provides no integrity: prefer ChaCha20-Poly1305 for messages.
    ChaCha20, "ChaCha20"
}

impl ChaCha20 {
    /// Key length in bytes.
    pub const KEY_LEN: usize = 32;
    /// Nonce length in bytes.
    pub const NONCE_LEN: usize = 12;

    /// A cipher starting at block counter 0. `key` must be 32 bytes, `nonce` 12.
    pub fn new(key: &[u8], nonce: &[u8]) -> Result<Self> {
        Self::new_with_counter(key, nonce, 0)
    }

    /// A cipher starting at block `counter`; positions are relative to it.
    pub fn new_with_counter(key: &[u8], nonce: &[u8], counter: u32) -> Result<Self> {
        let k = Zeroizing::new(key32(Self::NAME, key)?);
        let n = nonce_n::<12>(Self::NAME, nonce)?;
        let core = Core::new(Self::NAME, 20, state_ietf(&k, counter, &n), true);
        Ok(ChaCha20(core))
    }
}

stream_cipher_type! {
    /// The original ChaCha20 of Bernstein: 256-bit key, 64-bit nonce, 64-bit block counter.
    ///
    /// Equal to [`ChaCha20`] with nonce `counter_high || nonce` while the counter stays below 2^32. The 64-bit
    /// nonce must never repeat under a key (too short to be drawn at random for many messages).
    ChaCha20Legacy, "ChaCha20 (legacy)"
}

stream_cipher_type! {
    /// XChaCha20 (draft-irtf-cfrg-xchacha): 256-bit key, 192-bit nonce, 32-bit block counter.
    ///
    /// The subkey is `hchacha20(key, nonce[0..16])`; the keystream is [`ChaCha20`] under that subkey with nonce
    /// `0^32 || nonce[16..24]`. The nonce is long enough to be drawn at random for every message. Same limits as
    /// [`ChaCha20`].
    XChaCha20, "XChaCha20"
}

impl XChaCha20 {
    /// Key length in bytes.
    pub const KEY_LEN: usize = 32;
    /// Nonce length in bytes.
    pub const NONCE_LEN: usize = 24;

    /// A cipher starting at block counter 0. `key` must be 32 bytes, `nonce` 24.
    pub fn new(key: &[u8], nonce: &[u8]) -> Result<Self> {
        Self::new_with_counter(key, nonce, 0)
    }

    /// A cipher starting at block `counter`; positions are relative to it.
    pub fn new_with_counter(key: &[u8], nonce: &[u8], counter: u32) -> Result<Self> {
        let k = Zeroizing::new(key32(Self::NAME, key)?);
        let nonce = nonce_n::<24>(Self::NAME, nonce)?;
        let mut hin = [0u8; 16];
        hin.copy_from_slice(&nonce[..16]);
        let subkey = Zeroizing::new(hchacha20(&k, &hin));
        let mut n = [0u8; 12];
        n[4..].copy_from_slice(&nonce[16..]);
        let core = Core::new(Self::NAME, 20, state_ietf(&subkey, counter, &n), true);
        Ok(XChaCha20(core))
    }
}

stream_cipher_type! {
    /// ChaCha with 12 rounds, legacy layout (64-bit nonce, 64-bit block counter), as used by `rand_chacha`'s
    /// `ChaCha12Rng`. For random number generation; for encryption use [`ChaCha20`].
    ChaCha12, "ChaCha12"
}

stream_cipher_type! {
    /// ChaCha with 8 rounds, legacy layout (64-bit nonce, 64-bit block counter), as used by `rand_chacha`'s
    /// `ChaCha8Rng`. For random number generation; for encryption use [`ChaCha20`].
    ChaCha8, "ChaCha8"
}

/// The constructors of the legacy layout (64-bit nonce, 64-bit block counter) with `$rounds` rounds.
macro_rules! legacy_ctors {
    ($ty:ident, $rounds:expr) => {
        impl $ty {
            /// Key length in bytes.
            pub const KEY_LEN: usize = 32;
            /// Nonce length in bytes.
            pub const NONCE_LEN: usize = 8;

            /// A cipher starting at block counter 0. `key` must be 32 bytes, `nonce` 8.
            pub fn new(key: &[u8], nonce: &[u8]) -> Result<Self> {
                Self::new_with_counter(key, nonce, 0)
            }

            /// A cipher starting at block `counter`; positions are relative to it.
            pub fn new_with_counter(key: &[u8], nonce: &[u8], counter: u64) -> Result<Self> {
                let k = Zeroizing::new(key32(Self::NAME, key)?);
                let n = nonce_n::<8>(Self::NAME, nonce)?;
                let state = state_legacy(&k, counter, &n);
                let core = Core::new(Self::NAME, $rounds, state, false);
                Ok($ty(core))
            }
        }
    };
}

legacy_ctors!(ChaCha20Legacy, 20);
legacy_ctors!(ChaCha12, 12);
legacy_ctors!(ChaCha8, 8);

#[cfg(test)]
mod tests {
    use super::*;

    /// Which backends take a stitched AEAD loop: `Avx2Zen3` never does (the Zen 3 choice is exactly that), the
    /// other vector backends do. The results are the same either way, so only this pins the choice.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn stitched_loop_per_backend() {
        for b in Backend::available() {
            let s = stitch(b);
            match b.get() {
                Backend::Avx512 | Backend::Avx512Zen4 | Backend::Avx512Zen5 => {
                    assert!(matches!(s, Some(StitchLoop::Avx512(_))))
                }
                Backend::Avx2 | Backend::Avx2Zen4 | Backend::Avx2Zen5 => {
                    assert!(matches!(s, Some(StitchLoop::Avx2(_))))
                }
                other => assert!(s.is_none(), "{other:?}"),
            }
            let first = matches!(b.get(), Backend::Avx2Zen4 | Backend::Avx2Zen5);
            assert_eq!(open_whole_block0_first(b), first, "{:?}", b.get());
        }
    }

    #[test]
    fn quarter_round_rfc8439_2_1_1() {
        let (a, b, c, d) = soft::quarter_round(0x11111111, 0x01020304, 0x9b8d6f43, 0x01234567);
        assert_eq!((a, b, c, d), (0xea2a92f4, 0xcb1cf8ce, 0x4581472e, 0x5881c4bb));
    }

    #[test]
    fn quarter_round_on_state_rfc8439_2_2_1() {
        let mut s: [u32; 16] = [
            0x879531e0, 0xc5ecf37d, 0x516461b1, 0xc9a62f8a, 0x44c20ef3, 0x3390af7f, 0xd9fc690b, 0x2a5f714c, 0x53372767,
            0xb00a5631, 0x974c541a, 0x359e9963, 0x5c971061, 0x3d631689, 0x2098d9d6, 0x91dbd320,
        ];
        let (a, b, c, d) = soft::quarter_round(s[2], s[7], s[8], s[13]);
        (s[2], s[7], s[8], s[13]) = (a, b, c, d);
        let want: [u32; 16] = [
            0x879531e0, 0xc5ecf37d, 0xbdb886dc, 0xc9a62f8a, 0x44c20ef3, 0x3390af7f, 0xd9fc690b, 0xcfacafd2, 0xe46bea80,
            0xb00a5631, 0x974c541a, 0x359e9963, 0x5c971061, 0xccc07c79, 0x2098d9d6, 0x91dbd320,
        ];
        assert_eq!(s, want);
    }

    #[test]
    fn rounds_rfc8439_2_3_2() {
        // State after 20 rounds, before the feed-forward.
        let mut s: [u32; 16] = [
            0x61707865, 0x3320646e, 0x79622d32, 0x6b206574, 0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c, 0x13121110,
            0x17161514, 0x1b1a1918, 0x1f1e1d1c, 0x00000001, 0x09000000, 0x4a000000, 0x00000000,
        ];
        soft::rounds(&mut s, 20);
        let want: [u32; 16] = [
            0x837778ab, 0xe238d763, 0xa67ae21e, 0x5950bb2f, 0xc4f2d0c7, 0xfc62bb2f, 0x8fa018fc, 0x3f5ec7b7, 0x335271c2,
            0xf29489f3, 0xeabda8fc, 0x82e46ebd, 0xd19c12b4, 0xb04e16de, 0x9e83d0cb, 0x4e3c50a2,
        ];
        assert_eq!(s, want);
    }

    /// Every backend's `apply_blocks` equals the portable one, for 1..=40 blocks with and without a partial
    /// tail, both modes, all round counts, and counters that carry from word 12 into word 13; so does
    /// `apply_blocks_at` given the counter apart and other values in words 12 and 13.
    #[test]
    fn apply_blocks_every_backend_equals_soft() {
        extern crate alloc;
        use alloc::vec;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for backend in Backend::available() {
            for rounds in [20, 12, 8] {
                for blocks in 1..=40usize {
                    for cut in [0usize, 1, 17, 63] {
                        let len = blocks * 64 - cut;
                        for w12 in [0u32, 0xFFFF_FFF0, 0xFFFF_FFFF, next() as u32] {
                            let mut state = [0u32; 16];
                            state.iter_mut().for_each(|w| *w = next() as u32);
                            state[12] = w12;
                            if w12 == 0xFFFF_FFFF {
                                state[13] = u32::MAX - 1;
                            }
                            let mut input = vec![0u8; len];
                            input.iter_mut().for_each(|b| *b = next() as u8);
                            for xor in [true, false] {
                                let mut want = input.clone();
                                soft::apply_blocks(rounds, &state, &mut want, xor);
                                let mut got = input.clone();
                                apply_blocks(backend, rounds, &state, &mut got, xor);
                                assert!(got == want, "{backend:?} rounds {rounds} len {len} w12 {w12:#x} xor {xor}");
                                // The same counter passed apart, words 12 and 13 of the state overwritten: the
                                // kernels must read neither.
                                let ctr = state[12] as u64 | (state[13] as u64) << 32;
                                let mut other = state;
                                other[12] = !state[12];
                                other[13] = next() as u32;
                                let mut at = input.clone();
                                apply_blocks_at(backend, rounds, &other, ctr, &mut at, xor);
                                assert!(at == want, "at: {backend:?} rounds {rounds} len {len} w12 {w12:#x} xor {xor}");
                            }
                        }
                    }
                }
            }
        }
        // The portable reference itself: its counter carries into word 13.
        let mut s = [0u32; 16];
        s[12] = u32::MAX;
        s[13] = 5;
        let mut two = [0u8; 128];
        soft::apply_blocks(20, &s, &mut two, false);
        let mut s2 = s;
        s2[12] = 0;
        s2[13] = 6;
        assert_eq!(two[64..], soft::block(&s2, 20)[..]);
    }

    #[test]
    fn state_helpers_match_rfc8439_2_3_2_layout() {
        let key: [u8; 32] = core::array::from_fn(|i| i as u8);
        let s = state_ietf(&key, 1, &[0, 0, 0, 9, 0, 0, 0, 0x4a, 0, 0, 0, 0]);
        let want: [u32; 16] = [
            0x61707865, 0x3320646e, 0x79622d32, 0x6b206574, 0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c, 0x13121110,
            0x17161514, 0x1b1a1918, 0x1f1e1d1c, 0x00000001, 0x09000000, 0x4a000000, 0x00000000,
        ];
        assert_eq!(s, want);
        let l = state_legacy(&key, 0x0900_0000_0000_0001, &[0, 0, 0, 0x4a, 0, 0, 0, 0]);
        assert_eq!(l, want);
    }

    #[test]
    fn backend_detection_is_consistent() {
        let best = Backend::detect();
        assert!(best.get().is_available());
        assert_eq!(Backend::available().next().map(Checked::get), Some(Backend::Soft));
        assert!(Backend::available().any(|b| b == best));
    }
}
