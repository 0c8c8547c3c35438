#!/usr/bin/env bash
# The C install step as a user runs it: crates/pqkit-ffi/install.sh into a temporary prefix, then a C program
# compiled and linked only through `pkg-config --cflags --libs pqkit`, against the shared library (which must
# load by its SONAME from the prefix) and against the static one, and run. CI installs the dev profile (the
# build the tests already made); users install the release profile, the default.
#
# Usage: .ci/c-install.sh [--no-build]   (--no-build: install what an earlier `cargo build` left in target/debug)
set -euo pipefail
cd "$(dirname "$0")/.."
cc=${CC:-cc}

# expect LINE COMMAND...: COMMAND succeeds and prints a line containing LINE (a fixed string). The output is read
# whole before it is searched: `COMMAND | grep -q` under pipefail fails at random when grep exits at the first
# match while COMMAND is still writing (the loader behind ldd writes a line per write(2) and dies of SIGPIPE).
expect() {
  local want=$1 out
  shift
  if ! out=$("$@" 2>&1); then
    printf 'c-install: `%s` failed; its output:\n%s\n' "$*" "$out" >&2
    exit 1
  fi
  if ! grep -qF -- "$want" <<<"$out"; then
    printf 'c-install: `%s` did not print "%s"; it printed:\n%s\n' "$*" "$want" "$out" >&2
    exit 1
  fi
}
# same NAME GOT WANT: a named value is what it must be.
same() {
  if [ "$2" != "$3" ]; then
    echo "c-install: $1 is '$2', expected '$3'" >&2
    exit 1
  fi
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
install_args=(--profile dev --prefix "$prefix")
case "${1:-}" in
  --no-build) install_args+=(--no-build) ;;
  "") ;;
  *) echo "c-install: unknown argument '$1' (usage: .ci/c-install.sh [--no-build])" >&2; exit 2 ;;
esac
crates/pqkit-ffi/install.sh "${install_args[@]}"
version=$(cargo pkgid -p pqkit-ffi | sed 's/.*[#@]//')
major=${version%%.*}
lib=$prefix/lib
same "the link libpqkit_ffi.so" "$(readlink "$lib/libpqkit_ffi.so")" "libpqkit_ffi.so.$major"
same "the link libpqkit_ffi.so.$major" "$(readlink "$lib/libpqkit_ffi.so.$major")" "libpqkit_ffi.so.$version"
expect "Library soname: [libpqkit_ffi.so.$major]" readelf -d "$lib/libpqkit_ffi.so.$version"
export PKG_CONFIG_PATH=$lib/pkgconfig
same "pkg-config --modversion pqkit" "$(pkg-config --modversion pqkit)" "$version"

# Shared: the program records the SONAME and loads it from the prefix.
# shellcheck disable=SC2046  # pkg-config output is a list of flags
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror examples/c/demo.c $(pkg-config --cflags --libs pqkit) \
  -Wl,-rpath,"$lib" -o "$work/demo-shared"
expect "Shared library: [libpqkit_ffi.so.$major]" readelf -d "$work/demo-shared"
expect "libpqkit_ffi.so.$major => $lib/libpqkit_ffi.so.$major" ldd "$work/demo-shared"
expect 'tampered message rejected' "$work/demo-shared"

# Static: the archive and the system libraries pkg-config lists as private.
# shellcheck disable=SC2046
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror examples/c/demo.c $(pkg-config --cflags pqkit) \
  "$lib/libpqkit_ffi.a" $(pkg-config --static --libs-only-l pqkit | sed 's/-lpqkit_ffi//') -o "$work/demo-static"
static_dynamic=$(readelf -d "$work/demo-static")
if grep -qF libpqkit_ffi <<<"$static_dynamic"; then
  echo "c-install: the static build links the shared library" >&2
  exit 1
fi
expect 'tampered message rejected' "$work/demo-static"
echo "C install step: header, libpqkit_ffi.a, libpqkit_ffi.so.$version (SONAME libpqkit_ffi.so.$major) and" \
  "pqkit.pc installed; shared and static programs built with pkg-config and run"
