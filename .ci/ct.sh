#!/usr/bin/env bash
# Constant-time job: runs crates/pqkit-ct under valgrind memcheck with the secret inputs of
# every operation marked undefined (valgrind client requests), under PQKIT_CPU=portable, avx2 and native.
# The library is built with `--cfg pqkit_ct_check`, where `pqkit::ct::declassify` marks each public decision
# (a tag check's outcome, a rejection, a validity verdict) defined for memcheck at the decision itself; any other
# report fails the job with its source line. A self-test first proves the job can fail: a deliberately secret-dependent
# branch must be reported. Operations: AEADs, Poly1305, HMAC-SHA256 and -SHA512, ML-KEM, ML-DSA, X25519 (one at a time and derive_many), Ed25519 (one at a time, from_seeds_many and sign_many), SHA-512 of many messages (the lanes of the batched Ed25519), P-256, secp256k1,
# RSA-2048 (signing, also on every other RSA backend, and both decryptions; key and blinding secret), X25519MLKEM768, X-Wing and HPKE open.
# Measured: about 30 s after the build (23 operations x 3 caps; 2 shared cores), the build 2-3 minutes cold.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null; then
  echo "== ct: installing valgrind"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq valgrind >/dev/null
fi

echo "== ct: build (release, with debug info for the reports' source lines)"
# A target directory of its own: the cfg changes every crate's flags, and sharing the main one would make the
# next ordinary build recompile everything.
ct_target="${CARGO_TARGET_DIR:-$PWD/target}/ct"
CARGO_TARGET_DIR="$ct_target" RUSTFLAGS="${RUSTFLAGS:-} --cfg pqkit_ct_check" CARGO_PROFILE_RELEASE_DEBUG=true \
  cargo build --release -p pqkit-ct
bin="$ct_target/release/pqkit-ct"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
vg=(valgrind --tool=memcheck --error-exitcode=99 --fullpath-after= --num-callers=8)

echo "== ct: self-test (a secret-dependent branch must be flagged)"
set +e
"${vg[@]}" "$bin" --require-valgrind leak >"$work/leak.log" 2>&1
rc=$?
"$bin" check-log "$work/leak.log" >"$work/leak.check" 2>&1
check_rc=$?
set -e
if [ "$rc" -ne 99 ] || [ "$check_rc" -eq 0 ]; then
  echo "ct self-test FAILED: valgrind exit $rc (want 99), check-log exit $check_rc (want non-zero):" >&2
  echo "the harness cannot detect a secret-dependent branch" >&2
  cat "$work/leak.log" "$work/leak.check" >&2
  exit 1
fi
echo "self-test ok: the deliberate leak was reported"

# Valgrind's virtual CPU has no AVX-512 (it exposes up to AVX2, AES-NI, PCLMULQDQ): "native" under valgrind
# is the best tier valgrind emulates, not the host's.
# The three runs are independent single-threaded processes: all three at once, then each log checked in turn.
caps=(portable avx2 native)
for cap in "${caps[@]}"; do
  echo "== ct: all operations under PQKIT_CPU=$cap"
  ( if PQKIT_CPU=$cap "${vg[@]}" "$bin" --require-valgrind all >"$work/$cap.log" 2>&1; then rc=0; else rc=$?; fi
    echo "$rc" >"$work/$cap.rc" ) &
done
wait
failed=0
for cap in "${caps[@]}"; do
  rc=$(cat "$work/$cap.rc")
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 99 ]; then
    echo "pqkit-ct failed under PQKIT_CPU=$cap (exit $rc):" >&2
    tail -n 40 "$work/$cap.log" >&2
    failed=1
    continue
  fi
  echo "-- PQKIT_CPU=$cap"
  grep -E '^backends ' "$work/$cap.log" || true
  grep -E '^ok ' "$work/$cap.log" | tr '\n' ' '
  echo
  if ! "$bin" check-log "$work/$cap.log"; then
    echo "secret-dependent branch or memory index under PQKIT_CPU=$cap; the memcheck log:" >&2
    cat "$work/$cap.log" >&2
    failed=1
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "constant-time job FAILED" >&2
  exit 1
fi
echo "constant-time job passed"
