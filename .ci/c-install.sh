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
[ "$(readlink "$lib/libpqkit_ffi.so")" = "libpqkit_ffi.so.$major" ]
[ "$(readlink "$lib/libpqkit_ffi.so.$major")" = "libpqkit_ffi.so.$version" ]
readelf -d "$lib/libpqkit_ffi.so.$version" | grep -q "Library soname: \[libpqkit_ffi.so.$major\]"
export PKG_CONFIG_PATH=$lib/pkgconfig
[ "$(pkg-config --modversion pqkit)" = "$version" ]

# Shared: the program records the SONAME and loads it from the prefix.
# shellcheck disable=SC2046  # pkg-config output is a list of flags
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror examples/c/demo.c $(pkg-config --cflags --libs pqkit) \
  -Wl,-rpath,"$lib" -o "$work/demo-shared"
readelf -d "$work/demo-shared" | grep -q "Shared library: \[libpqkit_ffi.so.$major\]"
ldd "$work/demo-shared" | grep -q "libpqkit_ffi.so.$major => $lib/libpqkit_ffi.so.$major"
"$work/demo-shared" | grep -q 'tampered message rejected'

# Static: the archive and the system libraries pkg-config lists as private.
# shellcheck disable=SC2046
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror examples/c/demo.c $(pkg-config --cflags pqkit) \
  "$lib/libpqkit_ffi.a" $(pkg-config --static --libs-only-l pqkit | sed 's/-lpqkit_ffi//') -o "$work/demo-static"
if readelf -d "$work/demo-static" | grep -q 'libpqkit_ffi'; then
  echo "c-install: the static build links the shared library" >&2
  exit 1
fi
"$work/demo-static" | grep -q 'tampered message rejected'
echo "C install step: header, libpqkit_ffi.a, libpqkit_ffi.so.$version (SONAME libpqkit_ffi.so.$major) and" \
  "pqkit.pc installed; shared and static programs built with pkg-config and run"
