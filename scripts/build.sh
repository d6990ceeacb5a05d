#!/usr/bin/env bash
# Configures and builds OmniLearn into ./build (Release, Ninja, ccache when present).
# Extra arguments go to CMake, e.g. scripts/build.sh -DOMNILEARN_BUILD_EMULATOR=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
ninja -C build -j "$(nproc)"
