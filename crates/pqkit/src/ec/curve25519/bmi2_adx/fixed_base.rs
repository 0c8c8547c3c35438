//! The fixed-base multiplication `s·B` for the `Bmi2Adx` backend: the signed radix-16 digits and masked
//! look-ups of [`edwards::mul_base_with`], with each mixed addition of a table entry (the accumulator in extended
//! coordinates plus an affine Niels point, back to extended coordinates: 7 products) done as one `asm!`
//! block over a state in memory ([`CombState`]), with the field operations of [`ops`](super::ops): no
//! spills or moves between the operations, and additions and subtractions with a single fold because every
//! product is kept below 2p. With a second table for the odd radix-16 digits, the comb needs no doublings.
//! The look-ups are those of the generic code. With AVX2 ([`mul_base_comb_avx2`]) the comb takes signed
//! radix-32 digits from a table of 16 entries a row (51 additions instead of 63), each look-up fused with its
//! addition in one block. Runs only below the parent's `mul_base`, which asserted the
//! backend's `Checked` proof (see the parent's safety notes).

use super::*;

/// The state of one mixed addition: the accumulator (X, Y, Z, T) at byte offsets 0, 32, 64, 96, the table
/// entry (y + x, y − x, 2dxy) at 128, 160, 192 (the `repr(C)` order of [`AffineNiels`]), and the
/// temporaries of [`madd`] from 224 up (the literals of its asm); for [`comb_step_avx2`], the next digit's
/// absolute value at 544 and its sign mask (all ones for a negative digit) at 552, and the sign mask of the
/// digit of the entry being added at 560.
#[repr(C, align(64))]
pub(super) struct CombState(pub(super) [u64; 72]);

impl CombState {
    const X: usize = 0;
    const Y: usize = 4;
    const Z: usize = 8;
    const T: usize = 12;
    const QP: usize = 16;
    const QM: usize = 20;
    const QT: usize = 24;
    const ABS: usize = 68;
    const SIGN: usize = 69;
    const CUR_SIGN: usize = 70;

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

    /// Sets the digit d in \[−16, 16\] that [`comb_step_avx2`] looks up for the next step: |d| and the mask of
    /// d < 0, by arithmetic only.
    pub(super) fn set_digit(&mut self, d: i8) {
        let d = d as i64;
        let neg = d >> 63; // all ones if d < 0
        self.0[Self::ABS] = ((d ^ neg) - neg) as u64;
        self.0[Self::SIGN] = neg as u64;
    }

    /// Sets the entry to add in the first [`comb_step_avx2`]: `q` as it is (any negation already applied),
    /// so that step exchanges nothing.
    pub(super) fn set_first_entry(&mut self, q: &AffineNiels<Fe64>) {
        self.set_entry(q);
        self.0[Self::CUR_SIGN] = 0;
    }

    /// The entry that [`comb_step_avx2`] left for the next step, as the point it stands for (the negation
    /// of 2dxy that its sign mask stands for applied): for the tests.
    #[cfg(test)]
    pub(super) fn pending_entry(&self) -> AffineNiels<Fe64> {
        let t = self.get(Self::QT);
        let neg = super::super::field::mask_from_bit(self.0[Self::CUR_SIGN] & 1);
        AffineNiels { ypx: self.get(Self::QP), ymx: self.get(Self::QM), xy2d: Fe64::select(&t.neg(), &t, neg) }
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
    let mut st = CombState([0; 72]);
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

/// One step of the comb with the look-up in AVX2, as one `asm!` block, software-pipelined: the entry in the
/// state is added to the accumulator as by [`madd`], while the look-up of the next step's entry, `d·row[0]`
/// for the digit d set by [`CombState::set_digit`], runs on the vector units, its result stored in the
/// state as the entry of the next step at the end; and the N·96 bytes at `prefetch` (the row after) are
/// requested into the cache first. The look-up does not depend on the accumulator, so it no longer delays
/// the first products of the addition.
///
/// The look-up reads every one of the row's N entries as three 256-bit words and keeps each by a vector
/// mask from a comparison of |d| with a counter (`vpcmpeqq`/`vpand`/`vpor`), starting from the identity
/// (1, 1, 0) masked by |d| = 0; it swaps y + x and y − x by the sign mask (exclusive-or by mask). The
/// negation of 2dxy is not computed: for −Q the addition's c = T·2dxy changes sign, which exchanges
/// f = d − c and g = d + c, so the next block exchanges f and g by the same mask (moved to 560 here).
/// Constant time: the addresses read, the instructions run and the loop counts do not depend on d; d only
/// meets comparisons, masks and exclusive-ors.
///
/// # Safety
/// The CPU must have BMI2, ADX and AVX2 (callers hold a `Checked<Backend>` covering `Bmi2AdxAvx2`), and
/// `prefetch` must point into (or one past) an allocated object (prefetches never fault, but the pointer
/// arithmetic must stay in bounds).
#[inline(always)]
pub(super) unsafe fn comb_step_avx2<const N: usize>(
    st: &mut CombState,
    next_row: &[AffineNiels<Fe64>; N],
    prefetch: *const u8,
) {
    const { assert!(core::mem::size_of::<AffineNiels<Fe64>>() == 96 && N > 0 && N.is_multiple_of(2)) };
    // SAFETY: BMI2, ADX and AVX2 are present (the caller's contract). The block reads the N·96 bytes of
    // `next_row` (N entries of 96 bytes: `repr(C)` of three `repr(transparent)` 32-byte elements), prefetches
    // (which never faults), reads and writes only the 72 words of `st` (offsets below 576 bytes from rdi,
    // which holds its 64-byte aligned address, so the 32-byte stores at 128, 160 and 192 are aligned),
    // declares every register it changes (clobber_abi("C") covers the vector registers, whose upper halves
    // vzeroupper clears, and the caller-saved general ones; r12-r15 are listed), and does not use the stack.
    unsafe {
        asm!(
            // The row after next: N·96/64 = 1.5·N cache lines.
            "3:",
            "prefetcht0 [rax]",
            "add rax, 64",
            "dec edx",
            "jnz 3b",
            // The next step's look-up (see `lookup_avx2` in the parent), kept in ymm0-ymm2 until the end.
            "vpbroadcastq ymm3, [rdi + 544]", // |d| in every lane
            "vpxor xmm4, xmm4, xmm4",         // the counter j
            "vpcmpeqq ymm5, ymm5, ymm5",      // −1 in every lane
            "vpcmpeqq ymm6, ymm3, ymm4",      // |d| = 0
            "vpsrlq ymm7, ymm6, 63",          // 1 in every lane where |d| = 0
            "vpblendd ymm0, ymm4, ymm7, 3",   // (1, 0, 0, 0) where |d| = 0: y + x = y − x = 1
            "vmovdqa ymm1, ymm0",
            "vpxor xmm2, xmm2, xmm2",         // 2dxy = 0
            "2:",
            "vpsubq ymm4, ymm4, ymm5",        // j += 1
            "vpcmpeqq ymm6, ymm3, ymm4",      // |d| = j
            "vpand ymm8, ymm6, [rsi]",
            "vpand ymm9, ymm6, [rsi + 32]",
            "vpand ymm10, ymm6, [rsi + 64]",
            "vpor ymm0, ymm0, ymm8",
            "vpor ymm1, ymm1, ymm9",
            "vpor ymm2, ymm2, ymm10",
            "add rsi, 96",
            "dec ecx",
            "jnz 2b",
            // −Q: y + x and y − x exchanged by the sign mask.
            "vpbroadcastq ymm11, [rdi + 552]",
            "vpxor ymm12, ymm0, ymm1",
            "vpand ymm12, ymm12, ymm11",
            "vpxor ymm0, ymm0, ymm12",
            "vpxor ymm1, ymm1, ymm12",
            // This step's addition, as `madd`, with f and g exchanged by the sign mask at 560.
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
            "mov rcx, [rdi + 560]",
            "mov r8, [rdi + 448]",
            "mov r9, [rdi + 456]",
            "mov r10, [rdi + 464]",
            "mov r11, [rdi + 472]",
            "mov r12, [rdi + 480]",
            "mov r13, [rdi + 488]",
            "mov r14, [rdi + 496]",
            "mov r15, [rdi + 504]",
            "mov rax, r8",
            "xor rax, r12",
            "and rax, rcx",
            "xor r8, rax",
            "xor r12, rax",
            "mov rax, r9",
            "xor rax, r13",
            "and rax, rcx",
            "xor r9, rax",
            "xor r13, rax",
            "mov rax, r10",
            "xor rax, r14",
            "and rax, rcx",
            "xor r10, rax",
            "xor r14, rax",
            "mov rax, r11",
            "xor rax, r15",
            "and rax, rcx",
            "xor r11, rax",
            "xor r15, rax",
            "mov [rdi + 448], r8",
            "mov [rdi + 456], r9",
            "mov [rdi + 464], r10",
            "mov [rdi + 472], r11",
            "mov [rdi + 480], r12",
            "mov [rdi + 488], r13",
            "mov [rdi + 496], r14",
            "mov [rdi + 504], r15",
            mul4!("0", "416", "448"),   // X = ef
            mul4!("32", "480", "512"),  // Y = gh
            mul4!("64", "448", "480"),  // Z = fg
            mul4!("96", "416", "512"),  // T = eh
            // The next step's entry and sign (every read of this step's entry is above).
            "vmovdqa [rdi + 128], ymm0",
            "vmovdqa [rdi + 160], ymm1",
            "vmovdqa [rdi + 192], ymm2",
            "vzeroupper",
            "mov rcx, [rdi + 552]",
            "mov [rdi + 560], rcx",
            in("rdi") st.0.as_mut_ptr(),
            inout("rsi") next_row.as_ptr() => _,
            inout("rax") prefetch => _,
            inout("rcx") N => _,
            inout("rdx") N * 3 / 2 => _,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _,
            clobber_abi("C"),
            options(nostack),
        );
    }
}

/// `s·B` for a secret `s` < 2^255 with the signed radix-32 digits of [`edwards::radix32`]: d[i]·32^i·B from
/// row i of `BASE_RADIX32` (16 entries a row) for each of the 52 digits, the first entry as the
/// accumulator and each of the other 51 added by one [`comb_step_avx2`] (the look-up of the next entry in
/// AVX2 in the same block as the addition, the row after prefetched): 51 additions and no doublings,
/// against 63 with radix-16 digits; each look-up scans 16 entries instead of 8, and the table is
/// 52·16·96 bytes (78 KiB, most of it read from L2).
/// Constant time: the digits only reach the look-ups' vector masks and [`CombState::set_digit`].
///
/// # Safety
/// The CPU must have BMI2, ADX and AVX2 (callers hold a `Checked<Backend>` covering `Bmi2AdxAvx2`).
#[target_feature(enable = "avx2,bmi2,adx")]
pub(super) unsafe fn mul_base_comb_avx2(s: &[u8; 32]) -> Point<Fe64> {
    debug_assert!(s[31] < 0x80);
    let mut digits = edwards::radix32(s);
    let rows = &BASE_RADIX32;
    let last = rows.len() - 1;
    let mut st = CombState([0; 72]);
    // SAFETY: AVX2 is present (this function's contract).
    st.set_point(&unsafe { lookup_avx2(&rows[0], digits[0]) }.to_extended());
    // SAFETY: as above.
    st.set_first_entry(&unsafe { lookup_avx2(&rows[1], digits[1]) });
    for i in 1..=last {
        // Step i adds entry i and looks up entry i + 1 (after the last, a dummy look-up of digit 0).
        st.set_digit(if i < last { digits[i + 1] } else { 0 });
        let (next, after) = (&rows[(i + 1).min(last)], &rows[(i + 2).min(last)]);
        // SAFETY: BMI2, ADX and AVX2 are present (this function's contract); `after` is a valid reference.
        unsafe { comb_step_avx2(&mut st, next, after.as_ptr().cast()) };
    }
    let out = st.point();
    crate::ct::wipe(&mut st.0);
    crate::ct::wipe(&mut digits);
    out
}
