#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz/: clang, ASan + UBSan) and runs each target, one at a time, for RUNS
# executions from its seed corpus (fuzz/make_corpus.sh) and its kept regressions (fuzz/regressions/<target>).
# A crash, leak or sanitizer report stops that target and leaves build-fuzz/crash-<target>-*: keep it under
# fuzz/regressions/<target>/ once fixed.
#   scripts/fuzz.sh [RUNS] [TARGET...]      RUNS default 1000000; targets: scenario sweep trace importer jobs chakra
#                                           gpu_power_table
#   scripts/fuzz.sh smoke                   build, then the smoke run: 5 s per target (ctest -L fuzz; the test suite)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(scenario sweep trace importer jobs chakra gpu_power_table)
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DOMNILEARN_FUZZ=ON \
  -DOMNILEARN_BUILD_SIM=OFF -DOMNILEARN_BUILD_EMULATOR=OFF -DOMNILEARN_BUILD_TESTS=OFF -DOMNILEARN_BUILD_BENCH=OFF \
  >/dev/null
ninja -C build-fuzz -j"${JOBS:-2}" $(printf '%s_fuzzer ' "${targets[@]}")
fuzz/make_corpus.sh build-fuzz/corpus
if [ "$runs" = smoke ]; then
  exec ctest --test-dir build-fuzz -L fuzz --output-on-failure
fi
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/work/$t"
  start=$(date +%s)
  rc=0
  "build-fuzz/fuzz/${t}_fuzzer" -runs="$runs" -max_len=16384 -timeout=25 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/crash-$t-" "build-fuzz/work/$t" "build-fuzz/corpus/$t" "fuzz/regressions/$t" \
    >"build-fuzz/$t.log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/$t.log" | grep -o '[0-9]*$' || echo '?')
  echo "$t: exit $rc, $execs executions in $(($(date +%s) - start)) s (log: build-fuzz/$t.log)"
  [ "$rc" -eq 0 ] || exit "$rc"
done
