//! The field operations of the `Bmi2Adx` whole-formula `asm!` blocks, as `asm!` text macros: the text of
//! operations on field elements held in a state block of memory whose address is in `rdi` (the arguments
//! are byte offsets into it). Every operation loads its inputs from the state and stores its result there;
//! `rsi` holds zero while it runs. Registers used: `rax`, `rcx`, `rdx`, `rsi`, `r8`–`r15`.
//!
//! Bounds (p = 2^255 − 19): `mul4`, `sqr4` and `cmadd4` accept any inputs below 2^256 and give results
//! below 2p (`mul4` and `sqr4` below 2^255 + 2^13, `cmadd4` with its constant below 2^32 below
//! 2^255 + 2^40); `add4` and `sub4` accept a first operand below 2^256 and a second one below
//! 2p and give a result below 2^256 (a carry or borrow out is folded once, as ±38, and that cannot carry or
//! borrow again: for `add4`, a + b − 2^256 < 2^256 − 38; for `sub4`, a − b + 2^256 > 38). All are
//! congruent modulo p to the exact result.

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
macro_rules! cmadd4 {
    // [$d] = [$a]·$k + [$b] for a constant $k < 2^32: the product on five words, [$b] added on the carry
    // chain, then the fold of `fold_store` (the top word stays below 2^33).
    ($d:literal, $a:literal, $k:literal, $b:literal) => {
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
            "add r8, [rdi + ", $b, "]\n",
            "adc r9, [rdi + ", $b, " + 8]\n",
            "adc r10, [rdi + ", $b, " + 16]\n",
            "adc r11, [rdi + ", $b, " + 24]\n",
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
