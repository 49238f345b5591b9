#!/usr/bin/env bash
# Benchmarks for BENCHMARKS.md (not tests: numbers, not verdicts).
#
#   scripts/bench.sh [SCALE [PARTS]]   SCALE 10 = full size (default), 1 = a smoke run;
#                                      PARTS: any of overhead,interleaving,fib,jobs,run,kernels,analysis (default all)
#
# 1. Runtime overhead: bench/pingpong.c built once with plain `mpicc` and once
#    with `mbhybrid build`, run under mpiexec on 2, 4 and 8 ranks: plain MPICH,
#    the runtime with Lamport clocks (LLCP) and with vector clocks (LVCP).
#    Configurations alternate within each round so that the ratios come from
#    the same run of this script on the same (shared, noisy) machine.
# 2. Exploration cost: time per interleaving of `mbhybrid verify` against one
#    plain `mpiexec` launch of the same program, for 3, 4 and 8 ranks.
# 3. Fib's share of audit-barriers.
# 4. verify --jobs 1, 2, 4 on the same programs, alternating, median of 3.
# 5. mbhybrid run (deterministic execution, seed 002) against plain MPICH and
#    the runtime's normal run, on a halo exchange, the Fib diffusion kernel
#    and a master/worker program, alternating, median of 3.
# 6. Application kernels: bench/stencil.c (a 2-D halo-exchange stencil),
#    bench/rma_stencil.c (the same with MPI_Put and fences) and
#    bench/graph_exchange.c (a graph code's many small messages), plain
#    MPICH against the runtime as in verify's first run, alternating,
#    median of 5 of the kernels' own timed loops; their results must agree.
# 7. Post-run analysis at scale: the analyses verify and audit-barriers run
#    on a finished run's traces, on synthetic traces of 1,024 ranks of
#    SCALE x 1,000 calls each (fib/examples/analysis_scale.rs), phase by
#    phase with CPU time and peak memory.
# Prints Markdown tables on standard output.
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-10}
parts=${2:-overhead,interleaving,fib,jobs,run,kernels,analysis}
want() { [[ ",$parts," == *",$1,"* ]]; }
cargo build -q --release --workspace
mbh=$PWD/target/release/mbhybrid
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mpicc -O2 -o "$work/plain" bench/pingpong.c
"$mbh" build -o "$work/traced" bench/pingpong.c -- -O2 2>/dev/null

# run NP CONFIG: CONFIG is plain, lamport or vector. The traced binary was
# built with the access checks, so its runtime keeps the pending buffers
# as under `verify` (`watch_buffers`).
run() {
  local np=$1 config=$2 dir="$work/t-$1-$2"
  rm -rf "$dir"; mkdir -p "$dir"
  case $config in
    plain) env -u LD_LIBRARY_PATH mpiexec -n "$np" "$work/plain" "$scale" ;;
    *)
      printf '{"format":"mbhybrid-runtime","version":1,"clocks":"%s","buffering":"infinite","guidance":null,"watch_buffers":true}\n' \
        "$config" > "$dir/runtime.json"
      env -u LD_LIBRARY_PATH MBHYBRID_TRACE_DIR="$dir" mpiexec -n "$np" "$work/traced" "$scale" ;;
  esac
}

if want overhead; then
echo "## Runtime overhead (bench/pingpong.c, scale $scale)"
echo
for np in 2 4 8; do
  for config in plain lamport vector; do
    run "$np" "$config" > "$work/out-$np-$config"
  done
  echo "### $np ranks"
  echo
  echo "| measure | size (B) | plain MPICH | LLCP | LVCP | LLCP / plain | LVCP / plain |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  paste "$work/out-$np-plain" "$work/out-$np-lamport" "$work/out-$np-vector" | awk '
    $1 == "latency" { printf "| latency (µs) | %s | %s | %s | %s | %.2f | %.2f |\n", $2, $3, $6, $9, $6/$3, $9/$3 }
    $1 == "bandwidth" && $2 >= 4096 { printf "| bandwidth (MB/s) | %s | %s | %s | %s | %.2f | %.2f |\n", $2, $3, $6, $9, $6/$3, $9/$3 }
    $1 == "rate" { printf "| message rate (msg/s/rank) | 8 | %s | %s | %s | %.2f | %.2f |\n", $2, $4, $6, $4/$2, $6/$2 }'
  echo
done
fi

if want interleaving; then
echo "## Time per interleaving"
echo
echo "| program | ranks | interleavings | plain mpiexec (s) | verify per interleaving (s) | ratio |"
echo "| --- | --- | --- | --- | --- | --- |"
for spec in "tests/programs/s1_crooked_barrier.c:3" "tests/programs/r1_output_order.c:4" "tests/programs/r1_output_order.c:8"; do
  src=${spec%%:*}; np=${spec##*:}
  name=$(basename "$src" .c)
  mpicc -O2 -o "$work/$name-plain" "$src"
  "$mbh" build -o "$work/$name" "$src" -- -O2 2>/dev/null
  start=$(date +%s.%N)
  for _ in 1 2 3 4 5; do env -u LD_LIBRARY_PATH mpiexec -n "$np" "$work/$name-plain" > /dev/null 2>&1 || true; done
  plain=$(echo "($(date +%s.%N) - $start) / 5" | bc -l)
  start=$(date +%s.%N)
  n=$(env -u LD_LIBRARY_PATH "$mbh" verify -n "$np" --run-dir "$work/runs" --max-interleavings 200 --format json "$work/$name" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["interleavings"])' || true)
  total=$(echo "$(date +%s.%N) - $start" | bc -l)
  printf "| %s | %s | %s | %.3f | %.3f | %.2f |\n" "$name" "$np" "$n" "$plain" "$(echo "$total / $n" | bc -l)" \
    "$(echo "$total / $n / $plain" | bc -l)"
done
fi

if want fib; then
echo
echo "## Fib over exploration (bench/diffusion.c, 3 ranks, --loop-abstraction all)"
echo
echo "Fib's time and the exploration's, as audit-barriers measures them in the same run."
echo
echo "| steps | MPI calls per rank | barrier sites | exploration (s) | Fib (s) | Fib share |"
echo "| --- | --- | --- | --- | --- | --- |"
"$mbh" build -o "$work/diffusion" bench/diffusion.c -- -O2 2>/dev/null
for steps in ${FIB_STEPS:-125 1250 12500}; do
  # "barrier audit: N barrier sites judged over M interleaving(s) in F s (exploration E s)"
  line=$(env -u LD_LIBRARY_PATH "$mbh" audit-barriers -n 3 --loop-abstraction all --run-dir "$work/runs" \
    "$work/diffusion" "$steps" | grep '^barrier audit:' || true)
  read -r sites fib explored < <(echo "$line" | sed -E 's/.*: ([0-9]+) barrier sites .* in ([0-9.]+) s \(exploration ([0-9.]+) s\)/\1 \2 \3/')
  printf "| %s | %s | %s | %.2f | %.3f | %.1f%% |\n" "$steps" "$((steps * 8))" "$sites" "$explored" "$fib" \
    "$(echo "$fib / $explored * 100" | bc -l)"
done
fi

if want jobs; then
echo
echo "## verify --jobs ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start)"
echo
echo "Wall time of a whole verify, median of 3 rounds; each round runs --jobs 1, 2, 4 in turn."
echo
echo "| program | ranks | interleavings | --jobs 1 (s) | --jobs 2 (s) | --jobs 4 (s) | 2: speedup | 4: speedup | 4: runs taken / unused |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for spec in "tests/programs/f3_testany_irecvs.c:3" "tests/programs/r1_output_order.c:4"; do
  src=${spec%%:*}; np=${spec##*:}
  name=$(basename "$src" .c)
  "$mbh" build -o "$work/$name" "$src" -- -O2 2>/dev/null
  for round in 1 2 3; do
    for jobs in 1 2 4; do
      start=$(date +%s.%N)
      env -u LD_LIBRARY_PATH "$mbh" verify -n "$np" --jobs "$jobs" --run-dir "$work/runs" --format json "$work/$name" \
        > "$work/jobs-$name-$jobs-$round.json" || true
      echo "$(date +%s.%N) - $start" | bc -l > "$work/jobs-$name-$jobs-$round.time"
    done
  done
  python3 - "$work" "$name" "$np" <<'PY'
import json, statistics, sys
work, name, np = sys.argv[1:]
def median(jobs):
    return statistics.median(float(open(f"{work}/jobs-{name}-{jobs}-{r}.time").read()) for r in (1, 2, 3))
report = json.load(open(f"{work}/jobs-{name}-4-3.json"))
ahead = report.get("run_ahead") or {}
t1, t2, t4 = median(1), median(2), median(4)
print(f"| {name} | {np} | {report['interleavings']} | {t1:.2f} | {t2:.2f} | {t4:.2f} | {t1/t2:.2f} | {t1/t4:.2f} | {ahead.get('taken')} / {ahead.get('unused')} |")
PY
done
fi

if want run; then
echo
echo "## Deterministic execution: mbhybrid run ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start)"
echo
echo "Wall time of the whole job (launch included), median of 3 rounds; each round runs the three in turn."
echo
echo "| program | ranks | plain MPICH (s) | runtime, verify's first run (s) | mbhybrid run (s) | runtime / plain | run / plain | wildcard receives decided |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for spec in "bench/ghost_cells.c:2:$((scale * 200000))" "bench/diffusion.c:3:$((scale * 20))" "bench/master_worker.c:3:$((scale * 200))"; do
  IFS=: read -r src np arg <<< "$spec"
  name=$(basename "$src" .c)
  mpicc -O2 -o "$work/$name-plain" "$src"
  "$mbh" build -o "$work/$name" "$src" -- -O2 2>/dev/null
  for round in 1 2 3; do
    start=$(date +%s.%N)
    env -u LD_LIBRARY_PATH mpiexec -n "$np" "$work/$name-plain" "$arg" > /dev/null
    echo "$(date +%s.%N) - $start" | bc -l > "$work/run-$name-plain-$round"
    dir="$work/rt-$name"; rm -rf "$dir"; mkdir -p "$dir"
    printf '{"format":"mbhybrid-runtime","version":1,"clocks":"lamport","buffering":"infinite","guidance":null,"watch_buffers":true}\n' > "$dir/runtime.json"
    start=$(date +%s.%N)
    env -u LD_LIBRARY_PATH MBHYBRID_TRACE_DIR="$dir" mpiexec -n "$np" "$work/$name" "$arg" > /dev/null
    echo "$(date +%s.%N) - $start" | bc -l > "$work/run-$name-runtime-$round"
    start=$(date +%s.%N)
    env -u LD_LIBRARY_PATH "$mbh" run -n "$np" --run-dir "$work/runs" "$work/$name" "$arg" > /dev/null 2> "$work/run-$name-det-$round.err"
    echo "$(date +%s.%N) - $start" | bc -l > "$work/run-$name-det-$round"
  done
  python3 - "$work" "$name" "$np" <<'PY'
import re, statistics, sys
work, name, np = sys.argv[1:]
def median(config):
    return statistics.median(float(open(f"{work}/run-{name}-{config}-{r}").read()) for r in (1, 2, 3))
decided = re.search(r"(\d+) wildcard receive", open(f"{work}/run-{name}-det-3.err").read())
plain, runtime, det = median("plain"), median("runtime"), median("det")
print(f"| {name} | {np} | {plain:.2f} | {runtime:.2f} | {det:.2f} | {runtime/plain:.2f} | {det/plain:.2f} | {decided.group(1) if decided else '?'} |")
PY
done
fi

if want kernels; then
echo
echo "## Application kernels ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start)"
echo
echo "The kernels' own timed loops (launch and MPI_Init excluded), median of 5 rounds; each round runs plain MPICH and the runtime (LLCP, traces, buffers watched: verify's first run) in turn."
echo
echo "| kernel | ranks | plain MPICH (s) | runtime (s) | runtime / plain | same result |"
echo "| --- | --- | --- | --- | --- | --- |"
for spec in "bench/stencil.c:2:$((scale * 40))" "bench/rma_stencil.c:2:$((scale * 40))" "bench/graph_exchange.c:2:$((scale * 400))"; do
  IFS=: read -r src np arg <<< "$spec"
  name=$(basename "$src" .c)
  mpicc -O2 -o "$work/$name-plain" "$src" -lm
  "$mbh" build -o "$work/$name" "$src" -- -O2 -lm 2>/dev/null
  for round in 1 2 3 4 5; do
    env -u LD_LIBRARY_PATH mpiexec -n "$np" "$work/$name-plain" "$arg" > "$work/k-$name-plain-$round"
    dir="$work/rt-$name"; rm -rf "$dir"; mkdir -p "$dir"
    printf '{"format":"mbhybrid-runtime","version":1,"clocks":"lamport","buffering":"infinite","guidance":null,"watch_buffers":true}\n' > "$dir/runtime.json"
    env -u LD_LIBRARY_PATH MBHYBRID_TRACE_DIR="$dir" mpiexec -n "$np" "$work/$name" "$arg" > "$work/k-$name-runtime-$round"
  done
  python3 - "$work" "$name" "$np" <<'PY'
import statistics, sys
work, name, np = sys.argv[1:]
def run(config, r):
    lines = open(f"{work}/k-{name}-{config}-{r}").read().split("\n")
    kernel = float(next(l for l in lines if l.startswith("kernel ")).split()[1])
    return kernel, [l for l in lines if l and not l.startswith("kernel ")]
plain = [run("plain", r) for r in range(1, 6)]
traced = [run("runtime", r) for r in range(1, 6)]
same = all(p[1] == t[1] for p, t in zip(plain, traced))
p = statistics.median(k for k, _ in plain)
t = statistics.median(k for k, _ in traced)
print(f"| {name} | {np} | {p:.3f} | {t:.3f} | {t/p:.2f} | {'yes' if same else 'NO'} |")
PY
done
fi

if want analysis; then
echo
echo "## Post-run analysis at scale: 1,024 ranks x $((scale * 1000)) calls ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start)"
echo
cargo build -q --release -p mbh-fib --example analysis_scale
target/release/examples/analysis_scale 1024 "$((scale * 1000))" --dir "$work/analysis"
fi
