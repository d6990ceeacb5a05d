#!/usr/bin/env bash
# omnilearn sim's all-reduce against SimGrid SMPI's implementation of the same algorithm on the same star platform
# (each rank's own 10 Gbps / 10 us split-duplex link into a backbone that is never the bottleneck, 1 us; CM02 network
# model for both, SMPI computation not simulated), one MPI_Allreduce of 1 MB and 45 MB at 64 and 256 ranks. Prints
# a Markdown table: each one's simulated all-reduce seconds and wall-clock cost.
# Usage: bench/smpi/compare.sh [OMNILEARN_BINARY] [RANKS...]   (default: build/cli/omnilearn, 64 256)
# SMPI's algorithms: ring = lr (logical ring reduce-scatter + all-gather), halving-doubling = rab_rdb (Rabenseifner).
# SMPI has no NCCL-style 2D ring or parameter server: allreduce.c builds them from SMPI's ring collectives
# (reduce_scatter ompi_ring, allreduce lr, allgather ring) and point-to-point calls, and NCCL's double binary tree
# from point-to-point calls too (the two trees progressing independently, 16 chunks).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
omni=${1:-$root/build/cli/omnilearn}
shift || true
ranks=${*:-64 256}
work=$(mktemp -d)
smpicc -O2 -o "$work/allreduce" "$root/bench/smpi/allreduce.c"
now() { date +%s.%N; }
echo "| ranks | bytes | algorithm (SMPI) | omnilearn sim (s) | SMPI (s) | difference | omnilearn wall (s) | SMPI wall (s) |"
echo "|---|---|---|---|---|---|---|---|"
for p in $ranks; do
  cat > "$work/star$p.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="star" prefix="h" suffix="" radical="0-$((p - 1))" speed="1Tf" bw="1.25GBps" lat="10us"
           bb_bw="1000TBps" bb_lat="1us" sharing_policy="SPLITDUPLEX"/>
</platform>
XML
  seq 0 $((p - 1)) | sed 's/^/h/' > "$work/hosts$p"
  for bytes in 1000000 45000000; do
    for row in "ring|ring|--cfg=smpi/allreduce:lr|builtin" \
               "halving-doubling|halving-doubling|--cfg=smpi/allreduce:rab_rdb|builtin" \
               "hierarchical-ring (8 per node)|{algorithm: hierarchical-ring, workers_per_node: 8}|--cfg=smpi/allreduce:lr|hierarchical 8" \
               "double-binary-tree (16 chunks)|{algorithm: double-binary-tree, chunks: 16}|--cfg=smpi/allreduce:lr|tree 16" \
               "parameter-server (8 shards)|{algorithm: parameter-server, shards: 8}|--cfg=smpi/allreduce:lr|ps 8"; do
      IFS='|' read -r alg yaml smpi mode <<< "$row"
      cat > "$work/s.yaml" <<YAML
seed: 1
mode: bsp
cluster:
  nodes: [{count: $p, speed: 1e12, bandwidth: 10Gbps, latency: 10us}]
  backbone: {bandwidth: 8000Tbps, latency: 1us}
workload:
  model: {name: probe, parameters: $((bytes / 4)), gradient_bytes: $bytes, flops_per_sample: 1e6}
  dataset: cifar10
  dataset_samples: $p
  global_batch: $p
  epochs: 1
  allreduce: $yaml
policy: {name: uniform, min_batch: 1, max_batch: 1}
outputs: {timeline: false}
YAML
      t0=$(now)
      "$omni" sim "$work/s.yaml" --out "$work/run" --force > /dev/null
      t1=$(now)
      sim_s=$(awk -F, 'NR == 2 {print $6}' "$work/run/iterations.csv")
      t2=$(now)
      # shellcheck disable=SC2086  # $mode is two words on purpose
      smpi_s=$(cd "$work" && smpirun -np "$p" -platform "star$p.xml" -hostfile "hosts$p" --cfg=network/model:CM02 \
        --cfg=smpi/simulate-computation:no "$smpi" --cfg=smpi/reduce_scatter:ompi_ring --cfg=smpi/allgather:ring \
        --cfg=smpi/shared-malloc:global --log=root.thres:critical ./allreduce "$bytes" $mode 2>/dev/null | tail -1)
      t3=$(now)
      awk -v p="$p" -v b="$bytes" -v a="$alg / $(if [ "$mode" = builtin ]; then echo "${smpi#--cfg=smpi/allreduce:}"; else echo "$mode"; fi)" -v s="$sim_s" -v m="$smpi_s" -v w1="$(echo "$t1 - $t0" | bc)" \
          -v w2="$(echo "$t3 - $t2" | bc)" \
          'BEGIN {printf "| %d | %g | %s | %.6f | %.6f | %+.1f%% | %.2f | %.2f |\n", p, b, a, s, m, 100 * (s - m) / m, w1, w2}'
    done
  done
done
rm -rf "$work"
