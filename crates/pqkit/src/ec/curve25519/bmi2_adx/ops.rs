//! The field operations of the `Bmi2Adx` whole-formula `asm!` blocks, as `asm!` text macros: the text of
//! operations on field elements held in a state block of memory whose address is in `rdi` (the arguments
//! are byte offsets into it). Every operation loads its inputs from the state and stores its result there;
//! `rsi` holds zero while it runs. Registers used: `rax`, `rcx`, `rdx`, `rsi`, `r8`–`r15`.
//!
//! Bounds (p = 2^255 − 19): `mul4`, `sqr4` and `cmadd4` accept any inputs below 2^256 and give results
//! below 2p (`mul4` and `sqr4` below 2^255 + 2^13, `cmadd4` with its constant below 2^32 below
//! 2^255 + 2^40); `add4` and `sub4` accept a first operand below 2^256 and a second one below
//! 2p and give a result below 2^256 (a carry or borrow out is folded once, as ±38, and that cannot carry or
//! borrow again: for `add4`, a + b − 2^256 < 2^256 − 38; for `sub4`, a − b + 2^256 > 38). `mul5` accepts
//! any inputs below 2^256 and leaves its product on five words, below 39·2^256 (the fifth word at most 38),
//! unfolded; `add5` and `sub5` accept two such results (`sub5` adds 128p to stay positive, for a sum below
//! 103·2^256) and fold once, to a result below 2^255 + 2^13. All are congruent modulo p to the exact result.

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
macro_rules! reduce38 {
    // The 512-bit value r8..r15 to five words r8..r12 (r12 ≤ 38): r8..r11 += 38·(r12..r15)
    // (2^256 = 38 mod p), on the two carry chains.
    () => {
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
        )
    };
}

#[rustfmt::skip]
macro_rules! reduce_store {
    // The 512-bit value r8..r15 reduced (`reduce38`, then `fold_store`) and stored at `$d`.
    ($d:literal) => {
        concat!(reduce38!(), fold_store!($d))
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
macro_rules! mul_512 {
    // r8..r15 = [$a]·[$b]: the 4×4 schoolbook product row by row (low halves on the OF chain, high halves
    // on the CF chain).
    ($a:literal, $b:literal) => {
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
        )
    };
}

#[rustfmt::skip]
macro_rules! mul4 {
    // [$d] = [$a]·[$b]: `mul_512`, then `reduce_store`.
    ($d:literal, $a:literal, $b:literal) => {
        concat!(mul_512!($a, $b), reduce_store!($d))
    };
}

#[rustfmt::skip]
macro_rules! mul5 {
    // [$d] = [$a]·[$b] on five words (below 39·2^256, the fifth word at most 38): `mul_512` and `reduce38`
    // without the fold, for a result that `add5` or `sub5` takes next and folds once.
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            mul_512!($a, $b),
            reduce38!(),
            "mov [rdi + ", $d, "], r8\n",
            "mov [rdi + ", $d, " + 8], r9\n",
            "mov [rdi + ", $d, " + 16], r10\n",
            "mov [rdi + ", $d, " + 24], r11\n",
            "mov [rdi + ", $d, " + 32], r12\n",
        )
    };
}

#[rustfmt::skip]
macro_rules! sqr4 {
    // [$d] = [$a]²: the six cross products a_i·a_j (i < j) once, placed on two carry chains (low halves on
    // CF, high halves on OF) in three groups that each start on a fresh word; then the doubling (CF chain,
    // `adcx r, r`) and the four squares a_i² (OF chain) in one pass over the words; then `reduce_store`.
    ($d:literal, $a:literal) => {
        concat!(
            "mov rdx, [rdi + ", $a, "]\n",
            "mulx r15, r8, rdx\n",                    // a0² (r15 held until the doubling)
            "mulx r10, r9, [rdi + ", $a, " + 8]\n",   // a0·a1 at words 1, 2
            "mulx r12, r11, [rdi + ", $a, " + 24]\n", // a0·a3 at words 3, 4
            "mov rdx, [rdi + ", $a, " + 16]\n",
            "mulx r14, r13, [rdi + ", $a, " + 24]\n", // a2·a3 at words 5, 6
            "xor esi, esi\n",
            "mulx rcx, rax, [rdi + ", $a, "]\n",      // a2·a0 at words 2, 3
            "adcx r10, rax\n",
            "adox r11, rcx\n",
            "mulx rcx, rax, [rdi + ", $a, " + 8]\n",  // a2·a1 at words 3, 4
            "adcx r11, rax\n",
            "adox r12, rcx\n",
            "mov rdx, [rdi + ", $a, " + 24]\n",
            "mulx rcx, rax, [rdi + ", $a, " + 8]\n",  // a3·a1 at words 4, 5
            "adcx r12, rax\n",
            "adox r13, rcx\n",
            "adcx r13, rsi\n",
            "adox r14, rsi\n",
            "adc r14, rsi\n",                          // the cross sum is below 2^448: no carry out of r14
            "xor esi, esi\n",
            "adcx r9, r9\n",
            "adox r9, r15\n",
            "mov rdx, [rdi + ", $a, " + 8]\n",
            "mulx rdx, rax, rdx\n",                   // a1²
            "adcx r10, r10\n",
            "adox r10, rax\n",
            "adcx r11, r11\n",
            "adox r11, rdx\n",
            "mov rdx, [rdi + ", $a, " + 16]\n",
            "mulx rdx, rax, rdx\n",                   // a2²
            "adcx r12, r12\n",
            "adox r12, rax\n",
            "adcx r13, r13\n",
            "adox r13, rdx\n",
            "mov rdx, [rdi + ", $a, " + 24]\n",
            "mulx r15, rax, rdx\n",                   // a3²
            "adcx r14, r14\n",
            "adox r14, rax\n",
            "adcx r15, rsi\n",
            "adox r15, rsi\n",
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
macro_rules! load5 {
    // r8..r12 = the five words at `$a` (a `mul5` result), and rsi = 0 (which clears the flags).
    ($a:literal) => {
        concat!(
            "xor esi, esi\n",
            "mov r8, [rdi + ", $a, "]\n",
            "mov r9, [rdi + ", $a, " + 8]\n",
            "mov r10, [rdi + ", $a, " + 16]\n",
            "mov r11, [rdi + ", $a, " + 24]\n",
            "mov r12, [rdi + ", $a, " + 32]\n",
        )
    };
}

#[rustfmt::skip]
macro_rules! add5 {
    // [$d] = [$a] + [$b] for two `mul5` results (five words each, below 39·2^256): the five-word sum (below
    // 78·2^256), then the fold of `fold_store`.
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            load5!($a),
            "add r8, [rdi + ", $b, "]\n",
            "adc r9, [rdi + ", $b, " + 8]\n",
            "adc r10, [rdi + ", $b, " + 16]\n",
            "adc r11, [rdi + ", $b, " + 24]\n",
            "adc r12, [rdi + ", $b, " + 32]\n",
            fold_store!($d),
        )
    };
}

#[rustfmt::skip]
macro_rules! sub5 {
    // [$d] = [$a] − [$b] for two `mul5` results (five words each, below 39·2^256), plus 128p = 64·2^256 −
    // 2432 to keep it positive (below 103·2^256), then the fold of `fold_store`.
    ($d:literal, $a:literal, $b:literal) => {
        concat!(
            load5!($a),
            "sub r8, [rdi + ", $b, "]\n",
            "sbb r9, [rdi + ", $b, " + 8]\n",
            "sbb r10, [rdi + ", $b, " + 16]\n",
            "sbb r11, [rdi + ", $b, " + 24]\n",
            "sbb r12, [rdi + ", $b, " + 32]\n",
            "sub r8, 2432\n",
            "sbb r9, rsi\n",
            "sbb r10, rsi\n",
            "sbb r11, rsi\n",
            "sbb r12, rsi\n",
            "add r12, 64\n",
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
