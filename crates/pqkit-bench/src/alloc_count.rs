//! A counting global allocator: every allocation (and growing reallocation) made by the current thread is
//! counted, calls and bytes. Counters are thread-local, so the progress bar's thread or rayon workers do not
//! pollute a measurement taken on the main thread.
//!
//! Counting runs on separate, untimed executions of an operation: the timed loops never read the counters.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The allocator installed by this crate: the system allocator plus thread-local counters.
pub struct Counting;

thread_local! {
    static CALLS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

#[inline]
fn note(bytes: usize) {
    // `try_with` never panics, even during thread teardown.
    let _ = CALLS.try_with(|c| c.set(c.get() + 1));
    let _ = BYTES.try_with(|b| b.set(b.get() + bytes as u64));
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; counting only touches
// const-initialised thread-local cells, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded contract.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// This thread's allocation counters: (calls, bytes) since the thread started.
pub fn snapshot() -> (u64, u64) {
    (CALLS.with(Cell::get), BYTES.with(Cell::get))
}

/// Runs `f` and returns what it allocated on this thread: (calls, bytes).
pub fn count<R>(f: impl FnOnce() -> R) -> ((u64, u64), R) {
    let (c0, b0) = snapshot();
    let r = f();
    let (c1, b1) = snapshot();
    ((c1 - c0, b1 - b0), r)
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_a_vec() {
        let ((calls, bytes), v) = super::count(|| std::hint::black_box(vec![0u8; 1000]));
        assert_eq!(calls, 1);
        assert_eq!(bytes, 1000);
        drop(v);
        let ((calls, _), _) = super::count(|| std::hint::black_box(1 + 1));
        assert_eq!(calls, 0);
    }
}
