#!/usr/bin/env bash
# Virtual-time training against the testbed: runs `omnilearn sim` with workload.numerics: real on the testbed's
# scenarios (BSP HL1/2/4/8 x uniform/omnilearn to 85%, ASP HL8 x uniform/omnilearn on the 60 s budget), the same
# seeds, each level with the simulator profile `omnilearn validate` wrote for it, then compares steps and time to
# 85% (BSP) and final accuracy and staleness (ASP) with the testbed's run folders
# (python3 -m omnilearn_analysis virtual-time).
#
# Usage: scripts/virtual-time-validate.sh --testbed DIR --profiles DIR [--out DIR] [--seeds "1 2 3"]
#                                         [--levels "1 2 4 8"] [--threads N] [--bin OMNILEARN] [--resume]
#   --testbed: scripts/testbed-results.sh's folder (bsp-hl<L>-<policy>-s<seed>, asp-hl8-<policy>-s<seed>).
#   --profiles: a folder with hl<L>/sim-profile.yaml (omnilearn validate --out DIR/hl<L>); ASP uses hl8's.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/study_runs.sh
out=runs/virtual-time
threads=0
testbed=
profiles=
parse_options --help-lines 2,13 --out=out --seeds=seeds --levels=levels --threads=threads --testbed=testbed \
  --profiles=profiles --resume=resume=1 --bin=bin -- "$@" ||
  { echo "virtual-time-validate.sh: unknown argument $unknown_argument (see --help)" >&2; exit 2; }
[ -n "$testbed" ] && [ -n "$profiles" ] || { echo "virtual-time-validate.sh: --testbed and --profiles are required" >&2; exit 2; }
[ -x "$bin" ] || { echo "virtual-time-validate.sh: $bin not found: build first" >&2; exit 2; }
mkdir -p "$out"
failed=0
run() {  # run NAME SCENARIO PROFILE SEED [--set ...]
  local name="$1" scenario="$2" profile="$3" seed="$4"; shift 4
  if kept "$name"; then return; fi
  local t0=$(date +%s.%N)
  if ! "$bin" sim "$scenario" --quiet --force --out "$out/$name" --seed "$seed" --threads "$threads" \
      --set workload.numerics=real --set "workload.model=$profile" "$@" > "$out/$name.log" 2>&1; then
    echo "FAILED: $name (see $out/$name.log)"; failed=1; return
  fi
  printf '%s: %.1f s wall\n' "$name" "$(echo "$(date +%s.%N) - $t0" | bc)"
}
for seed in $seeds; do
  for level in $levels; do
    for policy in uniform omnilearn; do
      run "bsp-hl$level-$policy-s$seed" "scenarios/testbed/bsp-hl$level.yaml" "$profiles/hl$level/sim-profile.yaml" \
          "$seed" --set "policy.name=$policy"
    done
  done
  for policy in uniform omnilearn; do
    run "asp-hl8-$policy-s$seed" scenarios/testbed/asp-hl8.yaml "$profiles/hl8/sim-profile.yaml" "$seed" \
        --set "policy.name=$policy"
  done
done
PYTHONPATH=analysis "${OMNILEARN_PYTHON:-/usr/bin/python3}" -m omnilearn_analysis virtual-time "$testbed" "$out" --seeds $seeds --levels $levels \
  --out "$out/comparison.csv" || failed=1
exit $failed
