//! `StreamWriter` allocates a buffer sized to the writes it sees (at most its maximum), not its maximum up front.
//! This file is its own test binary because it installs a global allocator that records the largest single
//! allocation made by the current thread.
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

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; recording touches only a
// const-initialised thread-local cell, which never allocates.
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
