"""GlobalSampler: the testbed's global sampler (emulator/src/data/global_sampler.cpp) in Python, bit for bit.

One seeded permutation of the dataset per epoch; each BSP step takes the next sum(b) indices and gives worker k a
contiguous run of b_k of them, in worker order; the last step of an epoch splits what is left in proportion to the
batches (largest remainder), so every epoch covers the data exactly once. The permutation of epoch e is the C++
one: a Fisher-Yates shuffle driven by std::mt19937_64 seeded with seed * 0x9E3779B97F4A7C15 + e + 1 (mod 2^64),
drawing rng() % (i + 1); std::mt19937_64 is fully specified by the C++ standard, so the same (seed, e) gives the same
permutation here and in `omnilearn emulate`. Every rank runs its own copy with the same seed and batches and so
computes the same assignment. Not thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

_MASK64 = (1 << 64) - 1


class _MT19937_64:
    """std::mt19937_64 (the C++ standard's parameters); yields the same 64-bit numbers."""

    _N, _M = 312, 156
    _MATRIX_A = 0xB5026F5AA96619E9
    _UPPER, _LOWER = 0xFFFFFFFF80000000, 0x7FFFFFFF

    def __init__(self, seed: int):
        mt = [seed & _MASK64]
        for i in range(1, self._N):
            prev = mt[-1]
            mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & _MASK64)
        self._mt = mt
        self._index = self._N

    def _twist(self) -> None:
        mt, n, m, a = self._mt, self._N, self._M, self._MATRIX_A
        upper, lower = self._UPPER, self._LOWER
        for i in range(n):
            y = (mt[i] & upper) | (mt[(i + 1) % n] & lower)
            mt[i] = mt[(i + m) % n] ^ (y >> 1) ^ (a if y & 1 else 0)
        self._index = 0

    def __call__(self) -> int:
        if self._index >= self._N:
            self._twist()
        y = self._mt[self._index]
        self._index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & _MASK64


def epoch_permutation(samples: int, seed: int, epoch: int) -> list[int]:
    """The permutation of [0, samples) that epoch `epoch` uses (the C++ GlobalSampler's, exactly)."""
    perm = list(range(samples))
    rng = _MT19937_64((seed * 0x9E3779B97F4A7C15 + epoch + 1) & _MASK64)
    for i in range(samples - 1, 0, -1):
        j = rng() % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def split_proportionally(total: int, weights: Sequence[int]) -> list[int]:
    """Splits `total` in proportion to `weights` (>= 0, not all 0) by largest remainder; the parts sum to `total`."""
    weights = [int(w) for w in weights]
    wsum = sum(weights)
    if wsum <= 0 or total < 0 or any(w < 0 for w in weights):
        raise ValueError(f"weights: expected non-negative weights with a positive sum and total >= 0, got "
                         f"{weights} and total {total}")
    part = [total * w // wsum for w in weights]
    # Largest numerator remainder first, ties in worker order (std::stable_sort in the C++).
    order = sorted(range(len(weights)), key=lambda k: -(total * weights[k] % wsum))
    given, i = sum(part), 0
    while given < total:
        part[order[i % len(order)]] += 1
        given += 1
        i += 1
    return part


@dataclass
class StepAssignment:
    epoch: int
    step_in_epoch: int
    last_in_epoch: bool
    batch: list[int]                  # samples each worker actually gets (the remainder step shrinks them)
    offset: list[int] = field(default_factory=list)  # where worker k's samples start in the epoch's permutation

    @property
    def global_batch(self) -> int:
        return sum(self.batch)


class GlobalSampler:
    """Cuts one seeded permutation per epoch into BSP steps of per-worker batches (see the module's docstring)."""

    def __init__(self, samples: int, seed: int):
        if int(samples) <= 0:
            raise ValueError(f"samples: expected a positive number of training samples, got {samples}")
        if int(seed) < 0:
            raise ValueError(f"seed: expected a non-negative integer (a uint64 in the C++), got {seed}")
        self.samples = int(samples)
        self.seed = int(seed) & _MASK64
        self.epoch = -1
        self._position = 0
        self._step_in_epoch = 0
        self._permutation: list[int] = []

    def _start_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self._position = 0
        self._step_in_epoch = 0
        self._permutation = epoch_permutation(self.samples, self.seed, epoch)

    def next(self, batch: Sequence[int]) -> StepAssignment:
        """Assigns the next step for `batch` (per worker, >= 0, not all 0); starts a new epoch when the previous one
        is used up."""
        batch = [int(b) for b in batch]
        if any(b < 0 for b in batch) or sum(batch) <= 0:
            raise ValueError(f"batch: expected per-worker batches >= 0 with a positive sum, got {batch}")
        if self.epoch < 0 or self._position >= self.samples:
            self._start_epoch(self.epoch + 1)
        step = self._step_in_epoch
        self._step_in_epoch += 1
        left = self.samples - self._position
        last = left <= sum(batch)
        actual = split_proportionally(left, batch) if last else list(batch)
        offset = []
        for b in actual:
            offset.append(self._position)
            self._position += b
        return StepAssignment(self.epoch, step, last, actual, offset)

    def indices(self, step: StepAssignment, worker: int) -> list[int]:
        """Sample indices of `worker` in `step` (a step of the current epoch)."""
        if step.epoch != self.epoch:
            raise ValueError(f"step: from epoch {step.epoch}, but the sampler is in epoch {self.epoch}")
        if not 0 <= worker < len(step.batch):
            raise ValueError(f"worker: expected a worker in [0, {len(step.batch)}), got {worker}")
        start = step.offset[worker]
        return self._permutation[start:start + step.batch[worker]]
