#!/usr/bin/env python3
"""Slowing as it would run (issue 35, part 3; docs/energy.md, "Slowing as it would run"): each case is run without
slowing, with the slowing decided on each step's own times (energy.slowing_decision: oracle) and decided on the steps
before it (previous: discrete states, a switch cost), over several seeds, and the script prints per case the share
of the oracle's energy saving that `previous` keeps and the time it adds over the oracle, with Student-t 95%
intervals over the seeds (paired: the same seed's three runs).

usage: scripts/slowing-decision-study.py [--bin build/cli/omnilearn] [--seeds 5] [--work DIR] [--rows OUT.csv]
Standard library only. Every run is simulated: the numbers are byte-identical for the same build and arguments.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True  # nothing left beside the scripts
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from student_t import interval  # noqa: E402


CPU_FIGURES = ["energy.cpu.idle=0.74", "energy.cpu.busy=3.5", "energy.wait=idle"]
# ResNet-18 on CIFAR-10 as the catalogue has it (scenarios/src/model_catalog.cpp), with a log-normal per-step compute
# noise of CV 5% on every worker.
NOISY_RESNET18 = ("workload.model={name: resnet18, parameters: 11.7e6, flops_per_sample: 1.68e9, "
                  "flops_per_iteration: 1.17e8, compute_jitter_cv: 0.05}")
# name: (scenario, its settings, what it is)
CASES = {
    "hl8-noise": ("scenarios/paper/bsp-hl8.yaml",
                  CPU_FIGURES + ["workload.epochs=2", NOISY_RESNET18],
                  "HL8, 4 CPU workers, OmniLearn, 5% per-step compute noise (log-normal CV), the law (f^3)"),
    "hl8-uniform-noise": ("scenarios/paper/bsp-hl8.yaml",
                          CPU_FIGURES + ["workload.epochs=2", NOISY_RESNET18, "policy.name=uniform"],
                          "HL8, uniform batches, 5% per-step noise, the law (f^3)"),
    "genai8": ("scenarios/traces/genai-8gpu.yaml", ["energy.wait=auto"],
               "Alibaba GenAI trace replay, 8 hpc GPUs, OmniLearn, the measured table's power limits"),
    "azure16": ("scenarios/traces/azure-16cloud.yaml", CPU_FIGURES,
                "Azure 2017 trace replay, 16 cloud VMs, OmniLearn, the law (f^3)"),
}
MODES = {"none": [], "oracle": ["energy.slow_with_slack=true"],
         "previous": ["energy.slow_with_slack=true", "energy.slowing_decision=previous"]}


def run(binary, scenario, settings, out):
    cmd = [binary, "sim", scenario, "--out", str(out), "--force"]
    for s in settings:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    summary = json.loads((out / "summary.json").read_text())
    energy = summary["energy"]
    if "joules" not in energy:
        sys.exit(f"{out}: no energy: {energy.get('reason')}")
    return {"time_s": summary["total_time_s"], "joules": energy["joules"],
            "misprediction_s": summary["extra"].get("slowing_misprediction_s", 0.0),
            "switches": summary["extra"].get("slowing_switches", 0.0),
            "slowing": energy.get("sources", {}).get("slowing", "")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/cli/omnilearn")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--work", help="keep the run folders here (default: a temporary folder)")
    ap.add_argument("--rows", help="write one row per run to this CSV")
    args = ap.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="slowing-study-"))
    rows = []
    for case in args.cases.split(","):
        scenario, settings, _ = CASES[case]
        for seed in range(1, args.seeds + 1):
            for mode, extra in MODES.items():
                out = work / f"{case}-{mode}-{seed}"
                r = run(args.bin, scenario, settings + extra + [f"seed={seed}"], out)
                rows.append({"case": case, "mode": mode, "seed": seed, **r})
    if args.rows:
        with open(args.rows, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    print("| case | no slowing: time (s), energy (kJ) | oracle: energy saving | previous: energy saving | "
          "previous / oracle saving | previous: extra time over oracle | misprediction (s per run) | switches |")
    print("|---|---|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        by = {(r["mode"], r["seed"]): r for r in rows if r["case"] == case}
        seeds = sorted({s for _, s in by})
        none_t = interval([by["none", s]["time_s"] for s in seeds])
        none_j = interval([by["none", s]["joules"] / 1e3 for s in seeds])
        sav_o = [100 * (1 - by["oracle", s]["joules"] / by["none", s]["joules"]) for s in seeds]
        sav_p = [100 * (1 - by["previous", s]["joules"] / by["none", s]["joules"]) for s in seeds]
        ratio = [100 * p / o for p, o in zip(sav_p, sav_o)]
        extra = [100 * (by["previous", s]["time_s"] / by["oracle", s]["time_s"] - 1) for s in seeds]
        mis = interval([by["previous", s]["misprediction_s"] for s in seeds])
        sw = interval([by["previous", s]["switches"] for s in seeds])
        fmt = lambda m, h, d=2: f"{m:.{d}f} ± {h:.{d}f}"
        print(f"| {case} | {fmt(*none_t, 1)}, {fmt(*none_j, 1)} | {fmt(*interval(sav_o))}% | {fmt(*interval(sav_p))}% | "
              f"{fmt(*interval(ratio), 1)}% | {fmt(*interval(extra))}% | {fmt(*mis)} | {fmt(*sw, 0)} |")
    print(f"\n{args.seeds} seeds per case; ± is the half-width of a Student-t 95% interval over the seeds.")
    for case in args.cases.split(","):
        print(f"{case}: {CASES[case][2]}; slowing: "
              f"{next(r['slowing'] for r in rows if r['case'] == case and r['mode'] == 'oracle')}")


if __name__ == "__main__":
    main()
