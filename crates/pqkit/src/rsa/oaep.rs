//! RSAES-OAEP (RFC 8017 §7.1) with MGF1: SHA-256 by default; SHA-1, SHA-224, SHA-384, SHA-512, SHA-512/224
//! and SHA-512/256 for the label hash and (independently) MGF1; optional label.
//!
//! Decryption checks the padding in constant time and fails with one error for every kind of failure.

use alloc::vec;
use alloc::vec::Vec;
use zeroize::Zeroizing;

use super::digest::{HashAlg, ct_eq_mask, ct_select, mgf1_xor};
use super::{RsaPrivateKey, RsaPublicKey};
use crate::error::{Error, Result};

const ALG: &str = "RSAES-OAEP";

/// OAEP parameters: the label hash, the MGF1 hash and the label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Oaep {
    hash: HashAlg,
    mgf_hash: HashAlg,
    label: Vec<u8>,
}

impl Default for Oaep {
    fn default() -> Self {
        Self::new(HashAlg::Sha256)
    }
}

impl Oaep {
    /// `hash` for the label and MGF1, empty label.
    pub fn new(hash: HashAlg) -> Self {
        Oaep { hash, mgf_hash: hash, label: Vec::new() }
    }

    /// Sets the MGF1 hash (e.g. SHA-256 with MGF1-SHA-1, Java's default).
    pub fn with_mgf_hash(mut self, mgf_hash: HashAlg) -> Self {
        self.mgf_hash = mgf_hash;
        self
    }

    /// Sets the label.
    pub fn with_label(mut self, label: &[u8]) -> Self {
        self.label = label.to_vec();
        self
    }

    /// The longest message for a modulus of `k` bytes: k − 2·hLen − 2 (0 if the modulus is too short).
    pub fn max_message_len(&self, k: usize) -> usize {
        k.saturating_sub(2 * self.hash.output_len() + 2)
    }

    /// RSAES-OAEP-ENCRYPT of `msg` with a seed from `rng`.
    pub fn encrypt_with_rng<R: rand_core::CryptoRng + ?Sized>(
        &self,
        key: &RsaPublicKey,
        msg: &[u8],
        rng: &mut R,
    ) -> Result<Vec<u8>> {
        self.encrypt_seeded(key, msg, |seed| {
            rng.fill_bytes(seed);
            Ok(())
        })
    }

    /// RSAES-OAEP-ENCRYPT of `msg` with a seed from OS randomness, read straight into the encoded message (one
    /// `getrandom` of hLen bytes: no generator to key and run for them).
    #[cfg(feature = "std")]
    pub fn encrypt(&self, key: &RsaPublicKey, msg: &[u8]) -> Result<Vec<u8>> {
        self.encrypt_seeded(key, msg, crate::rng::fill_os)
    }

    /// RSAES-OAEP-ENCRYPT with the seed (hLen bytes, in place in the encoded message) written by `fill_seed`,
    /// after the parameter and length checks.
    fn encrypt_seeded(
        &self,
        key: &RsaPublicKey,
        msg: &[u8],
        fill_seed: impl FnOnce(&mut [u8]) -> Result<()>,
    ) -> Result<Vec<u8>> {
        let k = key.size();
        let h_len = self.hash.output_len();
        if k < 2 * h_len + 2 {
            return Err(Error::InvalidParameter { algorithm: ALG, reason: "modulus too short for this hash" });
        }
        if msg.len() > k - 2 * h_len - 2 {
            return Err(Error::MessageTooLong { algorithm: ALG, max: (k - 2 * h_len - 2) as u64 });
        }
        let mut em = Zeroizing::new(vec![0u8; k]);
        let (seed, db) = em[1..].split_at_mut(h_len);
        // DB = lHash || PS || 0x01 || M
        db[..h_len].copy_from_slice(&self.hash.digest(&self.label));
        let db_len = db.len();
        db[db_len - msg.len() - 1] = 0x01;
        db[db_len - msg.len()..].copy_from_slice(msg);
        fill_seed(seed)?;
        mgf1_xor(self.mgf_hash, seed, db);
        mgf1_xor(self.mgf_hash, db, seed);
        key.raw_public(&em)
    }

    /// RSAES-OAEP-DECRYPT. Every decoding failure gives the same error ("decryption error", RFC 8017 §7.1.2),
    /// and the decoding runs in constant time.
    pub fn decrypt(&self, key: &RsaPrivateKey, ciphertext: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
        let public = key.public_key();
        let k = public.size();
        let h_len = self.hash.output_len();
        let fail = Error::InvalidEncoding { algorithm: ALG, reason: "decryption error" };
        if ciphertext.len() != k || k < 2 * h_len + 2 {
            return Err(fail);
        }
        let mut em = key.raw_private(ciphertext).map_err(|_| fail.clone())?;
        let y = em[0];
        let (seed, db) = em[1..].split_at_mut(h_len);
        mgf1_xor(self.mgf_hash, db, seed);
        mgf1_xor(self.mgf_hash, seed, db);
        let l_hash = self.hash.digest(&self.label);
        let mut good = ct_eq_mask(usize::from(y), 0);
        let mut diff = 0u8;
        for (a, b) in db[..h_len].iter().zip(l_hash.iter()) {
            diff |= a ^ b;
        }
        good &= ct_eq_mask(usize::from(diff), 0);
        // After lHash: zeros, then 0x01, then M. Find the first nonzero byte without branching.
        let mut found = 0usize;
        let mut one_at = 0usize;
        let mut first_is_one = 0usize;
        for (i, &b) in db.iter().enumerate().skip(h_len) {
            let nz = !ct_eq_mask(usize::from(b), 0);
            let first = nz & !found;
            one_at = ct_select(first, i, one_at);
            first_is_one |= first & ct_eq_mask(usize::from(b), 1);
            found |= nz;
        }
        good &= found & first_is_one;
        // OAEP's verdict is public by design (RFC 8017 §7.1.2: one "decryption error" for every failure, after
        // a decoding that ran in constant time); what must not leak is which check failed.
        if crate::ct::declassify(good) == 0 {
            return Err(fail);
        }
        // The message's position, and so its length, is public once the decryption succeeded: it is the
        // length of the output.
        let one_at = crate::ct::declassify(one_at);
        Ok(Zeroizing::new(db[one_at + 1..].to_vec()))
    }
}

/// RSAES-OAEP encryption with SHA-256 and an empty label, seed from OS randomness.
#[cfg(feature = "std")]
pub fn encrypt(key: &RsaPublicKey, msg: &[u8]) -> Result<Vec<u8>> {
    Oaep::default().encrypt(key, msg)
}

/// RSAES-OAEP decryption with SHA-256 and an empty label.
pub fn decrypt(key: &RsaPrivateKey, ciphertext: &[u8]) -> Result<Zeroizing<Vec<u8>>> {
    Oaep::default().decrypt(key, ciphertext)
}
