//! X25519's variable-base ladder for the `Bmi2Adx` backend: the whole ladder step in one `asm!` block over a
//! state in memory ([`LadderState`]), with the field operations as `asm!` text macros (those of
//! [`ops`](super::ops), and a selection by `cmov` on the mask word) and every product kept below 2p so that
//! additions and subtractions fold once. Runs only below the parent's `x25519` entry point, which asserted the
//! backend's `Checked` proof (see the parent's safety notes).

use super::*;

#[rustfmt::skip]
macro_rules! mux4 {
    // [$d] = [$a] if the flags say "not zero", [$b] if "zero" (a `cmovnz` a word: constant time, the flags
    // come from the mask word, tested once for both selections; `mov` and `cmov` leave them as they are).
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            "mov r8, [rdi + ", $b, "]\n",
            "mov r9, [rdi + ", $b, " + 8]\n",
            "mov r10, [rdi + ", $b, " + 16]\n",
            "mov r11, [rdi + ", $b, " + 24]\n",
            "cmovnz r8, [rdi + ", $a, "]\n",
            "cmovnz r9, [rdi + ", $a, " + 8]\n",
            "cmovnz r10, [rdi + ", $a, " + 16]\n",
            "cmovnz r11, [rdi + ", $a, " + 24]\n",
            "mov [rdi + ", $d, "], r8\n",
            "mov [rdi + ", $d, " + 8], r9\n",
            "mov [rdi + ", $d, " + 16], r10\n",
            "mov [rdi + ", $d, " + 24], r11\n",
        )
    };
}

/// The state of the ladder: 15 field elements of four words, the swap mask and two five-word products, at
/// fixed byte offsets (the literals in [`ladder_step`]'s asm): x1 0, xn 32, zn 64, xm 96, zm 128, sn 160,
/// dn 192, sm 224, dm 256, s 288, d 320, (dmsn − dnsm)² 384, ss 416, dd 448, e 480, t 512, mask 544,
/// dmsn 552 and dnsm 592 (five words each).
///
/// The ladder keeps two points whose difference is P (u-coordinate x1): "n", the one doubled by the last
/// step, which is R_b for the last bit b, and "m", the other one. A step with bit b' doubles R_b' (n if
/// b' = b, else m: the mask) and adds the two; the doubled point becomes the new n, the sum the new m.
#[repr(C, align(64))]
pub(super) struct LadderState(pub(super) [u64; LadderState::WORDS]);

impl LadderState {
    /// The state's length in words.
    pub(super) const WORDS: usize = 79;
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

/// One ladder step on `st` (see [`LadderState`]), with `st.0[MASK]` nonzero (all ones) to double m, zero to
/// double n.
///
/// Doubling of (x : z) with s = x + z, d = x − z: x' = s²·d², z' = e·(d² + 121666·e) where e = s² − d² = 4xz
/// (121666 = (A + 2)/4). Differential addition of n and m (difference P): x' = (dm·sn + sm·dn)²,
/// z' = x1·(dm·sn − sm·dn)², symmetric in n and m, so only the doubling's input is selected.
#[inline(always)]
pub(super) fn ladder_step(st: &mut LadderState) {
    // SAFETY: BMI2 and ADX are present (this runs only below `x25519`, which asserted a Checked backend
    // covering Bmi2Adx). The block reads and writes only the 79 words of `st` (offsets below 632 bytes from
    // rdi, which holds its address), writes only the registers it declares, and does not use the stack.
    unsafe {
        asm!(
            sub4!("256", "96", "128"),  // dm = xm − zm
            add4!("160", "32", "64"),   // sn = xn + zn
            sub4!("192", "32", "64"),   // dn = xn − zn
            add4!("224", "96", "128"),  // sm = xm + zm
            "cmp qword ptr [rdi + 544], 0",
            mux4!("320", "256", "192"), // d = mask ? dm : dn
            mux4!("288", "224", "160"), // s = mask ? sm : sn
            mul5!("592", "224", "192"), // dnsm = sm·dn (five words)
            mul5!("552", "256", "160"), // dmsn = dm·sn (five words)
            sqr4!("448", "320"),        // dd = d²
            sub5!("480", "552", "592"), // dmsn − dnsm (in e's place until e is formed)
            add5!("512", "552", "592"), // t = dmsn + dnsm
            sqr4!("416", "288"),        // ss = s²
            sqr4!("384", "480"),        // (dmsn − dnsm)²
            sub4!("480", "416", "448"), // e = ss − dd
            sqr4!("96", "512"),         // xm' = t²
            cmadd4!("512", "480", "121666", "448"), // dd + 121666·e
            mul4!("32", "416", "448"),  // xn' = ss·dd
            mul4!("64", "480", "512"),  // zn' = e·(dd + 121666·e)
            mul4!("128", "384", "0"),   // zm' = x1·(dmsn − dnsm)²
            in("rdi") st.0.as_mut_ptr(),
            out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _,
            options(nostack),
        );
    }
}

/// The doubling alone on n (`st.0[MASK]` unused): xn' = ss·dd, zn' = e·(dd + 121666·e) with s = xn + zn,
/// d = xn − zn, as in [`ladder_step`], for the ladder's last steps when the scalar's low bits are zero.
#[inline(always)]
pub(super) fn double_step(st: &mut LadderState) {
    // SAFETY: BMI2 and ADX are present (this runs only below `x25519`, which asserted a Checked backend
    // covering Bmi2Adx). The block reads and writes only the 79 words of `st` (offsets below 632 bytes from
    // rdi, which holds its address), writes only the registers it declares, and does not use the stack.
    unsafe {
        asm!(
            add4!("288", "32", "64"),   // s = xn + zn
            sub4!("320", "32", "64"),   // d = xn − zn
            sqr4!("416", "288"),        // ss = s²
            sqr4!("448", "320"),        // dd = d²
            sub4!("480", "416", "448"), // e = ss − dd
            mul4!("32", "416", "448"),  // xn' = ss·dd
            cmadd4!("512", "480", "121666", "448"), // dd + 121666·e
            mul4!("64", "480", "512"),  // zn' = e·(dd + 121666·e)
            in("rdi") st.0.as_mut_ptr(),
            out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _,
            options(nostack),
        );
    }
}

/// X25519(k, u): the ladder over bits 254 down to 0, each step one [`ladder_step`]. With `CLAMPED` (for
/// RFC 7748 scalars, whose bit 254 is set and bits 0–2 are zero) the first step is the doubling of P alone
/// (R1 = 2P, R0 = P), and the ladder stops after bit 3 and doubles R0 three times with [`double_step`], as the
/// last three steps would (their additions only feed R1, which the result does not use). Constant time: the
/// bits only make the masks.
pub(super) fn ladder_asm<const CLAMPED: bool>(k: &[u8; 32], u: &[u8; 32]) -> [u8; 32] {
    let mut st = LadderState([0; LadderState::WORDS]);
    st.set(LadderState::X1, &Fe64::from_bytes(u));
    st.set(LadderState::XN, &Fe64::ONE); // n = R0 = O = (1 : 0)
    st.set(LadderState::XM, &Fe64::from_bytes(u)); // m = R1 = P = (x1 : 1)
    st.set(LadderState::ZM, &Fe64::ONE);
    let low = if CLAMPED { 3 } else { 0 };
    let mut last = 0u64;
    let mut top = 255;
    if CLAMPED {
        // Bit 254 is set: its step would leave n = R1 = 2P and m = R0 = P, so double P alone.
        st.set(LadderState::XN, &Fe64::from_bytes(u));
        st.set(LadderState::ZN, &Fe64::ONE);
        double_step(&mut st);
        last = 1;
        top = 254;
    }
    for t in (low..top).rev() {
        let bit = ((k[t >> 3] >> (t & 7)) & 1) as u64;
        st.0[LadderState::MASK] = super::super::field::mask_from_bit(bit ^ last);
        ladder_step(&mut st);
        last = bit;
    }
    // R0 is n if the last bit was 0, else m.
    let mask = super::super::field::mask_from_bit(last);
    let mut x = Fe64::select(&st.get(LadderState::XM), &st.get(LadderState::XN), mask);
    let mut z = Fe64::select(&st.get(LadderState::ZM), &st.get(LadderState::ZN), mask);
    if CLAMPED {
        st.set(LadderState::XN, &x);
        st.set(LadderState::ZN, &z);
        for _ in 0..3 {
            double_step(&mut st);
        }
        x = st.get(LadderState::XN);
        z = st.get(LadderState::ZN);
    }
    crate::ct::wipe(&mut st.0);
    x.mul(&super::super::field::invert(&z)).to_bytes()
}
