#!/usr/bin/env bash
# Testbed results for the README: BSP HL1/2/4/8 x {uniform, omnilearn} to 85% test accuracy, the dynamic routine
# and the Azure trace replay (omnilearn), ASP HL8 {uniform, omnilearn} on a fixed time budget. Prints one line per
# run from its summary.json (time to target, mean step time, time per epoch, final accuracy, staleness, controller
# overhead). Runs one after another (each uses emulator.cpu_budget host cores); note the machine's load.
# Usage: scripts/testbed-results.sh [out folder, default runs/testbed-results] [omnilearn binary]
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-runs/testbed-results}"
bin="${2:-build/cli/omnilearn}"
mkdir -p "$out"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"

run() {  # name scenario [extra args...]
  local name="$1" scenario="$2"
  shift 2
  "$bin" emulate "$scenario" --out "$out/$name" --force "$@" > "$out/$name.log" 2>&1 || echo "$name: FAILED (see $out/$name.log)"
  python3 - "$out/$name" "$name" <<'PY'
import json, sys
d, name = sys.argv[1], sys.argv[2]
try:
    s = json.load(open(d + "/summary.json"))
except Exception as e:
    print(f"{name}: no summary ({e})"); sys.exit(0)
x = s.get("extra", {})
ep = s.get("epoch_time_s", [])
ep_mean = sum(ep[:-1]) / len(ep[:-1]) if len(ep) > 1 else (ep[0] if ep else float("nan"))
ttt = s.get("time_to_target_s")
print(f"{name}: policy={s.get('policy')} tta85={ttt if ttt is None else round(ttt, 2)} s "
      f"mean_step={s.get('mean_iteration_s', 0) * 1e3:.2f} ms epoch={ep_mean:.2f} s iters={s.get('iterations')} "
      f"epochs={s.get('epochs')} acc={s.get('final_accuracy')} idle={s.get('idle_fraction', 0):.3f} "
      f"changes={s.get('batch_changes')} overhead={x.get('controller_overhead', 0):.2e} "
      f"staleness={s.get('mean_staleness')}/{s.get('max_staleness')} train={x.get('training_time_s', 0):.1f} s")
PY
}

for hl in 1 2 4 8; do
  for policy in uniform omnilearn; do
    run "bsp-hl$hl-$policy" "scenarios/testbed/bsp-hl$hl.yaml" --set "policy.name=$policy"
  done
done
run bsp-dynamic-omnilearn scenarios/testbed/bsp-dynamic.yaml
run bsp-azure-trace-omnilearn scenarios/testbed/bsp-azure-trace.yaml
for policy in uniform omnilearn; do
  run "asp-hl8-$policy" scenarios/testbed/asp-hl8.yaml --set "policy.name=$policy"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
