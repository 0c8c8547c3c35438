//! `digest` 0.11: `Digest` for every fixed-output hash, `ExtendableOutput` for SHAKE, `Mac` for HMAC.
//!
//! `Digest` comes from the trait crate's blanket implementation over `Update + FixedOutput + Default +
//! HashMarker`, which this file implements by calling each hasher's native methods; `FixedOutputReset` and
//! `Reset` are there too. SHAKE128/256 implement `ExtendableOutput` (+ `Reset` variants) with
//! [`ShakeReader`] as the `XofReader`. [`Hmac`] over any of the fixed hashes here implements `KeyInit` (keys
//! of any length through `new_from_slice`, as RFC 2104 allows), `Update`, `FixedOutput` and `MacMarker`, hence
//! `Mac`, whose tag comparison is the trait crate's constant-time one.
//!
//! Hash states that may hold secrets (HMAC's) are wiped as in the native API; a state taken by a `*_reset`
//! method is replaced by a fresh one and the old one dropped (and wiped where the native type wipes on drop).

use crate::hash::Hasher;
use crate::hash::blake2::{Blake2b512, Blake2s256};
use crate::hash::sha2::{Sha224, Sha256, Sha384, Sha512, Sha512_224, Sha512_256};
use crate::hash::sha3::{Sha3_224, Sha3_256, Sha3_384, Sha3_512, Shake128, Shake256, ShakeReader};
use crate::hash::skein::{Skein512_256, Skein512_512};
use crate::mac::Hmac;
use ::digest::consts::{U28, U32, U48, U64, U72, U104, U128, U136, U144, U168};
use ::digest::{
    ExtendableOutput, ExtendableOutputReset, FixedOutput, FixedOutputReset, HashMarker, InvalidLength, Key, KeyInit,
    MacMarker, Output, OutputSizeUser, Reset, Update, XofReader,
};
use crypto_common::{BlockSizeUser, KeySizeUser};

macro_rules! rustcrypto_digest {
    ($($ty:ident: output $out:ty, block $block:ty;)*) => {$(
        impl HashMarker for $ty {}

        impl OutputSizeUser for $ty {
            type OutputSize = $out;
        }

        impl BlockSizeUser for $ty {
            type BlockSize = $block;
        }

        impl Update for $ty {
            fn update(&mut self, data: &[u8]) {
                Hasher::update(self, data);
            }
        }

        impl FixedOutput for $ty {
            fn finalize_into(self, out: &mut Output<Self>) {
                out.copy_from_slice(Hasher::finalize(self).as_ref());
            }
        }

        impl Reset for $ty {
            fn reset(&mut self) {
                Hasher::reset(self);
            }
        }

        impl FixedOutputReset for $ty {
            fn finalize_into_reset(&mut self, out: &mut Output<Self>) {
                let done = core::mem::take(self);
                out.copy_from_slice(Hasher::finalize(done).as_ref());
            }
        }
    )*};
}

rustcrypto_digest! {
    Sha224: output U28, block U64;
    Sha256: output U32, block U64;
    Sha384: output U48, block U128;
    Sha512: output U64, block U128;
    Sha512_224: output U28, block U128;
    Sha512_256: output U32, block U128;
    Sha3_224: output U28, block U144;
    Sha3_256: output U32, block U136;
    Sha3_384: output U48, block U104;
    Sha3_512: output U64, block U72;
    Blake2b512: output U64, block U128;
    Blake2s256: output U32, block U64;
    Skein512_256: output U32, block U64;
    Skein512_512: output U64, block U64;
}

/// Reads SHAKE output: the concatenation of all reads equals one long read.
impl XofReader for ShakeReader {
    fn read(&mut self, buffer: &mut [u8]) {
        ShakeReader::read(self, buffer);
    }
}

macro_rules! rustcrypto_xof {
    ($($ty:ident: block $block:ty;)*) => {$(
        impl HashMarker for $ty {}

        impl BlockSizeUser for $ty {
            type BlockSize = $block;
        }

        impl Update for $ty {
            fn update(&mut self, data: &[u8]) {
                <$ty>::update(self, data);
            }
        }

        impl ExtendableOutput for $ty {
            type Reader = ShakeReader;

            fn finalize_xof(self) -> ShakeReader {
                <$ty>::finalize_xof(&self)
            }
        }

        impl Reset for $ty {
            fn reset(&mut self) {
                <$ty>::reset(self);
            }
        }

        impl ExtendableOutputReset for $ty {
            fn finalize_xof_reset(&mut self) -> ShakeReader {
                let reader = <$ty>::finalize_xof(self);
                <$ty>::reset(self);
                reader
            }
        }
    )*};
}

rustcrypto_xof! {
    Shake128: block U168;
    Shake256: block U136;
}

impl<H: Hasher + OutputSizeUser> OutputSizeUser for Hmac<H> {
    type OutputSize = H::OutputSize;
}

/// The nominal key size is the hash's block length (what `KeyInit::new` takes); `new_from_slice` accepts keys
/// of any length, hashing those longer than a block (RFC 2104). Use keys at least as long as the output.
impl<H: Hasher + BlockSizeUser> KeySizeUser for Hmac<H> {
    type KeySize = H::BlockSize;
}

impl<H: Hasher + BlockSizeUser> KeyInit for Hmac<H> {
    fn new(key: &Key<Self>) -> Self {
        Hmac::new(key.as_slice())
    }

    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
        Ok(Hmac::new(key))
    }
}

impl<H: Hasher> Update for Hmac<H> {
    fn update(&mut self, data: &[u8]) {
        Hmac::update(self, data);
    }
}

impl<H: Hasher + OutputSizeUser> FixedOutput for Hmac<H> {
    fn finalize_into(self, out: &mut Output<Self>) {
        let mut tag = Hmac::finalize(self);
        out.copy_from_slice(tag.as_ref());
        zeroize::Zeroize::zeroize(tag.as_mut());
    }
}

impl<H: Hasher> Reset for Hmac<H> {
    fn reset(&mut self) {
        Hmac::reset(self);
    }
}

impl<H: Hasher + OutputSizeUser> FixedOutputReset for Hmac<H> {
    fn finalize_into_reset(&mut self, out: &mut Output<Self>) {
        let mut tag = Hmac::finalize_reset(self);
        out.copy_from_slice(tag.as_ref());
        zeroize::Zeroize::zeroize(tag.as_mut());
    }
}

impl<H: Hasher> MacMarker for Hmac<H> {}
