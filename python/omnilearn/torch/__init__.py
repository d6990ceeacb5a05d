"""OmniLearn in a torch.distributed training loop (BSP, DistributedDataParallel).

`AdaptiveBatching` wraps a DDP model: it gives each rank its planned share of every global batch (the testbed's
global sampler: each epoch covered exactly once), weights each rank's gradient so that DDP's all-reduce gives the
global-batch mean gradient (lambda_k = b_k / sum(b), hooks.py), times each rank's compute (up to its last gradient,
so the all-reduce wait is excluded), all-gathers those times, runs the C++ controller on rank 0 and
broadcasts its plan, and writes a run folder that `omnilearn report` reads.
"""

from .adaptive import AdaptiveBatching, Step
from .hooks import GradientWeighting

__all__ = ["AdaptiveBatching", "GradientWeighting", "Step"]
