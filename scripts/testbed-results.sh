#!/usr/bin/env bash
# Testbed results for docs/results-testbed.md, over several seeds: BSP HL1/2/4/8 x {uniform, omnilearn} to 85% test accuracy,
# each seed's two policies back to back (so a slow spell of the host falls on both). Then prints, per level, the
# median and range over the seeds of the mean-step reduction and of the time-to-85% reduction, the steps to 85% of
# each policy, and the share of the step spent in compute, exchange and waiting (python3 -m omnilearn_analysis
# testbed). With --extras it also runs, per seed, the dynamic routine and the Azure trace replay (omnilearn) and
# ASP HL8 {uniform, omnilearn} on its 60 s budget.
#
# With --resume, a run whose folder already has a summary.json is kept, not run again: an interrupted call
# resumes (keep the scenarios and the binary unchanged meanwhile: kept runs are not checked against them). Without
# it, every run is made afresh (its folder replaced).
#
# Usage: scripts/testbed-results.sh [--out DIR] [--seeds "1 2 3"] [--levels "1 2 4 8"] [--extras] [--resume]
#                                   [--bin OMNILEARN]
#   DIR defaults to runs/testbed-results. About 8 minutes per seed for the four levels on a 2-core host.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/study_runs.sh
out=runs/testbed-results
extras=0
parse_options --help-lines 2,15 --out=out --seeds=seeds --levels=levels --extras=extras=1 --resume=resume=1 --bin=bin \
  -- "$@" || { echo "testbed-results.sh: unknown argument $unknown_argument (see --help)" >&2; exit 2; }
[ -x "$bin" ] || { echo "testbed-results.sh: $bin not found: build first (scripts/build.sh)" >&2; exit 2; }
mkdir -p "$out"
echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load before: $(cut -d' ' -f1-3 /proc/loadavg)"

failed=0
started=$(date +%s)
run() {  # name scenario [extra args...]
  local name="$1" scenario="$2"
  shift 2
  if kept "$name"; then
    echo "$name: kept (summary.json exists)"
    return
  fi
  rm -rf "${out:?}/$name"
  local t0
  t0=$(date +%s)
  if ! "$bin" emulate "$scenario" --out "$out/$name" --force "$@" > "$out/$name.log" 2>&1; then
    echo "$name: FAILED (see $out/$name.log)"
    failed=1
    return
  fi
  /usr/bin/python3 - "$out/$name" "$name" "$(( $(date +%s) - t0 ))" "$(( $(date +%s) - started ))" <<'PY'
import json, sys
d, name, took, total = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
s = json.load(open(d + "/summary.json"))
x = s.get("extra", {})
ttt = s.get("time_to_target_s")
print(f"{name}: tta85={'-' if ttt is None else f'{ttt:.2f} s'} steps={x.get('steps_to_target', '-'):} "
      f"mean_step={s.get('mean_iteration_s', 0) * 1e3:.1f} ms iters={s.get('iterations')} "
      f"acc={s.get('final_accuracy')} changes={s.get('batch_changes')} "
      f"staleness={s.get('mean_staleness')}/{s.get('max_staleness')} ({took} s; {total} s so far)", flush=True)
PY
}

for seed in $seeds; do
  for hl in $levels; do
    for policy in uniform omnilearn; do
      run "bsp-hl$hl-$policy-s$seed" "scenarios/testbed/bsp-hl$hl.yaml" --seed "$seed" --set "policy.name=$policy"
    done
  done
  if [ "$extras" = 1 ]; then
    run "bsp-dynamic-omnilearn-s$seed" scenarios/testbed/bsp-dynamic.yaml --seed "$seed"
    run "bsp-azure-trace-omnilearn-s$seed" scenarios/testbed/bsp-azure-trace.yaml --seed "$seed"
    for policy in uniform omnilearn; do
      run "asp-hl8-$policy-s$seed" scenarios/testbed/asp-hl8.yaml --seed "$seed" --set "policy.name=$policy"
    done
  fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
PYTHONPATH=analysis /usr/bin/python3 -m omnilearn_analysis testbed "$out" || failed=1
exit "$failed"
