//! SHA-512 of many messages at once, one message per 64-bit lane of a vector register, for the batched Ed25519
//! operations (key generation from many seeds, signing many messages): eight lanes of `zmm` registers with
//! AVX-512F, four lanes of `ymm` registers with AVX2, and elsewhere one message at a time through
//! [`Sha512`].
//!
//! Each message is given as a list of parts (Ed25519's challenge hashes R || A || M with no copy). Block `j` of
//! every lane is compressed together; a lane whose message has fewer blocks takes a zero block and keeps its state
//! (a masked blend). The padding of each lane is built on the fly in its last one or two blocks. Only the
//! message lengths and the places where parts end steer the code: they are public; the bytes never choose a
//! branch or an address.
//!
//! Crate-internal plumbing, public only so tests and the constant-time harness can force each backend.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

#[cfg(target_arch = "x86_64")]
use super::H512;
use super::Sha512;
#[cfg(target_arch = "x86_64")]
use crate::ct::wipe;
use crate::dispatch::Checked;

crate::dispatch::backends! {
    /// An implementation of SHA-512 over many messages: the batched Ed25519 operations hash through it.
    #[doc(hidden)]
    pub enum Backend for "SHA-512 lanes" {
        /// One message at a time through [`Sha512`](super::Sha512) (on the fastest SHA-2 backend).
        Soft: [],
        /// Four messages in the lanes of `ymm` registers.
        Avx2: [AVX2],
        /// Eight messages in the lanes of `zmm` registers (`vprorq`, `vpternlogq`).
        Avx512: [AVX2, AVX512F],
    }
}

/// `out[i]` = SHA-512 of the concatenation of `msgs[i]`'s parts, for every `i`, on the detected backend.
///
/// # Panics
/// If `msgs` and `out` differ in length (a bug in the caller: both are sized by it).
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
#[inline]
pub(crate) fn sha512_many(msgs: &[&[&[u8]]], out: &mut [[u8; 64]]) {
    sha512_many_with_backend(Backend::detect(), msgs, out)
}

/// [`sha512_many`] on a forced backend, for tests and the constant-time harness.
///
/// # Panics
/// If `msgs` and `out` differ in length.
#[doc(hidden)]
pub fn sha512_many_with_backend(backend: Checked<Backend>, msgs: &[&[&[u8]]], out: &mut [[u8; 64]]) {
    assert_eq!(msgs.len(), out.len(), "sha512_many: one output per message");
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => {
            for (m, o) in msgs.chunks(8).zip(out.chunks_mut(8)) {
                group::<8>(m, o, |h, w, active| avx512::compress8(backend, h, w, active));
            }
        }
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => {
            for (m, o) in msgs.chunks(4).zip(out.chunks_mut(4)) {
                group::<4>(m, o, |h, w, active| avx2::compress4(backend, h, w, active));
            }
        }
        _ => {
            for (parts, o) in msgs.iter().zip(out.iter_mut()) {
                let mut h = Sha512::new();
                for p in parts.iter() {
                    h.update(p);
                }
                *o = h.finalize();
            }
        }
    }
}

/// Block `j` (128 bytes from byte `128 j`) of the message made of `parts` (`len` bytes in all, padded to
/// `blocks` blocks) as its 16 big-endian words.
#[cfg(target_arch = "x86_64")]
#[inline]
fn block_words(parts: &[&[u8]], len: usize, blocks: usize, j: usize, words: &mut [u64; 16]) {
    let start = 128 * j;
    // The common case: the block lies whole inside one part, so its words are read from it in place.
    if start + 128 <= len {
        let mut off = start;
        for p in parts {
            if off < p.len() {
                if off + 128 <= p.len() {
                    for (w, b) in words.iter_mut().zip(p[off..off + 128].chunks_exact(8)) {
                        *w = u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
                    }
                    return;
                }
                break;
            }
            off -= p.len();
        }
    }
    // A block across parts, or one with padding: assembled byte by byte.
    let mut buf = [0u8; 128];
    let mut pos = 0usize; // offset of the current part in the message
    for p in parts {
        let lo = start.max(pos);
        let hi = (start + 128).min(pos + p.len());
        if lo < hi {
            buf[lo - start..hi - start].copy_from_slice(&p[lo - pos..hi - pos]);
        }
        pos += p.len();
    }
    if (start..start + 128).contains(&len) {
        buf[len - start] = 0x80;
    }
    if j + 1 == blocks {
        buf[112..].copy_from_slice(&((len as u128) << 3).to_be_bytes());
    }
    for (w, b) in words.iter_mut().zip(buf.chunks_exact(8)) {
        *w = u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    }
    wipe(&mut buf);
}

/// The digests of up to `L` messages (`msgs.len() == out.len() <= L`) through `compress`, which runs one block of
/// every lane: `compress(h, w, active)` with `h[i][k]` state word `i` of lane `k`, `w[i][k]` message word `i` of
/// lane `k`'s block, and `active[k]` true where lane `k` has a block (the others keep their state).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn group<const L: usize>(
    msgs: &[&[&[u8]]],
    out: &mut [[u8; 64]],
    mut compress: impl FnMut(&mut [[u64; L]; 8], &[[u64; L]; 16], &[bool; L]),
) {
    let n = msgs.len();
    debug_assert!(n <= L && out.len() == n);
    let mut len = [0usize; L];
    let mut blocks = [0usize; L];
    for k in 0..n {
        len[k] = msgs[k].iter().map(|p| p.len()).sum();
        // The message, the 0x80 byte and the 16-byte length, in whole blocks.
        blocks[k] = (len[k] + 17).div_ceil(128);
    }
    let max = blocks.iter().copied().max().unwrap_or(0);
    let mut h = [[0u64; L]; 8];
    for (row, &iv) in h.iter_mut().zip(&H512) {
        *row = [iv; L];
    }
    let mut w = [[0u64; L]; 16];
    let mut words = [0u64; 16];
    for j in 0..max {
        let mut active = [false; L];
        for k in 0..n {
            if j < blocks[k] {
                active[k] = true;
                block_words(msgs[k], len[k], blocks[k], j, &mut words);
            } else {
                words = [0; 16];
            }
            for (row, &x) in w.iter_mut().zip(&words) {
                row[k] = x;
            }
        }
        compress(&mut h, &w, &active);
    }
    for (k, o) in out.iter_mut().enumerate() {
        for (i, row) in h.iter().enumerate() {
            o[8 * i..8 * i + 8].copy_from_slice(&row[k].to_be_bytes());
        }
    }
    for row in h.iter_mut() {
        wipe(row);
    }
    for row in w.iter_mut() {
        wipe(row);
    }
    wipe(&mut words);
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// A small deterministic generator (the values do not matter, only their variety).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| self.next() as u8).collect()
        }
    }

    /// Splits `m` into one to four parts at random points (empty parts included).
    fn split<'a>(rng: &mut Rng, m: &'a [u8]) -> Vec<&'a [u8]> {
        let cuts = rng.below(4);
        let mut at: Vec<usize> = (0..cuts).map(|_| rng.below(m.len() + 1)).collect();
        at.sort_unstable();
        let mut parts = Vec::new();
        let mut prev = 0;
        for c in at {
            parts.push(&m[prev..c]);
            prev = c;
        }
        parts.push(&m[prev..]);
        parts
    }

    /// Every backend this CPU runs (each forced) against `Sha512::digest` of the whole message.
    fn check(msgs: &[Vec<u8>], rng: &mut Rng) {
        let split: Vec<Vec<&[u8]>> = msgs.iter().map(|m| split(rng, m)).collect();
        let refs: Vec<&[&[u8]]> = split.iter().map(|p| p.as_slice()).collect();
        let want: Vec<[u8; 64]> = msgs.iter().map(|m| Sha512::digest(m)).collect();
        let mut ran = 0;
        for b in Backend::available() {
            let mut got = std::vec![[0u8; 64]; msgs.len()];
            sha512_many_with_backend(b, &refs, &mut got);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{b:?}: message {i} of {} ({} bytes)", msgs.len(), msgs[i].len());
            }
            ran += 1;
        }
        assert!(ran >= 1);
    }

    const EDGES: [usize; 11] = [0, 1, 111, 112, 127, 128, 129, 239, 240, 1024, 2000];

    #[test]
    fn mixed_lengths_every_batch_size() {
        let mut rng = Rng(0x5eed_1234_5678_9abc);
        for n in 0..=17 {
            for _ in 0..3 {
                let msgs: Vec<Vec<u8>> = (0..n)
                    .map(|_| {
                        let len = if rng.below(2) == 0 { EDGES[rng.below(EDGES.len())] } else { rng.below(3072) };
                        rng.bytes(len)
                    })
                    .collect();
                check(&msgs, &mut rng);
            }
        }
    }

    /// Each lane position holds the one long message (it finishes last) or the one short one (first), in every
    /// group of the batch.
    #[test]
    fn every_lane_finishes_first_and_last() {
        let mut rng = Rng(0x0dd_ba11);
        for n in [4usize, 8, 9, 16] {
            for pos in 0..n {
                for (other, odd) in [(300usize, 1000usize), (1000, 5), (129, 0), (240, 239)] {
                    let msgs: Vec<Vec<u8>> = (0..n).map(|k| rng.bytes(if k == pos { odd } else { other })).collect();
                    check(&msgs, &mut rng);
                }
            }
        }
    }

    #[test]
    fn every_edge_length_in_every_lane() {
        let mut rng = Rng(0xfeed);
        for &len in &EDGES {
            let msgs: Vec<Vec<u8>> = (0..8).map(|_| rng.bytes(len)).collect();
            check(&msgs, &mut rng);
        }
    }

    /// FIPS 180-4 examples (the NIST CSRC SHA-512 examples) through the lanes, beside other messages.
    #[test]
    fn fips_180_4_known_answers() {
        let abc = hex::decode(
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
             2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        )
        .unwrap();
        let two_block = hex::decode(
            "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018\
             501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
        )
        .unwrap();
        let empty = hex::decode(
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce\
             47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
        )
        .unwrap();
        let long: &[u8] = b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
        let (a, b) = long.split_at(61);
        let msgs: [&[&[u8]]; 5] = [&[b"abc"], &[a, b], &[], &[b"a", b"", b"bc"], &[long]];
        let want = [&abc, &two_block, &empty, &abc, &two_block];
        for b in Backend::available() {
            let mut got = [[0u8; 64]; 5];
            sha512_many_with_backend(b, &msgs, &mut got);
            for (g, w) in got.iter().zip(want) {
                assert_eq!(&g[..], &w[..], "{b:?}");
            }
        }
    }

    #[test]
    #[should_panic(expected = "one output per message")]
    fn output_count_must_match() {
        let mut out = [[0u8; 64]; 1];
        sha512_many_with_backend(Checked::portable(), &[&[b"a"], &[b"b"]], &mut out);
    }
}
