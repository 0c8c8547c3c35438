//! The ChaCha CSPRNGs against RustCrypto `chacha20`'s RNGs (same seed/stream/counter layout), on every backend.

use pqkit::chacha::Backend;
use pqkit::rng::{ChaCha8Rng, ChaCha12Rng, ChaCha20Rng, ChaChaRng};
use rand::{Rng, RngExt, SeedableRng, rngs::StdRng};

/// The reference generator's bytes for `len` bytes from a fresh state.
fn reference<R: rand_core::SeedableRng<Seed = [u8; 32]> + rand_core::Rng>(seed: [u8; 32], len: usize) -> Vec<u8> {
    let mut r = R::from_seed(seed);
    let mut v = vec![0u8; len];
    r.fill_bytes(&mut v);
    v
}

fn check_rounds<const N: usize, R: rand_core::SeedableRng<Seed = [u8; 32]> + rand_core::Rng>() {
    let mut rng = StdRng::seed_from_u64(N as u64);
    for backend in Backend::available() {
        for len in (0..=300).chain([1023, 1024, 1025, 4096, 16 * 1024 + 3, 1 << 20]) {
            let seed: [u8; 32] = rng.random();
            let mut ours = ChaChaRng::<N>::from_seed(seed).with_backend(backend);
            let mut got = vec![0u8; len];
            ours.fill_bytes(&mut got);
            assert_eq!(got, reference::<R>(seed, len), "ChaCha{N} len {len} {backend:?}");
        }
    }
}

#[test]
fn chacha20_rng_matches_reference() {
    check_rounds::<20, chacha20::ChaCha20Rng>();
}

#[test]
fn chacha12_rng_matches_reference() {
    check_rounds::<12, chacha20::ChaCha12Rng>();
}

#[test]
fn chacha8_rng_matches_reference() {
    check_rounds::<8, chacha20::ChaCha8Rng>();
}

/// Any split of the output into calls gives the same byte stream as one call.
#[test]
fn chunked_fills_equal_one_fill() {
    let mut rng = StdRng::seed_from_u64(5);
    for backend in Backend::available() {
        let seed: [u8; 32] = rng.random();
        let total = 50_000;
        let mut whole = vec![0u8; total];
        ChaCha20Rng::from_seed(seed).with_backend(backend).fill_bytes(&mut whole);
        let mut r = ChaCha20Rng::from_seed(seed).with_backend(backend);
        let mut got = Vec::with_capacity(total);
        while got.len() < total {
            let n = rng.random_range(0..3000).min(total - got.len());
            let mut part = vec![0u8; n];
            r.fill_bytes(&mut part);
            got.extend_from_slice(&part);
        }
        assert_eq!(got, whole, "{backend:?}");
    }
}

#[test]
fn words_are_little_endian_stream_bytes() {
    let seed = [9u8; 32];
    let bytes = reference::<chacha20::ChaCha20Rng>(seed, 64);
    let mut r = ChaCha20Rng::from_seed(seed);
    assert_eq!(r.next_u32(), u32::from_le_bytes(bytes[0..4].try_into().unwrap()));
    assert_eq!(r.next_u64(), u64::from_le_bytes(bytes[4..12].try_into().unwrap()));
    // And the same as the reference's own word interface.
    let mut t = chacha20::ChaCha20Rng::from_seed(seed);
    let mut r = ChaCha20Rng::from_seed(seed);
    for _ in 0..100 {
        assert_eq!(r.next_u64(), t.next_u64());
        assert_eq!(r.next_u32(), t.next_u32());
    }
}

#[test]
fn streams_and_block_positions_match_reference() {
    let seed = [0x42u8; 32];
    for stream in [0u64, 1, 0xdead_beef_0000_0001] {
        for block in [0u64, 1, 0xffff_ffff, 0x1_0000_0000, 12345678901] {
            let mut ours = ChaCha12Rng::from_seed(seed);
            ours.set_stream(stream);
            ours.set_block_pos(block);
            assert_eq!(ours.stream(), stream);
            let mut theirs = chacha20::ChaCha12Rng::from_seed(seed);
            theirs.set_stream(stream);
            theirs.set_block_pos(block);
            let mut a = [0u8; 300];
            let mut b = [0u8; 300];
            ours.fill_bytes(&mut a);
            theirs.fill_bytes(&mut b);
            assert_eq!(a, b, "stream {stream} block {block}");
        }
    }
}

#[test]
fn os_seeded_generators_differ() {
    let mut a = ChaCha8Rng::from_os_rng().unwrap();
    let mut b = ChaCha8Rng::from_os_rng().unwrap();
    let (mut x, mut y) = ([0u8; 32], [0u8; 32]);
    a.fill_bytes(&mut x);
    b.fill_bytes(&mut y);
    assert_ne!(x, y);
    let mut z = [0u8; 64];
    pqkit::rng::fill_os(&mut z).unwrap();
    assert_ne!(z, [0u8; 64]);
}

#[test]
fn implements_rand_core_traits() {
    fn takes_crypto_rng<R: rand_core::CryptoRng>(r: &mut R) -> u64 {
        r.next_u64()
    }
    let mut r = ChaCha20Rng::seed_from_u64(1);
    let _ = takes_crypto_rng(&mut r);
    // Usable through rand's extension trait too.
    let v: u8 = r.random_range(10..20);
    assert!((10..20).contains(&v));
}
