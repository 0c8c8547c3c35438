//! The `Bmi2Adx` backend: the Montgomery product modulo a 256-bit modulus (p for the field, n for the
//! scalars) with `mulx` (BMI2) and the two carry chains of `adcx`/`adox` (ADX), in `asm!`.
//!
//! ## The products
//! The field product ([`mul_p`]) is specialised to p: each of its four rows is followed by its reduction
//! round, which needs one `mulx` (see its comment), and the final subtraction of p is chosen by `cmov`
//! inside the same block, so a product is one `asm!` block from loads to result. The scalar product is the
//! generic one:
//! word-by-word Montgomery (CIOS), four rows: each row adds a·bᵢ to the 6-word accumulator — the low
//! halves of `mulx`'s products on the overflow-flag chain (`adox`), the high halves on the carry-flag chain
//! (`adcx`), so the two run interleaved — then q = t₀·(−m⁻¹) and adds q·m the same way, which clears the
//! low word, and shifts the accumulator down one word. The result, below 2m, gets one conditional
//! subtraction of m by `cmov` (no branch). The field has its own squaring ([`sqr_p`]: the cross products
//! once, doubled, ten `mulx` instead of sixteen); the scalars square with the product.
//!
//! ## The inversions
//! Both constant-time inversions (modulo p for the affine results, modulo n for signing's nonce) are the
//! portable safegcd with its batches of division steps done by [`crate::x86::divsteps`] (packed words,
//! `cmov`): the same result, about three quarters of the time on an AMD Zen 5.
//!
//! ## The doubling
//! The Jacobian doubling ([`jdouble_n_adx`]) is one `asm!` block: the same product, squaring, addition and
//! subtraction, and the small linear combinations of the formula, as macros over the slots of a frame, so
//! that no value passes through the compiler between two field operations.
//!
//! ## Constant time
//! No branch and no memory index depends on a value: every block is straight-line code, its addresses
//! fixed offsets from its pointers, its reductions chosen by `cmov` or by masks (docs/hardening.md).
//!
//! ## Safety
//! `mulx`, `adcx` and `adox` need BMI2 and ADX, the table scan AVX2. [`Adx`] is private to this file and the generic code only
//! ever runs over it inside the entry points at the end of the file, each of which first asserts that its
//! `Checked<Backend>` covers `Backend::Bmi2Adx` (the one dispatch mechanism, [`crate::dispatch`]): so the
//! `asm!` blocks and the AVX2 scan only ever run on a CPU that has all three.
#![allow(unsafe_code)]

use super::field::{Fe, FieldArith, Modulus};
use super::point::{Aff, Arith, Jac};
use super::scalar::{N, Scalar};
use super::{Backend, generic};
use crate::dispatch::Checked;
use core::arch::asm;

/// One row of the product: t += a·b[off]; q = t0·(−m⁻¹); t += q·m; t >>= 64. The accumulator is
/// r8..r13 (t0..t5), `rsi` = a, `rdi` = b, `r15` = m, `r14` = −m⁻¹.
macro_rules! row {
    ($off:literal) => {
        concat!(
            "mov rdx, [rdi + ",
            $off,
            "]\n",
            "xor r13d, r13d\n",
            "mulx rcx, rax, [rsi]\n",
            "adox r8, rax\n",
            "adcx r9, rcx\n",
            "mulx rcx, rax, [rsi + 8]\n",
            "adox r9, rax\n",
            "adcx r10, rcx\n",
            "mulx rcx, rax, [rsi + 16]\n",
            "adox r10, rax\n",
            "adcx r11, rcx\n",
            "mulx rcx, rax, [rsi + 24]\n",
            "adox r11, rax\n",
            "adcx r12, rcx\n",
            "mov eax, 0\n",
            "adcx r13, rax\n",
            "adox r12, rax\n",
            "adox r13, rax\n",
            "mov rdx, r8\n",
            "imul rdx, r14\n",
            "xor eax, eax\n",
            "mulx rcx, rax, [r15]\n",
            "adox r8, rax\n",
            "adcx r9, rcx\n",
            "mulx rcx, rax, [r15 + 8]\n",
            "adox r9, rax\n",
            "adcx r10, rcx\n",
            "mulx rcx, rax, [r15 + 16]\n",
            "adox r10, rax\n",
            "adcx r11, rcx\n",
            "mulx rcx, rax, [r15 + 24]\n",
            "adox r11, rax\n",
            "adcx r12, rcx\n",
            "mov eax, 0\n",
            "adcx r13, rax\n",
            "adox r12, rax\n",
            "adox r13, rax\n",
            "mov r8, r9\n",
            "mov r9, r10\n",
            "mov r10, r11\n",
            "mov r11, r12\n",
            "mov r12, r13\n",
        )
    };
}

/// a·b·2^−256 mod m for a, b below m.
#[inline(always)]
fn mont_mul(a: &[u64; 4], b: &[u64; 4], m: &Modulus) -> [u64; 4] {
    let (r0, r1, r2, r3, r4): (u64, u64, u64, u64, u64);
    // SAFETY: BMI2 and ADX are present (module docs: this code runs only below entry points that asserted a
    // Checked backend covering Bmi2Adx). The block reads 4 words at each of `a`, `b` and `m.m` (valid
    // references), writes only the registers it declares, and does not touch the stack.
    unsafe {
        asm!(
            "xor r8d, r8d",
            "xor r9d, r9d",
            "xor r10d, r10d",
            "xor r11d, r11d",
            "xor r12d, r12d",
            row!("0"),
            row!("8"),
            row!("16"),
            row!("24"),
            in("rsi") a.as_ptr(),
            in("rdi") b.as_ptr(),
            in("r15") m.m.as_ptr(),
            in("r14") m.minv,
            out("rax") _, out("rcx") _, out("rdx") _,
            out("r8") r0, out("r9") r1, out("r10") r2, out("r11") r3,
            out("r12") r4, out("r13") _,
            options(pure, readonly, nostack),
        );
    }
    // Below 2m: one conditional subtraction (masks, no branch).
    super::field::sub_if_ge(&[r0, r1, r2, r3], r4, &m.m)
}

/// The product of `rdx` and the four words at address `base` (an address expression such as `"rsi"` or
/// `"rsi + 96"`) into the empty accumulator r8..r12, on one carry chain: the first row of a product (or a
/// small constant times a field element), which needs neither clears nor the two chains of the later rows.
macro_rules! first_row {
    ($base:expr) => {
        concat!(
            "mulx r9, r8, [",
            $base,
            "]\n",
            "mulx r10, rax, [",
            $base,
            " + 8]\n",
            "add r9, rax\n",
            "mulx r11, rax, [",
            $base,
            " + 16]\n",
            "adc r10, rax\n",
            "mulx r12, rax, [",
            $base,
            " + 24]\n",
            "adc r11, rax\n",
            "adc r12, 0\n",
        )
    };
}

/// One reduction round of the field product over the accumulator l0..l5, with p₃ in register `p3`:
/// q = l0 (−p⁻¹ ≡ 1 mod 2^64) adds q·p, which clears l0: q·2^32 into l1..l2 by one `mulx` by [`TWO32`]
/// (q·(2^64 − 1) + q·(2^32 − 1)·2^64, words 0 and 1 of p) and q·p₃ into l3..l4 by another, the carry into
/// l5; l0 is then free and becomes the next row's top word. Uses `rax`, `rcx`, `rdx` and `r15`.
macro_rules! p_round {
    ($p3:literal, $l0:literal, $l1:literal, $l2:literal, $l3:literal, $l4:literal, $l5:literal) => {
        concat!(
            "mov rdx, ",
            $l0,
            "\n",
            "mulx r15, rcx, ",
            $p3,
            "\n",
            "mulx ",
            $l0,
            ", rax, qword ptr [rip + {two32}]\n",
            "add ",
            $l1,
            ", rax\n",
            "adc ",
            $l2,
            ", ",
            $l0,
            "\n",
            "adc ",
            $l3,
            ", rcx\n",
            "adc ",
            $l4,
            ", r15\n",
            "adc ",
            $l5,
            ", 0\n",
        )
    };
}

/// One row of the field product, interleaved with its reduction round (see [`mul_p`]): the accumulator
/// words l0..l5 (l5 cleared here) take `a·b[off]`, then one `p_round` with p₃ in `r14`.
macro_rules! prow {
    ($off:literal, $l0:literal, $l1:literal, $l2:literal, $l3:literal, $l4:literal, $l5:literal) => {
        concat!(
            "xor ",
            $l5,
            "d, ",
            $l5,
            "d\n",
            "mov rdx, [rdi + ",
            $off,
            "]\n",
            "mulx rcx, rax, [rsi]\n",
            "adox ",
            $l0,
            ", rax\n",
            "adcx ",
            $l1,
            ", rcx\n",
            "mulx rcx, rax, [rsi + 8]\n",
            "adox ",
            $l1,
            ", rax\n",
            "adcx ",
            $l2,
            ", rcx\n",
            "mulx rcx, rax, [rsi + 16]\n",
            "adox ",
            $l2,
            ", rax\n",
            "adcx ",
            $l3,
            ", rcx\n",
            "mulx rcx, rax, [rsi + 24]\n",
            "adox ",
            $l3,
            ", rax\n",
            "adcx ",
            $l4,
            ", rcx\n",
            "mov eax, 0\n",
            "adcx ",
            $l5,
            ", rax\n",
            "adox ",
            $l4,
            ", rax\n",
            "adox ",
            $l5,
            ", rax\n",
            p_round!("r14", $l0, $l1, $l2, $l3, $l4, $l5),
        )
    };
}
/// a·b·2^−256 mod p for a, b below p, specialised to p = 2^256 − 2^224 + 2^192 + 2^96 − 1: four rows, each
/// the product a·bᵢ on the two carry chains (low halves of `mulx` on `adox`, high halves on `adcx`) and then
/// one reduction round on a plain `adc` chain (the portable `field::reduce_p` does the same rounds after
/// the whole product). The accumulator rotates through r8..r13 so that no word moves. The result, below
/// 2p, gets one subtraction of p kept or dropped by `cmov` on the borrow, inside the block: registers only
/// except the loads of a and b, no branch.
#[inline(always)]
fn mul_p(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let (r0, r1, r2, r3): (u64, u64, u64, u64);
    // SAFETY: BMI2 and ADX are present (module docs: this code runs only below entry points that asserted a
    // Checked backend covering Bmi2Adx). The block reads 4 words at each of `a` and `b` (valid references),
    // writes only the registers it declares, and does not touch the stack.
    unsafe {
        asm!(
            "mov r14, 0xffffffff00000001",
            // Row 0 into an empty accumulator (`first_row`), then its reduction round.
            "xor r13d, r13d",
            "mov rdx, [rdi]",
            first_row!("rsi"),
            p_round!("r14", "r8", "r9", "r10", "r11", "r12", "r13"),
            prow!("8", "r9", "r10", "r11", "r12", "r13", "r8"),
            prow!("16", "r10", "r11", "r12", "r13", "r8", "r9"),
            prow!("24", "r11", "r12", "r13", "r8", "r9", "r10"),
            // The result is r12, r13, r8, r9 with the top word r10: subtract p, keep the original on a borrow.
            "mov esi, 0xffffffff",
            "mov rax, r12", "mov rcx, r13", "mov rdx, r8", "mov r15, r9",
            "sub rax, -1",
            "sbb rcx, rsi",
            "sbb rdx, 0",
            "sbb r15, r14",
            "sbb r10, 0",
            "cmovc rax, r12", "cmovc rcx, r13", "cmovc rdx, r8", "cmovc r15, r9",
            inout("rsi") a.as_ptr() => _,
            in("rdi") b.as_ptr(),
            two32 = sym TWO32,
            out("rax") r0, out("rcx") r1, out("rdx") r2, out("r15") r3,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _, out("r12") _, out("r13") _, out("r14") _,
            options(pure, readonly, nostack),
        );
    }
    [r0, r1, r2, r3]
}

/// One reduction round of [`sqr_p`] over the 4-word window l0..l3: q = l0 adds q·p (q·2^32 into l1..l2 by
/// one `mulx` by [`TWO32`], q·p₃ into l3 and a new top word by one `mulx` with `rdi` = p₃), which clears l0; l0 then
/// holds the new top word, so the window becomes l1, l2, l3, l0. Uses `rax`, `rcx`, `rdx`, `rsi`.
macro_rules! sqr_round {
    ($l0:literal, $l1:literal, $l2:literal, $l3:literal) => {
        concat!(
            "mov rdx, ",
            $l0,
            "\n",
            "mulx rcx, rsi, qword ptr [rip + {two32}]\n",
            "mulx ",
            $l0,
            ", rax, rdi\n",
            "add ",
            $l1,
            ", rsi\n",
            "adc ",
            $l2,
            ", rcx\n",
            "adc ",
            $l3,
            ", rax\n",
            "adc ",
            $l0,
            ", 0\n",
        )
    };
}

/// a²·2^−256 mod p for a below p, specialised to p like [`mul_p`] but with the squaring's shape: the six
/// cross products aᵢ·aⱼ (i < j) once, on three rows, then doubled by one `adc` chain, then the four squares
/// aᵢ² added on the diagonal (10 `mulx` instead of 16). The 512-bit square T = t₀..t₇ is then reduced by four
/// rounds over its low half only (q = the low word, −p⁻¹ ≡ 1: q·2^32 by one `mulx` into the next two
/// words and q·p₃ by one `mulx`, as in [`mul_p`]), which leaves U = (T mod 2^256 + Q·p)/2^256 ≤ p in four
/// words without a carry (each round's top word is the high half of q·p₃ plus a carry, below 2^64 − 1); then
/// U plus the high half (below p, as T < p²) is below 2p, and one subtraction of p is kept by `cmov` when it
/// does not borrow. Registers only except the loads of a; no branch.
#[inline(always)]
fn sqr_p(a: &[u64; 4]) -> [u64; 4] {
    let (r0, r1, r2, r3): (u64, u64, u64, u64);
    // SAFETY: BMI2 and ADX are present (module docs: this code runs only below entry points that asserted a
    // Checked backend covering Bmi2Adx). The block reads 4 words at `a` (a valid reference), writes only
    // the registers it declares, and does not touch the stack.
    unsafe {
        asm!(
            // Cross products into t1..t6 = r9..r14. Row a0·(a1, a2, a3).
            "mov rdx, [rsi]",
            "mulx r10, r9, [rsi + 8]",
            "mulx r11, rax, [rsi + 16]",
            "add r10, rax",
            "mulx r12, rax, [rsi + 24]",
            "adc r11, rax",
            "adc r12, 0",
            // Row a1·(a2, a3): low halves on the overflow chain, high halves on the carry chain.
            "mov rdx, [rsi + 8]",
            "xor r13d, r13d",
            "mulx rcx, rax, [rsi + 16]",
            "adox r11, rax",
            "adcx r12, rcx",
            "mulx rcx, rax, [rsi + 24]",
            "adox r12, rax",
            "adcx r13, rcx",
            "mov eax, 0",
            "adox r13, rax",
            // Row a2·a3.
            "mov rdx, [rsi + 16]",
            "mulx r14, rax, [rsi + 24]",
            "add r13, rax",
            "adc r14, 0",
            // Doubled (t1..t6 and the carry out into t7, on the carry-flag chain) and the diagonal aᵢ²
            // added (on the overflow-flag chain), interleaved: each word is doubled, then takes its diagonal
            // half. mov and mulx leave the flags alone.
            "xor r15d, r15d",
            "mov rdx, [rsi]",
            "mulx rcx, r8, rdx",
            "adcx r9, r9",
            "adox r9, rcx",
            "mov rdx, [rsi + 8]",
            "mulx rcx, rax, rdx",
            "adcx r10, r10",
            "adox r10, rax",
            "adcx r11, r11",
            "adox r11, rcx",
            "mov rdx, [rsi + 16]",
            "mulx rcx, rax, rdx",
            "adcx r12, r12",
            "adox r12, rax",
            "adcx r13, r13",
            "adox r13, rcx",
            "mov rdx, [rsi + 24]",
            "mulx rcx, rax, rdx",
            "adcx r14, r14",
            "adox r14, rax",
            "adcx r15, r15",
            "adox r15, rcx",
            // Four reduction rounds over the low half r8..r11 (the window rotates back to r8..r11).
            "mov rdi, 0xffffffff00000001",
            sqr_round!("r8", "r9", "r10", "r11"),
            sqr_round!("r9", "r10", "r11", "r8"),
            sqr_round!("r10", "r11", "r8", "r9"),
            sqr_round!("r11", "r8", "r9", "r10"),
            // U + the high half, below 2p, with its carry in rax.
            "xor eax, eax",
            "add r8, r12",
            "adc r9, r13",
            "adc r10, r14",
            "adc r11, r15",
            "adc rax, 0",
            // Subtract p; keep the difference when it does not borrow.
            "mov r12, r8", "mov r13, r9", "mov r14, r10", "mov r15, r11",
            "mov ecx, 0xffffffff",
            "sub r12, -1",
            "sbb r13, rcx",
            "sbb r14, 0",
            "sbb r15, rdi",
            "sbb rax, 0",
            "cmovnc r8, r12", "cmovnc r9, r13", "cmovnc r10, r14", "cmovnc r11, r15",
            inout("rsi") a.as_ptr() => _,
            two32 = sym TWO32,
            out("rax") _, out("rcx") _, out("rdx") _, out("rdi") _,
            out("r8") r0, out("r9") r1, out("r10") r2, out("r11") r3,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _,
            options(pure, readonly, nostack),
        );
    }
    [r0, r1, r2, r3]
}

/// a + b mod p for a, b below p: the sum (with its carry word), one subtraction of p kept by `cmov` when it
/// does not borrow. Registers only except the loads of b; no branch.
#[inline(always)]
fn add_p(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let [mut r0, mut r1, mut r2, mut r3] = *a;
    // SAFETY: plain integer instructions (no extension needed); the block reads 4 words at `b` (a valid
    // reference), writes only the registers it declares, and does not touch the stack.
    unsafe {
        asm!(
            "xor {top:e}, {top:e}",
            "add {r0}, [{b}]",
            "adc {r1}, [{b} + 8]",
            "adc {r2}, [{b} + 16]",
            "adc {r3}, [{b} + 24]",
            "adc {top}, 0",
            "mov {t0}, {r0}",
            "mov {t1}, {r1}",
            "mov {t2}, {r2}",
            "mov {t3}, {r3}",
            "mov {b:e}, 0xffffffff",
            "mov {p3}, 0xffffffff00000001",
            "sub {t0}, -1",
            "sbb {t1}, {b}",
            "sbb {t2}, 0",
            "sbb {t3}, {p3}",
            "sbb {top}, 0",
            "cmovnc {r0}, {t0}",
            "cmovnc {r1}, {t1}",
            "cmovnc {r2}, {t2}",
            "cmovnc {r3}, {t3}",
            r0 = inout(reg) r0, r1 = inout(reg) r1, r2 = inout(reg) r2, r3 = inout(reg) r3,
            b = inout(reg) b.as_ptr() => _,
            t0 = out(reg) _, t1 = out(reg) _, t2 = out(reg) _, t3 = out(reg) _,
            top = out(reg) _, p3 = out(reg) _,
            options(pure, readonly, nostack),
        );
    }
    [r0, r1, r2, r3]
}

/// a − b mod p for a, b below p: the difference, then p masked by its borrow (`sbb` of a register with
/// itself) added back. Registers only except the loads of b; no branch.
#[inline(always)]
fn sub_p(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let [mut r0, mut r1, mut r2, mut r3] = *a;
    // SAFETY: plain integer instructions (no extension needed); the block reads 4 words at `b` (a valid
    // reference), writes only the registers it declares, and does not touch the stack.
    unsafe {
        asm!(
            "sub {r0}, [{b}]",
            "sbb {r1}, [{b} + 8]",
            "sbb {r2}, [{b} + 16]",
            "sbb {r3}, [{b} + 24]",
            "sbb {m}, {m}",
            "mov {t1:e}, {m:e}",
            "mov {t3}, 0xffffffff00000001",
            "and {t3}, {m}",
            "add {r0}, {m}",
            "adc {r1}, {t1}",
            "adc {r2}, 0",
            "adc {r3}, {t3}",
            r0 = inout(reg) r0, r1 = inout(reg) r1, r2 = inout(reg) r2, r3 = inout(reg) r3,
            b = in(reg) b.as_ptr(),
            m = out(reg) _, t1 = out(reg) _, t3 = out(reg) _,
            options(pure, readonly, nostack),
        );
    }
    [r0, r1, r2, r3]
}

// ---- Whole point formulas as one routine ----
//
// The Jacobian doubling and the mixed addition each run as one `asm!` block: the field operations are the
// macros below, expanded in place, over 32-byte slots of a frame that the caller owns (`rsi` points at it;
// offsets are bytes). `rdi` holds p₃ for the whole block. Every operation reads its inputs from slots,
// works in registers and stores its result, fully reduced (below p), into a slot, so no operation between
// two others goes through the compiler's register allocation, and nothing spills. Each macro uses `rax`,
// `rcx`, `rdx` and `r8`..`r15` freely.

/// One row of `fmul`: the accumulator l0..l5 (l5 cleared here) takes a times the word of b at `off` on the
/// two carry chains, then one `p_round` with p₃ in `rdi` (as `prow` does, with slot addresses).
macro_rules! frow {
    ($a:literal, $b:literal, $off:literal, $l0:literal, $l1:literal, $l2:literal, $l3:literal, $l4:literal, $l5:literal) => {
        concat!(
            "xor ",
            $l5,
            "d, ",
            $l5,
            "d\n",
            "mov rdx, [rsi + ",
            $b,
            " + ",
            $off,
            "]\n",
            "mulx rcx, rax, [rsi + ",
            $a,
            "]\n",
            "adox ",
            $l0,
            ", rax\n",
            "adcx ",
            $l1,
            ", rcx\n",
            "mulx rcx, rax, [rsi + ",
            $a,
            " + 8]\n",
            "adox ",
            $l1,
            ", rax\n",
            "adcx ",
            $l2,
            ", rcx\n",
            "mulx rcx, rax, [rsi + ",
            $a,
            " + 16]\n",
            "adox ",
            $l2,
            ", rax\n",
            "adcx ",
            $l3,
            ", rcx\n",
            "mulx rcx, rax, [rsi + ",
            $a,
            " + 24]\n",
            "adox ",
            $l3,
            ", rax\n",
            "adcx ",
            $l4,
            ", rcx\n",
            "mov eax, 0\n",
            "adcx ",
            $l5,
            ", rax\n",
            "adox ",
            $l4,
            ", rax\n",
            "adox ",
            $l5,
            ", rax\n",
            p_round!("rdi", $l0, $l1, $l2, $l3, $l4, $l5),
        )
    };
}

/// slot d = a·b·2^−256 mod p: [`mul_p`] over slots (four rows of `frow`, the final subtraction of p
/// kept or dropped by `cmov`).
macro_rules! fmul {
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            // Row 0 into an empty accumulator (`first_row`), then its reduction round.
            "xor r13d, r13d\n",
            "mov rdx, [rsi + ",
            $b,
            "]\n",
            first_row!(concat!("rsi + ", $a)),
            p_round!("rdi", "r8", "r9", "r10", "r11", "r12", "r13"),
            frow!($a, $b, "8", "r9", "r10", "r11", "r12", "r13", "r8"),
            frow!($a, $b, "16", "r10", "r11", "r12", "r13", "r8", "r9"),
            frow!($a, $b, "24", "r11", "r12", "r13", "r8", "r9", "r10"),
            "mov r14d, 0xffffffff\n",
            "mov rax, r12\n",
            "mov rcx, r13\n",
            "mov rdx, r8\n",
            "mov r15, r9\n",
            "sub rax, -1\n",
            "sbb rcx, r14\n",
            "sbb rdx, 0\n",
            "sbb r15, rdi\n",
            "sbb r10, 0\n",
            "cmovc rax, r12\n",
            "cmovc rcx, r13\n",
            "cmovc rdx, r8\n",
            "cmovc r15, r9\n",
            "mov [rsi + ",
            $d,
            "], rax\n",
            "mov [rsi + ",
            $d,
            " + 8], rcx\n",
            "mov [rsi + ",
            $d,
            " + 16], rdx\n",
            "mov [rsi + ",
            $d,
            " + 24], r15\n",
        )
    };
}

/// One reduction round of `fsqr` over the window l0..l3 (`sqr_round` with p₃ in `rdi` and `rdx` as
/// the low half of q·p₃): the window becomes l1, l2, l3, l0.
macro_rules! fsqr_round {
    ($l0:literal, $l1:literal, $l2:literal, $l3:literal) => {
        concat!(
            "mov rdx, ",
            $l0,
            "\n",
            "mulx rcx, rax, qword ptr [rip + {two32}]\n",
            "mulx ",
            $l0,
            ", rdx, rdi\n",
            "add ",
            $l1,
            ", rax\n",
            "adc ",
            $l2,
            ", rcx\n",
            "adc ",
            $l3,
            ", rdx\n",
            "adc ",
            $l0,
            ", 0\n",
        )
    };
}

/// slot d = a²·2^−256 mod p: [`sqr_p`] over slots (the cross products once and doubled, the diagonal, four
/// reduction rounds over the low half, the high half added, one subtraction of p kept by `cmov`).
macro_rules! fsqr {
    ($d:literal, $a:literal) => {
        concat!(
            "mov rdx, [rsi + ",
            $a,
            "]\n",
            "mulx r10, r9, [rsi + ",
            $a,
            " + 8]\n",
            "mulx r11, rax, [rsi + ",
            $a,
            " + 16]\n",
            "add r10, rax\n",
            "mulx r12, rax, [rsi + ",
            $a,
            " + 24]\n",
            "adc r11, rax\n",
            "adc r12, 0\n",
            "mov rdx, [rsi + ",
            $a,
            " + 8]\n",
            "xor r13d, r13d\n",
            "mulx rcx, rax, [rsi + ",
            $a,
            " + 16]\n",
            "adox r11, rax\n",
            "adcx r12, rcx\n",
            "mulx rcx, rax, [rsi + ",
            $a,
            " + 24]\n",
            "adox r12, rax\n",
            "adcx r13, rcx\n",
            "mov eax, 0\n",
            "adox r13, rax\n",
            "mov rdx, [rsi + ",
            $a,
            " + 16]\n",
            "mulx r14, rax, [rsi + ",
            $a,
            " + 24]\n",
            "add r13, rax\n",
            "adc r14, 0\n",
            "xor r15d, r15d\n",
            "mov rdx, [rsi + ",
            $a,
            "]\n",
            "mulx rcx, r8, rdx\n",
            "adcx r9, r9\n",
            "adox r9, rcx\n",
            "mov rdx, [rsi + ",
            $a,
            " + 8]\n",
            "mulx rcx, rax, rdx\n",
            "adcx r10, r10\n",
            "adox r10, rax\n",
            "adcx r11, r11\n",
            "adox r11, rcx\n",
            "mov rdx, [rsi + ",
            $a,
            " + 16]\n",
            "mulx rcx, rax, rdx\n",
            "adcx r12, r12\n",
            "adox r12, rax\n",
            "adcx r13, r13\n",
            "adox r13, rcx\n",
            "mov rdx, [rsi + ",
            $a,
            " + 24]\n",
            "mulx rcx, rax, rdx\n",
            "adcx r14, r14\n",
            "adox r14, rax\n",
            "adcx r15, r15\n",
            "adox r15, rcx\n",
            fsqr_round!("r8", "r9", "r10", "r11"),
            fsqr_round!("r9", "r10", "r11", "r8"),
            fsqr_round!("r10", "r11", "r8", "r9"),
            fsqr_round!("r11", "r8", "r9", "r10"),
            "xor eax, eax\n",
            "add r8, r12\n",
            "adc r9, r13\n",
            "adc r10, r14\n",
            "adc r11, r15\n",
            "adc rax, 0\n",
            "mov r12, r8\n",
            "mov r13, r9\n",
            "mov r14, r10\n",
            "mov r15, r11\n",
            "mov ecx, 0xffffffff\n",
            "sub r12, -1\n",
            "sbb r13, rcx\n",
            "sbb r14, 0\n",
            "sbb r15, rdi\n",
            "sbb rax, 0\n",
            "cmovnc r8, r12\n",
            "cmovnc r9, r13\n",
            "cmovnc r10, r14\n",
            "cmovnc r11, r15\n",
            "mov [rsi + ",
            $d,
            "], r8\n",
            "mov [rsi + ",
            $d,
            " + 8], r9\n",
            "mov [rsi + ",
            $d,
            " + 16], r10\n",
            "mov [rsi + ",
            $d,
            " + 24], r11\n",
        )
    };
}

/// Loads slot a into r8..r11.
macro_rules! fload {
    ($a:literal) => {
        concat!(
            "mov r8, [rsi + ",
            $a,
            "]\n",
            "mov r9, [rsi + ",
            $a,
            " + 8]\n",
            "mov r10, [rsi + ",
            $a,
            " + 16]\n",
            "mov r11, [rsi + ",
            $a,
            " + 24]\n",
        )
    };
}

/// Stores r8..r11 into slot d.
macro_rules! fstore {
    ($d:literal) => {
        concat!(
            "mov [rsi + ",
            $d,
            "], r8\n",
            "mov [rsi + ",
            $d,
            " + 8], r9\n",
            "mov [rsi + ",
            $d,
            " + 16], r10\n",
            "mov [rsi + ",
            $d,
            " + 24], r11\n",
        )
    };
}

/// r8..r11 += p masked by `rax` (all ones or zero): p's words are (2^64 − 1, 2^32 − 1, 0, p₃).
macro_rules! fadd_masked_p {
    () => {
        concat!(
            "mov ecx, eax\n",
            "mov rdx, rdi\n",
            "and rdx, rax\n",
            "add r8, rax\n",
            "adc r9, rcx\n",
            "adc r10, 0\n",
            "adc r11, rdx\n",
        )
    };
}

/// slot d = a + b mod p ([`add_p`]): the sum with its carry word, one subtraction of p kept by `cmov`
/// when it does not borrow.
macro_rules! fadd {
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            fload!($a),
            "xor eax, eax\n",
            "add r8, [rsi + ",
            $b,
            "]\n",
            "adc r9, [rsi + ",
            $b,
            " + 8]\n",
            "adc r10, [rsi + ",
            $b,
            " + 16]\n",
            "adc r11, [rsi + ",
            $b,
            " + 24]\n",
            "adc rax, 0\n",
            "mov r12, r8\n",
            "mov r13, r9\n",
            "mov r14, r10\n",
            "mov r15, r11\n",
            "mov ecx, 0xffffffff\n",
            "sub r12, -1\n",
            "sbb r13, rcx\n",
            "sbb r14, 0\n",
            "sbb r15, rdi\n",
            "sbb rax, 0\n",
            "cmovnc r8, r12\n",
            "cmovnc r9, r13\n",
            "cmovnc r10, r14\n",
            "cmovnc r11, r15\n",
            fstore!($d),
        )
    };
}

/// slot d = a − b mod p ([`sub_p`]): the difference, then p masked by its borrow added back.
macro_rules! fsub {
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            fload!($a),
            "sub r8, [rsi + ",
            $b,
            "]\n",
            "sbb r9, [rsi + ",
            $b,
            " + 8]\n",
            "sbb r10, [rsi + ",
            $b,
            " + 16]\n",
            "sbb r11, [rsi + ",
            $b,
            " + 24]\n",
            "sbb rax, rax\n",
            fadd_masked_p!(),
            fstore!($d),
        )
    };
}

/// slot d = ca·a − cb·b mod p for constants with ca + cb below 2^20 ([`super::field::lincomb_p`]'s method):
/// V = ca·a + cb·(p − b) = h·2^256 + L in five words (p − b in r13, r14, r15, rcx; ca·a by a `mulx` row,
/// cb·(p − b) added on the two carry chains); with q = h + 1, S = L + q·(2^256 − p), whose words are
/// (q, −q·2^32, 2^64 − 1, q·(2^32 − 1) − 1) for 1 ≤ q < 2^32, and the result is S mod 2^256 when S carries
/// past 2^256, (S + p) mod 2^256 when it does not, p added by the mask of the carry.
macro_rules! flin {
    ($d:literal, $a:literal, $ca:literal, $b:literal, $cb:literal) => {
        concat!(
            flin_head!($a, $ca, $b),
            "xor eax, eax\n",
            "mov edx, ",
            $cb,
            "\n",
            "mulx rdx, rax, r13\n",
            "adox r8, rax\n",
            "adcx r9, rdx\n",
            "mov edx, ",
            $cb,
            "\n",
            "mulx rdx, rax, r14\n",
            "adox r9, rax\n",
            "adcx r10, rdx\n",
            "mov edx, ",
            $cb,
            "\n",
            "mulx rdx, rax, r15\n",
            "adox r10, rax\n",
            "adcx r11, rdx\n",
            "mov edx, ",
            $cb,
            "\n",
            "mulx rdx, rax, rcx\n",
            "adox r11, rax\n",
            "adcx r12, rdx\n",
            "mov eax, 0\n",
            "adox r12, rax\n",
            flin_tail!($d),
        )
    };
}

/// slot d = ca·a − b mod p: `flin` with cb = 1, where p − b is added on one carry chain instead of by a
/// `mulx` row.
macro_rules! flin1 {
    ($d:literal, $a:literal, $ca:literal, $b:literal) => {
        concat!(
            flin_head!($a, $ca, $b),
            "add r8, r13\n",
            "adc r9, r14\n",
            "adc r10, r15\n",
            "adc r11, rcx\n",
            "adc r12, 0\n",
            flin_tail!($d),
        )
    };
}

/// The start of `flin`: p − b into r13, r14, r15, rcx and ca·a into r8..r12.
macro_rules! flin_head {
    ($a:literal, $ca:literal, $b:literal) => {
        concat!(
            "mov r13, -1\n",
            "sub r13, [rsi + ",
            $b,
            "]\n",
            "mov r14d, 0xffffffff\n",
            "sbb r14, [rsi + ",
            $b,
            " + 8]\n",
            "mov r15d, 0\n",
            "sbb r15, [rsi + ",
            $b,
            " + 16]\n",
            "mov rcx, rdi\n",
            "sbb rcx, [rsi + ",
            $b,
            " + 24]\n",
            "mov edx, ",
            $ca,
            "\n",
            first_row!(concat!("rsi + ", $a)),
        )
    };
}

/// The end of `flin`: V = h·2^256 + L in r12, r8..r11 brought below p and stored into slot d.
macro_rules! flin_tail {
    ($d:literal) => {
        concat!(
            // q = h + 1 and S = L + q·(2^256 − p).
            "lea rdx, [r12 + 1]\n",
            "mov rax, rdx\n",
            "neg rax\n",
            "shl rax, 32\n",
            "mov rcx, rdx\n",
            "shl rcx, 32\n",
            "sub rcx, rdx\n",
            "sub rcx, 1\n",
            "add r8, rdx\n",
            "adc r9, rax\n",
            "adc r10, -1\n",
            "adc r11, rcx\n",
            // All ones when S did not carry: add p.
            "mov eax, 0\n",
            "adc rax, -1\n",
            fadd_masked_p!(),
            fstore!($d),
        )
    };
}

/// 2^32, the multiplier that splits a reduction round's q into q·2^32 mod 2^64 and ⌊q/2^32⌋ with one
/// `mulx` (on the multiplier's ports instead of two shifts on the ports that also run every carry chain).
static TWO32: u64 = 1 << 32;

/// A frame of 32-byte slots for the whole-formula routines.
type Frame<const K: usize> = [[u64; 4]; K];

/// 2·P in Jacobian coordinates for a = −3, the whole formula in one `asm!` block (4M + 4S): with δ = z²,
/// γ = y², β = x·γ and m = x² − δ² = (x + δ)·(x − δ) (so α = 3m in [`point::jdouble_formula`]),
/// d = 12β − 9m² (= 4β − x3), x3 = 4β − d, y3 = 3·m·d − 8γ², z3 = 2·(y·z) (one product and one addition
/// instead of (y + z)² − δ − γ: a square and three additions, more instructions). The same
/// coordinates as the portable formula (every slot is fully reduced); the identity (z = 0) gives z3 = 0.
///
/// n doublings (2^n·P), the point staying in the frame between them: it is copied back into a [`Jac`] only
/// after the last. The block stores each result one word at a time, and the compiler's copy reads them
/// with 16-byte loads, which the processor cannot forward from those stores: each such copy waits for the
/// stores to reach the cache, on the chain from one doubling to the next.
///
/// Not inlined: the routine is about a thousand instructions, and one copy serves every call site (the
/// four doublings of each k·P window, inlined, cost more in instruction fetch than the calls).
///
/// [`point::jdouble_formula`]: super::point::jdouble_formula
#[inline(never)]
fn jdouble_n_adx(p: &Jac, n: usize) -> Jac {
    // Slots (byte offsets): x 0, y 32, z 64 (the result overwrites them), δ 96, γ 128, x + δ 160 (then
    // y·z), x − δ 192, m 224, β 256, m² 288, d 320, γ² 352, m·d 384.
    // Uninitialised: the block writes every other slot before it reads it, and zeroing the frame (a call
    // to memset for its ten other slots) costs a noticeable part of a doubling.
    let mut f = core::mem::MaybeUninit::<Frame<13>>::uninit();
    let fp = f.as_mut_ptr().cast::<[u64; 4]>();
    // SAFETY: `fp` points at the first of the 13 slots of `f`, so slots 0, 1 and 2 are in bounds and aligned.
    unsafe {
        fp.write(p.x.0);
        fp.add(1).write(p.y.0);
        fp.add(2).write(p.z.0);
    }
    for _ in 0..n {
        // SAFETY: BMI2 and ADX are present (module docs: this code runs only below entry points that asserted a
        // Checked backend covering Bmi2Adx). The block reads and writes only the 13 slots of `f` at `fp` (every address
        // is `rsi` plus an offset below 13·32), writes only the registers it declares, and does not touch the
        // stack.
        unsafe {
            asm!(
                "mov rdi, 0xffffffff00000001",
                fsqr!("96", "64"),
                fsqr!("128", "32"),
                fsub!("192", "0", "96"),
                fadd!("160", "0", "96"),
                fmul!("224", "160", "192"),
                fmul!("160", "32", "64"),
                fmul!("256", "0", "128"),
                fsqr!("288", "224"),
                flin!("320", "256", "12", "288", "9"),
                fadd!("64", "160", "160"),
                fsqr!("352", "128"),
                fmul!("384", "320", "224"),
                flin1!("0", "256", "4", "320"),
                flin!("32", "384", "3", "352", "8"),
                inout("rsi") fp => _,
                two32 = sym TWO32,
                out("rdi") _, out("rax") _, out("rcx") _, out("rdx") _,
                out("r8") _, out("r9") _, out("r10") _, out("r11") _,
                out("r12") _, out("r13") _, out("r14") _, out("r15") _,
                options(nostack),
            );
        }
    }
    // SAFETY: slots 0, 1 and 2 were written before the loop, and each pass of the block overwrote them with
    // its result.
    unsafe { Jac { x: Fe(fp.read()), y: Fe(fp.add(1).read()), z: Fe(fp.add(2).read()) } }
}

/// Entry `idx − 1` of a row of K affine points (entry 0 for `idx` = 0), with AVX2: each entry is two
/// 32-byte loads (x and y), anded with the mask of `idx == j + 1` (`vpcmpeqq` against the broadcast index)
/// and ored into the result. Every entry is read; no branch or address depends on `idx`.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn lookup_avx2<const K: usize>(row: &[Aff; K], idx: u64) -> Aff {
    use core::arch::x86_64::{
        __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_cmpeq_epi64, _mm256_loadu_si256, _mm256_or_si256,
        _mm256_set1_epi64x, _mm256_setzero_si256, _mm256_storeu_si256,
    };
    // idx = 0 reads as 1 (entry 0, the stand-in of the portable scan): (idx − 1) >> 63 is 1 only for 0.
    let idx = idx | (idx.wrapping_sub(1) >> 63);
    let want = _mm256_set1_epi64x(idx as i64);
    let one = _mm256_set1_epi64x(1);
    // The running entry number j + 1, one vector add per entry.
    let mut j1 = one;
    let (mut x, mut y) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for e in row.iter() {
        let m = _mm256_cmpeq_epi64(want, j1);
        j1 = _mm256_add_epi64(j1, one);
        // SAFETY: e.x.0 and e.y.0 are [u64; 4], 32 readable bytes each; loadu has no alignment requirement.
        let (ex, ey) = unsafe {
            (_mm256_loadu_si256(e.x.0.as_ptr().cast::<__m256i>()), _mm256_loadu_si256(e.y.0.as_ptr().cast::<__m256i>()))
        };
        x = _mm256_or_si256(x, _mm256_and_si256(m, ex));
        y = _mm256_or_si256(y, _mm256_and_si256(m, ey));
    }
    let mut out = Aff { x: Fe::ZERO, y: Fe::ZERO };
    // SAFETY: out.x.0 and out.y.0 are [u64; 4], 32 writable bytes each; storeu has no alignment requirement.
    unsafe {
        _mm256_storeu_si256(out.x.0.as_mut_ptr().cast::<__m256i>(), x);
        _mm256_storeu_si256(out.y.0.as_mut_ptr().cast::<__m256i>(), y);
    }
    out
}

/// The BMI2/ADX arithmetic.
#[derive(Clone, Copy)]
struct Adx;

impl FieldArith for Adx {
    #[inline(always)]
    fn mul(a: &Fe, b: &Fe) -> Fe {
        Fe(mul_p(&a.0, &b.0))
    }
    #[inline(always)]
    fn sqr(a: &Fe) -> Fe {
        Fe(sqr_p(&a.0))
    }
    #[inline(always)]
    fn add(a: &Fe, b: &Fe) -> Fe {
        Fe(add_p(&a.0, &b.0))
    }
    #[inline(always)]
    fn sub(a: &Fe, b: &Fe) -> Fe {
        Fe(sub_p(&a.0, &b.0))
    }
    /// The portable inversion's safegcd with the x86_64 divsteps (packed words, `cmov`; the same result, in
    /// constant time), then the product with R³.
    #[inline(always)]
    fn invert(a: &Fe) -> Fe {
        Self::mul(&Fe(crate::x86::divsteps::invert(&a.0, &super::field::P62)), &super::field::R3)
    }
}

impl Arith for Adx {
    #[inline(always)]
    fn lookup<const K: usize>(row: &[Aff; K], idx: u64) -> Aff {
        // SAFETY: AVX2 is present: the backend requires it with BMI2 and ADX (module docs: this code runs only
        // below entry points that asserted a Checked backend covering Bmi2Adx).
        unsafe { lookup_avx2::<K>(row, idx) }
    }
    #[inline(always)]
    fn jdouble(p: &Jac) -> Jac {
        jdouble_n_adx(p, 1)
    }
    #[inline(always)]
    fn jdouble_n(p: &Jac, n: usize) -> Jac {
        jdouble_n_adx(p, n)
    }
}

/// The scalar product with this backend.
#[inline(always)]
fn scalar_mul_adx(a: &Scalar, b: &Scalar) -> Scalar {
    Scalar(mont_mul(&a.0, &b.0, &N))
}

// ---- Entry points: the only places the generic code runs over Adx ----------------------------------------

/// Defines an entry point that checks the proof and runs the generic function over [`Adx`].
macro_rules! entry {
    ($( $name:ident ( $($arg:ident : $t:ty),* ) -> $ret:ty; )*) => {$(
        #[doc = concat!("`", stringify!($name), "` with the BMI2/ADX arithmetic (see the generic function).")]
        pub(super) fn $name(backend: Checked<Backend>, $($arg: $t),*) -> $ret {
            // The proof that mulx/adcx/adox may run: the asm! block above relies on it.
            assert!(backend.covers(Backend::Bmi2Adx));
            generic::$name::<Adx>($($arg),*)
        }
    )*};
}

entry! {
    mul_base_affine(k: &Scalar) -> Option<Aff>;
    mul_affine(p: &Aff, k: &Scalar) -> Option<Aff>;
    verify(q: &Aff, u1: &Scalar, u2: &Scalar, r: &Scalar) -> bool;
    from_coordinates(x: &[u8; 32], y: &[u8; 32]) -> Result<Aff, &'static str>;
    decompress(x: &[u8; 32], y_odd: bool) -> Result<Aff, &'static str>;
}

/// a·b mod n with this backend.
pub(super) fn scalar_mul(backend: Checked<Backend>, a: &Scalar, b: &Scalar) -> Scalar {
    assert!(backend.covers(Backend::Bmi2Adx));
    scalar_mul_adx(a, b)
}

/// a⁻¹ mod n (constant time) with this backend.
pub(super) fn scalar_invert(backend: Checked<Backend>, a: &Scalar) -> Scalar {
    assert!(backend.covers(Backend::Bmi2Adx));
    a.invert_with(crate::x86::divsteps::invert, scalar_mul_adx)
}

#[cfg(test)]
mod tests {
    use super::super::field::tests::check_arith;
    use super::*;

    #[test]
    fn adx_matches_bigint() {
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        check_arith::<Adx>();
        // Scalars: against the portable product.
        let mut rng = super::super::field::tests::Xs(0x9256_0003);
        for _ in 0..500 {
            let a = Scalar::from_be_reduced(&super::super::field::limbs_to_be(&rng.limbs()));
            let b = Scalar::from_be_reduced(&super::super::field::limbs_to_be(&rng.limbs()));
            assert_eq!(scalar_mul(backend, &a, &b), a.mul(&b));
        }
        let a = Scalar::from_be_reduced(&[0xab; 32]);
        assert_eq!(scalar_invert(backend, &a), a.invert());
    }

    #[test]
    fn adx_jdouble_matches_complete_doubling() {
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        super::super::point::tests::check_jdouble::<Adx>();
    }

    #[test]
    fn adx_whole_formulas_match_portable() {
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        super::super::point::tests::check_whole_formulas::<Adx>();
    }

    /// The AVX2 row scan against the portable one, for every index 0..=K (0 gives entry 0), on rows of 8
    /// (k·P) and 16 (k·G) distinct random entries.
    #[test]
    fn adx_lookup_matches_portable() {
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        let mut rng = super::super::field::tests::Xs(0x9256_0007);
        let row: [Aff; 8] = core::array::from_fn(|_| Aff { x: Fe(rng.limbs()), y: Fe(rng.limbs()) });
        for idx in 0..=8u64 {
            let want = row[idx.saturating_sub(1) as usize];
            assert_eq!(<super::super::field::Soft as Arith>::lookup(&row, idx), want, "portable {idx}");
            assert_eq!(<Adx as Arith>::lookup(&row, idx), want, "avx2 {idx}");
        }
        let row: [Aff; 16] = core::array::from_fn(|_| Aff { x: Fe(rng.limbs()), y: Fe(rng.limbs()) });
        for idx in 0..=16u64 {
            let want = row[idx.saturating_sub(1) as usize];
            assert_eq!(<super::super::field::Soft as Arith>::lookup(&row, idx), want, "portable 16 {idx}");
            assert_eq!(<Adx as Arith>::lookup(&row, idx), want, "avx2 16 {idx}");
        }
    }

    /// The dedicated squaring against the portable one (`field::sqr_p`) and the asm product of a value with
    /// itself: the edge values of the field tests, random values below p, and values with long runs of
    /// all-ones and zero words (carries through every column of the doubling and the reductions).
    #[test]
    fn adx_sqr_matches_portable() {
        let Some(backend) = Checked::for_test(Backend::Bmi2Adx) else { return };
        assert!(backend.covers(Backend::Bmi2Adx));
        let p = super::super::field::P.m;
        let mut rng = super::super::field::tests::Xs(0x9256_0006);
        let mut vals = super::super::field::tests::edge_values(&p, &mut rng);
        let m = u64::MAX;
        // Below p: p − 1, p − 2^k, words of all ones under a top word below p₃, the largest value with a
        // top word of p₃ − 1.
        vals.push([p[0] - 1, p[1], p[2], p[3]]);
        vals.push([p[0], p[1] - 1, p[2], p[3]]);
        vals.push([m, m, m, p[3] - 1]);
        vals.push([m, m, m, 1 << 63]);
        vals.push([m, m, 0, m >> 1]);
        vals.push([0, 0, m, m >> 32]);
        vals.push([m, 0, m, 0]);
        vals.push([0, m, 0, 1]);
        for _ in 0..20_000 {
            let mut v = rng.limbs();
            if v[3] >= p[3] {
                v[3] = p[3] - 1;
            }
            vals.push(v);
        }
        for (i, a) in vals.iter().enumerate() {
            assert!(super::super::field::sbb4(a, &p).1 == 1, "test value {i} is not below p");
            let want = super::super::field::sqr_p(a);
            assert_eq!(sqr_p(a), want, "sqr {i}: {a:x?}");
            assert_eq!(mul_p(a, a), want, "mul {i}: {a:x?}");
        }
    }
}
