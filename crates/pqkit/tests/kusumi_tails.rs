//! Kusumi512: every backend against the portable one at every length 0..=2200 (every tail shape of the 8- and
//! 16-block vector batches, with and without a partial last block), from starting counters placed so that the
//! 2^32 carry into word 21 falls in each lane position of a batch, and from counters just below the 64-bit end
//! (the unused lanes of a padded batch compute counters past 2^64 - 1, whose keystream must be discarded).

use pqkit::cipher::StreamCipher;
use pqkit::kusumi::{Backend, Kusumi512};
use rand::Rng;

/// The starting counters: 1 (where encryption starts), the carry into word 21 landing on lanes 0, 1, 7, 8, 11,
/// 15 and 22 blocks in, and the last 23 blocks before the counter's end (2200 bytes are 22 blocks).
fn starts() -> Vec<u64> {
    let mut s = vec![1u64];
    for k in [0u64, 1, 7, 8, 11, 15, 22] {
        s.push((1u64 << 32) - k);
    }
    s.push(u64::MAX - 22);
    s
}

#[test]
fn backends_match_soft_at_every_length_to_2200_across_the_carry_and_the_end() {
    let mut rng = rand::rng();
    let mut key = [0u8; 64];
    let mut nonce = [0u8; 12];
    rng.fill_bytes(&mut key);
    rng.fill_bytes(&mut nonce);
    let backends: Vec<_> = Backend::available().collect();
    assert_eq!(backends[0], Backend::Soft);
    let mut data = vec![0u8; 2200];
    rng.fill_bytes(&mut data);
    for start in starts() {
        let mut want = data.clone();
        let soft = Backend::Soft.checked().unwrap();
        Kusumi512::new_with_backend(&key, &nonce, start, soft).unwrap().apply_keystream(&mut want).unwrap();
        assert_ne!(want, data);
        for &b in &backends[1..] {
            for len in 0..=2200usize {
                let mut got = data[..len].to_vec();
                let mut k = Kusumi512::new_with_backend(&key, &nonce, start, b).unwrap();
                k.apply_keystream(&mut got).unwrap();
                assert!(got == want[..len], "{b:?} start {start:#x} len {len}");
                // The same instance continues where the call ended (through a kept partial block, if any).
                let mut more = data[len..].to_vec();
                k.apply_keystream(&mut more).unwrap();
                assert!(more == want[len..], "{b:?} start {start:#x} continuing after {len}");
            }
        }
    }
}

#[test]
fn this_machine_has_a_vector_backend_to_compare() {
    // On x86_64 CI machines (all have AVX2) the test above must compare something; under PQKIT_CPU=portable only
    // the portable backend is available, and then there is nothing to compare by design.
    // On other architectures (the aarch64 run under qemu) there is no AVX2 to require.
    #[cfg(target_arch = "x86_64")]
    {
        let cap = std::env::var("PQKIT_CPU").unwrap_or_default();
        if cap != "portable" && std::is_x86_feature_detected!("avx2") {
            assert!(Backend::available().count() >= 2, "no vector backend under PQKIT_CPU={cap:?}");
        }
    }
}
