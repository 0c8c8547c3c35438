//! Kusumi512: the vectors of docs/kusumi512.md, every backend against the portable one, counter carry and exhaustion,
//! streaming == one-shot, and rejection paths.

use pqkit::Error;
use pqkit::cipher::{StreamCipher, StreamReader, StreamWriter};
use pqkit::dispatch::Checked;
use pqkit::kusumi::{Backend, Kusumi512};
use rand::{Rng, RngExt};
use serde_json::Value;
use std::io::{Read, Write};

fn vectors() -> Value {
    serde_json::from_str(include_str!("../../../docs/kusumi512-vectors.json")).unwrap()
}

fn h(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

fn ctr(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

fn backends() -> Vec<Checked<Backend>> {
    let b: Vec<_> = Backend::available().collect();
    assert_eq!(b[0], Backend::Soft);
    b
}

fn soft() -> Checked<Backend> {
    Backend::Soft.checked().unwrap()
}

#[test]
fn block_vectors_every_backend() {
    let v = vectors();
    let cases = v["kusumi512_block"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for b in backends() {
        for c in cases {
            let mut buf = vec![0u8; 100];
            let mut k = Kusumi512::new_with_backend(&h(&c["key"]), &h(&c["nonce"]), ctr(&c["counter"]), b).unwrap();
            k.apply_keystream(&mut buf).unwrap();
            assert_eq!(buf, h(&c["block"]), "{b:?} counter {}", c["counter"]);
        }
    }
}

#[test]
fn stream_vectors_every_backend() {
    let v = vectors();
    let cases = v["kusumi512_stream"].as_array().unwrap();
    assert_eq!(cases.len(), 13);
    for b in backends() {
        for c in cases {
            let pt = h(&c["plaintext"]);
            let mut k = Kusumi512::new_with_backend(&h(&c["key"]), &h(&c["nonce"]), ctr(&c["counter"]), b).unwrap();
            let ct = k.apply_keystream_to_vec(&pt).unwrap();
            assert_eq!(ct, h(&c["ciphertext"]), "{b:?} len {}", pt.len());
            assert_eq!(k.position(), pt.len() as u64);
            if ctr(&c["counter"]) == 1 {
                // `new` starts at counter 1.
                let mut d = Kusumi512::new(&h(&c["key"]), &h(&c["nonce"])).unwrap();
                assert_eq!(d.apply_keystream_to_vec(&pt).unwrap(), ct);
            }
        }
    }
}

fn random_key_nonce(rng: &mut impl Rng) -> ([u8; 64], [u8; 12]) {
    let mut key = [0u8; 64];
    let mut nonce = [0u8; 12];
    rng.fill_bytes(&mut key);
    rng.fill_bytes(&mut nonce);
    (key, nonce)
}

#[test]
fn backends_match_soft_for_1_to_40_blocks_and_tails() {
    let mut rng = rand::rng();
    for start in [0u64, 1, 0xFFFF_FFF0, 0xFFFF_FFFF, 0x1_0000_0000 - 7, 0x7FFF_FFFF_FFFF_FF00] {
        let (key, nonce) = random_key_nonce(&mut rng);
        for len in (1..=40usize).map(|n| n * 100).chain([1, 50, 99, 101, 1599, 1601, 3217, 799, 801]) {
            let mut data = vec![0u8; len];
            rng.fill_bytes(&mut data);
            let mut want = data.clone();
            Kusumi512::new_with_backend(&key, &nonce, start, soft()).unwrap().apply_keystream(&mut want).unwrap();
            for b in backends() {
                let mut got = data.clone();
                Kusumi512::new_with_backend(&key, &nonce, start, b).unwrap().apply_keystream(&mut got).unwrap();
                assert_eq!(got, want, "{b:?} start {start} len {len}");
            }
        }
    }
}

/// The portable keystream from counter 1, `len` bytes.
fn soft_stream(key: &[u8], nonce: &[u8], len: usize) -> Vec<u8> {
    let mut ks = vec![0u8; len];
    Kusumi512::new_with_backend(key, nonce, 1, soft()).unwrap().apply_keystream(&mut ks).unwrap();
    ks
}

#[test]
fn backends_match_soft_at_every_length_to_2100_and_odd_offsets() {
    let mut rng = rand::rng();
    let (key, nonce) = random_key_nonce(&mut rng);
    let want = soft_stream(&key, &nonce, 2600);
    for b in backends() {
        for len in 0..=2100usize {
            for off in [0usize, 1, 37, 99, 100, 163, 477] {
                let mut k = Kusumi512::new_with_backend(&key, &nonce, 1, b).unwrap();
                k.seek(off as u64).unwrap();
                let mut got = vec![0u8; len];
                k.apply_keystream(&mut got).unwrap();
                assert_eq!(got, &want[off..off + len], "{b:?} offset {off} len {len}");
            }
        }
    }
}

#[test]
fn sequential_calls_and_seeks_on_one_instance_match_soft() {
    // Each call that ends inside a block keeps that block's keystream for the next call: sequential calls of
    // 1 KiB (never block-aligned after the first), seeks back and forth in between, all against the portable
    // stream.
    let mut rng = rand::rng();
    let (key, nonce) = random_key_nonce(&mut rng);
    let want = soft_stream(&key, &nonce, 40_000);
    for b in backends() {
        let mut k = Kusumi512::new_with_backend(&key, &nonce, 1, b).unwrap();
        let mut pos = 0usize;
        for i in 0..30 {
            let mut got = vec![0u8; 1024];
            k.apply_keystream(&mut got).unwrap();
            assert_eq!(got, &want[pos..pos + 1024], "{b:?} call {i}");
            pos += 1024;
        }
        for i in 0..300 {
            if rng.random_bool(0.3) || pos > 30_000 {
                pos = rng.random_range(0..30_000usize);
                k.seek(pos as u64).unwrap();
            }
            let n = rng.random_range(0..=2100usize);
            let mut got = vec![0u8; n];
            k.apply_keystream(&mut got).unwrap();
            assert_eq!(got, &want[pos..pos + n], "{b:?} step {i} at {pos} len {n}");
            pos += n;
            assert_eq!(k.position(), pos as u64);
        }
    }
}

#[test]
fn counter_carries_into_word_21() {
    // Keystream across the 2^32 boundary must equal the per-block keystream from a fresh instance at each counter.
    let mut rng = rand::rng();
    let (key, nonce) = random_key_nonce(&mut rng);
    let start = (1u64 << 32) - 20;
    for b in backends() {
        let mut all = vec![0u8; 40 * 100];
        Kusumi512::new_with_backend(&key, &nonce, start, b).unwrap().apply_keystream(&mut all).unwrap();
        for i in 0..40u64 {
            let mut one = vec![0u8; 100];
            Kusumi512::new_with_backend(&key, &nonce, start + i, soft()).unwrap().apply_keystream(&mut one).unwrap();
            assert_eq!(&all[i as usize * 100..][..100], &one[..], "{b:?} block {i}");
        }
        // Block 2^32 differs from block 0 (the carry reached word 21).
        let mut zero = vec![0u8; 100];
        Kusumi512::new_with_backend(&key, &nonce, 0, b).unwrap().apply_keystream(&mut zero).unwrap();
        assert_ne!(&all[20 * 100..21 * 100], &zero[..]);
    }
}

#[test]
fn exhaustion_is_an_error_and_leaves_data_untouched() {
    let mut rng = rand::rng();
    let (key, nonce) = random_key_nonce(&mut rng);
    for b in backends() {
        // Two blocks remain: 2^64-2 and 2^64-1.
        let mut k = Kusumi512::new_with_backend(&key, &nonce, u64::MAX - 1, b).unwrap();
        let mut data = vec![0xAAu8; 201];
        assert_eq!(k.apply_keystream(&mut data), Err(Error::CounterExhausted { algorithm: "Kusumi512" }));
        assert!(data.iter().all(|&x| x == 0xAA));
        assert_eq!(k.position(), 0);
        // Exactly 200 bytes fit; they equal the two last blocks.
        let mut data = vec![0u8; 200];
        k.apply_keystream(&mut data).unwrap();
        let mut last = vec![0u8; 100];
        Kusumi512::new_with_backend(&key, &nonce, u64::MAX, soft()).unwrap().apply_keystream(&mut last).unwrap();
        assert_eq!(&data[100..], &last[..]);
        assert_eq!(k.position(), 200);
        let mut one = [0x55u8];
        assert_eq!(k.apply_keystream(&mut one), Err(Error::CounterExhausted { algorithm: "Kusumi512" }));
        assert_eq!(one, [0x55]);
        assert_eq!(k.apply_keystream(&mut []), Ok(()));
        // Seeking: the end is a valid position, one past it is not.
        k.seek(200).unwrap();
        assert_eq!(k.seek(201), Err(Error::MessageTooLong { algorithm: "Kusumi512", max: 200 }));
        assert_eq!(k.position(), 200);
        k.seek(150).unwrap();
        let mut half = vec![0u8; 50];
        k.apply_keystream(&mut half).unwrap();
        assert_eq!(&half[..], &last[50..]);
    }
}

#[test]
fn vector_at_counter_2_pow_64_minus_1() {
    let v = vectors();
    let c = v["kusumi512_block"].as_array().unwrap().iter().find(|c| ctr(&c["counter"]) == u64::MAX).unwrap();
    for b in backends() {
        let mut k = Kusumi512::new_with_backend(&h(&c["key"]), &h(&c["nonce"]), u64::MAX, b).unwrap();
        let mut buf = vec![0u8; 100];
        k.apply_keystream(&mut buf).unwrap();
        assert_eq!(buf, h(&c["block"]));
        assert!(matches!(k.apply_keystream(&mut [0u8]), Err(Error::CounterExhausted { .. })));
    }
}

#[test]
fn seek_matches_offset_into_one_shot() {
    let mut rng = rand::rng();
    let (key, nonce) = random_key_nonce(&mut rng);
    let mut full = vec![0u8; 5000];
    Kusumi512::new(&key, &nonce).unwrap().apply_keystream(&mut full).unwrap();
    for b in backends() {
        for _ in 0..50 {
            let a = rng.random_range(0..5000usize);
            let e = rng.random_range(a..=5000usize);
            let mut k = Kusumi512::new_with_backend(&key, &nonce, 1, b).unwrap();
            k.seek(a as u64).unwrap();
            let mut part = vec![0u8; e - a];
            k.apply_keystream(&mut part).unwrap();
            assert_eq!(part, &full[a..e], "{b:?} {a}..{e}");
        }
    }
}

#[test]
fn streaming_equals_one_shot_for_random_chunkings() {
    let mut rng = rand::rng();
    let (key, nonce) = random_key_nonce(&mut rng);
    let mut pt = vec![0u8; 20_000];
    rng.fill_bytes(&mut pt);
    let want = Kusumi512::new(&key, &nonce).unwrap().apply_keystream_to_vec(&pt).unwrap();
    for b in backends() {
        for _ in 0..5 {
            // apply_keystream in random pieces
            let mut k = Kusumi512::new_with_backend(&key, &nonce, 1, b).unwrap();
            let mut got = pt.clone();
            let mut i = 0;
            while i < got.len() {
                let n = rng.random_range(0..=2500usize).min(got.len() - i);
                k.apply_keystream(&mut got[i..i + n]).unwrap();
                i += n;
            }
            assert_eq!(got, want, "{b:?} pieces");
            // StreamWriter with random write sizes and a small buffer
            let k = Kusumi512::new_with_backend(&key, &nonce, 1, b).unwrap();
            let mut w = StreamWriter::with_buffer_size(Vec::new(), k, rng.random_range(1..=4096usize));
            let mut i = 0;
            while i < pt.len() {
                let n = rng.random_range(1..=3000usize).min(pt.len() - i);
                w.write_all(&pt[i..i + n]).unwrap();
                i += n;
            }
            let (out, k) = w.into_inner();
            assert_eq!(out, want, "{b:?} writer");
            assert_eq!(k.position(), pt.len() as u64);
            // StreamReader with random read sizes
            let k = Kusumi512::new_with_backend(&key, &nonce, 1, b).unwrap();
            let mut r = StreamReader::new(&want[..], k);
            let mut back = Vec::new();
            loop {
                let mut buf = vec![0u8; rng.random_range(1..=3000usize)];
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
    let key = [0u8; 64];
    let nonce = [0u8; 12];
    assert_eq!(Kusumi512::new(&key[..63], &nonce).unwrap_err(), Error::length("Kusumi512", "key", 64, 63));
    assert_eq!(Kusumi512::new(&[0u8; 65], &nonce).unwrap_err(), Error::length("Kusumi512", "key", 64, 65));
    assert_eq!(Kusumi512::new(&key, &nonce[..11]).unwrap_err(), Error::length("Kusumi512", "nonce", 12, 11));
    assert_eq!(Kusumi512::new(&key, &[0u8; 24]).unwrap_err(), Error::length("Kusumi512", "nonce", 12, 24));
    assert_eq!(Kusumi512::new_with_counter(&key, &[], 5).unwrap_err(), Error::length("Kusumi512", "nonce", 12, 0));
    let mut k = Kusumi512::new(&key, &nonce).unwrap();
    let mut out = [0u8; 3];
    assert_eq!(k.apply_keystream_inout(&[1, 2], &mut out), Err(Error::length("stream cipher", "output buffer", 2, 3)));
    assert_eq!(format!("{k:?}"), "Kusumi512 { .. }");
}

#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    for b in [Backend::Soft, Backend::Avx2, Backend::Avx512] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has);
                let k = Kusumi512::new_with_backend(&[0u8; 64], &[0u8; 12], 1, checked).unwrap();
                assert_eq!(k.backend(), b);
            }
            Err(Error::BackendUnavailable { algorithm: "Kusumi512", backend, missing }) => {
                assert!(!has, "{b:?}");
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty() && b.required().has(missing));
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
    }
    assert_eq!(Backend::available().last(), Some(Backend::detect()));
    assert_eq!(Kusumi512::new(&[0u8; 64], &[0u8; 12]).unwrap().backend(), Backend::detect());
}
