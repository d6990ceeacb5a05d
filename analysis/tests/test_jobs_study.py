"""omnilearn_analysis.jobs_study on hand-written run folders whose numbers make the means, ratios and verdicts
known."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from omnilearn_analysis import energy as energy_module
from omnilearn_analysis import jobs_study
from omnilearn_analysis.__main__ import main


def _run(folder: Path, name: str, mean_jct: float, finished: int = 2, rho: float | None = None,
         joules: float | None = None):
    """A run folder; with `rho`, jobs.csv and summary.json carry finish-time fairness (mean rho, max 2 x rho); with
    `joules`, an energy block (total `joules`, the jobs a quarter of it)."""
    d = folder / name
    d.mkdir(parents=True)
    summary = {"jobs": 2, "finished": finished, "mean_jct_s": mean_jct, "median_jct_s": mean_jct,
               "p99_jct_s": 2 * mean_jct, "makespan_s": 10 * mean_jct, "utilisation": {"v100": 0.5}}
    if joules is not None:
        summary["energy"] = {"total_j": joules, "jobs_j": joules / 4, "unallocated_idle_j": 3 * joules / 4,
                             "wait_j": 0.0, "kinds": {}}
    jobs = f"job,jct_s\na,{mean_jct / 2}\nb,{1.5 * mean_jct}\n"
    if rho is not None:
        summary.update({"mean_rho": rho, "max_rho": 2 * rho})
        jobs = f"job,jct_s,rho\na,{mean_jct / 2},{0.5 * rho}\nb,{1.5 * mean_jct},{1.5 * rho}\n"
    (d / "summary.json").write_text(json.dumps(summary))
    (d / "jobs.csv").write_text(jobs)


@pytest.fixture
def study(tmp_path: Path) -> Path:
    # gavel halves fifo's JCT on every seed; omnilearn under gavel is 10% better on seeds 1-2 and 10% worse on 3.
    for seed, base in [(1, 100.0), (2, 200.0), (3, 400.0)]:
        _run(tmp_path, f"philly-fifo-uniform-s{seed}", base)
        _run(tmp_path, f"philly-gavel-uniform-s{seed}", base / 2)
        _run(tmp_path, f"philly-gavel-omnilearn-s{seed}", base / 2 * (0.9 if seed < 3 else 1.1))
    (tmp_path / "not-a-run").mkdir()
    return tmp_path


def test_load_reads_names_and_summaries(study: Path):
    runs = jobs_study.load(study)
    assert len(runs) == 9
    row = runs[runs.run == "philly-gavel-omnilearn-s3"].iloc[0]
    assert (row.workload, row.scheduler, row.policy, row.seed) == ("philly", "gavel", "omnilearn", 3)
    assert row.util_v100 == 0.5


def test_runs_inside_sweep_folders_are_read(tmp_path: Path):
    sweep = tmp_path / "philly"
    _run(sweep, "philly-fifo-uniform-s1", 100.0)
    _run(sweep, "philly-gavel-omnilearn-s1", 40.0)
    (sweep / "sweep-index.txt").write_text("philly-fifo-uniform-s1\nphilly-gavel-omnilearn-s1\n")
    _run(tmp_path, "pollux-fifo-uniform-s1", 10.0)  # the flat layout beside it
    runs = jobs_study.load(tmp_path).set_index("run")
    assert sorted(runs.index) == ["philly/philly-fifo-uniform-s1", "philly/philly-gavel-omnilearn-s1",
                                  "pollux-fifo-uniform-s1"]
    assert runs.loc["philly/philly-gavel-omnilearn-s1", "mean_jct_s"] == 40.0
    assert (tmp_path / runs.index[0] / "jobs.csv").is_file()


def test_a_scheduler_name_with_a_dash_is_read_whole(tmp_path: Path):
    _run(tmp_path, "pollux-balanced-mix-omnilearn-s2", 10.0)
    row = jobs_study.load(tmp_path).iloc[0]
    assert (row.scheduler, row.policy, row.seed) == ("balanced-mix", "omnilearn", 2)


def test_paired_ratios_and_verdicts(study: Path):
    diffs = jobs_study.paired(jobs_study.load(study)).set_index(["scheduler", "policy", "reference"])
    halved = diffs.loc[("gavel", "uniform", "vs fifo-uniform")]
    assert halved.mean_jct_s_ratio == pytest.approx(0.5)
    assert halved.pairs == 3
    mixed = diffs.loc[("gavel", "omnilearn", "vs uniform")]
    assert mixed.mean_jct_s_ratio == pytest.approx((0.9 * 0.9 * 1.1) ** (1 / 3))
    assert mixed.mean_jct_s_verdict == "no detectable difference"
    assert mixed.mean_jct_s_lo < 1 < mixed.mean_jct_s_hi
    # A constant ratio has a zero-width interval: the verdict follows the ratio.
    assert halved.mean_jct_s_verdict == "better"


def test_summary_means_and_intervals(study: Path):
    summary = jobs_study.summarize(jobs_study.load(study)).set_index(["scheduler", "policy"])
    fifo = summary.loc[("fifo", "uniform")]
    assert fifo.mean_jct_s == pytest.approx(700 / 3)
    half = 4.302653 * math.sqrt(((100 - 700 / 3) ** 2 + (200 - 700 / 3) ** 2 + (400 - 700 / 3) ** 2) / 2) / math.sqrt(3)
    assert fifo.mean_jct_s_hi - fifo.mean_jct_s == pytest.approx(half, rel=1e-5)
    assert bool(fifo.all_finished)


def test_command_writes_tables_and_a_figure(study: Path, tmp_path: Path, capsys):
    out = tmp_path / "out"
    assert main(["jobs-study", str(study), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "gavel" in text and "vs fifo-uniform" in text
    for name in ("study-runs.csv", "study-summary.csv", "study-paired.csv", "study-jct-cdf-philly.png"):
        assert (out / name).is_file(), name


def test_rho_means_intervals_and_figure(study: Path, tmp_path: Path, capsys):
    # las reports rho on three seeds (1, 2 and 4: mean 7/3); fifo's runs predate rho.
    for seed, rho in [(1, 1.0), (2, 2.0), (3, 4.0)]:
        _run(study, f"philly-las-uniform-s{seed}", 100.0, rho=rho)
    summary = jobs_study.summarize(jobs_study.load(study)).set_index(["scheduler", "policy"])
    las = summary.loc[("las", "uniform")]
    assert las.mean_rho == pytest.approx(7 / 3)
    half = 4.302653 * math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 2) / math.sqrt(3)
    assert las.mean_rho_hi - las.mean_rho == pytest.approx(half, rel=1e-5)
    assert las.max_rho == pytest.approx(14 / 3)
    assert math.isnan(summary.loc[("fifo", "uniform")].mean_rho)
    out = tmp_path / "out"
    assert main(["jobs-study", str(study), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"{7 / 3:.2f} [{7 / 3 - half:.2f}, {7 / 3 + half:.2f}]" in text
    fifo_line = next(line for line in text.splitlines() if line.startswith("fifo "))
    assert fifo_line.split()[-2:] == ["-", "-"], fifo_line  # mean and max rho: not reported by those runs
    assert (out / "study-rho-cdf-philly.png").is_file()


def test_no_rho_figure_for_runs_made_before_rho(study: Path, tmp_path: Path):
    _, paths = jobs_study.write_study(study, tmp_path / "out")
    assert not any("rho" in p.name for p in paths)


def test_an_empty_folder_is_a_clear_error(tmp_path: Path, capsys):
    assert main(["jobs-study", str(tmp_path)]) == 1
    assert "no run folders" in capsys.readouterr().err


def test_report_draws_a_jobs_run(tmp_path: Path):
    run = tmp_path / "jobs-run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({
        "kind": "jobs", "scheduler": "fifo", "round_s": 60, "jobs": 2, "finished": 2, "mean_jct_s": 100.0,
        "median_jct_s": 100.0, "p99_jct_s": 150.0, "makespan_s": 200.0, "utilisation": {"v100": 0.5},
        "devices": {"v100": 4}, "mean_rho": 1.5, "max_rho": 2.0}))
    (run / "jobs.csv").write_text("job,arrival_s,start_s,end_s,jct_s,queueing_s,contention,fair_s,rho\n"
                                  "a,0,0,50,50,0,1,50,1\nb,10,60,160,150,50,1.2,75,2\n")
    (run / "allocations.csv").write_text("time_s,job,kind,devices\n0,a,v100,2\n60,b,v100,4\n")
    assert jobs_study.is_jobs_run(run)
    assert not jobs_study.is_jobs_run(tmp_path)
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "Jobs jobs-run (fifo)" in page
    assert (out / "00-jobs-run-jct-cdf.png").is_file() and (out / "00-jobs-run-occupancy.png").is_file()
    assert (out / "00-jobs-run-rho-cdf.png").is_file()


def test_a_run_that_stopped_early_is_left_out_and_named(study: Path, capsys):
    _run(study, "philly-las-uniform-s1", 5.0, finished=1)
    summary = json.loads((study / "philly-las-uniform-s1" / "summary.json").read_text())
    summary["stopped"] = "job 'x': min_workers 32 fits no single device kind"
    (study / "philly-las-uniform-s1" / "summary.json").write_text(json.dumps(summary))
    runs = jobs_study.load(study)
    assert "philly-las-uniform-s1" not in set(runs.run)
    assert main(["jobs-study", str(study), "--out", str(study / "out")]) == 0
    assert "philly-las-uniform-s1: job 'x'" in capsys.readouterr().out


def test_report_draws_a_jobs_run_energy(tmp_path: Path):
    run = tmp_path / "jobs-energy"
    run.mkdir()
    energy = {"total_j": 1700.0, "jobs_j": 1666.7, "unallocated_idle_j": 33.3, "average_power_w": 85.0,
              "wait": "auto", "comm": "busy",
              "kinds": {"v100": {"jobs_j": 1666.7, "unallocated_idle_j": 33.3, "unallocated_device_s": 3.3,
                                 "idle_w": 10.0}}}
    (run / "summary.json").write_text(json.dumps({
        "kind": "jobs", "scheduler": "fifo", "round_s": 60, "jobs": 2, "finished": 2, "mean_jct_s": 100.0,
        "median_jct_s": 100.0, "p99_jct_s": 150.0, "makespan_s": 20.0, "utilisation": {"v100": 0.5},
        "devices": {"v100": 1}, "energy": energy}))
    (run / "jobs.csv").write_text("job,arrival_s,start_s,end_s,jct_s,queueing_s,energy_j,compute_j,comm_j,wait_j,idle_j\n"
                                  "a,0,0,13,13,0,666.7,666.7,0,0,0\nb,0,0,20,20,0,1000,900,50,30,20\n")
    (run / "allocations.csv").write_text("time_s,job,kind,devices\n0,a,v100,1\n0,b,v100,1\n")
    jobs, block = energy_module.jobs_energy(run)
    assert list(jobs.job) == ["a", "b"] and block["total_j"] == 1700.0
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "energy total_j" in page and "1700" in page
    assert (out / "00-jobs-energy-job-energy.png").is_file()


def test_a_jobs_run_without_energy_has_no_energy_figure(tmp_path: Path):
    run = tmp_path / "plain"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({"kind": "jobs", "scheduler": "fifo", "devices": {"v100": 1}}))
    (run / "jobs.csv").write_text("job,arrival_s,start_s,end_s,jct_s,queueing_s\na,0,0,1,1,0\n")
    (run / "allocations.csv").write_text("time_s,job,kind,devices\n0,a,v100,1\n")
    assert energy_module.jobs_energy(run) is None
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out)]) == 0
    assert not (out / "00-plain-job-energy.png").exists()


def test_energy_means_and_paired_ratios(tmp_path: Path, capsys):
    # omnilearn under gavel spends 0.8 of uniform's energy on every seed; runs without energy give NaN, not zero.
    for seed, base in [(1, 100.0), (2, 200.0)]:
        _run(tmp_path, f"philly-gavel-uniform-s{seed}", base, joules=1e9 * seed)
        _run(tmp_path, f"philly-gavel-omnilearn-s{seed}", base, joules=0.8e9 * seed)
    _run(tmp_path, "philly-fifo-uniform-s1", 100.0)
    runs = jobs_study.load(tmp_path)
    assert runs.set_index("run").loc["philly-fifo-uniform-s1"].energy_total_j != runs.energy_total_j.max()
    assert math.isnan(runs.set_index("run").loc["philly-fifo-uniform-s1"].energy_total_j)
    summary = jobs_study.summarize(runs).set_index(["scheduler", "policy"])
    assert summary.loc[("gavel", "uniform")].energy_total_j == pytest.approx(1.5e9)
    assert summary.loc[("gavel", "uniform")].energy_jobs_j == pytest.approx(1.5e9 / 4)
    diffs = jobs_study.paired(runs).set_index(["scheduler", "policy", "reference"])
    row = diffs.loc[("gavel", "omnilearn", "vs uniform")]
    assert row.energy_total_j_ratio == pytest.approx(0.8)
    assert row.energy_total_j_verdict == "better"
    assert main(["jobs-study", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    assert "philly: energy, mean over seeds, GJ" in text and "energy 0.800 [0.800, 0.800]" in text
