//! BLAKE2: RFC 7693 appendix A/B ("abc"), keyed answers from the BLAKE2 reference KAT (key 00..3f / 00..1f,
//! message 00..n-1, full output), parameter-block answers with salt/personalization/short output,
//! differential tests vs RustCrypto `blake2` on every backend, and the rejection paths.

use blake2::digest::{Mac, Update, VariableOutput};
use pqkit::Error;
use pqkit::dispatch::Checked;
use pqkit::error::Expected;
use pqkit::hash::Hasher;
use pqkit::hash::blake2::{Backend, Blake2b, Blake2b512, Blake2s, Blake2s256};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};

fn backends() -> Vec<Checked<Backend>> {
    let v: Vec<Checked<Backend>> = Backend::available().collect();
    assert_eq!(v[0], Backend::Soft);
    v
}

fn h(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

const KAT_B: [(usize, &str); 7] = [
    (
        0,
        "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568",
    ),
    (
        1,
        "961f6dd1e4dd30f63901690c512e78e4b45e4742ed197c3c5e45c549fd25f2e4187b0bc9fe30492b16b0d0bc4ef9b0f34c7003fac09a5ef1532e69430234cebd",
    ),
    (
        2,
        "da2cfbe2d8409a0f38026113884f84b50156371ae304c4430173d08a99d9fb1b983164a3770706d537f49e0c916d9f32b95cc37a95b99d857436f0232c88a965",
    ),
    (
        127,
        "76d2d819c92bce55fa8e092ab1bf9b9eab237a25267986cacf2b8ee14d214d730dc9a5aa2d7b596e86a1fd8fa0804c77402d2fcd45083688b218b1cdfa0dcbcb",
    ),
    (
        128,
        "72065ee4dd91c2d8509fa1fc28a37c7fc9fa7d5b3f8ad3d0d7a25626b57b1b44788d4caf806290425f9890a3a2a35a905ab4b37acfd0da6e4517b2525c9651e4",
    ),
    (
        129,
        "64475dfe7600d7171bea0b394e27c9b00d8e74dd1e416a79473682ad3dfdbb706631558055cfc8a40e07bd015a4540dcdea15883cbbf31412df1de1cd4152b91",
    ),
    (
        255,
        "142709d62e28fcccd0af97fad0f8465b971e82201dc51070faa0372aa43e92484be1c1e73ba10906d5d1853db6a4106e0a7bf9800d373d6dee2d46d62ef2a461",
    ),
];
const KAT_S: [(usize, &str); 7] = [
    (0, "48a8997da407876b3d79c0d92325ad3b89cbb754d86ab71aee047ad345fd2c49"),
    (1, "40d15fee7c328830166ac3f918650f807e7e01e177258cdc0a39b11f598066f1"),
    (2, "6bb71300644cd3991b26ccd4d274acd1adeab8b1d7914546c1198bbe9fc9d803"),
    (63, "c65382513f07460da39833cb666c5ed82e61b9e998f4b0c4287cee56c3cc9bcd"),
    (64, "8975b0577fd35566d750b362b0897a26c399136df07bababbde6203ff2954ed4"),
    (65, "21fe0ceb0052be7fb0f004187cacd7de67fa6eb0938d927677f2398c132317a8"),
    (255, "3fb735061abc519dfe979e54c1ee5bfad0a9d858b3315bad34bde999efd724dd"),
];

#[test]
fn rfc7693_abc() {
    for b in backends() {
        let mut x = Blake2b512::with_backend(b);
        x.update(b"abc");
        assert_eq!(
            hex::encode(x.finalize()),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
        );
        let mut x = Blake2s256::with_backend(b);
        x.update(b"abc");
        assert_eq!(hex::encode(x.finalize()), "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982");
    }
    assert_eq!(<Blake2s256 as Hasher>::digest(b"abc"), Blake2s256::digest(b"abc"));
}

#[test]
fn reference_keyed_kat() {
    let kb: Vec<u8> = (0..64).collect();
    let ks: Vec<u8> = (0..32).collect();
    for b in backends() {
        for (n, want) in KAT_B {
            let msg: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let mut x = Blake2b::with_params_backend(b, &kb, &[], &[], 64).unwrap();
            x.update(&msg);
            let mut out = [0u8; 64];
            x.finalize_into(&mut out).unwrap();
            assert_eq!(out.to_vec(), h(want), "{b:?} BLAKE2b keyed n={n}");
        }
        for (n, want) in KAT_S {
            let msg: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let mut x = Blake2s::with_params_backend(b, &ks, &[], &[], 32).unwrap();
            x.update(&msg);
            let mut out = [0u8; 32];
            x.finalize_into(&mut out).unwrap();
            assert_eq!(out.to_vec(), h(want), "{b:?} BLAKE2s keyed n={n}");
        }
        // Key, salt, personalization and a 20-byte output together.
        let mut x = Blake2b::with_params_backend(b, b"kkkkkkkkkk", b"salt", b"me", 20).unwrap();
        x.update(b"hello");
        assert_eq!(x.finalize_vec(), h("b7d3d6400f15aa12d7240c1b7728838f1286c7d9"));
        let mut x = Blake2s::with_params_backend(b, b"kkkkkkkkkk", b"salt", b"me", 20).unwrap();
        x.update(b"hello");
        assert_eq!(x.finalize_vec(), h("2a426b0f9d2afa2351c0869824839f6a70f32dc9"));
    }
}

fn split_update<F: FnMut(&[u8])>(r: &mut StdRng, data: &[u8], mut f: F) {
    let mut rest = data;
    while !rest.is_empty() {
        let n = r.random_range(0..=rest.len().min(300));
        f(&rest[..n]);
        rest = &rest[n..];
    }
}

#[test]
fn differential_vs_rustcrypto_every_backend() {
    let mut r = StdRng::seed_from_u64(0xb2);
    for b in backends() {
        let mut lens: Vec<usize> = vec![0, 1, 63, 64, 65, 127, 128, 129, 256, 10_000];
        lens.extend((0..60).map(|_| r.random_range(0..=10_000)));
        for &n in &lens {
            let mut data = vec![0u8; n];
            r.fill_bytes(&mut data);
            // Unkeyed, random output length.
            let ob = r.random_range(1..=64);
            let mut t = blake2::Blake2bVar::new(ob).unwrap();
            t.update(&data);
            let mut want = vec![0u8; ob];
            t.finalize_variable(&mut want).unwrap();
            let mut x = Blake2b::with_params_backend(b, &[], &[], &[], ob).unwrap();
            split_update(&mut r, &data, |c| {
                x.update(c);
            });
            assert_eq!(x.finalize_vec(), want, "{b:?} BLAKE2b-{} len {n}", ob * 8);
            let os = r.random_range(1..=32);
            let mut t = blake2::Blake2sVar::new(os).unwrap();
            t.update(&data);
            let mut want = vec![0u8; os];
            t.finalize_variable(&mut want).unwrap();
            let mut x = Blake2s::with_params_backend(b, &[], &[], &[], os).unwrap();
            split_update(&mut r, &data, |c| {
                x.update(c);
            });
            assert_eq!(x.finalize_vec(), want, "{b:?} BLAKE2s-{} len {n}", os * 8);

            // The fixed-length one-shot digests (their own path: no hasher, whole blocks straight from `data`).
            let want = <blake2::Blake2b512 as blake2::Digest>::digest(&data);
            assert_eq!(Blake2b512::digest_with_backend(b, &data)[..], want[..], "{b:?} one-shot BLAKE2b len {n}");
            let want = <blake2::Blake2s256 as blake2::Digest>::digest(&data);
            assert_eq!(Blake2s256::digest_with_backend(b, &data)[..], want[..], "{b:?} one-shot BLAKE2s len {n}");

            // Keyed with salt and personalization, full length.
            let mut key = vec![0u8; r.random_range(1..=64)];
            let mut salt = [0u8; 16];
            let mut pers = [0u8; 16];
            r.fill_bytes(&mut key);
            r.fill_bytes(&mut salt);
            r.fill_bytes(&mut pers);
            let mut t = blake2::Blake2bMac512::new_with_salt_and_personal(&key, &salt, &pers).unwrap();
            Mac::update(&mut t, &data);
            let want = t.finalize().into_bytes().to_vec();
            let mut x = Blake2b::with_params_backend(b, &key, &salt, &pers, 64).unwrap();
            x.update(&data);
            let y = x.clone();
            assert_eq!(x.finalize_vec(), want, "{b:?} keyed BLAKE2b len {n}");
            let mut y = y;
            y.reset();
            y.update(&data);
            assert_eq!(y.finalize_vec(), want, "{b:?} keyed BLAKE2b after reset");
            let key = &key[..key.len().min(32)];
            let mut t = blake2::Blake2sMac256::new_with_salt_and_personal(key, &salt[..8], &pers[..8]).unwrap();
            Mac::update(&mut t, &data);
            let want = t.finalize().into_bytes().to_vec();
            let mut x = Blake2s::with_params_backend(b, key, &salt[..8], &pers[..8], 32).unwrap();
            x.update(&data);
            assert_eq!(x.finalize_vec(), want, "{b:?} keyed BLAKE2s len {n}");
        }
    }
}

#[test]
fn rejections() {
    let e = |r: Result<Blake2b, Error>| r.unwrap_err();
    assert!(matches!(e(Blake2b::new(0)), Error::InvalidParameter { algorithm: "BLAKE2b", .. }));
    assert!(matches!(e(Blake2b::new(65)), Error::InvalidParameter { algorithm: "BLAKE2b", .. }));
    assert!(matches!(Blake2s::new(33).unwrap_err(), Error::InvalidParameter { algorithm: "BLAKE2s", .. }));
    assert_eq!(
        e(Blake2b::new_keyed(&[0u8; 65], 64)),
        Error::InvalidLength { algorithm: "BLAKE2b", field: "key", expected: Expected::AtMost(64), actual: 65 }
    );
    assert_eq!(
        e(Blake2b::new_keyed(&[], 64)),
        Error::InvalidLength { algorithm: "BLAKE2b", field: "key", expected: Expected::AtLeast(1), actual: 0 }
    );
    assert_eq!(
        Blake2s::with_params(&[], &[0u8; 9], &[], 32).unwrap_err(),
        Error::InvalidLength { algorithm: "BLAKE2s", field: "salt", expected: Expected::AtMost(8), actual: 9 }
    );
    assert_eq!(
        e(Blake2b::with_params(&[], &[], &[0u8; 17], 32)),
        Error::InvalidLength {
            algorithm: "BLAKE2b",
            field: "personalization",
            expected: Expected::AtMost(16),
            actual: 17
        }
    );
    let x = Blake2b::new(32).unwrap();
    let mut out = [0u8; 64];
    assert_eq!(x.finalize_into(&mut out), Err(Error::length("BLAKE2b", "output", 32, 64)));
    let k = Blake2s::new_keyed(b"secret key bytes", 16).unwrap();
    let dbg = format!("{k:?}");
    assert!(!dbg.contains("secret") && dbg.contains("Blake2s"), "{dbg}");
}

/// A backend asked for by name is checked: one this CPU (under the `PQKIT_CPU` cap) lacks a feature for is an
/// error naming what is missing, never a silent fallback; one it has runs and gives RFC 7693's answer.
#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    let abc_b = "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923";
    let abc_s = "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982";
    for b in [Backend::Soft, Backend::Avx2, Backend::Avx512] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has, "{b:?}");
                assert_eq!(checked, b);
                let mut x = Blake2b512::with_backend(checked);
                x.update(b"abc");
                assert_eq!(hex::encode(x.finalize()), abc_b, "{b:?}");
                let mut x = Blake2s256::with_backend(checked);
                x.update(b"abc");
                assert_eq!(hex::encode(x.finalize()), abc_s, "{b:?}");
            }
            Err(Error::BackendUnavailable { algorithm: "BLAKE2", backend, missing }) => {
                assert!(!has, "{b:?}");
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty() && b.required().has(missing));
                assert!(pqkit::cpu::features().intersect(missing).is_empty());
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
        assert_eq!(b.is_available(), has);
        assert_eq!(backends().iter().any(|c| *c == b), has, "{b:?}");
    }
    // The AVX-512 backend runs the AVX2 BLAKE2b, so it needs everything the AVX2 one does.
    assert!(Backend::Avx512.required().has(Backend::Avx2.required()));
    // detect() is the last available backend not avoided on this microarchitecture (pqkit::dispatch).
    use pqkit::dispatch::BackendSet;
    let u = pqkit::cpu::uarch();
    let want = backends().into_iter().rev().find(|c| !c.get().avoided_on(u)).unwrap();
    assert_eq!(Backend::detect(), want);
}
