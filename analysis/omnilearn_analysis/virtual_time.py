"""Virtual-time training (``omnilearn sim`` with ``workload.numerics: real``) against the testbed: per scenario,
policy and seed, the steps and time to the target accuracy (BSP), the final accuracy and the staleness (ASP), and
the largest gap between the two accuracy curves at the steps both evaluated."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd


def _summary(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text())


def _staleness(run: Path) -> tuple[float, float]:
    it = pd.read_csv(run / "iterations.csv")
    s = it["staleness"].dropna()
    if "loss" in it and it["loss"].notna().any():
        s = it.loc[it["loss"].notna(), "staleness"].dropna()  # pushes the server applied
    return (float(s.mean()), float(np.percentile(s, 95))) if len(s) else (float("nan"), float("nan"))


def _curve_gap(testbed: Path, sim: Path) -> float:
    """Largest |accuracy difference| (points) at the steps both runs evaluated."""
    a = pd.read_csv(testbed / "evaluations.csv")
    b = pd.read_csv(sim / "evaluations.csv")
    both = a.merge(b, on="step", suffixes=("_tb", "_sim"))
    if both.empty:
        return float("nan")
    return float((both["accuracy_tb"] - both["accuracy_sim"]).abs().max() * 100.0)


def _pct(sim: float | None, tb: float | None) -> float:
    if sim is None or tb is None or tb == 0:
        return float("nan")
    return 100.0 * (sim - tb) / tb


def compare(testbed: str | Path, sim: str | Path, seeds: list[int], levels: list[int]) -> pd.DataFrame:
    testbed, sim = Path(testbed), Path(sim)
    rows = []
    names = [(f"bsp-hl{lvl}", p) for lvl in levels for p in ("uniform", "omnilearn")]
    names += [("asp-hl8", p) for p in ("uniform", "omnilearn")]
    for scenario, policy in names:
        for seed in seeds:
            name = f"{scenario}-{policy}-s{seed}"
            tb_run, sim_run = testbed / name, sim / name
            if not (tb_run / "summary.json").exists() or not (sim_run / "summary.json").exists():
                continue
            t, s = _summary(tb_run), _summary(sim_run)
            row = {"run": name, "scenario": scenario, "policy": policy, "seed": seed,
                   "accuracy_curve_max_gap_pts": _curve_gap(tb_run, sim_run)}
            if scenario.startswith("bsp"):
                t_steps = t.get("extra", {}).get("steps_to_target")
                s_steps = s.get("extra", {}).get("steps_to_target")
                row.update({"testbed_steps": t_steps, "sim_steps": s_steps, "steps_error_pct": _pct(s_steps, t_steps),
                            "testbed_time_s": t.get("time_to_target_s"), "sim_time_s": s.get("time_to_target_s"),
                            "time_error_pct": _pct(s.get("time_to_target_s"), t.get("time_to_target_s"))})
            else:
                tm, tp = _staleness(tb_run)
                sm, sp = _staleness(sim_run)
                row.update({"testbed_final_accuracy": t.get("final_accuracy"),
                            "sim_final_accuracy": s.get("final_accuracy"),
                            "accuracy_gap_pts": 100.0 * (s.get("final_accuracy", np.nan) - t.get("final_accuracy", np.nan)),
                            "testbed_updates": t.get("iterations"), "sim_updates": s.get("iterations"),
                            "testbed_staleness_mean": tm, "sim_staleness_mean": sm,
                            "staleness_mean_error_pct": _pct(sm, tm),
                            "testbed_staleness_p95": tp, "sim_staleness_p95": sp,
                            "staleness_p95_error_pct": _pct(sp, tp)})
            rows.append(row)
    return pd.DataFrame(rows)


def format_table(table: pd.DataFrame) -> str:
    lines = []
    bsp = table[table["scenario"].str.startswith("bsp")] if not table.empty else table
    if not bsp.empty:
        lines.append("| run | steps to target: testbed / sim | time to target (s): testbed / sim (error) | "
                     "max accuracy gap (pts) |")
        lines.append("|---|---|---|---|")
        for _, r in bsp.iterrows():
            lines.append(f"| {r['run']} | {r['testbed_steps']:.0f} / {r['sim_steps']:.0f} | "
                         f"{r['testbed_time_s']:.1f} / {r['sim_time_s']:.1f} ({r['time_error_pct']:+.1f}%) | "
                         f"{r['accuracy_curve_max_gap_pts']:.2f} |")
    asp = table[table["scenario"].str.startswith("asp")] if not table.empty else table
    if not asp.empty:
        lines.append("")
        lines.append("| run | final accuracy: testbed / sim | updates: testbed / sim | staleness mean: testbed / sim "
                     "| staleness p95: testbed / sim |")
        lines.append("|---|---|---|---|---|")
        for _, r in asp.iterrows():
            lines.append(f"| {r['run']} | {100 * r['testbed_final_accuracy']:.2f}% / {100 * r['sim_final_accuracy']:.2f}% | "
                         f"{r['testbed_updates']:.0f} / {r['sim_updates']:.0f} | "
                         f"{r['testbed_staleness_mean']:.2f} / {r['sim_staleness_mean']:.2f} "
                         f"({r['staleness_mean_error_pct']:+.1f}%) | {r['testbed_staleness_p95']:.1f} / "
                         f"{r['sim_staleness_p95']:.1f} |")
    return "\n".join(lines)


def write_comparison(testbed: str | Path, sim: str | Path, seeds: list[int], levels: list[int],
                     out: str | Path) -> tuple[pd.DataFrame, Path]:
    table = compare(testbed, sim, seeds, levels)
    out = Path(out)
    table.to_csv(out, index=False)
    return table, out
