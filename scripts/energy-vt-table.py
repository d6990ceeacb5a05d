#!/usr/bin/env python3
"""Energy to target in virtual time (issue 35, part 2): reads the run folders of
`omnilearn sweep scenarios/testbed/sweep-energy-virtual-time.yaml` and prints, per level and policy, the mean and
Student-t 95% interval over the seeds of the energy to the target (summary.json's energy.energy_to_target_j), the
time to the target, the whole run's joules, the steps to the target and the joules per step to it, then per level the paired difference omnilearn - uniform (same seed)
of each, with its interval and in % of uniform's mean. A run that did not reach the target is counted and left out of
its means (and its seed out of the paired differences).

usage: scripts/energy-vt-table.py SWEEP_FOLDER [--runs-csv OUT.csv]
Standard library only.
"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # nothing left beside the scripts
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from student_t import interval  # noqa: E402

NAME = re.compile(r"-(hl\d+)-(uniform|omnilearn)-(\d+)$")
FIELDS = (("energy_to_target_kj", "energy to 85% (kJ)"), ("time_to_target_s", "time to 85% (s)"),
          ("joules_kj", "whole run (kJ)"), ("steps_to_target", "steps to 85%"),
          ("j_per_step", "J per step to 85%"))


def run_row(folder):
    """One run's row, or None for a folder that is not a point of the sweep."""
    m = NAME.search(folder.name)
    if not m or not (folder / "summary.json").exists():
        return None
    s = json.loads((folder / "summary.json").read_text())
    e = s.get("energy", {})
    if "joules" not in e:
        sys.exit(f"{folder}/summary.json: no energy block with joules ({e.get('reason', 'no energy section')})")
    ett = e.get("energy_to_target_j")
    return {"level": m.group(1), "policy": m.group(2), "seed": int(m.group(3)),
            "energy_to_target_kj": ett / 1e3 if ett is not None else None,
            "time_to_target_s": s.get("time_to_target_s"),
            "joules_kj": e["joules"] / 1e3, "total_time_s": s["total_time_s"],
            "steps_to_target": s.get("extra", {}).get("steps_to_target"),
            "j_per_step": ett / s["extra"]["steps_to_target"] if ett is not None else None}


def cell(values, digits):
    if not values:
        return "none reached"
    mean, half = interval(values)
    if math.isnan(half):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{mean - half:.{digits}f}, {mean + half:.{digits}f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep")
    ap.add_argument("--runs-csv")
    a = ap.parse_args()
    rows = [r for r in (run_row(p) for p in sorted(Path(a.sweep).iterdir()) if p.is_dir()) if r]
    if not rows:
        sys.exit(f"{a.sweep}: no run folders named ...-hl<L>-<uniform|omnilearn>-<seed> with a summary.json")
    if a.runs_csv:
        with open(a.runs_csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    levels = sorted({r["level"] for r in rows}, key=lambda l: int(l[2:]))
    print("| level | policy | runs reached / all | " + " | ".join(label for _, label in FIELDS) + " |")
    print("|---|---|---|" + "---|" * len(FIELDS))
    for level in levels:
        for policy in ("uniform", "omnilearn"):
            rs = [r for r in rows if r["level"] == level and r["policy"] == policy]
            reached = [r for r in rs if r["energy_to_target_kj"] is not None]
            cells = [cell([r[k] for r in reached], 0 if k == "steps_to_target" else 2) for k, _ in FIELDS]
            print(f"| {level.upper()} | {policy} | {len(reached)} / {len(rs)} | " + " | ".join(cells) + " |")
    print()
    print("| level | paired seeds | " + " | ".join(f"omnilearn - uniform, {label} (% of uniform)" for _, label in FIELDS)
          + " |")
    print("|---|---|" + "---|" * len(FIELDS))
    for level in levels:
        by = {(r["policy"], r["seed"]): r for r in rows if r["level"] == level}
        seeds = sorted(s for p, s in by if p == "uniform" and ("omnilearn", s) in by
                       and by[("uniform", s)]["energy_to_target_kj"] is not None
                       and by[("omnilearn", s)]["energy_to_target_kj"] is not None)
        cells = []
        for k, _ in FIELDS:
            diffs = [by[("omnilearn", s)][k] - by[("uniform", s)][k] for s in seeds]
            if not diffs:
                cells.append("no pair")
                continue
            mean, half = interval(diffs)
            base = statistics.fmean(by[("uniform", s)][k] for s in seeds)
            text = f"{mean:+.2f}" if math.isnan(half) else f"{mean:+.2f} [{mean - half:+.2f}, {mean + half:+.2f}]"
            cells.append(f"{text} ({100 * mean / base:+.1f}%)")
        print(f"| {level.upper()} | {len(seeds)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
