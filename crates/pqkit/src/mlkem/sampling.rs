//! Matrix expansion (SampleNTT over SHAKE128) and noise sampling (SamplePolyCBD over the SHAKE256 PRF),
//! several independent SHAKE instances at a time on the multi-way Keccak permutation.

use super::poly::{Poly, cbd};
use crate::hash::sha3::{self, Backend as KeccakBackend, Shake128};
use zeroize::Zeroize;

const SHAKE128_RATE: usize = 168;
const SHAKE256_RATE: usize = 136;

macro_rules! multi_xof {
    ($name:ident, $n:expr, $perm:path) => {
        /// `$n` SHAKE instances over short (single-block) inputs, squeezed a block at a time.
        struct $name {
            st: [[u64; $n]; 25],
            rate: usize,
            kb: KeccakBackend,
        }

        impl $name {
            /// Absorbs `inputs[l][..len]` (len < rate - 1) with SHAKE padding; no permutation yet.
            fn new(kb: KeccakBackend, rate: usize, inputs: &[[u8; 34]; $n], len: usize) -> Self {
                let mut st = [[0u64; $n]; 25];
                for (l, input) in inputs.iter().enumerate() {
                    let mut block = [0u8; 40];
                    block[..len].copy_from_slice(&input[..len]);
                    block[len] = 0x1f;
                    for w in 0..5 {
                        let mut b = [0u8; 8];
                        b.copy_from_slice(&block[8 * w..8 * w + 8]);
                        st[w][l] = u64::from_le_bytes(b);
                    }
                    st[rate / 8 - 1][l] ^= 0x80 << 56;
                    block.zeroize();
                }
                $name { st, rate, kb }
            }

            /// Permutes, then copies one rate-sized block of every instance to `out[l][..rate]`.
            fn squeeze_block(&mut self, out: &mut [[u8; SHAKE128_RATE]; $n]) {
                $perm(self.kb, &mut self.st);
                for (l, o) in out.iter_mut().enumerate() {
                    for w in 0..self.rate / 8 {
                        o[8 * w..8 * w + 8].copy_from_slice(&self.st[w][l].to_le_bytes());
                    }
                }
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                self.st.zeroize();
            }
        }
    };
}

multi_xof!(Xof4, 4, sha3::f1600_x4_with);
multi_xof!(Xof8, 8, sha3::f1600_x8_with);

/// The rejection-sampling step of SampleNTT: appends accepted coefficients of a buffer to `p.c[*n..]`.
pub(crate) type RejFn = fn(&mut Poly, &mut usize, &[u8]);

/// Runs SampleNTT on `out.len()` (at most `$n`) seeds `rho || a || b`, writing straight into `out`.
macro_rules! sample_ntt_batch {
    ($fn:ident, $xof:ident, $n:expr) => {
        fn $fn(kb: KeccakBackend, rej: RejFn, seeds: &[[u8; 34]; $n], out: &mut [Poly]) {
            let mut x = $xof::new(kb, SHAKE128_RATE, seeds, 34);
            let mut buf = [[0u8; SHAKE128_RATE]; $n];
            let mut filled = [0usize; $n];
            loop {
                x.squeeze_block(&mut buf);
                let mut done = true;
                for (l, p) in out.iter_mut().enumerate() {
                    rej(p, &mut filled[l], &buf[l]);
                    done &= filled[l] == 256;
                }
                if done {
                    break;
                }
            }
        }
    };
}

sample_ntt_batch!(sample_ntt_x4, Xof4, 4);
sample_ntt_batch!(sample_ntt_x8, Xof8, 8);

/// One SampleNTT with the single-instance SHAKE128.
fn sample_ntt_x1(rej: RejFn, seed: &[u8; 34], out: &mut Poly) {
    let mut h = Shake128::new();
    h.update(seed);
    let mut r = h.finalize_xof();
    let mut buf = [0u8; SHAKE128_RATE];
    let mut n = 0;
    while n < 256 {
        r.read(&mut buf);
        rej(out, &mut n, &buf);
    }
}

/// Expands ρ into the k×k matrix, stored row-major in `a[..k*k]`: `a[i*k + j] = SampleNTT(ρ || j || i)`
/// (FIPS 203 Algorithm 13 line 6), or its transpose `SampleNTT(ρ || i || j)` when `transposed`.
pub(crate) fn gen_matrix(rej: RejFn, a: &mut [Poly; 16], rho: &[u8; 32], k: usize, transposed: bool) {
    let kb = KeccakBackend::detect();
    let wide = kb == KeccakBackend::Avx512;
    let mut seed = [0u8; 34];
    seed[..32].copy_from_slice(rho);
    let mut idx = 0;
    let total = k * k;
    while idx < total {
        let left = total - idx;
        // The 8-way AVX-512 permutation costs about as much as one single-state permutation and half as much
        // as the AVX2 4-way one, so with it every batch is 8-way (unused lanes are free).
        let n = if wide && left >= 2 {
            8
        } else if left >= 2 {
            4
        } else {
            1
        };
        let take = n.min(left);
        let mut seeds = [seed; 8];
        for (l, s) in seeds.iter_mut().enumerate().take(take) {
            let (i, j) = ((idx + l) / k, (idx + l) % k);
            (s[32], s[33]) = if transposed { (i as u8, j as u8) } else { (j as u8, i as u8) };
        }
        let out = &mut a[idx..idx + take];
        match n {
            8 => sample_ntt_x8(kb, rej, &seeds, out),
            4 => {
                let s4 = [seeds[0], seeds[1], seeds[2], seeds[3]];
                sample_ntt_x4(kb, rej, &s4, out);
            }
            _ => sample_ntt_x1(rej, &seeds[0], &mut out[0]),
        }
        idx += take;
    }
}

/// Samples `etas.len()` (at most 9) noise polynomials: `out[t] = SamplePolyCBD_{etas[t]}(PRF(σ, nonce0 + t))`
/// (FIPS 203 §4.1, PRF_η(s, b) = SHAKE256(s || b, 64η)).
pub(crate) fn sample_noise(sigma: &[u8; 32], nonce0: u8, etas: &[usize], out: &mut [Poly]) {
    let kb = KeccakBackend::detect();
    let wide = kb == KeccakBackend::Avx512;
    let blocks = if etas.contains(&3) { 2 } else { 1 };
    let mut seed = [0u8; 34];
    seed[..32].copy_from_slice(sigma);
    let mut idx = 0;
    let total = etas.len();
    let mut bufs = [[0u8; 2 * SHAKE128_RATE]; 8];
    while idx < total {
        let left = total - idx;
        let n = if wide { 8 } else { 4 };
        let mut seeds = [seed; 8];
        for (l, s) in seeds.iter_mut().enumerate() {
            s[32] = nonce0.wrapping_add((idx + l) as u8);
        }
        let mut blk = [[0u8; SHAKE128_RATE]; 8];
        if n == 8 {
            let mut x = Xof8::new(kb, SHAKE256_RATE, &seeds, 33);
            for b in 0..blocks {
                x.squeeze_block(&mut blk);
                for l in 0..8 {
                    bufs[l][b * SHAKE256_RATE..(b + 1) * SHAKE256_RATE].copy_from_slice(&blk[l][..SHAKE256_RATE]);
                }
            }
        } else {
            let s4 = [seeds[0], seeds[1], seeds[2], seeds[3]];
            let mut x = Xof4::new(kb, SHAKE256_RATE, &s4, 33);
            let mut b4 = [[0u8; SHAKE128_RATE]; 4];
            for b in 0..blocks {
                x.squeeze_block(&mut b4);
                for l in 0..4 {
                    bufs[l][b * SHAKE256_RATE..(b + 1) * SHAKE256_RATE].copy_from_slice(&b4[l][..SHAKE256_RATE]);
                }
            }
            b4.zeroize();
        }
        blk.zeroize();
        for l in 0..n.min(left) {
            let eta = etas[idx + l];
            cbd(&bufs[l][..64 * eta], eta, &mut out[idx + l]);
        }
        seeds.zeroize();
        idx += n.min(left);
    }
    bufs.zeroize();
    seed.zeroize();
}
