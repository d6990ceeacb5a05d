"""PyTorch DDP integration with 4 (or 2) CPU processes and gloo: the weighted all-reduce gives the single-process
gradient of the same global batch, a run with changing batches covers each epoch exactly once and writes a run folder
that `omnilearn report` reads, and a run stopped by its target writes, through the run layer, the simulator's run-folder
schema, which the `omnilearn` CLI reports."""

from __future__ import annotations

import csv
import json
import socket
import subprocess
import sys
from pathlib import Path


import pytest

from omnilearn_test_support import BUILD, REPO, subprocess_env

WORLD = 4
WORKER = Path(__file__).with_name("ddp_worker.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(mode: str, out: Path, timeout_s: float = 120.0, world: int = WORLD) -> list[dict]:
    env = subprocess_env()
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(world))
    procs = []
    for rank in range(world):
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
    return [json.loads((out / f"rank{k}.json").read_text()) for k in range(world)]


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


def csv_header(path: Path) -> list[str]:
    with path.open(newline="") as f:
        return next(csv.reader(f))


def test_a_run_stopped_at_its_target_has_the_simulators_schema_and_the_cli_reports_it(omnilearn, torch_gloo, tmp_path):
    cli = BUILD / "cli" / "omnilearn"
    if not cli.exists():
        pytest.skip(f"{cli} is not built (the simulator's run folder to compare with, and `omnilearn report`)")
    results = run_ranks("target", tmp_path, world=2)
    # Rank 0's evaluation after step 3 reached the target: every rank ended after that step, for that reason.
    assert [r["steps"] for r in results] == [4, 4]
    assert [r["stop_reason"] for r in results] == ["target", "target"]
    run = tmp_path / "run"
    summary = json.loads((run / "summary.json").read_text())
    assert summary == results[0]["summary"]
    assert summary["stop_reason"] == "target" and summary["iterations"] == 4 and summary["workers"] == 2
    assert summary["final_accuracy"] == 0.8 and summary["extra"]["steps_to_target"] == 4
    assert 0 < summary["time_to_target_s"] <= summary["total_time_s"]
    evaluations = (run / "evaluations.csv").read_text().splitlines()
    assert [row.split(",")[1] for row in evaluations[1:]] == ["1", "3"]  # the steps evaluated
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["backend"] == "torch"
    limits = manifest["scenario"]
    assert (limits["workload"]["dataset_samples"], limits["workload"]["epochs"]) == (120, 3)
    assert manifest["seed"] == 5 and manifest["wall_clock"]["elapsed_s"] is not None

    sim = tmp_path / "sim"
    done = subprocess.run([str(cli), "sim", str(REPO / "scenarios" / "examples" / "quick.yaml"), "--quiet", "--out",
                           str(sim)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    sim_summary = json.loads((sim / "summary.json").read_text())
    optional = {"mean_staleness", "max_staleness", "time_to_target_s", "final_accuracy"}
    assert list(k for k in summary if k not in optional) == list(k for k in sim_summary if k not in optional)
    assert sim_summary["stop_reason"] == "epochs"
    sim_manifest = json.loads((sim / "manifest.json").read_text())
    shared = ["backend", "scenario", "argv", "seed"]
    assert list(manifest)[:4] == shared and list(sim_manifest)[:4] == shared
    assert list(manifest)[-1] == list(sim_manifest)[-1] == "wall_clock"
    for name in ("iterations.csv", "plans.csv", "availability.csv", "evaluations.csv"):
        assert csv_header(run / name) == csv_header(sim / name), name
    timeline = json.loads((run / "timeline.json").read_text())
    assert {e["name"] for e in timeline["traceEvents"] if e.get("ph") == "X"} <= {"compute", "wait", "comm"}

    report = subprocess.run([str(cli), "report", str(run), "--out", str(tmp_path / "report")], capture_output=True,
                            text=True, timeout=300)
    assert report.returncode == 0, report.stdout + report.stderr
    assert any((tmp_path / "report").iterdir())
