#!/usr/bin/env python3
# Prints the asm! text of `block_asm` in avx2.rs: the 80 rounds of one SHA-512 block on scalar registers, with 16
# rows of the next group's four-lane message schedule interleaved on ymm registers; with the argument `stretch`,
# the eight rounds of `rounds_at` (same round, no schedule). Paste the output between `asm!(` and the operands.
# `--check` instead checks that avx2.rs holds exactly both texts (CI: .ci/check-generated.py). Each printed line is
# one instruction.
#
# Register plan (the technique of OpenSSL's sha512-avx2-rorx, written from the algorithm, not from its text):
# - the eight state words live in the operands {s0}..{s7}; no word moves between registers: round r's
#   `a..h` are s[(-r) % 8], s[(1 - r) % 8], ... (the new `a` is written over the old `h`, the new `e` over `d`), so
#   after 80 rounds (a multiple of 8) word i is back in {s<i>};
# - three scratch registers {t0}, {t1}, {t2} take the roles `x` (temporary), `y` (temporary, then `a ^ b`) and
#   `bc` (`b ^ c`): `a ^ b` of one round is `b ^ c` of the next, so `y` and `bc` swap names after every round
#   instead of a `mov`; with {p} and {n} that is 13 registers, every one LLVM can hand out;
# - {p}: `W[i] + K[i]` of this block at p + 32 i (a column of the four-block schedule);
# - {n}: row R of the next group's schedule (`w` at n + 32 j for row R + j, `wk` at n + WK + 32 j); K[R..R + 16]
#   in the ymm operands {k0}..{k3} (four words each, broadcast with vpermq: no fourteenth general register);
#   {m}: the vpshufb mask of the rotation right by 8; ymm0..ymm3 temporaries.
#
# One round is 22 integer operations and two register moves:
#   h += WK; Ch = ((f ^ g) & e) ^ g; h += Ch; Sigma1(e) (three rorx, two xor); h += Sigma1 (now T1); d += h;
#   Sigma0(a); Maj = ((a ^ b) & bc) ^ b; Maj += Sigma0; h += Maj.
# The `e` chain (and, xor, add, add, add) is five cycles; Sigma0 + Maj come from `a` alone, off that chain, and join
# it in one addition. The rounds are bound by the four integer units (22 / 4 = 5.5 cycles), so the schedule runs on
# the vector units in between: one 16-row share of the next group per block, about five vector instructions after
# each round, in the order of the rows (row j reads row j - 2, written ten rounds earlier).
import sys

WK_OFF = 80 * 32  # offset of `wk` from `w` in `Sched`


def rounds(n=80, wk=lambda r: f"[{{p}} + {32 * r}]"):
    """`n` rounds (a multiple of 8), one list of instruction lines per round (no schedule); `wk(r)` is the
    address of round r's W + K."""
    out = []
    x, y, bc = "{t0}", "{t1}", "{t2}"
    for r in range(n):
        a, b, c, d, e, f, g, h = ["{s%d}" % ((i - r) % 8) for i in range(8)]
        l = []
        l.append(f"add {h}, qword ptr {wk(r)}")  # h + W + K
        l.append(f"mov {x}, {f}")
        l.append(f"xor {x}, {g}")
        l.append(f"and {x}, {e}")
        l.append(f"xor {x}, {g}")  # Ch(e, f, g)
        l.append(f"rorx {y}, {e}, 14")
        l.append(f"add {h}, {x}")
        l.append(f"rorx {x}, {e}, 18")
        l.append(f"xor {y}, {x}")
        l.append(f"rorx {x}, {e}, 41")
        l.append(f"xor {y}, {x}")  # Sigma1(e)
        l.append(f"add {h}, {y}")  # T1
        l.append(f"rorx {x}, {a}, 28")
        l.append(f"add {d}, {h}")  # new e = d + T1
        l.append(f"rorx {y}, {a}, 34")
        l.append(f"xor {x}, {y}")
        l.append(f"rorx {y}, {a}, 39")
        l.append(f"xor {x}, {y}")  # Sigma0(a)
        l.append(f"mov {y}, {a}")
        l.append(f"xor {y}, {b}")  # a ^ b: the next round's b ^ c
        l.append(f"and {bc}, {y}")
        l.append(f"xor {bc}, {b}")  # Maj(a, b, c)
        l.append(f"add {bc}, {x}")  # Sigma0(a) + Maj(a, b, c)
        l.append(f"add {h}, {bc}")  # new a = T1 + Sigma0 + Maj
        y, bc = bc, y
        out.append(l)
    assert (x, y, bc) == ("{t0}", "{t1}", "{t2}")
    return out


def sched_rows():
    """The 16 schedule rows R..R + 16 of the next group, relative to {n}."""
    out = []
    for j in range(16):
        def w(i):
            return "ymmword ptr [{n} %s %d]" % ("-" if i < 0 else "+", abs(32 * i))
        out += [
            f"vmovdqa ymm0, {w(j - 15)}",  # x = row i - 15
            "vpsrlq ymm1, ymm0, 1",
            "vpsllq ymm2, ymm0, 63",
            "vpxor ymm1, ymm1, ymm2",
            "vpshufb ymm2, ymm0, {m}",  # x >>> 8
            "vpxor ymm1, ymm1, ymm2",
            "vpsrlq ymm2, ymm0, 7",
            "vpxor ymm1, ymm1, ymm2",  # sigma0(x)
            f"vpaddq ymm1, ymm1, {w(j - 16)}",
            f"vpaddq ymm1, ymm1, {w(j - 7)}",
            f"vmovdqa ymm0, {w(j - 2)}",  # y = row i - 2
            "vpsrlq ymm2, ymm0, 19",
            "vpsllq ymm3, ymm0, 45",
            "vpxor ymm2, ymm2, ymm3",
            "vpsrlq ymm3, ymm0, 61",
            "vpxor ymm2, ymm2, ymm3",
            "vpsllq ymm3, ymm0, 3",
            "vpxor ymm2, ymm2, ymm3",
            "vpsrlq ymm3, ymm0, 6",
            "vpxor ymm2, ymm2, ymm3",  # sigma1(y)
            "vpaddq ymm1, ymm1, ymm2",
            f"vmovdqa {w(j)}, ymm1",
            "vpermq ymm2, {k%d}, %d" % (j // 4, 0x55 * (j % 4)),  # K[R + j] in every lane
            "vpaddq ymm1, ymm1, ymm2",
            f"vmovdqa ymmword ptr [{{n}} + {WK_OFF + 32 * j}], ymm1",
        ]
    return out


def block():
    """The whole text: rounds with the schedule spread evenly over them (all of it done by round 72)."""
    rs = rounds()
    sched = sched_rows()
    lines = ["mov {t2}, {s1}", "xor {t2}, {s2}"]  # b ^ c
    per = len(sched) / 72.0
    done = 0
    for r, l in enumerate(rs):
        for q, ins in enumerate(l):
            lines.append(ins)
            # after every fifth integer instruction, the vector instructions due by then
            if q % 5 == 4 or q == len(l) - 1:
                due = min(len(sched), round(per * (r + (q + 1) / len(l))))
                while done < due:
                    lines.append(sched[done])
                    done += 1
    assert done == len(sched)
    return lines


def show(lines):
    return ['            "%s",' % l for l in lines]


def stretch():
    """`rounds_at`'s eight rounds: W + K of round r at {p} + r {o} ({o} = 8 STRIDE), `b ^ c` in {t2} on entry and
    exit (eight name swaps bring it back)."""
    return [ins for l in rounds(8, lambda r: f"[{{p}} + {r}*{{o}}]") for ins in l]


if __name__ == "__main__":
    text = show(block()) if sys.argv[1:2] != ["stretch"] else show(stretch())
    if sys.argv[1:] == ["--check"]:
        text = show(stretch())
        import os
        here = os.path.dirname(os.path.abspath(__file__))
        src = [l.strip() for l in open(os.path.join(here, "avx2.rs")).read().splitlines()]
        want = [l.strip() for l in text]
        n = len(want)
        if not any(src[i:i + n] == want for i in range(len(src) - n + 1)):
            print(f"sha2/avx2_rounds.py stretch: its {n} lines are not in sha2/avx2.rs as printed")
            sys.exit(1)
        text = show(block())
    if sys.argv[1:] == ["--check"]:
        import os
        here = os.path.dirname(os.path.abspath(__file__))
        src = [l.strip() for l in open(os.path.join(here, "avx2.rs")).read().splitlines()]
        want = [l.strip() for l in text]
        n = len(want)
        if not any(src[i:i + n] == want for i in range(len(src) - n + 1)):
            print(f"sha2/avx2_rounds.py: its {n} lines are not in sha2/avx2.rs as printed")
            sys.exit(1)
    else:
        print("\n".join(text))
