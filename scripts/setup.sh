#!/usr/bin/env bash
# Installs every Debian package OmniLearn needs. Idempotent: returns quickly when all are present.
# Usage: scripts/setup.sh            (as root, or with sudo available)
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-program-options-dev libyaml-cpp-dev nlohmann-json3-dev
  libsimgrid-dev libglpk-dev libopenmpi-dev openmpi-bin
  libtorch-dev libgloo-dev libcgroup-dev zlib1g-dev libssl-dev dataset-fashion-mnist
  clang libclang-rt-14-dev
  iproute2 binutils dpkg-dev file
  python3 python3-pandas python3-matplotlib python3-scipy python3-pytest
  pybind11-dev python3-dev python3-setuptools python3-wheel python3-pip python3-venv python3-numpy python3-torch
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
