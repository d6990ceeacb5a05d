#!/usr/bin/env bash
# Installs what OmniLearn needs, builds it and runs the whole test suite (C++ through CTest, then Python).
# Tests that need what this machine lacks (a GPU, cgroup write access) print why they skip.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh "$@"
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
# CTest lists skipped tests without their reason: print each one's GTEST_SKIP message.
awk '/: Skipped$/ { test = $0; getline; print "skipped: " test " -- " $0 }' build/Testing/Temporary/LastTest.log
if [ -d analysis/tests ]; then
  /usr/bin/python3 -m pytest -q analysis/tests
fi
