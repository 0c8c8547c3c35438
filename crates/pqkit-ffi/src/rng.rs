//! Randomness: the OS generator and the ChaCha20 CSPRNG.

use crate::{PqkitStatus, guard, guard_free, input, output};
use pqkit::rng::ChaCha20Rng;

/// Fills `out` with `out_len` bytes from the operating system's random number generator
/// (`PQKIT_STATUS_RNG_FAILURE` if it fails; `out` is then unspecified and must not be used).
///
/// # Safety
/// `out` writable for `out_len` bytes (or NULL with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_random_bytes(out: *mut u8, out_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the buffer.
        let out = unsafe { output(out, out_len, "out") }?;
        pqkit::rng::fill_os(out)?;
        Ok(())
    })
}

/// A ChaCha20 CSPRNG (opaque). Its state is wiped by [`pqkit_rng_free`].
pub struct PqkitRng {
    rng: ChaCha20Rng,
}

/// Creates a ChaCha20 CSPRNG seeded from the operating system and writes its handle to `*out`.
///
/// # Safety
/// `out` NULL or valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_rng_new(out: *mut *mut PqkitRng) -> PqkitStatus {
    guard(|| {
        crate::check_out(out, "out")?;
        let rng = ChaCha20Rng::from_os_rng()?;
        // SAFETY: out is valid for a pointer write by the caller's contract.
        unsafe { crate::new_handle(out, PqkitRng { rng }) }
    })
}

/// Creates a ChaCha20 CSPRNG keyed by a 32-byte `seed` (stream 0): the same seed always gives the same
/// output, so use it only for reproducible tests or with a seed that is itself a fresh secret.
///
/// # Safety
/// `seed` readable for `seed_len` bytes; `out` NULL or valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_rng_new_from_seed(
    seed: *const u8,
    seed_len: usize,
    out: *mut *mut PqkitRng,
) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the seed buffer.
        let seed = unsafe { input(seed, seed_len, "seed") }?;
        pqkit::Error::check_length("ChaCha20Rng", "seed", 32, seed.len())?;
        crate::check_out(out, "out")?;
        let mut key = zeroize::Zeroizing::new([0u8; 32]);
        key.copy_from_slice(seed);
        let rng = ChaCha20Rng::from_key(*key);
        // SAFETY: out is valid for a pointer write by the caller's contract.
        unsafe { crate::new_handle(out, PqkitRng { rng }) }
    })
}

/// Fills `out` with the generator's next `out_len` bytes.
///
/// # Safety
/// `rng` a live handle; `out` writable for `out_len` bytes (or NULL with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_rng_fill(rng: *mut PqkitRng, out: *mut u8, out_len: usize) -> PqkitStatus {
    guard(|| {
        // SAFETY: the caller guarantees the handle and the buffer.
        let (h, out) = unsafe { (crate::handle(rng)?, output(out, out_len, "out")?) };
        h.rng.fill(out);
        Ok(())
    })
}

/// Frees a generator, wiping its state. NULL does nothing.
///
/// # Safety
/// `rng` must be NULL or a live handle, not used again afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqkit_rng_free(rng: *mut PqkitRng) {
    // SAFETY: by the caller's contract rng is NULL or a live handle freed only here.
    guard_free(|| unsafe { crate::free_handle(rng) })
}
