#!/usr/bin/env bash
# The network model at scale: scenarios/network/hpc-fat-tree-1024.yaml (1,024 workers x 100 iterations on a fat-tree,
# hierarchical ring) with each all-reduce algorithm; prints the simulated time per iteration and the wall-clock time
# of each `omnilearn sim`. Usage: bench/network_scale.sh [OMNILEARN_BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
omni=${1:-$root/build/cli/omnilearn}
work=$(mktemp -d)
echo "| all-reduce | iterations | simulated s/iteration | wall s |"
echo "|---|---|---|---|"
for alg in hierarchical-ring ring double-binary-tree halving-doubling; do
  set_alg=(--set workload.allreduce.algorithm=$alg)
  [ "$alg" = hierarchical-ring ] || set_alg=(--set workload.allreduce=$alg)
  start=$(date +%s.%N)
  "$omni" sim "$root/scenarios/network/hpc-fat-tree-1024.yaml" "${set_alg[@]}" --out "$work/$alg" > /dev/null
  end=$(date +%s.%N)
  python3 - "$work/$alg/summary.json" "$alg" "$(echo "$end - $start" | bc)" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {s['iterations']} | {s['mean_iteration_s']:.6f} | {float(sys.argv[3]):.2f} |")
PY
done
rm -rf "$work"
