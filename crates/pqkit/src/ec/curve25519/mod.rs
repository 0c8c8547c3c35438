//! The Curve25519 layer shared by [`x25519`](super::x25519) and [`ed25519`](super::ed25519): the field
//! GF(2^255 − 19) (`field`), the Edwards group (`edwards`), the Montgomery ladder (`montgomery`) and the
//! integers modulo the group order L (`scalar`), each testable alone; and the family's backends.
//!
//! ## Backends
//! The field arithmetic is the only part that differs between backends; the group formulas, ladder and
//! scalar multiplications are written once, generic over the field, and each backend instantiates them with
//! its own element type. The choice is made once per key or operation, by the one dispatch mechanism
//! ([`crate::dispatch`]): `Backend::detect()` gives a `Checked<Backend>` that keys store and every
//! operation here takes.
//!
//! Crate-internal plumbing: public only so tests and benchmarks can force each backend.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod bmi2_adx;
pub(crate) mod edwards;
pub(crate) mod field;
#[cfg(target_arch = "x86_64")]
mod ifma;
#[cfg(target_arch = "x86_64")]
mod ifma_edwards;
mod lanes;
pub(crate) mod montgomery;
#[doc(hidden)]
pub mod multi;
#[doc(hidden)]
pub mod multi_ed;
pub(crate) mod scalar;

use crate::dispatch::Checked;
use edwards::{CurveField, Point, ProjNiels, naf, odd_multiples, straus_vartime, straus_vartime_split};
use field::{Fe51, Field};
use scalar::Scalar;

crate::dispatch::backends! {
    /// An implementation of the Curve25519 field arithmetic.
    ///
    /// Crate-internal plumbing, public only so tests and benchmarks can force each backend.
    #[doc(hidden)]
    pub enum Backend for "Curve25519" {
        /// Portable Rust: five 51-bit limbs, `u128` products. The reference.
        Soft: [],
        /// x86_64 BMI2 + ADX: four 64-bit limbs, `mulx` products summed on the two carry chains of
        /// `adcx`/`adox` (`asm!`), for the Edwards operations; X25519's ladder runs each whole step as
        /// one `asm!` block over a state in memory.
        Bmi2Adx: [BMI2, ADX],
        /// `Bmi2Adx` with the fixed-base multiplication (key generation, signing) on signed radix-32
        /// digits (51 additions) and its table look-ups in AVX2: each entry read as three 256-bit words
        /// and kept by a vector mask, in the same `asm!` block as the addition of the entry, with the next
        /// row prefetched.
        Bmi2AdxAvx2: [BMI2, ADX, AVX2],
    }
}

/// The affine coordinates of a point that passed strict decoding, canonical encodings of x and y: a form
/// every backend reads (keys store it, so that a key never has to be decoded twice).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Affine {
    pub(crate) x: [u8; 32],
    pub(crate) y: [u8; 32],
}

/// Runs the generic function `$f` with the chosen backend's field type.
macro_rules! with_field {
    ($backend:expr, $f:ident ( $($arg:expr),* )) => {
        match $backend.get() {
            Backend::Soft => generic::$f::<Fe51>($($arg),*),
            #[cfg(target_arch = "x86_64")]
            Backend::Bmi2Adx | Backend::Bmi2AdxAvx2 => bmi2_adx::$f($backend, $($arg),*),
            // Never checked off x86_64 (no CPU there reports BMI2 and ADX).
            #[cfg(not(target_arch = "x86_64"))]
            Backend::Bmi2Adx | Backend::Bmi2AdxAvx2 => generic::$f::<Fe51>($($arg),*),
        }
    };
}

/// X25519(k, u) (RFC 7748 §5) for an already clamped `k`: the ladder.
pub(crate) fn x25519(backend: Checked<Backend>, k: &[u8; 32], u: &[u8; 32]) -> [u8; 32] {
    with_field!(backend, x25519(k, u))
}

/// X25519(k, 9) for an already clamped `k`, through the fixed-base Edwards multiplication and the
/// birational map u = (1 + y)/(1 − y).
pub(crate) fn x25519_base(backend: Checked<Backend>, k: &[u8; 32]) -> [u8; 32] {
    with_field!(backend, x25519_base(k))
}

/// The encoding of `s·B` for a secret `s` < 2^255.
pub(crate) fn mul_base_compressed(backend: Checked<Backend>, s: &[u8; 32]) -> [u8; 32] {
    with_field!(backend, mul_base_compressed(s))
}

/// `s·B` for a secret `s` < 2^255 (a public key): its encoding and its affine coordinates.
pub(crate) fn mul_base_affine(backend: Checked<Backend>, s: &[u8; 32]) -> ([u8; 32], Affine) {
    with_field!(backend, mul_base_affine(s))
}

/// Strict decoding of an Edwards point (see `Point::decompress`), with the small-order check when
/// `reject_small_order`.
pub(crate) fn decode(
    backend: Checked<Backend>,
    b: &[u8; 32],
    reject_small_order: bool,
) -> Result<Affine, &'static str> {
    with_field!(backend, decode(b, reject_small_order))
}

/// The cofactored verification equation 8·(s·B − k·A − R) = 0 (variable time, public inputs).
pub(crate) fn verify_cofactored(backend: Checked<Backend>, a: &Affine, r: &Affine, k: &Scalar, s: &Scalar) -> bool {
    with_field!(backend, verify_cofactored(a, r, k, s))
}

/// Points per multi-scalar multiplication in batch verification (two per signature): bounds the stack used.
pub(crate) const BATCH_CHUNK: usize = 8;

/// The batch equation for up to [`BATCH_CHUNK`] signatures: 8·(b·B + Σ zᵢ·Rᵢ + Σ wᵢ·Aᵢ) = 0 with
/// `terms[i] = (Rᵢ, zᵢ, Aᵢ, wᵢ)` (variable time, public inputs).
pub(crate) fn batch_equation(
    backend: Checked<Backend>,
    b: &Scalar,
    terms: &[(Affine, Scalar, Affine, Scalar)],
) -> bool {
    with_field!(backend, batch_equation(b, terms))
}

/// The functions every backend runs, over its field type.
mod generic {
    use super::*;

    #[inline]
    fn point<F: Field>(a: &Affine) -> Point<F> {
        Point::from_affine(F::from_bytes(&a.x), F::from_bytes(&a.y))
    }

    #[inline]
    pub(super) fn x25519<F: CurveField>(k: &[u8; 32], u: &[u8; 32]) -> [u8; 32] {
        montgomery::ladder(k, &F::from_bytes(u)).to_bytes()
    }

    #[inline]
    pub(super) fn x25519_base<F: CurveField>(k: &[u8; 32]) -> [u8; 32] {
        edwards::mul_base::<F>(k).to_montgomery_u()
    }

    #[inline]
    pub(super) fn mul_base_compressed<F: CurveField>(s: &[u8; 32]) -> [u8; 32] {
        edwards::mul_base::<F>(s).compress()
    }

    pub(super) fn mul_base_affine<F: CurveField>(s: &[u8; 32]) -> ([u8; 32], Affine) {
        encode_affine(edwards::mul_base::<F>(s))
    }

    /// The encoding and affine coordinates of `p`.
    pub(super) fn encode_affine<F: CurveField>(p: Point<F>) -> ([u8; 32], Affine) {
        let (x, y) = p.to_affine();
        let (x, y) = (x.to_bytes(), y.to_bytes());
        let mut enc = y;
        enc[31] |= (x[0] & 1) << 7;
        (enc, Affine { x, y })
    }

    pub(super) fn decode<F: CurveField>(b: &[u8; 32], reject_small_order: bool) -> Result<Affine, &'static str> {
        let p = Point::<F>::decompress(b)?;
        if reject_small_order && p.is_small_order() {
            return Err("point of small order");
        }
        // decompress returns Z = 1.
        Ok(Affine { x: p.x.to_bytes(), y: p.y.to_bytes() })
    }

    /// 8·(s·B − k·A − R) = 0, checked as 8·(t·B ∓ c0·A − c1·R) = 0 with the half-size split
    /// c0 ≡ ±c1·k (mod L) of [`scalar::half_size_vartime`] and t = c1·s mod L: the original equation times
    /// ±c1. The two are equivalent: c1 is invertible mod L (0 < c1 < L), ±c1·k·A and c0·A differ by a
    /// multiple of L·A, which the cofactor 8 clears (8·A lies in the subgroup of order L), and c1·(8·P) = 0
    /// forces 8·P = 0 because 8·P has order 1 or L. Every scalar is below 2^128 (t in two halves), so the
    /// multi-scalar multiplication does about 128 doublings instead of 253.
    pub(super) fn verify_cofactored<F: CurveField>(a: &Affine, r: &Affine, k: &Scalar, s: &Scalar) -> bool {
        let Some((c0, c1, negative)) = scalar::half_size_vartime(&k.to_bytes()) else {
            return verify_cofactored_full::<F>(a, r, k, s);
        };
        let mut c1b = [0u8; 32];
        c1b[..16].copy_from_slice(&c1.to_le_bytes());
        let mut c0b = [0u8; 32];
        c0b[..16].copy_from_slice(&c0.to_le_bytes());
        let t = Scalar::from_bytes_mod_order(&c1b).mul(s).to_bytes();
        let (mut t_lo, mut t_hi) = ([0u8; 32], [0u8; 32]);
        t_lo[..16].copy_from_slice(&t[..16]);
        t_hi[..16].copy_from_slice(&t[16..]);
        // ±c1·(s·B − k·A − R) = t·B − (±c0)·A − c1·R: A's coefficient is −c0 for +c1, +c0 for −c1.
        let pa = if negative { point::<F>(a) } else { point::<F>(a).neg() };
        let minus_r = point::<F>(r).neg();
        let sum = straus_vartime_split(
            &naf(&t_lo, 8),
            Some(&naf(&t_hi, 8)),
            &[naf(&c0b, 5), naf(&c1b, 5)],
            &[odd_multiples(&pa), odd_multiples(&minus_r)],
        );
        sum.mul_by_cofactor().mask_is_identity() != 0
    }

    /// The same equation with the full-length scalars (the fallback of [`verify_cofactored`], and its
    /// reference in the tests).
    pub(super) fn verify_cofactored_full<F: CurveField>(a: &Affine, r: &Affine, k: &Scalar, s: &Scalar) -> bool {
        let minus_a = point::<F>(a).neg();
        let sb_minus_ka = straus_vartime(&naf(&s.to_bytes(), 8), &[naf(&k.to_bytes(), 5)], &[odd_multiples(&minus_a)]);
        let diff = sb_minus_ka.sub(&point::<F>(r).to_proj_niels()).to_extended();
        diff.mul_by_cofactor().mask_is_identity() != 0
    }

    pub(super) fn batch_equation<F: CurveField>(b: &Scalar, terms: &[(Affine, Scalar, Affine, Scalar)]) -> bool {
        debug_assert!(terms.len() <= BATCH_CHUNK);
        let n = 2 * terms.len().min(BATCH_CHUNK);
        let mut nafs = [[0i8; 256]; 2 * BATCH_CHUNK];
        let mut tables = [[ProjNiels::<F>::IDENTITY; 8]; 2 * BATCH_CHUNK];
        for (i, (r, z, a, w)) in terms.iter().take(BATCH_CHUNK).enumerate() {
            nafs[2 * i] = naf(&z.to_bytes(), 5);
            tables[2 * i] = odd_multiples(&point::<F>(r));
            nafs[2 * i + 1] = naf(&w.to_bytes(), 5);
            tables[2 * i + 1] = odd_multiples(&point::<F>(a));
        }
        let sum = straus_vartime(&naf(&b.to_bytes(), 8), &nafs[..n], &tables[..n]);
        sum.mul_by_cofactor().mask_is_identity() != 0
    }
}

/// Test hooks: the internal paths with a forced backend, so integration tests can compare them.
#[doc(hidden)]
pub mod testing {
    use super::*;

    /// X25519 through the ladder on u = 9 (the other fixed-base path).
    pub fn x25519_base_ladder(backend: Checked<Backend>, k: &[u8; 32]) -> [u8; 32] {
        let mut nine = [0u8; 32];
        nine[0] = 9;
        x25519(backend, k, &nine)
    }

    /// X25519 through the Edwards fixed-base multiplication (`k` clamped by the caller).
    pub fn x25519_base_edwards(backend: Checked<Backend>, k: &[u8; 32]) -> [u8; 32] {
        x25519_base(backend, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use field::tests::Xs;

    /// The half-size verification equation against the full-length one, with keys and nonces that carry
    /// torsion components (which the cofactored equation ignores): valid signatures pass both, altered ones
    /// fail both, on every backend.
    #[test]
    fn half_size_verification_matches_full_length() {
        extern crate std;
        fn hexb(h: &str) -> [u8; 32] {
            core::array::from_fn(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
        }
        // Identity, order 2 (y = −1), order 4 (y = 0), order 8.
        let mut y_m1 = [0xffu8; 32];
        y_m1[0] = 0xec;
        y_m1[31] = 0x7f;
        let mut id = [0u8; 32];
        id[0] = 1;
        let torsion: std::vec::Vec<Point<Fe51>> =
            [id, y_m1, [0u8; 32], hexb("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")]
                .iter()
                .map(|e| Point::<Fe51>::decompress(e).unwrap())
                .collect();
        assert!(
            torsion[3].is_small_order()
                && torsion[3].double().to_extended().double().to_extended().mask_is_identity() == 0,
            "order 8"
        );
        let with = |s: &Scalar, t: &Point<Fe51>| {
            generic::encode_affine(edwards::mul_base::<Fe51>(&s.to_bytes()).add(&t.to_proj_niels()).to_extended()).1
        };
        let mut rng = Xs(0x8032_0991);
        let mut one = [0u8; 32];
        one[0] = 1;
        let one = Scalar::from_bytes_mod_order(&one);
        for i in 0..96 {
            let a = Scalar::from_bytes_mod_order(&rng.bytes());
            let r = Scalar::from_bytes_mod_order(&rng.bytes());
            let k = if i == 0 { Scalar::ZERO } else { Scalar::from_bytes_mod_order(&rng.bytes()) };
            let (pa, pr) = (with(&a, &torsion[i % 4]), with(&r, &torsion[(i / 4) % 4]));
            let s = k.mul_add(&a, &r);
            let bad_s = s.add(&one);
            let other_r = with(&r.add(&one), &torsion[0]);
            for (rr, ss, want) in [(&pr, &s, true), (&pr, &bad_s, false), (&other_r, &s, false)] {
                assert_eq!(generic::verify_cofactored_full::<Fe51>(&pa, rr, &k, ss), want, "full, case {i}");
                for b in Backend::available() {
                    assert_eq!(verify_cofactored(b, &pa, rr, &k, ss), want, "half-size, {b:?}, case {i}");
                }
            }
        }
    }

    #[test]
    fn both_fixed_base_paths_agree() {
        let mut rng = Xs(0x7748_0001);
        for b in Backend::available() {
            for i in 0..64 {
                let mut k = rng.bytes();
                if i == 0 {
                    k = [0; 32];
                }
                k[0] &= 248;
                k[31] &= 127;
                k[31] |= 64;
                assert_eq!(testing::x25519_base_ladder(b, &k), testing::x25519_base_edwards(b, &k));
            }
        }
    }
}
