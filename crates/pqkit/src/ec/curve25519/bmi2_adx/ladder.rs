//! X25519's variable-base ladder for the `Bmi2Adx` backend: the whole ladder step in one `asm!` block over a
//! state in memory ([`LadderState`]), with the field operations as `asm!` text macros (product, square, small
//! product, addition, subtraction, selection by mask) and every product kept below 2p so that additions and
//! subtractions fold once. Runs only below the parent's `x25519` entry point, which asserted the backend's
//! `Checked` proof (see the parent's safety notes).

use super::*;

/// The text of `asm!` operations on field elements held in the ladder state (a block of memory whose
/// address is in `rdi`; the arguments are byte offsets into it). Every operation loads its inputs from the
/// state and stores its result there; `rsi` holds zero while it runs. Registers used: `rax`, `rcx`, `rdx`,
/// `rsi`, `r8`–`r15`.
///
/// Bounds (p = 2^255 − 19): `mul4`, `sqr4` and `cmul4` accept any inputs below 2^256 and give results
/// below 2^255 + 2^13 < 2p; `add4` and `sub4` accept a first operand below 2^256 and a second one below
/// 2p and give a result below 2^256 (a carry or borrow out is folded once, as ±38, and that cannot carry or
/// borrow again: for `add4`, a + b − 2^256 < 2^256 − 38; for `sub4`, a − b + 2^256 > 38). All are
/// congruent modulo p to the exact result.
#[rustfmt::skip]
macro_rules! fold_store {
    // r8..r11 plus r12·2^256 (r12 < 2^63), reduced below 2^255 + 2^13 by folding the bits from 255 up
    // (2^255 = 19) once, and stored at `$d`.
    ($d:literal) => {
        concat!(
            "shld r12, r11, 1\n",
            "btr r11, 63\n",
            "imul r12, r12, 19\n",
            "add r8, r12\n",
            "adc r9, rsi\n",
            "adc r10, rsi\n",
            "adc r11, rsi\n",
            "mov [rdi + ", $d, "], r8\n",
            "mov [rdi + ", $d, " + 8], r9\n",
            "mov [rdi + ", $d, " + 16], r10\n",
            "mov [rdi + ", $d, " + 24], r11\n",
        )
    };
}

#[rustfmt::skip]
macro_rules! reduce_store {
    // The 512-bit value r8..r15: r8..r11 += 38·(r12..r15) (2^256 = 38 mod p), on the two carry chains,
    // then `fold_store`.
    ($d:literal) => {
        concat!(
            "mov edx, 38\n",
            "xor esi, esi\n",
            "mulx rcx, rax, r12\n",
            "adcx r8, rax\n",
            "adox r9, rcx\n",
            "mulx rcx, rax, r13\n",
            "adcx r9, rax\n",
            "adox r10, rcx\n",
            "mulx rcx, rax, r14\n",
            "adcx r10, rax\n",
            "adox r11, rcx\n",
            "mulx r12, rax, r15\n",
            "adcx r11, rax\n",
            "adox r12, rsi\n",
            "adcx r12, rsi\n",
            fold_store!($d),
        )
    };
}

#[rustfmt::skip]
macro_rules! mul_row {
    // r(k)..r(k+4) += a·b[k] where the words of a are at `$a`, with b[k] already in rdx; `$lo`..`$hi` name
    // the five accumulator registers (the last one is fresh: zeroed here).
    ($a:literal, $r0:literal, $r1:literal, $r2:literal, $r3:literal, $r4:literal) => {
        concat!(
            "xor ", $r4, ", ", $r4, "\n",
            "mulx rcx, rax, [rdi + ", $a, "]\n",
            "adox ", $r0, ", rax\n",
            "adcx ", $r1, ", rcx\n",
            "mulx rcx, rax, [rdi + ", $a, " + 8]\n",
            "adox ", $r1, ", rax\n",
            "adcx ", $r2, ", rcx\n",
            "mulx rcx, rax, [rdi + ", $a, " + 16]\n",
            "adox ", $r2, ", rax\n",
            "adcx ", $r3, ", rcx\n",
            "mulx rcx, rax, [rdi + ", $a, " + 24]\n",
            "adox ", $r3, ", rax\n",
            "adcx ", $r4, ", rcx\n",
            "mov eax, 0\n",
            "adox ", $r4, ", rax\n",
        )
    };
}

#[rustfmt::skip]
macro_rules! mul4 {
    // [$d] = [$a]·[$b]: the 4×4 schoolbook product row by row (low halves on the OF chain, high halves on
    // the CF chain), then `reduce_store`.
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            "mov rdx, [rdi + ", $b, "]\n",
            "mulx r9, r8, [rdi + ", $a, "]\n",
            "mulx r10, rax, [rdi + ", $a, " + 8]\n",
            "add r9, rax\n",
            "mulx r11, rax, [rdi + ", $a, " + 16]\n",
            "adc r10, rax\n",
            "mulx r12, rax, [rdi + ", $a, " + 24]\n",
            "adc r11, rax\n",
            "adc r12, 0\n",
            "mov rdx, [rdi + ", $b, " + 8]\n",
            mul_row!($a, "r9", "r10", "r11", "r12", "r13"),
            "mov rdx, [rdi + ", $b, " + 16]\n",
            mul_row!($a, "r10", "r11", "r12", "r13", "r14"),
            "mov rdx, [rdi + ", $b, " + 24]\n",
            mul_row!($a, "r11", "r12", "r13", "r14", "r15"),
            reduce_store!($d),
        )
    };
}

#[rustfmt::skip]
macro_rules! sqr4 {
    // [$d] = [$a]²: the six cross products once, doubled, plus the four squares; then `reduce_store`.
    ($d:literal, $a:literal) => {
        concat!(
            "mov rdx, [rdi + ", $a, "]\n",
            "mulx r10, r9, [rdi + ", $a, " + 8]\n",
            "mulx r11, rax, [rdi + ", $a, " + 16]\n",
            "add r10, rax\n",
            "mulx r12, rax, [rdi + ", $a, " + 24]\n",
            "adc r11, rax\n",
            "mov rdx, [rdi + ", $a, " + 8]\n",
            "mulx r13, rax, [rdi + ", $a, " + 24]\n",
            "adc r12, rax\n",
            "adc r13, 0\n",
            "mov rdx, [rdi + ", $a, " + 16]\n",
            "mulx r14, rax, [rdi + ", $a, " + 24]\n",
            "add r13, rax\n",
            "adc r14, 0\n",
            "mov rdx, [rdi + ", $a, " + 8]\n",
            "mulx rcx, rax, [rdi + ", $a, " + 16]\n",
            "add r11, rax\n",
            "adc r12, rcx\n",
            "adc r13, 0\n",
            "adc r14, 0\n",
            "xor r15d, r15d\n",
            "adcx r9, r9\n",
            "adcx r10, r10\n",
            "adcx r11, r11\n",
            "adcx r12, r12\n",
            "adcx r13, r13\n",
            "adcx r14, r14\n",
            "adcx r15, r15\n",
            "mov rdx, [rdi + ", $a, "]\n",
            "mulx rcx, r8, rdx\n",
            "adox r9, rcx\n",
            "mov rdx, [rdi + ", $a, " + 8]\n",
            "mulx rcx, rax, rdx\n",
            "adox r10, rax\n",
            "adox r11, rcx\n",
            "mov rdx, [rdi + ", $a, " + 16]\n",
            "mulx rcx, rax, rdx\n",
            "adox r12, rax\n",
            "adox r13, rcx\n",
            "mov rdx, [rdi + ", $a, " + 24]\n",
            "mulx rcx, rax, rdx\n",
            "adox r14, rax\n",
            "adox r15, rcx\n",
            reduce_store!($d),
        )
    };
}

#[rustfmt::skip]
macro_rules! cmul4 {
    // [$d] = [$a]·$k for a constant $k < 2^32, then the fold of `fold_store`.
    ($d:literal, $a:literal, $k:literal) => {
        concat!(
            "xor esi, esi\n",
            "mov edx, ", $k, "\n",
            "mulx r9, r8, [rdi + ", $a, "]\n",
            "mulx r10, rax, [rdi + ", $a, " + 8]\n",
            "add r9, rax\n",
            "mulx r11, rax, [rdi + ", $a, " + 16]\n",
            "adc r10, rax\n",
            "mulx r12, rax, [rdi + ", $a, " + 24]\n",
            "adc r11, rax\n",
            "adc r12, rsi\n",
            fold_store!($d),
        )
    };
}

#[rustfmt::skip]
macro_rules! add4 {
    // [$d] = [$a] + [$b]: a carry out (2^256 = 38) adds 38, which cannot carry again for [$b] below 2p.
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            "mov r8, [rdi + ", $a, "]\n",
            "mov r9, [rdi + ", $a, " + 8]\n",
            "mov r10, [rdi + ", $a, " + 16]\n",
            "mov r11, [rdi + ", $a, " + 24]\n",
            "add r8, [rdi + ", $b, "]\n",
            "adc r9, [rdi + ", $b, " + 8]\n",
            "adc r10, [rdi + ", $b, " + 16]\n",
            "adc r11, [rdi + ", $b, " + 24]\n",
            "sbb rax, rax\n",
            "and eax, 38\n",
            "add r8, rax\n",
            "adc r9, 0\n",
            "adc r10, 0\n",
            "adc r11, 0\n",
            "mov [rdi + ", $d, "], r8\n",
            "mov [rdi + ", $d, " + 8], r9\n",
            "mov [rdi + ", $d, " + 16], r10\n",
            "mov [rdi + ", $d, " + 24], r11\n",
        )
    };
}

#[rustfmt::skip]
macro_rules! sub4 {
    // [$d] = [$a] − [$b]: a borrow (2^256 = 38) takes 38 away, which cannot borrow again for a
    // subtrahend below 2p.
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            "mov r8, [rdi + ", $a, "]\n",
            "mov r9, [rdi + ", $a, " + 8]\n",
            "mov r10, [rdi + ", $a, " + 16]\n",
            "mov r11, [rdi + ", $a, " + 24]\n",
            "sub r8, [rdi + ", $b, "]\n",
            "sbb r9, [rdi + ", $b, " + 8]\n",
            "sbb r10, [rdi + ", $b, " + 16]\n",
            "sbb r11, [rdi + ", $b, " + 24]\n",
            "sbb rax, rax\n",
            "and eax, 38\n",
            "sub r8, rax\n",
            "sbb r9, 0\n",
            "sbb r10, 0\n",
            "sbb r11, 0\n",
            "mov [rdi + ", $d, "], r8\n",
            "mov [rdi + ", $d, " + 8], r9\n",
            "mov [rdi + ", $d, " + 16], r10\n",
            "mov [rdi + ", $d, " + 24], r11\n",
        )
    };
}

#[rustfmt::skip]
macro_rules! mux4 {
    // [$d] = [$a] where the mask word at MASK is all ones, [$b] where it is zero: (a ⊕ b) ∧ mask ⊕ b.
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            "mov rcx, [rdi + 544]\n",
            "mov r8, [rdi + ", $a, "]\n",
            "mov r9, [rdi + ", $a, " + 8]\n",
            "mov r10, [rdi + ", $a, " + 16]\n",
            "mov r11, [rdi + ", $a, " + 24]\n",
            "mov r12, [rdi + ", $b, "]\n",
            "mov r13, [rdi + ", $b, " + 8]\n",
            "mov r14, [rdi + ", $b, " + 16]\n",
            "mov r15, [rdi + ", $b, " + 24]\n",
            "xor r8, r12\n",
            "xor r9, r13\n",
            "xor r10, r14\n",
            "xor r11, r15\n",
            "and r8, rcx\n",
            "and r9, rcx\n",
            "and r10, rcx\n",
            "and r11, rcx\n",
            "xor r8, r12\n",
            "xor r9, r13\n",
            "xor r10, r14\n",
            "xor r11, r15\n",
            "mov [rdi + ", $d, "], r8\n",
            "mov [rdi + ", $d, " + 8], r9\n",
            "mov [rdi + ", $d, " + 16], r10\n",
            "mov [rdi + ", $d, " + 24], r11\n",
        )
    };
}

/// The state of the ladder: 17 field elements and the swap mask, at fixed byte offsets (the literals in
/// [`ladder_step`]'s asm): x1 0, xn 32, zn 64, xm 96, zm 128, sn 160, dn 192, sm 224, dm 256, s 288, d 320,
/// dmsn 352, dnsm 384, ss 416, dd 448, e 480, t 512, mask 544.
///
/// The ladder keeps two points whose difference is P (u-coordinate x1): "n", the one doubled by the last
/// step, which is R_b for the last bit b, and "m", the other one. A step with bit b' doubles R_b' (n if
/// b' = b, else m: the mask) and adds the two; the doubled point becomes the new n, the sum the new m.
#[repr(C, align(64))]
pub(super) struct LadderState(pub(super) [u64; 69]);

impl LadderState {
    pub(super) const X1: usize = 0;
    pub(super) const XN: usize = 4;
    pub(super) const ZN: usize = 8;
    pub(super) const XM: usize = 12;
    pub(super) const ZM: usize = 16;
    pub(super) const MASK: usize = 68;

    pub(super) fn get(&self, at: usize) -> Fe64 {
        Fe64([self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3]])
    }

    pub(super) fn set(&mut self, at: usize, v: &Fe64) {
        self.0[at..at + 4].copy_from_slice(&v.0);
    }
}

/// One ladder step on `st` (see [`LadderState`]), with `st.0[MASK]` all ones to double m, zero to double n.
///
/// Doubling of (x : z) with s = x + z, d = x − z: x' = s²·d², z' = e·(d² + 121666·e) where e = s² − d² = 4xz
/// (121666 = (A + 2)/4). Differential addition of n and m (difference P): x' = (dm·sn + sm·dn)²,
/// z' = x1·(dm·sn − sm·dn)², symmetric in n and m, so only the doubling's input is selected.
#[inline(always)]
pub(super) fn ladder_step(st: &mut LadderState) {
    // SAFETY: BMI2 and ADX are present (this runs only below `x25519`, which asserted a Checked backend
    // covering Bmi2Adx). The block reads and writes only the 69 words of `st` (offsets below 552 bytes from
    // rdi, which holds its address), writes only the registers it declares, and does not use the stack.
    unsafe {
        asm!(
            add4!("160", "32", "64"),   // sn = xn + zn
            sub4!("192", "32", "64"),   // dn = xn − zn
            add4!("224", "96", "128"),  // sm = xm + zm
            sub4!("256", "96", "128"),  // dm = xm − zm
            mux4!("288", "224", "160"), // s = mask ? sm : sn
            mux4!("320", "256", "192"), // d = mask ? dm : dn
            mul4!("352", "256", "160"), // dmsn = dm·sn
            mul4!("384", "224", "192"), // dnsm = sm·dn
            sqr4!("416", "288"),        // ss = s²
            sqr4!("448", "320"),        // dd = d²
            add4!("512", "352", "384"), // t = dmsn + dnsm
            sub4!("352", "352", "384"), // dmsn − dnsm
            sub4!("480", "416", "448"), // e = ss − dd
            sqr4!("96", "512"),         // xm' = t²
            sqr4!("384", "352"),        // (dmsn − dnsm)²
            mul4!("32", "416", "448"),  // xn' = ss·dd
            cmul4!("512", "480", "121666"), // 121666·e
            add4!("512", "512", "448"), // dd + 121666·e
            mul4!("128", "384", "0"),   // zm' = x1·(dmsn − dnsm)²
            mul4!("64", "480", "512"),  // zn' = e·(dd + 121666·e)
            in("rdi") st.0.as_mut_ptr(),
            out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _,
            options(nostack),
        );
    }
}

/// X25519(k, u) for a clamped `k`: the ladder over bits 254 down to 0, each step one [`ladder_step`].
/// Constant time: the bits only make the mask.
pub(super) fn ladder_asm(k: &[u8; 32], u: &[u8; 32]) -> [u8; 32] {
    let mut st = LadderState([0; 69]);
    st.set(LadderState::X1, &Fe64::from_bytes(u));
    st.set(LadderState::XN, &Fe64::ONE); // n = R0 = O = (1 : 0)
    st.set(LadderState::XM, &Fe64::from_bytes(u)); // m = R1 = P = (x1 : 1)
    st.set(LadderState::ZM, &Fe64::ONE);
    let mut last = 0u64;
    for t in (0..255).rev() {
        let bit = ((k[t >> 3] >> (t & 7)) & 1) as u64;
        st.0[LadderState::MASK] = super::super::field::mask_from_bit(bit ^ last);
        ladder_step(&mut st);
        last = bit;
    }
    // R0 is n if the last bit was 0, else m.
    let mask = super::super::field::mask_from_bit(last);
    let x = Fe64::select(&st.get(LadderState::XM), &st.get(LadderState::XN), mask);
    let z = Fe64::select(&st.get(LadderState::ZM), &st.get(LadderState::ZN), mask);
    crate::ct::wipe(&mut st.0);
    x.mul(&super::super::field::invert(&z)).to_bytes()
}
