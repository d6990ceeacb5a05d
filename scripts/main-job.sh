#!/usr/bin/env bash
# Installs what OmniLearn needs, builds it and runs the main job: the paper's BSP heterogeneity levels
# (HL1..HL8, ResNet18 on CIFAR-10) under uniform, omnilearn, affine and oracle, as one simulated sweep.
# Results: runs/paper-bsp-levels/sweep.csv and one run folder per point (--force: a new run replaces them); the
# report, runs/paper-bsp-levels-report/report.html: the policies compared per level and each run's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
build/cli/omnilearn sweep scenarios/paper/sweep-bsp-levels.yaml --jobs "$(nproc)" --out runs/paper-bsp-levels --force "$@"
build/cli/omnilearn report runs/paper-bsp-levels --out runs/paper-bsp-levels-report
