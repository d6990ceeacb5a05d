#!/usr/bin/env bash
# Installs what OmniLearn needs, builds it and runs the whole test suite (C++ through CTest, the commands of the
# README and docs/, then Python).
# Tests that need what this machine lacks (a GPU, cgroup write access) print why they skip. pytest runs even when
# a C++ test fails; the exit status is non-zero if either part failed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The suite leaves the source tree as it found it: outputs go under build*/ or temporary folders, Python's bytecode
# under build/pycache, and pytest keeps no cache. The check at the end compares `git status --porcelain --ignored`
# with this snapshot and names anything new outside build*/ and runs/.
tree_state() {
  git status --porcelain --ignored --untracked-files=all 2>/dev/null | grep -Ev '^(!!|\?\?) (build[^/]*|runs)/' || true
}
in_git=0
git rev-parse --is-inside-work-tree >/dev/null 2>&1 && in_git=1
before=""
if [ "$in_git" -eq 1 ]; then before=$(tree_state); fi
export PYTHONPYCACHEPREFIX="$PWD/build/pycache"
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
  /usr/bin/python3 -m pytest -q -p no:cacheprovider analysis/tests || status=$?
fi
# The Python bindings and the PyTorch integration (python/), against the extension and reference program that this
# build made under build/python; -rs prints why a test skipped (no pybind11, no torch, ...).
if [ -d python/tests ]; then
  OMNILEARN_BUILD_DIR="$PWD/build" /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs python/tests || status=$?
fi
if [ "$in_git" -eq 1 ]; then
  left=$(diff <(echo "$before") <(tree_state) | grep '^>' || true)
  if [ -n "$left" ]; then
    echo "test.sh: the suite left these in the source tree (expected changes only under build*/ and runs/):" >&2
    echo "$left" >&2
    status=1
  else
    echo "test.sh: the source tree is as the suite found it (git status, outside build*/ and runs/)"
  fi
else
  echo "test.sh: not a git checkout: the check that the suite leaves the tree as it found it is skipped"
fi
if [ "$status" -ne 0 ]; then
  echo "test.sh: FAILED (exit $status): see the CTest and pytest output above" >&2
fi
exit "$status"
