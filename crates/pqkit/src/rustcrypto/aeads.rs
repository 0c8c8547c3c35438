//! `aead` 0.6: `AeadCore`, `AeadInOut` and `KeyInit` for every pqkit AEAD.
//!
//! `AeadInOut` gives, through the trait crate's blanket implementations, `Aead` (with `alloc`) and the
//! deprecated `AeadInPlace` as well. Both directions run pqkit's one-pass in-place code: a separate output
//! buffer is first filled with the input, then sealed or opened in place.
//!
//! Opening verifies the tag in constant time before decrypting; on failure the output buffer holds the
//! ciphertext (never plaintext) and the error is `aead::Error`, which by design says nothing more. Nonces
//! of the wrong length cannot be expressed (the nonce is an array of the algorithm's length).

use crate::aead::{Aead as _, Aes128Gcm, Aes256Gcm, ChaCha20Poly1305, Kusumi512Poly1305, XChaCha20Poly1305};
use ::aead::array::Array;
use ::aead::consts::{U12, U16, U24, U32, U64};
use ::aead::inout::InOutBuf;
use ::aead::{AeadCore, AeadInOut, Key, KeyInit, KeySizeUser, Nonce, Tag, TagPosition};

macro_rules! rustcrypto_aead {
    ($($ty:ident: key $key:ty, nonce $nonce:ty;)*) => {$(
        impl KeySizeUser for $ty {
            type KeySize = $key;
        }

        /// Keys the AEAD from a key of the type's length (the check of the native `new` cannot fail here).
        /// For AES-GCM the key takes 12-byte nonces only, as from the native `new`.
        impl KeyInit for $ty {
            fn new(key: &Key<Self>) -> Self {
                super::fixed_len(<$ty>::new(key.as_slice()))
            }
        }

        impl AeadCore for $ty {
            type NonceSize = $nonce;
            type TagSize = U16;
            const TAG_POSITION: TagPosition = TagPosition::Postfix;
        }

        /// pqkit's in-place seal and open. Errors: a message or associated data longer than the algorithm
        /// allows, or (opening) a tag that does not verify; in both cases no plaintext is released.
        impl AeadInOut for $ty {
            fn encrypt_inout_detached(
                &self,
                nonce: &Nonce<Self>,
                associated_data: &[u8],
                buffer: InOutBuf<'_, '_, u8>,
            ) -> ::aead::Result<Tag<Self>> {
                let buf = buffer.into_out_with_copied_in();
                let tag = self.seal_in_place_detached(nonce.as_slice(), associated_data, buf).map_err(|_| ::aead::Error)?;
                Ok(Array(tag))
            }

            fn decrypt_inout_detached(
                &self,
                nonce: &Nonce<Self>,
                associated_data: &[u8],
                buffer: InOutBuf<'_, '_, u8>,
                tag: &Tag<Self>,
            ) -> ::aead::Result<()> {
                let buf = buffer.into_out_with_copied_in();
                self.open_in_place_detached(nonce.as_slice(), associated_data, buf, tag.as_slice())
                    .map_err(|_| ::aead::Error)
            }
        }
    )*};
}

rustcrypto_aead! {
    ChaCha20Poly1305: key U32, nonce U12;
    XChaCha20Poly1305: key U32, nonce U24;
    Aes128Gcm: key U16, nonce U12;
    Aes256Gcm: key U32, nonce U12;
    Kusumi512Poly1305: key U64, nonce U12;
}
