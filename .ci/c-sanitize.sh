#!/usr/bin/env bash
# The C tests of crates/pqkit-ffi (tests/c/*.c) compiled with AddressSanitizer and UndefinedBehaviorSanitizer
# and linked against the static library, then run: any out-of-bounds access, use after free, leak (a handle
# the C code forgot to free, or memory the library kept) or undefined behaviour on the C side of the boundary
# fails the run. The C code is strict C99 with every warning an error, as in crates/pqkit-ffi/tests/c_abi.rs.
#
# Usage: .ci/c-sanitize.sh   (uses $CARGO_TARGET_DIR, default ./target; $CC, default cc)
set -euo pipefail
cd "$(dirname "$0")/.."
tgt=${CARGO_TARGET_DIR:-$PWD/target}
cc=${CC:-cc}
cargo build -p pqkit-ffi --quiet
lib="$tgt/debug/libpqkit_ffi.a"
[ -f "$lib" ] || { echo "c-sanitize: $lib was not built" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -O1 -g -fno-omit-frame-pointer \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  -I crates/pqkit-ffi/include crates/pqkit-ffi/tests/c/*.c "$lib" -lpthread -ldl -lm -o "$work/test_pqkit_asan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$work/test_pqkit_asan" | tee "$work/out"
grep -q ', 0 failures$' "$work/out"
