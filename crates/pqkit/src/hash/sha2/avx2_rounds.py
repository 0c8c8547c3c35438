#!/usr/bin/env python3
# Prints the generated text of avx2.rs: `macros`, the one copy of the round (`sha512_round!`: the asm! text of
# one SHA-512 round on scalar registers, with the register names as parameters, built with concat!) and of the
# four-lane schedule lines (`sha512_sched!`); `block`, the asm! text of `block_asm` (80 `sha512_round!` lines: the
# rounds of one SHA-512 block with 16 rows of the next group's four-lane message schedule interleaved on ymm
# registers); `stretch`, the eight rounds of `rounds_at` (same round, no schedule). Each part goes into avx2.rs as
# printed; `--check` checks that avx2.rs holds every part exactly (CI: .ci/check-generated.py).
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

# One round: (format, names) lines; the names are the round's roles, filled in by `sha512_round!` from its
# parameters. `x` is always {t0}; `y` and `bc` swap after every round (see above).
ROUND = [
    ("add {h}, qword ptr {wk}", "h + W + K"),
    ("mov {x}, {f}", ""),
    ("xor {x}, {g}", ""),
    ("and {x}, {e}", ""),
    ("xor {x}, {g}", "Ch(e, f, g)"),
    ("rorx {y}, {e}, 14", ""),
    ("add {h}, {x}", ""),
    ("rorx {x}, {e}, 18", ""),
    ("xor {y}, {x}", ""),
    ("rorx {x}, {e}, 41", ""),
    ("xor {y}, {x}", "Sigma1(e)"),
    ("add {h}, {y}", "T1"),
    ("rorx {x}, {a}, 28", ""),
    ("add {d}, {h}", "new e = d + T1"),
    ("rorx {y}, {a}, 34", ""),
    ("xor {x}, {y}", ""),
    ("rorx {y}, {a}, 39", ""),
    ("xor {x}, {y}", "Sigma0(a)"),
    ("mov {y}, {a}", ""),
    ("xor {y}, {b}", "a ^ b: the next round's b ^ c"),
    ("and {bc}, {y}", ""),
    ("xor {bc}, {b}", "Maj(a, b, c)"),
    ("add {bc}, {x}", "Sigma0(a) + Maj(a, b, c)"),
    ("add {h}, {bc}", "new a = T1 + Sigma0 + Maj"),
]
# The round of `block_asm` (`sha512_round4!`): four-cycle recurrences for 25 integer operations and two moves.
#   d + h + W + K is formed first (off both recurrences) and the old d kept as -d in h; new e = that + Ch + Sigma1(e)
#   (Ch two operations deep, Sigma1 three: four cycles from e). Maj(a, b, c) = (a & (b ^ c)) + (b & c), the two
#   terms having no bit in common, so that the new a = -d + (b & c) + new e + (a & (b ^ c)) + Sigma0(a) adds
#   Sigma0(a) last: four cycles from a (the new e arrives three cycles before the new a needs it). b & c is
#   andn(b ^ c, b). Where there are six integer units (AMD Zen 5) this runs at the recurrences' four cycles a round
#   instead of the 22-operation round's five; with four units (Zen 4) 25 operations would be slower, but there the
#   dispatch picks the AVX-512 backend. The first block of a call and a lone block keep `sha512_round!`
#   (`rounds_at`), where the message schedule, not the rounds, sets the pace.
ROUND4 = [
    ("add {h}, qword ptr {wk}", "h + W + K"),
    ("mov {x}, {f}", ""),
    ("xor {x}, {g}", ""),
    ("and {x}, {e}", ""),
    ("xor {x}, {g}", "Ch(e, f, g)"),
    ("add {d}, {h}", "d + h + W + K"),
    ("sub {h}, {d}", "-d"),
    ("add {d}, {x}", ""),
    ("rorx {x}, {e}, 14", ""),
    ("rorx {y}, {e}, 18", ""),
    ("xor {x}, {y}", ""),
    ("rorx {y}, {e}, 41", ""),
    ("xor {x}, {y}", "Sigma1(e)"),
    ("add {d}, {x}", "new e = d + T1"),
    ("andn {x}, {bc}, {b}", "b & c"),
    ("add {h}, {x}", ""),
    ("and {bc}, {a}", "a & (b ^ c)"),
    ("add {h}, {d}", "T1 + (b & c)"),
    ("add {h}, {bc}", "T1 + Maj(a, b, c)"),
    ("rorx {x}, {a}, 28", ""),
    ("rorx {y}, {a}, 34", ""),
    ("xor {x}, {y}", ""),
    ("rorx {y}, {a}, 39", ""),
    ("xor {x}, {y}", "Sigma0(a)"),
    ("mov {y}, {a}", ""),
    ("xor {y}, {b}", "a ^ b: the next round's b ^ c"),
    ("add {h}, {x}", "new a = T1 + Maj + Sigma0"),
]
# The schedule lines of row j of the next group (relative to {n}), as (format) with {j}, {k}, {l} the row, its
# constant register and lane; offsets are assembler expressions (32 j - 480 is row j - 15).
SCHED = [
    "vmovdqa ymm0, ymmword ptr [{n} + 32*{j} - 480]",  # x = row i - 15
    "vpsrlq ymm1, ymm0, 1",
    "vpsllq ymm2, ymm0, 63",
    "vpxor ymm1, ymm1, ymm2",
    "vpshufb ymm2, ymm0, {m}",  # x >>> 8
    "vpxor ymm1, ymm1, ymm2",
    "vpsrlq ymm2, ymm0, 7",
    "vpxor ymm1, ymm1, ymm2",  # sigma0(x)
    "vpaddq ymm1, ymm1, ymmword ptr [{n} + 32*{j} - 512]",  # row i - 16
    "vpaddq ymm1, ymm1, ymmword ptr [{n} + 32*{j} - 224]",  # row i - 7
    "vmovdqa ymm0, ymmword ptr [{n} + 32*{j} - 64]",  # y = row i - 2
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
    "vmovdqa ymmword ptr [{n} + 32*{j}], ymm1",
    "vpermq ymm2, {k}, 0x55*{l}",  # K[R + j] in every lane
    "vpaddq ymm1, ymm1, ymm2",
    "vmovdqa ymmword ptr [{n} + 32*{j} + %d], ymm1" % WK_OFF,
]
# The instruction after which a round's schedule slots come: after every fifth and after the last.
def slot_after(rnd):
    """The instructions of round `rnd` after which its five schedule slots come: every fifth, and the last."""
    return [q for q in range(len(rnd)) if q % 5 == 4][:4] + [len(rnd) - 1]


SLOT_AFTER = slot_after(ROUND)
assert SLOT_AFTER == slot_after(ROUND4)[:4] + [len(ROUND) - 1] and len(slot_after(ROUND4)) == 5


def rust_str(fmt, names):
    """A `concat!` argument list for one line: literal text, and `$name` for each parameter, as operand names."""
    out, rest = [], fmt
    while "{" in rest:
        i = rest.index("{")
        j = rest.index("}", i)
        name = rest[i + 1:j]
        if rest[:i]:
            out.append('"%s"' % rest[:i])
        out.append(names[name])
        rest = rest[j + 1:]
    out.append('"%s\\n"' % rest)
    # Merge adjacent literals.
    merged = []
    for t in out:
        if merged and merged[-1].endswith('"') and t.startswith('"') and merged[-1].startswith('"'):
            merged[-1] = merged[-1][:-1] + t[1:]
        else:
            merged.append(t)
    return ", ".join(merged)


def round_macro(name, rnd, doc):
    """The text of one round macro `name` (the `asm!` text of the round `rnd`, with doc comment lines `doc`)."""
    reg = lambda v: '"{", stringify!($%s), "}"' % v
    names = {v: reg(v) for v in "abcdefgh"}
    names.update(x='"{t0}"', y=reg("y"), bc=reg("bc"), wk="$wk")
    l = doc + [
        "macro_rules! %s {" % name,
        "    ($a:ident $b:ident $c:ident $d:ident $e:ident $f:ident $g:ident $h:ident $y:ident $bc:ident $wk:literal",
        "     $s0:tt $s1:tt $s2:tt $s3:tt $s4:tt) => {",
        "        concat!(",
    ]
    slot = 0
    for q, (fmt, note) in enumerate(rnd):
        l.append("            %s,%s" % (rust_str(fmt, names), " // " + note if note else ""))
        if q in slot_after(rnd):
            l.append("            sha512_sched!%s," % ("$s%d" % slot))
            slot += 1
    return l + ["        )", "    };", "}"]


def macros():
    """The text of the three macros: `sha512_round!` and `sha512_round4!` (the one copy of each round) and
    `sha512_sched!`."""
    reg = lambda v: '"{", stringify!($%s), "}"' % v
    l = round_macro("sha512_round", ROUND, [
        "/// One SHA-512 round as `asm!` text (generated by `avx2_rounds.py macros`, which explains the register plan):",
        "/// the state words `$a..$h` and the scratch registers `$y` and `$bc` are `asm!` operand names (`t0` is the",
        "/// third scratch), `W + K` is at `$wk`. `$s0..$s4` are the schedule lines to interleave after the rounds'",
        "/// instructions 5, 10, 15, 20 and 24, as `sha512_sched!` arguments. `$c` is unused (the round reads `b ^ c`).",
    ])
    l.append("")
    l += round_macro("sha512_round4", ROUND4, [
        "/// [`sha512_round!`] with four-cycle recurrences and 25 integer operations (see `avx2_rounds.py`), for",
        "/// `block_asm`: the same operands; the schedule slots come after instructions 5, 10, 15, 20 and 27.",
    ])
    l += [
        "",
        "/// Lines of the four-lane schedule of `block_asm` (see `avx2_rounds.py`), as `asm!` text: `[j k l (q ...)]`",
        "/// is lines `q ...` of row `j` (relative to `{n}`), whose constant is lane `l` of the operand `k`.",
        "macro_rules! sha512_sched {",
        "    [$($j:tt $k:ident $l:tt ($($q:tt)*))*] => {",
        "        concat!($($(sha512_sched!(@ $q $j $k $l),)*)*)",
        "    };",
    ]
    snames = {"n": '"{n}"', "m": '"{m}"', "j": "$j", "k": reg("k"), "l": "$l"}
    for q, fmt in enumerate(SCHED):
        l.append("    (@ %d $j:tt $k:ident $l:tt) => {" % q)
        l.append("        concat!(%s)" % rust_str(fmt, snames))
        l.append("    };")
    l.append("}")
    return l


def invocations(n, wk, sched=None, name="sha512_round"):
    """`n` rounds as `name!` lines; `wk(r)` is the address of round r's W + K; `sched[r][s]` the
    schedule lines (list of (row, line)) of slot s of round r."""
    y, bc = "t1", "t2"
    out = []
    for r in range(n):
        regs = ["s%d" % ((i - r) % 8) for i in range(8)]
        slots = []
        for s in range(len(SLOT_AFTER)):
            items = sched[r][s] if sched else []
            txt, cur = [], None
            for (j, q) in items:
                if cur is None or cur[0] != j:
                    cur = (j, [])
                    txt.append(cur)
                cur[1].append(q)
            slots.append("[%s]" % " ".join("%d k%d %d (%s)" % (j, j // 4, j % 4, " ".join(map(str, qs))) for j, qs in txt))
        out.append("%s!(%s %s %s \"%s\" %s)," % (name, " ".join(regs), y, bc, wk(r), " ".join(slots)))
        y, bc = bc, y
    assert (y, bc) == ("t1", "t2")
    return out


def block(rnd=ROUND4, name="sha512_round4"):
    """`block_asm`'s text: 80 rounds of `rnd` (the macro `name`) with the schedule spread evenly over them (all of
    it done by round 72). `block5` is the same with the five-cycle round (`block_asm5`)."""
    total = 16 * len(SCHED)
    per = total / 72.0
    done = 0
    sched = []
    for r in range(80):
        slots = []
        for q in slot_after(rnd):
            due = min(total, round(per * (r + (q + 1) / len(rnd))))
            slots.append([(i // len(SCHED), i % len(SCHED)) for i in range(done, due)])
            done = max(done, due)
        sched.append(slots)
    assert done == total
    return ['"mov {t2}, {s1}",', '"xor {t2}, {s2}",'] + invocations(80, lambda r: "[{p} + %d]" % (32 * r), sched, name)


def stretch():
    """`rounds_at`'s eight rounds: W + K of round r at {p} + r {o} ({o} = 8 STRIDE), `b ^ c` in {t2} on entry and
    exit (eight name swaps bring it back)."""
    return invocations(8, lambda r: "[{p} + %d*{o}]" % r)


PARTS = {"macros": macros, "block": block, "block5": lambda: block(ROUND, "sha512_round"), "stretch": stretch}

if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        import os
        here = os.path.dirname(os.path.abspath(__file__))
        src = [l.strip() for l in open(os.path.join(here, "avx2.rs")).read().splitlines()]
        bad = 0
        for name, f in PARTS.items():
            want = [l.strip() for l in f()]
            n = len(want)
            if not any(src[i:i + n] == want for i in range(len(src) - n + 1)):
                print(f"sha2/avx2_rounds.py {name}: its {n} lines are not in sha2/avx2.rs as printed")
                bad += 1
        sys.exit(1 if bad else 0)
    if sys.argv[1:2] and sys.argv[1] in PARTS:
        print("\n".join(PARTS[sys.argv[1]]()))
    else:
        print("usage: avx2_rounds.py macros|block|block5|stretch|--check")
        sys.exit(2)
