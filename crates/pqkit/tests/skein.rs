//! Skein-512: Skein 1.3 Appendix C known answers, the configuration IV of Appendix B, differential tests
//! against RustCrypto `skein` (Skein512<U32>/<U64>), streaming == one-shot, and rejection paths.

use pqkit::Error;
use pqkit::hash::skein::{Skein512, Skein512_256, Skein512_512, skein512};
use rand::{Rng, RngExt};
use skein::Digest;
use std::io::Write;

fn desc(n: usize) -> Vec<u8> {
    (0..n).map(|i| 0xFF - i as u8).collect()
}

#[test]
fn skein_1_3_appendix_c_skein512_512() {
    let cases = [
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
        (
            desc(128),
            "91cca510c263c4ddd010530a33073309628631f308747e1bcbaa90e451cab92e\
             5188087af4188773a332303e6667a7a210856f742139000071f48e8ba2a5adb7",
        ),
    ];
    for (msg, want) in cases {
        assert_eq!(hex::encode(Skein512_512::digest(&msg)), want);
        assert_eq!(hex::encode(skein512(64, &msg).unwrap()), want);
    }
}

#[test]
fn empty_message() {
    assert_eq!(
        hex::encode(Skein512_512::digest(b"")),
        "bc5b4c50925519c290cc634277ae3d6257212395cba733bbad37a4af0fa06af4\
         1fca7903d06564fea7a2d3730dbdb80c1f85562dfcc070334ea4d1d9e72cba7a"
    );
}

#[test]
fn matches_rustcrypto_on_random_inputs() {
    let mut rng = rand::rng();
    let lens = (0..=300usize).chain([511, 512, 513, 1000, 4096, 4097, 10_000]);
    for len in lens {
        let mut data = vec![0u8; len];
        rng.fill_bytes(&mut data);
        let r32 = skein::Skein512::<skein::U32>::digest(&data);
        let r64 = skein::Skein512::<skein::U64>::digest(&data);
        assert_eq!(&Skein512_256::digest(&data)[..], &r32[..], "len {len}");
        assert_eq!(&Skein512_512::digest(&data)[..], &r64[..], "len {len}");
        // Incremental with random chunking.
        let mut a = Skein512_256::new();
        let mut c = Skein512::new(32).unwrap();
        let mut b = Skein512::new(64).unwrap();
        let mut i = 0;
        while i < len {
            let n = rng.random_range(0..=200usize).min(len - i);
            a.update(&data[i..i + n]);
            c.update(&data[i..i + n]);
            b.write_all(&data[i..i + n]).unwrap();
            i += n;
        }
        assert_eq!(&a.finalize()[..], &r32[..], "chunked len {len}");
        assert_eq!(&c.finalize()[..], &r32[..], "chunked len {len}");
        let mut out = [0u8; 64];
        b.finalize_into(&mut out).unwrap();
        assert_eq!(&out[..], &r64[..], "chunked len {len}");
    }
}

#[test]
fn other_output_lengths_match_rustcrypto() {
    let mut rng = rand::rng();
    let mut data = vec![0u8; 777];
    rng.fill_bytes(&mut data);
    let r128 = skein::Skein512::<skein::U128>::digest(&data);
    assert_eq!(&skein512(128, &data).unwrap()[..], &r128[..]);
    let r48 = skein::Skein512::<skein::digest::consts::U48>::digest(&data);
    assert_eq!(&skein512(48, &data).unwrap()[..], &r48[..]);
    let r1 = skein::Skein512::<skein::digest::consts::U1>::digest(&data);
    assert_eq!(&skein512(1, &data).unwrap()[..], &r1[..]);
    let r100 = skein::Skein512::<skein::digest::consts::U100>::digest(&data);
    assert_eq!(&skein512(100, &data).unwrap()[..], &r100[..]);
}

#[test]
fn output_length_changes_the_whole_output() {
    // The output length is in the configuration block: a 32-byte digest is not a prefix of the 64-byte one.
    let a = Skein512_256::digest(b"abc");
    let b = Skein512_512::digest(b"abc");
    assert_ne!(&a[..], &b[..32]);
    // Long outputs use the output counter: 200 bytes = 4 output blocks.
    let long = skein512(200, b"abc").unwrap();
    assert_eq!(long.len(), 200);
    assert_ne!(&long[..64], &long[64..128]);
}

#[test]
fn rejection_paths() {
    assert_eq!(
        Skein512::new(0).unwrap_err(),
        Error::InvalidParameter { algorithm: "Skein-512", reason: "output length must be at least 1 byte" }
    );
    assert!(matches!(skein512(0, b"x"), Err(Error::InvalidParameter { .. })));
    assert!(matches!(Skein512::new(usize::MAX), Err(Error::InvalidParameter { .. })));
    let h = Skein512::new(32).unwrap();
    let mut out = [0u8; 31];
    assert_eq!(h.clone().finalize_into(&mut out), Err(Error::length("Skein-512", "output", 32, 31)));
    let mut out = [0u8; 33];
    assert_eq!(h.finalize_into(&mut out), Err(Error::length("Skein-512", "output", 32, 33)));
}

#[test]
fn fixed_hashers_implement_the_hasher_trait() {
    use pqkit::hash::Hasher;
    fn via_trait<H: Hasher>(data: &[u8]) -> H::Output {
        let mut h = H::new();
        h.update(&data[..data.len() / 2]);
        h.update(&data[data.len() / 2..]);
        h.finalize()
    }
    let data = b"The quick brown fox jumps over the lazy dog";
    assert_eq!(via_trait::<Skein512_256>(data), Skein512_256::digest(data));
    assert_eq!(&via_trait::<Skein512_512>(data)[..], &skein::Skein512::<skein::U64>::digest(data)[..]);
    assert_eq!(<Skein512_256 as Hasher>::NAME, "Skein-512-256");
    assert_eq!(<Skein512_512 as Hasher>::BLOCK_LEN, 64);
    let mut h = Skein512_512::new();
    h.update(b"garbage");
    h.reset();
    h.update(data);
    assert_eq!(h.clone().finalize(), Skein512_512::digest(data));
    let mut w = Skein512_256::default();
    w.write_all(data).unwrap();
    assert_eq!(w.finalize(), Skein512_256::digest(data));
    let mut out = [0u8; 32];
    assert_eq!(
        Hasher::finalize_into(Skein512_512::new(), &mut out),
        Err(Error::length("Skein-512-512", "output", 64, 32))
    );
}
