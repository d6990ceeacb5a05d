"""Runs train_fashion_mnist.py with equal batches (policy uniform) and with OmniLearn's (policy omnilearn) for
several seeds, 4 processes each with ranks 2 and 3 slowed down, and prints the mean step time of each run and, per
policy, the median and range over the seeds (the numbers in docs/python.md).

    /usr/bin/python3 python/examples/compare_policies.py --seeds 1 2 3 --max-steps 150 --out runs/python-compare

Runs go to OUT/<policy>-seed<seed> (run folders: `omnilearn report OUT/*` compares them). Extra arguments after
`--` go to train_fashion_mnist.py. The processes run under torch.distributed.run with the interpreter running this
script, which must import omnilearn (installed, or PYTHONPATH=python with OMNILEARN_EXTENSION_DIR set).
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# torch 1.13's torch.distributed.run cannot parse its own --redirects/--tee defaults under Python 3.11 (IntFlag
# iteration changed; pytorch/pytorch#92319): give values it can parse (stderr teed to its log files).
TORCHRUN_PY311_WORKAROUND = ["--redirects", "2", "--tee", "2"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun_prefix(nproc: int) -> list[str]:
    import torch
    prefix = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={nproc}",
              f"--master_port={free_port()}"]
    if torch.__version__.startswith("1.") and sys.version_info >= (3, 11):
        prefix += TORCHRUN_PY311_WORKAROUND
    return prefix


def run(policy: str, seed: int, args, extra: list[str]) -> dict:
    out = Path(args.out) / f"{policy}-seed{seed}"
    cmd = torchrun_prefix(args.nproc) + [str(HERE / "train_fashion_mnist.py"), "--policy", policy, "--seed", str(seed),
                                         "--max-steps", str(args.max_steps), "--run-dir", str(out), "--replace"] + extra
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"compare_policies: {' '.join(cmd)} failed ({done.returncode})")
    return json.loads((out / "summary.json").read_text())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--policies", nargs="+", default=["uniform", "omnilearn"])
    ap.add_argument("--max-steps", type=int, default=150)
    ap.add_argument("--nproc", type=int, default=4)
    ap.add_argument("--out", default="runs/python-compare")
    args, extra = ap.parse_known_args()
    extra = [a for a in extra if a != "--"]
    means: dict[str, list[float]] = {p: [] for p in args.policies}
    for seed in args.seeds:
        for policy in args.policies:
            s = run(policy, seed, args, extra)
            means[policy].append(s["mean_iteration_s"])
            print(f"{policy:10s} seed {seed}: mean step {1000 * s['mean_iteration_s']:.1f} ms, idle "
                  f"{100 * s['idle_fraction']:.0f}%, {s['iterations']} steps, test accuracy {s.get('final_accuracy')}",
                  flush=True)
    print(f"\nmean step time over {len(args.seeds)} seeds ({args.max_steps} steps, {args.nproc} processes):")
    for policy, values in means.items():
        print(f"  {policy:10s} median {1000 * statistics.median(values):.1f} ms "
              f"(range {1000 * min(values):.1f}-{1000 * max(values):.1f} ms)")
    if len(args.policies) == 2:
        a, b = (statistics.median(means[p]) for p in args.policies)
        print(f"  {args.policies[1]} vs {args.policies[0]}: {100 * (a - b) / a:.0f}% shorter median step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
