"""The asynchronous rules compared with tuned rates (docs/results-asp.md, "(b) with tuned rates"): a learning-rate
grid per variant on tuning seeds, the best rate per variant, then fresh seeds at that rate.

Time to a target accuracy is read on one evaluation grid in seconds for every variant: the accuracy at grid time g
is the last evaluation at or before g (a step function; 0 before the first; the final evaluation, taken at the first
update past the budget, counts at the budget), and a run's time to the target is the first grid time at which it is
at or above the target. A run that never gets there within the budget is censored at
the budget; over the seeds the time is summarised by the restricted mean (the area under the Kaplan-Meier curve up to
the budget: with every censoring at the budget, the mean of min(T, budget), the runs that never reached the target
counting the budget) and the Kaplan-Meier median (NaN when fewer than half reached it).

Input: sweep folders (``sweep.csv`` with ``variant`` and ``seed`` axes, each point's ``evaluations.csv`` and
``summary.json``). A variant is ``<name>`` or ``<name>-lr<rate>`` (``asgd-lr0.02``, ``ringmaster-R16-lr0.01``,
``bsp-fast4-lr0.1``); its rate is read from the name, else from the point's manifest."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .asp_study import mean_ci

TARGETS = (0.80, 0.85)
VARIANT = re.compile(r"(?P<name>.+?)(?:-lr(?P<lr>[0-9.]+(?:e-?\d+)?))?$")
DROP_KEYS = ("dropped_push_fraction", "dropped_compute_fraction", "dropped_energy_fraction", "dropped_compute_s",
             "dropped_energy_j")


def grid_accuracy(evaluations: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    """The accuracy at each grid time: the last evaluation at or before it (0 before the first)."""
    if evaluations.empty:
        return np.zeros(len(grid))
    t = evaluations["time_s"].to_numpy(dtype=float)
    a = evaluations["accuracy"].to_numpy(dtype=float)
    order = np.argsort(t, kind="stable")
    t, a = t[order], a[order]
    at = np.searchsorted(t, grid, side="right") - 1
    return np.where(at >= 0, a[np.clip(at, 0, None)], 0.0)


def time_to_target(evaluations: pd.DataFrame, target: float, budget_s: float, step_s: float = 1.0
                   ) -> tuple[float, bool]:
    """(time, reached): the first time on the grid 0, step_s, ..., budget_s at which the run's accuracy is at or
    above `target`, or (budget_s, False) when it never is (censored at the budget)."""
    grid = np.arange(0.0, budget_s + step_s / 2, step_s)
    hit = np.nonzero(grid_accuracy(evaluations, grid) >= target)[0]
    return (float(grid[hit[0]]), True) if len(hit) else (float(budget_s), False)


def kaplan_meier(times, reached) -> pd.DataFrame:
    """The Kaplan-Meier estimate of P(T > t): one row per distinct time with an event (time, at_risk, events,
    survival), starting from (0, n, 0, 1). `reached` False marks a censored time."""
    t = np.asarray(times, dtype=float)
    e = np.asarray(reached, dtype=bool)
    rows = [(0.0, len(t), 0, 1.0)]
    s = 1.0
    for u in np.unique(t[e]):
        at_risk = int((t >= u).sum())
        events = int(((t == u) & e).sum())
        s *= 1.0 - events / at_risk
        rows.append((float(u), at_risk, events, s))
    return pd.DataFrame(rows, columns=["time_s", "at_risk", "events", "survival"])


def km_median(times, reached) -> float:
    """The first time at which the Kaplan-Meier survival is at or below 0.5 (NaN when it never is)."""
    km = kaplan_meier(times, reached)
    below = km[km["survival"] <= 0.5]
    return float(below["time_s"].iloc[0]) if not below.empty else math.nan


def restricted_mean(times, reached, budget_s: float) -> float:
    """The restricted mean time to the target: the area under the Kaplan-Meier curve from 0 to `budget_s`."""
    km = kaplan_meier(np.minimum(np.asarray(times, dtype=float), budget_s), reached)
    edges = np.append(km["time_s"].to_numpy(), budget_s)
    return float(np.sum(np.diff(edges) * km["survival"].to_numpy()))


def _split_variant(variant: str) -> tuple[str, float]:
    m = VARIANT.fullmatch(variant)
    return m.group("name"), (float(m.group("lr")) if m.group("lr") else math.nan)


def _manifest_rate(point: Path) -> float:
    manifest = point / "manifest.json"
    if not manifest.exists():
        return math.nan
    text = manifest.read_text()
    m = re.search(r'"learning_rate"\s*:\s*([0-9.eE+-]+)', text)
    return float(m.group(1)) if m else math.nan


def load(sweep: str | Path, stage: str, budget_s: float = 60.0, targets=TARGETS, step_s: float = 1.0,
         curves: dict | None = None) -> pd.DataFrame:
    """One row per finished point of a sweep folder: stage, variant, learning rate, seed, final accuracy, updates,
    staleness, each target's time on the grid and whether it was reached, the accuracy at 10, 20, ..., budget_s on
    the grid, and a rule's dropped pushes (summary.json's dropped_* keys, NaN where absent). `curves` (a dict), when
    given, gets each point's accuracy on the 1 s grid, keyed by (stage, variant, seed)."""
    sweep = Path(sweep)
    csv = sweep / "sweep.csv"
    if not csv.exists():
        raise ValueError(f"{csv}: no such file (expected a sweep folder)")
    table = pd.read_csv(csv, dtype={"variant": str})
    missing = [c for c in ("variant", "seed", "status", "point") if c not in table.columns]
    if missing:
        raise ValueError(f"{csv}: missing column(s) {', '.join(missing)} (expected the variant and seed axes of "
                         f"scenarios/testbed/sweep-asp-tuned*.yaml)")
    grid = np.arange(0.0, budget_s + step_s / 2, step_s)
    rows = []
    for _, r in table[table["status"] == "ok"].iterrows():
        point = sweep / r["point"]
        name, lr = _split_variant(r["variant"])
        if math.isnan(lr):
            lr = _manifest_rate(point)
        ev_path = point / "evaluations.csv"
        ev = pd.read_csv(ev_path) if ev_path.exists() else pd.DataFrame({"time_s": [], "accuracy": []})
        # A run stops at the first update past the budget (60.06 s, say): its final evaluation counts at the budget.
        ev["time_s"] = ev["time_s"].clip(upper=budget_s)
        summary = json.loads((point / "summary.json").read_text())
        extra = summary.get("extra", {})
        row = {"stage": stage, "variant": name, "learning_rate": lr, "seed": int(r["seed"]),
               "final_accuracy": summary.get("final_accuracy", math.nan), "updates": summary.get("iterations"),
               "mean_staleness": summary.get("mean_staleness", math.nan), "point": str(point)}
        for target in targets:
            t, hit = time_to_target(ev, target, budget_s, step_s)
            pct = round(target * 100)
            row[f"time_to_{pct}_s"], row[f"reached_{pct}"] = t, hit
        acc = grid_accuracy(ev, grid)
        for s in range(10, int(budget_s) + 1, 10):
            row[f"acc_{s}s"] = float(acc[int(round(s / step_s))])
        for key in DROP_KEYS:
            row[key] = extra.get(key, math.nan)
        energy = summary.get("energy") or {}
        row["energy_j"] = energy.get("joules", math.nan) if isinstance(energy, dict) else math.nan
        rows.append(row)
        if curves is not None:
            curves[(stage, name, int(r["seed"]))] = acc
    return pd.DataFrame(rows)


def tuned_rates(grid_runs: pd.DataFrame) -> pd.DataFrame:
    """Per variant and rate: the mean final accuracy over the tuning seeds, and `chosen` for the best rate per
    variant (the highest mean; a tie goes to the lower rate)."""
    g = (grid_runs.groupby(["variant", "learning_rate"], sort=False)
         .agg(seeds=("seed", "size"), accuracy_mean_pct=("final_accuracy", lambda a: 100.0 * a.mean()))
         .reset_index())
    g["chosen"] = False
    for _, rows in g.groupby("variant", sort=False):
        best = rows.sort_values(["accuracy_mean_pct", "learning_rate"], ascending=[False, True]).index[0]
        g.loc[best, "chosen"] = True
    return g


def summarize(runs: pd.DataFrame, budget_s: float = 60.0, targets=TARGETS) -> pd.DataFrame:
    """Per variant of the evaluation stage: seeds, rate, final accuracy [95% CI], per target the runs that reached
    it, the restricted mean time [95% CI of the mean of min(T, budget)] and the Kaplan-Meier median, updates, and
    the dropped pushes' means."""
    rows = []
    for variant, g in runs.groupby("variant", sort=False):
        acc = mean_ci(g["final_accuracy"] * 100.0)
        row = {"variant": variant, "learning_rate": g["learning_rate"].iloc[0], "seeds": len(g),
               "accuracy_mean_pct": acc[0], "accuracy_ci_low": acc[1], "accuracy_ci_high": acc[2]}
        for target in targets:
            pct = round(target * 100)
            t, hit = g[f"time_to_{pct}_s"].to_numpy(), g[f"reached_{pct}"].to_numpy(dtype=bool)
            ci = mean_ci(pd.Series(np.minimum(t, budget_s)))
            row.update({f"reached_{pct}": int(hit.sum()), f"rmst_{pct}_s": restricted_mean(t, hit, budget_s),
                        f"rmst_{pct}_ci_low": ci[1], f"rmst_{pct}_ci_high": ci[2],
                        f"km_median_{pct}_s": km_median(t, hit)})
        row["updates_mean"] = float(g["updates"].mean())
        for key in ("dropped_push_fraction", "dropped_compute_fraction", "dropped_energy_fraction"):
            row[key] = float(g[key].mean())
        row["energy_j_mean"] = float(g["energy_j"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def paired(runs: pd.DataFrame, a: str, b: str, budget_s: float = 60.0, targets=TARGETS) -> dict:
    """Variant `a` minus variant `b`, paired by seed: final accuracy (points) and each target's time censored at the
    budget, min(T, budget) (seconds), each a mean with its Student-t 95% interval, and the pairs."""
    x = runs[runs["variant"] == a].set_index("seed")
    y = runs[runs["variant"] == b].set_index("seed")
    seeds = x.index.intersection(y.index)
    if seeds.empty:
        raise ValueError(f"no seed has both {a} and {b}")
    d = mean_ci((x.loc[seeds, "final_accuracy"] - y.loc[seeds, "final_accuracy"]) * 100.0)
    out = {"a": a, "b": b, "pairs": len(seeds), "accuracy_diff_pts": d[0], "accuracy_ci_low": d[1],
           "accuracy_ci_high": d[2]}
    for target in targets:
        pct = round(target * 100)
        col = f"time_to_{pct}_s"
        t = mean_ci(np.minimum(x.loc[seeds, col], budget_s) - np.minimum(y.loc[seeds, col], budget_s))
        out.update({f"time_{pct}_diff_s": t[0], f"time_{pct}_ci_low": t[1], f"time_{pct}_ci_high": t[2]})
    return out


__all__ = ["grid_accuracy", "time_to_target", "kaplan_meier", "km_median", "restricted_mean", "load",
           "tuned_rates", "summarize", "paired"]
