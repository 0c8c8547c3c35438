//! The one dispatch rule (pqkit::dispatch), checked for every backend of every family on this CPU, under every
//! CPU cap. Its own test binary: the cap is process-wide, so nothing else may run beside these checks.

use pqkit::cpu::{self, Cap, Features, Uarch};
use pqkit::dispatch::{BackendSet, Checked};

/// Checks one family under the cap in force: a backend is available exactly when every feature it needs is in
/// force; asking for one that is not gives `BackendUnavailable` naming the family, the backend and exactly the
/// missing features; `detect()` is available, automatic, not avoided on this microarchitecture, and no later
/// automatic backend is available and not avoided here.
fn check_family<B: BackendSet>() {
    let f = cpu::features();
    assert!(B::ALL[0].required().is_empty(), "{}: the first backend must be the portable one", B::FAMILY);
    for &b in B::ALL {
        let need = b.required();
        match Checked::new(b) {
            Ok(c) => {
                assert!(f.has(need), "{} {:?} accepted without {need}", B::FAMILY, b);
                assert_eq!(c.get(), b);
            }
            Err(pqkit::Error::BackendUnavailable { algorithm, backend, missing }) => {
                assert!(!f.has(need), "{} {:?} refused although available", B::FAMILY, b);
                assert_eq!(algorithm, B::FAMILY);
                assert_eq!(backend, b.name());
                assert_eq!(missing, need.without(f), "{} {:?}", B::FAMILY, b);
                // The message names the missing features.
                let msg = pqkit::Error::BackendUnavailable { algorithm, backend, missing }.to_string();
                assert!(msg.contains(b.name()) && msg.contains(&missing.to_string()), "{msg}");
            }
            Err(e) => panic!("{} {:?}: unexpected error {e}", B::FAMILY, b),
        }
    }
    let u = cpu::uarch();
    let best = Checked::<B>::best().get();
    assert!(f.has(best.required()) && ((best.auto() && !best.avoided_on(u)) || best == B::ALL[0]));
    assert_eq!(best, pqkit::dispatch::choose::<B>(f, u));
    let after = B::ALL.iter().skip_while(|&&b| b != best).skip(1);
    for &b in after {
        assert!(
            !(b.auto() && f.has(b.required()) && !b.avoided_on(u)),
            "{}: {:?} was passed over for {:?}",
            B::FAMILY,
            b,
            best
        );
    }
    let all: Vec<B> = Checked::<B>::all().map(Checked::get).collect();
    let want: Vec<B> = B::ALL.iter().copied().filter(|b| f.has(b.required())).collect();
    assert_eq!(all, want);
}

macro_rules! every_family {
    ($f:ident) => {{
        $f::<pqkit::chacha::Backend>();
        $f::<pqkit::kusumi::Backend>();
        $f::<pqkit::threefish::Backend>();
        $f::<pqkit::poly1305::Backend>();
        $f::<pqkit::aes::Backend>();
        $f::<pqkit::hash::sha2::Backend>();
        $f::<pqkit::hash::sha2::multi::Backend>();
        $f::<pqkit::hash::blake2::Backend>();
        $f::<pqkit::hash::sha3::Backend>();
        $f::<pqkit::mlkem::Backend>();
        $f::<pqkit::mldsa::Backend>();
        $f::<pqkit::ec::curve25519::Backend>();
        $f::<pqkit::ec::curve25519::multi::Backend>();
        $f::<pqkit::ec::p256::Backend>();
        $f::<pqkit::ec::p256::batch::Backend>();
        $f::<pqkit::ec::secp256k1::Backend>();
        $f::<pqkit::kdf::argon2::Backend>();
        $f::<pqkit::rsa::Backend>();
    }};
}

#[test]
fn every_backend_of_every_family_obeys_the_rule_under_every_cap() {
    let detected = cpu::detected();
    for cap in Cap::ALL {
        let f = cpu::set_cap(cap);
        assert_eq!(f, cpu::features());
        assert!(detected.has(f), "{cap} added a feature the CPU lacks");
        assert_eq!(cpu::cap(), cap);
        match cap {
            Cap::Portable => assert_eq!(f, Features::NONE),
            Cap::Avx2 => assert!(f.intersect(Features::AVX512_ALL).is_empty()),
            Cap::Avx512 | Cap::Native => assert_eq!(f, detected),
        }
        every_family!(check_family);
        aes_gcm_tiers(cap, f, detected);
        zen5_preferences(cap, f);
        zen3_preferences(cap, f);
        if cap == Cap::Portable {
            for (family, backend) in pqkit::families::chosen() {
                assert_eq!(backend, "Soft", "{family} under the portable cap");
            }
        }
    }
    cpu::set_cap(Cap::Native);
}

/// AES-GCM per tier: VAES and VPCLMULQDQ on ymm survive the AVX2 cap (AMD Zen 3 has them without AVX-512), and
/// there the 256-bit backend is chosen; without a cap an AVX-512 machine keeps the 512-bit one.
fn aes_gcm_tiers(cap: Cap, f: Features, detected: Features) {
    use pqkit::aes::Backend;
    let ymm_aes = Features::VAES | Features::VPCLMULQDQ;
    match cap {
        Cap::Avx2 => {
            assert_eq!(f.intersect(ymm_aes), detected.intersect(ymm_aes), "the avx2 cap dropped VAES/VPCLMULQDQ");
            assert!(!Backend::Vaes.is_available());
            assert_eq!(Backend::detect() == Backend::Vaes256, f.has(Backend::Vaes256.required()));
        }
        Cap::Avx512 | Cap::Native if f.has(Backend::Vaes.required()) => assert_eq!(Backend::detect(), Backend::Vaes),
        _ => {}
    }
}

/// The per-microarchitecture preferences measured so far (pqkit::dispatch, `avoid_on`): on Zen 5, and on Intel
/// (`Other`) without AVX-512, the portable BLAKE2 wins over the AVX2 code; on Zen 5 the AVX2 SHA-512 schedule wins over the vector code the features alone would choose, the
/// SHA-512 round with four-cycle recurrences (`Avx2Zen5`, `ShaNiZen5`) over the 22-operation one, and ChaCha's
/// last block on the integer units (`Avx2Zen5`, `Avx512Zen5`) over the row layout; on every other
/// CPU, Zen 3 and Zen 4 included, the choice is the feature-based one without the Zen 5 variants. On Zen 3 and on
/// Intel (`Other`) the RSA 16-limb reduction as plain rows (`Bmi2AdxRows`) wins over the register window; on Zen 3
/// also ChaCha20-Poly1305 with its two halves apart (`Avx2Zen3`) over the stitched AVX2 loop; on Zen 4 the 256-bit IFMA
/// exponentiation at 1024 bits over the 512-bit one, ChaCha20-Poly1305's open of whole passes in place
/// (`Avx2Zen4`) over the keystream buffer, and ChaCha calls of 65 to 256 bytes in ymm rows (`Avx512Zen4`)
/// over zmm rows. Checked as pure choices for every CPU design (so it fails if the
/// preference is ignored, on any machine); on this machine under every cap by `zen5_preferences` and
/// `zen3_preferences`.
#[test]
fn per_microarchitecture_preferences() {
    use pqkit::dispatch::choose;
    use pqkit::hash::{blake2, sha2};
    let avx512 = sha2::Backend::ShaNiAvx512.required() | blake2::Backend::Avx512.required();
    let avx2 = sha2::Backend::ShaNi.required() | blake2::Backend::Avx2.required();
    for u in [Uarch::Other, Uarch::Zen3, Uarch::Zen4] {
        assert_eq!(choose::<blake2::Backend>(avx512, u), blake2::Backend::Avx512);
        let want = if u == Uarch::Other { blake2::Backend::Soft } else { blake2::Backend::Avx2 };
        assert_eq!(choose::<blake2::Backend>(avx2, u), want);
        assert_eq!(choose::<sha2::Backend>(avx512, u), sha2::Backend::ShaNiAvx512);
        assert_eq!(choose::<sha2::Backend>(avx2, u), sha2::Backend::ShaNi);
    }
    assert_eq!(choose::<blake2::Backend>(avx512, Uarch::Zen5), blake2::Backend::Soft);
    assert_eq!(choose::<blake2::Backend>(avx2, Uarch::Zen5), blake2::Backend::Soft);
    assert_eq!(choose::<sha2::Backend>(avx512, Uarch::Zen5), sha2::Backend::ShaNiZen5);
    assert_eq!(choose::<sha2::Backend>(avx2, Uarch::Zen5), sha2::Backend::ShaNiZen5);
    let avx2_no_sha = sha2::Backend::Avx2.required();
    assert_eq!(choose::<sha2::Backend>(avx2_no_sha, Uarch::Zen5), sha2::Backend::Avx2Zen5);
    for u in [Uarch::Other, Uarch::Zen3, Uarch::Zen4] {
        assert_eq!(choose::<sha2::Backend>(avx2_no_sha, u), sha2::Backend::Avx2);
    }
    // ChaCha: the last block of a call in the row layout everywhere but on Zen 5, on the integer units there; with
    // AVX-512 on Zen 4, calls of 65 to 256 bytes in ymm rows;
    // without AVX-512, ChaCha20-Poly1305's two halves apart on Zen 3 and stitched everywhere else (on Zen 4 with
    // the open of whole passes in place).
    use pqkit::chacha::Backend as ChaCha;
    let (c512, c2) = (ChaCha::Avx512.required(), ChaCha::Avx2.required());
    for u in [Uarch::Other, Uarch::Zen3] {
        assert_eq!(choose::<ChaCha>(c512 | c2, u), ChaCha::Avx512);
    }
    assert_eq!(choose::<ChaCha>(c512 | c2, Uarch::Zen4), ChaCha::Avx512Zen4);
    assert_eq!(choose::<ChaCha>(c2, Uarch::Other), ChaCha::Avx2);
    assert_eq!(choose::<ChaCha>(c2, Uarch::Zen4), ChaCha::Avx2Zen4);
    assert_eq!(choose::<ChaCha>(c2, Uarch::Zen3), ChaCha::Avx2Zen3);
    assert_eq!(choose::<ChaCha>(c512 | c2, Uarch::Zen5), ChaCha::Avx512Zen5);
    assert_eq!(choose::<ChaCha>(c2, Uarch::Zen5), ChaCha::Avx2Zen5);
    // RSA: without IFMA, the 16-limb reduction as rows everywhere but on Zen 4 and Zen 5; with it, the IFMA exponentiation everywhere
    // (256-bit vectors on Zen 4).
    use pqkit::rsa::Backend as Rsa;
    let (r2, r512) = (Rsa::Bmi2Adx.required(), Rsa::Ifma512.required());
    for u in [Uarch::Other, Uarch::Zen3] {
        assert_eq!(choose::<Rsa>(r2, u), Rsa::Bmi2AdxRows);
    }
    for u in [Uarch::Zen4, Uarch::Zen5] {
        assert_eq!(choose::<Rsa>(r2, u), Rsa::Bmi2Adx);
    }
    for u in [Uarch::Other, Uarch::Zen3, Uarch::Zen5] {
        assert_eq!(choose::<Rsa>(r512, u), Rsa::Ifma512);
    }
    assert_eq!(choose::<Rsa>(r512, Uarch::Zen4), Rsa::Ifma);
}

/// On this machine under one cap (called from `every_backend_of_every_family_obeys_the_rule_under_every_cap`,
/// which owns the process-wide cap): on a Zen 5,
/// what `detect()` gives, and that an avoided backend can still be asked for by name.
fn zen5_preferences(cap: Cap, f: Features) {
    use pqkit::hash::{blake2, sha2};
    if cpu::uarch() != Uarch::Zen5 {
        return;
    }
    assert_eq!(blake2::Backend::detect().get(), blake2::Backend::Soft, "{cap}");
    if f.has(sha2::Backend::ShaNi.required()) {
        assert_eq!(sha2::Backend::detect().get(), sha2::Backend::ShaNiZen5, "{cap}");
    } else if f.has(sha2::Backend::Avx2.required()) {
        assert_eq!(sha2::Backend::detect().get(), sha2::Backend::Avx2Zen5, "{cap}");
    }
    use pqkit::chacha::Backend as ChaCha;
    if f.has(ChaCha::Avx512.required()) {
        assert_eq!(ChaCha::detect().get(), ChaCha::Avx512Zen5, "{cap}");
    } else if f.has(ChaCha::Avx2.required()) {
        assert_eq!(ChaCha::detect().get(), ChaCha::Avx2Zen5, "{cap}");
    }
    assert_eq!(ChaCha::Avx2.checked().is_ok(), f.has(ChaCha::Avx2.required()));
    assert_eq!(blake2::Backend::Avx2.checked().is_ok(), f.has(blake2::Backend::Avx2.required()));
    assert_eq!(sha2::Backend::ShaNiAvx512.checked().is_ok(), f.has(sha2::Backend::ShaNiAvx512.required()));
}

/// On this machine under one cap (as `zen5_preferences`): on a Zen 3 without IFMA, RSA takes the 16-limb rows and,
/// without AVX-512, ChaCha the backend without the stitched AEAD loop; the backends passed over can still be asked
/// for by name.
fn zen3_preferences(cap: Cap, f: Features) {
    use pqkit::rsa::Backend as Rsa;
    if cpu::uarch() != Uarch::Zen3 {
        return;
    }
    let want = if f.has(Rsa::Ifma512.required()) {
        Rsa::Ifma512
    } else if f.has(Rsa::Bmi2AdxRows.required()) {
        Rsa::Bmi2AdxRows
    } else {
        Rsa::Soft
    };
    assert_eq!(Rsa::detect().get(), want, "{cap}");
    assert_eq!(Rsa::Bmi2Adx.checked().is_ok(), f.has(Rsa::Bmi2Adx.required()));
    use pqkit::chacha::Backend as ChaCha;
    let want = if f.has(ChaCha::Avx512.required()) {
        ChaCha::Avx512
    } else if f.has(ChaCha::Avx2Zen3.required()) {
        ChaCha::Avx2Zen3
    } else {
        ChaCha::Soft
    };
    assert_eq!(ChaCha::detect().get(), want, "{cap}");
    assert_eq!(ChaCha::Avx2.checked().is_ok(), f.has(ChaCha::Avx2.required()));
}
