#!/usr/bin/env python3
"""The goals of a hybrid fail-slow run (docs/results-hybrid.md): each policy's mean step against the oracle's, and in
each episode the share of the equal plan's slowdown a policy removes (FALCON's measure: 1 - its slowdown / equal's,
each slowdown the episode's mean step over the mean step of the same length just before it).

usage: scripts/hybrid-goals.py RUN_FOLDER EPISODE_FROM:EPISODE_TO [...]   (seconds; the folder `omnilearn sim` wrote)
"""
import csv
import sys
from pathlib import Path


def steps(folder):
    with open(folder / "steps.csv", newline="") as f:
        return [(float(r["start_s"]), float(r["step_s"])) for r in csv.DictReader(f)]


def mean_in(rows, lo, hi):
    inside = [s for t, s in rows if lo <= t < hi]
    return sum(inside) / len(inside) if inside else float("nan")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    run = Path(argv[0])
    episodes = [tuple(float(x) for x in a.split(":")) for a in argv[1:]]
    policies = [p.name for p in sorted(run.iterdir()) if (p / "steps.csv").exists()]
    rows = {p: steps(run / p) for p in policies}
    mean = {p: sum(s for _, s in r) / len(r) for p, r in rows.items()}
    print("policy,mean_step_s,vs_oracle," + ",".join(f"slowdown_{int(a)}_{int(b)},mitigated_{int(a)}_{int(b)}" for a, b in episodes))
    for p in policies:
        cells = [p, f"{mean[p]:.4f}", f"{mean[p] / mean['oracle']:.4f}" if "oracle" in mean else ""]
        for a, b in episodes:
            def slowdown(q):
                # Each policy's episode, timed on its own clock: the steps that start inside [a, b) against the
                # same length just before.
                return mean_in(rows[q], a, b) / mean_in(rows[q], a - (b - a), a) - 1.0
            s = slowdown(p)
            m = 1.0 - s / slowdown("equal") if "equal" in rows else float("nan")
            cells += [f"{s:.4f}", f"{m:.4f}"]
        print(",".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
