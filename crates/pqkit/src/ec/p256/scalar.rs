//! Integers modulo the P-256 group order
//! n = ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551, in Montgomery form (the portable
//! 4×64-bit code of [`super::field`]), constant time.

use super::field::{
    Modulus, add_mod, eq_mask, hex_limbs, limbs_from_be, limbs_to_be, mont_mul, sbb4, sub_if_ge, sub_mod,
};
use zeroize::Zeroize;

/// The group order n.
pub(crate) const N: Modulus =
    Modulus::new(hex_limbs("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"));

/// n in the safegcd inversion's limbs.
const N62: super::safegcd::Mod62 = super::safegcd::Mod62::new(&N.m);

/// R³ mod n (R = 2^256): a Montgomery product with it turns (a·R)⁻¹ into a⁻¹·R.
const N_R3: Scalar = Scalar(mont_mul(&N.r2, &N.r2, &N));

/// (n − 1)/2: the largest "low" s.
const HALF_N: [u64; 4] = {
    let m = N.m;
    [(m[0] >> 1) | (m[1] << 63), (m[1] >> 1) | (m[2] << 63), (m[2] >> 1) | (m[3] << 63), m[3] >> 1]
};

/// An integer modulo n in Montgomery form (a·R mod n), fully reduced.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Scalar(pub(crate) [u64; 4]);

/// Prints nothing of the value: scalars are often secrets.
impl core::fmt::Debug for Scalar {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Scalar { .. }")
    }
}

impl Zeroize for Scalar {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

impl Scalar {
    #[cfg(test)]
    pub(crate) const ZERO: Scalar = Scalar([0; 4]);

    /// The scalar with this canonical value (below n).
    #[inline]
    pub(crate) const fn from_canonical_limbs(w: &[u64; 4]) -> Scalar {
        Scalar(mont_mul(w, &N.r2, &N))
    }

    /// The scalar with these big-endian bytes if they are below n.
    pub(crate) fn from_be_canonical(b: &[u8; 32]) -> Option<Scalar> {
        let w = limbs_from_be(b);
        let (_, borrow) = sbb4(&w, &N.m);
        let s = Scalar::from_canonical_limbs(&w);
        // Range validity: a key error, or an ECDSA candidate rejection (probability ~2^-32): public.
        if crate::ct::declassify(borrow) == 1 { Some(s) } else { None }
    }

    /// The big-endian value reduced modulo n (any 256-bit value is below 2n).
    pub(crate) fn from_be_reduced(b: &[u8; 32]) -> Scalar {
        Scalar::from_canonical_limbs(&sub_if_ge(&limbs_from_be(b), 0, &N.m))
    }

    /// The canonical value.
    #[inline]
    pub(crate) fn to_canonical_limbs(self) -> [u64; 4] {
        mont_mul(&self.0, &[1, 0, 0, 0], &N)
    }

    /// The canonical big-endian encoding.
    pub(crate) fn to_be_bytes(self) -> [u8; 32] {
        limbs_to_be(&self.to_canonical_limbs())
    }

    #[inline]
    pub(crate) fn add(&self, b: &Scalar) -> Scalar {
        Scalar(add_mod(&self.0, &b.0, &N.m))
    }

    #[inline]
    pub(crate) fn neg(&self) -> Scalar {
        Scalar(sub_mod(&[0; 4], &self.0, &N.m))
    }

    #[inline]
    pub(crate) fn mul(&self, b: &Scalar) -> Scalar {
        Scalar(mont_mul(&self.0, &b.0, &N))
    }

    /// All ones if zero.
    pub(crate) fn is_zero_mask(&self) -> u64 {
        eq_mask(&self.0, &[0; 4])
    }

    /// Whether the value exceeds (n − 1)/2, computed in constant time.
    pub(crate) fn is_high(&self) -> bool {
        let (_, borrow) = sbb4(&HALF_N, &self.to_canonical_limbs());
        borrow == 1
    }

    /// a⁻¹ (0 for 0), constant time: safegcd (Bernstein–Yang) on the Montgomery form a·R gives
    /// a⁻¹·R⁻¹, and one product with R³ brings it to a⁻¹·R.
    pub(crate) fn invert(&self) -> Scalar {
        self.invert_with(super::safegcd::invert, |a, b| a.mul(b))
    }

    /// [`invert`](Self::invert) with a backend's safegcd `inv` (which must return what
    /// [`safegcd::invert`](super::safegcd::invert) does, in constant time) and its product `mul`.
    #[inline(always)]
    pub(crate) fn invert_with(
        &self,
        inv: impl Fn(&[u64; 4], &super::safegcd::Mod62) -> [u64; 4],
        mul: impl Fn(&Scalar, &Scalar) -> Scalar,
    ) -> Scalar {
        let inv = Scalar(inv(&self.0, &N62));
        mul(&inv, &N_R3)
    }

    /// a⁻¹ (0 for 0) for public values (verification's s): the variable-time safegcd, which skips runs
    /// of zero bits and takes several division steps at once.
    pub(crate) fn invert_vartime(&self) -> Scalar {
        let inv = Scalar(super::safegcd::invert_vartime(&self.0, &N62));
        inv.mul(&N_R3)
    }
}

#[cfg(test)]
mod tests {
    use super::super::field::tests::{Xs, big, edge_values};
    use super::*;
    use num_bigint::BigUint;

    #[test]
    fn scalar_matches_bigint() {
        let n = big(&N.m);
        assert_eq!(
            n,
            BigUint::parse_bytes(b"ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16).unwrap()
        );
        let mut rng = Xs(0x9256_0002);
        let vals = edge_values(&N.m, &mut rng);
        for (i, wa) in vals.iter().enumerate() {
            let wb = &vals[(i * 5 + 1) % vals.len()];
            let (a, b) = (Scalar::from_canonical_limbs(wa), Scalar::from_canonical_limbs(wb));
            let (va, vb) = (big(wa), big(wb));
            assert_eq!(big(&a.to_canonical_limbs()), va);
            assert_eq!(big(&a.mul(&b).to_canonical_limbs()), (&va * &vb) % &n, "mul {i}");
            assert_eq!(big(&a.add(&b).to_canonical_limbs()), (&va + &vb) % &n, "add {i}");
            assert_eq!(big(&a.neg().to_canonical_limbs()), (&n - &va) % &n, "neg {i}");
            let inv = va.modpow(&(&n - 2u32), &n);
            assert_eq!(big(&a.invert_vartime().to_canonical_limbs()), inv, "inv vartime {i}");
            if i % 4 == 0 {
                assert_eq!(big(&a.invert().to_canonical_limbs()), inv, "inv {i}");
            }
            assert_eq!(a.is_high(), va > (&n - 1u32) / 2u32, "is_high {i}");
            assert_eq!(a.is_zero_mask() == u64::MAX, va == BigUint::from(0u8));
            // Byte conversions: canonical accepted, n and above refused or reduced.
            let bytes = limbs_to_be(wa);
            assert_eq!(Scalar::from_be_canonical(&bytes), Some(a));
            let raw = rng.limbs();
            let rb = limbs_to_be(&raw);
            assert_eq!(big(&Scalar::from_be_reduced(&rb).to_canonical_limbs()), big(&raw) % &n);
            assert_eq!(Scalar::from_be_canonical(&rb).is_some(), big(&raw) < n);
        }
        assert_eq!(Scalar::from_be_canonical(&limbs_to_be(&N.m)), None);
        assert_eq!(Scalar::from_be_reduced(&limbs_to_be(&N.m)), Scalar::ZERO);
        assert_eq!(Scalar::from_be_canonical(&[0xff; 32]), None);
    }
}
