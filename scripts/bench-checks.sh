#!/usr/bin/env bash
# What the access checks cost a program with no wildcard, for BENCHMARKS.md:
# LULESH (1 rank; as its CMake builds by default, -O0, and with
# CMAKE_BUILD_TYPE=Release, -O3) and CoMD (2 ranks, its -O5) on inputs a
# few seconds long, each
# built four ways and run ROUNDS times (default 2), in turn:
#   plain     the MPI's own wrappers, run with mpiexec
#   off       the drivers with MBHYBRID_ACCESS_CHECKS=off, under verify
#   checked   the drivers with the checks, loops not versioned
#             (MBHYBRID_LOOP_VERSIONING=off), under verify
#   versioned the drivers with the checks (the default), under verify
# Prints a Markdown table of wall seconds and each variant against plain.
#   bash scripts/bench-checks.sh [debug|release] [APP...]   (APP: LULESH LULESH-O3 CoMD)
# Works in a temporary directory; ../shared/apps is only read.
set -uo pipefail
cd "$(dirname "$0")/.."
profile=${1:-release}
shift || true
apps=("$@")
[[ ${#apps[@]} -eq 0 ]] && apps=(LULESH LULESH-O3 CoMD)
rounds=${ROUNDS:-2}
bin=$PWD/target/$profile
shared=$PWD/../shared/apps
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
wrappers=$("$bin/mbhybrid" wrappers)
export LC_ALL=C
variants=(plain off checked versioned)
# build APP ROOT VARIANT
build() {
  local app=$1 root=$2 variant=$3
  local path=$PATH env=()
  [[ $variant != plain ]] && path="$wrappers:$bin:$PATH"
  [[ $variant == off ]] && env+=(MBHYBRID_ACCESS_CHECKS=off)
  [[ $variant == checked ]] && env+=(MBHYBRID_LOOP_VERSIONING=off)
  case $app in
    CoMD)
      cp "$root/src-mpi/Makefile.vanilla" "$root/src-mpi/Makefile"
      (cd "$root/src-mpi" && env "${env[@]}" PATH="$path" make >"$work/build.log" 2>&1) ;;
    LULESH | LULESH-O3)
      local cxx=$bin/mbhybrid-c++ type=
      [[ $variant == plain ]] && cxx=$(command -v mpicxx)
      [[ $app == LULESH-O3 ]] && type=Release
      (cd "$root" && env "${env[@]}" cmake -S . -B build -DWITH_MPI=On -DWITH_OPENMP=Off \
        -DCMAKE_BUILD_TYPE="$type" -DCMAKE_CXX_COMPILER="$cxx" >"$work/build.log" 2>&1 &&
        env "${env[@]}" cmake --build build >>"$work/build.log" 2>&1) ;;
  esac || { echo "build of $app ($variant) failed:" >&2; tail -20 "$work/build.log" >&2; exit 1; }
}
run_of() {
  case $1 in
    CoMD) echo "bin/CoMD-mpi|2|-i 2 -x 24 -y 24 -z 24 -N 40" ;;
    LULESH) echo "build/lulesh2.0|1|-s 24 -i 100" ;;
    LULESH-O3) echo "build/lulesh2.0|1|-s 32 -i 200" ;;
  esac
}
# seconds of one run of VARIANT's executable
run() {
  local variant=$1 exe=$2 np=$3
  shift 3
  local dir start end
  dir=$(dirname "$exe")
  start=$(date +%s.%N)
  if [[ $variant == plain ]]; then
    (cd "$dir" && mpiexec -n "$np" "$exe" "$@" >/dev/null 2>&1)
  else
    (cd "$dir" && "$bin/mbhybrid" verify --format json -n "$np" --run-dir "$work/runs" \
      "$exe" "$@" >"$work/report.json" 2>/dev/null)
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["complete"] and not r["findings"] else 1)' \
      "$work/report.json" || echo "note: $variant run not clean and complete" >&2
  fi
  end=$(date +%s.%N)
  printf '%.2f' "$(echo "$end - $start" | bc)"
}
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $profile build of mbhybrid at $(git rev-parse --short HEAD); $(mpichversion 2>/dev/null | head -1 | tr -s ' ')"
echo "load at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| app | ranks | plain | verify, checks off | verify, checks, loops not versioned | verify, checks, loops versioned | off / plain | not versioned / plain | versioned / plain |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for app in "${apps[@]}"; do
  IFS='|' read -r exe np args <<<"$(run_of "$app")"
  declare -A times=()
  for variant in "${variants[@]}"; do
    cp -r "$shared/${app%-O3}" "$work/$app-$variant"
    build "$app" "$work/$app-$variant" "$variant"
  done
  for ((round = 0; round < rounds; round++)); do
    for variant in "${variants[@]}"; do
      # shellcheck disable=SC2086
      t=$(run "$variant" "$work/$app-$variant/$exe" "$np" $args)
      times[$variant]="${times[$variant]:+${times[$variant]}, }$t"
    done
  done
  ratio() {
    python3 -c 'import sys; a=[float(x) for x in sys.argv[1].split(",")]; p=[float(x) for x in sys.argv[2].split(",")]; r=sorted(x/y for x,y in zip(a,p)); print("%.2f-%.2f" % (r[0], r[-1]))' "$1" "$2"
  }
  echo "| $app | $np | ${times[plain]} | ${times[off]} | ${times[checked]} | ${times[versioned]} | $(ratio "${times[off]}" "${times[plain]}") | $(ratio "${times[checked]}" "${times[plain]}") | $(ratio "${times[versioned]}" "${times[plain]}") |"
  unset times
done
echo
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
