//! Placeholder: not yet implemented.
pub(super) fn available() -> bool {
    false
}

pub(super) fn apply_blocks(rounds: usize, state: &[u32; 16], data: &mut [u8], xor: bool) {
    super::soft::apply_blocks(rounds, state, data, xor)
}
