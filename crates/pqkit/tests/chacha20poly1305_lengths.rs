//! ChaCha20-Poly1305 at every message length from 0 to 2100 bytes, with associated data of 0, 1, 13 and 64 bytes,
//! on every ChaCha backend this machine has, against RustCrypto `chacha20poly1305`; and at each of those lengths
//! a flipped tag bit and (for non-empty messages) a flipped ciphertext byte are rejected with
//! `AuthenticationFailed`, leaving the caller's buffer holding the ciphertext.
//!
//! The range covers the short path (up to 192 bytes), all of the AVX2 medium path (up to 1984 bytes: one, two,
//! three and four keystream passes, the 4-block last pass, block 0 computed during the first pass, the two-chain
//! stitched runs, the last pass's 512 bytes on the two chains after it, 1 KiB among them, and the open of whole
//! passes at 512, 1024 and 1536 bytes) and the start of the stitched loop.

use chacha20poly1305::aead::{Aead as _, KeyInit, Payload};
use pqkit::Error;
use pqkit::aead::{Aead, ChaCha20Poly1305};
use pqkit::chacha::Backend;
use rand::{Rng, SeedableRng, rngs::StdRng};

#[test]
fn every_length_to_2100_every_backend_matches_rustcrypto_and_rejects_tampering() {
    let mut rng = StdRng::seed_from_u64(0x1602);
    let mut key = [0u8; 32];
    let mut nonce = [0u8; 12];
    let mut data = vec![0u8; 2100 + 64];
    let backends: Vec<_> = Backend::available().collect();
    let auth = Error::AuthenticationFailed { algorithm: "ChaCha20-Poly1305" };
    for len in 0..=2100usize {
        for aad_len in [0usize, 1, 13, 64] {
            rng.fill_bytes(&mut key);
            rng.fill_bytes(&mut nonce);
            rng.fill_bytes(&mut data);
            let (msg, aad) = (&data[..len], &data[2100..2100 + aad_len]);
            let theirs = chacha20poly1305::ChaCha20Poly1305::new_from_slice(&key)
                .unwrap()
                .encrypt((&nonce).into(), Payload { msg, aad })
                .unwrap();
            let (want_ct, want_tag) = theirs.split_at(len);
            for &backend in &backends {
                let a = ChaCha20Poly1305::new(&key).unwrap().with_backend(backend);
                let mut buf = msg.to_vec();
                let tag = a.seal_in_place_detached(&nonce, aad, &mut buf).unwrap();
                assert!(buf == want_ct && tag[..] == *want_tag, "seal: len {len} aad {aad_len} {backend:?}");
                a.open_in_place_detached(&nonce, aad, &mut buf, &tag).unwrap();
                assert!(buf == msg, "open: len {len} aad {aad_len} {backend:?}");

                // A flipped tag bit (a different bit at each length).
                let mut bad_tag = tag;
                bad_tag[len % 16] ^= 1 << (len % 8);
                let mut buf = want_ct.to_vec();
                assert_eq!(a.open_in_place_detached(&nonce, aad, &mut buf, &bad_tag).unwrap_err(), auth);
                assert!(buf == want_ct, "bad tag released plaintext: len {len} aad {aad_len} {backend:?}");

                // A flipped ciphertext byte (a different position at each length).
                if len > 0 {
                    let i = (len * 7 + aad_len) % len;
                    buf[i] ^= 0x40;
                    let before = buf.clone();
                    assert_eq!(a.open_in_place_detached(&nonce, aad, &mut buf, &tag).unwrap_err(), auth);
                    assert!(buf == before, "bad ciphertext released plaintext: len {len} aad {aad_len} {backend:?}");
                }
            }
        }
    }
}
