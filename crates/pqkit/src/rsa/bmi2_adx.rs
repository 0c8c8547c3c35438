//! The BMI2/ADX backend of the RSA Montgomery arithmetic: each row `t += k·x` of the product and of the
//! reduction is one `asm!` loop of `mulx` with two independent carry chains (`adcx` for the low words, `adox`
//! for the high words), the loop counted with `lea`/`jrcxz`, which leave both flags alone.
//!
//! Everything here runs only below the entry points [`mul`] and [`sqr`], which assert that their
//! `Checked<Backend>` covers `Backend::Bmi2Adx`: the proof that the CPU (under the cap in force) has BMI2 and
//! ADX. Constant time: the loops run a number of times fixed by the (public) length only; no branch or address
//! depends on the values.
//!
//! The longest blocks, fully unrolled with fixed offsets, are one routine a submodule: the cross products of the
//! 16-, 24- and 32-limb squares ([`sqr_cross_16`](fn@sqr_cross_16), [`sqr_cross_24`](fn@sqr_cross_24),
//! [`sqr_cross_32`](fn@sqr_cross_32)) and the 16-limb reduction ([`reduce_window_16`](fn@reduce_window_16)).
//!
//! Their `asm!` text is printed by `bmi2_adx_rows.py` (next to this file) and checked against it by
//! `.ci/check-generated.py`; the rows they write out are those of `row_body!` below.
//!
//! Two backends run this file. `Backend::Bmi2Adx` reduces 16 limbs with the register window of
//! [`reduce_window_16`](fn@reduce_window_16); `Backend::Bmi2AdxRows` (chosen everywhere but on Zen 4 and Zen 5)
//! with the plain rows of `reduce_rows_n!`, as every other size. Measured with rdtsc, the window against the rows:
//! 7% faster on Zen 5; on Zen 3 3-4% slower on one 16-limb Montgomery square (610-628 against 587-603 ticks) and
//! 4-5% slower on a 1024-bit constant-time exponentiation (the two backends interleaved in one process); on an
//! Intel Xeon (family 6, model 167) RSA-2048 signing and decryption under the AVX2 cap took 2-3% longer with the
//! window (547-573 against 541-555 us, `pqkit-bench`, two builds interleaved).

#![allow(unsafe_code)]

use core::arch::asm;

use super::Backend;
use super::bigint::{self, MAX_LIMBS};
use crate::dispatch::Checked;

mod reduce_window_16;
mod sqr_cross_16;
mod sqr_cross_24;
mod sqr_cross_32;

use reduce_window_16::{WIN16_LEN, reduce_window_16};
use sqr_cross_16::sqr_cross_16;
use sqr_cross_24::sqr_cross_24;
use sqr_cross_32::sqr_cross_32;

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

/// The unrolled body of one row `t[0..n] += rdx·src[0..n]` (`src` is the operand named `$src`, `t` the row's
/// start), for the byte offsets given in pairs: each pair is two `mulx` whose high words feed the next low word
/// through the `adox` chain while `adcx` adds the old `t` words. Leaves the row's last high word in `{c}` and both
/// carry flags pending. Expands to one template string.
macro_rules! row_body {
    ($src:literal; $($e:literal $o:literal),+) => {
        concat!($(
            "mulx {h0}, {l0}, qword ptr [{", $src, "} + ", $e, "]\n",
            "adcx {l0}, qword ptr [{t} + ", $e, "]\n",
            "adox {l0}, {c}\n",
            "mov qword ptr [{t} + ", $e, "], {l0}\n",
            "mulx {c}, {l1}, qword ptr [{", $src, "} + ", $o, "]\n",
            "adcx {l1}, qword ptr [{t} + ", $o, "]\n",
            "adox {l1}, {h0}\n",
            "mov qword ptr [{t} + ", $o, "], {l1}\n",
        )+)
    };
}

/// Defines `$name(t, m, m0inv) -> u64`, the reduction rows of [`reduce`] for an `$n`-limb modulus in one `asm!`
/// block: each row `t[i..i + $n] += u·m` (u = t[i]·m0inv) fully unrolled with the two carry chains ([`row_body`];
/// `$top` = 8·`$n`, the byte offset of `t[i + $n]`), its carry and the running top bit added into `t[i + $n]`,
/// no call or loop-counter overhead between rows. Returns the top bit (the sum is `< 2·m·R`).
///
/// The next row's factor u' = t[i + 1]·m0inv is computed as soon as the row's first two words are summed, from
/// the register that holds t[i + 1] (a `mulx`, which leaves the carry flags alone), rather than by reloading
/// t[i + 1] after the row: the next row then starts without waiting for that store and an `imul`.
macro_rules! reduce_rows_n {
    ($name:ident, $n:literal, $top:literal, [$e0:literal $o0:literal, $($e:literal $o:literal),+]) => {
        #[doc = concat!("The reduction rows of [`reduce`] for a ", $n, "-limb modulus (see `reduce_rows_n`).")]
        #[inline(always)]
        fn $name(t: &mut [u64], m: &[u64], m0inv: u64) -> u64 {
            assert!(m.len() == $n && t.len() >= 2 * $n);
            let hi: u64;
            let tp = t.as_mut_ptr();
            let tend = tp.wrapping_add($n);
            // SAFETY: BMI2 and ADX are present (module docs: only reached below `mul`/`sqr`, which assert a
            // Checked backend covering Bmi2Adx). Row i reads $n words at `m` and reads and writes words
            // i ..= i + $n of `t`; i runs to $n − 1, so every access is inside the 2·$n words asserted above.
            // Only declared registers are written; the stack is not touched.
            unsafe {
                asm!(
                    "xor {hi:e}, {hi:e}",
                    "mov rdx, qword ptr [{t}]",
                    "imul rdx, {k}",
                    "2:",
                    "xor {c:e}, {c:e}",
                    row_body!("m"; $e0 $o0),
                    // u' = t[i + 1]·m0inv from {l1} (the new t[i + 1]); rdx (this row's u) set aside meanwhile.
                    "mov {l0}, rdx",
                    "mov rdx, {k}",
                    "mulx {h0}, {un}, {l1}",
                    "mov rdx, {l0}",
                    row_body!("m"; $($e $o),+),
                    "mov {l0:e}, 0",
                    "adcx {c}, {l0}",
                    "adox {c}, {l0}",
                    // t[i + $n] += c + hi: the two carries summed in registers first, so the word is read and
                    // written once (a second read-modify-write of the same word waits for the first's store).
                    "xor {l1:e}, {l1:e}",
                    "add {c}, {hi}",
                    "adc {l1}, 0",
                    concat!("add qword ptr [{t} + ", $top, "], {c}"),
                    "adc {l1}, 0",
                    "mov {hi}, {l1}",
                    "mov rdx, {un}",
                    "lea {t}, [{t} + 8]",
                    "cmp {t}, {tend}",
                    "jne 2b",
                    m = in(reg) m.as_ptr(),
                    t = inout(reg) tp => _,
                    tend = in(reg) tend,
                    k = in(reg) m0inv,
                    hi = out(reg) hi,
                    un = out(reg) _,
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
    };
}

/// Defines `$name(t, a, b)`, the product rows of [`mul_w`] for `$n` limbs in one `asm!` block: row i adds
/// `a[i]·b` at `t[i..]` (fully unrolled, two carry chains: [`row_body`]) and stores its carry word at
/// `t[i + $n]` (`$top` = 8·`$n` bytes on). `t` must be zero on entry.
macro_rules! mul_rows_n {
    ($name:ident, $n:literal, $top:literal, [$($e:literal $o:literal),+]) => {
        #[doc = concat!("The product rows of [`mul_w`] for ", $n, " limbs (see `mul_rows_n`).")]
        #[inline(always)]
        fn $name(t: &mut [u64], a: &[u64], b: &[u64]) {
            assert!(a.len() >= $n && b.len() >= $n && t.len() >= 2 * $n);
            let tp = t.as_mut_ptr();
            let tend = tp.wrapping_add($n);
            // SAFETY: BMI2 and ADX are present (module docs: only reached below `mul`/`sqr`, which assert a
            // Checked backend covering Bmi2Adx). Row i reads a[i] and $n words of `b`, and reads and writes
            // words i ..= i + $n of `t` for i < $n: all inside the lengths asserted above. Only declared
            // registers are written; the stack is not touched.
            unsafe {
                asm!(
                    "2:",
                    "mov rdx, qword ptr [{a}]",
                    "xor {c:e}, {c:e}",
                    row_body!("b"; $($e $o),+),
                    "mov {l0:e}, 0",
                    "adcx {c}, {l0}",
                    "adox {c}, {l0}",
                    concat!("mov qword ptr [{t} + ", $top, "], {c}"),
                    "lea {a}, [{a} + 8]",
                    "lea {t}, [{t} + 8]",
                    "cmp {t}, {tend}",
                    "jne 2b",
                    a = inout(reg) a.as_ptr() => _,
                    b = in(reg) b.as_ptr(),
                    t = inout(reg) tp => _,
                    tend = in(reg) tend,
                    c = out(reg) _,
                    h0 = out(reg) _,
                    l0 = out(reg) _,
                    l1 = out(reg) _,
                    out("rdx") _,
                    options(nostack),
                );
            }
        }
    };
}

reduce_rows_n!(reduce_rows_16, 16, 128, [0 8, 16 24, 32 40, 48 56, 64 72, 80 88, 96 104, 112 120]);
reduce_rows_n!(reduce_rows_24, 24, 192, [0 8, 16 24, 32 40, 48 56, 64 72, 80 88, 96 104, 112 120, 128 136, 144 152, 160 168, 176 184]);
reduce_rows_n!(reduce_rows_32, 32, 256, [0 8, 16 24, 32 40, 48 56, 64 72, 80 88, 96 104, 112 120, 128 136, 144 152, 160 168, 176 184, 192 200, 208 216, 224 232, 240 248]);
reduce_rows_n!(reduce_rows_48, 48, 384, [0 8, 16 24, 32 40, 48 56, 64 72, 80 88, 96 104, 112 120, 128 136, 144 152, 160 168, 176 184, 192 200, 208 216, 224 232, 240 248, 256 264, 272 280, 288 296, 304 312, 320 328, 336 344, 352 360, 368 376]);
reduce_rows_n!(reduce_rows_64, 64, 512, [0 8, 16 24, 32 40, 48 56, 64 72, 80 88, 96 104, 112 120, 128 136, 144 152, 160 168, 176 184, 192 200, 208 216, 224 232, 240 248, 256 264, 272 280, 288 296, 304 312, 320 328, 336 344, 352 360, 368 376, 384 392, 400 408, 416 424, 432 440, 448 456, 464 472, 480 488, 496 504]);
mul_rows_n!(mul_rows_16, 16, 128, [0 8, 16 24, 32 40, 48 56, 64 72, 80 88, 96 104, 112 120]);
mul_rows_n!(mul_rows_24, 24, 192, [0 8, 16 24, 32 40, 48 56, 64 72, 80 88, 96 104, 112 120, 128 136, 144 152, 160 168, 176 184]);
mul_rows_n!(mul_rows_32, 32, 256, [0 8, 16 24, 32 40, 48 56, 64 72, 80 88, 96 104, 112 120, 128 136, 144 152, 160 168, 176 184, 192 200, 208 216, 224 232, 240 248]);
mul_rows_n!(mul_rows_48, 48, 384, [0 8, 16 24, 32 40, 48 56, 64 72, 80 88, 96 104, 112 120, 128 136, 144 152, 160 168, 176 184, 192 200, 208 216, 224 232, 240 248, 256 264, 272 280, 288 296, 304 312, 320 328, 336 344, 352 360, 368 376]);
mul_rows_n!(mul_rows_64, 64, 512, [0 8, 16 24, 32 40, 48 56, 64 72, 80 88, 96 104, 112 120, 128 136, 144 152, 160 168, 176 184, 192 200, 208 216, 224 232, 240 248, 256 264, 272 280, 288 296, 304 312, 320 328, 336 344, 352 360, 368 376, 384 392, 400 408, 416 424, 432 440, 448 456, 464 472, 480 488, 496 504]);

/// Montgomery reduction of the 2N-limb `t[..2n]` into `out`. Full (`loose` false): `t < m·R`, `out < m`. Loose:
/// `t < R²`, `out < R` and congruent, not necessarily `< m` (see [`sqr_loose`]). For 16 limbs without `rows` (the
/// window) `t` is also the scratch of [`reduce_window_16`](fn@reduce_window_16) and must be `WIN16_LEN` words
/// long.
#[inline(always)]
fn reduce(out: &mut [u64], t: &mut [u64], m: &[u64], m0inv: u64, rows: bool, loose: bool) {
    let n = m.len();
    let hi = match n {
        16 if rows => reduce_rows_16(t, m, m0inv),
        16 => {
            let hi = reduce_window_16(t, m, m0inv);
            crate::ct::wipe(&mut t[2 * n..WIN16_LEN]);
            hi
        }
        24 => reduce_rows_24(t, m, m0inv),
        32 => reduce_rows_32(t, m, m0inv),
        48 => reduce_rows_48(t, m, m0inv),
        64 => reduce_rows_64(t, m, m0inv),
        _ => reduce_rows(t, m, m0inv),
    };
    if loose {
        // The sum (t + u·m)/R is below R + m < 2R: when its top bit is set, one subtraction of m brings it below
        // R (and the borrow cancels that bit); otherwise it is below R already.
        sub_masked(&mut out[..n], &t[n..2 * n], m, hi.wrapping_neg());
        return;
    }
    let keep = sub_borrow_mask(&mut out[..n], &t[n..2 * n], m, hi);
    select_words(&mut out[..n], &t[n..2 * n], keep);
}

/// `out = x` where `keep` is all ones, `out` unchanged where it is zero, one word at a time by `cmov`. Both were
/// just written one word at a time by `asm!` stores; the compiler's vectorised form of this selection read them
/// with 32-byte loads, which the processor cannot forward from those stores (each waited for them to reach the
/// cache). Constant time: the loop count is the public length, the choice a flag set from the mask.
#[inline(always)]
fn select_words(out: &mut [u64], x: &[u64], keep: u64) {
    let n = out.len();
    assert!(n >= 1 && x.len() >= n);
    // SAFETY: plain x86_64 integer instructions. The loop reads n words at `x` and reads and writes n words at
    // `out`, valid for n words (asserted above); `bt` sets CF from the mask once, and `mov`, `cmov`, `lea` and
    // `jrcxz` leave it alone. Only declared registers are written; the stack is not touched.
    unsafe {
        asm!(
            "bt {keep}, 0",
            "2:",
            "mov {w}, qword ptr [{o}]",
            "cmovc {w}, qword ptr [{x}]",
            "mov qword ptr [{o}], {w}",
            "lea {x}, [{x} + 8]",
            "lea {o}, [{o} + 8]",
            "lea rcx, [rcx - 1]",
            "jrcxz 3f",
            "jmp 2b",
            "3:",
            x = inout(reg) x.as_ptr() => _,
            o = inout(reg) out.as_mut_ptr() => _,
            keep = in(reg) keep,
            w = out(reg) _,
            inout("rcx") n => _,
            options(nostack),
        );
    }
}

/// `out = x − (m & mask)` over n = `m.len()` words (`mask` all ones or zero), the borrow out of the top word
/// dropped. The masked m is written to `out` first (the `and` would clear the borrow inside the chain), then one
/// `sbb` chain in blocks of four words. Constant time: the loop count is the public length.
#[inline(always)]
fn sub_masked(out: &mut [u64], x: &[u64], m: &[u64], mask: u64) {
    let n = m.len();
    assert!(n >= 1 && out.len() >= n && x.len() >= n);
    for (o, &w) in out[..n].iter_mut().zip(m) {
        *o = w & mask;
    }
    // SAFETY: plain x86_64 integer instructions. The single steps (n mod 4) and the blocks of four (n / 4)
    // together read n words at `x` and read and write n words at `out`, valid for n words (asserted above); the
    // counter steps with `lea`/`jrcxz`, which leave the borrow in CF alone. Only declared registers are written;
    // the stack is not touched.
    unsafe {
        asm!(
            "xor {w:e}, {w:e}",
            "jrcxz 4f",
            "5:",
            "mov {w}, qword ptr [{x}]",
            "sbb {w}, qword ptr [{o}]",
            "mov qword ptr [{o}], {w}",
            "lea {x}, [{x} + 8]",
            "lea {o}, [{o} + 8]",
            "lea rcx, [rcx - 1]",
            "jrcxz 4f",
            "jmp 5b",
            "4:",
            "mov rcx, {q}",
            "jrcxz 3f",
            "2:",
            "mov {w}, qword ptr [{x}]",
            "sbb {w}, qword ptr [{o}]",
            "mov qword ptr [{o}], {w}",
            "mov {w}, qword ptr [{x} + 8]",
            "sbb {w}, qword ptr [{o} + 8]",
            "mov qword ptr [{o} + 8], {w}",
            "mov {w}, qword ptr [{x} + 16]",
            "sbb {w}, qword ptr [{o} + 16]",
            "mov qword ptr [{o} + 16], {w}",
            "mov {w}, qword ptr [{x} + 24]",
            "sbb {w}, qword ptr [{o} + 24]",
            "mov qword ptr [{o} + 24], {w}",
            "lea {x}, [{x} + 32]",
            "lea {o}, [{o} + 32]",
            "lea rcx, [rcx - 1]",
            "jrcxz 3f",
            "jmp 2b",
            "3:",
            x = inout(reg) x.as_ptr() => _,
            o = inout(reg) out.as_mut_ptr() => _,
            q = in(reg) n / 4,
            w = out(reg) _,
            inout("rcx") n % 4 => _,
            options(nostack),
        );
    }
}

/// `out = x − m` over n = `m.len()` words with one `sbb` chain, then the top word `hi` of x minus the borrow:
/// returns all ones when that borrows (x < m, keep x), else zero (take x − m). Constant time: the loop count is
/// the public length, the verdict a mask.
#[inline(always)]
fn sub_borrow_mask(out: &mut [u64], x: &[u64], m: &[u64], hi: u64) -> u64 {
    let n = m.len();
    assert!(n >= 1 && out.len() >= n && x.len() >= n);
    let keep: u64;
    // SAFETY: plain x86_64 integer instructions. The loop reads n words at `x` and `m` and writes n words at
    // `out`, all valid for n words (asserted above); the counter steps with `lea`/`jrcxz`, which leave the borrow
    // in CF alone. Only declared registers are written; the stack is not touched.
    unsafe {
        asm!(
            "xor {w:e}, {w:e}",
            "2:",
            "mov {w}, qword ptr [{x}]",
            "sbb {w}, qword ptr [{m}]",
            "mov qword ptr [{o}], {w}",
            "lea {x}, [{x} + 8]",
            "lea {m}, [{m} + 8]",
            "lea {o}, [{o} + 8]",
            "lea rcx, [rcx - 1]",
            "jrcxz 3f",
            "jmp 2b",
            "3:",
            "sbb {hi}, 0",
            "sbb {w}, {w}",
            x = inout(reg) x.as_ptr() => _,
            m = inout(reg) m.as_ptr() => _,
            o = inout(reg) out.as_mut_ptr() => _,
            hi = inout(reg) hi => _,
            w = out(reg) keep,
            inout("rcx") n => _,
            options(nostack),
        );
    }
    keep
}

/// `t[..2n] = 2·t + Σ a_i²·2^(128·i)` (n = `a.len()`): the doubling of the cross products (an `adox` chain of
/// each word with itself) and the diagonal squares (an `adcx` chain) in one pass. The result is a square below
/// 2^(128·n), so no carry leaves `t`.
#[inline(always)]
fn double_add_diag(t: &mut [u64], a: &[u64]) {
    let n = a.len();
    assert!(n >= 1 && t.len() >= 2 * n);
    // SAFETY: BMI2 and ADX are present (module docs: only reached below `mul`/`sqr`, which assert a Checked
    // backend covering Bmi2Adx). Iteration i reads a[i] and reads and writes t[2i] and t[2i + 1] for i < n: inside
    // the lengths asserted above. The counter steps with `lea`/`jrcxz`, which leave both carry flags alone. Only
    // declared registers are written; the stack is not touched.
    unsafe {
        asm!(
            "xor {x0:e}, {x0:e}",
            "2:",
            "mov rdx, qword ptr [{a}]",
            "mulx {hi}, {lo}, rdx",
            "mov {x0}, qword ptr [{t}]",
            "mov {x1}, qword ptr [{t} + 8]",
            "adox {x0}, {x0}",
            "adox {x1}, {x1}",
            "adcx {x0}, {lo}",
            "adcx {x1}, {hi}",
            "mov qword ptr [{t}], {x0}",
            "mov qword ptr [{t} + 8], {x1}",
            "lea {a}, [{a} + 8]",
            "lea {t}, [{t} + 16]",
            "lea rcx, [rcx - 1]",
            "jrcxz 3f",
            "jmp 2b",
            "3:",
            a = inout(reg) a.as_ptr() => _,
            t = inout(reg) t.as_mut_ptr() => _,
            inout("rcx") n => _,
            x0 = out(reg) _,
            x1 = out(reg) _,
            hi = out(reg) _,
            lo = out(reg) _,
            out("rdx") _,
            options(nostack),
        );
    }
}

/// `out = a·b·R^-1 mod m` (as [`super::mont::MontCtx::mul`]) with mulx/adcx/adox.
pub(super) fn mul(backend: Checked<Backend>, out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64) {
    // The proof that mulx/adcx/adox may run: the asm! block above relies on it.
    assert!(backend.covers(Backend::Bmi2Adx));
    let n = m.len();
    assert!((1..=MAX_LIMBS).contains(&n) && a.len() >= n && b.len() >= n && out.len() >= n);
    let rows = backend.get() == Backend::Bmi2AdxRows;
    // The scratch is zero-filled on every call: size it to the modulus (a 2 KiB fill per product cost about
    // 5% of a 2048-bit private operation).
    match n {
        0..=16 => mul_w::<48>(out, a, b, m, m0inv, rows),
        17..=32 => mul_w::<64>(out, a, b, m, m0inv, rows),
        33..=64 => mul_w::<128>(out, a, b, m, m0inv, rows),
        _ => mul_w::<{ 2 * MAX_LIMBS }>(out, a, b, m, m0inv, rows),
    }
}

/// [`mul`] with a `W`-word scratch, `W ≥ 2n` (and `W ≥ WIN16_LEN` for 16 limbs).
#[inline(always)]
fn mul_w<const W: usize>(out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64, rows: bool) {
    let n = m.len();
    let mut t = [0u64; W];
    match n {
        16 => mul_rows_16(&mut t, a, b),
        24 => mul_rows_24(&mut t, a, b),
        32 => mul_rows_32(&mut t, a, b),
        48 => mul_rows_48(&mut t, a, b),
        64 => mul_rows_64(&mut t, a, b),
        _ => {
            for i in 0..n {
                t[i + n] = addmul_row(&mut t[i..i + n], &b[..n], a[i]);
            }
        }
    }
    reduce(out, &mut t, m, m0inv, rows, false);
    crate::ct::wipe(&mut t[..2 * n]);
}

/// The cross products `Σ_{i<j} a_i·a_j·2^(64·(i + j))` of `a` (n = `a.len()` ≥ 1 limbs) into `t[..2n]`, which
/// must be zero on entry.
///
/// 16, 24 and 32 limbs: one unrolled block. 48 and 64 limbs: split as a = a_lo + a_hi·2^(64h), h = n/2; the
/// cross products of a are those of a_lo, those of a_hi shifted by 2h limbs (the two do not overlap), and the
/// whole product a_lo·a_hi shifted by h limbs, which the unrolled product rows compute. Other sizes take one
/// `mulx` loop per row.
fn sqr_cross(t: &mut [u64], a: &[u64]) {
    let n = a.len();
    assert!(n >= 1 && t.len() >= 2 * n);
    let h = match n {
        16 => return sqr_cross_16(t, a),
        24 => return sqr_cross_24(t, a),
        32 => return sqr_cross_32(t, a),
        48 | 64 => n / 2,
        _ => {
            for i in 0..n - 1 {
                t[i + n] = addmul_row(&mut t[2 * i + 1..i + n], &a[i + 1..n], a[i]);
            }
            return;
        }
    };
    let (lo, hi) = a.split_at(h);
    sqr_cross(&mut t[..2 * h], lo);
    sqr_cross(&mut t[2 * h..2 * n], hi);
    // lo·hi: n limbs, in a zeroed scratch (the product rows start from zero).
    let mut p = [0u64; 64];
    match h {
        16 => mul_rows_16(&mut p, hi, lo),
        24 => mul_rows_24(&mut p, hi, lo),
        _ => mul_rows_32(&mut p, hi, lo),
    }
    // The sum is the cross products of a, below 2^(128·n): no carry leaves t.
    bigint::add_assign(&mut t[h..2 * n], &p[..n]);
    crate::ct::wipe(&mut p[..n]);
}

/// `out = a²·R^-1 mod m` with mulx/adcx/adox: cross products once ([`sqr_cross`]), doubled, plus the
/// diagonal, then the reduction.
pub(super) fn sqr(backend: Checked<Backend>, out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64) {
    sqr_any(backend, out, a, m, m0inv, false);
}

/// `out ≡ a²·R^-1 (mod m)` with `out < R`, for any `a < R` (not only `a < m`): as [`sqr`], but the reduction's
/// final subtraction of m is decided by the top bit of the sum alone (one masked `sbb` pass), not by a comparison
/// with m (a subtraction pass and a selection pass). A chain of these squares stays below R; one product with a
/// value below m brings it below m again.
pub(super) fn sqr_loose(backend: Checked<Backend>, out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64) {
    sqr_any(backend, out, a, m, m0inv, true);
}

#[inline(always)]
fn sqr_any(backend: Checked<Backend>, out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64, loose: bool) {
    assert!(backend.covers(Backend::Bmi2Adx));
    let n = m.len();
    assert!((1..=MAX_LIMBS).contains(&n) && a.len() >= n && out.len() >= n);
    let rows = backend.get() == Backend::Bmi2AdxRows;
    match n {
        0..=16 => sqr_w::<48>(out, a, m, m0inv, rows, loose),
        17..=32 => sqr_w::<64>(out, a, m, m0inv, rows, loose),
        33..=64 => sqr_w::<128>(out, a, m, m0inv, rows, loose),
        _ => sqr_w::<{ 2 * MAX_LIMBS }>(out, a, m, m0inv, rows, loose),
    }
}

/// [`sqr_any`] with a `W`-word scratch, `W ≥ 2n` (and `W ≥ WIN16_LEN` for 16 limbs).
#[inline(always)]
fn sqr_w<const W: usize>(out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64, rows: bool, loose: bool) {
    let n = m.len();
    let mut t = [0u64; W];
    sqr_cross(&mut t[..2 * n], &a[..n]);
    double_add_diag(&mut t[..2 * n], &a[..n]);
    reduce(out, &mut t, m, m0inv, rows, loose);
    crate::ct::wipe(&mut t[..2 * n]);
}

/// `out = table[idx]` (entries of `out.len()` words, a multiple of 4) reading every entry, constant time in
/// `idx`: each entry is masked by a vector comparison of its index with `idx` and OR-ed into accumulators that
/// stay in AVX2 registers (up to 8 of 4 words each, one pass over the table per 32 words of output).
pub(super) fn select(backend: Checked<Backend>, out: &mut [u64], table: &[u64], idx: u64) {
    // The proof that AVX2 may run: `select_avx2` relies on it.
    assert!(backend.covers(Backend::Bmi2Adx));
    let l = out.len();
    assert!(l >= 4 && l.is_multiple_of(4) && table.len().is_multiple_of(l));
    // SAFETY: the Bmi2Adx backend requires AVX2 and the CPU has it (asserted above through the Checked proof).
    unsafe { select_avx2(out, table, idx) }
}

#[target_feature(enable = "avx2")]
fn select_avx2(out: &mut [u64], table: &[u64], idx: u64) {
    let l = out.len();
    let mut c = 0;
    while c < l {
        let k = ((l - c) / 4).min(8);
        match k {
            8 => select_cols::<8>(out, table, idx, c),
            7 => select_cols::<7>(out, table, idx, c),
            6 => select_cols::<6>(out, table, idx, c),
            5 => select_cols::<5>(out, table, idx, c),
            4 => select_cols::<4>(out, table, idx, c),
            3 => select_cols::<3>(out, table, idx, c),
            2 => select_cols::<2>(out, table, idx, c),
            _ => select_cols::<1>(out, table, idx, c),
        }
        c += 4 * k;
    }
}

/// Words `c .. c + 4·K` of [`select`]'s output, with K accumulators.
#[target_feature(enable = "avx2")]
#[inline]
fn select_cols<const K: usize>(out: &mut [u64], table: &[u64], idx: u64, c: usize) {
    use core::arch::x86_64::*;
    let l = out.len();
    assert!(c + 4 * K <= l);
    let want = _mm256_set1_epi64x(idx as i64);
    let mut acc = [_mm256_setzero_si256(); K];
    for (e, entry) in table.chunks_exact(l).enumerate() {
        let m = _mm256_cmpeq_epi64(_mm256_set1_epi64x(e as i64), want);
        let words = &entry[c..c + 4 * K];
        for (j, a) in acc.iter_mut().enumerate() {
            // SAFETY: words 4j .. 4j + 4 of `words` (4·K words long) are in bounds; unaligned loads.
            let v = unsafe { _mm256_loadu_si256(words.as_ptr().add(4 * j).cast()) };
            *a = _mm256_or_si256(*a, _mm256_and_si256(v, m));
        }
    }
    let dst = &mut out[c..c + 4 * K];
    for (j, a) in acc.iter().enumerate() {
        // SAFETY: words 4j .. 4j + 4 of `dst` (4·K words long) are in bounds; unaligned stores.
        unsafe { _mm256_storeu_si256(dst.as_mut_ptr().add(4 * j).cast(), *a) };
    }
}
