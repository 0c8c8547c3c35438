//! Portable BLAKE2b and BLAKE2s compression (RFC 7693, 3.2).

use super::{IV_B, IV_S, SIGMA};

macro_rules! compress_fn {
    ($name:ident, $w:ty, $rounds:expr, $iv:ident, $r1:expr, $r2:expr, $r3:expr, $r4:expr) => {
        /// One compression of the block `m` (16 little-endian words) with counter `t` and final flag `last`.
        pub(super) fn $name(h: &mut [$w; 8], block: &[u8], t: u128, last: bool) {
            const W: usize = core::mem::size_of::<$w>();
            let mut m = [0 as $w; 16];
            for (x, c) in m.iter_mut().zip(block.chunks_exact(W)) {
                *x = <$w>::from_le_bytes(c.try_into().unwrap());
            }
            let mut v = [0 as $w; 16];
            v[..8].copy_from_slice(h);
            v[8..].copy_from_slice(&$iv);
            v[12] ^= t as $w;
            v[13] ^= (t >> (8 * W)) as $w;
            if last {
                v[14] = !v[14];
            }
            #[inline(always)]
            fn g(v: &mut [$w; 16], a: usize, b: usize, c: usize, d: usize, x: $w, y: $w) {
                v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
                v[d] = (v[d] ^ v[a]).rotate_right($r1);
                v[c] = v[c].wrapping_add(v[d]);
                v[b] = (v[b] ^ v[c]).rotate_right($r2);
                v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
                v[d] = (v[d] ^ v[a]).rotate_right($r3);
                v[c] = v[c].wrapping_add(v[d]);
                v[b] = (v[b] ^ v[c]).rotate_right($r4);
            }
            for r in 0..$rounds {
                let s = &SIGMA[r % 10];
                g(&mut v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
                g(&mut v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
                g(&mut v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
                g(&mut v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
                g(&mut v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
                g(&mut v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
                g(&mut v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
                g(&mut v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
            }
            for i in 0..8 {
                h[i] ^= v[i] ^ v[i + 8];
            }
        }
    };
}

compress_fn!(compress_b, u64, 12, IV_B, 32, 24, 16, 63);
compress_fn!(compress_s, u32, 10, IV_S, 16, 12, 8, 7);
