//! Portable Threefish-512, fully unrolled (72 rounds, word permutation done by naming), and its CTR keystream.

use super::BLOCK;

/// Key-schedule parity constant C240 of Skein 1.3.
pub(crate) const C240: u64 = 0x1BD1_1BDA_A9FC_1A22;

/// Rotation constants R[d mod 8][j] of Threefish-512.
pub(crate) const R: [[u32; 4]; 8] = [
    [46, 36, 19, 37],
    [33, 27, 14, 42],
    [17, 49, 36, 39],
    [44, 9, 54, 56],
    [39, 30, 34, 24],
    [13, 50, 10, 17],
    [25, 29, 39, 43],
    [8, 35, 56, 22],
];

/// Expands the key with its parity word: k[8] = C240 ^ k[0] ^ ... ^ k[7].
#[inline(always)]
pub(crate) fn expand_key(key: &[u64; 8]) -> [u64; 9] {
    let mut k = [0u64; 9];
    k[..8].copy_from_slice(key);
    k[8] = key.iter().fold(C240, |a, w| a ^ w);
    k
}

/// Expands the tweak: t[2] = t[0] ^ t[1].
#[inline(always)]
pub(crate) fn expand_tweak(tweak: &[u64; 2]) -> [u64; 3] {
    [tweak[0], tweak[1], tweak[0] ^ tweak[1]]
}

macro_rules! inject {
    ($v:ident, $k:ident, $t:ident, $s:expr) => {
        $v[0] = $v[0].wrapping_add($k[$s % 9]);
        $v[1] = $v[1].wrapping_add($k[($s + 1) % 9]);
        $v[2] = $v[2].wrapping_add($k[($s + 2) % 9]);
        $v[3] = $v[3].wrapping_add($k[($s + 3) % 9]);
        $v[4] = $v[4].wrapping_add($k[($s + 4) % 9]);
        $v[5] = $v[5].wrapping_add($k[($s + 5) % 9].wrapping_add($t[$s % 3]));
        $v[6] = $v[6].wrapping_add($k[($s + 6) % 9].wrapping_add($t[($s + 1) % 3]));
        $v[7] = $v[7].wrapping_add($k[($s + 7) % 9].wrapping_add($s as u64));
    };
}

macro_rules! eject {
    ($v:ident, $k:ident, $t:ident, $s:expr) => {
        $v[0] = $v[0].wrapping_sub($k[$s % 9]);
        $v[1] = $v[1].wrapping_sub($k[($s + 1) % 9]);
        $v[2] = $v[2].wrapping_sub($k[($s + 2) % 9]);
        $v[3] = $v[3].wrapping_sub($k[($s + 3) % 9]);
        $v[4] = $v[4].wrapping_sub($k[($s + 4) % 9]);
        $v[5] = $v[5].wrapping_sub($k[($s + 5) % 9].wrapping_add($t[$s % 3]));
        $v[6] = $v[6].wrapping_sub($k[($s + 6) % 9].wrapping_add($t[($s + 1) % 3]));
        $v[7] = $v[7].wrapping_sub($k[($s + 7) % 9].wrapping_add($s as u64));
    };
}

macro_rules! mix {
    ($v:ident, $a:literal, $b:literal, $r:expr) => {
        $v[$a] = $v[$a].wrapping_add($v[$b]);
        $v[$b] = $v[$b].rotate_left($r) ^ $v[$a];
    };
}

macro_rules! unmix {
    ($v:ident, $a:literal, $b:literal, $r:expr) => {
        $v[$b] = ($v[$b] ^ $v[$a]).rotate_right($r);
        $v[$a] = $v[$a].wrapping_sub($v[$b]);
    };
}

/// Four rounds starting at rotation row `$i` (0 or 4). The permutation pi = (2 1 4 7 6 5 0 3) is applied by
/// renaming: after four rounds every word is back in its own slot.
macro_rules! four {
    ($v:ident, $i:expr) => {
        mix!($v, 0, 1, R[$i][0]);
        mix!($v, 2, 3, R[$i][1]);
        mix!($v, 4, 5, R[$i][2]);
        mix!($v, 6, 7, R[$i][3]);
        mix!($v, 2, 1, R[$i + 1][0]);
        mix!($v, 4, 7, R[$i + 1][1]);
        mix!($v, 6, 5, R[$i + 1][2]);
        mix!($v, 0, 3, R[$i + 1][3]);
        mix!($v, 4, 1, R[$i + 2][0]);
        mix!($v, 6, 3, R[$i + 2][1]);
        mix!($v, 0, 5, R[$i + 2][2]);
        mix!($v, 2, 7, R[$i + 2][3]);
        mix!($v, 6, 1, R[$i + 3][0]);
        mix!($v, 0, 7, R[$i + 3][1]);
        mix!($v, 2, 5, R[$i + 3][2]);
        mix!($v, 4, 3, R[$i + 3][3]);
    };
}

macro_rules! unfour {
    ($v:ident, $i:expr) => {
        unmix!($v, 4, 3, R[$i + 3][3]);
        unmix!($v, 2, 5, R[$i + 3][2]);
        unmix!($v, 0, 7, R[$i + 3][1]);
        unmix!($v, 6, 1, R[$i + 3][0]);
        unmix!($v, 2, 7, R[$i + 2][3]);
        unmix!($v, 0, 5, R[$i + 2][2]);
        unmix!($v, 6, 3, R[$i + 2][1]);
        unmix!($v, 4, 1, R[$i + 2][0]);
        unmix!($v, 0, 3, R[$i + 1][3]);
        unmix!($v, 6, 5, R[$i + 1][2]);
        unmix!($v, 4, 7, R[$i + 1][1]);
        unmix!($v, 2, 1, R[$i + 1][0]);
        unmix!($v, 6, 7, R[$i][3]);
        unmix!($v, 4, 5, R[$i][2]);
        unmix!($v, 2, 3, R[$i][1]);
        unmix!($v, 0, 1, R[$i][0]);
    };
}

macro_rules! eight {
    ($v:ident, $k:ident, $t:ident, $s:expr) => {
        inject!($v, $k, $t, $s);
        four!($v, 0);
        inject!($v, $k, $t, $s + 1);
        four!($v, 4);
    };
}

macro_rules! uneight {
    ($v:ident, $k:ident, $t:ident, $s:expr) => {
        unfour!($v, 4);
        eject!($v, $k, $t, $s + 1);
        unfour!($v, 0);
        eject!($v, $k, $t, $s);
    };
}

/// Encrypts one block of eight words with the expanded key `k` and tweak `t`. Fully unrolled.
#[inline(always)]
pub(crate) fn encrypt_words(k: &[u64; 9], t: &[u64; 3], v: &mut [u64; 8]) {
    eight!(v, k, t, 0);
    eight!(v, k, t, 2);
    eight!(v, k, t, 4);
    eight!(v, k, t, 6);
    eight!(v, k, t, 8);
    eight!(v, k, t, 10);
    eight!(v, k, t, 12);
    eight!(v, k, t, 14);
    eight!(v, k, t, 16);
    inject!(v, k, t, 18);
}

/// Decrypts one block of eight words. Fully unrolled.
#[inline(always)]
pub(crate) fn decrypt_words(k: &[u64; 9], t: &[u64; 3], v: &mut [u64; 8]) {
    eject!(v, k, t, 18);
    uneight!(v, k, t, 16);
    uneight!(v, k, t, 14);
    uneight!(v, k, t, 12);
    uneight!(v, k, t, 10);
    uneight!(v, k, t, 8);
    uneight!(v, k, t, 6);
    uneight!(v, k, t, 4);
    uneight!(v, k, t, 2);
    uneight!(v, k, t, 0);
}

/// Little-endian bytes to words.
#[inline(always)]
pub(crate) fn load_words(b: &[u8; 64]) -> [u64; 8] {
    let mut w = [0u64; 8];
    for (x, c) in w.iter_mut().zip(b.chunks_exact(8)) {
        *x = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    }
    w
}

/// Words to little-endian bytes.
#[inline(always)]
pub(crate) fn store_words(w: &[u64; 8], b: &mut [u8; 64]) {
    for (x, c) in w.iter().zip(b.chunks_exact_mut(8)) {
        c.copy_from_slice(&x.to_le_bytes());
    }
}

/// The 19 subkeys of the key schedule, eight words each (for the x86-64 vector backends).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn subkeys(k: &[u64; 9], t: &[u64; 3]) -> [[u64; 8]; 19] {
    let mut sk = [[0u64; 8]; 19];
    for (s, w) in sk.iter_mut().enumerate() {
        for i in 0..8 {
            w[i] = k[(s + i) % 9];
        }
        w[5] = w[5].wrapping_add(t[s % 3]);
        w[6] = w[6].wrapping_add(t[(s + 1) % 3]);
        w[7] = w[7].wrapping_add(s as u64);
    }
    sk
}

/// XORs the CTR keystream of blocks `counter, counter + 1, ...` into `data` (the last block may be partial).
/// The caller guarantees no block past 2^64 - 1 is needed.
pub(crate) fn xor_blocks(k: &[u64; 9], t: &[u64; 3], counter: u64, data: &mut [u8]) {
    for (i, chunk) in data.chunks_mut(BLOCK).enumerate() {
        let mut v = [counter.wrapping_add(i as u64), 0, 0, 0, 0, 0, 0, 0];
        encrypt_words(k, t, &mut v);
        let mut ks = [0u8; 64];
        store_words(&v, &mut ks);
        for (d, x) in chunk.iter_mut().zip(ks.iter()) {
            *d ^= x;
        }
        zeroize::Zeroize::zeroize(&mut ks);
        zeroize::Zeroize::zeroize(&mut v);
    }
}
