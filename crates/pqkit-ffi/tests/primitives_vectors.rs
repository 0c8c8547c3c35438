//! The C entry points of Kusumi512, Threefish-512 (block and CTR), Skein-512 and incremental SHAKE against
//! known answers: the committed vectors of docs/kusumi512-vectors.json, Skein 1.3 Appendix C, and FIPS 202's
//! SHAKE of the empty string; the keystream split at every byte equals the one-shot one.

use pqkit_ffi::*;
use serde_json::Value;

fn vectors() -> Value {
    serde_json::from_str(include_str!("../../../docs/kusumi512-vectors.json")).unwrap()
}

fn h(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

struct Cipher(*mut PqkitCipher);
impl Drop for Cipher {
    fn drop(&mut self) {
        // SAFETY: a live handle, freed once.
        unsafe { pqkit_cipher_free(self.0) }
    }
}

fn cipher(alg: PqkitCipherAlg, key: &[u8], nonce: &[u8], counter: u64) -> Cipher {
    let mut c = core::ptr::null_mut();
    // SAFETY: live slices and an out-pointer.
    let st =
        unsafe { pqkit_cipher_new(alg as u32, key.as_ptr(), key.len(), nonce.as_ptr(), nonce.len(), counter, &mut c) };
    assert_eq!(st, PqkitStatus::Ok);
    Cipher(c)
}

fn apply(c: &Cipher, data: &mut [u8]) {
    // SAFETY: a live handle and a writable slice.
    assert_eq!(unsafe { pqkit_cipher_apply_keystream(c.0, data.as_mut_ptr(), data.len()) }, PqkitStatus::Ok);
}

#[test]
fn stream_ciphers_match_the_committed_vectors_in_pieces() {
    let v = vectors();
    for (name, alg) in
        [("kusumi512_stream", PqkitCipherAlg::Kusumi512), ("threefish512_ctr", PqkitCipherAlg::Threefish512Ctr)]
    {
        let cases = v[name].as_array().unwrap();
        assert!(!cases.is_empty());
        for case in cases {
            let (key, nonce, pt, ct) =
                (h(&case["key"]), h(&case["nonce"]), h(&case["plaintext"]), h(&case["ciphertext"]));
            let counter = case["counter"].as_u64().unwrap();
            let c = cipher(alg, &key, &nonce, counter);
            let mut buf = pt.clone();
            apply(&c, &mut buf);
            assert_eq!(buf, ct, "{name}");
            // Split at every point: the same bytes.
            for split in [1, 7, 63, 64, 65, 99, 100, 101] {
                if split > pt.len() {
                    continue;
                }
                let c = cipher(alg, &key, &nonce, counter);
                let mut buf = pt.clone();
                let (a, b) = buf.split_at_mut(split);
                apply(&c, a);
                apply(&c, b);
                assert_eq!(buf, ct, "{name} split {split}");
                // Seeking back to the start and over the first part gives the rest again.
                let mut rest = pt[split..].to_vec();
                // SAFETY: a live handle.
                assert_eq!(unsafe { pqkit_cipher_seek(c.0, split as u64) }, PqkitStatus::Ok);
                apply(&c, &mut rest);
                assert_eq!(rest, ct[split..], "{name} seek {split}");
            }
        }
    }
}

#[test]
fn threefish_block_matches_the_vectors_and_skein_1_3() {
    let v = vectors();
    type Case = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>); // key, tweak, plaintext, ciphertext
    let mut cases: Vec<Case> = v["threefish512_block"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (h(&c["key"]), h(&c["tweak"]), h(&c["plaintext"]), h(&c["ciphertext"])))
        .collect();
    // Skein 1.3, Appendix C: key 0x10..0x4F, tweak 0x00..0x0F, plaintext 0xFF, 0xFE, ..., 0xC0.
    cases.push((
        (0x10..0x50).collect(),
        (0..16).collect(),
        (0..64).map(|i| 0xFF - i as u8).collect(),
        hex::decode(
            "e304439626d45a2cb401cad8d636249a6338330eb06d45dd8b36b90e97254779\
             272a0a8d99463504784420ea18c9a725af11dffea10162348927673d5c1caf3d",
        )
        .unwrap(),
    ));
    for (key, tweak, pt, ct) in cases {
        let mut b = pt.clone();
        // SAFETY: live slices of their lengths.
        let st = unsafe {
            pqkit_threefish512_encrypt_block(
                key.as_ptr(),
                key.len(),
                tweak.as_ptr(),
                tweak.len(),
                b.as_mut_ptr(),
                b.len(),
            )
        };
        assert_eq!(st, PqkitStatus::Ok);
        assert_eq!(b, ct);
        // SAFETY: as above.
        let st = unsafe {
            pqkit_threefish512_decrypt_block(
                key.as_ptr(),
                key.len(),
                tweak.as_ptr(),
                tweak.len(),
                b.as_mut_ptr(),
                b.len(),
            )
        };
        assert_eq!(st, PqkitStatus::Ok);
        assert_eq!(b, pt);
    }
}

#[test]
fn skein512_matches_skein_1_3_appendix_c() {
    let desc = |n: usize| (0..n).map(|i| 0xFF - i as u8).collect::<Vec<u8>>();
    for (msg, want) in [
        (
            desc(1),
            "71b7bce6fe6452227b9ced6014249e5bf9a9754c3ad618ccc4e0aae16b316cc8\
             ca698d864307ed3e80b6ef1570812ac5272dc409b5a012df2a579102f340617a",
        ),
        (
            desc(64),
            "45863ba3be0c4dfc27e75d358496f4ac9a736a505d9313b42b2f5eada79fc17f\
             63861e947afb1d056aa199575ad3f8c9a3cc1780b5e5fa4cae050e989876625b",
        ),
    ] {
        let mut out = [0u8; 64];
        // SAFETY: live slices.
        assert_eq!(unsafe { pqkit_skein512(msg.as_ptr(), msg.len(), out.as_mut_ptr(), 64) }, PqkitStatus::Ok);
        assert_eq!(hex::encode(out), want);
    }
}

#[test]
fn shake_incremental_equals_fips_202_and_one_shot() {
    for (alg, empty) in [
        (1u32, "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26"),
        (2u32, "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f"),
    ] {
        let mut x = core::ptr::null_mut();
        // SAFETY: an out-pointer; then a live handle and slices.
        unsafe {
            assert_eq!(pqkit_xof_new(alg, &mut x), PqkitStatus::Ok);
            let mut out = [0u8; 32];
            assert_eq!(pqkit_xof_squeeze(x, out.as_mut_ptr(), 32), PqkitStatus::Ok);
            assert_eq!(hex::encode(out), empty);
            pqkit_xof_free(x);
        }
        // 1000 bytes absorbed in uneven pieces and 500 squeezed in uneven pieces equal the one-shot XOF.
        let msg: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut want = vec![0u8; 500];
        // SAFETY: live slices.
        assert_eq!(unsafe { pqkit_xof(alg, msg.as_ptr(), msg.len(), want.as_mut_ptr(), 500) }, PqkitStatus::Ok);
        let mut got = vec![0u8; 500];
        // SAFETY: an out-pointer, then a live handle and slices within bounds.
        unsafe {
            assert_eq!(pqkit_xof_new(alg, &mut x), PqkitStatus::Ok);
            let mut at = 0;
            for piece in [0usize, 1, 135, 136, 137, 168, 400, 23] {
                assert_eq!(pqkit_xof_update(x, msg[at..].as_ptr(), piece), PqkitStatus::Ok);
                at += piece;
            }
            assert_eq!(at, 1000);
            let mut at = 0;
            for piece in [1usize, 0, 167, 168, 100, 64] {
                assert_eq!(pqkit_xof_squeeze(x, got[at..].as_mut_ptr(), piece), PqkitStatus::Ok);
                at += piece;
            }
            assert_eq!(at, 500);
            assert_eq!(pqkit_xof_update(x, msg.as_ptr(), 1), PqkitStatus::BadState);
            pqkit_xof_free(x);
        }
        assert_eq!(got, want);
    }
}
