//! The test side's own PKCS#1 v1.5 encryption-padding check (RFC 8017 §7.2.2 step 3), on the raw RSA
//! output: the library deliberately has no function that reports padding validity (it would be a
//! Bleichenbacher oracle), so tests that need the rejection decision compute it here, independently.

use pqkit::rsa::RsaPrivateKey;

/// Whether `ciphertext` carries a valid EME-PKCS1-v1_5 block under `key` (`None` if the raw operation
/// refuses the ciphertext: wrong length or not below n).
#[allow(dead_code)]
pub fn padding_valid(key: &RsaPrivateKey, ciphertext: &[u8]) -> Option<bool> {
    let em = key.raw_private(ciphertext).ok()?;
    if em.len() < 11 || em[0] != 0 || em[1] != 2 {
        return Some(false);
    }
    match em[2..].iter().position(|&b| b == 0) {
        Some(ps_len) => Some(ps_len >= 8),
        None => Some(false),
    }
}
