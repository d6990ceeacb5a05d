"""OmniLearn's batch controller for your own training loop.

`Controller` is the C++ controller (controller/) itself, through bindings: make one from the same policy settings a
scenario uses (its `policy:` keys, plus global_batch, mode and the workers' capacities, or `Controller.from_scenario`),
report each iteration's compute time and ask `plan_next` for per-worker batches and gradient weights. The run layer
that the simulator and the testbed share is bound too: `StopRule` (when a run stops), `Manifest`, `RunRecorder` and
`RunSummary` write run folders in their schema, which `omnilearn report` reads (`RunWriter` writes rows as given).
`GlobalSampler` is the testbed's global sampler (same permutation, same cut into steps). The PyTorch DDP integration is in `omnilearn.torch`.
"""

from __future__ import annotations

from ._extension import load_core

_core = load_core(__path__)

Controller = _core.Controller
Plan = _core.Plan
Scenario = _core.Scenario
StopRule = _core.StopRule
Manifest = _core.Manifest
RunSummary = _core.RunSummary
RunRecorder = _core.RunRecorder
RunWriter = _core.RunWriter
policy_names = _core.policy_names
stop_reason_names = _core.stop_reason_names

from .sampler import GlobalSampler, StepAssignment, split_proportionally  # noqa: E402

__version__ = "0.1.0"
__all__ = ["Controller", "Plan", "Scenario", "StopRule", "Manifest", "RunSummary", "RunRecorder", "RunWriter",
           "GlobalSampler", "StepAssignment", "split_proportionally", "policy_names", "stop_reason_names"]
