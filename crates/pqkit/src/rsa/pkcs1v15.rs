//! RSASSA-PKCS1-v1_5 (RFC 8017 §8.2) signatures and RSAES-PKCS1-v1_5 (§7.2) encryption.
//!
//! Verification re-encodes the expected EMSA-PKCS1-v1_5 block and compares it with the recovered one (never
//! parses the recovered block). Decryption uses **implicit rejection** (draft-irtf-cfrg-rsa-guidance §7, as in
//! OpenSSL 3.2+): a ciphertext whose padding is invalid decrypts to a deterministic pseudo-random message
//! derived from the private exponent and the ciphertext, so a caller (and an attacker watching it) cannot tell
//! bad padding from a good one. The padding check and the selection run in constant time.

use alloc::vec;
use alloc::vec::Vec;
use zeroize::{Zeroize, Zeroizing};

use super::digest::{HashAlg, ct_eq_mask, ct_lt_mask, ct_select};
use super::{RsaPrivateKey, RsaPublicKey};
use crate::error::{Error, Result};
use crate::hash::sha2::Sha256;
use crate::mac::Hmac;

const SIG: &str = "RSASSA-PKCS1-v1_5";
const ENC: &str = "RSAES-PKCS1-v1_5";

fn sig_bad() -> Error {
    Error::AuthenticationFailed { algorithm: SIG }
}

/// The DER prefix of DigestInfo for `hash` (RFC 8017 §9.2 note 1), or an error for hashes not used here.
fn digest_info_prefix(hash: HashAlg) -> Result<[u8; 19]> {
    let (oid_last, h_len) = match hash {
        HashAlg::Sha256 => (0x01, 32),
        HashAlg::Sha384 => (0x02, 48),
        HashAlg::Sha512 => (0x03, 64),
        HashAlg::Sha224 => (0x04, 28),
        HashAlg::Sha512_224 => (0x05, 28),
        HashAlg::Sha512_256 => (0x06, 32),
        _ => {
            return Err(Error::InvalidParameter {
                algorithm: SIG,
                reason: "hash must be SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224 or SHA-512/256",
            });
        }
    };
    // SEQUENCE { SEQUENCE { OID 2.16.840.1.101.3.4.2.x, NULL }, OCTET STRING (h_len) }
    Ok([
        0x30,
        0x11 + h_len,
        0x30,
        0x0d,
        0x06,
        0x09,
        0x60,
        0x86,
        0x48,
        0x01,
        0x65,
        0x03,
        0x04,
        0x02,
        oid_last,
        0x05,
        0x00,
        0x04,
        h_len,
    ])
}

/// EMSA-PKCS1-v1_5-ENCODE (RFC 8017 §9.2) of a digest into `k` bytes.
fn emsa_encode(hash: HashAlg, digest: &[u8], k: usize) -> Result<Vec<u8>> {
    let prefix = digest_info_prefix(hash)?;
    let h_len = hash.output_len();
    if digest.len() != h_len {
        return Err(Error::length(SIG, "digest", h_len, digest.len()));
    }
    let t_len = prefix.len() + h_len;
    if k < t_len + 11 {
        return Err(Error::InvalidParameter { algorithm: SIG, reason: "modulus too short for this hash" });
    }
    let mut em = vec![0xffu8; k];
    em[0] = 0x00;
    em[1] = 0x01;
    em[k - t_len - 1] = 0x00;
    em[k - t_len..k - h_len].copy_from_slice(&prefix);
    em[k - h_len..].copy_from_slice(digest);
    Ok(em)
}

/// Signs the digest `digest` of `hash`.
pub fn sign_prehashed(key: &RsaPrivateKey, hash: HashAlg, digest: &[u8]) -> Result<Vec<u8>> {
    let public = key.public_key();
    if public.bits() < 2048 {
        return Err(Error::InvalidParameter {
            algorithm: SIG,
            reason: "signing needs a modulus of at least 2048 bits",
        });
    }
    let em = emsa_encode(hash, digest, public.size())?;
    Ok(key.raw_private(&em)?.to_vec())
}

/// Verifies `sig` over the digest `digest` of `hash`.
pub fn verify_prehashed(key: &RsaPublicKey, hash: HashAlg, digest: &[u8], sig: &[u8]) -> Result<()> {
    let k = key.size();
    if sig.len() != k {
        return Err(Error::length(SIG, "signature", k, sig.len()));
    }
    let expected = emsa_encode(hash, digest, k)?;
    let em = key.raw_public(sig).map_err(|_| sig_bad())?;
    if crate::ct::eq(&em, &expected) { Ok(()) } else { Err(sig_bad()) }
}

/// An RSASSA-PKCS1-v1_5 signing key (private key and hash; deterministic signatures).
#[derive(Clone)]
pub struct SigningKey {
    key: RsaPrivateKey,
    hash: HashAlg,
}

impl core::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("pkcs1v15::SigningKey")
            .field("bits", &self.key.public_key().bits())
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A SHA-256 signer.
    pub fn new(key: RsaPrivateKey) -> Result<Self> {
        Self::with_hash(key, HashAlg::Sha256)
    }

    /// A signer with `hash` (SHA-256, SHA-384 or SHA-512; the modulus must have at least 2048 bits).
    pub fn with_hash(key: RsaPrivateKey, hash: HashAlg) -> Result<Self> {
        if !matches!(hash, HashAlg::Sha256 | HashAlg::Sha384 | HashAlg::Sha512) {
            return Err(Error::InvalidParameter {
                algorithm: SIG,
                reason: "signing hash must be SHA-256, SHA-384 or SHA-512",
            });
        }
        if key.public_key().bits() < 2048 {
            return Err(Error::InvalidParameter {
                algorithm: SIG,
                reason: "signing needs a modulus of at least 2048 bits",
            });
        }
        Ok(SigningKey { key, hash })
    }

    /// The private key.
    pub fn private_key(&self) -> &RsaPrivateKey {
        &self.key
    }

    /// The matching verifier.
    pub fn verifying_key(&self) -> VerifyingKey {
        VerifyingKey { key: self.key.public_key().clone(), hash: self.hash }
    }

    /// Signs `msg`.
    pub fn sign(&self, msg: &[u8]) -> Result<Vec<u8>> {
        sign_prehashed(&self.key, self.hash, &self.hash.digest(msg))
    }

    /// Signs `msg`. The signature is deterministic; `rng` is accepted for symmetry with the other signature
    /// APIs and is not used (the private operation draws its blinding from OS randomness).
    pub fn sign_with_rng<R: rand_core::CryptoRng + ?Sized>(&self, msg: &[u8], _rng: &mut R) -> Result<Vec<u8>> {
        self.sign(msg)
    }

    /// Signs a digest computed by the caller.
    pub fn sign_prehashed(&self, digest: &[u8]) -> Result<Vec<u8>> {
        sign_prehashed(&self.key, self.hash, digest)
    }
}

/// An RSASSA-PKCS1-v1_5 verifying key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    key: RsaPublicKey,
    hash: HashAlg,
}

impl VerifyingKey {
    /// A SHA-256 verifier.
    pub fn new(key: RsaPublicKey) -> Self {
        VerifyingKey { key, hash: HashAlg::Sha256 }
    }

    /// A verifier with `hash` (any SHA-2).
    pub fn with_hash(key: RsaPublicKey, hash: HashAlg) -> Self {
        VerifyingKey { key, hash }
    }

    /// The public key.
    pub fn public_key(&self) -> &RsaPublicKey {
        &self.key
    }

    /// Verifies `sig` over `msg`.
    pub fn verify(&self, msg: &[u8], sig: &[u8]) -> Result<()> {
        digest_info_prefix(self.hash)?;
        verify_prehashed(&self.key, self.hash, &self.hash.digest(msg), sig)
    }

    /// Verifies `sig` over a digest computed by the caller.
    pub fn verify_prehashed(&self, digest: &[u8], sig: &[u8]) -> Result<()> {
        verify_prehashed(&self.key, self.hash, digest, sig)
    }
}

// ---------------------------------------------------------------------------------------------------------------
// RSAES-PKCS1-v1_5

/// RSAES-PKCS1-v1_5 encryption of `msg` (at most k − 11 bytes) with padding from `rng`.
pub fn encrypt_with_rng<R: rand_core::CryptoRng + ?Sized>(
    key: &RsaPublicKey,
    msg: &[u8],
    rng: &mut R,
) -> Result<Vec<u8>> {
    let k = key.size();
    if msg.len() + 11 > k {
        return Err(Error::MessageTooLong { algorithm: ENC, max: (k - 11) as u64 });
    }
    let mut em = Zeroizing::new(vec![0u8; k]);
    em[1] = 0x02;
    let ps_end = k - msg.len() - 1;
    rng.fill_bytes(&mut em[2..ps_end]);
    for i in 2..ps_end {
        while em[i] == 0 {
            rng.fill_bytes(&mut em[i..i + 1]);
        }
    }
    em[k - msg.len()..].copy_from_slice(msg);
    key.raw_public(&em)
}

/// RSAES-PKCS1-v1_5 encryption of `msg` with padding from OS randomness.
#[cfg(feature = "std")]
pub fn encrypt(key: &RsaPublicKey, msg: &[u8]) -> Result<Vec<u8>> {
    encrypt_with_rng(key, msg, &mut super::digest::os_rng()?)
}

/// IRPRF(KDK, label, length) of draft-irtf-cfrg-rsa-guidance §7.1: HMAC-SHA-256(KDK, I || label || bitlen)
/// for I = 0, 1, ... (16-bit big-endian counter and bit length), truncated to `len` bytes.
fn irprf(kdk: &[u8; 32], label: &[u8], len: usize) -> Zeroizing<Vec<u8>> {
    let bit_len = ((len * 8) as u16).to_be_bytes();
    let mut out = Zeroizing::new(vec![0u8; len]);
    let mac = Hmac::<Sha256>::new(kdk);
    for (i, chunk) in out.chunks_mut(32).enumerate() {
        let mut m = mac.clone();
        m.update(&(i as u16).to_be_bytes()).update(label).update(&bit_len);
        let mut block = m.finalize();
        chunk.copy_from_slice(&block[..chunk.len()]);
        block.zeroize();
    }
    out
}

/// RSAES-PKCS1-v1_5 decryption with implicit rejection. Returns the message and (for tests only) an
/// all-ones mask when the padding was valid. Every step after the private operation is constant time.
fn decrypt_inner(key: &RsaPrivateKey, ciphertext: &[u8]) -> Result<(Zeroizing<Vec<u8>>, usize)> {
    let public = key.public_key();
    let k = public.size();
    if ciphertext.len() != k {
        return Err(Error::length(ENC, "ciphertext", k, ciphertext.len()));
    }
    // k ≥ 128 (bits ≥ 1024), so the 16-bit lengths below never overflow for k ≤ 1024 (8192 bits).
    let em = key.raw_private(ciphertext)?;

    // KDK = HMAC-SHA-256(key = SHA-256(I2OSP(d, k)), msg = C).
    // I2OSP(d, k) in constant time (the minimal encoding of `key.d()` would branch on d's leading zero bytes).
    let d_pad = key.d_padded();
    let mut dh = Sha256::digest(&d_pad);
    let mut kdk = Hmac::<Sha256>::new(&dh).mac(ciphertext);
    dh.zeroize();

    // Synthetic length: the last of 128 masked 16-bit candidates that is ≤ k − 11, else 0.
    let max_len = k - 11;
    let mut mask = max_len;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    let cl = irprf(&kdk, b"length", 256);
    let mut synth_len = 0usize;
    for c in cl.chunks_exact(2) {
        let cand = usize::from(u16::from_be_bytes([c[0], c[1]])) & mask;
        let ok = !ct_lt_mask(max_len, cand); // cand <= max_len
        synth_len = ct_select(ok, cand, synth_len);
    }
    let synth = irprf(&kdk, b"message", k);
    kdk.zeroize();

    // EM = 0x00 || 0x02 || PS (≥ 8 nonzero) || 0x00 || M, checked without branches.
    let mut good = ct_eq_mask(usize::from(em[0]), 0) & ct_eq_mask(usize::from(em[1]), 2);
    let mut found = 0usize; // all-ones once the separator is seen
    let mut sep = 0usize; // index of the first zero after the header
    for (i, &b) in em.iter().enumerate().skip(2) {
        let is_zero = ct_eq_mask(usize::from(b), 0);
        let first = is_zero & !found;
        sep = ct_select(first, i, sep);
        found |= is_zero;
    }
    good &= found;
    good &= !ct_lt_mask(sep, 10); // PS at least 8 bytes: separator at index ≥ 10
    let real_len = k.wrapping_sub(sep).wrapping_sub(1);
    let out_len = ct_select(good, real_len, synth_len);

    // Select the whole buffer, then reveal only the final (output) length.
    let sel = (good & 0xff) as u8;
    let mut buf = Zeroizing::new(vec![0u8; k]);
    for ((o, &e), &s) in buf.iter_mut().zip(em.iter()).zip(synth.iter()) {
        *o = (e & sel) | (s & !sel);
    }
    // The output's length is public: the caller receives a message of exactly this length. It was selected in
    // constant time between the real and the synthetic length, so revealing it does not branch on `good`: an
    // invalid padding gives a pseudo-random length that only the holder of d can predict.
    let out_len = crate::ct::declassify(out_len);
    let out = Zeroizing::new(buf[k - out_len..].to_vec());
    Ok((out, good))
}

/// RSAES-PKCS1-v1_5 decryption with implicit rejection: an invalid padding yields a deterministic
/// pseudo-random message, never an error. Errors only for public faults: a ciphertext that is not exactly
/// k bytes or not less than n, or a failed private operation.
pub fn decrypt(key: &RsaPrivateKey, ciphertext: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
    decrypt_inner(key, ciphertext).map(|(m, _)| m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_info_der() {
        // SHA-256 DigestInfo prefix of RFC 8017 §9.2 note 1.
        assert_eq!(
            digest_info_prefix(HashAlg::Sha256).unwrap(),
            [
                0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00,
                0x04, 0x20
            ]
        );
        assert_eq!(digest_info_prefix(HashAlg::Sha512).unwrap()[1], 0x51);
        assert_eq!(digest_info_prefix(HashAlg::Sha384).unwrap()[1], 0x41);
        assert!(digest_info_prefix(HashAlg::Sha1).is_err());
        let em = emsa_encode(HashAlg::Sha256, &[0xaa; 32], 256).unwrap();
        assert_eq!(&em[..3], &[0, 1, 0xff]);
        assert_eq!(em[256 - 52], 0);
        assert!(emsa_encode(HashAlg::Sha256, &[0xaa; 31], 256).is_err());
        assert!(emsa_encode(HashAlg::Sha512, &[0xaa; 64], 93).is_err());
    }
}
