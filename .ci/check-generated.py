#!/usr/bin/env python3
"""Checks that the generated asm! text in crates/pqkit/src/chacha/avx2/generated.rs is what avx2_rounds.py prints: the
8-block rounds `rounds_asm` (no argument), the double-round loop it shares with `pass8` (`loop`: the body of
`dround_loop!`), the one text of `pass8` for both modes (`pass8`: its data stores are `pass8_store!` lines) and the
register-operand double round `dround`. Then the generators that check their own files: hash/sha2/avx2_rounds.py and
rsa/bmi2_adx_rows.py (`--check`)."""
import subprocess, sys
src = open("crates/pqkit/src/chacha/avx2/generated.rs").read().splitlines()
body = [l.strip() for l in src]
bad = 0
for mode in ["", "loop", "pass8", "dround"]:
    out = subprocess.run(["python3", "crates/pqkit/src/chacha/avx2_rounds.py"] + ([mode] if mode else []),
                         check=True, capture_output=True, text=True).stdout.splitlines()
    want = [l.strip() for l in out if l.strip()]
    n = len(want)
    if n == 0:
        print(f"avx2_rounds.py {mode or '(rounds)'}: printed nothing")
        bad += 1
    elif not any(body[i:i + n] == want for i in range(len(body) - n + 1)):
        print(f"avx2_rounds.py {mode or '(rounds)'}: its {n} lines are not in chacha/avx2/generated.rs as printed")
        bad += 1
bad += subprocess.run(["python3", "crates/pqkit/src/hash/sha2/avx2_rounds.py", "--check"]).returncode != 0  # SHA-512 AVX2: round macros, block and stretch texts
bad += subprocess.run(["python3", "crates/pqkit/src/rsa/bmi2_adx_rows.py", "--check"]).returncode != 0  # RSA BMI2/ADX: unrolled square and reduction texts
sys.exit(1 if bad else 0)
