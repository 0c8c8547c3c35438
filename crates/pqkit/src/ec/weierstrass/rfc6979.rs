//! The HMAC-DRBG of RFC 6979 §3.2 with HMAC-SHA-256 (pqkit's own [`Hmac`]), for curves whose order n has
//! 256 bits (qlen = hlen = 256, so bits2int of one 32-byte block is that block read big-endian).
//!
//! ```text
//! V = 0x01 × 32, K = 0x00 × 32
//! K = HMAC_K(V ‖ 0x00 ‖ int2octets(x) ‖ bits2octets(h1) ‖ k')      (k' empty: plain RFC 6979)
//! V = HMAC_K(V)
//! K = HMAC_K(V ‖ 0x01 ‖ int2octets(x) ‖ bits2octets(h1) ‖ k')
//! V = HMAC_K(V)
//! loop { V = HMAC_K(V); candidate = V; if 1 ≤ candidate < n { yield }; K = HMAC_K(V ‖ 0x00); V = HMAC_K(V) }
//! ```
//!
//! k' is the "additional data" of §3.6: empty for deterministic signatures, fresh random bytes for hedged
//! ones. K and V are secret: they live in the [`Drbg`] and are wiped on drop.

use crate::ct::wipe;
use crate::hash::sha2::Sha256;
use crate::mac::Hmac;

/// The RFC 6979 generator of nonce candidates (see the [module docs](self)).
pub struct Drbg {
    k: [u8; 32],
    v: [u8; 32],
    /// Whether [`candidate`](Self::candidate) has been called: every call after the first starts with the update
    /// K = HMAC_K(V ‖ 0x00), V = HMAC_K(V) (step h.3).
    started: bool,
}

impl Drbg {
    /// Seeds the generator with the private key `x` (32 bytes, big-endian), `h1` as bits2octets (the
    /// truncated digest reduced modulo n, 32 bytes) and the additional data `extra` (k').
    pub fn new(x: &[u8; 32], h1: &[u8; 32], extra: &[u8]) -> Self {
        let mut d = Drbg { k: [0; 32], v: [1; 32], started: false };
        for sep in [0u8, 1] {
            let mut mac = Hmac::<Sha256>::new(&d.k);
            mac.update(&d.v).update(&[sep]).update(x).update(h1).update(extra);
            d.k = mac.finalize();
            d.v = Hmac::<Sha256>::new(&d.k).mac(&d.v);
        }
        d
    }

    /// The next 32-byte candidate (step h: T = V after V = HMAC_K(V)). The caller accepts it if it encodes an
    /// integer in [1, n − 1] and calls again otherwise (and also when r or s comes out zero).
    pub fn candidate(&mut self) -> [u8; 32] {
        if self.started {
            let mut mac = Hmac::<Sha256>::new(&self.k);
            mac.update(&self.v).update(&[0]);
            self.k = mac.finalize();
            self.v = Hmac::<Sha256>::new(&self.k).mac(&self.v);
        }
        self.started = true;
        self.v = Hmac::<Sha256>::new(&self.k).mac(&self.v);
        self.v
    }
}

impl Drop for Drbg {
    fn drop(&mut self) {
        wipe(&mut self.k);
        wipe(&mut self.v);
    }
}

impl zeroize::ZeroizeOnDrop for Drbg {}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6979 §A.1 is for a 163-bit curve; the generator is checked end to end by the P-256 vectors of
    /// §A.2.5 (tests/p256.rs). Here: k' changes the output, and the candidates follow the update rule.
    #[test]
    fn extra_data_changes_the_stream_and_stream_is_deterministic() {
        let (x, h) = ([7u8; 32], [9u8; 32]);
        let a = Drbg::new(&x, &h, &[]).candidate();
        assert_eq!(a, Drbg::new(&x, &h, &[]).candidate());
        assert_ne!(a, Drbg::new(&x, &h, &[1]).candidate());
        let mut d = Drbg::new(&x, &h, &[]);
        let (c1, c2) = (d.candidate(), d.candidate());
        assert_eq!(c1, a);
        assert_ne!(c1, c2);
    }
}
