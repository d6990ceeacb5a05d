"""Energy figures (docs/energy.md): a run's joules per worker split by phase (energy.csv), or the reason it has
none; a sweep's energy against time per policy, and its split per policy."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from .labels import policy_label

PHASES = ("compute_j", "comm_j", "wait_j", "idle_j")
CPU_TIME_PARTS = ("busy_j", "idle_j")  # a testbed run modelled from CPU time (source modelled-cputime)
COLOURS = {"compute_j": "#4c72b0", "comm_j": "#dd8452", "wait_j": "#c44e52", "idle_j": "#8c8c8c", "busy_j": "#4c72b0"}


def run_energy(path: str | Path) -> tuple[pd.DataFrame | None, str | None]:
    """energy.csv of a run folder and None, or None and the reason summary.json gives (None, None: no block)."""
    import json
    p = Path(path)
    summary = json.loads((p / "summary.json").read_text())
    block = summary.get("energy")
    if block is None:
        return None, None
    if "reason" in block:
        return None, str(block["reason"])
    if not (p / "energy.csv").exists():  # a testbed run measured by the host's counters: no per-worker rows
        return None, None
    return pd.read_csv(p / "energy.csv"), None


def energy_source(path: str | Path) -> str | None:
    """A testbed run's energy in words (its joules, source and note), or None (a simulator run, or no energy)."""
    import json
    block = json.loads((Path(path) / "summary.json").read_text()).get("energy") or {}
    if "source" not in block or "joules" not in block:
        return None
    return f"{block['joules']:.1f} J, {block['source']}: {block.get('note', '')}"


def worker_bars(energy: pd.DataFrame, title: str = "Energy per worker"):
    """A stacked bar per worker: joules computing, communicating, waiting and idle (a testbed run modelled from CPU
    time: busy and idle)."""
    fig, ax = plt.subplots(figsize=(6, 3.5))
    bottom = pd.Series(0.0, index=energy.index)
    for phase in PHASES if "compute_j" in energy.columns else CPU_TIME_PARTS:
        ax.bar(energy["worker"].astype(str), energy[phase], bottom=bottom, color=COLOURS[phase],
               label=phase[:-2])
        bottom = bottom + energy[phase]
    ax.set_xlabel("Worker")
    ax.set_ylabel("Energy (J)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def sweep_energy(table: pd.DataFrame) -> pd.DataFrame:
    """The sweep table's points with energy: policy, total time, joules and the split, one row per point."""
    if "energy_joules" not in table.columns:
        return pd.DataFrame()
    rows = table[pd.to_numeric(table["energy_joules"], errors="coerce").notna()].copy()
    for c in ["total_time_s", "energy_joules", *(f"energy_{p}" for p in PHASES)]:
        rows[c] = pd.to_numeric(rows[c], errors="coerce")
    return rows


def energy_vs_time(rows: pd.DataFrame):
    """Each point's energy against its total time, one marker per policy."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for policy, group in rows.groupby("policy", sort=True):
        ax.scatter(group["total_time_s"], group["energy_joules"], label=policy_label(str(policy)))
    ax.set_xlabel("Total time (s)")
    ax.set_ylabel("Energy (J)")
    ax.set_title("Energy against time per policy")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def split_per_policy(rows: pd.DataFrame):
    """The mean energy split of each policy's points, stacked."""
    means = rows.groupby("policy", sort=True)[[f"energy_{p}" for p in PHASES]].mean()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    bottom = pd.Series(0.0, index=means.index)
    for phase in PHASES:
        ax.bar([policy_label(str(p)) for p in means.index], means[f"energy_{phase}"], bottom=bottom,
               color=COLOURS[phase], label=phase[:-2])
        bottom = bottom + means[f"energy_{phase}"]
    ax.set_ylabel("Energy (J, mean over points)")
    ax.set_title("Energy split per policy")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
