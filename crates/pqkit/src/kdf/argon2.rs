//! Argon2id (RFC 9106, version 0x13): the memory-hard password hash, on pqkit's own BLAKE2b.
//!
//! ```
//! use pqkit::kdf::argon2::{Argon2id, Params};
//! let params = Params::new(64, 1, 1).unwrap(); // 64 KiB, 1 pass, 1 lane: test-sized, far too weak for real use
//! let mut key = [0u8; 32];
//! Argon2id::new(params).hash(b"password", b"somesalt", &mut key).unwrap();
//! ```
//!
//! ## What is implemented
//! - `H'`, the variable-length BLAKE2b hash (RFC 9106 §3.3);
//! - the compression function `G` over 1 KiB blocks with the BlaMka mixing `GB` (§3.5, §3.6);
//! - Argon2id indexing (§3.4): data-independent addresses (Argon2i style) for the first two slices of the
//!   first pass, data-dependent ones (Argon2d style) afterwards;
//! - lanes (`p`), passes (`t`) and memory (`m` KiB); version 0x13, which XORs the new block into the old one
//!   from the second pass on.
//!
//! With the `std` feature the lanes of each slice are filled on up to `min(p, cores)` threads (scoped
//! threads, only for at least 1 MiB of memory); without it they are filled one after another. The result
//! is the same either way.
//!
//! ## Security contract
//! - Parameters are validated ([`Params::new`]): `m >= 8 * p` KiB, `t >= 1`, `1 <= p <= 2^24 - 1`; the salt
//!   must be at least 8 bytes and the output at least 4 bytes. Invalid input gives
//!   [`Error::InvalidParameter`] or [`Error::InvalidLength`], never a panic. A memory size the allocator
//!   refuses gives [`Error::InvalidParameter`] as well.
//! - Pick the costs for your machine: RFC 9106 §4 recommends `t = 1, m = 2 GiB` first and
//!   `t = 3, m = 64 MiB` second (both with `p = 4`).
//! - The working memory holds password-derived data and is wiped on drop. Argon2id's second half uses
//!   data-dependent memory addressing by design (that is what resists GPU attacks); the first half is
//!   data-independent, as RFC 9106 specifies.

use crate::dispatch::Checked;
use crate::error::Expected;
use crate::hash::blake2::Blake2b;
use crate::{Error, Result};
use alloc::vec::Vec;
use zeroize::Zeroize;

const NAME: &str = "Argon2id";
/// Argon2 version implemented (RFC 9106 is version 0x13).
pub const VERSION: u32 = 0x13;
/// The Argon2 type id of Argon2id (`y = 2`).
const TYPE_ID: u32 = 2;
/// Words per 1 KiB block.
const QWORDS: usize = 128;
/// Slices per pass (`SL` in the RFC).
const SYNC_POINTS: u32 = 4;

/// Smallest salt accepted, in bytes (RFC 9106 §3.1).
pub const MIN_SALT_LEN: usize = 8;
/// Smallest output accepted, in bytes (RFC 9106 §3.1).
pub const MIN_OUTPUT_LEN: usize = 4;
/// Largest lane count (`2^24 - 1`).
pub const MAX_LANES: u32 = (1 << 24) - 1;

type Block = [u64; QWORDS];

/// Argon2id cost parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    m_cost: u32,
    t_cost: u32,
    p_cost: u32,
}

impl Params {
    /// `m_cost`: memory in KiB (at least `8 * p_cost`); `t_cost`: passes (at least 1); `p_cost`: lanes
    /// (1 to `2^24 - 1`).
    pub fn new(m_cost: u32, t_cost: u32, p_cost: u32) -> Result<Self> {
        if p_cost == 0 || p_cost > MAX_LANES {
            return Err(Error::InvalidParameter { algorithm: NAME, reason: "parallelism must be 1 to 2^24 - 1 lanes" });
        }
        if t_cost == 0 {
            return Err(Error::InvalidParameter { algorithm: NAME, reason: "the number of passes must be at least 1" });
        }
        if (m_cost as u64) < 8 * p_cost as u64 {
            return Err(Error::InvalidParameter { algorithm: NAME, reason: "memory must be at least 8 KiB per lane" });
        }
        Ok(Params { m_cost, t_cost, p_cost })
    }

    /// Memory cost in KiB.
    pub fn m_cost(&self) -> u32 {
        self.m_cost
    }
    /// Number of passes.
    pub fn t_cost(&self) -> u32 {
        self.t_cost
    }
    /// Number of lanes.
    pub fn p_cost(&self) -> u32 {
        self.p_cost
    }
}

/// Argon2id with fixed cost parameters.
#[derive(Clone, Copy, Debug)]
pub struct Argon2id {
    params: Params,
    backend: Checked<Backend>,
}

/// The working memory, wiped on drop.
struct Memory(Vec<Block>);

impl Drop for Memory {
    fn drop(&mut self) {
        // Memset-speed stores the optimiser must keep: a per-word volatile loop over megabytes costs several
        // percent of the whole hash.
        crate::ct::wipe(self.0.as_flattened_mut());
    }
}

/// The two temporaries of `G` (`R = X ^ Y` and the permuted `Z`), reused for every block and wiped once when
/// the owner is done rather than after every compression.
/// It also carries the backend, so `G` dispatches without threading it through every call.
struct Scratch {
    blocks: [Block; 2],
    backend: Checked<Backend>,
}
impl Scratch {
    fn new(backend: Checked<Backend>) -> Self {
        Scratch { blocks: [[0u64; QWORDS]; 2], backend }
    }
}
impl Drop for Scratch {
    fn drop(&mut self) {
        crate::ct::wipe(self.blocks.as_flattened_mut());
    }
}

crate::dispatch::backends! {
    /// Which implementation of the compression `G` runs: Argon2's entry in the one dispatch mechanism
    /// ([`crate::dispatch`]). (`H'` and `H0` run on BLAKE2b, which chooses its own backend.)
    #[doc(hidden)]
    pub enum Backend for "Argon2" {
        /// Portable Rust.
        Soft: [],
        /// AVX2: each permutation on four 256-bit vectors.
        Avx2: [AVX2],
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2;

/// A stack block that is wiped on drop.
struct TmpBlock(Block);
impl Drop for TmpBlock {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl Argon2id {
    /// Argon2id with `params`.
    pub fn new(params: Params) -> Self {
        Argon2id { params, backend: Backend::detect() }
    }

    /// Argon2id with `params` on a forced `backend` (tests run every backend through it), from
    /// `Backend::available()` or `Backend::X.checked()?`.
    #[doc(hidden)]
    pub fn with_backend(params: Params, backend: Checked<Backend>) -> Self {
        Argon2id { params, backend }
    }

    /// The parameters.
    pub fn params(&self) -> Params {
        self.params
    }

    /// Derives `out.len()` bytes from `password` and `salt` (no secret, no associated data).
    pub fn hash(&self, password: &[u8], salt: &[u8], out: &mut [u8]) -> Result<()> {
        self.hash_with(password, salt, &[], &[], out)
    }

    /// The full form: optional `secret` (key `K`) and associated data `X`, as in RFC 9106 §3.1.
    pub fn hash_with(&self, password: &[u8], salt: &[u8], secret: &[u8], ad: &[u8], out: &mut [u8]) -> Result<()> {
        if salt.len() < MIN_SALT_LEN {
            return Err(Error::InvalidLength {
                algorithm: NAME,
                field: "salt",
                expected: Expected::AtLeast(MIN_SALT_LEN),
                actual: salt.len(),
            });
        }
        if out.len() < MIN_OUTPUT_LEN || out.len() as u64 > u32::MAX as u64 {
            return Err(Error::InvalidLength {
                algorithm: NAME,
                field: "output",
                expected: Expected::AtLeast(MIN_OUTPUT_LEN),
                actual: out.len(),
            });
        }
        for (field, v) in [("password", password), ("salt", salt), ("secret", secret), ("associated data", ad)] {
            if v.len() as u64 > u32::MAX as u64 {
                return Err(Error::InvalidLength {
                    algorithm: NAME,
                    field,
                    expected: Expected::AtMost(u32::MAX as usize),
                    actual: v.len(),
                });
            }
        }
        let Params { m_cost, t_cost, p_cost } = self.params;
        let lanes = p_cost as usize;
        // m' = 4 p floor(m / 4p): a whole number of segments per lane.
        let m_blocks = (m_cost / (SYNC_POINTS * p_cost)) as usize * (SYNC_POINTS as usize * lanes);
        let lane_len = m_blocks / lanes;
        let seg_len = lane_len / SYNC_POINTS as usize;

        // H0.
        let mut h0 = [0u8; 64 + 8];
        {
            let mut h = blake2b(64)?;
            for w in [p_cost, out.len() as u32, m_cost, t_cost, VERSION, TYPE_ID] {
                h.update(&w.to_le_bytes());
            }
            for v in [password, salt, secret, ad] {
                h.update(&(v.len() as u32).to_le_bytes());
                h.update(v);
            }
            h.finalize_into(&mut h0[..64])?;
        }

        let mut v = Vec::new();
        if v.try_reserve_exact(m_blocks).is_err() {
            h0.zeroize();
            return Err(Error::InvalidParameter { algorithm: NAME, reason: "cannot allocate the requested memory" });
        }
        v.resize(m_blocks, [0u64; QWORDS]);
        let mut mem = Memory(v);

        // The first two blocks of every lane.
        let mut bytes = [0u8; 1024];
        for lane in 0..lanes {
            for col in 0..2u32 {
                h0[64..68].copy_from_slice(&col.to_le_bytes());
                h0[68..72].copy_from_slice(&(lane as u32).to_le_bytes());
                h_prime(&h0, &mut bytes)?;
                let blk = &mut mem.0[lane * lane_len + col as usize];
                for (w, c) in blk.iter_mut().zip(bytes.chunks_exact(8)) {
                    *w = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
                }
            }
        }
        h0.zeroize();
        bytes.zeroize();

        let ctx = Ctx { m_blocks: m_blocks as u64, t_cost: t_cost as u64, lanes, lane_len, seg_len };
        let threads = worker_threads(lanes, m_blocks);
        let mut scratch = Scratch::new(self.backend);
        for pass in 0..t_cost {
            for slice in 0..SYNC_POINTS {
                fill_slice(&ctx, &mut mem.0, pass, slice, threads, &mut scratch);
            }
        }
        drop(scratch);

        // Final block: XOR of the last column.
        let mut c = TmpBlock(mem.0[lane_len - 1]);
        for lane in 1..lanes {
            let last = &mem.0[lane * lane_len + lane_len - 1];
            for (a, b) in c.0.iter_mut().zip(last.iter()) {
                *a ^= b;
            }
        }
        drop(mem);
        let mut cb = [0u8; 1024];
        for (chunk, w) in cb.chunks_exact_mut(8).zip(c.0.iter()) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        let r = h_prime(&cb, out);
        cb.zeroize();
        r
    }
}

struct Ctx {
    m_blocks: u64,
    t_cost: u64,
    lanes: usize,
    lane_len: usize,
    seg_len: usize,
}

fn blake2b(len: usize) -> Result<Blake2b> {
    Blake2b::new(len)
}

/// `H'^T(X)` (RFC 9106 §3.3), `T = out.len()`.
fn h_prime(x: &[u8], out: &mut [u8]) -> Result<()> {
    let t = out.len();
    let tl = (t as u32).to_le_bytes();
    if t <= 64 {
        let mut h = blake2b(t)?;
        h.update(&tl).update(x);
        return h.finalize_into(out);
    }
    let r = t.div_ceil(32) - 2;
    let mut v = [0u8; 64];
    let mut h = blake2b(64)?;
    h.update(&tl).update(x);
    h.finalize_into(&mut v)?;
    out[..32].copy_from_slice(&v[..32]);
    for i in 1..r {
        let mut h = blake2b(64)?;
        h.update(&v);
        h.finalize_into(&mut v)?;
        out[32 * i..32 * i + 32].copy_from_slice(&v[..32]);
    }
    let last = t - 32 * r;
    let mut h = blake2b(last)?;
    h.update(&v);
    let res = h.finalize_into(&mut out[32 * r..]);
    v.zeroize();
    res
}

/// `GB` with the BlaMka multiplication: `a + b + 2 * lo32(a) * lo32(b)`.
#[inline(always)]
fn fbla(a: u64, b: u64) -> u64 {
    a.wrapping_add(b).wrapping_add(2u64.wrapping_mul(a & 0xffff_ffff).wrapping_mul(b & 0xffff_ffff))
}

#[inline(always)]
fn gb(v: &mut Block, a: usize, b: usize, c: usize, d: usize) {
    v[a] = fbla(v[a], v[b]);
    v[d] = (v[d] ^ v[a]).rotate_right(32);
    v[c] = fbla(v[c], v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(24);
    v[a] = fbla(v[a], v[b]);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = fbla(v[c], v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(63);
}

/// The permutation `P` on 16 words given by their indices into the block.
#[inline(always)]
fn permute(v: &mut Block, i: [usize; 16]) {
    gb(v, i[0], i[4], i[8], i[12]);
    gb(v, i[1], i[5], i[9], i[13]);
    gb(v, i[2], i[6], i[10], i[14]);
    gb(v, i[3], i[7], i[11], i[15]);
    gb(v, i[0], i[5], i[10], i[15]);
    gb(v, i[1], i[6], i[11], i[12]);
    gb(v, i[2], i[7], i[8], i[13]);
    gb(v, i[3], i[4], i[9], i[14]);
}

/// `G(X, Y)` (RFC 9106 §3.5). With `xor_into`, the result is XORed into `out` (version 0x13, passes after
/// the first); otherwise it replaces `out`. The temporaries live in `scratch` (wiped by its owner).
fn compress(out: &mut Block, x: &Block, y: &Block, xor_into: bool, scratch: &mut Scratch) {
    match scratch.backend.get() {
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => avx2::compress(scratch.backend, out, x, y, xor_into, &mut scratch.blocks),
        _ => compress_soft(out, x, y, xor_into, &mut scratch.blocks),
    }
}

/// The portable `G`.
fn compress_soft(out: &mut Block, x: &Block, y: &Block, xor_into: bool, scratch: &mut [Block; 2]) {
    let [r, z] = scratch;
    for ((r, x), y) in r.iter_mut().zip(x.iter()).zip(y.iter()) {
        *r = x ^ y;
    }
    *z = *r;
    // Rows: eight 128-byte rows, each 16 consecutive words.
    for row in 0..8 {
        let b = row * 16;
        permute(z, core::array::from_fn(|k| b + k));
    }
    // Columns: column j is the word pairs (2j, 2j+1) of every row.
    for col in 0..8 {
        let b = col * 2;
        permute(z, core::array::from_fn(|k| b + (k / 2) * 16 + (k % 2)));
    }
    if xor_into {
        for ((o, z), r) in out.iter_mut().zip(z.iter()).zip(r.iter()) {
            *o ^= z ^ r;
        }
    } else {
        for ((o, z), r) in out.iter_mut().zip(z.iter()).zip(r.iter()) {
            *o = z ^ r;
        }
    }
}

/// How many threads fill a slice: one per lane up to the core count, with `std`; else one.
#[cfg(feature = "std")]
fn worker_threads(lanes: usize, m_blocks: usize) -> usize {
    // Below ~1 MiB a thread costs more than it saves.
    if lanes < 2 || m_blocks < 1024 {
        return 1;
    }
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(lanes)
}

#[cfg(not(feature = "std"))]
fn worker_threads(_lanes: usize, _m_blocks: usize) -> usize {
    1
}

/// Where `fill_segment` reads finished blocks and writes the current one.
trait SegmentMem {
    /// The lane being filled.
    fn lane(&self) -> usize;
    /// A finished block (any lane's finished segments, or this segment's columns before the current one).
    fn get(&self, lane: usize, col: usize) -> &Block;
    /// `G` of the blocks at `prev` (this lane) and `(ref_lane, ref_col)` into column `col` of this lane.
    fn compress_into(&mut self, col: usize, prev: usize, ref_lane: usize, ref_col: usize, xor: bool, s: &mut Scratch);
}

/// One lane's view of memory while a slice is filled on worker threads: its own current segment mutably, and
/// every lane's finished segments (before and after the current slice) shared. Other lanes' current segments
/// are not visible, and Argon2's indexing never refers to them (RFC 9106 §3.4.2), so lanes run independently.
struct LaneView<'a, 'b> {
    lane: usize,
    seg_start: usize,
    cur: &'b mut [Block],
    shared: &'b [(&'a [Block], &'a [Block])],
}

impl SegmentMem for LaneView<'_, '_> {
    fn lane(&self) -> usize {
        self.lane
    }

    fn get(&self, lane: usize, col: usize) -> &Block {
        let seg_len = self.cur.len();
        if col < self.seg_start {
            &self.shared[lane].0[col]
        } else if col < self.seg_start + seg_len {
            debug_assert_eq!(lane, self.lane, "reference into another lane's current segment");
            &self.cur[col - self.seg_start]
        } else {
            &self.shared[lane].1[col - self.seg_start - seg_len]
        }
    }

    fn compress_into(&mut self, col: usize, prev: usize, ref_lane: usize, ref_col: usize, xor: bool, s: &mut Scratch) {
        let (seg_start, seg_len) = (self.seg_start, self.cur.len());
        let (done, rest) = self.cur.split_at_mut(col - seg_start);
        let shared = self.shared;
        // References into the current segment are always to columns before `col`, which are in `done`.
        let look = |lane: usize, c: usize| -> &Block {
            if c < seg_start {
                &shared[lane].0[c]
            } else if c < seg_start + seg_len {
                &done[c - seg_start]
            } else {
                &shared[lane].1[c - seg_start - seg_len]
            }
        };
        compress(&mut rest[0], look(self.lane, prev), look(ref_lane, ref_col), xor, s);
    }
}

/// The whole memory, for filling lanes one after another on the calling thread (no per-slice bookkeeping, so
/// no allocation). Every block another lane's segment may reference is finished when it is read.
struct WholeView<'a> {
    lane: usize,
    lane_len: usize,
    mem: &'a mut [Block],
}

impl SegmentMem for WholeView<'_> {
    fn lane(&self) -> usize {
        self.lane
    }

    fn get(&self, lane: usize, col: usize) -> &Block {
        &self.mem[lane * self.lane_len + col]
    }

    fn compress_into(&mut self, col: usize, prev: usize, ref_lane: usize, ref_col: usize, xor: bool, s: &mut Scratch) {
        let o = self.lane * self.lane_len + col;
        let (before, rest) = self.mem.split_at_mut(o);
        let (out, after) = rest.split_first_mut().expect("column inside memory");
        // Argon2 never references the block being computed.
        let look = |g: usize| -> &Block { if g < o { &before[g] } else { &after[g - o - 1] } };
        let lane_len = self.lane_len;
        compress(out, look(self.lane * lane_len + prev), look(ref_lane * lane_len + ref_col), xor, s);
    }
}

/// Fills slice `slice` of every lane, on up to `threads` threads.
fn fill_slice(ctx: &Ctx, mem: &mut [Block], pass: u32, slice: u32, threads: usize, scratch: &mut Scratch) {
    if threads <= 1 {
        for lane in 0..ctx.lanes {
            let mut view = WholeView { lane, lane_len: ctx.lane_len, mem: &mut *mem };
            fill_segment(ctx, &mut view, pass, slice, scratch);
        }
        return;
    }
    let seg_start = slice as usize * ctx.seg_len;
    let mut curs = Vec::with_capacity(ctx.lanes);
    let mut shared = Vec::with_capacity(ctx.lanes);
    for lane in mem.chunks_mut(ctx.lane_len) {
        let (pre, rest) = lane.split_at_mut(seg_start);
        let (cur, post) = rest.split_at_mut(ctx.seg_len);
        curs.push(cur);
        shared.push((&*pre, &*post));
    }
    let backend = scratch.backend;
    let run = |first: usize, group: &mut [&mut [Block]]| {
        let mut scratch = Scratch::new(backend);
        for (k, cur) in group.iter_mut().enumerate() {
            let mut view = LaneView { lane: first + k, seg_start, cur, shared: &shared };
            fill_segment(ctx, &mut view, pass, slice, &mut scratch);
        }
    };
    #[cfg(feature = "std")]
    {
        let per = ctx.lanes.div_ceil(threads);
        let mut failed = Vec::new();
        std::thread::scope(|sc| {
            for (i, group) in curs.chunks_mut(per).enumerate() {
                let run = &run;
                if std::thread::Builder::new().spawn_scoped(sc, move || run(i * per, group)).is_err() {
                    failed.push(i);
                }
            }
        });
        // A group whose thread the OS refused never started: compute it here.
        for i in failed {
            if let Some(group) = curs.chunks_mut(per).nth(i) {
                run(i * per, group);
            }
        }
    }
    #[cfg(not(feature = "std"))]
    run(0, &mut curs);
}

/// Computes one segment of one lane.
fn fill_segment<M: SegmentMem>(ctx: &Ctx, view: &mut M, pass: u32, slice: u32, scratch: &mut Scratch) {
    let lane = view.lane();
    let data_independent = pass == 0 && slice < 2;
    let zero = [0u64; QWORDS];
    let mut input = TmpBlock([0u64; QWORDS]);
    let mut addresses = TmpBlock([0u64; QWORDS]);
    if data_independent {
        input.0[0] = pass as u64;
        input.0[1] = lane as u64;
        input.0[2] = slice as u64;
        input.0[3] = ctx.m_blocks;
        input.0[4] = ctx.t_cost;
        input.0[5] = TYPE_ID as u64;
    }
    let next_addresses = |input: &mut TmpBlock, addresses: &mut TmpBlock, scratch: &mut Scratch| {
        input.0[6] += 1;
        let mut tmp = TmpBlock([0u64; QWORDS]);
        compress(&mut tmp.0, &zero, &input.0, false, scratch);
        compress(&mut addresses.0, &zero, &tmp.0, false, scratch);
    };

    let start = if pass == 0 && slice == 0 { 2 } else { 0 };
    if data_independent && start != 0 {
        next_addresses(&mut input, &mut addresses, scratch);
    }
    for idx in start..ctx.seg_len {
        let col = slice as usize * ctx.seg_len + idx;
        let prev = if col == 0 { ctx.lane_len - 1 } else { col - 1 };

        let rand = if data_independent {
            if idx % QWORDS == 0 {
                next_addresses(&mut input, &mut addresses, scratch);
            }
            addresses.0[idx % QWORDS]
        } else {
            view.get(lane, prev)[0]
        };
        let j1 = rand & 0xffff_ffff;
        let j2 = rand >> 32;

        let ref_lane = if pass == 0 && slice == 0 { lane } else { (j2 % ctx.lanes as u64) as usize };
        let same_lane = ref_lane == lane;
        let seg = ctx.seg_len as u64;
        let idx64 = idx as u64;
        // The size of the reference area W (RFC 9106 §3.4.2).
        let area: u64 = if pass == 0 {
            if same_lane { slice as u64 * seg + idx64 - 1 } else { slice as u64 * seg - (idx == 0) as u64 }
        } else if same_lane {
            ctx.lane_len as u64 - seg + idx64 - 1
        } else {
            ctx.lane_len as u64 - seg - (idx == 0) as u64
        };
        let x = (j1 * j1) >> 32;
        let y = (area * x) >> 32;
        let rel = area - 1 - y;
        let start_pos = if pass == 0 || slice == SYNC_POINTS - 1 { 0 } else { (slice as u64 + 1) * seg };
        let ref_col = ((start_pos + rel) % ctx.lane_len as u64) as usize;

        view.compress_into(col, prev, ref_lane, ref_col, pass > 0, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h_prime_lengths_do_not_panic() {
        for t in [4usize, 32, 63, 64, 65, 96, 97, 128, 1024] {
            let mut out = alloc::vec![0u8; t];
            h_prime(b"x", &mut out).unwrap();
        }
    }
}
