"""The ASP study under virtual-time training (``scenarios/testbed/sweep-asp-virtual-time.yaml``): per level, policy
and learning-rate rule, the mean final accuracy and time to a target accuracy over seeds with Student-t 95%
intervals, and omnilearn's paired difference against uniform (same level, rule and seed) with its interval and
a verdict: "better" or "worse" when the interval excludes 0, else "no detectable difference".

Input: a sweep folder (``sweep.csv`` with the axes ``level``, ``policy.name``, ``lr`` and ``seed``, and each point's
``evaluations.csv`` for the time to the target)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from .labels import axis_label, coordinate_value, policy_label

AXES = ("level", "policy.name", "lr", "seed")


def read_evaluations(sweep: str | Path, points) -> dict[str, pd.DataFrame]:
    """Each point's evaluations.csv (an empty frame where it has none), read once for the times and the curves."""
    empty = pd.DataFrame({"time_s": [], "accuracy": []})
    return {p: pd.read_csv(Path(sweep) / p / "evaluations.csv") if (Path(sweep) / p / "evaluations.csv").exists()
            else empty for p in points}


def _first_time_at(evaluations: pd.DataFrame, target: float) -> float:
    """Simulated seconds of the first evaluation at or above `target` (NaN when none reached it)."""
    hit = evaluations[evaluations["accuracy"] >= target]
    return float(hit["time_s"].iloc[0]) if not hit.empty else float("nan")


def load(sweep: str | Path, target: float, evaluations: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """One row per successful point: axes, final accuracy, updates, staleness and the time to `target`. Each point's
    evaluations are read once: into `evaluations` when a dict is given (for accuracy_curves)."""
    sweep = Path(sweep)
    table = pd.read_csv(sweep / "sweep.csv", dtype={"level": str, "lr": str, "policy.name": str})
    missing = [c for c in (*AXES, "status", "final_accuracy") if c not in table.columns]
    if missing:
        raise ValueError(f"{sweep / 'sweep.csv'}: missing column(s) {', '.join(missing)} (expected the axes "
                         f"{', '.join(AXES)} of sweep-asp-virtual-time.yaml and final_accuracy)")
    ok = table[table["status"] == "ok"].copy()
    if evaluations is None:
        evaluations = {}
    evaluations.update(read_evaluations(sweep, ok["point"]))
    ok["time_to_target_s"] = [_first_time_at(evaluations[p], target) for p in ok["point"]]
    # The axis label (uniform, omnilearn), not the summary's policy field (omnilearn-asp).
    ok = ok.drop(columns=["policy"], errors="ignore").rename(columns={"policy.name": "policy", "iterations": "updates"})
    return ok[["point", "level", "policy", "lr", "seed", "final_accuracy", "updates", "mean_staleness",
               "time_to_target_s"]].reset_index(drop=True)


def mean_ci(values: pd.Series) -> tuple[float, float, float, int]:
    """Mean and Student-t 95% interval (low, high) of the finite values, and their count."""
    v = values.dropna().to_numpy(dtype=float)
    n = len(v)
    if n == 0:
        return (math.nan, math.nan, math.nan, 0)
    m = float(v.mean())
    if n == 1:
        return (m, math.nan, math.nan, 1)
    half = float(stats.t.ppf(0.975, n - 1) * v.std(ddof=1) / math.sqrt(n))
    return (m, m - half, m + half, n)


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Per level, policy and rule: accuracy (points) and time to target with 95% intervals."""
    rows = []
    for (level, policy, lr), g in runs.groupby(["level", "policy", "lr"], sort=True):
        acc = mean_ci(g["final_accuracy"] * 100.0)
        ttt = mean_ci(g["time_to_target_s"])
        rows.append({"level": level, "policy": policy, "lr": lr, "seeds": len(g),
                     "accuracy_mean_pct": acc[0], "accuracy_ci_low": acc[1], "accuracy_ci_high": acc[2],
                     "reached_target": ttt[3], "time_to_target_mean_s": ttt[0], "time_to_target_ci_low": ttt[1],
                     "time_to_target_ci_high": ttt[2], "updates_mean": float(g["updates"].mean()),
                     "staleness_mean": float(g["mean_staleness"].mean())})
    return pd.DataFrame(rows)


def _verdict(low: float, high: float, higher_is_better: bool) -> str:
    if math.isnan(low) or math.isnan(high):
        return "too few pairs"
    if low > 0:
        return "better" if higher_is_better else "worse"
    if high < 0:
        return "worse" if higher_is_better else "better"
    return "no detectable difference"


def paired(runs: pd.DataFrame) -> pd.DataFrame:
    """omnilearn - uniform per level and rule, paired by seed: accuracy (points) and time to target (s)."""
    rows = []
    for (level, lr), g in runs.groupby(["level", "lr"], sort=True):
        u = g[g["policy"] == "uniform"].set_index("seed")
        o = g[g["policy"] == "omnilearn"].set_index("seed")
        seeds = u.index.intersection(o.index)
        if seeds.empty:
            continue
        d_acc = (o.loc[seeds, "final_accuracy"] - u.loc[seeds, "final_accuracy"]) * 100.0
        d_ttt = o.loc[seeds, "time_to_target_s"] - u.loc[seeds, "time_to_target_s"]
        a, t = mean_ci(d_acc), mean_ci(d_ttt)
        rows.append({"level": level, "lr": lr, "pairs": len(seeds),
                     "accuracy_diff_pts": a[0], "accuracy_diff_ci_low": a[1], "accuracy_diff_ci_high": a[2],
                     "accuracy_verdict": _verdict(a[1], a[2], higher_is_better=True),
                     "time_pairs": t[3], "time_diff_s": t[0], "time_diff_ci_low": t[1], "time_diff_ci_high": t[2],
                     "time_verdict": _verdict(t[1], t[2], higher_is_better=False)})
    return pd.DataFrame(rows)


def _interval(m: float, lo: float, hi: float, digits: int) -> str:
    if math.isnan(m):
        return "-"
    if math.isnan(lo):
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def format_tables(summary: pd.DataFrame, diffs: pd.DataFrame, target: float) -> str:
    lines = [f"| level | policy | lr rule | final accuracy (%), mean [95% CI] | reached {target:.0%} | "
             f"time to {target:.0%} (s), mean [95% CI] | updates |", "|---|---|---|---|---|---|---|"]
    for _, r in summary.iterrows():
        lines.append(f"| {r['level']} | {r['policy']} | {r['lr']} | "
                     f"{_interval(r['accuracy_mean_pct'], r['accuracy_ci_low'], r['accuracy_ci_high'], 2)} | "
                     f"{r['reached_target']}/{r['seeds']} | "
                     f"{_interval(r['time_to_target_mean_s'], r['time_to_target_ci_low'], r['time_to_target_ci_high'], 1)}"
                     f" | {r['updates_mean']:.0f} |")
    lines += ["", f"| level | lr rule | omnilearn - uniform: accuracy (pts) [95% CI] | verdict | "
                  f"time to {target:.0%} (s) [95% CI] | verdict |", "|---|---|---|---|---|---|"]
    for _, r in diffs.iterrows():
        lines.append(f"| {r['level']} | {r['lr']} | "
                     f"{_interval(r['accuracy_diff_pts'], r['accuracy_diff_ci_low'], r['accuracy_diff_ci_high'], 2)} "
                     f"({r['pairs']} seeds) | {r['accuracy_verdict']} | "
                     f"{_interval(r['time_diff_s'], r['time_diff_ci_low'], r['time_diff_ci_high'], 1)} "
                     f"({r['time_pairs']} pairs) | {r['time_verdict']} |")
    return "\n".join(lines)


def accuracy_curves(evaluations: dict[str, pd.DataFrame], runs: pd.DataFrame, points: int = 200):
    """A panel per level: the mean test accuracy over seeds against simulated time for each policy and rule, with
    its Student-t 95% band. Each run's evaluations are interpolated on a common time grid (up to the shortest run's
    last evaluation of the group)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    levels = sorted(runs["level"].unique())
    fig, axes = plt.subplots(1, len(levels), figsize=(4.2 * len(levels), 3.6), sharey=True, squeeze=False)
    for ax, level in zip(axes[0], levels):
        for (policy, lr), g in runs[runs["level"] == level].groupby(["policy", "lr"], sort=True):
            if policy == "uniform" and lr != min(runs["lr"]):
                continue  # under uniform every push has b_k = b_ref: the rules give the same runs, drawn once
            curves = [evaluations[point] for point in g["point"] if len(evaluations[point]) > 1]
            if not curves:
                continue
            start = max(float(c["time_s"].iloc[0]) for c in curves)
            end = min(float(c["time_s"].iloc[-1]) for c in curves)
            grid = np.linspace(start, end, points)
            ys = np.array([np.interp(grid, c["time_s"], c["accuracy"] * 100.0) for c in curves])
            mean = ys.mean(axis=0)
            label = policy_label(policy) if policy == "uniform" else f"{policy_label(policy)}, lr {lr}"
            ax.plot(grid, mean, label=label, linewidth=1.2)
            if len(ys) > 1:
                half = stats.t.ppf(0.975, len(ys) - 1) * ys.std(axis=0, ddof=1) / math.sqrt(len(ys))
                ax.fill_between(grid, mean - half, mean + half, alpha=0.2)
        ax.set_title(f"{coordinate_value(level)} ({runs[runs['level'] == level]['seed'].nunique()} seeds)")
        ax.set_xlabel(axis_label("time_s"))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"{axis_label('accuracy')}, mean and 95% band")
    axes[0][-1].legend(title="Policy, learning-rate rule", fontsize="small", loc="lower right")
    fig.suptitle("Test accuracy against simulated time per policy, at each heterogeneity level", fontsize="medium")
    fig.tight_layout()
    return fig


def write_study(sweep: str | Path, target: float) -> tuple[str, list[Path]]:
    """Writes study-runs.csv, study-summary.csv and study-paired.csv (each with a `target` column) and
    study-accuracy.png (accuracy_curves) into the sweep folder; returns the tables as Markdown and the paths."""
    sweep = Path(sweep)
    evaluations: dict[str, pd.DataFrame] = {}
    runs = load(sweep, target, evaluations)
    if runs.empty:
        raise ValueError(f"{sweep / 'sweep.csv'}: no point finished (status ok)")
    summary, diffs = summarize(runs), paired(runs)
    for frame in (runs, summary, diffs):
        frame.insert(0, "target", target)
    paths = [sweep / "study-runs.csv", sweep / "study-summary.csv", sweep / "study-paired.csv"]
    for frame, path in zip((runs, summary, diffs), paths):
        frame.to_csv(path, index=False)
    fig = accuracy_curves(evaluations, runs)
    paths.append(sweep / "study-accuracy.png")
    fig.savefig(paths[-1], dpi=110)
    return format_tables(summary, diffs, target), paths


__all__ = ["load", "mean_ci", "summarize", "paired", "format_tables", "accuracy_curves", "read_evaluations", "write_study"]
