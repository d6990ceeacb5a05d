"""AdaptiveBatching: per-rank batch sizes from OmniLearn's controller in a DistributedDataParallel training loop.

    model = DistributedDataParallel(net)
    with AdaptiveBatching(model, len(train_set), global_batch=256, name="omnilearn", seed=1, epochs=2,
                          run_dir="runs/my-job") as batching:
        for step in batching:
            x, y = train_x[step.index], train_y[step.index]     # this rank's share of the global batch
            loss = F.cross_entropy(model(x), y)                  # reduction="mean" over the local batch
            optimizer.zero_grad()
            loss.backward()                                      # weighted gradients, all-reduced
            optimizer.step()
            step.loss = loss.item()                              # optional, goes to iterations.csv

Every rank must run the same steps (stop with `epochs` or `max_steps`, never by breaking out on one rank only).
A rank whose share of the last step of an epoch is empty still runs forward and backward on its empty batch (DDP
needs every rank in every all-reduce); its gradients then count as zeros. Only the default process group is
supported; a DDP communication hook, if any, must average (divide the SUM by the world size) as DDP's default does.
Not thread-safe: one training thread per rank.
"""

from __future__ import annotations

import json
import math
import os
import platform
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from .. import Controller, RunWriter, __version__
from ..sampler import GlobalSampler, StepAssignment
from .hooks import GradientWeighting

# Per-rank facts all-gathered after each step: start, compute, the rest of the step, loss, accuracy.
_START, _COMPUTE, _REST, _LOSS, _ACC, _FACTS = 0, 1, 2, 3, 4, 5


@dataclass
class Step:
    """One BSP step as this rank sees it. Set `loss` (and `accuracy`) to have them in iterations.csv."""
    step: int
    epoch: int
    last_in_epoch: bool
    rank: int
    batches: list[int]      # every rank's share of this step (the last step of an epoch may shrink them)
    indices: list[int]      # this rank's sample indices
    index: torch.Tensor     # the same, as an int64 tensor for indexing
    weight: float           # lambda_k = batch / global_batch, applied by the gradient hooks
    loss: Optional[float] = None
    accuracy: Optional[float] = None
    _timer: dict = field(default_factory=dict, repr=False)

    @property
    def batch(self) -> int:
        return self.batches[self.rank]

    @property
    def global_batch(self) -> int:
        return sum(self.batches)

    def begin_compute(self) -> None:
        """Restarts this step's compute timer (call it after loading data to leave the loading out)."""
        self._timer["start"] = time.perf_counter()


class AdaptiveBatching:
    """Drives a DDP model's steps with the controller's per-rank batches (see the module's docstring).

    model: a DistributedDataParallel module (hooks on its parameters' gradients weight them, see hooks.py).
    dataset_size: training samples; the sampler permutes range(dataset_size) once per epoch from `seed`.
    Controller settings, either `scenario` (a scenario file: its policy, global batch and workers, whose count must be
    the world size; `overrides` as `omnilearn sim --set`) or keyword arguments: global_batch, capacities (nominal
    relative speeds, default all 1) and the scenario's `policy:` keys (name, gain, fit_window, min_batch, max_batch,
    dead_band, ewma_alpha, decide, every_n, imbalance_threshold, memory_guard, memory_guard_tolerance).
    epochs, max_steps: when to stop (max_steps 0: no limit). run_dir: run folder written by rank 0 (None: none);
    replace: replace an earlier run's files there. timeline: also write timeline.json. The folder gets its
    summary.json at close() (the end of the `with` block) if the loop ran to its end.
    """

    def __init__(self, model: DistributedDataParallel, dataset_size: int, *, seed: int = 1, epochs: int = 1,
                 max_steps: int = 0, run_dir: Optional[str] = None, replace: bool = False, timeline: bool = True,
                 scenario: Optional[str] = None, overrides: Sequence[str] = (), global_batch: Optional[int] = None,
                 capacities: Optional[Sequence[float]] = None, **policy):
        if not isinstance(model, DistributedDataParallel):
            raise TypeError(f"model: expected a torch.nn.parallel.DistributedDataParallel, got {type(model).__name__}")
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("AdaptiveBatching: call torch.distributed.init_process_group first")
        if int(epochs) < 1:
            raise ValueError(f"epochs: expected >= 1, got {epochs}")
        if int(max_steps) < 0:
            raise ValueError(f"max_steps: expected >= 0 (0: no limit), got {max_steps}")
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()
        self.epochs = int(epochs)
        self.max_steps = int(max_steps)
        # Every rank builds the controller, so bad settings fail on every rank alike (no rank left waiting); only
        # rank 0's is consulted after the initial plan.
        if scenario is not None:
            if global_batch is not None or capacities is not None or policy:
                raise ValueError("scenario: give either a scenario file or global_batch/capacities/policy settings, "
                                 "not both (change a scenario's values with overrides=['policy.gain=0.5', ...])")
            self.controller = Controller.from_scenario(str(scenario), list(overrides))
            if self.controller.worker_count != self.world:
                raise ValueError(f"scenario: {scenario} has {self.controller.worker_count} workers but the world size "
                                 f"is {self.world}")
        else:
            if global_batch is None:
                raise ValueError("global_batch: required (or give a scenario file)")
            caps = [1.0] * self.world if capacities is None else [float(c) for c in capacities]
            if len(caps) != self.world:
                raise ValueError(f"capacities: expected one per rank ({self.world}), got {len(caps)}")
            if policy.get("mode", "bsp") != "bsp":
                raise ValueError(f"mode: DistributedDataParallel is synchronous: only 'bsp', got {policy['mode']!r}")
            self.controller = Controller(capacities=caps, global_batch=int(global_batch), **policy)
        self.settings = self.controller.settings()
        if self.settings["mode"] != "bsp":
            raise ValueError("mode: DistributedDataParallel is synchronous: the scenario must be in bsp mode")
        self.sampler = GlobalSampler(int(dataset_size), int(seed))
        self.seed = int(seed)
        self.batches = list(self.controller.current_plan.batch)
        self._weighting = GradientWeighting(model, self.world)

        self.writer: Optional[RunWriter] = None
        error: Optional[BaseException] = None
        if self.rank == 0 and run_dir is not None:
            try:
                self.writer = RunWriter.open(str(run_dir), json.dumps(self._manifest(dataset_size, scenario,
                                                                                     overrides)),
                                             timeline=timeline, replace=replace)
                self.writer.add_plan(self.controller.current_plan, epoch=0)
            except BaseException as e:  # noqa: B902 - re-raised below, after telling the other ranks
                error = e
        self.step = 0
        self.stop_reason = ""
        self.completed = False  # the loop ran to its end (epochs or max_steps)
        self._stats = _RunStats(self.world)
        # The exchange's tensors live as long as this object. A tensor made in Python whose last reference a gloo
        # worker thread drops needs the GIL there; torch 1.13 then deadlocks at interpreter exit when the main thread
        # destroys the process group (joining that thread) while holding the GIL. Kept here, the worker's reference
        # is never the last one.
        self._facts = torch.zeros(_FACTS, dtype=torch.float64)
        self._gathered = [torch.zeros(_FACTS, dtype=torch.float64) for _ in range(self.world)]
        self._decision = torch.zeros(self.world + 1, dtype=torch.int64)
        # A barrier that also tells every rank whether rank 0 could open the run folder; the run's clock starts on
        # every rank together after it.
        failed = torch.tensor([0 if error is None else 1], dtype=torch.int64)
        dist.all_reduce(failed)
        if error is not None:
            raise error
        if int(failed) != 0:
            raise RuntimeError(f"rank 0 could not open the run folder {run_dir} (see its error)")
        self._t0 = time.perf_counter()

    # -- the loop ---------------------------------------------------------------------------------------------------
    def __iter__(self):
        while True:
            if self.max_steps and self.step >= self.max_steps:
                self.stop_reason = "steps"
                break
            start = time.perf_counter()
            a = self.sampler.next(self.batches)
            if a.epoch >= self.epochs:
                self.stop_reason = "epochs"
                break
            indices = self.sampler.indices(a, self.rank)
            weight = a.batch[self.rank] / a.global_batch
            self._weighting.start_step(weight)
            step = Step(self.step, a.epoch, a.last_in_epoch, self.rank, list(a.batch), indices,
                        torch.tensor(indices, dtype=torch.int64), weight)
            step._timer["start"] = time.perf_counter()
            yield step
            self._finish_step(a, step, start)
            self.step += 1
        self.completed = True

    def _finish_step(self, a: StepAssignment, step: Step, start: float) -> None:
        end = time.perf_counter()
        if self._weighting.last_ready_s is None:
            raise RuntimeError(f"step {self.step}: no gradient was computed on rank {self.rank}: call backward() on a "
                               "loss computed with the DDP model inside the step")
        compute_s = max(0.0, self._weighting.last_ready_s - step._timer["start"])
        facts, gathered, decision = self._facts, self._gathered, self._decision
        facts[_START] = start - self._t0
        facts[_COMPUTE] = compute_s
        facts[_REST] = max(0.0, (end - start) - compute_s)
        facts[_LOSS] = math.nan if step.loss is None else float(step.loss)
        facts[_ACC] = math.nan if step.accuracy is None else float(step.accuracy)
        dist.all_gather(gathered, facts)
        # Rank 0 decides; [ok, batch per rank] goes to every rank (ok 0: rank 0 failed and raises its own error).
        decision.zero_()
        error: Optional[BaseException] = None
        if self.rank == 0:
            try:
                decision[1:] = torch.tensor(self._decide(a, [g.tolist() for g in gathered], end), dtype=torch.int64)
                decision[0] = 1
            except BaseException as e:  # noqa: B902 - re-raised below, after releasing the other ranks
                error = e
        dist.broadcast(decision, src=0)
        if error is not None:
            raise error
        if int(decision[0]) != 1:
            raise RuntimeError(f"step {self.step}: rank 0 failed while deciding the next plan (see its error)")
        self.batches = [int(b) for b in decision[1:].tolist()]

    def _decide(self, a: StepAssignment, facts: list[list[float]], end: float) -> list[int]:
        now_s = end - self._t0
        times = [f[_COMPUTE] for f in facts]
        slowest = max((times[k] for k in range(self.world) if a.batch[k] > 0), default=0.0)
        rows = []
        for k, f in enumerate(facts):
            rest = f[_REST]
            # What is not compute splits into waiting for the slowest rank and the exchange itself (as the testbed).
            wait = min(max(0.0, slowest - times[k]), rest) if a.batch[k] > 0 else 0.0
            rows.append((k, f[_START], times[k], rest - wait, wait, a.batch[k], f[_LOSS], f[_ACC]))
        self._stats.add_step(a.epoch, now_s, rows)
        if self.writer is not None:
            for k, start_s, compute_s, comm_s, wait_s, batch, loss, acc in rows:
                self.writer.add_iteration(worker=k, step=self.step, epoch=a.epoch, start_s=start_s,
                                          compute_s=compute_s, comm_s=comm_s, wait_s=wait_s, batch=batch,
                                          loss=None if math.isnan(loss) else loss,
                                          accuracy=None if math.isnan(acc) else acc)
                self.writer.span(k, "compute", start_s, compute_s)
                self.writer.span(k, "exchange", start_s + compute_s, comm_s + wait_s)
        d0 = time.perf_counter()
        if not a.last_in_epoch:  # the shrunken remainder step would skew the per-batch times (as the testbed)
            for k in range(self.world):
                if a.batch[k] > 0:
                    self.controller.report_iteration(worker=k, step=self.step, end_s=now_s, compute_s=times[k],
                                                     batch=a.batch[k])
        plan = self.controller.plan_next(step=self.step + 1, epoch=a.epoch + 1 if a.last_in_epoch else a.epoch,
                                         now_s=now_s)
        self._stats.decision_s += time.perf_counter() - d0
        if plan.decided:
            self._stats.decisions += 1
            self._stats.changes += int(plan.changed)
            if self.writer is not None:
                self.writer.add_plan(plan, epoch=a.epoch)
        return list(plan.batch)

    # -- the end ----------------------------------------------------------------------------------------------------
    def record_evaluation(self, loss: float, accuracy: float) -> None:
        """A test evaluation (rank 0's numbers) at the current step, for evaluations.csv and the summary's final
        accuracy. Call it before close() (inside the `with` block)."""
        if self.rank == 0:
            self._stats.final_accuracy = float(accuracy)
            if self.writer is not None:
                self.writer.add_evaluation(time_s=time.perf_counter() - self._t0, step=max(0, self.step - 1),
                                           epoch=max(0, self._stats.last_epoch), loss=float(loss),
                                           accuracy=float(accuracy))

    def summary(self) -> dict:
        """The run's summary so far (rank 0 only has the numbers; other ranks get an empty dict)."""
        return self._stats.summary(self.settings["name"]) if self.rank == 0 else {}

    def close(self) -> None:
        """Ends the run folder: with summary.json if the loop ran to its end, else without (a run cut short). Called
        by the `with` block's end; evaluations recorded before it go into the folder. A no-op once closed."""
        if self.writer is None or self.writer.closed:
            return
        if not self.completed:
            self.writer.close()
            return
        s = self._stats.summary(self.settings["name"])
        self.writer.finish(policy=s["policy"], mode="bsp", workers=self.world, iterations=s["iterations"],
                           epochs=s["epochs"], total_time_s=s["total_time_s"], mean_iteration_s=s["mean_iteration_s"],
                           idle_fraction=s["idle_fraction"], epoch_time_s=s["epoch_time_s"],
                           decisions=s["decisions"], batch_changes=s["batch_changes"],
                           final_accuracy=s["final_accuracy"], extra=s["extra"])

    def __enter__(self) -> "AdaptiveBatching":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None and self.writer is not None and not self.writer.closed:
            self.writer.close()  # an error: the folder keeps its rows, without a summary
        self.close()

    def _manifest(self, dataset_size: int, scenario: Optional[str], overrides: Sequence[str]) -> dict:
        return {
            "backend": "torch",
            "tool": "omnilearn.torch.AdaptiveBatching",
            "argv": list(sys.argv),
            "seed": self.seed,
            "world_size": self.world,
            "dataset_samples": int(dataset_size),
            "epochs": self.epochs,
            "max_steps": self.max_steps,
            "scenario_file": scenario,
            "overrides": list(overrides),
            "policy": self.settings,
            "versions": {"omnilearn": __version__, "python": platform.python_version(), "torch": torch.__version__},
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }


class _RunStats:
    """What summary.json needs, accumulated on rank 0."""

    def __init__(self, world: int):
        self.world = world
        self.steps = 0
        self.step_s: list[float] = []
        self.busy = {"compute": 0.0, "comm": 0.0, "wait": 0.0}
        self.epoch_end: dict[int, float] = {}
        self.last_epoch = -1
        self.end_s = 0.0
        self.decision_s = 0.0
        self.decisions = 0
        self.changes = 0
        self.final_accuracy: Optional[float] = None

    def add_step(self, epoch: int, end_s: float, rows) -> None:
        self.steps += 1
        start = min(r[1] for r in rows)
        self.step_s.append(max(0.0, end_s - start))
        for _, _, compute_s, comm_s, wait_s, *_ in rows:
            self.busy["compute"] += compute_s
            self.busy["comm"] += comm_s
            self.busy["wait"] += wait_s
        self.epoch_end[epoch] = end_s
        self.last_epoch = epoch
        self.end_s = end_s

    def summary(self, policy: str) -> dict:
        total = sum(self.busy.values())
        epoch_times, previous = [], 0.0
        for e in sorted(self.epoch_end):
            epoch_times.append(self.epoch_end[e] - previous)
            previous = self.epoch_end[e]
        return {
            "policy": policy,
            "iterations": self.steps,
            "epochs": len(self.epoch_end),
            "total_time_s": self.end_s,
            "mean_iteration_s": sum(self.step_s) / len(self.step_s) if self.step_s else 0.0,
            "idle_fraction": self.busy["wait"] / total if total > 0 else 0.0,
            "epoch_time_s": epoch_times,
            "decisions": self.decisions,
            "batch_changes": self.changes,
            "final_accuracy": self.final_accuracy,
            "extra": {"controller_decision_s": self.decision_s,
                      "controller_overhead": self.decision_s / self.end_s if self.end_s > 0 else 0.0},
        }
