//! The fixed-base multiplication `s·B` for the `Bmi2Adx` backend: the signed radix-16 digits and masked
//! look-ups of [`edwards::mul_base_with`], with each mixed addition of a table entry (the accumulator in extended
//! coordinates plus an affine Niels point, back to extended coordinates: 7 products) done as one `asm!`
//! block over a state in memory ([`CombState`]), with the field operations of [`ops`](super::ops): no
//! spills or moves between the operations, and additions and subtractions with a single fold because every
//! product is kept below 2p. With a second table for the odd radix-16 digits, the comb needs no doublings.
//! The look-ups are those of the generic code. Runs only below the parent's `mul_base`, which asserted the
//! backend's `Checked` proof (see the parent's safety notes).

use super::*;

/// The state of one mixed addition: the accumulator (X, Y, Z, T) at byte offsets 0, 32, 64, 96, the table
/// entry (y + x, y − x, 2dxy) at 128, 160, 192 (the `repr(C)` order of [`AffineNiels`]), and the
/// temporaries of [`madd`] from 224 up (the literals of its asm).
#[repr(C, align(64))]
pub(super) struct CombState(pub(super) [u64; 68]);

impl CombState {
    const X: usize = 0;
    const Y: usize = 4;
    const Z: usize = 8;
    const T: usize = 12;
    const QP: usize = 16;
    const QM: usize = 20;
    const QT: usize = 24;

    fn get(&self, at: usize) -> Fe64 {
        Fe64([self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3]])
    }

    fn set(&mut self, at: usize, v: &Fe64) {
        self.0[at..at + 4].copy_from_slice(&v.0);
    }

    pub(super) fn point(&self) -> Point<Fe64> {
        Point { x: self.get(Self::X), y: self.get(Self::Y), z: self.get(Self::Z), t: self.get(Self::T) }
    }

    /// Sets the accumulator, each coordinate reduced below p ([`madd`] needs X and Z below 2p; an
    /// `Fe64` may be anything below 2^256).
    pub(super) fn set_point(&mut self, p: &Point<Fe64>) {
        let reduced = |v: &Fe64| Fe64::from_bytes(&v.to_bytes());
        self.set(Self::X, &reduced(&p.x));
        self.set(Self::Y, &reduced(&p.y));
        self.set(Self::Z, &reduced(&p.z));
        self.set(Self::T, &reduced(&p.t));
    }

    /// Sets the entry to add (any values below 2^256: [`madd`] only multiplies them).
    pub(super) fn set_entry(&mut self, q: &AffineNiels<Fe64>) {
        self.set(Self::QP, &q.ypx);
        self.set(Self::QM, &q.ymx);
        self.set(Self::QT, &q.xy2d);
    }
}

/// The accumulator plus the entry, in place (the formulas of `Point::add_affine` and
/// `Completed::to_extended`): a = (Y − X)(y − x), b = (Y + X)(y + x), c = T·2dxy, d = 2Z; e = b − a,
/// f = d − c, g = d + c, h = b + a; (X, Y, Z, T) = (ef, gh, fg, eh).
///
/// Bounds: the accumulator's coordinates are below 2p (reduced by [`CombState::set_point`], or products of
/// the previous addition), so every `add4`/`sub4` has a second operand below 2p (X, Z, a, c) and every
/// product input is below 2^256, as [`ops`](super::ops) requires; the new coordinates are products again,
/// below 2p.
#[inline(always)]
pub(super) fn madd(st: &mut CombState) {
    // SAFETY: BMI2 and ADX are present (this runs only below the parent's `mul_base`, which asserted a
    // Checked backend covering Bmi2Adx). The block reads and writes only the 68 words of `st` (offsets below
    // 544 bytes from rdi, which holds its address), writes only the registers it declares, and does not use
    // the stack.
    unsafe {
        asm!(
            sub4!("224", "32", "0"),    // Y − X
            add4!("256", "32", "0"),    // Y + X
            mul4!("288", "224", "160"), // a = (Y − X)(y − x)
            mul4!("320", "256", "128"), // b = (Y + X)(y + x)
            mul4!("352", "96", "192"),  // c = T·2dxy
            add4!("384", "64", "64"),   // d = 2Z
            sub4!("416", "320", "288"), // e = b − a
            add4!("512", "320", "288"), // h = b + a
            sub4!("448", "384", "352"), // f = d − c
            add4!("480", "384", "352"), // g = d + c
            mul4!("0", "416", "448"),   // X = ef
            mul4!("32", "480", "512"),  // Y = gh
            mul4!("64", "448", "480"),  // Z = fg
            mul4!("96", "416", "512"),  // T = eh
            in("rdi") st.0.as_mut_ptr(),
            out("rax") _, out("rcx") _, out("rdx") _, out("rsi") _,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _,
            options(nostack),
        );
    }
}

/// `s·B` for a secret `s` < 2^255 with `lookup` choosing each table entry (the contract of
/// [`edwards::mul_base_with`]): the signed radix-16 digits d[i] of `s`, each added as d[i]·16^i·B from row
/// i/2 of `BASE_TABLE` (even i) or `BASE_TABLE_ODD` (odd i), so that no doubling is needed; 63 additions,
/// each one [`madd`]. Constant time: the digits only reach the look-ups.
pub(super) fn mul_base_comb<L>(s: &[u8; 32], lookup: L) -> Point<Fe64>
where
    L: Fn(&[AffineNiels<Fe64>; 8], i8) -> AffineNiels<Fe64>,
{
    debug_assert!(s[31] < 0x80);
    let mut digits = edwards::radix16(s);
    let (even, odd) = (Fe64::base_table(), &BASE_TABLE_ODD);
    let row = |i: usize| if i.is_multiple_of(2) { &even[i / 2] } else { &odd[i / 2] };
    let mut st = CombState([0; 68]);
    // The first entry becomes the accumulator directly, and each entry is looked up one addition ahead, so
    // its loads run while the previous addition's products do.
    st.set_point(&lookup(row(0), digits[0]).to_extended());
    let mut next = lookup(row(1), digits[1]);
    for i in 1..64 {
        let cur = next;
        if i < 63 {
            next = lookup(row(i + 1), digits[i + 1]);
        }
        st.set_entry(&cur);
        madd(&mut st);
    }
    let out = st.point();
    crate::ct::wipe(&mut st.0);
    crate::ct::wipe(&mut digits);
    out
}
