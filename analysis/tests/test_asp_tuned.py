"""omnilearn_analysis.asp_tuned: times to a target on one grid in seconds, the Kaplan-Meier estimate and the
restricted mean with runs that never reached the target, the tuned rate per variant and paired differences, on
hand-made evaluations and a hand-written sweep folder whose answers are worked out in the comments."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from omnilearn_analysis import asp_tuned


def _evals(points):
    return pd.DataFrame({"time_s": [t for t, _ in points], "accuracy": [a for _, a in points]})


def test_grid_accuracy_is_the_last_evaluation_at_or_before_each_time():
    ev = _evals([(2.5, 0.5), (4.0, 0.7), (7.2, 0.9)])
    got = asp_tuned.grid_accuracy(ev, np.arange(0.0, 9.0))
    assert list(got) == [0.0, 0.0, 0.0, 0.5, 0.7, 0.7, 0.7, 0.7, 0.9]


def test_time_to_target_rounds_up_to_the_grid_and_censors_at_the_budget():
    ev = _evals([(2.5, 0.5), (4.0, 0.7), (7.2, 0.86)])
    assert asp_tuned.time_to_target(ev, 0.85, budget_s=60.0) == (8.0, True)  # 7.2 s is seen at the 8 s grid point
    assert asp_tuned.time_to_target(ev, 0.70, budget_s=60.0) == (4.0, True)  # at a grid point exactly
    assert asp_tuned.time_to_target(ev, 0.90, budget_s=60.0) == (60.0, False)
    assert asp_tuned.time_to_target(ev, 0.85, budget_s=60.0, step_s=5.0) == (10.0, True)


def test_kaplan_meier_and_restricted_mean_count_the_runs_that_never_reached_the_target():
    # Five runs: reached at 10, 20, 20, 40; one never (censored at the budget, 60).
    times, reached = [10, 20, 20, 40, 60], [True, True, True, True, False]
    km = asp_tuned.kaplan_meier(times, reached)
    # S = 1 until 10, 4/5 until 20, 2/5 until 40, 1/5 after.
    assert list(km["survival"]) == pytest.approx([1.0, 0.8, 0.4, 0.2])
    assert list(km["at_risk"]) == [5, 5, 4, 2]
    assert asp_tuned.km_median(times, reached) == 20.0
    # Area: 10 x 1 + 10 x 0.8 + 20 x 0.4 + 20 x 0.2 = 30 = the mean of min(T, 60) = (10+20+20+40+60)/5.
    assert asp_tuned.restricted_mean(times, reached, 60.0) == pytest.approx(30.0)
    # The mean over the runs that reached it alone would be 22.5: the censored run is not dropped.
    assert asp_tuned.restricted_mean(times, reached, 60.0) > np.mean([10, 20, 20, 40])
    # Fewer than half reached it: no median; nobody reached it: the budget.
    assert math.isnan(asp_tuned.km_median([30, 60, 60], [True, False, False]))
    assert asp_tuned.restricted_mean([60, 60], [False, False], 60.0) == 60.0


def _sweep(folder: Path, points):
    """points: (variant, seed, final accuracy, [(time, accuracy)...], extra)."""
    folder.mkdir(parents=True)
    lines = ["point,variant,seed,status,final_accuracy\n"]
    for variant, seed, acc, evals, extra in points:
        name = f"p-{variant}-{seed}"
        lines.append(f"{name},{variant},{seed},ok,{acc}\n")
        (folder / name).mkdir()
        (folder / name / "evaluations.csv").write_text(
            "time_s,step,epoch,loss,accuracy\n" + "".join(f"{t},1,0,0.5,{a}\n" for t, a in evals))
        (folder / name / "summary.json").write_text(json.dumps(
            {"final_accuracy": acc, "iterations": 100, "mean_staleness": 3.0, "extra": extra}))
    lines.append("p-bad,asgd-lr0.02,9,failed,\n")
    (folder / "sweep.csv").write_text("".join(lines))


def test_tuned_rates_pick_the_best_mean_per_variant_and_a_tie_goes_to_the_lower_rate(tmp_path):
    _sweep(tmp_path / "grid", [
        ("asgd-lr0.01", 1, 0.80, [(60, 0.80)], {}), ("asgd-lr0.01", 2, 0.82, [(60, 0.82)], {}),
        ("asgd-lr0.02", 1, 0.84, [(60, 0.84)], {}), ("asgd-lr0.02", 2, 0.80, [(60, 0.80)], {}),
        ("ringmaster-R16-lr0.01", 1, 0.83, [(60, 0.83)], {}), ("ringmaster-R16-lr0.02", 1, 0.83, [(60, 0.83)], {}),
    ])
    runs = asp_tuned.load(tmp_path / "grid", "tuning")
    assert len(runs) == 6  # the failed point is left out
    rates = asp_tuned.tuned_rates(runs)
    chosen = rates[rates["chosen"]].set_index("variant")["learning_rate"]
    assert chosen["asgd"] == 0.02  # 82.0 against 81.0
    assert chosen["ringmaster-R16"] == 0.01  # a tie: the lower rate


def test_summary_and_paired_differences_censor_at_the_budget(tmp_path):
    # a reaches 80% at 10 and 30 s, and never in seed 3; b at 20, 20 and 50 s.
    _sweep(tmp_path / "eval", [
        ("a-lr0.02", 1, 0.85, [(9.5, 0.81)], {"dropped_push_fraction": 0.25}),
        ("a-lr0.02", 2, 0.83, [(29.2, 0.80)], {"dropped_push_fraction": 0.35}),
        ("a-lr0.02", 3, 0.70, [(59.0, 0.65), (60.4, 0.70)], {"dropped_push_fraction": 0.30}),
        ("b-lr0.05", 1, 0.84, [(20.0, 0.82)], {}), ("b-lr0.05", 2, 0.81, [(19.1, 0.80)], {}),
        ("b-lr0.05", 3, 0.80, [(49.3, 0.80)], {}),
    ])
    runs = asp_tuned.load(tmp_path / "eval", "evaluation")
    assert runs.set_index(["variant", "seed"]).loc[("a", 3), "acc_60s"] == 0.70  # the final evaluation, at 60.4 s
    s = asp_tuned.summarize(runs).set_index("variant")
    assert s.loc["a", "reached_80"] == 2 and s.loc["b", "reached_80"] == 3
    assert s.loc["a", "rmst_80_s"] == pytest.approx((10 + 30 + 60) / 3)
    assert s.loc["b", "rmst_80_s"] == pytest.approx((20 + 20 + 50) / 3)
    assert s.loc["a", "km_median_80_s"] == 30.0
    assert s.loc["a", "dropped_push_fraction"] == pytest.approx(0.30)
    assert math.isnan(s.loc["b", "dropped_push_fraction"])
    d = asp_tuned.paired(runs, "a", "b")
    assert d["pairs"] == 3
    assert d["accuracy_diff_pts"] == pytest.approx((1 + 2 - 10) / 3)
    assert d["time_80_diff_s"] == pytest.approx((-10 + 10 + 10) / 3)
    with pytest.raises(ValueError, match="no seed has both a and c"):
        asp_tuned.paired(runs, "a", "c")
