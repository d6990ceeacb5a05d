import csv
import json

import pytest

from omnilearn_analysis import load_run, load_sweep, tables
from omnilearn_analysis.runs import RunFormatError
from omnilearn_analysis.timeline import validate_timeline


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_run_reader_matches_the_files(quick_run):
    run = load_run(quick_run)
    summary = json.loads((quick_run / "summary.json").read_text())
    assert run.policy == summary["policy"] == "omnilearn"
    assert run.mode == "bsp"
    rows = read_rows(quick_run / "iterations.csv")
    assert len(run.iterations) == len(rows)
    # Per-worker totals, recomputed from the raw CSV with the csv module.
    by_worker = {}
    for r in rows:
        w = int(r["worker"])
        by_worker.setdefault(w, [0.0, 0.0, 0.0])
        by_worker[w][0] += float(r["compute_s"])
        by_worker[w][1] += float(r["comm_s"])
        by_worker[w][2] += float(r["wait_s"])
    breakdown = tables.worker_breakdown(run)
    for _, row in breakdown.iterrows():
        expected = by_worker[int(row["worker"])]
        assert row["compute_s"] == pytest.approx(expected[0])
        assert row["comm_s"] == pytest.approx(expected[1])
        assert row["wait_s"] == pytest.approx(expected[2])
    # One step per BSP iteration.
    assert len(run.step_times()) == summary["iterations"]


def test_plans_conserve_the_global_batch(quick_run):
    run = load_run(quick_run)
    sums = run.plans.groupby(["step", "time_s", "reason"])["batch"].sum()
    assert (sums == 64).all(), sums


def test_timeline_is_valid_trace_event_json(quick_run, tmp_path):
    assert validate_timeline(quick_run / "timeline.json") == []
    broken = tmp_path / "timeline.json"
    broken.write_text('{"traceEvents": [{"ph": "X", "name": "compute", "ts": 1}]}')
    assert validate_timeline(broken)  # dur, pid and tid missing


def test_missing_summary_is_a_clear_error(tmp_path):
    with pytest.raises(RunFormatError, match="summary.json"):
        load_run(tmp_path)


def test_sweep_table_numbers(quick_sweep):
    table, runs = load_sweep(quick_sweep)
    assert len(table) == 6 and len(runs) == 6
    comparison = tables.policy_comparison(table)
    totals = {}
    for point, run in runs.items():
        totals[(run.policy, point.split("-")[-1])] = run.summary["total_time_s"]
    for _, row in comparison.iterrows():
        every_n = str(row["policy.every_n"])
        uniform = totals[("uniform", every_n)]
        oracle = totals[("oracle", every_n)]
        total = totals[(row["policy"], every_n)]
        assert row["total_time_s"] == pytest.approx(total)
        assert row["vs_uniform_pct"] == pytest.approx(100 * (total / uniform - 1))
        assert row["vs_oracle_pct"] == pytest.approx(100 * (total / oracle - 1))
    # The C++ sweep table computed the same reductions.
    merged = table.set_index("point")
    for point, run in runs.items():
        every_n = point.split("-")[-1]
        expected = 100 * (run.summary["total_time_s"] / totals[("uniform", every_n)] - 1)
        assert merged.loc[point, "vs_uniform_pct"] == pytest.approx(expected, abs=1e-6)
    # No policy beats the oracle.
    assert (comparison["vs_oracle_pct"] >= -1e-9).all()
