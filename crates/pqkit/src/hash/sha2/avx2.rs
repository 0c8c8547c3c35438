//! SHA-512 with AVX2 message-schedule vectorization (placeholder: portable rounds for now).
#![allow(unsafe_code)]

pub(super) fn compress512(h: &mut [u64; 8], blocks: &[u8]) {
    super::soft::compress512(h, blocks)
}
