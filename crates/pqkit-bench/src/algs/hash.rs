//! Hash functions: SHA-256, SHA-512, SHA3-256, BLAKE2b-512, BLAKE2s-256, Skein-512-512. The observable output
//! is the digest. Contexts that a library lets you reuse (OpenSSL's `Hasher`) are created outside timing.

use super::{e, ossl, v};
use crate::registry::{Algorithm, Candidate, Op};

fn put(out: &mut Vec<u8>, d: &[u8]) {
    out.clear();
    out.extend_from_slice(d);
}

/// OpenSSL digest by EVP name; the context is created once and reset by each `finish`.
pub fn ossl_digest(md: openssl::hash::MessageDigest) -> Result<Box<dyn Op>, String> {
    let mut h = openssl::hash::Hasher::new(md).map_err(e)?;
    Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        h.update(data).map_err(e)?;
        let d = h.finish().map_err(e)?;
        put(out, &d);
        Ok(())
    }))
}

fn ossl_named(name: &'static str) -> impl Fn(usize) -> Result<Box<dyn Op>, String> + Send + Sync {
    move |_| ossl_digest(openssl::hash::MessageDigest::from_name(name).ok_or(format!("OpenSSL lacks {name}"))?)
}

/// A RustCrypto `Digest` one-shot.
pub fn rc_digest<D: sha2::Digest>() -> Box<dyn Op> {
    Box::new(|data: &mut [u8], out: &mut Vec<u8>| {
        put(out, &D::digest(&*data));
        Ok(())
    })
}

fn ring_digest(alg: &'static ring::digest::Algorithm) -> Box<dyn Op> {
    Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        put(out, ring::digest::digest(alg, data).as_ref());
        Ok(())
    })
}

fn awslc_digest(alg: &'static aws_lc_rs::digest::Algorithm) -> Box<dyn Op> {
    Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        put(out, aws_lc_rs::digest::digest(alg, data).as_ref());
        Ok(())
    })
}

/// A pqkit fixed-output hash one-shot through the `Hasher` trait.
#[cfg(feature = "pqkit-algs")]
pub fn pqkit_digest<H: pqkit::hash::Hasher>() -> Box<dyn Op> {
    Box::new(|data: &mut [u8], out: &mut Vec<u8>| {
        put(out, H::digest(data).as_ref());
        Ok(())
    })
}

#[cfg(feature = "pqkit-algs")]
fn with_pqkit(mut a: Algorithm, op: fn() -> Box<dyn Op>) -> Algorithm {
    a.candidates.insert(0, Candidate::new("pqkit", super::pqkit_version(), move |_| Ok(op())));
    a
}

/// The HMAC key.
pub const HMAC_KEY: [u8; 32] = super::KEY32;

/// HMAC-SHA256 with the key schedule (inner and outer padded states) outside timing for every side.
fn hmac_sha256() -> Algorithm {
    #[allow(unused_mut)]
    let mut a = Algorithm::bulk("HMAC-SHA256", "mac")
        .with(Candidate::new("openssl", ossl(), |_| {
            let key = openssl::pkey::PKey::hmac(&HMAC_KEY).map_err(e)?;
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                // OpenSSL has no reusable keyed HMAC context in the Rust API; a Signer is built per message.
                let mut s = openssl::sign::Signer::new(openssl::hash::MessageDigest::sha256(), &key).map_err(e)?;
                s.update(data).map_err(e)?;
                let mut tag = [0u8; 32];
                s.sign(&mut tag).map_err(e)?;
                put(out, &tag);
                Ok(())
            }) as Box<dyn Op>)
        }))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| {
            let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &HMAC_KEY);
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                put(out, aws_lc_rs::hmac::sign(&key, data).as_ref());
                Ok(())
            }) as Box<dyn Op>)
        }))
        .with(Candidate::new("ring", v("ring"), |_| {
            let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &HMAC_KEY);
            Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                put(out, ring::hmac::sign(&key, data).as_ref());
                Ok(())
            }) as Box<dyn Op>)
        }));
    #[cfg(feature = "pqkit-algs")]
    {
        a.candidates.insert(
            0,
            Candidate::new("pqkit", super::pqkit_version(), |_| {
                let key = pqkit::mac::Hmac::<pqkit::hash::sha2::Sha256>::new(&HMAC_KEY);
                Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                    put(out, key.mac(data).as_ref());
                    Ok(())
                }) as Box<dyn Op>)
            }),
        );
    }
    a
}

/// The family's algorithms.
pub fn algorithms() -> Vec<Algorithm> {
    let sha256 = Algorithm::bulk("SHA-256", "digest")
        .scaling()
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA256")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&aws_lc_rs::digest::SHA256))))
        .with(Candidate::new("ring", v("ring"), |_| Ok(ring_digest(&ring::digest::SHA256))))
        .with(Candidate::new("rustcrypto", v("sha2"), |_| Ok(rc_digest::<sha2::Sha256>())));
    let sha512 = Algorithm::bulk("SHA-512", "digest")
        .scaling()
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA512")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&aws_lc_rs::digest::SHA512))))
        .with(Candidate::new("ring", v("ring"), |_| Ok(ring_digest(&ring::digest::SHA512))))
        .with(Candidate::new("rustcrypto", v("sha2"), |_| Ok(rc_digest::<sha2::Sha512>())));
    let sha3 = Algorithm::bulk("SHA3-256", "digest")
        .scaling()
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA3-256")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&aws_lc_rs::digest::SHA3_256))))
        .with(Candidate::new("rustcrypto", v("sha3"), |_| Ok(rc_digest::<sha3::Sha3_256>())));
    let b2b = Algorithm::bulk("BLAKE2b-512", "digest")
        .scaling()
        .with(Candidate::new("openssl", ossl(), ossl_named("BLAKE2B-512")))
        .with(Candidate::new("rustcrypto", v("blake2"), |_| Ok(rc_digest::<blake2::Blake2b512>())));
    let b2s = Algorithm::bulk("BLAKE2s-256", "digest")
        .with(Candidate::new("openssl", ossl(), ossl_named("BLAKE2S-256")))
        .with(Candidate::new("rustcrypto", v("blake2"), |_| Ok(rc_digest::<blake2::Blake2s256>())));
    let skein = Algorithm::bulk("Skein-512-512", "digest")
        .with(Candidate::new("rustcrypto", v("skein"), |_| Ok(rc_digest::<skein::Skein512_512>())));
    #[cfg(feature = "pqkit-algs")]
    let (sha256, sha512, sha3, b2b, b2s, skein) = {
        use pqkit::hash::{blake2, sha2 as p2, sha3 as p3};
        fn skein_op() -> Box<dyn Op> {
            Box::new(|data: &mut [u8], out: &mut Vec<u8>| {
                put(out, &pqkit::hash::skein::Skein512_512::digest(data));
                Ok(())
            })
        }
        (
            with_pqkit(sha256, pqkit_digest::<p2::Sha256>),
            with_pqkit(sha512, pqkit_digest::<p2::Sha512>),
            with_pqkit(sha3, pqkit_digest::<p3::Sha3_256>),
            with_pqkit(b2b, pqkit_digest::<blake2::Blake2b512>),
            with_pqkit(b2s, pqkit_digest::<blake2::Blake2s256>),
            with_pqkit(skein, skein_op),
        )
    };
    vec![sha256, sha512, sha3, b2b, b2s, skein, shake128(), hmac_sha256()]
}

/// SHAKE128 with a 32-byte output (the XOF as a fixed-length hash).
fn shake128() -> Algorithm {
    #[allow(unused_mut)]
    let mut a = Algorithm::bulk("SHAKE128", "xof-32").with(Candidate::new("openssl", ossl(), |_| {
        let mut h = openssl::hash::Hasher::new(openssl::hash::MessageDigest::shake_128()).map_err(e)?;
        Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
            h.update(data).map_err(e)?;
            let mut d = [0u8; 32];
            h.finish_xof(&mut d).map_err(e)?;
            put(out, &d);
            Ok(())
        }) as Box<dyn Op>)
    }));
    #[cfg(feature = "pqkit-algs")]
    a.candidates.insert(
        0,
        Candidate::new("pqkit", super::pqkit_version(), |_| {
            Ok(Box::new(|data: &mut [u8], out: &mut Vec<u8>| {
                let mut d = [0u8; 32];
                pqkit::hash::sha3::Shake128::digest_into(data, &mut d);
                put(out, &d);
                Ok(())
            }) as Box<dyn Op>)
        }),
    );
    a
}
