#!/usr/bin/env bash
# Runs fslab's whole test suite. Privileged tests (loop devices, mkfs,
# mounts, tracefs) run for real as root; under CI=true they fail rather
# than skip when they cannot.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo build --workspace --all-targets
cargo test --workspace -- --test-threads 2
