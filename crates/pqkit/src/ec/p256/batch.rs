//! Many P-256 ECDSA verifications at once ([`verify_many`](super::verify_many),
//! [`verify_prehashed_many`](super::verify_prehashed_many)).
//!
//! Per item: the digest (SHA-256 of the message, or the caller's), the checks and scalars of the
//! one-at-a-time verification (z, r, s). Then, for up to `CHUNK` (64) items at once, s⁻¹ for all of them by
//! Montgomery's trick (one variable-time inversion modulo n), u1 = z·s⁻¹ and u2 = r·s⁻¹, and the sums
//! u1·G + u2·Q eight at a time in AVX-512 IFMA lanes (`batch/ifma.rs`). Each lane's result is checked as the
//! one-at-a-time verification does: X = r·Z², or X = (r + n)·Z² when r + n < p. A lane whose Z is zero (the
//! identity, or an exceptional case of the additions that the lanes do not handle) is verified again one
//! at a time, so every result is exactly what [`VerifyingKey::verify`](super::VerifyingKey::verify) (or
//! `verify_prehashed`) returns for that item.
//!
//! Not constant time: verification handles public data only.
//!
//! Crate-internal plumbing, public only so tests and benchmarks can force each backend.

#![cfg_attr(not(feature = "alloc"), allow(dead_code, unused_imports))]

#[cfg(all(feature = "alloc", target_arch = "x86_64"))]
use super::scalar::Scalar;
use super::{Signature, VerifyingKey};
#[cfg(all(feature = "alloc", target_arch = "x86_64"))]
use crate::Error;
use crate::Result;
use crate::dispatch::Checked;

#[cfg(target_arch = "x86_64")]
mod ifma;

crate::dispatch::backends! {
    /// An implementation of many P-256 ECDSA verifications at once.
    ///
    /// Crate-internal plumbing, public only so tests and benchmarks can force each backend.
    #[doc(hidden)]
    pub enum Backend for "P-256 batch" {
        /// Each item through the one-at-a-time verification (with the key's own P-256 backend): what CPUs
        /// without AVX-512 IFMA run.
        Soft: [],
        /// AVX-512 IFMA: eight verification sums in the eight 64-bit lanes of `zmm` registers, radix 2^52,
        /// Montgomery form (`batch/ifma.rs`), the s⁻¹ batched.
        Ifma: [AVX512F, AVX512IFMA],
    }
}

/// Zero, a placeholder.
#[cfg(all(feature = "alloc", target_arch = "x86_64"))]
const S0: Scalar = Scalar([0; 4]);

/// Items that share one inversion modulo n.
pub(crate) const CHUNK: usize = 64;

/// One item: the key, the message (or digest) and the signature.
pub(crate) type Item<'a> = (&'a VerifyingKey, &'a [u8], &'a Signature);

/// What the second field of an [`Item`] is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// A message, hashed here with SHA-256 (`verify`).
    Message,
    /// A digest computed by the caller (`verify_prehashed`).
    Digest,
}

/// The results of `items`, in order, each read as `kind` says.
#[cfg(feature = "alloc")]
pub(crate) fn verify_many(backend: Checked<Backend>, items: &[Item<'_>], kind: Input) -> alloc::vec::Vec<Result<()>> {
    let mut out = alloc::vec::Vec::with_capacity(items.len());
    for chunk in items.chunks(CHUNK) {
        match backend.get() {
            Backend::Soft => out.extend(chunk.iter().map(|&it| single(it, kind))),
            #[cfg(target_arch = "x86_64")]
            Backend::Ifma => lanes(backend, chunk, kind, &mut out),
            // Never checked off x86_64 (no CPU there reports AVX-512 IFMA).
            #[cfg(not(target_arch = "x86_64"))]
            Backend::Ifma => out.extend(chunk.iter().map(|&it| single(it, kind))),
        }
    }
    out
}

/// The one-at-a-time verification of one item.
fn single((vk, m, sig): Item<'_>, kind: Input) -> Result<()> {
    match kind {
        Input::Message => vk.verify(m, sig),
        Input::Digest => vk.verify_prehashed(m, sig),
    }
}

/// The signed radix-32 digits of a scalar (52, in [−16, 16]).
#[cfg(all(feature = "alloc", target_arch = "x86_64"))]
fn digits(k: &Scalar) -> [i8; 52] {
    super::point::signed_digits::<52>(&k.to_canonical_limbs(), 5)
}

/// At most [`CHUNK`] items through the lanes, results appended to `out`.
#[cfg(all(feature = "alloc", target_arch = "x86_64"))]
fn lanes(backend: Checked<Backend>, items: &[Item<'_>], kind: Input, out: &mut alloc::vec::Vec<Result<()>>) {
    use super::weierstrass::ecdsa::verify_scalars;
    use ifma::{LANES, LaneInput, to_radix52};
    let n = items.len();
    debug_assert!(n <= CHUNK);
    let first = out.len();
    // Results decided before the point arithmetic (a short digest) go straight out; the others wait in
    // `pending` (index into `items`) with their scalars.
    let mut pending = [0usize; CHUNK];
    let mut zrs = [(S0, S0, S0); CHUNK];
    let mut np = 0;
    for (i, &(_, m, sig)) in items.iter().enumerate() {
        let scalars = if kind == Input::Message {
            verify_scalars::<super::NistP256>(&crate::hash::sha2::Sha256::digest(m), sig)
        } else {
            verify_scalars::<super::NistP256>(m, sig)
        };
        match scalars {
            Ok(t) => {
                pending[np] = i;
                zrs[np] = t;
                np += 1;
                out.push(Ok(()));
            }
            Err(e) => out.push(Err(e)),
        }
    }
    if np == 0 {
        return;
    }
    // s⁻¹ for every pending item: prefix products, one inversion, back down (s is never zero).
    let mut prefix = [S0; CHUNK];
    for k in 0..np {
        prefix[k] = if k == 0 { zrs[0].2 } else { prefix[k - 1].mul(&zrs[k].2) };
    }
    let mut inv = prefix[np - 1].invert_vartime();
    let mut w = [S0; CHUNK];
    for k in (0..np).rev() {
        w[k] = if k == 0 { inv } else { inv.mul(&prefix[k - 1]) };
        inv = inv.mul(&zrs[k].2);
    }
    let n_limbs = super::scalar::N.m;
    let p_limbs = super::field::P.m;
    let mut rn_ok = [false; CHUNK];
    let input = |k: usize, rn_ok: &mut [bool; CHUNK]| {
        let (z, r, _) = zrs[k];
        let (vk, _, _) = items[pending[k]];
        let q = &vk.point().0;
        let rl = r.to_canonical_limbs();
        let (rn, carry) = super::field::adc4(&rl, &n_limbs);
        rn_ok[k] = carry == 0 && super::field::sbb4(&rn, &p_limbs).1 == 1;
        let mut rn52 = to_radix52(&rn);
        rn52[4] |= carry << 48;
        LaneInput {
            qx: ifma::from_soft(&q.x),
            qy: ifma::from_soft(&q.y),
            d1: digits(&z.mul(&w[k])),
            d2: digits(&r.mul(&w[k])),
            r: to_radix52(&rl),
            rn: rn52,
        }
    };
    // Only the pending items' inputs are computed; the rest stay copies of item 0's.
    let mut inputs = [input(0, &mut rn_ok); CHUNK];
    for (k, slot) in inputs.iter_mut().enumerate().take(np).skip(1) {
        *slot = input(k, &mut rn_ok);
    }
    for g in (0..np).step_by(LANES) {
        // The tail's spare lanes repeat item 0; their results are dropped.
        let lane_in: [LaneInput; LANES] = core::array::from_fn(|j| inputs[if g + j < np { g + j } else { 0 }]);
        let res = ifma::verify8(backend, &lane_in);
        for (j, o) in res.iter().enumerate().take((np - g).min(LANES)) {
            let k = g + j;
            let i = pending[k];
            let z = ifma::canonical(&o.z);
            out[first + i] = if z == [0; 4] {
                // The identity or an exceptional case: the one-at-a-time verification decides.
                single(items[i], kind)
            } else {
                let x = ifma::canonical(&o.x);
                if x == ifma::canonical(&o.rz2) || (rn_ok[k] && x == ifma::canonical(&o.rnz2)) {
                    Ok(())
                } else {
                    Err(Error::AuthenticationFailed { algorithm: <super::NistP256 as super::PrimeCurve>::ECDSA_NAME })
                }
            };
        }
    }
}
