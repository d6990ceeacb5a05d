"""Figures for one run, a sweep, or an availability trace. Each function draws on a new figure and returns it;
the caller saves it. Matplotlib's non-interactive Agg back end is used, so no display is needed."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .runs import Run  # noqa: E402


def batch_sizes(run: Run):
    """Batch size per worker over time (a step line per worker), decisions that changed the plan as ticks."""
    fig, ax = plt.subplots(figsize=(8, 3.5))
    plans = run.plans
    if plans.empty:
        ax.text(0.5, 0.5, "no plans recorded", ha="center", transform=ax.transAxes)
        return fig
    end = float(run.summary.get("total_time_s", plans["time_s"].max()))
    for worker, df in plans.groupby("worker"):
        df = df.sort_values("time_s")
        xs = list(df["time_s"]) + [end]
        ys = list(df["batch"]) + [df["batch"].iloc[-1]]
        ax.step(xs, ys, where="post", label=f"worker {worker}")
    changed = plans[plans["changed"].astype(str).str.lower().isin(["true", "1"])]["time_s"].unique()
    for t in changed:
        ax.axvline(t, color="grey", alpha=0.25, linewidth=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("batch size")
    ax.set_title(f"{run.name}: batch per worker ({run.policy}); grey lines: plan changes")
    if plans["worker"].nunique() <= 16:
        ax.legend(fontsize="small", ncol=4)
    fig.tight_layout()
    return fig


def time_breakdown(run: Run):
    """Compute, communication and idle seconds per worker, stacked."""
    df = run.per_worker_time()
    fig, ax = plt.subplots(figsize=(8, 3.5))
    if df.empty:
        ax.text(0.5, 0.5, "no iterations recorded", ha="center", transform=ax.transAxes)
        return fig
    bottom = pd.Series(0.0, index=df.index)
    for column, label in (("compute_s", "compute"), ("comm_s", "communication"), ("wait_s", "idle")):
        ax.bar(df["worker"].astype(str), df[column], bottom=bottom, label=label)
        bottom = bottom + df[column]
    ax.set_xlabel("worker")
    ax.set_ylabel("seconds")
    ax.set_title(f"{run.name}: where each worker's time went")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def iteration_times(run: Run):
    """Duration of each step over time; periods where some worker is down are shaded, other changes marked."""
    steps = run.step_times()
    fig, ax = plt.subplots(figsize=(8, 3.5))
    if steps.empty:
        ax.text(0.5, 0.5, "no iterations recorded", ha="center", transform=ax.transAxes)
        return fig
    ax.plot(steps["start_s"], steps["duration_s"], linewidth=0.8)
    av = run.availability.sort_values("time_s")
    end = float(steps["start_s"].max() + steps["duration_s"].iloc[-1])
    for worker, df in av.groupby("worker"):
        down_since = None
        for t, f in zip(df["time_s"], df["fraction"]):
            if f == 0 and down_since is None:
                down_since = t
            elif f > 0 and down_since is not None:
                ax.axvspan(down_since, t, color="red", alpha=0.12)
                down_since = None
        if down_since is not None:
            ax.axvspan(down_since, end, color="red", alpha=0.12)
    for t in av[av["fraction"] > 0]["time_s"].unique():
        ax.axvline(t, color="orange", alpha=0.3, linewidth=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("step time (s)")
    ax.set_title(f"{run.name}: iteration time (orange: availability changes, red: a worker down)")
    fig.tight_layout()
    return fig


def accuracy(run: Run):
    """Test accuracy against wall time, with the time to target marked (testbed runs)."""
    ev = run.evaluations
    fig, ax = plt.subplots(figsize=(8, 3.5))
    if ev.empty:
        ax.text(0.5, 0.5, "no evaluations (simulated run)", ha="center", transform=ax.transAxes)
        return fig
    ax.plot(ev["time_s"], ev["accuracy"], marker="o", markersize=3)
    ttt = run.summary.get("time_to_target_s")
    if ttt is not None:
        ax.axvline(ttt, color="green", linestyle="--", label=f"target reached at {ttt:.1f} s")
        ax.legend(fontsize="small")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"{run.name}: test accuracy")
    fig.tight_layout()
    return fig


def accuracy_overlay(runs: list[Run], title: str = "test accuracy against time"):
    """Every run's test accuracy against its time (simulated seconds for virtual-time training, wall seconds on the
    testbed), one line per run labelled with its policy: how policies compare in accuracy, not only in speed."""
    fig, ax = plt.subplots(figsize=(8, 4))
    for run in runs:
        ev = run.evaluations
        if ev.empty:
            continue
        ax.plot(ev["time_s"], ev["accuracy"], marker="o", markersize=2, label=f"{run.name} ({run.policy})")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("test accuracy")
    ax.set_title(title)
    if len(runs) <= 12:
        ax.legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def staleness(run: Run):
    """Histogram of the staleness of applied updates (ASP)."""
    fig, ax = plt.subplots(figsize=(6, 3.5))
    s = pd.to_numeric(run.iterations.get("staleness", pd.Series(dtype=float)), errors="coerce").dropna()
    if s.empty:
        ax.text(0.5, 0.5, "no staleness recorded (BSP run)", ha="center", transform=ax.transAxes)
        return fig
    ax.hist(s, bins=range(int(s.max()) + 2), align="left")
    ax.set_xlabel("staleness (updates since the worker's pull)")
    ax.set_ylabel("updates")
    ax.set_title(f"{run.name}: staleness, mean {s.mean():.2f}, max {int(s.max())}")
    fig.tight_layout()
    return fig


def sweep_bars(table: pd.DataFrame, metric: str = "total_time_s"):
    """Bar chart of `metric` per policy, grouped by the sweep's other coordinates."""
    fig, ax = plt.subplots(figsize=(9, 4))
    ok = table[table["status"] == "ok"].copy()
    if ok.empty or metric not in ok.columns:
        ax.text(0.5, 0.5, f"no successful points with {metric}", ha="center", transform=ax.transAxes)
        return fig
    group_cols = [c for c in axis_columns(table) if c not in ("policy.name", "policy")]
    ok["group"] = ok[group_cols].astype(str).agg(" / ".join, axis=1) if group_cols else "all"
    pivot = ok.pivot_table(index="group", columns="policy", values=metric, aggfunc="first", sort=False)
    preferred = ["uniform", "static", "omnilearn", "omnilearn-asp", "affine", "oracle"]
    pivot = pivot[sorted(pivot.columns, key=lambda p: (preferred.index(p) if p in preferred else len(preferred), p))]
    pivot.plot.bar(ax=ax, rot=0)
    ax.set_ylabel(metric)
    ax.set_xlabel(" / ".join(group_cols) if group_cols else "")
    ax.set_title(f"{metric} per policy")
    fig.tight_layout()
    return fig


def axis_columns(table: pd.DataFrame) -> list[str]:
    """The sweep's axis columns: those between `point` and `status` in sweep.csv."""
    cols = list(table.columns)
    if "status" not in cols:
        return []
    return cols[1:cols.index("status")]


def trace_availability(trace: pd.DataFrame, title: str = "", bins: int = 600):
    """Availability per worker over time: step lines for up to 8 workers, else a heat map (worker x time, dark =
    down) so that many workers stay readable."""
    import numpy as np

    workers = list(dict.fromkeys(trace["worker"]))
    if len(workers) <= 8:
        fig, ax = plt.subplots(figsize=(9, 4))
        for w in workers:
            df = trace[trace["worker"] == w].sort_values("time_s")
            ax.step(df["time_s"], df["fraction"], where="post", linewidth=0.8, label=str(w))
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel("available fraction")
        ax.legend(fontsize="x-small", ncol=4)
    else:
        end = float(trace["time_s"].max()) or 1.0
        grid = np.linspace(0.0, end, bins)
        image = np.ones((len(workers), bins))
        for row, w in enumerate(workers):
            df = trace[trace["worker"] == w].sort_values("time_s")
            idx = np.searchsorted(df["time_s"].to_numpy(), grid, side="right") - 1
            values = df["fraction"].to_numpy()
            image[row] = np.where(idx >= 0, values[np.clip(idx, 0, None)], 1.0)
        fig, ax = plt.subplots(figsize=(9, max(3.0, 0.12 * len(workers) + 1.5)))
        shown = ax.imshow(image, aspect="auto", interpolation="nearest", cmap="viridis", vmin=0, vmax=1,
                          extent=(0.0, end, len(workers) - 0.5, -0.5))
        fig.colorbar(shown, ax=ax, label="available fraction")
        ax.set_ylabel("worker")
    ax.set_xlabel("time (s)")
    ax.set_title(title or "availability per worker")
    fig.tight_layout()
    return fig
