"""omnilearn_analysis.virtual_time (virtual-time training against the testbed) and the accuracy columns that
`omnilearn validate --train` adds, on small hand-written run folders."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from omnilearn_analysis import validate, virtual_time

ITER_HEADER = "worker,step,epoch,start_s,compute_s,comm_s,wait_s,batch,loss,accuracy,staleness\n"


def _run(folder: Path, summary: dict, evaluations: list[tuple[int, float]], staleness: list[int] | None = None):
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps(summary))
    rows = "".join(f"{10.0 * s},{s},0,0.5,{a}\n" for s, a in evaluations)
    (folder / "evaluations.csv").write_text("time_s,step,epoch,loss,accuracy\n" + rows)
    lines = [f"0,{i},0,0,0.1,0,0,32,1.0,0.5,{s}\n" for i, s in enumerate(staleness or [])]
    (folder / "iterations.csv").write_text(ITER_HEADER + "".join(lines))


def test_bsp_steps_time_and_curve_gap(tmp_path):
    _run(tmp_path / "tb" / "bsp-hl8-uniform-s1",
         {"time_to_target_s": 100.0, "extra": {"steps_to_target": 500}}, [(99, 0.80), (199, 0.86)])
    _run(tmp_path / "sim" / "bsp-hl8-uniform-s1",
         {"time_to_target_s": 95.0, "extra": {"steps_to_target": 500}}, [(99, 0.81), (199, 0.855)])
    table = virtual_time.compare(tmp_path / "tb", tmp_path / "sim", seeds=[1], levels=[8])
    assert len(table) == 1
    r = table.iloc[0]
    assert r.steps_error_pct == 0.0
    assert r.time_error_pct == pytest.approx(-5.0)
    assert r.accuracy_curve_max_gap_pts == pytest.approx(1.0)
    assert "500 / 500" in virtual_time.format_table(table)


def test_asp_staleness_counts_only_applied_pushes(tmp_path):
    _run(tmp_path / "tb" / "asp-hl8-omnilearn-s2", {"final_accuracy": 0.84, "iterations": 100},
         [(100, 0.84)], staleness=[2, 4, 3, 3])
    _run(tmp_path / "sim" / "asp-hl8-omnilearn-s2", {"final_accuracy": 0.83, "iterations": 110},
         [(110, 0.83)], staleness=[3, 3, 3, 3])
    r = virtual_time.compare(tmp_path / "tb", tmp_path / "sim", seeds=[2], levels=[]).iloc[0]
    assert r.accuracy_gap_pts == pytest.approx(-1.0)
    assert r.testbed_staleness_mean == pytest.approx(3.0)
    assert r.staleness_mean_error_pct == pytest.approx(0.0)


def test_validate_adds_accuracy_columns_only_when_the_simulator_trained(tmp_path):
    _run(tmp_path / "tb", {"time_to_target_s": 60.0, "extra": {"steps_to_target": 400}}, [(99, 0.8), (399, 0.85)])
    _run(tmp_path / "sim", {"time_to_target_s": 58.0, "extra": {"steps_to_target": 400}}, [(99, 0.79), (399, 0.86)])
    table = pd.DataFrame({"worker": [0, 1]})
    out = validate.add_accuracy_columns(table, tmp_path / "tb", tmp_path / "sim")
    assert list(out["accuracy_max_gap_pts"]) == pytest.approx([1.0, 1.0])
    assert out["sim_steps_to_target"].iloc[0] == 400
    (tmp_path / "sim" / "evaluations.csv").write_text("time_s,step,epoch,loss,accuracy\n")  # a time-only run
    assert "accuracy_max_gap_pts" not in validate.add_accuracy_columns(table, tmp_path / "tb", tmp_path / "sim")
