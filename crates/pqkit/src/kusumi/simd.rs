//! The word-sliced Kusumi512 body, written once for any vector width: `N` blocks at a time, one vector register
//! per state word, lane `i` belonging to block `counter + i`.
//!
//! [`Lanes`] is the handful of vector operations the body needs. `avx2.rs` implements it for `__m256i` (N = 8)
//! and `avx512.rs` for `__m512i` (N = 16); each has one thin `#[target_feature]` entry point that calls
//! [`xor_chunks`] and [`xor_padded`] here. Everything here is `#[inline(always)]`, so the body is compiled into
//! each entry point with that entry point's instruction set, as if it had been written there.
//!
//! After the 10 passes and the feed-forward, the 25 word registers are turned into block order a group of `N`
//! words at a time ([`Lanes::transpose`]: words 0..7, 8..15, 16..23 for N = 8; words 0..15 for N = 16), each
//! group row XORed into the data with one unaligned load and store; the words left over (25 mod N: word 24, or
//! words 16..24) go through [`Lanes::rest`] and [`Lanes::xor_rest`], which each width does its own way.
//!
//! [`xor_stitched`] is the AEAD's one-pass loop: while the vector units compute a chunk's keystream, the chunk
//! before it (already encrypted) goes to a scalar job ([`super::Stitch`], Poly1305) in [`STITCH_STEP`]-byte
//! steps placed between the quarter rounds ([`Side`]), so that the integer units hash while the vector units
//! compute.
#![allow(unsafe_code)]

use super::soft::SIGMA;
use super::{BLOCK, STITCH_STEP, Stitch};

/// Scalar work placed between the quarter rounds of one chunk: step `k` of `N * BLOCK / STITCH_STEP` (10 for
/// N = 8, after each pass; 20 for N = 16, after the eighth and the last quarter round of each pass).
pub(super) trait Side {
    /// Runs step `k`.
    fn step(&mut self, k: usize);
}

/// No scalar work: the plain keystream loop.
pub(super) struct NoSide;

impl Side for NoSide {
    #[inline(always)]
    fn step(&mut self, _k: usize) {}
}

/// Hands the job the `N * BLOCK` bytes of `region`, [`STITCH_STEP`] at a time, step `k` taking bytes
/// `k * STITCH_STEP ..`.
struct Hash<'a, J: Stitch> {
    region: &'a [u8],
    job: &'a mut J,
}

impl<J: Stitch> Side for Hash<'_, J> {
    #[inline(always)]
    fn step(&mut self, k: usize) {
        let s: &[u8; STITCH_STEP] =
            self.region[k * STITCH_STEP..(k + 1) * STITCH_STEP].try_into().expect("a step is STITCH_STEP bytes");
        self.job.step(s);
    }
}

/// Hands the job the bytes of `region` (a multiple of [`STITCH_STEP`], shorter than a chunk) one step at a time,
/// step `k` taking bytes `k * STITCH_STEP ..` while there are any; the later steps do nothing.
struct Lead<'a, J: Stitch> {
    region: &'a [u8],
    job: &'a mut J,
}

impl<J: Stitch> Side for Lead<'_, J> {
    #[inline(always)]
    fn step(&mut self, k: usize) {
        if let Some(s) = self.region.get(k * STITCH_STEP..(k + 1) * STITCH_STEP) {
            self.job.step(s.try_into().expect("a step is STITCH_STEP bytes"));
        }
    }
}

/// A vector of `N` 32-bit lanes and the operations the Kusumi512 body performs on it.
///
/// # Safety
/// Every method runs instructions of its implementation's instruction set (AVX2 for `__m256i`, AVX-512F for
/// `__m512i`) without being compiled for it: the caller must make sure the CPU has it, and should call only from
/// a `#[target_feature]` function enabling it, into which the methods (`#[inline(always)]`) then inline.
/// Pointers passed must be valid for the bytes named in each method.
pub(super) trait Lanes<const N: usize>: Copy {
    /// The leftover words (25 mod `N` of them), prepared for XORing into each block.
    type Rest;
    /// Every lane `x`.
    unsafe fn splat(x: u32) -> Self;
    /// `N` words from the `4 * N` bytes at `p` (unaligned), lane `i` from bytes `4i .. 4i + 4`, little-endian.
    unsafe fn load(p: *const u8) -> Self;
    /// Stores the lanes to the `4 * N` bytes at `p` (unaligned), the inverse of [`Lanes::load`].
    unsafe fn store(self, p: *mut u8);
    /// Lane-wise addition mod 2^32.
    unsafe fn add(self, other: Self) -> Self;
    /// Lane-wise XOR.
    unsafe fn xor(self, other: Self) -> Self;
    /// Lane-wise rotation left by `R` bits (the body uses 16, 12, 8 and 7).
    unsafe fn rotl<const R: i32>(self) -> Self;
    /// `N`×`N` transpose: lane `b` of `rows[j]` becomes lane `j` of output `b`.
    unsafe fn transpose(rows: &[Self; N]) -> [Self; N];
    /// Prepares the leftover words `words` (25 mod `N` registers, in word order) for [`Lanes::xor_rest`].
    unsafe fn rest(words: &[Self]) -> Self::Rest;
    /// XORs block `blk`'s leftover words (`4 * (25 mod N)` bytes) into the bytes at `p`.
    unsafe fn xor_rest(rest: &Self::Rest, blk: usize, p: *mut u8);
}

macro_rules! qr {
    ($s:ident, $a:literal, $b:literal, $c:literal, $d:literal) => {
        $s[$a] = $s[$a].add($s[$b]);
        $s[$d] = $s[$d].xor($s[$a]).rotl::<16>();
        $s[$c] = $s[$c].add($s[$d]);
        $s[$b] = $s[$b].xor($s[$c]).rotl::<12>();
        $s[$a] = $s[$a].add($s[$b]);
        $s[$d] = $s[$d].xor($s[$a]).rotl::<8>();
        $s[$c] = $s[$c].add($s[$d]);
        $s[$b] = $s[$b].xor($s[$c]).rotl::<7>();
    };
}

/// The quarter rounds of the first pass whose inputs are the same in every lane when the `N` counters share their
/// high word (word 21): the four columns, extension 1 less `QR(16,20,0,4)` (word 20 is the counter's low word),
/// and the diagonals `QR(1,6,11,12)` and `QR(2,7,8,13)`. Nine of the pass's 17 quarter rounds, run once on the
/// integer units instead of in every lane. Every quarter round left out touches words this one does not (or runs
/// after it in the specification's order and only reads its results), so [`first_pass_rest`] completes the pass
/// exactly.
#[inline(always)]
fn first_pass_uniform(u: &mut [u32; 25]) {
    use super::soft::qr as q;
    q(u, 0, 4, 8, 12);
    q(u, 1, 5, 9, 13);
    q(u, 2, 6, 10, 14);
    q(u, 3, 7, 11, 15);
    q(u, 17, 21, 1, 5);
    q(u, 18, 22, 2, 6);
    q(u, 19, 23, 3, 7);
    q(u, 1, 6, 11, 12);
    q(u, 2, 7, 8, 13);
}

/// The `N` blocks' state after the 10 passes and the feed-forward (word `j` of block `counter + i` in lane `i`
/// of register `j`; counters wrap), running `side`'s steps between the quarter rounds.
///
/// When the `N` counters share their high word, the first pass's quarter rounds that do not depend on the lane
/// ([`first_pass_uniform`]) run once in scalar code and only the other eight run in the vector registers.
///
/// # Safety
/// The CPU has the instruction set of `V`'s [`Lanes`] implementation.
#[inline(always)]
unsafe fn rounds<V: Lanes<N>, const N: usize, S: Side>(
    key: &[u32; 16],
    nonce: &[u32; 3],
    counter: u64,
    side: &mut S,
) -> [V; 25] {
    const { assert!(N == 8 || N == 16) };
    let mut lo = [0u32; N];
    let mut hi = [0u32; N];
    for i in 0..N {
        let c = counter.wrapping_add(i as u64);
        lo[i] = c as u32;
        hi[i] = (c >> 32) as u32;
    }
    let mut init = [0u32; 25];
    init[..4].copy_from_slice(&SIGMA);
    init[4..20].copy_from_slice(key);
    init[22..25].copy_from_slice(nonce);
    // The counters are public; branching on whether their high words agree leaks nothing secret.
    let uniform = hi[0] == hi[N - 1];
    // SAFETY: the CPU has `V`'s instruction set (the caller's contract). `lo` and `hi` are `N` words, one vector
    // each.
    unsafe {
        let ctr_lo = V::load(lo.as_ptr().cast());
        let ctr_hi = V::load(hi.as_ptr().cast());
        let mut s = [ctr_lo; 25];
        let first = if uniform {
            let mut u = init;
            u[21] = hi[0];
            first_pass_uniform(&mut u);
            for (j, w) in s.iter_mut().enumerate() {
                if j != 20 {
                    *w = V::splat(u[j]);
                }
            }
            crate::ct::wipe(&mut u);
            // The rest of pass 1, in the specification's order.
            qr!(s, 16, 20, 0, 4);
            if N == 16 {
                side.step(0);
            }
            qr!(s, 0, 5, 10, 15);
            qr!(s, 3, 4, 9, 14);
            qr!(s, 16, 21, 2, 7);
            qr!(s, 17, 22, 3, 4);
            qr!(s, 18, 23, 0, 5);
            qr!(s, 19, 20, 1, 6);
            qr!(s, 19, 24, 0, 5);
            side.step(if N == 16 { 1 } else { 0 });
            1
        } else {
            for (j, w) in s.iter_mut().enumerate() {
                if j != 20 && j != 21 {
                    *w = V::splat(init[j]);
                }
            }
            s[21] = ctr_hi;
            0
        };
        for pass in first..10 {
            qr!(s, 0, 4, 8, 12);
            qr!(s, 1, 5, 9, 13);
            qr!(s, 2, 6, 10, 14);
            qr!(s, 3, 7, 11, 15);
            qr!(s, 16, 20, 0, 4);
            qr!(s, 17, 21, 1, 5);
            qr!(s, 18, 22, 2, 6);
            qr!(s, 19, 23, 3, 7);
            if N == 16 {
                side.step(2 * pass);
            }
            qr!(s, 0, 5, 10, 15);
            qr!(s, 1, 6, 11, 12);
            qr!(s, 2, 7, 8, 13);
            qr!(s, 3, 4, 9, 14);
            qr!(s, 16, 21, 2, 7);
            qr!(s, 17, 22, 3, 4);
            qr!(s, 18, 23, 0, 5);
            qr!(s, 19, 20, 1, 6);
            qr!(s, 19, 24, 0, 5);
            side.step(if N == 16 { 2 * pass + 1 } else { pass });
        }
        for (j, w) in s.iter_mut().enumerate() {
            let add = match j {
                20 => ctr_lo,
                21 => ctr_hi,
                _ => V::splat(init[j]),
            };
            *w = w.add(add);
        }
        s
    }
}

/// XORs the keystream of `N` blocks (state `s`, from [`rounds`]) into the 100 bytes at `dst(blk)` for each lane
/// `blk` that has a destination; lanes whose `dst` is `None` are discarded.
///
/// # Safety
/// The CPU has the instruction set of `V`'s [`Lanes`] implementation; every pointer `dst` returns is valid for
/// `BLOCK` bytes.
#[inline(always)]
unsafe fn xor_out<V: Lanes<N>, const N: usize>(s: &[V; 25], dst: impl Fn(usize) -> Option<*mut u8>) {
    // The leftover words start at `full * N`; their bytes at `4 * full * N` in each block.
    let full = 25 / N;
    // SAFETY: the CPU has `V`'s instruction set (the caller's contract). Each destination block is valid for
    // `BLOCK` bytes: group `g`'s row covers `4 * N * g .. 4 * N * (g + 1)` of it and the leftover words the last
    // `4 * (25 - full * N)` bytes, all in bounds.
    unsafe {
        for g in 0..full {
            let rows: &[V; N] = s[g * N..(g + 1) * N].try_into().expect("a group is N words");
            for (blk, ks) in V::transpose(rows).into_iter().enumerate() {
                if let Some(b) = dst(blk) {
                    let q = b.add(4 * N * g);
                    ks.xor(V::load(q)).store(q);
                }
            }
        }
        let rest = V::rest(&s[full * N..]);
        for blk in 0..N {
            if let Some(b) = dst(blk) {
                V::xor_rest(&rest, blk, b.add(4 * N * full));
            }
        }
    }
}

/// Computes blocks `counter .. counter + N` (counters wrap) and XORs them into `chunk`, exactly `N` blocks,
/// running `side`'s steps between the quarter rounds.
///
/// # Safety
/// The CPU has the instruction set of `V`'s [`Lanes`] implementation.
#[inline(always)]
unsafe fn xor_chunk<V: Lanes<N>, const N: usize, S: Side>(
    key: &[u32; 16],
    nonce: &[u32; 3],
    counter: u64,
    chunk: &mut [u8],
    side: &mut S,
) {
    assert_eq!(chunk.len(), N * BLOCK);
    // SAFETY: the CPU has `V`'s instruction set (the caller's contract); `chunk` is `N` whole blocks (asserted).
    unsafe {
        let s = rounds::<V, N, S>(key, nonce, counter, side);
        let p = chunk.as_mut_ptr();
        // Block `blk < N` is inside the chunk's `N * BLOCK` bytes.
        xor_out::<V, N>(&s, |blk| (blk < N).then(|| p.wrapping_add(blk * BLOCK)));
    }
}

/// XORs the keystream of blocks `counter, counter + 1, ...` into the whole `N`-block chunks at the start of
/// `data`; returns the counter after them and what is left of `data` (less than `N` blocks).
///
/// # Safety
/// The CPU has the instruction set of `V`'s [`Lanes`] implementation.
#[inline(always)]
pub(super) unsafe fn xor_chunks<'a, V: Lanes<N>, const N: usize>(
    key: &[u32; 16],
    nonce: &[u32; 3],
    counter: u64,
    data: &'a mut [u8],
) -> (u64, &'a mut [u8]) {
    let mut ctr = counter;
    let mut chunks = data.chunks_exact_mut(N * BLOCK);
    for chunk in &mut chunks {
        // SAFETY: the CPU has `V`'s instruction set (the caller's contract).
        unsafe { xor_chunk::<V, N, _>(key, nonce, ctr, chunk, &mut NoSide) };
        ctr = ctr.wrapping_add(N as u64);
    }
    (ctr, chunks.into_remainder())
}

/// XORs the keystream of blocks `counter, counter + 1, ...` into `tail` (at most `N` blocks) with one `N`-lane
/// batch, straight into `tail`'s whole blocks (no stack copy). The unused lanes compute blocks past the end
/// (wrapping counters), whose keystream is discarded, except that when `tail` ends inside a block, that whole
/// block's keystream is written to `last` (so the caller's next call, which starts inside it, need not compute
/// it again) and the function returns true.
///
/// # Safety
/// The CPU has the instruction set of `V`'s [`Lanes`] implementation.
#[inline(always)]
pub(super) unsafe fn xor_padded<V: Lanes<N>, const N: usize>(
    key: &[u32; 16],
    nonce: &[u32; 3],
    counter: u64,
    tail: &mut [u8],
    last: &mut [u8; BLOCK],
) -> bool {
    let len = tail.len();
    assert!(len <= N * BLOCK);
    let (whole, partial) = (len / BLOCK, len % BLOCK);
    let part = if partial != 0 {
        last.fill(0);
        Some(last.as_mut_ptr())
    } else {
        None
    };
    // SAFETY: the CPU has `V`'s instruction set (the caller's contract). `tail` holds `whole` whole blocks;
    // `part` (only when `partial != 0`, so `whole < N`) is the zeroed 100-byte `last`.
    unsafe {
        let s = rounds::<V, N, _>(key, nonce, counter, &mut NoSide);
        let p = tail.as_mut_ptr();
        xor_out::<V, N>(&s, |blk| match blk {
            // Block `blk < whole` is inside `tail`'s `whole * BLOCK` bytes.
            b if b < whole => Some(p.wrapping_add(b * BLOCK)),
            b if b == whole => part,
            _ => None,
        });
    }
    if partial != 0 {
        for (d, k) in tail[whole * BLOCK..].iter_mut().zip(last.iter()) {
            *d ^= k;
        }
    }
    partial != 0
}

/// The AEAD's first batch: block 0 (the Poly1305 key) and the first blocks of the message in one `N`-lane batch.
/// Writes block 0's keystream to `block0`, and XORs blocks `1 .. N` into `head` (at most `N - 1` blocks) straight
/// in place, as [`xor_padded`] does from counter 1: when `head` ends inside a block, that block's keystream is
/// written to `last` and the function returns true.
///
/// # Safety
/// The CPU has the instruction set of `V`'s [`Lanes`] implementation.
#[inline(always)]
pub(super) unsafe fn xor_head<V: Lanes<N>, const N: usize>(
    key: &[u32; 16],
    nonce: &[u32; 3],
    head: &mut [u8],
    block0: &mut [u8; BLOCK],
    last: &mut [u8; BLOCK],
) -> bool {
    let len = head.len();
    assert!(len <= (N - 1) * BLOCK);
    let (whole, partial) = (len / BLOCK, len % BLOCK);
    block0.fill(0);
    let b0 = block0.as_mut_ptr();
    let part = if partial != 0 {
        last.fill(0);
        Some(last.as_mut_ptr())
    } else {
        None
    };
    // SAFETY: the CPU has `V`'s instruction set (the caller's contract). Lane 0 goes to the zeroed 100-byte
    // `block0`, lanes `1 ..= whole` to `head`'s whole blocks, lane `whole + 1` (only when `partial != 0`, so
    // `whole + 1 < N`) to the zeroed 100-byte `last`.
    unsafe {
        let s = rounds::<V, N, _>(key, nonce, 0, &mut NoSide);
        let p = head.as_mut_ptr();
        xor_out::<V, N>(&s, |blk| match blk {
            0 => Some(b0),
            b if b <= whole => Some(p.wrapping_add((b - 1) * BLOCK)),
            b if b == whole + 1 => part,
            _ => None,
        });
    }
    if partial != 0 {
        for (d, k) in head[whole * BLOCK..].iter_mut().zip(last.iter()) {
            *d ^= k;
        }
    }
    partial != 0
}

/// The AEAD's stitched pass: XORs the keystream of blocks `counter, counter + 1, ...` into the `chunks` whole
/// `N`-block chunks of `data` that start at byte `lead`, and, while computing chunk `i >= 1`, gives `job` the
/// `N * BLOCK` bytes of `data` starting at `base + (i - 1) * N * BLOCK` (all written before: the first `lead`
/// bytes, already encrypted by the caller, and chunk `i - 1`), where `base` is `lead` rounded down to a multiple
/// of [`STITCH_STEP`]; while computing chunk 0 it gives the job `data[..base]`, the caller's bytes. So the job
/// sees `data[.. base + (chunks - 1) * N * BLOCK]` in order; the caller hashes the rest.
///
/// # Safety
/// The CPU has the instruction set of `V`'s [`Lanes`] implementation.
#[inline(always)]
pub(super) unsafe fn xor_stitched<V: Lanes<N>, const N: usize, J: Stitch>(
    key: &[u32; 16],
    nonce: &[u32; 3],
    counter: u64,
    data: &mut [u8],
    lead: usize,
    chunks: usize,
    job: &mut J,
) {
    let ch = N * BLOCK;
    assert!(lead < ch && lead + chunks * ch <= data.len());
    let base = lead - lead % STITCH_STEP;
    for i in 0..chunks {
        let (done, todo) = data.split_at_mut(lead + i * ch);
        let chunk = &mut todo[..ch];
        let ctr = counter.wrapping_add((i * N) as u64);
        if i == 0 {
            // The caller's `lead` bytes, `base / STITCH_STEP` steps (fewer than the chunk's `ch / STITCH_STEP`).
            let mut side = Lead { region: &done[..base], job: &mut *job };
            // SAFETY: the CPU has `V`'s instruction set (the caller's contract).
            unsafe { xor_chunk::<V, N, _>(key, nonce, ctr, chunk, &mut side) };
        } else {
            let mut side = Hash { region: &done[base + (i - 1) * ch..base + i * ch], job: &mut *job };
            // SAFETY: as above.
            unsafe { xor_chunk::<V, N, _>(key, nonce, ctr, chunk, &mut side) };
        }
    }
}
