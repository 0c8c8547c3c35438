//! HPKE (RFC 9180, and the post-quantum KEMs of draft-ietf-hpke-pq): key pairs as bytes, sender and
//! recipient contexts behind one opaque handle, the four modes, seal / open and secret export. Suites are
//! given by their IANA ids: KEM 0x0020 (DHKEM X25519), 0x0040-0x0042 (ML-KEM-512/768/1024), 0x647a (X-Wing);
//! KDF 0x0001-0x0003 (HKDF-SHA256/384/512), 0x0011 (SHAKE256); AEAD 0x0001 (AES-128-GCM), 0x0002
//! (AES-256-GCM), 0x0003 (ChaCha20-Poly1305), 0xffff (export only).

use crate::{Fail, FfiResult, PqkitStatus, emit, guard, guard_free, handle, input, new_handle, output, write_out};
use pqkit::hpke::{Kem, PrivateKey, PublicKey, RecipientContext, RecipientMode, SenderContext, SenderMode, Suite};

/// HPKE mode ids (RFC 9180 §5).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PqkitHpkeModeId {
    /// mode_base.
    Base = 0,
    /// mode_psk: a pre-shared key (at least 32 bytes) and its non-empty id.
    Psk = 1,
    /// mode_auth: the sender's key authenticates (DHKEM X25519 only).
    Auth = 2,
    /// mode_auth_psk.
    AuthPsk = 3,
}

/// The mode of a context and its inputs. `mode` is a [`PqkitHpkeModeId`]; `psk` and `psk_id` are used by the
/// PSK modes; `auth_key` is the sender's private key (for the sender) or public key (for the recipient) in
/// the auth modes, as the bytes [`pqkit_hpke_generate_key_pair`] writes. Unused fields must be NULL with
/// length 0. A NULL `PqkitHpkeMode *` means mode_base.
#[repr(C)]
pub struct PqkitHpkeMode {
    /// A [`PqkitHpkeModeId`].
    pub mode: u32,
    /// The pre-shared key.
    pub psk: *const u8,
    /// Its length.
    pub psk_len: usize,
    /// The pre-shared key's id.
    pub psk_id: *const u8,
    /// Its length.
    pub psk_id_len: usize,
    /// The sender's private key (sender side) or public key (recipient side).
    pub auth_key: *const u8,
    /// Its length.
    pub auth_key_len: usize,
}

/// An HPKE context (opaque): a sender's (seal, export) or a recipient's (open, export). Made by
/// [`pqkit_hpke_sender_new`] or [`pqkit_hpke_recipient_new`], released (and its keys wiped) by
/// [`pqkit_hpke_context_free`].
pub struct PqkitHpkeContext {
    ctx: Context,
}

enum Context {
    Sender(SenderContext),
    Recipient(RecipientContext),
}

fn suite(kem: u32, kdf: u32, aead: u32) -> FfiResult<Suite> {
    let id = |v: u32, what: &str| u16::try_from(v).map_err(|_| crate::unknown_alg(what, v));
    Suite::from_ids(id(kem, "HPKE KEM")?, id(kdf, "HPKE KDF")?, id(aead, "HPKE AEAD")?)
        .map_err(|e| Fail::new(PqkitStatus::UnknownAlgorithm, e.to_string()))
}

fn kem(id: u32) -> FfiResult<Kem> {
    let v = u16::try_from(id).map_err(|_| crate::unknown_alg("HPKE KEM", id))?;
    Kem::from_id(v).map_err(|e| Fail::new(PqkitStatus::UnknownAlgorithm, e.to_string()))
}

/// The borrowed inputs of a `PqkitHpkeMode`.
struct ModeInputs<'a> {
    mode: u32,
    psk: &'a [u8],
    psk_id: &'a [u8],
    auth_key: &'a [u8],
}

/// # Safety
/// `m` NULL or valid for reads of a `PqkitHpkeMode` whose buffers are readable for their lengths for `'a`.
unsafe fn mode_inputs<'a>(m: *const PqkitHpkeMode) -> FfiResult<ModeInputs<'a>> {
    // SAFETY: by this function's contract m is NULL or valid for reads.
    let Some(m) = (unsafe { m.as_ref() }) else {
        return Ok(ModeInputs { mode: 0, psk: &[], psk_id: &[], auth_key: &[] });
    };
    if m.mode > 3 {
        return Err(crate::unknown_alg("HPKE mode", m.mode));
    }
    // SAFETY: the buffers are readable for their lengths (this function's contract).
    unsafe {
        Ok(ModeInputs {
            mode: m.mode,
            psk: input(m.psk, m.psk_len, "psk")?,
            psk_id: input(m.psk_id, m.psk_id_len, "psk_id")?,
            auth_key: input(m.auth_key, m.auth_key_len, "auth_key")?,
        })
    }
}

/// Writes the private-key, public-key and `enc` lengths of the KEM `kem_id`; NULL refused before any write.
///
/// # Safety
/// Each pointer NULL or valid for a `size_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hpke_kem_lengths(
    kem_id: u32,
    sk_len: *mut usize,
    pk_len: *mut usize,
    enc_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        let k = kem(kem_id)?;
        let outs = [(sk_len, "sk_len"), (pk_len, "pk_len"), (enc_len, "enc_len")];
        for (p, name) in outs {
            crate::check_out(p, name)?;
        }
        for ((p, name), v) in outs.into_iter().zip([k.private_key_len(), k.public_key_len(), k.enc_len()]) {
            // SAFETY: not NULL (checked) and valid for a size_t write (caller's contract).
            unsafe { write_out(p, v, name)? };
        }
        Ok(())
    })
}

fn write_pair(sk: &PrivateKey, pk: &PublicKey, sk_out: &mut [u8], pk_out: &mut [u8]) -> FfiResult<()> {
    let s = sk.to_bytes();
    pqkit::Error::check_length("HPKE", "private key output", s.len(), sk_out.len())?;
    pqkit::Error::check_length("HPKE", "public key output", pk.as_bytes().len(), pk_out.len())?;
    sk_out.copy_from_slice(&s);
    pk_out.copy_from_slice(pk.as_bytes());
    Ok(())
}

/// Generates a key pair of the KEM `kem_id` from the operating system's randomness: the private key (secret)
/// to `sk`, the public key to `pk`, each exactly its length ([`pqkit_hpke_kem_lengths`]).
///
/// # Safety
/// `sk` and `pk` writable for their lengths, not overlapping.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hpke_generate_key_pair(
    kem_id: u32,
    sk: *mut u8,
    sk_len: usize,
    pk: *mut u8,
    pk_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees both buffers.
        let (sk_out, pk_out) = unsafe { (output(sk, sk_len, "sk")?, output(pk, pk_len, "pk")?) };
        let (s, p) = kem(kem_id)?.generate_key_pair()?;
        write_pair(&s, &p, sk_out, pk_out)
    })
}

/// `DeriveKeyPair` (RFC 9180 §7.1.3): the key pair of the KEM `kem_id` for the input keying material `ikm`
/// (at least as many bytes as the private key's security level needs; secret).
///
/// # Safety
/// `ikm` readable; `sk` and `pk` writable for their lengths; no overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hpke_derive_key_pair(
    kem_id: u32,
    ikm: *const u8,
    ikm_len: usize,
    sk: *mut u8,
    sk_len: usize,
    pk: *mut u8,
    pk_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the three buffers.
        let (ikm, sk_out, pk_out) =
            unsafe { (input(ikm, ikm_len, "ikm")?, output(sk, sk_len, "sk")?, output(pk, pk_len, "pk")?) };
        let (s, p) = kem(kem_id)?.derive_key_pair(ikm)?;
        write_pair(&s, &p, sk_out, pk_out)
    })
}

/// Sets up a sender (RFC 9180 `SetupBaseS` / `SetupPSKS` / `SetupAuthS` / `SetupAuthPSKS`) for the suite
/// (`kem_id`, `kdf_id`, `aead_id`), the recipient's public key `pk_r`, `info` and `mode` (NULL: base): writes
/// the encapsulated key to `enc` (capacity `enc_cap`, length to `*enc_len`; `PQKIT_STATUS_BUFFER_TOO_SMALL`
/// with the size needed, and no context, if too small) and the context's handle to `*out`. An unknown id is
/// `PQKIT_STATUS_UNKNOWN_ALGORITHM`; a PSK shorter than 32 bytes is `PQKIT_STATUS_INVALID_LENGTH`; a PSK
/// without its id, or an auth mode with a KEM that has none (only DHKEM X25519 has) is
/// `PQKIT_STATUS_INVALID_PARAMETER`.
///
/// # Safety
/// `pk_r` and `info` readable; `mode` NULL or valid with readable buffers; `enc` writable for `enc_cap`;
/// `enc_len` and `out` valid for writes.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_hpke_sender_new(
    kem_id: u32,
    kdf_id: u32,
    aead_id: u32,
    pk_r: *const u8,
    pk_r_len: usize,
    info: *const u8,
    info_len: usize,
    mode: *const PqkitHpkeMode,
    enc: *mut u8,
    enc_cap: usize,
    enc_len: *mut usize,
    out: *mut *mut PqkitHpkeContext,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the buffers and the mode.
        let (pk_r, info, m) =
            unsafe { (input(pk_r, pk_r_len, "pk_r")?, input(info, info_len, "info")?, mode_inputs(mode)?) };
        crate::check_out(enc_len, "enc_len")?;
        crate::check_out(out, "handle out-pointer")?;
        let s = suite(kem_id, kdf_id, aead_id)?;
        let k = kem(kem_id)?;
        let pk_r = PublicKey::from_bytes(k, pk_r)?;
        let sk_s = if matches!(m.mode, 2 | 3) { Some(PrivateKey::from_bytes(k, m.auth_key)?) } else { None };
        let sender_mode = match (m.mode, &sk_s) {
            (1, _) => SenderMode::Psk { psk: m.psk, psk_id: m.psk_id },
            (2, Some(sk_s)) => SenderMode::Auth { sk_s },
            (3, Some(sk_s)) => SenderMode::AuthPsk { sk_s, psk: m.psk, psk_id: m.psk_id },
            _ => SenderMode::Base,
        };
        // SAFETY: enc_len is not NULL (checked) and valid for a write (caller's contract).
        unsafe { room(k.enc_len(), enc_cap, enc_len, "HPKE enc output")? };
        let (e, ctx) = s.setup_sender(&pk_r, info, sender_mode)?;
        // SAFETY: the caller guarantees enc and enc_len.
        unsafe { emit(&e, enc, enc_cap, enc_len, "HPKE enc output")? };
        // SAFETY: out is valid for a pointer write (caller's contract).
        unsafe { new_handle(out, PqkitHpkeContext { ctx: Context::Sender(ctx) }) }
    })
}

/// Sets up a recipient (`SetupBaseR` ... `SetupAuthPSKR`) for the suite, the encapsulated key `enc`, the
/// recipient's private key `sk_r`, `info` and `mode` (NULL: base; in the auth modes `auth_key` is the sender's
/// public key) and writes the context's handle to `*out`.
///
/// # Safety
/// `enc`, `sk_r` and `info` readable; `mode` NULL or valid with readable buffers; `out` valid for a write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_hpke_recipient_new(
    kem_id: u32,
    kdf_id: u32,
    aead_id: u32,
    enc: *const u8,
    enc_len: usize,
    sk_r: *const u8,
    sk_r_len: usize,
    info: *const u8,
    info_len: usize,
    mode: *const PqkitHpkeMode,
    out: *mut *mut PqkitHpkeContext,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the buffers and the mode.
        let (enc, sk_r, info, m) = unsafe {
            (
                input(enc, enc_len, "enc")?,
                input(sk_r, sk_r_len, "sk_r")?,
                input(info, info_len, "info")?,
                mode_inputs(mode)?,
            )
        };
        crate::check_out(out, "handle out-pointer")?;
        let s = suite(kem_id, kdf_id, aead_id)?;
        let k = kem(kem_id)?;
        let sk_r = PrivateKey::from_bytes(k, sk_r)?;
        let pk_s = if matches!(m.mode, 2 | 3) { Some(PublicKey::from_bytes(k, m.auth_key)?) } else { None };
        let recipient_mode = match (m.mode, &pk_s) {
            (1, _) => RecipientMode::Psk { psk: m.psk, psk_id: m.psk_id },
            (2, Some(pk_s)) => RecipientMode::Auth { pk_s },
            (3, Some(pk_s)) => RecipientMode::AuthPsk { pk_s, psk: m.psk, psk_id: m.psk_id },
            _ => RecipientMode::Base,
        };
        let ctx = s.setup_recipient(enc, &sk_r, info, recipient_mode)?;
        // SAFETY: out is valid for a pointer write (caller's contract).
        unsafe { new_handle(out, PqkitHpkeContext { ctx: Context::Recipient(ctx) }) }
    })
}

/// Refuses, before any work, an output capacity below `needed`, writing `needed` to `*len` so the caller
/// can retry.
///
/// # Safety
/// `len` must be valid for a `size_t` write (not NULL: the callers check it first).
unsafe fn room(needed: usize, cap: usize, len: *mut usize, what: &str) -> FfiResult<()> {
    if cap < needed {
        // SAFETY: by this function's contract.
        unsafe { write_out(len, needed, "out_len")? };
        return Err(crate::too_small(what, needed, cap));
    }
    Ok(())
}

fn wrong_side(what: &str) -> Fail {
    Fail::new(PqkitStatus::BadState, format!("pqkit HPKE: {what}"))
}

/// Seals `pt` with `aad` under the sender context `ctx` (the next sequence number): writes `ciphertext || tag`
/// (`pt_len` + 16 bytes) to `out` and its length to `*out_len`. A recipient context is
/// `PQKIT_STATUS_BAD_STATE`; an export-only suite is `PQKIT_STATUS_INVALID_PARAMETER`.
///
/// # Safety
/// `ctx` a live handle; `aad` and `pt` readable; `out` writable for `out_cap`; `out_len` valid for a write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_hpke_seal(
    ctx: *mut PqkitHpkeContext,
    aad: *const u8,
    aad_len: usize,
    pt: *const u8,
    pt_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and buffers.
        let (c, aad, pt) = unsafe { (handle(ctx)?, input(aad, aad_len, "aad")?, input(pt, pt_len, "plaintext")?) };
        crate::check_out(out_len, "out_len")?;
        let Context::Sender(s) = &mut c.ctx else {
            return Err(wrong_side("a recipient context opens; it cannot seal"));
        };
        // SAFETY: out_len is not NULL (checked) and valid for a write (caller's contract).
        unsafe { room(pt.len().saturating_add(16), out_cap, out_len, "HPKE seal output")? };
        let sealed = s.seal(aad, pt)?;
        // SAFETY: the caller guarantees out and out_len.
        unsafe { emit(&sealed, out, out_cap, out_len, "HPKE seal output") }
    })
}

/// Opens `ct` (`ciphertext || tag`) with `aad` under the recipient context `ctx`: writes the plaintext to
/// `out` and its length to `*out_len`. A wrong key, aad, order or modified data is
/// `PQKIT_STATUS_AUTHENTICATION_FAILED` with nothing written (the sequence number does not advance).
///
/// # Safety
/// `ctx` a live handle; `aad` and `ct` readable; `out` writable for `out_cap`; `out_len` valid for a write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pqkit_hpke_open(
    ctx: *mut PqkitHpkeContext,
    aad: *const u8,
    aad_len: usize,
    ct: *const u8,
    ct_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and buffers.
        let (c, aad, ct) = unsafe { (handle(ctx)?, input(aad, aad_len, "aad")?, input(ct, ct_len, "ciphertext")?) };
        crate::check_out(out_len, "out_len")?;
        let Context::Recipient(r) = &mut c.ctx else {
            return Err(wrong_side("a sender context seals; it cannot open"));
        };
        // SAFETY: as in pqkit_hpke_seal.
        unsafe { room(ct.len().saturating_sub(16), out_cap, out_len, "HPKE open output")? };
        let pt = zeroize::Zeroizing::new(r.open(aad, ct)?);
        // SAFETY: the caller guarantees out and out_len.
        unsafe { emit(&pt, out, out_cap, out_len, "HPKE open output") }
    })
}

/// `Export` (RFC 9180 §5.3): writes `out_len` bytes of secret derived from the context and
/// `exporter_context` to `out` (at most 255 hash lengths for the HKDF suites). Sender and recipient of one
/// exchange export the same bytes.
///
/// # Safety
/// `ctx` a live handle; `exporter_context` readable; `out` writable for `out_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hpke_export(
    ctx: *mut PqkitHpkeContext,
    exporter_context: *const u8,
    exporter_context_len: usize,
    out: *mut u8,
    out_len: usize,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and buffers.
        let (c, ec, out) = unsafe {
            (
                handle(ctx)?,
                input(exporter_context, exporter_context_len, "exporter_context")?,
                output(out, out_len, "out")?,
            )
        };
        let secret = match &c.ctx {
            Context::Sender(s) => s.export(ec, out.len())?,
            Context::Recipient(r) => r.export(ec, out.len())?,
        };
        out.copy_from_slice(&secret);
        Ok(())
    })
}

/// Releases an HPKE context and wipes its keys. NULL does nothing.
///
/// # Safety
/// `ctx` NULL or a live handle, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_hpke_context_free(ctx: *mut PqkitHpkeContext) {
    // SAFETY: the caller's contract is free_handle's.
    guard_free(|| unsafe { crate::free_handle(ctx) })
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_out_of_u16_range_are_unknown() {
        assert_eq!(super::kem(0x1_0020).err().map(|f| f.status), Some(crate::PqkitStatus::UnknownAlgorithm));
        assert!(super::suite(0x20, 1, 1).is_ok());
    }
}
