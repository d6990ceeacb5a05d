#!/usr/bin/env bash
# Installs what OmniLearn needs, builds it and runs the whole test suite (C++ through CTest, the commands of the
# README and docs/, then Python).
# Tests that need what this machine lacks (a GPU, cgroup write access) print why they skip. pytest runs even when
# a C++ test fails; the exit status is non-zero if either part failed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh "$@"
# Tests that measure time or CPU share are RUN_SERIAL (tests/CMakeLists.txt): CTest runs them alone. The golden
# outputs of the shipped scenarios (scripts/golden.sh check, one test per case of tests/golden/CASES) are label golden.
status=0
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600 || status=$?
# CTest lists skipped tests without their reason: print each one's GTEST_SKIP message, and the reason of each test
# that this build could not make (omnilearn_skipped_test: "skipped: ..." lines).
awk '/: Skipped$/ { test = $0; getline; print "skipped: " test " -- " $0 } /^skipped: / { print }' \
  build/Testing/Temporary/LastTest.log
# The commands of README.md and docs/ run against this build in a temporary copy of the tree (docs/README.md,
# "Runnable documentation"); blocks that need what this machine lacks print why they skip.
/usr/bin/python3 scripts/docs-check.py --build build || status=$?
# The libFuzzer targets' smoke run (clang, ASan + UBSan; 5 s per target on the seed corpora and kept regressions).
bash scripts/fuzz.sh smoke || status=$?
if [ -d analysis/tests ]; then
  /usr/bin/python3 -m pytest -q analysis/tests || status=$?
fi
# The Python bindings and the PyTorch integration (python/), against the extension and reference program that this
# build made under build/python; -rs prints why a test skipped (no pybind11, no torch, ...).
if [ -d python/tests ]; then
  OMNILEARN_BUILD_DIR="$PWD/build" /usr/bin/python3 -m pytest -q -rs python/tests || status=$?
fi
if [ "$status" -ne 0 ]; then
  echo "test.sh: FAILED (exit $status): see the CTest and pytest output above" >&2
fi
exit "$status"
