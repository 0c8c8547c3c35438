//! `cipher` 0.5: `StreamCipher`, `StreamCipherSeek` and `KeyIvInit` for pqkit's stream ciphers.
//!
//! Positions are byte offsets from the instance's starting block (counter 0 for the ChaCha family and
//! Threefish-512-CTR, counter 1 for Kusumi512, as with the native `new`), exactly as in
//! [`crate::cipher::StreamCipher`].
//!
//! ## Counter exhaustion
//! pqkit never wraps a counter. `check_remaining` (and with it every `try_*` method and the panicking
//! `apply_keystream` family of the trait) refuses a call that would run past the last keystream byte,
//! before touching data. The `unchecked_*` methods exist in the trait for ciphers that can skip the check;
//! here they cannot produce keystream past the end either, and panic instead of reusing it. Unlike
//! RustCrypto's ciphers, which keep the last block back, the whole counter range is usable, so
//! `check_remaining` accepts one block more than theirs at the very end.

use crate::chacha::{ChaCha8, ChaCha12, ChaCha20, ChaCha20Legacy, XChaCha20};
use crate::cipher::StreamCipher as _;
use crate::kusumi::Kusumi512;
use crate::threefish::Threefish512Ctr;
use ::cipher::consts::{U8, U12, U16, U24, U32, U64};
use ::cipher::inout::InOutBuf;
use ::cipher::{
    Iv, IvSizeUser, Key, KeyIvInit, KeySizeUser, OverflowError, SeekNum, StreamCipher, StreamCipherError,
    StreamCipherSeek,
};

macro_rules! rustcrypto_stream_cipher {
    ($($ty:ident: key $key:ty, iv $iv:ty;)*) => {$(
        impl KeySizeUser for $ty {
            type KeySize = $key;
        }

        impl IvSizeUser for $ty {
            type IvSize = $iv;
        }

        /// The native `new(key, nonce)`: the IV is the nonce. The length checks cannot fail here.
        impl KeyIvInit for $ty {
            fn new(key: &Key<Self>, iv: &Iv<Self>) -> Self {
                super::fixed_len(<$ty>::new(key.as_slice(), iv.as_slice()))
            }
        }

        impl StreamCipher for $ty {
            /// `Ok` if `data_len` more keystream bytes exist before the end of the counter range.
            fn check_remaining(&self, data_len: usize) -> Result<(), StreamCipherError> {
                let end = u128::from(self.position()) + data_len as u128;
                if end <= u128::from(self.max_position()) { Ok(()) } else { Err(StreamCipherError) }
            }

            /// # Panics
            /// If the keystream would run past the end of the counter range (call `check_remaining` first, or
            /// use the `try_*` methods): pqkit does not wrap the counter.
            fn unchecked_apply_keystream_inout(&mut self, buf: InOutBuf<'_, '_, u8>) {
                let out = buf.into_out_with_copied_in();
                if let Err(e) = crate::cipher::StreamCipher::apply_keystream(self, out) {
                    panic!("{e}");
                }
            }

            /// # Panics
            /// As [`unchecked_apply_keystream_inout`](Self::unchecked_apply_keystream_inout).
            fn unchecked_write_keystream(&mut self, buf: &mut [u8]) {
                buf.fill(0);
                if let Err(e) = crate::cipher::StreamCipher::apply_keystream(self, buf) {
                    panic!("{e}");
                }
            }
        }

        impl StreamCipherSeek for $ty {
            fn try_current_pos<T: SeekNum>(&self) -> Result<T, OverflowError> {
                // With a block size of 1 and byte 1 of it, `from_block_byte` gives back the block number.
                T::from_block_byte(self.position(), 1, 1)
            }

            /// Fails (changing nothing) for a negative position or one past the end of the counter range.
            fn try_seek<T: SeekNum>(&mut self, pos: T) -> Result<(), StreamCipherError> {
                let (pos, _): (u64, u8) = pos.into_block_byte(1).map_err(|_| StreamCipherError)?;
                crate::cipher::StreamCipher::seek(self, pos).map_err(|_| StreamCipherError)
            }
        }
    )*};
}

rustcrypto_stream_cipher! {
    ChaCha20: key U32, iv U12;
    XChaCha20: key U32, iv U24;
    ChaCha20Legacy: key U32, iv U8;
    ChaCha12: key U32, iv U8;
    ChaCha8: key U32, iv U8;
    Kusumi512: key U64, iv U12;
    Threefish512Ctr: key U64, iv U16;
}
