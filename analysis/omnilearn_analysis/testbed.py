"""Testbed results over seeds (scripts/testbed-results.sh): per run, the mean step, time and steps to the target and
where the step goes (compute, exchange, waiting for the slowest worker); per level, uniform -> omnilearn over the
seeds as median and range.

Run folders are named <scenario>-<policy>-s<seed> (for example bsp-hl8-omnilearn-s2) under one results folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from .runs import Run, RunFormatError, is_run_dir, load_run

RUN_NAME = re.compile(r"^(?P<scenario>.+)-(?P<policy>uniform|omnilearn|affine|static|oracle)-s(?P<seed>\d+)$")
WARMUP_STEPS = 10  # first steps left out of the step breakdown (start-up, first plan)


def step_breakdown(run: Run) -> dict[str, float]:
    """Shares of the mean step spent in compute, exchange (the all-reduce itself) and waiting for the slowest
    worker, over every worker's rows. Left out: the first WARMUP_STEPS steps, and each step that follows an
    evaluation (rank 0 evaluates between steps and the other workers' all-reduce waits for it: not training time)."""
    it = run.iterations
    if it.empty:
        raise RunFormatError(f"{run.path}/iterations.csv: no rows")
    after_eval = set((run.evaluations["step"] + 1).tolist()) if not run.evaluations.empty else set()
    rows = it[(it["step"] >= WARMUP_STEPS) & ~it["step"].isin(after_eval)]
    if rows.empty:
        rows = it
    compute, comm, wait = rows["compute_s"].mean(), rows["comm_s"].mean(), rows["wait_s"].fillna(0).mean()
    step = compute + comm + wait
    return {"compute_share": compute / step, "exchange_share": comm / step, "wait_share": wait / step,
            "step_ms": 1e3 * step}


def run_row(path: Path) -> dict:
    m = RUN_NAME.match(path.name)
    if not m:
        raise RunFormatError(f"{path}: run folder name is not <scenario>-<policy>-s<seed>")
    run = load_run(path)
    s = run.summary
    extra = s.get("extra", {})
    row = {"run": path.name, "scenario": m["scenario"], "policy": m["policy"], "seed": int(m["seed"]),
           "mean_step_ms": 1e3 * s["mean_iteration_s"], "iterations": s.get("iterations"),
           "time_to_target_s": s.get("time_to_target_s"), "steps_to_target": extra.get("steps_to_target"),
           "final_accuracy": s.get("final_accuracy"), "batch_changes": s.get("batch_changes"),
           "mean_staleness": s.get("mean_staleness"), "max_staleness": s.get("max_staleness")}
    row.update(step_breakdown(run))
    return row


def load_results(folder: str | Path) -> pd.DataFrame:
    """One row per run folder named <scenario>-<policy>-s<seed> under `folder`."""
    folder = Path(folder)
    rows = [run_row(p) for p in sorted(folder.iterdir()) if p.is_dir() and is_run_dir(p) and RUN_NAME.match(p.name)]
    if not rows:
        raise RunFormatError(f"{folder}: no run folders named <scenario>-<policy>-s<seed>")
    return pd.DataFrame(rows)


def _reduction_pct(before: float, after: float) -> float:
    """How much shorter `after` is than `before`, in percent; NaN when either is missing (no target reached)."""
    if pd.isna(before) or pd.isna(after) or not before:
        return float("nan")
    return 100.0 * (before - after) / before


def level_table(runs: pd.DataFrame, base: str = "uniform", policy: str = "omnilearn") -> pd.DataFrame:
    """Per scenario with both policies: the reduction (%) of the mean step and of the time to target from `base` to
    `policy` in each seed (paired by seed), as median, min and max; steps to target of each policy (median, min,
    max); the step breakdown of each policy (median over seeds)."""
    out = []
    for scenario, g in runs.groupby("scenario", sort=True):
        a = g[g["policy"] == base].set_index("seed")
        b = g[g["policy"] == policy].set_index("seed")
        seeds = sorted(set(a.index) & set(b.index))
        if not seeds:
            continue
        step_red = pd.Series([_reduction_pct(a.at[s, "mean_step_ms"], b.at[s, "mean_step_ms"]) for s in seeds])
        tta_red = pd.Series([_reduction_pct(a.at[s, "time_to_target_s"], b.at[s, "time_to_target_s"]) for s in seeds],
                            dtype=float).dropna()
        row = {"scenario": scenario, "seeds": len(seeds),
               "step_reduction_median_pct": step_red.median(), "step_reduction_min_pct": step_red.min(),
               "step_reduction_max_pct": step_red.max(),
               "tta_reduction_median_pct": tta_red.median(), "tta_reduction_min_pct": tta_red.min(),
               "tta_reduction_max_pct": tta_red.max()}
        for name, frame in ((base, a.loc[seeds]), (policy, b.loc[seeds])):
            row[f"{name}_mean_step_ms"] = frame["mean_step_ms"].median()
            tta = pd.to_numeric(frame["time_to_target_s"]).dropna()
            row[f"{name}_tta_s"] = tta.median() if len(tta) else float("nan")
            steps = pd.to_numeric(frame["steps_to_target"]).dropna()  # none in runs without a target
            row[f"{name}_steps_median"] = steps.median() if len(steps) else float("nan")
            row[f"{name}_steps_min"] = steps.min() if len(steps) else float("nan")
            row[f"{name}_steps_max"] = steps.max() if len(steps) else float("nan")
            for part in ("compute_share", "exchange_share", "wait_share"):
                row[f"{name}_{part}"] = frame[part].median()
        out.append(row)
    return pd.DataFrame(out)


def format_level_table(table: pd.DataFrame, base: str = "uniform", policy: str = "omnilearn") -> str:
    """docs/results-testbed.md's table: markdown, one line per scenario."""
    def rng(med, lo, hi, fmt="{:.1f}"):
        if med != med:
            return "n/a"
        return f"{fmt.format(med)} ({fmt.format(lo)} to {fmt.format(hi)})"

    def steps(r, name):
        if r[f"{name}_steps_median"] != r[f"{name}_steps_median"]:
            return "-"
        return f"{r[f'{name}_steps_median']:.0f} ({r[f'{name}_steps_min']:.0f}-{r[f'{name}_steps_max']:.0f})"

    def split(r, name):
        return (f"{100 * r[f'{name}_compute_share']:.0f}/{100 * r[f'{name}_exchange_share']:.0f}/"
                f"{100 * r[f'{name}_wait_share']:.0f}")

    lines = [f"| scenario | seeds | mean step {base} -> {policy} (ms, median) | mean step reduction % median (min to "
             f"max) | time to target reduction % median (min to max) | steps to target {base} | steps to target "
             f"{policy} | compute/exchange/wait % {base} | compute/exchange/wait % {policy} |",
             "|---|---|---|---|---|---|---|---|---|"]
    for _, r in table.iterrows():
        lines.append(
            f"| {r['scenario']} | {r['seeds']} | {r[f'{base}_mean_step_ms']:.1f} -> {r[f'{policy}_mean_step_ms']:.1f} | "
            f"{rng(r['step_reduction_median_pct'], r['step_reduction_min_pct'], r['step_reduction_max_pct'])} | "
            f"{rng(r['tta_reduction_median_pct'], r['tta_reduction_min_pct'], r['tta_reduction_max_pct'])} | "
            f"{steps(r, base)} | {steps(r, policy)} | {split(r, base)} | {split(r, policy)} |")
    return "\n".join(lines)


def write_testbed_results(folder: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Writes runs.csv (one row per run) and levels.csv (level_table) into `folder`; returns both."""
    folder = Path(folder)
    runs = load_results(folder)
    table = level_table(runs)
    runs.to_csv(folder / "runs.csv", index=False)
    table.to_csv(folder / "levels.csv", index=False)
    return runs, table
