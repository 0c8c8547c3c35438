//! The `Bmi2Adx` backend: GF(2^255 − 19) in four 64-bit limbs, multiplied with `mulx` (BMI2) and two
//! independent carry chains `adcx`/`adox` (ADX), in `asm!`.
//!
//! ## Representation
//! An element is any value below 2^256 (not necessarily below p); 2^256 = 38 (mod p) folds the top. Every
//! operation returns a value below 2^256, so unlike [`Fe51`] there are no limb bounds
//! to respect. [`Fe64::to_bytes`] reduces fully.
//!
//! - `mul`: the 4×4 schoolbook product, row by row: `mulx` forms a row's 64×64 → 128-bit products, their
//!   low halves go into the accumulator on the overflow-flag chain (`adox`) and their high halves on the
//!   carry-flag chain (`adcx`), so the two chains run interleaved without waiting on each other. The high
//!   256 bits are then multiplied by 38 and added to the low ones the same way, and the bits from 255 up
//!   folded once more (times 19), leaving a value below 2^255 + 2^13.
//! - `square`: the six cross products once, doubled by a shift chain, plus the four squares (10 `mulx`
//!   instead of 16).
//! - `add`, `sub`: `add`/`adc` (`sub`/`sbb`) chains in `asm!` on registers, the carry folded by mask.
//! - `mul_small`, selections: plain Rust.
//! - `inv`: the constant-time Bernstein–Yang divsteps of `ec::safegcd`, shared by every curve, with the
//!   divsteps themselves on packed words by `cmov` ([`crate::x86::divsteps`]); faster than Fermat's
//!   chain of 254 dependent squarings here.
//!
//! The Edwards operations (Ed25519, X25519 public keys) run over `Fe64`; the fixed-base multiplication
//! ([`fixed_base`]) does each of its 63 additions as one `asm!` block, from two tables (even and odd
//! radix-16 digits) so that it needs no doublings. With AVX2 (`Bmi2AdxAvx2`) it takes signed radix-32
//! digits instead, from one table of 16 entries a row ([`BASE_RADIX32`]): 51 additions, each block also
//! doing its table look-up (a vector scan of the row) and prefetching the next row. X25519's variable-base ladder
//! ([`ladder_asm`]) does each whole step in one `asm!` block over a state in memory: no spills or moves
//! between the operations, adds and subtractions with a single fold because every product is kept below
//! 2p, and no swaps (only the doubling's input is selected by mask).
//!
//! ## Constant time
//! No branches or memory indices depend on values: carries are folded by multiplying them by 38.
//!
//! ## Safety
//! `mulx`, `adcx` and `adox` need BMI2 and ADX. [`Fe64`] is private to this file, and values of it are only
//! ever made inside the entry points at the end of the file (and the unit tests), each of which first asserts
//! that its `Checked<Backend>` covers `Backend::Bmi2Adx` (the one dispatch mechanism, [`crate::dispatch`]): so the
//! `asm!` blocks only ever run on a CPU that has both.
#![allow(unsafe_code)]

use super::edwards::{self, AffineNiels, CurveField, Point};
use super::edwards::{BASE_ODD as BASE_ODD_FE51, BASE_TABLE as BASE_TABLE_FE51, BASE128_ODD as BASE128_ODD_FE51};
use super::field::{Fe51, Field, Mask};
use super::scalar::Scalar;
use super::{Affine, Backend, generic};
use crate::dispatch::Checked;
use core::arch::asm;
use ladder::ladder_asm;

#[macro_use]
mod ops;
mod fixed_base;
mod ladder;

/// A field element for the BMI2/ADX backend: four little-endian 64-bit limbs, value below 2^256.
/// `repr(transparent)`: 32 bytes, the limbs in order (the AVX2 look-up reads table rows as memory).
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Fe64([u64; 4]);

impl Fe64 {
    /// The element of a portable one (at compile time, for constants and tables).
    const fn from_fe51(a: &Fe51) -> Fe64 {
        let b = Fe51::to_bytes(*a);
        let mut w = [0u64; 4];
        let mut i = 0;
        while i < 4 {
            let mut j = 0;
            while j < 8 {
                w[i] |= (b[8 * i + j] as u64) << (8 * j);
                j += 1;
            }
            i += 1;
        }
        Fe64(w)
    }

    /// `v + 38·c` for a 4-limb `v` and a carry word `c` < 2^63: the fold of 2^256 = 38, twice (the second
    /// carry, when there is one, leaves a tiny value, so the last addition cannot overflow).
    #[inline(always)]
    fn fold(v: [u64; 4], c: u64) -> Fe64 {
        let mut r = [0u64; 4];
        let mut carry = (c as u128) * 38;
        for i in 0..4 {
            let t = v[i] as u128 + carry;
            r[i] = t as u64;
            carry = t >> 64;
        }
        r[0] += (carry as u64) * 38;
        Fe64(r)
    }
}

/// Converts an entry of the portable backend's tables at compile time.
const fn niels_from_fe51(n: &AffineNiels<Fe51>) -> AffineNiels<Fe64> {
    AffineNiels { ypx: Fe64::from_fe51(&n.ypx), ymx: Fe64::from_fe51(&n.ymx), xy2d: Fe64::from_fe51(&n.xy2d) }
}

/// Converts a row of C entries of the portable backend's tables at compile time.
const fn row_from_fe51<const C: usize>(src: &[AffineNiels<Fe51>; C]) -> [AffineNiels<Fe64>; C] {
    let mut out = [AffineNiels { ypx: Fe64([0; 4]), ymx: Fe64([0; 4]), xy2d: Fe64([0; 4]) }; C];
    let mut j = 0;
    while j < C {
        out[j] = niels_from_fe51(&src[j]);
        j += 1;
    }
    out
}

/// Converts a table of R rows of C entries of the portable backend at compile time.
const fn rows_from_fe51<const R: usize, const C: usize>(
    src: &[[AffineNiels<Fe51>; C]; R],
) -> [[AffineNiels<Fe64>; C]; R] {
    let mut out = [[AffineNiels { ypx: Fe64([0; 4]), ymx: Fe64([0; 4]), xy2d: Fe64([0; 4]) }; C]; R];
    let mut i = 0;
    while i < R {
        out[i] = row_from_fe51(&src[i]);
        i += 1;
    }
    out
}

static BASE_TABLE: [[AffineNiels<Fe64>; 8]; 32] = rows_from_fe51(&BASE_TABLE_FE51);

/// `BASE_TABLE_ODD[i][j] = (j + 1)·16·256^i·B`: the rows of the odd radix-16 digits, so that the fixed-base
/// comb ([`fixed_base`]) needs no doublings.
static BASE_TABLE_ODD: [[AffineNiels<Fe64>; 8]; 32] = rows_from_fe51(&edwards::BASE_TABLE_ODD);

/// `BASE_RADIX32[i][j] = (j + 1)·32^i·B`: the rows of the signed radix-32 digits ([`edwards::radix32`]) of the
/// AVX2 fixed-base comb ([`fixed_base::mul_base_comb_avx2`]), 52 rows of 16 entries (78 KiB).
static BASE_RADIX32: [[AffineNiels<Fe64>; 16]; 52] = rows_from_fe51(&edwards::BASE_RADIX32);

static BASE_ODD: [AffineNiels<Fe64>; 64] = row_from_fe51(&BASE_ODD_FE51);
static BASE128_ODD: [AffineNiels<Fe64>; 64] = row_from_fe51(&BASE128_ODD_FE51);

impl CurveField for Fe64 {
    #[inline(always)]
    fn base_table() -> &'static [[AffineNiels<Fe64>; 8]; 32] {
        &BASE_TABLE
    }
    #[inline(always)]
    fn base_odd() -> &'static [AffineNiels<Fe64>; 64] {
        &BASE_ODD
    }
    #[inline(always)]
    fn base128_odd() -> &'static [AffineNiels<Fe64>; 64] {
        &BASE128_ODD
    }
}

impl Field for Fe64 {
    const ZERO: Self = Fe64([0; 4]);
    const ONE: Self = Fe64([1, 0, 0, 0]);
    const D: Self = Fe64::from_fe51(&Fe51::D);
    const D2: Self = Fe64::from_fe51(&Fe51::D2);
    const SQRT_M1: Self = Fe64::from_fe51(&Fe51::SQRT_M1);

    #[inline]
    fn from_bytes(b: &[u8; 32]) -> Self {
        let mut w = [0u64; 4];
        for (w, c) in w.iter_mut().zip(b.chunks_exact(8)) {
            *w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        }
        w[3] &= (1 << 63) - 1;
        Fe64(w)
    }

    #[inline]
    fn to_bytes(&self) -> [u8; 32] {
        // Fold bit 255 (2^255 = 19): below 2^255 + 19 < 2p.
        let mut v = self.0;
        let top = v[3] >> 63;
        v[3] &= (1 << 63) - 1;
        let mut carry = (top * 19) as u128;
        for x in v.iter_mut() {
            let t = *x as u128 + carry;
            *x = t as u64;
            carry = t >> 64;
        }
        // v >= p exactly when v + 19 reaches 2^255; then the answer is v + 19 − 2^255.
        let mut w = [0u64; 4];
        let mut carry = 19u128;
        for (o, x) in w.iter_mut().zip(v) {
            let t = x as u128 + carry;
            *o = t as u64;
            carry = t >> 64;
        }
        let ge = super::field::mask_from_bit(w[3] >> 63);
        w[3] &= (1 << 63) - 1;
        let mut out = [0u8; 32];
        for i in 0..4 {
            let r = (w[i] & ge) | (v[i] & !ge);
            out[8 * i..8 * i + 8].copy_from_slice(&r.to_le_bytes());
        }
        out
    }

    #[inline(always)]
    fn add(&self, rhs: &Self) -> Self {
        let [mut r0, mut r1, mut r2, mut r3] = self.0;
        let [b0, b1, b2, b3] = rhs.0;
        // SAFETY: plain x86_64 integer instructions on registers only (no memory, no stack).
        unsafe {
            asm!(
                "add {r0}, {b0}",
                "adc {r1}, {b1}",
                "adc {r2}, {b2}",
                "adc {r3}, {b3}",
                // A carry out is 2^256 = 38: add 38 by mask, and once more if that carries (then the
                // value is below 38, so the last addition cannot carry).
                "sbb {t}, {t}",
                "and {t}, 38",
                "add {r0}, {t}",
                "adc {r1}, 0",
                "adc {r2}, 0",
                "adc {r3}, 0",
                "sbb {t}, {t}",
                "and {t}, 38",
                "add {r0}, {t}",
                r0 = inout(reg) r0, r1 = inout(reg) r1, r2 = inout(reg) r2, r3 = inout(reg) r3,
                b0 = in(reg) b0, b1 = in(reg) b1, b2 = in(reg) b2, b3 = in(reg) b3,
                t = out(reg) _,
                options(pure, nomem, nostack),
            );
        }
        Fe64([r0, r1, r2, r3])
    }

    #[inline(always)]
    fn sub(&self, rhs: &Self) -> Self {
        let [mut r0, mut r1, mut r2, mut r3] = self.0;
        let [b0, b1, b2, b3] = rhs.0;
        // SAFETY: plain x86_64 integer instructions on registers only (no memory, no stack).
        unsafe {
            asm!(
                "sub {r0}, {b0}",
                "sbb {r1}, {b1}",
                "sbb {r2}, {b2}",
                "sbb {r3}, {b3}",
                // A borrow added 2^256 = 38: take 38 away by mask, and once more if that borrows (then the
                // value was below 38 and is now at least 2^256 − 38, so the last one cannot borrow).
                "sbb {t}, {t}",
                "and {t}, 38",
                "sub {r0}, {t}",
                "sbb {r1}, 0",
                "sbb {r2}, 0",
                "sbb {r3}, 0",
                "sbb {t}, {t}",
                "and {t}, 38",
                "sub {r0}, {t}",
                r0 = inout(reg) r0, r1 = inout(reg) r1, r2 = inout(reg) r2, r3 = inout(reg) r3,
                b0 = in(reg) b0, b1 = in(reg) b1, b2 = in(reg) b2, b3 = in(reg) b3,
                t = out(reg) _,
                options(pure, nomem, nostack),
            );
        }
        Fe64([r0, r1, r2, r3])
    }

    #[inline(always)]
    fn neg(&self) -> Self {
        Fe64::ZERO.sub(self)
    }

    #[inline(always)]
    fn mul(&self, rhs: &Self) -> Self {
        let (a, b) = (&self.0, &rhs.0);
        let (r0, r1, r2, r3): (u64, u64, u64, u64);
        // SAFETY: BMI2 and ADX are present (see the module docs: Fe64 exists only below entry points that
        // asserted a Checked backend covering Bmi2Adx). The block reads the 4 words at each of `a` and `b`
        // (valid references), writes only the registers it declares, and does not touch the stack.
        unsafe {
            asm!(
                // Row 0: t0..t4 = a·b0 (r8..r12).
                "mov rdx, [rdi]",
                "mulx r9, r8, [rsi]",
                "mulx r10, rax, [rsi + 8]",
                "add r9, rax",
                "mulx r11, rax, [rsi + 16]",
                "adc r10, rax",
                "mulx r12, rax, [rsi + 24]",
                "adc r11, rax",
                "adc r12, 0",
                // Row 1: += a·b1 at word 1 (t5 = r13). Low halves on OF, high halves on CF.
                "mov rdx, [rdi + 8]",
                "xor r13d, r13d",
                "mulx rcx, rax, [rsi]",
                "adox r9, rax",
                "adcx r10, rcx",
                "mulx rcx, rax, [rsi + 8]",
                "adox r10, rax",
                "adcx r11, rcx",
                "mulx rcx, rax, [rsi + 16]",
                "adox r11, rax",
                "adcx r12, rcx",
                "mulx rcx, rax, [rsi + 24]",
                "adox r12, rax",
                "adcx r13, rcx",
                "mov eax, 0",
                "adox r13, rax",
                // Row 2: += a·b2 at word 2 (t6 = r14).
                "mov rdx, [rdi + 16]",
                "xor r14d, r14d",
                "mulx rcx, rax, [rsi]",
                "adox r10, rax",
                "adcx r11, rcx",
                "mulx rcx, rax, [rsi + 8]",
                "adox r11, rax",
                "adcx r12, rcx",
                "mulx rcx, rax, [rsi + 16]",
                "adox r12, rax",
                "adcx r13, rcx",
                "mulx rcx, rax, [rsi + 24]",
                "adox r13, rax",
                "adcx r14, rcx",
                "mov eax, 0",
                "adox r14, rax",
                // Row 3: += a·b3 at word 3 (t7 = r15).
                "mov rdx, [rdi + 24]",
                "xor r15d, r15d",
                "mulx rcx, rax, [rsi]",
                "adox r11, rax",
                "adcx r12, rcx",
                "mulx rcx, rax, [rsi + 8]",
                "adox r12, rax",
                "adcx r13, rcx",
                "mulx rcx, rax, [rsi + 16]",
                "adox r13, rax",
                "adcx r14, rcx",
                "mulx rcx, rax, [rsi + 24]",
                "adox r14, rax",
                "adcx r15, rcx",
                "mov eax, 0",
                "adox r15, rax",
                // Reduce: t0..t3 += 38·(t4..t7), the top word into r12.
                "mov edx, 38",
                "xor esi, esi",
                "mulx rcx, rax, r12",
                "adox r8, rax",
                "adcx r9, rcx",
                "mulx rcx, rax, r13",
                "adox r9, rax",
                "adcx r10, rcx",
                "mulx rcx, rax, r14",
                "adox r10, rax",
                "adcx r11, rcx",
                "mulx r12, rax, r15",
                "adox r11, rax",
                "adcx r12, rsi",
                "adox r12, rsi",
                // Fold the bits from 255 up (the top word is below 2^7; 2^255 = 19) once: the result is below
                // 2^255 + 2^13, and bit 63 of r11 is clear before the carry, so it cannot carry out.
                "shld r12, r11, 1",
                "btr r11, 63",
                "imul r12, r12, 19",
                "add r8, r12",
                "adc r9, rsi",
                "adc r10, rsi",
                "adc r11, rsi",
                inout("rsi") a.as_ptr() => _,
                in("rdi") b.as_ptr(),
                out("rax") _, out("rcx") _, out("rdx") _,
                out("r8") r0, out("r9") r1, out("r10") r2, out("r11") r3,
                out("r12") _, out("r13") _, out("r14") _, out("r15") _,
                options(pure, readonly, nostack),
            );
        }
        Fe64([r0, r1, r2, r3])
    }

    #[inline(always)]
    fn square(&self) -> Self {
        let a = &self.0;
        let (r0, r1, r2, r3): (u64, u64, u64, u64);
        // SAFETY: as in `mul`: BMI2 and ADX are present (module docs); reads the 4 words at `a`, writes only
        // the declared registers, no stack.
        unsafe {
            asm!(
                // Cross products a_i·a_j (i < j) into t1..t6 (r9..r14).
                "mov rdx, [rsi]",
                "mulx r10, r9, [rsi + 8]",      // a0a1 at 1
                "mulx r11, rax, [rsi + 16]",    // a0a2 at 2
                "add r10, rax",
                "mulx r12, rax, [rsi + 24]",    // a0a3 at 3
                "adc r11, rax",
                "mov rdx, [rsi + 8]",
                "mulx r13, rax, [rsi + 24]",    // a1a3 at 4
                "adc r12, rax",
                "adc r13, 0",
                "mov rdx, [rsi + 16]",
                "mulx r14, rax, [rsi + 24]",    // a2a3 at 5
                "add r13, rax",
                "adc r14, 0",
                "mov rdx, [rsi + 8]",
                "mulx rcx, rax, [rsi + 16]",    // a1a2 at 3
                "add r11, rax",
                "adc r12, rcx",
                "adc r13, 0",
                "adc r14, 0",
                // Double them (t7 = the bit shifted out) and add the squares a_i² at 2i on the OF chain.
                "xor r15d, r15d",
                "adcx r9, r9",
                "adcx r10, r10",
                "adcx r11, r11",
                "adcx r12, r12",
                "adcx r13, r13",
                "adcx r14, r14",
                "adcx r15, r15",
                "mov rdx, [rsi]",
                "mulx rcx, r8, rdx",            // a0² at 0
                "adox r9, rcx",
                "mov rdx, [rsi + 8]",
                "mulx rcx, rax, rdx",           // a1² at 2
                "adox r10, rax",
                "adox r11, rcx",
                "mov rdx, [rsi + 16]",
                "mulx rcx, rax, rdx",           // a2² at 4
                "adox r12, rax",
                "adox r13, rcx",
                "mov rdx, [rsi + 24]",
                "mulx rcx, rax, rdx",           // a3² at 6
                "adox r14, rax",
                "adox r15, rcx",
                // Reduce exactly as in `mul`.
                "mov edx, 38",
                "xor esi, esi",
                "mulx rcx, rax, r12",
                "adox r8, rax",
                "adcx r9, rcx",
                "mulx rcx, rax, r13",
                "adox r9, rax",
                "adcx r10, rcx",
                "mulx rcx, rax, r14",
                "adox r10, rax",
                "adcx r11, rcx",
                "mulx r12, rax, r15",
                "adox r11, rax",
                "adcx r12, rsi",
                "adox r12, rsi",
                "shld r12, r11, 1",
                "btr r11, 63",
                "imul r12, r12, 19",
                "add r8, r12",
                "adc r9, rsi",
                "adc r10, rsi",
                "adc r11, rsi",
                inout("rsi") a.as_ptr() => _,
                out("rax") _, out("rcx") _, out("rdx") _,
                out("r8") r0, out("r9") r1, out("r10") r2, out("r11") r3,
                out("r12") _, out("r13") _, out("r14") _, out("r15") _,
                options(pure, readonly, nostack),
            );
        }
        Fe64([r0, r1, r2, r3])
    }

    #[inline(always)]
    fn mul_small(&self, k: u32) -> Self {
        let mut r = [0u64; 4];
        let mut carry = 0u128;
        for (o, &x) in r.iter_mut().zip(&self.0) {
            let t = (x as u128) * (k as u128) + carry;
            *o = t as u64;
            carry = t >> 64;
        }
        Fe64::fold(r, carry as u64)
    }

    #[inline(always)]
    fn select(a: &Self, b: &Self, mask: Mask) -> Self {
        let mut r = b.0;
        for (o, x) in r.iter_mut().zip(&a.0) {
            *o ^= mask & (x ^ *o);
        }
        Fe64(r)
    }

    /// Bernstein–Yang divsteps ([`crate::ec::safegcd`]) instead of Fermat's chain of 254 dependent
    /// squarings.
    #[inline]
    fn inv(&self) -> Self {
        // The canonical value (below p), as the inversion requires.
        let x = Fe64::from_bytes(&self.to_bytes());
        Fe64(crate::x86::divsteps::invert_p25519(&x.0))
    }

    #[inline(always)]
    fn or_masked(&self, a: &Self, mask: Mask) -> Self {
        let mut r = self.0;
        for (o, x) in r.iter_mut().zip(&a.0) {
            *o |= mask & x;
        }
        Fe64(r)
    }

    #[inline(always)]
    fn cswap(a: &mut Self, b: &mut Self, mask: Mask) {
        for i in 0..4 {
            let t = mask & (a.0[i] ^ b.0[i]);
            a.0[i] ^= t;
            b.0[i] ^= t;
        }
    }
}

// ---- Entry points: the only places Fe64 values come into being ---------------------------------------

/// Defines an entry point that checks the proof and runs the generic function over [`Fe64`].
macro_rules! entry {
    ($( $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty; )*) => {$(
        #[doc = concat!("`", stringify!($name), "` with the BMI2/ADX field (see the generic function).")]
        pub(super) fn $name(backend: Checked<Backend>, $($arg: $t),*) -> $ret {
            // The proof that mulx/adcx/adox may run: every asm! block above relies on it.
            assert!(backend.covers(Backend::Bmi2Adx));
            generic::$name::<Fe64>($($arg),*)
        }
    )*};
}

/// X25519's variable-base ladder with this backend for a clamped `k` (the contract of the parent's
/// `x25519`): [`ladder_asm`], each step one `asm!` block over the ladder state in memory, the field
/// elements kept below 2p (or 2^256) between operations, and the last three steps doublings alone.
pub(super) fn x25519(backend: Checked<Backend>, k: &[u8; 32], u: &[u8; 32]) -> [u8; 32] {
    // The proof that mulx/adcx/adox may run: `ladder_step` relies on it.
    assert!(backend.covers(Backend::Bmi2Adx));
    ladder_asm::<true>(k, u)
}

// ---- The fixed-base look-up in AVX2 ------------------------------------------------------------------

/// [`edwards::lookup`] in AVX2, for rows of any even length N (8 for the radix-16 tables, 16 for
/// [`BASE_RADIX32`]): the entry `d·row[0]` for a digit d in \[−N, N\]. Every one of the N entries is read as
/// three 256-bit words (y + x, y − x, 2dxy: the `repr(C)` layout of `AffineNiels<Fe64>`, 96 bytes, rows at
/// a stride of 96) and ANDed with a vector mask from a vector comparison of |d| with a counter, the results
/// ORed into the identity (1, 1, 0) masked by |d| = 0; the negation for d < 0 is by mask
/// (`AffineNiels::cneg`). Constant time: the addresses read, the instructions run and the loop count do not
/// depend on d.
///
/// # Safety
/// The CPU must have AVX2 (callers hold a `Checked<Backend>` covering `Bmi2AdxAvx2`).
#[target_feature(enable = "avx2")]
unsafe fn lookup_avx2<const N: usize>(row: &[AffineNiels<Fe64>; N], d: i8) -> AffineNiels<Fe64> {
    const { assert!(core::mem::size_of::<AffineNiels<Fe64>>() == 96 && N > 0) };
    let d = d as i64;
    let neg = d >> 63; // all ones if d < 0
    let abs = (d ^ neg) - neg;
    let mut r = AffineNiels { ypx: Fe64::ZERO, ymx: Fe64::ZERO, xy2d: Fe64::ZERO };
    // SAFETY: AVX2 is present (the caller's contract). The block reads the N·96 bytes of `row` (a valid
    // reference; N entries of 96 bytes, `repr(C)` of three `repr(transparent)` 32-byte elements), writes the
    // 96 bytes of the local `r` (same layout), declares every register it changes (clobber_abi("C") covers
    // the vector registers, whose upper halves vzeroupper clears), and does not use the stack.
    unsafe {
        asm!(
            "vmovq xmm3, {abs}",
            "vpbroadcastq ymm3, xmm3",      // |d| in every lane
            "vpxor xmm4, xmm4, xmm4",       // the counter j
            "vpcmpeqq ymm5, ymm5, ymm5",    // −1 in every lane
            "vpcmpeqq ymm6, ymm3, ymm4",    // |d| = 0
            "vpsrlq ymm7, ymm6, 63",        // 1 in every lane where |d| = 0
            "vpblendd ymm0, ymm4, ymm7, 3", // (1, 0, 0, 0) where |d| = 0: y + x = y − x = 1
            "vmovdqa ymm1, ymm0",
            "vpxor xmm2, xmm2, xmm2",       // 2dxy = 0
            "2:",
            "vpsubq ymm4, ymm4, ymm5",      // j += 1
            "vpcmpeqq ymm6, ymm3, ymm4",    // |d| = j
            "vpand ymm8, ymm6, [rsi]",
            "vpand ymm9, ymm6, [rsi + 32]",
            "vpand ymm10, ymm6, [rsi + 64]",
            "vpor ymm0, ymm0, ymm8",
            "vpor ymm1, ymm1, ymm9",
            "vpor ymm2, ymm2, ymm10",
            "add rsi, 96",
            "dec ecx",
            "jnz 2b",
            "vmovdqu [rdi], ymm0",
            "vmovdqu [rdi + 32], ymm1",
            "vmovdqu [rdi + 64], ymm2",
            "vzeroupper",
            abs = in(reg) abs,
            inout("rsi") row.as_ptr() => _,
            inout("rcx") N => _,
            in("rdi") &mut r as *mut AffineNiels<Fe64>,
            clobber_abi("C"),
            options(nostack),
        );
    }
    r.cneg(super::field::mask_from_bit(neg as u64 & 1));
    r
}

/// `s·B` over [`Fe64`], with the AVX2 look-up when `backend` covers `Bmi2AdxAvx2`.
fn mul_base(backend: Checked<Backend>, s: &[u8; 32]) -> Point<Fe64> {
    // The proof that mulx/adcx/adox may run: every asm! block above relies on it.
    assert!(backend.covers(Backend::Bmi2Adx));
    if backend.covers(Backend::Bmi2AdxAvx2) {
        // SAFETY: the backend covers Bmi2AdxAvx2, so the CPU has BMI2, ADX and AVX2 (the one dispatch
        // mechanism).
        unsafe { fixed_base::mul_base_comb_avx2(s) }
    } else {
        fixed_base::mul_base_comb(s, edwards::lookup::<Fe64>)
    }
}

/// X25519(k, 9) through the fixed-base Edwards multiplication (see the generic function).
pub(super) fn x25519_base(backend: Checked<Backend>, k: &[u8; 32]) -> [u8; 32] {
    mul_base(backend, k).to_montgomery_u()
}

/// The encoding of `s·B` (see the generic function).
pub(super) fn mul_base_compressed(backend: Checked<Backend>, s: &[u8; 32]) -> [u8; 32] {
    mul_base(backend, s).compress()
}

/// `s·B`: its encoding and affine coordinates (see the generic function).
pub(super) fn mul_base_affine(backend: Checked<Backend>, s: &[u8; 32]) -> ([u8; 32], Affine) {
    generic::encode_affine(mul_base(backend, s))
}

entry! {
    decode(b: &[u8; 32], reject_small_order: bool) -> Result<Affine, &'static str>;
    verify_cofactored(a: &Affine, r: &Affine, k: &Scalar, s: &Scalar) -> bool;
    batch_equation(b: &Scalar, terms: &[(Affine, Scalar, Affine, Scalar)]) -> bool;
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::ladder::{LadderState, ladder_step};
    use super::*;
    use crate::ec::curve25519::field::tests::{Xs, p, to_big};
    use crate::ec::curve25519::field::{fermat_invert, invert, sqrt_ratio};
    use num_bigint::BigUint;
    use std::vec::Vec;

    fn big_words(w: &[u64; 4]) -> BigUint {
        let mut b = [0u8; 32];
        for i in 0..4 {
            b[8 * i..8 * i + 8].copy_from_slice(&w[i].to_le_bytes());
        }
        BigUint::from_bytes_le(&b)
    }

    /// The asm ladder and the generic ladder over Fe64 agree with Fe51's, on random scalars and
    /// u-coordinates and on edge u values (0, 1, p − 1, p, p + 1, 2^255 − 1, bit 255 set), and with unclamped
    /// scalars (every bit pattern of the top and bottom bytes); on every case with the scalar clamped, so does
    /// the ladder ending in three doublings (what `x25519` runs with this backend).
    #[test]
    fn fe64_ladders_match_fe51() {
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        let mut rng = Xs(0x6464_0002);
        let mut us: Vec<[u8; 32]> = Vec::new();
        for low in [0u8, 1, 0xec, 0xed, 0xee, 0xff] {
            let mut u = [0xffu8; 32];
            u[0] = low;
            u[31] = 0x7f;
            us.push(u);
            u[31] = 0xff;
            us.push(u);
            let mut small = [0u8; 32];
            small[0] = low;
            us.push(small);
        }
        for i in 0..200 {
            let (mut k, u) = (rng.bytes(), if i < us.len() { us[i] } else { rng.bytes() });
            if i % 2 == 0 {
                k[0] &= 248;
                k[31] = (k[31] & 127) | 64;
            }
            let want = generic::x25519::<Fe51>(&k, &u);
            assert_eq!(ladder_asm::<false>(&k, &u), want, "asm ladder, case {i}");
            // Every case again with the scalar clamped, for the clamped ladder and the entry point.
            let mut kc = k;
            kc[0] &= 248;
            kc[31] = (kc[31] & 127) | 64;
            let want_c = generic::x25519::<Fe51>(&kc, &u);
            assert_eq!(ladder_asm::<true>(&kc, &u), want_c, "asm ladder, clamped, case {i}");
            assert_eq!(x25519(backend, &kc, &u), want_c, "entry point, case {i}");
            assert_eq!(generic::x25519::<Fe64>(&k, &u), want, "generic Fe64 ladder, case {i}");
        }
    }

    /// The reference look-up by index (variable time, tests only): the identity for d = 0, row[d − 1] for
    /// d > 0, its negation (y + x and y − x exchanged, 2dxy negated) for d < 0.
    fn lookup_ref<const N: usize>(row: &[AffineNiels<Fe64>; N], d: i8) -> AffineNiels<Fe64> {
        match d {
            0 => AffineNiels { ypx: Fe64::ONE, ymx: Fe64::ONE, xy2d: Fe64::ZERO },
            1.. => row[d as usize - 1],
            _ => {
                let e = row[d.unsigned_abs() as usize - 1];
                AffineNiels { ypx: e.ymx, ymx: e.ypx, xy2d: e.xy2d.neg() }
            }
        }
    }

    /// The AVX2 look-up returns what the portable one does, for every row of the radix-16 tables and every
    /// digit in [−8, 8], and what the reference does for every row of the radix-32 table and every digit in
    /// [−16, 16]; and the fixed-base multiplications with either agree with Fe51's on edge and random
    /// scalars (0, 1, L − 1, L, 2^255 − 1, carry patterns of the signed digits of both radices).
    #[test]
    fn avx2_lookup_matches_portable() {
        let Some(backend) = Checked::for_test(Backend::Bmi2AdxAvx2) else { return };
        assert!(backend.covers(Backend::Bmi2AdxAvx2));
        let flat_n = |v: &AffineNiels<Fe64>| (v.ypx.to_bytes(), v.ymx.to_bytes(), v.xy2d.to_bytes());
        for row in BASE_TABLE.iter().chain(BASE_TABLE_ODD.iter()) {
            for d in -8i8..=8 {
                // SAFETY: the backend covers Bmi2AdxAvx2, so the CPU has AVX2.
                let v = unsafe { lookup_avx2(row, d) };
                let w = edwards::lookup(row, d);
                assert_eq!((v.ypx.0, v.ymx.0, v.xy2d.0), (w.ypx.0, w.ymx.0, w.xy2d.0), "digit {d}");
                assert_eq!(flat_n(&v), flat_n(&lookup_ref(row, d)), "digit {d}");
            }
        }
        for (i, row) in BASE_RADIX32.iter().enumerate() {
            for d in -16i8..=16 {
                // SAFETY: the backend covers Bmi2AdxAvx2, so the CPU has AVX2.
                let v = unsafe { lookup_avx2(row, d) };
                assert_eq!(flat_n(&v), flat_n(&lookup_ref(row, d)), "row {i}, digit {d}");
            }
        }
        let mut rng = Xs(0x6464_0005);
        let l = super::super::scalar::L_BYTES;
        let mut l_minus_1 = l;
        l_minus_1[0] -= 1;
        let mut top = [0xffu8; 32];
        top[31] = 0x7f;
        let mut eights = [0x88u8; 32];
        eights[31] = 0x08;
        let mut scalars: Vec<[u8; 32]> = std::vec![
            [0; 32],
            {
                let mut o = [0; 32];
                o[0] = 1;
                o
            },
            l,
            l_minus_1,
            top,
            eights,
            [0x77; 32],
            // Every radix-32 digit 16 (carries all the way up), and 15 (none).
            radix32_pattern(16),
            radix32_pattern(15),
            radix32_pattern(31),
        ];
        for _ in 0..60 {
            let mut s = rng.bytes();
            s[31] &= 0x7f;
            scalars.push(s);
        }
        let soft = Backend::Soft.checked().unwrap();
        let plain = Backend::Bmi2Adx.checked().unwrap();
        let flat = |(e, a): ([u8; 32], Affine)| (e, a.x, a.y);
        for s in &scalars {
            let want = flat(generic::mul_base_affine::<Fe51>(s));
            assert_eq!(flat(mul_base_affine(backend, s)), want);
            assert_eq!(flat(mul_base_affine(plain, s)), want);
            assert_eq!(mul_base_compressed(backend, s), super::super::mul_base_compressed(soft, s));
            assert_eq!(x25519_base(backend, s), generic::x25519_base::<Fe51>(s));
        }
    }

    /// Words below 2p, the bound the asm blocks assume for their state: edge values and random ones.
    fn words_below_2p(rng: &mut Xs) -> Vec<[u64; 4]> {
        let m = u64::MAX;
        let mut v = std::vec![
            [0, 0, 0, 0],
            [1, 0, 0, 0],
            [m - 19, m, m, m >> 1],   // p − 1
            [m - 18, m, m, m >> 1],   // p
            [m - 17, m, m, m >> 1],   // p + 1
            [m, m, m, m >> 1],        // 2^255 − 1
            [1 << 13, 0, 0, 1 << 63], // 2^255 + 2^13
            [m - 38, m, m, m],        // 2^256 − 39 = 2p − 1
            [m - 37 - 19, m, m, m],   // 2p − 20
        ];
        for _ in 0..40 {
            let mut w = [rng.next(), rng.next(), rng.next(), rng.next()];
            if w[3] == m {
                w[3] -= 1;
            }
            v.push(w);
        }
        v
    }

    /// The odd-digit table holds (j + 1)·16·256^i·B: each entry against the fixed-base multiplication of the
    /// portable backend by that scalar.
    #[test]
    fn odd_digit_table_holds_the_right_multiples() {
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        for (i, row) in BASE_TABLE_ODD.iter().enumerate() {
            for (j, entry) in row.iter().enumerate() {
                // (j + 1)·16 at byte i, reduced mod L (B has order L; 8·16·256^31 = 2^255).
                let mut k = [0u8; 32];
                k[i] = ((j + 1) << 4) as u8;
                let k = Scalar::from_bytes_mod_order(&k).to_bytes();
                let (x, y) = edwards::mul_base::<Fe51>(&k).to_affine();
                assert_eq!(entry.ypx.to_bytes(), y.add(&x).to_bytes(), "row {i}, entry {j}");
                assert_eq!(entry.ymx.to_bytes(), y.sub(&x).to_bytes(), "row {i}, entry {j}");
                assert_eq!(entry.xy2d.to_bytes(), x.mul(&y).mul(&Fe51::D2).to_bytes(), "row {i}, entry {j}");
            }
        }
    }

    /// One asm mixed addition of the fixed-base comb agrees with the generic `add_affine` and
    /// `to_extended` over Fe64, on accumulators whose coordinates are arbitrary values below 2p (the bound
    /// `madd` assumes) and entries anywhere below 2^256, and keeps every coordinate below 2p.
    #[test]
    fn comb_addition_matches_generic() {
        use super::fixed_base::{CombState, madd};
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        let mut rng = Xs(0x6464_0006);
        let w = words_below_2p(&mut rng);
        let n = w.len();
        for i in 0..4 * n {
            let pick = |k: usize| Fe64(w[(i * (2 * k + 3) + k) % n]);
            let acc = Point { x: pick(0), y: pick(1), z: pick(2), t: pick(3) };
            let any = if i % 3 == 0 { Fe64([rng.next(), rng.next(), rng.next(), u64::MAX]) } else { pick(6) };
            let q = AffineNiels { ypx: pick(4), ymx: pick(5), xy2d: any };
            let mut st = CombState([0; 72]);
            st.0[..16].copy_from_slice(&[acc.x.0, acc.y.0, acc.z.0, acc.t.0].concat());
            st.set_entry(&q);
            madd(&mut st);
            let want = acc.add_affine(&q).to_extended();
            let got = st.point();
            for (g, w) in [(got.x, want.x), (got.y, want.y), (got.z, want.z), (got.t, want.t)] {
                assert_eq!(g.to_bytes(), w.to_bytes(), "case {i}");
                assert!(big_words(&g.0) < BigUint::from(2u8) * p(), "below 2p, case {i}");
            }
        }
    }

    /// The scalar below 2^255 whose 5-bit groups (bits 5i to 5i + 4, the last one cut at bit 254) all
    /// equal `v`.
    fn radix32_pattern(v: u8) -> [u8; 32] {
        let mut s = [0u8; 32];
        for bit in 0..255 {
            if (v >> (bit % 5)) & 1 == 1 {
                s[bit / 8] |= 1 << (bit % 8);
            }
        }
        s
    }

    /// The radix-32 table holds (j + 1)·32^i·B: each entry against the portable fixed-base multiplication
    /// by that scalar reduced mod L (B has order L).
    #[test]
    fn radix32_table_holds_the_right_multiples() {
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        for (i, row) in BASE_RADIX32.iter().enumerate() {
            for (j, entry) in row.iter().enumerate() {
                // (j + 1)·2^(5i) as a 512-bit value, reduced mod L.
                let mut wide = [0u8; 64];
                let v = ((j as u32 + 1) << ((5 * i) % 8)) as u16;
                wide[5 * i / 8] = v as u8;
                wide[5 * i / 8 + 1] = (v >> 8) as u8;
                let k = Scalar::from_bytes_wide(&wide).to_bytes();
                let (x, y) = edwards::mul_base::<Fe51>(&k).to_affine();
                assert_eq!(entry.ypx.to_bytes(), y.add(&x).to_bytes(), "row {i}, entry {j}");
                assert_eq!(entry.ymx.to_bytes(), y.sub(&x).to_bytes(), "row {i}, entry {j}");
                assert_eq!(entry.xy2d.to_bytes(), x.mul(&y).mul(&Fe51::D2).to_bytes(), "row {i}, entry {j}");
            }
        }
    }

    /// Two fused AVX2 comb steps agree with the reference look-ups and the generic `add_affine` and
    /// `to_extended`: the first adds an entry set directly and looks up the next one (row and digit), the
    /// second adds that one (with its sign carried in the state), for every row of the radix-32 table and
    /// every digit in [−16, 16] in both places, on accumulators whose coordinates are arbitrary values below
    /// 2p; every coordinate stays below 2p.
    #[test]
    fn fused_avx2_comb_step_matches_generic() {
        use super::fixed_base::{CombState, comb_step_avx2};
        let Some(backend) = Checked::for_test(Backend::Bmi2AdxAvx2) else { return };
        assert!(backend.covers(Backend::Bmi2AdxAvx2));
        let mut rng = Xs(0x6464_0007);
        let w = words_below_2p(&mut rng);
        let n = w.len();
        let mut i = 0usize;
        let flat_n = |v: &AffineNiels<Fe64>| (v.ypx.to_bytes(), v.ymx.to_bytes(), v.xy2d.to_bytes());
        for (r, row) in BASE_RADIX32.iter().enumerate() {
            for d in -16i8..=16 {
                i += 1;
                let next_row = &BASE_RADIX32[(r + 7) % BASE_RADIX32.len()];
                let next_d = ((d + 16 + 11) % 33) - 16;
                let pick = |k: usize| Fe64(w[(i * (2 * k + 3) + k) % n]);
                let acc = Point { x: pick(0), y: pick(1), z: pick(2), t: pick(3) };
                let mut st = CombState([0; 72]);
                st.0[..16].copy_from_slice(&[acc.x.0, acc.y.0, acc.z.0, acc.t.0].concat());
                st.set_first_entry(&lookup_ref(row, d));
                st.set_digit(next_d);
                // SAFETY: the backend covers Bmi2AdxAvx2, so the CPU has BMI2, ADX and AVX2; the prefetch
                // address is a valid reference.
                unsafe { comb_step_avx2(&mut st, next_row, row.as_ptr().cast()) };
                let want = acc.add_affine(&lookup_ref(row, d)).to_extended();
                let got = st.point();
                for (g, w) in [(got.x, want.x), (got.y, want.y), (got.z, want.z), (got.t, want.t)] {
                    assert_eq!(g.to_bytes(), w.to_bytes(), "digit {d}, case {i}");
                    assert!(big_words(&g.0) < BigUint::from(2u8) * p(), "below 2p, case {i}");
                }
                assert_eq!(flat_n(&st.pending_entry()), flat_n(&lookup_ref(next_row, next_d)), "case {i}");
                st.set_digit(d);
                // SAFETY: as above.
                unsafe { comb_step_avx2(&mut st, row, row.as_ptr().cast()) };
                let want = want.add_affine(&lookup_ref(next_row, next_d)).to_extended();
                let got = st.point();
                for (g, w) in [(got.x, want.x), (got.y, want.y), (got.z, want.z), (got.t, want.t)] {
                    assert_eq!(g.to_bytes(), w.to_bytes(), "next digit {next_d}, case {i}");
                    assert!(big_words(&g.0) < BigUint::from(2u8) * p(), "below 2p, case {i}");
                }
            }
        }
    }

    /// One asm ladder step agrees with the RFC 7748 formulas over the generic Fe64 operations, for both
    /// masks, on states whose every element is an arbitrary value below 2p.
    #[test]
    fn ladder_step_matches_generic() {
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        let mut rng = Xs(0x6464_0004);
        let w = words_below_2p(&mut rng);
        let n = w.len();
        for i in 0..4 * n {
            let pick = |k: usize| Fe64(w[(i * (2 * k + 3) + k) % n]);
            let (x1, xn, zn, xm, zm) = (pick(0), pick(1), pick(2), pick(3), pick(4));
            for mask in [0u64, u64::MAX] {
                let mut st = LadderState([0; LadderState::WORDS]);
                st.set(LadderState::X1, &x1);
                st.set(LadderState::XN, &xn);
                st.set(LadderState::ZN, &zn);
                st.set(LadderState::XM, &xm);
                st.set(LadderState::ZM, &zm);
                st.0[LadderState::MASK] = mask;
                ladder_step(&mut st);
                // The doubled point is m where the mask is set, else n; the sum goes to m, the double to n.
                let (x2, z2) = if mask != 0 { (xm, zm) } else { (xn, zn) };
                let (x3, z3) = if mask != 0 { (xn, zn) } else { (xm, zm) };
                let (a, b) = (x2.add(&z2), x2.sub(&z2));
                let (aa, bb) = (a.square(), b.square());
                let e = aa.sub(&bb);
                let (c, d) = (x3.add(&z3), x3.sub(&z3));
                let (da, cb) = (d.mul(&a), c.mul(&b));
                let want = [
                    aa.mul(&bb),
                    e.mul(&aa.add(&e.mul_small(121665))),
                    da.add(&cb).square(),
                    x1.mul(&da.sub(&cb).square()),
                ];
                let got = [
                    st.get(LadderState::XN),
                    st.get(LadderState::ZN),
                    st.get(LadderState::XM),
                    st.get(LadderState::ZM),
                ];
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(g.to_bytes(), w.to_bytes(), "case {i}, mask {mask:x}");
                    assert!(g.0[3] <= 1 << 63, "result below 2^255 + 2^64");
                }
            }
        }
    }

    /// Every Fe64 operation against num-bigint, on random and edge values over the whole range below
    /// 2^256 (Fe64 keeps values unreduced). Runs only where the CPU has BMI2 and ADX: Fe64 values are made
    /// only after that check, as everywhere in this file.
    #[test]
    fn fe64_matches_bigint() {
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        let p = p();
        let mut rng = Xs(0x6464_0001);
        let m = u64::MAX;
        let mut words: Vec<[u64; 4]> = std::vec![
            [0, 0, 0, 0],
            [1, 0, 0, 0],
            [m - 19, m, m, m >> 1], // p − 1
            [m - 18, m, m, m >> 1], // p
            [m - 17, m, m, m >> 1], // p + 1
            [m, m, m, m >> 1],      // 2^255 − 1
            [m - 37, m, m, m],      // 2p − 1 + ... (2^256 − 38)
            [m - 38, m, m, m],      // 2p − 1
            [m, m, m, m],           // 2^256 − 1
            [0, 0, 0, 1 << 63],     // 2^255
        ];
        // Every combination of limbs 0, 1, 2^63 and 2^64 − 1: the carry chains' edge cases.
        for c in 0..256u32 {
            let pick = |k: u32| [0, 1, 1 << 63, m][((c >> (2 * k)) & 3) as usize];
            words.push([pick(0), pick(1), pick(2), pick(3)]);
        }
        for _ in 0..400 {
            words.push([rng.next(), rng.next(), rng.next(), rng.next()]);
        }
        for (i, wa) in words.iter().enumerate() {
            let wb = &words[(i * 7 + 3) % words.len()];
            let (a, b) = (Fe64(*wa), Fe64(*wb));
            let (va, vb) = (big_words(wa) % &p, big_words(wb) % &p);
            assert_eq!(to_big(&a), va, "to_bytes {i}");
            assert!(BigUint::from_bytes_le(&a.to_bytes()) < p);
            assert_eq!(to_big(&a.mul(&b)), (&va * &vb) % &p, "mul {i}");
            assert_eq!(to_big(&a.square()), (&va * &va) % &p, "square {i}");
            assert_eq!(to_big(&a.add(&b)), (&va + &vb) % &p, "add {i}");
            assert_eq!(to_big(&a.sub(&b)), (&va + &p - &vb) % &p, "sub {i}");
            assert_eq!(to_big(&a.neg()), (&p - &va) % &p, "neg {i}");
            assert_eq!(to_big(&a.mul_small(121665)), (&va * 121665u32) % &p, "mul_small {i}");
            assert_eq!(to_big(&invert(&a)), va.modpow(&(&p - 2u8), &p), "invert {i}");
            assert_eq!(to_big(&fermat_invert(&a)), va.modpow(&(&p - 2u8), &p), "fermat_invert {i}");
            let (ok64, r64) = sqrt_ratio(&a, &b);
            let (ok51, r51) = sqrt_ratio(&Fe51::from_bytes(&a.to_bytes()), &Fe51::from_bytes(&b.to_bytes()));
            assert_eq!(ok64, ok51);
            assert_eq!(r64.to_bytes(), r51.to_bytes());
            assert_eq!(Fe64::select(&a, &b, u64::MAX).0, a.0);
            assert_eq!(Fe64::select(&a, &b, 0).0, b.0);
            assert_eq!(Fe64::ZERO.or_masked(&a, u64::MAX).0, a.0);
            assert_eq!(b.or_masked(&a, 0).0, b.0);
            let mut bytes = [0u8; 32];
            for k in 0..4 {
                bytes[8 * k..8 * k + 8].copy_from_slice(&wa[k].to_le_bytes());
            }
            assert_eq!(Fe64::from_bytes(&bytes).to_bytes(), Fe51::from_bytes(&bytes).to_bytes());
        }
        for (c64, c51) in [(Fe64::D, Fe51::D), (Fe64::D2, Fe51::D2), (Fe64::SQRT_M1, Fe51::SQRT_M1)] {
            assert_eq!(c64.to_bytes(), c51.to_bytes());
        }
        // The converted tables hold the same points.
        for (r64, r51) in BASE_TABLE
            .iter()
            .flatten()
            .chain(BASE_ODD.iter())
            .zip(BASE_TABLE_FE51.iter().flatten().chain(BASE_ODD_FE51.iter()))
        {
            assert_eq!(r64.ypx.to_bytes(), r51.ypx.to_bytes());
            assert_eq!(r64.ymx.to_bytes(), r51.ymx.to_bytes());
            assert_eq!(r64.xy2d.to_bytes(), r51.xy2d.to_bytes());
        }
    }
}
