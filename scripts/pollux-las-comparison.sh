#!/usr/bin/env bash
# LAS at Tiresias's settings on Pollux's eight workloads and cluster (16 nodes x 4 T4), under the four job models
# (step_model ring|measured x statistical_efficiency off|on), against the mean JCT Pollux's artifact publishes for
# Tiresias (petuum/adaptdl @ osdi21-artifact, simulator/results-jobload/tiresias-1.0/summary.json, "avgs").
# Writes OUT/comparison.csv and prints a Markdown table (docs/results-jobs.md). 32 runs, about 10 s on one core.
# Usage: scripts/pollux-las-comparison.sh [--bin build/cli/omnilearn] [--raw ../shared/traces-raw] [--out DIR]
set -euo pipefail
bin=build/cli/omnilearn
raw=../shared/traces-raw
out=runs/pollux-las
. "$(dirname "$0")/lib/options.sh"
parse_options --bin=bin --raw=raw --out=out -- "$@" ||
  { echo "usage: $0 [--bin OMNILEARN] [--raw DIR] [--out DIR]" >&2; exit 2; }
# Tiresias's mean JCT (s) per workload as published (results-jobload/tiresias-1.0/summary.json), rounded.
published=(0 2474 5145 3876 3280 3501 3470 5480 5080)
mkdir -p "$out"
echo "workload,published_s,ring_off_s,measured_off_s,ring_on_s,measured_on_s" > "$out/comparison.csv"
for n in 1 2 3 4 5 6 7 8; do
  "$bin" jobs import --format pollux --input "$raw/pollux-osdi21/workloads/workload-$n.csv" \
    --output "$out/workload-$n.csv" > /dev/null
  row="$n,${published[$n]}"
  for cfg in ring:off measured:off ring:on measured:on; do
    # Tiresias's simulator (tiresias.py): two queues split at 16 GPU-hours of attained service, no promotion of
    # starved jobs; Pollux's simulator charges 30 s at every start, the first included, rounds of 60 s.
    "$bin" jobs run "$out/workload-$n.csv" --cluster pollux --scheduler las --round 60 --restore 30 \
      --set restore_at_first_start=on --set 'las_thresholds=[57600]' --set las_starvation=off \
      --set "step_model=${cfg%:*}" --set "statistical_efficiency=${cfg#*:}" \
      --out "$out/w$n-${cfg%:*}-${cfg#*:}" --force > /dev/null
    row="$row,$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['mean_jct_s'])" \
      "$out/w$n-${cfg%:*}-${cfg#*:}/summary.json")"
  done
  echo "$row" >> "$out/comparison.csv"
done
python3 - "$out/comparison.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = ["ring_off_s", "measured_off_s", "ring_on_s", "measured_on_s"]
print("| workload | published Tiresias, s | ring, no efficiency | measured steps | efficiency | measured + efficiency |")
print("|---|---|---|---|---|---|")
def cell(v, p):
    return f"{v:,.0f} ({(v / p - 1) * 100:+.1f}%)"
for r in rows:
    p = float(r["published_s"])
    print(f"| {r['workload']} | {p:,.0f} | " + " | ".join(cell(float(r[c]), p) for c in cols) + " |")
p = sum(float(r["published_s"]) for r in rows) / len(rows)
means = [sum(float(r[c]) for r in rows) / len(rows) for c in cols]
print(f"| mean | {p:,.0f} | " + " | ".join(cell(m, p) for m in means) + " |")
EOF
