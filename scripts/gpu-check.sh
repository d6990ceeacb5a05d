#!/usr/bin/env bash
# GPU check for the testbed's CUDA MPS path: prints the GPU, driver and nvcc, builds only what the GPU tests need
# (gpu_burn, emulator_mps_test, emulator_gpu_test) in a separate build folder, and runs `ctest -L gpu`.
# Usage: scripts/gpu-check.sh [build folder, default build-gpu]. Needs no network. Exit status: ctest's.
# TORCH_DIR=<CUDA LibTorch>/share/cmake/Torch builds the worker against it, so emulator_gpu_test also trains on CUDA.
set -uo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-gpu}"
nvcc=/usr/local/cuda/bin/nvcc
command -v nvcc >/dev/null 2>&1 && nvcc="$(command -v nvcc)"

echo "== nvidia-smi"
nvidia-smi || echo "nvidia-smi failed (no GPU or driver?)"
echo "== MPS control program: $(command -v nvidia-cuda-mps-control || echo 'not found')"
echo "== nvcc ($nvcc)"
"$nvcc" --version || echo "nvcc not found: gpu_burn will not be built and the MPS test will skip"
echo "== host: $(nproc) CPUs, $(uname -r)"

echo "== configure ($build)"
if cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOMNILEARN_BUILD_SIM=OFF -DOMNILEARN_BUILD_BENCH=OFF \
     -DCMAKE_CUDA_COMPILER="$nvcc" ${TORCH_DIR:+-DTorch_DIR="$TORCH_DIR"}; then
  echo "== build"
  ninja -C "$build" gpu_burn emulator_mps_test emulator_gpu_test || { echo "build failed"; exit 1; }
  echo "== gpu_burn alone (full GPU, 2 s)"
  "$build/emulator/gpu_burn" --seconds 2 || true
  echo "== ctest -L gpu"
  ctest --test-dir "$build" -L gpu --output-on-failure -V
  exit $?
fi
# The project's configure needs every Debian package (libcgroup, SimGrid, ...). A GPU machine without them still
# checks the MPS path: gpu_burn with nvcc, the MPS test (Torch-free: throttle/mps_daemon.cpp, base, GoogleTest) with c++.
echo "== configure failed: building gpu_burn and the MPS test directly"
mkdir -p "$build"
"$nvcc" -O2 -std=c++17 -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
  -gencode arch=compute_90,code=[sm_90,compute_90] -o "$build/gpu_burn" emulator/gpu/gpu_burn.cu \
  || { echo "nvcc failed"; exit 1; }
echo "== gpu_burn alone (full GPU, 2 s)"
"$build/gpu_burn" --seconds 2 || true
cxx="${CXX:-c++}"
gtest_libs="-lgtest -lgtest_main"
[ -f /usr/include/gtest/gtest.h ] || [ -f /usr/local/include/gtest/gtest.h ] || { echo "GoogleTest headers missing: cannot build the MPS test"; exit 1; }
"$cxx" -std=c++20 -O2 -Iemulator/include -Ibase/include -DOMNILEARN_GPU_BURN="\"$PWD/$build/gpu_burn\"" \
  tests/emulator/mps_test.cpp emulator/src/throttle/mps_daemon.cpp base/src/*.cpp $gtest_libs -pthread -o "$build/emulator_mps_test" \
  || { echo "building the MPS test failed"; exit 1; }
echo "== emulator_mps_test"
"$build/emulator_mps_test"
