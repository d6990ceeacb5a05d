"""python3 -m omnilearn_analysis testbed: per-run step breakdown and the per-level table over seeds, on run folders
written here with known numbers (the testbed's schema: summary.json, iterations.csv, evaluations.csv)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT
from omnilearn_analysis.runs import RunFormatError
from omnilearn_analysis.testbed import level_table, load_results, step_breakdown, format_level_table
from omnilearn_analysis.runs import load_run


def write_run(folder: Path, name: str, step_ms: float, tta_s: float | None, steps: int | None,
              compute_ms: float = 80.0, comm_ms: float = 10.0, eval_every: int = 100, n_steps: int = 300) -> Path:
    """A 2-worker BSP run whose every step has the given compute/exchange split and the rest waiting; the step after
    each evaluation carries a 1 s evaluation pause in its exchange (as on the testbed)."""
    d = folder / name
    d.mkdir(parents=True)
    rows = []
    for step in range(n_steps):
        pause = 1000.0 if step > 0 and step % eval_every == 0 else 0.0
        wait = step_ms - compute_ms - comm_ms
        for w in range(2):
            rows.append({"worker": w, "step": step, "epoch": 0, "start_s": step * step_ms / 1e3,
                         "compute_s": compute_ms / 1e3, "comm_s": (comm_ms + pause) / 1e3, "wait_s": wait / 1e3,
                         "batch": 32, "loss": 1.0, "accuracy": 0.5, "staleness": ""})
    pd.DataFrame(rows).to_csv(d / "iterations.csv", index=False)
    evals = [{"time_s": s * step_ms / 1e3, "step": s - 1, "epoch": 0, "loss": 1.0, "accuracy": 0.8}
             for s in range(eval_every, n_steps + 1, eval_every)]
    pd.DataFrame(evals).to_csv(d / "evaluations.csv", index=False)
    summary = {"policy": name.split("-")[-2], "mode": "bsp", "mean_iteration_s": step_ms / 1e3, "iterations": n_steps,
               "extra": {} if steps is None else {"steps_to_target": steps}}
    if tta_s is not None:
        summary["time_to_target_s"] = tta_s
    (d / "summary.json").write_text(json.dumps(summary))
    return d


def test_step_breakdown_leaves_out_the_evaluation_pauses(tmp_path):
    d = write_run(tmp_path, "bsp-hl1-uniform-s1", step_ms=100.0, tta_s=30.0, steps=300)
    b = step_breakdown(load_run(d))
    assert b["compute_share"] == pytest.approx(0.8)
    assert b["exchange_share"] == pytest.approx(0.1)
    assert b["wait_share"] == pytest.approx(0.1)
    assert b["step_ms"] == pytest.approx(100.0)


def test_level_table_pairs_seeds_and_gives_median_and_range(tmp_path):
    # Reductions of the mean step by seed: 50%, 40%, 45% -> median 45, range 40..50. Time to target: 50%, 0%, 25%.
    for seed, (omni_ms, omni_tta) in {1: (100.0, 50.0), 2: (120.0, 100.0), 3: (110.0, 75.0)}.items():
        write_run(tmp_path, f"bsp-hl8-uniform-s{seed}", step_ms=200.0, tta_s=100.0, steps=500, compute_ms=150.0)
        write_run(tmp_path, f"bsp-hl8-omnilearn-s{seed}", step_ms=omni_ms, tta_s=omni_tta, steps=400 + seed,
                  compute_ms=90.0)
    write_run(tmp_path, "bsp-hl1-uniform-s1", step_ms=100.0, tta_s=None, steps=None)  # no omnilearn run: no row
    runs = load_results(tmp_path)
    assert len(runs) == 7
    table = level_table(runs)
    assert list(table["scenario"]) == ["bsp-hl8"]
    r = table.iloc[0]
    assert r["seeds"] == 3
    assert r["step_reduction_median_pct"] == pytest.approx(45.0)
    assert r["step_reduction_min_pct"] == pytest.approx(40.0)
    assert r["step_reduction_max_pct"] == pytest.approx(50.0)
    assert r["tta_reduction_median_pct"] == pytest.approx(25.0)
    assert r["tta_reduction_min_pct"] == pytest.approx(0.0)
    assert r["omnilearn_steps_min"] == 401 and r["omnilearn_steps_max"] == 403
    assert r["uniform_compute_share"] == pytest.approx(0.75)
    text = format_level_table(table)
    assert "| bsp-hl8 | 3 |" in text and "45.0 (40.0 to 50.0)" in text and "401-403" in text


def test_command_writes_both_tables_and_refuses_a_folder_without_runs(tmp_path):
    write_run(tmp_path, "bsp-hl2-uniform-s1", step_ms=150.0, tta_s=60.0, steps=500)
    write_run(tmp_path, "bsp-hl2-omnilearn-s1", step_ms=100.0, tta_s=40.0, steps=500)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "analysis"))  # keeps PYTHONPYCACHEPREFIX: no bytecode in the tree
    done = subprocess.run([sys.executable, "-m", "omnilearn_analysis", "testbed", str(tmp_path)], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "| bsp-hl2 | 1 |" in done.stdout
    assert (tmp_path / "runs.csv").exists() and (tmp_path / "levels.csv").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run([sys.executable, "-m", "omnilearn_analysis", "testbed", str(empty)], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 1 and "no run folders" in done.stderr
    with pytest.raises(RunFormatError):
        load_results(empty)
