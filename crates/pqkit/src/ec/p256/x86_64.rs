//! The `Bmi2Adx` backend: the Montgomery product modulo a 256-bit modulus (p for the field, n for the
//! scalars) with `mulx` (BMI2) and the two carry chains of `adcx`/`adox` (ADX), in `asm!`.
//!
//! ## The products
//! The field product ([`mul_p`]) is specialised to p: the full 512-bit product, then a reduction that needs
//! one `mulx` per round (see its comment). The scalar product is the generic one:
//! word-by-word Montgomery (CIOS), four rows: each row adds a·bᵢ to the 6-word accumulator — the low
//! halves of `mulx`'s products on the overflow-flag chain (`adox`), the high halves on the carry-flag chain
//! (`adcx`), so the two run interleaved — then q = t₀·(−m⁻¹) and adds q·m the same way, which clears the
//! low word, and shifts the accumulator down one word. The result, below 2m, gets one conditional
//! subtraction of m by `cmov` (no branch). Squaring is the same product in both.
//!
//! ## Constant time
//! No branch and no memory index depends on a value.
//!
//! ## Safety
//! `mulx`, `adcx` and `adox` need BMI2 and ADX. [`Adx`] is private to this file and the generic code only
//! ever runs over it inside the entry points at the end of the file, each of which first asserts that its
//! `Checked<Backend>` covers `Backend::Bmi2Adx` (the one dispatch mechanism, [`crate::dispatch`]): so the
//! `asm!` block only ever runs on a CPU that has both.
#![allow(unsafe_code)]

use super::field::{Arith, Fe, Modulus, P};
use super::point::Aff;
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

/// a·b·2^−256 mod p, specialised to p = 2^256 − 2^224 + 2^192 + 2^96 − 1: the 512-bit product (row 0 on one
/// carry chain, rows 1–3 with the low halves on `adox` and the high halves on `adcx`), then four reduction
/// rounds that each add q·p for q the low word (−p⁻¹ ≡ 1 mod 2^64): q·2^32 one word up by a shift pair and
/// q·p₃ three words up by one `mulx` (see `field::reduce_p`, the portable version). Registers only except
/// the loads of a and b; the result, below 2p, gets one conditional subtraction by mask.
#[inline(always)]
fn mul_p(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let (r0, r1, r2, r3, top): (u64, u64, u64, u64, u64);
    // SAFETY: BMI2 and ADX are present (module docs: this code runs only below entry points that asserted a
    // Checked backend covering Bmi2Adx). The block reads 4 words at each of `a` and `b` (valid references),
    // writes only the registers it declares, and does not touch the stack.
    unsafe {
        asm!(
            "mov rdx, [rdi]",
            "mulx r9, r8, [rsi]",
            "mulx r10, rax, [rsi + 8]",
            "add r9, rax",
            "mulx r11, rax, [rsi + 16]",
            "adc r10, rax",
            "mulx r12, rax, [rsi + 24]",
            "adc r11, rax",
            "adc r12, 0",
            "mov rdx, [rdi + 8]",
            "xor eax, eax",
            "mulx rcx, rax, [rsi + 0]",
            "adox r9, rax",
            "adcx r10, rcx",
            "mulx rcx, rax, [rsi + 8]",
            "adox r10, rax",
            "adcx r11, rcx",
            "mulx rcx, rax, [rsi + 16]",
            "adox r11, rax",
            "adcx r12, rcx",
            "mulx r13, rax, [rsi + 24]",
            "adox r12, rax",
            "mov eax, 0",
            "adcx r13, rax",
            "adox r13, rax",
            "mov rdx, [rdi + 16]",
            "xor eax, eax",
            "mulx rcx, rax, [rsi + 0]",
            "adox r10, rax",
            "adcx r11, rcx",
            "mulx rcx, rax, [rsi + 8]",
            "adox r11, rax",
            "adcx r12, rcx",
            "mulx rcx, rax, [rsi + 16]",
            "adox r12, rax",
            "adcx r13, rcx",
            "mulx r14, rax, [rsi + 24]",
            "adox r13, rax",
            "mov eax, 0",
            "adcx r14, rax",
            "adox r14, rax",
            "mov rdx, [rdi + 24]",
            "xor eax, eax",
            "mulx rcx, rax, [rsi + 0]",
            "adox r11, rax",
            "adcx r12, rcx",
            "mulx rcx, rax, [rsi + 8]",
            "adox r12, rax",
            "adcx r13, rcx",
            "mulx rcx, rax, [rsi + 16]",
            "adox r13, rax",
            "adcx r14, rcx",
            "mulx r15, rax, [rsi + 24]",
            "adox r14, rax",
            "mov eax, 0",
            "adcx r15, rax",
            "adox r15, rax",
            "mov rsi, 0xffffffff00000001",
            "xor edi, edi",
            "mov rdx, r8",
            "mov rax, r8",
            "shl rax, 32",
            "mov rcx, r8",
            "shr rcx, 32",
            "add r9, rax",
            "adc r10, rcx",
            "mulx rcx, rax, rsi",
            "adc r11, rax",
            "adc r12, rcx",
            "adc r13, 0",
            "adc r14, 0",
            "adc r15, 0",
            "adc rdi, 0",
            "mov rdx, r9",
            "mov rax, r9",
            "shl rax, 32",
            "mov rcx, r9",
            "shr rcx, 32",
            "add r10, rax",
            "adc r11, rcx",
            "mulx rcx, rax, rsi",
            "adc r12, rax",
            "adc r13, rcx",
            "adc r14, 0",
            "adc r15, 0",
            "adc rdi, 0",
            "mov rdx, r10",
            "mov rax, r10",
            "shl rax, 32",
            "mov rcx, r10",
            "shr rcx, 32",
            "add r11, rax",
            "adc r12, rcx",
            "mulx rcx, rax, rsi",
            "adc r13, rax",
            "adc r14, rcx",
            "adc r15, 0",
            "adc rdi, 0",
            "mov rdx, r11",
            "mov rax, r11",
            "shl rax, 32",
            "mov rcx, r11",
            "shr rcx, 32",
            "add r12, rax",
            "adc r13, rcx",
            "mulx rcx, rax, rsi",
            "adc r14, rax",
            "adc r15, rcx",
            "adc rdi, 0",
            inout("rsi") a.as_ptr() => _,
            inout("rdi") b.as_ptr() => top,
            out("rax") _, out("rcx") _, out("rdx") _,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("r12") r0, out("r13") r1, out("r14") r2, out("r15") r3,
            options(pure, readonly, nostack),
        );
    }
    super::field::sub_if_ge(&[r0, r1, r2, r3], top, &P.m)
}

/// The BMI2/ADX arithmetic.
#[derive(Clone, Copy)]
struct Adx;

impl Arith for Adx {
    #[inline(always)]
    fn mul(a: &Fe, b: &Fe) -> Fe {
        Fe(mul_p(&a.0, &b.0))
    }
    #[inline(always)]
    fn sqr(a: &Fe) -> Fe {
        Fe(mul_p(&a.0, &a.0))
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
    a.invert_with(scalar_mul_adx, |x| scalar_mul_adx(x, x))
}

#[cfg(test)]
mod tests {
    use super::super::field::tests::check_arith;
    use super::*;

    #[test]
    fn adx_matches_bigint() {
        let Ok(backend) = Backend::Bmi2Adx.checked() else { return };
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
}
