import json

import pandas as pd

from omnilearn_analysis import energy


def _run(tmp_path, block, csv=None):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "summary.json").write_text(json.dumps({"policy": "uniform", "energy": block} if block else {}))
    if csv is not None:
        (tmp_path / "energy.csv").write_text(csv)
    return tmp_path


CSV = ("worker,compute_j,comm_j,wait_j,idle_j,joules,compute_s,comm_s,wait_s,idle_s\n"
       "0,4,2,2,2,10,1,0.5,0.5,1\n1,6,1,0,0,7,2,0.5,0,0\n")


def test_run_energy_reads_the_csv_or_the_reason(tmp_path):
    rows, reason = energy.run_energy(_run(tmp_path / "a", {"joules": 17.0}, CSV))
    assert reason is None and list(rows["joules"]) == [10, 7]
    rows, reason = energy.run_energy(_run(tmp_path / "b", {"reason": "no power figures for worker 0 (a)"}))
    assert rows is None and reason.startswith("no power figures")
    assert energy.run_energy(_run(tmp_path / "c", None)) == (None, None)


def test_worker_bars_stack_every_phase(tmp_path):
    rows, _ = energy.run_energy(_run(tmp_path, {"joules": 17.0}, CSV))
    fig = energy.worker_bars(rows)
    heights = sorted(round(p.get_height(), 6) for p in fig.axes[0].patches)
    assert heights == sorted([4, 6, 2, 1, 2, 0, 2, 0])


def test_testbed_runs_modelled_from_cpu_time_or_measured(tmp_path):
    modelled = _run(tmp_path / "m", {"joules": 32.0, "source": "modelled-cputime", "note": "from the cgroups"},
                    "worker,busy_j,idle_j,joules,cpu_s,allotted_core_s\n0,15,17,32,3,20\n")
    rows, reason = energy.run_energy(modelled)
    assert reason is None
    heights = sorted(round(p.get_height(), 6) for p in energy.worker_bars(rows).axes[0].patches)
    assert heights == [15, 17]
    assert energy.energy_source(modelled) == "32.0 J, modelled-cputime: from the cgroups"
    measured = _run(tmp_path / "r", {"joules": 40.0, "source": "measured", "note": "RAPL package-0: the whole host"})
    assert energy.run_energy(measured) == (None, None)  # host-wide: no energy.csv
    assert energy.energy_source(measured).startswith("40.0 J, measured: RAPL")
    assert energy.energy_source(_run(tmp_path / "s", {"joules": 17.0}, CSV)) is None  # the simulator's block


def test_sweep_energy_figures_per_policy():
    table = pd.DataFrame({
        "policy": ["uniform", "omnilearn", "uniform"], "total_time_s": [10, 8, 12],
        "energy_joules": [100, 80, ""], "energy_compute_j": [50, 50, ""], "energy_comm_j": [10, 10, ""],
        "energy_wait_j": [30, 10, ""], "energy_idle_j": [10, 10, ""]})
    rows = energy.sweep_energy(table)
    assert len(rows) == 2
    assert len(energy.energy_vs_time(rows).axes[0].collections) == 2
    split = energy.split_per_policy(rows)
    assert len(split.axes[0].patches) == 8
    assert energy.sweep_energy(pd.DataFrame({"policy": ["uniform"]})).empty
