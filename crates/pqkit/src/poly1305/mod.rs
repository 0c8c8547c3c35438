//! Poly1305, the one-time authenticator of RFC 8439 §2.5.
//!
//! ```
//! use pqkit::poly1305::{poly1305, Poly1305};
//! let key = [7u8; 32];
//! let tag = poly1305(&key, b"message");
//! let mut mac = Poly1305::new(&key);
//! mac.update(b"mess");
//! mac.update(b"age");
//! assert!(mac.verify(&tag).is_ok());
//! ```
//!
//! ## Security contract
//! - A Poly1305 key authenticates **one** message. Two tags under the same key reveal enough to forge
//!   further messages. Derive a fresh key per message (as ChaCha20-Poly1305 does from its nonce); a key must
//!   be secret and unpredictable.
//! - Check tags with [`Poly1305::verify`], which compares in constant time; never compare with `==`.
//! - A forgery succeeds with probability at most about `8·⌈L/16⌉ / 2^106` for an `L`-byte message.
//!
//! ## Implementation
//! The state keeps partial 16-byte blocks in a small buffer and hands runs of whole blocks, uncopied, to one
//! backend chosen once by `Backend::detect` (the one dispatch mechanism, [`crate::dispatch`]; a backend forced by
//! name that this CPU cannot run is an [`Error::BackendUnavailable`] from `Backend::X.checked()`):
//! - `soft`: portable radix-2^64 arithmetic (two limbs plus a few bits) with `u128` products;
//! - `avx2`: AVX2, radix 2^26, four blocks per step in the lanes of `ymm` registers with `r^1..r^4`, two
//!   interleaved accumulators stepping by `r^8` (one alone is bound by its own dependency chain);
//! - `ifma`: AVX-512 IFMA (52-bit multiply-add), radix 2^44, eight blocks per step with `r^1..r^8`.
//!
//! All backends produce bit-identical results; the SIMD ones fall back to `soft` for short inputs and tails.
//! A SIMD backend only pays off on runs of whole blocks of a few hundred bytes or more (IFMA from 384 bytes,
//! 256 once a state has its powers of `r`; AVX2 from 512), so streaming callers should hand over large
//! pieces. Nothing here allocates, and the key, accumulator, powers of `r` and buffer are zeroized on drop.

mod soft;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod ifma;

use crate::dispatch::Checked;
use crate::{Error, Result};

/// Poly1305 key length in bytes (`r || s`).
pub const KEY_LEN: usize = 32;
/// Poly1305 tag length in bytes.
pub const TAG_LEN: usize = 16;

const ALGORITHM: &str = "Poly1305";

crate::dispatch::backends! {
    /// The implementation a [`Poly1305`] state runs on. Chosen once per state; public only for tests and
    /// benchmarks, which force each one with a backend checked by [`crate::dispatch`].
    #[doc(hidden)]
    pub enum Backend for "Poly1305" {
        /// Portable 64-bit code.
        Soft: [],
        /// AVX2 machines: radix 2^26 in `ymm` lanes (see `avx2.rs`). BMI1 and BMI2 stay in the list (every
        /// AVX2 CPU has them; the scalar `mulx` backend this replaced needed them).
        Avx2: [AVX2, BMI1, BMI2],
        /// AVX-512 IFMA, eight blocks at a time. `ifma.rs` enables AVX-512 F and IFMA; VL (on every CPU with
        /// IFMA) stays required, as it was before the dispatch mechanism.
        Ifma: [AVX512F, AVX512VL, AVX512IFMA],
    }
}

/// Length of the backend table of powers of `r` (the largest need: AVX2's `r^16` and `r^8` in radix 2^44 and
/// `r^1..r^4`, `r^8` in radix 2^26, 31 words; IFMA's `r^1..r^8` and `r^16`, 3 limbs each, take 27).
pub(crate) const POWERS_LEN: usize = 31;

/// The arithmetic state shared with the backends.
///
/// `h` is the accumulator and `r` the clamped key half, both in the radix-2^64 form of `soft.rs`; `powers` is a
/// backend-specific table of powers of `r`, filled on the first long input (`powers_ready`; the AVX2 backend fills
/// its scalar `r^16` separately, only for the AEAD's stitched loop, and marks it with `r16_ready`).
pub(crate) struct Core {
    pub(crate) h: [u64; 3],
    pub(crate) r: [u64; 2],
    pub(crate) powers: [u64; POWERS_LEN],
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) powers_ready: bool,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) r16_ready: bool,
}

impl Core {
    /// Absorbs whole blocks (`data.len()` a multiple of 16) on `backend`.
    #[inline]
    fn blocks(&mut self, backend: Checked<Backend>, data: &[u8]) {
        match backend.get() {
            Backend::Soft => soft::blocks(&mut self.h, &self.r, data),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => avx2::blocks(backend, self, data),
            #[cfg(target_arch = "x86_64")]
            Backend::Ifma => ifma::blocks(backend, self, data),
            #[cfg(not(target_arch = "x86_64"))]
            _ => soft::blocks(&mut self.h, &self.r, data),
        }
    }
}

/// An incremental Poly1305 computation under one one-time key.
///
/// Feed the message with [`update`](Self::update) (any split gives the same tag), then call
/// [`finalize`](Self::finalize) or [`verify`](Self::verify). See the [module docs](self) for the security
/// contract: **one key, one message**.
pub struct Poly1305 {
    core: Core,
    s: [u64; 2],
    buf: [u8; 16],
    buf_len: usize,
    backend: Checked<Backend>,
}

impl Poly1305 {
    /// Starts a computation under `key` (`r || s`, RFC 8439 §2.5) on the fastest available backend.
    // Kept out of line: inlined, it grows the AEADs' per-message set-up past LLVM's inlining threshold there,
    // and their short-message path measured 10% slower (64-byte ChaCha20-Poly1305 seal, 245 against 222 ns).
    #[inline(never)]
    pub fn new(key: &[u8; KEY_LEN]) -> Self {
        Self::new_with_backend(key, Backend::detect())
    }

    /// Like [`new`](Self::new), for a key given as a slice.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] unless `key` is exactly 32 bytes.
    pub fn new_from_slice(key: &[u8]) -> Result<Self> {
        let key: &[u8; KEY_LEN] = key.try_into().map_err(|_| Error::length(ALGORITHM, "key", KEY_LEN, key.len()))?;
        Ok(Self::new(key))
    }

    /// Starts a computation on a chosen backend (for tests and benchmarks), checked by `Backend::X.checked()`
    /// or taken from `Backend::available()`.
    #[doc(hidden)]
    pub fn new_with_backend(key: &[u8; KEY_LEN], backend: Checked<Backend>) -> Self {
        Poly1305 {
            core: Core {
                h: [0; 3],
                r: soft::load_r(key),
                powers: [0; POWERS_LEN],
                powers_ready: false,
                r16_ready: false,
            },
            s: soft::load_s(key),
            buf: [0; 16],
            buf_len: 0,
            backend,
        }
    }

    /// Absorbs `data`. Calling it several times is the same as calling it once on the concatenation.
    pub fn update(&mut self, mut data: &[u8]) {
        if self.buf_len > 0 {
            let take = (16 - self.buf_len).min(data.len());
            self.buf[self.buf_len..self.buf_len + take].copy_from_slice(&data[..take]);
            self.buf_len += take;
            data = &data[take..];
            if self.buf_len < 16 {
                return;
            }
            self.core.blocks(self.backend, &self.buf);
            self.buf_len = 0;
        }
        let whole = data.len() & !15;
        if whole > 0 {
            self.core.blocks(self.backend, &data[..whole]);
        }
        let rest = &data[whole..];
        // Skipped when empty: a variable-length copy is a `memcpy` call, measurable on short messages.
        if !rest.is_empty() {
            self.buf[..rest.len()].copy_from_slice(rest);
        }
        self.buf_len = rest.len();
    }

    /// Absorbs `data`, then zero bytes up to the next multiple of 16 of the total input so far (nothing if it
    /// already is one). This is `pad16` of the RFC 8439 AEAD construction.
    pub fn update_padded(&mut self, data: &[u8]) {
        self.update(data);
        if self.buf_len > 0 {
            self.buf[self.buf_len..].fill(0);
            self.core.blocks(self.backend, &self.buf);
            self.buf_len = 0;
        }
    }

    /// Absorbs the buffered short block, if any (with its `0x01` terminator and without the 2^128 bit).
    fn flush_last(&mut self) {
        if self.buf_len > 0 {
            let mut block = [0u8; 16];
            block[..self.buf_len].copy_from_slice(&self.buf[..self.buf_len]);
            block[self.buf_len] = 1;
            soft::last_block(&mut self.core.h, &self.core.r, &block);
            crate::ct::wipe(&mut block);
            self.buf_len = 0;
        }
    }

    /// Returns the 16-byte tag `(h + s) mod 2^128` (RFC 8439).
    pub fn finalize(mut self) -> [u8; TAG_LEN] {
        self.tag()
    }

    /// [`finalize`](Self::finalize) in place, for callers that drop the state right after: a state passed by
    /// value to a call that is not inlined is copied first (a `memcpy` of the whole state, with its powers of
    /// `r`), measurable on short messages.
    #[inline]
    pub(crate) fn tag(&mut self) -> [u8; TAG_LEN] {
        self.flush_last();
        soft::finalize(self.core.h, self.s)
    }

    /// Computes the tag and compares it with `tag` in constant time.
    ///
    /// # Errors
    /// [`Error::AuthenticationFailed`] if the tags differ or `tag` is not 16 bytes long.
    pub fn verify(self, tag: &[u8]) -> Result<()> {
        let mut expected = self.finalize();
        // The outcome is returned: public.
        let ok = crate::ct::declassify(crate::ct::eq(&expected, tag));
        crate::ct::wipe(&mut expected);
        if ok { Ok(()) } else { Err(Error::AuthenticationFailed { algorithm: ALGORITHM }) }
    }

    /// Legacy finish of the .NET "GreenfieldPQC" Kusumi512Poly1305: `((h + s) mod (2^130 - 5)) mod 2^128`,
    /// where `h` is the fully reduced accumulator, instead of RFC 8439's `(h + s) mod 2^128`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn finalize_mod_p(mut self) -> [u8; TAG_LEN] {
        self.flush_last();
        soft::finalize_mod_p(self.core.h, self.s)
    }
}

impl Drop for Poly1305 {
    fn drop(&mut self) {
        crate::ct::wipe(&mut self.core.h);
        crate::ct::wipe(&mut self.core.r);
        if self.core.powers_ready || self.core.r16_ready {
            crate::ct::wipe(&mut self.core.powers);
        }
        crate::ct::wipe(&mut self.s);
        crate::ct::wipe(&mut self.buf);
    }
}

impl core::fmt::Debug for Poly1305 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Poly1305").field("backend", &self.backend).finish_non_exhaustive()
    }
}

/// The key of two-chain scalar hashing of 32-block runs inside a stitched cipher loop: `r` and `r^16`. A run is
/// [`Poly1305::chain2_begin`], sixteen [`Chain2::pair`]s and [`Poly1305::chain2_end`]; between them the two
/// accumulators live in the caller's registers. Zeroized on drop.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Chain2 {
    r: [u64; 2],
    /// `r^16` in radix 2^44, which joins the two accumulators at the end of a run.
    r16: [u64; 3],
}

/// The two accumulators of a run in progress (see [`Chain2`]).
#[cfg(target_arch = "x86_64")]
pub(crate) type Chain2Acc = [[u64; 3]; 2];

#[cfg(target_arch = "x86_64")]
impl Drop for Chain2 {
    fn drop(&mut self) {
        crate::ct::wipe(&mut self.r);
        crate::ct::wipe(&mut self.r16);
    }
}

#[cfg(target_arch = "x86_64")]
impl Chain2 {
    /// Absorbs block `k` (words `a`) of the run on the first accumulator and block `16 + k` (`b`) on the second,
    /// `k` = 0..16 in order.
    #[inline(always)]
    pub(crate) fn pair(&self, acc: &mut Chain2Acc, a: [u64; 2], b: [u64; 2]) {
        acc[0] = soft::absorb_words(acc[0], self.r, a[0], a[1], 1);
        acc[1] = soft::absorb_words(acc[1], self.r, b[0], b[1], 1);
    }
}

#[cfg(target_arch = "x86_64")]
impl Poly1305 {
    /// The key for two-chain runs (computes `r^16`).
    pub(crate) fn chain2(&mut self) -> Chain2 {
        let r16 = match self.backend.get() {
            // Shared with the backend's own runs.
            Backend::Avx2 => avx2::r16(&mut self.core),
            _ => soft::r16_44(&self.core.r),
        };
        Chain2 { r: self.core.r, r16 }
    }

    /// The key for two-chain runs when the vector backend will not run on this state after them (the AEAD's
    /// medium path, which hashes everything on the chains or the scalar code): `r^16` alone, four squarings,
    /// without the vector backend's table of powers, which [`chain2`](Self::chain2) fills for the backend's own
    /// runs after the chains.
    pub(crate) fn chain2_alone(&self) -> Chain2 {
        Chain2 { r: self.core.r, r16: soft::r16_44(&self.core.r) }
    }

    /// Absorbs one 32-block run (512 bytes) on the two chains on its own, outside a cipher loop: the run that
    /// follows a stitched loop's last pass. Same preconditions as [`scalar_block`](Self::scalar_block).
    pub(crate) fn chain2_run(&mut self, chain: &Chain2, run: &[u8; 512]) {
        let word = |j: usize, i: usize| u64::from_le_bytes(run[16 * j + 8 * i..][..8].try_into().unwrap());
        let mut acc = self.chain2_begin();
        for k in 0..16 {
            chain.pair(&mut acc, [word(k, 0), word(k, 1)], [word(16 + k, 0), word(16 + k, 1)]);
        }
        self.chain2_end(chain, acc);
    }

    /// Starts a 32-block run: the accumulator and a zero second one. Same preconditions as
    /// [`scalar_block`](Self::scalar_block).
    #[inline(always)]
    pub(crate) fn chain2_begin(&self) -> Chain2Acc {
        debug_assert_eq!(self.buf_len, 0);
        [self.core.h, [0; 3]]
    }

    /// Ends a run of 16 pairs: `h = h_1 · r^16 + h_2`.
    #[inline(always)]
    pub(crate) fn chain2_end(&mut self, chain: &Chain2, acc: Chain2Acc) {
        self.core.h = soft::add_reduce(soft::mul_by44(acc[0], chain.r16), acc[1]);
    }

    /// Absorbs one full 16-byte block, given as its two little-endian words, with the portable scalar code
    /// whatever the backend. Lets a cipher loop hash part of its output on the integer units while its vector
    /// units compute keystream (see `aead::chacha20poly1305`). The state must sit on a 16-byte boundary of its
    /// input (no buffered partial block), which the AEAD guarantees by padding the associated data.
    #[inline(always)]
    pub(crate) fn scalar_block(&mut self, m0: u64, m1: u64) {
        debug_assert_eq!(self.buf_len, 0);
        self.core.h = soft::absorb_words(self.core.h, self.core.r, m0, m1, 1);
    }
}

/// The tag of the RFC 8439 AEAD construction in one call, on the portable scalar code: Poly1305 under `key` over
/// `aad || pad16 || ct || pad16 || le64(aad.len) || le64(ct.len)`. For the AEADs' short messages, where a
/// streaming state's set-up (its table of powers, its buffer, the dispatch) costs more than the few blocks.
pub(crate) fn aead_tag(key: &[u8; KEY_LEN], aad: &[u8], ct: &[u8]) -> [u8; TAG_LEN] {
    let mut r = soft::load_r(key);
    let mut h = [0u64; 3];
    let word = |b: &[u8]| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    for part in [aad, ct] {
        let mut blocks = part.chunks_exact(16);
        for b in &mut blocks {
            h = soft::absorb_words(h, r, word(&b[..8]), word(&b[8..]), 1);
        }
        let rest = blocks.remainder();
        if !rest.is_empty() {
            // pad16: zeros up to the block, which is then a full one (the 2^128 bit set).
            let mut b = [0u8; 16];
            b[..rest.len()].copy_from_slice(rest);
            h = soft::absorb_words(h, r, word(&b[..8]), word(&b[8..]), 1);
            crate::ct::wipe(&mut b);
        }
    }
    h = soft::absorb_words(h, r, aad.len() as u64, ct.len() as u64, 1);
    let mut s = soft::load_s(key);
    let tag = soft::finalize(h, s);
    crate::ct::wipe(&mut h);
    crate::ct::wipe(&mut r);
    crate::ct::wipe(&mut s);
    tag
}

/// One-shot Poly1305: the tag of `message` under the one-time `key`.
pub fn poly1305(key: &[u8; KEY_LEN], message: &[u8]) -> [u8; TAG_LEN] {
    let mut mac = Poly1305::new(key);
    mac.update(message);
    mac.tag()
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use num_bigint::BigUint;
    use std::vec;
    use std::vec::Vec;

    /// Slow textbook Poly1305 on big integers: returns the fully reduced accumulator `h` and `s`.
    fn reference_h_s(key: &[u8; 32], msg: &[u8]) -> (BigUint, BigUint) {
        let p = (BigUint::from(1u8) << 130u32) - 5u8;
        let mut r_bytes: [u8; 16] = key[..16].try_into().unwrap();
        for i in [3, 7, 11, 15] {
            r_bytes[i] &= 15;
        }
        for i in [4, 8, 12] {
            r_bytes[i] &= 252;
        }
        let r = BigUint::from_bytes_le(&r_bytes);
        let s = BigUint::from_bytes_le(&key[16..]);
        let mut h = BigUint::from(0u8);
        for chunk in msg.chunks(16) {
            let mut block = chunk.to_vec();
            block.push(1);
            h = (h + BigUint::from_bytes_le(&block)) * &r % &p;
        }
        (h, s)
    }

    fn to_16(x: &BigUint) -> [u8; 16] {
        let mut v = (x % (BigUint::from(1u8) << 128u32)).to_bytes_le();
        v.resize(16, 0);
        v.try_into().unwrap()
    }

    fn check(key: &[u8; 32], msg: &[u8]) -> bool {
        let p = (BigUint::from(1u8) << 130u32) - 5u8;
        let (h, s) = reference_h_s(key, msg);
        let rfc = to_16(&(&h + &s));
        let legacy = to_16(&((&h + &s) % &p));
        for b in Backend::available() {
            let mut mac = Poly1305::new_with_backend(key, b);
            mac.update(msg);
            assert_eq!(mac.finalize_mod_p(), legacy, "{b:?} len {}", msg.len());
            let mut mac = Poly1305::new_with_backend(key, b);
            mac.update(msg);
            assert_eq!(mac.finalize(), rfc, "{b:?} len {}", msg.len());
        }
        rfc != legacy
    }

    /// Deterministic xorshift bytes (the unit tests avoid depending on `rand`'s API here).
    fn fill(seed: &mut u64, out: &mut [u8]) {
        for b in out {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *b = *seed as u8;
        }
    }

    #[test]
    fn finalize_mod_p_matches_big_integer_reference() {
        let mut seed = 0x1305_u64 | 1 << 40;
        let mut differing = 0;
        let mut total = 0;
        for len in (0..300).chain([511, 512, 1000, 1024, 4096]) {
            for _ in 0..3 {
                let mut key = [0u8; 32];
                fill(&mut seed, &mut key);
                let mut msg = vec![0u8; len];
                fill(&mut seed, &mut msg);
                differing += usize::from(check(&key, &msg));
                total += 1;
            }
        }
        // (h + s) >= p happens for roughly one key in eight; the two finishes must then differ.
        assert!(differing > total / 20, "{differing} of {total}");
    }

    #[test]
    fn finalize_mod_p_edge_cases() {
        // s = 2^128 - 1 and h close to p: (h + s) wraps past p.
        let mut key = [0xffu8; 32];
        let wraps = (0..=255u8).filter(|&i| check(&key, &[i; 40])).count();
        assert!(wraps > 0);
        // RFC 8439 A.3 #8's polynomial part is exactly p, so h = 0; and #9's is p - 1 = 2^130 - 6.
        key = [0u8; 32];
        key[0] = 1;
        let mut msg: Vec<u8> = vec![0xff; 16];
        msg.push(0xfb);
        msg.extend_from_slice(&[0xfe; 15]);
        msg.extend_from_slice(&[0x01; 16]);
        check(&key, &msg);
        key.fill(0);
        key[0] = 2;
        let mut msg = vec![0xffu8; 16];
        msg[0] = 0xfd;
        // h = 2^130 - 6 = p - 1; with s = 1, h + s = p: the legacy finish gives 0, RFC 8439 gives
        // p mod 2^128 = 2^128 - 5 (fb ff .. ff little-endian).
        key[16] = 1;
        assert!(check(&key, &msg));
        let mut mac = Poly1305::new(&key);
        mac.update(&msg);
        assert_eq!(mac.finalize_mod_p(), [0u8; 16]);
        let mut mac = Poly1305::new(&key);
        mac.update(&msg);
        let mut want = [0xffu8; 16];
        want[0] = 0xfb;
        assert_eq!(mac.finalize(), want);
    }
}
