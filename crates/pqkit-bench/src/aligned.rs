//! [`AlignedBuf`]: the harness's input/output buffer, 64-byte aligned for every implementation alike.
//!
//! A `Vec<u8>` is only as aligned as `malloc` makes it: 16 bytes with glibc, and for large buffers (which
//! glibc serves with `mmap`) always 16 bytes past a page boundary. Which offset a candidate got would then
//! depend on heap history, and a SIMD loop that prefers aligned 64-byte lines could win or lose by luck. Every
//! buffer the harness hands to an operation as `data` is therefore an `AlignedBuf`, whose first byte sits on a
//! 64-byte boundary (a cache line, and the width of a ZMM register).
#![allow(unsafe_code)]

use std::alloc::{Layout, alloc_zeroed, dealloc, handle_alloc_error};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// The alignment of every [`AlignedBuf`], in bytes.
pub const ALIGN: usize = 64;

/// A fixed-length, heap-allocated, zero-initialised byte buffer whose start is [`ALIGN`]-byte aligned.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: `AlignedBuf` owns its allocation exclusively (like `Box<[u8]>`); `&AlignedBuf` only gives `&[u8]`.
unsafe impl Send for AlignedBuf {}
// SAFETY: as above; shared references allow no mutation.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    fn layout(len: usize) -> Layout {
        // A zero-size allocation is not allowed; allocate one line for empty buffers. ALIGN is a power of two and
        // `len` is bounded by what the caller could already hold in memory, so this cannot fail in practice.
        Layout::from_size_align(len.max(1), ALIGN).unwrap_or_else(|_| panic!("AlignedBuf of {len} bytes"))
    }

    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> Self {
        let layout = Self::layout(len);
        // SAFETY: `layout` has a non-zero size.
        let p = unsafe { alloc_zeroed(layout) };
        match NonNull::new(p) {
            Some(ptr) => AlignedBuf { ptr, len },
            None => handle_alloc_error(layout),
        }
    }

    /// A copy of `bytes`.
    pub fn from_slice(bytes: &[u8]) -> Self {
        let mut b = Self::zeroed(bytes.len());
        b.copy_from_slice(bytes);
        b
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to an allocation of at least `len` initialised (zeroed, then written) bytes that
        // this value owns for its whole life.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Clone for AlignedBuf {
    fn clone(&self) -> Self {
        Self::from_slice(self)
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` was returned by `alloc_zeroed` with exactly this layout and is freed only here.
        unsafe { dealloc(self.ptr.as_ptr(), Self::layout(self.len)) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_at_every_size_and_holds_its_bytes() {
        // Sizes that glibc serves from the small bins, the large bins and mmap.
        let mut keep = Vec::new();
        for len in [0usize, 1, 63, 64, 65, 1000, 4096, 100_000, 1 << 20, (10 << 20) + 3] {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let mut b = AlignedBuf::from_slice(&src);
            assert_eq!(b.as_ptr() as usize % ALIGN, 0, "{len} bytes");
            assert_eq!(&*b, &src[..]);
            if len > 0 {
                b[len - 1] ^= 0xff;
                assert_ne!(&*b, &src[..]);
            }
            let c = b.clone();
            assert_eq!(c.as_ptr() as usize % ALIGN, 0);
            assert_eq!(&*c, &*b);
            assert!(AlignedBuf::zeroed(len).iter().all(|&x| x == 0));
            keep.push(b); // several live at once, so later ones do not simply reuse a freed block
        }
    }
}
