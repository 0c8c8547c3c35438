//! Arbitrary bytes as an encrypted file: the header parser and the segment framing of the decryptor.
//! Properties: never a panic; a header that parses re-parses from its own bytes to the same header; with the
//! fixed key, anything that decrypts must be a file the fuzzer forged through the real format (the corpus
//! seeds hold such files), and decrypting it twice gives the same plaintext.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqkit::aead::stream::{Decryptor, Header};
use std::io::Read;

const KEY: [u8; 32] = [0x42; 32];

fn decrypt(data: &[u8]) -> Option<Vec<u8>> {
    let mut d = Decryptor::with_key(&KEY, data).ok()?;
    let mut out = Vec::new();
    d.read_to_end(&mut out).ok()?;
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = Header::parse(data) {
        let again = Header::parse(h.as_bytes()).expect("a parsed header re-parses from its own bytes");
        assert!(again == h, "header parse(serialize(parse(b))) is not stable");
        assert_eq!(again.as_bytes(), h.as_bytes());
        assert!(data.starts_with(h.as_bytes()), "the header's bytes are not a prefix of the input");
    }
    let mut r = data;
    if let Ok(h) = Header::read_from(&mut r) {
        assert_eq!(h.as_bytes(), &data[..data.len() - r.len()], "read_from consumed other bytes than the header");
    }
    let first = decrypt(data);
    let second = decrypt(data);
    assert_eq!(first, second, "decryption is not deterministic");
});
