#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this):
# system packages, a build of every crate (the end-to-end tests drive the
# built `mbhybrid` and `libmbhybrid_rt.so`), formatting and lints, then every
# unit and end-to-end test. End-to-end tests launch real MPI jobs one at a
# time (the harness serialises them), so this is safe on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cargo build --workspace --locked
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
