//! The samplers of FIPS 204 §7.3: ExpandA (RejNTTPoly over SHAKE128), ExpandS (RejBoundedPoly over SHAKE256),
//! ExpandMask and SampleInBall. The matrix and the vectors are expanded 4 or 8 polynomials at a time with the
//! multi-way SHAKE of [`crate::hash::sha3`].

use super::poly::Poly;
use super::{Backend, N, Q};
use crate::hash::sha3::{self, Shake256, ShakeX4, ShakeX8};
use zeroize::Zeroize;

const RATE128: usize = 168;
const RATE256: usize = 136;

/// Parses 3-byte candidates of `buf` into `p` from position `*ctr` (RejNTTPoly, Algorithm 30).
fn rej_uniform(p: &mut Poly, ctr: &mut usize, buf: &[u8]) {
    for c in buf.chunks_exact(3) {
        if *ctr == N {
            return;
        }
        let v = u32::from(c[0]) | u32::from(c[1]) << 8 | (u32::from(c[2]) & 0x7F) << 16;
        if v < Q as u32 {
            p.0[*ctr] = v as i32;
            *ctr += 1;
        }
    }
}

/// Parses half-bytes of `buf` into coefficients in \[-η, η\] (RejBoundedPoly, Algorithm 31). The accept
/// decision is the rejection sampling of the standard; the value itself is computed without a table.
fn rej_eta(p: &mut Poly, ctr: &mut usize, buf: &[u8], eta: i32) {
    for &b in buf {
        for z in [u32::from(b & 15), u32::from(b >> 4)] {
            if *ctr == N {
                return;
            }
            if eta == 2 {
                if z < 15 {
                    // z mod 5 = z - 5·floor(z/5), floor(z/5) = (z·205) >> 10 for z < 15.
                    let m = z - 5 * ((z * 205) >> 10);
                    p.0[*ctr] = 2 - m as i32;
                    *ctr += 1;
                }
            } else if z < 9 {
                p.0[*ctr] = 4 - z as i32;
                *ctr += 1;
            }
        }
    }
}

macro_rules! multi_expand {
    ($w:expr, $ty:ident, $sha3_backend:expr, $a_fn:ident, $s_fn:ident, $mask_fn:ident) => {
        /// ExpandA into `a` (row-major, `k * l` entries, NTT domain), `$w` polynomials at a time.
        fn $a_fn(backend: Backend, rho: &[u8; 32], a: &mut [Poly], l: usize) {
            let sb = $sha3_backend(backend);
            let total = a.len();
            let mut base = 0;
            while base < total {
                let mut seeds = [[0u8; 34]; $w];
                for (t, s) in seeds.iter_mut().enumerate() {
                    let idx = (base + t).min(total - 1);
                    s[..32].copy_from_slice(rho);
                    s[32] = (idx % l) as u8;
                    s[33] = (idx / l) as u8;
                }
                let inputs: [&[u8]; $w] = core::array::from_fn(|t| &seeds[t][..]);
                let mut x = $ty::with_backend(sb, RATE128, inputs);
                let mut bufs = [[0u8; 5 * RATE128]; $w];
                {
                    let outs: [&mut [u8]; $w] = bufs.each_mut().map(|b| &mut b[..]);
                    x.squeeze(outs);
                }
                let mut ctr = [0usize; $w];
                let mut polys = [Poly::ZERO; $w];
                for t in 0..$w {
                    rej_uniform(&mut polys[t], &mut ctr[t], &bufs[t]);
                }
                while ctr.iter().any(|&c| c < N) {
                    let mut more = [[0u8; RATE128]; $w];
                    {
                        let outs: [&mut [u8]; $w] = more.each_mut().map(|b| &mut b[..]);
                        x.squeeze(outs);
                    }
                    for t in 0..$w {
                        rej_uniform(&mut polys[t], &mut ctr[t], &more[t]);
                    }
                }
                for t in 0..$w {
                    if base + t < total {
                        a[base + t] = polys[t];
                    }
                }
                base += $w;
            }
        }

        /// ExpandS: `s1[r]` from ρ' || r, `s2[r]` from ρ' || (r + l), coefficients in \[-η, η\].
        fn $s_fn(backend: Backend, rho1: &[u8; 64], s1: &mut [Poly], s2: &mut [Poly], eta: i32) {
            let sb = $sha3_backend(backend);
            let l = s1.len();
            let total = l + s2.len();
            let mut base = 0;
            while base < total {
                let mut seeds = [[0u8; 66]; $w];
                for (t, s) in seeds.iter_mut().enumerate() {
                    let idx = (base + t).min(total - 1) as u16;
                    s[..64].copy_from_slice(rho1);
                    s[64..].copy_from_slice(&idx.to_le_bytes());
                }
                let inputs: [&[u8]; $w] = core::array::from_fn(|t| &seeds[t][..]);
                let mut x = $ty::with_backend(sb, RATE256, inputs);
                let mut bufs = [[0u8; 2 * RATE256]; $w];
                {
                    let outs: [&mut [u8]; $w] = bufs.each_mut().map(|b| &mut b[..]);
                    x.squeeze(outs);
                }
                let mut ctr = [0usize; $w];
                let mut polys = [Poly::ZERO; $w];
                for t in 0..$w {
                    rej_eta(&mut polys[t], &mut ctr[t], &bufs[t], eta);
                }
                while ctr.iter().any(|&c| c < N) {
                    let mut more = [[0u8; RATE256]; $w];
                    {
                        let outs: [&mut [u8]; $w] = more.each_mut().map(|b| &mut b[..]);
                        x.squeeze(outs);
                    }
                    for t in 0..$w {
                        rej_eta(&mut polys[t], &mut ctr[t], &more[t], eta);
                    }
                    more.zeroize();
                }
                for t in 0..$w {
                    let idx = base + t;
                    if idx < l {
                        s1[idx] = polys[t];
                    } else if idx < total {
                        s2[idx - l] = polys[t];
                    }
                }
                bufs.zeroize();
                polys.zeroize();
                seeds.zeroize();
                base += $w;
            }
        }

        /// ExpandMask (Algorithm 34): `y[r]` from ρ'' || (κ + r), coefficients in (-γ1, γ1\].
        fn $mask_fn(backend: Backend, rho2: &[u8; 64], kappa: u16, y: &mut [Poly], gamma1: i32) {
            let sb = $sha3_backend(backend);
            let bytes = if gamma1 == 1 << 17 { 576 } else { 640 };
            let mut base = 0;
            while base < y.len() {
                let mut seeds = [[0u8; 66]; $w];
                for (t, s) in seeds.iter_mut().enumerate() {
                    let idx = kappa.wrapping_add((base + t).min(y.len() - 1) as u16);
                    s[..64].copy_from_slice(rho2);
                    s[64..].copy_from_slice(&idx.to_le_bytes());
                }
                let inputs: [&[u8]; $w] = core::array::from_fn(|t| &seeds[t][..]);
                let mut x = $ty::with_backend(sb, RATE256, inputs);
                let mut bufs = [[0u8; 640]; $w];
                {
                    let outs: [&mut [u8]; $w] = bufs.each_mut().map(|b| &mut b[..bytes]);
                    x.squeeze(outs);
                }
                for t in 0..$w {
                    if base + t < y.len() {
                        super::encoding::unpack_gamma1(&mut y[base + t], &bufs[t][..bytes], gamma1);
                    }
                }
                bufs.zeroize();
                seeds.zeroize();
                base += $w;
            }
        }
    };
}

fn sha3_backend(backend: Backend) -> sha3::Backend {
    match backend {
        Backend::Soft => sha3::Backend::Soft,
        Backend::Avx2 => sha3::Backend::Avx2,
        Backend::Avx512 => sha3::Backend::Avx512,
    }
}

multi_expand!(4, ShakeX4, sha3_backend, expand_a_x4, expand_s_x4, expand_mask_x4);
multi_expand!(8, ShakeX8, sha3_backend, expand_a_x8, expand_s_x8, expand_mask_x8);

/// ExpandA (Algorithm 32): `a[r * l + s]` = RejNTTPoly(ρ || s || r).
pub fn expand_a(backend: Backend, rho: &[u8; 32], a: &mut [Poly], l: usize) {
    match backend {
        Backend::Avx512 => expand_a_x8(backend, rho, a, l),
        _ => expand_a_x4(backend, rho, a, l),
    }
}

/// ExpandS (Algorithm 33).
pub fn expand_s(backend: Backend, rho1: &[u8; 64], s1: &mut [Poly], s2: &mut [Poly], eta: i32) {
    match backend {
        Backend::Avx512 => expand_s_x8(backend, rho1, s1, s2, eta),
        _ => expand_s_x4(backend, rho1, s1, s2, eta),
    }
}

/// ExpandMask (Algorithm 34).
pub fn expand_mask(backend: Backend, rho2: &[u8; 64], kappa: u16, y: &mut [Poly], gamma1: i32) {
    match backend {
        Backend::Avx512 if y.len() > 4 => expand_mask_x8(backend, rho2, kappa, y, gamma1),
        _ => expand_mask_x4(backend, rho2, kappa, y, gamma1),
    }
}

/// SampleInBall (Algorithm 29): a polynomial with τ coefficients ±1 and the rest 0, from c̃. The challenge is
/// public once the signature is released (c̃ is part of it).
pub fn sample_in_ball(backend: Backend, ctilde: &[u8], tau: usize) -> Poly {
    let mut h = Shake256::with_backend(sha3_backend(backend));
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
