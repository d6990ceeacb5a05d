"""Figures for one run, a sweep, or an availability trace. Each function draws on a new figure and returns it;
the caller saves it. Axis labels, units and legend names come from labels.py. Matplotlib's non-interactive Agg
back end is used, so no display is needed."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from .labels import (COLUMNS, axis_label, coordinate_label, coordinate_value, policy_label,  # noqa: E402
                     policy_sort_key, scale)
from .runs import Run  # noqa: E402


def _label_axes(ax, x: str, y: str, backend: str = "sim") -> None:
    ax.set_xlabel(axis_label(x, backend))
    ax.set_ylabel(axis_label(y, backend))


def _empty(ax, text: str):
    ax.text(0.5, 0.5, text, ha="center", transform=ax.transAxes)
    return ax.figure


def _run_title(run: Run, what: str) -> str:
    return f"{what}\n{run.name}, policy {policy_label(run.policy)}"


def _run_figure(run: Run, x: str, y: str, what: str, width: float = 9):
    """A new figure for one run: its axes labelled for the columns x and y, titled `what` with the run's name and
    policy. Returns (figure, axes)."""
    fig, ax = plt.subplots(figsize=(width, 3.8))
    _label_axes(ax, x, y, run.backend)
    ax.set_title(_run_title(run, what), fontsize="medium")
    return fig, ax


def _workers(ids) -> str:
    ids = sorted(int(i) for i in ids)
    if len(ids) > 2 and ids == list(range(ids[0], ids[-1] + 1)):
        return f"workers {ids[0]}\u2013{ids[-1]}"
    return ("worker " if len(ids) == 1 else "workers ") + ", ".join(str(i) for i in ids)


def _line_width(i: int, n: int) -> float:
    """The i-th of n overlaid lines: the first widest, so that lines with equal values all stay visible."""
    return 1.2 + 1.8 * (n - 1 - i) / max(1, n - 1) if n <= 16 else 0.8


def batch_sizes(run: Run):
    """Mini-batch size per worker over time (a step line per worker, the first drawn widest so that equal batches
    stay visible), each line's last value named at its end; decisions that changed the plan as grey lines."""
    fig, ax = _run_figure(run, "time_s", "batch", "Mini-batch size of each worker over time")
    plans = run.plans
    if plans.empty:
        return _empty(ax, "no plans recorded")
    end = float(run.summary.get("total_time_s", plans["time_s"].max()))
    workers = sorted(plans["worker"].unique())
    for i, (worker, df) in enumerate(plans.groupby("worker")):
        df = df.sort_values("time_s")
        xs = list(df["time_s"]) + [end]
        ys = list(df["batch"]) + [df["batch"].iloc[-1]]
        ax.step(xs, ys, where="post", linewidth=_line_width(i, len(workers)), label=f"worker {worker}")
    changed = plans[plans["changed"].astype(str).str.lower().isin(["true", "1"])]["time_s"].unique()
    for t in changed:
        ax.axvline(t, color="grey", alpha=0.25, linewidth=0.8)
    ax.set_ylim(0, plans["batch"].max() * 1.15)
    if len(workers) <= 16:
        finals = plans.sort_values("time_s", kind="stable").groupby("worker")["batch"].last()
        for value, ws in finals.groupby(finals):
            ax.annotate(f"{_workers(ws.index)}: {value}", xy=(end, value), xytext=(-4, 4),
                        textcoords="offset points", ha="right", va="bottom", fontsize="small")
        handles, _ = ax.get_legend_handles_labels()
        if len(changed):
            handles.append(Line2D([], [], color="grey", alpha=0.5, linewidth=0.8, label="plan changed"))
        ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


BREAKDOWN_PARTS = ("compute_s", "comm_s", "wait_s")


def time_breakdown(run: Run):
    """Compute, communication and idle seconds per worker, stacked: where each worker's time went."""
    df = run.per_worker_time()
    fig, ax = _run_figure(run, "worker", "worker_time_s", "Where each worker's time went")
    if df.empty:
        return _empty(ax, "no iterations recorded")
    bottom = pd.Series(0.0, index=df.index)
    for column in BREAKDOWN_PARTS:
        ax.bar(df["worker"].astype(str), df[column], bottom=bottom, label=COLUMNS[column].words)
        bottom = bottom + df[column]
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def iteration_times(run: Run):
    """Duration of each iteration (its slowest worker; under ASP, each worker's own iterations, a line per worker)
    over time; periods where some worker is down are shaded red, other availability changes are orange lines."""
    steps = run.step_times()
    fig, ax = _run_figure(run, "start_s", "duration_s", "Iteration time over the run")
    if steps.empty:
        return _empty(ax, "no iterations recorded")
    if run.mode == "asp":  # no common step: each worker's own iterations, a line per worker
        it = run.iterations.sort_values("start_s")
        for i, (worker, df) in enumerate(it.groupby("worker")):
            ax.plot(df["start_s"], df["compute_s"] + df["comm_s"] + df["wait_s"],
                    linewidth=_line_width(i, it["worker"].nunique()) * 0.7, label=f"worker {worker}")
        handles = ax.get_legend_handles_labels()[0] if it["worker"].nunique() <= 16 else []
    else:
        ax.plot(steps["start_s"], steps["duration_s"], linewidth=0.8)
        handles = [Line2D([], [], linewidth=0.8, label="iteration time (its slowest worker)")]
    av = run.availability.sort_values("time_s")
    end = float(steps["start_s"].max() + steps["duration_s"].iloc[-1])
    down = False
    for worker, df in av.groupby("worker"):
        down_since = None
        for t, f in zip(df["time_s"], df["fraction"]):
            if f == 0 and down_since is None:
                down_since = t
            elif f > 0 and down_since is not None:
                ax.axvspan(down_since, t, color="red", alpha=0.12)
                down, down_since = True, None
        if down_since is not None:
            ax.axvspan(down_since, end, color="red", alpha=0.12)
            down = True
    start = float(steps["start_s"].min())
    changes = [t for t in av[av["fraction"] > 0]["time_s"].unique() if t > start]  # not the initial availability
    for t in changes:
        ax.axvline(t, color="orange", alpha=0.5, linewidth=0.8)
    if changes:
        handles.append(Line2D([], [], color="orange", alpha=0.5, linewidth=0.8, label="availability changed"))
    if down:
        handles.append(Patch(color="red", alpha=0.12, label="a worker down"))
    ax.set_ylim(bottom=0)
    if handles:
        ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def accuracy(run: Run):
    """Test accuracy against time, with the time to target marked."""
    ev = run.evaluations
    fig, ax = _run_figure(run, "time_s", "accuracy", "Test accuracy over the run", width=8)
    if ev.empty:
        return _empty(ax, "no evaluations (time-only simulated run)")
    ax.plot(ev["time_s"], ev["accuracy"] * scale("accuracy"), marker="o", markersize=3, label="test accuracy")
    ttt = run.summary.get("time_to_target_s")
    if ttt is not None:
        ax.axvline(ttt, color="green", linestyle="--", label=f"target reached at {ttt:.1f} s")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def accuracy_overlay(runs: list[Run], title: str = "Test accuracy against time"):
    """Every run's test accuracy against its time (simulated seconds for virtual-time training, wall seconds on the
    testbed), one line per run labelled with its policy: how policies compare in accuracy, not only in speed."""
    fig, ax = plt.subplots(figsize=(8, 4))
    backends = {run.backend for run in runs}
    _label_axes(ax, "time_s", "accuracy", backends.pop() if len(backends) == 1 else "sim")
    for run in runs:
        ev = run.evaluations
        if ev.empty:
            continue
        ax.plot(ev["time_s"], ev["accuracy"] * scale("accuracy"), marker="o", markersize=2,
                label=f"{run.name} ({policy_label(run.policy)})")
    ax.set_title(title)
    if len(runs) <= 12:
        ax.legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def staleness(run: Run):
    """Histogram of the staleness of applied updates (ASP)."""
    fig, ax = plt.subplots(figsize=(6, 3.8))
    _label_axes(ax, "staleness", "updates", run.backend)
    s = pd.to_numeric(run.iterations.get("staleness", pd.Series(dtype=float)), errors="coerce").dropna()
    if s.empty:
        ax.set_title(_run_title(run, "Staleness of the applied updates"), fontsize="medium")
        return _empty(ax, "no staleness recorded (BSP run)")
    ax.hist(s, bins=range(int(s.max()) + 2), align="left")
    ax.set_title(_run_title(run, f"Staleness of the applied updates: mean {s.mean():.2f}, max {int(s.max())}"),
                 fontsize="medium")
    fig.tight_layout()
    return fig


def _pct(value) -> str:
    """+0.2%, −48.8% (a true minus sign), 0.0%, "" for a missing value."""
    if value is None or pd.isna(value):
        return ""
    if round(value, 1) == 0:
        return "0.0%"
    return f"{value:+.1f}%".replace("-", "\u2212")


def _lower_first(words: str) -> str:
    return words[:1].lower() + words[1:] if words[1:2].islower() else words


def sweep_comparison(comparison: pd.DataFrame, metric: str, group_cols: list[str], backend: str = "sim"):
    """The sweep's policies side by side. Top: grouped bars of `metric` per policy at each group of the other
    coordinates (the heterogeneity level, say), each bar labelled with its change against uniform there. Bottom
    (when the sweep ran the oracle): each other policy's gap to the oracle there, labelled likewise.
    `comparison` is tables.policy_comparison's table: its vs_uniform_pct and vs_oracle_pct are drawn as they are."""
    gaps_known = comparison[comparison["policy"] != "oracle"].get("vs_oracle_pct", pd.Series(dtype=float))
    has_oracle = bool(gaps_known.notna().any())
    rows = 2 if has_oracle else 1
    fig, axes = plt.subplots(rows, 1, figsize=(11, 7 if has_oracle else 4.5), sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2][:rows]})
    top = axes[0][0]
    words = axis_label(metric, backend)
    group_words = (" / ".join(coordinate_label(c, comparison[c].unique()) for c in group_cols)
                   if group_cols else "")
    axes[-1][0].set_xlabel(group_words)
    top.set_ylabel(words)
    names = [_lower_first(coordinate_label(c, comparison[c].unique())) for c in group_cols]
    per = (" and " + names[0] if len(names) == 1 else
           ", " + ", ".join(names[:-1]) + " and " + names[-1] if names else "")
    same = (f"at the same {_lower_first(group_words)}" if len(group_cols) == 1 else
            "with the same other coordinates" if group_cols else "")
    metric_words = COLUMNS[metric].words.replace("{clock}", "Wall-clock" if backend == "emulate" else "Simulated")
    if comparison.empty:
        top.set_title(f"{metric_words} per policy{per}")
        return _empty(top, f"no successful points with {metric}")
    df = comparison.copy()
    df["group"] = (df[group_cols].apply(lambda r: " / ".join(coordinate_value(v) for v in r), axis=1)
                   if group_cols else "all points")
    groups = list(dict.fromkeys(df["group"]))
    policies = sorted(df["policy"].unique(), key=policy_sort_key)
    width = 0.8 / len(policies)
    xs = np.arange(len(groups))
    crowded = len(groups) * len(policies) > 24
    label_kw = dict(fontsize=6.5 if crowded else 7, rotation=90 if crowded else 0, padding=2)

    def column(policy: str, name: str) -> np.ndarray:
        values = df[df["policy"] == policy].set_index("group")[name]
        return np.array([values.get(g, np.nan) for g in groups], dtype="float64")

    colors = {p: f"C{i}" for i, p in enumerate(policies)}
    for i, policy in enumerate(policies):
        offset = (i - (len(policies) - 1) / 2) * width
        bars = top.bar(xs + offset, column(policy, metric) * scale(metric), width, color=colors[policy],
                       label=policy_label(policy))
        if policy != "uniform" and "vs_uniform_pct" in df:
            top.bar_label(bars, labels=[_pct(v) for v in column(policy, "vs_uniform_pct")], **label_kw)
    heights = df[metric].to_numpy(dtype="float64") * scale(metric)
    if np.isfinite(heights).any():
        top.set_ylim(0, np.nanmax(heights) * 1.3)
    note = f"above each bar: its change against uniform {same}".rstrip()
    top.set_title(f"{metric_words} per policy{per}\n({note})", fontsize="medium")
    top.legend(title="Policy", fontsize="small", ncol=min(3, len(policies)), loc="best")
    top.grid(axis="y", alpha=0.3)
    if has_oracle:
        bottom = axes[1][0]
        others = [p for p in policies if p != "oracle"]
        gaps = np.array([column(p, "vs_oracle_pct") for p in others])
        for i, policy in enumerate(others):
            offset = (policies.index(policy) - (len(policies) - 1) / 2) * width
            bars = bottom.bar(xs + offset, gaps[i], width, color=colors[policy])
            bottom.bar_label(bars, labels=[_pct(v) for v in gaps[i]], **label_kw)
        bottom.axhline(0, color="black", linewidth=0.6)
        bottom.set_ylim(min(0.0, np.nanmin(gaps) * 1.3), max(1.0, np.nanmax(gaps) * 1.35))  # has_oracle: a gap
        bottom.set_ylabel(axis_label("vs_oracle_pct"))
        bottom.set_title("How much slower than the oracle (the best batch split), same colours", fontsize="medium")
        bottom.grid(axis="y", alpha=0.3)
    axes[-1][0].set_xticks(xs, groups)
    fig.tight_layout()
    return fig


def trace_availability(trace: pd.DataFrame, title: str = "", bins: int = 600):
    """Availability per worker over time: step lines for up to 8 workers with up to 200 changes each, else a heat
    map (worker x time, dark = down) so that many workers and dense traces stay readable. Time in seconds, hours
    (past 3 hours) or days (past 3 days)."""
    span = float(trace["time_s"].max()) if len(trace) else 0.0
    unit = "trace_time_d" if span > 3 * 86400 else "trace_time_h" if span > 3 * 3600 else "trace_time_s"
    trace = trace.assign(time_s=trace["time_s"] * scale(unit))
    workers = list(dict.fromkeys(trace["worker"]))
    if len(workers) <= 8 and len(trace) <= 200 * len(workers):
        fig, ax = plt.subplots(figsize=(9, 4))
        for w in workers:
            df = trace[trace["worker"] == w].sort_values("time_s")
            ax.step(df["time_s"], df["fraction"] * scale("fraction"), where="post", linewidth=0.8,
                    label=f"worker {w}")
        ax.set_ylim(-5, 105)
        ax.set_ylabel(axis_label("fraction"))
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
        shown = ax.imshow(image * scale("fraction"), aspect="auto", interpolation="nearest", cmap="viridis", vmin=0,
                          vmax=scale("fraction"), extent=(0.0, end, len(workers) - 0.5, -0.5))
        fig.colorbar(shown, ax=ax, label=axis_label("fraction"))
        ax.set_ylabel(axis_label("worker"))
        if len(workers) <= 16:
            ax.set_yticks(range(len(workers)), [str(w) for w in workers], fontsize="small")
    ax.set_xlabel(axis_label(unit))
    ax.set_title(f"Availability of each worker over time{': ' + title if title else ''}")
    fig.tight_layout()
    return fig
