#!/usr/bin/env bash
# Builds mbhybrid's runtime library once per installed MPI: MPI's headers
# differ (MPICH's handles are ints, Open MPI's pointers), so one library
# cannot serve both. Each is built in a target directory of its own
# (`mpi-sys` reads `MPICC` only on a clean build) and copied to
# `<target>/<profile>/<mpi>/libmbhybrid_rt.so`, where `mbhybrid` looks for
# the runtime of an MPI other than the one `cargo build` built for.
#   bash scripts/build-runtimes.sh [--release]
# MPIs are found by Debian's wrapper names (`mpicc.mpich`, `mpicc.openmpi`);
# a missing one is reported and skipped. Takes a second when up to date.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=debug
flags=()
if [[ ${1:-} == --release ]]; then
  profile=release
  flags=(--release)
fi
target=${CARGO_TARGET_DIR:-target}
for mpi in mpich openmpi; do
  if ! command -v "mpicc.$mpi" >/dev/null; then
    echo "build-runtimes: mpicc.$mpi is not installed: no runtime for $mpi (scripts/install-deps.sh installs both MPIs)" >&2
    continue
  fi
  CARGO_TARGET_DIR="$target/mpi-$mpi" MPICC="mpicc.$mpi" \
    cargo build --locked --quiet -p mbh-runtime "${flags[@]}"
  mkdir -p "$target/$profile/$mpi"
  # A copy then a rename: a job still running has the old file mapped.
  cp "$target/mpi-$mpi/$profile/libmbhybrid_rt.so" "$target/$profile/$mpi/.libmbhybrid_rt.so.new"
  mv -f "$target/$profile/$mpi/.libmbhybrid_rt.so.new" "$target/$profile/$mpi/libmbhybrid_rt.so"
done
