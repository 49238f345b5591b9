#!/usr/bin/env bash
# The acceptance suite's apps (../shared/apps), measured for BENCHMARKS.md:
# for each app, its build through the compiler drivers and with the MPI's
# own wrappers (wall seconds), one plain run, and `mbhybrid verify` (wall
# seconds, peak memory from /usr/bin/time -v, interleavings, seconds per
# interleaving), one after the other. Prints a Markdown table.
#   bash scripts/bench-apps.sh [debug|release] [APP...]   (APP: CoMD miniFE hpcg LULESH)
# INPUTS=large runs each app on inputs a few seconds long instead of the
# suite's, so that one interleaving's cost against a plain run is the
# runtime's, not the launch's.
# Builds run under `timeout` (BUILD_LIMIT, default 600 s) and verify with
# --time-budget (VERIFY_BUDGET, default 300 s): a hang is a row that says so.
# Works in a temporary directory; ../shared/apps is only read.
set -uo pipefail
cd "$(dirname "$0")/.."
profile=${1:-debug}
shift || true
apps=("$@")
[[ ${#apps[@]} -eq 0 ]] && apps=(CoMD miniFE hpcg LULESH)
bin=$PWD/target/$profile
shared=$PWD/../shared/apps
build_limit=${BUILD_LIMIT:-600}
verify_budget=${VERIFY_BUDGET:-300}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
wrappers=$("$bin/mbhybrid" wrappers)
export LC_ALL=C

# seconds of wall time of a command (run in $1), or "stopped" after the limit.
timed() {
  local dir=$1
  shift
  local start end
  start=$(date +%s.%N)
  (cd "$dir" && timeout --kill-after=10 "$build_limit" "$@" >"$work/last.log" 2>&1)
  local status=$?
  end=$(date +%s.%N)
  if [[ $status -eq 124 ]]; then
    echo "stopped at ${build_limit}"
  elif [[ $status -ne 0 ]]; then
    echo "failed ($status)"
  else
    printf '%.1f' "$(echo "$end - $start" | bc)"
  fi
}

# build APP ROOT drivers|plain
build() {
  local app=$1 root=$2 how=$3
  local path=$PATH
  [[ $how == drivers ]] && path="$wrappers:$bin:$PATH"
  case $app in
    CoMD)
      cp "$root/src-mpi/Makefile.vanilla" "$root/src-mpi/Makefile"
      PATH=$path timed "$root/src-mpi" make ;;
    miniFE)
      if [[ $how == drivers ]]; then
        timed "$root/ref/src" make CXX="$bin/mbhybrid-c++" CC="$bin/mbhybrid-cc"
      else
        timed "$root/ref/src" make
      fi ;;
    hpcg)
      mkdir -p "$root/build"
      (cd "$root/build" && PATH=$path ../configure Linux_MPI >/dev/null 2>&1)
      PATH=$path timed "$root/build" make ;;
    LULESH)
      local cxx
      if [[ $how == drivers ]]; then cxx=$bin/mbhybrid-c++; else cxx=$(command -v mpicxx); fi
      (cd "$root" && cmake -S . -B build -DWITH_MPI=On -DWITH_OPENMP=Off \
        -DCMAKE_CXX_COMPILER="$cxx" >/dev/null 2>&1)
      timed "$root" cmake --build build ;;
  esac
}

# exe, ranks and arguments of each app's run (the suite's inputs, or
# larger ones with INPUTS=large).
run_of() {
  if [[ ${INPUTS:-suite} == large ]]; then
    case $1 in
      CoMD) echo "bin/CoMD-mpi|2|-i 2 -x 24 -y 24 -z 24 -N 40" ;;
      miniFE) echo "ref/src/miniFE.x|2|-nx 48 -ny 48 -nz 48" ;;
      hpcg) echo "build/bin/xhpcg|2|--nx=32 --ny=32 --nz=32 --rt=0" ;;
      LULESH) echo "build/lulesh2.0|1|-s 24 -i 100" ;;
    esac
    return
  fi
  case $1 in
    CoMD) echo "bin/CoMD-mpi|2|-i 2 -x 8 -y 8 -z 8 -N 5" ;;
    miniFE) echo "ref/src/miniFE.x|4|-nx 16 -ny 16 -nz 16" ;;
    hpcg) echo "build/bin/xhpcg|2|--nx=16 --ny=16 --nz=16 --rt=0" ;;
    LULESH) echo "build/lulesh2.0|1|-s 8 -i 20" ;;
  esac
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $profile build of mbhybrid; $(mpichversion 2>/dev/null | head -1 | tr -s ' ')"
echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| app | ranks | build: drivers | build: mpicc/mpicxx | plain run | verify | interleavings | per interleaving | complete | findings | verify peak memory |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"
for app in "${apps[@]}"; do
  for how in drivers plain; do
    cp -r "$shared/$app" "$work/$app-$how"
  done
  drivers_build=$(build "$app" "$work/$app-drivers" drivers)
  plain_build=$(build "$app" "$work/$app-plain" plain)
  IFS='|' read -r exe np args <<<"$(run_of "$app")"
  dir=$(dirname "$work/$app-plain/$exe")
  # shellcheck disable=SC2086
  plain_run=$(timed "$dir" mpiexec -n "$np" "$work/$app-plain/$exe" $args)
  verify="-" peak="-" runs="-" per="-" complete="-" findings="-"
  if [[ -x $work/$app-drivers/$exe ]]; then
    dir=$(dirname "$work/$app-drivers/$exe")
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    (cd "$dir" && /usr/bin/time -v -o "$work/time.txt" "$bin/mbhybrid" verify --format json \
      --time-budget "$verify_budget" -n "$np" --run-dir "$work/runs" "./$(basename "$exe")" $args \
      >"$work/report.json" 2>/dev/null)
    end=$(date +%s.%N)
    verify=$(printf '%.1f' "$(echo "$end - $start" | bc)")
    peak="$(awk -F': ' '/Maximum resident set size/ {printf "%.0f MB", $2/1024}' "$work/time.txt")"
    read -r runs per complete findings < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
secs = [run["seconds"] for run in r["runs"]]
per = sum(secs) / len(secs) if secs else 0
print(r["interleavings"], "%.2f" % per, "yes" if r["complete"] else "no", len(r["findings"]))
' "$work/report.json")
  fi
  echo "| $app | $np | $drivers_build | $plain_build | $plain_run | $verify | $runs | $per | $complete | $findings | $peak |"
done
echo
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
