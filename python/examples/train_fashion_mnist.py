"""A small CNN on Fashion-MNIST with OmniLearn's per-rank batches under DistributedDataParallel (gloo, CPU).

Launch one process per worker:
    /usr/bin/python3 -m torch.distributed.run --nproc_per_node=4 python/examples/train_fashion_mnist.py \
        --policy omnilearn --run-dir runs/fmnist-omnilearn

Two ranks (--slow-ranks, default 2,3) are deliberately slower: after their forward pass they sleep
--slow-per-sample-s seconds per sample of their batch, as a slower GPU would take longer in proportion to its batch.
With --policy uniform every rank keeps B/4 samples and the fast ranks wait for the slow ones at every all-reduce;
with --policy omnilearn the controller moves samples to the fast ranks until the compute times are equal.
Data: the Debian package dataset-fashion-mnist (--data, default /usr/share/datasets/fashion-mnist), or
--synthetic N random images. Rank 0 writes the run folder (--run-dir) and prints the run's summary as JSON.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

from omnilearn.torch import AdaptiveBatching

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path: Path) -> np.ndarray:
    """An IDX file (gzip): images as (n, rows, cols) uint8, labels as (n,) uint8."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_split(folder: Path, prefix: str) -> tuple[torch.Tensor, torch.Tensor]:
    images, labels = folder / f"{prefix}-images-idx3-ubyte.gz", folder / f"{prefix}-labels-idx1-ubyte.gz"
    for p in (images, labels):
        if not p.exists():
            raise FileNotFoundError(f"--data: {p} is missing (install the Debian package dataset-fashion-mnist, or "
                                    "pass --synthetic N)")
    x = torch.from_numpy(read_idx(images).astype(np.float32) / 255.0).unsqueeze(1)
    return (x - 0.2860) / 0.3530, torch.from_numpy(read_idx(labels).astype(np.int64))


def synthetic(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 1, 28, 28, generator=g), torch.randint(0, 10, (n,), generator=g)


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3)
        self.conv2 = nn.Conv2d(16, 32, 3)
        self.fc = nn.Linear(32 * 5 * 5, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    model.eval()
    with torch.no_grad():
        out = model(x)
        loss = float(F.cross_entropy(out, y))
        acc = float((out.argmax(1) == y).float().mean())
    model.train()
    return loss, acc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default="omnilearn", help="controller policy: omnilearn, uniform, static, affine")
    ap.add_argument("--global-batch", type=int, default=256)
    ap.add_argument("--min-batch", type=int, default=8)
    ap.add_argument("--max-batch", type=int, default=192)
    ap.add_argument("--every-n", type=int, default=5, help="steps between controller decisions")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: run the epochs)")
    ap.add_argument("--seed", type=int, default=1, help="model initialisation and data order")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--slow-ranks", default="2,3", help="ranks slowed down (comma-separated; '' for none)")
    ap.add_argument("--slow-per-sample-s", type=float, default=0.0004,
                    help="seconds a slow rank sleeps per sample of its batch, after its forward pass")
    ap.add_argument("--data", default=DEFAULT_DATA, help="folder of the Fashion-MNIST .gz files")
    ap.add_argument("--synthetic", type=int, default=0, help="use N random images instead of Fashion-MNIST")
    ap.add_argument("--eval-samples", type=int, default=2000, help="test samples rank 0 evaluates at the end")
    ap.add_argument("--run-dir", default=None, help="run folder rank 0 writes (omnilearn report reads it)")
    ap.add_argument("--replace", action="store_true", help="replace an earlier run's files in --run-dir")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads per process")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    slow = {int(r) for r in args.slow_ranks.split(",") if r.strip()}

    if args.synthetic:
        train_x, train_y = synthetic(args.synthetic, seed=1234)
        test_x, test_y = synthetic(max(1, args.eval_samples), seed=4321)
    else:
        train_x, train_y = load_split(Path(args.data), "train")
        test_x, test_y = load_split(Path(args.data), "t10k")
    test_x, test_y = test_x[:args.eval_samples], test_y[:args.eval_samples]

    torch.manual_seed(args.seed)  # the same initial model on every rank (DDP also broadcasts rank 0's)
    model = DistributedDataParallel(SmallCnn())
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    with AdaptiveBatching(model, len(train_x), seed=args.seed, epochs=args.epochs, max_steps=args.max_steps,
                          run_dir=args.run_dir, replace=args.replace, global_batch=args.global_batch,
                          name=args.policy, min_batch=args.min_batch, max_batch=args.max_batch,
                          every_n=args.every_n) as batching:
        for step in batching:
            x, y = train_x[step.index], train_y[step.index]
            step.begin_compute()  # compute time starts after the batch is gathered
            loss = F.cross_entropy(model(x), y)
            if rank in slow:
                time.sleep(args.slow_per_sample_s * step.batch)  # the deliberate slowdown (see the docstring)
            optimizer.zero_grad()
            loss.backward()  # this rank's gradient, weighted by b_k / B, goes into DDP's all-reduce
            optimizer.step()
            step.loss = float(loss)
        if rank == 0:
            test_loss, test_acc = evaluate(model.module, test_x, test_y)
            batching.record_evaluation(test_loss, test_acc)
    if rank == 0:
        summary = batching.summary()
        summary["final_batches"] = batching.batches
        print(json.dumps(summary), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
