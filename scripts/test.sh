#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this):
# system packages, a build of every crate (the end-to-end tests drive the
# built `mbhybrid` and `libmbhybrid_rt.so`) and of the runtime for each MPI,
# formatting and lints, then every unit and end-to-end test on MPICH, and
# the end-to-end tests that concern the MPI on Open MPI. End-to-end tests
# launch real MPI jobs one at a time (the harness serialises them), so this
# is safe on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# A clean checkout gains nothing from incremental compilation, which
# would write a second copy of every crate of the workspace to disk.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
df -h . | sed "s/^/disk: /"
cargo build --workspace --locked
bash scripts/build-runtimes.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# Open MPI: every module whose subject depends on the MPI. Left to MPICH
# alone: the search's differential and generator suites (the search reads
# traces, whatever MPI wrote them), static_report, mpich_values (MPICH's
# numeric constants), and gcc_c and
# bad_input, which test MPICH's int handles and an MPI 4 call. Of the
# acceptance suite's apps, CoMD (C) and miniFE (C++) run on Open MPI too:
# the others' builds would add minutes and test nothing else of the MPI.
MBHYBRID_MPI=openmpi cargo test --locked -p mbh-tests --test e2e -- \
  scenarios:: wildcards:: choices:: collectives:: buffering:: barriers:: \
  hangs:: faults:: fault_injection:: programs:: transparency:: oracle:: deterministic:: \
  completeness:: wrappers:: mpicc_builds:: cxx_names:: arguments:: divergence:: \
  reuse:: masquerade:: gcc_options:: patch_paths:: not_modelled:: rma:: rooted_early:: \
  stopping:: run_folders:: threads:: slurm:: apps::comd apps::minife
