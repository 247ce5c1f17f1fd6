#!/usr/bin/env bash
# Installs what fslab needs on a new Debian machine: a Rust toolchain (if
# missing) and the mkfs tools of the filesystems its experiments compare.
set -euo pipefail
need=()
command -v mkfs.xfs >/dev/null 2>&1 || need+=(xfsprogs)
command -v mkfs.btrfs >/dev/null 2>&1 || need+=(btrfs-progs)
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
command -v losetup >/dev/null 2>&1 || need+=(mount)
# dbench's own loadfile (for the replay test) and the report's headless browser.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -f /usr/share/dbench/client.txt ] || need+=(dbench)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "cargo not found: install Rust (https://rustup.rs or apt-get install cargo)" >&2
    exit 1
  fi
fi
