//! Multi-way SHAKE: 4 or 8 independent SHAKE instances advanced together by one multi-way permutation.
//!
//! Every lane produces exactly the bytes the single-instance [`Shake128`](super::Shake128) /
//! [`Shake256`](super::Shake256) would for the same input.

use super::{Backend, Sponge, f1600_x4_with, f1600_x8_with};
use crate::dispatch::Checked;

const SHAKE_DS: u8 = 0x1F;

macro_rules! shake_multi {
    ($(#[$doc:meta])* $name:ident, $n:expr, $perm:ident, $s128:ident, $s256:ident) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name {
            /// `states[i][k]` is lane `i` of instance `k`.
            states: [[u64; $n]; 25],
            rate: usize,
            /// Bytes squeezed from the current block.
            pos: usize,
            backend: Checked<Backend>,
        }

        impl $name {
            /// SHAKE128 of each input; read the outputs with [`squeeze`](Self::squeeze).
            pub fn shake128(inputs: [&[u8]; $n]) -> Self {
                Self::with_backend(Backend::detect(), 168, inputs)
            }

            /// SHAKE256 of each input; read the outputs with [`squeeze`](Self::squeeze).
            pub fn shake256(inputs: [&[u8]; $n]) -> Self {
                Self::with_backend(Backend::detect(), 136, inputs)
            }

            /// As `shake128`/`shake256` (by `rate`: 168 or 136 bytes) with a forced backend, for tests.
            #[doc(hidden)]
            pub fn with_backend(backend: Checked<Backend>, rate: usize, inputs: [&[u8]; $n]) -> Self {
                let rate = if rate == 136 { 136 } else { 168 };
                let mut states = [[0u64; $n]; 25];
                let len = inputs[0].len();
                if inputs.iter().all(|i| i.len() == len) {
                    // Same length: absorb all full blocks together.
                    let full = len / rate;
                    for b in 0..full {
                        for (k, input) in inputs.iter().enumerate() {
                            let block = &input[b * rate..(b + 1) * rate];
                            for (i, w) in block.chunks_exact(8).enumerate() {
                                states[i][k] ^= u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
                            }
                        }
                        $perm(backend, &mut states);
                    }
                    for (k, input) in inputs.iter().enumerate() {
                        let mut s = Sponge::new(rate, SHAKE_DS, backend);
                        s.absorb(&input[full * rate..]);
                        pad_no_permute(&mut s);
                        for i in 0..25 {
                            states[i][k] ^= s.state[i];
                        }
                    }
                } else {
                    // Different lengths: absorb each lane on its own, then run the padding permutation together.
                    for (k, input) in inputs.iter().enumerate() {
                        let mut s = Sponge::new(rate, SHAKE_DS, backend);
                        s.absorb(input);
                        pad_no_permute(&mut s);
                        for i in 0..25 {
                            states[i][k] = s.state[i];
                        }
                    }
                }
                $perm(backend, &mut states);
                $name { states, rate, pos: 0, backend }
            }

            /// Writes the next output bytes of instance `k` into `outputs[k]`.
            ///
            /// All instances advance by the longest output's length; give equal lengths to keep every
            /// instance's stream contiguous.
            pub fn squeeze(&mut self, mut outputs: [&mut [u8]; $n]) {
                let total = outputs.iter().map(|o| o.len()).max().unwrap_or(0);
                let mut done = 0;
                while done < total {
                    if self.pos == self.rate {
                        $perm(self.backend, &mut self.states);
                        self.pos = 0;
                    }
                    let n = (total - done).min(self.rate - self.pos);
                    for (k, out) in outputs.iter_mut().enumerate() {
                        if out.len() <= done {
                            continue;
                        }
                        let m = (out.len() - done).min(n);
                        for (j, o) in out[done..done + m].iter_mut().enumerate() {
                            let i = self.pos + j;
                            *o = (self.states[i / 8][k] >> (8 * (i % 8))) as u8;
                        }
                    }
                    self.pos += n;
                    done += n;
                }
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($name), " { .. }"))
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                zeroize::Zeroize::zeroize(&mut self.states);
            }
        }

        /// SHAKE128 of each `inputs[k]`, written to `outputs[k]` (any lengths).
        pub fn $s128(inputs: [&[u8]; $n], outputs: [&mut [u8]; $n]) {
            $name::shake128(inputs).squeeze(outputs)
        }

        /// SHAKE256 of each `inputs[k]`, written to `outputs[k]` (any lengths).
        pub fn $s256(inputs: [&[u8]; $n], outputs: [&mut [u8]; $n]) {
            $name::shake256(inputs).squeeze(outputs)
        }
    };
}

/// XORs the SHAKE padding into a single sponge without the final permutation.
fn pad_no_permute(s: &mut Sponge) {
    super::xor_bytes(&mut s.state, s.pos, &[s.ds]);
    super::xor_bytes(&mut s.state, s.rate - 1, &[0x80]);
}

shake_multi!(
    /// Four SHAKE instances run together (AVX2: one state per 64-bit lane of 25 `ymm` registers).
    ShakeX4, 4, f1600_x4_with, shake128_x4, shake256_x4
);
shake_multi!(
    /// Eight SHAKE instances run together (AVX-512: one state per 64-bit lane of 25 `zmm` registers).
    ShakeX8, 8, f1600_x8_with, shake128_x8, shake256_x8
);
