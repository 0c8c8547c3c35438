//! Portable Kusumi512: the reference every SIMD backend must equal bit for bit.

use super::BLOCK;

/// ChaCha's "expand 32-byte k" constants, which Kusumi512 keeps unchanged in words 0..3.
pub(crate) const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// ChaCha20's quarter round on four words of the 25-word state.
#[inline(always)]
pub(crate) fn qr(s: &mut [u32; 25], a: usize, b: usize, c: usize, d: usize) {
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(16);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(12);
    s[a] = s[a].wrapping_add(s[b]);
    s[d] = (s[d] ^ s[a]).rotate_left(8);
    s[c] = s[c].wrapping_add(s[d]);
    s[b] = (s[b] ^ s[c]).rotate_left(7);
}

/// The initial state for one block.
#[inline(always)]
pub(crate) fn initial_state(key: &[u32; 16], nonce: &[u32; 3], counter: u64) -> [u32; 25] {
    let mut s = [0u32; 25];
    s[..4].copy_from_slice(&SIGMA);
    s[4..20].copy_from_slice(key);
    s[20] = counter as u32;
    s[21] = (counter >> 32) as u32;
    s[22..25].copy_from_slice(nonce);
    s
}

/// One pass: the 17 quarter rounds in the order the specification fixes.
#[inline(always)]
fn pass(s: &mut [u32; 25]) {
    // columns
    qr(s, 0, 4, 8, 12);
    qr(s, 1, 5, 9, 13);
    qr(s, 2, 6, 10, 14);
    qr(s, 3, 7, 11, 15);
    // extension 1
    qr(s, 16, 20, 0, 4);
    qr(s, 17, 21, 1, 5);
    qr(s, 18, 22, 2, 6);
    qr(s, 19, 23, 3, 7);
    // diagonals
    qr(s, 0, 5, 10, 15);
    qr(s, 1, 6, 11, 12);
    qr(s, 2, 7, 8, 13);
    qr(s, 3, 4, 9, 14);
    // extension 2
    qr(s, 16, 21, 2, 7);
    qr(s, 17, 22, 3, 4);
    qr(s, 18, 23, 0, 5);
    qr(s, 19, 20, 1, 6);
    // the only quarter round that touches word 24
    qr(s, 19, 24, 0, 5);
}

/// The 100-byte keystream block at `counter`.
pub(crate) fn block(key: &[u32; 16], nonce: &[u32; 3], counter: u64) -> [u8; BLOCK] {
    let init = initial_state(key, nonce, counter);
    let mut s = init;
    for _ in 0..10 {
        pass(&mut s);
    }
    let mut out = [0u8; BLOCK];
    for (i, chunk) in out.chunks_exact_mut(4).enumerate() {
        chunk.copy_from_slice(&s[i].wrapping_add(init[i]).to_le_bytes());
    }
    out
}

/// XORs the keystream of blocks `counter, counter + 1, ...` into `data` (the last block may be partial).
/// Returns true if `data` ends inside a block, whose whole keystream is then in `last`.
///
/// The caller guarantees that no block past counter 2^64 - 1 is needed.
pub(crate) fn xor_blocks(
    key: &[u32; 16],
    nonce: &[u32; 3],
    counter: u64,
    data: &mut [u8],
    last: &mut [u8; BLOCK],
) -> bool {
    let mut kept = false;
    for (i, chunk) in data.chunks_mut(BLOCK).enumerate() {
        let mut ks = block(key, nonce, counter.wrapping_add(i as u64));
        for (d, k) in chunk.iter_mut().zip(ks.iter()) {
            *d ^= k;
        }
        if chunk.len() < BLOCK {
            *last = ks;
            kept = true;
        }
        crate::ct::wipe(&mut ks);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarter_round_check_from_the_spec() {
        let mut s = [0u32; 25];
        s[0] = 0x1111_1111;
        s[1] = 0x0102_0304;
        s[2] = 0x090a_0b0c;
        s[3] = 0x1112_1314;
        qr(&mut s, 0, 1, 2, 3);
        assert_eq!(&s[..4], &[0xa2e3_a525, 0x30d1_d131, 0xf2b1_32b2, 0xe2a6_24a5]);
    }
}
