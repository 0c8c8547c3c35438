//! SHA-3 and SHAKE (FIPS 202), and the Keccak-f\[1600\] permutation they share.
//!
//! - Fixed-output hashes: [`Sha3_224`], [`Sha3_256`], [`Sha3_384`], [`Sha3_512`].
//! - Extendable-output functions: [`Shake128`], [`Shake256`]; `finalize_xof` returns a [`ShakeReader`] that
//!   yields any number of bytes over any number of `read` calls.
//! - Multi-way SHAKE ([`shake128_x4`], [`shake256_x4`], [`shake128_x8`], [`shake256_x8`] and the incremental
//!   [`ShakeX4`]/[`ShakeX8`]) run 4 or 8 independent instances at once; each lane equals the single-instance
//!   result. ML-KEM and ML-DSA use them to expand their matrices.
//!
//! ## Security notes
//! SHA3-n gives n/2 bits of collision resistance and n bits of preimage resistance. SHAKE128/256 give
//! min(d/2, 128/256) bits of collision resistance for d output bits. The code is constant-time: Keccak has
//! no data-dependent branches or table look-ups.
//!
//! ## Backends
//! Chosen by the one dispatch mechanism ([`crate::dispatch`], through `Backend::detect`): the portable code;
//! AVX2 + BMI1/2 (4-way on `ymm`, scalar single state with `andn`/`rorx`); AVX-512 (8-way on `zmm`, single
//! state with one lane per `xmm` register and `vpternlogq`/`vprolq`), and an older AVX-512 single-state
//! permutation on five `zmm` rows (kept, tested, never chosen by `detect`).

/// One Keccak-f\[1600\] round on 25 lanes `$a[0..25]` (index x + 5y), written with caller-given operations
/// so the same text serves the scalar, 4-way and 8-way code. `$chi(a, b, c)` is `a ^ (!b & c)`.
macro_rules! keccak_round {
    ($a:ident, $rc:expr, $xor:ident, $xor5:ident, $chi:ident, $rol:ident) => {{
        let c0 = $xor5($a[0], $a[5], $a[10], $a[15], $a[20]);
        let c1 = $xor5($a[1], $a[6], $a[11], $a[16], $a[21]);
        let c2 = $xor5($a[2], $a[7], $a[12], $a[17], $a[22]);
        let c3 = $xor5($a[3], $a[8], $a[13], $a[18], $a[23]);
        let c4 = $xor5($a[4], $a[9], $a[14], $a[19], $a[24]);
        let d0 = $xor(c4, $rol(c1, 1));
        let d1 = $xor(c0, $rol(c2, 1));
        let d2 = $xor(c1, $rol(c3, 1));
        let d3 = $xor(c2, $rol(c4, 1));
        let d4 = $xor(c3, $rol(c0, 1));
        let b0 = $xor($a[0], d0);
        let b10 = $rol($xor($a[1], d1), 1);
        let b20 = $rol($xor($a[2], d2), 62);
        let b5 = $rol($xor($a[3], d3), 28);
        let b15 = $rol($xor($a[4], d4), 27);
        let b16 = $rol($xor($a[5], d0), 36);
        let b1 = $rol($xor($a[6], d1), 44);
        let b11 = $rol($xor($a[7], d2), 6);
        let b21 = $rol($xor($a[8], d3), 55);
        let b6 = $rol($xor($a[9], d4), 20);
        let b7 = $rol($xor($a[10], d0), 3);
        let b17 = $rol($xor($a[11], d1), 10);
        let b2 = $rol($xor($a[12], d2), 43);
        let b12 = $rol($xor($a[13], d3), 25);
        let b22 = $rol($xor($a[14], d4), 39);
        let b23 = $rol($xor($a[15], d0), 41);
        let b8 = $rol($xor($a[16], d1), 45);
        let b18 = $rol($xor($a[17], d2), 15);
        let b3 = $rol($xor($a[18], d3), 21);
        let b13 = $rol($xor($a[19], d4), 8);
        let b14 = $rol($xor($a[20], d0), 18);
        let b24 = $rol($xor($a[21], d1), 2);
        let b9 = $rol($xor($a[22], d2), 61);
        let b19 = $rol($xor($a[23], d3), 56);
        let b4 = $rol($xor($a[24], d4), 14);
        $a[0] = $chi(b0, b1, b2);
        $a[1] = $chi(b1, b2, b3);
        $a[2] = $chi(b2, b3, b4);
        $a[3] = $chi(b3, b4, b0);
        $a[4] = $chi(b4, b0, b1);
        $a[5] = $chi(b5, b6, b7);
        $a[6] = $chi(b6, b7, b8);
        $a[7] = $chi(b7, b8, b9);
        $a[8] = $chi(b8, b9, b5);
        $a[9] = $chi(b9, b5, b6);
        $a[10] = $chi(b10, b11, b12);
        $a[11] = $chi(b11, b12, b13);
        $a[12] = $chi(b12, b13, b14);
        $a[13] = $chi(b13, b14, b10);
        $a[14] = $chi(b14, b10, b11);
        $a[15] = $chi(b15, b16, b17);
        $a[16] = $chi(b16, b17, b18);
        $a[17] = $chi(b17, b18, b19);
        $a[18] = $chi(b18, b19, b15);
        $a[19] = $chi(b19, b15, b16);
        $a[20] = $chi(b20, b21, b22);
        $a[21] = $chi(b21, b22, b23);
        $a[22] = $chi(b22, b23, b24);
        $a[23] = $chi(b23, b24, b20);
        $a[24] = $chi(b24, b20, b21);
        $a[0] = $xor($a[0], $rc);
    }};
}

mod soft;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod avx512vl;

use crate::dispatch::Checked;

/// The 24 round constants of Keccak-f\[1600\] (FIPS 202, 3.2.5).
pub(crate) const RC: [u64; 24] = [
    0x0000_0000_0000_0001,
    0x0000_0000_0000_8082,
    0x8000_0000_0000_808A,
    0x8000_0000_8000_8000,
    0x0000_0000_0000_808B,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8009,
    0x0000_0000_0000_008A,
    0x0000_0000_0000_0088,
    0x0000_0000_8000_8009,
    0x0000_0000_8000_000A,
    0x0000_0000_8000_808B,
    0x8000_0000_0000_008B,
    0x8000_0000_0000_8089,
    0x8000_0000_0000_8003,
    0x8000_0000_0000_8002,
    0x8000_0000_0000_0080,
    0x0000_0000_0000_800A,
    0x8000_0000_8000_000A,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8080,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8008,
];

crate::dispatch::backends! {
    /// Which Keccak implementation runs: the SHA-3 family's backends, chosen by the one dispatch mechanism
    /// ([`crate::dispatch`]).
    ///
    /// Each tier lists the features of the one below it as well: the AVX-512 backends need AVX2 for their 4-way
    /// code (compiled with AVX2, AVX-512F and AVX-512VL) and list BMI1 and BMI2 too, so that they cover
    /// [`Backend::Avx2`]. Families built on Keccak derive their proof for it with [`Checked::derive`].
    #[doc(hidden)]
    pub enum Backend for "SHA-3" {
        /// Portable Rust.
        Soft: [],
        /// AVX2 + BMI1/2: 4-way permutation on `ymm`; single-state is scalar code, plane by plane, with
        /// `andn`/`rorx`.
        Avx2: [AVX2, BMI1, BMI2],
        /// AVX-512F/VL: 8-way permutation on `zmm`; 4-way on `ymm` with AVX-512VL (compiled with AVX2 as well);
        /// single-state with each lane in its own `xmm` register (`vpternlogq` for theta and chi, `vprolq` for
        /// rho, pi is register renaming). On the Zen 4 development machine it measured about 20% faster than the
        /// scalar BMI1/2 code. Its features include all of [`Backend::Avx2`]'s.
        Avx512: [AVX2, BMI1, BMI2, AVX512F, AVX512VL],
        /// As [`Backend::Avx512`], but the single-state permutation runs on five `zmm` rows and absorbs block by
        /// block. On the shared development machine it measured slower than both the scalar BMI1/2 code and the
        /// lane-per-`xmm` code (about 1100 vs 680 vs 550 TSC ticks per permutation: it is bound by its
        /// permutes), so [`Backend::detect`] does not pick it (`manual`); it is kept, and tested, for CPUs where
        /// it wins.
        Avx512Rows: [AVX2, BMI1, BMI2, AVX512F, AVX512VL] manual,
    }
}

/// Keccak-f\[1600\] on one state (lane `x + 5y` at index `x + 5y`), with the detected backend.
#[inline]
pub fn f1600(state: &mut [u64; 25]) {
    f1600_with(Backend::detect(), state)
}

/// Keccak-f\[1600\] on one state with a forced backend (from `Backend::available()` or
/// `Backend::X.checked()?`), for tests and the families built on Keccak.
#[doc(hidden)]
#[inline]
pub fn f1600_with(backend: Checked<Backend>, state: &mut [u64; 25]) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512Rows => avx512::f1600(backend, state),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 => avx512vl::f1600(backend, state),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => avx2::f1600(backend, state),
        _ => soft::f1600(state),
    }
}

/// Keccak-f\[1600\] on 4 independent states, stored interleaved: `states[i][k]` is lane `i` of state `k`.
#[doc(hidden)]
pub fn f1600_x4_with(backend: Checked<Backend>, states: &mut [[u64; 4]; 25]) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => avx2::f1600_x4(backend, states),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 | Backend::Avx512Rows => avx512::f1600_x4(backend, states),
        _ => soft::f1600_xn(states),
    }
}

/// Keccak-f\[1600\] on 8 independent states, stored interleaved: `states[i][k]` is lane `i` of state `k`.
#[doc(hidden)]
pub fn f1600_x8_with(backend: Checked<Backend>, states: &mut [[u64; 8]; 25]) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx512 | Backend::Avx512Rows => avx512::f1600_x8(backend, states),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => {
            let mut lo = [[0u64; 4]; 25];
            let mut hi = [[0u64; 4]; 25];
            for i in 0..25 {
                lo[i].copy_from_slice(&states[i][..4]);
                hi[i].copy_from_slice(&states[i][4..]);
            }
            avx2::f1600_x4(backend, &mut lo);
            avx2::f1600_x4(backend, &mut hi);
            for i in 0..25 {
                states[i][..4].copy_from_slice(&lo[i]);
                states[i][4..].copy_from_slice(&hi[i]);
            }
        }
        _ => soft::f1600_xn(states),
    }
}

/// Keccak-f\[1600\] on 4 interleaved states with the detected backend.
pub fn f1600_x4(states: &mut [[u64; 4]; 25]) {
    f1600_x4_with(Backend::detect(), states)
}

/// Keccak-f\[1600\] on 8 interleaved states with the detected backend.
pub fn f1600_x8(states: &mut [[u64; 8]; 25]) {
    f1600_x8_with(Backend::detect(), states)
}

/// XORs `data` (at most one block) into the state at byte offset `pos` (little-endian lanes).
#[inline]
fn xor_bytes(state: &mut [u64; 25], pos: usize, data: &[u8]) {
    let mut i = pos;
    let mut d = data;
    // Leading bytes up to a lane boundary.
    while !i.is_multiple_of(8) && !d.is_empty() {
        state[i / 8] ^= u64::from(d[0]) << (8 * (i % 8));
        i += 1;
        d = &d[1..];
    }
    let mut words = d.chunks_exact(8);
    for w in &mut words {
        state[i / 8] ^= u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        i += 8;
    }
    for &b in words.remainder() {
        state[i / 8] ^= u64::from(b) << (8 * (i % 8));
        i += 1;
    }
}

/// Copies state bytes `pos..pos + out.len()` into `out`.
#[inline]
fn read_bytes(state: &[u64; 25], pos: usize, out: &mut [u8]) {
    let mut i = pos;
    let mut o = out;
    while !i.is_multiple_of(8) && !o.is_empty() {
        o[0] = (state[i / 8] >> (8 * (i % 8))) as u8;
        i += 1;
        o = &mut o[1..];
    }
    let mut words = o.chunks_exact_mut(8);
    for w in &mut words {
        w.copy_from_slice(&state[i / 8].to_le_bytes());
        i += 8;
    }
    for b in words.into_remainder() {
        *b = (state[i / 8] >> (8 * (i % 8))) as u8;
        i += 1;
    }
}

/// A Keccak sponge with rate `rate` bytes and domain-separation byte `ds` (FIPS 202 padding `ds || 0* || 1`).
#[derive(Clone)]
struct Sponge {
    state: [u64; 25],
    /// Bytes absorbed into (or squeezed from) the current block.
    pos: usize,
    rate: usize,
    ds: u8,
    backend: Checked<Backend>,
}

impl Sponge {
    const fn new(rate: usize, ds: u8, backend: Checked<Backend>) -> Self {
        Sponge { state: [0; 25], pos: 0, rate, ds, backend }
    }

    fn absorb(&mut self, mut data: &[u8]) {
        if self.pos > 0 {
            let n = data.len().min(self.rate - self.pos);
            xor_bytes(&mut self.state, self.pos, &data[..n]);
            self.pos += n;
            data = &data[n..];
            if self.pos < self.rate {
                return;
            }
            f1600_with(self.backend, &mut self.state);
            self.pos = 0;
        }
        let rate = self.rate;
        #[cfg(target_arch = "x86_64")]
        {
            let n = match self.backend.get() {
                Backend::Avx2 => avx2::absorb_blocks(self.backend, &mut self.state, data, rate),
                Backend::Avx512 => avx512vl::absorb_blocks(self.backend, &mut self.state, data, rate),
                _ => 0,
            };
            data = &data[n..];
        }
        while data.len() >= rate {
            xor_bytes(&mut self.state, 0, &data[..rate]);
            f1600_with(self.backend, &mut self.state);
            data = &data[rate..];
        }
        xor_bytes(&mut self.state, 0, data);
        self.pos = data.len();
    }

    /// Pads and permutes; afterwards `pos` counts squeezed bytes of the current block.
    fn pad(&mut self) {
        xor_bytes(&mut self.state, self.pos, &[self.ds]);
        xor_bytes(&mut self.state, self.rate - 1, &[0x80]);
        f1600_with(self.backend, &mut self.state);
        self.pos = 0;
    }

    fn squeeze(&mut self, mut out: &mut [u8]) {
        while !out.is_empty() {
            if self.pos == self.rate {
                f1600_with(self.backend, &mut self.state);
                self.pos = 0;
            }
            let n = out.len().min(self.rate - self.pos);
            read_bytes(&self.state, self.pos, &mut out[..n]);
            self.pos += n;
            out = &mut out[n..];
        }
    }

    fn reset(&mut self) {
        self.state = [0; 25];
        self.pos = 0;
    }
}

impl zeroize::Zeroize for Sponge {
    fn zeroize(&mut self) {
        self.state.zeroize();
        self.pos.zeroize();
    }
}

macro_rules! sha3_hasher {
    ($(#[$doc:meta])* $name:ident, $label:expr, $out:expr, $rate:expr) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name {
            sponge: Sponge,
        }

        impl $name {
            /// Digest length in bytes.
            pub const OUTPUT_LEN: usize = $out;
            /// Rate (block length) in bytes.
            pub const BLOCK_LEN: usize = $rate;

            /// A fresh hasher using the detected backend.
            pub fn new() -> Self {
                Self::with_backend(Backend::detect())
            }

            /// A fresh hasher using `backend` (tests use this to run every backend; obtain it from
            /// `Backend::available()` or `Backend::X.checked()?`).
            #[doc(hidden)]
            pub fn with_backend(backend: Checked<Backend>) -> Self {
                $name { sponge: Sponge::new($rate, 0x06, backend) }
            }

            /// Absorbs `data`. Returns `self` so calls can be chained.
            pub fn update(&mut self, data: &[u8]) -> &mut Self {
                self.sponge.absorb(data);
                self
            }

            /// Returns the digest, consuming the hasher.
            pub fn finalize(mut self) -> [u8; $out] {
                let mut out = [0u8; $out];
                self.sponge.pad();
                self.sponge.squeeze(&mut out);
                out
            }

            /// Forgets everything absorbed.
            pub fn reset(&mut self) {
                self.sponge.reset();
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
                self.sponge.zeroize();
            }
        }

        impl super::Hasher for $name {
            const NAME: &'static str = $label;
            const OUTPUT_LEN: usize = $out;
            const BLOCK_LEN: usize = $rate;
            type Output = [u8; $out];

            fn new() -> Self {
                $name::new()
            }
            fn update(&mut self, data: &[u8]) {
                self.sponge.absorb(data);
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

sha3_hasher!(
    /// SHA3-224 (FIPS 202): 28-byte digest.
    Sha3_224, "SHA3-224", 28, 144
);
sha3_hasher!(
    /// SHA3-256 (FIPS 202): 32-byte digest.
    Sha3_256, "SHA3-256", 32, 136
);
sha3_hasher!(
    /// SHA3-384 (FIPS 202): 48-byte digest.
    Sha3_384, "SHA3-384", 48, 104
);
sha3_hasher!(
    /// SHA3-512 (FIPS 202): 64-byte digest.
    Sha3_512, "SHA3-512", 64, 72
);

/// Reads the output of a finalized SHAKE instance: any number of bytes, over any number of calls; the
/// concatenation of all reads equals one long read.
#[derive(Clone)]
pub struct ShakeReader {
    sponge: Sponge,
}

impl ShakeReader {
    /// Fills `out` with the next `out.len()` output bytes.
    pub fn read(&mut self, out: &mut [u8]) {
        self.sponge.squeeze(out);
    }
}

impl core::fmt::Debug for ShakeReader {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ShakeReader { .. }")
    }
}

impl Drop for ShakeReader {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.sponge);
    }
}

#[cfg(feature = "std")]
impl std::io::Read for ShakeReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        self.sponge.squeeze(out);
        Ok(out.len())
    }
}

macro_rules! shake {
    ($(#[$doc:meta])* $name:ident, $rate:expr) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name {
            sponge: Sponge,
        }

        impl $name {
            /// Rate (block length) in bytes.
            pub const BLOCK_LEN: usize = $rate;

            /// A fresh instance using the detected backend.
            pub fn new() -> Self {
                Self::with_backend(Backend::detect())
            }

            /// A fresh instance using `backend` (tests use this to run every backend; obtain it from
            /// `Backend::available()` or `Backend::X.checked()?`).
            #[doc(hidden)]
            pub fn with_backend(backend: Checked<Backend>) -> Self {
                $name { sponge: Sponge::new($rate, 0x1F, backend) }
            }

            /// Absorbs `data`. Returns `self` so calls can be chained.
            pub fn update(&mut self, data: &[u8]) -> &mut Self {
                self.sponge.absorb(data);
                self
            }

            /// Finishes absorbing and returns the output reader. `self` is left unchanged, so more input
            /// may follow and a later `finalize_xof` covers all of it.
            pub fn finalize_xof(&self) -> ShakeReader {
                let mut sponge = self.sponge.clone();
                sponge.pad();
                ShakeReader { sponge }
            }

            /// Fills `out` with the first `out.len()` output bytes, consuming the instance.
            pub fn finalize_into(mut self, out: &mut [u8]) {
                self.sponge.pad();
                self.sponge.squeeze(out);
            }

            /// Forgets everything absorbed.
            pub fn reset(&mut self) {
                self.sponge.reset();
            }

            /// One-shot: the first `out.len()` output bytes for input `data`.
            pub fn digest_into(data: &[u8], out: &mut [u8]) {
                let mut h = Self::new();
                h.update(data);
                h.finalize_into(out)
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
                self.sponge.zeroize();
            }
        }

        #[cfg(feature = "std")]
        impl std::io::Write for $name {
            fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
                self.sponge.absorb(data);
                Ok(data.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
    };
}

shake!(
    /// SHAKE128 (FIPS 202): extendable output, 128-bit security.
    Shake128, 168
);
shake!(
    /// SHAKE256 (FIPS 202): extendable output, 256-bit security.
    Shake256, 136
);

/// The raw Keccak-f\[1600\] permutations, for constructions built directly on Keccak (ML-KEM, ML-DSA).
pub mod keccak {
    pub use super::{f1600, f1600_x4, f1600_x8};
}

mod multi;
pub use multi::{ShakeX4, ShakeX8, shake128_x4, shake128_x8, shake256_x4, shake256_x8};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every backend's single-state permutation equals the portable one on random states.
    #[test]
    fn f1600_backends_match_portable() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            // xorshift64*
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        for b in Backend::available() {
            for _ in 0..1000 {
                let s: [u64; 25] = core::array::from_fn(|_| next());
                let mut want = s;
                soft::f1600(&mut want);
                let mut got = s;
                f1600_with(b, &mut got);
                assert_eq!(got, want, "{b:?}");
            }
        }
    }

    /// The multi-block absorb fast paths agree with block-by-block absorption on the portable backend.
    #[test]
    fn absorb_backends_match_portable() {
        let mut data = [0u8; 5000];
        for (i, d) in data.iter_mut().enumerate() {
            *d = (i as u32 * 31 + 7) as u8;
        }
        for rate in [72, 104, 136, 144, 168] {
            let mut want = Sponge::new(rate, 0x06, Checked::portable());
            want.absorb(&data);
            for b in Backend::available() {
                let mut got = Sponge::new(rate, 0x06, b);
                got.absorb(&data);
                assert_eq!(got.state, want.state, "{b:?} rate {rate}");
                assert_eq!(got.pos, want.pos);
            }
        }
    }
}
