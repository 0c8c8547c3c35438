//! AES block cipher: FIPS 197 Appendix C vectors and cross-backend agreement, for every backend.

use pqkit::Error;
use pqkit::aes::{Aes128, Aes256, Backend};
use pqkit::error::Expected;
use rand::{Rng, RngExt, SeedableRng};

fn h(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

const PT: &str = "00112233445566778899aabbccddeeff";

#[test]
fn fips197_appendix_c_every_backend() {
    let k128 = h("000102030405060708090a0b0c0d0e0f");
    let k256 = h("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    let ct128 = h("69c4e0d86a7b0430d8cdb78070b4c55a");
    let ct256 = h("8ea2b7ca516745bfeafc49904b496089");
    let mut n = 0;
    for b in Backend::available() {
        let a = Aes128::new_with_backend(&k128, b).unwrap();
        let mut blk: [u8; 16] = h(PT).try_into().unwrap();
        a.encrypt_block(&mut blk);
        assert_eq!(blk.as_slice(), ct128, "AES-128 encrypt {b:?}");
        a.decrypt_block(&mut blk);
        assert_eq!(blk.as_slice(), h(PT), "AES-128 decrypt {b:?}");

        let a = Aes256::new_with_backend(&k256, b).unwrap();
        let mut blk: [u8; 16] = h(PT).try_into().unwrap();
        a.encrypt_block(&mut blk);
        assert_eq!(blk.as_slice(), ct256, "AES-256 encrypt {b:?}");
        a.decrypt_block(&mut blk);
        assert_eq!(blk.as_slice(), h(PT), "AES-256 decrypt {b:?}");
        n += 1;
    }
    assert!(n >= 1);
}

#[test]
fn backends_agree_with_reference_on_random_keys() {
    use aes_gcm::aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
    let mut rng = rand::rngs::StdRng::seed_from_u64(197);
    for _ in 0..200 {
        let mut k16 = [0u8; 16];
        let mut k32 = [0u8; 32];
        let mut blk = [0u8; 16];
        rng.fill_bytes(&mut k16);
        rng.fill_bytes(&mut k32);
        rng.fill_bytes(&mut blk);
        let r128 = aes_gcm::aes::Aes128::new_from_slice(&k16).unwrap();
        let r256 = aes_gcm::aes::Aes256::new_from_slice(&k32).unwrap();
        let mut e128 = blk.into();
        r128.encrypt_block(&mut e128);
        let mut e256 = blk.into();
        r256.encrypt_block(&mut e256);
        let mut d128 = blk.into();
        r128.decrypt_block(&mut d128);
        for b in Backend::available() {
            let a = Aes128::new_with_backend(&k16, b).unwrap();
            let mut x = blk;
            a.encrypt_block(&mut x);
            assert_eq!(x.as_slice(), e128.as_slice(), "{b:?}");
            let mut x = blk;
            a.decrypt_block(&mut x);
            assert_eq!(x.as_slice(), d128.as_slice(), "{b:?}");
            let a = Aes256::new_with_backend(&k32, b).unwrap();
            let mut x = blk;
            a.encrypt_block(&mut x);
            assert_eq!(x.as_slice(), e256.as_slice(), "{b:?}");
            a.decrypt_block(&mut x);
            assert_eq!(x, blk, "{b:?}");
        }
    }
}

#[test]
fn wrong_key_lengths() {
    for len in [0usize, 15, 17, 24, 32] {
        let e = Aes128::new(&vec![0u8; len]).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidLength { algorithm: "AES-128", field: "key", expected: Expected::Exactly(16), actual: len }
        );
    }
    for len in [0usize, 16, 24, 31, 33] {
        let e = Aes256::new(&vec![0u8; len]).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidLength { algorithm: "AES-256", field: "key", expected: Expected::Exactly(32), actual: len }
        );
    }
}

#[test]
fn debug_hides_key() {
    let a = Aes128::new(&[0x41; 16]).unwrap();
    assert_eq!(format!("{a:?}"), "Aes128 { .. }");
}

#[test]
fn detect_is_available() {
    assert!(Backend::detect().get().is_available());
    assert!(Backend::available().any(|b| b == Backend::Soft));
    assert!(Backend::available().any(|b| b == Backend::detect()));
    // What std detects, narrowed by the PQKIT_CPU cap in force.
    #[cfg(target_arch = "x86_64")]
    {
        use pqkit::cpu::Cap;
        use std::arch::is_x86_feature_detected as d;
        let cap = pqkit::cpu::cap();
        let ni = d!("aes") && d!("pclmulqdq") && d!("ssse3") && d!("sse4.1") && cap != Cap::Portable;
        // VAES and VPCLMULQDQ on ymm: kept by the avx2 cap (AMD Zen 3 has them without AVX-512).
        let vaes256 = ni && d!("avx") && d!("avx2") && d!("vaes") && d!("vpclmulqdq");
        let vaes = ni
            && d!("avx")
            && d!("avx2")
            && d!("avx512f")
            && d!("avx512bw")
            && d!("avx512vl")
            && d!("vaes")
            && d!("vpclmulqdq")
            && matches!(cap, Cap::Avx512 | Cap::Native);
        assert_eq!(Backend::AesNi.is_available(), ni);
        assert_eq!(Backend::Vaes256.is_available(), vaes256);
        assert_eq!(Backend::Vaes.is_available(), vaes);
        let best = if vaes {
            Backend::Vaes
        } else if vaes256 {
            Backend::Vaes256
        } else if ni {
            Backend::AesNi
        } else {
            Backend::Soft
        };
        assert_eq!(Backend::detect(), best);
    }
    let _ = rand::rng().random::<u8>();
}

#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    for b in [Backend::Soft, Backend::AesNi, Backend::Vaes256, Backend::Vaes] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has, "{b:?}");
                // A forced backend is used as given, never replaced.
                assert_eq!(Aes128::new_with_backend(&[1; 16], checked).unwrap().backend(), b);
                assert_eq!(Aes256::new_with_backend(&[1; 32], checked).unwrap().backend(), b);
            }
            Err(Error::BackendUnavailable { algorithm: "AES", backend, missing }) => {
                assert!(!has, "{b:?}");
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty() && !pqkit::cpu::features().has(missing));
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
    }
    // The VAES backend also runs the AES-NI single-block and GHASH code, so its features include AES-NI's.
    assert!(Backend::Vaes.required().has(Backend::AesNi.required()));
    #[cfg(target_arch = "x86_64")]
    {
        use pqkit::cpu::Features as F;
        assert_eq!(Backend::AesNi.required(), F::AES | F::PCLMULQDQ | F::SSSE3 | F::SSE41);
        assert!(
            Backend::Vaes
                .required()
                .has(F::AVX | F::AVX2 | F::AVX512F | F::AVX512BW | F::AVX512VL | F::VAES | F::VPCLMULQDQ)
        );
    }
}
