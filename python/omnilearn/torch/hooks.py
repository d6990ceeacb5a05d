"""The DDP communication hook that makes the SUM all-reduce the global-batch mean gradient.

Rank k computes g_k, the mean gradient over its b_k samples (a loss with reduction="mean"). The hook multiplies its
bucket by lambda_k = b_k / B (B = sum of the step's batches) and all-reduces with SUM: sum_k lambda_k g_k is the mean
over all B samples, exactly as if one process had computed the whole global batch. It also stamps the time each
bucket is ready: the last stamp ends the rank's compute (the all-reduce wait comes after it).
"""

# No `from __future__ import annotations`: DDP checks the hook's annotations as objects.
import time
from dataclasses import dataclass
from typing import Optional

import torch
import torch.distributed as dist


@dataclass
class WeightedAllReduceState:
    weight: float = 1.0                  # lambda_k of this rank for the current step
    group: Optional[object] = None       # process group (None: the default one)
    last_ready_s: Optional[float] = None  # time.perf_counter() when the last bucket became ready this step
    buckets: int = 0                     # buckets seen this step

    def start_step(self, weight: float) -> None:
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"weight: expected lambda_k = b_k / sum(b) in [0, 1], got {weight}")
        self.weight = float(weight)
        self.last_ready_s = None
        self.buckets = 0


def weighted_allreduce_hook(state: WeightedAllReduceState,
                            bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """DDP comm hook (model.register_comm_hook(state, weighted_allreduce_hook)): bucket *= lambda_k, SUM all-reduce."""
    state.last_ready_s = time.perf_counter()
    state.buckets += 1
    buffer = bucket.buffer()
    if state.weight == 0.0:
        buffer.zero_()  # an empty share: nothing to add (and no NaN from a mean over no samples)
    else:
        buffer.mul_(state.weight)
    work = dist.all_reduce(buffer, op=dist.ReduceOp.SUM, group=state.group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])
