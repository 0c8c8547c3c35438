#!/bin/sh
# Installs the pqkit C library as a C library is installed (what `cargo cinstall` from cargo-c does, without
# needing cargo-c): the header, the static library, the shared library under its full version with the SONAME
# and development links, and a pkg-config file.
#
#   crates/pqkit-ffi/install.sh [--prefix DIR] [--libdir DIR] [--includedir DIR] [--profile release|dev]
#                               [--no-build]
#
#   --prefix DIR      installation prefix (default /usr/local)
#   --libdir DIR      libraries and pkgconfig/ (default PREFIX/lib)
#   --includedir DIR  the header (default PREFIX/include)
#   --profile NAME    the cargo profile to build and install (default release; dev is what the tests build)
#   --no-build        install what the profile already built
#   DESTDIR           (environment) staged installs, as for make: files go to DESTDIR/PREFIX/...
#
# The result, for version X.Y.Z (major X):
#   PREFIX/include/pqkit.h
#   LIBDIR/libpqkit_ffi.a
#   LIBDIR/libpqkit_ffi.so.X.Y.Z        the library, SONAME libpqkit_ffi.so.X
#   LIBDIR/libpqkit_ffi.so.X -> libpqkit_ffi.so.X.Y.Z   what programs load
#   LIBDIR/libpqkit_ffi.so   -> libpqkit_ffi.so.X       what -lpqkit_ffi finds when linking
#   LIBDIR/pkgconfig/pqkit.pc           cc app.c $(pkg-config --cflags --libs pqkit)
set -eu

prefix=/usr/local
libdir=
includedir=
profile=release
build=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --libdir) libdir=$2; shift 2 ;;
    --includedir) includedir=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --no-build) build=no; shift ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$prefix" in /*) ;; *) echo "install.sh: --prefix must be an absolute path, got '$prefix'" >&2; exit 2 ;; esac
libdir=${libdir:-$prefix/lib}
includedir=${includedir:-$prefix/include}
destdir=${DESTDIR:-}

crate=$(cd "$(dirname "$0")" && pwd)
cd "$crate"
# The version from cargo itself: "path+file:///...#pqkit-ffi@0.1.0" or "...#0.1.0".
version=$(cargo pkgid -p pqkit-ffi | sed 's/.*[#@]//')
major=${version%%.*}
case "$profile" in
  release) outdir=release ;;
  dev) outdir=debug ;;
  *) echo "install.sh: --profile must be release or dev, got '$profile'" >&2; exit 2 ;;
esac
target=${CARGO_TARGET_DIR:-$(cd ../.. && pwd)/target}
if [ "$build" = yes ]; then
  cargo build --profile "$profile" -p pqkit-ffi
fi
for f in libpqkit_ffi.a libpqkit_ffi.so; do
  [ -f "$target/$outdir/$f" ] || { echo "install.sh: $target/$outdir/$f is missing (build it first)" >&2; exit 1; }
done

lib_dest=$destdir$libdir
inc_dest=$destdir$includedir
mkdir -p "$lib_dest/pkgconfig" "$inc_dest"
install -m 644 include/pqkit.h "$inc_dest/pqkit.h"
install -m 644 "$target/$outdir/libpqkit_ffi.a" "$lib_dest/libpqkit_ffi.a"
install -m 755 "$target/$outdir/libpqkit_ffi.so" "$lib_dest/libpqkit_ffi.so.$version"
ln -sf "libpqkit_ffi.so.$version" "$lib_dest/libpqkit_ffi.so.$major"
ln -sf "libpqkit_ffi.so.$major" "$lib_dest/libpqkit_ffi.so"
sed -e "s|@PREFIX@|$prefix|; s|@LIBDIR@|$libdir|; s|@INCLUDEDIR@|$includedir|; s|@VERSION@|$version|" \
  pqkit.pc.in >"$lib_dest/pkgconfig/pqkit.pc"
echo "installed pqkit $version: $inc_dest/pqkit.h, $lib_dest/libpqkit_ffi.{a,so,so.$major,so.$version}," \
  "$lib_dest/pkgconfig/pqkit.pc"
