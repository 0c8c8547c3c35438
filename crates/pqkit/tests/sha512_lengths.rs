//! SHA-512 family and HMAC-SHA512 on every backend this CPU has, against RustCrypto `sha2` / `hmac`:
//! every message length 0..=1200 (every padding case, and every count of full blocks from 0 to 9,
//! so a compression call sees 1, 2, 3, ... blocks and the vector backends' partial groups and block pairs
//! of both parities), at an odd offset in the buffer, plus multi-block sizes around the backends' group
//! boundaries (block counts 1..=20 and 63..=66, each -1, +0, +1 byte), one-shot and incremental.

use hmac::Mac;
use pqkit::dispatch::Checked;
use pqkit::hash::sha2::{Backend, Sha384, Sha512};
use pqkit::mac::Hmac;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sha2::Digest;

fn backends() -> Vec<Checked<Backend>> {
    let v: Vec<Checked<Backend>> = Backend::available().collect();
    assert_eq!(v[0], Backend::Soft, "the portable backend is always first");
    v
}

/// Random bytes with one leading byte, so that `&buf[1..]` starts at an odd address.
fn odd_buffer(r: &mut StdRng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n + 1];
    r.fill_bytes(&mut v);
    v
}

fn lengths() -> Vec<usize> {
    let mut lens: Vec<usize> = (0..=1200).collect();
    for blocks in (1..=20).chain(63..=66) {
        let n = blocks * 128;
        lens.extend([n - 1, n, n + 1].into_iter().filter(|&x| x > 1200));
    }
    lens
}

#[test]
fn sha512_every_length_every_backend_vs_rustcrypto() {
    let mut r = StdRng::seed_from_u64(0x16_512);
    let lens = lengths();
    let max = *lens.iter().max().unwrap();
    let buf = odd_buffer(&mut r, max);
    let data = &buf[1..];
    let bks = backends();
    for &n in &lens {
        let m = &data[..n];
        let want512 = sha2::Sha512::digest(m);
        let want384 = sha2::Sha384::digest(m);
        for &b in &bks {
            assert_eq!(Sha512::digest_with_backend(b, m)[..], want512[..], "{b:?} SHA-512 one-shot, len {n}");
            assert_eq!(Sha384::digest_with_backend(b, m)[..], want384[..], "{b:?} SHA-384 one-shot, len {n}");
            // Incremental, split so that the first piece leaves the buffer partly filled.
            let cut = n.min(n / 3 + 5);
            let mut x = Sha512::with_backend(b);
            x.update(&m[..cut]).update(&m[cut..]);
            assert_eq!(x.finalize()[..], want512[..], "{b:?} SHA-512 incremental (cut {cut}), len {n}");
        }
    }
}

#[test]
fn hmac_sha512_every_length_every_backend_vs_rustcrypto() {
    let mut r = StdRng::seed_from_u64(0x16_4d4);
    let buf = odd_buffer(&mut r, 1200);
    let data = &buf[1..];
    // Key lengths: empty, short, one under / at / over the block (128), and one that is hashed first.
    for klen in [0usize, 20, 64, 127, 128, 129, 300] {
        let mut key = vec![0u8; klen];
        r.fill_bytes(&mut key);
        let keyed = <hmac::Hmac<sha2::Sha512> as Mac>::new_from_slice(&key).unwrap();
        let ours: Vec<Hmac<Sha512>> =
            backends().into_iter().map(|b| Hmac::<Sha512>::with_hasher(&key, Sha512::with_backend(b))).collect();
        for n in 0..=1200 {
            let m = &data[..n];
            let want = keyed.clone().chain_update(m).finalize().into_bytes();
            for (i, k) in ours.iter().enumerate() {
                assert_eq!(k.mac(m)[..], want[..], "backend #{i} key {klen} B, msg {n} B");
            }
        }
    }
}
