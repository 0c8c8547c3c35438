#!/usr/bin/env python3
# Prints the `asm!` template lines of the unrolled routines of the RSA BMI2/ADX backend (rsa/bmi2_adx.rs), one
# routine per argument; each goes as printed into the `asm!` block of that routine, in rsa/bmi2_adx/<routine>.rs.
# `--check` checks that every such block holds exactly those lines, no more and no fewer (CI: .ci/check-generated.py).
#
# `sqr_cross_16`, `sqr_cross_24`, `sqr_cross_32`: the cross products of the square of an n-limb `a`,
#   t += Σ_{i<j} a_i·a_j·2^(64·(i + j)) into a zeroed `t` of 2n words, as n − 1 rows. Row i multiplies a[i]
#   (in rdx) by a[i + 1 .. n] and adds the products at t[2i + 1 ..]; its last high word is the row's carry word,
#   stored at t[i + n] (no earlier row reaches that word). A row is the `row_body!` pattern of
#   bmi2_adx.rs written out: each `mulx` gives a low word, added to the old t word by the `adcx` chain (CF), and
#   a high word, added to the next low word by the `adox` chain (OF). Register plan: `{c}` and `{h0}` take the
#   high words in turn (product k of a row writes `{h0}` when k is even, `{c}` when odd, so the high word that
#   the next product's low word needs is never overwritten before it is added), `{l0}` and `{l1}` the low words
#   in the same turn, rdx the row's factor; `{c}` is zeroed at the start of a row (it is the first `adox`
#   operand, and the `xor` clears CF and OF), and at the end both chains' carries go into the last high word.
#
# `reduce_window_16`: the 16-limb Montgomery reduction (the CRT primes of RSA-2048). Sixteen rows, row i adding
#   u_i·m at t[i ..] with u_i = t[i]·m0inv, done as two passes of eight rows; pass p keeps the eight words
#   t[8p .. 8p + 8] in the registers `{w0}`..`{w7}` (the window) instead of loading and storing t once per row.
#   - First half: for each row, u = window's lowest word · m0inv (m0inv at t[32], u saved at t[33 + r] for the
#     second half), window += u·m[0..8] (the lowest word becomes zero and its register takes the carry: it is the
#     window's new top word, so the window rotates by one register per row; `adc` adds the CF left over).
#   - The window now holds words 8p + 8 .. 8p + 16 of those rows' partial sum: t's old words there are added
#     (`add`/`adc`, the carry saved as a byte at t[41]).
#   - Second half: for the same eight factors (reloaded from t[33 ..]), window += u·m[8..16]; after the first
#     product the window's lowest word is final for this pass: it is stored to t[8p + 8 + r] and its register
#     zeroed to become the new top word (again one rotation per row).
#   - The window then belongs at words 8p + 16 .. 8p + 24. Pass 0 adds it (with the byte at t[41]) into
#     t[16 .. 24], carry saved as a byte at t[42]; pass 1 adds t[24 .. 32] and the two saved carries on the two
#     chains, stores t[24 .. 32], and leaves the top bit in `{hi}`.
#   Registers: `{w0}`..`{w7}` the window, rdx the row's factor, `{hi}`/`{lo}` one product's halves.
import os
import sys


def q(s):
    """One line of the `asm!` template as Rust source: the string literal and its comma."""
    return '"%s",' % s


def sqr_cross(n):
    """The cross products of an `n`-limb square (see above), n − 1 rows, fully unrolled."""
    out = []
    for i in range(n - 1):
        out += [q("mov rdx, qword ptr [{a} + %d]" % (8 * i)), q("xor {c:e}, {c:e}")]
        for k, j in enumerate(range(i + 1, n)):
            off = 8 * (i + j)  # byte offset of t[i + j]
            hi, lo, prev = ("h0", "l0", "c") if k % 2 == 0 else ("c", "l1", "h0")
            out += [
                q("mulx {%s}, {%s}, qword ptr [{a} + %d]" % (hi, lo, 8 * j)),
                q("adcx {%s}, qword ptr [{t} + %d]" % (lo, off)),
                q("adox {%s}, {%s}" % (lo, prev)),
                q("mov qword ptr [{t} + %d], {%s}" % (off, lo)),
            ]
        last = "h0" if (n - 1 - i) % 2 == 1 else "c"  # the high word of the row's last product
        out += [
            q("mov {l0:e}, 0"),
            q("adcx {%s}, {l0}" % last),
            q("adox {%s}, {l0}" % last),
            q("mov qword ptr [{t} + %d], {%s}" % (8 * (i + n), last)),
        ]
    return out


# Byte offsets in t of reduce_window_16's scratch (after the 32-word product): m0inv, the pass's eight factors u,
# the carry of the window's additions (one byte) and the carry of pass 0's last addition (one byte): words 32 .. 43,
# which the Rust side names WIN16_K and WIN16_LEN.
K, U, CW, C0 = 8 * 32, 8 * 33, 8 * 41, 8 * 42


def reduce_window_16():
    """The 16-limb reduction as two passes of an eight-row register window (see above)."""
    out = []
    for p in range(2):
        base = 8 * p  # the pass's first row
        w = ["w%d" % r for r in range(8)]  # w[0] holds the window's lowest word
        out += [q("mov {%s}, qword ptr [{t} + %d]" % (w[r], 8 * (base + r))) for r in range(8)]
        for r in range(8):  # first half: window += u·m[0..8]
            out += [
                q("mov rdx, {%s}" % w[0]),
                q("imul rdx, qword ptr [{t} + %d]" % K),
                q("mov qword ptr [{t} + %d], rdx" % (U + 8 * r)),
                q("xor {lo:e}, {lo:e}"),
            ]
            for l in range(8):
                out += [
                    q("mulx {hi}, {lo}, qword ptr [{m} + %d]" % (8 * l)),
                    q("adcx {%s}, {lo}" % w[l]),
                    q("adox {%s}, {hi}" % w[(l + 1) % 8]),
                ]
            out.append(q("adc {%s}, 0" % w[0]))
            w = w[1:] + w[:1]
        out += [q("%s {%s}, qword ptr [{t} + %d]" % ("adc" if r else "add", w[r], 8 * (base + 8 + r))) for r in range(8)]
        out.append(q("setc byte ptr [{t} + %d]" % CW))
        for r in range(8):  # second half: window += u·m[8..16], one finished word stored per row
            out += [q("mov rdx, qword ptr [{t} + %d]" % (U + 8 * r)), q("xor {lo:e}, {lo:e}")]
            for l in range(8):
                out += [
                    q("mulx {hi}, {lo}, qword ptr [{m} + %d]" % (8 * (8 + l))),
                    q("adcx {%s}, {lo}" % w[l]),
                ]
                if l == 0:
                    out += [q("mov qword ptr [{t} + %d], {%s}" % (8 * (base + 8 + r), w[0])), q("mov {%s}, 0" % w[0])]
                out.append(q("adox {%s}, {hi}" % w[(l + 1) % 8]))
            out.append(q("adc {%s}, 0" % w[0]))
            w = w[1:] + w[:1]
        if p == 0:  # t[16 .. 24] += window + the saved carry; its carry saved
            out.append(q("bt qword ptr [{t} + %d], 0" % CW))
            out += [q("adc qword ptr [{t} + %d], {%s}" % (8 * (16 + r), w[r])) for r in range(8)]
            out.append(q("setc byte ptr [{t} + %d]" % C0))
        else:  # t[24 .. 32] = window + t[24 .. 32] + both saved carries; the top bit into {hi}
            out += [
                q("movzx {lo:e}, byte ptr [{t} + %d]" % CW),
                q("movzx {hi:e}, byte ptr [{t} + %d]" % C0),
                q("add {lo}, {hi}"),
                q("xor {hi:e}, {hi:e}"),
            ]
            for r in range(8):
                out += [
                    q("adcx {%s}, qword ptr [{t} + %d]" % (w[r], 8 * (24 + r))),
                    q("adox {%s}, {%s}" % (w[r], "lo" if r == 0 else "hi")),
                    q("mov qword ptr [{t} + %d], {%s}" % (8 * (24 + r), w[r])),
                ]
            out += [q("mov {lo:e}, 0"), q("adcx {hi}, {lo}"), q("adox {hi}, {lo}")]
    return out


PARTS = {
    "sqr_cross_16": lambda: sqr_cross(16),
    "sqr_cross_24": lambda: sqr_cross(24),
    "sqr_cross_32": lambda: sqr_cross(32),
    "reduce_window_16": reduce_window_16,
}


# Where each routine lives (relative to this script's folder): one file of its own, rsa/bmi2_adx/<routine>.rs.
FILES = {name: "bmi2_adx/%s.rs" % name for name in PARTS}


def asm_template(path, name):
    """The template lines (string literals, stripped) of the `asm!` block of `fn name` in the file at `path`, or None
    if the file does not define `name` exactly once or the function has no `asm!` block."""
    src = [l.strip() for l in open(path).read().splitlines()]
    defs = [i for i, l in enumerate(src) if l.startswith(("fn %s(" % name, "pub(super) fn %s(" % name))]
    if len(defs) != 1:
        return None
    start = next((i for i in range(defs[0], len(src)) if src[i] == "asm!("), None)
    if start is None:
        return None
    out = []
    for l in src[start + 1:]:
        if not l.startswith('"'):
            break
        out.append(l)
    return out


def check():
    """0 if the `asm!` block of every routine holds exactly what this script prints for it, else 1 (and says where)."""
    here = os.path.dirname(os.path.abspath(__file__))
    bad = 0
    for name, f in PARTS.items():
        path = os.path.join(here, FILES[name])
        want, have = f(), asm_template(path, name) if os.path.exists(path) else None
        if have is None:
            print(f"rsa/bmi2_adx_rows.py {name}: rsa/{FILES[name]} does not define it once with an asm! block")
            bad += 1
        elif have != want:
            i = next((i for i, (a, b) in enumerate(zip(have, want)) if a != b), min(len(have), len(want)))
            print(f"rsa/bmi2_adx_rows.py {name}: the asm! text in rsa/{FILES[name]} differs from what it prints at"
                  f" template line {i + 1} (file {have[i] if i < len(have) else 'ends'!r},"
                  f" printed {want[i] if i < len(want) else 'ends'!r}; {len(have)} lines in the file, {len(want)} printed)")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        sys.exit(check())
    if len(sys.argv) == 2 and sys.argv[1] in PARTS:
        print("\n".join(PARTS[sys.argv[1]]()))
    else:
        print("usage: bmi2_adx_rows.py " + "|".join(PARTS) + "|--check")
        sys.exit(2)
