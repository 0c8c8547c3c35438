//! The BMI2/ADX backend of the RSA Montgomery arithmetic: each row `t += k·x` of the product and of the
//! reduction is one `asm!` loop of `mulx` with two independent carry chains (`adcx` for the low words, `adox`
//! for the high words), the loop counted with `lea`/`jrcxz`, which leave both flags alone.
//!
//! Everything here runs only below the entry points [`mul`] and [`sqr`], which assert that their
//! `Checked<Backend>` covers `Backend::Bmi2Adx`: the proof that the CPU (under the cap in force) has BMI2 and
//! ADX. Constant time: the loops run a number of times fixed by the (public) length only; no branch or address
//! depends on the values.

#![allow(unsafe_code)]

use core::arch::asm;

use super::bigint::mask;
use super::mont::{Backend, MAX_LIMBS};
use crate::dispatch::Checked;

/// `t[0..n] += k·x[0..n]` with n = `x.len()` ≥ 1 and `t.len()` ≥ n; returns the carry limb (the sum always
/// fits n + 1 limbs).
#[inline(always)]
fn addmul_row(t: &mut [u64], x: &[u64], k: u64) -> u64 {
    let n = x.len();
    assert!(n >= 1 && t.len() >= n);
    let carry: u64;
    // SAFETY: BMI2 and ADX are present (module docs: only reached below `mul`/`sqr`, which assert a Checked
    // backend covering Bmi2Adx). The loop reads n words at `x` and reads and writes n words at `t`, both valid
    // for n words (asserted above; the single steps and the blocks of four together cover exactly n words);
    // it writes only the registers it declares and does not touch the stack.
    unsafe {
        asm!(
            // CF = OF = 0, c (the pending high word) = 0.
            "xor {c:e}, {c:e}",
            // n mod 4 single steps first.
            "jrcxz 4f",
            "5:",
            "mulx {h0}, {l0}, qword ptr [{x}]",
            "adcx {l0}, qword ptr [{t}]",
            "adox {l0}, {c}",
            "mov qword ptr [{t}], {l0}",
            "mov {c}, {h0}",
            "lea {x}, [{x} + 8]",
            "lea {t}, [{t} + 8]",
            "lea rcx, [rcx - 1]",
            "jrcxz 4f",
            "jmp 5b",
            // Then n / 4 blocks of four, the high words alternating between h0 and c.
            "4:",
            "mov rcx, {q}",
            "jrcxz 3f",
            "2:",
            "mulx {h0}, {l0}, qword ptr [{x}]",
            "adcx {l0}, qword ptr [{t}]",
            "adox {l0}, {c}",
            "mov qword ptr [{t}], {l0}",
            "mulx {c}, {l1}, qword ptr [{x} + 8]",
            "adcx {l1}, qword ptr [{t} + 8]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 8], {l1}",
            "mulx {h0}, {l0}, qword ptr [{x} + 16]",
            "adcx {l0}, qword ptr [{t} + 16]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 16], {l0}",
            "mulx {c}, {l1}, qword ptr [{x} + 24]",
            "adcx {l1}, qword ptr [{t} + 24]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 24], {l1}",
            "lea {x}, [{x} + 32]",
            "lea {t}, [{t} + 32]",
            "lea rcx, [rcx - 1]",
            "jrcxz 3f",
            "jmp 2b",
            "3:",
            "mov {l0:e}, 0",
            "adcx {c}, {l0}",
            "adox {c}, {l0}",
            x = inout(reg) x.as_ptr() => _,
            t = inout(reg) t.as_mut_ptr() => _,
            inout("rcx") n % 4 => _,
            q = in(reg) n / 4,
            in("rdx") k,
            c = out(reg) carry,
            h0 = out(reg) _,
            l0 = out(reg) _,
            l1 = out(reg) _,
            options(nostack),
        );
    }
    carry
}

/// The reduction rows for any length: row i adds `u·m` (u = t[i]·m0inv) at `t[i..]`; returns the top bit.
#[inline(always)]
fn reduce_rows(t: &mut [u64], m: &[u64], m0inv: u64) -> u64 {
    let n = m.len();
    let mut hi = 0u64;
    for i in 0..n {
        let u = t[i].wrapping_mul(m0inv);
        let c = addmul_row(&mut t[i..i + n], m, u);
        let s = t[i + n] as u128 + c as u128 + hi as u128;
        t[i + n] = s as u64;
        hi = (s >> 64) as u64;
    }
    hi
}

/// The reduction rows of [`reduce`] for a 16-limb modulus in one `asm!` block: each row `t[i..i + 16] += u·m`
/// (u = t[i]·m0inv) fully unrolled with the two carry chains, its carry and the running top bit added into
/// `t[i + 16]`, no call or loop-counter overhead between rows. Returns the top bit (the sum is `< 2·m·R`).
#[inline(always)]
fn reduce_rows_16(t: &mut [u64], m: &[u64], m0inv: u64) -> u64 {
    assert!(m.len() == 16 && t.len() >= 2 * 16);
    let hi: u64;
    let tp = t.as_mut_ptr();
    let tend = tp.wrapping_add(16);
    // SAFETY: BMI2 and ADX are present (module docs: only reached below `mul`/`sqr`, which assert a Checked
    // backend covering Bmi2Adx). Row i reads 16 words at `m` and reads and writes words i ..= i + 16 of `t`;
    // i runs to 16 − 1, so every access is inside the 2·16 words asserted above. Only declared registers are
    // written; the stack is not touched.
    unsafe {
        asm!(
            "xor {hi:e}, {hi:e}",
            "2:",
            "mov rdx, qword ptr [{t}]",
            "imul rdx, {k}",
            "xor {c:e}, {c:e}",
            "mulx {h0}, {l0}, qword ptr [{m} + 0]",
            "adcx {l0}, qword ptr [{t} + 0]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 0], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 8]",
            "adcx {l1}, qword ptr [{t} + 8]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 8], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 16]",
            "adcx {l0}, qword ptr [{t} + 16]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 16], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 24]",
            "adcx {l1}, qword ptr [{t} + 24]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 24], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 32]",
            "adcx {l0}, qword ptr [{t} + 32]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 32], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 40]",
            "adcx {l1}, qword ptr [{t} + 40]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 40], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 48]",
            "adcx {l0}, qword ptr [{t} + 48]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 48], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 56]",
            "adcx {l1}, qword ptr [{t} + 56]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 56], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 64]",
            "adcx {l0}, qword ptr [{t} + 64]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 64], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 72]",
            "adcx {l1}, qword ptr [{t} + 72]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 72], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 80]",
            "adcx {l0}, qword ptr [{t} + 80]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 80], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 88]",
            "adcx {l1}, qword ptr [{t} + 88]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 88], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 96]",
            "adcx {l0}, qword ptr [{t} + 96]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 96], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 104]",
            "adcx {l1}, qword ptr [{t} + 104]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 104], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 112]",
            "adcx {l0}, qword ptr [{t} + 112]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 112], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 120]",
            "adcx {l1}, qword ptr [{t} + 120]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 120], {l1}",
            "mov {l0:e}, 0",
            "adcx {c}, {l0}",
            "adox {c}, {l0}",
            "xor {l1:e}, {l1:e}",
            "add qword ptr [{t} + 128], {c}",
            "adc {l1}, 0",
            "add qword ptr [{t} + 128], {hi}",
            "adc {l1}, 0",
            "mov {hi}, {l1}",
            "lea {t}, [{t} + 8]",
            "cmp {t}, {tend}",
            "jne 2b",
            m = in(reg) m.as_ptr(),
            t = inout(reg) tp => _,
            tend = in(reg) tend,
            k = in(reg) m0inv,
            hi = out(reg) hi,
            c = out(reg) _,
            h0 = out(reg) _,
            l0 = out(reg) _,
            l1 = out(reg) _,
            out("rdx") _,
            options(nostack),
        );
    }
    hi
}

/// The reduction rows of [`reduce`] for a 24-limb modulus in one `asm!` block: each row `t[i..i + 24] += u·m`
/// (u = t[i]·m0inv) fully unrolled with the two carry chains, its carry and the running top bit added into
/// `t[i + 24]`, no call or loop-counter overhead between rows. Returns the top bit (the sum is `< 2·m·R`).
#[inline(always)]
fn reduce_rows_24(t: &mut [u64], m: &[u64], m0inv: u64) -> u64 {
    assert!(m.len() == 24 && t.len() >= 2 * 24);
    let hi: u64;
    let tp = t.as_mut_ptr();
    let tend = tp.wrapping_add(24);
    // SAFETY: BMI2 and ADX are present (module docs: only reached below `mul`/`sqr`, which assert a Checked
    // backend covering Bmi2Adx). Row i reads 24 words at `m` and reads and writes words i ..= i + 24 of `t`;
    // i runs to 24 − 1, so every access is inside the 2·24 words asserted above. Only declared registers are
    // written; the stack is not touched.
    unsafe {
        asm!(
            "xor {hi:e}, {hi:e}",
            "2:",
            "mov rdx, qword ptr [{t}]",
            "imul rdx, {k}",
            "xor {c:e}, {c:e}",
            "mulx {h0}, {l0}, qword ptr [{m} + 0]",
            "adcx {l0}, qword ptr [{t} + 0]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 0], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 8]",
            "adcx {l1}, qword ptr [{t} + 8]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 8], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 16]",
            "adcx {l0}, qword ptr [{t} + 16]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 16], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 24]",
            "adcx {l1}, qword ptr [{t} + 24]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 24], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 32]",
            "adcx {l0}, qword ptr [{t} + 32]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 32], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 40]",
            "adcx {l1}, qword ptr [{t} + 40]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 40], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 48]",
            "adcx {l0}, qword ptr [{t} + 48]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 48], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 56]",
            "adcx {l1}, qword ptr [{t} + 56]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 56], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 64]",
            "adcx {l0}, qword ptr [{t} + 64]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 64], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 72]",
            "adcx {l1}, qword ptr [{t} + 72]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 72], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 80]",
            "adcx {l0}, qword ptr [{t} + 80]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 80], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 88]",
            "adcx {l1}, qword ptr [{t} + 88]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 88], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 96]",
            "adcx {l0}, qword ptr [{t} + 96]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 96], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 104]",
            "adcx {l1}, qword ptr [{t} + 104]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 104], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 112]",
            "adcx {l0}, qword ptr [{t} + 112]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 112], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 120]",
            "adcx {l1}, qword ptr [{t} + 120]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 120], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 128]",
            "adcx {l0}, qword ptr [{t} + 128]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 128], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 136]",
            "adcx {l1}, qword ptr [{t} + 136]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 136], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 144]",
            "adcx {l0}, qword ptr [{t} + 144]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 144], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 152]",
            "adcx {l1}, qword ptr [{t} + 152]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 152], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 160]",
            "adcx {l0}, qword ptr [{t} + 160]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 160], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 168]",
            "adcx {l1}, qword ptr [{t} + 168]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 168], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 176]",
            "adcx {l0}, qword ptr [{t} + 176]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 176], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 184]",
            "adcx {l1}, qword ptr [{t} + 184]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 184], {l1}",
            "mov {l0:e}, 0",
            "adcx {c}, {l0}",
            "adox {c}, {l0}",
            "xor {l1:e}, {l1:e}",
            "add qword ptr [{t} + 192], {c}",
            "adc {l1}, 0",
            "add qword ptr [{t} + 192], {hi}",
            "adc {l1}, 0",
            "mov {hi}, {l1}",
            "lea {t}, [{t} + 8]",
            "cmp {t}, {tend}",
            "jne 2b",
            m = in(reg) m.as_ptr(),
            t = inout(reg) tp => _,
            tend = in(reg) tend,
            k = in(reg) m0inv,
            hi = out(reg) hi,
            c = out(reg) _,
            h0 = out(reg) _,
            l0 = out(reg) _,
            l1 = out(reg) _,
            out("rdx") _,
            options(nostack),
        );
    }
    hi
}

/// The reduction rows of [`reduce`] for a 32-limb modulus in one `asm!` block: each row `t[i..i + 32] += u·m`
/// (u = t[i]·m0inv) fully unrolled with the two carry chains, its carry and the running top bit added into
/// `t[i + 32]`, no call or loop-counter overhead between rows. Returns the top bit (the sum is `< 2·m·R`).
#[inline(always)]
fn reduce_rows_32(t: &mut [u64], m: &[u64], m0inv: u64) -> u64 {
    assert!(m.len() == 32 && t.len() >= 2 * 32);
    let hi: u64;
    let tp = t.as_mut_ptr();
    let tend = tp.wrapping_add(32);
    // SAFETY: BMI2 and ADX are present (module docs: only reached below `mul`/`sqr`, which assert a Checked
    // backend covering Bmi2Adx). Row i reads 32 words at `m` and reads and writes words i ..= i + 32 of `t`;
    // i runs to 32 − 1, so every access is inside the 2·32 words asserted above. Only declared registers are
    // written; the stack is not touched.
    unsafe {
        asm!(
            "xor {hi:e}, {hi:e}",
            "2:",
            "mov rdx, qword ptr [{t}]",
            "imul rdx, {k}",
            "xor {c:e}, {c:e}",
            "mulx {h0}, {l0}, qword ptr [{m} + 0]",
            "adcx {l0}, qword ptr [{t} + 0]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 0], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 8]",
            "adcx {l1}, qword ptr [{t} + 8]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 8], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 16]",
            "adcx {l0}, qword ptr [{t} + 16]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 16], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 24]",
            "adcx {l1}, qword ptr [{t} + 24]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 24], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 32]",
            "adcx {l0}, qword ptr [{t} + 32]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 32], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 40]",
            "adcx {l1}, qword ptr [{t} + 40]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 40], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 48]",
            "adcx {l0}, qword ptr [{t} + 48]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 48], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 56]",
            "adcx {l1}, qword ptr [{t} + 56]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 56], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 64]",
            "adcx {l0}, qword ptr [{t} + 64]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 64], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 72]",
            "adcx {l1}, qword ptr [{t} + 72]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 72], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 80]",
            "adcx {l0}, qword ptr [{t} + 80]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 80], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 88]",
            "adcx {l1}, qword ptr [{t} + 88]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 88], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 96]",
            "adcx {l0}, qword ptr [{t} + 96]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 96], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 104]",
            "adcx {l1}, qword ptr [{t} + 104]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 104], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 112]",
            "adcx {l0}, qword ptr [{t} + 112]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 112], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 120]",
            "adcx {l1}, qword ptr [{t} + 120]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 120], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 128]",
            "adcx {l0}, qword ptr [{t} + 128]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 128], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 136]",
            "adcx {l1}, qword ptr [{t} + 136]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 136], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 144]",
            "adcx {l0}, qword ptr [{t} + 144]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 144], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 152]",
            "adcx {l1}, qword ptr [{t} + 152]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 152], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 160]",
            "adcx {l0}, qword ptr [{t} + 160]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 160], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 168]",
            "adcx {l1}, qword ptr [{t} + 168]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 168], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 176]",
            "adcx {l0}, qword ptr [{t} + 176]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 176], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 184]",
            "adcx {l1}, qword ptr [{t} + 184]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 184], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 192]",
            "adcx {l0}, qword ptr [{t} + 192]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 192], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 200]",
            "adcx {l1}, qword ptr [{t} + 200]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 200], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 208]",
            "adcx {l0}, qword ptr [{t} + 208]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 208], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 216]",
            "adcx {l1}, qword ptr [{t} + 216]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 216], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 224]",
            "adcx {l0}, qword ptr [{t} + 224]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 224], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 232]",
            "adcx {l1}, qword ptr [{t} + 232]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 232], {l1}",
            "mulx {h0}, {l0}, qword ptr [{m} + 240]",
            "adcx {l0}, qword ptr [{t} + 240]",
            "adox {l0}, {c}",
            "mov qword ptr [{t} + 240], {l0}",
            "mulx {c}, {l1}, qword ptr [{m} + 248]",
            "adcx {l1}, qword ptr [{t} + 248]",
            "adox {l1}, {h0}",
            "mov qword ptr [{t} + 248], {l1}",
            "mov {l0:e}, 0",
            "adcx {c}, {l0}",
            "adox {c}, {l0}",
            "xor {l1:e}, {l1:e}",
            "add qword ptr [{t} + 256], {c}",
            "adc {l1}, 0",
            "add qword ptr [{t} + 256], {hi}",
            "adc {l1}, 0",
            "mov {hi}, {l1}",
            "lea {t}, [{t} + 8]",
            "cmp {t}, {tend}",
            "jne 2b",
            m = in(reg) m.as_ptr(),
            t = inout(reg) tp => _,
            tend = in(reg) tend,
            k = in(reg) m0inv,
            hi = out(reg) hi,
            c = out(reg) _,
            h0 = out(reg) _,
            l0 = out(reg) _,
            l1 = out(reg) _,
            out("rdx") _,
            options(nostack),
        );
    }
    hi
}

/// Montgomery reduction of the 2N-limb `t` (< m·R) into `out` (< m).
#[inline(always)]
fn reduce(out: &mut [u64], t: &mut [u64], m: &[u64], m0inv: u64) {
    let n = m.len();
    let hi = match n {
        16 => reduce_rows_16(t, m, m0inv),
        24 => reduce_rows_24(t, m, m0inv),
        32 => reduce_rows_32(t, m, m0inv),
        _ => reduce_rows(t, m, m0inv),
    };
    let mut br = 0u64;
    for j in 0..n {
        let (d1, b1) = t[n + j].overflowing_sub(m[j]);
        let (d2, b2) = d1.overflowing_sub(br);
        out[j] = d2;
        br = (b1 | b2) as u64;
    }
    let (_, keep) = hi.overflowing_sub(br);
    let keep = mask(keep as u64);
    for j in 0..n {
        out[j] = (out[j] & !keep) | (t[n + j] & keep);
    }
}

/// `out = a·b·R^-1 mod m` (as [`super::mont::MontCtx::mul`]) with mulx/adcx/adox.
pub(super) fn mul(backend: Checked<Backend>, out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64) {
    // The proof that mulx/adcx/adox may run: the asm! block above relies on it.
    assert!(backend.covers(Backend::Bmi2Adx));
    let n = m.len();
    assert!((1..=MAX_LIMBS).contains(&n) && a.len() >= n && b.len() >= n && out.len() >= n);
    // The scratch is zero-filled on every call: size it to the modulus (a 2 KiB fill per product cost about
    // 5% of a 2048-bit private operation).
    match n {
        0..=16 => mul_w::<32>(out, a, b, m, m0inv),
        17..=32 => mul_w::<64>(out, a, b, m, m0inv),
        33..=64 => mul_w::<128>(out, a, b, m, m0inv),
        _ => mul_w::<{ 2 * MAX_LIMBS }>(out, a, b, m, m0inv),
    }
}

/// [`mul`] with a `W`-word scratch, `W ≥ 2n`.
#[inline(always)]
fn mul_w<const W: usize>(out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64) {
    let n = m.len();
    let mut t = [0u64; W];
    for i in 0..n {
        t[i + n] = addmul_row(&mut t[i..i + n], &b[..n], a[i]);
    }
    reduce(out, &mut t[..2 * n], m, m0inv);
    crate::ct::wipe(&mut t[..2 * n]);
}

/// `out = a²·R^-1 mod m` with mulx/adcx/adox: cross products once, doubled, plus the diagonal, then the
/// reduction.
pub(super) fn sqr(backend: Checked<Backend>, out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64) {
    assert!(backend.covers(Backend::Bmi2Adx));
    let n = m.len();
    assert!((1..=MAX_LIMBS).contains(&n) && a.len() >= n && out.len() >= n);
    match n {
        0..=16 => sqr_w::<32>(out, a, m, m0inv),
        17..=32 => sqr_w::<64>(out, a, m, m0inv),
        33..=64 => sqr_w::<128>(out, a, m, m0inv),
        _ => sqr_w::<{ 2 * MAX_LIMBS }>(out, a, m, m0inv),
    }
}

/// [`sqr`] with a `W`-word scratch, `W ≥ 2n`.
#[inline(always)]
fn sqr_w<const W: usize>(out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64) {
    let n = m.len();
    let mut t = [0u64; W];
    for i in 0..n - 1 {
        t[i + n] = addmul_row(&mut t[2 * i + 1..i + n], &a[i + 1..n], a[i]);
    }
    let mut top = 0u64;
    for w in t[..2 * n].iter_mut() {
        let nt = *w >> 63;
        *w = (*w << 1) | top;
        top = nt;
    }
    let mut c = 0u128;
    for i in 0..n {
        let sq = a[i] as u128 * a[i] as u128;
        let s = t[2 * i] as u128 + (sq as u64) as u128 + c;
        t[2 * i] = s as u64;
        let s2 = t[2 * i + 1] as u128 + (sq >> 64) + (s >> 64);
        t[2 * i + 1] = s2 as u64;
        c = s2 >> 64;
    }
    reduce(out, &mut t[..2 * n], m, m0inv);
    crate::ct::wipe(&mut t[..2 * n]);
}
