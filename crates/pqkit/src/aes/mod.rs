//! The AES block cipher (FIPS 197), AES-128 and AES-256, and the GCM kernels behind
//! [`Aes128Gcm`](crate::aead::Aes128Gcm) / [`Aes256Gcm`](crate::aead::Aes256Gcm).
//!
//! ## Backends
//! [`Backend`] is declared with the one dispatch mechanism ([`crate::dispatch`]): `Backend::detect` picks the
//! fastest backend this CPU runs (under the `PQKIT_CPU` cap), and a backend forced by name that cannot run is an
//! [`Error::BackendUnavailable`] from `Backend::X.checked()`, never a fallback:
//! - [`Backend::Soft`]: portable and constant time. AES is bitsliced (four blocks at a time in eight 64-bit bit
//!   planes; the S-box is computed as inversion in GF(2^8) by bitsliced arithmetic, so there is no table at all).
//!   GHASH uses 64-bit integer multiplications with "holes" (every fourth bit) to carry-less multiply.
//! - [`Backend::AesNi`]: AES-NI and PCLMULQDQ; GCM processes 8 blocks per iteration with AES-CTR and GHASH in
//!   one loop, and reduces once per 8 blocks (precomputed H^1..H^8). A whole message (E(K, J0), AAD, bulk,
//!   lengths, tag) runs in one `#[target_feature]` function, and tails encrypt only the blocks they have.
//! - [`Backend::Vaes256`]: VAES and VPCLMULQDQ on 256-bit lanes without AVX-512 (AMD Zen 3; Intel under the
//!   `avx2` cap): 16 blocks (8 ymm registers) per iteration, AES rounds interleaved with the GHASH of the
//!   previous 16 blocks, one reduction per 16 blocks; short messages hash AAD, data and lengths with one
//!   reduction.
//! - [`Backend::Vaes`]: VAES and VPCLMULQDQ on AVX-512: 16 blocks (4 zmm registers) per iteration, counters kept
//!   in registers, one GHASH reduction per 16 blocks (precomputed H^1..H^16); short messages (under 256 bytes,
//!   with associated data, message and lengths block fitting in 16 blocks) hash all of it with one reduction,
//!   each block multiplied by its own power of H, and run E(K, J0) beside the counter blocks' rounds.
//!
//! Round keys are expanded once by portable constant-time code and shared by every backend.
//!
//! ## Security
//! The block cipher alone is a building block, not an encryption scheme: use an AEAD such as
//! [`Aes256Gcm`](crate::aead::Aes256Gcm). Keys are zeroized on drop and never printed by `Debug`.

use crate::dispatch::Checked;
use crate::{Error, Result};
use zeroize::Zeroize;

/// The safe GCM entry points of an x86 backend module: `full` (all of GCM after J0), `ghash` and `gcm` (the
/// bulk). Each asserts that the checked backend covers `$b`, then calls the module's `gcm_full`, `ghash_impl`
/// and `gcm_impl`, compiled with the module's `target_feature` set, for AES-128 (10 rounds) or AES-256 (14).
/// Used by `aesni`, `vaes` and `vaes256`, so the three state their contract once.
#[cfg(target_arch = "x86_64")]
macro_rules! gcm_entry_points {
    ($b:expr) => {
        /// GCM after J0 is known: with `SEAL` encrypts and returns the tag, else hashes, decrypts and returns
        /// the expected tag.
        pub(super) fn full<const SEAL: bool>(
            backend: Checked<Backend>,
            keys: &RoundKeys,
            htab: &HTable,
            j0: &J0<'_>,
            aad: &[u8],
            buf: InOut<'_>,
        ) -> [u8; 16] {
            assert!(backend.covers($b));
            // SAFETY: `backend` is a `Checked` (crate::dispatch) covering `$b`, so the CPU has every feature `$b`
            // is declared with in `Backend`: every feature the calling module's `target_feature` functions enable.
            unsafe {
                if keys.nr == 10 {
                    gcm_full::<10, SEAL>(keys, htab, j0, aad, buf)
                } else {
                    gcm_full::<14, SEAL>(keys, htab, j0, aad, buf)
                }
            }
        }

        /// Absorbs `data` (zero-padded to whole blocks) into the GHASH state.
        pub(super) fn ghash(backend: Checked<Backend>, htab: &HTable, state: &mut u128, data: &[u8]) {
            assert!(backend.covers($b));
            // SAFETY: as in `full`.
            unsafe { ghash_impl(htab, state, data) }
        }

        /// AES-GCM's bulk: CTR encryption and GHASH of the ciphertext (`SEAL`), or GHASH then decryption.
        pub(super) fn gcm<const SEAL: bool>(
            backend: Checked<Backend>,
            keys: &RoundKeys,
            htab: &HTable,
            ctr: &[u8; 16],
            state: &mut u128,
            buf: &mut InOut<'_>,
        ) {
            assert!(backend.covers($b));
            // SAFETY: as in `full`.
            unsafe {
                if keys.nr == 10 {
                    gcm_impl::<10, SEAL>(keys, htab, ctr, state, buf)
                } else {
                    gcm_impl::<14, SEAL>(keys, htab, ctr, state, buf)
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod aesni;
pub(crate) mod ghash_soft;
mod soft;
#[cfg(target_arch = "x86_64")]
mod vaes256;
#[cfg(target_arch = "x86_64")]
mod vaes512;

crate::dispatch::backends! {
    /// The implementation a key runs on. Chosen once by `Backend::detect`; tests force each with the
    /// `*_with_backend` constructors, which take a backend checked by [`crate::dispatch`].
    #[doc(hidden)]
    pub enum Backend for "AES" {
        /// Portable, bitsliced, constant time.
        Soft: [],
        /// AES-NI + PCLMULQDQ (x86_64): every feature `aesni.rs` enables.
        AesNi: [AES, PCLMULQDQ, SSSE3, SSE41],
        /// VAES + VPCLMULQDQ on 256-bit lanes, no AVX-512 (x86_64: AMD Zen 3, and the AVX2 tier): every feature
        /// `vaes256.rs` enables, which includes all of AES-NI's (its single blocks run on `aesni.rs`).
        Vaes256: [AES, PCLMULQDQ, SSSE3, SSE41, AVX, AVX2, VAES, VPCLMULQDQ],
        /// VAES + VPCLMULQDQ on AVX-512 (x86_64): every feature `vaes512.rs` enables, which includes all of
        /// AES-NI's (its single blocks and the lengths block run on `aesni.rs`).
        Vaes: [AES, PCLMULQDQ, SSSE3, SSE41, AVX, AVX2, AVX512F, AVX512BW, AVX512VL, VAES, VPCLMULQDQ],
    }
}

/// Expanded AES key: encryption round keys (FIPS 197 byte order), the round keys of the equivalent inverse
/// cipher (for `aesdec`), and the bitsliced encryption round keys of the portable backend.
#[derive(Clone)]
pub(crate) struct RoundKeys {
    pub(crate) enc: [[u8; 16]; 15],
    pub(crate) dec: [[u8; 16]; 15],
    pub(crate) bs: [[u64; 8]; 15],
    /// Number of rounds: 10 (AES-128) or 14 (AES-256).
    pub(crate) nr: usize,
}

impl Zeroize for RoundKeys {
    fn zeroize(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
        for k in self.bs.iter_mut() {
            k.zeroize();
        }
    }
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        self.zeroize();
    }
}

/// Multiplies a byte by x in GF(2^8), without a branch.
#[inline]
fn xtime(b: u8) -> u8 {
    (b << 1) ^ (0x1b & 0u8.wrapping_sub(b >> 7))
}

#[inline]
fn gmul(mut a: u8, mut b: u8) -> u8 {
    // Constant-time: always 8 iterations, masks instead of branches.
    let mut p = 0u8;
    for _ in 0..8 {
        p ^= a & 0u8.wrapping_sub(b & 1);
        a = xtime(a);
        b >>= 1;
    }
    p
}

fn inv_mix_column_bytes(k: &[u8; 16]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for c in 0..4 {
        let a = [k[4 * c], k[4 * c + 1], k[4 * c + 2], k[4 * c + 3]];
        for r in 0..4 {
            out[4 * c + r] =
                gmul(a[r], 0x0e) ^ gmul(a[(r + 1) % 4], 0x0b) ^ gmul(a[(r + 2) % 4], 0x0d) ^ gmul(a[(r + 3) % 4], 0x09);
        }
    }
    out
}

impl RoundKeys {
    /// FIPS 197 key expansion for a 16- or 32-byte key (the caller checked the length), for `backend`: the
    /// AES-NI backends expand with the AES instructions and leave the bitsliced keys (used only by the portable
    /// backend) zero; the portable backend expands in software and packs them.
    pub(crate) fn new(key: &[u8], backend: Checked<Backend>) -> RoundKeys {
        #[cfg(target_arch = "x86_64")]
        if matches!(backend.get(), Backend::AesNi | Backend::Vaes256 | Backend::Vaes) {
            let (mut enc, mut dec) = ([[0u8; 16]; 15], [[0u8; 16]; 15]);
            let nr = aesni::expand(backend, key, &mut enc, &mut dec);
            return RoundKeys { enc, dec, bs: [[0u64; 8]; 15], nr };
        }
        let _ = backend;
        RoundKeys::new_soft(key)
    }

    /// The portable expansion, with the bitsliced keys.
    fn new_soft(key: &[u8]) -> RoundKeys {
        let nk = key.len() / 4;
        let nr = nk + 6;
        let total = 4 * (nr + 1);
        let mut w = [[0u8; 4]; 60];
        for i in 0..nk {
            w[i].copy_from_slice(&key[4 * i..4 * i + 4]);
        }
        let mut rcon = 1u8;
        for i in nk..total {
            let mut t = w[i - 1];
            if i % nk == 0 {
                t = [t[1], t[2], t[3], t[0]];
                t = soft::sub_word(t);
                t[0] ^= rcon;
                rcon = xtime(rcon);
            } else if nk > 6 && i % nk == 4 {
                t = soft::sub_word(t);
            }
            for j in 0..4 {
                w[i][j] = w[i - nk][j] ^ t[j];
            }
        }
        let mut enc = [[0u8; 16]; 15];
        for r in 0..=nr {
            for c in 0..4 {
                enc[r][4 * c..4 * c + 4].copy_from_slice(&w[4 * r + c]);
            }
        }
        w.zeroize();
        let mut dec = [[0u8; 16]; 15];
        dec[0] = enc[nr];
        dec[nr] = enc[0];
        for r in 1..nr {
            dec[r] = inv_mix_column_bytes(&enc[nr - r]);
        }
        let mut bs = [[0u64; 8]; 15];
        for r in 0..=nr {
            bs[r] = soft::pack_key(&enc[r]);
        }
        RoundKeys { enc, dec, bs, nr }
    }
}

pub(crate) fn encrypt_block(keys: &RoundKeys, backend: Checked<Backend>, block: &mut [u8; 16]) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::AesNi | Backend::Vaes256 | Backend::Vaes => aesni::encrypt_block(backend, keys, block),
        _ => soft::encrypt_block(keys, block),
    }
}

pub(crate) fn decrypt_block(keys: &RoundKeys, backend: Checked<Backend>, block: &mut [u8; 16]) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::AesNi | Backend::Vaes256 | Backend::Vaes => aesni::decrypt_block(backend, keys, block),
        _ => soft::decrypt_block(keys, block),
    }
}

macro_rules! aes_type {
    ($name:ident, $alg:literal, $klen:literal, $doc:literal) => {
        #[doc = $doc]
        ///
        /// Keys are zeroized on drop; `Debug` prints no key material.
        #[derive(Clone)]
        pub struct $name {
            keys: RoundKeys,
            backend: Checked<Backend>,
        }

        impl $name {
            /// Key length in bytes.
            pub const KEY_LEN: usize = $klen;
            /// Block length in bytes.
            pub const BLOCK_LEN: usize = 16;

            /// Expands `key`, which must be exactly [`Self::KEY_LEN`] bytes
            /// (else [`Error::InvalidLength`](crate::Error::InvalidLength)).
            pub fn new(key: &[u8]) -> Result<Self> {
                Self::new_with_backend(key, Backend::detect())
            }

            /// Like [`Self::new`] on a chosen backend (for tests and benchmarks), checked by
            /// `Backend::X.checked()` or taken from `Backend::available()`.
            #[doc(hidden)]
            pub fn new_with_backend(key: &[u8], backend: Checked<Backend>) -> Result<Self> {
                Error::check_length($alg, "key", $klen, key.len())?;
                Ok($name { keys: RoundKeys::new(key, backend), backend })
            }

            /// Encrypts one 16-byte block in place.
            pub fn encrypt_block(&self, block: &mut [u8; 16]) {
                encrypt_block(&self.keys, self.backend, block)
            }

            /// Decrypts one 16-byte block in place.
            pub fn decrypt_block(&self, block: &mut [u8; 16]) {
                decrypt_block(&self.keys, self.backend, block)
            }

            /// The backend this key runs on.
            #[doc(hidden)]
            pub fn backend(&self) -> Checked<Backend> {
                self.backend
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($name), " { .. }"))
            }
        }
    };
}

aes_type!(Aes128, "AES-128", 16, "The AES-128 block cipher (FIPS 197): 16-byte key, 10 rounds.");
aes_type!(Aes256, "AES-256", 32, "The AES-256 block cipher (FIPS 197): 32-byte key, 14 rounds.");

// ---------------------------------------------------------------------------------------------------------------
// GCM kernels. GHASH values are `u128` in the "byte-reversed" domain: a block `b` is `u128::from_be_bytes(b)`.
// `htab[i]` holds H^(16-i) pre-multiplied by x^-1 (so `H^1` is `htab[15]`), the form the carry-less multiply
// routines expect.
// ---------------------------------------------------------------------------------------------------------------

/// GCM's pre-counter block J0 as the kernels take it. A 96-bit nonce stays the caller's bytes: the x86 kernels
/// build nonce || 0^31 || 1 in a register from an 8-byte and a 4-byte load, instead of reloading a 16-byte block
/// that was just written piecewise (the load could not be forwarded from the smaller stores: a store-forwarding
/// stall of ≈ 9 % of a 64-byte open's time in perf). Other nonce lengths give a block derived by GHASH.
#[derive(Clone, Copy, Debug)]
pub(crate) enum J0<'a> {
    /// J0 = nonce || 0x00000001.
    Nonce(&'a [u8; 12]),
    /// J0 itself (GHASH of a nonce of another length).
    Block([u8; 16]),
}

impl J0<'_> {
    /// The 16 bytes of J0.
    pub(crate) fn bytes(&self) -> [u8; 16] {
        match self {
            J0::Nonce(n) => {
                let mut b = [0u8; 16];
                b[..12].copy_from_slice(&n[..]);
                b[15] = 1;
                b
            }
            J0::Block(b) => *b,
        }
    }
}

/// GCM's inc32: adds one to the last 32 bits (big-endian), modulo 2^32.
pub(crate) fn inc32(b: &[u8; 16]) -> [u8; 16] {
    let mut r = *b;
    let c = u32::from_be_bytes([b[12], b[13], b[14], b[15]]).wrapping_add(1);
    r[12..].copy_from_slice(&c.to_be_bytes());
    r
}

/// The data of one GCM pass: one buffer transformed in place, or an input read and an output of the same length
/// written (out of place, in one pass: no copy first). The two buffers of `Split` cannot overlap (they are a
/// shared and an exclusive borrow), so a backend may read `src` and write `dst` in any order.
pub(crate) enum InOut<'a> {
    /// Input and output are this buffer.
    InPlace(&'a mut [u8]),
    /// Input `.0`, output `.1`; the caller checked that the lengths are equal.
    Split(&'a [u8], &'a mut [u8]),
}

impl<'a> InOut<'a> {
    /// Two buffers of equal length (checked by the AEAD front; a mismatch here is a bug, so it panics).
    pub(crate) fn split(src: &'a [u8], dst: &'a mut [u8]) -> Self {
        assert_eq!(src.len(), dst.len(), "GCM: input and output lengths differ");
        InOut::Split(src, dst)
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            InOut::InPlace(b) => b.len(),
            InOut::Split(s, _) => s.len(),
        }
    }

    /// Raw pointers for the vector backends: `(src, dst)`, both valid for `len()` bytes (reading `src`, writing
    /// `dst`) for as long as `self` is borrowed. In place they are the same pointer; otherwise they point to two
    /// non-overlapping buffers. Used only with `unsafe` in the backend files.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn ptrs(&mut self) -> (*const u8, *mut u8) {
        match self {
            InOut::InPlace(b) => {
                let p = b.as_mut_ptr();
                (p as *const u8, p)
            }
            InOut::Split(s, d) => (s.as_ptr(), d.as_mut_ptr()),
        }
    }

    /// The portable path's single loop: calls `f` on consecutive output chunks of `n` bytes (the last may be
    /// shorter), each holding the input's bytes when `f` sees it. Out of place, each chunk is copied from the
    /// input just before `f` transforms it, so the data is read and written once (the chunk stays in L1).
    pub(crate) fn for_each_chunk(&mut self, n: usize, mut f: impl FnMut(&mut [u8])) {
        match self {
            InOut::InPlace(b) => b.chunks_mut(n).for_each(f),
            InOut::Split(s, d) => {
                for (s, d) in s.chunks(n).zip(d.chunks_mut(n)) {
                    d.copy_from_slice(s);
                    f(d);
                }
            }
        }
    }

    /// The output buffer.
    pub(crate) fn out(&mut self) -> &mut [u8] {
        match self {
            InOut::InPlace(b) => b,
            InOut::Split(_, d) => d,
        }
    }
}

/// Everything GCM needs for one key: round keys, the powers of H and the backend.
#[derive(Clone)]
pub(crate) struct GcmKey {
    pub(crate) keys: RoundKeys,
    pub(crate) htab: HTable,
    pub(crate) backend: Checked<Backend>,
}

/// Powers of the hash key, highest first: `h[i]` = H^(16-i) (times x^-1), and for Karatsuba `k[i]` holds
/// `lo ^ hi` of `h[i]` in both 64-bit halves.
#[derive(Clone)]
#[repr(C, align(64))]
pub(crate) struct HTable {
    pub(crate) h: [u128; 16],
    pub(crate) k: [u128; 16],
}

impl HTable {
    fn new(h: [u128; 16]) -> HTable {
        let k = core::array::from_fn(|i| {
            let d = (h[i] as u64 ^ (h[i] >> 64) as u64) as u128;
            (d << 64) | d
        });
        HTable { h, k }
    }
}

impl Drop for HTable {
    fn drop(&mut self) {
        self.h.zeroize();
        self.k.zeroize();
    }
}

impl GcmKey {
    pub(crate) fn new(key: &[u8], backend: Checked<Backend>) -> GcmKey {
        let keys = RoundKeys::new(key, backend);
        let mut hb = [0u8; 16];
        encrypt_block(&keys, backend, &mut hb);
        let mut h = u128::from_be_bytes(hb);
        let htab = HTable::new(match backend.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi | Backend::Vaes256 | Backend::Vaes => aesni::powers(backend, h),
            _ => ghash_soft::powers(h),
        });
        hb.zeroize();
        h.zeroize();
        GcmKey { keys, htab, backend }
    }

    pub(crate) fn encrypt_block(&self, block: &mut [u8; 16]) {
        encrypt_block(&self.keys, self.backend, block)
    }

    /// Absorbs `data` into the GHASH state; a final partial block is padded with zeros.
    pub(crate) fn ghash(&self, state: &mut u128, data: &[u8]) {
        match self.backend.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi => aesni::ghash(self.backend, &self.htab, state, data),
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes => vaes512::ghash(self.backend, &self.htab, state, data),
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes256 => vaes256::ghash(self.backend, &self.htab, state, data),
            _ => ghash_soft::ghash(&self.htab, state, data),
        }
    }

    /// GCM after J0 is known: encrypts `io` (in place or from its input to its output) and returns the tag.
    pub(crate) fn seal_full(&self, j0: &J0<'_>, aad: &[u8], buf: InOut<'_>) -> [u8; 16] {
        match self.backend.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi => aesni::full::<true>(self.backend, &self.keys, &self.htab, j0, aad, buf),
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes => vaes512::full::<true>(self.backend, &self.keys, &self.htab, j0, aad, buf),
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes256 => vaes256::full::<true>(self.backend, &self.keys, &self.htab, j0, aad, buf),
            _ => self.full_generic::<true>(j0, aad, buf),
        }
    }

    /// GCM after J0 is known: hashes and decrypts `io` (in place or from its input to its output) and returns
    /// the expected tag (the caller compares it and, on a mismatch, restores the ciphertext in place or wipes the
    /// output).
    pub(crate) fn open_full(&self, j0: &J0<'_>, aad: &[u8], buf: InOut<'_>) -> [u8; 16] {
        match self.backend.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi => aesni::full::<false>(self.backend, &self.keys, &self.htab, j0, aad, buf),
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes => vaes512::full::<false>(self.backend, &self.keys, &self.htab, j0, aad, buf),
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes256 => vaes256::full::<false>(self.backend, &self.keys, &self.htab, j0, aad, buf),
            _ => self.full_generic::<false>(j0, aad, buf),
        }
    }

    /// The portable path. Kept out of line: inlined into the AEAD front's dispatch it grew that caller's stack
    /// frame, and the shifted stack layout cost the VAES backend's 64-byte seal 10% on Sapphire Rapids.
    #[inline(never)]
    fn full_generic<const SEAL: bool>(&self, j0: &J0<'_>, aad: &[u8], mut buf: InOut<'_>) -> [u8; 16] {
        // E(K, J0) first: it is independent of the bulk work, so it can overlap with it.
        let j0 = j0.bytes();
        let mut ek = j0;
        self.encrypt_block(&mut ek);
        let ctr = inc32(&j0);
        let mut s = 0u128;
        if !aad.is_empty() {
            self.ghash(&mut s, aad);
        }
        let len = buf.len();
        self.gcm::<SEAL>(&ctr, &mut s, &mut buf);
        let mut lens = [0u8; 16];
        lens[..8].copy_from_slice(&(aad.len() as u64 * 8).to_be_bytes());
        lens[8..].copy_from_slice(&(len as u64 * 8).to_be_bytes());
        self.ghash_block(&mut s, &lens);
        let mut tag = s.to_be_bytes();
        for (t, e) in tag.iter_mut().zip(ek.iter()) {
            *t ^= e;
        }
        ek.zeroize();
        s.zeroize();
        tag
    }

    /// Absorbs one full block (e.g. the lengths block) into the GHASH state.
    pub(crate) fn ghash_block(&self, state: &mut u128, block: &[u8; 16]) {
        match self.backend.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi | Backend::Vaes256 | Backend::Vaes => {
                aesni::ghash_block(self.backend, &self.htab, state, block)
            }
            _ => *state = ghash_soft::mul(*state ^ u128::from_be_bytes(*block), self.htab.h[15]),
        }
    }

    /// CTR-encrypts `buf` starting at counter block `ctr` (32-bit counter, wrapping as inc32 does) and absorbs
    /// the ciphertext into the GHASH state.
    pub(crate) fn seal(&self, ctr: &[u8; 16], state: &mut u128, buf: &mut [u8]) {
        self.gcm::<true>(ctr, state, &mut InOut::InPlace(buf))
    }

    /// Absorbs the ciphertext in `buf` into the GHASH state and CTR-decrypts it.
    #[cfg(test)]
    pub(crate) fn open(&self, ctr: &[u8; 16], state: &mut u128, buf: &mut [u8]) {
        self.gcm::<false>(ctr, state, &mut InOut::InPlace(buf))
    }

    #[inline]
    fn gcm<const SEAL: bool>(&self, ctr: &[u8; 16], state: &mut u128, buf: &mut InOut<'_>) {
        match self.backend.get() {
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi => aesni::gcm::<SEAL>(self.backend, &self.keys, &self.htab, ctr, state, buf),
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes => vaes512::gcm::<SEAL>(self.backend, &self.keys, &self.htab, ctr, state, buf),
            #[cfg(target_arch = "x86_64")]
            Backend::Vaes256 => vaes256::gcm::<SEAL>(self.backend, &self.keys, &self.htab, ctr, state, buf),
            // One pass over 256-byte chunks (a multiple of the block, so only the last chunk can be partial and
            // GHASH pads only there): seal encrypts then hashes the ciphertext, open hashes it then decrypts.
            _ => {
                let mut c = *ctr;
                buf.for_each_chunk(256, |chunk| {
                    if SEAL {
                        soft::ctr(&self.keys, &c, chunk);
                        ghash_soft::ghash(&self.htab, state, chunk);
                    } else {
                        ghash_soft::ghash(&self.htab, state, chunk);
                        soft::ctr(&self.keys, &c, chunk);
                    }
                    let n = u32::from_be_bytes([c[12], c[13], c[14], c[15]]).wrapping_add(16);
                    c[12..].copy_from_slice(&n.to_be_bytes());
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate alloc;
    use alloc::vec::Vec;

    /// Every backend's key setup (the AES-NI expansion with `aesenclast`/`aesimc` and PCLMULQDQ powers of H on
    /// x86) gives exactly the portable round keys, inverse-cipher keys and table of H's powers, for edge keys
    /// and random ones of both lengths.
    #[test]
    fn key_setup_equals_portable_on_every_backend() {
        let mut x = 0x243F_6A88_85A3_08D3u64;
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for len in [16usize, 32] {
            keys.push(alloc::vec![0u8; len]);
            keys.push(alloc::vec![0xffu8; len]);
            keys.push((0..len as u8).collect());
            for _ in 0..300 {
                keys.push(
                    (0..len)
                        .map(|_| {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            (x >> 24) as u8
                        })
                        .collect(),
                );
            }
        }
        let mut checked = 0;
        for b in Backend::available() {
            for key in &keys {
                let sw = RoundKeys::new_soft(key);
                let hw = RoundKeys::new(key, b);
                assert_eq!((hw.nr, hw.enc, hw.dec), (sw.nr, sw.enc, sw.dec), "{b:?} {key:02x?}");
                let mut hb = [0u8; 16];
                soft::encrypt_block(&sw, &mut hb);
                let g = GcmKey::new(key, b);
                assert_eq!(g.htab.h, ghash_soft::powers(u128::from_be_bytes(hb)), "{b:?} {key:02x?}");
                checked += 1;
            }
        }
        assert_eq!(checked, keys.len() * Backend::available().count());
    }

    /// The 8- and 16-block loops must wrap the 32-bit counter exactly like inc32 (the portable code uses a plain
    /// `wrapping_add`), including inside a loop iteration. The VAES loop switches between adding in block byte
    /// order (first counter's low byte <= 236) and in reversed order: 0x..ec / 0x..ed / 0x..ef straddle that.
    /// The Vaes256 loop's limit is 238: 0x..ee / 0x..ef straddle it.
    #[test]
    fn counter_wraps_inside_the_wide_loops() {
        for key in [&[7u8; 16][..], &[9u8; 32][..]] {
            for start in [
                0xffff_fff0u32,
                0xffff_ffff,
                0xffff_ff01,
                0x7fff_fffb,
                0xffff_ffec,
                0x1234_56ed,
                0x1234_56ec,
                0xffff_ffee,
                0xffff_ffef,
                0x1234_56ee,
                0x1234_56ef,
            ] {
                let mut ctr = [0xa5u8; 16];
                ctr[12..].copy_from_slice(&start.to_be_bytes());
                let data: Vec<u8> = (0..4096 + 77).map(|i| (i * 31 + 5) as u8).collect();
                let soft = GcmKey::new(key, Backend::Soft.checked().unwrap());
                let mut expect = data.clone();
                let mut s_expect = 0x1234u128;
                soft.seal(&ctr, &mut s_expect, &mut expect);
                for b in Backend::available() {
                    let g = GcmKey::new(key, b);
                    let mut buf = data.clone();
                    let mut s = 0x1234u128;
                    g.seal(&ctr, &mut s, &mut buf);
                    assert_eq!(buf, expect, "{b:?} {start:x}");
                    assert_eq!(s, s_expect, "{b:?} {start:x}");
                    let mut s2 = 0x1234u128;
                    g.open(&ctr, &mut s2, &mut buf);
                    assert_eq!(buf, data, "{b:?} {start:x}");
                    assert_eq!(s2, s_expect, "{b:?} {start:x}");
                }
                // The wrap really happened: block 16 (counter start + 16) equals a fresh encryption of it.
                let mut blk = ctr;
                blk[12..].copy_from_slice(&start.wrapping_add(16).to_be_bytes());
                soft.encrypt_block(&mut blk);
                for i in 0..16 {
                    assert_eq!(expect[256 + i], data[256 + i] ^ blk[i]);
                }
            }
        }
    }
}
