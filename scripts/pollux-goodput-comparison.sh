#!/usr/bin/env bash
# Our goodput scheduler against our LAS at Tiresias's settings, on Pollux's eight workloads and cluster (16 nodes x 4
# T4) under Pollux's job model (step_model measured, statistical_efficiency on), beside the gap Pollux's artifact
# publishes between Pollux and Tiresias (petuum/adaptdl @ osdi21-artifact, simulator/results-jobload/pollux-1.0 and
# tiresias-1.0/summary.json, "avgs"). Writes OUT/comparison.csv and prints a Markdown table (docs/results-jobs.md).
# 16 runs, about 10 s on one core (--load 2.0: Pollux's workloads at twice the job load, about 40 s).
# Usage: scripts/pollux-goodput-comparison.sh [--load 1.0|2.0] [--bin build/cli/omnilearn] [--raw ../shared/traces-raw]
#                                             [--out DIR]
set -euo pipefail
bin=build/cli/omnilearn
raw=../shared/traces-raw
out=runs/pollux-goodput
load=1.0
. "$(dirname "$0")/lib/options.sh"
parse_options --bin=bin --raw=raw --out=out --load=load -- "$@" ||
  { echo "usage: $0 [--load 1.0|2.0] [--bin OMNILEARN] [--raw DIR] [--out DIR]" >&2; exit 2; }
# Mean JCT (s) per workload as published (results-jobload/{tiresias,pollux}-<load>/summary.json), rounded.
case "$load" in
  1.0) folder=workloads
       tiresias=(0 2474 5145 3876 3280 3501 3470 5480 5080)
       pollux=(0 2089 3323 2188 2721 2674 2446 3616 2952) ;;
  2.0) folder=workloads-2.0
       tiresias=(0 10138 8656 10728 9665 12098 10255 8371 10406)
       pollux=(0 6186 4191 5132 5262 6591 5105 3836 6010) ;;
  *) echo "$0: --load: expected 1.0 or 2.0 (the loads whose published means this script holds), got $load" >&2
     exit 2 ;;
esac
mkdir -p "$out"
echo "workload,tiresias_s,pollux_s,las_s,goodput_s" > "$out/comparison.csv"
mean_jct() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['mean_jct_s'])" "$1/summary.json"; }
for n in 1 2 3 4 5 6 7 8; do
  "$bin" jobs import --format pollux --input "$raw/pollux-osdi21/$folder/workload-$n.csv" \
    --output "$out/workload-$n.csv" > /dev/null
  # Pollux's simulator: rounds of 60 s, 30 s charged at every start of a job, the first included.
  model=(--cluster pollux --round 60 --restore 30 --set restore_at_first_start=on --set step_model=measured
         --set statistical_efficiency=on)
  # LAS at Tiresias's settings (scripts/pollux-las-comparison.sh); goodput chooses GPUs and batches itself.
  "$bin" jobs run "$out/workload-$n.csv" "${model[@]}" --scheduler las --set 'las_thresholds=[57600]' \
    --set las_starvation=off --out "$out/w$n-las" --force > /dev/null
  "$bin" jobs run "$out/workload-$n.csv" "${model[@]}" --scheduler goodput --out "$out/w$n-goodput" --force > /dev/null
  echo "$n,${tiresias[$n]},${pollux[$n]},$(mean_jct "$out/w$n-las"),$(mean_jct "$out/w$n-goodput")" >> "$out/comparison.csv"
done
python3 - "$out/comparison.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| workload | published Tiresias, s | published Pollux, s | published gap | our las, s | our goodput, s | our gap | gap difference, points |")
print("|---|---|---|---|---|---|---|---|")
def line(name, t, p, l, g):
    pub, ours = (p / t - 1) * 100, (g / l - 1) * 100
    print(f"| {name} | {t:,.0f} | {p:,.0f} | {pub:+.1f}% | {l:,.0f} | {g:,.0f} | {ours:+.1f}% | {ours - pub:+.1f} |")
cols = ["tiresias_s", "pollux_s", "las_s", "goodput_s"]
for r in rows:
    line(r["workload"], *(float(r[c]) for c in cols))
line("mean", *(sum(float(r[c]) for r in rows) / len(rows) for c in cols))
PY
