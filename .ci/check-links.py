#!/usr/bin/env python3
"""Every relative link in the repository's Markdown files must resolve to a file or directory.

Checks inline links and images, `[text](target)` and `![alt](target)`, outside fenced code blocks and inline
code. Absolute URLs (with a scheme) and in-page anchors (`#...`) are not checked; a `#fragment` after a path is
dropped before the path is checked. Files are the ones git tracks, so build output is never scanned.
Exits 1 and lists each broken link as `file:line: target`.
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`+[^`]*`+")


def links(text):
    """(line number, target) of every inline link outside code."""
    in_fence = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for m in LINK.finditer(INLINE_CODE.sub("", line)):
            yield n, m.group(1)


def broken(root, md_path, text):
    base = os.path.dirname(md_path)
    for n, target in links(text):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if not path:
            continue
        resolved = os.path.normpath(os.path.join(root, base, path))
        if not os.path.exists(resolved):
            yield n, target


def main():
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
    files = subprocess.run(["git", "ls-files", "*.md"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    bad = []
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            for n, target in broken(root, f, fh.read()):
                bad.append(f"{f}:{n}: {target}")
    for b in bad:
        print(b, file=sys.stderr)
    print(f"checked {len(files)} Markdown files: {len(bad)} broken relative links")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
