"""OmniLearn's batch controller for your own training loop.

`Controller` is the C++ controller (controller/) itself, through bindings: make one from the same policy settings a
scenario uses (its `policy:` keys, plus global_batch, mode and the workers' capacities, or `Controller.from_scenario`),
report each iteration's compute time and ask `plan_next` for per-worker batches and gradient weights. `RunWriter`
writes run folders that `omnilearn report` reads. `GlobalSampler` is the testbed's global sampler (same permutation,
same cut into steps). The PyTorch DDP integration is in `omnilearn.torch`.
"""

from __future__ import annotations

from ._extension import load_core

_core = load_core(__path__)

Controller = _core.Controller
Plan = _core.Plan
RunWriter = _core.RunWriter
policy_names = _core.policy_names

from .sampler import GlobalSampler, StepAssignment, split_proportionally  # noqa: E402

__version__ = "0.1.0"
__all__ = ["Controller", "Plan", "RunWriter", "GlobalSampler", "StepAssignment", "split_proportionally",
           "policy_names"]
