#!/usr/bin/env python3
# Prints the asm! text of `rounds_asm` in avx2/generated.rs (no argument), of the double-round loop both share (argument
# `loop`: the body of `macro_rules! dround_loop`, which the two texts invoke as `dround_loop!()`), of `pass8`
# (argument `pass8`: one text for both modes, each store a `pass8_store!($mode, reg, offset)` line that is a plain
# store (`ks`) or an XOR with the data then a store (`xor`)), or of `dround` (argument `dround`): paste the output
# between `asm!(` and the operands. Register plan and pair order are explained there.
A = ["ymm0", "ymm1", "ymm2", "ymm3"]
B = ["ymm4", "ymm5", "ymm6", "ymm7"]
D = ["ymm8", "ymm9", "ymm10", "ymm11"]
C = ["ymm12", "ymm13"]   # two of x8..x11 at a time
T = ["ymm14", "ymm15"]
lines = []
def emit(s): lines.append(s)
def mem(i): return "ymmword ptr [{s} + %d]" % (32 * i)
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
# The loop of `dr` double rounds, shared by `rounds_asm` and `pass8` (the `dround_loop!` macro of avx2/generated.rs; words
# 8..11 of the c row swap through memory at {s} + 32 i).
def gen_loop():
    global lines
    saved, lines = lines, []
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
    loop, lines = lines, saved
    return loop
LOOP = ("loop",)  # stands for `dround_loop!()` in a text
emit(LOOP)
for i in range(4): emit(f"vmovdqu {mem(i)}, {A[i]}")
for i in range(4): emit(f"vmovdqu {mem(4 + i)}, {B[i]}")
for i in range(4): emit(f"vmovdqu {mem(12 + i)}, {D[i]}")
emit(f"vmovdqu {mem(8)}, {C[0]}")
emit(f"vmovdqu {mem(9)}, {C[1]}")
ROUNDS_ASM = lines
def show(text):
    for l in text:
        if l == LOOP:
            print('            dround_loop!(),')
        elif isinstance(l, tuple):
            print(f'            pass8_store!($mode, "{l[1]}", "{l[2]}"),')
        else:
            print(f'            "{l}",')
if len(__import__("sys").argv) == 1:
    show(ROUNDS_ASM)
if len(__import__("sys").argv) > 1 and __import__("sys").argv[1] == "loop":
    # The body of `macro_rules! dround_loop`: one `concat!` of lines.
    for l in gen_loop(): print(f'            "{l}\\n",')

# ---- `pass8_asm`: a whole 8-block pass (state in, 512 bytes out) -------------------------------------------------
# Operands: {st} the 16 state words (u32), {c} the counter vectors (words 12, 13 of the 8 blocks, 64 bytes),
# {m} the masks, {s} 512 bytes of scratch (word i of the 8 blocks at 32 i), {p} the 512 bytes of data, {n} the
# double rounds. Words 10 and 11 start in the scratch (the c-pair swap puts them there anyway).
def smem(i): return "ymmword ptr [{s} + %d]" % (32 * i)
def bcast(reg, i): return f"vpbroadcastd {reg}, dword ptr [{{st}} + {4 * i}]"
def gen_pass8():
    global lines
    lines = []
    for i in range(4): emit(bcast(A[i], i))
    for i in range(4): emit(bcast(B[i], 4 + i))
    emit(f"vmovdqu {D[0]}, ymmword ptr [{{c}}]")
    emit(f"vmovdqu {D[1]}, ymmword ptr [{{c}} + 32]")
    emit(bcast(D[2], 14))
    emit(bcast(D[3], 15))
    emit(bcast(C[0], 8))
    emit(bcast(C[1], 9))
    emit(bcast(T[0], 10))
    emit(bcast(T[1], 11))
    emit(f"vmovdqu {smem(10)}, {T[0]}")
    emit(f"vmovdqu {smem(11)}, {T[1]}")
    emit(LOOP)
    # Feed-forward: add the input words (broadcast again from the state; the counters from {c}).
    regs = [(A[i], i) for i in range(4)] + [(B[i], 4 + i) for i in range(4)] + [(C[0], 8), (C[1], 9)] \
        + [(D[2], 14), (D[3], 15)]
    for k, (r, i) in enumerate(regs):
        t = T[k % 2]
        emit(bcast(t, i))
        emit(f"vpaddd {r}, {r}, {t}")
    emit(f"vpaddd {D[0]}, {D[0]}, ymmword ptr [{{c}}]")
    emit(f"vpaddd {D[1]}, {D[1]}, ymmword ptr [{{c}} + 32]")
    # Words 8, 9, 12..15 to the scratch; words 0..7 stay for the first transpose.
    emit(f"vmovdqu {smem(8)}, {C[0]}"); emit(f"vmovdqu {smem(9)}, {C[1]}")
    for i in range(4): emit(f"vmovdqu {smem(12 + i)}, {D[i]}")
    X = [f"ymm{i}" for i in range(8)]
    Tt = [f"ymm{8 + i}" for i in range(8)]
    def transpose_out(off):
        # X[0..8] hold words off/4 .. off/4 + 7 of the 8 blocks (one block per lane).
        for h in range(2):  # words 0-3 of the eight, then 4-7
            x = X[4 * h: 4 * h + 4]; t = Tt[4 * h: 4 * h + 4]
            emit(f"vpunpckldq {t[0]}, {x[0]}, {x[1]}")
            emit(f"vpunpckhdq {t[1]}, {x[0]}, {x[1]}")
            emit(f"vpunpckldq {t[2]}, {x[2]}, {x[3]}")
            emit(f"vpunpckhdq {t[3]}, {x[2]}, {x[3]}")
            emit(f"vpunpcklqdq {x[0]}, {t[0]}, {t[2]}")  # block 0 | block 4
            emit(f"vpunpckhqdq {x[1]}, {t[0]}, {t[2]}")  # block 1 | block 5
            emit(f"vpunpcklqdq {x[2]}, {t[1]}, {t[3]}")  # block 2 | block 6
            emit(f"vpunpckhqdq {x[3]}, {t[1]}, {t[3]}")  # block 3 | block 7
        for j in range(4):
            for (blk, imm, t) in ((j, "0x20", Tt[0]), (j + 4, "0x31", Tt[1])):
                emit(f"vperm2i128 {t}, {X[j]}, {X[j + 4]}, {imm}")
                # One line for both modes: `pass8_store!` in avx2/generated.rs XORs the data in first in mode `xor`.
                emit(("store", t, 64 * blk + off))
    transpose_out(0)
    # Words 8..15: 10 and 11 still lack the feed-forward.
    for k in range(8):
        emit(f"vmovdqu {X[k]}, {smem(8 + k)}")
    for k, i in ((2, 10), (3, 11)):
        emit(bcast(Tt[k], i))
        emit(f"vpaddd {X[k]}, {X[k]}, {Tt[k]}")
    transpose_out(32)
    # The scratch now holds keystream words (8..15 of the 8 blocks): its owner (`Scratch`, one per call of a
    # run of passes) zeroes it when dropped.
    return lines

if __name__ == "__main__" and len(__import__("sys").argv) > 1 and __import__("sys").argv[1] == "pass8":
    show(gen_pass8())

# ---- `dround`: one double round on register operands (the stitched passes, with other work between rounds) -------
# ymm0..ymm13 are operands (words 0-7, 12-15, 8, 9 as in `rounds_asm`), {s} holds words 10, 11 at 0 and 32.
def gen_dround():
    global lines
    lines = []
    def sm(i): return "ymmword ptr [{s} + %d]" % (32 * (i - 10))
    pair((A[0], B[0], C[0], D[0]), (A[1], B[1], C[1], D[1]))
    emit(f"vmovdqu ymm14, {sm(10)}"); emit(f"vmovdqu ymm15, {sm(11)}")
    emit(f"vmovdqu {sm(10)}, {C[0]}"); emit(f"vmovdqu {sm(11)}, {C[1]}")
    emit(f"vmovdqa {C[0]}, ymm14"); emit(f"vmovdqa {C[1]}, ymm15")
    # the scratch now holds words 8, 9
    pair((A[2], B[2], C[0], D[2]), (A[3], B[3], C[1], D[3]))
    pair((A[0], B[1], C[0], D[3]), (A[1], B[2], C[1], D[0]))
    emit(f"vmovdqu ymm14, {sm(10)}"); emit(f"vmovdqu ymm15, {sm(11)}")
    emit(f"vmovdqu {sm(10)}, {C[0]}"); emit(f"vmovdqu {sm(11)}, {C[1]}")
    emit(f"vmovdqa {C[0]}, ymm14"); emit(f"vmovdqa {C[1]}, ymm15")
    pair((A[2], B[3], C[0], D[1]), (A[3], B[0], C[1], D[2]))
    return lines

if __name__ == "__main__" and len(__import__("sys").argv) > 1 and __import__("sys").argv[1] == "dround":
    for l in gen_dround():
        print(f'            "{l}",')
