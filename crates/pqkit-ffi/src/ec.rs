//! Ed25519 (RFC 8032) and X25519 (RFC 7748) over raw 32-byte keys: no handles are needed, every key object
//! made inside a call is wiped when the call returns.

use crate::{FfiResult, PqkitStatus, guard, input, output};
use pqkit::ec::ed25519;
use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey};
use zeroize::Zeroizing;

/// Length of an Ed25519 private key (the RFC 8032 seed), in bytes.
pub const PQKIT_ED25519_SEED_LEN: usize = 32;
/// Length of an Ed25519 public key, in bytes.
pub const PQKIT_ED25519_PUBLIC_KEY_LEN: usize = 32;
/// Length of an Ed25519 signature, in bytes.
pub const PQKIT_ED25519_SIGNATURE_LEN: usize = 64;
/// Length of an X25519 private key, public key and shared secret, in bytes.
pub const PQKIT_X25519_KEY_LEN: usize = 32;

fn len(alg: &'static str, field: &'static str, want: usize, got: usize) -> FfiResult<()> {
    pqkit::Error::check_length(alg, field, want, got)?;
    Ok(())
}

fn seed32(alg: &'static str, b: &[u8]) -> FfiResult<Zeroizing<[u8; 32]>> {
    len(alg, "private key", 32, b.len())?;
    let mut s = Zeroizing::new([0u8; 32]);
    s.copy_from_slice(b);
    Ok(s)
}

/// A fresh Ed25519 key pair from the operating system's randomness: writes the 32-byte public key to `pk`
/// and the 32-byte private key (seed) to `seed`.
///
/// # Safety
/// `pk` and `seed` writable for their lengths (which must be 32), not overlapping.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_ed25519_keypair(
    pk: *mut u8,
    pk_len: usize,
    seed: *mut u8,
    seed_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both output buffers.
        let (pk, seed) = unsafe { (output(pk, pk_len, "pk")?, output(seed, seed_len, "seed")?) };
        len("Ed25519", "public key", PQKIT_ED25519_PUBLIC_KEY_LEN, pk.len())?;
        len("Ed25519", "private key", PQKIT_ED25519_SEED_LEN, seed.len())?;
        let mut s = Zeroizing::new([0u8; 32]);
        pqkit::rng::fill_os(&mut s[..])?;
        let sk = ed25519::SigningKey::from_seed(&s);
        pk.copy_from_slice(sk.verifying_key().as_bytes());
        seed.copy_from_slice(&s[..]);
        Ok(())
    })
}

/// Writes the 32-byte public key of the 32-byte private key `seed` to `pk`.
///
/// # Safety
/// `seed` readable and `pk` writable for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_ed25519_public_key(
    seed: *const u8,
    seed_len: usize,
    pk: *mut u8,
    pk_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both buffers.
        let (seed, pk) = unsafe { (input(seed, seed_len, "seed")?, output(pk, pk_len, "pk")?) };
        len("Ed25519", "public key", PQKIT_ED25519_PUBLIC_KEY_LEN, pk.len())?;
        let sk = ed25519::SigningKey::from_seed(&*seed32("Ed25519", seed)?);
        pk.copy_from_slice(sk.verifying_key().as_bytes());
        Ok(())
    })
}

/// Signs `msg` with the private key `seed`: writes the 64-byte signature to `sig` (deterministic, RFC 8032).
///
/// # Safety
/// Every buffer readable (writable for `sig`) for its length, or NULL with length 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_ed25519_sign(
    seed: *const u8,
    seed_len: usize,
    msg: *const u8,
    msg_len: usize,
    sig: *mut u8,
    sig_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every buffer.
        let (seed, msg, sig) =
            unsafe { (input(seed, seed_len, "seed")?, input(msg, msg_len, "message")?, output(sig, sig_len, "sig")?) };
        len("Ed25519", "signature", PQKIT_ED25519_SIGNATURE_LEN, sig.len())?;
        let sk = ed25519::SigningKey::from_seed(&*seed32("Ed25519", seed)?);
        sig.copy_from_slice(sk.sign(msg).as_bytes());
        Ok(())
    })
}

/// Verifies the 64-byte signature `sig` of `msg` under the public key `pk`: `PQKIT_STATUS_OK` if valid,
/// `PQKIT_STATUS_AUTHENTICATION_FAILED` if not, `PQKIT_STATUS_INVALID_LENGTH` or
/// `PQKIT_STATUS_INVALID_ENCODING` for a key or signature that cannot be one.
///
/// # Safety
/// Every buffer readable for its length, or NULL with length 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_ed25519_verify(
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
        let pk = ed25519::VerifyingKey::from_bytes(pk)?;
        let sig = ed25519::Signature::from_bytes(sig)?;
        pk.verify(msg, &sig)?;
        Ok(())
    })
}

/// A fresh X25519 key pair: writes the 32-byte public key to `pk` and the 32-byte private key to `sk`.
///
/// # Safety
/// `pk` and `sk` writable for their lengths (which must be 32), not overlapping.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_x25519_keypair(pk: *mut u8, pk_len: usize, sk: *mut u8, sk_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both output buffers.
        let (pk, sk) = unsafe { (output(pk, pk_len, "pk")?, output(sk, sk_len, "sk")?) };
        len("X25519", "public key", PQKIT_X25519_KEY_LEN, pk.len())?;
        len("X25519", "private key", PQKIT_X25519_KEY_LEN, sk.len())?;
        let mut s = Zeroizing::new([0u8; 32]);
        pqkit::rng::fill_os(&mut s[..])?;
        let key = X25519SecretKey::from_bytes(&s[..])?;
        pk.copy_from_slice(key.public_key().as_bytes());
        sk.copy_from_slice(&s[..]);
        Ok(())
    })
}

/// Writes the 32-byte public key of the X25519 private key `sk` to `pk`.
///
/// # Safety
/// `sk` readable and `pk` writable for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_x25519_public_key(
    sk: *const u8,
    sk_len: usize,
    pk: *mut u8,
    pk_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both buffers.
        let (sk, pk) = unsafe { (input(sk, sk_len, "sk")?, output(pk, pk_len, "pk")?) };
        len("X25519", "public key", PQKIT_X25519_KEY_LEN, pk.len())?;
        let key = X25519SecretKey::from_bytes(&seed32("X25519", sk)?[..])?;
        pk.copy_from_slice(key.public_key().as_bytes());
        Ok(())
    })
}

/// X25519 (RFC 7748): writes the 32-byte shared secret of the private key `sk` and the peer's public key
/// `peer_pk` to `ss`. A peer key of small order (an all-zero secret) gives `PQKIT_STATUS_INVALID_ENCODING`
/// and leaves `ss` zeroed.
///
/// # Safety
/// Every buffer readable (writable for `ss`) for its length; `ss` overlaps none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_x25519(
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
        len("X25519", "shared secret", PQKIT_X25519_KEY_LEN, ss.len())?;
        ss.fill(0);
        let key = X25519SecretKey::from_bytes(&seed32("X25519", sk)?[..])?;
        let shared = key.diffie_hellman(&X25519PublicKey::from_bytes(peer)?)?;
        ss.copy_from_slice(shared.as_bytes());
        Ok(())
    })
}
