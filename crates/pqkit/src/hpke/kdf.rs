//! HPKE's labeled KDF calls: `LabeledExtract` / `LabeledExpand` over HKDF (RFC 9180 §4) and the single-stage
//! `LabeledDerive` over SHAKE256 (draft-ietf-hpke-pq, from draft-ietf-hpke-hpke).

use super::Kdf;
use crate::error::Expected;
use crate::hash::Hasher;
use crate::hash::sha2::{Sha256, Sha384, Sha512};
use crate::hash::sha3::Shake256;
use crate::kdf::Hkdf;
use crate::{Error, Result};
use alloc::vec::Vec;
use zeroize::{Zeroize, Zeroizing};

const VERSION: &[u8] = b"HPKE-v1";

/// Appends `I2OSP(len(x), 2) || x`.
pub(super) fn push_prefixed(out: &mut Vec<u8>, x: &[u8]) {
    out.extend_from_slice(&(x.len() as u16).to_be_bytes());
    out.extend_from_slice(x);
}

fn extract<H: Hasher>(salt: &[u8], ikm: &[u8]) -> Zeroizing<Vec<u8>> {
    let mut prk = crate::kdf::extract::<H>(salt, ikm);
    let out = Zeroizing::new(prk.as_ref().to_vec());
    prk.as_mut().zeroize();
    out
}

/// `LabeledExtract(salt, label, ikm) = Extract(salt, "HPKE-v1" || suite_id || label || ikm)`. Two-stage KDFs
/// only.
pub(super) fn labeled_extract(kdf: Kdf, suite_id: &[u8], salt: &[u8], label: &[u8], ikm: &[u8]) -> Zeroizing<Vec<u8>> {
    let mut labeled = Zeroizing::new(Vec::with_capacity(VERSION.len() + suite_id.len() + label.len() + ikm.len()));
    labeled.extend_from_slice(VERSION);
    labeled.extend_from_slice(suite_id);
    labeled.extend_from_slice(label);
    labeled.extend_from_slice(ikm);
    match kdf {
        Kdf::HkdfSha256 => extract::<Sha256>(salt, &labeled),
        Kdf::HkdfSha384 => extract::<Sha384>(salt, &labeled),
        Kdf::HkdfSha512 | Kdf::Shake256 => extract::<Sha512>(salt, &labeled),
    }
}

fn expand<H: Hasher>(prk: &[u8], info: &[u8], out: &mut [u8]) -> Result<()> {
    Hkdf::<H>::from_prk(prk)?.expand(info, out)
}

/// `LabeledExpand(prk, label, info, L) = Expand(prk, I2OSP(L, 2) || "HPKE-v1" || suite_id || label || info, L)`;
/// `L` at most 255·`Nh` ([`Error::InvalidLength`]).
pub(super) fn labeled_expand(
    kdf: Kdf,
    suite_id: &[u8],
    prk: &[u8],
    label: &[u8],
    info: &[u8],
    len: usize,
) -> Result<Zeroizing<Vec<u8>>> {
    let max = 255 * kdf.hash_len();
    if len > max {
        return Err(Error::InvalidLength {
            algorithm: "HPKE",
            field: "export length",
            expected: Expected::AtMost(max),
            actual: len,
        });
    }
    let mut labeled = Vec::with_capacity(2 + VERSION.len() + suite_id.len() + label.len() + info.len());
    labeled.extend_from_slice(&(len as u16).to_be_bytes());
    labeled.extend_from_slice(VERSION);
    labeled.extend_from_slice(suite_id);
    labeled.extend_from_slice(label);
    labeled.extend_from_slice(info);
    let mut out = Zeroizing::new(alloc::vec![0u8; len]);
    match kdf {
        Kdf::HkdfSha256 => expand::<Sha256>(prk, &labeled, &mut out)?,
        Kdf::HkdfSha384 => expand::<Sha384>(prk, &labeled, &mut out)?,
        Kdf::HkdfSha512 | Kdf::Shake256 => expand::<Sha512>(prk, &labeled, &mut out)?,
    }
    Ok(out)
}

/// `SHAKE256.LabeledDerive(ikm, label, context, L) = SHAKE256(ikm || "HPKE-v1" || suite_id ||
/// I2OSP(len(label), 2) || label || I2OSP(L, 2) || context, L)`; `L` at most 65535.
pub(super) fn labeled_derive(
    suite_id: &[u8],
    ikm: &[u8],
    label: &[u8],
    context: &[u8],
    len: usize,
) -> Result<Zeroizing<Vec<u8>>> {
    if len > u16::MAX as usize {
        return Err(Error::InvalidLength {
            algorithm: "HPKE",
            field: "output length",
            expected: Expected::AtMost(u16::MAX as usize),
            actual: len,
        });
    }
    let mut x = Shake256::new();
    x.update(ikm).update(VERSION).update(suite_id);
    x.update(&(label.len() as u16).to_be_bytes()).update(label);
    x.update(&(len as u16).to_be_bytes()).update(context);
    let mut out = Zeroizing::new(alloc::vec![0u8; len]);
    x.finalize_into(&mut out);
    Ok(out)
}
