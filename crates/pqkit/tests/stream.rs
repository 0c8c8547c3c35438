//! The pqkit file format (`pqkit::aead::stream`, docs/file-format.md): known-answer files written by
//! `pqkit encrypt` before the format moved into the library, an independent reference encoder on RustCrypto's
//! AEADs, HKDF and Argon2, round trips through the `std::io` adapters with odd chunk sizes, the segment-level
//! API, and every rejection path, each checking the exact error and that no unauthenticated plaintext came out.

use aes_gcm::aead::{Aead as _, KeyInit, Payload};
use pqkit::Error;
use pqkit::aead::Aead;
use pqkit::aead::stream::{
    self, Algorithm, Decryptor, Encryptor, FileKey, Header, KeySource, SEGMENT_CT_LEN as SEG_CT, SEGMENT_LEN as SEG,
    errors,
};
use proptest::prelude::*;
use sha2::Digest;
use std::io::{self, ErrorKind, Read, Write};

const ALGS: [Algorithm; 3] = [Algorithm::XChaCha20Poly1305, Algorithm::Kusumi512Poly1305, Algorithm::Aes256Gcm];
/// The key file of the known-answer files: bytes 00..1f.
const KEY: [u8; 32] = {
    let mut k = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        k[i] = i as u8;
        i += 1;
    }
    k
};
/// The passphrase of the known-answer files.
const PASSPHRASE: &[u8] = b"correct horse battery staple";
const FOX: &[u8] = b"The quick brown fox jumps over the lazy dog";

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

/// The plaintext of the multi-segment vectors: byte i is `7 i + (i >> 11)` mod 256.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i.wrapping_mul(7) + (i >> 11)) as u8).collect()
}

/// Deterministic pseudo-random bytes.
fn data(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Src {
    Key,
    Pw,
}

struct Kat {
    alg: Algorithm,
    src: Src,
    pt: &'static [u8],
    header: &'static str,
    body: &'static str,
}

use Algorithm::{Aes256Gcm as G, Kusumi512Poly1305 as K, XChaCha20Poly1305 as X};

/// Files written by `pqkit encrypt` (debug build, `PQKIT_TEST_FIXED_RANDOM=kat`) before the format moved into
/// the library: key file [`KEY`], or passphrase [`PASSPHRASE`] with `--argon2-memory 64 --argon2-passes 2
/// --argon2-lanes 2`.
#[rustfmt::skip]
const KATS: [Kat; 12] = [
    Kat { alg: X, src: Src::Key, pt: b"", header: "50514b4954454e4301010110000000000000000000000000bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d2526d92ac794fa7ee8931153", body: "7de8ab4f3cde1b930e914acdcd95dc77" },
    Kat { alg: X, src: Src::Key, pt: b"a", header: "50514b4954454e4301010110000000000000000000000000bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d2526d92ac794fa7ee8931153", body: "f5d73a0c122fbe61e79693958c2ba7e986" },
    Kat { alg: X, src: Src::Key, pt: FOX, header: "50514b4954454e4301010110000000000000000000000000bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d2526d92ac794fa7ee8931153", body: "c083360356b960a833c3153099af58e944a0e61303b463367b7f8fa7d249fd14218a6ea7be09ecd61bd5d08e59d76dc9bbc2fcf36d6cb7863c4137" },
    Kat { alg: X, src: Src::Pw, pt: FOX, header: "50514b4954454e4301010210000000400000000200000002bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d2526d92ac794fa7ee8931153", body: "0ba41af5441f7b5956de4b871f577910deb9e55949c985ba422254629e78dbac12019e3c77a889c45a7767ecc7b85b95123b38e8871cc58c7d9123" },
    Kat { alg: K, src: Src::Key, pt: b"", header: "50514b4954454e4301020110000000000000000000000000bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d", body: "ac26ee841b2f8b82e0d358667216af8a" },
    Kat { alg: K, src: Src::Key, pt: b"a", header: "50514b4954454e4301020110000000000000000000000000bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d", body: "90bddad549750268704d3d79607017ec58" },
    Kat { alg: K, src: Src::Key, pt: FOX, header: "50514b4954454e4301020110000000000000000000000000bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d", body: "a57070cc870c21a004b33b5ceca2bc9d61ff6377f7cd5e6ac77daa80a1e6d380e9d7f7fbc8104324e877e19ae4e4cc1d639509661e95e01bf8911c" },
    Kat { alg: K, src: Src::Pw, pt: FOX, header: "50514b4954454e4301020210000000400000000200000002bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d", body: "f2adbde8b7fa41e688af7ca5fff8e9d37d7b5f9760397543ea7791ed35a4684a00aec998db70d9ab9db034e25a113f509aa2953e15a79a181fd3fd" },
    Kat { alg: G, src: Src::Key, pt: b"", header: "50514b4954454e4301030110000000000000000000000000bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d", body: "b1ce2dfb401c89c8f5e584c3b831c309" },
    Kat { alg: G, src: Src::Key, pt: b"a", header: "50514b4954454e4301030110000000000000000000000000bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d", body: "d2f39a240adb04e37dea0aac3ac6814fe0" },
    Kat { alg: G, src: Src::Key, pt: FOX, header: "50514b4954454e4301030110000000000000000000000000bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d", body: "e78e72b8b09f181baf0fd335cf023d0e1e6e5217fba801fb3240e680f2c6053688da2ff2923d775b6e8ff0260bbad23eb1330d1adbc75d00be2517" },
    Kat { alg: G, src: Src::Pw, pt: FOX, header: "50514b4954454e4301030210000000400000000200000002bfa4abe8ecde4a9097bf42429dd73f2d134771df84d3b529ad5db4666837f4112361b4366e609d", body: "719df198497bd089038e75f6d56f86f9d83231dd8ccf8fbfa75147c9d868d1542616131c30ed714eb3561ae24a70877ba30d5acf36a70e3c3f3f56" },
];

/// SHA-256 of files of [`pattern`] plaintexts written by `pqkit encrypt` with the key-file headers of
/// [`KATS`]: four segments (three full), two full segments, one segment of 65535 bytes.
#[rustfmt::skip]
const BIG_KATS: [(Algorithm, usize, &str); 9] = [
    (X, 3 * SEG + 1000, "419a869a188b415422e43ab61887d4b0caa912468da493c28c5777db7959e15c"),
    (X, 2 * SEG, "a745485c6d1b847bdbc9a918901e66c6a37e188738a34037cb69d370bcfaea9a"),
    (X, SEG - 1, "a1234249f8070bbd1524efb978036aa01837caf0e61d9959410f3611bc02057b"),
    (K, 3 * SEG + 1000, "10210420abbd30eb23574154b35376dde603ad10e01c2ce2bf4965d83b278ad1"),
    (K, 2 * SEG, "0521dc53876d373b7c4c3bf560968129411b1bc947768763d805fc32251593ea"),
    (K, SEG - 1, "33ac467aa03584cf8559ef52e0f45fe070ee8785b0b8bc8b52184cadefbea2e1"),
    (G, 3 * SEG + 1000, "e1f9fb0a7dd48e3fb4454c7513354ae1151c3c138c778835aef3c5d59fd5ed48"),
    (G, 2 * SEG, "730c905c2e34c04b86f3b3ec214d1c6163a1c98746630a70cc74d832e552063a"),
    (G, SEG - 1, "61e26079904c382a13accc06fc77526ab886d260188fa731b2c9b7e5ce45cf8e"),
];

/// The key-file header of `alg` in [`KATS`].
fn kat_header(alg: Algorithm) -> Header {
    let kat = KATS.iter().find(|k| k.alg == alg && matches!(k.src, Src::Key)).unwrap();
    Header::parse(&unhex(kat.header)).unwrap()
}

/// Encrypts `pt` under `key` with the [`Encryptor`], writing it in one call.
fn encrypt(key: FileKey, pt: &[u8]) -> Vec<u8> {
    let mut enc = Encryptor::new(key, Vec::new());
    enc.write_all(pt).unwrap();
    enc.finish().unwrap()
}

/// A fresh key-file encryption of `pt`.
fn sample(alg: Algorithm, pt: &[u8], key: &[u8; 32]) -> Vec<u8> {
    let mut enc = Encryptor::with_key(alg, key, Vec::new()).unwrap();
    enc.write_all(pt).unwrap();
    enc.finish().unwrap()
}

/// The `pqkit::Error` inside an io error from this module.
fn inner(e: &io::Error) -> Error {
    assert_eq!(
        e.kind(),
        if matches!(inner_any(e), Error::InvalidParameter { .. } | Error::InvalidLength { .. }) {
            ErrorKind::InvalidInput
        } else {
            ErrorKind::InvalidData
        }
    );
    inner_any(e)
}

fn inner_any(e: &io::Error) -> Error {
    e.get_ref().and_then(|i| i.downcast_ref::<Error>()).cloned().unwrap_or_else(|| panic!("not a pqkit error: {e}"))
}

/// Everything a [`Decryptor`] over `file` releases, read `chunk` bytes at a time, and how it ended.
fn drain(key: &[u8], file: &[u8], chunk: usize) -> (Vec<u8>, Result<(), Error>, u64) {
    let mut dec = match Decryptor::with_key(key, file) {
        Ok(d) => d,
        Err(e) => return (Vec::new(), Err(inner(&e)), 0),
    };
    let mut out = Vec::new();
    let mut buf = vec![0u8; chunk];
    loop {
        match dec.read(&mut buf) {
            Ok(0) => {
                // The end stays the end.
                assert_eq!(dec.read(&mut buf).unwrap(), 0);
                return (out, Ok(()), dec.segments_authenticated());
            }
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => {
                let err = inner(&e);
                // A failed decryptor stays failed and releases nothing more.
                let again = dec.read(&mut buf).unwrap_err();
                assert_eq!(inner(&again), err);
                return (out, Err(err), dec.segments_authenticated());
            }
        }
    }
}

/// Decrypting `file` must fail with `err` after releasing exactly the plaintext of its first `good` segments.
#[track_caller]
fn assert_rejected(file: &[u8], pt: &[u8], err: Error, good: usize) {
    for chunk in [1 << 20, 4097] {
        let (out, r, segs) = drain(&KEY, file, chunk);
        assert_eq!(r, Err(err.clone()));
        assert_eq!(segs, good as u64, "{err}");
        assert_eq!(out.len(), (good * SEG).min(pt.len()), "{err}: released plaintext");
        assert!(out[..] == pt[..out.len()], "{err}: released bytes are not the plaintext");
    }
}

/// An independent encoder: the format of docs/file-format.md on RustCrypto's HKDF, XChaCha20-Poly1305 and
/// AES-256-GCM (Kusumi512-Poly1305 on pqkit's own, which has its known answers in kusumi512_poly1305.rs).
fn reference_file(header: &[u8], ikm: &[u8], pt: &[u8]) -> Vec<u8> {
    let id = header[9];
    let (key_len, prefix) = match id {
        1 => (32, &header[56..75]),
        2 => (64, &header[56..63]),
        3 => (32, &header[56..63]),
        _ => unreachable!(),
    };
    let mut info = b"pqkit file key v1".to_vec();
    info.push(id);
    let mut key = vec![0u8; key_len];
    hkdf::Hkdf::<sha2::Sha512>::new(Some(&header[24..56]), ikm).expand(&info, &mut key).unwrap();
    let segments: Vec<&[u8]> = if pt.is_empty() { vec![&[]] } else { pt.chunks(SEG).collect() };
    let mut out = header.to_vec();
    for (i, msg) in segments.iter().enumerate() {
        let mut nonce = prefix.to_vec();
        nonce.extend_from_slice(&(i as u32).to_be_bytes());
        nonce.push((i == segments.len() - 1) as u8);
        let aad: &[u8] = if i == 0 { header } else { &[] };
        let sealed = match id {
            1 => chacha20poly1305::XChaCha20Poly1305::new_from_slice(&key)
                .unwrap()
                .encrypt(nonce[..].try_into().unwrap(), Payload { msg, aad })
                .unwrap(),
            2 => pqkit::aead::Kusumi512Poly1305::new(&key).unwrap().seal(&nonce, aad, msg).unwrap(),
            _ => aes_gcm::Aes256Gcm::new_from_slice(&key)
                .unwrap()
                .encrypt(nonce[..].try_into().unwrap(), Payload { msg, aad })
                .unwrap(),
        };
        out.extend_from_slice(&sealed);
    }
    out
}

/// RustCrypto's Argon2id, the reference for the passphrase key source.
fn reference_argon2(pw: &[u8], salt: &[u8], m: u32, t: u32, p: u32) -> [u8; 32] {
    let params = argon2::Params::new(m, t, p, Some(32)).unwrap();
    let mut out = [0u8; 32];
    argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
        .hash_password_into(pw, salt, &mut out)
        .unwrap();
    out
}

#[test]
fn known_answer_files_decrypt_and_reencrypt_byte_for_byte() {
    for kat in &KATS {
        let mut file = unhex(kat.header);
        file.extend_from_slice(&unhex(kat.body));
        let header = Header::parse(&file).unwrap();
        assert_eq!(header.algorithm(), kat.alg);
        assert_eq!(header.as_bytes(), &unhex(kat.header)[..]);
        let (mut dec, key) = match kat.src {
            Src::Key => {
                assert_eq!(header.key_source(), KeySource::Key);
                (Decryptor::with_key(&KEY, &file[..]).unwrap(), FileKey::from_key(&header, &KEY).unwrap())
            }
            Src::Pw => {
                assert_eq!(header.key_source(), KeySource::Argon2id { m_cost: 64, t_cost: 2, p_cost: 2 });
                (
                    Decryptor::with_passphrase(PASSPHRASE, &file[..]).unwrap(),
                    FileKey::from_passphrase(&header, PASSPHRASE).unwrap(),
                )
            }
        };
        let mut pt = Vec::new();
        dec.read_to_end(&mut pt).unwrap();
        assert_eq!(pt, kat.pt, "{:?}", kat.alg);
        assert_eq!(dec.segments_authenticated(), 1);
        assert_eq!(encrypt(key, kat.pt), file, "{:?}: re-encryption differs", kat.alg);
        // The independent encoder agrees.
        let ikm = match kat.src {
            Src::Key => KEY,
            Src::Pw => reference_argon2(PASSPHRASE, header.salt(), 64, 2, 2),
        };
        assert_eq!(reference_file(header.as_bytes(), &ikm, kat.pt), file);
    }
}

#[test]
fn multi_segment_known_answers() {
    for (alg, n, digest) in BIG_KATS {
        let pt = pattern(n);
        let header = kat_header(alg);
        let file = encrypt(FileKey::from_key(&header, &KEY).unwrap(), &pt);
        assert_eq!(hex::encode(sha2::Sha256::digest(&file)), digest, "{alg:?} {n}");
        let (out, r, segs) = drain(&KEY, &file, 65537);
        assert_eq!(r, Ok(()));
        assert_eq!(segs as usize, n.div_ceil(SEG));
        assert!(out == pt, "{alg:?} {n}");
    }
}

#[test]
fn matches_the_reference_encoder_at_segment_edges() {
    for (ai, alg) in ALGS.into_iter().enumerate() {
        let salt: [u8; 32] = data(32, ai as u64).try_into().unwrap();
        let prefix = data(alg.prefix_len(), 100 + ai as u64);
        let key: [u8; 32] = data(32, 200 + ai as u64).try_into().unwrap();
        let header = Header::new(alg, KeySource::Key, &salt, &prefix).unwrap();
        for n in [0, 1, SEG - 1, SEG, SEG + 1, 2 * SEG, 3 * SEG + 5] {
            let pt = data(n, n as u64);
            let file = encrypt(FileKey::from_key(&header, &key).unwrap(), &pt);
            assert_eq!(file.len(), alg.header_len() + n + 16 * n.div_ceil(SEG).max(1));
            assert!(file == reference_file(header.as_bytes(), &key, &pt), "{alg:?} {n}");
        }
        // Passphrase: Argon2id with the header's costs, then the same HKDF.
        let source = KeySource::Argon2id { m_cost: 32, t_cost: 3, p_cost: 4 };
        let header = Header::new(alg, source, &salt, &prefix).unwrap();
        let pt = data(SEG + 7, 9);
        let file = encrypt(FileKey::from_passphrase(&header, b"pass phrase").unwrap(), &pt);
        let ikm = reference_argon2(b"pass phrase", &salt, 32, 3, 4);
        assert!(file == reference_file(header.as_bytes(), &ikm, &pt), "{alg:?} passphrase");
    }
}

/// A writer taking at most `chunk` bytes per `write` call of the encryptor's caller.
fn write_in_chunks<W: Write>(w: &mut W, data: &[u8], chunk: usize) {
    for piece in data.chunks(chunk) {
        let mut rest = piece;
        while !rest.is_empty() {
            let n = w.write(rest).unwrap();
            assert!(n > 0 && n <= rest.len());
            rest = &rest[n..];
        }
    }
}

/// A reader that returns at most `chunk` bytes per call and is interrupted every third call.
struct Dribble<'a> {
    data: &'a [u8],
    chunk: usize,
    calls: usize,
}

impl Read for Dribble<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(3) {
            return Err(io::Error::from(ErrorKind::Interrupted));
        }
        let n = out.len().min(self.chunk).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn lengths() -> impl Strategy<Value = usize> {
    prop_oneof![0..=3usize, SEG - 3..=SEG + 3, 2 * SEG - 2..=2 * SEG + 2, 0..=3 * SEG + 100]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn io_round_trip_with_odd_chunks(
        alg in prop::sample::select(ALGS.to_vec()),
        n in lengths(),
        wchunk in prop_oneof![1..=17usize, 1..=70_000usize],
        ichunk in prop_oneof![1..=17usize, 1..=70_000usize],
        rchunk in prop_oneof![1..=17usize, 1..=70_000usize],
        seed in any::<u64>(),
    ) {
        let pt = data(n, seed);
        let key: [u8; 32] = data(32, !seed).try_into().unwrap();
        let mut enc = Encryptor::with_key(alg, &key, Vec::new()).unwrap();
        write_in_chunks(&mut enc, &pt, wchunk);
        enc.flush().unwrap();
        let header = enc.header().clone();
        let file = enc.finish().unwrap();
        prop_assert_eq!(file.len(), alg.header_len() + n + 16 * n.div_ceil(SEG).max(1));
        // Same bytes as one big write.
        prop_assert!(file == encrypt(FileKey::from_key(&header, &key).unwrap(), &pt));

        let mut dec = Decryptor::with_key(&key, Dribble { data: &file, chunk: ichunk, calls: 0 }).unwrap();
        let mut out = Vec::new();
        let mut buf = vec![0u8; rchunk];
        loop {
            match dec.read(&mut buf) {
                Ok(0) => break,
                Ok(k) => out.extend_from_slice(&buf[..k]),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => panic!("{e}"),
            }
        }
        prop_assert!(out == pt);
        prop_assert_eq!(dec.segments_authenticated() as usize, n.div_ceil(SEG).max(1));
    }
}

#[test]
fn round_trips_with_passphrase() {
    let params = pqkit::kdf::argon2::Params::new(64, 1, 2).unwrap();
    for alg in ALGS {
        let pt = data(SEG + 1, 4);
        let mut enc = Encryptor::with_passphrase(alg, b"pw", params, Vec::new()).unwrap();
        enc.write_all(&pt).unwrap();
        let file = enc.finish().unwrap();
        let mut out = Vec::new();
        Decryptor::with_passphrase(b"pw", &file[..]).unwrap().read_to_end(&mut out).unwrap();
        assert!(out == pt);
        // Wrong passphrase: segment 0 fails, nothing released.
        let mut dec = Decryptor::with_passphrase(b"pW", &file[..]).unwrap();
        let mut out = Vec::new();
        let e = dec.read_to_end(&mut out).unwrap_err();
        assert_eq!(inner(&e), errors::SEGMENT_FAILED);
        assert!(out.is_empty());
        assert_eq!(dec.segments_authenticated(), 0);
        // The key kind must match the header.
        assert_eq!(inner(&Decryptor::with_key(&KEY, &file[..]).unwrap_err()), errors::NEEDS_PASSPHRASE);
        let keyed = sample(alg, &pt, &KEY);
        assert_eq!(inner(&Decryptor::with_passphrase(b"pw", &keyed[..]).unwrap_err()), errors::NEEDS_KEY);
        assert_eq!(
            FileKey::from_passphrase(&Header::parse(&file).unwrap(), b"").unwrap_err(),
            Error::InvalidLength {
                algorithm: stream::NAME,
                field: "passphrase",
                expected: pqkit::error::Expected::AtLeast(1),
                actual: 0
            }
        );
    }
}

#[test]
fn truncation_at_every_segment_boundary() {
    for alg in ALGS {
        let h = alg.header_len();
        let pt = pattern(3 * SEG + 1000);
        let file = sample(alg, &pt, &KEY);
        assert_eq!(file.len(), h + 3 * SEG_CT + 1016);
        assert_rejected(&file[..h], &pt, errors::NO_SEGMENTS, 0);
        for k in 1..=3 {
            // Segments 0..k remain; segment k-1 authenticates only as a non-final segment.
            assert_rejected(&file[..h + k * SEG_CT], &pt, errors::TRUNCATED, k - 1);
        }
        // Cuts inside a segment: shorter than a tag, or a corrupted last segment.
        for k in 0..=3 {
            for d in [1, 15, 16, 17, 1015, SEG_CT - 1] {
                let cut = h + k * SEG_CT + d;
                if cut >= file.len() {
                    continue;
                }
                let err = if d < 16 { errors::SHORT_SEGMENT } else { errors::SEGMENT_FAILED };
                assert_rejected(&file[..cut], &pt, err, k);
            }
        }
        // A file whose final segment is full.
        let pt = pattern(2 * SEG);
        let file = sample(alg, &pt, &KEY);
        assert_eq!(file.len(), h + 2 * SEG_CT);
        assert_rejected(&file[..h + SEG_CT], &pt, errors::TRUNCATED, 0);
        // An empty file is one empty final segment; without it, nothing is left.
        let file = sample(alg, b"", &KEY);
        assert_eq!(file.len(), h + 16);
        assert_rejected(&file[..h], b"", errors::NO_SEGMENTS, 0);
    }
}

#[test]
fn header_cut_anywhere_is_rejected_before_the_key_is_used() {
    for alg in ALGS {
        let file = sample(alg, FOX, &KEY);
        let h = alg.header_len();
        for cut in 0..h {
            let want = if cut < 8 { errors::BAD_MAGIC } else { errors::HEADER_TRUNCATED };
            assert_eq!(Header::parse(&file[..cut]), Err(want.clone()), "{alg:?} cut {cut}");
            let mut r = &file[..cut];
            assert_eq!(inner(&Header::read_from(&mut r).unwrap_err()), want, "{alg:?} cut {cut}");
            assert_rejected(&file[..cut], FOX, want, 0);
        }
        // read_from reads the header and nothing more.
        let mut r = &file[..];
        let header = Header::read_from(&mut r).unwrap();
        assert_eq!(header.as_bytes(), &file[..h]);
        assert_eq!(r.len(), file.len() - h);
        assert_eq!(Header::parse(&file).unwrap(), header);
    }
}

/// `file` split into its segments.
fn segments(file: &[u8], h: usize) -> Vec<Vec<u8>> {
    file[h..].chunks(SEG_CT).map(<[u8]>::to_vec).collect()
}

fn assemble(file: &[u8], h: usize, parts: &[&[u8]]) -> Vec<u8> {
    let mut out = file[..h].to_vec();
    for p in parts {
        out.extend_from_slice(p);
    }
    out
}

#[test]
fn dropped_duplicated_swapped_and_spliced_segments() {
    for alg in ALGS {
        let h = alg.header_len();
        let pt = pattern(3 * SEG + 1000);
        let file = sample(alg, &pt, &KEY);
        let s = segments(&file, h);
        assert_eq!(s.len(), 4);
        let (s0, s1, s2, s3) = (&s[0][..], &s[1][..], &s[2][..], &s[3][..]);
        // Dropped.
        assert_rejected(&assemble(&file, h, &[s0, s2, s3]), &pt, errors::SEGMENT_FAILED, 1);
        assert_rejected(&assemble(&file, h, &[s1, s2, s3]), &pt, errors::SEGMENT_FAILED, 0);
        assert_rejected(&assemble(&file, h, &[s0, s1, s2]), &pt, errors::TRUNCATED, 2);
        assert_rejected(&assemble(&file, h, &[s0, s1, s3]), &pt, errors::SEGMENT_FAILED, 2);
        // Duplicated.
        assert_rejected(&assemble(&file, h, &[s0, s0, s1, s2, s3]), &pt, errors::SEGMENT_FAILED, 1);
        assert_rejected(&assemble(&file, h, &[s0, s1, s1, s2, s3]), &pt, errors::SEGMENT_FAILED, 2);
        // Swapped.
        assert_rejected(&assemble(&file, h, &[s0, s2, s1, s3]), &pt, errors::SEGMENT_FAILED, 1);
        assert_rejected(&assemble(&file, h, &[s1, s0, s2, s3]), &pt, errors::SEGMENT_FAILED, 0);
        // Appended: bytes after a short final segment make it a wrong non-final one.
        let mut a = file.clone();
        a.extend_from_slice(b"extra");
        assert_rejected(&a, &pt, errors::SEGMENT_FAILED, 3);
        // Spliced from another file under the same key (its own salt, so its own file key).
        let other = sample(alg, &pt, &KEY);
        let o = segments(&other, h);
        assert_rejected(&assemble(&file, h, &[s0, &o[1], s2, s3]), &pt, errors::SEGMENT_FAILED, 1);
        assert_rejected(&assemble(&other, h, &[s0, s1, s2, s3]), &pt, errors::SEGMENT_FAILED, 0);
        assert_rejected(&assemble(&file, h, &[s0, s1, s2, &o[3]]), &pt, errors::SEGMENT_FAILED, 3);

        // A full final segment: a copy of it appended is detected as appending, a non-final one moved to
        // the end as truncation.
        let pt = pattern(2 * SEG);
        let file = sample(alg, &pt, &KEY);
        let s = segments(&file, h);
        assert_rejected(&assemble(&file, h, &[&s[0], &s[1], &s[1]]), &pt, errors::APPENDED, 1);
        assert_rejected(&assemble(&file, h, &[&s[0], &s[0]]), &pt, errors::SEGMENT_FAILED, 1);
        assert_rejected(&assemble(&file, h, &[&s[1]]), &pt, errors::SEGMENT_FAILED, 0);
        assert_rejected(&assemble(&file, h, &[&s[0], &s[1], b"x"]), &pt, errors::APPENDED, 1);
    }
}

#[test]
fn every_header_bit_is_checked_or_authenticated() {
    for alg in ALGS {
        let h = alg.header_len();
        let file = sample(alg, FOX, &KEY);
        for byte in 0..h {
            for bit in 0..8 {
                let mut c = file.clone();
                c[byte] ^= 1 << bit;
                let want = match byte {
                    0..8 => errors::BAD_MAGIC,
                    8 => errors::BAD_VERSION,
                    9 if Algorithm::from_id(c[9]).is_none() => errors::UNKNOWN_ALGORITHM,
                    // Another algorithm: another header length and key, so segment 0 fails.
                    9 => errors::SEGMENT_FAILED,
                    // Key source 1 flips to 0, 3, 5, 9, ...: never 2 (Argon2id).
                    10 => errors::UNKNOWN_KEY_SOURCE,
                    11 => errors::BAD_SEGMENT_SIZE,
                    // A key-file header carries no costs.
                    12..24 => errors::UNKNOWN_KEY_SOURCE,
                    _ => errors::SEGMENT_FAILED,
                };
                assert_rejected(&c, FOX, want, 0);
            }
        }
    }
}

#[test]
fn every_segment_bit_flip_fails_that_segment_only() {
    for alg in ALGS {
        let h = alg.header_len();
        let pt = pattern(3 * SEG + 1000);
        let file = sample(alg, &pt, &KEY);
        let body = file.len() - h;
        // Bodies and tags of every segment, their first and last bytes, and spread positions.
        let mut positions: Vec<usize> = (0..4)
            .flat_map(|k| {
                [k * SEG_CT, k * SEG_CT + 1, (k + 1) * SEG_CT - 17, (k + 1) * SEG_CT - 16, (k + 1) * SEG_CT - 1]
            })
            .filter(|&p| p < body)
            .collect();
        positions.extend((0..40).map(|i| (i * 7919 * 13) % body));
        positions.push(body - 1);
        positions.push(body - 17);
        for (i, p) in positions.into_iter().enumerate() {
            let mut c = file.clone();
            c[h + p] ^= 1 << (i % 8);
            assert_rejected(&c, &pt, errors::SEGMENT_FAILED, p / SEG_CT);
        }
    }
}

#[test]
fn wrong_key_or_key_length() {
    for alg in ALGS {
        let pt = pattern(SEG + 10);
        let file = sample(alg, &pt, &KEY);
        let mut other = KEY;
        other[31] ^= 1;
        let (out, r, segs) = drain(&other, &file, 1 << 20);
        assert_eq!(r, Err(errors::SEGMENT_FAILED));
        assert!(out.is_empty());
        assert_eq!(segs, 0);
        let e = Decryptor::with_key(&KEY[..31], &file[..]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert_eq!(inner_any(&e), Error::length(stream::NAME, "key", 32, 31));
    }
}

#[test]
fn header_limits_are_enforced_before_any_work() {
    let salt = [9u8; 32];
    let header = |m: u32, t: u32, p: u32| {
        let mut b =
            Header::new(Algorithm::Aes256Gcm, KeySource::Argon2id { m_cost: 64, t_cost: 1, p_cost: 1 }, &salt, &[0; 7])
                .unwrap()
                .as_bytes()
                .to_vec();
        b[12..16].copy_from_slice(&m.to_be_bytes());
        b[16..20].copy_from_slice(&t.to_be_bytes());
        b[20..24].copy_from_slice(&p.to_be_bytes());
        b
    };
    // At the limits: accepted (not derived here: that would take 4 GiB).
    let at = Header::parse(&header(stream::MAX_M_COST, stream::MAX_T_COST, stream::MAX_P_COST)).unwrap();
    assert_eq!(at.key_source(), KeySource::Argon2id { m_cost: 4 << 20, t_cost: 64, p_cost: 64 });
    assert_eq!(
        Header::parse(&header(8, 1, 1)).unwrap().key_source(),
        KeySource::Argon2id { m_cost: 8, t_cost: 1, p_cost: 1 }
    );
    // Above: refused by the parser, so neither the memory nor the passes are ever spent. A forged file of
    // this kind fails at once, before any Argon2id work.
    for (m, t, p) in [
        ((4 << 20) + 1, 1, 1),
        (u32::MAX, 64, 64),
        (64 * 8, 65, 1),
        (65 * 8, 1, 65),
        (4 << 20, 64, 65),
        (4 << 20, u32::MAX, 64),
    ] {
        let mut file = header(m, t, p);
        file.extend_from_slice(&[0u8; 40]);
        assert_eq!(Header::parse(&file), Err(errors::ARGON2_LIMITS), "m={m} t={t} p={p}");
        assert_eq!(inner(&Decryptor::with_passphrase(b"pw", &file[..]).unwrap_err()), errors::ARGON2_LIMITS);
    }
    // Not valid Argon2id parameters at all.
    for (m, t, p) in [(64, 0, 1), (64, 1, 0), (7, 1, 1), (15, 1, 2), (0, 0, 0)] {
        assert_eq!(Header::parse(&header(m, t, p)), Err(errors::BAD_ARGON2_PARAMS), "m={m} t={t} p={p}");
    }
    // Writers get the same validity rule as an error on their input.
    assert!(matches!(
        Header::new(Algorithm::Aes256Gcm, KeySource::Argon2id { m_cost: 7, t_cost: 1, p_cost: 1 }, &salt, &[0; 7]),
        Err(Error::InvalidParameter { .. })
    ));
    assert_eq!(
        Header::new(Algorithm::XChaCha20Poly1305, KeySource::Key, &salt, &[0; 7]),
        Err(Error::length(stream::NAME, "nonce prefix", 19, 7))
    );
}

#[test]
fn an_unfinished_encryptor_never_leaves_a_valid_file() {
    for alg in ALGS {
        for n in [0, 10, SEG, SEG + 1, 2 * SEG, 2 * SEG + 3] {
            let pt = pattern(n);
            let mut out = Vec::new();
            {
                let mut enc = Encryptor::with_key(alg, &KEY, &mut out).unwrap();
                enc.write_all(&pt).unwrap();
                enc.flush().unwrap();
                // Dropped without finish().
            }
            let (released, r, _) = drain(&KEY, &out, 1 << 20);
            let want = match n {
                // Nothing was written: the final segment is what would have been sealed last.
                0..=SEG => errors::BAD_MAGIC,
                _ => errors::TRUNCATED,
            };
            assert_eq!(r, Err(want), "{alg:?} {n}");
            assert!(released.len() < n.max(1));
            assert!(pt.starts_with(&released));
        }
    }
}

/// A writer that fails once `limit` bytes were written.
#[derive(Debug)]
struct Failing {
    written: usize,
    limit: usize,
}

impl Write for Failing {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.written + data.len() > self.limit {
            return Err(io::Error::other("disk full"));
        }
        self.written += data.len();
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failed_write_poisons_the_encryptor() {
    let mut enc = Encryptor::with_key(Algorithm::XChaCha20Poly1305, &KEY, Failing { written: 0, limit: 1000 }).unwrap();
    let pt = pattern(2 * SEG);
    // The first segment goes out when the next byte arrives, and fails.
    enc.write_all(&pt[..SEG]).unwrap();
    assert_eq!(enc.write(&pt[SEG..]).unwrap_err().to_string(), "disk full");
    assert!(enc.write(b"more").unwrap_err().to_string().contains("poisoned"));
    assert!(enc.flush().is_err());
    assert!(enc.finish().unwrap_err().to_string().contains("poisoned"));
}

/// A reader that fails once at byte `at` with a non-retryable error, then goes on.
struct Hiccup<'a> {
    data: &'a [u8],
    pos: usize,
    at: usize,
    failed: bool,
}

impl Read for Hiccup<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.at && !self.failed {
            self.failed = true;
            return Err(io::Error::new(ErrorKind::TimedOut, "slow disk"));
        }
        let end = if self.pos < self.at { self.at } else { self.data.len() };
        let n = out.len().min(end - self.pos);
        out[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[test]
fn reader_errors_pass_through_and_can_be_retried() {
    let pt = pattern(2 * SEG + 5);
    let file = sample(Algorithm::Kusumi512Poly1305, &pt, &KEY);
    for at in [63, 63 + 100, 63 + SEG_CT, 63 + SEG_CT + 1, file.len() - 1, file.len()] {
        let mut dec = Decryptor::with_key(&KEY, Hiccup { data: &file, pos: 0, at, failed: false }).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 1000];
        let mut hiccups = 0;
        loop {
            match dec.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::TimedOut);
                    hiccups += 1;
                }
            }
        }
        assert_eq!(hiccups, 1);
        assert!(out == pt, "hiccup at {at}");
    }
}

#[test]
fn segment_api_allows_parallel_sealing_and_checks_lengths() {
    for alg in ALGS {
        let pt = pattern(5 * SEG + 321);
        let header = kat_header(alg);
        let key = FileKey::from_key(&header, &KEY).unwrap();
        let want = encrypt(FileKey::from_key(&header, &KEY).unwrap(), &pt);
        // Seal the segments on three threads, out of order, then assemble.
        let n = pt.len().div_ceil(SEG);
        let mut sealed: Vec<Vec<u8>> = pt.chunks(SEG).map(<[u8]>::to_vec).collect();
        std::thread::scope(|s| {
            for (t, part) in sealed.chunks_mut(2).enumerate().rev() {
                let key = &key;
                s.spawn(move || {
                    for (j, seg) in part.iter_mut().enumerate().rev() {
                        let i = t * 2 + j;
                        let tag = key.seal_segment(i as u64, i == n - 1, seg).unwrap();
                        seg.extend_from_slice(&tag);
                    }
                });
            }
        });
        let mut file = key.header().as_bytes().to_vec();
        sealed.iter().for_each(|s| file.extend_from_slice(s));
        assert!(file == want, "{alg:?}");

        // Opening in place, out of order.
        let h = alg.header_len();
        let mut segs = segments(&file, h);
        for i in (0..n).rev() {
            let seg = &mut segs[i];
            let len = seg.len();
            let (body, tag) = seg.split_at_mut(len - 16);
            key.open_segment(i as u64, i == n - 1, body, tag).unwrap();
            assert!(body == &pt[i * SEG..(i * SEG + SEG).min(pt.len())]);
        }
        // The wrong flag: the error names the cause and the buffer holds no plaintext.
        let mut s1 = segments(&file, h)[1].clone();
        let (body, tag) = s1.split_at_mut(SEG);
        assert_eq!(key.open_segment(1, true, body, tag), Err(errors::TRUNCATED));
        assert!(body != &pt[SEG..2 * SEG]);
        let mut s5 = segments(&file, h)[5].clone();
        let ct5 = s5.clone();
        let (body, tag) = s5.split_at_mut(321);
        assert_eq!(key.open_segment(4, true, body, tag), Err(errors::SEGMENT_FAILED));
        assert!(body == &ct5[..321], "a failed open leaves the ciphertext");

        // Lengths the format does not allow.
        let name = stream::NAME;
        let mut short = vec![0u8; SEG - 1];
        assert_eq!(key.seal_segment(0, false, &mut short), Err(Error::length(name, "non-final segment", SEG, SEG - 1)));
        let mut long = vec![0u8; SEG + 1];
        assert_eq!(
            key.seal_segment(0, true, &mut long),
            Err(Error::InvalidLength {
                algorithm: name,
                field: "final segment",
                expected: pqkit::error::Expected::AtMost(SEG),
                actual: SEG + 1
            })
        );
        assert!(long.iter().all(|&b| b == 0), "nothing encrypted on error");
        assert!(matches!(key.seal_segment(3, true, &mut []), Err(Error::InvalidLength { .. })));
        assert!(key.seal_segment(0, true, &mut []).is_ok());
        assert_eq!(
            key.open_segment(1, false, &mut short, &[0; 16]),
            Err(Error::length(name, "non-final segment", SEG, SEG - 1))
        );
        assert_eq!(key.open_segment(1, true, &mut short, &[0; 15]), Err(Error::length(name, "tag", 16, 15)));
        assert_eq!(
            key.seal_segment(stream::MAX_SEGMENTS - 1, false, &mut vec![0u8; SEG]),
            Err(Error::CounterExhausted { algorithm: name })
        );
    }
}

#[test]
fn io_errors_carry_the_pqkit_error() {
    let e: io::Error = errors::TRUNCATED.into();
    assert_eq!(e.kind(), ErrorKind::InvalidData);
    assert_eq!(inner(&e), errors::TRUNCATED);
    assert_eq!(errors::SEGMENT_FAILED, Error::AuthenticationFailed { algorithm: "pqkit stream" });
    assert!(errors::TRUNCATED.to_string().contains("the final segment is missing"));
}
