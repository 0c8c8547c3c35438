//! BLAKE2b and BLAKE2s (RFC 7693): keyed hashing, salt, personalization, any output length.
//!
//! - [`Blake2b`]: 1..=64-byte output, key up to 64 bytes, 16-byte salt and personalization.
//! - [`Blake2s`]: 1..=32-byte output, key up to 32 bytes, 8-byte salt and personalization.
//! - [`Blake2b512`] and [`Blake2s256`]: the unkeyed full-length forms, implementing [`Hasher`](super::Hasher).
//!
//! Shorter salts and personalizations are zero-padded (as the reference implementation does). The output
//! length is part of the parameter block, so BLAKE2b-256 is not a prefix of BLAKE2b-512.
//!
//! ## Security notes
//! Keyed BLAKE2 is a MAC (it needs no HMAC construction); keys are secret and wiped on drop. Compare tags
//! with [`crate::ct::eq`]. The code is constant-time.
//!
//! ## Backends
//! The one dispatch mechanism ([`crate::dispatch`], through `Backend::detect`) picks the implementation once:
//! portable code; AVX2 (row-vectorized BLAKE2b on `ymm`, BLAKE2s on `xmm`); AVX-512 VL (BLAKE2s with
//! one-instruction rotations and permute-based message loading). A backend forced by name is checked
//! (`Backend::X.checked()`): one this CPU cannot run is an error.
//!
//! On AMD Zen 5 the vector backends are `avoid_on [Zen5]` (the dispatch's per-microarchitecture preference),
//! so the portable code runs there. The row-vectorized code is one long dependency chain (each `G` step is
//! about twelve dependent vector operations, the four columns or diagonals sharing each one), and Zen 5 takes
//! two cycles for a vector add, xor or byte shuffle where Zen 4 takes one (measured here: a chain of `vpaddq`,
//! `vpxor`, `vpshufb` or `vprorq` on ymm runs at half the rate of a chain of scalar `add`). The scalar code has
//! the same chain at one cycle per step, with the four `G` of a step on separate integer ALUs. Measured on
//! Zen 5 (pqkit-bench, 16 KiB): BLAKE2b AVX2 22.4 us, portable 11.1 us; BLAKE2s AVX-512 33.7 us, portable
//! 18.5 us. Zen 3 and Zen 4 keep the vector backends.
//!
//! On Intel (`Uarch::Other`) the AVX2 backend is `avoid_on` too: on an Intel Xeon with AVX-512 (family 6, model
//! 167) capped at AVX2, pqkit-bench measured the AVX2 BLAKE2s at 0.92-0.94x RustCrypto's portable code (1 KiB to
//! 10 MiB) and pqkit's portable BLAKE2s at 1.01-1.05x, BLAKE2b at 1.00-1.04x and 1.02-1.05x. With AVX-512 the
//! AVX-512 backend stays (BLAKE2s 1.17-1.21x there).

mod soft;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

use crate::ct::wipe;
use crate::dispatch::Checked;
use crate::error::Expected;
use crate::{Error, Result};
use zeroize::Zeroize;

const IV_B: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];
const IV_S: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/// The message schedule permutations (RFC 7693, 2.7).
const SIGMA: [[usize; 16]; 10] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

crate::dispatch::backends! {
    /// Which BLAKE2 implementation runs: the BLAKE2 family's entry in the one dispatch mechanism
    /// ([`crate::dispatch`]). Each variant lists every CPU feature its code (BLAKE2b and BLAKE2s alike) needs.
    #[doc(hidden)]
    pub enum Backend for "BLAKE2" {
        /// Portable Rust.
        Soft: [],
        /// AVX2 row-vectorized compression. Not chosen on Zen 5 or on `Other` CPUs (Intel): the portable code
        /// is faster there (see the module docs). Zen 3 and Zen 4 choose it.
        Avx2: [AVX2] avoid_on [Zen5, Other],
        /// AVX-512 VL: BLAKE2s with single-instruction rotations and permute-based message loading; BLAKE2b as
        /// [`Backend::Avx2`] (measured faster). Not chosen on Zen 5.
        Avx512: [AVX2, AVX512F, AVX512VL] avoid_on [Zen5],
    }
}

/// BLAKE2b compression of one block on `backend`.
#[inline]
fn compress_b(backend: Checked<Backend>, h: &mut [u64; 8], block: &[u8], t: u128, last: bool) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 | Backend::Avx512 => avx2::compress_b(backend, h, block, t, last),
        _ => soft::compress_b(h, block, t, last),
    }
}

/// BLAKE2b compression of every whole block of `blocks` (none final) on `backend`, the counter advanced by
/// 128 before each: the portable code keeps the chaining value in registers across the run; the vector
/// backends compress block by block as before.
#[inline]
fn compress_b_blocks(backend: Checked<Backend>, h: &mut [u64; 8], blocks: &[u8], t: &mut u128) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 | Backend::Avx512 => {
            for block in blocks.chunks_exact(128) {
                *t += 128;
                avx2::compress_b(backend, h, block, *t, false);
            }
        }
        _ => soft::compress_b_blocks(h, blocks, t),
    }
}

/// BLAKE2s compression of every whole block of `blocks` (none final) on `backend`, as [`compress_b_blocks`].
#[inline]
fn compress_s_blocks(backend: Checked<Backend>, h: &mut [u32; 8], blocks: &[u8], t: &mut u128) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => {
            for block in blocks.chunks_exact(64) {
                *t += 64;
                avx2::compress_s(backend, h, block, *t, false);
            }
        }
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => {
            for block in blocks.chunks_exact(64) {
                *t += 64;
                avx512::compress_s(backend, h, block, *t, false);
            }
        }
        _ => soft::compress_s_blocks(h, blocks, t),
    }
}

/// BLAKE2s compression of one block on `backend`.
#[inline]
fn compress_s(backend: Checked<Backend>, h: &mut [u32; 8], block: &[u8], t: u128, last: bool) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => avx2::compress_s(backend, h, block, t, last),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => avx512::compress_s(backend, h, block, t, last),
        _ => soft::compress_s(h, block, t, last),
    }
}

macro_rules! blake2 {
    ($(#[$doc:meta])* $name:ident, $label:expr, $w:ty, $iv:ident, $blk:expr, $outmax:expr, $keymax:expr,
     $saltlen:expr, $compress:ident, $compress_blocks:ident) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name {
            h: [$w; 8],
            /// The state right after the parameter block, for `reset`.
            h0: [$w; 8],
            buf: [u8; $blk],
            buf_len: usize,
            /// Bytes compressed so far (the counter `t`).
            t: u128,
            /// The padded key block, if keyed (absorbed as the first block, again after `reset`).
            key_block: Option<[u8; $blk]>,
            out_len: usize,
            backend: Checked<Backend>,
        }

        impl $name {
            /// Largest output length in bytes.
            pub const MAX_OUTPUT_LEN: usize = $outmax;
            /// Largest key length in bytes.
            pub const MAX_KEY_LEN: usize = $keymax;
            /// Salt and personalization length in bytes.
            pub const SALT_LEN: usize = $saltlen;
            /// Block length in bytes.
            pub const BLOCK_LEN: usize = $blk;

            /// Unkeyed hashing with an `out_len`-byte output (1..=MAX_OUTPUT_LEN).
            pub fn new(out_len: usize) -> Result<Self> {
                Self::with_params(&[], &[], &[], out_len)
            }

            /// Keyed hashing (a MAC) with an `out_len`-byte output. `key` is 1..=MAX_KEY_LEN bytes.
            pub fn new_keyed(key: &[u8], out_len: usize) -> Result<Self> {
                if key.is_empty() {
                    return Err(Error::InvalidLength {
                        algorithm: $label,
                        field: "key",
                        expected: Expected::AtLeast(1),
                        actual: 0,
                    });
                }
                Self::with_params(key, &[], &[], out_len)
            }

            /// The general form: `key` (0..=MAX_KEY_LEN bytes; empty means unkeyed), `salt` and `personal`
            /// (0..=SALT_LEN bytes each, zero-padded), output length 1..=MAX_OUTPUT_LEN.
            pub fn with_params(key: &[u8], salt: &[u8], personal: &[u8], out_len: usize) -> Result<Self> {
                Self::with_params_backend(Backend::detect(), key, salt, personal, out_len)
            }

            /// [`with_params`](Self::with_params) with a forced backend, for tests: from `Backend::available()`
            /// or `Backend::X.checked()?`.
            #[doc(hidden)]
            pub fn with_params_backend(
                backend: Checked<Backend>,
                key: &[u8],
                salt: &[u8],
                personal: &[u8],
                out_len: usize,
            ) -> Result<Self> {
                if out_len == 0 || out_len > $outmax {
                    return Err(Error::InvalidParameter {
                        algorithm: $label,
                        reason: concat!("output length must be 1 to ", stringify!($outmax), " bytes"),
                    });
                }
                let at_most = |field, max, actual| Error::InvalidLength {
                    algorithm: $label,
                    field,
                    expected: Expected::AtMost(max),
                    actual,
                };
                if key.len() > $keymax {
                    return Err(at_most("key", $keymax, key.len()));
                }
                if salt.len() > $saltlen {
                    return Err(at_most("salt", $saltlen, salt.len()));
                }
                if personal.len() > $saltlen {
                    return Err(at_most("personalization", $saltlen, personal.len()));
                }
                // Parameter block: digest length, key length, fanout 1, depth 1; salt in words 4-5,
                // personalization in words 6-7 (little-endian).
                let mut h = $iv;
                h[0] ^= 0x0101_0000 ^ ((key.len() as $w) << 8) ^ (out_len as $w);
                const W: usize = core::mem::size_of::<$w>();
                let mut sp = [0u8; 2 * $saltlen];
                sp[..salt.len()].copy_from_slice(salt);
                sp[$saltlen..$saltlen + personal.len()].copy_from_slice(personal);
                for (i, c) in sp.chunks_exact(W).enumerate() {
                    h[4 + i] ^= <$w>::from_le_bytes(c.try_into().unwrap());
                }
                let key_block = if key.is_empty() {
                    None
                } else {
                    let mut kb = [0u8; $blk];
                    kb[..key.len()].copy_from_slice(key);
                    Some(kb)
                };
                let mut s = $name { h, h0: h, buf: [0; $blk], buf_len: 0, t: 0, key_block, out_len, backend };
                s.absorb_key();
                Ok(s)
            }

            fn absorb_key(&mut self) {
                if let Some(kb) = self.key_block {
                    self.buf = kb;
                    self.buf_len = $blk;
                }
            }

            /// The output length chosen at construction.
            pub fn output_len(&self) -> usize {
                self.out_len
            }

            /// Unkeyed, unsalted one-shot hash of `data` with an `out_len`-byte output (1..=MAX_OUTPUT_LEN,
            /// checked by the caller): no hasher value and no buffering, the whole blocks compressed straight
            /// from `data` and only the last one copied (into a wiped local block). Returns every state byte.
            #[inline]
            fn oneshot(backend: Checked<Backend>, data: &[u8], out_len: usize) -> [u8; $outmax] {
                debug_assert!((1..=$outmax).contains(&out_len));
                let mut h = $iv;
                h[0] ^= 0x0101_0000 ^ (out_len as $w);
                let mut t = 0u128;
                // Every whole block but the last one (the final block, full or partial; empty data: one zero block).
                let run = data.len().saturating_sub(1) / $blk * $blk;
                if run > 0 {
                    $compress_blocks(backend, &mut h, &data[..run], &mut t);
                }
                let rest = &data[run..];
                let mut last = [0u8; $blk];
                last[..rest.len()].copy_from_slice(rest);
                $compress(backend, &mut h, &last, t + rest.len() as u128, true);
                wipe(&mut last);
                let mut full = [0u8; $outmax];
                for (c, w) in full.chunks_exact_mut(core::mem::size_of::<$w>()).zip(h.iter()) {
                    c.copy_from_slice(&w.to_le_bytes());
                }
                wipe(&mut h);
                full
            }

            /// Absorbs `data`. Returns `self` so calls can be chained.
            pub fn update(&mut self, mut data: &[u8]) -> &mut Self {
                // The last block must be compressed with the final flag, so a full buffer waits until
                // more data arrives.
                if data.is_empty() {
                    return self;
                }
                if self.buf_len > 0 {
                    let n = data.len().min($blk - self.buf_len);
                    self.buf[self.buf_len..self.buf_len + n].copy_from_slice(&data[..n]);
                    self.buf_len += n;
                    data = &data[n..];
                    if data.is_empty() {
                        return self;
                    }
                    self.t += $blk;
                    $compress(self.backend, &mut self.h, &self.buf, self.t, false);
                    self.buf_len = 0;
                }
                // Every whole block but the last one of `data` (that one may be the final block).
                let run = (data.len() - 1) / $blk * $blk;
                if run > 0 {
                    $compress_blocks(self.backend, &mut self.h, &data[..run], &mut self.t);
                    data = &data[run..];
                }
                self.buf[..data.len()].copy_from_slice(data);
                self.buf_len = data.len();
                self
            }

            /// Writes the digest into `out`, which must be exactly [`output_len`](Self::output_len) bytes.
            pub fn finalize_into(mut self, out: &mut [u8]) -> Result<()> {
                Error::check_length($label, "output", self.out_len, out.len())?;
                let full = self.finish();
                out.copy_from_slice(&full[..self.out_len]);
                Ok(())
            }

            /// The digest as a `Vec` of [`output_len`](Self::output_len) bytes.
            #[cfg(feature = "alloc")]
            pub fn finalize_vec(mut self) -> alloc::vec::Vec<u8> {
                let full = self.finish();
                full[..self.out_len].to_vec()
            }

            fn finish(&mut self) -> [u8; $outmax] {
                self.t += self.buf_len as u128;
                self.buf[self.buf_len..].fill(0);
                $compress(self.backend, &mut self.h, &self.buf, self.t, true);
                let mut full = [0u8; $outmax];
                for (c, w) in full.chunks_exact_mut(core::mem::size_of::<$w>()).zip(self.h.iter()) {
                    c.copy_from_slice(&w.to_le_bytes());
                }
                full
            }

            /// Returns to the state right after construction (same key, salt, personalization, length).
            pub fn reset(&mut self) {
                self.h = self.h0;
                self.t = 0;
                self.buf_len = 0;
                self.absorb_key();
            }
        }

        impl Zeroize for $name {
            fn zeroize(&mut self) {
                // Plain stores kept by a fence (crate::ct::wipe, as SHA-2 does), not zeroize's volatile store
                // per byte: 128 single-byte stores for the buffer alone were a tenth of a 64-byte digest.
                wipe(&mut self.h);
                wipe(&mut self.h0);
                wipe(&mut self.buf);
                if let Some(k) = self.key_block.as_mut() {
                    wipe(k);
                }
                self.buf_len = 0;
                self.t = 0;
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                self.zeroize();
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($name)).field("output_len", &self.out_len).finish_non_exhaustive()
            }
        }

        #[cfg(feature = "std")]
        impl std::io::Write for $name {
            fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
                self.update(data);
                Ok(data.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
    };
}

blake2!(
    /// BLAKE2b: 64-bit words, 128-byte blocks, 12 rounds.
    Blake2b, "BLAKE2b", u64, IV_B, 128, 64, 64, 16, compress_b, compress_b_blocks
);
blake2!(
    /// BLAKE2s: 32-bit words, 64-byte blocks, 10 rounds.
    Blake2s, "BLAKE2s", u32, IV_S, 64, 32, 32, 8, compress_s, compress_s_blocks
);

macro_rules! fixed {
    ($(#[$doc:meta])* $name:ident, $inner:ident, $label:expr, $out:expr) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name($inner);

        impl $name {
            /// A fresh hasher using the detected backend.
            pub fn new() -> Self {
                Self::with_backend(Backend::detect())
            }

            /// A fresh hasher using `backend`, for tests: from `Backend::available()` or `Backend::X.checked()?`.
            #[doc(hidden)]
            pub fn with_backend(backend: Checked<Backend>) -> Self {
                match $inner::with_params_backend(backend, &[], &[], &[], $out) {
                    Ok(h) => $name(h),
                    Err(_) => unreachable!("fixed parameters are valid"),
                }
            }

            /// Absorbs `data`. Returns `self` so calls can be chained.
            pub fn update(&mut self, data: &[u8]) -> &mut Self {
                self.0.update(data);
                self
            }

            /// Returns the digest, consuming the hasher.
            pub fn finalize(mut self) -> [u8; $out] {
                let full = self.0.finish();
                let mut out = [0u8; $out];
                out.copy_from_slice(&full[..$out]);
                out
            }

            /// Forgets everything absorbed.
            pub fn reset(&mut self) {
                self.0.reset();
            }

            /// One-shot digest of `data` (no hasher value, no buffering of whole blocks).
            #[inline]
            pub fn digest(data: &[u8]) -> [u8; $out] {
                Self::digest_with_backend(Backend::detect(), data)
            }

            /// [`digest`](Self::digest) on a forced backend, for tests.
            #[doc(hidden)]
            #[inline]
            pub fn digest_with_backend(backend: Checked<Backend>, data: &[u8]) -> [u8; $out] {
                let full = $inner::oneshot(backend, data, $out);
                let mut out = [0u8; $out];
                out.copy_from_slice(&full[..$out]);
                out
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

        impl Zeroize for $name {
            fn zeroize(&mut self) {
                self.0.zeroize();
            }
        }

        impl super::Hasher for $name {
            const NAME: &'static str = $label;
            const OUTPUT_LEN: usize = $out;
            const BLOCK_LEN: usize = $inner::BLOCK_LEN;
            type Output = [u8; $out];

            fn new() -> Self {
                $name::new()
            }
            fn update(&mut self, data: &[u8]) {
                self.0.update(data);
            }
            fn finalize(self) -> [u8; $out] {
                $name::finalize(self)
            }
            fn reset(&mut self) {
                self.0.reset()
            }
            #[inline]
            fn digest(data: &[u8]) -> [u8; $out] {
                $name::digest(data)
            }
        }

        super::impl_write!($name);
    };
}

fixed!(
    /// BLAKE2b-512: unkeyed BLAKE2b with a 64-byte output.
    Blake2b512, Blake2b, "BLAKE2b-512", 64
);
fixed!(
    /// BLAKE2s-256: unkeyed BLAKE2s with a 32-byte output.
    Blake2s256, Blake2s, "BLAKE2s-256", 32
);
