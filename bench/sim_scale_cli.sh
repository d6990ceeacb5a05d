#!/bin/sh
# Scale benchmarks of `omnilearn sim` from the command line, each run in its own process under /usr/bin/time -v
# (CPU seconds and peak RSS). Prints measured numbers, one line each, then the growth exponents:
#   bsp N I    BSP on bench/scenarios/bsp-scale.yaml, N workers x I iterations, --no-iterations
#   ASP        bench/scenarios/asp-churn.yaml (each worker's speed moves every minute) and asp-steady.yaml (no
#              changes), 64 and 2,048 workers for about a day of simulated time, --no-iterations; then asp-steady.yaml
#              for 4 times as many updates, so that the marginal CPU per update, (cpu(4U) - cpu(U)) / 3U, leaves out
#              start-up. Each line names the path the pushes and pulls took (manifest.json's collective.path:
#              asp-push-pull for SimGrid flows, asp-server-link-analytic above 512 workers on a star whose backbone
#              cannot saturate)
# The marginal CPU per BSP step is (cpu(1010 iterations) - cpu(10 iterations)) / 1000, which leaves out start-up
# (platform, controller, files): a step takes milliseconds, and /usr/bin/time counts in 10 ms; the exponent
# between two sizes is log(cost ratio) / log(size ratio).
#   million    (opt-in, alone) BSP at 131,072, 262,144 and 1,000,000 workers x 20 iterations, and the peak memory per
#              worker between the first two: (rss(262,144) - rss(131,072)) / 131,072 (about 10 s and 1 GB at 1M)
# Usage: bench/sim_scale_cli.sh [path/to/omnilearn] [out_dir] [quick|million]   (quick: the smaller sizes only)
set -eu
BIN=${1:-build/cli/omnilearn}
OUT=${2:-/tmp/omnilearn_sim_scale_cli}
QUICK=${3:-}
HERE=$(dirname "$0")
mkdir -p "$OUT"

# run NAME ARGS...: prints "cpu_s wall_s rss_mb" of one `omnilearn sim` run.
run() {
  name=$1
  shift
  /usr/bin/time -v -o "$OUT/$name.time" "$BIN" sim "$@" --quiet --no-iterations --no-timeline --force \
    --out "$OUT/$name" >"$OUT/$name.log" 2>&1 || { cat "$OUT/$name.log" >&2; exit 1; }
  awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} /Elapsed \(wall clock\)/ {w=$2}
    /Maximum resident/ {r=$2}
    END {n=split(w, p, ":"); wall=0; for (i=1; i<=n; i++) wall=wall*60+p[i];
         printf "%.3f %.2f %.0f\n", u+s, wall, r/1024}' "$OUT/$name.time"
}

bsp() {  # N ITERATIONS
  run "bsp-$1-$2" "$HERE/scenarios/bsp-scale.yaml" --set "cluster.workers=$1" --set "workload.global_batch=$((32 * $1))" \
    --set "max_iterations=$2"
}

if [ "$QUICK" = million ]; then
  echo "# BSP: N workers x 20 iterations (cpu_s wall_s peak_rss_mb); the target at 1,000,000: <= 30 s CPU, <= 2 GB"
  a=$(bsp 131072 20) b=$(bsp 262144 20)
  echo "bsp workers=131072 iterations=20: $a"
  echo "bsp workers=262144 iterations=20: $b"
  echo "bsp workers=1000000 iterations=20: $(bsp 1000000 20)"
  echo "bsp peak memory per worker: $(echo "$a $b" | awk '{printf "%.0f", ($6 - $3) * 1048576 / 131072}') bytes"
  exit 0
fi

echo "# BSP: N workers x I iterations (cpu_s wall_s peak_rss_mb)"
sizes="4096 16384 65536"
[ "$QUICK" = quick ] && sizes="1024 4096"
prev_n="" prev_step=""
for n in $sizes; do
  a=$(bsp "$n" 10) b=$(bsp "$n" 1010)
  step=$(echo "$a $b" | awk '{printf "%.6f", ($4 - $1) / 1000}')
  echo "bsp workers=$n iterations=10: $a | iterations=1010: $b | marginal cpu per step ${step} s ($(echo "$step $n" | awk '{printf "%.3f", $1 / $2 * 1e6}') us per worker-step)"
  if [ -n "$prev_n" ]; then
    echo "bsp per-step cpu growth $prev_n -> $n: N^$(echo "$prev_step $step $prev_n $n" | awk '{printf "%.2f", log($2 / $1) / log($4 / $3)}')"
  fi
  prev_n=$n prev_step=$step
done
if [ "$QUICK" != quick ]; then
  echo "bsp workers=65536 iterations=20 (the target: < 60 s, < 2 GB): $(bsp 65536 20)"
fi

echo "# ASP: N workers, U updates, with a speed random walk moving every minute (churn) and without (steady)"
echo "# (cpu_s wall_s peak_rss_mb); per-update cost from the steady runs, per-change cost from the difference"
asp() {  # KIND N UPDATES [NAME]
  r=$(run "${4:-asp-$1-$2}" "$HERE/scenarios/asp-$1.yaml" --set "cluster.workers=$2" \
    --set "workload.global_batch=$((2 * $2))" --set "max_iterations=$3")
  dir="$OUT/${4:-asp-$1-$2}"
  simulated=$(sed -n 's/.*"total_time_s": \([0-9.]*\).*/\1/p' "$dir/summary.json")
  changes=$(($(wc -l <"$dir/availability.csv") - 1))
  plans=$(wc -c <"$dir/plans.csv")
  path=$(sed -n 's/.*"path": "\([^"]*\)".*/\1/p' "$dir/manifest.json")
  echo "$r $simulated $changes $plans $path"
}
growth() {  # WHAT N1 COST1 N2 COST2
  echo "asp $1 growth $2 -> $4: N^$(echo "$3 $5 $2 $4" | awk '{printf "%.2f", log($2 / $1) / log($4 / $3)}')"
}
prev_n="" prev_update="" prev_marginal="" prev_change=""
for spec in 64:10400 2048:16500; do
  n=${spec%:*} updates=${spec#*:}
  [ "$QUICK" = quick ] && [ "$n" = 2048 ] && n=512 updates=4000
  c=$(asp churn "$n" "$updates")
  s=$(asp steady "$n" "$updates")
  l=$(asp steady "$n" $((4 * updates)) "asp-steady-$n-x4")
  update=$(echo "$s $updates" | awk '{printf "%.2f", $1 / $8 * 1e6}')
  marginal=$(echo "$s $l $updates" | awk '{printf "%.2f", ($8 - $1) / (3 * $15) * 1e6}')
  change=$(echo "$c $s" | awk '{printf "%.2f", ($1 - $8) / $5 * 1e6}')
  echo "asp workers=$n updates=$updates churn: $(echo "$c" | awk '{printf "cpu %s s, wall %s s, rss %s MB, %.0f s simulated, %s availability changes, plans.csv %s bytes, %s", $1, $2, $3, $4, $5, $6, $7}')"
  echo "asp workers=$n updates=$updates steady: $(echo "$s" | awk '{printf "cpu %s s, wall %s s, rss %s MB, %.0f s simulated, %s", $1, $2, $3, $4, $7}') | cpu per update ${update} us (start-up included), marginal ${marginal} us (4x the updates: cpu $(echo "$l" | cut -d' ' -f1) s), per availability change ${change} us"
  if [ -n "$prev_n" ]; then
    growth "per-update cpu (start-up included)" "$prev_n" "$prev_update" "$n" "$update"
    growth "marginal per-update cpu" "$prev_n" "$prev_marginal" "$n" "$marginal"
    growth "per-change cpu" "$prev_n" "$prev_change" "$n" "$change"
  fi
  prev_n=$n prev_update=$update prev_marginal=$marginal prev_change=$change
done
