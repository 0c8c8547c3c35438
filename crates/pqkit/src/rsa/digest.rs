//! The hash functions the RSA padding schemes use (pqkit's own SHA-2, and a small SHA-1 kept only for
//! RSAES-OAEP, where SHA-1 is still the most common MGF1 and label hash), MGF1 (RFC 8017 §B.2.1), and the
//! constant-time byte helpers the decryption paths share.

use alloc::vec::Vec;

use crate::hash::Hasher;
use crate::hash::sha2::{Sha224, Sha256, Sha384, Sha512, Sha512_224, Sha512_256};

/// A hash function for RSASSA-PSS, RSASSA-PKCS1-v1_5, RSAES-OAEP and MGF1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HashAlg {
    /// SHA-1 (20 bytes). Accepted for RSAES-OAEP (label hash and MGF1) and for MGF1 in RSASSA-PSS
    /// verification only; never for signature generation or the signed digest.
    Sha1,
    /// SHA-224 (28 bytes).
    Sha224,
    /// SHA-256 (32 bytes): the default everywhere.
    Sha256,
    /// SHA-384 (48 bytes).
    Sha384,
    /// SHA-512 (64 bytes).
    Sha512,
    /// SHA-512/224 (28 bytes).
    Sha512_224,
    /// SHA-512/256 (32 bytes).
    Sha512_256,
}

impl HashAlg {
    /// Digest length in bytes.
    pub const fn output_len(self) -> usize {
        match self {
            HashAlg::Sha1 => 20,
            HashAlg::Sha224 | HashAlg::Sha512_224 => 28,
            HashAlg::Sha256 | HashAlg::Sha512_256 => 32,
            HashAlg::Sha384 => 48,
            HashAlg::Sha512 => 64,
        }
    }

    /// The standard name, e.g. `"SHA-256"`.
    pub const fn name(self) -> &'static str {
        match self {
            HashAlg::Sha1 => "SHA-1",
            HashAlg::Sha224 => "SHA-224",
            HashAlg::Sha256 => "SHA-256",
            HashAlg::Sha384 => "SHA-384",
            HashAlg::Sha512 => "SHA-512",
            HashAlg::Sha512_224 => "SHA-512/224",
            HashAlg::Sha512_256 => "SHA-512/256",
        }
    }

    /// The digest of the concatenation of `parts`.
    pub fn digest_parts(self, parts: &[&[u8]]) -> Vec<u8> {
        let mut buf = [0u8; 64];
        let n = self.digest_parts_into(parts, &mut buf);
        buf[..n].to_vec()
    }

    /// The digest of the concatenation of `parts` into the first [`output_len`](Self::output_len) bytes of
    /// `out`, without a heap allocation; returns that length.
    pub(crate) fn digest_parts_into(self, parts: &[&[u8]], out: &mut [u8; 64]) -> usize {
        fn run<H: Hasher>(parts: &[&[u8]], out: &mut [u8; 64]) -> usize {
            let mut h = H::new();
            for p in parts {
                h.update(p);
            }
            let d = h.finalize();
            let d = d.as_ref();
            out[..d.len()].copy_from_slice(d);
            d.len()
        }
        match self {
            HashAlg::Sha1 => {
                let mut h = Sha1::new();
                for p in parts {
                    h.update(p);
                }
                let d = h.finalize();
                out[..d.len()].copy_from_slice(&d);
                d.len()
            }
            HashAlg::Sha224 => run::<Sha224>(parts, out),
            HashAlg::Sha256 => run::<Sha256>(parts, out),
            HashAlg::Sha384 => run::<Sha384>(parts, out),
            HashAlg::Sha512 => run::<Sha512>(parts, out),
            HashAlg::Sha512_224 => run::<Sha512_224>(parts, out),
            HashAlg::Sha512_256 => run::<Sha512_256>(parts, out),
        }
    }

    /// The digest of `data`.
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        self.digest_parts(&[data])
    }
}

/// A ChaCha20 generator freshly seeded from the operating system, for PKCS#1 v1.5 encryption without a caller rng:
/// its padding draws an unknown number of bytes (nonzero ones, redrawn). OAEP's seed and PSS's salt, of fixed
/// lengths, are read from the OS directly.
#[cfg(feature = "std")]
pub(crate) fn os_rng() -> crate::Result<crate::rng::ChaChaRng<20>> {
    crate::rng::ChaChaRng::<20>::from_os_rng()
}

/// MGF1 (RFC 8017 §B.2.1): XORs `Hash(seed || C)` for C = 0, 1, ... into `out`.
pub(crate) fn mgf1_xor(hash: HashAlg, seed: &[u8], out: &mut [u8]) {
    let h = hash.output_len();
    for (counter, chunk) in out.chunks_mut(h).enumerate() {
        let c = (counter as u32).to_be_bytes();
        // One block on the stack (no allocation per block), wiped after use.
        let mut block = [0u8; 64];
        hash.digest_parts_into(&[seed, &c], &mut block);
        for (o, b) in chunk.iter_mut().zip(block.iter()) {
            *o ^= *b;
        }
        zeroize::Zeroize::zeroize(&mut block);
    }
}

// ---- constant-time helpers (masks are all-ones for true, zero for false) ----

/// All-ones if `a == b`.
#[inline]
pub(crate) fn ct_eq_mask(a: usize, b: usize) -> usize {
    let x = core::hint::black_box(a ^ b);
    // x == 0  <=>  (x | -x) has its top bit clear.
    let top = (x | x.wrapping_neg()) >> (usize::BITS - 1);
    top.wrapping_sub(1)
}

/// All-ones if `a < b` (both below 2^(BITS-1)).
#[inline]
pub(crate) fn ct_lt_mask(a: usize, b: usize) -> usize {
    let d = core::hint::black_box(a.wrapping_sub(b));
    0usize.wrapping_sub(d >> (usize::BITS - 1))
}

/// `a` where `mask` is all-ones, `b` where it is zero.
#[inline]
pub(crate) fn ct_select(mask: usize, a: usize, b: usize) -> usize {
    (a & mask) | (b & !mask)
}

/// A compact SHA-1 (FIPS 180-4 §6.1), one-shot-per-instance, for OAEP only.
#[derive(Clone)]
pub(crate) struct Sha1 {
    h: [u32; 5],
    buf: [u8; 64],
    buf_len: usize,
    total: u64,
}

impl Drop for Sha1 {
    fn drop(&mut self) {
        // OAEP's MGF1 hashes the secret seed and data block: wipe the state.
        zeroize::Zeroize::zeroize(&mut self.h);
        zeroize::Zeroize::zeroize(&mut self.buf);
    }
}

impl Sha1 {
    pub(crate) fn new() -> Self {
        Sha1 { h: [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0], buf: [0; 64], buf_len: 0, total: 0 }
    }

    fn compress(h: &mut [u32; 5], block: &[u8]) {
        let mut w = [0u32; 80];
        for (i, c) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = *h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i / 20 {
                0 => ((b & c) | (!b & d), 0x5A827999),
                1 => (b ^ c ^ d, 0x6ED9EBA1),
                2 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }

    pub(crate) fn update(&mut self, mut data: &[u8]) {
        self.total = self.total.wrapping_add(data.len() as u64);
        if self.buf_len > 0 {
            let take = (64 - self.buf_len).min(data.len());
            self.buf[self.buf_len..self.buf_len + take].copy_from_slice(&data[..take]);
            self.buf_len += take;
            data = &data[take..];
            if self.buf_len < 64 {
                return;
            }
            let block = self.buf;
            Self::compress(&mut self.h, &block);
            self.buf_len = 0;
        }
        let mut blocks = data.chunks_exact(64);
        for b in &mut blocks {
            Self::compress(&mut self.h, b);
        }
        let rest = blocks.remainder();
        self.buf[..rest.len()].copy_from_slice(rest);
        self.buf_len = rest.len();
    }

    pub(crate) fn finalize(mut self) -> [u8; 20] {
        let bits = self.total.wrapping_mul(8);
        let mut pad = [0u8; 72];
        pad[0] = 0x80;
        let zeros = (55usize.wrapping_sub(self.buf_len)) % 64;
        self.update(&pad[..1 + zeros]);
        self.update(&bits.to_be_bytes());
        debug_assert_eq!(self.buf_len, 0);
        let mut out = [0u8; 20];
        for (o, h) in out.chunks_exact_mut(4).zip(self.h) {
            o.copy_from_slice(&h.to_be_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_known_answers() {
        // FIPS 180-4 examples and the empty string.
        let cases: [(&[u8], &str); 3] = [
            (b"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
            (b"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
            (b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
        ];
        for (m, want) in cases {
            let d = HashAlg::Sha1.digest(m);
            let hex: alloc::string::String = d.iter().map(|b| alloc::format!("{b:02x}")).collect();
            assert_eq!(hex, want);
        }
        // A million 'a' fed in odd pieces.
        let mut h = Sha1::new();
        let chunk = [b'a'; 997];
        let mut left = 1_000_000usize;
        while left > 0 {
            let t = left.min(chunk.len());
            h.update(&chunk[..t]);
            left -= t;
        }
        let hex: alloc::string::String = h.finalize().iter().map(|b| alloc::format!("{b:02x}")).collect();
        assert_eq!(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    }

    #[test]
    fn masks() {
        for a in 0..40usize {
            for b in 0..40usize {
                assert_eq!(ct_eq_mask(a, b) == usize::MAX, a == b);
                assert_eq!(ct_eq_mask(a, b) == 0, a != b);
                assert_eq!(ct_lt_mask(a, b) == usize::MAX, a < b);
                assert_eq!(ct_lt_mask(a, b) == 0, a >= b);
            }
        }
        assert_eq!(ct_select(usize::MAX, 3, 4), 3);
        assert_eq!(ct_select(0, 3, 4), 4);
    }
}
