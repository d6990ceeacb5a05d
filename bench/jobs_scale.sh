#!/bin/sh
# Scale benchmarks of `omnilearn jobs run` (several jobs on one cluster), each run in its own process under
# /usr/bin/time -v. Prints one line per run: "name jobs devices scheduler cpu_s wall_s peak_rss_mb", then the growth
# exponents of CPU time with the number of jobs (devices grown in proportion):
#   pollux   Pollux's 160-job workload 6 (../shared/traces-raw, else a generated Philly-like one of 160 jobs) on
#            Pollux's 64 T4 (scenarios/clusters/pollux.yaml), FIFO and Gavel; beside it one job of 64 workers
#            (resnet18, 200 epochs of CIFAR-10) alone on the same cluster: the cost of many jobs next to one
#   growth   Philly-like workloads (omnilearn jobs generate, load 0.8, seed 1) of 160, 640 and 2,560 jobs on 64,
#            256 and 1,024 T4 (nodes of 4), FIFO; with "large", 5,120 jobs on 2,048 T4 (Sia's largest), FIFO and Gavel
# Further sections, each named in the third argument (several: "cluster onegpu"; "all": every one):
#   cluster  the scale of Alibaba's PAI cluster: Philly-like workloads of 1,000, 5,000 and 20,000 jobs (load 0.8 of
#            6,500 GPUs, seed 1) on 6,500 T4 (1,625 nodes of 4) under FIFO, LAS and Gavel, with the CPU exponent
#            from 1,000 to 20,000 jobs per scheduler; and the 1,000 jobs with their GPU counts redrawn from 1, 2, 4
#            and 8 (multi-node jobs beside others; FIFO)
#   onegpu   200,000 one-GPU jobs (the one-GPU jobs of a Philly-like workload of 214,000) on the 6,500 T4, FIFO
#   sigterm  a job file of 972,000 jobs (about 100 MB): `jobs run` sent SIGTERM 10 s after its start; prints the
#            seconds from the signal to its exit and its peak memory
# Each run is stopped after CAP seconds (env OMNILEARN_BENCH_CAP, default 900); a stopped run prints "stopped".
# Usage: bench/jobs_scale.sh [path/to/omnilearn] [out_dir] [large|cluster|onegpu|sigterm|all ...]
set -eu
BIN=${1:-build/cli/omnilearn}
OUT=${2:-/tmp/omnilearn_jobs_scale}
SECTIONS=${3:-}
CAP=${OMNILEARN_BENCH_CAP:-900}
has() { case " $SECTIONS " in *" $1 "* | *" all "*) return 0 ;; *) return 1 ;; esac; }
LARGE=$(has large && echo large || true)
RAW=${OMNILEARN_TRACES_RAW:-$(dirname "$0")/../../shared/traces-raw}
mkdir -p "$OUT"

# run NAME JOBS CLUSTER SCHEDULER: prints the line of one `omnilearn jobs run`.
run() {
  name=$1 jobs=$2 cluster=$3 scheduler=$4
  rc=0
  /usr/bin/time -v -o "$OUT/$name.time" timeout "$CAP" "$BIN" jobs run "$jobs" --cluster "$cluster" \
    --scheduler "$scheduler" --quiet --force --out "$OUT/$name" >"$OUT/$name.log" 2>&1 || rc=$?
  if [ "$rc" = 124 ]; then
    echo "$name: stopped after $CAP s" >&2
  elif [ "$rc" != 0 ]; then
    cat "$OUT/$name.log" >&2
    exit 1
  fi
  n=$(grep -vc '^#' "$jobs")
  devices=$(awk '/nodes:/ {for (i=1; i<=NF; i++) {if ($i ~ /nodes:/) n=$(i+1); if ($i ~ /gpus_per_node:/) g=$(i+1)}
                 gsub(/[,}]/, "", n); gsub(/[,}]/, "", g); d += n*g} END {print d}' "$cluster")
  awk -F': ' -v name="$name" -v jobs=$((n - 1)) -v dev="$devices" -v s="$scheduler" \
    '/User time/ {u=$2} /System time/ {y=$2} /Elapsed \(wall clock\)/ {w=$2} /Maximum resident/ {r=$2}
     END {k=split(w, p, ":"); wall=0; for (i=1; i<=k; i++) wall=wall*60+p[i];
          printf "%-22s %6d %6d %-6s %9.2f %9.2f %7.0f%s\n", name, jobs, dev, s, u+y, wall, r/1024,
                 (stopped ? " stopped" : "")}' stopped=$([ "$rc" = 124 ] && echo 1 || echo 0) "$OUT/$name.time"
}

# exponents FILE: the CPU exponent between the first line of FILE and each later one (columns: jobs 2, cpu 5).
exponents() {
  awk 'NR == 1 {j = $2; c = $5; n = $1; next}
       {printf "# cpu exponent %s: %d -> %d jobs: %.2f\n", n, j, $2, log($5 / c) / log($2 / j)}' "$1"
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

if has cluster; then
  C=$(cluster 6500)
  for n in 1000 5000 20000; do
    "$BIN" jobs generate --jobs "$n" --load 0.8 --cluster-gpus 6500 --seed 1 --output "$OUT/pai-$n.csv" >/dev/null
  done
  for s in fifo las gavel; do
    for n in 1000 5000 20000; do run "pai-$n-$s" "$OUT/pai-$n.csv" "$C" "$s"; done | tee "$OUT/pai-$s.txt"
    exponents "$OUT/pai-$s.txt"
  done
  # The same 1,000 jobs with 1, 2, 4 or 8 GPUs (cycling by line; the global batch scaled with the workers).
  awk -F, -v OFS=, '/^#/ || !h {if (!/^#/) h = 1; print; next}
                    {w = 2 ^ (NR % 4); b = int($11 * w / $8); $11 = b < w ? w : b; $8 = w; print}' "$OUT/pai-1000.csv" >"$OUT/pai-1000-g8.csv"
  run pai-1000-1to8gpus "$OUT/pai-1000-g8.csv" "$C" fifo
fi

if has onegpu; then
  g=$OUT/onegpu.csv
  "$BIN" jobs generate --jobs 214000 --load 0.8 --cluster-gpus 6500 --seed 1 --output "$OUT/onegpu-all.csv" >/dev/null
  awk -F, '/^#/ || !h {if (!/^#/) h = 1; print; next} $8 == 1 && k < 200000 {print; k++}' "$OUT/onegpu-all.csv" >"$g"
  run onegpu-200000-fifo "$g" "$(cluster 6500)" fifo
fi

if has sigterm; then
  g=$OUT/sigterm.csv
  [ -f "$g" ] || "$BIN" jobs generate --jobs 972000 --load 0.8 --cluster-gpus 6500 --seed 1 --output "$g" >/dev/null
  /usr/bin/time -v -o "$OUT/sigterm.time" "$BIN" jobs run "$g" --cluster "$(cluster 6500)" --scheduler fifo \
    --quiet --force --out "$OUT/sigterm" >"$OUT/sigterm.log" 2>&1 &
  pid=$!
  sleep 10
  t0=$(date +%s.%N)
  kill -TERM $(ps -o pid= --ppid "$pid") 2>/dev/null || true  # the jobs run under /usr/bin/time
  rc=0
  wait "$pid" || rc=$?
  t1=$(date +%s.%N)
  awk -v t0="$t0" -v t1="$t1" -v rc="$rc" -v mb="$(du -m "$g" | cut -f1)" '/Maximum resident/ {r = $2}
    END {printf "sigterm: a %d MB job file; exit %d %.1f s after SIGTERM (sent 10 s after the start); peak %.0f MB\n",
         mb, rc, t1 - t0, r / 1024}' FS=': ' "$OUT/sigterm.time"
fi
