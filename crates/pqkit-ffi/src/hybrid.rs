//! The hybrid KEMs, ML-KEM-768 with X25519: X-Wing (draft-connolly-cfrg-xwing-kem) and X25519MLKEM768 (the
//! TLS group 0x11EC). Both go through one set of functions chosen by a [`PqkitHybridKem`] id; the private key
//! crosses the boundary as its seed (32 bytes for X-Wing, X-Wing's own stored form; 96 bytes for
//! X25519MLKEM768, ML-KEM's `d || z` and the X25519 key) and every key object made in a call is wiped when the
//! call returns.

use crate::{FfiResult, PqkitStatus, guard, input, output, unknown_alg, write_out};
use pqkit::hybrid::{x25519mlkem768 as tls, xwing};
use zeroize::Zeroizing;

/// Hybrid KEM ids (pass them as `uint32_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitHybridKem {
    /// X-Wing: seed 32 bytes, encapsulation key 1216, ciphertext 1120, shared secret 32.
    Xwing = 1,
    /// X25519MLKEM768: seed 96 bytes, encapsulation key 1216, ciphertext 1120, shared secret 64.
    X25519Mlkem768 = 2,
}

/// What the entry points need of each hybrid KEM.
trait Hybrid {
    const NAME: &'static str;
    const SEED_LEN: usize;
    const EK_LEN: usize;
    const CT_LEN: usize;
    const SS_LEN: usize;
    /// Writes the encapsulation key of the private key `seed` to `ek` (exactly `EK_LEN`).
    fn public(seed: &[u8], ek: &mut [u8]) -> FfiResult<()>;
    /// Writes a fresh ciphertext and its shared secret.
    fn encapsulate(ek: &[u8], ct: &mut [u8], ss: &mut [u8]) -> FfiResult<()>;
    fn decapsulate(seed: &[u8], ct: &[u8], ss: &mut [u8]) -> FfiResult<()>;
}

struct Xwing;
struct Tls;

impl Hybrid for Xwing {
    const NAME: &'static str = "X-Wing";
    const SEED_LEN: usize = xwing::SEED_LEN;
    const EK_LEN: usize = xwing::EK_LEN;
    const CT_LEN: usize = xwing::CT_LEN;
    const SS_LEN: usize = 32;
    fn public(seed: &[u8], ek: &mut [u8]) -> FfiResult<()> {
        ek.copy_from_slice(&xwing::DecapsulationKey::from_bytes(seed)?.encapsulation_key().to_bytes());
        Ok(())
    }
    fn encapsulate(ek: &[u8], ct: &mut [u8], ss: &mut [u8]) -> FfiResult<()> {
        let (c, k) = xwing::EncapsulationKey::from_bytes(ek)?.encapsulate()?;
        ct.copy_from_slice(c.as_bytes());
        ss.copy_from_slice(k.as_bytes());
        Ok(())
    }
    fn decapsulate(seed: &[u8], ct: &[u8], ss: &mut [u8]) -> FfiResult<()> {
        let dk = xwing::DecapsulationKey::from_bytes(seed)?;
        ss.copy_from_slice(dk.decapsulate(&xwing::Ciphertext::from_bytes(ct)?).as_bytes());
        Ok(())
    }
}

impl Hybrid for Tls {
    const NAME: &'static str = "X25519MLKEM768";
    const SEED_LEN: usize = 96;
    const EK_LEN: usize = tls::EK_LEN;
    const CT_LEN: usize = tls::CT_LEN;
    const SS_LEN: usize = tls::SS_LEN;
    fn public(seed: &[u8], ek: &mut [u8]) -> FfiResult<()> {
        ek.copy_from_slice(&tls::DecapsulationKey::from_seed(seed)?.encapsulation_key().to_bytes());
        Ok(())
    }
    fn encapsulate(ek: &[u8], ct: &mut [u8], ss: &mut [u8]) -> FfiResult<()> {
        let (c, k) = tls::EncapsulationKey::from_bytes(ek)?.encapsulate()?;
        ct.copy_from_slice(c.as_bytes());
        ss.copy_from_slice(k.as_bytes());
        Ok(())
    }
    fn decapsulate(seed: &[u8], ct: &[u8], ss: &mut [u8]) -> FfiResult<()> {
        let dk = tls::DecapsulationKey::from_seed(seed)?;
        ss.copy_from_slice(dk.decapsulate(&tls::Ciphertext::from_bytes(ct)?)?.as_bytes());
        Ok(())
    }
}

macro_rules! with_hybrid {
    ($id:expr, $f:ident ( $($arg:expr),* )) => {
        match $id {
            1 => $f::<Xwing>($($arg),*),
            2 => $f::<Tls>($($arg),*),
            other => Err(unknown_alg("hybrid KEM", other)),
        }
    };
}

fn check<K: Hybrid>(field: &'static str, want: usize, got: usize) -> FfiResult<()> {
    pqkit::Error::check_length(K::NAME, field, want, got)?;
    Ok(())
}

fn lengths<K: Hybrid>() -> FfiResult<[usize; 4]> {
    Ok([K::SEED_LEN, K::EK_LEN, K::CT_LEN, K::SS_LEN])
}

fn keygen<K: Hybrid>(seed: &mut [u8], ek: &mut [u8]) -> FfiResult<()> {
    check::<K>("seed output", K::SEED_LEN, seed.len())?;
    check::<K>("encapsulation key output", K::EK_LEN, ek.len())?;
    let mut s = Zeroizing::new(vec![0u8; K::SEED_LEN]);
    pqkit::rng::fill_os(&mut s)?;
    K::public(&s, ek)?;
    seed.copy_from_slice(&s);
    Ok(())
}

fn public<K: Hybrid>(seed: &[u8], ek: &mut [u8]) -> FfiResult<()> {
    check::<K>("encapsulation key output", K::EK_LEN, ek.len())?;
    K::public(seed, ek)
}

fn encapsulate<K: Hybrid>(ek: &[u8], ct: &mut [u8], ss: &mut [u8]) -> FfiResult<()> {
    check::<K>("ciphertext output", K::CT_LEN, ct.len())?;
    check::<K>("shared secret output", K::SS_LEN, ss.len())?;
    K::encapsulate(ek, ct, ss)
}

fn decapsulate<K: Hybrid>(seed: &[u8], ct: &[u8], ss: &mut [u8]) -> FfiResult<()> {
    check::<K>("shared secret output", K::SS_LEN, ss.len())?;
    ss.fill(0);
    K::decapsulate(seed, ct, ss)
}

/// Writes the seed (private key), encapsulation-key, ciphertext and shared-secret lengths of `kem_id`
/// ([`PqkitHybridKem`]); a NULL pointer is refused before anything is written.
///
/// # Safety
/// Each pointer NULL or valid for a `size_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hybrid_kem_lengths(
    kem_id: u32,
    seed_len: *mut usize,
    ek_len: *mut usize,
    ct_len: *mut usize,
    ss_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        let l = with_hybrid!(kem_id, lengths())?;
        let outs = [(seed_len, "seed_len"), (ek_len, "ek_len"), (ct_len, "ct_len"), (ss_len, "ss_len")];
        for (p, name) in outs {
            crate::check_out(p, name)?;
        }
        for ((p, name), v) in outs.into_iter().zip(l) {
            // SAFETY: not NULL (checked) and valid for a size_t write (caller's contract).
            unsafe { write_out(p, v, name)? };
        }
        Ok(())
    })
}

/// Generates a key pair from the operating system's randomness: writes the private key (its seed; secret) to
/// `seed` and the encapsulation key to `ek`, each exactly its length.
///
/// # Safety
/// `seed` and `ek` writable for their lengths, not overlapping.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hybrid_kem_keygen(
    kem_id: u32,
    seed: *mut u8,
    seed_len: usize,
    ek: *mut u8,
    ek_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both buffers.
        let (seed, ek) = unsafe { (output(seed, seed_len, "seed")?, output(ek, ek_len, "ek")?) };
        with_hybrid!(kem_id, keygen(seed, ek))
    })
}

/// Writes the encapsulation key of the private key `seed` to `ek`.
///
/// # Safety
/// `seed` readable and `ek` writable for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hybrid_kem_public_key(
    kem_id: u32,
    seed: *const u8,
    seed_len: usize,
    ek: *mut u8,
    ek_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both buffers.
        let (seed, ek) = unsafe { (input(seed, seed_len, "seed")?, output(ek, ek_len, "ek")?) };
        with_hybrid!(kem_id, public(seed, ek))
    })
}

/// Encapsulates to `ek`: writes the ciphertext to `ct` and the shared secret to `ss`. A malformed key is
/// `PQKIT_STATUS_INVALID_ENCODING`.
///
/// # Safety
/// `ek` readable; `ct` and `ss` writable for their lengths; no overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hybrid_kem_encapsulate(
    kem_id: u32,
    ek: *const u8,
    ek_len: usize,
    ct: *mut u8,
    ct_len: usize,
    ss: *mut u8,
    ss_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the three buffers.
        let (ek, ct, ss) = unsafe { (input(ek, ek_len, "ek")?, output(ct, ct_len, "ct")?, output(ss, ss_len, "ss")?) };
        with_hybrid!(kem_id, encapsulate(ek, ct, ss))
    })
}

/// Decapsulates `ct` with the private key `seed` and writes the shared secret to `ss` (zeroed on error).
/// A modified ciphertext gives an unrelated secret and `PQKIT_STATUS_OK` (implicit rejection): the protocol
/// on top must authenticate. X25519MLKEM768 refuses an all-zero X25519 result (`PQKIT_STATUS_INVALID_ENCODING`).
///
/// # Safety
/// `seed` and `ct` readable; `ss` writable for their lengths.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hybrid_kem_decapsulate(
    kem_id: u32,
    seed: *const u8,
    seed_len: usize,
    ct: *const u8,
    ct_len: usize,
    ss: *mut u8,
    ss_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the three buffers.
        let (seed, ct, ss) =
            unsafe { (input(seed, seed_len, "seed")?, input(ct, ct_len, "ct")?, output(ss, ss_len, "ss")?) };
        with_hybrid!(kem_id, decapsulate(seed, ct, ss))
    })
}
