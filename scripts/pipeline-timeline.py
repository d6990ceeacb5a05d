#!/usr/bin/env python3
"""What a pipeline testbed run's stages spent (docs/testbed.md, "A pipeline under cgroup quotas"), from its
timeline.csv (one clock, CLOCK_MONOTONIC, for every stage process) and calibration.csv, over the steps after the
warm-up:

- per receive: the wait (call to return) and the latency from the moment both sides were ready (the later of the
  sender's post and the receiver's call) to the return, split by which came first;
- per pass: the thread's CPU time in the run against the calibration's, and the wall time against CPU / share.

usage: scripts/pipeline-timeline.py RUN_FOLDER   (the folder `omnilearn emulate` wrote for a kind: hybrid-testbed spec)
"""
import csv
import json
import statistics
import sys
from pathlib import Path


def ms(values):
    return f"{1e3 * statistics.mean(values):.2f} / {1e3 * statistics.median(values):.2f} ms" if values else "-"


def main(folder):
    spec = json.loads((folder / "pipeline.json").read_text())["spec"]
    stages, warmup = spec["stages"], spec["warmup_steps"]
    with open(folder / "calibration.csv", newline="") as f:
        cal = {(int(r["replica"]), int(r["stage"])): r for r in csv.DictReader(l for l in f if not l.startswith("#"))}
    with open(folder / "timeline.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["step"]) >= warmup]
    posts = {}
    for r in rows:
        if r["event"].startswith("send_"):
            rank = int(r["rank"])
            peer = rank + 1 if r["event"] == "send_activation" else rank - 1
            posts[(peer, r["step"], r["event"][5:], r["micro_batch"])] = float(r["begin_s"])
    print("receives (mean / median): wait; latency once both sides were ready, when the data came first | when the "
          "receive did")
    for rank in sorted({int(r["rank"]) for r in rows}):
        for kind in ("activation", "gradient"):
            waits, first, later = [], [], []
            for r in rows:
                if int(r["rank"]) != rank or r["event"] != "recv_" + kind:
                    continue
                begin, end = float(r["begin_s"]), float(r["end_s"])
                post = posts.get((rank, r["step"], kind, r["micro_batch"]))
                waits.append(end - begin)
                if post is not None:
                    (first if post <= begin else later).append(end - max(post, begin))
            if waits:
                print(f"  rank {rank} {kind}: wait {ms(waits)}; latency {ms(first)} (n={len(first)}) | "
                      f"{ms(later)} (n={len(later)})")
    print("passes: CPU in the run / calibrated CPU; wall / (CPU / share)")
    for rank in sorted({int(r["rank"]) for r in rows}):
        c = cal[(rank // stages, rank % stages)]
        for event, column in (("forward", "forward_s"), ("backward", "backward_s")):
            xs = [r for r in rows if int(r["rank"]) == rank and r["event"] == event]
            cpu = statistics.median(float(r["cpu_s"]) for r in xs)
            wall = statistics.median(float(r["end_s"]) - float(r["begin_s"]) for r in xs)
            share = float(c["share"])
            print(f"  rank {rank} {event}: CPU {1e3 * cpu:.1f} ms / calibrated {1e3 * float(c[column]):.1f} ms = "
                  f"{cpu / float(c[column]):.2f}; wall {1e3 * wall:.1f} ms = {wall / (cpu / share):.2f} x CPU / share")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
