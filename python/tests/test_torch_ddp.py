"""PyTorch DDP integration with 4 CPU processes and gloo: the weighted all-reduce gives the single-process gradient of
the same global batch, and a run with changing batches covers each epoch exactly once and writes a run folder that
`omnilearn report` reads."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path


from omnilearn_test_support import REPO, subprocess_env

WORLD = 4
WORKER = Path(__file__).with_name("ddp_worker.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(mode: str, out: Path, timeout_s: float = 120.0) -> list[dict]:
    env = subprocess_env()
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(WORLD))
    procs = []
    for rank in range(WORLD):
        procs.append(subprocess.Popen([sys.executable, str(WORKER), mode, str(out)], env=dict(env, RANK=str(rank)),
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=timeout_s)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for rank, (p, text) in enumerate(zip(procs, outputs)):
        assert p.returncode == 0, f"rank {rank} exited {p.returncode}:\n{text}"
    return [json.loads((out / f"rank{k}.json").read_text()) for k in range(WORLD)]


def test_weighted_allreduce_is_the_global_batch_gradient(omnilearn, torch_gloo, tmp_path):
    results = run_ranks("gradient", tmp_path)
    assert results[0]["batches"] == [4, 8, 12, 16]  # uneven shares: capacities 1:2:3:4 of B = 40
    for rank, r in enumerate(results):
        assert r["weighted_err"] <= 1e-6 * max(1.0, r["scale"]), f"rank {rank}: {r}"
        # The plain average (DDP's default) is measurably wrong here, so the check above can fail.
        assert r["plain_err"] > 1e-3 * r["scale"], f"rank {rank}: uneven batches should matter: {r}"


def test_changing_batches_cover_each_epoch_once_and_report_reads_the_run(omnilearn, torch_gloo, tmp_path):
    n, global_batch = 203, 32
    results = run_ranks("train", tmp_path)
    steps = [r["steps"] for r in results]
    assert all(len(s) == len(steps[0]) for s in steps)
    changed = False
    for rank_steps in zip(*steps):
        batches = rank_steps[0]["batches"]
        assert all(s["batches"] == batches for s in rank_steps), "ranks disagree on a step's batches"
        assert all(len(s["indices"]) == batches[k] for k, s in enumerate(rank_steps))
        if not rank_steps[0]["last"]:
            assert sum(batches) == global_batch
        changed |= batches != steps[0][0]["batches"]
    assert changed, "the plan never changed although ranks 2 and 3 were slower"
    for epoch in (0, 1):
        seen = [i for s in zip(*steps) if s[0]["epoch"] == epoch for r in s for i in r["indices"]]
        assert sorted(seen) == list(range(n)), f"epoch {epoch} does not cover the data exactly once"
    # The slow ranks end with smaller shares than the fast ones.
    final = steps[0][-2]["batches"]
    assert max(final[2:]) < min(final[:2]), final

    run = tmp_path / "run"
    for name in ("iterations.csv", "plans.csv", "summary.json", "manifest.json", "timeline.json"):
        assert (run / name).exists(), name
    summary = json.loads((run / "summary.json").read_text())
    assert summary["iterations"] == len(steps[0]) and summary["workers"] == WORLD and summary["epochs"] == 2
    report = subprocess.run([sys.executable, "-m", "omnilearn_analysis", "report", str(run), "--out",
                             str(tmp_path / "report")], env=subprocess_env(), cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert report.returncode == 0, report.stdout + report.stderr
    assert any((tmp_path / "report").iterdir())
