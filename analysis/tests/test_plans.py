"""plans.csv in its compact form (runs of more than 64 workers, or `omnilearn sim --plan-rows changes`) reads back
to the same long table as the full form."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import run_cli
from omnilearn_analysis.runs import RunFormatError, expand_plans, load_run


@pytest.fixture(scope="module")
def both_forms(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plans")
    runs = {}
    for form in ("full", "changes"):
        out = folder / form
        r = run_cli("sim", "scenarios/examples/trace-azure.yaml", "--quiet", "--no-timeline", "--plan-rows", form,
                    "--out", str(out))
        assert r.returncode == 0, r.stderr
        runs[form] = out
    return runs


def test_compact_plans_read_back_to_the_full_plans(both_forms):
    full = load_run(both_forms["full"]).plans
    compact = load_run(both_forms["changes"]).plans
    assert len(full) > 4 * 3  # several decisions of 4 workers
    pd.testing.assert_frame_equal(compact.reset_index(drop=True), full.reset_index(drop=True))
    raw_full = pd.read_csv(both_forms["full"] / "plans.csv")
    raw_compact = pd.read_csv(both_forms["changes"] / "plans.csv")
    assert len(raw_compact) < len(raw_full) + raw_compact["worker"].isna().sum()


def test_expand_plans_carries_each_worker_forward():
    rows = [
        # step, epoch, time_s, reason, changed, imbalance, worker, batch, weight
        (0, 0, 0.0, "initial", True, 0.5, None, None, None),
        (0, 0, 0.0, "initial", True, 0.5, 0, 40, 0.25),
        (0, 0, 0.0, "initial", True, 0.5, 1, 24, 0.75),
        (5, 0, 1.5, "scheduled", True, 0.2, None, None, None),
        (5, 0, 1.5, "scheduled", True, 0.2, 1, 32, 0.5),
        (9, 0, 2.5, "held-by-dead-band", False, 0.01, None, None, None),
    ]
    compact = pd.DataFrame(rows, columns=["step", "epoch", "time_s", "reason", "changed", "imbalance", "worker",
                                          "batch", "weight"])
    plans = expand_plans(compact)
    assert plans["step"].tolist() == [0, 0, 5, 5, 9, 9]
    assert plans["worker"].tolist() == [0, 1, 0, 1, 0, 1]
    assert plans["batch"].tolist() == [40, 24, 40, 32, 40, 32]
    assert plans["weight"].tolist() == [0.25, 0.75, 0.25, 0.5, 0.25, 0.5]
    assert plans["changed"].tolist() == [True, True, True, True, False, False]


def test_a_compact_file_without_its_first_marker_is_an_error():
    compact = pd.DataFrame([(5, 0, 1.5, "scheduled", True, 0.2, 1, 32, 0.5),
                            (9, 0, 2.5, "scheduled", True, 0.2, None, None, None)],
                           columns=["step", "epoch", "time_s", "reason", "changed", "imbalance", "worker", "batch",
                                    "weight"])
    with pytest.raises(RunFormatError, match="marker row"):
        expand_plans(compact)


def test_a_marker_with_the_batch_sum_gives_batch_share_weights():
    columns = ["step", "epoch", "time_s", "reason", "changed", "imbalance", "worker", "batch", "weight"]
    compact = pd.DataFrame([
        (0, 0, 0.0, "initial", True, 0.0, None, 96, None),
        (0, 0, 0.0, "initial", True, 0.0, 0, 32, None),
        (0, 0, 0.0, "initial", True, 0.0, 1, 48, None),
        (0, 0, 0.0, "initial", True, 0.0, 2, 16, None),
        (7, 0, 2.0, "membership", True, 0.0, None, 80, None),
        (7, 0, 2.0, "membership", True, 0.0, 2, 0, None),
        (9, 0, 3.0, "scheduled", True, 0.0, None, None, None),
        (9, 0, 3.0, "scheduled", True, 0.0, 0, 32, 0.5),
        (9, 0, 3.0, "scheduled", True, 0.0, 1, 48, 0.5),
    ], columns=columns)
    plans = expand_plans(compact)
    assert plans["batch"].tolist() == [32, 48, 16, 32, 48, 0, 32, 48, 0]
    assert plans["weight"].tolist() == [32 / 96, 48 / 96, 16 / 96, 32 / 80, 48 / 80, 0.0, 0.5, 0.5, 0.0]
