//! Matrix expansion (SampleNTT over SHAKE128), noise sampling (SamplePolyCBD over the SHAKE256 PRF) and the
//! implicit-rejection hash J, run as *jobs* packed into 8-way (AVX-512 Keccak) or 4-way batches, one job per
//! Keccak state. A batch runs as many permutations as its longest job needs; lanes that finish early cost
//! nothing extra, so mixing job kinds in one batch saves single-state permutations.

use super::Backend;
use super::poly::{Poly, cbd};
use crate::ct::wipe;
use crate::dispatch::Checked;
use crate::hash::sha3::{self, Backend as KeccakBackend};

const SHAKE128_RATE: usize = 168;
const SHAKE256_RATE: usize = 136;

/// One XOF computation.
#[derive(Clone, Copy)]
pub(crate) enum Job<'a> {
    /// `mat[idx] = SampleNTT(ρ || a || b)`.
    Matrix { idx: usize, a: u8, b: u8 },
    /// `noise[idx] = SamplePolyCBD_eta(PRF_eta(σ, nonce))`.
    Noise { idx: usize, nonce: u8, eta: usize },
    /// `j_out = SHAKE256(z || c, 32)`.
    Reject { z: &'a [u8], c: &'a [u8] },
}

/// Where the jobs read their seeds and write their results.
pub(crate) struct Outputs<'a> {
    pub(crate) rho: &'a [u8; 32],
    pub(crate) sigma: &'a [u8; 32],
    pub(crate) mat: &'a mut [Poly],
    pub(crate) noise: &'a mut [Poly],
    pub(crate) j_out: &'a mut [u8; 32],
}

impl Job<'_> {
    fn rate(&self) -> usize {
        match self {
            Job::Matrix { .. } => SHAKE128_RATE,
            _ => SHAKE256_RATE,
        }
    }

    /// The message parts (their concatenation is the XOF input).
    fn parts<'b>(&'b self, o: &'b Outputs<'_>, small: &'b [u8; 2]) -> [&'b [u8]; 2] {
        match self {
            Job::Matrix { .. } => [&o.rho[..], &small[..2]],
            Job::Noise { .. } => [&o.sigma[..], &small[..1]],
            Job::Reject { z, c } => [z, c],
        }
    }

    fn small(&self) -> [u8; 2] {
        match *self {
            Job::Matrix { a, b, .. } => [a, b],
            Job::Noise { nonce, .. } => [nonce, 0],
            Job::Reject { .. } => [0, 0],
        }
    }

    /// Number of input blocks after SHAKE padding.
    fn in_blocks(&self, o: &Outputs<'_>) -> usize {
        let small = self.small();
        let len: usize = self.parts(o, &small).iter().map(|p| p.len()).sum();
        len / self.rate() + 1
    }
}

/// Block `b` of the SHAKE-padded concatenation of `parts` (of `nb` blocks), as little-endian lanes; the
/// words past the rate are zero.
fn padded_block(parts: [&[u8]; 2], rate: usize, b: usize, nb: usize, out: &mut [u64; 21]) {
    *out = [0; 21];
    let start = b * rate;
    let mut off = 0;
    for p in parts {
        // XOR in the part's bytes that fall in [start, start + rate).
        let lo = start.max(off);
        let hi = (start + rate).min(off + p.len());
        let mut pos = lo;
        while pos < hi {
            let i = pos - start;
            if i.is_multiple_of(8) && pos + 8 <= hi {
                // Whole aligned lane (J's z || c is lane-aligned throughout).
                let mut w = [0u8; 8];
                w.copy_from_slice(&p[pos - off..pos - off + 8]);
                out[i / 8] ^= u64::from_le_bytes(w);
                pos += 8;
            } else {
                out[i / 8] ^= u64::from(p[pos - off]) << (8 * (i % 8));
                pos += 1;
            }
        }
        off += p.len();
    }
    if off >= start && off < start + rate {
        let i = off - start;
        out[i / 8] ^= 0x1f << (8 * (i % 8));
    }
    if b == nb - 1 {
        out[rate / 8 - 1] ^= 0x80 << 56;
    }
}

fn perm1(kb: Checked<KeccakBackend>, st: &mut [[u64; 1]; 25]) {
    let mut s = [0u64; 25];
    for (d, x) in s.iter_mut().zip(st.iter()) {
        *d = x[0];
    }
    sha3::f1600_with(kb, &mut s);
    for (d, x) in st.iter_mut().zip(s.iter()) {
        d[0] = *x;
    }
    wipe(&mut s);
}

macro_rules! run_batch {
    ($fn:ident, $n:expr, $perm:path) => {
        /// Runs up to `$n` jobs together, one per Keccak state.
        fn $fn(be: Checked<Backend>, kb: Checked<KeccakBackend>, jobs: &[Job<'_>], o: &mut Outputs<'_>) {
            let mut st = [[0u64; $n]; 25];
            let mut nb = [0usize; $n];
            let mut blk = [0u64; 21];
            for (l, job) in jobs.iter().enumerate() {
                nb[l] = job.in_blocks(o);
                let small = job.small();
                padded_block(job.parts(o, &small), job.rate(), 0, nb[l], &mut blk);
                for (w, x) in blk.iter().enumerate() {
                    st[w][l] ^= *x;
                }
            }
            let mut filled = [0usize; $n];
            let mut squeezed = [0usize; $n];
            let mut nbuf = [[0u8; 2 * SHAKE256_RATE]; $n];
            let mut bytes = [0u8; SHAKE128_RATE];
            let mut t = 0;
            loop {
                $perm(kb, &mut st);
                t += 1;
                let mut done = true;
                for (l, job) in jobs.iter().enumerate() {
                    if t < nb[l] {
                        // Still absorbing a long input.
                        let small = job.small();
                        padded_block(job.parts(o, &small), job.rate(), t, nb[l], &mut blk);
                        for (w, x) in blk.iter().enumerate() {
                            st[w][l] ^= *x;
                        }
                        done = false;
                        continue;
                    }
                    let rate = job.rate();
                    match *job {
                        Job::Matrix { idx, .. } => {
                            if filled[l] < 256 {
                                for w in 0..rate / 8 {
                                    bytes[8 * w..8 * w + 8].copy_from_slice(&st[w][l].to_le_bytes());
                                }
                                be.rej(&mut o.mat[idx], &mut filled[l], &bytes[..rate]);
                            }
                            done &= filled[l] == 256;
                        }
                        Job::Noise { eta, .. } => {
                            let need = (64 * eta).div_ceil(SHAKE256_RATE);
                            if squeezed[l] < need {
                                let s = squeezed[l] * SHAKE256_RATE;
                                for w in 0..rate / 8 {
                                    nbuf[l][s + 8 * w..s + 8 * w + 8].copy_from_slice(&st[w][l].to_le_bytes());
                                }
                                squeezed[l] += 1;
                            }
                            done &= squeezed[l] == need;
                        }
                        Job::Reject { .. } => {
                            if t == nb[l] {
                                for w in 0..4 {
                                    o.j_out[8 * w..8 * w + 8].copy_from_slice(&st[w][l].to_le_bytes());
                                }
                            }
                        }
                    }
                }
                if done {
                    break;
                }
            }
            for (l, job) in jobs.iter().enumerate() {
                if let Job::Noise { idx, eta, .. } = *job {
                    cbd(&nbuf[l][..64 * eta], eta, &mut o.noise[idx]);
                }
            }
            wipe(st.as_flattened_mut());
            wipe(nbuf.as_flattened_mut());
            wipe(&mut blk);
        }
    };
}

run_batch!(run_x1, 1, perm1);
run_batch!(run_x4, 4, sha3::f1600_x4_with);
run_batch!(run_x8, 8, sha3::f1600_x8_with);

/// Runs every job: 8 at a time with the AVX-512 8-way Keccak (which costs about one single-state
/// permutation), otherwise 4 at a time, and a lone last job on the single-state permutation.
pub(crate) fn run(be: Checked<Backend>, jobs: &[Job<'_>], o: &mut Outputs<'_>) {
    let kb = be.keccak();
    let width = if kb == KeccakBackend::Avx512 { 8 } else { 4 };
    for chunk in jobs.chunks(width) {
        if chunk.len() == 1 && width == 4 {
            run_x1(be, kb, chunk, o);
        } else if width == 8 {
            run_x8(be, kb, chunk, o);
        } else {
            run_x4(be, kb, chunk, o);
        }
    }
}

/// The matrix jobs: `mat[i*k + j] = SampleNTT(ρ || j || i)` (FIPS 203 Algorithm 13 line 6), or the
/// transpose `SampleNTT(ρ || i || j)` when `transposed`. Returns how many were written to `jobs`.
pub(crate) fn matrix_jobs(jobs: &mut [Job<'_>], k: usize, transposed: bool) -> usize {
    for i in 0..k {
        for j in 0..k {
            let (a, b) = if transposed { (i as u8, j as u8) } else { (j as u8, i as u8) };
            jobs[i * k + j] = Job::Matrix { idx: i * k + j, a, b };
        }
    }
    k * k
}
