//! Constant-time helpers shared by every family.

/// Compares two byte strings in time that depends only on their lengths, never on their contents.
///
/// Lengths are public (a tag's length is part of the algorithm), so unequal lengths return `false` at once.
#[inline(never)]
pub fn eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut acc = 0u8;
    for (x, y) in a.iter().zip(b) {
        acc |= x ^ y;
    }
    // Stop the optimiser from turning the fold into an early-exit comparison.
    core::hint::black_box(acc) == 0
}

/// A public decision on a secret-derived value: returns `v` unchanged, and states that `v` is public by design
/// (a tag check's outcome, a rejection-sampling decision, a validity verdict returned as an error, an output).
/// Every branch or memory index on data derived from secrets must go through this call, at the decision itself,
/// with a comment saying why the value is public. Constant-time validation (`.ci/ct.sh`, crate `pqkit-ct`) builds
/// the library with `--cfg pqkit_ct_check`, where this marks `v` defined for valgrind's memcheck (the
/// declassification of BoringSSL's `CONSTTIME_DECLASSIFY`); any other branch on secret data fails the job. In
/// normal builds it is `core::hint::black_box`: the optimiser cannot move secret-dependent work across it.
#[inline(always)]
pub(crate) fn declassify<T: Copy>(v: T) -> T {
    #[cfg(all(pqkit_ct_check, target_arch = "x86_64"))]
    {
        valgrind::declassify(v)
    }
    #[cfg(not(all(pqkit_ct_check, target_arch = "x86_64")))]
    {
        core::hint::black_box(v)
    }
}

/// [`declassify`] for values in memory (e.g. a signature component about to be encoded): the memory of `v` is
/// public from here on. A no-op in normal builds.
#[inline(always)]
pub(crate) fn declassify_ref<T: ?Sized>(v: &T) {
    #[cfg(all(pqkit_ct_check, target_arch = "x86_64"))]
    valgrind::make_defined(v);
    #[cfg(not(all(pqkit_ct_check, target_arch = "x86_64")))]
    let _ = v;
}

/// The converse of [`declassify_ref`]: the memory of `v` is secret from here on. For secrets a function makes
/// itself rather than receives (RSA's blinding factors, drawn from the OS), so that the constant-time job
/// checks their handling too. A no-op in normal builds.
// Used by RSA only, which needs `alloc`.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
#[inline(always)]
pub(crate) fn classify_ref<T: ?Sized>(v: &T) {
    #[cfg(all(pqkit_ct_check, target_arch = "x86_64"))]
    valgrind::make_undefined(v);
    #[cfg(not(all(pqkit_ct_check, target_arch = "x86_64")))]
    let _ = v;
}

/// Valgrind's `MAKE_MEM_DEFINED` client request (valgrind.h's documented x86_64 protocol: the preamble of four
/// `rol rdi` summing to 128 bits, then `xchg rbx, rbx`; `rax` points at the request block, the result comes
/// back in `rdx`). Outside valgrind the sequence is a no-op. Compiled only with `--cfg pqkit_ct_check`.
#[cfg(all(pqkit_ct_check, target_arch = "x86_64"))]
#[allow(unsafe_code)]
mod valgrind {
    /// `VG_USERREQ_TOOL_BASE('M', 'C') + 2`: `VG_USERREQ__MAKE_MEM_DEFINED`.
    const MAKE_MEM_DEFINED: u64 = (((b'M' as u64) << 24) | ((b'C' as u64) << 16)) + 2;

    /// `VG_USERREQ_TOOL_BASE('M', 'C') + 1`: `VG_USERREQ__MAKE_MEM_UNDEFINED`.
    const MAKE_MEM_UNDEFINED: u64 = (((b'M' as u64) << 24) | ((b'C' as u64) << 16)) + 1;

    #[inline(never)]
    pub(super) fn make_defined<T: ?Sized>(v: &T) {
        request(MAKE_MEM_DEFINED, v);
    }

    #[inline(never)]
    pub(super) fn make_undefined<T: ?Sized>(v: &T) {
        request(MAKE_MEM_UNDEFINED, v);
    }

    /// A memcheck request on the memory of `v`.
    #[inline(always)]
    fn request<T: ?Sized>(code: u64, v: &T) {
        call([code, v as *const T as *const u8 as u64, core::mem::size_of_val(v) as u64, 0, 0, 0]);
    }

    /// `VG_USERREQ__RUNNING_ON_VALGRIND` (core request 0x1001): non-zero under valgrind.
    pub(crate) fn running_on_valgrind() -> bool {
        call([0x1001, 0, 0, 0, 0, 0]) != 0
    }

    /// Issues the client request `block` (request, arguments) and returns valgrind's answer (0 outside valgrind).
    #[inline(always)]
    fn call(block: [u64; 6]) -> u64 {
        let result: u64;
        // SAFETY: the sequence rotates rdi by 128 bits in total (leaving it unchanged), exchanges rbx with itself
        // and reads the six-word block through rax (a valid pointer to `block`, which outlives the asm); it writes
        // rdx (declared) and the flags. Under valgrind a memory request changes only memcheck's shadow state of the
        // described range; no memory is written. Not `nomem`: ordered with the surrounding memory accesses.
        unsafe {
            core::arch::asm!(
                "rol rdi, 3",
                "rol rdi, 13",
                "rol rdi, 61",
                "rol rdi, 51",
                "xchg rbx, rbx",
                in("rax") block.as_ptr(),
                inout("rdx") 0u64 => result,
                options(nostack),
            );
        }
        result
    }

    #[inline(never)]
    pub(super) fn declassify<T: Copy>(v: T) -> T {
        let mut x = v;
        make_defined(&x);
        // The request may have changed `x` as far as the compiler knows (its address escaped into the asm's
        // block): the value is reloaded from memory, now defined.
        core::hint::black_box(&mut x);
        x
    }
}

/// Whether the process runs under valgrind (the constant-time job's build only).
#[cfg(all(pqkit_ct_check, target_arch = "x86_64"))]
pub(crate) fn running_on_valgrind() -> bool {
    valgrind::running_on_valgrind()
}

/// Returns `a` if `choice` is 1 and `b` if it is 0, without a branch on `choice`.
#[inline]
pub fn select_u32(choice: u32, a: u32, b: u32) -> u32 {
    let mask = 0u32.wrapping_sub(core::hint::black_box(choice) & 1);
    (a & mask) | (b & !mask)
}

/// Overwrites `b` with zeros in a way the optimiser must keep: plain (vectorised) stores, then the buffer
/// escapes through `black_box` behind a compiler fence, so the stores cannot be dropped as dead. Far cheaper
/// than `zeroize`'s per-element volatile loop on short-message hot paths (HMAC key pads, SHA-2 padding blocks,
/// HKDF intermediates, Argon2 scratch), and used for the same purpose: wiping secrets no longer needed.
#[inline(always)]
pub(crate) fn wipe<T: Copy + Default>(b: &mut [T]) {
    b.fill(T::default());
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    core::hint::black_box(&mut *b);
}

/// A 32-byte shared secret (ML-KEM's, X25519's). Zeroized on drop; compared in constant time; `Debug` prints
/// nothing. Feed it to a KDF (HKDF) rather than using it as a key directly.
#[derive(Clone)]
pub struct SharedSecret(pub(crate) [u8; 32]);

impl SharedSecret {
    /// The secret bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl PartialEq for SharedSecret {
    fn eq(&self, other: &Self) -> bool {
        eq(&self.0, &other.0)
    }
}
impl Eq for SharedSecret {}

impl core::fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SharedSecret { .. }")
    }
}

impl zeroize::Zeroize for SharedSecret {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

impl Drop for SharedSecret {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

impl zeroize::ZeroizeOnDrop for SharedSecret {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wipe_zeroes_every_element() {
        let mut b = [0xa5u8; 131];
        wipe(&mut b[..]);
        assert!(b.iter().all(|&x| x == 0));
        let mut w = [u64::MAX; 9];
        wipe(&mut w[3..]);
        assert_eq!(&w[..3], &[u64::MAX; 3]);
        assert!(w[3..].iter().all(|&x| x == 0));
    }

    #[test]
    fn eq_detects_every_single_bit_flip() {
        let a = [0x5au8; 33];
        assert!(eq(&a, &a));
        for i in 0..a.len() {
            for bit in 0..8 {
                let mut b = a;
                b[i] ^= 1 << bit;
                assert!(!eq(&a, &b));
            }
        }
        assert!(!eq(&a, &a[..32]));
        assert!(eq(&[], &[]));
    }

    #[test]
    fn select() {
        assert_eq!(select_u32(1, 7, 9), 7);
        assert_eq!(select_u32(0, 7, 9), 9);
    }
}
