//! Argon2id: the RFC 9106 §5.3 vector, differential tests against the `argon2` crate, and every rejection.

use pqkit::Error;
use pqkit::dispatch::Checked;
use pqkit::error::Expected;
use pqkit::kdf::argon2::{Argon2id, Backend, Params};

/// RFC 9106 §5.3: m = 32 KiB, t = 3, p = 4, tag 32 bytes, password 32 x 0x01, salt 16 x 0x02,
/// secret 8 x 0x03, associated data 12 x 0x04.
#[test]
fn rfc9106_argon2id_vector() {
    let params = Params::new(32, 3, 4).unwrap();
    let mut tag = [0u8; 32];
    Argon2id::new(params).hash_with(&[1u8; 32], &[2u8; 16], &[3u8; 8], &[4u8; 12], &mut tag).unwrap();
    assert_eq!(hex::encode(tag), "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659");
}

#[allow(clippy::too_many_arguments)]
fn reference(m: u32, t: u32, p: u32, pwd: &[u8], salt: &[u8], secret: &[u8], ad: &[u8], len: usize) -> Vec<u8> {
    let params = argon2::ParamsBuilder::new()
        .m_cost(m)
        .t_cost(t)
        .p_cost(p)
        .data(argon2::AssociatedData::new(ad).unwrap())
        .output_len(len)
        .build()
        .unwrap();
    let a = if secret.is_empty() {
        argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
    } else {
        argon2::Argon2::new_with_secret(secret, argon2::Algorithm::Argon2id, argon2::Version::V0x13, params).unwrap()
    };
    let mut out = vec![0u8; len];
    a.hash_password_into(pwd, salt, &mut out).unwrap();
    out
}

#[test]
fn matches_argon2_crate_on_small_parameters() {
    // (m KiB, t, p, output length): covers one and several lanes, memory not a multiple of 4p, several
    // passes, outputs shorter and longer than 64 bytes (H' chaining), and more than 128 blocks per segment
    // (several address blocks).
    let cases = [
        (8, 1, 1, 32),
        (16, 2, 1, 4),
        (33, 3, 4, 64),
        (64, 1, 2, 65),
        (100, 2, 3, 100),
        (600, 1, 1, 32),
        (1024, 2, 2, 129),
        (2048, 1, 4, 32),
        (3000, 2, 3, 48),
    ];
    for (i, &(m, t, p, len)) in cases.iter().enumerate() {
        let pwd = format!("password {i}");
        let salt = [i as u8 + 0x40; 16];
        let secret: &[u8] = if i % 2 == 0 { b"" } else { b"a secret key" };
        let ad: &[u8] = if i % 3 == 0 { b"" } else { b"associated" };
        let mut out = vec![0u8; len];
        Argon2id::new(Params::new(m, t, p).unwrap()).hash_with(pwd.as_bytes(), &salt, secret, ad, &mut out).unwrap();
        assert_eq!(out, reference(m, t, p, pwd.as_bytes(), &salt, secret, ad, len), "case {i}: m={m} t={t} p={p}");
    }
}

#[test]
fn hash_is_hash_with_empty_secret_and_ad() {
    let a = Argon2id::new(Params::new(16, 1, 1).unwrap());
    let (mut x, mut y) = ([0u8; 32], [0u8; 32]);
    a.hash(b"pw", b"saltsalt", &mut x).unwrap();
    a.hash_with(b"pw", b"saltsalt", b"", b"", &mut y).unwrap();
    assert_eq!(x, y);
    a.hash(b"pw", b"saltsalu", &mut y).unwrap();
    assert_ne!(x, y);
}

#[test]
fn rejects_bad_parameters() {
    let inv = |reason| Err(Error::InvalidParameter { algorithm: "Argon2id", reason });
    assert_eq!(Params::new(8, 1, 0), inv("parallelism must be 1 to 2^24 - 1 lanes"));
    assert_eq!(Params::new(u32::MAX, 1, 1 << 24), inv("parallelism must be 1 to 2^24 - 1 lanes"));
    assert_eq!(Params::new(8, 0, 1), inv("the number of passes must be at least 1"));
    assert_eq!(Params::new(7, 1, 1), inv("memory must be at least 8 KiB per lane"));
    assert_eq!(Params::new(31, 1, 4), inv("memory must be at least 8 KiB per lane"));
    let p = Params::new(32, 1, 4).unwrap();
    assert_eq!((p.m_cost(), p.t_cost(), p.p_cost()), (32, 1, 4));

    let a = Argon2id::new(Params::new(8, 1, 1).unwrap());
    let mut out = [0u8; 32];
    assert_eq!(
        a.hash(b"pw", b"short", &mut out),
        Err(Error::InvalidLength { algorithm: "Argon2id", field: "salt", expected: Expected::AtLeast(8), actual: 5 })
    );
    assert_eq!(
        a.hash(b"pw", b"saltsalt", &mut out[..3]),
        Err(Error::InvalidLength { algorithm: "Argon2id", field: "output", expected: Expected::AtLeast(4), actual: 3 })
    );
}

#[test]
fn unallocatable_memory_is_an_error_not_an_abort() {
    // 4 TiB: more than this machine can reserve.
    let a = Argon2id::new(Params::new(u32::MAX, 1, 1).unwrap());
    let mut out = [0u8; 32];
    let r = a.hash(b"pw", b"saltsalt", &mut out);
    assert_eq!(
        r,
        Err(Error::InvalidParameter { algorithm: "Argon2id", reason: "cannot allocate the requested memory" })
    );
}

/// Every backend of `G` (portable, AVX2) against the `argon2` crate: one and several lanes, one and several
/// passes, threaded and not.
#[test]
fn every_backend_matches_argon2_crate() {
    let backends: Vec<Checked<Backend>> = Backend::available().collect();
    assert_eq!(backends[0], Backend::Soft);
    for &(m, t, p) in &[(8u32, 1u32, 1u32), (64, 3, 1), (96, 2, 3), (1024, 2, 2)] {
        let want = reference(m, t, p, b"pwd", &[7u8; 16], b"k", b"ad", 32);
        for &b in &backends {
            let mut out = [0u8; 32];
            Argon2id::with_backend(Params::new(m, t, p).unwrap(), b)
                .hash_with(b"pwd", &[7u8; 16], b"k", b"ad", &mut out)
                .unwrap();
            assert_eq!(out.to_vec(), want, "{b:?} m={m} t={t} p={p}");
        }
    }
}

/// A backend asked for by name is checked: one this CPU (under the `PQKIT_CPU` cap) lacks a feature for is an
/// error naming what is missing, never a silent fallback; one it has runs and gives RFC 9106's answer.
#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    for b in [Backend::Soft, Backend::Avx2] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has, "{b:?}");
                assert_eq!(checked, b);
                let mut tag = [0u8; 32];
                Argon2id::with_backend(Params::new(32, 3, 4).unwrap(), checked)
                    .hash_with(&[1u8; 32], &[2u8; 16], &[3u8; 8], &[4u8; 12], &mut tag)
                    .unwrap();
                assert_eq!(hex::encode(tag), "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659");
            }
            Err(Error::BackendUnavailable { algorithm: "Argon2", backend, missing }) => {
                assert!(!has, "{b:?}");
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty() && b.required().has(missing));
                assert!(pqkit::cpu::features().intersect(missing).is_empty());
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
        assert_eq!(b.is_available(), has);
        assert_eq!(Backend::available().any(|c| c == b), has, "{b:?}");
    }
    assert_eq!(Backend::detect(), Backend::available().last().unwrap());
}
