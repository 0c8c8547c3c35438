#!/usr/bin/env python3
"""Checks that the generated asm! text in crates/pqkit/src/chacha/avx2.rs is what avx2_rounds.py prints."""
import subprocess, sys
src = open("crates/pqkit/src/chacha/avx2.rs").read().splitlines()
body = [l.strip() for l in src]
bad = 0
for mode in ["", "xor", "ks"]:
    out = subprocess.run(["python3", "crates/pqkit/src/chacha/avx2_rounds.py"] + ([mode] if mode else []),
                         check=True, capture_output=True, text=True).stdout.splitlines()
    want = [l.strip() for l in out if l.strip()]
    n = len(want)
    if not any(body[i:i + n] == want for i in range(len(body) - n + 1)):
        print(f"avx2_rounds.py {mode or '(rounds)'}: its {n} lines are not in chacha/avx2.rs as printed")
        bad += 1
sys.exit(1 if bad else 0)
