#!/usr/bin/env bash
# The paper-regime ASP cell on the real testbed (docs/results-asp.md, "In the paper's regime"): the OmniLearn paper's
# algorithm with its epoch count (workload.asp.epochs: ceil) on scenarios/testbed/asp-core-hl<L>.yaml (an 8-core
# parameter server and 40 worker cores, 20 epochs of a 12,000-sample slice of Fashion-MNIST, an evaluation at each
# epoch's end), uniform against omnilearn, seed by seed (each seed's two runs back to back, so that a slow spell of
# the host falls on both). Then the paired table of scripts/asp-paper-regime.py over the run folders, and its
# per-run CSV as <out>/runs.csv.
#
# With --resume, a run whose folder already has a summary.json is kept, not run again.
#
# Usage: scripts/asp-paper-testbed.sh [--out DIR] [--seeds "1 2 3 4 5"] [--levels "8"] [--resume] [--bin OMNILEARN]
#   DIR defaults to runs/asp-paper-testbed. A run trains about 190 s (as long as in virtual time) plus its 20
#   evaluations' pauses, on a host with 1.5 free cores; needs cgroup write access (run as root).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/study_runs.sh
out=runs/asp-paper-testbed
seeds="1 2 3 4 5"
levels="8"
parse_options --help-lines 2,13 --out=out --seeds=seeds --levels=levels --resume=resume=1 --bin=bin -- "$@" ||
  { echo "asp-paper-testbed.sh: unknown argument $unknown_argument (see --help)" >&2; exit 2; }
[ -x "$bin" ] || { echo "asp-paper-testbed.sh: $bin not found: build first (scripts/build.sh)" >&2; exit 2; }
mkdir -p "$out"

failed=0
started=$(date +%s)
echo "host: $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for seed in $seeds; do
  for level in $levels; do
    for policy in uniform omnilearn; do
      # The folder's name is what asp-paper-regime.py reads: <anything>-hl<L>-<policy>-<seed>.
      name="testbed-hl$level-$policy-$seed"
      if kept "$name"; then
        echo "$name: kept (summary.json exists)"
        continue
      fi
      t0=$(date +%s)
      if ! "$bin" emulate "scenarios/testbed/asp-core-hl$level.yaml" --seed "$seed" --set "policy.name=$policy" \
          --out "$out/$name" --force > "$out/$name.log" 2>&1; then
        echo "$name: FAILED (see $out/$name.log)"
        failed=1
        continue
      fi
      echo "$name: done ($(( $(date +%s) - t0 )) s; $(( $(date +%s) - started )) s so far)"
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 scripts/asp-paper-regime.py "$out" --runs-csv "$out/runs.csv" || failed=1
exit "$failed"
