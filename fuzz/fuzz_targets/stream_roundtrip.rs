//! Encrypt then decrypt arbitrary plaintext (all three algorithms, raw key), then tamper with one byte of the
//! file or truncate it. Properties: decrypt(encrypt(x)) == x; any single-byte change or truncation of the
//! file is refused (an error, not a panic, not a different plaintext).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqkit::aead::stream::{Algorithm, Decryptor, Encryptor};
use std::io::{Read, Write};

const KEY: [u8; 32] = [0x42; 32];

fn decrypt(file: &[u8]) -> Option<Vec<u8>> {
    let mut d = Decryptor::with_key(&KEY, file).ok()?;
    let mut out = Vec::new();
    d.read_to_end(&mut out).ok()?;
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let alg = Algorithm::from_id(1 + data[0] % 3).unwrap();
    let pos = u32::from_le_bytes(data[1..5].try_into().unwrap()) as usize;
    // Repeat the plaintext so that multi-segment files (64 KiB segments) are reached from small inputs.
    let reps = if data[0] & 0x80 != 0 { 1 + (70_000 / data.len().max(1)).min(2000) } else { 1 };
    let plain: Vec<u8> = data[5..].iter().copied().cycle().take((data.len() - 5) * reps).collect();

    let mut e = Encryptor::with_key(alg, &KEY, Vec::new()).expect("encryptor");
    // Write in uneven pieces: the framing must not depend on how the caller splits its writes.
    for piece in plain.chunks(1 + (pos % 9000)) {
        e.write_all(piece).expect("write");
    }
    let file = e.finish().expect("finish");
    assert_eq!(decrypt(&file).as_deref(), Some(&plain[..]), "decrypt(encrypt(x)) != x");

    let mut bad = file.clone();
    let i = pos % bad.len();
    bad[i] ^= 1 << (data[0] % 8);
    assert_eq!(decrypt(&bad), None, "a file with byte {i} flipped was accepted");

    let cut = pos % file.len();
    assert_eq!(decrypt(&file[..cut]), None, "a file truncated to {cut} bytes was accepted");
});
