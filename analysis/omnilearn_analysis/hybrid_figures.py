"""Figures for hybrid run folders (hybrid_runs.py): the pipeline timeline per device, where each device's time went,
step time per policy with the plan changes, micro-batches and layers per stage, and the placement of the devices.
Each function draws on a new figure and returns it; the caller saves it. Axis labels come from labels.py."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.transforms import blended_transform_factory  # noqa: E402

from .hybrid_runs import HybridRun  # noqa: E402
from .labels import COLUMNS, axis_label, hybrid_policy_label  # noqa: E402

SPANS = {"F": ("forward", "#4c72b0"), "B": ("backward", "#dd8452"), "allreduce": ("all-reduce", "#c44e52"),
         "update": ("optimizer update", "#8172b3")}
DEVICE_PARTS = ("compute_s", "bubble_s", "comm_s", "wait_s")
LEVELS = {1: ("o", "level 1: micro-batches"), 2: ("^", "level 2: layers"), 3: ("s", "level 3: re-plan")}
MAX_ROWS = 64       # devices drawn in the timeline (beyond: TP rank 0 of each stage, then the first ones)
MAX_SPLITS = 24     # rows of layer splits drawn
MAX_STEPS = 2       # recorded steps drawn in the timeline


def _figure(run: HybridRun, what: str, height: float, width: float = 10):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_title(f"{what}\n{run.name}, policy {hybrid_policy_label(run.policy)}", fontsize="medium")
    return fig, ax


def _empty(ax, text: str):
    ax.text(0.5, 0.5, text, ha="center", transform=ax.transAxes)
    return ax.figure


def _kinds(run: HybridRun) -> dict[int, str]:
    return dict(zip(run.devices["device"].astype(int), run.devices["kind"].astype(str)))


def _stage_colours(stages: int):
    cmap = plt.get_cmap("viridis")
    return [cmap(0.9 * i / max(1, stages - 1)) for i in range(stages)]


def _mapping_at(run: HybridRun, step: int) -> pd.DataFrame:
    """The placement in force at `step`, indexed by device."""
    froms = run.placement["from_step"]
    at = froms[froms <= step].max() if (froms <= step).any() else froms.min()
    return run.placement[froms == at].set_index("device")


def pipeline_timeline(run: HybridRun):
    """The first recorded steps of timeline.json, one row per device (its kind and replica/stage/TP rank): forward
    and backward passes, all-reduces and updates as bars, as Perfetto shows them; dashed lines at step starts."""
    spans = run.timeline
    recorded = sorted(spans["step"].unique())[:MAX_STEPS]
    spans = spans[spans["step"].isin(recorded)]
    kinds = _kinds(run)
    devices = sorted(set(kinds) | set(spans["device"]))
    note = ""
    if len(devices) > MAX_ROWS:
        place = _mapping_at(run, int(recorded[0]) if recorded else 0)
        lead = place[place["tp_rank"] == 0].sort_values(["replica", "stage"])
        note = f"; TP rank 0 of each stage ({len(lead)} of {len(devices)} devices)"
        if len(lead) > MAX_ROWS:
            note = f"; TP rank 0 of {MAX_ROWS} of the {len(lead)} stages ({len(devices)} devices)"
        devices = sorted(lead.index[:MAX_ROWS])
    steps_text = ", ".join(str(s) for s in recorded)
    fig, ax = _figure(run, f"Pipeline timeline per device, step{'s' if len(recorded) > 1 else ''} {steps_text}{note}",
                      height=min(16.0, max(3.2, 1.6 + 0.2 * len(devices))))
    ax.set_xlabel(axis_label("start_s"))
    if spans.empty:
        return _empty(ax, "no spans recorded (timeline.json)")
    place = _mapping_at(run, int(recorded[0]))
    row = {d: i for i, d in enumerate(devices)}
    spans = spans[spans["device"].isin(row)]
    for (device, kind), df in spans.groupby(["device", "kind"]):
        colour = SPANS.get(kind, (kind, "grey"))[1]
        ax.broken_barh(list(zip(df["start_s"], df["end_s"] - df["start_s"])), (row[device] - 0.4, 0.8),
                       facecolors=colour, edgecolors="white", linewidth=0.2)
    labels = []
    for d in devices:
        where = (f"r{int(place.at[d, 'replica'])} s{int(place.at[d, 'stage'])} t{int(place.at[d, 'tp_rank'])}"
                 if d in place.index else "idle")
        labels.append(f"{d} {kinds.get(d, '?')} {where}")
    ax.set_yticks(range(len(devices)), labels, fontsize="x-small" if len(devices) > 24 else "small")
    ax.set_ylim(len(devices) - 0.5, -0.5)
    starts = run.steps[run.steps["step"].isin(recorded)]["start_s"]
    for t in starts:
        ax.axvline(t, color="black", linestyle="--", linewidth=0.7, alpha=0.6)
    ax.set_xlim(float(spans["start_s"].min()), float(spans["end_s"].max()))
    handles = [Patch(color=c, label=n) for k, (n, c) in SPANS.items() if (spans["kind"] == k).any()]
    handles.append(Line2D([], [], color="black", linestyle="--", linewidth=0.7, label="step start"))
    ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def device_time_split(run: HybridRun):
    """Each device's compute, bubble (idle inside its pipeline), communication and wait seconds over the run,
    stacked; devices grouped by kind, named above the bars."""
    df = run.devices.sort_values("device").reset_index(drop=True)
    fig, ax = _figure(run, "Where each device's time went", height=4.2)
    ax.set_xlabel(axis_label("device"))
    ax.set_ylabel(axis_label("device_time_s"))
    ax.set_title(ax.get_title(), fontsize="medium", pad=16)  # room for the kinds' names above the bars
    if df.empty:
        return _empty(ax, "no devices (devices.csv)")
    x = np.arange(len(df))
    bottom = np.zeros(len(df))
    for column in DEVICE_PARTS:
        ax.bar(x, df[column], bottom=bottom, width=0.85 if len(df) <= 64 else 1.0, label=COLUMNS[column].words)
        bottom += df[column].to_numpy()
    if len(df) <= 48:
        ax.set_xticks(x, df["device"].astype(int).astype(str), fontsize="x-small")
    top = blended_transform_factory(ax.transData, ax.transAxes)
    kind = df["kind"].astype(str)
    group_start = [i for i in range(len(df)) if i == 0 or kind[i] != kind[i - 1]] + [len(df)]
    for a, b in zip(group_start, group_start[1:]):
        if a > 0:
            ax.axvline(a - 0.5, color="black", linewidth=0.6)
        ax.text((a + b - 1) / 2, 1.01, kind[a], transform=top, ha="center", va="bottom", fontsize="small")
    ax.set_xlim(-0.5, len(df) - 0.5)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def step_times(runs: list[HybridRun], title: str = ""):
    """Each policy's step time (overheads of moves and restarts included) over simulated time, one line per
    policy, with its plan changes after the first plan marked by level. Steps far above the rest (a restart) are
    drawn at the top with their value written."""
    fig, ax = plt.subplots(figsize=(10, 4.2))
    ax.set_title("Step time over the run" + (f"\n{title}" if title else ""), fontsize="medium")
    ax.set_xlabel(axis_label("start_s"))
    ax.set_ylabel(axis_label("step_s"))
    runs = [r for r in runs if not r.steps.empty]
    if not runs:
        return _empty(ax, "no steps recorded (steps.csv)")
    ceiling = 2.5 * max(float(r.steps["step_s"].quantile(0.95)) for r in runs)
    clipped = max(float(r.steps["step_s"].max()) for r in runs) > ceiling
    handles, levels = [], set()
    for i, run in enumerate(runs):
        colour = f"C{i}"
        s = run.steps
        shown = s["step_s"].clip(upper=ceiling) if clipped else s["step_s"]
        ax.plot(s["start_s"], shown, color=colour, linewidth=0.9)
        handles.append(Line2D([], [], color=colour, label=hybrid_policy_label(run.policy)))
        by_step = s.set_index("step")
        changes = run.plans[(run.plans["step"] > 0) & run.plans["step"].isin(by_step.index)]
        for level, df in changes.groupby("level"):
            marker = LEVELS.get(int(level), ("x", ""))[0]
            ax.plot(by_step.loc[df["step"], "start_s"], by_step.loc[df["step"], "step_s"].clip(upper=ceiling),
                    linestyle="none", marker=marker, color=colour, markersize=6, markeredgecolor="black",
                    markeredgewidth=0.5)
            levels.add(int(level))
        if clipped:
            for _, r in s[s["step_s"] > ceiling].head(6).iterrows():
                ax.annotate(f"{r['step_s']:.1f} s", xy=(r["start_s"], ceiling), xytext=(3, -10),
                            textcoords="offset points", fontsize="x-small", color=colour)
    ax.set_ylim(0, ceiling * 1.05 if clipped else None)
    for level in sorted(levels):
        marker, words = LEVELS.get(level, ("x", f"level {level}"))
        handles.append(Line2D([], [], linestyle="none", marker=marker, color="grey", markeredgecolor="black",
                              markeredgewidth=0.5, label=words))
    ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def _ranges(ids: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> "0\u20132, 5, 7\u20138"."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}\u2013{r[-1]}" for r in runs)


def _splits(run: HybridRun) -> tuple[list[tuple[str, list[int]]], int]:
    """(label, layers per stage) per level-2/3 change and group of replicas with the same split, and the changes
    there were."""
    rows = []
    changes = run.plans[run.plans["level"] >= 2]
    for _, plan in changes.iterrows():
        groups: dict[tuple, list[int]] = {}
        for r, layers in enumerate(plan["layers_per_stage"]):
            groups.setdefault(tuple(layers), []).append(r)
        for layers, replicas in groups.items():
            who = ("replica " if len(replicas) == 1 else "replicas ") + _ranges(replicas)
            rows.append((f"step {int(plan['step'])} L{int(plan['level'])}, {who}", list(layers)))
    return rows, len(changes)


def micro_batches_and_layers(run: HybridRun):
    """Above: micro-batches per replica over the run (steps.csv), with level-2 and level-3 changes as lines.
    Below: layers per stage at each level-2/3 change (plans.csv), replicas with the same split on one bar."""
    rows, changes = _splits(run)
    shown = rows[:MAX_SPLITS]
    height_below = 1.0 + 0.3 * max(1, len(shown))
    fig, (top, below) = plt.subplots(2, 1, figsize=(10, 3.6 + height_below),
                                     gridspec_kw={"height_ratios": [3.2, height_below]})
    top.set_title(f"Micro-batches per replica and layers per stage\n{run.name}, policy "
                  f"{hybrid_policy_label(run.policy)}", fontsize="medium")
    top.set_xlabel(axis_label("start_s"))
    top.set_ylabel(axis_label("micro_batches"))
    counts = run.replica_micro_batches()
    replicas = [c for c in counts.columns if c != "start_s"]
    for i, r in enumerate(replicas):
        top.step(counts["start_s"], counts[r], where="post", linewidth=2.2 - 1.4 * i / max(1, len(replicas) - 1),
                 label=f"replica {r}")
    handles = top.get_legend_handles_labels()[0] if len(replicas) <= 16 else []
    for level, style in ((2, ":"), (3, "--")):
        steps = run.plans[(run.plans["level"] == level) & (run.plans["step"] > 0)]["step"]
        for t in run.steps[run.steps["step"].isin(steps)]["start_s"]:
            top.axvline(t, color="grey", linestyle=style, linewidth=0.9)
        if len(steps):
            handles.append(Line2D([], [], color="grey", linestyle=style, label=LEVELS[level][1]))
    top.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    top.set_ylim(0, None)
    stages = max((len(layers) for _, layers in shown), default=0)
    virtual = int(run.summary.get("chunks", 1) or 1) > 1
    below.set_xlabel(axis_label("layers") + (f" (first {len(shown)} of {len(rows)} rows)" if len(rows) > len(shown)
                                             else ""))
    if not shown:
        below.set_yticks([])
        return _empty(below, "no level-2 or level-3 changes (plans.csv)")
    colours = _stage_colours(stages)
    for y, (_, layers) in enumerate(shown):
        left = 0
        for s, n in enumerate(layers):
            below.barh(y, n, left=left, color=colours[s], edgecolor="white", linewidth=0.5)
            if n:
                below.text(left + n / 2, y, str(n), ha="center", va="center", fontsize="x-small",
                           color="white" if s < stages * 0.6 else "black")
            left += n
    below.set_yticks(range(len(shown)), [label for label, _ in shown], fontsize="x-small")
    below.set_ylim(len(shown) - 0.5, -0.5)
    word = "virtual stage" if virtual else "stage"
    if stages <= 16:
        below.legend(handles=[Patch(color=colours[s], label=f"{word} {s}") for s in range(stages)],
                     fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def placement_map(run: HybridRun):
    """Which device held which pipeline stage of which replica over the run (placement.csv): one row per device,
    coloured by stage, odd replicas lighter, each bar named r<replica> s<stage> where there is room; blank: idle."""
    intervals = run.placement_intervals()
    kinds = _kinds(run)
    devices = sorted(set(kinds) | set(intervals["device"].astype(int)))
    fig, ax = _figure(run, "Placement: which device holds which replica and stage",
                      height=min(14.0, max(3.2, 1.6 + 0.18 * len(devices))))
    ax.set_xlabel(axis_label("start_s"))
    ax.set_ylabel(axis_label("device"))
    if intervals.empty:
        return _empty(ax, "no placement recorded (placement.csv)")
    stages = int(intervals["stage"].max()) + 1
    colours = _stage_colours(stages)
    row = {d: i for i, d in enumerate(devices)}
    named = len(devices) <= MAX_ROWS
    span = max(run.end_s, float(intervals["to_s"].max()), 1e-9)
    for _, r in intervals.iterrows():
        stage, replica = int(r["stage"]), int(r["replica"])
        width = float(r["to_s"] - r["from_s"])
        ax.barh(row[int(r["device"])], width, left=r["from_s"], height=0.9 if named else 1.0,
                color=colours[stage], alpha=1.0 if replica % 2 == 0 else 0.55, linewidth=0)
        if named and width > 0.04 * span:
            ax.text(r["from_s"] + width / 2, row[int(r["device"])], f"r{replica} s{stage}", ha="center",
                    va="center", fontsize="xx-small", color="white" if stage < stages * 0.6 else "black")
    if named:
        ax.set_yticks(range(len(devices)), [f"{d} {kinds.get(d, '?')}" for d in devices],
                      fontsize="x-small" if len(devices) > 24 else "small")
    ax.set_ylim(len(devices) - 0.5, -0.5)
    ax.set_xlim(0, span)
    for t in sorted(intervals["from_s"].unique())[1:]:
        ax.axvline(t, color="black", linestyle="--", linewidth=0.8)
    if stages <= 16:
        ax.legend(handles=[Patch(color=colours[s], label=f"stage {s}") for s in range(stages)],
                  fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig
