//! ChaCha20-Poly1305 (RFC 8439 §2.8) and XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha §2).
//!
//! Both make one pass over memory: the message is processed in chunks small enough to stay in L1 (4 KiB, or
//! the 2 KiB passes of the stitched AVX-512 loop, or the 512-byte passes of the stitched AVX2 loop); each chunk
//! is encrypted and then fed to Poly1305 while it is still in cache (seal), or fed to Poly1305 and then
//! decrypted (open). The stitched loops hash one chunk on the integer units (scalar Poly1305) while the vector
//! units compute the next chunk's keystream; the AVX2 loop hashes every block so, on two independent chains. The
//! ChaCha backend chosen on AMD Zen 3 (`Backend::Avx2Zen3`) has no stitched loop: there each chunk is encrypted
//! and then hashed by the vector Poly1305, which measured faster on a shared core (docs/chacha.md).
//!
//! Short messages (at most 192 bytes) take one ChaCha20 call for the Poly1305 key block and the data together and
//! one straight scalar Poly1305 pass. On AVX2 with the stitched loop, messages up to 1984 bytes compute their
//! keystream from block 1 on in 8-block passes (seal XORs it into the message, open writes it to a buffer), block 0
//! (the Poly1305 key) on the integer units during the first pass (so the key block costs no vector work), hashing
//! each pass's ciphertext during the next, all of it on the two scalar chains (their key `r^16` alone: the vector
//! Poly1305's table of powers would cost more than it saves here); on AMD Zen 4 and Zen 5, open of whole passes
//! (512, 1024 or 1536 bytes) instead computes block 0 first, and each pass hashes its own ciphertext during its
//! double rounds and decrypts it in place after them (the choice is the ChaCha backend's:
//! `chacha::open_whole_block0_first`). Open leaves the caller's buffer holding the ciphertext on a bad tag: the
//! short and medium paths check the tag before they decrypt anything, the in-place and long paths encrypt again.
//!
//! ## Limits
//! - One (key, nonce) pair must never seal two messages. With ChaCha20-Poly1305's 12-byte nonce use a counter
//!   or a sequence number; for random nonces use XChaCha20-Poly1305 (24 bytes).
//! - A message may be at most [`MAX_MESSAGE_LEN`] bytes (the 32-bit block counter starts at 1); longer input
//!   is [`Error::MessageTooLong`].

use super::{Aead, TAG_LEN};
use crate::chacha::{self, Backend};
use crate::dispatch::Checked;
use crate::poly1305::Poly1305;
#[cfg(target_arch = "x86_64")]
use crate::poly1305::{Chain2, Chain2Acc};
use crate::{Error, Result};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Longest message one nonce can seal: 2^32 - 1 blocks of 64 bytes (counter 0 keys Poly1305).
pub const MAX_MESSAGE_LEN: u64 = ((1u64 << 32) - 1) * 64;

/// Bytes encrypted and then authenticated per step of the one-pass loop: a multiple of 64 (whole ChaCha20
/// blocks, so the counter stays block-aligned) that several chunks of which fit L1 together.
const CHUNK: usize = 4096;

/// One seal or open: ChaCha20 from block 1 over the message and Poly1305 over
/// `aad || pad16 || ct || pad16 || le64(aad.len) || le64(ct.len)`, keyed by the first 32 bytes of block 0.
struct OnePass {
    state: [u32; 16],
    mac: Poly1305,
    backend: Checked<Backend>,
}

impl OnePass {
    fn new(key: &[u8; 32], nonce: &[u8; 12], aad: &[u8], backend: Checked<Backend>) -> Self {
        let state = chacha::state_ietf(key, 0, nonce);
        let mut block0 = [0u8; 64];
        chacha::apply_blocks(backend, 20, &state, &mut block0, false);
        let p = OnePass::keyed(state, &block0, aad, backend);
        crate::ct::wipe(&mut block0);
        p
    }

    /// The pass for `state` (counter 0) whose block 0 is `block0`: Poly1305 keyed by its first 32 bytes, the
    /// AAD absorbed, the counter moved on to 1.
    fn keyed(mut state: [u32; 16], block0: &[u8], aad: &[u8], backend: Checked<Backend>) -> Self {
        let mut otk = [0u8; 32];
        otk.copy_from_slice(&block0[..32]);
        let mut mac = Poly1305::new(&otk);
        crate::ct::wipe(&mut otk);
        mac.update_padded(aad);
        state[12] = 1;
        OnePass { state, mac, backend }
    }

    /// Encrypts `buf` and authenticates the ciphertext, chunk by chunk.
    fn encrypt(&mut self, buf: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        let buf = {
            // The vector units compute the keystream of chunk i while scalar Poly1305 hashes chunk i - 1 on the
            // integer units (AVX-512: its first 256 bytes, the MAC's own vector backend the rest right after;
            // AVX2: all of it, on two chains); the last chunk is hashed here.
            let size = match chacha::stitch(self.backend) {
                Some(chacha::StitchLoop::Avx512(_)) => chacha::STITCH_CHUNK,
                Some(chacha::StitchLoop::Avx2(_)) => chacha::STITCH2_CHUNK,
                None => usize::MAX,
            };
            if buf.len() / 2 >= size {
                let whole = buf.len() / size * size;
                let (head, rest) = buf.split_at_mut(whole);
                match chacha::stitch(self.backend) {
                    Some(chacha::StitchLoop::Avx512(b)) => {
                        chacha::xor20_stitched::<true, _>(b, &self.state, head, &mut self.mac)
                    }
                    Some(chacha::StitchLoop::Avx2(b)) => {
                        let chain = self.mac.chain2();
                        let mut job = Job2 { mac: &mut self.mac, chain: &chain };
                        chacha::xor20_stitched2::<true, _>(b, &self.state, head, &mut job)
                    }
                    None => {}
                }
                self.mac.update(&head[whole - size..]);
                self.state[12] = self.state[12].wrapping_add((whole / 64) as u32);
                rest
            } else {
                buf
            }
        };
        for chunk in buf.chunks_mut(CHUNK) {
            chacha::apply_blocks(self.backend, 20, &self.state, chunk, true);
            self.mac.update(chunk);
            // CHUNK is a multiple of 64 and only the last chunk can be shorter, so this stays block-aligned;
            // the caller bounded the length, so the 32-bit counter does not overflow.
            self.state[12] = self.state[12].wrapping_add((chunk.len() / 64) as u32);
        }
    }

    /// Authenticates the ciphertext in `buf` and decrypts it, chunk by chunk.
    fn decrypt(&mut self, buf: &mut [u8]) {
        #[cfg(target_arch = "x86_64")]
        let buf = {
            // The first chunk is hashed here; then, while the vector units decrypt chunk i, scalar Poly1305 hashes
            // chunk i + 1 (still ciphertext; AVX-512: its first 256 bytes, the MAC's backend the rest right after;
            // AVX2: all of it, on two chains).
            let size = match chacha::stitch(self.backend) {
                Some(chacha::StitchLoop::Avx512(_)) => chacha::STITCH_CHUNK,
                Some(chacha::StitchLoop::Avx2(_)) => chacha::STITCH2_CHUNK,
                None => usize::MAX,
            };
            if buf.len() / 2 >= size {
                let whole = buf.len() / size * size;
                let (head, rest) = buf.split_at_mut(whole);
                self.mac.update(&head[..size]);
                match chacha::stitch(self.backend) {
                    Some(chacha::StitchLoop::Avx512(b)) => {
                        chacha::xor20_stitched::<false, _>(b, &self.state, head, &mut self.mac)
                    }
                    Some(chacha::StitchLoop::Avx2(b)) => {
                        let chain = self.mac.chain2();
                        let mut job = Job2 { mac: &mut self.mac, chain: &chain };
                        chacha::xor20_stitched2::<false, _>(b, &self.state, head, &mut job)
                    }
                    None => {}
                }
                self.state[12] = self.state[12].wrapping_add((whole / 64) as u32);
                rest
            } else {
                buf
            }
        };
        for chunk in buf.chunks_mut(CHUNK) {
            self.mac.update(chunk);
            chacha::apply_blocks(self.backend, 20, &self.state, chunk, true);
            self.state[12] = self.state[12].wrapping_add((chunk.len() / 64) as u32);
        }
    }

    fn finish(mut self, aad_len: usize, ct_len: usize) -> [u8; TAG_LEN] {
        let tag = finish_mac(self.mac, aad_len, ct_len);
        crate::ct::wipe(&mut self.state);
        tag
    }
}

/// The tag of a MAC that has absorbed `aad || pad16 || ct`: `pad16`, the two lengths, then Poly1305's finish.
fn finish_mac(mut mac: Poly1305, aad_len: usize, ct_len: usize) -> [u8; TAG_LEN] {
    mac.update_padded(&[]);
    let mut lens = [0u8; 16];
    lens[..8].copy_from_slice(&(aad_len as u64).to_le_bytes());
    lens[8..].copy_from_slice(&(ct_len as u64).to_le_bytes());
    mac.update(&lens);
    mac.finalize()
}

/// Longest message of the AVX2 medium path ([`medium`]).
#[cfg(target_arch = "x86_64")]
const MEDIUM: usize = MEDIUM_KS - 64;

/// The keystream buffer of the AVX2 medium path: four 8-block passes.
#[cfg(target_arch = "x86_64")]
const MEDIUM_KS: usize = 4 * 512;

/// Runs `f` on a zeroed keystream buffer for the medium path's open of a `len`-byte message, of the smallest of 512, 1024
/// and [`MEDIUM_KS`] bytes that holds the bytes it writes (block 1 to the end of the last pass: `len` rounded up to
/// 256), and wipes those bytes afterwards. Zeroing the whole 2 KiB for every message was about 5% of a 1 KiB open.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn with_ks<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    #[inline(always)]
    fn run<const N: usize, R>(used: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
        let mut ks = [0u8; N];
        let r = f(&mut ks);
        crate::ct::wipe(&mut ks[..used]);
        r
    }
    let used = len.next_multiple_of(256);
    match used {
        0..=512 => run::<512, R>(used, f),
        513..=1024 => run::<1024, R>(used, f),
        _ => run::<MEDIUM_KS, R>(used, f),
    }
}

/// Seal (`SEAL`) or the authentication half of open on the AVX2 backend, for `SHORT < len <= MEDIUM`; returns
/// the tag. The keystream from block 1 on runs in 8-block passes (the last one as a 4-block row-layout pass when it
/// needs at most four blocks); block 0, the Poly1305 key, is computed on the integer units during the first pass,
/// so it costs no vector work and no pass of its own. Pass `i` covers message bytes `512 i .. 512 i + 512`; while
/// pass `i > 0` runs, the integer units hash the ciphertext of pass `i - 1` (32 blocks on two chains); the last
/// pass's bytes are hashed after it, on the same two chains when they are a whole 512 (else on the scalar code
/// alone: under 32 blocks). With `SEAL`, each pass XORs its keystream straight into `buf` and `ks` is not used;
/// without, the keystream goes to `ks` at the same offsets, `buf` (the ciphertext) is left as it is, and the
/// caller XORs in `ks[..len]` once the tag has checked out. An open of whole passes takes
/// [`medium_open_in_place`] instead where the backend says so ([`chacha::open_whole_block0_first`]).
//
// Why this shape: the stitched passes are bound by the integer instructions the scalar Poly1305 blocks issue, not
// by the latency of one multiply chain or by the multiplier, and the first pass has nothing to hash (the key is
// not known before block 0 is). Giving block 0 to the integer units during that pass fills them there, and every
// pass then computes only message keystream: 1 KiB takes two passes where block 0 in the vector pass needs three.
// Nothing here runs the vector Poly1305, so the chains' key is `r^16` alone (`chain2_alone`): measured on Zen 3
// (rdtsc, both ways interleaved in one process), the vector backend's table of powers and the last 512 bytes on it
// made a seal 4-6% slower than the two chains at 512, 1024 and 1536 bytes, and the unused table 3-5% slower at
// 700 to 1900 bytes.
#[cfg(target_arch = "x86_64")]
fn medium<const SEAL: bool>(
    backend: Checked<Backend>,
    key: &[u8; 32],
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
    ks: &mut [u8],
) -> [u8; TAG_LEN] {
    let len = buf.len();
    debug_assert!(len > SHORT && len <= MEDIUM);
    let mut state = chacha::state_ietf(key, 0, nonce);
    let blocks = len.div_ceil(64);
    let passes = blocks.div_ceil(8);
    // Message bytes covered by pass i, and (open) the bytes of `ks` the pass writes, at the same offset (256 for a
    // last pass of at most four blocks).
    let region = |i: usize| 512 * i..(512 * i + 512).min(len);
    let out = |i: usize| 512 * i..512 * i + if blocks - 8 * i <= 4 { 256 } else { 512 };
    let mut block0 = [0u32; 16];
    let first = chacha::PassSide::<Job2>::Block(&mut block0);
    if SEAL {
        chacha::ks_pass2(backend, &state, 1, &mut buf[region(0)], true, first);
    } else {
        chacha::ks_pass2(backend, &state, 1, &mut ks[out(0)], false, first);
    }
    let mut otk = [0u8; 32];
    for (o, w) in otk.chunks_exact_mut(4).zip(&block0) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    crate::ct::wipe(&mut block0);
    let mut mac = Poly1305::new(&otk);
    crate::ct::wipe(&mut otk);
    mac.update_padded(aad);
    let chain = mac.chain2_alone();
    if passes > 1 {
        for i in 1..passes {
            let mut job = Job2 { mac: &mut mac, chain: &chain };
            let skip = 1 + 8 * i as u64;
            // Every pass but the last covers 512 bytes: the ciphertext of pass i - 1 is hashed during pass i.
            if SEAL {
                let (done, rest) = buf.split_at_mut(512 * i);
                let side = chacha::PassSide::Hash(&done[512 * (i - 1)..], &mut job);
                chacha::ks_pass2(backend, &state, skip, &mut rest[..region(i).len()], true, side);
            } else {
                let side = chacha::PassSide::Hash(&buf[region(i - 1)], &mut job);
                chacha::ks_pass2(backend, &state, skip, &mut ks[out(i)], false, side);
            }
        }
    }
    let last = &buf[region(passes - 1)];
    match <&[u8; 512]>::try_from(last) {
        Ok(run) => mac.chain2_run(&chain, run),
        Err(_) => mac.update(last),
    }
    crate::ct::wipe(&mut state);
    finish_mac(mac, aad.len(), len)
}

/// Open in place of a message of whole 8-block passes (512, 1024 or 1536 bytes) where the backend computes block 0
/// first ([`chacha::open_whole_block0_first`]): decrypts `buf` and returns the tag its ciphertext had, for the
/// caller to check (and, on a bad tag, to restore the ciphertext by encrypting again). Block 0 (the Poly1305 key)
/// runs first, alone; then pass `i` hashes the ciphertext of message bytes `512 i .. 512 i + 512` on the integer
/// units during its double rounds and XORs its keystream into those bytes after them
/// ([`chacha::PassSide::HashOut`]). Nothing is left to hash after the last pass, so the two chains need `r^16`
/// alone, not the vector backend's table of powers.
//
// Why this shape: [`medium`]'s hashes the last pass's 512 bytes after it, on their own; here block 0 costs a
// one-block call instead (measured on Zen 3, rdtsc: 196-245 ticks, against 588 for a pass computing block 0 on the
// integer units and 613 for a pass hashing 512 bytes). And [`medium`]'s open writes the keystream to a buffer and
// XORs it in after the tag check, a second pass over the message and a buffer to clear; here each pass decrypts
// the bytes it hashed.
#[cfg(target_arch = "x86_64")]
fn medium_open_in_place(
    backend: Checked<Backend>,
    key: &[u8; 32],
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_LEN] {
    let len = buf.len();
    debug_assert!(len.is_multiple_of(512) && len <= MEDIUM);
    // Block 0 alone, Poly1305 keyed and the AAD absorbed; the state's counter is then 1.
    let mut p = OnePass::new(key, nonce, aad, backend);
    let chain = p.mac.chain2_alone();
    for (i, region) in buf.chunks_exact_mut(512).enumerate() {
        let mut job = Job2 { mac: &mut p.mac, chain: &chain };
        chacha::ks_pass2(backend, &p.state, 8 * i as u64, region, true, chacha::PassSide::HashOut(&mut job));
    }
    p.finish(aad.len(), len)
}

/// The AVX-512 stitched loop's job: Poly1305 over the ciphertext, the first blocks of each chunk on the scalar
/// path (integer units, during the vector pass), the rest on the MAC's own backend.
#[cfg(target_arch = "x86_64")]
impl chacha::Stitch for Poly1305 {
    #[inline(always)]
    fn scalar_block(&mut self, m0: u64, m1: u64) {
        Poly1305::scalar_block(self, m0, m1);
    }

    #[inline]
    fn rest(&mut self, data: &[u8]) {
        self.update(data);
    }
}

/// The AVX2 stitched loop's job: Poly1305 over the ciphertext, every block on two scalar chains.
#[cfg(target_arch = "x86_64")]
struct Job2<'a> {
    mac: &'a mut Poly1305,
    chain: &'a Chain2,
}

#[cfg(target_arch = "x86_64")]
impl chacha::Stitch2 for Job2<'_> {
    type Acc = Chain2Acc;

    #[inline(always)]
    fn begin(&mut self) -> Chain2Acc {
        self.mac.chain2_begin()
    }

    #[inline(always)]
    fn pair(&self, acc: &mut Chain2Acc, a: [u64; 2], b: [u64; 2]) {
        self.chain.pair(acc, a, b);
    }

    #[inline(always)]
    fn end(&mut self, acc: Chain2Acc) {
        self.mac.chain2_end(self.chain, acc);
    }
}

/// Messages of at most this many bytes take one ChaCha20 call for block 0 (the Poly1305 key) and the message
/// together: one 4-block pass instead of two, which halves the cost of a short seal or open.
const SHORT: usize = 192;

/// Keystream blocks 0..=3 for a short message (the first `64 + len` bytes are written; block 0 keys Poly1305).
fn short_keystream(key: &[u8; 32], nonce: &[u8; 12], len: usize, backend: Checked<Backend>) -> [u8; 64 + SHORT] {
    debug_assert!(len <= SHORT);
    let mut state = chacha::state_ietf(key, 0, nonce);
    let mut ks = [0u8; 64 + SHORT];
    chacha::apply_blocks(backend, 20, &state, &mut ks[..64 + len], false);
    crate::ct::wipe(&mut state);
    ks
}

/// The tag of a short message: the few blocks go straight through the scalar Poly1305, without a streaming
/// state's set-up, buffering and dispatch.
fn short_tag(ks: &[u8; 64 + SHORT], aad: &[u8], ct: &[u8]) -> [u8; TAG_LEN] {
    let mut otk = [0u8; 32];
    otk.copy_from_slice(&ks[..32]);
    let tag = crate::poly1305::aead_tag(&otk, aad, ct);
    crate::ct::wipe(&mut otk);
    tag
}

fn xor_into(buf: &mut [u8], ks: &[u8]) {
    for (b, k) in buf.iter_mut().zip(ks) {
        *b ^= *k;
    }
}

fn check_len(algorithm: &'static str, len: usize) -> Result<()> {
    if len as u64 > MAX_MESSAGE_LEN { Err(Error::MessageTooLong { algorithm, max: MAX_MESSAGE_LEN }) } else { Ok(()) }
}

fn seal(
    algorithm: &'static str,
    key: &[u8; 32],
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
    backend: Checked<Backend>,
) -> Result<[u8; TAG_LEN]> {
    check_len(algorithm, buf.len())?;
    if buf.len() <= SHORT {
        let mut ks = short_keystream(key, nonce, buf.len(), backend);
        xor_into(buf, &ks[64..]);
        let tag = short_tag(&ks, aad, buf);
        crate::ct::wipe(&mut ks);
        return Ok(tag);
    }
    #[cfg(target_arch = "x86_64")]
    if let (Some(chacha::StitchLoop::Avx2(b)), true) = (chacha::stitch(backend), buf.len() <= MEDIUM) {
        return Ok(medium::<true>(b, key, nonce, aad, buf, &mut []));
    }
    let mut p = OnePass::new(key, nonce, aad, backend);
    p.encrypt(buf);
    Ok(p.finish(aad.len(), buf.len()))
}

fn open(
    algorithm: &'static str,
    key: &[u8; 32],
    nonce: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8],
    backend: Checked<Backend>,
) -> Result<()> {
    check_len(algorithm, buf.len())?;
    Error::check_length(algorithm, "tag", TAG_LEN, tag.len())?;
    if buf.len() <= SHORT {
        // The tag is checked before anything is decrypted, so nothing needs restoring on a bad tag.
        let mut ks = short_keystream(key, nonce, buf.len(), backend);
        // The tag check's outcome is returned to the caller: public.
        let ok = crate::ct::declassify(crate::ct::eq(&short_tag(&ks, aad, buf), tag));
        if ok {
            xor_into(buf, &ks[64..]);
        }
        crate::ct::wipe(&mut ks);
        return if ok { Ok(()) } else { Err(Error::AuthenticationFailed { algorithm }) };
    }
    #[cfg(target_arch = "x86_64")]
    if let (Some(chacha::StitchLoop::Avx2(b)), true) = (chacha::stitch(backend), buf.len() <= MEDIUM) {
        if buf.len().is_multiple_of(512) && chacha::open_whole_block0_first(b) {
            let expected = medium_open_in_place(b, key, nonce, aad, buf);
            // The tag check's outcome is returned to the caller: public.
            let ok = crate::ct::declassify(crate::ct::eq(&expected, tag));
            if !ok {
                encrypt_again(b, chacha::state_ietf(key, 1, nonce), buf);
            }
            return if ok { Ok(()) } else { Err(Error::AuthenticationFailed { algorithm }) };
        }
        // Nothing is decrypted before the tag checks out, so nothing needs restoring on a bad tag.
        let ok = with_ks(buf.len(), |ks| {
            let expected = medium::<false>(b, key, nonce, aad, buf, ks);
            // The tag check's outcome is returned to the caller: public.
            let ok = crate::ct::declassify(crate::ct::eq(&expected, tag));
            if ok {
                xor_into(buf, ks);
            }
            ok
        });
        return if ok { Ok(()) } else { Err(Error::AuthenticationFailed { algorithm }) };
    }
    let mut p = OnePass::new(key, nonce, aad, backend);
    let mut start = p.state;
    p.decrypt(buf);
    let expected = p.finish(aad.len(), buf.len());
    // The tag check's outcome is returned to the caller: public.
    let ok = crate::ct::declassify(crate::ct::eq(&expected, tag));
    if !ok {
        encrypt_again(backend, start, buf);
    }
    crate::ct::wipe(&mut start);
    if ok { Ok(()) } else { Err(Error::AuthenticationFailed { algorithm }) }
}

/// After a bad tag on a message decrypted in place: encrypting it again from `start` (the state of block 1, the
/// first message block) restores the ciphertext, so the caller's buffer never holds plaintext. Wipes its copy.
fn encrypt_again(backend: Checked<Backend>, mut start: [u32; 16], buf: &mut [u8]) {
    for chunk in buf.chunks_mut(CHUNK) {
        chacha::apply_blocks(backend, 20, &start, chunk, true);
        start[12] = start[12].wrapping_add((chunk.len() / 64) as u32);
    }
    crate::ct::wipe(&mut start);
}

fn key32(algorithm: &'static str, key: &[u8]) -> Result<[u8; 32]> {
    key.try_into().map_err(|_| Error::length(algorithm, "key", 32, key.len()))
}

/// ChaCha20-Poly1305 as specified by RFC 8439: 32-byte key, 12-byte nonce, 16-byte tag.
///
/// ```
/// use pqkit::aead::{Aead, ChaCha20Poly1305};
/// let aead = ChaCha20Poly1305::new(&[7u8; 32])?;
/// let nonce = [0u8; 12]; // never reuse a nonce with the same key
/// let sealed = aead.seal(&nonce, b"header", b"secret message")?;
/// assert_eq!(aead.open(&nonce, b"header", &sealed)?, b"secret message");
/// # Ok::<(), pqkit::Error>(())
/// ```
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct ChaCha20Poly1305 {
    key: [u8; 32],
    #[zeroize(skip)]
    backend: Checked<Backend>,
}

impl ChaCha20Poly1305 {
    /// Keys the AEAD. The key must be 32 bytes.
    pub fn new(key: &[u8]) -> Result<Self> {
        Ok(ChaCha20Poly1305 { key: key32(Self::NAME, key)?, backend: Backend::detect() })
    }

    /// Forces a ChaCha20 backend (for tests and benchmarks), checked by `Backend::X.checked()` or taken from
    /// `Backend::available()`.
    #[doc(hidden)]
    pub fn with_backend(mut self, backend: Checked<Backend>) -> Self {
        self.backend = backend;
        self
    }

    fn nonce(nonce: &[u8]) -> Result<[u8; 12]> {
        nonce.try_into().map_err(|_| Error::length(Self::NAME, "nonce", 12, nonce.len()))
    }
}

impl Aead for ChaCha20Poly1305 {
    const NAME: &'static str = "ChaCha20-Poly1305";
    const KEY_LEN: usize = 32;
    const NONCE_LEN: usize = 12;

    fn seal_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
        seal(Self::NAME, &self.key, &Self::nonce(nonce)?, aad, buf, self.backend)
    }

    fn open_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
        open(Self::NAME, &self.key, &Self::nonce(nonce)?, aad, buf, tag, self.backend)
    }
}

impl core::fmt::Debug for ChaCha20Poly1305 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ChaCha20Poly1305").finish_non_exhaustive()
    }
}

/// XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha): 32-byte key, 24-byte nonce, 16-byte tag.
///
/// The nonce is long enough to be drawn at random for every message: the subkey is
/// HChaCha20(key, nonce\[0..16\]) and the message is sealed with ChaCha20-Poly1305 under that subkey and the
/// nonce `0u32 || nonce[16..24]`.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct XChaCha20Poly1305 {
    key: [u8; 32],
    #[zeroize(skip)]
    backend: Checked<Backend>,
}

impl XChaCha20Poly1305 {
    /// Keys the AEAD. The key must be 32 bytes.
    pub fn new(key: &[u8]) -> Result<Self> {
        Ok(XChaCha20Poly1305 { key: key32(Self::NAME, key)?, backend: Backend::detect() })
    }

    /// Forces a ChaCha20 backend (for tests and benchmarks).
    #[doc(hidden)]
    pub fn with_backend(mut self, backend: Checked<Backend>) -> Self {
        self.backend = backend;
        self
    }

    /// Derives the subkey and the 12-byte inner nonce.
    fn derive(&self, nonce: &[u8]) -> Result<([u8; 32], [u8; 12])> {
        let nonce: &[u8; 24] = nonce.try_into().map_err(|_| Error::length(Self::NAME, "nonce", 24, nonce.len()))?;
        let mut head = [0u8; 16];
        head.copy_from_slice(&nonce[..16]);
        let subkey = chacha::hchacha20(&self.key, &head);
        let mut inner = [0u8; 12];
        inner[4..].copy_from_slice(&nonce[16..]);
        Ok((subkey, inner))
    }
}

impl Aead for XChaCha20Poly1305 {
    const NAME: &'static str = "XChaCha20-Poly1305";
    const KEY_LEN: usize = 32;
    const NONCE_LEN: usize = 24;

    fn seal_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN]> {
        let (mut subkey, inner) = self.derive(nonce)?;
        let r = seal(Self::NAME, &subkey, &inner, aad, buf, self.backend);
        crate::ct::wipe(&mut subkey);
        r
    }

    fn open_in_place_detached(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<()> {
        let (mut subkey, inner) = self.derive(nonce)?;
        let r = open(Self::NAME, &subkey, &inner, aad, buf, tag, self.backend);
        crate::ct::wipe(&mut subkey);
        r
    }
}

impl core::fmt::Debug for XChaCha20Poly1305 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("XChaCha20Poly1305").finish_non_exhaustive()
    }
}
