//! One module per command (or family of commands sharing their arguments).

pub mod kem;
pub mod keys;
pub mod legacy;
pub mod sign;
