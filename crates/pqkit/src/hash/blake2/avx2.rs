//! AVX2 BLAKE2 (placeholder: portable for now).
#![allow(unsafe_code)]

pub(super) fn compress_b(h: &mut [u64; 8], block: &[u8], t: u128, last: bool) {
    super::soft::compress_b(h, block, t, last)
}

pub(super) fn compress_s(h: &mut [u32; 8], block: &[u8], t: u128, last: bool) {
    super::soft::compress_s(h, block, t, last)
}
