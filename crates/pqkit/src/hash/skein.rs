//! Skein-512 (Skein 1.3): the UBI chaining mode over Threefish-512, with any output length.
//!
//! `Skein512::new(n)` is Skein-512-(8n): the configuration block names the output length in bits, the message
//! is hashed with UBI, and the output UBI produces 64 bytes per output counter, truncated to `n` bytes.
//! Skein-512-256 and Skein-512-512 are the usual choices. Plain hashing only (no key, personalisation or tree
//! parameters).

use crate::threefish::soft::{encrypt_words, expand_key, expand_tweak, load_words};
use crate::{Error, Result};
#[cfg(feature = "alloc")]
use alloc::vec::Vec;

const NAME: &str = "Skein-512";
const BLOCK: usize = 64;

const TYPE_CFG: u64 = 4;
const TYPE_MSG: u64 = 48;
const TYPE_OUT: u64 = 63;

/// One UBI step: `h = Threefish(key = h, tweak, m) ^ m`. `pos` is the number of bytes processed including
/// this block (a 96-bit field).
#[inline(always)]
fn ubi(h: &mut [u64; 8], block: &[u8; BLOCK], pos: u128, ty: u64, first: bool, last: bool) {
    let t0 = pos as u64;
    let t1 = ((pos >> 64) as u64 & 0xFFFF_FFFF) | ty << 56 | (first as u64) << 62 | (last as u64) << 63;
    let m = load_words(block);
    let mut v = m;
    encrypt_words(&expand_key(h), &expand_tweak(&[t0, t1]), &mut v);
    for i in 0..8 {
        h[i] = v[i] ^ m[i];
    }
}

/// An incremental Skein-512 hasher with a chosen output length in bytes.
#[derive(Clone)]
pub struct Skein512 {
    h: [u64; 8],
    buf: [u8; BLOCK],
    buf_len: usize,
    /// Message bytes already compressed (excluding `buf`).
    processed: u128,
    output_len: usize,
}

impl Skein512 {
    /// Starts a hash with an output of `output_len` bytes (at least 1; 32 and 64 are the usual sizes).
    ///
    /// Fails with [`Error::InvalidParameter`] for 0, or for a length whose bit count does not fit 64 bits.
    pub fn new(output_len: usize) -> Result<Self> {
        if output_len == 0 {
            return Err(Error::InvalidParameter { algorithm: NAME, reason: "output length must be at least 1 byte" });
        }
        let bits = (output_len as u64)
            .checked_mul(8)
            .ok_or(Error::InvalidParameter { algorithm: NAME, reason: "output length in bits must fit 64 bits" })?;
        let mut cfg = [0u8; BLOCK];
        cfg[..4].copy_from_slice(b"SHA3");
        cfg[4] = 1; // version 1, little-endian u16
        cfg[8..16].copy_from_slice(&bits.to_le_bytes());
        // bytes 16..19: tree parameters Yl = Yf = Ym = 0 (sequential hashing); the rest is zero.
        let mut h = [0u64; 8];
        ubi(&mut h, &cfg, 32, TYPE_CFG, true, true);
        Ok(Skein512 { h, buf: [0; BLOCK], buf_len: 0, processed: 0, output_len })
    }

    /// The output length in bytes.
    pub fn output_len(&self) -> usize {
        self.output_len
    }

    /// Absorbs more message bytes.
    pub fn update(&mut self, mut data: &[u8]) {
        // The last block must be held back: it is compressed with the "final" flag in `finalize`.
        if self.buf_len > 0 || data.len() <= BLOCK {
            let n = (BLOCK - self.buf_len).min(data.len());
            self.buf[self.buf_len..self.buf_len + n].copy_from_slice(&data[..n]);
            self.buf_len += n;
            data = &data[n..];
            if data.is_empty() {
                return;
            }
            let block = self.buf;
            self.compress(&block);
            self.buf_len = 0;
        }
        while data.len() > BLOCK {
            let (block, rest) = data.split_at(BLOCK);
            self.compress(block.try_into().expect("64-byte block"));
            data = rest;
        }
        self.buf[..data.len()].copy_from_slice(data);
        self.buf_len = data.len();
    }

    #[inline(always)]
    fn compress(&mut self, block: &[u8; BLOCK]) {
        let first = self.processed == 0;
        self.processed += BLOCK as u128;
        ubi(&mut self.h, block, self.processed, TYPE_MSG, first, false);
    }

    /// Finishes the hash into `out`, which must be exactly [`Skein512::output_len`] bytes long.
    pub fn finalize_into(mut self, out: &mut [u8]) -> Result<()> {
        Error::check_length(NAME, "output", self.output_len, out.len())?;
        self.buf[self.buf_len..].fill(0);
        let pos = self.processed + self.buf_len as u128;
        let first = self.processed == 0;
        let block = self.buf;
        ubi(&mut self.h, &block, pos, TYPE_MSG, first, true);
        for (i, chunk) in out.chunks_mut(BLOCK).enumerate() {
            let mut ctr = [0u8; BLOCK];
            ctr[..8].copy_from_slice(&(i as u64).to_le_bytes());
            let mut g = self.h;
            ubi(&mut g, &ctr, 8, TYPE_OUT, true, true);
            for (c, w) in chunk.chunks_mut(8).zip(g.iter()) {
                c.copy_from_slice(&w.to_le_bytes()[..c.len()]);
            }
        }
        Ok(())
    }

    /// Finishes the hash and returns the `output_len` bytes.
    #[cfg(feature = "alloc")]
    pub fn finalize(self) -> Vec<u8> {
        let mut out = alloc::vec![0u8; self.output_len];
        self.finalize_into(&mut out).expect("buffer has the output length");
        out
    }
}

impl zeroize::Zeroize for Skein512 {
    fn zeroize(&mut self) {
        self.h.zeroize();
        self.buf.zeroize();
        self.buf_len = 0;
        self.processed = 0;
    }
}

impl core::fmt::Debug for Skein512 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Skein512").field("output_len", &self.output_len).finish_non_exhaustive()
    }
}

#[cfg(feature = "std")]
impl std::io::Write for Skein512 {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One-shot Skein-512 with an output of `output_len` bytes. Fails with [`Error::InvalidParameter`] for 0.
#[cfg(feature = "alloc")]
pub fn skein512(output_len: usize, data: &[u8]) -> Result<Vec<u8>> {
    let mut h = Skein512::new(output_len)?;
    h.update(data);
    Ok(h.finalize())
}

macro_rules! skein512_fixed {
    ($(#[$doc:meta])* $name:ident, $label:literal, $out:literal) => {
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[derive(Clone)]
        pub struct $name(Skein512);

        impl $name {
            /// Digest length in bytes.
            pub const OUTPUT_LEN: usize = $out;
            /// Block length in bytes (the HMAC block size).
            pub const BLOCK_LEN: usize = BLOCK;

            /// A fresh hasher.
            pub fn new() -> Self {
                $name(Skein512::new($out).expect("a valid output length"))
            }

            /// Absorbs `data`. Returns `self` so calls can be chained.
            pub fn update(&mut self, data: &[u8]) -> &mut Self {
                self.0.update(data);
                self
            }

            /// Returns the digest, consuming the hasher.
            pub fn finalize(self) -> [u8; $out] {
                let mut out = [0u8; $out];
                self.0.finalize_into(&mut out).expect("output has the digest length");
                out
            }

            /// Forgets everything absorbed.
            pub fn reset(&mut self) {
                *self = Self::new();
            }

            /// One-shot digest of `data`.
            pub fn digest(data: &[u8]) -> [u8; $out] {
                let mut h = Self::new();
                h.update(data);
                h.finalize()
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
                self.0.zeroize();
            }
        }

        impl super::Hasher for $name {
            const NAME: &'static str = $label;
            const OUTPUT_LEN: usize = $out;
            const BLOCK_LEN: usize = BLOCK;
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
                $name::reset(self)
            }
        }

        super::impl_write!($name);
    };
}

skein512_fixed!(
    /// Skein-512-256: Skein-512 with a 32-byte output.
    Skein512_256,
    "Skein-512-256",
    32
);

skein512_fixed!(
    /// Skein-512-512: Skein-512 with a 64-byte output.
    Skein512_512,
    "Skein-512-512",
    64
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skein_512_256_initial_chaining_value_of_appendix_b() {
        // Skein 1.3, Appendix B.8: the IV of Skein-512-256 (the configuration UBI's output).
        let iv = [
            0xCCD0_44A1_2FDB_3E13,
            0xE835_9030_1A79_A9EB,
            0x55AE_A061_4F81_6E6F,
            0x2A27_67A4_AE9B_94DB,
            0xEC06_025E_74DD_7683,
            0xE7A4_36CD_C474_6251,
            0xC36F_BAF9_393A_D185,
            0x3EED_BA18_33ED_FC13,
        ];
        assert_eq!(Skein512::new(32).unwrap().h, iv);
    }
}
