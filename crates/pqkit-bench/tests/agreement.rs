//! A deliberately wrong implementation must be caught by the agreement check: reported as an error and never
//! timed, while the implementations that agree are still measured.
use pqkit_bench::registry::{Algorithm, Candidate, Check, Op};
use pqkit_bench::{Config, harness::Timing};

fn xor_op(key: u8, flip_at: Option<usize>) -> Box<dyn Op> {
    Box::new(move |data: &mut [u8], _out: &mut Vec<u8>| {
        for b in data.iter_mut() {
            *b ^= key;
        }
        if let Some(i) = flip_at
            && let Some(b) = data.get_mut(i)
        {
            *b ^= 1;
        }
        Ok(())
    })
}

fn config() -> Config {
    let mut c = Config::quick();
    c.timing = Timing::tiny();
    c.threads = vec![];
    c.progress = false;
    c
}

#[test]
fn wrong_output_is_an_error_and_never_timed() {
    let alg = Algorithm::bulk("Toy", "xor")
        .sizes(&[64, 1024])
        .with(Candidate::new("good-a", "1".into(), |_| Ok(xor_op(0x5a, None))))
        .with(Candidate::new("good-b", "1".into(), |_| Ok(xor_op(0x5a, None))))
        .with(Candidate::new("wrong", "1".into(), |_| Ok(xor_op(0x5a, Some(63)))));
    let out = pqkit_bench::run(&config(), &[alg]).unwrap();
    // One error per size, naming the wrong implementation only.
    assert_eq!(out.errors.len(), 2, "{:?}", out.errors);
    for e in &out.errors {
        assert_eq!(e.implementations, vec!["wrong".to_string()]);
        assert!(e.message.contains("first difference at byte 63"), "{}", e.message);
    }
    assert!(out.measurements.iter().all(|m| m.implementation != "wrong"));
    assert_eq!(out.measurements.len(), 4, "the agreeing pair is still timed at both sizes");
    let md = pqkit_bench::report::markdown(&out);
    assert!(md.contains("## Errors (never timed)"));
}

#[test]
fn two_disagreeing_implementations_time_nothing() {
    let alg = Algorithm::bulk("Toy", "xor")
        .sizes(&[64])
        .with(Candidate::new("a", "1".into(), |_| Ok(xor_op(1, None))))
        .with(Candidate::new("b", "1".into(), |_| Ok(xor_op(2, None))));
    let out = pqkit_bench::run(&config(), &[alg]).unwrap();
    assert!(out.measurements.is_empty());
    assert!(out.errors.iter().any(|e| e.message.contains("no majority")));
}

#[test]
fn a_failing_custom_check_times_nothing() {
    let alg = Algorithm::public_key("ToyKem", "encaps", 0, Check::Custom(Box::new(|| Err("round trip failed".into()))))
        .with(Candidate::new("a", "1".into(), |_| Ok(xor_op(1, None))))
        .with(Candidate::new("b", "1".into(), |_| Ok(xor_op(1, None))));
    let out = pqkit_bench::run(&config(), &[alg]).unwrap();
    assert!(out.measurements.is_empty());
    assert_eq!(out.errors.len(), 1);
    assert!(out.errors[0].message.contains("round trip failed"));
}

#[test]
fn the_real_pq_checks_pass_and_catch_a_wrong_kem() {
    use pqkit_bench::algs::pq::{AnyKey, Id, KemImpl, Named, kem_check, kem_impls};
    use std::sync::Arc;
    assert_eq!(kem_check(&kem_impls()), Ok(()));
    assert_eq!(pqkit_bench::algs::pq::sig_check(&pqkit_bench::algs::pq::sig_impls()), Ok(()));

    /// Wraps a correct KEM but corrupts its shared secret.
    struct Broken(Arc<dyn KemImpl>);
    impl Named for Broken {
        fn id(&self) -> Id {
            Id { name: "broken", version: || "0".into(), deterministic: false }
        }
    }
    impl KemImpl for Broken {
        fn keygen(&self, seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
            self.0.keygen(seed, ek)
        }
        fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
            self.0.parse_ek(ek)
        }
        fn encaps(&self, ek: &AnyKey, m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
            self.0.encaps(ek, m, out)
        }
        fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
            self.0.decaps(dk, ct, out)?;
            out[0] ^= 1;
            Ok(())
        }
    }
    let mut impls = kem_impls();
    impls.push(Arc::new(Broken(impls[0].clone())));
    let err = kem_check(&impls).unwrap_err();
    assert!(err.contains("broken") && err.contains("shared secrets differ"), "{err}");
}

#[test]
fn every_registered_candidate_agrees_at_small_sizes() {
    // The real registry (pqkit and every peer), checked at its small sizes: each byte-equality algorithm must have
    // all of its candidates agree, so that none is silently dropped from the timing.
    let algs = pqkit_bench::algs::all();
    let mut checked = 0;
    for alg in algs.iter().filter(|a| matches!(a.check, Check::Equal)) {
        for &size in alg.sizes.iter().filter(|&&s| s <= 1024) {
            let input = pqkit_bench::harness::input_bytes(size);
            let (ok, errors) = pqkit_bench::harness::check_agreement(alg, size, &input);
            assert!(errors.is_empty(), "{} at {size} B: {errors:?}", alg.id());
            assert_eq!(ok.len(), alg.candidates.len(), "{} at {size} B", alg.id());
            checked += 1;
        }
    }
    // The new families are there, with the peers they should have.
    let imps = |id: &str| -> Vec<&str> {
        let a = algs.iter().find(|a| a.id() == id).unwrap_or_else(|| panic!("{id} is not registered"));
        a.candidates.iter().map(|c| c.implementation).collect()
    };
    for (id, want) in [
        ("HKDF-SHA256/derive-32", &["openssl", "aws-lc-rs", "ring", "rustcrypto"][..]),
        ("HKDF-SHA512/derive-64", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("Argon2id/hash-m4MiB-t3-p1", &["openssl", "rustcrypto"]),
        ("Poly1305/mac", &["openssl", "rustcrypto"]),
        ("SHA-224/digest", &["openssl", "aws-lc-rs", "rustcrypto"]),
        ("SHA-384/digest", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("SHA-512/256/digest", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("SHA3-224/digest", &["openssl", "rustcrypto"]),
        ("SHA3-384/digest", &["openssl", "aws-lc-rs", "rustcrypto"]),
        ("SHA3-512/digest", &["openssl", "aws-lc-rs", "rustcrypto"]),
        ("SHAKE128/xof-32", &["openssl", "rustcrypto"]),
        ("SHAKE256/xof-64", &["openssl", "rustcrypto"]),
        ("HMAC-SHA256/mac", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("HMAC-SHA384/mac", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("HMAC-SHA512/mac", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("HMAC-SHA3-256/mac", &["openssl", "rustcrypto"]),
        ("SHA-512/224/digest", &["openssl", "rustcrypto"]),
        ("ChaCha20-Poly1305/open", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("ChaCha20-legacy/apply_keystream", &["rustcrypto"]),
        ("ChaCha12Rng/fill_bytes", &["rustcrypto"]),
        ("ChaCha8Rng/fill_bytes", &["rustcrypto"]),
        ("X25519/keygen", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("X25519/derive", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("Ed25519/keygen", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("Ed25519/sign", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
        ("Ed25519/verify", &["openssl", "aws-lc-rs", "ring", "rustcrypto"]),
    ] {
        let have = imps(id);
        for w in want {
            assert!(have.contains(w), "{id} lacks {w}: {have:?}");
        }
        #[cfg(feature = "pqkit-algs")]
        assert_eq!(have[0], "pqkit", "{id}");
    }
    assert!(checked > 40, "only {checked} (algorithm, size) pairs checked");
}

#[test]
fn a_wrong_kdf_output_is_caught() {
    // A KDF candidate that derives from a different salt is an error, never timed.
    let alg = pqkit_bench::registry::Algorithm::fixed("HKDF-SHA256", "derive-32", 32)
        .with(Candidate::new("ring", "1".into(), |_| Ok(hkdf_op(pqkit_bench::algs::kdf::SALT))))
        .with(Candidate::new("ring-again", "1".into(), |_| Ok(hkdf_op(pqkit_bench::algs::kdf::SALT))))
        .with(Candidate::new("wrong-salt", "1".into(), |_| Ok(hkdf_op([0u8; 32]))));
    let out = pqkit_bench::run(&config(), &[alg]).unwrap();
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    assert_eq!(out.errors[0].implementations, vec!["wrong-salt".to_string()]);
    assert_eq!(out.measurements.len(), 2);
    // Fixed-size operations report ops/s but no throughput.
    assert!(out.measurements.iter().all(|m| !m.has_throughput() && m.ops_per_sec() > 0.0));
}

fn hkdf_op(salt: [u8; 32]) -> Box<dyn Op> {
    Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        let prk = ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, &salt).extract(data);
        let mut okm = [0u8; 32];
        prk.expand(&[b"info"], ring::hkdf::HKDF_SHA256).map_err(|_| "len")?.fill(&mut okm).map_err(|_| "fill")?;
        out.clear();
        out.extend_from_slice(&okm);
        Ok(())
    })
}

#[test]
fn the_real_x25519_check_passes_and_catches_a_wrong_implementation() {
    use pqkit_bench::algs::ec::{DhImpl, dh_check, x25519_algorithms, x25519_impls};
    use pqkit_bench::algs::pq::{AnyKey, Id, Named};
    use std::sync::Arc;
    assert_eq!(dh_check(&x25519_impls()), Ok(()));

    /// Wraps a correct X25519 but corrupts the shared secret of its timed derive operation (`derive`) or of its
    /// one-shot agreement (`agree`). `deterministic`: whether it claims to take private keys (checked against RFC
    /// 7748) or to be ephemeral-only like ring (checked by cross agreement only).
    struct Broken {
        inner: Arc<dyn DhImpl>,
        deterministic: bool,
        agree: bool,
        derive: bool,
    }
    impl Named for Broken {
        fn id(&self) -> Id {
            Id { name: "broken", version: || "0".into(), deterministic: self.deterministic }
        }
    }
    impl DhImpl for Broken {
        fn keygen(&self, private: &[u8; 32], public: &mut Vec<u8>) -> Result<AnyKey, String> {
            self.inner.keygen(private, public)
        }
        fn agree(&self, key: AnyKey, peer: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
            self.inner.agree(key, peer, out)?;
            if self.agree {
                out[31] ^= 0x80;
            }
            Ok(())
        }
        fn derive_op(&self, private: &[u8; 32], peer: &[u8]) -> Result<Box<dyn Op>, String> {
            let mut op = self.inner.derive_op(private, peer)?;
            let flip = self.derive;
            Ok(Box::new(move |d: &mut [u8], out: &mut Vec<u8>| {
                op.run(d, out)?;
                if flip {
                    out[0] ^= 1;
                }
                Ok(())
            }))
        }
    }
    let broken = |deterministic, agree, derive| -> Vec<Arc<dyn DhImpl>> {
        let mut impls = x25519_impls();
        impls.push(Arc::new(Broken { inner: impls[0].clone(), deterministic, agree, derive }));
        impls
    };
    // Takes private keys, but its timed derive is wrong: caught against RFC 7748 §6.1.
    let err = dh_check(&broken(true, false, true)).unwrap_err();
    assert!(err.contains("broken") && err.contains("RFC 7748"), "{err}");
    // Takes private keys, wrong in its one-shot agreement.
    let err = dh_check(&broken(true, true, false)).unwrap_err();
    assert!(err.contains("broken") && err.contains("RFC 7748"), "{err}");
    // Ephemeral-only like ring, wrong in its agreement: caught by the cross agreement.
    let err = dh_check(&broken(false, true, false)).unwrap_err();
    assert!(err.contains("cross agreement failed: broken"), "{err}");

    // Through the harness: the error is reported for both rows and nothing is timed.
    let out = pqkit_bench::run(&config(), &x25519_algorithms(broken(true, false, true))).unwrap();
    assert!(out.measurements.is_empty());
    assert_eq!(out.errors.len(), 2, "{:?}", out.errors);
    for e in &out.errors {
        assert_eq!(e.algorithm, "X25519");
        assert!(e.message.contains("agreement check failed") && e.message.contains("broken"), "{}", e.message);
    }
}

#[test]
fn the_real_ed25519_check_passes_and_catches_a_wrong_implementation() {
    use pqkit_bench::algs::ec::{ed25519_algorithms, ed25519_impls};
    use pqkit_bench::algs::pq::{AnyKey, Id, Named, SigImpl, sig_check};
    use std::sync::Arc;
    assert_eq!(sig_check(&ed25519_impls()), Ok(()));

    /// Wraps a correct Ed25519 but corrupts its signatures (`sign`) or accepts every signature (`verify`).
    struct Broken {
        inner: Arc<dyn SigImpl>,
        sign: bool,
        verify: bool,
    }
    impl Named for Broken {
        fn id(&self) -> Id {
            Id { name: "broken", version: || "0".into(), deterministic: true }
        }
    }
    impl SigImpl for Broken {
        fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
            self.inner.keygen(seed, vk)
        }
        fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
            self.inner.parse_vk(vk)
        }
        fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
            self.inner.sign(sk, msg, out)?;
            if self.sign {
                out[40] ^= 1;
            }
            Ok(())
        }
        fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
            Ok(self.verify || self.inner.verify(vk, msg, sig)?)
        }
    }
    let broken = |sign, verify| -> Vec<Arc<dyn SigImpl>> {
        let mut impls = ed25519_impls();
        impls.push(Arc::new(Broken { inner: impls[0].clone(), sign, verify }));
        impls
    };
    let err = sig_check(&broken(true, false)).unwrap_err();
    assert!(err.contains("broken") && err.contains("differently"), "{err}");
    let err = sig_check(&broken(false, true)).unwrap_err();
    assert!(err.contains("broken accepts a corrupted signature"), "{err}");

    let out = pqkit_bench::run(&config(), &ed25519_algorithms(broken(true, false))).unwrap();
    assert!(out.measurements.is_empty());
    // An agreement error for each of the three rows (plus the broken verify op failing on its own signature).
    assert!(out.errors.iter().all(|e| e.algorithm == "Ed25519"), "{:?}", out.errors);
    for op in ["keygen", "sign", "verify"] {
        let n = out.errors.iter().filter(|e| e.operation == op && e.message.contains("agreement check failed")).count();
        assert_eq!(n, 1, "{op}: {:?}", out.errors);
    }
}
