#!/usr/bin/env bash
# Runs fslab's whole test suite. Privileged tests (loop devices, mkfs,
# mounts, tracefs) run for real as root; under CI=true they fail rather
# than skip when they cannot.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
export PATH="$HOME/.cargo/bin:$PATH"
# With MPI scale-out (Open MPI from install-deps.sh), so its tests run for real.
features=(--features fslab/mpi)
# Formatting and lints are part of the suite: code that fails them does not land.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  command -v rustup >/dev/null 2>&1 && rustup component add rustfmt clippy || true
fi
cargo fmt --all --check
cargo clippy --workspace --all-targets "${features[@]}" -- -D warnings
cargo build --workspace --all-targets "${features[@]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
# --no-fail-fast: one failing test binary does not hide the others' results.
cargo test --workspace --no-fail-fast "${features[@]}" -- --test-threads 2 2>&1 | tee "$log" || status=$?
# The cluster crate again without MPI: how a build without it refuses to be a rank.
cargo test -p fslab-cluster -- --test-threads 2 2>&1 | tee -a "$log" || status=$?
# One closing line for the whole suite (cargo prints one per test binary).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1); if ($(i) ~ /^ignored;?$/) s += $(i-1) } }
     END { printf "fslab test suite: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
exit $status
