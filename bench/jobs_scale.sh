#!/bin/sh
# Scale benchmarks of `omnilearn jobs run` (several jobs on one cluster), each run in its own process under
# /usr/bin/time -v. Prints one line per run: "name jobs devices scheduler cpu_s wall_s peak_rss_mb", then the growth
# exponents of CPU time with the number of jobs (devices grown in proportion):
#   pollux   Pollux's 160-job workload 6 (../shared/traces-raw, else a generated Philly-like one of 160 jobs) on
#            Pollux's 64 T4 (scenarios/clusters/pollux.yaml), FIFO and Gavel; beside it one job of 64 workers
#            (resnet18, 200 epochs of CIFAR-10) alone on the same cluster: the cost of many jobs next to one
#   growth   Philly-like workloads (omnilearn jobs generate, load 0.8, seed 1) of 160, 640 and 2,560 jobs on 64,
#            256 and 1,024 T4 (nodes of 4), FIFO; with "large", 5,120 jobs on 2,048 T4 (Sia's largest), FIFO and Gavel
# Usage: bench/jobs_scale.sh [path/to/omnilearn] [out_dir] [large]
set -eu
BIN=${1:-build/cli/omnilearn}
OUT=${2:-/tmp/omnilearn_jobs_scale}
LARGE=${3:-}
RAW=${OMNILEARN_TRACES_RAW:-$(dirname "$0")/../../shared/traces-raw}
mkdir -p "$OUT"

# run NAME JOBS CLUSTER SCHEDULER: prints the line of one `omnilearn jobs run`.
run() {
  name=$1 jobs=$2 cluster=$3 scheduler=$4
  /usr/bin/time -v -o "$OUT/$name.time" "$BIN" jobs run "$jobs" --cluster "$cluster" --scheduler "$scheduler" \
    --quiet --force --out "$OUT/$name" >"$OUT/$name.log" 2>&1 || { cat "$OUT/$name.log" >&2; exit 1; }
  n=$(grep -vc '^#' "$jobs")
  devices=$(awk '/nodes:/ {for (i=1; i<=NF; i++) {if ($i ~ /nodes:/) n=$(i+1); if ($i ~ /gpus_per_node:/) g=$(i+1)}
                 gsub(/[,}]/, "", n); gsub(/[,}]/, "", g); d += n*g} END {print d}' "$cluster")
  awk -F': ' -v name="$name" -v jobs=$((n - 1)) -v dev="$devices" -v s="$scheduler" \
    '/User time/ {u=$2} /System time/ {y=$2} /Elapsed \(wall clock\)/ {w=$2} /Maximum resident/ {r=$2}
     END {k=split(w, p, ":"); wall=0; for (i=1; i<=k; i++) wall=wall*60+p[i];
          printf "%-22s %6d %6d %-6s %9.2f %9.2f %7.0f\n", name, jobs, dev, s, u+y, wall, r/1024}' "$OUT/$name.time"
}

# cluster N: a cluster YAML of N T4 in nodes of 4.
cluster() {
  f=$OUT/t4-$1.yaml
  printf 'name: t4-%s\nsource: bench\ngroups:\n  - {device: t4, nodes: %s, gpus_per_node: 4}\n' "$1" $(($1 / 4)) >"$f"
  echo "$f"
}

echo "# name                   jobs devices sched      cpu_s    wall_s  rss_mb"
P64=$(cluster 64)
W=$OUT/pollux-6.csv
if [ -f "$RAW/pollux-osdi21/workloads/workload-6.csv" ]; then
  "$BIN" jobs import --format pollux --input "$RAW/pollux-osdi21/workloads/workload-6.csv" --output "$W" >/dev/null
else
  echo "# (no $RAW/pollux-osdi21: a generated Philly-like workload of 160 jobs stands in for Pollux's)"
  "$BIN" jobs generate --jobs 160 --load 0.8 --cluster-gpus 64 --seed 1 --output "$W" >/dev/null
fi
run pollux-fifo "$W" "$P64" fifo
run pollux-gavel "$W" "$P64" gavel
ONE=$OUT/one-job.csv
printf 'name,arrival_s,model,dataset,dataset_samples,epochs,target,workers,min_workers,max_workers,global_batch,mode,batch_policy\nbig,0,resnet18,cifar10,50000,200,,64,,,2048,bsp,uniform\n' >"$ONE"
run one-job-64-workers "$ONE" "$P64" fifo

for n in 160 640 2560; do
  d=$((n * 2 / 5))
  g=$OUT/philly-$n.csv
  "$BIN" jobs generate --jobs "$n" --load 0.8 --cluster-gpus "$d" --seed 1 --output "$g" >/dev/null
  run "philly-$n" "$g" "$(cluster "$d")" fifo
done | tee "$OUT/growth.txt"
awk 'NR > 1 {printf "# cpu exponent %d -> %d jobs: %.2f\n", j, $2, log($5 / c) / log($2 / j)} {j = $2; c = $5}' \
  "$OUT/growth.txt"

if [ "$LARGE" = large ]; then
  g=$OUT/philly-5120.csv
  "$BIN" jobs generate --jobs 5120 --load 0.8 --cluster-gpus 2048 --seed 1 --output "$g" >/dev/null
  run philly-5120-fifo "$g" "$(cluster 2048)" fifo
  run philly-5120-gavel "$g" "$(cluster 2048)" gavel
fi
