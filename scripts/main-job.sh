#!/usr/bin/env bash
# fslab's main job on a new machine: install what it needs, build, and run
# seed 000's experiment (btrfs vs xfs vs ext4, each made fresh on a sparse
# image behind a loop device) at 1/100 of its published size.
set -euo pipefail
cd "$(dirname "$0")/.."
# The main job runs on this machine alone: no MPI needed.
export FSLAB_MPI=${FSLAB_MPI:-0}
source scripts/install-deps.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release -p fslab
./target/release/fslab run seed000-fsmark-sparse --scale 0.01 --repetitions 3
