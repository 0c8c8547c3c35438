//! Authenticated encryption: one message with an AEAD, then a whole file with the streaming format.
//!
//! Run: `cargo run -p pqkit --example aead_file`

use pqkit::aead::stream::{Algorithm, Decryptor, Encryptor};
use pqkit::aead::{Aead, XChaCha20Poly1305};
use std::io::{Read, Write};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A 32-byte key from the operating system's random number generator.
    let mut key = [0u8; 32];
    pqkit::rng::fill_os(&mut key)?;

    // One message. XChaCha20-Poly1305 takes a 24-byte nonce, long enough that a random one never repeats in
    // practice; with ChaCha20-Poly1305 or AES-GCM (12-byte nonces) use a counter instead.
    let aead = XChaCha20Poly1305::new(&key)?;
    let mut nonce = [0u8; 24];
    pqkit::rng::fill_os(&mut nonce)?;
    let header = b"message 1 of 1"; // authenticated, not encrypted
    let message = b"attack at dawn";
    let sealed = aead.seal(&nonce, header, message)?;
    assert_eq!(aead.open(&nonce, header, &sealed)?, message);

    // Any change to the ciphertext, the header or the nonce makes `open` fail, and nothing is released.
    let mut tampered = sealed.clone();
    tampered[0] ^= 1;
    assert!(aead.open(&nonce, header, &tampered).is_err());
    println!("one message: {} bytes sealed into {} (with the 16-byte tag)", message.len(), sealed.len());

    // A whole file: the pqkit file format (docs/file-format.md) in 64 KiB segments, with bounded memory. The
    // Encryptor is a `std::io::Write` over any writer (here a Vec; a File or stdout work the same way).
    let plaintext: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
    let mut enc = Encryptor::with_key(Algorithm::XChaCha20Poly1305, &key, Vec::new())?;
    enc.write_all(&plaintext)?;
    let file = enc.finish()?; // writes the final segment: without it the file reads as truncated

    // The Decryptor is a `std::io::Read`. It releases a segment only once that segment authenticated, and
    // `read` reaches the end (Ok(0)) only after the final segment did: act on the output only then.
    let mut dec = Decryptor::with_key(&key, &file[..])?;
    let mut opened = Vec::new();
    dec.read_to_end(&mut opened)?;
    assert_eq!(opened, plaintext);

    // A file cut short is refused.
    let mut dec = Decryptor::with_key(&key, &file[..file.len() - 100])?;
    assert!(dec.read_to_end(&mut Vec::new()).is_err());
    println!("file: {} bytes encrypted into {}, decrypted and checked", plaintext.len(), file.len());
    Ok(())
}
