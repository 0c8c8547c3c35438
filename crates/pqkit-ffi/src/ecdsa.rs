//! ECDSA with SHA-256 (RFC 6979 deterministic nonces, P1363 `r || s` signatures) and ECDH on P-256 and
//! secp256k1, over raw keys: 32-byte big-endian private scalars and 65-byte uncompressed SEC1 public keys
//! (compressed 33-byte keys are accepted as input).

use crate::{Fail, FfiResult, PqkitStatus, guard, input, output, unknown_alg};
use pqkit::ec::weierstrass::{self as ws, PrimeCurve};
use pqkit::ec::{p256::NistP256, secp256k1::Secp256k1};

/// Length of an EC private key (big-endian scalar), in bytes.
pub const PQKIT_EC_SECRET_KEY_LEN: usize = 32;
/// Length of an uncompressed EC public key (`04 || x || y`), in bytes.
pub const PQKIT_EC_PUBLIC_KEY_LEN: usize = 65;
/// Length of an ECDSA signature `r || s`, in bytes.
pub const PQKIT_ECDSA_SIGNATURE_LEN: usize = 64;
/// Length of an ECDH shared secret (the x-coordinate), in bytes.
pub const PQKIT_ECDH_SHARED_SECRET_LEN: usize = 32;

/// Curve ids (pass them as `uint32_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitEcCurve {
    /// NIST P-256 (secp256r1).
    P256 = 1,
    /// secp256k1 (signs in low-S form).
    Secp256k1 = 2,
}

macro_rules! with_curve {
    ($id:expr, $f:ident ( $($arg:expr),* )) => {
        match $id {
            1 => $f::<NistP256>($($arg),*),
            2 => $f::<Secp256k1>($($arg),*),
            other => Err(unknown_alg("EC curve", other)),
        }
    };
}

fn check(field: &'static str, want: usize, got: usize) -> FfiResult<()> {
    pqkit::Error::check_length("EC", field, want, got)?;
    Ok(())
}

fn keypair<C: PrimeCurve>(pk: &mut [u8], sk: &mut [u8]) -> FfiResult<()> {
    check("public key", PQKIT_EC_PUBLIC_KEY_LEN, pk.len())?;
    check("private key", PQKIT_EC_SECRET_KEY_LEN, sk.len())?;
    let mut rng = pqkit::rng::ChaCha20Rng::from_os_rng()?;
    let key = ws::SecretKey::<C>::generate(&mut rng);
    pk.copy_from_slice(&key.public_key().to_uncompressed());
    sk.copy_from_slice(&zeroize::Zeroizing::new(key.to_bytes())[..]);
    Ok(())
}

fn public_key<C: PrimeCurve>(sk: &[u8], pk: &mut [u8]) -> FfiResult<()> {
    check("public key", PQKIT_EC_PUBLIC_KEY_LEN, pk.len())?;
    pk.copy_from_slice(&ws::SecretKey::<C>::from_bytes(sk)?.public_key().to_uncompressed());
    Ok(())
}

fn sign<C: PrimeCurve>(sk: &[u8], msg: &[u8], sig: &mut [u8]) -> FfiResult<()> {
    check("signature", PQKIT_ECDSA_SIGNATURE_LEN, sig.len())?;
    sig.copy_from_slice(&ws::SigningKey::<C>::from_bytes(sk)?.sign(msg).to_bytes());
    Ok(())
}

fn verify<C: PrimeCurve>(pk: &[u8], msg: &[u8], sig: &[u8]) -> FfiResult<()> {
    let pk = ws::VerifyingKey::<C>::from_sec1_bytes(pk)?;
    pk.verify(msg, &ws::Signature::<C>::from_bytes(sig)?)?;
    Ok(())
}

fn ecdh<C: PrimeCurve>(sk: &[u8], peer: &[u8], ss: &mut [u8]) -> FfiResult<()> {
    check("shared secret", PQKIT_ECDH_SHARED_SECRET_LEN, ss.len())?;
    ss.fill(0);
    let shared = ws::SecretKey::<C>::from_bytes(sk)?.diffie_hellman(&ws::PublicKey::<C>::from_sec1_bytes(peer)?)?;
    if shared.as_bytes().len() != ss.len() {
        return Err(Fail::new(PqkitStatus::InternalError, "ECDH: unexpected secret length"));
    }
    ss.copy_from_slice(shared.as_bytes());
    Ok(())
}

/// A fresh key pair on curve `curve_id`: the 65-byte uncompressed public key to `pk`, the 32-byte private key
/// to `sk`.
///
/// # Safety
/// `pk` and `sk` writable for their lengths, not overlapping.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_ec_keypair(
    curve_id: u32,
    pk: *mut u8,
    pk_len: usize,
    sk: *mut u8,
    sk_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both output buffers.
        let (pk, sk) = unsafe { (output(pk, pk_len, "pk")?, output(sk, sk_len, "sk")?) };
        with_curve!(curve_id, keypair(pk, sk))
    })
}

/// Writes the 65-byte uncompressed public key of the private key `sk` (a scalar in [1, n - 1]) to `pk`.
///
/// # Safety
/// `sk` readable and `pk` writable for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_ec_public_key(
    curve_id: u32,
    sk: *const u8,
    sk_len: usize,
    pk: *mut u8,
    pk_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both buffers.
        let (sk, pk) = unsafe { (input(sk, sk_len, "sk")?, output(pk, pk_len, "pk")?) };
        with_curve!(curve_id, public_key(sk, pk))
    })
}

/// ECDSA with SHA-256: writes the 64-byte signature `r || s` of `msg` to `sig` (RFC 6979 deterministic nonce;
/// low-S on secp256k1).
///
/// # Safety
/// Every buffer readable (writable for `sig`) for its length, or NULL with length 0.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_ecdsa_sign(
    curve_id: u32,
    sk: *const u8,
    sk_len: usize,
    msg: *const u8,
    msg_len: usize,
    sig: *mut u8,
    sig_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every buffer.
        let (sk, msg, sig) =
            unsafe { (input(sk, sk_len, "sk")?, input(msg, msg_len, "message")?, output(sig, sig_len, "sig")?) };
        with_curve!(curve_id, sign(sk, msg, sig))
    })
}

/// Verifies the 64-byte ECDSA-SHA-256 signature `r || s` of `msg` under the SEC1 public key `pk`:
/// `PQKIT_STATUS_OK` if valid, `PQKIT_STATUS_AUTHENTICATION_FAILED` if not, `PQKIT_STATUS_INVALID_LENGTH` or
/// `PQKIT_STATUS_INVALID_ENCODING` for a key or signature that cannot be one.
///
/// # Safety
/// Every buffer readable for its length, or NULL with length 0.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_ecdsa_verify(
    curve_id: u32,
    pk: *const u8,
    pk_len: usize,
    msg: *const u8,
    msg_len: usize,
    sig: *const u8,
    sig_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every buffer.
        let (pk, msg, sig) =
            unsafe { (input(pk, pk_len, "pk")?, input(msg, msg_len, "message")?, input(sig, sig_len, "sig")?) };
        with_curve!(curve_id, verify(pk, msg, sig))
    })
}

/// ECDH (SEC1): writes the 32-byte x-coordinate shared by the private key `sk` and the peer's SEC1 public key
/// `peer_pk` to `ss` (zeroed on any error).
///
/// # Safety
/// Every buffer readable (writable for `ss`) for its length; `ss` overlaps none.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_ecdh(
    curve_id: u32,
    sk: *const u8,
    sk_len: usize,
    peer_pk: *const u8,
    peer_pk_len: usize,
    ss: *mut u8,
    ss_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every buffer.
        let (sk, peer, ss) =
            unsafe { (input(sk, sk_len, "sk")?, input(peer_pk, peer_pk_len, "peer_pk")?, output(ss, ss_len, "ss")?) };
        with_curve!(curve_id, ecdh(sk, peer, ss))
    })
}
