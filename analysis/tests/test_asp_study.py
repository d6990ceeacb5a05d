"""omnilearn_analysis.asp_study (the ASP study's means, 95% intervals and paired verdicts) on a hand-written sweep
folder whose numbers are chosen so that the intervals and verdicts are known."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from omnilearn_analysis import asp_study
from omnilearn_analysis.__main__ import main

HEADER = ("point,level,policy.name,lr,seed,status,policy,mode,workers,iterations,epochs,total_time_s,"
          "mean_iteration_s,idle_fraction,mean_staleness,max_staleness,decisions,batch_changes,final_accuracy,"
          "time_to_target_s,vs_uniform_pct,vs_oracle_pct\n")


def _sweep(folder: Path, points: list[tuple[str, str, str, int, float, float | None]], failed: str | None = None):
    """points: (level, policy, lr, seed, final accuracy, time at which 0.85 is first reached or None)."""
    folder.mkdir(parents=True)
    lines = []
    for level, policy, lr, seed, acc, t85 in points:
        name = f"s-{level}-{policy}-{lr}-{seed}"
        lines.append(f"{name},{level},{policy},{lr},{seed},ok,{policy},asp,4,2000,1,60,0.03,0,3,6,10,2,{acc},,,\n")
        (folder / name).mkdir()
        evals = [(10.0, 0.70)] + ([(t85, 0.86)] if t85 is not None else [(50.0, 0.84)])
        (folder / name / "evaluations.csv").write_text(
            "time_s,step,epoch,loss,accuracy\n" + "".join(f"{t},{int(t)},0,0.5,{a}\n" for t, a in evals))
    if failed:
        lines.append(f"{failed},hl1,uniform,none,9,failed (exit 1),,,,,,,,,,,,,,,,\n")
    (folder / "sweep.csv").write_text(HEADER + "".join(lines))


def test_mean_ci_is_student_t():
    m, lo, hi, n = asp_study.mean_ci(asp_study.pd.Series([1.0, 2.0, 3.0]))
    assert (m, n) == (2.0, 3)
    assert hi - m == pytest.approx(4.302653 * 1.0 / math.sqrt(3), rel=1e-6)  # t(0.975, 2) * s / sqrt(n)
    assert m - lo == pytest.approx(hi - m)
    m1, lo1, _, n1 = asp_study.mean_ci(asp_study.pd.Series([5.0, float("nan")]))
    assert (m1, n1) == (5.0, 1) and math.isnan(lo1)


def test_summary_paired_and_verdicts(tmp_path):
    pts = []
    for seed, (u, o) in enumerate([(0.85, 0.87), (0.84, 0.865), (0.86, 0.875)], start=1):
        pts += [("hl8", "uniform", "none", seed, u, 30.0 + seed), ("hl8", "omnilearn", "none", seed, o, 20.0 + seed)]
    for seed, (u, o) in enumerate([(0.85, 0.84), (0.84, 0.85), (0.86, 0.86)], start=1):
        pts += [("hl1", "uniform", "none", seed, u, None), ("hl1", "omnilearn", "none", seed, o, 40.0)]
    _sweep(tmp_path / "sw", pts, failed="s-hl1-uniform-none-9")
    runs = asp_study.load(tmp_path / "sw", targets=[0.85])
    assert len(runs) == 12  # the failed point is left out
    assert set(runs["algorithm"]) == {"asgd"}  # lr none: plain ASGD
    summary = asp_study.summarize(runs, [0.85]).set_index(["cell", "policy"])
    hl8_o = summary.loc[("hl8", "omnilearn")]
    assert hl8_o["accuracy_mean_pct"] == pytest.approx(87.0)
    assert hl8_o["time_to_85_mean_s"] == pytest.approx(22.0)
    assert summary.loc[("hl1", "uniform")]["reached_85"] == 0
    diffs = asp_study.paired(runs, [0.85])
    diffs = diffs[diffs["comparison"] == "omnilearn - uniform"].set_index("cell")
    assert diffs.loc["hl8", "accuracy_diff_pts"] == pytest.approx(2.0)
    assert diffs.loc["hl8", "accuracy_verdict"] == "better"  # +2.0, +2.5, +1.5 points
    assert diffs.loc["hl8", "time_85_verdict"] == "better"   # 10 s shorter in every pair: zero spread
    assert diffs.loc["hl8", "time_85_diff_pct"] == pytest.approx((-10 / 31 - 10 / 32 - 10 / 33) / 3 * 100)
    assert diffs.loc["hl1", "accuracy_verdict"] == "no detectable difference"  # -1, +1, 0 points
    assert diffs.loc["hl1", "time_85_verdict"] == "too few pairs"  # uniform never reached 85%


NEW_HEADER = ("point,cell,variant,seed,status,policy,mode,workers,iterations,epochs,total_time_s,mean_iteration_s,"
              "idle_fraction,mean_staleness,max_staleness,decisions,batch_changes,final_accuracy,time_to_target_s,"
              "vs_uniform_pct,vs_oracle_pct\n")


def _cell_sweep(folder: Path, points: list[tuple[str, str, int, float, float | None]]):
    """The study's layout. points: (cell, variant, seed, final accuracy, time at which 0.80 is first reached)."""
    folder.mkdir(parents=True)
    lines = []
    for cell, variant, seed, acc, t80 in points:
        name = f"p-{cell}-{variant}-{seed}"
        lines.append(f"{name},{cell},{variant},{seed},ok,x,asp,4,2000,1,60,0.03,0,3,6,10,2,{acc},,,\n")
        (folder / name).mkdir()
        evals = [(5.0, 0.5)] + ([(t80, 0.81)] if t80 is not None else [(55.0, 0.79)])
        (folder / name / "evaluations.csv").write_text(
            "time_s,step,epoch,loss,accuracy\n" + "".join(f"{t},{int(t)},0,0.5,{a}\n" for t, a in evals))
    (folder / "sweep.csv").write_text(NEW_HEADER + "".join(lines))


def test_cells_and_variants_against_every_reference(tmp_path):
    a, b = [], []
    for seed in (1, 2, 3):
        a += [("hl8-n64", "asgd-uniform", seed, 0.80, 40.0), ("hl8-n64", "asgd-omnilearn", seed, 0.78, None),
              ("hl8-n64", "asgd-lr-linear-omnilearn", seed, 0.81 + seed / 1000, 36.0)]
        b += [("hl8-n64", "bsp-omnilearn", seed, 0.70, None), ("hl8-n64", "ssp-uniform", seed, 0.83, 20.0 + seed)]
    _cell_sweep(tmp_path / "a", a)
    _cell_sweep(tmp_path / "b", b)
    runs = asp_study.load_all([tmp_path / "a", tmp_path / "b"], [0.80])
    assert set(runs["workers"]) == {64} and set(runs["level"]) == {"hl8"}
    d = asp_study.paired(runs, [0.80]).set_index(["algorithm", "policy", "comparison"])
    # ASGD with learning-rate scaling under omnilearn against uniform: plain ASGD's uniform runs (the same runs).
    linear = d.loc[("asgd-lr-linear", "omnilearn", "omnilearn - uniform")]
    assert linear["reference"] == "asgd-uniform"
    assert linear["accuracy_diff_pts"] == pytest.approx(1.2)
    assert linear["time_80_diff_pct"] == pytest.approx(-10.0) and linear["time_80_verdict"] == "better"
    # asgd-omnilearn's uniform reference is asgd-uniform: one row, not a second "vs asgd uniform" one.
    assert d.loc[("asgd", "omnilearn", "omnilearn - uniform"), "accuracy_verdict"] == "worse"
    assert d.loc[("asgd", "omnilearn", "omnilearn - uniform"), "time_80_pairs"] == 0
    assert ("asgd", "omnilearn", "vs asgd uniform") not in d.index
    assert ("asgd-lr-linear", "omnilearn", "vs asgd uniform") not in d.index
    assert d.loc[("ssp", "uniform", "vs bsp omnilearn"), "accuracy_diff_pts"] == pytest.approx(13.0)
    assert ("ssp", "uniform", "omnilearn - uniform") not in d.index  # a uniform run has no uniform reference
    assert ("bsp", "omnilearn", "omnilearn - uniform") not in d.index  # no BSP uniform in these folders
    assert ("asgd", "uniform", "vs asgd uniform") not in d.index
    with pytest.raises(ValueError, match="appears in more than one point"):
        asp_study.load_all([tmp_path / "a", tmp_path / "a"], [0.80])
    assert main(["asp-study", str(tmp_path / "a"), str(tmp_path / "b")]) == 1  # several folders need --out
    assert main(["asp-study", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "ans"),
                 "--target", "0.8"]) == 0
    for name in ("study-runs.csv", "study-summary.csv", "study-paired.csv", "study-accuracy.png", "study-final.png"):
        assert (tmp_path / "ans" / name).stat().st_size > 0
    assert "time_to_80_mean_s" in asp_study.pd.read_csv(tmp_path / "ans" / "study-summary.csv").columns


def test_a_variant_without_a_policy_is_refused(tmp_path):
    _cell_sweep(tmp_path / "x", [("hl8-n4", "asgd", 1, 0.8, None)])
    with pytest.raises(ValueError, match="variant 'asgd': expected <algorithm>-<policy>"):
        asp_study.load(tmp_path / "x", [0.8])


def test_command_writes_tables_and_refuses_other_sweeps(tmp_path, capsys):
    _sweep(tmp_path / "sw", [("hl2", "uniform", "sqrt", 1, 0.8, None), ("hl2", "omnilearn", "sqrt", 1, 0.81, None)])
    assert main(["asp-study", str(tmp_path / "sw")]) == 0
    out = capsys.readouterr().out
    assert "| hl2 | asgd-lr-sqrt-omnilearn | 81.00 |" in out
    for name in ("study-runs.csv", "study-summary.csv", "study-paired.csv"):
        assert len(asp_study.pd.read_csv(tmp_path / "sw" / name)) > 0
    assert (tmp_path / "sw" / "study-accuracy.png").stat().st_size > 0
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "sweep.csv").write_text("point,status\nx,ok\n")
    assert main(["asp-study", str(tmp_path / "other")]) == 1
    assert "missing column(s) level, policy.name, lr, seed" in capsys.readouterr().err
