//! `StreamWriter` allocates a buffer sized to the writes it sees (at most its maximum), not its maximum up front.
//! Its buffer is wiped before it is freed. This file is its own test binary because it installs a global
//! allocator that records the largest single allocation made by the current thread, and inspects freed blocks.
#![cfg(feature = "std")]

use pqkit::chacha::ChaCha20;
use pqkit::cipher::{STREAM_BUFFER_MAX, StreamCipher, StreamWriter};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;

struct Largest;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; recording touches only
// const-initialised thread-local cells, which never allocate, and `dealloc` reads the block before freeing it.
unsafe impl GlobalAlloc for Largest {
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
        // SAFETY: `ptr` is a live block of `layout.size()` bytes until it is handed back below.
        unsafe { inspect(ptr, layout.size()) };
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
static GLOBAL: Largest = Largest;

/// The largest single allocation `f` makes on this thread.
fn largest_allocation(f: impl FnOnce()) -> usize {
    LARGEST.with(|l| l.set(0));
    f();
    LARGEST.with(Cell::get)
}

const KEY: [u8; 32] = [7; 32];
const NONCE: [u8; 12] = [9; 12];

#[test]
fn short_writes_allocate_short_buffers() {
    let data: Vec<u8> = (0..1024u32).map(|i| (i * 31) as u8).collect();
    let mut want = data.clone();
    ChaCha20::new(&KEY, &NONCE).unwrap().apply_keystream(&mut want).unwrap();
    let mut out = Vec::with_capacity(4096);
    let cipher = ChaCha20::new(&KEY, &NONCE).unwrap();
    let largest = largest_allocation(|| {
        let mut w = StreamWriter::new(&mut out, cipher);
        w.write_all(&data).unwrap();
        w.flush().unwrap();
    });
    assert_eq!(out, want);
    assert!(largest <= data.len(), "a 1 KiB write through StreamWriter allocated {largest} bytes at once");
    assert!(STREAM_BUFFER_MAX > 2 * data.len(), "the test needs a maximum well above its write");
}

#[test]
fn growing_writes_stay_within_the_maximum_and_equal_one_shot() {
    let sizes = [1usize, 100, 3000, 2999, 70_000, 5, 200_000];
    let total: usize = sizes.iter().sum();
    let data: Vec<u8> = (0..total as u32).map(|i| (i * 7 + 3) as u8).collect();
    let mut want = data.clone();
    ChaCha20::new(&KEY, &NONCE).unwrap().apply_keystream(&mut want).unwrap();
    for max in [1usize, 1000, 4096, STREAM_BUFFER_MAX] {
        let mut out = Vec::with_capacity(total + 1024);
        let cipher = ChaCha20::new(&KEY, &NONCE).unwrap();
        let largest = largest_allocation(|| {
            let mut w = StreamWriter::with_buffer_size(&mut out, cipher, max);
            let mut at = 0;
            for n in sizes {
                w.write_all(&data[at..at + n]).unwrap();
                at += n;
            }
            w.flush().unwrap();
        });
        assert!(out == want, "buffer maximum {max}: streamed output differs from one-shot");
        assert!(largest <= max, "buffer maximum {max}: allocated {largest} bytes at once");
    }
}

thread_local! {
    /// While nonzero: the size of the freed blocks to inspect, and how many of them held a nonzero byte.
    static WATCH: Cell<usize> = const { Cell::new(0) };
    static FREED: Cell<usize> = const { Cell::new(0) };
    static DIRTY: Cell<usize> = const { Cell::new(0) };
}

/// Called by `dealloc` before the block goes back to `System`: counts freed blocks of the watched size, and
/// those of them not wiped.
///
/// # Safety
/// `ptr` points to `size` readable bytes.
unsafe fn inspect(ptr: *const u8, size: usize) {
    let watched = WATCH.try_with(Cell::get).unwrap_or(0);
    if watched != 0 && (size == watched || size == watched / 2) {
        // SAFETY: the caller's contract.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, size) };
        let _ = FREED.try_with(|c| c.set(c.get() + 1));
        if bytes.iter().any(|&b| b != 0) {
            let _ = DIRTY.try_with(|c| c.set(c.get() + 1));
        }
    }
}

/// Decrypting through a writer leaves plaintext in its buffer; both buffers it lets go (the one a larger write
/// replaces, and the last one, with the writer) are wiped before they are freed.
#[test]
fn the_buffer_is_wiped_when_replaced_and_when_dropped() {
    const MAX: usize = 778; // an unusual size: no other block of this size or half of it is freed meanwhile
    let plain = vec![0xa5u8; MAX / 2 + MAX];
    let mut ct = plain.clone();
    ChaCha20::new(&KEY, &NONCE).unwrap().apply_keystream(&mut ct).unwrap();
    let mut out = Vec::with_capacity(4 * MAX);
    WATCH.with(|w| w.set(MAX));
    FREED.with(|c| c.set(0));
    DIRTY.with(|c| c.set(0));
    {
        let mut w = StreamWriter::with_buffer_size(&mut out, ChaCha20::new(&KEY, &NONCE).unwrap(), MAX);
        // A write of MAX/2 allocates MAX/2; the next, of MAX, replaces it with a buffer of MAX.
        w.write_all(&ct[..MAX / 2]).unwrap();
        w.write_all(&ct[MAX / 2..]).unwrap();
    }
    WATCH.with(|w| w.set(0));
    assert!(out == plain, "decrypted through the writer");
    assert_eq!(FREED.with(Cell::get), 2, "the replaced buffer and the last one are freed");
    assert_eq!(DIRTY.with(Cell::get), 0, "a freed buffer still held plaintext");
}
