#!/usr/bin/env bash
# Several jobs on the testbed against the simulator (docs/results-jobs.md, "Several jobs on the testbed"): one
# calibration, then `omnilearn jobs validate` of scenarios/testbed/jobs/jobs.yaml (FIFO, a job arriving while another
# runs) and preempt.yaml (LAS, a preemption) for each seed, and the median and range of the per-job errors.
#   scripts/jobs-testbed-validate.sh [--out runs/jobs-testbed-validate] [--seeds 3] [--bin build/cli/omnilearn]
# Needs root (cgroups) and Fashion-MNIST; about 3 minutes a run on 2 cores, 20 in all. The seed changes the workers'
# data order (and what the host does meanwhile): the runs are repeats.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=runs/jobs-testbed-validate
seeds=3
bin=${OMNILEARN_BIN:-$root/build/cli/omnilearn}
. "$root/scripts/lib/options.sh"
parse_options --out=out --seeds=seeds --bin=bin -- "$@" || { echo "unknown option $unknown_argument" >&2; exit 2; }
mkdir -p "$out"
cal=""
for s in $(seq 1 "$seeds"); do
  for c in jobs preempt; do
    dir=$out/$c-s$s
    if [ -f "$dir/comparison.csv" ]; then continue; fi
    args=("$root/scenarios/testbed/jobs/$c.yaml" --seed "$s" --out "$dir")
    if [ -n "$cal" ]; then args+=(--calibration "$cal"); fi
    "$bin" jobs validate "${args[@]}" || true  # a job outside the tolerance is a result, not an error
    if [ -z "$cal" ] && [ -f "$dir/calibration/cluster.yaml" ]; then cal=$dir/calibration; fi
  done
done
/usr/bin/python3 - "$out" <<'PY'
import csv, glob, os, statistics, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "*-s*", "comparison.csv"))):
    case = os.path.basename(os.path.dirname(path)).rsplit("-s", 1)[0]
    for r in csv.DictReader(open(path)):
        rows.append((case, r))
print(f"{'case':8} {'job':4} {'runs':>4} {'JCT err % median [min, max]':>30} {'step err % median [min, max]':>30} same alloc")
for case in sorted({c for c, _ in rows}):
    for job in sorted({r["job"] for c, r in rows if c == case}):
        rs = [r for c, r in rows if c == case and r["job"] == job]
        def span(key):
            v = [float(r[key]) for r in rs]
            return f"{statistics.median(v):7.2f} [{min(v):6.2f}, {max(v):6.2f}]"
        same = sum(r["same_allocations"] == "yes" for r in rs)
        print(f"{case:8} {job:4} {len(rs):4} {span('jct_error_pct'):>30} {span('step_error_pct'):>30} {same}/{len(rs)}")
allj = [abs(float(r["jct_error_pct"])) for _, r in rows]
alls = [abs(float(r["step_error_pct"])) for _, r in rows]
if allj:
    print(f"all: |JCT error| median {statistics.median(allj):.2f}% max {max(allj):.2f}%; "
          f"|step error| median {statistics.median(alls):.2f}% max {max(alls):.2f}%; "
          f"{sum(r['pass'] == 'yes' for _, r in rows)}/{len(rows)} job runs within 10%")
PY
