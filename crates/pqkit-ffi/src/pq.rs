//! ML-KEM (FIPS 203) and ML-DSA (FIPS 204) over byte encodings.
//!
//! Keys cross the boundary in their standard encodings (the expanded forms of FIPS 203 §7 and FIPS 204 §7);
//! every key object made inside a call is wiped when the call returns.

use crate::{FfiResult, PqkitStatus, guard, input, output, unknown_alg, write_out};
use pqkit::mldsa::{self, MlDsa44, MlDsa65, MlDsa87};
use pqkit::mlkem::{self, MlKem512, MlKem768, MlKem1024};
use zeroize::Zeroize;

/// Length of an ML-KEM shared secret, in bytes.
pub const PQKIT_MLKEM_SHARED_SECRET_LEN: usize = 32;
/// Length of an ML-KEM key-generation seed `d || z` (FIPS 203 Algorithm 16), in bytes.
pub const PQKIT_MLKEM_SEED_LEN: usize = 64;
/// Length of an ML-DSA key-generation seed ξ (FIPS 204 Algorithm 6), in bytes.
pub const PQKIT_MLDSA_SEED_LEN: usize = 32;

/// ML-KEM parameter-set ids (pass them as `uint32_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitMlkemAlg {
    /// ML-KEM-512: encapsulation key 800 bytes, decapsulation key 1632, ciphertext 768.
    Mlkem512 = 1,
    /// ML-KEM-768: encapsulation key 1184 bytes, decapsulation key 2400, ciphertext 1088.
    Mlkem768 = 2,
    /// ML-KEM-1024: encapsulation key 1568 bytes, decapsulation key 3168, ciphertext 1568.
    Mlkem1024 = 3,
}

/// ML-DSA parameter-set ids (pass them as `uint32_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitMldsaAlg {
    /// ML-DSA-44: public key 1312 bytes, secret key 2560, signature 2420.
    Mldsa44 = 1,
    /// ML-DSA-65: public key 1952 bytes, secret key 4032, signature 3309.
    Mldsa65 = 2,
    /// ML-DSA-87: public key 2592 bytes, secret key 4896, signature 4627.
    Mldsa87 = 3,
}

macro_rules! with_kem {
    ($id:expr, $f:ident ( $($arg:expr),* )) => {
        match $id {
            1 => $f::<MlKem512>($($arg),*),
            2 => $f::<MlKem768>($($arg),*),
            3 => $f::<MlKem1024>($($arg),*),
            other => Err(unknown_alg("ML-KEM", other)),
        }
    };
}

macro_rules! with_dsa {
    ($id:expr, $f:ident ( $($arg:expr),* )) => {
        match $id {
            1 => $f::<MlDsa44>($($arg),*),
            2 => $f::<MlDsa65>($($arg),*),
            3 => $f::<MlDsa87>($($arg),*),
            other => Err(unknown_alg("ML-DSA", other)),
        }
    };
}

/// The lengths and key generation of one parameter set, as the shared entry-point bodies below need them.
struct Lengths {
    name: &'static str,
    public: usize,
    secret: usize,
    third: usize,
}

/// ML-KEM and ML-DSA as the shared entry-point bodies see them: a parameter-set id gives the lengths (public
/// key, secret key, then ciphertext or signature) and a key generation that fills exactly sized buffers.
trait Family {
    /// Names of the three lengths' out-pointers and of the two key outputs, for errors.
    const FIELDS: [&'static str; 3];
    const KEYS: [&'static str; 2];
    fn lengths(alg_id: u32) -> FfiResult<Lengths>;
    /// Generates (no seed) or derives a key pair into `public` and `secret`, whose lengths are already checked.
    fn keygen(alg_id: u32, seed: Option<&[u8]>, public: &mut [u8], secret: &mut [u8]) -> FfiResult<()>;
}

struct Kem;
struct Dsa;

impl Family for Kem {
    const FIELDS: [&'static str; 3] = ["ek_len", "dk_len", "ct_len"];
    const KEYS: [&'static str; 2] = ["encapsulation key output", "decapsulation key output"];
    fn lengths(alg_id: u32) -> FfiResult<Lengths> {
        with_kem!(alg_id, kem_lengths())
    }
    fn keygen(alg_id: u32, seed: Option<&[u8]>, public: &mut [u8], secret: &mut [u8]) -> FfiResult<()> {
        with_kem!(alg_id, kem_keygen(seed, public, secret))
    }
}

impl Family for Dsa {
    const FIELDS: [&'static str; 3] = ["pk_len", "sk_len", "sig_len"];
    const KEYS: [&'static str; 2] = ["public key output", "secret key output"];
    fn lengths(alg_id: u32) -> FfiResult<Lengths> {
        with_dsa!(alg_id, dsa_lengths())
    }
    fn keygen(alg_id: u32, seed: Option<&[u8]>, public: &mut [u8], secret: &mut [u8]) -> FfiResult<()> {
        with_dsa!(alg_id, dsa_keygen(seed, public, secret))
    }
}

fn kem_lengths<P: mlkem::Params>() -> FfiResult<Lengths> {
    Ok(Lengths { name: P::NAME, public: P::EK_LEN, secret: P::DK_LEN, third: P::CT_LEN })
}

fn dsa_lengths<P: mldsa::Params>() -> FfiResult<Lengths> {
    Ok(Lengths { name: P::NAME, public: P::PK_LEN, secret: P::SK_LEN, third: P::SIG_LEN })
}

fn kem_keygen<P: mlkem::Params>(seed: Option<&[u8]>, ek: &mut [u8], dk: &mut [u8]) -> FfiResult<()> {
    let (d, e) = match seed {
        Some(s) => mlkem::DecapsulationKey::<P>::from_seed64(s)?,
        None => mlkem::DecapsulationKey::<P>::generate()?,
    };
    ek.copy_from_slice(e.as_bytes());
    dk.copy_from_slice(d.to_bytes().as_ref());
    Ok(())
}

fn dsa_keygen<P: mldsa::Params>(seed: Option<&[u8]>, pk: &mut [u8], sk: &mut [u8]) -> FfiResult<()> {
    let (s, p) = match seed {
        Some(seed) => mldsa::SigningKey::<P>::from_seed_bytes(seed)?,
        None => mldsa::SigningKey::<P>::generate()?,
    };
    pk.copy_from_slice(p.as_bytes());
    sk.copy_from_slice(s.to_bytes().as_ref());
    Ok(())
}

/// The body of `pqkit_mlkem_lengths` and `pqkit_mldsa_lengths`: refuses a NULL pointer before writing any.
///
/// # Safety
/// Each pointer must be NULL or valid for a `size_t` write.
unsafe fn lengths_entry<F: Family>(alg_id: u32, outs: [*mut usize; 3]) -> PqkitStatus {
    guard(|| {
        let l = F::lengths(alg_id)?;
        for (ptr, name) in outs.iter().zip(F::FIELDS) {
            crate::check_out(*ptr, name)?;
        }
        for ((ptr, name), value) in outs.into_iter().zip(F::FIELDS).zip([l.public, l.secret, l.third]) {
            // SAFETY: not NULL (checked above) and valid for a size_t write, by this function's contract.
            unsafe { write_out(ptr, value, name)? };
        }
        Ok(())
    })
}

/// The body of the four `*_keygen` and `*_keygen_from_seed` entry points: checks the buffers and the two
/// output lengths, then generates (`seed` None) or derives (`seed` Some) the pair.
///
/// # Safety
/// `seed` readable for `seed_len` bytes; `public` and `secret` writable for their lengths; no overlap.
unsafe fn keygen_entry<F: Family>(
    alg_id: u32,
    seed: Option<(*const u8, usize)>,
    public: (*mut u8, usize),
    secret: (*mut u8, usize),
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the buffers, outputs not overlapping anything.
        let (seed, public, secret) = unsafe {
            (
                seed.map(|(p, n)| input(p, n, "seed")).transpose()?,
                output(public.0, public.1, F::FIELDS[0].trim_end_matches("_len"))?,
                output(secret.0, secret.1, F::FIELDS[1].trim_end_matches("_len"))?,
            )
        };
        let l = F::lengths(alg_id)?;
        pqkit::Error::check_length(l.name, F::KEYS[0], l.public, public.len())?;
        pqkit::Error::check_length(l.name, F::KEYS[1], l.secret, secret.len())?;
        F::keygen(alg_id, seed, public, secret)
    })
}

/// Writes the encapsulation-key, decapsulation-key and ciphertext lengths of ML-KEM `alg_id`.
///
/// # Safety
/// Each pointer must be NULL or valid for a `size_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_mlkem_lengths(
    alg_id: u32,
    ek_len: *mut usize,
    dk_len: *mut usize,
    ct_len: *mut usize,
) -> PqkitStatus {
    // SAFETY: the caller's contract is lengths_entry's.
    unsafe { lengths_entry::<Kem>(alg_id, [ek_len, dk_len, ct_len]) }
}

/// Generates an ML-KEM key pair from the OS's randomness: writes the encapsulation key to `ek` and the
/// decapsulation key (secret) to `dk`, each exactly its length (see [`pqkit_mlkem_lengths`]).
///
/// # Safety
/// `ek` and `dk` writable for their lengths, not overlapping.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_mlkem_keygen(
    alg_id: u32,
    ek: *mut u8,
    ek_len: usize,
    dk: *mut u8,
    dk_len: usize,
) -> PqkitStatus {
    // SAFETY: the caller's contract is keygen_entry's.
    unsafe { keygen_entry::<Kem>(alg_id, None, (ek, ek_len), (dk, dk_len)) }
}

/// Derives an ML-KEM key pair from a 64-byte seed `d || z` (FIPS 203 ML-KEM.KeyGen_internal), for known
/// answers and compact key storage. The seed is secret: anyone holding it holds the decapsulation key.
///
/// # Safety
/// `seed` readable for `seed_len` bytes; `ek` and `dk` writable for their lengths; no overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_mlkem_keygen_from_seed(
    alg_id: u32,
    seed: *const u8,
    seed_len: usize,
    ek: *mut u8,
    ek_len: usize,
    dk: *mut u8,
    dk_len: usize,
) -> PqkitStatus {
    // SAFETY: the caller's contract is keygen_entry's.
    unsafe { keygen_entry::<Kem>(alg_id, Some((seed, seed_len)), (ek, ek_len), (dk, dk_len)) }
}

fn kem_encaps<P: mlkem::Params>(ek: &[u8], ct: &mut [u8], ss: &mut [u8]) -> FfiResult<()> {
    pqkit::Error::check_length(P::NAME, "ciphertext output", P::CT_LEN, ct.len())?;
    pqkit::Error::check_length(P::NAME, "shared secret output", PQKIT_MLKEM_SHARED_SECRET_LEN, ss.len())?;
    let ek = mlkem::EncapsulationKey::<P>::from_bytes(ek)?;
    let (c, k) = ek.encapsulate()?;
    ct.copy_from_slice(c.as_bytes());
    ss.copy_from_slice(k.as_bytes());
    Ok(())
}

/// Encapsulates to the encapsulation key `ek` (checked as FIPS 203 §7.2 requires; a malformed key is
/// `PQKIT_STATUS_INVALID_ENCODING`): writes the ciphertext to `ct` and the 32-byte shared secret to `ss`.
///
/// # Safety
/// `ek` readable for `ek_len` bytes; `ct` and `ss` writable for their lengths; no overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_mlkem_encapsulate(
    alg_id: u32,
    ek: *const u8,
    ek_len: usize,
    ct: *mut u8,
    ct_len: usize,
    ss: *mut u8,
    ss_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the three buffers, outputs not overlapping anything.
        let (ek, ct, ss) = unsafe { (input(ek, ek_len, "ek")?, output(ct, ct_len, "ct")?, output(ss, ss_len, "ss")?) };
        with_kem!(alg_id, kem_encaps(ek, ct, ss))
    })
}

fn kem_decaps<P: mlkem::Params>(dk: &[u8], ct: &[u8], ss: &mut [u8]) -> FfiResult<()> {
    pqkit::Error::check_length(P::NAME, "shared secret output", PQKIT_MLKEM_SHARED_SECRET_LEN, ss.len())?;
    let dk = mlkem::DecapsulationKey::<P>::from_bytes(dk)?;
    let ct = mlkem::Ciphertext::<P>::from_bytes(ct)?;
    ss.copy_from_slice(dk.decapsulate(&ct).as_bytes());
    Ok(())
}

/// Decapsulates `ct` with the decapsulation key `dk` and writes the 32-byte shared secret to `ss`.
///
/// Security contract: ML-KEM rejects implicitly: a modified ciphertext gives `PQKIT_STATUS_OK` and a
/// pseudorandom secret unrelated to the sender's, so the protocol on top must authenticate (e.g. use the
/// secret as an AEAD key). Wrong lengths are `PQKIT_STATUS_INVALID_LENGTH`; a `dk` failing its hash check is
/// `PQKIT_STATUS_INVALID_ENCODING`.
///
/// # Safety
/// `dk` and `ct` readable for their lengths; `ss` writable for `ss_len`; no overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_mlkem_decapsulate(
    alg_id: u32,
    dk: *const u8,
    dk_len: usize,
    ct: *const u8,
    ct_len: usize,
    ss: *mut u8,
    ss_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the three buffers, ss not overlapping the inputs.
        let (dk, ct, ss) = unsafe { (input(dk, dk_len, "dk")?, input(ct, ct_len, "ct")?, output(ss, ss_len, "ss")?) };
        with_kem!(alg_id, kem_decaps(dk, ct, ss))
    })
}

/// Writes the public-key, secret-key and signature lengths of ML-DSA `alg_id`.
///
/// # Safety
/// Each pointer must be NULL or valid for a `size_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_mldsa_lengths(
    alg_id: u32,
    pk_len: *mut usize,
    sk_len: *mut usize,
    sig_len: *mut usize,
) -> PqkitStatus {
    // SAFETY: the caller's contract is lengths_entry's.
    unsafe { lengths_entry::<Dsa>(alg_id, [pk_len, sk_len, sig_len]) }
}

/// Generates an ML-DSA key pair from the OS's randomness: writes the public key to `pk` and the secret key to
/// `sk`, each exactly its length (see [`pqkit_mldsa_lengths`]).
///
/// # Safety
/// `pk` and `sk` writable for their lengths, not overlapping.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_mldsa_keygen(
    alg_id: u32,
    pk: *mut u8,
    pk_len: usize,
    sk: *mut u8,
    sk_len: usize,
) -> PqkitStatus {
    // SAFETY: the caller's contract is keygen_entry's.
    unsafe { keygen_entry::<Dsa>(alg_id, None, (pk, pk_len), (sk, sk_len)) }
}

/// Derives an ML-DSA key pair from a 32-byte seed ξ (FIPS 204 ML-DSA.KeyGen_internal). The seed is secret.
///
/// # Safety
/// `seed` readable for `seed_len` bytes; `pk` and `sk` writable for their lengths; no overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_mldsa_keygen_from_seed(
    alg_id: u32,
    seed: *const u8,
    seed_len: usize,
    pk: *mut u8,
    pk_len: usize,
    sk: *mut u8,
    sk_len: usize,
) -> PqkitStatus {
    // SAFETY: the caller's contract is keygen_entry's.
    unsafe { keygen_entry::<Dsa>(alg_id, Some((seed, seed_len)), (pk, pk_len), (sk, sk_len)) }
}

fn dsa_sign<P: mldsa::Params>(sk: &[u8], msg: &[u8], ctx: &[u8], det: bool, sig: &mut [u8]) -> FfiResult<()> {
    pqkit::Error::check_length(P::NAME, "signature output", P::SIG_LEN, sig.len())?;
    let sk = mldsa::SigningKey::<P>::from_bytes(sk)?;
    let s = if det { sk.sign_deterministic(msg, ctx)? } else { sk.sign(msg, ctx)? };
    sig.copy_from_slice(s.as_bytes());
    Ok(())
}

/// Signs `msg` with context string `ctx` (0 to 255 bytes) under the secret key `sk` (FIPS 204 ML-DSA.Sign,
/// hedged with fresh OS randomness when `deterministic` is 0, rnd = 0 otherwise) and writes the signature to
/// `sig` (exactly the signature length).
///
/// # Safety
/// `sk`, `msg`, `ctx` readable for their lengths (or NULL with 0); `sig` writable for `sig_len`; no overlap.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_mldsa_sign(
    alg_id: u32,
    sk: *const u8,
    sk_len: usize,
    msg: *const u8,
    msg_len: usize,
    ctx: *const u8,
    ctx_len: usize,
    deterministic: i32,
    sig: *mut u8,
    sig_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every buffer, sig not overlapping the inputs.
        let (sk, msg, ctx, sig) = unsafe {
            (
                input(sk, sk_len, "sk")?,
                input(msg, msg_len, "message")?,
                input(ctx, ctx_len, "context")?,
                output(sig, sig_len, "sig")?,
            )
        };
        with_dsa!(alg_id, dsa_sign(sk, msg, ctx, deterministic != 0, sig)).inspect_err(|_| sig.zeroize())
    })
}

fn dsa_verify<P: mldsa::Params>(pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> FfiResult<()> {
    let pk = mldsa::VerifyingKey::<P>::from_bytes(pk)?;
    let sig = mldsa::Signature::<P>::from_bytes(sig)?;
    pk.verify(msg, ctx, &sig)?;
    Ok(())
}

/// Verifies the signature `sig` of `msg` with context `ctx` under the public key `pk`: `PQKIT_STATUS_OK` if
/// valid, `PQKIT_STATUS_AUTHENTICATION_FAILED` if not, `PQKIT_STATUS_INVALID_LENGTH` or
/// `PQKIT_STATUS_INVALID_ENCODING` for a key or signature that cannot be one.
///
/// # Safety
/// Every buffer readable for its length, or NULL with length 0.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_mldsa_verify(
    alg_id: u32,
    pk: *const u8,
    pk_len: usize,
    msg: *const u8,
    msg_len: usize,
    ctx: *const u8,
    ctx_len: usize,
    sig: *const u8,
    sig_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees every buffer.
        let (pk, msg, ctx, sig) = unsafe {
            (
                input(pk, pk_len, "pk")?,
                input(msg, msg_len, "message")?,
                input(ctx, ctx_len, "context")?,
                input(sig, sig_len, "sig")?,
            )
        };
        with_dsa!(alg_id, dsa_verify(pk, msg, ctx, sig))
    })
}
