#!/usr/bin/env bash
# The installed OmniLearn, away from the build tree. Usage: install_test.sh MODE BUILD_DIR SOURCE_DIR
#   prefix: cmake --install into a temporary prefix, move it elsewhere, check that no source or build path is in
#           the installed programs (strings), build and run tests/install/consumer against it (find_package),
#           then run the installed `omnilearn demo`, `sim` on an installed scenario, and `report` on that run.
#   deb:    cpack -G DEB, extract the package with dpkg-deb -x (no root install), run demo and sim from there.
#   pip:    pip install ./analysis (a copy) into a temporary venv with the system site packages, offline; import it.
# Skips (exit 77, printed reason) when a tool it needs is missing.
set -euo pipefail
mode=$1
build=$(cd "$2" && pwd)
source=$(cd "$3" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/omnilearn-install-$mode.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
unset OMNILEARN_ANALYSIS_DIR OMNILEARN_PYTHON PYTHONPATH
fail() { echo "install_test ($mode): FAILED: $*" >&2; exit 1; }
skip() { echo "install_test ($mode): SKIPPED: $*"; exit 77; }

# Runs the programs of an installed tree at $1 (a prefix) from a folder outside it.
run_installed() {
  local prefix=$1 share=$1/share/omnilearn
  "$prefix/bin/omnilearn" --version
  "$prefix/bin/omnilearn" demo --level hl8 --steps 60 >demo.txt || fail "omnilearn demo"
  grep -q oracle demo.txt || fail "omnilearn demo printed no policy table"
  "$prefix/bin/omnilearn" sim "$share/scenarios/examples/trace-azure.yaml" --quiet --out "$tmp/run" >sim.txt ||
    fail "omnilearn sim on the installed trace-azure.yaml (its trace: ../../traces/data)"
  [ -s "$tmp/run/summary.json" ] || fail "the installed sim wrote no summary.json"
  local net=$share/scenarios/network/two-racks.yaml  # a scenario with a SimGrid platform file beside it
  if [ -f "$net" ]; then
    "$prefix/bin/omnilearn" sim "$net" --quiet --out "$tmp/run-net" >>sim.txt || fail "omnilearn sim on the installed $net"
  fi
}

# No absolute path of this checkout may be compiled into an installed program.
check_no_build_paths() {
  local f
  for f in "$@"; do
    [ -f "$f" ] || continue
    if strings "$f" | grep -F -e "$source" -e "$build"; then fail "$f contains a source or build path (above)"; fi
  done
}

case $mode in
  prefix)
    command -v strings >/dev/null || skip "strings (binutils) not installed"
    cmake --install "$build" --prefix "$tmp/stage" >install.log || { cat install.log; fail "cmake --install"; }
    mkdir -p "$tmp/elsewhere" && mv "$tmp/stage" "$tmp/elsewhere/prefix"  # relocated: nothing may point at stage/
    prefix=$tmp/elsewhere/prefix
    check_no_build_paths "$prefix/bin/omnilearn" "$prefix"/libexec/omnilearn/*
    cmake -S "$source/tests/install/consumer" -B consumer-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" >consumer.log || { cat consumer.log; fail "configuring the consumer"; }
    cmake --build consumer-build >>consumer.log || { cat consumer.log; fail "building the consumer"; }
    grep -q "$prefix/lib/cmake/OmniLearn" consumer-build/CMakeCache.txt || fail "the consumer did not use $prefix"
    ./consumer-build/consumer "$prefix/share/omnilearn/scenarios/examples/quick.yaml" || fail "the consumer"
    run_installed "$prefix"
    if /usr/bin/python3 -c "import pandas, matplotlib" 2>/dev/null; then
      "$prefix/bin/omnilearn" report "$tmp/run" --out "$tmp/report" || fail "omnilearn report (installed)"
      [ -s "$tmp/report/report.html" ] || fail "the installed report wrote no report.html"
    else
      echo "install_test: report not run: /usr/bin/python3 lacks pandas or matplotlib (scripts/setup.sh)"
    fi
    ;;
  deb)
    command -v cpack >/dev/null && command -v dpkg-deb >/dev/null || skip "cpack or dpkg-deb not installed"
    command -v dpkg-shlibdeps >/dev/null || skip "dpkg-shlibdeps not installed (dpkg-dev: scripts/setup.sh)"
    cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/pkg" >cpack.log || { cat cpack.log; fail "cpack"; }
    deb=$(ls "$tmp"/pkg/omnilearn_*.deb)
    info=$(dpkg-deb -I "$deb")  # not piped into grep -q: an early exit would fail the pipeline (pipefail)
    grep -E "Package|Version|Depends" <<<"$info"
    grep -q "Depends:.*python3-pandas" <<<"$info" || fail "the package does not depend on python3-pandas"
    dpkg-deb -x "$deb" "$tmp/root"
    [ -x "$tmp/root/usr/bin/omnilearn" ] || fail "no usr/bin/omnilearn in $deb"
    [ -f "$tmp/root/usr/lib/cmake/OmniLearn/OmniLearnConfig.cmake" ] || fail "no CMake package in $deb"
    [ -f "$tmp/root/usr/share/doc/omnilearn/LICENSE" ] || fail "no LICENSE in $deb"
    run_installed "$tmp/root/usr"
    ;;
  pip)
    /usr/bin/python3 -m pip --version >/dev/null 2>&1 || skip "/usr/bin/python3 has no pip (python3-pip)"
    /usr/bin/python3 -c "import ensurepip" 2>/dev/null || skip "/usr/bin/python3 has no venv (python3-venv)"
    cp -r "$source/analysis" "$tmp/analysis"  # setuptools writes build/ and *.egg-info beside the sources
    /usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
    "$tmp/venv/bin/python" -m pip install --no-build-isolation --no-index --no-deps --quiet "$tmp/analysis" ||
      fail "pip install ./analysis"
    rm -rf "$tmp/analysis"
    "$tmp/venv/bin/python" -c "import omnilearn_analysis, sys; sys.exit(0 if 'venv' in omnilearn_analysis.__file__ else 1)" ||
      fail "omnilearn_analysis not imported from the venv"
    "$tmp/venv/bin/omnilearn-analysis" --help >/dev/null || fail "the omnilearn-analysis script"
    ;;
  *) echo "usage: install_test.sh prefix|deb|pip BUILD_DIR SOURCE_DIR" >&2; exit 2 ;;
esac
echo "install_test ($mode): ok"
