//! Report (d): ML-KEM-512/768/1024 (keygen, encaps, decaps) and ML-DSA-44/65/87 (keygen, sign, verify), for
//! pqkit and every peer that implements the parameter set: RustCrypto (`ml-kem`, `ml-dsa`), libcrux, aws-lc-rs
//! and OpenSSL (the vendored 3.6, through its EVP API: see [`super::ossl_ffi`]).
//!
//! Each implementation is a small [`KemImpl`] or [`SigImpl`] adapter; keys are parsed/expanded outside the
//! timed region. Deterministic implementations derive keys from a fixed seed and encapsulate/sign with fixed
//! randomness, so their outputs must be byte-identical; randomized ones (aws-lc-rs encapsulation and signing)
//! are checked by cross round trips with every other implementation before anything is timed.

use super::e;
use super::ossl_ffi as ossl;
use crate::registry::{Algorithm, Candidate, Check, Op};
use std::any::Any;
use std::sync::Arc;

/// A key as an opaque object.
pub type AnyKey = Box<dyn Any + Send + Sync>;

/// One ML-KEM implementation.
pub trait KemImpl: Send + Sync {
    /// Implementation name (`rustcrypto`, `libcrux`, `aws-lc-rs`, `pqkit`).
    fn name(&self) -> &'static str;
    /// Version string.
    fn version(&self) -> String;
    /// Whether keygen and encapsulation use the seed/`m` given (and so must match other deterministic ones).
    fn deterministic(&self) -> bool;
    /// Key pair from the 64-byte seed `d || z`; writes the encapsulation key bytes into `ek`.
    fn keygen(&self, seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String>;
    /// Parses encapsulation key bytes.
    fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String>;
    /// Encapsulates with randomness `m`; writes `ciphertext || shared secret` into `out`.
    fn encaps(&self, ek: &AnyKey, m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String>;
    /// Decapsulates; writes the shared secret into `out`.
    fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String>;
}

/// One ML-DSA implementation.
pub trait SigImpl: Send + Sync {
    /// Implementation name.
    fn name(&self) -> &'static str;
    /// Version string.
    fn version(&self) -> String;
    /// Whether signing is deterministic (rnd = 0, empty context) and must match other deterministic ones.
    fn deterministic(&self) -> bool;
    /// Key pair from the 32-byte seed ξ; writes the verification key bytes into `vk`.
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String>;
    /// Parses verification key bytes.
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String>;
    /// Signs `msg` with an empty context; writes the signature into `out`.
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String>;
    /// Verifies; `Ok(false)` for a bad signature.
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String>;
}

fn key<T: 'static>(k: &AnyKey) -> Result<&T, String> {
    k.downcast_ref::<T>().ok_or_else(|| "key of another implementation".to_string())
}

/// Fixed ML-KEM key-generation seed.
pub const KEM_SEED: [u8; 64] = [0x11; 64];
/// Fixed encapsulation randomness.
pub const KEM_M: [u8; 32] = [0x22; 32];
/// Fixed ML-DSA seed.
pub const DSA_SEED: [u8; 32] = [0x33; 32];
/// Length of the signed message.
pub const MSG_LEN: usize = 1024;

// ---------------------------------------------------------------------------------------------- ML-KEM

/// RustCrypto `ml-kem` for one parameter set.
macro_rules! rc_kem {
    ($name:ident, $p:ty) => {
        struct $name;
        impl KemImpl for $name {
            fn name(&self) -> &'static str {
                "rustcrypto"
            }
            fn version(&self) -> String {
                super::v("ml-kem")
            }
            fn deterministic(&self) -> bool {
                true
            }
            fn keygen(&self, seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
                use ml_kem::KeyExport;
                let dk = ml_kem::DecapsulationKey::<$p>::from_seed((*seed).into());
                ek.clear();
                ek.extend_from_slice(&dk.encapsulation_key().to_bytes());
                Ok(Box::new(dk))
            }
            fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
                let k = ml_kem::Key::<ml_kem::EncapsulationKey<$p>>::try_from(ek).map_err(e)?;
                Ok(Box::new(ml_kem::EncapsulationKey::<$p>::new(&k).map_err(|_| "bad ek".to_string())?))
            }
            fn encaps(&self, ek: &AnyKey, m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
                let ek = key::<ml_kem::EncapsulationKey<$p>>(ek)?;
                let (ct, ss) = ek.encapsulate_deterministic(&(*m).into());
                out.clear();
                out.extend_from_slice(&ct);
                out.extend_from_slice(&ss);
                Ok(())
            }
            fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
                use ml_kem::Decapsulate;
                let dk = key::<ml_kem::DecapsulationKey<$p>>(dk)?;
                let ct = ml_kem::Ciphertext::<$p>::try_from(ct).map_err(e)?;
                let ss = dk.decapsulate(&ct);
                out.clear();
                out.extend_from_slice(&ss);
                Ok(())
            }
        }
    };
}
rc_kem!(RcKem512, ml_kem::MlKem512);
rc_kem!(RcKem768, ml_kem::MlKem768);
rc_kem!(RcKem1024, ml_kem::MlKem1024);

/// libcrux-ml-kem for one parameter set (module and type names).
macro_rules! lc_kem {
    ($name:ident, $m:ident, $pk:ident, $kp:ident, $ct:ident) => {
        struct $name;
        impl KemImpl for $name {
            fn name(&self) -> &'static str {
                "libcrux"
            }
            fn version(&self) -> String {
                super::v("libcrux-ml-kem")
            }
            fn deterministic(&self) -> bool {
                true
            }
            fn keygen(&self, seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
                let kp = libcrux_ml_kem::$m::generate_key_pair(*seed);
                ek.clear();
                ek.extend_from_slice(kp.pk());
                Ok(Box::new(kp))
            }
            fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
                let pk = libcrux_ml_kem::$m::$pk::try_from(ek).map_err(|_| "bad ek".to_string())?;
                Ok(Box::new(pk))
            }
            fn encaps(&self, ek: &AnyKey, m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
                let pk = key::<libcrux_ml_kem::$m::$pk>(ek)?;
                let (ct, ss) = libcrux_ml_kem::$m::encapsulate(pk, *m);
                out.clear();
                out.extend_from_slice(ct.as_ref());
                out.extend_from_slice(ss.as_ref());
                Ok(())
            }
            fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
                let kp = key::<libcrux_ml_kem::$m::$kp>(dk)?;
                let ct = libcrux_ml_kem::$m::$ct::try_from(ct).map_err(|_| "bad ct".to_string())?;
                let ss = libcrux_ml_kem::$m::decapsulate(kp.private_key(), &ct);
                out.clear();
                out.extend_from_slice(ss.as_ref());
                Ok(())
            }
        }
    };
}
lc_kem!(LcKem512, mlkem512, MlKem512PublicKey, MlKem512KeyPair, MlKem512Ciphertext);
lc_kem!(LcKem768, mlkem768, MlKem768PublicKey, MlKem768KeyPair, MlKem768Ciphertext);
lc_kem!(LcKem1024, mlkem1024, MlKem1024PublicKey, MlKem1024KeyPair, MlKem1024Ciphertext);

/// aws-lc-rs (randomized: its API takes no seed and no encapsulation randomness).
struct AwsKem(&'static aws_lc_rs::kem::Algorithm<aws_lc_rs::kem::AlgorithmId>);
impl KemImpl for AwsKem {
    fn name(&self) -> &'static str {
        "aws-lc-rs"
    }
    fn version(&self) -> String {
        super::v("aws-lc-rs")
    }
    fn deterministic(&self) -> bool {
        false
    }
    fn keygen(&self, _seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
        let dk = aws_lc_rs::kem::DecapsulationKey::generate(self.0).map_err(e)?;
        let pk = dk.encapsulation_key().map_err(e)?;
        ek.clear();
        ek.extend_from_slice(pk.key_bytes().map_err(e)?.as_ref());
        Ok(Box::new(dk))
    }
    fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(aws_lc_rs::kem::EncapsulationKey::new(self.0, ek).map_err(e)?))
    }
    fn encaps(&self, ek: &AnyKey, _m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
        let ek = key::<aws_lc_rs::kem::EncapsulationKey<aws_lc_rs::kem::AlgorithmId>>(ek)?;
        let (ct, ss) = ek.encapsulate().map_err(e)?;
        out.clear();
        out.extend_from_slice(ct.as_ref());
        out.extend_from_slice(ss.as_ref());
        Ok(())
    }
    fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let dk = key::<aws_lc_rs::kem::DecapsulationKey<aws_lc_rs::kem::AlgorithmId>>(dk)?;
        let ss = dk.decapsulate(ct.into()).map_err(e)?;
        out.clear();
        out.extend_from_slice(ss.as_ref());
        Ok(())
    }
}

/// OpenSSL: keys from the 64-byte seed (key generation with "seed"), encapsulation with the FIPS 203 `m`
/// given as "ikme", so it is deterministic like RustCrypto, libcrux and pqkit. One `EVP_PKEY_CTX` per key,
/// created on first use and reused (outside the keygen timing).
struct OsslKem {
    alg: &'static std::ffi::CStr,
    ct_len: usize,
}
impl KemImpl for OsslKem {
    fn name(&self) -> &'static str {
        "openssl"
    }
    fn version(&self) -> String {
        super::ossl()
    }
    fn deterministic(&self) -> bool {
        true
    }
    fn keygen(&self, seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
        let pkey = ossl::Pkey::from_seed(self.alg, seed)?;
        pkey.raw_public_key(ek)?;
        Ok(Box::new(ossl::Keyed::new(pkey)))
    }
    fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(ossl::Keyed::new(ossl::Pkey::public_from_raw(self.alg, ek)?)))
    }
    fn encaps(&self, ek: &AnyKey, m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Keyed>(ek)?.encapsulate(m, self.ct_len, out)
    }
    fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Keyed>(dk)?.decapsulate(ct, out)
    }
}

/// Shared-secret length of ML-KEM.
const SS_LEN: usize = 32;

/// The cross-implementation check of ML-KEM: deterministic implementations agree byte for byte on the
/// encapsulation key, ciphertext and shared secret; every pair (encapsulator, decapsulator) round-trips.
pub fn kem_check(impls: &[Arc<dyn KemImpl>]) -> Result<(), String> {
    let mut keys = Vec::new();
    for k in impls {
        let mut ek = Vec::new();
        let dk = k.keygen(&KEM_SEED, &mut ek).map_err(|x| format!("{} keygen: {x}", k.name()))?;
        keys.push((ek, dk));
    }
    let det: Vec<usize> = (0..impls.len()).filter(|&i| impls[i].deterministic()).collect();
    let mut det_out: Option<(usize, Vec<u8>)> = None;
    for &i in &det {
        if keys[i].0 != keys[det[0]].0 {
            return Err(format!(
                "{} and {} derive different keys from one seed",
                impls[i].name(),
                impls[det[0]].name()
            ));
        }
        let ek = impls[i].parse_ek(&keys[i].0)?;
        let mut out = Vec::new();
        impls[i].encaps(&ek, &KEM_M, &mut out)?;
        match &det_out {
            Some((j, o)) if *o != out => {
                return Err(format!(
                    "{} and {} encapsulate differently with the same m",
                    impls[i].name(),
                    impls[*j].name()
                ));
            }
            None => det_out = Some((i, out)),
            _ => {}
        }
    }
    for (a, enc) in impls.iter().enumerate() {
        for (b, dec) in impls.iter().enumerate() {
            let ek = enc
                .parse_ek(&keys[b].0)
                .map_err(|x| format!("{} cannot parse {}'s ek: {x}", enc.name(), dec.name()))?;
            let mut out = Vec::new();
            enc.encaps(&ek, &KEM_M, &mut out)?;
            if out.len() < SS_LEN {
                return Err(format!("{} encapsulation output too short", enc.name()));
            }
            let (ct, ss) = out.split_at(out.len() - SS_LEN);
            let mut ss2 = Vec::new();
            dec.decaps(&keys[b].1, ct, &mut ss2)?;
            if ss != ss2.as_slice() {
                return Err(format!(
                    "cross round trip failed: {} encapsulated to {}'s key, shared secrets differ",
                    impls[a].name(),
                    dec.name()
                ));
            }
        }
    }
    Ok(())
}

/// The cross-implementation check of ML-DSA: deterministic implementations agree on the verification key
/// and signature; every pair (signer, verifier) verifies, and a flipped bit is rejected.
pub fn sig_check(impls: &[Arc<dyn SigImpl>]) -> Result<(), String> {
    let msg = crate::harness::input_bytes(MSG_LEN);
    let mut keys = Vec::new();
    for s in impls {
        let mut vk = Vec::new();
        let sk = s.keygen(&DSA_SEED, &mut vk).map_err(|x| format!("{} keygen: {x}", s.name()))?;
        keys.push((vk, sk));
    }
    for i in 1..impls.len() {
        if keys[i].0 != keys[0].0 {
            return Err(format!("{} and {} derive different keys from one seed", impls[i].name(), impls[0].name()));
        }
    }
    let mut sigs = Vec::new();
    for (i, s) in impls.iter().enumerate() {
        let mut sig = Vec::new();
        s.sign(&keys[i].1, &msg, &mut sig)?;
        sigs.push(sig);
    }
    let det: Vec<usize> = (0..impls.len()).filter(|&i| impls[i].deterministic()).collect();
    for &i in &det {
        if sigs[i] != sigs[det[0]] {
            return Err(format!(
                "{} and {} sign deterministically but differently",
                impls[i].name(),
                impls[det[0]].name()
            ));
        }
    }
    for (a, signer) in impls.iter().enumerate() {
        for (b, verifier) in impls.iter().enumerate() {
            let vk = verifier.parse_vk(&keys[a].0)?;
            if !verifier.verify(&vk, &msg, &sigs[a])? {
                return Err(format!("{} rejects {}'s signature", verifier.name(), signer.name()));
            }
            let mut bad = sigs[a].clone();
            bad[7] ^= 1;
            if verifier.verify(&vk, &msg, &bad)? {
                return Err(format!("{} accepts a corrupted signature of {}", impls[b].name(), signer.name()));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------- ML-DSA

/// RustCrypto `ml-dsa` for one parameter set.
macro_rules! rc_sig {
    ($name:ident, $p:ty) => {
        struct $name;
        impl SigImpl for $name {
            fn name(&self) -> &'static str {
                "rustcrypto"
            }
            fn version(&self) -> String {
                super::v("ml-dsa")
            }
            fn deterministic(&self) -> bool {
                true
            }
            fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
                use ml_dsa::Keypair;
                let sk = ml_dsa::SigningKey::<$p>::from_seed(&(*seed).into());
                vk.clear();
                vk.extend_from_slice(&sk.verifying_key().encode());
                Ok(Box::new(sk))
            }
            fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
                let enc = ml_dsa::EncodedVerifyingKey::<$p>::try_from(vk).map_err(e)?;
                Ok(Box::new(ml_dsa::VerifyingKey::<$p>::decode(&enc)))
            }
            fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
                use ml_dsa::Signer;
                let sig = key::<ml_dsa::SigningKey<$p>>(sk)?.try_sign(msg).map_err(e)?;
                out.clear();
                out.extend_from_slice(&sig.encode());
                Ok(())
            }
            fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
                use ml_dsa::Verifier;
                let enc = ml_dsa::EncodedSignature::<$p>::try_from(sig).map_err(e)?;
                let Some(sig) = ml_dsa::Signature::<$p>::decode(&enc) else { return Ok(false) };
                Ok(key::<ml_dsa::VerifyingKey<$p>>(vk)?.verify(msg, &sig).is_ok())
            }
        }
    };
}
rc_sig!(RcSig44, ml_dsa::MlDsa44);
rc_sig!(RcSig65, ml_dsa::MlDsa65);
rc_sig!(RcSig87, ml_dsa::MlDsa87);

/// libcrux-ml-dsa for one parameter set (module and type names).
macro_rules! lc_sig {
    ($name:ident, $m:ident, $sk:ident, $vk:ident, $sig:ident) => {
        struct $name;
        impl SigImpl for $name {
            fn name(&self) -> &'static str {
                "libcrux"
            }
            fn version(&self) -> String {
                super::v("libcrux-ml-dsa")
            }
            fn deterministic(&self) -> bool {
                true
            }
            fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
                let kp = libcrux_ml_dsa::$m::generate_key_pair(*seed);
                vk.clear();
                vk.extend_from_slice(kp.verification_key.as_slice());
                Ok(Box::new(kp.signing_key))
            }
            fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
                let a: [u8; libcrux_ml_dsa::$m::$vk::len()] = vk.try_into().map_err(|_| "bad vk length".to_string())?;
                Ok(Box::new(libcrux_ml_dsa::$m::$vk::new(a)))
            }
            fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
                let sk = key::<libcrux_ml_dsa::$m::$sk>(sk)?;
                let sig = libcrux_ml_dsa::$m::sign(sk, msg, b"", [0u8; 32]).map_err(|x| format!("{x:?}"))?;
                out.clear();
                out.extend_from_slice(sig.as_slice());
                Ok(())
            }
            fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
                let vk = key::<libcrux_ml_dsa::$m::$vk>(vk)?;
                let a: [u8; libcrux_ml_dsa::$m::$sig::len()] =
                    sig.try_into().map_err(|_| "bad signature length".to_string())?;
                let sig = libcrux_ml_dsa::$m::$sig::new(a);
                Ok(libcrux_ml_dsa::$m::verify(vk, msg, b"", &sig).is_ok())
            }
        }
    };
}
lc_sig!(LcSig44, ml_dsa_44, MLDSA44SigningKey, MLDSA44VerificationKey, MLDSA44Signature);
lc_sig!(LcSig65, ml_dsa_65, MLDSA65SigningKey, MLDSA65VerificationKey, MLDSA65Signature);
lc_sig!(LcSig87, ml_dsa_87, MLDSA87SigningKey, MLDSA87VerificationKey, MLDSA87Signature);

/// aws-lc-rs (keys from the seed, but hedged signing: checked by cross round trips).
struct AwsSig(
    &'static aws_lc_rs::signature::PqdsaSigningAlgorithm,
    &'static aws_lc_rs::signature::PqdsaVerificationAlgorithm,
);
impl SigImpl for AwsSig {
    fn name(&self) -> &'static str {
        "aws-lc-rs"
    }
    fn version(&self) -> String {
        super::v("aws-lc-rs")
    }
    fn deterministic(&self) -> bool {
        false
    }
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        use aws_lc_rs::signature::KeyPair;
        let kp = aws_lc_rs::signature::PqdsaKeyPair::from_seed(self.0, seed).map_err(e)?;
        vk.clear();
        vk.extend_from_slice(kp.public_key().as_ref());
        Ok(Box::new(kp))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(vk.to_vec()))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let kp = key::<aws_lc_rs::signature::PqdsaKeyPair>(sk)?;
        out.clear();
        out.resize(kp.algorithm().signature_len(), 0);
        let n = kp.sign(msg, out).map_err(e)?;
        out.truncate(n);
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let vk = key::<Vec<u8>>(vk)?;
        let pk = aws_lc_rs::signature::UnparsedPublicKey::new(self.1, vk.as_slice());
        Ok(pk.verify(msg, sig).is_ok())
    }
}

/// OpenSSL: keys from the seed ξ, deterministic signing (the "deterministic" parameter, rnd = 0) with an
/// empty context, through `EVP_PKEY_sign_message_init` / `EVP_PKEY_sign` on a context made once per key.
struct OsslSig {
    alg: &'static std::ffi::CStr,
    sig_len: usize,
}
impl SigImpl for OsslSig {
    fn name(&self) -> &'static str {
        "openssl"
    }
    fn version(&self) -> String {
        super::ossl()
    }
    fn deterministic(&self) -> bool {
        true
    }
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let pkey = ossl::Pkey::from_seed(self.alg, seed)?;
        pkey.raw_public_key(vk)?;
        Ok(Box::new(ossl::Keyed::new(pkey)))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(ossl::Keyed::new(ossl::Pkey::public_from_raw(self.alg, vk)?)))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Keyed>(sk)?.sign(self.alg, msg, self.sig_len, out)
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        key::<ossl::Keyed>(vk)?.verify(self.alg, msg, sig)
    }
}

// ---------------------------------------------------------------------------------------------- pqkit

/// pqkit's ML-KEM for one parameter set.
#[cfg(feature = "pqkit-algs")]
macro_rules! pq_kem {
    ($name:ident, $p:ty) => {
        struct $name;
        impl KemImpl for $name {
            fn name(&self) -> &'static str {
                "pqkit"
            }
            fn version(&self) -> String {
                super::pqkit_version()
            }
            fn deterministic(&self) -> bool {
                true
            }
            fn keygen(&self, seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
                let (d, z) = seed.split_at(32);
                let (dk, pk) =
                    pqkit::mlkem::DecapsulationKey::<$p>::from_seed(d.try_into().map_err(e)?, z.try_into().map_err(e)?);
                ek.clear();
                ek.extend_from_slice(pk.as_bytes());
                Ok(Box::new(dk))
            }
            fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
                Ok(Box::new(pqkit::mlkem::EncapsulationKey::<$p>::from_bytes(ek).map_err(e)?))
            }
            fn encaps(&self, ek: &AnyKey, m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
                let pk = key::<pqkit::mlkem::EncapsulationKey<$p>>(ek)?;
                let (ct, ss) = pk.encapsulate_deterministic(m);
                out.clear();
                out.extend_from_slice(ct.as_bytes());
                out.extend_from_slice(ss.as_bytes());
                Ok(())
            }
            fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
                let dk = key::<pqkit::mlkem::DecapsulationKey<$p>>(dk)?;
                let ct = pqkit::mlkem::Ciphertext::<$p>::from_bytes(ct).map_err(e)?;
                let ss = dk.decapsulate(&ct);
                out.clear();
                out.extend_from_slice(ss.as_bytes());
                Ok(())
            }
        }
    };
}
#[cfg(feature = "pqkit-algs")]
pq_kem!(PqKem512, pqkit::mlkem::MlKem512);
#[cfg(feature = "pqkit-algs")]
pq_kem!(PqKem768, pqkit::mlkem::MlKem768);
#[cfg(feature = "pqkit-algs")]
pq_kem!(PqKem1024, pqkit::mlkem::MlKem1024);

/// pqkit's ML-DSA for one parameter set.
#[cfg(feature = "pqkit-algs")]
macro_rules! pq_sig {
    ($name:ident, $p:ty) => {
        struct $name;
        impl SigImpl for $name {
            fn name(&self) -> &'static str {
                "pqkit"
            }
            fn version(&self) -> String {
                super::pqkit_version()
            }
            fn deterministic(&self) -> bool {
                true
            }
            fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
                let (sk, pk) = pqkit::mldsa::SigningKey::<$p>::from_seed(seed);
                vk.clear();
                vk.extend_from_slice(pk.as_bytes());
                Ok(Box::new(sk))
            }
            fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
                Ok(Box::new(pqkit::mldsa::VerifyingKey::<$p>::from_bytes(vk).map_err(e)?))
            }
            fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
                let sk = key::<pqkit::mldsa::SigningKey<$p>>(sk)?;
                let sig = sk.sign_deterministic(msg, b"").map_err(e)?;
                out.clear();
                out.extend_from_slice(sig.as_bytes());
                Ok(())
            }
            fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
                let vk = key::<pqkit::mldsa::VerifyingKey<$p>>(vk)?;
                let sig = pqkit::mldsa::Signature::<$p>::from_bytes(sig).map_err(e)?;
                Ok(vk.verify(msg, b"", &sig).is_ok())
            }
        }
    };
}
#[cfg(feature = "pqkit-algs")]
pq_sig!(PqSig44, pqkit::mldsa::MlDsa44);
#[cfg(feature = "pqkit-algs")]
pq_sig!(PqSig65, pqkit::mldsa::MlDsa65);
#[cfg(feature = "pqkit-algs")]
pq_sig!(PqSig87, pqkit::mldsa::MlDsa87);

/// The ML-KEM implementations of one parameter set (512, 768 or 1024), pqkit first.
pub fn kem_impls_for(set: u32) -> Vec<Arc<dyn KemImpl>> {
    use aws_lc_rs::kem::{ML_KEM_512, ML_KEM_768, ML_KEM_1024};
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn KemImpl>> = match set {
        512 => vec![
            Arc::new(RcKem512),
            Arc::new(LcKem512),
            Arc::new(AwsKem(&ML_KEM_512)),
            Arc::new(OsslKem { alg: c"ML-KEM-512", ct_len: 768 }),
        ],
        768 => vec![
            Arc::new(RcKem768),
            Arc::new(LcKem768),
            Arc::new(AwsKem(&ML_KEM_768)),
            Arc::new(OsslKem { alg: c"ML-KEM-768", ct_len: 1088 }),
        ],
        _ => vec![
            Arc::new(RcKem1024),
            Arc::new(LcKem1024),
            Arc::new(AwsKem(&ML_KEM_1024)),
            Arc::new(OsslKem { alg: c"ML-KEM-1024", ct_len: 1568 }),
        ],
    };
    #[cfg(feature = "pqkit-algs")]
    v.insert(
        0,
        match set {
            512 => Arc::new(PqKem512),
            768 => Arc::new(PqKem768),
            _ => Arc::new(PqKem1024),
        },
    );
    v
}

/// The ML-DSA implementations of one parameter set (44, 65 or 87), pqkit first.
pub fn sig_impls_for(set: u32) -> Vec<Arc<dyn SigImpl>> {
    use aws_lc_rs::signature as aws;
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn SigImpl>> = match set {
        44 => vec![
            Arc::new(RcSig44),
            Arc::new(LcSig44),
            Arc::new(AwsSig(&aws::ML_DSA_44_SIGNING, &aws::ML_DSA_44)),
            Arc::new(OsslSig { alg: c"ML-DSA-44", sig_len: 2420 }),
        ],
        65 => vec![
            Arc::new(RcSig65),
            Arc::new(LcSig65),
            Arc::new(AwsSig(&aws::ML_DSA_65_SIGNING, &aws::ML_DSA_65)),
            Arc::new(OsslSig { alg: c"ML-DSA-65", sig_len: 3309 }),
        ],
        _ => vec![
            Arc::new(RcSig87),
            Arc::new(LcSig87),
            Arc::new(AwsSig(&aws::ML_DSA_87_SIGNING, &aws::ML_DSA_87)),
            Arc::new(OsslSig { alg: c"ML-DSA-87", sig_len: 4627 }),
        ],
    };
    #[cfg(feature = "pqkit-algs")]
    v.insert(
        0,
        match set {
            44 => Arc::new(PqSig44),
            65 => Arc::new(PqSig65),
            _ => Arc::new(PqSig87),
        },
    );
    v
}

/// ML-KEM-768 implementations, pqkit first.
pub fn kem_impls() -> Vec<Arc<dyn KemImpl>> {
    kem_impls_for(768)
}

/// ML-DSA-65 implementations, pqkit first.
pub fn sig_impls() -> Vec<Arc<dyn SigImpl>> {
    sig_impls_for(65)
}

/// Builds the three ML-KEM operations from a list of implementations.
pub fn kem_algorithms(name: &str, impls: Vec<Arc<dyn KemImpl>>) -> Vec<Algorithm> {
    let mut algs = Vec::new();
    for op in ["keygen", "encaps", "decaps"] {
        let list = impls.clone();
        let check = Check::Custom(Box::new(move || kem_check(&list)));
        let mut alg = Algorithm::public_key(name, op, 0, check);
        for k in &impls {
            let k2 = k.clone();
            let setup = move |_size: usize| -> Result<Box<dyn Op>, String> {
                let k = k2.clone();
                Ok(match op {
                    "keygen" => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| k.keygen(&KEM_SEED, out).map(drop)),
                    "encaps" => {
                        let mut ek = Vec::new();
                        k.keygen(&KEM_SEED, &mut ek)?;
                        let ek = k.parse_ek(&ek)?;
                        Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| k.encaps(&ek, &KEM_M, out))
                    }
                    _ => {
                        let mut ek = Vec::new();
                        let dk = k.keygen(&KEM_SEED, &mut ek)?;
                        let mut ct = Vec::new();
                        k.encaps(&k.parse_ek(&ek)?, &KEM_M, &mut ct)?;
                        ct.truncate(ct.len() - SS_LEN);
                        Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| k.decaps(&dk, &ct, out))
                    }
                })
            };
            alg = alg.with(Candidate::new(k.name(), k.version(), setup));
        }
        algs.push(alg);
    }
    algs
}

/// Builds the three ML-DSA operations from a list of implementations.
pub fn sig_algorithms(name: &str, impls: Vec<Arc<dyn SigImpl>>) -> Vec<Algorithm> {
    let mut algs = Vec::new();
    for op in ["keygen", "sign", "verify"] {
        let list = impls.clone();
        let check = Check::Custom(Box::new(move || sig_check(&list)));
        let mut alg = Algorithm::public_key(name, op, if op == "keygen" { 0 } else { MSG_LEN }, check);
        for s in &impls {
            let s2 = s.clone();
            let setup = move |_size: usize| -> Result<Box<dyn Op>, String> {
                let s = s2.clone();
                let msg = crate::harness::input_bytes(MSG_LEN);
                Ok(match op {
                    "keygen" => Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| s.keygen(&DSA_SEED, out).map(drop)),
                    "sign" => {
                        let sk = s.keygen(&DSA_SEED, &mut Vec::new())?;
                        // A fresh message per signature (a counter in its first bytes), so that deterministic
                        // signers also go through a varying number of rejection-loop iterations: that is the
                        // long tail the mean shows next to the median.
                        let mut msg = msg;
                        let mut counter = 0u64;
                        Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                            counter = counter.wrapping_add(1);
                            msg[..8].copy_from_slice(&counter.to_le_bytes());
                            s.sign(&sk, &msg, out)
                        })
                    }
                    _ => {
                        let mut vk = Vec::new();
                        let sk = s.keygen(&DSA_SEED, &mut vk)?;
                        let mut sig = Vec::new();
                        s.sign(&sk, &msg, &mut sig)?;
                        let vk = s.parse_vk(&vk)?;
                        Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                            if s.verify(&vk, &msg, &sig)? {
                                out.clear();
                                Ok(())
                            } else {
                                Err("valid signature rejected".into())
                            }
                        })
                    }
                })
            };
            alg = alg.with(Candidate::new(s.name(), s.version(), setup));
        }
        algs.push(alg);
    }
    algs
}

/// The family's algorithms: every ML-KEM, then every ML-DSA parameter set.
pub fn algorithms() -> Vec<Algorithm> {
    let mut v = Vec::new();
    for set in [512, 768, 1024] {
        v.extend(kem_algorithms(&format!("ML-KEM-{set}"), kem_impls_for(set)));
    }
    for set in [44, 65, 87] {
        v.extend(sig_algorithms(&format!("ML-DSA-{set}"), sig_impls_for(set)));
    }
    v
}
