#!/usr/bin/env bash
# The C tests of crates/pqkit-ffi (tests/c/*.c) compiled with AddressSanitizer and UndefinedBehaviorSanitizer
# and linked against the static library, then run: any out-of-bounds access, use after free, leak (a handle
# the C code forgot to free, or memory the library kept) or undefined behaviour on the C side of the boundary
# fails the run. The C code is strict C99 with every warning an error, as in crates/pqkit-ffi/tests/c_abi.rs.
# Then the same tests, built without sanitizers, under valgrind memcheck: the library's Rust code is not
# instrumented by the sanitizers, and valgrind sees its reads and writes too (an out-of-bounds write by a
# byte loop that ASan's memcpy interception misses, a read of uninitialised memory).
#
# Usage: .ci/c-sanitize.sh [--no-build]   (uses $CARGO_TARGET_DIR, default ./target; $CC, default cc)
#   --no-build   link the libpqkit_ffi.a an earlier `cargo build` left in target/debug (CI builds the whole
#                workspace with its own feature selection; `cargo build -p pqkit-ffi` would rebuild it)
set -euo pipefail
cd "$(dirname "$0")/.."
tgt=${CARGO_TARGET_DIR:-$PWD/target}
cc=${CC:-cc}
case "${1:-}" in
  --no-build) ;;
  "") cargo build -p pqkit-ffi --quiet ;;
  *) echo "c-sanitize: unknown argument '$1' (usage: .ci/c-sanitize.sh [--no-build])" >&2; exit 2 ;;
esac
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

if ! command -v valgrind >/dev/null; then
  if [ -n "${CI:-}" ]; then echo "c-sanitize: valgrind is missing (apt-get install valgrind)" >&2; exit 1; fi
  echo "WARNING: valgrind is not installed (apt-get install valgrind): the memcheck run is SKIPPED" >&2
  exit 0
fi
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -O1 -g \
  -I crates/pqkit-ffi/include crates/pqkit-ffi/tests/c/*.c "$lib" -lpthread -ldl -lm -o "$work/test_pqkit_plain"
valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
  "$work/test_pqkit_plain" | tee "$work/out-valgrind"
grep -q ', 0 failures$' "$work/out-valgrind"
