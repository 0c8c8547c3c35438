//! Report (d): ML-KEM-512/768/1024 (keygen, encaps, decaps) and ML-DSA-44/65/87 (keygen, sign, verify), for
//! pqkit and every peer that implements the parameter set: RustCrypto (`ml-kem`, `ml-dsa`), libcrux, aws-lc-rs
//! and OpenSSL (the vendored 3.6, through its EVP API: see [`super::ossl_ffi`]).
//!
//! Each peer has one [`KemImpl`] and one [`SigImpl`] adapter that serves every parameter set, and says who it
//! is through [`Named`]; keys are parsed/expanded outside the timed region. Deterministic implementations derive keys from a fixed seed and encapsulate/sign with fixed
//! randomness, so their outputs must be byte-identical; randomized ones (aws-lc-rs encapsulation and signing)
//! are checked by cross round trips with every other implementation before anything is timed.

use super::e;
use super::ossl_ffi as ossl;
use crate::registry::{Algorithm, Candidate, Check, Op};
use libcrux_ml_dsa as lc_dsa;
use libcrux_ml_kem as lc_kem;
use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

/// A key as an opaque object.
pub type AnyKey = Box<dyn Any + Send + Sync>;
/// One item of a batch verification row: verification key, message and signature bytes.
pub type VerifyItem = (Vec<u8>, Vec<u8>, Vec<u8>);

/// Who an implementation is in the report. A peer's ML-KEM and ML-DSA adapters share it where the peer is one
/// crate (see the constants below).
#[derive(Clone, Copy, Debug)]
pub struct Id {
    /// Implementation name (`pqkit`, `rustcrypto`, `libcrux`, `aws-lc-rs`, `openssl`).
    pub name: &'static str,
    /// Its version string.
    pub version: fn() -> String,
    /// Whether its keys and outputs are a function of the seed and the randomness given (key generation,
    /// encapsulation with `m`, signing with rnd = 0 and an empty context), so that they must match the other
    /// deterministic implementations byte for byte.
    pub deterministic: bool,
}

/// What every ML-KEM and ML-DSA adapter has: who it is.
pub trait Named {
    /// Who this is.
    fn id(&self) -> Id;
    /// Implementation name.
    fn name(&self) -> &'static str {
        self.id().name
    }
    /// Version string.
    fn version(&self) -> String {
        (self.id().version)()
    }
    /// Whether its outputs must match the other deterministic implementations (see [`Id::deterministic`]).
    fn deterministic(&self) -> bool {
        self.id().deterministic
    }
}

/// One ML-KEM implementation.
pub trait KemImpl: Named + Send + Sync {
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
pub trait SigImpl: Named + Send + Sync {
    /// Key pair from the 32-byte seed ξ; writes the verification key bytes into `vk`.
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String>;
    /// Parses verification key bytes.
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String>;
    /// Signs `msg` with an empty context; writes the signature into `out`.
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String>;
    /// Verifies; `Ok(false)` for a bad signature.
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String>;
    /// A batch API's timed key generation for every seed (the verification keys written into `out` in
    /// order), or `None` where the implementation has none and the rows run [`keygen`](Self::keygen) per seed.
    fn keygen_many_op(&self, _seeds: &[[u8; 32]]) -> Option<Result<Box<dyn Op>, String>> {
        None
    }
    /// A batch API's timed signing of every message under the key of `seed` (the signatures written into
    /// `out` in order), or `None` where the rows run [`sign`](Self::sign) per message.
    fn sign_many_op(&self, _seed: &[u8; 32], _msgs: &[Vec<u8>]) -> Option<Result<Box<dyn Op>, String>> {
        None
    }
    /// A batch API's timed verification of every `(verification key, message, signature)` item (one byte per
    /// item written into `out`, 1 for valid), or `None` where the rows run [`verify`](Self::verify) per item.
    fn verify_many_op(&self, _items: &[VerifyItem]) -> Option<Result<Box<dyn Op>, String>> {
        None
    }
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

// ---------------------------------------------------------------------------------------------- adapters
//
// One adapter per peer for ML-KEM and one for ML-DSA, each serving every parameter set: generic over the set
// where the peer's API is (RustCrypto ML-DSA, pqkit), built from the set's functions where the peer has a module
// of functions per set (libcrux, and RustCrypto ML-KEM's one inherent method), or holding the set's algorithm
// handle (aws-lc-rs, OpenSSL). [`kem_impls_for`] and [`sig_impls_for`] pick the sets.

/// RustCrypto `ml-kem`.
const RUSTCRYPTO_KEM: Id = Id { name: "rustcrypto", version: || super::v("ml-kem"), deterministic: true };
/// RustCrypto `ml-dsa`.
const RUSTCRYPTO_DSA: Id = Id { name: "rustcrypto", version: || super::v("ml-dsa"), deterministic: true };
/// libcrux-ml-kem.
const LIBCRUX_KEM: Id = Id { name: "libcrux", version: || super::v("libcrux-ml-kem"), deterministic: true };
/// libcrux-ml-dsa.
const LIBCRUX_DSA: Id = Id { name: "libcrux", version: || super::v("libcrux-ml-dsa"), deterministic: true };
/// aws-lc-rs: randomized (its ML-KEM API takes no seed and no encapsulation randomness; its ML-DSA signing is
/// hedged), so it is checked by cross round trips.
const AWS_LC_RS: Id = Id { name: "aws-lc-rs", version: || super::v("aws-lc-rs"), deterministic: false };
/// OpenSSL.
const OPENSSL: Id = Id { name: "openssl", version: super::ossl, deterministic: true };
/// pqkit.
#[cfg(feature = "pqkit-algs")]
const PQKIT: Id = Id { name: "pqkit", version: super::pqkit_version, deterministic: true };

/// Replaces `out` with the concatenation of `parts`.
#[inline]
fn put(out: &mut Vec<u8>, parts: &[&[u8]]) {
    out.clear();
    for p in parts {
        out.extend_from_slice(p);
    }
}

/// RustCrypto `ml-kem`. The crate bounds its key types by a private trait, so the adapter is generic over the
/// encapsulation key `Ek` through the public `kem` traits, and is given the one inherent method it needs, the
/// set's deterministic encapsulation (e.g. `ml_kem::EncapsulationKey::<MlKem768>::encapsulate_deterministic`).
struct RcKem<Ek, E> {
    encapsulate: E,
    ek: PhantomData<fn() -> Ek>,
}

/// The decapsulation key that goes with RustCrypto encapsulation key `Ek`.
type RcDk<Ek> = <<Ek as ml_kem::Encapsulate>::Kem as ml_kem::Kem>::DecapsulationKey;

impl<Ek, E> RcKem<Ek, E>
where
    Ek: ml_kem::Encapsulate,
    E: Fn(&Ek, &ml_kem::B32) -> (ml_kem::Ciphertext<Ek::Kem>, ml_kem::SharedKey),
{
    fn new(encapsulate: E) -> Self {
        RcKem { encapsulate, ek: PhantomData }
    }
}

impl<Ek, E> Named for RcKem<Ek, E> {
    fn id(&self) -> Id {
        RUSTCRYPTO_KEM
    }
}

impl<Ek, E> KemImpl for RcKem<Ek, E>
where
    Ek: ml_kem::Encapsulate + Send + Sync + 'static,
    RcDk<Ek>: ml_kem::KeyInit + ml_kem::KeySizeUser<KeySize = ml_kem::array::sizes::U64> + ml_kem::Decapsulate,
    RcDk<Ek>: Send + Sync + 'static,
    E: Fn(&Ek, &ml_kem::B32) -> (ml_kem::Ciphertext<Ek::Kem>, ml_kem::SharedKey) + Send + Sync + 'static,
{
    fn keygen(&self, seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
        use ml_kem::kem::Decapsulator;
        use ml_kem::{KeyExport, KeyInit};
        let dk = RcDk::<Ek>::new(&(*seed).into());
        put(ek, &[&dk.encapsulation_key().to_bytes()]);
        Ok(Box::new(dk))
    }
    fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
        let k = ml_kem::Key::<Ek>::try_from(ek).map_err(e)?;
        Ok(Box::new(<Ek as ml_kem::TryKeyInit>::new(&k).map_err(|_| "bad ek".to_string())?))
    }
    fn encaps(&self, ek: &AnyKey, m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
        let (ct, ss) = (self.encapsulate)(key::<Ek>(ek)?, &(*m).into());
        put(out, &[&ct, &ss]);
        Ok(())
    }
    fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use ml_kem::Decapsulate;
        let ct = ml_kem::Ciphertext::<Ek::Kem>::try_from(ct).map_err(e)?;
        let ss = key::<RcDk<Ek>>(dk)?.decapsulate(&ct);
        put(out, &[&ss]);
        Ok(())
    }
}

/// RustCrypto `ml-dsa` for the parameter set `P`.
struct RcSig<P>(PhantomData<fn() -> P>);

impl<P> Named for RcSig<P> {
    fn id(&self) -> Id {
        RUSTCRYPTO_DSA
    }
}

impl<P> SigImpl for RcSig<P>
where
    P: ml_dsa::MlDsaParams + 'static,
    ml_dsa::SigningKey<P>: Send + Sync,
    ml_dsa::VerifyingKey<P>: Send + Sync,
{
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        use ml_dsa::Keypair;
        let sk = ml_dsa::SigningKey::<P>::from_seed(&(*seed).into());
        put(vk, &[&sk.verifying_key().encode()]);
        Ok(Box::new(sk))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        let enc = ml_dsa::EncodedVerifyingKey::<P>::try_from(vk).map_err(e)?;
        Ok(Box::new(ml_dsa::VerifyingKey::<P>::decode(&enc)))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        use ml_dsa::Signer;
        let sig = key::<ml_dsa::SigningKey<P>>(sk)?.try_sign(msg).map_err(e)?;
        put(out, &[&sig.encode()]);
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        use ml_dsa::Verifier;
        let enc = ml_dsa::EncodedSignature::<P>::try_from(sig).map_err(e)?;
        let Some(sig) = ml_dsa::Signature::<P>::decode(&enc) else { return Ok(false) };
        Ok(key::<ml_dsa::VerifyingKey<P>>(vk)?.verify(msg, &sig).is_ok())
    }
}

/// libcrux-ml-kem: one parameter set's module functions (e.g. `libcrux_ml_kem::mlkem768::{generate_key_pair,
/// encapsulate, decapsulate}`), over libcrux's size-generic key types.
struct LcKem<G, E, D> {
    generate: G,
    encapsulate: E,
    decapsulate: D,
}

impl<G, E, D> Named for LcKem<G, E, D> {
    fn id(&self) -> Id {
        LIBCRUX_KEM
    }
}

impl<G, E, D, const SK: usize, const PK: usize, const CT: usize> KemImpl for LcKem<G, E, D>
where
    G: Fn([u8; 64]) -> lc_kem::MlKemKeyPair<SK, PK> + Send + Sync,
    E: Fn(&lc_kem::MlKemPublicKey<PK>, [u8; 32]) -> (lc_kem::MlKemCiphertext<CT>, lc_kem::MlKemSharedSecret),
    E: Send + Sync,
    D: Fn(&lc_kem::MlKemPrivateKey<SK>, &lc_kem::MlKemCiphertext<CT>) -> lc_kem::MlKemSharedSecret + Send + Sync,
{
    fn keygen(&self, seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
        let kp = (self.generate)(*seed);
        put(ek, &[kp.pk()]);
        Ok(Box::new(kp))
    }
    fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(lc_kem::MlKemPublicKey::<PK>::try_from(ek).map_err(|_| "bad ek".to_string())?))
    }
    fn encaps(&self, ek: &AnyKey, m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
        let (ct, ss) = (self.encapsulate)(key::<lc_kem::MlKemPublicKey<PK>>(ek)?, *m);
        put(out, &[ct.as_ref(), ss.as_ref()]);
        Ok(())
    }
    fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let kp = key::<lc_kem::MlKemKeyPair<SK, PK>>(dk)?;
        let ct = lc_kem::MlKemCiphertext::<CT>::try_from(ct).map_err(|_| "bad ct".to_string())?;
        let ss = (self.decapsulate)(kp.private_key(), &ct);
        put(out, &[ss.as_ref()]);
        Ok(())
    }
}

/// libcrux-ml-dsa: one parameter set's module functions (e.g. `libcrux_ml_dsa::ml_dsa_65::{generate_key_pair,
/// sign, verify}`), over libcrux's size-generic key types.
struct LcSig<G, S, V> {
    generate: G,
    sign: S,
    verify: V,
}

impl<G, S, V> Named for LcSig<G, S, V> {
    fn id(&self) -> Id {
        LIBCRUX_DSA
    }
}

impl<G, S, V, const VK: usize, const SK: usize, const SIG: usize> SigImpl for LcSig<G, S, V>
where
    G: Fn([u8; 32]) -> lc_dsa::MLDSAKeyPair<VK, SK> + Send + Sync,
    S: Fn(
        &lc_dsa::MLDSASigningKey<SK>,
        &[u8],
        &[u8],
        [u8; 32],
    ) -> Result<lc_dsa::MLDSASignature<SIG>, lc_dsa::SigningError>,
    S: Send + Sync,
    V: Fn(
        &lc_dsa::MLDSAVerificationKey<VK>,
        &[u8],
        &[u8],
        &lc_dsa::MLDSASignature<SIG>,
    ) -> Result<(), lc_dsa::VerificationError>,
    V: Send + Sync,
{
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let kp = (self.generate)(*seed);
        put(vk, &[kp.verification_key.as_slice()]);
        Ok(Box::new(kp.signing_key))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        let a: [u8; VK] = vk.try_into().map_err(|_| "bad vk length".to_string())?;
        Ok(Box::new(lc_dsa::MLDSAVerificationKey::new(a)))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let sk = key::<lc_dsa::MLDSASigningKey<SK>>(sk)?;
        let sig = (self.sign)(sk, msg, b"", [0u8; 32]).map_err(|x| format!("{x:?}"))?;
        put(out, &[sig.as_slice()]);
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let vk = key::<lc_dsa::MLDSAVerificationKey<VK>>(vk)?;
        let a: [u8; SIG] = sig.try_into().map_err(|_| "bad signature length".to_string())?;
        Ok((self.verify)(vk, msg, b"", &lc_dsa::MLDSASignature::new(a)).is_ok())
    }
}

/// aws-lc-rs ML-KEM (randomized: its API takes no seed and no encapsulation randomness).
struct AwsKem(&'static aws_lc_rs::kem::Algorithm<aws_lc_rs::kem::AlgorithmId>);

impl Named for AwsKem {
    fn id(&self) -> Id {
        AWS_LC_RS
    }
}

impl KemImpl for AwsKem {
    fn keygen(&self, _seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
        let dk = aws_lc_rs::kem::DecapsulationKey::generate(self.0).map_err(e)?;
        let pk = dk.encapsulation_key().map_err(e)?;
        put(ek, &[pk.key_bytes().map_err(e)?.as_ref()]);
        Ok(Box::new(dk))
    }
    fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(aws_lc_rs::kem::EncapsulationKey::new(self.0, ek).map_err(e)?))
    }
    fn encaps(&self, ek: &AnyKey, _m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
        let ek = key::<aws_lc_rs::kem::EncapsulationKey<aws_lc_rs::kem::AlgorithmId>>(ek)?;
        let (ct, ss) = ek.encapsulate().map_err(e)?;
        put(out, &[ct.as_ref(), ss.as_ref()]);
        Ok(())
    }
    fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let dk = key::<aws_lc_rs::kem::DecapsulationKey<aws_lc_rs::kem::AlgorithmId>>(dk)?;
        let ss = dk.decapsulate(ct.into()).map_err(e)?;
        put(out, &[ss.as_ref()]);
        Ok(())
    }
}

/// aws-lc-rs ML-DSA (keys from the seed, but hedged signing: checked by cross round trips).
struct AwsSig(
    &'static aws_lc_rs::signature::PqdsaSigningAlgorithm,
    &'static aws_lc_rs::signature::PqdsaVerificationAlgorithm,
);

impl Named for AwsSig {
    fn id(&self) -> Id {
        AWS_LC_RS
    }
}

impl SigImpl for AwsSig {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        use aws_lc_rs::signature::KeyPair;
        let kp = aws_lc_rs::signature::PqdsaKeyPair::from_seed(self.0, seed).map_err(e)?;
        put(vk, &[kp.public_key().as_ref()]);
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

/// OpenSSL ML-KEM and ML-DSA, one adapter for both (through [`super::ossl_ffi`]): keys from the FIPS 203/204
/// seed by key generation with "seed", public keys from their encoding, one `EVP_PKEY_CTX` per key, created on
/// first use and reused (outside the keygen timing). ML-KEM encapsulates with the FIPS 203 `m` given as "ikme",
/// ML-DSA signs deterministically (the "deterministic" parameter, rnd = 0) with an empty context, so OpenSSL is
/// deterministic like RustCrypto, libcrux and pqkit.
struct Ossl {
    /// The algorithm name, e.g. `ML-KEM-768`, `ML-DSA-65`.
    alg: &'static std::ffi::CStr,
    /// The ciphertext (ML-KEM) or signature (ML-DSA) length.
    out_len: usize,
}

impl Ossl {
    fn keygen(&self, seed: &[u8], public: &mut Vec<u8>) -> Result<AnyKey, String> {
        let pkey = ossl::Pkey::from_seed(self.alg, seed)?;
        pkey.raw_public_key(public)?;
        Ok(Box::new(ossl::Keyed::new(pkey)))
    }
    fn parse(&self, public: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(ossl::Keyed::new(ossl::Pkey::public_from_raw(self.alg, public)?)))
    }
}

impl Named for Ossl {
    fn id(&self) -> Id {
        OPENSSL
    }
}

impl KemImpl for Ossl {
    fn keygen(&self, seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
        Ossl::keygen(self, seed, ek)
    }
    fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
        self.parse(ek)
    }
    fn encaps(&self, ek: &AnyKey, m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Keyed>(ek)?.encapsulate(m, self.out_len, out)
    }
    fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Keyed>(dk)?.decapsulate(ct, out)
    }
}

impl SigImpl for Ossl {
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        Ossl::keygen(self, seed, vk)
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        self.parse(vk)
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        key::<ossl::Keyed>(sk)?.sign(self.alg, msg, self.out_len, out)
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        key::<ossl::Keyed>(vk)?.verify(self.alg, msg, sig)
    }
}

/// pqkit's ML-KEM for the parameter set `P`.
#[cfg(feature = "pqkit-algs")]
struct PqKem<P>(PhantomData<fn() -> P>);

#[cfg(feature = "pqkit-algs")]
impl<P> Named for PqKem<P> {
    fn id(&self) -> Id {
        PQKIT
    }
}

#[cfg(feature = "pqkit-algs")]
impl<P> KemImpl for PqKem<P>
where
    P: pqkit::mlkem::Params,
    pqkit::mlkem::DecapsulationKey<P>: Send + Sync,
    pqkit::mlkem::EncapsulationKey<P>: Send + Sync,
{
    fn keygen(&self, seed: &[u8; 64], ek: &mut Vec<u8>) -> Result<AnyKey, String> {
        let (d, z) = seed.split_at(32);
        let (dk, pk) =
            pqkit::mlkem::DecapsulationKey::<P>::from_seed(d.try_into().map_err(e)?, z.try_into().map_err(e)?);
        put(ek, &[pk.as_bytes()]);
        Ok(Box::new(dk))
    }
    fn parse_ek(&self, ek: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(pqkit::mlkem::EncapsulationKey::<P>::from_bytes(ek).map_err(e)?))
    }
    fn encaps(&self, ek: &AnyKey, m: &[u8; 32], out: &mut Vec<u8>) -> Result<(), String> {
        let (ct, ss) = key::<pqkit::mlkem::EncapsulationKey<P>>(ek)?.encapsulate_deterministic(m);
        put(out, &[ct.as_bytes(), ss.as_bytes()]);
        Ok(())
    }
    fn decaps(&self, dk: &AnyKey, ct: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let ct = pqkit::mlkem::Ciphertext::<P>::from_bytes(ct).map_err(e)?;
        let ss = key::<pqkit::mlkem::DecapsulationKey<P>>(dk)?.decapsulate(&ct);
        put(out, &[ss.as_bytes()]);
        Ok(())
    }
}

/// pqkit's ML-DSA for the parameter set `P`.
#[cfg(feature = "pqkit-algs")]
struct PqSig<P>(PhantomData<fn() -> P>);

#[cfg(feature = "pqkit-algs")]
impl<P> Named for PqSig<P> {
    fn id(&self) -> Id {
        PQKIT
    }
}

#[cfg(feature = "pqkit-algs")]
impl<P> SigImpl for PqSig<P>
where
    P: pqkit::mldsa::Params,
    pqkit::mldsa::SigningKey<P>: Send + Sync,
    pqkit::mldsa::VerifyingKey<P>: Send + Sync,
{
    fn keygen(&self, seed: &[u8; 32], vk: &mut Vec<u8>) -> Result<AnyKey, String> {
        let (sk, pk) = pqkit::mldsa::SigningKey::<P>::from_seed(seed);
        put(vk, &[pk.as_bytes()]);
        Ok(Box::new(sk))
    }
    fn parse_vk(&self, vk: &[u8]) -> Result<AnyKey, String> {
        Ok(Box::new(pqkit::mldsa::VerifyingKey::<P>::from_bytes(vk).map_err(e)?))
    }
    fn sign(&self, sk: &AnyKey, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let sig = key::<pqkit::mldsa::SigningKey<P>>(sk)?.sign_deterministic(msg, b"").map_err(e)?;
        put(out, &[sig.as_bytes()]);
        Ok(())
    }
    fn verify(&self, vk: &AnyKey, msg: &[u8], sig: &[u8]) -> Result<bool, String> {
        let sig = pqkit::mldsa::Signature::<P>::from_bytes(sig).map_err(e)?;
        Ok(key::<pqkit::mldsa::VerifyingKey<P>>(vk)?.verify(msg, b"", &sig).is_ok())
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

/// The ML-KEM implementations of one parameter set (512, 768 or 1024), pqkit first.
pub fn kem_impls_for(set: u32) -> Vec<Arc<dyn KemImpl>> {
    use aws_lc_rs::kem::{ML_KEM_512, ML_KEM_768, ML_KEM_1024};
    use lc_kem::{mlkem512, mlkem768, mlkem1024};
    use ml_kem::{EncapsulationKey, MlKem512, MlKem768, MlKem1024};
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn KemImpl>> = match set {
        512 => vec![
            Arc::new(RcKem::new(EncapsulationKey::<MlKem512>::encapsulate_deterministic)),
            Arc::new(LcKem {
                generate: mlkem512::generate_key_pair,
                encapsulate: mlkem512::encapsulate,
                decapsulate: mlkem512::decapsulate,
            }),
            Arc::new(AwsKem(&ML_KEM_512)),
            Arc::new(Ossl { alg: c"ML-KEM-512", out_len: 768 }),
        ],
        768 => vec![
            Arc::new(RcKem::new(EncapsulationKey::<MlKem768>::encapsulate_deterministic)),
            Arc::new(LcKem {
                generate: mlkem768::generate_key_pair,
                encapsulate: mlkem768::encapsulate,
                decapsulate: mlkem768::decapsulate,
            }),
            Arc::new(AwsKem(&ML_KEM_768)),
            Arc::new(Ossl { alg: c"ML-KEM-768", out_len: 1088 }),
        ],
        _ => vec![
            Arc::new(RcKem::new(EncapsulationKey::<MlKem1024>::encapsulate_deterministic)),
            Arc::new(LcKem {
                generate: mlkem1024::generate_key_pair,
                encapsulate: mlkem1024::encapsulate,
                decapsulate: mlkem1024::decapsulate,
            }),
            Arc::new(AwsKem(&ML_KEM_1024)),
            Arc::new(Ossl { alg: c"ML-KEM-1024", out_len: 1568 }),
        ],
    };
    #[cfg(feature = "pqkit-algs")]
    v.insert(
        0,
        match set {
            512 => Arc::new(PqKem::<pqkit::mlkem::MlKem512>(PhantomData)),
            768 => Arc::new(PqKem::<pqkit::mlkem::MlKem768>(PhantomData)),
            _ => Arc::new(PqKem::<pqkit::mlkem::MlKem1024>(PhantomData)),
        },
    );
    v
}

/// The ML-DSA implementations of one parameter set (44, 65 or 87), pqkit first.
pub fn sig_impls_for(set: u32) -> Vec<Arc<dyn SigImpl>> {
    use aws_lc_rs::signature as aws;
    use lc_dsa::{ml_dsa_44, ml_dsa_65, ml_dsa_87};
    #[allow(unused_mut)]
    let mut v: Vec<Arc<dyn SigImpl>> = match set {
        44 => vec![
            Arc::new(RcSig::<ml_dsa::MlDsa44>(PhantomData)),
            Arc::new(LcSig {
                generate: ml_dsa_44::generate_key_pair,
                sign: ml_dsa_44::sign,
                verify: ml_dsa_44::verify,
            }),
            Arc::new(AwsSig(&aws::ML_DSA_44_SIGNING, &aws::ML_DSA_44)),
            Arc::new(Ossl { alg: c"ML-DSA-44", out_len: 2420 }),
        ],
        65 => vec![
            Arc::new(RcSig::<ml_dsa::MlDsa65>(PhantomData)),
            Arc::new(LcSig {
                generate: ml_dsa_65::generate_key_pair,
                sign: ml_dsa_65::sign,
                verify: ml_dsa_65::verify,
            }),
            Arc::new(AwsSig(&aws::ML_DSA_65_SIGNING, &aws::ML_DSA_65)),
            Arc::new(Ossl { alg: c"ML-DSA-65", out_len: 3309 }),
        ],
        _ => vec![
            Arc::new(RcSig::<ml_dsa::MlDsa87>(PhantomData)),
            Arc::new(LcSig {
                generate: ml_dsa_87::generate_key_pair,
                sign: ml_dsa_87::sign,
                verify: ml_dsa_87::verify,
            }),
            Arc::new(AwsSig(&aws::ML_DSA_87_SIGNING, &aws::ML_DSA_87)),
            Arc::new(Ossl { alg: c"ML-DSA-87", out_len: 4627 }),
        ],
    };
    #[cfg(feature = "pqkit-algs")]
    v.insert(
        0,
        match set {
            44 => Arc::new(PqSig::<pqkit::mldsa::MlDsa44>(PhantomData)),
            65 => Arc::new(PqSig::<pqkit::mldsa::MlDsa65>(PhantomData)),
            _ => Arc::new(PqSig::<pqkit::mldsa::MlDsa87>(PhantomData)),
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

/// The timed "verify" operation of a signature row: a key pair from `seed`, one signature of `msg` made
/// outside the timing, then each operation verifies it against the parsed key (a rejection is an error).
pub(crate) fn verify_op(s: Arc<dyn SigImpl>, seed: &[u8; 32], msg: Vec<u8>) -> Result<Box<dyn Op>, String> {
    let mut vk = Vec::new();
    let sk = s.keygen(seed, &mut vk)?;
    let mut sig = Vec::new();
    s.sign(&sk, &msg, &mut sig)?;
    let vk = s.parse_vk(&vk)?;
    Ok(Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
        if s.verify(&vk, &msg, &sig)? {
            out.clear();
            Ok(())
        } else {
            Err("valid signature rejected".into())
        }
    }))
}

/// `base` with a counter XORed into its last 8 bytes: a different key for every keygen call (the first bytes
/// stay, so an elliptic-curve scalar stays below the group order).
#[inline]
pub(crate) fn next_key(base: &[u8; 32], counter: &mut u64) -> [u8; 32] {
    *counter = counter.wrapping_add(1);
    let mut k = *base;
    for (b, c) in k[24..].iter_mut().zip(counter.to_le_bytes()) {
        *b ^= c;
    }
    k
}

/// The rows `name`/`op` of an elliptic-curve signature scheme for each of `ops` ("keygen", "sign", "verify"):
/// keygen from a fresh key per call ([`next_key`] of [`DSA_SEED`]), sign and verify under the key of
/// [`DSA_SEED`] over a fixed [`MSG_LEN`]-byte message; checked by [`sig_check`]. The implementations named in
/// `no_keygen` get no keygen candidate.
pub(crate) fn curve_sig_rows(
    name: &str,
    ops: &[&'static str],
    impls: &[Arc<dyn SigImpl>],
    no_keygen: &[&str],
) -> Vec<Algorithm> {
    let mut algs = Vec::new();
    for &op in ops {
        let list = impls.to_vec();
        let check = Check::Custom(Box::new(move || sig_check(&list)));
        let len = if op == "keygen" { 0 } else { MSG_LEN };
        let mut alg = Algorithm::public_key(name, op, len, check).reports(&[crate::registry::Report::A]);
        for s in impls {
            if op == "keygen" && no_keygen.contains(&s.name()) {
                continue;
            }
            let s2 = s.clone();
            let setup = move |_size: usize| -> Result<Box<dyn Op>, String> {
                let s = s2.clone();
                let msg = crate::harness::input_bytes(MSG_LEN);
                Ok(match op {
                    "keygen" => {
                        let mut counter = 0u64;
                        Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| {
                            s.keygen(&next_key(&DSA_SEED, &mut counter), out).map(drop)
                        })
                    }
                    "sign" => {
                        let sk = s.keygen(&DSA_SEED, &mut Vec::new())?;
                        Box::new(move |_d: &mut [u8], out: &mut Vec<u8>| s.sign(&sk, &msg, out))
                    }
                    _ => verify_op(s, &DSA_SEED, msg)?,
                })
            };
            alg = alg.with(Candidate::new(s.name(), s.version(), setup));
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
                    _ => verify_op(s, &DSA_SEED, msg)?,
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
