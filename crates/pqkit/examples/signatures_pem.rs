//! Ed25519 signatures with keys stored as PEM: PKCS#8 for the private key and SubjectPublicKeyInfo for the
//! public key, the files `openssl pkey` and other libraries read.
//!
//! Run: `cargo run -p pqkit --example signatures_pem`

use pqkit::ec::ed25519::{SigningKey, VerifyingKey};
use pqkit::rng::ChaCha20Rng;

fn main() -> Result<(), pqkit::Error> {
    // A signing key from a CSPRNG seeded by the operating system.
    let mut rng = ChaCha20Rng::from_os_rng()?;
    let signing_key = SigningKey::generate(&mut rng);

    // Both keys as PEM text. The private PEM is a `Zeroizing<String>`: it is wiped from memory when dropped.
    let private_pem = signing_key.to_pkcs8_pem()?;
    let public_pem = signing_key.verifying_key().to_public_key_pem()?;
    print!("{public_pem}");

    // Elsewhere, or later: read them back. Parsing checks the structure and the key itself.
    let signing_key = SigningKey::from_pkcs8_pem(&private_pem)?;
    let verifying_key = VerifyingKey::from_public_key_pem(&public_pem)?;

    // Sign and verify. Ed25519 signatures are deterministic: the same key and message give the same signature.
    let message = b"release v1.0, sha256 0f1e...";
    let signature = signing_key.sign(message);
    verifying_key.verify(message, &signature)?;
    println!("signature: {} bytes, verified", signature.to_bytes().len());

    // A changed message, or a signature by another key, fails verification with an error.
    assert!(verifying_key.verify(b"release v1.1", &signature).is_err());
    let other = SigningKey::generate(&mut rng);
    assert!(verifying_key.verify(message, &other.sign(message)).is_err());
    Ok(())
}
