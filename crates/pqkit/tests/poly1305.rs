//! Poly1305: RFC 8439 vectors, differential tests against RustCrypto's `poly1305` on every backend,
//! `verify` and `update_padded` semantics.

use poly1305::universal_hash::KeyInit;
use pqkit::Error;
use pqkit::dispatch::Checked;
use pqkit::poly1305::{Backend, Poly1305, TAG_LEN, poly1305};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    hex::decode(s).unwrap()
}

fn key32(s: &str) -> [u8; 32] {
    unhex(s).try_into().unwrap()
}

/// RustCrypto's Poly1305, the independent reference.
fn reference(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
    let mac = poly1305::Poly1305::new_from_slice(key).unwrap();
    let tag = mac.compute_unpadded(msg);
    tag.as_slice().try_into().unwrap()
}

fn backends() -> Vec<Checked<Backend>> {
    let v: Vec<Checked<Backend>> = Backend::available().collect();
    assert_eq!(v[0], Backend::Soft);
    v
}

/// Tag on `backend`, feeding `msg` in the pieces given by `cuts` (sorted offsets).
fn tag_split(backend: Checked<Backend>, key: &[u8; 32], msg: &[u8], cuts: &[usize]) -> [u8; 16] {
    let mut mac = Poly1305::new_with_backend(key, backend);
    let mut at = 0;
    for &c in cuts {
        mac.update(&msg[at..c]);
        at = c;
    }
    mac.update(&msg[at..]);
    mac.finalize()
}

const IETF_TEXT: &[u8] =
    b"Any submission to the IETF intended by the Contributor for publication as all or part of an \
IETF Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an \"IETF \
Contribution\". Such statements include oral statements in IETF sessions, as well as written and electronic \
communications made at any time or place, which are addressed to";

const JABBERWOCKY: &[u8] =
    b"'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were the \
borogoves,\nAnd the mome raths outgrabe.";

/// (key, message, tag): RFC 8439 §2.5.2 and Appendix A.3 #1..#11.
fn rfc_vectors() -> Vec<([u8; 32], Vec<u8>, [u8; 16])> {
    // The texts are checked against the RFC's hex dumps (length and a few rows) before use.
    assert_eq!(IETF_TEXT.len(), 375);
    assert_eq!(&IETF_TEXT[208..224], &unhex("72 69 62 75 74 69 6f 6e 22 2e 20 53 75 63 68 20")[..]);
    assert_eq!(&IETF_TEXT[368..], &unhex("73 73 65 64 20 74 6f")[..]);
    assert_eq!(JABBERWOCKY.len(), 127);
    assert_eq!(&JABBERWOCKY[32..48], &unhex("76 65 73 0a 44 69 64 20 67 79 72 65 20 61 6e 64")[..]);
    assert_eq!(&JABBERWOCKY[112..], &unhex("72 61 74 68 73 20 6f 75 74 67 72 61 62 65 2e")[..]);

    let z16 = "00000000000000000000000000000000";
    let t = |s: &str| -> [u8; 16] { unhex(s).try_into().unwrap() };
    let rs = |r: &str, s: &str| key32(&format!("{r}{s}"));
    vec![
        // §2.5.2
        (
            key32(
                "85:d6:be:78:57:55:6d:33:7f:44:52:fe:42:d5:06:a8:01:03:80:8a:fb:0d:b2:fd:4a:bf:f6:af:41:49:f5:1b"
                    .replace(':', "")
                    .as_str(),
            ),
            b"Cryptographic Forum Research Group".to_vec(),
            t("a8061dc1305136c6c22b8baf0c0127a9"),
        ),
        // A.3 #1
        (rs(z16, z16), vec![0u8; 64], t(z16)),
        // #2
        (rs(z16, "36e5f6b5c5e06070f0efca96227a863e"), IETF_TEXT.to_vec(), t("36e5f6b5c5e06070f0efca96227a863e")),
        // #3
        (rs("36e5f6b5c5e06070f0efca96227a863e", z16), IETF_TEXT.to_vec(), t("f3477e7cd95417af89a6b8794c310cf0")),
        // #4
        (
            key32("1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0"),
            JABBERWOCKY.to_vec(),
            t("4541669a7eaaee61e708dc7cbcc5eb62"),
        ),
        // #5
        (
            rs("02000000000000000000000000000000", z16),
            unhex("ffffffffffffffffffffffffffffffff"),
            t("03000000000000000000000000000000"),
        ),
        // #6
        (
            rs("02000000000000000000000000000000", "ffffffffffffffffffffffffffffffff"),
            unhex("02000000000000000000000000000000"),
            t("03000000000000000000000000000000"),
        ),
        // #7
        (
            rs("01000000000000000000000000000000", z16),
            unhex("ffffffffffffffffffffffffffffffff f0ffffffffffffffffffffffffffffff 11000000000000000000000000000000"),
            t("05000000000000000000000000000000"),
        ),
        // #8
        (
            rs("01000000000000000000000000000000", z16),
            unhex("ffffffffffffffffffffffffffffffff fbfefefefefefefefefefefefefefefe 01010101010101010101010101010101"),
            t(z16),
        ),
        // #9
        (
            rs("02000000000000000000000000000000", z16),
            unhex("fdffffffffffffffffffffffffffffff"),
            t("faffffffffffffffffffffffffffffff"),
        ),
        // #10
        (
            rs("01000000000000000400000000000000", z16),
            unhex(
                "e33594d7505e43b90000000000000000 3394d7505e4379cd0100000000000000 \
                 00000000000000000000000000000000 01000000000000000000000000000000",
            ),
            t("14000000000000005500000000000000"),
        ),
        // #11
        (
            rs("01000000000000000400000000000000", z16),
            unhex(
                "e33594d7505e43b90000000000000000 3394d7505e4379cd0100000000000000 \
                 00000000000000000000000000000000",
            ),
            t("13000000000000000000000000000000"),
        ),
    ]
}

#[test]
fn rfc8439_vectors_every_backend_and_split() {
    let vectors = rfc_vectors();
    assert_eq!(vectors.len(), 12);
    for (i, (key, msg, tag)) in vectors.iter().enumerate() {
        assert_eq!(&poly1305(key, msg), tag, "vector {i}, one-shot");
        assert_eq!(&reference(key, msg), tag, "vector {i}, reference crate");
        for b in backends() {
            for cut in 0..=msg.len() {
                assert_eq!(&tag_split(b, key, msg, &[cut]), tag, "vector {i}, {b:?}, cut at {cut}");
            }
            let mut mac = Poly1305::new_with_backend(key, b);
            for byte in msg {
                mac.update(core::slice::from_ref(byte));
            }
            assert_eq!(&mac.finalize(), tag, "vector {i}, {b:?}, byte by byte");
        }
    }
}

/// RFC 8439 §2.8.2: the Poly1305 input of the AEAD example, built with `update_padded`.
#[test]
fn rfc8439_aead_mac_data_with_update_padded() {
    let key = key32("7bac2b252db447af09b67a55a4e955840ae1d6731075d9eb2a9375783ed553ff");
    let aad = unhex("50515253c0c1c2c3c4c5c6c7");
    let ct = unhex(
        "d31a8d34648e60db7b86afbc53ef7ec2 a4aded51296e08fea9e2b5a736ee62d6 3dbea45e8ca9671282fafb69da92728b \
         1a71de0a9e060b2905d6a5b67ecd3b36 92ddbd7f2d778b8c9803aee328091b58 fab324e4fad675945585808b4831d7bc \
         3ff4def08e4b7a9de576d26586cec64b 6116",
    );
    assert_eq!(ct.len(), 114);
    let tag = unhex("1ae10b594f09e26a7e902ecbd0600691");
    for b in backends() {
        let mut mac = Poly1305::new_with_backend(&key, b);
        mac.update_padded(&aad);
        mac.update_padded(&ct);
        mac.update(&(aad.len() as u64).to_le_bytes());
        mac.update(&(ct.len() as u64).to_le_bytes());
        assert_eq!(mac.finalize()[..], tag[..], "{b:?}");
    }
}

fn random_cuts(rng: &mut StdRng, len: usize) -> Vec<usize> {
    let pieces = rng.random_range(0..6usize);
    let mut cuts: Vec<usize> = (0..pieces).map(|_| rng.random_range(0..=len)).collect();
    cuts.sort_unstable();
    cuts
}

#[test]
fn differential_every_length_to_4096_every_backend() {
    let mut rng = StdRng::seed_from_u64(0x9017_1305);
    let mut msg = vec![0u8; 4096];
    rng.fill_bytes(&mut msg);
    for len in 0..=4096usize {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        let m = &msg[..len];
        let want = reference(&key, m);
        for b in backends() {
            assert_eq!(tag_split(b, &key, m, &[]), want, "{b:?} len {len}");
            let cuts = random_cuts(&mut rng, len);
            assert_eq!(tag_split(b, &key, m, &cuts), want, "{b:?} len {len} cuts {cuts:?}");
        }
    }
}

#[test]
fn differential_one_mebibyte() {
    let mut rng = StdRng::seed_from_u64(42);
    for extra in [0usize, 1, 15, 16, 127, 200] {
        let len = (1 << 20) + extra;
        let mut msg = vec![0u8; len];
        rng.fill_bytes(&mut msg);
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        let want = reference(&key, &msg);
        for b in backends() {
            assert_eq!(tag_split(b, &key, &msg, &[]), want, "{b:?} len {len}");
            let cuts = random_cuts(&mut rng, len);
            assert_eq!(tag_split(b, &key, &msg, &cuts), want, "{b:?} len {len} cuts {cuts:?}");
        }
    }
}

/// Keys and messages that push every limb to its maximum: r = clamped all-ones, s = all-ones, and messages of
/// 0xff (long runs of maximal blocks stress the lazy carries of the vector code).
#[test]
fn extreme_keys_and_all_ones_messages() {
    let keys = [
        [0xffu8; 32],
        {
            let mut k = [0xffu8; 32];
            k[16..].fill(0);
            k
        },
        {
            let mut k = [0u8; 32];
            k[16..].fill(0xff);
            k
        },
        {
            // r = 1, s = all-ones
            let mut k = [0xffu8; 32];
            k[..16].fill(0);
            k[0] = 1;
            k
        },
    ];
    let ones = vec![0xffu8; 9000];
    let mut rng = StdRng::seed_from_u64(7);
    for key in &keys {
        for len in (0..=2100).chain([4095, 4096, 4097, 8191, 8192, 9000]) {
            let m = &ones[..len];
            let want = reference(key, m);
            for b in backends() {
                assert_eq!(tag_split(b, key, m, &[]), want, "{b:?} len {len}");
                let cuts = random_cuts(&mut rng, len);
                assert_eq!(tag_split(b, key, m, &cuts), want, "{b:?} len {len} cuts {cuts:?}");
            }
        }
    }
}

/// Many calls that each reach the vector path, interleaved with odd-sized ones, so the accumulator passes
/// between backends' representations many times.
#[test]
fn long_streams_of_mixed_chunk_sizes() {
    let mut rng = StdRng::seed_from_u64(99);
    for _ in 0..8 {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        let mut msg = vec![0u8; 200_000];
        rng.fill_bytes(&mut msg);
        let want = reference(&key, &msg);
        for b in backends() {
            let mut mac = Poly1305::new_with_backend(&key, b);
            let mut at = 0;
            while at < msg.len() {
                let n = match rng.random_range(0..4u32) {
                    0 => rng.random_range(0..16usize),
                    1 => rng.random_range(16..300usize),
                    2 => rng.random_range(300..3000usize),
                    _ => 256 * rng.random_range(1..20usize),
                }
                .min(msg.len() - at);
                mac.update(&msg[at..at + n]);
                at += n;
            }
            assert_eq!(mac.finalize(), want, "{b:?}");
        }
    }
}

#[test]
fn verify_accepts_right_tag_and_rejects_every_bit_flip_and_length() {
    let key = key32("1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0");
    let tag = unhex("4541669a7eaaee61e708dc7cbcc5eb62");
    let fail = Err(Error::AuthenticationFailed { algorithm: "Poly1305" });
    for b in backends() {
        let mac = |b| {
            let mut m = Poly1305::new_with_backend(&key, b);
            m.update(JABBERWOCKY);
            m
        };
        assert_eq!(mac(b).verify(&tag), Ok(()));
        for bit in 0..128 {
            let mut bad = tag.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(mac(b).verify(&bad), fail, "{b:?} bit {bit}");
        }
        for len in [0usize, 1, 15, 17, 32] {
            let mut t = tag.clone();
            t.resize(len, 0);
            assert_eq!(mac(b).verify(&t), fail, "{b:?} tag length {len}");
        }
        assert_eq!(mac(b).verify(&[tag.as_slice(), &[0]].concat()), fail);
    }
}

#[test]
fn new_from_slice_checks_key_length() {
    for len in [0usize, 16, 31, 33, 64] {
        let err = Poly1305::new_from_slice(&vec![1u8; len]).unwrap_err();
        assert_eq!(err, Error::length("Poly1305", "key", 32, len));
    }
    let key = [3u8; 32];
    let mut a = Poly1305::new_from_slice(&key).unwrap();
    a.update(b"abc");
    assert_eq!(a.finalize(), reference(&key, b"abc"));
}

/// `update_padded` equals feeding the data plus explicit zero padding to a 16-byte boundary of the total.
#[test]
fn update_padded_equals_manual_zero_padding() {
    let mut rng = StdRng::seed_from_u64(5);
    let mut data = vec![0u8; 1200];
    rng.fill_bytes(&mut data);
    for round in 0..400 {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        // Three segments: plain prefix, padded segment, padded segment, then a plain tail.
        let lens: Vec<usize> = (0..4).map(|_| rng.random_range(0..300usize)).collect();
        let mut segs = Vec::new();
        let mut at = 0;
        for &l in &lens {
            segs.push(&data[at..at + l]);
            at += l;
        }
        let mut manual = Vec::new();
        manual.extend_from_slice(segs[0]);
        for seg in &segs[1..3] {
            manual.extend_from_slice(seg);
            manual.resize(manual.len().div_ceil(16) * 16, 0);
        }
        manual.extend_from_slice(segs[3]);
        let want = reference(&key, &manual);
        for b in backends() {
            let mut mac = Poly1305::new_with_backend(&key, b);
            mac.update(segs[0]);
            mac.update_padded(segs[1]);
            mac.update_padded(segs[2]);
            mac.update(segs[3]);
            assert_eq!(mac.finalize(), want, "{b:?} round {round} lens {lens:?}");
        }
    }
    // Padding an empty input, or an input already on a boundary, adds nothing.
    let key = [9u8; 32];
    let mut mac = Poly1305::new(&key);
    mac.update_padded(&[]);
    mac.update_padded(&[1u8; 32]);
    mac.update_padded(&[]);
    assert_eq!(mac.finalize(), reference(&key, &[1u8; 32]));
}

#[test]
fn backends_and_debug() {
    let all: Vec<Checked<Backend>> = Backend::available().collect();
    assert!(all.contains(&Backend::detect()));
    #[cfg(target_arch = "x86_64")]
    {
        // What std detects, narrowed by the PQKIT_CPU cap in force (portable removes every SIMD extension, avx2
        // every AVX-512 subset).
        use pqkit::cpu::Cap;
        let cap = pqkit::cpu::cap();
        let has = |b: Backend| all.iter().any(|c| *c == b);
        let avx2 = std::is_x86_feature_detected!("avx2") && cap != Cap::Portable;
        assert_eq!(has(Backend::Avx2), avx2);
        let ifma = std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512ifma")
            && matches!(cap, Cap::Avx512 | Cap::Native);
        assert_eq!(has(Backend::Ifma), ifma);
        if ifma {
            assert_eq!(Backend::detect(), Backend::Ifma);
        } else if avx2 {
            assert_eq!(Backend::detect(), Backend::Avx2);
        } else {
            assert_eq!(Backend::detect(), Backend::Soft);
        }
    }
    let key = [0xabu8; 32];
    let mac = Poly1305::new_with_backend(&key, Backend::Soft.checked().unwrap());
    let dbg = format!("{mac:?}");
    assert_eq!(dbg, "Poly1305 { backend: Soft, .. }");
    assert!(!dbg.to_lowercase().contains("ab"), "{dbg}");
    assert_eq!(TAG_LEN, 16);
    assert_eq!(pqkit::poly1305::KEY_LEN, 32);
}

#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    for b in [Backend::Soft, Backend::Avx2, Backend::Ifma] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has, "{b:?}");
                // A forced backend is used as given, never replaced.
                let mac = Poly1305::new_with_backend(&[3; 32], checked);
                assert_eq!(format!("{mac:?}"), format!("Poly1305 {{ backend: {b:?}, .. }}"));
            }
            Err(pqkit::Error::BackendUnavailable { algorithm: "Poly1305", backend, missing }) => {
                assert!(!has, "{b:?}");
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty() && !pqkit::cpu::features().has(missing));
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
    }
    assert!(Backend::Soft.checked().is_ok());
    #[cfg(target_arch = "x86_64")]
    {
        use pqkit::cpu::Features as F;
        assert_eq!(Backend::Avx2.required(), F::AVX2 | F::BMI1 | F::BMI2);
        assert_eq!(Backend::Ifma.required(), F::AVX512F | F::AVX512VL | F::AVX512IFMA);
    }
}

/// Calls just below, at and above each SIMD backend's entry thresholds, both before and after the state has
/// computed its powers of `r` (the IFMA threshold drops once they exist).
#[test]
fn lengths_around_backend_thresholds() {
    let mut rng = StdRng::seed_from_u64(31);
    let mut msg = vec![0u8; 8192];
    rng.fill_bytes(&mut msg);
    let key = [0x77u8; 32];
    for first in [0usize, 16, 1024, 2048] {
        for n in (0..=2200).step_by(16).chain([255, 257, 383, 385, 1023, 1025]) {
            let m = &msg[..first + n];
            let want = reference(&key, m);
            for b in backends() {
                assert_eq!(tag_split(b, &key, m, &[first]), want, "{b:?} first {first} then {n}");
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Any split of any message gives the one-shot tag, on every backend.
    #[test]
    fn any_split_equals_one_shot(
        key in proptest::array::uniform32(proptest::prelude::any::<u8>()),
        msg in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
        cuts in proptest::collection::vec(0usize..3000, 0..6),
    ) {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(msg.len())).collect();
        cuts.sort_unstable();
        let want = reference(&key, &msg);
        proptest::prop_assert_eq!(poly1305(&key, &msg), want);
        for b in backends() {
            proptest::prop_assert_eq!(tag_split(b, &key, &msg, &cuts), want, "{:?}", b);
        }
    }
}
