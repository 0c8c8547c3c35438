//! The samplers of FIPS 204 §7.3: ExpandA (RejNTTPoly over SHAKE128), ExpandS (RejBoundedPoly over SHAKE256),
//! ExpandMask and SampleInBall. The matrix and the vectors are expanded 4 or 8 polynomials at a time with the
//! multi-way SHAKE of [`crate::hash::sha3`].

use super::poly::Poly;
use super::{Backend, N, Q};
use crate::dispatch::Checked;
use crate::hash::sha3::{self, Shake256};
use zeroize::Zeroize;

const RATE128: usize = 168;
const RATE256: usize = 136;

/// Parses 3-byte candidates of `buf` into `p` from position `*ctr` (RejNTTPoly, Algorithm 30). Each candidate
/// is stored unconditionally and the position advances by the accept bit, so there is no data branch.
fn rej_uniform(p: &mut Poly, ctr: &mut usize, buf: &[u8]) {
    let mut c = *ctr;
    for b in buf.chunks_exact(3) {
        if c == N {
            break;
        }
        let v = u32::from(b[0]) | u32::from(b[1]) << 8 | (u32::from(b[2]) & 0x7F) << 16;
        p.0[c] = v as i32;
        c += ((v.wrapping_sub(Q as u32)) >> 31) as usize;
    }
    *ctr = c;
}

/// [`rej_uniform`] with the backend's vector parser for the bulk of the buffer.
/// `buf` holds `RATE128` bytes of output followed by 8 bytes of padding, so that the vector parser's 32-byte
/// loads reach every 24-byte group.
#[inline]
fn rej_uniform_with(backend: Checked<Backend>, p: &mut Poly, ctr: &mut usize, buf: &[u8; BUF]) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 | Backend::Avx512 => {
            let used = super::avx2::rej_uniform(backend, p, ctr, buf, RATE128);
            rej_uniform(p, ctr, &buf[used..RATE128]);
        }
        _ => rej_uniform(p, ctr, &buf[..RATE128]),
    }
}

/// Block buffer: one SHAKE128 block and 8 bytes of padding.
const BUF: usize = RATE128 + 8;

/// Parses half-bytes of `buf` into coefficients in \[-η, η\] (RejBoundedPoly, Algorithm 31). As in
/// [`rej_uniform`], values are stored unconditionally and the position advances by the accept bit; the
/// value is computed arithmetically (no table).
fn rej_eta(p: &mut Poly, ctr: &mut usize, buf: &[u8], eta: i32) {
    let mut c = *ctr;
    for &b in buf {
        for z in [u32::from(b & 15), u32::from(b >> 4)] {
            if c == N {
                *ctr = c;
                return;
            }
            let (v, acc) = if eta == 2 {
                // z mod 5 = z - 5·floor(z/5), floor(z/5) = (z·205) >> 10 for z < 16.
                (2 - (z - 5 * ((z * 205) >> 10)) as i32, z.wrapping_sub(15) >> 31)
            } else {
                (4 - z as i32, z.wrapping_sub(9) >> 31)
            };
            p.0[c] = v;
            c += acc as usize;
        }
    }
    *ctr = c;
}

/// [`rej_eta`] with the backend's vector parser for the bulk of the buffer.
#[inline]
fn rej_eta_with(backend: Checked<Backend>, p: &mut Poly, ctr: &mut usize, buf: &[u8], eta: i32) {
    match backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 | Backend::Avx512 => {
            let used = super::avx2::rej_eta(backend, p, ctr, buf, eta);
            rej_eta(p, ctr, &buf[used..], eta);
        }
        _ => rej_eta(p, ctr, buf, eta),
    }
}

/// `W` SHAKE instances advanced together, each absorbing one short seed (shorter than a block). Output is
/// read a whole block at a time straight from the lanes.
struct XofN<const W: usize> {
    st: [[u64; W]; 25],
    rate: usize,
    backend: Checked<sha3::Backend>,
    secret: bool,
}

trait Permute {
    fn permute(backend: Checked<sha3::Backend>, st: &mut Self);
}

impl Permute for [[u64; 4]; 25] {
    #[inline]
    fn permute(backend: Checked<sha3::Backend>, st: &mut Self) {
        sha3::f1600_x4_with(backend, st)
    }
}

impl Permute for [[u64; 8]; 25] {
    #[inline]
    fn permute(backend: Checked<sha3::Backend>, st: &mut Self) {
        sha3::f1600_x8_with(backend, st)
    }
}

impl<const W: usize> XofN<W>
where
    [[u64; W]; 25]: Permute,
{
    /// Absorbs `seeds[k]` (each shorter than `rate`, whole 8-byte words up to the last partial one) with SHAKE
    /// padding, straight into the lanes. The permutation runs lazily, at the start of each [`block`](Self::block)
    /// call, so no permutation is wasted after the last block a caller reads.
    /// `secret`: whether the state is wiped on drop (ExpandS and ExpandMask; ExpandA's is public).
    fn new(backend: Checked<sha3::Backend>, rate: usize, seeds: &[[u8; 66]], len: usize, secret: bool) -> Self {
        debug_assert!(len < rate);
        let mut st = [[0u64; W]; 25];
        for (k, seed) in seeds[..W].iter().enumerate() {
            let mut i = 0;
            while i + 8 <= len {
                st[i / 8][k] = u64::from_le_bytes([
                    seed[i],
                    seed[i + 1],
                    seed[i + 2],
                    seed[i + 3],
                    seed[i + 4],
                    seed[i + 5],
                    seed[i + 6],
                    seed[i + 7],
                ]);
                i += 8;
            }
            // The partial word (at most 7 seed bytes) followed by the SHAKE domain byte.
            let mut last = 0x1Fu64 << (8 * (len - i));
            for (j, &b) in seed[i..len].iter().enumerate() {
                last |= u64::from(b) << (8 * j);
            }
            st[i / 8][k] = last;
            st[rate / 8 - 1][k] ^= 0x80 << 56;
        }
        XofN { st, rate, backend, secret }
    }

    /// Permutes, then writes the next block of every instance to `out[k][..rate]`.
    fn block(&mut self, out: &mut [[u8; BUF]; W]) {
        <[[u64; W]; 25]>::permute(self.backend, &mut self.st);
        for i in 0..self.rate / 8 {
            for (k, o) in out.iter_mut().enumerate() {
                o[8 * i..8 * i + 8].copy_from_slice(&self.st[i][k].to_le_bytes());
            }
        }
    }
}

impl<const W: usize> XofN<W>
where
    [[u64; W]; 25]: Permute,
{
    /// Permutes, then writes the next block of instance k to `out[k][off..off + rate]`.
    fn block_at(&mut self, out: &mut [[u8; MASK_BUF]], off: usize) {
        <[[u64; W]; 25]>::permute(self.backend, &mut self.st);
        for i in 0..self.rate / 8 {
            for (k, o) in out[..W].iter_mut().enumerate() {
                o[off + 8 * i..off + 8 * i + 8].copy_from_slice(&self.st[i][k].to_le_bytes());
            }
        }
    }
}

/// Five SHAKE256 blocks (680 bytes): enough for one ExpandMask polynomial (576 or 640 bytes); rounded up to
/// a multiple of 32 so that the buffers can be wiped 32 bytes at a time.
const MASK_BUF: usize = 704;

/// Most mask polynomials computed ahead: the lanes of one 8-way batch beyond the one polynomial it had to make.
const AHEAD: usize = 7;

/// Reusable buffers of ExpandMask, wiped once when the signer is done with them rather than on every
/// iteration of the rejection loop.
///
/// It also holds the window of mask polynomials computed ahead: a multi-way batch always fills every lane,
/// the lanes past the current attempt's last polynomial computing the next attempt's first ones (indices
/// κ + L, κ + L + 1, ...), which the next call with that κ takes instead of recomputing them. These are
/// secret (the next attempt's y) and are wiped with the rest on drop.
///
/// Contract: one `MaskScratch` serves one ρ'' and one γ1 (one signing operation); the window is keyed on κ only.
#[repr(C, align(64))]
pub struct MaskScratch {
    out: [[u8; MASK_BUF]; 8],
    seeds: [[u8; 66]; 8],
    /// ExpandMask polynomials of indices `ahead_start .. ahead_start + ahead_n` (mod 2^16), in order.
    ahead: [Poly; AHEAD],
    ahead_start: u16,
    ahead_n: usize,
    /// How many entries of `ahead` were ever written (the ones to wipe).
    ahead_used: usize,
    /// Wipes the buffers.
    backend: Checked<Backend>,
}

impl MaskScratch {
    /// Zeroed buffers and an empty window, wiped on drop with `backend`'s code.
    pub fn new(backend: Checked<Backend>) -> Self {
        MaskScratch {
            out: [[0; MASK_BUF]; 8],
            seeds: [[0; 66]; 8],
            ahead: [Poly::ZERO; AHEAD],
            ahead_start: 0,
            ahead_n: 0,
            ahead_used: 0,
            backend,
        }
    }

    /// Moves the polynomials of the window that start at `kappa` into `y` (as many as fit), keeps the rest for
    /// the next call, and returns how many it moved. A window that does not start at `kappa` is dropped (the
    /// signer always asks for consecutive ranges, so that only happens to a scratch used out of order).
    fn take_ahead(&mut self, kappa: u16, y: &mut [Poly]) -> usize {
        if self.ahead_n == 0 || self.ahead_start != kappa {
            self.ahead_n = 0;
            return 0;
        }
        let n = self.ahead_n.min(y.len());
        y[..n].copy_from_slice(&self.ahead[..n]);
        self.ahead.copy_within(n..self.ahead_n, 0);
        self.ahead_n -= n;
        self.ahead_start = kappa.wrapping_add(n as u16);
        n
    }
}

impl Drop for MaskScratch {
    fn drop(&mut self) {
        wipe_bytes(self.backend, self.out.as_flattened_mut());
        self.seeds.zeroize();
        let used = self.ahead_used.min(AHEAD);
        self.backend.wipe(&mut self.ahead[..used]);
    }
}

impl<const W: usize> Drop for XofN<W> {
    fn drop(&mut self) {
        if self.secret {
            self.st.zeroize();
        }
    }
}

macro_rules! multi_expand {
    ($w:expr, $a_fn:ident, $s_fn:ident, $mask_fn:ident) => {
        /// ExpandA into `a` (row-major entries `first..first + a.len()` of the matrix, NTT domain), `$w`
        /// polynomials at a time.
        fn $a_fn(backend: Checked<Backend>, rho: &[u8; 32], a: &mut [Poly], l: usize, first: usize) {
            let sb = backend.keccak();
            let total = a.len();
            let mut base = 0;
            while base < total {
                let mut seeds = [[0u8; 66]; $w];
                for (t, s) in seeds.iter_mut().enumerate() {
                    let idx = first + (base + t).min(total - 1);
                    s[..32].copy_from_slice(rho);
                    s[32] = (idx % l) as u8;
                    s[33] = (idx / l) as u8;
                }
                let mut x = XofN::<$w>::new(sb, RATE128, &seeds, 34, false);
                let mut bufs = [[0u8; BUF]; $w];
                let mut ctr = [0usize; $w];
                let n = ($w).min(total - base);
                while ctr[..n].iter().any(|&c| c < N) {
                    x.block(&mut bufs);
                    for t in 0..n {
                        rej_uniform_with(backend, &mut a[base + t], &mut ctr[t], &bufs[t]);
                    }
                }
                base += $w;
            }
        }

        /// ExpandS for the entries `from..to` of s1 || s2: `s1[r]` from ρ' || r, `s2[r]` from ρ' || (r + l),
        /// coefficients in \[-η, η\].
        fn $s_fn(
            backend: Checked<Backend>,
            rho1: &[u8; 64],
            s1: &mut [Poly],
            s2: &mut [Poly],
            eta: i32,
            from: usize,
            to: usize,
        ) {
            let sb = backend.keccak();
            let l = s1.len();
            let total = to;
            let mut base = from;
            while base < total {
                let mut seeds = [[0u8; 66]; $w];
                for (t, s) in seeds.iter_mut().enumerate() {
                    let idx = (base + t).min(total - 1) as u16;
                    s[..64].copy_from_slice(rho1);
                    s[64..].copy_from_slice(&idx.to_le_bytes());
                }
                let mut x = XofN::<$w>::new(sb, RATE256, &seeds, 66, true);
                let mut bufs = [[0u8; BUF]; $w];
                let mut ctr = [0usize; $w];
                let n = ($w).min(total - base);
                while ctr[..n].iter().any(|&c| c < N) {
                    x.block(&mut bufs);
                    for t in 0..n {
                        let idx = base + t;
                        let p = if idx < l { &mut s1[idx] } else { &mut s2[idx - l] };
                        rej_eta_with(backend, p, &mut ctr[t], &bufs[t][..RATE256], eta);
                    }
                }
                bufs.zeroize();
                seeds.zeroize();
                base += $w;
            }
        }

        /// ExpandMask (Algorithm 34): `y[r]` from ρ'' || (κ + r), coefficients in (-γ1, γ1\].
        fn $mask_fn(
            backend: Checked<Backend>,
            rho2: &[u8; 64],
            kappa: u16,
            y: &mut [Poly],
            gamma1: i32,
            sc: &mut MaskScratch,
        ) {
            let sb = backend.keccak();
            let bytes = if gamma1 == 1 << 17 { 576 } else { 640 };
            let l = y.len();
            // The polynomials computed ahead by the previous call; the batches below run only once the
            // window is empty, so the lanes they fill past `l` become the new window, starting at κ + l.
            let mut base = sc.take_ahead(kappa, y);
            while base < l {
                for (t, s) in sc.seeds[..$w].iter_mut().enumerate() {
                    let idx = kappa.wrapping_add((base + t) as u16);
                    s[..64].copy_from_slice(rho2);
                    s[64..].copy_from_slice(&idx.to_le_bytes());
                }
                let mut x = XofN::<$w>::new(sb, RATE256, &sc.seeds, 66, true);
                for b in 0..5 {
                    x.block_at(&mut sc.out, b * RATE256);
                }
                for t in 0..$w {
                    let out = &sc.out[t][..bytes];
                    if base + t < l {
                        backend.unpack_gamma1(&mut y[base + t], out, gamma1);
                    } else {
                        let j = base + t - l;
                        if j == 0 {
                            sc.ahead_start = kappa.wrapping_add(l as u16);
                        }
                        backend.unpack_gamma1(&mut sc.ahead[j], out, gamma1);
                        sc.ahead_n = j + 1;
                        sc.ahead_used = sc.ahead_used.max(j + 1);
                    }
                }
                base += $w;
            }
        }
    };
}

/// Zeroizes a buffer with volatile stores, 32 bytes at a time on the vector backends when the buffer is
/// 32-byte aligned with a length that is a multiple of 32.
fn wipe_bytes(backend: Checked<Backend>, b: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if matches!(backend.get(), Backend::Avx2 | Backend::Avx512) && super::avx2::wipe_bytes(backend, b) {
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = backend;
    b.zeroize();
}

multi_expand!(4, expand_a_x4, expand_s_x4, expand_mask_x4);
multi_expand!(8, expand_a_x8, expand_s_x8, expand_mask_x8);

/// ExpandA (Algorithm 32): `a[r * l + s]` = RejNTTPoly(ρ || s || r). On the AVX-512 backend, 8 at a time and
/// a last group of at most 4 on the (half as wide, half as costly) 4-way permutation.
pub fn expand_a(backend: Checked<Backend>, rho: &[u8; 32], a: &mut [Poly], l: usize) {
    match backend.get() {
        Backend::Avx512 => {
            let tail = if a.len() % 8 <= 4 { a.len() % 8 } else { 0 };
            let split = a.len() - tail;
            expand_a_x8(backend, rho, &mut a[..split], l, 0);
            expand_a_x4(backend, rho, &mut a[split..], l, split);
        }
        _ => expand_a_x4(backend, rho, a, l, 0),
    }
}

/// ExpandS (Algorithm 33), grouped like [`expand_a`].
pub fn expand_s(backend: Checked<Backend>, rho1: &[u8; 64], s1: &mut [Poly], s2: &mut [Poly], eta: i32) {
    match backend.get() {
        Backend::Avx512 => {
            let total = s1.len() + s2.len();
            let tail = if total % 8 <= 4 { total % 8 } else { 0 };
            expand_s_x8(backend, rho1, s1, s2, eta, 0, total - tail);
            expand_s_x4(backend, rho1, s1, s2, eta, total - tail, total);
        }
        _ => expand_s_x4(backend, rho1, s1, s2, eta, 0, s1.len() + s2.len()),
    }
}

/// ExpandMask (Algorithm 34).
pub fn expand_mask(
    backend: Checked<Backend>,
    rho2: &[u8; 64],
    kappa: u16,
    y: &mut [Poly],
    gamma1: i32,
    sc: &mut MaskScratch,
) {
    match backend.get() {
        Backend::Avx512 if y.len() > 4 => expand_mask_x8(backend, rho2, kappa, y, gamma1, sc),
        _ => expand_mask_x4(backend, rho2, kappa, y, gamma1, sc),
    }
}

/// SampleInBall (Algorithm 29): a polynomial with τ coefficients ±1 and the rest 0, from c̃. The challenge is
/// public once the signature is released (c̃ is part of it).
pub fn sample_in_ball(backend: Checked<Backend>, ctilde: &[u8], tau: usize) -> Poly {
    // c̃ is part of the signature (also sampled on rejected attempts, whose count is public: FIPS 204 and
    // docs/hardening.md), so the positions it selects are public.
    crate::ct::declassify_ref(ctilde);
    let mut h = Shake256::with_backend(backend.keccak());
    h.update(ctilde);
    let mut rd = h.finalize_xof();
    let mut block = [0u8; RATE256];
    rd.read(&mut block);
    let signs = u64::from_le_bytes([block[0], block[1], block[2], block[3], block[4], block[5], block[6], block[7]]);
    let mut pos = 8;
    let mut c = Poly::ZERO;
    for (bit, i) in (N - tau..N).enumerate() {
        let j = loop {
            if pos == RATE256 {
                rd.read(&mut block);
                pos = 0;
            }
            let j = block[pos] as usize;
            pos += 1;
            if j <= i {
                break j;
            }
        };
        c.0[i] = c.0[j];
        c.0[j] = 1 - 2 * ((signs >> bit) & 1) as i32;
    }
    c
}
