"""validate.py on two synthetic run folders whose differences are known: the simulated times are 4% longer than the
testbed's, 10% in one 20-step window, the batches differ by 2 samples from step 60, and the testbed pauses 1 s to
evaluate between epochs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from omnilearn_analysis.runs import RunFormatError, load_run
from omnilearn_analysis.validate import (Options, compare, compared_steps, epoch_times, format_energy,
                                        write_validation)

ROOT = Path(__file__).resolve().parents[2]
STEPS_PER_EPOCH = 40
EPOCHS = 3
PERIOD_S = 0.03


def write_run(folder: Path, factor, batches, eval_pause_s: float, backend: str) -> Path:
    """Two BSP workers; worker 0 computes 10 ms, worker 1 20 ms, the all-reduce takes 5 ms, all times x factor(step).
    Steps start every PERIOD_S x 1.05 (sim) or PERIOD_S (testbed); rank 0 evaluates eval_pause_s at each epoch end."""
    folder.mkdir(parents=True)
    rows = []
    pauses = 0.0
    period = PERIOD_S * (1.05 if backend == "sim" else 1.0)
    for step in range(STEPS_PER_EPOCH * EPOCHS):
        epoch = step // STEPS_PER_EPOCH
        f = factor(step)
        b0, b1 = batches(step)
        first_of_epoch = epoch > 0 and step % STEPS_PER_EPOCH == 0
        for worker, compute in ((0, 0.010), (1, 0.020)):
            # Rank 0 starts the first step of an epoch after its evaluation; rank 1 waits for it in the all-reduce.
            start = step * period + pauses + (eval_pause_s if first_of_epoch and worker == 0 else 0.0)
            rows.append({"worker": worker, "step": step, "epoch": epoch, "start_s": start, "compute_s": compute * f,
                         "comm_s": 0.005 * f, "wait_s": (0.020 - compute) * f, "batch": b0 if worker == 0 else b1,
                         "loss": "", "accuracy": "", "staleness": ""})
        if first_of_epoch:
            pauses += eval_pause_s
    pd.DataFrame(rows).to_csv(folder / "iterations.csv", index=False)
    (folder / "summary.json").write_text(json.dumps({"mode": "bsp", "policy": "omnilearn"}))
    (folder / "manifest.json").write_text(json.dumps({"backend": backend, "scenario": {"name": "synthetic"}}))
    return folder


@pytest.fixture()
def runs(tmp_path):
    testbed = write_run(tmp_path / "testbed", lambda s: 1.0, lambda s: (40, 24), eval_pause_s=1.0, backend="emulate")
    sim = write_run(tmp_path / "sim", lambda s: 1.10 if 20 <= s < 40 else 1.04,
                    lambda s: (42, 22) if s >= 60 else (40, 24), eval_pause_s=0.0, backend="sim")
    return testbed, sim


def test_compared_steps_leave_out_warmup_and_epoch_boundaries(runs):
    tb, sm = (load_run(p).iterations for p in runs)
    steps = compared_steps(tb, sm, warmup=10)
    assert len(steps) == 106  # 10..38, 41..78, 81..119
    for s in (0, 9, 39, 40, 79, 80):
        assert s not in steps
    assert 119 in steps


def test_compared_steps_leave_out_the_steps_around_an_evaluation(runs):
    tb, sm = (load_run(p).iterations for p in runs)
    steps = compared_steps(tb, sm, warmup=10, evaluated_after=[59])
    assert len(steps) == 104
    assert 59 not in steps and 60 not in steps
    assert 58 in steps and 61 in steps


def test_an_evaluation_pause_inside_an_epoch_is_not_an_error(runs, tmp_path):
    """A 1 s pause after step 59 (an eval_every evaluation): worker 1 waits for it in step 60's all-reduce."""
    testbed = runs[0]
    it = pd.read_csv(testbed / "iterations.csv")
    it.loc[(it["step"] == 60) & (it["worker"] == 1), "comm_s"] += 1.0  # waits in step 60's all-reduce
    it.loc[(it["step"] == 60) & (it["worker"] == 0), "start_s"] += 1.0  # starts step 60 after evaluating
    it.loc[it["step"] >= 61, "start_s"] += 1.0
    it.to_csv(testbed / "iterations.csv", index=False)
    (testbed / "evaluations.csv").write_text("time_s,step,epoch,loss,accuracy\n2.0,59,1,0.5,0.8\n")
    table = compare(load_run(testbed), load_run(runs[1]), options=Options(window=20, warmup=10))
    w1 = table[table["worker"] == 1].iloc[0]
    assert w1["mean_iter_error_pct"] < 10.0  # 1 s in one 30 ms step would be +30% on the mean
    assert epoch_times(load_run(testbed).iterations, [59]) == pytest.approx([1.2, 2.4])  # the pause is not training


def test_epoch_times_leave_out_the_evaluation_pause(runs):
    tb = epoch_times(load_run(runs[0]).iterations)
    sm = epoch_times(load_run(runs[1]).iterations)
    assert tb == pytest.approx([1.2, 2.4])  # the 1 s pauses before epochs 1 and 2 are not training time
    assert sm == pytest.approx([1.26, 2.52])


def test_errors_per_worker_match_the_known_differences(runs):
    table = compare(load_run(runs[0]), load_run(runs[1]), level="HLx", options=Options(window=20, warmup=10))
    assert list(table["worker"]) == [0, 1, "all"]
    mean_err = 100.0 * ((19 * 1.10 + 87 * 1.04) / 106 - 1.0)  # 19 compared steps of window 20..39 at +10%
    for row in table.itertuples(index=False):
        assert row.level == "HLx"
        assert row.time_to_epoch_error_pct == pytest.approx(5.0)
        assert row.testbed_epoch_s == pytest.approx(2.4)
        if row.worker == "all":  # step periods: 30 ms on the testbed, 31.5 ms simulated
            assert row.testbed_iter_s == pytest.approx(0.03)
            assert row.mean_iter_error_pct == pytest.approx(5.0)
            assert row.max_iter_error_pct == pytest.approx(5.0)
            continue
        assert row.steps == 106
        assert row.testbed_iter_s == pytest.approx(0.025)
        assert row.mean_iter_error_pct == pytest.approx(mean_err)
        assert row.max_iter_error_pct == pytest.approx(10.0)
        assert row.compute_error_pct == pytest.approx(mean_err)
        assert row.noise_floor_pct == pytest.approx(0.0, abs=1e-9)  # the synthetic testbed is steady
    # |b_sim - b_testbed| = 2 on the 58 compared steps from step 60 on; the sums agree, so "all" has 0.
    assert table.loc[table["worker"] == 0, "batch_trajectory_diff"].item() == pytest.approx(2 * 58 / 106)
    assert table.loc[table["worker"] == "all", "batch_trajectory_diff"].item() == 0.0


def test_repeats_are_compared_with_the_first_testbed_run(runs, tmp_path):
    """A repeat 2% slower on every step and one 6% slower: the repeat_* columns average their errors (4%)."""
    slower = [write_run(tmp_path / f"repeat{i}", lambda s, f=f: f, lambda s: (40, 24), eval_pause_s=1.0,
                        backend="emulate") for i, f in enumerate((1.02, 1.06))]
    table = compare(load_run(runs[0]), load_run(runs[1]), options=Options(window=20, warmup=10),
                    repeats=[load_run(p) for p in slower])
    workers = table[table["worker"] != "all"]
    assert workers["repeat_mean_error_pct"].to_numpy() == pytest.approx([4.0, 4.0])
    assert workers["repeat_max_error_pct"].to_numpy() == pytest.approx([4.0, 4.0])
    sim_mean = 0.025 * (19 * 1.10 + 87 * 1.04) / 106  # the simulator's mean over the 106 compared steps
    runs_mean = 0.025 * (1.0 + 1.02 + 1.06) / 3
    assert workers["runs_mean_error_pct"].to_numpy() == pytest.approx([100 * abs(sim_mean - runs_mean) / runs_mean] * 2)
    alone = compare(load_run(runs[0]), load_run(runs[1]))
    assert alone["repeat_mean_error_pct"].isna().all()  # no repeats: nothing to compare
    assert alone["runs_mean_error_pct"].isna().all()
    assert alone["mean_iter_error_pct"].to_numpy() == pytest.approx(table["mean_iter_error_pct"].to_numpy())
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "omnilearn_analysis", "validate", str(runs[0]), str(runs[1]),
                        "--out", str(out), "--repeat", str(slower[0]), "--repeat", str(slower[1])],
                       cwd=ROOT / "analysis", capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "rep_mean%" in r.stdout
    written = pd.read_csv(out / "validation.csv")
    assert written.loc[written["worker"] == "1", "repeat_mean_error_pct"].item() == pytest.approx(4.0)


def test_identical_runs_have_no_error(runs):
    table = compare(load_run(runs[0]), load_run(runs[0]))
    assert (table["mean_iter_error_pct"] == 0).all()
    assert (table["max_iter_error_pct"] == 0).all()
    assert (table["batch_trajectory_diff"] == 0).all()
    assert table["level"].iloc[0] == "synthetic"


def test_command_line_prints_and_writes_validation_csv(runs, tmp_path):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "omnilearn_analysis", "validate", str(runs[0]), str(runs[1]),
                        "--out", str(out), "--level", "HLx"], cwd=ROOT / "analysis", capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "mean_err%" in r.stdout and "HLx" in r.stdout
    assert "energy: not compared" in r.stdout
    table = pd.read_csv(out / "validation.csv")
    assert list(table.columns)[:4] == ["level", "worker", "steps", "testbed_iter_s"]
    assert table.loc[table["worker"] == "0", "max_iter_error_pct"].item() == pytest.approx(10.0)


def test_asp_runs_are_refused(runs, tmp_path):
    asp = tmp_path / "asp"
    asp.mkdir()
    (asp / "summary.json").write_text(json.dumps({"mode": "asp"}))
    (asp / "iterations.csv").write_text((runs[1] / "iterations.csv").read_text())
    with pytest.raises(RunFormatError, match="BSP"):
        write_validation(runs[0], asp, tmp_path / "o")


def with_energy(folder: Path, block: dict) -> Path:
    summary = json.loads((folder / "summary.json").read_text())
    summary["energy"] = block
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


@pytest.mark.parametrize("source, verdict, sim_j, within", [
    ("measured", {"judged": True, "predicted_j": 110.0}, 110.0, "yes"),  # the host-units prediction replaces sim_j
    ("measured", {"judged": True, "predicted_j": 80.0}, 80.0, "no"),
    ("measured", {"judged": False, "refusal": "the run is scaled: ..."}, 300.0, "refused"),
    ("measured", None, 300.0, "refused"),  # no verdict: measured against emulated nodes is not judged
    ("modelled-cputime", None, 150.0, "modelled")])
def test_energy_is_judged_like_with_like_only(runs, source, verdict, sim_j, within):
    testbed = with_energy(runs[0], {"joules": 100.0, "source": source})
    sim = with_energy(runs[1], {"joules": 300.0 if source == "measured" else sim_j, "wait": "idle"})
    table = compare(load_run(testbed), load_run(sim), verdict=verdict)
    assert (table["testbed_energy_j"] == 100.0).all() and (table["sim_energy_j"] == sim_j).all()
    assert table["energy_error_pct"].iloc[0] == pytest.approx(sim_j - 100.0)  # signed, in % of 100 J
    assert (table["energy_source"] == source).all()
    assert (table["energy_within_15pct"] == within).all()
    line = format_energy(table)
    assert ("not judged" in line) == (within in ("modelled", "refused"))
    assert ("NOT within 15%" in line) == (within == "no")


def test_energy_without_figures_is_not_compared(runs):
    testbed = with_energy(runs[0], {"reason": "no energy counters (...); no power figures for worker 0 (...)"})
    table = compare(load_run(testbed), load_run(runs[1]))
    assert (table["energy_source"] == "none").all()
    assert table["testbed_energy_j"].isna().all() and table["energy_error_pct"].isna().all()
    assert (table["energy_within_15pct"] == "").all()
    assert format_energy(table) == "energy: not compared (the testbed run reports none)"
