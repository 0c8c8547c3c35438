//! Portable ChaCha: the reference every SIMD backend must equal bit for bit.
//!
//! The block function (RFC 8439 §2.3): copy the 16-word input, run `rounds` rounds (alternating column and
//! diagonal rounds of four quarter rounds each), add the input back word by word, and serialise the 16 words
//! little-endian. Only additions, XORs and fixed rotations are used, so the code is constant time.

use super::BLOCK_LEN;

/// The ChaCha quarter round (RFC 8439 §2.1) on four words.
#[inline(always)]
pub(super) fn quarter_round(mut a: u32, mut b: u32, mut c: u32, mut d: u32) -> (u32, u32, u32, u32) {
    a = a.wrapping_add(b);
    d = (d ^ a).rotate_left(16);
    c = c.wrapping_add(d);
    b = (b ^ c).rotate_left(12);
    a = a.wrapping_add(b);
    d = (d ^ a).rotate_left(8);
    c = c.wrapping_add(d);
    b = (b ^ c).rotate_left(7);
    (a, b, c, d)
}

#[inline(always)]
fn qr(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    (s[a], s[b], s[c], s[d]) = quarter_round(s[a], s[b], s[c], s[d]);
}

/// Runs `rounds` rounds (an even number) on `s` in place, without the final feed-forward.
#[inline]
pub(super) fn rounds(s: &mut [u32; 16], rounds: usize) {
    for _ in 0..rounds / 2 {
        // Column round.
        qr(s, 0, 4, 8, 12);
        qr(s, 1, 5, 9, 13);
        qr(s, 2, 6, 10, 14);
        qr(s, 3, 7, 11, 15);
        // Diagonal round.
        qr(s, 0, 5, 10, 15);
        qr(s, 1, 6, 11, 12);
        qr(s, 2, 7, 8, 13);
        qr(s, 3, 4, 9, 14);
    }
}

/// The keystream block for input `state`, serialised little-endian.
#[inline]
pub(super) fn block(state: &[u32; 16], n_rounds: usize) -> [u8; BLOCK_LEN] {
    let mut x = *state;
    rounds(&mut x, n_rounds);
    let mut out = [0u8; BLOCK_LEN];
    for (i, chunk) in out.chunks_exact_mut(4).enumerate() {
        chunk.copy_from_slice(&x[i].wrapping_add(state[i]).to_le_bytes());
    }
    out
}

/// The keystream block for input `state` as words, feed-forward added: the one-block short path of the x86
/// backends, where a vector pass is bound by the latency of its serial quarter-round chain (12 dependent
/// operations per half-round) and the integer units run that chain with one-cycle operations.
///
/// `pin` runs on the four words of every quarter round's result: the x86 backends pass an empty `asm!` that
/// keeps the words in general-purpose registers, because LLVM's SLP vectorizer otherwise may pack the four
/// identical quarter rounds into xmm lanes (the row layout, with shuffles), with vector latency (two cycles on
/// Zen 5) on the critical path. It did so in one of two otherwise equal call sites.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn block_words(state: &[u32; 16], n_rounds: usize, pin: impl Fn(&mut u32)) -> [u32; 16] {
    let mut x = *state;
    for _ in 0..n_rounds / 2 {
        double_round_pinned(&mut x, &pin);
    }
    for (w, v) in x.iter_mut().zip(state) {
        *w = w.wrapping_add(*v);
    }
    x
}

/// One double round (a column round, then a diagonal round) on `x` in place, `pin` run on the four words of every
/// quarter round's result (see [`block_words`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn double_round_pinned(x: &mut [u32; 16], pin: impl Fn(&mut u32)) {
    let mut q = |a: usize, b: usize, c: usize, d: usize| {
        qr(x, a, b, c, d);
        for i in [a, b, c, d] {
            pin(&mut x[i]);
        }
    };
    q(0, 4, 8, 12);
    q(1, 5, 9, 13);
    q(2, 6, 10, 14);
    q(3, 7, 11, 15);
    q(0, 5, 10, 15);
    q(1, 6, 11, 12);
    q(2, 7, 8, 13);
    q(3, 4, 9, 14);
}

/// See [`super::apply_blocks`]: one block at a time, the 64-bit counter in words 12 and 13.
pub(super) fn apply_blocks(n_rounds: usize, state: &[u32; 16], data: &mut [u8], xor: bool) {
    let mut s = *state;
    for chunk in data.chunks_mut(BLOCK_LEN) {
        let mut ks = block(&s, n_rounds);
        if xor {
            for (d, k) in chunk.iter_mut().zip(&ks) {
                *d ^= k;
            }
        } else {
            chunk.copy_from_slice(&ks[..chunk.len()]);
        }
        zeroize::Zeroize::zeroize(&mut ks);
        let ctr = (s[12] as u64 | (s[13] as u64) << 32).wrapping_add(1);
        s[12] = ctr as u32;
        s[13] = (ctr >> 32) as u32;
    }
    zeroize::Zeroize::zeroize(&mut s);
}
