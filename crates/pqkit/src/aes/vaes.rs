//! VAES + VPCLMULQDQ backend (placeholder: delegates to AES-NI).
pub(super) use super::aesni::{ghash, open, seal};
