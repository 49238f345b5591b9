#!/usr/bin/env bash
# Installs every system package mbhybrid needs on Debian 12 (bookworm):
# MPICH 4 and Open MPI 4 (runtimes and headers), clang/LLVM 16 (the compiler
# `build` drives and the libraries inkwell links), and the few tools the
# build scripts use. Idempotent: when everything is present it checks and
# returns in a second.
#
# Installing Open MPI makes Debian's alternatives point `mpicc`, `mpiexec`
# and `mpi.h` at it (its priority is higher than MPICH's). This script puts
# back what they pointed at before (MPICH on a fresh machine): which MPI the
# user's `mpicc` is must not change because mbhybrid was installed.
set -euo pipefail

packages=(
  mpich libmpich-dev          # the MPI the runtime wraps and verify launches
  openmpi-bin libopenmpi-dev  # the second supported MPI (--mpi openmpi)
  clang-16 llvm-16-dev libclang-16-dev  # build: C -> IR, inkwell, bindgen (mpi-sys)
  libpolly-16-dev             # llvm-config-16 --libs names Polly; harmless with prefer-dynamic
  zlib1g-dev libzstd-dev libxml2-dev libffi-dev libtinfo-dev libncurses-dev  # llvm-sys link deps
  pkg-config build-essential bc
  llvm-16                     # mbhybrid-cc: llvm-objcopy-16, llvm-ar-16 (llvm-16-dev pulls it in too)
  libomp-16-dev               # clang 16's OpenMP runtime: -fopenmp programs through build and the drivers
  slurm-wlm                   # the Slurm tests: verify through srun and sbatch on a one-node cluster (scripts/slurm-local.sh)
  cmake                       # the compiler-driver tests build a CMake project with mbhybrid-cc
  patch                       # the barrier-audit tests apply the patches they write
  chromium                    # the HTML report's rendering test (headless)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} system packages present"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "install-deps: not root and no sudo; install as root: apt-get install ${missing[*]}" >&2
    exit 2
  fi
fi

# The MPI alternatives and what each points at now ("" when unset).
mpi_groups=(mpi mpirun mpi-x86_64-linux-gnu)
# update-alternatives exits 2 for a group that does not exist yet (no MPI
# installed: a fresh machine), which pipefail would turn into our exit.
chosen() {
  { update-alternatives --query "$1" 2>/dev/null || true; } | sed -n 's/^Value: //p'
}
declare -A chosen_before
for group in "${mpi_groups[@]}"; do
  chosen_before[$group]=$(chosen "$group")
done

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
# MPICH first, so that on a fresh machine it is the MPI the alternatives
# knew before Open MPI came.
"${sudo[@]}" apt-get install -y -qq --no-install-recommends \
  $(printf '%s\n' "${missing[@]}" | grep -v openmpi || true)
for group in "${mpi_groups[@]}"; do
  if [[ -z ${chosen_before[$group]} ]]; then
    chosen_before[$group]=$(chosen "$group")
  fi
done
if printf '%s\n' "${missing[@]}" | grep -q openmpi; then
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    $(printf '%s\n' "${missing[@]}" | grep openmpi)
fi
for group in "${mpi_groups[@]}"; do
  before=${chosen_before[$group]}
  now=$(chosen "$group")
  if [[ -n $before && $now != "$before" ]]; then
    "${sudo[@]}" update-alternatives --quiet --set "$group" "$before"
  fi
done
