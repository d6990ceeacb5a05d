#!/bin/sh
# Runs bench/sim_scale for 1,024 and 8,192 workers x 100 BSP iterations, each configuration in its own process,
# next to the bare-SimGrid floor (compute + barrier). Usage: bench/sim_scale.sh [path/to/sim_scale] [out_dir]
set -eu
BIN=${1:-build/bench/sim_scale}
OUT=${2:-/tmp/omnilearn_sim_scale}
for n in 1024 8192; do
  sim=$("$BIN" omnilearn "$n" 100 "$OUT/$n")
  bare=$("$BIN" bare "$n" 100)
  echo "$sim"
  echo "$bare"
  s=$(echo "$sim" | sed 's/.*"wall_s":\([0-9.]*\).*/\1/')
  b=$(echo "$bare" | sed 's/.*"wall_s":\([0-9.]*\).*/\1/')
  echo "{\"workers\":$n,\"wall_ratio_to_bare\":$(echo "scale=2; $s / $b" | bc)}"
done
