//! SHA-2 (FIPS 180-4): [`Sha224`], [`Sha256`], [`Sha384`], [`Sha512`], [`Sha512_224`], [`Sha512_256`].
//!
//! ## Security notes
//! SHA-256 and SHA-512 are Merkle-Damgard hashes: `H(secret || message)` is *not* a MAC (length extension);
//! use [`crate::mac::Hmac`]. Inputs are limited to 2^64 - 1 bits (SHA-224/256) and 2^128 - 1 bits (the
//! SHA-512 family); byte counts beyond what a `u64` holds are not reachable in practice. The code is
//! constant-time: no data-dependent branches or table look-ups.
//!
//! ## Backends
//! The one dispatch mechanism ([`crate::dispatch`], through `Backend::detect`) picks the implementation once:
//! portable code; SHA-NI for SHA-224/256; for the SHA-512 family, a schedule of the next four blocks on vector
//! registers (AVX2, or AVX-512VL) interleaved with the scalar rounds of the current ones, and for a call of one
//! block (short messages, padding blocks, HMAC's outer block; on AVX2, calls of up to three blocks) each block's own
//! schedule two words per 128-bit register, a few rows ahead of its rounds. A
//! backend forced by name is checked (`Backend::X.checked()`): one this CPU cannot run is an error.
//!
//! On AMD Zen 5, [`Backend::ShaNiAvx512`] is `avoid_on [Zen5]` (the dispatch's per-microarchitecture
//! preference) and [`Backend::ShaNiZen5`] runs ([`Backend::Avx2Zen5`] without SHA-NI): [`Backend::ShaNi`] with
//! every SHA-512 block but a call's first in a round of 25 integer operations whose `e` and `a` recurrences are
//! four cycles, where the 22-operation round of [`Backend::ShaNi`] has five-cycle ones. Zen 5's six integer units
//! run it at the recurrences' pace (measured on Zen 5, pqkit-bench, SHA-512: about 5% faster at 16 KiB, the same at
//! 1 KiB); with four (Zen 4, Zen 3) the 25 operations are slower, so the Zen 5 variants are `avoid_on` every
//! other design. The AVX-512 backend is passed over there because it keeps half of every round in xmm
//! registers, which pays on Zen 4 (one-cycle vector latency) but not on Zen 5, where a vector add or rotate takes two
//! cycles and a `vmovq` between the register files about three each way. Measured on Zen 5 (pqkit-bench,
//! SHA-512, 16 KiB): ShaNiAvx512 21.1 us, ShaNi 14.4 us. SHA-224/256 run the same SHA-NI code in every SHA-NI
//! backend.

mod soft;

/// Writes `load_words` for a four-block SIMD schedule `Sched` (with rows `w` and `wk` of `[u64; 4]`, 64-byte
/// aligned) under the `target_feature` list `$features`: the AVX2 and AVX-512 backends load the message words
/// with the same AVX2 instructions, each compiled with its own file's features.
#[cfg(target_arch = "x86_64")]
macro_rules! load_words {
    ($features:literal) => {
        /// Words 0..16 (rows 0..16 of `w` and `wk`) of the one to four 128-byte blocks of `group` into `*s`; the
        /// lanes of missing blocks get zero words (scheduled like the others, never used).
        ///
        /// # Safety
        /// `s` must be valid for writes (it may be uninitialized), and no reference to `*s` may be live.
        #[inline]
        #[target_feature(enable = $features)]
        unsafe fn load_words(s: *mut Sched, group: &[u8]) {
            let nb = group.len() / 128;
            assert!((1..=4).contains(&nb));
            // Reverses the bytes of each 64-bit word (big-endian message words).
            let bswap = _mm256_set_epi8(
                8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5,
                6, 7,
            );
            for j in 0..4 {
                let r: [__m256i; 4] = core::array::from_fn(|k| {
                    if k < nb {
                        // SAFETY: block k < nb: its bytes 32j..32j+32 lie inside `group`; loadu needs no alignment.
                        unsafe { _mm256_loadu_si256(group.as_ptr().add(128 * k + 32 * j).cast()) }
                    } else {
                        _mm256_setzero_si256()
                    }
                });
                // 4x4 transpose of 64-bit words: word 4j+c of every block into one register.
                let t0 = _mm256_unpacklo_epi64(r[0], r[1]);
                let t1 = _mm256_unpackhi_epi64(r[0], r[1]);
                let t2 = _mm256_unpacklo_epi64(r[2], r[3]);
                let t3 = _mm256_unpackhi_epi64(r[2], r[3]);
                let w = [
                    _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x20>(t0, t2), bswap),
                    _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x20>(t1, t3), bswap),
                    _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x31>(t0, t2), bswap),
                    _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x31>(t1, t3), bswap),
                ];
                for (c, v) in w.into_iter().enumerate() {
                    let i = 4 * j + c;
                    let wk = _mm256_add_epi64(v, _mm256_set1_epi64x(K512[i] as i64));
                    // SAFETY: rows of 32 bytes inside `*s`, which is 64-byte aligned, so every row is 32-byte
                    // aligned; the caller guarantees write access and that no reference is live.
                    unsafe {
                        _mm256_store_si256(((&raw mut (*s).w) as *mut [u64; 4]).add(i).cast(), v);
                        _mm256_store_si256(((&raw mut (*s).wk) as *mut [u64; 4]).add(i).cast(), wk);
                    }
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
pub mod multi;
#[cfg(target_arch = "x86_64")]
mod shani;

use crate::ct::wipe;
use crate::dispatch::Checked;

const H256: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
const H224: [u32; 8] = [0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939, 0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4];
const H512: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];
const H384: [u64; 8] = [
    0xcbbb9d5dc1059ed8,
    0x629a292a367cd507,
    0x9159015a3070dd17,
    0x152fecd8f70e5939,
    0x67332667ffc00b31,
    0x8eb44a8768581511,
    0xdb0c2e0d64f98fa7,
    0x47b5481dbefa4fa4,
];
const H512_224: [u64; 8] = [
    0x8c3d37c819544da2,
    0x73e1996689dcd4d6,
    0x1dfab7ae32ff9c82,
    0x679dd514582f9fcf,
    0x0f6d2b697bd44da8,
    0x77e36f7304c48942,
    0x3f9d85a86a1d36c8,
    0x1112e6ad91d692a1,
];
const H512_256: [u64; 8] = [
    0x22312194fc2bf72c,
    0x9f555fa3c84c64c2,
    0x2393b86b6f53b151,
    0x963877195940eabd,
    0x96283ee2a88effe3,
    0xbe5e1e2553863992,
    0x2b0199fc2c85b8aa,
    0x0eb72ddc81c52ca2,
];

crate::dispatch::backends! {
    /// Which SHA-2 implementation runs: the SHA-2 family's entry in the one dispatch mechanism
    /// ([`crate::dispatch`]). Each variant lists every CPU feature its code (SHA-256 and SHA-512 alike) needs.
    #[doc(hidden)]
    pub enum Backend for "SHA-2" {
        /// Portable Rust for everything.
        Soft: [],
        /// SHA-224/256 portable; SHA-384/512 with the AVX2 message schedule (`rorx` from BMI2 and `andn` from
        /// BMI1 in the rounds).
        Avx2: [AVX2, BMI1, BMI2],
        /// [`Backend::Avx2`] with the SHA-512 round of four-cycle recurrences (see the module docs): chosen on
        /// AMD Zen 5 only.
        Avx2Zen5: [AVX2, BMI1, BMI2] avoid_on [Other, Zen3, Zen4],
        /// SHA-224/256 with SHA-NI (SSE2, SSSE3, SSE4.1); SHA-384/512 with the AVX2 message schedule.
        ShaNi: [SHA, SSE2, SSSE3, SSE41, AVX2, BMI1, BMI2],
        /// [`Backend::ShaNi`] with the SHA-512 round of four-cycle recurrences (see the module docs): chosen on
        /// AMD Zen 5 only.
        ShaNiZen5: [SHA, SSE2, SSSE3, SSE41, AVX2, BMI1, BMI2] avoid_on [Other, Zen3, Zen4],
        /// SHA-224/256 with SHA-NI; SHA-384/512 with the AVX-512VL schedule interleaved with the rounds. Not
        /// chosen on Zen 5, where [`Backend::ShaNi`] is faster (see the module docs).
        ShaNiAvx512: [SHA, SSE2, SSSE3, SSE41, AVX2, BMI1, BMI2, AVX512F, AVX512VL] avoid_on [Zen5],
    }
}

/// SHA-256 compression of every 64-byte block of `blocks` on `backend`.
#[inline]
fn compress256(backend: Checked<Backend>, h: &mut [u32; 8], blocks: &[u8]) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::ShaNi | Backend::ShaNiZen5 | Backend::ShaNiAvx512 => shani::compress256(backend, h, blocks),
        _ => soft::compress256(h, blocks),
    }
}

/// SHA-512 compression of every 128-byte block of `blocks` on `backend`.
#[inline]
fn compress512(backend: Checked<Backend>, h: &mut [u64; 8], blocks: &[u8]) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 | Backend::Avx2Zen5 | Backend::ShaNi | Backend::ShaNiZen5 => {
            avx2::compress512(backend, h, blocks)
        }
        #[cfg(target_arch = "x86_64")]
        Backend::ShaNiAvx512 => avx512::compress512(backend, h, blocks),
        _ => soft::compress512(h, blocks),
    }
}

/// SHA-256 compression of the blocks of `a` and then those of `b` (see [`compress512_then`]).
#[inline]
fn compress256_then(backend: Checked<Backend>, h: &mut [u32; 8], a: &[u8], b: &[u8]) {
    compress256(backend, h, a);
    compress256(backend, h, b);
}

/// SHA-512 compression of the blocks of `a` and then those of `b`: a one-shot digest's whole blocks and its padded
/// tail, in one run where the backend can schedule them together (AVX2: the tail then shares the four-block
/// schedule of the blocks before it instead of running alone).
#[inline]
fn compress512_then(backend: Checked<Backend>, h: &mut [u64; 8], a: &[u8], b: &[u8]) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 | Backend::Avx2Zen5 | Backend::ShaNi | Backend::ShaNiZen5 => {
            avx2::compress512_then(backend, h, a, b)
        }
        _ => {
            compress512(backend, h, a);
            compress512(backend, h, b);
        }
    }
}

/// The shared Merkle-Damgard buffering: `$w` is the state word type, `$blk` the block length, `$lenbytes`
/// the length field size, `$compress` the compression function, `$compress_then` the same over two slices.
macro_rules! md_engine {
    ($engine:ident, $w:ty, $blk:expr, $lenbytes:expr, $compress:ident, $compress_then:ident) => {
        #[derive(Clone)]
        struct $engine {
            h: [$w; 8],
            buf: [u8; $blk],
            buf_len: usize,
            /// Total bytes absorbed (wrapping is unreachable: 2^64 bytes).
            total: u64,
            backend: Checked<Backend>,
            /// The initial value, for `reset` (a reference keeps clones of the hasher small).
            iv: &'static [$w; 8],
        }

        impl $engine {
            const fn new(iv: &'static [$w; 8], backend: Checked<Backend>) -> Self {
                $engine { h: *iv, buf: [0; $blk], buf_len: 0, total: 0, backend, iv }
            }

            #[inline]
            fn update(&mut self, mut data: &[u8]) {
                self.total = self.total.wrapping_add(data.len() as u64);
                if self.buf_len > 0 {
                    let n = data.len().min($blk - self.buf_len);
                    self.buf[self.buf_len..self.buf_len + n].copy_from_slice(&data[..n]);
                    self.buf_len += n;
                    data = &data[n..];
                    if self.buf_len < $blk {
                        return;
                    }
                    $compress(self.backend, &mut self.h, &self.buf);
                    self.buf_len = 0;
                }
                let full = data.len() - data.len() % $blk;
                if full > 0 {
                    $compress(self.backend, &mut self.h, &data[..full]);
                }
                let rest = &data[full..];
                self.buf[..rest.len()].copy_from_slice(rest);
                self.buf_len = rest.len();
            }

            /// Pads in place in the block buffer (no copy of the tail) and returns the final state words.
            #[inline]
            fn finish(&mut self) -> [$w; 8] {
                let bits = (self.total as u128) << 3;
                let n = self.buf_len;
                self.buf[n] = 0x80;
                if n + 1 + $lenbytes > $blk {
                    self.buf[n + 1..].fill(0);
                    $compress(self.backend, &mut self.h, &self.buf);
                    self.buf[..$blk - $lenbytes].fill(0);
                } else {
                    self.buf[n + 1..$blk - $lenbytes].fill(0);
                }
                let len_be = bits.to_be_bytes();
                self.buf[$blk - $lenbytes..].copy_from_slice(&len_be[16 - $lenbytes..]);
                $compress(self.backend, &mut self.h, &self.buf);
                self.buf_len = 0;
                self.h
            }

            /// HMAC's outer hash from a prepared state `self` (exactly one block absorbed, nothing buffered):
            /// `digest` (at most 64 bytes) plus padding is one block, so it is built directly and compressed
            /// once, with no buffering. Returns the final state words.
            #[inline]
            fn outer_one_block(&self, digest: &[u8]) -> [$w; 8] {
                let d = digest.len();
                let mut block = [0u8; $blk];
                block[..d].copy_from_slice(digest);
                block[d] = 0x80;
                let bits = (($blk + d) as u128) << 3;
                block[$blk - $lenbytes..].copy_from_slice(&bits.to_be_bytes()[16 - $lenbytes..]);
                let mut h = self.h;
                $compress(self.backend, &mut h, &block);
                wipe(&mut block);
                h
            }

            /// One-shot digest: full blocks straight from `data`, the padded tail built on the stack.
            #[inline]
            fn oneshot(iv: &'static [$w; 8], backend: Checked<Backend>, data: &[u8]) -> [$w; 8] {
                let mut h = *iv;
                let mut tail = [0u8; 2 * $blk];
                Self::absorb_last(backend, &mut h, 0, data, &mut tail);
                h
            }

            /// The rest of a message whose first `prefix` bytes (whole blocks) are absorbed in `h`: the full
            /// blocks of `data` straight from it and the padded tail, built in `tail` (zeroed by the caller), in
            /// one compression call, so the tail shares the schedule of the blocks before it.
            #[inline(always)]
            fn absorb_last(
                backend: Checked<Backend>,
                h: &mut [$w; 8],
                prefix: u64,
                data: &[u8],
                tail: &mut [u8; 2 * $blk],
            ) {
                let full = data.len() - data.len() % $blk;
                let rest = &data[full..];
                tail[..rest.len()].copy_from_slice(rest);
                tail[rest.len()] = 0x80;
                let n = if rest.len() + 1 + $lenbytes <= $blk { $blk } else { 2 * $blk };
                let bits = ((prefix as u128) + (data.len() as u128)) << 3;
                tail[n - $lenbytes..n].copy_from_slice(&bits.to_be_bytes()[16 - $lenbytes..]);
                $compress_then(backend, h, &data[..full], &tail[..n]);
            }

            /// Whether this is a prepared HMAC state: exactly one block absorbed, nothing buffered.
            #[inline(always)]
            fn one_block_absorbed(&self) -> bool {
                self.buf_len == 0 && self.total == $blk as u64
            }

            #[inline]
            fn reset(&mut self) {
                self.h = *self.iv;
                self.buf_len = 0;
                self.total = 0;
            }
        }

        impl zeroize::Zeroize for $engine {
            #[inline]
            fn zeroize(&mut self) {
                wipe(&mut self.h);
                wipe(&mut self.buf);
                self.buf_len = 0;
                self.total = 0;
            }
        }
    };
}

md_engine!(Engine256, u32, 64, 8, compress256, compress256_then);
md_engine!(Engine512, u64, 128, 16, compress512, compress512_then);

macro_rules! sha2_hasher {
    ($(#[$doc:meta])* $name:ident, $label:expr, $engine:ident, $w:ty, $iv:expr, $out:expr, $blk:expr) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name {
            engine: $engine,
        }

        impl $name {
            /// Digest length in bytes.
            pub const OUTPUT_LEN: usize = $out;
            /// Block length in bytes.
            pub const BLOCK_LEN: usize = $blk;

            /// A fresh hasher using the detected backend.
            #[inline]
            pub fn new() -> Self {
                Self::with_backend(Backend::detect())
            }

            /// A fresh hasher using `backend` (tests use this to run every backend), from `Backend::available()`
            /// or `Backend::X.checked()?`.
            #[doc(hidden)]
            #[inline]
            pub fn with_backend(backend: Checked<Backend>) -> Self {
                $name { engine: $engine::new(&$iv, backend) }
            }

            /// Absorbs `data`. Returns `self` so calls can be chained.
            #[inline]
            pub fn update(&mut self, data: &[u8]) -> &mut Self {
                self.engine.update(data);
                self
            }

            /// Returns the digest, consuming the hasher.
            #[inline]
            pub fn finalize(mut self) -> [u8; $out] {
                Self::output(&self.engine.finish())
            }

            /// The digest bytes of final state words `h` (big-endian, truncated).
            #[inline(always)]
            fn output(h: &[$w; 8]) -> [u8; $out] {
                const WB: usize = core::mem::size_of::<$w>();
                let mut out = [0u8; $out];
                for (i, w) in h.iter().enumerate() {
                    let b = w.to_be_bytes();
                    let start = i * WB;
                    if start < $out {
                        let n = ($out - start).min(WB);
                        out[start..start + n].copy_from_slice(&b[..n]);
                    }
                }
                out
            }

            /// Forgets everything absorbed.
            #[inline]
            pub fn reset(&mut self) {
                self.engine.reset();
            }

            /// One-shot digest of `data` (no buffering: full blocks are compressed straight from `data`).
            #[inline]
            pub fn digest(data: &[u8]) -> [u8; $out] {
                Self::digest_with_backend(Backend::detect(), data)
            }

            /// [`digest`](Self::digest) on a forced backend (tests run every backend through it).
            #[doc(hidden)]
            #[inline]
            pub fn digest_with_backend(backend: Checked<Backend>, data: &[u8]) -> [u8; $out] {
                Self::output(&$engine::oneshot(&$iv, backend, data))
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($name), " { .. }"))
            }
        }

        impl zeroize::Zeroize for $name {
            fn zeroize(&mut self) {
                self.engine.zeroize();
            }
        }

        impl super::Hasher for $name {
            const NAME: &'static str = $label;
            const OUTPUT_LEN: usize = $out;
            const BLOCK_LEN: usize = $blk;
            type Output = [u8; $out];

            fn new() -> Self {
                $name::new()
            }
            #[inline]
            fn update(&mut self, data: &[u8]) {
                self.engine.update(data);
            }
            #[inline]
            fn finalize(self) -> [u8; $out] {
                $name::finalize(self)
            }
            #[inline]
            fn reset(&mut self) {
                $name::reset(self)
            }
            #[inline]
            fn digest(data: &[u8]) -> [u8; $out] {
                $name::digest(data)
            }
            #[inline]
            fn hmac_outer(outer: &Self, inner: &mut Self) -> [u8; $out] {
                let mut ih = Self::output(&inner.engine.finish());
                zeroize::Zeroize::zeroize(&mut inner.engine);
                let tag = if outer.engine.one_block_absorbed() {
                    let mut h = outer.engine.outer_one_block(&ih);
                    let tag = Self::output(&h);
                    wipe(&mut h);
                    tag
                } else {
                    // Not a prepared HMAC outer state: the generic path.
                    let mut o = outer.clone();
                    o.update(&ih);
                    o.finalize()
                };
                wipe(&mut ih);
                tag
            }
            #[inline]
            fn hmac_mac(inner: &Self, outer: &Self, msg: &[u8]) -> [u8; $out] {
                if !(inner.engine.one_block_absorbed() && outer.engine.one_block_absorbed()) {
                    // Not prepared HMAC states: the generic path.
                    let mut i = inner.clone();
                    i.update(msg);
                    return Self::hmac_outer(outer, &mut i);
                }
                // The inner hash as a one-shot from the prepared state: the message's last blocks and its padding
                // in one compression call (no copy into the block buffer, no lone padding block), then the
                // outer step's single block.
                let mut h = inner.engine.h;
                let mut tail = [0u8; 2 * $blk];
                $engine::absorb_last(inner.engine.backend, &mut h, $blk, msg, &mut tail);
                let mut ih = Self::output(&h);
                let mut oh = outer.engine.outer_one_block(&ih);
                let tag = Self::output(&oh);
                wipe(&mut h);
                wipe(&mut tail);
                wipe(&mut ih);
                wipe(&mut oh);
                tag
            }
        }

        super::impl_write!($name);
    };
}

sha2_hasher!(
    /// SHA-224: SHA-256 with a different initial value, truncated to 28 bytes.
    Sha224, "SHA-224", Engine256, u32, H224, 28, 64
);
sha2_hasher!(
    /// SHA-256: 32-byte digest.
    Sha256, "SHA-256", Engine256, u32, H256, 32, 64
);
sha2_hasher!(
    /// SHA-384: SHA-512 with a different initial value, truncated to 48 bytes.
    Sha384, "SHA-384", Engine512, u64, H384, 48, 128
);
sha2_hasher!(
    /// SHA-512: 64-byte digest.
    Sha512, "SHA-512", Engine512, u64, H512, 64, 128
);
sha2_hasher!(
    /// SHA-512/224: SHA-512 with its own initial value, truncated to 28 bytes.
    Sha512_224, "SHA-512/224", Engine512, u64, H512_224, 28, 128
);
sha2_hasher!(
    /// SHA-512/256: SHA-512 with its own initial value, truncated to 32 bytes.
    Sha512_256, "SHA-512/256", Engine512, u64, H512_256, 32, 128
);
