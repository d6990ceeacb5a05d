#!/bin/sh
# The hybrid simulator at scale: a 1,024-GPU job (TP 4 x PP 8 x DP 32) for 1,000 steps under the OmniLearn hybrid
# controller (scenarios/hybrid/scale-1024.yaml). Prints the wall time and peak memory; the goal is under 60 s.
# usage: sh bench/hybrid_scale.sh [path/to/omnilearn] [out-folder]
set -eu
bin=${1:-build/cli/omnilearn}
out=${2:-/tmp/omnilearn-hybrid-scale}
/usr/bin/time -f "hybrid 1024 GPUs x 1000 steps: %e s wall, %U s CPU, %M KB peak" \
  "$bin" sim scenarios/hybrid/scale-1024.yaml --out "$out" --force -q
