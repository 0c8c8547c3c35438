//! Elliptic-curve cryptography: [`x25519`] (RFC 7748 Diffie-Hellman) and [`ed25519`] (RFC 8032 signatures:
//! Ed25519, Ed25519ctx, Ed25519ph, batch verification), on the shared Curve25519 layer [`curve25519`]; and
//! [`p256`] (NIST P-256: ECDSA with SHA-256, RFC 6979 deterministic or hedged nonces, P1363 and DER
//! signatures; ECDH) and [`secp256k1`] (ECDSA with low-S signing, ECDH, BIP-340 Schnorr), on the generic
//! short-Weierstrass layer [`weierstrass`].
//!
//! ## Layers
//! - `curve25519::field`: GF(2^255 − 19) with five 51-bit limbs (portable), the interface other backends
//!   implement, inversion and square roots.
//! - `curve25519::edwards` and `curve25519::montgomery`: the group (extended twisted Edwards coordinates,
//!   complete formulas) and the X25519 ladder, written once over the field interface.
//! - `curve25519::scalar`: integers modulo the group order L (Montgomery reduction, constant time).
//! - [`x25519`], [`ed25519`]: the schemes and their public types.
//! - [`weierstrass`]: the [`weierstrass::PrimeCurve`] trait a 256-bit prime-order curve implements (scalars
//!   modulo n, constant-time fixed- and variable-base multiplication, variable-time u1·G + u2·Q, SEC1
//!   points), and, written once over it, keys, ECDSA (FIPS 186-5), the RFC 6979 HMAC-DRBG, ECDH (SEC1) and
//!   the key files (PKCS#8, SEC1 `ECPrivateKey`, SubjectPublicKeyInfo).
//! - [`p256`]: the P-256 field (Montgomery form, 4×64-bit limbs), scalars, group (complete
//!   Renes–Costello–Batina formulas for a = −3, generated base tables) and the type aliases.
//! - [`secp256k1`]: the secp256k1 field (4×64-bit limbs, reduction by 2^256 = 2^32 + 977), scalars (with the
//!   GLV decomposition), group (complete formulas for a = 0 on secret paths, Jacobian + GLV + wNAF for
//!   verification, variable-time divstep inversion for public values), the type aliases and BIP-340
//!   ([`secp256k1::schnorr`]).
//!
//! ## What is constant time
//! Everything that touches a secret: X25519 (the ladder with masked swaps over all 255 bits; the public key
//! by the fixed-base Edwards multiplication), Ed25519 key generation and signing (fixed-base multiplication
//! whose table entries are chosen by masks over the whole row, never by a secret index; scalar arithmetic
//! modulo L; SHA-512). No secret-dependent branch or memory index anywhere in those paths; field elements
//! are compared by folding their canonical encodings.
//!
//! P-256 and secp256k1 key generation, signing (ECDSA and BIP-340) and ECDH likewise: complete formulas,
//! masked table look-ups over whole rows, constant-time inversions (P-256: Bernstein–Yang divsteps, the
//! module `safegcd` shared by every curve; secp256k1: Fermat); RFC 6979 nonces (HMAC-SHA-256); secp256k1's
//! GLV split for ECDH is constant-time arithmetic with masked negations.
//!
//! Verification is variable time: it only handles public data (keys, messages, signatures), and uses
//! non-adjacent forms and interleaved multi-scalar multiplication for speed.
//!
//! ## What is checked strictly
//! - X25519: every 32-byte public key is accepted as RFC 7748 says (top bit ignored, non-canonical values
//!   reduced), but an all-zero shared secret — the result of a public key of small order — is an error.
//! - Ed25519 verification: S below L; A and R canonical (y below p, no "x = 0 with the sign bit set"), on
//!   the curve and not of small order; the cofactored equation. See [`ed25519`] for why cofactored.
//! - P-256: public keys are SEC1 points with coordinates below p, on the curve, never the identity; ECDSA r
//!   and s in [1, n − 1], DER signatures strictly DER; an optional low-S rule
//!   ([`weierstrass::VerifyingKey::verify_low_s`]). secp256k1 the same, and it signs in low-S form;
//!   BIP-340 verification refuses x-only keys not on the curve, r ≥ p and s ≥ n.
//!
//! Secret keys and shared secrets zeroize on drop and never appear in `Debug` output.
//!
//! ## Key files
//! With the `alloc` feature (on by default), [`encoding`] reads and writes the keys as PKCS#8 and
//! SubjectPublicKeyInfo, in DER or PEM (RFC 8410), the form OpenSSL uses; [`weierstrass::encoding`] does the
//! same for P-256 and secp256k1 keys (RFC 5480 / RFC 5915, plus SEC1 `EC PRIVATE KEY` files).

pub mod curve25519;
pub mod ed25519;
#[cfg(feature = "alloc")]
pub mod encoding;
pub mod p256;
pub(crate) mod safegcd;
pub mod secp256k1;
pub(crate) mod table;
pub mod weierstrass;
pub mod x25519;
