"""Energy as a target traded against time (docs/energy.md): over a sweep's points, the Pareto set of time against
energy, the shortest-time point whose energy is within X% of the minimum energy, and the least-energy point whose time
is within Y% of the shortest time. Points are compared only within a group (by default the same base scenario and the
same `energy.wait` charging: those are the hardware, not a choice); the other axes are the configurations chosen
between. Time and energy are to the target accuracy when every point of the group reached it, else of the whole run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .runs import RunFormatError, axis_columns  # noqa: E402

DEFAULT_GROUPS = ("base", "energy.wait")


@dataclass(frozen=True)
class Rule:
    """within_energy_pct: X of "shortest time within X% of the minimum energy"; within_time_pct: Y of "least
    energy within Y% of the shortest time" (None: not asked)."""
    within_energy_pct: float
    within_time_pct: float | None = None


def _metric(group: pd.DataFrame) -> tuple[str, str, bool]:
    """(time column, energy column, to_target) for a group: to the target only when every point has both."""
    to_target = {"time_to_target_s", "energy_energy_to_target_j"} <= set(group.columns) and \
        pd.to_numeric(group["time_to_target_s"], errors="coerce").notna().all() and \
        pd.to_numeric(group["energy_energy_to_target_j"], errors="coerce").notna().all()
    if to_target:
        return "time_to_target_s", "energy_energy_to_target_j", True
    return "total_time_s", "energy_joules", False


def pareto_mask(time: pd.Series, energy: pd.Series) -> pd.Series:
    """True for each point that no other point dominates (no more time and no more energy, less of one); of points
    equal in both, every one is kept."""
    t = time.to_numpy()
    e = energy.to_numpy()
    keep = []
    for i in range(len(t)):
        dominated = any(t[j] <= t[i] and e[j] <= e[i] and (t[j] < t[i] or e[j] < e[i]) for j in range(len(t)))
        keep.append(not dominated)
    return pd.Series(keep, index=time.index)


def _configuration(row: pd.Series, axes: list[str]) -> str:
    """The point's values of the chosen axes: a word as itself, anything else as `key=value` (slow_with_slack=True)."""
    words = []
    for axis in axes:
        value = row[axis]
        words.append(value if isinstance(value, str) else f"{axis.rsplit('.', 1)[-1]}={value}")
    return " ".join(words)


def _pick(rows: pd.DataFrame, first: str, second: str) -> int:
    """The index of the row smallest in `first`, ties broken by `second`, then by sweep order."""
    return rows.sort_values([first, second], kind="stable").index[0]


def frontier(table: pd.DataFrame, rule: Rule, groups: list[str] | None = None) -> pd.DataFrame:
    """One row per point that ran (status ok) with power figures: its group and configuration, `time_s`, `energy_j`,
    `to_target`, `pareto` (on the group's frontier), `energy_vs_min_pct`, `time_vs_min_pct`, `within_energy` (the
    pick of "shortest time within X% of the minimum energy") and `within_time` (of "least energy within Y% of the
    shortest time"; all False when Y is None). Raises ValueError when no point has energy, or a group column is not a
    sweep axis."""
    if "energy_joules" not in table.columns:
        raise ValueError("the sweep's runs report no energy (give their scenario an `energy:` section)")
    axes = axis_columns(table)
    if groups is None:
        groups = [g for g in DEFAULT_GROUPS if g in axes]
    for g in groups:
        if g not in axes:
            raise ValueError(f"--by {g}: not an axis of the sweep (axes: {', '.join(axes)})")
    ok = table[(table["status"] == "ok") & pd.to_numeric(table["energy_joules"], errors="coerce").notna()].copy()
    if ok.empty:
        raise ValueError("no point of the sweep ran with power figures")
    configuration = [a for a in axes if a not in groups]
    ok["group"] = ok[groups].astype(str).agg(" ".join, axis=1) if groups else ""
    ok["configuration"] = ok.apply(lambda r: _configuration(r, configuration), axis=1) if configuration \
        else ok["point"]
    parts = []
    for _, g in ok.groupby("group", sort=False):
        time_col, energy_col, to_target = _metric(g)
        g = g.assign(time_s=pd.to_numeric(g[time_col]), energy_j=pd.to_numeric(g[energy_col]), to_target=to_target)
        t_min, e_min = g["time_s"].min(), g["energy_j"].min()
        g["pareto"] = pareto_mask(g["time_s"], g["energy_j"])
        g["energy_vs_min_pct"] = 100.0 * (g["energy_j"] / e_min - 1.0)
        g["time_vs_min_pct"] = 100.0 * (g["time_s"] / t_min - 1.0)
        g["within_energy"] = False
        g.loc[_pick(g[g["energy_j"] <= e_min * (1.0 + rule.within_energy_pct / 100.0)], "time_s", "energy_j"),
              "within_energy"] = True
        g["within_time"] = False
        if rule.within_time_pct is not None:
            g.loc[_pick(g[g["time_s"] <= t_min * (1.0 + rule.within_time_pct / 100.0)], "energy_j", "time_s"),
                  "within_time"] = True
        parts.append(g)
    columns = ["point", "group", "configuration", "time_s", "energy_j", "to_target", "pareto", "energy_vs_min_pct",
               "time_vs_min_pct", "within_energy", "within_time"]
    return pd.concat(parts)[columns].reset_index(drop=True)


def format_frontier(result: pd.DataFrame, rule: Rule) -> str:
    """Per group: its Pareto set by time, each pick marked, and the picks in words."""
    lines = []
    for group, g in result.groupby("group", sort=False):
        what = "to the target" if g["to_target"].iloc[0] else "whole run"
        lines.append(f"{group or 'all points'} ({what}): Pareto set of time against energy")
        lines.append(f"  {'configuration':<34} {'time (s)':>10} {'energy (kJ)':>12} {'vs min time':>12} "
                     f"{'vs min energy':>14}  pick")
        for _, r in g[g["pareto"]].sort_values(["time_s", "energy_j"]).iterrows():
            marks = []
            if r["within_energy"]:
                marks.append(f"<= {rule.within_energy_pct:g}% energy")
            if r["within_time"]:
                marks.append(f"<= {rule.within_time_pct:g}% time")
            lines.append(f"  {r['configuration']:<34} {r['time_s']:>10.2f} {r['energy_j'] / 1e3:>12.2f} "
                         f"{r['time_vs_min_pct']:>+11.1f}% {r['energy_vs_min_pct']:>+13.1f}%  {', '.join(marks)}")
        pick = g[g["within_energy"]].iloc[0]
        lines.append(f"  shortest time within {rule.within_energy_pct:g}% of the minimum energy: "
                     f"{pick['configuration']} ({pick['time_s']:.2f} s, {pick['energy_j'] / 1e3:.2f} kJ)")
        if rule.within_time_pct is not None:
            pick = g[g["within_time"]].iloc[0]
            lines.append(f"  least energy within {rule.within_time_pct:g}% of the shortest time: "
                         f"{pick['configuration']} ({pick['time_s']:.2f} s, {pick['energy_j'] / 1e3:.2f} kJ)")
    return "\n".join(lines)


def draw_frontier(result: pd.DataFrame, rule: Rule):
    """One panel per group: every point, the Pareto set joined in time order, the picks circled."""
    groups = list(dict.fromkeys(result["group"]))
    columns = min(4, len(groups))
    rows = -(-len(groups) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.4 * columns + 1.5, 3.8 * rows), squeeze=False)
    for ax in axes.flat[len(groups):]:
        ax.set_visible(False)
    for ax, group in zip(axes.flat, groups):
        g = result[result["group"] == group]
        ax.scatter(g["time_s"], g["energy_j"] / 1e3, color="0.6", label="point")
        front = g[g["pareto"]].sort_values("time_s")
        ax.plot(front["time_s"], front["energy_j"] / 1e3, "o-", color="C0", label="Pareto set")
        circles = [("within_energy", "C3", f"shortest time, energy <= min + {rule.within_energy_pct:g}%")]
        if rule.within_time_pct is not None:
            circles.append(("within_time", "C2", f"least energy, time <= min + {rule.within_time_pct:g}%"))
        for column, colour, words in circles:
            pick = g[g[column]]
            if not pick.empty:
                ax.scatter(pick["time_s"], pick["energy_j"] / 1e3, s=160, facecolors="none", edgecolors=colour,
                           linewidths=2, label=words)
        for _, r in front.iterrows():
            ax.annotate(r["configuration"], (r["time_s"], r["energy_j"] / 1e3), fontsize="x-small",
                        xytext=(4, 4), textcoords="offset points")
        what = "to target" if g["to_target"].iloc[0] else "whole run"
        ax.set_title(group or "all points", fontsize="medium")
        ax.set_xlabel(f"time, {what} (s)")
        ax.set_ylabel(f"energy, {what} (kJ)")
    axes.flat[len(groups) - 1].legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def write_frontier(sweep: str | Path, rule: Rule, groups: list[str] | None, out: str | Path | None):
    """Reads SWEEP/sweep.csv, writes OUT/energy-frontier.csv and OUT/energy-frontier.png (OUT defaults to the sweep
    folder) and returns (printed text, [paths])."""
    sweep = Path(sweep)
    if not (sweep / "sweep.csv").exists():
        raise RunFormatError(f"{sweep}: no sweep.csv (not a sweep folder)")
    result = frontier(pd.read_csv(sweep / "sweep.csv"), rule, groups)
    folder = Path(out) if out else sweep
    folder.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = folder / "energy-frontier.csv", folder / "energy-frontier.png"
    result.to_csv(csv_path, index=False)
    fig = draw_frontier(result, rule)
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return format_frontier(result, rule), [csv_path, png_path]
