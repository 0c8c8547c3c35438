//! Post-quantum key agreement and signatures: ML-KEM-768 (FIPS 203) and ML-DSA-65 (FIPS 204), combined the
//! usual way: the server signs its ML-KEM public key, the client checks the signature, encapsulates a shared
//! secret to the key, and both derive a session key from it with HKDF.
//!
//! Run: `cargo run -p pqkit --example pq_kem_sig`

use pqkit::hash::sha2::Sha256;
use pqkit::kdf::Hkdf;
use pqkit::mldsa::{MlDsa65SigningKey, MlDsa65VerifyingKey};
use pqkit::mlkem::{Ciphertext, DecapsulationKey, EncapsulationKey, MlKem768};

/// ML-DSA's context string: separates signatures made for this protocol from any other use of the key.
const CONTEXT: &[u8] = b"example handshake v1";

fn main() -> Result<(), pqkit::Error> {
    // The server's long-term identity: an ML-DSA-65 key pair whose public half the client already knows.
    let (identity, identity_public) = MlDsa65SigningKey::generate()?;
    let known_identity: Vec<u8> = identity_public.as_bytes().to_vec();

    // Per session, the server makes a fresh ML-KEM-768 key pair and signs the public key.
    let (decaps_key, encaps_key) = DecapsulationKey::<MlKem768>::generate()?;
    let offer = encaps_key.as_bytes().to_vec();
    let offer_signature = identity.sign(&offer, CONTEXT)?;

    // The client checks the signature with the identity it knows, then encapsulates to the offered key.
    let server = MlDsa65VerifyingKey::from_bytes(&known_identity)?;
    server.verify(&offer, CONTEXT, &offer_signature)?;
    let (ciphertext, client_secret) = EncapsulationKey::<MlKem768>::from_bytes(&offer)?.encapsulate()?;
    let reply = ciphertext.as_bytes().to_vec();

    // The server decapsulates the client's reply: both now hold the same 32-byte secret.
    let server_secret = decaps_key.decapsulate(&Ciphertext::<MlKem768>::from_bytes(&reply)?);
    assert_eq!(server_secret, client_secret);

    // Derive the session key from the secret, bound to the transcript (the offer and the reply).
    let mut transcript = offer.clone();
    transcript.extend_from_slice(&reply);
    let (mut client_key, mut server_key) = ([0u8; 32], [0u8; 32]);
    Hkdf::<Sha256>::derive(&transcript, client_secret.as_bytes(), b"session key", &mut client_key)?;
    Hkdf::<Sha256>::derive(&transcript, server_secret.as_bytes(), b"session key", &mut server_key)?;
    assert_eq!(client_key, server_key);

    // A signature over anything else fails, and so does a signature with another context.
    assert!(server.verify(b"another key", CONTEXT, &offer_signature).is_err());
    assert!(server.verify(&offer, b"other protocol", &offer_signature).is_err());
    println!(
        "session key agreed: {} bytes; offer {} bytes, reply {} bytes",
        client_key.len(),
        offer.len(),
        reply.len()
    );
    Ok(())
}
