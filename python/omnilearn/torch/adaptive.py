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

Every rank must run the same steps: stop with the run's stop rule (epochs, sample_budget, max_steps, time_budget_s,
target_accuracy: the simulator's and the testbed's StopRule), never by breaking out on one rank only.
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

from .. import Controller, Manifest, RunRecorder, RunSummary, StopRule, __version__, stop_reason_names
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
    When to stop (a StopRule; 0 is no limit): epochs, or sample_budget samples instead; max_steps steps;
    time_budget_s seconds of training (rank 0's clock, from the start of the loop); target_accuracy, reached by an
    evaluation that rank 0 records (record_evaluation). The loop ends on every rank together; `stop_reason` says why.
    run_dir: run folder written by rank 0 through the run layer (the simulator's and the testbed's schema; None: none);
    replace: replace an earlier run's files there. timeline: also write timeline.json. The folder gets its
    summary.json at close() (the end of the `with` block) if the loop ran to its end.
    """

    def __init__(self, model: DistributedDataParallel, dataset_size: int, *, seed: int = 1, epochs: int = 1,
                 max_steps: int = 0, sample_budget: int = 0, time_budget_s: float = 0.0, target_accuracy: float = 0.0,
                 run_dir: Optional[str] = None, replace: bool = False, timeline: bool = True,
                 scenario: Optional[str] = None, overrides: Sequence[str] = (), global_batch: Optional[int] = None,
                 capacities: Optional[Sequence[float]] = None, **policy):
        if not isinstance(model, DistributedDataParallel):
            raise TypeError(f"model: expected a torch.nn.parallel.DistributedDataParallel, got {type(model).__name__}")
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("AdaptiveBatching: call torch.distributed.init_process_group first")
        started = time.perf_counter()
        # Every rank keeps the rule: the step cap, the sample budget and the epochs end the loop on every rank alike;
        # rank 0's time budget and target reach the others with the next plan.
        self._stop = StopRule(dataset_samples=int(dataset_size), epochs=int(epochs), sample_budget=int(sample_budget),
                              max_steps=int(max_steps), time_budget_s=float(time_budget_s),
                              target_accuracy=float(target_accuracy))
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

        # Rank 0 records the run (the totals for summary(), and the run folder when run_dir is given).
        self.recorder: Optional[RunRecorder] = None
        self._manifest: Optional[Manifest] = None
        error: Optional[BaseException] = None
        if self.rank == 0:
            try:
                if run_dir is not None:
                    self._manifest = self._make_manifest(scenario, overrides)
                self.recorder = RunRecorder(None if run_dir is None else str(run_dir), self._manifest,
                                            timeline=timeline, replace=replace)
                self.recorder.plan(self.controller.current_plan, epoch=0)
            except BaseException as e:  # noqa: B902 - re-raised below, after telling the other ranks
                error = e
        self.step = 0
        self.completed = False  # the loop ran to its end (the stop rule said stop)
        self._samples = 0  # samples of the steps applied
        self._started = started
        self._decision_s = 0.0
        self._time_to_target: Optional[float] = None
        self._steps_to_target: Optional[int] = None
        self._final: Optional[dict] = None  # rank 0's summary, kept at close()
        self._in_step = False  # the loop's body runs (this step is applied once its optimizer stepped)
        self._epoch = 0  # the epoch of the current (or the last) step
        # The exchange's tensors live as long as this object. A tensor made in Python whose last reference a gloo
        # worker thread drops needs the GIL there; torch 1.13 then deadlocks at interpreter exit when the main thread
        # destroys the process group (joining that thread) while holding the GIL. Kept here, the worker's reference
        # is never the last one.
        self._facts = torch.zeros(_FACTS, dtype=torch.float64)
        self._gathered = [torch.zeros(_FACTS, dtype=torch.float64) for _ in range(self.world)]
        self._decision = torch.zeros(self.world + 2, dtype=torch.int64)
        self._reasons = stop_reason_names()  # a reason's code is its index
        # A barrier that also tells every rank whether rank 0 could open the run folder; the run's clock starts on
        # every rank together after it.
        failed = torch.tensor([0 if error is None else 1], dtype=torch.int64)
        dist.all_reduce(failed)
        if error is not None:
            raise error
        if int(failed) != 0:
            raise RuntimeError(f"rank 0 could not open the run folder {run_dir} (see its error)")
        self._t0 = time.perf_counter()

    @property
    def stop_reason(self) -> str:
        """Why the loop ended (a StopRule reason: epochs, samples, steps, time, target; 'none' while it runs)."""
        return self._stop.reason

    # -- the loop ---------------------------------------------------------------------------------------------------
    def __iter__(self):
        # The step cap, the sample budget or the epochs (every rank sees the same totals), or rank 0's time budget or
        # target, which _finish_step passed on.
        while not self._stop.stopped and self._stop.progress(steps=self.step, samples=self._samples) == "none":
            start = time.perf_counter()
            a = self.sampler.next(self.batches)
            indices = self.sampler.indices(a, self.rank)
            weight = a.batch[self.rank] / a.global_batch
            self._weighting.start_step(weight)
            step = Step(self.step, a.epoch, a.last_in_epoch, self.rank, list(a.batch), indices,
                        torch.tensor(indices, dtype=torch.int64), weight)
            step._timer["start"] = time.perf_counter()
            self._in_step, self._epoch = True, a.epoch
            yield step
            self._in_step = False
            self._finish_step(a, step, start)
            self.step += 1
            self._samples += a.global_batch
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
        # Rank 0 decides; [ok, stop reason, batch per rank] goes to every rank (ok 0: rank 0 failed and raises its own
        # error; the stop reason's code: its index in stop_reason_names(), 0 while the run goes on).
        decision.zero_()
        error: Optional[BaseException] = None
        if self.rank == 0:
            try:
                decision[2:] = torch.tensor(self._decide(a, [g.tolist() for g in gathered], end), dtype=torch.int64)
                self._stop.elapsed(end - self._t0)
                decision[1] = self._reasons.index(self._stop.reason)
                decision[0] = 1
            except BaseException as e:  # noqa: B902 - re-raised below, after releasing the other ranks
                error = e
        dist.broadcast(decision, src=0)
        if error is not None:
            raise error
        if int(decision[0]) != 1:
            raise RuntimeError(f"step {self.step}: rank 0 failed while deciding the next plan (see its error)")
        self.batches = [int(b) for b in decision[2:].tolist()]
        if int(decision[1]) != 0:
            self._stop.stop(self._reasons[int(decision[1])])

    def _decide(self, a: StepAssignment, facts: list[list[float]], end: float) -> list[int]:
        now_s = end - self._t0
        times = [f[_COMPUTE] for f in facts]
        slowest = max((times[k] for k in range(self.world) if a.batch[k] > 0), default=0.0)
        for k, f in enumerate(facts):
            rest = f[_REST]
            # What is not compute splits into waiting for the slowest rank and the exchange itself (as the testbed).
            wait = min(max(0.0, slowest - times[k]), rest) if a.batch[k] > 0 else 0.0
            self.recorder.iteration(worker=k, step=self.step, epoch=a.epoch, start_s=f[_START], compute_s=times[k],
                                    comm_s=rest - wait, wait_s=wait, batch=a.batch[k],
                                    loss=None if math.isnan(f[_LOSS]) else f[_LOSS],
                                    accuracy=None if math.isnan(f[_ACC]) else f[_ACC])
        d0 = time.perf_counter()
        if not a.last_in_epoch:  # the shrunken remainder step would skew the per-batch times (as the testbed)
            for k in range(self.world):
                if a.batch[k] > 0:
                    self.controller.report_iteration(worker=k, step=self.step, end_s=now_s, compute_s=times[k],
                                                     batch=a.batch[k])
        plan = self.controller.plan_next(step=self.step + 1, epoch=a.epoch + 1 if a.last_in_epoch else a.epoch,
                                         now_s=now_s)
        self._decision_s += time.perf_counter() - d0
        self.recorder.plan(plan, epoch=a.epoch)  # recorded when the policy was consulted
        return list(plan.batch)

    # -- the end ----------------------------------------------------------------------------------------------------
    def record_evaluation(self, loss: float, accuracy: float) -> None:
        """A test evaluation (rank 0's numbers) of the model after the steps applied so far, for evaluations.csv, the
        summary's final accuracy and the stop rule's target. Inside the loop, call it after optimizer.step(): it counts
        the current step as applied, and a reached target ends the loop after this step on every rank. Call it before
        close() (inside the `with` block); other ranks' calls are ignored."""
        if self.rank != 0 or self.recorder is None or self.recorder.closed:
            return
        now_s = time.perf_counter() - self._t0
        applied = self.step + (1 if self._in_step else 0)
        self.recorder.evaluation(time_s=now_s, step=max(0, applied - 1), epoch=self._epoch,
                                 loss=float(loss), accuracy=float(accuracy))
        if self._stop.evaluation(float(accuracy)) == "target" and self._time_to_target is None:
            self._time_to_target, self._steps_to_target = now_s, applied

    def summary(self) -> dict:
        """The run's summary so far, as summary.json has it (rank 0 only has the numbers; other ranks get an empty
        dict)."""
        if self.rank != 0:
            return {}
        if self._final is not None or self.recorder is None:
            return dict(self._final or {})
        return json.loads(self._summary().to_json())

    def close(self) -> None:
        """Ends the run folder: with summary.json if the loop ran to its end, else without (a run cut short). Called
        by the `with` block's end; evaluations recorded before it go into the folder. A no-op once closed."""
        if self.recorder is None or self.recorder.closed:
            return
        if not self.completed:
            self.recorder.close()
            return
        s = self._summary()
        self._final = json.loads(s.to_json())
        if self._manifest is not None:
            self.recorder.rewrite_manifest(self._manifest.text(elapsed_s=time.perf_counter() - self._started))
        self.recorder.finish(s)

    def _summary(self) -> RunSummary:
        """Rank 0's summary from its recorder, as the testbed's launcher makes it (times from the loop's start)."""
        s = RunSummary(policy=self.settings["name"], mode="bsp", workers=self.world)
        self.recorder.fill_from_records(s, origin_s=0.0)
        self.recorder.complete(s)
        s.stop_reason = self._stop.reason
        s.time_to_target_s = self._time_to_target
        extra = {"controller_decision_s": self._decision_s,
                 "controller_overhead": self._decision_s / s.total_time_s if s.total_time_s > 0 else 0.0,
                 "samples": float(self._samples)}
        if self._steps_to_target is not None:
            extra["steps_to_target"] = float(self._steps_to_target)
        s.extra = extra
        return s

    def __enter__(self) -> "AdaptiveBatching":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None and self.recorder is not None and not self.recorder.closed:
            self.recorder.close()  # an error: the folder keeps its rows, without a summary
        self.close()

    def _make_manifest(self, scenario: Optional[str], overrides: Sequence[str]) -> Manifest:
        """manifest.json as the other back ends write it: the resolved scenario (the controller's, with this run's
        seed and stop rule), argv, the seed, then this back end's fields."""
        resolved = self.controller.scenario
        resolved.seed = self.seed
        resolved.set_stop_limits(self._stop)
        m = Manifest("torch", resolved, list(sys.argv))
        m.set("tool", "omnilearn.torch.AdaptiveBatching")
        m.set("world_size", self.world)
        m.set("scenario_file", scenario)
        m.set("overrides", list(overrides))
        m.set("versions", {"omnilearn": __version__, "python": platform.python_version(), "torch": torch.__version__})
        m.set("host", socket.gethostname())
        m.set("pid", os.getpid())
        return m
