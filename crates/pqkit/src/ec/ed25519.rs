//! Ed25519 signatures (RFC 8032 §5.1): pure Ed25519, Ed25519ctx and Ed25519ph, with strict verification
//! and batch verification.
//!
//! ```
//! use pqkit::ec::ed25519::{Signature, SigningKey, VerifyingKey};
//! let sk = SigningKey::from_seed(&[42; 32]);
//! let sig = sk.sign(b"message");
//! let vk = VerifyingKey::from_bytes(sk.verifying_key().as_bytes()).unwrap();
//! assert!(vk.verify(b"message", &Signature::from_bytes(&sig.to_bytes()).unwrap()).is_ok());
//! assert!(vk.verify(b"massage", &sig).is_err());
//! ```
//!
//! ## Variants
//! - **Ed25519** ([`SigningKey::sign`], [`VerifyingKey::verify`]): the message as is, no domain prefix.
//! - **Ed25519ctx** ([`SigningKey::sign_ctx`], [`VerifyingKey::verify_ctx`]): a context of 1 to 255 bytes,
//!   bound into both hashes through `dom2(0, context)`. An empty context is refused ([`Error::InvalidLength`]):
//!   RFC 8032 §8.3 says it should not be empty, and an empty-context "Ed25519ctx" is a different signature
//!   from plain Ed25519 that some libraries silently turn into the latter; use [`SigningKey::sign`].
//! - **Ed25519ph** ([`SigningKey::sign_ph`], [`SigningKey::sign_prehashed`] and the `verify_*` twins): the
//!   SHA-512 hash of the message, with `dom2(1, context)`, context 0 to 255 bytes.
//!
//! A context over 255 bytes is [`Error::InvalidLength`].
//!
//! ## Verification rules
//! Verification is strict about encodings and **cofactored**:
//! - the signature's S must be below L ([`Signature::from_bytes`] refuses it otherwise), so a signature
//!   cannot be made into another valid one by adding L (malleability);
//! - A and R must be canonical encodings: y below p, and never "x = 0 with the sign bit set" (RFC 8032
//!   §5.1.3), and must decode to curve points;
//! - A and R must not be points of small order (order 1, 2, 4 or 8): with such an A anyone can forge, and
//!   such an R lets a signature verify under several keys or messages;
//! - the equation checked is the cofactored `8·S·B = 8·R + 8·k·A` (RFC 8032 §5.1.7), with
//!   k = SHA-512(dom2 ‖ R ‖ A ‖ M) mod L.
//!
//! Encoding failures are [`Error::InvalidEncoding`] (saying what was wrong), a failed equation is
//! [`Error::AuthenticationFailed`].
//!
//! *Why cofactored:* it is the equation under which batch verification ([`verify_batch`]) gives exactly the
//! verdict of one-by-one verification, which the batch API promises. The cofactorless equation
//! `S·B = R + k·A` (ed25519-dalek's `verify_strict`, Go, libsodium) can only differ from it on signatures
//! whose R or A has a torsion component yet is not of small order — which an honest signer never produces —
//! and a cofactorless batch check cannot be made consistent with one-by-one checks on exactly those. The
//! equation is evaluated without the SUF-CMA concern such components raise elsewhere: R is hashed into k, so
//! changing R's torsion part changes k.
//!
//! ## Batch verification
//! [`verify_batch`] checks `8·(−(Σ zᵢSᵢ)·B + Σ zᵢRᵢ + Σ zᵢkᵢAᵢ) = 0` with 128-bit coefficients zᵢ derived by
//! SHA-512 from the signatures checked together (every R, A, S and k), in one multi-scalar multiplication
//! per [`BATCH_CHUNK`] signatures (a fixed bound, so that the tables live on the stack and no allocation
//! is needed). A batch whose signatures all verify always passes; a batch with one that
//! does not passes with probability at most 2^−128 (the zᵢ are as good as random to anyone choosing the
//! signatures). The zᵢ are deterministic, so the same batch always gets the same verdict. The error does
//! not say which signature failed: verify them one by one for that.
//!
//! ## Batched key generation and signing
//! [`SigningKey::from_seeds_many`] makes many keys and [`sign_many`] signs many (key, message) pairs, with
//! exactly the bytes of [`SigningKey::from_seed`] and [`SigningKey::sign`]. The SHA-512 hashes (the seed
//! hashes; each signature's nonce hash H(prefix || M) and challenge hash H(R || A || M)) run together, one
//! message per 64-bit vector lane: eight in `zmm` registers with AVX-512, four in `ymm` with AVX2, one at a
//! time elsewhere. The fixed-base multiplications (A = s·B, R = r·B) run together too; the scalar arithmetic
//! runs per item. What runs where for the multiplications (chosen once per call by the dispatch mechanism,
//! `PQKIT_CPU` caps it):
//! - AVX-512 IFMA: eight multiplications side by side in the 64-bit lanes of `zmm` registers (radix 2^52,
//!   the signed radix-16 digits of the one-at-a-time code over its tables of j·256^i·B and j·16·256^i·B, 64
//!   additions, each lane's table entry chosen by a masked scan of the whole row), and up to 64 results made affine with one shared field inversion
//!   (Montgomery's trick). A tail of fewer than eight fills the spare lanes with the scalar 0.
//! - Other CPUs: each item through the one-at-a-time code (its own inversion).
//!
//! ## Constant time
//! Key generation and signing use only constant-time code on secrets: the fixed-base multiplication with
//! masked table look-ups, constant-time scalar arithmetic modulo L, SHA-512. Verification works on public
//! data and uses variable-time multi-scalar multiplication.
//!
//! ## Key files
//! With the `alloc` feature: [`SigningKey::to_pkcs8_pem`], [`VerifyingKey::from_public_key_pem`] and the DER
//! twins (PKCS#8 and SubjectPublicKeyInfo, RFC 8410); see [`super::encoding`].

use super::curve25519::scalar::{self, Scalar};
use super::curve25519::{self, Affine, Backend};
#[cfg(feature = "alloc")]
use super::curve25519::{multi, multi_ed};
use crate::dispatch::Checked;
use crate::hash::sha2::Sha512;
#[cfg(feature = "alloc")]
use crate::hash::sha2::multi as sha2_multi;
use crate::{Error, Result};
use core::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Seed (secret key) length in bytes.
pub const SEED_LEN: usize = 32;
/// Public key length in bytes.
pub const PUBLIC_KEY_LEN: usize = 32;
/// Signature length in bytes.
pub const SIGNATURE_LEN: usize = 64;
/// Largest context, in bytes.
pub const MAX_CONTEXT_LEN: usize = 255;
/// Signatures per multi-scalar multiplication in [`verify_batch`].
pub const BATCH_CHUNK: usize = curve25519::BATCH_CHUNK;

/// Which RFC 8032 algorithm: selects the domain prefix and the name in errors.
#[derive(Clone, Copy)]
enum Variant<'a> {
    Pure,
    Ctx(&'a [u8]),
    Ph(&'a [u8]),
}

impl<'a> Variant<'a> {
    fn name(self) -> &'static str {
        match self {
            Variant::Pure => "Ed25519",
            Variant::Ctx(_) => "Ed25519ctx",
            Variant::Ph(_) => "Ed25519ph",
        }
    }

    /// Checks the context length.
    fn check(self) -> Result<Self> {
        let name = self.name();
        match self {
            Variant::Pure => Ok(self),
            Variant::Ctx([]) => Err(Error::InvalidLength {
                algorithm: name,
                field: "context",
                expected: crate::error::Expected::AtLeast(1),
                actual: 0,
            }),
            Variant::Ctx(c) | Variant::Ph(c) if c.len() > MAX_CONTEXT_LEN => Err(Error::InvalidLength {
                algorithm: name,
                field: "context",
                expected: crate::error::Expected::AtMost(MAX_CONTEXT_LEN),
                actual: c.len(),
            }),
            _ => Ok(self),
        }
    }

    /// A SHA-512 state with dom2(phflag, context) absorbed (nothing for pure Ed25519).
    fn hasher(self) -> Sha512 {
        let mut h = Sha512::new();
        let (flag, ctx) = match self {
            Variant::Pure => return h,
            Variant::Ctx(c) => (0u8, c),
            Variant::Ph(c) => (1u8, c),
        };
        h.update(b"SigEd25519 no Ed25519 collisions").update(&[flag, ctx.len() as u8]).update(ctx);
        h
    }
}

/// SHA-512 of `msg`: the message Ed25519ph signs.
fn prehash(msg: &[u8]) -> [u8; 64] {
    Sha512::digest(msg)
}

/// Maps a point-decoding failure of the field `which` ("public key" or "signature R") to its error.
fn decode_error(algorithm: &'static str, which: Part, reason: &'static str) -> Error {
    let reason = match (which, reason) {
        (Part::A, r) if r.contains("y >= p") => "public key: non-canonical encoding (y >= p)",
        (Part::A, r) if r.contains("x = 0") => "public key: non-canonical encoding (x = 0 with the sign bit set)",
        (Part::A, r) if r.contains("small order") => "public key: point of small order",
        (Part::A, _) => "public key: not a point on the curve",
        (Part::R, r) if r.contains("y >= p") => "signature R: non-canonical encoding (y >= p)",
        (Part::R, r) if r.contains("x = 0") => "signature R: non-canonical encoding (x = 0 with the sign bit set)",
        (Part::R, r) if r.contains("small order") => "signature R: point of small order",
        (Part::R, _) => "signature R: not a point on the curve",
    };
    Error::InvalidEncoding { algorithm, reason }
}

#[derive(Clone, Copy)]
enum Part {
    A,
    R,
}

/// An Ed25519 signature: R (32 bytes) ‖ S (32 bytes, below L).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Signature {
    bytes: [u8; 64],
}

impl Signature {
    /// Parses a signature: exactly 64 bytes ([`Error::InvalidLength`]) with S below the group order L
    /// ([`Error::InvalidEncoding`]). R is checked by verification.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Error::check_length("Ed25519", "signature", SIGNATURE_LEN, bytes.len())?;
        let mut s = [0u8; 32];
        s.copy_from_slice(&bytes[32..]);
        if !scalar::is_canonical(&s) {
            return Err(Error::InvalidEncoding {
                algorithm: "Ed25519",
                reason: "signature S is not below the group order L",
            });
        }
        let mut b = [0u8; 64];
        b.copy_from_slice(bytes);
        Ok(Signature { bytes: b })
    }

    /// The encoded signature.
    pub fn to_bytes(&self) -> [u8; 64] {
        self.bytes
    }

    /// The encoded signature.
    pub fn as_bytes(&self) -> &[u8; 64] {
        &self.bytes
    }

    fn r(&self) -> [u8; 32] {
        let mut r = [0u8; 32];
        r.copy_from_slice(&self.bytes[..32]);
        r
    }

    fn s(&self) -> Scalar {
        let mut s = [0u8; 32];
        s.copy_from_slice(&self.bytes[32..]);
        match Scalar::from_canonical_bytes(&s) {
            Some(s) => s,
            // from_bytes and signing only ever make canonical S.
            None => unreachable!("Signature holds a canonical S"),
        }
    }
}

impl AsRef<[u8]> for Signature {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Signature(")?;
        for b in &self.bytes {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// An Ed25519 public key, checked on parsing: canonical, on the curve, not of small order.
#[derive(Clone, Copy)]
pub struct VerifyingKey {
    bytes: [u8; 32],
    point: Affine,
    backend: Checked<Backend>,
}

impl VerifyingKey {
    /// Parses a public key: exactly 32 bytes ([`Error::InvalidLength`]); a canonical encoding of a curve
    /// point that is not of small order ([`Error::InvalidEncoding`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_backend(Backend::detect(), bytes)
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(backend: Checked<Backend>, bytes: &[u8]) -> Result<Self> {
        Error::check_length("Ed25519", "public key", PUBLIC_KEY_LEN, bytes.len())?;
        let mut b = [0u8; 32];
        b.copy_from_slice(bytes);
        let point = curve25519::decode(backend, &b, true).map_err(|r| decode_error("Ed25519", Part::A, r))?;
        Ok(VerifyingKey { bytes: b, point, backend })
    }

    /// The encoded key.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.bytes
    }

    /// The encoded key.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.bytes
    }

    /// Verifies an Ed25519 signature on `msg`.
    pub fn verify(&self, msg: &[u8], sig: &Signature) -> Result<()> {
        self.verify_variant(Variant::Pure, &[msg], sig)
    }

    /// Verifies an Ed25519ctx signature on `msg` under `context` (1 to 255 bytes).
    pub fn verify_ctx(&self, msg: &[u8], context: &[u8], sig: &Signature) -> Result<()> {
        self.verify_variant(Variant::Ctx(context).check()?, &[msg], sig)
    }

    /// Verifies an Ed25519ph signature on `msg` (hashed here with SHA-512) under `context` (0 to 255 bytes).
    pub fn verify_ph(&self, msg: &[u8], context: &[u8], sig: &Signature) -> Result<()> {
        let v = Variant::Ph(context).check()?;
        self.verify_variant(v, &[&prehash(msg)], sig)
    }

    /// Verifies an Ed25519ph signature given the SHA-512 hash of the message.
    pub fn verify_prehashed(&self, digest: &[u8; 64], context: &[u8], sig: &Signature) -> Result<()> {
        self.verify_variant(Variant::Ph(context).check()?, &[digest], sig)
    }

    /// k = SHA-512(dom2 ‖ R ‖ A ‖ M) mod L.
    fn challenge(&self, v: Variant<'_>, r: &[u8; 32], msg: &[&[u8]]) -> Scalar {
        let mut h = v.hasher();
        h.update(r).update(&self.bytes);
        for m in msg {
            h.update(m);
        }
        Scalar::from_bytes_wide(&h.finalize())
    }

    fn verify_variant(&self, v: Variant<'_>, msg: &[&[u8]], sig: &Signature) -> Result<()> {
        let r_bytes = sig.r();
        let r = curve25519::decode(self.backend, &r_bytes, true).map_err(|e| decode_error(v.name(), Part::R, e))?;
        let k = self.challenge(v, &r_bytes, msg);
        if curve25519::verify_cofactored(self.backend, &self.point, &r, &k, &sig.s()) {
            Ok(())
        } else {
            Err(Error::AuthenticationFailed { algorithm: v.name() })
        }
    }
}

impl PartialEq for VerifyingKey {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}
impl Eq for VerifyingKey {}

impl AsRef<[u8]> for VerifyingKey {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("VerifyingKey(")?;
        for b in &self.bytes {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// An Ed25519 signing key: the 32-byte seed and what RFC 8032 §5.1.5 derives from it (the secret scalar
/// s and the nonce prefix). Zeroized on drop; `Debug` prints nothing of it.
#[derive(Clone)]
pub struct SigningKey {
    seed: [u8; 32],
    /// s mod L.
    s: Scalar,
    /// The second half of SHA-512(seed), hashed with the message into the nonce.
    prefix: [u8; 32],
    public: VerifyingKey,
}

impl SigningKey {
    /// A fresh key: a 32-byte seed from `rng`.
    pub fn generate<R: rand_core::CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let k = Self::from_seed(&seed);
        seed.zeroize();
        k
    }

    /// The key for a 32-byte seed (RFC 8032's "private key").
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        Self::from_seed_with_backend(Backend::detect(), seed)
    }

    /// The key for a seed given as a slice ([`Error::InvalidLength`] unless 32 bytes).
    pub fn from_bytes(seed: &[u8]) -> Result<Self> {
        Error::check_length("Ed25519", "seed", SEED_LEN, seed.len())?;
        let mut s = [0u8; 32];
        s.copy_from_slice(seed);
        let k = Self::from_seed(&s);
        s.zeroize();
        Ok(k)
    }

    /// As [`from_seed`](Self::from_seed) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_seed_with_backend(backend: Checked<Backend>, seed: &[u8; 32]) -> Self {
        let mut h = Sha512::digest(seed);
        let mut a = [0u8; 32];
        a.copy_from_slice(&h[..32]);
        a[0] &= 248;
        a[31] &= 127;
        a[31] |= 64;
        let mut prefix = [0u8; 32];
        prefix.copy_from_slice(&h[32..]);
        // A = s·B; its affine form is kept for verification. (s is a multiple of 8 below 2^255 and B has
        // prime order L, so A is never of small order.)
        let (bytes, point) = curve25519::mul_base_affine(backend, &a);
        let s = Scalar::from_bytes_mod_order(&a);
        a.zeroize();
        h.zeroize();
        SigningKey { seed: *seed, s, prefix, public: VerifyingKey { bytes, point, backend } }
    }

    /// The keys for many seeds at once: `keys[i]` is [`from_seed`](Self::from_seed)`(&seeds[i])`, the same
    /// key byte for byte (public key included), for a server that mints many keys.
    ///
    /// The seed hashes run together, eight side by side in the lanes of `zmm` registers with AVX-512 (four in
    /// `ymm` with AVX2). So do the fixed-base multiplications A = s·B: on CPUs with AVX-512 IFMA, eight of them
    /// side by side in the lanes of one comb and up to 64 public keys sharing one field inversion; elsewhere
    /// each key runs through the one-at-a-time code. Constant time in
    /// the seeds, as `from_seed` is (see the [module docs](self#batched-key-generation-and-signing)).
    ///
    /// ```
    /// use pqkit::ec::ed25519::SigningKey;
    /// let seeds: Vec<[u8; 32]> = (0..10u8).map(|i| [i; 32]).collect();
    /// let keys = SigningKey::from_seeds_many(&seeds);
    /// for (key, seed) in keys.iter().zip(&seeds) {
    ///     assert_eq!(key.verifying_key(), SigningKey::from_seed(seed).verifying_key());
    /// }
    /// ```
    #[cfg(feature = "alloc")]
    pub fn from_seeds_many(seeds: &[[u8; 32]]) -> alloc::vec::Vec<SigningKey> {
        Self::from_seeds_many_with_backend(multi::Backend::detect(), seeds)
    }

    /// As [`from_seeds_many`](Self::from_seeds_many) with a forced batch backend, for tests and benchmarks.
    #[cfg(feature = "alloc")]
    #[doc(hidden)]
    pub fn from_seeds_many_with_backend(
        backend: Checked<multi::Backend>,
        seeds: &[[u8; 32]],
    ) -> alloc::vec::Vec<SigningKey> {
        let mut keys = alloc::vec::Vec::with_capacity(seeds.len());
        let single = Backend::detect();
        let mut a = [[0u8; 32]; multi::CHUNK];
        let mut prefix = [[0u8; 32]; multi::CHUNK];
        let mut out = [([0u8; 32], Affine { x: [0; 32], y: [0; 32] }); multi::CHUNK];
        let mut h = [[0u8; 64]; multi::CHUNK];
        for group in seeds.chunks(multi::CHUNK) {
            let n = group.len();
            // The seed hashes of the whole group together, one seed per vector lane where the CPU has them.
            let mut parts: [[&[u8]; 1]; multi::CHUNK] = [[&[]]; multi::CHUNK];
            for (p, seed) in parts.iter_mut().zip(group) {
                p[0] = seed;
            }
            let msgs: [&[&[u8]]; multi::CHUNK] = core::array::from_fn(|i| &parts[i][..]);
            sha2_multi::sha512_many(&msgs[..n], &mut h[..n]);
            for i in 0..n {
                a[i].copy_from_slice(&h[i][..32]);
                a[i][0] &= 248;
                a[i][31] &= 127;
                a[i][31] |= 64;
                prefix[i].copy_from_slice(&h[i][32..]);
            }
            multi_ed::mul_base_many(backend, &a[..n], &mut out[..n]);
            for (i, seed) in group.iter().enumerate() {
                let (bytes, point) = out[i];
                keys.push(SigningKey {
                    seed: *seed,
                    s: Scalar::from_bytes_mod_order(&a[i]),
                    prefix: prefix[i],
                    public: VerifyingKey { bytes, point, backend: single },
                });
            }
        }
        a.zeroize();
        prefix.zeroize();
        // The rows used (a call of a few seeds does not pay for wiping all 64).
        for x in h.iter_mut().take(seeds.len()) {
            crate::ct::wipe(x);
        }
        keys
    }

    /// The 32-byte seed (secret).
    pub fn to_seed(&self) -> [u8; 32] {
        self.seed
    }

    /// The public key.
    pub fn verifying_key(&self) -> VerifyingKey {
        self.public
    }

    /// Signs `msg` with Ed25519 (deterministic).
    pub fn sign(&self, msg: &[u8]) -> Signature {
        self.sign_variant(Variant::Pure, &[msg])
    }

    /// Signs `msg` with Ed25519ctx under `context` (1 to 255 bytes).
    pub fn sign_ctx(&self, msg: &[u8], context: &[u8]) -> Result<Signature> {
        Ok(self.sign_variant(Variant::Ctx(context).check()?, &[msg]))
    }

    /// Signs `msg` with Ed25519ph (the message is hashed here with SHA-512) under `context` (0 to 255 bytes).
    pub fn sign_ph(&self, msg: &[u8], context: &[u8]) -> Result<Signature> {
        let v = Variant::Ph(context).check()?;
        Ok(self.sign_variant(v, &[&prehash(msg)]))
    }

    /// Signs with Ed25519ph given the SHA-512 hash of the message.
    pub fn sign_prehashed(&self, digest: &[u8; 64], context: &[u8]) -> Result<Signature> {
        Ok(self.sign_variant(Variant::Ph(context).check()?, &[digest]))
    }

    /// RFC 8032 §5.1.6.
    fn sign_variant(&self, v: Variant<'_>, msg: &[&[u8]]) -> Signature {
        let backend = self.public.backend;
        let mut h = v.hasher();
        h.update(&self.prefix);
        for m in msg {
            h.update(m);
        }
        let mut rh = h.finalize();
        let mut r = Scalar::from_bytes_wide(&rh);
        let mut r_bytes = r.to_bytes();
        let big_r = curve25519::mul_base_compressed(backend, &r_bytes);
        let k = self.public.challenge(v, &big_r, msg);
        let s = k.mul_add(&self.s, &r);
        let mut bytes = [0u8; 64];
        bytes[..32].copy_from_slice(&big_r);
        bytes[32..].copy_from_slice(&s.to_bytes());
        rh.zeroize();
        r.zeroize();
        r_bytes.zeroize();
        Signature { bytes }
    }
}

impl Zeroize for SigningKey {
    fn zeroize(&mut self) {
        self.seed.zeroize();
        self.s.zeroize();
        self.prefix.zeroize();
    }
}

impl Drop for SigningKey {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl ZeroizeOnDrop for SigningKey {}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningKey { .. }")
    }
}

/// Signs many messages at once with Ed25519 (pure): `signatures[i]` is `items[i].0.sign(items[i].1)`, the
/// same bytes. The keys may all differ or all be one.
///
/// The nonce and challenge hashes run together, eight messages side by side in the lanes of `zmm` registers
/// with AVX-512 (four in `ymm` with AVX2); so do the fixed-base multiplications R = r·B, eight side by side in
/// the lanes of one comb on CPUs with AVX-512 IFMA (up to 64 sharing one field inversion), one at a time
/// elsewhere. The scalar arithmetic runs per item. Constant time in the keys and nonces, as
/// [`SigningKey::sign`] is.
///
/// ```
/// use pqkit::ec::ed25519::{self, SigningKey};
/// let key = SigningKey::from_seed(&[42; 32]);
/// let messages: Vec<Vec<u8>> = (0..10u8).map(|i| vec![i; 100]).collect();
/// let items: Vec<(&SigningKey, &[u8])> = messages.iter().map(|m| (&key, m.as_slice())).collect();
/// let signatures = ed25519::sign_many(&items);
/// for (sig, m) in signatures.iter().zip(&messages) {
///     assert_eq!(sig, &key.sign(m));
/// }
/// ```
#[cfg(feature = "alloc")]
pub fn sign_many(items: &[(&SigningKey, &[u8])]) -> alloc::vec::Vec<Signature> {
    sign_many_with_backend(multi::Backend::detect(), items)
}

/// As [`sign_many`] with a forced batch backend, for tests and benchmarks.
#[cfg(feature = "alloc")]
#[doc(hidden)]
pub fn sign_many_with_backend(
    backend: Checked<multi::Backend>,
    items: &[(&SigningKey, &[u8])],
) -> alloc::vec::Vec<Signature> {
    let mut sigs = alloc::vec::Vec::with_capacity(items.len());
    let mut r = [Scalar::ZERO; multi::CHUNK];
    let mut r_bytes = [[0u8; 32]; multi::CHUNK];
    let mut out = [([0u8; 32], Affine { x: [0; 32], y: [0; 32] }); multi::CHUNK];
    let mut rh = [[0u8; 64]; multi::CHUNK];
    let mut kh = [[0u8; 64]; multi::CHUNK];
    for group in items.chunks(multi::CHUNK) {
        let n = group.len();
        // RFC 8032 §5.1.6 steps 2 to 4 for the whole group: the nonce hashes H(prefix || M) together (one message
        // per vector lane where the CPU has them), the multiplications R = r·B together, then the challenge
        // hashes H(R || A || M) together.
        let mut parts: [[&[u8]; 3]; multi::CHUNK] = [[&[]; 3]; multi::CHUNK];
        for (p, (sk, msg)) in parts.iter_mut().zip(group) {
            *p = [&sk.prefix[..], msg, &[]];
        }
        let msgs: [&[&[u8]]; multi::CHUNK] = core::array::from_fn(|i| &parts[i][..2]);
        sha2_multi::sha512_many(&msgs[..n], &mut rh[..n]);
        for i in 0..n {
            r[i] = Scalar::from_bytes_wide(&rh[i]);
            r_bytes[i] = r[i].to_bytes();
        }
        multi_ed::mul_base_many(backend, &r_bytes[..n], &mut out[..n]);
        for (p, ((sk, msg), o)) in parts.iter_mut().zip(group.iter().zip(&out)) {
            *p = [&o.0[..], &sk.public.bytes[..], msg];
        }
        let msgs: [&[&[u8]]; multi::CHUNK] = core::array::from_fn(|i| &parts[i][..]);
        sha2_multi::sha512_many(&msgs[..n], &mut kh[..n]);
        for (i, (sk, _)) in group.iter().enumerate() {
            let big_r = out[i].0;
            let k = Scalar::from_bytes_wide(&kh[i]);
            let s = k.mul_add(&sk.s, &r[i]);
            let mut bytes = [0u8; 64];
            bytes[..32].copy_from_slice(&big_r);
            bytes[32..].copy_from_slice(&s.to_bytes());
            sigs.push(Signature { bytes });
        }
    }
    for ri in r.iter_mut() {
        ri.zeroize();
    }
    r_bytes.zeroize();
    for x in rh.iter_mut().take(items.len()) {
        crate::ct::wipe(x);
    }
    sigs
}

/// Verifies many Ed25519 (pure) signatures at once: `Ok(())` only if every one verifies, else the first
/// encoding error ([`Error::InvalidEncoding`]) or [`Error::AuthenticationFailed`] (without saying which
/// signature failed). See the [module docs](self#batch-verification) for the method and its guarantee.
/// An empty batch is `Ok(())`.
pub fn verify_batch(items: &[(&VerifyingKey, &[u8], &Signature)]) -> Result<()> {
    let Some(first) = items.first() else { return Ok(()) };
    let backend = first.0.backend;
    const NO_POINT: Affine = Affine { x: [0; 32], y: [0; 32] };
    for chunk in items.chunks(BATCH_CHUNK) {
        // Decode every R and compute every k, binding all of them into the seed of the coefficients.
        let mut rs = [NO_POINT; BATCH_CHUNK];
        let mut ks = [Scalar::ZERO; BATCH_CHUNK];
        let mut transcript = Sha512::new();
        transcript.update(b"pqkit Ed25519 batch verification v1").update(&(chunk.len() as u64).to_le_bytes());
        for (j, (vk, msg, sig)) in chunk.iter().enumerate() {
            let r_bytes = sig.r();
            rs[j] = curve25519::decode(backend, &r_bytes, true).map_err(|e| decode_error("Ed25519", Part::R, e))?;
            ks[j] = vk.challenge(Variant::Pure, &r_bytes, &[msg]);
            transcript.update(&sig.bytes).update(&vk.bytes).update(&ks[j].to_bytes());
        }
        let seed = transcript.finalize();
        let mut terms = [(NO_POINT, Scalar::ZERO, NO_POINT, Scalar::ZERO); BATCH_CHUNK];
        let mut b = Scalar::ZERO;
        let mut zd = [0u8; 64];
        for (j, (vk, _, sig)) in chunk.iter().enumerate() {
            // Four 128-bit coefficients per SHA-512 output.
            if j % 4 == 0 {
                let mut zh = Sha512::new();
                zh.update(&seed).update(&(j as u64).to_le_bytes());
                zd = zh.finalize();
            }
            let mut z16 = [0u8; 32];
            z16[..16].copy_from_slice(&zd[16 * (j % 4)..16 * (j % 4) + 16]);
            let z = Scalar::from_bytes_mod_order(&z16);
            b = b.add(&z.mul(&sig.s()));
            terms[j] = (rs[j], z, vk.point, z.mul(&ks[j]));
        }
        if !curve25519::batch_equation(backend, &b.neg(), &terms[..chunk.len()]) {
            return Err(Error::AuthenticationFailed { algorithm: "Ed25519" });
        }
    }
    Ok(())
}
