//! Key derivation: HKDF (RFC 5869) extract-and-expand with SHA-256 and SHA-512, and Argon2id (RFC 9106).
//!
//! Measured as operations per second on a fixed-size input (`data` is the IKM or the password).
//!
//! Set-up, the same for every side: an HKDF operation starts from the raw salt, IKM and info, so keying HMAC with
//! the salt, extraction and expansion are all inside timing (ring and aws-lc-rs build their `Salt` per operation,
//! RustCrypto and pqkit call their one-shot constructors). Only OpenSSL's fetched `EVP_KDF` and its context are
//! prepared outside timing, with the constant parameters (digest, salt, info) set once; each derivation passes its
//! IKM as a parameter, which OpenSSL copies (one small allocation per operation, inside timing).
//! Argon2id allocates and fills its working memory inside every operation, on every side.

use super::ossl_ffi::{Kdf, Param};
use super::{e, ossl, v};
use crate::registry::{Algorithm, Candidate, Op};

/// The HKDF salt (32 bytes).
pub const SALT: [u8; 32] = *b"pqkit-bench hkdf salt, 32 bytes!";
/// The HKDF info string.
pub const INFO: &[u8] = b"pqkit-bench info";
/// The IKM / password length, in bytes (the `size_bytes` of these records).
pub const INPUT_LEN: usize = 32;

/// Argon2id memory in KiB (4 MiB).
pub const ARGON2_M_KIB: u32 = 4096;
/// Argon2id passes.
pub const ARGON2_T: u32 = 3;
/// Argon2id lanes (one thread on every side).
pub const ARGON2_P: u32 = 1;
/// Argon2id salt (16 bytes).
pub const ARGON2_SALT: [u8; 16] = *b"pqkit-bench salt";
/// Argon2id tag length.
pub const ARGON2_TAG_LEN: usize = 32;

fn put(out: &mut Vec<u8>, d: &[u8]) {
    out.clear();
    out.extend_from_slice(d);
}

/// An output length for ring's and aws-lc-rs's `hkdf::KeyType`.
#[derive(Clone, Copy)]
struct Len(usize);
impl ring::hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}
impl aws_lc_rs::hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// One HKDF algorithm: `HKDF-<hash>` / `derive-<okm_len>`.
fn hkdf<const N: usize>(
    name: &str,
    ossl_md: &'static std::ffi::CStr,
    aws: aws_lc_rs::hkdf::Algorithm,
    rng: ring::hkdf::Algorithm,
    rc: fn(&[u8], &mut [u8]) -> Result<(), String>,
    #[cfg_attr(not(feature = "pqkit-algs"), allow(unused_variables))] pq: fn(&[u8], &mut [u8]) -> Result<(), String>,
) -> Algorithm {
    #[allow(unused_mut)]
    let mut a = Algorithm::fixed(name, &format!("derive-{N}"), INPUT_LEN)
        .with(Candidate::new("openssl", ossl(), move |_| {
            let mut k = Kdf::new(
                c"HKDF",
                &[Param::Utf8(c"digest", ossl_md), Param::Octets(c"salt", &SALT), Param::Octets(c"info", INFO)],
            )?;
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let mut okm = [0u8; N];
                k.derive(c"key", data, &mut okm)?;
                put(out, &okm);
                Ok(())
            }) as Box<dyn Op>)
        }))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), move |_| {
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let prk = aws_lc_rs::hkdf::Salt::new(aws, &SALT).extract(data);
                let mut okm = [0u8; N];
                prk.expand(&[INFO], Len(N)).map_err(e)?.fill(&mut okm).map_err(e)?;
                put(out, &okm);
                Ok(())
            }) as Box<dyn Op>)
        }))
        .with(Candidate::new("ring", v("ring"), move |_| {
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let prk = ring::hkdf::Salt::new(rng, &SALT).extract(data);
                let mut okm = [0u8; N];
                prk.expand(&[INFO], Len(N)).map_err(e)?.fill(&mut okm).map_err(e)?;
                put(out, &okm);
                Ok(())
            }) as Box<dyn Op>)
        }))
        .with(Candidate::new("rustcrypto", v("hkdf"), move |_| {
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let mut okm = [0u8; N];
                rc(data, &mut okm)?;
                put(out, &okm);
                Ok(())
            }) as Box<dyn Op>)
        }));
    #[cfg(feature = "pqkit-algs")]
    a.candidates.insert(
        0,
        Candidate::new("pqkit", super::pqkit_version(), move |_| {
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let mut okm = [0u8; N];
                pq(data, &mut okm)?;
                put(out, &okm);
                Ok(())
            }) as Box<dyn Op>)
        }),
    );
    a
}

fn rc_hkdf<D>(ikm: &[u8], okm: &mut [u8]) -> Result<(), String>
where
    D: hmac::digest::block_api::EagerHash + Clone,
    hmac::Hmac<D>: hmac::KeyInit + hmac::Mac + Clone,
{
    hkdf::Hkdf::<D>::new(Some(&SALT), ikm).expand(INFO, okm).map_err(|_| "rustcrypto hkdf: bad length".to_string())
}

#[cfg(feature = "pqkit-algs")]
fn pq_hkdf<H: pqkit::hash::Hasher>(ikm: &[u8], okm: &mut [u8]) -> Result<(), String> {
    pqkit::kdf::Hkdf::<H>::derive(&SALT, ikm, INFO, okm).map_err(e)
}

#[cfg(not(feature = "pqkit-algs"))]
fn pq_hkdf<H>(_: &[u8], _: &mut [u8]) -> Result<(), String> {
    Err("pqkit adapters are disabled".into())
}

fn argon2id() -> Algorithm {
    // No commas: `--only` splits its argument on them.
    let op = format!("hash-m{}MiB-t{ARGON2_T}-p{ARGON2_P}", ARGON2_M_KIB / 1024);
    #[allow(unused_mut)]
    let mut a = Algorithm::fixed("Argon2id", &op, INPUT_LEN)
        .with(Candidate::new("openssl", ossl(), |_| {
            let mut k = Kdf::new(
                c"ARGON2ID",
                &[
                    Param::Octets(c"salt", &ARGON2_SALT),
                    Param::Uint(c"iter", ARGON2_T),
                    Param::Uint(c"lanes", ARGON2_P),
                    Param::Uint(c"threads", 1),
                    Param::Uint(c"memcost", ARGON2_M_KIB),
                    Param::Uint(c"size", ARGON2_TAG_LEN as u32),
                ],
            )?;
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let mut tag = [0u8; ARGON2_TAG_LEN];
                k.derive(c"pass", data, &mut tag)?;
                put(out, &tag);
                Ok(())
            }) as Box<dyn Op>)
        }))
        .with(Candidate::new("rustcrypto", v("argon2"), |_| {
            let params = argon2::Params::new(ARGON2_M_KIB, ARGON2_T, ARGON2_P, Some(ARGON2_TAG_LEN)).map_err(e)?;
            let a = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let mut tag = [0u8; ARGON2_TAG_LEN];
                a.hash_password_into(data, &ARGON2_SALT, &mut tag).map_err(e)?;
                put(out, &tag);
                Ok(())
            }) as Box<dyn Op>)
        }));
    #[cfg(feature = "pqkit-algs")]
    a.candidates.insert(
        0,
        Candidate::new("pqkit", super::pqkit_version(), |_| {
            use pqkit::kdf::argon2::{Argon2id, Params};
            let a = Argon2id::new(Params::new(ARGON2_M_KIB, ARGON2_T, ARGON2_P).map_err(e)?);
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                let mut tag = [0u8; ARGON2_TAG_LEN];
                a.hash(data, &ARGON2_SALT, &mut tag).map_err(e)?;
                put(out, &tag);
                Ok(())
            }) as Box<dyn Op>)
        }),
    );
    a
}

/// The family's algorithms.
pub fn algorithms() -> Vec<Algorithm> {
    #[cfg(feature = "pqkit-algs")]
    use pqkit::hash::sha2::{Sha256 as P256, Sha512 as P512};
    #[cfg(not(feature = "pqkit-algs"))]
    type P256 = ();
    #[cfg(not(feature = "pqkit-algs"))]
    type P512 = ();
    vec![
        hkdf::<32>(
            "HKDF-SHA256",
            c"SHA256",
            aws_lc_rs::hkdf::HKDF_SHA256,
            ring::hkdf::HKDF_SHA256,
            rc_hkdf::<sha2::Sha256>,
            pq_hkdf::<P256>,
        ),
        hkdf::<64>(
            "HKDF-SHA512",
            c"SHA512",
            aws_lc_rs::hkdf::HKDF_SHA512,
            ring::hkdf::HKDF_SHA512,
            rc_hkdf::<sha2::Sha512>,
            pq_hkdf::<P512>,
        ),
        argon2id(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openssl_contexts_give_the_same_result_when_reused() {
        // The timed loop derives many times from one context; the agreement check sees only the first result.
        for alg in algorithms() {
            let c = alg.candidates.iter().find(|c| c.implementation == "openssl").unwrap();
            let mut op = (c.setup)(INPUT_LEN).unwrap();
            let mut data = [7u8; INPUT_LEN];
            let (mut a, mut b) = (Vec::new(), Vec::new());
            op.run(&mut data, &mut a).unwrap();
            op.run(&mut data, &mut b).unwrap();
            assert_eq!(a, b, "{}", alg.id());
            assert!(!a.is_empty());
        }
    }
}
