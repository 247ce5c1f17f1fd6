#!/usr/bin/env bash
# fslab's main job on a new machine: install what it needs, build, and run
# the main experiment.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release -p fslab
scratch=$(mktemp -d /dev/shm/fslab-main.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# seed 001's create / stat / unlink phases, 8 threads, on tmpfs
./target/release/fslab fsmark -S 0 -s 0 -n 20000 -t 8 -D 100 -N 1000 \
  -d "$scratch/0" -d "$scratch/1" -d "$scratch/2" -d "$scratch/3" \
  -d "$scratch/4" -d "$scratch/5" -d "$scratch/6" -d "$scratch/7" \
  -l "$scratch/fs_log.txt" --phases create,stat,unlink
./target/release/fslab results list | tail -n 1
