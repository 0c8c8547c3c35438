//! Report (d): hybrid KEMs and HPKE.
//!
//! - `X-Wing` keygen (from the 32-byte seed) / encaps (with a fixed 64-byte `eseed`) / decaps: pqkit against
//!   RustCrypto `x-wing`; both deterministic, so outputs must be byte-identical.
//! - `X25519MLKEM768` keygen / encaps / decaps in the TLS layout: pqkit against the same operations composed from
//!   libcrux ML-KEM-768 and x25519-dalek (no peer crate exposes the TLS group outside a TLS stack); byte-identical.
//! - `HPKE <KEM>` seal of 1 KiB (single shot: a fresh encapsulation, the key schedule and one AEAD seal, suite
//!   KEM / HKDF-SHA256 / ChaCha20-Poly1305): pqkit against the `hpke` crate. Randomized, so the check is a cross
//!   round trip (each side opens the other's output).

use super::e;
use crate::registry::{Algorithm, Candidate, Check, Op};

const XWING_SEED: [u8; 32] = [0x11; 32];
const XWING_ESEED: [u8; 64] = [0x22; 64];
const TLS_SEED: [u8; 96] = [0x33; 96];
const TLS_RAND: [u8; 64] = [0x44; 64];
/// The HPKE message length.
const MSG: usize = 1024;

fn put(out: &mut Vec<u8>, parts: &[&[u8]]) {
    out.clear();
    for p in parts {
        out.extend_from_slice(p);
    }
}

#[cfg(feature = "pqkit-algs")]
fn pq_xwing(op: &'static str) -> Result<Box<dyn Op>, String> {
    use pqkit::hybrid::xwing::{Ciphertext, DecapsulationKey};
    let dk = DecapsulationKey::from_seed(&XWING_SEED);
    let ek = dk.encapsulation_key();
    let (ct, _) = ek.encapsulate_deterministic(&XWING_ESEED);
    Ok(match op {
        "keygen" => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let dk = DecapsulationKey::from_seed(&XWING_SEED);
            put(out, &[&dk.encapsulation_key().to_bytes()]);
            Ok(())
        }),
        "encaps" => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let (ct, ss) = ek.encapsulate_deterministic(&XWING_ESEED);
            put(out, &[ct.as_bytes(), ss.as_bytes()]);
            Ok(())
        }),
        _ => {
            let ct = Ciphertext::from_bytes(ct.as_bytes()).map_err(e)?;
            Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                put(out, &[dk.decapsulate(&ct).as_bytes()]);
                Ok(())
            })
        }
    })
}

fn rc_xwing(op: &'static str) -> Result<Box<dyn Op>, String> {
    use x_wing::{Decapsulate, Decapsulator, KeyExport};
    let dk = x_wing::DecapsulationKey::from(XWING_SEED);
    let ek = dk.encapsulation_key().clone();
    let (ct, _) = ek.encapsulate_deterministic(&XWING_ESEED.into());
    Ok(match op {
        "keygen" => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let dk = x_wing::DecapsulationKey::from(XWING_SEED);
            put(out, &[&dk.encapsulation_key().to_bytes()]);
            Ok(())
        }),
        "encaps" => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let (ct, ss) = ek.encapsulate_deterministic(&XWING_ESEED.into());
            put(out, &[&ct, &ss]);
            Ok(())
        }),
        _ => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            put(out, &[&dk.decapsulate(&ct)]);
            Ok(())
        }),
    })
}

#[cfg(feature = "pqkit-algs")]
fn pq_tls(op: &'static str) -> Result<Box<dyn Op>, String> {
    use pqkit::hybrid::x25519mlkem768::{Ciphertext, DecapsulationKey, EncapsulationKey};
    let dk = DecapsulationKey::from_seed(&TLS_SEED).map_err(e)?;
    let share = dk.encapsulation_key().to_bytes();
    Ok(match op {
        "keygen" => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let dk = DecapsulationKey::from_seed(&TLS_SEED).map_err(e)?;
            put(out, &[&dk.encapsulation_key().to_bytes()]);
            Ok(())
        }),
        // The server's work: parse the client's share (modulus check), encapsulate, X25519.
        "encaps" => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let ek = EncapsulationKey::from_bytes(&share).map_err(e)?;
            let (ct, ss) = ek.encapsulate_deterministic(&TLS_RAND).map_err(e)?;
            put(out, &[ct.as_bytes(), ss.as_bytes()]);
            Ok(())
        }),
        _ => {
            let ek = EncapsulationKey::from_bytes(&share).map_err(e)?;
            let (ct, _) = ek.encapsulate_deterministic(&TLS_RAND).map_err(e)?;
            let ct = Ciphertext::from_bytes(ct.as_bytes()).map_err(e)?;
            Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                put(out, &[dk.decapsulate(&ct).map_err(e)?.as_bytes()]);
                Ok(())
            })
        }
    })
}

fn lc_tls(op: &'static str) -> Result<Box<dyn Op>, String> {
    use libcrux_ml_kem::mlkem768;
    fn arr32(b: &[u8]) -> [u8; 32] {
        b.try_into().expect("32 bytes")
    }
    let keygen = || {
        let kp = mlkem768::generate_key_pair(TLS_SEED[..64].try_into().expect("64"));
        let sk = x25519_dalek::StaticSecret::from(arr32(&TLS_SEED[64..]));
        let pk = x25519_dalek::PublicKey::from(&sk);
        (kp, sk, pk)
    };
    let (kp, sk, pk) = keygen();
    let mut share = kp.pk().to_vec();
    share.extend_from_slice(pk.as_bytes());
    let encaps = move |share: &[u8], out: &mut Vec<u8>| -> Result<(), String> {
        let ek = mlkem768::MlKem768PublicKey::from(<[u8; 1184]>::try_from(&share[..1184]).map_err(e)?);
        if !mlkem768::validate_public_key(&ek) {
            return Err("bad key".into());
        }
        let (ct, ss_m) = mlkem768::encapsulate(&ek, arr32(&TLS_RAND[..32]));
        let esk = x25519_dalek::StaticSecret::from(arr32(&TLS_RAND[32..]));
        let ss_x = esk.diffie_hellman(&x25519_dalek::PublicKey::from(arr32(&share[1184..])));
        put(out, &[ct.as_ref(), x25519_dalek::PublicKey::from(&esk).as_bytes(), &ss_m, ss_x.as_bytes()]);
        Ok(())
    };
    Ok(match op {
        "keygen" => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let (kp, _, pk) = keygen();
            put(out, &[kp.pk(), pk.as_bytes()]);
            Ok(())
        }),
        "encaps" => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| encaps(&share, out)),
        _ => {
            let mut o = Vec::new();
            encaps(&share, &mut o)?;
            let ct = mlkem768::MlKem768Ciphertext::from(<[u8; 1088]>::try_from(&o[..1088]).map_err(e)?);
            let peer = x25519_dalek::PublicKey::from(arr32(&o[1088..1120]));
            Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                let ss_m = mlkem768::decapsulate(kp.private_key(), &ct);
                let ss_x = sk.diffie_hellman(&peer);
                put(out, &[&ss_m, ss_x.as_bytes()]);
                Ok(())
            })
        }
    })
}

/// The HPKE suites measured: (row name, pqkit KEM).
#[cfg(feature = "pqkit-algs")]
fn pq_kem(name: &str) -> pqkit::hpke::Kem {
    use pqkit::hpke::Kem;
    match name {
        "DHKEM(X25519)" => Kem::DhKemX25519HkdfSha256,
        "ML-KEM-768" => Kem::MlKem768,
        "ML-KEM-1024" => Kem::MlKem1024,
        _ => Kem::XWing,
    }
}

const IKM: [u8; 64] = [0x55; 64];

#[cfg(feature = "pqkit-algs")]
fn pq_hpke(name: &str) -> Result<(Box<dyn Op>, pqkit::hpke::Suite), String> {
    use pqkit::hpke::{Aead, Kdf, SenderMode, Suite};
    let kem = pq_kem(name);
    let suite = Suite::new(kem, Kdf::HkdfSha256, Aead::ChaCha20Poly1305);
    let (_, pk) = kem.derive_key_pair(&IKM).map_err(e)?;
    let msg = crate::harness::input_bytes(MSG);
    Ok((
        Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
            let (enc, ct) = suite.seal(&pk, b"bench", b"", &msg, SenderMode::Base).map_err(e)?;
            put(out, &[&enc, &ct]);
            Ok(())
        }),
        suite,
    ))
}

macro_rules! rc_hpke_suite {
    ($kem:ty) => {{
        use hpke::{Deserializable, Kem as _, OpModeR, OpModeS, Serializable};
        type A = hpke::aead::ChaCha20Poly1305;
        type K = hpke::kdf::HkdfSha256;
        let seal = |pk: &[u8], msg: &[u8]| -> Result<(Vec<u8>, Vec<u8>), String> {
            let pk = <$kem as hpke::Kem>::PublicKey::from_bytes(pk).map_err(|x| format!("{x:?}"))?;
            let (enc, ct) = hpke::single_shot_seal::<A, K, $kem>(&OpModeS::Base, &pk, b"bench", msg, b"")
                .map_err(|x| format!("{x:?}"))?;
            Ok((enc.to_bytes().to_vec(), ct))
        };
        let open = |sk: &[u8], enc: &[u8], ct: &[u8]| -> Result<Vec<u8>, String> {
            let sk = <$kem as hpke::Kem>::PrivateKey::from_bytes(sk).map_err(|x| format!("{x:?}"))?;
            let enc = <$kem as hpke::Kem>::EncappedKey::from_bytes(enc).map_err(|x| format!("{x:?}"))?;
            hpke::single_shot_open::<A, K, $kem>(&OpModeR::Base, &sk, &enc, b"bench", ct, b"")
                .map_err(|x| format!("{x:?}"))
        };
        let derive = |ikm: &[u8]| -> (Vec<u8>, Vec<u8>) {
            let (sk, pk) = <$kem>::derive_keypair(ikm);
            (sk.to_bytes().to_vec(), pk.to_bytes().to_vec())
        };
        (
            Box::new(seal) as Box<dyn Fn(&[u8], &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> + Send + Sync>,
            Box::new(open) as Box<dyn Fn(&[u8], &[u8], &[u8]) -> Result<Vec<u8>, String> + Send + Sync>,
            Box::new(derive) as Box<dyn Fn(&[u8]) -> (Vec<u8>, Vec<u8>) + Send + Sync>,
        )
    }};
}

type SealFn = Box<dyn Fn(&[u8], &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> + Send + Sync>;
type OpenFn = Box<dyn Fn(&[u8], &[u8], &[u8]) -> Result<Vec<u8>, String> + Send + Sync>;
type DeriveFn = Box<dyn Fn(&[u8]) -> (Vec<u8>, Vec<u8>) + Send + Sync>;

fn rc_hpke(name: &str) -> (SealFn, OpenFn, DeriveFn) {
    match name {
        "DHKEM(X25519)" => rc_hpke_suite!(hpke::kem::X25519HkdfSha256),
        "ML-KEM-768" => rc_hpke_suite!(hpke::kem::MlKem768),
        "ML-KEM-1024" => rc_hpke_suite!(hpke::kem::MlKem1024),
        _ => rc_hpke_suite!(hpke::kem::XWing),
    }
}

/// pqkit and the `hpke` crate open each other's 1 KiB messages.
#[cfg(feature = "pqkit-algs")]
fn hpke_check(name: &'static str) -> Result<(), String> {
    use pqkit::hpke::{PrivateKey, PublicKey, RecipientMode, SenderMode};
    let (seal, open, derive) = rc_hpke(name);
    let kem = pq_kem(name);
    let (sk, pk) = kem.derive_key_pair(&IKM).map_err(e)?;
    let (rsk, rpk) = derive(&IKM);
    // Public keys only: the hpke crate serializes X25519 private keys clamped, pqkit as derived (RFC 9180's
    // vectors); both are the same key.
    if pk.as_bytes() != &rpk[..] {
        return Err(format!("HPKE {name}: DeriveKeyPair differs from the hpke crate's"));
    }
    let (_, _) = (PrivateKey::from_bytes(kem, &rsk).map_err(e)?, PublicKey::from_bytes(kem, &rpk).map_err(e)?);
    let suite = pqkit::hpke::Suite::new(kem, pqkit::hpke::Kdf::HkdfSha256, pqkit::hpke::Aead::ChaCha20Poly1305);
    let msg = crate::harness::input_bytes(MSG);
    let (enc, ct) = suite.seal(&pk, b"bench", b"", &msg, SenderMode::Base).map_err(e)?;
    if open(&rsk, &enc, &ct)? != msg {
        return Err(format!("HPKE {name}: the hpke crate opened pqkit's message to something else"));
    }
    let (enc, ct) = seal(&rpk, &msg)?;
    if suite.open(&enc, &sk, b"bench", b"", &ct, RecipientMode::Base).map_err(e)? != msg {
        return Err(format!("HPKE {name}: pqkit opened the hpke crate's message to something else"));
    }
    Ok(())
}

/// Every hybrid-KEM and HPKE row.
pub fn algorithms() -> Vec<Algorithm> {
    let mut v = Vec::new();
    for op in ["keygen", "encaps", "decaps"] {
        let mut x = Algorithm::public_key("X-Wing", op, 0, Check::Equal);
        #[cfg(feature = "pqkit-algs")]
        {
            x = x.with(Candidate::new("pqkit", super::pqkit_version(), move |_| pq_xwing(op)));
        }
        x = x.with(Candidate::new("rustcrypto", super::v("x-wing"), move |_| rc_xwing(op)));
        v.push(x);
        let mut t = Algorithm::public_key("X25519MLKEM768", op, 0, Check::Equal);
        #[cfg(feature = "pqkit-algs")]
        {
            t = t.with(Candidate::new("pqkit", super::pqkit_version(), move |_| pq_tls(op)));
        }
        t = t.with(Candidate::new(
            "libcrux",
            format!("{} + {}", super::v("libcrux-ml-kem"), super::v("x25519-dalek")),
            move |_| lc_tls(op),
        ));
        v.push(t);
    }
    for name in ["DHKEM(X25519)", "ML-KEM-768", "ML-KEM-1024", "X-Wing"] {
        #[cfg(feature = "pqkit-algs")]
        let check = Check::Custom(Box::new(move || hpke_check(name)));
        #[cfg(not(feature = "pqkit-algs"))]
        let check = Check::Custom(Box::new(|| Ok(())));
        let mut a = Algorithm::public_key(&format!("HPKE {name}"), "seal", MSG, check);
        #[cfg(feature = "pqkit-algs")]
        {
            a = a.with(Candidate::new("pqkit", super::pqkit_version(), move |_| pq_hpke(name).map(|x| x.0)));
        }
        a = a.with(Candidate::new("hpke", super::v("hpke"), move |_| {
            let (seal, _, derive) = rc_hpke(name);
            let (_, pk) = derive(&IKM);
            let msg = crate::harness::input_bytes(MSG);
            Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                let (enc, ct) = seal(&pk, &msg)?;
                put(out, &[&enc, &ct]);
                Ok(())
            }) as Box<dyn Op>)
        }));
        v.push(a);
    }
    v
}
