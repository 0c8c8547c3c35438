//! SHA-2: FIPS 180-4 example values (empty, "abc", the 448-bit and 896-bit two-block messages, one million
//! 'a'), and differential tests against RustCrypto `sha2` on every backend with random lengths and splits.

use pqkit::dispatch::Checked;
use pqkit::hash::Hasher;
use pqkit::hash::sha2::{Backend, Sha224, Sha256, Sha384, Sha512, Sha512_224, Sha512_256};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use sha2::Digest;

fn backends() -> Vec<Checked<Backend>> {
    let v: Vec<Checked<Backend>> = Backend::available().collect();
    assert_eq!(v[0], Backend::Soft);
    v
}

fn msgs() -> Vec<Vec<u8>> {
    vec![
        b"".to_vec(),
        b"abc".to_vec(),
        b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".to_vec(),
        b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".to_vec(),
        vec![b'a'; 1_000_000],
    ]
}

// FIPS 180-4 / NIST example values for the messages above.
const KAT: [(&str, [&str; 5]); 6] = [
    (
        "Sha224",
        [
            "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f",
            "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7",
            "75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525",
            "c97ca9a559850ce97a04a96def6d99a9e0e0e2ab14e6b8df265fc0b3",
            "20794655980c91d8bbb4c1ea97618a4bf03f42581948b2ee4ee7ad67",
        ],
    ),
    (
        "Sha256",
        [
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
        ],
    ),
    (
        "Sha384",
        [
            "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b",
            "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
            "3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05abfe8f450de5f36bc6b0455a8520bc4e6f5fe95b1fe3c8452b",
            "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039",
            "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b07b8b3dc38ecc4ebae97ddd87f3d8985",
        ],
    ),
    (
        "Sha512",
        [
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c33596fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445",
            "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
            "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b",
        ],
    ),
    (
        "Sha512_224",
        [
            "6ed0dd02806fa89e25de060c19d3ac86cabb87d6a0ddd05c333b84f4",
            "4634270f707b6a54daae7530460842e20e37ed265ceee9a43e8924aa",
            "e5302d6d54bb242275d1e7622d68df6eb02dedd13f564c13dbda2174",
            "23fec5bb94d60b23308192640b0c453335d664734fe40e7268674af9",
            "37ab331d76f0d36de422bd0edeb22a28accd487b7a8453ae965dd287",
        ],
    ),
    (
        "Sha512_256",
        [
            "c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a",
            "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23",
            "bde8e1f9f19bb9fd3406c90ec6bc47bd36d8ada9f11880dbc8a22a7078b6a461",
            "3928e184fb8690f840da3988121d31be65cb9d3ef83ee6146feac861e19b563a",
            "9a59a052930187a97038cae692f30708aa6491923ef5194394dc68d56c74fb21",
        ],
    ),
];

fn ours<H: Hasher>(b: Checked<Backend>, mk: fn(Checked<Backend>) -> H, data: &[u8]) -> Vec<u8> {
    let mut x = mk(b);
    // The million-a case goes through in uneven pieces, as the NIST example is usually run.
    for c in data.chunks(999) {
        Hasher::update(&mut x, c);
    }
    x.finalize().as_ref().to_vec()
}

#[test]
fn fips180_known_answers_every_backend() {
    let m = msgs();
    for b in backends() {
        for (name, exp) in KAT.iter() {
            for (i, msg) in m.iter().enumerate() {
                let got = match *name {
                    "Sha224" => ours(b, Sha224::with_backend, msg),
                    "Sha256" => ours(b, Sha256::with_backend, msg),
                    "Sha384" => ours(b, Sha384::with_backend, msg),
                    "Sha512" => ours(b, Sha512::with_backend, msg),
                    "Sha512_224" => ours(b, Sha512_224::with_backend, msg),
                    _ => ours(b, Sha512_256::with_backend, msg),
                };
                assert_eq!(hex::encode(got), exp[i], "{b:?} {name} message #{i}");
            }
        }
    }
    assert_eq!(hex::encode(Sha256::digest(b"abc")), KAT[1].1[1]);
}

fn split_update<F: FnMut(&[u8])>(r: &mut StdRng, data: &[u8], mut f: F) {
    let mut rest = data;
    while !rest.is_empty() {
        let n = r.random_range(0..=rest.len().min(700));
        f(&rest[..n]);
        rest = &rest[n..];
    }
}

macro_rules! diff {
    ($r:expr, $b:expr, $ours:ident, $theirs:ty, $data:expr) => {{
        let data: &[u8] = $data;
        let want = <$theirs>::digest(data).to_vec();
        let mut x = $ours::with_backend($b);
        x.update(data);
        assert_eq!(x.clone().finalize().to_vec(), want, "{:?} {} len {}", $b, stringify!($ours), data.len());
        let mut y = $ours::with_backend($b);
        split_update($r, data, |c| {
            y.update(c);
        });
        assert_eq!(y.finalize().to_vec(), want, "{:?} {} split len {}", $b, stringify!($ours), data.len());
        x.reset();
        x.update(data);
        assert_eq!(x.finalize().to_vec(), want);
    }};
}

#[test]
fn differential_vs_rustcrypto_every_backend() {
    let mut r = StdRng::seed_from_u64(0x5a2);
    for b in backends() {
        let mut lens: Vec<usize> = vec![0, 1, 55, 56, 57, 63, 64, 65, 111, 112, 113, 127, 128, 129, 255, 256, 10_000];
        lens.extend((0..80).map(|_| r.random_range(0..=10_000)));
        for &n in &lens {
            let mut data = vec![0u8; n];
            r.fill_bytes(&mut data);
            diff!(&mut r, b, Sha224, sha2::Sha224, &data);
            diff!(&mut r, b, Sha256, sha2::Sha256, &data);
            diff!(&mut r, b, Sha384, sha2::Sha384, &data);
            diff!(&mut r, b, Sha512, sha2::Sha512, &data);
            diff!(&mut r, b, Sha512_224, sha2::Sha512_224, &data);
            diff!(&mut r, b, Sha512_256, sha2::Sha512_256, &data);
        }
    }
}

#[test]
fn io_write_and_trait() {
    use std::io::Write;
    let mut x = Sha512::new();
    x.write_all(b"ab").unwrap();
    x.write_all(b"c").unwrap();
    assert_eq!(x.finalize(), Sha512::digest(b"abc"));
    assert_eq!(<Sha256 as Hasher>::OUTPUT_LEN, 32);
    assert_eq!(<Sha384 as Hasher>::BLOCK_LEN, 128);
    let mut out = [0u8; 33];
    assert_eq!(Sha256::new().finalize_into(&mut out), Err(pqkit::Error::length("SHA-256", "output", 32, 33)));
    assert_eq!(format!("{:?}", Sha256::new()), "Sha256 { .. }");
}

/// The one-shot `digest` path (blocks straight from the input, padding on the stack) against the incremental
/// one and RustCrypto, on every backend, for every length through the first three blocks (both padding
/// cases: tail fits in the last block or needs another) and a few longer ones.
#[test]
fn oneshot_matches_incremental_every_length_every_backend() {
    let mut r = StdRng::seed_from_u64(0x0e5);
    let mut data = vec![0u8; 3 * 128 + 2];
    r.fill_bytes(&mut data);
    let mut lens: Vec<usize> = (0..=data.len()).collect();
    lens.extend([1000, 1023, 1024, 1025, 4096 + 111]);
    let long = {
        let mut v = vec![0u8; 5000];
        r.fill_bytes(&mut v);
        v
    };
    macro_rules! one {
        ($b:expr, $ours:ident, $theirs:ty, $d:expr) => {{
            let d: &[u8] = $d;
            let want = <$theirs>::digest(d).to_vec();
            assert_eq!(
                $ours::digest_with_backend($b, d).to_vec(),
                want,
                "{:?} {} len {}",
                $b,
                stringify!($ours),
                d.len()
            );
            let mut inc = $ours::with_backend($b);
            inc.update(d);
            assert_eq!(inc.finalize().to_vec(), want);
        }};
    }
    for b in backends() {
        for &n in &lens {
            let d = if n <= data.len() { &data[..n] } else { &long[..n] };
            one!(b, Sha224, sha2::Sha224, d);
            one!(b, Sha256, sha2::Sha256, d);
            one!(b, Sha384, sha2::Sha384, d);
            one!(b, Sha512, sha2::Sha512, d);
            one!(b, Sha512_224, sha2::Sha512_224, d);
            one!(b, Sha512_256, sha2::Sha512_256, d);
        }
    }
    // The public `digest` and the trait's `digest` take the same path.
    assert_eq!(Sha512::digest(&long).to_vec(), sha2::Sha512::digest(&long).to_vec());
    assert_eq!(<Sha256 as Hasher>::digest(&long).to_vec(), sha2::Sha256::digest(&long).to_vec());
}

/// Finalizing where the buffered tail sits at every offset in the block (in-place padding, one or two
/// final compressions), reached by two updates at every split point.
#[test]
fn finalize_after_every_split_point() {
    let mut r = StdRng::seed_from_u64(0xf17);
    let mut data = vec![0u8; 2 * 128 + 5];
    r.fill_bytes(&mut data);
    for b in backends() {
        for n in [0usize, 55, 56, 64, 111, 112, 120, 128, 200, data.len()] {
            let d = &data[..n];
            let w256 = sha2::Sha256::digest(d).to_vec();
            let w512 = sha2::Sha512::digest(d).to_vec();
            for k in 0..=n {
                let mut x = Sha256::with_backend(b);
                x.update(&d[..k]).update(&d[k..]);
                assert_eq!(x.finalize().to_vec(), w256, "{b:?} SHA-256 len {n} split {k}");
                let mut y = Sha512::with_backend(b);
                y.update(&d[..k]).update(&d[k..]);
                assert_eq!(y.finalize().to_vec(), w512, "{b:?} SHA-512 len {n} split {k}");
            }
        }
    }
}

/// A backend asked for by name is checked: one this CPU (under the `PQKIT_CPU` cap) lacks a feature for is an
/// error naming what is missing, never a silent fallback; one it has runs and gives the standard's answer.
#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    for b in [Backend::Soft, Backend::Avx2, Backend::Avx2Zen5, Backend::ShaNi, Backend::ShaNiZen5, Backend::ShaNiAvx512]
    {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has, "{b:?}");
                assert_eq!(checked, b);
                assert_eq!(hex::encode(Sha256::digest_with_backend(checked, b"abc")), KAT[1].1[1], "{b:?}");
                assert_eq!(hex::encode(Sha512::digest_with_backend(checked, b"abc")), KAT[3].1[1], "{b:?}");
            }
            Err(pqkit::Error::BackendUnavailable { algorithm: "SHA-2", backend, missing }) => {
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
    // Every SIMD backend needs more than the portable one; SHA-NI needs the SHA extensions, and each faster
    // SHA-2 backend covers the slower ones (its SHA-512 path uses their code).
    use pqkit::cpu::Features;
    assert!(Backend::Soft.required().is_empty());
    assert!(Backend::ShaNi.required().has(Features::SHA | Features::SSE41 | Features::SSSE3));
    assert!(Backend::ShaNi.required().has(Backend::Avx2.required()));
    assert_eq!(Backend::Avx2Zen5.required(), Backend::Avx2.required());
    assert_eq!(Backend::ShaNiZen5.required(), Backend::ShaNi.required());
    assert!(Backend::ShaNiAvx512.required().has(Backend::ShaNi.required() | Features::AVX512F | Features::AVX512VL));
    // detect() is the last available backend not avoided on this microarchitecture (pqkit::dispatch).
    use pqkit::dispatch::BackendSet;
    let u = pqkit::cpu::uarch();
    let want = backends().into_iter().rev().find(|c| !c.get().avoided_on(u)).unwrap();
    assert_eq!(Backend::detect(), want);
}
