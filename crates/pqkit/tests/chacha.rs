//! ChaCha family: RFC 8439 and draft-irtf-cfrg-xchacha-03 known answers, differential tests against RustCrypto's
//! `chacha20` for every backend this CPU runs, and every rejection path.

// RustCrypto's StreamCipher/StreamCipherSeek are imported only where the reference calls them (`reference`):
// with pqkit's `rustcrypto` feature pqkit's types implement them too, and a file-wide import next to
// pqkit::cipher::StreamCipher would make every `apply_keystream` on a pqkit type ambiguous (E0034).
use chacha20::cipher::KeyIvInit;
use pqkit::Error;
use pqkit::chacha::{Backend, ChaCha8, ChaCha12, ChaCha20, ChaCha20Legacy, XChaCha20, hchacha20};
use pqkit::cipher::StreamCipher;
use pqkit::dispatch::Checked;
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    hex::decode(s).unwrap()
}

fn backends() -> Vec<Checked<Backend>> {
    let v: Vec<Checked<Backend>> = Backend::available().collect();
    assert_eq!(v[0], Backend::Soft);
    v
}

const KEY_00_1F: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/// Runs `f` as every backend and checks it gives `want`.
fn check_ietf(key: &str, nonce: &str, counter: u32, pt: &[u8], want: &[u8]) {
    for b in backends() {
        let mut c = ChaCha20::new_with_counter(&unhex(key), &unhex(nonce), counter).unwrap().with_backend(b);
        assert_eq!(c.backend(), b);
        let mut buf = pt.to_vec();
        c.apply_keystream(&mut buf).unwrap();
        assert_eq!(hex::encode(&buf), hex::encode(want), "backend {b:?}");
        assert_eq!(c.position(), pt.len() as u64);
    }
}

// RFC 8439 §2.3.2: the serialised block for key 00..1f, nonce 000000090000004a00000000, counter 1.
#[test]
fn rfc8439_2_3_2_block() {
    let want = unhex(
        "10 f1 e7 e4 d1 3b 59 15 50 0f dd 1f a3 20 71 c4 c7 d1 f4 c7 33 c0 68 03 04 22 aa 9a c3 d4 6c 4e
         d2 82 64 46 07 9f aa 09 14 c2 d7 05 d9 8b 02 a2 b5 12 9c d1 de 16 4e b9 cb d0 83 e8 a2 50 3c 4e",
    );
    check_ietf(KEY_00_1F, "000000090000004a00000000", 1, &[0u8; 64], &want);
}

const SUNSCREEN: &[u8] =
    b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, \
sunscreen would be it.";

// RFC 8439 §2.4.2.
#[test]
fn rfc8439_2_4_2_encryption() {
    let want = unhex(
        "6e 2e 35 9a 25 68 f9 80 41 ba 07 28 dd 0d 69 81 e9 7e 7a ec 1d 43 60 c2 0a 27 af cc fd 9f ae 0b
         f9 1b 65 c5 52 47 33 ab 8f 59 3d ab cd 62 b3 57 16 39 d6 24 e6 51 52 ab 8f 53 0c 35 9f 08 61 d8
         07 ca 0d bf 50 0d 6a 61 56 a3 8e 08 8a 22 b6 5e 52 bc 51 4d 16 cc f8 06 81 8c e9 1a b7 79 37 36
         5a f9 0b bf 74 a3 5b e6 b4 0b 8e ed f2 78 5e 42 87 4d",
    );
    assert_eq!(SUNSCREEN.len(), 114);
    check_ietf(KEY_00_1F, "000000000000004a00000000", 1, SUNSCREEN, &want);
    // The keystream printed in §2.4.2 (first bytes), as one more check of the block boundary.
    let mut ks = vec![0u8; 114];
    ChaCha20::new_with_counter(&unhex(KEY_00_1F), &unhex("000000000000004a00000000"), 1)
        .unwrap()
        .apply_keystream(&mut ks)
        .unwrap();
    assert_eq!(&ks[..8], &unhex("22:4f:51:f3:40:1b:d9:e1")[..]);
    assert_eq!(&ks[64..72], &unhex("69:a6:74:9f:3f:63:0f:41")[..]);
}

// RFC 8439 Appendix A.1: keystream blocks.
#[test]
fn rfc8439_a1_block_vectors() {
    let zero = "00".repeat(32);
    let key3 = format!("{}01", "00".repeat(31));
    let key4 = format!("00ff{}", "00".repeat(30));
    let cases: [(&str, &str, u32, &str); 5] = [
        (
            &zero,
            "000000000000000000000000",
            0,
            "76 b8 e0 ad a0 f1 3d 90 40 5d 6a e5 53 86 bd 28 bd d2 19 b8 a0 8d ed 1a a8 36 ef cc 8b 77 0d c7
             da 41 59 7c 51 57 48 8d 77 24 e0 3f b8 d8 4a 37 6a 43 b8 f4 15 18 a1 1c c3 87 b6 69 b2 ee 65 86",
        ),
        (
            &zero,
            "000000000000000000000000",
            1,
            "9f 07 e7 be 55 51 38 7a 98 ba 97 7c 73 2d 08 0d cb 0f 29 a0 48 e3 65 69 12 c6 53 3e 32 ee 7a ed
             29 b7 21 76 9c e6 4e 43 d5 71 33 b0 74 d8 39 d5 31 ed 1f 28 51 0a fb 45 ac e1 0a 1f 4b 79 4d 6f",
        ),
        (
            &key3,
            "000000000000000000000000",
            1,
            "3a eb 52 24 ec f8 49 92 9b 9d 82 8d b1 ce d4 dd 83 20 25 e8 01 8b 81 60 b8 22 84 f3 c9 49 aa 5a
             8e ca 00 bb b4 a7 3b da d1 92 b5 c4 2f 73 f2 fd 4e 27 36 44 c8 b3 61 25 a6 4a dd eb 00 6c 13 a0",
        ),
        (
            &key4,
            "000000000000000000000000",
            2,
            "72 d5 4d fb f1 2e c4 4b 36 26 92 df 94 13 7f 32 8f ea 8d a7 39 90 26 5e c1 bb be a1 ae 9a f0 ca
             13 b2 5a a2 6c b4 a6 48 cb 9b 9d 1b e6 5b 2c 09 24 a6 6c 54 d5 45 ec 1b 73 74 f4 87 2e 99 f0 96",
        ),
        (
            &zero,
            "000000000000000000000002",
            0,
            "c2 c6 4d 37 8c d5 36 37 4a e2 04 b9 ef 93 3f cd 1a 8b 22 88 b3 df a4 96 72 ab 76 5b 54 ee 27 c7
             8a 97 0e 0e 95 5c 14 f3 a8 8e 74 1b 97 c2 86 f7 5f 8f c2 99 e8 14 83 62 fa 19 8a 39 53 1b ed 6d",
        ),
    ];
    for (key, nonce, counter, want) in cases {
        check_ietf(key, nonce, counter, &[0u8; 64], &unhex(want));
    }
}

// RFC 8439 Appendix A.2: encryption.
#[test]
fn rfc8439_a2_encryption_vectors() {
    // #1: all zero, counter 0: the first A.1 block.
    check_ietf(
        &"00".repeat(32),
        "000000000000000000000000",
        0,
        &[0u8; 64],
        &unhex(
            "76 b8 e0 ad a0 f1 3d 90 40 5d 6a e5 53 86 bd 28 bd d2 19 b8 a0 8d ed 1a a8 36 ef cc 8b 77 0d c7
             da 41 59 7c 51 57 48 8d 77 24 e0 3f b8 d8 4a 37 6a 43 b8 f4 15 18 a1 1c c3 87 b6 69 b2 ee 65 86",
        ),
    );
    // #2
    let pt2: &[u8] = b"Any submission to the IETF intended by the Contributor for publication as all or part of an \
IETF Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an \
\"IETF Contribution\". Such statements include oral statements in IETF sessions, as well as written and \
electronic communications made at any time or place, which are addressed to";
    assert_eq!(pt2.len(), 375);
    let ct2 = unhex(
        "a3 fb f0 7d f3 fa 2f de 4f 37 6c a2 3e 82 73 70 41 60 5d 9f 4f 4f 57 bd 8c ff 2c 1d 4b 79 55 ec
         2a 97 94 8b d3 72 29 15 c8 f3 d3 37 f7 d3 70 05 0e 9e 96 d6 47 b7 c3 9f 56 e0 31 ca 5e b6 25 0d
         40 42 e0 27 85 ec ec fa 4b 4b b5 e8 ea d0 44 0e 20 b6 e8 db 09 d8 81 a7 c6 13 2f 42 0e 52 79 50
         42 bd fa 77 73 d8 a9 05 14 47 b3 29 1c e1 41 1c 68 04 65 55 2a a6 c4 05 b7 76 4d 5e 87 be a8 5a
         d0 0f 84 49 ed 8f 72 d0 d6 62 ab 05 26 91 ca 66 42 4b c8 6d 2d f8 0e a4 1f 43 ab f9 37 d3 25 9d
         c4 b2 d0 df b4 8a 6c 91 39 dd d7 f7 69 66 e9 28 e6 35 55 3b a7 6c 5c 87 9d 7b 35 d4 9e b2 e6 2b
         08 71 cd ac 63 89 39 e2 5e 8a 1e 0e f9 d5 28 0f a8 ca 32 8b 35 1c 3c 76 59 89 cb cf 3d aa 8b 6c
         cc 3a af 9f 39 79 c9 2b 37 20 fc 88 dc 95 ed 84 a1 be 05 9c 64 99 b9 fd a2 36 e7 e8 18 b0 4b 0b
         c3 9c 1e 87 6b 19 3b fe 55 69 75 3f 88 12 8c c0 8a aa 9b 63 d1 a1 6f 80 ef 25 54 d7 18 9c 41 1f
         58 69 ca 52 c5 b8 3f a3 6f f2 16 b9 c1 d3 00 62 be bc fd 2d c5 bc e0 91 19 34 fd a7 9a 86 f6 e6
         98 ce d7 59 c3 ff 9b 64 77 33 8f 3d a4 f9 cd 85 14 ea 99 82 cc af b3 41 b2 38 4d d9 02 f3 d1 ab
         7a c6 1d d2 9c 6f 21 ba 5b 86 2f 37 30 e3 7c fd c4 fd 80 6c 22 f2 21",
    );
    check_ietf(&format!("{}01", "00".repeat(31)), "000000000000000000000002", 1, pt2, &ct2);
    // #3
    let pt3: &[u8] = b"'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were the \
borogoves,\nAnd the mome raths outgrabe.";
    assert_eq!(pt3.len(), 127);
    let ct3 = unhex(
        "62 e6 34 7f 95 ed 87 a4 5f fa e7 42 6f 27 a1 df 5f b6 91 10 04 4c 0d 73 11 8e ff a9 5b 01 e5 cf
         16 6d 3d f2 d7 21 ca f9 b2 1e 5f b1 4c 61 68 71 fd 84 c5 4f 9d 65 b2 83 19 6c 7f e4 f6 05 53 eb
         f3 9c 64 02 c4 22 34 e3 2a 35 6b 3e 76 43 12 a6 1a 55 32 05 57 16 ea d6 96 25 68 f8 7d 3f 3f 77
         04 c6 a8 d1 bc d1 bf 4d 50 d6 15 4b 6d a7 31 b1 87 b5 8d fd 72 8a fa 36 75 7a 79 7a c1 88 d1",
    );
    check_ietf(
        "1c 92 40 a5 eb 55 d3 8a f3 33 88 86 04 f6 b5 f0 47 39 17 c1 40 2b 80 09 9d ca 5c bc 20 70 75 c0",
        "000000000000000000000002",
        42,
        pt3,
        &ct3,
    );
}

// draft-irtf-cfrg-xchacha-03 §2.2.1.
#[test]
fn hchacha20_draft_2_2_1() {
    let key: [u8; 32] = unhex(KEY_00_1F).try_into().unwrap();
    let input: [u8; 16] = unhex("000000090000004a0000000031415927").try_into().unwrap();
    let want = unhex("82413b42 27b27bfe d30e4250 8a877d73 a0f9e4d5 8a74a853 c12ec413 26d3ecdc");
    assert_eq!(hchacha20(&key, &input).to_vec(), want);
}

// draft-irtf-cfrg-xchacha-03 §A.3.2 (ciphertext at block counter 0 and at block counter 1).
#[test]
fn xchacha20_draft_a_3_2() {
    let key = unhex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
    let nonce = unhex("404142434445464748494a4b4c4d4e4f5051525354555658");
    let pt: &[u8] = b"The dhole (pronounced \"dole\") is also known as the Asiatic wild dog, red dog, and whistling \
dog. It is about the size of a German shepherd but looks more like a long-legged fox. This highly elusive and \
skilled jumper is classified with wolves, coyotes, jackals, and foxes in the taxonomic family Canidae.";
    let ct0 = unhex(
        "4559abba4e48c16102e8bb2c05e6947f50a786de162f9b0b7e592a9b53d0d4e98d8d6410d540a1a6375b26d80dace4fa
         b52384c731acbf16a5923c0c48d3575d4d0d2c673b666faa731061277701093a6bf7a158a8864292a41c48e3a9b4c0da
         ece0f8d98d0d7e05b37a307bbb66333164ec9e1b24ea0d6c3ffddcec4f68e7443056193a03c810e11344ca06d8ed8a2b
         fb1e8d48cfa6bc0eb4e2464b748142407c9f431aee769960e15ba8b96890466ef2457599852385c661f752ce20f9da0c
         09ab6b19df74e76a95967446f8d0fd415e7bee2a12a114c20eb5292ae7a349ae577820d5520a1f3fb62a17ce6a7e68fa
         7c79111d8860920bc048ef43fe84486ccb87c25f0ae045f0cce1e7989a9aa220a28bdd4827e751a24a6d5c62d790a663
         93b93111c1a55dd7421a10184974c7c5",
    );
    let ct1 = unhex(
        "7d0a2e6b7f7c65a236542630294e063b7ab9b555a5d5149aa21e4ae1e4fbce87ecc8e08a8b5e350abe622b2ffa617b20
         2cfad72032a3037e76ffdcdc4376ee053a190d7e46ca1de04144850381b9cb29f051915386b8a710b8ac4d027b8b050f
         7cba5854e028d564e453b8a968824173fc16488b8970cac828f11ae53cabd20112f87107df24ee6183d2274fe4c8b148
         5534ef2c5fbc1ec24bfc3663efaa08bc047d29d25043532db8391a8a3d776bf4372a6955827ccb0cdd4af403a7ce4c63
         d595c75a43e045f0cce1f29c8b93bd65afc5974922f214a40b7c402cdb91ae73c0b63615cdad0480680f16515a7ace9d
         39236464328a37743ffc28f4ddb324f4d0f5bbdc270c65b1749a6efff1fbaa09536175ccd29fb9e6057b307320d31683
         8a9c71f70b5b5907a66f7ea49aadc409",
    );
    assert_eq!(pt.len(), ct0.len());
    for b in backends() {
        for (counter, want) in [(0u32, &ct0), (1, &ct1)] {
            let mut c = XChaCha20::new_with_counter(&key, &nonce, counter).unwrap().with_backend(b);
            let mut buf = pt.to_vec();
            c.apply_keystream(&mut buf).unwrap();
            assert_eq!(hex::encode(&buf), hex::encode(want), "counter {counter} backend {b:?}");
        }
        // Counter 1 is the counter-0 stream seeked by one block.
        let mut c = XChaCha20::new(&key, &nonce).unwrap().with_backend(b);
        c.seek(64).unwrap();
        let mut buf = pt.to_vec();
        c.apply_keystream(&mut buf).unwrap();
        assert_eq!(buf, ct1);
    }
}

// ---------- differential tests against RustCrypto `chacha20` ----------

#[derive(Clone, Copy, Debug)]
enum Variant {
    Ietf,
    Legacy,
    X,
    R12,
    R8,
}

const VARIANTS: [Variant; 5] = [Variant::Ietf, Variant::Legacy, Variant::X, Variant::R12, Variant::R8];

impl Variant {
    fn nonce_len(self) -> usize {
        match self {
            Variant::Ietf => 12,
            Variant::X => 24,
            _ => 8,
        }
    }

    /// A random starting counter that leaves at least `blocks` blocks.
    fn random_counter(self, rng: &mut StdRng, blocks: u64) -> u64 {
        match rng.random_range(0..4) {
            0 => 0,
            1 => rng.random_range(0..1000),
            _ => match self {
                Variant::Ietf | Variant::X => rng.random_range(0..=(u32::MAX as u64 - blocks)),
                _ => rng.random_range(0..=(u64::MAX - blocks)),
            },
        }
    }

    fn pqkit(self, key: &[u8], nonce: &[u8], counter: u64, b: Checked<Backend>) -> Box<dyn StreamCipher> {
        match self {
            Variant::Ietf => Box::new(ChaCha20::new_with_counter(key, nonce, counter as u32).unwrap().with_backend(b)),
            Variant::Legacy => Box::new(ChaCha20Legacy::new_with_counter(key, nonce, counter).unwrap().with_backend(b)),
            Variant::X => Box::new(XChaCha20::new_with_counter(key, nonce, counter as u32).unwrap().with_backend(b)),
            Variant::R12 => Box::new(ChaCha12::new_with_counter(key, nonce, counter).unwrap().with_backend(b)),
            Variant::R8 => Box::new(ChaCha8::new_with_counter(key, nonce, counter).unwrap().with_backend(b)),
        }
    }

    /// The reference keystream (RustCrypto), starting at block `counter`, XORed into `data`.
    fn reference(self, key: &[u8], nonce: &[u8], counter: u64, data: &mut [u8]) {
        let key32: [u8; 32] = key.try_into().unwrap();
        let legacy_ks = |data: &mut [u8], ks: &mut dyn FnMut(&mut [u8])| {
            let mut buf = vec![0u8; data.len()];
            ks(&mut buf);
            data.iter_mut().zip(&buf).for_each(|(d, k)| *d ^= k);
        };
        let stream = || u64::from_le_bytes(nonce.try_into().unwrap());
        // Only RustCrypto types below: their traits are in scope here alone.
        use chacha20::cipher::{StreamCipher as _, StreamCipherSeek as _};
        match self {
            Variant::Ietf => {
                let mut c = chacha20::ChaCha20::new_from_slices(key, nonce).unwrap();
                c.seek(counter * 64);
                c.apply_keystream(data);
            }
            Variant::X => {
                let mut c = chacha20::XChaCha20::new_from_slices(key, nonce).unwrap();
                c.seek(counter * 64);
                c.apply_keystream(data);
            }
            // The legacy layouts via RustCrypto's RNGs, which use exactly that layout (64-bit counter in words
            // 12-13, the stream id as the nonce in words 14-15) and can start at any 64-bit block.
            Variant::Legacy => legacy_ks(data, &mut |buf| {
                let mut r = chacha20::ChaCha20Rng::from_seed(key32);
                r.set_stream(stream());
                r.set_block_pos(counter);
                r.fill_bytes(buf);
            }),
            Variant::R12 => legacy_ks(data, &mut |buf| {
                let mut r = chacha20::ChaCha12Rng::from_seed(key32);
                r.set_stream(stream());
                r.set_block_pos(counter);
                r.fill_bytes(buf);
            }),
            Variant::R8 => legacy_ks(data, &mut |buf| {
                let mut r = chacha20::ChaCha8Rng::from_seed(key32);
                r.set_stream(stream());
                r.set_block_pos(counter);
                r.fill_bytes(buf);
            }),
        }
    }
}

/// The 64-bit block counter carries from word 12 into word 13 inside one multi-block pass (legacy layout and the
/// reduced-round ciphers): starting 1..=17 blocks below 2^32, so the carry falls on every lane of an 8- and a
/// 16-block pass, for whole passes and a partial last one; every backend against RustCrypto.
#[test]
fn counter_carry_inside_a_pass() {
    for v in [Variant::Legacy, Variant::R12, Variant::R8] {
        let (key, nonce) = ([7u8; 32], vec![9u8; v.nonce_len()]);
        for below in 1..=17u64 {
            let counter = (1u64 << 32) - below;
            for len in [512, 1024, 1500, 2048] {
                let mut want = vec![0x5a; len];
                v.reference(&key, &nonce, counter, &mut want);
                for b in Backend::available() {
                    let mut got = vec![0x5a; len];
                    v.pqkit(&key, &nonce, counter, b).apply_keystream(&mut got).unwrap();
                    assert!(got == want, "{v:?} {b:?} counter 2^32 - {below}, {len} bytes");
                }
            }
        }
    }
}

fn random_case(rng: &mut StdRng, v: Variant, len: usize) -> (Vec<u8>, Vec<u8>, u64, Vec<u8>) {
    let mut key = vec![0u8; 32];
    let mut nonce = vec![0u8; v.nonce_len()];
    let mut data = vec![0u8; len];
    rng.fill_bytes(&mut key);
    rng.fill_bytes(&mut nonce);
    rng.fill_bytes(&mut data);
    let counter = v.random_counter(rng, (len as u64).div_ceil(64) + 1);
    (key, nonce, counter, data)
}

/// Splits `len` into random chunk lengths.
fn random_chunks(rng: &mut StdRng, len: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut left = len;
    while left > 0 {
        let n = match rng.random_range(0..4) {
            0 => rng.random_range(0..=3),
            1 => rng.random_range(0..=70),
            _ => rng.random_range(0..=600),
        }
        .min(left);
        out.push(n);
        left -= n;
    }
    out
}

#[test]
fn differential_all_variants_and_backends() {
    let mut rng = StdRng::seed_from_u64(0x6368_6163_6861);
    let mut lengths: Vec<usize> = (0..=300).collect();
    lengths.extend((0..60).map(|_| rng.random_range(301..=4096)));
    lengths.extend([511, 512, 513, 1023, 1024, 1025, 4096]);
    for v in VARIANTS {
        for &len in &lengths {
            let (key, nonce, counter, data) = random_case(&mut rng, v, len);
            let mut want = data.clone();
            v.reference(&key, &nonce, counter, &mut want);
            for b in backends() {
                // One shot.
                let mut got = data.clone();
                let mut c = v.pqkit(&key, &nonce, counter, b);
                c.apply_keystream(&mut got).unwrap();
                assert!(got == want, "{v:?} {b:?} len {len} counter {counter}");
                assert_eq!(c.position(), len as u64);
                // Random chunking gives the one-shot result.
                let mut got = data.clone();
                let mut c = v.pqkit(&key, &nonce, counter, b);
                let mut at = 0;
                for n in random_chunks(&mut rng, len) {
                    c.apply_keystream(&mut got[at..at + n]).unwrap();
                    at += n;
                    assert_eq!(c.position(), at as u64);
                }
                assert!(got == want, "{v:?} {b:?} len {len} chunked");
                // Seek to a random offset, then the rest.
                if len > 0 {
                    let off = rng.random_range(0..len);
                    let mut c = v.pqkit(&key, &nonce, counter, b);
                    c.seek(off as u64).unwrap();
                    let mut got = data[off..].to_vec();
                    c.apply_keystream(&mut got).unwrap();
                    assert!(got[..] == want[off..], "{v:?} {b:?} len {len} seek {off}");
                    // Seeking back to 0 restarts the stream.
                    c.seek(0).unwrap();
                    let mut got = data.clone();
                    c.apply_keystream(&mut got).unwrap();
                    assert!(got == want, "{v:?} {b:?} len {len} seek back");
                }
            }
        }
    }
}

#[test]
fn differential_large_inputs() {
    let mut rng = StdRng::seed_from_u64(7);
    for (v, len) in [(Variant::Ietf, 3 << 20 | 17), (Variant::Ietf, 1 << 20), (Variant::X, 2 << 20 | 63)] {
        let (key, nonce, counter, data) = random_case(&mut rng, v, len);
        let mut want = data.clone();
        v.reference(&key, &nonce, counter, &mut want);
        for b in backends() {
            let mut got = data.clone();
            v.pqkit(&key, &nonce, counter, b).apply_keystream(&mut got).unwrap();
            assert!(got == want, "{v:?} {b:?} len {len}");
            // Large odd-sized chunks.
            let mut got = data.clone();
            let mut c = v.pqkit(&key, &nonce, counter, b);
            for chunk in got.chunks_mut(100_003) {
                c.apply_keystream(chunk).unwrap();
            }
            assert!(got == want, "{v:?} {b:?} len {len} chunked");
        }
    }
    // The legacy layout crossing a 2^32 block boundary: the counter carries into word 13.
    let v = Variant::Legacy;
    let (key, nonce, _, data) = random_case(&mut rng, v, 5000);
    for counter in [0xFFFF_FFF0u64, 0xFFFF_FFFF, 0x1_FFFF_FFFA] {
        let mut want = data.clone();
        v.reference(&key, &nonce, counter, &mut want);
        for b in backends() {
            let mut got = data.clone();
            v.pqkit(&key, &nonce, counter, b).apply_keystream(&mut got).unwrap();
            assert!(got == want, "{b:?} counter {counter:#x}");
            // Calls of whole blocks, each starting at a block boundary, crossing the 2^32 boundary between
            // calls; then a seek back before it, and the same calls again.
            for step in [64usize, 192, 1024, 1000] {
                let mut c = v.pqkit(&key, &nonce, counter, b);
                for round in 0..2 {
                    let mut got = data.clone();
                    let mut at = 0;
                    for chunk in got.chunks_mut(step) {
                        c.seek(at as u64).unwrap();
                        c.apply_keystream(chunk).unwrap();
                        at += chunk.len();
                    }
                    assert!(got == want, "{b:?} counter {counter:#x} step {step} round {round}");
                }
            }
        }
    }
}

#[test]
fn hchacha20_matches_reference() {
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..200 {
        let key: [u8; 32] = rng.random();
        let input: [u8; 16] = rng.random();
        let want = chacha20::hchacha::<chacha20::R20>(&key.into(), &input.into());
        assert_eq!(hchacha20(&key, &input)[..], want[..]);
    }
}

/// ChaCha20 legacy equals IETF ChaCha20 with nonce = counter-high word || legacy nonce, an independent check
/// of the legacy layout.
#[test]
fn legacy_layout_matches_ietf_with_prefixed_nonce() {
    let mut rng = StdRng::seed_from_u64(11);
    for len in [0, 1, 63, 64, 65, 1000, 4099] {
        let (key, nonce, _, data) = random_case(&mut rng, Variant::Legacy, len);
        let ctr: u32 = rng.random_range(0..1 << 30);
        let mut a = data.clone();
        ChaCha20Legacy::new_with_counter(&key, &nonce, ctr as u64).unwrap().apply_keystream(&mut a).unwrap();
        let mut ietf_nonce = vec![0u8; 4];
        ietf_nonce.extend_from_slice(&nonce);
        let mut b = data.clone();
        ChaCha20::new_with_counter(&key, &ietf_nonce, ctr).unwrap().apply_keystream(&mut b).unwrap();
        assert_eq!(a, b);
    }
}

// ---------- rejection paths ----------

#[test]
fn wrong_key_and_nonce_lengths() {
    let k = [0u8; 33];
    let n = [0u8; 25];
    let e = |alg: &'static str, field: &'static str, exp: usize, got: usize| Error::length(alg, field, exp, got);
    for kl in [0, 16, 31, 33] {
        assert_eq!(ChaCha20::new(&k[..kl], &n[..12]).unwrap_err(), e("ChaCha20", "key", 32, kl));
        assert_eq!(ChaCha20Legacy::new(&k[..kl], &n[..8]).unwrap_err(), e("ChaCha20 (legacy)", "key", 32, kl));
        assert_eq!(XChaCha20::new(&k[..kl], &n[..24]).unwrap_err(), e("XChaCha20", "key", 32, kl));
        assert_eq!(ChaCha12::new(&k[..kl], &n[..8]).unwrap_err(), e("ChaCha12", "key", 32, kl));
        assert_eq!(ChaCha8::new_with_counter(&k[..kl], &n[..8], 5).unwrap_err(), e("ChaCha8", "key", 32, kl));
    }
    for nl in [0, 8, 11, 13, 24] {
        assert_eq!(ChaCha20::new(&k[..32], &n[..nl]).unwrap_err(), e("ChaCha20", "nonce", 12, nl));
        assert_eq!(ChaCha20::new_with_counter(&k[..32], &n[..nl], 1).unwrap_err(), e("ChaCha20", "nonce", 12, nl));
    }
    for nl in [0, 7, 9, 12] {
        assert_eq!(ChaCha20Legacy::new(&k[..32], &n[..nl]).unwrap_err(), e("ChaCha20 (legacy)", "nonce", 8, nl));
        assert_eq!(ChaCha12::new(&k[..32], &n[..nl]).unwrap_err(), e("ChaCha12", "nonce", 8, nl));
        assert_eq!(ChaCha8::new(&k[..32], &n[..nl]).unwrap_err(), e("ChaCha8", "nonce", 8, nl));
    }
    for nl in [0, 12, 23, 25] {
        assert_eq!(XChaCha20::new(&k[..32], &n[..nl]).unwrap_err(), e("XChaCha20", "nonce", 24, nl));
    }
    // The key length is checked first.
    assert_eq!(ChaCha20::new(&k[..1], &n[..1]).unwrap_err(), e("ChaCha20", "key", 32, 1));
}

#[test]
fn ietf_counter_exhaustion() {
    let key = [7u8; 32];
    let mut rng = StdRng::seed_from_u64(5);
    for b in backends() {
        for ctor in [0, 1] {
            let mk = || -> Box<dyn StreamCipher> {
                if ctor == 0 {
                    Box::new(ChaCha20::new_with_counter(&key, &[1; 12], u32::MAX).unwrap().with_backend(b))
                } else {
                    Box::new(XChaCha20::new_with_counter(&key, &[1; 24], u32::MAX).unwrap().with_backend(b))
                }
            };
            let name = if ctor == 0 { "ChaCha20" } else { "XChaCha20" };
            // 64 bytes are fine, the 65th byte is not.
            let mut c = mk();
            let mut block = [0u8; 64];
            c.apply_keystream(&mut block).unwrap();
            assert_ne!(block, [0u8; 64]);
            let mut one = [0xAAu8; 1];
            assert_eq!(c.apply_keystream(&mut one).unwrap_err(), Error::CounterExhausted { algorithm: name });
            assert_eq!(one, [0xAA], "data untouched on error");
            assert_eq!(c.position(), 64);
            // Empty input at the very end is fine.
            c.apply_keystream(&mut []).unwrap();
            // 65 bytes at once fail and leave data and position untouched.
            let mut c = mk();
            let mut data = vec![0u8; 65];
            rng.fill_bytes(&mut data);
            let orig = data.clone();
            assert_eq!(c.apply_keystream(&mut data).unwrap_err(), Error::CounterExhausted { algorithm: name });
            assert_eq!(data, orig);
            assert_eq!(c.position(), 0);
            // After a partial use: 10 then 54 fine, then 1 fails.
            let mut c = mk();
            let mut a = [0u8; 10];
            c.apply_keystream(&mut a).unwrap();
            let mut bb = [0u8; 55];
            assert!(c.apply_keystream(&mut bb).is_err());
            assert_eq!(bb, [0u8; 55]);
            assert_eq!(c.position(), 10);
            let mut bb = [0u8; 54];
            c.apply_keystream(&mut bb).unwrap();
            assert_eq!(&a[..], &block[..10]);
            assert_eq!(&bb[..], &block[10..]);
            // Seeking: to the end is fine, past it is not.
            let mut c = mk();
            c.seek(64).unwrap();
            assert_eq!(c.seek(65).unwrap_err(), Error::MessageTooLong { algorithm: name, max: 64 });
            assert_eq!(c.position(), 64, "position unchanged on a failed seek");
            assert!(c.apply_keystream(&mut [0u8; 1]).is_err());
        }
        // From counter 0 the whole 2^32-block range is seekable, one byte past it is not.
        let mut c = ChaCha20::new(&key, &[0; 12]).unwrap().with_backend(b);
        let end = 64u64 << 32;
        c.seek(end - 3).unwrap();
        let mut tail = [0u8; 3];
        c.apply_keystream(&mut tail).unwrap();
        assert_eq!(c.seek(end + 1).unwrap_err(), Error::MessageTooLong { algorithm: "ChaCha20", max: end });
        assert_eq!(c.seek(u64::MAX).unwrap_err(), Error::MessageTooLong { algorithm: "ChaCha20", max: end });
        // The last 3 bytes equal those of the last block computed directly.
        let mut last = [0u8; 64];
        ChaCha20::new_with_counter(&key, &[0; 12], u32::MAX).unwrap().apply_keystream(&mut last).unwrap();
        assert_eq!(tail, last[61..]);
    }
}

#[test]
fn legacy_counter_exhaustion_near_2_64() {
    let key = [9u8; 32];
    let nonce = [3u8; 8];
    for b in backends() {
        let mut c = ChaCha20Legacy::new_with_counter(&key, &nonce, u64::MAX - 1).unwrap().with_backend(b);
        let mut two = [0u8; 128];
        c.apply_keystream(&mut two).unwrap();
        let mut want = [0u8; 128];
        Variant::Legacy.reference(&key, &nonce, u64::MAX - 1, &mut want[..64]);
        Variant::Legacy.reference(&key, &nonce, u64::MAX, &mut want[64..]);
        assert_eq!(two, want, "{b:?}");
        let mut one = [5u8; 1];
        assert_eq!(
            c.apply_keystream(&mut one).unwrap_err(),
            Error::CounterExhausted { algorithm: "ChaCha20 (legacy)" }
        );
        assert_eq!(one, [5]);
        assert_eq!(c.seek(129).unwrap_err(), Error::MessageTooLong { algorithm: "ChaCha20 (legacy)", max: 128 });
        c.seek(100).unwrap();
        let mut rest = [0u8; 28];
        c.apply_keystream(&mut rest).unwrap();
        assert_eq!(rest, want[100..]);

        // ChaCha8 / ChaCha12 likewise.
        let mut c = ChaCha8::new_with_counter(&key, &nonce, u64::MAX).unwrap().with_backend(b);
        c.apply_keystream(&mut [0u8; 64]).unwrap();
        assert_eq!(c.apply_keystream(&mut [0u8; 1]).unwrap_err(), Error::CounterExhausted { algorithm: "ChaCha8" });
        let mut c = ChaCha12::new_with_counter(&key, &nonce, u64::MAX).unwrap().with_backend(b);
        assert_eq!(c.apply_keystream(&mut [0u8; 65]).unwrap_err(), Error::CounterExhausted { algorithm: "ChaCha12" });

        // From counter 0 the position can reach u64::MAX (the 64-bit counter covers 2^70 bytes).
        let mut c = ChaCha20Legacy::new(&key, &nonce).unwrap().with_backend(b);
        c.seek(u64::MAX - 64).unwrap();
        let mut x = [0u8; 64];
        c.apply_keystream(&mut x).unwrap();
        assert_eq!(c.position(), u64::MAX);
        assert!(c.apply_keystream(&mut [0u8; 1]).is_err());
    }
}

#[test]
fn debug_prints_no_key_material() {
    let key = [0x41u8; 32];
    let c = ChaCha20::new(&key, &[0; 12]).unwrap();
    assert_eq!(format!("{c:?}"), "ChaCha20 { .. }");
    assert_eq!(format!("{:?}", XChaCha20::new(&key, &[0; 24]).unwrap()), "XChaCha20 { .. }");
    assert_eq!(format!("{:?}", ChaCha20Legacy::new(&key, &[0; 8]).unwrap()), "ChaCha20Legacy { .. }");
    assert_eq!(format!("{:?}", ChaCha12::new(&key, &[0; 8]).unwrap()), "ChaCha12 { .. }");
    assert_eq!(format!("{:?}", ChaCha8::new(&key, &[0; 8]).unwrap()), "ChaCha8 { .. }");
}

#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    for b in [
        Backend::Soft,
        Backend::Avx2,
        Backend::Avx2Zen3,
        Backend::Avx2Zen4,
        Backend::Avx2Zen5,
        Backend::Avx512,
        Backend::Avx512Zen4,
        Backend::Avx512Zen5,
        Backend::Neon,
    ] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has);
                let c = ChaCha20::new(&[1; 32], &[2; 12]).unwrap().with_backend(checked);
                assert_eq!(c.backend(), b);
            }
            Err(pqkit::Error::BackendUnavailable { algorithm: "ChaCha", backend, missing }) => {
                assert!(!has, "{b:?}");
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty());
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
    }
    // x86 backends never run on aarch64 and NEON never on x86.
    assert!(!(Backend::Avx2.is_available() && Backend::Neon.is_available()));
}

#[test]
fn stream_adapters_match_one_shot() {
    use std::io::{Read, Write};
    let key = [5u8; 32];
    let nonce = [6u8; 24];
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();
    let mut want = data.clone();
    XChaCha20::new(&key, &nonce).unwrap().apply_keystream(&mut want).unwrap();
    let mut w = pqkit::cipher::StreamWriter::with_buffer_size(Vec::new(), XChaCha20::new(&key, &nonce).unwrap(), 1000);
    for chunk in data.chunks(777) {
        w.write_all(chunk).unwrap();
    }
    assert_eq!(w.into_inner().0, want);
    let mut r = pqkit::cipher::StreamReader::new(&want[..], XChaCha20::new(&key, &nonce).unwrap());
    let mut back = Vec::new();
    r.read_to_end(&mut back).unwrap();
    assert_eq!(back, data);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Streaming equals one-shot for any split of any message, with every backend, and decrypting restores
    /// the plaintext.
    #[test]
    fn streaming_equals_one_shot(
        key in proptest::array::uniform32(proptest::prelude::any::<u8>()),
        nonce in proptest::array::uniform12(proptest::prelude::any::<u8>()),
        data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
        cuts in proptest::collection::vec(0usize..3000, 0..8),
    ) {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
        cuts.sort_unstable();
        for b in backends() {
            let mut one = data.clone();
            ChaCha20::new(&key, &nonce).unwrap().with_backend(b).apply_keystream(&mut one).unwrap();
            let mut streamed = data.clone();
            let mut c = ChaCha20::new(&key, &nonce).unwrap().with_backend(b);
            let mut at = 0;
            for &cut in &cuts {
                c.apply_keystream(&mut streamed[at..cut]).unwrap();
                at = cut;
            }
            c.apply_keystream(&mut streamed[at..]).unwrap();
            proptest::prop_assert_eq!(&streamed, &one);
            let mut back = one.clone();
            ChaCha20::new(&key, &nonce).unwrap().with_backend(b).apply_keystream(&mut back).unwrap();
            proptest::prop_assert_eq!(&back, &data);
        }
    }
}

/// The AVX-512 loop computes 32 blocks per pass (two groups of 16 vector lanes), then one 16-block pass, then a
/// tail of 9..15 blocks through a partial 16-block pass or of 1..8 through the 8- and 4-block code; the 64-bit
/// block counter must carry from word 12 into word 13 identically wherever the wrap falls: in any lane of either
/// group, between groups or between passes. Starting counters 2^32 - 80 ..= 2^32 + 1 put the wrap at every block
/// position of the first two passes, for 20, 12 and 8 rounds, on every backend, with three lengths that end in
/// each kind of tail, and one that ends in a one-block tail.
#[test]
fn counter_carry_at_every_block_of_the_wide_loop() {
    let key = [0x5au8; 32];
    let nonce = [0xa5u8; 8];
    // The last length ends in a one-block tail, which the x86 backends compute on the integer units.
    for len in [2 * 32 * 64 + 16 * 64 + 12 * 64 + 17, 32 * 64 + 6 * 64 + 5, 32 * 64 + 3 * 64, 32 * 64 + 16 * 64 + 40] {
        counter_carry_case(&key, &nonce, len);
    }
}

fn counter_carry_case(key: &[u8; 32], nonce: &[u8; 8], len: usize) {
    let (key, nonce) = (*key, *nonce);
    for start in (1u64 << 32) - 80..=(1u64 << 32) + 1 {
        for v in [Variant::Legacy, Variant::R12, Variant::R8] {
            let mut want = vec![0u8; len];
            v.reference(&key, &nonce, start, &mut want);
            for b in backends() {
                let mut got = vec![0u8; len];
                v.pqkit(&key, &nonce, start, b).apply_keystream(&mut got).unwrap();
                assert!(got == want, "{v:?} {b:?} start {start:#x} length {len}");
            }
        }
    }
}
