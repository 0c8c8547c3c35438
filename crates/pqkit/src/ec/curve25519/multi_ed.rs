//! Many fixed-base multiplications s·B at once, for Ed25519 key generation and signing in bulk
//! ([`SigningKey::from_seeds_many`](crate::ec::ed25519::SigningKey::from_seeds_many),
//! [`sign_many`](crate::ec::ed25519::sign_many)): what each [`Backend`] of the batch layer runs.
//!
//! - `Ifma`: eight multiplications in the lanes of `zmm` registers (`ifma_edwards.rs`), each result kept
//!   projective (X : Y : Z), then up to `CHUNK` (64) results made affine with one field inversion
//!   (Montgomery's trick: the prefix products of the Z, one inversion, three multiplications per result on
//!   the way back). Edwards coordinates from the complete formulas never have Z = 0, so no result needs the
//!   zero handling of the X25519 batch.
//! - `Soft`: the portable one-at-a-time comb per scalar, projective, with the same batched inversion.
//! - `Bmi2Adx`: each scalar through the one-at-a-time fixed-base multiplication of the fastest Curve25519
//!   backend, with its own inversion (what CPUs without AVX-512 IFMA run).
//!
//! Crate-internal plumbing, public only so tests can force each backend.

// The batch APIs need `alloc`; without it this code is unused.
#![cfg_attr(not(feature = "alloc"), allow(dead_code))]
use super::Affine;
use super::field::Fe51;
use super::lanes::{Backend, CHUNK};
use crate::dispatch::Checked;
use zeroize::Zeroize;

/// `s[i]·B` into `out[i]` for every `i` (each scalar below 2^255; the two slices of one length): the RFC 8032
/// encoding and the affine coordinates, byte for byte what the one-at-a-time
/// [`mul_base_affine`](super::mul_base_affine) gives.
pub(crate) fn mul_base_many(backend: Checked<Backend>, s: &[[u8; 32]], out: &mut [([u8; 32], Affine)]) {
    let n = s.len().min(out.len());
    for (s, out) in s[..n].chunks(CHUNK).zip(out[..n].chunks_mut(CHUNK)) {
        chunk(backend, s, out);
    }
}

/// [`mul_base_many`] for at most [`CHUNK`] scalars.
fn chunk(backend: Checked<Backend>, s: &[[u8; 32]], out: &mut [([u8; 32], Affine)]) {
    let n = s.len();
    debug_assert!(n <= CHUNK && out.len() == n);
    let mut pts = [[Fe51::ZERO; 3]; CHUNK];
    match backend.get() {
        Backend::Bmi2Adx | Backend::Avx2 => {
            let single = super::Backend::detect();
            for (o, si) in out.iter_mut().zip(s) {
                *o = super::mul_base_affine(single, si);
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        Backend::Ifma => {
            use super::lanes::{LANES, fe_from_limbs52};
            for (g, sg) in s.chunks(LANES).enumerate() {
                // The tail's spare lanes multiply by the scalar 0; their results are dropped.
                let mut sl = [[0u8; 32]; LANES];
                sl[..sg.len()].copy_from_slice(sg);
                let mut r = super::ifma_edwards::mul_base8(backend, &sl);
                sl.zeroize();
                for (dst, src) in pts[g * LANES..].iter_mut().zip(&r[..sg.len()]) {
                    *dst = src.map(|l| fe_from_limbs52(&l));
                }
                r.zeroize();
            }
        }
        // Never checked off x86_64 (no CPU there reports AVX-512 IFMA): the portable comb.
        #[cfg(not(target_arch = "x86_64"))]
        Backend::Ifma => soft(s, &mut pts),
        Backend::Soft => soft(s, &mut pts),
    }
    to_affine(&pts[..n], out);
    for p in pts.iter_mut().flatten() {
        p.0.zeroize();
    }
}

/// The portable comb for each scalar, results projective.
fn soft(s: &[[u8; 32]], pts: &mut [[Fe51; 3]; CHUNK]) {
    for (dst, si) in pts.iter_mut().zip(s) {
        let mut p = super::edwards::mul_base::<Fe51>(si);
        *dst = [p.x, p.y, p.z];
        for f in [&mut p.x, &mut p.y, &mut p.z, &mut p.t] {
            f.0.zeroize();
        }
    }
}

/// x = X/Z, y = Y/Z for every point by Montgomery's trick (one inversion; Z is never zero), then the
/// encodings.
fn to_affine(p: &[[Fe51; 3]], out: &mut [([u8; 32], Affine)]) {
    let n = p.len();
    if n == 0 {
        return;
    }
    // prefix[i] = z[0]·…·z[i].
    let mut prefix = [Fe51::ONE; CHUNK];
    prefix[0] = p[0][2];
    for i in 1..n {
        prefix[i] = prefix[i - 1].mul(&p[i][2]);
    }
    // inv = 1/(z[0]·…·z[i]) at step i, going down.
    let mut inv = prefix[n - 1].invert();
    for i in (0..n).rev() {
        let mut zinv = if i == 0 { inv } else { inv.mul(&prefix[i - 1]) };
        inv = inv.mul(&p[i][2]);
        let x = p[i][0].mul(&zinv).to_bytes();
        let y = p[i][1].mul(&zinv).to_bytes();
        let mut enc = y;
        enc[31] |= (x[0] & 1) << 7;
        out[i] = (enc, Affine { x, y });
        zinv.0.zeroize();
    }
    for f in prefix.iter_mut() {
        f.0.zeroize();
    }
    inv.0.zeroize();
}

/// Test hooks: the batch with a forced backend, and the one-at-a-time reference.
#[doc(hidden)]
pub mod testing {
    use super::*;

    /// The encodings of `s[i]·B` (each `s[i]` below 2^255) through the batch path of `backend`.
    #[cfg(feature = "alloc")]
    pub fn mul_base_many(backend: Checked<Backend>, s: &[[u8; 32]]) -> alloc::vec::Vec<[u8; 32]> {
        let mut out = alloc::vec![([0u8; 32], Affine { x: [0; 32], y: [0; 32] }); s.len()];
        super::mul_base_many(backend, s, &mut out);
        out.iter().map(|o| o.0).collect()
    }

    /// The encoding of `s·B` through the one-at-a-time fixed-base multiplication of `backend`.
    pub fn mul_base_one(backend: Checked<super::super::Backend>, s: &[u8; 32]) -> [u8; 32] {
        super::super::mul_base_compressed(backend, s)
    }
}
