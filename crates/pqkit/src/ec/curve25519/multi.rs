//! Many X25519 operations at once ([`x25519::derive_many`](crate::ec::x25519::derive_many)): independent
//! ladders side by side, and one field inversion for up to `CHUNK` (64) results.
//!
//! The batched backends run the ladders without their final inversion, keep each result as a projective
//! (X : Z), and turn up to `CHUNK` (64) of them into u = X/Z with Montgomery's trick: the prefix products of the
//! Z, one inversion, and three multiplications per result on the way back. A Z of zero (the result of a peer
//! point of small order) would make the whole product zero, so it is replaced by 1 before the trick and the
//! result masked to zero afterwards, both in constant time: the zero result is then exactly what the
//! one-at-a-time ladder returns (it multiplies by 0^(p−2) = 0).
//!
//! Crate-internal plumbing, public only so tests and benchmarks can force each backend.

// The batch API (`x25519::derive_many`) needs `alloc`; without it only the backend declaration is used.
#![cfg_attr(not(feature = "alloc"), allow(dead_code))]
use super::field::{Fe51, Field, mask_is_zero};
pub use super::lanes::Backend;
pub(crate) use super::lanes::CHUNK;
use super::lanes::{Projective, fe_from_limbs52, limbs52};
use crate::dispatch::Checked;
use zeroize::Zeroize;

/// X25519(k[i], u[i]) into `out[i]` for every `i` (scalars already clamped; the three slices of one length),
/// an all-zero output where `u[i]` has small order, as the one-at-a-time ladder gives.
pub(crate) fn x25519_many(backend: Checked<Backend>, k: &[[u8; 32]], u: &[[u8; 32]], out: &mut [[u8; 32]]) {
    let n = k.len().min(u.len()).min(out.len());
    let (k, u, out) = (&k[..n], &u[..n], &mut out[..n]);
    for ((k, u), out) in k.chunks(CHUNK).zip(u.chunks(CHUNK)).zip(out.chunks_mut(CHUNK)) {
        chunk(backend, k, u, out);
    }
}

/// [`x25519_many`] for at most [`CHUNK`] operations.
fn chunk(backend: Checked<Backend>, k: &[[u8; 32]], u: &[[u8; 32]], out: &mut [[u8; 32]]) {
    let n = k.len();
    debug_assert!(n <= CHUNK && u.len() == n && out.len() == n);
    let mut proj = [Projective::default(); CHUNK];
    match backend.get() {
        Backend::Soft => {
            for i in 0..n {
                proj[i] = ladder_soft(&k[i], &u[i]);
            }
        }
        Backend::Bmi2Adx => {
            let single = super::Backend::detect();
            for i in 0..n {
                out[i] = super::x25519(single, &k[i], &u[i]);
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => {
            use super::avx2::{LANES as L4, ladder4};
            for (g, (kg, ug)) in k.chunks(L4).zip(u.chunks(L4)).enumerate() {
                // The tail's spare lanes run a dummy ladder (scalar 0 on u = 9) whose result is dropped.
                let mut nine = [0u8; 32];
                nine[0] = 9;
                let mut kl = [[0u8; 32]; L4];
                let mut ul = [nine; L4];
                kl[..kg.len()].copy_from_slice(kg);
                ul[..ug.len()].copy_from_slice(ug);
                let r = ladder4(backend, &kl, &ul);
                kl.zeroize();
                proj[g * L4..g * L4 + kg.len()].copy_from_slice(&r[..kg.len()]);
            }
        }
        #[cfg(target_arch = "x86_64")]
        Backend::Ifma => {
            use super::lanes::LANES;
            for (g, (kg, ug)) in k.chunks(LANES).zip(u.chunks(LANES)).enumerate() {
                // The tail's spare lanes run a dummy ladder (scalar 0 on u = 9) whose result is dropped.
                let mut nine = [0u8; 32];
                nine[0] = 9;
                let mut kl = [[0u8; 32]; LANES];
                let mut ul = [nine; LANES];
                kl[..kg.len()].copy_from_slice(kg);
                ul[..ug.len()].copy_from_slice(ug);
                let r = super::ifma::ladder8(backend, &kl, &ul);
                kl.zeroize();
                proj[g * LANES..g * LANES + kg.len()].copy_from_slice(&r[..kg.len()]);
            }
        }
        // Never checked off x86_64 (no CPU there reports AVX2 or AVX-512 IFMA).
        #[cfg(not(target_arch = "x86_64"))]
        Backend::Avx2 | Backend::Ifma => {
            for i in 0..n {
                proj[i] = ladder_soft(&k[i], &u[i]);
            }
        }
    }
    to_affine(&proj[..n], out);
    for p in proj.iter_mut() {
        p.x.zeroize();
        p.z.zeroize();
    }
}

/// The radix-2^52 limbs of a field element's canonical value.
fn limbs52_of(f: &Fe51) -> [u64; 5] {
    let mut b = f.to_bytes();
    let l = limbs52(&b);
    b.zeroize();
    l
}

/// The portable ladder of [`super::montgomery::ladder`] without its final inversion.
fn ladder_soft(k: &[u8; 32], u: &[u8; 32]) -> Projective {
    let (mut x2, mut z2) = super::montgomery::ladder_projective(k, &Fe51::from_bytes(u));
    let p = Projective { x: limbs52_of(&x2), z: limbs52_of(&z2) };
    x2.0.zeroize();
    z2.0.zeroize();
    p
}

/// u = X/Z for every result, by Montgomery's trick (one inversion), masked to zero where Z is zero.
fn to_affine(p: &[Projective], out: &mut [[u8; 32]]) {
    let n = p.len();
    if n == 0 {
        return;
    }
    let mut x = [Fe51::ZERO; CHUNK];
    let mut z = [Fe51::ONE; CHUNK];
    let mut zero = [0u64; CHUNK];
    // prefix[i] = z[0]·…·z[i].
    let mut prefix = [Fe51::ONE; CHUNK];
    for i in 0..n {
        x[i] = fe_from_limbs52(&p[i].x);
        let zi = fe_from_limbs52(&p[i].z);
        zero[i] = mask_is_zero(&zi);
        z[i] = Fe51::select(&Fe51::ONE, &zi, zero[i]);
        prefix[i] = if i == 0 { z[0] } else { prefix[i - 1].mul(&z[i]) };
    }
    // inv = 1/(z[0]·…·z[i]) at step i, going down.
    let mut inv = prefix[n - 1].invert();
    for i in (0..n).rev() {
        let zinv = if i == 0 { inv } else { inv.mul(&prefix[i - 1]) };
        inv = inv.mul(&z[i]);
        let mut u = x[i].mul(&zinv).to_bytes();
        let keep = !(zero[i] as u8);
        for (o, b) in out[i].iter_mut().zip(u.iter()) {
            *o = b & keep;
        }
        u.zeroize();
    }
    for f in x.iter_mut().chain(z.iter_mut()).chain(prefix.iter_mut()) {
        f.0.zeroize();
    }
    inv.0.zeroize();
}
