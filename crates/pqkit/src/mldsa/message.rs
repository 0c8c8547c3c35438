//! The message representative μ: the context-string check, pure ML-DSA's μ = H(tr || M', 64) and the
//! HashML-DSA pre-hash ([`PreHash`]: its OID and digest). Signing and verification both start here; nothing in
//! this file touches a key's secrets.

use crate::error::Expected;
use crate::hash::sha3::{Shake128, Shake256};
use crate::{Error, Result};

/// The pre-hash function of HashML-DSA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreHash {
    /// SHA-512 (OID 2.16.840.1.101.3.4.2.3), 64-byte digest.
    Sha512,
    /// SHAKE128 (OID 2.16.840.1.101.3.4.2.11), 32-byte (256-bit) output.
    Shake128,
}

impl PreHash {
    /// DER encoding of the OID (FIPS 204 §5.4.1).
    fn oid(self) -> [u8; 11] {
        let last = match self {
            PreHash::Sha512 => 0x03,
            PreHash::Shake128 => 0x0B,
        };
        [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, last]
    }

    /// PH(M) into `out`; returns its length.
    fn digest(self, msg: &[u8], out: &mut [u8; 64]) -> usize {
        match self {
            PreHash::Sha512 => {
                *out = crate::hash::sha2::Sha512::digest(msg);
                64
            }
            PreHash::Shake128 => {
                Shake128::digest_into(msg, &mut out[..32]);
                32
            }
        }
    }
}

pub(super) fn check_ctx(alg: &'static str, ctx: &[u8]) -> Result<()> {
    if ctx.len() > 255 {
        return Err(Error::InvalidLength {
            algorithm: alg,
            field: "context",
            expected: Expected::AtMost(255),
            actual: ctx.len(),
        });
    }
    Ok(())
}

/// μ = SHAKE256(tr || M', 64) for pure ML-DSA, M' = 0 || |ctx| || ctx || msg (FIPS 204 Algorithms 2, 3, 7).
///
/// `tr` is the 64-byte hash of the public key ([`VerifyingKey::tr`](super::VerifyingKey::tr)). Errors if `ctx`
/// exceeds 255 bytes.
pub fn compute_mu(tr: &[u8; 64], msg: &[u8], ctx: &[u8]) -> Result<[u8; 64]> {
    check_ctx("ML-DSA", ctx)?;
    let mut h = Shake256::new();
    h.update(tr).update(&[0, ctx.len() as u8]).update(ctx).update(msg);
    let mut mu = [0u8; 64];
    h.finalize_into(&mut mu);
    Ok(mu)
}

pub(super) fn prehash_mu(tr: &[u8; 64], msg: &[u8], ctx: &[u8], ph: PreHash) -> [u8; 64] {
    let mut digest = [0u8; 64];
    let n = ph.digest(msg, &mut digest);
    let mut h = Shake256::new();
    h.update(tr).update(&[1, ctx.len() as u8]).update(ctx).update(&ph.oid()).update(&digest[..n]);
    let mut mu = [0u8; 64];
    h.finalize_into(&mut mu);
    mu
}
