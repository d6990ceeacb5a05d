#!/usr/bin/env bash
# The multi-job study (docs/results-jobs.md): scheduler (fifo, las, gavel, balanced-mix) x job batch policy
# (uniform, omnilearn) x seed, on two workloads:
#   philly  a Philly-like workload per seed (omnilearn jobs generate --seed S) on Gavel's cluster (36 V100, 36 P100,
#           36 K80);
#   pollux  Pollux's workloads 1..N (its 160-job traces; ../shared/traces-raw/pollux-osdi21) on Sia's cluster (24 T4,
#           16 A100, 24 RTX 2080 Ti: 64 GPUs, as Pollux's testbed).
# Then python3 -m omnilearn_analysis jobs-study OUT writes the tables and figures.
#   scripts/jobs-study.sh [--out runs/jobs-study] [--seeds 5] [--jobs 160] [--load 0.8] [--parallel 2]
#                         [--only philly|pollux] [--bin build/cli/omnilearn]
# Each run is a folder OUT/<workload>-<scheduler>-<policy>-s<seed>; a folder that already holds a summary.json is
# kept (rerun the script to finish an interrupted study).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=runs/jobs-study
seeds=5
jobs=160
load=0.8
parallel=2
only=""
bin=${OMNILEARN_BIN:-$root/build/cli/omnilearn}
raw=${OMNILEARN_TRACES_RAW:-$root/../shared/traces-raw}
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --load) load=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "jobs-study.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out/workloads"
schedulers=(fifo las gavel balanced-mix)
policies=(uniform omnilearn)
runs=()
for s in $(seq 1 "$seeds"); do
  if [ "$only" != pollux ]; then
    w=$out/workloads/philly-s$s.csv
    [ -f "$w" ] || "$bin" jobs generate --jobs "$jobs" --load "$load" --cluster-gpus 108 --seed "$s" --output "$w" >/dev/null
    for sc in "${schedulers[@]}"; do
      for p in "${policies[@]}"; do runs+=("$w gavel $sc $p $out/philly-$sc-$p-s$s"); done
    done
  fi
  if [ "$only" != philly ]; then
    src=$raw/pollux-osdi21/workloads/workload-$s.csv
    if [ ! -f "$src" ]; then
      echo "jobs-study.sh: $src not found (Pollux's workloads; set OMNILEARN_TRACES_RAW, or --only philly)" >&2
      exit 1
    fi
    w=$out/workloads/pollux-s$s.csv
    [ -f "$w" ] || "$bin" jobs import --format pollux --input "$src" --output "$w" >/dev/null
    for sc in "${schedulers[@]}"; do
      for p in "${policies[@]}"; do runs+=("$w sia $sc $p $out/pollux-$sc-$p-s$s"); done
    done
  fi
done

run_one() {
  read -r workload cluster scheduler policy dir <<<"$1"
  [ -f "$dir/summary.json" ] && return 0
  "$bin" jobs run "$workload" --cluster "$cluster" --scheduler "$scheduler" --job-policy "$policy" --quiet --force \
    --out "$dir" >"$dir.log" 2>&1 || { echo "failed: $dir (see $dir.log)" >&2; return 1; }
  rm -f "$dir.log"
  echo "done: $dir"
}
export -f run_one
export bin
started=$(date +%s)
printf '%s\n' "${runs[@]}" | xargs -P "$parallel" -I{} bash -c 'run_one "$@"' _ {}
echo "jobs-study.sh: ${#runs[@]} runs in $(( $(date +%s) - started )) s; next: python3 -m omnilearn_analysis jobs-study $out"
