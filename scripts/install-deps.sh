#!/usr/bin/env bash
# Installs what fslab needs on a new Debian machine: a Rust toolchain (if
# missing) and the mkfs tools of the filesystems its experiments compare.
set -euo pipefail
need=()
command -v mkfs.xfs >/dev/null 2>&1 || need+=(xfsprogs)
command -v mkfs.btrfs >/dev/null 2>&1 || need+=(btrfs-progs)
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
command -v losetup >/dev/null 2>&1 || need+=(mount)
# The parity tests count the originals' and fslab's system calls.
command -v strace >/dev/null 2>&1 || need+=(strace)
# dbench's own loadfile (for the replay test) and the report's headless browser.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -f /usr/share/dbench/client.txt ] || need+=(dbench)
# The man pages' test renders them with groff.
command -v groff >/dev/null 2>&1 || need+=(groff-base)
# The originals the parity tests run beside fslab: fs_mark 3.3 (dbench above).
command -v fs_mark >/dev/null 2>&1 || need+=(fsmark)
# A benchmark fslab runs as a program (fslab exec, kind = "command"): Debian's fio.
command -v fio >/dev/null 2>&1 || need+=(fio)
# MPI scale-out (the `mpi` feature, which the test suite builds): Open MPI
# and libclang for the bindings of the `mpi` crate.
if [ "${FSLAB_MPI:-1}" = 1 ]; then
  command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
  dpkg -s libopenmpi-dev >/dev/null 2>&1 || need+=(libopenmpi-dev)
  dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
  # Namespace hosts for the multi-host tests: ip netns, veth, bridges; nsenter.
  command -v ip >/dev/null 2>&1 || need+=(iproute2)
  command -v nsenter >/dev/null 2>&1 || need+=(util-linux)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
# Cells on other kernels (docs/kernels.md): QEMU with its virtiofsd, a
# static busybox for the guest's init, and Debian's package lists, from
# which `debian:RELEASE` kernels are fetched (apt-get download, into
# fslab's cache, when a test or an experiment first boots one).
guest=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || guest+=(qemu-system-x86)
{ [ -x /usr/lib/qemu/virtiofsd ] || command -v virtiofsd >/dev/null 2>&1; } || guest+=(qemu-system-common)
dpkg -s busybox-static >/dev/null 2>&1 || guest+=(busybox-static)
if [ ${#guest[@]} -gt 0 ] || ! apt-cache show linux-image-6.1.0-50-cloud-amd64 >/dev/null 2>&1; then
  echo "installing for guests: ${guest[*]:-package lists only}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  if [ ${#guest[@]} -gt 0 ]; then
    apt-get install -y -qq --no-install-recommends "${guest[@]}" >/dev/null
  fi
fi
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "cargo not found: install Rust (https://rustup.rs or apt-get install cargo)" >&2
    exit 1
  fi
fi
