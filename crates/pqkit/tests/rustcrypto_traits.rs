//! The RustCrypto traits on pqkit's types (feature `rustcrypto`).
//!
//! Every check goes through a generic function written only against the traits, run once over pqkit's type and
//! once over the RustCrypto crate for the same algorithm; the bytes must be equal. Where no RustCrypto crate has
//! the algorithm (Kusumi512, Kusumi512-Poly1305) the other side is pqkit's native API, and Threefish-512-CTR is
//! built by hand from the `threefish` block cipher. Rejections (bad tag, wrong length, counter exhaustion, bad
//! signature, bad key) are checked through the traits too.
//!
//! Run with `cargo test -p pqkit --features rustcrypto --test rustcrypto_traits`.

use pqkit::rustcrypto::aead::{self, AeadInOut, KeyInit};
use pqkit::rustcrypto::cipher::{self, KeyIvInit, StreamCipher, StreamCipherSeek};
use pqkit::rustcrypto::digest::{Digest, ExtendableOutput, Mac, Update, XofReader};
use pqkit::rustcrypto::kem::{Decapsulate, Encapsulate, FromSeed, Kem, KeyExport, TryDecapsulate, TryKeyInit};
use pqkit::rustcrypto::signature::{Keypair, RandomizedSigner, SignatureEncoding, Signer, Verifier};
use rand_core::{Rng, SeedableRng};

type TestRng = pqkit::rng::ChaCha20Rng;

fn rng(seed: u8) -> TestRng {
    TestRng::from_seed([seed; 32])
}

fn bytes(rng: &mut TestRng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

/// Lengths around block boundaries of every algorithm here (16, 64, 100, 128, 136, 168), and a few large ones.
fn lengths() -> Vec<usize> {
    let mut v: Vec<usize> = (0..=130).collect();
    v.extend([135, 136, 137, 167, 168, 169, 199, 200, 201, 255, 256, 257, 511, 1000, 4095, 4096, 4097, 65537]);
    v
}

// ------------------------------------------------------------------------------------------------------------
// AEAD (aead 0.6)

fn aead_seal<A: AeadInOut + KeyInit>(key: &[u8], nonce: &[u8], aad: &[u8], msg: &[u8]) -> Vec<u8> {
    let a = A::new_from_slice(key).expect("key length");
    let mut buf = msg.to_vec();
    a.encrypt_in_place(&aead::Nonce::<A>::try_from(nonce).expect("nonce length"), aad, &mut buf).expect("seal");
    buf
}

/// Buffer-to-buffer seal through `encrypt_inout_detached`: (ciphertext, tag).
fn aead_seal_b2b<A: AeadInOut + KeyInit>(key: &[u8], nonce: &[u8], aad: &[u8], msg: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let a = A::new_from_slice(key).expect("key length");
    let mut out = vec![0u8; msg.len()];
    let buf = aead::inout::InOutBuf::new(msg, &mut out).expect("equal lengths");
    let tag = a.encrypt_inout_detached(&aead::Nonce::<A>::try_from(nonce).unwrap(), aad, buf).expect("seal");
    (out, tag.to_vec())
}

/// Opens `sealed` in place; on failure returns the error and what the buffer holds afterwards.
fn aead_open<A: AeadInOut + KeyInit>(
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    sealed: &[u8],
) -> Result<Vec<u8>, (aead::Error, Vec<u8>)> {
    let a = A::new_from_slice(key).expect("key length");
    let mut buf = sealed.to_vec();
    match a.decrypt_in_place(&aead::Nonce::<A>::try_from(nonce).unwrap(), aad, &mut buf) {
        Ok(()) => Ok(buf),
        Err(e) => Err((e, buf)),
    }
}

/// The `Aead` convenience trait (Vec in, Vec out), which the trait crate derives from `AeadInOut`.
fn aead_vec_roundtrip<A: aead::Aead + KeyInit>(key: &[u8], nonce: &[u8], aad: &[u8], msg: &[u8]) -> Vec<u8> {
    let a = A::new_from_slice(key).unwrap();
    let n = aead::Nonce::<A>::try_from(nonce).unwrap();
    let sealed = a.encrypt(&n, aead::Payload { msg, aad }).unwrap();
    assert_eq!(a.decrypt(&n, aead::Payload { msg: &sealed, aad }).unwrap(), msg);
    sealed
}

fn aead_differential<Ours: AeadInOut + KeyInit, Theirs: AeadInOut + KeyInit>(seed: u8) {
    let mut r = rng(seed);
    let (klen, nlen) = (Ours::key_size(), <Ours as aead::AeadCore>::NonceSize::USIZE);
    assert_eq!((klen, nlen), (Theirs::key_size(), <Theirs as aead::AeadCore>::NonceSize::USIZE));
    let mut cases = 0;
    for len in lengths() {
        let key = bytes(&mut r, klen);
        let nonce = bytes(&mut r, nlen);
        let aad_len = (r.next_u32() % 70) as usize;
        let aad = bytes(&mut r, aad_len);
        let msg = bytes(&mut r, len);
        let ours = aead_seal::<Ours>(&key, &nonce, &aad, &msg);
        let theirs = aead_seal::<Theirs>(&key, &nonce, &aad, &msg);
        assert_eq!(ours, theirs, "seal, len {len}");
        let (ct, tag) = aead_seal_b2b::<Ours>(&key, &nonce, &aad, &msg);
        assert_eq!([ct, tag].concat(), theirs, "b2b seal, len {len}");
        assert_eq!(aead_open::<Ours>(&key, &nonce, &aad, &theirs).map_err(|e| e.0).unwrap(), msg);
        assert_eq!(aead_open::<Theirs>(&key, &nonce, &aad, &ours).map_err(|e| e.0).unwrap(), msg);
        if len < 300 {
            assert_eq!(aead_vec_roundtrip::<Ours>(&key, &nonce, &aad, &msg), theirs);
        }
        cases += 1;
    }
    assert!(cases > 100);
}

/// Every rejection through the traits: a flipped bit anywhere (ciphertext, tag), other associated data, a
/// buffer shorter than a tag, a key of the wrong length. The buffer never holds plaintext afterwards.
fn aead_rejections<A: AeadInOut + KeyInit>(seed: u8) {
    let mut r = rng(seed);
    let key = bytes(&mut r, A::key_size());
    let nonce = bytes(&mut r, <A as aead::AeadCore>::NonceSize::USIZE);
    let msg = bytes(&mut r, 77);
    let sealed = aead_seal::<A>(&key, &nonce, b"ad", &msg);
    for i in [0, 40, 76, 77, 92] {
        let mut bad = sealed.clone();
        bad[i] ^= 0x10;
        let (_, after) = aead_open::<A>(&key, &nonce, b"ad", &bad).expect_err("modified message must not open");
        assert_eq!(after, bad, "after a failed open the buffer holds the ciphertext it was given (byte {i})");
    }
    assert!(aead_open::<A>(&key, &nonce, b"AD", &sealed).is_err(), "other associated data");
    let mut other_nonce = nonce.clone();
    other_nonce[0] ^= 1;
    assert!(aead_open::<A>(&key, &other_nonce, b"ad", &sealed).is_err(), "other nonce");
    for short in [0, 1, 15] {
        assert!(aead_open::<A>(&key, &nonce, b"ad", &sealed[..short]).is_err(), "{short}-byte buffer");
    }
    assert_eq!(A::new_from_slice(&key[1..]).err(), Some(aead::common::InvalidLength));
    let mut longer = key.clone();
    longer.push(0);
    assert!(A::new_from_slice(&longer).is_err());
}

use pqkit::rustcrypto::crypto_common::typenum::Unsigned;

#[test]
fn aead_chacha20poly1305_matches_rustcrypto() {
    aead_differential::<pqkit::aead::ChaCha20Poly1305, chacha20poly1305::ChaCha20Poly1305>(1);
    aead_rejections::<pqkit::aead::ChaCha20Poly1305>(2);
}

#[test]
fn aead_xchacha20poly1305_matches_rustcrypto() {
    aead_differential::<pqkit::aead::XChaCha20Poly1305, chacha20poly1305::XChaCha20Poly1305>(3);
    aead_rejections::<pqkit::aead::XChaCha20Poly1305>(4);
}

#[test]
fn aead_aes128gcm_matches_rustcrypto() {
    aead_differential::<pqkit::aead::Aes128Gcm, aes_gcm::Aes128Gcm>(5);
    aead_rejections::<pqkit::aead::Aes128Gcm>(6);
}

#[test]
fn aead_aes256gcm_matches_rustcrypto() {
    aead_differential::<pqkit::aead::Aes256Gcm, aes_gcm::Aes256Gcm>(7);
    aead_rejections::<pqkit::aead::Aes256Gcm>(8);
}

/// No RustCrypto crate has Kusumi512-Poly1305: the trait path must equal pqkit's native API (which its own
/// tests check against the specification's vectors).
#[test]
fn aead_kusumi512poly1305_matches_native_api() {
    use pqkit::aead::Aead as _;
    let mut r = rng(9);
    for len in lengths() {
        let key = bytes(&mut r, 64);
        let nonce = bytes(&mut r, 12);
        let aad = bytes(&mut r, len % 33);
        let msg = bytes(&mut r, len);
        let native = pqkit::aead::Kusumi512Poly1305::new(&key).unwrap().seal(&nonce, &aad, &msg).unwrap();
        assert_eq!(aead_seal::<pqkit::aead::Kusumi512Poly1305>(&key, &nonce, &aad, &msg), native, "len {len}");
        let (ct, tag) = aead_seal_b2b::<pqkit::aead::Kusumi512Poly1305>(&key, &nonce, &aad, &msg);
        assert_eq!([ct, tag].concat(), native);
        assert_eq!(
            aead_open::<pqkit::aead::Kusumi512Poly1305>(&key, &nonce, &aad, &native).map_err(|e| e.0).unwrap(),
            msg
        );
    }
    aead_rejections::<pqkit::aead::Kusumi512Poly1305>(10);
}

/// AES-GCM keys made through `KeyInit` take 12-byte nonces only: the trait's nonce type is 12 bytes, and the
/// key behaves as one from the native `new`.
#[test]
fn aead_aes_gcm_keyinit_is_the_12_byte_nonce_key() {
    let k = <pqkit::aead::Aes256Gcm as KeyInit>::new(&[1u8; 32].into());
    assert!(!k.accepts_any_nonce_length());
    assert_eq!(<pqkit::aead::Aes256Gcm as aead::AeadCore>::NonceSize::USIZE, 12);
}

// ------------------------------------------------------------------------------------------------------------
// Stream ciphers (cipher 0.5)

/// Applies the keystream to `data` in pieces of the given sizes (cycled), from position 0.
fn stream_apply<C: KeyIvInit + StreamCipher>(key: &[u8], iv: &[u8], data: &[u8], pieces: &[usize]) -> Vec<u8> {
    let mut c = C::new_from_slices(key, iv).expect("key and IV lengths");
    let mut out = data.to_vec();
    let mut rest = &mut out[..];
    for &n in pieces.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let n = n.min(rest.len());
        let (head, tail) = rest.split_at_mut(n);
        c.try_apply_keystream(head).expect("keystream available");
        rest = tail;
    }
    out
}

/// Seeks to `pos`, applies the keystream buffer-to-buffer to `len` zero bytes, and reports the position after.
fn stream_seek<C: KeyIvInit + StreamCipher + StreamCipherSeek>(
    key: &[u8],
    iv: &[u8],
    pos: u64,
    len: usize,
) -> (Vec<u8>, u64) {
    let mut c = C::new_from_slices(key, iv).unwrap();
    c.try_seek(pos).expect("seek");
    assert_eq!(c.try_current_pos::<u64>().unwrap(), pos);
    let input = vec![0u8; len];
    let mut out = vec![0u8; len];
    c.try_apply_keystream_b2b(&input, &mut out).unwrap();
    (out, c.current_pos::<u64>())
}

const PIECES: [&[usize]; 5] = [&[usize::MAX], &[1], &[63, 1, 64, 65], &[7, 100, 3], &[99, 101, 200]];

fn stream_differential<Ours, Theirs>(seed: u8, max_seek: u64)
where
    Ours: KeyIvInit + StreamCipher + StreamCipherSeek,
    Theirs: KeyIvInit + StreamCipher + StreamCipherSeek,
{
    let mut r = rng(seed);
    let (klen, ivlen) = (Ours::key_size(), Ours::iv_size());
    assert_eq!((klen, ivlen), (Theirs::key_size(), Theirs::iv_size()));
    for len in lengths() {
        let key = bytes(&mut r, klen);
        let iv = bytes(&mut r, ivlen);
        let data = bytes(&mut r, len);
        let pieces = PIECES[len % PIECES.len()];
        let ours = stream_apply::<Ours>(&key, &iv, &data, pieces);
        assert_eq!(ours, stream_apply::<Theirs>(&key, &iv, &data, &[usize::MAX]), "len {len}, pieces {pieces:?}");
        if len > 0 {
            assert_ne!(ours, data, "the keystream changed nothing (len {len})");
        }
        let pos = r.next_u64() % max_seek;
        let seek_len = len.min(300);
        let (ks, end) = stream_seek::<Ours>(&key, &iv, pos, seek_len);
        assert_eq!((ks, end), stream_seek::<Theirs>(&key, &iv, pos, seek_len), "seek to {pos}, {seek_len} bytes");
        assert_eq!(end, pos + seek_len as u64);
    }
}

#[test]
fn stream_chacha20_matches_rustcrypto() {
    stream_differential::<pqkit::chacha::ChaCha20, chacha20::ChaCha20>(20, 1 << 37);
}

#[test]
fn stream_xchacha20_matches_rustcrypto() {
    stream_differential::<pqkit::chacha::XChaCha20, chacha20::XChaCha20>(21, 1 << 37);
}

#[test]
fn stream_chacha20_legacy_matches_rustcrypto() {
    stream_differential::<pqkit::chacha::ChaCha20Legacy, chacha20::ChaCha20Legacy>(22, 1 << 37);
}

/// Threefish-512-CTR as built from the `threefish` crate's block cipher: block i is
/// Threefish-512(key, tweak = nonce) of the 64-byte little-endian counter i.
#[test]
fn stream_threefish512_ctr_matches_threefish_block_cipher() {
    use cipher::BlockCipherEncrypt;
    let mut r = rng(23);
    for len in lengths() {
        let key = bytes(&mut r, 64);
        let nonce = bytes(&mut r, 16);
        let start = r.next_u64() % 1000;
        let bc = threefish::Threefish512::new_with_tweak(
            key.as_slice().try_into().unwrap(),
            nonce.as_slice().try_into().unwrap(),
        );
        // Seek to a position in block `start`, not on a block boundary unless start % 64 == 0.
        let pos = start * 64 + start % 64;
        let mut expected_ks = vec![0u8; len];
        let mut bc_block = pos / 64;
        let mut got = 0;
        let mut off = (pos % 64) as usize;
        while got < len {
            let mut b = [0u8; 64];
            b[..8].copy_from_slice(&bc_block.to_le_bytes());
            let mut arr = cipher::Array::from(b);
            bc.encrypt_block(&mut arr);
            let n = (64 - off).min(len - got);
            expected_ks[got..got + n].copy_from_slice(&arr[off..off + n]);
            got += n;
            off = 0;
            bc_block += 1;
        }
        let (ks, end) = stream_seek::<pqkit::threefish::Threefish512Ctr>(&key, &nonce, pos, len);
        assert_eq!(ks, expected_ks, "seek {pos}, len {len}");
        assert_eq!(end, pos + len as u64);
        let data = bytes(&mut r, len);
        let whole: Vec<u8> = {
            let mut e = Vec::new();
            for i in 0..(len as u64).div_ceil(64) {
                let mut b = [0u8; 64];
                b[..8].copy_from_slice(&i.to_le_bytes());
                let mut arr = cipher::Array::from(b);
                bc.encrypt_block(&mut arr);
                e.extend_from_slice(&arr);
            }
            data.iter().zip(&e).map(|(d, k)| d ^ k).collect()
        };
        let pieces = PIECES[len % PIECES.len()];
        assert_eq!(stream_apply::<pqkit::threefish::Threefish512Ctr>(&key, &nonce, &data, pieces), whole, "len {len}");
    }
}

/// The trait path equals the native API (`new(key, nonce)`, `apply_keystream`, `seek`), in pieces and after
/// seeks: for the ciphers no RustCrypto crate has (Kusumi512; ChaCha12 and ChaCha8 in the legacy layout).
fn stream_matches_native<C>(seed: u8, native_new: fn(&[u8], &[u8]) -> C)
where
    C: KeyIvInit + StreamCipher + StreamCipherSeek + pqkit::cipher::StreamCipher,
{
    use pqkit::cipher::StreamCipher as Native;
    let mut r = rng(seed);
    for len in lengths() {
        let key = bytes(&mut r, C::key_size());
        let iv = bytes(&mut r, C::iv_size());
        let data = bytes(&mut r, len);
        let mut native = native_new(&key, &iv);
        let mut expected = data.clone();
        Native::apply_keystream(&mut native, &mut expected).unwrap();
        let pieces = PIECES[len % PIECES.len()];
        assert_eq!(stream_apply::<C>(&key, &iv, &data, pieces), expected, "len {len}");
        let pos = r.next_u64() % (1 << 40);
        let mut native = native_new(&key, &iv);
        Native::seek(&mut native, pos).unwrap();
        let mut ks = vec![0u8; len.min(300)];
        Native::apply_keystream(&mut native, &mut ks).unwrap();
        assert_eq!(stream_seek::<C>(&key, &iv, pos, ks.len()).0, ks);
    }
}

#[test]
fn stream_kusumi512_and_reduced_chacha_match_native_api() {
    stream_matches_native(24, |k, n| pqkit::kusumi::Kusumi512::new(k, n).unwrap());
    stream_matches_native(25, |k, n| pqkit::chacha::ChaCha12::new(k, n).unwrap());
    stream_matches_native(26, |k, n| pqkit::chacha::ChaCha8::new(k, n).unwrap());
}

/// The end of ChaCha20's 32-bit counter through the traits: the last bytes are usable and equal the native
/// keystream of block 2^32 − 1; one byte more is refused before any data changes; seeking past the end, to a
/// negative position, or reading a position that does not fit the asked type fails; the unchecked method
/// panics rather than wrap.
#[test]
fn stream_chacha20_counter_end_through_the_traits() {
    use pqkit::cipher::StreamCipher as Native;
    let (key, iv) = ([9u8; 32], [3u8; 12]);
    let end: u64 = (1 << 32) * 64;
    let mut c = <pqkit::chacha::ChaCha20 as KeyIvInit>::new(&key.into(), &iv.into());
    c.try_seek(end - 10).unwrap();
    assert!(c.check_remaining(10).is_ok());
    assert!(c.check_remaining(11).is_err());
    let mut tail = [0u8; 10];
    c.try_apply_keystream(&mut tail).unwrap();
    let mut native = pqkit::chacha::ChaCha20::new_with_counter(&key, &iv, u32::MAX).unwrap();
    let mut last_block = [0u8; 64];
    Native::apply_keystream(&mut native, &mut last_block).unwrap();
    assert_eq!(tail, last_block[54..]);
    assert_eq!(c.current_pos::<u64>(), end);
    let mut one = [0x55u8; 1];
    assert!(c.try_apply_keystream(&mut one).is_err());
    assert_eq!(one, [0x55], "a refused call leaves the data untouched");
    assert!(c.try_write_keystream(&mut one).is_err());
    assert_eq!(c.current_pos::<u64>(), end, "and the position");
    assert!(c.try_current_pos::<u32>().is_err(), "2^38 does not fit a u32");
    assert!(c.try_current_pos::<i32>().is_err());
    assert!(c.try_seek(end + 1).is_err());
    assert!(c.try_seek(-1i32).is_err());
    assert_eq!(c.current_pos::<u64>(), end, "failed seeks change nothing");
    c.try_seek(5u32).unwrap();
    assert_eq!(c.current_pos::<u32>(), 5);
    c.try_seek(end).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut b = [0u8; 1];
        c.unchecked_apply_keystream(&mut b);
    }));
    assert!(panicked.is_err(), "unchecked application past the end must panic, not wrap");
    // RustCrypto's own cipher keeps the last block back; pqkit's range is one block longer.
    let mut theirs = <chacha20::ChaCha20 as KeyIvInit>::new(&key.into(), &iv.into());
    assert!(theirs.try_seek(end - 10).is_err() || theirs.check_remaining(10).is_err());
}

/// `new_from_slices` refuses wrong key and IV lengths.
#[test]
fn stream_wrong_lengths_through_the_traits() {
    assert!(pqkit::chacha::ChaCha20::new_from_slices(&[0; 31], &[0; 12]).is_err());
    assert!(pqkit::chacha::ChaCha20::new_from_slices(&[0; 32], &[0; 13]).is_err());
    assert!(pqkit::chacha::XChaCha20::new_from_slices(&[0; 32], &[0; 12]).is_err());
    assert!(pqkit::kusumi::Kusumi512::new_from_slices(&[0; 32], &[0; 12]).is_err());
    assert!(pqkit::threefish::Threefish512Ctr::new_from_slices(&[0; 64], &[0; 12]).is_err());
    let mut c = pqkit::chacha::ChaCha20::new_from_slices(&[0; 32], &[0; 12]).unwrap();
    let mut out = [0u8; 3];
    assert!(c.try_apply_keystream_b2b(&[0u8; 4], &mut out).is_err(), "unequal buffers");
    assert_eq!(c.current_pos::<u64>(), 0);
}

// ------------------------------------------------------------------------------------------------------------
// Hashes, XOFs, HMAC (digest 0.11)

/// Hashes `data` fed in pieces, then again after `finalize_reset`, and checks both agree with `D::digest`.
fn hash_pieces<D: Digest + pqkit::rustcrypto::digest::FixedOutputReset>(data: &[u8], pieces: &[usize]) -> Vec<u8> {
    let mut d = D::new();
    let mut rest = data;
    for &n in pieces.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let n = n.min(rest.len());
        Digest::update(&mut d, &rest[..n]);
        rest = &rest[n..];
    }
    let first = d.finalize_reset().to_vec();
    Digest::update(&mut d, data);
    assert_eq!(d.finalize().to_vec(), first, "after finalize_reset");
    assert_eq!(D::digest(data).to_vec(), first);
    assert_eq!(<D as Digest>::output_size(), first.len());
    first
}

fn hash_differential<Ours, Theirs>(seed: u8)
where
    Ours: Digest + pqkit::rustcrypto::digest::FixedOutputReset,
    Theirs: Digest + pqkit::rustcrypto::digest::FixedOutputReset,
{
    let mut r = rng(seed);
    for len in lengths() {
        let data = bytes(&mut r, len);
        let pieces = PIECES[len % PIECES.len()];
        assert_eq!(hash_pieces::<Ours>(&data, pieces), hash_pieces::<Theirs>(&data, &[usize::MAX]), "len {len}");
    }
}

#[test]
fn digest_sha2_family_matches_rustcrypto() {
    use pqkit::hash::sha2 as ours;
    hash_differential::<ours::Sha224, sha2_011::Sha224>(30);
    hash_differential::<ours::Sha256, sha2_011::Sha256>(31);
    hash_differential::<ours::Sha384, sha2_011::Sha384>(32);
    hash_differential::<ours::Sha512, sha2_011::Sha512>(33);
    hash_differential::<ours::Sha512_224, sha2_011::Sha512_224>(34);
    hash_differential::<ours::Sha512_256, sha2_011::Sha512_256>(35);
}

#[test]
fn digest_sha3_family_matches_rustcrypto() {
    use pqkit::hash::sha3 as ours;
    hash_differential::<ours::Sha3_224, sha3_012::Sha3_224>(36);
    hash_differential::<ours::Sha3_256, sha3_012::Sha3_256>(37);
    hash_differential::<ours::Sha3_384, sha3_012::Sha3_384>(38);
    hash_differential::<ours::Sha3_512, sha3_012::Sha3_512>(39);
}

#[test]
fn digest_blake2_matches_rustcrypto() {
    hash_differential::<pqkit::hash::blake2::Blake2b512, blake2_011::Blake2b512>(40);
    hash_differential::<pqkit::hash::blake2::Blake2s256, blake2_011::Blake2s256>(41);
}

#[test]
fn digest_skein512_matches_rustcrypto() {
    hash_differential::<pqkit::hash::skein::Skein512_256, skein::Skein512_256>(42);
    hash_differential::<pqkit::hash::skein::Skein512_512, skein::Skein512_512>(43);
}

/// Reads `out_len` bytes of XOF output in pieces.
fn xof_read<X: Default + Update + ExtendableOutput>(data: &[u8], out_len: usize, pieces: &[usize]) -> Vec<u8> {
    let mut x = X::default();
    Update::update(&mut x, data);
    let mut reader = x.finalize_xof();
    let mut out = vec![0u8; out_len];
    let mut rest = &mut out[..];
    for &n in pieces.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let n = n.min(rest.len());
        let (head, tail) = rest.split_at_mut(n);
        reader.read(head);
        rest = tail;
    }
    out
}

#[test]
fn xof_shake_matches_rustcrypto() {
    let mut r = rng(44);
    for len in lengths() {
        let data = bytes(&mut r, len);
        let out_len = [1, 32, 167, 168, 169, 500, 1000][len % 7];
        let pieces = PIECES[len % PIECES.len()];
        assert_eq!(
            xof_read::<pqkit::hash::sha3::Shake128>(&data, out_len, pieces),
            xof_read::<shake::Shake128>(&data, out_len, &[usize::MAX]),
            "SHAKE128 len {len}"
        );
        assert_eq!(
            xof_read::<pqkit::hash::sha3::Shake256>(&data, out_len, pieces),
            xof_read::<shake::Shake256>(&data, out_len, &[usize::MAX]),
            "SHAKE256 len {len}"
        );
    }
}

fn mac_tag<M: Mac + KeyInit>(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = <M as KeyInit>::new_from_slice(key).expect("HMAC takes keys of any length");
    Mac::update(&mut m, data);
    m.finalize().into_bytes().to_vec()
}

fn mac_verify<M: Mac + KeyInit>(key: &[u8], data: &[u8], tag: &[u8]) -> bool {
    let mut m = <M as KeyInit>::new_from_slice(key).unwrap();
    Mac::update(&mut m, data);
    m.verify_slice(tag).is_ok()
}

fn hmac_differential<Ours: Mac + KeyInit, Theirs: Mac + KeyInit>(seed: u8) {
    let mut r = rng(seed);
    for len in lengths() {
        // Keys shorter than, equal to and longer than the block (hashed first).
        let key = bytes(&mut r, [0, 1, 20, 32, 64, 65, 128, 129, 200][len % 9]);
        let data = bytes(&mut r, len);
        let ours = mac_tag::<Ours>(&key, &data);
        assert_eq!(ours, mac_tag::<Theirs>(&key, &data), "len {len}, key {}", key.len());
        assert!(mac_verify::<Ours>(&key, &data, &ours));
        let mut bad = ours.clone();
        let at = len % bad.len();
        bad[at] ^= 1;
        assert!(!mac_verify::<Ours>(&key, &data, &bad), "a modified tag must not verify");
        assert!(!mac_verify::<Ours>(&key, &data, &ours[..ours.len() - 1]), "a short tag must not verify");
    }
}

#[test]
fn mac_hmac_matches_rustcrypto() {
    use pqkit::hash::{sha2 as s2, sha3 as s3};
    use pqkit::mac::Hmac;
    hmac_differential::<Hmac<s2::Sha256>, hmac_013::Hmac<sha2_011::Sha256>>(50);
    hmac_differential::<Hmac<s2::Sha384>, hmac_013::Hmac<sha2_011::Sha384>>(51);
    hmac_differential::<Hmac<s2::Sha512>, hmac_013::Hmac<sha2_011::Sha512>>(52);
    hmac_differential::<Hmac<s3::Sha3_256>, hmac_013::SimpleHmac<sha3_012::Sha3_256>>(53);
}

/// `finalize_reset` / `reset` keep the key and forget the data.
#[test]
fn mac_hmac_reset_keeps_the_key() {
    use pqkit::mac::Hmac;
    type H = Hmac<pqkit::hash::sha2::Sha256>;
    let mut m = <H as KeyInit>::new_from_slice(b"key").unwrap();
    Mac::update(&mut m, b"first");
    let t1 = Mac::finalize_reset(&mut m).into_bytes();
    Mac::update(&mut m, b"junk");
    Mac::reset(&mut m);
    Mac::update(&mut m, b"first");
    assert_eq!(Mac::finalize(m).into_bytes(), t1);
    assert_eq!(t1.to_vec(), mac_tag::<hmac_013::Hmac<sha2_011::Sha256>>(b"key", b"first"));
}

// ------------------------------------------------------------------------------------------------------------
// Signatures (signature 3.0)

fn sign_bytes<K: Signer<S>, S: SignatureEncoding>(key: &K, msg: &[u8]) -> Vec<u8> {
    key.try_sign(msg).expect("sign").to_bytes().as_ref().to_vec()
}

/// Parses `sig` as `S` and verifies it; `false` for a parse failure or a failed verification.
fn verify_bytes<V: Verifier<S>, S: SignatureEncoding>(key: &V, msg: &[u8], sig: &[u8]) -> bool {
    match S::try_from(sig) {
        Ok(s) => key.verify(msg, &s).is_ok(),
        Err(_) => false,
    }
}

fn randomized_sign_bytes<K: RandomizedSigner<S>, S: SignatureEncoding>(key: &K, seed: u8, msg: &[u8]) -> Vec<u8> {
    key.try_sign_with_rng(&mut rng(seed), msg).expect("sign").to_bytes().as_ref().to_vec()
}

/// Deterministic signatures equal byte for byte, and each side verifies the other's; a modified signature or
/// message, or a truncated signature, is refused by both.
#[allow(clippy::too_many_arguments)]
fn signature_differential<OK, OV, OS, TK, TV, TS>(
    ours: &OK,
    ours_vk: &OV,
    theirs: &TK,
    theirs_vk: &TV,
    seed: u8,
    deterministic: bool,
) where
    OK: Signer<OS>,
    OV: Verifier<OS>,
    OS: SignatureEncoding,
    TK: Signer<TS>,
    TV: Verifier<TS>,
    TS: SignatureEncoding,
{
    let mut r = rng(seed);
    for len in [0usize, 1, 31, 32, 33, 64, 200, 1000] {
        let msg = bytes(&mut r, len);
        let a = sign_bytes::<OK, OS>(ours, &msg);
        let b = sign_bytes::<TK, TS>(theirs, &msg);
        if deterministic {
            assert_eq!(a, b, "signature of a {len}-byte message");
        }
        assert!(verify_bytes::<OV, OS>(ours_vk, &msg, &a) && verify_bytes::<OV, OS>(ours_vk, &msg, &b));
        assert!(verify_bytes::<TV, TS>(theirs_vk, &msg, &a), "theirs verifies ours");
        for (i, sig) in [&a, &b].into_iter().enumerate() {
            let mut bad = sig.clone();
            let at = (len * 7 + i) % bad.len();
            bad[at] ^= 0x04;
            assert!(!verify_bytes::<OV, OS>(ours_vk, &msg, &bad), "modified signature byte {at}");
            assert!(!verify_bytes::<TV, TS>(theirs_vk, &msg, &bad));
            assert!(!verify_bytes::<OV, OS>(ours_vk, &msg, &sig[..sig.len() - 1]), "truncated signature");
            let mut other = msg.clone();
            other.push(1);
            assert!(!verify_bytes::<OV, OS>(ours_vk, &other, sig), "other message");
        }
    }
}

fn verifying_key_of<K: Keypair>(k: &K) -> K::VerifyingKey {
    k.verifying_key()
}

#[test]
fn signature_mldsa_matches_rustcrypto() {
    fn run<P, Q>(seed: u8)
    where
        P: pqkit::mldsa::Params,
        Q: ml_dsa::MlDsaParams,
        pqkit::mldsa::Signature<P>: SignatureEncoding,
    {
        let xi = [seed; 32];
        let (sk, _) = pqkit::mldsa::SigningKey::<P>::from_seed(&xi);
        let vk = verifying_key_of(&sk);
        let theirs = ml_dsa::SigningKey::<Q>::from_seed(&xi.into());
        let theirs_vk = verifying_key_of(&theirs);
        assert_eq!(vk.as_bytes(), theirs_vk.encode().as_slice(), "same public key from the same seed");
        signature_differential(&sk, &vk, &theirs, &theirs_vk, seed, true);
        // Hedged signing through RandomizedSigner: verifies on both sides, differs from the deterministic one.
        let h = randomized_sign_bytes::<_, pqkit::mldsa::Signature<P>>(&sk, seed, b"msg");
        assert!(verify_bytes::<_, pqkit::mldsa::Signature<P>>(&vk, b"msg", &h));
        assert!(verify_bytes::<_, ml_dsa::Signature<Q>>(&theirs_vk, b"msg", &h));
        assert_ne!(h, sign_bytes::<_, pqkit::mldsa::Signature<P>>(&sk, b"msg"));
    }
    run::<pqkit::mldsa::MlDsa44, ml_dsa::MlDsa44>(60);
    run::<pqkit::mldsa::MlDsa65, ml_dsa::MlDsa65>(61);
    run::<pqkit::mldsa::MlDsa87, ml_dsa::MlDsa87>(62);
}

#[test]
fn signature_ed25519_matches_rustcrypto() {
    let seed = [63u8; 32];
    let sk = pqkit::ec::ed25519::SigningKey::from_seed(&seed);
    let theirs = ed25519_dalek::SigningKey::from_bytes(&seed);
    signature_differential(&sk, &verifying_key_of(&sk), &theirs, &verifying_key_of(&theirs), 63, true);
}

#[test]
fn signature_ecdsa_p256_matches_rustcrypto() {
    let d = bytes(&mut rng(64), 32);
    let sk = pqkit::ec::p256::SigningKey::from_bytes(&d).unwrap();
    let theirs = p256::ecdsa::SigningKey::from_slice(&d).unwrap();
    let theirs_vk = *theirs.verifying_key();
    signature_differential::<_, _, pqkit::ec::p256::Signature, _, _, p256::ecdsa::Signature>(
        &sk,
        &verifying_key_of(&sk),
        &theirs,
        &theirs_vk,
        64,
        true,
    );
    ecdsa_hedged_and_prehash::<pqkit::ec::p256::NistP256>(&sk);
}

#[test]
fn signature_ecdsa_secp256k1_matches_rustcrypto() {
    let d = bytes(&mut rng(65), 32);
    let sk = pqkit::ec::secp256k1::SigningKey::from_bytes(&d).unwrap();
    let theirs = k256::ecdsa::SigningKey::from_slice(&d).unwrap();
    let theirs_vk = *theirs.verifying_key();
    signature_differential::<_, _, pqkit::ec::secp256k1::Signature, _, _, k256::ecdsa::Signature>(
        &sk,
        &verifying_key_of(&sk),
        &theirs,
        &theirs_vk,
        65,
        true,
    );
    ecdsa_hedged_and_prehash::<pqkit::ec::secp256k1::Secp256k1>(&sk);
}

fn ecdsa_hedged_and_prehash<C: pqkit::ec::weierstrass::PrimeCurve>(sk: &pqkit::ec::weierstrass::SigningKey<C>) {
    use pqkit::rustcrypto::signature::hazmat::{PrehashSigner, PrehashVerifier};
    type Sig<C> = pqkit::ec::weierstrass::Signature<C>;
    let vk = verifying_key_of(sk);
    let h1 = randomized_sign_bytes::<_, Sig<C>>(sk, 1, b"msg");
    let h2 = randomized_sign_bytes::<_, Sig<C>>(sk, 2, b"msg");
    assert_ne!(h1, h2, "hedged signatures differ with the randomness");
    assert!(verify_bytes::<_, Sig<C>>(&vk, b"msg", &h1) && verify_bytes::<_, Sig<C>>(&vk, b"msg", &h2));
    let digest = pqkit::hash::sha2::Sha256::digest(b"msg");
    let p: Sig<C> = sk.sign_prehash(&digest).unwrap();
    assert_eq!(p.to_bytes().to_vec(), sign_bytes::<_, Sig<C>>(sk, b"msg"), "prehash of SHA-256(msg) = sign(msg)");
    assert!(vk.verify_prehash(&digest, &p).is_ok());
    assert!(vk.verify_prehash(&digest[..8], &p).is_err(), "a digest shorter than 16 bytes");
    assert!(PrehashSigner::<Sig<C>>::sign_prehash(sk, &digest[..15]).is_err());
}

/// RSA: one 2048-bit key shared with the `rsa` crate through PKCS#8. PKCS#1 v1.5 is deterministic (equal
/// bytes); PSS is salted, so each side verifies the other's.
#[test]
fn signature_rsa_matches_rustcrypto() {
    use pqkit::rsa::{RsaPrivateKey, pkcs1v15, pss};
    use rsa::pkcs8::DecodePrivateKey;
    let key = RsaPrivateKey::generate(2048, &mut rng(66)).unwrap();
    let theirs = rsa::PrivateKey::from_pkcs8_der(&key.to_pkcs8_der().unwrap()).unwrap();
    let ours = pkcs1v15::SigningKey::new(key.clone()).unwrap();
    let them = rsa::pkcs1v15::SigningKey::<rsa::sha2::Sha256>::new(theirs.clone());
    signature_differential::<_, _, pqkit::rustcrypto::RsaSignature, _, _, rsa::pkcs1v15::Signature>(
        &ours,
        &verifying_key_of(&ours),
        &them,
        &verifying_key_of(&them),
        66,
        true,
    );
    let ours = pss::SigningKey::new(key).unwrap();
    let them = rsa::pss::SigningKey::<rsa::sha2::Sha256>::new(theirs);
    signature_differential::<_, _, pqkit::rustcrypto::RsaSignature, _, _, rsa::pss::Signature>(
        &ours,
        &verifying_key_of(&ours),
        &them,
        &verifying_key_of(&them),
        67,
        false,
    );
    let salted = randomized_sign_bytes::<_, pqkit::rustcrypto::RsaSignature>(&ours, 5, b"msg");
    assert!(verify_bytes::<_, rsa::pss::Signature>(&verifying_key_of(&them), b"msg", &salted));
    assert_ne!(salted, randomized_sign_bytes::<_, pqkit::rustcrypto::RsaSignature>(&ours, 6, b"msg"));
}

/// An RNG that always fails.
struct Broken;

impl rand_core::TryRng for Broken {
    type Error = std::io::Error;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Err(std::io::Error::other("broken"))
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Err(std::io::Error::other("broken"))
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Self::Error> {
        Err(std::io::Error::other("broken"))
    }
}

impl rand_core::TryCryptoRng for Broken {}

/// A failing RNG makes randomized signing fail (and returns no signature).
#[test]
fn signature_failing_rng_is_an_error() {
    let (sk, _) = pqkit::mldsa::MlDsa44SigningKey::from_seed(&[1; 32]);
    assert!(RandomizedSigner::<pqkit::mldsa::MlDsa44Signature>::try_sign_with_rng(&sk, &mut Broken, b"m").is_err());
    let ec = pqkit::ec::p256::SigningKey::from_bytes(&[7; 32]).unwrap();
    assert!(RandomizedSigner::<pqkit::ec::p256::Signature>::try_sign_with_rng(&ec, &mut Broken, b"m").is_err());
    let rsa =
        pqkit::rsa::pss::SigningKey::new(pqkit::rsa::RsaPrivateKey::generate(2048, &mut rng(68)).unwrap()).unwrap();
    assert!(RandomizedSigner::<pqkit::rustcrypto::RsaSignature>::try_sign_with_rng(&rsa, &mut Broken, b"m").is_err());
}

// ------------------------------------------------------------------------------------------------------------
// KEM (kem 0.3)

/// Key pair from a 64-byte seed, encapsulation with a seeded RNG, decapsulation: (ek, ct, encapsulated key,
/// decapsulated key).
fn kem_run<K: Kem + FromSeed>(seed: &[u8], rng_seed: u8) -> (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>)
where
    K::EncapsulationKey: KeyExport,
{
    let (dk, ek) = K::from_seed(seed.try_into().expect("seed length"));
    let (ct, k) = ek.encapsulate_with_rng(&mut rng(rng_seed));
    let k2 = dk.try_decapsulate(&ct).expect("decapsulation");
    (ek.to_bytes().to_vec(), ct.to_vec(), k.to_vec(), k2.to_vec())
}

fn kem_decapsulate<K: Kem + FromSeed>(seed: &[u8], ct: &[u8]) -> Vec<u8> {
    let (dk, _) = K::from_seed(seed.try_into().unwrap());
    dk.try_decapsulate(&ct.try_into().expect("ciphertext length")).expect("decapsulation").to_vec()
}

fn kem_differential<Ours: Kem + FromSeed, Theirs: Kem + FromSeed>(seed: u8)
where
    Ours::EncapsulationKey: KeyExport,
    Theirs::EncapsulationKey: KeyExport,
{
    let mut r = rng(seed);
    for i in 0..8u8 {
        let s = bytes(&mut r, 64);
        let ours = kem_run::<Ours>(&s, i);
        let theirs = kem_run::<Theirs>(&s, i);
        assert_eq!(ours, theirs, "key pair, ciphertext and keys from the same seeds");
        assert_eq!(ours.2, ours.3, "decapsulation gives the encapsulated key");
        // Implicit rejection: a modified ciphertext gives the same pseudorandom key on both sides.
        let mut bad = ours.1.clone();
        bad[i as usize * 13] ^= 0x80;
        let rejected = kem_decapsulate::<Ours>(&s, &bad);
        assert_ne!(rejected, ours.2);
        assert_eq!(rejected, kem_decapsulate::<Theirs>(&s, &bad), "implicit rejection value");
    }
}

#[test]
fn kem_mlkem_matches_rustcrypto() {
    kem_differential::<pqkit::mlkem::MlKem512, ml_kem::MlKem512>(70);
    kem_differential::<pqkit::mlkem::MlKem768, ml_kem::MlKem768>(71);
    kem_differential::<pqkit::mlkem::MlKem1024, ml_kem::MlKem1024>(72);
}

/// Generate through the traits, the `Decapsulate` view, and the rejection of an encapsulation key whose
/// coefficient is not reduced modulo q.
#[test]
fn kem_mlkem_generate_and_bad_key() {
    use pqkit::mlkem::MlKem768;
    use pqkit::rustcrypto::crypto_common::Generate;
    use pqkit::rustcrypto::kem::Decapsulator;
    assert!(pqkit::rustcrypto::KemDecapsulationKey::<MlKem768>::try_generate_from_rng(&mut Broken).is_err());
    let dk = pqkit::rustcrypto::KemDecapsulationKey::<MlKem768>::generate_from_rng(&mut rng(73));
    assert_eq!(format!("{dk:?}"), "KemDecapsulationKey<ML-KEM-768> { .. }", "Debug shows no key material");
    let ek = dk.encapsulation_key().clone();
    let (ct, k) = ek.encapsulate_with_rng(&mut rng(74));
    assert_eq!(dk.decapsulate(&ct), k);
    assert_eq!(ek.as_bytes(), dk.decapsulation_key().encapsulation_key().as_bytes());
    let mut bad = ek.to_bytes();
    bad[0] = 0xff;
    bad[1] |= 0x0f; // first coefficient 0xfff >= q = 3329
    assert!(<pqkit::mlkem::EncapsulationKey<MlKem768> as TryKeyInit>::new(&bad).is_err());
    assert!(<pqkit::mlkem::EncapsulationKey<MlKem768> as TryKeyInit>::new_from_slice(&ek.as_bytes()[1..]).is_err());
    // The same key is refused by the RustCrypto crate.
    assert!(
        <ml_kem::EncapsulationKey<ml_kem::MlKem768> as TryKeyInit>::new(&bad.as_slice().try_into().unwrap()).is_err()
    );
}
