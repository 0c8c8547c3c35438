//! Threefish-512 and Threefish-512-CTR: the vectors of docs/kusumi512.md (including Skein 1.3's own known answers),
//! differential tests against RustCrypto `threefish`, every CTR backend against the portable one, exhaustion,
//! streaming == one-shot, and rejection paths.

use pqkit::Error;
use pqkit::cipher::{StreamCipher, StreamReader, StreamWriter};
use pqkit::dispatch::Checked;
use pqkit::threefish::{Backend, Threefish512, Threefish512Ctr};
use rand::{Rng, RngExt};
use serde_json::Value;
use std::io::{Read, Write};

const CTR: &str = "Threefish-512-CTR";

fn vectors() -> Value {
    serde_json::from_str(include_str!("../../../docs/kusumi512-vectors.json")).unwrap()
}

fn h(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

fn backends() -> Vec<Checked<Backend>> {
    let b: Vec<_> = Backend::available().collect();
    assert_eq!(b[0], Backend::Soft);
    b
}

fn words<const N: usize>(b: &[u8]) -> [u64; N] {
    let mut w = [0u64; N];
    for (x, c) in w.iter_mut().zip(b.chunks_exact(8)) {
        *x = u64::from_le_bytes(c.try_into().unwrap());
    }
    w
}

fn bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// RustCrypto's Threefish-512 as the reference block function.
fn reference_block(key: &[u8; 64], tweak: &[u8; 16], block: &[u8; 64]) -> Vec<u8> {
    let c = threefish::Threefish512::new_with_tweak(key, tweak);
    let mut w = words::<8>(block);
    c.encrypt_block_u64(&mut w);
    bytes(&w)
}

/// A CTR loop built from RustCrypto's Threefish-512.
fn reference_ctr(key: &[u8; 64], nonce: &[u8; 16], counter: u64, data: &[u8]) -> Vec<u8> {
    let c = threefish::Threefish512::new_with_tweak(key, nonce);
    let mut out = data.to_vec();
    for (i, chunk) in out.chunks_mut(64).enumerate() {
        let mut w = [counter.wrapping_add(i as u64), 0, 0, 0, 0, 0, 0, 0];
        c.encrypt_block_u64(&mut w);
        for (d, k) in chunk.iter_mut().zip(bytes(&w)) {
            *d ^= k;
        }
    }
    out
}

#[test]
fn block_vectors_including_skein_known_answers() {
    let v = vectors();
    let cases = v["threefish512_block"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for c in cases {
        let key: [u8; 64] = h(&c["key"]).try_into().unwrap();
        let tweak: [u8; 16] = h(&c["tweak"]).try_into().unwrap();
        let pt: [u8; 64] = h(&c["plaintext"]).try_into().unwrap();
        let tf = Threefish512::new(&key, &tweak);
        let mut b = pt;
        tf.encrypt_block(&mut b);
        assert_eq!(b.to_vec(), h(&c["ciphertext"]));
        assert_eq!(reference_block(&key, &tweak, &pt), h(&c["ciphertext"]));
        tf.decrypt_block(&mut b);
        assert_eq!(b, pt);
    }
}

#[test]
fn skein_paper_threefish512_known_answer() {
    // Skein 1.3, Appendix C (Threefish-512): key 0x10..0x4F, tweak 0x00..0x0F, plaintext 0xFF, 0xFE, ..., 0xC0.
    let key: [u8; 64] = core::array::from_fn(|i| 0x10 + i as u8);
    let tweak: [u8; 16] = core::array::from_fn(|i| i as u8);
    let mut b: [u8; 64] = core::array::from_fn(|i| 0xFF - i as u8);
    let want = "e304439626d45a2cb401cad8d636249a6338330eb06d45dd8b36b90e97254779\
                272a0a8d99463504784420ea18c9a725af11dffea10162348927673d5c1caf3d";
    Threefish512::new(&key, &tweak).encrypt_block(&mut b);
    assert_eq!(hex::encode(b), want);
}

#[test]
fn block_matches_rustcrypto_on_random_inputs() {
    let mut rng = rand::rng();
    for _ in 0..500 {
        let mut key = [0u8; 64];
        let mut tweak = [0u8; 16];
        let mut pt = [0u8; 64];
        rng.fill_bytes(&mut key);
        rng.fill_bytes(&mut tweak);
        rng.fill_bytes(&mut pt);
        let tf = Threefish512::new(&key, &tweak);
        let mut b = pt;
        tf.encrypt_block(&mut b);
        assert_eq!(b.to_vec(), reference_block(&key, &tweak, &pt));
        // Decrypt of random data matches the reference's decrypt too.
        let r = threefish::Threefish512::new_with_tweak(&key, &tweak);
        let mut w = words::<8>(&pt);
        r.decrypt_block_u64(&mut w);
        let mut d = pt;
        tf.decrypt_block(&mut d);
        assert_eq!(d.to_vec(), bytes(&w));
        tf.encrypt_block(&mut d);
        assert_eq!(d, pt);
    }
}

#[test]
fn ctr_vectors_every_backend() {
    let v = vectors();
    let cases = v["threefish512_ctr"].as_array().unwrap();
    assert_eq!(cases.len(), 7);
    for b in backends() {
        for c in cases {
            let pt = h(&c["plaintext"]);
            let counter = c["counter"].as_u64().unwrap();
            let mut k = Threefish512Ctr::new_with_backend(&h(&c["key"]), &h(&c["nonce"]), counter, b).unwrap();
            assert_eq!(k.apply_keystream_to_vec(&pt).unwrap(), h(&c["ciphertext"]), "{b:?} len {}", pt.len());
            if counter == 0 {
                let mut d = Threefish512Ctr::new(&h(&c["key"]), &h(&c["nonce"])).unwrap();
                assert_eq!(d.apply_keystream_to_vec(&pt).unwrap(), h(&c["ciphertext"]));
            }
        }
    }
}

fn random_key_nonce(rng: &mut impl Rng) -> ([u8; 64], [u8; 16]) {
    let mut key = [0u8; 64];
    let mut nonce = [0u8; 16];
    rng.fill_bytes(&mut key);
    rng.fill_bytes(&mut nonce);
    (key, nonce)
}

#[test]
fn ctr_every_backend_matches_rustcrypto_loop() {
    let mut rng = rand::rng();
    for start in [0u64, 5, 0xFFFF_FFFF, u64::MAX - 100] {
        for len in (0..=40usize).map(|n| n * 64).chain([1, 63, 65, 511, 513, 1000, 4096, 4099]) {
            let (key, nonce) = random_key_nonce(&mut rng);
            let mut data = vec![0u8; len];
            rng.fill_bytes(&mut data);
            let want = reference_ctr(&key, &nonce, start, &data);
            for b in backends() {
                let mut k = Threefish512Ctr::new_with_backend(&key, &nonce, start, b).unwrap();
                assert_eq!(k.apply_keystream_to_vec(&data).unwrap(), want, "{b:?} start {start} len {len}");
            }
        }
    }
}

#[test]
fn ctr_every_backend_at_every_length_to_2100_and_odd_offsets() {
    // Against RustCrypto's block cipher in a CTR loop: every length 0..=2100 from several offsets (seek to a
    // position inside a block, then one call), so every backend's whole batches, padded tails and lone blocks
    // meet every alignment.
    let mut rng = rand::rng();
    let (key, nonce) = random_key_nonce(&mut rng);
    let start = 0xFFFF_FFFF - 3;
    let want = reference_ctr(&key, &nonce, start, &[0u8; 2700]);
    for b in backends() {
        for len in 0..=2100usize {
            for off in [0usize, 1, 63, 64, 201, 511] {
                let mut k = Threefish512Ctr::new_with_backend(&key, &nonce, start, b).unwrap();
                k.seek(off as u64).unwrap();
                let mut got = vec![0u8; len];
                k.apply_keystream(&mut got).unwrap();
                assert_eq!(got, &want[off..off + len], "{b:?} offset {off} len {len}");
            }
        }
    }
}

#[test]
fn ctr_exhaustion_is_an_error_and_leaves_data_untouched() {
    let mut rng = rand::rng();
    let (key, nonce) = random_key_nonce(&mut rng);
    for b in backends() {
        let mut k = Threefish512Ctr::new_with_backend(&key, &nonce, u64::MAX - 1, b).unwrap();
        let mut data = vec![0xAAu8; 129];
        assert_eq!(k.apply_keystream(&mut data), Err(Error::CounterExhausted { algorithm: CTR }));
        assert!(data.iter().all(|&x| x == 0xAA));
        assert_eq!(k.position(), 0);
        let mut data = vec![0u8; 128];
        k.apply_keystream(&mut data).unwrap();
        assert_eq!(data, reference_ctr(&key, &nonce, u64::MAX - 1, &[0u8; 128]));
        let mut one = [7u8];
        assert_eq!(k.apply_keystream(&mut one), Err(Error::CounterExhausted { algorithm: CTR }));
        assert_eq!(one, [7]);
        assert_eq!(k.seek(129), Err(Error::MessageTooLong { algorithm: CTR, max: 128 }));
        assert_eq!(k.position(), 128);
        k.seek(100).unwrap();
        let mut tail = vec![0u8; 28];
        k.apply_keystream(&mut tail).unwrap();
        assert_eq!(&tail[..], &data[100..]);
    }
}

#[test]
fn ctr_streaming_equals_one_shot_for_random_chunkings() {
    let mut rng = rand::rng();
    let (key, nonce) = random_key_nonce(&mut rng);
    let mut pt = vec![0u8; 12_345];
    rng.fill_bytes(&mut pt);
    let want = reference_ctr(&key, &nonce, 0, &pt);
    for b in backends() {
        for _ in 0..5 {
            let mut k = Threefish512Ctr::new_with_backend(&key, &nonce, 0, b).unwrap();
            let mut got = pt.clone();
            let mut i = 0;
            while i < got.len() {
                let n = rng.random_range(0..=1500usize).min(got.len() - i);
                k.apply_keystream(&mut got[i..i + n]).unwrap();
                i += n;
            }
            assert_eq!(got, want, "{b:?} pieces");
            // seek to random offsets
            let a = rng.random_range(0..pt.len());
            k.seek(a as u64).unwrap();
            let mut part = pt[a..].to_vec();
            k.apply_keystream(&mut part).unwrap();
            assert_eq!(part, &want[a..]);

            let k = Threefish512Ctr::new_with_backend(&key, &nonce, 0, b).unwrap();
            let mut w = StreamWriter::with_buffer_size(Vec::new(), k, rng.random_range(1..=2048usize));
            let mut i = 0;
            while i < pt.len() {
                let n = rng.random_range(1..=2000usize).min(pt.len() - i);
                w.write_all(&pt[i..i + n]).unwrap();
                i += n;
            }
            assert_eq!(w.into_inner().0, want, "{b:?} writer");

            let k = Threefish512Ctr::new_with_backend(&key, &nonce, 0, b).unwrap();
            let mut r = StreamReader::new(&want[..], k);
            let mut back = Vec::new();
            loop {
                let mut buf = vec![0u8; rng.random_range(1..=2000usize)];
                let n = r.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                back.extend_from_slice(&buf[..n]);
            }
            assert_eq!(back, pt, "{b:?} reader");
        }
    }
}

#[test]
fn wrong_lengths_are_rejected_with_exact_errors() {
    assert_eq!(Threefish512Ctr::new(&[0u8; 32], &[0u8; 16]).unwrap_err(), Error::length(CTR, "key", 64, 32));
    assert_eq!(Threefish512Ctr::new(&[0u8; 64], &[0u8; 12]).unwrap_err(), Error::length(CTR, "nonce", 16, 12));
    assert_eq!(
        Threefish512Ctr::new_with_counter(&[0u8; 64], &[0u8; 17], 3).unwrap_err(),
        Error::length(CTR, "nonce", 16, 17)
    );
    let k = Threefish512Ctr::new(&[0u8; 64], &[0u8; 16]).unwrap();
    assert_eq!(format!("{k:?}"), "Threefish512Ctr { .. }");
    assert_eq!(format!("{:?}", Threefish512::new(&[1u8; 64], &[2u8; 16])), "Threefish512 { .. }");
}

#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    for b in [Backend::Soft, Backend::Avx2, Backend::Avx512] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has);
                let k = Threefish512Ctr::new_with_backend(&[0u8; 64], &[0u8; 16], 0, checked).unwrap();
                assert_eq!(k.backend(), b);
            }
            Err(Error::BackendUnavailable { algorithm: CTR, backend, missing }) => {
                assert!(!has, "{b:?}");
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty() && b.required().has(missing));
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
    }
    assert_eq!(Backend::available().last(), Some(Backend::detect()));
    assert_eq!(Threefish512Ctr::new(&[0u8; 64], &[0u8; 16]).unwrap().backend(), Backend::detect());
}
