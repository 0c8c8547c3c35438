#!/usr/bin/env bash
# Fuzzing job: builds every cargo-fuzz target in fuzz/ and runs each for FUZZ_SECONDS
# (default 20) seeded from its committed corpus fuzz/corpus/TARGET. A crash or a failed property fails the job
# and prints the reproducer (its bytes and the command that replays it). Needs the nightly toolchain and
# cargo-fuzz; fails loudly when either is missing. Whole job, build included: about 5 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${FUZZ_SECONDS:-20}
targets=(stream_decrypt stream_roundtrip ec_weierstrass ec_25519 mlkem mldsa bus_envelope bus_ingest rsa cli_checklist cli_hex)

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "ERROR: the fuzz job needs the nightly Rust toolchain (cargo-fuzz uses -Z flags)." >&2
  echo "       Install it with: rustup toolchain install nightly --profile minimal" >&2
  exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "ERROR: cargo-fuzz is missing. Install it with: cargo install cargo-fuzz --locked" >&2
  exit 1
fi

# No sanitizer: the targets check properties with assertions (debug assertions and overflow checks on), and
# the library's unsafe code is SIMD intrinsics on fixed-size arrays; ASan would double the build time.
echo "== fuzz: build"
(cd fuzz && cargo +nightly fuzz build --sanitizer none --debug-assertions)
bin_dir="${CARGO_TARGET_DIR:-$PWD/fuzz/target}/x86_64-unknown-linux-gnu/release"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One libFuzzer process per target, FUZZ_JOBS (default 2, one per core) at a time; each writes its own log.
jobs=${FUZZ_JOBS:-2}
fuzz_one() {
  local t=$1
  mkdir -p "$work/$t"
  # New inputs go to the scratch directory; the committed corpus is only read.
  if "$bin_dir/$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$work/$t-" "$work/$t" "fuzz/corpus/$t" >"$work/$t.log" 2>&1; then
    echo 0 >"$work/$t.rc"
  else
    echo $? >"$work/$t.rc"
  fi
}
for t in "${targets[@]}"; do
  while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  echo "== fuzz: $t (${secs}s)"
  fuzz_one "$t" &
done
wait
failed=()
for t in "${targets[@]}"; do
  if [ "$(cat "$work/$t.rc" 2>/dev/null || echo missing)" != 0 ]; then
    failed+=("$t")
    echo "FUZZ FAILURE in $t; the end of its log:" >&2
    tail -n 40 "$work/$t.log" >&2
    mkdir -p "fuzz/artifacts/$t"
    for a in "$work/$t"-*; do
      [ -e "$a" ] || continue
      cp "$a" "fuzz/artifacts/$t/"
      echo "reproducer fuzz/artifacts/$t/$(basename "$a") ($(wc -c <"$a") bytes):" >&2
      od -A x -t x1z -v -N 1024 "$a" >&2  # the first 1 KiB; `| head` would kill od with SIGPIPE under pipefail
      echo "replay: (cd fuzz && cargo +nightly fuzz run --sanitizer none --debug-assertions $t artifacts/$t/$(basename "$a"))" >&2
    done
  else
    echo "-- $t: $(grep -E '^stat::number_of_executed_units' "$work/$t.log" || true)"
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzzing passed (${#targets[@]} targets, ${secs}s each)"
