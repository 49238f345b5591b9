#!/usr/bin/env bash
# The long differential soak of issue 11: N generated programs (seeds
# START.., default 0), each verified by the guided search under both clocks
# and both buffering modes and by the exhaustive reference; every outcome
# must agree. Mismatches print the program and the replay commands, and are
# shrunk to target/differential/shrunk-SEED.c.
#   bash scripts/soak.sh 2000 [START [SECS]]   (SECS: start no program after it)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
# The whole workspace: `--bins` alone would not build the runtime library.
cargo build --workspace --locked
exec target/debug/soak "${1:-100}" "${2:-0}" ${3:+"$3"}
