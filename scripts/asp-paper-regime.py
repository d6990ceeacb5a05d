#!/usr/bin/env python3
"""The ASP study in the paper's regime (issue 36, part 1): reads the run folders of
`omnilearn sweep scenarios/testbed/sweep-asp-paper-regime.yaml` (or of scripts/asp-paper-testbed.sh), writes one row
per run (accuracy at fixed epochs and at fixed simulated times, who wrote the model at the barriers, update shares,
staleness) and prints, per level, the paired difference omnilearn - uniform over the seeds with a Student-t 95%
interval.

usage: scripts/asp-paper-regime.py SWEEP_FOLDER [--runs-csv OUT.csv]
Standard library only.
"""
import argparse
import csv
import json
import os
import re
import statistics
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # nothing left beside the scripts
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from student_t import interval  # noqa: E402

EPOCHS = (1, 5, 10, 20)
TIMES_S = (30.0, 60.0, 120.0, 180.0)
NAME = re.compile(r"-(hl\d+)-(uniform|omnilearn)-(\d+)$")


def run_row(folder):
    m = NAME.search(folder.name)
    if not m:
        return None
    with open(folder / "evaluations.csv", newline="") as f:
        evals = [(float(r["time_s"]), int(r["epoch"]), float(r["accuracy"])) for r in csv.DictReader(f)]
    summary = json.loads((folder / "summary.json").read_text())
    row = {"level": m.group(1), "policy": m.group(2), "seed": int(m.group(3))}
    for e in EPOCHS:
        at = [a for _, ep, a in evals if ep == e]
        row[f"acc_epoch_{e}"] = at[-1] if at else ""
    for t in TIMES_S:
        before = [a for ts, _, a in evals if ts <= t]
        row[f"acc_{int(t)}s"] = before[-1] if before else ""
    row["final_accuracy"] = summary.get("final_accuracy", "")
    # barriers.csv: the simulator's log of each barrier's last writer (a testbed run has none: left empty).
    row["barriers"] = row["writers"] = ""
    if (folder / "barriers.csv").exists():
        writers = {}
        with open(folder / "barriers.csv", newline="") as f:
            barriers = list(csv.DictReader(f))
        for b in barriers:
            writers[b["writer"]] = writers.get(b["writer"], 0) + 1
        row["barriers"] = len(barriers)
        row["writers"] = ";".join(f"w{k}:{v}" for k, v in sorted(writers.items()))
    extra = summary.get("extra", {})
    shares = sorted((k, v) for k, v in extra.items() if k.startswith("asp_update_share_w"))
    row["update_shares"] = ";".join(f"{k[len('asp_update_share_'):]}:{v:.3f}" for k, v in shares)
    row["staleness_median"] = extra.get("asp_staleness_median", "")
    row["staleness_p90"] = extra.get("asp_staleness_p90", "")
    return row


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep")
    ap.add_argument("--runs-csv")
    args = ap.parse_args(argv)
    rows = [r for p in sorted(Path(args.sweep).iterdir()) if p.is_dir() and (p / "summary.json").exists()
            for r in [run_row(p)] if r]
    if not rows:
        sys.exit(f"{args.sweep}: no finished run folders of the paper-regime sweep")
    if args.runs_csv:
        with open(args.runs_csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            w.writerows(sorted(rows, key=lambda r: (r["level"], r["policy"], r["seed"])))
    columns = [f"acc_epoch_{e}" for e in EPOCHS] + [f"acc_{int(t)}s" for t in TIMES_S]
    print("| level | measure | uniform (mean) | omnilearn (mean) | omnilearn - uniform, points [95% interval] | seeds |")
    print("|---|---|---|---|---|---|")
    for level in sorted({r["level"] for r in rows}, key=lambda s: int(s[2:])):
        by = {(r["policy"], r["seed"]): r for r in rows if r["level"] == level}
        seeds = sorted({s for p, s in by if ("uniform", s) in by and ("omnilearn", s) in by})
        for c in columns:
            pairs = [(by[("uniform", s)][c], by[("omnilearn", s)][c]) for s in seeds
                     if by[("uniform", s)][c] != "" and by[("omnilearn", s)][c] != ""]
            if not pairs:
                continue
            diffs = [100.0 * (o - u) for u, o in pairs]
            mean, half = interval(diffs)
            u = statistics.fmean(100.0 * u for u, _ in pairs)
            o = statistics.fmean(100.0 * o for _, o in pairs)
            print(f"| {level.upper()} | {c} | {u:.2f}% | {o:.2f}% | {mean:+.2f} [{mean - half:+.2f}, {mean + half:+.2f}] | "
                  f"{len(pairs)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
