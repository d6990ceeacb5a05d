#!/usr/bin/env bash
# Assembles the seed corpora of the fuzz targets under DIR (default build-fuzz/corpus) from the shipped files:
# scenario and sweep files from scenarios/, trace files from traces/data/ (first 200 lines each), and for the
# importers the first 40 lines of each raw trace in ../shared/traces-raw (when present) behind its format byte.
# Nothing here is committed: large corpora stay out of the repository.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-fuzz/corpus}
mkdir -p "$out"/{scenario,sweep,trace,importer,jobs,chakra,gpu_power_table}
i=0
while IFS= read -r -d '' f; do
  i=$((i + 1))
  if grep -qE '^(axes|base|bases):' "$f"; then cp "$f" "$out/sweep/seed-$i.yaml"; else cp "$f" "$out/scenario/seed-$i.yaml"; fi
done < <(find "$root/scenarios" -name '*.yaml' -print0 | sort -z)
for f in "$root"/traces/data/*.csv; do head -n 200 "$f" >"$out/trace/$(basename "$f")"; done
while IFS= read -r -d '' f; do cp "$f" "$out/trace/scn-$(basename "$f")"; done < <(find "$root/scenarios" -name '*.csv' -print0)
# The format byte: the index in all_import_formats() (traces/src/trace_importer.cpp).
raw=$root/../shared/traces-raw
seed() {  # seed FORMAT_INDEX FILE
  [ -f "$2" ] || return 0
  { printf "\\$(printf '%03o' "$1")"; head -n 40 "$2"; } >"$out/importer/$1-$(basename "$2")"
}
seed 0 "$raw/azure-v1-100vms/azure_v1_avg_cpu_100vms_5min.csv"
seed 1 "$raw/bitbrains-rnd/2013-7/41.csv"
seed 2 "$raw/alibaba-2018-cluster-avg/machine_usage_days_1_to_8_grouped_300_seconds.csv"
seed 3 "$raw/alibaba-genai-2026-gpu-util/pod_gpu_duty_cycle_anon.subset16.csv"
seed 4 "$raw/philly-node-sequence/philly_node_sequence.csv"
seed 5 "$raw/helios-earth-vc/vc6YE/cluster_sequence_vc.csv"
seed 6 "$raw/azure-vm-noise-2024/mlc_maxbw_allreads_long_westus2_D8s_v5_MiB_s.csv"
seed 7 "$raw/lanl-failure-1996-2005/LA-UR-05-7318-failure-data-1996-2005.csv"
seed 8 "$raw/titan-gpu-failures/gc_full.csv"
seed 9 "$raw/alibaba-2017-server-event/server_event.csv"
for k in 0 1 2 3 4 5 6 7 8 9; do printf "\\$(printf '%03o' "$k")" >"$out/importer/$k-empty"; done
# The jobs target's selector byte (fuzz_jobs): 0 job file, 1 Pollux workload, 2 Philly records, 3 device kinds,
# 4 device speeds, 5 metric curves, 6 packed pairs.
jobs_seed() {  # jobs_seed SELECTOR FILE
  [ -f "$2" ] || return 0
  { printf "\\$(printf '%03o' "$1")"; head -n 60 "$2"; } >"$out/jobs/$1-$(basename "$2")"
}
for f in "$root"/scenarios/testbed/jobs/jobs.csv "$root"/scenarios/testbed/jobs/preempt.csv; do jobs_seed 0 "$f"; done
jobs_seed 1 "$raw/pollux-osdi21/workloads/workload-1.csv"
printf '\002timestamp,duration,num_gpus,gpu_time,cluster\n0,3600,4,14400,vc1\n"60","7200",1,7200,"vc 2"\n' \
  >"$out/jobs/2-philly"
jobs_seed 3 "$root/traces/devices/device-kinds.csv"
jobs_seed 4 "$root/traces/devices/device-speeds.csv"
jobs_seed 5 "$root/traces/devices/metric-curves.csv"
jobs_seed 6 "$root/traces/devices/packed-speeds.csv"
# Chakra execution traces (traces/chakra_trace.h), written here byte by byte as tests/traces/chakra_fixture.h encodes
# them: a GlobalMetadata ("0.0.4"), then a compute node, an all-reduce, a send and a receive with attributes.
printf '\x07\x0a\x05\x30\x2e\x30\x2e\x34' >"$out/chakra/metadata-only.et"
printf '\x07\x0a\x05\x30\x2e\x30\x2e\x34\x09\x08\x01\x12\x01\x63\x18\x04\x38\x64\x27\x08\x02\x18\x07\x2a\x01\x01\x52\x0d\x0a\x09\x63\x6f\x6d\x6d\x5f\x74\x79\x70\x65\x48\x00\x52\x0f\x0a\x09\x63\x6f\x6d\x6d\x5f\x73\x69\x7a\x65\x48\x80\x80\x40\x33\x08\x03\x18\x05\x2a\x01\x02\x52\x0c\x0a\x08\x63\x6f\x6d\x6d\x5f\x64\x73\x74\x48\x01\x52\x0e\x0a\x09\x63\x6f\x6d\x6d\x5f\x73\x69\x7a\x65\x48\x80\x20\x52\x0c\x0a\x08\x63\x6f\x6d\x6d\x5f\x74\x61\x67\x48\x07\x35\x08\x04\x18\x06\x22\x01\x03\x52\x0c\x0a\x08\x63\x6f\x6d\x6d\x5f\x73\x72\x63\x48\x01\x52\x0e\x0a\x09\x63\x6f\x6d\x6d\x5f\x73\x69\x7a\x65\x48\x80\x20\x52\x0e\x0a\x07\x70\x67\x5f\x6e\x61\x6d\x65\xea\x01\x02\x64\x70' >"$out/chakra/four-nodes.et"
head -c 100 "$out/chakra/four-nodes.et" >"$out/chakra/truncated.et"
# GPU power tables (traces/gpu_power_table.h): the shipped Zeus table's head and a small hand-written one.
head -n 60 "$root/traces/devices/zeus-power.csv" >"$out/gpu_power_table/zeus-power-head.csv"
printf 'kind,dataset,network,optimizer,batch,power_limit_w,time_per_epoch_s,average_power_w,energy_per_epoch_j\nk,d,n,o,10,100,200,90,18000\nk,d,n,o,10,200,100,170,17000\nk,d,n,o,40,100,100,100,10000\n' \
  >"$out/gpu_power_table/small.csv"
echo "corpus in $out: $(for t in scenario sweep trace importer jobs chakra gpu_power_table; do printf '%s %s  ' "$t" "$(ls "$out/$t" | wc -l)"; done)"
