"""The Python GlobalSampler is the testbed's (emulator/src/data/global_sampler.cpp): the same permutation and the same
cut into steps as the C++ one (through the reference program), and each epoch covered exactly once while the
batches change every step."""

from __future__ import annotations

import random
import subprocess

import pytest


def changing_batches(rng: random.Random, workers: int, steps: int) -> list[list[int]]:
    return [[rng.randrange(0, 20) + (1 if k == 0 else 0) for k in range(workers)] for _ in range(steps)]


def test_covers_each_epoch_exactly_once_with_changing_batches(omnilearn):
    seed = random.SystemRandom().randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    samples = 257
    sampler = omnilearn.GlobalSampler(samples, seed)
    seen: dict[int, list[int]] = {}
    for batch in changing_batches(rng, 4, 120):
        a = sampler.next(batch)
        if not a.last_in_epoch:
            assert a.batch == batch
        else:
            assert sum(a.batch) == samples - sum(len(v) for v in [seen.get(a.epoch, [])])
        for k in range(4):
            part = sampler.indices(a, k)
            assert len(part) == a.batch[k]
            seen.setdefault(a.epoch, []).extend(part)
    complete = [e for e in seen if e < sampler.epoch]
    assert len(complete) >= 2
    for e in complete:
        assert sorted(seen[e]) == list(range(samples)), f"epoch {e}"
    assert seen[0] != seen[1], "every epoch has its own permutation"


def test_split_proportionally(omnilearn):
    split_proportionally = omnilearn.split_proportionally
    assert split_proportionally(10, [1, 1, 1]) == [4, 3, 3]
    assert split_proportionally(7, [5, 0, 2]) == [5, 0, 2]
    assert sum(split_proportionally(96, [61, 31, 21, 15])) == 96
    with pytest.raises(ValueError, match="weights"):
        split_proportionally(3, [0, 0])


def test_bad_arguments_raise(omnilearn):
    with pytest.raises(ValueError, match="samples"):
        omnilearn.GlobalSampler(0, 1)
    s = omnilearn.GlobalSampler(10, 1)
    with pytest.raises(ValueError, match="batch"):
        s.next([0, 0])
    a = s.next([2, 3])
    with pytest.raises(ValueError, match="worker"):
        s.indices(a, 2)


@pytest.mark.parametrize("samples", [1, 97, 60000])
def test_same_assignments_as_the_cpp_sampler(omnilearn, reference_program, samples):
    seed = random.SystemRandom().randrange(1 << 62)
    print(f"samples {samples}: seed {seed}")
    rng = random.Random(seed)
    steps = changing_batches(rng, 3, 25) if samples < 1000 else [[64, 128, 64], [100, 3, 7]]
    script = [f"sampler {samples} {seed}"] + ["next " + ",".join(map(str, b)) for b in steps]
    out = subprocess.run([str(reference_program)], input="\n".join(script) + "\n", capture_output=True, text=True,
                         timeout=120)
    if out.returncode != 0 and "built without the testbed" in out.stderr:
        pytest.skip(out.stderr.strip())
    assert out.returncode == 0, out.stderr
    lines = iter(out.stdout.splitlines())
    sampler = omnilearn.GlobalSampler(samples, seed)
    for batch in steps:
        a = sampler.next(batch)
        _, epoch, step_in_epoch, last, cpp_batch = next(lines).split(" ")
        assert (a.epoch, a.step_in_epoch, a.last_in_epoch) == (int(epoch), int(step_in_epoch), last == "1")
        assert a.batch == [int(b) for b in cpp_batch.split(",")]
        for k in range(len(batch)):
            _, *rest = next(lines).split(" ")
            cpp = [int(i) for i in rest[0].split(",")] if rest and rest[0] else []
            assert sampler.indices(a, k) == cpp, f"step {a.step_in_epoch} of epoch {a.epoch}, worker {k}"
