//! Portable BLAKE2b and BLAKE2s compression (RFC 7693, 3.2).
//!
//! Every round is written out (a const-generic round number), so each message word index is a constant: the
//! words come straight from the block as memory operands or registers, with no run-time look-up of `SIGMA` and
//! no bounds checks, and the sixteen state words stay in registers (LLVM spills at most a few). The four `G`
//! functions of a column or diagonal step are independent, so a core with several integer ALUs runs them side
//! by side: the critical path is one `G` chain per step. This is also the code the dispatch chooses on CPUs whose
//! vector units are slower than their integer ones for this dependency chain (see `Backend` in the parent).

use super::{IV_B, IV_S, SIGMA};

macro_rules! compress_fn {
    ($name:ident, $many:ident, $one:ident, $w:ty, $iv:ident, $r1:expr, $r2:expr, $r3:expr, $r4:expr, [$($r:literal)+]) => {
        /// One compression of `block` (16 little-endian words) with counter `t` and final flag `last`.
        pub(super) fn $name(h: &mut [$w; 8], block: &[u8], t: u128, last: bool) {
            $one(h, block, t, last)
        }

        /// Compresses every whole block of `blocks` (none final), adding the block length to `*t` before each:
        /// one call for a run of blocks, so the chaining value stays in registers between them.
        pub(super) fn $many(h: &mut [$w; 8], blocks: &[u8], t: &mut u128) {
            const B: usize = 16 * core::mem::size_of::<$w>();
            let mut hv = *h;
            let mut tv = *t;
            for block in blocks.chunks_exact(B) {
                tv += B as u128;
                $one(&mut hv, block, tv, false);
            }
            *h = hv;
            *t = tv;
        }

        #[inline(always)]
        fn $one(h: &mut [$w; 8], block: &[u8], t: u128, last: bool) {
            const W: usize = core::mem::size_of::<$w>();
            let block: &[u8; 16 * W] = block.try_into().expect("one BLAKE2 block");
            let m: [$w; 16] =
                core::array::from_fn(|i| <$w>::from_le_bytes(block[W * i..W * i + W].try_into().unwrap()));
            let mut v = [0 as $w; 16];
            v[..8].copy_from_slice(h);
            v[8..].copy_from_slice(&$iv);
            v[12] ^= t as $w;
            v[13] ^= (t >> (8 * W)) as $w;
            // All ones when `last` (a mask, no branch).
            v[14] ^= (0 as $w).wrapping_sub(last as $w);

            #[inline(always)]
            fn g(v: &mut [$w; 16], a: usize, b: usize, c: usize, d: usize, x: $w, y: $w) {
                // `a + x` first: it does not wait for `b`, the value the previous step produced last.
                v[a] = v[a].wrapping_add(x).wrapping_add(v[b]);
                v[d] = (v[d] ^ v[a]).rotate_right($r1);
                v[c] = v[c].wrapping_add(v[d]);
                v[b] = (v[b] ^ v[c]).rotate_right($r2);
                v[a] = v[a].wrapping_add(y).wrapping_add(v[b]);
                v[d] = (v[d] ^ v[a]).rotate_right($r3);
                v[c] = v[c].wrapping_add(v[d]);
                v[b] = (v[b] ^ v[c]).rotate_right($r4);
            }

            /// Round `R`: its message permutation is a constant, so every `m[s[i]]` is a fixed word.
            #[inline(always)]
            fn round<const R: usize>(v: &mut [$w; 16], m: &[$w; 16]) {
                let s = &SIGMA[R % 10];
                g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
                g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
                g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
                g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
                g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
                g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
                g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
                g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
            }

            $( round::<$r>(&mut v, &m); )+
            for i in 0..8 {
                h[i] ^= v[i] ^ v[i + 8];
            }
        }
    };
}

compress_fn!(compress_b, compress_b_blocks, one_b, u64, IV_B, 32, 24, 16, 63, [0 1 2 3 4 5 6 7 8 9 10 11]);
compress_fn!(compress_s, compress_s_blocks, one_s, u32, IV_S, 16, 12, 8, 7, [0 1 2 3 4 5 6 7 8 9]);
