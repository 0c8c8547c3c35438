//! The `Bmi2` backend: the portable field and group code of this curve compiled with BMI2 enabled.
//!
//! The field multiplies 64-bit limbs into `u128` products; with BMI2 the compiler forms them with `mulx`,
//! which names its two destination registers and leaves the flags alone, so the products and the carry chains
//! that sum them need fewer moves and no flag spills. The scalar multiplications are the ones of
//! [`super::group`], instantiated here inside `#[target_feature(enable = "bmi2")]` functions; their field and
//! point operations are `#[inline(always)]`, so the whole computation is compiled for BMI2. The code, its
//! constant-time structure (no branch or index on secrets) and its results are the portable backend's.
//!
//! ## Safety
//! Each entry point asserts that its `Checked<Backend>` covers `Backend::Bmi2` (the one dispatch mechanism,
//! [`crate::dispatch`]) before calling the BMI2 code, so that code only runs on a CPU with BMI2.
#![allow(unsafe_code)]

use super::Backend;
use super::field::Mask;
use super::group::{self, Affine, Jac};
use super::scalar::Scalar;
use crate::dispatch::Checked;

/// `k·G` in affine coordinates and the mask of the identity (see [`group::mul_base`], [`group::Proj::to_affine`]).
pub(super) fn mul_base(backend: Checked<Backend>, k: &Scalar) -> (Affine, Mask) {
    assert!(backend.covers(Backend::Bmi2));
    // SAFETY: `backend` is a `Checked` (crate::dispatch) covering Backend::Bmi2, so the CPU has BMI2.
    unsafe { mul_base_bmi2(k) }
}

#[target_feature(enable = "bmi2")]
fn mul_base_bmi2(k: &Scalar) -> (Affine, Mask) {
    group::mul_base(k).to_affine()
}

/// `k·P` in affine coordinates and the mask of the identity (see [`group::mul_ct`]).
pub(super) fn mul(backend: Checked<Backend>, k: &Scalar, p: &Affine) -> (Affine, Mask) {
    assert!(backend.covers(Backend::Bmi2));
    // SAFETY: as in `mul_base`.
    unsafe { mul_bmi2(k, p) }
}

#[target_feature(enable = "bmi2")]
fn mul_bmi2(k: &Scalar, p: &Affine) -> (Affine, Mask) {
    group::mul_ct(k, p).to_affine()
}

/// Whether `u1·G + u2·P` has an x-coordinate equal to `r` modulo n (variable time, public inputs; see
/// [`group::double_mul_vartime`]).
pub(super) fn verify_vartime(backend: Checked<Backend>, p: &Affine, u1: &Scalar, u2: &Scalar, r: &Scalar) -> bool {
    assert!(backend.covers(Backend::Bmi2));
    // SAFETY: as in `mul_base`.
    unsafe { verify_bmi2(p, u1, u2, r) }
}

#[target_feature(enable = "bmi2")]
fn verify_bmi2(p: &Affine, u1: &Scalar, u2: &Scalar, r: &Scalar) -> bool {
    let j: Jac = group::double_mul_vartime(u1, u2, p);
    j.x_equals_mod_n_vartime(r)
}
