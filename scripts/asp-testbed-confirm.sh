#!/usr/bin/env bash
# The asynchronous study's testbed confirmation (docs/results-asp.md): variants of the virtual-time study run on
# the real testbed (omnilearn emulate scenarios/testbed/asp-hl8.yaml: four CPU worker processes and a parameter
# server, throttled by cgroups, 60 s of training time) for several seeds, each seed's variants back to back (so a
# slow spell of the host falls on all of them). A variant's settings are read from the study's sweep files
# (scenarios/testbed/sweep-asp-{study,rules,ringmaster}.yaml: the variant's keys, the hl8-n4 cell's keys other than
# its nodes and model profile, and the sweep's `set` other than workload.numerics), so the testbed runs exactly
# what the virtual-time cell hl8-n4 ran. Then writes <out>/sweep.csv (the study's layout: cell, variant, seed) and
# prints the study's tables for it (python3 -m omnilearn_analysis asp-study <out>).
#
# With --resume, a run whose folder already has a summary.json is kept, not run again.
#
# Usage: scripts/asp-testbed-confirm.sh [--out DIR] [--seeds "1 2 3"] [--variants "asgd-uniform paper-uniform ..."]
#                                       [--resume] [--bin OMNILEARN]
#   DIR defaults to runs/asp-testbed. About 75 s per run on a 2-core host; needs cgroup write access (run as root).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/study_runs.sh
out=runs/asp-testbed
variants="asgd-uniform paper-uniform paper-omnilearn"
parse_options --help-lines 2,16 --out=out --seeds=seeds --variants=variants --resume=resume=1 --bin=bin -- "$@" ||
  { echo "asp-testbed-confirm.sh: unknown argument $unknown_argument (see --help)" >&2; exit 2; }
[ -x "$bin" ] || { echo "asp-testbed-confirm.sh: $bin not found: build first (scripts/build.sh)" >&2; exit 2; }
mkdir -p "$out"

# --set arguments of one variant, one per line, from the sweep files.
settings() {
  /usr/bin/python3 - "$1" <<'PY'
import sys, yaml
variant = sys.argv[1]
for name in ("sweep-asp-study", "sweep-asp-rules", "sweep-asp-ringmaster"):
    path = f"scenarios/testbed/{name}.yaml"
    sweep = yaml.safe_load(open(path))
    if variant not in sweep["axes"]["variant"]:
        continue
    keys = {k: v for k, v in sweep.get("set", {}).items() if k != "workload.numerics"}
    keys.update({k: v for k, v in sweep["axes"]["cell"]["hl8-n4"].items()
                 if k not in ("cluster.nodes", "workload.model")})
    keys.update(sweep["axes"]["variant"][variant])
    for k, v in keys.items():
        print(f"{k}={str(v).lower() if isinstance(v, bool) else v}")
    sys.exit(0)
sys.exit(f"asp-testbed-confirm.sh: variant '{variant}' is in none of the study's sweep files (scenarios/testbed/sweep-asp-*.yaml)")
PY
}

failed=0
started=$(date +%s)
# Each variant's settings, read once (an unknown variant stops before anything runs).
declare -A sets
for variant in $variants; do sets[$variant]=$(settings "$variant") || exit 2; done
echo "host: $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for seed in $seeds; do
  for variant in $variants; do
    name="$variant-s$seed"
    if kept "$name"; then
      echo "$name: kept (summary.json exists)"
      continue
    fi
    args=()
    while IFS= read -r kv; do args+=(--set "$kv"); done <<< "${sets[$variant]}"
    rm -rf "${out:?}/$name"
    t0=$(date +%s)
    if ! "$bin" emulate scenarios/testbed/asp-hl8.yaml --seed "$seed" "${args[@]}" --out "$out/$name" --force \
        > "$out/$name.log" 2>&1; then
      echo "$name: FAILED (see $out/$name.log)"
      failed=1
      continue
    fi
    echo "$name: accuracy $(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['final_accuracy'])" \
      "$out/$name/summary.json") ($(( $(date +%s) - t0 )) s; $(( $(date +%s) - started )) s so far)"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# sweep.csv in the study's layout, from each run's summary.json.
/usr/bin/python3 - "$out" "$seeds" "$variants" <<'PY'
import csv, json, os, sys
out, seeds, variants = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
with open(os.path.join(out, "sweep.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["point", "cell", "variant", "seed", "status", "iterations", "mean_staleness", "final_accuracy"])
    for seed in seeds:
        for variant in variants:
            point = f"{variant}-s{seed}"
            path = os.path.join(out, point, "summary.json")
            if not os.path.exists(path):
                w.writerow([point, "hl8-n4", variant, seed, "failed", "", "", ""])
                continue
            s = json.load(open(path))
            w.writerow([point, "hl8-n4", variant, seed, "ok", s.get("iterations"), s.get("mean_staleness", ""),
                        s.get("final_accuracy")])
PY
PYTHONPATH=analysis /usr/bin/python3 -m omnilearn_analysis asp-study "$out" || failed=1
exit "$failed"
