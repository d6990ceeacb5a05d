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
out=runs/virtual-time
seeds="1 2 3"
levels="1 2 4 8"
threads=0
resume=0
bin=build/cli/omnilearn
testbed=
profiles=
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --levels) levels="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --testbed) testbed="$2"; shift 2 ;;
    --profiles) profiles="$2"; shift 2 ;;
    --resume) resume=1; shift ;;
    --bin) bin="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "virtual-time-validate.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$testbed" ] && [ -n "$profiles" ] || { echo "virtual-time-validate.sh: --testbed and --profiles are required" >&2; exit 2; }
[ -x "$bin" ] || { echo "virtual-time-validate.sh: $bin not found: build first" >&2; exit 2; }
mkdir -p "$out"
failed=0
run() {  # run NAME SCENARIO PROFILE SEED [--set ...]
  local name="$1" scenario="$2" profile="$3" seed="$4"; shift 4
  if [ "$resume" = 1 ] && [ -f "$out/$name/summary.json" ]; then return; fi
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
