//! Report (b): the 512-bit cipher comparison. ChaCha20, Kusumi512 and Threefish-512-CTR, each in three modes:
//! - `one-shot`: `apply_keystream_to_vec`, returning new memory;
//! - `in-place`: `apply_keystream` on the caller's buffer;
//! - `stream`: through `std::io::Write` with pqkit's `StreamWriter` (the same adapter for every cipher).
//!
//! Every cipher is driven through pqkit's `StreamCipher` trait, so the three modes cost the same plumbing for
//! every implementation and only the keystream generation differs.

use super::chacha::{ossl_chacha20, rc_chacha20};
use super::{ByRef, KEY32, e, ossl, v};
use crate::registry::{Algorithm, Candidate, Op, Report};
use pqkit::cipher::{StreamCipher, StreamWriter};
use std::io::Write;

/// Sizes of report (b): 1 KiB, 16 KiB (the middle of the range, where Kusumi512 and ChaCha20 differ most) and 1 MiB.
pub const SIZES: [usize; 3] = [1024, 16 * 1024, 1 << 20];
/// The three modes, as operation names.
pub const MODES: [&str; 3] = ["one-shot", "in-place", "stream"];

/// The 64-byte Threefish key.
pub const KEY64: [u8; 64] = {
    let mut k = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        k[i] = KEY32[i % 32] ^ (i as u8);
        i += 1;
    }
    k
};
/// The 16-byte Threefish-512-CTR nonce (the tweak).
pub const NONCE16: [u8; 16] = [0x5a; 16];
/// The 12-byte Kusumi512 nonce.
pub const NONCE12: [u8; 12] = super::NONCE12;

/// Threefish-512 in counter mode built from RustCrypto's `threefish` block cipher, with pqkit's documented
/// layout: keystream block `i` is `Threefish-512(key, tweak = nonce, LE64(i) || 56 zero bytes)`.
pub struct ThreefishCtr {
    cipher: threefish::Threefish512,
    block: [u8; 64],
    counter: u64,
    used: usize,
}

impl ThreefishCtr {
    /// Keyed with [`KEY64`] and [`NONCE16`] (the tweak).
    pub fn new() -> Self {
        ThreefishCtr {
            cipher: threefish::Threefish512::new_with_tweak(&KEY64, &NONCE16),
            block: [0; 64],
            counter: 0,
            used: 64,
        }
    }
    fn refill(&mut self) {
        use threefish::cipher::BlockCipherEncrypt;
        let mut b = threefish::cipher::Block::<threefish::Threefish512>::default();
        b[..8].copy_from_slice(&self.counter.to_le_bytes());
        self.cipher.encrypt_block(&mut b);
        self.block.copy_from_slice(&b);
        self.counter = self.counter.wrapping_add(1);
        self.used = 0;
    }
}

impl Default for ThreefishCtr {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamCipher for ThreefishCtr {
    fn apply_keystream(&mut self, data: &mut [u8]) -> pqkit::Result<()> {
        for byte in data.iter_mut() {
            if self.used == 64 {
                self.refill();
            }
            *byte ^= self.block[self.used];
            self.used += 1;
        }
        Ok(())
    }
    fn seek(&mut self, position: u64) -> pqkit::Result<()> {
        self.counter = position / 64;
        self.refill();
        self.used = (position % 64) as usize;
        Ok(())
    }
    fn position(&self) -> u64 {
        self.counter.saturating_sub(1) * 64 + self.used as u64
    }
}

/// The operation for one mode over a prepared cipher.
pub fn mode_op<C: StreamCipher + Send + 'static>(mode: &str, mut c: C) -> Box<dyn Op> {
    match mode {
        "one-shot" => Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
            *out = c.apply_keystream_to_vec(data).map_err(e)?;
            Ok(())
        }),
        "in-place" => Box::new(move |data: &mut [u8], _out: &mut Vec<u8>| c.apply_keystream(data).map_err(e)),
        _ => Box::new(move |data: &mut [u8], out: &mut Vec<u8>| {
            out.clear();
            let mut w = StreamWriter::new(&mut *out, ByRef(&mut c));
            w.write_all(data).map_err(e)?;
            w.flush().map_err(e)?;
            Ok(())
        }),
    }
}

/// The family's algorithms: one per (cipher, mode).
pub fn algorithms() -> Vec<Algorithm> {
    let mut v_out = Vec::new();
    for mode in MODES {
        let m: &'static str = mode;
        #[allow(unused_mut)]
        let mut chacha = Algorithm::bulk("ChaCha20", m)
            .sizes(&SIZES)
            .reports(&[Report::B])
            .with(Candidate::new("openssl", ossl(), move |_| Ok(mode_op(m, ossl_chacha20()?))))
            .with(Candidate::new("rustcrypto", v("chacha20"), move |_| Ok(mode_op(m, rc_chacha20()))));
        #[allow(unused_mut)]
        let mut tf = Algorithm::bulk("Threefish-512-CTR", m)
            .sizes(&SIZES)
            .reports(if m == "in-place" { &[Report::A, Report::B] } else { &[Report::B] })
            .with(Candidate::new("rustcrypto", v("threefish"), move |_| Ok(mode_op(m, ThreefishCtr::new()))));
        #[cfg(feature = "pqkit-algs")]
        {
            chacha.candidates.insert(
                0,
                Candidate::new("pqkit", super::pqkit_version(), move |_| {
                    Ok(mode_op(m, super::chacha::pqkit_chacha20()?))
                }),
            );
        }
        #[cfg(feature = "pqkit-algs")]
        {
            tf.candidates.insert(
                0,
                Candidate::new("pqkit", super::pqkit_version(), move |_| {
                    Ok(mode_op(m, pqkit::threefish::Threefish512Ctr::new(&KEY64, &NONCE16).map_err(e)?))
                }),
            );
            let kusumi = Algorithm::bulk("Kusumi512", m).sizes(&SIZES).reports(&[Report::B]).with(Candidate::new(
                "pqkit",
                super::pqkit_version(),
                move |_| Ok(mode_op(m, pqkit::kusumi::Kusumi512::new(&KEY64, &NONCE12).map_err(e)?)),
            ));
            v_out.push(kusumi);
        }
        v_out.push(chacha);
        v_out.push(tf);
    }
    // Kusumi512-Poly1305 open (verify, then decrypt in place), the counterpart of the seal row in `aead.rs`, with
    // the open machinery and sizes of the ChaCha20-Poly1305 open row there. It has no peer; REPORT.md's
    // section (b) sets it next to pqkit's ChaCha20-Poly1305.
    #[cfg(feature = "pqkit-algs")]
    v_out.push(Algorithm::bulk("Kusumi512-Poly1305", "open").with(Candidate::new(
        "pqkit",
        super::pqkit_version(),
        |_| Ok(super::aead_ops::pqkit_open(pqkit::aead::Kusumi512Poly1305::new(&KEY64).map_err(e)?)),
    )));
    v_out
}
