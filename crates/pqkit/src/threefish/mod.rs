//! Threefish-512, the tweakable block cipher of Skein 1.3 (64-byte key, 16-byte tweak, 64-byte block, 72
//! rounds), and Threefish-512-CTR, pqkit's stream mode built on it.
//!
//! ## Threefish-512-CTR
//! Key 64 bytes; nonce 16 bytes, used as the tweak; keystream block `i` is
//! `Threefish-512(key, tweak = nonce, LE64(i) || 56 zero bytes)` with `i` counting from 0. Both are defined, with
//! known-answer vectors, in `docs/kusumi512.md` in the repository.
//!
//! ## Security contract
//! - A (key, nonce) pair must never encrypt two different messages. CTR mode provides no integrity.
//! - The block counter never wraps: keystream past block 2^64 - 1 fails with [`Error::CounterExhausted`].
//! - [`Threefish512`] is a raw block cipher; encrypting more than one block with it directly (ECB) leaks
//!   equal blocks. Use a mode.
//!
//! Backends for CTR: portable, AVX2 (4 blocks at a time, one word of each block per ymm lane) and AVX-512 (8
//! blocks at a time, one word of each block per zmm lane); the one dispatch mechanism ([`crate::dispatch`],
//! through `Backend::detect`) picks the fastest one this CPU runs.

use crate::cipher::{Counter64Position, StreamCipher};
use crate::dispatch::Checked;
use crate::{Error, Result};
use zeroize::Zeroize;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
pub(crate) mod soft;

/// Block length in bytes.
pub const BLOCK_LEN: usize = 64;
/// Key length in bytes.
pub const KEY_LEN: usize = 64;
/// Tweak length in bytes (the CTR nonce).
pub const TWEAK_LEN: usize = 16;

const BLOCK: usize = BLOCK_LEN;
const NAME: &str = "Threefish-512-CTR";

crate::dispatch::backends! {
    /// The Threefish-512-CTR implementations. Public only so tests and benchmarks can force one.
    #[doc(hidden)]
    pub enum Backend for "Threefish-512-CTR" {
        /// Portable Rust, one block at a time.
        Soft: [],
        /// AVX2, 4 blocks at a time.
        Avx2: [AVX2],
        /// AVX-512F, 8 blocks at a time.
        Avx512: [AVX512F],
    }
}

/// XORs the CTR keystream of blocks `counter, counter + 1, ...` into `data` (last block may be partial).
///
/// `backend` is checked ([`crate::dispatch`]): only a backend this CPU runs can be passed.
#[inline]
fn xor_blocks(backend: Checked<Backend>, k: &[u64; 9], t: &[u64; 3], counter: u64, data: &mut [u8]) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => avx512::xor_blocks(backend, k, t, counter, data),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => avx2::xor_blocks(backend, k, t, counter, data),
        _ => soft::xor_blocks(k, t, counter, data),
    }
}

fn words<const N: usize>(b: &[u8]) -> [u64; N] {
    let mut w = [0u64; N];
    for (x, c) in w.iter_mut().zip(b.chunks_exact(8)) {
        *x = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    }
    w
}

/// Threefish-512 with a fixed key and tweak.
#[derive(Clone)]
pub struct Threefish512 {
    k: [u64; 9],
    t: [u64; 3],
}

impl Threefish512 {
    /// Keys the cipher with a 64-byte key and a 16-byte tweak.
    pub fn new(key: &[u8; 64], tweak: &[u8; 16]) -> Self {
        Threefish512 { k: soft::expand_key(&words(key)), t: soft::expand_tweak(&words(tweak)) }
    }

    /// Encrypts one 64-byte block in place.
    pub fn encrypt_block(&self, block: &mut [u8; 64]) {
        let mut v = soft::load_words(block);
        soft::encrypt_words(&self.k, &self.t, &mut v);
        soft::store_words(&v, block);
    }

    /// Decrypts one 64-byte block in place.
    pub fn decrypt_block(&self, block: &mut [u8; 64]) {
        let mut v = soft::load_words(block);
        soft::decrypt_words(&self.k, &self.t, &mut v);
        soft::store_words(&v, block);
    }
}

impl Drop for Threefish512 {
    fn drop(&mut self) {
        self.k.zeroize();
        self.t.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for Threefish512 {}

impl core::fmt::Debug for Threefish512 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Threefish512 { .. }")
    }
}

/// Threefish-512 in counter mode: a seekable stream cipher with a 64-byte key and a 16-byte nonce (the tweak).
///
/// The position counts keystream bytes from the starting block counter (0 for [`Threefish512Ctr::new`]).
#[derive(Clone)]
pub struct Threefish512Ctr {
    k: [u64; 9],
    t: [u64; 3],
    pos: Counter64Position<BLOCK>,
    backend: Checked<Backend>,
}

impl Threefish512Ctr {
    /// Creates an instance at block counter 0. `key` must be 64 bytes and `nonce` 16 bytes.
    pub fn new(key: &[u8], nonce: &[u8]) -> Result<Self> {
        Self::new_with_counter(key, nonce, 0)
    }

    /// Creates an instance whose position 0 is block counter `counter`.
    pub fn new_with_counter(key: &[u8], nonce: &[u8], counter: u64) -> Result<Self> {
        Self::new_with_backend(key, nonce, counter, Backend::detect())
    }

    /// Like [`Threefish512Ctr::new_with_counter`], forcing a backend (for tests and benchmarks); obtain it from
    /// `Backend::available()` or `Backend::X.checked()?`, which is where an unavailable one is refused.
    #[doc(hidden)]
    pub fn new_with_backend(key: &[u8], nonce: &[u8], counter: u64, backend: Checked<Backend>) -> Result<Self> {
        Error::check_length(NAME, "key", KEY_LEN, key.len())?;
        Error::check_length(NAME, "nonce", TWEAK_LEN, nonce.len())?;
        Ok(Threefish512Ctr {
            k: soft::expand_key(&words(key)),
            t: soft::expand_tweak(&words(nonce)),
            pos: Counter64Position::new(counter),
            backend,
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
}

impl StreamCipher for Threefish512Ctr {
    fn apply_keystream(&mut self, data: &mut [u8]) -> Result<()> {
        let (k, t, backend) = (&self.k, &self.t, self.backend);
        self.pos.apply(
            NAME,
            data,
            |counter| {
                let mut v = [counter, 0, 0, 0, 0, 0, 0, 0];
                soft::encrypt_words(k, t, &mut v);
                let mut ks = [0u8; BLOCK];
                soft::store_words(&v, &mut ks);
                v.zeroize();
                ks
            },
            |counter, rest| xor_blocks(backend, k, t, counter, rest),
        )
    }

    fn seek(&mut self, position: u64) -> Result<()> {
        self.pos.seek(NAME, position)
    }

    fn position(&self) -> u64 {
        self.pos.position()
    }
}

impl Drop for Threefish512Ctr {
    fn drop(&mut self) {
        self.k.zeroize();
        self.t.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for Threefish512Ctr {}

impl core::fmt::Debug for Threefish512Ctr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Threefish512Ctr { .. }")
    }
}
