//! Bit packing (FIPS 204 §7.1–7.2): SimpleBitPack/BitPack and their inverses for t1, t0, s1/s2, z and w1, and
//! HintBitPack/HintBitUnpack with the malformed-hint checks. Coefficients are packed little-endian, lowest bit
//! first; all loops run a fixed number of times, independent of the values (HintBitPack's, over the public hint of
//! an accepted signature, excepted).

use super::poly::Poly;

/// Packs `N` values of `bits` bits each (`vals(i)` < 2^bits) into `out` (`32 * bits` bytes), a group at a time:
/// 4 values in `bits / 2` bytes for even widths, 8 values in `bits` bytes for odd ones (at most 16 bytes, so a
/// group fits one `u128`). `bits` is a constant at every call site, so the loops unroll.
#[inline(always)]
fn pack(out: &mut [u8], bits: u32, vals: impl Fn(usize) -> u32) {
    debug_assert_eq!(out.len(), 32 * bits as usize);
    let per = if bits.is_multiple_of(2) { 4 } else { 8 };
    let nb = bits as usize * per / 8;
    for (g, o) in out.chunks_exact_mut(nb).enumerate() {
        let mut v = 0u128;
        for j in 0..per {
            v |= u128::from(vals(per * g + j)) << (bits as usize * j);
        }
        o.copy_from_slice(&v.to_le_bytes()[..nb]);
    }
}

/// Unpacks `N` values of `bits` bits from `inp` (`32 * bits` bytes), handing each to `f(i, v)`; the groups are
/// those of [`pack`].
#[inline(always)]
fn unpack(inp: &[u8], bits: u32, mut f: impl FnMut(usize, u32)) {
    debug_assert_eq!(inp.len(), 32 * bits as usize);
    let per = if bits.is_multiple_of(2) { 4 } else { 8 };
    let nb = bits as usize * per / 8;
    let mask = (1u128 << bits) - 1;
    for (g, b) in inp.chunks_exact(nb).enumerate() {
        let mut w = [0u8; 16];
        w[..nb].copy_from_slice(b);
        let v = u128::from_le_bytes(w);
        for j in 0..per {
            f(per * g + j, ((v >> (bits as usize * j)) & mask) as u32);
        }
    }
}

/// t1 (coefficients in \[0, 2^10)) to 320 bytes.
pub fn pack_t1(out: &mut [u8], p: &Poly) {
    pack(out, 10, |i| p.0[i] as u32);
}

/// 320 bytes to t1.
pub fn unpack_t1(p: &mut Poly, inp: &[u8]) {
    unpack(inp, 10, |i, v| p.0[i] = v as i32);
}

/// t0 (coefficients in (-2^12, 2^12\]) to 416 bytes as 2^12 - t0.
pub fn pack_t0(out: &mut [u8], p: &Poly) {
    pack(out, 13, |i| ((1 << 12) - p.0[i]) as u32);
}

/// 416 bytes to t0. Every 13-bit value decodes to some coefficient in \[-2^12 + 1 - 2^12, 2^12\].
pub fn unpack_t0(p: &mut Poly, inp: &[u8]) {
    unpack(inp, 13, |i, v| p.0[i] = (1 << 12) - v as i32);
}

/// s (coefficients in \[-η, η\]) as η - s, 3 bits (η = 2) or 4 bits (η = 4).
pub fn pack_eta(out: &mut [u8], p: &Poly, eta: i32) {
    let bits = if eta == 2 { 3 } else { 4 };
    pack(out, bits, |i| (eta - p.0[i]) as u32);
}

/// Inverse of [`pack_eta`]. Returns 0 if every value is at most 2η, else a non-zero value (branch-free).
pub fn unpack_eta(p: &mut Poly, inp: &[u8], eta: i32) -> u32 {
    let bits = if eta == 2 { 3 } else { 4 };
    let mut bad = 0u32;
    unpack(inp, bits, |i, v| {
        bad |= (2 * eta as u32).wrapping_sub(v) >> 31;
        p.0[i] = eta - v as i32;
    });
    bad
}

/// z (coefficients in (-γ1, γ1\]) as γ1 - z, 18 or 20 bits.
pub fn pack_gamma1(out: &mut [u8], p: &Poly, gamma1: i32) {
    let bits = if gamma1 == 1 << 17 { 18 } else { 20 };
    pack(out, bits, |i| (gamma1 - p.0[i]) as u32);
}

/// Inverse of [`pack_gamma1`] (also the bit unpacking of ExpandMask).
pub fn unpack_gamma1(p: &mut Poly, inp: &[u8], gamma1: i32) {
    if gamma1 == 1 << 17 {
        // 4 coefficients of 18 bits in 9 bytes.
        for (c, b) in p.0.chunks_exact_mut(4).zip(inp.chunks_exact(9)) {
            let v = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            let m = 0x3FFFF;
            c[0] = gamma1 - (v & m) as i32;
            c[1] = gamma1 - ((v >> 18) & m) as i32;
            c[2] = gamma1 - ((v >> 36) & m) as i32;
            c[3] = gamma1 - (((v >> 54) | u64::from(b[8]) << 10) & m) as i32;
        }
    } else {
        // 2 coefficients of 20 bits in 5 bytes.
        for (c, b) in p.0.chunks_exact_mut(2).zip(inp.chunks_exact(5)) {
            let v = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], 0, 0, 0]);
            c[0] = gamma1 - (v & 0xFFFFF) as i32;
            c[1] = gamma1 - (v >> 20) as i32;
        }
    }
}

/// w1Encode for one polynomial: 6 bits (γ2 = (q-1)/88) or 4 bits (γ2 = (q-1)/32) per coefficient.
pub fn pack_w1(out: &mut [u8], p: &Poly, bits: u32) {
    if bits == 4 {
        for (o, c) in out.iter_mut().zip(p.0.chunks_exact(2)) {
            *o = (c[0] | c[1] << 4) as u8;
        }
    } else {
        for (o, c) in out.chunks_exact_mut(3).zip(p.0.chunks_exact(4)) {
            let v = (c[0] | c[1] << 6 | c[2] << 12 | c[3] << 18) as u32;
            o.copy_from_slice(&v.to_le_bytes()[..3]);
        }
    }
}

/// HintBitPack (Algorithm 20): `h` holds 0/1 coefficients with at most ω ones in total (checked by the signer).
pub fn pack_hint(out: &mut [u8], h: &[Poly], omega: usize) {
    // The hint of an accepted signature is its output: public.
    crate::ct::declassify_ref(h);
    out.fill(0);
    let mut index = 0;
    for (i, p) in h.iter().enumerate() {
        // The non-zero positions 64 at a time as a bit mask (a branch-free loop the compiler vectorizes),
        // then one step per set bit: a signature's ≤ ω ones instead of a data-dependent branch per
        // coefficient (mispredicted at most of the ≈ 50 ones).
        for (g, c) in p.0.chunks_exact(64).enumerate() {
            let mut m = 0u64;
            for (j, &v) in c.iter().enumerate() {
                m |= u64::from(v != 0) << j;
            }
            while m != 0 {
                out[index] = (64 * g) as u8 + m.trailing_zeros() as u8;
                index += 1;
                m &= m - 1;
            }
        }
        out[omega + i] = index as u8;
    }
}

/// HintBitUnpack (Algorithm 21): `None` for a malformed encoding (counts out of order or above ω, indices not
/// strictly increasing within a polynomial, non-zero padding). The hint is public.
pub fn unpack_hint(h: &mut [Poly], inp: &[u8], omega: usize) -> Option<()> {
    let mut index = 0usize;
    for (i, p) in h.iter_mut().enumerate() {
        *p = Poly::ZERO;
        let end = inp[omega + i] as usize;
        if end < index || end > omega {
            return None;
        }
        let first = index;
        while index < end {
            if index > first && inp[index - 1] >= inp[index] {
                return None;
            }
            p.0[inp[index] as usize] = 1;
            index += 1;
        }
    }
    if inp[index..omega].iter().any(|&b| b != 0) {
        return None;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::super::N;
    use super::*;

    /// HintBitPack as FIPS 204 Algorithm 20 writes it: one coefficient at a time.
    fn pack_hint_plain(out: &mut [u8], h: &[Poly], omega: usize) {
        out.fill(0);
        let mut index = 0;
        for (i, p) in h.iter().enumerate() {
            for (j, &v) in p.0.iter().enumerate() {
                if v != 0 {
                    out[index] = j as u8;
                    index += 1;
                }
            }
            out[omega + i] = index as u8;
        }
    }

    #[test]
    fn pack_hint_matches_the_plain_loop_and_unpacks() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (k, omega) in [(4usize, 80usize), (6, 55), (8, 75)] {
            for trial in 0..300 {
                let mut hs = [Poly::ZERO; 8];
                let h = &mut hs[..k];
                // Up to ω ones at random positions (some trials dense in one polynomial, at its ends too).
                let ones = (next() as usize) % (omega + 1);
                for _ in 0..ones {
                    let r = next();
                    let i = if trial % 3 == 0 { 0 } else { (r as usize) % k };
                    let j = if trial % 5 == 0 {
                        [0, 63, 64, 127, 255][(r >> 8) as usize % 5]
                    } else {
                        (r >> 16) as usize % N
                    };
                    h[i].0[j] = 1;
                }
                let (mut a, mut b) = ([0xaau8; 88], [0x55u8; 88]);
                let (a, b) = (&mut a[..omega + k], &mut b[..omega + k]);
                pack_hint(a, h, omega);
                pack_hint_plain(b, h, omega);
                assert_eq!(a, b, "k {k} trial {trial}");
                let mut backs = [Poly::ZERO; 8];
                let back = &mut backs[..k];
                unpack_hint(back, a, omega).expect("well-formed");
                assert!(back.iter().zip(h.iter()).all(|(x, y)| x.0 == y.0), "k {k} trial {trial}");
            }
        }
    }
}
