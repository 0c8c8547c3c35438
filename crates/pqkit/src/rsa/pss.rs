//! RSASSA-PSS (RFC 8017 §8.1) with EMSA-PSS (§9.1) and MGF1.
//!
//! [`SigningKey`] signs with SHA-256, SHA-384 or SHA-512 (the same hash for the message and MGF1), salt length
//! equal to the hash length unless set with [`SigningKey::with_salt_len`]. [`VerifyingKey`] verifies with a
//! given hash, MGF1 hash and salt length (by default: the hash, the hash, and the hash length).

use alloc::vec;
use alloc::vec::Vec;
use zeroize::Zeroizing;

use super::digest::{HashAlg, mgf1_xor};
use super::{RsaPrivateKey, RsaPublicKey};
use crate::error::{Error, Result};

const ALG: &str = "RSASSA-PSS";

fn param(reason: &'static str) -> Error {
    Error::InvalidParameter { algorithm: ALG, reason }
}

fn bad() -> Error {
    Error::AuthenticationFailed { algorithm: ALG }
}

fn check_sign_hash(hash: HashAlg) -> Result<()> {
    match hash {
        HashAlg::Sha256 | HashAlg::Sha384 | HashAlg::Sha512 => Ok(()),
        _ => Err(param("signing hash must be SHA-256, SHA-384 or SHA-512")),
    }
}

/// EMSA-PSS-ENCODE (RFC 8017 §9.1.1) of the digest `m_hash` with `salt`, for a modulus of `mod_bits` bits.
/// Returns EM of ⌈(mod_bits − 1)/8⌉ bytes.
pub(crate) fn emsa_pss_encode(
    hash: HashAlg,
    mgf_hash: HashAlg,
    m_hash: &[u8],
    salt: &[u8],
    mod_bits: usize,
) -> Result<Vec<u8>> {
    let h_len = hash.output_len();
    if m_hash.len() != h_len {
        return Err(Error::length(ALG, "digest", h_len, m_hash.len()));
    }
    let em_bits = mod_bits - 1;
    let em_len = em_bits.div_ceil(8);
    if em_len < h_len + salt.len() + 2 {
        return Err(param("salt too long for this modulus and hash"));
    }
    let h = hash.digest_parts(&[&[0u8; 8], m_hash, salt]);
    let db_len = em_len - h_len - 1;
    let mut em = vec![0u8; em_len];
    // DB = PS || 0x01 || salt
    em[db_len - salt.len() - 1] = 0x01;
    em[db_len - salt.len()..db_len].copy_from_slice(salt);
    mgf1_xor(mgf_hash, &h, &mut em[..db_len]);
    em[0] &= 0xff >> (8 * em_len - em_bits);
    em[db_len..db_len + h_len].copy_from_slice(&h);
    em[em_len - 1] = 0xbc;
    Ok(em)
}

/// EMSA-PSS-VERIFY (RFC 8017 §9.1.2) of `em` (exactly ⌈(mod_bits − 1)/8⌉ bytes) against the digest `m_hash`.
/// `salt_len` = `None` accepts any salt length (recovered from the padding).
pub(crate) fn emsa_pss_verify(
    hash: HashAlg,
    mgf_hash: HashAlg,
    m_hash: &[u8],
    em: &[u8],
    salt_len: Option<usize>,
    mod_bits: usize,
) -> Result<()> {
    let h_len = hash.output_len();
    if m_hash.len() != h_len {
        return Err(Error::length(ALG, "digest", h_len, m_hash.len()));
    }
    let em_bits = mod_bits - 1;
    let em_len = em_bits.div_ceil(8);
    if em.len() != em_len || em_len < h_len + salt_len.unwrap_or(0) + 2 {
        return Err(bad());
    }
    if em[em_len - 1] != 0xbc {
        return Err(bad());
    }
    let db_len = em_len - h_len - 1;
    let top_mask = !(0xffu8 >> (8 * em_len - em_bits));
    if em[0] & top_mask != 0 {
        return Err(bad());
    }
    let h = &em[db_len..db_len + h_len];
    let mut db = em[..db_len].to_vec();
    mgf1_xor(mgf_hash, h, &mut db);
    db[0] &= !top_mask;
    // DB = PS (zeros) || 0x01 || salt
    let one = match db.iter().position(|&b| b != 0) {
        Some(i) if db[i] == 0x01 => i,
        _ => return Err(bad()),
    };
    let salt = &db[one + 1..];
    if salt_len.is_some_and(|s| salt.len() != s) {
        return Err(bad());
    }
    let h2 = hash.digest_parts(&[&[0u8; 8], m_hash, salt]);
    if h2.as_slice() != h {
        return Err(bad());
    }
    Ok(())
}

/// Signs the digest `m_hash` (of `hash`) with a fresh salt of `salt_len` bytes from `rng`.
pub fn sign_prehashed_with_rng<R: rand_core::CryptoRng + ?Sized>(
    key: &RsaPrivateKey,
    hash: HashAlg,
    salt_len: usize,
    m_hash: &[u8],
    rng: &mut R,
) -> Result<Vec<u8>> {
    sign_prehashed_salted(key, hash, salt_len, m_hash, |salt| {
        rng.fill_bytes(salt);
        Ok(())
    })
}

/// [`sign_prehashed_with_rng`] with the salt (`salt_len` bytes) written by `fill_salt` after the checks: from a
/// caller's generator, or straight from OS randomness (one `getrandom`, no generator to key and run).
fn sign_prehashed_salted(
    key: &RsaPrivateKey,
    hash: HashAlg,
    salt_len: usize,
    m_hash: &[u8],
    fill_salt: impl FnOnce(&mut [u8]) -> Result<()>,
) -> Result<Vec<u8>> {
    check_sign_hash(hash)?;
    let public = key.public_key();
    if public.bits() < 2048 {
        return Err(param("signing needs a modulus of at least 2048 bits"));
    }
    let mut salt = Zeroizing::new(vec![0u8; salt_len]);
    fill_salt(&mut salt)?;
    let em = emsa_pss_encode(hash, hash, m_hash, &salt, public.bits())?;
    let k = public.size();
    let mut padded = vec![0u8; k];
    padded[k - em.len()..].copy_from_slice(&em);
    let sig = key.raw_private(&padded)?;
    Ok(sig.to_vec())
}

/// Verifies `sig` over the digest `m_hash` with the given hashes and salt length (`None`: any salt length).
pub fn verify_prehashed(
    key: &RsaPublicKey,
    hash: HashAlg,
    mgf_hash: HashAlg,
    salt_len: Option<usize>,
    m_hash: &[u8],
    sig: &[u8],
) -> Result<()> {
    let k = key.size();
    if sig.len() != k {
        return Err(Error::length(ALG, "signature", k, sig.len()));
    }
    let m = key.raw_public(sig).map_err(|_| bad())?;
    let em_len = (key.bits() - 1).div_ceil(8);
    // When bits(n) − 1 is a multiple of 8 the encoded message is one byte shorter than k: that byte is zero.
    if m[..k - em_len].iter().any(|&b| b != 0) {
        return Err(bad());
    }
    emsa_pss_verify(hash, mgf_hash, m_hash, &m[k - em_len..], salt_len, key.bits())
}

/// An RSASSA-PSS signing key: a private key, the hash, and the salt length.
#[derive(Clone)]
pub struct SigningKey {
    key: RsaPrivateKey,
    hash: HashAlg,
    salt_len: usize,
}

impl core::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("pss::SigningKey")
            .field("bits", &self.key.public_key().bits())
            .field("hash", &self.hash)
            .field("salt_len", &self.salt_len)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A SHA-256 signer (salt length 32).
    pub fn new(key: RsaPrivateKey) -> Result<Self> {
        Self::with_hash(key, HashAlg::Sha256)
    }

    /// A signer with `hash` (SHA-256, SHA-384 or SHA-512; salt length = hash length). The modulus must have
    /// at least 2048 bits.
    pub fn with_hash(key: RsaPrivateKey, hash: HashAlg) -> Result<Self> {
        check_sign_hash(hash)?;
        if key.public_key().bits() < 2048 {
            return Err(param("signing needs a modulus of at least 2048 bits"));
        }
        Ok(SigningKey { key, hash, salt_len: hash.output_len() })
    }

    /// Sets the salt length in bytes (0 gives deterministic signatures).
    pub fn with_salt_len(mut self, salt_len: usize) -> Result<Self> {
        let em_len = (self.key.public_key().bits() - 1).div_ceil(8);
        if em_len < self.hash.output_len() + salt_len + 2 {
            return Err(param("salt too long for this modulus and hash"));
        }
        self.salt_len = salt_len;
        Ok(self)
    }

    /// The hash.
    pub fn hash(&self) -> HashAlg {
        self.hash
    }

    /// The salt length in bytes.
    pub fn salt_len(&self) -> usize {
        self.salt_len
    }

    /// The private key.
    pub fn private_key(&self) -> &RsaPrivateKey {
        &self.key
    }

    /// The matching verifier (same hash, same salt length).
    pub fn verifying_key(&self) -> VerifyingKey {
        VerifyingKey {
            key: self.key.public_key().clone(),
            hash: self.hash,
            mgf_hash: self.hash,
            salt_len: Some(self.salt_len),
        }
    }

    /// Signs `msg` with a salt from OS randomness.
    #[cfg(feature = "std")]
    pub fn sign(&self, msg: &[u8]) -> Result<Vec<u8>> {
        self.sign_prehashed(&self.hash.digest(msg))
    }

    /// Signs `msg` with a salt from `rng`.
    pub fn sign_with_rng<R: rand_core::CryptoRng + ?Sized>(&self, msg: &[u8], rng: &mut R) -> Result<Vec<u8>> {
        let d = self.hash.digest(msg);
        self.sign_prehashed_with_rng(&d, rng)
    }

    /// Signs a digest computed by the caller (its length must be the hash length), salt from OS randomness.
    #[cfg(feature = "std")]
    pub fn sign_prehashed(&self, digest: &[u8]) -> Result<Vec<u8>> {
        sign_prehashed_salted(&self.key, self.hash, self.salt_len, digest, crate::rng::fill_os)
    }

    /// Signs a digest computed by the caller, salt from `rng`.
    pub fn sign_prehashed_with_rng<R: rand_core::CryptoRng + ?Sized>(
        &self,
        digest: &[u8],
        rng: &mut R,
    ) -> Result<Vec<u8>> {
        sign_prehashed_with_rng(&self.key, self.hash, self.salt_len, digest, rng)
    }
}

/// An RSASSA-PSS verifying key: a public key, the hash, the MGF1 hash and the expected salt length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    key: RsaPublicKey,
    hash: HashAlg,
    mgf_hash: HashAlg,
    salt_len: Option<usize>,
}

impl VerifyingKey {
    /// A SHA-256 verifier (MGF1-SHA-256, salt length 32).
    pub fn new(key: RsaPublicKey) -> Self {
        Self::with_hash(key, HashAlg::Sha256)
    }

    /// A verifier with `hash` for the message and MGF1, salt length = hash length.
    pub fn with_hash(key: RsaPublicKey, hash: HashAlg) -> Self {
        VerifyingKey { key, hash, mgf_hash: hash, salt_len: Some(hash.output_len()) }
    }

    /// Sets the MGF1 hash (for interoperation with signers that use, e.g., MGF1-SHA-1).
    pub fn with_mgf_hash(mut self, mgf_hash: HashAlg) -> Self {
        self.mgf_hash = mgf_hash;
        self
    }

    /// Sets the expected salt length in bytes.
    pub fn with_salt_len(mut self, salt_len: usize) -> Self {
        self.salt_len = Some(salt_len);
        self
    }

    /// Accepts any salt length (RFC 8017 allows the verifier to recover it; prefer a fixed one).
    pub fn with_any_salt_len(mut self) -> Self {
        self.salt_len = None;
        self
    }

    /// The public key.
    pub fn public_key(&self) -> &RsaPublicKey {
        &self.key
    }

    /// Verifies `sig` over `msg`.
    pub fn verify(&self, msg: &[u8], sig: &[u8]) -> Result<()> {
        if self.hash == HashAlg::Sha1 {
            return Err(param("SHA-1 is not accepted as the signed digest"));
        }
        let d = self.hash.digest(msg);
        self.verify_prehashed(&d, sig)
    }

    /// Verifies `sig` over a digest computed by the caller.
    pub fn verify_prehashed(&self, digest: &[u8], sig: &[u8]) -> Result<()> {
        if self.hash == HashAlg::Sha1 {
            return Err(param("SHA-1 is not accepted as the signed digest"));
        }
        verify_prehashed(&self.key, self.hash, self.mgf_hash, self.salt_len, digest, sig)
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;

    #[test]
    fn encode_verify_roundtrip_and_rejections() {
        for bits in [1024usize, 1025, 1031, 1032, 2048] {
            let mh = HashAlg::Sha256.digest(b"abc");
            let salt = [7u8; 32];
            let em = emsa_pss_encode(HashAlg::Sha256, HashAlg::Sha256, &mh, &salt, bits).unwrap();
            assert_eq!(em.len(), (bits - 1).div_ceil(8));
            emsa_pss_verify(HashAlg::Sha256, HashAlg::Sha256, &mh, &em, Some(32), bits).unwrap();
            emsa_pss_verify(HashAlg::Sha256, HashAlg::Sha256, &mh, &em, None, bits).unwrap();
            assert!(emsa_pss_verify(HashAlg::Sha256, HashAlg::Sha256, &mh, &em, Some(31), bits).is_err());
            assert!(emsa_pss_verify(HashAlg::Sha256, HashAlg::Sha1, &mh, &em, Some(32), bits).is_err());
            let mh2 = HashAlg::Sha256.digest(b"abd");
            assert!(emsa_pss_verify(HashAlg::Sha256, HashAlg::Sha256, &mh2, &em, Some(32), bits).is_err());
            let mut e2 = em.clone();
            *e2.last_mut().unwrap() = 0xbd;
            assert!(emsa_pss_verify(HashAlg::Sha256, HashAlg::Sha256, &mh, &e2, Some(32), bits).is_err());
            let mut e3 = em.clone();
            e3[0] |= 0x80;
            assert!(emsa_pss_verify(HashAlg::Sha256, HashAlg::Sha256, &mh, &e3, Some(32), bits).is_err());
        }
        // Salt too long for the modulus.
        let mh = HashAlg::Sha512.digest(b"");
        assert!(emsa_pss_encode(HashAlg::Sha512, HashAlg::Sha512, &mh, &[0u8; 64], 256).is_err());
        // Wrong digest length.
        assert!(emsa_pss_encode(HashAlg::Sha256, HashAlg::Sha256, &mh, &[], 2048).is_err());
    }
}
