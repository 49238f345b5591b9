#!/usr/bin/env bash
# Installs every system package mbhybrid needs on Debian 12 (bookworm):
# MPICH 4 (runtime and headers), clang/LLVM 16 (the compiler `build` drives
# and the libraries inkwell links), and the few tools the build scripts use.
# Idempotent: when everything is present it checks and returns in a second.
set -euo pipefail

packages=(
  mpich libmpich-dev          # the MPI the runtime wraps and verify launches
  clang-16 llvm-16-dev libclang-16-dev  # build: C -> IR, inkwell, bindgen (mpi-sys)
  libpolly-16-dev             # llvm-config-16 --libs names Polly; harmless with prefer-dynamic
  zlib1g-dev libzstd-dev libxml2-dev libffi-dev libtinfo-dev libncurses-dev  # llvm-sys link deps
  pkg-config build-essential bc
  llvm-16                     # mbhybrid-cc: llvm-objcopy-16, llvm-ar-16 (llvm-16-dev pulls it in too)
  cmake                       # the compiler-driver tests build a CMake project with mbhybrid-cc
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

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
