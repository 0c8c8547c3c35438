//! Encrypting to someone's public key with HPKE (RFC 9180) and X-Wing, a post-quantum hybrid KEM
//! (ML-KEM-768 together with X25519: secure as long as either one is).
//!
//! Run: `cargo run -p pqkit --example hpke_xwing`

use pqkit::hpke::{Aead, Kdf, Kem, PublicKey, RecipientMode, SenderMode, Suite};

fn main() -> Result<(), pqkit::Error> {
    // The recipient makes a key pair once and publishes the public key (1216 bytes for X-Wing).
    let (private_key, public_key) = Kem::XWing.generate_key_pair()?;
    let published: Vec<u8> = public_key.as_bytes().to_vec();

    // Sender and recipient agree on the suite: KEM, key derivation and AEAD.
    let suite = Suite::new(Kem::XWing, Kdf::HkdfSha256, Aead::ChaCha20Poly1305);
    // `info` binds the keys to this application and purpose; both sides must use the same bytes.
    let info = b"example app, file sharing v1";

    // The sender needs only the published bytes. `seal` returns the encapsulated key `enc` (1120 bytes), which
    // travels with the ciphertext.
    let recipient = PublicKey::from_bytes(Kem::XWing, &published)?;
    let (enc, ciphertext) = suite.seal(&recipient, info, b"", b"the meeting moved to 3 pm", SenderMode::Base)?;
    println!("sent {} bytes of enc and {} of ciphertext", enc.len(), ciphertext.len());

    // The recipient opens it with the private key. A changed `enc` or ciphertext fails, releasing nothing.
    let plaintext = suite.open(&enc, &private_key, info, b"", &ciphertext, RecipientMode::Base)?;
    assert_eq!(plaintext, b"the meeting moved to 3 pm");
    let mut bad = ciphertext.clone();
    bad[0] ^= 1;
    assert!(suite.open(&enc, &private_key, info, b"", &bad, RecipientMode::Base).is_err());

    // Several messages under one encapsulation: a sender context and a recipient context, opened in order.
    let (enc, mut sender) = suite.setup_sender(&recipient, info, SenderMode::Base)?;
    let mut receiver = suite.setup_recipient(&enc, &private_key, info, RecipientMode::Base)?;
    for part in [&b"part 1"[..], b"part 2", b"part 3"] {
        let c = sender.seal(b"", part)?;
        assert_eq!(receiver.open(b"", &c)?, part);
    }
    println!("opened one message and a stream of three");
    Ok(())
}
