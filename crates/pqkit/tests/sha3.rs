//! SHA-3 / SHAKE: FIPS 202 known answers, differential tests against RustCrypto `sha3` on every backend,
//! incremental and XOF-reader splits, and multi-way Keccak lane-by-lane agreement.
#![allow(clippy::needless_range_loop)]

use pqkit::dispatch::Checked;
use pqkit::hash::Hasher;
use pqkit::hash::sha3::{
    Backend, Sha3_224, Sha3_256, Sha3_384, Sha3_512, Shake128, Shake256, ShakeX4, ShakeX8, f1600_x4_with, f1600_x8_with,
};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use sha3::Digest;
use sha3::digest::{ExtendableOutput, Update, XofReader};

fn h(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

fn backends() -> Vec<Checked<Backend>> {
    let v: Vec<Checked<Backend>> = Backend::available().collect();
    assert_eq!(v[0], Backend::Soft);
    v
}

fn rng() -> StdRng {
    StdRng::seed_from_u64(0x5ea3)
}

fn bytes(r: &mut StdRng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    r.fill_bytes(&mut v);
    v
}

// FIPS 202 example values (NIST "Cryptographic Standards and Guidelines: examples with intermediate values"):
// the empty message, "abc" and the 1600-bit message of 200 bytes 0xa3.
const MSGS: [&[u8]; 3] = [b"", b"abc", &[0xa3; 200]];

#[test]
fn fips202_sha3_known_answers() {
    let e224 = [
        "6b4e03423667dbb73b6e15454f0eb1abd4597f9a1b078e3f5b5a6bc7",
        "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf",
        "9376816aba503f72f96ce7eb65ac095deee3be4bf9bbc2a1cb7e11e0",
    ];
    let e256 = [
        "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a",
        "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
        "79f38adec5c20307a98ef76e8324afbfd46cfd81b22e3973c65fa1bd9de31787",
    ];
    let e384 = [
        "0c63a75b845e4f7d01107d852e4c2485c51a50aaaa94fc61995e71bbee983a2ac3713831264adb47fb6bd1e058d5f004",
        "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25",
        "1881de2ca7e41ef95dc4732b8f5f002b189cc1e42b74168ed1732649ce1dbcdd76197a31fd55ee989f2d7050dd473e8f",
    ];
    let e512 = [
        "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a615b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26",
        "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0",
        "e76dfad22084a8b1467fcf2ffa58361bec7628edf5f3fdc0e4805dc48caeeca81b7c13c30adf52a3659584739a2df46be589c51ca1a4a8416df6545a1ce8ba00",
    ];
    for b in backends() {
        for (i, m) in MSGS.iter().enumerate() {
            let mut x = Sha3_224::with_backend(b);
            x.update(m);
            assert_eq!(x.finalize().to_vec(), h(e224[i]), "{b:?} SHA3-224 #{i}");
            let mut x = Sha3_256::with_backend(b);
            x.update(m);
            assert_eq!(x.finalize().to_vec(), h(e256[i]), "{b:?} SHA3-256 #{i}");
            let mut x = Sha3_384::with_backend(b);
            x.update(m);
            assert_eq!(x.finalize().to_vec(), h(e384[i]), "{b:?} SHA3-384 #{i}");
            let mut x = Sha3_512::with_backend(b);
            x.update(m);
            assert_eq!(x.finalize().to_vec(), h(e512[i]), "{b:?} SHA3-512 #{i}");
        }
    }
    assert_eq!(Sha3_256::digest(b"abc").to_vec(), h(e256[1]));
    assert_eq!(<Sha3_512 as Hasher>::digest(b"abc").to_vec(), h(e512[1]));
}

#[test]
fn fips202_shake_known_answers() {
    let e128 = [
        "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26",
        "5881092dd818bf5cf8a3ddb793fbcba74097d5c526a6d35f97b83351940f2cc8",
        "131ab8d2b594946b9c81333f9bb6e0ce75c3b93104fa3469d3917457385da037",
    ];
    let e256 = [
        "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762fd75dc4ddd8c0f200cb05019d67b592f6fc821c49479ab48640292eacb3b7c4be",
        "483366601360a8771c6863080cc4114d8db44530f8f1e1ee4f94ea37e78b5739d5a15bef186a5386c75744c0527e1faa9f8726e462a12a4feb06bd8801e751e4",
        "cd8a920ed141aa0407a22d59288652e9d9f1a7ee0c1e7c1ca699424da84a904d2d700caae7396ece96604440577da4f3aa22aeb8857f961c4cd8e06f0ae6610b",
    ];
    for b in backends() {
        for (i, m) in MSGS.iter().enumerate() {
            let mut out = [0u8; 32];
            Shake128::with_backend(b).update(m).finalize_xof().read(&mut out);
            assert_eq!(out.to_vec(), h(e128[i]), "{b:?} SHAKE128 #{i}");
            let mut out = [0u8; 64];
            Shake256::with_backend(b).update(m).finalize_xof().read(&mut out);
            assert_eq!(out.to_vec(), h(e256[i]), "{b:?} SHAKE256 #{i}");
        }
    }
    let mut out = [0u8; 32];
    Shake128::digest_into(b"abc", &mut out);
    assert_eq!(out.to_vec(), h(e128[1]));
}

fn split_update<F: FnMut(&[u8])>(r: &mut StdRng, data: &[u8], mut f: F) {
    let mut rest = data;
    while !rest.is_empty() {
        let n = r.random_range(0..=rest.len().min(400));
        f(&rest[..n]);
        rest = &rest[n..];
    }
}

macro_rules! diff_fixed {
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
        // reset() returns to the fresh state.
        x.reset();
        x.update(data);
        assert_eq!(x.finalize().to_vec(), want);
    }};
}

#[test]
fn differential_vs_rustcrypto_every_backend() {
    let mut r = rng();
    for b in backends() {
        let mut lens: Vec<usize> = vec![0, 1, 71, 72, 73, 103, 104, 135, 136, 137, 143, 144, 167, 168, 169, 10_000];
        lens.extend((0..60).map(|_| r.random_range(0..=10_000)));
        for &n in &lens {
            let data = bytes(&mut r, n);
            diff_fixed!(&mut r, b, Sha3_224, sha3::Sha3_224, &data);
            diff_fixed!(&mut r, b, Sha3_256, sha3::Sha3_256, &data);
            diff_fixed!(&mut r, b, Sha3_384, sha3::Sha3_384, &data);
            diff_fixed!(&mut r, b, Sha3_512, sha3::Sha3_512, &data);

            // SHAKE: split input, then read the output in random pieces.
            let out_len = r.random_range(0..=700);
            let mut want128 = vec![0u8; out_len];
            let mut t = sha3::Shake128::default();
            t.update(&data);
            t.finalize_xof().read(&mut want128);
            let mut want256 = vec![0u8; out_len];
            let mut t = sha3::Shake256::default();
            t.update(&data);
            t.finalize_xof().read(&mut want256);

            let mut s = Shake128::with_backend(b);
            split_update(&mut r, &data, |c| {
                s.update(c);
            });
            let mut rd = s.finalize_xof();
            let mut got = vec![0u8; out_len];
            let mut pos = 0;
            while pos < out_len {
                let k = r.random_range(0..=(out_len - pos).min(200));
                rd.read(&mut got[pos..pos + k]);
                pos += k;
            }
            assert_eq!(got, want128, "{b:?} SHAKE128 len {n}");

            let mut got = vec![0u8; out_len];
            let mut s = Shake256::with_backend(b);
            s.update(&data);
            s.finalize_into(&mut got);
            assert_eq!(got, want256, "{b:?} SHAKE256 len {n}");
        }
    }
}

#[test]
fn shake_finalize_xof_leaves_instance_usable() {
    let mut s = Shake256::new();
    s.update(b"ab");
    let mut first = [0u8; 16];
    s.finalize_xof().read(&mut first);
    s.update(b"c");
    let mut out = [0u8; 64];
    s.finalize_xof().read(&mut out);
    let mut want = [0u8; 64];
    Shake256::digest_into(b"abc", &mut want);
    assert_eq!(out, want);
    let mut ab = [0u8; 16];
    Shake256::digest_into(b"ab", &mut ab);
    assert_eq!(first, ab);
}

#[test]
fn io_write_and_read() {
    use std::io::{Read, Write};
    let mut x = Sha3_256::new();
    x.write_all(b"a").unwrap();
    x.write_all(b"bc").unwrap();
    assert_eq!(x.finalize(), Sha3_256::digest(b"abc"));
    let mut s = Shake128::new();
    s.write_all(b"abc").unwrap();
    let mut out = [0u8; 32];
    s.finalize_xof().read_exact(&mut out).unwrap();
    let mut want = [0u8; 32];
    Shake128::digest_into(b"abc", &mut want);
    assert_eq!(out, want);
}

#[test]
fn finalize_into_rejects_wrong_length() {
    let mut out = [0u8; 31];
    let e = Sha3_256::new().finalize_into(&mut out).unwrap_err();
    assert_eq!(e, pqkit::Error::length("SHA3-256", "output", 32, 31));
    let mut out = [0u8; 32];
    Hasher::finalize_into(Sha3_256::new(), &mut out).unwrap();
    assert_eq!(out, Sha3_256::digest(b""));
}

fn single_shake(rate: usize, input: &[u8], out: &mut [u8]) {
    if rate == 168 {
        Shake128::with_backend(Backend::Soft.checked().unwrap()).update(input).finalize_xof().read(out)
    } else {
        Shake256::with_backend(Backend::Soft.checked().unwrap()).update(input).finalize_xof().read(out)
    }
}

#[test]
fn multiway_keccak_permutation_agrees_lane_by_lane() {
    let mut r = rng();
    for b in backends() {
        let mut s4 = [[0u64; 4]; 25];
        let mut s8 = [[0u64; 8]; 25];
        for i in 0..25 {
            for k in 0..4 {
                s4[i][k] = r.random();
            }
            for k in 0..8 {
                s8[i][k] = r.random();
            }
        }
        let (mut w4, mut w8) = (s4, s8);
        f1600_x4_with(b, &mut w4);
        f1600_x8_with(b, &mut w8);
        for k in 0..4 {
            let mut one: [u64; 25] = core::array::from_fn(|i| s4[i][k]);
            pqkit::hash::sha3::f1600(&mut one);
            assert_eq!(one, core::array::from_fn(|i| w4[i][k]), "{b:?} x4 lane {k}");
        }
        for k in 0..8 {
            let mut one: [u64; 25] = core::array::from_fn(|i| s8[i][k]);
            pqkit::hash::sha3::f1600(&mut one);
            assert_eq!(one, core::array::from_fn(|i| w8[i][k]), "{b:?} x8 lane {k}");
        }
    }
}

#[test]
fn multiway_shake_agrees_with_single() {
    let mut r = rng();
    for b in backends() {
        for &rate in &[168usize, 136] {
            for round in 0..12 {
                // Equal lengths (the ML-KEM/ML-DSA case), then unequal ones.
                let lens: Vec<usize> = if round < 6 {
                    let n = [0, 34, 167, 168, 169, 500][round];
                    vec![n; 8]
                } else {
                    (0..8).map(|_| r.random_range(0..600)).collect()
                };
                let inputs: Vec<Vec<u8>> = lens.iter().map(|&n| bytes(&mut r, n)).collect();
                let out_len = r.random_range(0..1200);
                let want: Vec<Vec<u8>> = inputs
                    .iter()
                    .map(|i| {
                        let mut o = vec![0u8; out_len + 300];
                        single_shake(rate, i, &mut o);
                        o
                    })
                    .collect();
                // x4, squeezed in two calls.
                let mut m4 = ShakeX4::with_backend(b, rate, core::array::from_fn(|k| inputs[k].as_slice()));
                let mut o4: [Vec<u8>; 4] = core::array::from_fn(|_| vec![0u8; out_len]);
                let [a, bb, c, d] = &mut o4;
                m4.squeeze([a, bb, c, d]);
                let mut t4: [Vec<u8>; 4] = core::array::from_fn(|_| vec![0u8; 300]);
                let [a, bb, c, d] = &mut t4;
                m4.squeeze([a, bb, c, d]);
                for k in 0..4 {
                    assert_eq!(o4[k][..], want[k][..out_len], "{b:?} x4 rate {rate} lane {k}");
                    assert_eq!(t4[k][..], want[k][out_len..], "{b:?} x4 rate {rate} lane {k} tail");
                }
                let mut m8 = ShakeX8::with_backend(b, rate, core::array::from_fn(|k| inputs[k].as_slice()));
                let mut o8: Vec<Vec<u8>> = (0..8).map(|_| vec![0u8; out_len + 300]).collect();
                let mut it = o8.iter_mut();
                m8.squeeze(core::array::from_fn(|_| it.next().unwrap().as_mut_slice()));
                for k in 0..8 {
                    assert_eq!(o8[k], want[k], "{b:?} x8 rate {rate} lane {k}");
                }
            }
        }
    }
    // The one-shot helpers with different output lengths.
    let ins: [&[u8]; 4] = [b"a", b"bb", b"", b"dddd"];
    let mut outs = [vec![0u8; 10], vec![0u8; 0], vec![0u8; 200], vec![0u8; 33]];
    let [a, b, c, d] = &mut outs;
    pqkit::hash::sha3::shake128_x4(ins, [a, b, c, d]);
    for k in 0..4 {
        let mut w = vec![0u8; outs[k].len()];
        Shake128::digest_into(ins[k], &mut w);
        assert_eq!(outs[k], w);
    }
}

#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    for b in [Backend::Soft, Backend::Avx2, Backend::Avx512, Backend::Avx512Rows] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has, "{b:?}");
                assert_eq!(checked, b);
                assert!(backends().contains(&checked), "{b:?} missing from available()");
                let mut h = Sha3_256::with_backend(checked);
                h.update(b"abc");
                assert_eq!(h.finalize(), Sha3_256::digest(b"abc"), "{b:?}");
            }
            Err(pqkit::Error::BackendUnavailable { algorithm: "SHA-3", backend, missing }) => {
                assert!(!has, "{b:?}");
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty());
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
    }
    // Every tier's features include the one below, and the AVX2 Keccak's BMI1/BMI2 are listed.
    assert!(Backend::Avx2.required().has(pqkit::cpu::Features::BMI1 | pqkit::cpu::Features::BMI2));
    assert!(Backend::Avx512.required().has(Backend::Avx2.required()));
    assert_eq!(Backend::Avx512Rows.required(), Backend::Avx512.required());
    // The row-wise permutation is kept and tested, never chosen on its own.
    assert_ne!(Backend::detect(), Backend::Avx512Rows);
    assert_eq!(Backend::detect() == Backend::Avx512, Backend::Avx512.is_available());
}
