#!/usr/bin/env python3
# Prints the asm! text of `rounds_asm` in avx2.rs (the AVX2 ChaCha double-round loop): run it and paste the
# output between `core::arch::asm!(` and the operands. Register plan and pair order are explained there.
# Generates the asm! text of the AVX2 ChaCha double-round loop (see chacha/avx2.rs, `rounds_asm`).
A = ["ymm0", "ymm1", "ymm2", "ymm3"]
B = ["ymm4", "ymm5", "ymm6", "ymm7"]
D = ["ymm8", "ymm9", "ymm10", "ymm11"]
C = ["ymm12", "ymm13"]   # two of x8..x11 at a time
T = ["ymm14", "ymm15"]
lines = []
def emit(s): lines.append(s)
def mem(i): return "ymmword ptr [{x} + %d]" % (32 * i)
def pair(q0, q1):
    # q = (a, b, c, d) register names; two quarter rounds interleaved instruction by instruction
    for (rot, sh) in (("{m}", 12), ("{m} + 32", 7)):
        for (a, b, c, d) in (q0, q1): emit(f"vpaddd {a}, {a}, {b}")
        for (a, b, c, d) in (q0, q1): emit(f"vpxor {d}, {d}, {a}")
        for (a, b, c, d) in (q0, q1): emit(f"vpshufb {d}, {d}, ymmword ptr [{rot}]")
        for (a, b, c, d) in (q0, q1): emit(f"vpaddd {c}, {c}, {d}")
        for (a, b, c, d) in (q0, q1): emit(f"vpxor {b}, {b}, {c}")
        for (t, (a, b, c, d)) in zip(T, (q0, q1)): emit(f"vpslld {t}, {b}, {sh}")
        for (a, b, c, d) in (q0, q1): emit(f"vpsrld {b}, {b}, {32 - sh}")
        for (t, (a, b, c, d)) in zip(T, (q0, q1)): emit(f"vpor {b}, {b}, {t}")
def swap(out, inn):
    emit(f"vmovdqu {mem(out[0])}, {C[0]}")
    emit(f"vmovdqu {mem(out[1])}, {C[1]}")
    emit(f"vmovdqu {C[0]}, {mem(inn[0])}")
    emit(f"vmovdqu {C[1]}, {mem(inn[1])}")
# load
for i in range(4): emit(f"vmovdqu {A[i]}, {mem(i)}")
for i in range(4): emit(f"vmovdqu {B[i]}, {mem(4 + i)}")
for i in range(4): emit(f"vmovdqu {D[i]}, {mem(12 + i)}")
emit(f"vmovdqu {C[0]}, {mem(8)}")
emit(f"vmovdqu {C[1]}, {mem(9)}")
emit(".p2align 5")
emit("2:")
# column round: (0,4,8,12) (1,5,9,13) | (2,6,10,14) (3,7,11,15)
pair((A[0], B[0], C[0], D[0]), (A[1], B[1], C[1], D[1]))
swap((8, 9), (10, 11))
pair((A[2], B[2], C[0], D[2]), (A[3], B[3], C[1], D[3]))
# diagonal round: (0,5,10,15) (1,6,11,12) | (2,7,8,13) (3,4,9,14)
pair((A[0], B[1], C[0], D[3]), (A[1], B[2], C[1], D[0]))
swap((10, 11), (8, 9))
pair((A[2], B[3], C[0], D[1]), (A[3], B[0], C[1], D[2]))
emit("dec {n}")
emit("jnz 2b")
for i in range(4): emit(f"vmovdqu {mem(i)}, {A[i]}")
for i in range(4): emit(f"vmovdqu {mem(4 + i)}, {B[i]}")
for i in range(4): emit(f"vmovdqu {mem(12 + i)}, {D[i]}")
emit(f"vmovdqu {mem(8)}, {C[0]}")
emit(f"vmovdqu {mem(9)}, {C[1]}")
for l in lines: print(f'            "{l}",')
