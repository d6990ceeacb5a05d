"""Simulator against testbed on one scenario (`omnilearn validate`): per worker, how far the simulated iteration
times, batch trajectory and time to epoch are from what the testbed measured.

Both run folders follow the same schema (runs.py). BSP steps are aligned by index: every step processes the global
batch in both back ends, so step s covers the same samples even when the per-worker batches differ. Compared:

- iteration time of worker k at step s: compute_s + comm_s + wait_s (what the worker spent on that step); the
  "all" row uses the step period instead (start of step s to start of step s+1), which also holds the work between
  steps (optimizer step, sampling) that no worker records;
- mean_iter_error_pct: |mean_sim - mean_testbed| / mean_testbed over the compared steps, in %;
- max_iter_error_pct: the same on the means of consecutive windows of `window` steps, the largest over windows (a
  single step is too noisy on a shared CPU to compare, and the two runs are not step-aligned in time);
- compute_error_pct: signed error of the mean compute time alone (positive: the simulator is slower);
- noise_floor_pct: the max_iter_error_pct that a simulator predicting exactly the testbed's own mean would get
  (the largest deviation of a window mean from the overall mean): the testbed's window-to-window noise, which no
  deterministic model goes below;
- repeat_mean_error_pct, repeat_max_error_pct: the same two errors for other testbed runs of the scenario (repeats)
  in place of the simulator, averaged over the repeats (empty without repeats): how far the testbed lands from
  itself when run again, the reference for the simulator's errors;
- runs_mean_error_pct: the simulator's mean error against the mean of all the testbed runs (the first and its
  repeats): less of one run's noise (empty without repeats);
- batch_trajectory_diff: mean over compared steps of |b_sim - b_testbed|, in samples;
- time_to_epoch_error_pct: |T_sim - T_testbed| / T_testbed for the last epoch both runs completed, where T is the
  time from the first step's start to the first start of the next epoch, without evaluation pauses.

Energy, one figure per run on every row (summary.json's `energy` block of each side, docs/energy.md):

- testbed_energy_j, sim_energy_j: the joules of each run (empty where a side reports none);
- energy_error_pct: signed, 100 * (sim - testbed) / testbed;
- energy_source: how the testbed got its figure: "measured" (the host's energy counters), "modelled-cputime" (its
  workers' CPU time at the scenario's power figures) or "modelled-phases" (GPU runs); "none" without one;
- energy_within_15pct: the criterion |error| <= 15%, judged like with like only: "yes" or "no" from `omnilearn
  validate`'s energy verdict (--energy-verdict: energy-verdict.json), which predicts the simulator's run in the
  host's own units from its calibrated idle and busy package watts; sim_energy_j and energy_error_pct are then that
  prediction's. "refused" when the testbed measured but there is no verdict (no host calibration on this host, a
  scaled run: the verdict file says why); "modelled" when the testbed's figure is itself modelled (reported, not
  judged).

Compared steps: those both runs have, after the first `warmup` steps, without the last step of each epoch (a shrunken
remainder) nor the first step of the next (the testbed evaluates in between, and its other ranks absorb that pause
in their all-reduce).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .runs import Run, RunFormatError, load_run

COLUMNS = ["level", "worker", "steps", "testbed_iter_s", "sim_iter_s", "mean_iter_error_pct", "max_iter_error_pct",
           "noise_floor_pct", "repeat_mean_error_pct", "repeat_max_error_pct", "runs_mean_error_pct",
           "compute_error_pct", "batch_trajectory_diff", "testbed_epoch_s", "sim_epoch_s", "time_to_epoch_error_pct",
           "testbed_energy_j", "sim_energy_j", "energy_error_pct", "energy_source", "energy_within_15pct"]
ENERGY_TOLERANCE_PCT = 15.0  # issue 27: the simulator's energy against measured testbed joules


@dataclass
class Options:
    window: int = 20   # steps per window for the max error
    warmup: int = 10   # first steps left out (start-up, the first decision)


def _pct(sim: float, ref: float) -> float:
    return 100.0 * abs(sim - ref) / ref if ref > 0 else float("nan")


def _bsp_iterations(run: Run) -> pd.DataFrame:
    if run.mode not in ("bsp", "?"):
        raise RunFormatError(f"{run.path}: validation compares BSP runs (this one is {run.mode})")
    it = run.iterations
    if it.empty:
        raise RunFormatError(f"{run.path / 'iterations.csv'}: no iterations")
    return it.assign(iter_s=it["compute_s"] + it["comm_s"] + it["wait_s"])


def compared_steps(testbed: pd.DataFrame, sim: pd.DataFrame, warmup: int, evaluated_after=()) -> np.ndarray:
    """Steps both runs have, without the warm-up, the steps around each epoch boundary and the steps around each
    evaluation (`evaluated_after`: the steps after which the testbed's rank 0 evaluated; the next step's
    all-reduce holds the other workers for the pause, which the simulator does not model and which is not
    training time)."""
    common = np.intersect1d(testbed["step"].unique(), sim["step"].unique())
    common = common[common >= warmup]
    excluded: set[int] = set()
    for s in evaluated_after:
        excluded.update((int(s), int(s) + 1))
    for it in (testbed, sim):
        first = it.groupby("epoch")["step"].min()
        last = it.groupby("epoch")["step"].max()
        excluded.update(int(s) for e, s in first.items() if e > 0)
        excluded.update(int(s) for e, s in last.items() if (e + 1) in first.index)
    return np.array([s for s in common if int(s) not in excluded], dtype=np.int64)


def epoch_times(it: pd.DataFrame, evaluated_after=()) -> list[float]:
    """Cumulative time to the end of each completed epoch (one whose next epoch started), evaluation pauses out.

    An epoch lasts from the earliest start of its first step to the earliest start of the next epoch's first step.
    The testbed evaluates between epochs, which lengthens the first step of the next epoch, and after each step in
    `evaluated_after` (eval_every), which lengthens the step after it: those steps (and the evaluated one) count at
    the median duration of the steps of their epoch instead.
    """
    starts = it.groupby("step").agg(start_s=("start_s", "min"), epoch=("epoch", "min")).sort_index()
    period = starts["start_s"].shift(-1) - starts["start_s"]
    starts = starts.assign(period=period)
    epochs = sorted(starts["epoch"].unique())
    out: list[float] = []
    total = 0.0
    for e in epochs:
        if e + 1 not in epochs:
            break
        rows = starts[starts["epoch"] == e]
        periods = rows["period"].to_numpy(dtype=float)
        paused = np.isin(rows.index.to_numpy(), [int(s) + d for s in evaluated_after for d in (0, 1)])
        if e > 0 and len(periods) > 1:
            paused[0] = True
        if paused.any() and (~paused).any():
            periods[paused] = float(np.nanmedian(periods[~paused]))
        total += float(np.nansum(periods))
        out.append(total)
    return out


def step_periods(it: pd.DataFrame) -> pd.Series:
    """Per step, the time from its earliest start to the next step's earliest start ("iter_s"; NaN for the last):
    what a step costs the run, including any work between steps that no worker records."""
    starts = it.groupby("step")["start_s"].min().sort_index()
    return (starts.shift(-1) - starts).rename("iter_s")


def _evaluated_after(run: Run) -> list[int]:
    return run.evaluations["step"].dropna().astype(int).tolist() if not run.evaluations.empty else []


def energy_columns(testbed: Run, sim: Run, verdict: dict | None = None) -> dict:
    """The run-level energy columns (module doc): each side's joules, the signed error, the testbed's source and the
    15% criterion, judged only by a like-with-like `verdict` (energy-verdict.json) where the testbed measured."""
    tb = testbed.summary.get("energy") or {}
    sm = sim.summary.get("energy") or {}
    tj, sj = tb.get("joules"), sm.get("joules")
    source = str(tb.get("source", "modelled-phases")) if tj is not None else "none"
    judged = source == "measured" and bool(verdict and verdict.get("judged"))
    if judged:
        sj = verdict["predicted_j"]
    error = 100.0 * (sj - tj) / tj if tj and sj is not None else float("nan")
    if np.isnan(error):
        within = ""
    elif judged:
        within = "yes" if abs(error) <= ENERGY_TOLERANCE_PCT else "no"
    elif source == "measured":
        within = "refused"
    else:
        within = "modelled"
    return {"testbed_energy_j": float(tj) if tj is not None else float("nan"),
            "sim_energy_j": float(sj) if sj is not None else float("nan"),
            "energy_error_pct": error, "energy_source": source, "energy_within_15pct": within}


def format_energy(table: pd.DataFrame) -> str:
    """One line on the runs' energy (the first row's energy columns), for the terminal."""
    if table.empty:
        return "energy: not compared (no rows)"
    r = table.iloc[0]
    if r["energy_source"] == "none" or np.isnan(r["sim_energy_j"]):
        return "energy: not compared (" + ("the testbed run reports none" if r["energy_source"] == "none"
                                           else "the simulator reports none: give the scenario an energy section") + ")"
    verdict = {"yes": f"within {ENERGY_TOLERANCE_PCT:.0f}%", "no": f"NOT within {ENERGY_TOLERANCE_PCT:.0f}%",
               "refused": "measured against the simulator's emulated nodes: not judged, see the energy verdict",
               "modelled": "modelled against modelled: reported, not judged"}[r["energy_within_15pct"]]
    return (f"energy: testbed {r['testbed_energy_j']:.1f} J ({r['energy_source']}), sim {r['sim_energy_j']:.1f} J, "
            f"error {r['energy_error_pct']:+.1f}% ({verdict})")


def compare(testbed: Run, sim: Run, level: str | None = None, options: Options | None = None,
            repeats: list[Run] | tuple = (), verdict: dict | None = None) -> pd.DataFrame:
    """One row per worker plus an "all" row (the step period, step_periods); see the module doc. `repeats`: other
    testbed runs of the scenario, compared with `testbed` as the simulator is (the repeat_* columns)."""
    o = options or Options()
    tb = _bsp_iterations(testbed)
    sm = _bsp_iterations(sim)
    level = level or str(testbed.manifest.get("scenario", {}).get("name", testbed.name))
    evaluated = sorted(set(_evaluated_after(testbed)) | set(_evaluated_after(sim)))
    steps = compared_steps(tb, sm, o.warmup, evaluated)
    if len(steps) == 0:
        raise RunFormatError(f"{testbed.path} and {sim.path}: no steps to compare (too short a run?)")
    tb_epochs, sm_epochs = epoch_times(tb, evaluated), epoch_times(sm)
    n_epochs = min(len(tb_epochs), len(sm_epochs))
    tb_epoch = tb_epochs[n_epochs - 1] if n_epochs else float("nan")
    sm_epoch = sm_epochs[n_epochs - 1] if n_epochs else float("nan")
    epoch_err = _pct(sm_epoch, tb_epoch) if n_epochs else float("nan")

    def rows_for(frame: pd.DataFrame, worker) -> pd.DataFrame:
        f = frame[frame["step"].isin(steps)]
        if worker == "all":
            per_step = f.groupby("step").agg(compute_s=("compute_s", "max"), batch=("batch", "sum"))
            return per_step.join(step_periods(frame), how="inner").dropna().reset_index()
        return f[f["worker"] == worker][["step", "iter_s", "compute_s", "batch"]]

    energy = energy_columns(testbed, sim, verdict)
    rows = []
    workers = sorted(set(tb["worker"].unique()) & set(sm["worker"].unique()))
    for worker in [*workers, "all"]:
        a = rows_for(tb, worker).set_index("step")
        b = rows_for(sm, worker).set_index("step")
        both = a.join(b, how="inner", lsuffix="_tb", rsuffix="_sim")
        if both.empty:
            continue
        windows = both.groupby(both.index // o.window)
        counts = windows.size()
        means = windows[["iter_s_tb", "iter_s_sim"]].mean()[counts >= max(1, o.window // 2)]
        if means.empty:
            means = both[["iter_s_tb", "iter_s_sim"]].mean().to_frame().T
        window_err = [_pct(s, t) for t, s in zip(means["iter_s_tb"], means["iter_s_sim"])]
        floor = max(_pct(both["iter_s_tb"].mean(), t) for t in means["iter_s_tb"])
        tb_compute = both["compute_s_tb"].mean()
        rows.append({
            "level": level,
            "worker": worker,
            "steps": len(both),
            "testbed_iter_s": both["iter_s_tb"].mean(),
            "sim_iter_s": both["iter_s_sim"].mean(),
            "mean_iter_error_pct": _pct(both["iter_s_sim"].mean(), both["iter_s_tb"].mean()),
            "max_iter_error_pct": max(window_err),
            "noise_floor_pct": floor,
            "repeat_mean_error_pct": float("nan"),
            "repeat_max_error_pct": float("nan"),
            "runs_mean_error_pct": float("nan"),
            "compute_error_pct": 100.0 * (both["compute_s_sim"].mean() - tb_compute) / tb_compute
            if tb_compute > 0 else float("nan"),
            "batch_trajectory_diff": float((both["batch_sim"] - both["batch_tb"]).abs().mean()),
            "testbed_epoch_s": tb_epoch,
            "sim_epoch_s": sm_epoch,
            "time_to_epoch_error_pct": epoch_err,
            **energy,
        })
    table = pd.DataFrame(rows, columns=COLUMNS)
    if repeats:
        again = [compare(testbed, r, level, o).set_index("worker") for r in repeats]
        for column in ("mean_iter_error_pct", "max_iter_error_pct"):
            mean = pd.concat([a[column] for a in again], axis=1).mean(axis=1)  # over repeats, per worker
            table["repeat_" + column.replace("_iter", "")] = table["worker"].map(mean).astype(float)
        # Each repeat's mean iteration time is its "sim_iter_s" against the first run.
        runs_mean = pd.concat([table.set_index("worker")["testbed_iter_s"], *[a["sim_iter_s"] for a in again]],
                              axis=1).mean(axis=1)
        pooled = table["worker"].map(runs_mean).astype(float)
        table["runs_mean_error_pct"] = 100.0 * (table["sim_iter_s"] - pooled).abs() / pooled
    return table


def format_table(table: pd.DataFrame) -> str:
    """A fixed-width text table of the main columns, for the terminal."""
    head = f"{'level':<10} {'worker':>6} {'steps':>5} {'tb_iter_ms':>10} {'sim_iter_ms':>11} {'mean_err%':>9} " \
           f"{'max_err%':>8} {'floor%':>6} {'rep_mean%':>9} {'rep_max%':>8} {'runs_err%':>9} {'compute%':>8} " \
           f"{'batch_diff':>10} {'epoch_err%':>10}"
    lines = [head]
    for r in table.itertuples(index=False):
        lines.append(f"{str(r.level):<10} {str(r.worker):>6} {r.steps:>5} {1e3 * r.testbed_iter_s:>10.2f} "
                     f"{1e3 * r.sim_iter_s:>11.2f} {r.mean_iter_error_pct:>9.2f} {r.max_iter_error_pct:>8.2f} "
                     f"{r.noise_floor_pct:>6.1f} {r.repeat_mean_error_pct:>9.2f} {r.repeat_max_error_pct:>8.2f} "
                     f"{r.runs_mean_error_pct:>9.2f} "
                     f"{r.compute_error_pct:>+8.1f} {r.batch_trajectory_diff:>10.2f} {r.time_to_epoch_error_pct:>10.2f}")
    return "\n".join(lines)


def add_accuracy_columns(table: pd.DataFrame, testbed_dir: Path, sim_dir: Path) -> pd.DataFrame:
    """With a simulator run that trained (omnilearn validate --train: workload.numerics: real), the same columns on
    every row: the largest accuracy gap (points) at the steps both evaluated, and the steps and time to the target
    of each side. Unchanged otherwise."""
    from .virtual_time import _curve_gap, _summary
    ev = sim_dir / "evaluations.csv"
    if not ev.exists() or len(pd.read_csv(ev)) == 0:
        return table
    t, s = _summary(testbed_dir), _summary(sim_dir)
    table = table.copy()
    table["accuracy_max_gap_pts"] = _curve_gap(testbed_dir, sim_dir)
    table["testbed_steps_to_target"] = t.get("extra", {}).get("steps_to_target", np.nan)
    table["sim_steps_to_target"] = s.get("extra", {}).get("steps_to_target", np.nan)
    table["testbed_time_to_target_s"] = t.get("time_to_target_s", np.nan)
    table["sim_time_to_target_s"] = s.get("time_to_target_s", np.nan)
    return table


def write_validation(testbed_dir: str | Path, sim_dir: str | Path, out_dir: str | Path, level: str | None = None,
                     options: Options | None = None, repeat_dirs=(),
                     verdict_file: str | Path | None = None) -> tuple[pd.DataFrame, Path]:
    """Compares the two run folders (and the testbed with its repeats) and writes OUT/validation.csv; returns the
    table and the file's path. `verdict_file`: omnilearn validate's energy-verdict.json (module doc)."""
    repeats = [load_run(d) for d in repeat_dirs]
    verdict = None
    if verdict_file is not None:
        try:
            verdict = json.loads(Path(verdict_file).read_text())
        except (OSError, ValueError) as e:
            raise RunFormatError(f"{verdict_file}: cannot read the energy verdict: {e}") from e
    table = compare(load_run(testbed_dir), load_run(sim_dir), level, options, repeats, verdict)
    table = add_accuracy_columns(table, Path(testbed_dir), Path(sim_dir))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "validation.csv"
    table.to_csv(path, index=False, float_format="%.6g")
    return table, path
