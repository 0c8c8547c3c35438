//! Hash functions and HMAC. The observable output is the digest (or tag).
//!
//! Primary algorithms (SHA-256, SHA-512, SHA3-256, SHAKE128, BLAKE2b-512, BLAKE2s-256, Skein-512-512,
//! HMAC-SHA256) run at every bulk size, 64 B .. 10 MiB; the secondary ones (the other SHA-2 and SHA-3 widths,
//! SHAKE256, HMAC-SHA384/SHA512/SHA3-256) at [`SECONDARY_SIZES`], to keep `--quick` inside its budget.
//!
//! Set-up: every side starts each operation from a fresh hash state. OpenSSL's `EVP_MD` is fetched once and its
//! `EVP_MD_CTX` created once outside timing and re-initialised per operation (`EVP_DigestInit_ex` with the same
//! fetched digest reuses the provider context; a legacy `EVP_MD` would make OpenSSL fetch and allocate again on
//! every re-init). HMAC keys are prepared outside timing on every side (inner and outer padded states): OpenSSL
//! through a keyed `EVP_MAC_CTX` re-initialised with a NULL key, ring/aws-lc-rs through `hmac::Key`, RustCrypto
//! and pqkit by cloning a keyed `Hmac`.

use super::ossl_ffi::{Digest, Mac, Param};
use super::{e, ossl, v};
use crate::registry::{Algorithm, Candidate, Op};
use std::ffi::CStr;

/// Sizes of the secondary hash algorithms.
pub const SECONDARY_SIZES: [usize; 4] = [64, 1024, 16 * 1024, 1 << 20];

fn put(out: &mut Vec<u8>, d: &[u8]) {
    out.clear();
    out.extend_from_slice(d);
}

/// OpenSSL digest by fetched name; the context is created once and re-initialised by each operation.
/// `xof_len`: for SHAKE, the output length (`EVP_DigestFinalXOF`).
pub fn ossl_digest(name: &str, xof_len: Option<usize>) -> Result<Box<dyn Op>, String> {
    let mut md = Digest::fetch(name)?;
    let len = xof_len.unwrap_or(md.size());
    Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        let mut d = [0u8; 64];
        match xof_len {
            Some(_) => md.digest_xof(data, &mut d[..len])?,
            None => md.digest(data, &mut d[..len])?,
        }
        put(out, &d[..len]);
        Ok(())
    }))
}

fn ossl_named(name: &'static str) -> impl Fn(usize) -> Result<Box<dyn Op>, String> + Send + Sync {
    move |_| ossl_digest(name, None)
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

/// OpenSSL HMAC: an `EVP_MAC_CTX` keyed once; each operation re-initialises it with a NULL key (restarting from
/// the prepared padded states), updates and finalises.
pub fn ossl_hmac(digest: &'static CStr) -> Result<Box<dyn Op>, String> {
    let mut m = Mac::new(c"HMAC", &[Param::Utf8(c"digest", digest)])?;
    m.init(Some(&HMAC_KEY))?;
    Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        m.init(None)?;
        m.update(data)?;
        let mut tag = [0u8; 64];
        let n = m.finalize(&mut tag)?;
        put(out, &tag[..n]);
        Ok(())
    }))
}

/// RustCrypto HMAC: keyed once, cloned per operation.
fn rc_hmac<D: hmac::digest::block_api::EagerHash + Clone + Send + 'static>() -> Result<Box<dyn Op>, String>
where
    hmac::Hmac<D>: hmac::KeyInit + hmac::Mac + Clone + Send,
{
    use hmac::{KeyInit, Mac};
    let key = <hmac::Hmac<D> as KeyInit>::new_from_slice(&HMAC_KEY).map_err(e)?;
    Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        let mut m = key.clone();
        m.update(data);
        put(out, &m.finalize().into_bytes());
        Ok(())
    }))
}

/// RustCrypto `SimpleHmac` (for hashes without a block-level core, such as sha3 0.12): keyed once, cloned per
/// operation.
fn rc_simple_hmac<D: sha2::Digest + hmac::digest::common::BlockSizeUser + Clone + Send + 'static>()
-> Result<Box<dyn Op>, String> {
    use hmac::{KeyInit, Mac};
    let key = <hmac::SimpleHmac<D> as KeyInit>::new_from_slice(&HMAC_KEY).map_err(e)?;
    Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        let mut m = key.clone();
        m.update(data);
        put(out, &m.finalize().into_bytes());
        Ok(())
    }))
}

/// pqkit HMAC: keyed once (`Hmac::new` prepares the padded states); `mac` starts from them per message.
#[cfg(feature = "pqkit-algs")]
fn pqkit_hmac<H: pqkit::hash::Hasher + Send + Sync + 'static>() -> Box<dyn Op> {
    let key = pqkit::mac::Hmac::<H>::new(&HMAC_KEY);
    Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
        put(out, key.mac(data).as_ref());
        Ok(())
    })
}

/// HMAC with the key schedule (inner and outer padded states) outside timing for every side.
fn hmac(
    name: &str,
    sizes: &[usize],
    ossl_md: &'static CStr,
    rings: Option<(aws_lc_rs::hmac::Algorithm, ring::hmac::Algorithm)>,
    rc: fn() -> Result<Box<dyn Op>, String>,
) -> Algorithm {
    let mut a =
        Algorithm::bulk(name, "mac").sizes(sizes).with(Candidate::new("openssl", ossl(), move |_| ossl_hmac(ossl_md)));
    if let Some((aws, rng)) = rings {
        a = a
            .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), move |_| {
                let key = aws_lc_rs::hmac::Key::new(aws, &HMAC_KEY);
                Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                    put(out, aws_lc_rs::hmac::sign(&key, data).as_ref());
                    Ok(())
                }) as Box<dyn Op>)
            }))
            .with(Candidate::new("ring", v("ring"), move |_| {
                let key = ring::hmac::Key::new(rng, &HMAC_KEY);
                Ok(Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
                    put(out, ring::hmac::sign(&key, data).as_ref());
                    Ok(())
                }) as Box<dyn Op>)
            }));
    }
    a.with(Candidate::new("rustcrypto", v("hmac"), move |_| rc()))
}

fn hmacs() -> Vec<Algorithm> {
    use aws_lc_rs::hmac as ah;
    use ring::hmac as rh;
    let v = vec![
        hmac(
            "HMAC-SHA256",
            &crate::registry::BULK_SIZES,
            c"SHA256",
            Some((ah::HMAC_SHA256, rh::HMAC_SHA256)),
            rc_hmac::<sha2::Sha256>,
        ),
        hmac(
            "HMAC-SHA384",
            &SECONDARY_SIZES,
            c"SHA384",
            Some((ah::HMAC_SHA384, rh::HMAC_SHA384)),
            rc_hmac::<sha2::Sha384>,
        ),
        hmac(
            "HMAC-SHA512",
            &SECONDARY_SIZES,
            c"SHA512",
            Some((ah::HMAC_SHA512, rh::HMAC_SHA512)),
            rc_hmac::<sha2::Sha512>,
        ),
        hmac("HMAC-SHA3-256", &SECONDARY_SIZES, c"SHA3-256", None, rc_simple_hmac::<sha3::Sha3_256>),
    ];
    #[cfg(feature = "pqkit-algs")]
    let v = {
        use pqkit::hash::{sha2 as p2, sha3 as p3};
        let ops: [fn() -> Box<dyn Op>; 4] =
            [pqkit_hmac::<p2::Sha256>, pqkit_hmac::<p2::Sha384>, pqkit_hmac::<p2::Sha512>, pqkit_hmac::<p3::Sha3_256>];
        v.into_iter().zip(ops).map(|(a, op)| with_pqkit(a, op)).collect()
    };
    v
}

/// The family's algorithms.
pub fn algorithms() -> Vec<Algorithm> {
    use aws_lc_rs::digest as ad;
    use ring::digest as rd;
    let sha256 = Algorithm::bulk("SHA-256", "digest")
        .scaling()
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA256")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&ad::SHA256))))
        .with(Candidate::new("ring", v("ring"), |_| Ok(ring_digest(&rd::SHA256))))
        .with(Candidate::new("rustcrypto", v("sha2"), |_| Ok(rc_digest::<sha2::Sha256>())));
    let sha512 = Algorithm::bulk("SHA-512", "digest")
        .scaling()
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA512")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&ad::SHA512))))
        .with(Candidate::new("ring", v("ring"), |_| Ok(ring_digest(&rd::SHA512))))
        .with(Candidate::new("rustcrypto", v("sha2"), |_| Ok(rc_digest::<sha2::Sha512>())));
    let sha3 = Algorithm::bulk("SHA3-256", "digest")
        .scaling()
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA3-256")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&ad::SHA3_256))))
        .with(Candidate::new("rustcrypto", v("sha3"), |_| Ok(rc_digest::<sha3::Sha3_256>())));
    let b2b = Algorithm::bulk("BLAKE2b-512", "digest")
        .scaling()
        .with(Candidate::new("openssl", ossl(), ossl_named("BLAKE2B-512")))
        .with(Candidate::new("rustcrypto", v("blake2"), |_| Ok(rc_digest::<blake2::Blake2b512>())));
    let b2s = Algorithm::bulk("BLAKE2s-256", "digest")
        .scaling()
        .with(Candidate::new("openssl", ossl(), ossl_named("BLAKE2S-256")))
        .with(Candidate::new("rustcrypto", v("blake2"), |_| Ok(rc_digest::<blake2::Blake2s256>())));
    let skein =
        Algorithm::bulk("Skein-512-512", "digest")
            .scaling()
            .with(Candidate::new("rustcrypto", v("skein"), |_| Ok(rc_digest::<skein::Skein512_512>())));
    // Secondary widths.
    let sec = |name: &str| Algorithm::bulk(name, "digest").sizes(&SECONDARY_SIZES);
    let sha224 = sec("SHA-224")
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA224")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&ad::SHA224))))
        .with(Candidate::new("rustcrypto", v("sha2"), |_| Ok(rc_digest::<sha2::Sha224>())));
    let sha384 = sec("SHA-384")
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA384")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&ad::SHA384))))
        .with(Candidate::new("ring", v("ring"), |_| Ok(ring_digest(&rd::SHA384))))
        .with(Candidate::new("rustcrypto", v("sha2"), |_| Ok(rc_digest::<sha2::Sha384>())));
    let sha512_256 = sec("SHA-512/256")
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA512-256")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&ad::SHA512_256))))
        .with(Candidate::new("ring", v("ring"), |_| Ok(ring_digest(&rd::SHA512_256))))
        .with(Candidate::new("rustcrypto", v("sha2"), |_| Ok(rc_digest::<sha2::Sha512_256>())));
    let sha512_224 = sec("SHA-512/224")
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA512-224")))
        .with(Candidate::new("rustcrypto", v("sha2"), |_| Ok(rc_digest::<sha2::Sha512_224>())));
    let sha3_224 = sec("SHA3-224")
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA3-224")))
        .with(Candidate::new("rustcrypto", v("sha3"), |_| Ok(rc_digest::<sha3::Sha3_224>())));
    let sha3_384 = sec("SHA3-384")
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA3-384")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&ad::SHA3_384))))
        .with(Candidate::new("rustcrypto", v("sha3"), |_| Ok(rc_digest::<sha3::Sha3_384>())));
    let sha3_512 = sec("SHA3-512")
        .with(Candidate::new("openssl", ossl(), ossl_named("SHA3-512")))
        .with(Candidate::new("aws-lc-rs", v("aws-lc-rs"), |_| Ok(awslc_digest(&ad::SHA3_512))))
        .with(Candidate::new("rustcrypto", v("sha3"), |_| Ok(rc_digest::<sha3::Sha3_512>())));
    let shake128 = shake("SHAKE128", "SHAKE128", 32, &crate::registry::BULK_SIZES, rc_shake::<shake::Shake128, 32>);
    let shake256 = shake("SHAKE256", "SHAKE256", 64, &SECONDARY_SIZES, rc_shake::<shake::Shake256, 64>);
    #[cfg(feature = "pqkit-algs")]
    let [
        sha256,
        sha512,
        sha3,
        b2b,
        b2s,
        skein,
        sha224,
        sha384,
        sha512_224,
        sha512_256,
        sha3_224,
        sha3_384,
        sha3_512,
        shake128,
        shake256,
    ] = {
        use pqkit::hash::{blake2, sha2 as p2, sha3 as p3};
        fn skein_op() -> Box<dyn Op> {
            Box::new(|data: &mut [u8], out: &mut Vec<u8>| {
                put(out, &pqkit::hash::skein::Skein512_512::digest(data));
                Ok(())
            })
        }
        fn shake128_op() -> Box<dyn Op> {
            Box::new(|data: &mut [u8], out: &mut Vec<u8>| {
                let mut d = [0u8; 32];
                p3::Shake128::digest_into(data, &mut d);
                put(out, &d);
                Ok(())
            })
        }
        fn shake256_op() -> Box<dyn Op> {
            Box::new(|data: &mut [u8], out: &mut Vec<u8>| {
                let mut d = [0u8; 64];
                p3::Shake256::digest_into(data, &mut d);
                put(out, &d);
                Ok(())
            })
        }
        [
            with_pqkit(sha256, pqkit_digest::<p2::Sha256>),
            with_pqkit(sha512, pqkit_digest::<p2::Sha512>),
            with_pqkit(sha3, pqkit_digest::<p3::Sha3_256>),
            with_pqkit(b2b, pqkit_digest::<blake2::Blake2b512>),
            with_pqkit(b2s, pqkit_digest::<blake2::Blake2s256>),
            with_pqkit(skein, skein_op),
            with_pqkit(sha224, pqkit_digest::<p2::Sha224>),
            with_pqkit(sha384, pqkit_digest::<p2::Sha384>),
            with_pqkit(sha512_224, pqkit_digest::<p2::Sha512_224>),
            with_pqkit(sha512_256, pqkit_digest::<p2::Sha512_256>),
            with_pqkit(sha3_224, pqkit_digest::<p3::Sha3_224>),
            with_pqkit(sha3_384, pqkit_digest::<p3::Sha3_384>),
            with_pqkit(sha3_512, pqkit_digest::<p3::Sha3_512>),
            with_pqkit(shake128, shake128_op),
            with_pqkit(shake256, shake256_op),
        ]
    };
    let mut out = vec![
        sha256, sha512, sha3, b2b, b2s, skein, shake128, sha224, sha384, sha512_224, sha512_256, sha3_224, sha3_384,
        sha3_512, shake256,
    ];
    out.extend(hmacs());
    out
}

/// RustCrypto SHAKE with an `N`-byte output.
fn rc_shake<X: shake::ExtendableOutput + Default + shake::Update, const N: usize>() -> Box<dyn Op> {
    Box::new(|data: &mut [u8], out: &mut Vec<u8>| {
        let mut h = X::default();
        h.update(data);
        let mut d = [0u8; N];
        h.finalize_xof_into(&mut d);
        put(out, &d);
        Ok(())
    })
}

/// A SHAKE XOF as a fixed-length hash with an `out_len`-byte output (operation `xof-<out_len>`).
fn shake(name: &str, ossl_name: &'static str, out_len: usize, sizes: &[usize], rc: fn() -> Box<dyn Op>) -> Algorithm {
    let a = Algorithm::bulk(name, &format!("xof-{out_len}")).sizes(sizes);
    // Multi-core scaling for the primary XOF only (SHAKE128), like the other primary hashes.
    let a = if sizes.len() == crate::registry::BULK_SIZES.len() { a.scaling() } else { a };
    a.with(Candidate::new("openssl", ossl(), move |_| ossl_digest(ossl_name, Some(out_len)))).with(Candidate::new(
        "rustcrypto",
        v("shake"),
        move |_| Ok(rc()),
    ))
}
