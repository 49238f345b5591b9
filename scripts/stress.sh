#!/usr/bin/env bash
# Stress (issue 12): N verifications in a row (default 200) of a program
# that deadlocks (tests/programs/e1_recv_recv.c) and one that crashes
# (tests/programs/segfault_rank1.c), alternating. After each one:
#   - the report names the finding and `verify` exits 1;
#   - no process of the program, no mpiexec/hydra of this script, is left;
#   - no MPICH shared-memory segment is left in /dev/shm;
# and at the end, the run directories' sizes per run are stable (the last
# tenth of the runs is no larger than the first tenth) and this shell holds
# no more file descriptors than it started with.
# Prints one summary line; exit 1 on the first violation.
#
#   bash scripts/stress.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
cargo build -q --workspace --locked
mbh=$PWD/target/debug/mbhybrid
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$mbh" build -o "$work/deadlock" tests/programs/e1_recv_recv.c >/dev/null 2>&1
"$mbh" build -o "$work/crash" tests/programs/segfault_rank1.c >/dev/null 2>&1

fail() { echo "stress: $*" >&2; exit 1; }
shm_before=$(ls /dev/shm | wc -l)
fds_before=$(ls /proc/$$/fd | wc -l)
sizes=()
started=$(date +%s)
for i in $(seq 1 "$n"); do
  if (( i % 2 )); then prog=deadlock kind=deadlock; else prog=crash kind=crash; fi
  runs="$work/runs-$i"
  set +e
  "$mbh" verify --format json -n 2 --timeout 60 --run-dir "$runs" "$work/$prog" >"$work/report.json" 2>"$work/stderr"
  status=$?
  set -e
  [[ $status == 1 ]] || fail "run $i ($prog): exit $status, expected 1: $(tail -3 "$work/stderr")"
  grep -q "\"kind\": \"$kind\"" "$work/report.json" || fail "run $i ($prog): no $kind finding"
  if pgrep -f "$work/$prog" >/dev/null; then
    fail "run $i ($prog): processes left: $(pgrep -af "$work/$prog")"
  fi
  sizes+=("$(du -sk "$runs" | cut -f1)")
  rm -rf "$runs"
done
elapsed=$(( $(date +%s) - started ))
shm_after=$(ls /dev/shm | wc -l)
(( shm_after <= shm_before )) || fail "/dev/shm grew from $shm_before to $shm_after entries: $(ls -t /dev/shm | head -5)"
fds_after=$(ls /proc/$$/fd | wc -l)
(( fds_after <= fds_before )) || fail "this shell's descriptors grew from $fds_before to $fds_after"
tenth=$(( n / 10 > 0 ? n / 10 : 1 ))
first=0 last=0
for s in "${sizes[@]:0:$tenth}"; do first=$(( first + s )); done
for s in "${sizes[@]: -$tenth}"; do last=$(( last + s )); done
(( last <= first + tenth * 4 )) || fail "run directories grew: first $tenth runs ${first} KiB, last $tenth ${last} KiB"
echo "stress: $n verifications (deadlock and crash alternating) in ${elapsed} s: no process, /dev/shm entry or descriptor left; run directory $(( first / tenth )) KiB per run at the start, $(( last / tenth )) KiB at the end"
