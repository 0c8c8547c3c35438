//! ML-DSA's ExpandMask window (the mask polynomials that a multi-way batch computes ahead for the next attempt
//! of the rejection loop): every backend against an ExpandMask written here over RustCrypto's SHAKE256, for the
//! consecutive κ the signer asks for and for out-of-order ones; and many deterministic signatures (so many
//! rejected attempts, each taking polynomials from the window) on every backend against the portable backend
//! and RustCrypto `ml-dsa`.

use pqkit::dispatch::Checked;
use pqkit::mldsa::{Backend, MlDsa44, MlDsa65, MlDsa87, Params, SigningKey, testing};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use sha3::digest::{ExtendableOutput, Update, XofReader};

const N: usize = 256;

fn backends() -> Vec<Checked<Backend>> {
    Backend::available().collect()
}

/// ExpandMask(ρ'', κ) for one index (FIPS 204 Algorithms 34 and 22): SHAKE256(ρ'' || le16(κ)), then
/// BitUnpack with b = γ1 (coefficient γ1 − value of each 18- or 20-bit little-endian field).
fn reference_mask(rho2: &[u8; 64], idx: u16, gamma1: i32) -> [i32; N] {
    let bits = if gamma1 == 1 << 17 { 18 } else { 20 };
    let mut h = sha3::Shake256::default();
    h.update(rho2);
    h.update(&idx.to_le_bytes());
    let mut buf = vec![0u8; 32 * bits];
    h.finalize_xof().read(&mut buf);
    let mut out = [0i32; N];
    for (i, o) in out.iter_mut().enumerate() {
        let mut v = 0u32;
        for k in 0..bits {
            let bit = i * bits + k;
            v |= u32::from((buf[bit / 8] >> (bit % 8)) & 1) << k;
        }
        *o = gamma1 - v as i32;
    }
    out
}

/// The κ sequence of a signer: 0, L, 2L, ... for `attempts` attempts, checked polynomial by polynomial.
#[test]
fn window_matches_reference_for_consecutive_attempts() {
    let mut rng = StdRng::seed_from_u64(0x6d61736b);
    for (l, gamma1) in [(4usize, 1i32 << 17), (5, 1 << 19), (7, 1 << 19)] {
        let mut rho2 = [0u8; 64];
        rng.fill_bytes(&mut rho2);
        // Start near the end of the κ range too, running past it: the index is le16(κ + r), mod 2^16.
        for start in [0u16, 1000, u16::MAX - 3 * l as u16] {
            let attempts = 11;
            let kappas: Vec<u16> = (0..attempts).map(|i| start.wrapping_add((i * l) as u16)).collect();
            let want: Vec<[i32; N]> =
                (0..attempts * l).map(|r| reference_mask(&rho2, start.wrapping_add(r as u16), gamma1)).collect();
            for b in backends() {
                let got = testing::expand_mask(b, &rho2, &kappas, l, gamma1);
                assert_eq!(got.len(), want.len());
                for (r, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(g == w, "{b:?} L = {l}: attempt {} polynomial {} (κ start {start})", r / l, r % l);
                }
            }
        }
    }
}

/// κ values that do not follow on from the previous call: a window computed ahead must not be handed out.
#[test]
fn window_is_not_used_out_of_order() {
    let mut rng = StdRng::seed_from_u64(0x6f6f6f);
    let mut rho2 = [0u8; 64];
    rng.fill_bytes(&mut rho2);
    for (l, gamma1) in [(4usize, 1i32 << 17), (5, 1 << 19), (7, 1 << 19)] {
        // Repeats, steps back, steps of one, and a jump over the window.
        let kappas = [0u16, 0, 3, 3 + l as u16, 1, 2 * l as u16 + 1, 100, 100 + l as u16, 100 + 3 * l as u16];
        for b in backends() {
            let got = testing::expand_mask(b, &rho2, &kappas, l, gamma1);
            for (i, &kappa) in kappas.iter().enumerate() {
                for r in 0..l {
                    let want = reference_mask(&rho2, kappa + r as u16, gamma1);
                    assert!(got[i * l + r] == want, "{b:?} L = {l}: call {i} (κ = {kappa}) polynomial {r}");
                }
            }
        }
    }
}

/// Deterministic signatures of many messages on every backend against the portable backend and RustCrypto.
/// With ~4-5 attempts per signature on average, this takes the rejection path hundreds of times.
fn many_signatures<P: Params, R: ml_dsa::MlDsaParams>(count: usize, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let soft = Backend::Soft.checked().unwrap();
    for _ in 0..count / 8 {
        let mut xi = [0u8; 32];
        rng.fill_bytes(&mut xi);
        let (sk_soft, _) = SigningKey::<P>::from_seed_with_backend(&xi, soft);
        let rsk = ml_dsa::SigningKey::<R>::from_seed(&xi.into());
        let keys: Vec<_> =
            backends().into_iter().map(|b| (b, SigningKey::<P>::from_seed_with_backend(&xi, b).0)).collect();
        for _ in 0..8 {
            let mut msg = vec![0u8; rng.random_range(0..=64)];
            rng.fill_bytes(&mut msg);
            let want = sk_soft.sign_deterministic(&msg, b"").unwrap();
            let rsig = rsk.expanded_key().sign_deterministic(&msg, b"").unwrap();
            assert_eq!(want.as_bytes(), &rsig.encode()[..], "{} portable vs RustCrypto", P::NAME);
            for (b, sk) in &keys {
                let sig = sk.sign_deterministic(&msg, b"").unwrap();
                assert_eq!(sig.as_bytes(), want.as_bytes(), "{} {b:?} vs portable", P::NAME);
            }
        }
    }
}

#[test]
fn many_signatures_mldsa44() {
    many_signatures::<MlDsa44, ml_dsa::MlDsa44>(48, 44);
}

#[test]
fn many_signatures_mldsa65() {
    many_signatures::<MlDsa65, ml_dsa::MlDsa65>(96, 65);
}

#[test]
fn many_signatures_mldsa87() {
    many_signatures::<MlDsa87, ml_dsa::MlDsa87>(48, 87);
}
