//! Kusumi512-Poly1305 opening in place: the first vector batch decrypts the message's first bytes (up to 15
//! blocks on AVX-512, 7 on AVX2) in place while it computes the Poly1305 key, so a bad tag must put those bytes
//! back. Every length around the batch edges, under whatever backend `PQKIT_CPU` leaves (CI runs each cap).

use pqkit::Error;
use pqkit::aead::{Aead, Kusumi512Poly1305};
use rand::{Rng, RngExt};

const NAME: &str = "Kusumi512-Poly1305";

#[test]
fn a_bad_tag_leaves_the_whole_ciphertext_in_place_at_every_head_length() {
    let mut rng = rand::rng();
    let lens = (0..=1700usize).step_by(7).chain([1, 99, 100, 101, 699, 700, 701, 1024, 1499, 1500, 1501, 1600, 3200]);
    for len in lens {
        let mut key = [0u8; 64];
        let mut nonce = [0u8; 12];
        rng.fill_bytes(&mut key);
        rng.fill_bytes(&mut nonce);
        let aad = vec![0x5au8; rng.random_range(0..=40usize)];
        let mut pt = vec![0u8; len];
        rng.fill_bytes(&mut pt);
        let a = Kusumi512Poly1305::new(&key).unwrap();
        let mut ct = pt.clone();
        let tag = a.seal_in_place_detached(&nonce, &aad, &mut ct).unwrap();
        for bad in [0usize, 15] {
            let mut t = tag;
            t[bad] ^= 0x20;
            let mut buf = ct.clone();
            assert_eq!(
                a.open_in_place_detached(&nonce, &aad, &mut buf, &t),
                Err(Error::AuthenticationFailed { algorithm: NAME }),
                "len {len}"
            );
            assert!(buf == ct, "len {len}: a failed open changed the buffer");
        }
        // A tampered ciphertext byte inside the head: rejected, buffer unchanged.
        if len > 0 {
            let mut buf = ct.clone();
            let i = rng.random_range(0..len.min(1500));
            buf[i] ^= 1;
            let tampered = buf.clone();
            assert!(a.open_in_place_detached(&nonce, &aad, &mut buf, &tag).is_err(), "len {len}");
            assert!(buf == tampered, "len {len}: a failed open changed the buffer");
        }
        let mut buf = ct.clone();
        a.open_in_place_detached(&nonce, &aad, &mut buf, &tag).unwrap();
        assert!(buf == pt, "len {len}");
    }
}
