#!/usr/bin/env bash
# Cargo's runner for the aarch64 test binaries (CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER): qemu-user, with a
# time limit per binary, so a binary that hangs fails its stage with its name instead of using up
# the whole CI budget. The slowest binary needs a few minutes under qemu.
#
# qemu-user can deadlock in a child process when a guest with several running threads forks: the child inherits
# an emulator lock that another thread held at the fork. The test binaries that start programs (the openssl
# command, a missing program) all include tests/common/tool.rs, so its test's name marks them; they run with one
# test thread, so no other guest thread is running when they fork. The rest keep libtest's parallelism.
limit=${PQKIT_QEMU_LIMIT:-1200}
args=("$@")
if grep -q a_missing_tool_fails_under_ci_and_is_reported_elsewhere "$1"; then
  args+=(--test-threads=1)
fi
timeout --kill-after=30 "$limit" qemu-aarch64 -L /usr/aarch64-linux-gnu "${args[@]}"
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "qemu-aarch64: $(basename "$1") did not finish within $limit s and was stopped" >&2
fi
exit "$rc"
