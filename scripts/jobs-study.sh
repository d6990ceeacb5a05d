#!/usr/bin/env bash
# The multi-job study (docs/results-jobs.md): scheduler (fifo, las, gavel, balanced-mix) x job batch policy
# (uniform, omnilearn) x seed, on two workloads:
#   philly  a Philly-like workload per seed (omnilearn jobs generate --seed S) on Gavel's cluster (36 V100, 36 P100,
#           36 K80);
#   pollux  Pollux's workloads 1..N (its 160-job traces; ../shared/traces-raw/pollux-osdi21) on Sia's cluster (24 T4,
#           16 A100, 24 RTX 2080 Ti: 64 GPUs, as Pollux's testbed).
# Then python3 -m omnilearn_analysis jobs-study OUT writes the tables and figures.
#   scripts/jobs-study.sh [--out runs/jobs-study] [--seeds 5] [--jobs 160] [--load 0.8] [--parallel 2]
#                         [--only philly|pollux] [--energy] [--bin build/cli/omnilearn]
# --energy: every run also reports its energy (energy: {wait: auto}; docs/energy.md, "Several jobs").
# Each workload is one `omnilearn sweep` of a jobs scenario (scenarios/jobs/philly-gavel.yaml, pollux-sia.yaml) into
# OUT/<workload>/, its points named <workload>-<scheduler>-<policy>-s<seed>; the sweep files are written to
# OUT/sweeps/. Rerun the script to finish an interrupted study (--resume keeps the finished points).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=runs/jobs-study
seeds=5
jobs=160
load=0.8
parallel=2
only=""
energy=""
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
    --energy) energy=", energy.wait: auto"; shift ;;
    --bin) bin=$2; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "jobs-study.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out/sweeps"
seed_list=$(seq -s ', ' 1 "$seeds")
seed_labels=$(seq -s ', ' -f 's%g' 1 "$seeds")
started=$(date +%s)
status=0
if [ "$only" != pollux ]; then
  cat >"$out/sweeps/philly.yaml" <<EOF
# written by scripts/jobs-study.sh: a Philly-like workload per seed on Gavel's cluster
name: philly
base: $root/scenarios/jobs/philly-gavel.yaml
set: {workload.generate.jobs: $jobs, workload.generate.load: $load$energy}
axes:
  scheduler: [fifo, las, gavel, balanced-mix]
  job_policy: [uniform, omnilearn]
  seed: [$seed_list]
labels:
  seed: [$seed_labels]
EOF
  "$bin" sweep "$out/sweeps/philly.yaml" --out "$out/philly" --jobs "$parallel" --resume || status=1
fi
if [ "$only" != philly ]; then
  {
    echo "# written by scripts/jobs-study.sh: Pollux's workloads 1..$seeds on Sia's cluster"
    echo "name: pollux"
    echo "base: $root/scenarios/jobs/pollux-sia.yaml"
    if [ -n "$energy" ]; then echo "set: {${energy#, }}"; fi
    echo "axes:"
    echo "  scheduler: [fifo, las, gavel, balanced-mix]"
    echo "  job_policy: [uniform, omnilearn]"
    echo "  workload:"
    for s in $(seq 1 "$seeds"); do
      src=$raw/pollux-osdi21/workloads/workload-$s.csv
      if [ ! -f "$src" ]; then
        echo "jobs-study.sh: $src not found (Pollux's workloads; set OMNILEARN_TRACES_RAW, or --only philly)" >&2
        exit 1
      fi
      echo "    s$s: {seed: $s, workload.import.input: \"$src\"}"
    done
  } >"$out/sweeps/pollux.yaml"
  "$bin" sweep "$out/sweeps/pollux.yaml" --out "$out/pollux" --jobs "$parallel" --resume || status=1
fi
echo "jobs-study.sh: done in $(( $(date +%s) - started )) s; next: python3 -m omnilearn_analysis jobs-study $out"
exit $status
