"""One rank of the multi-process tests (test_torch_ddp.py starts WORLD_SIZE of them with gloo on 127.0.0.1).

usage: ddp_worker.py gradient|train|target OUT_DIR
  gradient: one step with uneven batches (policy "static", capacities 1:2:3:4); writes rank<k>.json with the largest
            difference between the DDP-reduced gradient and the single-process gradient of the same global batch,
            and that of the plain (unweighted) average of the ranks' gradients.
  train:    two epochs of a dataset that no batch divides, with the omnilearn policy deciding every other step (no memory guard: timing noise on a shared CPU) and ranks
            2 and 3 slowed in proportion to their batch; writes rank<k>.json with every step's batches and indices,
            and rank 0 writes the run folder OUT_DIR/run.
  target:   a run of at most 3 epochs with a target accuracy, which rank 0's evaluation after step 3 reports reached
            (the numbers are made up: a fixed outcome); writes rank<k>.json with the steps run and the stop reason, and
            rank 0 writes the run folder OUT_DIR/run.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

from omnilearn import GlobalSampler
from omnilearn.torch import AdaptiveBatching


def make_net() -> torch.nn.Module:
    torch.manual_seed(7)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                               torch.nn.Linear(4 * 6 * 6, 3))


def data(n: int):
    g = torch.Generator().manual_seed(11)
    return torch.randn(n, 1, 8, 8, generator=g), torch.randint(0, 3, (n,), generator=g)


def gradient(rank: int, world: int, out: Path) -> None:
    n, seed = 64, 5
    x, y = data(n)
    net = make_net()
    reference = copy.deepcopy(net)
    model = DistributedDataParallel(net)
    batching = AdaptiveBatching(model, n, seed=seed, max_steps=1, global_batch=40, name="static",
                                capacities=[1.0, 2.0, 3.0, 4.0][:world], min_batch=1, max_batch=40)
    for step in batching:
        batches = step.batches
        F.cross_entropy(model(x[step.index]), y[step.index]).backward()
    # The same step by one process: the whole global batch at once, and the plain average of per-rank gradients.
    sampler = GlobalSampler(n, seed)
    a = sampler.next(batches)
    parts = [sampler.indices(a, k) for k in range(world)]
    everything = torch.tensor([i for p in parts for i in p])
    F.cross_entropy(reference(x[everything]), y[everything]).backward()
    plain = [torch.zeros_like(p) for p in reference.parameters()]
    for p_idx in parts:
        local = copy.deepcopy(reference)
        local.zero_grad()
        idx = torch.tensor(p_idx)
        F.cross_entropy(local(x[idx]), y[idx]).backward()
        for acc, p in zip(plain, local.parameters()):
            acc += p.grad / world
    weighted_err = max(float((p.grad - r.grad).abs().max()) for p, r in zip(model.parameters(), reference.parameters()))
    plain_err = max(float((q - r.grad).abs().max()) for q, r in zip(plain, reference.parameters()))
    scale = max(float(r.grad.abs().max()) for r in reference.parameters())
    (out / f"rank{rank}.json").write_text(json.dumps({"batches": batches, "weighted_err": weighted_err,
                                                      "plain_err": plain_err, "scale": scale}))


def train(rank: int, world: int, out: Path) -> None:
    n = 203
    x, y = data(n)
    model = DistributedDataParallel(make_net())
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    steps = []
    with AdaptiveBatching(model, n, seed=3, epochs=2, global_batch=32, name="omnilearn", every_n=2, dead_band=0.0, memory_guard=False,
                          ewma_alpha=0.5, min_batch=2, max_batch=24, run_dir=str(out / "run") if rank == 0 else None,
                          timeline=True) as batching:
        for step in batching:
            loss = F.cross_entropy(model(x[step.index]), y[step.index])
            if rank >= 2:
                time.sleep(0.003 * step.batch)  # a slower worker: extra time in proportion to its batch
            opt.zero_grad()
            loss.backward()
            opt.step()
            step.loss = float(loss)
            steps.append({"step": step.step, "epoch": step.epoch, "last": step.last_in_epoch,
                          "batches": step.batches, "indices": step.indices})
    (out / f"rank{rank}.json").write_text(json.dumps({"steps": steps, "summary": batching.summary()}))


def target(rank: int, world: int, out: Path) -> None:
    n = 120
    x, y = data(n)
    model = DistributedDataParallel(make_net())
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    steps = 0
    with AdaptiveBatching(model, n, seed=5, epochs=3, target_accuracy=0.75, global_batch=16, name="uniform",
                          min_batch=2, max_batch=14, run_dir=str(out / "run") if rank == 0 else None) as batching:
        for step in batching:
            loss = F.cross_entropy(model(x[step.index]), y[step.index])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step.loss = float(loss)
            steps += 1
            if step.step in (1, 3):  # every rank calls it; rank 0's numbers count
                batching.record_evaluation(loss=1.0, accuracy=0.5 if step.step == 1 else 0.8)
    (out / f"rank{rank}.json").write_text(json.dumps({"steps": steps, "stop_reason": batching.stop_reason,
                                                      "summary": batching.summary()}))


def main() -> int:
    mode, out = sys.argv[1], Path(sys.argv[2])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    {"gradient": gradient, "train": train, "target": target}[mode](rank, world, out)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
