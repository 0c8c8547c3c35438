//! Identities and a bus shared by the in-process test files (included with `#[path]`, not through
//! `common/mod.rs`, which also holds the NATS server helpers).
#![allow(dead_code)]

use pqkit_bus::{Bus, Identity, Policy};
use std::sync::OnceLock;

pub fn id(name: &str, n: u8) -> Identity {
    Identity::from_seed(name, &[n; 32]).unwrap()
}

/// Identities are slow-ish to build (ML-DSA keygen): build the common ones once.
pub fn alice() -> &'static Identity {
    static I: OnceLock<Identity> = OnceLock::new();
    I.get_or_init(|| id("alice", 1))
}
pub fn bob() -> &'static Identity {
    static I: OnceLock<Identity> = OnceLock::new();
    I.get_or_init(|| id("bob", 2))
}
pub fn mallory() -> &'static Identity {
    static I: OnceLock<Identity> = OnceLock::new();
    I.get_or_init(|| id("mallory", 3))
}

pub fn open_bus() -> Bus {
    Bus::new(Policy::allow_all()).unwrap()
}
